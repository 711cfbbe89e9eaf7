#!/usr/bin/env python3
"""Summarise build/psplib output against the PSPLIB bounds.

usage: psplib_stats.py BOUNDS.csv RESULTS.txt [LABEL]

BOUNDS.csv is ../shared/data/psplib/solutions/j{30,60}_bounds.csv (columns
instance, cpm_lb, lb, ub, optimal); RESULTS.txt the lines of build/psplib.
Prints one Markdown table row: instances, at best known (= optimum where
proven), proven optimal by us, mean and max deviation from the best known
upper bound, mean deviation from the critical-path bound, median and max
time per instance, invalid schedules."""
import csv
import re
import statistics
import sys


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    bounds = {r["instance"]: r for r in csv.DictReader(open(sys.argv[1]))}
    label = sys.argv[3] if len(sys.argv) > 3 else sys.argv[2]
    rows = []
    for line in open(sys.argv[2]):
        m = re.match(r"(\S+) makespan=(\d+) lb=(\d+) optimal=([01]) valid=([01]) ms=([0-9.]+)", line)
        if m:
            rows.append((m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), float(m.group(6))))
    if not rows:
        print("no results in %s" % sys.argv[2], file=sys.stderr)
        return 1
    dev_ub, dev_cpm, times = [], [], []
    at_ub = proven = invalid = below = 0
    for name, mk, lb, opt, valid, ms in rows:
        b = bounds[name]
        ub, cpm, best_lb = int(b["ub"]), int(b["cpm_lb"]), int(b["lb"])
        dev_ub.append(100.0 * (mk - ub) / ub)
        dev_cpm.append(100.0 * (mk - cpm) / cpm)
        at_ub += mk == ub
        below += mk < ub
        proven += opt
        invalid += not valid
        times.append(ms)
        if opt and b["optimal"] == "1" and mk != ub:
            print("WRONG: %s claimed optimal %d, known optimum %d" % (name, mk, ub), file=sys.stderr)
        if mk < best_lb:
            print("WRONG: %s makespan %d below the proven lower bound %d" % (name, mk, best_lb), file=sys.stderr)
    print("| %s | %d | %d | %d | %d | %.3f%% | %.2f%% | %.2f%% | %.3f | %.1f | %d |" % (
        label, len(rows), at_ub, below, proven, statistics.mean(dev_ub), max(dev_ub), statistics.mean(dev_cpm),
        statistics.median(times), max(times), invalid))
    return 0


if __name__ == "__main__":
    sys.exit(main())
