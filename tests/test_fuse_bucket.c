/* tests/test_fuse_bucket.c - cc_graph_fuse through buckets: members that
   are not one range (all-reduces), and reduce-scatters and all-gathers.

   The world runs: on 2 and 4 CPU ranks, each rank fills the send buffers of
   five collectives of one kind (all-reduce in place, reduce-scatter,
   all-gather), each in its own allocation, runs them and reads the
   results. The step runs in program order, then fused (packed into a
   bucket the library places, interleaved by rank for reduce-scatters and
   all-gathers) in the judging schedule's order: every receive buffer and
   every reader's output must be bit-identical (memcmp), and equal to what
   the test computes itself (sums in rank order; rank r's block; the blocks
   of every rank in rank order).

   The model: a graph whose step is its collectives' chain on one stream,
   each all-reduce costing 2(n-1)(a + (B/n) b) on a link of latency a. A
   bucket of members S replaces their |S| start-ups by one and adds a pack
   and an unpack of each member's bytes at copy_us_per_byte: the test runs
   the greedy bucketing by hand with these figures and checks the buckets
   and the predicted makespan for latencies from 0 (nothing pays) to large
   (one bucket). Under a memory cap, a bucket whose arena does not fit is
   not kept. Bad input is still refused, the graph unchanged. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define NM 5           /* members */
#define MAXR 4
static const size_t m_elems[NM] = { 48, 16, 80, 32, 64 };   /* each member's n_elems */

static float fill_value(int rank, int i, size_t j) { return (float)(rank + 1) * 0.31f * (float)(j + 1) + (float)i * 0.017f; }

/* ---- the world run -------------------------------------------------------------*/
typedef struct member {
    int rank, n_ranks, i;
    cc_coll_kind kind;
    float *send, *recv, *out;
    size_t n_send, n_recv;
} member;

static void fill_fn(void* stream, void* user) {
    member* m = (member*)user;
    size_t j;
    (void)stream;
    for (j = 0; j < m->n_send; j++) m->send[j] = fill_value(m->rank, m->i, j);
}
static void use_fn(void* stream, void* user) {
    member* m = (member*)user;
    size_t j;
    (void)stream;
    for (j = 0; j < m->n_recv; j++) m->out[j] = m->recv[j] * 0.5f + 1.0f;
}

static cc_region whole(cc_buffer b, uint64_t n) {
    cc_region r;
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = n;
    return r;
}

static const cc_link g_link = { 200.0, 0.001, 0, 0 };

/* fill_i, coll_i (comm stream) for each member, then use_i for each (a
   reader of c_i's result before c_{i+1} would keep c_i apart). */
static cc_result build_members(cc_context* ctx, member* M, cc_comm* comm, cc_graph** out) {
    cc_graph* g = NULL;
    cc_result r;
    int i;
    char name[32];
    cc_region rr_of[NM], ro_of[NM];
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (i = 0; i < NM && r == CC_OK; i++) {
        member* m = &M[i];
        cc_buffer bs, br, bo;
        cc_region rs, rr, ro;
        cc_op_desc d;
        cc_collective co;
        int in_place = m->kind == CC_COLL_ALL_REDUCE;
        snprintf(name, sizeof name, "s%d", i);
        r = cc_graph_add_buffer(g, name, m->n_send * 4, &bs);
        br = bs;
        snprintf(name, sizeof name, "r%d", i);
        if (r == CC_OK && !in_place) r = cc_graph_add_buffer(g, name, m->n_recv * 4, &br);
        snprintf(name, sizeof name, "o%d", i);
        if (r == CC_OK) r = cc_graph_add_buffer(g, name, m->n_recv * 4, &bo);
        if (r != CC_OK) break;
        rs = whole(bs, m->n_send * 4); rr = whole(br, m->n_recv * 4); ro = whole(bo, m->n_recv * 4);
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "fill%d", i);
        d.name = name; d.duration_us = 10; d.fn = fill_fn; d.user_data = m;
        d.writes = &rs; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
        memset(&co, 0, sizeof co);
        co.kind = m->kind; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.comm = comm;
        co.n_elems = m_elems[i]; co.send_buf = m->send; co.recv_buf = m->recv;
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "c%d", i);
        d.name = name; d.stream = CC_STREAM_COMM; d.coll = &co;
        d.duration_us = tu_flat_us(&g_link, m->kind, m_elems[i] * 4, m->n_ranks);
        d.reads = &rs; d.n_reads = 1; d.writes = &rr; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        rr_of[i] = rr;
        ro_of[i] = ro;
    }
    for (i = 0; i < NM && r == CC_OK; i++) {
        cc_op_desc d;
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "use%d", i);
        d.name = name; d.duration_us = 10; d.fn = use_fn; d.user_data = &M[i];
        d.reads = &rr_of[i]; d.n_reads = 1; d.writes = &ro_of[i]; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

typedef struct wres {
    int ok;
    char err[400];
    int n_colls_before, n_colls_after, n_changed, n_packs, n_unpacks;
    int same;                  /* receive buffers and outputs bit-identical to program order */
    int right;                 /* and to the test's own computation */
    uint64_t fingerprint;
} wres;

typedef struct wjob { int n_ranks; cc_coll_kind kind; wres res[MAXR]; } wjob;

static cc_result bucket_rank(cc_rank* rank, void* user) {
    wjob* J = (wjob*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), n = J->n_ranks, i, q;
    wres* R = &J->res[me];
    member M[NM];
    float* ref[NM][2];
    cc_graph *g = NULL, *fg = NULL;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    cc_schedule s;
    cc_result r;
    size_t j;
    memset(M, 0, sizeof M);
    memset(ref, 0, sizeof ref);
    memset(&s, 0, sizeof s);
    for (i = 0; i < NM; i++) {
        member* m = &M[i];
        m->rank = me; m->n_ranks = n; m->i = i; m->kind = J->kind;
        m->n_send = m_elems[i] * (J->kind == CC_COLL_REDUCE_SCATTER ? (size_t)n : 1);
        m->n_recv = m_elems[i] * (J->kind == CC_COLL_ALL_GATHER ? (size_t)n : 1);
        m->send = (float*)calloc(m->n_send, sizeof(float));   /* each its own allocation: not one range */
        m->recv = J->kind == CC_COLL_ALL_REDUCE ? m->send : (float*)calloc(m->n_recv, sizeof(float));
        m->out = (float*)calloc(m->n_recv, sizeof(float));
        ref[i][0] = (float*)calloc(m->n_recv, sizeof(float));
        ref[i][1] = (float*)calloc(m->n_recv, sizeof(float));
    }
    r = build_members(ctx, M, cc_rank_world_comm(rank), &g);
    if (r == CC_OK) r = tu_run_step(rank, g, NULL);
    for (i = 0; r == CC_OK && i < NM; i++) {
        memcpy(ref[i][0], M[i].recv, M[i].n_recv * 4);
        memcpy(ref[i][1], M[i].out, M[i].n_recv * 4);
    }
    memset(&rd, 0, sizeof rd);
    rd.link = &g_link;
    if (r == CC_OK) r = cc_graph_fuse(ctx, g, &rd, &fg, &rep);
    if (r == CC_OK) {
        R->n_colls_before = rep.n_colls_before;
        R->n_colls_after = rep.n_colls_after;
        R->n_changed = rep.n_changed;
        R->fingerprint = tu_graph_fingerprint(fg);
        for (i = 0; i < cc_graph_n_ops(fg); i++) {
            const char* nm = cc_op_name(fg, cc_graph_op(fg, i));
            const char* slash = strrchr(nm, '/');
            R->n_packs += slash && !strcmp(slash, "/pack");
            R->n_unpacks += slash && !strcmp(slash, "/unpack");
        }
        r = cc_sched_solve(ctx, fg, &rd.sched, &s);
    }
    for (i = 0; r == CC_OK && i < NM; i++) {   /* nothing left over from program order */
        memset(M[i].send, 0, M[i].n_send * 4);
        memset(M[i].recv, 0, M[i].n_recv * 4);
        memset(M[i].out, 0, M[i].n_recv * 4);
    }
    if (r == CC_OK) r = tu_run_step(rank, fg, s.order);
    if (r == CC_OK) {
        R->same = R->right = 1;
        for (i = 0; i < NM; i++) {
            member* m = &M[i];
            if (memcmp(m->recv, ref[i][0], m->n_recv * 4) || memcmp(m->out, ref[i][1], m->n_recv * 4)) R->same = 0;
            for (j = 0; j < m->n_recv; j++) {
                float want;
                if (J->kind == CC_COLL_ALL_GATHER) {   /* rank q's block, in rank order */
                    want = fill_value((int)(j / m_elems[i]), i, j % m_elems[i]);
                } else {                               /* a sum in rank order: of element j, or of this rank's block */
                    size_t e = J->kind == CC_COLL_REDUCE_SCATTER ? (size_t)me * m_elems[i] + j : j;
                    want = fill_value(0, i, e);
                    for (q = 1; q < n; q++) want += fill_value(q, i, e);
                }
                if (m->recv[j] != want || m->out[j] != want * 0.5f + 1.0f) R->right = 0;
            }
        }
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(fg);
    cc_graph_destroy(g);
    for (i = 0; i < NM; i++) {
        if (M[i].recv != M[i].send) free(M[i].recv);
        free(M[i].send); free(M[i].out); free(ref[i][0]); free(ref[i][1]);
    }
    return CC_OK;
}

static void test_world_buckets(void) {
    static const cc_coll_kind kinds[3] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER };
    static const char* kname[3] = { "all-reduces", "reduce-scatters", "all-gathers" };
    static wjob J;
    int k, n, r;
    for (k = 0; k < 3; k++)
        for (n = 2; n <= 4; n += 2) {
            cc_result rc;
            char err[512];
            int ok = 1, same = 1, right = 1, fp = 1;
            memset(&J, 0, sizeof J);
            J.n_ranks = n;
            J.kind = kinds[k];
            tu_run_world(n, bucket_rank, &J, &rc, err, sizeof err);
            CHECK_RES(NULL, rc, CC_OK, "%s, %d ranks: the world ran (%s)", kname[k], n, err);
            for (r = 0; r < n; r++) {
                ok &= J.res[r].ok; same &= J.res[r].same; right &= J.res[r].right;
                fp &= J.res[r].fingerprint == J.res[0].fingerprint;
            }
            CHECK(ok, "%s, %d ranks: program order, fusion and the fused step ran (%s)", kname[k], n, J.res[0].err);
            if (!ok) continue;
            CHECK(J.res[0].n_colls_before == NM && J.res[0].n_colls_after == 1 && J.res[0].n_changed == 1,
                  "%s, %d ranks: five members in separate allocations, a latency of 200 us: one bucket (%d -> %d collectives)",
                  kname[k], n, J.res[0].n_colls_before, J.res[0].n_colls_after);
            CHECK(J.res[0].n_packs == NM && J.res[0].n_unpacks == NM, "%s, %d ranks: a pack and an unpack per member (%d, %d)",
                  kname[k], n, J.res[0].n_packs, J.res[0].n_unpacks);
            CHECK(same, "%s, %d ranks: the fused step's results are bit-identical to program order's", kname[k], n);
            CHECK(right, "%s, %d ranks: and to the results computed here", kname[k], n);
            CHECK(fp, "%s, %d ranks: every rank made the same fused graph", kname[k], n);
        }
}

/* ---- the model: when a bucket pays ------------------------------------------------
   fill (10 us) writes every piece; NB in-place all-reduces of pb[i] bytes
   (each piece its own buffer) on the comm stream; use (10 us) reads them.
   The comm stream is the step: 20 + its ops' sum. */
#define NB 5
static const double pb[NB] = { 1000, 1000, 4000, 1000, 1000 };
static const double cpb = 0.01;   /* us per copied byte */

static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c; (void)msg; (void)msg_size;
    return CC_OK;
}
static const cc_comm_fns idle_fns = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

/* 2(n-1)(a + (B/n) b): the flat ring all-reduce, by hand */
static double ar_us(double a, double b, double bytes, int n) { return 2.0 * (n - 1) * (a + bytes / n * b); }

static cc_graph* build_chain(cc_context* ctx, cc_comm* comm, const cc_link* link, int n, float* mem) {
    cc_graph* g = NULL;
    cc_buffer bufs[NB];
    cc_region all[NB];
    cc_op_desc d;
    int i;
    size_t off = 0;
    char name[32];
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    for (i = 0; i < NB; i++) {
        snprintf(name, sizeof name, "p%d", i);
        cc_graph_add_buffer(g, name, (uint64_t)pb[i], &bufs[i]);
        all[i] = whole(bufs[i], (uint64_t)pb[i]);
    }
    memset(&d, 0, sizeof d);
    d.name = "fill"; d.duration_us = 10; d.writes = all; d.n_writes = NB;
    cc_graph_add_op(g, &d, NULL);
    for (i = 0; i < NB; i++) {
        cc_collective co;
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.comm = comm; co.n_elems = (size_t)pb[i] / 4;
        co.send_buf = co.recv_buf = mem + off + 16 * (size_t)i;   /* a gap after each: never one range */
        off += (size_t)pb[i] / 4;
        memset(&d, 0, sizeof d);
        snprintf(name, sizeof name, "ar%d", i);
        d.name = name; d.stream = CC_STREAM_COMM; d.coll = &co; d.duration_us = ar_us(link->latency_us, link->us_per_byte, pb[i], n);
        d.reads = &all[i]; d.n_reads = 1; d.writes = &all[i]; d.n_writes = 1;
        cc_graph_add_op(g, &d, NULL);
    }
    memset(&d, 0, sizeof d);
    d.name = "use"; d.duration_us = 10; d.reads = all; d.n_reads = NB;
    cc_graph_add_op(g, &d, NULL);
    return g;
}

/* The greedy bucketing by hand: members join the open bucket while the
   makespan does not grow. Fusing bucket S (|S| >= 2) costs its bytes'
   pack and unpack, 2 cpb sum B, and saves |S| - 1 start-ups 2(n-1)a.
   Returns the buckets; *mk the predicted makespan. */
static double bucket_us(double a, double b, int n, int members, double bytes) {   /* on the comm stream */
    return (members >= 2 ? 2 * cpb * bytes : 0) + ar_us(a, b, bytes, n);
}
static int greedy_by_hand(double a, double b, int n, double* mk) {
    int i, open_n = 1, buckets = 1;
    double open_bytes = pb[0], done = 0;   /* done: the closed buckets' time */
    for (i = 1; i < NB; i++) {
        double with = bucket_us(a, b, n, open_n + 1, open_bytes + pb[i]);
        double apart = bucket_us(a, b, n, open_n, open_bytes) + ar_us(a, b, pb[i], n);
        if (with <= apart + 1e-9) { open_n++; open_bytes += pb[i]; }   /* ties join: one collective fewer */
        else {
            done += bucket_us(a, b, n, open_n, open_bytes);
            open_n = 1; open_bytes = pb[i]; buckets++;
        }
    }
    done += bucket_us(a, b, n, open_n, open_bytes);
    *mk = 20 + done;
    return buckets;
}

static void test_latency_decides(void) {
    static const double lat[4] = { 0, 25, 45, 400 };
    static float mem[4096];
    cc_context* ctx;
    cc_comm* comm = NULL;
    int t, prev = NB + 1;
    cc_context_create(NULL, &ctx);
    CHECK_RES(ctx, cc_comm_wrap(ctx, &idle_fns, NULL, 0, 2, "pair", &comm), CC_OK, "a communicator of 2 ranks");
    for (t = 0; t < 4 && comm; t++) {
        cc_link link = { 0 };
        cc_rewrite_desc rd;
        cc_rewrite_report rep;
        cc_graph *g, *fg = NULL;
        double mk_hand;
        int want;
        link.latency_us = lat[t]; link.us_per_byte = 0.0005;
        g = build_chain(ctx, comm, &link, 2, mem);
        memset(&rd, 0, sizeof rd);
        rd.link = &link;
        rd.copy_us_per_byte = cpb;
        want = greedy_by_hand(link.latency_us, link.us_per_byte, 2, &mk_hand);
        CHECK_RES(ctx, g ? cc_graph_fuse(ctx, g, &rd, &fg, &rep) : CC_ERR_INVALID_ARG, CC_OK, "latency %g: fuse", lat[t]);
        if (fg) {
            CHECK_INT(rep.n_colls_after, want, "latency %g us: the buckets the model says pay (hand: %d)", lat[t], want);
            CHECK_NEAR(rep.makespan_after_us, mk_hand, 0.01, "latency %g us: the predicted step is the hand computation's",
                       lat[t]);
            CHECK(rep.n_colls_after <= prev, "latency %g us: no fewer members fused than at a lower latency (%d, then %d)",
                  lat[t], prev, rep.n_colls_after);
            prev = rep.n_colls_after;
        }
        cc_graph_destroy(fg);
        cc_graph_destroy(g);
    }
    CHECK(prev == 1, "at the largest latency every member is in one bucket (%d collectives)", prev);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* ---- what is not fused, and bad input -----------------------------------------------*/
static void test_refused(void) {
    static float mem[4096];
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_link link = { 0 };
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    cc_graph *g, *fg = NULL;
    uint64_t fp0;
    cc_context_create(NULL, &ctx);
    cc_comm_wrap(ctx, &idle_fns, NULL, 0, 2, "pair", &comm);
    link.latency_us = 400; link.us_per_byte = 0.0005;
    g = build_chain(ctx, comm, &link, 2, mem);
    if (!g) { CHECK(0, "graph"); cc_comm_destroy(comm); cc_context_destroy(ctx); return; }
    fp0 = tu_graph_fingerprint(g);
    memset(&rd, 0, sizeof rd);
    rd.link = &link;
    rd.copy_us_per_byte = NAN;
    fg = (cc_graph*)&fg;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_ERR_INVALID_ARG, "copy_us_per_byte NaN");
    CHECK_CONTAINS(cc_last_error(ctx), "copy_us_per_byte", "the message names the field");
    CHECK(fg == NULL && rep.n_ops_before == 0, "no graph and a zero report");
    rd.copy_us_per_byte = -0.5;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "copy_us_per_byte negative");
    CHECK(tu_graph_fingerprint(g) == fp0, "the input is unchanged");
    cc_graph_destroy(g);
    /* a member with a second read region is not packed (its reads would not all move into the bucket) */
    {
        cc_buffer b0, b1, extra;
        cc_region r0, r1, rx, two[2];
        cc_collective co;
        cc_op_desc d;
        cc_graph_create(ctx, NULL, &g);
        cc_graph_add_buffer(g, "b0", 256, &b0);
        cc_graph_add_buffer(g, "b1", 256, &b1);
        cc_graph_add_buffer(g, "extra", 64, &extra);
        r0 = whole(b0, 256); r1 = whole(b1, 256); rx = whole(extra, 64);
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.comm = comm; co.n_elems = 64;
        co.send_buf = co.recv_buf = mem;
        memset(&d, 0, sizeof d);
        d.name = "ar0"; d.stream = CC_STREAM_COMM; d.coll = &co; d.duration_us = ar_us(400, 0.0005, 256, 2);
        two[0] = r0; two[1] = rx;
        d.reads = two; d.n_reads = 2; d.writes = &r0; d.n_writes = 1;
        cc_graph_add_op(g, &d, NULL);
        co.send_buf = co.recv_buf = mem + 1024;
        d.name = "ar1"; d.reads = &r1; d.n_reads = 1; d.writes = &r1;
        cc_graph_add_op(g, &d, NULL);
        CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_ERR_INVALID_ARG, "(the desc is still bad)");
        rd.copy_us_per_byte = 0;
        CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_OK, "fuse");
        CHECK(rep.n_colls_after == 2 && rep.n_changed == 0, "a member with two read regions is left alone (%d collectives)",
              rep.n_colls_after);
        cc_graph_destroy(fg);
        fg = NULL;
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* ---- under a memory cap: the arena decides ------------------------------------------
   Two reduce-scatters of 4 elements a rank block on 2 ranks: their bucket
   is a send buffer of 64 bytes and a receive buffer of 32, alive together
   (96 bytes at the peak), placed at offsets 0 and 256 (the arena's
   alignment): 288 bytes of arena. Under a cap of 100 bytes a schedule
   fits the lifetimes but no plan fits the arena: not fused. Under 400:
   fused, and the plan of the judging schedule fits. */
static void test_arena_cap(void) {
    static float sa[8], sb[8], ra[4], rb[4];
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_link link = { 0 };
    cc_graph *g = NULL, *fg = NULL;
    cc_buffer b[4];
    cc_region r[4];
    cc_op_desc d;
    cc_collective co;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    int i, t;
    cc_context_create(NULL, &ctx);
    cc_comm_wrap(ctx, &idle_fns, NULL, 0, 2, "pair", &comm);
    link.latency_us = 400; link.us_per_byte = 0.0005;
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "sa", sizeof sa, &b[0]);
    cc_graph_add_buffer(g, "sb", sizeof sb, &b[1]);
    cc_graph_add_buffer(g, "ra", sizeof ra, &b[2]);
    cc_graph_add_buffer(g, "rb", sizeof rb, &b[3]);
    for (i = 0; i < 4; i++) r[i] = whole(b[i], i < 2 ? sizeof sa : sizeof ra);
    memset(&d, 0, sizeof d);
    d.name = "fill"; d.duration_us = 10; d.writes = r; d.n_writes = 2;
    cc_graph_add_op(g, &d, NULL);
    for (i = 0; i < 2; i++) {
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_REDUCE_SCATTER; co.dtype = CC_DTYPE_FLOAT32; co.comm = comm; co.n_elems = 4;
        co.send_buf = i ? sb : sa; co.recv_buf = i ? rb : ra;
        memset(&d, 0, sizeof d);
        d.name = i ? "rs1" : "rs0"; d.stream = CC_STREAM_COMM; d.coll = &co;
        d.duration_us = (2 - 1) * (400 + 16 * 0.0005);   /* (n-1)(a + B b), B one rank's block */
        d.reads = &r[i]; d.n_reads = 1; d.writes = &r[2 + i]; d.n_writes = 1;
        cc_graph_add_op(g, &d, NULL);
    }
    memset(&d, 0, sizeof d);
    d.name = "use"; d.duration_us = 10; d.reads = r + 2; d.n_reads = 2;
    cc_graph_add_op(g, &d, NULL);
    for (t = 0; t < 2; t++) {
        memset(&rd, 0, sizeof rd);
        rd.link = &link;
        rd.sched.memory_cap_bytes = t ? 400 : 100;
        CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_OK, "cap %d: fuse", t ? 400 : 100);
        if (!fg) continue;
        if (!t) {
            CHECK(rep.n_changed == 0 && rep.n_over_cap >= 1, "cap 100: a bucket of 96 bytes at the peak but 288 of arena is "
                  "not kept (%d buckets, %d over the cap)", rep.n_changed, rep.n_over_cap);
        } else {
            cc_schedule s;
            cc_plan* pl = NULL;
            cc_plan_desc pd;
            memset(&s, 0, sizeof s);
            CHECK(rep.n_changed == 1 && rep.n_colls_after == 1, "cap 400: the two fuse (%d buckets)", rep.n_changed);
            CHECK_RES(ctx, cc_sched_solve(ctx, fg, &rd.sched, &s), CC_OK, "the fused graph schedules under the cap");
            memset(&pd, 0, sizeof pd);
            pd.order = s.order; pd.start_us = s.start_us; pd.memory_cap_bytes = 400;
            CHECK_RES(ctx, s.order ? cc_plan_create_desc(ctx, fg, &pd, &pl) : CC_ERR_INVALID_ARG, CC_OK, "and its plan fits");
            CHECK_INT((int)cc_plan_arena_bytes(pl), 288, "an arena of 256 + 32 bytes");
            cc_plan_destroy(pl);
            cc_schedule_release(ctx, &s);
        }
        cc_graph_destroy(fg);
        fg = NULL;
    }
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_world_buckets);
    TH_RUN(test_latency_decides);
    TH_RUN(test_refused);
    TH_RUN(test_arena_cap);
    return th_done();
}
