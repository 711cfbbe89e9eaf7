#!/usr/bin/env bash
# tests/test_gpt_cuda.sh - the example GPT trainer on GPUs
# (build/train_gpt_cuda, examples/gpt/train_gpt.cu) beside the CPU trainer
# (build/train_gpt).
# In `make test` (no GPU needed):
# - the CUDA trainer was built (nvcc, -Werror) with device code for sm_80
#   and sm_90 (ptxas's command lines kept in the binary say so);
# - the graph it builds is the CPU trainer's, op for op and region for
#   region: the fingerprints (--graph-fingerprint: names, streams, kinds,
#   collectives, every region's buffer, offset, bytes and rows) are equal
#   for several models and TP x DP layouts (with ZeRO-1/2/3 and SP), in
#   float32 and in bfloat16,
#   and bfloat16's differ from float32's;
# - without a GPU it fails cleanly (exit 1, the CUDA error named); the CPU
#   trainer refuses the CUDA trainer's options (--dtype bf16,
#   --cuda-graphs on) with exit 2 and a message.
# With GPT_CUDA_GPU=1 (`make test-gpu`), where a GPU is present, TP1 x DP1:
# - from the same initial checkpoint and batch, the first step's loss and
#   gradient match the CPU trainer's: relative L2 error of the whole
#   gradient at most 1e-4 and loss within 1e-5 relative in float32; 3e-2
#   and 1e-2 in bfloat16;
# - 50 training steps: every loss within 1e-3 relative of the CPU
#   trainer's (float32; 5e-2 in bfloat16), and the last below the first;
# - the library's order and program order give bit-identical losses, with
#   decomposition and fusion on;
# - CUDA-graph replay (--cuda-graphs on) gives the losses of plain launches,
#   bit for bit, and the summary says the trained step was replayed (also
#   with the side-by-side comparison's two executors on one backend).
# With GPU_PRESENT=1 (set by `make test-gpu` once its probe found a GPU and a
# driver new enough) a first run that fails is a failure, not a skip.
set -u
build=${TEST_BUILD:-build}
tmp=${TEST_TMPDIR:-$build/tmp}/gpt_cuda
cpu="$build/train_gpt"
gpu="$build/train_gpt_cuda"
py=/usr/bin/python3
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_gpt_cuda: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_gpt_cuda: $1"; failed=$((failed + 1)); }
skip() {
    if [ "${CI:-}" = true ] && [ "${2:-}" != gpu ]; then fail "$1 (a skip counts as a failure with CI=true)"
    else echo "skip test_gpt_cuda: $1"; skipped=$((skipped + 1)); fi
}
check() { if [ "$1" -eq 0 ]; then ok "$2"; else fail "$2: $3"; fi; }
finish() {
    echo "# test_gpt_cuda: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ]
    exit
}
mkdir -p "$tmp"

if [ ! -x "$cpu" ]; then fail "$cpu was not built"; finish; fi
if [ ! -x "$gpu" ]; then
    why=$(cat "$gpu.skip" 2>/dev/null)
    skip "$gpu is not built: ${why:-see the CUDA trainer line of make deps}"
    finish
fi

small=(--layers 2 --embd 32 --heads 4 --seq 16 --batch 8)
fingerprint() {   # "train eval" of one trainer
    local prog=$1; shift
    timeout 120 "$prog" "${small[@]}" --graph-fingerprint "$@" 2>&1 |
        sed -n 's/^graph fingerprint: \([0-9a-f]\{16\}\) (training step), \([0-9a-f]\{16\}\) (evaluation)$/\1 \2/p'
}

if [ "${GPT_CUDA_GPU:-0}" != 1 ]; then
    # ---- built for both architectures, warnings as errors ----
    for sm in sm_80 sm_90; do
        strings "$gpu" | grep -q -- "-arch $sm .*-Werror"
        check $? "device code for $sm, compiled with -Werror" "no ptxas command line for $sm with -Werror in $gpu"
    done

    # ---- the same graph on both trainers ----
    f32_22=""
    while IFS= read -r layout; do
        # shellcheck disable=SC2086
        a=$(fingerprint "$cpu" $layout); b=$(fingerprint "$gpu" $layout)
        [ -n "$a" ] && [ "$a" = "$b" ]
        check $? "the CUDA trainer's graphs are the CPU trainer's ($layout: $a)" "CPU '$a' vs CUDA '$b'"
        [ "$layout" = "--tp 2 --dp 2" ] && f32_22=$a
    done <<'EOF'
--tp 1 --dp 1
--tp 2 --dp 2
--tp 4 --dp 1 --layers 3
--tp 1 --dp 2 --embd 48 --heads 3
--tp 2 --dp 2 --dtype bf16
--tp 2 --dp 1 --seq 8
--tp 2 --dp 2 --zero 1
--tp 1 --dp 2 --zero 2
--tp 2 --dp 2 --zero 3 --dtype bf16
--tp 2 --dp 2 --sp
--tp 2 --dp 2 --sp --zero 3
EOF
    bf=$(fingerprint "$gpu" --tp 2 --dp 2 --dtype bf16)
    [ -n "$bf" ] && [ -n "$f32_22" ] && [ "$bf" != "$f32_22" ]
    check $? "bfloat16's graphs differ from float32's (the partial sums and gradients are half the bytes)" "'$bf' vs '$f32_22'"

    # ---- clean failures ----
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
        skip "the failure without a GPU (this machine has one)" gpu
    else
        out=$(timeout 60 "$gpu" "${small[@]}" --steps 1 2>&1); rc=$?
        [ "$rc" -eq 1 ] && grep -q "no usable CUDA device: .*(cuda" <<<"$out"
        check $? "without a GPU: exit 1 naming the CUDA error" "exit $rc: $out"
    fi
    out=$("$cpu" "${small[@]}" --steps 1 --dtype bf16 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "dtype bf16 needs the CUDA trainer" <<<"$out"
    check $? "the CPU trainer refuses --dtype bf16 (exit 2)" "exit $rc: $out"
    out=$("$cpu" "${small[@]}" --steps 1 --cuda-graphs on 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "cuda-graphs needs the CUDA trainer" <<<"$out"
    check $? "the CPU trainer refuses --cuda-graphs on (exit 2)" "exit $rc: $out"
    out=$("$gpu" --dtype f16 2>&1); rc=$?
    [ "$rc" -eq 2 ] && grep -q "dtype takes f32 or bf16" <<<"$out"
    check $? "a bad --dtype: exit 2 with a message" "exit $rc: $out"
    out=$("$gpu" --help 2>&1); rc=$?
    [ "$rc" -eq 0 ] && grep -q -- "--dtype f32|bf16" <<<"$out" && grep -q -- "--cuda-graphs" <<<"$out"
    check $? "the CUDA trainer's --help lists --dtype and --cuda-graphs" "exit $rc"
    finish
fi

# ---- on a GPU (make test-gpu) ----
# Whether a GPU is there was decided once, by `make test-gpu`'s probe
# (GPU_PRESENT=1); with one, a first run that fails (a crash, a CUDA, cuBLAS
# or NCCL error, a timeout) is a failure, never a skip.
timeout 60 "$gpu" "${small[@]}" --steps 0 --eval 0 --sample 0 --compare 0 --profile 0 >"$tmp/probe.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
    why="exit $rc"; [ "$rc" -eq 124 ] && why="timed out after 60 s"; [ "$rc" -gt 128 ] && [ "$rc" -ne 124 ] && why="killed by signal $((rc - 128))"
    if [ "${GPU_PRESENT:-0}" = 1 ]; then fail "the CUDA trainer's first run on the GPU ($why): $(tail -n 3 "$tmp/probe.log")"
    else skip "no GPU found by make test-gpu's probe (GPU_PRESENT is not 1), and the first run failed ($why): $(tail -n 1 "$tmp/probe.log")" gpu; fi
    finish
fi
if [ ! -x "$py" ]; then fail "$py is needed to compare the trainers' files"; finish; fi
run=(--steps 1 --eval 0 --sample 0 --compare 0 --profile 0 --order program --no-link)
"$cpu" "${small[@]}" "${run[@]}" --save-init "$tmp/init.ckpt" --dump-grads "$tmp/cpu.grads" >"$tmp/cpu1.log" 2>&1
check $? "the CPU trainer's first step" "$(tail -n 3 "$tmp/cpu1.log")"

grads_err() {   # relative L2 error of the gradient, relative loss error
    "$py" - "$1" "$2" <<'PY'
import struct, sys, math
def read(p):
    b = open(p, 'rb').read()
    assert b[:8] == b'CCGPTGR1'
    loss, n = struct.unpack('<dQ', b[8:24])
    return loss, struct.unpack('<%df' % n, b[24:24 + 4 * n])
la, a = read(sys.argv[1]); lb, b = read(sys.argv[2])
num = sum((x - y) ** 2 for x, y in zip(a, b)); den = sum(x * x for x in a)
print(math.sqrt(num / den) if den else float('inf'), abs(la - lb) / abs(la))
PY
}
for dt in f32 bf16; do
    gtol=1e-4; ltol=1e-5; stol=1e-3
    [ "$dt" = bf16 ] && { gtol=3e-2; ltol=1e-2; stol=5e-2; }
    "$gpu" "${run[@]}" --load "$tmp/init.ckpt" --batch 8 --dtype "$dt" --dump-grads "$tmp/gpu_$dt.grads" >"$tmp/gpu1_$dt.log" 2>&1
    if [ $? -ne 0 ]; then fail "$dt: the CUDA trainer's first step: $(tail -n 3 "$tmp/gpu1_$dt.log")"; continue; fi
    read -r gerr lerr <<<"$(grads_err "$tmp/cpu.grads" "$tmp/gpu_$dt.grads")"
    awk -v g="$gerr" -v l="$lerr" -v gt="$gtol" -v lt="$ltol" 'BEGIN { exit !(g <= gt && l <= lt) }'
    check $? "$dt: first step from one checkpoint: gradient relative L2 error $gerr (<= $gtol), loss $lerr (<= $ltol)" "too far"

    long=(--steps 50 --eval 0 --sample 0 --compare 0 --profile 0 --order program --no-link --load "$tmp/init.ckpt" --batch 8)
    "$cpu" "${long[@]}" --losses "$tmp/cpu50.txt" >/dev/null 2>&1
    "$gpu" "${long[@]}" --dtype "$dt" --losses "$tmp/gpu50_$dt.txt" >"$tmp/gpu50_$dt.log" 2>&1
    paste "$tmp/cpu50.txt" "$tmp/gpu50_$dt.txt" | awk -v t="$stol" '
        { n++; d = $1 - $2; if (d < 0) d = -d; if (d / $1 > worst) worst = d / $1; if (NR == 1) first = $2; last = $2 }
        END { printf "%g\n", worst; exit !(n == 50 && worst <= t && last < first) }' >"$tmp/worst_$dt.txt"
    check $? "$dt: 50 steps: losses within $stol of the CPU trainer's (worst $(cat "$tmp/worst_$dt.txt")), falling" \
        "$(tail -n 2 "$tmp/gpu50_$dt.log")"
done

out=$("$gpu" "${small[@]}" --steps 20 --eval 0 --sample 0 --compare 0 --order both 2>&1)
grep -q "identical in program order and the library's order: yes" <<<"$out"
check $? "the library's order and program order give bit-identical losses (20 steps)" "$(tail -n 5 <<<"$out")"

g=(--steps 20 --eval 0 --sample 0 --compare 0 --profile 0)
"$gpu" "${small[@]}" "${g[@]}" --cuda-graphs off --losses "$tmp/plain.txt" >/dev/null 2>&1 &&
    "$gpu" "${small[@]}" "${g[@]}" --cuda-graphs on --losses "$tmp/graphs.txt" >"$tmp/graphs.log" 2>&1 &&
    cmp -s "$tmp/plain.txt" "$tmp/graphs.txt"
check $? "CUDA-graph replay gives the losses of plain launches, bit for bit (20 steps)" "$(tail -n 3 "$tmp/graphs.log")"
# A capture that broke would fall back to plain launches and give the same
# losses: the summary must say that the trained step replayed its graph.
grep -Eq "^cuda graphs: the training step replayed its graph in ([1-9][0-9]*) of 20 steps" "$tmp/graphs.log"
check $? "with --cuda-graphs on the training step was replayed as a CUDA graph" "$(grep "^cuda graphs" "$tmp/graphs.log" || tail -n 3 "$tmp/graphs.log")"
# The side-by-side comparison alternates two executors on one backend: each
# keeps its own graph.
"$gpu" "${small[@]}" --steps 6 --eval 0 --sample 0 --compare 2 --order both --profile 0 --cuda-graphs on >"$tmp/graphs2.log" 2>&1 &&
    grep -Eq "^cuda graphs: the training step replayed its graph in [1-9][0-9]* of" "$tmp/graphs2.log"
check $? "with --order both and --compare 2 the trained step is still replayed" "$(grep "^cuda graphs" "$tmp/graphs2.log" || tail -n 3 "$tmp/graphs2.log")"
finish
