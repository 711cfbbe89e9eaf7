/* tests/fuzz/fuzz_rewrite.c - the rewrites, differentially: a random
   decomposable step (the bytes choose its sizes, layers, durations, the
   link, which ops can be cut, whether P lives in the arena with NULL
   collective buffers, gradient all-reduces to fuse, the chunk limit and
   which rewrites run) on two CPU ranks of the in-process world, once in
   program order and once decomposed and/or fused, scheduled and run in the
   schedule's order. The work is integer (int32, sums wrapping), so every
   result must be bit-identical whatever the chunks and the order:
       mm_l     P_l = x_l W_l              rows of x_l -> rows of P_l (W_l differs per rank)
       ar_l     all-reduce(sum) of P_l in place
       norm_l   x_{l+1} = mix(x_l + P_l)   row by row
       wgrad_l  G_l = x_l^T P_l            summed over rows: chunk 0 overwrites, later ones add
       gar_l    all-reduce(sum) of G_l     (optional: what fusion merges)
   Invariants: the rewrites succeed or fail with a message, their graphs
   validate, and x, P (when bound) and G equal program order's. */
#define _POSIX_C_SOURCE 200809L
#ifndef FUZZ_LINKED_IMPL   /* the replays link tests/concerto_impl.o instead */
#define CONCERTO_IMPLEMENTATION
#endif
#include "../../concerto.h"
#include "fuzz.h"
#include <string.h>

#define MAXT 16
#define MAXD 4
#define MAXL 3

typedef struct model {
    int T, D, L;
    int32_t x[MAXL + 1][MAXT * MAXD];
    int32_t w[MAXL][MAXD * MAXD];
    int32_t p[MAXL][MAXT * MAXD];
    int32_t* pp[MAXL];          /* where the work finds P: p, or the arena */
    int bp_index[MAXL];
    int32_t g[MAXL][MAXD * MAXD];
} model;
typedef struct job { model* m; int l, kind; } job;
enum { K_MM, K_NORM, K_WGRAD };

static void rows(job* j, int r0, int r1, int chunk) {
    model* m = j->m;
    int D = m->D, l = j->l, t, a, b;
    if (j->kind == K_MM) {
        for (t = r0; t < r1; t++)
            for (b = 0; b < D; b++) {
                uint32_t s = 0;
                for (a = 0; a < D; a++) s += (uint32_t)m->x[l][t * D + a] * (uint32_t)m->w[l][a * D + b];
                m->pp[l][t * D + b] = (int32_t)s;
            }
    } else if (j->kind == K_NORM) {
        for (t = r0; t < r1; t++)
            for (b = 0; b < D; b++) {
                uint32_t v = (uint32_t)m->x[l][t * D + b] + (uint32_t)m->pp[l][t * D + b];
                m->x[l + 1][t * D + b] = (int32_t)((v ^ (v >> 7)) * 2654435761u);
            }
    } else {
        for (a = 0; a < D; a++)
            for (b = 0; b < D; b++) {
                uint32_t s = chunk > 0 ? (uint32_t)m->g[l][a * D + b] : 0;
                for (t = r0; t < r1; t++) s += (uint32_t)m->x[l][t * D + a] * (uint32_t)m->pp[l][t * D + b];
                m->g[l][a * D + b] = (int32_t)s;
            }
    }
}
static void whole(void* stream, void* user) { (void)stream; rows((job*)user, 0, ((job*)user)->m->T, 0); }
static void chunk(void* stream, void* user, int c, int n) {
    job* j = (job*)user;
    (void)stream;
    rows(j, c * j->m->T / n, (c + 1) * j->m->T / n, c);
}

typedef struct spec {
    int T, D, L, arena, gar, no_chunk_layer, decompose, fuse, max_chunks, method;
    double dur[4], link_lat, link_upb;
    uint64_t max_bucket;
} spec;

static void init_model(model* m, const spec* s, int rank) {
    uint64_t r = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);
    int i, l;
    memset(m, 0, sizeof *m);
    m->T = s->T; m->D = s->D; m->L = s->L;
    for (l = 0; l < MAXL; l++) m->pp[l] = m->p[l];
    for (i = 0; i < s->T * s->D; i++) m->x[0][i] = (int32_t)(i * 2654435761u + 17);   /* the same on every rank */
    for (l = 0; l < s->L; l++)
        for (i = 0; i < s->D * s->D; i++) { r = r * 6364136223846793005ull + 1442695040888963407ull; m->w[l][i] = (int32_t)(r >> 33); }
}

static cc_region rg(cc_buffer b, uint64_t n, uint64_t split) {
    cc_region r = {0};
    memset(&r, 0, sizeof r);
    r.buffer = b; r.n_bytes = n; r.split_rows = split;
    return r;
}

static cc_result build(cc_context* ctx, model* m, job* jobs, cc_comm* comm, const spec* s, cc_graph** out) {
    cc_graph* g = NULL;
    cc_buffer bx[MAXL + 1], bw[MAXL], bp[MAXL], bg[MAXL];
    uint64_t XB = (uint64_t)s->T * s->D * 4, WB = (uint64_t)s->D * s->D * 4;
    cc_result r;
    int l;
    char nm[32];
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (l = 0; l <= s->L && r == CC_OK; l++) {
        snprintf(nm, sizeof nm, "x%d", l);
        r = cc_graph_add_buffer(g, nm, XB, &bx[l]);
        if (l == s->L) break;
        snprintf(nm, sizeof nm, "w%d", l);
        if (r == CC_OK) r = cc_graph_add_buffer(g, nm, WB, &bw[l]);
        snprintf(nm, sizeof nm, "p%d", l);
        if (r == CC_OK) r = (s->arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, nm, XB, &bp[l]);
        if (r == CC_OK) m->bp_index[l] = cc_buffer_index(g, bp[l]);
        snprintf(nm, sizeof nm, "g%d", l);
        if (r == CC_OK) r = cc_graph_add_buffer(g, nm, WB, &bg[l]);
    }
    for (l = 0; l < s->L && r == CC_OK; l++) {
        cc_op_desc d;
        cc_region rd[2] = {0}, wr[1] = {0};
        cc_collective c;
        job* j = &jobs[3 * l];
        j[0].m = j[1].m = j[2].m = m;
        j[0].l = j[1].l = j[2].l = l;
        j[0].kind = K_MM; j[1].kind = K_NORM; j[2].kind = K_WGRAD;
        memset(&d, 0, sizeof d);
        rd[0] = rg(bx[l], XB, (uint64_t)s->T); rd[1] = rg(bw[l], WB, 0); wr[0] = rg(bp[l], XB, (uint64_t)s->T);
        snprintf(nm, sizeof nm, "mm%d", l);
        d.name = nm; d.duration_us = s->dur[0]; d.fn = whole; d.chunk_fn = l == s->no_chunk_layer ? NULL : chunk; d.user_data = &j[0];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_INT32; c.reduce = CC_REDUCE_SUM; c.n_elems = (size_t)(s->T * s->D);
        c.comm = comm;
        c.send_buf = s->arena ? NULL : m->p[l];
        c.recv_buf = s->arena ? NULL : m->p[l];
        rd[0] = rg(bp[l], XB, (uint64_t)s->T);
        memset(&d, 0, sizeof d);
        snprintf(nm, sizeof nm, "ar%d", l);
        d.name = nm; d.duration_us = s->dur[3]; d.stream = CC_STREAM_COMM; d.coll = &c;
        d.reads = rd; d.n_reads = 1; d.writes = rd; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        rd[0] = rg(bp[l], XB, (uint64_t)s->T); rd[1] = rg(bx[l], XB, (uint64_t)s->T); wr[0] = rg(bx[l + 1], XB, (uint64_t)s->T);
        memset(&d, 0, sizeof d);
        snprintf(nm, sizeof nm, "norm%d", l);
        d.name = nm; d.duration_us = s->dur[1]; d.fn = whole; d.chunk_fn = chunk; d.user_data = &j[1];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        rd[0] = rg(bx[l], XB, (uint64_t)s->T); rd[1] = rg(bp[l], XB, (uint64_t)s->T); wr[0] = rg(bg[l], WB, 0);
        memset(&d, 0, sizeof d);
        snprintf(nm, sizeof nm, "wgrad%d", l);
        d.name = nm; d.duration_us = s->dur[2]; d.fn = whole; d.chunk_fn = chunk; d.user_data = &j[2];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        if (s->gar && r == CC_OK) {
            memset(&c, 0, sizeof c);
            c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_INT32; c.reduce = CC_REDUCE_SUM; c.n_elems = (size_t)(s->D * s->D);
            c.comm = comm; c.send_buf = m->g[l]; c.recv_buf = m->g[l];
            rd[0] = rg(bg[l], WB, 0);
            memset(&d, 0, sizeof d);
            snprintf(nm, sizeof nm, "gar%d", l);
            d.name = nm; d.duration_us = s->dur[3] / 4 + 1; d.stream = CC_STREAM_COMM; d.coll = &c;
            d.reads = rd; d.n_reads = 1; d.writes = rd; d.n_writes = 1;
            r = cc_graph_add_op(g, &d, NULL);
        }
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

static void point_at_arena(cc_exec* x, cc_graph* g, model* m) {
    int l;
    for (l = 0; l < m->L; l++) m->pp[l] = (int32_t*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bp_index[l]));
}

static cc_result run_step(cc_rank* rank, cc_graph* g, const cc_op* order, model* m, int arena) {
    cc_context* ctx = cc_rank_context(rank);
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    int have_be = 0;
    cc_result r = cc_plan_create(ctx, g, order, &pl);
    if (r == CC_OK && (r = cc_cpu_backend_create(rank, &be)) == CC_OK) have_be = 1;
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK) r = cc_exec_agree(x, cc_rank_world_comm(rank));
    if (r == CC_OK && arena) point_at_arena(x, g, m);
    if (r == CC_OK) r = cc_exec_step(x);
    cc_exec_destroy(x);
    if (have_be) cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    return r;
}

typedef struct arg { const spec* s; model m[2][2]; int differs[2]; cc_result rc[2]; char msg[2][600]; } arg;

static cc_result rank_fn(cc_rank* rank, void* user) {
    arg* A = (arg*)user;
    const spec* s = A->s;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank);
    model* m0 = &A->m[me][0];
    model* m1 = &A->m[me][1];
    job j0[3 * MAXL], j1[3 * MAXL];
    cc_graph *g0 = NULL, *g1 = NULL, *run = NULL, *next = NULL;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    cc_schedule sch;
    cc_link link;
    cc_result r;
    memset(&rd, 0, sizeof rd);
    memset(&sch, 0, sizeof sch);
    memset(&link, 0, sizeof link);
    link.latency_us = s->link_lat;
    link.us_per_byte = s->link_upb;
    if (s->link_upb > 0) rd.link = &link;
    rd.max_chunks = s->max_chunks;
    rd.max_bucket_bytes = s->max_bucket;
    rd.max_evaluations = 40;
    rd.sched.method = (cc_sched_method)s->method;
    rd.sched.tuning.budget_schedules = 60;
    rd.sched.tuning.bnb_nodes = 200;
    init_model(m0, s, me);
    init_model(m1, s, me);
    r = build(ctx, m0, j0, cc_rank_world_comm(rank), s, &g0);
    if (r == CC_OK) r = build(ctx, m1, j1, cc_rank_world_comm(rank), s, &g1);
    if (r == CC_OK) r = run_step(rank, g0, NULL, m0, s->arena);
    run = g1;
    if (r == CC_OK && s->decompose) {
        r = cc_graph_decompose(ctx, run, &rd, &next, &rep);
        if (r == CC_OK) { FZ_CHECK(cc_graph_validate(next) == CC_OK, "a decomposed graph does not validate: %s", cc_last_error(ctx)); run = next; next = NULL; }
    }
    if (r == CC_OK && s->fuse) {
        r = cc_graph_fuse(ctx, run, &rd, &next, &rep);
        if (r == CC_OK) {
            FZ_CHECK(cc_graph_validate(next) == CC_OK, "a fused graph does not validate: %s", cc_last_error(ctx));
            if (run != g1) cc_graph_destroy(run);
            run = next;
            next = NULL;
        }
    }
    if (r == CC_OK) r = cc_sched_solve(ctx, run, &rd.sched, &sch);
    if (r == CC_OK) r = run_step(rank, run, sch.order, m1, s->arena);
    A->rc[me] = r;
    if (r != CC_OK) snprintf(A->msg[me], sizeof A->msg[me], "%s", cc_last_error(ctx));
    else {
        int l;
        A->differs[me] = memcmp(m0->x, m1->x, sizeof m0->x) != 0 || memcmp(m0->g, m1->g, sizeof m0->g) != 0;
        for (l = 0; l < s->L && !s->arena; l++) A->differs[me] |= memcmp(m0->p[l], m1->p[l], sizeof m0->p[l]) != 0;
    }
    cc_schedule_release(ctx, &sch);
    if (run != g1) cc_graph_destroy(run);
    cc_graph_destroy(g1);
    cc_graph_destroy(g0);
    return r;
}

static arg the_arg;   /* large: not on the fuzzer's stack */

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const int Ts[4] = { 4, 8, 12, 16 };
    static const int chunks[5] = { 0, 2, 4, 8, 16 };
    static const cc_sched_method methods[3] = { CC_SCHED_AUTO, CC_SCHED_LIST, CC_SCHED_ODD_EVEN };
    fz_in in = { data, size, 0 };
    spec s;
    cc_context* ctx = NULL;
    cc_world* w = NULL;
    cc_world_desc wd;
    unsigned f;
    int i;
    cc_result rc;
    if (size < 4) return 0;
    memset(&s, 0, sizeof s);
    f = fz_u8(&in);
    s.T = Ts[f & 3];
    s.D = 1 + (int)((f >> 2) & 3);
    s.L = 1 + (int)((f >> 4) % 3);
    f = fz_u8(&in);
    s.arena = f & 1;
    s.gar = (f >> 1) & 1;
    s.no_chunk_layer = (f >> 2) & 1 ? (int)((f >> 3) & 3) : -1;
    s.decompose = !((f >> 5) & 1);
    s.fuse = (f >> 6) & 1 || !s.decompose;
    s.max_chunks = chunks[fz_u8(&in) % 5];
    s.method = methods[fz_u8(&in) % 3];
    for (i = 0; i < 4; i++) s.dur[i] = 1 + fz_u8(&in) * (i == 3 ? 4 : 1);
    s.link_lat = fz_u8(&in) % 64;
    s.link_upb = (f & 0x80) ? (1 + fz_u8(&in)) / 256.0 : 0;
    s.max_bucket = (uint64_t)fz_u8(&in) * 16;
    memset(&the_arg, 0, sizeof the_arg);
    the_arg.s = &s;
    memset(&wd, 0, sizeof wd);
    wd.n_ranks = 2;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 0;
    if (cc_world_create(ctx, &wd, &w) == CC_OK) {
        rc = cc_world_run(w, rank_fn, &the_arg);
        for (i = 0; i < 2; i++) {
            FZ_CHECK(the_arg.rc[i] == CC_OK || the_arg.msg[i][0], "rank %d failed (%d) without a message", i, (int)the_arg.rc[i]);
            FZ_CHECK(!the_arg.differs[i], "rank %d: the rewritten step's results differ from program order's (T %d D %d L %d arena %d "
                     "gar %d no-chunk layer %d decompose %d fuse %d chunks %d)", i, s.T, s.D, s.L, s.arena, s.gar,
                     s.no_chunk_layer, s.decompose, s.fuse, s.max_chunks);
        }
        FZ_CHECK(rc == CC_OK || (the_arg.rc[0] != CC_OK || the_arg.rc[1] != CC_OK), "the world failed: %s", cc_world_error(w));
        FZ_CHECK(the_arg.rc[0] == CC_OK && the_arg.rc[1] == CC_OK, "a rank failed: %s / %s", the_arg.msg[0], the_arg.msg[1]);
        cc_world_destroy(w);
    }
    cc_context_destroy(ctx);
    return 0;
}
