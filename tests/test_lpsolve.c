/* tests/test_lpsolve.c - the lp_solve ILP backend (CONCERTO_USE_LPSOLVE):
   - random small instances (general resources: the time-indexed model;
     stream graphs: the disjunctive model): lp_solve's optimum equals the
     test's own brute force and branch and bound's wherever both prove it,
     and every schedule passes the test's own checker;
   - a J30 sample: where lp_solve proves optimality, the makespan is the
     PSPLIB optimum;
   - odd-even windows solved by lp_solve (alone and with branch and bound)
     on training-step graphs and random stream graphs: valid by
     cc_schedule_check and the test's checker, never worse than the
     starting schedule (rounds = -1);
   - an instance whose heuristic schedule is optimal but above every lower
     bound (the model at incumbent - 1 is infeasible: proven, exact_status
     CC_OK), a time-out (valid schedule, not proven, CC_ERR_TIMEOUT).
   Skips, naming the package, when the backend is not compiled in. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#ifdef CONCERTO_USE_LPSOLVE
#include "../bench/stepgraph.h"

static cc_context* ctx;

static int solve_inst(const tu_inst* in, cc_exact ex, cc_sched_method meth, double lp_s, cc_schedule* s) {
    cc_graph* g = NULL;
    cc_sched_desc d = cc_sched_desc_default();
    cc_result r;
    memset(s, 0, sizeof *s);
    if (tu_build_graph(ctx, in, &g) != CC_OK) return 0;
    d.method = meth;
    d.exact = ex;
    d.lp_time_limit_s = lp_s;
    r = cc_sched_solve(ctx, g, &d, s);
    cc_graph_destroy(g);
    return r == CC_OK;
}

static void test_random_small(void) {
    tu_rng rng = { 20240611 };
    int trial, n_both = 0, n_lp_proven = 0, n_bad = 0, n_brute = 0;
    for (trial = 0; trial < 200; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_schedule sb, sl;
        double mk_b = -1, mk_l = -1, opt;
        char msg[300];
        memset(&gen, 0, sizeof gen);
        gen.n_min = 4; gen.n_max = 9; gen.k_min = 1; gen.k_max = 3;
        gen.streams = trial % 2; gen.cap_max = 3; gen.dur_max = 5;
        gen.unit_us = trial % 4 == 3 ? 0.7 : 1.0; gen.p_edge_max = 0.4; gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        if (!solve_inst(in, CC_EXACT_BNB, CC_SCHED_BNB, 0, &sb) || !solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 2.0, &sl)) {
            n_bad++;
            if (n_bad < 4) NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx));
        } else {
            int vb = tu_check(in, sb.start_us, &mk_b, msg, sizeof msg);
            int vl = tu_check(in, sl.start_us, &mk_l, msg, sizeof msg);
            opt = tu_brute_force(in, gen.unit_us, NULL);
            if (!vb || !vl) { n_bad++; if (n_bad < 4) NOTE("trial %d: invalid schedule: %s", trial, msg); }
            if (sl.proven_optimal) {
                n_lp_proven++;
                if (opt >= 0) {
                    n_brute++;
                    if (fabs(mk_l - opt) > 1e-6) { n_bad++; if (n_bad < 4) NOTE("trial %d: lp %g != brute force %g", trial, mk_l, opt); }
                }
                if (sb.proven_optimal) {
                    n_both++;
                    if (fabs(mk_l - mk_b) > 1e-6) { n_bad++; if (n_bad < 4) NOTE("trial %d: lp %g != bnb %g", trial, mk_l, mk_b); }
                }
            }
        }
        cc_schedule_release(ctx, &sb);
        cc_schedule_release(ctx, &sl);
        tu_inst_free(in);
    }
    CHECK(n_bad == 0 && n_both >= 150,
          "200 random instances: lp_solve == branch and bound on %d proven by both, == brute force on %d, %d proven by lp, "
          "every schedule valid (%d problems)", n_both, n_brute, n_lp_proven, n_bad);
}


static void test_j30_sample(void) {
    static const char* names[] = { "j301_1", "j3021_4", "j3046_2", "j3017_3" };
    char path[600];
    char* csv;
    size_t i;
    int n_proven = 0, n_bad = 0;
    snprintf(path, sizeof path, "%s/psplib/solutions/j30_bounds.csv", tu_data_dir());
    csv = tu_read_file(path, NULL);
    if (!csv) { SKIP("%s not found (the repository is expected beside shared/)", path); return; }
    for (i = 0; i < sizeof names / sizeof *names; i++) {
        char* text;
        tu_inst* ref;
        cc_graph* g = NULL;
        cc_schedule s;
        cc_sched_desc d = cc_sched_desc_default();
        int ub = tu_bound_ub(csv, names[i]);
        double mk = -1;
        char msg[300];
        snprintf(path, sizeof path, "build/j30/%s.sm", names[i]);
        text = tu_read_file(path, NULL);
        ref = text ? tu_sm_parse(text) : NULL;
        free(text);
        if (!ref) { SKIP("%s not found: make test extracts j30.tar.gz into build/", path); continue; }
        memset(&s, 0, sizeof s);
        d.method = CC_SCHED_BNB; d.exact = CC_EXACT_LPSOLVE; d.lp_time_limit_s = 1.5;
        if (cc_psplib_read(ctx, path, &g) != CC_OK || cc_sched_solve(ctx, g, &d, &s) != CC_OK) {
            CHECK(0, "%s: read and solve: %s", names[i], cc_last_error(ctx));
        } else {
            int ok = tu_check(ref, s.start_us, &mk, msg, sizeof msg) && mk >= ub && (!s.proven_optimal || mk == ub);
            n_proven += s.proven_optimal;
            if (!ok) { n_bad++; NOTE("%s: makespan %g, optimum %d, proven %d %s", names[i], mk, ub, s.proven_optimal, msg); }
        }
        cc_schedule_release(ctx, &s);
        cc_graph_destroy(g);
        tu_inst_free(ref);
    }
    CHECK(n_bad == 0, "J30 sample with lp_solve alone (1.5 s per model): valid, never below the optimum, == optimum where "
          "proven (%d proven)", n_proven);
    free(csv);
}

static int run_graph(cc_graph* g, cc_exact ex, int rounds, int window_ops, cc_schedule* s) {
    cc_sched_desc d = cc_sched_desc_default();
    memset(s, 0, sizeof *s);
    d.method = CC_SCHED_ODD_EVEN; d.exact = ex; d.rounds = rounds; d.window_ops = window_ops; d.lp_time_limit_s = 0.5;
    return cc_sched_solve(ctx, g, &d, s) == CC_OK;
}

static void test_windows_stepgraph(void) {
    int layers, e;
    for (layers = 1; layers <= 3; layers += 2)
        for (e = 0; e < 2; e++) {
            cc_exact ex = e ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE;
            cc_graph* g = NULL;
            cc_schedule s0, s1;
            int ok = stepgraph_build(ctx, layers, 2.0, 7 + (uint64_t)layers, &g) == CC_OK;
            ok = ok && run_graph(g, ex, -1, 6, &s0) && run_graph(g, ex, 4, 6, &s1);
            CHECK(ok && cc_schedule_check(ctx, g, s1.start_us, NULL) == CC_OK && s1.makespan_us <= s0.makespan_us + 1e-9,
                  "training step, %d layers, odd-even windows of 12 ops by %s: valid, makespan %g <= start %g (lp won %lld, "
                  "bnb won %lld)", layers, e ? "both" : "lp_solve", ok ? s1.makespan_us : -1.0, ok ? s0.makespan_us : -1.0,
                  ok ? (long long)s1.exact_wins_lp : -1LL, ok ? (long long)s1.exact_wins_bnb : -1LL);
            if (ok) { cc_schedule_release(ctx, &s0); cc_schedule_release(ctx, &s1); }
            cc_graph_destroy(g);
        }
}

static void test_windows_random(void) {
    tu_rng rng = { 77 };
    int trial, n_bad = 0;
    int64_t lp_wins = 0;
    for (trial = 0; trial < 12; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        cc_schedule s0, s1;
        double mk = -1;
        char msg[300];
        int ok;
        memset(&gen, 0, sizeof gen);
        gen.n_min = 30; gen.n_max = 60; gen.k_min = 2; gen.k_max = 3;
        gen.streams = trial % 3 != 2; gen.cap_max = 3; gen.dur_max = 9;
        gen.unit_us = trial % 2 ? 0.37 : 1.0; gen.p_edge_max = 0.08; gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        ok = tu_build_graph(ctx, in, &g) == CC_OK && run_graph(g, trial % 4 == 1 ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE, -1, 5, &s0) &&
             run_graph(g, trial % 4 == 1 ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE, 4, 5, &s1);
        if (!ok) { n_bad++; NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx)); }
        else {
            lp_wins += s1.exact_wins_lp;
            if (!tu_check(in, s1.start_us, &mk, msg, sizeof msg) || cc_schedule_check(ctx, g, s1.start_us, NULL) != CC_OK ||
                s1.makespan_us > s0.makespan_us + 1e-9) {
                n_bad++;
                NOTE("trial %d: makespan %g (start %g): %s", trial, s1.makespan_us, s0.makespan_us, msg);
            }
            cc_schedule_release(ctx, &s0);
            cc_schedule_release(ctx, &s1);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(n_bad == 0, "12 random graphs (streams and cumulative), odd-even windows of 10 ops by lp_solve: valid by both "
          "checkers, never worse than the start (%lld windows won by lp_solve)", (long long)lp_wins);
}

/* Three jobs of 2 us pairwise in conflict on a resource of capacity 3
   (demand 2 each) and a fourth of 1 us (demand 1): the resource bound is
   ceil(13/3) = 5, the optimum 6. With the cumulative resource lp_solve
   uses the time-indexed model; with a unary resource per pair the
   disjunctive one. Either way the model at 5 is infeasible: proven. */
static void test_incumbent_optimal(void) {
    int model;
    for (model = 0; model < 2; model++) {
        tu_inst* in = tu_inst_new(4, model ? 3 : 1, 0);
        cc_schedule s;
        double mk = -1;
        char msg[300];
        int i;
        for (i = 0; i < 4; i++) in->dur[i] = i < 3 ? 2.0 : 1.0;
        if (!model) {
            in->cap[0] = 3;
            for (i = 0; i < 4; i++) in->dem[i] = i < 3 ? 2 : 1;
        } else {   /* triangle: r0 = {0,1}, r1 = {1,2}, r2 = {0,2}; job 3 alone */
            for (i = 0; i < 3; i++) in->cap[i] = 1;
            in->dem[0 * 3 + 0] = 1; in->dem[1 * 3 + 0] = 1;
            in->dem[1 * 3 + 1] = 1; in->dem[2 * 3 + 1] = 1;
            in->dem[0 * 3 + 2] = 1; in->dem[2 * 3 + 2] = 1;
        }
        if (!solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 5.0, &s)) {
            CHECK(0, "%s model: solve: %s", model ? "disjunctive" : "time-indexed", cc_last_error(ctx));
        } else {
            int v = tu_check(in, s.start_us, &mk, msg, sizeof msg);
            CHECK(v && mk == 6.0 && s.proven_optimal && s.lower_bound_us == 6.0 && s.exact_wins_lp == 1,
                  "%s model: the heuristic's optimum (6, bounds %g/%g) is proven by lp_solve's infeasible model: makespan %g, "
                  "lower bound %g, proven %d, lp wins %lld", model ? "disjunctive" : "time-indexed", s.lb_critical_path_us,
                  s.lb_resource_us, mk, s.lower_bound_us, s.proven_optimal, (long long)s.exact_wins_lp);
            CHECK(s.exact_status == CC_OK && s.exact_failures == 0 && s.exact_message[0] == 0,
                  "%s model: a proof is a normal end: exact_status %s, exact_failures %lld, exact_message \"%s\"",
                  model ? "disjunctive" : "time-indexed", tu_res_name(s.exact_status), (long long)s.exact_failures,
                  s.exact_message);
            cc_schedule_release(ctx, &s);
        }
        tu_inst_free(in);
    }
}

static void test_timeout(void) {
    const char* path = "build/j30/j3013_1.sm";   /* optimum 58, bounds 48: hard */
    cc_graph* g = NULL;
    cc_schedule s;
    cc_sched_desc d = cc_sched_desc_default();
    char* text = tu_read_file(path, NULL);
    tu_inst* ref = text ? tu_sm_parse(text) : NULL;
    double mk = -1;
    char msg[300];
    free(text);
    if (!ref) { SKIP("%s not found: make test extracts j30.tar.gz into build/", path); return; }
    memset(&s, 0, sizeof s);
    d.method = CC_SCHED_BNB; d.exact = CC_EXACT_LPSOLVE; d.lp_time_limit_s = 0.05;
    cc_clear_error(ctx);
    if (cc_psplib_read(ctx, path, &g) != CC_OK || cc_sched_solve(ctx, g, &d, &s) != CC_OK) {
        CHECK(0, "read and solve: %s", cc_last_error(ctx));
    } else {
        int v = tu_check(ref, s.start_us, &mk, msg, sizeof msg);
        CHECK(v && mk >= 58 && !s.proven_optimal,
              "a 50 ms limit on a hard J30 instance: valid schedule (makespan %g >= 58), not proven", mk);
        CHECK_CONTAINS(cc_last_error(ctx), "lp_solve", "the time-out is reported");
        CHECK(s.exact_status == CC_ERR_TIMEOUT && s.exact_failures == 1,
              "the schedule says so: exact_status %s (CC_ERR_TIMEOUT), exact_failures %lld (1)", tu_res_name(s.exact_status),
              (long long)s.exact_failures);
        CHECK_CONTAINS(s.exact_message, "lp_solve", "exact_message names lp_solve");
    }
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(ref);
}

int main(void) {
    cc_context_create(NULL, &ctx);
    TH_RUN(test_incumbent_optimal);
    TH_RUN(test_random_small);
    TH_RUN(test_j30_sample);
    TH_RUN(test_windows_stepgraph);
    TH_RUN(test_windows_random);
    TH_RUN(test_timeout);
    cc_context_destroy(ctx);
    return th_done();
}

#else

static void test_lpsolve(void) {
    SKIP("lp_solve is not compiled in: install liblpsolve55-dev (<lpsolve/lp_lib.h>, -llpsolve55) and rebuild");
}

int main(void) {
    TH_RUN(test_lpsolve);
    return th_done();
}

#endif
