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
     CC_OK), a time-out (valid schedule, not proven, CC_ERR_TIMEOUT);
   - the time-indexed model's windows (precedence and time-tabling) on a
     hand instance where they must be what the comment works out, and must
     not move; a model infeasible at horizon 5 and feasible at 6 (over step
     and over pulse columns); random cumulative instances where lp_solve's
     proven optimum equals brute force, propagation never refutes the
     optimum as a horizon, and the models of both columns are infeasible
     at every horizon below the optimum and feasible at it;
   - lp_solve after a short branch and bound (lp_warm_nodes) and alone from
     branch and bound's root bound, on random cumulative instances: proofs
     == brute force, bounds never above it, never worse than branch and
     bound with the same nodes;
   - lp_solve failing (solve returning NUMFAILURE or NOMEMORY, make_lp
     returning NULL, through the implementation's fault-injection hooks) on
     whole graphs and in odd-even windows: cc_sched_solve still returns
     CC_OK with a valid schedule no worse than the heuristic's, not proven,
     and exact_status / exact_failures / exact_message say what failed.
   This program compiles the implementation itself (the Makefile links it
   without tests/concerto_impl.c) so that it can reach those hooks, which
   are private to the implementation's translation unit.
   Skips, naming the package, when the backend is not compiled in. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#ifdef CONCERTO_USE_LPSOLVE
#include "../examples/steps/synthetic_step.h"

static cc_context* ctx;

static int solve_inst(const tu_inst* in, cc_exact ex, cc_sched_method meth, double lp_s, cc_schedule* s, cc_sched_stats* st) {
    cc_graph* g = NULL;
    cc_sched_desc d = tu_sched_desc();
    cc_result r;
    memset(s, 0, sizeof *s);
    if (tu_build_graph(ctx, in, &g) != CC_OK) return 0;
    d.method = meth;
    d.exact = ex;
    d.tuning.lp_time_limit_s = lp_s;
    d.tuning.lp_window_time_limit_s = lp_s;
    d.tuning.lp_warm_nodes = -1;   /* lp_solve alone */
    r = cc_sched_solve_stats(ctx, g, &d, s, st);
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
        if (!solve_inst(in, CC_EXACT_BNB, CC_SCHED_BNB, 0, &sb, NULL) || !solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 2.0, &sl, NULL)) {
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
        cc_sched_desc d = tu_sched_desc();
        int ub = tu_bound_ub(csv, names[i]);
        double mk = -1;
        char msg[300];
        snprintf(path, sizeof path, "build/j30/%s.sm", names[i]);
        text = tu_read_file(path, NULL);
        ref = text ? tu_sm_parse(text) : NULL;
        free(text);
        if (!ref) { SKIP("%s not found: make test extracts j30.tar.gz into build/", path); continue; }
        memset(&s, 0, sizeof s);
        d.method = CC_SCHED_BNB; d.exact = CC_EXACT_LPSOLVE; d.tuning.lp_time_limit_s = 1.5; d.tuning.lp_warm_nodes = -1;
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

static int run_graph_in(cc_context* c, cc_graph* g, cc_exact ex, int rounds, int window_ops, cc_schedule* s, cc_sched_stats* st) {
    cc_sched_desc d = tu_sched_desc();
    memset(s, 0, sizeof *s);
    d.method = CC_SCHED_ODD_EVEN; d.exact = ex; d.rounds = rounds; d.window_ops = window_ops; d.tuning.lp_window_time_limit_s = 0.5;
    return cc_sched_solve_stats(c, g, &d, s, st) == CC_OK;
}

static int run_graph(cc_graph* g, cc_exact ex, int rounds, int window_ops, cc_schedule* s, cc_sched_stats* st) {
    return run_graph_in(ctx, g, ex, rounds, window_ops, s, st);
}

static void test_windows_stepgraph(void) {
    int layers, e;
    for (layers = 1; layers <= 3; layers += 2)
        for (e = 0; e < 2; e++) {
            cc_exact ex = e ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE;
            cc_graph* g = NULL;
            cc_schedule s0, s1;
            cc_sched_stats s1_st;
            int ok = synthetic_step_build(ctx, layers, 2.0, 7 + (uint64_t)layers, &g) == CC_OK;
            ok = ok && run_graph(g, ex, -1, 6, &s0, NULL) && run_graph(g, ex, 4, 6, &s1, &s1_st);
            CHECK(ok && cc_schedule_check(ctx, g, s1.start_us, NULL) == CC_OK && s1.makespan_us <= s0.makespan_us + 1e-9,
                  "training step, %d layers, odd-even windows of 12 ops by %s: valid, makespan %g <= start %g (lp won %lld, "
                  "bnb won %lld)", layers, e ? "both" : "lp_solve", ok ? s1.makespan_us : -1.0, ok ? s0.makespan_us : -1.0,
                  ok ? (long long)s1_st.exact_wins_lp : -1LL, ok ? (long long)s1_st.exact_wins_bnb : -1LL);
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
        cc_sched_stats s1_st;
        double mk = -1;
        char msg[300];
        int ok;
        memset(&gen, 0, sizeof gen);
        gen.n_min = 30; gen.n_max = 60; gen.k_min = 2; gen.k_max = 3;
        gen.streams = trial % 3 != 2; gen.cap_max = 3; gen.dur_max = 9;
        gen.unit_us = trial % 2 ? 0.37 : 1.0; gen.p_edge_max = 0.08; gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        ok = tu_build_graph(ctx, in, &g) == CC_OK && run_graph(g, trial % 4 == 1 ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE, -1, 5, &s0, NULL) &&
             run_graph(g, trial % 4 == 1 ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE, 4, 5, &s1, &s1_st);
        if (!ok) { n_bad++; NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx)); }
        else {
            lp_wins += s1_st.exact_wins_lp;
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
        cc_sched_stats s_st;
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
        if (!solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 5.0, &s, &s_st)) {
            CHECK(0, "%s model: solve: %s", model ? "disjunctive" : "time-indexed", cc_last_error(ctx));
        } else {
            int v = tu_check(in, s.start_us, &mk, msg, sizeof msg);
            CHECK(v && mk == 6.0 && s.proven_optimal && s.lower_bound_us == 6.0 && s_st.exact_wins_lp == 1,
                  "%s model: the heuristic's optimum (6, bounds %g/%g) is proven by lp_solve's infeasible model: makespan %g, "
                  "lower bound %g, proven %d, lp wins %lld", model ? "disjunctive" : "time-indexed", s.lb_critical_path_us,
                  s.lb_resource_us, mk, s.lower_bound_us, s.proven_optimal, (long long)s_st.exact_wins_lp);
            CHECK(s_st.exact_status == CC_OK && s_st.exact_failures == 0 && s_st.exact_message[0] == 0,
                  "%s model: a proof is a normal end: exact_status %s, exact_failures %lld, exact_message \"%s\"",
                  model ? "disjunctive" : "time-indexed", tu_res_name(s_st.exact_status), (long long)s_st.exact_failures,
                  s_st.exact_message);
            cc_schedule_release(ctx, &s);
        }
        tu_inst_free(in);
    }
}

static void test_timeout(void) {
    const char* path = "build/j30/j3013_1.sm";   /* optimum 58, bounds 48: hard */
    cc_graph* g = NULL;
    cc_schedule s;
    cc_sched_stats s_st;
    cc_sched_desc d = tu_sched_desc();
    char* text = tu_read_file(path, NULL);
    tu_inst* ref = text ? tu_sm_parse(text) : NULL;
    double mk = -1;
    char msg[300];
    free(text);
    if (!ref) { SKIP("%s not found: make test extracts j30.tar.gz into build/", path); return; }
    memset(&s, 0, sizeof s);
    d.method = CC_SCHED_BNB; d.exact = CC_EXACT_LPSOLVE; d.tuning.lp_time_limit_s = 0.05; d.tuning.lp_warm_nodes = -1;
    cc_clear_error(ctx);
    if (cc_psplib_read(ctx, path, &g) != CC_OK || cc_sched_solve_stats(ctx, g, &d, &s, &s_st) != CC_OK) {
        CHECK(0, "read and solve: %s", cc_last_error(ctx));
    } else {
        int v = tu_check(ref, s.start_us, &mk, msg, sizeof msg);
        CHECK(v && mk >= 58 && !s.proven_optimal,
              "a 50 ms limit on a hard J30 instance: valid schedule (makespan %g >= 58), not proven", mk);
        CHECK_CONTAINS(cc_last_error(ctx), "lp_solve", "the time-out is reported");
        CHECK(s_st.exact_status == CC_ERR_TIMEOUT && s_st.exact_failures == 1,
              "the schedule says so: exact_status %s (CC_ERR_TIMEOUT), exact_failures %lld (1)", tu_res_name(s_st.exact_status),
              (long long)s_st.exact_failures);
        CHECK_CONTAINS(s_st.exact_message, "lp_solve", "exact_message names lp_solve");
    }
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(ref);
}

/* ---- lp_solve failing: fakes for the implementation's hooks ------------ */
static lprec* __WINAPI fake_make_lp_null(int rows, int columns) { (void)rows; (void)columns; return NULL; }
static int __WINAPI fake_solve_numfailure(lprec* lp) { (void)lp; return NUMFAILURE; }
static int __WINAPI fake_solve_nomemory(lprec* lp) { (void)lp; return NOMEMORY; }

typedef struct fault {
    const char* name;
    make_lp_func* make;       /* NULL: the real make_lp */
    solve_func* solve;        /* NULL: the real solve */
    const char* text;         /* exact_message contains it */
} fault;

static const fault faults[] = {
    { "solve returns NUMFAILURE", NULL, fake_solve_numfailure, "NUMFAILURE" },
    { "solve returns NOMEMORY", NULL, fake_solve_nomemory, "NOMEMORY" },
    { "make_lp returns NULL", fake_make_lp_null, NULL, "make_lp" },
};

static void fault_begin(const fault* f) {
    if (f->make) cc__lp_make_call = f->make;
    if (f->solve) cc__lp_solve_call = f->solve;
}
static void fault_end(void) {
    cc__lp_make_call = make_lp;
    cc__lp_solve_call = solve;
}

/* The instance of test_incumbent_optimal (heuristic 6 above the bounds 5,
   so the exact solver always runs): model 0 time-indexed, 1 disjunctive. */
static tu_inst* six_inst(int model) {
    tu_inst* in = tu_inst_new(4, model ? 3 : 1, 0);
    int i;
    for (i = 0; i < 4; i++) in->dur[i] = i < 3 ? 2.0 : 1.0;
    if (!model) {
        in->cap[0] = 3;
        for (i = 0; i < 4; i++) in->dem[i] = i < 3 ? 2 : 1;
    } else {
        for (i = 0; i < 3; i++) in->cap[i] = 1;
        in->dem[0 * 3 + 0] = 1; in->dem[1 * 3 + 0] = 1;
        in->dem[1 * 3 + 1] = 1; in->dem[2 * 3 + 1] = 1;
        in->dem[0 * 3 + 2] = 1; in->dem[2 * 3 + 2] = 1;
    }
    return in;
}

/* ---- the time-indexed model's windows and horizons --------------------- */

/* The internals of one instance: its graph, problem and the lp state
   (earliest starts, busy profile) with room for horizons up to hmax cells. */
typedef struct win_case { cc_graph* g; cc__prob p; cc__lp L; cc__lp_win W; } win_case;

static int win_open(const tu_inst* in, cc__time hmax, win_case* c) {
    memset(c, 0, sizeof *c);
    if (tu_build_graph(ctx, in, &c->g) != CC_OK || cc_graph_validate(c->g) != CC_OK) return 0;
    cc__prob_of_graph(c->g, &c->p);
    c->L.ctx = ctx; c->L.p = &c->p; c->L.n = c->p.n; c->L.k = c->p.k;
    c->L.lim = hmax * c->p.grain;
    if (cc__lp_prepare(&c->L) != CC_OK) return 0;
    return cc__lp_win_init(&c->L, &c->W, 0, c->p.grain, hmax) == CC_OK;
}

static void win_close(win_case* c) {
    cc__lp_win_free(ctx, &c->W);
    cc__lp_free_all(&c->L);
    cc_graph_destroy(c->g);
}

/* The model at horizon h (cells): -1 refuted by propagation, 0 infeasible
   (lp_solve), 1 a schedule (start_us, from the model's columns). */
static int win_model_at(win_case* c, cc__time h, double* start_us) {
    cc__lp_model m;
    cc__lp_row w;
    cc__time s[16];
    int ret, j, out = 0;
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    if (!cc__lp_win_prop(&c->L, &c->W, h)) return -1;
    c->L.lim = h * c->p.grain;
    if (cc__lp_build_ti(&c->L, &m, &w, &c->W, h) == CC_OK) {
        set_verbose(m.lp, NEUTRAL);
        ret = solve(m.lp);
        if (ret == OPTIMAL || ret == SUBOPTIMAL) {
            REAL* v = (REAL*)malloc(sizeof(REAL) * ((size_t)m.ncols + 1));
            get_variables(m.lp, v);
            out = c->p.n <= 16 && cc__lp_extract_ti(&c->L, &m, v, s) ? 1 : -2;
            for (j = 0; out == 1 && j < c->p.n; j++) start_us[j] = (double)s[j] / CONCERTO__TICKS_PER_US;
            free(v);
        } else if (ret != INFEASIBLE) out = -2;
    }
    cc__lp_model_free(ctx, &m);
    cc__free(ctx, w.col);
    cc__free(ctx, w.val);
    return out;
}

/* Three jobs, one resource of capacity 1: A (3 us, demand 1) before C
   (1 us, no demand), B (2 us, demand 1). One cell is 1 us.
   Horizon 5, by hand: C finishes by 5, so A starts by 5 - 1 - 3 = 1; A's
   window [0,1] has the compulsory part [1,3). B (window [0,3]) clashes
   with it at cells 1 and 2: its first start that misses them is 3, so B
   is [3,3] with compulsory part [3,5), and A, which may not reach cell 3,
   is [0,0]; C follows A: [3,4].
   Horizon 6: A [0,2] (compulsory part [2,3)), B [0,4] with no part, C
   [3,5]: no window moves, but B's starts 1 and 2 cover cell 2 (holes):
   B starts at 0, 3 or 4.
   Horizon 4: A and B need 3 + 2 = 5 cells of the one unit: refuted.
   The least horizon propagation accepts is 5, the optimum (A, then B
   beside C). */
static void test_windows_hand(void) {
    tu_inst* in = tu_inst_new(3, 1, 0);
    win_case c;
    cc__time x;
    char holes[64] = "";
    in->cap[0] = 1;
    in->dur[0] = 3; in->dur[1] = 2; in->dur[2] = 1;
    in->dem[0] = 1; in->dem[1] = 1; in->dem[2] = 0;
    in->adj[0 * 3 + 2] = 1;
    if (!win_open(in, 8, &c)) { CHECK(0, "set-up: %s", cc_last_error(ctx)); tu_inst_free(in); return; }
    {
        long long w5[6], w6[6];
        int p5 = cc__lp_win_prop(&c.L, &c.W, 5), i;
        for (i = 0; i < 3; i++) { w5[2 * i] = c.W.a[i]; w5[2 * i + 1] = c.W.b[i]; }
        CHECK(p5 && w5[0] == 0 && w5[1] == 0 && w5[2] == 3 && w5[3] == 3 && w5[4] == 3 && w5[5] == 4,
              "horizon 5: windows A [%lld,%lld] (0,0), B [%lld,%lld] (3,3), C [%lld,%lld] (3,4)", w5[0], w5[1], w5[2], w5[3],
              w5[4], w5[5]);
        p5 = cc__lp_win_prop(&c.L, &c.W, 6);
        for (i = 0; i < 3; i++) { w6[2 * i] = c.W.a[i]; w6[2 * i + 1] = c.W.b[i]; }
        CHECK(p5 && w6[0] == 0 && w6[1] == 2 && w6[2] == 0 && w6[3] == 4 && w6[4] == 3 && w6[5] == 5,
              "horizon 6: nothing to prune: A [%lld,%lld] (0,2), B [%lld,%lld] (0,4), C [%lld,%lld] (3,5)", w6[0], w6[1], w6[2],
              w6[3], w6[4], w6[5]);
    }
    for (x = c.W.a[1]; x <= c.W.b[1]; x++)
        if (!cc__lp_win_clash(&c.L, &c.W, 1, x) && !cc__lp_win_clash(&c.L, &c.W, 1, x + 1))
            snprintf(holes + strlen(holes), sizeof holes - strlen(holes), "%s%lld", holes[0] ? "," : "", (long long)x);
    CHECK(!strcmp(holes, "0,3,4"), "horizon 6: B's starts beside A's compulsory part: %s (0,3,4)", holes);
    CHECK(!cc__lp_win_prop(&c.L, &c.W, 4), "horizon 4 is refuted (A and B need 5 cells of one unit)");
    {
        double st[3] = { -1, -1, -1 }, mk = -1;
        char msg[200];
        int r4 = win_model_at(&c, 4, st), r5 = win_model_at(&c, 5, st);
        int v = r5 == 1 && tu_check(in, st, &mk, msg, sizeof msg);
        CHECK(r4 == -1 && v && mk == 5.0,
              "the model: refuted at 4 (%d), a valid schedule of makespan 5 at 5 (%d, makespan %g)", r4, r5, mk);
    }
    win_close(&c);
    tu_inst_free(in);
}

/* The instance of test_incumbent_optimal, time-indexed (capacity 3, three
   jobs of 2 us with demand 2, one of 1 us with demand 1). Propagation
   accepts horizon 5 (every 2-us job has the window [0,3]: no compulsory
   part), but no two of the demand-2 jobs fit side by side, so they need
   3 x 2 = 6 cells: the model at 5 must be infeasible, the one at 6
   feasible (the three in a row, the short one beside any). */
static void test_model_horizons(void) {
    tu_inst* in = six_inst(0);
    win_case c;
    double st[4] = { -1, -1, -1, -1 }, mk = -1;
    char msg[200] = "";
    int r5, r6, p5;
    int f;
    if (!win_open(in, 8, &c)) { CHECK(0, "set-up: %s", cc_last_error(ctx)); tu_inst_free(in); return; }
    for (f = 0; f < 2; f++) {
        const char* cols = f ? "pulse columns" : "step columns";
        c.L.pulse = f;
        p5 = cc__lp_win_prop(&c.L, &c.W, 5);
        r5 = win_model_at(&c, 5, st);
        r6 = win_model_at(&c, 6, st);
        CHECK(p5 == 1 && r5 == 0, "%s, horizon 5: propagation does not refute it (%d), the model is infeasible (%d, want 0)", cols, p5, r5);
        mk = -1;
        p5 = r6 == 1 && tu_check(in, st, &mk, msg, sizeof msg);
        CHECK(p5 && mk == 6.0, "%s, horizon 6: the model has a schedule (%d), valid with makespan %g (6) %s", cols, r6, mk, msg);
    }
    win_close(&c);
    tu_inst_free(in);
}

/* Random cumulative instances (up to 9 jobs, capacities 1..4): lp_solve's
   proven makespan equals the test's brute force, and propagation accepts
   the brute-force optimum as a horizon (it never prunes every schedule
   that finishes by the optimum) with the least accepted horizon at most
   the optimum. */
static void test_random_cumulative(void) {
    tu_rng rng = { 977 };
    int trial, n_proven = 0, n_bad = 0, n_lb_tight = 0, n_models = 0;
    for (trial = 0; trial < 300; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_schedule sl;
        win_case c;
        double mk = -1, opt;
        char msg[300];
        memset(&gen, 0, sizeof gen);
        gen.n_min = 4; gen.n_max = 9; gen.k_min = 1; gen.k_max = 3; gen.streams = 0; gen.cap_max = 4; gen.dur_max = 5;
        gen.unit_us = 1.0; gen.p_edge_max = 0.3;
        in = tu_random_inst(&rng, &gen);
        opt = tu_brute_force(in, 1.0, NULL);
        if (!solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 2.0, &sl, NULL)) {
            n_bad++;
            if (n_bad < 4) NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx));
        } else {
            if (!tu_check(in, sl.start_us, &mk, msg, sizeof msg)) { n_bad++; if (n_bad < 4) NOTE("trial %d: %s", trial, msg); }
            if (sl.proven_optimal) {
                n_proven++;
                if (fabs(mk - opt) > 1e-6) { n_bad++; if (n_bad < 4) NOTE("trial %d: lp %g != brute force %g", trial, mk, opt); }
            }
            if (mk < opt - 1e-6) { n_bad++; if (n_bad < 4) NOTE("trial %d: lp %g below brute force %g", trial, mk, opt); }
        }
        cc_schedule_release(ctx, &sl);
        if (opt > 0 && win_open(in, (cc__time)llround(opt) + 2, &c)) {
            /* cells of one grain: the optimum in cells */
            cc__time hopt = (cc__time)llround(opt * CONCERTO__TICKS_PER_US) / c.p.grain, h = 0, hh;
            if (!cc__lp_win_prop(&c.L, &c.W, hopt)) { n_bad++; if (n_bad < 4) NOTE("trial %d: optimum %g refuted", trial, opt); }
            while (h < hopt && !cc__lp_win_prop(&c.L, &c.W, h)) h++;
            n_lb_tight += h == hopt;
            /* the models over step and over pulse columns at every horizon
               from there: infeasible below the optimum, a valid schedule
               ending by it at the optimum */
            for (hh = h; hh <= hopt; hh++) {
                int f;
                for (f = 0; f < 2; f++) {
                    double st[16], mk2 = -1;
                    int r;
                    c.L.pulse = f;
                    r = win_model_at(&c, hh, st);
                    n_models++;
                    if (hh < hopt ? r > 0 || r == -2 : r != 1 || !tu_check(in, st, &mk2, msg, sizeof msg) || mk2 > opt + 1e-6) {
                        n_bad++;
                        if (n_bad < 4) NOTE("trial %d, %s columns: the model at %lld (optimum %lld) gives %d, makespan %g", trial,
                                            f ? "pulse" : "step", (long long)hh, (long long)hopt, r, mk2);
                    }
                }
            }
            win_close(&c);
        }
        tu_inst_free(in);
    }
    CHECK(n_bad == 0 && n_proven >= 250, "300 random cumulative instances: lp_solve proves %d, each == brute force; "
          "propagation never refutes the optimum (its least horizon is the optimum on %d); the %d models over step and "
          "pulse columns from there to the optimum are infeasible below it and feasible at it; %d problems", n_proven,
          n_lb_tight, n_models, n_bad);
}

/* lp_solve after a short branch and bound (lp_warm_nodes) and lp_solve
   alone from branch and bound's root bound, on random cumulative instances
   (up to 10 jobs): every schedule valid by the test's checker and never
   below the test's brute force; a proven makespan equals it; every lower
   bound is at most it; with the warm start the makespan is never above
   branch and bound's alone with the same node budget from the same first
   schedule (lp_solve only takes strict improvements of its incumbent). */
static void test_warm_start(void) {
    tu_rng rng = { 4243 };
    int trial, n_bad = 0, n_proven_w = 0, n_proven_l = 0, n_better = 0;
    for (trial = 0; trial < 120; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        cc_schedule sw, sb, sl;
        cc_sched_desc d = tu_sched_desc();
        double opt, mw = -1, mb = -1, ml = -1;
        char msg[300];
        int ok;
        memset(&gen, 0, sizeof gen);
        gen.n_min = 5; gen.n_max = 10; gen.k_min = 1; gen.k_max = 3; gen.streams = 0; gen.cap_max = 5; gen.dur_max = 6;
        gen.unit_us = 1.0; gen.p_edge_max = 0.25;
        in = tu_random_inst(&rng, &gen);
        opt = tu_brute_force(in, 1.0, NULL);
        memset(&sw, 0, sizeof sw); memset(&sb, 0, sizeof sb); memset(&sl, 0, sizeof sl);
        ok = tu_build_graph(ctx, in, &g) == CC_OK;
        d.method = CC_SCHED_BNB; d.tuning.lp_time_limit_s = 2.0;
        d.exact = CC_EXACT_LPSOLVE; d.tuning.lp_warm_nodes = 20;
        ok = ok && cc_sched_solve(ctx, g, &d, &sw) == CC_OK;
        d.exact = CC_EXACT_BNB; d.tuning.bnb_nodes = 20;
        ok = ok && cc_sched_solve(ctx, g, &d, &sb) == CC_OK;
        d.exact = CC_EXACT_LPSOLVE; d.tuning.lp_warm_nodes = -1; d.tuning.bnb_nodes = 0;
        ok = ok && cc_sched_solve(ctx, g, &d, &sl) == CC_OK;
        if (!ok) { n_bad++; if (n_bad < 4) NOTE("trial %d: solve failed: %s", trial, cc_last_error(ctx)); }
        else if (!tu_check(in, sw.start_us, &mw, msg, sizeof msg) || !tu_check(in, sb.start_us, &mb, msg, sizeof msg) ||
                 !tu_check(in, sl.start_us, &ml, msg, sizeof msg)) {
            n_bad++; if (n_bad < 4) NOTE("trial %d: %s", trial, msg);
        } else {
            int bad = mw < opt - 1e-6 || ml < opt - 1e-6 || mw > mb + 1e-6 ||
                      (sw.proven_optimal && fabs(mw - opt) > 1e-6) || (sl.proven_optimal && fabs(ml - opt) > 1e-6) ||
                      sw.lower_bound_us > opt + 1e-6 || sl.lower_bound_us > opt + 1e-6;
            if (bad) {
                n_bad++;
                if (n_bad < 4) NOTE("trial %d: optimum %g; warm %g (lb %g, proven %d), bnb alone %g, lp alone %g (lb %g, proven %d)",
                                    trial, opt, mw, sw.lower_bound_us, sw.proven_optimal, mb, ml, sl.lower_bound_us, sl.proven_optimal);
            }
            n_proven_w += sw.proven_optimal;
            n_proven_l += sl.proven_optimal;
            n_better += mw < mb - 1e-6;
        }
        cc_schedule_release(ctx, &sw); cc_schedule_release(ctx, &sb); cc_schedule_release(ctx, &sl);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(n_bad == 0 && n_proven_w >= 100 && n_proven_l >= 100,
          "120 random cumulative instances: lp_solve after 20 nodes of branch and bound proves %d, lp_solve alone "
          "from the root bound %d, each == brute force, every bound <= it, never above branch and bound's 20 nodes "
          "(below on %d); %d problems", n_proven_w, n_proven_l, n_better, n_bad);
}

/* Whole graphs (CC_SCHED_BNB with lp_solve alone): the two fixed instances
   and random small ones (general and stream graphs), every fault. Where the
   exact solver ran (the heuristic above its bounds) it failed once: CC_OK,
   valid by tu_check, makespan <= the heuristic's (CC_SCHED_LIST, the same
   first schedule), not proven, exact_status CC_ERR_BACKEND with a message
   naming lp_solve and the failure, also in cc_last_error. */
static void test_fault_whole_graph(void) {
    size_t fi;
    for (fi = 0; fi < sizeof faults / sizeof *faults; fi++) {
        const fault* f = &faults[fi];
        tu_rng rng = { 5150 };
        int trial, n_ran = 0, n_bad = 0;
        for (trial = 0; trial < 26; trial++) {
            tu_inst* in;
            cc_schedule sh, s;
            cc_sched_stats s_st;
            double mk_h = -1, mk = -1;
            char msg[300];
            int ok_h, ok;
            if (trial < 2) in = six_inst(trial);
            else {
                tu_gen gen;
                memset(&gen, 0, sizeof gen);
                gen.n_min = 5; gen.n_max = 12; gen.k_min = 1; gen.k_max = 3;
                gen.streams = trial % 2; gen.cap_max = 3; gen.dur_max = 6;
                gen.unit_us = 1.0; gen.p_edge_max = 0.3; gen.p_no_stream = 0.1;
                in = tu_random_inst(&rng, &gen);
            }
            ok_h = solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_LIST, 2.0, &sh, NULL);
            cc_clear_error(ctx);
            fault_begin(f);
            ok = solve_inst(in, CC_EXACT_LPSOLVE, CC_SCHED_BNB, 2.0, &s, &s_st);
            fault_end();
            if (!ok_h || !ok) {
                n_bad++;
                NOTE("%s, trial %d: solve failed: %s", f->name, trial, cc_last_error(ctx));
            } else if (!tu_check(in, s.start_us, &mk, msg, sizeof msg) || !tu_check(in, sh.start_us, &mk_h, msg, sizeof msg)) {
                n_bad++;
                NOTE("%s, trial %d: invalid schedule: %s", f->name, trial, msg);
            } else if (mk > mk_h + 1e-9) {
                n_bad++;
                NOTE("%s, trial %d: makespan %g above the heuristic's %g", f->name, trial, mk, mk_h);
            } else if (s_st.exact_failures == 0) {
                /* the exact solver did not run: the heuristic met a bound */
                if (s_st.exact_status != CC_OK || s_st.exact_message[0]) {
                    n_bad++;
                    NOTE("%s, trial %d: no failure counted, yet exact_status %s, message \"%s\"", f->name, trial,
                         tu_res_name(s_st.exact_status), s_st.exact_message);
                }
            } else {
                n_ran++;
                if (s_st.exact_failures != 1 || s_st.exact_status != CC_ERR_BACKEND || s.proven_optimal ||
                    !strstr(s_st.exact_message, "lp_solve") || !strstr(s_st.exact_message, f->text) ||
                    !strstr(cc_last_error(ctx), f->text)) {
                    n_bad++;
                    NOTE("%s, trial %d: exact_failures %lld, exact_status %s, proven %d, message \"%s\", last error \"%s\"",
                         f->name, trial, (long long)s_st.exact_failures, tu_res_name(s_st.exact_status), s.proven_optimal,
                         s_st.exact_message, cc_last_error(ctx));
                }
            }
            if (trial == 0 && ok) NOTE("%s: exact_message \"%s\"", f->name, s_st.exact_message);
            cc_schedule_release(ctx, &sh);
            cc_schedule_release(ctx, &s);
            tu_inst_free(in);
        }
        CHECK(n_bad == 0 && n_ran >= 2,
              "whole graphs, lp_solve's %s: CC_OK, valid, no worse than the heuristic, not proven, exact_status "
              "CC_ERR_BACKEND naming lp_solve and \"%s\" (%d of 26 solves ran the exact solver, %d problems)",
              f->name, f->text, n_ran, n_bad);
    }
}

/* CC_EXACT_BOTH with lp_solve failing: branch and bound's proof stands,
   the failure is still reported. */
static void test_fault_both(void) {
    tu_inst* in = six_inst(0);
    cc_schedule s;
    cc_sched_stats s_st;
    double mk = -1;
    char msg[300];
    int ok;
    fault_begin(&faults[0]);
    ok = solve_inst(in, CC_EXACT_BOTH, CC_SCHED_BNB, 2.0, &s, &s_st);
    fault_end();
    if (!ok) CHECK(0, "solve: %s", cc_last_error(ctx));
    else {
        int v = tu_check(in, s.start_us, &mk, msg, sizeof msg);
        CHECK(v && mk == 6.0 && s.proven_optimal && s_st.exact_wins_bnb == 1 && s_st.exact_status == CC_ERR_BACKEND &&
              s_st.exact_failures == 1,
              "both solvers, lp_solve's solve failing: branch and bound's optimum 6 is proven (makespan %g, proven %d, bnb "
              "wins %lld), the failure reported (exact_status %s, exact_failures %lld)", mk, s.proven_optimal,
              (long long)s_st.exact_wins_bnb, tu_res_name(s_st.exact_status), (long long)s_st.exact_failures);
        cc_schedule_release(ctx, &s);
    }
    tu_inst_free(in);
}

static void count_log(cc_log_level level, const char* message, void* user_data) {
    (void)level; (void)message;
    (*(int*)user_data)++;
}

/* Odd-even windows by lp_solve (and by both) with solve failing in every
   window: valid, never worse than the start, every window counted in
   exact_failures, and none of it in the logger or the context's last
   error. */
static void test_fault_windows(void) {
    int n_logged = 0, trial, n_bad = 0, n_graphs = 0;
    int64_t failures = 0;
    cc_context* lctx = NULL;
    cc_context_desc cd = {0};
    tu_rng rng = { 31337 };
    cd.logger.log_fn = count_log;
    cd.logger.user_data = &n_logged;
    if (cc_context_create(&cd, &lctx) != CC_OK) { CHECK(0, "context with a logger"); return; }
    for (trial = 0; trial < 6; trial++) {
        cc_exact ex = trial % 3 == 2 ? CC_EXACT_BOTH : CC_EXACT_LPSOLVE;
        tu_inst* in = NULL;
        cc_graph* g = NULL;
        cc_schedule s0, s1;
        cc_sched_stats s1_st;
        double mk = -1;
        char msg[300];
        int ok, ok0;
        if (trial == 0) ok = synthetic_step_build(lctx, 3, 2.0, 11, &g) == CC_OK;
        else {
            tu_gen gen;
            memset(&gen, 0, sizeof gen);
            gen.n_min = 30; gen.n_max = 50; gen.k_min = 2; gen.k_max = 3;
            gen.streams = trial % 2; gen.cap_max = 3; gen.dur_max = 9;
            gen.unit_us = 1.0; gen.p_edge_max = 0.08; gen.p_no_stream = 0.1;
            in = tu_random_inst(&rng, &gen);
            ok = tu_build_graph(lctx, in, &g) == CC_OK;
        }
        ok0 = ok && run_graph_in(lctx, g, ex, -1, 5, &s0, NULL);
        cc_clear_error(lctx);
        fault_begin(&faults[0]);
        ok = ok0 && run_graph_in(lctx, g, ex, 4, 5, &s1, &s1_st);
        fault_end();
        if (!ok) { n_bad++; NOTE("trial %d: solve failed: %s", trial, cc_last_error(lctx)); }
        else {
            int valid = cc_schedule_check(lctx, g, s1.start_us, NULL) == CC_OK && (!in || tu_check(in, s1.start_us, &mk, msg, sizeof msg));
            n_graphs++;
            failures += s1_st.exact_failures;
            if (!valid || s1.makespan_us > s0.makespan_us + 1e-9) {
                n_bad++;
                NOTE("trial %d: valid %d, makespan %g (start %g)", trial, valid, s1.makespan_us, s0.makespan_us);
            }
            if ((s1_st.exact_failures > 0) != (s1_st.exact_status == CC_ERR_BACKEND) ||
                (s1_st.exact_failures > 0 && !strstr(s1_st.exact_message, "NUMFAILURE"))) {
                n_bad++;
                NOTE("trial %d (%s): exact_failures %lld, exact_status %s, message \"%s\"", trial,
                     ex == CC_EXACT_BOTH ? "both" : "lp_solve", (long long)s1_st.exact_failures, tu_res_name(s1_st.exact_status),
                     s1_st.exact_message);
            }
            if (cc_last_result(lctx) != CC_OK) {
                n_bad++;
                NOTE("trial %d: a window failure reached the last error: %s", trial, cc_last_error(lctx));
            }
        }
        if (ok0) cc_schedule_release(lctx, &s0);
        if (ok) cc_schedule_release(lctx, &s1);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(n_bad == 0 && n_graphs == 6 && failures > 0 && n_logged == 0,
          "odd-even windows with lp_solve's solve failing (6 graphs, lp_solve alone and both): valid, never worse than the "
          "start, %lld failed windows counted (exact_status CC_ERR_BACKEND, NUMFAILURE in the message), %d logged, none in "
          "the last error (%d problems)", (long long)failures, n_logged, n_bad);
    cc_context_destroy(lctx);
}

int main(void) {
    cc_context_create(NULL, &ctx);
    TH_RUN(test_incumbent_optimal);
    TH_RUN(test_windows_hand);
    TH_RUN(test_model_horizons);
    TH_RUN(test_random_cumulative);
    TH_RUN(test_random_small);
    TH_RUN(test_j30_sample);
    TH_RUN(test_windows_stepgraph);
    TH_RUN(test_windows_random);
    TH_RUN(test_timeout);
    TH_RUN(test_warm_start);
    TH_RUN(test_fault_whole_graph);
    TH_RUN(test_fault_both);
    TH_RUN(test_fault_windows);
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
