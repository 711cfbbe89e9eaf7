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
#include <stddef.h>
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
    DEF_NO_SPLIT,              /* layer 1: neither mm, norm nor wgrad has a chunk_fn */
    N_DEF
};
static const char* def_name[N_DEF] = { "none", "a producer without chunk_fn", "a consumer without chunk_fn",
                                       "a consumer region whose rows do not divide", "an all-reduce region of one row",
                                       "a broadcast", "an all-reduce region with split_rows 0", "an all-reduce out of place",
                                       "no neighbour with a chunk_fn" };

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
        d.name = name; d.duration_us = DUR_MM; d.fn = whole_fn; d.chunk_fn = bad == DEF_NO_CHUNK_PRODUCER || bad == DEF_NO_SPLIT ? NULL : chunk_fn;
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
        d.name = name; d.duration_us = DUR_NORM; d.fn = whole_fn; d.chunk_fn = bad == DEF_NO_SPLIT ? NULL : chunk_fn;
        d.user_data = &jb[1];
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
        d.name = name; d.duration_us = DUR_WGRAD; d.fn = whole_fn; d.chunk_fn = bad == DEF_NO_CHUNK_CONSUMER || bad == DEF_NO_SPLIT ? NULL : chunk_fn;
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
    int exact_only_whole;       /* ... with every wgrad one op (its partial sum is not exact) */
    int exact_only_identical;   /* ... and x, P and G all bit-identical to program order */
} vres;
typedef struct world_arg { vres v[N_VARIANTS][2]; } world_arg;

static tp ranks_tp[2][3];   /* [rank][0: program order, 1: rewritten, 2: rewritten with exact_only] */

static cc_result dec_rank(cc_rank* rank, void* user) {
    world_arg* A = (world_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), v;
    tp* m0 = &ranks_tp[me][0];
    tp* m1 = &ranks_tp[me][1];
    static tjob jobs0[2][3 * L], jobs1[2][3 * L], jobs2[2][3 * L];
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
        if (r == CC_OK) r = tu_run_step_with(rank, g0, NULL, v == V_ARENA ? point_at_arena : NULL, m0);
        if (r == CC_OK && v == V_RULES) {   /* only exact splits: wgrad (a partial sum) stays whole, the rest splits */
            tp* m2 = &ranks_tp[me][2];
            cc_rewrite_desc ex = rd;
            cc_rewrite_report erep;
            cc_graph *g2 = NULL, *eg = NULL;
            cc_schedule es;
            memset(&es, 0, sizeof es);
            init_tp(m2, me);
            ex.exact_only = 1;
            r = build_tp_rules(ctx, m2, jobs2[me], cc_rank_world_comm(rank), DEF_NONE, 0, 1, &g2);
            if (r == CC_OK) r = cc_graph_decompose(ctx, g2, &ex, &eg, &erep);
            R->exact_only_changed = r == CC_OK ? erep.n_changed : -1;
            if (r == CC_OK) r = cc_sched_solve(ctx, eg, NULL, &es);
            if (r == CC_OK) r = tu_run_step(rank, eg, es.order);
            if (r == CC_OK) {
                R->exact_only_whole = 1;
                for (l = 0; l < L; l++) {
                    char nm[24];
                    snprintf(nm, sizeof nm, "wgrad%d", l);
                    R->exact_only_whole &= find_op(eg, nm) >= 0;
                    snprintf(nm, sizeof nm, "norm%d", l);
                    R->exact_only_whole &= find_op(eg, nm) < 0;
                }
                R->exact_only_identical = !memcmp(m0->x, m2->x, sizeof m0->x) && !memcmp(m0->p, m2->p, sizeof m0->p) &&
                                          !memcmp(m0->g, m2->g, sizeof m0->g);
            }
            cc_schedule_release(ctx, &es);
            cc_graph_destroy(eg);
            cc_graph_destroy(g2);
        }
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
            CHECK_INT(R[0].exact_only_changed, L, "%s: with exact_only, every all-reduce is still split", vn);
            CHECK(R[0].exact_only_whole && R[1].exact_only_whole,
                  "%s: with exact_only, each wgrad (its split is a partial sum) stays one op, each norm is split", vn);
            CHECK(R[0].exact_only_identical && R[1].exact_only_identical,
                  "%s: with exact_only, x, P and G (wgrad whole) are all bit-identical to program order", vn);
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

/* ---- a context grows through producers and consumers ---------------------------
   One chain per rank, every op with a split rule (T rows of D):
       pre      X1 = f(X0)            row by row
       mm       P = X1 W              matmul (rows of X1 -> rows of P)
       ar       all-reduce(sum) of P in place
       post     Y1 = g(P)             row by row
       post2    Y2 = h(Y1)            row by row (in one variant its rule
                                      gives chunk i the mirrored rows: chunk 0
                                      reads what post's last chunk writes)
   pre and post2 are two ops from the all-reduce: by default (three ops) the
   context takes them, so that all the compute pipelines with the
   all-reduce's chunks; with max_context_depth 1 it is mm, ar, post as it
   used to be. Run on two ranks in program order and decomposed, every
   buffer bit-identical. */
typedef struct chain {
    float x0[T * D], x1[T * D], w[D * D], p[T * D], y1[T * D], y2[T * D];
    int n_parts[5];              /* part_fn calls per op */
} chain;
enum { C_PRE = 0, C_MM, C_POST, C_POST2 };
typedef struct cjob { chain* m; int kind, mirrored; } cjob;

static void chain_rows(cjob* jb, int r0, int r1) {
    chain* m = jb->m;
    int t, j, k;
    for (t = r0; t < r1; t++)
        for (j = 0; j < D; j++) {
            float s = 0;
            switch (jb->kind) {
                case C_PRE: m->x1[t * D + j] = m->x0[t * D + j] * 0.5f + m->x0[t * D + (j + 1) % D]; break;
                case C_MM:
                    for (k = 0; k < D; k++) s += m->x1[t * D + k] * m->w[k * D + j];
                    m->p[t * D + j] = s;
                    break;
                case C_POST: m->y1[t * D + j] = m->p[t * D + j] * m->p[t * D + j] - m->p[t * D + (j + 3) % D]; break;
                default: m->y2[t * D + j] = sqrtf(fabsf(m->y1[t * D + j])) + m->y1[t * D + (j + 1) % D] * 0.25f; break;
            }
        }
}
static void chain_whole(void* stream, void* user) { (void)stream; chain_rows((cjob*)user, 0, T); }
static void chain_part(void* stream, void* user, const cc_split_chunk* c) {
    cjob* jb = (cjob*)user;
    (void)stream;
    jb->m->n_parts[jb->kind]++;
    if (jb->mirrored) chain_rows(jb, T - (int)c->end, T - (int)c->begin);
    else chain_rows(jb, (int)c->begin, (int)c->end);
}
/* post2's mirrored rule: chunk i reads and writes rows [T - end, T - begin) */
static int mirrored_rule(void* ud, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    uint64_t row = rd[0].n_bytes / T;
    (void)ud; (void)nr; (void)nw; (void)partial;
    rd[0].offset_bytes += (T - c->end) * row;
    rd[0].n_bytes = (c->end - c->begin) * row;
    wr[0].offset_bytes += (T - c->end) * row;
    wr[0].n_bytes = (c->end - c->begin) * row;
    return 0;
}

static int build_chain_refusing;   /* test_bad_rules: post2's rule refuses every chunk */
static int build_chain_whole_post; /* test_one_sided: post has no split rule (runs whole only) */
static int refusing_rule(void* ud, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial);

static void init_chain(chain* m, int rank) {
    tu_rng rng;
    int i;
    memset(m, 0, sizeof *m);
    rng.s = 5;
    for (i = 0; i < T * D; i++) m->x0[i] = (float)tu_unit(&rng) - 0.5f;
    rng.s = 300 + (uint64_t)rank;
    for (i = 0; i < D * D; i++) m->w[i] = ((float)tu_unit(&rng) - 0.5f) * 0.5f;
}

static cc_result build_chain(cc_context* ctx, chain* m, cjob* jobs, cc_comm* comm, int mirrored, cc_graph** out) {
    static const char* const nm[4] = { "pre", "mm", "post", "post2" };
    static const double dur[4] = { 100, 100, 100, 100 };
    cc_graph* g = NULL;
    cc_buffer bx0, bx1, bw, bp, by1, by2;
    cc_result r;
    int o;
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    r = cc_graph_add_buffer(g, "x0", XB, &bx0);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "x1", XB, &bx1);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w", WB, &bw);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "p", XB, &bp);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "y1", XB, &by1);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "y2", XB, &by2);
    for (o = 0; o < 4 && r == CC_OK; o++) {
        cc_op_desc d = {0};
        cc_region rd[2], wr[1];
        cc_split sp;
        memset(&sp, 0, sizeof sp);
        jobs[o].m = m;
        jobs[o].kind = o;
        jobs[o].mirrored = o == C_POST2 && mirrored;
        sp.kind = CC_SPLIT_ROWWISE;
        sp.extent[CC_AXIS_ROWS] = T;
        d.name = nm[o]; d.duration_us = dur[o]; d.fn = chain_whole; d.part_fn = chain_part; d.user_data = &jobs[o];
        d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = 1; d.split = &sp;
        switch (o) {
            case C_PRE: rd[0] = rg(bx0, XB, T); wr[0] = rg(bx1, XB, T); break;
            case C_MM:
                rd[0] = rg(bx1, XB, T); rd[1] = rg(bw, WB, 0); wr[0] = rg(bp, XB, T); d.n_reads = 2;
                sp.kind = CC_SPLIT_MATMUL; sp.extent[CC_AXIS_COLS] = D; sp.extent[CC_AXIS_REDUCE] = D;
                break;
            case C_POST: rd[0] = rg(bp, XB, T); wr[0] = rg(by1, XB, T); break;
            default:
                rd[0] = rg(by1, XB, T); wr[0] = rg(by2, XB, T);
                if (mirrored) {
                    sp.kind = CC_SPLIT_USER;
                    sp.fn = build_chain_refusing ? refusing_rule : mirrored_rule;
                    sp.name = build_chain_refusing ? "refusing" : "mirrored";
                }
                break;
        }
        if (o == C_POST && build_chain_whole_post) { d.split = NULL; d.part_fn = NULL; }
        r = cc_graph_add_op(g, &d, NULL);
        if (r == CC_OK && o == C_MM) {
            cc_collective co;
            cc_region ar = rg(bp, XB, T);
            memset(&co, 0, sizeof co);
            co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.n_elems = T * D;
            co.comm = comm; co.send_buf = co.recv_buf = m->p;
            d = (cc_op_desc){0};
            d.name = "ar"; d.duration_us = 300; d.stream = CC_STREAM_COMM; d.coll = &co;
            d.reads = &ar; d.n_reads = 1; d.writes = &ar; d.n_writes = 1;
            r = cc_graph_add_op(g, &d, NULL);
        }
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

typedef struct grow_res {
    int ok;
    char err[400];
    char ops[3][128];            /* the context's ops: default depth, depth 1, default with post2 mirrored */
    int k[3], n_ops[3], axis[3];
    double mk[3];                /* judged makespan after */
    double mk0;
    int identical;               /* every buffer bit-identical to program order */
    int parts_ok;                /* each op ran as k parts */
    int depth_bad;
} grow_res;
static chain chains[2][2];

static cc_result grow_rank(cc_rank* rank, void* user) {
    grow_res* R = &((grow_res*)user)[cc_rank_index(rank)];
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), v;
    static cjob jobs[2][4][4];   /* [rank][program order, then each variant's own] */
    cc_graph *g0 = NULL, *g1 = NULL, *dg = NULL;
    cc_schedule s;
    cc_result r = CC_OK;
    memset(&s, 0, sizeof s);
    init_chain(&chains[me][0], me);
    init_chain(&chains[me][1], me);
    for (v = 0; v < 3 && r == CC_OK; v++) {
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_graph* g = NULL;
        cc_graph* out = NULL;
        rd.max_context_depth = v == 1 ? 1 : 0;
        r = build_chain(ctx, &chains[me][1], jobs[me][1 + v], cc_rank_world_comm(rank), v == 2, &g);
        if (r == CC_OK) r = cc_graph_decompose(ctx, g, &rd, &out, &rep);
        if (r == CC_OK && rep.n_contexts == 1) {
            snprintf(R->ops[v], sizeof R->ops[v], "%s", rep.contexts[0].ops);
            R->k[v] = rep.contexts[0].n_chunks;
            R->n_ops[v] = rep.contexts[0].n_ops;
            R->axis[v] = rep.contexts[0].axis;
            R->mk[v] = rep.makespan_after_us;
            R->mk0 = rep.makespan_before_us;
        }
        if (v == 0) { g1 = g; dg = out; }
        else { cc_graph_destroy(out); cc_graph_destroy(g); }
    }
    {   /* a negative depth is refused, naming the field */
        cc_rewrite_desc rd = {0};
        cc_graph* out = (cc_graph*)&rd;
        rd.max_context_depth = -1;
        R->depth_bad = r == CC_OK && cc_graph_decompose(ctx, g1, &rd, &out, NULL) == CC_ERR_INVALID_ARG && out == NULL &&
                       strstr(cc_last_error(ctx), "max_context_depth") != NULL;
    }
    memset(chains[me][1].n_parts, 0, sizeof chains[me][1].n_parts);
    if (r == CC_OK) r = build_chain(ctx, &chains[me][0], jobs[me][0], cc_rank_world_comm(rank), 0, &g0);
    if (r == CC_OK) r = tu_run_step(rank, g0, NULL);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg, NULL, &s);
    if (r == CC_OK) r = tu_run_step(rank, dg, s.order);
    if (r == CC_OK) {
        const chain *a = &chains[me][0], *b = &chains[me][1];
        int o;
        R->identical = !memcmp(a->x1, b->x1, sizeof a->x1) && !memcmp(a->p, b->p, sizeof a->p) &&
                       !memcmp(a->y1, b->y1, sizeof a->y1) && !memcmp(a->y2, b->y2, sizeof a->y2);
        R->parts_ok = R->k[0] >= 2;
        for (o = 0; o < 4; o++) R->parts_ok &= b->n_parts[o] == R->k[0] && a->n_parts[o] == 0;
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(dg);
    cc_graph_destroy(g1);
    cc_graph_destroy(g0);
    return CC_OK;
}

static void test_context_grows(void) {
    static grow_res R[2];
    cc_result rc;
    char err[512];
    int me;
    memset(R, 0, sizeof R);
    tu_run_world(2, grow_rank, R, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "2 ranks: the world ran (%s)", err);
    for (me = 0; me < 2; me++) {
        grow_res* X = &R[me];
        CHECK(X->ok, "rank %d: decomposition and both steps ran (%s)", me, X->err);
        if (!X->ok) continue;
        CHECK(!strcmp(X->ops[0], "pre, mm, ar, post, post2") && X->n_ops[0] == 5 && X->axis[0] == CC_AXIS_ROWS,
              "rank %d: by default the context grows two ops out: '%s' (%d ops) along %s", me, X->ops[0], X->n_ops[0],
              cc_axis_name((cc_axis)X->axis[0]));
        CHECK(!strcmp(X->ops[1], "mm, ar, post") && X->n_ops[1] == 3,
              "rank %d: max_context_depth 1 keeps the immediate context: '%s'", me, X->ops[1]);
        CHECK(X->mk[0] < X->mk[1] && X->mk[1] < X->mk0,
              "rank %d: the grown context is predicted faster than the immediate one (%.1f < %.1f < %.1f us)", me, X->mk[0],
              X->mk[1], X->mk0);
        CHECK(!strcmp(X->ops[2], "pre, mm, ar, post"),
              "rank %d: post2 whose chunk 0 reads post's last chunk does not line up and stays whole: '%s'", me, X->ops[2]);
        CHECK(X->identical, "rank %d: X1, P, Y1 and Y2 of the grown context (in %d chunks) are bit-identical to program order",
              me, X->k[0]);
        CHECK(X->parts_ok, "rank %d: each of the four compute ops ran as %d parts", me, X->k[0]);
        CHECK(X->depth_bad, "rank %d: max_context_depth -1 is refused, naming the field, *out NULL", me);
    }
}

/* ---- one-sided contexts: a neighbour that does not split stays whole ----------
   The chain above with post given no split rule: the all-reduce is split
   with what splits next to it, post runs whole after every chunk (the
   dependencies derived from the regions). Every op 100 us, the all-reduce
   300 us, its chunks their share (the fit of one size), no launch cost,
   max_chunks 4. Hand computation: with max_context_depth 1 the context is
   mm and ar: pre, then mm's 4 pieces of 25 us feeding ar's 4 of 75 us, then
   post and post2: 100 + 25 + 300 + 100 + 100 = 625 us (700 whole). By
   default it grows to pre: pre and mm pieces share the compute stream (50
   us a chunk), ar's chunks follow back to back: 50 + 300 + 200 = 550 us.
   Run on two ranks, every buffer bit-identical to program order, post one
   op never called by parts. */
typedef struct side_res {
    int ok;
    char err[400];
    char ops[2][128];
    int k[2], post_whole[2], post_parts, identical, parts_ok;
    double mk0[2], mk[2];
} side_res;
static chain side_chains[2][2];

static cc_result side_rank(cc_rank* rank, void* user) {
    side_res* R = &((side_res*)user)[cc_rank_index(rank)];
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), v;
    static cjob jobs[2][3][4];
    cc_graph *g0 = NULL, *keep = NULL, *dg = NULL;
    cc_schedule s;
    cc_result r = CC_OK;
    memset(&s, 0, sizeof s);
    init_chain(&side_chains[me][0], me);
    init_chain(&side_chains[me][1], me);
    for (v = 0; v < 2 && r == CC_OK; v++) {   /* depth 1, then the default (the one run) */
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_graph *g = NULL, *out = NULL;
        rd.max_context_depth = v == 0 ? 1 : 0;
        r = build_chain(ctx, &side_chains[me][1], jobs[me][1 + v], cc_rank_world_comm(rank), 0, &g);
        if (r == CC_OK) r = cc_graph_decompose(ctx, g, &rd, &out, &rep);
        if (r == CC_OK) {
            R->mk0[v] = rep.makespan_before_us;
            R->mk[v] = rep.makespan_after_us;
            R->post_whole[v] = find_op(out, "post") >= 0 && find_op(out, "post2") >= 0;
            if (rep.n_contexts == 1) {
                snprintf(R->ops[v], sizeof R->ops[v], "%s", rep.contexts[0].ops);
                R->k[v] = rep.contexts[0].n_chunks;
            }
        }
        if (v == 1) { keep = g; dg = out; }
        else { cc_graph_destroy(out); cc_graph_destroy(g); }
    }
    if (r == CC_OK) r = build_chain(ctx, &side_chains[me][0], jobs[me][0], cc_rank_world_comm(rank), 0, &g0);
    if (r == CC_OK) r = tu_run_step(rank, g0, NULL);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg, NULL, &s);
    if (r == CC_OK) r = tu_run_step(rank, dg, s.order);
    if (r == CC_OK) {
        const chain *a = &side_chains[me][0], *b = &side_chains[me][1];
        R->identical = !memcmp(a->x1, b->x1, sizeof a->x1) && !memcmp(a->p, b->p, sizeof a->p) &&
                       !memcmp(a->y1, b->y1, sizeof a->y1) && !memcmp(a->y2, b->y2, sizeof a->y2);
        R->parts_ok = b->n_parts[C_PRE] == R->k[1] && b->n_parts[C_MM] == R->k[1] && b->n_parts[C_POST] == 0 &&
                      b->n_parts[C_POST2] == 0 && a->n_parts[C_PRE] + a->n_parts[C_MM] == 0;
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(dg);
    cc_graph_destroy(keep);
    cc_graph_destroy(g0);
    return CC_OK;
}

static void test_one_sided(void) {
    static side_res R[2];
    cc_result rc;
    char err[512];
    int me;
    memset(R, 0, sizeof R);
    build_chain_whole_post = 1;   /* set around the world: every rank's builds read it */
    tu_run_world(2, side_rank, R, &rc, err, sizeof err);
    build_chain_whole_post = 0;
    CHECK_RES(NULL, rc, CC_OK, "2 ranks: the world ran (%s)", err);
    for (me = 0; me < 2; me++) {
        side_res* X = &R[me];
        CHECK(X->ok, "rank %d: decomposition and both steps ran (%s)", me, X->err);
        if (!X->ok) continue;
        CHECK(!strcmp(X->ops[0], "mm, ar") && X->k[0] == 4 && X->post_whole[0],
              "rank %d: depth 1, a consumer without a rule: the context '%s' in %d, post one op", me, X->ops[0], X->k[0]);
        CHECK(X->mk0[0] == 700 && X->mk[0] == 625, "rank %d: depth 1: predicted %.1f -> %.1f us (by hand 700 -> 625)", me,
              X->mk0[0], X->mk[0]);
        CHECK(!strcmp(X->ops[1], "pre, mm, ar") && X->k[1] == 4 && X->post_whole[1],
              "rank %d: by default the context grows upstream only: '%s' in %d, post and post2 whole", me, X->ops[1], X->k[1]);
        CHECK(X->mk[1] == 550, "rank %d: grown: predicted %.1f us (by hand 550)", me, X->mk[1]);
        CHECK(X->identical, "rank %d: X1, P, Y1 and Y2 bit-identical to program order", me);
        CHECK(X->parts_ok, "rank %d: pre and mm ran as %d parts each, post and post2 whole", me, X->k[1]);
    }
}

/* The most exposed collective first: two chains, "mm1 -> ar1 (50 us) ->
   post1" first in program order, then "mm2 -> ar2 (400 us) -> post2"; in
   the judged schedule ar1 hides under mm2 and ar2 is mostly exposed. With
   one evaluation allowed, the one tried is ar2's. */
static void test_exposed_first(void) {
    cc_context* ctx;
    cc_graph *g = NULL, *dg = NULL;
    cc_buffer b[4];
    cc_rewrite_desc rd = {0};
    cc_rewrite_report rep;
    static float bufs[2][T * D];
    static cjob jobs[4];
    static chain m;
    int dummy_comm, c, i;
    cc_result r;
    cc_context_create(NULL, &ctx);
    r = cc_graph_create(ctx, NULL, &g);
    for (i = 0; i < 4 && r == CC_OK; i++) r = cc_graph_add_buffer(g, NULL, XB, &b[i]);
    for (c = 0; c < 2 && r == CC_OK; c++) {
        static const char* const nm[2][3] = { { "mm1", "ar1", "post1" }, { "mm2", "ar2", "post2" } };
        cc_op_desc d = {0};
        cc_region in = rg(b[2 * c], XB, T), mid = rg(b[2 * c + 1], XB, T);
        cc_split sp;
        cc_collective co;
        memset(&sp, 0, sizeof sp);
        sp.kind = CC_SPLIT_ROWWISE; sp.extent[CC_AXIS_ROWS] = T;
        jobs[2 * c].m = jobs[2 * c + 1].m = &m;
        d.name = nm[c][0]; d.duration_us = 100; d.fn = chain_whole; d.part_fn = chain_part; d.user_data = &jobs[2 * c]; d.split = &sp;
        d.reads = &in; d.n_reads = 1; d.writes = &mid; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.n_elems = T * D; co.comm = (cc_comm*)&dummy_comm;
        co.send_buf = co.recv_buf = bufs[c];
        d = (cc_op_desc){0};
        d.name = nm[c][1]; d.duration_us = c ? 400 : 50; d.stream = CC_STREAM_COMM; d.coll = &co;
        d.reads = &mid; d.n_reads = 1; d.writes = &mid; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        d = (cc_op_desc){0};
        d.name = nm[c][2]; d.duration_us = 100; d.fn = chain_whole; d.part_fn = chain_part; d.user_data = &jobs[2 * c + 1];
        d.split = &sp; d.reads = &mid; d.n_reads = 1; d.writes = &in; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    }
    CHECK_RES(ctx, r, CC_OK, "two chains built");
    rd.max_evaluations = 1;
    if (r == CC_OK) {
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose with one evaluation");
        CHECK(rep.n_evaluations == 1 && rep.n_contexts == 1 && !strcmp(rep.contexts[0].collective, "ar2"),
              "the one candidate judged is the most exposed all-reduce, ar2, not ar1 first in program order (%d judged, %s)",
              rep.n_evaluations, rep.n_contexts ? rep.contexts[0].collective : "none split");
        CHECK_INT(rep.n_candidates, 2, "both all-reduces are counted as considered");
    }
    cc_graph_destroy(dg);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* ---- reduce-scatter and all-gather contexts ----------------------------------------
   Sequence parallelism's two patterns on S ranks (2 and 4), one chain each,
   M rows of D in a full matrix, a block of Mb = M / S rows per rank:
       pre      X = f(X0)             row by row (M rows)
       mm       P = X W               matmul (rows), W differs per rank
       rs       reduce-scatter(sum) of P -> this rank's block Sh (Mb rows)
       post     Y = g(Sh)             row by row (Mb rows)
       pre2     B = f(A)              row by row (Mb rows)
       ag       all-gather of B -> G (M rows, rank order)
       mm2      Z = G W2              matmul (rows)
       post2    Z2 = h(Z)             row by row (M rows)
   Decomposed in N chunks, chunk i of rs packs sub-block i of every rank's
   block of P and chunk i of ag unpacks sub-block i of every block of G, so
   mm, pre, mm2 and post2 run in S * N parts, post and pre2 in N. Every
   buffer must be bit-identical to program order (rows split whole; the
   ranks' sums in the same order). Again with one side of each collective
   whole (no split rule): post and pre2 (the shard sides), then mm and mm2
   (the full sides: rs's pack copies read mm's whole output, mm2 reads G
   after every unpack); those ops run whole and take 1 us, the collectives
   what the link says, and pre2 reads Y instead of A (the two chains in
   series, so that each context pays on its own). */
#define SM 32
#define SMAXR 4
typedef struct sp_data {
    float x0[SM * D], x[SM * D], w[D * D], p[SM * D], sh[SM * D], y[SM * D];
    float a[SM * D], b[SM * D], g[SM * D], w2[D * D], z[SM * D], z2[SM * D];
    int parts[6];
    float *pp, *pg;              /* where the work finds P and G: p and g, or their arena addresses */
    int bp_index, bg_index;      /* their buffers */
} sp_data;
static int sp_arena;             /* P and G transient, the collectives' buffers there NULL */
static int sp_one_sided;         /* 1: post and pre2 have no split rule; 2: mm and mm2 have none */
enum { S_PRE = 0, S_MM, S_POST, S_PRE2, S_MM2, S_POST2 };
typedef struct sjob { sp_data* m; int kind, S; } sjob;
/* 1 if op o is in its collective's context with sp_one_sided as it is */
static int sp_in_context(int o) {
    if (sp_one_sided == 1) return o != S_POST && o != S_PRE2;
    if (sp_one_sided == 2) return o == S_POST || o == S_PRE2;
    return 1;
}

static void sp_rows(sjob* jb, int r0, int r1) {
    sp_data* m = jb->m;
    int t, j, k;
    for (t = r0; t < r1; t++)
        for (j = 0; j < D; j++) {
            float s = 0;
            switch (jb->kind) {
                case S_PRE: m->x[t * D + j] = m->x0[t * D + j] * 0.5f + m->x0[t * D + (j + 1) % D]; break;
                case S_MM:
                    for (k = 0; k < D; k++) s += m->x[t * D + k] * m->w[k * D + j];
                    m->pp[t * D + j] = s;
                    break;
                case S_POST: m->y[t * D + j] = m->sh[t * D + j] * m->sh[t * D + j] - m->sh[t * D + (j + 3) % D]; break;
                case S_PRE2: {
                    const float* a = sp_one_sided ? m->y : m->a;   /* one side whole: the chains in series */
                    m->b[t * D + j] = a[t * D + j] * 0.75f - a[t * D + (j + 2) % D];
                    break;
                }
                case S_MM2:
                    for (k = 0; k < D; k++) s += m->pg[t * D + k] * m->w2[k * D + j];
                    m->z[t * D + j] = s;
                    break;
                default: m->z2[t * D + j] = m->z[t * D + j] * 0.5f + m->z[t * D + (j + 5) % D] * m->z[t * D + j]; break;
            }
        }
}
static int sp_rows_of(int kind, int S) { return kind == S_POST || kind == S_PRE2 ? SM / S : SM; }
static void sp_whole(void* stream, void* user) { sjob* jb = (sjob*)user; (void)stream; sp_rows(jb, 0, sp_rows_of(jb->kind, jb->S)); }
static void sp_part(void* stream, void* user, const cc_split_chunk* c) {
    sjob* jb = (sjob*)user;
    (void)stream;
    jb->m->parts[jb->kind]++;
    sp_rows(jb, (int)c->begin, (int)c->end);
}

static void init_sp(sp_data* m, int rank) {
    tu_rng rng;
    int i;
    memset(m, 0, sizeof *m);
    m->pp = m->p;
    m->pg = m->g;
    rng.s = 900 + (uint64_t)rank;   /* every input differs per rank */
    for (i = 0; i < SM * D; i++) { m->x0[i] = (float)tu_unit(&rng) - 0.5f; m->a[i] = (float)tu_unit(&rng) - 0.5f; }
    for (i = 0; i < D * D; i++) { m->w[i] = ((float)tu_unit(&rng) - 0.5f) * 0.5f; m->w2[i] = ((float)tu_unit(&rng) - 0.5f) * 0.5f; }
}

static cc_result build_sp(cc_context* ctx, sp_data* m, sjob* jobs, cc_comm* comm, cc_comm* comm2, int S, cc_graph** out) {
    static const char* const nm[6] = { "pre", "mm", "post", "pre2", "mm2", "post2" };
    uint64_t FB = (uint64_t)SM * D * sizeof(float), BB = FB / (uint64_t)S;
    cc_graph* g = NULL;
    cc_buffer bx0, bx, bw, bp, bsh, by, ba, bb, bg, bw2, bz, bz2;
    cc_graph_desc gd = {0};
    static const char* const streams[3] = { "compute", "tp", "sp" };
    cc_result r;
    int o;
    *out = NULL;
    gd.n_streams = 3;   /* each collective on a stream (and a communicator) of its own */
    gd.stream_names = streams;
    if ((r = cc_graph_create(ctx, &gd, &g)) != CC_OK) return r;
    r = cc_graph_add_buffer(g, "x0", FB, &bx0);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "x", FB, &bx);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w", WB, &bw);
    if (r == CC_OK) r = (sp_arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, "p", FB, &bp);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "sh", BB, &bsh);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "y", BB, &by);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "a", BB, &ba);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "b", BB, &bb);
    if (r == CC_OK) r = (sp_arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, "g", FB, &bg);
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    m->bp_index = cc_buffer_index(g, bp);
    m->bg_index = cc_buffer_index(g, bg);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w2", WB, &bw2);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "z", FB, &bz);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "z2", FB, &bz2);
    for (o = 0; o < 6 && r == CC_OK; o++) {
        cc_op_desc d = {0};
        cc_region rd[2], wr[1];
        cc_split sp;
        uint64_t rows = (uint64_t)sp_rows_of(o, S), bytes = rows * D * sizeof(float);
        memset(&sp, 0, sizeof sp);
        jobs[o].m = m;
        jobs[o].kind = o;
        jobs[o].S = S;
        sp.kind = CC_SPLIT_ROWWISE;
        sp.extent[CC_AXIS_ROWS] = rows;
        d.name = nm[o]; d.duration_us = 100; d.fn = sp_whole; d.part_fn = sp_part; d.user_data = &jobs[o]; d.split = &sp;
        d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = 1;
        switch (o) {
            case S_PRE: rd[0] = rg(bx0, bytes, rows); wr[0] = rg(bx, bytes, rows); break;
            case S_MM: rd[0] = rg(bx, bytes, rows); rd[1] = rg(bw, WB, 0); wr[0] = rg(bp, bytes, rows); break;
            case S_POST: rd[0] = rg(bsh, bytes, rows); wr[0] = rg(by, bytes, rows); break;
            case S_PRE2: rd[0] = rg(sp_one_sided ? by : ba, bytes, rows); wr[0] = rg(bb, bytes, rows); break;
            case S_MM2: rd[0] = rg(bg, bytes, rows); rd[1] = rg(bw2, WB, 0); wr[0] = rg(bz, bytes, rows); break;
            default: rd[0] = rg(bz, bytes, rows); wr[0] = rg(bz2, bytes, rows); break;
        }
        if (o == S_MM || o == S_MM2) {
            d.n_reads = 2;
            sp.kind = CC_SPLIT_MATMUL; sp.extent[CC_AXIS_COLS] = D; sp.extent[CC_AXIS_REDUCE] = D;
        }
        if ((sp_one_sided == 1 && (o == S_POST || o == S_PRE2)) || (sp_one_sided == 2 && (o == S_MM || o == S_MM2))) {
            d.split = NULL;   /* runs whole only, short: the collectives' time is what the split side can overlap */
            d.part_fn = NULL;
            d.duration_us = 1;
        }
        r = cc_graph_add_op(g, &d, NULL);
        if (r == CC_OK && (o == S_MM || o == S_PRE2)) {   /* the collective after it */
            cc_collective co;
            cc_region cr = rg(o == S_MM ? bp : bb, o == S_MM ? FB : BB, 0), cw = rg(o == S_MM ? bsh : bg, o == S_MM ? BB : FB, 0);
            memset(&co, 0, sizeof co);
            co.kind = o == S_MM ? CC_COLL_REDUCE_SCATTER : CC_COLL_ALL_GATHER;
            co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.n_elems = (size_t)(SM / S) * D; co.comm = o == S_MM ? comm : comm2;
            co.send_buf = o == S_MM ? (sp_arena ? NULL : m->p) : m->b;
            co.recv_buf = o == S_MM ? m->sh : sp_arena ? NULL : m->g;
            d = (cc_op_desc){0};
            d.name = o == S_MM ? "rs" : "ag"; d.duration_us = 400; d.stream = o == S_MM ? 1 : 2; d.coll = &co;
            d.reads = &cr; d.n_reads = 1; d.writes = &cw; d.n_writes = 1;
            r = cc_graph_add_op(g, &d, NULL);
        }
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

typedef struct sp_res {
    int ok;
    char err[400];
    int n_contexts, kind[2], k[2];
    char ops[2][96], coll[2][16];
    int identical, parts_ok, copies_ok;
    double mk0, mk1;
    char why[160];
} sp_res;
static sp_data sp_ranks[SMAXR][2];
static void sp_point_at_arena(cc_exec* x, cc_graph* g, void* user) {
    sp_data* m = (sp_data*)user;
    m->pp = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bp_index));
    m->pg = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bg_index));
}

static cc_result sp_rank(cc_rank* rank, void* user) {
    sp_res* R = &((sp_res*)user)[cc_rank_index(rank)];
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), S = cc_comm_size(cc_rank_world_comm(rank)), c;
    static sjob jobs[SMAXR][2][6];
    cc_graph *g0 = NULL, *g1 = NULL, *dg = NULL;
    cc_rewrite_desc rd = {0};
    cc_rewrite_report rep;
    cc_schedule s;
    cc_link link = {0};
    cc_comm* c2 = NULL;
    cc_result r;
    memset(&s, 0, sizeof s);
    init_sp(&sp_ranks[me][0], me);
    init_sp(&sp_ranks[me][1], me);
    link.latency_us = 5; link.us_per_byte = 0.5;   /* slow: a collective far longer than its chain's compute */
    rd.link = &link;
    r = cc_comm_split(cc_rank_world_comm(rank), 0, me, &c2);   /* the all-gather's */
    if (r == CC_OK) r = build_sp(ctx, &sp_ranks[me][0], jobs[me][0], cc_rank_world_comm(rank), c2, S, &g0);
    if (r == CC_OK) r = build_sp(ctx, &sp_ranks[me][1], jobs[me][1], cc_rank_world_comm(rank), c2, S, &g1);
    if (r == CC_OK && sp_one_sided) {   /* the collectives take what the link says (chunks of a 400 us one cost more) */
        int i;
        for (i = 0; i < cc_graph_n_ops(g1); i++) {
            const cc_collective* co = cc_op_collective(g1, cc_graph_op(g1, i));
            if (co) cc_op_set_duration(g1, cc_graph_op(g1, i), tu_flat_us(&link, co->kind, co->n_elems * sizeof(float), S));
        }
    }
    if (r == CC_OK) r = cc_graph_decompose(ctx, g1, &rd, &dg, &rep);
    if (r == CC_OK) {
        R->n_contexts = rep.n_contexts;
        R->mk0 = rep.makespan_before_us;
        R->mk1 = rep.makespan_after_us;
        for (c = 0; c < rep.n_contexts && c < 2; c++) {
            R->kind[c] = rep.contexts[c].kind;
            R->k[c] = rep.contexts[c].n_chunks;
            snprintf(R->ops[c], sizeof R->ops[c], "%s", rep.contexts[c].ops);
            snprintf(R->coll[c], sizeof R->coll[c], "%s", rep.contexts[c].collective);
        }
    }
    if (r == CC_OK) r = tu_run_step_with(rank, g0, NULL, sp_arena ? sp_point_at_arena : NULL, &sp_ranks[me][0]);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg, NULL, &s);
    if (r == CC_OK) r = tu_run_step_with(rank, dg, s.order, sp_arena ? sp_point_at_arena : NULL, &sp_ranks[me][1]);
    if (r == CC_OK) {
        const sp_data *a = &sp_ranks[me][0], *b = &sp_ranks[me][1];
        int krs = 0, kag = 0, i, o;
        R->identical = !memcmp(a, b, offsetof(sp_data, parts));   /* (transient P and G: never written here, both zero) */
        if (!R->identical)
            for (i = 0; i < (int)(offsetof(sp_data, parts) / sizeof(float)); i++)
                if (((const float*)a)[i] != ((const float*)b)[i]) {
                    snprintf(R->why, sizeof R->why, "float %d of the data (of %d per matrix) differs: %g vs %g", i, SM * D,
                             ((const float*)a)[i], ((const float*)b)[i]);
                    break;
                }
        for (c = 0; c < R->n_contexts && c < 2; c++) {
            if (R->kind[c] == CC_COLL_REDUCE_SCATTER) krs = R->k[c];
            if (R->kind[c] == CC_COLL_ALL_GATHER) kag = R->k[c];
        }
        R->parts_ok = krs >= 2 && kag >= 2;
        for (o = 0; o < 6; o++) {
            int want = !sp_in_context(o) ? 0 : o <= S_POST ? (o == S_POST ? krs : S * krs) : (o == S_PRE2 ? kag : S * kag);
            R->parts_ok &= b->parts[o] == want && a->parts[o] == 0;
        }
        R->copies_ok = R->parts_ok;
        for (i = 0; i < krs && R->copies_ok; i++) {
            char nm[40];
            snprintf(nm, sizeof nm, "rs#%d/%d.pack", i, krs);
            R->copies_ok &= find_op(dg, nm) >= 0;
        }
        for (i = 0; i < kag && R->copies_ok; i++) {
            char nm[40];
            snprintf(nm, sizeof nm, "ag#%d/%d.unpack", i, kag);
            R->copies_ok &= find_op(dg, nm) >= 0;
        }
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(dg);
    cc_graph_destroy(g1);
    cc_graph_destroy(g0);
    cc_comm_destroy(c2);
    return CC_OK;
}

static void test_rs_ag_world(void) {
    int v;
    for (v = 0; v < 8; v++) {   /* 2 and 4 ranks; again with P and G transient, the collectives' buffers NULL; one side whole */
        static const char* const side[3][2] = { { "pre, mm, rs, post", "pre2, ag, mm2, post2" },
                                                 { "pre, mm, rs", "ag, mm2, post2" }, { "rs, post", "pre2, ag" } };
        static const char* const what[4] = { "", " (arena)", " (post, pre2 whole)", " (mm, mm2 whole)" };
        int S = v % 2 ? 4 : 2, os = v >= 4 ? v / 2 - 1 : 0;
        const char* ar = what[v / 2];
        static sp_res R[SMAXR];
        cc_result rc;
        char err[512];
        int me;
        memset(R, 0, sizeof R);
        sp_arena = v == 2 || v == 3;
        sp_one_sided = os;
        tu_run_world(S, sp_rank, R, &rc, err, sizeof err);
        CHECK_RES(NULL, rc, CC_OK, "%d ranks%s: the world ran (%s)", S, ar, err);
        for (me = 0; me < S; me++) {
            sp_res* X = &R[me];
            int c, seen = 0;
            CHECK(X->ok, "%d ranks%s, rank %d: decomposition and both steps ran (%s)", S, ar, me, X->err);
            if (!X->ok) continue;
            CHECK(X->n_contexts == 2 && X->mk1 < X->mk0, "%d ranks%s, rank %d: both collectives decomposed (%d), predicted %.1f -> %.1f us",
                  S, ar, me, X->n_contexts, X->mk0, X->mk1);
            for (c = 0; c < X->n_contexts && c < 2; c++) {
                if (X->kind[c] == CC_COLL_REDUCE_SCATTER) {
                    seen |= 1;
                    CHECK(!strcmp(X->coll[c], "rs") && !strcmp(X->ops[c], side[os][0]),
                          "%d ranks%s, rank %d: the reduce-scatter's context is '%s' (%s, in %d)", S, ar, me, X->ops[c], X->coll[c], X->k[c]);
                } else if (X->kind[c] == CC_COLL_ALL_GATHER) {
                    seen |= 2;
                    CHECK(!strcmp(X->coll[c], "ag") && !strcmp(X->ops[c], side[os][1]),
                          "%d ranks%s, rank %d: the all-gather's context is '%s' (%s, in %d)", S, ar, me, X->ops[c], X->coll[c], X->k[c]);
                }
            }
            CHECK_INT(seen, 3, "%d ranks%s, rank %d: one reduce-scatter and one all-gather context", S, ar, me);
            CHECK(X->identical, "%d ranks%s, rank %d: every buffer bit-identical to program order (%s)", S, ar, me, X->why);
            CHECK(X->parts_ok, "%d ranks%s, rank %d: the full side's ops ran in %d x N parts, the shard side's in N, whole ones whole",
                  S, ar, me, S);
            CHECK(X->copies_ok, "%d ranks%s, rank %d: a pack op before each reduce-scatter chunk, an unpack after each all-gather chunk",
                  S, ar, me);
        }
    }
    sp_arena = 0;
    sp_one_sided = 0;
}

/* The decision follows the link, for reduce-scatter and all-gather alike
   (graphs only, on a communicator of 4 that runs nothing): slow, the
   predicted step drops; very fast, with 1 us to launch an op, the step is
   left alone. */
static void test_rs_ag_link(void) {
    cc_context* ctx;
    static sp_data m;
    static sjob jobs[6];
    cc_comm *comm = NULL, *comm2 = NULL;
    int sl;
    cc_context_create(NULL, &ctx);
    init_sp(&m, 0);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "tp", &comm) != CC_OK || cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "sp", &comm2) != CC_OK) {
        CHECK(0, "comm: %s", cc_last_error(ctx));
        return;
    }
    for (sl = 0; sl < 2; sl++) {
        cc_graph *g = NULL, *dg = NULL;
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_link link = {0};
        cc_exec_costs c;
        int i;
        link.latency_us = sl ? 0.05 : 5;
        link.us_per_byte = sl ? 1e-9 : 0.5;
        rd.link = &link;
        memset(&c, 0, sizeof c);
        c.launch_us = 1;
        if (build_sp(ctx, &m, jobs, comm, comm2, 4, &g) != CC_OK || cc_graph_set_exec_costs(g, &c) != CC_OK) {
            CHECK(0, "graph: %s", cc_last_error(ctx));
            break;
        }
        for (i = 0; i < cc_graph_n_ops(g); i++) {   /* the collectives take what the link says */
            const cc_collective* co = cc_op_collective(g, cc_graph_op(g, i));
            if (co) cc_op_set_duration(g, cc_graph_op(g, i), tu_flat_us(&link, co->kind, co->n_elems * sizeof(float), 4));
        }
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose");
        if (sl == 0)
            CHECK(rep.n_contexts == 2 && rep.makespan_after_us < 0.9 * rep.makespan_before_us,
                  "a slow link: both decomposed (%d) and the predicted step drops by over 10%% (%.1f -> %.1f us)", rep.n_contexts,
                  rep.makespan_before_us, rep.makespan_after_us);
        else
            CHECK(rep.n_changed == 0 && dg && tu_graph_fingerprint(dg) == tu_graph_fingerprint(g),
                  "a very fast link: the step is left alone (%d split; %.2f -> %.2f us)", rep.n_changed, rep.makespan_before_us,
                  rep.makespan_after_us);
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_comm_destroy(comm2);
    cc_context_destroy(ctx);
}

/* ---- an all-reduce split by columns -----------------------------------------------
   Where the context's ops allow columns but not rows, the all-reduce is cut
   in column blocks of its rows (strided), each packed into a transient
   buffer, all-reduced there and unpacked:
       mmA      P = X W         matmul, columns only (P: CR x CN)
       ar       all-reduce(sum) of P in place
       mmB      Z = Y P         matmul, columns only (P as its B)
   On two ranks P and Z are bit-identical to program order. With a row-wise
   consumer of P added (rows only), columns suit more of the all-reduce's
   neighbours: the same context by columns, the row-wise op whole after
   every chunk, and P, Z and its output bit-identical to program order. */
#define CR 8
#define CN 16
typedef struct col_data { float x[CR * CR], w[CR * CN], p[CR * CN], y[CR * CR], z[CR * CN], r[CR * CN]; int parts; } col_data;
typedef struct cjob2 { col_data* m; int kind; } cjob2;
static void col_cols(cjob2* jb, int c0, int c1) {
    col_data* m = jb->m;
    int i, j, k;
    if (jb->kind == 2) {   /* row-wise, run whole */
        for (i = 0; i < CR * CN; i++) m->r[i] = m->p[i] * 2.0f;
        return;
    }
    for (i = 0; i < CR; i++)
        for (j = c0; j < c1; j++) {
            float s = 0;
            for (k = 0; k < CR; k++) s += (jb->kind ? m->y : m->x)[i * CR + k] * (jb->kind ? m->p : m->w)[k * CN + j];
            (jb->kind ? m->z : m->p)[i * CN + j] = s;
        }
}
static void col_whole(void* stream, void* user) { (void)stream; col_cols((cjob2*)user, 0, CN); }
static void col_part(void* stream, void* user, const cc_split_chunk* c) {
    cjob2* jb = (cjob2*)user;
    (void)stream;
    jb->m->parts++;
    if (jb->kind == 2) col_cols(jb, 0, CN);
    else col_cols(jb, (int)c->begin, (int)c->end);
}
static void init_col(col_data* m, int rank) {
    tu_rng rng;
    int i;
    memset(m, 0, sizeof *m);
    rng.s = 77 + (uint64_t)rank;
    for (i = 0; i < CR * CR; i++) { m->x[i] = (float)tu_unit(&rng) - 0.5f; m->y[i] = (float)tu_unit(&rng) - 0.5f; }
    for (i = 0; i < CR * CN; i++) m->w[i] = (float)tu_unit(&rng) - 0.5f;
}
static cc_result build_col(cc_context* ctx, col_data* m, cjob2* jobs, cc_comm* comm, int rowwise, cc_graph** out) {
    cc_graph* g = NULL;
    cc_buffer bx, bw, bp, by, bz, br;
    uint64_t PB = (uint64_t)CR * CN * sizeof(float), SB = (uint64_t)CR * CR * sizeof(float);
    cc_op_desc d = {0};
    cc_region rd[2], wr[1];
    cc_split sp;
    cc_collective co;
    cc_result r;
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    r = cc_graph_add_buffer(g, "x", SB, &bx);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w", PB, &bw);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "p", PB, &bp);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "y", SB, &by);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "z", PB, &bz);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "r", PB, &br);
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    jobs[0].m = jobs[1].m = jobs[2].m = m;
    jobs[0].kind = 0; jobs[1].kind = 1; jobs[2].kind = 2;
    memset(&sp, 0, sizeof sp);
    sp.kind = CC_SPLIT_MATMUL; sp.extent[CC_AXIS_ROWS] = CR; sp.extent[CC_AXIS_COLS] = CN; sp.extent[CC_AXIS_REDUCE] = CR;
    sp.axes = 1u << CC_AXIS_COLS;
    rd[0] = rg(bx, SB, 0); rd[1] = rg(bw, PB, 0); wr[0] = rg(bp, PB, 0);
    d.name = "mmA"; d.duration_us = 100; d.fn = col_whole; d.part_fn = col_part; d.user_data = &jobs[0]; d.split = &sp;
    d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.n_elems = CR * CN; co.comm = comm; co.send_buf = co.recv_buf = m->p;
    rd[0] = rg(bp, PB, CR);
    d = (cc_op_desc){0};
    d.name = "ar"; d.duration_us = 400; d.stream = CC_STREAM_COMM; d.coll = &co;
    d.reads = rd; d.n_reads = 1; d.writes = rd; d.n_writes = 1;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    rd[0] = rg(by, SB, 0); rd[1] = rg(bp, PB, 0); wr[0] = rg(bz, PB, 0);
    d = (cc_op_desc){0};
    d.name = "mmB"; d.duration_us = 100; d.fn = col_whole; d.part_fn = col_part; d.user_data = &jobs[1]; d.split = &sp;
    d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    if (rowwise && r == CC_OK) {
        memset(&sp, 0, sizeof sp);
        sp.kind = CC_SPLIT_ROWWISE; sp.extent[CC_AXIS_ROWS] = CR;
        rd[0] = rg(bp, PB, CR); wr[0] = rg(br, PB, CR);
        d = (cc_op_desc){0};
        d.name = "twice"; d.duration_us = 10; d.fn = col_whole; d.part_fn = col_part; d.user_data = &jobs[2]; d.split = &sp;
        d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

typedef struct col_res {
    int ok, identical, axis, n_contexts, k, copies, rowwise_changed;
    int rowwise_axis, rowwise_whole, rowwise_identical;   /* with the row-wise consumer: its axis, that op whole, the data */
    char ops[64], rowwise_ops[64], err[300];
} col_res;
static col_data col_ranks[2][4];   /* [rank][program order, decomposed; the same with the row-wise consumer] */

static cc_result col_rank(cc_rank* rank, void* user) {
    col_res* R = &((col_res*)user)[cc_rank_index(rank)];
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), i;
    static cjob2 jobs[2][4][3];
    cc_graph *g0 = NULL, *g1 = NULL, *dg = NULL, *g2 = NULL, *dg2 = NULL, *g3 = NULL;
    cc_rewrite_report rep;
    cc_schedule s;
    cc_result r;
    memset(&s, 0, sizeof s);
    init_col(&col_ranks[me][0], me);
    init_col(&col_ranks[me][1], me);
    r = build_col(ctx, &col_ranks[me][0], jobs[me][0], cc_rank_world_comm(rank), 0, &g0);
    if (r == CC_OK) r = build_col(ctx, &col_ranks[me][1], jobs[me][1], cc_rank_world_comm(rank), 0, &g1);
    if (r == CC_OK) r = cc_graph_decompose(ctx, g1, NULL, &dg, &rep);
    if (r == CC_OK && rep.n_contexts == 1) {
        R->n_contexts = 1;
        R->axis = rep.contexts[0].axis;
        R->k = rep.contexts[0].n_chunks;
        snprintf(R->ops, sizeof R->ops, "%s", rep.contexts[0].ops);
    }
    if (r == CC_OK) {   /* a row-wise consumer too: columns suit two neighbours of three, the row-wise op stays whole */
        cc_rewrite_report rep2;
        init_col(&col_ranks[me][2], me);
        init_col(&col_ranks[me][3], me);
        r = build_col(ctx, &col_ranks[me][3], jobs[me][2], cc_rank_world_comm(rank), 1, &g2);
        if (r == CC_OK) r = cc_graph_decompose(ctx, g2, NULL, &dg2, &rep2);
        R->rowwise_changed = r == CC_OK ? rep2.n_changed : -1;
        if (r == CC_OK && rep2.n_contexts == 1) {
            R->rowwise_axis = rep2.contexts[0].axis;
            snprintf(R->rowwise_ops, sizeof R->rowwise_ops, "%s", rep2.contexts[0].ops);
        }
        if (r == CC_OK) R->rowwise_whole = find_op(dg2, "twice") >= 0;
        if (r == CC_OK) r = build_col(ctx, &col_ranks[me][2], jobs[me][3], cc_rank_world_comm(rank), 1, &g3);
    }
    if (r == CC_OK) r = tu_run_step(rank, g0, NULL);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg, NULL, &s);
    if (r == CC_OK) r = tu_run_step(rank, dg, s.order);
    if (r == CC_OK) {
        const col_data *a = &col_ranks[me][0], *b = &col_ranks[me][1];
        R->identical = !memcmp(a->p, b->p, sizeof a->p) && !memcmp(a->z, b->z, sizeof a->z) && b->parts == 2 * R->k && a->parts == 0;
        R->copies = 0;
        for (i = 0; i < cc_graph_n_ops(dg); i++) {
            const char* nm = cc_op_name(dg, cc_graph_op(dg, i));
            R->copies += strstr(nm, ".pack") != NULL || strstr(nm, ".unpack") != NULL;
        }
    }
    if (r == CC_OK) r = tu_run_step(rank, g3, NULL);
    cc_schedule_release(ctx, &s);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg2, NULL, &s);
    if (r == CC_OK) r = tu_run_step(rank, dg2, s.order);
    if (r == CC_OK) {
        const col_data *a = &col_ranks[me][2], *b = &col_ranks[me][3];
        R->rowwise_identical = !memcmp(a->p, b->p, sizeof a->p) && !memcmp(a->z, b->z, sizeof a->z) &&
                               !memcmp(a->r, b->r, sizeof a->r) && a->parts == 0 && b->parts >= 4;
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(dg2);
    cc_graph_destroy(g2);
    cc_graph_destroy(g3);
    cc_graph_destroy(dg);
    cc_graph_destroy(g1);
    cc_graph_destroy(g0);
    return CC_OK;
}

static void test_columns(void) {
    static col_res R[2];
    cc_result rc;
    char err[512];
    int me;
    memset(R, 0, sizeof R);
    tu_run_world(2, col_rank, R, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "2 ranks: the world ran (%s)", err);
    for (me = 0; me < 2; me++) {
        col_res* X = &R[me];
        CHECK(X->ok, "rank %d: decomposition and both steps ran (%s)", me, X->err);
        if (!X->ok) continue;
        CHECK(X->n_contexts == 1 && X->axis == CC_AXIS_COLS && !strcmp(X->ops, "mmA, ar, mmB"),
              "rank %d: matmuls that split by columns only: the context '%s' along %s in %d", me, X->ops,
              cc_axis_name((cc_axis)X->axis), X->k);
        CHECK(X->copies == 2 * X->k, "rank %d: a pack and an unpack per chunk (%d copy ops, %d chunks)", me, X->copies, X->k);
        CHECK(X->identical, "rank %d: P and Z bit-identical to program order, each matmul in %d column parts", me, X->k);
        CHECK(X->rowwise_changed == 1 && X->rowwise_axis == CC_AXIS_COLS && !strcmp(X->rowwise_ops, "mmA, ar, mmB") && X->rowwise_whole,
              "rank %d: with a consumer that splits by rows only: '%s' along %s, that consumer one op", me, X->rowwise_ops,
              cc_axis_name((cc_axis)X->rowwise_axis));
        CHECK(X->rowwise_identical, "rank %d: with it, P, Z and its output bit-identical to program order", me);
    }
}

/* ---- reduce-scatters and all-gathers split by columns ------------------------------
   Each side of the collective is a run of rows: the full side S*QR rows of
   qc columns (rank j's block its rows [j*QR, (j+1)*QR)), the shard QR rows.
   Where the ops around it split by columns only, chunk i is column block i
   of every row on both sides, packed (strided) into a transient buffer,
   reduce-scattered or gathered into another and unpacked (strided):
       mmP   P = X W       matmul, columns only (P: S*QR x qc)
       rs    reduce-scatter(sum) of P -> Sh (QR x qc)
       mmQ   Z = V Sh      matmul, columns only (Sh as its B)
       mmR   B = U W2      matmul, columns only (B: QR x qc)
       ag    all-gather of B -> G (S*QR x qc, rank order)
       mmS   Z2 = Y G      matmul, columns only (G as its B)
   On 2 and 4 ranks, with P and G bound or transient (the collectives'
   buffers there NULL), every buffer is bit-identical to program order and
   to a hand computation from every rank's inputs (the sums in rank order);
   every matmul runs in N column parts. The same with the reduce-scatter
   alone beside a row-wise consumer of Sh (columns suit two neighbours of
   three: that one runs whole, after every unpack), and with one side whole:
   the reduce-scatter alone with mmP whole (the pack copies read its whole
   output), the all-gather alone with mmS whole (it reads G after every
   unpack). Graphs only: where N does not divide the qc elements of a row,
   no chunk count N is used; on a tie between rows and columns, rows. */
#define QR 4
#define QK 4
#define QC 16
#define QS 4
typedef struct cq_data {
    float x[QS * QR * QK], w[QK * QC], p[QS * QR * QC], sh[QR * QC], v[QR * QR], z[QR * QC];
    float u[QR * QK], w2[QK * QC], b[QR * QC], g[QS * QR * QC], y[QR * QS * QR], z2[QR * QC], r[QR * QC];
    int parts[5], bad_axis;
    float *pp, *pg;              /* where the work finds P and G: p and g, or their arena addresses */
    int bp_index, bg_index;
} cq_data;
typedef struct cq_job { cq_data* m; int kind, S, qc; cc_axis axis; } cq_job;   /* axis: the one its rule allows */
static int cq_arena;
static int cq_chains = 3;        /* the world's graphs: build_cq's chains */
/* 1 if matmul o (0 mmP .. 3 mmS) runs whole only (no split rule) in build_cq(chains) */
static int cq_whole_only(int chains, int o) { return (o == 0 && (chains & 16)) || (o == 3 && (chains & 32)); }
static void cq_mm(const float* a, const float* b, float* c, int m, int k, int n, int c0, int c1) {
    int i, j, q;
    for (i = 0; i < m; i++)
        for (j = c0; j < c1; j++) {
            float s = 0;
            for (q = 0; q < k; q++) s += a[i * k + q] * b[q * n + j];
            c[i * n + j] = s;
        }
}
static void cq_cols(cq_job* jb, int c0, int c1) {
    cq_data* m = jb->m;
    int S = jb->S, n = jb->qc;
    switch (jb->kind) {
        case 0: cq_mm(m->x, m->w, m->pp, S * QR, QK, n, c0, c1); break;
        case 1: cq_mm(m->v, m->sh, m->z, QR, QR, n, c0, c1); break;
        case 2: cq_mm(m->u, m->w2, m->b, QR, QK, n, c0, c1); break;
        case 4: {   /* R = 2 Sh, rows [c0, c1) */
            int i;
            for (i = c0 * n; i < c1 * n; i++) m->r[i] = m->sh[i] * 2.0f;
            break;
        }
        default: cq_mm(m->y, m->pg, m->z2, QR, S * QR, n, c0, c1); break;
    }
}
static void cq_whole(void* stream, void* user) {
    cq_job* jb = (cq_job*)user;
    (void)stream;
    cq_cols(jb, 0, jb->axis == CC_AXIS_ROWS ? jb->kind == 4 ? QR : jb->kind == 0 ? jb->S * QR : QR : jb->qc);
}
static void cq_part(void* stream, void* user, const cc_split_chunk* c) {
    cq_job* jb = (cq_job*)user;
    (void)stream;
    jb->m->parts[jb->kind]++;
    if (c->axis != jb->axis) jb->m->bad_axis++;
    cq_cols(jb, (int)c->begin, (int)c->end);
}
static void init_cq(cq_data* m, int rank) {
    tu_rng rng;
    int i;
    memset(m, 0, sizeof *m);
    m->pp = m->p;
    m->pg = m->g;
    rng.s = 4400 + (uint64_t)rank;   /* every input differs per rank */
    for (i = 0; i < QS * QR * QK; i++) m->x[i] = (float)tu_unit(&rng) - 0.5f;
    for (i = 0; i < QK * QC; i++) { m->w[i] = (float)tu_unit(&rng) - 0.5f; m->w2[i] = (float)tu_unit(&rng) - 0.5f; }
    for (i = 0; i < QR * QR; i++) m->v[i] = (float)tu_unit(&rng) - 0.5f;
    for (i = 0; i < QR * QK; i++) m->u[i] = (float)tu_unit(&rng) - 0.5f;
    for (i = 0; i < QR * QS * QR; i++) m->y[i] = (float)tu_unit(&rng) - 0.5f;
}
/* chains: bit 0 the reduce-scatter's (mmP, rs, mmQ), bit 1 the all-gather's (mmR, ag, mmS); bit 2 adds
   "twice" (R = 2 Sh, row by row: rows only) after mmQ; bit 3 makes mmP split by rows only; bits 4 and 5
   make mmP and mmS run whole only (taking 1 us) */
static cc_result build_cq(cc_context* ctx, cq_data* m, cq_job* jobs, cc_comm* comm, cc_comm* comm2, int S, int qc, int chains,
                          const cc_link* link, cc_graph** out) {
    static const char* const nm[5] = { "mmP", "mmQ", "mmR", "mmS", "twice" };
    static const char* const streams[3] = { "compute", "tp", "sp" };
    uint64_t F = sizeof(float), FB = (uint64_t)S * QR * qc * F, BB = (uint64_t)QR * qc * F;
    cc_graph* g = NULL;
    cc_buffer bx, bw, bp, bsh, bv, bz, bu, bw2, bb, bg, by, bz2, br;
    cc_graph_desc gd = {0};
    cc_result r;
    int o;
    *out = NULL;
    gd.n_streams = 3;
    gd.stream_names = streams;
    if ((r = cc_graph_create(ctx, &gd, &g)) != CC_OK) return r;
    r = cc_graph_add_buffer(g, "x", (uint64_t)S * QR * QK * F, &bx);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w", (uint64_t)QK * qc * F, &bw);
    if (r == CC_OK) r = (cq_arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, "p", FB, &bp);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "sh", BB, &bsh);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "v", (uint64_t)QR * QR * F, &bv);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "z", BB, &bz);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "u", (uint64_t)QR * QK * F, &bu);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "w2", (uint64_t)QK * qc * F, &bw2);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "b", BB, &bb);
    if (r == CC_OK) r = (cq_arena ? cc_graph_add_transient : cc_graph_add_buffer)(g, "g", FB, &bg);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "y", (uint64_t)QR * S * QR * F, &by);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "z2", BB, &bz2);
    if (r == CC_OK) r = cc_graph_add_buffer(g, "r", BB, &br);
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    m->bp_index = cc_buffer_index(g, bp);
    m->bg_index = cc_buffer_index(g, bg);
    for (o = 0; o < 5 && r == CC_OK; o++) {
        static const uint64_t rows[5] = { 0, QR, QR, QR, QR }, inner[5] = { QK, QR, QK, 0, 0 };
        cc_op_desc d = {0};
        cc_region rd[2], wr[1];
        cc_split sp;
        uint64_t M = o == 0 ? (uint64_t)S * QR : rows[o], K = o == 3 ? (uint64_t)S * QR : inner[o];
        cc_buffer A = o == 0 ? bx : o == 1 ? bv : o == 2 ? bu : by, B = o == 0 ? bw : o == 1 ? bsh : o == 2 ? bw2 : bg;
        cc_buffer C = o == 0 ? bp : o == 1 ? bz : o == 2 ? bb : bz2;
        if (o < 4 ? !(chains >> (o / 2) & 1) : !(chains & 4)) continue;
        memset(&sp, 0, sizeof sp);
        jobs[o].m = m; jobs[o].kind = o; jobs[o].S = S; jobs[o].qc = qc;
        jobs[o].axis = o == 4 || (o == 0 && (chains & 8)) ? CC_AXIS_ROWS : CC_AXIS_COLS;
        sp.kind = CC_SPLIT_MATMUL;
        sp.extent[CC_AXIS_ROWS] = M; sp.extent[CC_AXIS_COLS] = (uint64_t)qc; sp.extent[CC_AXIS_REDUCE] = K;
        sp.axes = 1u << jobs[o].axis;   /* columns only (mmP rows only with bit 3) */
        rd[0] = rg(A, M * K * F, 0); rd[1] = rg(B, K * qc * F, 0); wr[0] = rg(C, M * qc * F, 0);
        if (o == 4) {   /* row by row */
            sp.kind = CC_SPLIT_ROWWISE;
            sp.axes = 0;
            sp.extent[CC_AXIS_COLS] = sp.extent[CC_AXIS_REDUCE] = 0;
            rd[0] = rg(bsh, BB, QR); wr[0] = rg(br, BB, QR);
        }
        d.name = nm[o]; d.duration_us = 100; d.fn = cq_whole; d.part_fn = cq_part; d.user_data = &jobs[o]; d.split = &sp;
        d.reads = rd; d.n_reads = o == 4 ? 1 : 2; d.writes = wr; d.n_writes = 1;
        if (o < 4 && cq_whole_only(chains, o)) {
            d.split = NULL;
            d.part_fn = NULL;
            d.duration_us = 1;
        }
        r = cc_graph_add_op(g, &d, NULL);
        if (r == CC_OK && (o == 0 || o == 2)) {   /* the collective after it: each side rows of qc elements */
            int is_rs = o == 0;
            cc_collective co;
            cc_region cr = is_rs ? rg(bp, FB, (uint64_t)S * QR) : rg(bb, BB, QR), cw = is_rs ? rg(bsh, BB, QR) : rg(bg, FB, (uint64_t)S * QR);
            memset(&co, 0, sizeof co);
            co.kind = is_rs ? CC_COLL_REDUCE_SCATTER : CC_COLL_ALL_GATHER;
            co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.n_elems = (size_t)QR * (size_t)qc; co.comm = is_rs ? comm : comm2;
            co.send_buf = is_rs ? (cq_arena ? NULL : m->p) : m->b;
            co.recv_buf = is_rs ? m->sh : cq_arena ? NULL : m->g;
            d = (cc_op_desc){0};
            d.name = is_rs ? "rs" : "ag"; d.stream = is_rs ? 1 : 2; d.coll = &co;
            d.duration_us = tu_flat_us(link, co.kind, co.n_elems * F, S);
            d.reads = &cr; d.n_reads = 1; d.writes = &cw; d.n_writes = 1;
            r = cc_graph_add_op(g, &d, NULL);
        }
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

typedef struct cq_res {
    int ok, n_contexts, axis[2], k[2], kind[2], names_ok, parts_ok, identical;
    char ops[2][64], err[400], why[200];
} cq_res;
static cq_data cq_ranks[QS][2];   /* [rank][program order, decomposed] */
static void cq_point_at_arena(cc_exec* x, cc_graph* g, void* user) {
    cq_data* m = (cq_data*)user;
    m->pp = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bp_index));
    m->pg = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, m->bg_index));
}
/* 1 if dg has buffer `name`, transient, of `bytes` */
static int cq_has_buffer(cc_graph* dg, const char* name, uint64_t bytes) {
    int i;
    for (i = 0; i < cc_graph_n_buffers(dg); i++) {
        cc_buffer b = cc_graph_buffer(dg, i);
        if (!strcmp(cc_buffer_name(dg, b), name)) return cc_buffer_transient(dg, b) && cc_buffer_bytes(dg, b) == bytes;
    }
    return 0;
}

static cc_result cq_rank(cc_rank* rank, void* user) {
    cq_res* R = &((cq_res*)user)[cc_rank_index(rank)];
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), S = cc_comm_size(cc_rank_world_comm(rank)), c, i, o;
    static cq_job jobs[QS][2][5];
    cc_graph *g0 = NULL, *g1 = NULL, *dg = NULL;
    cc_rewrite_desc rd = {0};
    cc_rewrite_report rep;
    cc_schedule s;
    cc_link link = {0};
    cc_comm* c2 = NULL;
    cc_result r;
    memset(&s, 0, sizeof s);
    init_cq(&cq_ranks[me][0], me);
    init_cq(&cq_ranks[me][1], me);
    link.latency_us = 5; link.us_per_byte = 0.5;   /* slow: a collective far longer than its chain's compute */
    rd.link = &link;
    r = cc_comm_split(cc_rank_world_comm(rank), 0, me, &c2);
    if (r == CC_OK) r = build_cq(ctx, &cq_ranks[me][0], jobs[me][0], cc_rank_world_comm(rank), c2, S, QC, cq_chains, &link, &g0);
    if (r == CC_OK) r = build_cq(ctx, &cq_ranks[me][1], jobs[me][1], cc_rank_world_comm(rank), c2, S, QC, cq_chains, &link, &g1);
    if (r == CC_OK) r = cc_graph_decompose(ctx, g1, &rd, &dg, &rep);
    if (r == CC_OK) {
        R->n_contexts = rep.n_contexts;
        for (c = 0; c < rep.n_contexts && c < 2; c++) {
            R->kind[c] = rep.contexts[c].kind;
            R->axis[c] = rep.contexts[c].axis;
            R->k[c] = rep.contexts[c].n_chunks;
            snprintf(R->ops[c], sizeof R->ops[c], "%s", rep.contexts[c].ops);
        }
        /* the chunk ops and buffers by name: each collective's pack, chunk, unpack; its buffers of n_ranks column
           blocks (S*QR rows) and of the rank's own (QR rows); each matmul in k column pieces, none in S*k (one that
           runs whole only: one op) */
        R->names_ok = rep.n_contexts == (cq_chains & 1) + (cq_chains >> 1 & 1);
        for (c = 0; c < rep.n_contexts && c < 2 && R->names_ok; c++) {
            const char* co = R->kind[c] == CC_COLL_REDUCE_SCATTER ? "rs" : "ag";
            int k = R->k[c];
            uint64_t cw = (uint64_t)(QC / (k > 0 ? k : 1)) * sizeof(float);
            char nm[48];
            for (i = 0; i < k && R->names_ok; i++) {
                static const char* const sfx[3] = { ".pack", "", ".unpack" };
                for (o = 0; o < 3; o++) {
                    snprintf(nm, sizeof nm, "%s#%d/%d%s", co, i, k, sfx[o]);
                    R->names_ok &= find_op(dg, nm) >= 0;
                }
                snprintf(nm, sizeof nm, "%s#%d/%d.buf", co, i, k);
                R->names_ok &= cq_has_buffer(dg, nm, (uint64_t)S * QR * cw);
                snprintf(nm, sizeof nm, "%s#%d/%d.shard", co, i, k);
                R->names_ok &= cq_has_buffer(dg, nm, (uint64_t)QR * cw);
                for (o = 0; o < 2; o++) {
                    static const char* const mm[2][2] = { { "mmP", "mmQ" }, { "mmR", "mmS" } };
                    int ag = R->kind[c] != CC_COLL_REDUCE_SCATTER;
                    if (cq_whole_only(cq_chains, 2 * ag + o)) {
                        R->names_ok &= find_op(dg, mm[ag][o]) >= 0;
                        continue;
                    }
                    snprintf(nm, sizeof nm, "%s#%d/%d", mm[ag][o], i, k);
                    R->names_ok &= find_op(dg, nm) >= 0;
                    snprintf(nm, sizeof nm, "%s#%d/%d", mm[R->kind[c] != CC_COLL_REDUCE_SCATTER][o], i, S * k);
                    R->names_ok &= find_op(dg, nm) < 0;
                }
            }
        }
    }
    if (r == CC_OK) r = tu_run_step_with(rank, g0, NULL, cq_arena ? cq_point_at_arena : NULL, &cq_ranks[me][0]);
    if (r == CC_OK) r = cc_sched_solve(ctx, dg, NULL, &s);
    if (r == CC_OK) r = tu_run_step_with(rank, dg, s.order, cq_arena ? cq_point_at_arena : NULL, &cq_ranks[me][1]);
    if (r == CC_OK) {
        const cq_data *a = &cq_ranks[me][0], *b = &cq_ranks[me][1];
        int krs = 0, kag = 0;
        R->identical = !memcmp(a, b, offsetof(cq_data, parts));   /* (transient P and G: never written here, both zero) */
        if (!R->identical)
            for (i = 0; i < (int)(offsetof(cq_data, parts) / sizeof(float)); i++)
                if (((const float*)a)[i] != ((const float*)b)[i]) {
                    snprintf(R->why, sizeof R->why, "float %d of the data differs: %g vs %g", i, ((const float*)a)[i],
                             ((const float*)b)[i]);
                    break;
                }
        for (c = 0; c < R->n_contexts && c < 2; c++) {
            if (R->kind[c] == CC_COLL_REDUCE_SCATTER) krs = R->k[c];
            if (R->kind[c] == CC_COLL_ALL_GATHER) kag = R->k[c];
        }
        R->parts_ok = (krs >= 2) == (cq_chains & 1) && (kag >= 2) == (cq_chains >> 1 & 1) && !a->bad_axis && !b->bad_axis;
        for (o = 0; o < 5; o++)
            R->parts_ok &= a->parts[o] == 0 && b->parts[o] == (o == 4 || cq_whole_only(cq_chains, o) ? 0 : o < 2 ? krs : kag);
    }
    R->ok = r == CC_OK;
    if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(dg);
    cc_graph_destroy(g1);
    cc_graph_destroy(g0);
    cc_comm_destroy(c2);
    return CC_OK;
}

/* Rank r's Sh, Z, B and Z2 by hand from every rank's inputs: P_q = X_q W_q,
   Sh_r = rows [r*QR, (r+1)*QR) of P_0 + P_1 + ... (in rank order), Z_r = V_r
   Sh_r, B_q = U_q W2_q, G = B_0 over B_1 ..., Z2_r = Y_r G. 1 if rank r's
   data after the step (d) equals them bit for bit. */
static int cq_by_hand(const cq_data* d, int r, int S) {
    static cq_data in[QS];
    static float P[QS][QS * QR * QC], sh[QR * QC], z[QR * QC], G[QS * QR * QC], z2[QR * QC];
    int q, i;
    for (q = 0; q < S; q++) {
        init_cq(&in[q], q);
        cq_mm(in[q].x, in[q].w, P[q], S * QR, QK, QC, 0, QC);
        cq_mm(in[q].u, in[q].w2, G + (size_t)q * QR * QC, QR, QK, QC, 0, QC);
    }
    for (i = 0; i < QR * QC; i++) {
        float acc = P[0][r * QR * QC + i];
        for (q = 1; q < S; q++) acc += P[q][r * QR * QC + i];
        sh[i] = acc;
    }
    cq_mm(in[r].v, sh, z, QR, QR, QC, 0, QC);
    cq_mm(in[r].y, G, z2, QR, S * QR, QC, 0, QC);
    for (i = 0; i < QR * QC && (cq_chains & 4); i++)   /* twice's R = 2 Sh */
        if (d->r[i] != sh[i] * 2.0f) return 0;
    if ((cq_chains & 1) && (memcmp(d->sh, sh, sizeof sh) || memcmp(d->z, z, sizeof z))) return 0;
    return !(cq_chains & 2) || (!memcmp(d->z2, z2, sizeof z2) && !memcmp(d->b, G + (size_t)r * QR * QC, sizeof sh) &&
                                (cq_arena || !memcmp(d->g, G, (size_t)S * QR * QC * sizeof(float))));
}

static void test_rs_ag_columns(void) {
    static const char* const variant[5] = { "", ", P and G transient", ", the reduce-scatter alone, a row-wise consumer of Sh",
                                            ", the reduce-scatter alone, mmP whole", ", the all-gather alone, mmS whole" };
    static const int chains[5] = { 3, 3, 1 | 4, 1 | 16, 2 | 32 };
    int v;
    for (v = 0; v < 10; v++) {
        static cq_res R[QS];
        int S = v % 2 ? 4 : 2, me;
        const char* ar = variant[v / 2];
        const char* want[2];
        cc_result rc;
        char err[512];
        memset(R, 0, sizeof R);
        cq_arena = v / 2 == 1;
        cq_chains = chains[v / 2];
        want[0] = cq_chains & 16 ? "rs, mmQ" : "mmP, rs, mmQ";
        want[1] = cq_chains & 32 ? "mmR, ag" : "mmR, ag, mmS";
        tu_run_world(S, cq_rank, R, &rc, err, sizeof err);
        CHECK_RES(NULL, rc, CC_OK, "%d ranks%s: the world ran (%s)", S, ar, err);
        for (me = 0; me < S; me++) {
            cq_res* X = &R[me];
            int c, seen = 0;
            CHECK(X->ok, "%d ranks%s, rank %d: decomposition and both steps ran (%s)", S, ar, me, X->err);
            if (!X->ok) continue;
            CHECK_INT(X->n_contexts, (cq_chains & 1) + (cq_chains >> 1 & 1), "%d ranks%s, rank %d: every collective decomposed", S, ar,
                      me);
            for (c = 0; c < X->n_contexts && c < 2; c++) {
                int rs = X->kind[c] == CC_COLL_REDUCE_SCATTER;
                seen |= rs ? 1 : X->kind[c] == CC_COLL_ALL_GATHER ? 2 : 4;
                CHECK(X->axis[c] == CC_AXIS_COLS && !strcmp(X->ops[c], want[!rs]),
                      "%d ranks%s, rank %d: the %s's context '%s' along %s in %d", S, ar, me, rs ? "reduce-scatter" : "all-gather",
                      X->ops[c], cc_axis_name((cc_axis)X->axis[c]), X->k[c]);
            }
            CHECK_INT(seen, cq_chains & 3, "%d ranks%s, rank %d: one context per collective", S, ar, me);
            CHECK(X->names_ok, "%d ranks%s, rank %d: per chunk i of k a pack, the collective and an unpack, buffers .buf (%d blocks) "
                  "and .shard, each matmul in k column pieces or whole", S, ar, me, S);
            CHECK(X->parts_ok, "%d ranks%s, rank %d: each matmul ran in k column parts or whole (rs in %d, ag in %d)", S, ar, me,
                  X->kind[0] == CC_COLL_REDUCE_SCATTER ? X->k[0] : X->k[1], X->kind[0] == CC_COLL_REDUCE_SCATTER ? X->k[1] : X->k[0]);
            CHECK(X->identical, "%d ranks%s, rank %d: every buffer bit-identical to program order (%s)", S, ar, me, X->why);
            CHECK(cq_by_hand(&cq_ranks[me][1], me, S) && cq_by_hand(&cq_ranks[me][0], me, S),
                  "%d ranks%s, rank %d: Sh, Z, B, G, Z2 (and R) bit-identical to the hand computation", S, ar, me);
        }
    }
    cq_arena = 0;
    cq_chains = 3;
}

/* Graphs only, on communicators of 4 that run nothing, each chain alone,
   up to 8 chunks, on a link where more chunks pay while they divide: a row
   of 16 elements is split in 8 column blocks, one of 12 in 4 (8 does not
   divide it), one of 6 in 2, an odd one not at all. */
static void test_rs_ag_columns_divide(void) {
    static const int qcs[4] = { 16, 12, 6, 5 }, most[4] = { 8, 4, 2, 0 };
    cc_context* ctx;
    static cq_data m;
    static cq_job jobs[5];
    cc_comm *comm = NULL, *comm2 = NULL;
    int t, ch;
    cc_context_create(NULL, &ctx);
    init_cq(&m, 0);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "tp", &comm) != CC_OK || cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "sp", &comm2) != CC_OK) {
        CHECK(0, "comm: %s", cc_last_error(ctx));
        return;
    }
    for (ch = 1; ch <= 2; ch++)
        for (t = 0; t < 4; t++) {
            const char* co = ch == 1 ? "a reduce-scatter" : "an all-gather";
            cc_graph *g = NULL, *dg = NULL;
            cc_rewrite_desc rd = {0};
            cc_rewrite_report rep;
            cc_link link = {0};
            link.latency_us = 0.01; link.us_per_byte = 0.5;   /* the collective several times its chain's compute */
            rd.link = &link;
            rd.max_chunks = 8;
            if (build_cq(ctx, &m, jobs, comm, comm2, 4, qcs[t], ch, &link, &g) != CC_OK) {
                CHECK(0, "graph: %s", cc_last_error(ctx));
                break;
            }
            CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose, %s of rows of %d", co, qcs[t]);
            if (most[t])
                CHECK(rep.n_contexts == 1 && rep.contexts[0].axis == CC_AXIS_COLS && rep.contexts[0].n_chunks == most[t],
                      "%s of rows of %d elements: split by columns in %d (%d contexts, the first along %s in %d)", co, qcs[t],
                      most[t], rep.n_contexts, rep.n_contexts ? cc_axis_name(rep.contexts[0].axis) : "-",
                      rep.n_contexts ? rep.contexts[0].n_chunks : 0);
            else
                CHECK(rep.n_changed == 0 && dg && tu_graph_fingerprint(dg) == tu_graph_fingerprint(g),
                      "%s of rows of %d elements: no N divides them, nothing split (%d)", co, qcs[t], rep.n_changed);
            cc_graph_destroy(dg);
            cc_graph_destroy(g);
        }
    cc_comm_destroy(comm);
    cc_comm_destroy(comm2);
    cc_context_destroy(ctx);
}

/* Graphs only: the axis is the one more of the reduce-scatter's neighbours
   split along. With a row-wise consumer beside the column-only matmuls
   (two neighbours of three by columns), columns, that consumer whole; with
   mmP split by rows only and mmQ by columns only (a tie), rows, with mmQ
   whole and mmP in n_ranks * N row pieces. */
static void test_rs_ag_columns_ties(void) {
    cc_context* ctx;
    static cq_data m;
    static cq_job jobs[5];
    cc_comm *comm = NULL, *comm2 = NULL;
    int t;
    cc_context_create(NULL, &ctx);
    init_cq(&m, 0);
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "tp", &comm) != CC_OK || cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "sp", &comm2) != CC_OK) {
        CHECK(0, "comm: %s", cc_last_error(ctx));
        return;
    }
    for (t = 0; t < 2; t++) {
        cc_graph *g = NULL, *dg = NULL;
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_link link = {0};
        char nm[32];
        link.latency_us = 0.01; link.us_per_byte = 0.5;
        rd.link = &link;
        if (build_cq(ctx, &m, jobs, comm, comm2, 4, QC, t ? 1 | 8 : 1 | 4, &link, &g) != CC_OK) {
            CHECK(0, "graph: %s", cc_last_error(ctx));
            break;
        }
        CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose (%s)", t ? "a tie" : "two of three by columns");
        if (rep.n_contexts != 1) {
            CHECK(0, "%s: one context (%d)", t ? "a tie" : "two of three by columns", rep.n_contexts);
        } else if (!t) {
            CHECK(rep.contexts[0].axis == CC_AXIS_COLS && !strcmp(rep.contexts[0].ops, "mmP, rs, mmQ") && find_op(dg, "twice") >= 0,
                  "two of three neighbours by columns: '%s' along %s, the row-wise consumer whole", rep.contexts[0].ops,
                  cc_axis_name(rep.contexts[0].axis));
        } else {
            snprintf(nm, sizeof nm, "mmP#0/%d", 4 * rep.contexts[0].n_chunks);
            CHECK(rep.contexts[0].axis == CC_AXIS_ROWS && !strcmp(rep.contexts[0].ops, "mmP, rs") && find_op(dg, "mmQ") >= 0 &&
                      find_op(dg, nm) >= 0,
                  "a tie (one neighbour each way): '%s' along %s, mmQ whole, mmP in 4 x N pieces", rep.contexts[0].ops,
                  cc_axis_name(rep.contexts[0].axis));
        }
        cc_graph_destroy(dg);
        cc_graph_destroy(g);
    }
    cc_comm_destroy(comm);
    cc_comm_destroy(comm2);
    cc_context_destroy(ctx);
}

/* Bad rules in a context: an op whose user rule refuses every chunk is no
   error of the decomposition (it is left whole, the rest of the context
   split), while asking the rule directly names the op and the rule; a
   chunk count above an axis's length is refused by name the same way and
   never tried by the decomposition. The input graph is unchanged. */
static int refusing_rule(void* ud, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    (void)ud; (void)c; (void)rd; (void)nr; (void)wr; (void)nw; (void)partial;
    return 1;
}
static void test_bad_rules(void) {
    cc_context* ctx;
    static chain m;
    static cjob jobs[4];
    int dummy_comm;
    cc_graph *g = NULL, *dg = NULL;
    cc_rewrite_desc rd = {0};
    cc_rewrite_report rep;
    uint64_t fp;
    cc_context_create(NULL, &ctx);
    init_chain(&m, 0);
    build_chain_refusing = 1;   /* post2's user rule refuses */
    if (build_chain(ctx, &m, jobs, (cc_comm*)&dummy_comm, 1, &g) != CC_OK) { CHECK(0, "chain: %s", cc_last_error(ctx)); return; }
    build_chain_refusing = 0;
    cc_graph_validate(g);
    fp = tu_graph_fingerprint(g);
    rd.max_chunks = 32;   /* above the rows (16): those counts never fit */
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "decompose beside a rule that refuses");
    CHECK(rep.n_contexts == 1 && !strcmp(rep.contexts[0].ops, "pre, mm, ar, post") && rep.contexts[0].n_chunks <= T,
          "the refusing op stays whole, the rest is split: '%s' in %d", rep.n_contexts ? rep.contexts[0].ops : "none",
          rep.n_contexts ? rep.contexts[0].n_chunks : 0);
    CHECK(find_op(dg, "post2") >= 0, "post2 is one op in the new graph");
    CHECK(tu_graph_fingerprint(g) == fp, "the input graph is unchanged");
    CHECK_RES(ctx, cc_op_split_check(g, cc_graph_op(g, find_op(g, "post2")), CC_AXIS_ROWS, 2, NULL), CC_ERR_INVALID_ARG,
              "the refusing rule, asked directly");
    CHECK(strstr(cc_last_error(ctx), "post2") && strstr(cc_last_error(ctx), "'refusing'") && strstr(cc_last_error(ctx), "refused"),
          "the message names the op and says the rule refused: %s", cc_last_error(ctx));
    CHECK_RES(ctx, cc_op_split_check(g, cc_graph_op(g, find_op(g, "pre")), CC_AXIS_ROWS, T + 1, NULL), CC_ERR_INVALID_ARG,
              "%d chunks of %d rows", T + 1, T);
    CHECK(strstr(cc_last_error(ctx), "pre") && strstr(cc_last_error(ctx), "rowwise"), "the message names the op and the rule: %s",
          cc_last_error(ctx));
    CHECK(tu_graph_fingerprint(g) == fp, "the input graph is still unchanged");
    cc_graph_destroy(dg);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* Growth is judged like any candidate: where pre's and post2's pieces each
   cost nearly the whole op (a chunk cost with a large fixed part) and the
   all-reduce is short (100 us), the grown context is slower than the
   immediate one, which is kept. */
static void test_growth_falls_back(void) {
    cc_context* ctx;
    static chain m;
    static cjob jobs[4];
    int dummy_comm, o;
    cc_graph *g = NULL, *dg = NULL;
    cc_rewrite_report rep;
    cc_context_create(NULL, &ctx);
    init_chain(&m, 0);
    if (build_chain(ctx, &m, jobs, (cc_comm*)&dummy_comm, 0, &g) != CC_OK) { CHECK(0, "chain: %s", cc_last_error(ctx)); return; }
    CHECK_RES(ctx, cc_op_set_duration(g, cc_graph_op(g, find_op(g, "ar")), 100), CC_OK, "the all-reduce takes 100 us");
    for (o = 0; o < 2; o++)
        CHECK_RES(ctx, cc_op_set_chunk_cost(g, cc_graph_op(g, find_op(g, o ? "post2" : "pre")), 90, 10), CC_OK,
                  "%s: a chunk costs 90 us plus its share of 10", o ? "post2" : "pre");
    CHECK_RES(ctx, cc_graph_decompose(ctx, g, NULL, &dg, &rep), CC_OK, "decompose");
    CHECK(rep.n_contexts == 1 && !strcmp(rep.contexts[0].ops, "mm, ar, post"),
          "the immediate context is kept where growing it costs more than it overlaps: '%s'",
          rep.n_contexts ? rep.contexts[0].ops : "none split");
    CHECK(find_op(dg, "pre") >= 0 && find_op(dg, "post2") >= 0, "pre and post2 stay whole");
    cc_graph_destroy(dg);
    cc_graph_destroy(g);
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
            } else if (def == DEF_NO_CHUNK_PRODUCER || def == DEF_NO_CHUNK_CONSUMER || def == DEF_CONSUMER_ROWS) {
                /* one neighbour that does not split stays whole outside the context; the others split */
                const char* whole = def == DEF_NO_CHUNK_PRODUCER ? "mm1" : def == DEF_NO_CHUNK_CONSUMER ? "wgrad1" : "norm1";
                const char* want = def == DEF_NO_CHUNK_PRODUCER ? "ar1, norm1, wgrad1"
                                   : def == DEF_NO_CHUNK_CONSUMER ? "mm1, ar1, norm1" : "mm1, ar1, wgrad1";
                const cc_rewrite_context* c1 = NULL;
                int c;
                for (c = 0; c < rep.n_contexts; c++)
                    if (!strcmp(rep.contexts[c].collective, "ar1")) c1 = &rep.contexts[c];
                CHECK(rep.n_changed == L && find_op(dg, "ar1") < 0 && find_op(dg, whole) >= 0,
                      "%s: every layer decomposed (%d), layer 1's %s one op", def_name[def], rep.n_changed, whole);
                CHECK(c1 && !strcmp(c1->ops, want) && c1->n_ops == 3, "%s: layer 1's context is '%s' (want '%s')", def_name[def],
                      c1 ? c1->ops : "none", want);
                CHECK(cc_graph_validate(dg) == CC_OK, "%s: the new graph validates", def_name[def]);
                CHECK_INT(rep.n_candidates, L, "%s: candidates counted", def_name[def]);
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
        /* max_screen_ops: every candidate has at least the input's ops (chunks replace an op by more), so a budget of
           B times them stops the screens after at most B; no limit is the search without one */
        {
            cc_rewrite_report free_rep;
            cc_graph* free_dg = NULL;
            uint64_t n_in = (uint64_t)cc_graph_n_ops(g), fp;
            int b;
            rd = (cc_rewrite_desc){0};
            CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &free_dg, &free_rep), CC_OK, "no screen budget");
            fp = free_dg ? tu_graph_fingerprint(free_dg) : 0;
            CHECK(free_rep.n_evaluations > 3, "without a budget the search screens more than 3 candidates (%d)", free_rep.n_evaluations);
            for (b = 1; b <= 3; b++) {
                rd.max_screen_ops = (uint64_t)b * n_in;
                CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "max_screen_ops");
                CHECK(rep.n_evaluations >= 1 && rep.n_evaluations <= b,
                      "max_screen_ops %d x the input's ops: 1 to %d screens (%d)", b, b, rep.n_evaluations);
                cc_graph_destroy(dg);
            }
            rd.max_screen_ops = n_in + 1;   /* the first candidate is larger than the input: one screen */
            CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "max_screen_ops ops + 1");
            CHECK_INT(rep.n_evaluations, 1, "max_screen_ops of the input's ops + 1: one screen");
            cc_graph_destroy(dg);
            rd.max_screen_ops = UINT64_MAX;
            CHECK_RES(ctx, cc_graph_decompose(ctx, g, &rd, &dg, &rep), CC_OK, "max_screen_ops unbounded");
            CHECK(rep.n_evaluations == free_rep.n_evaluations && dg && tu_graph_fingerprint(dg) == fp,
                  "a budget never reached gives the search without one (%d screens, the same graph)", rep.n_evaluations);
            cc_graph_destroy(dg);
            cc_graph_destroy(free_dg);
            dg = NULL;
        }
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
static int decomposed_rs_ag(const cc_rewrite_report* rep) { return rep->n_changed == 2; }
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
    {   /* a reduce-scatter's and an all-gather's contexts: transient buffers, copy ops, pieces per rank block */
        static sp_data sm;
        static sjob sjobs[6];
        cc_comm *c1 = NULL, *c2 = NULL;
        g = NULL;
        init_sp(&sm, 0);
        if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "tp", &c1) == CC_OK && cc_comm_wrap(ctx, &idle_family, NULL, 0, 4, "sp", &c2) == CC_OK &&
            build_sp(ctx, &sm, sjobs, c1, c2, 4, &g) == CC_OK)
            check_rewrite_oom(ctx, &ta, g, cc_graph_decompose, decomposed_rs_ag, "decomposes the reduce-scatter and the all-gather");
        else
            CHECK(0, "the sequence-parallel graph: %s", cc_last_error(ctx));
        cc_graph_destroy(g);
        cc_comm_destroy(c1);
        cc_comm_destroy(c2);
    }
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
    TH_RUN(test_context_grows);
    TH_RUN(test_one_sided);
    TH_RUN(test_exposed_first);
    TH_RUN(test_rs_ag_world);
    TH_RUN(test_rs_ag_link);
    TH_RUN(test_columns);
    TH_RUN(test_rs_ag_columns);
    TH_RUN(test_rs_ag_columns_divide);
    TH_RUN(test_rs_ag_columns_ties);
    TH_RUN(test_bad_rules);
    TH_RUN(test_growth_falls_back);
    TH_RUN(test_bad_args);
    TH_RUN(test_failing_allocator);
    TH_RUN(test_determinism);
    TH_RUN(test_records_survive_copies);
    return th_done();
}
