/* tests/test_sched.c - every scheduling method against the test's own
   brute-force optimum on small random instances, and against the test's
   own checker and lower bounds on larger ones. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"
#include "../examples/steps/synthetic_step.h"

static cc_context* ctx;

#define EPS 1e-6

/* Failure counters with the first few messages shown. */
typedef struct tally { const char* what; int n_bad; int n_seen; } tally;
static void bad(tally* t, const char* fmt, ...) {
    if (t->n_bad++ < 4) {
        char buf[900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        NOTE("%s: %s", t->what, buf);
    }
}

typedef struct method {
    char name[48];
    cc_sched_desc desc;
} method;

static int make_methods(method* m, uint64_t seed) {
    int n = 0, p, sgs, imp;
    static const char* prio_names[] = {"default", "program_order", "lft", "lst", "mts", "grpw", "bottom_level"};
    for (p = CC_PRIO_DEFAULT; p < CC__PRIO_COUNT; p++)
        for (sgs = CC_SGS_SERIAL; sgs <= CC_SGS_PARALLEL; sgs++)
            for (imp = 0; imp < 2; imp++) {
                m[n].desc = tu_sched_desc();
                m[n].desc.method = CC_SCHED_LIST;
                m[n].desc.tuning.priority = (cc_priority)p;
                m[n].desc.tuning.sgs = (cc_sgs)sgs;
                m[n].desc.tuning.improve_passes = imp ? -1 : 0;
                snprintf(m[n].name, sizeof m[n].name, "LIST/%s/%s%s", prio_names[p], sgs == CC_SGS_SERIAL ? "serial" : "parallel",
                         imp ? "/no-improve" : "");
                n++;
            }
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_SAMPLING;
    m[n].desc.tuning.budget_schedules = 100;
    m[n].desc.seed = seed;
    snprintf(m[n].name, sizeof m[n].name, "SAMPLING/100");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_ODD_EVEN;
    snprintf(m[n].name, sizeof m[n].name, "ODD_EVEN/default");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_ODD_EVEN;
    m[n].desc.window_ops = 2;
    m[n].desc.rounds = 3;
    snprintf(m[n].name, sizeof m[n].name, "ODD_EVEN/b=2,k=3");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_ODD_EVEN;
    m[n].desc.window_ops = 1;
    m[n].desc.tuning.window_max_ops = 6;
    snprintf(m[n].name, sizeof m[n].name, "ODD_EVEN/b=1, deeper to 6");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_ODD_EVEN;
    m[n].desc.rounds = -1;
    snprintf(m[n].name, sizeof m[n].name, "ODD_EVEN/rounds=-1 (none)");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_AUTO;
    snprintf(m[n].name, sizeof m[n].name, "AUTO");
    n++;
    m[n].desc = tu_sched_desc();
    m[n].desc.method = CC_SCHED_BNB;
    snprintf(m[n].name, sizeof m[n].name, "BNB");
    n++;
    return n;
}

/* Properties every returned schedule has, judged by the test alone. Returns
   the makespan, or -1 after reporting. */
static double judge(tally* t, const char* where, const tu_inst* in, const cc_schedule* s, const cc_sched_stats* st, double cp,
                    double rb) {
    char msg[300];
    double mk = 0;
    if (s->n_ops != in->n || (in->n > 0 && (!s->start_us || !s->order))) {
        bad(t, "%s: n_ops %d (expected %d), start_us %p, order %p", where, s->n_ops, in->n, (void*)s->start_us, (void*)s->order);
        return -1;
    }
    if (!tu_check(in, s->start_us, &mk, msg, sizeof msg)) {
        bad(t, "%s: invalid schedule: %s", where, msg);
        return -1;
    }
    if (fabs(mk - s->makespan_us) > EPS) {
        bad(t, "%s: makespan_us %g but the start times give %g", where, s->makespan_us, mk);
        return -1;
    }
    if (s->lower_bound_us > s->makespan_us + EPS || s->lower_bound_us < cp - EPS) {
        bad(t, "%s: lower_bound_us %g outside [critical path %g, makespan %g]", where, s->lower_bound_us, cp, s->makespan_us);
        return -1;
    }
    if (fabs(s->lb_critical_path_us - cp) > EPS) {
        bad(t, "%s: lb_critical_path_us %g, reference critical path %g", where, s->lb_critical_path_us, cp);
        return -1;
    }
    if (s->lb_resource_us < rb - EPS || s->lb_resource_us > s->makespan_us + EPS) {
        bad(t, "%s: lb_resource_us %g outside [load/capacity %g, makespan %g]", where, s->lb_resource_us, rb, s->makespan_us);
        return -1;
    }
    if (s->proven_optimal && fabs(s->makespan_us - s->lower_bound_us) > EPS) {
        bad(t, "%s: proven_optimal but makespan %g != lower_bound_us %g", where, s->makespan_us, s->lower_bound_us);
        return -1;
    }
    /* every method here uses branch and bound, whose budget stops (nodes,
       windows) are normal ends, never failures */
    if (st->exact_status != CC_OK || st->exact_failures != 0 || st->exact_message[0]) {
        bad(t, "%s: branch and bound reported a failure: exact_status %s, exact_failures %lld, \"%s\"", where,
            tu_res_name(st->exact_status), (long long)st->exact_failures, st->exact_message);
        return -1;
    }
    return mk;
}

/* The order array, checked with the graph (cc_op_index) and the instance's
   edges against the header: "ops by start time; at equal starts
   zero-duration ops first, then by index, never before a dependency".
   t_order: a permutation by start time that puts every op after its
   predecessors. t_ties: at equal starts zero-duration ops first, and an op
   follows one with a larger index of its own kind only when it has a
   predecessor starting at the same time (the dependency comes first). */
static void order_ok(tally* t_order, tally* t_ties, const char* where, const tu_inst* in, cc_graph* g, const cc_schedule* s) {
    int n = s->n_ops, i, j, prev = -1, tie_reported = 0;
    int* pos = (int*)malloc(sizeof(int) * ((size_t)n + 1));
    for (i = 0; i < n; i++) pos[i] = -1;
    for (i = 0; i < n; i++) {
        int x = cc_op_index(g, s->order[i]);
        if (x < 0 || x >= n || pos[x] >= 0) {
            bad(t_order, "%s: order[%d] is not a new op (index %d)", where, i, x);
            free(pos);
            return;
        }
        pos[x] = i;
        if (prev >= 0 && s->start_us[x] < s->start_us[prev]) {
            bad(t_order, "%s: order[%d] = j%d (start %g) after j%d (start %g)", where, i, x, s->start_us[x], prev, s->start_us[prev]);
            free(pos);
            return;
        }
        if (prev >= 0 && s->start_us[x] == s->start_us[prev] && !tie_reported) {
            int zx = in->dur[x] == 0, zp = in->dur[prev] == 0, has_tied_pred = 0;
            for (j = 0; j < n; j++)
                if (in->adj[j * n + x] && s->start_us[j] == s->start_us[x]) has_tied_pred = 1;
            if (zx && !zp) {
                bad(t_ties, "%s: order[%d] = j%d (zero duration) after j%d (duration %g), both start at %g", where, i, x, prev,
                    in->dur[prev], s->start_us[x]);
                tie_reported = 1;
            } else if (zx == zp && x < prev && !has_tied_pred) {
                bad(t_ties, "%s: order[%d] = j%d after j%d, both start at %g, and j%d has no predecessor starting then", where, i,
                    x, prev, s->start_us[x], x);
                tie_reported = 1;
            }
        }
        prev = x;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (in->adj[i * n + j] && pos[i] > pos[j]) {
                bad(t_order, "%s: j%d comes before its predecessor j%d in order", where, j, i);
                i = n;
                break;
            }
    free(pos);
}

static void test_brute_force(void) {
    tu_rng rng = {20250101};
    method m[64];
    int n_methods, trial, j;
    int n_trials = 600;
    tally t_solve = {"solve returns CC_OK", 0, 0};
    tally t_valid = {"schedule valid, makespan and bounds consistent (own checker)", 0, 0};
    tally t_check = {"cc_schedule_check accepts", 0, 0};
    tally t_order = {"order is a permutation by start time, never before a dependency", 0, 0};
    tally t_ties = {"order at equal starts: zero-duration ops first, then by index", 0, 0};
    tally t_below = {"makespan never below the optimum", 0, 0};
    tally t_lb = {"lower_bound_us never above the optimum", 0, 0};
    tally t_bnb = {"BNB: proven_optimal and makespan == optimum", 0, 0};
    tally t_proven = {"proven_optimal implies makespan == optimum", 0, 0};
    tally t_cc_lb = {"cc_lower_bounds matches the reference", 0, 0};
    double gap_sum[64], secs[64], brute_secs = 0;
    int n_opt[64];
    long max_nodes = 0;
    int n_stream = 0, n_frac = 0, sizes[10] = {0};
    memset(gap_sum, 0, sizeof gap_sum);
    memset(secs, 0, sizeof secs);
    memset(n_opt, 0, sizeof n_opt);
    n_methods = make_methods(m, 1);
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        double opt, cp, rb, cp_lib = -1, rb_lib = -1;
        long nodes = 0;
        gen.n_min = 2; gen.n_max = 9;
        gen.k_min = 2; gen.k_max = 3;
        gen.streams = trial % 5 == 4;
        gen.cap_max = 4;
        gen.dur_max = 5;
        gen.unit_us = trial % 4 == 3 ? 0.25 : 1.0;
        gen.p_edge_max = 0.5;
        gen.p_no_stream = 0.15;
        in = tu_random_inst(&rng, &gen);
        n_stream += in->streams;
        n_frac += gen.unit_us != 1.0;
        sizes[in->n]++;
        {
            clock_t c0 = clock();
            opt = tu_brute_force(in, gen.unit_us, &nodes);
            brute_secs += (double)(clock() - c0) / CLOCKS_PER_SEC;
        }
        if (nodes > max_nodes) max_nodes = nodes;
        cp = tu_critical_path(in);
        rb = tu_resource_bound(in);
        if (tu_build_graph(ctx, in, &g) != CC_OK) {
            bad(&t_solve, "trial %d: building the graph failed: %s", trial, cc_last_error(ctx));
            tu_inst_free(in);
            continue;
        }
        t_cc_lb.n_seen++;
        if (cc_lower_bounds(ctx, g, &cp_lib, &rb_lib) != CC_OK || fabs(cp_lib - cp) > EPS || rb_lib < rb - EPS ||
            rb_lib > opt + EPS)
            bad(&t_cc_lb, "trial %d: critical path %g (reference %g), resource bound %g (load/capacity %g, optimum %g) %s",
                trial, cp_lib, cp, rb_lib, rb, opt, cc_last_error(ctx));
        for (j = 0; j < n_methods; j++) {
            cc_schedule s;
            cc_sched_stats s_st;
            char where[256];
            double mk, mk_check = -1;
            cc_result r;
            memset(&s, 0, sizeof s);
            snprintf(where, sizeof where, "trial %d (n=%d, k=%d%s) %.48s", trial, in->n, in->k, in->streams ? ", streams" : "",
                     m[j].name);
            t_solve.n_seen++;
            {
                clock_t c0 = clock();
                r = cc_sched_solve_stats(ctx, g, &m[j].desc, &s, &s_st);
                secs[j] += (double)(clock() - c0) / CLOCKS_PER_SEC;
            }
            if (r != CC_OK) {
                bad(&t_solve, "%s: %s: %s", where, tu_res_name(r), cc_last_error(ctx));
                continue;
            }
            t_valid.n_seen++;
            mk = judge(&t_valid, where, in, &s, &s_st, cp, rb);
            if (mk >= 0) {
                order_ok(&t_order, &t_ties, where, in, g, &s);
                r = cc_schedule_check(ctx, g, s.start_us, &mk_check);
                if (r != CC_OK || fabs(mk_check - mk) > EPS)
                    bad(&t_check, "%s: %s, makespan %g (reference %g): %s", where, tu_res_name(r), mk_check, mk,
                        r ? cc_last_error(ctx) : "");
                if (mk < opt - EPS) bad(&t_below, "%s: makespan %g below the brute-force optimum %g", where, mk, opt);
                if (s.lower_bound_us > opt + EPS)
                    bad(&t_lb, "%s: lower_bound_us %g above the optimum %g", where, s.lower_bound_us, opt);
                if (s.proven_optimal && fabs(mk - opt) > EPS)
                    bad(&t_proven, "%s: proven_optimal with makespan %g, optimum %g", where, mk, opt);
                if (m[j].desc.method == CC_SCHED_BNB && (!s.proven_optimal || fabs(mk - opt) > EPS))
                    bad(&t_bnb, "%s: proven_optimal %d, makespan %g, brute-force optimum %g (%lld nodes)", where,
                        s.proven_optimal, mk, opt, (long long)s_st.n_nodes);
                gap_sum[j] += opt > 0 ? (mk - opt) / opt : 0;
                n_opt[j] += fabs(mk - opt) <= EPS;
            }
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d instances: %d stream graphs, %d with 0.25 us units; sizes 2..9: %d %d %d %d %d %d %d %d; brute force <= %ld nodes, %.1f s",
         n_trials, n_stream, n_frac, sizes[2], sizes[3], sizes[4], sizes[5], sizes[6], sizes[7], sizes[8], sizes[9], max_nodes,
         brute_secs);
    for (j = 0; j < n_methods; j++)
        if (j % 4 == 0 || m[j].desc.method != CC_SCHED_LIST)
            NOTE("%-36s optimal on %3d/%d, mean gap %.2f%%, %.2f s", m[j].name, n_opt[j], n_trials, 100.0 * gap_sum[j] / n_trials,
                 secs[j]);
    CHECK_INT(t_solve.n_bad, 0, "%s (%d solves)", t_solve.what, t_solve.n_seen);
    CHECK_INT(t_valid.n_bad, 0, "%s", t_valid.what);
    CHECK_INT(t_check.n_bad, 0, "%s", t_check.what);
    CHECK_INT(t_order.n_bad, 0, "%s", t_order.what);
    CHECK_INT(t_ties.n_bad, 0, "%s", t_ties.what);
    CHECK_INT(t_below.n_bad, 0, "%s", t_below.what);
    CHECK_INT(t_lb.n_bad, 0, "%s", t_lb.what);
    CHECK_INT(t_proven.n_bad, 0, "%s", t_proven.what);
    CHECK_INT(t_bnb.n_bad, 0, "%s (%d instances)", t_bnb.what, n_trials);
    CHECK_INT(t_cc_lb.n_bad, 0, "%s (%d instances)", t_cc_lb.what, t_cc_lb.n_seen);
}

/* Larger graphs: no optimum known to the test, but validity, bounds and
   internal consistency are. */
static void test_larger(void) {
    tu_rng rng = {99};
    method m[64];
    int n_methods, trial, j, mj;
    double secs[64];
    tally t_all = {"larger graphs", 0, 0};
    tally t_order = {"larger graphs: order", 0, 0};
    tally t_ties = {"larger graphs: ties in order", 0, 0};
    n_methods = make_methods(m, 3);
    memset(secs, 0, sizeof secs);
    for (trial = 0; trial < 16; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        double cp, rb;
        gen.n_min = 20; gen.n_max = trial < 12 ? 60 : 200;
        gen.k_min = 1; gen.k_max = 4;
        gen.streams = trial % 2;
        gen.cap_max = 6;
        gen.dur_max = 20;
        gen.unit_us = trial % 3 == 0 ? 0.001 : 0.5;   /* 1 ns grid */
        gen.p_edge_max = 0.15;
        gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        cp = tu_critical_path(in);
        rb = tu_resource_bound(in);
        if (tu_build_graph(ctx, in, &g) != CC_OK) {
            bad(&t_all, "trial %d: build: %s", trial, cc_last_error(ctx));
            tu_inst_free(in);
            continue;
        }
        for (mj = 0; mj < n_methods; mj++) {
            cc_schedule s;
            cc_sched_stats s_st;
            char where[256];
            cc_sched_desc d;
            j = mj;
            if (m[j].desc.method == CC_SCHED_LIST && m[j].desc.tuning.improve_passes < 0 && trial > 4) continue;
            d = m[j].desc;
            if (d.method == CC_SCHED_BNB || d.method == CC_SCHED_AUTO) d.tuning.bnb_nodes = 2000;   /* keep it quick */
            if (d.method == CC_SCHED_AUTO) d.tuning.budget_schedules = 500;
            memset(&s, 0, sizeof s);
            snprintf(where, sizeof where, "large trial %d (n=%d, k=%d%s) %.48s", trial, in->n, in->k, in->streams ? ", streams" : "",
                     m[j].name);
            t_all.n_seen++;
            {
                clock_t c0 = clock();
                cc_result r = cc_sched_solve_stats(ctx, g, &d, &s, &s_st);
                secs[j] += (double)(clock() - c0) / CLOCKS_PER_SEC;
                if (r != CC_OK) {
                    bad(&t_all, "%s: %s", where, cc_last_error(ctx));
                    continue;
                }
            }
            if (judge(&t_all, where, in, &s, &s_st, cp, rb) >= 0) order_ok(&t_order, &t_ties, where, in, g, &s);
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    for (j = 0; j < n_methods; j++)
        if (secs[j] > 1.0) NOTE("%s took %.1f s", m[j].name, secs[j]);
    CHECK_INT(t_all.n_bad, 0, "16 graphs of 20-200 ops x every method (%d solves): valid, bounds below makespan, "
              "critical path exact", t_all.n_seen);
    CHECK_INT(t_order.n_bad, 0, "larger graphs: order is a permutation by start time, never before a dependency");
    CHECK_INT(t_ties.n_bad, 0, "larger graphs: order at equal starts: zero-duration ops first, then by index");
}

static void test_edge_cases(void) {
    cc_graph* g = NULL;
    cc_schedule s;
    cc_sched_desc sd = tu_sched_desc();
    cc_op_desc d = {0};
    cc_op a;
    int meth;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    for (meth = CC_SCHED_AUTO; meth <= CC_SCHED_ODD_EVEN; meth++) {
        memset(&s, 0, sizeof s);
        sd.method = (cc_sched_method)meth;
        CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_OK, "method %d: an empty graph solves", meth);
        CHECK(s.n_ops == 0 && s.makespan_us == 0, "method %d: empty graph: 0 ops, makespan 0 (got %d, %g)", meth, s.n_ops,
              s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    d.name = "solo";
    d.duration_us = 0.5;
    cc_graph_add_op(g, &d, &a);
    for (meth = CC_SCHED_AUTO; meth <= CC_SCHED_ODD_EVEN; meth++) {
        memset(&s, 0, sizeof s);
        sd.method = (cc_sched_method)meth;
        if (CHECK(cc_sched_solve(ctx, g, &sd, &s) == CC_OK, "method %d: one op solves", meth)) {
            CHECK(s.n_ops == 1 && s.start_us[0] == 0 && s.makespan_us == 0.5 && s.order[0].id == a.id,
                  "method %d: one op starts at 0, makespan 0.5 (got %g)", meth, s.makespan_us);
            CHECK(s.proven_optimal == 1 || meth != CC_SCHED_BNB, "BNB proves a single op optimal");
        }
        cc_schedule_release(ctx, &s);
    }
    cc_schedule_release(ctx, &s);   /* releasing twice is harmless */
    cc_graph_destroy(g);
    {
        cc_schedule e;
        memset(&e, 0, sizeof e);
        cc_schedule_release(ctx, &e);   /* releasing an empty one too */
        CHECK(1, "releasing an empty schedule does not crash");
    }
    sd = cc_sched_query_defaults(NULL, 10);
    CHECK(sd.method == CC_SCHED_AUTO && sd.time_limit_s == 0, "the zero desc: AUTO, no time limit");
}

/* Durations on the 1 ns grid are exact: a chain of 0.001 + 1.234 + 0.017 us
   ends at exactly 1.252 us. Durations below the grid are only reported. */
static void test_grid(void) {
    cc_graph* g = NULL;
    cc_op a, b, c;
    cc_op_desc d = {0};
    cc_schedule s;
    cc_sched_desc sd = tu_sched_desc();
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    d.name = "ns_a"; d.duration_us = 0.001; cc_graph_add_op(g, &d, &a);
    d.name = "ns_b"; d.duration_us = 1.234; d.deps = &a; d.n_deps = 1; cc_graph_add_op(g, &d, &b);
    d.name = "ns_c"; d.duration_us = 0.017; d.deps = &b; d.n_deps = 1; d.stream = CC_STREAM_COMM; cc_graph_add_op(g, &d, &c);
    memset(&s, 0, sizeof s);
    if (CHECK(cc_sched_solve(ctx, g, &sd, &s) == CC_OK, "a chain of 0.001, 1.234, 0.017 us solves")) {
        CHECK(fabs(s.start_us[1] - 0.001) < 1e-12 && fabs(s.start_us[2] - 1.235) < 1e-12 && fabs(s.makespan_us - 1.252) < 1e-12,
              "starts 0, 0.001, 1.235 and makespan 1.252 to the nanosecond (got %.12g %.12g, %.12g)", s.start_us[1], s.start_us[2],
              s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    cc_op_set_duration(g, a, 0.0004);
    memset(&s, 0, sizeof s);
    if (cc_sched_solve(ctx, g, &sd, &s) == CC_OK) {
        NOTE("with ns_a = 0.0004 us (below the grid): ns_b starts at %.7g us, makespan %.7g us (the spec does not say how "
             "durations are rounded to the grid)", s.start_us[1], s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
}

/* cc_sched_query_defaults returns what a solve uses: solving with the
   resolved desc gives the same schedule, counts and bound as solving with
   the zero desc, for every method on graphs below and above the sizes
   where the defaults change (200 ops for AUTO's branch and bound); and the
   resolved budgets are the ones the solve stops at. */
static void test_query_defaults(void) {
    static const cc_sched_method methods[] = { CC_SCHED_AUTO, CC_SCHED_LIST, CC_SCHED_SAMPLING, CC_SCHED_BNB, CC_SCHED_ODD_EVEN };
    static const int sizes[] = { 12, 40, 230 };
    tu_rng rng = {4242};
    int si, mi, same = 0, cases = 0, filled = 1, nodes_ok = 1;
    char first[300] = "";
    for (si = 0; si < 3; si++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        gen.n_min = gen.n_max = sizes[si];
        gen.k_min = 2; gen.k_max = 2; gen.streams = 1; gen.cap_max = 1; gen.dur_max = 30; gen.unit_us = 1.0;
        gen.p_edge_max = 0.1; gen.p_no_stream = 0.0;
        in = tu_random_inst(&rng, &gen);
        if (tu_build_graph(ctx, in, &g) != CC_OK) { tu_inst_free(in); CHECK(0, "build"); continue; }
        for (mi = 0; mi < 5; mi++) {
            cc_sched_desc zero = tu_sched_desc(), q;
            cc_schedule a, b;
            cc_sched_stats b_st;
            cc_sched_stats a_st;
            int i, eq;
            zero.method = methods[mi];
            q = cc_sched_query_defaults(&zero, cc_graph_n_ops(g));
            if (q.tuning.sgs == CC_SGS_DEFAULT || q.tuning.priority == CC_PRIO_DEFAULT || q.tuning.improve_passes == 0 || q.tuning.budget_schedules == 0 ||
                q.tuning.bnb_nodes == 0 || q.window_ops == 0 || q.rounds == 0 || q.tuning.window_nodes == 0 || q.exact == CC_EXACT_DEFAULT ||
                q.tuning.lp_time_limit_s == 0 || q.tuning.lp_window_time_limit_s == 0 || q.tuning.restarts == 0 || q.method != zero.method)
                filled = 0;
            memset(&a, 0, sizeof a);
            memset(&b, 0, sizeof b);
            if (cc_sched_solve_stats(ctx, g, &zero, &a, &a_st) != CC_OK || cc_sched_solve_stats(ctx, g, &q, &b, &b_st) != CC_OK) {
                CHECK(0, "solve: %s", cc_last_error(ctx));
                continue;
            }
            eq = a.makespan_us == b.makespan_us && a.lower_bound_us == b.lower_bound_us && a_st.n_schedules == b_st.n_schedules &&
                 a_st.n_nodes == b_st.n_nodes && a.proven_optimal == b.proven_optimal;
            for (i = 0; i < a.n_ops && eq; i++) eq = a.order[i].id == b.order[i].id && a.start_us[i] == b.start_us[i];
            cases++;
            if (eq) same++;
            else if (!first[0])
                snprintf(first, sizeof first, "%d ops, method %d: makespan %g vs %g, %lld vs %lld schedules, %lld vs %lld nodes",
                         cc_graph_n_ops(g), (int)zero.method, a.makespan_us, b.makespan_us, (long long)a_st.n_schedules,
                         (long long)b_st.n_schedules, (long long)a_st.n_nodes, (long long)b_st.n_nodes);
            if (methods[mi] == CC_SCHED_BNB && a_st.n_nodes > q.tuning.bnb_nodes) nodes_ok = 0;
            if (methods[mi] == CC_SCHED_SAMPLING && a_st.n_schedules > q.tuning.budget_schedules + 2 * 6 * (q.tuning.improve_passes + 1) + 64)
                nodes_ok = 0;
            cc_schedule_release(ctx, &a);
            cc_schedule_release(ctx, &b);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(filled, "every field of the resolved desc is set (no zero left that means a default)");
    th__check(same == cases && cases == 15, __FILE__, __LINE__, first,
              "the resolved desc gives the zero desc's schedule, counts and bounds (%d of %d cases)", same, cases);
    CHECK(nodes_ok, "branch and bound stays within the resolved bnb_nodes, sampling near the resolved budget");
    {
        cc_sched_desc z = tu_sched_desc(), small, large;
        z.method = CC_SCHED_AUTO;
        small = cc_sched_query_defaults(&z, 100);
        large = cc_sched_query_defaults(&z, 1000);
        CHECK(small.tuning.priority == CC_PRIO_LFT && large.tuning.priority == CC_PRIO_ALL,
              "AUTO: one rule (LFT) up to 200 ops, every rule above (%d, %d)", (int)small.tuning.priority, (int)large.tuning.priority);
        CHECK(small.tuning.bnb_nodes > large.tuning.bnb_nodes && large.tuning.bnb_nodes >= 1, "the default node budget shrinks with size (%lld, %lld)",
              (long long)small.tuning.bnb_nodes, (long long)large.tuning.bnb_nodes);
        z.tuning.bnb_nodes = -1;
        CHECK(cc_sched_query_defaults(&z, 100).tuning.bnb_nodes == -1, "a set field (bnb_nodes -1: none) is kept");
    }
}

/* The odd-even windows' report (n_windows, n_windows_proven,
   window_gap_max, window_ms_max).
   A two-machine flow shop on the compute and the communication stream:
   job 1 computes 1 us then sends 4 us, job 2 computes 4 then sends 1. The
   simple bounds give 5 (each stream's load 5, each chain 5); by Johnson's
   rule (job 1 first: compute 0-1, 1-5; send 1-5, 5-6) the optimum is 6.
   Windows are cut from the 4 ops by start: with b = 2 and one round, one
   window of all 4 ops (offset 0); with b = 1, windows of ops 0-1 and 2-3.
   Windows of at most 4 ops are searched to the end within 300 nodes, so
   every window is proven and the gap is 0. A flow shop of 20 such jobs
   (40 ops) in one window with a budget of 1 node leaves the window
   unproven and so reports a gap in (0, 1]. */
static void test_window_report(void) {
    cc_graph* g = NULL;
    cc_op c1, c2, s1, s2;
    cc_op_desc d = {0};
    cc_sched_desc sd;
    cc_schedule s;
    cc_sched_stats s_st;
    int b;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    d.name = "c1"; d.duration_us = 1; d.stream = CC_STREAM_COMPUTE; cc_graph_add_op(g, &d, &c1);
    d.name = "c2"; d.duration_us = 4; cc_graph_add_op(g, &d, &c2);
    d.name = "s1"; d.duration_us = 4; d.stream = CC_STREAM_COMM; d.deps = &c1; d.n_deps = 1; cc_graph_add_op(g, &d, &s1);
    d.name = "s2"; d.duration_us = 1; d.deps = &c2; cc_graph_add_op(g, &d, &s2);
    for (b = 1; b <= 2; b++) {
        sd = tu_sched_desc();
        sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = b; sd.rounds = 1;
        memset(&s, 0, sizeof s);
        if (!CHECK(cc_sched_solve_stats(ctx, g, &sd, &s, &s_st) == CC_OK, "flow shop, b = %d: solves", b)) continue;
        CHECK(fabs(s.makespan_us - 6) < EPS, "flow shop, b = %d: Johnson's optimum 6 (got %g)", b, s.makespan_us);
        if (CHECK(s.lower_bound_us < 6 - EPS, "flow shop: the solve's bound is below 6 (got %g), so the windows run",
                  s.lower_bound_us)) {
            CHECK_INT((int)s_st.n_windows, b == 1 ? 2 : 1, "flow shop, b = %d, one round: windows", b);
            CHECK_INT((int)s_st.n_windows_proven, (int)s_st.n_windows, "flow shop, b = %d: every window proven", b);
            CHECK(s_st.window_gap_max == 0 && s_st.window_ms_max >= 0, "flow shop, b = %d: gap 0 (got %g), time >= 0 (got %g)", b,
                  s_st.window_gap_max, s_st.window_ms_max);
        }
        cc_schedule_release(ctx, &s);
    }
    sd = tu_sched_desc();
    sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 2; sd.rounds = -1;
    memset(&s, 0, sizeof s);
    if (CHECK(cc_sched_solve_stats(ctx, g, &sd, &s, &s_st) == CC_OK, "flow shop, no rounds: solves")) {
        CHECK(s_st.n_windows == 0 && s_st.n_windows_proven == 0 && s_st.window_gap_max == 0 && s_st.window_ms_max == 0,
              "flow shop, no rounds: no window reported (got %lld)", (long long)s_st.n_windows);
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
    /* 20 such jobs, compute 1 + 7i mod 9, send 1 + 5i mod 9 */
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    for (b = 0; b < 20; b++) {
        cc_op c;
        d = (cc_op_desc){0};
        d.name = "c"; d.duration_us = 1 + (7 * b) % 9; d.stream = CC_STREAM_COMPUTE; cc_graph_add_op(g, &d, &c);
        d.name = "s"; d.duration_us = 1 + (5 * b) % 9; d.stream = CC_STREAM_COMM; d.deps = &c; d.n_deps = 1;
        cc_graph_add_op(g, &d, NULL);
    }
    sd = tu_sched_desc();
    sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 20; sd.rounds = 1; sd.tuning.window_nodes = 1;
    memset(&s, 0, sizeof s);
    if (CHECK(cc_sched_solve_stats(ctx, g, &sd, &s, &s_st) == CC_OK, "40-op flow shop, one window, 1 node: solves")) {
        if (CHECK(s.makespan_us > s.lower_bound_us + EPS, "40-op flow shop: above the bound (%g > %g), so the window runs",
                  s.makespan_us, s.lower_bound_us)) {
            CHECK_INT((int)s_st.n_windows, 1, "40 ops, b = 20, one round: one window");
            CHECK(s_st.n_windows_proven == 0 && s_st.window_gap_max > 0 && s_st.window_gap_max <= 1,
                  "40 ops, 1 node: the window unproven (%lld proven), gap in (0, 1] (got %g)", (long long)s_st.n_windows_proven,
                  s_st.window_gap_max);
        }
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
}

/* Deeper odd-even windows (window_max_ops) on random stream graphs of 6-9
   ops, 2-3 streams, durations 1-6 us, against the test's brute force:
   from windows of 2 ops (b = 1) the blocks grow 2, 3, 4, 6; at b = 6 the
   window of 12 ops holds the whole graph and its search (100,000 nodes,
   enough to finish on 9 ops) makes the schedule optimal. Without the
   deepening (window_max_ops 0) the windows of 2 ops leave some graphs above
   the optimum, so the test sees the deepening do something. Never worse
   than without it, and valid. A window_max_ops outside 0..4096 is refused,
   naming it. */
/* A random graph of 6-9 ops, 2-3 resources (streams, or capacities up to
   cap_max), durations 1-6 (zero durations, which have stream rules of their
   own, are skipped: returns 0), and its brute-force optimum. */
static int small_case(tu_rng* rng, int streams, int cap_max, tu_inst** in, cc_graph** g, double* opt) {
    tu_gen gen;
    long nodes = 0;
    int i, zero = 0;
    gen.n_min = 6; gen.n_max = 9; gen.k_min = 2; gen.k_max = 3; gen.streams = streams; gen.cap_max = cap_max;
    gen.dur_max = 6; gen.unit_us = 1.0; gen.p_edge_max = 0.4; gen.p_no_stream = 0;
    *in = tu_random_inst(rng, &gen);
    *g = NULL;
    for (i = 0; i < (*in)->n; i++) zero |= (*in)->dur[i] <= 0;
    if (zero || (*in)->n > 12 || tu_build_graph(ctx, *in, g) != CC_OK) {
        tu_inst_free(*in);
        cc_graph_destroy(*g);
        return 0;
    }
    *opt = tu_brute_force(*in, 1.0, &nodes);
    return 1;
}

/* Odd-even windows of 2 ops (window_nodes 100000), deepened to
   window_max_ops, with `perturbations` restarts, on the small graph g of
   in: the makespan and the starts (where starts is not NULL; zeros on a
   failure), or 1e30 with the solver's or the checker's message in msg. */
static double small_windows(cc_graph* g, const tu_inst* in, int window_max_ops, int perturbations, double* starts, char* msg,
                            size_t cap) {
    cc_sched_desc sd = tu_sched_desc();
    cc_schedule s;
    double m2 = 0, mk = 1e30;
    sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 1; sd.tuning.window_nodes = 100000;
    sd.tuning.window_max_ops = window_max_ops; sd.tuning.perturbations = perturbations;
    memset(&s, 0, sizeof s);
    msg[0] = 0;
    if (starts) memset(starts, 0, (size_t)in->n * sizeof(double));
    if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) snprintf(msg, cap, "%s", cc_last_error(ctx));
    else if (tu_check(in, s.start_us, &m2, msg, cap)) {
        mk = s.makespan_us;
        if (starts) memcpy(starts, s.start_us, (size_t)in->n * sizeof(double));
    }
    cc_schedule_release(ctx, &s);
    return mk;
}

/* A desc field set just out of range on either side (field 0:
   window_max_ops, 1: perturbations) is refused, the message naming it. */
static void check_refused(int field, int below, int above) {
    const char* name = field ? "perturbations" : "window_max_ops";
    cc_graph* g = NULL;
    cc_op_desc d = {0};
    cc_schedule s;
    int t;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    d.name = "a"; d.duration_us = 1; d.stream = CC_STREAM_COMPUTE; cc_graph_add_op(g, &d, NULL);
    for (t = 0; t < 2; t++) {
        cc_sched_desc sd = tu_sched_desc();
        int v = t ? above : below;
        if (field) sd.tuning.perturbations = v;
        else sd.tuning.window_max_ops = v;
        memset(&s, 0, sizeof s);
        CHECK(cc_sched_solve(ctx, g, &sd, &s) == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), name),
              "%s %d refused, naming it (%s)", name, v, cc_last_error(ctx));
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
}

static void test_deeper_windows(void) {
    tu_rng rng = { 4242 };
    int trial, n_improved = 0, n_above = 0, n_bad_opt = 0, n_worse = 0, n_invalid = 0, n_trials = 150;
    for (trial = 0; trial < n_trials; trial++) {
        tu_inst* in;
        cc_graph* g = NULL;
        double opt, mk[2] = { 0, 0 };
        int v;
        if (!small_case(&rng, 1, 1, &in, &g, &opt)) continue;
        for (v = 0; v < 2; v++) {
            char msg[300];
            mk[v] = small_windows(g, in, v ? 6 : 0, 0, NULL, msg, sizeof msg);
            if (mk[v] >= 1e30 && n_invalid++ < 3) NOTE("trial %d, deeper %d: %s", trial, v, msg);
        }
        if (mk[0] > opt + EPS) n_above++;
        if (mk[1] < mk[0] - EPS) n_improved++;
        if (mk[1] > mk[0] + EPS) n_worse++;
        if (fabs(mk[1] - opt) > EPS && n_bad_opt++ < 3)
            NOTE("trial %d (n=%d, k=%d): deeper windows %g, brute force %g", trial, in->n, in->k, mk[1], opt);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK_INT(n_invalid, 0, "deeper windows: every solve returns a valid schedule");
    CHECK_INT(n_bad_opt, 0, "deeper windows up to the whole graph reach the brute-force optimum");
    CHECK_INT(n_worse, 0, "deeper windows are never worse than the windows of 2 ops alone");
    CHECK(n_above > 0 && n_improved == n_above, "windows of 2 ops leave %d graphs above the optimum; the deepening improves %d",
          n_above, n_improved);
    check_refused(0, -1, 4097);
}

/* The schedule of a stream graph is never predicted later than the step as
   written: on graphs whose program order is an order of the graph, with
   the executor's costs (a launch per op, a wait per blocking cross-stream
   dependency, which favour orders with few waits, such as program order),
   from 60 to 6000 ops (above 5000 the parallel scheme), cc_sched_solve's
   makespan is at most cc_simulate's of program order, and the checker
   passes its starts. */
static void test_never_worse_than_program(void) {
    static const int sizes[] = { 60, 300, 1500, 6000 };
    tu_rng rng = { 99 };
    int t, trial;
    for (t = 0; t < 4; t++)
        for (trial = 0; trial < (sizes[t] > 2000 ? 2 : 5); trial++) {
            cc_graph_desc gd = {0};
            cc_graph* g = NULL;
            cc_exec_costs costs;
            cc_schedule sch;
            cc_op* ops;
            double prog = 0, mk = 0;
            int i, n = sizes[t];
            cc_result r;
            memset(&sch, 0, sizeof sch);
            memset(&costs, 0, sizeof costs);
            gd.n_streams = 3;
            r = cc_graph_create(ctx, &gd, &g);
            ops = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
            for (i = 0; i < n && r == CC_OK; i++) {
                cc_op_desc d = {0};
                cc_op deps[3];
                int j, nd = 0;
                for (j = 0; j < 3 && i > 0; j++)
                    if (tu_unit(&rng) < 0.6) deps[nd++] = ops[i - 1 - tu_randint(&rng, 0, i - 1 < 8 ? i - 1 : 8)];
                d.duration_us = 1 + tu_randint(&rng, 0, 40);
                d.stream = tu_randint(&rng, 0, 9) < 6 ? 0 : tu_randint(&rng, 1, 2);
                d.deps = deps;
                d.n_deps = nd;
                r = cc_graph_add_op(g, &d, &ops[i]);
            }
            costs.launch_us = 2;
            costs.wait_us = 15 + 10 * trial;
            if (r == CC_OK) r = cc_graph_set_exec_costs(g, &costs);
            if (r == CC_OK) r = cc_simulate(ctx, g, ops, n, NULL, &prog);
            if (r == CC_OK) r = cc_sched_solve(ctx, g, NULL, &sch);
            if (r == CC_OK) r = cc_schedule_check(ctx, g, sch.start_us, &mk);
            CHECK_RES(ctx, r, CC_OK, "%d ops, trial %d: program order simulated, the graph scheduled and checked", n, trial);
            CHECK(r != CC_OK || sch.makespan_us <= prog + 1e-9, "%d ops, trial %d: scheduled %.0f us <= program order's %.0f us", n,
                  trial, sch.makespan_us, prog);
            cc_schedule_release(ctx, &sch);
            cc_graph_destroy(g);
            free(ops);
        }
}

/* AUTO's restarts and neighbourhood search (desc.tuning.restarts) on graphs with
   cumulative resources. With the branch and bound off and the same seed,
   the first evolution is the same with and without them, and they only
   ever offer a better schedule: so restarts = 1 (the neighbourhood search
   on the incumbent alone) and the default 8 are never worse than -1 (none),
   never below the brute-force optimum, valid by the test's own checker and
   by cc_schedule_check, and the same on a second solve. Larger graphs (no
   optimum known) the same but for the optimum. */
static void test_restarts(void) {
    tu_rng rng = {777};
    int trial, n_trials = 300, n_big = 30, n_lns_better = 0, n_rs_better = 0, n_rs_opt = 0, n_none_opt = 0;
    tally t_solve = {"solve returns CC_OK", 0, 0};
    tally t_valid = {"schedule valid, makespan and bounds consistent (own checker)", 0, 0};
    tally t_check = {"cc_schedule_check accepts", 0, 0};
    tally t_worse = {"restarts and neighbourhood search never worse than none", 0, 0};
    tally t_below = {"never below the brute-force optimum", 0, 0};
    tally t_same = {"a second solve gives the same start times", 0, 0};
    for (trial = 0; trial < n_trials + n_big; trial++) {
        int big = trial >= n_trials, v, i;
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        double opt = -1, cp, rb, mk[3] = {-1, -1, -1};
        static const int rs[3] = {-1, 1, 0};
        gen.n_min = big ? 25 : 5; gen.n_max = big ? 40 : 9;
        gen.k_min = 2; gen.k_max = 3; gen.streams = 0; gen.cap_max = 4; gen.dur_max = 6; gen.unit_us = 1.0;
        gen.p_edge_max = big ? 0.15 : 0.4; gen.p_no_stream = 0.0;
        in = tu_random_inst(&rng, &gen);
        if (!big) { long nodes = 0; opt = tu_brute_force(in, gen.unit_us, &nodes); }
        cp = tu_critical_path(in);
        rb = tu_resource_bound(in);
        if (tu_build_graph(ctx, in, &g) != CC_OK) { bad(&t_solve, "trial %d: build: %s", trial, cc_last_error(ctx)); tu_inst_free(in); continue; }
        for (v = 0; v < 3; v++) {
            cc_sched_desc d = tu_sched_desc();
            cc_schedule s, s2;
            cc_sched_stats s_st;
            char where[160];
            double mc = -1;
            d.method = CC_SCHED_AUTO;
            d.tuning.bnb_nodes = -1;
            d.tuning.budget_schedules = big ? 60 : 20;
            d.seed = (uint64_t)trial;
            d.tuning.restarts = rs[v];
            snprintf(where, sizeof where, "trial %d (n=%d, k=%d) restarts=%d", trial, in->n, in->k, rs[v]);
            memset(&s, 0, sizeof s);
            memset(&s2, 0, sizeof s2);
            t_solve.n_seen++;
            if (cc_sched_solve_stats(ctx, g, &d, &s, &s_st) != CC_OK || cc_sched_solve(ctx, g, &d, &s2) != CC_OK) {
                bad(&t_solve, "%s: %s", where, cc_last_error(ctx));
                cc_schedule_release(ctx, &s); cc_schedule_release(ctx, &s2);
                continue;
            }
            mk[v] = judge(&t_valid, where, in, &s, &s_st, cp, rb);
            if (mk[v] >= 0) {
                if (cc_schedule_check(ctx, g, s.start_us, &mc) != CC_OK || fabs(mc - mk[v]) > EPS)
                    bad(&t_check, "%s: makespan %g (own %g): %s", where, mc, mk[v], cc_last_error(ctx));
                if (opt >= 0 && mk[v] < opt - EPS) bad(&t_below, "%s: makespan %g below the optimum %g", where, mk[v], opt);
                for (i = 0; i < in->n; i++)
                    if (s.start_us[i] != s2.start_us[i]) { bad(&t_same, "%s: j%d starts at %g, then %g", where, i, s.start_us[i], s2.start_us[i]); break; }
            }
            cc_schedule_release(ctx, &s);
            cc_schedule_release(ctx, &s2);
        }
        if (mk[0] >= 0 && mk[1] >= 0 && mk[2] >= 0) {
            if (mk[1] > mk[0] + EPS || mk[2] > mk[0] + EPS)
                bad(&t_worse, "trial %d: none %g, neighbourhood search %g, restarts %g", trial, mk[0], mk[1], mk[2]);
            n_lns_better += mk[1] < mk[0] - EPS;
            n_rs_better += mk[2] < mk[0] - EPS;
            if (!big) { n_none_opt += fabs(mk[0] - opt) <= EPS; n_rs_opt += fabs(mk[2] - opt) <= EPS; }
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d small instances: at the optimum %d without, %d with restarts; better than none: neighbourhood search alone %d, "
         "restarts %d (of %d)", n_trials, n_none_opt, n_rs_opt, n_lns_better, n_rs_better, n_trials + n_big);
    CHECK_INT(t_solve.n_bad, 0, "%s (%d solves)", t_solve.what, t_solve.n_seen);
    CHECK_INT(t_valid.n_bad, 0, "%s", t_valid.what);
    CHECK_INT(t_check.n_bad, 0, "%s", t_check.what);
    CHECK_INT(t_worse.n_bad, 0, "%s", t_worse.what);
    CHECK_INT(t_below.n_bad, 0, "%s", t_below.what);
    CHECK_INT(t_same.n_bad, 0, "%s", t_same.what);
    CHECK(n_rs_better > 0 && n_lns_better > 0, "restarts (%d) and the neighbourhood search alone (%d) each improve some "
          "instance over one evolution", n_rs_better, n_lns_better);
}

/* Johnson's rule for the two-machine flow shop (a[i] then b[i] on the
   second machine): jobs with a <= b first by increasing a, then the others
   by decreasing b; the optimum's makespan. */
static double johnson(const double* a, const double* b, int n) {
    int* ord = (int*)malloc((size_t)n * sizeof(int));
    int i, j, lo = 0, m;
    double t1 = 0, t2 = 0;
    if (!ord) return -1;
    for (i = 0; i < n; i++) if (a[i] <= b[i]) ord[lo++] = i;
    m = lo;
    for (i = 0; i < n; i++) if (a[i] > b[i]) ord[m++] = i;
    /* insertion sorts: the first group by increasing a, the second by decreasing b */
    for (i = 1; i < lo; i++) for (j = i; j > 0 && a[ord[j - 1]] > a[ord[j]]; j--) { int t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
    for (i = lo + 1; i < n; i++) for (j = i; j > lo && b[ord[j - 1]] < b[ord[j]]; j--) { int t = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = t; }
    for (i = 0; i < n; i++) { t1 += a[ord[i]]; t2 = (t2 > t1 ? t2 : t1) + b[ord[i]]; }
    free(ord);
    return t2;
}

/* Windows of 2x125 ops (each above CONCERTO__OE_INNER_MIN, so each is
   first improved by odd-even windows of its own, then searched): a
   two-machine flow shop of 150 jobs as a stream graph (compute, then
   communication; written in an order far from Johnson's), and random graphs
   of 260-320 ops with cumulative resources. Each schedule passes the
   test's checker, is no later than the list schedule the method starts
   from, reports its windows (gap in [0, 1]), and is the same when solved
   again; the flow shop is never below Johnson's optimum and ends within 2%
   of it. */
static void test_large_windows(void) {
    tu_rng rng = {125125};
    int trial, bad_valid = 0, bad_worse = 0, bad_report = 0, bad_det = 0, n_better = 0;
    for (trial = 0; trial < 3; trial++) {
        tu_inst* in;
        cc_graph* g = NULL;
        cc_schedule s[3];
        cc_sched_stats s_st[3];
        int v, i, ok = 1, nj = 150;
        char msg[300];
        double m2 = 0, opt = 0, a[150], b[150];
        if (trial == 0) {
            in = tu_inst_new(2 * nj, 2, 1);
            for (i = 0; i < nj; i++) {
                a[i] = 1 + (7 * i) % 9; b[i] = 1 + (5 * i + 3) % 9;
                in->dur[2 * i] = a[i]; in->dur[2 * i + 1] = b[i];
                tu_set_stream(in, 2 * i, 0); tu_set_stream(in, 2 * i + 1, 1);
                in->adj[(size_t)(2 * i) * in->n + 2 * i + 1] = 1;
            }
            opt = johnson(a, b, nj);
        } else {
            tu_gen gen;
            gen.n_min = 260; gen.n_max = 320; gen.k_min = 2; gen.k_max = 3; gen.streams = 0; gen.cap_max = 4;
            gen.dur_max = 9; gen.unit_us = 1.0; gen.p_edge_max = 0.006; gen.p_no_stream = 0;
            in = tu_random_inst(&rng, &gen);
        }
        if (!in || tu_build_graph(ctx, in, &g) != CC_OK) { CHECK(0, "trial %d: graph: %s", trial, cc_last_error(ctx)); tu_inst_free(in); continue; }
        memset(s, 0, sizeof s);
        for (v = 0; v < 3 && ok; v++) {
            cc_sched_desc sd = tu_sched_desc();
            sd.method = v == 0 ? CC_SCHED_LIST : CC_SCHED_ODD_EVEN;
            sd.window_ops = 125; sd.rounds = 1;
            ok = CHECK(cc_sched_solve_stats(ctx, g, &sd, &s[v], &s_st[v]) == CC_OK, "trial %d (n=%d), %s: solves (%s)", trial, in->n,
                       v ? "windows of 2x125" : "list", cc_last_error(ctx));
        }
        if (ok) {
            if (!tu_check(in, s[1].start_us, &m2, msg, sizeof msg) && bad_valid++ < 3) NOTE("trial %d: %s", trial, msg);
            if (s[1].makespan_us > s[0].makespan_us + EPS && bad_worse++ < 3)
                NOTE("trial %d: windows %g, list %g", trial, s[1].makespan_us, s[0].makespan_us);
            n_better += s[1].makespan_us < s[0].makespan_us - EPS;
            if ((s_st[1].n_windows < 1 || s_st[1].window_gap_max < 0 || s_st[1].window_gap_max > 1) && bad_report++ < 3)
                NOTE("trial %d: %lld windows, gap %g", trial, (long long)s_st[1].n_windows, s_st[1].window_gap_max);
            if ((s[1].makespan_us != s[2].makespan_us || memcmp(s[1].start_us, s[2].start_us, (size_t)in->n * sizeof(double))) && bad_det++ < 3)
                NOTE("trial %d: solved twice, %g and %g", trial, s[1].makespan_us, s[2].makespan_us);
            NOTE("trial %d (n=%d): list %g, windows of 2x125 %g (%lld of %lld windows proven, gap at most %.4f), bound %g", trial,
                 in->n, s[0].makespan_us, s[1].makespan_us, (long long)s_st[1].n_windows_proven, (long long)s_st[1].n_windows,
                 s_st[1].window_gap_max, s[1].lower_bound_us);
            if (trial == 0)
                CHECK(s[1].makespan_us >= opt - EPS && s[1].makespan_us <= 1.02 * opt + EPS,
                      "flow shop of 150 jobs: windows of 2x125 %g, not below Johnson's optimum %g and within 2%% of it", s[1].makespan_us, opt);
        }
        for (v = 0; v < 3; v++) cc_schedule_release(ctx, &s[v]);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK_INT(bad_valid, 0, "windows of 2x125 ops: every schedule passes the test's checker");
    CHECK_INT(bad_worse, 0, "windows of 2x125 ops: never later than the list schedule");
    CHECK_INT(bad_report, 0, "windows of 2x125 ops: windows reported, gap in [0, 1]");
    CHECK_INT(bad_det, 0, "windows of 2x125 ops: the same schedule when solved again");
    CHECK(n_better > 0, "windows of 2x125 ops improve some list schedules (%d of 3)", n_better);
}

/* The proof of a window's placement by shaving (window_prove) on
   two-machine flow shops of n jobs as stream graphs (compute, then
   communication), all 2n ops in one window (window_ops n, one round, 1 or
   300 nodes; 2n = 140 is a large window, with its inner search): the same
   schedule and windows as without it, never fewer windows proven nor a
   larger gap; a window proven holds the whole graph from time 0, so its
   makespan must be Johnson's optimum. Flow shops the search does not
   finish stay unproven (their makespans are above Johnson's), so the
   proof's effect is seen on the synthetic training step of 8 layers
   (examples/steps/synthetic_step.h, 169 ops, windows of 2x65 ops, 4 rounds): the same
   schedule, and windows proven that the search alone left open. A
   window_prove outside 0..1 is refused, the message naming it. */
/* The windows a solve leaves unproven, handed to the caller
   (cc_sched_tuning.on_window): each a consistent problem (its placement
   within releases, deadlines and precedences, its end the placement's,
   its bound below it), and the callback changes nothing of the solve. */
typedef struct win_seen {
    int n, bad;
    char why[200];
} win_seen;

static void on_window_check(const cc_sched_window* w, void* user_data) {
    win_seen* ws = (win_seen*)user_data;
    double end = w->first_start_us;
    int i, e;
    ws->n++;
    if (w->n_jobs <= 16 || w->n_resources < 1 || !(w->lower_bound_us < w->makespan_us) || !(w->grain_us > 0)) {
        if (!ws->bad++) snprintf(ws->why, sizeof ws->why, "window %d: %d jobs, bound %g, end %g, grain %g", ws->n - 1,
                                 w->n_jobs, w->lower_bound_us, w->makespan_us, w->grain_us);
        return;
    }
    for (i = 0; i < w->n_jobs; i++) {
        double s = w->start_us[i], f = s + w->duration_us[i];
        if (f > end) end = f;
        if (s < w->first_start_us - EPS || s < w->release_us[i] - EPS || (w->deadline_us[i] >= 0 && f > w->deadline_us[i] + EPS))
            if (!ws->bad++) snprintf(ws->why, sizeof ws->why, "window %d, job %d: [%g, %g) outside its release %g, deadline %g",
                                     ws->n - 1, i, s, f, w->release_us[i], w->deadline_us[i]);
        for (e = w->pred_off[i]; e < w->pred_off[i + 1]; e++) {
            int q = w->pred[e];
            if (q < 0 || q >= i || s < w->start_us[q] + w->duration_us[q] - EPS)
                if (!ws->bad++) snprintf(ws->why, sizeof ws->why, "window %d: job %d before its predecessor %d", ws->n - 1, i, q);
        }
    }
    if (fabs(end - w->makespan_us) > EPS && !ws->bad++)
        snprintf(ws->why, sizeof ws->why, "window %d: its placement ends at %g, reported %g", ws->n - 1, end, w->makespan_us);
}

static void test_window_callback(void) {
    cc_graph* g = NULL;
    cc_schedule s[2];
    cc_sched_stats st[2];
    win_seen ws;
    int v;
    memset(s, 0, sizeof s);
    memset(&ws, 0, sizeof ws);
    if (!CHECK(synthetic_step_build(ctx, 8, 2.0, 15, &g) == CC_OK, "the 8-layer step: built")) return;
    for (v = 0; v < 2; v++) {
        cc_sched_desc sd = {0};
        sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 65;
        if (v) { sd.tuning.on_window = on_window_check; sd.tuning.on_window_user_data = &ws; }
        CHECK(cc_sched_solve_stats(ctx, g, &sd, &s[v], &st[v]) == CC_OK, "the 8-layer step, windows of 2x65, callback %d: solves", v);
    }
    if (s[0].start_us && s[1].start_us) {
        CHECK(s[0].makespan_us == s[1].makespan_us && !memcmp(s[0].start_us, s[1].start_us, (size_t)s[0].n_ops * sizeof(double)) &&
              st[0].n_windows == st[1].n_windows && st[0].n_windows_proven == st[1].n_windows_proven,
              "the callback changes neither the schedule nor the windows (%g, %g)", s[0].makespan_us, s[1].makespan_us);
        CHECK(ws.n >= 1 && ws.n <= st[1].n_windows - st[1].n_windows_proven,
              "the callback sees the unproven windows: %d of %lld unproven", ws.n,
              (long long)(st[1].n_windows - st[1].n_windows_proven));
        CHECK(ws.bad == 0, "each window handed over is consistent (%s)", ws.why);
    }
    cc_schedule_release(ctx, &s[0]);
    cc_schedule_release(ctx, &s[1]);
    cc_graph_destroy(g);
}

static void test_window_prove(void) {
    static const int sizes[] = { 12, 20, 30, 70 };
    int si, nodes, bad = 0, n_open = 0, n_runs = 0;
    {
        cc_graph* g = NULL;
        cc_schedule s[2];
        cc_sched_stats s_st[2];
        int v;
        memset(s, 0, sizeof s);
        if (CHECK(synthetic_step_build(ctx, 8, 2.0, 15, &g) == CC_OK, "the 8-layer step: built")) {
            for (v = 0; v < 2; v++) {
                cc_sched_desc sd = tu_sched_desc();
                sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 65; sd.tuning.window_prove = v;
                CHECK(cc_sched_solve_stats(ctx, g, &sd, &s[v], &s_st[v]) == CC_OK, "the 8-layer step, prove %d: solves", v);
            }
            if (s[0].start_us && s[1].start_us) {
                CHECK(s[0].makespan_us == s[1].makespan_us && !memcmp(s[0].start_us, s[1].start_us, (size_t)s[0].n_ops * sizeof(double)) &&
                      s_st[0].n_windows == s_st[1].n_windows, "the 8-layer step: the same schedule and windows with the proof (%g, %g)",
                      s[0].makespan_us, s[1].makespan_us);
                CHECK(s_st[0].n_windows_proven < s_st[0].n_windows && s_st[1].n_windows_proven > s_st[0].n_windows_proven && s_st[1].window_gap_max < s_st[0].window_gap_max,
                      "the 8-layer step: windows proven %lld of %lld without the proof, %lld with it (gap %g, %g)",
                      (long long)s_st[0].n_windows_proven, (long long)s_st[0].n_windows, (long long)s_st[1].n_windows_proven, s_st[0].window_gap_max,
                      s_st[1].window_gap_max);
            }
            cc_schedule_release(ctx, &s[0]);
            cc_schedule_release(ctx, &s[1]);
            cc_graph_destroy(g);
        }
    }
    for (si = 0; si < 4; si++)
        for (nodes = 1; nodes <= 300; nodes += 299) {
            int nj = sizes[si], i, v;
            double a[70], b[70], opt;
            tu_inst* in = tu_inst_new(2 * nj, 2, 1);
            cc_graph* g = NULL;
            cc_schedule s[2];
            cc_sched_stats s_st[2];
            for (i = 0; i < nj; i++) {
                a[i] = 1 + (7 * i + nodes) % 9; b[i] = 1 + (5 * i + 3 * si) % 9;
                in->dur[2 * i] = a[i]; in->dur[2 * i + 1] = b[i];
                tu_set_stream(in, 2 * i, 0); tu_set_stream(in, 2 * i + 1, 1);
                in->adj[(size_t)(2 * i) * in->n + 2 * i + 1] = 1;
            }
            opt = johnson(a, b, nj);
            memset(s, 0, sizeof s);
            if (tu_build_graph(ctx, in, &g) != CC_OK) { CHECK(0, "flow shop of %d: graph: %s", nj, cc_last_error(ctx)); tu_inst_free(in); continue; }
            for (v = 0; v < 2; v++) {
                cc_sched_desc sd = tu_sched_desc();
                sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = nj; sd.rounds = 1; sd.tuning.window_nodes = nodes; sd.tuning.window_prove = v;
                if (!CHECK(cc_sched_solve_stats(ctx, g, &sd, &s[v], &s_st[v]) == CC_OK, "flow shop of %d, %d nodes, prove %d: solves", nj, nodes, v)) bad++;
            }
            if (s[0].start_us && s[1].start_us) {
                n_runs++;
                if ((s[1].makespan_us != s[0].makespan_us || memcmp(s[0].start_us, s[1].start_us, (size_t)in->n * sizeof(double)) ||
                     s_st[1].n_windows != s_st[0].n_windows || s_st[1].n_windows_proven < s_st[0].n_windows_proven ||
                     s_st[1].window_gap_max > s_st[0].window_gap_max) && bad++ < 3)
                    NOTE("flow shop of %d, %d nodes: makespan %g / %g, windows proven %lld / %lld, gap %g / %g", nj, nodes, s[0].makespan_us,
                         s[1].makespan_us, (long long)s_st[0].n_windows_proven, (long long)s_st[1].n_windows_proven, s_st[0].window_gap_max,
                         s_st[1].window_gap_max);
                n_open += s[1].makespan_us > opt + EPS;
                if (s_st[1].n_windows == 1 && s_st[1].n_windows_proven == 1 && fabs(s[1].makespan_us - opt) > EPS && bad++ < 3)
                    NOTE("flow shop of %d, %d nodes: the window proven at %g, Johnson's optimum %g", nj, nodes, s[1].makespan_us, opt);
                NOTE("flow shop of %d jobs, %d nodes: %g (Johnson %g), windows proven %lld of %lld, %lld with the proof", nj, nodes,
                     s[1].makespan_us, opt, (long long)s_st[0].n_windows_proven, (long long)s_st[0].n_windows, (long long)s_st[1].n_windows_proven);
            }
            cc_schedule_release(ctx, &s[0]);
            cc_schedule_release(ctx, &s[1]);
            cc_graph_destroy(g);
            tu_inst_free(in);
        }
    CHECK_INT(bad, 0, "window_prove: the same schedule, never less proven, a proof only at Johnson's optimum");
    {   /* windows of 2x65 ops (2b = 130 > 128: the inner search) on the
           synthetic steps of 5 and 6 layers (106 and 127 ops): each window
           holds at most CONCERTO__OE_PROVE_SMALL jobs, so one its search
           leaves open tries the proof without window_prove, and both give
           the same schedule, windows proven and gap. The search alone
           proves 1 of 3 and 0 of 4 of them (the proof: all 3, and 3) */
        int layers;
        for (layers = 5; layers <= 6; layers++) {
            cc_graph* g = NULL;
            cc_schedule s[2];
            cc_sched_stats s_st[2];
            int v;
            memset(s, 0, sizeof s);
            if (!CHECK(synthetic_step_build(ctx, layers, 2.0, 15, &g) == CC_OK, "the %d-layer step: built", layers)) continue;
            for (v = 0; v < 2; v++) {
                cc_sched_desc sd = tu_sched_desc();
                sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 65; sd.tuning.window_prove = v;
                CHECK(cc_sched_solve_stats(ctx, g, &sd, &s[v], &s_st[v]) == CC_OK, "the %d-layer step, prove %d: solves", layers, v);
            }
            if (s[0].start_us && s[1].start_us)
                CHECK(s[0].makespan_us == s[1].makespan_us && !memcmp(s[0].start_us, s[1].start_us, (size_t)s[0].n_ops * sizeof(double)) &&
                      s_st[0].n_windows == s_st[1].n_windows && s_st[0].n_windows_proven == s_st[1].n_windows_proven &&
                      s_st[0].window_gap_max == s_st[1].window_gap_max && s_st[0].n_windows_proven >= 3,
                      "the %d-layer step in windows of 2x65: the proof tried without window_prove (%lld of %lld proven, %lld with it; gap %g, %g)",
                      layers, (long long)s_st[0].n_windows_proven, (long long)s_st[0].n_windows, (long long)s_st[1].n_windows_proven,
                      s_st[0].window_gap_max, s_st[1].window_gap_max);
            cc_schedule_release(ctx, &s[0]);
            cc_schedule_release(ctx, &s[1]);
            cc_graph_destroy(g);
        }
    }
    CHECK(n_runs == 8 && n_open > 0, "window_prove on flow shops: %d runs, %d left above Johnson's optimum", n_runs, n_open);
    {
        cc_graph* g = NULL;
        cc_op_desc d = {0};
        cc_sched_desc sd = tu_sched_desc();
        cc_schedule s;
        if (cc_graph_create(ctx, NULL, &g) == CC_OK) {
            d.name = "c"; d.duration_us = 1;
            cc_graph_add_op(g, &d, NULL);
            sd.tuning.window_prove = 2;
            memset(&s, 0, sizeof s);
            CHECK(cc_sched_solve(ctx, g, &sd, &s) == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "window_prove"),
                  "window_prove 2 is refused, naming the field (%s)", cc_last_error(ctx));
            cc_graph_destroy(g);
        }
    }
}

/* Every allocation of a solve with perturbation restarts refused in turn
   (graph and solve in a context with a failing allocator): out of memory or
   the schedule of the run without refusals (makespan ref, starts ref_st),
   nothing leaked. */
static void perturb_oom(const tu_inst* in, double ref, const double* ref_st) {
    long k, n_allocs = 0;
    int bad = 0, n_oom = 0;
    for (k = 0; k <= n_allocs + 1; k++) {
        tu_alloc a;
        cc_context_desc cd = {0};
        cc_context* c2 = NULL;
        cc_graph* g = NULL;
        cc_schedule s;
        cc_sched_desc sd = tu_sched_desc();
        cc_result rc;
        memset(&a, 0, sizeof a);
        memset(&s, 0, sizeof s);
        a.fail_at = k;
        cd.allocator = tu_allocator(&a);
        if (cc_context_create(&cd, &c2) != CC_OK) continue;
        sd.method = CC_SCHED_ODD_EVEN; sd.window_ops = 1; sd.tuning.window_nodes = 100000; sd.tuning.perturbations = 20;
        rc = tu_build_graph(c2, in, &g);
        if (rc == CC_OK) rc = cc_sched_solve(c2, g, &sd, &s);
        if (k == 0) {
            n_allocs = a.n_calls;
            if (!CHECK(rc == CC_OK && s.makespan_us == ref, "no refusal: the same makespan %g (%g)", s.makespan_us, ref)) k = n_allocs + 2;
        } else {
            n_oom += rc == CC_ERR_OUT_OF_MEMORY;
            if ((rc != CC_OK && rc != CC_ERR_OUT_OF_MEMORY) ||
                (rc == CC_OK && (s.makespan_us != ref || memcmp(s.start_us, ref_st, (size_t)in->n * sizeof(double)))))
                if (bad++ < 3) NOTE("refusal %ld of %ld: rc %d, makespan %g", k, n_allocs, (int)rc, s.makespan_us);
        }
        cc_schedule_release(c2, &s);
        cc_graph_destroy(g);
        cc_context_destroy(c2);
        if (a.live || a.bad_frees) if (bad++ < 3) NOTE("refusal %ld: %ld blocks live, %ld bad frees", k, a.live, a.bad_frees);
    }
    CHECK_INT(bad, 0, "each of the %ld allocations of a solve with perturbations refused: out of memory or the same schedule, "
              "nothing leaked", n_allocs);
    CHECK(n_oom > 0, "refusals reach the caller as out of memory (%d)", n_oom);
}

/* Perturbation restarts of the odd-even windows (cc_sched_tuning.perturbations):
   on small random graphs (streams and cumulative resources) with windows of
   2 ops, against brute force: valid, never below the optimum, never later
   than the windows without restarts, the same schedule when solved again,
   and lower where the windows alone stay above the optimum; on a flow shop
   of 150 jobs with the default windows, never below Johnson's optimum; out
   of range refused, naming the field. */
static void test_perturb(void) {
    tu_rng rng = { 9191 };
    int trial, n_trials = 200, n_invalid = 0, n_below = 0, n_worse = 0, n_det = 0, n_above = 0, n_improved = 0, swept = 0;
    for (trial = 0; trial < n_trials; trial++) {
        tu_inst* in;
        cc_graph* g = NULL;
        double opt, mk[3] = { 0, 0, 0 }, st[2][12];
        int v;
        if (!small_case(&rng, trial % 2, 3, &in, &g, &opt)) continue;
        for (v = 0; v < 3; v++) {
            char msg[300];
            mk[v] = small_windows(g, in, 0, v ? 20 : 0, v ? st[v - 1] : NULL, msg, sizeof msg);
            if (mk[v] >= 1e30 && n_invalid++ < 3) NOTE("trial %d, perturbations %d: %s", trial, v ? 20 : 0, msg);
        }
        if (mk[1] < opt - EPS && n_below++ < 3) NOTE("trial %d: %g below the brute-force optimum %g", trial, mk[1], opt);
        if (mk[1] > mk[0] + EPS && n_worse++ < 3) NOTE("trial %d: with restarts %g, without %g", trial, mk[1], mk[0]);
        if ((mk[1] != mk[2] || memcmp(st[0], st[1], (size_t)in->n * sizeof(double))) && n_det++ < 3)
            NOTE("trial %d: solved twice, %g and %g", trial, mk[1], mk[2]);
        if (mk[0] > opt + EPS) {
            n_above++;
            n_improved += mk[1] < mk[0] - EPS;
            if (!swept) { swept = 1; perturb_oom(in, mk[1], st[0]); }
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(swept, "a graph for the allocation sweep");
    CHECK_INT(n_invalid, 0, "perturbations: every solve returns a schedule the test's checker accepts");
    CHECK_INT(n_below, 0, "perturbations: never below the brute-force optimum");
    CHECK_INT(n_worse, 0, "perturbations: never later than the windows without them");
    CHECK_INT(n_det, 0, "perturbations: the same schedule when solved again");
    CHECK(n_above > 0 && 2 * n_improved > n_above, "windows of 2 ops leave %d graphs above the optimum; 20 restarts lower %d of them",
          n_above, n_improved);
    {   /* a flow shop of 150 jobs on two streams, the default windows */
        tu_inst* in = tu_inst_new(300, 2, 1);
        cc_graph* g = NULL;
        double a[150], b[150], opt, m2 = 0, mk[2] = { 0, 0 };
        char msg[300];
        int i, v, ok = 1;
        for (i = 0; i < 150; i++) {
            a[i] = 1 + (7 * i) % 9; b[i] = 1 + (5 * i + 3) % 9;
            in->dur[2 * i] = a[i]; in->dur[2 * i + 1] = b[i];
            tu_set_stream(in, 2 * i, 0); tu_set_stream(in, 2 * i + 1, 1);
            in->adj[(size_t)(2 * i) * in->n + 2 * i + 1] = 1;
        }
        opt = johnson(a, b, 150);
        if (tu_build_graph(ctx, in, &g) != CC_OK) ok = CHECK(0, "flow shop graph: %s", cc_last_error(ctx));
        for (v = 0; v < 2 && ok; v++) {
            cc_sched_desc sd = tu_sched_desc();
            cc_schedule s;
            sd.method = CC_SCHED_ODD_EVEN; sd.tuning.perturbations = v ? 8 : 0;
            memset(&s, 0, sizeof s);
            ok = cc_sched_solve(ctx, g, &sd, &s) == CC_OK;
            if (!ok) CHECK(0, "flow shop, perturbations %d: %s", sd.tuning.perturbations, cc_last_error(ctx));
            if (ok) {
                msg[0] = 0;
                CHECK(tu_check(in, s.start_us, &m2, msg, sizeof msg), "flow shop, perturbations %d: valid %s", sd.tuning.perturbations, msg);
                mk[v] = s.makespan_us;
            }
            cc_schedule_release(ctx, &s);
        }
        if (ok)
            CHECK(mk[1] >= opt - EPS && mk[1] <= mk[0] + EPS,
                  "flow shop of 150 jobs: 8 restarts %g, not below Johnson's optimum %g, not later than none (%g)", mk[1], opt, mk[0]);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    check_refused(1, -1, 100001);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_edge_cases);
    TH_RUN(test_grid);
    TH_RUN(test_brute_force);
    TH_RUN(test_larger);
    TH_RUN(test_query_defaults);
    TH_RUN(test_window_report);
    TH_RUN(test_window_prove);
    TH_RUN(test_window_callback);
    TH_RUN(test_never_worse_than_program);
    TH_RUN(test_deeper_windows);
    TH_RUN(test_large_windows);
    TH_RUN(test_perturb);
    TH_RUN(test_restarts);
    cc_context_destroy(ctx);
    return th_done();
}
