/* tests/test_check.c - the independent checker cc_schedule_check: hand-made
   schedules, and random ones judged against the test's own checker. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

static void test_stream_schedules(void) {
    cc_graph* g = NULL;
    cc_op a, b, c;
    cc_op_desc d = {0};
    double s[3], mk = -1;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "setup"); return; }
    d.name = "gemm_a"; d.duration_us = 10; d.stream = CC_STREAM_COMPUTE;
    cc_graph_add_op(g, &d, &a);
    d.name = "allreduce_b"; d.duration_us = 5; d.stream = CC_STREAM_COMM; d.deps = &a; d.n_deps = 1;
    cc_graph_add_op(g, &d, &b);
    d.name = "norm_c"; d.duration_us = 7; d.stream = CC_STREAM_COMPUTE; d.deps = NULL; d.n_deps = 0;
    cc_graph_add_op(g, &d, &c);
    (void)b; (void)c;

    s[0] = 0; s[1] = 10; s[2] = 10;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, &mk), CC_OK, "gemm 0-10, allreduce 10-15, norm 10-17 is valid (ends touch)");
    CHECK(mk == 17, "its makespan is 17 (got %g)", mk);
    s[0] = 7; s[1] = 17; s[2] = 0;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_OK, "norm first, then gemm, then allreduce is valid (makespan NULL)");
    s[0] = 0; s[1] = 100; s[2] = 50;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, &mk), CC_OK, "a valid schedule with idle time");
    CHECK(mk == 105, "makespan 105 (got %g)", mk);

    s[0] = 0; s[1] = 5; s[2] = 10;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, &mk), CC_ERR_INVALID_SCHEDULE, "allreduce at 5 before gemm ends at 10");
    CHECK_CONTAINS(cc_last_error(ctx), "gemm_a", "precedence: message names gemm_a");
    CHECK_CONTAINS(cc_last_error(ctx), "allreduce_b", "precedence: message names allreduce_b");
    s[0] = 0; s[1] = 9.999; s[2] = 10;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_ERR_INVALID_SCHEDULE, "allreduce 1 ns before gemm ends");

    s[0] = 0; s[1] = 10; s[2] = 5;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_ERR_INVALID_SCHEDULE, "norm at 5 overlaps gemm on compute");
    CHECK_CONTAINS(cc_last_error(ctx), "gemm_a", "capacity: message names gemm_a");
    CHECK_CONTAINS(cc_last_error(ctx), "norm_c", "capacity: message names norm_c");
    CHECK_CONTAINS(cc_last_error(ctx), "compute", "capacity: message names the stream");
    s[0] = 3; s[1] = 13; s[2] = 0;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_ERR_INVALID_SCHEDULE, "gemm at 3 starts inside norm [0,7)");
    CHECK_CONTAINS(cc_last_error(ctx), "norm_c", "capacity (other order): message names norm_c");

    s[0] = -1; s[1] = 10; s[2] = 10;
    CHECK(cc_schedule_check(ctx, g, s, NULL) != CC_OK, "a negative start time is refused");
    s[0] = NAN;
    CHECK(cc_schedule_check(ctx, g, s, NULL) != CC_OK, "a NaN start time is refused");
    s[0] = INFINITY;
    CHECK(cc_schedule_check(ctx, g, s, NULL) != CC_OK, "an infinite start time is refused");
    CHECK_RES(ctx, cc_schedule_check(ctx, g, NULL, NULL), CC_ERR_INVALID_ARG, "start_us NULL");
    cc_graph_destroy(g);
}

static void test_general_schedules(void) {
    cc_graph* g = NULL;
    cc_graph_desc gd = {0};
    int caps[2] = {3, 1};
    int dp[2] = {2, 0}, dq[2] = {2, 1}, dr[2] = {1, 0}, dz[2] = {3, 1};
    cc_op_desc d = {0};
    cc_op p, q, r, z;
    double s[4], mk = 0;
    gd.n_resources = 2;
    gd.capacities = caps;
    if (cc_graph_create(ctx, &gd, &g) != CC_OK) { CHECK(0, "setup: %s", cc_last_error(ctx)); return; }
    d.duration_us = 4;
    d.name = "pp"; d.demands = dp; cc_graph_add_op(g, &d, &p);
    d.name = "qq"; d.demands = dq; cc_graph_add_op(g, &d, &q);
    d.name = "rr"; d.demands = dr; cc_graph_add_op(g, &d, &r);
    d.name = "zz"; d.demands = dz; d.duration_us = 0; cc_graph_add_op(g, &d, &z);
    (void)p; (void)q; (void)r; (void)z;
    s[0] = 0; s[1] = 4; s[2] = 0; s[3] = 8;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, &mk), CC_OK, "pp+rr use 3 of 3, then qq");
    CHECK(mk == 8, "makespan 8 (got %g)", mk);
    s[0] = 0; s[1] = 2; s[2] = 6; s[3] = 8;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_ERR_INVALID_SCHEDULE, "pp [0,4) and qq [2,6) need 4 of 3");
    CHECK_CONTAINS(cc_last_error(ctx), "pp", "capacity: message names pp");
    CHECK_CONTAINS(cc_last_error(ctx), "qq", "capacity: message names qq");
    s[0] = 0; s[1] = 3.999; s[2] = 5; s[3] = 9;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_ERR_INVALID_SCHEDULE, "an overlap of 1 ns is found");
    /* zero duration: [t, t) holds nothing, so zz (demand 3 of 3) fits inside pp */
    s[0] = 0; s[1] = 4; s[2] = 0; s[3] = 2;
    CHECK_RES(ctx, cc_schedule_check(ctx, g, s, NULL), CC_OK, "a zero-duration op occupies no capacity");
    cc_graph_destroy(g);
}

/* Does the message name an op of a tu_build_graph graph ("j<digits>")? */
static int names_op(const char* msg) {
    const char* p;
    for (p = msg; *p; p++)
        if (*p == 'j' && p[1] >= '0' && p[1] <= '9') return 1;
    return 0;
}

/* Random start vectors near valid schedules: the library's verdict must be
   the test's own checker's verdict. */
static void test_random_verdicts(void) {
    tu_rng rng = {7};
    tu_gen gen = {3, 10, 1, 3, 0, 4, 6, 1.0, 0.5, 0.1};
    int trial, disagree = 0, n_valid = 0, n_invalid = 0, unnamed = 0, bad_mk = 0;
    for (trial = 0; trial < 400; trial++) {
        tu_inst* in;
        cc_graph* g = NULL;
        cc_schedule s;
        cc_sched_desc sd = {0};
        gen.streams = trial % 3 == 0;
        in = tu_random_inst(&rng, &gen);
        memset(&s, 0, sizeof s);
        sd.method = CC_SCHED_LIST;
        if (tu_build_graph(ctx, in, &g) != CC_OK || cc_sched_solve(ctx, g, &sd, &s) != CC_OK) {
            if (disagree++ < 3) NOTE("trial %d: setup failed: %s", trial, cc_last_error(ctx));
        } else {
            double* st = (double*)malloc(sizeof(double) * (size_t)in->n);
            int v;
            for (v = 0; v < 4; v++) {
                int i, mine, ok;
                double mk_mine = 0, mk_lib = -1;
                char msg[256];
                cc_result r;
                memcpy(st, s.start_us, sizeof(double) * (size_t)in->n);
                if (v > 0) {   /* move one or two ops by whole units, and sometimes half units */
                    for (i = 0; i < v && i < 2; i++) {
                        int op = tu_randint(&rng, 0, in->n - 1);
                        st[op] += tu_randint(&rng, -4, 4) * (tu_randint(&rng, 0, 3) ? 1.0 : 0.5);
                        if (st[op] < 0) st[op] = 0;
                    }
                }
                mine = tu_check(in, st, &mk_mine, msg, sizeof msg);
                r = cc_schedule_check(ctx, g, st, &mk_lib);
                ok = (r == CC_OK) == mine && (r == CC_OK || r == CC_ERR_INVALID_SCHEDULE);
                if (mine) n_valid++; else n_invalid++;
                if (!ok && disagree++ < 5)
                    NOTE("trial %d variant %d: library says %s, reference says %s (%s) [%s]", trial, v, tu_res_name(r),
                         mine ? "valid" : "invalid", msg, r == CC_OK ? "" : cc_last_error(ctx));
                if (ok && mine && mk_lib != mk_mine && bad_mk++ < 3)
                    NOTE("trial %d: makespan %g, reference %g", trial, mk_lib, mk_mine);
                if (ok && !mine && !names_op(cc_last_error(ctx)) && unnamed++ < 3)
                    NOTE("trial %d: rejection does not name an op: %s", trial, cc_last_error(ctx));
            }
            free(st);
        }
        cc_schedule_release(ctx, &s);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK_INT(disagree, 0, "400 instances x 4 start vectors (%d valid, %d invalid): same verdict as the reference checker",
              n_valid, n_invalid);
    CHECK_INT(bad_mk, 0, "makespan of valid schedules equals the reference");
    CHECK_INT(unnamed, 0, "every rejection names an op");
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_stream_schedules);
    TH_RUN(test_general_schedules);
    TH_RUN(test_random_verdicts);
    cc_context_destroy(ctx);
    return th_done();
}
