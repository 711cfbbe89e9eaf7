#!/usr/bin/env bash
# tests/analyze/run.sh BUILD - make analyze: clang's static analyzer
# (scan-build) and cppcheck over the headers (through the translation units
# that compile their implementations), the C examples and the tools (not
# bench/ nor the tests). CUDA's .cu files are left out: Debian's clang
# cannot parse CUDA 13's headers; concerto_cuda.h and concerto_nccl.h are
# analyzed as C through tests/compile_cuda.c (its own findings not
# counted), concerto_mpi.h through the MPI trainer (train_gpt.c -DGPT_MPI)
# with mpicc's include path. A finding fails the run:
# each is fixed, or suppressed where the tool is wrong, with the reason
# (cppcheck: tests/analyze/cppcheck.supp). Prints one line a tool and the
# closing line "N passed, N failed" (also in BUILD/analyze/test-summary.txt).
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${1:-build}
out="$build/analyze"
rm -rf "$out" && mkdir -p "$out/scan"
scan=$(command -v scan-build-14 || command -v scan-build)
clang=$(command -v clang-14 || command -v clang)
passed=0 failed=0
if [ -z "$scan" ] || [ -z "$clang" ] || ! command -v cppcheck >/dev/null; then
    why="needs scan-build, clang and cppcheck (apt-get install clang-14 clang-tools-14 cppcheck)"
    if [ "${CI:-}" = true ]; then echo "FAIL analyze: $why"; echo "0 passed, 1 failed" | tee "$out/test-summary.txt"; exit 1; fi
    echo "skip analyze: $why"; echo "0 passed, 0 failed, 1 skipped" | tee "$out/test-summary.txt"; exit 0
fi
lp=""
printf '#include <lpsolve/lp_lib.h>\nint main(void){return 0;}\n' | "$clang" -x c - -o /dev/null -llpsolve55 -lcolamd -lm -ldl 2>/dev/null && lp=-DCONCERTO_USE_LPSOLVE
c99=(-std=c99 -pthread -D_POSIX_C_SOURCE=200809L $lp)
units=()   # "flags|file|scope|cppcheck's": findings count in files matching scope (a grep -E pattern;
           # empty: all); cppcheck's: defines for cppcheck alone
for f in tests/concerto_impl.c examples/hello_step.c examples/overlap.c examples/schedule_step.c examples/gpt/train_gpt.c \
         tools/psplib.c tools/plan.c; do
    [ -f "$f" ] && units+=("${c99[*]}|$f|")
done
cuda_inc=${CUDA_INCLUDE:-/usr/local/cuda/include}
if [ -f "$cuda_inc/cuda_runtime_api.h" ] && [ -f "$cuda_inc/nccl.h" ]; then
    # the test program only carries the headers in: its own findings are not counted
    units+=("-std=c11 -pthread -D_POSIX_C_SOURCE=200809L -I$cuda_inc|tests/compile_cuda.c|concerto[a-z_]*\\.h|-DNCCL_VERSION_CODE=21800")
else echo "note: concerto_cuda.h and concerto_nccl.h not analyzed: no CUDA and NCCL headers in $cuda_inc"; fi
if command -v mpicc >/dev/null; then
    units+=("${c99[*]} -DGPT_MPI $(mpicc --showme:compile 2>/dev/null)|examples/gpt/train_gpt.c||-DMPI_VERSION=3")
else echo "note: concerto_mpi.h not analyzed: no mpicc (apt-get install libopenmpi-dev)"; fi

# clang's static analyzer, every unit; a finding anywhere fails
n_scan=0
for u in "${units[@]}"; do
    IFS='|' read -r flags file scope _ <<<"$u"
    # shellcheck disable=SC2086
    "$scan" -o "$out/scan" "$clang" $flags -c "$file" -o /dev/null >"$out/scan-one.log" 2>&1
    cat "$out/scan-one.log" >>"$out/scan.log"
    grep -E "warning:|error:" "$out/scan-one.log" | grep -E "^[^:]*${scope}:" >>"$out/scan-all.txt"
done
touch "$out/scan-all.txt"
sort -u "$out/scan-all.txt" >"$out/scan-findings.txt"
n_scan=$(wc -l <"$out/scan-findings.txt")
if [ "$n_scan" -eq 0 ]; then echo "ok   analyze: scan-build (clang $("$clang" -dumpversion)): ${#units[@]} units, no finding"; passed=$((passed + 1))
else echo "FAIL analyze: scan-build: $n_scan finding(s) (reports under $out/scan):"; cat "$out/scan-findings.txt"; failed=$((failed + 1)); fi

# cppcheck: warnings, portability, performance (its style checks are
# matters of taste here, not defects)
: >"$out/cppcheck.txt"
for u in "${units[@]}"; do
    IFS='|' read -r flags file scope own <<<"$u"
    # the system's, CUDA's and MPI's headers are not ours to check (cppcheck cannot read CUDA's): the
    # versions the headers require are given as -D (clang finds them in the headers themselves)
    defs="$(echo "$flags" | tr ' ' '\n' | grep -E '^-D' | tr '\n' ' ') $own"
    # shellcheck disable=SC2086
    cppcheck --enable=warning,portability,performance --inline-suppr --suppressions-list=tests/analyze/cppcheck.supp -q \
        --std="$(echo "$flags" | sed -n 's/.*-std=\(c[0-9]*\).*/\1/p')" -DCONCERTO_IMPLEMENTATION $defs "$file" >>"$out/cppcheck.txt" 2>&1
done
grep -E "(error|warning|portability|performance|style): " "$out/cppcheck.txt" | grep -v "^tests/" | sort -u >"$out/cppcheck-findings.txt"
n_cpp=$(wc -l <"$out/cppcheck-findings.txt")
if [ "$n_cpp" -eq 0 ]; then echo "ok   analyze: cppcheck $(cppcheck --version | sed 's/Cppcheck //'): ${#units[@]} units, no finding"; passed=$((passed + 1))
else echo "FAIL analyze: cppcheck: $n_cpp finding(s):"; cat "$out/cppcheck-findings.txt"; failed=$((failed + 1)); fi
echo "$passed passed, $failed failed" | tee "$out/test-summary.txt"
[ "$failed" -eq 0 ]
