/* tests/test_fuse.c - cc_graph_fuse: buckets of all-reduces.

   The main check runs on CPU ranks (threads): each rank fills float pieces
   of one contiguous allocation (each piece its own cc_buffer), all-reduces
   every piece in place and reads the reduced pieces. The step runs in
   program order and the fused graph runs scheduled; the arrays must be
   bit-identical, and equal to sums the test computes itself in rank order.
   The other checks build graphs only: what must never fuse, the bucket
   limit, bad arguments, a failing allocator, determinism. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "rewrite_oom.h"

#define NPIECE 6
#define MAXRANKS 3
static const int piece_elems[NPIECE] = { 64, 128, 64, 96, 128, 32 };   /* floats; distinct sizes for the fit */

static double ar_duration(size_t n_elems) { return 200.0 + 0.001 * (double)(n_elems * sizeof(float)); }

/* ---- the pieces step -------------------------------------------------------*/
typedef struct pieces {
    int rank;
    float* data;                /* the pieces back to back (one allocation) */
    float* out;                 /* what the readers write, the same layout */
    size_t off[NPIECE + 1];     /* element offsets */
} pieces;
typedef struct pjob { pieces* p; int i; } pjob;

static float fill_value(int rank, int i, size_t j) { return (float)(rank + 1) * 0.37f * (float)(j + 1) + (float)i * 0.011f; }

static void fill_fn(void* stream, void* user) {
    pjob* jb = (pjob*)user;
    size_t j;
    (void)stream;
    for (j = jb->p->off[jb->i]; j < jb->p->off[jb->i + 1]; j++) jb->p->data[j] = fill_value(jb->p->rank, jb->i, j - jb->p->off[jb->i]);
}
static void use_fn(void* stream, void* user) {
    pjob* jb = (pjob*)user;
    size_t j;
    (void)stream;
    for (j = jb->p->off[jb->i]; j < jb->p->off[jb->i + 1]; j++) jb->p->out[j] = jb->p->data[j] * 0.5f + 1.0f;
}

static cc_region whole(cc_buffer b, uint64_t n) {
    cc_region r = {0};
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = n;
    return r;
}

/* layouts */
enum { L_PLAIN = 0, L_BLOCKER = 1 };

/* fill_i, AR_i (in place, comm stream) for every piece, then use_i; with
   L_BLOCKER, use_0 right after AR_0 (it reads AR_0's result, so AR_0 cannot
   move past it). */
static cc_result build_pieces(cc_context* ctx, pieces* p, pjob* jobs, cc_comm* comm, int layout, cc_graph** out) {
    cc_graph* g = NULL;
    cc_buffer pb[NPIECE], ob[NPIECE];
    cc_collective co;
    cc_result r;
    int i;
    char name[32];
    *out = NULL;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (i = 0; i < NPIECE && r == CC_OK; i++) {
        snprintf(name, sizeof name, "piece%d", i);
        r = cc_graph_add_buffer(g, name, (uint64_t)piece_elems[i] * sizeof(float), &pb[i]);
        snprintf(name, sizeof name, "out%d", i);
        if (r == CC_OK) r = cc_graph_add_buffer(g, name, (uint64_t)piece_elems[i] * sizeof(float), &ob[i]);
    }
    for (i = 0; i < NPIECE && r == CC_OK; i++) {
        cc_op_desc d = {0};
        cc_region rg = whole(pb[i], (uint64_t)piece_elems[i] * sizeof(float));
        jobs[i].p = p;
        jobs[i].i = i;
        snprintf(name, sizeof name, "fill%d", i);
        d.name = name; d.duration_us = 10; d.fn = fill_fn; d.user_data = &jobs[i];
        d.writes = &rg; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM;
        co.n_elems = (size_t)piece_elems[i]; co.comm = comm;
        co.send_buf = p->data + p->off[i]; co.recv_buf = p->data + p->off[i];
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "ar%d", i);
        d.name = name; d.duration_us = ar_duration(co.n_elems); d.stream = CC_STREAM_COMM; d.coll = &co;
        d.reads = &rg; d.n_reads = 1; d.writes = &rg; d.n_writes = 1;
        if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
        if (r == CC_OK && layout == L_BLOCKER && i == 0) {
            cc_region w = whole(ob[0], rg.n_bytes);
            d = (cc_op_desc){0};
            d.name = "use0"; d.duration_us = 10; d.fn = use_fn; d.user_data = &jobs[0];
            d.reads = &rg; d.n_reads = 1; d.writes = &w; d.n_writes = 1;
            r = cc_graph_add_op(g, &d, NULL);
        }
    }
    for (i = 0; i < NPIECE && r == CC_OK; i++) {
        cc_op_desc d = {0};
        cc_region rg = whole(pb[i], (uint64_t)piece_elems[i] * sizeof(float)), w = whole(ob[i], rg.n_bytes);
        if (layout == L_BLOCKER && i == 0) continue;
        snprintf(name, sizeof name, "use%d", i);
        d.name = name; d.duration_us = 10; d.fn = use_fn; d.user_data = &jobs[i];
        d.reads = &rg; d.n_reads = 1; d.writes = &w; d.n_writes = 1;
        r = cc_graph_add_op(g, &d, NULL);
    }
    if (r != CC_OK) { cc_graph_destroy(g); return r; }
    *out = g;
    return CC_OK;
}

/* ---- the world run ----------------------------------------------------------*/
enum { V_FIT = 0, V_LINK, V_BLOCKER, V_BUCKET, N_VARIANTS };
static const char* variant_name[N_VARIANTS] = { "fitted model", "link model", "blocking reader", "bucket limit" };
#define BUCKET_LIMIT (224 * sizeof(float))   /* two or three pieces */

typedef struct vres {
    int ok;                       /* every call returned CC_OK */
    char err[400];
    int colls_before, colls_after, n_changed, report_colls_after;
    int validated;
    int same_as_program_order;    /* data and out bit-identical */
    int reduced_right;            /* data and out as the test computes them */
    int bucket_ok;                /* every collective within the limit */
    double mk_before, mk_after, mk_orig_judged, mk_fused_judged;
    uint64_t fingerprint;
    char first_coll_name[64];
} vres;

typedef struct world_arg { int n_ranks; vres v[N_VARIANTS][MAXRANKS]; } world_arg;

static cc_result fuse_rank(cc_rank* rank, void* user) {
    world_arg* A = (world_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), v, i;
    pieces p;
    pjob jobs[NPIECE];
    size_t total = 0;
    float *ref_data, *ref_out;
    memset(&p, 0, sizeof p);
    p.rank = me;
    for (i = 0; i < NPIECE; i++) { p.off[i] = total; total += (size_t)piece_elems[i]; }
    p.off[NPIECE] = total;
    p.data = (float*)calloc(total, sizeof(float));
    p.out = (float*)calloc(total, sizeof(float));
    ref_data = (float*)calloc(total, sizeof(float));
    ref_out = (float*)calloc(total, sizeof(float));
    for (v = 0; v < N_VARIANTS; v++) {
        vres* R = &A->v[v][me];
        cc_graph* g = NULL;
        cc_graph* fg = NULL;
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_schedule s, s0;
        cc_link link = { 0 };
        cc_result r;
        memset(&s, 0, sizeof s);
        memset(&s0, 0, sizeof s0);
        /* a fixed cost per step below the measured collectives' 200 us, so
           that on 2 and on 3 ranks (2(n-1) steps) any two fused cost less
           than apart */
        link.latency_us = 40; link.us_per_byte = 0.001;
        if (v == V_LINK) rd.link = &link;
        if (v == V_BUCKET) rd.max_bucket_bytes = BUCKET_LIMIT;
        r = build_pieces(ctx, &p, jobs, cc_rank_world_comm(rank), v == V_BLOCKER ? L_BLOCKER : L_PLAIN, &g);
        /* program order */
        memset(p.data, 0, total * sizeof(float));
        memset(p.out, 0, total * sizeof(float));
        if (r == CC_OK) r = tu_run_step(rank, g, NULL);
        memcpy(ref_data, p.data, total * sizeof(float));
        memcpy(ref_out, p.out, total * sizeof(float));
        /* fused, scheduled */
        if (r == CC_OK) r = cc_graph_fuse(ctx, g, &rd, &fg, &rep);
        if (r == CC_OK) {
            R->validated = cc_graph_validate(fg) == CC_OK;
            R->colls_before = tu_count_on(g, CC_STREAM_COMM);
            R->colls_after = tu_count_on(fg, CC_STREAM_COMM);
            R->report_colls_after = rep.n_colls_after;
            R->n_changed = rep.n_changed;
            R->mk_before = rep.makespan_before_us;
            R->mk_after = rep.makespan_after_us;
            R->fingerprint = tu_graph_fingerprint(fg);
            R->bucket_ok = 1;
            for (i = 0; i < cc_graph_n_ops(fg); i++) {
                cc_op op = cc_graph_op(fg, i);
                if (cc_op_demand(fg, op, CC_STREAM_COMM) != 1) continue;
                if (!R->first_coll_name[0]) snprintf(R->first_coll_name, sizeof R->first_coll_name, "%s", cc_op_name(fg, op));
            }
            r = cc_sched_solve(ctx, g, &rd.sched, &s0);
        }
        if (r == CC_OK) r = cc_sched_solve(ctx, fg, &rd.sched, &s);
        if (r == CC_OK) {
            R->mk_orig_judged = s0.makespan_us;
            R->mk_fused_judged = s.makespan_us;
            memset(p.data, 0, total * sizeof(float));
            memset(p.out, 0, total * sizeof(float));
            r = tu_run_step(rank, fg, s.order);
        }
        if (r == CC_OK) {
            size_t j;
            R->same_as_program_order = !memcmp(p.data, ref_data, total * sizeof(float)) &&
                                       !memcmp(p.out, ref_out, total * sizeof(float));
            R->reduced_right = 1;
            for (i = 0; i < NPIECE; i++)
                for (j = 0; j < (size_t)piece_elems[i]; j++) {
                    float sum = fill_value(0, i, j);
                    int q;
                    for (q = 1; q < A->n_ranks; q++) sum += fill_value(q, i, j);   /* rank order, as the world reduces */
                    if (p.data[p.off[i] + j] != sum || p.out[p.off[i] + j] != sum * 0.5f + 1.0f) R->reduced_right = 0;
                }
        }
        if (r == CC_OK && v == V_BUCKET) {
            /* the durations are exactly linear in the bytes, so the fitted model is exact and a fused
               op's duration says its size: none above that of BUCKET_LIMIT bytes */
            for (i = 0; i < cc_graph_n_ops(fg); i++) {
                cc_op op = cc_graph_op(fg, i);
                if (cc_op_demand(fg, op, CC_STREAM_COMM) == 1 && cc_op_duration_us(fg, op) > ar_duration(BUCKET_LIMIT / sizeof(float)) + 1e-6)
                    R->bucket_ok = 0;
            }
        }
        R->ok = r == CC_OK;
        if (r != CC_OK) snprintf(R->err, sizeof R->err, "%s", cc_last_error(ctx));
        cc_schedule_release(ctx, &s);
        cc_schedule_release(ctx, &s0);
        cc_graph_destroy(fg);
        cc_graph_destroy(g);
        if (r != CC_OK) break;
    }
    free(p.data); free(p.out); free(ref_data); free(ref_out);
    return CC_OK;
}


static void test_world_fusion(void) {
    static world_arg A;
    int nr, v, r;
    for (nr = 2; nr <= 3; nr++) {
        cc_result rc;
        char err[512];
        memset(&A, 0, sizeof A);
        A.n_ranks = nr;
        tu_run_world(nr, fuse_rank, &A, &rc, err, sizeof err);
        CHECK_RES(NULL, rc, CC_OK, "%d ranks: the world ran (%s)", nr, err);
        for (v = 0; v < N_VARIANTS; v++) {
            vres* R = A.v[v];
            int all_ok = 1, same = 1, right = 1, valid = 1, fp_same = 1;
            for (r = 0; r < nr; r++) {
                all_ok &= R[r].ok; same &= R[r].same_as_program_order; right &= R[r].reduced_right; valid &= R[r].validated;
                fp_same &= R[r].fingerprint == R[0].fingerprint;
            }
            CHECK(all_ok, "%d ranks, %s: program order, fusion, schedule and the fused step ran (%s)", nr, variant_name[v],
                  R[0].ok ? R[nr - 1].err : R[0].err);
            if (!all_ok) continue;
            CHECK(valid, "%d ranks, %s: the fused graph validates", nr, variant_name[v]);
            CHECK(same, "%d ranks, %s: the fused, scheduled step leaves arrays bit-identical to program order", nr, variant_name[v]);
            CHECK(right, "%d ranks, %s: and equal to the sums over ranks computed here", nr, variant_name[v]);
            CHECK(fp_same, "%d ranks, %s: every rank made the same fused graph", nr, variant_name[v]);
            CHECK(R[0].mk_fused_judged <= R[0].mk_orig_judged, "%d ranks, %s: judged makespan %.3f <= the original's %.3f", nr,
                  variant_name[v], R[0].mk_fused_judged, R[0].mk_orig_judged);
            CHECK(R[0].mk_after == R[0].mk_fused_judged && R[0].mk_before == R[0].mk_orig_judged,
                  "%d ranks, %s: the report's makespans are the judging schedule's (%.3f, %.3f)", nr, variant_name[v],
                  R[0].mk_before, R[0].mk_after);
            CHECK_INT(R[0].report_colls_after, R[0].colls_after, "%d ranks, %s: the report counts the collectives", nr, variant_name[v]);
            switch (v) {
                case V_FIT:
                case V_LINK:
                    CHECK_INT(R[0].colls_after, 1, "%d ranks, %s: six all-reduces with a large fixed cost become one", nr,
                              variant_name[v]);
                    CHECK_INT(R[0].n_changed, 1, "%d ranks, %s: one bucket", nr, variant_name[v]);
                    CHECK(!strcmp(R[0].first_coll_name, "ar0+5"), "%d ranks, %s: it is named after its first member: '%s'", nr,
                          variant_name[v], R[0].first_coll_name);
                    CHECK(R[0].mk_after < R[0].mk_before, "%d ranks, %s: fusion pays: %.1f -> %.1f us", nr, variant_name[v],
                          R[0].mk_before, R[0].mk_after);
                    break;
                case V_BLOCKER:
                    CHECK_INT(R[0].colls_after, 2, "%d ranks: a reader of ar0's result between ar0 and ar1 keeps ar0 apart; "
                              "ar1..ar5 fuse", nr);
                    CHECK(!strcmp(R[0].first_coll_name, "ar0"), "%d ranks: ar0 is left as it was ('%s')", nr, R[0].first_coll_name);
                    break;
                case V_BUCKET:
                    CHECK(R[0].bucket_ok, "%d ranks: every bucket is at most %d bytes", nr, (int)BUCKET_LIMIT);
                    CHECK(R[0].colls_after >= 3 && R[0].colls_after < 6, "%d ranks: the limit leaves %d collectives (3..5)", nr,
                          R[0].colls_after);
                    break;
            }
        }
    }
}

/* ---- graphs only ------------------------------------------------------------
   Two (or more) collectives after compute ops; durations with a large fixed
   part so that fusion pays wherever it is allowed. The comm pointers are
   only compared (no link model). */
typedef struct gcoll {
    cc_coll_kind kind;
    cc_dtype dtype;
    cc_reduce_op reduce;
    const void* comm;
    void* send;
    void* recv;
    size_t n;
} gcoll;

static cc_graph* build_colls(cc_context* ctx, const gcoll* cs, int n, int with_between_reader, int stream_of_second) {
    cc_graph* g = NULL;
    cc_graph_desc gd = {0};
    cc_buffer bufs[16];
    int i;
    gd.n_streams = 3;
    if (n > 16 || cc_graph_create(ctx, &gd, &g) != CC_OK) return NULL;
    for (i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "b%d", i);
        if (cc_graph_add_buffer(g, name, cs[i].n * 8, &bufs[i]) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    for (i = 0; i < n; i++) {
        cc_op_desc d = {0};
        cc_collective c;
        cc_region rg = {0};
        char name[32];
        rg = whole(bufs[i], cs[i].n * 4);
        snprintf(name, sizeof name, "make%d", i);
        d.name = name; d.duration_us = 5; d.writes = &rg; d.n_writes = 1;
        cc_graph_add_op(g, &d, NULL);
        if (with_between_reader && i == 1) {
            cc_region r0 = whole(bufs[0], cs[0].n * 4);
            d = (cc_op_desc){0};
            d.name = "reader_of_0"; d.duration_us = 5; d.reads = &r0; d.n_reads = 1;
            cc_graph_add_op(g, &d, NULL);
        }
        memset(&c, 0, sizeof c);
        c.kind = cs[i].kind; c.dtype = cs[i].dtype; c.reduce = cs[i].reduce; c.comm = (cc_comm*)cs[i].comm;
        c.n_elems = cs[i].n; c.send_buf = cs[i].send; c.recv_buf = cs[i].recv;
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "c%d", i);
        d.name = name; d.duration_us = 300 + 0.01 * (double)(cs[i].n * 4 * (size_t)(i + 1));
        d.stream = i == 1 ? stream_of_second : CC_STREAM_COMM; d.coll = &c;
        d.reads = &rg; d.n_reads = 1; d.writes = &rg; d.n_writes = 1;
        if (cc_graph_add_op(g, &d, NULL) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    return g;
}

/* Fuses; returns the collectives after (or -1) and sets *changed. */
static int fuse_count(cc_context* ctx, cc_graph* g, const cc_rewrite_desc* rd, int* changed) {
    cc_graph* fg = NULL;
    cc_rewrite_report rep;
    int n;
    if (!g || cc_graph_fuse(ctx, g, rd, &fg, &rep) != CC_OK) return -1;
    n = rep.n_colls_after;
    if (changed) *changed = rep.n_changed;
    cc_graph_destroy(fg);
    return n;
}

static void test_never_fused(void) {
    cc_context* ctx;
    static float mem[4096], other[4096];
    int comm_a, comm_b;   /* their addresses stand for two communicators */
    gcoll base[2], c[2];
    cc_graph* g;
    int n, changed = 0;
    cc_context_create(NULL, &ctx);
    memset(base, 0, sizeof base);
    base[0].kind = CC_COLL_ALL_REDUCE; base[0].dtype = CC_DTYPE_FLOAT32; base[0].reduce = CC_REDUCE_SUM; base[0].comm = &comm_a;
    base[0].n = 256; base[0].send = mem; base[0].recv = mem;
    base[1] = base[0];
    base[1].n = 512; base[1].send = mem + 256; base[1].recv = mem + 256;

    /* the positive control: everything the same, contiguous */
    g = build_colls(ctx, base, 2, 0, CC_STREAM_COMM);
    n = fuse_count(ctx, g, NULL, &changed);
    CHECK(n == 1 && changed == 1, "control: two contiguous in-place sums on one comm fuse (%d collectives, %d buckets)", n, changed);
    cc_graph_destroy(g);
    /* addresses in the other order: still one range */
    memcpy(c, base, sizeof c);
    c[0].send = c[0].recv = mem + 512;
    c[1].send = c[1].recv = mem;
    g = build_colls(ctx, c, 2, 0, CC_STREAM_COMM);
    CHECK_INT(fuse_count(ctx, g, NULL, NULL), 1, "control: the second below the first in memory fuses too");
    cc_graph_destroy(g);
    /* out of place, both sides contiguous alike */
    memcpy(c, base, sizeof c);
    c[0].recv = other; c[1].recv = other + 256;
    g = build_colls(ctx, c, 2, 0, CC_STREAM_COMM);
    CHECK_INT(fuse_count(ctx, g, NULL, NULL), 1, "control: out of place with both ranges contiguous fuses");
    cc_graph_destroy(g);

    {
        int i;
        for (i = 0; i < 9; i++) {
            memcpy(c, base, sizeof c);
            switch (i) {
                case 0: c[1].send = c[1].recv = mem + 300; break;                                  /* a gap */
                case 1: c[1].comm = &comm_b; break;
                case 2: c[1].dtype = CC_DTYPE_INT32; break;
                case 3: c[1].reduce = CC_REDUCE_MAX; break;
                case 4: c[0].kind = c[1].kind = CC_COLL_BROADCAST; break;
                case 5: c[0].kind = c[1].kind = CC_COLL_ALL_GATHER; c[0].recv = other; c[1].recv = other + 256 * 2; break;
                case 6: c[0].kind = c[1].kind = CC_COLL_REDUCE_SCATTER; c[0].recv = other; c[1].recv = other + 128; break;
                case 7: c[1].recv = other; break;                                                  /* in place and not */
                case 8: c[1].send = c[1].recv = mem + 128; break;                                  /* overlapping */
            }
            g = build_colls(ctx, c, 2, 0, CC_STREAM_COMM);
            n = fuse_count(ctx, g, NULL, &changed);
            {
                static const char* what[9] = { "a gap between the buffers", "different communicators", "different element types",
                                               "different reductions", "broadcasts", "all-gathers", "reduce-scatters",
                                               "one in place, one not", "overlapping buffers" };
                CHECK(n == 2 && changed == 0, "never fused: %s (%d collectives)", what[i], n);
            }
            cc_graph_destroy(g);
        }
    }
    /* different streams */
    g = build_colls(ctx, base, 2, 0, 2);
    CHECK_INT(fuse_count(ctx, g, NULL, NULL), 2, "never fused: collectives on different streams");
    cc_graph_destroy(g);
    /* another collective between them on the stream */
    {
        gcoll three[3];
        three[0] = base[0];
        three[1] = base[0]; three[1].kind = CC_COLL_BROADCAST; three[1].send = three[1].recv = other; three[1].n = 64;
        three[1].comm = &comm_a;
        three[2] = base[1];
        g = build_colls(ctx, three, 3, 0, CC_STREAM_COMM);
        CHECK_INT(fuse_count(ctx, g, NULL, NULL), 3, "never fused: two all-reduces with a broadcast between them on their stream");
        cc_graph_destroy(g);
    }
    /* a reader of the first member's region between the members */
    g = build_colls(ctx, base, 2, 1, CC_STREAM_COMM);
    CHECK_INT(fuse_count(ctx, g, NULL, NULL), 2, "never fused: an op between them reads the first member's region");
    cc_graph_destroy(g);
    /* an explicit edge from an op between them to the second member */
    g = build_colls(ctx, base, 2, 0, CC_STREAM_COMM);
    if (g) {
        cc_op_desc d = {0};
        cc_graph* g2 = NULL;
        cc_op mid;
        /* rebuild with an unrelated op between c0 and c1 and an edge mid -> c1 */
        cc_graph_destroy(g);
        g = NULL;
        cc_graph_create(ctx, NULL, &g2);
        {
            cc_buffer b0, b1;
            cc_region r0 = {0}, r1 = {0};
            cc_collective co;
            cc_op c1;
            cc_graph_add_buffer(g2, "b0", 1024, &b0);
            cc_graph_add_buffer(g2, "b1", 2048, &b1);
            r0 = whole(b0, 1024); r1 = whole(b1, 2048);
            memset(&co, 0, sizeof co);
            co.kind = CC_COLL_ALL_REDUCE; co.comm = (cc_comm*)&comm_a; co.n_elems = 256; co.send_buf = co.recv_buf = mem;
            d.name = "c0"; d.duration_us = 300; d.stream = CC_STREAM_COMM; d.coll = &co;
            d.reads = &r0; d.n_reads = 1; d.writes = &r0; d.n_writes = 1;
            cc_graph_add_op(g2, &d, NULL);
            d = (cc_op_desc){0};
            d.name = "mid"; d.duration_us = 5;
            cc_graph_add_op(g2, &d, &mid);
            co.n_elems = 512; co.send_buf = co.recv_buf = mem + 256;
            d = (cc_op_desc){0};
            d.name = "c1"; d.duration_us = 320; d.stream = CC_STREAM_COMM; d.coll = &co;
            d.reads = &r1; d.n_reads = 1; d.writes = &r1; d.n_writes = 1;
            cc_graph_add_op(g2, &d, &c1);
            CHECK_INT(fuse_count(ctx, g2, NULL, NULL), 1, "control: an unrelated op between the members does not stop fusion");
            cc_graph_add_dep(g2, mid, c1);
            CHECK_INT(fuse_count(ctx, g2, NULL, NULL), 2, "never fused: an op between them has an explicit edge to a member");
        }
        cc_graph_destroy(g2);
    }
    cc_context_destroy(ctx);
}

/* Explicit edges of members become the fused op's; the input is unchanged. */
static void test_edges_and_input(void) {
    cc_context* ctx;
    cc_graph* g;
    cc_graph* fg = NULL;
    static float mem[1024];
    int comm;
    gcoll c[3];
    cc_op before, after;
    uint64_t fp0;
    int i, n0;
    cc_context_create(NULL, &ctx);
    memset(c, 0, sizeof c);
    for (i = 0; i < 3; i++) {
        c[i].kind = CC_COLL_ALL_REDUCE; c[i].comm = &comm; c[i].n = (size_t)(64 * (i + 1));
        c[i].send = c[i].recv = mem + (i == 0 ? 0 : i == 1 ? 64 : 192);
    }
    g = build_colls(ctx, c, 3, 0, CC_STREAM_COMM);
    {
        cc_op_desc d = {0};
        d.name = "before"; d.duration_us = 1;
        cc_graph_add_op(g, &d, &before);
        d.name = "after"; d.duration_us = 1;
        cc_graph_add_op(g, &d, &after);
    }
    /* before (added last, but an edge) -> c1; c2 -> after */
    cc_graph_add_dep(g, before, cc_graph_op(g, 3));
    cc_graph_add_dep(g, cc_graph_op(g, 5), after);
    cc_graph_validate(g);
    fp0 = tu_graph_fingerprint(g);
    n0 = cc_graph_n_ops(g);
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, NULL, &fg, NULL), CC_OK, "fuse with a NULL desc and report");
    if (fg) {
        int fused = -1;
        cc_op preds[8];
        int np, j, has_before = 0;
        CHECK_INT(cc_graph_n_ops(fg), n0 - 2, "three all-reduces became one");
        for (i = 0; i < cc_graph_n_ops(fg); i++)
            if (!strcmp(cc_op_name(fg, cc_graph_op(fg, i)), "c0+2")) fused = i;
        CHECK(fused >= 0, "the fused op is named 'c0+2'");
        CHECK_RES(ctx, cc_graph_validate(fg), CC_OK, "the fused graph validates");
        if (fused >= 0) {
            np = cc_op_preds(fg, cc_graph_op(fg, fused), preds, 8);
            for (j = 0; j < np && j < 8; j++) has_before |= !strcmp(cc_op_name(fg, preds[j]), "before");
            CHECK(has_before, "the edge before -> c1 became before -> c0+2");
            np = cc_op_preds(fg, cc_graph_op(fg, cc_graph_n_ops(fg) - 1), preds, 8);
            CHECK(np >= 1 && cc_op_index(fg, preds[0]) == fused, "the edge c2 -> after became c0+2 -> after");
            CHECK(fused == 3, "the fused op sits at its last member's place (index %d, after make0..make2)", fused);
        }
        cc_graph_destroy(fg);
    }
    CHECK(tu_graph_fingerprint(g) == fp0 && cc_graph_n_ops(g) == n0, "the input graph is unchanged");
    CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "and still validates");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* The link model gives the fused duration; max_bucket_bytes holds. */
static cc_result link_rank(cc_rank* rank, void* user) {
    double* outv = (double*)user;
    cc_context* ctx = cc_rank_context(rank);
    static float mem[2][4096];
    gcoll c[4];
    cc_graph* g;
    cc_graph* fg = NULL;
    cc_rewrite_desc rd = {0};
    cc_link link = { 0 };
    int i, me = cc_rank_index(rank);
    memset(c, 0, sizeof c);
    for (i = 0; i < 4; i++) {
        c[i].kind = CC_COLL_ALL_REDUCE; c[i].comm = cc_rank_world_comm(rank); c[i].n = 256;
        c[i].send = c[i].recv = mem[me] + 256 * i;
    }
    link.latency_us = 500; link.us_per_byte = 0.002;
    rd.link = &link;
    g = build_colls(ctx, c, 4, 0, CC_STREAM_COMM);
    for (i = 0; g && i < cc_graph_n_ops(g); i++)   /* the durations the link gives (as if profiled) */
        if (cc_op_demand(g, cc_graph_op(g, i), CC_STREAM_COMM) == 1)
            cc_op_set_duration(g, cc_graph_op(g, i), tu_flat_us(&link, CC_COLL_ALL_REDUCE, 1024, 2));
    if (cc_graph_fuse(ctx, g, &rd, &fg, NULL) == CC_OK) {
        for (i = 0; i < cc_graph_n_ops(fg); i++)
            if (cc_op_demand(fg, cc_graph_op(fg, i), CC_STREAM_COMM) == 1) {
                outv[me * 4 + 0] += 1;
                outv[me * 4 + 1] = cc_op_duration_us(fg, cc_graph_op(fg, i));
            }
        cc_graph_destroy(fg);
    }
    rd.max_bucket_bytes = 2048;
    if (cc_graph_fuse(ctx, g, &rd, &fg, NULL) == CC_OK) {
        for (i = 0; i < cc_graph_n_ops(fg); i++)
            if (cc_op_demand(fg, cc_graph_op(fg, i), CC_STREAM_COMM) == 1) outv[me * 4 + 2] += 1;
        cc_graph_destroy(fg);
    }
    rd.max_bucket_bytes = 1024;   /* one member's size: nothing fits two */
    if (cc_graph_fuse(ctx, g, &rd, &fg, NULL) == CC_OK) {
        for (i = 0; i < cc_graph_n_ops(fg); i++)
            if (cc_op_demand(fg, cc_graph_op(fg, i), CC_STREAM_COMM) == 1) outv[me * 4 + 3] += 1;
        cc_graph_destroy(fg);
    }
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_link_and_limit(void) {
    double outv[8];
    cc_result rc;
    char err[512];
    cc_link link = { 0 };
    memset(outv, 0, sizeof outv);
    link.latency_us = 500; link.us_per_byte = 0.002;
    tu_run_world(2, link_rank, outv, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "two ranks (%s)", err);
    CHECK(outv[0] == 1 && outv[4] == 1, "with a link of 500 us latency four all-reduces become one (%g, %g)", outv[0], outv[4]);
    CHECK_NEAR(outv[1], tu_flat_us(&link, CC_COLL_ALL_REDUCE, 4096, 2), 1e-3,
               "its duration is the link model's for 4096 bytes on 2 ranks");
    CHECK(outv[2] == 2 && outv[6] == 2, "max_bucket_bytes 2048: two buckets of two (%g)", outv[2]);
    CHECK(outv[3] == 4, "max_bucket_bytes below two members: nothing fused (%g)", outv[3]);
}

/* ---- bad arguments ---------------------------------------------------------------*/
static void test_bad_args(void) {
    cc_context* ctx;
    cc_graph* g;
    cc_graph* fg = (cc_graph*)&fg;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    cc_link bad = { 0 };
    static float mem[1024];
    int comm;
    gcoll c[2];
    cc_context_create(NULL, &ctx);
    memset(c, 0, sizeof c);
    c[0].kind = c[1].kind = CC_COLL_ALL_REDUCE; c[0].comm = c[1].comm = &comm; c[0].n = 64; c[1].n = 64;
    c[0].send = c[0].recv = mem; c[1].send = c[1].recv = mem + 64;
    g = build_colls(ctx, c, 2, 0, CC_STREAM_COMM);
    CHECK_INT(cc_graph_fuse(NULL, g, NULL, &fg, NULL), CC_ERR_INVALID_ARG, "no context");
    CHECK(fg == NULL, "*out is NULL after a failure");
    fg = (cc_graph*)&fg;
    CHECK_RES(ctx, cc_graph_fuse(ctx, NULL, NULL, &fg, NULL), CC_ERR_INVALID_ARG, "no graph");
    CHECK_CONTAINS(cc_last_error(ctx), "cc_graph_fuse", "the message names the function");
    CHECK(fg == NULL, "*out is NULL");
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, NULL, NULL, NULL), CC_ERR_INVALID_ARG, "no out");
    rd = (cc_rewrite_desc){0};
    rd.max_evaluations = -1;
    memset(&rep, 0x55, sizeof rep);
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_ERR_INVALID_ARG, "max_evaluations < 0");
    CHECK_CONTAINS(cc_last_error(ctx), "max_evaluations", "the message names the field");
    CHECK(rep.n_evaluations == 0 && rep.n_ops_before == 0, "the report is zero after a failure");
    rd = (cc_rewrite_desc){0};
    rd.full_judgements = -1;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "full_judgements < 0");
    CHECK_CONTAINS(cc_last_error(ctx), "full_judgements", "the message names the field");
    rd = (cc_rewrite_desc){0};
    rd.max_chunks = -2;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "max_chunks < 0");
    rd = (cc_rewrite_desc){0};
    bad.latency_us = NAN; bad.us_per_byte = 0;
    rd.link = &bad;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "a link with NaN latency");
    CHECK_CONTAINS(cc_last_error(ctx), "latency_us", "the message names it");
    bad.latency_us = 1; bad.us_per_byte = -1;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "a link with negative us_per_byte");
    rd = (cc_rewrite_desc){0};
    rd.sched.method = (cc_sched_method)99;
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, NULL), CC_ERR_INVALID_ARG, "an unknown judging method");
    CHECK_CONTAINS(cc_last_error(ctx), "method", "the scheduler's message says why");
    CHECK(fg == NULL, "*out is NULL");
    /* a cycle in the input */
    cc_graph_add_dep(g, cc_graph_op(g, 1), cc_graph_op(g, 0));   /* c0 before make0, which it reads */
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, NULL, &fg, NULL), CC_ERR_CYCLE, "an input with a cycle");
    cc_graph_destroy(g);
    /* zero desc: AUTO is the zero method and judges like LIST */
    g = build_colls(ctx, c, 2, 0, CC_STREAM_COMM);
    memset(&rd, 0, sizeof rd);
    memset(&rep, 0, sizeof rep);
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &fg, &rep), CC_OK, "an all-zero desc means the defaults");
    CHECK(rep.n_evaluations == 1 && rep.n_candidates == 2, "one candidate judged, two collectives considered (%d, %d)",
          rep.n_evaluations, rep.n_candidates);
    cc_graph_destroy(fg);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* ---- a failing allocator ------------------------------------------------------------*/
static int fused_into_one(const cc_rewrite_report* rep) { return rep->n_colls_after == 1; }
static void test_failing_allocator(void) {
    tu_alloc ta;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_graph* g;
    static float mem[4096];
    int comm, i;
    gcoll c[5];
    memset(&ta, 0, sizeof ta);
    cd.allocator = tu_allocator(&ta);
    if (cc_context_create(&cd, &ctx) != CC_OK) { CHECK(0, "context"); return; }
    memset(c, 0, sizeof c);
    for (i = 0; i < 5; i++) {
        c[i].kind = CC_COLL_ALL_REDUCE; c[i].comm = &comm; c[i].n = (size_t)(64 + 32 * i);
        c[i].send = c[i].recv = mem + (i ? c[i - 1].n + (size_t)((float*)c[i - 1].send - mem) : 0);
    }
    g = build_colls(ctx, c, 5, 0, CC_STREAM_COMM);
    check_rewrite_oom(ctx, &ta, g, cc_graph_fuse, fused_into_one, "fuses five all-reduces into one");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    CHECK_INT(ta.live, 0, "every block is freed at the end");
    CHECK_INT(ta.bad_frees, 0, "no foreign frees");
}

/* ---- determinism ---------------------------------------------------------------*/
static void test_determinism(void) {
    cc_context* ctx;
    static float mem[8192];
    int comm_a, comm_b, run, i;
    gcoll c[12];
    uint64_t fp[2];
    int n_ops[2];
    char names[2][2048];
    tu_rng rng;
    cc_context_create(NULL, &ctx);
    rng.s = 4242;
    memset(c, 0, sizeof c);
    {
        size_t off = 0;
        for (i = 0; i < 12; i++) {
            c[i].kind = tu_randint(&rng, 0, 5) ? CC_COLL_ALL_REDUCE : CC_COLL_BROADCAST;
            c[i].comm = tu_randint(&rng, 0, 3) ? &comm_a : &comm_b;
            c[i].n = (size_t)tu_randint(&rng, 16, 200);
            if (tu_randint(&rng, 0, 4) == 0) off += 8;   /* sometimes a gap */
            c[i].send = c[i].recv = mem + off;
            off += c[i].n;
        }
    }
    for (run = 0; run < 2; run++) {
        cc_graph* g = build_colls(ctx, c, 12, 0, CC_STREAM_COMM);
        cc_graph* fg = NULL;
        names[run][0] = 0;
        fp[run] = 0;
        n_ops[run] = -1;
        if (g && cc_graph_fuse(ctx, g, NULL, &fg, NULL) == CC_OK) {
            fp[run] = tu_graph_fingerprint(fg);
            n_ops[run] = cc_graph_n_ops(fg);
            for (i = 0; i < cc_graph_n_ops(fg); i++) {
                size_t len = strlen(names[run]);
                snprintf(names[run] + len, sizeof names[run] - len, "%s %.3f;", cc_op_name(fg, cc_graph_op(fg, i)),
                         cc_op_duration_us(fg, cc_graph_op(fg, i)));
            }
            cc_graph_destroy(fg);
        }
        cc_graph_destroy(g);
    }
    CHECK(fp[0] != 0 && fp[0] == fp[1] && n_ops[0] == n_ops[1] && !strcmp(names[0], names[1]),
          "two runs on the same graph give identical op names and durations");
    NOTE("%s", names[0]);
    /* the search's budget of full solves: kept within, the report's
       figures the scheduler's own on the input and the result */
    for (run = 0; run < 3; run++) {
        static const int budgets[] = { 1, 3, 1000 };
        cc_graph* g = build_colls(ctx, c, 12, 0, CC_STREAM_COMM);
        cc_graph* fg = NULL;
        cc_rewrite_desc rd = {0};
        cc_rewrite_report rep;
        cc_schedule s0, s1;
        memset(&rep, 0, sizeof rep);
        memset(&s0, 0, sizeof s0);
        memset(&s1, 0, sizeof s1);
        rd.full_judgements = budgets[run];
        if (!g || cc_graph_fuse(ctx, g, &rd, &fg, &rep) != CC_OK || cc_sched_solve(ctx, g, NULL, &s0) != CC_OK ||
            cc_sched_solve(ctx, fg, NULL, &s1) != CC_OK) {
            CHECK(0, "full_judgements %d: %s", budgets[run], cc_last_error(ctx));
        } else {
            CHECK(rep.n_full_judgements <= budgets[run], "full_judgements %d: %d full solves", budgets[run], rep.n_full_judgements);
            CHECK(fabs(rep.makespan_before_us - s0.makespan_us) < 1e-6 && fabs(rep.makespan_after_us - s1.makespan_us) < 1e-6 &&
                      s1.makespan_us <= s0.makespan_us,
                  "full_judgements %d: the report's makespans are the scheduler's, the result no longer (%.3f -> %.3f us), "
                  "%d -> %d collectives", budgets[run], s0.makespan_us, s1.makespan_us, rep.n_colls_before, rep.n_colls_after);
            CHECK(rep.n_colls_after < rep.n_colls_before, "full_judgements %d: some all-reduces fused", budgets[run]);
        }
        cc_schedule_release(ctx, &s0);
        cc_schedule_release(ctx, &s1);
        cc_graph_destroy(fg);
        cc_graph_destroy(g);
    }
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_world_fusion);
    TH_RUN(test_never_fused);
    TH_RUN(test_edges_and_input);
    TH_RUN(test_link_and_limit);
    TH_RUN(test_bad_args);
    TH_RUN(test_failing_allocator);
    TH_RUN(test_determinism);
    return th_done();
}
