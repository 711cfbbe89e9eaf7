#!/usr/bin/env python3
"""larger_table.py - the table rows of bench/solver/larger.sh for one group of
instances.

    larger_table.py LABEL OURS.txt CPSAT.txt BOUNDS.csv|- [CPSAT_LONG.txt|-]

OURS.txt: lines of build/psplib; CPSAT.txt and CPSAT_LONG.txt: lines of
bench/solver/cpsat_ref.py --method whole (the second, where given, from a longer
run on some of the instances); BOUNDS.csv: PSPLIB's j{30,60}_bounds.csv for
the real sets, or -.

Two Markdown rows: all instances, then the open ones (neither solver proved
its makespan optimal: the larger of the two lower bounds is below the
smaller makespan). Deviations are 100 * (makespan - reference) / reference,
averaged over the instances. The best lower bound is the larger of ours and
CP-SAT's (PSPLIB's bounds are not used there, so real and generated sets are
measured alike); "best found" is the smallest makespan of ours, CP-SAT's
and the longer CP-SAT run's. A makespan below a proven lower bound, or an
invalid schedule, is reported on stderr as WRONG and makes the exit status 1.
"""
import csv
import re
import statistics
import sys

HEADER = ("| instances | count | ours: mean dev. from CP-SAT | ours: mean dev. from best lb | "
          "CP-SAT: mean dev. from best lb | ours: mean dev. from best found | ours <= CP-SAT | ours < CP-SAT | "
          "CP-SAT proven optimal | ours: mean dev. from PSPLIB best known | CP-SAT: same | ours mean ms | "
          "ours median ms | ours max ms | CP-SAT mean s | CP-SAT max s |")


def read_cpsat(path):
    out = {}
    if path == "-":
        return out
    for line in open(path):
        m = re.match(r"(\S+) method=whole makespan=(\d+) lb=(\d+) status=(\S+) seconds=([0-9.]+) valid=([01])", line)
        if m:
            out[m.group(1)] = (int(m.group(2)), int(m.group(3)), m.group(4), float(m.group(5)), m.group(6) == "1")
    return out


def main():
    if len(sys.argv) == 2 and sys.argv[1] == "--header":
        print(HEADER)
        print("|" + "---|" * HEADER.count(" | ") + "---|")
        return 0
    if len(sys.argv) < 5:
        print(__doc__, file=sys.stderr)
        return 2
    label, ours_f, cpsat_f, bounds_f = sys.argv[1:5]
    long_f = sys.argv[5] if len(sys.argv) > 5 else "-"
    ours = {}
    for line in open(ours_f):
        m = re.match(r"(\S+) makespan=(\d+) lb=(\d+) optimal=[01] valid=([01]) ms=([0-9.]+)", line)
        if m:
            ours[m.group(1)] = (int(m.group(2)), int(m.group(3)), float(m.group(5)), m.group(4) == "1")
    cp = read_cpsat(cpsat_f)
    cp_long = read_cpsat(long_f)
    psplib = {}
    if bounds_f != "-":
        psplib = {r["instance"]: (int(r["ub"]), int(r["lb"])) for r in csv.DictReader(open(bounds_f))}
    wrong = 0
    best_lb, best_mk = {}, {}
    for x in ours:
        runs = [ours[x]] + [r[x] for r in (cp, cp_long) if x in r]
        best_lb[x] = max([ours[x][1]] + [r[x][1] for r in (cp, cp_long) if x in r])
        best_mk[x] = min(r[0] for r in runs)
        proven = max(best_lb[x], psplib[x][1] if x in psplib else 0)
        for who, r in (("ours", ours), ("CP-SAT", cp), ("CP-SAT long", cp_long)):
            if x in r and not r[x][-1]:
                print("WRONG: %s: %s's schedule is invalid" % (x, who), file=sys.stderr)
                wrong += 1
        if best_mk[x] < proven:
            print("WRONG: %s: makespan %d below a proven lower bound %d" % (x, best_mk[x], proven), file=sys.stderr)
            wrong += 1
    pct = lambda a, b: 100.0 * (a - b) / b
    mean = lambda xs: "%.2f%%" % statistics.mean(xs) if xs else "-"

    def row(name, names):
        if not names:
            print("| %s | 0 |%s" % (name, " - |" * (HEADER.count(" | ") - 1)))
            return
        both = [x for x in names if x in cp]
        count = lambda f: "%d/%d" % (sum(1 for x in both if f(x)), len(both)) if both else "-"
        cells = [name, str(len(names)),
                 mean([pct(ours[x][0], cp[x][0]) for x in both]),
                 mean([pct(ours[x][0], best_lb[x]) for x in names]),
                 mean([pct(cp[x][0], best_lb[x]) for x in both]),
                 mean([pct(ours[x][0], best_mk[x]) for x in names]),
                 count(lambda x: ours[x][0] <= cp[x][0]),
                 count(lambda x: ours[x][0] < cp[x][0]),
                 count(lambda x: cp[x][2] == "OPTIMAL"),
                 mean([pct(ours[x][0], psplib[x][0]) for x in names if x in psplib]),
                 mean([pct(cp[x][0], psplib[x][0]) for x in both if x in psplib]),
                 "%.1f" % statistics.mean(ours[x][2] for x in names),
                 "%.1f" % statistics.median(ours[x][2] for x in names),
                 "%.1f" % max(ours[x][2] for x in names),
                 "%.2f" % statistics.mean(cp[x][3] for x in both) if both else "-",
                 "%.2f" % max(cp[x][3] for x in both) if both else "-"]
        print("| " + " | ".join(cells) + " |")

    names = sorted(ours)
    row(label, names)
    row(label + ", open", [x for x in names if best_lb[x] < best_mk[x]])
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
