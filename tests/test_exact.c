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
     propagation starts from;
   - the node budget that counts the propagation's work (cumulative) and
     nodes alone (unary), the same search every run.
   This program compiles the implementation itself to reach the rules,
   which are private to the implementation's translation unit. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

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
    long sizes[11] = {0};
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        double opt, mk = -1;
        long nodes = 0;
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
            cc_sched_desc d = cc_sched_desc_default();
            cc_schedule s;
            memset(&s, 0, sizeof s);
            d.method = CC_SCHED_BNB;
            if (v == 1) {   /* a poor incumbent: the search has optima to find (and to lose) */
                d.priority = CC_PRIO_PROGRAM_ORDER;
                d.improve_passes = -1;
            }
            if (cc_sched_solve(ctx, g, &d, &s) != CC_OK) {
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
            if (v == 1 && s.n_nodes < 0) bad_poor++;
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
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
    cc__bnb_cliques(&h->b);
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
    cc_sched_desc d = cc_sched_desc_default();
    cc_schedule s;
    in->cap[0] = 2;
    in->dur[0] = 4; in->dur[1] = 4; in->dur[2] = 3;
    in->dem[0] = in->dem[1] = in->dem[2] = 1;
    memset(&s, 0, sizeof s);
    CHECK_RES(ctx, tu_build_graph(ctx, in, &g), CC_OK, "graph");
    d.method = CC_SCHED_BNB;
    CHECK_RES(ctx, cc_sched_solve(ctx, g, &d, &s), CC_OK, "solve");
    CHECK(s.makespan_us == 7 && s.proven_optimal && s.lower_bound_us == 7 && s.n_nodes == 0,
          "makespan 7 proven at the root (lower bound %g, resource bound %g, %lld nodes)", s.lower_bound_us, s.lb_resource_us,
          (long long)s.n_nodes);
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(in);
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

/* The node budget counts the propagation's work where it runs (some
   resource cumulative): the search stops before as many nodes, the same
   way every run; unary-only problems count nodes alone. */
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
    for (kind = 0; kind < 2; kind++) {
        long long nodes[2] = {0, 0};
        double mk[2] = {0, 0};
        int v, stopped = 1, i, r, budget = kind == 0 ? 300 : 10;
        tu_inst* in;
        cc_graph* g = NULL;
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
            cc_sched_desc d = cc_sched_desc_default();
            cc_schedule s;
            char msg[300];
            memset(&s, 0, sizeof s);
            d.method = CC_SCHED_BNB;
            d.priority = CC_PRIO_PROGRAM_ORDER;
            d.improve_passes = -1;
            d.bnb_nodes = budget;
            CHECK_RES(ctx, cc_sched_solve(ctx, g, &d, &s), CC_OK, "solve");
            CHECK(tu_check(in, s.start_us, &mk[v], msg, sizeof msg), "valid: %s", msg);
            nodes[v] = (long long)s.n_nodes;
            stopped = stopped && !s.proven_optimal;
            cc_schedule_release(ctx, &s);
        }
        CHECK(nodes[0] == nodes[1] && mk[0] == mk[1], "%s: the same search twice (%lld nodes, makespan %g)", kind ? "unary" : "cumulative",
              nodes[0], mk[0]);
        if (!stopped) NOTE("%s: proven within the budget; nothing to compare", kind ? "unary" : "cumulative");
        else if (kind == 0) CHECK(nodes[0] < budget, "cumulative: the budget of %d ends after %lld nodes (their propagation counts)", budget, nodes[0]);
        else CHECK(nodes[0] == budget, "unary: the budget of %d is %d nodes (got %lld)", budget, budget, nodes[0]);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
}

int main(void) {
    cc_context_create(NULL, &ctx);
    TH_RUN(test_timetabling);
    TH_RUN(test_pairs);
    TH_RUN(test_edgefind);
    TH_RUN(test_energetic);
    TH_RUN(test_destructive);
    TH_RUN(test_parent_windows);
    TH_RUN(test_work_budget);
    TH_RUN(test_brute_force);
    cc_context_destroy(ctx);
    return th_done();
}
