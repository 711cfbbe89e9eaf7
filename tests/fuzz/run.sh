#!/usr/bin/env bash
# tests/fuzz/run.sh BUILD SECONDS TARGET... - runs each built fuzz target
# ($BUILD/fuzz/fuzz_NAME) for SECONDS seconds on a working corpus in
# $BUILD/fuzz/NAME/corpus (the committed seeds of tests/fuzz/corpus/NAME
# copied in, beside what earlier runs found: nothing lands in the tree),
# with tests/fuzz/NAME.dict where there is one. Prints one line a target
# (executions, coverage, crashes) and the closing line
#     N passed, N failed
# (a target passes when it ran its time and found nothing), also written to
# $BUILD/fuzz/test-summary.txt. Crash inputs stay in $BUILD/fuzz/NAME/.
set -u
cd "$(dirname "$0")/../.." || exit 2
build=${1:?usage: tests/fuzz/run.sh BUILD SECONDS TARGET...}
secs=${2:?seconds}
shift 2
passed=0 failed=0
for name in "$@"; do
    bin="$build/fuzz/fuzz_$name"
    dir="$build/fuzz/$name"
    if [ ! -x "$bin" ]; then echo "FAIL fuzz_$name: $bin was not built"; failed=$((failed + 1)); continue; fi
    mkdir -p "$dir/corpus"
    cp -n tests/fuzz/corpus/"$name"/* "$dir/corpus/" 2>/dev/null
    case "$name" in graph) max_len=512 ;; checkpoint) max_len=8192 ;; *) max_len=4096 ;; esac
    dict=()
    [ -f "tests/fuzz/$name.dict" ] && dict=(-dict="tests/fuzz/$name.dict")
    before=$(ls "$dir" | grep -c -E '^(crash|leak|timeout|oom)-')
    TMPDIR="$dir" timeout -k 10 $((secs + 120)) "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 \
        -max_len="$max_len" -print_final_stats=1 -artifact_prefix="$dir/" "${dict[@]}" "$dir/corpus" >"$dir/log.txt" 2>&1
    rc=$?
    after=$(ls "$dir" | grep -c -E '^(crash|leak|timeout|oom)-')
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log.txt" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log.txt" | tail -n 1)
    cov=$(grep -E '^#[0-9]+' "$dir/log.txt" | tail -n 1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p')
    units=$(ls "$dir/corpus" | wc -l)
    line="fuzz_$name: ${execs:-?} executions in ${secs} s (${rate:-?}/s), ${cov:-no coverage line}, corpus $units inputs"
    if [ "$rc" -eq 0 ] && [ "$after" -eq "$before" ]; then
        echo "ok   $line, no crash"; passed=$((passed + 1))
    else
        echo "FAIL $line: exit $rc, $((after - before)) new crash input(s) in $dir (log: $dir/log.txt)"
        grep -E 'ERROR|invariant broken|SUMMARY' "$dir/log.txt" | head -n 5
        failed=$((failed + 1))
    fi
done
echo "$passed passed, $failed failed" | tee "$build/fuzz/test-summary.txt"
[ "$failed" -eq 0 ]
