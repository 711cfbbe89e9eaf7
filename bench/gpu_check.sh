#!/usr/bin/env bash
# bench/gpu_check.sh build|run - the prepared check of the GPU path, for a
# machine lent with a GPU for a few minutes and no network or compiler.
#   build (make gpu-check-build, here): every program the check runs,
#     built in $BUILD (default build) and copied, in $BUILD's layout, into
#     $BUILD/gpu-check (a few MiB): the GPU tests, both trainers,
#     bench_gpu, llmc_files, and llm.c's train_gpt2cu: LLMC_BIN names a
#     built one, or LLMC_DIR a copy of llm.c (outside this repository,
#     never fetched by this script) where it is built without cuDNN for
#     sm_90. Carry
#     $BUILD/gpu-check to the GPU machine with the working tree.
#   run (make gpu-check, there): compiles nothing. In turn, each under a
#     time limit so that the whole ends within 5 minutes: the programs of
#     make test-gpu, one at a time (tests/run.sh, as make test-gpu runs
#     them); bench/run.sh gpu; bench/run.sh gpt-cuda-llmc (GPT-2 small, 20
#     steps), all from $BUILD/gpu-check. Then a summary to paste into
#     bench/RESULTS.md, also written to $BUILD/gpu-check/out/summary.md.
#     Exit status 1 when a test failed or was skipped, or a part failed or
#     ran out of time.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
BUILD=${BUILD:-build}
pack=$BUILD/gpu-check
progs=(tests/gpu_probe tests/test_gpu train_gpt train_gpt_cuda bench_gpu llmc_files)
case "${1:-}" in
  build)
    make -s "$BUILD/tests/gpu_probe" "$BUILD/tests/test_gpu" "$BUILD/train_gpt" "$BUILD/train_gpt_cuda" "$BUILD/bench_gpu" "$BUILD/llmc_files" || exit 1
    for p in "$BUILD/tests/test_gpu" "$BUILD/train_gpt_cuda" "$BUILD/bench_gpu"; do
      [ -x "$p" ] || { echo "gpu-check-build: $p was not built (make deps says why)"; exit 1; }
    done
    llmc=${LLMC_BIN:-}
    if [ -z "$llmc" ] && [ -n "${LLMC_DIR:-}" ]; then
      # the user's own copy of llm.c, outside this repository: its CUDA
      # trainer built without cuDNN, for sm_90 (H100/H200), on one GPU
      echo "gpu-check-build: building train_gpt2cu in $LLMC_DIR (USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90 NO_MULTI_GPU=1)"
      make -C "$LLMC_DIR" train_gpt2cu USE_CUDNN=0 GPU_COMPUTE_CAPABILITY=90 NO_MULTI_GPU=1 >"$BUILD/llmc_build.log" 2>&1 ||
        { echo "gpu-check-build: building llm.c's train_gpt2cu failed: see $BUILD/llmc_build.log"; exit 1; }
      llmc=$LLMC_DIR/train_gpt2cu
    fi
    rm -rf "$pack"
    mkdir -p "$pack/tests" || exit 1
    for p in "${progs[@]}"; do cp "$BUILD/$p" "$pack/$p" || exit 1; done
    if [ -n "$llmc" ]; then
      [ -x "$llmc" ] || { echo "gpu-check-build: $llmc is not an executable program (build train_gpt2cu in your copy of llm.c first)"; exit 1; }
      mkdir -p "$pack/llmc" && cp "$llmc" "$pack/llmc/train_gpt2cu" || exit 1
      echo "gpu-check-build: llm.c's train_gpt2cu copied to $pack/llmc"
    else
      echo "gpu-check-build: no LLMC_BIN or LLMC_DIR: the side-by-side benchmark will run our trainer alone"
    fi
    echo "gpu-check-build: done ($(du -sh "$pack" | cut -f1)); carry $pack to the GPU machine and run make gpu-check there"
    ;;
  run)
    out=$pack/out
    status=0
    for p in "${progs[@]}"; do
      [ -x "$pack/$p" ] || { echo "gpu-check: $pack/$p is missing: run make gpu-check-build first (where a compiler is)"; exit 1; }
    done
    rm -rf "$out"
    mkdir -p "$out" || exit 1
    part() {  # NAME LIMIT_S COMMAND...: runs it, its output to the screen and $out/NAME.log
      local name=$1 limit=$2 rc
      shift 2
      echo "=== $name (at most $limit s) ==="
      timeout -k 5 "$limit" "$@" 2>&1 | tee "$out/$name.log"
      rc=${PIPESTATUS[0]}
      if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo "gpu-check: $name ran out of time ($limit s)" | tee -a "$out/$name.log"; fi
      return "$rc"
    }
    start=$(date +%s)
    # as make test-gpu: the probe decides once whether a GPU is there; with
    # one, a check that cannot run fails (GPU_PRESENT=1)
    probe=$("$pack/tests/gpu_probe"); echo "$probe" | tee "$out/probe.log"
    case "$probe" in
      "gpu present:"*)
        part test-gpu 150 env TEST_JOBS=1 GPU_PRESENT=1 TEST_BUILD="$pack" GPT_CUDA_GPU=1 tests/run.sh "$pack/gpu" \
          "$pack/tests/test_gpu" tests/test_gpt_cuda.sh || status=1 ;;
      *) { echo "FAIL test-gpu: $probe"; echo "0 passed, 1 failed"; } | tee "$out/test-gpu.log"; status=1 ;;
    esac
    part bench-gpu 60 env BENCH_NO_BUILD=1 BUILD="$pack" bench/run.sh gpu || status=1
    llmc_env=(LLMC_BIN= LLMC_DIR=)
    [ -x "$pack/llmc/train_gpt2cu" ] && llmc_env=(LLMC_BIN="$pack/llmc/train_gpt2cu")
    part side-by-side 90 env BENCH_NO_BUILD=1 BUILD="$pack" "${llmc_env[@]}" bench/run.sh gpt-cuda-llmc --steps 20 || status=1
    tests=$(tail -n 1 "$out/test-gpu.log")
    case "$tests" in *" 0 failed"*) case "$tests" in *skipped*) status=1 ;; esac ;; *) status=1 ;; esac
    {
      echo "### make gpu-check, $(date -u +%Y-%m-%d)"
      echo
      echo "- commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo unknown); $(( $(date +%s) - start )) s in all"
      echo "- make test-gpu's programs: $tests"
      echo "- bench/run.sh gpu:"
      echo
      echo '```'
      grep -v '^===' "$out/bench-gpu.log"
      echo '```'
      echo
      echo "- bench/run.sh gpt-cuda-llmc --steps 20:"
      echo
      grep -E '^\||skipped|^GPU:|^side by side' "$out/side-by-side.log"
    } >"$out/summary.md"
    echo
    echo "=== summary (also in $out/summary.md) ==="
    cat "$out/summary.md"
    exit "$status"
    ;;
  *) echo "usage: bench/gpu_check.sh build|run" >&2; exit 2 ;;
esac
