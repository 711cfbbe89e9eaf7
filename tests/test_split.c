/* tests/test_split.c - strided (2-D) regions and split rules.

   Dependencies derived from strided regions are checked against a
   brute-force byte-overlap test on random layouts: every pair of ops that
   touch a common byte of one buffer (one of them writing) must be ordered by
   the derived edges (through the transitive closure), and every derived
   edge must join such a pair. A bounding range would order pairs whose
   bytes interleave without meeting: those edges count as wrong here.
   Then the region checks: rows outside the buffer, a stride below the row,
   a strided collective, split_rows that does not divide n_rows.

   Split rules: each built-in rule along each axis it allows, for chunk
   counts that divide the axis and counts that do not, is checked by
   cc_op_split_check and then run: the test's own kernels compute each
   chunk from the regions the rule gives (reading a region's rows and
   columns off its bytes), and the chunks together must equal the unsplit
   op. Bit-identical (memcmp) for rows, columns and heads, whose every
   output element is summed as the whole op sums it; within 1e-5 relative
   for a matmul's reduction dimension, whose partial sums are added in
   another order. A column split of a row-major matrix is checked against
   a hand computation. Bad rules (a user rule's regions outside a buffer,
   chunks that overlap or miss part of a region, a whole write that is no
   partial sum), a forbidden axis and a count above the axis's length are
   refused with messages naming the op and the rule, the graph unchanged. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define NB 2        /* buffers */
#define BYTES 192   /* each */
#define NOPS 10

static cc_context* ctx;

static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c; (void)msg; (void)msg_size;
    return CC_OK;
}
static const cc_comm_fns idle_family = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

/* A random region of a BYTES buffer: contiguous, or rows of a row-major
   matrix seen through a block of its columns (the usual strided case),
   or rows with an arbitrary stride. */
static cc_region random_region(tu_rng* rng, cc_buffer b) {
    cc_region r;
    int kind = tu_randint(rng, 0, 2);
    memset(&r, 0, sizeof r);
    r.buffer = b;
    if (kind == 0) {
        r.offset_bytes = (uint64_t)tu_randint(rng, 0, BYTES - 1);
        r.n_bytes = (uint64_t)tu_randint(rng, 1, (int)(BYTES - r.offset_bytes));
    } else {
        int stride = kind == 1 ? 8 * tu_randint(rng, 2, 6) : tu_randint(rng, 2, 40);
        int row = tu_randint(rng, 1, stride);
        int rows = tu_randint(rng, 2, 8);
        int span = (rows - 1) * stride + row;
        while (span > BYTES) { rows--; span = (rows - 1) * stride + row; }
        if (rows < 2) { r.offset_bytes = 0; r.n_bytes = (uint64_t)row; return r; }
        if (kind == 1) r.offset_bytes = (uint64_t)(8 * tu_randint(rng, 0, (BYTES - span) / 8));
        else r.offset_bytes = (uint64_t)tu_randint(rng, 0, BYTES - span);
        r.n_bytes = (uint64_t)row;
        r.n_rows = (uint64_t)rows;
        r.stride_bytes = (uint64_t)stride;
    }
    return r;
}

/* The bytes of r, as a mask of BYTES, by the definition of the form. */
static void mask_of(const cc_region* r, unsigned char* m) {
    uint64_t row, j, rows = r->n_rows > 1 ? r->n_rows : 1;
    memset(m, 0, BYTES);
    for (row = 0; row < rows; row++)
        for (j = 0; j < r->n_bytes; j++) m[r->offset_bytes + row * (rows > 1 ? r->stride_bytes : 0) + j] = 1;
}

static int masks_meet(const unsigned char* a, const unsigned char* b) {
    int i;
    for (i = 0; i < BYTES; i++) if (a[i] && b[i]) return 1;
    return 0;
}

static void test_strided_dependencies(void) {
    tu_rng rng = {7};
    int trial, bad_missing = 0, bad_extra = 0, n_pairs = 0, n_interleaved = 0;
    for (trial = 0; trial < 300; trial++) {
        cc_graph* g = NULL;
        cc_buffer bufs[NB];
        cc_region rd[NOPS], wr[NOPS];
        int has_rd[NOPS], has_wr[NOPS], i, j, k, n = tu_randint(&rng, 2, NOPS);
        unsigned char mr[NOPS][BYTES], mw[NOPS][BYTES], conflict[NOPS][NOPS], reach[NOPS][NOPS];
        cc_op ops[NOPS];
        if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
        for (i = 0; i < NB; i++) cc_graph_add_buffer(g, i ? "b1" : "b0", BYTES, &bufs[i]);
        for (i = 0; i < n; i++) {
            cc_op_desc d;
            memset(&d, 0, sizeof d);
            has_rd[i] = tu_randint(&rng, 0, 3) > 0;
            has_wr[i] = !has_rd[i] || tu_randint(&rng, 0, 1);
            rd[i] = random_region(&rng, bufs[tu_randint(&rng, 0, NB - 1)]);
            wr[i] = random_region(&rng, bufs[tu_randint(&rng, 0, NB - 1)]);
            mask_of(&rd[i], mr[i]);
            mask_of(&wr[i], mw[i]);
            d.duration_us = 1;
            if (has_rd[i]) { d.reads = &rd[i]; d.n_reads = 1; }
            if (has_wr[i]) { d.writes = &wr[i]; d.n_writes = 1; }
            if (cc_graph_add_op(g, &d, &ops[i]) != CC_OK) {
                CHECK(0, "trial %d: op %d is refused: %s", trial, i, cc_last_error(ctx));
                cc_graph_destroy(g);
                return;
            }
        }
        memset(conflict, 0, sizeof conflict);
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++) {
#define SAME(x, y) ((x).buffer.id == (y).buffer.id)
                int c = (has_wr[i] && has_rd[j] && SAME(wr[i], rd[j]) && masks_meet(mw[i], mr[j])) ||
                        (has_rd[i] && has_wr[j] && SAME(rd[i], wr[j]) && masks_meet(mr[i], mw[j])) ||
                        (has_wr[i] && has_wr[j] && SAME(wr[i], wr[j]) && masks_meet(mw[i], mw[j]));
                int bounding = (has_wr[i] && has_wr[j] && SAME(wr[i], wr[j]) &&
                                wr[i].offset_bytes < wr[j].offset_bytes + (wr[j].n_rows > 1 ? (wr[j].n_rows - 1) * wr[j].stride_bytes : 0) + wr[j].n_bytes &&
                                wr[j].offset_bytes < wr[i].offset_bytes + (wr[i].n_rows > 1 ? (wr[i].n_rows - 1) * wr[i].stride_bytes : 0) + wr[i].n_bytes);
#undef SAME
                conflict[i][j] = (unsigned char)c;
                n_pairs += c;
                n_interleaved += bounding && !c;
            }
        if (cc_graph_validate(g) != CC_OK) {
            CHECK(0, "trial %d validates: %s", trial, cc_last_error(ctx));
            cc_graph_destroy(g);
            continue;
        }
        memset(reach, 0, sizeof reach);
        for (j = 0; j < n; j++) {
            cc_op p[NOPS];
            int np = cc_op_preds(g, ops[j], p, NOPS);
            for (k = 0; k < np && k < NOPS; k++) {
                i = cc_op_index(g, p[k]);
                if (i < 0 || i >= j || !conflict[i][j]) {
                    if (bad_extra++ < 3) NOTE("trial %d: edge op%d -> op%d joins no common byte", trial, i, j);
                } else reach[i][j] = 1;
            }
        }
        for (k = 0; k < n; k++)
            for (i = 0; i < n; i++)
                if (reach[i][k])
                    for (j = 0; j < n; j++)
                        if (reach[k][j]) reach[i][j] = 1;
        for (i = 0; i < n; i++)
            for (j = i + 1; j < n; j++)
                if (conflict[i][j] && !reach[i][j] && bad_missing++ < 3)
                    NOTE("trial %d: op%d and op%d share a byte but are not ordered", trial, i, j);
        cc_graph_destroy(g);
    }
    CHECK_INT(bad_missing, 0, "300 random strided layouts (%d pairs share a byte): every such pair is ordered", n_pairs);
    CHECK_INT(bad_extra, 0, "300 random strided layouts: every derived edge joins ops that share a byte");
    CHECK(n_interleaved > 20, "the layouts include pairs of writes whose bounding ranges meet but bytes do not (%d)", n_interleaved);
}

/* Column blocks of a row-major matrix: one op writes columns [0, 4), another
   [4, 8) of an 8 x 8 float matrix; a third reads columns [2, 6). The first
   two are independent, the reader depends on both. */
static void test_column_blocks(void) {
    cc_graph* g = NULL;
    cc_buffer m;
    cc_op w0, w1, r, p[4];
    cc_region a, b, c;
    cc_op_desc d;
    int np, i, seen0 = 0, seen1 = 0;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "graph"); return; }
    cc_graph_add_buffer(g, "m", 8 * 8 * 4, &m);
    memset(&a, 0, sizeof a);
    a.buffer = m; a.offset_bytes = 0; a.n_bytes = 16; a.n_rows = 8; a.stride_bytes = 32;
    b = a; b.offset_bytes = 16;
    c = a; c.offset_bytes = 8;
    memset(&d, 0, sizeof d);
    d.duration_us = 1;
    d.name = "left"; d.writes = &a; d.n_writes = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &w0), CC_OK, "a block of columns is a region");
    d.name = "right"; d.writes = &b;
    cc_graph_add_op(g, &d, &w1);
    d.name = "middle"; d.writes = NULL; d.n_writes = 0; d.reads = &c; d.n_reads = 1;
    cc_graph_add_op(g, &d, &r);
    CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "validates");
    CHECK_INT(cc_op_preds(g, w1, p, 4), 0, "the right block does not wait for the left (their bounding ranges meet)");
    np = cc_op_preds(g, r, p, 4);
    for (i = 0; i < np; i++) {
        seen0 |= cc_op_index(g, p[i]) == cc_op_index(g, w0);
        seen1 |= cc_op_index(g, p[i]) == cc_op_index(g, w1);
    }
    CHECK(np == 2 && seen0 && seen1, "the middle columns' reader waits for both writers (%d preds)", np);
    CHECK_INT((int)cc_op_bytes(g, r, 0), 8 * 16, "cc_op_bytes counts the rows' bytes, not the bounding range");
    cc_graph_destroy(g);
}

static void test_bad_strided(void) {
    cc_graph* g = NULL;
    cc_buffer m;
    cc_region a;
    cc_op_desc d;
    cc_collective coll;
    cc_comm* comm = NULL;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "graph"); return; }
    cc_graph_add_buffer(g, "mat", 256, &m);
    memset(&a, 0, sizeof a);
    memset(&d, 0, sizeof d);
    d.name = "cols"; d.duration_us = 1; d.writes = &a; d.n_writes = 1;
    a.buffer = m; a.n_bytes = 16; a.n_rows = 8; a.stride_bytes = 32; a.offset_bytes = 16;   /* last row ends at 256 */
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "rows ending at the buffer's end");
    a.offset_bytes = 17;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_REGION, "a last row past the buffer's end");
    CHECK_CONTAINS(cc_last_error(ctx), "cols", "the message names the op");
    CHECK_CONTAINS(cc_last_error(ctx), "mat", "the message names the buffer");
    a.offset_bytes = 0; a.stride_bytes = 8;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_REGION, "a stride below the row's bytes (rows overlap)");
    CHECK_CONTAINS(cc_last_error(ctx), "stride_bytes", "the message names the field");
    a.stride_bytes = UINT64_MAX / 4; a.n_rows = 5;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_REGION, "rows whose span overflows 64 bits");
    a.stride_bytes = 32; a.n_rows = 8; a.split_rows = 3;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_REGION, "split_rows 3 of 8 strided rows");
    CHECK_CONTAINS(cc_last_error(ctx), "split_rows", "the message names split_rows");
    a.split_rows = 4;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "split_rows 4 of 8 strided rows");
    CHECK_INT(cc_graph_n_ops(g), 2, "only the good ops were added");
    if (cc_comm_wrap(ctx, &idle_family, NULL, 0, 1, "idle", &comm) == CC_OK) {
        memset(&coll, 0, sizeof coll);
        coll.kind = CC_COLL_ALL_REDUCE; coll.dtype = CC_DTYPE_FLOAT32; coll.reduce = CC_REDUCE_SUM; coll.comm = comm;
        coll.n_elems = 32;
        a.split_rows = 0;
        d.name = "ar"; d.coll = &coll; d.stream = 1; d.reads = &a; d.n_reads = 1;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_REGION, "a collective on a strided region");
        CHECK_CONTAINS(cc_last_error(ctx), "contiguous", "the message says a collective's regions are contiguous");
    } else CHECK(0, "communicator: %s", cc_last_error(ctx));
    CHECK_INT(cc_graph_n_ops(g), 2, "the graph is unchanged by the refusals");
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
}

/* ---- split rules ----------------------------------------------------------*/
static void nop_fn(void* stream, void* ud) { (void)stream; (void)ud; }
static void nop_part(void* stream, void* ud, const cc_split_chunk* c) { (void)stream; (void)ud; (void)c; }

/* A region of a row-major float matrix with `pitch` bytes a row, as the
   block it names: rows [*r0, *r0 + *nr), columns [*c0, *c0 + *nc). */
static void block_of(const cc_region* r, uint64_t base, uint64_t pitch, int* r0, int* nr, int* c0, int* nc) {
    uint64_t off = r->offset_bytes - base;
    *r0 = (int)(off / pitch);
    *c0 = (int)(off % pitch / 4);
    if (r->n_rows > 1) {
        *nr = (int)r->n_rows;
        *nc = (int)(r->n_bytes / 4);
    } else if (r->n_bytes >= pitch) {
        *nr = (int)(r->n_bytes / pitch);
        *nc = (int)(pitch / 4);
    } else {
        *nr = 1;
        *nc = (int)(r->n_bytes / 4);
    }
}

static void fill(float* x, int n, tu_rng* rng) {
    int i;
    for (i = 0; i < n; i++) x[i] = (float)tu_randint(rng, -1000, 1000) / 337.0f;
}

static int same_floats(const float* a, const float* b, int n, double rel, double* worst) {
    int i, ok = 1;
    *worst = 0;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]), m = fabs((double)b[i]) > 1 ? fabs((double)b[i]) : 1;
        if (rel == 0 ? memcmp(&a[i], &b[i], sizeof(float)) != 0 : d / m > rel) ok = 0;
        if (d / m > *worst) *worst = d / m;
    }
    return ok;
}

#define MM_M 10
#define MM_N 12
#define MM_K 9

/* C = A B by matmul's rule in `count` chunks along axis: each chunk computed
   from its regions (A and B in one buffer "ab": A at 0, B after it; C in
   "c"). Returns 1 if it equals the whole op (bit for bit, or within 1e-5). */
static int run_matmul(cc_axis axis, int count, int* exact_out) {
    float A[MM_M * MM_K], B[MM_K * MM_N], C[MM_M * MM_N], W[MM_M * MM_N];
    tu_rng rng = {11};
    cc_graph* g = NULL;
    cc_buffer ab, cb;
    cc_region rd[2], wr[1];
    cc_split sp;
    cc_op_desc d;
    cc_op op;
    int i, j, k, ch, ok = 1, exact = -1;
    double worst;
    fill(A, MM_M * MM_K, &rng);
    fill(B, MM_K * MM_N, &rng);
    for (i = 0; i < MM_M; i++)   /* the whole op */
        for (j = 0; j < MM_N; j++) {
            float s2 = 0;
            for (k = 0; k < MM_K; k++) s2 += A[i * MM_K + k] * B[k * MM_N + j];
            W[i * MM_N + j] = s2;
        }
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return 0;
    cc_graph_add_buffer(g, "ab", sizeof A + sizeof B, &ab);
    cc_graph_add_buffer(g, "c", sizeof C, &cb);
    memset(rd, 0, sizeof rd); memset(wr, 0, sizeof wr); memset(&sp, 0, sizeof sp); memset(&d, 0, sizeof d);
    rd[0].buffer = ab; rd[0].n_bytes = sizeof A;
    rd[1].buffer = ab; rd[1].offset_bytes = sizeof A; rd[1].n_bytes = sizeof B;
    wr[0].buffer = cb; wr[0].n_bytes = sizeof C;
    sp.kind = CC_SPLIT_MATMUL;
    sp.extent[CC_AXIS_ROWS] = MM_M; sp.extent[CC_AXIS_COLS] = MM_N; sp.extent[CC_AXIS_REDUCE] = MM_K;
    d.name = "mm"; d.duration_us = 1; d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
    d.fn = nop_fn; d.part_fn = nop_part; d.split = &sp;
    if (cc_graph_add_op(g, &d, &op) != CC_OK) { CHECK(0, "matmul op: %s", cc_last_error(ctx)); cc_graph_destroy(g); return 0; }
    if (cc_op_split_check(g, op, axis, count, &exact) != CC_OK) {
        CHECK(0, "matmul along %s in %d: check: %s", cc_axis_name(axis), count, cc_last_error(ctx));
        cc_graph_destroy(g);
        return 0;
    }
    *exact_out = exact;
    for (i = 0; i < MM_M * MM_N; i++) C[i] = NAN;
    for (ch = 0; ch < count; ch++) {
        cc_region cr[2], cw[1];
        int part[1];
        int ar0, anr, ac0, anc, br0, bnr, bc0, bnc, cr0, cnr, cc0, cnc;
        if (cc_op_split_regions(g, op, axis, ch, count, cr, cw, part) != CC_OK) { ok = 0; break; }
        block_of(&cr[0], 0, MM_K * 4, &ar0, &anr, &ac0, &anc);
        block_of(&cr[1], sizeof A, MM_N * 4, &br0, &bnr, &bc0, &bnc);
        block_of(&cw[0], 0, MM_N * 4, &cr0, &cnr, &cc0, &cnc);
        /* the kernel: C's block from A's rows x its k columns and B's k rows x C's columns */
        if (ac0 != br0 || anc != bnr || ar0 != cr0 || anr != cnr || bc0 != cc0 || bnc != cnc) {
            CHECK(0, "matmul along %s, chunk %d of %d: A, B and C blocks do not fit together", cc_axis_name(axis), ch, count);
            ok = 0;
            break;
        }
        for (i = cr0; i < cr0 + cnr; i++)
            for (j = cc0; j < cc0 + cnc; j++) {
                float s2 = 0;
                for (k = ac0; k < ac0 + anc; k++) s2 += A[i * MM_K + k] * B[k * MM_N + j];
                C[i * MM_N + j] = part[0] && ch > 0 ? C[i * MM_N + j] + s2 : s2;
            }
    }
    if (ok) ok = same_floats(C, W, MM_M * MM_N, exact ? 0 : 1e-5, &worst);
    cc_graph_destroy(g);
    return ok;
}

static void test_matmul_rule(void) {
    static const int counts[] = {1, 2, 3, 4, 7};
    int a, c, exact = 0;
    for (a = 0; a < 3; a++) {
        cc_axis ax = a == 0 ? CC_AXIS_ROWS : a == 1 ? CC_AXIS_COLS : CC_AXIS_REDUCE;
        for (c = 0; c < 5; c++) {
            int ok = run_matmul(ax, counts[c], &exact);
            CHECK(ok, "matmul %dx%dx%d along %s in %d chunks equals the whole op (%s)", MM_M, MM_N, MM_K, cc_axis_name(ax),
                  counts[c], ax == CC_AXIS_REDUCE && counts[c] > 1 ? "within 1e-5: partial sums" : "bit-identical");
            CHECK_INT(exact, ax != CC_AXIS_REDUCE || counts[c] == 1, "matmul along %s in %d: cc_op_split_check's exact",
                      cc_axis_name(ax), counts[c]);
        }
    }
}

/* The desc of C = A B with A 4 x 5, B 5 x 6, C 4 x 6 floats, all in
   buffer b at the offsets given, named "mm", with its matmul rule. */
static void small_matmul(cc_buffer b, uint64_t a_at, uint64_t b_at, uint64_t c_at, cc_region* rd, cc_region* wr, cc_split* sp,
                         cc_op_desc* d) {
    memset(rd, 0, 2 * sizeof *rd); memset(wr, 0, sizeof *wr); memset(sp, 0, sizeof *sp); memset(d, 0, sizeof *d);
    rd[0].buffer = b; rd[0].offset_bytes = a_at; rd[0].n_bytes = 4 * 5 * 4;
    rd[1].buffer = b; rd[1].offset_bytes = b_at; rd[1].n_bytes = 5 * 6 * 4;
    wr[0].buffer = b; wr[0].offset_bytes = c_at; wr[0].n_bytes = 4 * 6 * 4;
    sp->kind = CC_SPLIT_MATMUL; sp->extent[CC_AXIS_ROWS] = 4; sp->extent[CC_AXIS_COLS] = 6; sp->extent[CC_AXIS_REDUCE] = 5;
    d->name = "mm"; d->duration_us = 1; d->reads = rd; d->n_reads = 2; d->writes = wr; d->n_writes = 1;
    d->fn = nop_fn; d->part_fn = nop_part; d->split = sp;
}

/* A column split of a 4 x 6 float matrix into 4: chunk i has columns
   [6i/4, 6(i+1)/4) = [0,1) [1,3) [3,4) [4,6): by hand, offsets 0, 4, 12, 16
   bytes, 4, 8, 4, 8 bytes a row, 4 rows 24 bytes apart. */
static void test_column_split_by_hand(void) {
    static const uint64_t off[4] = {0, 4, 12, 16}, row[4] = {4, 8, 4, 8};
    cc_graph* g = NULL;
    cc_buffer b;
    cc_region rd[2], wr[1];
    cc_split sp;
    cc_op_desc d;
    cc_op op;
    int i;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    cc_graph_add_buffer(g, "w", 4096, &b);
    small_matmul(b, 1024, 2048, 0, rd, wr, &sp, &d);   /* C at 0 */
    cc_graph_add_op(g, &d, &op);
    for (i = 0; i < 4; i++) {
        cc_region cr[2], cw[1];
        CHECK_RES(ctx, cc_op_split_regions(g, op, CC_AXIS_COLS, i, 4, cr, cw, NULL), CC_OK, "column chunk %d of 4", i);
        CHECK(cw[0].offset_bytes == off[i] && cw[0].n_bytes == row[i] && cw[0].n_rows == 4 && cw[0].stride_bytes == 24,
              "C's chunk %d: offset %llu, %llu bytes a row, %llu rows %llu apart (want %llu, %llu, 4, 24)", i,
              (unsigned long long)cw[0].offset_bytes, (unsigned long long)cw[0].n_bytes, (unsigned long long)cw[0].n_rows,
              (unsigned long long)cw[0].stride_bytes, (unsigned long long)off[i], (unsigned long long)row[i]);
        CHECK(cr[1].offset_bytes == 2048 + off[i] && cr[1].n_bytes == row[i] && cr[1].n_rows == 5 && cr[1].stride_bytes == 24,
              "B's chunk %d: its columns, 5 rows", i);
        CHECK(cr[0].offset_bytes == 1024 && cr[0].n_bytes == 80 && cr[0].n_rows == 0, "A's chunk %d: the whole of A", i);
    }
    cc_graph_destroy(g);
}

/* A layer norm over rows (rule rowwise): x and y are R rows of D floats,
   the gain g whole. */
#define LN_R 11
#define LN_D 6
static void ln_rows(const float* x, const float* gain, float* y, int r0, int r1) {
    int t, j;
    for (t = r0; t < r1; t++) {
        float mean = 0, var = 0;
        for (j = 0; j < LN_D; j++) mean += x[t * LN_D + j];
        mean /= LN_D;
        for (j = 0; j < LN_D; j++) var += (x[t * LN_D + j] - mean) * (x[t * LN_D + j] - mean);
        var /= LN_D;
        for (j = 0; j < LN_D; j++) y[t * LN_D + j] = (x[t * LN_D + j] - mean) / sqrtf(var + 1e-5f) * gain[j];
    }
}

static void test_rowwise_rule(void) {
    static const int counts[] = {1, 2, 3, 4, 11};
    float x[LN_R * LN_D], gain[LN_D], y[LN_R * LN_D], want[LN_R * LN_D];
    tu_rng rng = {5};
    cc_graph* g = NULL;
    cc_buffer bx, bg, by;
    cc_region rd[2], wr[1];
    cc_split sp;
    cc_op_desc d;
    cc_op op;
    int c, ch, exact = 0;
    double worst;
    fill(x, LN_R * LN_D, &rng);
    fill(gain, LN_D, &rng);
    ln_rows(x, gain, want, 0, LN_R);
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    cc_graph_add_buffer(g, "x", sizeof x, &bx);
    cc_graph_add_buffer(g, "gain", sizeof gain, &bg);
    cc_graph_add_buffer(g, "y", sizeof y, &by);
    memset(rd, 0, sizeof rd); memset(wr, 0, sizeof wr); memset(&sp, 0, sizeof sp); memset(&d, 0, sizeof d);
    rd[0].buffer = bx; rd[0].n_bytes = sizeof x; rd[0].split_rows = LN_R;
    rd[1].buffer = bg; rd[1].n_bytes = sizeof gain;
    wr[0].buffer = by; wr[0].n_bytes = sizeof y; wr[0].split_rows = LN_R;
    sp.kind = CC_SPLIT_ROWWISE; sp.extent[CC_AXIS_ROWS] = LN_R;
    d.name = "ln"; d.duration_us = 1; d.reads = rd; d.n_reads = 2; d.writes = wr; d.n_writes = 1;
    d.fn = nop_fn; d.part_fn = nop_part; d.split = &sp;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "a layer norm with a rowwise rule");
    for (c = 0; c < 5; c++) {
        int ok = 1;
        CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_ROWS, counts[c], &exact), CC_OK, "layer norm in %d: check", counts[c]);
        CHECK_INT(exact, 1, "layer norm in %d: exact", counts[c]);
        for (ch = 0; ch < LN_R * LN_D; ch++) y[ch] = NAN;
        for (ch = 0; ch < counts[c]; ch++) {
            cc_region cr[2], cw[1];
            int r0, nr, c0, nc, s0, ns, g0, ng;
            if (cc_op_split_regions(g, op, CC_AXIS_ROWS, ch, counts[c], cr, cw, NULL) != CC_OK) { ok = 0; break; }
            block_of(&cw[0], 0, LN_D * 4, &r0, &nr, &c0, &nc);
            block_of(&cr[0], 0, LN_D * 4, &s0, &ns, &g0, &ng);
            if (s0 != r0 || ns != nr || nc != LN_D || cr[1].n_bytes != sizeof gain) { ok = 0; break; }
            ln_rows(x, gain, y, r0, r0 + nr);
        }
        CHECK(ok && same_floats(y, want, LN_R * LN_D, 0, &worst), "layer norm of %d rows in %d chunks is bit-identical",
              LN_R, counts[c]);
    }
    CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_ROWS, LN_R + 1, NULL), CC_ERR_INVALID_ARG, "%d chunks of %d rows", LN_R + 1, LN_R);
    CHECK_CONTAINS(cc_last_error(ctx), "'ln'", "the message names the op");
    CHECK_CONTAINS(cc_last_error(ctx), "rowwise", "the message names the rule");
    CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_COLS, 2, NULL), CC_ERR_INVALID_ARG, "a rowwise op along columns");
    CHECK_CONTAINS(cc_last_error(ctx), "does not split along columns", "the message names the axis");
    cc_graph_destroy(g);
}

/* Causal attention, T query rows, H heads of S columns; Q, K, V and O are
   T x (H S) row-major, one buffer each. */
#define AT_T 7
#define AT_H 4
#define AT_S 3
#define AT_C (AT_H * AT_S)
static void attend(const float* q, const float* k, const float* v, float* o, int t, int h) {
    float w[AT_T], mx = -1e30f, sum = 0;
    int j, c;
    for (j = 0; j <= t; j++) {
        float s2 = 0;
        for (c = 0; c < AT_S; c++) s2 += q[t * AT_C + h * AT_S + c] * k[j * AT_C + h * AT_S + c];
        w[j] = s2 / sqrtf((float)AT_S);
        if (w[j] > mx) mx = w[j];
    }
    for (j = 0; j <= t; j++) { w[j] = expf(w[j] - mx); sum += w[j]; }
    for (c = 0; c < AT_S; c++) {
        float acc = 0;
        for (j = 0; j <= t; j++) acc += w[j] / sum * v[j * AT_C + h * AT_S + c];
        o[t * AT_C + h * AT_S + c] = acc;
    }
}

static void test_attention_rule(void) {
    float q[AT_T * AT_C], k[AT_T * AT_C], v[AT_T * AT_C], o[AT_T * AT_C], want[AT_T * AT_C];
    tu_rng rng = {9};
    cc_graph* g = NULL;
    cc_buffer bq, bk, bv, bo;
    cc_region rd[3], wr[1];
    cc_split sp;
    cc_op_desc d;
    cc_op op;
    int a, c, ch, t, h, exact = 0;
    double worst;
    fill(q, AT_T * AT_C, &rng); fill(k, AT_T * AT_C, &rng); fill(v, AT_T * AT_C, &rng);
    for (t = 0; t < AT_T; t++) for (h = 0; h < AT_H; h++) attend(q, k, v, want, t, h);
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    cc_graph_add_buffer(g, "q", sizeof q, &bq); cc_graph_add_buffer(g, "k", sizeof k, &bk);
    cc_graph_add_buffer(g, "v", sizeof v, &bv); cc_graph_add_buffer(g, "o", sizeof o, &bo);
    memset(rd, 0, sizeof rd); memset(wr, 0, sizeof wr); memset(&sp, 0, sizeof sp); memset(&d, 0, sizeof d);
    rd[0].buffer = bq; rd[1].buffer = bk; rd[2].buffer = bv; wr[0].buffer = bo;
    rd[0].n_bytes = rd[1].n_bytes = rd[2].n_bytes = wr[0].n_bytes = sizeof q;
    sp.kind = CC_SPLIT_ATTENTION; sp.extent[CC_AXIS_ROWS] = AT_T; sp.extent[CC_AXIS_HEADS] = AT_H;
    d.name = "attn"; d.duration_us = 1; d.reads = rd; d.n_reads = 3; d.writes = wr; d.n_writes = 1;
    d.fn = nop_fn; d.part_fn = nop_part; d.split = &sp;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "an attention op");
    for (a = 0; a < 2; a++) {
        cc_axis ax = a ? CC_AXIS_HEADS : CC_AXIS_ROWS;
        for (c = 1; c <= (a ? AT_H : AT_T); c++) {
            int ok = 1;
            CHECK_RES(ctx, cc_op_split_check(g, op, ax, c, &exact), CC_OK, "attention along %s in %d: check", cc_axis_name(ax), c);
            for (ch = 0; ch < AT_T * AT_C; ch++) o[ch] = NAN;
            for (ch = 0; ch < c && ok; ch++) {
                cc_region cr[3], cw[1];
                int r0, nr, c0, nc, k0, nk, kc0, nkc;
                if (cc_op_split_regions(g, op, ax, ch, c, cr, cw, NULL) != CC_OK) { ok = 0; break; }
                block_of(&cw[0], 0, AT_C * 4, &r0, &nr, &c0, &nc);
                block_of(&cr[1], 0, AT_C * 4, &k0, &nk, &kc0, &nkc);
                /* the kernel may read only the K rows and head columns its regions give */
                if (k0 != 0 || nk < r0 + nr || kc0 != c0 || nkc != nc || c0 % AT_S || nc % AT_S) { ok = 0; break; }
                for (t = r0; t < r0 + nr; t++)
                    for (h = c0 / AT_S; h < (c0 + nc) / AT_S; h++) attend(q, k, v, o, t, h);
            }
            CHECK(ok && same_floats(o, want, AT_T * AT_C, 0, &worst), "attention along %s in %d chunks is bit-identical",
                  cc_axis_name(ax), c);
            CHECK_INT(exact, 1, "attention along %s in %d: exact", cc_axis_name(ax), c);
        }
    }
    cc_graph_destroy(g);
}

/* User rules: split a copy y = x of 8 floats in chunks of rows; the bad
   variants break one property each. */
typedef struct urule { int bad; } urule;
static int user_rule(void* ud, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    const urule* u = (const urule*)ud;
    uint64_t lo = c->begin * 4, hi = c->end * 4;
    (void)nr; (void)nw;
    if (u->bad == 5) return 1;                                      /* refuses */
    rd[0].offset_bytes += lo; rd[0].n_bytes = hi - lo;
    wr[0].offset_bytes += lo; wr[0].n_bytes = hi - lo;
    if (u->bad == 1 && c->index == c->count - 1) wr[0].n_bytes += 64;   /* past the buffer's end */
    if (u->bad == 2 && c->index == 1) { wr[0].offset_bytes -= 4; wr[0].n_bytes += 4; }   /* overlaps chunk 0 */
    if (u->bad == 3 && c->index == 1) wr[0].n_bytes -= 4;          /* misses a float */
    if (u->bad == 4) { wr[0].offset_bytes -= lo; wr[0].n_bytes = 32; }   /* whole, no partial sum */
    if (u->bad == 6) { wr[0].offset_bytes -= lo; wr[0].n_bytes = 32; partial[0] = c->index == 0; }   /* partial in one chunk */
    if (u->bad == 7 && c->index == 1) rd[0].offset_bytes += 4;    /* read part of another chunk's, missing its own */
    return 0;
}

static void test_user_rules(void) {
    static const char* const what[] = {"a good rule", "a region outside its buffer", "overlapping chunks",
                                       "chunks that miss part of the region", "a whole write that is no partial sum",
                                       "a user rule that refuses", "a partial sum in one chunk only",
                                       "read chunks that overlap"};
    static const char* const says[] = {"", "outside", "overlap", "cover", "not a partial sum", "refused", "every chunk",
                                       "overlap"};
    int bad;
    for (bad = 0; bad < 8; bad++) {
        cc_graph* g = NULL;
        cc_buffer bx, by;
        cc_region rd[1], wr[1], got_r[1], got_w[1], keep;
        cc_split sp;
        cc_op_desc d;
        cc_op op;
        urule u;
        int exact = -1, n_ops;
        cc_result want = bad == 0 ? CC_OK : bad == 5 ? CC_ERR_INVALID_ARG : CC_ERR_REGION;
        u.bad = bad;
        if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
        cc_graph_add_buffer(g, "x", 32, &bx);
        cc_graph_add_buffer(g, "y", 32, &by);
        memset(rd, 0, sizeof rd); memset(wr, 0, sizeof wr); memset(&sp, 0, sizeof sp); memset(&d, 0, sizeof d);
        rd[0].buffer = bx; rd[0].n_bytes = 32;
        wr[0].buffer = by; wr[0].n_bytes = 32;
        sp.kind = CC_SPLIT_USER; sp.extent[CC_AXIS_ROWS] = 8; sp.fn = user_rule; sp.user_data = &u; sp.name = "copy_rows";
        d.name = "copy"; d.duration_us = 1; d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = 1;
        d.fn = nop_fn; d.part_fn = nop_part; d.split = &sp;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "%s: the op", what[bad]);
        n_ops = cc_graph_n_ops(g);
        CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_ROWS, 3, &exact), want, "%s is %s", what[bad],
                  bad ? "refused" : "accepted");
        if (bad) {
            CHECK_CONTAINS(cc_last_error(ctx), "'copy'", "%s: the message names the op", what[bad]);
            CHECK_CONTAINS(cc_last_error(ctx), "copy_rows", "%s: the message names the rule", what[bad]);
            CHECK_CONTAINS(cc_last_error(ctx), says[bad], "%s: the message says what is wrong", what[bad]);
            CHECK_INT(exact, 0, "%s: exact is 0 on an error", what[bad]);
        } else CHECK_INT(exact, 1, "a good rule is exact");
        CHECK_INT(cc_graph_n_ops(g), n_ops, "%s: the graph is unchanged", what[bad]);
        memset(&keep, 0x5a, sizeof keep);
        got_w[0] = keep;
        if (bad == 1 || bad == 5) {
            CHECK(cc_op_split_regions(g, op, CC_AXIS_ROWS, 2, 3, got_r, got_w, NULL) != CC_OK &&
                  memcmp(&got_w[0], &keep, sizeof keep) == 0, "%s: cc_op_split_regions fails and leaves the caller's arrays", what[bad]);
        }
        CHECK_RES(ctx, cc_graph_validate(g), CC_OK, "%s: the graph still validates", what[bad]);
        cc_graph_destroy(g);
    }
}

/* A rule's arguments at cc_graph_add_op, and the rule kept by a rewrite's copy. */
static void test_rule_args(void) {
    cc_graph* g = NULL;
    cc_graph* copy = NULL;
    cc_buffer b;
    cc_region rd[2], wr[1], cr[2], cw[1];
    cc_split sp;
    cc_op_desc d;
    cc_op op;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return;
    cc_graph_add_buffer(g, "w", 4096, &b);
    small_matmul(b, 0, 1024, 2048, rd, wr, &sp, &d);
    sp.extent[CC_AXIS_REDUCE] = 0;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "a matmul rule without K");
    CHECK_CONTAINS(cc_last_error(ctx), "extent[reduction]", "the message names the missing extent");
    sp.extent[2] = 5;
    d.part_fn = NULL;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "a rule without part_fn");
    d.part_fn = nop_part;
    sp.axes = 1u << CC_AXIS_HEADS;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "a matmul that allows heads");
    sp.axes = (1u << CC_AXIS_ROWS) | (1u << CC_AXIS_COLS);   /* exact splits only */
    d.n_reads = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_ERR_INVALID_ARG, "a matmul with one read");
    d.n_reads = 2;
    sp.name = "mm_exact";
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "a matmul that forbids its reduction");
    CHECK_INT(cc_graph_n_ops(g), 1, "only the good op was added");
    CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_REDUCE, 2, NULL), CC_ERR_INVALID_ARG, "a split along the forbidden axis");
    CHECK_CONTAINS(cc_last_error(ctx), "mm_exact", "the message names the rule");
    CHECK_CONTAINS(cc_last_error(ctx), "reduction", "the message names the axis");
    CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_COLS, 7, NULL), CC_ERR_INVALID_ARG, "7 chunks of 6 columns");
    CHECK_RES(ctx, cc_op_split_regions(g, op, CC_AXIS_COLS, 2, 2, cr, cw, NULL), CC_ERR_INVALID_ARG, "chunk 2 of 2");
    if (cc_graph_fuse(ctx, g, NULL, &copy, NULL) == CC_OK) {   /* no collective: an unchanged copy */
        CHECK_RES(ctx, cc_op_split_regions(copy, cc_graph_op(copy, 0), CC_AXIS_COLS, 1, 2, cr, cw, NULL), CC_OK,
                  "a rewrite's copy keeps the rule");
        CHECK(cw[0].offset_bytes == 2048 + 12 && cw[0].n_rows == 4, "the copy's rule cuts columns as the original's");
        CHECK_RES(ctx, cc_op_split_check(copy, cc_graph_op(copy, 0), CC_AXIS_REDUCE, 2, NULL), CC_ERR_INVALID_ARG,
                  "the copy keeps the forbidden axis");
        CHECK_CONTAINS(cc_last_error(ctx), "mm_exact", "the copy keeps the rule's name");
        cc_graph_destroy(copy);
    } else CHECK(0, "fuse: %s", cc_last_error(ctx));
    /* a shape the rule cannot cut: C of 4 rows given 5 */
    sp.extent[0] = 5;
    sp.name = NULL;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "a matmul whose M is wrong");
    CHECK_RES(ctx, cc_op_split_check(g, op, CC_AXIS_ROWS, 2, NULL), CC_ERR_REGION, "rows of a region that is not M rows");
    CHECK_CONTAINS(cc_last_error(ctx), "is not 5 rows", "the message says which shape is wrong");
    cc_graph_destroy(g);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_strided_dependencies);
    TH_RUN(test_column_blocks);
    TH_RUN(test_bad_strided);
    TH_RUN(test_matmul_rule);
    TH_RUN(test_column_split_by_hand);
    TH_RUN(test_rowwise_rule);
    TH_RUN(test_attention_rule);
    TH_RUN(test_user_rules);
    TH_RUN(test_rule_args);
    cc_context_destroy(ctx);
    return th_done();
}
