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
   all-reduce (with --sp: each all-gather and reduce-scatter) have split
   rules (gpt_step.h's gpt_op_split: rows, a matmul's columns and
   reduction) and chunk kernels for each axis (gpt_cpu_ops.h), so it cuts
   them and the collective into pieces that overlap; the
   gradients lie back to back in memory, so it can fuse their all-reduces
   into buckets. With --exact on (the default) decomposition uses only
   splits whose chunks compute each output whole (rows, columns), and
   fusion keeps every sum in the same order: the losses stay bit-identical
   to program order's. With --exact off it may also split into partial
   sums, equal within rounding.

   What does not depend on where the kernels run is shared with the CUDA
   trainer (train_gpt.cu): configuration, options, data, files and a
   rank's step description in gpt_common.h (the step itself, its tensors
   and graph builder, in ../steps/gpt_step.h); a rank's life
   (gpt_rank_main: build the model and the step, let the library optimise
   the step, train, evaluate, sample) and the host's side in gpt_train.h.
   Here are only the table of the CPU kernels as ops (cpu_kernels, from
   gpt_kernels.h and gpt_cpu_ops.h) and main,
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
#include "gpt_cpu_ops.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* This trainer's kernels, which the graph builder (../steps/gpt_step.h)
   gives the ops; its tensors are in the host's memory. */
static const gpt_kernel_table cpu_kernels = {
    GPT_CPU_OPS,
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
