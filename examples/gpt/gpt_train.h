/* gpt_train.h - the training driver the example GPT trainers share.

   A trainer's main reads, in its own file:
       gpt_parse      the options (the trainer: its name, its kernels)
       gpt_load       the model and its data; says what will run
       ...            the trainer starts its ranks, each runs gpt_rank_main
                      (--graph-fingerprint: gpt_fingerprint_ranks instead
                      builds their graphs, in host memory, and runs nothing)
       gpt_report     what training gave and what the library did; the files
       gpt_free
   and a rank's life is one function, gpt_rank_main (the section "a
   rank's life" below), in straight lines: build the model and the step,
   let the library optimise the step (profile its ops, rewrite it,
   schedule it, plan it, profile it in place, time the two orders side by
   side, and where the rewritten step runs, the step as written in the
   library's order beside it), train, evaluate, sample.

   What differs between trainers is the table of kernels (gpt_trainer, with
   the memory the tensors live in and the copies to and from it) and how
   the ranks start, with their contexts, communicators and backends, which
   each trainer's main does itself:
     train_gpt.c       CPU kernels; ranks are threads of the library's
                       in-process world, on its CPU backend (with GPT_MPI:
                       one rank per process under mpirun, on MPI
                       communicators)
     train_gpt.cu      CUDA kernels and cuBLAS; a thread per GPU, on the
                       CUDA backend (concerto_cuda.h), NCCL communicators
                       (concerto_nccl.h)
   Include after gpt_common.h; every function here is static. The host
   only touches the tensors through the table's copies, so the graph of the
   step, the schedule, the plan and every host-side decision are the same
   objects whatever runs the kernels. */
#ifndef GPT_TRAIN_H_INCLUDED
#define GPT_TRAIN_H_INCLUDED

#ifndef GPT_COMMON_H_INCLUDED
#error "include gpt_common.h first"
#endif

typedef struct shared shared;

/* A trainer: its name, its kernels and what they support. */
typedef struct gpt_trainer {
    const char* program;                   /* in messages */
    const gpt_kernel_table* kernels;
    int bf16;                              /* --dtype bf16 is supported */
    int graphs;                            /* --cuda-graphs is supported */
    int emulates_link;                     /* its collectives run over the emulated link (--link, --latency) */
    /* A process per rank (mpirun): the process's main says whether it
       speaks (shared.quiet = 0 on world rank 0 only: the setup, the report
       and every file) before gpt_load, and runs its rank alone; the final
       parameters and gradients are then summed over all ranks (each
       element has one writer) so that rank 0 holds them. 0 for a process
       that holds every rank. */
    int process_per_rank;
} gpt_trainer;

/* ---- a rank's state ------------------------------------------------------------- */
/* A snapshot holds a copy of every block of the rank's tensors. */
typedef struct snapshot { void** copy; int n; } snapshot;

typedef struct rank_state {
    shared* sh;
    const options* o;
    int me;                                /* world rank */
    gpt_model m;                           /* sizes, tensors, communicators: what the step's graph is built from */
    cc_comm* world_comm;
    /* the step */
    cc_graph* train;                       /* the training step as written (program order) */
    cc_graph* eval;                        /* the forward pass with the loss */
    gpt_op_store train_ops, eval_ops;
    cc_graph *decomposed, *fused;          /* the library's rewrites of train (NULL: off) */
    cc_graph* run;                         /* the step the library's order runs: train, rewritten */
    cc_backend* be;                        /* the trainer's; NULL when only the graphs are built */
    cc_schedule sched;                     /* of run */
    cc_sched_stats sched_stats;            /* the solve of sched */
    cc_plan* plan[3];                      /* by order: 0 program (train), 1 the library's (run); 2 the step as
                                              written in the library's order (plain), where the rewrites ran */
    cc_exec* ex[3];
    cc_schedule plain;                     /* the library's schedule of train, where run is a rewrite of it */
    cc_plan* eval_plan;
    cc_exec* eval_ex;
    snapshot snap;                         /* the state before the first step */
    int *batch_in, *batch_tg;              /* [B][T] the global batch */
    double *op_start, *op_end;             /* [ops] an executed step's timeline */
    double* pred_start[2];                 /* [ops] the predicted starts, by order (0 program: train; 1: run) */
    int program_kept;                      /* the library's order is program order (shared.kept) */
    double wall_ms;                        /* of the last step, from the host */
    uint64_t cap;                          /* the transient bytes the step may hold (--memory-cap less the persistent ones); 0: none */
    int program_fits;                      /* program order's predicted activations fit the cap (always without one) */
    float* host;                           /* [the largest parameter shard, or V] the host's side of a copy */
    cc_exec* checked[3];                   /* --check-step: the executors whose first step ran checked */
} rank_state;

/* Copies between the host and the tensors' memory, through the kernel
   table; a failure is the table's to describe (kernels->error). */
static cc_result to_tensor(const rank_state* s, void* dst, const void* src, size_t n) {
    return s->m.kernels->copy_in(dst, src, n) ? CC_OK : CC_ERR_BACKEND;
}
static cc_result from_tensor(const rank_state* s, void* dst, const void* src, size_t n) {
    return s->m.kernels->copy_out(dst, src, n) ? CC_OK : CC_ERR_BACKEND;
}

static cc_result snap_save(rank_state* s, snapshot* sn) {
    if (!(sn->copy = (void**)calloc((size_t)s->m.n_blocks + 1, sizeof(void*)))) return CC_ERR_OUT_OF_MEMORY;
    for (sn->n = 0; sn->n < s->m.n_blocks; sn->n++) {
        sn->copy[sn->n] = malloc(s->m.block_bytes[sn->n] ? s->m.block_bytes[sn->n] : 1);
        if (!sn->copy[sn->n]) return CC_ERR_OUT_OF_MEMORY;
        if (from_tensor(s, sn->copy[sn->n], s->m.block[sn->n], s->m.block_bytes[sn->n]) != CC_OK) return CC_ERR_BACKEND;
    }
    return CC_OK;
}
static cc_result snap_restore(rank_state* s, const snapshot* sn) {
    int i;
    for (i = 0; i < sn->n; i++)
        if (to_tensor(s, s->m.block[i], sn->copy[i], s->m.block_bytes[i]) != CC_OK) return CC_ERR_BACKEND;
    return CC_OK;
}
static void snap_free(snapshot* sn) {
    int i;
    for (i = 0; i < sn->n; i++) free(sn->copy[i]);
    free(sn->copy);
    sn->copy = NULL;
    sn->n = 0;
}

/* ---- a rank's steps: what gpt_rank_main calls ------------------------------------- */
/* What main sets up for the ranks, and what they hand back (rank 0 unless
   stated). */
struct shared {
    options o;
    gpt_config cfg;
    gpt_model_layout layout;
    dataset data;
    char* text;
    float* init_params;            /* [P] global, unsharded */
    size_t P;
    int steps_done;                /* by the checkpoint loaded */
    const gpt_trainer* tr;         /* the trainer's kernels */
    cc_context* ctx;               /* the host's: the trace, the in-process world's ranks */
    cc_trace* trace;
    float* final_params;           /* [P] written by the ranks of DP rank 0 */
    float* grads0;                 /* [P] the first step's gradient (--dump-grads), same ranks */
    double loss0;
    int passes, pass_order[2];     /* the orders trained, in turn: 0 program, 1 the library's */
    double* losses[2];             /* [steps] per pass */
    double* step_ms[2];            /* [steps] per pass, measured */
    double* exposed_ms[2];
    double pred_ms[2], pred_exposed_ms[2];  /* by order (the library's: what it runs) */
    double pred_sched_ms;          /* the library's schedule, whether it runs or not */
    int in_place;                  /* the predictions are from ops profiled in place (profile_in_place) */
    double alone_ms[2];            /* the first predictions, from ops profiled alone, by order */
    double in_place_ms[2];         /* from ops profiled in place, by order (the library's plan even where kept):
                                      the median of the profiled steps simulated one by one */
    double in_place_mean_ms[2];    /* the same orders simulated from the profile's mean durations */
    int dropped;                   /* the rewrites were dropped: the step as written runs in the library's order */
    int kept;                      /* the library kept program order: 1 its schedule was predicted no faster,
                                      2 its plan measured slower side by side, 3 its plan predicted slower
                                      once each order's ops were profiled in place */
    double pred_rewritten_ms, pred_plain_ms;  /* the scheduled step with its rewrites and as written */
    cc_exec_costs costs;           /* the executor's, as profiled */
    double cal_ms[3], cal_exposed_ms[3];    /* side by side: medians by order (2: the library's order without
                                               its rewrites, where they ran) */
    int cal_plain;                 /* cal_ms[2] was measured */
    int n_ops, n_colls;            /* the step as written */
    cc_rewrite_report dec, fus;    /* what decomposition and fusion did */
    char dec_contexts[2048];       /* the contexts decomposition split, a line each (its report's contexts) */
    int n_ops_run, n_colls_run;    /* the step the library's order runs */
    int moved, n_waits[2];
    double sched_ms, lower_bound_ms;
    double val_loss;
    char sample[4096];
    double train_s;
    int replayed[2];               /* --cuda-graphs on: training steps of each pass that replayed a CUDA graph */
    int n_checked;                 /* --check-step: rank 0's executors whose first step ran checked and passed */
    char graph_why[2][256];        /* and the backend's status after the pass's last step */
    uint64_t persistent;           /* a rank's bound bytes of the training step: parameters, gradients, AdamW state, the batch */
    uint64_t cap;                  /* --memory-cap agreed by the ranks, bytes; 0: none */
    uint64_t peak[2], arena[2];    /* by order: the activations' peak in the predicted step, the plan's arena */
    uint64_t fingerprint[2];       /* --graph-fingerprint: of the training step and of evaluation */
    uint64_t planned[2];           /* the same graphs built with sizes only (gpt_step.h, as a planner builds them) */
    int quiet;                     /* a process that is not world rank 0's: prints and writes nothing */
};

/* Shards of every parameter (or gradient) into a global vector; only the
   ranks of DP rank 0 write, replicated tensors only TP rank 0. */
static cc_result unshard_all(const rank_state* s, gpt_tensor* const* local, float* global) {
    int p;
    if (s->m.dp_rank != 0) return CC_OK;
    for (p = 0; p < s->m.np; p++) {
        const gpt_pinfo* pi = &s->m.layout->p[p];
        if (pi->shard == GPT_SH_REPL && s->m.tp_rank != 0) continue;
        if (from_tensor(s, s->host, local[p]->p, local[p]->bytes) != CC_OK) return CC_ERR_BACKEND;
        if (local[p]->bf16) {                /* widen in place, from the end */
            size_t i = gpt_tensor_elems(local[p]);
            while (i-- > 0) {   /* the i-th 16-bit pattern, read as bytes (not through a uint16_t* of floats) */
                uint16_t h;
                uint32_t u;
                memcpy(&h, (const char*)s->host + 2 * i, sizeof h);
                u = (uint32_t)h << 16;
                memcpy(&s->host[i], &u, sizeof u);
            }
        }
        shard_copy(pi, s->m.TP, s->m.tp_rank, global + pi->offset, s->host, 0);
    }
    return CC_OK;
}

/* ZeRO: each bucket's shards (param_shard or grad_shard) all-gathered
   over the DP group into the bucket (bucket_param or bucket_grad), so
   that every rank holds the whole: ZeRO-3's parameters after the update,
   ZeRO-2 and 3's reduced gradients. */
static cc_result zero_gather(rank_state* s, gpt_tensor* const* shard, gpt_tensor* const* bucket) {
    int k;
    for (k = 0; k < s->m.nb; k++) {
        cc_collective co;
        cc_result rc;
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_GATHER;
        co.dtype = shard[k]->dtype;
        co.n_elems = gpt_tensor_elems(shard[k]);
        co.comm = s->m.dp_comm;
        co.send_buf = shard[k]->p;
        co.recv_buf = bucket[k]->p;
        if ((rc = cc_comm_run(&co)) != CC_OK) return rc;
    }
    return CC_OK;
}

/* This rank's sequences of the global batch of a step (val: of the validation split). */
static cc_result set_batch(rank_state* s, int val, int step) {
    const options* o = s->o;
    /* the rank's rows: its DP rank's sequences, and with sequence
       parallelism its TP rank's part of them */
    size_t first = (size_t)s->m.dp_rank * s->m.N + (s->m.SP ? (size_t)s->m.tp_rank * s->m.Ns : 0);
    make_batch(&s->sh->data, val, o->seed, step, o->batch, s->m.cfg.T, s->batch_in, s->batch_tg);
    if (to_tensor(s, s->m.inputs->p, s->batch_in + first, s->m.inputs->bytes) != CC_OK ||
        to_tensor(s, s->m.targets->p, s->batch_tg + first, s->m.targets->bytes) != CC_OK)
        return CC_ERR_BACKEND;
    return CC_OK;
}

/* AdamW's learning rate and step count for the next step, where its
   kernels read them: in the tensors' memory (a replayed CUDA graph reads
   them there too). */
static cc_result set_step(rank_state* s, double lr, int t) {
    s->m.step.lr = (float)lr;
    s->m.step.t = t;
    return to_tensor(s, s->m.step_t->p, &s->m.step, sizeof s->m.step);
}

/* The training step's activations (and ZeRO-3's gathered parameters) are
   transient buffers, which live in the arena of the executor that runs the
   step, at the offsets its plan fixed: before an executor of the training
   step (of graph g, the step or a rewrite of it) runs, its ops' kernels
   are pointed there (gpt_op_store_place). The forward pass's graph has its
   own records and memory. */
static void place_transients(rank_state* s, cc_exec* x, cc_graph* g) { gpt_op_store_place(&s->train_ops, g, x); }

/* The batch and AdamW's step, then one step of executor x; its wall time
   from the host (what the timeline falls back on when it has no times). A
   kernel's failure (the table's error) fails the step. */
static cc_result exec_step(rank_state* s, cc_exec* x) {
    const char* err;
    double t0;
    cc_result rc;
    if (x != s->eval_ex) place_transients(s, x, x == s->ex[1] ? s->run : s->train);
    if (s->o->check_step && x != s->eval_ex && x != s->checked[0] && x != s->checked[1] && x != s->checked[2]) {
        /* --check-step: this executor's first step, op by op, every write
           checked against the op's regions (the bound buffers told first) */
        t0 = wall_s();
        rc = gpt_op_store_bind(&s->train_ops, x == s->ex[1] ? s->run : s->train, x);
        if (rc == CC_OK) rc = cc_exec_step_checked(x);
        s->wall_ms = (wall_s() - t0) * 1000.0;   /* op by op: slower than a step */
        s->checked[s->checked[0] ? s->checked[1] ? 2 : 1 : 0] = x;
        if (rc == CC_OK && s->me == 0) s->sh->n_checked++;
        if (rc == CC_OK && s->m.kernels->error && (err = s->m.kernels->error()) != NULL) {
            fprintf(stderr, "%s: rank %d: %s\n", s->sh->tr->program, s->me, err);
            rc = CC_ERR_BACKEND;
        }
        return rc;
    }
    t0 = wall_s();
    rc = cc_exec_step(x);
    s->wall_ms = (wall_s() - t0) * 1000.0;
    if (rc == CC_OK && s->m.kernels->error && (err = s->m.kernels->error()) != NULL) {
        fprintf(stderr, "%s: rank %d: %s\n", s->sh->tr->program, s->me, err);
        rc = CC_ERR_BACKEND;
    }
    return rc;
}
static cc_result run_step(rank_state* s, cc_exec* x, int val, int batch, double lr, int t) {
    cc_result rc = set_batch(s, val, batch);
    if (rc == CC_OK) rc = set_step(s, lr, t);
    return rc == CC_OK ? exec_step(s, x) : rc;
}

/* The loss of the last step (the mean over the global batch). */
static cc_result read_loss(rank_state* s, double* loss) {
    float l = 0;
    cc_result rc = from_tensor(s, &l, s->m.loss->p, sizeof l);
    *loss = l;
    return rc;
}

/* Step time (launch to the last op's end) and its exposed communication
   (cc_exposed_comm_us: some collective runs and no compute op does). */
static cc_result measure_step(rank_state* s, cc_exec* x, cc_graph* g, double* step_ms, double* exposed_ms) {
    int i, n = cc_graph_n_ops(g);
    double end = 0, exposed = 0;
    cc_result r = cc_exec_timeline(x, s->op_start, s->op_end);
    if (r != CC_OK) return r;
    if (n > 0 && isnan(s->op_end[0])) {     /* a replayed CUDA graph: no times per op */
        *step_ms = s->wall_ms;
        *exposed_ms = NAN;
        return CC_OK;
    }
    for (i = 0; i < n; i++)
        if (s->op_end[i] > end) end = s->op_end[i];
    *step_ms = end / 1000.0;
    if ((r = cc_exposed_comm_us(s->m.ctx, g, s->op_start, s->op_end, &exposed)) != CC_OK) return r;
    *exposed_ms = exposed / 1000.0;
    return CC_OK;
}

/* The exposed communication of a predicted timeline (the starts, each op
   for its duration), as measure_step defines it. */
static double predicted_exposed(cc_context* ctx, cc_graph* g, const double* start_us) {
    double us = 0;
    return cc_exposed_comm_us(ctx, g, start_us, NULL, &us) == CC_OK ? us / 1000.0 : NAN;
}

/* Durations without measuring (--profile 0): a compute op moves the bytes
   of its regions at 1 GB/s; a collective takes the emulated link's time
   (intra-node for the TP group, inter-node for DP). Deterministic. */
static cc_result model_durations(const rank_state* s, cc_graph* g) {
    const options* o = s->o;
    int i, n = cc_graph_n_ops(g);
    cc_link intra, inter;
    memset(&intra, 0, sizeof intra);
    memset(&inter, 0, sizeof inter);
    intra.latency_us = o->link_alpha_us / 2; intra.us_per_byte = o->link_us_per_kib / 4 / 1024.0;
    inter.latency_us = o->link_alpha_us; inter.us_per_byte = o->link_us_per_kib / 1024.0;
    for (i = 0; i < n; i++) {
        cc_op op = cc_graph_op(g, i);
        int tp = cc_op_demand(g, op, GPT_S_TP);
        double us;
        cc_result r;
        if (cc_op_collective(g, op) && (tp || cc_op_demand(g, op, GPT_S_DP))) {   /* the step's collectives are all-reduces
                                                                                     of the region they write; a copy op of
                                                                                     a fused bucket is costed as compute */
            int nr = tp ? s->m.TP : s->m.DP;
            cc_group_shape grp = { nr, nr };
            if ((r = cc_coll_us(NULL, tp ? &intra : &inter, NULL, 0, CC_COLL_ALL_REDUCE, (uint64_t)cc_op_bytes(g, op, 1), grp,
                                CC_ALGO_FLAT, &us)) != CC_OK)
                return r;
        } else us = (double)(cc_op_bytes(g, op, 0) + cc_op_bytes(g, op, 1)) / 1000.0;
        if ((r = cc_op_set_duration(g, op, us)) != CC_OK) return r;
    }
    return CC_OK;
}

/* Sizes, tensors (holding this rank's shards of the initial parameters),
   communicators, the step's two graphs, the backend. */
static cc_result rank_setup(rank_state* s, shared* sh, const gpt_kernel_table* k, cc_context* ctx, cc_comm* world, int me) {
    const options* o = &sh->o;
    size_t most = (size_t)sh->cfg.V;
    gpt_step_desc d = model_desc(o, &sh->cfg, me);
    int p;
    cc_result rc;
    s->sh = sh; s->o = o; s->me = me;
    if ((rc = gpt_model_create(&s->m, &d, k, ctx)) != CC_OK) {
        fprintf(stderr, "%s: rank %d: %s\n", gpt_program, me, s->m.error);
        return rc;
    }
    for (p = 0; p < s->m.np; p++)
        if (s->m.param[p]->bytes / sizeof(float) > most) most = s->m.param[p]->bytes / sizeof(float);
    for (p = 0; p < s->m.nb && s->m.ZERO; p++)
        if (s->m.bucket[p].elems > most) most = s->m.bucket[p].elems;
    s->host = (float*)malloc(sizeof(float) * most);
    s->batch_in = (int*)malloc(sizeof(int) * (size_t)o->batch * s->m.cfg.T);
    s->batch_tg = (int*)malloc(sizeof(int) * (size_t)o->batch * s->m.cfg.T);
    if (!s->host || !s->batch_in || !s->batch_tg) return CC_ERR_OUT_OF_MEMORY;
    for (p = 0; p < s->m.np; p++) {
        shard_copy(&s->m.layout->p[p], s->m.TP, s->m.tp_rank, sh->init_params + s->m.layout->p[p].offset, s->host, 1);
        if ((rc = to_tensor(s, s->m.param[p]->p, s->host, s->m.param[p]->bytes)) != CC_OK) return rc;
    }
    /* ZeRO: the rank's shard of each bucket of parameters, its 1/dp part */
    for (p = 0; p < s->m.nb && s->m.ZERO; p++) {
        const gpt_tensor* sh_t = s->m.param_shard[p];
        if ((rc = from_tensor(s, s->host, (const char*)s->m.bucket_param[p]->p + (size_t)s->m.dp_rank * sh_t->bytes, sh_t->bytes)) != CC_OK ||
            (rc = to_tensor(s, sh_t->p, s->host, sh_t->bytes)) != CC_OK)
            return rc;
    }
    /* the communicators: the TP group (consecutive ranks, one node) and the
       DP group are split from the communicator of all ranks, whatever its
       family */
    s->world_comm = world;
    if (o->tp > 1 && (rc = cc_comm_split(s->world_comm, s->m.dp_rank, s->m.tp_rank, &s->m.tp_comm)) != CC_OK) return rc;
    if (o->dp > 1 && (rc = cc_comm_split(s->world_comm, s->m.tp_rank, s->m.dp_rank, &s->m.dp_comm)) != CC_OK) return rc;
    if ((rc = gpt_build_graph(&s->m, 1, &s->train, &s->train_ops)) != CC_OK) return rc;
    return gpt_build_graph(&s->m, 0, &s->eval, &s->eval_ops);
}

/* Program order, and the durations of its ops: each profiled alone
   (agreeing on the slowest rank's time) on a copy of the state that is put
   back afterwards, or from the model. The state before the first step is
   kept (the snapshot): every later phase starts from it. */
static cc_result profile_step(rank_state* s) {
    cc_comm* world = s->world_comm;
    cc_result rc = cc_plan_create(s->m.ctx, s->train, NULL, &s->plan[0]);
    if (rc == CC_OK) rc = cc_exec_create(s->m.ctx, s->plan[0], s->be, &s->ex[0]);
    if (rc == CC_OK) rc = cc_exec_agree(s->ex[0], world);
    if (rc != CC_OK) return rc;
    if ((rc = snap_save(s, &s->snap)) != CC_OK) return rc;
    rc = set_batch(s, 0, 0);
    if (rc == CC_OK) rc = set_step(s, 0, 1);
    if (rc == CC_OK) place_transients(s, s->ex[0], s->train);
    /* the whole state is put back from the snapshot below */
    if (rc == CC_OK) rc = cc_exec_allow_profile_writes(s->ex[0], 1);
    if (rc == CC_OK && s->o->profile_repeats > 0) rc = cc_exec_profile_ops(s->ex[0], s->o->profile_repeats, world);
    else if (rc == CC_OK) rc = model_durations(s, s->train);
    if (rc == CC_OK) rc = snap_restore(s, &s->snap);
    return rc;
}

/* --memory-cap: what the persistent bytes leave for the activations, the
   same on every rank (the smallest, cc_exec_agree_cap), into the desc that
   judges the rewrites and schedules the step. */
static cc_result agree_cap(rank_state* s, cc_sched_desc* sd) {
    uint64_t persistent = gpt_bound_bytes(s->train), cap = s->o->memory_cap;
    cc_result rc;
    if (cap && cap <= persistent) {
        if (s->me == 0)
            fprintf(stderr, "%s: rank %d: --memory-cap %llu bytes leaves nothing for the activations: the parameters, gradients, "
                    "AdamW state and batch take %llu bytes\n", gpt_program, s->me, (unsigned long long)cap,
                    (unsigned long long)persistent);
        cap = 1;   /* agreed like any other cap: every rank fails alike below */
    } else if (cap) cap -= persistent;
    if ((rc = cc_exec_agree_cap(s->ex[0], s->world_comm, &cap)) != CC_OK) return rc;
    if (s->o->memory_cap && cap <= 1) return CC_ERR_INFEASIBLE;
    s->cap = cap;
    sd->memory_cap_bytes = cap;
    if (s->me == 0) {
        s->sh->persistent = persistent;
        s->sh->cap = cap ? cap + persistent : 0;
    }
    return CC_OK;
}

/* Decomposition and fusion, judged by the library with the durations just
   agreed on (the same on every rank, so every rank rewrites alike) and the
   schedule desc that will schedule the result. The rewritten step is
   profiled again (with --profile 0 it keeps the library's estimates). */
static cc_result rewrite_step(rank_state* s, const cc_sched_desc* sd) {
    cc_rewrite_desc rd;
    memset(&rd, 0, sizeof rd);
    cc_rewrite_report rep;
    cc_plan* plan = NULL;
    cc_exec* ex = NULL;
    cc_comm* world = s->world_comm;
    cc_result rc;
    rd.sched = *sd;
    rd.exact_only = s->o->exact;   /* the losses stay program order's bit for bit */
    s->run = s->train;
    if (s->o->decompose) {
        if ((rc = cc_graph_decompose(s->m.ctx, s->run, &rd, &s->decomposed, &rep)) != CC_OK) return rc;
        if (s->me == 0) {
            int i;
            size_t at = 0, room = sizeof s->sh->dec_contexts;
            s->sh->dec = rep;
            s->sh->dec.contexts = NULL;   /* they live with the rank's graph: kept here as text */
            s->sh->dec_contexts[0] = 0;
            for (i = 0; i < rep.n_contexts && at < room; i++) {
                const cc_rewrite_context* c = &rep.contexts[i];
                int w = snprintf(s->sh->dec_contexts + at, room - at, "    %s along %s in %d chunks (%d ops: %s): judged %.3f ms "
                                 "faster\n", c->collective, cc_axis_name(c->axis), c->n_chunks, c->n_ops, c->ops, c->gain_us / 1000.0);
                if (w < 0) break;
                at += (size_t)w;
            }
        }
        if (rep.n_changed > 0) s->run = s->decomposed;   /* else a copy of the step: run the step itself */
    }
    if (s->o->fuse) {
        if ((rc = cc_graph_fuse(s->m.ctx, s->run, &rd, &s->fused, &rep)) != CC_OK) return rc;
        if (s->me == 0) s->sh->fus = rep;
        if (rep.n_changed > 0) s->run = s->fused;
    }
    if (s->run == s->train) return CC_OK;
    rc = cc_plan_create(s->m.ctx, s->run, NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(s->m.ctx, plan, s->be, &ex);
    if (rc == CC_OK) rc = cc_exec_agree(ex, world);
    if (rc == CC_OK) place_transients(s, ex, s->run);
    if (rc == CC_OK) rc = cc_exec_allow_profile_writes(ex, 1);   /* put back from the snapshot below */
    if (rc == CC_OK && s->o->profile_repeats > 0) rc = cc_exec_profile_ops(ex, s->o->profile_repeats, world);
    /* --profile 0: the rewritten step's ops from the same model (a chunk of
       a collective pays the link's latency, which the rewrites' estimate of
       a resized collective does not know without profiling) */
    else if (rc == CC_OK) rc = model_durations(s, s->run);
    cc_exec_destroy(ex);
    cc_plan_destroy(plan);
    if (rc == CC_OK) rc = snap_restore(s, &s->snap);
    return rc;
}

/* The library's schedule of the step it runs, the same on every rank, and
   what rank 0 reports of it and of program order. */
static cc_result schedule_step(rank_state* s, const cc_sched_desc* sd) {
    shared* sh = s->sh;
    int i, n = cc_graph_n_ops(s->train), nx;
    cc_op* prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
    double* st0 = (double*)malloc(sizeof(double) * (size_t)n);
    double mk0 = 0;
    uint64_t peak[2] = { 0, 0 };
    cc_schedule plain;
    cc_sched_stats plain_stats;
    cc_result rc;
    memset(&plain, 0, sizeof plain);
    if (!prog || !st0) {
        free(prog);
        free(st0);
        return CC_ERR_OUT_OF_MEMORY;
    }
    for (i = 0; i < n; i++) prog[i] = cc_graph_op(s->train, i);
    rc = cc_sched_solve_stats(s->m.ctx, s->run, sd, &s->sched, &s->sched_stats);
    /* The rewrites were judged with the durations of the step as written;
       profiled itself, the rewritten step may be predicted slower than the
       step as written, scheduled: then that one runs. Every rank decides
       alike (the durations are agreed). */
    if (rc == CC_OK && s->run != s->train && (rc = cc_sched_solve_stats(s->m.ctx, s->train, sd, &plain, &plain_stats)) == CC_OK) {
        if (s->me == 0) {
            sh->pred_rewritten_ms = s->sched.makespan_us / 1000.0;
            sh->pred_plain_ms = plain.makespan_us / 1000.0;
        }
        if (plain.makespan_us < s->sched.makespan_us) {
            cc_schedule_release(s->m.ctx, &s->sched);
            s->sched = plain;
            s->sched_stats = plain_stats;
            memset(&plain, 0, sizeof plain);
            s->run = s->train;
            if (s->me == 0) sh->dropped = 1;
        }
        s->plain = plain;   /* timed beside the rewritten step (plan_steps, compare_orders); zero where dropped */
    }
    if (rc == CC_OK) rc = cc_simulate(s->m.ctx, s->train, prog, n, st0, &mk0);
    /* program order's activations at their peak, and the library's (the
       schedule keeps them within the cap) */
    if (rc == CC_OK) rc = cc_memory_check(s->m.ctx, s->train, st0, NULL, 0, &peak[0], NULL);
    if (rc == CC_OK) rc = cc_memory_check(s->m.ctx, s->run, s->sched.start_us, NULL, 0, &peak[1], NULL);
    s->program_fits = !s->cap || peak[0] <= s->cap;
    /* Where the library's step is predicted no faster than program order,
       program order runs as the library's too (the same on every rank:
       the durations are agreed), where it fits the cap. */
    if (rc == CC_OK && s->sched.makespan_us >= mk0 && s->program_fits) {
        s->run = s->train;
        s->program_kept = 1;
        if (s->me == 0) sh->kept = 1;
    }
    nx = cc_graph_n_ops(s->run);
    s->pred_start[0] = (double*)malloc(sizeof(double) * (size_t)n);
    s->pred_start[1] = (double*)malloc(sizeof(double) * (size_t)nx);
    if (rc == CC_OK && (!s->pred_start[0] || !s->pred_start[1])) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK) memcpy(s->pred_start[0], st0, sizeof(double) * (size_t)n);
    if (rc == CC_OK) memcpy(s->pred_start[1], s->program_kept ? st0 : s->sched.start_us, sizeof(double) * (size_t)nx);
    if (rc == CC_OK && s->me == 0) {
        sh->pred_ms[0] = mk0 / 1000.0;
        sh->pred_ms[1] = s->program_kept ? mk0 / 1000.0 : s->sched.makespan_us / 1000.0;
        sh->pred_sched_ms = s->sched.makespan_us / 1000.0;
        sh->peak[0] = peak[0];
        sh->peak[1] = s->program_kept ? peak[0] : peak[1];
        sh->pred_exposed_ms[0] = predicted_exposed(s->m.ctx, s->train, st0);
        sh->pred_exposed_ms[1] = sh->pred_exposed_ms[0];
        if (!s->program_kept) sh->pred_exposed_ms[1] = predicted_exposed(s->m.ctx, s->run, s->sched.start_us);
        sh->costs = cc_graph_exec_costs(s->run);
        sh->sched_ms = s->sched_stats.solve_ms;
        sh->lower_bound_ms = s->sched.lower_bound_us / 1000.0;
        sh->n_ops = n;
        sh->n_ops_run = nx;
        for (i = 0; i < n; i++) if (!cc_op_demand(s->train, prog[i], GPT_S_COMPUTE)) sh->n_colls++;
        for (i = 0; i < nx; i++) if (cc_op_collective(s->run, cc_graph_op(s->run, i))) sh->n_colls_run++;   /* not a bucket's copies */
        /* ops issued at another position than in program order (of the graph that runs) */
        if (!s->program_kept)
            for (i = 0; i < nx; i++) if (cc_op_index(s->run, s->sched.order[i]) != i) sh->moved++;
    }
    free(prog);
    free(st0);
    return rc;
}

/* Executors of the scheduled step and of the forward pass, checked across
   ranks; room for a step's timeline. */
/* Under a cap the schedule keeps the activations alive at once within it,
   but the arena also holds each buffer's alignment and the gaps of its
   placement: where the plan's arena is above the cap, the step is
   scheduled again under the cap less that excess (from the schedule found,
   which the new one is never later than), a few times, before the plan
   gives up with the library's message. The same on every rank. */
#define GPT_ARENA_TRIES 4
static cc_result plan_steps(rank_state* s, const cc_sched_desc* sd) {
    cc_comm* world = s->world_comm;
    int n = cc_graph_n_ops(s->run) > cc_graph_n_ops(s->train) ? cc_graph_n_ops(s->run) : cc_graph_n_ops(s->train);
    int tries;
    uint64_t cap = s->cap;
    cc_plan_desc pd;
    cc_result rc = CC_OK;
    memset(&pd, 0, sizeof pd);
    for (tries = 1; s->cap && !s->program_kept && tries < GPT_ARENA_TRIES && rc == CC_OK; tries++) {
        cc_plan* trial = NULL;
        uint64_t arena;
        cc_sched_desc tight = *sd;
        cc_schedule next;
        memset(&next, 0, sizeof next);
        pd.order = s->sched.order;
        pd.start_us = s->sched.start_us;
        if ((rc = cc_plan_create_desc(s->m.ctx, s->run, &pd, &trial)) != CC_OK) break;
        arena = cc_plan_arena_bytes(trial);
        cc_plan_destroy(trial);
        if (arena <= s->cap || arena - s->cap >= cap) break;
        cap -= arena - s->cap;
        tight.memory_cap_bytes = cap;
        tight.start_from = NULL;
        if (cc_sched_solve_stats(s->m.ctx, s->run, &tight, &next, &s->sched_stats) != CC_OK) break;   /* the plan below says why */
        cc_schedule_release(s->m.ctx, &s->sched);
        s->sched = next;
        memcpy(s->pred_start[1], s->sched.start_us, sizeof(double) * (size_t)cc_graph_n_ops(s->run));
        if (s->me == 0) {
            s->sh->pred_sched_ms = s->sched.makespan_us / 1000.0;
            s->sh->pred_ms[1] = s->sched.makespan_us / 1000.0;
            (void)cc_memory_check(s->m.ctx, s->run, s->sched.start_us, NULL, 0, &s->sh->peak[1], NULL);
        }
    }
    if (rc != CC_OK) return rc;
    if (!s->program_kept) {   /* the arena from the schedule's times, within the cap */
        pd.order = s->sched.order;
        pd.start_us = s->sched.start_us;
    }
    pd.memory_cap_bytes = s->cap;
    rc = cc_plan_create_desc(s->m.ctx, s->run, &pd, &s->plan[1]);
    if (rc == CC_OK) rc = cc_exec_create(s->m.ctx, s->plan[1], s->be, &s->ex[1]);
    if (rc == CC_OK) rc = cc_exec_agree(s->ex[1], world);
    /* where the rewritten step runs, the step as written in the library's
       order too, to time the rewrites side by side (compare_orders) */
    if (rc == CC_OK && s->run != s->train && !s->program_kept && s->plain.order && s->o->compare_steps > 0) {
        pd.order = s->plain.order;
        pd.start_us = s->plain.start_us;
        rc = cc_plan_create_desc(s->m.ctx, s->train, &pd, &s->plan[2]);
        if (rc == CC_OK) rc = cc_exec_create(s->m.ctx, s->plan[2], s->be, &s->ex[2]);
        if (rc == CC_OK) rc = cc_exec_agree(s->ex[2], world);
    }
    if (rc == CC_OK) rc = cc_plan_create(s->m.ctx, s->eval, NULL, &s->eval_plan);
    if (rc == CC_OK) rc = cc_exec_create(s->m.ctx, s->eval_plan, s->be, &s->eval_ex);
    if (rc == CC_OK) rc = cc_exec_agree(s->eval_ex, world);
    if (rc != CC_OK) return rc;
    if (s->me == 0) {
        s->sh->n_waits[0] = cc_plan_n_waits(s->plan[0]);
        s->sh->n_waits[1] = cc_plan_n_waits(s->plan[1]);
        s->sh->arena[0] = cc_plan_arena_bytes(s->plan[0]);
        s->sh->arena[1] = cc_plan_arena_bytes(s->plan[1]);
    }
    s->op_start = (double*)malloc(sizeof(double) * (size_t)n);
    s->op_end = (double*)malloc(sizeof(double) * (size_t)n);
    return s->op_start && s->op_end ? CC_OK : CC_ERR_OUT_OF_MEMORY;
}

/* Each order profiled in steps run as training runs them (the
   batch and AdamW's step set, the step, its time and loss read back), each
   added to its profile (cc_exec_profile_loop_step), then applied, the ranks
   agreeing. Not cc_exec_profile_steps: steps back to back, with no host
   work between them, let the ranks drift apart otherwise than in training
   (a rank that ends its step early starts the next at once and waits in
   its first collective), and a profile of them predicts other steps than
   the ones that train. The first `warmup` steps are not added: on this
   kind of machine (CPU ranks sharing a few cores of a virtual machine) the
   first steps after a change of work run 5-10% faster than the steps
   that follow, and a profile of them predicts steps that never come; and
   the plan's first run touches memory for the first time. With a
   learning rate of 0; the caller restores the state. The orders (the
   first n_orders of program order and the library's) alternate step by
   step: this kind of machine also runs faster or slower by 15-25% for
   seconds at a time (bench/RESULTS.md: the same order trained twice in
   one process measured 0.85x-1.00x), and orders profiled one after the other would each see another
   stretch of it, which the predicted gain would take for the orders'. */
static cc_result profile_orders(rank_state* s, int n_orders, int warmup, int steps) {
    double ms, exposed, loss;
    int step, k;
    cc_result rc = CC_OK;
    if (warmup < 1) warmup = 1;
    for (step = 0; step < warmup + steps && rc == CC_OK; step++)
        for (k = 0; k < n_orders && rc == CC_OK; k++) {
            cc_graph* g = k ? s->run : s->train;
            rc = run_step(s, s->ex[k], 0, step, 0, 1);
            if (rc == CC_OK) rc = measure_step(s, s->ex[k], g, &ms, &exposed);
            if (rc == CC_OK) rc = read_loss(s, &loss);
            if (rc == CC_OK && step >= warmup) rc = cc_exec_profile_loop_step(s->ex[k]);
        }
    for (k = 0; k < n_orders && rc == CC_OK; k++) rc = cc_exec_profile_loop_apply(s->ex[k], s->world_comm);
    return rc;
}

/* The predictions again, each order from its ops profiled in place: a few
   steps of it (profile_orders), so that they count what the step shares, on
   CPU ranks the cores with the other ranks' threads and a collective's
   wait for its last member, which ops profiled alone do not see and which
   differ between orders. The first predictions are kept for the report.
   Where the library's plan is now predicted no faster than program order,
   program order trains as the library's. The same on every rank (the
   durations are agreed). Not with replayed CUDA graphs: they time only
   whole steps. */
#define GPT_MIN_GAIN 0.03   /* the least predicted gain, as a fraction of program order's step, worth reordering for */

static cc_result profile_in_place(rank_state* s) {
    shared* sh = s->sh;
    int i, n = cc_graph_n_ops(s->train), nx = cc_graph_n_ops(s->run), k = s->o->profile_steps;
    double mk0 = 0, mk1 = 0, mean0 = 0, mean1 = 0;
    cc_profile_result sp[2];
    cc_op* prog;
    cc_result rc;
    if (k <= 0 || s->o->profile_repeats <= 0 || s->o->cuda_graphs) return CC_OK;
    memset(sp, 0, sizeof sp);
    if (!(prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n))) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) prog[i] = cc_graph_op(s->train, i);
    /* each order: the median of its steps simulated one by one (what a
       step costs, its variation included), and the timeline from its mean
       durations (the trace's prediction) */
    rc = profile_orders(s, s->program_kept ? 1 : 2, s->o->profile_warmup, k);
    if (rc == CC_OK) rc = cc_simulate(s->m.ctx, s->train, prog, n, s->pred_start[0], &mean0);
    if (rc == CC_OK) rc = cc_exec_query_profile(s->ex[0], &sp[0]);
    mk0 = sp[0].makespan_median_us;
    if (rc == CC_OK && !s->program_kept) {
        rc = cc_simulate(s->m.ctx, s->run, s->sched.order, nx, s->pred_start[1], &mean1);
        if (rc == CC_OK) rc = cc_exec_query_profile(s->ex[1], &sp[1]);
        mk1 = sp[1].makespan_median_us;
    } else if (rc == CC_OK) {
        mk1 = mk0;
        mean1 = mean0;
        sp[1] = sp[0];
        memcpy(s->pred_start[1], s->pred_start[0], sizeof(double) * (size_t)n);
    }
    free(prog);
    if (rc == CC_OK) rc = snap_restore(s, &s->snap);
    if (rc != CC_OK) return rc;
    /* a gain below what the predictions can tell (they land within a few
       percent of the steps that follow: bench/RESULTS.md) is no gain */
    if (!s->program_kept && s->program_fits && mk1 > (1.0 - GPT_MIN_GAIN) * mk0) s->program_kept = 3;
    if (s->me == 0) {
        sh->in_place = 1;
        sh->alone_ms[0] = sh->pred_ms[0];
        sh->alone_ms[1] = sh->pred_sched_ms;
        sh->pred_ms[0] = mk0 / 1000.0;
        sh->pred_ms[1] = (s->program_kept >= 2 ? mk0 : mk1) / 1000.0;
        sh->pred_exposed_ms[0] = sp[0].exposed_median_us / 1000.0;
        sh->pred_exposed_ms[1] = (s->program_kept >= 2 ? sp[0] : sp[1]).exposed_median_us / 1000.0;
        sh->in_place_ms[0] = mk0 / 1000.0;
        sh->in_place_ms[1] = mk1 / 1000.0;
        sh->in_place_mean_ms[0] = mean0 / 1000.0;
        sh->in_place_mean_ms[1] = mean1 / 1000.0;
        if (s->program_kept == 3) sh->kept = 3;
    }
    return CC_OK;
}

/* A line on what the trainer is doing, before a phase that may take a
   while (on a large model, minutes): rank 0's, flushed. */
static void progress(const rank_state* s, const char* fmt, ...) {
    va_list ap;
    if (s->me != 0) return;
    printf("... ");
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* v[0..n) summed over the ranks of comm (NULL: none, v as it is), in the
   kernels' memory (a device's, for a GPU trainer). */
static cc_result sum_over(rank_state* s, cc_comm* comm, double* v, int n) {
    size_t bytes = sizeof(double) * (size_t)n;
    cc_collective co;
    void* d;
    cc_result rc;
    if (!comm || cc_comm_size(comm) <= 1) return CC_OK;
    if (!(d = s->m.kernels->alloc_zeroed(bytes))) return CC_ERR_OUT_OF_MEMORY;
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE;
    co.dtype = CC_DTYPE_FLOAT64;
    co.reduce = CC_REDUCE_SUM;
    co.n_elems = (size_t)n;
    co.comm = comm;
    co.send_buf = d;
    co.recv_buf = d;
    rc = to_tensor(s, d, v, bytes);
    if (rc == CC_OK) rc = cc_comm_run(&co);
    if (rc == CC_OK) rc = from_tensor(s, v, d, bytes);
    s->m.kernels->free_memory(d);
    return rc;
}

/* Side by side: the two orders alternately on the same state, each step
   from the snapshot, after one untimed step each; the median step time of
   each. Where the library's
   order runs a rewrite of the step, the step as written in the library's
   order (ex[2]) takes its turn too, so that the rewrites are timed. */
static cc_result compare_orders(rank_state* s) {
    int n = s->o->compare_steps, step, k, n_ex = s->ex[2] ? 3 : 2;
    cc_graph* graph[3];
    double* ms = (double*)malloc(sizeof(double) * 6 * (size_t)n);   /* [order][step, exposed][n] */
    cc_result rc = ms ? CC_OK : CC_ERR_OUT_OF_MEMORY;
    graph[0] = s->train;
    graph[1] = s->run;
    graph[2] = s->train;
    /* one untimed step each first: an executor's first step may be its
       first at all (--check-step runs that one op by op) */
    for (k = 0; k < n_ex && rc == CC_OK; k++) {
        rc = snap_restore(s, &s->snap);
        if (rc == CC_OK) rc = run_step(s, s->ex[k], 0, 0, 0, 1);
    }
    for (step = 0; step < n && rc == CC_OK; step++)
        for (k = 0; k < n_ex && rc == CC_OK; k++) {
            rc = snap_restore(s, &s->snap);
            if (rc == CC_OK) rc = run_step(s, s->ex[k], 0, step, 0, 1);
            if (rc == CC_OK) rc = measure_step(s, s->ex[k], graph[k], &ms[(2 * k) * n + step], &ms[(2 * k + 1) * n + step]);
        }
    if (rc == CC_OK) {
        /* the library's plan measured slower than program order (the
           medians averaged over the ranks, so every rank decides alike):
           program order trains as the library's */
        double med[6];
        int size = cc_comm_size(s->world_comm) > 0 ? cc_comm_size(s->world_comm) : 1;
        for (k = 0; k < n_ex; k++) {
            med[2 * k] = median(&ms[(2 * k) * n], n);
            med[2 * k + 1] = median(&ms[(2 * k + 1) * n], n);
        }
        rc = sum_over(s, s->world_comm, med, 2 * n_ex);
        for (k = 0; k < 2 * n_ex; k++) med[k] /= size;
        if (rc == CC_OK && s->me == 0) {
            for (k = 0; k < n_ex; k++) {
                s->sh->cal_ms[k] = med[2 * k];
                s->sh->cal_exposed_ms[k] = med[2 * k + 1];
            }
            s->sh->cal_plain = n_ex == 3;
        }
        if (rc == CC_OK && med[2] > med[0] && !s->program_kept && s->program_fits) {
            s->program_kept = 2;
            if (s->me == 0) s->sh->kept = 2;
        }
    }
    free(ms);
    if (rc == CC_OK) rc = snap_restore(s, &s->snap);
    return rc;
}

/* The trace of the step executor k just ran (of graph g), every rank's,
   and beside it the prediction of the same step. */
static cc_result trace_step(rank_state* s, int k, cc_graph* g) {
    char name[48];
    cc_result rc;
    snprintf(name, sizeof name, "rank %d (tp %d, dp %d)", s->me, s->m.tp_rank, s->m.dp_rank);
    rc = cc_exec_timeline(s->ex[k], s->op_start, s->op_end);
    if (rc == CC_OK) rc = cc_trace_add(s->sh->trace, g, s->me, name, s->op_start, s->op_end);
    /* the prediction of the same step, on the same time axis (from the
       step's launch): a process of its own below the ranks' */
    snprintf(name, sizeof name, "rank %d predicted", s->me);
    if (rc == CC_OK) rc = cc_trace_add(s->sh->trace, g, 1000 + s->me, name, s->pred_start[k], NULL);
    return rc;
}

/* The mean loss of --eval validation batches, with the forward pass. */
static cc_result evaluate(rank_state* s) {
    double sum = 0;
    int i;
    for (i = 0; i < s->o->eval_batches; i++) {
        double loss = 0;
        cc_result rc = run_step(s, s->eval_ex, 1, i, 0, 1);
        if (rc == CC_OK) rc = read_loss(s, &loss);
        if (rc != CC_OK) return rc;
        sum += loss;
    }
    if (s->me == 0) s->sh->val_loss = sum / s->o->eval_batches;
    return CC_OK;
}

/* --sample characters of text, each drawn from the softmax of the logits
   at the last position of the context (which starts as a newline), with
   the forward pass; every sequence of the batch holds the context. */
static cc_result sample_text(rank_state* s) {
    shared* sh = s->sh;
    int T = s->m.cfg.T, V = s->m.cfg.V, ctx_len = 1, n, i, b, v;
    int* context = (int*)calloc((size_t)T, sizeof(int));
    int *inputs = s->batch_in, *targets = s->batch_tg;
    float* lg = s->host;                   /* [V] */
    size_t N = (size_t)s->m.N;
    uint64_t rs = s->o->seed ^ 0xA5A5A5A5ull;
    cc_result rc = CC_OK;
    if (!context) return CC_ERR_OUT_OF_MEMORY;
    context[0] = sh->data.token_of['\n'] >= 0 ? sh->data.token_of['\n'] : 0;
    for (n = 0; n < s->o->sample_chars && n < (int)sizeof sh->sample - 1; n++) {
        double mx = -1e30, sum = 0, r, u, got;
        int pick = 0, row, owner;
        for (b = 0; b < s->m.Bl; b++)
            for (i = 0; i < T; i++) {
                inputs[b * T + i] = i < ctx_len ? context[i] : 0;
                targets[b * T + i] = 0;
            }
        rc = to_tensor(s, s->m.inputs->p, inputs, sizeof(int) * N);
        if (rc == CC_OK) rc = to_tensor(s, s->m.targets->p, targets, sizeof(int) * N);
        if (rc == CC_OK) rc = exec_step(s, s->eval_ex);
        /* the logits of sequence 0's last position: with sequence
           parallelism only the TP rank that holds that row has them; it
           draws, and the TP group adds up the picks (the others give 0) */
        row = ctx_len - 1;
        owner = s->m.SP ? row / s->m.Ns : s->m.tp_rank;
        u = rng_unit(&rs);
        if (rc == CC_OK && owner == s->m.tp_rank) {
            rc = from_tensor(s, lg, (const float*)s->m.logits->p + (size_t)(row - (s->m.SP ? owner * s->m.Ns : 0)) * V,
                             sizeof(float) * (size_t)V);
            for (v = 0; v < V; v++) if (lg[v] > mx) mx = lg[v];
            for (v = 0; v < V; v++) sum += exp(lg[v] - mx);
            r = u * sum;
            for (v = 0; v < V; v++) {
                r -= exp(lg[v] - mx);
                pick = v;
                if (r <= 0) break;
            }
        }
        got = owner == s->m.tp_rank ? pick : 0;
        if (rc == CC_OK && s->m.SP) rc = sum_over(s, s->m.tp_comm, &got, 1);
        pick = (int)got;
        if (rc != CC_OK) break;
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
    for (i = 0; i < 3; i++) {
        cc_exec_destroy(s->ex[i]);
        cc_plan_destroy(s->plan[i]);
    }
    cc_schedule_release(s->m.ctx, &s->sched);
    cc_schedule_release(s->m.ctx, &s->plain);
    cc_graph_destroy(s->train);
    cc_graph_destroy(s->eval);
    cc_graph_destroy(s->decomposed);
    cc_graph_destroy(s->fused);
    cc_comm_destroy(s->m.tp_comm);
    cc_comm_destroy(s->m.dp_comm);
    gpt_op_store_free(&s->train_ops);
    gpt_op_store_free(&s->eval_ops);
    snap_free(&s->snap);
    free(s->batch_in);
    free(s->batch_tg);
    free(s->op_start);
    free(s->pred_start[0]);
    free(s->pred_start[1]);
    free(s->op_end);
    free(s->host);
    gpt_model_free(&s->m);
    free(s);
}

/* A process per rank: v (P floats, zero where this rank wrote nothing)
   summed over all ranks, which gives every rank the whole vector: every
   element has exactly one writer (unshard_all). */
static cc_result gather_on_all(rank_state* s, float* v) {
    cc_collective co;
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE;
    co.dtype = CC_DTYPE_FLOAT32;
    co.reduce = CC_REDUCE_SUM;
    co.n_elems = s->sh->P;
    co.comm = s->world_comm;
    co.send_buf = v;
    co.recv_buf = v;
    return cc_comm_run(&co);
}

/* ---- a rank's life ------------------------------------------------------------ */
/* A rank's life: world rank `me` (= dp_rank * TP + tp_rank), as its
   trainer's main started it, with its context, the communicator of all
   ranks and its backend (the trainer's, which outlive the call). Every
   rank runs the same lines; rank 0 fills in what the report prints. */
static cc_result gpt_rank_main(shared* sh, cc_context* ctx, cc_comm* world, cc_backend* be, int me) {
    const options* o = &sh->o;
    rank_state* s = (rank_state*)calloc(1, sizeof *s);
    cc_sched_desc sd;   /* judges the rewrites and schedules the step they give; zero: every default */
    int pass, step;
    cc_result rc;
    if (!s) return CC_ERR_OUT_OF_MEMORY;
    s->be = be;
    memset(&sd, 0, sizeof sd);
    if (o->budget > 0) sd.tuning.budget_schedules = o->budget;

    /* the model and the step: this rank's shards of the parameters, its
       TP and DP communicators, the graphs of a training step and of the
       forward pass */
    rc = rank_setup(s, sh, sh->tr->kernels, ctx, world, me);

    /* the library optimises the step: it profiles the ops of program order
       (or takes them from the model), rewrites the step (decomposition,
       fusion), schedules it, plans both orders' streams and events, and
       predicts each order again from its ops profiled in place; then the
       two orders are timed side by side */
    if (rc == CC_OK && o->profile_repeats > 0)
        progress(s, "profiling the step's %d ops, %d times each", cc_graph_n_ops(s->train), o->profile_repeats);
    if (rc == CC_OK) rc = profile_step(s);
    if (rc == CC_OK) rc = agree_cap(s, &sd);
    if (rc == CC_OK) progress(s, "rewriting and scheduling the step");
    if (rc == CC_OK) rc = rewrite_step(s, &sd);
    if (rc == CC_OK) rc = schedule_step(s, &sd);
    if (rc == CC_OK) rc = plan_steps(s, &sd);
    if (rc == CC_OK && o->profile_steps > 0 && o->profile_repeats > 0 && !o->cuda_graphs)
        progress(s, "profiling %s in place: %d steps%s, after %d of warm-up", s->program_kept ? "program order" : "both orders",
                 o->profile_steps, s->program_kept ? "" : " each", o->profile_warmup);
    if (rc == CC_OK) rc = profile_in_place(s);
    if (rc == CC_OK && o->compare_steps > 0) {
        progress(s, "timing the two orders side by side%s: %d steps each",
                 s->ex[2] ? " (and the step as written in the library's order)" : "", o->compare_steps);
        rc = compare_orders(s);
    }

    /* training, once per order asked for (0 program, 1 the library's), each
       from the state before the first step; the trace of the last step */
    for (pass = 0; pass < sh->passes && rc == CC_OK; pass++) {
        int k = sh->pass_order[pass];
        cc_graph* graph;
        double t0;
        if (k && s->program_kept >= 2) k = 0;   /* found slower: program order runs as the library's */
        graph = k ? s->run : s->train;
        t0 = wall_s();
        rc = snap_restore(s, &s->snap);
        if (rc == CC_OK && me == 0 && sh->passes > 1)
            printf("--- training in %s order%s ---\n", sh->pass_order[pass] ? "the library's" : "program",
                   sh->pass_order[pass] && s->program_kept ? " (which kept program order)" : "");
        for (step = 0; step < o->steps && rc == CC_OK; step++) {
            double ms, exposed, loss;
#ifdef CONCERTO_CUDA_H_INCLUDED
            cc_cuda_graph_counts g0, g1;
            int counted = o->cuda_graphs && cc_cuda_backend_graph_counts(s->be, &g0) == CC_OK;
#endif
            rc = run_step(s, s->ex[k], 0, step, lr_at(o, step), step + 1);
#ifdef CONCERTO_CUDA_H_INCLUDED
            if (rc == CC_OK && counted && me == 0 && cc_cuda_backend_graph_counts(s->be, &g1) == CC_OK) {
                const char* why = NULL;
                sh->replayed[pass] += g1.n_replayed > g0.n_replayed;
                (void)cc_cuda_backend_graph_status(s->be, &why);
                snprintf(sh->graph_why[pass], sizeof sh->graph_why[pass], "%.200s", why ? why : "");
            }
#endif
            if (rc == CC_OK) rc = measure_step(s, s->ex[k], graph, &ms, &exposed);
            if (rc == CC_OK) rc = read_loss(s, &loss);
            if (rc == CC_OK && me == 0) {
                sh->losses[pass][step] = loss;
                sh->step_ms[pass][step] = ms;
                sh->exposed_ms[pass][step] = exposed;
                if (o->print_every > 0 && (step % o->print_every == 0 || step == o->steps - 1))
                    printf("step %4d  loss %.4f  lr %.2e  step %7.2f ms (predicted %7.2f)  exposed comm %6.2f ms (predicted %6.2f)\n",
                           step + 1, loss, s->m.step.lr, ms, sh->pred_ms[k], exposed, sh->pred_exposed_ms[k]);
            }
            if (rc == CC_OK && step == 0 && pass == 0) {   /* the first step's loss and gradient (--dump-grads) */
                if (s->m.ZERO >= 2) rc = zero_gather(s, s->m.grad_shard, s->m.bucket_grad);
                if (rc == CC_OK) rc = unshard_all(s, s->m.grad, sh->grads0);
                if (rc == CC_OK && me == 0) sh->loss0 = loss;
            }
        }
        if (rc == CC_OK && me == 0) sh->train_s = wall_s() - t0;
        if (rc == CC_OK && pass == sh->passes - 1 && sh->trace) rc = trace_step(s, k, graph);
    }

    /* evaluation and sampling, with the forward pass */
    if (rc == CC_OK && o->eval_batches > 0) rc = evaluate(s);
    if (rc == CC_OK && o->sample_chars > 0) rc = sample_text(s);

    /* the final parameters to the host (to rank 0 when ranks are processes) */
    if (rc == CC_OK && s->m.ZERO == 3) rc = zero_gather(s, s->m.param_shard, s->m.bucket_param);
    if (rc == CC_OK) rc = unshard_all(s, s->m.param, sh->final_params);
    if (rc == CC_OK && sh->tr->process_per_rank) rc = gather_on_all(s, sh->final_params);
    if (rc == CC_OK && sh->tr->process_per_rank && o->dump_grads && o->steps > 0) rc = gather_on_all(s, sh->grads0);
    rank_free(s);
    return rc;
}

/* --graph-fingerprint: every rank's graphs built as gpt_rank_main builds
   them, with this trainer's kernel table, on ranks of the library's
   in-process world (their communicators have the layout's sizes) and in
   host memory, so that no device is needed; nothing runs. Rank 0's
   fingerprints to the host. Host memory for a kernel table: the CPU
   trainer's, and the graphs' here. */
static void* host_alloc_zeroed(size_t n_bytes) { return calloc(n_bytes, 1); }
static int host_copy(void* dst, const void* src, size_t n_bytes) {
    memcpy(dst, src, n_bytes);
    return 1;
}
/* Rank 0's graphs as a planner builds them: the same description, no
   memory, no kernels, planning communicators. */
static cc_result fingerprint_planned(shared* sh, cc_context* ctx) {
    gpt_step_desc d = model_desc(&sh->o, &sh->cfg, 0);
    gpt_model* m = (gpt_model*)calloc(1, sizeof *m);
    gpt_op_store ops[2];
    cc_graph* g = NULL;
    cc_result rc;
    int k;
    if (!m) return CC_ERR_OUT_OF_MEMORY;
    memset(ops, 0, sizeof ops);
    rc = gpt_model_create(m, &d, NULL, ctx);
    if (rc == CC_OK) rc = gpt_step_plan_comms(m);
    for (k = 0; k < 2 && rc == CC_OK; k++) {
        rc = gpt_build_graph(m, k == 0, &g, &ops[k]);
        cc_graph_destroy(g);
        g = NULL;
        sh->planned[k] = ops[k].fingerprint;
    }
    if (rc != CC_OK) fprintf(stderr, "%s: the planned graph: %s\n", gpt_program, m->error[0] ? m->error : cc_last_error(ctx));
    gpt_op_store_free(&ops[0]);
    gpt_op_store_free(&ops[1]);
    gpt_model_free(m);
    free(m);
    return rc;
}

static cc_result fingerprint_rank(cc_rank* rank, void* user) {
    shared* sh = (shared*)user;
    gpt_kernel_table host = *sh->tr->kernels;
    rank_state* s = (rank_state*)calloc(1, sizeof *s);
    cc_result rc;
    if (!s) return CC_ERR_OUT_OF_MEMORY;
    host.alloc_zeroed = host_alloc_zeroed;
    host.free_memory = free;
    host.copy_in = host_copy;
    host.copy_out = host_copy;
    rc = rank_setup(s, sh, &host, cc_rank_context(rank), cc_rank_world_comm(rank), cc_rank_index(rank));
    if (rc == CC_OK && s->me == 0) {
        sh->fingerprint[0] = s->train_ops.fingerprint;
        sh->fingerprint[1] = s->eval_ops.fingerprint;
        rc = fingerprint_planned(sh, cc_rank_context(rank));
    }
    rank_free(s);
    return rc;
}
/* Every rank's graphs, on the in-process world whatever the trainer. 0,
   or the exit status. */
static int gpt_fingerprint_ranks(shared* sh) {
    cc_world_desc wd;
    memset(&wd, 0, sizeof wd);
    cc_world* w = NULL;
    wd.n_ranks = sh->o.tp * sh->o.dp;
    wd.ranks_per_node = sh->o.tp;
    wd.emulate_link = 0;
    if (cc_world_create(sh->ctx, &wd, &w) == CC_OK) {
        cc_result r = cc_world_run(w, fingerprint_rank, sh);
        if (r != CC_OK) {
            const char* m = cc_world_error(w);
            fprintf(stderr, "%s: %s\n", sh->tr->program, m && *m ? m : cc_result_description(r));
        }
        cc_world_destroy(w);
        return r == CC_OK ? 0 : 1;
    }
    fprintf(stderr, "%s: %s\n", sh->tr->program, cc_last_error(sh->ctx));
    return 1;
}

/* ---- the host's side: the model and data, the report, the files ------------------- */
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
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    if (!check_layout(o, &sh->cfg)) return 2;
    if (!load_text(o->data, &sh->text, &n_text, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    if (n_text == 0) {
        fprintf(stderr, "%s: data file '%s' is empty\n", gpt_program, o->data);
        return 1;
    }
    if (!make_dataset(&sh->data, sh->text, n_text, o->load ? ck_vocab : NULL, sh->cfg.V, sh->cfg.T,
                      o->data ? o->data : "the generated corpus", err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    sh->cfg.V = sh->data.V;
    if (!gpt_layout_model(&sh->cfg, &sh->layout)) {
        fprintf(stderr, "%s: out of memory\n", gpt_program);
        return 1;
    }
    sh->P = sh->layout.total;
    if (!sh->init_params) {
        if (!(sh->init_params = (float*)malloc(sizeof(float) * sh->P))) {
            fprintf(stderr, "%s: out of memory\n", gpt_program);
            return 1;
        }
        init_params(&sh->cfg, &sh->layout, sh->init_params, o->seed);
    }
    if (o->save_init && !sh->quiet && !save_checkpoint(o->save_init, &sh->cfg, &sh->data, sh->steps_done, sh->init_params, sh->P, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    if (o->dump_batches && !sh->quiet && !write_batches(o->dump_batches, o, &sh->data, sh->cfg.T, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    return 0;
}

/* What the ranks fill in, the host's context and trace; says what will
   run. 0, or the exit status. */
static int prepare_run(shared* sh) {
    const options* o = &sh->o;
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
        fprintf(stderr, "%s: out of memory\n", gpt_program);
        return 1;
    }
    if (cc_context_create(NULL, &sh->ctx) != CC_OK) {
        fprintf(stderr, "%s: cannot create a context\n", gpt_program);
        return 1;
    }
    if (o->trace && cc_trace_create(sh->ctx, &sh->trace) != CC_OK) {
        fprintf(stderr, "%s: %s\n", gpt_program, cc_last_error(sh->ctx));
        return 1;
    }
    return 0;
}

/* What the run is: the model, the data, the layout and the link. */
static void print_setup(const shared* sh) {
    const options* o = &sh->o;
    const gpt_config* c = &sh->cfg;
    printf("model: %d layers, width %d, %d heads, context %d, vocabulary %d: %zu parameters\n", c->L, c->C, c->H, c->T, c->V, sh->P);
    printf("data: %s, %zu characters (%zu train, %zu validation)\n", o->data ? o->data : "generated corpus", sh->data.n,
           sh->data.n_train, sh->data.n - sh->data.n_train);
    printf("ranks: %d = TP %d x DP %d; global batch %d x %d tokens; ", o->tp * o->dp, o->tp, o->dp, o->batch, c->T);
    if (!sh->tr->emulates_link)
        printf("collectives on the machine's own links\n");
    else if (o->emulate)
        printf("emulated link: %.0f us + %.1f us/KiB between nodes, %.0f us + %.1f us/KiB within\n", o->link_alpha_us,
               o->link_us_per_kib, o->link_alpha_us / 2, o->link_us_per_kib / 4);
    else printf("no link emulation\n");
    fflush(stdout);
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
static double mib(uint64_t bytes) { return (double)bytes / 1048576.0; }

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
    for (k = 0; k < sh->passes && o->steps > 0 && o->cuda_graphs; k++)   /* a broken capture falls back to plain launches */
        printf("cuda graphs: the training step replayed its graph in %d of %d steps%s%s (last step: %s)\n", sh->replayed[k],
               o->steps, sh->passes > 1 ? (sh->pass_order[k] ? " in the library's order" : " in program order") : "",
               sh->replayed[k] == 0 ? ": NOT REPLAYED" : "", sh->graph_why[k]);
    if (o->eval_batches > 0) printf("validation loss: %.4f (ln V = %.4f)\n", sh->val_loss, log((double)sh->cfg.V));
    if (o->sample_chars > 0) printf("sample:\n%s\n", sh->sample);
    if (o->check_step)
        printf("checked: the first step of %d order(s) ran op by op, and every op wrote only the regions it declares\n",
               sh->n_checked);
    printf("\nwhat the library did to the step (%d ops, %d collectives as written):\n", sh->n_ops, sh->n_colls);
    /* first what ran, then what was tried */
    if (sh->kept == 1)
        printf("  kept program order: the library's schedule of the step was predicted no faster (%.2f ms against %.2f ms "
               "in program order)\n", sh->pred_sched_ms, sh->pred_ms[0]);
    else if (sh->kept == 3)
        printf("  kept program order: with each order's ops profiled in place the library's plan was predicted less than %.0f%% "
               "faster (%.2f ms against %.2f ms in program order), so program order trained as the library's; its plan was:\n",
               100 * GPT_MIN_GAIN, sh->in_place_ms[1], sh->in_place_ms[0]);
    else if (sh->kept == 2)
        printf("  kept program order: the library's plan measured slower side by side (%.2f ms against %.2f ms in program "
               "order), so program order trained as the library's; its plan was:\n", sh->cal_ms[1], sh->cal_ms[0]);
    if (sh->kept != 1) {
        const char* ran = sh->kept >= 2 ? "    the" : "  ran the";
        if (sh->dropped)
            printf("%s step as written, reordered: %d ops, %d collectives; its rewrites were dropped: with its own durations "
                   "the rewritten step was predicted at %.2f ms, the step as written at %.2f ms\n", ran, sh->n_ops_run,
                   sh->n_colls_run, sh->pred_rewritten_ms, sh->pred_plain_ms);
        else if (sh->n_ops_run == sh->n_ops && sh->n_colls_run == sh->n_colls)
            printf("%s step as written, reordered: %d ops, %d collectives (no rewrite paid)\n", ran, sh->n_ops_run,
                   sh->n_colls_run);
        else
            printf("%s rewritten step, reordered: %d ops, %d collectives (%d collective(s) decomposed, %d fusion bucket(s))\n",
                   ran, sh->n_ops_run, sh->n_colls_run, o->decompose ? dec->n_changed : 0, o->fuse ? fus->n_changed : 0);
    }
    if (o->decompose)
        printf("  tried: decomposed %d collective(s) with the ops around them into chunks: %d -> %d ops; judged step %.2f -> %.2f ms "
               "(%d candidates screened, %d solved in full)\n", dec->n_changed, dec->n_ops_before, dec->n_ops_after,
               dec->makespan_before_us / 1000.0, dec->makespan_after_us / 1000.0, dec->n_evaluations, dec->n_full_judgements);
    if (o->decompose) printf("%s", sh->dec_contexts);
    else printf("  decomposition: off\n");
    if (o->fuse)
        printf("  tried: fused collectives into %d bucket(s): %d -> %d collectives, %d -> %d ops; judged step %.2f -> %.2f ms "
               "(%d candidates screened, %d solved in full)\n", fus->n_changed, fus->n_colls_before, fus->n_colls_after,
               fus->n_ops_before, fus->n_ops_after, fus->makespan_before_us / 1000.0, fus->makespan_after_us / 1000.0,
               fus->n_evaluations, fus->n_full_judgements);
    else printf("  fusion: off\n");
    printf("  scheduled %d ops (%d collectives) in %.1f ms: %d issued at another position, cross-stream waits %d -> %d\n",
           sh->n_ops_run, sh->n_colls_run, sh->sched_ms, sh->moved, sh->n_waits[0], sh->n_waits[1]);
    if (sh->in_place) {
        printf("  predicted step, ops profiled alone: %.2f ms in program order, %.2f ms scheduled (lower bound %.2f): %.2fx\n",
               sh->alone_ms[0], sh->alone_ms[1], sh->lower_bound_ms, sh->alone_ms[1] > 0 ? sh->alone_ms[0] / sh->alone_ms[1] : 0);
        printf("  predicted step, ops profiled in place (%d steps of each order): %.2f ms in program order, %.2f ms in the "
               "library's plan: %.2fx (the median of the steps, each simulated from its own times; from the mean times "
               "%.2f and %.2f ms)\n", o->profile_steps, sh->in_place_ms[0], sh->in_place_ms[1],
               sh->in_place_ms[1] > 0 ? sh->in_place_ms[0] / sh->in_place_ms[1] : 0, sh->in_place_mean_ms[0],
               sh->in_place_mean_ms[1]);
    } else
        printf("  predicted step: %.2f ms in program order, %.2f ms scheduled (lower bound %.2f): %.2fx\n", sh->pred_ms[0],
               sh->pred_sched_ms, sh->lower_bound_ms, sh->pred_sched_ms > 0 ? sh->pred_ms[0] / sh->pred_sched_ms : 0);
    printf("  predicted exposed communication: %.2f ms -> %.2f ms\n", sh->pred_exposed_ms[0], sh->pred_exposed_ms[1]);
    for (k = 0; k < 2; k++)
        printf("  memory per rank, %s: %.3f MiB at the peak (%llu bytes) = %.3f persistent (%llu bytes: parameters, gradients, "
               "AdamW state, the batch) + %.3f of activations alive at once (predicted; the plan's arena %.3f)%s\n",
               k ? "the library's order" : "program order", mib(sh->persistent + sh->peak[k]),
               (unsigned long long)(sh->persistent + sh->peak[k]), mib(sh->persistent), (unsigned long long)sh->persistent,
               mib(sh->peak[k]), mib(sh->arena[k]), !sh->cap ? "" : sh->persistent + sh->peak[k] <= sh->cap ? ", within the cap"
               : ", ABOVE THE CAP");
    if (sh->cap) printf("  memory cap per rank: %.3f MiB (%llu bytes)\n", mib(sh->cap), (unsigned long long)sh->cap);
    printf("  executor costs in the predictions (profiled): %.1f us per op, %.1f us per cross-stream wait that blocks; "
           "overlapped, compute %.2fx and collectives %.2fx as long\n", sh->costs.launch_us, sh->costs.wait_us,
           sh->costs.compute_overlap > 1 ? sh->costs.compute_overlap : 1, sh->costs.comm_overlap > 1 ? sh->costs.comm_overlap : 1);
    if (o->compare_steps > 0)
        printf("  measured side by side (median of %d steps each, mean over the ranks): %.2f ms -> %.2f ms: %.2fx; exposed communication %.2f -> %.2f ms\n",
               o->compare_steps, sh->cal_ms[0], sh->cal_ms[1], sh->cal_ms[1] > 0 ? sh->cal_ms[0] / sh->cal_ms[1] : 0,
               sh->cal_exposed_ms[0], sh->cal_exposed_ms[1]);
    if (o->compare_steps > 0 && sh->cal_plain) {
        /* predicted: as the rewrites judged it, from the durations of the step as written */
        double before = (o->decompose ? dec->makespan_before_us : fus->makespan_before_us) / 1000.0;
        double after = (o->fuse ? fus->makespan_after_us : dec->makespan_after_us) / 1000.0;
        printf("  the rewrites side by side, in the library's order (median of %d steps each, mean over the ranks): the step as "
               "written %.2f ms -> rewritten %.2f ms: %.2fx (judged %.2f -> %.2f ms: %.2fx); exposed communication %.2f -> "
               "%.2f ms\n", o->compare_steps, sh->cal_ms[2], sh->cal_ms[1], sh->cal_ms[1] > 0 ? sh->cal_ms[2] / sh->cal_ms[1] : 0,
               before, after, after > 0 ? before / after : 0, sh->cal_exposed_ms[2], sh->cal_exposed_ms[1]);
    }
    for (k = 0; k < sh->passes && o->steps > 0; k++) {
        double ms = median_of(sh->step_ms[k], o->steps);
        int ord = sh->pass_order[k] && !(sh->kept >= 2) ? 1 : 0;   /* the order that trained */
        printf("  training in %s order: median step %.2f ms, exposed communication %.2f ms, %.0f tokens/s, peak %.3f MiB a rank%s\n",
               sh->pass_order[k] ? "the library's" : "program", ms, median_of(sh->exposed_ms[k], o->steps),
               (double)o->batch * sh->cfg.T / (ms / 1000.0), mib(sh->persistent + sh->peak[ord]),
               sh->cap ? (sh->persistent + sh->peak[ord] <= sh->cap ? " (within the cap)" : " (ABOVE THE CAP)") : "");
    }
}

/* The files asked for after training: losses, gradients, checkpoint,
   trace. 0, or the exit status. */
static int write_outputs(const shared* sh) {
    const options* o = &sh->o;
    char err[512];
    int i;
    if (o->losses) {
        afile f;
        if (!afile_open(&f, o->losses, "losses", err, sizeof err)) { fprintf(stderr, "%s: %s\n", gpt_program, err); return 1; }
        for (i = 0; i < o->steps; i++) afile_printf(&f, "%.9g\n", sh->losses[sh->passes - 1][i]);
        if (!afile_commit(&f, err, sizeof err)) { fprintf(stderr, "%s: %s\n", gpt_program, err); return 1; }
    }
    if (o->dump_grads && o->steps > 0 && !write_grads(o->dump_grads, sh->loss0, sh->grads0, sh->P, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    if (o->save && !save_checkpoint(o->save, &sh->cfg, &sh->data, sh->steps_done + o->steps, sh->final_params, sh->P, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", gpt_program, err);
        return 1;
    }
    if (sh->trace) {
        if (cc_trace_write(sh->trace, o->trace) != CC_OK) {
            fprintf(stderr, "%s: %s\n", gpt_program, cc_last_error(sh->ctx));
            return 1;
        }
        printf("trace of the last step: %s\n", o->trace);
    }
    return 0;
}

/* ---- what a trainer's main calls ------------------------------------------------ */
/* The options, for trainer tr. *out: what the ranks share, or NULL where
   the program stops here (--help, a bad option, or one the trainer does
   not support). The exit status. */
static int gpt_parse(int argc, char** argv, const gpt_trainer* tr, shared** out) {
    options o;
    shared* sh;
    int pr;
    *out = NULL;
    gpt_program = tr->program;
    pr = parse_args(argc, argv, &o);
    if (pr <= 0) return pr < 0 ? 0 : 2;
    if (o.dtype != GPT_F32 && !tr->bf16 && !o.graph_fingerprint) {
        fprintf(stderr, "%s: --dtype bf16 needs the CUDA trainer (train_gpt_cuda); this one computes in float32\n", tr->program);
        return 2;
    }
    if (o.cuda_graphs && !tr->graphs) {
        fprintf(stderr, "%s: --cuda-graphs needs the CUDA trainer (train_gpt_cuda)\n", tr->program);
        return 2;
    }
    if (!(sh = (shared*)calloc(1, sizeof *sh))) {
        fprintf(stderr, "%s: out of memory\n", tr->program);
        return 1;
    }
    sh->o = o;
    sh->tr = tr;
    *out = sh;
    return 0;
}

/* The model and its data, what the ranks fill in, the host's context and
   trace; says what will run (not with --graph-fingerprint). 0, or the
   exit status. */
static int gpt_load(shared* sh) {
    int status = prepare_model(sh);
    if (status == 0) status = prepare_run(sh);
    if (status == 0 && !sh->o.graph_fingerprint && !sh->quiet) print_setup(sh);
    return status;
}

/* After the ranks ran (status: 0, or the exit status they gave): the
   fingerprints (--graph-fingerprint), or the report and the files. The
   exit status. */
static int gpt_report(const shared* sh, int status) {
    if (status != 0 || sh->quiet) return status;
    if (sh->o.graph_fingerprint) {
        printf("graph fingerprint: %016llx (training step), %016llx (evaluation)\n", (unsigned long long)sh->fingerprint[0],
               (unsigned long long)sh->fingerprint[1]);
        printf("planned graph fingerprint: %016llx (training step), %016llx (evaluation)\n", (unsigned long long)sh->planned[0],
               (unsigned long long)sh->planned[1]);
        return 0;
    }
    print_report(sh);
    return write_outputs(sh);
}

/* What gpt_parse and gpt_load made. */
static void gpt_free(shared* sh) {
    int k;
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
    gpt_layout_free(&sh->layout);
    free(sh);
}

#endif /* GPT_TRAIN_H_INCLUDED */
