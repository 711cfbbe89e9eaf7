/* gpt_step.h - the transformer step described once: a GPT model's
   parameters, one rank's tensors, the records of its ops, and the step's
   graph built from them. The trainers (examples/gpt: train_gpt.c on CPU
   ranks, train_gpt.cu on GPUs) build it with real memory and their
   kernels; a planner (tools/plan.c) builds it with no memory at all (sizes
   only, durations set later from a cost model) for layouts no trainer
   runs. It depends on concerto.h alone, so that either may include it.
   Every name it exports starts with gpt_ (GPT_ for macros and enum
   constants).

   Plain C99 (and C++, for nvcc's host pass), host code only. Include after
   concerto.h; every function is static. Nothing here prints, exits or
   touches the tensors' memory: errors are returned as a cc_result with a
   message in the model's `error` (or the context's, for the library's
   calls), and the memory is only carved, so it may be a device's.
   Sections:
     >>params    parameter shapes, order, sharding over tensor parallelism
     >>desc      gpt_step_desc: the model, the layout, precision, buckets
     >>model     a rank's tensors, with memory (a trainer) or sizes only
     >>ops       the op records: what each op's kernel reads and writes;
                 FLOPs and bytes per kind of kernel
     >>graph     building the step's graph, what each op is (gpt_step_op_info),
                 the graph's fingerprint

   The layouts (a rank is one stage's, one TP rank's, one DP rank's):
   - tensor parallelism (Megatron-LM, Shoeybi et al. 2019): attention heads
     and the MLP's hidden units split over TP ranks; an all-reduce after
     each row-parallel projection (forward) and after each column-parallel
     one's input gradient (backward), on the "tp" stream;
   - sequence parallelism (Korthikanti et al. 2022), with sp: instead of
     those all-reduces, a reduce-scatter after each row-parallel projection
     and an all-gather before each column-parallel one; norms, residuals,
     the embedding, the head and the loss run on the rank's N/tp rows; the
     backward mirrors it (all-gather of the residual stream's gradient
     before the MLP's and the attention's projections, reduce-scatter of
     the input gradients), and the gradients of the parameters applied on
     N/tp rows (norms, embeddings, head) are all-reduced over TP when they
     are complete;
   - data parallelism: the loss averaged over DP and the gradients averaged
     over DP per bucket (gpt_step_desc.bucket_of: a plain array, one bucket
     per parameter by default), each bucket one all-reduce over a
     contiguous range of the flat gradient buffer, on the "dp" stream,
     issued after the whole backward (GPT_SYNC_AFTER_BACKWARD, parameter
     order) or as soon as its last gradient is complete
     (GPT_SYNC_WHEN_READY, as PyTorch DDP does);
   - ZeRO (Rajbhandari et al. 2020) 1 and 2: AdamW's state is sharded
     over DP (each bucket's range padded to a multiple of dp elements):
     AdamW updates the rank's 1/dp shard of each bucket, and the bucket's
     parameters are all-gathered after the update. ZeRO-1 all-reduces each
     bucket's gradient as without ZeRO and updates from the rank's part of
     it; ZeRO-2 reduce-scatters it into a shard of its own. ZeRO-3: the
     parameters live only as
     shards; each unit (the embedding, each block, the final norm with the
     head) all-gathers the buckets of its parameters before its forward
     and again before its backward, in every micro-batch; gradients are
     reduce-scattered as in ZeRO-2; no gather after the update;
   - pipeline parallelism: the graph of one stage's rank, with M
     micro-batches in 1F1B order (Narayanan et al. 2021: min(pp-1-stage, M)
     warm-up forwards, then one forward and one backward in turn, then the
     cool-down backwards); SEND and RECV of the boundary activations and
     their gradients on the "pp" stream. The other stages are not in the
     graph; two kinds of no-stream op stand for them (their durations are
     0 as built; a planner sets them):
       "mb<i>.pp.prev_stages"  before the RECV of micro-batch i's input
                               activations (stages > 0), no predecessor:
                               its duration is when the earlier stages'
                               output of micro-batch i can arrive, from the
                               start of the step;
       "mb<i>.pp.other_stages" after the SEND of micro-batch i's output
                               activations and before the RECV of their
                               gradient (stages < pp-1): its duration is
                               the time the later stages spend on
                               micro-batch i, forward and backward.
     The first stage holds the embeddings, the last the final norm, the
     head (its own copy of the tied token embedding, "head_w") and the
     loss. The gradient all-reduce that keeps head_w tied to the first
     stage's wte is left out. With pp = 1 and M > 1 the same order is
     gradient accumulation: forward and backward of each micro-batch in
     turn, the weight gradients accumulated;
   - precision: the communicated tensors (TP partials, gradients, SP's
     gathered and scattered activations) in coll_dtype (float32, bfloat16
     or float16), the other activations in act_bytes, the working
     parameters in param_bytes (2 or 4 each); AdamW's moments (and, where
     param_bytes is 2, the float32 master copy it counts in its bytes) in
     float32. */
#ifndef GPT_STEP_H_INCLUDED
#define GPT_STEP_H_INCLUDED

#ifndef CONCERTO_H_INCLUDED
#error "include concerto.h first"
#endif

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define GPT_STEP_FN static __attribute__((unused))
#else
#define GPT_STEP_FN static
#endif

/* FNV-1a: files' hashes and the graph's fingerprint. */
GPT_STEP_FN uint64_t gpt_fnv1a(uint64_t h, const void* p, size_t n) {
    const unsigned char* b = (const unsigned char*)p;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001B3ull; }
    return h;
}
#define GPT_FNV_START 0xCBF29CE484222325ull

/* A number of bytes from an option's value: digits (a fraction allowed)
   with an optional suffix, K M G T, KiB .. TiB (powers of 1024) or KB ..
   TB (of 1000). 1 with *out, 0 for anything else or below 1 byte. */
#define GPT_BYTES_FORM "a positive number of bytes, optionally with a suffix K, M, G, T (or KiB, MiB, GiB, TiB: " \
                       "powers of 1024; KB, MB, GB, TB: of 1000)"
GPT_STEP_FN int gpt_parse_bytes(const char* v, uint64_t* out) {
    static const struct { const char* s; double f; } suf[] = {
        { "", 1 }, { "B", 1 }, { "K", 1024.0 }, { "KiB", 1024.0 }, { "KB", 1e3 }, { "M", 1048576.0 }, { "MiB", 1048576.0 },
        { "MB", 1e6 }, { "G", 1073741824.0 }, { "GiB", 1073741824.0 }, { "GB", 1e9 }, { "T", 1099511627776.0 },
        { "TiB", 1099511627776.0 }, { "TB", 1e12 },
    };
    char* end;
    double x;
    size_t i;
    if (!v) return 0;
    x = strtod(v, &end);
    for (i = 0; *v && end != v && i < sizeof suf / sizeof suf[0]; i++)
        if (!strcmp(end, suf[i].s)) {
            x *= suf[i].f;
            if (x >= 1 && x < 1.8e19) { *out = (uint64_t)x; return 1; }
            break;
        }
    return 0;
}

/* ---- >>params: shapes, order, sharding ------------------------------------ */
/* V vocabulary, C embedding width, L blocks, H heads, T context length. */
typedef struct gpt_config { int V, C, L, H, T; } gpt_config;

enum { GPT_SH_REPL = 0, GPT_SH_ROWS, GPT_SH_COLS };   /* replicated; rows split (per section); columns split */

typedef struct gpt_pinfo {
    char name[32];
    int rows, cols;          /* global shape [rows][cols] (vectors: cols 1) */
    int shard, sections;     /* GPT_SH_ROWS: rows in `sections` equal blocks, each split by TP */
    int decay;               /* weight decay applies (2-D tensors) */
    int layer;               /* its block, -1 outside the blocks */
    size_t offset;           /* in the global parameter vector */
} gpt_pinfo;

typedef struct gpt_model_layout { int n, cap; gpt_pinfo* p; size_t total; } gpt_model_layout;

GPT_STEP_FN void gpt_layout_free(gpt_model_layout* m) {
    free(m->p);
    memset(m, 0, sizeof *m);
}

GPT_STEP_FN int gpt_add_param(gpt_model_layout* m, const char* name, int layer, int rows, int cols, int shard, int sections, int decay) {
    gpt_pinfo* p;
    if (m->n == m->cap) {
        int cap = m->cap ? 2 * m->cap : 64;
        gpt_pinfo* grown = (gpt_pinfo*)realloc(m->p, sizeof(gpt_pinfo) * (size_t)cap);
        if (!grown) return 0;
        m->p = grown;
        m->cap = cap;
    }
    p = &m->p[m->n++];
    memset(p, 0, sizeof *p);
    if (layer >= 0) snprintf(p->name, sizeof p->name, "h%d.%s", layer, name);
    else snprintf(p->name, sizeof p->name, "%s", name);
    p->rows = rows; p->cols = cols; p->shard = shard; p->sections = sections; p->decay = decay; p->layer = layer;
    p->offset = m->total;
    m->total += (size_t)rows * (size_t)cols;
    return 1;
}

/* One block's 12 parameters, in the order of FORMATS.md. */
GPT_STEP_FN int gpt_add_block_params(gpt_model_layout* m, int l, int C) {
    return gpt_add_param(m, "ln1_w", l, C, 1, GPT_SH_REPL, 1, 0) && gpt_add_param(m, "ln1_b", l, C, 1, GPT_SH_REPL, 1, 0) &&
           gpt_add_param(m, "attn_w", l, 3 * C, C, GPT_SH_ROWS, 3, 1) && gpt_add_param(m, "attn_b", l, 3 * C, 1, GPT_SH_ROWS, 3, 0) &&
           gpt_add_param(m, "proj_w", l, C, C, GPT_SH_COLS, 1, 1) && gpt_add_param(m, "proj_b", l, C, 1, GPT_SH_REPL, 1, 0) &&
           gpt_add_param(m, "ln2_w", l, C, 1, GPT_SH_REPL, 1, 0) && gpt_add_param(m, "ln2_b", l, C, 1, GPT_SH_REPL, 1, 0) &&
           gpt_add_param(m, "fc_w", l, 4 * C, C, GPT_SH_ROWS, 1, 1) && gpt_add_param(m, "fc_b", l, 4 * C, 1, GPT_SH_ROWS, 1, 0) &&
           gpt_add_param(m, "fcproj_w", l, C, 4 * C, GPT_SH_COLS, 1, 1) && gpt_add_param(m, "fcproj_b", l, C, 1, GPT_SH_REPL, 1, 0);
}
enum { GPT_PARAMS_PER_BLOCK = 12 };

/* The parameters of blocks [l0, l1), with the embeddings before them
   (first) and the final norm (and, with head, the head's copy of the token
   embedding) after them (last). 1, or 0 when out of memory (m is then
   empty). */
GPT_STEP_FN int gpt_layout_stage(const gpt_config* c, int l0, int l1, int first, int last, int head, gpt_model_layout* m) {
    int l, ok = 1;
    memset(m, 0, sizeof *m);
    if (first)
        ok = gpt_add_param(m, "wte", -1, c->V, c->C, GPT_SH_REPL, 1, 1) && gpt_add_param(m, "wpe", -1, c->T, c->C, GPT_SH_REPL, 1, 1);
    for (l = l0; ok && l < l1; l++) ok = gpt_add_block_params(m, l, c->C);
    if (ok && last)
        ok = gpt_add_param(m, "lnf_w", -1, c->C, 1, GPT_SH_REPL, 1, 0) && gpt_add_param(m, "lnf_b", -1, c->C, 1, GPT_SH_REPL, 1, 0);
    if (ok && head) ok = gpt_add_param(m, "head_w", -1, c->V, c->C, GPT_SH_REPL, 1, 1);
    if (!ok) gpt_layout_free(m);
    return ok;
}

/* The whole model in the order of FORMATS.md; 1, or 0 when out of memory. */
GPT_STEP_FN int gpt_layout_model(const gpt_config* c, gpt_model_layout* m) { return gpt_layout_stage(c, 0, c->L, 1, 1, 0, m); }

/* Elements of one TP rank's shard of parameter p. */
GPT_STEP_FN size_t gpt_shard_size(const gpt_pinfo* p, int tp) {
    return (size_t)p->rows * (size_t)p->cols / (p->shard == GPT_SH_REPL ? 1u : (size_t)tp);
}

/* ---- >>desc: what step to build ---------------------------------------------- */
enum { GPT_SYNC_AFTER_BACKWARD = 0, GPT_SYNC_WHEN_READY = 1 };   /* gpt_step_desc.grad_sync */

/* Zero means the default everywhere. */
typedef struct gpt_step_desc {
    gpt_config cfg;                /* V, C, L, H, T: all required */
    int micro_batch;           /* sequences per micro-batch on one DP rank (required) */
    int n_micro;               /* M, micro-batches per step (0: 1) */
    int tp, dp, pp;            /* degrees (0: 1) */
    int sp;                    /* sequence parallelism (needs tp > 1) */
    int zero;                  /* 0..3 (1..3 need dp > 1) */
    int tp_rank, dp_rank, pp_rank;
    cc_dtype coll_dtype;       /* communicated tensors: CC_DTYPE_FLOAT32 (0, default), BFLOAT16 or FLOAT16 */
    int act_bytes;             /* other activations: 4 (0) or 2 */
    int param_bytes;           /* working parameters: 4 (0) or 2 */
    /* Buckets of the gradient reductions and of ZeRO's parameter gathers:
       bucket_of[i] for the stage's i-th parameter (gpt_step_stage_params'
       order), n_bucket_of entries; each bucket's parameters must be
       consecutive. NULL: one bucket per parameter. Borrowed: read while
       the model is created. */
    const int* bucket_of;
    int n_bucket_of;
    int grad_sync;             /* GPT_SYNC_AFTER_BACKWARD (0) or GPT_SYNC_WHEN_READY */
    /* Sizes only: give the ops the library may cut into chunks (those with
       a split rule, gpt_op_split) a fn and a part_fn that do nothing, so
       that cc_graph_decompose can split them in a plan that is only
       simulated; 0: no op gets a fn. */
    int chunk_stubs;
    /* 1: only the matmuls (GPT_OP_MATMUL*, forward and backward) get their
       split rule; every other op stays whole to cc_graph_decompose, so a
       collective is split only with the matmuls next to it (what collective
       matmul does). 0: every op with a rule gets it. */
    int rules_matmul_only;
    /* The training step's buffers that live within the step placed by the
       library (cc_graph_add_transient), so that a schedule's memory can be
       judged and capped: each micro-batch's activations and their
       gradients (not the tokens, not the loss), and with ZeRO-3 each
       gather of a bucket of parameters, a buffer of its own per pass
       (forward and backward of every micro-batch) that the pass's ops
       read. The rest stays bound: the parameters, the gradients (a bucket
       accumulates over several ops that write different parameters'
       gradients, which a buffer allocated by its first writer would
       order), ZeRO's shards, AdamW's moments, the norms; and a ZeRO-3
       gather no op of its pass reads (a bias's in the backward) writes a
       bound buffer of its bucket. The graph's dependencies are those of
       the step built without (the passes' gathers of a bucket keep the
       order one buffer gave them, as explicit dependencies), so a
       schedule without a memory cap is the same. A collective on a
       transient buffer has a NULL send or receive buffer, resolved by the
       executor from its regions; a compute op's kernel finds such a
       tensor in the executor's arena (gpt_op_store_place, before each
       step). 0: every buffer bound. A forward-only graph (gpt_build_graph's train 0) stays bound. */
    int transients;
} gpt_step_desc;

GPT_STEP_FN int gpt_step_dtype_bytes(cc_dtype t) {
    return t == CC_DTYPE_FLOAT64 ? 8 : t == CC_DTYPE_BFLOAT16 || t == CC_DTYPE_FLOAT16 ? 2 : 4;
}

/* What is wrong with d (the option at fault named, as the planner's
   command line spells it), or NULL. */
GPT_STEP_FN const char* gpt_step_check(const gpt_step_desc* d, char* err, size_t n) {
    const gpt_config* c = &d->cfg;
    int tp = d->tp ? d->tp : 1, dp = d->dp ? d->dp : 1, pp = d->pp ? d->pp : 1, M = d->n_micro ? d->n_micro : 1;
    if (c->V < 1 || c->C < 1 || c->L < 1 || c->H < 1 || c->T < 1)
        snprintf(err, n, "the model needs --vocab, --embd, --layers, --heads and --seq >= 1 (got V=%d C=%d L=%d H=%d T=%d)",
                 c->V, c->C, c->L, c->H, c->T);
    else if (c->C % c->H) snprintf(err, n, "--embd %d does not divide into --heads %d", c->C, c->H);
    else if (d->micro_batch < 1) snprintf(err, n, "--micro-batch must be >= 1, got %d", d->micro_batch);
    else if (d->n_micro < 0) snprintf(err, n, "--micro-batches must be >= 1, got %d", d->n_micro);
    else if (tp < 1 || dp < 1 || pp < 1) snprintf(err, n, "--tp, --dp and --pp must be >= 1, got %d, %d, %d", tp, dp, pp);
    else if (c->H % tp) snprintf(err, n, "--tp %d does not divide the %d attention heads (--heads)", tp, c->H);
    else if (c->L % pp) snprintf(err, n, "--pp %d does not divide the %d layers (--layers)", pp, c->L);
    else if (pp > 1 && M < pp)
        snprintf(err, n, "--micro-batches %d is fewer than the %d pipeline stages (--pp): 1F1B needs at least one per stage", M, pp);
    else if (d->sp && tp < 2) snprintf(err, n, "--sp needs --tp > 1 (sequence parallelism splits over the TP group)");
    else if (d->sp && (d->micro_batch * c->T) % tp)
        snprintf(err, n, "--sp: %d rows of tokens (--micro-batch x --seq) do not divide by --tp %d", d->micro_batch * c->T, tp);
    else if (d->zero < 0 || d->zero > 3) snprintf(err, n, "--zero must be 0, 1, 2 or 3, got %d", d->zero);
    else if (d->zero && dp < 2) snprintf(err, n, "--zero %d needs --dp > 1 (ZeRO shards over the data-parallel group)", d->zero);
    else if (d->coll_dtype != CC_DTYPE_FLOAT32 && d->coll_dtype != CC_DTYPE_BFLOAT16 && d->coll_dtype != CC_DTYPE_FLOAT16)
        snprintf(err, n, "the collectives' element type must be float32, bfloat16 or float16 (got cc_dtype %d)", (int)d->coll_dtype);
    else if ((d->act_bytes && d->act_bytes != 2 && d->act_bytes != 4) || (d->param_bytes && d->param_bytes != 2 && d->param_bytes != 4))
        snprintf(err, n, "bytes per element of activations and parameters must be 2 or 4 (got %d and %d)", d->act_bytes, d->param_bytes);
    else if (d->grad_sync != GPT_SYNC_AFTER_BACKWARD && d->grad_sync != GPT_SYNC_WHEN_READY)
        snprintf(err, n, "grad_sync must be GPT_SYNC_AFTER_BACKWARD or GPT_SYNC_WHEN_READY, got %d", d->grad_sync);
    else if (d->tp_rank < 0 || d->tp_rank >= tp || d->dp_rank < 0 || d->dp_rank >= dp || d->pp_rank < 0 || d->pp_rank >= pp)
        snprintf(err, n, "rank (tp %d, dp %d, pp %d) is outside the layout %d x %d x %d", d->tp_rank, d->dp_rank, d->pp_rank, tp, dp, pp);
    else return NULL;
    return err;
}

/* ---- >>model: a rank's tensors ------------------------------------------------- */
/* Shapes on one rank: N = Bl * T rows of tokens per micro-batch (Bl
   sequences of T positions), Ns = N/tp with sequence parallelism (else N):
   the rows of norms, residuals, the embedding and the head; C the
   embedding width, V the vocabulary; this TP rank holds Hl = H/TP heads of
   size hs = C/H, Cl = C/TP = Hl * hs of the attention's width and F = 4C/TP
   of the MLP's hidden units. */

/* A tensor of the rank, which the graph knows as a buffer. rows > 0: its
   leading dimension is the batch (rows of tokens, or of sequences), along
   which the library may cut the ops that use it into chunks
   (decomposition). A slot is a part of another tensor (`whole`): its
   region of that tensor's buffer. */
typedef struct gpt_tensor {
    const char* name;
    void* p;                       /* its memory; sizes only: a virtual address, never dereferenced */
    size_t bytes;
    size_t off;                    /* bytes from the start of its group (a slot: of its whole's group) */
    uint64_t rows;
    int id;                        /* index among the rank's tensors */
    cc_dtype dtype;                /* of its elements (float32 where not told) */
    int bf16;                      /* dtype is BFLOAT16 (the trainers' kernels read this) */
    int grad_of;                   /* the gradient of the stage's parameter grad_of - 1; 0: none */
    const struct gpt_tensor* whole;    /* a slot: the tensor it is part of; else NULL */
} gpt_tensor;

/* One block's parameters (or their gradients): this TP rank's shards. */
typedef struct gpt_layer_weights {
    gpt_tensor *ln1_w, *ln1_b;         /* [C] */
    gpt_tensor *attn_w, *attn_b;       /* [3 Cl][C], [3 Cl]: this rank's rows of q, k and v */
    gpt_tensor *proj_w, *proj_b;       /* [C][Cl], [C] */
    gpt_tensor *ln2_w, *ln2_b;         /* [C] */
    gpt_tensor *fc_w, *fc_b;           /* [F][C], [F] */
    gpt_tensor *fcproj_w, *fcproj_b;   /* [C][F], [C] */
} gpt_layer_weights;

typedef struct gpt_model_weights {
    gpt_tensor* wte;                   /* [V][C] (first stage) */
    gpt_tensor* wpe;                   /* [T][C] (first stage) */
    gpt_layer_weights* h;              /* [the stage's blocks] */
    gpt_tensor *lnf_w, *lnf_b;         /* [C] (last stage) */
    gpt_tensor* head;                  /* [V][C]: wte with one stage, head_w with more (last stage) */
} gpt_model_weights;

/* One block's activations and their gradients (one micro-batch). */
typedef struct gpt_layer_acts {
    gpt_tensor *ln1, *ln1_mean, *ln1_rstd;   /* [Ns][C], [Ns], [Ns] */
    gpt_tensor* qkv;                         /* [N][3 Cl] */
    gpt_tensor* att;                         /* [Bl][Hl][T][T] softmax probabilities (rows: sequences) */
    gpt_tensor* atty;                        /* [N][Cl] attention output, heads side by side */
    gpt_tensor* proj;                        /* [N][C] partial projection, reduced over TP */
    gpt_tensor* x1;                          /* [Ns][C] residual stream after attention */
    gpt_tensor *ln2, *ln2_mean, *ln2_rstd;   /* [Ns][C], [Ns], [Ns] */
    gpt_tensor *fch, *fch_gelu;              /* [N][F] before and after GELU */
    gpt_tensor* fcproj;                      /* [N][C] partial MLP output, reduced over TP */
    gpt_tensor* dx1;                         /* [Ns][C] */
    gpt_tensor* dfch;                        /* [N][F] */
    gpt_tensor* dln2;                        /* [N][C] partial, reduced */
    gpt_tensor* datty;                       /* [N][Cl] */
    gpt_tensor* dqkv;                        /* [N][3 Cl] */
    gpt_tensor* dln1;                        /* [N][C] partial, reduced */
    /* sequence parallelism only (NULL without) */
    gpt_tensor *ln1_full, *ln2_full;         /* [N][C] all-gathered ln1, ln2 */
    gpt_tensor *proj_rs, *fcproj_rs;         /* [Ns][C] reduce-scattered proj, fcproj */
    gpt_tensor *dy_full, *dx1_full;          /* [N][C] all-gathered gradients of the block's output and of x1 */
    gpt_tensor *dln2_rs, *dln1_rs;           /* [Ns][C] reduce-scattered dln2, dln1 */
} gpt_layer_acts;

/* One micro-batch's activations on the stage. */
typedef struct gpt_micro {
    gpt_tensor *inputs, *targets;              /* [Ns] tokens (first stage; last stage) */
    gpt_tensor **x, **dx;                      /* [Ls + 1] of [Ns][C]: the residual stream into the stage's block l, its gradient */
    gpt_layer_acts* acts;                      /* [Ls] */
    gpt_tensor *lnf, *lnf_mean, *lnf_rstd;     /* [Ns][C], [Ns], [Ns] (last stage) */
    gpt_tensor *logits, *dlogits;              /* [Ns][V] */
    gpt_tensor* dlnf;                          /* [Ns][C] */
    gpt_tensor* loss;                          /* [1] the mean over the global batch */
} gpt_micro;

/* A gradient bucket: the stage's parameters [first, first + n), elements
   [offset, offset + elems) of the flat gradient and parameter buffers
   (elems padded to a multiple of dp with ZeRO). */
typedef struct gpt_bucket { int first, n; size_t offset, elems; } gpt_bucket;

typedef struct gpt_adamw_step { float lr; int t; } gpt_adamw_step;   /* t counts from 1 */

/* Each op's record (>>ops): the graph's ops point at them. */
typedef struct gpt_op_args gpt_op_args;
typedef struct gpt_step_op_info gpt_step_op_info;
typedef struct gpt_op_store {
    gpt_op_args** ops; int n, cap;
    gpt_step_op_info* info; int n_info, cap_info;   /* [graph op index] */
    uint64_t fingerprint;          /* of the graph built with these records (graph_fingerprint) */
} gpt_op_store;

/* The kernels, by the kind of op. A trainer gives one table: the work of
   every kind (each entry is required) and the memory its tensors live in.
   The graph builder takes each op's work from it, so the CPU trainer and a
   GPU trainer build the same graph, op for op, with their own kernels
   behind it; a planner gives none. */
enum gpt_op_kind {
    GPT_OP_EMBED, GPT_OP_LAYERNORM, GPT_OP_MATMUL, GPT_OP_MATMUL_GELU, GPT_OP_ATTENTION, GPT_OP_RESIDUAL,
    GPT_OP_CROSSENTROPY, GPT_OP_MATMUL_BWD_W, GPT_OP_MATMUL_BWD_X, GPT_OP_MATMUL_GELU_BWD_X, GPT_OP_LAYERNORM_BWD,
    GPT_OP_ATTENTION_BWD, GPT_OP_EMBED_BWD, GPT_OP_SUMSQ, GPT_OP_GRAD_NORM, GPT_OP_ADAMW,
    GPT_OP_KINDS
};

typedef struct gpt_op_view gpt_op_view;
/* The work of one op (or of one chunk of it: v's axis and part): a's
   tensors as v gives them, on v's stream. */
typedef void (*gpt_kernel_fn)(const gpt_op_args* a, const gpt_op_view* v);

typedef struct gpt_kernel_table {
    gpt_kernel_fn run[GPT_OP_KINDS];          /* by enum gpt_op_kind */
    void* (*alloc_zeroed)(size_t n_bytes);     /* one group of tensors, zeroed; NULL: out of memory */
    void (*free_memory)(void* p);              /* what alloc_zeroed returned */
    /* Copies between the host and that memory, complete when they return
       (the host then reads or reuses its side); 1, or 0 on failure. */
    int (*copy_in)(void* dst, const void* host_src, size_t n_bytes);
    int (*copy_out)(void* host_dst, const void* src, size_t n_bytes);
    /* What failed in a kernel or a copy of the calling thread since the
       last call (then cleared), or NULL; may be NULL where nothing can. */
    const char* (*error)(void);
} gpt_kernel_table;

/* A rank's part of the model: its sizes, its tensors (holding this rank's
   shards), its communicators. The graph of the step is built from this
   alone (gpt_build_graph). */
typedef struct gpt_model {
    const gpt_kernel_table* kernels;       /* NULL: sizes only, no memory, no kernels */
    cc_context* ctx;
    gpt_config cfg;
    int TP, DP, PP, M, SP, ZERO;
    int tp_rank, dp_rank, pp_rank;
    int Bl, N, Ns, Cl, F, Hl;
    int L0, Ls;                            /* the stage's first block (global index) and its blocks */
    int first_stage, last_stage;
    int grad_sync, chunk_stubs, rules_matmul_only;
    int transients;                        /* gpt_step_desc.transients */
    int act_first, act_end;                /* the activations' tensor ids [act_first, act_end) */
    gpt_model_layout stage;                    /* the stage's parameters, in order */
    const gpt_model_layout* layout;            /* = &stage */
    int np;                                /* the stage's parameter tensors */
    gpt_bucket* bucket; int nb;            /* buckets, by index */
    int* bucket_of;                        /* [np] */
    /* the tensors: pointers stay put; memory in groups (blocks) */
    gpt_tensor** t; int n_tensors, cap_tensors;
    void** arena; int n_arena, arena_left;
    void** block; size_t* block_bytes; int n_blocks, cap_blocks;
    uint64_t virtual_next;                 /* sizes only: the next group's virtual address */
    gpt_tensor *params, *grads;                /* flat: every parameter's working copy, every gradient */
    gpt_tensor **param, **grad;                /* [np] slots of params, grads, in parameter order */
    gpt_tensor **bucket_param, **bucket_grad;  /* [nb] slots: each bucket's range */
    gpt_tensor **adam_m, **adam_v;             /* [np] (ZeRO 0) or [nb] (ZeRO: the rank's shard of each bucket) */
    gpt_tensor **param_shard, **grad_shard;    /* [nb] ZeRO: the rank's 1/dp of each bucket (NULL without ZeRO) */
    gpt_model_weights w, dw;                   /* the parameters and their gradients by name */
    gpt_micro* mb;                         /* [M] */
    gpt_tensor *inputs, *targets, *logits, *loss;   /* micro-batch 0's */
    gpt_tensor* sumsq;                         /* [n_slots] float64: each gradient's (or shard's) squared norm */
    gpt_tensor** sumsq_slot; int n_slots;
    gpt_tensor* normsq;                        /* [1] float64: the squared norm of the whole gradient */
    gpt_tensor* step_t;                        /* [1] gpt_adamw_step: AdamW's learning rate and step count */
    gpt_adamw_step step;                       /* the host's copy of step_t, which it writes before each step */
    int bf16;                              /* the communicated tensors are bfloat16 (the trainers' --dtype bf16) */
    cc_dtype reduced;                      /* their type */
    cc_dtype act_dtype, param_dtype;       /* of the other activations, of the working parameters */
    cc_comm *tp_comm, *dp_comm, *pp_comm;  /* NULL where the degree is 1 */
    int owns_comms;                        /* made by gpt_step_plan_comms: destroyed with the model */
    char error[256];
} gpt_model;

GPT_STEP_FN size_t gpt_tensor_esize(const gpt_tensor* t) { return (size_t)gpt_step_dtype_bytes(t->dtype); }
/* Elements of a tensor. */
GPT_STEP_FN size_t gpt_tensor_elems(const gpt_tensor* t) { return t->bytes / gpt_tensor_esize(t); }

/* A new tensor (rows: see tensor), zeroed; NULL when out of memory. */
GPT_STEP_FN gpt_tensor* gpt_tensor_new(gpt_model* s, const char* name, size_t bytes, cc_dtype dtype, uint64_t rows) {
    gpt_tensor* t;
    if (s->n_tensors == s->cap_tensors) {
        int cap = s->cap_tensors ? 2 * s->cap_tensors : 256;
        gpt_tensor** grown = (gpt_tensor**)realloc(s->t, sizeof(gpt_tensor*) * (size_t)cap);
        if (!grown) return NULL;
        s->t = grown;
        s->cap_tensors = cap;
    }
    if (s->arena_left == 0) {
        void** grown = (void**)realloc(s->arena, sizeof(void*) * (size_t)(s->n_arena + 1));
        if (!grown) return NULL;
        s->arena = grown;
        if (!(s->arena[s->n_arena] = calloc(256, sizeof(gpt_tensor)))) return NULL;
        s->n_arena++;
        s->arena_left = 256;
    }
    t = (gpt_tensor*)s->arena[s->n_arena - 1] + (256 - s->arena_left--);
    t->name = name;
    t->bytes = bytes;
    t->rows = rows;
    t->dtype = dtype;
    t->bf16 = dtype == CC_DTYPE_BFLOAT16;
    t->id = s->n_tensors;
    s->t[s->n_tensors++] = t;
    return t;
}
/* n elements of the type: the communicated type (reduced), the
   activations' (act), float32. */
GPT_STEP_FN gpt_tensor* gpt_tensor_add_reduced(gpt_model* s, const char* name, size_t n, uint64_t rows) {
    return gpt_tensor_new(s, name, n * (size_t)gpt_step_dtype_bytes(s->reduced), s->reduced, rows);
}
GPT_STEP_FN gpt_tensor* gpt_tensor_add_act(gpt_model* s, const char* name, size_t n, uint64_t rows) {
    return gpt_tensor_new(s, name, n * (size_t)gpt_step_dtype_bytes(s->act_dtype), s->act_dtype, rows);
}
GPT_STEP_FN gpt_tensor* gpt_tensor_add_f32(gpt_model* s, const char* name, size_t n, uint64_t rows) {
    return gpt_tensor_new(s, name, n * 4, CC_DTYPE_FLOAT32, rows);
}
/* A slot of whole: its elements [first, first + n). */
GPT_STEP_FN gpt_tensor* gpt_tensor_slot(gpt_model* s, const gpt_tensor* whole, const char* name, size_t first, size_t n) {
    gpt_tensor* t = gpt_tensor_new(s, name, n * gpt_tensor_esize(whole), whole->dtype, 0);
    if (!t) return NULL;
    t->whole = whole;
    t->off = whole->off + first * gpt_tensor_esize(whole);
    return t;
}

/* Gives the tensors [first, n_tensors) that are not slots their memory:
   one zeroed allocation, carved in order, each tensor starting at a
   multiple of `align` bytes after the group's start (1: back to back; 16
   where float32 and bfloat16 tensors alternate, so that every tensor is
   aligned for any element type and for vector loads). Sizes only: a
   virtual address range instead, never dereferenced, so that collectives
   have non-NULL buffers and neighbours stay neighbours (fusion). Slots
   get their address from their whole (gpt_tensor_place_slots). */
GPT_STEP_FN size_t gpt_carve_offset(size_t at, size_t align) { return (at + align - 1) / align * align; }
GPT_STEP_FN int gpt_tensor_carve(gpt_model* s, int first, size_t align) {
    size_t total = 0;
    char* p = NULL;
    int i;
    for (i = first; i < s->n_tensors; i++)
        if (!s->t[i]->whole) total = gpt_carve_offset(total, align) + s->t[i]->bytes;
    if (s->kernels) {
        if (s->n_blocks == s->cap_blocks) {
            int cap = s->cap_blocks ? 2 * s->cap_blocks : 8;
            void** nb = (void**)realloc(s->block, sizeof(void*) * (size_t)cap);
            size_t* nbb;
            if (!nb) return 0;
            s->block = nb;
            if (!(nbb = (size_t*)realloc(s->block_bytes, sizeof(size_t) * (size_t)cap))) return 0;
            s->block_bytes = nbb;
            s->cap_blocks = cap;
        }
        if (!(p = (char*)s->kernels->alloc_zeroed(total ? total : 1))) return 0;
        s->block[s->n_blocks] = p;
        s->block_bytes[s->n_blocks++] = total;
    }
    if (!s->virtual_next) s->virtual_next = 4096;
    for (i = first, total = 0; i < s->n_tensors; i++) {
        gpt_tensor* t = s->t[i];
        if (t->whole) continue;
        total = gpt_carve_offset(total, align);
        t->off = total;
        t->p = p ? (void*)(p + total) : (void*)(uintptr_t)(s->virtual_next + total);
        total += t->bytes;
    }
    if (!p) s->virtual_next = gpt_carve_offset(s->virtual_next + total + 1, 4096);
    return 1;
}
/* Slots' addresses, once their wholes have theirs. */
GPT_STEP_FN void gpt_tensor_place_slots(gpt_model* s, int first) {
    int i;
    for (i = first; i < s->n_tensors; i++) {
        gpt_tensor* t = s->t[i];
        const gpt_tensor* w = t->whole;
        if (!w) continue;
        if (s->kernels) t->p = (char*)w->p + (t->off - w->off);
        else t->p = (void*)((uintptr_t)w->p + (uintptr_t)(t->off - w->off));
    }
}

/* The stage's parameters as gpt_step_desc.bucket_of counts them: their
   number, and their names (borrowed from a layout the caller frees with
   gpt_layout_free), without building a model. 0 when out of memory. */
GPT_STEP_FN int gpt_step_stage_params(const gpt_step_desc* d, gpt_model_layout* out) {
    int pp = d->pp ? d->pp : 1, Ls = d->cfg.L / pp, s = d->pp_rank;
    return gpt_layout_stage(&d->cfg, s * Ls, (s + 1) * Ls, s == 0, s == pp - 1, pp > 1 && s == pp - 1, out);
}

/* Points the names of w at the stage's tensors t[0..np) in parameter order. */
GPT_STEP_FN void gpt_name_weights(const gpt_model* s, gpt_model_weights* w, gpt_tensor* const* t) {
    int l, i = 0;
    if (s->first_stage) { w->wte = t[i++]; w->wpe = t[i++]; }
    for (l = 0; l < s->Ls; l++) {
        gpt_layer_weights* h = &w->h[l];
        h->ln1_w = t[i++]; h->ln1_b = t[i++];
        h->attn_w = t[i++]; h->attn_b = t[i++];
        h->proj_w = t[i++]; h->proj_b = t[i++];
        h->ln2_w = t[i++]; h->ln2_b = t[i++];
        h->fc_w = t[i++]; h->fc_b = t[i++];
        h->fcproj_w = t[i++]; h->fcproj_b = t[i++];
    }
    if (s->last_stage) {
        w->lnf_w = t[i++]; w->lnf_b = t[i++];
        w->head = s->PP > 1 ? t[i] : w->wte;
    }
}

/* Buckets from the desc: each a run of consecutive parameters. 0 with
   s->error set, or when out of memory. */
GPT_STEP_FN int gpt_make_buckets(gpt_model* s, const gpt_step_desc* d) {
    int p, k;
    if (!(s->bucket_of = (int*)malloc(sizeof(int) * (size_t)(s->np ? s->np : 1)))) return 0;
    if (d->bucket_of) {
        if (d->n_bucket_of != s->np) {
            snprintf(s->error, sizeof s->error, "bucket_of has %d entries; the stage (pp rank %d) has %d parameters", d->n_bucket_of,
                     s->pp_rank, s->np);
            return 0;
        }
        for (p = 0; p < s->np; p++) {
            if (d->bucket_of[p] < 0 || d->bucket_of[p] >= s->np) {
                snprintf(s->error, sizeof s->error, "bucket_of[%d] = %d: buckets are numbered 0..%d", p, d->bucket_of[p], s->np - 1);
                return 0;
            }
            s->bucket_of[p] = d->bucket_of[p];
            if (s->bucket_of[p] + 1 > s->nb) s->nb = s->bucket_of[p] + 1;
        }
    } else {
        for (p = 0; p < s->np; p++) s->bucket_of[p] = p;
        s->nb = s->np;
    }
    if (!(s->bucket = (gpt_bucket*)calloc((size_t)(s->nb ? s->nb : 1), sizeof(gpt_bucket)))) return 0;
    for (k = 0; k < s->nb; k++) s->bucket[k].first = -1;
    for (p = 0; p < s->np; p++) {
        gpt_bucket* b = &s->bucket[s->bucket_of[p]];
        if (b->first >= 0 && b->first + b->n != p) {
            snprintf(s->error, sizeof s->error, "bucket_of: bucket %d holds parameters %d and %d but not all between: a bucket "
                     "must be consecutive parameters ('%s' .. '%s')", s->bucket_of[p], b->first, p, s->stage.p[b->first].name,
                     s->stage.p[p].name);
            return 0;
        }
        if (b->first < 0) b->first = p;
        b->n++;
    }
    for (k = 0; k < s->nb; k++)
        if (s->bucket[k].n == 0) {
            snprintf(s->error, sizeof s->error, "bucket_of: bucket %d is empty (buckets are numbered 0..%d without gaps)", k, s->nb - 1);
            return 0;
        }
    return 1;
}

/* Parameters and gradients: flat buffers in parameter order (each bucket
   padded to a multiple of dp elements with ZeRO), one slot per parameter
   and per bucket; AdamW's moments; ZeRO's shards. */
GPT_STEP_FN int gpt_create_weights(gpt_model* s) {
    size_t total = 0;
    int p, k, first, nb = s->nb, np = s->np, zero = s->ZERO;
    size_t* at = (size_t*)malloc(sizeof(size_t) * (size_t)(np ? np : 1));
    int ok = 0;
    if (!at) return 0;
    /* element offsets: buckets in parameter order (their first parameters') */
    for (p = 0; p < np; p++) {
        gpt_bucket* b = &s->bucket[s->bucket_of[p]];
        if (b->first == p) b->offset = total;
        at[p] = total;
        total += gpt_shard_size(&s->stage.p[p], s->TP);
        if (b->first + b->n - 1 == p) {
            b->elems = total - b->offset;
            if (zero) b->elems = (b->elems + (size_t)s->DP - 1) / (size_t)s->DP * (size_t)s->DP;
            total = b->offset + b->elems;
        }
    }
    s->param = (gpt_tensor**)calloc((size_t)(2 * np + 6 * nb + 2), sizeof(gpt_tensor*));
    if (!s->param) goto out;
    s->grad = s->param + np;
    s->bucket_param = s->grad + np;
    s->bucket_grad = s->bucket_param + nb;
    s->param_shard = zero ? s->bucket_grad + nb : NULL;
    s->grad_shard = zero ? s->bucket_grad + 2 * nb : NULL;
    first = s->n_tensors;
    if (!(s->params = gpt_tensor_new(s, "params", total * (size_t)gpt_step_dtype_bytes(s->param_dtype), s->param_dtype, 0))) goto out;
    for (p = 0; p < np; p++)
        if (!(s->param[p] = gpt_tensor_slot(s, s->params, s->stage.p[p].name, at[p], gpt_shard_size(&s->stage.p[p], s->TP)))) goto out;
    for (k = 0; k < nb; k++)
        if (!(s->bucket_param[k] = gpt_tensor_slot(s, s->params, "bucket", s->bucket[k].offset, s->bucket[k].elems))) goto out;
    if (!gpt_tensor_carve(s, first, 1)) goto out;
    gpt_tensor_place_slots(s, first);
    first = s->n_tensors;
    if (!(s->grads = gpt_tensor_add_reduced(s, "grads", total, 0))) goto out;
    for (p = 0; p < np; p++) {
        if (!(s->grad[p] = gpt_tensor_slot(s, s->grads, "grad", at[p], gpt_shard_size(&s->stage.p[p], s->TP)))) goto out;
        s->grad[p]->grad_of = p + 1;
    }
    for (k = 0; k < nb; k++)
        if (!(s->bucket_grad[k] = gpt_tensor_slot(s, s->grads, "grad_bucket", s->bucket[k].offset, s->bucket[k].elems))) goto out;
    /* ZeRO-1: the rank's shard of a bucket's gradient is its part of the
       all-reduced bucket */
    for (k = 0; k < nb && zero == 1; k++) {
        size_t n = s->bucket[k].elems / (size_t)s->DP;
        if (!(s->grad_shard[k] = gpt_tensor_slot(s, s->grads, "grad_shard", s->bucket[k].offset + (size_t)s->dp_rank * n, n))) goto out;
    }
    if (!gpt_tensor_carve(s, first, 1)) goto out;
    gpt_tensor_place_slots(s, first);
    first = s->n_tensors;
    if (zero) {
        /* the rank's shards of each bucket: parameters, gradient, moments */
        for (k = 0; k < nb; k++) {
            size_t n = s->bucket[k].elems / (size_t)s->DP;
            size_t bytes = n * (size_t)gpt_step_dtype_bytes(s->param_dtype);
            if (!(s->param_shard[k] = gpt_tensor_new(s, "param_shard", bytes, s->param_dtype, 0)) ||
                (zero >= 2 && !(s->grad_shard[k] = gpt_tensor_add_reduced(s, "grad_shard", n, 0))))
                goto out;
        }
    }
    {
        int n = zero ? nb : np;
        if (!(s->adam_m = (gpt_tensor**)calloc((size_t)(2 * n + 1), sizeof(gpt_tensor*)))) goto out;
        s->adam_v = s->adam_m + n;
        for (k = 0; k < n; k++)
            if (!(s->adam_m[k] = gpt_tensor_add_f32(s, "adam_m", zero ? s->grad_shard[k]->bytes / gpt_tensor_esize(s->grad_shard[k])
                                                                   : gpt_tensor_elems(s->param[k]), 0)))
                goto out;
        for (k = 0; k < n; k++)
            if (!(s->adam_v[k] = gpt_tensor_add_f32(s, "adam_v", s->adam_m[k]->bytes / 4, 0))) goto out;
    }
    if (!gpt_tensor_carve(s, first, 16)) goto out;
    gpt_name_weights(s, &s->w, s->param);
    gpt_name_weights(s, &s->dw, s->grad);
    ok = 1;
out:
    free(at);
    return ok;
}

/* One micro-batch's activations, rows of tokens (N or Ns) unless stated. */
GPT_STEP_FN int gpt_create_micro(gpt_model* s, gpt_micro* m) {
    size_t N = (size_t)s->N, Ns = (size_t)s->Ns, C = (size_t)s->cfg.C, Cl = (size_t)s->Cl, F = (size_t)s->F;
    size_t T = (size_t)s->cfg.T, V = (size_t)s->cfg.V;
    int l, L = s->Ls, sp = s->SP;
    /* with sequence parallelism the tensors that are gathered or
       scattered are of the communicated type */
    gpt_tensor* (*sp_type)(gpt_model*, const char*, size_t, uint64_t) = sp ? gpt_tensor_add_reduced : gpt_tensor_add_act;
    if (!(m->x = (gpt_tensor**)calloc(2 * (size_t)(L + 1), sizeof(gpt_tensor*))) ||
        !(m->acts = (gpt_layer_acts*)calloc((size_t)(L ? L : 1), sizeof(gpt_layer_acts))))
        return 0;
    m->dx = m->x + L + 1;
    if (s->first_stage && !(m->inputs = gpt_tensor_new(s, "inputs", sizeof(int) * Ns, CC_DTYPE_INT32, Ns))) return 0;
    if (s->last_stage && !(m->targets = gpt_tensor_new(s, "targets", sizeof(int) * Ns, CC_DTYPE_INT32, Ns))) return 0;
    for (l = 0; l <= L; l++)
        if (!(m->x[l] = sp_type(s, "x", Ns * C, Ns)) || !(m->dx[l] = sp_type(s, "dx", Ns * C, Ns))) return 0;
    for (l = 0; l < L; l++) {
        gpt_layer_acts* a = &m->acts[l];
        if (!(a->ln1 = sp_type(s, "ln1", Ns * C, Ns)) || !(a->ln1_mean = gpt_tensor_add_f32(s, "mean1", Ns, Ns)) ||
            !(a->ln1_rstd = gpt_tensor_add_f32(s, "rstd1", Ns, Ns)) || !(a->qkv = gpt_tensor_add_act(s, "qkv", N * 3 * Cl, N)) ||
            !(a->att = gpt_tensor_add_act(s, "att", (size_t)s->Bl * (size_t)s->Hl * T * T, (uint64_t)s->Bl)) ||
            !(a->atty = gpt_tensor_add_act(s, "attn_out", N * Cl, N)) || !(a->proj = gpt_tensor_add_reduced(s, "proj_partial", N * C, N)) ||
            !(a->x1 = sp_type(s, "x1", Ns * C, Ns)) || !(a->ln2 = sp_type(s, "ln2", Ns * C, Ns)) ||
            !(a->ln2_mean = gpt_tensor_add_f32(s, "mean2", Ns, Ns)) || !(a->ln2_rstd = gpt_tensor_add_f32(s, "rstd2", Ns, Ns)) ||
            !(a->fch = gpt_tensor_add_act(s, "fc", N * F, N)) || !(a->fch_gelu = gpt_tensor_add_act(s, "gelu", N * F, N)) ||
            !(a->fcproj = gpt_tensor_add_reduced(s, "fcproj_partial", N * C, N)) || !(a->dx1 = sp_type(s, "dx1", Ns * C, Ns)) ||
            !(a->dfch = gpt_tensor_add_act(s, "dfc", N * F, N)) || !(a->dln2 = gpt_tensor_add_reduced(s, "dln2_partial", N * C, N)) ||
            !(a->datty = gpt_tensor_add_act(s, "dattn_out", N * Cl, N)) || !(a->dqkv = gpt_tensor_add_act(s, "dqkv", N * 3 * Cl, N)) ||
            !(a->dln1 = gpt_tensor_add_reduced(s, "dln1_partial", N * C, N)))
            return 0;
        if (sp && (!(a->ln1_full = gpt_tensor_add_reduced(s, "ln1_full", N * C, N)) ||
                   !(a->ln2_full = gpt_tensor_add_reduced(s, "ln2_full", N * C, N)) ||
                   !(a->proj_rs = gpt_tensor_add_reduced(s, "proj_rs", Ns * C, Ns)) ||
                   !(a->fcproj_rs = gpt_tensor_add_reduced(s, "fcproj_rs", Ns * C, Ns)) ||
                   !(a->dy_full = gpt_tensor_add_reduced(s, "dy_full", N * C, N)) ||
                   !(a->dx1_full = gpt_tensor_add_reduced(s, "dx1_full", N * C, N)) ||
                   !(a->dln2_rs = gpt_tensor_add_reduced(s, "dln2_rs", Ns * C, Ns)) ||
                   !(a->dln1_rs = gpt_tensor_add_reduced(s, "dln1_rs", Ns * C, Ns))))
            return 0;
    }
    if (s->last_stage &&
        (!(m->lnf = gpt_tensor_add_act(s, "lnf", Ns * C, Ns)) || !(m->lnf_mean = gpt_tensor_add_f32(s, "meanf", Ns, Ns)) ||
         !(m->lnf_rstd = gpt_tensor_add_f32(s, "rstdf", Ns, Ns)) || !(m->logits = gpt_tensor_add_act(s, "logits", Ns * V, Ns)) ||
         !(m->dlogits = gpt_tensor_add_act(s, "dlogits", Ns * V, Ns)) || !(m->dlnf = gpt_tensor_add_act(s, "dlnf", Ns * C, Ns)) ||
         !(m->loss = gpt_tensor_add_f32(s, "loss", 1, 0))))
        return 0;
    return 1;
}

GPT_STEP_FN int gpt_create_activations(gpt_model* s) {
    int i, first = s->n_tensors;
    for (i = 0; i < s->M; i++)
        if (!gpt_create_micro(s, &s->mb[i])) return 0;
    s->act_first = first;
    s->act_end = s->n_tensors;
    s->inputs = s->mb[0].inputs;
    s->targets = s->mb[0].targets;
    s->logits = s->mb[0].logits;
    s->loss = s->mb[0].loss;
    return gpt_tensor_carve(s, first, 16);
}

/* The squared norms of the gradients (or of the rank's shards): one
   float64 slot each, and their sum; AdamW's step. */
GPT_STEP_FN int gpt_create_norms(gpt_model* s) {
    int p, first = s->n_tensors;
    s->n_slots = s->ZERO ? s->nb : s->np;
    if (!(s->sumsq = gpt_tensor_new(s, "sumsq", sizeof(double) * (size_t)s->n_slots, CC_DTYPE_FLOAT64, 0)) ||
        !(s->normsq = gpt_tensor_new(s, "normsq", sizeof(double), CC_DTYPE_FLOAT64, 0)) ||
        !(s->step_t = gpt_tensor_new(s, "adamw_step", sizeof(gpt_adamw_step), CC_DTYPE_FLOAT32, 0)) ||
        !(s->sumsq_slot = (gpt_tensor**)calloc((size_t)(s->n_slots ? s->n_slots : 1), sizeof(gpt_tensor*))))
        return 0;
    if (!gpt_tensor_carve(s, first, 16)) return 0;
    first = s->n_tensors;
    for (p = 0; p < s->n_slots; p++)
        if (!(s->sumsq_slot[p] = gpt_tensor_slot(s, s->sumsq, "sumsq", (size_t)p, 1))) return 0;
    gpt_tensor_place_slots(s, first);
    return 1;
}

GPT_STEP_FN void gpt_model_free(gpt_model* s) {
    int i;
    for (i = 0; i < s->n_blocks; i++) s->kernels->free_memory(s->block[i]);
    for (i = 0; i < s->n_arena; i++) free(s->arena[i]);
    if (s->mb)
        for (i = 0; i < s->M; i++) { free(s->mb[i].x); free(s->mb[i].acts); }
    if (s->owns_comms) {
        cc_comm_destroy(s->tp_comm);
        cc_comm_destroy(s->dp_comm);
        cc_comm_destroy(s->pp_comm);
        s->tp_comm = s->dp_comm = s->pp_comm = NULL;
    }
    free(s->mb); free(s->t); free(s->arena); free(s->block); free(s->block_bytes);
    free(s->bucket); free(s->bucket_of); free(s->param); free(s->adam_m); free(s->sumsq_slot);
    free(s->w.h); free(s->dw.h);
    gpt_layout_free(&s->stage);
    s->n_blocks = s->n_arena = 0;
    s->mb = NULL; s->t = NULL; s->arena = NULL; s->block = NULL; s->block_bytes = NULL;
    s->bucket = NULL; s->bucket_of = NULL; s->param = NULL; s->adam_m = NULL; s->sumsq_slot = NULL;
    s->w.h = s->dw.h = NULL;
}

/* A rank's model of the step d: its sizes and every tensor, in memory from
   the kernel table k, or with k NULL sizes only (no memory: a
   175-billion-parameter model takes megabytes of tensor records). The
   communicators are the caller's to set (a trainer's splits, or
   gpt_step_plan_comms). CC_OK, or CC_ERR_INVALID_ARG with s->error naming
   the option at fault, or CC_ERR_OUT_OF_MEMORY; free with gpt_model_free
   either way. */
GPT_STEP_FN cc_result gpt_model_create(gpt_model* s, const gpt_step_desc* d, const gpt_kernel_table* k, cc_context* ctx) {
    memset(s, 0, sizeof *s);
    s->kernels = k;
    s->ctx = ctx;
    if (gpt_step_check(d, s->error, sizeof s->error)) return CC_ERR_INVALID_ARG;
    s->cfg = d->cfg;
    s->TP = d->tp ? d->tp : 1; s->DP = d->dp ? d->dp : 1; s->PP = d->pp ? d->pp : 1;
    s->M = d->n_micro ? d->n_micro : 1;
    s->SP = d->sp != 0; s->ZERO = d->zero;
    s->tp_rank = d->tp_rank; s->dp_rank = d->dp_rank; s->pp_rank = d->pp_rank;
    s->Bl = d->micro_batch; s->N = s->Bl * s->cfg.T; s->Ns = s->SP ? s->N / s->TP : s->N;
    s->Cl = s->cfg.C / s->TP; s->F = 4 * s->cfg.C / s->TP; s->Hl = s->cfg.H / s->TP;
    s->Ls = s->cfg.L / s->PP; s->L0 = s->pp_rank * s->Ls;
    s->first_stage = s->pp_rank == 0; s->last_stage = s->pp_rank == s->PP - 1;
    s->grad_sync = d->grad_sync; s->chunk_stubs = d->chunk_stubs; s->rules_matmul_only = d->rules_matmul_only;
    s->transients = d->transients != 0;
    s->reduced = d->coll_dtype;
    s->bf16 = s->reduced == CC_DTYPE_BFLOAT16;
    s->act_dtype = d->act_bytes == 2 ? (s->reduced == CC_DTYPE_FLOAT32 ? CC_DTYPE_FLOAT16 : s->reduced) : CC_DTYPE_FLOAT32;
    s->param_dtype = d->param_bytes == 2 ? (s->reduced == CC_DTYPE_FLOAT32 ? CC_DTYPE_FLOAT16 : s->reduced) : CC_DTYPE_FLOAT32;
    if (!gpt_step_stage_params(d, &s->stage)) return CC_ERR_OUT_OF_MEMORY;
    s->layout = &s->stage;
    s->np = s->stage.n;
    if (!gpt_make_buckets(s, d)) return s->error[0] ? CC_ERR_INVALID_ARG : CC_ERR_OUT_OF_MEMORY;
    s->w.h = (gpt_layer_weights*)calloc((size_t)s->Ls, sizeof(gpt_layer_weights));
    s->dw.h = (gpt_layer_weights*)calloc((size_t)s->Ls, sizeof(gpt_layer_weights));
    s->mb = (gpt_micro*)calloc((size_t)s->M, sizeof(gpt_micro));
    if (!s->w.h || !s->dw.h || !s->mb || !gpt_create_weights(s) || !gpt_create_activations(s) || !gpt_create_norms(s)) {
        snprintf(s->error, sizeof s->error, "out of memory for the model's tensors");
        return CC_ERR_OUT_OF_MEMORY;
    }
    return CC_OK;
}

/* Planning communicators: they carry a rank and a size and run nothing. */
static cc_result gpt_plan_collective(void* self, void* native_stream, const cc_collective* coll, char* msg, size_t msg_size) {
    (void)self; (void)native_stream; (void)coll;
    snprintf(msg, msg_size, "a planning communicator (family 'model') runs nothing: it only gives a planned step's collectives "
             "their group's rank and size");
    return CC_ERR_UNSUPPORTED;
}
static const cc_comm_fns gpt_plan_comm_fns = { "model", "model", gpt_plan_collective, NULL, NULL, NULL, NULL };

/* The model's TP, DP and PP communicators, of the planning family (the
   model destroys them). */
GPT_STEP_FN cc_result gpt_step_plan_comms(gpt_model* s) {
    cc_result r = CC_OK;
    s->owns_comms = 1;
    if (s->TP > 1) r = cc_comm_wrap(s->ctx, &gpt_plan_comm_fns, NULL, s->tp_rank, s->TP, "tp", &s->tp_comm);
    if (r == CC_OK && s->DP > 1) r = cc_comm_wrap(s->ctx, &gpt_plan_comm_fns, NULL, s->dp_rank, s->DP, "dp", &s->dp_comm);
    if (r == CC_OK && s->PP > 1) r = cc_comm_wrap(s->ctx, &gpt_plan_comm_fns, NULL, s->pp_rank, s->PP, "pp", &s->pp_comm);
    return r;
}

/* ---- >>ops: the op records --------------------------------------------------- */
/* An op's record is the one place its tensors are named: the tensors its
   kernel reads (in) and writes (out), in the kernel's argument order, and
   the sizes it needs. The graph learns the op's read and write regions from
   the record (gpt_add_op), and the op's work gets the record and nothing else,
   so a tensor that is not declared cannot reach a kernel, and every
   dependency the library derives is one the kernel has. NULL entries are
   absent optional arguments (a bias, a residual, the loss's gradient).
   Besides tensors a record holds only sizes and flags (AdamW's learning
   rate and step count are a tensor, which the host writes before a step). */
#define GPT_OP_MAX_IN 8
#define GPT_OP_MAX_OUT 3

/* An op's tensors for its work or for one chunk of it (gpt_op_split:
   the axes the library may split it along). axis CC_AXIS_ROWS: each tensor
   of R rows starts at the chunk's first row (of the rule's extent E along
   rows, chunk [lo, hi) starts at row R lo / E) and N is the chunk's rows of
   tokens; a tensor without rows is whole. The other axes: every tensor
   whole (its first element), N the op's, and the chunk is [lo, hi) of that
   axis (CC_AXIS_COLS: output columns; CC_AXIS_REDUCE: the terms of each
   output's sum; CC_AXIS_HEADS: attention heads). The whole op is rows
   [0, E). */
struct gpt_op_view {
    void* stream;                  /* the op's stream (the backend's): where a device kernel runs */
    int N;
    int first;                     /* the first chunk of an op that does not accumulate: outputs summed over
                                      chunks (a partial sum) are overwritten, not added to */
    int axis;                      /* cc_axis */
    int lo, hi;                    /* the chunk's part of that axis */
    const void* in[GPT_OP_MAX_IN];
    void* out[GPT_OP_MAX_OUT];
};

struct gpt_op_args {
    int kind;                      /* enum gpt_op_kind */
    gpt_kernel_fn run;             /* the trainer's kernel of that kind; NULL: sizes only */
    const gpt_tensor* in[GPT_OP_MAX_IN];   /* read */
    gpt_tensor* out[GPT_OP_MAX_OUT];       /* written */
    int N;                         /* rows of tokens */
    int C, OC;                     /* widths: a matmul's input and output; a norm's or residual's C */
    int B, T, NH, HS;              /* sequences, positions, heads and head size (attention, embeddings) */
    int V;                         /* vocabulary (cross-entropy) */
    size_t n;                      /* elements (the per-parameter ops) */
    int counted;                   /* sumsq: counts towards the norm on this rank */
    float weight_decay;            /* AdamW */
    int accumulate;                /* a weight gradient of a later micro-batch: added to what is there */
    int row0;                      /* embeddings: the micro-batch's row of the op's first row (position (row0 + n)
                                      mod T); with sequence parallelism the rank's first, else 0 */
    int grad_rows;                 /* cross-entropy: the rows its gradient is a mean over (the micro-batch's, all
                                      TP ranks' with sequence parallelism); 0: the op's own */
    int chunked;                   /* the op has a split rule (gpt_op_split; gpt_add_op's chunks): the library
                                      may run it in chunks along the rule's axes, and its kernels must give each
                                      output element of a row or column chunk the bits of the whole op's */
    /* Where each tensor (in[0..], then out[0..]) is in the graph: its
       region's buffer (index + 1; 0: none) and offset there; and, for a
       transient buffer, its address in the executor about to run
       (gpt_op_store_place), which the kernels then use instead of the
       tensor's own memory. */
    int buf[GPT_OP_MAX_IN + GPT_OP_MAX_OUT];
    uint64_t buf_off[GPT_OP_MAX_IN + GPT_OP_MAX_OUT];
    void* at[GPT_OP_MAX_IN + GPT_OP_MAX_OUT];
};

/* ---- split rules: how the library may cut an op into chunks ------------------
   gpt_add_op gives an op added with chunks the rule of its kind
   (gpt_op_split), and its work for one chunk (gpt_op_part: the record's
   kernel on the chunk's view). The trainers' tensors are row-major, one
   row per token; a weight w of a matmul is stored [OC][C] (out features
   first), as llm.c and PyTorch keep it.
   - matmul y[N][OC] = x[N][C] w^T (+ bias): the user rule "matmul_xwt"
     (the built-in matmul rule reads its B as a row-major [C][OC], which
     w^T is not: a block of y's columns reads a block of w's rows). Rows:
     x's and y's. Columns: y's, with w's rows and bias's elements. The
     reduction (C), for a matmul without bias: x's and w's columns, y a
     partial sum;
   - matmul_gelu h[N][OC] = x w^T + bias, u = GELU(h): the user rule
     "matmul_gelu", matmul_xwt's rows and columns, h and u cut alike; no
     reduction (GELU of a partial sum is not a sum);
   - matmul_bwd_x dx[N][C] = dy[N][OC] w[OC][C]: the built-in matmul rule
     (A = dy, B = w): rows of dy and dx; columns of w and dx; the reduction
     (OC): columns of dy and rows of w, dx a partial sum;
   - matmul_gelu_bwd_x dh[N][C] = (dy[N][OC] w[OC][C]) GELU'(h[N][C]): the
     user rule "matmul_gelu_bwd_x": rows of dy, h and dh; columns of w, h
     and dh; no reduction;
   - matmul_bwd_w dw[OC][C] = dy[N][OC]^T x[N][C], dbias[OC] = the sum of
     dy's rows: the user rule "matmul_bwd_w", rows of dy and x, dw and
     dbias partial sums over the rows (the N rows are its reduction), the
     gradients read to accumulate whole;
   - layernorm and residual: the built-in row-wise rule (x, y, the mean
     and rstd by rows; weights and biases whole);
   - layernorm_bwd: the user rule "layernorm_bwd": rows of every tensor
     that has rows (dx and its inputs), the weight and the gradients read
     to accumulate whole, the weight's and bias's gradients partial sums
     over the rows;
   - attention and its backward: the user rule "attention_seqs", by
     sequences (the rows axis's extent is the B sequences): a chunk's
     query rows with every key and value they attend to, its rows of qkv,
     y (dqkv) and of the probabilities [B][heads][T][T]. (The built-in
     attention rule takes Q, K and V as three reads and one write; these
     ops read one qkv tensor and write the probabilities too.)
   The ops added with chunks are those next to a block's tensor-parallel
   collectives, and attention between them. Without SP: the producers and
   consumers of each all-reduce (proj, fcproj and the residuals after
   them; fc's and qkv's input gradients and the layer norms' backward
   after them). With SP besides: the layer norms that feed the
   all-gathers (ln1, ln2; lnf's and the norms' backward, whose dx the
   backward's all-gathers read) and every matmul that reads what an
   all-gather wrote (qkv, fc; in the backward fcproj's and proj's input
   gradients and the weight gradients of fcproj, fc, proj and qkv: the
   forward's gathered ln1 and ln2 are read again there), and the
   producers and consumers of the reduce-scatters. With bfloat16
   gradients the ops whose weight gradients are partial sums over rows
   (the norms' backward; with SP the weight gradients) run whole: each
   chunk would round what it adds to. A rewrite told to keep results
   bit-identical (cc_rewrite_desc.exact_only) never uses a split with a
   partial sum, so it splits no all-gather of a training step with SP
   (each has a weight gradient among its consumers or a norm's backward
   as its producer) and no reduce-scatter of its backward (a norm's
   backward reads it); the forward's reduce-scatters split exactly. Row
   and column chunks run the kernels of the whole op on a block:
   bit-identical to it on both trainers. */

/* Region r of R rows (contiguous): rows [r0, r1). */
GPT_STEP_FN void gpt_cut_rows(cc_region* r, uint64_t R, uint64_t r0, uint64_t r1) {
    uint64_t row = r->n_bytes / R;
    r->offset_bytes += r0 * row;
    r->n_bytes = (r1 - r0) * row;
    r->split_rows = r->split_rows ? r1 - r0 : 0;
    r->n_rows = 0;
    r->stride_bytes = 0;
}
/* Region r of R rows of `cols` elements (contiguous): columns [c0, c1) of
   every row, strided where R > 1. */
GPT_STEP_FN void gpt_cut_cols(cc_region* r, uint64_t R, uint64_t cols, uint64_t c0, uint64_t c1) {
    uint64_t row = r->n_bytes / R, esz = row / cols;
    r->offset_bytes += c0 * esz;
    r->n_bytes = (c1 - c0) * esz;
    r->split_rows = 0;
    r->n_rows = R > 1 ? R : 0;
    r->stride_bytes = R > 1 ? row : 0;
}

/* "matmul_xwt" and "matmul_gelu": read x, w (and bias), write y (and,
   matmul_gelu, h then u = GELU(h): both cut alike); see above. */
static int gpt_split_matmul_xwt(void* user_data, const cc_split_chunk* ch, cc_region* rd, int n_reads, cc_region* wr, int n_writes,
                                int* partial) {
    const gpt_op_args* a = (const gpt_op_args*)user_data;
    uint64_t N = (uint64_t)a->N, C = (uint64_t)a->C, OC = (uint64_t)a->OC;
    int q;
    if (n_reads < 2 || n_writes < 1 || n_writes > 2) return 1;
    switch (ch->axis) {
    case CC_AXIS_ROWS:
        gpt_cut_rows(&rd[0], N, ch->begin, ch->end);
        for (q = 0; q < n_writes; q++) gpt_cut_rows(&wr[q], N, ch->begin, ch->end);
        return 0;
    case CC_AXIS_COLS:
        gpt_cut_rows(&rd[1], OC, ch->begin, ch->end);
        if (n_reads > 2) gpt_cut_rows(&rd[2], OC, ch->begin, ch->end);
        for (q = 0; q < n_writes; q++) gpt_cut_cols(&wr[q], N, OC, ch->begin, ch->end);
        return 0;
    case CC_AXIS_REDUCE:
        if (n_reads > 2 || n_writes > 1) return 1;   /* a bias added by one chunk, GELU of a partial sum: not declared */
        gpt_cut_cols(&rd[0], N, C, ch->begin, ch->end);
        gpt_cut_cols(&rd[1], OC, C, ch->begin, ch->end);
        partial[0] = 1;
        return 0;
    default:
        return 1;
    }
}

/* "matmul_gelu_bwd_x": reads dy [N][OC], w [OC][C], h [N][C] (GELU's
   input), writes dh [N][C]; see above. */
static int gpt_split_matmul_gelu_bwd_x(void* user_data, const cc_split_chunk* ch, cc_region* rd, int n_reads, cc_region* wr,
                                       int n_writes, int* partial) {
    const gpt_op_args* a = (const gpt_op_args*)user_data;
    uint64_t N = (uint64_t)a->N, C = (uint64_t)a->C, OC = (uint64_t)a->OC;
    (void)partial;
    if (n_reads != 3 || n_writes != 1) return 1;
    switch (ch->axis) {
    case CC_AXIS_ROWS:
        gpt_cut_rows(&rd[0], N, ch->begin, ch->end);
        gpt_cut_rows(&rd[2], N, ch->begin, ch->end);
        gpt_cut_rows(&wr[0], N, ch->begin, ch->end);
        return 0;
    case CC_AXIS_COLS:
        gpt_cut_cols(&rd[1], OC, C, ch->begin, ch->end);
        gpt_cut_cols(&rd[2], N, C, ch->begin, ch->end);
        gpt_cut_cols(&wr[0], N, C, ch->begin, ch->end);
        return 0;
    default:
        return 1;
    }
}

/* The length of record a's rows axis: its sequences (attention) or its
   rows of tokens. */
GPT_STEP_FN uint64_t gpt_rows_extent(const gpt_op_args* a) {
    return a->kind == GPT_OP_ATTENTION || a->kind == GPT_OP_ATTENTION_BWD ? (uint64_t)a->B : (uint64_t)a->N;
}

/* "layernorm_bwd", "matmul_bwd_w", "attention_seqs" (any op cut in rows
   whose outputs without rows are sums over them): each tensor of R rows
   cut in rows (a chunk [b, e) of the axis's extent E: rows [R b / E,
   R e / E)), the others read whole, written as partial sums. */
static int gpt_split_rows_partial(void* user_data, const cc_split_chunk* ch, cc_region* rd, int n_reads, cc_region* wr, int n_writes,
                                  int* partial) {
    const gpt_op_args* a = (const gpt_op_args*)user_data;
    uint64_t E = gpt_rows_extent(a), R;
    int i, q = 0;
    if (ch->axis != CC_AXIS_ROWS || !E) return 1;
    for (i = 0; i < GPT_OP_MAX_IN; i++)
        if (a->in[i]) {
            if (q >= n_reads) return 1;
            if ((R = a->in[i]->rows) != 0) gpt_cut_rows(&rd[q], R, R * ch->begin / E, R * ch->end / E);
            q++;
        }
    for (i = 0, q = 0; i < GPT_OP_MAX_OUT; i++)
        if (a->out[i]) {
            if (q >= n_writes) return 1;
            if ((R = a->out[i]->rows) != 0) gpt_cut_rows(&wr[q], R, R * ch->begin / E, R * ch->end / E);
            else partial[q] = 1;
            q++;
        }
    return 0;
}

/* The split rule of an op of record a, by its kind (see above); 0 for a
   kind that has none. The rule's user_data is a (the store owns it). */
GPT_STEP_FN int gpt_op_split(const gpt_op_args* a, cc_split* sp) {
    memset(sp, 0, sizeof *sp);
    sp->extent[CC_AXIS_ROWS] = gpt_rows_extent(a);
    switch (a->kind) {
    case GPT_OP_MATMUL:
    case GPT_OP_MATMUL_GELU:   /* GELU of a partial sum is no sum: no reduction */
        sp->kind = CC_SPLIT_USER;
        sp->name = a->kind == GPT_OP_MATMUL ? "matmul_xwt" : "matmul_gelu";
        sp->fn = gpt_split_matmul_xwt;
        sp->extent[CC_AXIS_COLS] = (uint64_t)a->OC;
        sp->axes = 1u << CC_AXIS_ROWS | 1u << CC_AXIS_COLS;
        if (a->kind == GPT_OP_MATMUL && !a->in[2]) {
            sp->extent[CC_AXIS_REDUCE] = (uint64_t)a->C;
            sp->axes |= 1u << CC_AXIS_REDUCE;
        }
        break;
    case GPT_OP_MATMUL_BWD_X:
        sp->kind = CC_SPLIT_MATMUL;
        sp->extent[CC_AXIS_COLS] = (uint64_t)a->C;
        sp->extent[CC_AXIS_REDUCE] = (uint64_t)a->OC;
        break;
    case GPT_OP_MATMUL_GELU_BWD_X:
        sp->kind = CC_SPLIT_USER;
        sp->name = "matmul_gelu_bwd_x";
        sp->fn = gpt_split_matmul_gelu_bwd_x;
        sp->extent[CC_AXIS_COLS] = (uint64_t)a->C;
        sp->axes = 1u << CC_AXIS_ROWS | 1u << CC_AXIS_COLS;
        break;
    case GPT_OP_LAYERNORM:
    case GPT_OP_RESIDUAL:
        sp->kind = CC_SPLIT_ROWWISE;
        break;
    case GPT_OP_MATMUL_BWD_W:
    case GPT_OP_LAYERNORM_BWD:
    case GPT_OP_ATTENTION:
    case GPT_OP_ATTENTION_BWD:
        sp->kind = CC_SPLIT_USER;
        sp->name = a->kind == GPT_OP_LAYERNORM_BWD ? "layernorm_bwd" : a->kind == GPT_OP_MATMUL_BWD_W ? "matmul_bwd_w" : "attention_seqs";
        sp->fn = gpt_split_rows_partial;
        sp->axes = 1u << CC_AXIS_ROWS;
        break;
    default:
        return 0;
    }
    sp->user_data = (void*)(uintptr_t)a;
    return sp->extent[CC_AXIS_ROWS] > 0;
}

/* Tensor t's memory: the executor's (at) where it is placed there. */
GPT_STEP_FN void* gpt_at(const gpt_tensor* t, void* at) { return t ? (at ? at : t->p) : NULL; }

/* The view of record a for chunk [lo, hi) (index `index`) along axis of
   extent E (the whole op: rows [0, E)). */
GPT_STEP_FN gpt_op_view gpt_view_part(const gpt_op_args* a, int axis, int index, uint64_t lo, uint64_t hi, uint64_t E) {
    gpt_op_view v;
    int i, rows = axis == CC_AXIS_ROWS;
    v.stream = NULL;
    v.axis = axis;
    v.lo = (int)lo;
    v.hi = (int)hi;
    v.N = rows ? (int)((uint64_t)a->N * hi / E - (uint64_t)a->N * lo / E) : a->N;
    v.first = (index == 0 || axis == CC_AXIS_COLS || axis == CC_AXIS_HEADS) && !a->accumulate;
    for (i = 0; i < GPT_OP_MAX_IN + GPT_OP_MAX_OUT; i++) {
        const gpt_tensor* t = i < GPT_OP_MAX_IN ? a->in[i] : a->out[i - GPT_OP_MAX_IN];
        char* p = (char*)gpt_at(t, a->at[i]);
        if (p && rows && t->rows) p += t->bytes / t->rows * (size_t)(t->rows * lo / E);
        if (i < GPT_OP_MAX_IN) v.in[i] = p;
        else v.out[i - GPT_OP_MAX_IN] = p;
    }
    return v;
}

/* The work of a compute op (cc_op_fn) and of one chunk of a split
   (cc_op_part_fn): the record's kernel. */
static void gpt_op_whole(void* stream, void* user_data) {
    const gpt_op_args* a = (const gpt_op_args*)user_data;
    uint64_t E = gpt_rows_extent(a) > 0 ? gpt_rows_extent(a) : 1;
    gpt_op_view v = gpt_view_part(a, CC_AXIS_ROWS, 0, 0, E, E);
    v.stream = stream;
    a->run(a, &v);
}
static void gpt_op_part(void* stream, void* user_data, const cc_split_chunk* ch) {
    const gpt_op_args* a = (const gpt_op_args*)user_data;
    cc_split sp;
    gpt_op_view v;
    gpt_op_split(a, &sp);
    v = gpt_view_part(a, (int)ch->axis, ch->index, ch->begin, ch->end, sp.extent[ch->axis]);
    v.stream = stream;
    a->run(a, &v);
}
/* gpt_step_desc.chunk_stubs: the work of a sizes-only op, which is none. */
static void gpt_op_no_work(void* stream, void* user_data) { (void)stream; (void)user_data; }
static void gpt_op_no_work_part(void* stream, void* user_data, const cc_split_chunk* ch) {
    (void)stream; (void)user_data; (void)ch;
}

/* Floating-point operations of an op, by kind, from its record: the one
   place they are written. Multiply and add count as two. Matmuls (an [N][C]
   input times a [C][OC] weight) are 2 N C OC; the bias adds are left out
   (1/(2C) of that). Elementwise work is an estimate per element, stated
   per kind. Attention counts the whole T x T score matrix (the causal mask
   is not used to skip half). */
GPT_STEP_FN double gpt_op_flops(const gpt_op_args* a) {
    double N = a->N, C = a->C, OC = a->OC, V = a->V, n = (double)a->n;
    double BH = (double)a->B * a->NH, TT = (double)a->T * a->T, HS = a->HS;
    switch (a->kind) {
    case GPT_OP_EMBED: return N * C;                              /* token + position, per element */
    case GPT_OP_LAYERNORM: return 8 * N * C;                      /* mean 1, variance 3, normalise 2, scale and shift 2 */
    case GPT_OP_MATMUL: return 2 * N * C * OC;
    case GPT_OP_MATMUL_GELU: return 2 * N * C * OC + 8 * N * OC;  /* GELU's tanh form: ~8 per element */
    case GPT_OP_ATTENTION:                                        /* QK^T and AV: 2 T T HS each; softmax ~5 per score */
        return BH * (4 * TT * HS + 5 * TT);
    case GPT_OP_RESIDUAL: return 2 * N * C;                       /* bias and residual adds */
    case GPT_OP_CROSSENTROPY:                                     /* max, exp, sum, normalise; the gradient 1 more */
        return 4 * N * V + (a->out[1] ? N * V : 0);
    case GPT_OP_MATMUL_BWD_W: return 2 * N * C * OC;              /* dW = dY^T X */
    case GPT_OP_MATMUL_BWD_X: return 2 * N * C * OC;              /* dX = dY W */
    case GPT_OP_MATMUL_GELU_BWD_X: return 2 * N * C * OC + 10 * N * C;   /* dX = (dY W) * GELU'(h), ~10 per element */
    case GPT_OP_LAYERNORM_BWD: return 12 * N * C;                 /* dx ~8, dw and db 3, the residual 1 per element */
    case GPT_OP_ATTENTION_BWD:                                    /* dAtt, dV, dQ, dK: 2 T T HS each; softmax's ~4 per score */
        return BH * (8 * TT * HS + 4 * TT);
    case GPT_OP_EMBED_BWD: return 2 * N * C;                      /* adds into wte's and wpe's rows */
    case GPT_OP_SUMSQ: return 2 * n;
    case GPT_OP_GRAD_NORM: return n;
    case GPT_OP_ADAMW: return 16 * n;                             /* clip, decay, two moments, bias corrections, update */
    default: return 0;
    }
}

/* Bytes an op moves: every tensor it reads and writes, once; AdamW also
   reads and writes a float32 master copy where the parameters it updates
   have 2-byte elements. */
GPT_STEP_FN double gpt_op_bytes(const gpt_op_args* a) {
    double b = 0;
    int i;
    for (i = 0; i < GPT_OP_MAX_IN; i++) if (a->in[i]) b += (double)a->in[i]->bytes;
    for (i = 0; i < GPT_OP_MAX_OUT; i++) if (a->out[i]) b += (double)a->out[i]->bytes;
    if (a->kind == GPT_OP_ADAMW && a->out[0] && gpt_tensor_esize(a->out[0]) == 2) b += 8.0 * (double)a->n;
    return b;
}

/* ---- >>graph: building the step's graph --------------------------------------- */
enum { GPT_S_COMPUTE = 0, GPT_S_TP = 1, GPT_S_DP = 2, GPT_S_PP = 3 };   /* streams ("pp" only with pp > 1) */
enum { GPT_WHOLE = 0, GPT_IN_CHUNKS = 1 };                     /* gpt_add_op: the op gets its split rule (gpt_op_split) */

enum { GPT_GROUP_NONE = 0, GPT_GROUP_TP, GPT_GROUP_DP, GPT_GROUP_PP };          /* gpt_step_op_info.group */
enum { GPT_PHASE_FORWARD = 0, GPT_PHASE_BACKWARD, GPT_PHASE_UPDATE };           /* gpt_step_op_info.phase */
enum { GPT_OTHER_NONE = 0, GPT_OTHER_LATER = 1, GPT_OTHER_EARLIER = -1 };       /* gpt_step_op_info.other_stages */

/* What op i of a built graph is (gpt_op_store.info[i]), for a cost model. */
struct gpt_step_op_info {
    int kind;                  /* enum gpt_op_kind of a compute op; -1 for a collective or a no-stream op */
    cc_coll_kind coll;         /* the collective's kind; CC_COLL_NONE for the others */
    int group;                 /* GPT_GROUP_*: the communicator's group (or a no-stream op's: PP) */
    int layer;                 /* the global block, -1 outside the blocks */
    int micro;                 /* the micro-batch, -1 in the update */
    int phase;                 /* GPT_PHASE_* */
    double flops;              /* compute: gpt_op_flops */
    double bytes;              /* compute: gpt_op_bytes. A collective: its whole buffer, the size nccl-tests
                                  report: all-reduce its buffer, reduce-scatter its input and all-gather its
                                  output (group size x n_elems elements), send and recv the message */
    size_t n_elems;            /* a collective's (cc_collective.n_elems) */
    int group_size;            /* a collective's communicator size */
    int bucket;                /* gradient reductions and parameter gathers: the bucket; else -1 */
    int first_param, n_params; /* the stage's parameters the bucket (or a TP gradient all-reduce) covers */
    int other_stages;          /* GPT_OTHER_LATER (pp.other_stages), GPT_OTHER_EARLIER (pp.prev_stages) */
};

typedef struct gpt_builder {
    cc_graph* g;
    cc_buffer* buf;                /* [tensor id]: the tensor's buffer in g (id 0: not added yet) */
    gpt_op_store* store;
    const gpt_model* s;
    const gpt_kernel_table* kernels;
    uint64_t fingerprint;          /* graph_fingerprint: of the ops added so far */
    cc_result rc;
    /* what the next op is */
    int micro, phase, bucket, first_param, n_params, other_stages;
    int track;                     /* the last micro-batch's backward: gradients are counted as they finish */
    int *pending, *bucket_left;    /* [np] producers still to run; [nb] parameters still to finish */
    char* gathered;                /* [nb] ZeRO-3: gathered in the current pass */
    cc_op* other;                  /* [M] each micro-batch's pp.other_stages */
    cc_op last;                    /* the op added last */
    /* transients (gpt_step_desc.transients, a training step) */
    int transients;
    int* bucket_of_t;              /* [tensor id] ZeRO-3: the bucket of a parameter's slot or a bucket's; else -1 */
    cc_buffer *gbuf, *gbuf_unread; /* [nb] ZeRO-3: the bucket's buffer of the current pass; of its unread gathers */
    int **users, *n_users, *cap_users;   /* [nb] ZeRO-3: op indices that used the bucket since its last gather */
} gpt_builder;

/* A new record for an op of this kernel, zeroed, owned by the store. */
GPT_STEP_FN gpt_op_args* gpt_op_new(gpt_builder* b, int kind, int N) {
    gpt_op_store* st = b->store;
    gpt_op_args* a;
    if (b->rc != CC_OK) return NULL;
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 256;
        gpt_op_args** grown = (gpt_op_args**)realloc(st->ops, sizeof(gpt_op_args*) * (size_t)cap);
        if (!grown) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
        st->ops = grown;
        st->cap = cap;
    }
    if (!(a = (gpt_op_args*)calloc(1, sizeof *a))) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
    st->ops[st->n++] = a;
    a->kind = kind;
    a->run = b->kernels ? b->kernels->run[kind] : NULL;
    a->N = N;
    return a;
}

#ifndef CONCERTO_NO_RUNTIME
/* Points the kernels of the ops recorded in st at executor x's arena, for
   every tensor in a transient buffer of g (the graph st's records were
   built with, or a rewrite of it: buffers keep their indices); x NULL:
   back at the tensors' own memory. Before each step of x. */
GPT_STEP_FN void gpt_op_store_place(const gpt_op_store* st, cc_graph* g, const cc_exec* x) {
    int i, j;
    for (i = 0; i < st->n; i++) {
        gpt_op_args* a = st->ops[i];
        for (j = 0; j < GPT_OP_MAX_IN + GPT_OP_MAX_OUT; j++) {
            cc_buffer buf;
            a->at[j] = NULL;
            if (!x || !a->buf[j]) continue;
            buf = cc_graph_buffer(g, a->buf[j] - 1);
            if (cc_buffer_transient(g, buf)) a->at[j] = (char*)cc_exec_buffer_ptr(x, buf) + a->buf_off[j];
        }
    }
}

/* Tells executor x where the bound buffers of g (st's graph, or a rewrite
   of it) are: each op record's tensors in a bound buffer give its base
   (the tensor's memory less its offset there), so that x puts them back
   after profiling and checks them in cc_exec_step_checked. A buffer no
   record touches (one only collectives write) stays unknown to x. */
GPT_STEP_FN cc_result gpt_op_store_bind(const gpt_op_store* st, cc_graph* g, cc_exec* x) {
    int i, j;
    cc_result rc = CC_OK;
    for (i = 0; i < st->n && rc == CC_OK; i++) {
        const gpt_op_args* a = st->ops[i];
        for (j = 0; j < GPT_OP_MAX_IN + GPT_OP_MAX_OUT && rc == CC_OK; j++) {
            const gpt_tensor* t = j < GPT_OP_MAX_IN ? a->in[j] : a->out[j - GPT_OP_MAX_IN];
            cc_buffer buf;
            if (!t || !a->buf[j]) continue;
            buf = cc_graph_buffer(g, a->buf[j] - 1);
            if (!cc_buffer_transient(g, buf)) rc = cc_exec_bind_buffer(x, buf, (char*)t->p - a->buf_off[j]);
        }
    }
    return rc;
}
#endif

GPT_STEP_FN void gpt_op_store_free(gpt_op_store* st) {
    int i;
    for (i = 0; i < st->n; i++) free(st->ops[i]);
    free(st->ops);
    free(st->info);
    memset(st, 0, sizeof *st);
}

/* ZeRO-3 with transients: op index op uses bucket k's gathered buffer. */
GPT_STEP_FN void gpt_bucket_used(gpt_builder* b, int k, int op) {
    if (b->n_users[k] > 0 && b->users[k][b->n_users[k] - 1] == op) return;
    if (b->n_users[k] == b->cap_users[k]) {
        int cap = b->cap_users[k] ? 2 * b->cap_users[k] : 8;
        int* grown = (int*)realloc(b->users[k], sizeof(int) * (size_t)cap);
        if (!grown) { b->rc = CC_ERR_OUT_OF_MEMORY; return; }
        b->users[k] = grown;
        b->cap_users[k] = cap;
    }
    b->users[k][b->n_users[k]++] = op;
}

/* The region of tensor t for the op about to be added (it writes t, or
   reads it): its whole's buffer, which a first access creates (with
   transients, an activation first written is transient); with ZeRO-3 and
   transients a parameter's slot is in its bucket's buffer of the pass. */
GPT_STEP_FN cc_region gpt_region_of(gpt_builder* b, const gpt_tensor* t, int write) {
    const gpt_model* s = b->s;
    const gpt_tensor* whole = t->whole ? t->whole : t;
    cc_region r;
    memset(&r, 0, sizeof r);
    if (b->transients && s->ZERO == 3 && whole == s->params && b->bucket_of_t[t->id] >= 0) {
        int k = b->bucket_of_t[t->id];
        r.buffer = b->gbuf[k];
        r.offset_bytes = (uint64_t)(t->off - s->bucket_param[k]->off);
        r.n_bytes = t->bytes;
        r.split_rows = t->rows;
        gpt_bucket_used(b, k, cc_graph_n_ops(b->g));
        return r;
    }
    if (b->buf[whole->id].id == 0 && b->rc == CC_OK) {
        int act = b->transients && whole->id >= s->act_first && whole->id < s->act_end && write;
        int i;
        for (i = 0; act && i < s->M; i++)
            if (whole == s->mb[i].inputs || whole == s->mb[i].targets || whole == s->mb[i].loss) act = 0;
        b->rc = (act ? cc_graph_add_transient : cc_graph_add_buffer)(b->g, whole->name, whole->bytes, &b->buf[whole->id]);
    }
    r.buffer = b->buf[whole->id];
    r.offset_bytes = (uint64_t)(t->off - whole->off);
    r.n_bytes = t->bytes;
    r.split_rows = t->rows;
    return r;
}

/* The graph's fingerprint: FNV-1a over its ops in program order, each by
   its name, stream, duration (as added: deterministic), its split rule
   (kind and axes; none), its kind or its collective (kind, dtype, reduction, elements,
   the communicator's size), its explicit dependencies and its regions,
   read then written (the buffer's name and size, the region's offset,
   bytes and rows). The same model, layout and rank give the same
   fingerprint whatever runs the kernels, and with no memory at all: no
   addresses, no timings. */
GPT_STEP_FN void gpt_fingerprint_u64(gpt_builder* b, uint64_t v) { b->fingerprint = gpt_fnv1a(b->fingerprint, &v,
                                     sizeof v); } GPT_STEP_FN void gpt_fingerprint_str(gpt_builder* b,
                                     const char* str) { b->fingerprint = gpt_fnv1a(b->fingerprint, str,
                                     strlen(str) + 1); }  GPT_STEP_FN void gpt_fingerprint_tensor(gpt_builder* b,
                                     const gpt_tensor* t) {
    const gpt_tensor* whole = t->whole ? t->whole : t;
    gpt_fingerprint_str(b, whole->name);
    gpt_fingerprint_u64(b, whole->bytes);
    gpt_fingerprint_u64(b, (uint64_t)(t->off - whole->off));
    gpt_fingerprint_u64(b, t->bytes);
    gpt_fingerprint_u64(b, t->rows);
}

GPT_STEP_FN void gpt_fingerprint_op(gpt_builder* b, const cc_op_desc* d, const gpt_op_args* a, unsigned rule) {
    const cc_collective* co = d->coll;
    uint64_t duration;
    int i;
    memcpy(&duration, &d->duration_us, sizeof duration);
    gpt_fingerprint_str(b, d->name);
    gpt_fingerprint_u64(b, (uint64_t)(int64_t)d->stream);
    gpt_fingerprint_u64(b, duration);
    gpt_fingerprint_u64(b, (uint64_t)rule);
    if (co) {
        gpt_fingerprint_u64(b, 1000 + (uint64_t)co->kind);
        gpt_fingerprint_u64(b, (uint64_t)co->dtype);
        gpt_fingerprint_u64(b, (uint64_t)co->reduce);
        gpt_fingerprint_u64(b, (uint64_t)co->n_elems);
        gpt_fingerprint_u64(b, (uint64_t)cc_comm_size(co->comm));
        gpt_fingerprint_u64(b, (uint64_t)(int64_t)co->peer);
    } else gpt_fingerprint_u64(b, (uint64_t)a->kind);
    for (i = 0; i < d->n_deps; i++) gpt_fingerprint_u64(b, 2000 + (uint64_t)(int64_t)cc_op_index(b->g, d->deps[i]));
    gpt_fingerprint_u64(b, (uint64_t)d->n_reads);
    for (i = 0; i < GPT_OP_MAX_IN; i++) if (a->in[i]) gpt_fingerprint_tensor(b, a->in[i]);
    gpt_fingerprint_u64(b, (uint64_t)d->n_writes);
    for (i = 0; i < GPT_OP_MAX_OUT; i++) if (a->out[i]) gpt_fingerprint_tensor(b, a->out[i]);
}

/* Room for one more gpt_step_op_info. */
GPT_STEP_FN gpt_step_op_info* gpt_info_new(gpt_builder* b) {
    gpt_op_store* st = b->store;
    gpt_step_op_info* in;
    if (st->n_info == st->cap_info) {
        int cap = st->cap_info ? 2 * st->cap_info : 256;
        gpt_step_op_info* grown = (gpt_step_op_info*)realloc(st->info, sizeof(gpt_step_op_info) * (size_t)cap);
        if (!grown) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
        st->info = grown;
        st->cap_info = cap;
    }
    in = &st->info[st->n_info];
    memset(in, 0, sizeof *in);
    return in;
}

static void gpt_grad_ready(gpt_builder* b, int p);

/* Adds the op of record a (or the collective coll on a's tensors, or with
   neither a no-stream op): its regions are a's tensors, read then written,
   in a's order; l is the stage's block (-1: none); deps, explicit
   predecessors. With chunks, a compute op gets its kind's split rule
   (gpt_op_split; none for a kind without one), and every tensor with rows
   must have a multiple of the rule's rows (the op's N rows of tokens, or
   its sequences): the library cuts them as gpt_view_part does. */
GPT_STEP_FN void gpt_add_op(gpt_builder* b, const char* name, int l, int stream, gpt_op_args* a, int chunks,
                            const cc_collective* coll, const cc_op* deps, int n_deps) {
    const gpt_model* s = b->s;
    cc_op_desc d;
    memset(&d, 0, sizeof d);
    cc_region reads[GPT_OP_MAX_IN], writes[GPT_OP_MAX_OUT];
    cc_collective local;
    gpt_step_op_info* info;
    char full[96], pre[16];
    cc_split sp;
    int i, split, ready[GPT_OP_MAX_OUT], n_ready = 0;
    if (b->rc != CC_OK) return;
    pre[0] = 0;
    if (s->M > 1 && b->micro >= 0) snprintf(pre, sizeof pre, "mb%d.", b->micro);
    if (l >= 0) snprintf(full, sizeof full, "%sh%d.%s", pre, s->L0 + l, name);
    else snprintf(full, sizeof full, "%s%s", pre, name);
    for (i = 0; i < GPT_OP_MAX_IN + GPT_OP_MAX_OUT; i++) {
        const gpt_tensor* t = i < GPT_OP_MAX_IN ? a->in[i] : a->out[i - GPT_OP_MAX_IN];
        uint64_t E = gpt_rows_extent(a);
        if (chunks && !coll && t && t->rows > 0 && (!E || t->rows % E)) {
            snprintf(((gpt_model*)s)->error, sizeof s->error, "op '%s' runs in chunks of %llu rows, but '%s' has %llu rows", full,
                     (unsigned long long)E, t->name, (unsigned long long)t->rows);
            b->rc = CC_ERR_INVALID_ARG;
            return;
        }
    }
    if (!(info = gpt_info_new(b))) return;
    for (i = 0; i < GPT_OP_MAX_IN; i++)
        if (a->in[i]) {
            reads[d.n_reads] = gpt_region_of(b, a->in[i], 0);
            a->buf[i] = reads[d.n_reads].buffer.id ? cc_buffer_index(b->g, reads[d.n_reads].buffer) + 1 : 0;
            a->buf_off[i] = reads[d.n_reads++].offset_bytes;
        }
    for (i = 0; i < GPT_OP_MAX_OUT; i++)
        if (a->out[i]) {
            writes[d.n_writes] = gpt_region_of(b, a->out[i], 1);
            a->buf[GPT_OP_MAX_IN + i] = writes[d.n_writes].buffer.id ? cc_buffer_index(b->g, writes[d.n_writes].buffer) + 1 : 0;
            a->buf_off[GPT_OP_MAX_IN + i] = writes[d.n_writes++].offset_bytes;
        }
    if (coll && b->rc == CC_OK && ((d.n_reads && cc_buffer_transient(b->g, reads[0].buffer)) ||
                                   (d.n_writes && cc_buffer_transient(b->g, writes[0].buffer)))) {
        /* a transient buffer has no address yet: the executor resolves the
           collective's buffers from its regions (its arena's) */
        local = *coll;
        if (d.n_reads && cc_buffer_transient(b->g, reads[0].buffer)) local.send_buf = NULL;
        if (d.n_writes && cc_buffer_transient(b->g, writes[0].buffer)) local.recv_buf = NULL;
        coll = &local;
    }
    d.name = full;
    d.duration_us = 1;
    d.stream = stream;
    d.reads = reads;
    d.writes = writes;
    d.coll = coll;
    d.deps = deps;
    d.n_deps = n_deps;
    if (!coll && stream == CC_NO_STREAM) d.duration_us = 0;
    split = !coll && chunks && gpt_op_split(a, &sp) &&
            (!s->rules_matmul_only || a->kind == GPT_OP_MATMUL || a->kind == GPT_OP_MATMUL_GELU || a->kind == GPT_OP_MATMUL_BWD_W ||
             a->kind == GPT_OP_MATMUL_BWD_X || a->kind == GPT_OP_MATMUL_GELU_BWD_X);
    a->chunked = split;
    if (a->run) {
        d.fn = gpt_op_whole;
        d.user_data = a;
        if (split) { d.split = &sp; d.part_fn = gpt_op_part; }
    } else if (split && s->chunk_stubs) {
        d.fn = gpt_op_no_work;
        d.split = &sp;
        d.part_fn = gpt_op_no_work_part;
        d.user_data = a;
    }
    gpt_fingerprint_op(b, &d, a, split ? 1 + ((unsigned)sp.kind << 8 | (sp.axes ? sp.axes : 0xffu)) : 0);
    if (b->rc == CC_OK) b->rc = cc_graph_add_op(b->g, &d, &b->last);
    if (b->rc != CC_OK) return;
    /* what it is */
    info->kind = coll || stream == CC_NO_STREAM ? -1 : a->kind;
    info->coll = coll ? coll->kind : CC_COLL_NONE;
    info->group = stream == GPT_S_TP ? GPT_GROUP_TP : stream == GPT_S_DP ? GPT_GROUP_DP
                : stream == GPT_S_PP || stream == CC_NO_STREAM ? GPT_GROUP_PP : GPT_GROUP_NONE;
    info->layer = l >= 0 ? s->L0 + l : -1;
    info->micro = b->phase == GPT_PHASE_UPDATE ? -1 : b->micro;
    info->phase = b->phase;
    info->bucket = b->bucket;
    info->first_param = b->first_param;
    info->n_params = b->n_params;
    info->other_stages = b->other_stages;
    if (coll) {
        int size = cc_comm_size(coll->comm);
        int whole = coll->kind == CC_COLL_REDUCE_SCATTER || coll->kind == CC_COLL_ALL_GATHER;
        info->n_elems = coll->n_elems;
        info->group_size = size;
        info->bytes = (double)coll->n_elems * gpt_step_dtype_bytes(coll->dtype) * (whole ? size : 1);
    } else if (stream != CC_NO_STREAM) {
        info->flops = gpt_op_flops(a);
        info->bytes = gpt_op_bytes(a);
    }
    b->store->n_info++;
    b->bucket = -1; b->first_param = -1; b->n_params = 0; b->other_stages = GPT_OTHER_NONE;
    /* the gradients it completes (the last micro-batch's backward) */
    if (b->track && !coll)
        for (i = 0; i < GPT_OP_MAX_OUT; i++)
            if (a->out[i] && a->out[i]->grad_of && --b->pending[a->out[i]->grad_of - 1] == 0) ready[n_ready++] = a->out[i]->grad_of - 1;
    for (i = 0; i < n_ready; i++) gpt_grad_ready(b, ready[i]);
}

/* A collective on a communication stream: in and out are its send and
   receive tensors (the same one in place; SEND has no out, RECV no in);
   its elements: all-reduce and reduce-scatter out's, all-gather and send
   in's, recv out's. */
GPT_STEP_FN void gpt_add_coll(gpt_builder* b, const char* name, int l, cc_coll_kind kind, cc_reduce_op reduce, const gpt_tensor* in,
                              gpt_tensor* out, cc_comm* comm, int stream, int peer) {
    const gpt_tensor* t = kind == CC_COLL_ALL_GATHER || kind == CC_COLL_SEND ? in : out;
    cc_collective co;
    gpt_op_args a;
    memset(&co, 0, sizeof co);
    memset(&a, 0, sizeof a);
    a.in[0] = in;
    a.out[0] = out;
    co.kind = kind;
    co.dtype = t->dtype;
    co.reduce = reduce;
    co.n_elems = gpt_tensor_elems(t);
    co.comm = comm;
    co.peer = peer;
    co.send_buf = in ? in->p : NULL;
    co.recv_buf = out ? out->p : NULL;
    gpt_add_op(b, name, l, stream, &a, GPT_WHOLE, &co, NULL, 0);
}
/* An in-place all-reduce of tensor t, whole. */
GPT_STEP_FN void gpt_add_allreduce(gpt_builder* b, const char* name, int l, gpt_tensor* t, cc_reduce_op reduce, cc_comm* comm, int stream) {
    gpt_add_coll(b, name, l, CC_COLL_ALL_REDUCE, reduce, t, t, comm, stream, 0);
}

/* One function per kernel: the op's tensors in the kernel's argument order. */
GPT_STEP_FN void gpt_add_compute(gpt_builder* b, const char* name, int l, gpt_op_args* a, int chunks) {
    if (a) gpt_add_op(b, name, l, GPT_S_COMPUTE, a, chunks, NULL, NULL, 0);
}
GPT_STEP_FN void gpt_add_embed(gpt_builder* b, const char* name, gpt_tensor* x, const gpt_tensor* wte, const gpt_tensor* wpe,
                               const gpt_tensor* tokens, int N, int T, int C) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_EMBED, N);
    if (!a) return;
    a->out[0] = x;
    a->in[0] = wte; a->in[1] = wpe; a->in[2] = tokens;
    a->T = T; a->C = C;
    if (b->s->SP) a->row0 = b->s->tp_rank * b->s->Ns;
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}
GPT_STEP_FN void gpt_add_layernorm(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* y, gpt_tensor* mean,
                                   gpt_tensor* rstd, const gpt_tensor* x, const gpt_tensor* w, const gpt_tensor* bias, int N, int C) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_LAYERNORM, N);
    if (!a) return;
    a->out[0] = y; a->out[1] = mean; a->out[2] = rstd;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_matmul(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* y, const gpt_tensor* x,
                                const gpt_tensor* w, const gpt_tensor* bias, int N, int C, int OC) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_MATMUL, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_matmul_gelu(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* h, gpt_tensor* u,
                                     const gpt_tensor* x, const gpt_tensor* w, const gpt_tensor* bias, int N, int C, int OC) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_MATMUL_GELU, N);
    if (!a) return;
    a->out[0] = h; a->out[1] = u;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_attention(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* y, gpt_tensor* att,
                                   const gpt_tensor* qkv, int B, int T, int NH, int HS) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_ATTENTION, B * T);
    if (!a) return;
    a->out[0] = y; a->out[1] = att;
    a->in[0] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_residual(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* y, const gpt_tensor* x,
                                  const gpt_tensor* part, const gpt_tensor* bias, int N, int C) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_RESIDUAL, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = part; a->in[2] = bias;
    a->C = C;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_crossentropy(gpt_builder* b, const char* name, gpt_tensor* loss, gpt_tensor* dlogits,
                                      const gpt_tensor* logits, const gpt_tensor* targets, int N, int V) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_CROSSENTROPY, N);
    if (!a) return;
    a->out[0] = loss; a->out[1] = dlogits;
    a->in[0] = logits; a->in[1] = targets;
    a->V = V;
    if (b->s->SP) a->grad_rows = b->s->N;
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}
/* The weight-gradient ops accumulate in micro-batches after the first:
   they then read what they write. */
GPT_STEP_FN void gpt_accumulating(gpt_builder* b, gpt_op_args* a, int first_in) {
    int i;
    if (b->micro == 0) return;
    a->accumulate = 1;
    for (i = 0; i < GPT_OP_MAX_OUT && first_in + i < GPT_OP_MAX_IN; i++)
        if (a->out[i] && a->out[i]->grad_of) a->in[first_in++] = a->out[i];
}
GPT_STEP_FN void gpt_add_matmul_bwd_w(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* dw, gpt_tensor* dbias,
                                      const gpt_tensor* dy, const gpt_tensor* x, int N, int C, int OC) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_MATMUL_BWD_W, N);
    if (!a) return;
    a->out[0] = dw; a->out[1] = dbias;
    a->in[0] = dy; a->in[1] = x;
    a->C = C; a->OC = OC;
    gpt_accumulating(b, a, 2);
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_matmul_bwd_x(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* dx, const gpt_tensor* dy,
                                      const gpt_tensor* w, int N, int C, int OC) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_MATMUL_BWD_X, N);
    if (!a) return;
    a->out[0] = dx;
    a->in[0] = dy; a->in[1] = w;
    a->C = C; a->OC = OC;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_matmul_gelu_bwd_x(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* dh, const gpt_tensor* dy,
                                           const gpt_tensor* w, const gpt_tensor* h, int N, int C, int OC) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_MATMUL_GELU_BWD_X, N);
    if (!a) return;
    a->out[0] = dh;
    a->in[0] = dy; a->in[1] = w; a->in[2] = h;
    a->C = C; a->OC = OC;
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_layernorm_bwd(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* dx, gpt_tensor* dw,
                                       gpt_tensor* dbias, const gpt_tensor* resid, const gpt_tensor* dy, const gpt_tensor* x,
                                       const gpt_tensor* mean, const gpt_tensor* rstd, const gpt_tensor* w, int N, int C) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_LAYERNORM_BWD, N);
    if (!a) return;
    a->out[0] = dx; a->out[1] = dw; a->out[2] = dbias;
    a->in[0] = resid; a->in[1] = dy; a->in[2] = x; a->in[3] = mean; a->in[4] = rstd; a->in[5] = w;
    a->C = C;
    gpt_accumulating(b, a, 6);
    gpt_add_compute(b, name, l, a, chunks);
}
GPT_STEP_FN void gpt_add_attention_bwd(gpt_builder* b, const char* name, int l, int chunks, gpt_tensor* dqkv, const gpt_tensor* dy,
                                       const gpt_tensor* att, const gpt_tensor* qkv, int B, int T, int NH, int HS) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_ATTENTION_BWD, B * T);
    if (!a) return;
    a->out[0] = dqkv;
    a->in[0] = dy; a->in[1] = att; a->in[2] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    gpt_add_compute(b, name, l, a, chunks);
}
/* dwte is read as well: with one stage the head's gradient is already in it. */
GPT_STEP_FN void gpt_add_embed_bwd(gpt_builder* b, const char* name, gpt_tensor* dwte, gpt_tensor* dwpe, const gpt_tensor* dx,
                                   const gpt_tensor* tokens, int B, int T, int C, int N) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_EMBED_BWD, N);
    if (!a) return;
    a->out[0] = dwte; a->out[1] = dwpe;
    a->in[0] = dx; a->in[1] = tokens; a->in[2] = dwte;
    a->B = B; a->T = T; a->C = C;
    if (b->s->SP) a->row0 = b->s->tp_rank * b->s->Ns;
    if (b->micro > 0) { a->accumulate = 1; a->in[3] = dwpe; }
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}
GPT_STEP_FN void gpt_add_sumsq(gpt_builder* b, const char* name, gpt_tensor* slot, const gpt_tensor* g, int counted) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_SUMSQ, 0);
    if (!a) return;
    a->out[0] = slot;
    a->in[0] = g;
    a->n = gpt_tensor_elems(g);
    a->counted = counted;
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}
GPT_STEP_FN void gpt_add_grad_norm(gpt_builder* b, const char* name, gpt_tensor* normsq, const gpt_tensor* sumsq) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_GRAD_NORM, 0);
    if (!a) return;
    a->out[0] = normsq;
    a->in[0] = sumsq;
    a->n = sumsq->bytes / sizeof(double);
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}
GPT_STEP_FN void gpt_add_adamw(gpt_builder* b, const char* name, gpt_tensor* param, gpt_tensor* m, gpt_tensor* v,
                               const gpt_tensor* g, const gpt_tensor* normsq, float weight_decay, const gpt_tensor* step) {
    gpt_op_args* a = gpt_op_new(b, GPT_OP_ADAMW, 0);
    if (!a) return;
    a->out[0] = param; a->out[1] = m; a->out[2] = v;
    a->in[0] = g; a->in[1] = normsq; a->in[2] = step;
    a->n = gpt_tensor_elems(param);
    a->weight_decay = weight_decay;
    gpt_add_compute(b, name, -1, a, GPT_WHOLE);
}

/* The stage's parameter index of block l's first parameter, of lnf_w, of
   the head's weight. */
GPT_STEP_FN int gpt_block_param0(const gpt_model* s, int l) { return (s->first_stage ? 2 : 0) + GPT_PARAMS_PER_BLOCK * l; }
GPT_STEP_FN int gpt_head_param(const gpt_model* s) { return s->PP > 1 ? s->np - 1 : 0; }

/* The name of a bucket's collective: its parameter's, or the bucket's. */
GPT_STEP_FN void gpt_bucket_name(const gpt_model* s, int k, const char* what, char* name, size_t n) {
    if (s->bucket[k].n == 1) snprintf(name, n, "%s.%s", s->stage.p[s->bucket[k].first].name, what);
    else snprintf(name, n, "bucket%d.%s", k, what);
}
GPT_STEP_FN void gpt_about_bucket(gpt_builder* b, int k) {
    b->bucket = k;
    b->first_param = b->s->bucket[k].first;
    b->n_params = b->s->bucket[k].n;
}

/* Some op of the current pass reads a parameter of bucket k: every one
   in the forward; in the backward the weights (not the biases, whose
   gradients need no parameter) and the head. */
GPT_STEP_FN int gpt_bucket_read_in_pass(const gpt_builder* b, int k) {
    const gpt_model* s = b->s;
    int p;
    if (b->phase == GPT_PHASE_FORWARD) return 1;
    for (p = s->bucket[k].first; p < s->bucket[k].first + s->bucket[k].n; p++) {
        const char* nm = s->stage.p[p].name;
        size_t len = strlen(nm);
        if ((len >= 2 && !strcmp(nm + len - 2, "_w")) || (s->last_stage && p == gpt_head_param(s))) return 1;
    }
    return 0;
}

/* ZeRO-3 with transients: bucket k's buffer for the gather about to be
   added: a transient one of its own where the pass reads it, else the
   bucket's bound one. */
GPT_STEP_FN void gpt_gather_buffer(gpt_builder* b, int k) {
    const gpt_model* s = b->s;
    char name[80], what[40];
    if (b->rc != CC_OK) return;
    if (gpt_bucket_read_in_pass(b, k)) {
        if (s->M > 1) snprintf(what, sizeof what, "mb%d.%s.gathered", b->micro, b->phase == GPT_PHASE_FORWARD ? "fwd" : "bwd");
        else snprintf(what, sizeof what, "%s.gathered", b->phase == GPT_PHASE_FORWARD ? "fwd" : "bwd");
        gpt_bucket_name(s, k, what, name, sizeof name);
        b->rc = cc_graph_add_transient(b->g, name, s->bucket_param[k]->bytes, &b->gbuf[k]);
    } else {
        if (b->gbuf_unread[k].id == 0) {
            gpt_bucket_name(s, k, "gathered_unread", name, sizeof name);
            b->rc = cc_graph_add_buffer(b->g, name, s->bucket_param[k]->bytes, &b->gbuf_unread[k]);
        }
        b->gbuf[k] = b->gbuf_unread[k];
    }
}

/* ZeRO-3: the buckets of the stage's parameters [p0, p0 + n) not yet
   gathered in this pass, all-gathered from the ranks' shards. With
   transients, each gather after the bucket's first depends on the ops
   that used the bucket since the one before (the order one buffer for
   both gave them). */
GPT_STEP_FN void gpt_gather_params(gpt_builder* b, int p0, int n) {
    const gpt_model* s = b->s;
    char name[64];
    int p, j;
    if (s->ZERO != 3) return;
    for (p = p0; p < p0 + n; p++) {
        int k = s->bucket_of[p], before = 0;
        if (b->gathered[k]) continue;
        b->gathered[k] = 1;
        gpt_bucket_name(s, k, "param.allgather", name, sizeof name);
        if (b->transients) {
            gpt_gather_buffer(b, k);
            before = b->n_users[k];
        }
        gpt_about_bucket(b, k);
        gpt_add_coll(b, name, -1, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, s->param_shard[k], s->bucket_param[k], s->dp_comm, GPT_S_DP, 0);
        if (!b->transients || b->rc != CC_OK) continue;
        for (j = 0; j < before && b->rc == CC_OK; j++)
            b->rc = cc_graph_add_dep(b->g, cc_graph_op(b->g, b->users[k][j]), b->last);
        b->users[k][0] = cc_op_index(b->g, b->last);
        b->n_users[k] = 1;
    }
}

/* Bucket k's gradient over DP: averaged by an all-reduce (with ZeRO-1
   too: each rank then updates from its part of the bucket), or with
   ZeRO-2 and 3 reduce-scattered into the rank's shard. */
GPT_STEP_FN void gpt_reduce_bucket(gpt_builder* b, int k) {
    const gpt_model* s = b->s;
    char name[64];
    gpt_bucket_name(s, k, s->ZERO >= 2 ? "grad.reduce_scatter" : "grad.allreduce", name, sizeof name);
    gpt_about_bucket(b, k);
    if (s->ZERO >= 2)
        gpt_add_coll(b, name, -1, CC_COLL_REDUCE_SCATTER, CC_REDUCE_AVG, s->bucket_grad[k], s->grad_shard[k], s->dp_comm, GPT_S_DP, 0);
    else gpt_add_allreduce(b, name, -1, s->bucket_grad[k], CC_REDUCE_AVG, s->dp_comm, GPT_S_DP);
}

/* A parameter applied on the rank's N/tp rows under sequence parallelism,
   whose gradient is then a partial sum over the TP group: the norms, the
   embeddings, the head (the projections' biases get whole gradients, from
   the all-gathered gradient of the block's output). */
GPT_STEP_FN int gpt_sp_partial(const gpt_pinfo* p) {
    const char* leaf = strchr(p->name, '.') ? strchr(p->name, '.') + 1 : p->name;
    return p->shard == GPT_SH_REPL && strcmp(leaf, "proj_b") != 0 && strcmp(leaf, "fcproj_b") != 0;
}

/* Parameter p's gradient is complete (the last micro-batch's backward):
   with SP it is summed over TP; when ready, its bucket is reduced once
   every parameter of it is complete. */
static void gpt_grad_ready(gpt_builder* b, int p) {
    const gpt_model* s = b->s;
    int saved = b->micro;
    char name[64];
    if (s->SP && gpt_sp_partial(&s->stage.p[p])) {
        snprintf(name, sizeof name, "%s.grad.tp_allreduce", s->stage.p[p].name);
        b->first_param = p;
        b->n_params = 1;
        b->micro = -1;
        gpt_add_allreduce(b, name, -1, s->grad[p], CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
        b->micro = saved;
    }
    if (s->DP > 1 && s->grad_sync == GPT_SYNC_WHEN_READY && --b->bucket_left[s->bucket_of[p]] == 0) {
        b->micro = -1;
        gpt_reduce_bucket(b, s->bucket_of[p]);
        b->micro = saved;
    }
}

/* Block l's forward pass: Megatron's tensor parallelism, an all-reduce
   after each row-parallel projection; with SP an all-gather before each
   column-parallel projection and a reduce-scatter after each row-parallel
   one. */
GPT_STEP_FN void gpt_forward_layer(gpt_builder* b, const gpt_micro* mb, int l) {
    const gpt_model* s = b->s;
    const gpt_layer_weights* w = &s->w.h[l];
    const gpt_layer_acts* a = &mb->acts[l];
    /* ch: the ops next to the block's TP collectives, and attention
       between them; sp_ch: with SP also the norms that feed the
       all-gathers and the matmuls that read what they gathered */
    int N = s->N, Ns = s->Ns, C = s->cfg.C, T = s->cfg.T, sp = s->SP, ch = GPT_IN_CHUNKS, sp_ch = sp ? GPT_IN_CHUNKS : GPT_WHOLE;
    const gpt_tensor *ln1 = a->ln1, *ln2 = a->ln2, *proj = a->proj, *fcproj = a->fcproj;
    gpt_gather_params(b, gpt_block_param0(s, l), GPT_PARAMS_PER_BLOCK);
    gpt_add_layernorm(b, "ln1", l, sp_ch, a->ln1, a->ln1_mean, a->ln1_rstd, mb->x[l], w->ln1_w, w->ln1_b, Ns, C);
    if (sp) {
        gpt_add_coll(b, "ln1.allgather", l, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, a->ln1, a->ln1_full, s->tp_comm, GPT_S_TP, 0);
        ln1 = a->ln1_full;
    }
    gpt_add_matmul(b, "qkv", l, sp_ch, a->qkv, ln1, w->attn_w, w->attn_b, N, C, 3 * s->Cl);
    gpt_add_attention(b, "attn", l, ch, a->atty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    gpt_add_matmul(b, "proj", l, ch, a->proj, a->atty, w->proj_w, NULL, N, s->Cl, C);
    if (sp) {
        gpt_add_coll(b, "proj.reduce_scatter", l, CC_COLL_REDUCE_SCATTER, CC_REDUCE_SUM, a->proj, a->proj_rs, s->tp_comm, GPT_S_TP, 0);
        proj = a->proj_rs;
    }
    else if (s->TP > 1) gpt_add_allreduce(b, "proj.allreduce", l, a->proj, CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
    gpt_add_residual(b, "resid1", l, ch, a->x1, mb->x[l], proj, w->proj_b, Ns, C);
    gpt_add_layernorm(b, "ln2", l, sp_ch, a->ln2, a->ln2_mean, a->ln2_rstd, a->x1, w->ln2_w, w->ln2_b, Ns, C);
    if (sp) {
        gpt_add_coll(b, "ln2.allgather", l, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, a->ln2, a->ln2_full, s->tp_comm, GPT_S_TP, 0);
        ln2 = a->ln2_full;
    }
    gpt_add_matmul_gelu(b, "fc", l, sp_ch, a->fch, a->fch_gelu, ln2, w->fc_w, w->fc_b, N, C, s->F);
    gpt_add_matmul(b, "fcproj", l, ch, a->fcproj, a->fch_gelu, w->fcproj_w, NULL, N, s->F, C);
    if (sp) {
        gpt_add_coll(b, "fcproj.reduce_scatter", l, CC_COLL_REDUCE_SCATTER, CC_REDUCE_SUM, a->fcproj, a->fcproj_rs, s->tp_comm,
                     GPT_S_TP, 0);
        fcproj = a->fcproj_rs;
    }
    else if (s->TP > 1) gpt_add_allreduce(b, "fcproj.allreduce", l, a->fcproj, CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
    gpt_add_residual(b, "resid2", l, ch, mb->x[l + 1], a->x1, fcproj, w->fcproj_b, Ns, C);
}

/* Block l's backward pass: for each matmul the weight gradient, then the
   input gradient; an all-reduce after each column-parallel one (with SP a
   reduce-scatter, and an all-gather of the gradient the row-parallel
   projections need). */
GPT_STEP_FN void gpt_backward_layer(gpt_builder* b, const gpt_micro* mb, int l) {
    const gpt_model* s = b->s;
    const gpt_layer_weights* w = &s->w.h[l];
    const gpt_layer_weights* dw = &s->dw.h[l];
    const gpt_layer_acts* a = &mb->acts[l];
    int N = s->N, Ns = s->Ns, C = s->cfg.C, T = s->cfg.T, sp = s->SP, ch = GPT_IN_CHUNKS, sp_ch = sp ? GPT_IN_CHUNKS : GPT_WHOLE;
    const gpt_tensor *dy = mb->dx[l + 1], *dx1 = a->dx1, *ln1 = sp ? a->ln1_full : a->ln1, *ln2 = sp ? a->ln2_full : a->ln2;
    const gpt_tensor *dln2 = a->dln2, *dln1 = a->dln1;
    /* the weight gradients sum over rows (the layer norms', and with SP the
       matmuls' that read an all-gathered tensor): in chunks, each chunk
       adds to what the one before stored, which in bfloat16 would round
       once per chunk; so with bfloat16 they run whole */
    int ln_chunks = s->bf16 ? GPT_WHOLE : GPT_IN_CHUNKS, w_chunks = s->bf16 ? GPT_WHOLE : sp_ch;
    gpt_gather_params(b, gpt_block_param0(s, l), GPT_PARAMS_PER_BLOCK);
    if (sp) {
        gpt_add_coll(b, "dy.allgather", l, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, mb->dx[l + 1], a->dy_full, s->tp_comm, GPT_S_TP, 0);
        dy = a->dy_full;
    }
    gpt_add_matmul_bwd_w(b, "fcproj.bwd_w", l, w_chunks, dw->fcproj_w, dw->fcproj_b, dy, a->fch_gelu, N, s->F, C);
    gpt_add_matmul_gelu_bwd_x(b, "fcproj.bwd_x", l, sp_ch, a->dfch, dy, w->fcproj_w, a->fch, N, s->F, C);
    gpt_add_matmul_bwd_w(b, "fc.bwd_w", l, w_chunks, dw->fc_w, dw->fc_b, a->dfch, ln2, N, C, s->F);
    gpt_add_matmul_bwd_x(b, "fc.bwd_x", l, ch, a->dln2, a->dfch, w->fc_w, N, C, s->F);
    if (sp) {
        gpt_add_coll(b, "fc.bwd.reduce_scatter", l, CC_COLL_REDUCE_SCATTER, CC_REDUCE_SUM, a->dln2, a->dln2_rs, s->tp_comm, GPT_S_TP, 0);
        dln2 = a->dln2_rs;
    }
    else if (s->TP > 1) gpt_add_allreduce(b, "fc.bwd.allreduce", l, a->dln2, CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
    gpt_add_layernorm_bwd(b, "ln2.bwd", l, ln_chunks, a->dx1, dw->ln2_w, dw->ln2_b, mb->dx[l + 1], dln2, a->x1, a->ln2_mean,
                      a->ln2_rstd, w->ln2_w, Ns, C);
    if (sp) {
        gpt_add_coll(b, "dx1.allgather", l, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, a->dx1, a->dx1_full, s->tp_comm, GPT_S_TP, 0);
        dx1 = a->dx1_full;
    }
    gpt_add_matmul_bwd_w(b, "proj.bwd_w", l, w_chunks, dw->proj_w, dw->proj_b, dx1, a->atty, N, s->Cl, C);
    gpt_add_matmul_bwd_x(b, "proj.bwd_x", l, sp_ch, a->datty, dx1, w->proj_w, N, s->Cl, C);
    gpt_add_attention_bwd(b, "attn.bwd", l, ch, a->dqkv, a->datty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    gpt_add_matmul_bwd_w(b, "qkv.bwd_w", l, w_chunks, dw->attn_w, dw->attn_b, a->dqkv, ln1, N, C, 3 * s->Cl);
    gpt_add_matmul_bwd_x(b, "qkv.bwd_x", l, ch, a->dln1, a->dqkv, w->attn_w, N, C, 3 * s->Cl);
    if (sp) {
        gpt_add_coll(b, "qkv.bwd.reduce_scatter", l, CC_COLL_REDUCE_SCATTER, CC_REDUCE_SUM, a->dln1, a->dln1_rs, s->tp_comm, GPT_S_TP, 0);
        dln1 = a->dln1_rs;
    }
    else if (s->TP > 1) gpt_add_allreduce(b, "qkv.bwd.allreduce", l, a->dln1, CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
    gpt_add_layernorm_bwd(b, "ln1.bwd", l, ln_chunks, mb->dx[l], dw->ln1_w, dw->ln1_b, a->dx1, dln1,
                      mb->x[l], a->ln1_mean, a->ln1_rstd, w->ln1_w, Ns, C);
}

/* A no-stream op standing for the other stages (see the top of this file). */
GPT_STEP_FN void gpt_add_other_stages(gpt_builder* b, const char* name, int which, const cc_op* after) {
    gpt_op_args a;
    memset(&a, 0, sizeof a);
    a.kind = -1;
    b->other_stages = which;
    gpt_add_op(b, name, -1, CC_NO_STREAM, &a, GPT_WHOLE, NULL, after, after ? 1 : 0);
}

/* A RECV into t from stage `from` on the "pp" stream, after op `after`. */
GPT_STEP_FN void gpt_add_recv(gpt_builder* b, const char* name, gpt_tensor* t, int from, const cc_op* after) {
    cc_collective co;
    gpt_op_args a;
    memset(&co, 0, sizeof co);
    memset(&a, 0, sizeof a);
    a.out[0] = t;
    co.kind = CC_COLL_RECV;
    co.dtype = t->dtype;
    co.n_elems = gpt_tensor_elems(t);
    co.comm = b->s->pp_comm;
    co.peer = from;
    co.recv_buf = t->p;
    gpt_add_op(b, name, -1, GPT_S_PP, &a, GPT_WHOLE, &co, after, 1);
}

/* Micro-batch m's forward pass on the stage, with the loss (with train,
   also its gradient) on the last; the boundary activations received and
   sent. */
GPT_STEP_FN void gpt_forward_micro(gpt_builder* b, int m, int train) {
    const gpt_model* s = b->s;
    const gpt_model_weights* w = &s->w;
    const gpt_micro* mb = &s->mb[m];
    int l, Ns = s->Ns, C = s->cfg.C, L = s->Ls;
    b->micro = m;
    b->phase = GPT_PHASE_FORWARD;
    if (s->ZERO == 3) memset(b->gathered, 0, (size_t)s->nb);
    if (s->first_stage) {
        gpt_gather_params(b, 0, 2);
        gpt_add_embed(b, "embed", mb->x[0], w->wte, w->wpe, mb->inputs, Ns, s->cfg.T, C);
    } else {
        cc_op prev;
        gpt_add_other_stages(b, "pp.prev_stages", GPT_OTHER_EARLIER, NULL);
        prev = b->last;
        if (b->rc != CC_OK) return;
        gpt_add_recv(b, "pp.recv_act", mb->x[0], s->pp_rank - 1, &prev);
    }
    for (l = 0; l < L; l++) gpt_forward_layer(b, mb, l);
    if (s->last_stage) {
        gpt_gather_params(b, gpt_block_param0(s, L), 2);
        gpt_gather_params(b, gpt_head_param(s), 1);
        gpt_add_layernorm(b, "lnf", -1, GPT_WHOLE, mb->lnf, mb->lnf_mean, mb->lnf_rstd, mb->x[L], w->lnf_w, w->lnf_b, Ns, C);
        gpt_add_matmul(b, "head", -1, GPT_WHOLE, mb->logits, mb->lnf, w->head, NULL, Ns, C, s->cfg.V);
        gpt_add_crossentropy(b, "loss", mb->loss, train ? mb->dlogits : NULL, mb->logits, mb->targets, Ns, s->cfg.V);
        if (s->SP) gpt_add_allreduce(b, "loss.tp_allreduce", -1, mb->loss, CC_REDUCE_AVG, s->tp_comm, GPT_S_TP);
        if (s->DP > 1) gpt_add_allreduce(b, "loss.allreduce", -1, mb->loss, CC_REDUCE_AVG, s->dp_comm, GPT_S_DP);
    } else {
        gpt_add_coll(b, "pp.send_act", -1, CC_COLL_SEND, CC_REDUCE_SUM, mb->x[L], NULL, s->pp_comm, GPT_S_PP, s->pp_rank + 1);
        if (train) {
            cc_op sent = b->last;
            if (b->rc != CC_OK) return;
            gpt_add_other_stages(b, "pp.other_stages", GPT_OTHER_LATER, &sent);
            b->other[m] = b->last;
        }
    }
}

/* Micro-batch m's backward pass on the stage. */
GPT_STEP_FN void gpt_backward_micro(gpt_builder* b, int m) {
    const gpt_model* s = b->s;
    const gpt_model_weights *w = &s->w, *dw = &s->dw;
    const gpt_micro* mb = &s->mb[m];
    int l, Ns = s->Ns, C = s->cfg.C, L = s->Ls;
    b->micro = m;
    b->phase = GPT_PHASE_BACKWARD;
    b->track = m == s->M - 1;
    if (s->ZERO == 3) memset(b->gathered, 0, (size_t)s->nb);
    if (s->last_stage) {
        gpt_gather_params(b, gpt_block_param0(s, L), 2);
        gpt_gather_params(b, gpt_head_param(s), 1);
        gpt_add_matmul_bwd_w(b, "head.bwd_w", -1, GPT_WHOLE, dw->head, NULL, mb->dlogits, mb->lnf, Ns, C, s->cfg.V);
        gpt_add_matmul_bwd_x(b, "head.bwd_x", -1, GPT_WHOLE, mb->dlnf, mb->dlogits, w->head, Ns, C, s->cfg.V);
        /* with SP it writes what the last block's backward all-gathers first */
        gpt_add_layernorm_bwd(b, "lnf.bwd", -1, s->SP && !s->bf16 ? GPT_IN_CHUNKS : GPT_WHOLE, mb->dx[L], dw->lnf_w, dw->lnf_b, NULL,
                              mb->dlnf, mb->x[L], mb->lnf_mean, mb->lnf_rstd, w->lnf_w, Ns, C);
    } else gpt_add_recv(b, "pp.recv_grad", mb->dx[L], s->pp_rank + 1, &b->other[m]);
    for (l = L - 1; l >= 0; l--) gpt_backward_layer(b, mb, l);
    if (s->first_stage)
        gpt_add_embed_bwd(b, "embed.bwd", dw->wte, dw->wpe, mb->dx[0], mb->inputs, s->Bl, s->cfg.T, C, Ns);
    else gpt_add_coll(b, "pp.send_grad", -1, CC_COLL_SEND, CC_REDUCE_SUM, mb->dx[0], NULL, s->pp_comm, GPT_S_PP, s->pp_rank - 1);
    b->track = 0;
}

/* Clipping by the global norm (each gradient's squared norm, or each
   shard's, into its own slot of sumsq; the sum over the TP group, over the
   DP group with ZeRO, over the stages), then AdamW; ZeRO-1/2 all-gather
   the updated buckets. */
GPT_STEP_FN void gpt_build_update(gpt_builder* b) {
    const gpt_model* s = b->s;
    int p, k;
    char name[64];
    b->phase = GPT_PHASE_UPDATE;
    b->micro = -1;
    if (!s->ZERO)
        for (p = 0; p < s->np; p++) {
            const gpt_pinfo* pi = &s->layout->p[p];
            snprintf(name, sizeof name, "%s.sumsq", pi->name);
            gpt_add_sumsq(b, name, s->sumsq_slot[p], s->grad[p], pi->shard != GPT_SH_REPL || s->tp_rank == 0);
        }
    else
        for (k = 0; k < s->nb; k++) {   /* a bucket of replicated parameters only: counted on TP rank 0 */
            int q, split = 0;
            for (q = s->bucket[k].first; q < s->bucket[k].first + s->bucket[k].n; q++) split |= s->layout->p[q].shard != GPT_SH_REPL;
            gpt_bucket_name(s, k, "sumsq", name, sizeof name);
            gpt_about_bucket(b, k);
            gpt_add_sumsq(b, name, s->sumsq_slot[k], s->grad_shard[k], split || s->tp_rank == 0);
        }
    gpt_add_grad_norm(b, "grad_norm", s->normsq, s->sumsq);
    if (s->TP > 1) gpt_add_allreduce(b, "grad_norm.allreduce", -1, s->normsq, CC_REDUCE_SUM, s->tp_comm, GPT_S_TP);
    if (s->ZERO) gpt_add_allreduce(b, "grad_norm.dp_allreduce", -1, s->normsq, CC_REDUCE_SUM, s->dp_comm, GPT_S_DP);
    if (s->PP > 1) gpt_add_allreduce(b, "grad_norm.pp_allreduce", -1, s->normsq, CC_REDUCE_SUM, s->pp_comm, GPT_S_PP);
    if (!s->ZERO)
        for (p = 0; p < s->np; p++) {
            const gpt_pinfo* pi = &s->layout->p[p];
            snprintf(name, sizeof name, "%s.adamw", pi->name);
            gpt_add_adamw(b, name, s->param[p], s->adam_m[p], s->adam_v[p], s->grad[p], s->normsq, pi->decay ? 0.1f : 0.0f, s->step_t);
        }
    else {
        for (k = 0; k < s->nb; k++) {
            gpt_bucket_name(s, k, "adamw", name, sizeof name);
            gpt_about_bucket(b, k);
            gpt_add_adamw(b, name, s->param_shard[k], s->adam_m[k], s->adam_v[k], s->grad_shard[k], s->normsq,
                      s->stage.p[s->bucket[k].first].decay ? 0.1f : 0.0f, s->step_t);
        }
        if (s->ZERO < 3)
            for (k = 0; k < s->nb; k++) {
                gpt_bucket_name(s, k, "param.allgather", name, sizeof name);
                gpt_about_bucket(b, k);
                gpt_add_coll(b, name, -1, CC_COLL_ALL_GATHER, CC_REDUCE_SUM, s->param_shard[k], s->bucket_param[k], s->dp_comm,
                             GPT_S_DP, 0);
            }
    }
}

/* The first compute op added at or after op index from (-1: none), and
   the last one before op index to. */
GPT_STEP_FN int gpt_first_compute(const gpt_builder* b, int from, int to) {
    int i;
    for (i = from; i < to; i++) if (b->store->info[i].kind >= 0) return i;
    return -1;
}
GPT_STEP_FN int gpt_last_compute(const gpt_builder* b, int from, int to) {
    int i;
    for (i = to - 1; i >= from; i--) if (b->store->info[i].kind >= 0) return i;
    return -1;
}

/* Micro-batch m's training forward (backward); the index of its first
   (last) compute op, or -1. */
GPT_STEP_FN int gpt_forward_at(gpt_builder* b, int m) {
    int at = cc_graph_n_ops(b->g);
    gpt_forward_micro(b, m, 1);
    return b->rc == CC_OK ? gpt_first_compute(b, at, cc_graph_n_ops(b->g)) : -1;
}
GPT_STEP_FN int gpt_backward_at(gpt_builder* b, int m) {
    int at = cc_graph_n_ops(b->g);
    gpt_backward_micro(b, m);
    return b->rc == CC_OK ? gpt_last_compute(b, at, cc_graph_n_ops(b->g)) : -1;
}

/* The micro-batches in 1F1B order: min(pp - 1 - stage, M) forwards, then
   a forward and a backward in turn, then the remaining backwards; the
   gradient reductions left for after the backward, in parameter order.
   1F1B's memory bound is an edge: micro-batch m's forward (m > warm-up)
   starts after micro-batch m - warm-up - 1's backward compute is done, so
   a scheduler may move communication but never holds more micro-batches'
   activations than 1F1B does (with pp = 1: accumulation, one at a time). */
GPT_STEP_FN void gpt_build_train(gpt_builder* b) {
    const gpt_model* s = b->s;
    int warm = s->PP - 1 - s->pp_rank, f = 0, k = 0, p, m;
    int *f_first = (int*)malloc(sizeof(int) * (size_t)s->M), *b_last = (int*)malloc(sizeof(int) * (size_t)s->M);
    if (!f_first || !b_last) {
        if (b->rc == CC_OK) b->rc = CC_ERR_OUT_OF_MEMORY;
        free(f_first);
        free(b_last);
        return;
    }
    if (warm > s->M) warm = s->M;
    while (f < warm) { f_first[f] = gpt_forward_at(b, f); f++; }
    while (f < s->M) { f_first[f] = gpt_forward_at(b, f); f++; b_last[k] = gpt_backward_at(b, k); k++; }
    while (k < s->M) { b_last[k] = gpt_backward_at(b, k); k++; }
    for (m = warm + 1; m < s->M && b->rc == CC_OK; m++)
        if (b_last[m - warm - 1] >= 0 && f_first[m] >= 0)
            b->rc = cc_graph_add_dep(b->g, cc_graph_op(b->g, b_last[m - warm - 1]), cc_graph_op(b->g, f_first[m]));
    free(f_first);
    free(b_last);
    b->micro = -1;
    if (s->DP > 1 && s->grad_sync == GPT_SYNC_AFTER_BACKWARD)
        for (p = 0; p < s->np; p++)
            if (s->bucket[s->bucket_of[p]].first == p) gpt_reduce_bucket(b, s->bucket_of[p]);
    gpt_build_update(b);
}

/* The bytes of g's bound buffers (cc_graph_add_buffer): what a rank holds
   for the whole step, where the transient ones come and go. */
GPT_STEP_FN uint64_t gpt_bound_bytes(const cc_graph* g) {
    int i, n = cc_graph_n_buffers(g);
    uint64_t sum = 0;
    for (i = 0; i < n; i++) {
        cc_buffer b = cc_graph_buffer(g, i);
        if (!cc_buffer_transient(g, b)) sum += cc_buffer_bytes(g, b);
    }
    return sum;
}

/* The training step (train = 1) or the forward passes with the loss (0),
   on the streams compute, tp, dp (and pp with more than one stage); its op
   records and what each op is (info) go to *store. Errors: the context's,
   or the model's `error` (a record the builder refuses). */
GPT_STEP_FN cc_result gpt_build_graph(const gpt_model* s, int train, cc_graph** out, gpt_op_store* store) {
    static const char* const stream_names[] = { "compute", "tp", "dp", "pp" };
    cc_graph_desc gd;
    memset(&gd, 0, sizeof gd);
    gpt_builder b;
    int p, m;
    memset(&b, 0, sizeof b);
    b.s = s;
    b.store = store;
    b.kernels = s->kernels;
    b.fingerprint = GPT_FNV_START;
    b.bucket = -1; b.first_param = -1;
    gd.n_streams = s->PP > 1 ? 4 : 3;
    gd.stream_names = stream_names;
    b.buf = (cc_buffer*)calloc((size_t)s->n_tensors + 1, sizeof(cc_buffer));
    b.pending = (int*)calloc((size_t)s->np + (size_t)s->nb + 1, sizeof(int));
    b.gathered = (char*)calloc((size_t)s->nb + 1, 1);
    b.other = (cc_op*)calloc((size_t)s->M, sizeof(cc_op));
    b.transients = s->transients && train;
    if (b.transients) {
        b.bucket_of_t = (int*)malloc(sizeof(int) * ((size_t)s->n_tensors + 1));
        b.gbuf = (cc_buffer*)calloc(2 * (size_t)s->nb + 1, sizeof(cc_buffer));
        b.users = (int**)calloc((size_t)s->nb + 1, sizeof(int*));
        b.n_users = (int*)calloc(2 * (size_t)s->nb + 1, sizeof(int));
        if (!b.bucket_of_t || !b.gbuf || !b.users || !b.n_users) b.rc = CC_ERR_OUT_OF_MEMORY;
        else {
            b.gbuf_unread = b.gbuf + s->nb;
            b.cap_users = b.n_users + s->nb;
            for (p = 0; p < s->n_tensors; p++) b.bucket_of_t[p] = -1;
            if (s->ZERO == 3) {
                for (p = 0; p < s->np; p++) b.bucket_of_t[s->param[p]->id] = s->bucket_of[p];
                for (p = 0; p < s->nb; p++) b.bucket_of_t[s->bucket_param[p]->id] = p;
            }
        }
        gpt_fingerprint_str(&b, "transients");
    }
    if (!b.buf || !b.pending || !b.gathered || !b.other) b.rc = CC_ERR_OUT_OF_MEMORY;
    else if (b.rc == CC_OK) {
        b.bucket_left = b.pending + s->np;
        for (p = 0; p < s->np; p++) {
            b.pending[p] = 1;
            b.bucket_left[s->bucket_of[p]]++;
        }
        if (s->first_stage && s->last_stage) b.pending[0] = 2;   /* wte: the head's gradient, then the embedding's */
        b.rc = cc_graph_create(s->ctx, &gd, &b.g);
    }
    if (train) gpt_build_train(&b);
    else
        for (m = 0; m < s->M; m++) gpt_forward_micro(&b, m, 0);
    if (b.rc == CC_OK) b.rc = cc_graph_validate(b.g);
    free(b.buf); free(b.pending); free(b.gathered); free(b.other);
    if (b.users)
        for (p = 0; p < s->nb; p++) free(b.users[p]);
    free(b.users); free(b.n_users); free(b.gbuf); free(b.bucket_of_t);
    if (b.rc != CC_OK) {
        cc_graph_destroy(b.g);
        return b.rc;
    }
    store->fingerprint = b.fingerprint;
    *out = b.g;
    return CC_OK;
}

#endif /* GPT_STEP_H_INCLUDED */
