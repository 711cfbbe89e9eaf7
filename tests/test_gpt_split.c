/* tests/test_gpt_split.c - the example trainers' split rules
   (examples/steps/gpt_step.h, gpt_op_split) and the CPU trainer's chunk
   kernels (examples/gpt/gpt_cpu_ops.h) on a real step: a small GPT
   (L=1, C=48, H=4, T=8, V=50, 3 sequences a micro-batch: N=24 rows, two
   micro-batches, so that the second's weight gradients accumulate) under
   TP2, and again with sequence parallelism (12 rows a rank for the norms
   and residuals), its tensors in memory with random values.

   For every op of the step that has a split rule, along every axis the
   rule allows, for chunk counts that divide the axis and counts that do
   not (uneven chunks): the library checks the rule's chunks
   (cc_op_split_check, and it calls exact only the splits without a
   partial sum), then the op runs whole (the reference) and, from the same
   inputs and the same prior contents of its outputs, chunk by chunk in
   order (gpt_op_part), each chunk given the rule's regions
   (cc_op_split_regions) and checked to write no byte outside them. Then:
   - rows and columns: every output bit-identical to the whole op's
     (each output element is summed as the whole op sums it);
   - a partial sum (a matmul's reduction dimension, the weight gradients
     of the layer norms and, with SP, of the matmuls over rows): within
     1e-5 of the largest magnitude of that output (at least 1): the chunks
     add their parts in another order (float32 sums of at most 96 terms of
     magnitude <= 1 here: rounding is about 96 * 2^-24 of the terms' sum).
   Every op of the kinds the step cuts in chunks must have a rule, so that
   the test cannot pass by finding none: without SP matmul, matmul_bwd_x,
   residual, layernorm_bwd next to a TP all-reduce, attention and its
   backward by sequences; with SP also the layer norms, qkv, fc
   (matmul_gelu), the input gradients of fcproj (matmul_gelu_bwd_x) and
   proj, the weight gradients next to the all-gathers and lnf's backward,
   each new kind checked along each axis it allows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "../examples/steps/gpt_step.h"
#include "../examples/gpt/gpt_kernels.h"
#include "../examples/gpt/gpt_cpu_ops.h"

static cc_context* g_ctx;

static void* t_alloc(size_t n) { return calloc(1, n); }
static int t_copy(void* dst, const void* src, size_t n) { memcpy(dst, src, n); return 1; }
static const gpt_kernel_table cpu_table = { GPT_CPU_OPS, t_alloc, free, t_copy, t_copy, NULL };

/* A byte at offset o of the region's buffer is in region r. */
static int in_region(const cc_region* r, uint64_t o) {
    uint64_t rows = r->n_rows > 1 ? r->n_rows : 1, k;
    if (o < r->offset_bytes) return 0;
    o -= r->offset_bytes;
    if (rows == 1) return o < r->n_bytes;
    k = o / r->stride_bytes;
    return k < rows && o % r->stride_bytes < r->n_bytes;
}

/* The op's outputs (out[0..n_out)), as bytes. */
typedef struct snap { unsigned char* b[GPT_OP_MAX_OUT]; } snap;
static void take(const gpt_op_args* a, snap* s) {
    int i;
    for (i = 0; i < GPT_OP_MAX_OUT; i++) {
        s->b[i] = NULL;
        if (a->out[i] && (s->b[i] = (unsigned char*)malloc(a->out[i]->bytes))) memcpy(s->b[i], a->out[i]->p, a->out[i]->bytes);
    }
}
static void put(const gpt_op_args* a, const snap* s) {
    int i;
    for (i = 0; i < GPT_OP_MAX_OUT; i++) if (a->out[i] && s->b[i]) memcpy(a->out[i]->p, s->b[i], a->out[i]->bytes);
}
static void drop(snap* s) {
    int i;
    for (i = 0; i < GPT_OP_MAX_OUT; i++) free(s->b[i]);
}

static unsigned split_axes(const cc_split* sp) {
    if (sp->axes) return sp->axes;
    switch (sp->kind) {
    case CC_SPLIT_MATMUL: return 1u << CC_AXIS_ROWS | 1u << CC_AXIS_COLS | 1u << CC_AXIS_REDUCE;
    case CC_SPLIT_ATTENTION: return 1u << CC_AXIS_ROWS | 1u << CC_AXIS_HEADS;
    default: return 1u << CC_AXIS_ROWS;
    }
}

static int n_checked[CC_AXIS_COUNT], n_exact, n_partial;
static int n_kind_axis[GPT_OP_KINDS][CC_AXIS_COUNT];   /* splits checked, by op kind and axis */

/* Op i of g (record a): whole against its chunks along axis, count of them. */
static void check_split(cc_graph* g, int i, gpt_op_args* a, const cc_split* sp, cc_axis axis, int count) {
    cc_op op = cc_graph_op(g, i);
    const char* nm = cc_op_name(g, op);
    uint64_t E = sp->extent[axis];
    cc_region rd[GPT_OP_MAX_IN + 2], wr[GPT_OP_MAX_OUT];
    int partial[GPT_OP_MAX_OUT], part_of[GPT_OP_MAX_OUT] = { 0 }, any_partial = 0, exact = -1, k, q, j, ok_w = 1, ok_v = 1;
    snap before, whole, pre;
    cc_result r = cc_op_split_check(g, op, axis, count, &exact);
    if (r != CC_OK) {
        CHECK(0, "%s: the library refuses its rule's %d chunks along %s: %s", nm, count, cc_axis_name(axis), cc_last_error(g_ctx));
        return;
    }
    take(a, &before);
    gpt_op_whole(NULL, a);
    take(a, &whole);
    put(a, &before);
    for (k = 0; k < count; k++) {
        cc_split_chunk ch;
        memset(&ch, 0, sizeof ch);
        ch.axis = axis;
        ch.index = k;
        ch.count = count;
        ch.begin = (uint64_t)k * E / (uint64_t)count;
        ch.end = (uint64_t)(k + 1) * E / (uint64_t)count;
        if (cc_op_split_regions(g, op, axis, k, count, rd, wr, partial) != CC_OK) {
            CHECK(0, "%s: regions of chunk %d of %d along %s: %s", nm, k, count, cc_axis_name(axis), cc_last_error(g_ctx));
            break;
        }
        take(a, &pre);
        gpt_op_part(NULL, a, &ch);
        /* every byte the chunk changed lies in its write regions (write q is out q) */
        for (q = 0, j = 0; j < GPT_OP_MAX_OUT; j++) {
            const gpt_tensor* t = a->out[j];
            const gpt_tensor* w;
            size_t b;
            if (!t) continue;
            any_partial |= partial[q];
            part_of[j] = partial[q];
            w = t->whole ? t->whole : t;
            for (b = 0; b < t->bytes && ok_w; b++)
                if (((unsigned char*)t->p)[b] != pre.b[j][b] && !in_region(&wr[q], (uint64_t)(t->off - w->off + b))) {
                    CHECK(0, "%s: chunk %d of %d along %s writes byte %zu of '%s' outside its region", nm, k, count,
                          cc_axis_name(axis), b, t->name);
                    ok_w = 0;
                }
            q++;
        }
        drop(&pre);
    }
    /* the chunks together against the whole op */
    for (j = 0; j < GPT_OP_MAX_OUT && ok_v; j++) {
        const gpt_tensor* t = a->out[j];
        if (!t || !whole.b[j]) continue;
        if (!part_of[j]) {   /* cut along the axis: bit for bit */
            if (memcmp(t->p, whole.b[j], t->bytes)) {
                CHECK(0, "%s: %d chunks along %s: '%s' differs from the whole op's", nm, count, cc_axis_name(axis), t->name);
                ok_v = 0;
            }
        } else {   /* a partial sum: float32 here */
            const float *x = (const float*)t->p, *y = (const float*)whole.b[j];
            size_t e, n = t->bytes / sizeof(float);
            double big = 1, worst = 0;
            for (e = 0; e < n; e++) if (fabs(y[e]) > big) big = fabs(y[e]);
            for (e = 0; e < n; e++) if (fabs((double)x[e] - y[e]) > worst) worst = fabs((double)x[e] - y[e]);
            if (worst > 1e-5 * big) {
                CHECK(0, "%s: %d chunks along %s: partial sums of '%s' off by %g (largest %g)", nm, count, cc_axis_name(axis), t->name,
                      worst, big);
                ok_v = 0;
            }
        }
    }
    if (exact != !any_partial)
        CHECK(0, "%s along %s: the library calls the split %s, the rule writes %s", nm, cc_axis_name(axis), exact ? "exact" : "inexact",
              any_partial ? "a partial sum" : "no partial sum");
    else if (ok_w && ok_v) {
        n_checked[axis]++;
        if (any_partial) n_partial++;
        else n_exact++;
    }
    put(a, &before);
    drop(&before);
    drop(&whole);
}

static void fill(gpt_model* m, tu_rng* rng) {
    int i;
    for (i = 0; i < m->n_tensors; i++) {
        gpt_tensor* t = m->t[i];
        size_t e, n;
        if (t->whole || !t->p) continue;
        n = gpt_tensor_elems(t);
        if (t->dtype == CC_DTYPE_INT32)
            for (e = 0; e < n; e++) ((int*)t->p)[e] = tu_randint(rng, 0, m->cfg.V - 1);
        else if (t->dtype == CC_DTYPE_FLOAT32)
            for (e = 0; e < n; e++) ((float*)t->p)[e] = (float)(2 * tu_unit(rng) - 1);
    }
}

/* Every ruled op of the training step of d (its tensors random), along
   every axis its rule allows; the number of ruled ops, or -1 where the
   step does not build. */
static int check_step(const gpt_step_desc* d, const char* what) {
    gpt_model m;
    gpt_op_store st;
    cc_graph* g = NULL;
    tu_rng rng = { 7 };
    int i, n = 0;
    static const int counts[] = { 2, 3, 4, 5, 8 };
    memset(&st, 0, sizeof st);
    cc_result r = gpt_model_create(&m, d, &cpu_table, g_ctx);
    if (r == CC_OK) r = gpt_step_plan_comms(&m);
    if (r == CC_OK) fill(&m, &rng);
    if (r == CC_OK) r = gpt_build_graph(&m, 1, &g, &st);
    if (!CHECK(r == CC_OK, "%s: the model, its communicators and its training step build", what)) {
        NOTE("%s / %s", m.error, cc_last_error(g_ctx));
        n = -1;
    }
    for (i = 0; g && i < cc_graph_n_ops(g); i++) {
        const gpt_step_op_info* in = &st.info[i];
        gpt_op_args* a;
        cc_split sp;
        unsigned axes;
        int ax, c;
        if (in->kind < 0) continue;
        a = (gpt_op_args*)cc_op_user_data(g, cc_graph_op(g, i));
        if (!a->chunked) continue;
        n++;
        if (!gpt_op_split(a, &sp)) {
            CHECK(0, "%s: an op marked split has a rule", cc_op_name(g, cc_graph_op(g, i)));
            continue;
        }
        axes = split_axes(&sp);
        for (ax = 0; ax < CC_AXIS_COUNT; ax++) {
            if (!(axes >> ax & 1u)) continue;
            for (c = 0; c < (int)(sizeof counts / sizeof counts[0]); c++)
                if ((uint64_t)counts[c] <= sp.extent[ax]) {
                    check_split(g, i, a, &sp, (cc_axis)ax, counts[c]);
                    n_kind_axis[a->kind][ax]++;
                }
        }
    }
    cc_graph_destroy(g);
    gpt_op_store_free(&st);
    gpt_model_free(&m);
    return n;
}

int main(void) {
    gpt_step_desc d;
    int n_fail0, n, k;
    th__test = "test_gpt_split";
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 1;
    memset(&d, 0, sizeof d);
    d.cfg.V = 50; d.cfg.C = 48; d.cfg.L = 1; d.cfg.H = 4; d.cfg.T = 8;
    d.micro_batch = 3;
    d.n_micro = 2;
    d.tp = 2;
    n_fail0 = th__failed;
    n = check_step(&d, "TP2");
    /* per micro-batch: proj, fcproj (matmul); resid1, resid2 (residual);
       fc.bwd_x, qkv.bwd_x (matmul_bwd_x); ln2.bwd, ln1.bwd (layernorm_bwd);
       attn, attn.bwd (attention by sequences) */
    CHECK(n == 20, "TP2: 20 ops of the step have split rules, 10 per micro-batch (%d)", n);
    CHECK(th__failed == n_fail0, "TP2: every split checked equals the whole op: rows and columns bit for bit, partial sums within 1e-5");
    CHECK(n_checked[CC_AXIS_ROWS] > 0 && n_checked[CC_AXIS_COLS] > 0 && n_checked[CC_AXIS_REDUCE] > 0,
          "TP2: chunks checked along rows (%d), columns (%d) and the reduction (%d): %d exact, %d partial sums", n_checked[CC_AXIS_ROWS],
          n_checked[CC_AXIS_COLS], n_checked[CC_AXIS_REDUCE], n_exact, n_partial);
    /* the same with sequence parallelism (N/tp = 12 rows a rank for the
       norms and residuals): besides the ops above, per micro-batch ln1,
       ln2 (layernorm); qkv (matmul with bias); fc (matmul_gelu); fcproj.bwd_x
       (matmul_gelu_bwd_x); proj.bwd_x (matmul_bwd_x); the weight gradients
       of fcproj, fc, proj and qkv (matmul_bwd_w); and lnf.bwd */
    memset(n_checked, 0, sizeof n_checked);
    n_exact = n_partial = 0;
    for (k = 0; k < GPT_OP_KINDS; k++) memset(n_kind_axis[k], 0, sizeof n_kind_axis[k]);
    d.sp = 1;
    n_fail0 = th__failed;
    n = check_step(&d, "TP2 with SP");
    CHECK(n == 42, "TP2 with SP: 42 ops of the step have split rules, 21 per micro-batch (%d)", n);
    CHECK(th__failed == n_fail0, "TP2 with SP: every split checked equals the whole op: rows and columns bit for bit, partial sums "
          "within 1e-5");
    CHECK(n_kind_axis[GPT_OP_LAYERNORM][CC_AXIS_ROWS] > 0 && n_kind_axis[GPT_OP_MATMUL_GELU][CC_AXIS_ROWS] > 0 &&
          n_kind_axis[GPT_OP_MATMUL_GELU][CC_AXIS_COLS] > 0 && n_kind_axis[GPT_OP_MATMUL_GELU_BWD_X][CC_AXIS_ROWS] > 0 &&
          n_kind_axis[GPT_OP_MATMUL_GELU_BWD_X][CC_AXIS_COLS] > 0 && n_kind_axis[GPT_OP_MATMUL_BWD_W][CC_AXIS_ROWS] > 0 &&
          n_kind_axis[GPT_OP_MATMUL][CC_AXIS_COLS] > 0,
          "TP2 with SP: the new kinds checked: layernorm by rows (%d), matmul_gelu by rows and columns (%d, %d), matmul_gelu_bwd_x "
          "(%d, %d), matmul_bwd_w by rows (%d, partial sums); %d exact, %d partial sums in all",
          n_kind_axis[GPT_OP_LAYERNORM][CC_AXIS_ROWS], n_kind_axis[GPT_OP_MATMUL_GELU][CC_AXIS_ROWS],
          n_kind_axis[GPT_OP_MATMUL_GELU][CC_AXIS_COLS], n_kind_axis[GPT_OP_MATMUL_GELU_BWD_X][CC_AXIS_ROWS],
          n_kind_axis[GPT_OP_MATMUL_GELU_BWD_X][CC_AXIS_COLS], n_kind_axis[GPT_OP_MATMUL_BWD_W][CC_AXIS_ROWS], n_exact, n_partial);
    cc_context_destroy(g_ctx);
    return th_done();
}
