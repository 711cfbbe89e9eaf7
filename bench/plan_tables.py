#!/usr/bin/env python3
"""The planner's benchmarks: build/plan --json on the Concerto paper's cases,
a grid of GPT models, layouts and clusters, the sensitivity to alpha and to
noise, and planning time against ops per rank. Prints Markdown tables.
Every step time below comes from the cost model: SIMULATED, not measured.

usage: plan_tables.py [--plan build/plan] [--clusters a800,a100,h100] [paper|grid|sensitivity|variants|all] ...

variants: S+AD against S+AD near, S+AD N=2 and S+AD matmul-adjacent
(build/plan --ad-variants) on the paper's cases and the grid, with
geometric means over the grid.

Progress (each run of build/plan and its wall time) goes to standard error.
Python 3 standard library only."""
import json
import subprocess
import sys
import time

PLAN = "build/plan"
PEERS = ["pytorch-ddp", "megatron-lm", "deepspeed-zero3", "llm.c", "xla-lhs"]
RUNS = []   # (args, wall seconds, n_ops, plan_s): every run, for the scale table

# PCIe 4.0 x16: 16 GT/s a lane, 128b/130b, 31.5 GB/s each way (PCI Express
# Base Specification 4.0); about 25 GB/s of it is reached in practice.
# The cluster's link efficiency (0.82) applies on top.
PCIE4_GBPS = "25"


def plan(args):
    """One run of build/plan with --json; its object."""
    cmd = [PLAN] + args + ["--json", "--quiet"]
    t0 = time.time()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    wall = time.time() - t0
    if out.returncode != 0:
        sys.stderr.write("plan_tables: %s failed (%d): %s\n" % (" ".join(cmd), out.returncode, out.stderr.strip()))
        sys.exit(1)
    j = json.loads(out.stdout)
    RUNS.append((args, wall, j["n_ops"], j["plan_s"]))
    sys.stderr.write("plan_tables: [%6.1f s] %s\n" % (wall, " ".join(args)))
    return j


def ours(j):
    """The library's best of S, S+F, S+AD, and which."""
    best = min((j["s_us"], "S"), (j["sf_us"], "S+F"), (j["sad_us"], "S+AD"))
    return best


def variant(j, name):
    for v in j["variants"]:
        if v["name"] == name:
            return v
    raise KeyError(name)


def ms(us):
    return "-" if us is None else "%.1f" % (us / 1000.0) if us >= 100000 else "%.2f" % (us / 1000.0)


def table(head, rows):
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(str(x) for x in r) + " |")


def layout_args(tp=1, dp=None, pp=1, zero=0, sp=False):
    a = ["--tp", str(tp), "--pp", str(pp), "--zero", str(zero)]
    if dp is not None:
        a += ["--dp", str(dp)]
    if sp:
        a.append("--sp")
    return a


def layout_name(tp=1, dp=None, pp=1, zero=0, sp=False):
    s = []
    if tp > 1:
        s.append("tp%d" % tp)
    if pp > 1:
        s.append("pp%d" % pp)
    if dp and dp > 1:
        s.append("dp%d" % dp)
    if zero:
        s.append("zero%d" % zero)
    if sp:
        s.append("sp")
    return " ".join(s) or "single"


# ---- the paper's cases -------------------------------------------------------
# Model shapes: GPT-3's (Brown et al. 2020, Table 2.1). The paper's model
# sizes and micro-batches were not found; see bench/RESULTS.md for the
# assumptions. Each case: label, build/plan args, paper's figures (s).
GPT67 = ["--layers", "32", "--hidden", "4096", "--heads", "32"]   # GPT-3 6.7B


def paper_cases():
    """The paper's cases: label, build/plan args, the paper's figures (s)."""
    return [
        ("(1,16,1) NVLink fp16, GPT 6.7B, tp16, micro-batch 8", GPT67 + ["--micro-batch", "8", "--dtype", "fp16"]
         + layout_args(tp=16), (0.974, 0.860, 0.817)),
        ("(1,16,1) NVLink fp16, GPT 1.3B, tp16, micro-batch 8", ["--model", "gpt-1.3b", "--micro-batch", "8", "--dtype", "fp16"]
         + layout_args(tp=16), (0.974, 0.860, 0.817)),
        ("(1,8,2) as (P,T,D): PCIe fp32, GPT 1.3B, tp8 dp2, micro-batch 2", ["--model", "gpt-1.3b", "--micro-batch", "2", "--dtype", "fp32",
         "--intra-gbps", PCIE4_GBPS] + layout_args(tp=8, dp=2), (6.566, 6.295, 5.616)),
        ("(1,8,2) as (D,T,P): PCIe fp32, GPT 1.3B, tp8 pp2 (8 micro-batches of 1)", ["--model", "gpt-1.3b", "--dtype", "fp32",
         "--intra-gbps", PCIE4_GBPS] + layout_args(tp=8, pp=2), (6.566, 6.295, 5.616)),
        ("(1,8,2) as (P,T,D): PCIe fp32, GPT 6.7B, tp8 dp2, micro-batch 1", GPT67 + ["--dtype", "fp32",
         "--intra-gbps", PCIE4_GBPS] + layout_args(tp=8, dp=2), (6.566, 6.295, 5.616)),
    ]


def paper():
    print()
    print("### The paper's cases (SIMULATED; the paper's figures measured on 4 x 8 A800-80GB)")
    print()
    rows = []
    cases = paper_cases()
    for label, args, (pb, ps, psad) in cases:
        j = plan(args + ["--cluster", "a800", "--nodes", "2"])
        rows.append([label, "%.3f / %.3f / %.3f" % (pb, ps, psad), "%.3f / %.3f" % (ps / pb, psad / pb),
                     "%s / %s / %s" % (ms(j["program_us"]), ms(j["s_us"]), ms(j["sad_us"])),
                     "%.3f / %.3f" % (j["s_us"] / j["program_us"], j["sad_us"] / j["program_us"]),
                     "%.3f" % (j["lower_bound_us"] / j["program_us"]), variant(j, "S+AD")["what"]])
    table(["case (16 GPUs, a800 x 2 nodes)", "paper baseline / S / S+AD s (measured)", "paper S/base, S+AD/base",
           "ours program / S / S+AD ms (SIMULATED)", "ours S/base, S+AD/base (SIMULATED)", "bound/base", "S+AD did"], rows)
    print()
    rows = []
    for mb, gpus, (pb, pf) in [(mb, g, p) for mb in (1, 4) for g, p in ((8, (0.517, 0.505)), (16, (0.531, 0.504)), (32, (0.614, 0.468)))]:
        args = ["--model", "gpt-1.3b", "--micro-batch", str(mb), "--dtype", "fp16", "--cluster", "a800",
                "--nodes", str(gpus // 8)] + layout_args(dp=gpus, zero=3)
        j = plan(args)
        sf = variant(j, "S+F")
        rows.append(["GPT 1.3B dp%d zero3, micro-batch %d" % (gpus, mb), gpus, "%.3f -> %.3f" % (pb, pf), "%.3f" % (pf / pb),
                     "%s -> %s" % (ms(j["s_us"]), ms(j["sf_us"])), "%.3f" % (j["sf_us"] / j["s_us"]),
                     "%s" % ms(j["program_us"]), "%.3f" % (j["sf_us"] / j["program_us"]), sf["what"]])
    table(["ZeRO-3 fp16 case", "GPUs", "paper before -> after fusion s (measured)", "paper after/before",
           "ours S -> S+F ms (SIMULATED)", "ours S+F/S", "ours program ms", "ours S+F/program", "S+F did"], rows)


# ---- the grid ------------------------------------------------------------------
# (model, layout kwargs, GPU counts): layouts a practitioner would pick.
GRID = [
    ("gpt-1.3b", dict(dp=8), [8]),
    ("gpt-1.3b", dict(tp=2, dp=4, zero=1), [8]),
    ("gpt-1.3b", dict(dp=64, zero=3), [64]),
    ("gpt-1.3b", dict(dp=256), [256]),
    ("gpt-1.3b", dict(dp=1024, zero=1), [1024]),
    ("gpt-13b", dict(tp=8, dp=4), [32]),
    ("gpt-13b", dict(tp=8, pp=2, dp=8, sp=True), [128]),
    ("gpt-13b", dict(tp=8, pp=2, dp=64, zero=1, sp=True), [1024]),
    ("gpt-13b", dict(tp=8, dp=128, zero=1), [1024]),
    ("gpt-175b", dict(tp=8, pp=8, dp=2, zero=1), [128]),
    ("gpt-175b", dict(tp=8, pp=16, dp=2), [256]),
    ("gpt-175b", dict(tp=8, pp=8, dp=16, zero=1), [1024]),
    ("gpt-175b", dict(tp=8, pp=16, dp=8, zero=1), [1024]),
]
CLUSTERS = ["a800", "a100", "h100"]


def variants(clusters):
    """S+AD (decomposition by the rules) against its restrictions: S+AD near
    (immediate producers and consumers only), S+AD N=2 (two chunks) and S+AD
    matmul-adjacent (split rules on the matmuls only, depth 1: what
    collective matmul does)."""
    import math
    print()
    print("### S+AD against S+AD near, S+AD N=2 and S+AD matmul-adjacent (SIMULATED), ms; each falls back to S+F where it "
          "does not pay")
    print()
    rows, ratios = [], {"S+AD": [], "S+AD near": [], "S+AD N=2": [], "S+AD matmul-adjacent": []}
    runs = [(label, args + ["--cluster", "a800", "--nodes", "2"], "paper") for label, args, _ in paper_cases()]
    for model, lay, gpus_list in GRID:
        for gpus in gpus_list:
            for cl in clusters:
                runs.append(("%s %s, %s" % (model, layout_name(**lay), cl),
                             ["--model", model, "--cluster", cl, "--nodes", str(gpus // 8)] + layout_args(**lay), "grid"))
    for label, args, part in runs:
        j = plan(args + ["--ad-variants"])
        sf = j["sf_us"]
        v = {n: variant(j, n)["us"] for n in ratios}
        if part == "grid":
            for n in ratios:
                ratios[n].append(v[n] / sf)
        rows.append([label, j["n_ops"], ms(sf)] + ["%s (%.3f)" % (ms(v[n]), v[n] / sf) for n in ratios]
                    + ["%.1f" % variant(j, "S+AD")["plan_s"]])
    table(["configuration", "ops", "S+F", "S+AD (/ S+F)", "S+AD near (/ S+F)", "S+AD N=2 (/ S+F)",
           "S+AD matmul-adjacent (/ S+F)", "S+AD plan s"], rows)
    print()
    print("Geometric mean over the grid's %d rows, against S+F: %s" % (
        len(ratios["S+AD"]), ", ".join("%s %.4f" % (n, math.exp(sum(math.log(r) for r in ratios[n]) / len(ratios[n])))
                                       for n in ratios if ratios[n])))


def grid(clusters):
    print()
    print("### The grid (SIMULATED): one step of stage 0's rank, ms; ours = min(S, S+F, S+AD)")
    print()
    rows, behind = [], []
    for model, lay, gpus_list in GRID:
        for gpus in gpus_list:
            for cl in clusters:
                j = plan(["--model", model, "--cluster", cl, "--nodes", str(gpus // 8)] + layout_args(**lay))
                o, which = ours(j)
                peers = j["peers"]
                best_peer = min(PEERS, key=lambda p: peers[p])
                ours_plan = sum(variant(j, v)["plan_s"] for v in ("S", "S+F", "S+AD"))
                name = "%s %s" % (model, layout_name(**lay))
                rows.append([name, cl, gpus, j["n_ops"], ms(j["program_us"])] + [ms(peers[p]) for p in PEERS]
                            + ["%s (%s)" % (ms(o), which), "%.3f" % (o / peers[best_peer]), ms(j["lower_bound_us"]),
                               "%.3f" % (o / j["lower_bound_us"]), "%.1f" % ours_plan, "%.1f" % j["plan_s"]])
                for p in PEERS:
                    if o > peers[p]:
                        behind.append([name, cl, gpus, p, "%.3f" % (peers[p] / 1000.0), "%.3f" % (o / 1000.0),
                                       "%+.2f%%" % (100.0 * (o / peers[p] - 1))])
    table(["model, layout", "cluster", "GPUs", "ops", "program"] + PEERS
          + ["ours", "ours / best peer", "lower bound", "ours / bound", "ours plan s", "all plan s"], rows)
    print()
    if behind:
        print("Rows where ours is above a peer (SIMULATED):")
        print()
        table(["model, layout", "cluster", "GPUs", "peer", "peer ms", "ours ms", "ours vs peer"], behind)
    else:
        print("Ours is at or below every peer on every row (SIMULATED).")


def scale():
    print()
    print("### Scale: planning time against ops per rank (every run above, grouped by ops per rank; wall seconds on this machine)")
    print()
    groups = {}
    for args, wall, n_ops, plan_s in RUNS:
        groups.setdefault(n_ops, []).append((plan_s, args))
    rows = []
    for n_ops in sorted(groups):
        g = sorted(groups[n_ops], key=lambda r: r[0])
        rows.append([n_ops, len(g), "%.1f" % g[0][0], "%.1f" % g[len(g) // 2][0], "%.1f" % g[-1][0], " ".join(g[-1][1])])
    table(["ops per rank", "runs", "min plan s", "median", "max", "the slowest run's arguments"], rows)


# ---- sensitivity ------------------------------------------------------------------
SENS = [
    ("gpt-1.3b dp64 zero3, a800", ["--model", "gpt-1.3b", "--cluster", "a800", "--nodes", "8"] + layout_args(dp=64, zero=3)),
    ("gpt-1.3b tp2 dp4 zero1, h100", ["--model", "gpt-1.3b", "--cluster", "h100", "--nodes", "1"] + layout_args(tp=2, dp=4, zero=1)),
    ("gpt-175b tp8 pp8 dp2 zero1, a100", ["--model", "gpt-175b", "--cluster", "a100", "--nodes", "16"]
     + layout_args(tp=8, pp=8, dp=2, zero=1)),
]
ALPHAS = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5]
SEEDS = [1, 2, 3, 4, 5]


def ours_true(j):
    """The true step time of the variant the library would choose (the best
    of S, S+F, S+AD by the numbers it planned with), and which."""
    _, which = ours(j)
    return variant(j, which)["true_us"], which


def sensitivity():
    print()
    print("### Sensitivity to alpha (SIMULATED): planned with 1.2, judged with A, against planned with A")
    print()
    rows = []
    for label, args in SENS:
        for a in ALPHAS:
            wrong = plan(args + ["--alpha", "1.2", "--alpha-true", "%.1f" % a])
            right = plan(args + ["--alpha", "%.1f" % a])
            o_wrong, w_which = ours_true(wrong)
            o_right, r_which = ours(right)
            rows.append([label, "%.1f" % a, ms(variant(wrong, "program")["true_us"]), "%s (%s)" % (ms(o_wrong), w_which),
                         "%s (%s)" % (ms(o_right), r_which), "%+.3f%%" % (100.0 * (o_wrong / o_right - 1))])
    table(["configuration", "true alpha A", "program ms at A", "ours planned at 1.2, judged at A", "ours planned at A",
           "loss of the wrong alpha"], rows)
    print()
    print("### Sensitivity to noise (SIMULATED): planned with every duration times 1 + u, u uniform in [-F, F]; "
          "judged with the true durations")
    print()
    rows = []
    for label, args in SENS:
        clean = plan(args)
        o_clean, which = ours(clean)
        for f in (0.05, 0.10):
            ex = []
            for seed in SEEDS:
                j = plan(args + ["--noise", "%.2f" % f, "--seed", str(seed)])
                ex.append(100.0 * (ours_true(j)[0] / o_clean - 1))
            rows.append([label, "+-%d%%" % round(f * 100), len(SEEDS), "%s (%s)" % (ms(o_clean), which),
                         "%+.2f%%" % (sum(ex) / len(ex)), "%+.2f%%" % max(ex), "%+.2f%%" % min(ex)])
    table(["configuration", "noise F", "seeds", "ours noiseless ms",
           "ours under noise, judged true: mean excess", "max", "min"], rows)
    print()
    print("(Ours is the best of S, S+F and S+AD by the numbers planned with, judged under the true ones; "
          "a negative excess: the plan chosen under noise happens to be better than the noiseless one.)")


def main(argv):
    global PLAN
    parts = []
    clusters = CLUSTERS
    i = 0
    while i < len(argv):
        if argv[i] == "--plan":
            PLAN = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--clusters":
            clusters = argv[i + 1].split(",")
            i += 2
            continue
        parts.append(argv[i])
        i += 1
    if not parts or "all" in parts:
        parts = ["paper", "grid", "sensitivity", "variants"]
    for p in parts:
        if p not in ("paper", "grid", "sensitivity", "variants"):
            sys.stderr.write(__doc__)
            return 2
    print("Every step time below is SIMULATED by build/plan from the cost model in concerto.h; none is measured.")
    t0 = time.time()
    if "paper" in parts:
        paper()
    if "grid" in parts:
        grid(clusters)
    if "sensitivity" in parts:
        sensitivity()
    if "variants" in parts:
        variants(clusters)
    scale()
    print()
    print("(%d runs of build/plan, %.0f s in all on this machine)" % (len(RUNS), time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
