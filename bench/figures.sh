#!/usr/bin/env bash
# bench/figures.sh OUT_DIR - the deterministic figures of this checkout, with
# every measured time removed, so that two commits can be compared with
# `diff -r A B`: the psplib part of bench/run.sh without its times
# (makespans, bounds, proofs and search counts on PSPLIB J30 and J60, naive
# and default; J60 also by odd-even windows on a sample), the scale part's
# makespan ratios (946 to 954,556 ops, and its sweeps of rounds and block
# sizes), the planner's simulated step times on four layouts, and the
# example trainer's losses in four layouts and both orders (durations from
# its model, --profile 0, so its predictions are deterministic too).
# About 10 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: bench/figures.sh OUT_DIR}
BUILD=${BUILD:-build}
DATA=../shared/data/psplib
mkdir -p "$out" "$BUILD/psplib-data"
make -s "$BUILD/psplib" "$BUILD/bench_scale" "$BUILD/plan" "$BUILD/train_gpt"
[ -d "$BUILD/psplib-data/j30" ] || tar xzf "$DATA/j30.tar.gz" -C "$BUILD/psplib-data"
[ -d "$BUILD/psplib-data/j60" ] || tar xzf "$DATA/j60.tar.gz" -C "$BUILD/psplib-data"
untimed() {  # drops the fields and columns that are measured times
  sed -E 's/ (ms|build_s|validate_s|first_schedule_s|oddeven_s|total_ms|median_ms|max_ms|window_ms_max|peak_mib)=[0-9.e+-]+//g
          s/step +[0-9.]+ ms \(predicted/step (predicted/; s/exposed comm +[0-9.]+ ms \(predicted/exposed comm (predicted/'
}
j30=$(ls "$BUILD"/psplib-data/j30/*.sm)
j60=$(ls "$BUILD"/psplib-data/j60/*.sm)
# shellcheck disable=SC2086
"$BUILD/psplib" $j30 | untimed > "$out/j30.txt"
# shellcheck disable=SC2086
"$BUILD/psplib" --method list --rule lft --sgs serial --improve 0 $j30 | untimed > "$out/j30-naive.txt"
# shellcheck disable=SC2086
"$BUILD/psplib" $j60 | untimed > "$out/j60.txt"
# shellcheck disable=SC2086
"$BUILD/psplib" --method list --rule lft --sgs serial --improve 0 $j60 | untimed > "$out/j60-naive.txt"
# shellcheck disable=SC2086
"$BUILD/psplib" --method oddeven $(echo "$j60" | awk 'NR % 16 == 3') | untimed > "$out/j60-oddeven.txt"
{ for ratio in 1.0 2.0; do for layers in 45 455 4545 45455; do "$BUILD/bench_scale" $layers $ratio | untimed; done; done
  for layers in 45 455; do "$BUILD/bench_scale" --sweep $layers 2.0 | awk '{ print $1, $2, $3 }'; done; } > "$out/scale.txt"
for cfg in "--model gpt-1.3b --tp 8 --dp 4 --nodes 4" \
           "--model gpt-13b --tp 8 --dp 4 --pp 4 --micro-batches 8 --nodes 16" \
           "--model gpt-1.3b --tp 4 --dp 8 --zero 3 --nodes 4" \
           "--model gpt-1.3b --tp 8 --sp --dp 2 --cluster h100 --nodes 2"; do
  echo "== plan $cfg"
  # shellcheck disable=SC2086
  "$BUILD/plan" $cfg --quiet | sed -E 's/^([a-zA-Z0-9+. -]+ +[0-9.]+ +[0-9.]+x +[0-9.]+) +[0-9.]+ /\1 /; /planned in/d'
done > "$out/plan.txt"
for layout in "--tp 1 --dp 1" "--tp 2 --dp 2" "--dp 4" "--tp 4"; do
  for order in program concerto; do
    echo "== train_gpt $layout --order $order"
    # shellcheck disable=SC2086
    "$BUILD/train_gpt" $layout --order $order --steps 20 --profile 0 --profile-steps 0 --profile-warmup 0 \
      --compare 0 --eval 2 --sample 20 | grep -E 'loss' | untimed
  done
done > "$out/losses.txt"
echo "figures in $out"
