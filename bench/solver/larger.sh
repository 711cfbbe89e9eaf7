#!/usr/bin/env bash
# Larger instances of J30/J60's generator, and whether the scheduler keeps
# its quality per second on them (bench/RESULTS.md has the figures).
#   bench/solver/larger.sh            (about 7 minutes on 2 cores; 25 with LARGER_LONG_LIMIT=30)
#
# 1. Is bench/solver/progen.py's generator the one that made J30/J60? It makes 480
#    J30-like and 480 J60-like instances (10 per parameter set, as the real
#    sets) and prints the same summary statistics for them and the real
#    sets: arcs per node, resource factor, non-zero demand, capacity,
#    critical path, and the mean deviation of one serial LFT pass
#    (build/psplib --method list --rule lft --sgs serial --improve 0) from
#    the critical-path bound, for the whole set and per resource strength;
#    then progen.py check on the real and the generated files (every
#    definition of the generator recomputed from the file), and whether a
#    second run of the generator writes the same bytes.
# 2. For n = 30, 60, 90, 120 jobs: 24 of the 48 parameter sets, the same
#    for every size (for each of the 12 NC x RF pairs q = 0..11, RS number
#    q mod 4 and (q + 2) mod 4, so every NC, RF and RS value is there as
#    often as the others), instance 1 of each made by progen.py; and the
#    same 24 sets of the real J30 and J60 (instance 1). Each instance is
#    solved by build/psplib with its default settings and by CP-SAT
#    (bench/solver/cpsat_ref.py --method whole --time-limit T, 2 workers). One
#    table row per group and one for its open instances (closed by neither):
#    ours against CP-SAT's makespan, both against the best lower bound known
#    (the larger of the two lower bounds; for the real sets also PSPLIB's
#    best-known makespans), ours' time, CP-SAT's (bench/solver/larger_table.py).
#    With LARGER_LONG_LIMIT=S the open instances are solved by CP-SAT again
#    for S seconds, and "best found" counts that makespan too.
#
# Environment: LARGER_TIME_LIMIT (T, default 10 s), LARGER_SIZES (default
# "30 60 90 120"), LARGER_INSTANCES (instances per chosen set, default 2),
# LARGER_LONG_LIMIT (default 0: none),
# LARGER_SEED (progen.py --seed, default 1), CPSAT_PYTHON (default
# build/venv/bin/python; where it has no OR-tools the CP-SAT columns are
# left empty and the commands that install it are printed).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data/psplib}
[ -d "$DATA" ] || DATA=/work/shared/data/psplib
T=${LARGER_TIME_LIMIT:-10}
SIZES=${LARGER_SIZES:-30 60 90 120}
INST=${LARGER_INSTANCES:-2}
LONG=${LARGER_LONG_LIMIT:-0}
SEED=${LARGER_SEED:-1}
py=${CPSAT_PYTHON:-$BUILD/venv/bin/python}
make -s "$BUILD/psplib"
out="$BUILD/larger"
rm -rf "$out"
mkdir -p "$out" "$BUILD/psplib-data"
[ -d "$BUILD/psplib-data/j30" ] || tar xzf "$DATA/j30.tar.gz" -C "$BUILD/psplib-data"
[ -d "$BUILD/psplib-data/j60" ] || tar xzf "$DATA/j60.tar.gz" -C "$BUILD/psplib-data"
lft=(--method list --rule lft --sgs serial --improve 0)

echo "1. the generator against the real sets (10 instances per parameter set, progen.py --seed $SEED):"
echo "| set | instances | nodes | arcs per node (NC) | resource factor | mean non-zero demand | mean capacity | mean critical path | serial LFT pass: mean dev. from CPM bound |"
echo "|---|---|---|---|---|---|---|---|---|"
for n in 30 60; do
  python3 bench/solver/progen.py gen --jobs "$n" --seed "$SEED" --out "$out/valid/g$n" > /dev/null
  "$BUILD/psplib" "${lft[@]}" "$BUILD/psplib-data/j$n"/*.sm > "$out/valid/lft-j$n.txt"
  "$BUILD/psplib" "${lft[@]}" "$out/valid/g$n"/*.sm > "$out/valid/lft-g$n.txt"
done
for by in "" rs; do
  for n in 30 60; do
    python3 bench/solver/progen.py stats ${by:+--by $by} --label "J$n (real)" --lft "$out/valid/lft-j$n.txt" "$BUILD/psplib-data/j$n"/*.sm
    python3 bench/solver/progen.py stats ${by:+--by $by} --label "J$n-like (progen.py)" --lft "$out/valid/lft-g$n.txt" "$out/valid/g$n"/*.sm
  done
done
echo
for n in 30 60; do
  python3 bench/solver/progen.py check --label "J$n (real)" "$BUILD/psplib-data/j$n"/*.sm || true
  python3 bench/solver/progen.py check --label "J$n-like (progen.py)" "$out/valid/g$n"/*.sm || true
done
python3 bench/solver/progen.py gen --jobs 60 --seed "$SEED" --out "$out/valid/again" > /dev/null
if diff -rq "$out/valid/g60" "$out/valid/again" > /dev/null; then
  echo "deterministic: a second run wrote the same 480 J60-like files"
else
  echo "NOT deterministic: a second run wrote other J60-like files"
fi

# the 24 parameter sets
sets=()
for nci in 0 1 2; do
  for rfi in 0 1 2 3; do
    q=$((4 * nci + rfi))
    for rsi in $((q % 4)) $(((q + 2) % 4)); do sets+=($((16 * nci + 4 * rfi + rsi + 1))); done
  done
done
sets_csv=$(IFS=,; echo "${sets[*]}")

# shellcheck source=cpsat_probe.sh
. "$(dirname "$0")/cpsat_probe.sh"
cpsat_probe "$py"
echo
echo "2. build/psplib (default settings) and CP-SAT (whole model, ${T} s, 2 workers) on parameter sets ${sets_csv},"
echo "   instance 1..$INST of each:"
if [ $have_cpsat = 0 ]; then
  cpsat_skip_message "$py" "$BUILD"
else
  echo "   OR-tools $("$py" -c 'import ortools; print(ortools.__version__)')"
fi
groups=()
for n in $SIZES; do
  python3 bench/solver/progen.py gen --jobs "$n" --seed "$SEED" --per-set "$INST" --sets "$sets_csv" --out "$out/g$n" > /dev/null
  groups+=("g$n|$n jobs, progen.py|$out/g$n|-")
  python3 bench/solver/progen.py check --label "   $n jobs" "$out/g$n"/*.sm | sed 's/; resource pairs.*//' || true
  if [ "$n" = 30 ] || [ "$n" = 60 ]; then
    mkdir -p "$out/j$n"
    for p in "${sets[@]}"; do
      for i in $(seq 1 "$INST"); do cp "$BUILD/psplib-data/j$n/j$n${p}_$i.sm" "$out/j$n/"; done
    done
    groups+=("j$n|J$n (real)|$out/j$n|$DATA/solutions/j${n}_bounds.csv")
  fi
done
python3 bench/solver/larger_table.py --header
for g in "${groups[@]}"; do
  IFS='|' read -r tag label dir bounds <<< "$g"
  "$BUILD/psplib" "$dir"/*.sm > "$out/ours-$tag.txt" || true
  : > "$out/cpsat-$tag.txt"
  long=-
  if [ $have_cpsat = 1 ]; then
    "$py" bench/solver/cpsat_ref.py --method whole --time-limit "$T" --workers 2 "$dir"/*.sm > "$out/cpsat-$tag.txt" || true
    if [ "$LONG" != 0 ]; then
      # the instances neither closed: CP-SAT again, LONG seconds
      open=$(awk 'NR == FNR { if ($4 == "optimal=1") done[$1] = 1; next }
                  !($1 in done) && $5 != "status=OPTIMAL" { print $1 }' "$out/ours-$tag.txt" "$out/cpsat-$tag.txt")
      long="$out/cpsat-long-$tag.txt"
      : > "$long"
      if [ -n "$open" ]; then
        "$py" bench/solver/cpsat_ref.py --method whole --time-limit "$LONG" --workers 2 \
            $(for x in $open; do echo "$dir/$x.sm"; done) > "$long" || true
      fi
    fi
  fi
  python3 bench/solver/larger_table.py "$label" "$out/ours-$tag.txt" "$out/cpsat-$tag.txt" "$bounds" "$long" || true
done
