/* tests/test_sim.c - the stream simulator cc_simulate, against schedules and
   against the test's own straightforward simulator (tu_simulate). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

static tu_inst* random_stream_inst(tu_rng* rng, int n_min, int n_max) {
    tu_gen gen;
    gen.n_min = n_min; gen.n_max = n_max;
    gen.k_min = 2; gen.k_max = 3;
    gen.streams = 1;
    gen.cap_max = 1;
    gen.dur_max = 12;
    gen.unit_us = 0.5;
    gen.p_edge_max = 0.3;
    gen.p_no_stream = 0.15;
    return tu_random_inst(rng, &gen);
}

/* The schedule's order, simulated: never later than the schedule, valid,
   and the same start times as the reference simulator. */
static void test_schedule_order(void) {
    tu_rng rng = {5};
    int trial, n_late = 0, n_invalid = 0, n_differ = 0, n_fail = 0, n_solves = 0, n_shorter = 0;
    for (trial = 0; trial < 150; trial++) {
        tu_inst* in = random_stream_inst(&rng, 3, trial < 120 ? 20 : 120);
        cc_graph* g = NULL;
        int meth;
        if (tu_build_graph(ctx, in, &g) != CC_OK) { n_fail++; tu_inst_free(in); continue; }
        for (meth = 0; meth < 3; meth++) {
            cc_schedule s;
            cc_sched_desc sd = {0};
            double* st = (double*)calloc((size_t)in->n + 1, sizeof(double));
            double* ref = (double*)calloc((size_t)in->n + 1, sizeof(double));
            int* issue = (int*)calloc((size_t)in->n + 1, sizeof(int));
            double mk = -1, ref_mk = -1;
            char msg[256];
            int i;
            cc_result r;
            sd.method = meth == 0 ? CC_SCHED_AUTO : meth == 1 ? CC_SCHED_LIST : CC_SCHED_ODD_EVEN;
            sd.tuning.bnb_nodes = 2000;   /* keep it quick */
            sd.tuning.budget_schedules = 500;
            if (meth == 1) sd.tuning.sgs = CC_SGS_PARALLEL;
            memset(&s, 0, sizeof s);
            n_solves++;
            if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) {
                if (n_fail++ < 3) NOTE("trial %d: solve: %s", trial, cc_last_error(ctx));
                goto next;
            }
            r = cc_simulate(ctx, g, s.order, s.n_ops, st, &mk);
            if (r != CC_OK) {
                if (n_fail++ < 3) NOTE("trial %d method %d: cc_simulate: %s: %s", trial, meth, tu_res_name(r), cc_last_error(ctx));
                goto next;
            }
            if (mk > s.makespan_us + 1e-9 && n_late++ < 3)
                NOTE("trial %d method %d: simulated %g > scheduled %g", trial, meth, mk, s.makespan_us);
            if (mk < s.makespan_us - 1e-9) n_shorter++;
            if (!tu_check(in, st, NULL, msg, sizeof msg) && n_invalid++ < 3) NOTE("trial %d: simulated starts: %s", trial, msg);
            if (cc_schedule_check(ctx, g, st, NULL) != CC_OK && n_invalid++ < 3)
                NOTE("trial %d: cc_schedule_check on simulated starts: %s", trial, cc_last_error(ctx));
            for (i = 0; i < in->n; i++) issue[i] = cc_op_index(g, s.order[i]);
            if (tu_simulate(in, issue, ref, &ref_mk) != 0) {
                if (n_differ++ < 3) NOTE("trial %d: the reference simulator deadlocks on the schedule's order", trial);
            } else {
                for (i = 0; i < in->n; i++)
                    if (fabs(ref[i] - st[i]) > 1e-9) {
                        if (n_differ++ < 3) NOTE("trial %d: j%d starts at %g, reference %g", trial, i, st[i], ref[i]);
                        break;
                    }
                if (fabs(ref_mk - mk) > 1e-9 && n_differ++ < 3) NOTE("trial %d: makespan %g, reference %g", trial, mk, ref_mk);
            }
            cc_schedule_release(ctx, &s);
        next:
            free(st);
            free(ref);
            free(issue);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d solves; the simulation was shorter than the schedule in %d", n_solves, n_shorter);
    CHECK_INT(n_fail, 0, "solve and cc_simulate succeed on the schedule's order");
    CHECK_INT(n_late, 0, "simulated makespan <= the schedule's makespan");
    CHECK_INT(n_invalid, 0, "simulated start times pass the reference checker and cc_schedule_check");
    CHECK_INT(n_differ, 0, "simulated start times equal the reference simulator's");
}

/* Random issue orders, topological or not: same deadlock verdict and the
   same start times as the reference. */
static void test_random_issue(void) {
    tu_rng rng = {11};
    int trial, n_differ = 0, n_dead = 0, n_live = 0;
    for (trial = 0; trial < 400; trial++) {
        tu_inst* in = random_stream_inst(&rng, 2, 14);
        cc_graph* g = NULL;
        int n = in->n, i;
        int* issue = (int*)calloc((size_t)n + 1, sizeof(int));
        cc_op* order = (cc_op*)calloc((size_t)n + 1, sizeof(cc_op));
        double* st = (double*)calloc((size_t)n + 1, sizeof(double));
        double* ref = (double*)calloc((size_t)n + 1, sizeof(double));
        double mk = -1, ref_mk = -1;
        int ref_rc;
        cc_result r;
        if (tu_build_graph(ctx, in, &g) != CC_OK) { n_differ++; goto next; }
        for (i = 0; i < n; i++) issue[i] = i;
        for (i = n - 1; i > 0; i--) {
            int t, x = tu_randint(&rng, 0, i);
            t = issue[i]; issue[i] = issue[x]; issue[x] = t;
        }
        for (i = 0; i < n; i++) order[i] = cc_graph_op(g, issue[i]);
        ref_rc = tu_simulate(in, issue, ref, &ref_mk);
        r = cc_simulate(ctx, g, order, n, st, &mk);
        if (ref_rc != 0) {
            n_dead++;
            if (r != CC_ERR_DEADLOCK && n_differ++ < 4)
                NOTE("trial %d: reference deadlocks, cc_simulate says %s", trial, tu_res_name(r));
        } else {
            n_live++;
            if (r != CC_OK) {
                if (n_differ++ < 4) NOTE("trial %d: reference runs, cc_simulate says %s: %s", trial, tu_res_name(r), cc_last_error(ctx));
            } else {
                for (i = 0; i < n; i++)
                    if (fabs(ref[i] - st[i]) > 1e-9) {
                        if (n_differ++ < 4) NOTE("trial %d: j%d starts at %g, reference %g", trial, i, st[i], ref[i]);
                        break;
                    }
                if (fabs(mk - ref_mk) > 1e-9 && n_differ++ < 4) NOTE("trial %d: makespan %g, reference %g", trial, mk, ref_mk);
            }
        }
        /* start_us may be NULL */
        if (ref_rc == 0) {
            double mk2 = -1;
            if (cc_simulate(ctx, g, order, n, NULL, &mk2) != CC_OK || fabs(mk2 - ref_mk) > 1e-9) {
                if (n_differ++ < 4) NOTE("trial %d: with start_us NULL: makespan %g, reference %g", trial, mk2, ref_mk);
            }
        }
    next:
        cc_graph_destroy(g);
        tu_inst_free(in);
        free(issue);
        free(order);
        free(st);
        free(ref);
    }
    CHECK_INT(n_differ, 0, "400 random issue orders (%d deadlock, %d run): cc_simulate agrees with the reference", n_dead, n_live);
    CHECK(n_dead > 20 && n_live > 20, "the random orders include both outcomes (%d deadlocks, %d runs)", n_dead, n_live);
}

static void test_deadlock(void) {
    cc_graph* g = NULL;
    cc_op_desc d = {0};
    cc_op prod, cons, other, order[3];
    double mk = -1;
    cc_result r;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    d.name = "late_producer"; d.duration_us = 2; d.stream = CC_STREAM_COMPUTE;
    cc_graph_add_op(g, &d, &prod);
    d.name = "early_consumer"; d.duration_us = 3; d.deps = &prod; d.n_deps = 1;
    cc_graph_add_op(g, &d, &cons);
    d.name = "comm_op"; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.deps = NULL; d.n_deps = 0;
    cc_graph_add_op(g, &d, &other);
    order[0] = cons; order[1] = other; order[2] = prod;
    r = cc_simulate(ctx, g, order, 3, NULL, &mk);
    CHECK_RES(ctx, r, CC_ERR_DEADLOCK, "consumer issued before its producer on the same stream");
    CHECK_CONTAINS(cc_last_error(ctx), "early_consumer", "deadlock message names the blocked op");
    CHECK_CONTAINS(cc_last_error(ctx), "late_producer", "deadlock message names the op it waits for");
    order[0] = other; order[1] = prod; order[2] = cons;
    CHECK_RES(ctx, cc_simulate(ctx, g, order, 3, NULL, &mk), CC_OK, "the same ops in dependency order");
    CHECK(mk == 5, "makespan 2 + 3 = 5 (got %g)", mk);
    /* on different streams a reversed issue order is fine */
    {
        cc_op x, y, o2[2];
        cc_graph* g2 = NULL;
        cc_graph_create(ctx, NULL, &g2);
        d = (cc_op_desc){0};
        d.name = "x_compute"; d.duration_us = 4; cc_graph_add_op(g2, &d, &x);
        d.name = "y_comm"; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.deps = &x; d.n_deps = 1; cc_graph_add_op(g2, &d, &y);
        o2[0] = y; o2[1] = x;
        CHECK_RES(ctx, cc_simulate(ctx, g2, o2, 2, NULL, &mk), CC_OK, "a reversed issue order across streams waits, no deadlock");
        CHECK(mk == 5, "makespan 5 (got %g)", mk);
        cc_graph_destroy(g2);
    }
    /* bad issue orders */
    order[0] = other; order[1] = prod; order[2] = prod;
    CHECK(cc_simulate(ctx, g, order, 3, NULL, &mk) != CC_OK, "an issue order that repeats an op is refused");
    CHECK(cc_simulate(ctx, g, order, 2, NULL, &mk) != CC_OK, "an issue order that leaves an op out is refused");
    order[2].id = 777;
    CHECK(cc_simulate(ctx, g, order, 3, NULL, &mk) != CC_OK, "an issue order with an unknown op is refused");
    CHECK(cc_simulate(ctx, g, NULL, 3, NULL, &mk) != CC_OK, "issue_order NULL is refused");
    cc_graph_destroy(g);
    {
        cc_graph_desc gd = {0};
        int caps[1] = {2};
        cc_op a;
        gd.n_resources = 1;
        gd.capacities = caps;
        if (cc_graph_create(ctx, &gd, &g) == CC_OK) {
            d = (cc_op_desc){0};
            d.name = "wide"; d.duration_us = 1;
            cc_graph_add_op(g, &d, &a);
            CHECK(cc_simulate(ctx, g, &a, 1, NULL, &mk) != CC_OK, "a graph with a resource of capacity 2 is not a stream graph: refused (%s)",
                  tu_res_name(cc_last_result(ctx)));
            cc_graph_destroy(g);
        }
    }
}

/* A compute op a (10 us) on stream 0, the all-reduce b (10 us) of what a
   wrote on stream 1, then compute c (10 us) on stream 0 reading it; d
   (4 us) on stream 0 independent of b, issued before c. */
static float sendbuf[16];
static cc_graph* chain_graph(cc_op* ops) {
    cc_graph* g = NULL;
    cc_buffer x;
    cc_region r = {0};
    cc_collective co;
    cc_op_desc d;
    int dummy = 0;
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "x", 64, &x);
    memset(&r, 0, sizeof r);
    r.buffer = x; r.n_bytes = 64;
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.n_elems = 16;
    co.comm = (cc_comm*)&dummy;
    co.send_buf = sendbuf; co.recv_buf = sendbuf;
    d = (cc_op_desc){0}; d.name = "a"; d.duration_us = 10; d.writes = &r; d.n_writes = 1;
    cc_graph_add_op(g, &d, &ops[0]);
    d = (cc_op_desc){0}; d.name = "b"; d.duration_us = 10; d.stream = 1; d.coll = &co;
    d.reads = &r; d.n_reads = 1; d.writes = &r; d.n_writes = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &ops[1]), CC_OK, "the all-reduce is added");
    d = (cc_op_desc){0}; d.name = "d"; d.duration_us = 4;
    cc_graph_add_op(g, &d, &ops[2]);
    d = (cc_op_desc){0}; d.name = "c"; d.duration_us = 10; d.reads = &r; d.n_reads = 1;
    cc_graph_add_op(g, &d, &ops[3]);
    return g;
}

/* The executor's costs in the simulation, by hand: launch 1 us before every
   op; a wait of 3 us where a dependency on the other stream ends after the
   op's stream is free. a: 1-11; b: its stream free at 1, a ends at 11:
   11 + 3 = 14-24; d: 11 + 1 = 12-16; c: stream free at 16 + 1 = 17, b ends
   at 24: 24 + 3 = 27-37. Without costs: a 0-10, b 10-20, d 10-14, c 20-30. */
static void test_exec_costs(void) {
    cc_op ops[4];
    cc_graph* g = chain_graph(ops);
    cc_exec_costs c = cc_graph_exec_costs(g), bad;
    double st[4], mk = -1;
    CHECK(c.launch_us == 0 && c.wait_us == 0, "a new graph's executor costs are zero");
    CHECK_RES(ctx, cc_simulate(ctx, g, ops, 4, st, &mk), CC_OK, "simulate without costs");
    CHECK(mk == 30 && st[0] == 0 && st[1] == 10 && st[2] == 10 && st[3] == 20, "without costs: 0, 10, 10, 20; makespan 30 (%g)", mk);
    c.launch_us = 1; c.wait_us = 3;
    CHECK_RES(ctx, cc_graph_set_exec_costs(g, &c), CC_OK, "set the costs");
    CHECK_RES(ctx, cc_simulate(ctx, g, ops, 4, st, &mk), CC_OK, "simulate with costs");
    CHECK(fabs(mk - 37) < 1e-9 && fabs(st[0] - 1) < 1e-9 && fabs(st[1] - 14) < 1e-9 && fabs(st[2] - 12) < 1e-9 &&
              fabs(st[3] - 27) < 1e-9,
          "with launch 1 and wait 3: starts 1, 14, 12, 27 and makespan 37 as computed by hand (%g %g %g %g, %g)", st[0], st[1], st[2],
          st[3], mk);
    {   /* the schedule of the graph reports the simulation of its order, costs included */
        cc_schedule s;
        CHECK_RES(ctx, cc_sched_solve(ctx, g, NULL, &s), CC_OK, "schedule with costs");
        CHECK(s.makespan_us >= 37 - 1e-9, "the schedule's makespan includes the costs (%g >= 37)", s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    {   /* overlap slowdowns, by hand. Order a, b, d, c with compute 2x beside a
           collective: a 0-10, b 10-20, d beside b for all its 4 us: 8 us, 10-18,
           c 20-30. Order a, d, b, c with collectives 1.5x beside compute: a 0-10,
           d 10-14, b beside d for 4 us: 12 us, 10-22, c 22-32. */
        cc_exec_costs o;
        cc_op o2[4];
        memset(&o, 0, sizeof o);
        o.compute_overlap = 2;
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &o), CC_OK, "a compute slowdown of 2");
        CHECK_RES(ctx, cc_simulate(ctx, g, ops, 4, st, &mk), CC_OK, "simulate with it");
        CHECK(fabs(mk - 30) < 1e-9 && fabs(st[2] - 10) < 1e-9 && fabs(st[3] - 20) < 1e-9,
              "compute 2x beside a collective: d 10-18, c 20-30, makespan 30 by hand (%g, %g, %g)", st[2], st[3], mk);
        o.compute_overlap = 1;
        o.comm_overlap = 1.5;
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &o), CC_OK, "a collective slowdown of 1.5");
        o2[0] = ops[0]; o2[1] = ops[2]; o2[2] = ops[1]; o2[3] = ops[3];
        CHECK_RES(ctx, cc_simulate(ctx, g, o2, 4, st, &mk), CC_OK, "simulate a, d, b, c");
        CHECK(fabs(mk - 32) < 1e-9 && fabs(st[1] - 10) < 1e-9 && fabs(st[3] - 22) < 1e-9,
              "a collective 1.5x beside compute: b 10-22, c 22-32, makespan 32 by hand (%g, %g, %g)", st[1], st[3], mk);
        o.comm_overlap = 11;
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &o), CC_ERR_BAD_DURATION, "a slowdown above 10 is refused");
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &c), CC_OK, "back to launch 1, wait 3");
    }
    bad = c; bad.wait_us = NAN;
    CHECK_RES(ctx, cc_graph_set_exec_costs(g, &bad), CC_ERR_BAD_DURATION, "a NaN wait cost is refused");
    bad = c; bad.launch_us = -1;
    CHECK_RES(ctx, cc_graph_set_exec_costs(g, &bad), CC_ERR_BAD_DURATION, "a negative launch cost is refused");
    c = cc_graph_exec_costs(g);
    CHECK(c.launch_us == 1 && c.wait_us == 3, "a refused setting leaves the costs as they were");
    CHECK_RES(ctx, cc_graph_set_exec_costs(g, NULL), CC_OK, "NULL resets");
    c = cc_graph_exec_costs(g);
    CHECK(c.launch_us == 0 && c.wait_us == 0, "NULL: zero");
    cc_graph_destroy(g);
}

/* Exposed communication: by hand on the chain's timelines, and zero for a
   step without collectives. */
static void test_exposed(void) {
    cc_op ops[4];
    cc_graph* g = chain_graph(ops);
    double st[4] = { 0, 10, 10, 20 }, en[4] = { 10, 20, 14, 30 }, ex = -1;
    CHECK_RES(ctx, cc_exposed_comm_us(ctx, g, st, en, &ex), CC_OK, "exposure of a timeline");
    CHECK(fabs(ex - 6) < 1e-9, "b runs 10-20, d covers 10-14: 6 us exposed (%g)", ex);
    CHECK_RES(ctx, cc_exposed_comm_us(ctx, g, st, NULL, &ex), CC_OK, "exposure of starts with durations");
    CHECK(fabs(ex - 6) < 1e-9, "the same from the starts and the durations (%g)", ex);
    {   /* overlapping compute from both sides, and an all-reduce fully hidden */
        double s2[4] = { 0, 5, 12, 18 }, e2[4] = { 10, 20, 16, 28 };
        CHECK_RES(ctx, cc_exposed_comm_us(ctx, g, s2, e2, &ex), CC_OK, "exposure, partly hidden");
        CHECK(fabs(ex - 4) < 1e-9, "b 5-20 against compute 0-10, 12-16, 18-28: 10-12 and 16-18 exposed, 4 us (%g)", ex);
        s2[1] = 2; e2[1] = 9;
        CHECK_RES(ctx, cc_exposed_comm_us(ctx, g, s2, e2, &ex), CC_OK, "exposure, hidden");
        CHECK(ex == 0, "b inside a's interval: nothing exposed (%g)", ex);
    }
    st[1] = NAN;
    CHECK_RES(ctx, cc_exposed_comm_us(ctx, g, st, en, &ex), CC_ERR_INVALID_ARG, "a NaN start is refused, naming the op");
    CHECK(strstr(cc_last_error(ctx), "'b'") != NULL, "the message names op 'b': %s", cc_last_error(ctx));
    cc_graph_destroy(g);
    {   /* no collectives: zero, whatever the gaps */
        cc_graph* h = NULL;
        cc_op_desc d = {0};
        double s3[2] = { 0, 50 }, e3[2] = { 10, 60 };
        cc_graph_create(ctx, NULL, &h);
        d.duration_us = 10;
        cc_graph_add_op(h, &d, NULL);
        d.stream = 1;
        cc_graph_add_op(h, &d, NULL);
        CHECK_RES(ctx, cc_exposed_comm_us(ctx, h, s3, e3, &ex), CC_OK, "exposure without collectives");
        CHECK(ex == 0, "a step without collectives exposes nothing, gaps and all (%g)", ex);
        cc_graph_destroy(h);
    }
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_exec_costs);
    TH_RUN(test_exposed);
    TH_RUN(test_deadlock);
    TH_RUN(test_schedule_order);
    TH_RUN(test_random_issue);
    cc_context_destroy(ctx);
    return th_done();
}
