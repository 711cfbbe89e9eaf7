#!/usr/bin/env bash
# The lp_solve backend on one J30 instance of each of the 48 parameter sets
# (j30<set>_1.sm, set 1..48):
#     build/psplib --solver lp --time-limit 5 FILES
# then the per-instance lines, a table row (bench/solver/psplib_stats.py) and the
# counts: at the optimum (j30_bounds.csv, every J30 optimum is proven) and
# proven optimal by us.
#   bench/solver/lp48.sh [extra build/psplib options...]
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
DATA=${DATA:-../shared/data/psplib}
[ -d "$DATA" ] || DATA=/work/shared/data/psplib
make -s "$BUILD/psplib"
mkdir -p "$BUILD/psplib-data"
[ -d "$BUILD/psplib-data/j30" ] || tar xzf "$DATA/j30.tar.gz" -C "$BUILD/psplib-data"
files=()
for set in $(seq 1 48); do files+=("$BUILD/psplib-data/j30/j30${set}_1.sm"); done
out="$BUILD/bench-lp48.txt"
"$BUILD/psplib" --solver lp --time-limit 5 "$@" "${files[@]}" > "$out" 2> "$BUILD/bench-lp48.err" || true
cat "$out"
echo
echo "| set, solver | instances | at best known | below best known | proven optimal | mean dev. from best known | max dev. | mean dev. from CPM bound | median ms | max ms | invalid |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
python3 bench/solver/psplib_stats.py "$DATA/solutions/j30_bounds.csv" "$out" "J30 48 sets, --solver lp --time-limit 5 $*"
python3 - "$DATA/solutions/j30_bounds.csv" "$out" <<'PY'
import csv, re, sys
ub = {r["instance"]: int(r["ub"]) for r in csv.DictReader(open(sys.argv[1]))}
at = proven = n = 0
ms = 0.0
for line in open(sys.argv[2]):
    m = re.match(r"(\S+) makespan=(\d+) lb=\d+ optimal=([01]) valid=1 ms=([0-9.]+)", line)
    if not m:
        continue
    n += 1
    at += int(m.group(2)) == ub[m.group(1)]
    proven += int(m.group(3))
    ms += float(m.group(4))
print("lp48: %d instances, %d at the optimum, %d proven optimal, %.1f s in all" % (n, at, proven, ms / 1000))
PY
