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
    res=$(json "$out" "all(k in j for k in ('program_us','peers','s_us','sf_us','sad_us','lower_bound_us','plan_s')) and len(j['peers']) == 5")
    [ "$res" = True ]; check $? "$name: the JSON has program_us, peers (5), s_us, sf_us, sad_us, lower_bound_us, plan_s" "$res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if not v['valid']]")
    [ "$res" = "[]" ]; check $? "$name: every timeline passes the independent checker" "invalid: $res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if v['us'] < j['lower_bound_us'] * (1 - 1e-9)]")
    [ "$res" = "[]" ]; check $? "$name: no way of running the step beats the lower bound" "below it: $res"
    res=$(json "$out" "[v['name'] for v in j['variants'] if v['true_us'] is None or abs(v['true_us'] - v['us']) > 1e-6 * v['us']]")
    [ "$res" = "[]" ]; check $? "$name: without noise every variant's order, judged again from the true durations of its ops, gives its step" "differ: $res"
    res=$(json "$out" "j['s_us'] <= j['program_us'] * (1 + 1e-9) and j['sf_us'] <= j['s_us'] * (1 + 1e-9) and j['sad_us'] <= j['sf_us'] * (1 + 1e-9)")
    [ "$res" = True ]; check $? "$name: S <= program order, S+F <= S, S+AD <= S+F ($(json "$out" "j['program_us'], j['s_us'], j['sf_us'], j['sad_us']"))" "$res"
done

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
summary
