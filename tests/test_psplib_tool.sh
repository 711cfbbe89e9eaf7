#!/usr/bin/env bash
# tests/test_psplib_tool.sh - the command-line solver build/psplib on the
# J30 sample j301_1 (optimum 43). Prints harness-style lines and the summary.
set -u
build=${TEST_BUILD:-build}
data=${CONCERTO_DATA:-../shared/data}
tool="$build/psplib"
sample="$data/psplib/samples/j301_1.sm"
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_psplib_tool: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_psplib_tool: $1"; failed=$((failed + 1)); }
skip() {
    if [ "${CI:-}" = true ]; then fail "$1 (a skip counts as a failure with CI=true)"
    else echo "skip test_psplib_tool: $1"; skipped=$((skipped + 1)); fi
}
summary() { echo "# test_psplib_tool: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }

if [ ! -f tools/psplib.c ]; then skip "tools/psplib.c is not written yet"; summary; fi
if [ ! -x "$tool" ]; then fail "$tool was not built from tools/psplib.c"; summary; fi
if [ ! -f "$sample" ]; then skip "$sample not found (the repository is expected beside shared/)"; summary; fi

out=$(timeout 120 "$tool" "$sample" 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then ok "$tool $sample exits 0"; else fail "$tool $sample exits $rc: $(echo "$out" | tail -n 3)"; fi
if echo "$out" | grep -qw 43; then ok "its output names the optimum 43"
else fail "its output does not contain the optimum 43: $(echo "$out" | tail -n 3)"; fi
out=$(timeout 120 "$tool" --budget 50 --exact 100 "$sample" 2>&1); rc=$?
if [ "$rc" -eq 0 ]; then ok "--budget 50 --exact 100 exits 0"; else fail "--budget 50 --exact 100 exits $rc: $(echo "$out" | tail -n 3)"; fi
out=$(timeout 120 "$tool" --threads 2 --restarts 20 "$sample" 2>&1); rc=$?
if [ "$rc" -eq 0 ] && echo "$out" | grep -q "makespan=43 "; then ok "--threads 2 --restarts 20 exits 0 at the optimum 43"
else fail "--threads 2 --restarts 20 exits $rc: $(echo "$out" | tail -n 3)"; fi
out=$(timeout 60 "$tool" --threads 0 "$sample" 2>&1); rc=$?
if [ "$rc" -eq 2 ] && echo "$out" | grep -q -- "--threads N"; then ok "--threads 0 is refused with the usage (exit 2)"
else fail "--threads 0 exits $rc: $(echo "$out" | tail -n 3)"; fi
out=$(timeout 60 "$tool" "$build/tmp/no_such_file.sm" 2>&1); rc=$?
if [ "$rc" -ne 0 ]; then ok "a missing file gives a non-zero exit ($rc)"; else fail "a missing file exits 0"; fi
if echo "$out" | grep -q "no_such_file.sm"; then ok "and the message names the file"
else fail "the message for a missing file does not name it: $out"; fi
summary
