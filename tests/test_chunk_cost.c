/* tests/test_chunk_cost.c - what a chunk of a decomposable op costs: the
   fit t(n) = a + b n that cc_exec_profile_ops measures, cc_op_set_chunk_cost,
   and the chunk durations cc_graph_decompose takes from it.

   Most of it runs on a backend of the test's own whose clock is computed:
   ops run at once on the calling thread and each kernel moves the clock by
   its cost (a fixed cost plus a cost per row), so what profiling measures
   is known exactly and the fits are checked to rounding. The decisions are
   checked against a hand computation of the model: a kernel with a large
   fixed cost per chunk is split in fewer chunks, or none. One case runs on
   the CPU backend with kernels that sleep, with loose bounds (a busy
   machine only lengthens what is measured). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"

/* ---- a backend whose clock the kernels move ------------------------------------*/
typedef struct fclock fclock;
typedef struct fstream { fclock* c; } fstream;
struct fclock {
    double now;
    fstream st[4];
    const cc_link* link;   /* a collective costs what the flat model on 2 ranks says */
    int n_collectives;
};

static cc_result fc_stream_create(void* self, int index, void** out) {
    fclock* c = (fclock*)self;
    if (index < 0 || index >= 4) return CC_ERR_INVALID_ARG;
    c->st[index].c = c;
    *out = &c->st[index];
    return CC_OK;
}
static void fc_stream_destroy(void* self, void* stream) { (void)self; (void)stream; }
static cc_result fc_launch(void* self, void* stream, cc_op_fn fn, void* user) { (void)self; fn(stream, user); return CC_OK; }
static size_t fc_dsize(cc_dtype t) { return t == CC_DTYPE_FLOAT64 ? 8 : t == CC_DTYPE_FLOAT16 || t == CC_DTYPE_BFLOAT16 ? 2 : 4; }
/* The other member of the communicator holds what this one does: an
   all-gather repeats the send buffer, another collective copies it (the
   executor only takes maxima and gathers through it). */
static cc_result fc_collective(void* self, void* stream, const cc_collective* co) {
    fclock* c = (fclock*)self;
    size_t bytes = co->n_elems * fc_dsize(co->dtype);
    int r, n = cc_comm_size(co->comm);
    (void)stream;
    if (co->kind == CC_COLL_ALL_GATHER)
        for (r = 0; r < n; r++) memmove((char*)co->recv_buf + (size_t)r * bytes, co->send_buf, bytes);
    else if (co->send_buf && co->recv_buf && co->send_buf != co->recv_buf)
        memmove(co->recv_buf, co->send_buf, bytes);
    if (c->link) c->now += tu_flat_us(c->link, co->kind, bytes, n);
    c->n_collectives++;
    return CC_OK;
}
static cc_result fc_timestamp(void* self, void* stream, double* where) { (void)stream; *where = ((fclock*)self)->now; return CC_OK; }
static cc_result fc_sync(void* self) { (void)self; return CC_OK; }
static const cc_backend_fns fc_fns = {
    "computed clock", NULL, fc_stream_create, fc_stream_destroy, fc_launch, fc_collective, NULL, NULL, NULL, NULL,
    fc_timestamp, fc_sync, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

/* A communicator of 2 whose collectives the backend runs (never called). */
static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c; (void)msg; (void)msg_size;
    return CC_OK;
}
static const cc_comm_fns idle_family = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

/* ---- kernels: a fixed cost plus a cost per row --------------------------------------
   The whole op (fn) costs whole_us; a chunk of share n of its rows costs
   a + b n (part_fn, chunk_fn). Every call writes its rows of out (the
   marker), so that profiling must put them back. */
typedef struct kern {
    double whole_us, a, b;
    uint64_t rows;
    float* out;              /* rows floats, or NULL */
    int sleep;               /* 1: sleep for the cost (the CPU backend), 0: move the computed clock */
    int n_parts;             /* chunk calls */
    int last_count;          /* the chunk count of the last one */
} kern;

static void spend(void* stream, const kern* k, double us) {
    if (k->sleep) {
        struct timespec ts;
        ts.tv_sec = (time_t)(us / 1e6);
        ts.tv_nsec = (long)((us - (double)ts.tv_sec * 1e6) * 1e3);
        while (nanosleep(&ts, &ts) != 0) {}
    } else {
        ((fstream*)stream)->c->now += us;
    }
}
static void mark(kern* k, uint64_t r0, uint64_t r1) {
    uint64_t r;
    for (r = r0; k->out && r < r1; r++) k->out[r] = -1.0f;
}
static void k_whole(void* stream, void* user) {
    kern* k = (kern*)user;
    mark(k, 0, k->rows);
    spend(stream, k, k->whole_us);
}
static void k_part(void* stream, void* user, const cc_split_chunk* c) {
    kern* k = (kern*)user;
    mark(k, c->begin, c->end);
    k->n_parts++;
    k->last_count = c->count;
    spend(stream, k, k->a + k->b * (double)(c->end - c->begin) / (double)k->rows);
}
static void k_chunk(void* stream, void* user, int chunk, int n) {
    kern* k = (kern*)user;
    mark(k, (uint64_t)chunk * k->rows / (uint64_t)n, (uint64_t)(chunk + 1) * k->rows / (uint64_t)n);
    k->n_parts++;
    k->last_count = n;
    spend(stream, k, k->a + k->b / n);
}

static cc_region whole(cc_buffer b, uint64_t n_bytes, uint64_t split_rows) {
    cc_region r;
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = n_bytes;
    r.split_rows = split_rows;
    return r;
}

/* A compute op reading in and writing out (rows floats each, split in
   rows): by a row-wise rule of extent rows (rule 1) or by a chunk_fn
   (rule 0), or neither (rule -1). */
static cc_result add_rows_op(cc_graph* g, const char* name, cc_buffer in, cc_buffer out, uint64_t rows, int rule, kern* k,
                             const cc_chunk_cost* cost, cc_op* op) {
    cc_op_desc d;
    cc_split sp;
    cc_region rd = whole(in, rows * sizeof(float), rows), wr = whole(out, rows * sizeof(float), rows);
    memset(&d, 0, sizeof d);
    memset(&sp, 0, sizeof sp);
    d.name = name;
    d.duration_us = k->whole_us;
    d.stream = CC_STREAM_COMPUTE;
    d.reads = &rd; d.n_reads = 1;
    d.writes = &wr; d.n_writes = 1;
    d.fn = k_whole;
    d.user_data = k;
    d.chunk_cost = cost;
    if (rule == 1) {
        sp.kind = CC_SPLIT_ROWWISE;
        sp.extent[CC_AXIS_ROWS] = rows;
        d.split = &sp;
        d.part_fn = k_part;
    } else if (rule == 0) {
        d.chunk_fn = k_chunk;
    }
    return cc_graph_add_op(g, &d, op);
}

static int op_named(cc_graph* g, const char* name) {
    int i;
    for (i = 0; i < cc_graph_n_ops(g); i++)
        if (!strcmp(cc_op_name(g, cc_graph_op(g, i)), name)) return i;
    return -1;
}

/* ---- the fit, on the computed clock ------------------------------------------------
   Each op's kernel: (whole, a, b, rows, how it splits) and the fit
   expected, worked out by hand from the profile's two sizes (the whole op
   at n = 1, chunk 0 of k at its share n_k):
     rows  rule   k   n_k    whole  chunk       a (clamped to 0..whole), b = whole - a
   lin:  64 rule   8   1/8    230    30+200/8    (55 - 230/8)/(7/8) = 30, 200
   cfn:  64 chunk  8   1/8     92    12+80/8     12, 80
   cfn12:12 chunk  4   1/4     92    12+80/4     (12 divides by 4, not 8) 12, 80
   odd:   6 rule   4   1/6     70    10+60/6     (6 rows: at most 4 chunks; chunk 0 of 4 is 1 row) 10, 60
   fast: 64 rule   8   1/8    100    0+40/8      a < 0 clamped: 0, 100 (chunks cheaper than their share)
   slow: 64 rule   8   1/8     50    80+0        a > whole clamped: 50, 0 (a chunk costs more than the op)
   plain: no split: no fit. */
typedef struct fit_case { const char* name; uint64_t rows; int rule; double whole, a, b; double want_a, want_b; int want_k; } fit_case;
static const fit_case FIT_CASES[] = {
    { "lin", 64, 1, 230, 30, 200, 30, 200, 8 },
    { "cfn", 64, 0, 92, 12, 80, 12, 80, 8 },
    { "cfn12", 12, 0, 92, 12, 80, 12, 80, 4 },
    { "odd", 6, 1, 70, 10, 60, 10, 60, 4 },
    { "fast", 64, 1, 100, 0, 40, 0, 100, 8 },
    { "slow", 64, 1, 50, 80, 0, 50, 0, 8 },
    { "plain", 64, -1, 40, 0, 0, -1, -1, 0 },
};
#define N_FIT ((int)(sizeof FIT_CASES / sizeof FIT_CASES[0]))

static void test_fit_on_computed_clock(void) {
    cc_context* ctx;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    fclock clk;
    static kern ks[N_FIT];
    static float bufs[N_FIT][2][64];
    cc_buffer bb[N_FIT][2];
    int i, reps = 3;
    char name[32];
    memset(&clk, 0, sizeof clk);
    cc_context_create(NULL, &ctx);
    CHECK_RES(ctx, cc_graph_create(ctx, NULL, &g), CC_OK, "graph");
    for (i = 0; i < N_FIT && g; i++) {
        const fit_case* fc = &FIT_CASES[i];
        int j;
        memset(&ks[i], 0, sizeof ks[i]);
        ks[i].whole_us = fc->whole; ks[i].a = fc->a; ks[i].b = fc->b; ks[i].rows = fc->rows;
        ks[i].out = bufs[i][1];
        for (j = 0; j < 64; j++) { bufs[i][0][j] = (float)j; bufs[i][1][j] = (float)(100 + j); }
        snprintf(name, sizeof name, "%s_in", fc->name);
        CHECK_RES(ctx, cc_graph_add_buffer(g, name, fc->rows * sizeof(float), &bb[i][0]), CC_OK, "buffer");
        snprintf(name, sizeof name, "%s_out", fc->name);
        CHECK_RES(ctx, cc_graph_add_buffer(g, name, fc->rows * sizeof(float), &bb[i][1]), CC_OK, "buffer");
        CHECK_RES(ctx, add_rows_op(g, fc->name, bb[i][0], bb[i][1], fc->rows, fc->rule, &ks[i], NULL, NULL), CC_OK, "op %s", fc->name);
    }
    be.fns = &fc_fns;
    be.self = &clk;
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan");
    CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "exec");
    for (i = 0; x && i < N_FIT; i++) {
        cc_exec_bind_buffer(x, bb[i][0], bufs[i][0]);
        cc_exec_bind_buffer(x, bb[i][1], bufs[i][1]);
    }
    for (i = 0; i < N_FIT; i++) CHECK(!cc_op_chunk_cost(g, cc_graph_op(g, i), NULL), "%s: no chunk cost before profiling", FIT_CASES[i].name);
    CHECK_RES(ctx, x ? cc_exec_profile_ops(x, reps, NULL) : CC_ERR_INVALID_ARG, CC_OK, "profile on the computed clock");
    for (i = 0; i < N_FIT; i++) {
        const fit_case* fc = &FIT_CASES[i];
        cc_op op = cc_graph_op(g, i);
        cc_chunk_cost cc = { -1, -1 };
        int has = cc_op_chunk_cost(g, op, &cc), j, same = 1;
        CHECK_NEAR(cc_op_duration_us(g, op), fc->whole, 1e-9, "%s: the whole op's duration", fc->name);
        if (fc->rule < 0) {
            CHECK(!has, "%s: an op that does not split has no chunk cost", fc->name);
            CHECK_INT(ks[i].n_parts, 0, "%s: no chunk ran", fc->name);
            continue;
        }
        CHECK(has, "%s: a chunk cost after profiling", fc->name);
        CHECK(fabs(cc.a_us - fc->want_a) < 1e-9 && fabs(cc.b_us - fc->want_b) < 1e-9,
              "%s: fitted a %.6f b %.6f, by hand a %.1f b %.1f", fc->name, cc.a_us, cc.b_us, fc->want_a, fc->want_b);
        CHECK(ks[i].n_parts == reps && ks[i].last_count == fc->want_k, "%s: chunk 0 of %d ran %d times (of %d, %d times)",
              fc->name, fc->want_k, reps, ks[i].last_count, ks[i].n_parts);
        for (j = 0; j < (int)fc->rows; j++) same &= bufs[i][1][j] == (float)(100 + j);
        CHECK(same, "%s: profiling put back what the op and its chunk wrote", fc->name);
    }
    cc_exec_destroy(x);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* ---- the decision, by hand ---------------------------------------------------------
   mm (64 rows, a row-wise rule) writes P; ar all-reduces P in place on 2
   ranks over a link (5 us latency, 790 us for all of P). Decomposed in k:
   mm's chunks on the compute stream, ar's on the communication stream,
   chunk i of ar after chunk i of mm; a two-machine flow shop whose
   makespan is c_k + r_k + (k - 1) max(c_k, r_k), with c_k mm's chunk and
   r_k ar's (the link's flat model at P/k), against mm + ar whole. The
   chunk count kept: the k of 2, 4, 8 with the smallest makespan, if it is
   below the whole step's (the smaller k on ties). */
#define PROWS 64
#define PCOLS 64
#define PBYTES ((uint64_t)PROWS * PCOLS * sizeof(float))

static double hand_makespan(const cc_link* link, double whole_mm, double a, double b, int k) {
    double c = k == 1 ? whole_mm : whole_mm * (a + b / k) / (a + b);
    double r = tu_flat_us(link, CC_COLL_ALL_REDUCE, (size_t)(PBYTES / (uint64_t)k), 2);
    return c + r + (k - 1) * (c > r ? c : r);
}
static int hand_choice(const cc_link* link, double whole_mm, double a, double b, double* mk) {
    double best = hand_makespan(link, whole_mm, a, b, 1);
    int k, best_k = 0;
    for (k = 2; k <= 8; k *= 2) {
        double m = hand_makespan(link, whole_mm, a, b, k);
        if (m < best) { best = m; best_k = k; }
    }
    *mk = best;
    return best_k;
}

static float pdata[PROWS * PCOLS], xdata[PROWS * PCOLS];

/* mm and ar; mm's kernel k. */
static cc_result build_mm_ar(cc_context* ctx, cc_comm* comm, kern* k, const cc_chunk_cost* cost, cc_graph** out,
                             cc_buffer* bx, cc_buffer* bp) {
    cc_graph* g = NULL;
    cc_op_desc d;
    cc_split sp;
    cc_collective co;
    cc_region rd, wr;
    cc_result r;
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    if ((r = cc_graph_add_buffer(g, "x", PBYTES, bx)) == CC_OK) r = cc_graph_add_buffer(g, "P", PBYTES, bp);
    memset(&d, 0, sizeof d);
    memset(&sp, 0, sizeof sp);
    rd = whole(*bx, PBYTES, PROWS);
    wr = whole(*bp, PBYTES, PROWS);
    d.name = "mm"; d.duration_us = k->whole_us; d.stream = CC_STREAM_COMPUTE;
    d.reads = &rd; d.n_reads = 1; d.writes = &wr; d.n_writes = 1;
    d.fn = k_whole; d.part_fn = k_part; d.user_data = k; d.chunk_cost = cost;
    sp.kind = CC_SPLIT_ROWWISE; sp.extent[CC_AXIS_ROWS] = PROWS;
    d.split = &sp;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    memset(&d, 0, sizeof d);
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM;
    co.n_elems = PROWS * PCOLS; co.comm = comm; co.send_buf = pdata; co.recv_buf = pdata;
    d.name = "ar"; d.duration_us = 800; d.stream = CC_STREAM_COMM; d.coll = &co;
    d.reads = &wr; d.n_reads = 1; d.writes = &wr; d.n_writes = 1;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

/* The chunk count of op "mm" in g ("mm#0/<k>"), 0 if whole. */
static int mm_chunks(cc_graph* g) {
    int i;
    for (i = 0; i < cc_graph_n_ops(g); i++) {
        const char* nm = cc_op_name(g, cc_graph_op(g, i));
        if (!strncmp(nm, "mm#0/", 5)) return atoi(nm + 5);
    }
    return 0;
}

/* Profiled on the computed clock (mm's kernel: a fixed cost a and b for
   all of its rows, 800 us whole; ar 800 us), then decomposed: the chunk
   count and the judged makespan are the hand computation's, mm's chunks
   take a + b n, and the report says the durations were measured. */
static void test_decision_follows_fixed_cost(void) {
    static const struct { double a, b; int want_k; } cases[] = {
        { 0, 800, 8 },      /* no fixed cost: the finest split (970 us against 1600) */
        { 300, 500, 2 },    /* 300 us a chunk: halves only (1505 us; quarters 1907.5) */
        { 700, 100, 0 },    /* 700 us a chunk: whole (halves 1905 us) */
    };
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_link link;
    int ci;
    memset(&link, 0, sizeof link);
    link.latency_us = 5;
    link.us_per_byte = 790.0 / (double)PBYTES;
    cc_context_create(NULL, &ctx);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "tp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_ALL_REDUCE, (size_t)PBYTES, 2), 800, 1e-9, "the link takes 800 us for P on 2 ranks");
    for (ci = 0; ci < (int)(sizeof cases / sizeof cases[0]); ci++) {
        static kern k;
        cc_graph *g = NULL, *dg = NULL;
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        cc_backend be;
        cc_buffer bx, bp;
        fclock clk;
        cc_rewrite_desc rd;
        cc_rewrite_report rep;
        cc_chunk_cost fit = { -1, -1 };
        double want_mk;
        int want_k = hand_choice(&link, 800, cases[ci].a, cases[ci].b, &want_mk), got_k, i;
        CHECK_INT(want_k, cases[ci].want_k, "a = %g: the hand computation's chunk count", cases[ci].a);
        memset(&k, 0, sizeof k);
        k.whole_us = cases[ci].a + cases[ci].b; k.a = cases[ci].a; k.b = cases[ci].b; k.rows = PROWS;
        memset(&clk, 0, sizeof clk);
        clk.link = &link;
        be.fns = &fc_fns;
        be.self = &clk;
        if (build_mm_ar(ctx, comm, &k, NULL, &g, &bx, &bp) != CC_OK) { CHECK(0, "graph: %s", cc_last_error(ctx)); continue; }
        CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan");
        CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "exec");
        if (x) {
            cc_exec_bind_buffer(x, bx, xdata);
            cc_exec_bind_buffer(x, bp, pdata);
            CHECK_RES(ctx, cc_exec_agree(x, comm), CC_OK, "agree");
            CHECK_RES(ctx, cc_exec_profile_ops(x, 3, NULL), CC_OK, "profile");
        }
        CHECK_NEAR(cc_op_duration_us(g, cc_graph_op(g, 0)), 800, 1e-9, "a = %g: mm measured 800 us", cases[ci].a);
        CHECK_NEAR(cc_op_duration_us(g, cc_graph_op(g, 1)), 800, 1e-9, "a = %g: ar measured 800 us", cases[ci].a);
        i = cc_op_chunk_cost(g, cc_graph_op(g, 0), &fit);
        CHECK(i && fabs(fit.a_us - cases[ci].a) < 1e-9 && fabs(fit.b_us - cases[ci].b) < 1e-9,
              "a = %g: mm's fit a %.3f b %.3f", cases[ci].a, fit.a_us, fit.b_us);
        CHECK(!cc_op_chunk_cost(g, cc_graph_op(g, 1), NULL), "the all-reduce has no chunk cost");
        memset(&rd, 0, sizeof rd);
        rd.link = &link;
        rd.max_chunks = 8;
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "a = %g: decompose", cases[ci].a);
        got_k = dg ? mm_chunks(dg) : -1;
        CHECK(got_k == want_k, "a = %g: mm in %d chunks (by hand %d)", cases[ci].a, got_k, want_k);
        CHECK(fabs(rep.makespan_after_us - want_mk) < 0.01, "a = %g: judged %.3f us, by hand %.3f", cases[ci].a, rep.makespan_after_us,
              want_mk);
        if (dg && got_k > 0) {
            double want_c = cases[ci].a + cases[ci].b / got_k;
            for (i = 0; i < got_k; i++) {
                char nm[32];
                int j;
                snprintf(nm, sizeof nm, "mm#%d/%d", i, got_k);
                j = op_named(dg, nm);
                CHECK(j >= 0 && fabs(cc_op_duration_us(dg, cc_graph_op(dg, j)) - want_c) < 1e-9, "a = %g: %s takes a + b/%d = %.2f us (%.4f)",
                      cases[ci].a, nm, got_k, want_c, j >= 0 ? cc_op_duration_us(dg, cc_graph_op(dg, j)) : -1.0);
                CHECK(j < 0 || !cc_op_chunk_cost(dg, cc_graph_op(dg, j), NULL), "a = %g: chunk op %s has no chunk cost", cases[ci].a, nm);
            }
            CHECK(rep.n_contexts == 1 && rep.contexts[0].measured == 1, "a = %g: the report says the chunk durations were measured",
                  cases[ci].a);
        }
        if (dg && got_k == 0) {
            cc_chunk_cost c2;
            int j = op_named(dg, "mm");
            CHECK(j >= 0 && cc_op_chunk_cost(dg, cc_graph_op(dg, j), &c2) && c2.a_us == fit.a_us && c2.b_us == fit.b_us,
                  "a = %g: the unchanged copy keeps mm's chunk cost", cases[ci].a);
        }
        cc_graph_destroy(dg);
        cc_exec_destroy(x);
        cc_plan_destroy(pl);
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* Without a chunk cost the chunks take their share (the model), and the
   report says so; a chunk cost given with the op (or set) is what a
   profile would have measured. The duration and the fit may disagree
   (the op's duration set to 400 us, its fit t(1) 800 us): the chunks keep
   the fit's proportions, d t(n) / t(1) = 150 + 250 n, and split in 4
   (1057.5 us against 1200 whole); t(n) itself (300 + 500 n) would leave
   it whole (halves 1505 us). */
static void test_modelled_and_set(void) {
    static kern k;
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_link link;
    cc_buffer bx, bp;
    cc_rewrite_desc rd;
    int pass;
    memset(&link, 0, sizeof link);
    link.latency_us = 5;
    link.us_per_byte = 790.0 / (double)PBYTES;
    memset(&rd, 0, sizeof rd);
    rd.link = &link;
    rd.max_chunks = 8;
    cc_context_create(NULL, &ctx);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "tp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    memset(&k, 0, sizeof k);
    k.whole_us = 800; k.rows = PROWS;
    for (pass = 0; pass < 3; pass++) {
        cc_graph *g = NULL, *dg = NULL;
        cc_rewrite_report rep;
        cc_chunk_cost given = { 300, 500 };
        double want_mk;
        int want_k;
        const char* what = pass == 0 ? "no chunk cost" : pass == 1 ? "a chunk cost in the desc" : "set, the op's duration 400 us";
        if (build_mm_ar(ctx, comm, &k, pass == 1 ? &given : NULL, &g, &bx, &bp) != CC_OK) { CHECK(0, "graph: %s", cc_last_error(ctx)); continue; }
        if (pass == 2) {
            CHECK_RES(ctx, cc_op_set_chunk_cost(g, cc_graph_op(g, 0), 300, 500), CC_OK, "%s", what);
            CHECK_RES(ctx, cc_op_set_duration(g, cc_graph_op(g, 0), 400), CC_OK, "%s", what);
        }
        /* no chunk cost: a = 0, the share; else 300 + 500 n scaled to the duration */
        want_k = pass == 0 ? hand_choice(&link, 800, 0, 1, &want_mk) : hand_choice(&link, pass == 2 ? 400 : 800, 300, 500, &want_mk);
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "%s: decompose", what);
        CHECK(dg && mm_chunks(dg) == want_k && fabs(rep.makespan_after_us - want_mk) < 0.01, "%s: mm in %d chunks, judged %.3f (by hand %d, %.3f)",
              what, dg ? mm_chunks(dg) : -1, rep.makespan_after_us, want_k, want_mk);
        CHECK(want_k == (pass == 0 ? 8 : pass == 1 ? 2 : 4), "%s: by hand, %d chunks", what, want_k);
        if (want_k > 0)
            CHECK(rep.n_contexts == 1 && rep.contexts[0].measured == (pass > 0), "%s: the report says %s", what,
                  pass ? "measured" : "modelled");
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* A context of which one op has a chunk cost and one has none: modelled. */
static void test_mixed_context(void) {
    static kern k1, k2;
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_graph *g = NULL, *dg = NULL;
    cc_link link;
    cc_buffer bx, bp, by;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    cc_chunk_cost cost = { 1, 99 };
    cc_region rd1, wr1;
    cc_op_desc d;
    memset(&link, 0, sizeof link);
    link.latency_us = 5;
    link.us_per_byte = 790.0 / (double)PBYTES;
    memset(&rd, 0, sizeof rd);
    rd.link = &link;
    rd.max_chunks = 4;
    cc_context_create(NULL, &ctx);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "tp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    memset(&k1, 0, sizeof k1);
    k1.whole_us = 400; k1.rows = PROWS;
    k2 = k1;
    CHECK_RES(ctx, build_mm_ar(ctx, comm, &k1, &cost, &g, &bx, &bp), CC_OK, "graph");
    if (g) {   /* a consumer of P, with a chunk_fn and no chunk cost */
        cc_graph_add_buffer(g, "y", PBYTES, &by);
        rd1 = whole(bp, PBYTES, PROWS);
        wr1 = whole(by, PBYTES, PROWS);
        memset(&d, 0, sizeof d);
        d.name = "use"; d.duration_us = 400; d.reads = &rd1; d.n_reads = 1; d.writes = &wr1; d.n_writes = 1;
        d.fn = k_whole; d.chunk_fn = k_chunk; d.user_data = &k2;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "consumer");
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose");
        CHECK(rep.n_contexts == 1 && rep.contexts[0].n_ops == 3 && rep.contexts[0].measured == 0,
              "mm (with a chunk cost), ar, use (without): split (%d), modelled", rep.n_contexts);
    }
    cc_graph_destroy(dg);
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* Fusion rebuilds the graph around a bucket and copies every other op
   whole: mm keeps the chunk cost it was given. */
static void test_fusion_copies(void) {
    static kern k;
    static float z[2 * 64], xin[64], xout[64];
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_graph *g = NULL, *fg = NULL;
    cc_buffer bz, bi, bo;
    cc_rewrite_report rep;
    cc_chunk_cost cost = { 2, 8 }, got = { -1, -1 };
    int h, j, has;
    memset(&k, 0, sizeof k);
    k.whole_us = 10; k.rows = 64;
    cc_context_create(NULL, &ctx);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "dp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    CHECK_RES(ctx, cc_graph_create(ctx, NULL, &g), CC_OK, "graph");
    if (!g) return;
    cc_graph_add_buffer(g, "z", sizeof z, &bz);
    cc_graph_add_buffer(g, "in", sizeof xin, &bi);
    cc_graph_add_buffer(g, "out", sizeof xout, &bo);
    CHECK_RES(ctx, add_rows_op(g, "mm", bi, bo, 64, 1, &k, &cost, NULL), CC_OK, "mm with a chunk cost");
    for (h = 0; h < 2; h++) {   /* two all-reduces of the two halves of z: one bucket */
        cc_op_desc d;
        cc_collective co;
        cc_region r;
        char nm[16];
        memset(&d, 0, sizeof d);
        memset(&co, 0, sizeof co);
        r = whole(bz, sizeof z / 2, 0);
        r.offset_bytes = (uint64_t)h * sizeof z / 2;
        co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM;
        co.n_elems = 64; co.comm = comm; co.send_buf = co.recv_buf = z + 64 * h;
        snprintf(nm, sizeof nm, "ar%d", h);
        d.name = nm; d.duration_us = 50; d.stream = CC_STREAM_COMM; d.coll = &co;
        d.reads = &r; d.n_reads = 1; d.writes = &r; d.n_writes = 1;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "%s", nm);
    }
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, NULL, &fg, &rep), CC_OK, "fuse");
    CHECK(rep.n_changed == 1, "the two all-reduces fused (%d buckets)", rep.n_changed);
    j = fg ? op_named(fg, "mm") : -1;
    has = j >= 0 && cc_op_chunk_cost(fg, cc_graph_op(fg, j), &got);
    CHECK(has && got.a_us == 2 && got.b_us == 8,
          "the fused graph's mm keeps its chunk cost (%g, %g)", got.a_us, got.b_us);
    cc_graph_destroy(fg);
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* ---- bad input: refused naming the op, nothing changed -------------------------------*/
static void test_bad_input(void) {
    static kern k;
    cc_context* ctx;
    cc_comm* comm = NULL;
    cc_graph *g = NULL, *other = NULL;
    cc_buffer bx, bp;
    cc_chunk_cost c;
    cc_op mm, ar, plain;
    int n0;
    memset(&k, 0, sizeof k);
    k.whole_us = 100; k.rows = PROWS;
    cc_context_create(NULL, &ctx);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "tp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    if (build_mm_ar(ctx, comm, &k, NULL, &g, &bx, &bp) != CC_OK) { CHECK(0, "graph: %s", cc_last_error(ctx)); return; }
    mm = cc_graph_op(g, 0);
    ar = cc_graph_op(g, 1);
    CHECK_RES(ctx, add_rows_op(g, "plain", bx, bp, PROWS, -1, &k, NULL, &plain), CC_OK, "an op that does not split");
    CHECK_RES(ctx, cc_op_set_chunk_cost(g, mm, 3, 97), CC_OK, "a good chunk cost");
    {
        static const double bad[][2] = { { -1, 10 }, { 1, -1e-9 }, { NAN, 1 }, { 1, NAN }, { INFINITY, 1 }, { 1, 2e12 } };
        int i;
        for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
            CHECK_RES(ctx, cc_op_set_chunk_cost(g, mm, bad[i][0], bad[i][1]), CC_ERR_INVALID_ARG, "a %g, b %g", bad[i][0], bad[i][1]);
            CHECK_CONTAINS(cc_last_error(ctx), "op 'mm'", "a %g, b %g: the message names the op", bad[i][0], bad[i][1]);
        }
    }
    CHECK_RES(ctx, cc_op_set_chunk_cost(g, ar, 1, 1), CC_ERR_INVALID_ARG, "a collective");
    CHECK_CONTAINS(cc_last_error(ctx), "op 'ar'", "the collective named");
    CHECK_RES(ctx, cc_op_set_chunk_cost(g, plain, 1, 1), CC_ERR_INVALID_ARG, "an op that does not decompose");
    CHECK_CONTAINS(cc_last_error(ctx), "op 'plain'", "that op named");
    CHECK(!cc_op_chunk_cost(g, ar, NULL) && !cc_op_chunk_cost(g, plain, NULL), "neither got one");
    {
        cc_op none;
        none.id = 0; none.graph = 0;
        CHECK_RES(ctx, cc_op_set_chunk_cost(g, none, 1, 1), CC_ERR_UNKNOWN_OP, "an invalid handle");
        CHECK_RES(ctx, cc_graph_create(ctx, NULL, &other), CC_OK, "another graph");
        CHECK_RES(ctx, cc_op_set_chunk_cost(other, mm, 1, 1), CC_ERR_UNKNOWN_OP, "a handle of another graph");
        CHECK(!cc_op_chunk_cost(other, mm, NULL), "no chunk cost through another graph");
    }
    c.a_us = c.b_us = -1;
    n0 = cc_op_chunk_cost(g, mm, &c);
    CHECK(n0 && c.a_us == 3 && c.b_us == 97, "mm keeps its good chunk cost (%g, %g)", c.a_us, c.b_us);
    CHECK_RES(ctx, cc_op_set_chunk_cost(NULL, mm, 1, 1), CC_ERR_INVALID_ARG, "no graph");
    /* in the desc */
    n0 = cc_graph_n_ops(g);
    {
        cc_chunk_cost badc = { -5, 1 };
        CHECK_RES(ctx, add_rows_op(g, "neg", bx, bp, PROWS, 1, &k, &badc, NULL), CC_ERR_INVALID_ARG, "a negative a_us in the desc");
        CHECK_CONTAINS(cc_last_error(ctx), "op 'neg'", "the desc's op named");
        badc.a_us = 1;
        CHECK_RES(ctx, add_rows_op(g, "nosplit", bx, bp, PROWS, -1, &k, &badc, NULL), CC_ERR_INVALID_ARG,
                  "a chunk cost in the desc of an op that does not decompose");
        CHECK_CONTAINS(cc_last_error(ctx), "op 'nosplit'", "that op named");
        CHECK_INT(cc_graph_n_ops(g), n0, "no op added");
    }
    cc_graph_destroy(other);
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* ---- the CPU backend: kernels that sleep -------------------------------------------
   a = 3 ms fixed, b = 8 ms for all 64 rows. Sleeping never ends early,
   so the fitted whole op a + b is at least what it sleeps; on a busy
   machine it only lengthens, by an excess that can differ between the two
   sizes, so the slope is bounded loosely from below and nothing from
   above (the exact fits are test_fit_on_computed_clock's). */
static void test_fit_on_cpu(void) {
    static kern k;
    static float in[64], out[64];
    cc_context* ctx;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_buffer bi, bo;
    cc_chunk_cost c = { -1, -1 };
    memset(&k, 0, sizeof k);
    k.whole_us = 11000; k.a = 3000; k.b = 8000; k.rows = 64; k.sleep = 1; k.out = out;
    cc_context_create(NULL, &ctx);
    memset(&be, 0, sizeof be);
    CHECK_RES(ctx, cc_graph_create(ctx, NULL, &g), CC_OK, "graph");
    if (!g) { cc_context_destroy(ctx); return; }
    cc_graph_add_buffer(g, "in", sizeof in, &bi);
    cc_graph_add_buffer(g, "out", sizeof out, &bo);
    CHECK_RES(ctx, add_rows_op(g, "sleepy", bi, bo, 64, 1, &k, NULL, NULL), CC_OK, "op");
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan");
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "the CPU backend");
    if (pl && be.fns) CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "exec");
    if (x) {
        int has;
        cc_exec_bind_buffer(x, bi, in);
        cc_exec_bind_buffer(x, bo, out);
        CHECK_RES(ctx, cc_exec_profile_ops(x, 5, NULL), CC_OK, "profile on the CPU backend");
        has = cc_op_chunk_cost(g, cc_graph_op(g, 0), &c);
        CHECK(has && c.a_us >= 0 && c.a_us + c.b_us >= 10500 && c.b_us >= 2000,
              "a %.0f us (3000 slept), b %.0f us (8000 slept): a + b at least the 11000 slept, b at least 2000",
              c.a_us, c.b_us);
        NOTE("CPU backend, sleeping kernel: a %.0f us (3000), b %.0f us (8000)", c.a_us, c.b_us);
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_fit_on_computed_clock);
    TH_RUN(test_decision_follows_fixed_cost);
    TH_RUN(test_modelled_and_set);
    TH_RUN(test_mixed_context);
    TH_RUN(test_fusion_copies);
    TH_RUN(test_bad_input);
    TH_RUN(test_fit_on_cpu);
    return th_done();
}
