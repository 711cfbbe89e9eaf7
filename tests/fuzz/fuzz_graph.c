/* tests/fuzz/fuzz_graph.c - a sequence of graph API calls decoded from the
   fuzzer's bytes: streams or resources, bound and transient buffers, ops
   with regions, collectives (on a communicator that never runs) and
   dependencies, then validation, a solve with each method (small budgets;
   lp_solve where compiled in), the checker, the memory check, the
   simulator and a plan, with or without a memory cap. Invariants: every
   error leaves a message; a solve that succeeds passes the independent
   checker (cc_schedule_check) and its memory cap (cc_memory_check), never
   ends below the lower bounds, and on a stream graph without a cap is the
   stream simulation of its order; a plan under a cap has an arena within
   it; nothing leaks. */
#define _POSIX_C_SOURCE 200809L
#ifndef FUZZ_LINKED_IMPL   /* the replays link tests/concerto_impl.o instead */
#define CONCERTO_IMPLEMENTATION
#endif
#include "../../concerto.h"
#include "../../concerto_rcpsp.h"
#include "fuzz.h"
#include <math.h>
#include <string.h>

#define MAX_OPS 12
#define MAX_BUFS 4

static cc_result never_runs(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c;
    snprintf(msg, msg_size, "never runs");
    return CC_ERR_UNSUPPORTED;
}
static const cc_comm_fns idle_family = { "idle", "host", never_runs, NULL, NULL, NULL, NULL };

static void work(void* stream, void* user) { (void)stream; (void)user; }

#define EXPECT_MSG(ctx, rc, what) \
    FZ_CHECK((rc) == CC_OK || cc_last_error(ctx)[0] != 0, "%s failed (%d) and left no message", what, (int)(rc))

static void solve_all(cc_context* ctx, cc_graph* g, fz_in* in, int stream_mode) {
    static const cc_sched_method methods[] = { CC_SCHED_AUTO, CC_SCHED_LIST, CC_SCHED_SAMPLING, CC_SCHED_BNB, CC_SCHED_ODD_EVEN };
    double cp = 0, res = 0;
    int m, n = cc_graph_n_ops(g);
    uint64_t cap = 0;
    unsigned cap_byte = fz_u8(in);
    cc_result rc = cc_lower_bounds(ctx, g, &cp, &res);
    EXPECT_MSG(ctx, rc, "cc_lower_bounds");
    if (cap_byte >= 128) cap = (uint64_t)(cap_byte - 127) * 64;
    for (m = 0; m < 5; m++) {
        cc_sched_desc d;
        cc_schedule s;
        double mk = 0;
        memset(&d, 0, sizeof d);
        memset(&s, 0, sizeof s);
        d.method = methods[m];
        d.general = cc_rcpsp_search();
        d.allow_zero_durations = (fz_u8(in) & 1) != 0;
        d.memory_cap_bytes = cap;
        d.seed = fz_u8(in);
        d.tuning.budget_schedules = 40;
        d.tuning.bnb_nodes = 300;
        d.tuning.window_nodes = 40;
        d.rounds = 1;
        d.tuning.restarts = 1;             /* one evolution and its search: the default ten took seconds */
        d.tuning.lp_time_limit_s = 0.05;
        d.window_ops = 2 + (int)(fz_u8(in) % 4);
#ifdef CONCERTO_USE_LPSOLVE
        if (m == 3 && (fz_u8(in) & 7) == 0 && n <= 8) d.exact = CC_EXACT_LPSOLVE;
#endif
        rc = cc_sched_solve(ctx, g, &d, &s);
        EXPECT_MSG(ctx, rc, "cc_sched_solve");
        if (rc != CC_OK) {
            FZ_CHECK(s.start_us == NULL, "a failed solve returned starts");
            continue;
        }
        FZ_CHECK(s.n_ops == n, "a schedule of %d ops for %d", s.n_ops, n);
        rc = cc_schedule_check(ctx, g, s.start_us, &mk);
        FZ_CHECK(rc == CC_OK, "method %d: the checker refuses the solve's schedule: %s", m, cc_last_error(ctx));
        FZ_CHECK(s.makespan_us + 1e-6 >= cp && s.makespan_us + 1e-6 >= res, "method %d: makespan %g below a bound (%g, %g)", m,
                 s.makespan_us, cp, res);
        FZ_CHECK(mk <= s.makespan_us + 1e-6, "method %d: the checker's makespan %g above the schedule's %g", m, mk, s.makespan_us);
        if (cap) {
            uint64_t peak = 0;
            rc = cc_memory_check(ctx, g, s.start_us, NULL, cap, &peak, NULL);
            FZ_CHECK(rc == CC_OK, "method %d: a schedule under cap %llu breaks it: %s", m, (unsigned long long)cap,
                     cc_last_error(ctx));
        }
        if (stream_mode) {
            double sim = 0;
            rc = cc_simulate(ctx, g, s.order, n, NULL, &sim);
            FZ_CHECK(rc == CC_OK, "method %d: the solve's order does not simulate: %s", m, cc_last_error(ctx));
            if (!cap) FZ_CHECK(fabs(sim - s.makespan_us) <= 1e-6 * (1 + sim), "method %d: makespan %g, its order simulates to %g", m,
                               s.makespan_us, sim);
            {
                cc_plan_desc pd;
                cc_plan* pl = NULL;
                memset(&pd, 0, sizeof pd);
                pd.order = s.order;
                pd.start_us = (fz_u8(in) & 1) ? s.start_us : NULL;
                pd.memory_cap_bytes = cap;
                rc = cc_plan_create_desc(ctx, g, &pd, &pl);
                EXPECT_MSG(ctx, rc, "cc_plan_create_desc");
                if (rc == CC_OK) {
                    FZ_CHECK(!cap || cc_plan_arena_bytes(pl) <= cap, "an arena of %llu bytes above the cap %llu",
                             (unsigned long long)cc_plan_arena_bytes(pl), (unsigned long long)cap);
                    cc_plan_destroy(pl);
                }
            }
        }
        cc_schedule_release(ctx, &s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fz_in in = { data, size, 0 };
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_comm* comm = NULL;
    cc_graph_desc gd;
    cc_buffer buf[MAX_BUFS];
    uint64_t buf_bytes[MAX_BUFS];
    cc_op ops[MAX_OPS];
    int caps[3];
    float dummy[64];
    unsigned mode;
    int stream_mode, n_res, n_bufs, n_ops = 0, i;
    cc_result rc;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 0;
    memset(&gd, 0, sizeof gd);
    mode = fz_u8(&in);
    stream_mode = !(mode & 1);
    n_res = 1 + (int)((mode >> 1) % 3);
    if (stream_mode) gd.n_streams = n_res;
    else {
        for (i = 0; i < n_res; i++) caps[i] = fz_int(&in, 0, 4);
        gd.n_resources = n_res;
        gd.capacities = caps;
    }
    rc = cc_graph_create(ctx, &gd, &g);
    EXPECT_MSG(ctx, rc, "cc_graph_create");
    if (rc != CC_OK) { cc_context_destroy(ctx); return 0; }
    if (stream_mode && (mode & 8)) {
        rc = cc_comm_wrap(ctx, &idle_family, NULL, 0, 2 + (int)((mode >> 4) % 3), "fuzz", &comm);
        EXPECT_MSG(ctx, rc, "cc_comm_wrap");
    }
    n_bufs = fz_int(&in, 0, MAX_BUFS);
    for (i = 0; i < n_bufs; i++) {
        unsigned b = fz_u8(&in);
        buf_bytes[i] = (uint64_t)(b & 0x7f) * 8;   /* 0 bytes is refused: an error with a message */
        rc = (b & 0x80 ? cc_graph_add_transient : cc_graph_add_buffer)(g, b & 1 ? "act" : "w", buf_bytes[i], &buf[i]);
        EXPECT_MSG(ctx, rc, "adding a buffer");
        if (rc != CC_OK) { n_bufs = i; break; }
    }
    while (!fz_done(&in) && n_ops < MAX_OPS) {
        cc_op_desc d;
        cc_region rd[2] = {0}, wr[2] = {0};
        cc_collective c;
        cc_op deps[2];
        int dem[3], k, n_dep = 0;
        unsigned kind = fz_u8(&in);
        char name[16];
        if (kind == 0xff) break;   /* the graph ends here */
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "op%d", n_ops);
        d.name = name;
        d.duration_us = (kind & 3) == 0 ? 0 : (double)fz_u8(&in) * ((kind & 4) ? 0.5 : 1.0);
        d.fn = work;
        if (stream_mode) d.stream = (int)(fz_u8(&in) % (unsigned)(n_res + 1)) - 1;   /* -1: no stream */
        else {
            for (k = 0; k < n_res; k++) dem[k] = fz_int(&in, 0, 5);
            d.demands = dem;
        }
        for (k = 0; k < 2 && n_bufs > 0; k++) {
            unsigned r = fz_u8(&in);
            cc_region* reg = (r & 1) ? &wr[d.n_writes++] : &rd[d.n_reads++];
            int bi = (int)((r >> 1) % (unsigned)n_bufs);
            memset(reg, 0, sizeof *reg);
            reg->buffer = buf[bi];
            reg->offset_bytes = (uint64_t)fz_u8(&in) * 8 % (buf_bytes[bi] + 16);   /* sometimes outside: refused */
            reg->n_bytes = (uint64_t)(1 + fz_u8(&in) % 16) * 8;
            if (r & 0x80) { reg->offset_bytes = 0; reg->n_bytes = buf_bytes[bi]; }
        }
        d.reads = rd;
        d.writes = wr;
        if (comm && (kind & 0x30) == 0x30) {
            memset(&c, 0, sizeof c);
            c.kind = (cc_coll_kind)(1 + fz_u8(&in) % 3);
            c.dtype = CC_DTYPE_FLOAT32;
            c.n_elems = (size_t)(fz_u8(&in) % 16) * 2;
            c.comm = comm;
            c.send_buf = dummy;
            c.recv_buf = dummy;
            d.coll = &c;
            d.fn = NULL;
        }
        for (k = 0; k < 2 && n_ops > 0; k++)
            if (kind & (0x40 << k)) deps[n_dep++] = ops[fz_u8(&in) % (unsigned)n_ops];
        d.deps = deps;
        d.n_deps = n_dep;
        rc = cc_graph_add_op(g, &d, &ops[n_ops]);
        EXPECT_MSG(ctx, rc, "cc_graph_add_op");
        if (rc == CC_OK) n_ops++;
    }
    for (i = 0; i < 3 && n_ops > 1; i++) {   /* dependencies to later ops, some closing cycles */
        unsigned a = fz_u8(&in), b = fz_u8(&in);
        if (!(a & 0x80)) continue;
        rc = cc_graph_add_dep(g, ops[a % (unsigned)n_ops], ops[b % (unsigned)n_ops]);
        EXPECT_MSG(ctx, rc, "cc_graph_add_dep");
    }
    rc = cc_graph_validate(g);
    EXPECT_MSG(ctx, rc, "cc_graph_validate");
    if (rc == CC_OK && n_ops > 0) solve_all(ctx, g, &in, stream_mode);
    cc_graph_destroy(g);
    if (comm) cc_comm_destroy(comm);
    cc_context_destroy(ctx);
    return 0;
}
