#!/usr/bin/env python3
"""tests/fuzz/make_seeds.py - writes the seed corpora of tests/fuzz/corpus/
(run from the repository root; deterministic). The checkpoint seeds are
cut and bit-flipped copies of corpus/checkpoint/tiny.ckpt, which the
example trainer wrote (build/train_gpt --embd 8 --layers 1 --heads 2 --seq 4
--batch 2 --steps 1 --save ...). Inputs the fuzzers find are added beside
these by hand (make fuzz keeps them under build/fuzz)."""
import os
import random

R = random.Random(20261129)
ROOT = "tests/fuzz/corpus"


def put(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def sm(n_jobs, n_res):
    """A PSPLIB single-mode instance: job 1 the source, job n the sink."""
    succ = {j: set() for j in range(1, n_jobs + 1)}
    for j in range(2, n_jobs):
        succ[1].add(j)
        for k in range(j + 1, n_jobs):
            if R.random() < 0.3:
                succ[j].add(k)
        succ[j].add(n_jobs)
    caps = [R.randint(3, 8) for _ in range(n_res)]
    lines = ["*" * 72, "file with basedata            : seed.bas", "initial value random generator: 1", "*" * 72,
             "projects                      :  1", "jobs (incl. supersource/sink ):  %d" % n_jobs,
             "horizon                       :  %d" % (10 * n_jobs), "RESOURCES",
             "  - renewable                 :  %d   R" % n_res, "  - nonrenewable              :  0   N",
             "  - doubly constrained        :  0   D", "*" * 72, "PROJECT INFORMATION:",
             "pronr.  #jobs rel.date duedate tardcost  MPM-Time",
             "    1     %d      0       20       5       20" % (n_jobs - 2), "*" * 72, "PRECEDENCE RELATIONS:",
             "jobnr.    #modes  #successors   successors"]
    for j in range(1, n_jobs + 1):
        s = sorted(succ[j])
        lines.append("   %d        1          %d      %s" % (j, len(s), "  ".join(str(x) for x in s)))
    lines += ["*" * 72, "REQUESTS/DURATIONS:", "jobnr. mode duration  " + "  ".join("R %d" % (r + 1) for r in range(n_res)),
              "-" * 72]
    for j in range(1, n_jobs + 1):
        d = 0 if j in (1, n_jobs) else R.randint(1, 9)
        dem = [0 if j in (1, n_jobs) else R.randint(0, caps[r]) for r in range(n_res)]
        lines.append("  %d      1     %d    %s" % (j, d, "  ".join(str(x) for x in dem)))
    lines += ["*" * 72, "RESOURCEAVAILABILITIES:", "  " + "    ".join("R %d" % (r + 1) for r in range(n_res)),
              "   " + "   ".join(str(c) for c in caps), "*" * 72]
    return "\n".join(lines) + "\n"


for i, (n, k) in enumerate([(4, 1), (6, 2), (8, 4), (12, 3)]):
    text = sm(n, k)
    put("psplib", "valid%d.sm" % i, text)
    put("psplib", "cut%d.sm" % i, text[: len(text) * 2 // 3])

words = ["the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran"]
for i in range(3):
    t = " ".join(R.choice(words) for _ in range(60 + 40 * i))
    put("data", "text%d" % i, bytes([R.randrange(128) if i else 200, ord("a"), ord("z"), 0, 0]) + t.encode())
put("data", "short", bytes([5]) + b"too short")

ck = open(os.path.join(ROOT, "checkpoint", "tiny.ckpt"), "rb").read()
put("checkpoint", "cut_header", ck[:40])
put("checkpoint", "cut_params", ck[: len(ck) // 2])
flipped = bytearray(ck)
flipped[100] ^= 0x10
put("checkpoint", "flipped", bytes(flipped))

for i in range(16):
    put("graph", "random%02d" % i, bytes(R.randrange(256) for _ in range(R.randint(16, 160))))
