/* gpt_cpu_ops.h - the CPU kernels of the example GPT trainer
   (gpt_kernels.h) as the graph builder's ops (../steps/gpt_step.h): what
   each op's record holds in in[] and out[], in the record's sizes, and the
   work of the whole op or of one chunk of it along an axis its split rule
   allows (gpt_op_split): a block of rows (every op cut in chunks), of
   output columns (the matmuls, with GELU or not) or of the reduction (the
   matmuls without bias or GELU; a weight gradient's rows). Row and column
   chunks compute each output element as the whole op does, bit for bit; a
   reduction chunk adds its part of each sum to what the chunks before it
   left. Included by train_gpt.c (the table cpu_kernels) and by the test
   of the chunk kernels (tests/test_gpt_split.c). Include after concerto.h,
   gpt_step.h and gpt_kernels.h. */
#ifndef GPT_CPU_OPS_H
#define GPT_CPU_OPS_H

#include <math.h>
#include <string.h>


/* in: wte [V][C], wpe [T][C], tokens [N]; out: x [N][C]; row n at
   position (row0 + n) mod T */
static void run_embed(const gpt_op_args* a, const gpt_op_view* v) {
    const float *wte = v->in[0], *wpe = v->in[1];
    const int* tokens = v->in[2];
    float* x = v->out[0];
    int n, k;
    for (n = 0; n < v->N; n++) {
        const float* te = wte + (size_t)tokens[n] * a->C;
        const float* pe = wpe + (size_t)((a->row0 + n) % a->T) * a->C;
        for (k = 0; k < a->C; k++) x[(size_t)n * a->C + k] = te[k] + pe[k];
    }
}
/* in: x [N][C], w [C], b [C]; out: y [N][C], mean [N], rstd [N] */
static void run_layernorm(const gpt_op_args* a, const gpt_op_view* v) {
    k_layernorm(v->out[0], v->out[1], v->out[2], v->in[0], v->in[1], v->in[2], v->N, a->C);
}
/* in: x [N][C], w [OC][C], bias [OC] or NULL; out: y [N][OC]. A chunk of
   columns [lo, hi): those of y, from w's rows lo..hi-1; of the reduction:
   x's and w's columns lo..hi-1, added to y after the first chunk (which
   adds the bias, where there is one). */
static void run_matmul(const gpt_op_args* a, const gpt_op_view* v) {
    const float *x = (const float*)v->in[0], *w = (const float*)v->in[1], *b = (const float*)v->in[2];
    float* y = (float*)v->out[0];
    int lo = v->lo, n = v->hi - v->lo;
    if (v->axis == CC_AXIS_COLS)
        k_matmul_ld(y + lo, a->OC, x, a->C, w + (size_t)lo * a->C, a->C, b ? b + lo : NULL, v->N, a->C, n, 0);
    else if (v->axis == CC_AXIS_REDUCE)
        k_matmul_ld(y, a->OC, x + lo, a->C, w + lo, a->C, v->first ? b : NULL, v->N, n, a->OC, !v->first);
    else k_matmul(y, x, w, b, v->N, a->C, a->OC);
}
/* in: x [N][C], w [OC][C], bias [OC]; out: h [N][OC] (x w^T + bias), u [N][OC] (gelu of h).
   A chunk of columns [lo, hi): those of h and u, from w's rows and bias's elements lo..hi-1. */
static void run_matmul_gelu(const gpt_op_args* a, const gpt_op_view* v) {
    float *h = (float*)v->out[0], *u = (float*)v->out[1];
    const float *w = (const float*)v->in[1], *b = (const float*)v->in[2];
    int lo = v->lo, nc = v->hi - v->lo, n;
    if (v->axis == CC_AXIS_COLS) {
        k_matmul_ld(h + lo, a->OC, v->in[0], a->C, w + (size_t)lo * a->C, a->C, b + lo, v->N, a->C, nc, 0);
        for (n = 0; n < v->N; n++) k_gelu(u + (size_t)n * a->OC + lo, h + (size_t)n * a->OC + lo, (size_t)nc);
        return;
    }
    k_matmul(h, v->in[0], w, b, v->N, a->C, a->OC);
    k_gelu(u, h, (size_t)v->N * a->OC);
}
/* in: qkv [B T][3 NH HS] (q, k, v blocks; head h at columns h HS of each);
   out: y [B T][NH HS], att [B][NH][T][T] */
static void run_attention(const gpt_op_args* a, const gpt_op_view* v) {
    k_attention(v->out[0], v->out[1], v->in[0], v->N / a->T, a->T, a->NH, a->HS);   /* a chunk: its sequences */
}
/* in: x [N][C], part [N][C], bias [C]; out: y [N][C] = x + (part + bias) */
static void run_residual(const gpt_op_args* a, const gpt_op_view* v) {
    const float *x = v->in[0], *part = v->in[1], *bias = v->in[2];
    float* y = v->out[0];
    int n, k;
    for (n = 0; n < v->N; n++)
        for (k = 0; k < a->C; k++) {
            size_t i = (size_t)n * a->C + k;
            y[i] = x[i] + (part[i] + bias[k]);
        }
}
/* in: logits [N][V], targets [N]; out: loss [1] (the mean), dlogits [N][V] or NULL */
static void run_crossentropy(const gpt_op_args* a, const gpt_op_view* v) {
    float* loss = v->out[0];
    loss[0] = (float)k_cross_entropy(v->out[1], v->in[0], v->in[1], v->N, a->V, a->grad_rows ? a->grad_rows : v->N);
}
/* in: dy [N][OC], x [N][C]; out: dw [OC][C], dbias [OC] or NULL. Overwritten
   by the first chunk of rows (of a record that does not accumulate), added to
   by the others. */
static void run_matmul_bwd_w(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul_bwd_weight(v->out[0], v->out[1], v->in[0], v->in[1], v->N, a->C, a->OC, !v->first);
}
/* in: dy [N][OC], w [OC][C]; out: dx [N][C]. A chunk of columns [lo, hi):
   those of dx and w; of the reduction: dy's columns and w's rows lo..hi-1,
   the sums going on from what the chunks before left in dx. */
static void run_matmul_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    const float *dy = (const float*)v->in[0], *w = (const float*)v->in[1];
    float* dx = (float*)v->out[0];
    int lo = v->lo, n = v->hi - v->lo;
    if (v->axis == CC_AXIS_COLS) k_matmul_bwd_input_ld(dx + lo, a->C, dy, a->OC, w + lo, a->C, v->N, n, a->OC, 0);
    else if (v->axis == CC_AXIS_REDUCE)
        k_matmul_bwd_input_ld(dx, a->C, dy + lo, a->OC, w + (size_t)lo * a->C, a->C, v->N, a->C, n, !v->first);
    else k_matmul_bwd_input(dx, dy, w, v->N, a->C, a->OC);
}
/* in: dy [N][OC], w [OC][C], h [N][C] (GELU's input); out: dh [N][C]. A
   chunk of columns [lo, hi): those of dh, w and h. */
static void run_matmul_gelu_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    float* dh = (float*)v->out[0];
    const float *w = (const float*)v->in[1], *h = (const float*)v->in[2];
    int lo = v->lo, nc = v->hi - v->lo, n;
    if (v->axis == CC_AXIS_COLS) {
        k_matmul_bwd_input_ld(dh + lo, a->C, v->in[0], a->OC, w + lo, a->C, v->N, nc, a->OC, 0);
        for (n = 0; n < v->N; n++) {
            size_t r = (size_t)n * a->C + lo;
            k_gelu_bwd(dh + r, dh + r, h + r, (size_t)nc);
        }
        return;
    }
    k_matmul_bwd_input(dh, v->in[0], w, v->N, a->C, a->OC);
    k_gelu_bwd(dh, dh, h, (size_t)v->N * a->C);
}
/* in: resid [N][C] or NULL, dy [N][C], x [N][C], mean [N], rstd [N], w [C];
   out: dx [N][C] (resid + the norm's input gradient), dw [C], db [C]. The
   weight gradients sum over rows: chunk 0 writes them, later chunks add. */
static void run_layernorm_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    k_layernorm_bwd(v->out[0], v->out[1], v->out[2], v->in[0], v->in[1], v->in[2], v->in[3], v->in[4], v->in[5], v->N, a->C,
                    !v->first);
}
/* in: dy [B T][NH HS], att [B][NH][T][T], qkv [B T][3 NH HS]; out: dqkv [B T][3 NH HS] */
static void run_attention_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    k_attention_bwd(v->out[0], v->in[0], v->in[1], v->in[2], v->N / a->T, a->T, a->NH, a->HS);
}
/* in: dx [N][C], tokens [N], dwte [V][C]; out: dwte [V][C], dwpe [T][C];
   row n at position (row0 + n) mod T. wte's gradient is read as well as
   written: the token embedding's part accumulates onto the head's, which
   the op that wrote it left there. dwpe[t] sums the rows at position t in
   row order (0 where the op has none). */
static void run_embed_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    const float* dx = v->in[0];
    const int* tokens = v->in[1];
    float *dwte = v->out[0], *dwpe = v->out[1];
    int n, k, t;
    for (n = 0; n < v->N; n++) {
        float* g = dwte + (size_t)tokens[n] * a->C;
        for (k = 0; k < a->C; k++) g[k] += dx[(size_t)n * a->C + k];
    }
    for (t = 0; t < a->T; t++)
        for (k = 0; k < a->C; k++) {
            float sum = 0;
            for (n = ((t - a->row0) % a->T + a->T) % a->T; n < v->N; n += a->T) sum += dx[(size_t)n * a->C + k];
            dwpe[(size_t)t * a->C + k] = sum;
        }
}
/* in: g [n]; out: its slot of sumsq [1] (float64): the squared norm, 0 where
   it does not count on this rank (replicated tensors count on TP rank 0) */
static void run_sumsq(const gpt_op_args* a, const gpt_op_view* v) {
    const float* g = v->in[0];
    double* slot = v->out[0];
    double sum = 0;
    size_t i;
    if (a->counted)
        for (i = 0; i < a->n; i++) sum += (double)g[i] * g[i];
    slot[0] = sum;
}
/* in: sumsq [n] (float64); out: normsq [1], their sum */
static void run_grad_norm(const gpt_op_args* a, const gpt_op_view* v) {
    const double* sumsq = v->in[0];
    double* normsq = v->out[0];
    double sum = 0;
    size_t i;
    for (i = 0; i < a->n; i++) sum += sumsq[i];
    normsq[0] = sum;
}
/* in: g [n], normsq [1] (the global one), the step (gpt_adamw_step); out: param [n], m [n], v [n].
   The gradient is clipped to norm 1 by scaling. */
static void run_adamw(const gpt_op_args* a, const gpt_op_view* v) {
    const double* normsq = v->in[1];
    const gpt_adamw_step* st = (const gpt_adamw_step*)v->in[2];
    double norm = sqrt(normsq[0]), coef = 1.0 / (norm + 1e-6);
    float scale = (float)(coef < 1.0 ? coef : 1.0);
    k_adamw(v->out[0], v->out[1], v->out[2], v->in[0], a->n, scale, st->lr, 0.9f, 0.95f, 1e-8f, a->weight_decay, st->t);
}

/* The ops' work by kind, for a gpt_kernel_table's run[]. */
#define GPT_CPU_OPS { \
        [GPT_OP_EMBED] = run_embed, [GPT_OP_LAYERNORM] = run_layernorm, [GPT_OP_MATMUL] = run_matmul, \
        [GPT_OP_MATMUL_GELU] = run_matmul_gelu, [GPT_OP_ATTENTION] = run_attention, [GPT_OP_RESIDUAL] = run_residual, \
        [GPT_OP_CROSSENTROPY] = run_crossentropy, [GPT_OP_MATMUL_BWD_W] = run_matmul_bwd_w, \
        [GPT_OP_MATMUL_BWD_X] = run_matmul_bwd_x, [GPT_OP_MATMUL_GELU_BWD_X] = run_matmul_gelu_bwd_x, \
        [GPT_OP_LAYERNORM_BWD] = run_layernorm_bwd, [GPT_OP_ATTENTION_BWD] = run_attention_bwd, \
        [GPT_OP_EMBED_BWD] = run_embed_bwd, [GPT_OP_SUMSQ] = run_sumsq, [GPT_OP_GRAD_NORM] = run_grad_norm, \
        [GPT_OP_ADAMW] = run_adamw, \
    }

#endif
