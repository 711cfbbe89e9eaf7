/* tests/test_peers.c - tools/peers.h: the peers' bucket rules against
   boundaries worked out by hand from each documented rule, the XLA-style
   scheduler against hand timelines and on random stream graphs, and bad
   knobs.

   The parameter list (model order, index 0..9) that the bucket checks use,
   M = 1 MiB of gradient bytes, E = elements:
       i   layer  bytes     elements
       0    -1    20 M      3e8       embedding
       1    -1    0.25 M    1000      position embedding
       2     0    10 M      2e8
       3     0    10 M      2e8
       4     0    5 M       3e7
       5     0    0.5 M     2e7
       6     1    12 M      2.5e8
       7     1    13 M      2.5e8
       8    -1    0.5 M     1000      final norm weight
       9    -1    0.75 M    2000      final norm bias
   Bytes and elements are independent here so that each rule is checked on
   the quantity its documentation names. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../tools/peers.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define NP 10
#define MIB 1048576ull
static const uint64_t quarter_mib[NP] = { 80, 1, 40, 40, 20, 2, 48, 52, 2, 3 };   /* bytes in units of 1/4 MiB */
static const uint64_t elems[NP] = { 300000000ull, 1000, 200000000ull, 200000000ull, 30000000ull, 20000000ull,
                                    250000000ull, 250000000ull, 1000, 2000 };
static const int layers[NP] = { -1, -1, 0, 0, 0, 0, 1, 1, -1, -1 };

static peer_param params[NP];
static int bucket[NP], gfwd[NP], gbwd[NP];
static peer_when when[NP];
static char err[512];

static void setup_params(void) {
    int i;
    for (i = 0; i < NP; i++) {
        params[i].n_bytes = quarter_mib[i] * (MIB / 4);
        params[i].n_elems = elems[i];
        params[i].layer = layers[i];
    }
}

static peer_plan fresh_plan(int gathers) {
    peer_plan p;
    memset(&p, 0, sizeof p);
    p.grad_bucket = bucket;
    p.grad_when = when;
    if (gathers) { p.gather_bucket_fwd = gfwd; p.gather_bucket_bwd = gbwd; }
    return p;
}

static int same(const int* got, const int* want, int n) {
    int i;
    for (i = 0; i < n; i++) if (got[i] != want[i]) return 0;
    return 1;
}

static void note_buckets(const char* what, const int* b) {
    NOTE("%s: %d %d %d %d %d %d %d %d %d %d", what, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9]);
}

/* PyTorch DDP, reverse order, close when the bucket reaches its cap
   (size >= limit), first cap 1 MiB, then 25 MiB:
     9: 0.75            < 1
     8: 0.75+0.5=1.25  >= 1   -> bucket 0 = {9, 8}
     7: 13; 6: 25      >= 25  -> bucket 1 = {7, 6}  (exactly the cap: closes)
     5: 0.5; 4: 5.5; 3: 15.5; 2: 25.5 >= 25 -> bucket 2 = {5, 4, 3, 2}
     1: 0.25; 0: 20.25, the end   -> bucket 3 = {1, 0}
   All launched when ready. */
static void test_ddp(void) {
    static const int want[NP] = { 3, 3, 2, 2, 2, 2, 1, 1, 0, 0 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(0);
    int b, all_ready = 1;
    CHECK(k.ddp_bucket_cap_mb == 25.0 && k.ddp_first_bucket_mb == 1.0, "DDP defaults: bucket_cap_mb 25, first bucket 1 MiB");
    CHECK_RES(NULL, peer_ddp_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "DDP buckets: %s", err);
    CHECK_INT(p.n_grad_buckets, 4, "DDP: 4 buckets by hand");
    if (!CHECK(same(bucket, want, NP), "DDP: boundaries {9,8} {7,6} {5,4,3,2} {1,0} as worked out by hand")) note_buckets("got", bucket);
    for (b = 0; b < p.n_grad_buckets; b++) all_ready &= when[b] == PEER_WHEN_READY;
    CHECK(all_ready && p.grad_overlap == 1 && p.tp_overlap == 0, "DDP: every bucket launched when ready, beside compute");
}

/* Megatron-LM, reverse order, close once the bucket holds >= bucket_size
   parameters (elements), bucket_size = max(40e6, 1e6*dp).
   dp = 8: cap 40e6
     9,8: 3000; 7: 250,003,000 >= 40e6 -> bucket 0 = {9, 8, 7}
     6: 2.5e8 -> bucket 1 = {6}
     5: 2e7; 4: 5e7 >= 4e7 -> bucket 2 = {5, 4}
     3 -> {3}; 2 -> {2}; 1: 1000; 0: 300,001,000 -> bucket 5 = {1, 0}
   dp = 64: cap 64e6: the same up to 5, 4: 5e7 < 6.4e7; 3: 2.5e8 -> bucket 2 = {5, 4, 3}
     2 -> bucket 3 = {2}; 1, 0 -> bucket 4 = {1, 0}
   Without overlap_grad_reduce: one bucket, after the backward. */
static void test_megatron(void) {
    static const int want8[NP] = { 5, 5, 4, 3, 2, 2, 1, 0, 0, 0 };
    static const int want64[NP] = { 4, 4, 3, 2, 2, 2, 1, 0, 0, 0 };
    static const int want_one[NP] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(0);
    k.dp = 8;
    CHECK_RES(NULL, peer_megatron_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "Megatron dp 8: %s", err);
    CHECK_INT(p.n_grad_buckets, 6, "Megatron dp 8 (cap 40e6): 6 buckets by hand");
    if (!CHECK(same(bucket, want8, NP), "Megatron dp 8: {9,8,7} {6} {5,4} {3} {2} {1,0}")) note_buckets("got", bucket);
    CHECK(when[0] == PEER_WHEN_READY && when[5] == PEER_WHEN_READY && p.grad_overlap == 1, "Megatron: overlapped grad reduce, when ready");
    k.dp = 64;
    p = fresh_plan(0);
    CHECK_RES(NULL, peer_megatron_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "Megatron dp 64: %s", err);
    CHECK_INT(p.n_grad_buckets, 5, "Megatron dp 64 (cap 64e6 = 1e6*dp): 5 buckets by hand");
    if (!CHECK(same(bucket, want64, NP), "Megatron dp 64: {9,8,7} {6} {5,4,3} {2} {1,0}")) note_buckets("got", bucket);
    k.megatron_overlap_grad_reduce = 0;
    p = fresh_plan(0);
    CHECK_RES(NULL, peer_megatron_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "Megatron without overlap: %s", err);
    CHECK(p.n_grad_buckets == 1 && same(bucket, want_one, NP) && when[0] == PEER_AFTER_BACKWARD && p.grad_overlap == 0,
          "Megatron without overlap_grad_reduce: one bucket after the backward");
    /* TP comm overlap: only with sequence parallelism and a TP group inside one node */
    k = peer_knobs_default();
    k.tp = 8; k.gpus_per_node = 8; k.sequence_parallel = 1;
    p = fresh_plan(0);
    peer_megatron_buckets(params, NP, &k, &p, err, sizeof err);
    CHECK_INT(p.tp_overlap, 1, "Megatron: TP 8 inside an 8-GPU node with SP may overlap");
    k.tp = 16;
    peer_megatron_buckets(params, NP, &k, &p, err, sizeof err);
    CHECK_INT(p.tp_overlap, 0, "Megatron: TP 16 spans two 8-GPU nodes: synchronous");
    k.tp = 8; k.sequence_parallel = 0;
    peer_megatron_buckets(params, NP, &k, &p, err, sizeof err);
    CHECK_INT(p.tp_overlap, 0, "Megatron: TP comm overlap needs sequence parallelism");
    k.tp = 1; k.sequence_parallel = 1;
    peer_megatron_buckets(params, NP, &k, &p, err, sizeof err);
    CHECK_INT(p.tp_overlap, 0, "Megatron: no TP, nothing to overlap");
}

/* DeepSpeed ZeRO-3, reduce_bucket_size 5e8 elements: reverse order, the
   open bucket is reduced *before* adding a gradient that would take it past
   5e8 (> 5e8, not >=):
     9,8: 3000; 7: 250,003,000; 6 would make 500,003,000 > 5e8 -> bucket 0 = {9, 8, 7}
     6: 2.5e8; 5: 2.7e8; 4: 3.0e8; 3: 5.0e8 exactly (not past) -> stays;
     2 would make 7e8 -> bucket 1 = {6, 5, 4, 3}
     2: 2e8; 1: 200,001,000; 0 would make 500,001,000 -> bucket 2 = {2, 1}; bucket 3 = {0}
   Gathers: parameters of <= 1e5 elements (1, 8, 9) are never partitioned;
   the rest in prefetch buckets closed at >= 5e7 elements:
     forward (0..9): {0} {2} {3} {4, 5} (3e7 + 2e7 = 5e7 closes) {6} {7}
     backward (9..0): {7} {6} {5, 4} {3} {2} {0} */
static void test_deepspeed(void) {
    static const int want[NP] = { 3, 2, 2, 1, 1, 1, 1, 0, 0, 0 };
    static const int want_fwd[NP] = { 0, -1, 1, 2, 3, 3, 4, 5, -1, -1 };
    static const int want_bwd[NP] = { 5, -1, 4, 3, 2, 2, 1, 0, -1, -1 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(1);
    CHECK(k.ds_reduce_bucket_elems == 5e8 && k.ds_prefetch_bucket_elems == 5e7 && k.ds_persistence_elems == 1e5,
          "DeepSpeed defaults: reduce 5e8, prefetch 5e7, persistence 1e5 elements");
    k.zero_stage = 3;
    CHECK_RES(NULL, peer_deepspeed_zero3_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "DeepSpeed buckets: %s", err);
    CHECK_INT(p.n_grad_buckets, 4, "DeepSpeed: 4 reduce buckets by hand");
    if (!CHECK(same(bucket, want, NP), "DeepSpeed: reduce buckets {9,8,7} {6,5,4,3} {2,1} {0}")) note_buckets("got", bucket);
    CHECK(p.grad_overlap == 1 && when[0] == PEER_WHEN_READY, "DeepSpeed stage 3: overlap_comm, reduced when the bucket fills");
    CHECK_INT(p.n_gather_fwd, 6, "DeepSpeed: 6 forward gather buckets");
    if (!CHECK(same(gfwd, want_fwd, NP), "DeepSpeed: forward gathers {0} {2} {3} {4,5} {6} {7}, 1/8/9 kept whole"))
        note_buckets("got", gfwd);
    CHECK_INT(p.n_gather_bwd, 6, "DeepSpeed: 6 backward gather buckets");
    if (!CHECK(same(gbwd, want_bwd, NP), "DeepSpeed: backward gathers {7} {6} {5,4} {3} {2} {0}")) note_buckets("got", gbwd);
    CHECK_INT(p.gather_prefetch, 1, "DeepSpeed: the next bucket is gathered while this one is used");
    k.zero_stage = 2;
    p = fresh_plan(0);
    peer_deepspeed_zero3_buckets(params, NP, &k, &p, err, sizeof err);
    CHECK_INT(p.grad_overlap, 0, "DeepSpeed below stage 3: overlap_comm defaults to off");
}

/* llm.c: one bucket per layer, last layer first, when ready; the
   parameters outside the layers (0, 1, 8, 9) together after the backward:
     bucket 0 = layer 1 = {6, 7}; bucket 1 = layer 0 = {2, 3, 4, 5}; bucket 2 = {0, 1, 8, 9} */
static void test_llmc(void) {
    static const int want[NP] = { 2, 2, 1, 1, 1, 1, 0, 0, 2, 2 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(0);
    CHECK_RES(NULL, peer_llmc_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "llm.c buckets: %s", err);
    CHECK_INT(p.n_grad_buckets, 3, "llm.c: 2 layers + the rest");
    if (!CHECK(same(bucket, want, NP), "llm.c: {6,7} {2,3,4,5} {0,1,8,9}")) note_buckets("got", bucket);
    CHECK(when[0] == PEER_WHEN_READY && when[1] == PEER_WHEN_READY && when[2] == PEER_AFTER_BACKWARD,
          "llm.c: layers when ready, the rest after the backward");
}

/* XLA's all-reduce combiner, 30 MiB and 256 ops, in gradient order, a new
   group before the one that would pass 30 MiB:
     9: 0.75; 8: 1.25; 7: 14.25; 6: 26.25; 5: 26.75; 4 would make 31.75 -> {9,8,7,6,5}
     4: 5; 3: 15; 2: 25; 1: 25.25; 0 would make 45.25 -> {4,3,2,1}; {0}
   With at most 2 ops a group (sizes never bite then): {9,8} {7,6} {5,4} {3,2} {1,0}. */
static void test_xla_combiner(void) {
    static const int want[NP] = { 2, 1, 1, 1, 1, 0, 0, 0, 0, 0 };
    static const int want2[NP] = { 4, 4, 3, 3, 2, 2, 1, 1, 0, 0 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(0);
    CHECK_RES(NULL, peer_xla_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "XLA combiner: %s", err);
    CHECK_INT(p.n_grad_buckets, 3, "XLA combiner: 3 groups by hand");
    if (!CHECK(same(bucket, want, NP), "XLA combiner: {9,8,7,6,5} {4,3,2,1} {0}")) note_buckets("got", bucket);
    k.xla_combine_count = 2;
    p = fresh_plan(0);
    CHECK_RES(NULL, peer_xla_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "XLA combiner, 2 ops: %s", err);
    CHECK_INT(p.n_grad_buckets, 5, "XLA combiner, 2 ops a group: 5 groups");
    if (!CHECK(same(bucket, want2, NP), "XLA combiner, 2 ops a group: pairs")) note_buckets("got", bucket);
}

/* ---- bad knobs ------------------------------------------------------------------*/
static void expect_bad(peer_bucket_fn fn, const peer_knobs* k, const char* part, const char* what) {
    peer_plan p = fresh_plan(1);
    err[0] = '\0';
    CHECK_RES(NULL, fn(params, NP, k, &p, err, sizeof err), CC_ERR_INVALID_ARG, "%s is refused", what);
    CHECK_CONTAINS(err, part, "%s: the message names the knob", what);
}

static void test_bad_knobs(void) {
    peer_knobs k;
    peer_plan p = fresh_plan(0);
    int i;
    for (i = 0; i < PEER_N_POLICIES; i++) {
        k = peer_knobs_default();
        k.dp = 0;
        expect_bad(peer_policies[i].buckets, &k, "dp", peer_policies[i].name);
        k = peer_knobs_default();
        k.tp = -2;
        expect_bad(peer_policies[i].buckets, &k, "tp", peer_policies[i].name);
    }
    k = peer_knobs_default(); k.ddp_bucket_cap_mb = 0;
    expect_bad(peer_ddp_buckets, &k, "bucket_cap_mb", "DDP, a zero bucket cap");
    k = peer_knobs_default(); k.ddp_first_bucket_mb = -1;
    expect_bad(peer_ddp_buckets, &k, "_DEFAULT_FIRST_BUCKET_BYTES", "DDP, a negative first bucket");
    k = peer_knobs_default(); k.megatron_bucket_elems = 0;
    expect_bad(peer_megatron_buckets, &k, "bucket_size", "Megatron, a zero bucket_size");
    k = peer_knobs_default(); k.ds_reduce_bucket_elems = 0;
    expect_bad(peer_deepspeed_zero3_buckets, &k, "reduce_bucket_size", "DeepSpeed, a zero reduce bucket");
    k = peer_knobs_default(); k.ds_prefetch_bucket_elems = NAN;
    expect_bad(peer_deepspeed_zero3_buckets, &k, "stage3_prefetch_bucket_size", "DeepSpeed, a NaN prefetch bucket");
    k = peer_knobs_default(); k.ds_persistence_elems = -5;
    expect_bad(peer_deepspeed_zero3_buckets, &k, "stage3_param_persistence_threshold", "DeepSpeed, a negative persistence");
    k = peer_knobs_default(); k.xla_combine_mb = 0;
    expect_bad(peer_xla_buckets, &k, "combine_threshold", "XLA, a zero combine threshold");
    k = peer_knobs_default();
    CHECK_RES(NULL, peer_ddp_buckets(params, 0, &k, &p, err, sizeof err), CC_ERR_INVALID_ARG, "no parameters is refused");
    CHECK_CONTAINS(err, "n_params", "the message names n_params");
    CHECK_RES(NULL, peer_ddp_buckets(params, NP, NULL, &p, err, sizeof err), CC_ERR_INVALID_ARG, "NULL knobs are refused");
    CHECK(peer_policy_find("megatron-lm") == &peer_policies[1] && peer_policy_find("nope") == NULL, "the table finds by name");
}

/* ---- the XLA-style scheduler ------------------------------------------------------*/
static cc_context* ctx;
static int dummy_comm;
static float dummy_buf[4];

static cc_op add(cc_graph* g, const char* name, double us, int stream, cc_coll_kind kind, const cc_op* deps, int n_deps) {
    cc_op_desc d = {0};
    cc_collective co;
    cc_op op;
    memset(&co, 0, sizeof co);
    co.kind = kind; co.dtype = CC_DTYPE_FLOAT32; co.n_elems = 1; co.comm = (cc_comm*)&dummy_comm;
    co.send_buf = dummy_buf; co.recv_buf = dummy_buf;
    d.name = name; d.duration_us = us; d.stream = stream; d.deps = deps; d.n_deps = n_deps;
    if (kind != CC_COLL_NONE) d.coll = &co;
    op.id = 0;
    if (cc_graph_add_op(g, &d, &op) != CC_OK) CHECK(0, "adding op %s: %s", name, cc_last_error(ctx));
    return op;
}

static cc_graph* three_streams(void) {
    cc_graph_desc gd = {0};
    cc_graph* g = NULL;
    gd.n_streams = 3;
    if (cc_graph_create(ctx, &gd, &g) != CC_OK) CHECK(0, "a graph of 3 streams: %s", cc_last_error(ctx));
    return g;
}

/* cc_simulate of program order. */
static cc_result simulate_program(cc_graph* g, double* st, double* mk) {
    cc_op order[64];
    int n = cc_graph_n_ops(g), i;
    for (i = 0; i < n && i < 64; i++) order[i] = cc_graph_op(g, i);
    return cc_simulate(ctx, g, order, n, st, mk);
}

/* No two collectives of one kind overlap in time (touching is fine). */
static int one_in_flight(cc_graph* g, const double* st) {
    int n = cc_graph_n_ops(g), i, j;
    for (i = 0; i < n; i++) {
        const cc_collective* a = cc_op_collective(g, cc_graph_op(g, i));
        double ea;
        if (!a) continue;
        ea = st[i] + cc_op_duration_us(g, cc_graph_op(g, i));
        for (j = i + 1; j < n; j++) {
            const cc_collective* b = cc_op_collective(g, cc_graph_op(g, j));
            double eb;
            if (!b || b->kind != a->kind) continue;
            eb = st[j] + cc_op_duration_us(g, cc_graph_op(g, j));
            if (st[i] < eb - 1e-9 && st[j] < ea - 1e-9) return 0;
        }
    }
    return 1;
}

/* Two independent all-reduces of 10 us on two communication streams. In
   program order they overlap (makespan 10); XLA's limit of one all-reduce
   in flight runs them one after the other: makespan 20 by hand. An
   all-gather beside an all-reduce is a different kind: 10. */
static void test_xla_two_allreduces(void) {
    cc_graph* g = three_streams();
    cc_op ops[2], order[2];
    double st[2], mk = -1;
    int n_edges = -1;
    if (!g) return;
    ops[0] = add(g, "ar_nvlink", 10, 1, CC_COLL_ALL_REDUCE, NULL, 0);
    ops[1] = add(g, "ar_net", 10, 2, CC_COLL_ALL_REDUCE, NULL, 0);
    CHECK_RES(ctx, cc_op_collective(g, ops[0]) ? CC_OK : CC_ERR_UNKNOWN_OP, CC_OK, "cc_op_collective gives the all-reduce");
    CHECK(cc_op_collective(g, ops[0])->kind == CC_COLL_ALL_REDUCE, "cc_op_collective's kind is the one given");
    CHECK_RES(ctx, simulate_program(g, st, &mk), CC_OK, "program order simulates");
    CHECK_NEAR(mk, 10, 1e-9, "program order: the two all-reduces overlap, makespan 10");
    CHECK_RES(NULL, peer_xla_schedule(g, 1, order, &n_edges, err, sizeof err), CC_OK, "XLA schedule: %s", err);
    CHECK_INT(n_edges, 1, "one edge serialises the all-reduces of two streams");
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 2, st, &mk), CC_OK, "the XLA order simulates");
    CHECK_NEAR(mk, 20, 1e-9, "XLA: one all-reduce in flight, makespan 20 by hand");
    CHECK(one_in_flight(g, st), "XLA: the all-reduces do not overlap (%g, %g)", st[0], st[1]);
    cc_graph_destroy(g);

    /* without the edges the order alone cannot keep them apart, and says so */
    g = three_streams();
    if (!g) return;
    ops[0] = add(g, "ar_nvlink", 10, 1, CC_COLL_ALL_REDUCE, NULL, 0);
    ops[1] = add(g, "ar_net", 10, 2, CC_COLL_ALL_REDUCE, NULL, 0);
    CHECK_RES(NULL, peer_xla_schedule(g, 0, order, &n_edges, err, sizeof err), CC_OK, "XLA schedule without edges: %s", err);
    CHECK_INT(n_edges, 1, "without add_edges: one edge reported as needed");
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 2, st, &mk), CC_OK, "simulates");
    CHECK(!one_in_flight(g, st) && mk == 10, "without the edge the two overlap: the in-flight check can fail (makespan %g)", mk);
    cc_graph_destroy(g);

    g = three_streams();
    if (!g) return;
    ops[0] = add(g, "ar", 10, 1, CC_COLL_ALL_REDUCE, NULL, 0);
    ops[1] = add(g, "ag", 10, 2, CC_COLL_ALL_GATHER, NULL, 0);
    CHECK_RES(NULL, peer_xla_schedule(g, 1, order, &n_edges, err, sizeof err), CC_OK, "XLA schedule: %s", err);
    CHECK_INT(n_edges, 0, "an all-reduce and an all-gather need no edge");
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 2, st, &mk), CC_OK, "simulates");
    CHECK_NEAR(mk, 10, 1e-9, "XLA: an all-reduce beside an all-gather, makespan 10");
    cc_graph_destroy(g);
}

/* A compute chain with a collective, on compute stream 0 and comm stream 1,
   program order a, c, b, ar, d:
     a 10 (compute), c 10 after a, b 10 (compute), ar 20 (all-reduce, stream 1) after b,
     d 5 (compute) after ar.
   Program order by hand: a 0-10, c 10-20, b 20-30, ar 30-50, d 50-55: 55.
   XLA-style: at 0 a and b are both ready; b feeds the all-reduce (kUnlockDone)
   so b 0-10; then a, ar both at 10, the collective first: ar 10-30 on
   stream 1, a 10-20, c 20-30, d 30-35: makespan 35, order b, ar, a, c, d. */
static void test_xla_chain(void) {
    cc_graph* g = three_streams();
    cc_op a, b, c, ar, d, order[5];
    double st[5], mk = -1;
    int n_edges = -1;
    if (!g) return;
    a = add(g, "a", 10, 0, CC_COLL_NONE, NULL, 0);
    c = add(g, "c", 10, 0, CC_COLL_NONE, &a, 1);
    b = add(g, "b", 10, 0, CC_COLL_NONE, NULL, 0);
    ar = add(g, "ar", 20, 1, CC_COLL_ALL_REDUCE, &b, 1);
    d = add(g, "d", 5, 0, CC_COLL_NONE, &ar, 1);
    CHECK_RES(ctx, simulate_program(g, st, &mk), CC_OK, "program order simulates");
    CHECK_NEAR(mk, 55, 1e-9, "program order: 55 by hand");
    CHECK_RES(NULL, peer_xla_schedule(g, 1, order, &n_edges, err, sizeof err), CC_OK, "XLA schedule: %s", err);
    CHECK_INT(n_edges, 0, "one collective: no edge");
    CHECK(order[0].id == b.id && order[1].id == ar.id && order[2].id == a.id && order[3].id == c.id && order[4].id == d.id,
          "XLA order: b, ar, a, c, d");
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 5, st, &mk), CC_OK, "the XLA order simulates");
    CHECK_NEAR(mk, 35, 1e-9, "XLA: makespan 35 by hand");
    CHECK_RES(ctx, cc_schedule_check(ctx, g, st, NULL), CC_OK, "the simulated starts pass the checker");
    cc_graph_destroy(g);
}

/* Random stream graphs: 3 streams, ops on random streams, a third of them
   collectives of random kinds, edges from earlier to later ops. The order
   must be a permutation that respects every dependency, simulate without
   deadlock, pass the checker and keep one collective of a kind in flight. */
static void test_xla_random(void) {
    tu_rng rng;
    int t, bad_perm = 0, bad_topo = 0, bad_sim = 0, bad_check = 0, bad_flight = 0, bad_rc = 0, edges = 0;
    rng.s = 0x9e3779b97f4a7c15ull;
    for (t = 0; t < 200; t++) {
        cc_graph* g = three_streams();
        int n = tu_randint(&rng, 1, 40), i, j, *pos;
        cc_op* ops = (cc_op*)calloc((size_t)n, sizeof(cc_op));
        cc_op* order = (cc_op*)calloc((size_t)n, sizeof(cc_op));
        cc_op deps[4];
        double* st = (double*)calloc((size_t)n, sizeof(double));
        double mk;
        int n_edges = 0;
        char name[16];
        pos = (int*)calloc((size_t)n, sizeof(int));
        if (!g || !ops || !order || !st || !pos) { CHECK(0, "allocation"); return; }
        for (i = 0; i < n; i++) {
            int nd = 0, s = tu_randint(&rng, 0, 2);
            cc_coll_kind kind = CC_COLL_NONE;
            if (s > 0 && tu_randint(&rng, 0, 2) > 0) kind = (cc_coll_kind)tu_randint(&rng, 1, 7);
            else if (tu_randint(&rng, 0, 5) == 0) s = CC_NO_STREAM;   /* compute that needs no stream */
            for (j = 0; j < 4 && i > 0; j++)
                if (tu_randint(&rng, 0, 3) == 0) deps[nd++] = ops[tu_randint(&rng, 0, i - 1)];
            snprintf(name, sizeof name, "op%d", i);
            ops[i] = add(g, name, (double)tu_randint(&rng, 0, 30), s, kind, deps, nd);
        }
        if (peer_xla_schedule(g, 1, order, &n_edges, err, sizeof err) != CC_OK) { bad_rc++; cc_graph_destroy(g); goto next; }
        edges += n_edges;
        for (i = 0; i < n; i++) pos[i] = -1;
        for (i = 0; i < n; i++) {
            int x = cc_op_index(g, order[i]);
            if (x < 0 || pos[x] >= 0) bad_perm++;
            else pos[x] = i;
        }
        for (i = 0; i < n && !bad_perm; i++) {
            cc_op pr[64];
            int np = cc_op_preds(g, ops[i], pr, 64);
            for (j = 0; j < np && j < 64; j++)
                if (pos[cc_op_index(g, pr[j])] > pos[i]) bad_topo++;
        }
        if (cc_simulate(ctx, g, order, n, st, &mk) != CC_OK) bad_sim++;
        else {
            if (cc_schedule_check(ctx, g, st, NULL) != CC_OK) bad_check++;
            if (!one_in_flight(g, st)) bad_flight++;
        }
        cc_graph_destroy(g);
    next:
        free(ops); free(order); free(st); free(pos);
    }
    CHECK_INT(bad_rc, 0, "200 random stream graphs: the scheduler never fails (%s)", err);
    CHECK_INT(bad_perm, 0, "every order lists every op once");
    CHECK_INT(bad_topo, 0, "every order respects every dependency");
    CHECK_INT(bad_sim, 0, "every order simulates: no deadlock (%s)", cc_last_error(ctx));
    CHECK_INT(bad_check, 0, "every simulated schedule passes cc_schedule_check");
    CHECK_INT(bad_flight, 0, "never two collectives of one kind in flight");
    CHECK(edges > 0, "the random graphs needed serialising edges (%d)", edges);
}

/* Not a stream graph: refused with the resource named. */
static void test_xla_bad(void) {
    cc_graph_desc gd = {0};
    cc_graph* g = NULL;
    int caps[1] = { 2 };
    cc_op order[1];
    gd.n_resources = 1;
    gd.capacities = caps;
    if (cc_graph_create(ctx, &gd, &g) != CC_OK) { CHECK(0, "general graph: %s", cc_last_error(ctx)); return; }
    add(g, "x", 1, 0, CC_COLL_NONE, NULL, 0);
    CHECK_RES(NULL, peer_xla_schedule(g, 1, order, NULL, err, sizeof err), CC_ERR_INVALID_ARG, "a capacity-2 resource is refused");
    CHECK_CONTAINS(err, "capacity 2", "the message says why");
    cc_graph_destroy(g);
    CHECK_RES(NULL, peer_xla_schedule(NULL, 1, order, NULL, err, sizeof err), CC_ERR_INVALID_ARG, "a NULL graph is refused");
}

/* ---- a prefetch depth of one layer -------------------------------------------------*/
/* Its buckets: DeepSpeed's gradient buckets; gathers one bucket per run of
   one layer: by hand {0,1} {2..5} {6,7} {8,9}. */
static void test_prefetch1_buckets(void) {
    static const int want[NP] = { 0, 0, 1, 1, 1, 1, 2, 2, 3, 3 };
    peer_knobs k = peer_knobs_default();
    peer_plan p = fresh_plan(1), ds = fresh_plan(0);
    int grad_ds[NP], i;
    k.zero_stage = 3;
    CHECK_RES(NULL, peer_prefetch1_buckets(params, NP, &k, &p, err, sizeof err), CC_OK, "prefetch-1 buckets: %s", err);
    if (!CHECK(same(gfwd, want, NP) && same(gbwd, want, NP), "prefetch-1: one gather bucket per run of one layer"))
        note_buckets("got", gfwd);
    CHECK_INT(p.n_gather_fwd, 4, "prefetch-1: 4 gather buckets");
    memcpy(grad_ds, bucket, sizeof grad_ds);
    CHECK_RES(NULL, peer_deepspeed_zero3_buckets(params, NP, &k, &ds, err, sizeof err), CC_OK, "DeepSpeed buckets: %s", err);
    for (i = 0; i < NP && grad_ds[i] == bucket[i]; i++) {}
    CHECK_INT(i, NP, "prefetch-1: the gradient buckets are DeepSpeed ZeRO-3's");
}

static cc_result plan_collective(void* self, void* native_stream, const cc_collective* coll, char* msg, size_t msg_size) {
    (void)self; (void)native_stream; (void)coll;
    snprintf(msg, msg_size, "runs nothing");
    return CC_ERR_UNSUPPORTED;
}

/* Three modules, each a 10 us all-gather over "dp" (stream 1) then its
   compute (stream 0): 5 us; the first module 5 + 5. Program order lets
   the gathers run back to back (makespan 35 by hand: g 0-10, 10-20,
   20-30; compute 10-20, 20-25, 30-35). prefetch-1 makes gather j wait for
   module j-1's first compute op: 2 edges; g2 15-25, g3 30-40, makespan 45
   by hand. A gather over another communicator ("tp") is not a module's. */
static void test_prefetch1_order(void) {
    static const cc_comm_fns fns = { "test", "host", plan_collective, NULL, NULL, NULL, NULL };
    cc_comm *dp = NULL, *tp = NULL;
    cc_graph* g = three_streams();
    cc_op ops[8], order[8];
    double st[8], mk = -1;
    int n_edges = -1, i;
    cc_op_desc d;
    cc_collective co;
    static const struct { const char* name; double us; int stream; int gather; int dep; } spec[8] = {
        { "g1", 10, 1, 1, -1 }, { "c1", 5, 0, 0, 0 }, { "c1b", 5, 0, 0, 1 }, { "tp_gather", 0, 2, 2, -1 },
        { "g2", 10, 1, 1, -1 }, { "c2", 5, 0, 0, 4 }, { "g3", 10, 1, 1, -1 }, { "c3", 5, 0, 0, 6 },
    };
    if (!g) return;
    if (!CHECK(cc_comm_wrap(ctx, &fns, NULL, 0, 2, "dp", &dp) == CC_OK && cc_comm_wrap(ctx, &fns, NULL, 0, 2, "tp", &tp) == CC_OK,
               "communicators named dp and tp: %s", cc_last_error(ctx))) {
        cc_graph_destroy(g); cc_comm_destroy(dp); cc_comm_destroy(tp);
        return;
    }
    for (i = 0; i < 8; i++) {
        memset(&d, 0, sizeof d);
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_GATHER; co.dtype = CC_DTYPE_FLOAT32; co.n_elems = 1; co.comm = spec[i].gather == 2 ? tp : dp;
        co.send_buf = dummy_buf; co.recv_buf = dummy_buf + 2;
        d.name = spec[i].name; d.duration_us = spec[i].us; d.stream = spec[i].stream;
        if (spec[i].gather) d.coll = &co;
        if (spec[i].dep >= 0) { d.deps = &ops[spec[i].dep]; d.n_deps = 1; }
        if (cc_graph_add_op(g, &d, &ops[i]) != CC_OK) CHECK(0, "adding op %s: %s", spec[i].name, cc_last_error(ctx));
    }
    CHECK_RES(ctx, simulate_program(g, st, &mk), CC_OK, "program order simulates");
    CHECK_NEAR(mk, 35, 1e-9, "program order: the gathers run back to back, makespan 35");
    CHECK_RES(NULL, peer_prefetch1_order(g, 1, order, &n_edges, err, sizeof err), CC_OK, "prefetch-1 order: %s", err);
    CHECK_INT(n_edges, 2, "prefetch-1: an edge to the 2nd and 3rd module's gathers");
    for (i = 0; i < 8 && cc_op_index(g, order[i]) == i; i++) {}
    CHECK_INT(i, 8, "prefetch-1: its issue order is program order");
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 8, st, &mk), CC_OK, "the prefetch-1 order simulates");
    CHECK_NEAR(mk, 45, 1e-9, "prefetch-1: makespan 45 by hand");
    CHECK_NEAR(st[4], 15, 1e-9, "prefetch-1: g2 starts when c1 ends (15)");
    CHECK_NEAR(st[6], 30, 1e-9, "prefetch-1: g3 starts when c2 ends (30)");
    cc_graph_destroy(g);
    cc_comm_destroy(dp);
    cc_comm_destroy(tp);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { printf("FAIL main: no context\n"); return 1; }
    setup_params();
    TH_RUN(test_ddp);
    TH_RUN(test_megatron);
    TH_RUN(test_deepspeed);
    TH_RUN(test_llmc);
    TH_RUN(test_xla_combiner);
    TH_RUN(test_bad_knobs);
    TH_RUN(test_xla_two_allreduces);
    TH_RUN(test_xla_chain);
    TH_RUN(test_xla_random);
    TH_RUN(test_xla_bad);
    TH_RUN(test_prefetch1_buckets);
    TH_RUN(test_prefetch1_order);
    cc_context_destroy(ctx);
    return th_done();
}
