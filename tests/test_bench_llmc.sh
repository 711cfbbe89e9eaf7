#!/usr/bin/env bash
# tests/test_bench_llmc.sh - what bench/run.sh gpt-cuda-llmc does without a
# GPU (in `make test`):
# - build/llmc_files writes llm.c's formats: the checkpoint's header (magic
#   20240326, version 5, T, 50257, L, NH, C, 50304) and its size (header
#   and every parameter of llm.c's layout in bfloat16, summed here from the
#   layout), layer norm weights 1 and biases 0 where the layout puts them;
#   the token file's header (20240520, 1, N) and N tokens below 50257;
#   bad arguments exit 1;
# - the script's options: a bad value, an unknown option, a width that is
#   not a multiple of the heads, too few steps exit 2 with a message;
# - without LLMC_DIR or LLMC_BIN it says how to give llm.c; with a program
#   that is not there, that it is not; without a GPU (or without the CUDA
#   trainer), that the benchmark is skipped and why, exit 0;
# - its arithmetic, on stand-in programs that print step lines in each
#   trainer's format: tokens/s from the median of the steps after the
#   first 5, FLOPs per token and MFU as computed here by hand.
set -u
cd "$(dirname "$0")/.." || exit 2
build=${TEST_BUILD:-build}
tmp=${TEST_TMPDIR:-$build/tmp}/bench_llmc
files="$build/llmc_files"
passed=0 failed=0
ok()   { echo "ok   test_bench_llmc: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_bench_llmc: $1"; failed=$((failed + 1)); }
check() { if [ "$1" -eq 0 ]; then ok "$2"; else fail "$2: $3"; fi; }
has() { grep -qF -- "$2" <<<"$1"; }
rm -rf "$tmp"
mkdir -p "$tmp"
if [ ! -x "$files" ]; then fail "$files was not built"; echo "# test_bench_llmc: $passed passed, $failed failed, 0 skipped"; exit 1; fi

# ---- the files ----
"$files" model "$tmp/m.bin" 2 64 4 32
check $? "llmc_files model: exit 0" "failed"
/usr/bin/python3 - "$tmp/m.bin" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
L, C, NH, T, Vp = 2, 64, 4, 32, 50304
h = struct.unpack("<256i", d[:1024])
assert h[:8] == (20240326, 5, T, 50257, L, NH, C, Vp), h[:8]
assert all(x == 0 for x in h[8:]), "header not zero past 8"
sizes = [Vp * C, T * C, L * C, L * C, L * 3 * C * C, L * 3 * C, L * C * C, L * C, L * C, L * C, L * 4 * C * C, L * 4 * C,
         L * C * 4 * C, L * C, C, C]
assert len(d) == 1024 + 2 * sum(sizes), (len(d), 1024 + 2 * sum(sizes))
def bf(i):
    u = struct.unpack_from("<H", d, 1024 + 2 * i)[0]
    return struct.unpack("<f", struct.pack("<I", u << 16))[0]
off = [sum(sizes[:k]) for k in range(len(sizes))]
for k, want in ((2, 1.0), (3, 0.0), (5, 0.0), (7, 0.0), (8, 1.0), (9, 0.0), (11, 0.0), (13, 0.0), (14, 1.0), (15, 0.0)):
    vals = {bf(off[k] + i) for i in range(sizes[k])}
    assert vals == {want}, (k, sorted(vals)[:4])
for k in (0, 1, 4, 6, 10, 12):
    vals = [bf(off[k] + i) for i in range(min(sizes[k], 4096))]
    assert max(abs(v) for v in vals) <= 0.0351 and len(set(vals)) > 100, k
PY
check $? "the checkpoint: llm.c's header, size, layer norms 1 and biases 0 in its layout, weights within +-0.035" "wrong"
"$files" tokens "$tmp/t.bin" 1000
/usr/bin/python3 - "$tmp/t.bin" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
h = struct.unpack("<256i", d[:1024])
assert h[:3] == (20240520, 1, 1000) and all(x == 0 for x in h[3:]), h[:3]
assert len(d) == 1024 + 2 * 1000
t = struct.unpack("<1000H", d[1024:])
assert max(t) < 50257 and len(set(t)) > 900
PY
check $? "the token file: llm.c's header, 1000 tokens below 50257" "wrong"
"$files" model "$tmp/x.bin" 2 65 4 32 2>/dev/null
r1=$?
"$files" tokens "$tmp/x.bin" 0 2>/dev/null
r2=$?
"$files" 2>/dev/null
r3=$?
check $(( (r1 == 1 && r2 == 1 && r3 == 1) ? 0 : 1 )) "llmc_files: heads that do not divide the width, zero tokens, no arguments: exit 1" "$r1 $r2 $r3"

# ---- the script's options ----
run() { env BENCH_NO_BUILD=1 BUILD="$build" "$@" bench/run.sh gpt-cuda-llmc "${args[@]}" 2>&1; }
for bad in "--layers x" "--embd 100 --heads 3" "--bogus 1" "--steps 5" "--batch"; do
    read -r -a args <<<"$bad"
    out=$(run LLMC_BIN= LLMC_DIR=)
    rc=$?
    check $(( rc == 2 ? 0 : 1 )) "gpt-cuda-llmc $bad: exit 2 ($(tail -n 1 <<<"$out"))" "exit $rc"
done
args=(--layers 2 --embd 64 --heads 4 --seq 32 --batch 2 --steps 8)
out=$(run LLMC_BIN= LLMC_DIR=)
rc=$?
has "$out" "llm.c skipped: set LLMC_DIR"
check $(( rc == 0 && $? == 0 ? 0 : 1 )) "without LLMC_DIR: says how to give llm.c, exit 0" "exit $rc: $out"
out=$(run LLMC_BIN= LLMC_DIR="$tmp/nowhere")
has "$out" "$tmp/nowhere/train_gpt2cu is not an executable program"
check $? "LLMC_DIR without train_gpt2cu: says so" "$out"
if has "$out" "side-by-side benchmark skipped: no GPU to run on" || has "$out" "side-by-side benchmark skipped: $build/train_gpt_cuda was not built"; then
    ok "without a GPU or the CUDA trainer: skipped, saying why"
else fail "without a GPU or the CUDA trainer: $out"; fi

# ---- the arithmetic, on stand-ins ----
fake=$tmp/fake
mkdir -p "$fake"
cp "$files" "$fake/llmc_files"
cat >"$fake/train_gpt_cuda" <<'SH'
#!/bin/sh
echo "model: 2 layers, width 64, 4 heads, context 32, vocabulary 65: 100000 parameters"
i=1
for ms in 11 12 13 14 15 18 16 20 17; do
    printf 'step %4d  loss 4.0000  lr 3.00e-04  step %7.2f ms (predicted    1.00)  exposed comm   0.00 ms (predicted   0.00)\n' $i $ms
    i=$((i + 1))
done
SH
cat >"$fake/llmc" <<'SH'
#!/bin/sh
[ -s model_L2_C64_H4_T32.bin ] && [ -s tokens.bin ] || { echo "no inputs" >&2; exit 1; }
i=1
for ms in 30 29 28 27 26 10 12 11 13; do
    printf 'step %4d/9 | loss 10.9 (+0.00z)| norm 1.2 (+0.00z)| lr 1.00e-04 | %d.00 ms | 40.1%% bf16 MFU | 171234 tok/s\n' $i $ms
    i=$((i + 1))
done
SH
chmod +x "$fake/train_gpt_cuda" "$fake/llmc"
args=(--layers 2 --embd 64 --heads 4 --seq 32 --batch 2 --steps 9)
out=$(env BENCH_NO_BUILD=1 BUILD="$fake" PEAK_TFLOPS=0.001 LLMC_BIN="$fake/llmc" bench/run.sh gpt-cuda-llmc "${args[@]}" 2>&1)
# ours: steps 6-9 take 18 16 20 17 ms, median 17.5 ms: 64 tokens / 0.0175 s = 3657 tokens/s;
# FLOPs per token 6 (12 2 64^2 + 65 64) + 12 2 64 32 = 663936; MFU over a peak of 1e9 FLOP/s:
# 3657 x 663936 / 1e9 = 242.8%
# llm.c: 10 12 11 13 ms, median 11.5 ms: 5565 tokens/s; 6 (98304 + 50304 64) + 49152 = 19955712;
# 5565 x 19955712 / 1e9 = 11105.4%
has "$out" "| train_gpt_cuda (bf16) | 2 x 64, 4 heads, T 32, batch 2 | 65 | 3657 | 663936 | 242.8% |"
check $? "our row: tokens/s from the median of steps 6-9, FLOPs per token, MFU" "$out"
has "$out" "| llm.c train_gpt2cu (bf16) | 2 x 64, 4 heads, T 32, batch 2 | 50304 | 5565 | 19955712 | 11105.4% |"
check $? "llm.c's row, from its own step lines and vocabulary (its inputs generated first)" "$out"

echo "# test_bench_llmc: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
