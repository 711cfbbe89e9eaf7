#!/bin/sh
# tests/skip.sh NAME REASON - what a test that could not be built runs
# instead: one skip line (a failure with CI=true) and its summary line.
# The Makefile writes a two-line program that execs it, e.g. for the CUDA
# compile tests on a machine without CUDA.
name=${1:?usage: tests/skip.sh NAME REASON}
reason=${2:?usage: tests/skip.sh NAME REASON}
if [ "${CI:-}" = true ]; then
    echo "FAIL $name: $reason (a skip counts as a failure with CI=true)"
    echo "# $name: 0 passed, 1 failed, 0 skipped"
    exit 1
fi
echo "skip $name: $reason"
echo "# $name: 0 passed, 0 failed, 1 skipped"
