/* train_gpt.c - a GPT-2-style character model trained on CPU ranks, its
   training step written as a graph of library operations and scheduled by
   Concerto-C.

   The model and every file format are in FORMATS.md. Parallelism, in any
   2-D layout TP x DP (world rank r = dp_rank * TP + tp_rank, the TP group
   on one node):
   - tensor parallel, Megatron style: each TP rank holds H/TP heads
     (its rows of attn_w and attn_b, its columns of proj_w) and 4C/TP of
     the MLP's hidden units (rows of fc_w and fc_b, columns of fcproj_w);
     an all-reduce after each row-parallel projection in the forward pass
     (proj, fcproj) and after each column-parallel one in the backward pass
     (the input gradients of fc and attn). Embeddings, layer norms and the
     biases of the row-parallel layers are replicated;
   - data parallel: every DP rank takes B/DP sequences of the global batch
     of B, and each gradient is averaged over the DP group by an all-reduce.
   The gradient is clipped by its global norm (a float64 all-reduce over
   the TP group) and AdamW updates each rank's shards.

   Every operation of the step (forward, backward, communication, optimizer)
   is a library op on one of three streams (compute, tp, dp). A compute op
   is a record (op_args) of one kernel and the tensors it reads and writes:
   the op's regions in the graph come from that record, and its work gets
   the record and nothing else, so the dependencies the library derives are
   the kernel's own. The library profiles the ops, agrees on their
   durations across ranks, schedules the step, and runs it with the fewest
   cross-stream waits. "Program order" is the order the ops are added here,
   as a straightforward trainer issues them: the weight gradient of each
   layer before its input gradient, and the gradient all-reduces in
   parameter order after the backward pass.

   Before scheduling, the library may rewrite the step (the library's order
   only; --decompose, --fuse): the ops around each tensor-parallel
   all-reduce can run in chunks of token rows (op_chunk: the rows of the
   chunk's regions), so it cuts them and the all-reduce into pieces that
   overlap; the gradients lie back to back in memory, so it can fuse their
   all-reduces into buckets. Both keep every sum in the same order: the
   losses stay bit-identical to program order's.

   Run with --help for the options. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "gpt_kernels.h"
#include "gpt_common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- a rank's tensors ----------------------------------------------------- */
/* Shapes on one rank: N = Bl * T rows of tokens (Bl = B/DP sequences of T
   positions), C the embedding width, V the vocabulary; this TP rank holds
   Hl = H/TP heads of size hs = C/H, Cl = C/TP = Hl * hs of the attention's
   width and F = 4C/TP of the MLP's hidden units. */

/* A tensor of the rank, which the graph knows as a buffer. rows > 0: its
   leading dimension is the batch (rows of tokens, or of sequences), along
   which the library may cut the ops that use it into chunks
   (decomposition). A slot is a part of another tensor (`whole`): its
   region of that tensor's buffer. */
typedef struct tensor {
    const char* name;
    void* p;
    size_t bytes;
    uint64_t rows;
    int id;                        /* index among the rank's tensors */
    const struct tensor* whole;    /* a slot: the tensor it is part of; else NULL */
} tensor;

/* One block's parameters (or their gradients): this TP rank's shards. */
typedef struct layer_weights {
    tensor *ln1_w, *ln1_b;         /* [C] */
    tensor *attn_w, *attn_b;       /* [3 Cl][C], [3 Cl]: this rank's rows of q, k and v */
    tensor *proj_w, *proj_b;       /* [C][Cl], [C] */
    tensor *ln2_w, *ln2_b;         /* [C] */
    tensor *fc_w, *fc_b;           /* [F][C], [F] */
    tensor *fcproj_w, *fcproj_b;   /* [C][F], [C] */
} layer_weights;

typedef struct model_weights {
    tensor* wte;                   /* [V][C] */
    tensor* wpe;                   /* [T][C] */
    layer_weights h[MAX_LAYERS];
    tensor *lnf_w, *lnf_b;         /* [C] */
} model_weights;

/* One block's activations and their gradients. */
typedef struct layer_acts {
    tensor *ln1, *ln1_mean, *ln1_rstd;   /* [N][C], [N], [N] */
    tensor* qkv;                         /* [N][3 Cl] */
    tensor* att;                         /* [Bl][Hl][T][T] softmax probabilities (rows: sequences) */
    tensor* atty;                        /* [N][Cl] attention output, heads side by side */
    tensor* proj;                        /* [N][C] partial projection, all-reduced over TP */
    tensor* x1;                          /* [N][C] residual stream after attention */
    tensor *ln2, *ln2_mean, *ln2_rstd;   /* [N][C], [N], [N] */
    tensor *fch, *fch_gelu;              /* [N][F] before and after GELU */
    tensor* fcproj;                      /* [N][C] partial MLP output, all-reduced over TP */
    tensor* dx1;                         /* [N][C] */
    tensor* dfch;                        /* [N][F] */
    tensor* dln2;                        /* [N][C] partial, all-reduced */
    tensor* datty;                       /* [N][Cl] */
    tensor* dqkv;                        /* [N][3 Cl] */
    tensor* dln1;                        /* [N][C] partial, all-reduced */
} layer_acts;

/* Parameters, gradients, two moments and one squared-norm slot per
   parameter; per block 20 activations; the residual streams; 13 more. */
#define MAX_TENSORS (5 * MAX_PARAMS + 22 * MAX_LAYERS + 16)
#define MAX_BLOCKS 8

typedef struct adamw_step { float lr; int t; } adamw_step;   /* t counts from 1 */

typedef struct snapshot { void* copy[MAX_BLOCKS]; int n; } snapshot;

/* Each op's record (below): the graph's ops point at them. */
typedef struct op_args op_args;
typedef struct op_store { op_args** ops; int n, cap; } op_store;

typedef struct shared shared;

typedef struct rank_state {
    shared* sh;
    const options* o;
    cc_rank* rank;
    cc_context* ctx;
    int me, tp_rank, dp_rank;
    config cfg;
    int TP, DP, Bl, N, Cl, F, Hl;
    const model_layout* layout;
    int np;                                /* parameter tensors */
    /* the tensors, and their memory: one allocation per group */
    tensor tensors[MAX_TENSORS]; int n_tensors;
    void* block[MAX_BLOCKS]; size_t block_bytes[MAX_BLOCKS]; int n_blocks;
    tensor *param, *grad, *adam_m, *adam_v;  /* [np] each, in parameter order */
    model_weights w, dw;                   /* the parameters and their gradients by name */
    tensor* inputs;                        /* [N] tokens */
    tensor* targets;                       /* [N] */
    tensor* x[MAX_LAYERS + 1];             /* [N][C] the residual stream into block l (x[L]: out of the last) */
    tensor* dx[MAX_LAYERS + 1];            /* [N][C] its gradient */
    layer_acts acts[MAX_LAYERS];
    tensor *lnf, *lnf_mean, *lnf_rstd;     /* [N][C], [N], [N] */
    tensor *logits, *dlogits;              /* [N][V] */
    tensor* dlnf;                          /* [N][C] */
    tensor* loss;                          /* [1] the mean over the global batch */
    tensor* sumsq;                         /* [np] float64: each gradient's squared norm */
    tensor* sumsq_slot;                    /* [np] slots of sumsq, one per parameter */
    tensor* normsq;                        /* [1] float64: the squared norm of the whole gradient */
    adamw_step step;                       /* set by the host before each step */
    cc_comm *world_comm, *tp_comm, *dp_comm;
    /* the step */
    cc_graph* train;                       /* the training step as written (program order) */
    cc_graph* eval;                        /* the forward pass with the loss */
    op_store train_ops, eval_ops;
    cc_graph *decomposed, *fused;          /* the library's rewrites of train (NULL: off) */
    cc_graph* run;                         /* the step the library's order runs: train, rewritten */
    cc_backend be;
    int have_be;
    cc_schedule sched;                     /* of run */
    cc_plan* plan[2];                      /* by order: 0 program (train), 1 the library's (run) */
    cc_exec* ex[2];
    cc_plan* eval_plan;
    cc_exec* eval_ex;
    snapshot snap;                         /* the state before the first step */
    int *batch_in, *batch_tg;              /* [B][T] the global batch */
    double *op_start, *op_end;             /* [ops] an executed step's timeline */
} rank_state;

static tensor* tensor_add(rank_state* s, const char* name, size_t bytes, uint64_t rows) {
    tensor* t = &s->tensors[s->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->bytes = bytes;
    t->rows = rows;
    t->id = s->n_tensors++;
    return t;
}

/* Gives the tensors added since tensor `first` their memory: one zeroed
   allocation, carved in order without gaps (a group holds one element
   type). */
static int tensor_carve(rank_state* s, int first) {
    size_t total = 0;
    char* p;
    int i;
    for (i = first; i < s->n_tensors; i++) total += s->tensors[i].bytes;
    if (s->n_blocks == MAX_BLOCKS || !(p = (char*)calloc(total ? total : 1, 1))) return 0;
    s->block[s->n_blocks] = p;
    s->block_bytes[s->n_blocks++] = total;
    for (i = first; i < s->n_tensors; i++) {
        s->tensors[i].p = p;
        p += s->tensors[i].bytes;
    }
    return 1;
}

/* Points the names of w at t[0..], one tensor per parameter in the order of
   FORMATS.md. */
static void name_weights(model_weights* w, tensor* t, int L) {
    int l;
    w->wte = t++;
    w->wpe = t++;
    for (l = 0; l < L; l++) {
        layer_weights* h = &w->h[l];
        h->ln1_w = t++; h->ln1_b = t++;
        h->attn_w = t++; h->attn_b = t++;
        h->proj_w = t++; h->proj_b = t++;
        h->ln2_w = t++; h->ln2_b = t++;
        h->fc_w = t++; h->fc_b = t++;
        h->fcproj_w = t++; h->fcproj_b = t++;
    }
    w->lnf_w = t++;
    w->lnf_b = t;
}

/* Parameters, gradients and AdamW's moments: this rank's shards. The
   gradients lie back to back in parameter order, so that the library can
   fuse their all-reduces into buckets. */
static int create_weights(rank_state* s) {
    int p, first;
    s->param = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, s->layout->p[p].name, sizeof(float) * shard_size(&s->layout->p[p], s->TP), 0);
    if (!tensor_carve(s, s->param->id)) return 0;
    s->grad = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, "grad", s->param[p].bytes, 0);
    if (!tensor_carve(s, s->grad->id)) return 0;
    first = s->n_tensors;
    s->adam_m = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, "adam_m", s->param[p].bytes, 0);
    s->adam_v = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, "adam_v", s->param[p].bytes, 0);
    if (!tensor_carve(s, first)) return 0;
    name_weights(&s->w, s->param, s->cfg.L);
    name_weights(&s->dw, s->grad, s->cfg.L);
    return 1;
}

/* Activations, rows of tokens (N) unless stated. */
static int create_activations(rank_state* s) {
    size_t f = sizeof(float), N = (size_t)s->N, C = (size_t)s->cfg.C, Cl = (size_t)s->Cl, F = (size_t)s->F;
    size_t T = (size_t)s->cfg.T, V = (size_t)s->cfg.V;
    int l, L = s->cfg.L, first = s->n_tensors;
    s->inputs = tensor_add(s, "inputs", sizeof(int) * N, N);
    s->targets = tensor_add(s, "targets", sizeof(int) * N, N);
    if (!tensor_carve(s, first)) return 0;
    first = s->n_tensors;
    for (l = 0; l <= L; l++) {
        s->x[l] = tensor_add(s, "x", f * N * C, N);
        s->dx[l] = tensor_add(s, "dx", f * N * C, N);
    }
    for (l = 0; l < L; l++) {
        layer_acts* a = &s->acts[l];
        a->ln1 = tensor_add(s, "ln1", f * N * C, N);
        a->ln1_mean = tensor_add(s, "mean1", f * N, N);
        a->ln1_rstd = tensor_add(s, "rstd1", f * N, N);
        a->qkv = tensor_add(s, "qkv", f * N * 3 * Cl, N);
        a->att = tensor_add(s, "att", f * (size_t)s->Bl * (size_t)s->Hl * T * T, (uint64_t)s->Bl);
        a->atty = tensor_add(s, "attn_out", f * N * Cl, N);
        a->proj = tensor_add(s, "proj_partial", f * N * C, N);
        a->x1 = tensor_add(s, "x1", f * N * C, N);
        a->ln2 = tensor_add(s, "ln2", f * N * C, N);
        a->ln2_mean = tensor_add(s, "mean2", f * N, N);
        a->ln2_rstd = tensor_add(s, "rstd2", f * N, N);
        a->fch = tensor_add(s, "fc", f * N * F, N);
        a->fch_gelu = tensor_add(s, "gelu", f * N * F, N);
        a->fcproj = tensor_add(s, "fcproj_partial", f * N * C, N);
        a->dx1 = tensor_add(s, "dx1", f * N * C, N);
        a->dfch = tensor_add(s, "dfc", f * N * F, N);
        a->dln2 = tensor_add(s, "dln2_partial", f * N * C, N);
        a->datty = tensor_add(s, "dattn_out", f * N * Cl, N);
        a->dqkv = tensor_add(s, "dqkv", f * N * 3 * Cl, N);
        a->dln1 = tensor_add(s, "dln1_partial", f * N * C, N);
    }
    s->lnf = tensor_add(s, "lnf", f * N * C, N);
    s->lnf_mean = tensor_add(s, "meanf", f * N, N);
    s->lnf_rstd = tensor_add(s, "rstdf", f * N, N);
    s->logits = tensor_add(s, "logits", f * N * V, N);
    s->dlogits = tensor_add(s, "dlogits", f * N * V, N);
    s->dlnf = tensor_add(s, "dlnf", f * N * C, N);
    s->loss = tensor_add(s, "loss", f, 0);
    return tensor_carve(s, first);
}

/* The squared norms of the gradients: one float64 slot per parameter, and
   their sum. */
static int create_norms(rank_state* s) {
    int p, first = s->n_tensors;
    s->sumsq = tensor_add(s, "sumsq", sizeof(double) * (size_t)s->np, 0);
    s->normsq = tensor_add(s, "normsq", sizeof(double), 0);
    if (!tensor_carve(s, first)) return 0;
    s->sumsq_slot = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) {
        tensor* t = tensor_add(s, "sumsq", sizeof(double), 0);
        t->p = (double*)s->sumsq->p + p;
        t->whole = s->sumsq;
    }
    return 1;
}

/* A snapshot holds a copy of every block of the rank's tensors. */
static int snap_save(rank_state* s, snapshot* sn) {
    for (sn->n = 0; sn->n < s->n_blocks; sn->n++) {
        sn->copy[sn->n] = malloc(s->block_bytes[sn->n] ? s->block_bytes[sn->n] : 1);
        if (!sn->copy[sn->n]) return 0;
        memcpy(sn->copy[sn->n], s->block[sn->n], s->block_bytes[sn->n]);
    }
    return 1;
}
static void snap_restore(rank_state* s, const snapshot* sn) {
    int i;
    for (i = 0; i < sn->n; i++) memcpy(s->block[i], sn->copy[i], s->block_bytes[i]);
}
static void snap_free(snapshot* sn) {
    int i;
    for (i = 0; i < sn->n; i++) free(sn->copy[i]);
    sn->n = 0;
}

/* ---- the ops -------------------------------------------------------------- */
/* An op's record is the one place its tensors are named: the tensors its
   kernel reads (in) and writes (out), in the kernel's argument order, and
   the sizes it needs. The graph learns the op's read and write regions from
   the record (add_op), and the op's work gets the record and nothing else,
   so a tensor that is not declared cannot reach a kernel, and every
   dependency the library derives is one the kernel has. NULL entries are
   absent optional arguments (a bias, a residual, the loss's gradient).
   Besides tensors a record holds only sizes and flags, and for AdamW the
   host's learning rate and step count. */
#define OP_MAX_IN 6
#define OP_MAX_OUT 3

/* An op's tensors for one chunk: rows [c R/n, (c+1) R/n) of each tensor of
   R rows (the rows the library gives the chunk's regions), all of a tensor
   without rows; N, the rows of tokens of the chunk. The whole op is chunk 0
   of 1. */
typedef struct op_view {
    int N;
    int first;                     /* chunk 0: outputs summed over rows are overwritten, not added to */
    const void* in[OP_MAX_IN];
    void* out[OP_MAX_OUT];
} op_view;

struct op_args {
    void (*run)(const op_args* a, const op_view* v);
    const tensor* in[OP_MAX_IN];   /* read */
    tensor* out[OP_MAX_OUT];       /* written */
    int N;                         /* rows of tokens */
    int C, OC;                     /* widths: a matmul's input and output; a norm's or residual's C */
    int B, T, NH, HS;              /* sequences, positions, heads and head size (attention, embeddings) */
    int V;                         /* vocabulary (cross-entropy) */
    size_t n;                      /* elements (the per-parameter ops) */
    int counted;                   /* sumsq: counts towards the norm on this rank */
    float weight_decay;            /* AdamW */
    const adamw_step* step;        /* AdamW: the step's learning rate and count, set by the host */
};

static void* rows_of(const tensor* t, int chunk, int n_chunks) {
    if (!t) return NULL;
    if (t->rows == 0) return t->p;
    return (char*)t->p + t->bytes / t->rows * (size_t)(t->rows * (uint64_t)chunk / (uint64_t)n_chunks);
}

static op_view view_of(const op_args* a, int chunk, int n_chunks) {
    op_view v;
    int i;
    v.N = (int)((int64_t)a->N * (chunk + 1) / n_chunks - (int64_t)a->N * chunk / n_chunks);
    v.first = chunk == 0;
    for (i = 0; i < OP_MAX_IN; i++) v.in[i] = rows_of(a->in[i], chunk, n_chunks);
    for (i = 0; i < OP_MAX_OUT; i++) v.out[i] = rows_of(a->out[i], chunk, n_chunks);
    return v;
}

/* The work of a compute op (cc_op_fn) and of one of its chunks (cc_op_chunk_fn). */
static void op_whole(void* stream, void* user_data) {
    const op_args* a = (const op_args*)user_data;
    op_view v = view_of(a, 0, 1);
    (void)stream;
    a->run(a, &v);
}
static void op_chunk(void* stream, void* user_data, int chunk, int n_chunks) {
    const op_args* a = (const op_args*)user_data;
    op_view v = view_of(a, chunk, n_chunks);
    (void)stream;
    a->run(a, &v);
}

/* Each kernel as an op: what in[] and out[] hold, in the record's sizes.
   Ops that the library may cut into chunks (add_op's `chunks`) must work
   row by row: layernorm, matmul, matmul_gelu, residual, matmul_bwd_x,
   layernorm_bwd. */

/* in: wte [V][C], wpe [T][C], tokens [N]; out: x [N][C] */
static void run_embed(const op_args* a, const op_view* v) {
    const float *wte = v->in[0], *wpe = v->in[1];
    const int* tokens = v->in[2];
    float* x = v->out[0];
    int n, k;
    for (n = 0; n < v->N; n++) {
        const float* te = wte + (size_t)tokens[n] * a->C;
        const float* pe = wpe + (size_t)(n % a->T) * a->C;
        for (k = 0; k < a->C; k++) x[(size_t)n * a->C + k] = te[k] + pe[k];
    }
}
/* in: x [N][C], w [C], b [C]; out: y [N][C], mean [N], rstd [N] */
static void run_layernorm(const op_args* a, const op_view* v) {
    k_layernorm(v->out[0], v->out[1], v->out[2], v->in[0], v->in[1], v->in[2], v->N, a->C);
}
/* in: x [N][C], w [OC][C], bias [OC] or NULL; out: y [N][OC] */
static void run_matmul(const op_args* a, const op_view* v) {
    k_matmul(v->out[0], v->in[0], v->in[1], v->in[2], v->N, a->C, a->OC);
}
/* in: x [N][C], w [OC][C], bias [OC]; out: h [N][OC] (x w^T + bias), u [N][OC] (gelu of h) */
static void run_matmul_gelu(const op_args* a, const op_view* v) {
    k_matmul(v->out[0], v->in[0], v->in[1], v->in[2], v->N, a->C, a->OC);
    k_gelu(v->out[1], v->out[0], (size_t)v->N * a->OC);
}
/* in: qkv [B T][3 NH HS] (q, k, v blocks; head h at columns h HS of each);
   out: y [B T][NH HS], att [B][NH][T][T] */
static void run_attention(const op_args* a, const op_view* v) {
    k_attention(v->out[0], v->out[1], v->in[0], a->B, a->T, a->NH, a->HS);
}
/* in: x [N][C], part [N][C], bias [C]; out: y [N][C] = x + (part + bias) */
static void run_residual(const op_args* a, const op_view* v) {
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
static void run_crossentropy(const op_args* a, const op_view* v) {
    float* loss = v->out[0];
    loss[0] = (float)k_cross_entropy(v->out[1], v->in[0], v->in[1], v->N, a->V);
}
/* in: dy [N][OC], x [N][C]; out: dw [OC][C], dbias [OC] or NULL */
static void run_matmul_bwd_w(const op_args* a, const op_view* v) {
    k_matmul_bwd_weight(v->out[0], v->out[1], v->in[0], v->in[1], v->N, a->C, a->OC);
}
/* in: dy [N][OC], w [OC][C]; out: dx [N][C] */
static void run_matmul_bwd_x(const op_args* a, const op_view* v) {
    k_matmul_bwd_input(v->out[0], v->in[0], v->in[1], v->N, a->C, a->OC);
}
/* in: dy [N][OC], w [OC][C], h [N][C] (GELU's input); out: dh [N][C] */
static void run_matmul_gelu_bwd_x(const op_args* a, const op_view* v) {
    k_matmul_bwd_input(v->out[0], v->in[0], v->in[1], v->N, a->C, a->OC);
    k_gelu_bwd(v->out[0], v->out[0], v->in[2], (size_t)v->N * a->C);
}
/* in: resid [N][C] or NULL, dy [N][C], x [N][C], mean [N], rstd [N], w [C];
   out: dx [N][C] (resid + the norm's input gradient), dw [C], db [C]. The
   weight gradients sum over rows: chunk 0 writes them, later chunks add. */
static void run_layernorm_bwd(const op_args* a, const op_view* v) {
    k_layernorm_bwd(v->out[0], v->out[1], v->out[2], v->in[0], v->in[1], v->in[2], v->in[3], v->in[4], v->in[5], v->N, a->C,
                    !v->first);
}
/* in: dy [B T][NH HS], att [B][NH][T][T], qkv [B T][3 NH HS]; out: dqkv [B T][3 NH HS] */
static void run_attention_bwd(const op_args* a, const op_view* v) {
    k_attention_bwd(v->out[0], v->in[0], v->in[1], v->in[2], a->B, a->T, a->NH, a->HS);
}
/* in: dx [B T][C], tokens [B T], dwte [V][C]; out: dwte [V][C], dwpe [T][C].
   wte's gradient is read as well as written: the token embedding's part
   accumulates onto the head's, which the op that wrote it left there. */
static void run_embed_bwd(const op_args* a, const op_view* v) {
    const float* dx = v->in[0];
    const int* tokens = v->in[1];
    float *dwte = v->out[0], *dwpe = v->out[1];
    int n, k, t, b;
    for (n = 0; n < a->B * a->T; n++) {
        float* g = dwte + (size_t)tokens[n] * a->C;
        for (k = 0; k < a->C; k++) g[k] += dx[(size_t)n * a->C + k];
    }
    for (t = 0; t < a->T; t++)
        for (k = 0; k < a->C; k++) {
            float sum = 0;
            for (b = 0; b < a->B; b++) sum += dx[((size_t)b * a->T + t) * a->C + k];
            dwpe[(size_t)t * a->C + k] = sum;
        }
}
/* in: g [n]; out: its slot of sumsq [1] (float64): the squared norm, 0 where
   it does not count on this rank (replicated tensors count on TP rank 0) */
static void run_sumsq(const op_args* a, const op_view* v) {
    const float* g = v->in[0];
    double* slot = v->out[0];
    double sum = 0;
    size_t i;
    if (a->counted)
        for (i = 0; i < a->n; i++) sum += (double)g[i] * g[i];
    slot[0] = sum;
}
/* in: sumsq [n] (float64); out: normsq [1], their sum */
static void run_grad_norm(const op_args* a, const op_view* v) {
    const double* sumsq = v->in[0];
    double* normsq = v->out[0];
    double sum = 0;
    size_t i;
    for (i = 0; i < a->n; i++) sum += sumsq[i];
    normsq[0] = sum;
}
/* in: g [n], normsq [1] (the global one); out: param [n], m [n], v [n].
   The gradient is clipped to norm 1 by scaling. */
static void run_adamw(const op_args* a, const op_view* v) {
    const double* normsq = v->in[1];
    double norm = sqrt(normsq[0]), coef = 1.0 / (norm + 1e-6);
    float scale = (float)(coef < 1.0 ? coef : 1.0);
    k_adamw(v->out[0], v->out[1], v->out[2], v->in[0], a->n, scale, a->step->lr, 0.9f, 0.95f, 1e-8f, a->weight_decay, a->step->t);
}

/* ---- building the graph ------------------------------------------------------- */
enum { S_COMPUTE = 0, S_TP = 1, S_DP = 2 };   /* streams */
enum { WHOLE = 0, IN_CHUNKS = 1 };            /* add_op: the library may cut the op into chunks */

typedef struct builder {
    cc_graph* g;
    cc_buffer* buf;                /* [tensor id]: the tensor's buffer in g (id 0: not added yet) */
    op_store* store;
    cc_result rc;
} builder;

/* A new record for an op of this kernel, zeroed, owned by the store. */
static op_args* op_new(builder* b, void (*run)(const op_args*, const op_view*), int N) {
    op_store* st = b->store;
    op_args* a;
    if (b->rc != CC_OK) return NULL;
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 256;
        op_args** grown = (op_args**)realloc(st->ops, sizeof(op_args*) * (size_t)cap);
        if (!grown) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
        st->ops = grown;
        st->cap = cap;
    }
    if (!(a = (op_args*)calloc(1, sizeof *a))) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
    st->ops[st->n++] = a;
    a->run = run;
    a->N = N;
    return a;
}

static void op_store_free(op_store* st) {
    int i;
    for (i = 0; i < st->n; i++) free(st->ops[i]);
    free(st->ops);
    memset(st, 0, sizeof *st);
}

static cc_region region_of(builder* b, const tensor* t) {
    const tensor* whole = t->whole ? t->whole : t;
    cc_region r;
    memset(&r, 0, sizeof r);
    if (b->buf[whole->id].id == 0 && b->rc == CC_OK) b->rc = cc_graph_add_buffer(b->g, whole->name, whole->bytes, &b->buf[whole->id]);
    r.buffer = b->buf[whole->id];
    r.offset_bytes = (uint64_t)((const char*)t->p - (const char*)whole->p);
    r.n_bytes = t->bytes;
    r.split_rows = t->rows;
    return r;
}

/* Adds the op of record a (or the collective coll on a's one tensor): its
   regions are a's tensors, read then written, in a's order. With chunks,
   every tensor with rows must have the op's N rows: the library cuts them
   as view_of does. */
static void add_op(builder* b, const char* name, int l, int stream, op_args* a, int chunks, const cc_collective* coll) {
    cc_op_desc d = cc_op_desc_default();
    cc_region reads[OP_MAX_IN], writes[OP_MAX_OUT];
    char full[64];
    int i;
    if (b->rc != CC_OK) return;
    if (l >= 0) snprintf(full, sizeof full, "h%d.%s", l, name);
    else snprintf(full, sizeof full, "%s", name);
    for (i = 0; i < OP_MAX_IN + OP_MAX_OUT; i++) {
        const tensor* t = i < OP_MAX_IN ? a->in[i] : a->out[i - OP_MAX_IN];
        if (chunks && t && t->rows > 0 && t->rows != (uint64_t)a->N) {
            fprintf(stderr, "train_gpt: op '%s' runs in chunks of %d rows, but '%s' has %llu rows\n", full, a->N, t->name,
                    (unsigned long long)t->rows);
            b->rc = CC_ERR_INVALID_ARG;
            return;
        }
    }
    for (i = 0; i < OP_MAX_IN; i++) if (a->in[i]) reads[d.n_reads++] = region_of(b, a->in[i]);
    for (i = 0; i < OP_MAX_OUT; i++) if (a->out[i]) writes[d.n_writes++] = region_of(b, a->out[i]);
    d.name = full;
    d.duration_us = 1;
    d.stream = stream;
    d.reads = reads;
    d.writes = writes;
    d.coll = coll;
    if (a->run) {
        d.fn = op_whole;
        d.user_data = a;
        if (chunks) d.chunk_fn = op_chunk;
    }
    if (b->rc == CC_OK) b->rc = cc_graph_add_op(b->g, &d, NULL);
}

/* An in-place all-reduce of tensor t, whole, on a communication stream. */
static void add_allreduce(builder* b, const char* name, int l, tensor* t, cc_dtype dtype, cc_reduce_op reduce, cc_comm* comm,
                          int stream) {
    cc_collective co;
    op_args a;
    memset(&co, 0, sizeof co);
    memset(&a, 0, sizeof a);
    a.in[0] = t;
    a.out[0] = t;
    co.kind = CC_COLL_ALL_REDUCE;
    co.dtype = dtype;
    co.reduce = reduce;
    co.n_elems = t->bytes / (dtype == CC_DTYPE_FLOAT64 ? sizeof(double) : sizeof(float));
    co.comm = comm;
    co.send_buf = t->p;
    co.recv_buf = t->p;
    add_op(b, name, l, stream, &a, WHOLE, &co);
}

/* One function per kernel: the op's tensors in the kernel's argument order. */
static void add_embed(builder* b, const char* name, tensor* x, const tensor* wte, const tensor* wpe, const tensor* tokens, int N,
                      int T, int C) {
    op_args* a = op_new(b, run_embed, N);
    if (!a) return;
    a->out[0] = x;
    a->in[0] = wte; a->in[1] = wpe; a->in[2] = tokens;
    a->T = T; a->C = C;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_layernorm(builder* b, const char* name, int l, tensor* y, tensor* mean, tensor* rstd, const tensor* x,
                          const tensor* w, const tensor* bias, int N, int C) {
    op_args* a = op_new(b, run_layernorm, N);
    if (!a) return;
    a->out[0] = y; a->out[1] = mean; a->out[2] = rstd;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul(builder* b, const char* name, int l, int chunks, tensor* y, const tensor* x, const tensor* w,
                       const tensor* bias, int N, int C, int OC) {
    op_args* a = op_new(b, run_matmul, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_matmul_gelu(builder* b, const char* name, int l, tensor* h, tensor* u, const tensor* x, const tensor* w,
                            const tensor* bias, int N, int C, int OC) {
    op_args* a = op_new(b, run_matmul_gelu, N);
    if (!a) return;
    a->out[0] = h; a->out[1] = u;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_attention(builder* b, const char* name, int l, tensor* y, tensor* att, const tensor* qkv, int B, int T, int NH,
                          int HS) {
    op_args* a = op_new(b, run_attention, B * T);
    if (!a) return;
    a->out[0] = y; a->out[1] = att;
    a->in[0] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_residual(builder* b, const char* name, int l, int chunks, tensor* y, const tensor* x, const tensor* part,
                         const tensor* bias, int N, int C) {
    op_args* a = op_new(b, run_residual, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = part; a->in[2] = bias;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_crossentropy(builder* b, const char* name, tensor* loss, tensor* dlogits, const tensor* logits,
                             const tensor* targets, int N, int V) {
    op_args* a = op_new(b, run_crossentropy, N);
    if (!a) return;
    a->out[0] = loss; a->out[1] = dlogits;
    a->in[0] = logits; a->in[1] = targets;
    a->V = V;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul_bwd_w(builder* b, const char* name, int l, tensor* dw, tensor* dbias, const tensor* dy, const tensor* x,
                             int N, int C, int OC) {
    op_args* a = op_new(b, run_matmul_bwd_w, N);
    if (!a) return;
    a->out[0] = dw; a->out[1] = dbias;
    a->in[0] = dy; a->in[1] = x;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul_bwd_x(builder* b, const char* name, int l, int chunks, tensor* dx, const tensor* dy, const tensor* w, int N,
                             int C, int OC) {
    op_args* a = op_new(b, run_matmul_bwd_x, N);
    if (!a) return;
    a->out[0] = dx;
    a->in[0] = dy; a->in[1] = w;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_matmul_gelu_bwd_x(builder* b, const char* name, int l, tensor* dh, const tensor* dy, const tensor* w,
                                  const tensor* h, int N, int C, int OC) {
    op_args* a = op_new(b, run_matmul_gelu_bwd_x, N);
    if (!a) return;
    a->out[0] = dh;
    a->in[0] = dy; a->in[1] = w; a->in[2] = h;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_layernorm_bwd(builder* b, const char* name, int l, int chunks, tensor* dx, tensor* dw, tensor* dbias,
                              const tensor* resid, const tensor* dy, const tensor* x, const tensor* mean, const tensor* rstd,
                              const tensor* w, int N, int C) {
    op_args* a = op_new(b, run_layernorm_bwd, N);
    if (!a) return;
    a->out[0] = dx; a->out[1] = dw; a->out[2] = dbias;
    a->in[0] = resid; a->in[1] = dy; a->in[2] = x; a->in[3] = mean; a->in[4] = rstd; a->in[5] = w;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_attention_bwd(builder* b, const char* name, int l, tensor* dqkv, const tensor* dy, const tensor* att,
                              const tensor* qkv, int B, int T, int NH, int HS) {
    op_args* a = op_new(b, run_attention_bwd, B * T);
    if (!a) return;
    a->out[0] = dqkv;
    a->in[0] = dy; a->in[1] = att; a->in[2] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_embed_bwd(builder* b, const char* name, tensor* dwte, tensor* dwpe, const tensor* dx, const tensor* tokens, int B,
                          int T, int C) {
    op_args* a = op_new(b, run_embed_bwd, B * T);
    if (!a) return;
    a->out[0] = dwte; a->out[1] = dwpe;
    a->in[0] = dx; a->in[1] = tokens; a->in[2] = dwte;
    a->B = B; a->T = T; a->C = C;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_sumsq(builder* b, const char* name, tensor* slot, const tensor* g, int counted) {
    op_args* a = op_new(b, run_sumsq, 0);
    if (!a) return;
    a->out[0] = slot;
    a->in[0] = g;
    a->n = g->bytes / sizeof(float);
    a->counted = counted;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_grad_norm(builder* b, const char* name, tensor* normsq, const tensor* sumsq) {
    op_args* a = op_new(b, run_grad_norm, 0);
    if (!a) return;
    a->out[0] = normsq;
    a->in[0] = sumsq;
    a->n = sumsq->bytes / sizeof(double);
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_adamw(builder* b, const char* name, tensor* param, tensor* m, tensor* v, const tensor* g, const tensor* normsq,
                      float weight_decay, const adamw_step* step) {
    op_args* a = op_new(b, run_adamw, 0);
    if (!a) return;
    a->out[0] = param; a->out[1] = m; a->out[2] = v;
    a->in[0] = g; a->in[1] = normsq;
    a->n = param->bytes / sizeof(float);
    a->weight_decay = weight_decay;
    a->step = step;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}

/* Block l's forward pass: Megatron's tensor parallelism, an all-reduce
   after each row-parallel projection. */
static void forward_layer(builder* b, const rank_state* s, int l) {
    const layer_weights* w = &s->w.h[l];
    const layer_acts* a = &s->acts[l];
    int N = s->N, C = s->cfg.C, T = s->cfg.T;
    add_layernorm(b, "ln1", l, a->ln1, a->ln1_mean, a->ln1_rstd, s->x[l], w->ln1_w, w->ln1_b, N, C);
    add_matmul(b, "qkv", l, WHOLE, a->qkv, a->ln1, w->attn_w, w->attn_b, N, C, 3 * s->Cl);
    add_attention(b, "attn", l, a->atty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    add_matmul(b, "proj", l, IN_CHUNKS, a->proj, a->atty, w->proj_w, NULL, N, s->Cl, C);
    if (s->TP > 1) add_allreduce(b, "proj.allreduce", l, a->proj, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_residual(b, "resid1", l, IN_CHUNKS, a->x1, s->x[l], a->proj, w->proj_b, N, C);
    add_layernorm(b, "ln2", l, a->ln2, a->ln2_mean, a->ln2_rstd, a->x1, w->ln2_w, w->ln2_b, N, C);
    add_matmul_gelu(b, "fc", l, a->fch, a->fch_gelu, a->ln2, w->fc_w, w->fc_b, N, C, s->F);
    add_matmul(b, "fcproj", l, IN_CHUNKS, a->fcproj, a->fch_gelu, w->fcproj_w, NULL, N, s->F, C);
    if (s->TP > 1) add_allreduce(b, "fcproj.allreduce", l, a->fcproj, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_residual(b, "resid2", l, IN_CHUNKS, s->x[l + 1], a->x1, a->fcproj, w->fcproj_b, N, C);
}

/* Block l's backward pass: for each matmul the weight gradient, then the
   input gradient; an all-reduce after each column-parallel one. */
static void backward_layer(builder* b, const rank_state* s, int l) {
    const layer_weights* w = &s->w.h[l];
    const layer_weights* dw = &s->dw.h[l];
    const layer_acts* a = &s->acts[l];
    int N = s->N, C = s->cfg.C, T = s->cfg.T;
    add_matmul_bwd_w(b, "fcproj.bwd_w", l, dw->fcproj_w, dw->fcproj_b, s->dx[l + 1], a->fch_gelu, N, s->F, C);
    add_matmul_gelu_bwd_x(b, "fcproj.bwd_x", l, a->dfch, s->dx[l + 1], w->fcproj_w, a->fch, N, s->F, C);
    add_matmul_bwd_w(b, "fc.bwd_w", l, dw->fc_w, dw->fc_b, a->dfch, a->ln2, N, C, s->F);
    add_matmul_bwd_x(b, "fc.bwd_x", l, IN_CHUNKS, a->dln2, a->dfch, w->fc_w, N, C, s->F);
    if (s->TP > 1) add_allreduce(b, "fc.bwd.allreduce", l, a->dln2, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_layernorm_bwd(b, "ln2.bwd", l, IN_CHUNKS, a->dx1, dw->ln2_w, dw->ln2_b, s->dx[l + 1], a->dln2, a->x1, a->ln2_mean,
                      a->ln2_rstd, w->ln2_w, N, C);
    add_matmul_bwd_w(b, "proj.bwd_w", l, dw->proj_w, dw->proj_b, a->dx1, a->atty, N, s->Cl, C);
    add_matmul_bwd_x(b, "proj.bwd_x", l, WHOLE, a->datty, a->dx1, w->proj_w, N, s->Cl, C);
    add_attention_bwd(b, "attn.bwd", l, a->dqkv, a->datty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    add_matmul_bwd_w(b, "qkv.bwd_w", l, dw->attn_w, dw->attn_b, a->dqkv, a->ln1, N, C, 3 * s->Cl);
    add_matmul_bwd_x(b, "qkv.bwd_x", l, IN_CHUNKS, a->dln1, a->dqkv, w->attn_w, N, C, 3 * s->Cl);
    if (s->TP > 1) add_allreduce(b, "qkv.bwd.allreduce", l, a->dln1, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_layernorm_bwd(b, "ln1.bwd", l, IN_CHUNKS, s->dx[l], dw->ln1_w, dw->ln1_b, a->dx1, a->dln1, s->x[l], a->ln1_mean,
                      a->ln1_rstd, w->ln1_w, N, C);
}

/* The forward pass and the loss (with train, also its gradient). */
static void build_forward(builder* b, const rank_state* s, int train) {
    const model_weights* w = &s->w;
    int l, N = s->N, C = s->cfg.C, L = s->cfg.L;
    add_embed(b, "embed", s->x[0], w->wte, w->wpe, s->inputs, N, s->cfg.T, C);
    for (l = 0; l < L; l++) forward_layer(b, s, l);
    add_layernorm(b, "lnf", -1, s->lnf, s->lnf_mean, s->lnf_rstd, s->x[L], w->lnf_w, w->lnf_b, N, C);
    add_matmul(b, "head", -1, WHOLE, s->logits, s->lnf, w->wte, NULL, N, C, s->cfg.V);
    add_crossentropy(b, "loss", s->loss, train ? s->dlogits : NULL, s->logits, s->targets, N, s->cfg.V);
    if (s->DP > 1) add_allreduce(b, "loss.allreduce", -1, s->loss, CC_DTYPE_FLOAT32, CC_REDUCE_AVG, s->dp_comm, S_DP);
}

/* The backward pass, then the gradients averaged over the data-parallel
   group in parameter order. */
static void build_backward(builder* b, const rank_state* s) {
    const model_weights *w = &s->w, *dw = &s->dw;
    int l, p, N = s->N, C = s->cfg.C, L = s->cfg.L;
    add_matmul_bwd_w(b, "head.bwd_w", -1, dw->wte, NULL, s->dlogits, s->lnf, N, C, s->cfg.V);
    add_matmul_bwd_x(b, "head.bwd_x", -1, WHOLE, s->dlnf, s->dlogits, w->wte, N, C, s->cfg.V);
    add_layernorm_bwd(b, "lnf.bwd", -1, WHOLE, s->dx[L], dw->lnf_w, dw->lnf_b, NULL, s->dlnf, s->x[L], s->lnf_mean, s->lnf_rstd,
                      w->lnf_w, N, C);
    for (l = L - 1; l >= 0; l--) backward_layer(b, s, l);
    add_embed_bwd(b, "embed.bwd", dw->wte, dw->wpe, s->dx[0], s->inputs, s->Bl, s->cfg.T, C);
    if (s->DP > 1)
        for (p = 0; p < s->np; p++) {
            char name[48];
            snprintf(name, sizeof name, "%s.grad.allreduce", s->layout->p[p].name);
            add_allreduce(b, name, -1, &s->grad[p], CC_DTYPE_FLOAT32, CC_REDUCE_AVG, s->dp_comm, S_DP);
        }
}

/* Clipping by the global norm (each gradient's squared norm into its own
   slot of sumsq, the sum over the TP group), then AdamW. */
static void build_update(builder* b, const rank_state* s) {
    int p;
    char name[48];
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        snprintf(name, sizeof name, "%s.sumsq", pi->name);
        add_sumsq(b, name, &s->sumsq_slot[p], &s->grad[p], pi->shard != SH_REPL || s->tp_rank == 0);
    }
    add_grad_norm(b, "grad_norm", s->normsq, s->sumsq);
    if (s->TP > 1) add_allreduce(b, "grad_norm.allreduce", -1, s->normsq, CC_DTYPE_FLOAT64, CC_REDUCE_SUM, s->tp_comm, S_TP);
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        snprintf(name, sizeof name, "%s.adamw", pi->name);
        add_adamw(b, name, &s->param[p], &s->adam_m[p], &s->adam_v[p], &s->grad[p], s->normsq, pi->decay ? 0.1f : 0.0f, &s->step);
    }
}

/* The training step (train = 1) or the forward pass with the loss (0),
   on three streams; its op records go to *store. */
static cc_result build_graph(const rank_state* s, int train, cc_graph** out, op_store* store) {
    static const char* const stream_names[] = { "compute", "tp", "dp" };
    cc_graph_desc gd = cc_graph_desc_default();
    builder b;
    memset(&b, 0, sizeof b);
    b.store = store;
    gd.n_streams = 3;
    gd.stream_names = stream_names;
    if (!(b.buf = (cc_buffer*)calloc((size_t)s->n_tensors, sizeof(cc_buffer)))) return CC_ERR_OUT_OF_MEMORY;
    b.rc = cc_graph_create(s->ctx, &gd, &b.g);
    build_forward(&b, s, train);
    if (train) {
        build_backward(&b, s);
        build_update(&b, s);
    }
    if (b.rc == CC_OK) b.rc = cc_graph_validate(b.g);
    free(b.buf);
    if (b.rc != CC_OK) {
        cc_graph_destroy(b.g);
        return b.rc;
    }
    *out = b.g;
    return CC_OK;
}

/* ---- a rank's life ------------------------------------------------------------ */
/* What main sets up for the ranks, and what they hand back (rank 0 unless
   stated). */
struct shared {
    options o;
    config cfg;
    model_layout layout;
    dataset data;
    char* text;
    float* init_params;            /* [P] global, unsharded */
    size_t P;
    int steps_done;                /* by the checkpoint loaded */
    cc_context* ctx;               /* the host's: the world, the trace */
    cc_world* world;
    cc_trace* trace;
    float* final_params;           /* [P] written by the ranks of DP rank 0 */
    float* grads0;                 /* [P] the first step's gradient (--dump-grads), same ranks */
    double loss0;
    int passes, pass_order[2];     /* the orders trained, in turn: 0 program, 1 the library's */
    double* losses[2];             /* [steps] per pass */
    double* step_ms[2];            /* [steps] per pass, measured */
    double* exposed_ms[2];
    double pred_ms[2], pred_exposed_ms[2];  /* by order */
    double cal_ms[2], cal_exposed_ms[2];    /* side by side: medians by order */
    int n_ops, n_colls;            /* the step as written */
    cc_rewrite_report dec, fus;    /* what decomposition and fusion did */
    int n_ops_run, n_colls_run;    /* the step the library's order runs */
    int moved, n_waits[2];
    double sched_ms, lower_bound_ms;
    double val_loss;
    char sample[4096];
    double train_s;
};

/* Shards of every parameter (or gradient) into a global vector; only the
   ranks of DP rank 0 write, replicated tensors only TP rank 0. */
static void unshard_all(const rank_state* s, const tensor* local, float* global) {
    int p;
    if (s->dp_rank != 0) return;
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        if (pi->shard == SH_REPL && s->tp_rank != 0) continue;
        shard_copy(pi, s->TP, s->tp_rank, global + pi->offset, (float*)local[p].p, 0);
    }
}

/* This rank's sequences of the global batch of a step (val: of the validation split). */
static void set_batch(rank_state* s, int val, int step) {
    const options* o = s->o;
    make_batch(&s->sh->data, val, o->seed, step, o->batch, s->cfg.T, s->batch_in, s->batch_tg);
    memcpy(s->inputs->p, s->batch_in + (size_t)s->dp_rank * s->N, sizeof(int) * (size_t)s->N);
    memcpy(s->targets->p, s->batch_tg + (size_t)s->dp_rank * s->N, sizeof(int) * (size_t)s->N);
}

/* Step time (launch to the last op's end) and the part of it the compute
   stream was idle: the communication it could not hide. */
static cc_result measure_step(rank_state* s, cc_exec* x, cc_graph* g, double* step_ms, double* exposed_ms) {
    int i, n = cc_graph_n_ops(g);
    double end = 0, busy = 0;
    cc_result r = cc_exec_timeline(x, s->op_start, s->op_end);
    if (r != CC_OK) return r;
    for (i = 0; i < n; i++) {
        if (s->op_end[i] > end) end = s->op_end[i];
        if (cc_op_demand(g, cc_graph_op(g, i), S_COMPUTE)) busy += s->op_end[i] - s->op_start[i];
    }
    *step_ms = end / 1000.0;
    *exposed_ms = (end - busy) / 1000.0;
    return CC_OK;
}

static double predicted_exposed(cc_graph* g, double makespan_us) {
    int i;
    double busy = 0;
    for (i = 0; i < cc_graph_n_ops(g); i++)
        if (cc_op_demand(g, cc_graph_op(g, i), S_COMPUTE)) busy += cc_op_duration_us(g, cc_graph_op(g, i));
    return (makespan_us - busy) / 1000.0;
}

/* Durations without measuring (--profile 0): a compute op moves the bytes
   of its regions at 1 GB/s; a collective takes the emulated link's time
   (intra-node for the TP group, inter-node for DP). Deterministic. */
static cc_result model_durations(const rank_state* s, cc_graph* g) {
    const options* o = s->o;
    int i, n = cc_graph_n_ops(g);
    cc_link intra, inter;
    intra.alpha_us = o->link_alpha_us / 2; intra.us_per_byte = o->link_us_per_kib / 4 / 1024.0;
    inter.alpha_us = o->link_alpha_us; inter.us_per_byte = o->link_us_per_kib / 1024.0;
    for (i = 0; i < n; i++) {
        cc_op op = cc_graph_op(g, i);
        int tp = cc_op_demand(g, op, S_TP);
        double us;
        cc_result r;
        if (tp || cc_op_demand(g, op, S_DP))   /* the step's collectives are all-reduces of the region they write */
            us = cc_link_time_us(tp ? &intra : &inter, CC_COLL_ALL_REDUCE, (size_t)cc_op_bytes(g, op, 1), tp ? s->TP : s->DP);
        else us = (double)(cc_op_bytes(g, op, 0) + cc_op_bytes(g, op, 1)) / 1000.0;
        if ((r = cc_op_set_duration(g, op, us)) != CC_OK) return r;
    }
    return CC_OK;
}

/* Sizes, tensors (holding this rank's shards of the initial parameters),
   communicators, the step's two graphs, the backend. */
static cc_result rank_setup(rank_state* s, cc_rank* rank, shared* sh) {
    const options* o = &sh->o;
    int p;
    cc_result rc;
    s->sh = sh; s->o = o; s->rank = rank; s->ctx = cc_rank_context(rank);
    s->me = cc_rank_index(rank);
    s->cfg = sh->cfg;
    s->TP = o->tp; s->DP = o->dp;
    s->tp_rank = s->me % o->tp; s->dp_rank = s->me / o->tp;
    s->Bl = o->batch / o->dp; s->N = s->Bl * s->cfg.T;
    s->Cl = s->cfg.C / o->tp; s->F = 4 * s->cfg.C / o->tp; s->Hl = s->cfg.H / o->tp;
    s->layout = &sh->layout; s->np = sh->layout.n;
    if (!create_weights(s) || !create_activations(s) || !create_norms(s)) return CC_ERR_OUT_OF_MEMORY;
    for (p = 0; p < s->np; p++)
        shard_copy(&s->layout->p[p], s->TP, s->tp_rank, sh->init_params + s->layout->p[p].offset, (float*)s->param[p].p, 1);
    s->batch_in = (int*)malloc(sizeof(int) * (size_t)o->batch * s->cfg.T);
    s->batch_tg = (int*)malloc(sizeof(int) * (size_t)o->batch * s->cfg.T);
    if (!s->batch_in || !s->batch_tg) return CC_ERR_OUT_OF_MEMORY;
    /* the backend and the communicators: the only lines that name the CPU
       world; the TP group (consecutive ranks, one node) and the DP group
       are split from the communicator of all ranks */
    s->world_comm = cc_rank_world_comm(rank);
    if (o->tp > 1 && (rc = cc_comm_split(s->world_comm, s->dp_rank, s->tp_rank, &s->tp_comm)) != CC_OK) return rc;
    if (o->dp > 1 && (rc = cc_comm_split(s->world_comm, s->tp_rank, s->dp_rank, &s->dp_comm)) != CC_OK) return rc;
    if ((rc = cc_cpu_backend_create(rank, &s->be)) != CC_OK) return rc;
    s->have_be = 1;
    if ((rc = build_graph(s, 1, &s->train, &s->train_ops)) != CC_OK) return rc;
    return build_graph(s, 0, &s->eval, &s->eval_ops);
}

/* Program order, and the durations of its ops: each profiled alone
   (agreeing on the slowest rank's time) on a copy of the state that is put
   back afterwards, or from the model. The state before the first step is
   kept (the snapshot): every later phase starts from it. */
static cc_result profile_step(rank_state* s) {
    cc_comm* world = s->world_comm;
    cc_result rc = cc_plan_create(s->ctx, s->train, NULL, &s->plan[0]);
    if (rc == CC_OK) rc = cc_exec_create(s->ctx, s->plan[0], &s->be, &s->ex[0]);
    if (rc == CC_OK) rc = cc_exec_agree(s->ex[0], world);
    if (rc != CC_OK) return rc;
    if (!snap_save(s, &s->snap)) return CC_ERR_OUT_OF_MEMORY;
    set_batch(s, 0, 0);
    s->step.lr = 0;
    s->step.t = 1;
    if (s->o->profile_repeats > 0) rc = cc_exec_profile(s->ex[0], s->o->profile_repeats, world);
    else rc = model_durations(s, s->train);
    snap_restore(s, &s->snap);
    return rc;
}

/* Decomposition and fusion, judged by the library with the durations just
   agreed on (the same on every rank, so every rank rewrites alike) and the
   schedule desc that will schedule the result. The rewritten step is
   profiled again (with --profile 0 it keeps the library's estimates). */
static cc_result rewrite_step(rank_state* s, const cc_sched_desc* sd) {
    cc_rewrite_desc rd = cc_rewrite_desc_default();
    cc_rewrite_report rep;
    cc_plan* plan = NULL;
    cc_exec* ex = NULL;
    cc_comm* world = s->world_comm;
    cc_result rc;
    rd.sched = *sd;
    s->run = s->train;
    if (s->o->decompose) {
        if ((rc = cc_graph_decompose(s->ctx, s->run, &rd, &s->decomposed, &rep)) != CC_OK) return rc;
        if (s->me == 0) s->sh->dec = rep;
        s->run = s->decomposed;
    }
    if (s->o->fuse) {
        if ((rc = cc_graph_fuse(s->ctx, s->run, &rd, &s->fused, &rep)) != CC_OK) return rc;
        if (s->me == 0) s->sh->fus = rep;
        s->run = s->fused;
    }
    if (s->run == s->train) return CC_OK;
    rc = cc_plan_create(s->ctx, s->run, NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(s->ctx, plan, &s->be, &ex);
    if (rc == CC_OK) rc = cc_exec_agree(ex, world);
    if (rc == CC_OK && s->o->profile_repeats > 0) rc = cc_exec_profile(ex, s->o->profile_repeats, world);
    cc_exec_destroy(ex);
    cc_plan_destroy(plan);
    snap_restore(s, &s->snap);
    return rc;
}

/* The library's schedule of the step it runs, the same on every rank, and
   what rank 0 reports of it and of program order. */
static cc_result schedule_step(rank_state* s, const cc_sched_desc* sd) {
    shared* sh = s->sh;
    int i, n = cc_graph_n_ops(s->train), nx = cc_graph_n_ops(s->run);
    cc_op* prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
    double mk0 = 0;
    cc_result rc;
    if (!prog) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) prog[i] = cc_graph_op(s->train, i);
    rc = cc_sched_solve(s->ctx, s->run, sd, &s->sched);
    if (rc == CC_OK) rc = cc_simulate(s->ctx, s->train, prog, n, NULL, &mk0);
    if (rc == CC_OK && s->me == 0) {
        sh->pred_ms[0] = mk0 / 1000.0;
        sh->pred_ms[1] = s->sched.makespan_us / 1000.0;
        sh->pred_exposed_ms[0] = predicted_exposed(s->train, mk0);
        sh->pred_exposed_ms[1] = predicted_exposed(s->run, s->sched.makespan_us);
        sh->sched_ms = s->sched.solve_ms;
        sh->lower_bound_ms = s->sched.lower_bound_us / 1000.0;
        sh->n_ops = n;
        sh->n_ops_run = nx;
        for (i = 0; i < n; i++) if (!cc_op_demand(s->train, prog[i], S_COMPUTE)) sh->n_colls++;
        for (i = 0; i < nx; i++) if (!cc_op_demand(s->run, cc_graph_op(s->run, i), S_COMPUTE)) sh->n_colls_run++;
        /* ops issued at another position than in program order (of the graph that runs) */
        for (i = 0; i < nx; i++) if (cc_op_index(s->run, s->sched.order[i]) != i) sh->moved++;
    }
    free(prog);
    return rc;
}

/* Executors of the scheduled step and of the forward pass, checked across
   ranks; room for a step's timeline. */
static cc_result plan_steps(rank_state* s) {
    cc_comm* world = s->world_comm;
    int n = cc_graph_n_ops(s->run) > cc_graph_n_ops(s->train) ? cc_graph_n_ops(s->run) : cc_graph_n_ops(s->train);
    cc_result rc = cc_plan_create(s->ctx, s->run, s->sched.order, &s->plan[1]);
    if (rc == CC_OK) rc = cc_exec_create(s->ctx, s->plan[1], &s->be, &s->ex[1]);
    if (rc == CC_OK) rc = cc_exec_agree(s->ex[1], world);
    if (rc == CC_OK) rc = cc_plan_create(s->ctx, s->eval, NULL, &s->eval_plan);
    if (rc == CC_OK) rc = cc_exec_create(s->ctx, s->eval_plan, &s->be, &s->eval_ex);
    if (rc == CC_OK) rc = cc_exec_agree(s->eval_ex, world);
    if (rc != CC_OK) return rc;
    if (s->me == 0) {
        s->sh->n_waits[0] = cc_plan_n_waits(s->plan[0]);
        s->sh->n_waits[1] = cc_plan_n_waits(s->plan[1]);
    }
    s->op_start = (double*)malloc(sizeof(double) * (size_t)n);
    s->op_end = (double*)malloc(sizeof(double) * (size_t)n);
    return s->op_start && s->op_end ? CC_OK : CC_ERR_OUT_OF_MEMORY;
}

/* The step made faster: profiled, rewritten, scheduled, planned. One
   schedule desc judges the rewrites and schedules the step they give. */
static cc_result optimise_step(rank_state* s) {
    cc_sched_desc sd = cc_sched_desc_default();
    cc_result rc;
    if (s->o->budget > 0) sd.budget_schedules = s->o->budget;
    rc = profile_step(s);
    if (rc == CC_OK) rc = rewrite_step(s, &sd);
    if (rc == CC_OK) rc = schedule_step(s, &sd);
    if (rc == CC_OK) rc = plan_steps(s);
    return rc;
}

/* Side by side: the two orders alternately on the same state, each step
   from the snapshot; the median step time of each. */
static cc_result compare_orders(rank_state* s) {
    int n = s->o->compare_steps, step, k;
    cc_graph* graph[2];
    double* ms = (double*)malloc(sizeof(double) * 4 * (size_t)n);   /* [order][step, exposed][n] */
    cc_result rc = ms ? CC_OK : CC_ERR_OUT_OF_MEMORY;
    graph[0] = s->train;
    graph[1] = s->run;
    for (step = 0; step < n && rc == CC_OK; step++)
        for (k = 0; k < 2 && rc == CC_OK; k++) {
            snap_restore(s, &s->snap);
            set_batch(s, 0, step);
            s->step.lr = 0;
            s->step.t = 1;
            rc = cc_exec_step(s->ex[k]);
            if (rc == CC_OK) rc = measure_step(s, s->ex[k], graph[k], &ms[(2 * k) * n + step], &ms[(2 * k + 1) * n + step]);
        }
    if (rc == CC_OK && s->me == 0)
        for (k = 0; k < 2; k++) {
            s->sh->cal_ms[k] = median(&ms[(2 * k) * n], n);
            s->sh->cal_exposed_ms[k] = median(&ms[(2 * k + 1) * n], n);
        }
    free(ms);
    snap_restore(s, &s->snap);
    return rc;
}

/* One training run in one order (0 program, 1 the library's) from the
   snapshot; the trace of its last step if asked for. */
static cc_result train_pass(rank_state* s, int pass) {
    shared* sh = s->sh;
    const options* o = s->o;
    int k = sh->pass_order[pass], step;
    cc_graph* graph = k ? s->run : s->train;
    double t0 = wall_s();
    cc_result rc = CC_OK;
    snap_restore(s, &s->snap);
    if (s->me == 0 && sh->passes > 1) printf("--- training in %s order ---\n", k ? "the library's" : "program");
    for (step = 0; step < o->steps; step++) {
        double ms, exposed, loss;
        set_batch(s, 0, step);
        s->step.lr = (float)lr_at(o, step);
        s->step.t = step + 1;
        if ((rc = cc_exec_step(s->ex[k])) != CC_OK) return rc;
        if ((rc = measure_step(s, s->ex[k], graph, &ms, &exposed)) != CC_OK) return rc;
        loss = ((const float*)s->loss->p)[0];
        if (s->me == 0) {
            sh->losses[pass][step] = loss;
            sh->step_ms[pass][step] = ms;
            sh->exposed_ms[pass][step] = exposed;
            if (o->print_every > 0 && (step % o->print_every == 0 || step == o->steps - 1))
                printf("step %4d  loss %.4f  lr %.2e  step %7.2f ms (predicted %7.2f)  exposed comm %6.2f ms (predicted %6.2f)\n",
                       step + 1, loss, s->step.lr, ms, sh->pred_ms[k], exposed, sh->pred_exposed_ms[k]);
        }
        if (step == 0 && pass == 0) {
            unshard_all(s, s->grad, sh->grads0);
            if (s->me == 0) sh->loss0 = loss;
        }
    }
    if (s->me == 0) sh->train_s = wall_s() - t0;
    if (pass == sh->passes - 1 && sh->trace) {
        char name[48];
        snprintf(name, sizeof name, "rank %d (tp %d, dp %d)", s->me, s->tp_rank, s->dp_rank);
        rc = cc_exec_timeline(s->ex[k], s->op_start, s->op_end);
        if (rc == CC_OK) rc = cc_trace_add(sh->trace, graph, s->me, name, s->op_start, s->op_end);
    }
    return rc;
}

/* Training, once per order asked for, from the same start. */
static cc_result train(rank_state* s) {
    int pass;
    cc_result rc = CC_OK;
    for (pass = 0; pass < s->sh->passes && rc == CC_OK; pass++) rc = train_pass(s, pass);
    return rc;
}

/* The mean loss of --eval validation batches, with the forward pass. */
static cc_result evaluate(rank_state* s) {
    double sum = 0;
    int i;
    for (i = 0; i < s->o->eval_batches; i++) {
        cc_result rc;
        set_batch(s, 1, i);
        if ((rc = cc_exec_step(s->eval_ex)) != CC_OK) return rc;
        sum += ((const float*)s->loss->p)[0];
    }
    if (s->me == 0) s->sh->val_loss = sum / s->o->eval_batches;
    return CC_OK;
}

/* --sample characters of text, each drawn from the softmax of the logits
   at the last position of the context (which starts as a newline), with
   the forward pass; every sequence of the batch holds the context. */
static cc_result sample_text(rank_state* s) {
    shared* sh = s->sh;
    int T = s->cfg.T, V = s->cfg.V, ctx_len = 1, n, i, b, v;
    int* context = (int*)calloc((size_t)T, sizeof(int));
    int *inputs = (int*)s->inputs->p, *targets = (int*)s->targets->p;
    uint64_t rs = s->o->seed ^ 0xA5A5A5A5ull;
    cc_result rc = CC_OK;
    if (!context) return CC_ERR_OUT_OF_MEMORY;
    context[0] = sh->data.token_of['\n'] >= 0 ? sh->data.token_of['\n'] : 0;
    for (n = 0; n < s->o->sample_chars && n < (int)sizeof sh->sample - 1; n++) {
        const float* lg;
        double mx = -1e30, sum = 0, r;
        int pick = 0;
        for (b = 0; b < s->Bl; b++)
            for (i = 0; i < T; i++) {
                inputs[b * T + i] = i < ctx_len ? context[i] : 0;
                targets[b * T + i] = 0;
            }
        if ((rc = cc_exec_step(s->eval_ex)) != CC_OK) break;
        lg = (const float*)s->logits->p + (size_t)(ctx_len - 1) * V;
        for (v = 0; v < V; v++) if (lg[v] > mx) mx = lg[v];
        for (v = 0; v < V; v++) sum += exp(lg[v] - mx);
        r = rng_unit(&rs) * sum;
        for (v = 0; v < V; v++) {
            r -= exp(lg[v] - mx);
            pick = v;
            if (r <= 0) break;
        }
        if (s->me == 0) sh->sample[n] = (char)sh->data.vocab[pick];
        if (ctx_len == T) {
            memmove(context, context + 1, sizeof(int) * (size_t)(T - 1));
            ctx_len--;
        }
        context[ctx_len++] = pick;
    }
    if (s->me == 0) sh->sample[n] = 0;
    free(context);
    return rc;
}

static void rank_free(rank_state* s) {
    int i;
    cc_exec_destroy(s->eval_ex);
    cc_plan_destroy(s->eval_plan);
    for (i = 0; i < 2; i++) {
        cc_exec_destroy(s->ex[i]);
        cc_plan_destroy(s->plan[i]);
    }
    if (s->have_be) cc_backend_destroy(&s->be);
    cc_schedule_release(s->ctx, &s->sched);
    cc_graph_destroy(s->train);
    cc_graph_destroy(s->eval);
    cc_graph_destroy(s->decomposed);
    cc_graph_destroy(s->fused);
    cc_comm_destroy(s->tp_comm);
    cc_comm_destroy(s->dp_comm);
    op_store_free(&s->train_ops);
    op_store_free(&s->eval_ops);
    snap_free(&s->snap);
    free(s->batch_in);
    free(s->batch_tg);
    free(s->op_start);
    free(s->op_end);
    for (i = 0; i < s->n_blocks; i++) free(s->block[i]);
    free(s);
}

/* One rank: set up, make the step faster, compare the orders, train,
   evaluate, sample; the final parameters to the host. */
static cc_result rank_main(cc_rank* rank, void* user) {
    rank_state* s = (rank_state*)calloc(1, sizeof *s);
    cc_result rc;
    if (!s) return CC_ERR_OUT_OF_MEMORY;
    rc = rank_setup(s, rank, (shared*)user);
    if (rc == CC_OK) rc = optimise_step(s);
    if (rc == CC_OK && s->o->compare_steps > 0) rc = compare_orders(s);
    if (rc == CC_OK) rc = train(s);
    if (rc == CC_OK && s->o->eval_batches > 0) rc = evaluate(s);
    if (rc == CC_OK && s->o->sample_chars > 0) rc = sample_text(s);
    if (rc == CC_OK) unshard_all(s, s->param, s->sh->final_params);
    rank_free(s);
    return rc;
}

/* ---- main -------------------------------------------------------------------- */
/* The model and its data: from the checkpoint or freshly initialised, the
   text encoded; the files asked for before training. 0, or the exit
   status. */
static int prepare_model(shared* sh) {
    const options* o = &sh->o;
    char err[512];
    unsigned char ck_vocab[256];
    size_t n_text = 0, P = 0;
    sh->cfg = o->cfg;
    if (o->load && !load_checkpoint(o->load, &sh->cfg, ck_vocab, &sh->steps_done, &sh->init_params, &P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (!check_layout(o, &sh->cfg)) return 2;
    if (!load_text(o->data, &sh->text, &n_text, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (n_text == 0) {
        fprintf(stderr, "train_gpt: data file '%s' is empty\n", o->data);
        return 1;
    }
    if (!make_dataset(&sh->data, sh->text, n_text, o->load ? ck_vocab : NULL, sh->cfg.V, sh->cfg.T,
                      o->data ? o->data : "the generated corpus", err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    sh->cfg.V = sh->data.V;
    layout_model(&sh->cfg, &sh->layout);
    sh->P = sh->layout.total;
    if (!sh->init_params) {
        if (!(sh->init_params = (float*)malloc(sizeof(float) * sh->P))) {
            fprintf(stderr, "train_gpt: out of memory\n");
            return 1;
        }
        init_params(&sh->cfg, &sh->layout, sh->init_params, o->seed);
    }
    if (o->save_init && !save_checkpoint(o->save_init, &sh->cfg, &sh->data, sh->steps_done, sh->init_params, sh->P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (o->dump_batches && !write_batches(o->dump_batches, o, &sh->data, sh->cfg.T, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    return 0;
}

/* What the ranks fill in, the host's context and trace; says what will
   run. 0, or the exit status. */
static int prepare_run(shared* sh) {
    const options* o = &sh->o;
    const config* c = &sh->cfg;
    int k;
    sh->passes = o->order == 2 ? 2 : 1;
    sh->pass_order[0] = o->order == 2 ? 0 : o->order;
    sh->pass_order[1] = 1;
    sh->final_params = (float*)calloc(sh->P, sizeof(float));
    sh->grads0 = (float*)calloc(sh->P, sizeof(float));
    for (k = 0; k < sh->passes; k++) {
        sh->losses[k] = (double*)calloc((size_t)o->steps + 1, sizeof(double));
        sh->step_ms[k] = (double*)calloc((size_t)o->steps + 1, sizeof(double));
        sh->exposed_ms[k] = (double*)calloc((size_t)o->steps + 1, sizeof(double));
        if (!sh->losses[k] || !sh->step_ms[k] || !sh->exposed_ms[k]) break;
    }
    if (k < sh->passes || !sh->final_params || !sh->grads0) {
        fprintf(stderr, "train_gpt: out of memory\n");
        return 1;
    }
    if (cc_context_create(NULL, &sh->ctx) != CC_OK) {
        fprintf(stderr, "train_gpt: cannot create a context\n");
        return 1;
    }
    if (o->trace && cc_trace_create(sh->ctx, &sh->trace) != CC_OK) {
        fprintf(stderr, "train_gpt: %s\n", cc_last_error(sh->ctx));
        return 1;
    }
    printf("model: %d layers, width %d, %d heads, context %d, vocabulary %d: %zu parameters\n", c->L, c->C, c->H, c->T, c->V, sh->P);
    printf("data: %s, %zu characters (%zu train, %zu validation)\n", o->data ? o->data : "generated corpus", sh->data.n,
           sh->data.n_train, sh->data.n - sh->data.n_train);
    printf("ranks: %d = TP %d x DP %d; global batch %d x %d tokens; ", o->tp * o->dp, o->tp, o->dp, o->batch, c->T);
    if (o->emulate)
        printf("emulated link: %.0f us + %.1f us/KiB between nodes, %.0f us + %.1f us/KiB within\n", o->link_alpha_us,
               o->link_us_per_kib, o->link_alpha_us / 2, o->link_us_per_kib / 4);
    else printf("no link emulation\n");
    fflush(stdout);
    return 0;
}

/* TP x DP ranks as threads, the TP group on one node; each runs rank_main.
   0, or the exit status. */
static int run_ranks(shared* sh) {
    const options* o = &sh->o;
    cc_world_desc wd = cc_world_desc_default();
    cc_link intra, inter;
    cc_result r;
    wd.n_ranks = o->tp * o->dp;
    wd.ranks_per_node = o->tp;
    wd.emulate_link = o->emulate;
    inter.alpha_us = o->link_alpha_us;
    inter.us_per_byte = o->link_us_per_kib / 1024.0;
    intra.alpha_us = o->link_alpha_us / 2;
    intra.us_per_byte = o->link_us_per_kib / 4 / 1024.0;
    wd.inter_node = &inter;
    wd.intra_node = &intra;
    wd.timeout_s = 120;
    if (cc_world_create(sh->ctx, &wd, &sh->world) != CC_OK) {
        fprintf(stderr, "train_gpt: %s\n", cc_last_error(sh->ctx));
        return 1;
    }
    r = cc_world_run(sh->world, rank_main, sh);
    if (r != CC_OK) {
        const char* m = cc_world_error(sh->world);
        fprintf(stderr, "train_gpt: %s\n", m && *m ? m : cc_result_description(r));
        return 1;
    }
    return 0;
}

/* Median of the first n of v, which stays as it is. */
static double median_of(const double* v, int n) {
    double* tmp = (double*)malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double m = 0;
    if (tmp) {
        memcpy(tmp, v, sizeof(double) * (size_t)n);
        m = median(tmp, n);
    }
    free(tmp);
    return m;
}

/* What training gave, and what the library did to the step: its rewrites
   as their reports say (the makespans their judging schedules gave, before
   and after), the schedule, predicted and measured times. */
static void print_report(const shared* sh) {
    const options* o = &sh->o;
    const cc_rewrite_report *dec = &sh->dec, *fus = &sh->fus;
    int i, k;
    if (sh->passes == 2) {
        int same = 1;
        for (i = 0; i < o->steps; i++) if (sh->losses[0][i] != sh->losses[1][i]) same = 0;
        printf("losses of all %d steps identical in program order and the library's order: %s\n", o->steps, same ? "yes" : "NO");
    }
    if (o->steps > 0) printf("trained %d steps in %.1f s\n", o->steps, sh->train_s);
    if (o->eval_batches > 0) printf("validation loss: %.4f (ln V = %.4f)\n", sh->val_loss, log((double)sh->cfg.V));
    if (o->sample_chars > 0) printf("sample:\n%s\n", sh->sample);
    printf("\nwhat the library did to the step (%d ops, %d collectives as written):\n", sh->n_ops, sh->n_colls);
    if (o->decompose)
        printf("  decomposed %d all-reduce(s) with the ops around them into chunks: %d -> %d ops; judged step %.2f -> %.2f ms "
               "(%d schedules judged)\n", dec->n_changed, dec->n_ops_before, dec->n_ops_after, dec->makespan_before_us / 1000.0,
               dec->makespan_after_us / 1000.0, dec->n_evaluations);
    else printf("  decomposition: off\n");
    if (o->fuse)
        printf("  fused collectives into %d bucket(s): %d -> %d collectives, %d -> %d ops; judged step %.2f -> %.2f ms "
               "(%d schedules judged)\n", fus->n_changed, fus->n_colls_before, fus->n_colls_after, fus->n_ops_before,
               fus->n_ops_after, fus->makespan_before_us / 1000.0, fus->makespan_after_us / 1000.0, fus->n_evaluations);
    else printf("  fusion: off\n");
    printf("  scheduled %d ops (%d collectives) in %.1f ms: %d issued at another position, cross-stream waits %d -> %d\n",
           sh->n_ops_run, sh->n_colls_run, sh->sched_ms, sh->moved, sh->n_waits[0], sh->n_waits[1]);
    printf("  predicted step: %.2f ms in program order, %.2f ms scheduled (lower bound %.2f): %.2fx\n", sh->pred_ms[0], sh->pred_ms[1],
           sh->lower_bound_ms, sh->pred_ms[1] > 0 ? sh->pred_ms[0] / sh->pred_ms[1] : 0);
    printf("  predicted exposed communication: %.2f ms -> %.2f ms\n", sh->pred_exposed_ms[0], sh->pred_exposed_ms[1]);
    if (o->compare_steps > 0)
        printf("  measured side by side (median of %d steps each): %.2f ms -> %.2f ms: %.2fx; exposed communication %.2f -> %.2f ms\n",
               o->compare_steps, sh->cal_ms[0], sh->cal_ms[1], sh->cal_ms[1] > 0 ? sh->cal_ms[0] / sh->cal_ms[1] : 0,
               sh->cal_exposed_ms[0], sh->cal_exposed_ms[1]);
    for (k = 0; k < sh->passes && o->steps > 0; k++) {
        double ms = median_of(sh->step_ms[k], o->steps);
        printf("  training in %s order: median step %.2f ms, exposed communication %.2f ms, %.0f tokens/s\n",
               sh->pass_order[k] ? "the library's" : "program", ms, median_of(sh->exposed_ms[k], o->steps),
               (double)o->batch * sh->cfg.T / (ms / 1000.0));
    }
}

/* The files asked for after training: losses, gradients, checkpoint,
   trace. 0, or the exit status. */
static int write_outputs(const shared* sh) {
    const options* o = &sh->o;
    char err[512];
    int i;
    if (o->losses) {
        FILE* f = fopen(o->losses, "w");
        if (!f) {
            fprintf(stderr, "train_gpt: cannot write '%s': %s\n", o->losses, strerror(errno));
            return 1;
        }
        for (i = 0; i < o->steps; i++) fprintf(f, "%.9g\n", sh->losses[sh->passes - 1][i]);
        if (fclose(f) != 0) {
            fprintf(stderr, "train_gpt: writing '%s' failed\n", o->losses);
            return 1;
        }
    }
    if (o->dump_grads && o->steps > 0 && !write_grads(o->dump_grads, sh->loss0, sh->grads0, sh->P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (o->save && !save_checkpoint(o->save, &sh->cfg, &sh->data, sh->steps_done + o->steps, sh->final_params, sh->P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (sh->trace) {
        if (cc_trace_write(sh->trace, o->trace) != CC_OK) {
            fprintf(stderr, "train_gpt: %s\n", cc_last_error(sh->ctx));
            return 1;
        }
        printf("trace of the last step: %s\n", o->trace);
    }
    return 0;
}

static void shared_free(shared* sh) {
    int k;
    if (sh->world) cc_world_destroy(sh->world);
    if (sh->trace) cc_trace_destroy(sh->trace);
    if (sh->ctx) cc_context_destroy(sh->ctx);
    for (k = 0; k < 2; k++) {
        free(sh->losses[k]);
        free(sh->step_ms[k]);
        free(sh->exposed_ms[k]);
    }
    free(sh->final_params);
    free(sh->grads0);
    free(sh->init_params);
    free(sh->text);
    free(sh->data.tokens);
    free(sh);
}

int main(int argc, char** argv) {
    options o;
    shared* sh;
    int status, pr = parse_args(argc, argv, &o);
    if (pr <= 0) return pr < 0 ? 0 : 2;
    if (!(sh = (shared*)calloc(1, sizeof *sh))) {
        fprintf(stderr, "train_gpt: out of memory\n");
        return 1;
    }
    sh->o = o;
    status = prepare_model(sh);
    if (status == 0) status = prepare_run(sh);
    if (status == 0) status = run_ranks(sh);
    if (status == 0) {
        print_report(sh);
        status = write_outputs(sh);
    }
    shared_free(sh);
    return status;
}
