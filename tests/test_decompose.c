/* tests/test_decompose.c - cc_graph_decompose: splitting a synchronous
   all-reduce with the ops around it into chunks.

   A tensor-parallel-like chain per layer, on each rank (T rows, D columns):
       mm_l     P_l = x_l W_l          rows of x_l -> rows of P_l (a partial sum: W_l differs per rank)
       ar_l     all-reduce(sum) of P_l in place
       norm_l   x_{l+1} = rownorm(x_l + P_l)          row by row
       wgrad_l  G_l = x_l^T P_l        summed over the rows: chunk 0 overwrites, later chunks add
   The step runs in program order and decomposed (scheduled) on two CPU
   ranks: x and P must be bit-identical (row-wise work, the same arithmetic
   per row, reductions in rank order), G equal within a relative 1e-5 (its
   summation order differs). In one variant P is a transient buffer in the
   executor's arena and the all-reduces have NULL buffers (resolved from
   their regions): decomposed, then fused, x and G as before. Then graphs only: what is left alone, bad
   arguments, a failing allocator, determinism. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "rewrite_oom.h"

#define T 16
#define D 8
#define L 3
#define MAXLOG 1024

typedef struct tp {
    int rank;
    float x[L + 1][T * D];
    float w[L][D * D];
    float p[L][T * D];
    float* pp[L];                /* where the work finds P: p, or a transient buffer's arena address */
    int bp_index[L];             /* P's buffer index (the same in every rewrite of the graph) */
    float g[L][D * D];
    float scratch[T * D];        /* an out-of-place receive buffer for one variant */
    int n_log;                   /* chunk calls: which op, chunk, of how many */
    struct { int tag, chunk, n; } log[MAXLOG];
} tp;
enum { K_MM = 0, K_NORM, K_WGRAD };
typedef struct tjob { tp* m; int l, kind; } tjob;

/* ---- the work, whole and by rows ---------------------------------------------*/
static void mm_rows(tp* m, int l, int r0, int r1) {
    int t, j, k;
    for (t = r0; t < r1; t++)
        for (j = 0; j < D; j++) {
            float s = 0;
            for (k = 0; k < D; k++) s += m->x[l][t * D + k] * m->w[l][k * D + j];
            m->pp[l][t * D + j] = s;
        }
}
static void norm_rows(tp* m, int l, int r0, int r1) {
    int t, j;
    for (t = r0; t < r1; t++) {
        float h[D], mean = 0, var = 0;
        for (j = 0; j < D; j++) { h[j] = m->x[l][t * D + j] + m->pp[l][t * D + j]; mean += h[j]; }
        mean /= D;
        for (j = 0; j < D; j++) var += (h[j] - mean) * (h[j] - mean);
        var /= D;
        for (j = 0; j < D; j++) m->x[l + 1][t * D + j] = (h[j] - mean) / sqrtf(var + 1e-5f);
    }
}
static void wgrad_rows(tp* m, int l, int r0, int r1, int accumulate) {
    int i, j, t;
    for (i = 0; i < D; i++)
        for (j = 0; j < D; j++) {
            float s = 0;
            for (t = r0; t < r1; t++) s += m->x[l][t * D + i] * m->pp[l][t * D + j];
            m->g[l][i * D + j] = accumulate ? m->g[l][i * D + j] + s : s;
        }
}
static void run_rows(tjob* jb, int r0, int r1, int chunk) {
    switch (jb->kind) {
        case K_MM: mm_rows(jb->m, jb->l, r0, r1); break;
        case K_NORM: norm_rows(jb->m, jb->l, r0, r1); break;
        default: wgrad_rows(jb->m, jb->l, r0, r1, chunk > 0); break;
    }
}
static void whole_fn(void* stream, void* user) { (void)stream; run_rows((tjob*)user, 0, T, 0); }
static void log_chunk(tjob* jb, int chunk, int n) {
    tp* m = jb->m;
    if (m->n_log < MAXLOG) {
        m->log[m->n_log].tag = jb->l * 3 + jb->kind;
        m->log[m->n_log].chunk = chunk;
        m->log[m->n_log].n = n;
        m->n_log++;
    }
}
/* an op split by its rule: told its rows */
static void part_fn(void* stream, void* user, const cc_split_chunk* c) {
    tjob* jb = (tjob*)user;
    (void)stream;
    log_chunk(jb, c->index, c->count);
    run_rows(jb, (int)c->begin, (int)c->end, c->index);
}
/* wgrad's rule (a user rule): rows [begin, end) of x and P; G a partial sum */
static int wgrad_rule(void* ud, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    int q;
    (void)ud; (void)wr; (void)nw;
    for (q = 0; q < nr; q++) {
        uint64_t row = rd[q].n_bytes / T;
        rd[q].offset_bytes += c->begin * row;
        rd[q].n_bytes = (c->end - c->begin) * row;
    }
    partial[0] = 1;
    return 0;
}
static void chunk_fn(void* stream, void* user, int chunk, int n) {
    tjob* jb = (tjob*)user;
    (void)stream;
    log_chunk(jb, chunk, n);
    run_rows(jb, chunk * T / n, (chunk + 1) * T / n, chunk);
}

static void init_tp(tp* m, int rank) {
    tu_rng rng;
    int i, l;
    memset(m, 0, sizeof *m);
    m->rank = rank;
    for (l = 0; l < L; l++) m->pp[l] = m->p[l];
    rng.s = 11;   /* the same input on every rank */
    for (i = 0; i < T * D; i++) m->x[0][i] = (float)tu_unit(&rng) - 0.5f;
    rng.s = 100 + (uint64_t)rank;   /* each rank its shard of the weights */
    for (l = 0; l < L; l++)
        for (i = 0; i < D * D; i++) m->w[l][i] = ((float)tu_unit(&rng) - 0.5f) * 0.5f;
}

/* ---- the graph ------------------------------------------------------------------*/
enum {
    DEF_NONE = 0,
    DEF_NO_CHUNK_PRODUCER,     /* layer 1: mm has no chunk_fn */
    DEF_NO_CHUNK_CONSUMER,     /* layer 1: wgrad has no chunk_fn */
    DEF_CONSUMER_ROWS,         /* layer 1: norm writes x_2 as 3 rows (512 bytes do not divide by 3) */
    DEF_AR_ONE_ROW,            /* layer 1: the all-reduce's region is one row */
    DEF_BROADCAST,             /* layer 1: a broadcast instead of an all-reduce */
    DEF_SPLIT0,                /* layer 1: the all-reduce's region has split_rows 0 */
    DEF_NOT_IN_PLACE,          /* layer 1: the all-reduce receives elsewhere */
    N_DEF
};
static const char* def_name[N_DEF] = { "none", "a producer without chunk_fn", "a consumer without chunk_fn",
                                       "a consumer region whose rows do not divide", "an all-reduce region of one row",
                                       "a broadcast", "an all-reduce region with split_rows 0", "an all-reduce out of place" };

static cc_region rg(cc_buffer b, uint64_t n_bytes, uint64_t rows) {
    cc_region r = {0};
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = n_bytes;
    r.split_rows = rows;
    return r;
}

#define XB ((uint64_t)T * D * sizeof(float))
#define WB ((uint64_t)D * D * sizeof(float))
static const double DUR_MM = 100, DUR_NORM = 40, DUR_WGRAD = 40, DUR_AR = 200;

/* Points the work at P's arena addresses in executor x of graph g. */
static void point_at_arena(cc_exec* x, cc_graph* g, void* user) {
    tp* m = (tp*)user;
    int l;
    for (l = 0; l < L; l++) m->pp[l] = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bp_index[l]));
}

/* arena: P transient, its all-reduce's buffers NULL; rules: mm, norm and
   wgrad say how they split by split rules (matmul, rowwise, a user rule)
   and have a part_fn instead of a chunk_fn */
static cc_result build_tp_rules(cc_context* ctx, tp* m, tjob* jobs, cc_comm* comm, int defect, int arena, int rules, cc_graph** out) {
    cc_graph* g = NULL;
    cc_buffer bx[L + 1], bw[L], bp[L], bg[L];
    cc_result r;
    int l;
    char name[32];
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (l = 0; l <= L && r == CC_OK; l++) {
        snprintf(name, sizeof name, "x%d", l);
        r = cc_graph_add_buffer(g, name, XB, &bx[l]);
        if (l == L) break;
        snprintf(name, sizeof name, "w%d", l);
        if (r == CC_OK) r = cc_graph_add_buffer(g, name, WB, &bw[l]);
        snprintf(name, sizeof name, "p%d", l);
        if (r == CC_OK) r = (arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, name, XB, &bp[l]);
        if (r == CC_OK) m->bp_index[l] = cc_buffer_index(g, bp[l]);
        snprintf(name, sizeof name, "g%d", l);
        if (r == CC_OK) r = cc_graph_add_buffer(g, name, WB, &bg[l]);
    }
    for (l = 0; l < L && r == CC_OK; l++) {
        int bad = l == 1 ? defect : DEF_NONE;
        cc_op_desc d = {0};
        cc_region rd[2] = {0}, wr[1] = {0};
        cc_collective co;
        cc_split sp;
        tjob* jb = &jobs[l * 3];
        jb[0].m = jb[1].m = jb[2].m = m;
        jb[0].l = jb[1].l = jb[2].l = l;
        jb[0].kind = K_MM; jb[1].kind = K_NORM; jb[2].kind = K_WGRAD;
        /* mm */
        rd[0] = rg(bx[l], XB, T); rd[1] = rg(bw[l], WB, 0); wr[0] = rg(bp[l], XB, T);
        snprintf(name, sizeof name, "mm%d", l);
        d.name = name; d.duration_us = DUR_MM; d.fn = whole_fn; d.chunk_fn = bad == DEF_NO_CHUNK_PRODUCER ? NULL : chunk_fn;
        d.user_data = &jb[0];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        if (rules) {
            memset(&sp, 0, sizeof sp);
            sp.kind = CC_SPLIT_MATMUL; sp.extent[CC_AXIS_ROWS] = T; sp.extent[CC_AXIS_COLS] = D; sp.extent[CC_AXIS_REDUCE] = D;
            d.split = &sp; d.part_fn = part_fn; d.chunk_fn = NULL;
        }
        r = cc_graph_add_op(g, &d, NULL);
        /* the all-reduce */
        memset(&co, 0, sizeof co);
        co.kind = bad == DEF_BROADCAST ? CC_COLL_BROADCAST : CC_COLL_ALL_REDUCE;
        co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.n_elems = T * D; co.comm = comm;
        co.send_buf = m->p[l]; co.recv_buf = bad == DEF_NOT_IN_PLACE ? m->scratch : m->p[l];
        if (arena) co.send_buf = co.recv_buf = NULL;
        rd[0] = rg(bp[l], XB, bad == DEF_AR_ONE_ROW ? 1 : bad == DEF_SPLIT0 ? 0 : T);
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "ar%d", l);
        d.name = name; d.duration_us = DUR_AR; d.stream = CC_STREAM_COMM; d.coll = &co;
        d.reads = rd; d.n_reads = 1; d.writes = rd; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        /* norm */
        rd[0] = rg(bp[l], XB, T); rd[1] = rg(bx[l], XB, T); wr[0] = rg(bx[l + 1], XB, bad == DEF_CONSUMER_ROWS ? 3 : T);
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "norm%d", l);
        d.name = name; d.duration_us = DUR_NORM; d.fn = whole_fn; d.chunk_fn = chunk_fn; d.user_data = &jb[1];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        if (rules) {
            memset(&sp, 0, sizeof sp);
            sp.kind = CC_SPLIT_ROWWISE; sp.extent[CC_AXIS_ROWS] = T;
            d.split = &sp; d.part_fn = part_fn; d.chunk_fn = NULL;
        }
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        /* wgrad: G summed over rows, a whole region */
        rd[0] = rg(bx[l], XB, T); rd[1] = rg(bp[l], XB, T); wr[0] = rg(bg[l], WB, 0);
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "wgrad%d", l);
        d.name = name; d.duration_us = DUR_WGRAD; d.fn = whole_fn; d.chunk_fn = bad == DEF_NO_CHUNK_CONSUMER ? NULL : chunk_fn;
        d.user_data = &jb[2];
        d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
        if (rules) {
            memset(&sp, 0, sizeof sp);
            sp.kind = CC_SPLIT_USER; sp.extent[CC_AXIS_ROWS] = T; sp.fn = wgrad_rule; sp.name = "wgrad_rows";
            d.split = &sp; d.part_fn = part_fn; d.chunk_fn = NULL;
        }
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

static cc_result build_tp_in(cc_context* ctx, tp* m, tjob* jobs, cc_comm* comm, int defect, int arena, cc_graph** out) {
    return build_tp_rules(ctx, m, jobs, comm, defect, arena, 0, out);
}

static cc_result build_tp(cc_context* ctx, tp* m, tjob* jobs, cc_comm* comm, int defect, cc_graph** out) {
    return build_tp_in(ctx, m, jobs, comm, defect, 0, out);
}

static int find_op(cc_graph* g, const char* name) {
    int i;
    for (i = 0; i < cc_graph_n_ops(g); i++)
        if (!strcmp(cc_op_name(g, cc_graph_op(g, i)), name)) return i;
    return -1;
}
/* ---- the world run: program order against decomposed ---------------------------*/
enum { V_FIT = 0, V_LINK, V_THEN_FUSE, V_ARENA, V_RULES, N_VARIANTS };
static const char* variant_name[N_VARIANTS] = { "fitted model", "link model", "decomposed, then fused",
                                                "P in the arena, NULL buffers, decomposed, then fused",
                                                "split rules (matmul, rowwise, a user rule) instead of chunk_fn" };

typedef struct vres {
    int ok;
    char err[400];
    int ops_before, ops_after, colls_before, colls_after, n_changed, n_candidates;
    int k[L];                   /* the chunk count each layer got */
    int all_split;              /* every mm/ar/norm/wgrad became k chunk ops */
    int rows_identical;         /* x and P bit-identical */
    double g_rel_err;           /* max relative error of G */
    int calls_ok;               /* every chunk op called once with its (chunk, n), in chunk order */
    int user_data_ok;           /* cc_op_user_data of a chunk op is the op's user_data */
    int validated;
    double mk_before, mk_after, mk_orig_judged, mk_new_judged;
    uint64_t fingerprint;
    char calls_msg[200];
    int exact_only_changed;     /* V_RULES: collectives split with exact_only */
} vres;
typedef struct world_arg { vres v[N_VARIANTS][2]; } world_arg;

static tp ranks_tp[2][2];   /* [rank][0: program order, 1: rewritten] */

static cc_result dec_rank(cc_rank* rank, void* user) {
    world_arg* A = (world_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), v;
    tp* m0 = &ranks_tp[me][0];
    tp* m1 = &ranks_tp[me][1];
    static tjob jobs0[2][3 * L], jobs1[2][3 * L];
    for (v = 0; v < N_VARIANTS; v++) {
        vres* R = &A->v[v][me];
        cc_graph *g0 = NULL, *g1 = NULL, *dg = NULL, *fg = NULL;
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_schedule s, s0;
        cc_link link = { 0 };
        cc_result r;
        int i, l;
        memset(&s, 0, sizeof s);
        memset(&s0, 0, sizeof s0);
        /* a link whose all-reduce of P on 2 ranks takes 200 us (2 alpha + bytes * us_per_byte) */
        link.latency_us = 5; link.us_per_byte = 190.0 / (double)XB;
        if (v == V_LINK) rd.link = &link;
        init_tp(m0, me);
        init_tp(m1, me);
        r = build_tp_in(ctx, m0, jobs0[me], cc_rank_world_comm(rank), DEF_NONE, v == V_ARENA, &g0);
        if (r == CC_OK) r = build_tp_rules(ctx, m1, jobs1[me], cc_rank_world_comm(rank), DEF_NONE, v == V_ARENA, v == V_RULES, &g1);
        if (r == CC_OK && v == V_RULES) {   /* only exact splits: wgrad's partial sum keeps every context whole */
            cc_rewrite_desc ex = rd;
            cc_rewrite_report erep;
            cc_graph* eg = NULL;
            ex.exact_only = 1;
            r = cc_graph_decompose(ctx, g1, &ex, &eg, &erep);
            R->exact_only_changed = r == CC_OK ? erep.n_changed : -1;
            cc_graph_destroy(eg);
        }
        if (r == CC_OK) r = tu_run_step_with(rank, g0, NULL, v == V_ARENA ? point_at_arena : NULL, m0);
        if (r == CC_OK) r = cc_graph_decompose(ctx, g1, &rd, &dg, &rep);
        if (r == CC_OK) {
            R->ops_before = rep.n_ops_before; R->ops_after = rep.n_ops_after;
            R->colls_before = rep.n_colls_before; R->colls_after = rep.n_colls_after;
            R->n_changed = rep.n_changed; R->n_candidates = rep.n_candidates;
            R->mk_before = rep.makespan_before_us; R->mk_after = rep.makespan_after_us;
            R->validated = cc_graph_validate(dg) == CC_OK;
            R->fingerprint = tu_graph_fingerprint(dg);
            r = cc_sched_solve(ctx, g1, &rd.sched, &s0);
        }
        if (r == CC_OK && (v == V_THEN_FUSE || v == V_ARENA)) {
            /* the pipeline's order: decompose, then fuse (which must not undo the pipelining) */
            cc_rewrite_report frep;
            r = cc_graph_fuse(ctx, dg, &rd, &fg, &frep);
            if (r == CC_OK) {
                R->colls_after = tu_count_on(fg, CC_STREAM_COMM);
                cc_graph_destroy(dg);
                dg = fg;
                fg = NULL;
            }
        }
        if (r == CC_OK) r = cc_sched_solve(ctx, dg, &rd.sched, &s);
        if (r == CC_OK) {
            R->mk_orig_judged = s0.makespan_us;
            R->mk_new_judged = s.makespan_us;
            r = tu_run_step_with(rank, dg, s.order, v == V_ARENA ? point_at_arena : NULL, m1);
        }
        if (r == CC_OK) {
            int n_calls = 0;
            /* each layer's k from its first chunk op's name, "mm<l>#0/<k>" */
            R->all_split = 1;
            for (l = 0; l < L; l++) {
                char pre[24];
                snprintf(pre, sizeof pre, "mm%d#0/", l);
                R->k[l] = 0;
                for (i = 0; i < cc_graph_n_ops(dg); i++) {
                    const char* nm = cc_op_name(dg, cc_graph_op(dg, i));
                    if (!strncmp(nm, pre, strlen(pre))) R->k[l] = atoi(nm + strlen(pre));
                }
                if (R->k[l] < 2) R->all_split = 0;
                n_calls += 3 * R->k[l];
            }
            for (l = 0; l < L && R->all_split; l++) {
                static const char* base[4] = { "mm", "ar", "norm", "wgrad" };
                int b, c;
                for (b = 0; b < 4; b++) {
                    char nm[48];
                    snprintf(nm, sizeof nm, "%s%d", base[b], l);
                    if (find_op(dg, nm) >= 0) R->all_split = 0;
                    /* fusing afterwards may merge neighbouring chunk all-reduces again ("ar0#1/4+1") */
                    for (c = 0; c < R->k[l] && !(b == 1 && (v == V_THEN_FUSE || v == V_ARENA)); c++) {
                        snprintf(nm, sizeof nm, "%s%d#%d/%d", base[b], l, c, R->k[l]);
                        if (find_op(dg, nm) < 0) R->all_split = 0;
                    }
                }
            }
            /* (a transient P is gone after the step) */
            R->rows_identical = !memcmp(m0->x, m1->x, sizeof m0->x) && (v == V_ARENA || !memcmp(m0->p, m1->p, sizeof m0->p));
            R->g_rel_err = 0;
            for (l = 0; l < L; l++)
                for (i = 0; i < D * D; i++) {
                    double want = m0->g[l][i], got = m1->g[l][i];
                    double e = fabs(got - want) / (fabs(want) > 1e-3 ? fabs(want) : 1e-3);
                    if (e > R->g_rel_err) R->g_rel_err = e;
                }
            /* the calls: per op (tag), chunks 0..k-1 in that order, each with n = k */
            R->calls_ok = m1->n_log == n_calls && m0->n_log == 0;
            if (!R->calls_ok)
                snprintf(R->calls_msg, sizeof R->calls_msg, "%d chunk calls, expected %d (and %d in program order)", m1->n_log,
                         n_calls, m0->n_log);
            for (l = 0; l < 3 * L && R->calls_ok; l++) {
                int next = 0;
                for (i = 0; i < m1->n_log; i++) {
                    if (m1->log[i].tag != l) continue;
                    if (m1->log[i].chunk != next || m1->log[i].n != R->k[l / 3]) {
                        R->calls_ok = 0;
                        snprintf(R->calls_msg, sizeof R->calls_msg, "op tag %d: call (%d, %d), expected (%d, %d)", l,
                                 m1->log[i].chunk, m1->log[i].n, next, R->k[l / 3]);
                        break;
                    }
                    next++;
                }
                if (R->calls_ok && next != R->k[l / 3]) {
                    R->calls_ok = 0;
                    snprintf(R->calls_msg, sizeof R->calls_msg, "op tag %d: %d calls", l, next);
                }
            }
            {
                int c = find_op(dg, "norm1#1/2") >= 0 ? find_op(dg, "norm1#1/2") : find_op(dg, "norm1#1/4");
                R->user_data_ok = c >= 0 && cc_op_user_data(dg, cc_graph_op(dg, c)) == (void*)&jobs1[me][1 * 3 + K_NORM];
            }
        }
        R->ok = r == CC_OK;
        if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
        cc_schedule_release(ctx, &s);
        cc_schedule_release(ctx, &s0);
        cc_graph_destroy(fg);
        cc_graph_destroy(dg);
        cc_graph_destroy(g1);
        cc_graph_destroy(g0);
        if (r != CC_OK) break;
    }
    return CC_OK;
}

static void test_world_decompose(void) {
    static world_arg A;
    cc_result rc;
    char err[512];
    int v;
    memset(&A, 0, sizeof A);
    tu_run_world(2, dec_rank, &A, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "2 ranks: the world ran (%s)", err);
    for (v = 0; v < N_VARIANTS; v++) {
        vres* R = A.v[v];
        const char* vn = variant_name[v];
        CHECK(R[0].ok && R[1].ok, "%s: program order, decomposition, schedule and the new step ran (%s)", vn,
              R[0].ok ? R[1].err : R[0].err);
        if (!R[0].ok || !R[1].ok) continue;
        CHECK(R[0].validated && R[1].validated, "%s: the decomposed graph validates", vn);
        CHECK(R[0].fingerprint == R[1].fingerprint, "%s: both ranks made the same graph", vn);
        CHECK_INT(R[0].n_candidates, L, "%s: %d all-reduces considered", vn, L);
        CHECK_INT(R[0].n_changed, L, "%s: every layer's all-reduce was split", vn);
        CHECK(R[0].all_split, "%s: mm, ar, norm and wgrad of every layer became '<name>#<i>/<k>' chunk ops (k = %d, %d, %d)", vn,
              R[0].k[0], R[0].k[1], R[0].k[2]);
        CHECK(R[0].ops_after > R[0].ops_before && R[0].colls_after > R[0].colls_before,
              "%s: more ops (%d -> %d) and collectives (%d -> %d)", vn, R[0].ops_before, R[0].ops_after, R[0].colls_before,
              R[0].colls_after);
        CHECK(R[0].rows_identical && R[1].rows_identical, "%s: every x and P is bit-identical to program order on both ranks", vn);
        CHECK(R[0].g_rel_err <= 1e-5 && R[1].g_rel_err <= 1e-5,
              "%s: the weight gradients summed over rows agree within 1e-5 relative (%.2g, %.2g)", vn, R[0].g_rel_err,
              R[1].g_rel_err);
        CHECK(R[0].calls_ok && R[1].calls_ok, "%s: each chunk op ran once with its (chunk, n), chunks in order (%s%s)", vn,
              R[0].calls_msg, R[1].calls_msg);
        CHECK(R[0].user_data_ok, "%s: cc_op_user_data of a chunk op gives the op's own user_data", vn);
        CHECK(R[0].mk_new_judged < R[0].mk_orig_judged, "%s: judged makespan %.1f < the original's %.1f", vn,
              R[0].mk_new_judged, R[0].mk_orig_judged);
        if (v == V_RULES) {
            const vres* F = &A.v[V_FIT][0];
            CHECK(R[0].k[0] == F->k[0] && R[0].k[1] == F->k[1] && R[0].k[2] == F->k[2] && R[0].ops_after == F->ops_after,
                  "%s: the same chunks (%d, %d, %d) and ops (%d) as with chunk_fn and split_rows (%d, %d, %d; %d)", vn, R[0].k[0],
                  R[0].k[1], R[0].k[2], R[0].ops_after, F->k[0], F->k[1], F->k[2], F->ops_after);
            CHECK_INT(R[0].exact_only_changed, 0, "%s: with exact_only, wgrad's partial sum keeps every all-reduce whole", vn);
        }
        if (v == V_ARENA) {   /* NULL buffers resolved from regions rewrite as the same pointers do */
            const vres* F = &A.v[V_THEN_FUSE][0];
            CHECK(R[0].colls_after == F->colls_after && R[0].k[0] == F->k[0] && R[0].k[1] == F->k[1] && R[0].k[2] == F->k[2],
                  "%s: the same chunks (%d, %d, %d) and %d collectives after fusion as with pointers (%d, %d, %d; %d)", vn,
                  R[0].k[0], R[0].k[1], R[0].k[2], R[0].colls_after, F->k[0], F->k[1], F->k[2], F->colls_after);
        }
        if (v != V_THEN_FUSE && v != V_ARENA)
            CHECK(R[0].mk_after == R[0].mk_new_judged && R[0].mk_before == R[0].mk_orig_judged,
                  "%s: the report's makespans are the judging schedule's (%.1f -> %.1f)", vn, R[0].mk_before, R[0].mk_after);
        else
            CHECK(R[0].mk_new_judged <= R[0].mk_after, "%s: fusing after decomposing does not undo it (%.1f, %d collectives)", vn,
                  R[0].mk_new_judged, R[0].colls_after);
    }
}

/* The decision follows the link (graphs with split rules, the link model):
   an all-reduce of P that takes far longer than its layer's compute is
   decomposed and the judged step drops; on a very fast link (0.1 us an
   all-reduce) the launches of the chunk ops (1 us each) cost more than
   the overlap gains and the step is left alone. With max_chunks 16 the
   chunk count is one of 2, 4, 8, 16. */
static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c; (void)msg; (void)msg_size;
    return CC_OK;
}
static const cc_comm_fns idle_family = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

static void test_link_decides(void) {
    cc_context* ctx;
    static tp m;
    static tjob jobs[3 * L];
    cc_comm* comm = NULL;
    int sl;
    cc_context_create(NULL, &ctx);
    init_tp(&m, 0);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "tp", &comm) != CC_OK) { CHECK(0, "comm: %s", cc_last_error(ctx)); return; }
    for (sl = 0; sl < 3; sl++) {
        cc_graph* g = NULL;
        cc_graph* dg = NULL;
        cc_rewrite_report rep;
        cc_rewrite_desc rd = {0};
        cc_link link = {0};
        const char* what = sl == 0 ? "a slow link" : sl == 1 ? "a very fast link" : "a slow link, max_chunks 16";
        memset(&rep, 0, sizeof rep);
        link.latency_us = sl == 1 ? 0.05 : 5;
        link.us_per_byte = sl == 1 ? 1e-9 : 400.0 / (double)XB;   /* slow: 410 us for P against 180 us of compute */
        rd.link = &link;
        if (sl == 2) rd.max_chunks = 16;
        if (build_tp_rules(ctx, &m, jobs, comm, DEF_NONE, 0, 1, &g) == CC_OK) {
            int i;   /* the all-reduces take what the link says, as a profiled step's would */
            for (i = 0; i < cc_graph_n_ops(g); i++)
                if (cc_op_collective(g, cc_graph_op(g, i)))
                    cc_op_set_duration(g, cc_graph_op(g, i), 2 * link.latency_us + (double)XB * link.us_per_byte);
            {   /* what launching an op costs the executor: 1 us, as the CPU backend's threads do */
                cc_exec_costs c;
                memset(&c, 0, sizeof c);
                c.launch_us = 1;
                cc_graph_set_exec_costs(g, &c);
            }
        }
        if (!g || cc_graph_decompose(ctx, g, &rd, &dg, &rep) != CC_OK) {
            CHECK(0, "%s: decompose: %s", what, cc_last_error(ctx));
        } else if (sl == 1) {
            CHECK(rep.n_contexts == 0 && rep.contexts == NULL, "%s: no context in the report", what);
            CHECK(rep.n_changed == 0 && tu_graph_fingerprint(dg) == tu_graph_fingerprint(g),
                  "%s: the step is left alone (%d split; %.1f -> %.1f us predicted)", what, rep.n_changed,
                  rep.makespan_before_us, rep.makespan_after_us);
        } else {
            int k = 0, i;
            for (i = 0; i < cc_graph_n_ops(dg); i++) {
                const char* nm = cc_op_name(dg, cc_graph_op(dg, i));
                if (!strncmp(nm, "ar0#0/", 6)) k = atoi(nm + 6);
            }
            CHECK(rep.n_changed == L && rep.makespan_after_us < 0.9 * rep.makespan_before_us,
                  "%s: every all-reduce decomposed (%d) and the predicted step drops by over 10%% (%.1f -> %.1f us)", what,
                  rep.n_changed, rep.makespan_before_us, rep.makespan_after_us);
            CHECK(k == 2 || k == 4 || k == 8 || k == 16, "%s: ar0 in %d chunks", what, k);
            CHECK_INT(rep.n_contexts, rep.n_changed, "%s: the report names every context split", what);
            if (rep.n_contexts == L) {
                double sum = 0;
                for (i = 0; i < L; i++) {
                    const cc_rewrite_context* c = &rep.contexts[i];
                    char want[96], coll[16];
                    snprintf(coll, sizeof coll, "ar%d", i);
                    snprintf(want, sizeof want, "mm%d, ar%d, norm%d, wgrad%d", i, i, i, i);
                    CHECK(!strcmp(c->collective, coll) && c->kind == CC_COLL_ALL_REDUCE && c->axis == CC_AXIS_ROWS &&
                          c->n_ops == 4 && !strcmp(c->ops, want) && c->gain_us > 0,
                          "%s: context %d is %s (all-reduce), along %s in %d, covering %d ops '%s', gain %.1f us", what, i,
                          c->collective, cc_axis_name(c->axis), c->n_chunks, c->n_ops, c->ops, c->gain_us);
                    sum += c->gain_us;
                }
                CHECK_INT(rep.contexts[0].n_chunks, k, "%s: context 0's chunk count is ar0's", what);
                CHECK(fabs(sum - (rep.makespan_before_us - rep.makespan_after_us)) < 1e-6,
                      "%s: the contexts' gains add up to the step's (%.3f, %.3f)", what, sum,
                      rep.makespan_before_us - rep.makespan_after_us);
            }
            if (sl == 2) NOTE("max_chunks 16 on a slow link: ar0 in %d chunks", k);
        }
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
}

/* ---- graphs only: what is left alone ------------------------------------------------*/
static void test_left_alone(void) {
    cc_context* ctx;
    static tp m;
    static tjob jobs[3 * L];
    int dummy_comm, def;
    cc_context_create(NULL, &ctx);
    init_tp(&m, 0);
    for (def = 0; def < N_DEF; def++) {
        cc_graph* g = NULL;
        cc_graph* dg = NULL;
        cc_rewrite_report rep;
        cc_result r = build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, def, &g);
        if (r == CC_OK) r = cc_graph_decompose(ctx, g, NULL, &dg, &rep);
        CHECK_RES(ctx, r, CC_OK, "%s: decompose runs", def_name[def]);
        if (r == CC_OK) {
            if (def == DEF_NONE) {
                CHECK(rep.n_changed == L && find_op(dg, "ar1") < 0, "control: all %d layers decomposed (%d)", L, rep.n_changed);
            } else {
                int expect_cand = def == DEF_BROADCAST || def == DEF_SPLIT0 || def == DEF_NOT_IN_PLACE ? L - 1 : L;
                CHECK(find_op(dg, "ar1") >= 0 && find_op(dg, "mm1") >= 0 && find_op(dg, "norm1") >= 0 && find_op(dg, "wgrad1") >= 0,
                      "left alone: layer 1 with %s keeps mm1, ar1, norm1, wgrad1 whole", def_name[def]);
                CHECK(rep.n_changed == L - 1 && find_op(dg, "ar0") < 0 && find_op(dg, "ar2") < 0,
                      "%s: layers 0 and 2 are still decomposed (%d split)", def_name[def], rep.n_changed);
                CHECK_INT(rep.n_candidates, expect_cand, "%s: candidates counted", def_name[def]);
            }
        }
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    /* max_chunks 1: nothing to try */
    {
        cc_graph* g = NULL;
        cc_graph* dg = NULL;
        cc_rewrite_report rep;
        cc_rewrite_desc rd = {0};
        rd.max_chunks = 1;
        build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g);
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "max_chunks 1");
        CHECK(rep.n_changed == 0 && rep.n_evaluations == 0 && rep.n_ops_after == rep.n_ops_before,
              "max_chunks 1: an unchanged copy, nothing judged");
        CHECK(dg && tu_graph_fingerprint(dg) == tu_graph_fingerprint(g), "the copy has the same ops, names and durations");
        cc_graph_destroy(dg);
        /* max_evaluations 1: one candidate graph judged */
        rd = (cc_rewrite_desc){0};
        rd.max_evaluations = 1;
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "max_evaluations 1");
        CHECK(rep.n_evaluations == 1 && rep.n_changed <= 1, "max_evaluations 1: the search stops after one (%d, %d split)",
              rep.n_evaluations, rep.n_changed);
        cc_graph_destroy(dg);
        /* collectives that take no time: the compute stream is the bound, nothing is strictly better */
        {
            int i;
            for (i = 0; i < cc_graph_n_ops(g); i++)
                if (cc_op_demand(g, cc_graph_op(g, i), CC_STREAM_COMM) == 1) cc_op_set_duration(g, cc_graph_op(g, i), 0);
            CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, &rep), CC_OK, "collectives of no duration");
            CHECK(rep.n_changed == 0 && rep.makespan_after_us == rep.makespan_before_us,
                  "when the collectives cost nothing, no split is strictly better: unchanged (%d)", rep.n_changed);
            cc_graph_destroy(dg);
        }
        cc_graph_destroy(g);
    }
    cc_context_destroy(ctx);
}

/* ---- arguments ------------------------------------------------------------------------*/
static void test_bad_args(void) {
    cc_context* ctx;
    cc_graph* g = NULL;
    cc_graph* dg = (cc_graph*)&dg;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    static tp m;
    static tjob jobs[3 * L];
    int dummy_comm;
    cc_context_create(NULL, &ctx);
    init_tp(&m, 0);
    build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g);
    CHECK_INT(cc_graph_decompose(NULL, g, NULL, &dg, NULL), CC_ERR_INVALID_ARG, "no context");
    CHECK(dg == NULL, "*out is NULL after a failure");
    CHECK_RES(ctx, cc_graph_decompose(ctx, NULL, NULL, &dg, NULL), CC_ERR_INVALID_ARG, "no graph");
    CHECK_CONTAINS(cc_last_error(ctx), "cc_graph_decompose", "the message names the function");
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, NULL, NULL), CC_ERR_INVALID_ARG, "no out");
    rd = (cc_rewrite_desc){0};
    rd.max_chunks = -4;
    memset(&rep, 0x55, sizeof rep);
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_ERR_INVALID_ARG, "max_chunks < 0");
    CHECK_CONTAINS(cc_last_error(ctx), "max_chunks", "the message names the field");
    CHECK(rep.n_candidates == 0 && rep.n_ops_after == 0, "the report is zero after a failure");
    rd = (cc_rewrite_desc){0};
    rd.sched.tuning.priority = (cc_priority)77;
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, NULL), CC_ERR_INVALID_ARG, "an unknown priority rule for judging");
    CHECK(dg == NULL, "*out is NULL");
    /* the desc rules of cc_graph_add_op */
    {
        cc_op_desc d = {0};
        cc_collective co;
        float buf[4];
        d.name = "chunks_only"; d.chunk_fn = chunk_fn;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "chunk_fn without fn is refused");
        CHECK_CONTAINS(cc_last_error(ctx), "chunk_fn", "the message says why");
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE; co.n_elems = 4; co.comm = (cc_comm*)&dummy_comm; co.send_buf = co.recv_buf = buf;
        d = (cc_op_desc){0};
        d.name = "coll_with_chunks"; d.stream = CC_STREAM_COMM; d.coll = &co; d.chunk_fn = chunk_fn;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "a collective with a chunk_fn is refused");
    }
    /* a cycle */
    cc_graph_add_dep(g, cc_graph_op(g, 1), cc_graph_op(g, 0));
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, NULL), CC_ERR_CYCLE, "an input with a cycle");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* ---- a failing allocator ------------------------------------------------------------*/
static int decomposed_every_layer(const cc_rewrite_report* rep) { return rep->n_changed == L; }
static void test_failing_allocator(void) {
    tu_alloc ta;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    static tp m;
    static tjob jobs[3 * L];
    int dummy_comm;
    memset(&ta, 0, sizeof ta);
    cd.allocator = tu_allocator(&ta);
    if (cc_context_create(&cd, &ctx) != CC_OK) { CHECK(0, "context"); return; }
    init_tp(&m, 0);
    build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g);
    check_rewrite_oom(ctx, &ta, g, cc_graph_decompose, decomposed_every_layer, "decomposes every layer");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    CHECK_INT(ta.live, 0, "every block is freed at the end");
    CHECK_INT(ta.bad_frees, 0, "no foreign frees");
}

/* ---- determinism; a decomposed graph copied again keeps its chunk records ------------*/
static void chunk_count(void* stream, void* user, int chunk, int n) { (void)stream; (void)chunk; (void)n; (*(int*)user)++; }
static void whole_count(void* stream, void* user) { (void)stream; *(int*)user += 1000; }

static void test_determinism(void) {
    cc_context* ctx;
    static tp m;
    static tjob jobs[3 * L];
    int dummy_comm, run;
    uint64_t fp[2] = { 0, 1 };
    cc_context_create(NULL, &ctx);
    init_tp(&m, 0);
    for (run = 0; run < 2; run++) {
        cc_graph* g = NULL;
        cc_graph* dg = NULL;
        if (build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g) == CC_OK && cc_graph_decompose(ctx, g, NULL, &dg, NULL) == CC_OK)
            fp[run] = tu_graph_fingerprint(dg);
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    CHECK(fp[0] == fp[1], "two runs on the same graph give identical op names and durations");
    /* the search's budget of full solves: the report's figures are the
       scheduler's own on the input and the result, each budget within
       itself, and the same budget gives the same graph */
    {
        static const int budgets[] = { 1, 2, 1000 };
        int b;
        for (b = 0; b < 3; b++) {
            cc_graph* g = NULL;
            cc_graph* dg = NULL;
            cc_graph* dg2 = NULL;
            cc_rewrite_desc rd = {0};
            cc_rewrite_report rep;
            cc_schedule s0, s1;
            memset(&rep, 0, sizeof rep);
            memset(&s0, 0, sizeof s0);
            memset(&s1, 0, sizeof s1);
            rd.full_judgements = budgets[b];
            if (build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g) != CC_OK ||
                cc_graph_decompose(ctx, g, &rd, &dg, &rep) != CC_OK || cc_graph_decompose(ctx, g, &rd, &dg2, NULL) != CC_OK ||
                cc_sched_solve(ctx, g, NULL, &s0) != CC_OK || cc_sched_solve(ctx, dg, NULL, &s1) != CC_OK) {
                CHECK(0, "full_judgements %d: %s", budgets[b], cc_last_error(ctx));
            } else {
                CHECK(rep.n_full_judgements <= budgets[b] + 1, "full_judgements %d: %d full solves", budgets[b],
                      rep.n_full_judgements);
                CHECK(fabs(rep.makespan_before_us - s0.makespan_us) < 1e-6 && fabs(rep.makespan_after_us - s1.makespan_us) < 1e-6,
                      "full_judgements %d: the report's makespans are the scheduler's on the input and the result (%.3f %.3f, "
                      "%.3f %.3f us)", budgets[b], rep.makespan_before_us, s0.makespan_us, rep.makespan_after_us, s1.makespan_us);
                CHECK(rep.n_changed > 0 && s1.makespan_us < s0.makespan_us,
                      "full_judgements %d: %d split, the result solves shorter than the input (%.3f -> %.3f us)", budgets[b],
                      rep.n_changed, s0.makespan_us, s1.makespan_us);
                CHECK(tu_graph_fingerprint(dg) == tu_graph_fingerprint(dg2), "full_judgements %d: the same graph twice",
                      budgets[b]);
            }
            cc_schedule_release(ctx, &s0);
            cc_schedule_release(ctx, &s1);
            cc_graph_destroy(dg);
            cc_graph_destroy(dg2);
            cc_graph_destroy(g);
        }
    }
    /* decompose a graph, fuse the result (a copy of it), destroy the first:
       the copy's chunk ops still run the user's chunk function */
    {
        cc_graph* g = NULL;
        cc_graph* dg = NULL;
        cc_graph* fg = NULL;
        cc_op_desc d = {0};
        cc_buffer b;
        cc_region r = {0};
        int calls = 0, i, n_chunk_ops = 0;
        cc_graph_create(ctx, NULL, &g);
        cc_graph_add_buffer(g, "b", 64, &b);
        r = rg(b, 64, 4);
        d.name = "solo"; d.duration_us = 10; d.fn = whole_count; d.chunk_fn = chunk_count; d.user_data = &calls;
        d.writes = &r; d.n_writes = 1;
        cc_graph_add_op(g, &d, NULL);
        {
            cc_collective co;
            static float buf[16];
            memset(&co, 0, sizeof co);
            co.kind = CC_COLL_ALL_REDUCE; co.n_elems = 16; co.comm = (cc_comm*)&dummy_comm; co.send_buf = co.recv_buf = buf;
            d = (cc_op_desc){0};
            d.name = "sum"; d.duration_us = 100; d.stream = CC_STREAM_COMM; d.coll = &co;
            d.reads = &r; d.n_reads = 1; d.writes = &r; d.n_writes = 1;
            cc_graph_add_op(g, &d, NULL);
        }
        d = (cc_op_desc){0};
        d.name = "after"; d.duration_us = 10; d.fn = whole_count; d.chunk_fn = chunk_count; d.user_data = &calls;
        d.reads = &r; d.n_reads = 1;
        cc_graph_add_op(g, &d, NULL);
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, NULL), CC_OK, "a three-op chain decomposes");
        if (dg) CHECK_RES(ctx, cc_graph_fuse(ctx, dg, NULL, &fg, NULL), CC_OK, "and the result can be rewritten again");
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
        if (fg) {
            for (i = 0; i < cc_graph_n_ops(fg); i++) {
                const char* nm = cc_op_name(fg, cc_graph_op(fg, i));
                if (strchr(nm, '#') && cc_op_demand(fg, cc_graph_op(fg, i), 0) == 1) n_chunk_ops++;
            }
            CHECK(n_chunk_ops >= 4, "the copy has the chunk ops (%d)", n_chunk_ops);
            CHECK(cc_op_user_data(fg, cc_graph_op(fg, 0)) == (void*)&calls, "and their user_data");
            cc_graph_destroy(fg);
        }
    }
    cc_context_destroy(ctx);
}

/* Chunk records survive copying: a decomposed graph runs its chunks on a
   rank after the graph it came from is gone. */
static cc_result copy_rank(cc_rank* rank, void* user) {
    int* calls = (int*)user;
    cc_context* ctx = cc_rank_context(rank);
    cc_graph *g = NULL, *dg = NULL, *fg = NULL;
    cc_op_desc d = {0};
    cc_buffer b;
    cc_region r = {0};
    static float buf[2][16];
    int me = cc_rank_index(rank);
    cc_collective co;
    cc_result res;
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "b", 64, &b);
    r = rg(b, 64, 4);
    d.name = "solo"; d.duration_us = 10; d.fn = whole_count; d.chunk_fn = chunk_count; d.user_data = &calls[me];
    d.writes = &r; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.n_elems = 16; co.comm = cc_rank_world_comm(rank); co.send_buf = co.recv_buf = buf[me];
    d = (cc_op_desc){0};
    d.name = "sum"; d.duration_us = 100; d.stream = CC_STREAM_COMM; d.coll = &co;
    d.reads = &r; d.n_reads = 1; d.writes = &r; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    res = cc_graph_decompose(ctx, g, NULL, &dg, NULL);
    if (res == CC_OK) res = cc_graph_fuse(ctx, dg, NULL, &fg, NULL);
    cc_graph_destroy(dg);
    cc_graph_destroy(g);
    if (res == CC_OK) res = tu_run_step(rank, fg, NULL);
    cc_graph_destroy(fg);
    return res;
}

static void test_records_survive_copies(void) {
    int calls[2] = { 0, 0 };
    cc_result rc;
    char err[512];
    tu_run_world(2, copy_rank, calls, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "decompose, fuse the result, destroy the first two graphs, run the last (%s)", err);
    CHECK(calls[0] >= 2 && calls[0] < 1000 && calls[0] == calls[1], "the chunk function ran through the copy's records (%d, %d calls)", calls[0],
          calls[1]);
}

/* The executor's cost of a cross-stream wait changes the decision: the
   layers of build_tp (matmul 100 us, all-reduce 200 us, norm and weight
   gradient 40 us) gain from chunks when waits are free, and every chunk
   adds waits; at 150 us per blocking wait the chunks lose. */
/* The executor's costs change the decision: the layers of build_tp
   (matmul 100 us, all-reduce 200 us, norm and weight gradient 40 us) gain
   from chunks when an op costs nothing to launch; every chunk is one more
   op on the compute stream, and at 100 us per launch the chunks lose. (A
   blocking wait alone does not flip it: a chunked layer blocks about as
   often on its critical path as a whole one, the model's and the
   scheduler's count agree on that.) */
static void test_exec_costs_decide(void) {
    cc_context* ctx;
    static tp m;
    static tjob jobs[3 * L];
    int dummy_comm;
    cc_graph *g = NULL, *dg = NULL;
    cc_rewrite_report rep;
    cc_exec_costs c;
    cc_context_create(NULL, &ctx);
    init_tp(&m, 0);
    CHECK_RES(ctx, build_tp(ctx, &m, jobs, (cc_comm*)&dummy_comm, DEF_NONE, &g), CC_OK, "the step");
    if (g) {
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, &rep), CC_OK, "decompose with free launches");
        CHECK(rep.n_changed == L, "free launches and waits: every layer decomposed (%d of %d; judged %.0f -> %.0f us)", rep.n_changed, L,
              rep.makespan_before_us, rep.makespan_after_us);
        cc_graph_destroy(dg);
        dg = NULL;
        memset(&c, 0, sizeof c);
        c.launch_us = 100;
        c.wait_us = 20;
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &c), CC_OK, "100 us per launch, 20 per blocking wait");
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, &rep), CC_OK, "decompose with costly launches");
        CHECK(rep.n_changed == 0, "100 us per launch: nothing decomposed (%d; judged %.0f -> %.0f us)", rep.n_changed,
              rep.makespan_before_us, rep.makespan_after_us);
        CHECK(dg && cc_graph_exec_costs(dg).launch_us == 100 && cc_graph_exec_costs(dg).wait_us == 20,
              "the rewritten graph keeps the costs");
        cc_graph_destroy(dg);
        dg = NULL;
        /* a collective's fixed cost: chunks of an all-reduce whose 200 us are
           mostly start-up cost nearly as much each, and do not pay */
        memset(&c, 0, sizeof c);
        CHECK_RES(ctx, cc_graph_set_exec_costs(g, &c), CC_OK, "costs back to zero");
        CHECK_RES(ctx, cc_graph_set_coll_startup(g, (cc_comm*)&dummy_comm, 190), CC_OK, "a start-up of 190 us");
        CHECK(cc_graph_coll_startup(g, (cc_comm*)&dummy_comm) == 190 && cc_graph_coll_startup(g, (cc_comm*)&m) == -1,
              "the start-up is kept per communicator");
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, &rep), CC_OK, "decompose with a costly start-up");
        CHECK(rep.n_changed == 0, "190 of 200 us start-up: nothing decomposed (%d; judged %.0f -> %.0f us)", rep.n_changed,
              rep.makespan_before_us, rep.makespan_after_us);
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_exec_costs_decide);
    TH_RUN(test_world_decompose);
    TH_RUN(test_left_alone);
    TH_RUN(test_link_decides);
    TH_RUN(test_bad_args);
    TH_RUN(test_failing_allocator);
    TH_RUN(test_determinism);
    TH_RUN(test_records_survive_copies);
    return th_done();
}
