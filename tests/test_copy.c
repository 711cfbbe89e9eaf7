/* tests/test_copy.c - copy ops: a region copied into another of the same
   bytes, contiguous or strided, as the rewrites add them (cc__rw_add_copy)
   to pack pieces into a bucket and back.

   It compiles the implementation itself, to reach the rewrites' helper. A
   graph copies a block of columns of a row-major matrix (strided) into a
   transient buffer (contiguous), changes it there, and copies it back into
   columns of another matrix (strided), beside a strided-to-strided and a
   contiguous-to-contiguous copy. On the CPU backend, checked (every byte
   outside the declared writes unchanged) and plain, in program order and in
   a schedule's order, the bytes must be what the test computes by hand;
   and again after the graph is copied as a rewrite copies it. The model:
   each copy's duration is its bytes times copy_us_per_byte, which the
   simulation and the scheduler see (a makespan computed by hand). A backend
   without the copy entry is refused, naming the op; bad copies are refused
   with the graph unchanged. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define ROWS 8
#define COLS 12                       /* floats per matrix row */
#define ROWB (COLS * 4)               /* bytes per matrix row */
#define BLK 4                         /* floats in the packed block's row */

static cc_context* ctx;

/* The step's memory: matrices m (read) and o (written), the packed copy p. */
static float m[ROWS * COLS], o[ROWS * COLS], p[ROWS * BLK];
typedef struct bump_job { float* t; } bump_job;
static bump_job bump;

static void fill_fn(void* stream, void* user) {
    int i;
    (void)stream; (void)user;
    for (i = 0; i < ROWS * COLS; i++) m[i] = 1.0f + 0.5f * (float)i;
}
static void bump_fn(void* stream, void* user) {
    bump_job* b = (bump_job*)user;
    int i;
    (void)stream;
    for (i = 0; i < ROWS * BLK; i++) b->t[i] += 100.0f;
}

static cc_region cont(cc_buffer b, uint64_t off, uint64_t n) {
    cc_region r;
    memset(&r, 0, sizeof r);
    r.buffer = b; r.offset_bytes = off; r.n_bytes = n;
    return r;
}
/* columns [c0, c0 + nc) of every row of a ROWS x COLS float matrix */
static cc_region cols(cc_buffer b, int c0, int nc) {
    cc_region r = cont(b, (uint64_t)c0 * 4, (uint64_t)nc * 4);
    r.n_rows = ROWS; r.stride_bytes = ROWB;
    return r;
}

typedef struct built { cc_graph* g; cc_buffer bm, bo, bp, bt; cc_op fill, pack, bump, unpack, direct, flat; } built;

static void rw_init(cc__rw* w, double us_per_byte) {
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->who = "test_copy";
    w->d.copy_us_per_byte = us_per_byte;
}

/* fill (10 us) writes m; pack: m's columns 2..5 -> t; bump (10 us): t +=
   100; unpack: t -> o's columns 6..9; direct (on stream 1): m's columns 0..1
   -> o's columns 0..1; flat: t -> p. */
static int build(built* b, double us_per_byte) {
    cc__rw w;
    cc_op_desc d;
    cc_region r1, r2;
    cc_result rc;
    memset(b, 0, sizeof *b);
    rw_init(&w, us_per_byte);
    if (cc_graph_create(ctx, NULL, &b->g) != CC_OK) return 0;
    cc_graph_add_buffer(b->g, "m", sizeof m, &b->bm);
    cc_graph_add_buffer(b->g, "o", sizeof o, &b->bo);
    cc_graph_add_buffer(b->g, "p", sizeof p, &b->bp);
    cc_graph_add_transient(b->g, "t", sizeof p, &b->bt);
    memset(&d, 0, sizeof d);
    d.name = "fill"; d.duration_us = 10; d.stream = 0; d.fn = fill_fn;
    r1 = cont(b->bm, 0, sizeof m);
    d.writes = &r1; d.n_writes = 1;
    rc = cc_graph_add_op(b->g, &d, &b->fill);
    r1 = cols(b->bm, 2, BLK); r2 = cont(b->bt, 0, sizeof p);
    if (rc == CC_OK) rc = cc__rw_add_copy(&w, b->g, "pack", 0, &r1, (char*)m + 8, &r2, NULL, NULL, 0, &b->pack);
    memset(&d, 0, sizeof d);
    d.name = "bump"; d.duration_us = 10; d.stream = 0; d.fn = bump_fn; d.user_data = &bump;
    r1 = cont(b->bt, 0, sizeof p);
    d.reads = &r1; d.n_reads = 1; d.writes = &r1; d.n_writes = 1;
    if (rc == CC_OK) rc = cc_graph_add_op(b->g, &d, &b->bump);
    r1 = cont(b->bt, 0, sizeof p); r2 = cols(b->bo, 6, BLK);
    if (rc == CC_OK) rc = cc__rw_add_copy(&w, b->g, "unpack", 0, &r1, NULL, &r2, (char*)o + 24, NULL, 0, &b->unpack);
    r1 = cols(b->bm, 0, 2); r2 = cols(b->bo, 0, 2);
    if (rc == CC_OK) rc = cc__rw_add_copy(&w, b->g, "direct", 1, &r1, m, &r2, o, NULL, 0, &b->direct);
    r1 = cont(b->bt, 0, sizeof p); r2 = cont(b->bp, 0, sizeof p);
    if (rc == CC_OK) rc = cc__rw_add_copy(&w, b->g, "flat", 0, &r1, NULL, &r2, p, NULL, 0, &b->flat);
    CHECK_RES(ctx, rc, CC_OK, "building the copy graph");
    return rc == CC_OK;
}

/* What the step leaves in o and p, computed from the layout alone. */
static void expected(float* eo, float* ep) {
    float mm[ROWS * COLS];
    int i, r, c;
    for (i = 0; i < ROWS * COLS; i++) { mm[i] = 1.0f + 0.5f * (float)i; eo[i] = -7.0f; }
    for (r = 0; r < ROWS; r++) {
        for (c = 0; c < BLK; c++) {
            float packed = mm[r * COLS + 2 + c] + 100.0f;
            eo[r * COLS + 6 + c] = packed;
            ep[r * BLK + c] = packed;
        }
        for (c = 0; c < 2; c++) eo[r * COLS + c] = mm[r * COLS + c];
    }
}

/* Runs g's plan (order NULL: program order) twice, checked and plain,
   comparing o and p with the hand computation each time. */
static void run_and_compare(cc_graph* g, const cc_op* order, const char* what) {
    cc_plan* plan = NULL;
    cc_backend be;
    cc_exec* x = NULL;
    float eo[ROWS * COLS], ep[ROWS * BLK];
    int pass, i;
    expected(eo, ep);
    memset(&be, 0, sizeof be);
    CHECK_RES(ctx, cc_plan_create(ctx, g, order, &plan), CC_OK, "%s: plan", what);
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "%s: backend", what);
    CHECK_RES(ctx, cc_exec_create(ctx, plan, &be, &x), CC_OK, "%s: executor", what);
    if (x) {
        bump.t = (float*)cc_exec_buffer_ptr(x, cc_graph_buffer(g, 3));
        CHECK(bump.t != NULL, "%s: the transient buffer has an address", what);
        cc_exec_bind_buffer(x, cc_graph_buffer(g, 0), m);
        cc_exec_bind_buffer(x, cc_graph_buffer(g, 1), o);
        cc_exec_bind_buffer(x, cc_graph_buffer(g, 2), p);
        for (pass = 0; pass < 2 && bump.t; pass++) {
            for (i = 0; i < ROWS * COLS; i++) { m[i] = 0; o[i] = -7.0f; }
            memset(p, 0, sizeof p);
            CHECK_RES(ctx, pass ? cc_exec_step(x) : cc_exec_step_checked(x), CC_OK, "%s: a %s step", what, pass ? "plain" : "checked");
            CHECK(memcmp(o, eo, sizeof o) == 0, "%s, %s step: the matrix o holds the packed, bumped and unpacked columns "
                  "and the direct copy, nothing else", what, pass ? "plain" : "checked");
            CHECK(memcmp(p, ep, sizeof p) == 0, "%s, %s step: p holds the packed block", what, pass ? "plain" : "checked");
        }
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
}

static void test_copy_runs(void) {
    built b;
    cc_schedule s;
    cc__rw w;
    cc_graph* copy = NULL;
    if (!build(&b, 0.25)) { cc_graph_destroy(b.g); return; }
    CHECK(cc_op_user_data(b.g, b.pack) == NULL, "a copy op has no user_data of the caller's");
    CHECK(cc_op_collective(b.g, b.pack) == NULL, "a copy op is not a collective");
    run_and_compare(b.g, NULL, "program order");
    memset(&s, 0, sizeof s);
    CHECK_RES(ctx, cc_sched_solve(ctx, b.g, NULL, &s), CC_OK, "a schedule of the copy graph");
    if (s.order) run_and_compare(b.g, s.order, "the schedule's order");
    cc_schedule_release(ctx, &s);
    rw_init(&w, 0.25);
    CHECK_RES(ctx, cc__rw_copy(&w, b.g, &copy), CC_OK, "the graph copied as a rewrite copies it");
    if (copy) {
        CHECK_INT(copy->n_copies, 4, "the copy owns its own copy records");
        CHECK(copy->user_data[1] != b.g->user_data[1], "its records are not the input's");
        cc_graph_destroy(b.g);   /* the copy must not need the input's records */
        b.g = NULL;
        run_and_compare(copy, NULL, "the graph copied");
    }
    cc_graph_destroy(copy);
    cc_graph_destroy(b.g);
}

/* Durations: bytes times copy_us_per_byte. Stream 0 runs fill (10), pack
   (128 bytes), bump (10), unpack (128), flat (128) back to back; direct
   (64 bytes, stream 1) after fill, beside them. */
static void test_copy_model(void) {
    built b;
    double mk = -1, k = 0.25;
    double want = 10 + 128 * k + 10 + 128 * k + 128 * k;
    cc_schedule s;
    if (!build(&b, k)) { cc_graph_destroy(b.g); return; }
    CHECK_NEAR(cc_op_duration_us(b.g, b.pack), 128 * k, 1e-9, "pack: 128 bytes at %g us a byte", k);
    CHECK_NEAR(cc_op_duration_us(b.g, b.direct), 64 * k, 1e-9, "direct: 64 bytes (2 floats x 8 rows)");
    {
        cc_op order[6];
        int i;
        for (i = 0; i < 6; i++) order[i] = cc_graph_op(b.g, i);
        CHECK_RES(ctx, cc_simulate(ctx, b.g, order, 6, NULL, &mk), CC_OK, "simulating program order");
    }
    CHECK_NEAR(mk, want, 1e-6, "the simulation counts every copy's time (10 + 3 x 32 + 10)");
    memset(&s, 0, sizeof s);
    CHECK_RES(ctx, cc_sched_solve(ctx, b.g, NULL, &s), CC_OK, "scheduling");
    CHECK_NEAR(s.makespan_us, want, 1e-6, "the scheduler's makespan counts them too");
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(b.g);
    CHECK_NEAR(cc_rewrite_query_defaults(NULL).copy_us_per_byte, 1e-4, 0, "the default cost of a copied byte");
}

/* A backend whose table lacks copy: cc_exec_create names the copy op. */
static void test_backend_without_copy(void) {
    built b;
    cc_plan* plan = NULL;
    cc_backend be, lacking;
    cc_backend_fns f;
    cc_exec* x = NULL;
    if (!build(&b, 0.25)) { cc_graph_destroy(b.g); return; }
    memset(&be, 0, sizeof be);
    CHECK_RES(ctx, cc_plan_create(ctx, b.g, NULL, &plan), CC_OK, "plan");
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "backend");
    if (be.fns && plan) {
        f = *be.fns;
        f.name = "nocopy";
        f.copy = NULL;
        lacking.fns = &f;
        lacking.self = be.self;
        CHECK_RES(ctx, cc_exec_create(ctx, plan, &lacking, &x), CC_ERR_UNSUPPORTED, "a backend without copy is refused");
        CHECK(x == NULL, "no executor");
        CHECK_CONTAINS(cc_last_error(ctx), "op 'pack'", "the message names the first copy op");
        CHECK_CONTAINS(cc_last_error(ctx), "'nocopy' has no copy entry", "and the backend and what it lacks");
    }
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(b.g);
}

/* Bad copies: each refused, the graph unchanged. */
static void test_bad_copies(void) {
    built b;
    cc__rw w;
    cc_region r1, r2;
    cc_op op;
    int n0;
    size_t c0;
    if (!build(&b, 0.25)) { cc_graph_destroy(b.g); return; }
    rw_init(&w, 0.25);
    n0 = cc_graph_n_ops(b.g);
    c0 = b.g->n_copies;
    r1 = cols(b.bm, 2, BLK); r2 = cont(b.bt, 0, sizeof p - 8);
    CHECK_RES(ctx, cc__rw_add_copy(&w, b.g, "short", 0, &r1, m, &r2, NULL, NULL, 0, &op), CC_ERR_INVALID_ARG,
              "a destination of fewer bytes");
    CHECK_CONTAINS(cc_last_error(ctx), "copy op 'short'", "names the op");
    r1 = cols(b.bm, 2, BLK); r2 = cont(b.bo, 0, 32); r2.n_rows = 4; r2.stride_bytes = ROWB;   /* 4 rows of 32: 128 bytes */
    CHECK_RES(ctx, cc__rw_add_copy(&w, b.g, "reshape", 0, &r1, m, &r2, o, NULL, 0, &op), CC_ERR_INVALID_ARG,
              "two strided sides of different rows");
    CHECK_CONTAINS(cc_last_error(ctx), "8 rows of 16 bytes to 4 rows of 32", "says both shapes");
    r1 = cols(b.bm, 0, 2); r2 = cols(b.bm, 1, 2);
    CHECK_RES(ctx, cc__rw_add_copy(&w, b.g, "self", 0, &r1, m, &r2, (char*)m + 4, NULL, 0, &op), CC_ERR_INVALID_ARG,
              "regions of one buffer that overlap");
    CHECK_CONTAINS(cc_last_error(ctx), "overlap", "says they overlap");
    r1 = cols(b.bm, 2, BLK); r2 = cont(b.bp, 0, sizeof p);
    CHECK_RES(ctx, cc__rw_add_copy(&w, b.g, "noaddr", 0, &r1, m, &r2, NULL, NULL, 0, &op), CC_ERR_INVALID_ARG,
              "no address for a region of a bound buffer");
    CHECK_CONTAINS(cc_last_error(ctx), "bound buffer 'p'", "names the buffer");
    r1 = cols(b.bm, 2, BLK); r2 = cont(b.bt, 8, sizeof p);
    CHECK_RES(ctx, cc__rw_add_copy(&w, b.g, "outside", 0, &r1, m, &r2, NULL, NULL, 0, &op), CC_ERR_REGION,
              "a region outside its buffer (cc_graph_add_op's check)");
    CHECK(op.id == 0, "no op handle on failure");
    CHECK_INT(cc_graph_n_ops(b.g), n0, "no op was added");
    CHECK_INT((int)b.g->n_copies, (int)c0, "no record was kept");
    cc_graph_destroy(b.g);
    {
        cc_rewrite_desc rd;
        cc_graph* out = NULL;
        memset(&rd, 0, sizeof rd);
        rd.copy_us_per_byte = -1;
        if (build(&b, 0.25)) {
            CHECK_RES(ctx, cc_graph_fuse(ctx, b.g, &rd, &out, NULL), CC_ERR_INVALID_ARG, "a negative copy_us_per_byte");
            CHECK_CONTAINS(cc_last_error(ctx), "copy_us_per_byte", "names the field");
        }
        cc_graph_destroy(out);
        cc_graph_destroy(b.g);
    }
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    TH_RUN(test_copy_runs);
    TH_RUN(test_copy_model);
    TH_RUN(test_backend_without_copy);
    TH_RUN(test_bad_copies);
    cc_context_destroy(ctx);
    return th_done();
}
