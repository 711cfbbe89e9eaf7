#!/usr/bin/env bash
# bench/memory_curve.sh - memory as a hard constraint in the planner
# (build/plan, tools/plan.c); every step time is simulated from the cluster
# cost model, every peak is cc_memory_check's sweep over a timeline.
#   1. the curve: S's step time against a rank's memory cap on a ZeRO-3 GPT
#      step (build/plan --memory-curve: caps from program order's peak up
#      to S's uncapped peak, solved tightest first, each from the schedule
#      found under the tighter cap, then unlimited), beside the fixed
#      prefetch policies' step times and peaks (DeepSpeed ZeRO-3's, a
#      prefetch depth of one layer, and the other peers);
#   2. the solve-time cost of the memory resource on the planner's largest
#      steps: S solved from nothing without a cap and under the cap halfway
#      between program order's peak and S's uncapped one.
# About a minute on 2 cores. MEMORY_CURVE_CAPS changes the number of caps.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
caps=${MEMORY_CURVE_CAPS:-8}
make -s "$BUILD/plan"
curve="--model gpt-13b --tp 8 --dp 8 --zero 3 --micro-batch 2 --micro-batches 4 --nodes 8"
echo "== the curve: build/plan $curve --memory-curve $caps"
# shellcheck disable=SC2086
"$BUILD/plan" $curve --memory-curve "$caps" --quiet
echo
echo "== the solve-time cost of the memory resource (S solved from nothing; seconds on this machine)"
printf '%-88s %7s %12s %12s %12s %12s %12s\n' "step" "ops" "free s" "capped s" "free ms" "capped ms" "cap GiB"
for cfg in "--model gpt-13b --tp 8 --dp 8 --zero 3 --micro-batch 2 --micro-batches 4 --nodes 8" \
           "--model gpt-13b --tp 8 --dp 4 --pp 4 --micro-batches 8 --nodes 16" \
           "--model gpt-175b --tp 8 --dp 4 --pp 8 --micro-batches 16 --zero 1 --nodes 32" \
           "--model gpt-175b --tp 8 --dp 16 --pp 8 --micro-batches 32 --nodes 128"; do
  # shellcheck disable=SC2086
  "$BUILD/plan" $cfg --memory-curve 2 --quiet --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
u, c = j["uncapped"], j["capped"]
print("%-88s %7d %12.2f %12.2f %12.3f %12.3f %12.3f" % (sys.argv[1], j["n_ops"], u["solve_s"], c["solve_s"], u["s_us"] / 1e3,
      c["s_us"] / 1e3, c["memory_cap_bytes"] / 2**30))' "$cfg"
done
