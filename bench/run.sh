#!/usr/bin/env bash
# make bench: the scheduler's benchmarks. Results go to stdout; the figures
# in bench/RESULTS.md were taken with this script (see there for the machine).
#   bench/run.sh [psplib|scale|exec|lp|lp48|larger|j30-hard|cpsat|windows|gpt|gpu|gpt-cuda|cluster|plan|memory|solver|all]      (default all)
#   bench/run.sh gpt-cuda-llmc [--layers L] [--embd C] [--heads H] [--seq T] [--batch B] [--steps N]   (not part of all)
#   (gpt-throughput, gpt-orders, gpt-text, gpt-mpi, gpt-zero-sp: one part
#   of gpt; gpt-zero-sp: ZeRO-3 and SP layouts, with and without rewrites,
#   beside the planner's prediction of the same steps)
# solver: the scheduler's quality figures beside CP-SAT in one run: psplib,
# lp48, larger, j30-hard and cpsat, in that order (about 45 minutes).
# j30-hard: the J30 instances our default takes longest on in this run
# (the 7 slowest; with psplib, those of its J30 default row), each beside CP-SAT on the whole instance (60 s, 2 workers;
# CPSAT_J30_TIME_LIMIT), which proves them too; skipped, saying how to
# install it, where OR-tools is absent.
# lp48: bench/solver/lp48.sh, the lp_solve backend alone on one J30 instance of each
# of the 48 parameter sets (build/psplib --solver lp --time-limit 5).
# larger: bench/solver/larger.sh, instances of J30/J60's generator (bench/solver/progen.py)
# first against the real sets' statistics, then with 30, 60, 90 and 120 jobs
# beside CP-SAT (10 s, 2 workers; skipped with the commands that install it
# where OR-tools is absent), 24 parameter sets x 2 per size. About 7 minutes.
# gpu: build/bench_gpu (bench/gpu.cu) on one GPU; it is built here only where
# nvcc and NCCL are found (else this part says what is missing), and skips,
# saying why, on a machine without a GPU.
# gpt-cuda: build/train_gpt_cuda on one GPU, a GPT-2-small-sized model
# (12 layers, width 768, 12 heads, T 1024), float32 and bfloat16, plain and
# as CUDA graphs, program order against the library's; skipped, saying why,
# where it is not built or there is no GPU.
# gpt-cuda-llmc: build/train_gpt_cuda beside llm.c's train_gpt2cu on one
# GPU, both bfloat16, the same layers, width, heads, context and batch
# (default GPT-2 small: 12, 768, 12, 1024, batch 8; 30 steps, the first 5 of
# each not timed). llm.c is the user's: LLMC_BIN, or train_gpt2cu in the
# copy LLMC_DIR names, which this script builds there without cuDNN for
# sm_90 (H100, H200; not with BENCH_NO_BUILD=1); it never fetches llm.c. llm.c gets random
# weights and random tokens in its own formats (build/llmc_files, in
# $BUILD/llmc-bench). Reported per trainer: tokens/s (from the median step)
# and model FLOPs utilisation, each from its own model's FLOPs per token,
# 6 (12 L C^2 + V C) + 12 L C T (V: ours at most 256 characters; llm.c's
# padded 50,304), over the GPU's dense bfloat16 peak (PEAK_TFLOPS, or 989
# for an H100 or H200, 312 for an A100). Without llm.c, or without a GPU,
# it says so and runs what it can.
# cpsat: the scheduler beside OR-tools CP-SAT (bench/solver/cpsat_ref.py) on synthetic
# training steps of about 1k to 10k ops written as .sm files (build/bench_step_sm):
# CP-SAT on the whole graph (60 s, 2 workers) and by the paper's odd-even
# windows of 2x125 ops, 4 rounds; ours by default and with the same windows
# (also with --window-prove: the windows its search leaves open try a proof).
# CP-SAT comes from a virtual environment (CPSAT_PYTHON, default
# build/venv/bin/python); where OR-tools is absent that part is skipped with
# the commands that install it. CPSAT_LAYERS, CPSAT_TIME_LIMIT and
# CPSAT_WINDOW_TIME_LIMIT change the sizes and limits.
# windows: the windows of 2x125 ops our search leaves unproven on the
# planner's gpt-13b and gpt-175b steps and the synthetic 455-layer step
# (WINDOWS_GRAPHS: planN, the cpsat part's Nth planner step, 0-2 for
# gpt-1.3b, gpt-13b, gpt-175b by default; stepN), each written out by
# build/bench_window_dump (bench/solver/window_dump.c: the scheduler hands each
# unproven window to cc_sched_tuning.on_window) and solved alone by CP-SAT (bench/solver/cpsat_window.py,
# 20 s, 2 workers; CPSAT_WINDOW_SOLO_TIME_LIMIT): whether our placement or
# our lower bound keeps each from its proof, and per graph how much shorter
# CP-SAT's placements are and the largest gap it leaves itself. Skipped,
# saying how to install OR-tools, where it is absent. About 25 minutes.
# cluster: build/bench_cluster (bench/cluster_validate.c), the cluster cost
# model's bus bandwidths (simulated) beside NCCL's published figures.
# plan: build/plan (tools/plan.c) through bench/plan_tables.py: the Concerto
# paper's cases, a grid of GPT 1.3B/13B/175B layouts on 8-1,024 GPUs of each
# cluster preset against the peers' policies and the lower bound, the
# sensitivity to alpha and to noise, S+AD against its restrictions (S+AD
# near, S+AD N=2: build/plan --ad-variants), and planning time against ops
# per rank. Every step time it prints is simulated. About an hour on 2
# cores. (plan-paper, plan-grid, plan-sensitivity, plan-variants: one part)
# memory: bench/memory_curve.sh, the planner's step time against a rank's
# memory cap on a ZeRO-3 gpt-13b step beside fixed prefetch policies, and
# the solve-time cost of the memory resource on its largest steps. About a
# minute.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
BUILD=${BUILD:-build}
DATA=../shared/data/psplib
# BENCH_NO_BUILD=1: run what is built, compiling nothing (make gpu-check on a machine without a compiler)
nobuild=${BENCH_NO_BUILD:-0}
if [ "$nobuild" != 1 ]; then
  case "$what" in
    gpu|gpt-cuda-llmc) ;;
    *) make -s "$BUILD/psplib" "$BUILD/bench_scale" "$BUILD/bench_exec" "$BUILD/bench_lp" "$BUILD/train_gpt" ;;
  esac
fi

echo "machine: $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "commit:  $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"

psplib_data() {  # the instances, extracted into the build folder (never into shared/)
  mkdir -p "$BUILD/psplib-data"
  [ -d "$BUILD/psplib-data/j30" ] || tar xzf "$DATA/j30.tar.gz" -C "$BUILD/psplib-data"
  [ -d "$BUILD/psplib-data/j60" ] || tar xzf "$DATA/j60.tar.gz" -C "$BUILD/psplib-data"
}
# the value of key in a line of key=value words
field() { echo "$1" | tr ' ' '\n' | awk -v k="$2=" 'index($0, k) == 1 && !done { print substr($0, length(k) + 1); done = 1 }'; }
# CP-SAT's python in $py and whether OR-tools is there in $have_cpsat (bench/solver/cpsat_probe.sh)
cpsat_setup() {
  py=${CPSAT_PYTHON:-$BUILD/venv/bin/python}
  # shellcheck source=solver/cpsat_probe.sh
  . "$(dirname "$0")/solver/cpsat_probe.sh"
  cpsat_probe "$py"
}
j30_out=   # the J30 default run of the psplib part, which j30-hard reads when both run
# the planner's steps of the cpsat part (plan0, plan1, plan2 there and in windows)
IFS=';' read -r -a plans <<< "${CPSAT_PLANS:---model gpt-1.3b --tp 8 --dp 4 --nodes 4;--model gpt-13b --tp 8 --dp 4 --pp 4 --micro-batches 8 --nodes 16;--model gpt-175b --tp 8 --dp 4 --pp 8 --micro-batches 16 --zero 1 --nodes 32}"

if [ "$what" = all ] || [ "$what" = psplib ] || [ "$what" = solver ]; then
  if [ ! -d "$DATA" ]; then
    echo "PSPLIB benchmarks skipped: $DATA not found (clone the repository beside shared/)"
  else
    psplib_data
    echo
    echo "| set, method | instances | at best known | below best known | proven optimal | mean dev. from best known | max dev. | mean dev. from CPM bound | median ms | max ms | invalid |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    run() {  # label bounds args...
      local label=$1 bounds=$2; shift 2
      "$BUILD/psplib" "$@" > "$BUILD/bench-psplib.txt" || true
      python3 bench/solver/psplib_stats.py "$DATA/solutions/$bounds" "$BUILD/bench-psplib.txt" "$label"
    }
    run "J30 naive serial LFT, one pass" j30_bounds.csv --method list --rule lft --sgs serial --improve 0 "$BUILD"/psplib-data/j30/*.sm
    run "J30 default (auto)" j30_bounds.csv "$BUILD"/psplib-data/j30/*.sm
    cp "$BUILD/bench-psplib.txt" "$BUILD/bench-j30.txt" && j30_out=$BUILD/bench-j30.txt
    run "J60 naive serial LFT, one pass" j60_bounds.csv --method list --rule lft --sgs serial --improve 0 "$BUILD"/psplib-data/j60/*.sm
    run "J60 default (auto)" j60_bounds.csv "$BUILD"/psplib-data/j60/*.sm
    # the restarts on both cores (the schedule is the same on any number of
    # threads; 26 restarts instead of 10 in about the time of one thread's 10)
    run "J60 auto, 2 threads, 26 restarts" j60_bounds.csv --threads 2 --restarts 26 "$BUILD"/psplib-data/j60/*.sm
    # schedule generation alone: sampling with no branch and bound on J60's
    # set 13 (resource strength 0.2; no instance reaches its lower bound, so
    # each spends the whole budget; every justification counts)
    echo
    "$BUILD/psplib" --method sampling --budget 100000 --exact 0 "$BUILD"/psplib-data/j60/j6013_*.sm > "$BUILD/bench-psplib.txt" || true
    awk '/^summary/ { for (i = 1; i <= NF; i++) if ($i ~ /^(instances|total_ms)=/) { split($i, a, "="); v[a[1]] = a[2] } }
         END { printf "schedule generation (J60 set 13, sampling, 100000 schedules each): %d instances in %.2f s, %.0f schedules a second\n",
               v["instances"], v["total_ms"] / 1000, v["instances"] * 100000 / (v["total_ms"] / 1000) }' "$BUILD/bench-psplib.txt"
  fi
fi

if [ "$what" = all ] || [ "$what" = scale ]; then
  echo
  echo "synthetic training steps (22 ops per layer), one process per size:"
  for ratio in 1.0 2.0; do
    for layers in 45 455 4545 45455; do
      "$BUILD/bench_scale" "$layers" "$ratio"
    done
  done
  echo
  echo "odd-even rounds x block size, about 1k and 10k ops:"
  "$BUILD/bench_scale" --sweep 45 2.0
  "$BUILD/bench_scale" --sweep 455 2.0
fi

if [ "$what" = all ] || [ "$what" = exec ]; then
  echo
  echo "executor overhead on the CPU backend (empty ops):"
  "$BUILD/bench_exec" overhead
  echo
  echo "measured vs predicted step time with the emulated link, 2 ranks:"
  "$BUILD/bench_exec" agree 2
  echo
  echo "the same, 4 ranks on one node:"
  "$BUILD/bench_exec" agree 4
fi

if [ "$what" = all ] || [ "$what" = lp ]; then
  # lp_solve vs branch and bound (needs the backend: liblpsolve55-dev).
  # J30: a fixed sample (every 8th instance, 60); J60: likewise (60); method
  # bnb, so the exact solver always runs after the heuristic incumbent;
  # lp_solve gets 2 s per model.
  if [ -d "$DATA" ]; then
    psplib_data
    echo
    echo "| set, solver | instances | at best known | below best known | proven optimal | mean dev. from best known | max dev. | mean dev. from CPM bound | median ms | max ms | invalid |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    for set in j30 j60; do
      files=$(ls "$BUILD"/psplib-data/$set/*.sm | sort | awk 'NR % 8 == 1')
      for solver in bnb lp both; do
        "$BUILD/psplib" --method bnb --solver $solver --lp-time-limit 2 $files > "$BUILD/bench-lp.txt" || true
        python3 bench/solver/psplib_stats.py "$DATA/solutions/${set}_bounds.csv" "$BUILD/bench-lp.txt" "${set^^} sample, --solver $solver"
      done
    done
  fi
  echo
  echo "odd-even windows on a training step (examples/steps/synthetic_step.h), 2 rounds:"
  "$BUILD/bench_lp"
fi

if [ "$what" = all ] || [ "$what" = lp48 ] || [ "$what" = solver ]; then
  echo
  echo "lp_solve backend: 48 J30 parameter sets (bench/solver/lp48.sh):"
  if [ -d "$DATA" ]; then BUILD="$BUILD" DATA="$DATA" bash bench/solver/lp48.sh | tail -n 4; else echo "skipped: $DATA not found"; fi
fi

if [ "$what" = all ] || [ "$what" = larger ] || [ "$what" = solver ]; then
  echo
  echo "larger PSPLIB-like instances beside CP-SAT (bench/solver/larger.sh):"
  if [ -d "$DATA" ]; then BUILD="$BUILD" DATA="$DATA" CPSAT_PYTHON="${CPSAT_PYTHON:-$BUILD/venv/bin/python}" bash bench/solver/larger.sh
  else echo "skipped: $DATA not found"; fi
fi

if [ "$what" = all ] || [ "$what" = j30-hard ] || [ "$what" = solver ]; then
  echo
  echo "the J30 instances the default takes longest on (the 7 slowest of this run), beside CP-SAT on each whole instance:"
  if [ ! -d "$DATA" ]; then echo "skipped: $DATA not found"
  else
    psplib_data
    cpsat_setup
    [ $have_cpsat = 1 ] || cpsat_skip_message "$py" "$BUILD"
    jtl=${CPSAT_J30_TIME_LIMIT:-60}
    [ -n "$j30_out" ] || "$BUILD/psplib" "$BUILD"/psplib-data/j30/*.sm > "$BUILD/bench-j30.txt" || true
    echo "all 480: $(tail -n 1 "$BUILD/bench-j30.txt")"
    echo "| instance | optimum | ours ms | ours proven | ours conflicts | CP-SAT s (2 workers, ${jtl} s) | CP-SAT status | CP-SAT makespan |"
    echo "|---|---|---|---|---|---|---|---|"
    # (the whole list sorted, then its first 7: head would end the pipe early, which pipefail counts as a failure)
    grep -v '^summary' "$BUILD/bench-j30.txt" | sed 's/.* ms=\([0-9.]*\).*/\1 &/' | sort -g -r | awk 'NR <= 7' | cut -d' ' -f2- |
    while read -r line; do
      name=${line%% *}
      opt=$(awk -F, -v n="$name" '{ gsub(/ /, "") } $1 == n { print $7 }' "$DATA/solutions/j30_bounds.csv")
      ms=$(field "$line" ms); pr=$(field "$line" optimal); cf=$(field "$line" conflicts)
      if [ $have_cpsat = 1 ]; then
        c=$("$py" bench/solver/cpsat_ref.py --method whole --time-limit "$jtl" "$BUILD/psplib-data/j30/$name.sm")
        cs=$(field "$c" seconds); st=$(field "$c" status); cm=$(field "$c" makespan)
      else cs=-; st=skipped; cm=-; fi
      echo "| $name | ${opt:--} | $ms | $pr | ${cf:--} | $cs | $st | $cm |"
    done
  fi
fi

if [ "$what" = all ] || [ "$what" = cpsat ] || [ "$what" = solver ]; then
  make -s "$BUILD/bench_step_sm"
  cpsat_setup
  if [ $have_cpsat = 0 ]; then
    echo
    cpsat_skip_message "$py" "$BUILD"
  else
    echo "OR-tools: $("$py" -c 'import ortools; print(ortools.__version__)')"
  fi
  tl=${CPSAT_TIME_LIMIT:-60}; wtl=${CPSAT_WINDOW_TIME_LIMIT:-2}
  mkdir -p "$BUILD/cpsat"
  echo
  echo "training steps as .sm: the synthetic ones of examples/steps/synthetic_step.h (comm ratio 2.0) and the planner's (build/plan --sm:"
  echo "stage 0's rank of the configuration named, 3-4 streams, durations in us from the cost model). Ours: build/psplib"
  echo "default; --window-max 64 (deeper windows up to 2x64 ops); --method oddeven --window 125 --rounds 4 (windows of 2x125"
  echo "ops); the same with --window-prove (each window its search leaves unproven tries the proof by shaving: the same"
  echo "schedule, \"proving\"); --perturb ${CPSAT_PERTURB:-32} (the default windows, then that many restarts from a perturbed order). CP-SAT: the"
  echo "whole graph (${tl} s, 2 workers) and odd-even windows of 2x125 ops, 4 rounds (${wtl} s per window, 2 workers), from"
  echo "the same list schedule. A max gap is the largest over a run's windows of (window end - its bound) / (window end -"
  echo "its first start before the solve). Ratios are CP-SAT / ours perturbed (makespan and time):"
  echo "| graph | ops | lower bound | ours mk | ours s | ours deeper mk | ours deeper s | ours 2x125 mk | ours 2x125 s | ours 2x125 windows proven | max gap | max ms per window | proving s | proving windows proven | proving max gap | proving max ms per window | ours perturbed mk | ours perturbed s | CP-SAT whole mk | s | status | CP-SAT odd-even mk | s | windows proven | max gap | mk ratio whole | mk ratio odd-even | time ratio whole | time ratio odd-even |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  graphs=()
  for layers in ${CPSAT_LAYERS:-45 227 455 909}; do
    f="$BUILD/cpsat/step$layers.sm"
    "$BUILD/bench_step_sm" "$layers" 2.0 "$f" > /dev/null
    graphs+=("synthetic, $layers layers|$f")
  done
  make -s "$BUILD/plan"
  for i in "${!plans[@]}"; do
    f="$BUILD/cpsat/plan$i.sm"
    # shellcheck disable=SC2086
    "$BUILD/plan" ${plans[$i]} --quiet --sm "$f" > /dev/null
    graphs+=("plan ${plans[$i]}|$f")
  done
  for gf in "${graphs[@]}"; do
    label=${gf%%|*}; f=${gf#*|}
    ops=$(( $(sed -n 's/^jobs (incl. supersource\/sink ): *\([0-9]*\).*/\1/p' "$f") - 2 ))
    a=$("$BUILD/psplib" "$f" | sed -n 1p)
    d=$("$BUILD/psplib" --window-max 64 "$f" | sed -n 1p)
    b=$("$BUILD/psplib" --method oddeven --window 125 --rounds 4 "$f" | sed -n 1p)
    c=$("$BUILD/psplib" --window-prove --method oddeven --window 125 --rounds 4 "$f" | sed -n 1p)
    q=$("$BUILD/psplib" --perturb "${CPSAT_PERTURB:-32}" "$f" | sed -n 1p)
    mkq=$(field "$q" makespan); msq=$(field "$q" ms)
    mk=$(field "$a" makespan); ms=$(field "$a" ms); mkd=$(field "$d" makespan); msd=$(field "$d" ms)
    mk2=$(field "$b" makespan); ms2=$(field "$b" ms)
    lb=$(field "$a" lb)
    ow="$(field "$b" windows_proven)/$(field "$b" windows) | $(field "$b" window_gap_max) | $(field "$b" window_ms_max)"
    pw="$(awk -v t="$(field "$c" ms)" 'BEGIN { printf "%.3f", t / 1000 }') | $(field "$c" windows_proven)/$(field "$c" windows) | $(field "$c" window_gap_max) | $(field "$c" window_ms_max)"
    [ "$(field "$c" makespan)" = "$mk2" ] || pw="$pw (makespan $(field "$c" makespan), not $mk2)"
    if [ $have_cpsat = 1 ]; then
      # the whole model of a large graph can stay in CP-SAT's presolve far
      # beyond its limit: after 4 times the limit it counts as no answer
      w=$(timeout $((4 * ${tl%.*})) "$py" bench/solver/cpsat_ref.py --method whole --time-limit "$tl" "$f" ||
          echo "makespan=- seconds=$((4 * ${tl%.*})) status=NO_ANSWER_IN_$((4 * ${tl%.*}))_S valid=1")
      o=$("$py" bench/solver/cpsat_ref.py --method oddeven --window-time-limit "$wtl" "$f")
      cw=$(field "$w" makespan); sw=$(field "$w" seconds); st=$(field "$w" status)
      co=$(field "$o" makespan); so=$(field "$o" seconds)
      wo="$(field "$o" windows_optimal)/$(field "$o" windows) | $(field "$o" window_gap_max)"
      [ "$(field "$w" valid)$(field "$o" valid)" = 11 ] || st="$st INVALID"
      r=$(awk -v a="$mkq" -v cw="$cw" -v co="$co" -v t="$msq" -v sw="$sw" -v so="$so" \
          'BEGIN { if (cw == "-") printf "- | %.4f | - | %.0f", co / a, so * 1000 / t;
                   else printf "%.4f | %.4f | %.0f | %.0f", cw / a, co / a, sw * 1000 / t, so * 1000 / t }')
    else
      cw=-; sw=-; st=skipped; co=-; so=-; wo="- | -"; r="- | - | - | -"
    fi
    sec() { awk -v t="$1" 'BEGIN { printf "%.3f", t / 1000 }'; }
    echo "| $label | $ops | $lb | $mk | $(sec "$ms") | $mkd | $(sec "$msd") | $mk2 | $(sec "$ms2") | $ow | $pw | $mkq | $(sec "$msq") | $cw | $sw | $st | $co | $so | $wo | $r |"
  done
fi

if [ "$what" = all ] || [ "$what" = windows ]; then
  echo
  cpsat_setup
  if [ $have_cpsat = 0 ]; then
    echo "windows: skipped"
    cpsat_skip_message "$py" "$BUILD"
  else
    make -s "$BUILD/bench_window_dump" "$BUILD/bench_step_sm" "$BUILD/plan"
    stl=${CPSAT_WINDOW_SOLO_TIME_LIMIT:-20}
    echo "the windows of 2x125 ops (--method oddeven --window 125 --rounds 4) our search leaves unproven, each written out"
    echo "(build/bench_window_dump) and solved alone by CP-SAT (bench/solver/cpsat_window.py, ${stl} s, 2 workers, our placement"
    echo "as its hint). Times in the .sm file's units (us); gap = (ours - our bound) / (ours - the window's first start):"
    echo "| graph | window | first start | ours | our bound | gap | CP-SAT | CP-SAT bound | status | s | what stands between the window and its proof |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    mkdir -p "$BUILD/cpsat" "$BUILD/windows"
    for g in ${WINDOWS_GRAPHS:-plan1 plan2 step455}; do
      f="$BUILD/cpsat/$g.sm"
      case $g in
        step*) "$BUILD/bench_step_sm" "${g#step}" 2.0 "$f" > /dev/null; label="synthetic, ${g#step} layers" ;;
        plan[0-9]*)
          i=${g#plan}
          if [ -z "${plans[$i]:-}" ]; then echo "windows: unknown graph $g (${#plans[@]} plans)"; continue; fi
          # shellcheck disable=SC2086
          "$BUILD/plan" ${plans[$i]} --quiet --sm "$f" > /dev/null
          label="plan ${plans[$i]}" ;;
        *) echo "windows: unknown graph $g (stepN or planN)"; continue ;;
      esac
      d="$BUILD/windows/$g"
      rm -rf "$d"; mkdir -p "$d"
      "$BUILD/bench_window_dump" "$d" --method oddeven --window 125 --rounds 4 "$f" 2> /dev/null | sed -n 1p > "$d/ours.txt"
      for w in "$d"/win*.txt; do
        [ -e "$w" ] || continue
        "$py" bench/solver/cpsat_window.py --time-limit "$stl" "$w"
      done | awk -v label="$label" '
        function v(k,   i, a) { for (i = 1; i <= NF; i++) { split($i, a, "="); if (a[1] == k) return a[2] } return "" }
        { n++; w = $1; sub(/.*win/, "", w); sub(/\.txt$/, "", w)
          mk = v("ours_mk"); lb = v("ours_lb"); t0 = v("t0"); cm = v("cpsat_mk"); cb = v("cpsat_bound"); st = v("status")
          gap = mk > t0 ? (mk - lb) / (mk - t0) : 0
          if (cm != "-" && mk > t0) {   # CP-SAT: its gap left, its gain over our placement (of our span)
            cg = (cm - cb) / (mk - t0); if (cg > cgap) cgap = cg
            if (cm + 0 < mk + 0) { shorter++; d = (mk - cm) / (mk - t0); gain += d; if (d > gmax) gmax = d }
          }
          if (cm != "-" && v("valid") != 1) why = "CP-SAT schedule INVALID"
          else if (st == "OPTIMAL") {
            if (cm == lb) { why = "our bound is the optimum; our placement above it"; sched++ }
            else if (cm == mk) { why = "our placement is optimal; our bound below it"; bound++ }
            else { why = "both: the optimum between them"; sched++; bound++ }
            opt++
          } else if (cm != "-" && cm + 0 < mk + 0) {
            why = "CP-SAT shorter"; sched++
            if (cb + 0 > lb + 0) { why = why ", its bound higher"; bound++ }
          } else if (cb + 0 > lb + 0) { why = "CP-SAT bound higher"; bound++ }
          else { why = "open to both"; open_++ }
          printf "| %s | %s | %d | %d | %d | %.2f%% | %s | %d | %s | %s | %s |\n", label, w, t0, mk, lb, 100 * gap, cm, cb, st, v("seconds"), why
        }
        END { printf "| %s | %d unproven | | | | | | | CP-SAT proves %d | | placement above the optimum or CP-SAT'"'"'s: %d; bound below it or CP-SAT'"'"'s: %d; open to both: %d; CP-SAT shorter on %d, by at most %.2f%% (mean %.2f%%) of the span; its largest gap left %.2f%% |\n",
                     label, n, opt, sched, bound, open_, shorter, 100 * gmax, shorter ? 100 * gain / shorter : 0, 100 * cgap }'
      o=$(cat "$d/ours.txt")
      echo "| $label: ours in all | $(field "$o" windows_proven)/$(field "$o" windows) proven | max gap $(field "$o" window_gap_max) | makespan $(field "$o" makespan) | | | | | | | |"
    done
  fi
fi

part() { [ "$what" = all ] || [ "$what" = gpt ] || [ "$what" = "gpt-$1" ]; }
if part throughput || part orders || part text || part mpi || part zero-sp; then
  # The example trainer (examples/gpt). Timings need an otherwise idle machine.
  gpt="$BUILD/train_gpt"
  quiet=(--eval 0 --sample 0 --print-every 0)
fi
if part throughput; then
  echo
  echo "single-rank step throughput, program order, no link (median of 20 steps, 3 runs):"
  echo "| model | parameters | tokens per step | run 1 tok/s | run 2 tok/s | run 3 tok/s |"
  echo "|---|---|---|---|---|---|"
  for m in "--embd 64 --layers 2 --heads 4 --seq 32 --batch 8" "--embd 128 --layers 4 --heads 4 --seq 64 --batch 8"; do
    row=""
    for run in 1 2 3; do
      out=$("$gpt" $m "${quiet[@]}" --order program --no-link --steps 20 --compare 0)
      row="$row | $(echo "$out" | sed -n 's/.*, \([0-9]*\) tokens\/s.*/\1/p')"
    done
    params=$(echo "$out" | sed -n 's/.*: \([0-9]*\) parameters/\1/p')
    set -- $m
    echo "| C=$2 L=$4 H=$6 T=$8 B=${10} | $params | $(( $8 * ${10} ))$row |"
  done
fi
if part orders; then
  echo
  # one run: layout link rewrites -> a table row
  orders_row() {
    local tp=$1 dp=$2 link=$3 rw=$4 run=$5 out alone pred pexp meas side t0 t1 e0 e1 m1 m2 dec fus ran
    out=$("$gpt" --tp "$tp" --dp "$dp" "${quiet[@]}" --steps 60 --order both --compare 9 --link "$link" --decompose "$rw" --fuse "$rw")
    alone=$(echo "$out" | sed -n 's/.*ops profiled alone: .*: \([0-9.]*x\)$/\1/p')
    pred=$(echo "$out" | sed -n 's/.*ops profiled in place ([0-9]* steps of each order): \([0-9.]*\) ms in program order, \([0-9.]*\) ms in the library.s plan: \([0-9.]*x\).*/\1 | \2 | \3/p')
    pexp=$(echo "$out" | sed -n 's/.*predicted exposed communication: \([0-9.]*\) ms -> \([0-9.]*\) ms/\1 -> \2/p')
    side=$(echo "$out" | sed -n 's/.*over the ranks): [0-9.]* ms -> [0-9.]* ms: \([0-9.]*x\);.*/\1/p')
    t0=$(echo "$out" | sed -n 's/.*training in program order: median step \([0-9.]*\) ms.*/\1/p')
    t1=$(echo "$out" | sed -n 's/.*training in the library.s order: median step \([0-9.]*\) ms.*/\1/p')
    e0=$(echo "$out" | sed -n 's/.*training in program order: .*, exposed communication \([0-9.]*\) ms.*/\1/p')
    e1=$(echo "$out" | sed -n 's/.*training in the library.s order: .*, exposed communication \([0-9.]*\) ms.*/\1/p')
    m1="$t0 | $t1 | $(awk -v a="$t0" -v b="$t1" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')"
    m2="$e0 -> $e1"
    dec=$(echo "$out" | sed -n 's/.*decomposed \([0-9]*\) collective.*/\1/p'); fus=$(echo "$out" | sed -n 's/.*into \([0-9]*\) bucket.*/\1/p')
    ran="plan"
    if echo "$out" | grep -q "kept program order: the library's schedule"; then ran="program (no gain predicted)"
    elif echo "$out" | grep -q "kept program order: with each order's ops profiled in place"; then ran="program (predicted under 3% faster in place)"
    elif echo "$out" | grep -q "kept program order: the library's plan measured slower"; then ran="program (measured slower)"; fi
    echo "| TP$tp x DP$dp | $link | ${dec:--} / ${fus:--} | $run | ${alone:--} | $pred | $m1 | ${side:--} | $pexp | $m2 | $ran |"
  }
  echo "default model, emulated link: program order vs the library's plan, without and with decomposition and fusion;"
  echo "predicted first from ops profiled alone, then from each order's ops profiled in 20 of its own steps (after 20"
  echo "not profiled; the orders alternating step by step); measured: 60 training steps of each order, the median (rank 0), and side by side before"
  echo "training (9 steps each, alternating, mean over the ranks); 'trains' is what the library then runs:"
  echo "| layout | inter-node us/KiB | decomposed / fused | run | predicted speed-up (alone) | predicted program ms | predicted plan ms | predicted speed-up | measured program ms | measured plan ms | measured speed-up | side by side speed-up | predicted exposed ms | measured exposed ms | trains |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
  for link in 10 20 40 80; do
    for rw in off on; do
      for run in 1 2 3; do orders_row 2 2 $link $rw $run; done
    done
  done
  for lay in "2 1" "1 2"; do
    for rw in off on; do
      for run in 1 2 3; do orders_row $lay 40 $rw $run; done
    done
  done
fi
if part zero-sp; then
  echo
  # one run: layout options, rewrites -> a table row; the planner's
  # prediction of the same step (sizes only, the a100 preset: simulated)
  zero_row() {
    local lay=$1 rw=$2 run=$3 out pred side pk0 pk1 dec fus ran
    # shellcheck disable=SC2086
    out=$("$gpt" --tp 2 --dp 2 $lay "${quiet[@]}" --steps 30 --order both --compare 15 --link 40 --decompose "$rw" --fuse "$rw")
    pred=$(echo "$out" | sed -n 's/.*ops profiled in place ([0-9]* steps of each order): \([0-9.]*\) ms in program order, \([0-9.]*\) ms in the library.s plan: \([0-9.]*x\).*/\1 | \2 | \3/p')
    side=$(echo "$out" | sed -n 's/.*over the ranks): \([0-9.]*\) ms -> \([0-9.]*\) ms: \([0-9.]*x\);.*/\1 | \2 | \3/p')
    pk0=$(echo "$out" | sed -n 's/.*memory per rank, program order: \([0-9.]*\) MiB.*/\1/p')
    pk1=$(echo "$out" | sed -n 's/.*memory per rank, the library.s order: \([0-9.]*\) MiB.*/\1/p')
    dec=$(echo "$out" | sed -n 's/.*decomposed \([0-9]*\) collective.*/\1/p'); fus=$(echo "$out" | sed -n 's/.*into \([0-9]*\) bucket.*/\1/p')
    ran="plan"
    echo "$out" | grep -q "kept program order" && ran="program"
    echo "| TP2 x DP2 $lay | $rw | ${dec:--} / ${fus:--} | $run | $pred | $side | $pk0 / $pk1 | $ran |"
  }
  echo "default model (C=64 L=2 H=4 T=32, global batch 8), TP2 x DP2 over the emulated link (40 us/KiB between nodes):"
  echo "program order vs the library's plan, the schedule alone (rewrites off) and with decomposition and fusion;"
  echo "predicted from each order's ops profiled in 20 of its own steps; measured side by side (15 steps each,"
  echo "alternating, mean over the ranks); peak: a rank's memory in the predicted step (program / the library's order)"
  echo "| layout | rewrites | decomposed / fused | run | predicted program ms | predicted plan ms | predicted speed-up | side by side program ms | side by side plan ms | side by side speed-up | peak MiB | trains |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for lay in "--zero 3" "--sp" "--sp --zero 3"; do
    for rw in off on; do
      for run in 1 2 3; do zero_row "$lay" $rw $run; done
    done
  done
  make -s "$BUILD/plan"
  echo
  echo "the planner's prediction of the same steps (build/plan, sizes only, the a100 preset: SIMULATED, microseconds of a GPU step):"
  echo "| layout | program us | S us | S+AD us | S / program | best / program |"
  echo "|---|---|---|---|---|---|"
  for lay in "--zero 3" "--sp" "--sp --zero 3"; do
    # shellcheck disable=SC2086
    "$BUILD/plan" --hidden 64 --layers 2 --heads 4 --seq 32 --vocab 27 --micro-batch 4 --tp 2 --dp 2 --dtype fp32 --cluster a100 \
      --nodes 2 --gpus-per-node 2 $lay --json 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
v = {x["name"]: x["us"] for x in j["variants"]}
best = min(v["S"], v["S+F"], v["S+AD"])
print("| TP2 x DP2 %s | %.1f | %.1f | %.1f | %.3f | %.3f |" % (sys.argv[1], v["program"], v["S"], v["S+AD"], v["S"] / v["program"], best / v["program"]))' "$lay"
  done
fi
if part mpi; then
  echo
  make -s "$BUILD/train_gpt_mpi" || true
  if [ ! -x "$BUILD/train_gpt_mpi" ]; then
    echo "MPI benchmarks skipped: $BUILD/train_gpt_mpi was not built:"; make -s deps | grep 'MPI'
  else
    mpirun_=(mpirun --oversubscribe --mca btl_vader_single_copy_mechanism none)
    [ "$(id -u)" -eq 0 ] && mpirun_+=(--allow-run-as-root)
    # one run: where layout model -> a table row
    mpi_row() {
      local where=$1 tp=$2 dp=$3 model=$4 run=$5 out pred meas
      if [ "$where" = mpi ]; then
        out=$("${mpirun_[@]}" -np $((tp * dp)) "$BUILD/train_gpt_mpi" --tp "$tp" --dp "$dp" $model "${quiet[@]}" --steps 0 --compare 9)
      else
        out=$("$gpt" --tp "$tp" --dp "$dp" $model "${quiet[@]}" --steps 0 --compare 9 --no-link)
      fi
      pred=$(echo "$out" | sed -n 's/.*predicted step: \([0-9.]*\) ms in program order, \([0-9.]*\) ms scheduled.*: \([0-9.]*x\)/\1 | \2 | \3/p')
      meas=$(echo "$out" | sed -n 's/.*each): \([0-9.]*\) ms -> \([0-9.]*\) ms: \([0-9.]*x\).*/\1 | \2 | \3/p')
      echo "| $where | TP$tp x DP$dp | $model | $run | $pred | $meas |"
    }
    make -s "$BUILD/bench_mpi_overlap" || true
    if [ -x "$BUILD/bench_mpi_overlap" ]; then
      echo "an all-reduce beside a compute loop on the CPU backend over MPI (bench/mpi_overlap.c; median of 21 steps):"
      for np in 2 4; do "${mpirun_[@]}" -np $np "$BUILD/bench_mpi_overlap" 21 20 256 2048 8192 | { [ $np = 2 ] && cat || tail -n +3; }; done
      echo
    fi
    echo "the trainer as processes (mpirun, collectives through Open MPI between processes) and as threads of"
    echo "the in-process world (no link emulation), program order vs the library's plan side by side (median of 9 steps each):"
    echo "| ranks as | layout | model | run | predicted program ms | predicted plan ms | predicted speed-up | measured program ms | measured plan ms | measured speed-up |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for model in "--embd 64 --layers 2" "--embd 128 --layers 4 --seq 64"; do
      for lay in "2 1" "1 2" "2 2"; do
        for where in mpi world; do
          for run in 1 2 3; do mpi_row $where $lay "$model" $run; done
        done
      done
    done
  fi
fi
if part text; then
  text=../shared/data/text/tinyshakespeare.txt
  if [ -f "$text" ]; then
    echo
    echo "tinyshakespeare, TP1 x DP2, 1000 steps (C=96 L=3 H=4 T=64, global batch 8), no link:"
    "$gpt" --data "$text" --dp 2 --embd 96 --layers 3 --heads 4 --seq 64 --batch 8 --steps 1000 --no-link \
        --eval 64 --sample 300 --compare 0 --print-every 100
  else
    echo "tinyshakespeare benchmark skipped: $text not found"
  fi
fi

if [ "$what" = all ] || [ "$what" = gpu ]; then
  echo
  [ "$nobuild" = 1 ] || make -s "$BUILD/bench_gpu"
  if [ ! -x "$BUILD/bench_gpu" ]; then
    echo "GPU benchmarks skipped: $BUILD/bench_gpu was not built; it needs nvcc and NCCL 2.18+ (CUDA_HOME, default /usr/local/cuda):"
    make -s deps | grep -E 'CUDA|NCCL'
  else
    dev=$("$BUILD/bench_gpu" device)
    echo "$dev"
    case "$dev" in
      "GPU benchmarks skipped"*) ;;
      *)
        echo
        echo "executor overhead on the CUDA backend (empty kernels, plain launches, no timestamps):"
        "$BUILD/bench_gpu" overhead
        echo
        echo "plain launches vs CUDA-graph replay, the same plans:"
        "$BUILD/bench_gpu" graphs
        echo
        echo "measured vs predicted step time, 12 layers of 512x512 matmuls, one-rank NCCL all-reduces:"
        "$BUILD/bench_gpu" step
        echo
        echo "the same with device-to-device copies for communication:"
        "$BUILD/bench_gpu" step --copies
        ;;
    esac
  fi
fi

if [ "$what" = all ] || [ "$what" = gpt-cuda ]; then
  echo
  make -s "$BUILD/train_gpt_cuda" || true
  cuda_probe=(--steps 0 --eval 0 --sample 0 --compare 0 --profile 0)
  if [ ! -x "$BUILD/train_gpt_cuda" ]; then
    echo "CUDA trainer benchmarks skipped: $BUILD/train_gpt_cuda was not built:"
    make -s deps | grep 'CUDA trainer'
  elif ! why=$("$BUILD/train_gpt_cuda" "${cuda_probe[@]}" 2>&1); then
    echo "CUDA trainer benchmarks skipped: $(tail -n 1 <<<"$why")"
  else
    gpt2=(--layers 12 --embd 768 --heads 12 --seq 1024 --batch 8 --steps 20 --eval 0 --sample 0 --print-every 10 --compare 5
          --order both)
    for dt in f32 bf16; do
      for g in off on; do
        echo "CUDA trainer, GPT-2-small-sized, --dtype $dt, --cuda-graphs $g (median of 20 steps per order):"
        "$BUILD/train_gpt_cuda" "${gpt2[@]}" --dtype "$dt" --cuda-graphs "$g" |
          grep -E '^model:|identical|predicted step|measured side by side|training in'
      done
    done
  fi
fi

if [ "$what" = gpt-cuda-llmc ]; then
  L=12 C=768 H=12 T=1024 B=8 STEPS=30
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --layers|--embd|--heads|--seq|--batch|--steps)
        if [ $# -lt 2 ] || ! [[ "$2" =~ ^[1-9][0-9]{0,6}$ ]]; then
          echo "bench/run.sh gpt-cuda-llmc: $1 needs a positive integer" >&2; exit 2
        fi
        case "$1" in --layers) L=$2 ;; --embd) C=$2 ;; --heads) H=$2 ;; --seq) T=$2 ;; --batch) B=$2 ;; --steps) STEPS=$2 ;; esac
        shift 2 ;;
      *) echo "bench/run.sh gpt-cuda-llmc: unknown option '$1' (--layers, --embd, --heads, --seq, --batch, --steps)" >&2; exit 2 ;;
    esac
  done
  if [ $((C % H)) -ne 0 ]; then echo "bench/run.sh gpt-cuda-llmc: width $C is not a multiple of $H heads" >&2; exit 2; fi
  if [ "$STEPS" -le 5 ]; then echo "bench/run.sh gpt-cuda-llmc: --steps must be more than 5 (the first 5 are not timed)" >&2; exit 2; fi
  [ "$nobuild" = 1 ] || make -s "$BUILD/llmc_files" "$BUILD/train_gpt_cuda" || true
  echo
  echo "side by side with llm.c: $L layers, width $C, $H heads, context $T, batch $B, $STEPS steps, bfloat16"
  llmc=${LLMC_BIN:-}
  if [ -z "$llmc" ] && [ -n "${LLMC_DIR:-}" ]; then
    llmc=$LLMC_DIR/train_gpt2cu
    if [ "$nobuild" != 1 ] && [ -f "$LLMC_DIR/Makefile" ]; then   # the user's copy: its trainer without cuDNN, for sm_90
      make -C "$LLMC_DIR" train_gpt2cu USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90 NO_MULTI_GPU=1 >"$BUILD/llmc_build.log" 2>&1 ||
        echo "llm.c's train_gpt2cu did not build in $LLMC_DIR: see $BUILD/llmc_build.log"
    fi
  fi
  if [ -z "$llmc" ]; then
    echo "llm.c skipped: set LLMC_DIR to a copy of llm.c (train_gpt2cu is built there without cuDNN, for sm_90), or LLMC_BIN to a built train_gpt2cu; this script never fetches llm.c"
  elif [ ! -x "$llmc" ]; then
    echo "llm.c skipped: $llmc is not an executable program (build train_gpt2cu in your copy of llm.c first, without cuDNN)"
    llmc=
  fi
  [ -z "$llmc" ] || llmc=$(cd "$(dirname "$llmc")" && pwd)/$(basename "$llmc")
  work=$BUILD/llmc-bench
  model=$work/model_L${L}_C${C}_H${H}_T${T}.bin
  tokens=$work/tokens.bin
  ntok=$((B * T * 4 + 1)); [ "$ntok" -ge 65537 ] || ntok=65537
  probe=(--steps 0 --eval 0 --sample 0 --compare 0 --profile 0)
  if [ ! -x "$BUILD/train_gpt_cuda" ]; then
    echo "side-by-side benchmark skipped: $BUILD/train_gpt_cuda was not built"
    [ "$nobuild" = 1 ] || make -s deps | grep 'CUDA trainer'
  elif ! why=$("$BUILD/train_gpt_cuda" "${probe[@]}" 2>&1); then
    echo "side-by-side benchmark skipped: no GPU to run on: $(tail -n 1 <<<"$why")"
  else
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
    peak=${PEAK_TFLOPS:-}
    if [ -z "$peak" ]; then
      case "$gpu" in *H100*|*H200*|*H800*|*GH200*) peak=989 ;; *A100*|*A800*) peak=312 ;; esac
    fi
    echo "GPU: ${gpu:-unknown}; dense bfloat16 peak: ${peak:-unknown (set PEAK_TFLOPS)} TFLOP/s"
    if [ -n "$llmc" ]; then
      if [ ! -x "$BUILD/llmc_files" ]; then echo "llm.c skipped: $BUILD/llmc_files was not built (make $BUILD/llmc_files)"; llmc=
      else
        mkdir -p "$work"
        [ -s "$model" ] || "$BUILD/llmc_files" model "$model" "$L" "$C" "$H" "$T" || { rm -f "$model"; exit 1; }
        "$BUILD/llmc_files" tokens "$tokens" "$ntok" || exit 1
        echo "llm.c's inputs: $model ($(wc -c <"$model") bytes, random bfloat16 weights), $tokens ($ntok random tokens)"
      fi
    fi
    # median over the steps after the first 5 of a list of step times in ms
    median() { tail -n +6 | sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print ""; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
    # trainer, vocabulary, median ms: a line of the summary
    row() {
      local fpt tps mfu
      fpt=$(awk -v L="$L" -v C="$C" -v T="$T" -v V="$2" 'BEGIN { printf "%.0f", 6 * (12 * L * C * C + V * C) + 12 * L * C * T }')
      if [ -z "$3" ]; then echo "| $1 | $L x $C, $H heads, T $T, batch $B | $2 | failed | $fpt | - |"; return; fi
      tps=$(awk -v ms="$3" -v B="$B" -v T="$T" 'BEGIN { printf "%.0f", B * T / (ms / 1000) }')
      mfu=-
      [ -z "$peak" ] || mfu=$(awk -v t="$tps" -v f="$fpt" -v p="$peak" 'BEGIN { printf "%.1f%%", 100 * t * f / (p * 1e12) }')
      echo "| $1 | $L x $C, $H heads, T $T, batch $B | $2 | $tps | $fpt | $mfu |"
    }
    ours=$("$BUILD/train_gpt_cuda" --layers "$L" --embd "$C" --heads "$H" --seq "$T" --batch "$B" --steps "$STEPS" --dtype bf16 \
             --eval 0 --sample 0 --compare 0 --profile 0 --print-every 1 --order concerto 2>&1) || echo "$ours" | tail -n 5
    ours_v=$(sed -n 's/^model: .*vocabulary \([0-9]*\):.*/\1/p' <<<"$ours" | head -n 1)
    ours_ms=$(sed -n 's/^step *[0-9]*  loss .*  step *\([0-9.]*\) ms .*/\1/p' <<<"$ours" | median || true)
    if [ -z "$ours_ms" ]; then   # the summary's median where the step lines carry no time
      ours_ms=$(sed -n 's/.*training in .* order: median step \([0-9.]*\) ms.*/\1/p' <<<"$ours" | head -n 1)
    fi
    llmc_ms=
    if [ -n "$llmc" ]; then
      out=$( (cd "$work" && "$llmc" -i tokens.bin -j tokens.bin -e "$(basename "$model")" -b "$B" -t "$T" -x "$STEPS" -v 1000000 \
                -s 1000000 -h 0) 2>&1) || echo "$out" | tail -n 5
      llmc_ms=$(sed -n 's/^step .*| *\([0-9.]*\) ms |.*/\1/p' <<<"$out" | median || true)
    fi
    echo
    echo "| trainer | model | vocabulary | tokens/s | FLOPs per token | MFU |"
    echo "|---|---|---|---|---|---|"
    row "train_gpt_cuda (bf16)" "${ours_v:-256}" "$ours_ms"
    if [ -n "$llmc" ]; then row "llm.c train_gpt2cu (bf16)" 50304 "$llmc_ms"; else echo "| llm.c train_gpt2cu | - | 50304 | not run | - | - |"; fi
  fi
fi

if [ "$what" = all ] || [ "$what" = cluster ]; then
  echo
  make -s "$BUILD/bench_cluster"
  "$BUILD/bench_cluster"
fi

if [ "$what" = all ] || [ "$what" = plan ] || [ "${what#plan-}" != "$what" ]; then
  echo
  make -s "$BUILD/plan"
  case "$what" in plan-*) parts=${what#plan-} ;; *) parts=all ;; esac
  python3 bench/plan_tables.py --plan "$BUILD/plan" $parts
fi

if [ "$what" = all ] || [ "$what" = memory ]; then
  echo
  bash bench/memory_curve.sh
fi
