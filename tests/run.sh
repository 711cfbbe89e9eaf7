#!/usr/bin/env bash
# tests/run.sh BUILD_DIR PROGRAM... - runs the test programs (in parallel,
# TEST_JOBS at a time, default: the number of cores), prints each one's
# output in the order given, and ends with the closing line
#     N passed, N failed[, N skipped]
# which it also writes to BUILD_DIR/test-summary.txt. A program that is
# missing (it did not build), crashes, times out (TEST_TIMEOUT seconds,
# default 300) or exits non-zero without counting a failure counts as one
# failure. Exit status: 1 if anything failed. TEST_FIRST: programs (among
# those given) that take longest, started before the others so that the run
# does not end on one of them alone; their output still comes in the order
# given.
set -u
cd "$(dirname "$0")/.." || exit 2
build=${1:?usage: tests/run.sh BUILD_DIR PROGRAM...}
shift
logs="$build/logs"
mkdir -p "$logs" "$build/tmp"
export TEST_TMPDIR="$build/tmp"
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
limit=${TEST_TIMEOUT:-300}

# the order in which they start: TEST_FIRST's (in its order), then the rest
first=() rest=()
for prog in "$@"; do
    case " ${TEST_FIRST:-} " in *" $prog "*) ;; *) rest+=("$prog"); continue ;; esac
done
for prog in ${TEST_FIRST:-}; do
    case " $* " in *" $prog "*) first+=("$prog") ;; esac
done

running=0
for prog in ${first[@]+"${first[@]}"} ${rest[@]+"${rest[@]}"}; do
    name=$(basename "$prog")
    rm -f "$logs/$name.log" "$logs/$name.rc"
    [ -x "$prog" ] || continue
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
    (
        start=$(date +%s)
        timeout -k 10 "$limit" "$prog" >"$logs/$name.log" 2>&1
        rc=$?
        echo "$rc $(( $(date +%s) - start ))" >"$logs/$name.rc"
    ) &
    running=$((running + 1))
done
wait

passed=0 failed=0 skipped=0
for prog in "$@"; do
    name=$(basename "$prog")
    if [ ! -x "$prog" ]; then
        echo "FAIL $name: $prog was not built (see the compiler errors above)"
        failed=$((failed + 1))
        continue
    fi
    cat "$logs/$name.log"
    read -r rc secs <"$logs/$name.rc" || { rc=99; secs=?; }
    summary=$(grep -E "^# [^ ]+: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$" "$logs/$name.log" | tail -n 1)
    if [ -n "$summary" ]; then
        read -r _ _ p _ f _ s _ <<<"$summary"
        passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    else
        f=0
    fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then why="timed out after ${limit}s"
        elif [ "$rc" -gt 128 ]; then why="killed by signal $((rc - 128))"
        else why="exited with status $rc"; fi
        echo "FAIL $name: $why before reporting a failure (log: $logs/$name.log)"
        failed=$((failed + 1))
    elif [ -z "$summary" ]; then
        echo "FAIL $name: no summary line (log: $logs/$name.log)"
        failed=$((failed + 1))
    fi
    echo "     ($name took ${secs}s)"
done

line="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && line="$line, $skipped skipped"
echo "$line" >"$build/test-summary.txt"
echo "$line"
[ "$failed" -eq 0 ]
