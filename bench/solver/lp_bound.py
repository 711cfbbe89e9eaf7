#!/usr/bin/env python3
"""bench/solver/lp_bound.py FILE.sm... - a reference lower bound for PSPLIB
instances, beside branch and bound's root bound (build/psplib's lb=).

The bound is the linear relaxation of preemptive scheduling over feasible
sets (Mingozzi et al. 1998; with time windows, Brucker & Knust 2000): for a
makespan T, every job j may only run inside its window [es_j, T - q_j],
es_j its head and q_j its tail (longest paths, resources ignored). The
windows' ends cut [0, T] into intervals. In each interval, every set of jobs
that may run there together (all of them available, no two related by
precedence, together within every capacity) gets a variable: how long the
set runs. A job must run for its duration in total, and the sets of an
interval run for at most its length. If that linear program has no
solution, no schedule ends by T. The bound is the least T with a solution,
searched upwards from the critical path.

The sets are enumerated (maximal ones only), which suits 30-job instances
with scarce resources; it needs OR-tools (its GLOP solver), like
bench/solver/cpsat_ref.py: python3 -m venv build/venv && build/venv/bin/pip install ortools.
Prints one line per instance: name, critical path, LP bound.
"""
import os
import sys

try:
    from ortools.linear_solver import pywraplp
except ImportError:
    sys.exit("bench/solver/lp_bound.py needs OR-tools: python3 -m venv build/venv && build/venv/bin/pip install ortools")


def read_sm(path):
    lines = open(path).read().split("\n")

    def section(title):
        for k, line in enumerate(lines):
            if line.startswith(title):
                return k
        sys.exit("%s: no %s section" % (path, title))

    succ, k = {}, section("PRECEDENCE RELATIONS") + 2
    while not lines[k].startswith("*"):
        f = [int(x) for x in lines[k].split()]
        succ[f[0] - 1] = [x - 1 for x in f[3:]]
        k += 1
    n = len(succ)
    dur, dem, k = [0] * n, [None] * n, section("REQUESTS/DURATIONS") + 3
    while not lines[k].startswith("*"):
        f = [int(x) for x in lines[k].split()]
        dur[f[0] - 1], dem[f[0] - 1] = f[2], f[3:]
        k += 1
    cap = [int(x) for x in lines[section("RESOURCEAVAILABILITIES") + 2].split()]
    return n, succ, dur, dem, cap


def topological(n, succ):
    indeg = [0] * n
    for u in range(n):
        for v in succ[u]:
            indeg[v] += 1
    order, stack = [], [u for u in range(n) if indeg[u] == 0]
    while stack:
        u = stack.pop()
        order.append(u)
        for v in succ[u]:
            indeg[v] -= 1
            if indeg[v] == 0:
                stack.append(v)
    return order


def lp_feasible(n, succ, dur, dem, cap, head, tail, related, T):
    jobs = [j for j in range(n) if dur[j] > 0]
    end = {j: T - tail[j] + dur[j] for j in jobs}   # latest finish
    if any(head[j] + dur[j] > end[j] for j in jobs):
        return False
    points = sorted(set([head[j] for j in jobs] + [end[j] for j in jobs]))
    lp = pywraplp.Solver.CreateSolver("GLOP")
    runs = {j: [] for j in jobs}
    for a, b in zip(points, points[1:]):
        avail = [j for j in jobs if head[j] <= a and b <= end[j]]
        sets = []

        def grow(start, cur, use):
            extended = False
            for t in range(start, len(avail)):
                j = avail[t]
                if any(j in related[i] for i in cur):
                    continue
                nu = [u + d for u, d in zip(use, dem[j])]
                if any(u > c for u, c in zip(nu, cap)):
                    continue
                cur.append(j)
                grow(t + 1, cur, nu)
                cur.pop()
                extended = True
            if cur and not extended:
                sets.append(frozenset(cur))

        grow(0, [], [0] * len(cap))
        maximal = [s for s in set(sets) if not any(s < o for o in sets)]
        xs = []
        for s in maximal:
            x = lp.NumVar(0, b - a, "")
            xs.append(x)
            for j in s:
                runs[j].append(x)
        if xs:
            lp.Add(sum(xs) <= b - a)
    for j in jobs:
        if not runs[j]:
            return False
        lp.Add(sum(runs[j]) >= dur[j])
    lp.Minimize(0)
    return lp.Solve() == pywraplp.Solver.OPTIMAL


def main(paths):
    if not paths:
        sys.exit("usage: bench/solver/lp_bound.py FILE.sm...")
    for path in paths:
        n, succ, dur, dem, cap = read_sm(path)
        order = topological(n, succ)
        head, tail = [0] * n, [0] * n
        for u in order:
            for v in succ[u]:
                head[v] = max(head[v], head[u] + dur[u])
        for u in reversed(order):
            tail[u] = dur[u] + max([tail[v] for v in succ[u]], default=0)
        reach = [set() for _ in range(n)]
        for u in reversed(order):
            for v in succ[u]:
                reach[u] |= {v} | reach[v]
        related = [set(reach[u]) for u in range(n)]
        for u in range(n):
            for v in reach[u]:
                related[v].add(u)
        cp = max(head[u] + tail[u] for u in range(n))
        T = cp
        while not lp_feasible(n, succ, dur, dem, cap, head, tail, related, T):
            T += 1
        print("%s cpm=%d lp_bound=%d" % (os.path.splitext(os.path.basename(path))[0], cp, T))


if __name__ == "__main__":
    main(sys.argv[1:])
