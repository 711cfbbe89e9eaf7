/* tests/test_cluster.c - the cluster cost model (>>cluster): the ring,
   tree and hierarchical formulas against values computed by hand here,
   which link each group touches, AUTO as the minimum, monotonicity, the
   compute roofline, the presets' units, and the errors.

   Most cases use a toy cluster with round numbers: 8 GPUs a node, inside a
   node 100 GB/s (1e5 bytes/us) and 1 us a step, between nodes 10 GB/s
   (1e4 bytes/us) and 5 us a step, efficiencies 1. */
#include <math.h>
#include <string.h>
#include "util.h"

/* A collective on a cluster spec: the spec checked, then cc_coll_us on its links. */
static cc_result cluster_coll_us(cc_context* ctx, const cc_cluster_spec* s, cc_coll_kind kind, uint64_t n_bytes,
                                 cc_group_shape group, cc_coll_algo algo, double* us) {
    cc_result rc;
    *us = 0;
    if ((rc = cc_cluster_check(ctx, s)) != CC_OK) return rc;
    return cc_coll_us(ctx, &s->intra, &s->inter, s->gpus_per_node, kind, n_bytes, group, algo, us);
}

#define GIB 1073741824.0

static cc_cluster_spec toy(void) {
    cc_cluster_spec s;
    memset(&s, 0, sizeof s);
    s.name = "toy";
    s.device.name = "toy-gpu";
    s.device.fp32_tflops = 10; s.device.fp16_tflops = 100; s.device.mem_gbps = 1000;
    s.device.flops_efficiency = 0.5; s.device.mem_efficiency = 0.5; s.device.launch_us = 2;
    s.gpus_per_node = 8;
    s.intra.latency_us = 1; s.intra.gbps = 100;          /* efficiency 0: 1 */
    s.inter.latency_us = 5; s.inter.gbps = 10;
    return s;
}

static cc_group_shape grp(int n, int r) { cc_group_shape g; g.n_ranks = n; g.ranks_per_node = r; return g; }

static double coll(const cc_cluster_spec* s, cc_coll_kind kind, double bytes, int n, int r, cc_coll_algo algo) {
    double us = -1;
    if (cluster_coll_us(NULL, s, kind, (uint64_t)bytes, grp(n, r), algo, &us) != CC_OK) return -1;
    return us;
}

static void test_ring_one_node(void) {
    cc_cluster_spec s = toy();
    /* all-reduce, 8 ranks in one node, 1 GiB: 2(n-1) li + 2(n-1)/n S/bi
       = 14 * 1 + 1.75 * 1073741824 / 1e5 = 14 + 18790.48192 = 18804.48192 us */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, GIB, 8, 8, CC_ALGO_RING), 18804.48192, 1e-6, "ring all-reduce, 8 ranks, 1 GiB");
    /* reduce-scatter / all-gather, block 1e6 bytes: (n-1)(li + B/bi) = 7 (1 + 10) = 77 us */
    CHECK_NEAR(coll(&s, CC_COLL_REDUCE_SCATTER, 1e6, 8, 8, CC_ALGO_RING), 77, 1e-9, "ring reduce-scatter, 8 ranks, 1 MB blocks");
    CHECK_NEAR(coll(&s, CC_COLL_ALL_GATHER, 1e6, 8, 8, CC_ALGO_RING), 77, 1e-9, "ring all-gather, 8 ranks, 1 MB blocks");
    /* broadcast (pipelined): (n-1) li + S/bi = 7 + 10 = 17 us */
    CHECK_NEAR(coll(&s, CC_COLL_BROADCAST, 1e6, 8, 8, CC_ALGO_RING), 17, 1e-9, "broadcast, 8 ranks, 1 MB");
    /* the same ring formula as the alpha-beta cc_link with alpha = li, 1/bi per byte */
    {
        cc_link l = { 0 }; l.latency_us = 1; l.us_per_byte = 1e-5;
        CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, 8e6, 8, 8, CC_ALGO_RING), tu_flat_us(&l, CC_COLL_ALL_REDUCE, 8000000, 8), 1e-9,
                   "one node's ring all-reduce agrees with the flat model on the same link");
    }
}

static void test_tree(void) {
    cc_cluster_spec s = toy();
    /* one node: the tree is a chain, 2 (r-1) li + 2 S/bi = 14 + 21474.83648 = 21488.83648 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, GIB, 8, 8, CC_ALGO_TREE), 21488.83648, 1e-6, "tree (a chain) in one node, 1 GiB");
    /* 2 nodes x 8: latency 2 (7 li + 1 le) = 24; bandwidth max(2S/bi, S/(8 be)) with k = 2
       = max(21474.83648, 13421.7728) -> 21498.83648 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, GIB, 16, 8, CC_ALGO_TREE), 21498.83648, 1e-6, "tree on 2 nodes x 8, 1 GiB");
    /* 8 nodes x 1 GPU, S = 1e6: depth 3: 2 * 3 * 5 = 30; network 2S/be = 200 -> 230 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, 1e6, 8, 1, CC_ALGO_TREE), 230, 1e-9, "tree on 8 nodes x 1, 1 MB");
    /* 5 nodes: depth ceil(log2 5) = 3, same as 8 nodes */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, 1e6, 5, 1, CC_ALGO_TREE), 230, 1e-9, "tree on 5 nodes: depth 3");
    CHECK_RES(NULL, cluster_coll_us(NULL, &s, CC_COLL_ALL_GATHER, 1000, grp(8, 8), CC_ALGO_TREE, &(double){0}),
              CC_ERR_UNSUPPORTED, "tree for an all-gather is refused");
}

static void test_across_nodes(void) {
    cc_cluster_spec s = toy(), t;
    double base, faster_intra, faster_inter;
    /* ring, 2 nodes x 8, 1 GiB: c = max(7/(8*1e5), 1/(8*1e4)) = 1.25e-5 us/byte;
       step latency (2*5 + 14*1)/16 = 1.5; 2*15*1.5 + 2*15/16 * S * 1.25e-5 = 45 + 25165.824 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, GIB, 16, 8, CC_ALGO_RING), 25210.824, 1e-6, "ring on 2 nodes x 8, 1 GiB");
    /* hierarchical: 2 [7 li + 7/8 S/bi] + 2 (k-1) le + 2 (k-1)/k (S/8)/be
       = 2 (7 + 9395.24096) + 10 + 13421.7728 = 32236.25472 */
    base = coll(&s, CC_COLL_ALL_REDUCE, GIB, 16, 8, CC_ALGO_HIERARCHICAL);
    CHECK_NEAR(base, 32236.25472, 1e-6, "hierarchical all-reduce on 2 nodes x 8, 1 GiB");
    t = s; t.intra.gbps = 200;
    faster_intra = coll(&t, CC_COLL_ALL_REDUCE, GIB, 16, 8, CC_ALGO_HIERARCHICAL);
    t = s; t.inter.gbps = 20;
    faster_inter = coll(&t, CC_COLL_ALL_REDUCE, GIB, 16, 8, CC_ALGO_HIERARCHICAL);
    /* halving either phase's time: intra part 18790.48192 / 2, inter part 13421.7728 / 2 */
    CHECK_NEAR(base - faster_intra, 18790.48192 / 2, 1e-6, "hierarchical: twice the NVLink rate saves half the intra phases");
    CHECK_NEAR(base - faster_inter, 13421.7728 / 2, 1e-6, "hierarchical: twice the network rate saves half the inter phase");
    /* reduce-scatter, blocks 1e6: hierarchical (r-1)(li + k B/bi) + (k-1)(le + B/be) = 7 * 21 + 105 = 252;
       ring 15 * 1.5 + 15 * 1e6 * 1.25e-5 = 22.5 + 187.5 = 210 */
    CHECK_NEAR(coll(&s, CC_COLL_REDUCE_SCATTER, 1e6, 16, 8, CC_ALGO_HIERARCHICAL), 252, 1e-9, "hierarchical reduce-scatter, 2 x 8");
    CHECK_NEAR(coll(&s, CC_COLL_ALL_GATHER, 1e6, 16, 8, CC_ALGO_HIERARCHICAL), 252, 1e-9, "hierarchical all-gather, 2 x 8");
    CHECK_NEAR(coll(&s, CC_COLL_REDUCE_SCATTER, 1e6, 16, 8, CC_ALGO_RING), 210, 1e-9, "ring reduce-scatter, 2 x 8");
    CHECK_NEAR(coll(&s, CC_COLL_REDUCE_SCATTER, 1e6, 16, 8, CC_ALGO_AUTO), 210, 1e-9, "AUTO reduce-scatter takes the ring's 210");
    /* one member per node: the inter link alone. ring, 4 ranks, 1e6:
       2*3*5 + 2*3/4 * 1e6 / 1e4 = 30 + 150 = 180 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, 1e6, 4, 1, CC_ALGO_RING), 180, 1e-9, "ring on 4 nodes x 1, 1 MB");
    t = s; t.intra.gbps = 1; t.intra.latency_us = 1000;
    CHECK_NEAR(coll(&t, CC_COLL_ALL_REDUCE, 1e6, 4, 1, CC_ALGO_AUTO), coll(&s, CC_COLL_ALL_REDUCE, 1e6, 4, 1, CC_ALGO_AUTO), 0,
               "one member per node: the intra link does not matter");
    CHECK_RES(NULL, cluster_coll_us(NULL, &s, CC_COLL_ALL_REDUCE, 1000, grp(4, 1), CC_ALGO_HIERARCHICAL, &(double){0}),
              CC_ERR_UNSUPPORTED, "hierarchical with one member per node is refused");
    /* all-to-all, 2 x 8, blocks 1e6: le + max(7e6/1e5, 8e6/1e4) = 5 + 800 */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_TO_ALL, 1e6, 16, 8, CC_ALGO_AUTO), 805, 1e-9, "all-to-all, 2 x 8");
}

static void test_one_node_never_inter(void) {
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER, CC_COLL_BROADCAST,
                                          CC_COLL_SEND, CC_COLL_ALL_TO_ALL };
    cc_cluster_spec s = toy(), t = toy();
    int i, n, bad = 0;
    t.inter.gbps = 1e-3; t.inter.latency_us = 1e6; t.inter.efficiency = 0.01;
    for (i = 0; i < 6; i++)
        for (n = 2; n <= 8; n *= 2)
            if (coll(&s, kinds[i], 3e6, n, n, CC_ALGO_AUTO) != coll(&t, kinds[i], 3e6, n, n, CC_ALGO_AUTO) ||
                coll(&s, kinds[i], 3e6, n, n, CC_ALGO_AUTO) <= 0) bad++;
    CHECK_INT(bad, 0, "groups inside one node cost the same whatever the inter link");
    CHECK_RES(NULL, cluster_coll_us(NULL, &s, CC_COLL_ALL_REDUCE, 1000, grp(8, 8), CC_ALGO_HIERARCHICAL, &(double){0}),
              CC_ERR_UNSUPPORTED, "hierarchical inside one node is refused");
    /* ranks_per_node 0: packed, min(n, 8): 8 ranks in one node */
    CHECK_NEAR(coll(&s, CC_COLL_ALL_REDUCE, GIB, 8, 0, CC_ALGO_RING), 18804.48192, 1e-6, "ranks_per_node 0 packs 8 ranks in a node");
}

static void test_send_recv(void) {
    cc_cluster_spec s = toy();
    /* li + S/bi = 1 + 10; le + S/be = 5 + 100 */
    CHECK_NEAR(coll(&s, CC_COLL_SEND, 1e6, 2, 2, CC_ALGO_AUTO), 11, 1e-9, "send inside a node: 1 + 1e6/1e5");
    CHECK_NEAR(coll(&s, CC_COLL_RECV, 1e6, 2, 1, CC_ALGO_AUTO), 105, 1e-9, "recv across nodes: 5 + 1e6/1e4");
    CHECK_RES(NULL, cluster_coll_us(NULL, &s, CC_COLL_SEND, 1000, grp(2, 2), CC_ALGO_RING, &(double){0}), CC_ERR_UNSUPPORTED,
              "send takes AUTO only");
}

static void test_auto_and_monotonic(void) {
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER, CC_COLL_BROADCAST,
                                          CC_COLL_SEND, CC_COLL_ALL_TO_ALL };
    static const int shapes[][2] = { { 8, 8 }, { 16, 8 }, { 64, 8 }, { 32, 4 }, { 8, 1 }, { 1024, 8 }, { 2, 1 } };
    static const char* names[] = { "a800", "a100", "h100" };
    int p, i, j, bad_min = 0, bad_mono = 0, bad_pick = 0, checked = 0;
    for (p = 0; p < 4; p++) {
        cc_cluster_spec s;
        if (p < 3) cc_cluster_preset(NULL, names[p], &s); else s = toy();
        for (j = 0; j < 7; j++)
            for (i = 0; i < 6; i++) {
                double prev = 0, bytes;
                for (bytes = 1; bytes <= 16e9; bytes *= 4) {
                    double a = coll(&s, kinds[i], bytes, shapes[j][0], shapes[j][1], CC_ALGO_AUTO), m = -1;
                    int al;
                    cc_coll_algo pick = cc_cluster_coll_algo(&s, kinds[i], (uint64_t)bytes, grp(shapes[j][0], shapes[j][1]));
                    for (al = CC_ALGO_RING; al <= CC_ALGO_HIERARCHICAL; al++) {
                        double t = coll(&s, kinds[i], bytes, shapes[j][0], shapes[j][1], (cc_coll_algo)al);
                        if (t >= 0 && (m < 0 || t < m)) m = t;
                    }
                    if (kinds[i] == CC_COLL_SEND || kinds[i] == CC_COLL_ALL_TO_ALL) m = a;   /* one algorithm */
                    if (a != m) bad_min++;
                    if (!(a >= prev) || !(a > 0)) bad_mono++;
                    if (pick == CC_ALGO_AUTO ||
                        (kinds[i] != CC_COLL_SEND && kinds[i] != CC_COLL_ALL_TO_ALL &&
                         coll(&s, kinds[i], bytes, shapes[j][0], shapes[j][1], pick) != a)) bad_pick++;
                    prev = a;
                    checked++;
                }
            }
    }
    CHECK_INT(bad_min, 0, "AUTO is the minimum of the applicable algorithms (%d cases)", checked);
    CHECK_INT(bad_mono, 0, "AUTO's time is positive and grows with the bytes");
    CHECK_INT(bad_pick, 0, "cc_cluster_coll_algo names the algorithm AUTO timed");
    {
        cc_cluster_spec s = toy();
        /* 2 x 8, 1 GiB all-reduce: tree 21498.8 < ring 25210.8 < hierarchical 32236.3 (above) */
        CHECK_INT(cc_cluster_coll_algo(&s, CC_COLL_ALL_REDUCE, (uint64_t)GIB, grp(16, 8)), CC_ALGO_TREE, "2 x 8, 1 GiB: the tree");
        CHECK_INT(cc_cluster_coll_algo(&s, CC_COLL_ALL_REDUCE, (uint64_t)GIB, grp(8, 8)), CC_ALGO_RING, "one node, 1 GiB: the ring");
    }
}

static void test_n1(void) {
    cc_cluster_spec s = toy();
    double us = -1;
    CHECK_RES(NULL, cluster_coll_us(NULL, &s, CC_COLL_ALL_REDUCE, (uint64_t)GIB, grp(1, 1), CC_ALGO_AUTO, &us), CC_OK,
              "one rank is accepted");
    CHECK_NEAR(us, 0, 0, "one rank costs 0");
    CHECK_NEAR(coll(&s, CC_COLL_ALL_GATHER, GIB, 1, 0, CC_ALGO_RING), 0, 0, "one rank costs 0 (ring, ranks_per_node 0)");
}

static void test_compute(void) {
    cc_cluster_spec s = toy();
    /* fp16 100 TFLOPS * 0.5 = 5e7 flops/us; HBM 1000 GB/s * 0.5 = 5e5 bytes/us; launch 2 */
    CHECK_NEAR(cc_cluster_compute_us(&s, 1e9, 1e3, 1), 22, 1e-9, "compute-bound half: 2 + 1e9/5e7");
    CHECK_NEAR(cc_cluster_compute_us(&s, 1e6, 1e8, 1), 202, 1e-9, "memory-bound: 2 + 1e8/5e5");
    /* fp32 10 TFLOPS * 0.5 = 5e6 flops/us */
    CHECK_NEAR(cc_cluster_compute_us(&s, 1e9, 1e3, 0), 202, 1e-9, "compute-bound fp32: 2 + 1e9/5e6");
    CHECK_NEAR(cc_cluster_compute_us(&s, 0, 0, 1), 2, 1e-12, "an empty op costs its launch");
    /* efficiencies 0: the stated defaults 0.7 and 0.8: 1e9 / (100e6 * 0.7) + 2 */
    s.device.flops_efficiency = 0; s.device.mem_efficiency = 0;
    CHECK_NEAR(cc_cluster_compute_us(&s, 1e9, 0, 1), 2 + 1e9 / 7e7, 1e-9, "flops_efficiency 0 is 0.7");
    CHECK_NEAR(cc_cluster_compute_us(&s, 0, 1e8, 1), 2 + 1e8 / 8e5, 1e-9, "mem_efficiency 0 is 0.8");
    CHECK(cc_cluster_compute_us(&s, -1, 0, 1) < 0, "negative flops give -1");
    s.device.mem_gbps = 0;
    CHECK(cc_cluster_compute_us(&s, 1, 1, 1) < 0, "a bad spec gives -1");
    s = toy();
    CHECK_NEAR(cc_cluster_overlap_slowdown(&s), 1.2, 0, "overlap_slowdown 0 is the paper's 1.2");
    s.overlap_slowdown = 1.5;
    CHECK_NEAR(cc_cluster_overlap_slowdown(&s), 1.5, 0, "overlap_slowdown as set");
}

static void test_presets(void) {
    cc_context* ctx;
    cc_cluster_spec s;
    const char* const* names = cc_cluster_preset_names();
    int i, n = 0;
    cc_context_create(NULL, &ctx);
    for (i = 0; names[i]; i++, n++) {
        CHECK_RES(ctx, cc_cluster_preset(ctx, names[i], &s), CC_OK, "preset %s", names[i]);
        CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_OK, "preset %s passes cc_cluster_check", names[i]);
        CHECK_INT(s.gpus_per_node, 8, "preset %s: 8 GPUs a node", names[i]);
    }
    CHECK_INT(n, 3, "three presets");
    /* units: NVIDIA quotes NVLink both ways, NICs in Gb/s */
    cc_cluster_preset(ctx, "H100", &s);
    CHECK_NEAR(s.intra.gbps * 2, 900, 1e-9, "h100 (any case): NVLink4 900 GB/s both ways = 450 each");
    CHECK_NEAR(s.inter.gbps * 8, 400, 1e-9, "h100: one 400 Gb/s NIC per GPU = 50 GB/s");
    cc_cluster_preset(ctx, "a100", &s);
    CHECK_NEAR(s.intra.gbps * 2, 600, 1e-9, "a100: NVLink3 600 GB/s both ways");
    CHECK_NEAR(s.inter.gbps * 8, 200, 1e-9, "a100: one 200 Gb/s HDR NIC per GPU");
    cc_cluster_preset(ctx, "a800", &s);
    CHECK_NEAR(s.intra.gbps * 2, 400, 1e-9, "a800: NVLink 400 GB/s both ways (the paper)");
    CHECK_NEAR(s.inter.gbps * 8 * s.gpus_per_node, 800, 1e-9, "a800: 800 Gb/s a node (the paper)");
    CHECK_NEAR(s.device.fp16_tflops, 312, 1e-9, "a800: 312 TFLOPS fp16 dense");
    CHECK_RES(ctx, cc_cluster_preset(ctx, "v100", &s), CC_ERR_INVALID_ARG, "an unknown preset is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "'v100'", "the message names it");
    CHECK_CONTAINS(cc_last_error(ctx), "a800, a100, h100", "and the known names");
    CHECK_RES(NULL, cc_cluster_preset(NULL, "nope", &s), CC_ERR_INVALID_ARG, "ctx may be NULL");
    cc_context_destroy(ctx);
}

static void test_bad_specs(void) {
    cc_context* ctx;
    cc_cluster_spec s;
    double us = 1;
    cc_context_create(NULL, &ctx);
    s = toy(); s.intra.gbps = 0;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "intra.gbps 0 is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "intra.gbps", "the message names intra.gbps");
    s = toy(); s.inter.gbps = -12.5;
    CHECK_RES(ctx, cluster_coll_us(ctx, &s, CC_COLL_ALL_REDUCE, 100, grp(16, 8), CC_ALGO_AUTO, &us), CC_ERR_INVALID_ARG,
              "a negative inter.gbps fails the collective");
    CHECK_CONTAINS(cc_last_error(ctx), "inter.gbps", "the message names inter.gbps");
    CHECK_NEAR(us, 0, 0, "*us is 0 on failure");
    s = toy(); s.device.fp16_tflops = NAN;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "NaN fp16_tflops is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "device.fp16_tflops", "the message names device.fp16_tflops");
    s = toy(); s.gpus_per_node = 0;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "gpus_per_node 0 is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "gpus_per_node", "the message names gpus_per_node");
    s = toy(); s.inter.latency_us = -1;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "a negative latency is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "inter.latency_us", "the message names inter.latency_us");
    s = toy(); s.intra.efficiency = 1.5;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "an efficiency above 1 is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "intra.efficiency", "the message names intra.efficiency");
    s = toy(); s.overlap_slowdown = 0.5;
    CHECK_RES(ctx, cc_cluster_check(ctx, &s), CC_ERR_INVALID_ARG, "overlap_slowdown below 1 is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "overlap_slowdown", "the message names overlap_slowdown");
    s = toy();
    CHECK_RES(ctx, cluster_coll_us(ctx, &s, CC_COLL_ALL_REDUCE, 100, grp(8, 3), CC_ALGO_AUTO, &us), CC_ERR_INVALID_ARG,
              "ranks_per_node not dividing n_ranks is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "ranks_per_node", "the message names ranks_per_node");
    CHECK_RES(ctx, cluster_coll_us(ctx, &s, CC_COLL_ALL_REDUCE, 100, grp(32, 16), CC_ALGO_AUTO, &us), CC_ERR_INVALID_ARG,
              "more ranks a node than the node has is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "gpus_per_node 8", "the message says what a node has");
    CHECK_RES(ctx, cluster_coll_us(ctx, &s, CC_COLL_REDUCE_SCATTER, 100, grp(8, 8), CC_ALGO_TREE, &us), CC_ERR_UNSUPPORTED,
              "tree reduce-scatter is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "tree", "the message names the algorithm");
    CHECK_CONTAINS(cc_last_error(ctx), "reduce_scatter", "and the kind");
    cc_context_destroy(ctx);
}

static void test_busbw(void) {
    /* nccl-tests: 1e9 bytes in 1e4 us is an algbw of 100 GB/s; all-reduce on 8: x 2*7/8 = 175 */
    CHECK_NEAR(cc_busbw_gbps(CC_COLL_ALL_REDUCE, 1000000000u, 8, 1e4), 175, 1e-9, "all-reduce busbw = algbw 2(n-1)/n");
    /* all-gather: blocks of 1.25e8, total 1e9 on 8 ranks: 100 * 7/8 = 87.5 */
    CHECK_NEAR(cc_busbw_gbps(CC_COLL_ALL_GATHER, 125000000u, 8, 1e4), 87.5, 1e-9, "all-gather busbw = algbw (n-1)/n of the total");
    CHECK_NEAR(cc_busbw_gbps(CC_COLL_SEND, 1000000000u, 2, 1e4), 100, 1e-9, "send busbw = algbw");
}

/* ---- the one cost model against independent copies of the formulas ---- */
/* The alpha-beta model on one link, as the emulated link has always charged. */
static double ref_flat(double a, double b, cc_coll_kind kind, size_t n_bytes_per_rank, int n_ranks) {
    double bytes = (double)n_bytes_per_rank, n = (double)n_ranks;
    if (n_ranks <= 1) return 0;
    switch (kind) {
        case CC_COLL_ALL_REDUCE: return 2.0 * (n - 1) * (a + bytes / n * b);
        case CC_COLL_REDUCE_SCATTER:
        case CC_COLL_ALL_GATHER:
        case CC_COLL_ALL_TO_ALL: return (n - 1) * (a + bytes * b);
        case CC_COLL_BROADCAST: return (n - 1) * a + bytes * b;
        case CC_COLL_SEND:
        case CC_COLL_RECV: return a + bytes * b;
        default: return 0;
    }
}

/* NCCL's algorithms on a cluster's links given as line rate and efficiency. */
static double ref_rate(double gbps, double eff) { return gbps * (eff > 0 ? eff : 1.0) * 1e3; }
static double ref_cluster(const cc_cluster_spec* s, cc_coll_kind kind, double S, int n, int r, cc_coll_algo algo) {
    int k = n / r;
    double bi = ref_rate(s->intra.gbps, s->intra.efficiency), be = ref_rate(s->inter.gbps, s->inter.efficiency);
    double li = s->intra.latency_us, le = s->inter.latency_us;
    double c, L, nn = (double)n, rr = (double)r, kk = (double)k;
    switch (kind) {
        case CC_COLL_SEND:
        case CC_COLL_RECV:
            if (algo != CC_ALGO_RING) return -1;
            return k == 1 ? li + S / bi : le + S / be;
        case CC_COLL_ALL_TO_ALL: {
            double t_in = (rr - 1) * S / bi, t_out = (nn - rr) * S / be;
            if (algo != CC_ALGO_RING) return -1;
            return (k > 1 ? le : li) + (t_in > t_out ? t_in : t_out);
        }
        default: break;
    }
    if (algo == CC_ALGO_RING) {
        if (k == 1) { c = 1.0 / bi; L = li; }
        else {
            double a = (rr - 1) / (rr * bi), b = 1.0 / (rr * be);
            c = a > b ? a : b;
            L = (kk * le + (nn - kk) * li) / nn;
        }
        switch (kind) {
            case CC_COLL_ALL_REDUCE: return 2 * (nn - 1) * L + 2 * (nn - 1) / nn * S * c;
            case CC_COLL_REDUCE_SCATTER:
            case CC_COLL_ALL_GATHER: return (nn - 1) * L + (nn - 1) * S * c;
            case CC_COLL_BROADCAST: return (nn - 1) * L + S * c;
            default: return -1;
        }
    }
    if (algo == CC_ALGO_TREE) {
        double depth = 0, t_in = 0, t_out = 0;
        if (kind != CC_COLL_ALL_REDUCE) return -1;
        while ((1 << (int)depth) < k) depth += 1;
        if (r > 1) t_in = 2 * S / bi;
        if (k > 1) t_out = (k == 2 ? S : 2 * S) / (rr * be);
        return 2 * ((rr - 1) * li + depth * le) + (t_in > t_out ? t_in : t_out);
    }
    if (algo == CC_ALGO_HIERARCHICAL) {
        if (k == 1 || r == 1) return -1;
        switch (kind) {
            case CC_COLL_ALL_REDUCE:
                return 2 * ((rr - 1) * li + (rr - 1) / rr * S / bi) + 2 * (kk - 1) * le + 2 * (kk - 1) / kk * (S / rr) / be;
            case CC_COLL_REDUCE_SCATTER:
            case CC_COLL_ALL_GATHER:
                return (rr - 1) * (li + kk * S / bi) + (kk - 1) * (le + S / be);
            default: return -1;
        }
    }
    return -1;
}

static unsigned long long bits_state = 88172645463325252ull;
static unsigned long long bits_next(void) {
    bits_state ^= bits_state << 13; bits_state ^= bits_state >> 7; bits_state ^= bits_state << 17;
    return bits_state;
}
static double bits_unit(void) { return (double)(bits_next() >> 11) / 9007199254740992.0; }

static void test_bit_identical(void) {
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER, CC_COLL_BROADCAST,
                                          CC_COLL_SEND, CC_COLL_RECV, CC_COLL_ALL_TO_ALL };
    static const cc_coll_algo algos[] = { CC_ALGO_RING, CC_ALGO_TREE, CC_ALGO_HIERARCHICAL };
    int i, bad_flat = 0, bad_cluster = 0, n_cluster = 0;
    for (i = 0; i < 20000; i++) {             /* the emulated link: latency_us, us_per_byte */
        cc_link l = { 0 };
        cc_coll_kind kind = kinds[bits_next() % 7];
        int n = 1 + (int)(bits_next() % 64);
        size_t bytes = (size_t)(bits_next() % 4000000000ull);
        double got;
        l.latency_us = (bits_next() % 4) ? bits_unit() * 1e4 : 0;
        l.us_per_byte = (bits_next() % 8) ? bits_unit() * 1e-2 : 0;
        if (kind == CC_COLL_SEND || kind == CC_COLL_RECV) n = 2;
        got = tu_flat_us(&l, kind, bytes, n);
        if (got != ref_flat(l.latency_us, l.us_per_byte, kind, bytes, n)) bad_flat++;
    }
    CHECK(bad_flat == 0, "cc_coll_us, CC_ALGO_FLAT, is bit-identical to the alpha-beta formulas (%d of 20000 differ)", bad_flat);
    for (i = 0; i < 20000; i++) {             /* a cluster: latency_us, gbps, efficiency */
        cc_cluster_spec s = toy();
        cc_coll_kind kind = kinds[bits_next() % 7];
        cc_coll_algo algo = algos[bits_next() % 3];
        int g = 1 + (int)(bits_next() % 8), k = 1 + (int)(bits_next() % 16), r = 1 + (int)(bits_next() % (unsigned)g);
        uint64_t bytes = bits_next() % 8000000000ull;
        double got = -1, want;
        cc_group_shape shape;
        cc_result rc;
        s.gpus_per_node = g;
        s.intra.latency_us = bits_unit() * 10; s.intra.gbps = 1 + bits_unit() * 900;
        s.intra.efficiency = (bits_next() % 4) ? bits_unit() : 0;
        s.inter.latency_us = bits_unit() * 20; s.inter.gbps = 1 + bits_unit() * 100;
        s.inter.efficiency = (bits_next() % 4) ? bits_unit() : 0;
        if (kind == CC_COLL_SEND || kind == CC_COLL_RECV || kind == CC_COLL_ALL_TO_ALL) algo = CC_ALGO_RING;
        shape.n_ranks = r * k; shape.ranks_per_node = r;
        want = shape.n_ranks == 1 ? 0 : ref_cluster(&s, kind, (double)bytes, r * k, r, algo);
        if (want < 0) continue;
        n_cluster++;
        rc = cluster_coll_us(NULL, &s, kind, bytes, shape,
                                kind == CC_COLL_SEND || kind == CC_COLL_RECV || kind == CC_COLL_ALL_TO_ALL ? CC_ALGO_AUTO : algo,
                                &got);
        if (rc != CC_OK || got != want) bad_cluster++;
        else {
            rc = cc_coll_us(NULL, &s.intra, &s.inter, s.gpus_per_node, kind, bytes, shape,
                            kind == CC_COLL_SEND || kind == CC_COLL_RECV || kind == CC_COLL_ALL_TO_ALL ? CC_ALGO_AUTO : algo, &got);
            if (rc != CC_OK || got != want) bad_cluster++;
        }
    }
    CHECK(n_cluster > 10000, "most random cluster cases apply (%d)", n_cluster);
    CHECK(bad_cluster == 0, "the cluster's algorithms are bit-identical to their formulas (%d of %d differ)", bad_cluster,
          n_cluster);
}

static void test_coll_us_errors(void) {
    cc_context* ctx = NULL;
    cc_link in = { 0 }, ex = { 0 };
    cc_group_shape two_nodes, one_node;
    double us = -1, want;
    CHECK(cc_context_create(NULL, &ctx) == CC_OK, "context");
    two_nodes.n_ranks = 8; two_nodes.ranks_per_node = 4;
    one_node.n_ranks = 4; one_node.ranks_per_node = 0;
    in.latency_us = 1; in.gbps = 100;
    ex.latency_us = 5; ex.us_per_byte = 1e-4;
    CHECK_RES(ctx, cc_coll_us(ctx, &in, NULL, 0, CC_COLL_ALL_REDUCE, 1000, two_nodes, CC_ALGO_RING, &us), CC_ERR_INVALID_ARG,
              "a group across nodes needs inter");
    CHECK_CONTAINS(cc_last_error(ctx), "inter", "the message names inter");
    CHECK_RES(ctx, cc_coll_us(ctx, &in, NULL, 0, CC_COLL_ALL_REDUCE, 1000, one_node, CC_ALGO_RING, &us), CC_OK,
              "ranks_per_node 0: one node, inter not needed");
    CHECK_NEAR(us, 2 * 3 * 1 + 2 * 3.0 / 4 * 1000 / 1e5, 1e-12, "one node's ring on a gbps link");
    CHECK_RES(ctx, cc_coll_us(ctx, &ex, NULL, 0, CC_COLL_ALL_REDUCE, 1000, one_node, CC_ALGO_FLAT, &us), CC_OK, "flat");
    want = 2.0 * 3 * (5 + 1000.0 / 4 * 1e-4);
    CHECK(us == want, "flat on a us_per_byte link: 2(n-1)(a + B/n b)");
    ex.latency_us = NAN;
    CHECK_RES(ctx, cc_coll_us(ctx, &in, &ex, 0, CC_COLL_ALL_REDUCE, 1000, two_nodes, CC_ALGO_AUTO, &us), CC_ERR_INVALID_ARG,
              "a NaN latency is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "inter.latency_us", "the message names inter.latency_us");
    CHECK(us == 0, "*us is 0 on failure");
    in.gbps = 0;
    CHECK_RES(ctx, cc_coll_us(ctx, &in, NULL, 0, CC_COLL_ALL_REDUCE, 1000, one_node, CC_ALGO_RING, &us), CC_ERR_INVALID_ARG,
              "NCCL's algorithms need a bandwidth");
    CHECK_RES(ctx, cc_coll_us(ctx, &in, NULL, 0, CC_COLL_ALL_REDUCE, 1000, one_node, CC_ALGO_FLAT, &us), CC_OK,
              "a link of zeros is free on the flat model");
    CHECK(us == 2.0 * 3 * 1, "latency alone");
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_ring_one_node);
    TH_RUN(test_tree);
    TH_RUN(test_across_nodes);
    TH_RUN(test_one_node_never_inter);
    TH_RUN(test_send_recv);
    TH_RUN(test_auto_and_monotonic);
    TH_RUN(test_n1);
    TH_RUN(test_compute);
    TH_RUN(test_presets);
    TH_RUN(test_bad_specs);
    TH_RUN(test_busbw);
    TH_RUN(test_bit_identical);
    TH_RUN(test_coll_us_errors);
    return th_done();
}
