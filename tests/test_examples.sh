#!/usr/bin/env bash
# tests/test_examples.sh - the examples the README shows run to the end:
# build/hello_step (examples/hello_step.c) exits 0 and prints its two lines.
# Prints harness-style lines and the summary.
set -u
build=${TEST_BUILD:-build}
passed=0 failed=0
ok()   { echo "ok   test_examples: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_examples: $1"; failed=$((failed + 1)); }

prog="$build/hello_step"
if [ ! -x "$prog" ]; then
    fail "$prog was not built from examples/hello_step.c"
elif out=$("$prog" 2>&1); then
    if grep -q '^program order: .*; scheduled: ' <<<"$out" && grep -q 'the weights agree on both' <<<"$out"; then
        ok "hello_step runs a scheduled step on 2 ranks and exits 0"
    else
        fail "hello_step exited 0 without its two lines: $out"
    fi
else
    fail "hello_step exited with status $?: $out"
fi
echo "# test_examples: $passed passed, $failed failed, 0 skipped"
[ "$failed" -eq 0 ]
