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
   is a record (gpt_op_args) of one kernel and the tensors it reads and writes:
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
   all-reduce can run in chunks of token rows (gpt_op_chunk: the rows of the
   chunk's regions), so it cuts them and the all-reduce into pieces that
   overlap; the gradients lie back to back in memory, so it can fuse their
   all-reduces into buckets. Both keep every sum in the same order: the
   losses stay bit-identical to program order's.

   What does not depend on where the kernels run is shared with the CUDA
   trainer (train_gpt.cu): configuration, options, data, files and a
   rank's step description in gpt_common.h (the step itself, its tensors
   and graph builder, in ../steps/gpt_step.h); a rank's life
   (gpt_rank_main: build the model and the step, let the library optimise
   the step, train, evaluate, sample) and the host's side in gpt_train.h.
   Here are only the CPU kernels as ops (the table cpu_kernels) and main,
   which starts the ranks: threads of the library's in-process world on its
   CPU backend; built with GPT_MPI (by mpicc: build/train_gpt_mpi), one
   rank per process under mpirun, on MPI communicators.

   Run with --help for the options. */
#if defined(__linux__)
#define _GNU_SOURCE   /* sched_setaffinity and CPU_SET, for --pin */
#else
#define _POSIX_C_SOURCE 200809L
#endif
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "gpt_kernels.h"
#include "gpt_common.h"
#include "gpt_train.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* ---- the kernels on the CPU ---------------------------------------------------- */
/* Each kernel as an op: what in[] and out[] hold, in the record's sizes.
   Ops that the library may cut into chunks (gpt_add_op's `chunks`) must work
   row by row: layernorm, matmul, matmul_gelu, residual, matmul_bwd_x,
   layernorm_bwd. */

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
/* in: x [N][C], w [OC][C], bias [OC] or NULL; out: y [N][OC] */
static void run_matmul(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul(v->out[0], v->in[0], v->in[1], v->in[2], v->N, a->C, a->OC);
}
/* in: x [N][C], w [OC][C], bias [OC]; out: h [N][OC] (x w^T + bias), u [N][OC] (gelu of h) */
static void run_matmul_gelu(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul(v->out[0], v->in[0], v->in[1], v->in[2], v->N, a->C, a->OC);
    k_gelu(v->out[1], v->out[0], (size_t)v->N * a->OC);
}
/* in: qkv [B T][3 NH HS] (q, k, v blocks; head h at columns h HS of each);
   out: y [B T][NH HS], att [B][NH][T][T] */
static void run_attention(const gpt_op_args* a, const gpt_op_view* v) {
    k_attention(v->out[0], v->out[1], v->in[0], a->B, a->T, a->NH, a->HS);
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
/* in: dy [N][OC], x [N][C]; out: dw [OC][C], dbias [OC] or NULL */
static void run_matmul_bwd_w(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul_bwd_weight(v->out[0], v->out[1], v->in[0], v->in[1], v->N, a->C, a->OC);
}
/* in: dy [N][OC], w [OC][C]; out: dx [N][C] */
static void run_matmul_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul_bwd_input(v->out[0], v->in[0], v->in[1], v->N, a->C, a->OC);
}
/* in: dy [N][OC], w [OC][C], h [N][C] (GELU's input); out: dh [N][C] */
static void run_matmul_gelu_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    k_matmul_bwd_input(v->out[0], v->in[0], v->in[1], v->N, a->C, a->OC);
    k_gelu_bwd(v->out[0], v->out[0], v->in[2], (size_t)v->N * a->C);
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
    k_attention_bwd(v->out[0], v->in[0], v->in[1], v->in[2], a->B, a->T, a->NH, a->HS);
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


/* This trainer's kernels, which the graph builder (../steps/gpt_step.h)
   gives the ops; its tensors are in the host's memory. */
static const gpt_kernel_table cpu_kernels = {
    {
        [GPT_OP_EMBED] = run_embed, [GPT_OP_LAYERNORM] = run_layernorm, [GPT_OP_MATMUL] = run_matmul,
        [GPT_OP_MATMUL_GELU] = run_matmul_gelu, [GPT_OP_ATTENTION] = run_attention, [GPT_OP_RESIDUAL] = run_residual,
        [GPT_OP_CROSSENTROPY] = run_crossentropy, [GPT_OP_MATMUL_BWD_W] = run_matmul_bwd_w,
        [GPT_OP_MATMUL_BWD_X] = run_matmul_bwd_x, [GPT_OP_MATMUL_GELU_BWD_X] = run_matmul_gelu_bwd_x,
        [GPT_OP_LAYERNORM_BWD] = run_layernorm_bwd, [GPT_OP_ATTENTION_BWD] = run_attention_bwd,
        [GPT_OP_EMBED_BWD] = run_embed_bwd, [GPT_OP_SUMSQ] = run_sumsq, [GPT_OP_GRAD_NORM] = run_grad_norm,
        [GPT_OP_ADAMW] = run_adamw,
    },
    host_alloc_zeroed,   /* gpt_train.h's host memory */
    free,
    host_copy,
    host_copy,
    NULL,
};

#ifndef GPT_MPI
static const gpt_trainer cpu_trainer = { "train_gpt", &cpu_kernels, 0, 0, 1, 0 };

/* ---- the ranks ------------------------------------------------------------------ */
/* A rank of the in-process world: the world's context and communicator,
   the CPU backend, and the rank's life (gpt_rank_main). */
static cc_result cpu_rank(cc_rank* rank, void* user) {
    cc_backend be;
    cc_result rc = cc_cpu_backend_create(rank, &be);
    if (rc != CC_OK) return rc;
    rc = gpt_rank_main((shared*)user, cc_rank_context(rank), cc_rank_world_comm(rank), &be, cc_rank_index(rank));
    cc_backend_destroy(&be);
    return rc;
}

/* --pin: every thread of rank r (its own and its streams' workers) on
   the r-th core this process may use, cycling. Ranks of one process share
   the cores; left to the operating system, their threads move between
   cores and a step's time jumps between regimes for dozens of steps (on
   2 cores, TP2 x DP1: 21-22 ms or 33-38 ms for the same step), so no
   profile predicts the steps that follow it. Kept apart, each rank's
   steps run alike. Linux only. */
#if defined(__linux__)
#include <sched.h>
static cpu_set_t pin_allowed;   /* the cores the process may use, read before the ranks start */
static void pin_thread(int rank, int stream, void* user) {
    int i, k = 0, n = CPU_COUNT(&pin_allowed);
    cpu_set_t one;
    (void)stream; (void)user;
    if (n <= 0) return;
    for (i = 0; i < CPU_SETSIZE; i++)
        if (CPU_ISSET(i, &pin_allowed) && k++ == rank % n) {
            CPU_ZERO(&one);
            CPU_SET(i, &one);
            (void)sched_setaffinity(0, sizeof one, &one);   /* best effort: a refusal leaves the thread where it was */
            return;
        }
}
static int pin_prepare(void) { CPU_ZERO(&pin_allowed); return sched_getaffinity(0, sizeof pin_allowed, &pin_allowed) == 0; }
#else
static void pin_thread(int rank, int stream, void* user) { (void)rank; (void)stream; (void)user; }
static int pin_prepare(void) { return 0; }
#endif

/* The in-process world: TP x DP ranks as threads, the TP group on one
   node, over the emulated link (intra, inter: its links, filled in here). */
static cc_world_desc world_desc(const options* o, cc_link* intra, cc_link* inter) {
    cc_world_desc wd = {0};
    wd.n_ranks = o->tp * o->dp;
    wd.ranks_per_node = o->tp;
    wd.emulate_link = o->emulate;
    inter->latency_us = o->link_alpha_us;
    inter->us_per_byte = o->link_us_per_kib / 1024.0;
    intra->latency_us = o->link_alpha_us / 2;
    intra->us_per_byte = o->link_us_per_kib / 4 / 1024.0;
    wd.inter_node = inter;
    wd.intra_node = intra;
    wd.timeout_s = 120;
    if (o->pin && pin_prepare()) wd.thread_start = pin_thread;
    return wd;
}

/* ---- main ----------------------------------------------------------------------- */
int main(int argc, char** argv) {
    shared* sh = NULL;
    cc_world_desc wd;
    cc_link intra = { 0 }, inter = { 0 };
    cc_world* world = NULL;
    cc_result r;
    int status = gpt_parse(argc, argv, &cpu_trainer, &sh);   /* the options */
    if (!sh) return status;
    status = gpt_load(sh);                                    /* the model and its data */
    if (status == 0 && sh->o.graph_fingerprint)
        status = gpt_fingerprint_ranks(sh);                   /* only the ranks' graphs: nothing trains */
    else if (status == 0) {
        /* the ranks: threads of the in-process world, each running
           gpt_rank_main on the CPU backend (cpu_rank) */
        wd = world_desc(&sh->o, &intra, &inter);
        if (cc_world_create(sh->ctx, &wd, &world) != CC_OK) {
            fprintf(stderr, "train_gpt: %s\n", cc_last_error(sh->ctx));
            status = 1;
        } else {
            r = cc_world_run(world, cpu_rank, sh);
            if (r != CC_OK) {
                const char* m = cc_world_error(world);
                fprintf(stderr, "train_gpt: %s\n", m && *m ? m : cc_result_description(r));
                status = 1;
            }
            cc_world_destroy(world);
        }
    }
    status = gpt_report(sh, status);                          /* the report and the files */
    gpt_free(sh);
    return status;
}
#else
/* ---- a process per rank (build/train_gpt_mpi: GPT_MPI, built by mpicc) ------------- */
/* Under mpirun -np TP*DP: each process is world rank MPI_COMM_WORLD's rank,
   on the CPU backend made from its context, its communicators MPI's
   (concerto_mpi.h: reductions in rank order, so the losses are the
   in-process world's bit for bit); rank 0 prints and writes the files. */
#include "../../concerto_mpi.h"

static const gpt_trainer mpi_trainer = { "train_gpt_mpi", &cpu_kernels, 0, 0, 0, 1 };

/* MPI, this process's context, world rank (*me) and communicator of all
   ranks (*world); whether this process speaks (world rank 0 only). 0, or
   the exit status. */
static int mpi_start(shared* sh, cc_context** ctx, cc_comm** world, int* me) {
    cc_mpi_desc md = {0};
    int size = 0, want = sh->o.tp * sh->o.dp;
    if (cc_context_create(NULL, ctx) != CC_OK) {
        fprintf(stderr, "train_gpt_mpi: cannot create a context\n");
        return 1;
    }
    if (cc_mpi_init(*ctx, NULL, NULL) != CC_OK) {
        fprintf(stderr, "train_gpt_mpi: %s\n", cc_last_error(*ctx));
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sh->quiet = *me != 0;
    if (size != want) {
        if (!sh->quiet)
            fprintf(stderr, "train_gpt_mpi: TP %d x DP %d is %d ranks: start it with mpirun -np %d (this job has %d processes)\n",
                    sh->o.tp, sh->o.dp, want, want, size);
        return 2;
    }
    md.name = "world";
    md.timeout_s = 120;
    if (cc_mpi_comm_create(*ctx, MPI_COMM_WORLD, &md, world) != CC_OK) {
        fprintf(stderr, "train_gpt_mpi: rank %d: %s\n", *me, cc_last_error(*ctx));
        return 1;
    }
    return 0;
}

/* This process's rank: the CPU backend, and the rank's life
   (gpt_rank_main). A failure ends the job: peers may be waiting in a
   collective this rank will not issue. 0, or the exit status. */
static int mpi_rank(shared* sh, cc_context* ctx, cc_comm* world, int me) {
    cc_backend be;
    cc_result rc = cc_cpu_backend_create_ctx(ctx, &be);
    if (rc == CC_OK) {
        rc = gpt_rank_main(sh, ctx, world, &be, me);
        cc_backend_destroy(&be);
    }
    if (rc != CC_OK) {
        const char* m = cc_last_error(ctx);
        fprintf(stderr, "train_gpt_mpi: rank %d: %s\n", me, m && *m ? m : cc_result_description(rc));
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return 1;
    }
    return 0;
}

static void mpi_finish(cc_context* ctx, cc_comm* world) {
    int inited = 0;
    cc_comm_destroy(world);
    MPI_Initialized(&inited);
    if (inited) MPI_Finalize();
    cc_context_destroy(ctx);
}

/* ---- main ----------------------------------------------------------------------- */
int main(int argc, char** argv) {
    shared* sh = NULL;
    cc_context* ctx = NULL;
    cc_comm* world = NULL;
    int me = 0;
    int status = gpt_parse(argc, argv, &mpi_trainer, &sh);   /* the options */
    if (!sh) return status;
    status = mpi_start(sh, &ctx, &world, &me);                /* MPI; only world rank 0 speaks */
    if (status == 0) status = gpt_load(sh);                   /* the model and its data */
    if (status == 0 && sh->o.graph_fingerprint)
        status = gpt_fingerprint_ranks(sh);                   /* only the ranks' graphs: nothing trains */
    else if (status == 0)
        status = mpi_rank(sh, ctx, world, me);                /* this process's rank */
    status = gpt_report(sh, status);                          /* the report and the files (rank 0) */
    mpi_finish(ctx, world);
    gpt_free(sh);
    return status;
}
#endif
