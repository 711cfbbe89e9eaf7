#!/usr/bin/env bash
# tests/test_mpi.sh - concerto_mpi.h under mpirun (build/tests/test_mpi,
# from tests/test_mpi.c):
# - the checks of test_mpi.c with -np 2 and -np 4 (their counts are added
#   to this script's);
# - faults, each with -np 4 under a wall-clock limit, through the CPU
#   backend with a 3 s collective timeout and the family's default abort:
#   a collective issued in a different order on one rank, a rank that never
#   arrives (also with the smallest timeout_s the desc accepts), a rank
#   killed (SIGKILL) mid-step. Each must end the job with
#   a non-zero exit well within the limit, every rank that took part must
#   report the error (naming the collective and the communicator), and no
#   test process may be left behind (pgrep on a token of the run).
# Skips (saying why) where MPI was not found or was switched off; under
# ThreadSanitizer it says why it does not run and counts nothing (see the
# Makefile's MPI block).
set -u
build=${TEST_BUILD:-build}
tmp=${TEST_TMPDIR:-$build/tmp}/mpi
prog="$build/tests/test_mpi"
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_mpi: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_mpi: $1"; failed=$((failed + 1)); }
skip() {
    if [ "${CI:-}" = true ]; then fail "$1 (a skip counts as a failure with CI=true)"
    else echo "skip test_mpi: $1"; skipped=$((skipped + 1)); fi
}
summary() { echo "# test_mpi: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }

if [ -f "$prog.skip" ]; then skip "$(cat "$prog.skip")"; summary; fi
if [ -f "$prog.note" ]; then echo "     test_mpi: $(cat "$prog.note")"; summary; fi
if [ ! -x "$prog" ]; then fail "$prog was not built from tests/test_mpi.c"; summary; fi
if ! command -v mpirun >/dev/null 2>&1; then skip "no mpirun on PATH (apt-get install openmpi-bin)"; summary; fi
rm -rf "$tmp" && mkdir -p "$tmp"

mpiargs=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpiargs+=(--allow-run-as-root)
# Open MPI's shared-memory transport cannot use cross-memory attach in
# most containers: it says so on every run; copy through shared memory.
mpiargs+=(--mca btl_vader_single_copy_mechanism none)
# Under AddressSanitizer: LeakSanitizer skips what Open MPI keeps until the
# process ends (its plugins stay loaded so that their frames have names).
export OMPI_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_mpi.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mpiargs+=(-x LSAN_OPTIONS)

# ---- the checks ---------------------------------------------------------------
for np in 2 4; do
    start=$(date +%s)
    timeout -k 5 240 mpirun "${mpiargs[@]}" -np "$np" "$prog" >"$tmp/np$np.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    grep -E "^(FAIL|     )" "$tmp/np$np.log"
    line=$(grep -E "^# test_mpi_np$np: [0-9]+ passed, [0-9]+ failed" "$tmp/np$np.log" | tail -n 1)
    if [ -z "$line" ]; then
        fail "mpirun -np $np $prog: no summary (exit $rc after ${secs}s): $(tail -n 5 "$tmp/np$np.log" | tr '\n' ' ')"
        continue
    fi
    read -r _ _ p _ f _ <<<"$line"
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$rc" -eq 0 ]; then ok "mpirun -np $np: $p checks passed on $np ranks in ${secs}s"
    else fail "mpirun -np $np exits $rc (log: $tmp/np$np.log)"; fi
done

# ---- concerto_nccl.h's id through MPI (compile_cuda_mpi) ---------------------
cm="$build/tests/compile_cuda_mpi"
if [ -x "$cm" ]; then
    timeout -k 5 120 mpirun "${mpiargs[@]}" -np 2 "$cm" >"$tmp/compile_cuda_mpi.log" 2>&1
    rc=$?
    grep -E "^FAIL" "$tmp/compile_cuda_mpi.log"
    n=$(grep -cE "^# compile_cuda_mpi: [0-9]+ passed, 0 failed" "$tmp/compile_cuda_mpi.log")
    if [ "$rc" -eq 0 ] && [ "$n" -eq 2 ] && grep -q "^ok   test_id_mpi: every one of the 2 ranks has the root's id" "$tmp/compile_cuda_mpi.log"
    then ok "mpirun -np 2 compile_cuda_mpi: cc_nccl_id_exchange_mpi gives both ranks the root's NCCL id"
    else fail "mpirun -np 2 compile_cuda_mpi exits $rc (log: $tmp/compile_cuda_mpi.log)"; fi
else
    skip "$cm was not built: cc_nccl_id_exchange_mpi needs CUDA and NCCL beside MPI (see make deps)"
fi

# ---- faults ----------------------------------------------------------------------
# run_fault MODE: runs the scenario; sets rc, secs, out (stdout and stderr)
limit=40
run_fault() {
    local token="cc-mpi-fault-$1-$$"
    start=$(date +%s)
    timeout -k 5 "$limit" mpirun "${mpiargs[@]}" -np 4 "$prog" "$1" "$token" >"$tmp/$1.log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    out=$(cat "$tmp/$1.log")
    sleep 1
    left=$(pgrep -f "$token" || true)
    if [ -n "$left" ]; then
        fail "$1: processes left behind: $(ps -o pid=,args= -p $(echo $left | tr ' ' ',') 2>/dev/null | tr '\n' ';')"
        kill -9 $left 2>/dev/null
    else
        ok "$1: no test process left behind"
    fi
    if [ "$rc" -ne 0 ] && [ "$secs" -lt "$limit" ]; then   # a timeout would take the whole limit
        ok "$1: the job ends with exit $rc after ${secs}s (limit ${limit}s)"
    else
        fail "$1: mpirun exits $rc after ${secs}s (want non-zero, before the ${limit}s limit; log: $tmp/$1.log)"
    fi
}

# every listed rank logged an error containing each of the given texts
each_rank_says() {
    local mode=$1 ranks=$2; shift 2
    local r t bad=""
    for r in $ranks; do
        for t in "$@"; do
            grep "^rank $r: error: " "$tmp/$mode.log" | grep -qF -- "$t" || bad="$bad rank $r lacks '$t';"
        done
    done
    if [ -z "$bad" ]; then ok "$mode: ranks $ranks report: $*"
    else fail "$mode:$bad log: $(grep -m 4 "error" "$tmp/$mode.log" | tr '\n' ' ')"; fi
}

run_fault fault-order
each_rank_says fault-order "0 1 2 3" "ranks issued different collectives" "collective #4" "communicator 'world'" \
    "all_reduce of 16 float32 (sum)" "broadcast of 8 float32 from root 0" "ending the job (MPI_Abort)"
if grep -q "step 2 done" "$tmp/fault-order.log"; then fail "fault-order: a rank finished the mismatched step"
else ok "fault-order: no rank finished the mismatched step"; fi

run_fault fault-absent
each_rank_says fault-absent "0 1 2" "not complete after 3 s (timeout_s)" "all_reduce of 16 float32 (sum) on communicator 'world'"
if [ "$secs" -ge 3 ]; then ok "fault-absent: the others waited the timeout (${secs}s >= 3s) before ending the job"
else fail "fault-absent: the job ended after ${secs}s, before the 3 s timeout"; fi

# the timeout at the smallest value cc_mpi_desc accepts (the smallest
# positive double), the last rank absent from step 2: the job ends at once,
# a rank saying which collective did not complete within that timeout
run_fault fault-tiny
if grep "^rank [0-9]: error: " "$tmp/fault-tiny.log" | grep -qF "not complete after 4.94066e-324 s (timeout_s)"
then ok "fault-tiny: a rank reports the collective not complete after 4.94066e-324 s (${secs}s to the end of the job)"
else fail "fault-tiny: no rank reports the timeout: $(grep -m 4 "error" "$tmp/fault-tiny.log" | tr '\n' ' ')"; fi

run_fault fault-kill
if grep -q "rank 1: step 2 done" "$tmp/fault-kill.log"; then fail "fault-kill: the killed rank went on"
else ok "fault-kill: rank 1 died before step 2 and the others did not finish"; fi

summary
