#!/usr/bin/env bash
# tests/test_plan.sh - the planner build/plan (tools/plan.c): its figures
# against properties that hold whatever the cost model says (a step without
# communication is its compute chain; nothing beats the lower bound; the
# library's schedule never loses to program order), its timelines through
# the independent checker, its determinism, its files, and its errors.
# Prints harness-style lines and the summary.
set -u
build=${TEST_BUILD:-build}
plan="$build/plan"
tmp="$build/tmp/test_plan"
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_plan: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_plan: $1"; failed=$((failed + 1)); }
summary() { echo "# test_plan: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }
check() { if [ "$1" -eq 0 ]; then ok "$2"; else fail "$2: $3"; fi; }

if [ ! -x "$plan" ]; then fail "$plan was not built from tools/plan.c"; summary; fi
rm -rf "$tmp" && mkdir -p "$tmp"
py=$(command -v python3 || true)
if [ -z "$py" ]; then fail "python3 is needed to read the planner's JSON"; summary; fi

# a small GPT (the presets' shape, scaled down) so that every layout plans in seconds
small=(--model gpt-1.3b --layers 4 --hidden 256 --heads 8 --seq 256 --vocab 4096 --quiet --json)

# json FILE EXPR: evaluates EXPR on the object j, prints the result
json() { "$py" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

layouts=(
    "tp2 dp2:--tp 2 --nodes 1 --gpus-per-node 4"
    "tp4 dp4 on two nodes:--tp 4 --nodes 2 --gpus-per-node 8"
    "sp tp2 dp2:--tp 2 --sp --nodes 1 --gpus-per-node 4"
    "zero3 dp4:--zero 3 --nodes 1 --gpus-per-node 4"
    "zero1 tp2 dp2:--zero 1 --tp 2 --nodes 1 --gpus-per-node 4"
    "pp2 tp2 dp2, 4 micro-batches:--pp 2 --tp 2 --micro-batches 4 --nodes 1 --gpus-per-node 8"
    "fp32 dp8 on h100:--dtype fp32 --cluster h100 --nodes 1"
)
i=0
for entry in "${layouts[@]}"; do
    name=${entry%%:*}; args=${entry#*:}; i=$((i + 1))
    out="$tmp/l$i.json"
    # shellcheck disable=SC2086
    timeout 300 "$plan" "${small[@]}" $args >"$out" 2>"$tmp/l$i.err"; rc=$?
    check $rc "$name: exits 0" "exit $rc: $(tail -n 3 "$tmp/l$i.err")"
    [ $rc -eq 0 ] || continue
    res=$(json "$out" "all(k in j for k in ('program_us','peers','s_us','sf_us','sad_us','lower_bound_us','plan_s','peak_bytes','persistent_bytes','peers_peak_bytes')) and len(j['peers']) == 6 and sorted(j['peers_peak_bytes']) == sorted(j['peers']) and 'memory_cap_bytes' not in j")
    [ "$res" = True ]; check $? "$name: the JSON has program_us, peers (6), s_us, sf_us, sad_us, lower_bound_us, plan_s, peak_bytes, persistent_bytes, peers_peak_bytes" "$res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if not v['valid']]")
    [ "$res" = "[]" ]; check $? "$name: every timeline passes the independent checker" "invalid: $res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if v['us'] < j['lower_bound_us'] * (1 - 1e-9)]")
    [ "$res" = "[]" ]; check $? "$name: no way of running the step beats the lower bound" "below it: $res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if v['true_us'] is None or abs(v['true_us'] - v['us']) > 1e-6 * v['us']]")
    [ "$res" = "[]" ]; check $? "$name: without noise every variant's order, judged again from the true durations of its ops, gives its step" "differ: $res"
    res=$(json "$out" "j['s_us'] <= j['program_us'] * (1 + 1e-9) and j['sf_us'] <= j['s_us'] * (1 + 1e-9) and j['sad_us'] <= j['sf_us'] * (1 + 1e-9)")
    [ "$res" = True ]; check $? "$name: S <= program order, S+F <= S, S+AD <= S+F ($(json "$out" "j['program_us'], j['s_us'], j['sf_us'], j['sad_us']"))" "$res"
done

# --ad-variants: S+AD near (immediate neighbours), S+AD N=2 and S+AD
# matmul-adjacent (rules on the matmuls only, depth 1) beside S+AD, each a
# timeline that passes the checker, re-judged from the true
# durations of its ops, no shorter than the bound and no longer than S+F
# (each falls back to it)
out="$tmp/adv.json"
timeout 300 "$plan" "${small[@]}" --tp 2 --nodes 1 --gpus-per-node 4 --ad-variants >"$out" 2>"$tmp/adv.err"; rc=$?
check $rc "--ad-variants: exits 0" "exit $rc: $(tail -n 3 "$tmp/adv.err")"
if [ $rc -eq 0 ]; then
    res=$(json "$out" "[(v['name'], v['valid'], v['true_us'] is not None and abs(v['true_us'] - v['us']) <= 1e-6 * v['us'], v['us'] >= j['lower_bound_us'] * (1 - 1e-9), v['us'] <= j['sf_us'] * (1 + 1e-9)) for v in j['variants'] if v['name'] in ('S+AD near', 'S+AD N=2', 'S+AD matmul-adjacent')]")
    [ "$res" = "[('S+AD near', True, True, True, True), ('S+AD N=2', True, True, True, True), ('S+AD matmul-adjacent', True, True, True, True)]" ]
    check $? "--ad-variants: S+AD near, S+AD N=2 and S+AD matmul-adjacent valid, re-judged alike, within the bound and S+F" "$res"
fi

# one GPU, no overlap slowdown: nothing to communicate, so every way of
# running the step is its chain of compute, which is also the bound
out="$tmp/one.json"
timeout 300 "$plan" "${small[@]}" --nodes 1 --gpus-per-node 1 --alpha 1 >"$out" 2>/dev/null; rc=$?
res=$(json "$out" "max(abs(v['us'] - j['lower_bound_us']) for v in j['variants']) <= 1e-6 * j['lower_bound_us'] and j['lower_bound_us'] > 0")
[ $rc -eq 0 ] && [ "$res" = True ]; check $? "one GPU: program order, every peer, S, S+F and S+AD all equal the lower bound" "exit $rc, $res"

# deterministic: the same figures twice (the planning times aside)
strip() {
    "$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
j.pop("plan_s", None)
for v in j["variants"]:
    v.pop("plan_s", None)
print(json.dumps(j, sort_keys=True))' "$1"
}
timeout 300 "$plan" "${small[@]}" --tp 2 --nodes 1 --gpus-per-node 4 >"$tmp/again.json" 2>/dev/null
a=$(strip "$tmp/l1.json"); b=$(strip "$tmp/again.json")
[ -n "$a" ] && [ "$a" = "$b" ]; check $? "the same configuration plans to the same figures twice" "$(diff <(echo "$a") <(echo "$b") | head -n 4)"

# noise: the plan chosen under perturbed numbers, judged under the true ones
out="$tmp/noise.json"
timeout 300 "$plan" "${small[@]}" --tp 2 --nodes 1 --gpus-per-node 4 --noise 0.1 --seed 3 >"$out" 2>/dev/null; rc=$?
res=$(json "$out" "[v['name'] for v in j['variants'] if v['true_us'] is None]")
[ $rc -eq 0 ] && [ "$res" = "[]" ]; check $? "--noise 0.1: every variant is judged under the true numbers" "exit $rc, missing: $res"
res=$(json "$out" "[v for v in j['variants'] if v['name'] == 'program'][0]['true_us'] == json.load(open('$tmp/l1.json'))['program_us']")
[ "$res" = True ]; check $? "--noise: program order under the true numbers is the noiseless prediction" "$res"

# files: a trace that is JSON, an RCPSP instance the solver reads
timeout 300 "$plan" "${small[@]}" --tp 2 --nodes 1 --gpus-per-node 4 --trace "$tmp/t.json" --sm "$tmp/s.sm" >/dev/null 2>&1; rc=$?
"$py" -c "import json,sys; t=json.load(open(sys.argv[1])); assert len(t['traceEvents'] if isinstance(t, dict) else t) > 100" "$tmp/t.json" 2>/dev/null
check $? "--trace writes Chrome trace JSON of the timelines" "exit $rc"
if [ -x "$build/psplib" ]; then
    out=$(timeout 120 "$build/psplib" --method list "$tmp/s.sm" 2>&1)
    grep -q "valid=1" <<<"$out"; check $? "--sm writes an RCPSP instance build/psplib solves" "$out"
fi

# progress on standard error
timeout 300 "$plan" --model gpt-1.3b --layers 2 --hidden 256 --heads 8 --seq 256 --vocab 4096 --tp 2 --nodes 1 --gpus-per-node 4 \
    >/dev/null 2>"$tmp/progress.err"
grep -q "S+AD" "$tmp/progress.err"; check $? "progress goes to standard error" "$(head -n 3 "$tmp/progress.err")"

# memory: a falling cap on a ZeRO-3 step. The CLI solves one cap a run, so
# each run is judged alone: exit 0, every library timeline (S, S+F, S+AD) at
# or under the cap, program order's peak as the reference: at or above it a
# solve always succeeds, and S is then no later than program order.
z3=(--zero 3 --nodes 1 --gpus-per-node 4)
timeout 300 "$plan" "${small[@]}" "${z3[@]}" >"$tmp/z3.json" 2>"$tmp/z3.err"; rc=$?
check $rc "zero3, no cap: exits 0" "exit $rc: $(tail -n 3 "$tmp/z3.err")"
res=$(json "$tmp/z3.json" "all(isinstance(v['peak_bytes'], int) and v['peak_bytes'] > j['persistent_bytes'] for v in j['variants'] if v['name'] != 'S+AD') and j['peak_bytes'] == [v for v in j['variants'] if v['name'] == 'S'][0]['peak_bytes']")
[ "$res" = True ]; check $? "zero3: every timeline has a peak above the persistent bytes; peak_bytes is S's" "$res"
prog_peak=$(json "$tmp/z3.json" "[v for v in j['variants'] if v['name'] == 'program'][0]['peak_bytes']")
s_peak=$(json "$tmp/z3.json" "j['peak_bytes']")
keep=$(json "$tmp/z3.json" "j['persistent_bytes']")
caps=$("$py" -c "import sys; p, s = int(sys.argv[1]), int(sys.argv[2]); hi = max(p, s) + 1000000; print(' '.join(str(p + (hi - p) * k // 4) for k in range(5)))" "$prog_peak" "$s_peak")
# sanitized (TEST_SANITIZER, set by make asan): the lowest cap and the highest
# alone (the same solve under another number; the curve below solves 6 more)
[ -n "${TEST_SANITIZER:-}" ] && caps="${caps%% *} ${caps##* }"
for cap in $caps; do
    out="$tmp/cap$cap.json"
    timeout 300 "$plan" "${small[@]}" "${z3[@]}" --memory-cap "$cap" >"$out" 2>"$tmp/cap.err"; rc=$?
    check $rc "zero3, --memory-cap $cap (>= program order's peak $prog_peak): the solve succeeds" "exit $rc: $(tail -n 3 "$tmp/cap.err")"
    [ $rc -eq 0 ] || continue
    res=$(json "$out" "j['memory_cap_bytes'] == $cap and [(v['name'], v['peak_bytes']) for v in j['variants'] if v['name'] in ('S', 'S+F', 'S+AD') and (v['peak_bytes'] is None or v['peak_bytes'] > $cap)]")
    [ "$res" = "[]" ]; check $? "zero3, --memory-cap $cap: S, S+F and S+AD peak at or under the cap" "over: $res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if not v['valid']] == [] and j['s_us'] <= j['program_us'] * (1 + 1e-9) and j['s_us'] >= j['lower_bound_us'] * (1 - 1e-9)")
    [ "$res" = True ]; check $? "zero3, --memory-cap $cap: timelines valid, lower bound <= S <= program order" "$res"
    res=$(json "$out" "sorted(j['peers_over_cap']) == sorted(k for k, v in j['peers_peak_bytes'].items() if v is not None and v > $cap)")
    [ "$res" = True ]; check $? "zero3, --memory-cap $cap: peers_over_cap names the policies whose peak is above it" "$res"
done
# the curve: caps solved from program order's peak up, each from the
# tighter cap's order: step times never rise as the cap loosens, and every
# point's peak is under its cap
timeout 300 "$plan" "${small[@]}" "${z3[@]}" --memory-curve 6 >"$tmp/curve.json" 2>"$tmp/curve.err"; rc=$?
check $rc "zero3, --memory-curve 6: exits 0" "exit $rc: $(tail -n 3 "$tmp/curve.err")"
if [ $rc -eq 0 ]; then
    res=$(json "$tmp/curve.json" "len(j['curve']) == 7 and j['curve'][-1]['memory_cap_bytes'] is None and j['curve'][0]['memory_cap_bytes'] == $prog_peak")
    [ "$res" = True ]; check $? "the curve: 6 caps from program order's peak, then unlimited" "$res"
    res=$(json "$tmp/curve.json" "[(a['memory_cap_bytes'], a['s_us'], b['s_us']) for a, b in zip(j['curve'], j['curve'][1:]) if b['s_us'] > a['s_us']]")
    [ "$res" = "[]" ]; check $? "the curve: the step time never rises as the cap loosens" "rises: $res"
    res=$(json "$tmp/curve.json" "[p['memory_cap_bytes'] for p in j['curve'] if p['memory_cap_bytes'] is not None and p['peak_bytes'] > p['memory_cap_bytes']]")
    [ "$res" = "[]" ]; check $? "the curve: every point's peak is at or under its cap" "over: $res"
    res=$(json "$tmp/curve.json" "j['curve'][0]['s_us'] <= j['program_us'] * (1 + 1e-9) and 'deepspeed-zero3' in j['peers'] and 'prefetch-1' in j['peers']")
    [ "$res" = True ]; check $? "the curve: at program order's peak S is no later than program order; DeepSpeed's and prefetch-1's beside it" "$res"
fi
# nothing fits: the persistent bytes and one byte (below any transient
# buffer), and below the persistent bytes alone
for cap in $((keep + 1)) $((keep - 1)); do
    out=$(timeout 120 "$plan" "${small[@]}" "${z3[@]}" --memory-cap "$cap" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -qF -- "--memory-cap $cap" <<<"$out"; check $? "zero3, --memory-cap $cap (persistent $keep): exit 1 naming the cap" "exit $rc: $out"
done
out=$(timeout 120 "$plan" "${small[@]}" "${z3[@]}" --memory-cap $((keep + 1)) 2>&1 >/dev/null)
grep -q "larger than memory_cap_bytes\|no order found fits" <<<"$out"; check $? "below the largest transient buffer: the library's message says which" "$out"
out=$(timeout 120 "$plan" "${small[@]}" "${z3[@]}" --memory-cap $((keep - 1)) 2>&1 >/dev/null)
grep -q "persistent" <<<"$out"; check $? "below the persistent bytes: the message says so" "$out"
# suffixes
timeout 300 "$plan" "${small[@]}" "${z3[@]}" --memory-cap 1G >"$tmp/g.json" 2>/dev/null
res=$(json "$tmp/g.json" "j['memory_cap_bytes'] == 1073741824")
[ "$res" = True ]; check $? "--memory-cap 1G is 1073741824 bytes" "$res"
timeout 300 "$plan" "${small[@]}" "${z3[@]}" --memory-cap 1GB >"$tmp/gb.json" 2>/dev/null
res=$(json "$tmp/gb.json" "j['memory_cap_bytes'] == 1000000000")
[ "$res" = True ]; check $? "--memory-cap 1GB is 10^9 bytes" "$res"

# bad input: exit 2 and a message naming the option
bad() {   # expected text, arguments...
    local want=$1; shift
    out=$(timeout 60 "$plan" --quiet "$@" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && grep -qF -- "$want" <<<"$out"; check $? "$* is refused naming $want" "exit $rc: $out"
}
bad "--model" --model gpt-7b
bad "--tp 8 does not divide the 12 attention heads" --heads 12 --hidden 768 --tp 8
bad "--pp 5 does not divide the 24 layers" --pp 5 --nodes 5 --gpus-per-node 1
bad "--inter-gbps" --inter-gbps 0
bad "--intra-gbps" --intra-gbps -5
bad "--cluster" --cluster tpu
bad "--zero" --zero 4
bad "--nodes" --tp 3 --nodes 1
bad "--micro-batches" --pp 4 --micro-batches 2 --nodes 1 --gpus-per-node 4
bad "--memory-cap" --memory-cap 0
bad "--memory-cap" --memory-cap -40G
bad "--memory-cap" --memory-cap lots
bad "--memory-cap" --memory-cap 40Q
bad "--memory-cap" --memory-cap
summary
