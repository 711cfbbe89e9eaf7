/* tests/test_exact.c - the exact method (branch and bound) and its pruning
   rules:
   - against the test's own brute force on 1,500 random instances of 2-10
     ops: cumulative resources, tight capacities (many pairs that cannot
     overlap), unary resources of capacity 1, stream graphs, and sets of
     jobs that pairwise cannot overlap (cliques for edge-finding); branch and
     bound must prove the brute-force optimum, also when it starts from a
     poor incumbent (program order, no improvement) so that the rules have
     optimal schedules to lose, and its lower bound never exceeds the
     optimum;
   - each propagation rule on hand-made cases where it must and must not
     prune: time-tabling of compulsory parts, ordering of pairs that cannot
     overlap, edge-finding on cliques, energetic reasoning, and the
     destructive bound at the root; the parent's windows a child's
     propagation starts from; the unary streams' rules (overload,
     edge-finding, detectable precedences, not-last, busy blocks, the root
     bound of two streams); their theta and theta-lambda trees against the
     definitions of the sums and ECTs they keep, and their sorts from the
     last run's order against qsort;
   - the streams' rules against a brute force of their own on 600
     unary-only problems with chains, releases, deadlines (some
     infeasible) and busy blocks, as odd-even windows have them;
   - the proof of an incumbent by shaving its latest starts
     (cc__bnb_prove) against the same brute force, and the streams'
     snapshots that let a run of their rules be skipped against runs
     without them;
   - the node budget that counts the propagation's work (cumulative) and
     nodes alone (unary), the same search every run.
   This program compiles the implementation itself to reach the rules,
   which are private to the implementation's translation unit. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

/* tests/test_exact_shave.c runs this program again with the search
   shaving the windows of the nodes of fewer placed jobs than this (the
   context's test-only bnb_shave_depth); 0: only the root bound shaves. */
#ifndef TEST_SHAVE_DEPTH
#define TEST_SHAVE_DEPTH 0
#endif

/* ---- brute force ---------------------------------------------------------*/
/* Under AddressSanitizer or ThreadSanitizer (make asan, make tsan: the
   same code, several times slower) every third instance; plain builds run
   them all. 3 is prime to the 4 kinds, so each kind is still drawn. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BRUTE_STRIDE 3
#else
#define BRUTE_STRIDE 1
#endif
static void test_brute_force(void) {
    tu_rng rng = {20250615};
    int trial, n_trials = 1500, bad_solve = 0, bad_valid = 0, bad_opt = 0, bad_lb = 0, bad_poor = 0, n_unary = 0, n_stream = 0, n_clique = 0;
    int bad_scaled = 0, n_scaled = 0, n_scaled_same = 0;
    long sizes[11] = {0};
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        double opt, mk = -1;
        long nodes = 0;
        long nodes_v0 = -1;
        int v, kind = trial < 1200 ? trial % 4 : 4;
        char msg[300];
        gen.n_min = 2; gen.n_max = 10;
        gen.k_min = 1; gen.k_max = 3;
        gen.streams = kind == 3;
        gen.cap_max = kind == 1 ? 2 : 5;   /* 1: tight, many disjunctive pairs */
        gen.dur_max = 6;
        gen.unit_us = 1.0;
        gen.p_edge_max = kind == 0 ? 0.5 : 0.3;
        gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        if (kind == 2) {   /* unary resources (capacity 1) beside a cumulative one (capacity >= 2: with
                              every resource unary the result is the stream simulation of the order) */
            int r, i;
            if (in->cap[0] < 2) in->cap[0] = 2;
            for (r = 1; r < in->k; r++) {
                in->cap[r] = 1;
                for (i = 0; i < in->n; i++) in->dem[i * in->k + r] = in->dem[i * in->k + r] > 0;
            }
            n_unary++;
        }
        if (kind == 4) {   /* cliques: on resource 0 (capacity 3) most jobs need 2 or 3, so they pairwise
                              cannot overlap; the others need 1 and fit beside one of them */
            int i;
            in->cap[0] = 3;
            for (i = 0; i < in->n; i++) in->dem[i * in->k] = (i % 4 == 3) ? 1 : tu_randint(&rng, 2, 3);
            n_clique++;
        }
        if (trial % BRUTE_STRIDE) {   /* drawn all the same: the instances do not depend on the build */
            n_unary -= kind == 2;
            n_clique -= kind == 4;
            tu_inst_free(in);
            continue;
        }
        n_stream += in->streams;
        sizes[in->n]++;
        opt = tu_brute_force(in, 1.0, &nodes);
        if (tu_build_graph(ctx, in, &g) != CC_OK) {
            if (bad_solve++ < 3) NOTE("trial %d: graph: %s", trial, cc_last_error(ctx));
            tu_inst_free(in);
            continue;
        }
        for (v = 0; v < 2; v++) {
            cc_sched_desc d = tu_sched_desc();
            cc_schedule s;
            cc_sched_stats s_st;
            memset(&s, 0, sizeof s);
            d.method = CC_SCHED_BNB;
            if (v == 1) {   /* a poor incumbent: the search has optima to find (and to lose) */
                d.tuning.priority = CC_PRIO_PROGRAM_ORDER;
                d.tuning.improve_passes = -1;
            }
            if (cc_sched_solve_stats(ctx, g, &d, &s, &s_st) != CC_OK) {
                if (bad_solve++ < 3) NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx));
                continue;
            }
            if (!tu_check(in, s.start_us, &mk, msg, sizeof msg) || cc_schedule_check(ctx, g, s.start_us, NULL) != CC_OK) {
                if (bad_valid++ < 3) NOTE("trial %d: invalid schedule: %s", trial, msg);
            } else if (!s.proven_optimal || fabs(mk - opt) > 1e-9) {
                if (bad_opt++ < 3)
                    NOTE("trial %d (n=%d, k=%d, variant %d): makespan %g, proven %d, brute force %g", trial, in->n, in->k, v, mk,
                         s.proven_optimal, opt);
            }
            if (s.lower_bound_us > opt + 1e-9 && bad_lb++ < 3) NOTE("trial %d: lower bound %g above the optimum %g", trial, s.lower_bound_us, opt);
            if (v == 1 && s_st.n_nodes < 0) bad_poor++;
            if (v == 0) nodes_v0 = (long)s_st.n_nodes;
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(g);
        /* the same problem with every capacity and demand times 2^13: above what the packed profiles
           hold (16-bit lanes), so the word-per-resource profiles serve; the same optimum, and where no
           capacity was 1 (so no unary rule ran or runs) the same search */
        if (!in->streams) {
            cc_graph* g2 = NULL;
            int i, r, min_cap = in->cap[0];
            for (r = 0; r < in->k; r++) {
                if (in->cap[r] < min_cap) min_cap = in->cap[r];
                in->cap[r] *= 8192;
                for (i = 0; i < in->n; i++) in->dem[i * in->k + r] *= 8192;
            }
            n_scaled++;
            if (tu_build_graph(ctx, in, &g2) != CC_OK) {
                if (bad_scaled++ < 3) NOTE("trial %d: scaled graph: %s", trial, cc_last_error(ctx));
            } else {
                cc_sched_desc d = tu_sched_desc();
                cc_schedule s;
                cc_sched_stats s_st;
                memset(&s, 0, sizeof s);
                d.method = CC_SCHED_BNB;
                if (cc_sched_solve_stats(ctx, g2, &d, &s, &s_st) != CC_OK) {
                    if (bad_scaled++ < 3) NOTE("trial %d: scaled solve failed: %s", trial, cc_last_error(ctx));
                } else {
                    int valid = tu_check(in, s.start_us, &mk, msg, sizeof msg);
                    if (!valid || !s.proven_optimal || fabs(mk - opt) > 1e-9 || (min_cap >= 2 && (long)s_st.n_nodes != nodes_v0)) {
                        if (bad_scaled++ < 3)
                            NOTE("trial %d (n=%d, k=%d, least capacity %d) scaled: valid %d, makespan %g, proven %d, %ld nodes; "
                                 "brute force %g, unscaled %ld nodes", trial, in->n, in->k, min_cap, valid, mk, s.proven_optimal,
                                 (long)s_st.n_nodes, opt, nodes_v0);
                    } else n_scaled_same += min_cap >= 2;
                    cc_schedule_release(ctx, &s);
                }
                cc_graph_destroy(g2);
            }
        }
        tu_inst_free(in);
    }
    NOTE("scaled by 2^13: %d instances, %d of them compared node for node", n_scaled, n_scaled_same);
    CHECK_INT(bad_scaled, 0, "scaled by 2^13 (the word-per-resource profiles): valid, the brute-force optimum proven, and the same "
                             "node count where no capacity is 1");
    NOTE("%d instances (%d with unary resources beside a cumulative one, %d stream graphs, %d built around cliques); "
         "sizes 2..10: %ld %ld %ld %ld %ld %ld %ld %ld %ld",
         (n_trials + BRUTE_STRIDE - 1) / BRUTE_STRIDE, n_unary, n_stream, n_clique, sizes[2], sizes[3], sizes[4], sizes[5], sizes[6], sizes[7], sizes[8], sizes[9], sizes[10]);
    CHECK_INT(bad_solve, 0, "every solve returns CC_OK");
    CHECK_INT(bad_valid, 0, "every schedule is valid (own checker and cc_schedule_check)");
    CHECK_INT(bad_opt, 0, "branch and bound proves the brute-force optimum, from a good and from a poor incumbent (%d x 2 solves)", (n_trials + BRUTE_STRIDE - 1) / BRUTE_STRIDE);
    CHECK_INT(bad_lb, 0, "the lower bound never exceeds the optimum");
    CHECK_INT(bad_poor, 0, "node counts are counted");
}

/* ---- the rules on hand-made cases ----------------------------------------*/
/* A problem of n jobs on one resource of capacity cap, no edges. */
typedef struct hand {
    cc__prob p;
    cc__time dur[8];
    int32_t dem[8], cap[1];
    int succ_off[9], pred_off[9], succ[1], pred[1];
    cc__bnb b;
} hand;

static int hand_init(hand* h, int n, int cap, const int* dur, const int* dem, cc__time target) {
    int i;
    memset(h, 0, sizeof *h);
    for (i = 0; i < n; i++) { h->dur[i] = dur[i]; h->dem[i] = dem[i]; }
    for (i = 0; i <= n; i++) h->succ_off[i] = h->pred_off[i] = 0;
    h->cap[0] = cap;
    h->p.n = n; h->p.k = 1; h->p.dur = h->dur; h->p.dem = h->dem; h->p.cap = h->cap;
    h->p.succ_off = h->succ_off; h->p.succ = h->succ; h->p.pred_off = h->pred_off; h->p.pred = h->pred;
    h->p.grain = 1;
    h->b.ctx = ctx; h->b.p = &h->p; h->b.n = n; h->b.k = 1; h->b.nw = 1; h->b.step = 1; h->b.tt = 1;
    if (!cc__bnb_alloc(&h->b)) return 0;
    if (cc__bnb_structure(&h->b) || !cc__bnb_tails(&h->b)) return 0;
    cc__bnb_conflicts(&h->b);
    cc__bnb_cliques(&h->b, 0);
    h->b.U = target + 1;
    cc__bnb_set_target(&h->b);
    for (i = 0; i < n; i++) { h->b.h[i] = 0; h->b.lt[i] = h->b.ls[i]; }
    return 1;
}

static void hand_free(hand* h) { cc__bnb_free_all(&h->b); }

static void test_timetabling(void) {
    /* capacity 2, jobs of 4, 4 and 3 units, one unit each: no pair is
       disjunctive and the energy (11 over 2) allows 6, but at target 6 the
       two long jobs have compulsory parts [2, 4) that fill the resource and
       the short one fits nowhere in [0, 6); at 7 everything fits */
    static const int dur[3] = {4, 4, 3}, dem[3] = {1, 1, 1};
    hand h;
    int changed = 0;
    CHECK(hand_init(&h, 3, 2, dur, dem, 6), "set up");
    CHECK_INT(h.b.dis[0], 0, "no pair of the three is disjunctive");
    CHECK(cc__bnb_tt_pass(&h.b, &changed) == 0, "time-tabling refutes target 6 (compulsory parts [2,4) of both long jobs)");
    CHECK(cc__bnb_timetable(&h.b) == 0, "and so does the whole propagation");
    hand_free(&h);
    CHECK(hand_init(&h, 3, 2, dur, dem, 7), "set up");
    CHECK(cc__bnb_timetable(&h.b) == 1, "target 7 (the optimum) is not refuted");
    CHECK(h.b.h[0] == 0 && h.b.h[1] == 0 && h.b.h[2] == 0 && h.b.lt[2] == 4, "and nothing moves (heads 0, latest start of the short job 4)");
    hand_free(&h);
    {   /* a head moves past a compulsory part: unary, A (3) in [0, 1], B (2) in [0, 8] */
        static const int d2[2] = {3, 2}, m2[2] = {1, 1};
        CHECK(hand_init(&h, 2, 1, d2, m2, 10), "set up");
        h.b.lt[0] = 1;
        changed = 0;
        CHECK(cc__bnb_tt_pass(&h.b, &changed) == 1 && changed, "A's part [1, 3) moves B");
        CHECK(h.b.h[1] == 3 && h.b.lt[1] == 8 && h.b.h[0] == 0 && h.b.lt[0] == 1, "B starts at 3 at the earliest (head %lld), A keeps [0, 1]",
              (long long)h.b.h[1]);
        hand_free(&h);
    }
    {   /* a latest start moves before a compulsory part: B (2) in [0, 4] must end by A's part [3, 5) */
        static const int d2[2] = {5, 2}, m2[2] = {1, 1};
        CHECK(hand_init(&h, 2, 1, d2, m2, 10), "set up");
        h.b.h[0] = 0; h.b.lt[0] = 3;   /* A in [0, 3]: part [3, 5) */
        h.b.h[1] = 0; h.b.lt[1] = 4;
        changed = 0;
        CHECK(cc__bnb_tt_pass(&h.b, &changed) == 1 && changed && h.b.lt[1] == 1, "B's latest start moves from 4 to 1 (got %lld)",
              (long long)h.b.lt[1]);
        hand_free(&h);
    }
}

static void test_pairs(void) {
    /* capacity 3: two jobs of 3 units needing 2 each cannot overlap */
    static const int dur[2] = {3, 3}, dem[2] = {2, 2}, dem_ok[2] = {1, 2};
    hand h;
    int changed = 0;
    CHECK(hand_init(&h, 2, 3, dur, dem, 20), "set up");
    CHECK(h.b.dis[0] == 2 && h.b.dis[1] == 1, "the pair is disjunctive");
    h.b.lt[0] = 1; h.b.lt[1] = 5;   /* A cannot follow B: B follows A */
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1 && changed, "A before B: not refuted, something moves");
    CHECK(h.b.h[1] == 3 && h.b.lt[0] == 1 && h.b.h[0] == 0 && h.b.lt[1] == 5, "B's head 3 (got %lld), A's latest start stays 1",
          (long long)h.b.h[1]);
    h.b.h[1] = 0; h.b.lt[0] = 1; h.b.lt[1] = 2;   /* neither order fits */
    CHECK(cc__bnb_pairs(&h.b, &changed) == 0, "windows [0,1] and [0,2] for two jobs of 3 that cannot overlap: refuted");
    h.b.h[1] = 0; h.b.lt[0] = 1; h.b.lt[1] = 4;   /* B must follow A and end by 7: A's latest start 1 stays */
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1 && h.b.h[1] == 3, "B after A (head 3)");
    h.b.h[1] = 0; h.b.lt[0] = 5; h.b.lt[1] = 1;   /* A after B: A's head moves, B's latest start from A's */
    h.b.h[0] = 0;
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1 && h.b.h[0] == 3 && h.b.lt[1] == 1, "A after B (head 3)");
    hand_free(&h);
    CHECK(hand_init(&h, 2, 3, dur, dem_ok, 20), "set up");
    CHECK(h.b.dis[0] == 0 && h.b.dis[1] == 0, "1 + 2 <= 3: the pair may overlap");
    h.b.lt[0] = 1; h.b.lt[1] = 2;
    changed = 0;
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1 && !changed && h.b.h[0] == 0 && h.b.h[1] == 0, "and nothing is pruned or moved");
    hand_free(&h);
}

/* Edge-finding skips a clique whose windows did not move since its last
   run in the same propagation; a hand-made case starts a new one. */
static void ef_forget(hand* h) {
    int q;
    for (q = 0; q < h->b.n_clq; q++) h->b.ef_fresh[q] = 0;
}

static void test_edgefind(void) {
    /* capacity 3, every job needs 2: no two overlap, one clique of three */
    static const int dur[3] = {2, 2, 1}, dem[3] = {2, 2, 2};
    static const int dur3[3] = {2, 2, 2};
    hand h;
    int changed = 0;
    CHECK(hand_init(&h, 3, 3, dur, dem, 20), "set up");
    CHECK(h.b.n_clq == 1 && h.b.clq_off[1] == 3, "the three jobs form one clique (%d cliques)", h.b.n_clq);
    /* A, B (2 each) in [0, 2]: together they fill [0, 4); C (1) in [0, 10]
       fits before or after either one (the pairs move nothing), but not
       before or between both */
    h.b.lt[0] = 2; h.b.lt[1] = 2; h.b.lt[2] = 10;
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1 && !changed, "the pairs alone move nothing");
    CHECK(cc__bnb_edgefind(&h.b, &changed) == 1 && changed && h.b.h[2] == 4, "C after A and B: head 4 (got %lld)",
          (long long)h.b.h[2]);
    CHECK(h.b.h[0] == 0 && h.b.h[1] == 0 && h.b.lt[0] == 2 && h.b.lt[1] == 2, "A and B keep [0, 2]");
    /* mirrored: A, B in [6, 8] fill [6, 10); C must end by 6 */
    h.b.h[0] = 6; h.b.h[1] = 6; h.b.lt[0] = 8; h.b.lt[1] = 8; h.b.h[2] = 0; h.b.lt[2] = 9;
    changed = 0;
    CHECK(cc__bnb_timetable(&h.b) == 1, "not refuted");
    h.b.h[0] = 6; h.b.h[1] = 6; h.b.lt[0] = 8; h.b.lt[1] = 8; h.b.h[2] = 0; h.b.lt[2] = 9;
    ef_forget(&h);
    changed = 0;
    CHECK(cc__bnb_edgefind(&h.b, &changed) == 1 && changed && h.b.lt[2] == 5, "C before A and B: latest start 5 (got %lld)",
          (long long)h.b.lt[2]);
    /* C already after them: nothing moves */
    h.b.h[0] = 0; h.b.h[1] = 0; h.b.lt[0] = 2; h.b.lt[1] = 2; h.b.h[2] = 4; h.b.lt[2] = 10;
    ef_forget(&h);
    changed = 0;
    CHECK(cc__bnb_edgefind(&h.b, &changed) == 1 && !changed, "C in [4, 10]: nothing is pruned or moved");
    hand_free(&h);
    /* three jobs of 2 in [0, 2] (all within [0, 4)): every pair fits, the three do not */
    CHECK(hand_init(&h, 3, 3, dur3, dem, 20), "set up");
    h.b.lt[0] = h.b.lt[1] = h.b.lt[2] = 2;
    changed = 0;
    CHECK(cc__bnb_pairs(&h.b, &changed) == 1, "the pairs do not refute it");
    CHECK(cc__bnb_edgefind(&h.b, &changed) == 0, "edge-finding does: 6 units of work in [0, 4)");
    h.b.lt[2] = 4;
    ef_forget(&h);
    changed = 0;
    CHECK(cc__bnb_edgefind(&h.b, &changed) == 1 && h.b.h[2] == 4, "with the third in [0, 4] it goes last (head %lld)",
          (long long)h.b.h[2]);
    hand_free(&h);
}

static void test_energetic(void) {
    /* capacity 2: A (4 units, demand 1) fixed at [0, 4); B (2 units,
       demand 2) in [1, 2] needs 2 of [1, 4) in full: 3 + 4 > 2 * 3 */
    static const int dur[2] = {4, 2}, dem[2] = {1, 2};
    hand h;
    CHECK(hand_init(&h, 2, 2, dur, dem, 20), "set up");
    h.b.h[0] = 0; h.b.lt[0] = 0;
    h.b.h[1] = 1; h.b.lt[1] = 2;
    CHECK(cc__bnb_energetic(&h.b) == 0, "B inside A's interval: overloaded, refuted");
    h.b.h[1] = 4; h.b.lt[1] = 4;
    CHECK(cc__bnb_energetic(&h.b) == 1, "B after A: not refuted");
    h.b.h[1] = 1; h.b.lt[1] = 6;
    CHECK(cc__bnb_energetic(&h.b) == 1, "B free to move after A: not refuted");
    hand_free(&h);
}

/* The destructive bound at the root proves the optimum of the time-tabling
   case above (7, where the critical path is 4 and the resource bound 6)
   without a search. */
static void test_destructive(void) {
    tu_inst* in = tu_inst_new(3, 1, 0);
    cc_graph* g = NULL;
    cc_sched_desc d = tu_sched_desc();
    cc_schedule s;
    cc_sched_stats s_st;
    in->cap[0] = 2;
    in->dur[0] = 4; in->dur[1] = 4; in->dur[2] = 3;
    in->dem[0] = in->dem[1] = in->dem[2] = 1;
    memset(&s, 0, sizeof s);
    CHECK_RES(ctx, tu_build_graph(ctx, in, &g), CC_OK, "graph");
    d.method = CC_SCHED_BNB;
    CHECK_RES(ctx, cc_sched_solve_stats(ctx, g, &d, &s, &s_st), CC_OK, "solve");
    CHECK(s.makespan_us == 7 && s.proven_optimal && s.lower_bound_us == 7 && s_st.n_nodes == 0,
          "makespan 7 proven at the root (lower bound %g, resource bound %g, %lld nodes)", s.lower_bound_us, s.lb_resource_us,
          (long long)s_st.n_nodes);
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(in);
}

/* The root's destructive bound over each clique cover (cc__bnb_cliques:
   jobs of equal duration by id, or by id descending), with and without
   shaving, against the brute force: on problems built around cliques with
   many equal durations, no bound exceeds the optimum (the incumbent's
   target one above it, so a wrong refutation of the optimum would show).
   On problems this small the two covers give the same bound; where the
   second one gains (PSPLIB's j309_1) is test_j30's. */
static cc__time cover_bound(const cc__prob* p, cc__time U, int rev, int shave) {
    cc__bnb bb, *b = &bb;
    cc__time lb = -1;
    memset(b, 0, sizeof *b);
    b->ctx = ctx; b->p = p; b->n = p->n; b->k = p->k; b->nw = (p->n + 63) / 64;
    b->work_unit = CONCERTO__BNB_WORK_PER_NODE;
    b->step = cc__bnb_step(p);
    b->tt = 1;
    if (cc__bnb_alloc(b) && !cc__bnb_structure(b) && cc__bnb_tails(b) && cc__bnb_streams(b)) {
        cc__bnb_conflicts(b);
        cc__bnb_cliques(b, rev);
        b->U = CONCERTO__TIME_MAX;
        cc__bnb_set_target(b);
        lb = cc__bnb_ceil(cc__bnb_bound(b, -CONCERTO__TIME_MAX, -CONCERTO__TIME_MAX), b->step);
        b->U = U;
        b->shave = shave;
        if (lb < U) lb = cc__bnb_destructive(b, lb);
    }
    cc__bnb_free_all(b);
    return lb;
}

static void test_clique_covers(void) {
    tu_rng rng = {7070};
    int trial, n_trials = 300, bad = 0, n_run = 0, n_differ = 0, n_below = 0;
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        cc__prob p;
        cc__time opt, lb[4];
        int i, v;
        gen.n_min = 6; gen.n_max = 9;
        gen.k_min = 1; gen.k_max = 2;
        gen.streams = 0;
        gen.cap_max = 4;
        gen.dur_max = 2;   /* few durations: many ties */
        gen.unit_us = 1.0;
        gen.p_edge_max = 0.25;
        gen.p_no_stream = 0;
        in = tu_random_inst(&rng, &gen);
        in->cap[0] = 3;
        for (i = 0; i < in->n; i++) {
            in->dem[i * in->k] = (i % 5 == 4) ? 1 : tu_randint(&rng, 2, 3);
            if (in->dur[i] < 1) in->dur[i] = 1;
        }
        if (trial % BRUTE_STRIDE) {   /* drawn all the same, as in test_brute_force */
            tu_inst_free(in);
            continue;
        }
        if (tu_build_graph(ctx, in, &g) != CC_OK || cc_graph_validate(g) != CC_OK) {
            if (bad++ < 3) NOTE("trial %d: graph: %s", trial, cc_last_error(ctx));
            cc_graph_destroy(g);
            tu_inst_free(in);
            continue;
        }
        opt = (cc__time)llround(tu_brute_force(in, 1.0, NULL) * CONCERTO__TICKS_PER_US);
        cc__prob_of_graph(g, &p);
        n_run++;
        for (v = 0; v < 4; v++) {   /* cover v % 2, shaving v / 2 */
            lb[v] = cover_bound(&p, opt + p.grain, v % 2, v / 2);
            if ((lb[v] < 0 || lb[v] > opt) && bad++ < 3)
                NOTE("trial %d (n=%d): the bound over cover %d (shaving %d) is %lld, the optimum %lld", trial, in->n, v % 2, v / 2,
                     (long long)lb[v], (long long)opt);
        }
        n_below += lb[2] < opt || lb[3] < opt;
        n_differ += lb[1] != lb[0] || lb[3] != lb[2];
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d problems of 6-9 jobs around cliques: the covers' bounds differ on %d; with shaving below the optimum on %d",
         n_run, n_differ, n_below);
    CHECK_INT(bad, 0, "the root bound over either clique cover, with or without shaving, never exceeds the brute-force optimum");
}

/* Shaving. Capacity 2, target 4 (every job ends by 4): D (4 units,
   demand 1) is held at [0, 0], so one unit is left over [0, 4); A, B, C
   (2 units, demand 1 each) lie in [0, 2]. No job has a compulsory part
   and no pair is above the capacity, so time-tabling, the pairs and the
   cliques move nothing. Shaving holds A at 0: its part [0, 2) fills the
   capacity there, so B and C go to [2, 2] and overload [2, 4) (1 + 1 + 1 >
   2); A at 1 (part [1, 2)) leaves B and C nowhere but 2, the same; A at 2
   is the mirror: so A has no start and the node is refuted (by hand: three
   jobs of 2 units in one unit of capacity over 4 units of time cannot fit).
   Without C: A at 0 leaves B at 2, A at 2 leaves B at 0, so both ends of
   every window stand (A at 1 fits nowhere, but shaving cuts only ends). */
static void test_shave(void) {
    static const int dur[4] = {2, 2, 2, 4}, dem[4] = {1, 1, 1, 1};
    static const int dur2[3] = {2, 2, 4}, dem2[3] = {1, 1, 1};
    hand h;
    int rc;
    CHECK(hand_init(&h, 4, 2, dur, dem, 4), "set up");
    h.b.h[3] = 0; h.b.lt[3] = 0;
    rc = cc__bnb_timetable(&h.b);
    CHECK(rc == 1 && h.b.h[0] == 0 && h.b.lt[0] == 2 && h.b.h[1] == 0 && h.b.lt[2] == 2,
          "three jobs beside D: time-tabling, pairs and cliques move nothing (rc %d, A in [%lld, %lld])", rc,
          (long long)h.b.h[0], (long long)h.b.lt[0]);
    CHECK(cc__bnb_shave(&h.b) == 0, "shaving refutes it: A fits neither at 0 nor at 2");
    hand_free(&h);
    CHECK(hand_init(&h, 3, 2, dur2, dem2, 4), "set up");
    h.b.h[2] = 0; h.b.lt[2] = 0;
    rc = cc__bnb_timetable(&h.b);
    CHECK(rc == 1 && cc__bnb_shave(&h.b) == 1, "two jobs beside D: not refuted");
    CHECK(h.b.h[0] == 0 && h.b.lt[0] == 2 && h.b.h[1] == 0 && h.b.lt[1] == 2 && h.b.h[2] == 0 && h.b.lt[2] == 0,
          "and no window moves: A [%lld, %lld], B [%lld, %lld]", (long long)h.b.h[0], (long long)h.b.lt[0],
          (long long)h.b.h[1], (long long)h.b.lt[1]);
    hand_free(&h);
}

/* Shaving against brute force: 400 problems of 3-5 jobs on one resource
   of capacity 2-4 with a tight target (between the larger of the longest
   job and the energy bound, and that plus 2), about half of the jobs held
   to a random part of [0, target - dur] (the windows a node's parent
   leaves), most of which no propagation settles alone. The brute force
   enumerates every start vector in the windows; where some schedule ends by the target,
   shaving must not refute it and every job's earliest and latest feasible
   start must stay in its shaved window. Shaving must also refute or cut
   where time-tabling did not, on some of them. */
static void test_shave_brute(void) {
    tu_rng rng = {20261123};
    int trial, bad_sound = 0, bad_window = 0, n_refute = 0, n_cut = 0, n_feasible = 0;
    for (trial = 0; trial < 400; trial++) {
        int n = tu_randint(&rng, 3, 5), cap = tu_randint(&rng, 2, 4), dur[5], dem[5], i, T, energy = 0, longest = 0;
        cc__time fmin[5], fmax[5], h0[5], l0[5];
        int st[5], lo[5], hi[5], any = 0, rc, cut = 0;
        cc__time pw[10];
        hand h;
        for (i = 0; i < n; i++) {
            dur[i] = tu_randint(&rng, 1, 4);
            dem[i] = tu_randint(&rng, 1, cap);
            energy += dur[i] * dem[i];
            if (dur[i] > longest) longest = dur[i];
        }
        T = (energy + cap - 1) / cap;
        if (T < longest) T = longest;
        T += tu_randint(&rng, 0, 2);
        if (T > 10) T = 10;
        if (T < longest) T = longest;
        for (i = 0; i < n; i++) {
            lo[i] = 0; hi[i] = T - dur[i];
            if (tu_randint(&rng, 0, 1)) { lo[i] = tu_randint(&rng, 0, hi[i]); hi[i] = tu_randint(&rng, lo[i], hi[i]); }
            fmin[i] = 1000; fmax[i] = -1; st[i] = lo[i];
        }
        for (;;) {   /* every start vector, as an odometer */
            int t, ok = 1;
            for (t = 0; t < T && ok; t++) {
                int use = 0;
                for (i = 0; i < n; i++)
                    if (st[i] <= t && t < st[i] + dur[i]) use += dem[i];
                if (use > cap) ok = 0;
            }
            if (ok) {
                any = 1;
                for (i = 0; i < n; i++) {
                    if (st[i] < fmin[i]) fmin[i] = st[i];
                    if (st[i] > fmax[i]) fmax[i] = st[i];
                }
            }
            for (i = 0; i < n && ++st[i] > hi[i]; i++) st[i] = lo[i];
            if (i == n) break;
        }
        n_feasible += any;
        if (!hand_init(&h, n, cap, dur, dem, T)) { bad_sound++; continue; }
        for (i = 0; i < n; i++) { pw[i] = lo[i]; pw[n + i] = hi[i]; }
        h.b.pw = pw;
        rc = cc__bnb_timetable(&h.b);
        for (i = 0; i < n; i++) { h0[i] = h.b.h[i]; l0[i] = h.b.lt[i]; }
        if (rc) {
            rc = cc__bnb_shave(&h.b);
            if (!rc) n_refute++;
            else
                for (i = 0; i < n; i++) cut |= h.b.h[i] > h0[i] || h.b.lt[i] < l0[i];
            n_cut += cut;
        }
        if (any && !rc && bad_sound++ < 3) NOTE("trial %d (n=%d, cap %d, T %d): refuted, but a schedule exists", trial, n, cap, T);
        if (any && rc)
            for (i = 0; i < n; i++)
                if ((h.b.h[i] > fmin[i] || h.b.lt[i] < fmax[i]) && bad_window++ < 3)
                    NOTE("trial %d: job %d's window [%lld, %lld] loses a feasible start (%lld..%lld)", trial, i,
                         (long long)h.b.h[i], (long long)h.b.lt[i], (long long)fmin[i], (long long)fmax[i]);
        hand_free(&h);
    }
    NOTE("400 problems, %d with a schedule; shaving refuted %d and cut a window of %d that time-tabling left", n_feasible, n_refute, n_cut);
    CHECK_INT(bad_sound, 0, "shaving never refutes a problem that has a schedule");
    CHECK_INT(bad_window, 0, "shaving never cuts a feasible start");
    CHECK(n_refute > 0 && n_cut > 0, "shaving refutes (%d) and cuts (%d) beyond time-tabling", n_refute, n_cut);
}

static void test_parent_windows(void) {
    /* unary, A (3) and B (2), target 10: from scratch nothing moves; from a
       parent's windows that hold A in [0, 1], A's part [1, 3) moves B to 3 */
    static const int dur[2] = {3, 2}, dem[2] = {1, 1};
    cc__time pw[4];
    hand h;
    int rc;
    CHECK(hand_init(&h, 2, 1, dur, dem, 10), "set up");
    CHECK(cc__bnb_timetable(&h.b) == 1 && h.b.h[1] == 0 && h.b.lt[0] == 7, "without the parent's windows nothing moves");
    hand_free(&h);
    CHECK(hand_init(&h, 2, 1, dur, dem, 10), "set up");
    pw[0] = 0; pw[1] = 0; pw[2] = 1; pw[3] = 100;   /* heads, then latest starts */
    h.b.pw = pw;
    rc = cc__bnb_timetable(&h.b);
    CHECK(rc == 1 && h.b.lt[0] == 1 && h.b.h[1] == 3 && h.b.lt[1] == 8,
          "the parent's window of A moves B's head to 3 (got %lld); B's latest start stays 8 from the target, not 100 (got %lld)",
          (long long)h.b.h[1], (long long)h.b.lt[1]);
    hand_free(&h);
    CHECK(hand_init(&h, 2, 1, dur, dem, 10), "set up");
    pw[0] = 5; pw[1] = 0; pw[2] = 4; pw[3] = 100;   /* A's parent window is empty */
    h.b.pw = pw;
    CHECK(cc__bnb_timetable(&h.b) == 0, "an empty parent window refutes the node");
    hand_free(&h);
}

/* ---- unary streams: the rules, and brute force on windows ---------------*/
/* A problem of n jobs (n <= 10) on k unary resources, with chains,
   releases, deadlines and busy blocks, as an odd-even window has them. */
typedef struct uprob {
    cc__prob p;
    cc__time dur[10], rel[10], dl[10], bs[6], be[6];
    int32_t dem[20], cap[2], bd[12];
    int succ_off[11], pred_off[11], succ[45], pred[45];
} uprob;

/* Edges as (from, to) pairs, from < to; CSR both ways. */
static void uprob_edges(uprob* u, int n, const int* e, int ne) {
    int i, x;
    for (i = 0; i <= n; i++) u->succ_off[i] = u->pred_off[i] = 0;
    for (x = 0; x < ne; x++) { u->succ_off[e[2 * x] + 1]++; u->pred_off[e[2 * x + 1] + 1]++; }
    for (i = 0; i < n; i++) { u->succ_off[i + 1] += u->succ_off[i]; u->pred_off[i + 1] += u->pred_off[i]; }
    {
        int fs[11], fp[11];
        for (i = 0; i < n; i++) { fs[i] = u->succ_off[i]; fp[i] = u->pred_off[i]; }
        for (x = 0; x < ne; x++) { u->succ[fs[e[2 * x]]++] = e[2 * x + 1]; u->pred[fp[e[2 * x + 1]]++] = e[2 * x]; }
    }
    u->p.succ_off = u->succ_off; u->p.succ = u->succ; u->p.pred_off = u->pred_off; u->p.pred = u->pred;
}

static void uprob_init(uprob* u, int n, int k) {
    int i;
    memset(u, 0, sizeof *u);
    u->p.n = n; u->p.k = k; u->p.dur = u->dur; u->p.dem = u->dem; u->p.cap = u->cap;
    u->cap[0] = u->cap[1] = 1;
    for (i = 0; i < n; i++) u->dl[i] = CONCERTO__TIME_MAX;
    u->p.release = u->rel; u->p.deadline = u->dl;
    u->p.busy_start = u->bs; u->p.busy_end = u->be; u->p.busy_dem = u->bd;
    u->p.grain = 1;
    uprob_edges(u, n, NULL, 0);
}

/* The search state of a problem with its streams, the target set. */
static int ubnb_init(cc__bnb* b, const cc__prob* p, cc__time target) {
    int i;
    memset(b, 0, sizeof *b);
    b->ctx = ctx; b->p = p; b->n = p->n; b->k = p->k; b->nw = 1; b->step = 1; b->tt = b->uo = 1;
    if (!cc__bnb_alloc(b)) return 0;
    if (cc__bnb_structure(b) || !cc__bnb_tails(b)) return 0;
    cc__bnb_conflicts(b);
    if (!cc__bnb_streams(b)) return 0;
    b->U = target + 1;
    cc__bnb_set_target(b);
    for (i = 0; i < p->n; i++) { b->h[i] = b->rel[i]; b->lt[i] = b->ls[i]; }
    return 1;
}

/* cc__uny_side on c tasks given as (est, lct, p) triples. */
static int uside(cc__bnb* b, int c, const int* t) {
    int i;
    for (i = 0; i < c; i++) { b->u_est[i] = t[3 * i]; b->u_lct[i] = t[3 * i + 1]; b->u_p[i] = t[3 * i + 2]; }
    return cc__uny_side(b, c, NULL, 0, NULL);
}

static void test_unary_rules(void) {
    uprob u;
    cc__bnb b;
    int i, ok;
    /* the rules' scratch comes from a stream of 4 jobs */
    uprob_init(&u, 4, 1);
    for (i = 0; i < 4; i++) { u.dur[i] = 1; u.dem[i] = 1; }
    CHECK(ubnb_init(&b, &u.p, 100) && b.n_str == 1 && b.str_max == 4, "set up: one stream of 4 jobs");
    {   /* overload: 2 + 3 units in [0, 4] */
        int t1[] = {0, 4, 2, 0, 4, 3}, t2[] = {0, 5, 2, 0, 5, 3};
        ok = uside(&b, 2, t1);
        CHECK(ok == 0, "overload: A (2) and B (3) in [0, 4] leave no completion");
        ok = uside(&b, 2, t2);
        CHECK(ok == 1 && b.u_ne[0] == 0 && b.u_ne[1] == 0 && b.u_nl[0] == 5 && b.u_nl[1] == 5,
              "in [0, 5] they fit, and none of the windows moves (est %lld %lld, lct %lld %lld)",
              (long long)b.u_ne[0], (long long)b.u_ne[1], (long long)b.u_nl[0], (long long)b.u_nl[1]);
    }
    {   /* edge-finding: A, B (2 each) in [0, 5], C (2) in [0, 10]: A + B + C = 6 units cannot end by 5,
           so C ends after both and starts at ECT(A, B) = 4; detectable precedences see nothing (lst 3 >= ect_C 2) */
        int t1[] = {0, 5, 2, 0, 5, 2, 0, 10, 2}, t2[] = {0, 6, 2, 0, 6, 2, 0, 10, 2};
        ok = uside(&b, 3, t1);
        CHECK(ok == 1 && b.u_ne[2] == 4 && b.u_ne[0] == 0 && b.u_ne[1] == 0,
              "edge-finding: C after A and B, head 4 (got %lld)", (long long)b.u_ne[2]);
        ok = uside(&b, 3, t2);
        CHECK(ok == 1 && b.u_ne[2] == 0, "with A and B in [0, 6] all three fit by 6: C stays at 0 (got %lld)",
              (long long)b.u_ne[2]);
    }
    {   /* detectable precedences: A (3) in [0, 5] has lst 2 < ect_C = 2 + 2, so A precedes C: head 3.
           Edge-finding sees nothing: min est 0 + 3 + 2 = 5 is not above lct_A 5 */
        int t1[] = {0, 5, 3, 2, 20, 2}, t2[] = {0, 5, 3, 0, 20, 2};
        ok = uside(&b, 2, t1);
        CHECK(ok == 1 && b.u_ne[1] == 3, "detectable precedence: A before C, head of C 3 (got %lld)",
              (long long)b.u_ne[1]);
        ok = uside(&b, 2, t2);
        CHECK(ok == 1 && b.u_ne[1] == 0 && b.u_ne[0] == 0,
              "with C from 0 (ect 2, not above lst_A 2) nothing moves (got %lld)", (long long)b.u_ne[1]);
    }
    {   /* not-last: A (5) and B (4) in [0, 12] (lst 7, 8), C (3) in [0, 11], lst 8: O = {A, B} (lst < 11)
           has ECT 9 > 8, so C is not last and ends by max lst of O = 8 */
        int t1[] = {0, 12, 5, 0, 12, 4, 0, 11, 3}, t2[] = {0, 12, 5, 0, 12, 4, 0, 11, 2};
        ok = uside(&b, 3, t1);
        CHECK(ok == 1 && b.u_nl[2] == 8 && b.u_nl[0] == 12 && b.u_nl[1] == 12 && b.u_ne[2] == 0,
              "not-last: C ends by 8 (got %lld), A and B keep 12", (long long)b.u_nl[2]);
        ok = uside(&b, 3, t2);
        CHECK(ok == 1 && b.u_nl[2] == 11, "with C of 2 (lst 9, not below ECT 9) it keeps 11 (got %lld)",
              (long long)b.u_nl[2]);
    }
    cc__bnb_free_all(&b);
    {   /* a busy block [2, 5) on the stream: a job of 3 in [0, 20] does not fit before it, so it starts at 5;
           a job of 2 does and keeps its head 0 */
        uprob_init(&u, 2, 1);
        u.dur[0] = 3; u.dur[1] = 1; u.dem[0] = 1; u.dem[1] = 1;
        u.p.n_busy = 1; u.bs[0] = 2; u.be[0] = 5; u.bd[0] = 1;
        CHECK(ubnb_init(&b, &u.p, 20), "set up: a busy block");
        {
            int ch = 0;
            ok = cc__bnb_unary(&b, &ch);
            CHECK(ok == 1 && ch && b.h[0] == 5, "a job of 3 starts after the block: head 5 (got %lld)", (long long)b.h[0]);
        }
        cc__bnb_free_all(&b);
        u.dur[0] = 2;
        CHECK(ubnb_init(&b, &u.p, 20), "set up");
        {
            int ch = 0;
            CHECK(cc__bnb_unary(&b, &ch) == 1 && !ch && b.h[0] == 0 && b.h[1] == 0, "a job of 2 fits before it: nothing moves");
        }
        cc__bnb_free_all(&b);
        u.dur[0] = 3; u.dl[0] = 7;   /* and must end by 7: [5, 8) is too late, [0, 3) overlaps the block */
        CHECK(ubnb_init(&b, &u.p, 20), "set up");
        {
            int ch = 0;
            CHECK(cc__bnb_unary(&b, &ch) == 0, "a job of 3 that must end by 7 fits neither side of [2, 5): refuted");
        }
        cc__bnb_free_all(&b);
    }
    {   /* the root bound on two streams: J1a (3, stream 0) -> J1b (1, stream 1), J2a (1, stream 0) -> J2b (3,
           stream 1). The critical path and each stream's load are 4. For target 4, J1a ends by 3 and J2a
           by 1 (J2b needs 3 after it), both on stream 0 in [0, 3]: 4 units, overloaded; so the optimum is
           at least 5, and 5 it is (J2a, J1a | J2b, J1b). With a budget of one node and a poor incumbent
           of 7 the bound is what the root proved. */
        int e[] = {0, 1, 2, 3};
        cc__time best[4] = {0, 3, 3, 4};
        cc__bnb_result res;
        uprob_init(&u, 4, 2);
        uprob_edges(&u, 4, e, 2);
        u.dur[0] = 3; u.dur[1] = 1; u.dur[2] = 1; u.dur[3] = 3;
        u.dem[0 * 2 + 0] = 1; u.dem[1 * 2 + 1] = 1; u.dem[2 * 2 + 0] = 1; u.dem[3 * 2 + 1] = 1;
        CHECK_RES(ctx, cc__bnb_solve(ctx, &u.p, best, 1, 1, 0, &res), CC_OK, "solve, one node");
        CHECK(res.lower_bound == 5, "the root bound is 5 (got %lld; critical path and load 4)", (long long)res.lower_bound);
        best[0] = 0; best[1] = 3; best[2] = 3; best[3] = 4;
        CHECK_RES(ctx, cc__bnb_solve(ctx, &u.p, best, 1, 0, 0, &res), CC_OK, "solve");
        CHECK(res.proven && res.makespan == 5, "makespan 5 proven (got %lld, proven %d)", (long long)res.makespan, res.proven);
    }
}

/* ---- the theta and theta-lambda trees against their definitions ----
   ECT(S) = the largest e + (the durations of the tasks of S with est >= e)
   over the earliest starts e of S (-inf for S empty). */
static cc__time tree_ect(const cc__bnb* b, int c, const int* in) {
    cc__time best = CONCERTO__UNY_NEG;
    int i, m;
    for (i = 0; i < c; i++) {
        cc__time sum = 0;
        if (!in[i]) continue;
        for (m = 0; m < c; m++)
            if (in[m] && b->u_est[m] >= b->u_est[i]) sum += b->u_p[m];
        if (b->u_est[i] + sum > best) best = b->u_est[i] + sum;
    }
    return best;
}

static void test_theta_trees(void) {
    tu_rng rng = {5151};
    uprob u;
    cc__bnb b;
    int trial, i, bad_w = 0, bad_without = 0, bad_gray = 0, n_gray = 0, n_resp = 0;
    uprob_init(&u, 10, 1);
    for (i = 0; i < 10; i++) { u.dur[i] = 1; u.dem[i] = 1; }
    if (!ubnb_init(&b, &u.p, 100)) { CHECK(0, "set up: one stream of 10 jobs"); return; }
    for (trial = 0; trial < 3000; trial++) {
        int c = tu_randint(&rng, 1, 10), in[10], st[10], x;
        for (i = 0; i < c; i++) {
            b.u_est[i] = tu_randint(&rng, 0, 12);
            b.u_p[i] = tu_randint(&rng, 1, 6);
            b.u_lct[i] = b.u_est[i] + b.u_p[i] + tu_randint(&rng, 0, 8);
        }
        for (b.u_np = 1; b.u_np < c; b.u_np *= 2) {}
        cc__uny_sort(b.u_oe, b.u_est, c, b.u_tmp, NULL, NULL);
        for (i = 0; i < c; i++) b.u_pos[b.u_oe[i]] = i;
        /* white tree: a random Theta inserted leaf by leaf; ECT, and ECT without each member */
        cc__uny_fill_white(&b);
        for (i = 0; i < c; i++) {
            in[i] = tu_randint(&rng, 0, 1);
            if (in[i]) cc__uny_leaf_white(&b, i, 1);
        }
        if (b.tw[1].ect != tree_ect(&b, c, in)) bad_w++;
        for (i = 0; i < c; i++) {
            if (!in[i]) continue;
            in[i] = 0;
            if (cc__uny_ect_without(&b, i) != tree_ect(&b, c, in)) bad_without++;
            in[i] = 1;
        }
        /* theta-lambda tree: all white, then random leaves gray or empty */
        cc__uny_fill(&b, c, 1);
        for (i = 0; i < c; i++) st[i] = 1;
        for (x = 0; x < c; x++) {
            int j = tu_randint(&rng, 0, c - 1);
            st[j] = tu_randint(&rng, 0, 2);
            cc__uny_leaf(&b, j, st[j], 1);
        }
        for (i = 0; i < c; i++) in[i] = st[i] == 1;
        {
            cc__time ect = tree_ect(&b, c, in), best = ect, sp = 0, spb;
            int resp = b.t[1].rect, g;
            for (i = 0; i < c; i++) if (in[i]) sp += b.u_p[i];
            spb = sp;
            for (g = 0; g < c; g++) {
                cc__time e;
                if (st[g] != 2) continue;
                n_gray++;
                in[g] = 1; e = tree_ect(&b, c, in); in[g] = 0;
                if (e > best) best = e;
                if (sp + b.u_p[g] > spb) spb = sp + b.u_p[g];
            }
            if (b.t[1].ect != ect || b.t[1].sp != sp || b.t[1].ectb != best || b.t[1].spb != spb) bad_gray++;
            if (resp >= 0) {   /* the responsible gray leaf reaches the root's value */
                n_resp++;
                in[resp] = 1;
                if (st[resp] != 2 || tree_ect(&b, c, in) != best) bad_gray++;
                in[resp] = 0;
            } else if (best != ect) bad_gray++;
            if (b.t[1].rsp >= 0 ? st[b.t[1].rsp] != 2 || sp + b.u_p[b.t[1].rsp] != spb : spb != sp) bad_gray++;
        }
    }
    cc__bnb_free_all(&b);
    CHECK(bad_w == 0, "the theta tree's ECT equals the definition's (%d of 3000 differ)", bad_w);
    CHECK(bad_without == 0, "ECT without a member, from the path alone, equals the definition's (%d differ)", bad_without);
    CHECK(bad_gray == 0 && n_gray > 3000 && n_resp > 1000,
          "the theta-lambda tree's sums, ECTs and responsible gray leaves match the definitions (%d differ; %d gray "
          "leaves, %d responsible)", bad_gray, n_gray, n_resp);
}

/* The rules' sorts from the order of the last run (cc__uny_sort's last):
   the one order by key and index, from an empty cache, a nearly sorted
   order, a reversed one (more moves than the sort allows: the merge sort)
   and a foreign permutation, against qsort. */
static const cc__time* qs_key;
static int qs_cmp(const void* a, const void* c) {
    int x = *(const int*)a, y = *(const int*)c;
    if (qs_key[x] != qs_key[y]) return qs_key[x] < qs_key[y] ? -1 : 1;
    return x < y ? -1 : x > y;
}

static void test_uny_sort_last(void) {
    tu_rng rng = {5252};
    int trial, bad = 0, from_last = 0;
    for (trial = 0; trial < 2000; trial++) {
        cc__time key[64];
        int c = tu_randint(&rng, 1, 64), ord[64], tmp[64], ref[64], last[64], lastc = 0, i, how = trial % 4;
        for (i = 0; i < c; i++) key[i] = tu_randint(&rng, 0, trial % 2 ? 8 : 1000);
        for (i = 0; i < c; i++) ref[i] = i;
        qs_key = key;
        qsort(ref, (size_t)c, sizeof *ref, qs_cmp);
        if (how == 1 || how == 2) {   /* the order of slightly different keys, or reversed */
            cc__time k2[64];
            for (i = 0; i < c; i++) k2[i] = how == 1 ? key[i] + tu_randint(&rng, -2, 2) : -key[i];
            cc__uny_sort(ord, k2, c, tmp, last, &lastc);
            from_last += how == 1;
        } else if (how == 3) {   /* any permutation */
            for (i = 0; i < c; i++) last[i] = i;
            for (i = c - 1; i > 0; i--) { int j = tu_randint(&rng, 0, i), t = last[i]; last[i] = last[j]; last[j] = t; }
            lastc = c;
        }
        cc__uny_sort(ord, key, c, tmp, last, &lastc);
        if (memcmp(ord, ref, (size_t)c * sizeof *ord) || lastc != c || memcmp(last, ref, (size_t)c * sizeof *ord)) bad++;
        cc__uny_sort(ord, key, c, tmp, NULL, NULL);
        if (memcmp(ord, ref, (size_t)c * sizeof *ord)) bad++;
    }
    CHECK(bad == 0 && from_last > 400, "sorts from the last order (empty, nearly sorted, reversed, any) give qsort's "
          "order by key and index, and keep it (%d of 2000 differ)", bad);
}

/* Brute force on a unary-only problem: every precedence-feasible order
   through the serial generation (each job at its earliest start after its
   predecessors, its release and the jobs and busy blocks on its streams).
   On unary resources the orders by start of an optimal schedule give a
   schedule no job of which is later, so the least makespan over all orders
   is the optimum (deadlines checked at the end). CONCERTO__TIME_MAX when
   no order meets the deadlines. ubrute_best_rec also leaves a schedule
   that reaches it in best[] (*best_mk: the least makespan so far). */
static cc__time ubrute_best_rec(const uprob* u, int depth, unsigned used, cc__time* st, cc__time mk, cc__time* best,
                                cc__time* best_mk) {
    const cc__prob* p = &u->p;
    int n = p->n, k = p->k, j, q, r, x;
    if (depth == n) {
        if (mk < *best_mk) { *best_mk = mk; memcpy(best, st, (size_t)n * sizeof *st); }
        return mk;
    }
    for (j = 0; j < n; j++) {
        cc__time s, f;
        int moved = 1, ok = 1;
        if (used >> j & 1) continue;
        for (q = p->pred_off[j]; q < p->pred_off[j + 1]; q++) ok = ok && (used >> p->pred[q] & 1);
        if (!ok) continue;
        s = p->release[j];
        for (q = p->pred_off[j]; q < p->pred_off[j + 1]; q++) if (st[p->pred[q]] + p->dur[p->pred[q]] > s) s = st[p->pred[q]] + p->dur[p->pred[q]];
        while (moved && p->dur[j] > 0) {
            moved = 0;
            for (r = 0; r < k; r++) {
                if (!p->dem[j * k + r]) continue;
                for (x = 0; x < n; x++)
                    if ((used >> x & 1) && p->dem[x * k + r] && p->dur[x] > 0 && st[x] < s + p->dur[j] && s < st[x] + p->dur[x]) { s = st[x] + p->dur[x]; moved = 1; }
                for (x = 0; x < p->n_busy; x++)
                    if (p->busy_dem[x * k + r] && p->busy_start[x] < s + p->dur[j] && s < p->busy_end[x]) { s = p->busy_end[x]; moved = 1; }
            }
        }
        f = s + p->dur[j];
        if (f > p->deadline[j]) continue;
        st[j] = s;
        ubrute_best_rec(u, depth + 1, used | 1u << j, st, mk > f ? mk : f, best, best_mk);
    }
    return *best_mk;
}

static cc__time ubrute_rec(const uprob* u, int depth, unsigned used, cc__time* st, cc__time mk) {
    cc__time best[10], best_mk = CONCERTO__TIME_MAX;
    return ubrute_best_rec(u, depth, used, st, mk, best, &best_mk);
}

/* The serial schedule of jobs 0..n-1 (a topological order), each at its
   earliest start after its predecessors, its release, the jobs before it
   on its streams and the busy blocks; its makespan in *mk. 1 if it meets
   every deadline. */
static int userial(const uprob* u, cc__time* st, cc__time* mk) {
    int n = u->p.n, k = u->p.k, i, r, okd = 1;
    *mk = 0;
    for (i = 0; i < n; i++) st[i] = -1;
    for (i = 0; i < n; i++) {
        cc__time s = u->rel[i];
        int q, x, moved = 1;
        for (q = u->pred_off[i]; q < u->pred_off[i + 1]; q++) if (st[u->pred[q]] + u->dur[u->pred[q]] > s) s = st[u->pred[q]] + u->dur[u->pred[q]];
        while (moved) {
            moved = 0;
            for (r = 0; r < k; r++) {
                if (!u->dem[i * k + r]) continue;
                for (x = 0; x < i; x++)
                    if (u->dem[x * k + r] && st[x] < s + u->dur[i] && s < st[x] + u->dur[x]) { s = st[x] + u->dur[x]; moved = 1; }
                for (x = 0; x < u->p.n_busy; x++)
                    if (u->bd[x * k + r] && u->bs[x] < s + u->dur[i] && s < u->be[x]) { s = u->be[x]; moved = 1; }
            }
        }
        st[i] = s;
        if (s + u->dur[i] > u->dl[i]) okd = 0;
        if (s + u->dur[i] > *mk) *mk = s + u->dur[i];
    }
    return okd;
}

/* 1 if st meets the precedence edges, releases, deadlines, the streams
   (no two of their jobs overlap) and the busy blocks; else 0 and why. */
static int uvalid(const uprob* u, const cc__time* st, char* why, size_t n_why) {
    int n = u->p.n, k = u->p.k, i, x, r, q;
    for (i = 0; i < n; i++) {
        if (st[i] < u->rel[i] || st[i] + u->dur[i] > u->dl[i]) { snprintf(why, n_why, "job %d outside its release or deadline", i); return 0; }
        for (q = u->succ_off[i]; q < u->succ_off[i + 1]; q++)
            if (st[u->succ[q]] < st[i] + u->dur[i]) { snprintf(why, n_why, "edge %d -> %d", i, u->succ[q]); return 0; }
        for (r = 0; r < k; r++) {
            if (!u->dem[i * k + r]) continue;
            for (x = i + 1; x < n; x++)
                if (u->dem[x * k + r] && st[x] < st[i] + u->dur[i] && st[i] < st[x] + u->dur[x]) { snprintf(why, n_why, "jobs %d and %d overlap", i, x); return 0; }
            for (x = 0; x < u->p.n_busy; x++)
                if (u->bd[x * k + r] && u->bs[x] < st[i] + u->dur[i] && st[i] < u->be[x]) { snprintf(why, n_why, "job %d in busy block %d", i, x); return 0; }
        }
    }
    return 1;
}

static void test_unary_brute(void) {
    tu_rng rng = {4242};
    int trial, n_trials = 600, bad = 0, bad_lb = 0, n_inf = 0, n_busy = 0, n_big = 0;
    for (trial = 0; trial < n_trials; trial++) {
        uprob u;
        cc__time st[10], best[10], opt, slack;
        cc__bnb_result res;
        cc_result rc;
        int n = tu_randint(&rng, 3, 8), k = tu_randint(&rng, 1, 2), e[90], ne = 0, i, j, r;
        uprob_init(&u, n, k);
        for (i = 0; i < n; i++) {
            u.dur[i] = tu_randint(&rng, 1, trial % 3 == 0 ? 9 : 4);
            for (r = 0; r < k; r++) u.dem[i * k + r] = k == 1 || tu_randint(&rng, 0, 2) == r;   /* most on one stream */
        }
        for (i = 0; i < n; i++)   /* chains and crossings between the streams */
            for (j = i + 1; j < n; j++)
                if (tu_unit(&rng) < (trial % 2 ? 0.35 : 0.15)) { e[2 * ne] = i; e[2 * ne + 1] = j; ne++; }
        uprob_edges(&u, n, e, ne);
        if (trial % 4 >= 2) {   /* releases and busy blocks, as a window has them */
            for (i = 0; i < n; i++) u.rel[i] = tu_randint(&rng, 0, 6);
            u.p.n_busy = tu_randint(&rng, 1, 3);
            for (i = 0; i < u.p.n_busy; i++) {
                u.bs[i] = tu_randint(&rng, 0, 15);
                u.be[i] = u.bs[i] + tu_randint(&rng, 1, 5);
                for (r = 0; r < k; r++) u.bd[i * k + r] = tu_randint(&rng, 0, 1);
            }
            n_busy++;
        }
        /* deadlines: a feasible schedule's ends plus a little slack, or tighter (then perhaps infeasible) */
        for (i = 0; i < n; i++) u.dl[i] = CONCERTO__TIME_MAX;
        opt = ubrute_rec(&u, 0, 0, st, 0);
        if (trial % 3 == 1 && opt < CONCERTO__TIME_MAX) {
            int* order = e;
            slack = tu_randint(&rng, -1, 2);
            for (i = 0; i < n; i++) order[i] = i;
            for (i = 0; i < n; i++) if (tu_unit(&rng) < 0.5) u.dl[i] = opt - tu_randint(&rng, 0, 3) + slack;
            opt = ubrute_rec(&u, 0, 0, st, 0);
        }
        n_big += opt < CONCERTO__TIME_MAX && opt > 20;
        rc = cc__bnb_solve(ctx, &u.p, best, 0, 0, 0, &res);
        if (opt >= CONCERTO__TIME_MAX) {
            n_inf++;
            if (rc != CC_ERR_INFEASIBLE && bad++ < 3) NOTE("trial %d: infeasible by brute force, branch and bound says %d (makespan %lld)", trial, (int)rc, (long long)res.makespan);
            continue;
        }
        if ((rc != CC_OK || !res.proven || res.makespan != opt) && bad++ < 3)
            NOTE("trial %d (n=%d, k=%d): rc %d, makespan %lld proven %d, brute force %lld", trial, n, k, (int)rc, (long long)res.makespan, res.proven, (long long)opt);
        /* from a poor incumbent: the serial schedule of 0..n-1 where it meets the deadlines */
        {
            cc__time mk = 0;
            int okd = userial(&u, st, &mk);
            if (okd) {
                memcpy(best, st, sizeof st);
                rc = cc__bnb_solve(ctx, &u.p, best, 1, 0, 0, &res);
                if ((rc != CC_OK || !res.proven || res.makespan != opt) && bad++ < 3)
                    NOTE("trial %d (n=%d, k=%d, poor incumbent %lld): makespan %lld proven %d, brute force %lld", trial, n, k, (long long)mk,
                         (long long)res.makespan, res.proven, (long long)opt);
                rc = cc__bnb_solve(ctx, &u.p, best, 1, 1, 0, &res);   /* one node: the root bound alone */
                if (res.lower_bound > opt && bad_lb++ < 3) NOTE("trial %d: root bound %lld above the optimum %lld", trial, (long long)res.lower_bound, (long long)opt);
            }
        }
    }
    NOTE("%d unary-only problems of 3-8 jobs on 1-2 streams (%d with releases and busy blocks, %d infeasible, %d above 20)",
         n_trials, n_busy, n_inf, n_big);
    CHECK_INT(bad, 0, "branch and bound with the streams' rules proves the brute-force optimum (or infeasibility)");
    CHECK_INT(bad_lb, 0, "the root bound never exceeds the optimum");
}

/* A random problem of n jobs (n <= 8) on two streams: durations 1-6,
   releases 0-4, each job on one stream (both, one in five, where both),
   chains (each pair i < j an edge with probability 0.3), up to busy_max
   busy blocks. */
static void utwo_streams(tu_rng* rng, uprob* u, int n, int both, int busy_max) {
    int i, j, e[90], ne = 0;
    uprob_init(u, n, 2);
    for (i = 0; i < n; i++) {
        u->dur[i] = tu_randint(rng, 1, 6);
        u->dem[i * 2 + tu_randint(rng, 0, 1)] = 1;
        if (both && tu_unit(rng) < 0.2) u->dem[i * 2] = u->dem[i * 2 + 1] = 1;
        u->rel[i] = tu_randint(rng, 0, 4);
    }
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (tu_unit(rng) < 0.3) { e[2 * ne] = i; e[2 * ne + 1] = j; ne++; }
    uprob_edges(u, n, e, ne);
    u->p.n_busy = tu_randint(rng, 0, busy_max);
    for (i = 0; i < u->p.n_busy; i++) {
        u->bs[i] = tu_randint(rng, 0, 20);
        u->be[i] = u->bs[i] + tu_randint(rng, 1, 5);
        u->bd[i * 2 + tu_randint(rng, 0, 1)] = 1;
    }
}

/* The proof by shaving (cc__bnb_prove: the root's windows against the
   incumbent's makespan less a step, shaved at their latest starts, a
   window that empties proves the incumbent optimal) on 500 unary problems
   of 4-8 jobs on two streams with chains, releases, busy blocks and (in
   some) deadlines, against brute force:
   - from an optimal schedule it never moves the makespan and its bound
     never exceeds the optimum; it proves some where the root bound alone
     (one node of branch and bound) does not, or the shaving would not be
     seen working;
   - from the serial schedule in index order, where that ends above the
     optimum, it never claims a proof and its bound never exceeds the
     optimum (a completion ending at the optimum is within the target, so
     no window may empty). */
static void test_unary_prove(void) {
    tu_rng rng = {5151};
    int trial, n_trials = 500, n_run = 0, n_poor = 0, n_proven = 0, n_root = 0, n_more = 0, bad = 0;
    for (trial = 0; trial < n_trials; trial++) {
        uprob u;
        cc__time st[10], best[10], inc[10], opt = CONCERTO__TIME_MAX, mk0 = 0;
        cc__bnb_result res, root;
        int n = tu_randint(&rng, 4, 8), i, okd;
        utwo_streams(&rng, &u, n, 1, 3);
        okd = userial(&u, inc, &mk0);
        if (okd && trial % 2)   /* deadlines the serial schedule meets, some tight */
            for (i = 0; i < n; i++) if (tu_unit(&rng) < 0.4) u.dl[i] = inc[i] + u.dur[i] + tu_randint(&rng, 0, 2);
        ubrute_best_rec(&u, 0, 0, st, 0, best, &opt);
        if (opt >= CONCERTO__TIME_MAX) continue;
        n_run++;
        memcpy(st, best, sizeof best);
        if (cc__bnb_prove(ctx, &u.p, st, 0.0, &res) != CC_OK || res.makespan != opt || res.lower_bound > opt) {
            if (bad++ < 3) NOTE("trial %d (n=%d): from the optimum %lld: makespan %lld, bound %lld", trial, n, (long long)opt,
                                (long long)res.makespan, (long long)res.lower_bound);
            continue;
        }
        memcpy(st, best, sizeof best);
        if (cc__bnb_solve(ctx, &u.p, st, 1, 1, 0, &root) != CC_OK) { if (bad++ < 3) NOTE("trial %d: the root bound failed", trial); continue; }
        n_proven += res.proven;
        n_root += root.proven;
        n_more += res.proven && !root.proven;
        if (root.proven && !res.proven && bad++ < 3) NOTE("trial %d: the root bound proves, the proof does not", trial);
        if (okd && mk0 > opt) {
            n_poor++;
            memcpy(st, inc, sizeof inc);
            if (cc__bnb_prove(ctx, &u.p, st, 0.0, &res) != CC_OK || (res.proven && res.makespan > opt) || res.lower_bound > opt)
                if (bad++ < 3)
                    NOTE("trial %d (n=%d): from %lld (optimum %lld): makespan %lld, proven %d, bound %lld", trial, n, (long long)mk0,
                         (long long)opt, (long long)res.makespan, res.proven, (long long)res.lower_bound);
        }
    }
    NOTE("%d problems of 4-8 jobs on two streams: from the optimum %d proven (the root bound alone %d, %d by the shaving only); "
         "%d from a poorer schedule", n_run, n_proven, n_root, n_more, n_poor);
    CHECK_INT(bad, 0, "the proof never exceeds the brute-force optimum nor proves a poorer schedule");
    CHECK(n_more > 0 && n_poor > 100, "the shaving proves where the root bound alone does not (%d), on enough poorer schedules (%d)",
          n_more, n_poor);
}

/* The streams' snapshots (cc__bnb_unary_still): in shaving's probes a
   stream whose rules moved nothing on the same windows is skipped, its
   work counted. On 300 unary problems of 4-8 jobs on two streams, at the
   targets from the brute-force optimum down: the propagation and a
   shaving of both ends give the same windows, the same outcome and the
   same work with the snapshots as without them; after a fixpoint every
   stream's snapshot holds, and a run of the rules from there counts each
   stream's tasks twice and moves nothing. */
static void test_stream_snapshots(void) {
    tu_rng rng = {6262};
    int trial, n_cmp = 0, n_still = 0, n_empty = 0, bad = 0;
    for (trial = 0; trial < 300; trial++) {
        uprob u;
        cc__time st[10], best[10], opt = CONCERTO__TIME_MAX, T;
        int n = tu_randint(&rng, 4, 8);
        utwo_streams(&rng, &u, n, 0, 2);
        ubrute_best_rec(&u, 0, 0, st, 0, best, &opt);
        if (opt >= CONCERTO__TIME_MAX) continue;
        for (T = opt; T >= opt - 3 && T > 0; T--) {
            cc__bnb b1, b2;
            int ok1, ok2, s, ch = 0;
            if (!ubnb_init(&b1, &u.p, T) || !ubnb_init(&b2, &u.p, T)) { bad++; cc__bnb_free_all(&b1); cc__bnb_free_all(&b2); continue; }
            b2.sk_on = 0;
            if (!cc__bnb_snap_alloc(&b1)) { bad++; cc__bnb_free_all(&b1); cc__bnb_free_all(&b2); continue; }
            b1.probing = 1;   /* (as in shaving's probes, where the snapshots are taken) */
            ok1 = cc__bnb_timetable(&b1);
            b1.probing = 0;
            ok2 = cc__bnb_timetable(&b2);
            if (ok1 && b1.n_str > 0) {   /* a fixpoint (or the rounds' limit): the snapshots */
                int64_t w0 = b1.work, want = 0;
                for (s = 0; s < b1.n_str; s++) {
                    int c;
                    if (cc__bnb_unary_still(&b1, s, &c)) { n_still++; want += 2 * c; }
                    else want = -1000000;
                }
                if (want >= 0) {
                    cc__time h0[10], l0[10];
                    memcpy(h0, b1.h, (size_t)n * sizeof *b1.h);
                    memcpy(l0, b1.lt, (size_t)n * sizeof *b1.lt);
                    b1.probing = 1;
                    ok1 = cc__bnb_unary(&b1, &ch);
                    b1.probing = 0;
                    if (!ok1 || ch || b1.work - w0 != want || memcmp(h0, b1.h, (size_t)n * sizeof *b1.h) ||
                        memcmp(l0, b1.lt, (size_t)n * sizeof *b1.lt))
                        if (bad++ < 3) NOTE("trial %d, target %lld: a run of the rules after the fixpoint moved or miscounted", trial, (long long)T);
                }
                b1.work = w0;
            }
            if (ok1 && ok2) {
                b1.shave = b2.shave = 1;
                ok1 = cc__bnb_shave(&b1);
                ok2 = cc__bnb_shave(&b2);
            }
            n_cmp++;
            n_empty += !ok1;
            if ((ok1 != ok2 || b1.work != b2.work ||
                 (ok1 && (memcmp(b1.h, b2.h, (size_t)n * sizeof *b1.h) || memcmp(b1.lt, b2.lt, (size_t)n * sizeof *b1.lt)))) && bad++ < 3)
                NOTE("trial %d, target %lld: with snapshots %d (work %lld), without %d (work %lld)", trial, (long long)T, ok1,
                     (long long)b1.work, ok2, (long long)b2.work);
            cc__bnb_free_all(&b1);
            cc__bnb_free_all(&b2);
        }
    }
    NOTE("%d propagations and shavings compared (%d emptied a window), %d streams' snapshots held after a fixpoint", n_cmp, n_empty, n_still);
    CHECK_INT(bad, 0, "the snapshots change neither the windows, nor the outcome, nor the work");
    CHECK(n_still > 100 && n_empty > 10 && n_cmp - n_empty > 10, "snapshots held (%d), windows emptied (%d) and not (%d)", n_still,
          n_empty, n_cmp - n_empty);
}

/* A random problem of an odd-even window's shape: 5-8 jobs on one or two
   streams, edges e[0 .. 2 *ne) (from < to, so index order is
   topological), releases, up to 3 busy blocks; inc its serial schedule in
   index order, ending at *mk0. 0 when that schedule misses a deadline. */
static int urandom_window(tu_rng* rng, uprob* u, int* e, int* ne, cc__time* inc, cc__time* mk0) {
    int n = tu_randint(rng, 5, 8), k = tu_randint(rng, 1, 2), i, j, r;
    uprob_init(u, n, k);
    *ne = 0;
    for (i = 0; i < n; i++) {
        u->dur[i] = tu_randint(rng, 1, 6);
        u->rel[i] = tu_randint(rng, 0, 5);
        for (r = 0; r < k; r++) u->dem[i * k + r] = k == 1 || tu_randint(rng, 0, 2) == r;
    }
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (tu_unit(rng) < 0.25) { e[2 * *ne] = i; e[2 * *ne + 1] = j; (*ne)++; }
    uprob_edges(u, n, e, *ne);
    u->p.n_busy = tu_randint(rng, 0, 3);
    for (i = 0; i < u->p.n_busy; i++) {
        u->bs[i] = tu_randint(rng, 0, 20);
        u->be[i] = u->bs[i] + tu_randint(rng, 1, 5);
        for (r = 0; r < k; r++) u->bd[i * k + r] = tu_randint(rng, 0, 1);
    }
    return userial(u, inc, mk0);
}

/* The fixed 8-job window problem of the tests that refuse allocations:
   two chains over two streams, releases, a busy block; inc its serial
   schedule in index order. */
static void ufixed_window(uprob* u, cc__time* inc, cc__time* mk0) {
    static const int e[] = {0, 2, 1, 3, 2, 4, 3, 5, 4, 6, 5, 7};
    int i;
    uprob_init(u, 8, 2);
    for (i = 0; i < 8; i++) { u->dur[i] = 1 + (5 * i) % 4; u->dem[i * 2 + i % 2] = 1; u->rel[i] = i % 3; }
    uprob_edges(u, 8, e, 6);
    u->p.n_busy = 1; u->bs[0] = 3; u->be[0] = 5; u->bd[0] = 1;
    userial(u, inc, mk0);
}

/* The inner search of a large odd-even window (>>oddeven, cc__oe_inner):
   odd-even windows of its own over a problem with releases, deadlines and
   busy blocks, as a window has them, which its windows must carry. On 400
   unary problems of 5-8 jobs with chains, releases, busy blocks and (in
   some) deadlines, from the serial schedule of 0..n-1 where it meets the
   deadlines: inner windows of 2 to 6 jobs (blocks 1 to 3) give a schedule
   that meets every constraint (checked here), is never later than the
   incumbent and never below the brute-force optimum; blocks up to 4 (a
   window of 8 holds the whole problem) are no later than the optimum of
   the jobs started no earlier than the incumbent's first start (brute
   force with the releases raised to it: a window never moves a job before
   its own first start, while the justification after a round may). Some problems
   must improve, or the test would not see the search work. */
static void test_oe_inner(void) {
    tu_rng rng = {9090};
    int trial, n_trials = 400, n_run = 0, bad_valid = 0, bad_worse = 0, bad_below = 0, bad_opt = 0, n_improved = 0, n_dl = 0, n_opt = 0;
    for (trial = 0; trial < n_trials; trial++) {
        uprob u;
        cc__time st[10], inc[10], opt, opt0, mk0 = 0;
        int e[90], ne, i, n, v;
        if (!urandom_window(&rng, &u, e, &ne, inc, &mk0)) continue;
        n = u.p.n;
        if (trial % 2) {   /* deadlines the incumbent meets, some tight */
            for (i = 0; i < n; i++) if (tu_unit(&rng) < 0.5) u.dl[i] = inc[i] + u.dur[i] + tu_randint(&rng, 0, 2);
            n_dl++;
        }
        opt = ubrute_rec(&u, 0, 0, st, 0);
        {   /* windows never start before the incumbent's first start t0:
               the optimum with every release raised to t0 */
            uprob u0 = u;
            cc__time t0 = inc[0];
            for (i = 1; i < n; i++) if (inc[i] < t0) t0 = inc[i];
            uprob_edges(&u0, n, e, ne);
            u0.p.dur = u0.dur; u0.p.dem = u0.dem; u0.p.cap = u0.cap; u0.p.release = u0.rel; u0.p.deadline = u0.dl;
            u0.p.busy_start = u0.bs; u0.p.busy_end = u0.be; u0.p.busy_dem = u0.bd;
            for (i = 0; i < n; i++) if (u0.rel[i] < t0) u0.rel[i] = t0;
            opt0 = ubrute_rec(&u0, 0, 0, st, 0);
        }
        n_run++;
        for (v = 0; v < 2; v++) {
            cc__oe o;
            cc__exact_cfg cfg;
            cc__time mk;
            char why[120];
            memset(&o, 0, sizeof o);
            memset(&cfg, 0, sizeof cfg);
            cfg.which = CC_EXACT_BNB; cfg.nodes = 100000;
            o.ctx = ctx; o.cfg = &cfg;
            memcpy(st, inc, sizeof inc);
            if (cc__oe_inner(&o, &u.p, st, 0, 1, v ? 4 : 3, 0) != CC_OK) { if (bad_valid++ < 3) NOTE("trial %d: %s", trial, cc_last_error(ctx)); continue; }
            mk = cc__makespan(&u.p, st);
            if (!uvalid(&u, st, why, sizeof why)) { if (bad_valid++ < 3) NOTE("trial %d, blocks to %d: %s", trial, v ? 4 : 3, why); continue; }
            if (mk > mk0 && bad_worse++ < 3) NOTE("trial %d: %lld from the incumbent's %lld", trial, (long long)mk, (long long)mk0);
            if (mk < opt && bad_below++ < 3) NOTE("trial %d: %lld below the brute-force optimum %lld", trial, (long long)mk, (long long)opt);
            if (v && mk > opt0 && bad_opt++ < 3) NOTE("trial %d (n=%d): %lld, brute force from t0 %lld", trial, n, (long long)mk, (long long)opt0);
            if (v) n_opt += mk == opt;
            if (!v && mk < mk0) n_improved++;
        }
    }
    NOTE("%d problems of 5-8 jobs (%d with deadlines), %d improved by windows of at most 6 jobs, %d at the optimum with windows of 8",
         n_run, n_dl, n_improved, n_opt);
    {   /* every allocation refused in turn: out of memory or the same schedule, nothing leaked */
        uprob u;
        cc__time inc[10], ref[10], st[10], mk0;
        int bad_oom = 0, n_oom = 0;
        long k, n_allocs = 0;
        ufixed_window(&u, inc, &mk0);
        for (k = 0; k <= n_allocs + 1; k++) {
            tu_alloc a;
            cc_context_desc cd = {0};
            cc_context* c2 = NULL;
            cc__oe o;
            cc__exact_cfg cfg;
            cc_result rc;
            memset(&a, 0, sizeof a);
            a.fail_at = k;
            cd.allocator = tu_allocator(&a);
            if (cc_context_create(&cd, &c2) != CC_OK) continue;
            c2->bnb_shave_depth = TEST_SHAVE_DEPTH;
            memset(&o, 0, sizeof o);
            memset(&cfg, 0, sizeof cfg);
            cfg.which = CC_EXACT_BNB; cfg.nodes = 100000;
            o.ctx = c2; o.cfg = &cfg;
            memcpy(st, inc, sizeof inc);
            rc = cc__oe_inner(&o, &u.p, st, 0, 1, 3, 0);
            cc_context_destroy(c2);
            if (k == 0) { n_allocs = a.n_calls; memcpy(ref, st, sizeof st); if (!CHECK(rc == CC_OK, "no refusal: the inner search runs (%d)", (int)rc)) break; continue; }
            n_oom += rc == CC_ERR_OUT_OF_MEMORY;
            if ((rc != CC_OK && rc != CC_ERR_OUT_OF_MEMORY) || (rc == CC_OK && memcmp(st, ref, sizeof st)) || a.live || a.bad_frees) {
                if (bad_oom++ < 3) NOTE("refusal %ld of %ld: rc %d, %ld blocks live, %ld bad frees", k, n_allocs, (int)rc, a.live, a.bad_frees);
            }
        }
        CHECK_INT(bad_oom, 0, "each of the inner search's %ld allocations refused: out of memory or the same schedule, nothing leaked", n_allocs);
        CHECK(n_oom > 0, "some refusals reach the caller as out of memory (%d)", n_oom);
    }
    CHECK(n_run >= 300, "most problems have a serial schedule that meets the deadlines (%d)", n_run);
    CHECK_INT(bad_valid, 0, "the inner search meets precedence, releases, deadlines, streams and busy blocks");
    CHECK_INT(bad_worse, 0, "the inner search is never later than its incumbent");
    CHECK_INT(bad_below, 0, "the inner search is never below the brute-force optimum");
    CHECK_INT(bad_opt, 0, "inner windows that hold the whole problem are no later than the optimum from the first start");
    CHECK(n_improved > 0, "the inner search improves some incumbents (%d)", n_improved);
}

/* The parallel SGS of the test, written plainly: at each decision point
   the jobs whose predecessors have ended and whose releases have passed
   when it is reached, by priority, each started where it fits for its
   whole duration (usage
   summed over the placed jobs and busy blocks at every point where it
   could change), a deadline missed by a started job failing the schedule;
   the next point is the same one where a zero-duration job started (its
   successors may start there too), else the earliest later release of a
   job whose predecessors are placed, or start or end of a placed
   interval. Returns the makespan, or -1. */
static int pg_uses(const cc__prob* p, int j) {
    int r;
    for (r = 0; r < p->k; r++) if (p->dem[(size_t)j * p->k + r]) return p->dur[j] > 0;
    return 0;
}
static int pg_fits(const cc__prob* p, const cc__time* st, const int* placed, int j, cc__time t) {
    int q, b, r, c;
    cc__time x;
    if (!pg_uses(p, j)) return 1;
    for (c = -1; c < p->n + p->n_busy; c++) {   /* the points: t, then every interval's start inside [t, t + d) */
        if (c < 0) x = t;
        else if (c < p->n) { if (!placed[c] || !pg_uses(p, c)) continue; x = st[c]; }
        else x = p->busy_start[c - p->n];
        if (x < t || x >= t + p->dur[j]) continue;
        for (r = 0; r < p->k; r++) {
            int64_t use = p->dem[(size_t)j * p->k + r];
            if (!use) continue;
            for (q = 0; q < p->n; q++)
                if (placed[q] && pg_uses(p, q) && st[q] <= x && x < st[q] + p->dur[q]) use += p->dem[(size_t)q * p->k + r];
            for (b = 0; b < p->n_busy; b++)
                if (p->busy_start[b] <= x && x < p->busy_end[b]) use += p->busy_dem[(size_t)b * p->k + r];
            if (use > p->cap[r]) return 0;
        }
    }
    return 1;
}
/* 1 when job i is unplaced and its predecessors are all placed; *est its
   earliest start then (release, predecessors' ends) */
static int pg_ready(const cc__prob* p, const cc__time* st, const int* placed, int i, cc__time* est) {
    int e;
    *est = p->release ? p->release[i] : 0;
    if (placed[i]) return 0;
    for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
        int q = p->pred[e];
        if (!placed[q]) return 0;
        if (st[q] + p->dur[q] > *est) *est = st[q] + p->dur[q];
    }
    return 1;
}
static cc__time pg_ref(const cc__prob* p, const int* pos, cc__time* st) {
    int placed[16], done = 0, i, b, best;
    cc__time t = -1, mk = 0;
    memset(placed, 0, sizeof placed);
    for (;;) {
        int zero = 0, ready_any = 0, elig[16], tried[16];
        cc__time next = CONCERTO__TIME_MAX;
        memset(elig, 0, sizeof elig);
        memset(tried, 0, sizeof tried);
        for (i = 0; i < p->n; i++) {   /* the eligible when the point is reached */
            cc__time est;
            elig[i] = pg_ready(p, st, placed, i, &est) && est <= t;
        }
        for (;;) {   /* those, best priority first */
            best = -1;
            for (i = 0; i < p->n; i++)
                if (elig[i] && !tried[i] && (best < 0 || pos[i] < pos[best])) best = i;
            if (best < 0) break;
            tried[best] = 1;
            if (!pg_fits(p, st, placed, best, t)) continue;
            if (p->deadline && t + p->dur[best] > p->deadline[best]) return -1;
            st[best] = t; placed[best] = 1; done++;
            if (t + p->dur[best] > mk) mk = t + p->dur[best];
            if (p->dur[best] == 0) zero = 1;
        }
        if (done == p->n) return mk;
        if (zero) continue;
        for (i = 0; i < p->n; i++) {
            cc__time est;
            int ok = pg_ready(p, st, placed, i, &est);
            ready_any |= ok;
            if (ok && est > t && est < next) next = est;
            if (placed[i] && pg_uses(p, i)) {
                if (st[i] > t && st[i] < next) next = st[i];
                if (st[i] + p->dur[i] > t && st[i] + p->dur[i] < next) next = st[i] + p->dur[i];
            }
        }
        for (b = 0; b < p->n_busy; b++) {
            if (p->busy_start[b] > t && p->busy_start[b] < next) next = p->busy_start[b];
            if (p->busy_end[b] > t && p->busy_end[b] < next) next = p->busy_end[b];
        }
        if (!ready_any || next == CONCERTO__TIME_MAX) return -1;
        t = next;
    }
}

/* cc__psgs (the parallel SGS, its list of ready jobs kept as they become
   ready) gives pg_ref's starts and result on 3,000 random problems of up
   to 10 jobs on two resources, unary or of capacity 2, with chains,
   releases, busy blocks, zero durations, some deadlines, and random
   priorities. */
static void test_psgs_ref(void) {
    tu_rng rng = {9191};
    int trial, bad = 0, n_ok = 0, n_late = 0;
    cc__profile pr;
    memset(&pr, 0, sizeof pr);
    for (trial = 0; trial < 3000; trial++) {
        uprob u;
        int n = tu_randint(&rng, 1, 10), i, pos[10], scr[30];
        cc__time s1[10], s2[10], m1, m2;
        utwo_streams(&rng, &u, n > 8 ? 8 : n, 1, 3);
        if (n > 8) {   /* two more jobs, unordered */
            u.p.n = n;
            for (i = 8; i < n; i++) { u.dur[i] = tu_randint(&rng, 0, 4); u.dem[i * 2 + tu_randint(&rng, 0, 1)] = 1; u.rel[i] = tu_randint(&rng, 0, 6); }
            for (i = 9; i <= n; i++) { u.succ_off[i] = u.succ_off[8]; u.pred_off[i] = u.pred_off[8]; }
        }
        if (trial % 3 == 1) {   /* capacity 2, demands up to 2 */
            u.cap[0] = u.cap[1] = 2;
            for (i = 0; i < 2 * n; i++) if (u.dem[i] && tu_unit(&rng) < 0.4) u.dem[i] = 2;
            for (i = 0; i < 2 * u.p.n_busy; i++) if (u.bd[i] && tu_unit(&rng) < 0.5) u.bd[i] = 2;
        }
        for (i = 0; i < n; i++) {
            if (tu_unit(&rng) < 0.15) u.dur[i] = 0;
            if (trial % 2 && tu_unit(&rng) < 0.3) u.dl[i] = u.rel[i] + u.dur[i] + tu_randint(&rng, 0, 12);
            pos[i] = i;
        }
        for (i = n - 1; i > 0; i--) { int j = tu_randint(&rng, 0, i), x = pos[i]; pos[i] = pos[j]; pos[j] = x; }
        m1 = cc__psgs(ctx, &u.p, pos, s1, &pr, scr);
        m2 = pg_ref(&u.p, pos, s2);
        if (m1 != m2 || (m1 >= 0 && memcmp(s1, s2, (size_t)n * sizeof *s1))) {
            if (bad++ < 3) {
                NOTE("trial %d (n=%d): cc__psgs %lld, the reference %lld", trial, n, (long long)m1, (long long)m2);
                for (i = 0; i < n; i++) NOTE("  job %d: %lld / %lld", i, (long long)s1[i], (long long)s2[i]);
            }
        }
        n_ok += m1 >= 0;
        n_late += m1 == -1;
    }
    cc__profile_free(ctx, &pr);
    NOTE("%d schedules, %d failing a deadline", n_ok, n_late);
    CHECK_INT(bad, 0, "the parallel SGS gives the plain reference's starts and result");
    CHECK(n_ok > 1000 && n_late > 100, "both outcomes are seen (%d schedules, %d failing a deadline)", n_ok, n_late);
}

/* A large window's list schedules (cc__oe_window_lists): every rule and
   sample from the placement, and each rule's list by the parallel SGS
   too, the shortest kept where it is earlier and
   meets every constraint. On random problems of the inner search's shape
   (streams, chains, releases, busy blocks, deadlines): valid, never later
   than the placement, never below the brute-force optimum, the same on a
   second call; by hand: the rule of the longest path to the end finds the
   optimum an index-order placement misses, and a deadline that every rule
   breaks leaves the placement as it was. */
static void test_oe_window_lists(void) {
    tu_rng rng = {4242};
    int trial, n_run = 0, bad_run = 0, bad_valid = 0, bad_worse = 0, bad_below = 0, bad_det = 0, n_improved = 0, n_opt = 0;
    int bad_met = 0, n_none = 0;
    for (trial = 0; trial < 400; trial++) {
        uprob u;
        cc__time st[10], st2[10], inc[10], opt, mk0 = 0, mk;
        int e[90], ne, i, n, met = -1, met2 = -1;
        char why[120];
        if (!urandom_window(&rng, &u, e, &ne, inc, &mk0)) continue;
        n = u.p.n;
        if (trial % 2)   /* deadlines the placement meets, some tight */
            for (i = 0; i < n; i++) if (tu_unit(&rng) < 0.5) u.dl[i] = inc[i] + u.dur[i] + tu_randint(&rng, 0, 2);
        opt = ubrute_rec(&u, 0, 0, st, 0);
        n_run++;
        memcpy(st, inc, sizeof inc);
        memcpy(st2, inc, sizeof inc);
        if (!cc__oe_window_lists(ctx, &u.p, st, &met) || !cc__oe_window_lists(ctx, &u.p, st2, &met2)) { bad_run++; continue; }
        mk = cc__makespan(&u.p, st);
        /* met counts the 4 x 10 schedules (each rule's serial list, 8
           samples around it, and its parallel schedule) that meet every
           constraint: all of them without deadlines (releases and busy
           blocks a greedy placement always meets), some where the placement
           improved, none leaves it */
        if ((met < 0 || met > 40 || met != met2 || (!(trial % 2) && met != 40) || (mk < mk0 && met == 0) ||
             (met == 0 && memcmp(st, inc, sizeof inc))) && bad_met++ < 3)
            NOTE("trial %d: %d (then %d) of 40 list schedules met the constraints, makespan %lld from %lld", trial, met, met2,
                 (long long)mk, (long long)mk0);
        n_none += met == 0;
        if (!uvalid(&u, st, why, sizeof why)) { if (bad_valid++ < 3) NOTE("trial %d: %s", trial, why); continue; }
        if (mk > mk0 && bad_worse++ < 3) NOTE("trial %d: %lld from the placement's %lld", trial, (long long)mk, (long long)mk0);
        if (mk < opt && bad_below++ < 3) NOTE("trial %d: %lld below the brute-force optimum %lld", trial, (long long)mk, (long long)opt);
        if (memcmp(st, st2, sizeof st) && bad_det++ < 3) NOTE("trial %d: a second call placed the jobs otherwise", trial);
        n_improved += mk < mk0;
        n_opt += mk == opt;
    }
    NOTE("%d problems of 5-8 jobs: %d improved, %d at the brute-force optimum", n_run, n_improved, n_opt);
    CHECK(n_run >= 300, "most problems have a serial schedule that meets the deadlines (%d)", n_run);
    CHECK_INT(bad_run, 0, "the list schedules run");
    CHECK_INT(bad_valid, 0, "the list schedules meet precedence, releases, deadlines, streams and busy blocks");
    CHECK_INT(bad_worse, 0, "never later than the placement");
    CHECK_INT(bad_below, 0, "never below the brute-force optimum");
    CHECK_INT(bad_det, 0, "the same placement on a second call");
    CHECK_INT(bad_met, 0, "the count of schedules that met every constraint: all 40 without deadlines, some where one was taken");
    NOTE("%d problems with deadlines that no list schedule met", n_none);
    CHECK(n_improved > 0, "some placements improve (%d)", n_improved);
    {   /* by hand: stream 0 runs job 0 (1 tick) and job 1 (1 tick), job 1
           precedes job 2 (5 ticks on stream 1). In index order 0, 1, 2 the
           placement ends at 7; the longest path to the end puts job 1
           first: 1 at 0, 2 at 1 (ends at 6, the chain's length, so
           optimal), 0 at 1. With job 0 due by 1 every rule's schedule is
           late, and the placement stays. */
        uprob u;
        cc__time st[3], mk0;
        int e[] = {1, 2}, pass, met = -1;   /* the edge 1 -> 2 */
        char why[120];
        for (pass = 0; pass < 2; pass++) {
            uprob_init(&u, 3, 2);
            u.dur[0] = 1; u.dur[1] = 1; u.dur[2] = 5;
            u.dem[0 * 2 + 0] = 1; u.dem[1 * 2 + 0] = 1; u.dem[2 * 2 + 1] = 1;
            uprob_edges(&u, 3, e, 1);
            if (pass) u.dl[0] = 1;
            userial(&u, st, &mk0);
            CHECK(mk0 == 7 && st[0] == 0 && st[1] == 1 && st[2] == 2, "the index-order placement: 0, 1, 2, ending at 7");
            CHECK(cc__oe_window_lists(ctx, &u.p, st, &met), "the list schedules run");
            why[0] = 0;
            if (!uvalid(&u, st, why, sizeof why)) CHECK(0, "the list schedules' placement is valid: %s", why);
            if (!pass) CHECK(met == 40, "without deadlines every one of the 40 list schedules meets the constraints (%d)", met);
            else CHECK(met < 40, "job 0 due by 1: some list schedules miss it (%d of 40 met it)", met);
            if (!pass) CHECK(cc__makespan(&u.p, st) == 6 && st[1] == 0 && st[2] == 1 && st[0] == 1,
                             "the longest-path rule: 1 at 0, 2 at 1, 0 at 1, ending at 6 (got %lld %lld %lld)",
                             (long long)st[0], (long long)st[1], (long long)st[2]);
            else CHECK(st[0] == 0 && st[1] == 1 && st[2] == 2, "job 0 due by 1: the placement stays (got %lld %lld %lld)",
                       (long long)st[0], (long long)st[1], (long long)st[2]);
        }
    }
    {   /* every allocation refused in turn: out of memory or the same placement, nothing leaked */
        uprob u;
        cc__time inc[10], ref[10], st[10], mk0;
        int bad_oom = 0, n_oom = 0, ok, met;
        long kk, n_allocs = 0;
        char why[120];
        ufixed_window(&u, inc, &mk0);
        for (kk = 0; kk <= n_allocs + 1; kk++) {
            tu_alloc a;
            cc_context_desc cd = {0};
            cc_context* c2 = NULL;
            memset(&a, 0, sizeof a);
            a.fail_at = kk;
            cd.allocator = tu_allocator(&a);
            if (cc_context_create(&cd, &c2) != CC_OK) continue;
            c2->bnb_shave_depth = TEST_SHAVE_DEPTH;
            memcpy(st, inc, sizeof inc);
            ok = cc__oe_window_lists(c2, &u.p, st, &met);
            cc_context_destroy(c2);
            if (kk == 0) { n_allocs = a.n_calls; memcpy(ref, st, sizeof st); if (!CHECK(ok, "no refusal: the list schedules run")) break; continue; }
            n_oom += !ok;
            /* (a refusal midway may leave a shorter schedule found before it: valid, no later) */
            if ((ok && memcmp(st, ref, sizeof st)) || (!ok && (!uvalid(&u, st, why, sizeof why) || cc__makespan(&u.p, st) > mk0)) ||
                a.live || a.bad_frees)
                if (bad_oom++ < 3) NOTE("refusal %ld of %ld: ok %d, %ld blocks live, %ld bad frees", kk, n_allocs, ok, a.live, a.bad_frees);
        }
        CHECK_INT(bad_oom, 0, "each of the list schedules' %ld allocations refused: out of memory (a valid placement, no later) or the same placement, nothing leaked", n_allocs);
        CHECK(n_oom > 0, "some refusals report out of memory (%d)", n_oom);
    }
}

/* The node budget counts the propagation's work where it runs (some
   resource cumulative): the search stops before as many nodes, the same
   way every run; unary-only problems above CONCERTO__BNB_UNARY_NODES_N
   jobs, whose nodes do not propagate, count nodes alone. */
static void test_work_budget(void) {
    tu_rng rng = {777};
    tu_gen gen;
    int kind;
    gen.n_min = 30; gen.n_max = 30;
    gen.k_min = 2; gen.k_max = 2;
    gen.cap_max = 4;
    gen.dur_max = 9;
    gen.unit_us = 1.0;
    gen.p_edge_max = 0.05;
    gen.p_no_stream = 0.0;
    gen.streams = 0;
    for (kind = 0; kind < 3; kind++) {
        long long nodes[2] = {0, 0};
        double mk[2] = {0, 0};
        int v, stopped = 1, i, r, budget = kind == 0 ? 300 : 10;
        const char* name = kind == 0 ? "cumulative" : kind == 1 ? "unary, 30 jobs" : "unary, 40 jobs";
        tu_inst* in;
        cc_graph* g = NULL;
        gen.n_min = gen.n_max = kind == 2 ? 40 : 30;   /* 40 > CONCERTO__BNB_UNARY_NODES_N: nodes do not propagate */
        in = tu_random_inst(&rng, &gen);
        if (kind == 0) {   /* cumulative: capacity 4, demands 1..3 */
            for (r = 0; r < in->k; r++) {
                in->cap[r] = 4;
                for (i = 0; i < in->n; i++) in->dem[i * in->k + r] = 1 + (i + r) % 3;
            }
        } else {   /* unary: capacity 1, demands 0 or 1 */
            for (r = 0; r < in->k; r++) {
                in->cap[r] = 1;
                for (i = 0; i < in->n; i++) in->dem[i * in->k + r] = (i + r) % 2;
            }
        }
        CHECK_RES(ctx, tu_build_graph(ctx, in, &g), CC_OK, "graph");
        for (v = 0; v < 2; v++) {
            cc_sched_desc d = tu_sched_desc();
            cc_schedule s;
            cc_sched_stats s_st;
            char msg[300];
            memset(&s, 0, sizeof s);
            d.method = CC_SCHED_BNB;
            d.tuning.priority = CC_PRIO_PROGRAM_ORDER;
            d.tuning.improve_passes = -1;
            d.tuning.bnb_nodes = budget;
            CHECK_RES(ctx, cc_sched_solve_stats(ctx, g, &d, &s, &s_st), CC_OK, "solve");
            CHECK(tu_check(in, s.start_us, &mk[v], msg, sizeof msg), "valid: %s", msg);
            nodes[v] = (long long)s_st.n_nodes;
            stopped = stopped && !s.proven_optimal;
            cc_schedule_release(ctx, &s);
        }
        CHECK(nodes[0] == nodes[1] && mk[0] == mk[1], "%s: the same search twice (%lld nodes, makespan %g)", name, nodes[0], mk[0]);
        if (!stopped) NOTE("%s: proven within the budget; nothing to compare", name);
        else if (kind < 2) CHECK(nodes[0] < budget, "%s: the budget of %d ends after %lld nodes (their propagation counts)", name, budget, nodes[0]);
        else CHECK(nodes[0] == budget, "%s: the budget of %d is %d nodes (got %lld)", name, budget, budget, nodes[0]);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
}

/* Branch and bound whose nodes propagate on unary-only problems above
   CONCERTO__BNB_UNARY_NODES_N jobs (cc__bnb_run's unary_nodes: the inner
   windows of a large window whose list schedules all miss a deadline).
   Two-machine flow shops of 20 jobs (40 ops: job i's first op 2i on stream
   0, then its second 2i + 1 on stream 1), from the serial schedule in index
   order: every schedule is valid (the test's check), never below Johnson's
   optimum, and Johnson's optimum where proven; with a budget of 10 the
   search with the threshold raised to 64 stops after fewer nodes than at
   the default (its nodes' propagation counts), the same way twice. */
typedef struct fshop {
    cc__prob p;
    cc__time dur[40];
    int32_t dem[80], cap[2];
    int succ_off[41], succ[20], pred_off[41], pred[20];
} fshop;

static void fshop_init(fshop* f, tu_rng* rng) {
    int i;
    memset(f, 0, sizeof *f);
    f->cap[0] = f->cap[1] = 1;
    for (i = 0; i < 20; i++) {
        f->dur[2 * i] = tu_randint(rng, 1, 20);
        f->dur[2 * i + 1] = tu_randint(rng, 1, 20);
        f->dem[4 * i] = 1;       /* op 2i: stream 0 */
        f->dem[4 * i + 3] = 1;   /* op 2i + 1: stream 1 */
    }
    for (i = 0; i <= 40; i++) {
        f->succ_off[i] = (i + 1) / 2;   /* op 2i: one successor (2i + 1) */
        f->pred_off[i] = i / 2;         /* op 2i + 1: one predecessor (2i) */
    }
    for (i = 0; i < 20; i++) { f->succ[i] = 2 * i + 1; f->pred[i] = 2 * i; }
    f->p.n = 40; f->p.k = 2; f->p.dur = f->dur; f->p.dem = f->dem; f->p.cap = f->cap;
    f->p.succ_off = f->succ_off; f->p.succ = f->succ; f->p.pred_off = f->pred_off; f->p.pred = f->pred;
    f->p.grain = 1;
}

/* Johnson's rule: the jobs with a <= b by a ascending, then the others by b
   descending; the makespan of that sequence on both machines. */
static cc__time fshop_johnson(const fshop* f) {
    int ord[20], i, j, m = 0;
    cc__time e0 = 0, e1 = 0;
    for (i = 0; i < 20; i++) ord[i] = i;
    for (i = 0; i < 20; i++)
        for (j = i + 1; j < 20; j++) {
            cc__time ai = f->dur[2 * ord[i]], bi = f->dur[2 * ord[i] + 1], aj = f->dur[2 * ord[j]], bj = f->dur[2 * ord[j] + 1];
            int gi = ai <= bi, gj = aj <= bj, swap;
            swap = gi != gj ? gj : gi ? aj < ai : bj > bi;
            if (swap) { m = ord[i]; ord[i] = ord[j]; ord[j] = m; }
        }
    for (i = 0; i < 20; i++) {
        e0 += f->dur[2 * ord[i]];
        e1 = (e1 > e0 ? e1 : e0) + f->dur[2 * ord[i] + 1];
    }
    return e1;
}

static int fshop_valid(const fshop* f, const cc__time* st) {
    int i, j;
    for (i = 0; i < 40; i++) if (st[i] < 0) return 0;
    for (i = 0; i < 20; i++) if (st[2 * i + 1] < st[2 * i] + f->dur[2 * i]) return 0;
    for (i = 0; i < 40; i++)
        for (j = i + 1; j < 40; j++)
            if (i % 2 == j % 2 && st[i] < st[j] + f->dur[j] && st[j] < st[i] + f->dur[i]) return 0;
    return 1;
}

static void test_unary_nodes(void) {
    tu_rng rng = {31337};
    int trial, i, bad_valid = 0, bad_below = 0, bad_proof = 0, n_proven = 0, n_run = 0;
    for (trial = 0; trial < 60; trial++) {
        fshop f;
        cc__time inc[40], st[40], opt, mk;
        int list[40];
        cc__profile pr;
        cc__bnb_result res;
        fshop_init(&f, &rng);
        opt = fshop_johnson(&f);
        for (i = 0; i < 40; i++) list[i] = i;
        memset(&pr, 0, sizeof pr);
        mk = cc__ssgs(ctx, &f.p, list, inc, &pr);
        cc__profile_free(ctx, &pr);
        if (mk <= 0) { if (bad_valid++ < 3) NOTE("trial %d: no serial schedule in index order (%lld)", trial, (long long)mk); continue; }
        memcpy(st, inc, sizeof inc);
        if (cc__bnb_run(ctx, &f.p, st, 1, 20000, 0, 64, 0, &res) != CC_OK) { if (bad_valid++ < 3) NOTE("trial %d: %s", trial, cc_last_error(ctx)); continue; }
        n_run++;
        mk = cc__makespan(&f.p, st);
        if (!fshop_valid(&f, st)) { if (bad_valid++ < 3) NOTE("trial %d: an invalid schedule", trial); continue; }
        if (mk < opt && bad_below++ < 3) NOTE("trial %d: %lld below Johnson's optimum %lld", trial, (long long)mk, (long long)opt);
        if (res.proven && mk != opt && bad_proof++ < 3) NOTE("trial %d: proven %lld, Johnson's optimum %lld", trial, (long long)mk, (long long)opt);
        if (res.lower_bound > opt && bad_proof++ < 3) NOTE("trial %d: bound %lld above Johnson's optimum %lld", trial, (long long)res.lower_bound, (long long)opt);
        n_proven += res.proven;
    }
    NOTE("60 flow shops of 20 jobs (40 ops), nodes propagating: %d proven", n_proven);
    CHECK_INT(bad_valid, 0, "valid schedules (both streams, each job's two ops in order)");
    CHECK_INT(bad_below, 0, "never below Johnson's optimum");
    CHECK_INT(bad_proof, 0, "a proof or bound never contradicts Johnson's optimum");
    CHECK(n_proven >= 30, "most are proven (%d of %d)", n_proven, n_run);
    {   /* the threshold reaches the search: a budget of 10 */
        fshop f;
        cc__time inc[40], st[40];
        int list[40], v, u;
        cc__profile pr;
        long long nodes[2][2];
        cc__bnb_result res;
        fshop_init(&f, &rng);
        for (i = 0; i < 40; i++) list[i] = i;
        memset(&pr, 0, sizeof pr);
        (void)cc__ssgs(ctx, &f.p, list, inc, &pr);
        cc__profile_free(ctx, &pr);
        for (u = 0; u < 2; u++)
            for (v = 0; v < 2; v++) {
                memcpy(st, inc, sizeof inc);
                nodes[u][v] = -1;
                if (cc__bnb_run(ctx, &f.p, st, 1, 10, 0, u ? 64 : CONCERTO__BNB_UNARY_NODES_N, 0, &res) == CC_OK && !res.proven)
                    nodes[u][v] = (long long)res.nodes;
            }
        CHECK(nodes[0][0] >= 1 && nodes[0][0] <= 10 && nodes[0][1] == nodes[0][0],
              "40 ops, the default threshold: at most 10 nodes, the same twice (%lld, %lld)", nodes[0][0], nodes[0][1]);
        CHECK(nodes[1][0] >= 1 && nodes[1][0] < nodes[0][0] && nodes[1][1] == nodes[1][0],
              "40 ops, nodes propagating up to 64 jobs: their work counts, fewer nodes in the same budget, the same twice (%lld, %lld)",
              nodes[1][0], nodes[1][1]);
    }
}

/* ---- the serial SGS on the time grid, and the sort of jobs by time ------*/
static uint64_t sg_next(uint64_t* s) { *s ^= *s << 13; *s ^= *s >> 7; *s ^= *s << 17; return *s; }

/* The test's own serial SGS: each job in list order at the least of its
   earliest start and the placed jobs' finishes (no later) where, at its
   start and at every placed job's start inside its interval, the placed
   jobs running then leave room on every resource. */
static void sg_ref(const cc__prob* p, const int* list, cc__time* st) {
    int t, u, e, r, n = p->n, k = p->k;
    for (t = 0; t < n; t++) {
        int j = list[t];
        cc__time est = 0, best = -1;
        for (e = p->pred_off[j]; e < p->pred_off[j + 1]; e++)
            if (st[p->pred[e]] + p->dur[p->pred[e]] > est) est = st[p->pred[e]] + p->dur[p->pred[e]];
        for (u = -1; u < t; u++) {
            cc__time s = u < 0 ? est : st[list[u]] + p->dur[list[u]];
            int ok = 1, v, w;
            if (s < est || (best >= 0 && s >= best)) continue;
            for (v = -1; v < t && ok && p->dur[j] > 0; v++) {
                cc__time x = v < 0 ? s : st[list[v]];   /* a point where the use can rise */
                if (x < s || x >= s + p->dur[j]) continue;
                for (r = 0; r < k && ok; r++) {
                    int64_t use = p->dem[(size_t)j * k + r];
                    for (w = 0; w < t; w++) {
                        int q = list[w];
                        if (st[q] <= x && x < st[q] + p->dur[q]) use += p->dem[(size_t)q * k + r];
                    }
                    if (p->dem[(size_t)j * k + r] > 0 && use > p->cap[r]) ok = 0;
                }
            }
            if (ok) best = s;
        }
        st[j] = best;
    }
}

/* A random precedence-feasible list of p (a random eligible job each time). */
static void sg_list(const cc__prob* p, uint64_t* rng, int* left, int* elig, int* list) {
    int i, e, ne = 0, t;
    for (i = 0; i < p->n; i++) {
        left[i] = p->pred_off[i + 1] - p->pred_off[i];
        if (!left[i]) elig[ne++] = i;
    }
    for (t = 0; t < p->n; t++) {
        int a = (int)(sg_next(rng) % (uint64_t)ne), v = elig[a];
        elig[a] = elig[--ne];
        list[t] = v;
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++)
            if (--left[p->succ[e]] == 0) elig[ne++] = p->succ[e];
    }
}

/* Random problems (durations on a grain of 1000 ticks, or of 1 tick and
   long, where the grid would be too large and the segment list serves;
   zero durations and zero demands among them) and random
   precedence-feasible lists: cc__ssgs gives the starts of sg_ref, on the
   problem and on its reverse (which shares the grid), and cc__sort_jobs
   the order of the test's own insertion sort by (time, zero duration
   first, rank; time and rank negated when descending). */
static void test_sgs_grid(void) {
    uint64_t rng = 0x5151;
    int trial, bad_sgs = 0, bad_sort = 0, bad_count = 0, n_grid = 0, n_list = 0, n_packed = 0, n_counted = 0, n_declined = 0;
    for (trial = 0; trial < 2000; trial++) {
        /* up to 4 resources: packed cells, unless a capacity is 2^15 or more; 5-6: a word per resource */
        int n = 1 + (int)(sg_next(&rng) % 30), k = 1 + (int)(sg_next(&rng) % (trial % 5 == 4 ? 6 : 4)), i, j, r, e, side;
        int long_ticks = trial % 4 == 3, big_cap = trial % 7 == 5;
        cc__time* dur = (cc__time*)malloc(sizeof(cc__time) * (size_t)n);
        int32_t* dem = (int32_t*)malloc(sizeof(int32_t) * (size_t)n * (size_t)k);
        int32_t cap[6];
        int *ord = (int*)malloc(sizeof(int) * (size_t)n), *cnt = (int*)malloc(sizeof(int) * (CONCERTO__CSORT_SPAN + 1));
        int* bk = (int*)malloc(sizeof(int) * (size_t)n);
        int *so = (int*)calloc((size_t)n + 1, sizeof(int)), *po = (int*)calloc((size_t)n + 1, sizeof(int));
        int *sc = (int*)malloc(sizeof(int) * (size_t)(n * n + 1)), *pc = (int*)malloc(sizeof(int) * (size_t)(n * n + 1));
        int *list = (int*)malloc(sizeof(int) * (size_t)n), *left = (int*)malloc(sizeof(int) * (size_t)n);
        int *elig = (int*)malloc(sizeof(int) * (size_t)n), *rank = (int*)malloc(sizeof(int) * (size_t)n);
        int *o1 = (int*)malloc(sizeof(int) * (size_t)n), *o2 = (int*)malloc(sizeof(int) * (size_t)n);
        cc__time *s1 = (cc__time*)malloc(sizeof(cc__time) * (size_t)n), *s2 = (cc__time*)malloc(sizeof(cc__time) * (size_t)n);
        cc__tkey* tk = (cc__tkey*)malloc(sizeof(cc__tkey) * ((size_t)n + 1));
        unsigned char* adj = (unsigned char*)calloc((size_t)n * (size_t)n, 1);
        double pe = (double)(sg_next(&rng) % 100) / 400.0;
        cc__prob p, rev;
        cc__profile pr;
        memset(&p, 0, sizeof p);
        memset(&pr, 0, sizeof pr);
        for (r = 0; r < k; r++) cap[r] = 1 + (int32_t)(sg_next(&rng) % 6);
        if (big_cap) cap[sg_next(&rng) % (uint64_t)k] = 32767 + (int32_t)(sg_next(&rng) % 3);   /* the lane's limit, and above */
        for (i = 0; i < n; i++) {
            cc__time u = (cc__time)(sg_next(&rng) % 7);
            dur[i] = long_ticks ? (u ? 300000 + (cc__time)(sg_next(&rng) % 300000) : 0) : u * 1000;
            for (r = 0; r < k; r++) {
                int32_t d = sg_next(&rng) % 3 ? (int32_t)(sg_next(&rng) % (uint64_t)(cap[r] + 1)) : 0;
                if (cap[r] > 6 && d > 0 && sg_next(&rng) % 2) d = cap[r] - (int32_t)(sg_next(&rng) % 3);   /* near a big capacity */
                dem[(size_t)i * k + r] = d;
            }
            for (j = 0; j < i; j++) adj[(size_t)j * n + i] = (double)(sg_next(&rng) % 1000) / 1000.0 < pe;
        }
        for (i = 0; i < n; i++) {   /* CSR both ways */
            so[i + 1] = so[i]; po[i + 1] = po[i];
            for (j = 0; j < n; j++) {
                if (adj[(size_t)i * n + j]) sc[so[i + 1]++] = j;
                if (adj[(size_t)j * n + i]) pc[po[i + 1]++] = j;
            }
        }
        p.n = n; p.k = k; p.dur = dur; p.dem = dem; p.cap = cap;
        p.succ_off = so; p.succ = sc; p.pred_off = po; p.pred = pc;
        p.grain = 0;
        for (i = 0; i < n; i++) {   /* the gcd of the durations, as cc__prob_of_graph */
            cc__time a = p.grain, b = dur[i];
            while (b) { cc__time t = a % b; a = b; b = t; }
            p.grain = a;
        }
        if (p.grain < 1) p.grain = 1;
        rev = p;
        rev.succ_off = po; rev.succ = pc; rev.pred_off = so; rev.pred = sc;
        for (side = 0; side < 4; side++) {
            const cc__prob* q = side % 2 ? &rev : &p;
            cc__time m1;
            sg_list(q, &rng, left, elig, list);
            m1 = cc__ssgs(ctx, q, list, s1, &pr);
            sg_ref(q, list, s2);
            for (i = 0; i < n; i++)
                if (s1[i] != s2[i]) break;
            if (i < n || m1 != cc__makespan(q, s2)) {
                if (bad_sgs++ < 3) NOTE("trial %d (n=%d, k=%d, %s): job %d starts at %lld, own serial SGS %lld", trial, n, k,
                                        side % 2 ? "reverse" : "forward", i, (long long)(i < n ? s1[i] : m1),
                                        (long long)(i < n ? s2[i] : cc__makespan(q, s2)));
            }
        }
        n_packed += pr.g_ok == 1 && pr.g_packed;
        n_grid += pr.g_ok == 1 && !pr.g_packed;
        n_list += pr.g_ok == 0;
        {
            int want = k <= 4;
            for (r = 0; r < k; r++) want &= cap[r] <= 32767;
            if (pr.g_ok == 1 && pr.g_packed != want && bad_sgs++ < 3)
                NOTE("trial %d (k=%d, big capacity %d): packed cells %d", trial, k, big_cap, pr.g_packed);
        }
        cc__profile_free(ctx, &pr);
        /* the sort: times with ties, long spreads (qsort), negative ones */
        for (i = 0; i < n; i++) {
            int mode = trial % 3;
            s1[i] = mode == 0 ? (cc__time)(sg_next(&rng) % 5) * 1000
                  : mode == 1 ? (cc__time)(sg_next(&rng) >> 3) - ((cc__time)1 << 59)
                  : (cc__time)(sg_next(&rng) % (trial % 4 == 1 ? 1100 : 50)) - 25;   /* spreads about the counting sort's limit */
            rank[i] = i + (trial % 2 ? 1000 : 0);
        }
        for (i = n - 1; i > 0; i--) { j = (int)(sg_next(&rng) % (uint64_t)(i + 1)); e = rank[i]; rank[i] = rank[j]; rank[j] = e; }
        for (side = 0; side < 2; side++) {
            cc__sort_jobs(&p, s1, rank, side, tk, o1);
            for (i = 0; i < n; i++) {   /* insertion sort by (time, busy, rank) */
                int v = i, m = i;
                while (m > 0) {
                    int w = o2[m - 1];
                    cc__time tv = side ? -s1[v] : s1[v], tw = side ? -s1[w] : s1[w];
                    int bv = dur[v] > 0, bw = dur[w] > 0, rv = side ? -rank[v] : rank[v], rw = side ? -rank[w] : rank[w];
                    if (tw < tv || (tw == tv && (bw < bv || (bw == bv && rw < rv)))) break;
                    o2[m] = w;
                    m--;
                }
                o2[m] = v;
            }
            if (memcmp(o1, o2, sizeof(int) * (size_t)n) && bad_sort++ < 3) NOTE("trial %d (n=%d): sort %s differs", trial, n, side ? "descending" : "ascending");
            /* by counting: the tie order from the insertion sort over equal times; grains of 1 or 1000 */
            {
                cc__time g = trial % 3 == 0 ? 1000 : 1;
                int m, got;
                for (i = 0; i < n; i++) {
                    int v = i;
                    m = i;
                    while (m > 0) {
                        int w = ord[m - 1], bv = dur[v] > 0, bw = dur[w] > 0, rv = side ? -rank[v] : rank[v], rw = side ? -rank[w] : rank[w];
                        if (bw < bv || (bw == bv && rw < rv)) break;
                        ord[m] = w;
                        m--;
                    }
                    ord[m] = v;
                }
                if (trial % 6 == 3 && n > 1) s1[0] += 1;   /* off the grain of 1000 on mode 0: declined */
                memset(o1, 0xff, sizeof(int) * (size_t)n);
                got = cc__sort_jobs_count(n, s1, g, ord, side, cnt, bk, o1);
                if (trial % 6 == 3 && n > 1) s1[0] -= 1;
                if (got) {
                    n_counted++;
                    if (memcmp(o1, o2, sizeof(int) * (size_t)n) && bad_count++ < 3)
                        NOTE("trial %d (n=%d): sort by counting %s differs", trial, n, side ? "descending" : "ascending");
                } else {
                    cc__time lo = s1[0], hi = s1[0];
                    n_declined++;
                    for (i = 0; i < n; i++) { if (s1[i] < lo) lo = s1[i]; if (s1[i] > hi) hi = s1[i]; }
                    /* declined only where the spread or the grain says so */
                    if (hi - lo <= (cc__time)CONCERTO__CSORT_SPAN * g && !(trial % 6 == 3 && n > 1) && bad_count++ < 3)
                        NOTE("trial %d (n=%d, spread %lld, grain %lld): sort by counting declined", trial, n, (long long)(hi - lo), (long long)g);
                }
            }
        }
        free(dur); free(dem); free(so); free(po); free(sc); free(pc); free(list); free(left); free(elig); free(rank);
        free(o1); free(o2); free(s1); free(s2); free(tk); free(adj); free(ord); free(cnt); free(bk);
    }
    NOTE("%d problems on packed cells, %d on the grid of a word per resource, %d on the segment list", n_packed, n_grid, n_list);
    NOTE("sorts by counting: %d done, %d declined", n_counted, n_declined);
    CHECK_INT(bad_sgs, 0, "the serial SGS gives the starts of the test's own (forward and reverse, grid and segment list)");
    CHECK_INT(bad_sort, 0, "jobs sorted by time, zero duration first, rank: the test's own insertion sort's order");
    CHECK(n_packed > 0 && n_grid > 0 && n_list > 0, "packed cells, the grid and the segment list served (%d, %d, %d)", n_packed,
          n_grid, n_list);
    CHECK_INT(bad_count, 0, "the sort by counting gives the insertion sort's order, and declines only a spread or a time off the grain");
    CHECK(n_counted > 0 && n_declined > 0, "sorts by counting both done and declined (%d, %d)", n_counted, n_declined);
}

/* cc__ga_shift on random precedence graphs and random precedence-feasible
   lists: the result is the list with one job taken out and put back
   elsewhere (or unchanged), and every edge still points forward in it, by
   the test's own positions; some shifts move a job several places. */
static void test_ga_shift(void) {
    uint64_t rng = 0x5417, grng = 99;
    int trial, bad_perm = 0, bad_edge = 0, n_far = 0;
    for (trial = 0; trial < 3000; trial++) {
        int n = 2 + (int)(sg_next(&grng) % 25), i, j, e, from, to;
        int *so = (int*)calloc((size_t)n + 1, sizeof(int)), *po = (int*)calloc((size_t)n + 1, sizeof(int));
        int *sc = (int*)malloc(sizeof(int) * (size_t)(n * n + 1)), *pc = (int*)malloc(sizeof(int) * (size_t)(n * n + 1));
        int *list = (int*)malloc(sizeof(int) * (size_t)n), *orig = (int*)malloc(sizeof(int) * (size_t)n);
        int *left = (int*)malloc(sizeof(int) * (size_t)n), *elig = (int*)malloc(sizeof(int) * (size_t)n);
        int* pos = (int*)malloc(sizeof(int) * (size_t)n);
        unsigned char* adj = (unsigned char*)calloc((size_t)n * (size_t)n, 1);
        uint64_t pe = sg_next(&grng) % 60;
        cc__prob p;
        memset(&p, 0, sizeof p);
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) adj[(size_t)i * n + j] = sg_next(&grng) % 100 < pe;
        for (i = 0; i < n; i++) {
            so[i + 1] = so[i]; po[i + 1] = po[i];
            for (j = 0; j < n; j++) {
                if (adj[(size_t)i * n + j]) sc[so[i + 1]++] = j;
                if (adj[(size_t)j * n + i]) pc[po[i + 1]++] = j;
            }
        }
        p.n = n; p.succ_off = so; p.succ = sc; p.pred_off = po; p.pred = pc;
        sg_list(&p, &grng, left, elig, list);
        memcpy(orig, list, sizeof(int) * (size_t)n);
        cc__ga_shift(&p, list, &rng);
        /* the moved job: the first place where they differ, from one side or the other */
        for (i = 0; i < n && list[i] == orig[i]; i++) {}
        from = to = i;
        if (i < n) {
            int a, b, ok1 = 1, ok2 = 1;
            /* orig[i] moved later: list = orig without orig[i], orig[i] put back at some to > i */
            for (to = i; to < n && list[to] != orig[i]; to++) {}
            for (a = 0, b = 0; a < n && ok1; a++) {   /* list without position to == orig without position i */
                if (a == to) continue;
                if (b == i) b++;
                if (b >= n || list[a] != orig[b]) ok1 = 0;
                b++;
            }
            /* or list[i] moved earlier: it came from some from > i */
            for (from = i; from < n && orig[from] != list[i]; from++) {}
            for (a = 0, b = 0; a < n && ok2; a++) {
                if (a == i) continue;
                if (b == from) b++;
                if (b >= n || list[a] != orig[b]) ok2 = 0;
                b++;
            }
            if (!ok1 && !ok2 && bad_perm++ < 3) NOTE("trial %d (n=%d): not one job moved", trial, n);
            if ((ok1 && to - i > 1) || (ok2 && from - i > 1)) n_far++;
        }
        for (i = 0; i < n; i++) pos[list[i]] = -1;
        for (i = 0; i < n; i++) pos[list[i]] = i;
        for (i = 0; i < n; i++)
            if (pos[i] < 0) break;
        if (i < n && bad_perm++ < 3) NOTE("trial %d (n=%d): not a permutation", trial, n);
        for (i = 0; i < n; i++)
            for (e = so[i]; e < so[i + 1]; e++)
                if (pos[i] >= pos[sc[e]] && bad_edge++ < 3) NOTE("trial %d (n=%d): edge %d -> %d backwards", trial, n, i, sc[e]);
        free(so); free(po); free(sc); free(pc); free(list); free(orig); free(left); free(elig); free(pos); free(adj);
    }
    CHECK_INT(bad_perm, 0, "a shift takes one job out of the list and puts it back elsewhere (3000 lists)");
    CHECK_INT(bad_edge, 0, "every edge points forward in the shifted list");
    CHECK(n_far > 100, "shifts move jobs several places (%d of 3000)", n_far);
}

int main(void) {
    cc_context_create(NULL, &ctx);
    ctx->bnb_shave_depth = TEST_SHAVE_DEPTH;
    TH_RUN(test_timetabling);
    TH_RUN(test_pairs);
    TH_RUN(test_edgefind);
    TH_RUN(test_energetic);
    TH_RUN(test_destructive);
    TH_RUN(test_clique_covers);
    TH_RUN(test_parent_windows);
    TH_RUN(test_shave);
    TH_RUN(test_shave_brute);
    TH_RUN(test_unary_rules);
    TH_RUN(test_theta_trees);
    TH_RUN(test_uny_sort_last);
    TH_RUN(test_unary_brute);
    TH_RUN(test_unary_prove);
    TH_RUN(test_stream_snapshots);
    TH_RUN(test_oe_inner);
    TH_RUN(test_psgs_ref);
    TH_RUN(test_oe_window_lists);
    TH_RUN(test_work_budget);
    TH_RUN(test_unary_nodes);
    TH_RUN(test_brute_force);
    TH_RUN(test_sgs_grid);
    TH_RUN(test_ga_shift);
    cc_context_destroy(ctx);
    return th_done();
}
