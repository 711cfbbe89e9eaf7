/* plan - what the library would do to a GPT training step on a cluster you
   do not have, and what the systems in use today would do: every figure is
   simulated from the cluster cost model in concerto.h (cc_cluster_*), none
   is measured.

   build/plan [--model gpt-1.3b|gpt-13b|gpt-175b] [--layers L] [--hidden C]
              [--heads H] [--seq T] [--vocab V] [--micro-batch B]
              [--micro-batches M] [--tp N] [--dp N] [--pp N] [--zero 0|1|2|3]
              [--sp] [--dtype fp16|bf16|fp32] [--cluster a800|a100|h100]
              [--nodes N] [--gpus-per-node G] [--intra-gbps X] [--inter-gbps X]
              [--alpha A] [--alpha-true A] [--noise F] [--seed N]
              [--budget N] [--memory-cap BYTES] [--memory-curve N] [--json]
              [--trace FILE] [--sm FILE] [--ad-variants] [--quiet]

   The step is one rank's graph (pipeline stage 0, TP and DP rank 0) with
   its micro-batches, built by the same code as the example trainers' steps
   (examples/steps/gpt_step.h) with buffers that are only sizes. Its ops get
   durations from the cost model: a compute op from its FLOPs and bytes
   against the device's peaks, a collective from NCCL's algorithms on the
   links its group spans. Ranks are laid out TP innermost, then DP, then PP
   (Megatron-LM's order), so a TP group of at most a node's GPUs stays
   inside one node.

   Then, each predicted with the stream simulator (cc_simulate, which
   stretches compute that overlaps communication by --alpha):
     program    the step as a framework issues it: every collective where
                the program puts it, one per tensor
     peers      each peer's policy (tools/peers.h): its buckets, where it
                launches them, its order
     S          the library's schedule of the step (cc_sched_solve)
     S+F        with fusion (cc_graph_fuse) before scheduling
     S+AD       with decomposition, then fusion, before scheduling
   S+AD tries 2, 4, 8 and 16 chunks (cc_rewrite_desc.max_chunks 16).
   --ad-variants adds three restricted decompositions beside S+AD, each
   judged the same way (they isolate what the rules add):
     S+AD near  contexts of the collective's immediate producers and
                consumers only (cc_rewrite_desc.max_context_depth 1)
     S+AD N=2   every collective split in two chunks (max_chunks 2)
     S+AD matmul-adjacent
                what collective matmul (Wang et al., async TP) does: the
                step built with split rules on its matmuls only
                (gpt_step_desc.rules_matmul_only), contexts of depth 1, so
                a collective is split with the matmuls next to it and its
                other neighbours stay whole
   with the lower bound (cc_lower_bounds and the solver's own), the exposed
   communication (cc_exposed_comm_us) and the planning time of each.
   The rewrites screen up to 4,000 candidates each by simulation and
   reschedule the step in full for the best (cc_rewrite_desc's default
   budget, full_judgements 32; steps above 3,000 ops: 96 candidates, each
   full judgement one list pass without odd-even windows). S+AD's
   decomposition screens candidate steps of 6,000,000 ops in all, at
   most 4,000 (cc_rewrite_desc.max_screen_ops: a budget in work, as
   each screen builds and simulates the whole step as decomposed so
   far), and judges without odd-even windows, a step above 1,000 ops by
   list passes (its chunks make it one of several thousand); the fusion
   after it is set by the decomposed step's size. Where decomposition
   splits nothing, S+AD is S+F without fusing again.
   The copies a rewrite adds (packing a bucket, a reduce-scatter's or
   all-gather's chunks) read and write their bytes at the device's
   streaming bandwidth: cc_rewrite_desc.copy_us_per_byte =
   2 / (mem_gbps * mem_efficiency * 1e3) from the cluster's device.

   --noise F / --alpha-true A: plan with durations perturbed by up to F
   (uniform, seeded) or with alpha A' = --alpha, then report the chosen
   order's step under the true durations (the unperturbed ones, alpha
   --alpha-true): how much planning under the wrong numbers costs.

   Memory: a rank holds its persistent bytes (the step's bound buffers:
   parameters or ZeRO's shards of them, gradients, AdamW's moments, and
   its float32 master copy of 2-byte parameters) and its transient buffers
   (activations, ZeRO-3's gathered parameters: gpt_step_desc.transients),
   alive from their first writer's start to their last user's end. Each
   timeline's peak is persistent + the transient peak (cc_memory_check).
   --memory-cap BYTES (suffixes K M G T, KiB .. TiB: powers of 1024; KB
   .. TB: of 1000) caps a rank's device memory: the library's schedules
   (S, S+F, S+AD) get what the persistent bytes leave as
   cc_sched_desc.memory_cap_bytes; a rewrite or bucketing that fits no
   schedule under it is dropped; the peers' fixed policies are reported
   with their peaks, marked where they would not fit. Persistent bytes
   above the cap, or no schedule of the step that fits: exit 1 with the
   library's message (the cap, the best peak, the buffers alive there).

   --memory-curve N: instead of the variants, the step time of the
   library's schedule (S) against N caps from program order's peak up to
   S's own uncapped peak, solved from the tightest up, each solve starting
   from the schedule found under the tighter cap (cc_sched_desc.start_from:
   the result is never later than it), so that the step time never grows
   as the cap loosens; then unlimited;
   beside them the peers' step times and peaks. Text, or JSON with --json.

   --json prints one JSON object: program_us, peers {name: us}, s_us,
   sf_us, sad_us, lower_bound_us, plan_s, peak_bytes (S's),
   persistent_bytes, memory_cap_bytes (under --memory-cap),
   peers_peak_bytes {name: bytes}, peers_over_cap [names] (under
   --memory-cap), each variant's peak_bytes (null where not measured: S+AD
   without a cap decomposes a step with every buffer bound) and the rest. Progress goes to
   standard error. Exit status: 0, 1 on a failure of the library, 2 on bad
   usage (the message names the option). */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../examples/steps/gpt_step.h"
#include "peers.h"

/* A collective on a cluster spec: the spec checked, then cc_coll_us on its links. */
static cc_result cluster_coll_us(cc_context* ctx, const cc_cluster_spec* s, cc_coll_kind kind, uint64_t n_bytes,
                                 cc_group_shape group, cc_coll_algo algo, double* us) {
    cc_result rc;
    *us = 0;
    if ((rc = cc_cluster_check(ctx, s)) != CC_OK) return rc;
    return cc_coll_us(ctx, &s->intra, &s->inter, s->gpus_per_node, kind, n_bytes, group, algo, us);
}

/* ---- options ---------------------------------------------------------------- */
/* Model presets: GPT-3's sizes (Brown et al. 2020, Table 2.1) with a head
   size of 128 (the 1.3B model with 16 heads, as Megatron-LM's GPT
   configurations use; 13B at width 5120, the table's 5140 being
   indivisible by its 40 heads), context 2048, and GPT-2's vocabulary of
   50257 padded to 51200 (Megatron-LM pads it to a multiple of 128 x TP). */
typedef struct model_preset { const char* name; int L, C, H, T, V; } model_preset;
static const model_preset presets[] = {
    { "gpt-1.3b", 24, 2048, 16, 2048, 51200 },
    { "gpt-13b", 40, 5120, 40, 2048, 51200 },
    { "gpt-175b", 96, 12288, 96, 2048, 51200 },
};
#define N_PRESETS ((int)(sizeof presets / sizeof presets[0]))

typedef struct options {
    const char* model;
    gpt_config cfg;
    int micro_batch, n_micro;
    int tp, dp, pp, zero, sp;
    int half;                      /* fp16 / bf16 (1) or fp32 (0) */
    cc_dtype dtype;
    const char* cluster;
    int nodes, gpus_per_node;
    double intra_gbps, inter_gbps; /* overrides; 0: the preset's */
    double alpha, alpha_true;      /* overlap slowdown planned with, and the true one (0: the same) */
    double noise;                  /* relative noise on every duration the plan is chosen with */
    uint64_t seed;
    int64_t budget;
    int json, quiet;
    const char* trace;
    const char* sm;
    uint64_t memory_cap;           /* --memory-cap: bytes of device memory per rank; 0: none */
    int memory_curve;              /* --memory-curve N: caps; 0: no curve */
    int ad_variants;               /* --ad-variants: S+AD near, N=2 and matmul-adjacent as well */
} options;

static const char* program_name = "plan";

static void usage(FILE* f) {
    fprintf(f,
            "usage: %s [--model gpt-1.3b|gpt-13b|gpt-175b] [--layers L] [--hidden C] [--heads H] [--seq T] [--vocab V]\n"
            "            [--micro-batch B] [--micro-batches M] [--tp N] [--dp N] [--pp N] [--zero 0|1|2|3] [--sp]\n"
            "            [--dtype fp16|bf16|fp32] [--cluster a800|a100|h100] [--nodes N] [--gpus-per-node G]\n"
            "            [--intra-gbps X] [--inter-gbps X] [--alpha A] [--alpha-true A] [--noise F] [--seed N]\n"
            "            [--budget N] [--memory-cap BYTES] [--memory-curve N] [--json] [--trace FILE] [--sm FILE] [--ad-variants]\n"
            "            [--quiet]\n"
            "Predicts one training step of a GPT model on a cluster from a cost model (every figure is simulated):\n"
            "program order, the peers' policies, and the library's schedule alone (S), with fusion (S+F) and with\n"
            "decomposition as well (S+AD). See the comment at the top of tools/plan.c.\n",
            program_name);
}

static int bad(const char* fmt, const char* opt, const char* val) {
    fprintf(stderr, "%s: ", program_name);
    fprintf(stderr, fmt, opt, val ? val : "(missing)");
    fprintf(stderr, "\n");
    return 0;
}

static int parse_int(const char* opt, const char* v, long lo, long hi, int* out) {
    char* end;
    long x;
    if (!v) return bad("%s needs a value %s", opt, NULL);
    x = strtol(v, &end, 10);
    if (*v == 0 || *end || x < lo || x > hi) {
        fprintf(stderr, "%s: %s must be an integer from %ld to %ld, got '%s'\n", program_name, opt, lo, hi, v);
        return 0;
    }
    *out = (int)x;
    return 1;
}

/* Bytes: a positive number with an optional suffix, K M G T (also KiB
   MiB GiB TiB: powers of 1024) or KB MB GB TB (powers of 1000). */
static int parse_bytes(const char* opt, const char* v, uint64_t* out) {
    if (!v) return bad("%s needs a value %s", opt, NULL);
    if (gpt_parse_bytes(v, out)) return 1;
    fprintf(stderr, "%s: %s must be " GPT_BYTES_FORM ", got '%s'\n", program_name, opt, v);
    return 0;
}

static int parse_double(const char* opt, const char* v, double lo, double hi, double* out) {
    char* end;
    double x;
    if (!v) return bad("%s needs a value %s", opt, NULL);
    x = strtod(v, &end);
    if (*v == 0 || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "%s: %s must be a number from %g to %g, got '%s'\n", program_name, opt, lo, hi, v);
        return 0;
    }
    *out = x;
    return 1;
}

/* 1, or 0 after saying what is wrong (the option named). */
static int parse_args(int argc, char** argv, options* o) {
    int i, seed = 1, budget = 0, have_dp = 0;
    gpt_config given;
    memset(o, 0, sizeof *o);
    memset(&given, 0, sizeof given);
    o->model = "gpt-1.3b";
    o->micro_batch = 1;
    o->tp = o->pp = 1;
    o->half = 1;
    o->dtype = CC_DTYPE_FLOAT16;
    o->cluster = "a100";
    o->nodes = 1;
    o->gpus_per_node = 8;
    for (i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, takes = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); exit(0); }
        else if (!strcmp(a, "--model")) { if (!v) ok = bad("%s needs a value %s", a, v); else o->model = v; }
        else if (!strcmp(a, "--layers")) ok = parse_int(a, v, 1, 100000, &given.L);
        else if (!strcmp(a, "--hidden") || !strcmp(a, "--embd")) ok = parse_int(a, v, 1, 1 << 20, &given.C);
        else if (!strcmp(a, "--heads")) ok = parse_int(a, v, 1, 1 << 16, &given.H);
        else if (!strcmp(a, "--seq")) ok = parse_int(a, v, 1, 1 << 22, &given.T);
        else if (!strcmp(a, "--vocab")) ok = parse_int(a, v, 1, 1 << 24, &given.V);
        else if (!strcmp(a, "--micro-batch")) ok = parse_int(a, v, 1, 1 << 16, &o->micro_batch);
        else if (!strcmp(a, "--micro-batches")) ok = parse_int(a, v, 1, 1 << 16, &o->n_micro);
        else if (!strcmp(a, "--tp")) ok = parse_int(a, v, 1, 1 << 16, &o->tp);
        else if (!strcmp(a, "--dp")) { ok = parse_int(a, v, 1, 1 << 20, &o->dp); have_dp = 1; }
        else if (!strcmp(a, "--pp")) ok = parse_int(a, v, 1, 1 << 16, &o->pp);
        else if (!strcmp(a, "--zero")) ok = parse_int(a, v, 0, 3, &o->zero);
        else if (!strcmp(a, "--sp")) { o->sp = 1; takes = 0; }
        else if (!strcmp(a, "--dtype")) {
            if (v && !strcmp(v, "fp16")) { o->half = 1; o->dtype = CC_DTYPE_FLOAT16; }
            else if (v && !strcmp(v, "bf16")) { o->half = 1; o->dtype = CC_DTYPE_BFLOAT16; }
            else if (v && !strcmp(v, "fp32")) { o->half = 0; o->dtype = CC_DTYPE_FLOAT32; }
            else ok = bad("%s must be fp16, bf16 or fp32, got '%s'", a, v);
        }
        else if (!strcmp(a, "--cluster")) { if (!v) ok = bad("%s needs a value %s", a, v); else o->cluster = v; }
        else if (!strcmp(a, "--nodes")) ok = parse_int(a, v, 1, 1 << 16, &o->nodes);
        else if (!strcmp(a, "--gpus-per-node")) ok = parse_int(a, v, 1, 1024, &o->gpus_per_node);
        else if (!strcmp(a, "--intra-gbps")) ok = parse_double(a, v, 1e-9, 1e9, &o->intra_gbps);
        else if (!strcmp(a, "--inter-gbps")) ok = parse_double(a, v, 1e-9, 1e9, &o->inter_gbps);
        else if (!strcmp(a, "--alpha")) ok = parse_double(a, v, 1, 10, &o->alpha);
        else if (!strcmp(a, "--alpha-true")) ok = parse_double(a, v, 1, 10, &o->alpha_true);
        else if (!strcmp(a, "--noise")) ok = parse_double(a, v, 0, 0.9, &o->noise);
        else if (!strcmp(a, "--seed")) ok = parse_int(a, v, 0, 2147483647, &seed);
        else if (!strcmp(a, "--budget")) ok = parse_int(a, v, 1, 100000000, &budget);
        else if (!strcmp(a, "--memory-cap")) ok = parse_bytes(a, v, &o->memory_cap);
        else if (!strcmp(a, "--memory-curve")) ok = parse_int(a, v, 2, 64, &o->memory_curve);
        else if (!strcmp(a, "--json")) { o->json = 1; takes = 0; }
        else if (!strcmp(a, "--quiet")) { o->quiet = 1; takes = 0; }
        else if (!strcmp(a, "--ad-variants")) { o->ad_variants = 1; takes = 0; }
        else if (!strcmp(a, "--trace")) { if (!v) ok = bad("%s needs a value %s", a, v); else o->trace = v; }
        else if (!strcmp(a, "--sm")) { if (!v) ok = bad("%s needs a value %s", a, v); else o->sm = v; }
        else {
            fprintf(stderr, "%s: unknown option '%s' (--help lists them)\n", program_name, a);
            return 0;
        }
        if (!ok) return 0;
        i += takes;
    }
    o->seed = (uint64_t)seed;
    o->budget = budget;
    for (i = 0; i < N_PRESETS; i++)
        if (!strcmp(presets[i].name, o->model)) break;
    if (i == N_PRESETS) {
        fprintf(stderr, "%s: --model '%s' is not a preset (gpt-1.3b, gpt-13b, gpt-175b)\n", program_name, o->model);
        return 0;
    }
    o->cfg.L = given.L ? given.L : presets[i].L;
    o->cfg.C = given.C ? given.C : presets[i].C;
    o->cfg.H = given.H ? given.H : presets[i].H;
    o->cfg.T = given.T ? given.T : presets[i].T;
    o->cfg.V = given.V ? given.V : presets[i].V;
    if (!o->n_micro) o->n_micro = o->pp > 1 ? 4 * o->pp : 1;
    {
        long world = (long)o->nodes * o->gpus_per_node, inner = (long)o->tp * o->pp;
        if (!have_dp) {
            if (world % inner) {
                fprintf(stderr, "%s: --tp %d x --pp %d does not divide the %ld GPUs of --nodes %d x --gpus-per-node %d\n", program_name,
                        o->tp, o->pp, world, o->nodes, o->gpus_per_node);
                return 0;
            }
            o->dp = (int)(world / inner);
        } else if (inner * o->dp != world) {
            fprintf(stderr, "%s: --tp %d x --dp %d x --pp %d = %ld GPUs, but --nodes %d x --gpus-per-node %d = %ld\n", program_name,
                    o->tp, o->dp, o->pp, inner * o->dp, o->nodes, o->gpus_per_node, world);
            return 0;
        }
    }
    if (o->tp > o->gpus_per_node ? o->tp % o->gpus_per_node : o->gpus_per_node % o->tp) {
        fprintf(stderr, "%s: --tp %d must divide --gpus-per-node %d or be a multiple of it\n", program_name, o->tp, o->gpus_per_node);
        return 0;
    }
    if (!o->alpha_true) o->alpha_true = o->alpha;
    return 1;
}

/* ---- the cluster and the costs ----------------------------------------------- */
/* Ranks are laid out TP innermost, then DP, then PP (Megatron-LM's order):
   a TP group fills a node or a part of one (or spans whole nodes); a DP
   group's members are TP ranks apart; neighbouring stages are TP x DP ranks
   apart. */
typedef struct planner {
    options o;
    cc_context* ctx;
    cc_cluster_spec spec;
    cc_group_shape tp_shape, dp_shape, pp_shape;
    double progress_t0;
    uint64_t master;               /* AdamW's float32 master copy (2-byte parameters), bytes; not a buffer */
} planner;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress(const planner* P, const char* fmt, ...) {
    va_list ap;
    if (P->o.quiet) return;
    fprintf(stderr, "%s: [%6.1f s] ", program_name, now_s() - P->progress_t0);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
}

static int min_int(int a, int b) { return a < b ? a : b; }

/* 1, or 0 after saying what is wrong. */
static int planner_setup(planner* P, const options* o) {
    int g = o->gpus_per_node;
    cc_result r;
    memset(P, 0, sizeof *P);
    P->o = *o;
    P->progress_t0 = now_s();
    if ((r = cc_context_create(NULL, &P->ctx)) != CC_OK) {
        fprintf(stderr, "%s: %s\n", program_name, cc_result_description(r));
        return 0;
    }
    if (cc_cluster_preset(P->ctx, o->cluster, &P->spec) != CC_OK) {
        fprintf(stderr, "%s: --cluster: %s\n", program_name, cc_last_error(P->ctx));
        return 0;
    }
    P->spec.gpus_per_node = g;
    if (o->intra_gbps > 0) P->spec.intra.gbps = o->intra_gbps;
    if (o->inter_gbps > 0) P->spec.inter.gbps = o->inter_gbps;
    if (o->alpha > 0) P->spec.overlap_slowdown = o->alpha;
    P->o.alpha = cc_cluster_overlap_slowdown(&P->spec);
    if (!(o->alpha_true > 0)) P->o.alpha_true = P->o.alpha;
    if (cc_cluster_check(P->ctx, &P->spec) != CC_OK) {
        fprintf(stderr, "%s: the cluster (--cluster %s with the overrides): %s\n", program_name, o->cluster, cc_last_error(P->ctx));
        return 0;
    }
    P->tp_shape.n_ranks = o->tp;
    P->tp_shape.ranks_per_node = min_int(o->tp, g);
    P->dp_shape.n_ranks = o->dp;
    P->dp_shape.ranks_per_node = o->tp >= g ? 1 : min_int(o->dp, g / o->tp);
    while (o->dp % P->dp_shape.ranks_per_node) P->dp_shape.ranks_per_node--;
    /* a stage's neighbour: in the same node where TP x DP ranks fit in half a node */
    P->pp_shape.n_ranks = 2;
    P->pp_shape.ranks_per_node = (long)o->tp * o->dp * 2 <= g ? 2 : 1;
    return 1;
}

/* xorshift64*: the noise of --noise, seeded, the same on every machine. */
static double uniform_pm1(uint64_t* s) {
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return (double)((x * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static const cc_group_shape* shape_of(const planner* P, int group) {
    return group == GPT_GROUP_TP ? &P->tp_shape : group == GPT_GROUP_DP ? &P->dp_shape : &P->pp_shape;
}

/* Every op's duration from the cost model (times 1 + noise u, u uniform in
   [-1, 1], where noise > 0), the stand-ins for the other pipeline stages
   from this stage's own ops, and the overlap slowdown alpha. */
static cc_result cost_graph(const planner* P, cc_graph* g, const gpt_op_store* st, double noise, uint64_t* seed, double alpha) {
    int i, n = cc_graph_n_ops(g), m, M = P->o.n_micro < 1 ? 1 : P->o.n_micro;   /* options give 1 or more */
    double *fwd = NULL, *bwd = NULL, p2p = 0;
    cc_exec_costs costs;
    cc_result r = CC_OK;
    if (n != st->n_info) {
        fprintf(stderr, "%s: the step has %d ops but %d descriptions\n", program_name, n, st->n_info);
        return CC_ERR_INVALID_ARG;
    }
    fwd = (double*)calloc((size_t)M, sizeof(double));
    bwd = (double*)calloc((size_t)M, sizeof(double));
    if (!fwd || !bwd) { free(fwd); free(bwd); return CC_ERR_OUT_OF_MEMORY; }
    for (i = 0; i < n && r == CC_OK; i++) {
        const gpt_step_op_info* in = &st->info[i];
        cc_op op = cc_graph_op(g, i);
        double us = 0;
        if (in->kind >= 0) us = cc_cluster_compute_us(&P->spec, in->flops, in->bytes, P->o.half);
        else if (in->coll != CC_COLL_NONE) {
            const cc_collective* co = cc_op_collective(g, op);
            uint64_t bytes = (uint64_t)in->n_elems * (uint64_t)gpt_step_dtype_bytes(co ? co->dtype : P->o.dtype);
            r = cluster_coll_us(P->ctx, &P->spec, in->coll, bytes, *shape_of(P, in->group), CC_ALGO_AUTO, &us);
            if (in->group == GPT_GROUP_PP && us > p2p) p2p = us;
        } else continue;   /* the other stages: below */
        if (noise > 0) us *= 1.0 + noise * uniform_pm1(seed);
        if (r == CC_OK) r = cc_op_set_duration(g, op, us);
        if (in->micro >= 0 && in->micro < M && (in->kind >= 0 || in->group == GPT_GROUP_TP))
            (in->phase == GPT_PHASE_FORWARD ? fwd : bwd)[in->micro] += us;
    }
    /* The later stages spend on micro-batch m its forward and backward on
       each of them, and the hops between them (this stage's own send and
       receive are ops of the graph): every stage taken as this one. The
       planned rank is stage 0's, so no op stands for earlier stages. */
    for (i = 0; i < n && r == CC_OK; i++) {
        const gpt_step_op_info* in = &st->info[i];
        int later = P->o.pp - 1;
        if (in->other_stages != GPT_OTHER_LATER) continue;
        m = in->micro < 0 ? 0 : in->micro;
        r = cc_op_set_duration(g, cc_graph_op(g, i), later * (fwd[m] + bwd[m]) + (later > 1 ? 2.0 * (later - 1) * p2p : 0));
    }
    free(fwd);
    free(bwd);
    memset(&costs, 0, sizeof costs);
    costs.compute_overlap = alpha;
    if (r == CC_OK) r = cc_graph_set_exec_costs(g, &costs);
    return r;
}

/* A collective's time on the cluster: its kind, elements and type, on the
   group its communicator is (by the name the step builder gives it). */
static cc_result coll_us(const planner* P, const cc_collective* co, double* us) {
    const char* name = cc_comm_name(co->comm);
    int group = !strcmp(name, "tp") ? GPT_GROUP_TP : !strcmp(name, "dp") ? GPT_GROUP_DP : GPT_GROUP_PP;
    uint64_t bytes = (uint64_t)co->n_elems * (uint64_t)gpt_step_dtype_bytes(co->dtype);
    return cluster_coll_us(P->ctx, &P->spec, co->kind, bytes, *shape_of(P, group), CC_ALGO_AUTO, us);
}

/* A rewritten graph (its collectives resized, its compute cut in chunks):
   every collective costed again on the cluster; compute keeps the rewrite's
   share of the op it came from. */
static cc_result recost_collectives(const planner* P, cc_graph* g) {
    int i, n = cc_graph_n_ops(g);
    cc_result r = CC_OK;
    for (i = 0; i < n && r == CC_OK; i++) {
        cc_op op = cc_graph_op(g, i);
        const cc_collective* co = cc_op_collective(g, op);
        double us;
        if (!co) continue;
        if ((r = coll_us(P, co, &us)) == CC_OK) r = cc_op_set_duration(g, op, us);
    }
    return r;
}

/* Each communicator's start-up (a one-element collective on its group),
   so that the rewrites price a resized collective with it. */
static cc_result set_startups(const planner* P, cc_graph* g, const gpt_model* m) {
    cc_comm* comms[3];
    int i;
    cc_result r = CC_OK;
    comms[0] = m->tp_comm; comms[1] = m->dp_comm; comms[2] = m->pp_comm;
    for (i = 0; i < 3 && r == CC_OK; i++) {
        cc_collective co;
        double us;
        if (!comms[i]) continue;
        memset(&co, 0, sizeof co);
        co.kind = i == 2 ? CC_COLL_SEND : CC_COLL_ALL_REDUCE;
        co.dtype = P->o.dtype;
        co.n_elems = 1;
        co.comm = comms[i];
        if ((r = coll_us(P, &co, &us)) == CC_OK) r = cc_graph_set_coll_startup(g, comms[i], us);
    }
    return r;
}

/* ---- the step ---------------------------------------------------------------- */
/* A built step: its model, what each op is, its graph (costed with the
   numbers the plan is chosen with) and the true durations (without
   --noise, with --alpha-true). */
typedef struct step {
    gpt_model m; gpt_op_store st; cc_graph* g; double* truth;
    int* bucket_of; int n_bucket_of, grad_sync;   /* how it was built (bucket_of owned; NULL: one per parameter) */
    const peer_policy* edges_of;   /* a peer whose order function added edges to g (run_peer), or NULL */
} step;

static void step_free(step* s) {
    cc_graph_destroy(s->g);
    free(s->truth);
    free(s->bucket_of);
    gpt_op_store_free(&s->st);
    gpt_model_free(&s->m);
    memset(s, 0, sizeof *s);
}

static gpt_step_desc step_desc(const planner* P) {
    gpt_step_desc d;
    memset(&d, 0, sizeof d);
    d.cfg = P->o.cfg;
    d.micro_batch = P->o.micro_batch;
    d.n_micro = P->o.n_micro;
    d.tp = P->o.tp; d.dp = P->o.dp; d.pp = P->o.pp;
    d.sp = P->o.sp;
    d.zero = P->o.zero;
    d.coll_dtype = P->o.dtype;
    d.act_bytes = d.param_bytes = P->o.half ? 2 : 4;
    d.chunk_stubs = 1;
    d.transients = 1;
    return d;
}

/* Stage 0's rank's step with these buckets (NULL: one per parameter),
   costed; with transients its activations and ZeRO-3 gathers transient
   (gpt_step_desc.transients), else every buffer bound; with matmul_only
   split rules on its matmuls only (gpt_step_desc.rules_matmul_only). 1,
   or 0 after saying what is wrong. */
static int step_build_ex(const planner* P, const int* bucket_of, int n_bucket_of, int grad_sync, int transients, int matmul_only,
                         step* s) {
    gpt_step_desc d = step_desc(P);
    cc_result r = CC_OK;
    uint64_t seed = P->o.seed * 0x9E3779B97F4A7C15ull + 1;
    memset(s, 0, sizeof *s);
    d.bucket_of = bucket_of;
    d.n_bucket_of = n_bucket_of;
    d.grad_sync = grad_sync;
    d.transients = transients;
    d.rules_matmul_only = matmul_only;
    s->n_bucket_of = n_bucket_of;
    s->grad_sync = grad_sync;
    if (bucket_of && n_bucket_of > 0) {
        if (!(s->bucket_of = (int*)malloc(sizeof(int) * (size_t)n_bucket_of))) r = CC_ERR_OUT_OF_MEMORY;
        else memcpy(s->bucket_of, bucket_of, sizeof(int) * (size_t)n_bucket_of);
    }
    if (r == CC_OK) r = gpt_model_create(&s->m, &d, NULL, P->ctx);
    if (r == CC_OK) r = gpt_step_plan_comms(&s->m);
    if (r == CC_OK) r = gpt_build_graph(&s->m, 1, &s->g, &s->st);
    if (r == CC_OK) r = cost_graph(P, s->g, &s->st, 0, &seed, P->o.alpha_true);
    if (r == CC_OK && !(s->truth = (double*)malloc(sizeof(double) * (size_t)(cc_graph_n_ops(s->g) + 1)))) r = CC_ERR_OUT_OF_MEMORY;
    if (r == CC_OK) {
        int i;
        for (i = 0; i < cc_graph_n_ops(s->g); i++) s->truth[i] = cc_op_duration_us(s->g, cc_graph_op(s->g, i));
    }
    if (r == CC_OK && (P->o.noise > 0 || P->o.alpha != P->o.alpha_true)) r = cost_graph(P, s->g, &s->st, P->o.noise, &seed, P->o.alpha);
    if (r == CC_OK) r = set_startups(P, s->g, &s->m);
    if (r != CC_OK) {
        fprintf(stderr, "%s: %s\n", program_name, s->m.error[0] ? s->m.error : cc_last_error(P->ctx));
        step_free(s);
        return 0;
    }
    return 1;
}

static int step_build(const planner* P, const int* bucket_of, int n_bucket_of, int grad_sync, step* s) {
    return step_build_ex(P, bucket_of, n_bucket_of, grad_sync, 1, 0, s);
}

/* ---- memory ----------------------------------------------------------------------- */
/* A rank's memory is its persistent bytes, the bound buffers of its step
   (the parameters or ZeRO's shards of them, the gradients, AdamW's
   moments, the norms, the tokens) and AdamW's float32 master copy where
   the parameters are 2 bytes, plus its transient buffers alive at once
   (activations, ZeRO-3's gathered parameters), which a schedule decides. */

static uint64_t master_bytes(const gpt_model* m) {
    int k, n = m->ZERO ? m->nb : m->np;
    uint64_t sum = 0;
    if (gpt_step_dtype_bytes(m->param_dtype) != 2) return 0;
    for (k = 0; k < n; k++) sum += m->adam_m[k]->bytes;   /* float32, one element per parameter element */
    return sum;
}

static uint64_t persistent_bytes(const planner* P, const cc_graph* g) { return gpt_bound_bytes(g) + P->master; }

static double gib(uint64_t bytes) { return (double)bytes / 1073741824.0; }

/* The true durations (without --noise) of the ops of g, src's graph or a
   rewrite of it: src's own where g is its graph; else a collective's from
   the cost model (which has no noise); a compute op's from src's op of its
   name; a piece "<name>#<i>/<k>" of a compute op its planned duration
   scaled as that op's (true over planned: pieces may be uneven, or carry
   a chunk cost); a copy the rewrites added (packing a collective's chunk
   or a bucket member: named after a collective of src, or after nothing
   of src) keeps its duration, which has no noise. */
typedef struct named { const char* name; double us, planned; int coll; } named;
static int named_cmp(const void* a, const void* b) { return strcmp(((const named*)a)->name, ((const named*)b)->name); }

static cc_result true_durations(const planner* P, const step* src, cc_graph* g, double* out) {
    int i, n = cc_graph_n_ops(g), ns = cc_graph_n_ops(src->g);
    named* tab;
    cc_result r = CC_OK;
    if (g == src->g) {
        memcpy(out, src->truth, sizeof(double) * (size_t)n);
        return CC_OK;
    }
    if (!(tab = (named*)malloc(sizeof(named) * (size_t)(ns + 1)))) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < ns; i++) {
        cc_op op = cc_graph_op(src->g, i);
        tab[i].name = cc_op_name(src->g, op);
        tab[i].us = src->truth[i];
        tab[i].planned = cc_op_duration_us(src->g, op);
        tab[i].coll = cc_op_collective(src->g, op) != NULL;
    }
    qsort(tab, (size_t)ns, sizeof *tab, named_cmp);
    for (i = 0; i < n && r == CC_OK; i++) {
        cc_op op = cc_graph_op(g, i);
        const cc_collective* co = cc_op_collective(g, op);
        const char* name = cc_op_name(g, op);
        const char* hash = strchr(name, '#');
        char base[128];
        named key = { NULL, 0, 0, 0 }, *hit;
        out[i] = cc_op_duration_us(g, op);
        if (co) { r = coll_us(P, co, &out[i]); continue; }
        if (hash && (size_t)(hash - name) < sizeof base) {
            memcpy(base, name, (size_t)(hash - name));
            base[hash - name] = 0;
            key.name = base;
        } else key.name = name;
        if ((hit = (named*)bsearch(&key, tab, (size_t)ns, sizeof *tab, named_cmp)) == NULL || hit->coll) continue;
        if (key.name == name) out[i] = hit->us;
        else if (hit->planned > 0) out[i] *= hit->us / hit->planned;
    }
    free(tab);
    return r;
}

/* The step time of an issue order of g (src's graph or a rewrite of it)
   under the true numbers: the true durations and alpha --alpha-true. */
static cc_result true_makespan(const planner* P, const step* src, cc_graph* g, const cc_op* order, double* us) {
    int i, n = cc_graph_n_ops(g), set = 0;
    double* keep = (double*)malloc(sizeof(double) * (size_t)(n + 1));
    double* truth = (double*)malloc(sizeof(double) * (size_t)(n + 1));
    cc_exec_costs c = cc_graph_exec_costs(g), t = c;
    cc_result r = keep && truth ? CC_OK : CC_ERR_OUT_OF_MEMORY;
    if (r == CC_OK) r = true_durations(P, src, g, truth);
    for (i = 0; i < n && r == CC_OK; i++, set++) {
        keep[i] = cc_op_duration_us(g, cc_graph_op(g, i));
        r = cc_op_set_duration(g, cc_graph_op(g, i), truth[i]);
    }
    t.compute_overlap = P->o.alpha_true;
    if (r == CC_OK) r = cc_graph_set_exec_costs(g, &t);
    if (r == CC_OK) r = cc_simulate(P->ctx, g, order, n, NULL, us);
    for (i = 0; i < set; i++) cc_op_set_duration(g, cc_graph_op(g, i), keep[i]);
    cc_graph_set_exec_costs(g, &c);
    free(keep);
    free(truth);
    return r;
}

/* ---- what each way of running the step gives ---------------------------------- */
typedef struct outcome {
    char name[32];             /* "program", a peer's name, "S", "S+F", "S+AD" */
    double us;                 /* the predicted step (the numbers it was planned with) */
    double true_us;            /* its order under the true numbers (NAN: not evaluated) */
    double exposed_us;         /* cc_exposed_comm_us of its timeline */
    double plan_s;             /* wall-clock seconds to plan it */
    int n_ops, n_colls;
    int valid;                 /* its timeline passed cc_schedule_check */
    char what[400];            /* what it changed */
    step s;                    /* the step it ran, where it built its own */
    cc_graph* g;               /* the graph of its timeline (s.g, or a rewrite it owns with own_g) */
    int own_g;
    double* start;             /* [n_ops] its timeline */
    int has_peak;              /* peak is known (0: a timeline of a graph without transient buffers) */
    uint64_t peak;             /* its memory: persistent bytes + the peak of its transient buffers (cc_memory_check) */
} outcome;

static void outcome_free(outcome* o) {
    if (o->own_g) cc_graph_destroy(o->g);
    step_free(&o->s);
    free(o->start);
    memset(o, 0, sizeof *o);
}

static int count_colls(cc_graph* g) {
    int i, k = 0;
    for (i = 0; i < cc_graph_n_ops(g); i++) k += cc_op_collective(g, cc_graph_op(g, i)) != NULL;
    return k;
}

/* Takes the timeline (start, owned) of g: checks it, measures exposure. */
static cc_result settle(const planner* P, cc_graph* g, double* start, double makespan_us, outcome* o) {
    double mk = 0;
    cc_result r;
    o->g = g;
    o->start = start;
    o->us = makespan_us;
    o->n_ops = cc_graph_n_ops(g);
    o->n_colls = count_colls(g);
    o->valid = cc_schedule_check(P->ctx, g, start, &mk) == CC_OK;
    if (!o->valid) fprintf(stderr, "%s: %s: the timeline fails the checker: %s\n", program_name, o->name, cc_last_error(P->ctx));
    r = cc_exposed_comm_us(P->ctx, g, start, NULL, &o->exposed_us);
    if (r == CC_OK) {
        uint64_t peak = 0;
        int i, transients = 0;
        for (i = 0; i < cc_graph_n_buffers(g) && !transients; i++) transients = cc_buffer_transient(g, cc_graph_buffer(g, i));
        r = cc_memory_check(P->ctx, g, start, NULL, 0, &peak, NULL);
        o->has_peak = transients;
        o->peak = persistent_bytes(P, g) + peak;
    }
    return r;
}

static cc_op* program_order(cc_graph* g) {
    int i, n = cc_graph_n_ops(g);
    cc_op* order = (cc_op*)malloc(sizeof(cc_op) * (size_t)(n + 1));
    for (i = 0; order && i < n; i++) order[i] = cc_graph_op(g, i);
    return order;
}

/* The step in an issue order (NULL: program order), simulated. */
static cc_result simulate_order(const planner* P, step* s, const cc_op* order_in, outcome* o) {
    int n = cc_graph_n_ops(s->g);
    cc_op* own = order_in ? NULL : program_order(s->g);
    const cc_op* order = order_in ? order_in : own;
    double* start = (double*)malloc(sizeof(double) * (size_t)(n + 1));
    double mk = 0;
    cc_result r = order && start ? CC_OK : CC_ERR_OUT_OF_MEMORY;
    if (r == CC_OK) r = cc_simulate(P->ctx, s->g, order, n, start, &mk);
    if (r == CC_OK) r = true_makespan(P, s, s->g, order, &o->true_us);
    free(own);
    if (r != CC_OK) { free(start); return r; }
    return settle(P, s->g, start, mk, o);
}

/* The scheduler's desc for graph g: under --memory-cap, its transient
   buffers get what the persistent bytes leave (1 byte where they leave
   nothing: no schedule fits). */
static cc_sched_desc sched_desc(const planner* P, const cc_graph* g) {
    cc_sched_desc d = {0};
    if (P->o.budget > 0) d.tuning.budget_schedules = P->o.budget;
    if (P->o.memory_cap) {
        uint64_t keep = persistent_bytes(P, g);
        d.memory_cap_bytes = keep < P->o.memory_cap ? P->o.memory_cap - keep : 1;
    }
    return d;
}

/* A solve that found nothing under the cap (a candidate the planner then drops). */
static int over_cap(cc_result r) { return r == CC_ERR_INFEASIBLE || r == CC_ERR_CAPACITY; }

/* The library's schedule of g; start and makespan into o (g borrowed). */
static cc_result schedule(const planner* P, cc_graph* g, outcome* o, double* lower_bound_us, cc_op** order_out) {
    cc_sched_desc d = sched_desc(P, g);
    cc_schedule sch;
    double* start;
    cc_result r;
    int n = cc_graph_n_ops(g);
    memset(&sch, 0, sizeof sch);
    if ((r = cc_sched_solve(P->ctx, g, &d, &sch)) != CC_OK) return r;
    if (lower_bound_us) *lower_bound_us = sch.lower_bound_us;
    start = (double*)malloc(sizeof(double) * (size_t)(n + 1));
    if (!start) r = CC_ERR_OUT_OF_MEMORY;
    else memcpy(start, sch.start_us, sizeof(double) * (size_t)n);
    if (r == CC_OK && order_out) {
        if ((*order_out = (cc_op*)malloc(sizeof(cc_op) * (size_t)(n + 1))) != NULL) memcpy(*order_out, sch.order, sizeof(cc_op) * (size_t)n);
        else r = CC_ERR_OUT_OF_MEMORY;
    }
    if (r == CC_OK) r = settle(P, g, start, sch.makespan_us, o);
    else free(start);
    cc_schedule_release(P->ctx, &sch);
    return r;
}

/* ---- the peers ------------------------------------------------------------------ */
/* Buckets of consecutive parameters with a peer's numbering, made valid
   for the step builder: a parameter a rule leaves out (-1: never gathered)
   joins the bucket before it (or after, at the start). */
static void fill_unbucketed(int* b, int n) {
    int i, last = -1;
    for (i = 0; i < n; i++) {
        if (b[i] >= 0) last = b[i];
        else if (last >= 0) b[i] = last;
    }
    for (i = n - 1, last = -1; i >= 0; i--) {
        if (b[i] >= 0) last = b[i];
        else b[i] = last >= 0 ? last : 0;
    }
}

/* Buckets as the step builder takes them, runs of consecutive parameters
   numbered 0..: each maximal run of one bucket of the rule's becomes one
   (a bucket of parameters that are not neighbours, as llm.c's of wte, wpe
   and the final norm, is one bucket per run: the builder's flat buffers
   hold a bucket in one range). The number of buckets. */
static int runs_of(int* b, int n) {
    int i, k = -1, prev = -2;
    for (i = 0; i < n; i++) {
        if (b[i] != prev) k++;
        prev = b[i];
        b[i] = k;
    }
    return k + 1;
}

static cc_result run_peer(const planner* P, const peer_policy* pol, outcome* o) {
    gpt_step_desc d = step_desc(P);
    gpt_model_layout lay;
    peer_param* params = NULL;
    peer_knobs k = peer_knobs_default();
    peer_plan pl;
    int i, n, *grad = NULL, *gfwd = NULL, *gbwd = NULL, *use, ready = 0, n_edges = 0;
    peer_when* when = NULL;
    cc_op* order = NULL;
    char err[512];
    cc_result r = CC_OK;
    double t0 = now_s();
    memset(&lay, 0, sizeof lay);
    memset(&pl, 0, sizeof pl);
    snprintf(o->name, sizeof o->name, "%s", pol->name);
    if (!gpt_step_stage_params(&d, &lay)) return CC_ERR_OUT_OF_MEMORY;
    n = lay.n;
    params = (peer_param*)calloc((size_t)n, sizeof *params);
    grad = (int*)malloc(sizeof(int) * (size_t)n);
    gfwd = (int*)malloc(sizeof(int) * (size_t)n);
    gbwd = (int*)malloc(sizeof(int) * (size_t)n);
    when = (peer_when*)malloc(sizeof(peer_when) * (size_t)n);
    if (!params || !grad || !gfwd || !gbwd || !when) r = CC_ERR_OUT_OF_MEMORY;
    for (i = 0; r == CC_OK && i < n; i++) {
        params[i].n_elems = gpt_shard_size(&lay.p[i], P->o.tp);
        params[i].n_bytes = params[i].n_elems * (uint64_t)gpt_step_dtype_bytes(P->o.dtype);
        params[i].layer = lay.p[i].layer;
    }
    k.dp = P->o.dp; k.tp = P->o.tp; k.gpus_per_node = P->o.gpus_per_node;
    k.sequence_parallel = P->o.sp; k.zero_stage = P->o.zero;
    pl.grad_bucket = grad; pl.grad_when = when; pl.gather_bucket_fwd = gfwd; pl.gather_bucket_bwd = gbwd;
    if (r == CC_OK && (r = pol->buckets(params, n, &k, &pl, err, sizeof err)) != CC_OK)
        fprintf(stderr, "%s: peer %s: %s\n", program_name, pol->name, err);
    /* the step builder has one bucketing for the gradients' reductions
       and ZeRO-3's gathers: a ZeRO-3 peer's gather buckets (the finer) */
    use = P->o.zero == 3 && pl.n_gather_fwd > 0 ? gfwd : grad;
    if (r == CC_OK) {
        fill_unbucketed(use, n);
        runs_of(use, n);
    }
    for (i = 0; r == CC_OK && i < pl.n_grad_buckets; i++) ready += when[i] == PEER_WHEN_READY;
    if (r == CC_OK && !step_build(P, use, n, 2 * ready >= pl.n_grad_buckets ? GPT_SYNC_WHEN_READY : GPT_SYNC_AFTER_BACKWARD, &o->s))
        r = CC_ERR_INVALID_ARG;
    if (r == CC_OK && pol->order) {
        if (!(order = (cc_op*)malloc(sizeof(cc_op) * (size_t)(cc_graph_n_ops(o->s.g) + 1)))) r = CC_ERR_OUT_OF_MEMORY;
        else if ((r = pol->order(o->s.g, 1, order, &n_edges, err, sizeof err)) != CC_OK)
            fprintf(stderr, "%s: peer %s: %s\n", program_name, pol->name, err);
        else o->s.edges_of = pol;
    }
    if (r == CC_OK) r = simulate_order(P, &o->s, order, o);
    if (r == CC_OK) {
        int nb = 0;
        for (i = 0; i < n; i++) if (use[i] + 1 > nb) nb = use[i] + 1;
        snprintf(o->what, sizeof o->what, "%d bucket(s) of %d parameter tensors%s; %s", nb, n,
                 pol->order ? ", its own order" : ", program order", pl.rule ? pl.rule : "");
    }
    o->plan_s = now_s() - t0;
    free(order); free(params); free(grad); free(gfwd); free(gbwd); free(when);
    gpt_layout_free(&lay);
    return r;
}

/* ---- the library ------------------------------------------------------------------ */
/* S+AD's screens in work: the ops of the candidate steps screened, summed */
#define DEC_SCREEN_WORK 6000000

static cc_rewrite_desc rewrite_desc(const planner* P, const cc_graph* g) {
    cc_rewrite_desc rd = {0};
    int n_ops = cc_graph_n_ops(g);
    rd.sched = sched_desc(P, g);
    /* candidates are screened by simulation (cheap: up to 4,000 of them)
       and the step solved in full the default 32 times a rewrite; large
       steps: those full solves are one list pass each, at most 96
       candidates (the result is still scheduled in full) */
    rd.max_evaluations = 4000;
    /* a copy op a rewrite adds (packing into a bucket, chunks of a
       reduce-scatter or all-gather) reads and writes its bytes at the
       device's streaming bandwidth */
    {
        const cc_device_spec* dv = &P->spec.device;
        double em = dv->mem_efficiency > 0 ? dv->mem_efficiency : 0.8;
        rd.copy_us_per_byte = 2.0 / (dv->mem_gbps * em * 1e3);
    }
    if (n_ops > 3000) {
        rd.sched.method = CC_SCHED_LIST;
        rd.sched.rounds = -1;   /* the pass alone, no odd-even windows */
        rd.max_evaluations = 96;
    }
    return rd;
}

/* o takes src's figures and the timeline start of graph g (owned by o
   with own_g), dropping its own. */
static void take(outcome* o, const outcome* src, cc_graph* g, int own_g, double* start) {
    if (o->own_g && o->g != g) cc_graph_destroy(o->g);
    free(o->start);
    o->g = g;
    o->own_g = own_g;
    o->start = start;
    o->us = src->us;
    o->true_us = src->true_us;
    o->exposed_us = src->exposed_us;
    o->n_ops = src->n_ops;
    o->n_colls = src->n_colls;
    o->valid = src->valid;
    o->has_peak = src->has_peak;
    o->peak = src->peak;
}

/* o takes over from a better earlier outcome: the same timeline. */
static cc_result keep_earlier(const outcome* from, outcome* o, const char* why) {
    double* start = (double*)malloc(sizeof(double) * (size_t)(from->n_ops + 1));
    if (!start) return CC_ERR_OUT_OF_MEMORY;
    memcpy(start, from->start, sizeof(double) * (size_t)from->n_ops);
    take(o, from, from->g, 0, start);
    snprintf(o->what, sizeof o->what, "%s", why);
    return CC_OK;
}

/* S: the step as written, scheduled. */
static cc_result run_s(const planner* P, step* prog, outcome* o, double* lb) {
    cc_op* order = NULL;
    double t0 = now_s();
    cc_result r;
    snprintf(o->name, sizeof o->name, "S");
    r = schedule(P, prog->g, o, lb, &order);
    if (r == CC_OK) r = true_makespan(P, prog, prog->g, order, &o->true_us);
    if (r == CC_OK) snprintf(o->what, sizeof o->what, "reordered; %d collectives", o->n_colls);
    free(order);
    o->plan_s = now_s() - t0;
    return r;
}

/* Buckets of about cap bytes of gradient, in reverse parameter order (the
   order gradients complete), as runs; cap 0: one per layer (the
   parameters outside the layers each their own). */
static int cap_buckets(const planner* P, const gpt_model_layout* lay, uint64_t cap, int* b) {
    int i, k = 0, open = 0, prev_layer = -2;
    uint64_t in = 0, esize = (uint64_t)gpt_step_dtype_bytes(P->o.dtype);
    for (i = lay->n - 1; i >= 0; i--) {
        uint64_t bytes = (uint64_t)gpt_shard_size(&lay->p[i], P->o.tp) * esize;
        int layer = lay->p[i].layer;
        if (open && (cap ? in + bytes > cap : layer != prev_layer || layer < 0)) { k++; in = 0; }
        b[i] = k;
        open = 1;
        in += bytes;
        prev_layer = layer;
    }
    return runs_of(b, lay->n);
}

/* S+F: the library's fusion judged by its scheduler. Three kinds of
   candidate, each scheduled: cc_graph_fuse of the step as written
   (all-reduces merged where their buffers allow); the step built with
   gradient (and ZeRO-3 gather) buckets of 1 MiB to 4 GiB, one per layer,
   or one for everything; and the peers' bucketings (each peer's graph, as
   its rule builds it). The best is kept, S where none pays. *base: the
   graph S+AD decomposes (the best candidate before fusion: prog's, one
   owned by *base_step, or a peer's). */
/* Where a candidate wins: its order (owned) and the step its ops' true
   durations come from. */
typedef struct winner { cc_op* order; const step* src; } winner;

static void win(winner* w, cc_op* order, const step* src) {
    free(w->order);
    w->order = order;
    w->src = src;
}

static cc_result run_sf(const planner* P, step* prog, const outcome* s, outcome* peers, int n_peers, outcome* o, step* base_step,
                        cc_graph** base, const step** base_src, double* lb) {
    /* MiB; 0: one per layer; the last: one bucket for everything */
    static const double caps_mib[] = { 0, 1, 4, 16, 64, 256, 1024, 4096, 1e9 };
    cc_rewrite_desc rd = rewrite_desc(P, prog->g);
    cc_rewrite_report rep;
    cc_graph* fused = NULL;
    gpt_step_desc d = step_desc(P);
    gpt_model_layout lay;
    winner w = { NULL, NULL };
    int* b = NULL;
    double t0 = now_s(), cp = 0, res = 0;
    size_t c;
    cc_result r;
    char what[200];
    snprintf(o->name, sizeof o->name, "S+F");
    *base = prog->g;
    *base_src = prog;
    what[0] = 0;
    r = cc_graph_fuse(P->ctx, prog->g, &rd, &fused, &rep);
    if (r == CC_OK) r = recost_collectives(P, fused);
    if (r == CC_OK) {
        cc_op* order = NULL;
        o->own_g = 1;
        r = schedule(P, fused, o, NULL, &order);
        o->g = fused;
        win(&w, order, prog);
        snprintf(what, sizeof what, "fused %d all-reduce bucket(s) (cc_graph_fuse): %d -> %d collectives", rep.n_changed,
                 rep.n_colls_before, rep.n_colls_after);
        if (rep.n_changed == 0) o->us = INFINITY;
    } else cc_graph_destroy(fused);
    if (over_cap(r)) {   /* under --memory-cap: no fused schedule fits */
        r = CC_OK;
        o->us = INFINITY;
    }
    memset(&lay, 0, sizeof lay);
    if (r == CC_OK && (!gpt_step_stage_params(&d, &lay) || !(b = (int*)malloc(sizeof(int) * (size_t)(lay.n + 1)))))
        r = CC_ERR_OUT_OF_MEMORY;
    for (c = 0; r == CC_OK && c < sizeof caps_mib / sizeof caps_mib[0]; c++) {
        step cand;
        outcome try_;
        cc_op* order = NULL;
        int nb = cap_buckets(P, &lay, (uint64_t)(caps_mib[c] * 1048576.0), b);
        memset(&try_, 0, sizeof try_);
        if (!step_build(P, b, lay.n, GPT_SYNC_AFTER_BACKWARD, &cand)) { r = CC_ERR_INVALID_ARG; break; }
        if ((r = schedule(P, cand.g, &try_, NULL, &order)) == CC_OK && cc_lower_bounds(P->ctx, cand.g, &cp, &res) == CC_OK) {
            if (res > cp) cp = res;
            if (cp < *lb) *lb = cp;   /* the smallest over the graphs planned */
        }
        if (r == CC_OK && try_.us < o->us) {
            /* the candidate wins: o takes its timeline, base_step its step */
            step_free(base_step);
            *base_step = cand;
            *base = base_step->g;
            *base_src = base_step;
            take(o, &try_, base_step->g, 0, try_.start);
            win(&w, order, base_step);
            if (caps_mib[c] >= 1e9)
                snprintf(what, sizeof what, "gradient%s buckets: one for all: %d bucket(s)", P->o.zero == 3 ? " and gather" : "", nb);
            else if (caps_mib[c] > 0)
                snprintf(what, sizeof what, "gradient%s buckets of %g MiB: %d bucket(s)", P->o.zero == 3 ? " and gather" : "", caps_mib[c], nb);
            else snprintf(what, sizeof what, "gradient%s buckets of one layer: %d bucket(s)", P->o.zero == 3 ? " and gather" : "", nb);
        } else {
            free(try_.start);
            free(order);
            step_free(&cand);
        }
        if (over_cap(r)) r = CC_OK;   /* the candidate does not fit under --memory-cap */
    }
    /* the peers' bucketings (their graphs, with their placements), scheduled by the library */
    for (c = 0; r == CC_OK && c < (size_t)n_peers; c++) {
        outcome try_;
        cc_op* order = NULL;
        if (!peers[c].s.g) continue;
        memset(&try_, 0, sizeof try_);
        if ((r = schedule(P, peers[c].s.g, &try_, NULL, &order)) == CC_OK && try_.us < o->us) {
            *base = peers[c].s.g;
            *base_src = &peers[c].s;
            take(o, &try_, peers[c].s.g, 0, try_.start);
            win(&w, order, &peers[c].s);
            snprintf(what, sizeof what, "the buckets of %s's rule: %d collectives", peers[c].name, try_.n_colls);
        } else {
            free(try_.start);
            free(order);
        }
        if (over_cap(r)) r = CC_OK;
    }
    free(b);
    gpt_layout_free(&lay);
    o->true_us = NAN;
    if (r == CC_OK) {
        if (o->us >= s->us) {
            char why[260];
            snprintf(why, sizeof why, "no fusion paid (best: %s, %.3f ms): as S", what[0] ? what : "none", o->us / 1000.0);
            *base = prog->g;
            *base_src = prog;
            r = keep_earlier(s, o, why);
        } else {
            snprintf(o->what, sizeof o->what, "%s; reordered", what);
            if (w.order && w.src) r = true_makespan(P, w.src, o->g, w.order, &o->true_us);
        }
    }
    win(&w, NULL, NULL);
    o->plan_s = now_s() - t0;
    return r;
}

/* S+AD: decomposition of S+F's step (before its fusion), then fusion,
   each judged by the scheduler, the collectives costed again, scheduled;
   S+F where it does not pay. Up to 16 chunks; variant 1 ("S+AD near"):
   contexts of the immediate neighbours only; 2 ("S+AD N=2"): two chunks
   each; 3 ("S+AD matmul-adjacent"): the step rebuilt with split rules on
   its matmuls only, contexts of the immediate neighbours. */
static cc_result run_sad(const planner* P, cc_graph* base, const step* base_src, const outcome* sf, outcome* o, int variant) {
    cc_rewrite_desc rd = rewrite_desc(P, base);
    cc_rewrite_report dec, fus;
    cc_graph *split = NULL, *fused = NULL;
    cc_op* order = NULL;
    double t0 = now_s();
    cc_result r;
    step bound;
    int unmeasured = 0;
    snprintf(o->name, sizeof o->name, "%s",
             variant == 1 ? "S+AD near" : variant == 2 ? "S+AD N=2" : variant == 3 ? "S+AD matmul-adjacent" : "S+AD");
    rd.max_chunks = variant == 2 ? 2 : 16;
    /* the chunks make a step of hundreds of ops one of thousands (of
       ZeRO-3's gathers, tens of thousands): its judgements go without
       odd-even windows, and above 1,000 ops are list passes, as a large
       step's */
    rd.sched.rounds = -1;
    if (cc_graph_n_ops(base) > 1000) rd.sched.method = CC_SCHED_LIST;
    /* each screen builds and simulates the whole step as decomposed so
       far: the screens' budget is counted in work, DEC_SCREEN_WORK ops
       screened in all (up to 4,000 screens) */
    rd.max_evaluations = 4000;
    rd.max_screen_ops = DEC_SCREEN_WORK;
    if (variant == 1 || variant == 3) rd.max_context_depth = 1;
    memset(&bound, 0, sizeof bound);
    /* without a cap the step is decomposed with every buffer bound: a
       transient buffer cut in chunks is allocated by the first chunk that
       writes it, which orders the chunks after it (S+AD's peak is then not
       measured); matmul-adjacent: the step rebuilt with rules on its
       matmuls only, its buffers as S+F's (transient under a cap) */
    if (!P->o.memory_cap || variant == 3) {
        if (!step_build_ex(P, base_src->bucket_of, base_src->n_bucket_of, base_src->grad_sync, P->o.memory_cap != 0, variant == 3,
                           &bound))
            return CC_ERR_INVALID_ARG;
        if (base_src->edges_of) {   /* the peer's edges, as its order function added them to base */
            cc_op* ord = (cc_op*)malloc(sizeof(cc_op) * (size_t)(cc_graph_n_ops(bound.g) + 1));
            char err[512];
            int n_edges = 0;
            r = ord ? base_src->edges_of->order(bound.g, 1, ord, &n_edges, err, sizeof err) : CC_ERR_OUT_OF_MEMORY;
            free(ord);
            if (r != CC_OK) { step_free(&bound); return r; }
        }
        base = bound.g;
        unmeasured = !P->o.memory_cap;
    }
    r = cc_graph_decompose(P->ctx, base, &rd, &split, &dec);
    if (r == CC_OK && dec.n_changed == 0) {   /* nothing split: S+AD would be S+F's fusion again */
        cc_graph_destroy(split);
        free(order);
        step_free(&bound);
        r = keep_earlier(sf, o, "decomposition did not pay (0 split): as S+F");
        o->plan_s = now_s() - t0;
        return r;
    }
    if (r == CC_OK) r = recost_collectives(P, split);
    if (r == CC_OK) {
        cc_rewrite_desc fd = rewrite_desc(P, split);
        r = cc_graph_fuse(P->ctx, split, &fd, &fused, &fus);
    }
    cc_graph_destroy(split);
    if (r == CC_OK) r = recost_collectives(P, fused);
    if (r == CC_OK) {
        o->own_g = 1;
        r = schedule(P, fused, o, NULL, &order);
        o->g = fused;
    } else cc_graph_destroy(fused);
    o->true_us = NAN;
    if (over_cap(r)) {   /* under --memory-cap: nothing decomposed fits */
        r = CC_OK;
        o->us = INFINITY;
        dec.n_changed = 0;
    }
    if (r == CC_OK) {
        if (unmeasured) o->has_peak = 0;
        if (dec.n_changed == 0 || o->us >= sf->us) {
            char why[200];
            snprintf(why, sizeof why, "decomposition did not pay (%d split, %.3f ms): as S+F", dec.n_changed, o->us / 1000.0);
            r = keep_earlier(sf, o, why);
        } else {
            snprintf(o->what, sizeof o->what, "decomposed %d collective(s) with their contexts (%d -> %d ops), fused %d bucket(s); "
                     "reordered", dec.n_changed, dec.n_ops_before, dec.n_ops_after, fus.n_changed);
            r = true_makespan(P, base_src, o->g, order, &o->true_us);
        }
    }
    free(order);
    step_free(&bound);
    o->plan_s = now_s() - t0;
    return r;
}

/* ---- output ------------------------------------------------------------------------ */
static void json_str(const char* s) {
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static void json_num(double v) {
    if (isnan(v) || isinf(v)) printf("null");
    else printf("%.3f", v);
}

static void json_bytes(const outcome* v) {
    if (v->has_peak) printf("%llu", (unsigned long long)v->peak);
    else printf("null");
}

static void print_json(const planner* P, outcome* out, int n_out, int n_peers, double lb_us, double plan_s, int n_ops) {
    const options* o = &P->o;
    int i, first;
    printf("{\"simulated\": true, \"model\": ");
    json_str(o->model);
    printf(", \"layers\": %d, \"hidden\": %d, \"heads\": %d, \"seq\": %d, \"vocab\": %d, \"micro_batch\": %d, \"micro_batches\": %d",
           o->cfg.L, o->cfg.C, o->cfg.H, o->cfg.T, o->cfg.V, o->micro_batch, o->n_micro);
    printf(", \"tp\": %d, \"dp\": %d, \"pp\": %d, \"zero\": %d, \"sp\": %d, \"dtype\": \"%s\", \"cluster\": ", o->tp, o->dp, o->pp,
           o->zero, o->sp, o->dtype == CC_DTYPE_FLOAT32 ? "fp32" : o->dtype == CC_DTYPE_BFLOAT16 ? "bf16" : "fp16");
    json_str(P->spec.name ? P->spec.name : o->cluster);
    printf(", \"nodes\": %d, \"gpus_per_node\": %d, \"gpus\": %d, \"alpha\": %.3f, \"alpha_true\": %.3f, \"noise\": %.3f, \"seed\": %llu",
           o->nodes, o->gpus_per_node, o->nodes * o->gpus_per_node, o->alpha, o->alpha_true, o->noise, (unsigned long long)o->seed);
    printf(", \"n_ops\": %d, \"program_us\": ", n_ops);
    json_num(out[0].us);
    printf(", \"peers\": {");
    for (i = 1; i <= n_peers; i++) {
        if (i > 1) printf(", ");
        json_str(out[i].name);
        printf(": ");
        json_num(out[i].us);
    }
    printf("}, \"s_us\": ");
    json_num(out[n_peers + 1].us);
    printf(", \"sf_us\": ");
    json_num(out[n_peers + 2].us);
    printf(", \"sad_us\": ");
    json_num(out[n_peers + 3].us);
    printf(", \"lower_bound_us\": ");
    json_num(lb_us);
    printf(", \"plan_s\": ");
    json_num(plan_s);
    /* memory: S's peak (the library's schedule of the step as written),
       every peer's, the persistent part, the cap */
    printf(", \"peak_bytes\": ");
    json_bytes(&out[n_peers + 1]);
    printf(", \"persistent_bytes\": %llu", (unsigned long long)persistent_bytes(P, out[0].g));
    if (o->memory_cap) printf(", \"memory_cap_bytes\": %llu", (unsigned long long)o->memory_cap);
    printf(", \"peers_peak_bytes\": {");
    for (i = 1; i <= n_peers; i++) {
        if (i > 1) printf(", ");
        json_str(out[i].name);
        printf(": ");
        json_bytes(&out[i]);
    }
    printf("}");
    if (o->memory_cap) {
        printf(", \"peers_over_cap\": [");
        for (i = 1, first = 1; i <= n_peers; i++)
            if (out[i].has_peak && out[i].peak > o->memory_cap) {
                if (!first) printf(", ");
                json_str(out[i].name);
                first = 0;
            }
        printf("]");
    }
    printf(", \"variants\": [");
    for (i = 0; i < n_out; i++) {
        outcome* v = &out[i];
        if (i) printf(", ");
        printf("{\"name\": ");
        json_str(v->name);
        printf(", \"us\": ");
        json_num(v->us);
        printf(", \"true_us\": ");
        json_num(v->true_us);
        printf(", \"exposed_us\": ");
        json_num(v->exposed_us);
        printf(", \"plan_s\": ");
        json_num(v->plan_s);
        printf(", \"peak_bytes\": ");
        json_bytes(v);
        printf(", \"n_ops\": %d, \"n_colls\": %d, \"valid\": %s, \"what\": ", v->n_ops, v->n_colls, v->valid ? "true" : "false");
        json_str(v->what);
        printf("}");
    }
    printf("]}\n");
}

static void print_text(const planner* P, outcome* out, int n_out, double lb_us, double plan_s, int n_ops) {
    const options* o = &P->o;
    int i;
    printf("%s: L=%d C=%d H=%d T=%d V=%d, micro-batch %d x %d, tp %d x dp %d x pp %d, zero %d%s, %s\n", o->model, o->cfg.L, o->cfg.C,
           o->cfg.H, o->cfg.T, o->cfg.V, o->micro_batch, o->n_micro, o->tp, o->dp, o->pp, o->zero, o->sp ? ", sp" : "",
           o->dtype == CC_DTYPE_FLOAT32 ? "fp32" : o->dtype == CC_DTYPE_BFLOAT16 ? "bf16" : "fp16");
    printf("cluster: %s, %d node(s) x %d GPUs; overlapped compute %.2fx as long (alpha)\n", P->spec.name ? P->spec.name : o->cluster,
           o->nodes, o->gpus_per_node, o->alpha);
    printf("the step of stage 0's rank: %d ops; every figure below is SIMULATED from the cost model\n", n_ops);
    if (o->memory_cap)
        printf("memory cap: %.3f GiB per rank, of which %.3f GiB persistent (parameters or their shards, gradients, optimizer "
               "state); peak: persistent + transient buffers alive at once\n", gib(o->memory_cap), gib(persistent_bytes(P, out[0].g)));
    printf("\n");
    if (o->memory_cap) printf("%-20s %12s %8s %12s %10s %9s  %s\n", "", "step ms", "vs prog", "exposed ms", "plan s", "peak GiB", "what");
    else printf("%-20s %12s %8s %12s %10s  %s\n", "", "step ms", "vs prog", "exposed ms", "plan s", "what");
    for (i = 0; i < n_out; i++) {
        const outcome* v = &out[i];
        char peak[32] = "";
        if (o->memory_cap) {
            if (v->has_peak) snprintf(peak, sizeof peak, " %9.3f", gib(v->peak));
            else snprintf(peak, sizeof peak, " %9s", "-");
        }
        printf("%-20s %12.3f %7.3fx %12.3f %10.3f%s  %s%s%s\n", v->name, v->us / 1000.0, v->us > 0 ? out[0].us / v->us : 0,
               v->exposed_us / 1000.0, v->plan_s, peak, v->what, v->valid ? "" : " [TIMELINE INVALID]",
               o->memory_cap && v->has_peak && v->peak > o->memory_cap ? " [OVER THE MEMORY CAP]" : "");
        if ((o->noise > 0 || o->alpha_true != o->alpha) && !isnan(v->true_us))
            printf("%-20s %12.3f   (its order under the true numbers)\n", "", v->true_us / 1000.0);
    }
    printf("%-20s %12.3f\n", "lower bound", lb_us / 1000.0);
    printf("planned in %.2f s\n", plan_s);
}

/* ---- --memory-curve -------------------------------------------------------------------- */
typedef struct curve_point {
    uint64_t cap;              /* a rank's cap (persistent + transient), bytes; 0: unlimited */
    double us;                 /* S's step under it */
    uint64_t peak;             /* its timeline's peak, persistent included */
    double solve_s;
} curve_point;

/* S of g under a transient cap (0: none) from the schedule from (NULL:
   none): its step and transient peak; the schedule into *sched (released
   first) where sched is not NULL. */
static cc_result solve_capped(const planner* P, cc_graph* g, uint64_t cap_transient, const cc_schedule* from, double* us,
                              uint64_t* peak, cc_schedule* sched, double* secs) {
    cc_sched_desc d = sched_desc(P, g);
    cc_schedule sch;
    double t0 = now_s();
    cc_result r;
    memset(&sch, 0, sizeof sch);
    d.memory_cap_bytes = cap_transient;
    d.start_from = from;
    r = cc_sched_solve(P->ctx, g, &d, &sch);
    *secs = now_s() - t0;
    if (r != CC_OK) return r;
    *us = sch.makespan_us;
    /* the peak by the graph's own sweep, not the solver's figure */
    r = cc_memory_check(P->ctx, g, sch.start_us, NULL, cap_transient, peak, NULL);
    if (r == CC_OK && sched) {
        cc_schedule_release(P->ctx, sched);
        *sched = sch;
    } else cc_schedule_release(P->ctx, &sch);
    return r;
}

/* The solve-time cost of the memory resource: S without a cap, and S
   under the cap halfway between program order's peak and S's uncapped
   one, both from nothing (no start order). */
typedef struct curve_cost { double free_s, free_us, capped_s, capped_us; uint64_t free_peak, capped_cap, capped_peak; } curve_cost;

/* The curve of S's step time against the cap on the step as written
   (prog, with program order's timeline in prog_out), points[n_caps + 1]. */
static cc_result memory_curve(const planner* P, step* prog, const outcome* prog_out, int n_caps, curve_point* pts, curve_cost* cost) {
    cc_graph* g = prog->g;
    uint64_t keep = persistent_bytes(P, g), lo, hi, peak = 0;
    cc_op* order = program_order(g);
    int n = cc_graph_n_ops(g), i;
    double* prog_start = (double*)malloc(sizeof(double) * (size_t)(n + 1));
    cc_schedule best, prog_sched;
    double us = 0, secs = 0, mk = 0;
    cc_result r = order && prog_start ? CC_OK : CC_ERR_OUT_OF_MEMORY;
    memset(&best, 0, sizeof best);
    memset(&prog_sched, 0, sizeof prog_sched);
    /* S without a cap: where the curve ends */
    if (r == CC_OK) r = solve_capped(P, g, 0, NULL, &us, &peak, NULL, &secs);
    /* program order's timeline: where the tightest cap starts from */
    if (r == CC_OK) r = cc_simulate(P->ctx, g, order, n, prog_start, &mk);
    free(order);
    if (r != CC_OK) { free(prog_start); return r; }
    prog_sched.n_ops = n;
    prog_sched.start_us = prog_start;
    prog_sched.makespan_us = mk;
    cost->free_s = secs; cost->free_us = us; cost->free_peak = keep + peak;
    hi = peak;
    lo = prog_out->peak - keep;
    if (hi < lo) hi = lo;
    cost->capped_cap = keep + lo + (hi - lo) / 2;
    progress(P, "memory curve: S under %.3f GiB from nothing", gib(cost->capped_cap));
    r = solve_capped(P, g, lo + (hi - lo) / 2, NULL, &cost->capped_us, &cost->capped_peak, NULL, &cost->capped_s);
    cost->capped_peak += keep;
    for (i = 0; i <= n_caps && r == CC_OK; i++) {
        uint64_t cap_t = i < n_caps ? lo + (uint64_t)((double)(hi - lo) * i / (n_caps - 1)) : 0;
        curve_point* pt = &pts[i];
        memset(pt, 0, sizeof *pt);
        pt->cap = i < n_caps ? keep + cap_t : 0;
        progress(P, "memory curve: cap %d of %d (%.3f GiB)", i + 1, n_caps + 1, pt->cap ? gib(pt->cap) : INFINITY);
        /* each from the schedule under the tighter cap (program order's
           for the tightest): never later than it, by the solver's promise */
        r = solve_capped(P, g, cap_t, i ? &best : &prog_sched, &us, &peak, &best, &pt->solve_s);
        pt->us = us;
        pt->peak = keep + peak;
    }
    cc_schedule_release(P->ctx, &best);
    free(prog_start);
    return r;
}

static void print_curve(const planner* P, const outcome* out, int n_peers, const curve_point* pts, int n_pts, uint64_t keep,
                        const curve_cost* c) {
    int i;
    if (P->o.json) {
        printf("{\"simulated\": true, \"n_ops\": %d, \"persistent_bytes\": %llu, \"program_us\": ", out[0].n_ops,
               (unsigned long long)keep);
        json_num(out[0].us);
        printf(", \"program_peak_bytes\": %llu, \"curve\": [", (unsigned long long)out[0].peak);
        for (i = 0; i < n_pts; i++) {
            printf("%s{\"memory_cap_bytes\": ", i ? ", " : "");
            if (pts[i].cap) printf("%llu", (unsigned long long)pts[i].cap);
            else printf("null");
            printf(", \"s_us\": ");
            json_num(pts[i].us);
            printf(", \"peak_bytes\": %llu, \"solve_s\": ", (unsigned long long)pts[i].peak);
            json_num(pts[i].solve_s);
            printf("}");
        }
        printf("], \"uncapped\": {\"s_us\": ");
        json_num(c->free_us);
        printf(", \"peak_bytes\": %llu, \"solve_s\": ", (unsigned long long)c->free_peak);
        json_num(c->free_s);
        printf("}, \"capped\": {\"memory_cap_bytes\": %llu, \"s_us\": ", (unsigned long long)c->capped_cap);
        json_num(c->capped_us);
        printf(", \"peak_bytes\": %llu, \"solve_s\": ", (unsigned long long)c->capped_peak);
        json_num(c->capped_s);
        printf("}, \"peers\": {");
        for (i = 1; i <= n_peers; i++) {
            printf("%s", i > 1 ? ", " : "");
            json_str(out[i].name);
            printf(": {\"us\": ");
            json_num(out[i].us);
            printf(", \"peak_bytes\": ");
            json_bytes(&out[i]);
            printf("}");
        }
        printf("}}\n");
        return;
    }
    printf("S's step against a rank's memory cap (every figure SIMULATED); persistent %.3f GiB\n", gib(keep));
    printf("%12s %12s %12s %10s\n", "cap GiB", "step ms", "peak GiB", "solve s");
    for (i = 0; i < n_pts; i++) {
        char cap[32];
        if (pts[i].cap) snprintf(cap, sizeof cap, "%.3f", gib(pts[i].cap));
        else snprintf(cap, sizeof cap, "unlimited");
        printf("%12s %12.3f %12.3f %10.2f\n", cap, pts[i].us / 1000.0, gib(pts[i].peak), pts[i].solve_s);
    }
    printf("solved from nothing: without a cap %.3f ms, peak %.3f GiB, in %.2f s; under %.3f GiB %.3f ms, peak %.3f GiB, in %.2f s\n",
           c->free_us / 1000.0, gib(c->free_peak), c->free_s, gib(c->capped_cap), c->capped_us / 1000.0, gib(c->capped_peak),
           c->capped_s);
    printf("fixed policies (no cap):\n");
    for (i = 0; i <= n_peers; i++) {
        const outcome* v = &out[i];
        if (v->has_peak) printf("%-16s %12.3f %12.3f\n", v->name, v->us / 1000.0, gib(v->peak));
        else printf("%-16s %12.3f %12s\n", v->name, v->us / 1000.0, "-");
    }
}

/* ---- main ---------------------------------------------------------------------------- */
int main(int argc, char** argv) {
    options o;
    planner P;
    outcome out[6 + PEER_N_POLICIES + 1];
    int i, n_out = 0, n_peers = 0, rc = 0;
    double lb = 0, t0 = now_s();
    cc_graph* base = NULL;
    const step* base_src = NULL;
    cc_result r = CC_OK;
    memset(out, 0, sizeof out);
    if (!parse_args(argc, argv, &o)) return 2;
    if (!planner_setup(&P, &o)) { cc_context_destroy(P.ctx); return 2; }
    /* program order: one collective per tensor where the program puts it */
    snprintf(out[0].name, sizeof out[0].name, "program");
    progress(&P, "program: building and costing the step");
    if (!step_build(&P, NULL, 0, GPT_SYNC_AFTER_BACKWARD, &out[0].s)) { cc_context_destroy(P.ctx); return 2; }
    P.master = master_bytes(&out[0].s.m);
    if (o.memory_cap && persistent_bytes(&P, out[0].s.g) >= o.memory_cap) {
        fprintf(stderr, "%s: --memory-cap %llu bytes (%.3f GiB) is below the rank's persistent memory alone: %llu bytes (%.3f GiB) of "
                "parameters (or their shards), gradients, optimizer state and master weights, before any activation\n", program_name,
                (unsigned long long)o.memory_cap, gib(o.memory_cap), (unsigned long long)persistent_bytes(&P, out[0].s.g),
                gib(persistent_bytes(&P, out[0].s.g)));
        outcome_free(&out[0]);
        cc_context_destroy(P.ctx);
        return 1;
    }
    r = simulate_order(&P, &out[0].s, NULL, &out[0]);
    snprintf(out[0].what, sizeof out[0].what, "as issued: %d collectives, gradients reduced after the backward", out[0].n_colls);
    n_out = 1;
    for (i = 0; i < PEER_N_POLICIES && r == CC_OK; i++) {
        progress(&P, "peer %s (%d)", peer_policies[i].name, i + 1);
        r = run_peer(&P, &peer_policies[i], &out[n_out]);
        n_out++;
        n_peers++;
    }
    if (r == CC_OK && o.memory_curve) {
        curve_point* pts = (curve_point*)calloc((size_t)o.memory_curve + 1, sizeof *pts);
        curve_cost cost;
        memset(&cost, 0, sizeof cost);
        if (!pts) r = CC_ERR_OUT_OF_MEMORY;
        else if ((r = memory_curve(&P, &out[0].s, &out[0], o.memory_curve, pts, &cost)) == CC_OK)
            print_curve(&P, out, n_peers, pts, o.memory_curve + 1, persistent_bytes(&P, out[0].s.g), &cost);
        free(pts);
        if (r != CC_OK) fprintf(stderr, "%s: --memory-curve: %s\n", program_name, cc_last_error(P.ctx));
        for (i = n_out - 1; i >= 0; i--) outcome_free(&out[i]);
        cc_context_destroy(P.ctx);
        return r == CC_OK ? 0 : 1;
    }
    if (r == CC_OK) {
        progress(&P, "S: scheduling %d ops", cc_graph_n_ops(out[0].s.g));
        r = run_s(&P, &out[0].s, &out[n_out], &lb);
        n_out++;
    }
    if (r == CC_OK) {
        progress(&P, "S+F: fusion");
        r = run_sf(&P, &out[0].s, &out[n_out - 1], &out[1], n_peers, &out[n_out], &out[n_out].s, &base, &base_src, &lb);
        n_out++;
    }
    if (r == CC_OK) {
        progress(&P, "S+AD: decomposition, fusion");
        r = run_sad(&P, base, base_src, &out[n_out - 1], &out[n_out], 0);
        n_out++;
    }
    for (i = 1; i <= 3 && o.ad_variants && r == CC_OK; i++) {   /* beside S+F, as S+AD is */
        progress(&P, "S+AD %s: decomposition, fusion", i == 1 ? "near" : i == 2 ? "N=2" : "matmul-adjacent");
        r = run_sad(&P, base, base_src, &out[n_peers + 2], &out[n_out], i);
        n_out++;
    }
    /* the bound: the smallest over every graph planned (a peer's buckets
       make another graph, with its own bound) */
    for (i = 1; i <= n_peers && r == CC_OK; i++) {
        double cp = 0, res = 0;
        if ((r = cc_lower_bounds(P.ctx, out[i].s.g, &cp, &res)) == CC_OK) {
            if (res > cp) cp = res;
            if (cp < lb) lb = cp;
        }
    }
    if (r == CC_OK && o.sm) {
        r = cc_psplib_write(P.ctx, out[0].s.g, o.sm, 1.0);
        if (r != CC_OK) fprintf(stderr, "%s: --sm %s: %s\n", program_name, o.sm, cc_last_error(P.ctx));
    }
    if (r == CC_OK && o.trace) {
        cc_trace* tr = NULL;
        r = cc_trace_create(P.ctx, &tr);
        for (i = 0; i < n_out && r == CC_OK; i++) r = cc_trace_add(tr, out[i].g, i, out[i].name, out[i].start, NULL);
        if (r == CC_OK) r = cc_trace_write(tr, o.trace);
        if (r != CC_OK) fprintf(stderr, "%s: --trace %s: %s\n", program_name, o.trace, cc_last_error(P.ctx));
        cc_trace_destroy(tr);
    }
    if (r == CC_OK) {
        double plan_s = now_s() - t0;
        progress(&P, "done in %d variants", n_out);
        /* the library never plans above the cap: checked here by cc_memory_check's sweep (settle) */
        for (i = n_peers + 1; i < n_out && o.memory_cap; i++)
            if (out[i].has_peak && out[i].peak > o.memory_cap) {
                fprintf(stderr, "%s: %s: its timeline peaks at %llu bytes, above --memory-cap %llu\n", program_name, out[i].name,
                        (unsigned long long)out[i].peak, (unsigned long long)o.memory_cap);
                out[i].valid = 0;
            }
        if (o.json) print_json(&P, out, n_out, n_peers, lb, plan_s, cc_graph_n_ops(out[0].s.g));
        else print_text(&P, out, n_out, lb, plan_s, cc_graph_n_ops(out[0].s.g));
        for (i = 0; i < n_out; i++)
            if (!out[i].valid) rc = 1;
    } else {
        if (o.memory_cap && over_cap(r))
            fprintf(stderr, "%s: nothing fits under --memory-cap %llu bytes (%.3f GiB; %.3f GiB of it persistent, the rest for "
                    "transient buffers): ", program_name, (unsigned long long)o.memory_cap, gib(o.memory_cap),
                    gib(persistent_bytes(&P, out[0].s.g)));
        else fprintf(stderr, "%s: ", program_name);
        fprintf(stderr, "%s\n", cc_last_error(P.ctx)[0] ? cc_last_error(P.ctx) : cc_result_description(r));
        rc = 1;
    }
    for (i = n_out - 1; i >= 0; i--) outcome_free(&out[i]);
    cc_context_destroy(P.ctx);
    return rc;
}
