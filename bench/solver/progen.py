#!/usr/bin/env python3
"""progen.py - single-mode RCPSP instances in PSPLIB .sm format, made the way
ProGen made the J30 and J60 sets, for any number of jobs.

    progen.py gen --jobs N --out DIR [--per-set K] [--seed S] [--prefix P]
                  [--sets LIST] [--nc LIST] [--rf LIST] [--rs LIST]
    progen.py stats [--lft RESULTS.txt] [--label L] [--by nc|rf|rs] FILE.sm...
    progen.py check [--label L] [--verbose] FILE.sm...

The generator follows the definitions of R. Kolisch, A. Sprecher and
A. Drexl, "Characterization and generation of a general class of
resource-constrained project scheduling problems", Management Science
41(10), 1995, 1693-1703, with the parameter values PSPLIB used for J30 and
J60 (R. Kolisch, A. Sprecher, "PSPLIB - a project scheduling problem
library", EJOR 96, 1996, 205-216):

- N non-dummy jobs plus a dummy source (job 1) and sink (job N+2), four
  renewable resources, durations uniform in 1..10.
- Network: exactly 3 start jobs (the only successors of the source) and 3
  finish jobs (the only predecessors of the sink); at most 3 successors and
  3 predecessors per job. First every job that is not a start job gets one
  predecessor drawn from the earlier jobs, then every job that is not a
  finish job and has no successor gets one drawn from the later jobs (the
  latest such job first), then arcs between random pairs are added until
  the network complexity NC
  (arcs per node, the source's and sink's arcs and the two dummies
  included, as the real J30/J60 files count it: 48 arcs on 32 nodes for
  NC 1.5) is reached. No arc is ever redundant: an arc i->j is refused
  when j is already reachable from i, or when it would make an existing arc
  redundant (an arc h->l with h = i or h before i and l = j or l after j).
  Jobs are numbered so that every arc goes from a lower to a higher number.
- Resource factor RF: the share of (job, resource) pairs with a non-zero
  demand, exactly round(RF * 4 * N) pairs drawn at random, then moved so
  that every job uses at least one resource and every resource is used by
  at least one job. Non-zero demands uniform in 1..10.
- Resource strength RS: capacity of resource k = Kmin + round(RS * (Kmax -
  Kmin)), Kmin the largest single demand for k, Kmax the peak of k's
  profile in the earliest-start schedule (precedence only).
- The parameter grid: NC in {1.5, 1.8, 2.1} x RF in {0.25, 0.5, 0.75, 1.0}
  x RS in {0.2, 0.5, 0.7, 1.0}, 48 sets numbered as in PSPLIB (NC slowest,
  RS fastest: set 1 is 1.5/0.25/0.2, set 4 is 1.5/0.25/1.0, set 17 is
  1.8/0.25/0.2). The published J120 set used another grid (RS 0.1 to 0.5);
  --nc, --rf, --rs choose other values.

What is ProGen's and what is ours: the paper defines the parameters and the
order of the network steps; the random choices inside a step (uniform over
the jobs allowed; in the last step random pairs, then, once 50 * nodes of
them in a row were refused, one drawn from every allowed pair), the order
of the second step, and the repair of the resource pairs are our reading.
A network that runs into a dead end (no allowed job in the first two
steps, no allowed pair before NC is reached, or more arcs than NC after
the second step) is drawn again from the same random stream; at 30 jobs
and NC 2.1 that is most networks, so the sets kept are those that admit
NC 2.1, as the real ones must. `check` below confirms on the real J30 and
J60 files every definition listed here except the exact resource factor
(they are up to one pair above it), their 3,840 capacities included.
The numbers written are deterministic: instance i of set p of size N with
--seed S always comes from the same random stream, whatever else is made.

Files are named <prefix><p>_<i>.sm (prefix default g<N>, e.g. g903_7.sm).
The project line carries duedate = MPM-Time = the critical-path length and
horizon = the sum of the durations, as in the real files.

stats prints, for the files given, one Markdown table row of means: nodes,
arcs per node (NC), resource factor, non-zero demand, capacity, critical
path length, and with --lft the mean deviation of the makespans in
RESULTS.txt (lines of build/psplib, e.g. with --method list --rule lft
--sgs serial --improve 0) from the critical-path bound. With --by nc|rf|rs
it prints one row per value of that parameter, taken from the set number
in the file name (files named <letters><30|60|90|120><p>_<i>.sm).

stats --by and check read the parameters from the set number in the name,
so they assume the default grid (not one given with --nc, --rf or --rs).

check recomputes, for files named that way, each definition above from the
file alone (reachability by search, the earliest-start profile one time
unit at a time) and says how many files meet each; exit status 1 if any
file misses one. The resource factor is reported as a distance from
round(RF * 4 * jobs) pairs rather than checked: ProGen allowed a tolerance
there, and the real J30/J60 files use it.
"""
import argparse
import os
import random
import re
import statistics
import sys

NC_GRID = [1.5, 1.8, 2.1]
RF_GRID = [0.25, 0.5, 0.75, 1.0]
RS_GRID = [0.2, 0.5, 0.7, 1.0]
K = 4
MAX_SUCC = 3
MAX_PRED = 3
N_START = 3
N_FINISH = 3


def bits(mask):
    """The indices of the set bits of mask, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class Network:
    """Arcs between nodes 0..n-1 with reachability kept as bit masks."""

    def __init__(self, n):
        self.n = n
        self.succ = [0] * n   # direct successors
        self.pred = [0] * n   # direct predecessors
        self.desc = [0] * n   # reachable from the node, itself excluded
        self.anc = [0] * n    # reaching the node, itself excluded
        self.arcs = 0

    def n_succ(self, i):
        return bin(self.succ[i]).count('1')

    def n_pred(self, j):
        return bin(self.pred[j]).count('1')

    def redundant(self, i, j):
        """Whether i->j is implied by a path already, or would imply an
        existing arc h->l (h = i or an ancestor of i, l = j or a descendant
        of j)."""
        if self.desc[i] >> j & 1:
            return True
        after = self.desc[j] | (1 << j)
        for h in bits(self.anc[i] | (1 << i)):
            if self.succ[h] & after:
                return True
        return False

    def add(self, i, j):
        self.succ[i] |= 1 << j
        self.pred[j] |= 1 << i
        self.arcs += 1
        down = self.desc[j] | (1 << j)
        up = self.anc[i] | (1 << i)
        for a in bits(up):
            self.desc[a] |= down
        for d in bits(down):
            self.anc[d] |= up


def make_network(rng, n_jobs, nc):
    """The network of one instance (nodes 0 = source .. n_jobs+1 = sink), or
    None where the random choices ran into a dead end (the caller draws
    again from the same stream)."""
    n = n_jobs + 2
    sink = n - 1
    start = range(1, N_START + 1)
    finish = range(n_jobs - N_FINISH + 1, n_jobs + 1)
    is_start = lambda j: 1 <= j <= N_START
    is_finish = lambda j: n_jobs - N_FINISH + 1 <= j <= n_jobs
    net = Network(n)
    for j in start:
        net.add(0, j)
    # every job but the start jobs: one predecessor among the earlier jobs
    for j in range(N_START + 1, n_jobs + 1):
        cand = [i for i in range(1, j) if not is_finish(i) and net.n_succ(i) < MAX_SUCC]
        if not cand:
            return None
        net.add(rng.choice(cand), j)
    # every job but the finish jobs that has no successor: one among the
    # later jobs, the latest job first (it has the fewest to choose from)
    for i in range(n_jobs - N_FINISH, 0, -1):
        if net.succ[i]:
            continue
        cand = [j for j in range(i + 1, n_jobs + 1)
                if not is_start(j) and net.n_pred(j) < MAX_PRED and not net.redundant(i, j)]
        if not cand:
            return None
        net.add(i, rng.choice(cand))
    for i in finish:
        net.add(i, sink)
    # more arcs between random pairs until the complexity is reached
    target = -(-int(round(nc * n * 1000)) // 1000)   # ceil(nc * n), free of float noise
    if net.arcs > target:
        return None
    tries = 0
    while net.arcs < target:
        allowed = lambda i, j: (net.n_succ(i) < MAX_SUCC and not is_start(j) and net.n_pred(j) < MAX_PRED
                                and not net.redundant(i, j))
        tries += 1
        if tries <= 50 * n:
            # a random pair; most are allowed while the network is sparse
            i = rng.randint(1, n_jobs - N_FINISH)
            j = rng.randint(i + 1, n_jobs)
            if allowed(i, j):
                net.add(i, j)
                tries = 0
            continue
        # when random pairs keep failing: one drawn from all allowed pairs
        cand = [(i, j) for i in range(1, n_jobs - N_FINISH + 1) for j in range(i + 1, n_jobs + 1) if allowed(i, j)]
        if not cand:
            return None
        net.add(*rng.choice(cand))
        tries = 0
    return net


def make_demands(rng, n_jobs, rf):
    """dem[job][k] for jobs 1..n_jobs (index 0 unused): round(rf*K*n_jobs)
    (job, resource) pairs, every job and every resource in at least one."""
    total = int(round(rf * K * n_jobs))
    total = max(total, n_jobs, K)
    pairs = [(j, k) for j in range(1, n_jobs + 1) for k in range(K)]
    used = set(rng.sample(pairs, total))
    per_job = lambda j: [k for k in range(K) if (j, k) in used]
    per_res = lambda k: [j for j in range(1, n_jobs + 1) if (j, k) in used]
    # a job without a resource takes one from a job that has two or more
    for j in range(1, n_jobs + 1):
        if not per_job(j):
            donors = sorted(p for p in used if len(per_job(p[0])) >= 2)
            used.remove(rng.choice(donors))
            used.add((j, rng.randrange(K)))
    # a resource nobody uses takes a pair from a job with two or more, or
    # from a resource with two or more jobs
    for k in range(K):
        if not per_res(k):
            donors = sorted(p for p in used if len(per_job(p[0])) >= 2 and len(per_res(p[1])) >= 2)
            if donors:
                d = rng.choice(donors)
                used.remove(d)
                used.add((d[0], k))
            else:
                donors = sorted(p for p in used if len(per_res(p[1])) >= 2)
                d = rng.choice(donors)
                used.remove(d)
                used.add((d[0], k))
    dem = [[0] * K for _ in range(n_jobs + 2)]
    for j, k in sorted(used):
        dem[j][k] = rng.randint(1, 10)
    return dem


def earliest_starts(n, succ_lists, dur):
    es = [0] * n
    for i in range(n):          # nodes are numbered topologically
        for j in succ_lists[i]:
            es[j] = max(es[j], es[i] + dur[i])
    return es


def capacities(n, succ_lists, dur, dem, rs):
    es = earliest_starts(n, succ_lists, dur)
    cap = []
    for k in range(K):
        kmin = max(dem[j][k] for j in range(n))
        events = sorted(set(es[j] for j in range(n) if dur[j] > 0))
        kmax = 0
        for t in events:
            use = sum(dem[j][k] for j in range(n) if es[j] <= t < es[j] + dur[j])
            kmax = max(kmax, use)
        cap.append(kmin + int(round(rs * (kmax - kmin) + 1e-9)))
    return cap


def param_sets(nc_grid, rf_grid, rs_grid):
    return [(nc, rf, rs) for nc in nc_grid for rf in rf_grid for rs in rs_grid]


def generate(n_jobs, nc, rf, rs, seed, p, i):
    """One instance: (succ_lists, dur, dem, cap, stream_seed)."""
    stream = "progen/%d/%d/%d/%d" % (seed, n_jobs, p, i)
    rng = random.Random(stream)
    stream_seed = random.Random(stream + "/id").randrange(1, 2 ** 31)
    n = n_jobs + 2
    net = None
    while net is None:
        net = make_network(rng, n_jobs, nc)
    succ_lists = [bits(net.succ[j]) for j in range(n)]
    dur = [0] + [rng.randint(1, 10) for _ in range(n_jobs)] + [0]
    dem = make_demands(rng, n_jobs, rf)
    cap = capacities(n, succ_lists, dur, dem, rs)
    return succ_lists, dur, dem, cap, stream_seed


def write_sm(path, basedata, stream_seed, succ_lists, dur, dem, cap, tardcost):
    n = len(dur)
    es = earliest_starts(n, succ_lists, dur)
    cpm = es[n - 1]
    star = "*" * 72
    out = [star,
           "file with basedata            : %s" % basedata,
           "initial value random generator: %d" % stream_seed,
           star,
           "projects                      :  1",
           "jobs (incl. supersource/sink ):  %d" % n,
           "horizon                       :  %d" % sum(dur),
           "RESOURCES",
           "  - renewable                 :  %d   R" % K,
           "  - nonrenewable              :  0   N",
           "  - doubly constrained        :  0   D",
           star,
           "PROJECT INFORMATION:",
           "pronr.  #jobs rel.date duedate tardcost  MPM-Time",
           "    1 %6d %6d %8d %8d %8d" % (n - 2, 0, cpm, tardcost, cpm),
           star,
           "PRECEDENCE RELATIONS:",
           "jobnr.    #modes  #successors   successors"]
    for j in range(n):
        line = "%4d %8d %10d" % (j + 1, 1, len(succ_lists[j]))
        out.append(line + "       " + "".join("%4d" % (s + 1) for s in succ_lists[j]) if succ_lists[j] else line)
    out += [star,
            "REQUESTS/DURATIONS:",
            "jobnr. mode duration " + " ".join(" R %d" % (k + 1) for k in range(K)),
            "-" * 72]
    for j in range(n):
        out.append("%3d %6d %5d %s" % (j + 1, 1, dur[j], "".join("%5d" % d for d in dem[j])))
    out += [star,
            "RESOURCEAVAILABILITIES:",
            " " + " ".join(" R %d" % (k + 1) for k in range(K)),
            "".join("%5d" % c for c in cap),
            star]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def cmd_gen(a):
    grid = param_sets(a.nc, a.rf, a.rs)
    sets = a.sets if a.sets else list(range(1, len(grid) + 1))
    prefix = a.prefix if a.prefix is not None else "g%d" % a.jobs
    os.makedirs(a.out, exist_ok=True)
    made = 0
    for p in sets:
        if not 1 <= p <= len(grid):
            sys.stderr.write("progen.py: --sets: %d is not in 1..%d\n" % (p, len(grid)))
            return 2
        nc, rf, rs = grid[p - 1]
        for i in range(1, a.per_set + 1):
            succ_lists, dur, dem, cap, sseed = generate(a.jobs, nc, rf, rs, a.seed, p, i)
            tardcost = random.Random("progen/tardcost/%d" % sseed).randint(1, 30)
            basedata = "progen.py n=%d NC=%g RF=%g RS=%g seed=%d" % (a.jobs, nc, rf, rs, a.seed)
            write_sm(os.path.join(a.out, "%s%d_%d.sm" % (prefix, p, i)), basedata, sseed,
                     succ_lists, dur, dem, cap, tardcost)
            made += 1
    print("progen.py: %d instances of %d jobs in %s" % (made, a.jobs, a.out))
    return 0


def read_sm(path):
    """(succ_lists, dur, dem, cap) of a single-mode .sm file."""
    with open(path) as f:
        lines = f.read().split("\n")
    at = lambda title: next(k for k, s in enumerate(lines) if s.startswith(title))
    n = int(lines[at("jobs (incl.")].split(":")[1])
    i = at("PRECEDENCE RELATIONS") + 2
    succ_lists = []
    for j in range(n):
        f = [int(x) for x in lines[i + j].split()]
        succ_lists.append([x - 1 for x in f[3:3 + f[2]]])
    i = at("REQUESTS/DURATIONS") + 3
    dur, dem = [], []
    for j in range(n):
        f = [int(x) for x in lines[i + j].split()]
        dur.append(f[2])
        dem.append(f[3:])
    cap = [int(x) for x in lines[at("RESOURCEAVAILABILITIES") + 2].split()]
    return succ_lists, dur, dem, cap


def instance_stats(path):
    succ_lists, dur, dem, cap = read_sm(path)
    n = len(dur)
    jobs = range(1, n - 1)
    nonzero = [d for j in jobs for d in dem[j] if d > 0]
    return {
        "nodes": n,
        "nc": sum(len(s) for s in succ_lists) / n,
        "rf": len(nonzero) / ((n - 2) * len(cap)),
        "demand": statistics.mean(nonzero),
        "capacity": statistics.mean(cap),
        "cpm": earliest_starts(n, succ_lists, dur)[n - 1],
    }


NAME = re.compile(r"^[a-z]+(30|60|90|120)(\d+)_(\d+)$")


def cmd_stats(a):
    lft = {}
    if a.lft:
        for line in open(a.lft):
            m = re.match(r"(\S+) makespan=(\d+) .*valid=1", line)
            if m:
                lft[m.group(1)] = int(m.group(2))
    groups = {}
    for path in a.files:
        name = os.path.basename(path)[:-3]
        s = instance_stats(path)
        if a.lft:
            if name not in lft:
                sys.stderr.write("progen.py stats: no valid result for %s in %s\n" % (name, a.lft))
                return 1
            s["lft_dev"] = 100.0 * (lft[name] - s["cpm"]) / s["cpm"]
        key = ""
        if a.by:
            m = NAME.match(name)
            if not m:
                sys.stderr.write("progen.py stats: --by needs names like j305_1.sm: %s\n" % name)
                return 1
            nc, rf, rs = param_sets(NC_GRID, RF_GRID, RS_GRID)[int(m.group(2)) - 1]
            key = "%s=%g" % (a.by, {"nc": nc, "rf": rf, "rs": rs}[a.by])
        groups.setdefault(key, []).append(s)
    for key in sorted(groups):
        rows = groups[key]
        mean = lambda f: statistics.mean(r[f] for r in rows)
        cells = [("%s, %s" % (a.label, key)) if key else a.label, "%d" % len(rows), "%.1f" % mean("nodes"),
                 "%.3f" % mean("nc"), "%.3f" % mean("rf"), "%.2f" % mean("demand"), "%.2f" % mean("capacity"),
                 "%.2f" % mean("cpm")]
        cells.append("%.2f%%" % mean("lft_dev") if a.lft else "-")
        print("| " + " | ".join(cells) + " |")
    return 0


def check_file(path, n_jobs, nc, rf, rs):
    """The definitions above, checked on one file without the generator's
    own bookkeeping: a dict property -> bool, and the number of (job,
    resource) pairs in use minus round(rf * 4 * n_jobs)."""
    succ_lists, dur, dem, cap = read_sm(path)
    n = len(dur)
    pred_count = [0] * n
    for i in range(n):
        for j in succ_lists[i]:
            pred_count[j] += 1

    def reaches(a, b, skip):
        """Whether b can be reached from a by a path that does not use the
        arc a -> skip as its first step."""
        stack, seen = [x for x in succ_lists[a] if x != skip], set()
        while stack:
            x = stack.pop()
            if x == b:
                return True
            if x not in seen:
                seen.add(x)
                stack.extend(succ_lists[x])
        return False

    jobs = range(1, n - 1)
    # resource profile of the earliest-start schedule, one time unit at a time
    es = [0] * n
    changed = True
    while changed:
        changed = False
        for i in range(n):
            for j in succ_lists[i]:
                if es[j] < es[i] + dur[i]:
                    es[j], changed = es[i] + dur[i], True
    kmax = [max(sum(dem[j][k] for j in jobs if es[j] <= t < es[j] + dur[j]) for t in range(es[n - 1] + 1))
            for k in range(K)]
    kmin = [max(dem[j][k] for j in jobs) for k in range(K)]
    pairs = sum(1 for j in jobs for k in range(K) if dem[j][k] > 0)
    props = {
        "jobs": n == n_jobs + 2,
        "topological": all(j > i for i in range(n) for j in succ_lists[i]),
        "3 start, 3 finish": sorted(succ_lists[0]) == list(range(1, N_START + 1)) and pred_count[n - 1] == N_FINISH,
        "<= 3 successors and predecessors": all(len(succ_lists[j]) <= MAX_SUCC and pred_count[j] <= MAX_PRED
                                                for j in jobs),
        "no redundant arc": not any(reaches(i, j, j) for i in range(n) for j in succ_lists[i]),
        "arcs = ceil(NC * nodes)": sum(len(x) for x in succ_lists) == -(-int(round(nc * n * 1000)) // 1000),
        "durations 1..10": all(1 <= dur[j] <= 10 for j in jobs) and dur[0] == dur[n - 1] == 0,
        "demands 1..10, one or more per job": all(0 <= dem[j][k] <= 10 for j in jobs for k in range(K))
                                              and all(any(dem[j]) for j in jobs),
        "capacities by RS": all(cap[k] == kmin[k] + int(round(rs * (kmax[k] - kmin[k]) + 1e-9)) for k in range(K)),
    }
    return props, pairs - int(round(rf * K * n_jobs))


def cmd_check(a):
    grid = param_sets(NC_GRID, RF_GRID, RS_GRID)
    passed, rf_off, n_files = {}, [], 0
    for path in a.files:
        m = NAME.match(os.path.basename(path)[:-3])
        if not m:
            sys.stderr.write("progen.py check: needs names like j305_1.sm: %s\n" % path)
            return 1
        nc, rf, rs = grid[int(m.group(2)) - 1]
        props, off = check_file(path, int(m.group(1)), nc, rf, rs)
        n_files += 1
        rf_off.append(abs(off))
        for key, ok in props.items():
            passed[key] = passed.get(key, 0) + ok
            if not ok and a.verbose:
                print("%s: not %s" % (path, key))
    print("%s: %d files; %s; resource pairs - round(RF * 4 * jobs): max |.| %d, mean |.| %.2f" % (
        a.label, n_files, ", ".join("%s %d" % (k, v) for k, v in passed.items()), max(rf_off),
        statistics.mean(rf_off)))
    return 0 if all(v == n_files for v in passed.values()) else 1


def floats(s):
    return [float(x) for x in s.split(",")]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd")
    g = sub.add_parser("gen")
    g.add_argument("--jobs", type=int, required=True)
    g.add_argument("--out", required=True)
    g.add_argument("--per-set", type=int, default=10)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--prefix")
    g.add_argument("--sets", type=lambda s: [int(x) for x in s.split(",")])
    g.add_argument("--nc", type=floats, default=NC_GRID)
    g.add_argument("--rf", type=floats, default=RF_GRID)
    g.add_argument("--rs", type=floats, default=RS_GRID)
    s = sub.add_parser("stats")
    s.add_argument("--lft")
    s.add_argument("--label", default="instances")
    s.add_argument("--by", choices=["nc", "rf", "rs"])
    s.add_argument("files", nargs="+")
    c = sub.add_parser("check")
    c.add_argument("--label", default="instances")
    c.add_argument("--verbose", action="store_true")
    c.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "gen":
        if a.jobs < N_START + N_FINISH + 1:
            sys.stderr.write("progen.py: --jobs must be at least %d\n" % (N_START + N_FINISH + 1))
            return 2
        return cmd_gen(a)
    if a.cmd == "stats":
        return cmd_stats(a)
    if a.cmd == "check":
        return cmd_check(a)
    ap.print_help()
    return 2


if __name__ == "__main__":
    sys.exit(main())
