#!/usr/bin/env bash
# tests/test_gpt_mpi.sh - the example trainer as one rank per process under
# mpirun (build/train_gpt_mpi) against the in-process world (build/train_gpt):
# - TP2 x DP2 (-np 4), TP2 x DP1 and TP1 x DP2 (-np 2): the losses of every
#   step are bit-identical to the in-process world's for the same layout and
#   seed, in program order and in the library's order (decomposition and
#   fusion on; under a sanitizer three of the six), with ZeRO-1 (TP2 x
#   DP2), ZeRO-2 (TP1 x DP2), ZeRO-3 (TP2 x DP2) and SP (TP2 x DP2, alone
#   and with ZeRO-3, the latter under a sanitizer too) in the library's
#   order, and so is the saved
#   checkpoint (the shards gathered on rank 0) and the validation loss;
# - only rank 0 prints the report;
# - a job of the wrong size: a non-zero exit and a message saying -np;
# - a rank killed (SIGKILL) mid-training: the job ends non-zero within the
#   time limit and no process of it is left.
# Skips (saying why) where MPI was not found or was switched off; under
# ThreadSanitizer it says why it does not run (see the Makefile's MPI block).
set -u
build=${TEST_BUILD:-build}
tmp=${TEST_TMPDIR:-$build/tmp}/gpt_mpi
prog="$build/train_gpt_mpi"
world="$build/train_gpt"
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_gpt_mpi: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_gpt_mpi: $1"; failed=$((failed + 1)); }
skip() {
    if [ "${CI:-}" = true ]; then fail "$1 (a skip counts as a failure with CI=true)"
    else echo "skip test_gpt_mpi: $1"; skipped=$((skipped + 1)); fi
}
check() { if [ "$1" -eq 0 ]; then ok "$2"; else fail "$2: $3"; fi; }
summary() { echo "# test_gpt_mpi: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }

if [ -f "$prog.skip" ]; then skip "$(cat "$prog.skip")"; summary; fi
if [ -f "$prog.note" ]; then echo "     test_gpt_mpi: $(cat "$prog.note")"; summary; fi
if [ ! -x "$prog" ]; then fail "$prog was not built"; summary; fi
if [ ! -x "$world" ]; then fail "$world was not built"; summary; fi
if ! command -v mpirun >/dev/null 2>&1; then skip "no mpirun on PATH (apt-get install openmpi-bin)"; summary; fi
rm -rf "$tmp" && mkdir -p "$tmp"

mpiargs=(--oversubscribe --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" -eq 0 ] && mpiargs+=(--allow-run-as-root)
export OMPI_MCA_mca_base_component_disable_dlclose=1
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan_mpi.supp:fast_unwind_on_malloc=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
mpiargs+=(-x LSAN_OPTIONS)

# --profile-steps 2 --profile-warmup 1: each order profiled in place over 3
# steps, not the default 40 (the same code: the ranks agree on the
# profiles over MPI as over the in-process world)
small=(--layers 2 --embd 32 --heads 4 --seq 16 --batch 8 --steps 6 --eval 2 --sample 0 --compare 0 --print-every 0
       --profile-steps 2 --profile-warmup 1)

# ---- the same numbers as the in-process world ----
# every layout in both orders; under a sanitizer (TEST_SANITIZER, set by
# make asan: several times slower) the layouts with both groups, and one order each for the
# others
cases=("2 2 4 program" "2 2 4 concerto" "2 1 2 program" "2 1 2 concerto" "1 2 2 program" "1 2 2 concerto"
       "2 2 4 concerto 1" "1 2 2 concerto 2" "2 2 4 concerto 3" "2 2 4 concerto 0 sp" "2 2 4 concerto 3 sp")
case "${TEST_SANITIZER:-}" in asan|tsan) cases=("2 2 4 concerto" "2 1 2 program" "1 2 2 concerto" "2 2 4 concerto 3 sp") ;; esac
# each run's limit, which only stops a hang: four sanitized processes on two
# busy cores took over 120 s for one case
lim=120
[ -n "${TEST_SANITIZER:-}" ] && lim=600
for case in "${cases[@]}"; do
    read -r tp dp np order zero sp <<<"$case"
    {
        tag="tp${tp}dp${dp}_$order${zero:+_zero$zero}${sp:+_sp}"
        lay="TP$tp x DP$dp${zero:+ --zero $zero}${sp:+ --sp}"
        timeout -k 5 "$lim" mpirun "${mpiargs[@]}" -np "$np" "$prog" "${small[@]}" --tp "$tp" --dp "$dp" --order "$order" ${zero:+--zero "$zero"} ${sp:+--sp} \
            --losses "$tmp/$tag.mpi" --save "$tmp/$tag.mpi.ckpt" >"$tmp/$tag.mpi.log" 2>&1
        rc=$?
        timeout "$lim" "$world" "${small[@]}" --tp "$tp" --dp "$dp" --order "$order" --no-link ${zero:+--zero "$zero"} ${sp:+--sp} \
            --losses "$tmp/$tag.world" --save "$tmp/$tag.world.ckpt" >"$tmp/$tag.world.log" 2>&1
        if [ "$rc" -ne 0 ]; then fail "$lay, $order order, mpirun -np $np: exit $rc: $(tail -n 3 "$tmp/$tag.mpi.log")"; continue; fi
        [ -s "$tmp/$tag.mpi" ] && cmp -s "$tmp/$tag.mpi" "$tmp/$tag.world"
        check $? "$lay, $order order, mpirun -np $np: the 6 losses are the in-process world's, bit for bit" \
            "$(paste "$tmp/$tag.mpi" "$tmp/$tag.world" | head -n 3 | tr '\n' ' ')"
        cmp -s "$tmp/$tag.mpi.ckpt" "$tmp/$tag.world.ckpt"
        check $? "$lay, $order order: the checkpoint saved by rank 0 is the world's, byte for byte" "they differ"
        a=$(grep "^validation loss" "$tmp/$tag.mpi.log"); b=$(grep "^validation loss" "$tmp/$tag.world.log")
        [ -n "$a" ] && [ "$a" = "$b" ]
        check $? "$lay, $order order: the same validation loss ($a)" "'$a' vs '$b'"
    }
done
n=$(grep -c "^what the library did to the step" "$tmp/tp2dp2_concerto.mpi.log")
[ "$n" -eq 1 ]
check $? "-np 4: one report (rank 0's)" "$n reports"

# ---- the wrong number of processes ----
out=$(timeout -k 5 "$lim" mpirun "${mpiargs[@]}" -np 2 "$prog" "${small[@]}" --tp 2 --dp 2 2>&1); rc=$?
[ "$rc" -ne 0 ] && grep -q "start it with mpirun -np 4 (this job has 2 processes)" <<<"$out"
check $? "TP2 x DP2 under -np 2: a non-zero exit and a message naming -np 4" "exit $rc: $(head -n 2 <<<"$out")"

# ---- a rank killed mid-training ----
token="gptkill$$"
timeout -k 5 90 mpirun "${mpiargs[@]}" -np 4 "$prog" "${small[@]}" --tp 2 --dp 2 --steps 100000 --eval 0 \
    --print-every 1 --losses "$tmp/$token.txt" >"$tmp/kill.log" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 300); do   # until training runs: rank 0 printed its second step
    victim=$(pgrep -f -- "--losses $tmp/$token.txt" | while read -r p; do
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "train_gpt_mpi" ] && echo "$p"; done | tail -n 1)
    [ -n "$victim" ] && grep -q "^step *2 " "$tmp/kill.log" && break
    sleep 0.1
done
if [ -z "$victim" ]; then
    fail "a rank killed mid-training: no rank of the job was found"
    wait "$job"
else
    start=$(date +%s)
    kill -KILL "$victim"
    wait "$job"; rc=$?
    secs=$(( $(date +%s) - start ))
    sleep 1
    left=$(pgrep -f -- "--losses $tmp/$token.txt" | tr '\n' ' ')
    [ "$rc" -ne 0 ] && [ "$secs" -lt 60 ] && [ -z "$left" ]   # (the time limit is 90 s)
    check $? "a rank killed mid-training: the job ends (exit $rc after ${secs}s) and no process is left" \
        "exit $rc, left: '$left': $(tail -n 3 "$tmp/kill.log" | tr '\n' ' ')"
    [ -n "$left" ] && kill -KILL $left 2>/dev/null
fi
summary
