/* tests/test_split.c - strided (2-D) regions.

   Dependencies derived from strided regions are checked against a
   brute-force byte-overlap test on random layouts: every pair of ops that
   touch a common byte of one buffer (one of them writing) must be ordered by
   the derived edges (through the transitive closure), and every derived
   edge must join such a pair. A bounding range would order pairs whose
   bytes interleave without meeting: those edges count as wrong here.
   Then the region checks: rows outside the buffer, a stride below the row,
   a strided collective, split_rows that does not divide n_rows. */
#define _POSIX_C_SOURCE 200809L
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

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_strided_dependencies);
    TH_RUN(test_column_blocks);
    TH_RUN(test_bad_strided);
    cc_context_destroy(ctx);
    return th_done();
}
