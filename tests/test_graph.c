/* tests/test_graph.c - graph building, validation of bad input, and the
   dependencies derived from buffer regions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

static cc_op add(cc_graph* g, const char* name, double dur, int stream, const cc_op* deps, int n_deps) {
    cc_op_desc d = {0};
    cc_op op = {0};
    cc_result r;
    d.name = name;
    d.duration_us = dur;
    d.stream = stream;
    d.deps = deps;
    d.n_deps = n_deps;
    r = cc_graph_add_op(g, &d, &op);
    if (r != CC_OK) NOTE("setup: adding '%s' failed: %s", name, cc_last_error(ctx));
    return op;
}

static int has_pred(cc_graph* g, cc_op op, cc_op pred) {
    cc_op buf[64];
    int n = cc_op_preds(g, op, buf, 64), i;
    for (i = 0; i < n && i < 64; i++) if (buf[i].id == pred.id) return 1;
    return 0;
}

static void test_defaults(void) {
    cc_graph* g = NULL;
    cc_graph_desc gd = {0};
    cc_op_desc od = {0};
    cc_op a, b;
    int x = 7;
    CHECK_RES(ctx, cc_graph_create(ctx, NULL, &g), CC_OK, "cc_graph_create with a NULL desc");
    if (!g) return;
    CHECK_INT(cc_graph_n_resources(g), 2, "default graph has two streams");
    CHECK(cc_graph_resource_name(g, 0) && strcmp(cc_graph_resource_name(g, 0), "compute") == 0,
          "stream 0 is named \"compute\" (got \"%s\")", cc_graph_resource_name(g, 0) ? cc_graph_resource_name(g, 0) : "(null)");
    CHECK(cc_graph_resource_name(g, 1) && strcmp(cc_graph_resource_name(g, 1), "comm") == 0,
          "stream 1 is named \"comm\" (got \"%s\")", cc_graph_resource_name(g, 1) ? cc_graph_resource_name(g, 1) : "(null)");
    CHECK_INT(cc_graph_capacity(g, 0), 1, "stream capacity is 1");
    CHECK_INT(od.stream, CC_STREAM_COMPUTE, "a zero op desc: stream is compute");
    CHECK(od.duration_us == 0 && od.name == NULL && od.n_deps == 0, "a zero op desc: zero duration, no name, no deps");
    od.duration_us = 5;
    od.user_data = &x;
    CHECK_RES(ctx, cc_graph_add_op(g, &od, &a), CC_OK, "add an op with a NULL name");
    CHECK(a.id != 0, "op handle id is not 0");
    CHECK(strcmp(cc_op_name(g, a), "op0") == 0, "NULL name gives \"op<index>\" (got \"%s\")", cc_op_name(g, a));
    CHECK(cc_op_user_data(g, a) == &x, "user_data is kept");
    od.stream = CC_STREAM_COMM;
    od.user_data = NULL;
    CHECK_RES(ctx, cc_graph_add_op(g, &od, &b), CC_OK, "add a second op");
    CHECK(strcmp(cc_op_name(g, b), "op1") == 0, "second NULL name is \"op1\" (got \"%s\")", cc_op_name(g, b));
    CHECK_INT(cc_op_demand(g, b, 1), 1, "an op on comm demands 1 of comm");
    CHECK_INT(cc_op_demand(g, b, 0), 0, "an op on comm demands 0 of compute");
    CHECK_INT(cc_op_index(g, b), 1, "cc_op_index of the second op");
    CHECK(cc_graph_op(g, 1).id == b.id, "cc_graph_op(1) is the second op");
    {
        cc_op bad = {0, 0}, bogus = {12345, 0};
        CHECK_INT(cc_op_index(g, bad), -1, "cc_op_index of id 0 is -1");
        CHECK_INT(cc_op_index(g, bogus), -1, "cc_op_index of an unknown id is -1");
    }
    CHECK_RES(ctx, cc_op_set_duration(g, a, 2.5), CC_OK, "cc_op_set_duration");
    CHECK(cc_op_duration_us(g, a) == 2.5, "duration reads back as 2.5 (got %g)", cc_op_duration_us(g, a));
    cc_graph_destroy(g);

    gd.n_streams = 3;
    g = NULL;
    CHECK_RES(ctx, cc_graph_create(ctx, &gd, &g), CC_OK, "graph with three streams");
    if (g) {
        const char* n2 = cc_graph_resource_name(g, 2);
        CHECK_INT(cc_graph_n_resources(g), 3, "three streams");
        CHECK(n2 && strcmp(n2, "comm1") == 0, "stream 2 is named \"comm1\" (got \"%s\")", n2 ? n2 : "(null)");
        cc_graph_destroy(g);
    }
}

static void test_cycle(void) {
    cc_graph* g = NULL;
    cc_op a, b, c, d, e;
    cc_result r;
    cc_schedule s;
    cc_sched_desc sd = {0};
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "setup: graph: %s", cc_last_error(ctx)); return; }
    a = add(g, "cyc_alpha", 1, CC_STREAM_COMPUTE, NULL, 0);
    b = add(g, "cyc_beta", 1, CC_STREAM_COMM, &a, 1);
    c = add(g, "cyc_gamma", 1, CC_STREAM_COMPUTE, &b, 1);
    d = add(g, "bystander", 1, CC_NO_STREAM, &c, 1);
    (void)d;
    CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "a chain validates");
    r = cc_graph_add_dep(g, c, a);   /* gamma before alpha: alpha -> beta -> gamma -> alpha */
    CHECK(r == CC_OK || r == CC_ERR_CYCLE, "add_dep closing a cycle returns CC_OK or CC_ERR_CYCLE (got %s)", tu_res_name(r));
    if (r == CC_OK) r = cc_graph_validate(g);
    CHECK_RES(ctx, r, CC_ERR_CYCLE, "a cycle alpha -> beta -> gamma -> alpha is reported");
    CHECK_CONTAINS(cc_last_error(ctx), "cyc_alpha", "cycle message names alpha");
    CHECK_CONTAINS(cc_last_error(ctx), "cyc_beta", "cycle message names beta");
    CHECK_CONTAINS(cc_last_error(ctx), "cyc_gamma", "cycle message names gamma");
    CHECK(strstr(cc_last_error(ctx), "bystander") == NULL, "cycle message leaves out the op off the cycle: \"%s\"",
          cc_last_error(ctx));
    memset(&s, 0xff, sizeof s);
    r = cc_sched_solve(ctx, g, &sd, &s);
    CHECK_RES(ctx, r, CC_ERR_CYCLE, "cc_sched_solve on a cyclic graph");
    CHECK(s.start_us == NULL && s.order == NULL && s.n_ops == 0, "a failed solve leaves the schedule empty");
    if (r == CC_OK) cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);

    /* a cycle through a derived edge: w writes X, r reads X (RAW w -> r),
       then an explicit dep r before w */
    g = NULL;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    {
        cc_buffer x;
        cc_region reg = {0};
        cc_op_desc od = {0};
        cc_op w, rd;
        cc_graph_add_buffer(g, "X", 64, &x);
        reg.buffer = x; reg.offset_bytes = 0; reg.n_bytes = 64;
        od.name = "writer_x"; od.duration_us = 1; od.writes = &reg; od.n_writes = 1;
        cc_graph_add_op(g, &od, &w);
        od = (cc_op_desc){0};
        od.name = "reader_x"; od.duration_us = 1; od.reads = &reg; od.n_reads = 1; od.stream = CC_STREAM_COMM;
        cc_graph_add_op(g, &od, &rd);
        r = cc_graph_add_dep(g, rd, w);
        if (r == CC_OK) r = cc_graph_validate(g);
        CHECK_RES(ctx, r, CC_ERR_CYCLE, "a cycle closed by a read-after-write edge is reported");
        CHECK_CONTAINS(cc_last_error(ctx), "writer_x", "message names writer_x");
        CHECK_CONTAINS(cc_last_error(ctx), "reader_x", "message names reader_x");
    }
    cc_graph_destroy(g);

    /* self-dependency */
    g = NULL;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    e = add(g, "selfish", 1, CC_STREAM_COMPUTE, NULL, 0);
    r = cc_graph_add_dep(g, e, e);
    if (r == CC_OK) r = cc_graph_validate(g);
    CHECK(r == CC_ERR_CYCLE || r == CC_ERR_INVALID_ARG, "an op depending on itself is refused (got %s)", tu_res_name(r));
    cc_graph_destroy(g);
}

/* Every bad add leaves the graph as it was, and the graph stays usable. */
static void test_bad_input(void) {
    cc_graph* g = NULL;
    cc_graph* gg = NULL;
    cc_graph_desc gd = {0};
    cc_op_desc d;
    cc_op a, out;
    cc_buffer buf, b0 = {0, 0}, b99 = {99, 0};
    cc_region reg = {0};
    cc_schedule s;
    cc_sched_desc sd = {0};
    int caps[2] = {2, 3};
    int dem_ok[2] = {2, 3}, dem_big[2] = {1, 4}, dem_neg[2] = {-1, 0};
    double bad_durs[3];
    const char* bad_names[3] = {"negative", "NaN", "infinite"};
    int i;
    bad_durs[0] = -1.0;
    bad_durs[1] = NAN;
    bad_durs[2] = INFINITY;

    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "setup: graph"); return; }
    a = add(g, "first", 3, CC_STREAM_COMPUTE, NULL, 0);
    cc_graph_add_buffer(g, "weights", 100, &buf);

    for (i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "dur_%s", bad_names[i]);
        d = (cc_op_desc){0};
        d.name = name;
        d.duration_us = bad_durs[i];
        CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_BAD_DURATION, "%s duration", bad_names[i]);
        CHECK_CONTAINS(cc_last_error(ctx), name, "%s duration: message names the op", bad_names[i]);
        CHECK_INT(cc_graph_n_ops(g), 1, "%s duration: op count unchanged", bad_names[i]);
    }
    CHECK_RES(ctx, cc_op_set_duration(g, a, NAN), CC_ERR_BAD_DURATION, "cc_op_set_duration(NaN)");
    CHECK_CONTAINS(cc_last_error(ctx), "first", "cc_op_set_duration(NaN): message names the op");
    CHECK(cc_op_duration_us(g, a) == 3.0, "a refused duration leaves the old one (got %g)", cc_op_duration_us(g, a));

    d = (cc_op_desc){0};
    d.name = "on_stream_5";
    d.duration_us = 1;
    d.stream = 5;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_RESOURCE, "stream 5 of 2");
    CHECK_CONTAINS(cc_last_error(ctx), "on_stream_5", "unknown stream: message names the op");
    d.stream = -2;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_RESOURCE, "stream -2");
    CHECK_INT(cc_graph_n_ops(g), 1, "unknown stream: op count unchanged");

    d = (cc_op_desc){0};
    d.name = "reads_nothing";
    d.duration_us = 1;
    reg.buffer = b99; reg.offset_bytes = 0; reg.n_bytes = 4;
    d.reads = &reg; d.n_reads = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_BUFFER, "read of buffer id 99");
    CHECK_CONTAINS(cc_last_error(ctx), "reads_nothing", "unknown buffer: message names the op");
    reg.buffer = b0;
    d.reads = NULL; d.n_reads = 0; d.writes = &reg; d.n_writes = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_BUFFER, "write to buffer id 0");

    d = (cc_op_desc){0};
    d.name = "overruns";
    d.duration_us = 1;
    reg.buffer = buf; reg.offset_bytes = 90; reg.n_bytes = 20;
    d.writes = &reg; d.n_writes = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_REGION, "region [90, 110) of a 100-byte buffer");
    CHECK_CONTAINS(cc_last_error(ctx), "overruns", "region error: message names the op");
    CHECK_CONTAINS(cc_last_error(ctx), "weights", "region error: message names the buffer");
    reg.offset_bytes = UINT64_MAX - 5; reg.n_bytes = 10;   /* offset + n wraps around to 4 */
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_REGION, "region whose end overflows 64 bits");
    reg.offset_bytes = 0; reg.n_bytes = 100;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_OK, "region [0, 100) of a 100-byte buffer is fine");
    CHECK_INT(cc_graph_n_ops(g), 2, "op count after the one good region op");

    {
        cc_op missing = {4242, 0}, zero = {0, 0};
        d = (cc_op_desc){0};
        d.name = "after_ghost";
        d.duration_us = 1;
        d.deps = &missing; d.n_deps = 1;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_OP, "dependency on op id 4242");
        CHECK_CONTAINS(cc_last_error(ctx), "after_ghost", "unknown op: message names the op being added");
        d.deps = &zero;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_UNKNOWN_OP, "dependency on op id 0");
        CHECK_RES(ctx, cc_graph_add_dep(g, a, missing), CC_ERR_UNKNOWN_OP, "cc_graph_add_dep to op id 4242");
        CHECK_RES(ctx, cc_graph_add_dep(g, missing, a), CC_ERR_UNKNOWN_OP, "cc_graph_add_dep from op id 4242");
        CHECK_RES(ctx, cc_op_set_duration(g, missing, 1.0), CC_ERR_UNKNOWN_OP, "cc_op_set_duration of op id 4242");
        CHECK_INT(cc_graph_n_ops(g), 2, "unknown op: op count unchanged");
    }

    d = (cc_op_desc){0};
    CHECK_RES(ctx, cc_graph_add_op(g, NULL, &out), CC_ERR_INVALID_ARG, "NULL op desc");
    d.n_deps = 1;   /* deps == NULL */
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &out), CC_ERR_INVALID_ARG, "n_deps 1 with deps NULL");

    /* still usable after all that */
    {
        cc_op after = add(g, "after_errors", 2, CC_STREAM_COMM, &a, 1);
        CHECK(after.id != 0, "an op can be added after the failures");
        CHECK_INT(cc_graph_n_ops(g), 3, "op count is 3");
        CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "graph validates after the failures");
        memset(&s, 0, sizeof s);
        CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_OK, "graph solves after the failures");
        /* first(3, compute) -> after_errors(2, comm); overruns(1, compute) */
        CHECK(s.makespan_us == 5.0, "makespan 5 us (got %g)", s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);

    /* general mode: capacities */
    gd.n_resources = 2;
    gd.capacities = caps;
    if (cc_graph_create(ctx, &gd, &gg) != CC_OK) { CHECK(0, "setup: general graph: %s", cc_last_error(ctx)); return; }
    CHECK_INT(cc_graph_n_resources(gg), 2, "general graph has 2 resources");
    CHECK_INT(cc_graph_capacity(gg, 1), 3, "capacity of resource 1");
    d = (cc_op_desc){0};
    d.name = "fits";
    d.duration_us = 1;
    d.demands = dem_ok;
    CHECK_RES(ctx, cc_graph_add_op(gg, &d, &out), CC_OK, "demand equal to capacity");
    CHECK_INT(cc_op_demand(gg, out, 1), 3, "demand reads back");
    d.name = "too_big";
    d.demands = dem_big;
    CHECK_RES(ctx, cc_graph_add_op(gg, &d, &out), CC_ERR_CAPACITY, "demand 4 on a resource of capacity 3");
    CHECK_CONTAINS(cc_last_error(ctx), "too_big", "capacity: message names the op");
    d.name = "negative_demand";
    d.demands = dem_neg;
    {
        cc_result r = cc_graph_add_op(gg, &d, &out);
        CHECK(r != CC_OK, "a negative demand is refused (got %s)", tu_res_name(r));
    }
    CHECK_INT(cc_graph_n_ops(gg), 1, "capacity: op count unchanged");
    d.demands = NULL;
    d.name = "stream_in_general";
    d.stream = 2;
    CHECK_RES(ctx, cc_graph_add_op(gg, &d, &out), CC_ERR_UNKNOWN_RESOURCE, "stream index 2 in a 2-resource graph");
    cc_graph_destroy(gg);

    {
        int bad_caps[2] = {1, -1};
        gd.capacities = bad_caps;
        gg = NULL;
        CHECK(cc_graph_create(ctx, &gd, &gg) != CC_OK, "a negative capacity is refused");
        if (gg) cc_graph_destroy(gg);
        gd.capacities = NULL;
        gg = NULL;
        CHECK(cc_graph_create(ctx, &gd, &gg) != CC_OK, "n_resources 2 with capacities NULL is refused");
        if (gg) cc_graph_destroy(gg);
        gd.n_resources = CONCERTO_MAX_RESOURCES + 1;
        gd.capacities = NULL;
        gg = NULL;
        CHECK(cc_graph_create(ctx, &gd, &gg) != CC_OK, "more than CONCERTO_MAX_RESOURCES resources is refused");
        if (gg) cc_graph_destroy(gg);
    }
    CHECK_RES(ctx, cc_graph_create(ctx, NULL, NULL), CC_ERR_INVALID_ARG, "cc_graph_create with out NULL");
}

/* ---- derived dependencies -------------------------------------------------*/
/* The scenario of test_regions, with every op on no stream, so that only
   dependencies order them. */
static void test_regions(void) {
    cc_graph* g = NULL;
    cc_buffer A, B;
    cc_op op[8];
    cc_region r_w0 = {0}, r_r1 = {0}, r_r2 = {0}, r_w3 = {0}, r_w4 = {0}, r_r5 = {0}, r_w6 = {0}, r_io = {0};
    cc_op_desc d;
    cc_schedule s;
    cc_sched_desc sd = {0};
    cc_op preds[16];
    int np, i;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    cc_graph_add_buffer(g, "A", 1024, &A);
    cc_graph_add_buffer(g, "B", 1024, &B);
#define REG(v, buf, off, n) (v.buffer = buf, v.offset_bytes = off, v.n_bytes = n)
    REG(r_w0, A, 0, 100);
    REG(r_r1, A, 50, 100);    /* overlaps w0 on [50, 100) */
    REG(r_r2, A, 100, 100);   /* touches w0 at 100 but does not overlap */
    REG(r_w3, A, 120, 10);    /* inside r1 and r2 */
    REG(r_w4, A, 0, 10);      /* inside w0 only */
    REG(r_r5, B, 0, 100);
    REG(r_w6, B, 0, 50);
    REG(r_io, A, 0, 200);
#undef REG
#define ADD(idx, nm, rd, n_rd, wr, n_wr) do { d = (cc_op_desc){0}; d.name = nm; d.duration_us = 1 + idx; \
        d.stream = CC_NO_STREAM; d.reads = rd; d.n_reads = n_rd; d.writes = wr; d.n_writes = n_wr; \
        cc_graph_add_op(g, &d, &op[idx]); } while (0)
    ADD(0, "w0", NULL, 0, &r_w0, 1);
    ADD(1, "r1", &r_r1, 1, NULL, 0);
    ADD(2, "r2", &r_r2, 1, NULL, 0);
    ADD(3, "w3", NULL, 0, &r_w3, 1);
    ADD(4, "w4", NULL, 0, &r_w4, 1);
    ADD(5, "r5", &r_r5, 1, NULL, 0);
    ADD(6, "w6", NULL, 0, &r_w6, 1);
    ADD(7, "rw7", &r_io, 1, &r_io, 1);   /* reads and writes A[0, 200) */
#undef ADD
    CHECK(cc_op_bytes(g, op[0], 1) == 100 && cc_op_bytes(g, op[0], 0) == 0, "cc_op_bytes: w0 writes 100 bytes, reads none");
    CHECK(cc_op_bytes(g, op[7], 0) == 200 && cc_op_bytes(g, op[7], 1) == 200, "cc_op_bytes: rw7 reads and writes 200 bytes");
    CHECK(cc_op_bytes(g, op[5], 0) == 100 && cc_op_bytes(g, op[5], 1) == 0, "cc_op_bytes: r5 reads 100 bytes of B");
    {
        cc_op bad = {999, 0};
        CHECK(cc_op_bytes(g, bad, 0) == 0, "cc_op_bytes of an unknown op is 0");
    }
    CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "region graph validates");
    np = cc_op_preds(g, op[0], preds, 16);
    CHECK_INT(np, 0, "w0 (first writer) has no predecessors");
    CHECK(has_pred(g, op[1], op[0]), "read-after-write: r1 reads A[50,150) after w0 writes A[0,100)");
    CHECK_INT(cc_op_preds(g, op[1], preds, 16), 1, "r1 has exactly one predecessor");
    CHECK_INT(cc_op_preds(g, op[2], preds, 16), 0, "r2 reads A[100,200): adjacent to w0's A[0,100), no edge; two reads, no edge");
    CHECK(has_pred(g, op[3], op[1]), "write-after-read: w3 writes A[120,130) that r1 read");
    CHECK(has_pred(g, op[3], op[2]), "write-after-read: w3 writes A[120,130) that r2 read");
    CHECK(!has_pred(g, op[3], op[0]), "w3 and w0 do not overlap: no edge");
    CHECK(has_pred(g, op[4], op[0]), "write-after-write: w4 writes A[0,10) that w0 wrote");
    CHECK(!has_pred(g, op[4], op[1]) && !has_pred(g, op[4], op[2]), "w4 does not overlap r1 or r2: no edge");
    CHECK_INT(cc_op_preds(g, op[5], preds, 16), 0, "r5 reads buffer B, which nobody wrote: no edge");
    CHECK(has_pred(g, op[6], op[5]), "write-after-read on buffer B: w6 after r5");
    CHECK_INT(cc_op_preds(g, op[6], preds, 16), 1, "w6 has exactly one predecessor (no edge across buffers)");
    CHECK(has_pred(g, op[7], op[3]) && has_pred(g, op[7], op[4]), "rw7 depends on the last writers w3 and w4");
    CHECK(!has_pred(g, op[7], op[5]) && !has_pred(g, op[7], op[6]), "rw7 (buffer A) has no edge to ops on buffer B");
    /* cc_op_preds writes at most max */
    preds[0].id = 0xdeadbeef;
    np = cc_op_preds(g, op[3], preds, 0);
    CHECK(np == 2 && preds[0].id == 0xdeadbeef, "cc_op_preds with max 0 counts (%d) and writes nothing", np);

    memset(&s, 0, sizeof s);
    if (CHECK(cc_sched_solve(ctx, g, &sd, &s) == CC_OK, "solve the region graph")) {
        /* conflicting pairs in program order: (i, j) */
        static const int pairs[][2] = {{0,1},{1,3},{2,3},{0,4},{5,6},{0,7},{1,7},{2,7},{3,7},{4,7}};
        int bad = 0;
        for (i = 0; i < (int)(sizeof pairs / sizeof pairs[0]); i++) {
            int a = pairs[i][0], b = pairs[i][1];
            if (s.start_us[b] < s.start_us[a] + cc_op_duration_us(g, op[a]) - 1e-9) {
                NOTE("%s starts at %g before %s ends at %g", cc_op_name(g, op[b]), s.start_us[b], cc_op_name(g, op[a]),
                     s.start_us[a] + cc_op_duration_us(g, op[a]));
                bad++;
            }
        }
        CHECK_INT(bad, 0, "the schedule orders every conflicting pair");
        /* longest chain: w0(1) r1(2) w3(4) rw7(8) = 15 */
        CHECK(s.makespan_us == 15.0, "makespan is the longest chain w0 r1 w3 rw7 = 15 (got %g)", s.makespan_us);
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
}

/* Random regions: every overlapping pair where one writes is ordered in the
   transitive closure of cc_op_preds, every reported edge is a conflict, and
   every method's schedule keeps them. */
static void test_regions_random(void) {
    tu_rng rng = {42};
    int trial, bad_missing = 0, bad_extra = 0, bad_sched = 0, n_pairs = 0;
    for (trial = 0; trial < 40; trial++) {
        int n = tu_randint(&rng, 4, 24), i, j, kk;
        cc_graph* g = NULL;
        cc_buffer bufs[3];
        cc_region rd[24] = {0}, wr[24] = {0};
        int has_rd[24], has_wr[24];
        cc_op ops[24];
        unsigned char conflict[24][24], reach[24][24];
        tu_inst* in = tu_inst_new(n, 2, 1);
        cc_schedule s;
        cc_sched_desc sd = {0};
        if (cc_graph_create(ctx, NULL, &g) != CC_OK) { tu_inst_free(in); return; }
        for (i = 0; i < 3; i++) cc_graph_add_buffer(g, i == 0 ? "b0" : i == 1 ? "b1" : "b2", 256, &bufs[i]);
        for (i = 0; i < n; i++) {
            cc_op_desc d = {0};
            uint64_t off;
            has_rd[i] = tu_randint(&rng, 0, 2) > 0;
            has_wr[i] = tu_randint(&rng, 0, 2) > 0;
            rd[i].buffer = bufs[tu_randint(&rng, 0, 2)];
            off = (uint64_t)tu_randint(&rng, 0, 15) * 16;
            rd[i].offset_bytes = off;
            rd[i].n_bytes = (uint64_t)tu_randint(&rng, 1, (int)(256 - off));
            wr[i].buffer = bufs[tu_randint(&rng, 0, 2)];
            off = (uint64_t)tu_randint(&rng, 0, 15) * 16;
            wr[i].offset_bytes = off;
            wr[i].n_bytes = (uint64_t)tu_randint(&rng, 1, (int)(256 - off));
            d.duration_us = tu_randint(&rng, 1, 9);
            d.stream = tu_randint(&rng, 0, 3) == 0 ? CC_NO_STREAM : tu_randint(&rng, 0, 1);
            if (has_rd[i]) { d.reads = &rd[i]; d.n_reads = 1; }
            if (has_wr[i]) { d.writes = &wr[i]; d.n_writes = 1; }
            cc_graph_add_op(g, &d, &ops[i]);
            in->dur[i] = d.duration_us;
            tu_set_stream(in, i, d.stream);
        }
        memset(conflict, 0, sizeof conflict);
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) {
#define OVL(x, y) ((x).buffer.id == (y).buffer.id && (x).offset_bytes < (y).offset_bytes + (y).n_bytes && \
                   (y).offset_bytes < (x).offset_bytes + (x).n_bytes)
                int c = (has_wr[i] && has_rd[j] && OVL(wr[i], rd[j])) ||   /* RAW */
                        (has_rd[i] && has_wr[j] && OVL(rd[i], wr[j])) ||   /* WAR */
                        (has_wr[i] && has_wr[j] && OVL(wr[i], wr[j]));     /* WAW */
#undef OVL
                conflict[i][j] = (unsigned char)c;
                n_pairs += c;
            }
        if (cc_graph_validate(g) != CC_OK) {
            CHECK(0, "random region graph %d validates: %s", trial, cc_last_error(ctx));
            cc_graph_destroy(g);
            tu_inst_free(in);
            continue;
        }
        memset(reach, 0, sizeof reach);
        for (j = 0; j < n; j++) {
            cc_op p[24];
            int np = cc_op_preds(g, ops[j], p, 24);
            for (kk = 0; kk < np && kk < 24; kk++) {
                i = cc_op_index(g, p[kk]);
                if (i < 0 || i >= j || !conflict[i][j]) {
                    if (bad_extra++ < 3) NOTE("trial %d: reported edge %s -> %s is no conflict in program order", trial,
                                              cc_op_name(g, p[kk]), cc_op_name(g, ops[j]));
                } else {
                    reach[i][j] = 1;
                    in->adj[i * n + j] = 1;
                }
            }
        }
        for (kk = 0; kk < n; kk++)   /* transitive closure */
            for (i = 0; i < n; i++)
                if (reach[i][kk])
                    for (j = 0; j < n; j++)
                        if (reach[kk][j]) reach[i][j] = 1;
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++)
                if (conflict[i][j] && !reach[i][j]) {
                    if (bad_missing++ < 3) NOTE("trial %d: conflict j%d -> j%d is not implied by cc_op_preds", trial, i, j);
                }
        /* check the schedules against the conflicts directly */
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++) in->adj[i * n + j] = conflict[i][j];
        for (kk = 0; kk < 3; kk++) {
            char msg[256];
            memset(&s, 0, sizeof s);
            memset(&sd, 0, sizeof sd);
            sd.method = kk == 0 ? CC_SCHED_AUTO : kk == 1 ? CC_SCHED_LIST : CC_SCHED_ODD_EVEN;
            if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) {
                if (bad_sched++ < 3) NOTE("trial %d method %d: solve failed: %s", trial, kk, cc_last_error(ctx));
                continue;
            }
            if (!tu_check(in, s.start_us, NULL, msg, sizeof msg)) {
                if (bad_sched++ < 3) NOTE("trial %d method %d: %s", trial, kk, msg);
            }
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK_INT(bad_missing, 0, "40 random region graphs (%d conflicting pairs): every conflict is ordered by cc_op_preds", n_pairs);
    CHECK_INT(bad_extra, 0, "40 random region graphs: every edge cc_op_preds reports is a real conflict");
    CHECK_INT(bad_sched, 0, "40 random region graphs x AUTO, LIST, ODD_EVEN: schedules respect every conflict and stream");
}

/* A handle of one graph given to another is refused, and the message names
   both graphs; so is a handle of a destroyed graph, and one of the input
   of a rewrite given to its output. */
static void test_foreign_handles(void) {
    cc_graph_desc gd = {0};
    cc_graph *g1 = NULL, *g2 = NULL, *g3 = NULL;
    cc_op a, x, order[2];
    cc_buffer b1, b2;
    cc_region reg = {0};
    cc_op_desc d;
    cc_plan* pl = NULL;
    double mk;
    gd.name = "first";
    CHECK_RES(ctx, cc_graph_create(ctx, &gd, &g1), CC_OK, "a graph named 'first'");
    gd.name = "second";
    CHECK_RES(ctx, cc_graph_create(ctx, &gd, &g2), CC_OK, "a graph named 'second'");
    if (!g1 || !g2) { cc_graph_destroy(g1); cc_graph_destroy(g2); return; }
    CHECK(!strcmp(cc_graph_name(g1), "first") && !strcmp(cc_graph_name(g2), "second"), "cc_graph_name gives the names");
    a = add(g1, "a", 1, CC_STREAM_COMPUTE, NULL, 0);
    x = add(g2, "x", 1, CC_STREAM_COMPUTE, NULL, 0);
    cc_graph_add_buffer(g1, "buf1", 64, &b1);
    cc_graph_add_buffer(g2, "buf2", 64, &b2);
    CHECK(a.id == x.id, "both first ops have id 1 (%u, %u): only the graph tells them apart", (unsigned)a.id, (unsigned)x.id);

    CHECK_RES(ctx, cc_graph_add_dep(g2, a, x), CC_ERR_UNKNOWN_OP, "cc_graph_add_dep with an op of another graph");
    CHECK(strstr(cc_last_error(ctx), "'first'") && strstr(cc_last_error(ctx), "'second'"), "the message names both graphs: %s",
          cc_last_error(ctx));
    d = (cc_op_desc){0};
    d.name = "y"; d.duration_us = 1; d.deps = &a; d.n_deps = 1;
    CHECK_RES(ctx, cc_graph_add_op(g2, &d, NULL), CC_ERR_UNKNOWN_OP, "a dependency on an op of another graph");
    CHECK(strstr(cc_last_error(ctx), "'first'") && strstr(cc_last_error(ctx), "'second'") && strstr(cc_last_error(ctx), "deps[0]"),
          "the message names both graphs and the field: %s", cc_last_error(ctx));
    reg.buffer = b1; reg.offset_bytes = 0; reg.n_bytes = 8; reg.split_rows = 0;
    d = (cc_op_desc){0};
    d.name = "z"; d.duration_us = 1; d.reads = &reg; d.n_reads = 1;
    CHECK_RES(ctx, cc_graph_add_op(g2, &d, NULL), CC_ERR_UNKNOWN_BUFFER, "a region of a buffer of another graph");
    CHECK(strstr(cc_last_error(ctx), "'first'") && strstr(cc_last_error(ctx), "'second'") && strstr(cc_last_error(ctx), "'z'"),
          "the message names both graphs and the op: %s", cc_last_error(ctx));
    CHECK_INT(cc_graph_n_ops(g2), 1, "the refused ops were not added");
    CHECK_RES(ctx, cc_op_set_duration(g2, a, 5), CC_ERR_UNKNOWN_OP, "cc_op_set_duration with an op of another graph");
    CHECK(cc_op_duration_us(g1, a) == 1 && cc_op_duration_us(g2, x) == 1, "no duration changed");
    CHECK_INT(cc_op_index(g2, a), -1, "cc_op_index: -1 for an op of another graph");
    CHECK(!strcmp(cc_op_name(g2, a), "<invalid op>"), "cc_op_name: the invalid op (%s)", cc_op_name(g2, a));
    order[0] = a;
    CHECK(cc_simulate(ctx, g2, order, 1, NULL, &mk) == CC_ERR_UNKNOWN_OP && strstr(cc_last_error(ctx), "'first'"),
          "cc_simulate with an issue order of another graph: %s", cc_last_error(ctx));
    CHECK(cc_plan_create(ctx, g2, order, &pl) == CC_ERR_UNKNOWN_OP && !pl, "cc_plan_create with an order of another graph");

    /* the output of a rewrite is a new graph: the input's handles do not name its ops */
    CHECK_RES(ctx, cc_graph_fuse(ctx, g1, NULL, &g3, NULL), CC_OK, "fuse (nothing to fuse: a copy)");
    if (g3) {
        CHECK(cc_op_index(g3, a) == -1 && cc_op_index(g3, cc_graph_op(g3, 0)) == 0, "the copy's ops have their own handles");
        CHECK_RES(ctx, cc_op_set_duration(g3, a, 5), CC_ERR_UNKNOWN_OP, "an op of the input given to the rewritten graph");
        CHECK(strstr(cc_last_error(ctx), "'first'") && strstr(cc_last_error(ctx), cc_graph_name(g3)),
              "the message names the input and the output ('%s'): %s", cc_graph_name(g3), cc_last_error(ctx));
    }
    /* a destroyed graph's handle */
    cc_graph_destroy(g1);
    CHECK_RES(ctx, cc_graph_add_dep(g2, a, x), CC_ERR_UNKNOWN_OP, "an op of a destroyed graph");
    CHECK_CONTAINS(cc_last_error(ctx), "destroyed", "the message says so: %s", cc_last_error(ctx));
    cc_graph_destroy(g2);
    cc_graph_destroy(g3);
}

/* Functions that take a context and a graph refuse a graph of another
   context, with the message in the context they were given (and nothing
   recorded in the graph's). */
static void test_other_context(void) {
    cc_context* other = NULL;
    cc_graph* g = NULL;
    cc_graph* out = NULL;
    cc_schedule s;
    cc_sched_desc sd = {0};
    cc_plan* pl = NULL;
    cc_op order[1];
    double start[1] = {0}, mk, cp, rb;
    cc_result r;
    memset(&s, 0, sizeof s);
    if (cc_context_create(NULL, &other) != CC_OK) { CHECK(0, "cc_context_create"); return; }
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { cc_context_destroy(other); CHECK(0, "cc_graph_create"); return; }
    add(g, "only", 1, CC_STREAM_COMPUTE, NULL, 0);
    order[0] = cc_graph_op(g, 0);
    cc_clear_error(ctx);
#define OTHER(call, what) \
    r = (call); \
    CHECK(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(other), "another context") && strstr(cc_last_error(other), what), \
          "%s with a graph of another context: refused, in the context given (%s)", what, cc_last_error(other)); \
    cc_clear_error(other)
    OTHER(cc_sched_solve(other, g, &sd, &s), "cc_sched_solve");
    OTHER(cc_lower_bounds(other, g, &cp, &rb), "cc_lower_bounds");
    OTHER(cc_schedule_check(other, g, start, &mk), "cc_schedule_check");
    OTHER(cc_simulate(other, g, order, 1, NULL, &mk), "cc_simulate");
    OTHER(cc_plan_create(other, g, NULL, &pl), "cc_plan_create");
    OTHER(cc_graph_fuse(other, g, NULL, &out, NULL), "cc_graph_fuse");
    OTHER(cc_graph_decompose(other, g, NULL, &out, NULL), "cc_graph_decompose");
#undef OTHER
    CHECK(!pl && !out && s.n_ops == 0, "nothing was made");
    CHECK_INT(cc_last_result(ctx), CC_OK, "the graph's own context recorded nothing");
    CHECK_RES(ctx, cc_sched_solve(cc_graph_context(g), g, &sd, &s), CC_OK, "with cc_graph_context the solve runs");
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    cc_context_destroy(other);
}

/* cc_graph_query_defaults: what cc_graph_create makes of a desc. */
static void test_graph_query(void) {
    cc_graph_desc q = cc_graph_query_defaults(NULL), d = {0};
    cc_graph* g = NULL;
    CHECK(q.n_streams == 2 && q.n_resources == 0, "the default desc resolves to two streams (%d)", q.n_streams);
    CHECK(d.n_streams == 0, "a zero graph desc has n_streams 0 (its default)");
    if (cc_graph_create(ctx, &d, &g) == CC_OK) {
        CHECK_INT(cc_graph_n_resources(g), q.n_streams, "and a graph made from the default desc has them");
        cc_graph_destroy(g);
    }
}

/* A graph with more communicators than any fixed table would hold: the
   start-up cost of every one counts (cc_graph_coll_startup returns each as
   set, a rewrite's output keeps them all), and a table that cannot grow
   fails with CC_ERR_OUT_OF_MEMORY and keeps what it had. */
static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c;
    snprintf(msg, msg_size, "the idle family runs nothing");
    return CC_ERR_UNSUPPORTED;
}
static const cc_comm_fns idle_family = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

#define N_STARTUP_COMMS 40
static void test_many_startups(void) {
    cc_comm* comms[N_STARTUP_COMMS] = {0};
    float buf[N_STARTUP_COMMS];
    cc_graph* g = NULL;
    cc_graph* out = NULL;
    cc_context* fctx = NULL;
    cc_context_desc cd = {0};
    tu_alloc fa;
    int i, n_ok = 0, n_kept = 0;
    double sum = 0, want_sum = 0;
    char name[32];
    memset(buf, 0, sizeof buf);
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "a graph: %s", cc_last_error(ctx)); return; }
    for (i = 0; i < N_STARTUP_COMMS; i++) {
        cc_op_desc d = {0};
        cc_collective c;
        snprintf(name, sizeof name, "group%d", i);
        if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, name, &comms[i]) != CC_OK) break;
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.n_elems = 1; c.comm = comms[i];
        c.send_buf = &buf[i]; c.recv_buf = &buf[i];
        d.name = name; d.duration_us = 10; d.stream = CC_STREAM_COMM; d.coll = &c;
        if (cc_graph_add_op(g, &d, NULL) != CC_OK) break;
        if (cc_graph_set_coll_startup(g, comms[i], 1.0 + 0.5 * i) == CC_OK) n_ok++;
        want_sum += 1.0 + 0.5 * i;
    }
    CHECK_INT(i, N_STARTUP_COMMS, "%d communicators, each with an all-reduce in the graph", N_STARTUP_COMMS);
    CHECK_INT(n_ok, N_STARTUP_COMMS, "cc_graph_set_coll_startup takes all %d start-up costs", N_STARTUP_COMMS);
    for (i = 0; i < N_STARTUP_COMMS; i++) {
        double us = cc_graph_coll_startup(g, comms[i]);
        if (us == 1.0 + 0.5 * i) n_kept++;
        sum += us;
    }
    CHECK_INT(n_kept, N_STARTUP_COMMS, "cc_graph_coll_startup returns each one as set");
    CHECK_NEAR(sum, want_sum, 1e-9, "their sum is the hand sum 40 + 0.5 * (0 + ... + 39) = %g", want_sum);
    CHECK_RES(ctx, cc_graph_set_coll_startup(g, comms[30], 7), CC_OK, "setting the 31st again");
    CHECK_NEAR(cc_graph_coll_startup(g, comms[30]), 7, 0, "replaces its cost");
    CHECK_NEAR(cc_graph_coll_startup(g, comms[31]), 1.0 + 0.5 * 31, 0, "and leaves the next alone");
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, NULL, &out, NULL), CC_OK, "fusing the graph");
    if (out) {
        n_kept = 0;
        for (i = 0; i < N_STARTUP_COMMS; i++)
            if (cc_graph_coll_startup(out, comms[i]) == cc_graph_coll_startup(g, comms[i])) n_kept++;
        CHECK_INT(n_kept, N_STARTUP_COMMS, "the rewrite's output has all %d start-up costs", N_STARTUP_COMMS);
        cc_graph_destroy(out);
    }
    cc_graph_destroy(g);
    /* a table that cannot grow: the 17th communicator needs a larger one */
    memset(&fa, 0, sizeof fa);
    cd.allocator = tu_allocator(&fa);
    CHECK_RES(NULL, cc_context_create(&cd, &fctx), CC_OK, "a context whose allocator fails on request");
    if (fctx) {
        g = NULL;
        CHECK_RES(fctx, cc_graph_create(fctx, NULL, &g), CC_OK, "a graph in it");
        if (g) {
            for (i = 0; i < 16; i++) cc_graph_set_coll_startup(g, comms[i], 2);
            fa.fail_at = fa.n_calls + 1;
            fa.fail_after = 1;
            CHECK_RES(fctx, cc_graph_set_coll_startup(g, comms[16], 3), CC_ERR_OUT_OF_MEMORY,
                      "a 17th communicator without memory is refused");
            CHECK_CONTAINS(cc_last_error(fctx), "out of memory", "saying so (%s)", cc_last_error(fctx));
            CHECK_NEAR(cc_graph_coll_startup(g, comms[16]), -1, 0, "it is not set");
            CHECK_NEAR(cc_graph_coll_startup(g, comms[15]), 2, 0, "and the 16 before it are kept");
            fa.fail_at = 0;
            fa.fail_after = 0;
            CHECK_RES(fctx, cc_graph_set_coll_startup(g, comms[16], 3), CC_OK, "with memory again it is taken");
            cc_graph_destroy(g);
        }
        CHECK_INT(fa.live, 1, "only the context's own block is left");
        cc_context_destroy(fctx);
        CHECK_INT(fa.live, 0, "nothing leaks");
    }
    for (i = 0; i < N_STARTUP_COMMS; i++) cc_comm_destroy(comms[i]);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_defaults);
    TH_RUN(test_cycle);
    TH_RUN(test_bad_input);
    TH_RUN(test_regions);
    TH_RUN(test_regions_random);
    TH_RUN(test_foreign_handles);
    TH_RUN(test_other_context);
    TH_RUN(test_graph_query);
    TH_RUN(test_many_startups);
    cc_context_destroy(ctx);
    return th_done();
}
