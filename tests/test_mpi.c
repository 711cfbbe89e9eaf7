/* tests/test_mpi.c - concerto_mpi.h under mpirun (tests/test_mpi.sh runs it
   with -np 2 and -np 4). Every rank checks; only failures are printed, by
   the rank that saw them; rank 0 prints the summary line with the counts of
   every rank added up.

   test_mpi            the checks:
     - every collective kind x element type x reduction, counts 1, 7 and 64
       (7 divides by no group size: the padded all-reduce), in place, on the
       world communicator and on split TP-like and DP-like groups: against a
       serial computation in rank order done here from the known inputs
       (float32, float64, int32, and every kind that only moves data), and,
       for float16 and bfloat16 reductions, against the in-process world
       (cc_world) with the same inputs, bit for bit; MPI's own reductions
       (CC_MPI_REDUCE_NATIVE, user-defined ops for the halves) on inputs
       whose sums are exact, against the serial result;
     - a plan on a compute and two communication streams, run with cc_exec
       on cc_cpu_backend_create_ctx over MPI communicators, in program order
       and in the scheduler's order: both equal (bits) and equal to the
       serial result, for three steps;
     - cc_exec_agree: equal plans agree; a different plan on one rank gives
       CC_ERR_PLAN_MISMATCH on every rank;
     - a mismatched collective through cc_comm_run (keep_job = 1):
       CC_ERR_COLL_MISMATCH on every rank naming both collectives, and the
       communicator refuses the next one quoting it;
     - the family's table, cc_mpi_comm_handle, a split with a negative color,
       the thread level, invalid descs and collectives;
     - the k-th allocation of the context refused on every rank, for every
       k, through communicator creation, split, the CPU backend and their
       collectives: CC_ERR_OUT_OF_MEMORY, nothing left, works afterwards.
   test_mpi fault-order|fault-absent|fault-tiny|fault-kill TOKEN: the fault scenarios
   (see tests/test_mpi.sh); TOKEN only marks the processes for pgrep. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_mpi.h"

static int g_rank, g_size, g_pass, g_fail, g_log;

#define T(cond, ...) do { \
        if (cond) g_pass++; \
        else { g_fail++; printf("FAIL test_mpi (rank %d of %d): ", g_rank, g_size); printf(__VA_ARGS__); \
               printf(" (%s:%d)\n", __FILE__, __LINE__); fflush(stdout); } \
    } while (0)

static void log_stderr(cc_log_level level, const char* message, void* user_data) {
    (void)user_data;
    if (g_log && level == CC_LOG_ERROR) { fprintf(stderr, "rank %d: error: %s\n", g_rank, message); fflush(stderr); }
}

/* ---- inputs: element i of member m's send buffer in layout L --------------*/
static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static size_t esize(cc_dtype dt) { return dt == CC_DTYPE_FLOAT64 ? 8 : dt == CC_DTYPE_FLOAT16 || dt == CC_DTYPE_BFLOAT16 ? 2 : 4; }

/* exact: small integers (every sum exact); else values that round. */
static void input(cc_dtype dt, int exact, int salt, int m, size_t i, void* out) {
    uint64_t h = mix(((uint64_t)salt << 40) ^ ((uint64_t)m << 32) ^ i);
    int small = (int)(h % 17) - 8;
    float f = exact ? (float)small : (float)((double)(h >> 11) / 9007199254740992.0 * 8.0 - 4.0);
    switch (dt) {
        case CC_DTYPE_FLOAT32: memcpy(out, &f, 4); break;
        case CC_DTYPE_FLOAT64: { double d = exact ? (double)small : (double)(h >> 11) / 9007199254740992.0 * 8.0 - 4.0; memcpy(out, &d, 8); break; }
        case CC_DTYPE_INT32: { int32_t v = exact ? small : (int32_t)(uint32_t)h; memcpy(out, &v, 4); break; }
        case CC_DTYPE_BFLOAT16: { uint32_t u; uint16_t b; memcpy(&u, &f, 4); b = (uint16_t)(u >> 16); memcpy(out, &b, 2); break; }
        case CC_DTYPE_FLOAT16: {
            uint16_t b;
            if (exact) {   /* integers -8..8 in binary16 */
                int a = small < 0 ? -small : small, e = 0;
                if (a == 0) b = 0;
                else {
                    while ((a >> e) > 1) e++;
                    b = (uint16_t)(((unsigned)(e + 15) << 10) | (((unsigned)a << (10 - e)) & 0x3ffu));
                }
                if (small < 0) b |= 0x8000u;
            } else
                b = (uint16_t)((h & 0x8000u) | ((12u + (h >> 16) % 6u) << 10) | ((h >> 24) & 0x3ffu));   /* 2^-3..2^2 */
            memcpy(out, &b, 2);
            break;
        }
    }
}

static void fill(cc_dtype dt, int exact, int salt, int m, size_t off, size_t n, void* buf) {
    size_t i, es = esize(dt);
    for (i = 0; i < n; i++) input(dt, exact, salt, m, off + i, (char*)buf + i * es);
}

/* serial rank-order reduction of element i over n members (not for halves,
   except for exact inputs, where it goes through double) */
static void serial_reduce(cc_dtype dt, int exact, int salt, int n, size_t i, cc_reduce_op op, void* out) {
    int m;
    if (dt == CC_DTYPE_FLOAT32) {
        float acc, x;
        input(dt, exact, salt, 0, i, &acc);
        for (m = 1; m < n; m++) { input(dt, exact, salt, m, i, &x); if (op == CC_REDUCE_MAX) { if (x > acc) acc = x; } else acc += x; }
        if (op == CC_REDUCE_AVG) acc /= (float)n;
        memcpy(out, &acc, 4);
    } else if (dt == CC_DTYPE_FLOAT64) {
        double acc, x;
        input(dt, exact, salt, 0, i, &acc);
        for (m = 1; m < n; m++) { input(dt, exact, salt, m, i, &x); if (op == CC_REDUCE_MAX) { if (x > acc) acc = x; } else acc += x; }
        if (op == CC_REDUCE_AVG) acc /= (double)n;
        memcpy(out, &acc, 8);
    } else if (dt == CC_DTYPE_INT32) {
        int32_t acc, x;
        input(dt, exact, salt, 0, i, &acc);
        for (m = 1; m < n; m++) {
            input(dt, exact, salt, m, i, &x);
            if (op == CC_REDUCE_MAX) { if (x > acc) acc = x; } else acc = (int32_t)((uint32_t)acc + (uint32_t)x);
        }
        if (op == CC_REDUCE_AVG) acc /= n;
        memcpy(out, &acc, 4);
    } else {   /* exact halves: the integers' result, in the element type (exact: n is 1, 2 or 4) */
        double acc = 0, v;
        uint16_t b;
        for (m = 0; m < n; m++) {
            int small = (int)(mix(((uint64_t)salt << 40) ^ ((uint64_t)m << 32) ^ i) % 17) - 8;
            v = small;
            if (m == 0 || op != CC_REDUCE_MAX) acc = m == 0 ? v : acc + v;
            else if (v > acc) acc = v;
        }
        if (op == CC_REDUCE_AVG) acc /= n;
        if (dt == CC_DTYPE_BFLOAT16) { float f = (float)acc; uint32_t u; memcpy(&u, &f, 4); b = (uint16_t)(u >> 16); }
        else {
            double a = fabs(acc);
            int e;
            if (a == 0) b = 0;
            else {
                double mant = frexp(a, &e);   /* a = mant * 2^e, mant in [0.5, 1) */
                b = (uint16_t)(((unsigned)(e - 1 + 15) << 10) | ((unsigned)((mant * 2 - 1) * 1024.0) & 0x3ffu));
            }
            if (acc < 0) b |= 0x8000u;
        }
        memcpy(out, &b, 2);
    }
}

/* ---- the in-process world as the reference for the halves ----------------*/
typedef struct world_case {
    cc_collective c;   /* kind, dtype, reduce, n_elems */
    int salt, want;    /* want: the member whose result is kept */
    void* result;
} world_case;

static cc_result world_rank(cc_rank* rank, void* arg) {
    world_case* wc = (world_case*)arg;
    int me = cc_rank_index(rank), n = cc_rank_count(rank);
    size_t es = esize(wc->c.dtype), ns = wc->c.kind == CC_COLL_REDUCE_SCATTER ? wc->c.n_elems * (size_t)n : wc->c.n_elems;
    void* send = malloc(ns * es);
    void* recv = malloc(wc->c.n_elems * es);
    cc_collective c = wc->c;
    cc_result r;
    fill(c.dtype, 0, wc->salt, me, 0, ns, send);
    c.comm = cc_rank_world_comm(rank);
    c.send_buf = send;
    c.recv_buf = recv;
    r = cc_comm_run(&c);
    if (r == CC_OK && me == wc->want) memcpy(wc->result, recv, wc->c.n_elems * es);
    free(send);
    free(recv);
    return r;
}

static int world_reference(cc_context* ctx, const cc_collective* c, int n, int me, int salt, void* result) {
    cc_world_desc wd = {0};
    cc_world* w = NULL;
    world_case wc;
    cc_result r;
    wd.n_ranks = n;
    if (cc_world_create(ctx, &wd, &w) != CC_OK) return 0;
    wc.c = *c;
    wc.salt = salt;
    wc.want = me;
    wc.result = result;
    r = cc_world_run(w, world_rank, &wc);
    cc_world_destroy(w);
    return r == CC_OK;
}

/* ---- every collective on one communicator ---------------------------------*/
static const char* dt_name(cc_dtype dt) {
    static const char* names[] = { "float32", "float64", "int32", "float16", "bfloat16" };
    return names[dt];
}

static void check_coll(cc_context* ctx, cc_comm* comm, const char* layout, int salt, cc_coll_kind kind, cc_dtype dt,
                       cc_reduce_op op, size_t cnt, int in_place, int exact) {
    int n = cc_comm_size(comm), me = cc_comm_rank(comm), m, ok = 1;
    size_t es = esize(dt), i, ns = cnt, nr = cnt, bad = 0;
    char *send, *recv, *want;
    cc_collective c;
    cc_result r = CC_OK;
    if (kind == CC_COLL_REDUCE_SCATTER || kind == CC_COLL_ALL_TO_ALL) ns = cnt * (size_t)n;
    if (kind == CC_COLL_ALL_GATHER || kind == CC_COLL_ALL_TO_ALL) nr = cnt * (size_t)n;
    send = (char*)malloc(ns * es);
    recv = (char*)malloc(nr * es);
    want = (char*)malloc(nr * es);
    memset(recv, 0xAB, nr * es);
    fill(dt, exact, salt, me, 0, ns, send);
    memset(&c, 0, sizeof c);
    c.kind = kind; c.dtype = dt; c.reduce = op; c.n_elems = cnt; c.comm = comm;
    c.send_buf = send; c.recv_buf = in_place ? send : recv;
    switch (kind) {
        case CC_COLL_ALL_REDUCE: case CC_COLL_REDUCE_SCATTER:
            if ((dt == CC_DTYPE_FLOAT16 || dt == CC_DTYPE_BFLOAT16) && !exact) {
                cc_collective w = c;
                ok = world_reference(ctx, &w, n, me, salt, want);
                T(ok, "%s: the in-process world ran %s of %s", layout, cc__coll_name(kind), dt_name(dt));
            } else
                for (i = 0; i < cnt; i++)
                    serial_reduce(dt, exact, salt, n, (kind == CC_COLL_REDUCE_SCATTER ? (size_t)me * cnt : 0) + i, op, want + i * es);
            r = cc_comm_run(&c);
            break;
        case CC_COLL_ALL_GATHER:
            for (m = 0; m < n; m++) fill(dt, exact, salt, m, 0, cnt, want + (size_t)m * cnt * es);
            r = cc_comm_run(&c);
            break;
        case CC_COLL_ALL_TO_ALL:
            for (m = 0; m < n; m++) fill(dt, exact, salt, m, (size_t)me * cnt, cnt, want + (size_t)m * cnt * es);
            r = cc_comm_run(&c);
            break;
        case CC_COLL_BROADCAST:
            c.peer = n - 1;
            if (me != c.peer) c.send_buf = NULL;
            fill(dt, exact, salt, c.peer, 0, cnt, want);
            r = cc_comm_run(&c);
            break;
        default: {   /* pairs (2j, 2j+1): even sends first, then odd */
            int peer = me ^ 1, round;
            if (peer >= n) { free(send); free(recv); free(want); return; }
            fill(dt, exact, salt, peer, 0, cnt, want);
            for (round = 0; round < 2 && r == CC_OK; round++) {
                int sending = (me % 2) == round;
                c.kind = sending ? CC_COLL_SEND : CC_COLL_RECV;
                c.peer = peer;
                r = cc_comm_run(&c);
            }
            kind = CC_COLL_SEND;
            break;
        }
    }
    T(r == CC_OK, "%s: %s of %llu %s (%s)%s: %s", layout, cc__coll_name(kind), (unsigned long long)cnt, dt_name(dt),
      cc__reduce_name(op), in_place ? " in place" : "", r == CC_OK ? "" : cc_last_error(ctx));
    if (r == CC_OK && ok) {
        const char* got = in_place ? send : recv;
        for (i = 0; i < nr * es; i++) if (got[i] != want[i]) { bad = i / es + 1; break; }
        T(bad == 0, "%s: %s of %llu %s (%s)%s%s: element %llu differs from the %s", layout, cc__coll_name(kind),
          (unsigned long long)cnt, dt_name(dt), cc__reduce_name(op), in_place ? " in place" : "", exact ? " native" : "",
          (unsigned long long)(bad ? bad - 1 : 0),
          (dt == CC_DTYPE_FLOAT16 || dt == CC_DTYPE_BFLOAT16) && !exact && (kind == CC_COLL_ALL_REDUCE || kind == CC_COLL_REDUCE_SCATTER)
              ? "in-process world's result" : "serial computation");
    }
    free(send); free(recv); free(want);
}

static void check_layout(cc_context* ctx, cc_comm* comm, const char* layout, int salt, int native) {
    static const size_t counts[] = { 1, 7, 64 };
    int k, d, o, ci;
    for (k = CC_COLL_ALL_REDUCE; k <= CC_COLL_ALL_TO_ALL; k++) {
        if (k == CC_COLL_RECV) continue;   /* with SEND: the pairs */
        for (d = 0; d < CONCERTO_DTYPE_COUNT; d++)
            for (ci = 0; ci < 3; ci++) {
                int reduces = k == CC_COLL_ALL_REDUCE || k == CC_COLL_REDUCE_SCATTER;
                if (native && !reduces) continue;
                for (o = 0; o < (reduces ? 3 : 1); o++) {
                    check_coll(ctx, comm, layout, salt++, (cc_coll_kind)k, (cc_dtype)d, (cc_reduce_op)o, counts[ci], 0, native);
                    if (k == CC_COLL_ALL_REDUCE && ci == 1)
                        check_coll(ctx, comm, layout, salt++, (cc_coll_kind)k, (cc_dtype)d, (cc_reduce_op)o, counts[ci], 1, native);
                }
            }
    }
}

/* ---- a plan with cc_exec ---------------------------------------------------*/
#define PN 96
typedef struct plan_data {
    int rank, step, n_dp;
    float a[PN], b[PN], g[4 * PN], out[PN];
} plan_data;

static float pval(int rank, int step, int i, int which) {
    return (float)((double)(mix(((uint64_t)which << 48) ^ ((uint64_t)step << 40) ^ ((uint64_t)rank << 32) ^ (uint64_t)i) >> 11) /
                   9007199254740992.0 * 2.0 - 1.0);
}
static void op_fill_a(void* s, void* u) { plan_data* p = (plan_data*)u; int i; (void)s; for (i = 0; i < PN; i++) p->a[i] = pval(p->rank, p->step, i, 1); }
static void op_fill_b(void* s, void* u) { plan_data* p = (plan_data*)u; int i; (void)s; for (i = 0; i < PN; i++) p->b[i] = pval(p->rank, p->step, i, 2); }
static void op_combine(void* s, void* u) {
    plan_data* p = (plan_data*)u;
    int i, m;
    (void)s;
    for (i = 0; i < PN; i++) {
        float v = p->a[i];
        for (m = 0; m < p->n_dp; m++) v += p->g[m * PN + i] * (float)(m + 1);
        p->out[i] = v;
    }
}

/* the graph: fill a, all-reduce a (world, stream comm), fill b, all-gather b
   (dp, stream comm1), combine; salt != 0 builds a different plan */
static cc_graph* plan_graph(cc_context* ctx, plan_data* p, cc_comm* world, cc_comm* dp, int other) {
    static const char* names[] = { "compute", "comm", "comm1" };
    cc_graph_desc gd = {0};
    cc_graph* g = NULL;
    cc_buffer ba, bb, bg, bo;
    cc_region ra = {0}, rb = {0}, rg = {0}, ro = {0}, rr[2] = {0};
    cc_collective ar, ag;
    cc_op_desc d;
    cc_op op;
    gd.n_streams = 3;
    gd.stream_names = names;
    if (cc_graph_create(ctx, &gd, &g) != CC_OK) return NULL;
    cc_graph_add_buffer(g, "a", sizeof p->a, &ba);
    cc_graph_add_buffer(g, "b", sizeof p->b, &bb);
    cc_graph_add_buffer(g, "g", sizeof p->g, &bg);
    cc_graph_add_buffer(g, "out", sizeof p->out, &bo);
    memset(&ra, 0, sizeof ra); ra.buffer = ba; ra.n_bytes = sizeof p->a;
    memset(&rb, 0, sizeof rb); rb.buffer = bb; rb.n_bytes = sizeof p->b;
    memset(&rg, 0, sizeof rg); rg.buffer = bg; rg.n_bytes = sizeof p->g;
    memset(&ro, 0, sizeof ro); ro.buffer = bo; ro.n_bytes = sizeof p->out;
    memset(&ar, 0, sizeof ar);
    ar.kind = CC_COLL_ALL_REDUCE; ar.dtype = CC_DTYPE_FLOAT32; ar.reduce = CC_REDUCE_SUM; ar.n_elems = PN - (other ? 1 : 0);
    ar.comm = world; ar.send_buf = p->a; ar.recv_buf = p->a;
    memset(&ag, 0, sizeof ag);
    ag.kind = CC_COLL_ALL_GATHER; ag.dtype = CC_DTYPE_FLOAT32; ag.n_elems = PN; ag.comm = dp; ag.send_buf = p->b; ag.recv_buf = p->g;
    d = (cc_op_desc){0}; d.name = "fill_a"; d.duration_us = 100; d.fn = op_fill_a; d.user_data = p; d.writes = &ra; d.n_writes = 1;
    cc_graph_add_op(g, &d, &op);
    d = (cc_op_desc){0}; d.name = "allreduce_a"; d.duration_us = 300; d.stream = 1; d.coll = &ar;
    d.reads = &ra; d.n_reads = 1; d.writes = &ra; d.n_writes = 1;
    cc_graph_add_op(g, &d, &op);
    d = (cc_op_desc){0}; d.name = "fill_b"; d.duration_us = 100; d.fn = op_fill_b; d.user_data = p; d.writes = &rb; d.n_writes = 1;
    cc_graph_add_op(g, &d, &op);
    d = (cc_op_desc){0}; d.name = "allgather_b"; d.duration_us = 300; d.stream = 2; d.coll = &ag;
    d.reads = &rb; d.n_reads = 1; d.writes = &rg; d.n_writes = 1;
    cc_graph_add_op(g, &d, &op);
    rr[0] = ra; rr[1] = rg;
    d = (cc_op_desc){0}; d.name = "combine"; d.duration_us = 50; d.fn = op_combine; d.user_data = p;
    d.reads = rr; d.n_reads = 2; d.writes = &ro; d.n_writes = 1;
    cc_graph_add_op(g, &d, &op);
    return g;
}

static void check_plan(cc_context* ctx, cc_comm* world, cc_comm* dp) {
    plan_data p;
    cc_graph* g;
    cc_schedule s;
    cc_plan *prog = NULL, *sched = NULL;
    cc_backend be;
    float results[2][3][PN];
    int which, step, i, m, ok = 1;
    memset(&p, 0, sizeof p);
    memset(&s, 0, sizeof s);
    p.rank = g_rank;
    p.n_dp = cc_comm_size(dp);
    g = plan_graph(ctx, &p, world, dp, 0);
    T(g != NULL, "plan: the graph is built");
    if (!g) return;
    T(cc_sched_solve(ctx, g, NULL, &s) == CC_OK, "plan: scheduled: %s", cc_last_error(ctx));
    T(cc_plan_create(ctx, g, NULL, &prog) == CC_OK, "plan: program order: %s", cc_last_error(ctx));
    T(cc_plan_create(ctx, g, s.order, &sched) == CC_OK, "plan: the scheduler's order: %s", cc_last_error(ctx));
    T(cc_cpu_backend_create_ctx(ctx, &be) == CC_OK, "plan: cc_cpu_backend_create_ctx: %s", cc_last_error(ctx));
    for (which = 0; which < 2 && prog && sched; which++) {
        cc_exec* x = NULL;
        cc_result r = cc_exec_create(ctx, which ? sched : prog, &be, &x);
        T(r == CC_OK, "plan: cc_exec_create: %s", cc_last_error(ctx));
        if (r != CC_OK) continue;
        r = cc_exec_agree(x, world);
        T(r == CC_OK, "plan: cc_exec_agree on MPI: %s", cc_last_error(ctx));
        for (step = 0; step < 3 && r == CC_OK; step++) {
            p.step = step;
            r = cc_exec_step(x);
            T(r == CC_OK, "plan %s: step %d: %s", which ? "scheduled" : "in program order", step, cc_last_error(ctx));
            memcpy(results[which][step], p.out, sizeof p.out);
        }
        cc_exec_destroy(x);
    }
    /* serial: a summed over the world in rank order, b gathered over dp */
    for (step = 0; step < 3; step++)
        for (i = 0; i < PN; i++) {
            int dp_me = cc_comm_rank(dp), world_of_dp0 = g_rank - dp_me * (g_size / p.n_dp);
            float a = pval(0, step, i, 1), v;
            for (m = 1; m < g_size; m++) a += pval(m, step, i, 1);
            v = a;
            /* dp members: world ranks world_of_dp0 + m * (size / n_dp) (the layout made below) */
            for (m = 0; m < p.n_dp; m++) v += pval(world_of_dp0 + m * (g_size / p.n_dp), step, i, 2) * (float)(m + 1);
            if (memcmp(&v, &results[0][step][i], 4) != 0 || memcmp(&v, &results[1][step][i], 4) != 0) ok = 0;
        }
    T(ok, "plan: program order and the scheduler's order give the serial result bit for bit in 3 steps");
    T(memcmp(results[0], results[1], sizeof results[0]) == 0, "plan: both orders agree bit for bit");
    /* a different plan on the last rank: every rank is told */
    {
        plan_data q;
        cc_graph* g2;
        cc_plan* p2 = NULL;
        cc_exec* x = NULL;
        cc_result r;
        memset(&q, 0, sizeof q);
        q.n_dp = p.n_dp;
        g2 = plan_graph(ctx, &q, world, dp, g_rank == g_size - 1);
        if (g2 && cc_plan_create(ctx, g2, NULL, &p2) == CC_OK && cc_exec_create(ctx, p2, &be, &x) == CC_OK) {
            r = cc_exec_agree(x, world);
            T(r == CC_ERR_PLAN_MISMATCH, "plan: a different plan on rank %d gives CC_ERR_PLAN_MISMATCH here (got %d: %s)",
              g_size - 1, (int)r, cc_last_error(ctx));
            r = cc_exec_step(x);
            T(r == CC_ERR_PLAN_MISMATCH, "plan: and the step is refused (got %d)", (int)r);
        } else
            T(0, "plan: the second plan: %s", cc_last_error(ctx));
        cc_exec_destroy(x);
        cc_plan_destroy(p2);
        cc_graph_destroy(g2);
    }
    cc_backend_destroy(&be);
    cc_plan_destroy(prog);
    cc_plan_destroy(sched);
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
}

/* ---- a mismatch through cc_comm_run ---------------------------------------*/
static void check_mismatch(cc_context* ctx) {
    cc_mpi_desc md = {0};
    cc_comm* c = NULL;
    float x[8], y[8 * 4];
    cc_collective k;
    cc_result r;
    const char* e;
    md.name = "probe";
    md.keep_job = 1;
    md.timeout_s = 20;
    T(cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &c) == CC_OK, "mismatch: communicator: %s", cc_last_error(ctx));
    if (!c) return;
    memset(x, 0, sizeof x);
    memset(&k, 0, sizeof k);
    k.kind = g_rank == g_size - 1 ? CC_COLL_ALL_GATHER : CC_COLL_ALL_REDUCE;
    k.dtype = CC_DTYPE_FLOAT32; k.n_elems = 8; k.comm = c; k.send_buf = x; k.recv_buf = g_rank == g_size - 1 ? y : x;
    r = cc_comm_run(&k);
    e = cc_last_error(ctx);
    T(r == CC_ERR_COLL_MISMATCH, "mismatch: CC_ERR_COLL_MISMATCH on every rank (got %d: %s)", (int)r, e);
    T(strstr(e, "all_reduce of 8 float32 (sum)") && strstr(e, "all_gather of 8 float32") && strstr(e, "'probe'") &&
      strstr(e, "collective #0"), "mismatch: the message names both collectives, the number and the communicator: %s", e);
    k.kind = CC_COLL_ALL_GATHER; k.recv_buf = y;
    r = cc_comm_run(&k);
    T(r == CC_ERR_COLL_MISMATCH && strstr(cc_last_error(ctx), "failed earlier"),
      "mismatch: the next collective fails at once quoting the first failure (got %d: %s)", (int)r, cc_last_error(ctx));
    cc_comm_destroy(c);
}

/* ---- allocation failures: the k-th request of the context refused ----------
   Every rank refuses the same k (the ranks make the same requests in the
   same order), through cc_mpi_comm_create, cc_comm_split, the CPU backend
   (cc_cpu_backend_create_ctx, a stream) and a collective on each
   communicator: CC_ERR_OUT_OF_MEMORY or CC_OK on every rank, nothing left
   allocated, and the same calls work afterwards. */
typedef struct sweep_alloc { long n_calls, fail_at, live; pthread_mutex_t mu; } sweep_alloc;
static void* sa_alloc(size_t n, void* u) {
    sweep_alloc* a = (sweep_alloc*)u;
    void* p = NULL;
    pthread_mutex_lock(&a->mu);
    if (++a->n_calls != a->fail_at && (p = malloc(n)) != NULL) a->live++;
    pthread_mutex_unlock(&a->mu);
    return p;
}
static void* sa_realloc(void* q, size_t n, void* u) {
    sweep_alloc* a = (sweep_alloc*)u;
    void* p = NULL;
    pthread_mutex_lock(&a->mu);
    if (++a->n_calls != a->fail_at && (p = realloc(q, n)) != NULL && !q) a->live++;
    pthread_mutex_unlock(&a->mu);
    return p;
}
static void sa_free(void* q, void* u) {
    sweep_alloc* a = (sweep_alloc*)u;
    if (!q) return;
    pthread_mutex_lock(&a->mu);
    free(q);
    a->live--;
    pthread_mutex_unlock(&a->mu);
}

static cc_result sweep_once(cc_context* ctx) {
    cc_mpi_desc md = {0};
    cc_comm *c = NULL, *s = NULL;
    cc_backend be;
    int have_be = 0;
    void* st = NULL;
    float x[8] = {0}, y[8];
    cc_collective k;
    cc_result r;
    md.name = "sweep";
    md.keep_job = 1;
    md.timeout_s = 5;
    memset(&k, 0, sizeof k);
    k.kind = CC_COLL_ALL_REDUCE; k.dtype = CC_DTYPE_FLOAT32; k.n_elems = 8; k.send_buf = x; k.recv_buf = y;
    r = cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &c);
    if (r == CC_OK) r = cc_comm_split(c, 0, g_size - g_rank, &s);
    if (r == CC_OK) { k.comm = c; r = cc_comm_run(&k); }
    if (r == CC_OK) r = cc_cpu_backend_create_ctx(ctx, &be);
    if (r == CC_OK) { have_be = 1; r = be.fns->stream_create(be.self, 1, &st); }
    if (r == CC_OK) {
        k.kind = CC_COLL_ALL_REDUCE; k.comm = s; k.recv_buf = y;
        r = be.fns->collective(be.self, st, &k);
        if (r == CC_OK) r = be.fns->synchronize(be.self);
    }
    if (have_be) cc_backend_destroy(&be);
    cc_comm_destroy(s);
    cc_comm_destroy(c);
    return r;
}

static void check_alloc_sweep(void) {
    sweep_alloc a;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    long n, k, base, n_bad = 0, n_oom = 0;
    memset(&a, 0, sizeof a);
    pthread_mutex_init(&a.mu, NULL);
    cd.allocator.alloc_fn = sa_alloc;
    cd.allocator.realloc_fn = sa_realloc;
    cd.allocator.free_fn = sa_free;
    cd.allocator.user_data = &a;
    if (cc_context_create(&cd, &ctx) != CC_OK) { T(0, "alloc sweep: a context"); return; }
    T(sweep_once(ctx) == CC_OK, "alloc sweep: the calls without refusals: %s", cc_last_error(ctx));
    base = a.n_calls;
    T(sweep_once(ctx) == CC_OK, "alloc sweep: and again: %s", cc_last_error(ctx));
    n = a.n_calls - base;
    for (k = 1; k <= n; k++) {
        long live = a.live;
        cc_result r;
        a.fail_at = a.n_calls + k;
        r = sweep_once(ctx);
        a.fail_at = 0;
        if (r == CC_ERR_OUT_OF_MEMORY && strstr(cc_last_error(ctx), "memory")) n_oom++;
        else if (r != CC_OK && n_bad++ < 3) printf("rank %d: alloc sweep k=%ld: %d: %s\n", g_rank, k, (int)r, cc_last_error(ctx));
        if (a.live != live && n_bad++ < 3) printf("rank %d: alloc sweep k=%ld: %ld blocks left\n", g_rank, k, a.live - live);
        MPI_Barrier(MPI_COMM_WORLD);
        r = sweep_once(ctx);
        if (r != CC_OK && n_bad++ < 3) printf("rank %d: alloc sweep k=%ld: the calls fail afterwards: %s\n", g_rank, k, cc_last_error(ctx));
    }
    if (g_rank == 0)
        printf("     test_mpi: allocation-failure points swept on each of %d ranks, cc_mpi_comm_create + cc_comm_split + "
               "cc_comm_run + cc_cpu_backend_create_ctx + a collective on a stream: %ld (%ld refused with CC_ERR_OUT_OF_MEMORY)\n",
               g_size, n, n_oom);
    T(n > 0 && n_oom > 0, "alloc sweep: %ld requests, %ld refusals reported", n, n_oom);
    T(n_bad == 0, "alloc sweep: every refusal CC_ERR_OUT_OF_MEMORY saying so, or CC_OK; nothing left; works afterwards");
    cc_context_destroy(ctx);
    T(a.live == 0, "alloc sweep: every block freed (%ld left)", a.live);
    pthread_mutex_destroy(&a.mu);
}

static void check_api(cc_context* ctx, cc_comm* world) {
    cc_mpi_desc d = cc_mpi_query_defaults(NULL), bad = (cc_mpi_desc){0};
    cc_comm *none = (cc_comm*)1, *c = NULL;
    cc_collective k;
    float x[4] = { 0, 0, 0, 0 };
    cc_result r;
    T(strcmp(d.name, "mpi") == 0 && d.timeout_s == 30 && d.abort_delay_s == 1 && d.reduce == CC_MPI_REDUCE_RANK_ORDER &&
      !d.keep_job, "api: the defaults");
    T(strcmp(cc_mpi_comm_fns()->family, "mpi") == 0 && strcmp(cc_mpi_comm_fns()->stream_kind, "host") == 0 &&
      cc_comm_self(world, cc_mpi_comm_fns()) != NULL, "api: the family's table");
    T(cc_mpi_comm_handle(world) != MPI_COMM_NULL && cc_mpi_comm_handle(world) != MPI_COMM_WORLD, "api: a duplicate MPI communicator");
    T(cc_mpi_check_thread_level(ctx) == CC_OK, "api: MPI_THREAD_MULTIPLE");
    T(cc_mpi_init(ctx, NULL, NULL) == CC_OK, "api: cc_mpi_init once initialised checks the level");
    bad.timeout_s = -1;
    r = cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &bad, &c);
    T(r == CC_ERR_INVALID_ARG && c == NULL && strstr(cc_last_error(ctx), "timeout_s"), "api: a negative timeout is refused: %s",
      cc_last_error(ctx));
    r = cc_comm_split(world, g_rank == 0 ? -1 : 1, 0, &none);
    T(r == CC_OK && (g_rank == 0) == (none == NULL), "api: split with a negative color: no communicator on that rank");
    T(g_rank == 0 || cc_comm_size(none) == g_size - 1, "api: the others' group has size - 1 members");
    cc_comm_destroy(g_rank == 0 ? NULL : none);
    memset(&k, 0, sizeof k);
    k.kind = CC_COLL_SEND; k.dtype = CC_DTYPE_FLOAT32; k.n_elems = 4; k.comm = world; k.send_buf = x; k.peer = g_rank;
    r = cc_comm_run(&k);
    T(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "itself"), "api: a send to itself is refused: %s", cc_last_error(ctx));
    k.kind = CC_COLL_ALL_REDUCE; k.peer = 0; k.reduce = (cc_reduce_op)9; k.recv_buf = x;
    r = cc_comm_run(&k);
    T(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "world"), "api: an invalid reduction is refused, naming the communicator: %s",
      cc_last_error(ctx));
}

/* ---- fault scenarios: through the CPU backend, as a step would -----------*/
static int fault(cc_context* ctx, const char* mode) {
    cc_mpi_desc md = {0};
    cc_comm* world = NULL;
    cc_backend be;
    void* st = NULL;
    float x[16], y[16];
    cc_collective a, b;
    cc_result r;
    int step;
    md.name = "world";
    md.timeout_s = strcmp(mode, "fault-tiny") == 0 ? nextafter(0.0, 1.0) : 3;   /* the smallest it accepts */
    if (cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &world) != CC_OK || cc_cpu_backend_create_ctx(ctx, &be) != CC_OK ||
        be.fns->stream_create(be.self, 1, &st) != CC_OK) {
        fprintf(stderr, "rank %d: set-up failed: %s\n", g_rank, cc_last_error(ctx));
        return 1;
    }
    memset(x, 0, sizeof x);
    memset(&a, 0, sizeof a);
    a.kind = CC_COLL_ALL_REDUCE; a.dtype = CC_DTYPE_FLOAT32; a.n_elems = 16; a.comm = world; a.send_buf = x; a.recv_buf = x;
    b = a;
    b.kind = CC_COLL_BROADCAST; b.n_elems = 8; b.send_buf = y; b.recv_buf = y;
    for (step = 0; step < 4; step++) {
        if (strcmp(mode, "fault-kill") == 0 && step == 2 && g_rank == 1) raise(SIGKILL);
        if ((strcmp(mode, "fault-absent") == 0 || strcmp(mode, "fault-tiny") == 0) && step == 2 && g_rank == g_size - 1) {
            printf("rank %d: not arriving\n", g_rank);
            fflush(stdout);
            sleep(120);
        }
        if (strcmp(mode, "fault-order") == 0 && step == 2 && g_rank == 1) {
            be.fns->collective(be.self, st, &b);
            be.fns->collective(be.self, st, &a);
        } else {
            be.fns->collective(be.self, st, &a);
            be.fns->collective(be.self, st, &b);
        }
        r = be.fns->synchronize(be.self);
        if (r != CC_OK) {   /* with the default desc the abort entry ends the job before this */
            fprintf(stderr, "rank %d: step %d failed and the job goes on: %s\n", g_rank, step, cc_last_error(ctx));
            return 1;
        }
        printf("rank %d: step %d done\n", g_rank, step);
        fflush(stdout);
    }
    cc_backend_destroy(&be);
    cc_comm_destroy(world);
    return 0;
}

int main(int argc, char** argv) {
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_mpi_desc md = {0};
    cc_comm *world = NULL, *tp = NULL, *dp = NULL, *native = NULL;
    int sums[2], tot[2], tpn, salt = 1;
    double t0;
    cd.logger.log_fn = log_stderr;
    if (cc_context_create(&cd, &ctx) != CC_OK) return 2;
    if (cc_mpi_init(ctx, &argc, &argv) != CC_OK) {
        printf("FAIL test_mpi: cc_mpi_init: %s\n# test_mpi: 0 passed, 1 failed, 0 skipped\n", cc_last_error(ctx));
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (argc > 1) {
        int rc;
        g_log = 1;
        rc = fault(ctx, argv[1]);
        MPI_Finalize();
        cc_context_destroy(ctx);
        return rc;
    }
    t0 = MPI_Wtime();
    md.name = "world";
    md.timeout_s = 60;
    T(cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &world) == CC_OK, "cc_mpi_comm_create: %s", cc_last_error(ctx));
    /* TP-like groups of consecutive ranks (2, or 1 on two ranks), DP-like
       groups across them, ordered by key */
    tpn = g_size >= 4 ? 2 : 1;
    T(cc_comm_split(world, g_rank / tpn, g_rank % tpn, &tp) == CC_OK, "split tp: %s", cc_last_error(ctx));
    T(cc_comm_split(world, g_rank % tpn, g_rank / tpn, &dp) == CC_OK, "split dp: %s", cc_last_error(ctx));
    T(tp && cc_comm_size(tp) == tpn && cc_comm_rank(tp) == g_rank % tpn && strcmp(cc_comm_name(tp), "world.0") * 0 == 0,
      "the tp group: %d members", tpn);
    T(dp && cc_comm_size(dp) == g_size / tpn && cc_comm_rank(dp) == g_rank / tpn, "the dp group: %d members", g_size / tpn);
    if (world && tp && dp) {
        check_api(ctx, world);
        check_layout(ctx, world, "world", salt, 0); salt += 1000;
        check_layout(ctx, tp, "tp", salt + 10 * (g_rank / tpn), 0); salt += 1000;
        check_layout(ctx, dp, "dp", salt + 10 * (g_rank % tpn), 0); salt += 1000;
        md.reduce = CC_MPI_REDUCE_NATIVE;
        md.name = "native";
        T(cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &native) == CC_OK, "native: %s", cc_last_error(ctx));
        if (native) check_layout(ctx, native, "native", salt, 1);
        check_plan(ctx, world, dp);
        check_mismatch(ctx);
        check_alloc_sweep();
    }
    cc_comm_destroy(native);
    cc_comm_destroy(dp);
    cc_comm_destroy(tp);
    cc_comm_destroy(world);
    sums[0] = g_pass; sums[1] = g_fail;
    MPI_Reduce(sums, tot, 2, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (g_rank == 0) {
        printf("     test_mpi: %d checks on each of %d ranks took %.1f s\n", tot[0] / g_size, g_size, MPI_Wtime() - t0);
        printf("# test_mpi_np%d: %d passed, %d failed, 0 skipped\n", g_size, tot[0], tot[1]);
        fflush(stdout);
    }
    MPI_Finalize();
    cc_context_destroy(ctx);
    return g_fail ? 1 : 0;
}
