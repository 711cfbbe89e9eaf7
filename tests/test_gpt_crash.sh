#!/usr/bin/env bash
# tests/test_gpt_crash.sh - a checkpoint save killed at any point leaves the
# previous checkpoint whole and loadable (build/train_gpt, a tiny model).
# The trainer raises SIGKILL on itself where GPT_SAVE_KILL_AT says (N bytes
# of the file written, "rename": just before the rename, "renamed": just
# after it; examples/gpt/gpt_common.h, afile). Each run loads checkpoint A
# and saves over it; the independent reference is A itself and B, the
# checkpoint the same run writes to another path undisturbed: after every
# kill the file equals A byte for byte (or B, once renamed) and loads.
# Also: a save that cannot create its temporary file fails naming the file,
# a data file that cannot be read is refused naming it, and a checkpoint cut at every byte of its header and at many more offsets
# is refused naming the file, never half-loaded.
set -u
build=${TEST_BUILD:-build}
tmp=${TEST_TMPDIR:-$build/tmp}/gpt_crash
gpt="$build/train_gpt"
passed=0 failed=0 skipped=0
ok()   { echo "ok   test_gpt_crash: $1"; passed=$((passed + 1)); }
fail() { echo "FAIL test_gpt_crash: $1"; failed=$((failed + 1)); }
summary() { echo "# test_gpt_crash: $passed passed, $failed failed, $skipped skipped"; [ "$failed" -eq 0 ]; exit; }

if [ ! -x "$gpt" ]; then fail "$gpt was not built from examples/gpt/train_gpt.c"; summary; fi
rm -rf "$tmp" && mkdir -p "$tmp"
tiny=(--embd 16 --layers 1 --heads 2 --seq 16 --batch 4 --no-link --sample 0 --eval 0 --compare 0 --print-every 0 --profile 0)
# runs a command that is to die of SIGKILL, without the shell's "Killed" line
quiet() { bash -c '"$@"; rc=$?; exit $rc' quiet "$@" 2>/dev/null; }
train() { timeout 60 "$gpt" "${tiny[@]}" "$@" >"$tmp/run.log" 2>&1; }

train --steps 1 --save "$tmp/a.ckpt" || { fail "writing checkpoint A failed: $(tail -n 2 "$tmp/run.log")"; summary; }
train --steps 1 --load "$tmp/a.ckpt" --save "$tmp/b.ckpt" || { fail "writing checkpoint B failed: $(tail -n 2 "$tmp/run.log")"; summary; }
if cmp -s "$tmp/a.ckpt" "$tmp/b.ckpt"; then fail "A and B are the same file: the test would prove nothing"; summary; fi
size=$(stat -c %s "$tmp/a.ckpt")
ok "checkpoints A and B written ($size bytes each)"

# kill points: before the first byte, in the magic, in the header, in the
# vocabulary, through the parameters, in the trailing hash, the whole file
# written (killed before its fsync'd close is renamed), before and after the rename
points="0 1 7 8 20 47 48 56 60 64 $((size / 4)) $((size / 2)) $((size - 9)) $((size - 8)) $((size - 1)) $size rename renamed"
bad=""
for at in $points; do
    rm -f "$tmp"/ck.ckpt*
    cp "$tmp/a.ckpt" "$tmp/ck.ckpt"
    GPT_SAVE_KILL_AT=$at quiet timeout 60 "$gpt" "${tiny[@]}" --steps 1 --load "$tmp/ck.ckpt" --save "$tmp/ck.ckpt" >"$tmp/kill.log" 2>&1
    rc=$?
    if [ "$rc" -ne 137 ]; then bad="$bad; at $at: exit $rc, not killed (SIGKILL, 137)"; continue; fi
    if [ "$at" = renamed ]; then want=b; else want=a; fi
    if ! cmp -s "$tmp/ck.ckpt" "$tmp/$want.ckpt"; then bad="$bad; at $at: the checkpoint is not $want byte for byte"; continue; fi
    if ! train --steps 0 --load "$tmp/ck.ckpt"; then bad="$bad; at $at: it does not load: $(tail -n 1 "$tmp/run.log")"; fi
done
if [ -z "$bad" ]; then ok "a save killed at 18 points leaves the old checkpoint whole and loadable (the new one once renamed)"
else fail "killed saves:${bad#;}"; fi

# the save left alone ends with the new checkpoint and no temporary file
rm -f "$tmp"/ck.ckpt*
cp "$tmp/a.ckpt" "$tmp/ck.ckpt"
train --steps 1 --load "$tmp/ck.ckpt" --save "$tmp/ck.ckpt"
rc=$?
left=$(ls "$tmp" | grep -c 'ck.ckpt.tmp')
if [ "$rc" -eq 0 ] && cmp -s "$tmp/ck.ckpt" "$tmp/b.ckpt" && [ "$left" -eq 0 ]; then ok "an undisturbed save over the loaded file writes B and leaves no temporary"
else fail "an undisturbed save: exit $rc, $left temporaries, $(cmp "$tmp/ck.ckpt" "$tmp/b.ckpt" 2>&1)"; fi

# a save that cannot create its temporary file names the file, exit non-zero
train --steps 1 --save "$tmp/no_such_dir/x.ckpt"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "no_such_dir/x.ckpt" "$tmp/run.log"; then ok "a save into a missing directory fails naming the file"
else fail "a save into a missing directory: exit $rc: $(tail -n 1 "$tmp/run.log")"; fi
# the losses file is written the same way
cp "$tmp/a.ckpt" "$tmp/old.txt"
GPT_SAVE_KILL_AT=3 quiet timeout 60 "$gpt" "${tiny[@]}" --steps 2 --losses "$tmp/old.txt" >"$tmp/kill.log" 2>&1
rc=$?
if [ "$rc" -eq 137 ] && cmp -s "$tmp/a.ckpt" "$tmp/old.txt"; then ok "a losses file killed mid-write leaves the old file"
else fail "a losses file killed mid-write: exit $rc, $(cmp "$tmp/a.ckpt" "$tmp/old.txt" 2>&1)"; fi

# a data file that cannot be read (a directory) is refused naming it and why
mkdir -p "$tmp/a_dir.txt"
train --steps 1 --data "$tmp/a_dir.txt"
rc=$?
if [ "$rc" -ne 0 ] && grep -q "a_dir.txt.*Is a directory" "$tmp/run.log"; then ok "a directory as the data file is refused naming it"
else fail "a directory as the data file: exit $rc: $(tail -n 1 "$tmp/run.log")"; fi

# a checkpoint cut at every byte of its header and vocabulary, then every
# 61st byte (every 509th under the sanitizers: CI runs this three times;
# a cut checkpoint is refused by its length alone), is refused, and the
# message names the file
step=61
case "${TEST_SANITIZER:-}" in asan|tsan) step=509 ;; esac
bad="" n=0
cut=0
while [ "$cut" -lt "$size" ]; do
    head -c "$cut" "$tmp/a.ckpt" >"$tmp/cut.ckpt"
    n=$((n + 1))
    if train --steps 0 --load "$tmp/cut.ckpt"; then bad="$bad; cut at $cut loads"
    elif ! grep -q "cut.ckpt" "$tmp/run.log"; then bad="$bad; cut at $cut: the message does not name the file: $(tail -n 1 "$tmp/run.log")"; fi
    if [ "$cut" -lt 96 ]; then cut=$((cut + 1)); else cut=$((cut + step)); fi
done
if [ -z "$bad" ]; then ok "a checkpoint cut at $n offsets is refused naming the file"
else fail "cut checkpoints:${bad#;}" ; fi
summary
