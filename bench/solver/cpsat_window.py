#!/usr/bin/env python3
"""cpsat_window.py - OR-tools CP-SAT on single odd-even windows written by
build/bench_window_dump (the windows our search left unproven), to tell
which of our two numbers keeps a window from its proof: the placement (a
shorter one exists) or the lower bound (the optimum lies above it).

    cpsat_window.py [--time-limit S] [--workers N] WINDOW.txt...

Run it with the python that has OR-tools (bench/run.sh windows uses
build/venv). The model is cpsat_ref.py's for a window: one interval per
job, its start at or after its release, its end at or before its deadline;
a precedence edge i -> j is end_i <= start_j; each busy block a fixed
interval; the resources as cpsat_ref.add_resources sets them (NoOverlap
where every job demands at most 1 of a capacity 1, else Cumulative); the
objective the window's end, the largest end of its jobs. Our placement is
its hint, so CP-SAT never ends worse than we did. Its schedule is checked here (releases, deadlines,
precedence, and capacity with the busy blocks at every start).

One line per window:
    <file> jobs=<n> t0=<t0> ours_mk=<int> ours_lb=<int> cpsat_mk=<int|->
           cpsat_bound=<int> status=<...> seconds=<float> valid=<0|1>
"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True   # (no __pycache__ in the source tree)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cpsat_ref  # noqa: E402  (its model's resource constraints; it exits, saying how, without OR-tools)
from cpsat_ref import cp_model  # noqa: E402


def load(path):
    head = None
    cap = []
    jobs = []
    busy = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            t = line.split()
            if not t:
                continue
            try:
                if t[0] == "window":
                    head = {t[i]: int(t[i + 1]) for i in range(0, len(t) - 1, 2)}
                elif t[0] == "capacity":
                    cap = [int(x) for x in t[1:]]
                elif t[0] == "job":
                    k = len(cap)
                    p = t.index("preds")
                    jobs.append({"dur": int(t[2]), "rel": int(t[3]), "dl": int(t[4]), "start": int(t[5]),
                                 "dem": [int(x) for x in t[6:6 + k]], "preds": [int(x) for x in t[p + 1:]]})
                elif t[0] == "busy":
                    busy.append((int(t[1]), int(t[2]), [int(x) for x in t[3:]]))
                else:
                    raise ValueError("unknown line kind '%s'" % t[0])
            except (ValueError, IndexError) as e:
                sys.exit("cpsat_window.py: %s:%d: %s" % (path, ln, e))
    if head is None or len(jobs) != head.get("jobs"):
        sys.exit("cpsat_window.py: %s: not a window file of bench_window_dump" % path)
    return head, cap, jobs, busy


def check(cap, jobs, busy, st):
    """1 when the starts st meet every constraint of the window."""
    for i, j in enumerate(jobs):
        if st[i] < j["rel"] or (j["dl"] >= 0 and st[i] + j["dur"] > j["dl"]):
            return 0
        for q in j["preds"]:
            if st[q] + jobs[q]["dur"] > st[i]:
                return 0
    items = [(st[i], st[i] + j["dur"], j["dem"]) for i, j in enumerate(jobs) if j["dur"] > 0]
    items += [(b[0], b[1], b[2]) for b in busy if b[1] > b[0]]
    for (t, _, _) in items:
        for r, c in enumerate(cap):
            if sum(d[r] for (s, e, d) in items if s <= t < e) > c:
                return 0
    return 1


def solve(path, time_limit, workers):
    head, cap, jobs, busy = load(path)
    succ = [[] for _ in jobs]
    for i, j in enumerate(jobs):
        for q in j["preds"]:
            succ[q].append(i)
    inst = cpsat_ref.Instance(path, [j["dur"] for j in jobs], succ, [j["dem"] for j in jobs], cap)
    horizon = max([j["start"] + j["dur"] for j in jobs] + [j["dl"] for j in jobs] + [b[1] for b in busy]) + 1
    m = cp_model.CpModel()
    S, E, I = [], [], []
    for j in jobs:
        hi = j["dl"] if j["dl"] >= 0 else horizon
        s = m.NewIntVar(j["rel"], max(j["rel"], hi - j["dur"]), "")
        e = m.NewIntVar(j["rel"] + j["dur"], max(hi, j["rel"] + j["dur"]), "")
        S.append(s)
        E.append(e)
        I.append(m.NewIntervalVar(s, j["dur"], e, ""))
        m.AddHint(s, j["start"])
    for i, j in enumerate(jobs):
        for q in j["preds"]:
            m.Add(S[i] >= E[q])
    cpsat_ref.add_resources(m, inst, range(len(jobs)), I, [(bs, be - bs, bd) for (bs, be, bd) in busy])
    mk = m.NewIntVar(0, horizon, "")
    m.AddMaxEquality(mk, E)
    m.Minimize(mk)
    sv = cp_model.CpSolver()
    sv.parameters.max_time_in_seconds = time_limit
    sv.parameters.num_workers = workers
    t = time.time()
    st = sv.Solve(m)
    secs = time.time() - t
    found = st in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    valid = check(cap, jobs, busy, [sv.Value(s) for s in S]) if found else 0
    print("%s jobs=%d t0=%d ours_mk=%d ours_lb=%d cpsat_mk=%s cpsat_bound=%d status=%s seconds=%.2f valid=%d" % (
        path, len(jobs), head["t0"], head["makespan"], head["lower_bound"],
        str(int(sv.ObjectiveValue())) if found else "-", int(sv.BestObjectiveBound()), sv.StatusName(st), secs, valid))
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=20.0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for f in a.files:
        solve(f, a.time_limit, a.workers)


if __name__ == "__main__":
    main()
