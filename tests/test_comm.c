/* tests/test_comm.c - communicators of any family and the element types of
   GPU trainers:
   - float16 and bfloat16 reductions in the in-process world, against hand
     computations (rounding to nearest, ties to even, after every addition in
     rank order) and against a brute-force reference that rounds the exact
     sum to the nearest representable value by searching all 65536 patterns;
   - cc_comm_split of world communicators, checked by gathering world ranks;
   - a family of the test's own (cc_comm_wrap) run by the CPU backend, its
     agreement and profiling included; split refused for it;
   - the CPU backend made from a context alone (cc_cpu_backend_create_ctx):
     it runs a host family's collectives, calls the family's abort entry
     when one fails, and refuses a communicator of the in-process world;
   - a family on "cuda" streams refused by the CPU backend at cc_exec_create;
   - a backend with memory entries: the executor's own collectives use its
     memory, every allocation is freed.

   Rank threads never call CHECK: they record, the main thread checks. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* g_ctx;

/* ---- an independent reference for the half types ---------------------------
   value_*: the number a bit pattern stands for (ldexp, no float tricks);
   round_*: the pattern nearest to an exact double, by binary search over the
   positive finite patterns, which increase with their value; ties go to the
   even pattern; beyond the largest finite value plus half its spacing,
   infinity. */
static double value_f16(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}
static double value_bf16(uint16_t h) {
    int e = (h >> 7) & 255, m = h & 127;
    double v = e == 0 ? ldexp(m, -133) : e == 255 ? (m ? NAN : INFINITY) : ldexp(128 + m, e - 134);
    return h & 0x8000 ? -v : v;
}
static uint16_t round_to(double x, int bf, int neg_zero) {
    double (*val)(uint16_t) = bf ? value_bf16 : value_f16;
    uint16_t top = bf ? 0x7F7F : 0x7BFF, inf = bf ? 0x7F80 : 0x7C00, sign = x < 0 ? 0x8000 : 0, lo = 0, hi = top;
    double a = fabs(x), limit = val(top) + 0.5 * (val(top) - val((uint16_t)(top - 1)));
    if (x == 0) return neg_zero ? 0x8000 : 0;
    if (a >= limit) return (uint16_t)(sign | inf);
    while (lo < hi) {   /* the largest pattern whose value is <= a */
        uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (val(mid) <= a) lo = mid; else hi = (uint16_t)(mid - 1);
    }
    if (lo < top) {
        double d0 = a - val(lo), d1 = val((uint16_t)(lo + 1)) - a;
        if (d1 < d0 || (d1 == d0 && (lo & 1))) lo++;
    } else if (a > val(top)) {
        lo = top;   /* below the limit: rounds down to the largest */
    }
    return (uint16_t)(sign | lo);
}

/* ---- running one collective on every rank -----------------------------------*/
#define MAXR 4
typedef struct half_case {
    cc_dtype dt;
    cc_reduce_op op;
    cc_coll_kind kind;
    size_t n;
    const uint16_t* in[MAXR];   /* per rank */
    uint16_t* out[MAXR];
    cc_result rc[MAXR];
} half_case;

static cc_result half_rank(cc_rank* rank, void* ud) {
    half_case* h = (half_case*)ud;
    int r = cc_rank_index(rank);
    cc_collective c;
    memset(&c, 0, sizeof c);
    c.kind = h->kind; c.dtype = h->dt; c.reduce = h->op; c.n_elems = h->n;
    c.comm = cc_rank_world_comm(rank);
    c.send_buf = h->in[r]; c.recv_buf = h->out[r];
    h->rc[r] = cc_comm_run(&c);
    return h->rc[r];
}

static int run_half(int n_ranks, half_case* h) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    cc_result r;
    d.n_ranks = n_ranks;
    d.timeout_s = 20;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) return 0;
    r = cc_world_run(w, half_rank, h);
    if (r != CC_OK) printf("  world run: %s\n", cc_world_error(w));
    cc_world_destroy(w);
    return r == CC_OK;
}

/* Sum (or op) of the given per-rank values on n ranks, one element. */
static uint16_t reduce1(cc_dtype dt, cc_reduce_op op, int n_ranks, const uint16_t* v) {
    uint16_t in[MAXR][1], out[MAXR][1];
    half_case h;
    int r;
    memset(&h, 0, sizeof h);
    h.dt = dt; h.op = op; h.kind = CC_COLL_ALL_REDUCE; h.n = 1;
    for (r = 0; r < n_ranks; r++) { in[r][0] = v[r]; out[r][0] = 0xDEAD; h.in[r] = in[r]; h.out[r] = out[r]; }
    if (!run_half(n_ranks, &h)) return 0xDEAD;
    for (r = 1; r < n_ranks; r++)
        if (out[r][0] != out[0][0]) return 0xBEEF;   /* ranks disagree */
    return out[0][0];
}

static void test_half_by_hand(void) {
    /* float16: 1 = 0x3C00, one unit in the last place at 1 is 2^-10 */
    uint16_t a[3];
    a[0] = 0x3C00; a[1] = 0x1000;   /* 1 + 2^-11: halfway, ties to the even 1 */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x3C00, "f16: 1 + 2^-11 rounds to 1 (ties to even)");
    a[1] = 0x1600;                  /* 1 + 3*2^-11 = 1 + 1.5 ulp: ties to the even 1 + 2 ulp */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x3C02, "f16: 1 + 3*2^-11 rounds up to 1 + 2^-9");
    a[0] = 0x3C01; a[1] = 0x1000;   /* (1 + 2^-10) + 2^-11: halfway, ties to the even 1 + 2^-9 */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x3C02, "f16: (1 + 2^-10) + 2^-11 rounds up to even");
    a[0] = 0x3C00; a[1] = 0x1000; a[2] = 0x1000;   /* rounded after every addition: 1, then 1 again */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 3, a), 0x3C00,
              "f16 on 3 ranks: 1 + 2^-11 + 2^-11 is 1 in rank order (the exact 1 + 2^-10 is not reached)");
    a[0] = 0x1000; a[1] = 0x1000; a[2] = 0x3C00;   /* other order: 2^-10 first, exact */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 3, a), 0x3C01, "f16 on 3 ranks: 2^-11 + 2^-11 + 1 = 1 + 2^-10");
    a[0] = 0x7BFF; a[1] = 0x4C00;   /* 65504 + 16 = 65520: halfway to 65536, ties to even: infinity */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x7C00, "f16: 65504 + 16 overflows to infinity");
    a[1] = 0x4800;                  /* 65504 + 8: rounds back to 65504 */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x7BFF, "f16: 65504 + 8 stays 65504");
    a[0] = 0x0001; a[1] = 0x0001;   /* subnormals add exactly */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x0002, "f16: 2^-24 + 2^-24 = 2^-23 (subnormal)");
    a[0] = 0x8000; a[1] = 0x8000;
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x8000, "f16: -0 + -0 = -0");
    a[0] = 0x3C00; a[1] = 0xBC00;
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_SUM, 2, a), 0x0000, "f16: 1 + -1 = +0");
    a[0] = 0x3C00; a[1] = 0x3C01;   /* average: (1 + (1 + 2^-10)) = 2 + 2^-10 -> 2 (ties to even), / 2 = 1 */
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_AVG, 2, a), 0x3C00, "f16 average of 1 and 1 + 2^-10: the sum rounds first, to 2, then / 2 = 1");
    a[0] = 0xBC00; a[1] = 0xC000;
    CHECK_INT(reduce1(CC_DTYPE_FLOAT16, CC_REDUCE_MAX, 2, a), 0xBC00, "f16 max of -1 and -2 is -1");
    /* bfloat16: 1 = 0x3F80, one unit in the last place at 1 is 2^-7 */
    a[0] = 0x3F80; a[1] = 0x3B80;   /* 1 + 2^-8: halfway, ties to the even 1 */
    CHECK_INT(reduce1(CC_DTYPE_BFLOAT16, CC_REDUCE_SUM, 2, a), 0x3F80, "bf16: 1 + 2^-8 rounds to 1 (ties to even)");
    a[1] = 0x3C40;                  /* 1 + 3*2^-8: ties to 1 + 2^-6 */
    CHECK_INT(reduce1(CC_DTYPE_BFLOAT16, CC_REDUCE_SUM, 2, a), 0x3F82, "bf16: 1 + 3*2^-8 rounds up to 1 + 2^-6");
    a[0] = 0x7F7F; a[1] = 0x7F7F;   /* the largest finite value doubled: infinity */
    CHECK_INT(reduce1(CC_DTYPE_BFLOAT16, CC_REDUCE_SUM, 2, a), 0x7F80, "bf16: max + max overflows to infinity");
    a[0] = 0x3F80; a[1] = 0x3F80; a[2] = 0x3F80;   /* 3 / 3 */
    CHECK_INT(reduce1(CC_DTYPE_BFLOAT16, CC_REDUCE_AVG, 3, a), 0x3F80, "bf16 average of three ones is one");
}

/* Random pairs on 2 ranks against the brute-force reference: sums, averages
   and maxima; every float16 pattern plus +0 gives itself back. bfloat16
   operands keep their exponents within 2^40 of each other, so that the
   reference's double sum is exact. */
static void test_half_brute_force(void) {
    enum { N = 40000 };
    uint16_t* in0 = (uint16_t*)malloc(N * 2);
    uint16_t* in1 = (uint16_t*)malloc(N * 2);
    uint16_t* o0 = (uint16_t*)malloc(N * 2);
    uint16_t* o1 = (uint16_t*)malloc(N * 2);
    tu_rng rng = { 12345 };
    int bf, opi;
    for (bf = 0; bf < 2; bf++)
        for (opi = 0; opi < 3; opi++) {
            cc_reduce_op op = opi == 0 ? CC_REDUCE_SUM : opi == 1 ? CC_REDUCE_AVG : CC_REDUCE_MAX;
            double (*val)(uint16_t) = bf ? value_bf16 : value_f16;
            half_case h;
            int i, bad = 0, first = -1;
            for (i = 0; i < N; i++) {
                uint16_t x, y;
                do {
                    x = (uint16_t)tu_rand(&rng);
                    y = (uint16_t)tu_rand(&rng);
                    if (bf) {   /* exponents 100..140 */
                        x = (uint16_t)((x & 0x807F) | ((100 + tu_randint(&rng, 0, 40)) << 7));
                        y = (uint16_t)((y & 0x807F) | ((100 + tu_randint(&rng, 0, 40)) << 7));
                    }
                } while (isnan(val(x)) || isinf(val(x)) || isnan(val(y)) || isinf(val(y)));
                in0[i] = x; in1[i] = y;
            }
            memset(&h, 0, sizeof h);
            h.dt = bf ? CC_DTYPE_BFLOAT16 : CC_DTYPE_FLOAT16; h.op = op; h.kind = CC_COLL_ALL_REDUCE; h.n = N;
            h.in[0] = in0; h.in[1] = in1; h.out[0] = o0; h.out[1] = o1;
            if (!run_half(2, &h)) { CHECK(0, "the world ran"); continue; }
            for (i = 0; i < N; i++) {
                double a = val(in0[i]), b = val(in1[i]);
                int nz = (in0[i] == 0x8000 && in1[i] == 0x8000);
                uint16_t want;
                if (op == CC_REDUCE_MAX) want = b > a ? in1[i] : in0[i];
                else {
                    want = round_to(a + b, bf, nz);
                    if (op == CC_REDUCE_AVG) want = round_to(val(want) / 2, bf, want == 0x8000);
                }
                if (o0[i] != want || o1[i] != want) { if (first < 0) first = i; bad++; }
            }
            CHECK(bad == 0, "%s %s of %d random pairs equals the brute-force rounding (%d differ; first %04x,%04x -> %04x)",
                  bf ? "bf16" : "f16", op == CC_REDUCE_SUM ? "sum" : op == CC_REDUCE_AVG ? "average" : "max", N, bad,
                  first >= 0 ? in0[first] : 0, first >= 0 ? in1[first] : 0, first >= 0 ? o0[first] : 0);
        }
    {   /* every finite or infinite float16 plus +0: itself (-0 + +0 is +0) */
        half_case h;
        int i, bad = 0;
        uint16_t* all = (uint16_t*)malloc(65536 * 2);
        uint16_t* zero = (uint16_t*)calloc(65536, 2);
        uint16_t* r0 = (uint16_t*)malloc(65536 * 2);
        uint16_t* r1 = (uint16_t*)malloc(65536 * 2);
        for (i = 0; i < 65536; i++) all[i] = (uint16_t)i;
        memset(&h, 0, sizeof h);
        h.dt = CC_DTYPE_FLOAT16; h.op = CC_REDUCE_SUM; h.kind = CC_COLL_ALL_REDUCE; h.n = 65536;
        h.in[0] = all; h.in[1] = zero; h.out[0] = r0; h.out[1] = r1;
        if (run_half(2, &h))
            for (i = 0; i < 65536; i++) {
                uint16_t want = i == 0x8000 ? 0 : (uint16_t)i;
                if (isnan(value_f16((uint16_t)i))) { if (!isnan(value_f16(r0[i]))) bad++; continue; }
                if (r0[i] != want || r1[i] != want) bad++;
            }
        CHECK(bad == 0, "f16: each of the 65536 patterns + 0 gives itself (NaN stays NaN): %d differ", bad);
        free(all); free(zero); free(r0); free(r1);
    }
    {   /* all-gather moves the bits untouched, NaN payloads included */
        uint16_t a0[2] = { 0x7E01, 0x0001 }, a1[2] = { 0xFF81, 0x8000 }, g0[4], g1[4];
        half_case h;
        memset(&h, 0, sizeof h);
        h.dt = CC_DTYPE_BFLOAT16; h.kind = CC_COLL_ALL_GATHER; h.n = 2;
        h.in[0] = a0; h.in[1] = a1; h.out[0] = g0; h.out[1] = g1;
        CHECK(run_half(2, &h) && g0[0] == 0x7E01 && g0[1] == 0x0001 && g0[2] == 0xFF81 && g0[3] == 0x8000 &&
                  memcmp(g0, g1, sizeof g0) == 0,
              "bf16 all-gather keeps every bit, NaN payloads and -0 included");
    }
    free(in0); free(in1); free(o0); free(o1);
}

/* ---- split ---------------------------------------------------------------------*/
typedef struct split_run {
    int size[MAXR], rank[MAXR], none[MAXR];
    int32_t gathered[MAXR][MAXR];
    char family[MAXR][16];
    cc_result rc[MAXR];
} split_run;

/* 4 ranks: color = rank % 2, key = -rank (so the split reverses the order);
   then a split in which rank 3 gives no color. */
static cc_result split_rank(cc_rank* rank, void* ud) {
    split_run* S = (split_run*)ud;
    int r = cc_rank_index(rank);
    int32_t me = r;
    cc_comm *half = NULL, *some = NULL;
    cc_collective c;
    cc_result rc = cc_comm_split(cc_rank_world_comm(rank), r % 2, -r, &half);
    if (rc != CC_OK) return S->rc[r] = rc;
    S->size[r] = cc_comm_size(half);
    S->rank[r] = cc_comm_rank(half);
    snprintf(S->family[r], sizeof S->family[r], "%s", cc_comm_family(half));
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_GATHER; c.dtype = CC_DTYPE_INT32; c.n_elems = 1; c.comm = half;
    c.send_buf = &me; c.recv_buf = S->gathered[r];
    if ((rc = cc_comm_run(&c)) != CC_OK) return S->rc[r] = rc;
    rc = cc_comm_split(cc_rank_world_comm(rank), r == 3 ? -1 : 0, 0, &some);
    S->none[r] = some == NULL;
    if (rc == CC_OK && some) S->none[r] = cc_comm_size(some) == 3 ? 0 : -1;
    cc_comm_destroy(half);   /* the world's: left alone, and harmless */
    cc_comm_destroy(some);
    return S->rc[r] = rc;
}

static void test_split(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    split_run S;
    int r;
    memset(&S, 0, sizeof S);
    d.n_ranks = 4;
    d.timeout_s = 20;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    CHECK_RES(NULL, cc_world_run(w, split_rank, &S), CC_OK, "the split run (%s)", cc_world_error(w));
    for (r = 0; r < 4; r++) {
        /* color r%2 holds {r%2, r%2+2}; key -rank puts the higher rank first */
        int hi = r % 2 + 2, lo = r % 2;
        CHECK(S.size[r] == 2 && S.rank[r] == (r == hi ? 0 : 1), "rank %d: size %d, rank %d in its half", r, S.size[r], S.rank[r]);
        CHECK(S.gathered[r][0] == hi && S.gathered[r][1] == lo, "rank %d: gathering world ranks gives {%d,%d} (key order)",
              r, (int)S.gathered[r][0], (int)S.gathered[r][1]);
        CHECK(strcmp(S.family[r], "world") == 0, "rank %d: a split of the world's communicator is of family world", r);
        CHECK_INT(S.none[r], r == 3 ? 1 : 0, "rank %d: %s", r, r == 3 ? "no color gives no communicator" : "color 0 gives a communicator of 3");
    }
    cc_world_destroy(w);
}

/* ---- a family of the test's own: loopback, one member ----------------------------*/
typedef struct loop_fam { pthread_mutex_t mu; int n_calls, n_host_thread; } loop_fam;

static cc_result loop_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    loop_fam* f = (loop_fam*)self;
    size_t es = c->dtype == CC_DTYPE_FLOAT64 ? 8 : c->dtype == CC_DTYPE_FLOAT16 || c->dtype == CC_DTYPE_BFLOAT16 ? 2 : 4;
    pthread_mutex_lock(&f->mu);
    f->n_calls++;
    if (stream == NULL) f->n_host_thread++;   /* host families run on the calling thread */
    pthread_mutex_unlock(&f->mu);
    if (c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) {
        snprintf(msg, msg_size, "loop: no peer to send to");
        return CC_ERR_INVALID_ARG;
    }
    if (c->send_buf != c->recv_buf) memcpy(c->recv_buf, c->send_buf, c->n_elems * es);   /* one member: a copy */
    return CC_OK;
}
static const cc_comm_fns loop_family = { "loop", "host", loop_collective, NULL, NULL, NULL, NULL };

typedef struct loop_data { float x[8], y[8]; } loop_data;
static void produce(void* stream, void* ud) { int i; loop_data* d = (loop_data*)ud; (void)stream; for (i = 0; i < 8; i++) d->x[i] = (float)(i * i); }
static void consume(void* stream, void* ud) { int i; loop_data* d = (loop_data*)ud; (void)stream; for (i = 0; i < 8; i++) d->y[i] += 1.0f; }

typedef struct loop_run {
    loop_fam fam;
    loop_data data;
    cc_result create, agree, profile, step, split;
    char split_msg[600];
    int calls_after_agree, calls_after_profile, calls_after_step;
} loop_run;

static cc_result loop_rank(cc_rank* rank, void* ud) {
    loop_run* L = (loop_run*)ud;
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be = { NULL, NULL };
    cc_comm* comm = NULL;
    cc_comm* out = NULL;
    cc_collective c;
    cc_op_desc d;
    cc_region rx = {0}, ry = {0};
    if ((L->create = cc_comm_wrap(ctx, &loop_family, &L->fam, 0, 1, "loopback", &comm)) != CC_OK) return L->create;
    L->split = cc_comm_split(comm, 0, 0, &out);
    snprintf(L->split_msg, sizeof L->split_msg, "%s", cc_last_error(ctx));
    cc_graph_create(ctx, NULL, &g);
    memset(&rx, 0, sizeof rx); memset(&ry, 0, sizeof ry);
    cc_graph_add_buffer(g, "x", sizeof L->data.x, &rx.buffer);
    cc_graph_add_buffer(g, "y", sizeof L->data.y, &ry.buffer);
    rx.n_bytes = sizeof L->data.x; ry.n_bytes = sizeof L->data.y;
    d = (cc_op_desc){0}; d.name = "produce"; d.duration_us = 5; d.fn = produce; d.user_data = &L->data;
    d.writes = &rx; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.n_elems = 8; c.comm = comm; c.send_buf = L->data.x; c.recv_buf = L->data.y;
    d = (cc_op_desc){0}; d.name = "loop.allreduce"; d.duration_us = 5; d.stream = CC_STREAM_COMM; d.coll = &c;
    d.reads = &rx; d.n_reads = 1; d.writes = &ry; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    d = (cc_op_desc){0}; d.name = "consume"; d.duration_us = 5; d.fn = consume; d.user_data = &L->data;
    d.reads = &ry; d.n_reads = 1; d.writes = &ry; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    if (cc_plan_create(ctx, g, NULL, &plan) == CC_OK && cc_cpu_backend_create(rank, &be) == CC_OK &&
        cc_exec_create(ctx, plan, &be, &x) == CC_OK) {
        L->agree = cc_exec_agree(x, comm);
        L->calls_after_agree = L->fam.n_calls;
        (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
        L->profile = cc_exec_profile_ops(x, 3, comm);
        L->calls_after_profile = L->fam.n_calls;
        memset(L->data.y, 0, sizeof L->data.y);
        L->step = cc_exec_step(x);
        L->calls_after_step = L->fam.n_calls;
    } else {
        L->step = CC_ERR_BACKEND;
        snprintf(L->split_msg, sizeof L->split_msg, "set-up failed: %s", cc_last_error(ctx));
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    return CC_OK;
}

static void test_own_family(void) {
    loop_run L;
    cc_world* w = NULL;
    int i, ok = 1;
    memset(&L, 0, sizeof L);
    pthread_mutex_init(&L.fam.mu, NULL);
    if (cc_world_create(g_ctx, NULL, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    CHECK_RES(NULL, cc_world_run(w, loop_rank, &L), CC_OK, "the loopback run");
    CHECK_RES(NULL, L.create, CC_OK, "cc_comm_wrap of a family of one's own");
    CHECK_RES(NULL, L.split, CC_ERR_UNSUPPORTED, "cc_comm_split of a family without split");
    CHECK_CONTAINS(L.split_msg, "'loop' cannot split", "the message names the family (%s)", L.split_msg);
    CHECK_RES(NULL, L.agree, CC_OK, "cc_exec_agree through the family");
    CHECK_INT(L.calls_after_agree, 1, "agreement is one collective of the family");
    CHECK_RES(NULL, L.profile, CC_OK, "cc_exec_profile_ops with the family's communicator");
    CHECK_INT(L.calls_after_profile, 1 + 3 + 5 + 1 + 1,
              "profiling: the op three times, the communicator's start-up five times (one element), the maximum of the "
              "durations, the maximum of the overlap slowdowns (the all-reduce shares memory with both compute ops: it is "
              "never run beside one)");
    CHECK_RES(NULL, L.step, CC_OK, "a step on the CPU backend runs the family's collective");
    CHECK_INT(L.calls_after_step, 12, "one more call for the step");
    CHECK_INT(L.fam.n_host_thread, 12, "every call ran on a host thread (no native stream)");
    for (i = 0; i < 8; i++) if (L.data.y[i] != (float)(i * i) + 1.0f) ok = 0;
    CHECK(ok, "produce -> the family's all-reduce (a copy) -> consume, in order");
    cc_world_destroy(w);
    pthread_mutex_destroy(&L.fam.mu);
}

/* ---- the CPU backend of a process that is one rank (cc_cpu_backend_create_ctx) ----
   A host family whose collective fails when asked to (send), with an abort
   entry that records why: the backend runs the family's collectives without
   a world, calls abort when one fails in a step, and refuses a communicator
   of the in-process world. */
typedef struct abort_fam { loop_fam loop; int n_aborts; char why[600]; } abort_fam;
static cc_result abort_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    return loop_collective(&((abort_fam*)self)->loop, stream, c, msg, msg_size);
}
static void abort_abort(void* self, const char* why) {
    abort_fam* f = (abort_fam*)self;
    f->n_aborts++;
    snprintf(f->why, sizeof f->why, "%s", why);
}
static const cc_comm_fns abort_family = { "aborting", "host", abort_collective, NULL, NULL, NULL, abort_abort };

static cc_result world_comm_rank(cc_rank* rank, void* ud) { *(cc_comm**)ud = cc_rank_world_comm(rank); return CC_OK; }

static void test_backend_ctx(void) {
    abort_fam fam;
    cc_context* ctx = NULL;
    cc_backend be = { NULL, NULL };
    cc_comm *comm = NULL, *wcomm = NULL;
    cc_world* w = NULL;
    cc_collective c;
    float x[4] = { 1, 2, 3, 4 }, y[4] = { 0, 0, 0, 0 };
    void* st = NULL;
    cc_result r;
    memset(&fam, 0, sizeof fam);
    pthread_mutex_init(&fam.loop.mu, NULL);
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "a context")) return;
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "cc_cpu_backend_create_ctx from a context alone");
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, NULL), CC_ERR_INVALID_ARG, "out NULL is refused");
    CHECK_RES(NULL, cc_cpu_backend_create_ctx(NULL, &be), CC_ERR_INVALID_ARG, "ctx NULL is refused");
    CHECK_RES(ctx, cc_comm_wrap(ctx, &abort_family, &fam, 0, 1, "solo", &comm), CC_OK, "a host family of one's own");
    CHECK_RES(ctx, be.fns->stream_create(be.self, 1, &st), CC_OK, "a stream");
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_GATHER; c.dtype = CC_DTYPE_FLOAT32; c.n_elems = 4; c.comm = comm; c.send_buf = x; c.recv_buf = y;
    CHECK_RES(ctx, be.fns->collective(be.self, st, &c), CC_OK, "a collective is enqueued");
    CHECK_RES(ctx, be.fns->synchronize(be.self), CC_OK, "and runs");
    CHECK(y[3] == 4.0f && fam.n_aborts == 0, "the family's collective ran on the stream (y[3] = %g), no abort", (double)y[3]);
    c.kind = CC_COLL_SEND; c.peer = 0;
    CHECK_RES(ctx, be.fns->collective(be.self, st, &c), CC_OK, "a failing collective is enqueued");
    r = be.fns->synchronize(be.self);
    CHECK_RES(ctx, r, CC_ERR_INVALID_ARG, "synchronize reports its failure");
    CHECK_CONTAINS(cc_last_error(ctx), "no peer", "with the family's message");
    CHECK_INT(fam.n_aborts, 1, "the backend called the family's abort entry once");
    CHECK_CONTAINS(fam.why, "no peer", "with the failure as the reason");
    if (cc_world_create(g_ctx, NULL, &w) == CC_OK && cc_world_run(w, world_comm_rank, &wcomm) == CC_OK) {
        c.comm = wcomm; c.kind = CC_COLL_ALL_GATHER;
        r = be.fns->collective(be.self, st, &c);
        CHECK_RES(ctx, r, CC_ERR_INVALID_ARG, "a communicator of the in-process world is refused");
        CHECK_CONTAINS(cc_last_error(ctx), "cc_cpu_backend_create(rank)", "saying which backend to make");
    } else
        CHECK(0, "an in-process world");
    cc_world_destroy(w);
    cc_backend_destroy(&be);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
    pthread_mutex_destroy(&fam.loop.mu);
}

/* ---- a family on CUDA streams is refused by the CPU backend --------------------*/
static cc_result never_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c;
    snprintf(msg, msg_size, "never runs");
    return CC_ERR_BACKEND;
}
static const cc_comm_fns gpu_family = { "gpu-like", "cuda", never_collective, NULL, NULL, NULL, NULL };

typedef struct kind_run { cc_result create, agree; char msg[600], agree_msg[600]; } kind_run;
static cc_result kind_rank(cc_rank* rank, void* ud) {
    kind_run* K = (kind_run*)ud;
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be = { NULL, NULL };
    cc_comm* comm = NULL;
    cc_collective c;
    cc_op_desc d;
    float buf[4] = { 0 };
    cc_comm_wrap(ctx, &gpu_family, NULL, 0, 1, "nvlink", &comm);
    cc_graph_create(ctx, NULL, &g);
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.n_elems = 4; c.comm = comm; c.send_buf = buf; c.recv_buf = buf;
    d = (cc_op_desc){0}; d.name = "grad.allreduce"; d.duration_us = 5; d.stream = CC_STREAM_COMM; d.coll = &c;
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &plan);
    cc_cpu_backend_create(rank, &be);
    K->create = cc_exec_create(ctx, plan, &be, &x);
    snprintf(K->msg, sizeof K->msg, "%s", cc_last_error(ctx));
    cc_exec_destroy(x);
    x = NULL;
    cc_plan_destroy(plan);
    /* agreement on that communicator through an executor of a plan without it */
    cc_graph_destroy(g);
    cc_graph_create(ctx, NULL, &g);
    d = (cc_op_desc){0}; d.name = "compute"; d.duration_us = 5;
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &plan);
    if (cc_exec_create(ctx, plan, &be, &x) == CC_OK) {
        K->agree = cc_exec_agree(x, comm);
        snprintf(K->agree_msg, sizeof K->agree_msg, "%s", cc_last_error(ctx));
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    return CC_OK;
}

static void test_stream_kind(void) {
    kind_run K;
    cc_world* w = NULL;
    memset(&K, 0, sizeof K);
    if (cc_world_create(g_ctx, NULL, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    CHECK_RES(NULL, cc_world_run(w, kind_rank, &K), CC_OK, "the run");
    CHECK_RES(NULL, K.create, CC_ERR_UNSUPPORTED, "cc_exec_create refuses a communicator on cuda streams for the CPU backend");
    CHECK_CONTAINS(K.msg, "grad.allreduce", "the message names the op (%s)", K.msg);
    CHECK_CONTAINS(K.msg, "nvlink", "... the communicator");
    CHECK_CONTAINS(K.msg, "'gpu-like' ('cuda' streams)", "... its family and stream kind");
    CHECK_CONTAINS(K.msg, "'cpu' ('host' streams)", "... and the backend's");
    CHECK_RES(NULL, K.agree, CC_ERR_UNSUPPORTED, "cc_exec_agree on such a communicator is refused too");
    CHECK_CONTAINS(K.agree_msg, "cc_exec_agree", "naming the call (%s)", K.agree_msg);
    cc_world_destroy(w);
}

/* ---- a backend with memory: the CPU backend plus a tracked arena -------------------
   mem_alloc hands out tracked blocks; the collective entry records whether
   each collective's buffers lie in tracked blocks, then passes it on. */
typedef struct arena { pthread_mutex_t mu; void* blocks[64]; size_t sizes[64]; int n_live, n_allocs, n_copies, n_dev_colls, n_colls; } arena;
static arena g_arena;
static const cc_backend_fns* g_cpu_fns;

static int in_arena(const void* p) {
    int i;
    for (i = 0; i < 64; i++)
        if (g_arena.blocks[i] && (const char*)p >= (const char*)g_arena.blocks[i] &&
            (const char*)p < (const char*)g_arena.blocks[i] + g_arena.sizes[i]) return 1;
    return 0;
}
static cc_result arena_alloc(void* self, size_t n, void** p) {
    int i;
    (void)self;
    pthread_mutex_lock(&g_arena.mu);
    for (i = 0; i < 64 && g_arena.blocks[i]; i++) {}
    if (i == 64 || !(g_arena.blocks[i] = malloc(n ? n : 1))) { pthread_mutex_unlock(&g_arena.mu); return CC_ERR_OUT_OF_MEMORY; }
    g_arena.sizes[i] = n ? n : 1;
    g_arena.n_live++; g_arena.n_allocs++;
    *p = g_arena.blocks[i];
    pthread_mutex_unlock(&g_arena.mu);
    return CC_OK;
}
static void arena_free(void* self, void* p) {
    int i;
    (void)self;
    pthread_mutex_lock(&g_arena.mu);
    for (i = 0; i < 64; i++)
        if (g_arena.blocks[i] == p) { free(p); g_arena.blocks[i] = NULL; g_arena.n_live--; }
    pthread_mutex_unlock(&g_arena.mu);
}
static cc_result arena_copy(void* self, void* dst, const void* src, size_t n) {
    (void)self;
    pthread_mutex_lock(&g_arena.mu);
    g_arena.n_copies++;
    pthread_mutex_unlock(&g_arena.mu);
    memcpy(dst, src, n);
    return CC_OK;
}
static cc_result arena_collective(void* self, void* stream, const cc_collective* c) {
    pthread_mutex_lock(&g_arena.mu);
    g_arena.n_colls++;
    if (in_arena(c->send_buf) && in_arena(c->recv_buf)) g_arena.n_dev_colls++;
    pthread_mutex_unlock(&g_arena.mu);
    return g_cpu_fns->collective(self, stream, c);
}

typedef struct mem_run { cc_result agree[2], profile[2]; double dur[2][2]; } mem_run;
static void sleep_op(void* stream, void* ud) {
    struct timespec ts = { 0, 0 };
    (void)stream;
    ts.tv_nsec = (long)(*(const int*)ud) * 1000L;
    nanosleep(&ts, NULL);
}
static cc_result mem_rank(cc_rank* rank, void* ud) {
    static int us[2] = { 300, 3000 };
    static cc_backend_fns fns;   /* the CPU table with memory entries; the same for both ranks */
    mem_run* M = (mem_run*)ud;
    int r = cc_rank_index(rank);
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend cpu = { NULL, NULL }, be;
    cc_op_desc d;
    int i;
    cc_graph_create(ctx, NULL, &g);
    for (i = 0; i < 2; i++) {   /* rank 1's first op is slow, rank 0's second: the maximum mixes them */
        d = (cc_op_desc){0}; d.name = i ? "b" : "a"; d.duration_us = 5; d.fn = sleep_op;
        d.user_data = &us[(i + r) % 2 == 1];
        cc_graph_add_op(g, &d, NULL);
    }
    cc_plan_create(ctx, g, NULL, &plan);
    if (cc_cpu_backend_create(rank, &cpu) != CC_OK) return CC_ERR_BACKEND;
    pthread_mutex_lock(&g_arena.mu);
    if (!g_cpu_fns) {
        g_cpu_fns = cpu.fns;
        fns = *cpu.fns;
        fns.name = "cpu+arena";
        fns.collective = arena_collective;
        fns.mem_alloc = arena_alloc; fns.mem_free = arena_free; fns.mem_copy = arena_copy;
    }
    pthread_mutex_unlock(&g_arena.mu);
    be.fns = &fns; be.self = cpu.self;
    if (cc_exec_create(ctx, plan, &be, &x) == CC_OK) {
        M->agree[r] = cc_exec_agree(x, cc_rank_world_comm(rank));
        (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
        M->profile[r] = cc_exec_profile_ops(x, 3, cc_rank_world_comm(rank));
        for (i = 0; i < 2; i++) M->dur[r][i] = cc_op_duration_us(g, cc_graph_op(g, i));
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&cpu);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_backend_memory(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    mem_run M;
    int r;
    memset(&M, 0, sizeof M);
    pthread_mutex_init(&g_arena.mu, NULL);
    d.n_ranks = 2;
    d.timeout_s = 20;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    CHECK_RES(NULL, cc_world_run(w, mem_rank, &M), CC_OK, "the run");
    for (r = 0; r < 2; r++) {
        CHECK_RES(NULL, M.agree[r], CC_OK, "rank %d: agreement with backend memory", r);
        CHECK_RES(NULL, M.profile[r], CC_OK, "rank %d: profiling with backend memory", r);
        CHECK(M.dur[r][0] >= 2500 && M.dur[r][1] >= 2500, "rank %d: both ops take the slower rank's time (%.0f, %.0f us)",
              r, M.dur[r][0], M.dur[r][1]);
    }
    CHECK(M.dur[0][0] == M.dur[1][0] && M.dur[0][1] == M.dur[1][1], "the ranks agree on the durations bit for bit");
    CHECK_INT(g_arena.n_colls, 4, "two collectives per rank (agreement, maximum)");
    CHECK_INT(g_arena.n_dev_colls, 4, "each with its buffers in the backend's memory");
    CHECK_INT(g_arena.n_allocs, 6, "per rank a send and a receive buffer for agreement, one for the maximum (in place)");
    CHECK_INT(g_arena.n_live, 0, "every block freed");
    CHECK(g_arena.n_copies == 8, "copied in and out (%d copies)", g_arena.n_copies);
    cc_world_destroy(w);
    pthread_mutex_destroy(&g_arena.mu);
}

int main(void) {
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 1;
    TH_RUN(test_half_by_hand);
    TH_RUN(test_half_brute_force);
    TH_RUN(test_split);
    TH_RUN(test_own_family);
    TH_RUN(test_backend_ctx);
    TH_RUN(test_stream_kind);
    TH_RUN(test_backend_memory);
    cc_context_destroy(g_ctx);
    return th_done();
}
