/* tests/test_cuda_standin.c - the CUDA backend (concerto_cuda.h) and the
   NCCL family (concerto_nccl.h) on the CPU stand-in for cudart and NCCL
   (tests/standin/), which runs streams as threads, checks the rules a GPU
   enforces and can fail any call. The CPU backend's behaviour is the
   reference:
   - a training-like step on 2 ranks: the same weights, bit for bit, on the
     CPU world and on CUDA + NCCL, in program order and in the scheduler's
     order, with plain launches and with CUDA-graph replay;
   - every collective kind and element type on 2, 3 and 4 ranks (and the
     rows and columns of a 2x2 layout): the stand-in's results equal the CPU
     world's bit for bit;
   - ranks that issue different collectives, a rank that never comes, an
     asynchronous NCCL error mid-step: every rank fails with a message that
     names the collective (and the op), nothing hangs, the next step is
     refused with the same error, nothing leaks;
   - the same on four ranks, and the timeouts of the communicator and of
     the backend at the smallest value they accept: every rank fails within
     the timeout (each rank's time is printed), a rank that aborts is named
     by the others, and a new communicator then runs a step;
   - the k-th allocation of the context refused, for every k, through
     communicator and backend creation, plan, executor, agreement and two
     steps: CC_ERR_OUT_OF_MEMORY, nothing left, and the next run works;
   - a failure injected at every call site of the backend: a clear error
     naming the call, nothing leaked;
   - the calls a GPU needs, in the right order: no violation of the
     stand-in's rules (events recorded before waited on, every collective
     in its group, counts in elements, no host synchronisation in a
     capture), and a deliberately wrong caller that is caught;
   - two executors alternating on one graph backend: counted by hand, each
     warms up once, is captured once and is replayed from then on;
   - copy ops (strided -> the arena -> strided, cudaMemcpy2DAsync) give a
     hand computation's bytes in plain, captured and replayed steps;
   - a step that fails while its graph holds the collectives: the graphs
     are destroyed before ncclCommAbort (the stand-in, like NCCL 2.26 and
     later, refuses an abort while a graph holds them, and catches a
     caller doing it), and communicators are made with blocking = 1.

   Rank threads never call CHECK: they record; the main thread checks. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_cuda.h"
#include "../concerto_nccl.h"
#include "standin/standin.h"
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "harness.h"

#define MAXR 4

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define CHECK_OK(got, ...) CHECK((got) == CC_OK, __VA_ARGS__)

/* ---- ranks as threads --------------------------------------------------------*/
typedef struct team {
    int n;
    cc_result (*fn)(int rank, int n, void* arg);
    void* arg;
    cc_result rc[MAXR];
} team;
typedef struct member { team* t; int r; } member;

static void* member_main(void* p) {
    member* m = (member*)p;
    cudaSetDevice(m->r);
    m->t->rc[m->r] = m->t->fn(m->r, m->t->n, m->t->arg);
    return NULL;
}

static void run_team(int n, cc_result (*fn)(int, int, void*), void* arg, cc_result* rc) {
    team t;
    member m[MAXR];
    pthread_t th[MAXR];
    int r;
    memset(&t, 0, sizeof t);
    t.n = n; t.fn = fn; t.arg = arg;
    for (r = 0; r < n; r++) { m[r].t = &t; m[r].r = r; pthread_create(&th[r], NULL, member_main, &m[r]); }
    for (r = 0; r < n; r++) pthread_join(th[r], NULL);
    for (r = 0; r < n; r++) rc[r] = t.rc[r];
}

/* A barrier the rank threads share (the world's ranks have collectives for that). */
static pthread_barrier_t g_barrier;

/* ---- the step: a small data-parallel model --------------------------------------
   L layers of W weights. Per layer: forward (x = x * w + 1 / (1 + |x|)),
   backward (g = x * (rank + 1) + w, elementwise), all-reduce (average) of g,
   update (w -= 0.01 g). Compute runs in host functions on device memory
   (the stand-in's device memory is host memory) or, on the CPU backend,
   directly. */
#define L 4
#define W 64

typedef struct model {
    float* w[L];
    float* g[L];
    float* x;
    int rank;
    int on_cuda;
} model;

/* The model's tensors carved from mem ((2L + 1) W floats): x, then each
   layer's weight and gradient; on_cuda: mem is the stand-in's device memory. */
static void model_carve(model* m, float* mem, int on_cuda) {
    int l;
    m->x = mem;
    m->on_cuda = on_cuda;
    for (l = 0; l < L; l++) { m->w[l] = mem + W + 2 * l * W; m->g[l] = mem + 2 * W + 2 * l * W; }
}

typedef struct layer_arg { model* m; int l; } layer_arg;

static void fwd_work(void* p) {
    layer_arg* a = (layer_arg*)p;
    int i;
    for (i = 0; i < W; i++) a->m->x[i] = a->m->x[i] * a->m->w[a->l][i] + 1.0f / (1.0f + fabsf(a->m->x[i]));
}
static void bwd_work(void* p) {
    layer_arg* a = (layer_arg*)p;
    int i;
    for (i = 0; i < W; i++) a->m->g[a->l][i] = a->m->x[i] * (float)(a->m->rank + 1) + a->m->w[a->l][i];
}
static void upd_work(void* p) {
    layer_arg* a = (layer_arg*)p;
    int i;
    for (i = 0; i < W; i++) a->m->w[a->l][i] -= 0.01f * a->m->g[a->l][i];
}
static void CUDART_CB fwd_host(void* p) { fwd_work(p); }
static void CUDART_CB bwd_host(void* p) { bwd_work(p); }
static void CUDART_CB upd_host(void* p) { upd_work(p); }

/* op functions: on CUDA they enqueue the work as a host function on the stream */
static void run_or_enqueue(void* stream, void (*work)(void*), void (CUDART_CB* host)(void*), layer_arg* a) {
    if (a->m->on_cuda) {
        cudaError_t e = cudaLaunchHostFunc((cudaStream_t)stream, host, a);
        (void)e;   /* a failure stays in cudaGetLastError, which the backend reads */
    } else {
        work(a);
    }
}
static void fwd_op(void* s, void* p) { run_or_enqueue(s, fwd_work, fwd_host, (layer_arg*)p); }
static void bwd_op(void* s, void* p) { run_or_enqueue(s, bwd_work, bwd_host, (layer_arg*)p); }
static void upd_op(void* s, void* p) { run_or_enqueue(s, upd_work, upd_host, (layer_arg*)p); }

typedef struct step_graph { cc_graph* g; layer_arg args[3][L]; } step_graph;

/* The graph of the step: buffers x, w[l], g[l]; ops in program order. */
static cc_result build_step(cc_context* ctx, model* m, cc_comm* comm, step_graph* sg) {
    cc_buffer bx, bw[L], bg[L];
    cc_region rx = {0}, rw[L] = {0}, rg[L] = {0};
    cc_collective c;
    cc_op_desc d;
    cc_result rc;
    int l;
    char name[32];
    if ((rc = cc_graph_create(ctx, NULL, &sg->g)) != CC_OK) return rc;
    if ((rc = cc_graph_add_buffer(sg->g, "x", W * 4, &bx)) != CC_OK) return rc;
    memset(&rx, 0, sizeof rx); rx.buffer = bx; rx.n_bytes = W * 4;
    for (l = 0; l < L; l++) {
        snprintf(name, sizeof name, "w%d", l);
        if ((rc = cc_graph_add_buffer(sg->g, name, W * 4, &bw[l])) != CC_OK) return rc;
        snprintf(name, sizeof name, "g%d", l);
        if ((rc = cc_graph_add_buffer(sg->g, name, W * 4, &bg[l])) != CC_OK) return rc;
        memset(&rw[l], 0, sizeof rw[l]); rw[l].buffer = bw[l]; rw[l].n_bytes = W * 4;
        memset(&rg[l], 0, sizeof rg[l]); rg[l].buffer = bg[l]; rg[l].n_bytes = W * 4;
    }
    for (l = 0; l < L; l++) {   /* forward */
        cc_region rd[2] = {0};
        sg->args[0][l].m = m; sg->args[0][l].l = l;
        rd[0] = rx; rd[1] = rw[l];
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "fwd%d", l); d.name = name; d.duration_us = 10; d.fn = fwd_op; d.user_data = &sg->args[0][l];
        d.reads = rd; d.n_reads = 2; d.writes = &rx; d.n_writes = 1;
        if ((rc = cc_graph_add_op(sg->g, &d, NULL)) != CC_OK) return rc;
    }
    for (l = L - 1; l >= 0; l--) {   /* backward, all-reduce, update */
        cc_region rd[2] = {0};
        sg->args[1][l].m = m; sg->args[1][l].l = l;
        sg->args[2][l].m = m; sg->args[2][l].l = l;
        rd[0] = rx; rd[1] = rw[l];
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "bwd%d", l); d.name = name; d.duration_us = 10; d.fn = bwd_op; d.user_data = &sg->args[1][l];
        d.reads = rd; d.n_reads = 2; d.writes = &rg[l]; d.n_writes = 1;
        if ((rc = cc_graph_add_op(sg->g, &d, NULL)) != CC_OK) return rc;
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.reduce = CC_REDUCE_AVG; c.n_elems = W;
        c.comm = comm; c.send_buf = m->g[l]; c.recv_buf = m->g[l];
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "ar%d", l); d.name = name; d.duration_us = 30; d.stream = CC_STREAM_COMM; d.coll = &c;
        d.reads = &rg[l]; d.n_reads = 1; d.writes = &rg[l]; d.n_writes = 1;
        if ((rc = cc_graph_add_op(sg->g, &d, NULL)) != CC_OK) return rc;
        rd[0] = rg[l];
        d = (cc_op_desc){0};
        snprintf(name, sizeof name, "upd%d", l); d.name = name; d.duration_us = 5; d.fn = upd_op; d.user_data = &sg->args[2][l];
        d.reads = rd; d.n_reads = 1; d.writes = &rw[l]; d.n_writes = 1;
        if ((rc = cc_graph_add_op(sg->g, &d, NULL)) != CC_OK) return rc;
    }
    return CC_OK;
}

static void model_init(model* m, int rank) {
    int l, i;
    m->rank = rank;
    for (i = 0; i < W; i++) m->x[i] = 0.1f * (float)((i * 7) % 13) - 0.5f;
    for (l = 0; l < L; l++)
        for (i = 0; i < W; i++) { m->w[l][i] = 0.05f * (float)((i + 3 * l) % 11) - 0.2f; m->g[l][i] = 0; }
}

/* x is reset before every step, so every step sees the same input. */
static void reset_x(model* m) { int i; for (i = 0; i < W; i++) m->x[i] = 0.1f * (float)((i * 7) % 13) - 0.5f; }

/* ---- running the step on the CPU world (the reference) -------------------------*/
typedef struct step_run {
    int scheduled;     /* 0: program order, 1: the scheduler's */
    int use_graphs;    /* CUDA only */
    int steps;
    float w[MAXR][L][W];
    char msg[MAXR][600];
    int replayed[MAXR];
    int n_waits[MAXR];
} step_run;

static cc_result run_steps(cc_context* ctx, model* m, cc_comm* comm, const cc_backend* be, step_run* S, int r) {
    step_graph sg;
    cc_schedule sched;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_result rc;
    int s, l;
    memset(&sg, 0, sizeof sg);
    memset(&sched, 0, sizeof sched);
    rc = build_step(ctx, m, comm, &sg);
    if (rc == CC_OK && S->scheduled) rc = cc_sched_solve(ctx, sg.g, NULL, &sched);
    if (rc == CC_OK) rc = cc_plan_create(ctx, sg.g, S->scheduled ? sched.order : NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(ctx, plan, be, &x);
    if (rc == CC_OK) rc = cc_exec_agree(x, comm);
    if (rc == CC_OK) S->n_waits[r] = cc_plan_n_waits(plan);
    for (s = 0; s < S->steps && rc == CC_OK; s++) {
        reset_x(m);
        rc = cc_exec_step(x);
    }
    if (rc == CC_OK && m->on_cuda) S->replayed[r] = cc_cuda_backend_graph_status(be, NULL);
    if (rc != CC_OK) snprintf(S->msg[r], sizeof S->msg[r], "%s", cc_last_error(ctx));
    for (l = 0; l < L; l++) memcpy(S->w[r][l], m->w[l], W * 4);
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_schedule_release(ctx, &sched);
    cc_graph_destroy(sg.g);
    return rc;
}

static cc_result world_rank(cc_rank* rank, void* p) {
    step_run* S = (step_run*)p;
    int r = cc_rank_index(rank);
    cc_context* ctx = cc_rank_context(rank);
    cc_backend be;
    model m;
    float mem[(2 * L + 1) * W];
    cc_result rc;
    memset(&m, 0, sizeof m);
    model_carve(&m, mem, 0);
    model_init(&m, r);
    if ((rc = cc_cpu_backend_create(rank, &be)) != CC_OK) return rc;
    rc = run_steps(ctx, &m, cc_rank_world_comm(rank), &be, S, r);
    cc_backend_destroy(&be);
    return rc;
}

static ncclUniqueId g_id;

/* A rank on CUDA + NCCL: its context, communicator of all ranks, backend. */
typedef struct cuda_rank { cc_context* ctx; cc_comm* comm; cc_backend be; } cuda_rank;

static cc_result cuda_rank_open(cuda_rank* cr, int r, int n, int use_graphs, double timeout_s) {
    cc_nccl_desc nd = {0};
    cc_cuda_backend_desc bd = {0};
    cc_result rc;
    memset(cr, 0, sizeof *cr);
    if ((rc = cc_context_create(NULL, &cr->ctx)) != CC_OK) return rc;
    nd.name = "world";
    nd.timeout_s = timeout_s;
    if ((rc = cc_nccl_comm_init_rank(cr->ctx, &g_id, n, r, &nd, &cr->comm)) != CC_OK) return rc;
    bd.use_graphs = use_graphs;
    bd.timeout_s = timeout_s;
    return cc_cuda_backend_create(cr->ctx, &bd, &cr->be);
}

static void cuda_rank_close(cuda_rank* cr) {
    cc_backend_destroy(&cr->be);
    cc_comm_destroy(cr->comm);
    cc_context_destroy(cr->ctx);
}

static cc_result cuda_step_rank(int r, int n, void* p) {
    step_run* S = (step_run*)p;
    cuda_rank cr;
    model m;
    float* mem = NULL;
    cc_result rc;
    memset(&m, 0, sizeof m);
    rc = cuda_rank_open(&cr, r, n, S->use_graphs, 20);
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK) {
        model_carve(&m, mem, 1);
        model_init(&m, r);
        rc = run_steps(cr.ctx, &m, cr.comm, &cr.be, S, r);
    } else {
        snprintf(S->msg[r], sizeof S->msg[r], "set-up: %s", cr.ctx ? cc_last_error(cr.ctx) : "no context");
    }
    if (mem) cudaFree(mem);
    cuda_rank_close(&cr);
    return rc;
}

static int same_weights(const step_run* a, const step_run* b, int n) {
    return memcmp(a->w, b->w, sizeof(float) * (size_t)n * L * W) == 0;
}

static void expect_clean(const char* what) {
    int i, nv = standin_violation_count();
    CHECK(nv == 0, "%s: no rule of the GPU broken (%d violations%s%s)", what, nv, nv ? "; first: " : "",
          nv ? standin_violation(0) : "");
    for (i = 1; i < nv && i < 4; i++) printf("  also: %s\n", standin_violation(i));
    CHECK_INT(standin_live_handles(), 0, "%s: every stream, event, graph, communicator and allocation freed", what);
}

static void test_step_numbers(void) {
    step_run ref, got;
    cc_world_desc wd = {0};
    cc_world* w = NULL;
    cc_context* ctx = NULL;
    cc_result rc[MAXR];
    int sched, graphs, r;
    cc_context_create(NULL, &ctx);
    wd.n_ranks = 2;
    if (cc_world_create(ctx, &wd, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    memset(&ref, 0, sizeof ref);
    ref.steps = 3;
    CHECK_OK(cc_world_run(w, world_rank, &ref), "the CPU world runs the step in program order: %s", cc_world_error(w));
    for (sched = 0; sched < 2; sched++)
        for (graphs = 0; graphs < 2; graphs++) {
            standin_reset();
            standin_require_groups(1);
            ncclGetUniqueId(&g_id);
            memset(&got, 0, sizeof got);
            got.steps = 3; got.scheduled = sched; got.use_graphs = graphs;
            run_team(2, cuda_step_rank, &got, rc);
            for (r = 0; r < 2; r++)
                CHECK_OK(rc[r], "rank %d, %s order, %s: the step runs on CUDA + NCCL (%s)", r, sched ? "scheduled" : "program",
                         graphs ? "graph replay" : "plain launches", got.msg[r]);
            CHECK(same_weights(&ref, &got, 2), "%s order, %s: the weights after 3 steps equal the CPU world's bit for bit",
                  sched ? "scheduled" : "program", graphs ? "graph replay" : "plain launches");
            if (graphs) CHECK(got.replayed[0] && got.replayed[1], "steps replay a CUDA graph on both ranks");
            if (sched) CHECK(got.n_waits[0] > 0, "the scheduled plan has cross-stream waits (%d)", got.n_waits[0]);
            expect_clean(sched ? (graphs ? "scheduled, graphs" : "scheduled, plain") : (graphs ? "program, graphs" : "program, plain"));
        }
    cc_world_destroy(w);
    cc_context_destroy(ctx);
}

/* ---- every collective kind and element type ------------------------------------------*/
#define NCASE_MAX 64
#define CNT 5
typedef struct coll_case { cc_coll_kind kind; cc_dtype dt; cc_reduce_op op; int root; } coll_case;
static coll_case g_cases[NCASE_MAX];
static int g_ncases;

static void make_cases(void) {
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER, CC_COLL_BROADCAST,
                                          CC_COLL_SEND, CC_COLL_ALL_TO_ALL };
    static const cc_dtype dts[] = { CC_DTYPE_FLOAT32, CC_DTYPE_FLOAT64, CC_DTYPE_INT32, CC_DTYPE_FLOAT16, CC_DTYPE_BFLOAT16 };
    int k, d, o;
    g_ncases = 0;
    for (k = 0; k < 6; k++)
        for (d = 0; d < 5; d++) {
            int reduces = kinds[k] == CC_COLL_ALL_REDUCE || kinds[k] == CC_COLL_REDUCE_SCATTER;
            for (o = 0; o < (reduces ? 3 : 1); o++) {
                if (g_ncases == NCASE_MAX) return;
                g_cases[g_ncases].kind = kinds[k]; g_cases[g_ncases].dt = dts[d];
                g_cases[g_ncases].op = (cc_reduce_op)o; g_cases[g_ncases].root = g_ncases % 2;
                g_ncases++;
            }
        }
}

static size_t esize(cc_dtype dt) { return dt == CC_DTYPE_FLOAT64 ? 8 : dt == CC_DTYPE_INT32 || dt == CC_DTYPE_FLOAT32 ? 4 : 2; }

/* element i of rank r's input: small numbers, exact in every type */
static void fill_in(void* buf, cc_dtype dt, int r, size_t n, int salt) {
    size_t i;
    for (i = 0; i < n; i++) {
        int v = (int)((r * 37 + (int)i * 11 + salt * 5) % 23) - 11;
        float f = (float)v * 0.375f;
        switch (dt) {
            case CC_DTYPE_FLOAT32: ((float*)buf)[i] = f; break;
            case CC_DTYPE_FLOAT64: ((double*)buf)[i] = (double)f + 1e-9 * v; break;
            case CC_DTYPE_INT32: ((int32_t*)buf)[i] = v * 1000003; break;
            case CC_DTYPE_FLOAT16: ((uint16_t*)buf)[i] = (uint16_t)(v < 0 ? 0x8000u | (0x3800u + (uint16_t)(-v) * 7u) : 0x3800u + (uint16_t)v * 7u); break;
            default: ((uint16_t*)buf)[i] = (uint16_t)(v < 0 ? 0x8000u | (0x3F00u + (uint16_t)(-v) * 3u) : 0x3F00u + (uint16_t)v * 3u); break;
        }
    }
}

/* Outputs of every case, per layout (0: all ranks; 1: rows of 2x2; 2: columns), per rank. */
typedef struct coll_out { unsigned char out[3][NCASE_MAX][MAXR][CNT * MAXR * 8]; cc_result rc[3][NCASE_MAX][MAXR]; char msg[MAXR][600]; } coll_out;

/* Runs every case on comm (this rank is me of size n); run: cc_comm_run. */
static void run_cases(cc_comm* comm, int layout, int wr, coll_out* O, void* (*dev_alloc)(size_t), void (*dev_free)(void*)) {
    int k, me = cc_comm_rank(comm), n = cc_comm_size(comm);
    for (k = 0; k < g_ncases; k++) {
        const coll_case* cs = &g_cases[k];
        size_t es = esize(cs->dt), n_in = CNT, n_out = CNT;
        void *in, *out;
        cc_collective c;
        if (cs->kind == CC_COLL_REDUCE_SCATTER || cs->kind == CC_COLL_ALL_TO_ALL) n_in = CNT * (size_t)n;
        if (cs->kind == CC_COLL_ALL_GATHER || cs->kind == CC_COLL_ALL_TO_ALL) n_out = CNT * (size_t)n;
        in = dev_alloc(n_in * es);
        out = dev_alloc(n_out * es);
        fill_in(in, cs->dt, wr, n_in, k);
        memset(out, 0x5A, n_out * es);
        memset(&c, 0, sizeof c);
        c.kind = cs->kind; c.dtype = cs->dt; c.reduce = cs->op; c.n_elems = CNT; c.comm = comm;
        c.send_buf = in; c.recv_buf = out;
        if (cs->kind == CC_COLL_BROADCAST) c.peer = cs->root % n;
        if (cs->kind == CC_COLL_SEND) {   /* a ring: even members send first, odd ones receive first */
            int to = (me + 1) % n, from = (me + n - 1) % n, pass;
            cc_result r1 = CC_OK;
            for (pass = 0; pass < 2 && r1 == CC_OK; pass++) {
                int sending = (pass == 0) == (me % 2 == 0);
                if (n == 1) break;
                c.kind = sending ? CC_COLL_SEND : CC_COLL_RECV;
                c.peer = sending ? to : from;
                r1 = cc_comm_run(&c);
            }
            O->rc[layout][k][wr] = r1;
        } else {
            O->rc[layout][k][wr] = cc_comm_run(&c);
        }
        memcpy(O->out[layout][k][wr], out, n_out * es);
        dev_free(in);
        dev_free(out);
    }
}

static void* host_alloc(size_t n) { return malloc(n); }
static void host_free(void* p) { free(p); }
static void* cuda_alloc(size_t n) { void* p = NULL; return cudaMalloc(&p, n) == cudaSuccess ? p : NULL; }
static void cuda_free(void* p) { cudaFree(p); }

static int g_coll_n;
static cc_result coll_world_rank(cc_rank* rank, void* p) {
    coll_out* O = (coll_out*)p;
    int r = cc_rank_index(rank);
    cc_comm *row = NULL, *col = NULL;
    run_cases(cc_rank_world_comm(rank), 0, r, O, host_alloc, host_free);
    if (g_coll_n == 4) {
        cc_comm_split(cc_rank_world_comm(rank), r / 2, r, &row);
        cc_comm_split(cc_rank_world_comm(rank), r % 2, r, &col);
        run_cases(row, 1, r, O, host_alloc, host_free);
        run_cases(col, 2, r, O, host_alloc, host_free);
    }
    return CC_OK;
}
static cc_result coll_cuda_rank(int r, int n, void* p) {
    coll_out* O = (coll_out*)p;
    cuda_rank cr;
    cc_comm *row = NULL, *col = NULL;
    cc_result rc = cuda_rank_open(&cr, r, n, 0, 20);
    if (rc != CC_OK) { snprintf(O->msg[r], sizeof O->msg[r], "%s", cr.ctx ? cc_last_error(cr.ctx) : "?"); cuda_rank_close(&cr); return rc; }
    run_cases(cr.comm, 0, r, O, cuda_alloc, cuda_free);
    if (n == 4) {
        if ((rc = cc_comm_split(cr.comm, r / 2, r, &row)) == CC_OK) run_cases(row, 1, r, O, cuda_alloc, cuda_free);
        if (rc == CC_OK && (rc = cc_comm_split(cr.comm, r % 2, r, &col)) == CC_OK) run_cases(col, 2, r, O, cuda_alloc, cuda_free);
        if (rc != CC_OK) snprintf(O->msg[r], sizeof O->msg[r], "split: %s", cc_last_error(cr.ctx));
    }
    cc_comm_destroy(row);
    cc_comm_destroy(col);
    cuda_rank_close(&cr);
    return rc;
}

static void test_collectives(void) {
    coll_out* ref = (coll_out*)calloc(1, sizeof *ref);
    coll_out* got = (coll_out*)calloc(1, sizeof *got);
    cc_context* ctx = NULL;
    int n;
    make_cases();
    cc_context_create(NULL, &ctx);
    for (n = 2; n <= 4; n++) {
        cc_world_desc wd = {0};
        cc_world* w = NULL;
        cc_result rc[MAXR];
        int k, r, lay, bad = 0, failed = 0;
        char first[300] = "";
        memset(ref, 0, sizeof *ref); memset(got, 0, sizeof *got);
        g_coll_n = n;
        wd.n_ranks = n;
        if (cc_world_create(ctx, &wd, &w) != CC_OK) { CHECK(0, "world"); break; }
        CHECK_OK(cc_world_run(w, coll_world_rank, ref), "%d ranks: the CPU world runs every case", n);
        cc_world_destroy(w);
        standin_reset();
        standin_require_groups(1);
        ncclGetUniqueId(&g_id);
        run_team(n, coll_cuda_rank, got, rc);
        for (r = 0; r < n; r++) CHECK_OK(rc[r], "%d ranks: rank %d set up on NCCL (%s)", n, r, got->msg[r]);
        for (lay = 0; lay < (n == 4 ? 3 : 1); lay++)
            for (k = 0; k < g_ncases; k++)
                for (r = 0; r < n; r++) {
                    if (got->rc[lay][k][r] != CC_OK || ref->rc[lay][k][r] != CC_OK) { failed++; continue; }
                    if (memcmp(got->out[lay][k][r], ref->out[lay][k][r], sizeof got->out[lay][k][r]) != 0) {
                        if (!bad++) snprintf(first, sizeof first, "layout %d case %d (kind %d dtype %d op %d) rank %d", lay, k,
                                             (int)g_cases[k].kind, (int)g_cases[k].dt, (int)g_cases[k].op, r);
                    }
                }
        CHECK_INT(failed, 0, "%d ranks: every case ran on both", n);
        CHECK(bad == 0, "%d ranks%s: every kind x type x reduction gives the CPU world's bytes (%d differ; first: %s)", n,
              n == 4 ? " (all, rows and columns of 2x2)" : "", bad, first);
        expect_clean(n == 2 ? "collectives on 2 ranks" : n == 3 ? "collectives on 3 ranks" : "collectives on 4 ranks");
    }
    cc_context_destroy(ctx);
    free(ref); free(got);
}

/* ---- failures that span ranks ----------------------------------------------------------*/
typedef struct fail_run {
    int mode;                       /* 0: different counts; 1: rank 1 never comes; 2: async error */
    cc_result first[MAXR], next[MAXR];
    char first_msg[MAXR][600], next_msg[MAXR][600];
    double secs[MAXR];
} fail_run;

static cc_result fail_rank(int r, int n, void* p) {
    fail_run* F = (fail_run*)p;
    cuda_rank cr;
    model m;
    float* mem = NULL;
    step_graph sg;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    double t0;
    cc_result rc = cuda_rank_open(&cr, r, n, 0, 1.0);
    memset(&sg, 0, sizeof sg);
    memset(&m, 0, sizeof m);
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc != CC_OK) { F->first[r] = rc; snprintf(F->first_msg[r], 600, "set-up: %s", cc_last_error(cr.ctx)); goto out; }
    model_carve(&m, mem, 1);
    model_init(&m, r);
    t0 = now_s();
    if (F->mode == 0) {   /* cc_comm_run with different counts: NCCL would hang */
        cc_collective c;
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.n_elems = r == 0 ? 4 : 8; c.comm = cr.comm; c.send_buf = mem; c.recv_buf = mem;
        F->first[r] = cc_comm_run(&c);
        snprintf(F->first_msg[r], 600, "%s", cc_last_error(cr.ctx));
        F->next[r] = cc_comm_run(&c);
        snprintf(F->next_msg[r], 600, "%s", cc_last_error(cr.ctx));
    } else {
        rc = build_step(cr.ctx, &m, cr.comm, &sg);
        if (rc == CC_OK) rc = cc_plan_create(cr.ctx, sg.g, NULL, &plan);
        if (rc == CC_OK) rc = cc_exec_create(cr.ctx, plan, &cr.be, &x);
        if (rc == CC_OK) rc = cc_exec_agree(x, cr.comm);
        pthread_barrier_wait(&g_barrier);
        t0 = now_s();
        if (rc == CC_OK && F->mode == 1 && r == 1) {
            pthread_barrier_wait(&g_barrier);   /* rank 1 comes only after rank 0 has failed */
            F->first[r] = cc_exec_step(x);
        } else if (rc == CC_OK) {
            F->first[r] = cc_exec_step(x);
            if (F->mode == 1) pthread_barrier_wait(&g_barrier);
        } else {
            F->first[r] = rc;
        }
        snprintf(F->first_msg[r], 600, "%s", cc_last_error(cr.ctx));
        if (x) {
            F->next[r] = cc_exec_step(x);
            snprintf(F->next_msg[r], 600, "%s", cc_last_error(cr.ctx));
        }
    }
    F->secs[r] = now_s() - t0;
out:
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_graph_destroy(sg.g);
    if (mem) cudaFree(mem);
    cuda_rank_close(&cr);
    return CC_OK;
}

static void test_failures_across_ranks(void) {
    int mode, r;
    cc_result rc[MAXR];
    static const char* what[] = { "different counts", "a rank that never comes", "an asynchronous NCCL error" };
    pthread_barrier_init(&g_barrier, NULL, 2);
    for (mode = 0; mode < 3; mode++) {
        fail_run F;
        memset(&F, 0, sizeof F);
        F.mode = mode;
        standin_reset();
        standin_require_groups(1);
        if (mode == 2) standin_nccl_inject_async_error(0, 2, ncclSystemError);   /* rank 0's third collective */
        ncclGetUniqueId(&g_id);
        run_team(2, fail_rank, &F, rc);
        for (r = 0; r < 2; r++) {
            CHECK(F.first[r] != CC_OK, "%s: rank %d fails (%s)", what[mode], r, F.first_msg[r]);
            CHECK(F.secs[r] < 15, "%s: rank %d does not hang (%.1f s)", what[mode], r, F.secs[r]);
            CHECK(strstr(F.first_msg[r], "all_reduce") != NULL, "%s: rank %d's message names the collective", what[mode], r);
            if (mode > 0 && !(mode == 1 && r == 1))
                CHECK(strstr(F.first_msg[r], "'ar") != NULL,
                      "%s: rank %d's message names the op (%s)", what[mode], r, F.first_msg[r]);
            CHECK(F.next[r] != CC_OK, "%s: rank %d: the next call is refused", what[mode], r);
            if (mode > 0 && r == 0) {
                char op[64] = "";
                const char* at = strstr(F.first_msg[r], "at op '");
                if (at) snprintf(op, sizeof op, "%.*s", (int)(strcspn(at + 7, "'") + 8), at);
                CHECK(F.next[r] == F.first[r] && op[0] && strstr(F.next_msg[r], op),
                      "%s: rank 0: the next step fails with the same error, naming %s (%s)", what[mode], op, F.next_msg[r]);
            }
        }
        if (mode == 1) CHECK_INT(F.first[0], CC_ERR_TIMEOUT, "a rank that never comes: rank 0 times out");
        CHECK_INT(standin_live_handles(), 0, "%s: every stream, event, communicator and allocation freed", what[mode]);
        standin_clear_violations();   /* mismatches and hangs are what this test makes */
        standin_reset();
        CHECK_INT(standin_violation_count(), 0, "%s: nothing left running", what[mode]);
    }
    pthread_barrier_destroy(&g_barrier);
}

/* ---- faults on four ranks, each rank timed -------------------------------------------
   0: rank 2 fails mid-step (its second collective gets an NCCL error; its
      backend aborts the communicator); 1: rank 3 never comes to the step;
   2: rank 3 issues a collective of another count (cc_comm_run), which NCCL
      cannot tell and the stand-in hangs on; 3: rank 3 never comes to a
      collective (cc_comm_run) on a communicator whose timeout_s is the
      smallest it accepts (the smallest positive double); 4: the CUDA
      backend's timeout_s at that smallest value: the first wait of every
      rank (cc_exec_agree's copy) times out. Every other rank fails, naming
      the op (0, 1), the collective (2, 3) or the wait (4), and, where
      anything can tell (0: the rank that aborted), the rank at fault; then
      a new communicator runs a step. */
#define NF 4
typedef struct fault4_run {
    int mode;
    cc_result res[NF];
    char msg[NF][700];
    double secs[NF];
} fault4_run;
static pthread_barrier_t g_barrier4;

static cc_result fault4_rank(int r, int n, void* p) {
    fault4_run* F = (fault4_run*)p;
    cuda_rank cr;
    model m;
    float* mem = NULL;
    step_graph sg;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    double t0, tiny = nextafter(0.0, 1.0);
    int absent = (F->mode == 1 || F->mode == 3) && r == 3;
    cc_result rc = cuda_rank_open(&cr, r, n, 0, F->mode == 3 ? tiny : 1.0);
    memset(&sg, 0, sizeof sg);
    memset(&m, 0, sizeof m);
    if (rc == CC_OK && F->mode == 4) {   /* the backend's timeout alone */
        cc_cuda_backend_desc bd = {0};
        cc_backend_destroy(&cr.be);
        bd.timeout_s = tiny;
        rc = cc_cuda_backend_create(cr.ctx, &bd, &cr.be);
    }
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK) {
        model_carve(&m, mem, 1);
        model_init(&m, r);
        rc = build_step(cr.ctx, &m, cr.comm, &sg);
    }
    if (rc == CC_OK) rc = cc_plan_create(cr.ctx, sg.g, NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(cr.ctx, plan, &cr.be, &x);
    if (rc == CC_OK && F->mode < 3) rc = cc_exec_agree(x, cr.comm);
    pthread_barrier_wait(&g_barrier4);
    t0 = now_s();
    if (rc != CC_OK) F->res[r] = rc;
    else if (absent) F->res[r] = CC_OK;
    else if (F->mode == 2 || F->mode == 3) {
        cc_collective c;
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.n_elems = F->mode == 2 && r == 3 ? 4 : 8; c.comm = cr.comm; c.send_buf = mem; c.recv_buf = mem;
        F->res[r] = cc_comm_run(&c);
    } else {
        if (F->mode == 4) rc = cc_exec_agree(x, cr.comm);
        F->res[r] = rc == CC_OK ? cc_exec_step(x) : rc;
    }
    F->secs[r] = now_s() - t0;
    snprintf(F->msg[r], sizeof F->msg[r], "%s", F->res[r] == CC_OK ? "" : cc_last_error(cr.ctx));
    pthread_barrier_wait(&g_barrier4);   /* the absent rank leaves only once the others have failed */
    (void)cudaDeviceSynchronize();       /* the host functions of a failed step read sg and m */
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_graph_destroy(sg.g);
    if (mem) cudaFree(mem);
    cuda_rank_close(&cr);
    return CC_OK;
}

static void test_faults_four_ranks(void) {
    static const char* what[] = { "rank 2 fails mid-step", "rank 3 never comes", "rank 3 issues another count",
                                  "rank 3 never comes, communicator's smallest timeout", "the backend's smallest timeout" };
    int mode, r;
    cc_result rc[MAXR];
    pthread_barrier_init(&g_barrier4, NULL, NF);
    for (mode = 0; mode < 5; mode++) {
        fault4_run F;
        step_run S;
        int absent = mode == 1 || mode == 3, n_timeout = 0;
        memset(&F, 0, sizeof F);
        F.mode = mode;
        standin_reset();
        standin_require_groups(1);
        if (mode == 0) standin_nccl_inject_async_error(2, 1, ncclSystemError);   /* rank 2's second collective */
        ncclGetUniqueId(&g_id);
        run_team(NF, fault4_rank, &F, rc);
        printf("     time to the error, NCCL stand-in, %s:", what[mode]);
        for (r = 0; r < NF; r++)
            if (!(absent && r == 3)) printf(" rank %d %.6f s (%s)", r, F.secs[r], cc_result_description(F.res[r]));
        printf("\n");
        for (r = 0; r < NF; r++) {
            if (absent && r == 3) continue;
            CHECK(F.res[r] != CC_OK, "%s: rank %d fails (%s)", what[mode], r, F.msg[r]);
            CHECK(F.secs[r] < 15, "%s: rank %d: within the timeout (%.6f s)", what[mode], r, F.secs[r]);
            if (mode == 2 || mode == 3) CHECK(strstr(F.msg[r], "all_reduce") != NULL, "%s: rank %d names the collective", what[mode], r);
            else if (mode == 4)
                CHECK(strstr(F.msg[r], "within 4.94066e-324 s") != NULL || strstr(F.msg[r], "aborted the communicator") != NULL,
                      "%s: rank %d names the wait and the timeout, or the rank that aborted (%s)", what[mode], r, F.msg[r]);
            else CHECK(strstr(F.msg[r], "'ar") != NULL, "%s: rank %d names the op (%s)", what[mode], r, F.msg[r]);
            if (mode == 0 && r != 2)
                CHECK(strstr(F.msg[r], "rank 2 aborted") != NULL, "%s: rank %d names rank 2 (%s)", what[mode], r, F.msg[r]);
            /* a timeout, or the abort of a peer that timed out first */
            if (mode != 0 && mode != 2)
                CHECK(F.res[r] == CC_ERR_TIMEOUT || (F.res[r] == CC_ERR_BACKEND && strstr(F.msg[r], "aborted the communicator")),
                      "%s: rank %d: CC_ERR_TIMEOUT, or a peer's abort (%s)", what[mode], r, F.msg[r]);
            n_timeout += F.res[r] == CC_ERR_TIMEOUT;
        }
        if (mode != 0 && mode != 2) CHECK(n_timeout > 0, "%s: a rank timed out (%d)", what[mode], n_timeout);
        CHECK_INT(standin_live_handles(), 0, "%s: every stream, event, communicator and allocation freed", what[mode]);
        standin_clear_violations();   /* the fault's own (mismatch, hang) */
        /* a new communicator afterwards, without a reset */
        if (mode == 0) standin_nccl_inject_async_error(-1, 0, ncclSuccess);
        ncclGetUniqueId(&g_id);
        memset(&S, 0, sizeof S);
        S.steps = 1;
        run_team(NF, cuda_step_rank, &S, rc);
        for (r = 0; r < NF; r++) CHECK(rc[r] == CC_OK, "%s: then a new communicator runs a step on rank %d (%s)", what[mode], r, S.msg[r]);
        standin_reset();
        CHECK_INT(standin_violation_count(), 0, "%s: nothing left running", what[mode]);
    }
    pthread_barrier_destroy(&g_barrier4);
}

/* ---- a failure at every call site ----------------------------------------------------*/
/* One rank: backend, agreement, profile, two steps; the result of the first
   call that fails and its message. */
typedef struct site_run { cc_result rc, next; char msg[600], next_msg[600]; int stage; } site_run;

static cc_result site_rank(int r, int n, void* p) {
    site_run* S = (site_run*)p;
    cc_context* ctx = NULL;
    cc_comm* comm = NULL;
    cc_backend be = { NULL, NULL };
    cc_cuda_backend_desc bd = {0};
    model m;
    float* mem = NULL;
    step_graph sg;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_result rc;
    memset(&sg, 0, sizeof sg);
    memset(&m, 0, sizeof m);
    cc_context_create(NULL, &ctx);
    bd.timeout_s = 2;
    S->stage = 0;
    rc = cc_nccl_comm_init_rank(ctx, &g_id, n, r, NULL, &comm);
    if (rc == CC_OK) { S->stage = 1; rc = cc_cuda_backend_create(ctx, &bd, &be); }
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) { S->stage = -1; rc = CC_ERR_OUT_OF_MEMORY; }
    if (rc == CC_OK) {
        model_carve(&m, mem, 1);
        model_init(&m, r);
        rc = build_step(ctx, &m, comm, &sg);
    }
    if (rc == CC_OK) rc = cc_plan_create(ctx, sg.g, NULL, &plan);
    if (rc == CC_OK) { S->stage = 2; rc = cc_exec_create(ctx, plan, &be, &x); }
    if (rc == CC_OK) { S->stage = 3; rc = cc_exec_agree(x, comm); }
    (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
    if (rc == CC_OK) { S->stage = 4; rc = cc_exec_profile_ops(x, 2, comm); }
    if (rc == CC_OK) { S->stage = 5; rc = cc_exec_step(x); }
    if (rc == CC_OK) { S->stage = 6; rc = cc_exec_step(x); }
    S->rc = rc;
    snprintf(S->msg, sizeof S->msg, "%s", cc_last_error(ctx));
    if (rc != CC_OK && S->stage >= 5) {
        S->next = cc_exec_step(x);
        snprintf(S->next_msg, sizeof S->next_msg, "%s", cc_last_error(ctx));
    }
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_graph_destroy(sg.g);
    if (mem) cudaFree(mem);
    cc_backend_destroy(&be);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
    return rc;
}

static void test_every_call_site(void) {
    static const char* calls[] = {
        "cudaStreamCreateWithPriority", "cudaStreamCreateWithFlags", "cudaDeviceGetStreamPriorityRange",
        "cudaEventCreateWithFlags", "cudaEventRecord", "cudaStreamWaitEvent", "cudaEventQuery", "cudaEventElapsedTime",
        "cudaStreamQuery", "cudaMemcpyAsync", "ncclAllReduce", "ncclAllGather", "ncclGroupEnd", "ncclCommGetAsyncError"
    };
    int c, total = 0;
    cc_result rc[MAXR];
    for (c = 0; c < (int)(sizeof calls / sizeof calls[0]); c++) {
        site_run S;
        int count, k, named = 0, clean = 0, sticky = 0, failed = 0, steps = 0;
        char first_bad[700] = "";
        standin_reset();
        ncclGetUniqueId(&g_id);
        memset(&S, 0, sizeof S);
        run_team(1, site_rank, &S, rc);
        count = standin_call_count(calls[c]);
        if (S.rc != CC_OK) { CHECK(0, "%s: the clean run succeeds (%s)", calls[c], S.msg); continue; }
        for (k = 1; k <= count; k++) {
            standin_reset();
            ncclGetUniqueId(&g_id);
            standin_fail_call(calls[c], k, strncmp(calls[c], "nccl", 4) == 0 ? (int)ncclSystemError : (int)cudaErrorLaunchFailure);
            memset(&S, 0, sizeof S);
            run_team(1, site_rank, &S, rc);
            if (S.rc == CC_OK) continue;   /* a call whose failure the backend tolerates (a poll that is retried) */
            failed++;
            if (strstr(S.msg, calls[c])) named++;
            else if (!first_bad[0]) snprintf(first_bad, sizeof first_bad, "call %d: %s", k, S.msg);
            if (S.stage >= 5) { steps++; if (S.next != CC_OK && strstr(S.next_msg, calls[c])) sticky++; }
            if (standin_live_handles() == 0) { standin_reset(); if (standin_violation_count() == 0) clean++; }
        }
        total += failed;
        CHECK(failed > 0 || count == 0, "%s: failing one of its %d calls fails the run (%d times)", calls[c], count, failed);
        CHECK_INT(named, failed, "%s: every such failure names the call (%s)", calls[c], first_bad);
        CHECK_INT(sticky, steps, "%s: a failed step fails the next one, naming the same call", calls[c]);
        CHECK_INT(clean, failed, "%s: nothing leaked and nothing left running after the failure", calls[c]);
    }
    CHECK(total >= 20, "failures injected and reported: %d", total);
}

/* ---- allocation failures in the backend's and communicator's creation -------------------
   One rank; a context whose allocator refuses the k-th request: every k of
   cc_nccl_comm_init_rank, cc_cuda_backend_create, plan, executor,
   agreement and a step (plain launches and CUDA graphs) gives
   CC_ERR_OUT_OF_MEMORY or CC_OK, leaves nothing allocated (the context's
   blocks and the stand-in's handles), and the next run succeeds. */
typedef struct fail_alloc { pthread_mutex_t mu; long n_calls, fail_at, live; } fail_alloc;
static void* fa_alloc(size_t n, void* u) {
    fail_alloc* a = (fail_alloc*)u;
    void* p = NULL;
    pthread_mutex_lock(&a->mu);
    if (++a->n_calls != a->fail_at && (p = malloc(n)) != NULL) a->live++;
    pthread_mutex_unlock(&a->mu);
    return p;
}
static void* fa_realloc(void* q, size_t n, void* u) {
    fail_alloc* a = (fail_alloc*)u;
    void* p = NULL;
    pthread_mutex_lock(&a->mu);
    if (++a->n_calls != a->fail_at && (p = realloc(q, n)) != NULL && !q) a->live++;
    pthread_mutex_unlock(&a->mu);
    return p;
}
static void fa_free(void* q, void* u) {
    fail_alloc* a = (fail_alloc*)u;
    if (!q) return;
    pthread_mutex_lock(&a->mu);
    free(q);
    a->live--;
    pthread_mutex_unlock(&a->mu);
}

typedef struct oom_run { fail_alloc* a; int use_graphs; cc_result rc; char msg[600]; } oom_run;
static cc_result oom_rank(int r, int n, void* p) {
    oom_run* O = (oom_run*)p;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_comm* comm = NULL;
    cc_backend be = { NULL, NULL };
    cc_cuda_backend_desc bd = {0};
    model m;
    float* mem = NULL;
    step_graph sg;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_result rc;
    (void)r;
    memset(&sg, 0, sizeof sg);
    memset(&m, 0, sizeof m);
    cd.allocator.alloc_fn = fa_alloc;
    cd.allocator.realloc_fn = fa_realloc;
    cd.allocator.free_fn = fa_free;
    cd.allocator.user_data = O->a;
    rc = cc_context_create(&cd, &ctx);
    if (rc != CC_OK) { O->rc = rc; snprintf(O->msg, sizeof O->msg, "cc_context_create: %s", cc_result_description(rc)); return rc; }
    bd.timeout_s = 5;
    bd.use_graphs = O->use_graphs;
    rc = cc_nccl_comm_init_rank(ctx, &g_id, n, 0, NULL, &comm);
    if (rc == CC_OK) rc = cc_cuda_backend_create(ctx, &bd, &be);
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) rc = CC_ERR_BACKEND;
    if (rc == CC_OK) {
        model_carve(&m, mem, 1);
        model_init(&m, 0);
        rc = build_step(ctx, &m, comm, &sg);
    }
    if (rc == CC_OK) rc = cc_plan_create(ctx, sg.g, NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(ctx, plan, &be, &x);
    if (rc == CC_OK) rc = cc_exec_agree(x, comm);
    if (rc == CC_OK) rc = cc_exec_step(x);
    if (rc == CC_OK) rc = cc_exec_step(x);
    O->rc = rc;
    snprintf(O->msg, sizeof O->msg, "%s", rc == CC_OK ? "" : cc_last_error(ctx));
    (void)cudaDeviceSynchronize();
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_graph_destroy(sg.g);
    if (mem) cudaFree(mem);
    cc_backend_destroy(&be);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
    return rc;
}

static void test_alloc_failures(void) {
    fail_alloc a;
    int graphs;
    pthread_mutex_init(&a.mu, NULL);
    for (graphs = 0; graphs < 2; graphs++) {
        oom_run O;
        cc_result rc[MAXR];
        long n, k, n_oom = 0, n_bad = 0;
        a.n_calls = a.fail_at = a.live = 0;
        memset(&O, 0, sizeof O);
        O.a = &a;
        O.use_graphs = graphs;
        standin_reset();
        ncclGetUniqueId(&g_id);
        run_team(1, oom_rank, &O, rc);
        n = a.n_calls;
        CHECK(O.rc == CC_OK, "graphs %d: the run without refusals (%s)", graphs, O.msg);
        for (k = 1; k <= n; k++) {
            a.n_calls = a.live = 0;
            a.fail_at = k;
            standin_reset();
            ncclGetUniqueId(&g_id);
            run_team(1, oom_rank, &O, rc);
            if (O.rc == CC_ERR_OUT_OF_MEMORY && strstr(O.msg, "memory")) n_oom++;
            else if (O.rc != CC_OK && n_bad++ < 8) printf("  k=%ld: %d: %s\n", k, (int)O.rc, O.msg);
            if ((a.live != 0 || standin_live_handles() != 0) && n_bad++ < 3)
                printf("  k=%ld: %ld blocks and %d stand-in handles left\n", k, a.live, standin_live_handles());
            a.fail_at = 0;
            standin_reset();
            if (standin_violation_count() != 0 && n_bad++ < 3) printf("  k=%ld: work left running: %s\n", k, standin_violation(0));
            ncclGetUniqueId(&g_id);
            run_team(1, oom_rank, &O, rc);
            if (O.rc != CC_OK && n_bad++ < 3) printf("  k=%ld: the next run fails: %s\n", k, O.msg);
        }
        printf("     allocation-failure points swept, cc_nccl_comm_init_rank + cc_cuda_backend_create + plan, executor, "
               "agreement and two steps%s: %ld (%ld refused with CC_ERR_OUT_OF_MEMORY)\n", graphs ? " (CUDA graphs)" : "", n, n_oom);
        CHECK(n > 0, "graphs %d: %ld allocation requests swept", graphs, n);
        CHECK_INT(n_bad, 0, "graphs %d: every refusal: CC_ERR_OUT_OF_MEMORY saying so, or CC_OK; nothing left; the next run works", graphs);
        CHECK(n_oom > 0, "graphs %d: refusals reported (%ld of %ld)", graphs, n_oom, n);
    }
    standin_reset();
    pthread_mutex_destroy(&a.mu);
}

/* ---- the rules: a wrong caller is caught -------------------------------------------------*/
static cc_result wrong_rank(int r, int n, void* p) {
    ncclComm_t comm;
    float* buf = NULL;
    cudaStream_t s;
    cudaEvent_t e;
    (void)p;
    ncclCommInitRank(&comm, n, g_id, r);
    cudaMalloc((void**)&buf, 16 * sizeof(float));
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    cudaStreamWaitEvent(s, e, 0);   /* an event never recorded */
    ncclAllReduce(buf, buf, 16, ncclFloat32, ncclSum, comm, s);   /* no group */
    ncclGroupStart();
    ncclAllReduce(buf, buf, 16 * sizeof(float), ncclFloat32, ncclSum, comm, s);   /* bytes as elements */
    ncclGroupEnd();
    cudaStreamSynchronize(s);
    cudaEventDestroy(e);
    cudaStreamDestroy(s);
    cudaFree(buf);
    ncclCommDestroy(comm);
    return CC_OK;
}

static void test_rules_bite(void) {
    cc_result rc[MAXR];
    int i, waited = 0, grouped = 0, counted = 0;
    standin_reset();
    standin_require_groups(1);
    ncclGetUniqueId(&g_id);
    run_team(1, wrong_rank, NULL, rc);
    for (i = 0; i < standin_violation_count(); i++) {
        const char* v = standin_violation(i);
        if (strstr(v, "record")) waited = 1;
        if (strstr(v, "group")) grouped = 1;
        if (strstr(v, "element") || strstr(v, "bytes")) counted = 1;
    }
    CHECK(waited, "a wait on an event never recorded is caught");
    CHECK(grouped, "a collective outside a group is caught");
    CHECK(counted, "a count in bytes that runs past the buffer is caught");
    standin_reset();
}

/* ---- a step that cannot be captured falls back to plain launches ------------------------*/
typedef struct fb_data { float* v; int n_calls; } fb_data;
static void CUDART_CB fb_add(void* p) { fb_data* d = (fb_data*)p; d->v[0] += 1.0f; }
/* Synchronises its own stream before enqueuing: not allowed while capturing. */
static void fb_op(void* stream, void* p) {
    fb_data* d = (fb_data*)p;
    d->n_calls++;
    (void)cudaStreamSynchronize((cudaStream_t)stream);
    (void)cudaLaunchHostFunc((cudaStream_t)stream, fb_add, d);
}
static void test_graph_fallback(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be = { NULL, NULL };
    cc_cuda_backend_desc bd = {0};
    cc_op_desc d;
    fb_data data;
    const char* why = NULL;
    int s, ok = 1;
    standin_reset();
    memset(&data, 0, sizeof data);
    cc_context_create(NULL, &ctx);
    if (cudaMalloc((void**)&data.v, sizeof(float)) != cudaSuccess) { CHECK(0, "cudaMalloc"); return; }
    data.v[0] = 0;
    cc_graph_create(ctx, NULL, &g);
    d = (cc_op_desc){0}; d.name = "syncs"; d.duration_us = 1; d.fn = fb_op; d.user_data = &data;
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &plan);
    bd.use_graphs = 1;
    CHECK_OK(cc_cuda_backend_create(ctx, &bd, &be), "a backend with use_graphs");
    CHECK_OK(cc_exec_create(ctx, plan, &be, &x), "an executor");
    for (s = 0; s < 3 && ok; s++) {
        cc_result rc = cc_exec_step(x);
        if (rc != CC_OK) { ok = 0; CHECK(0, "step %d: %s", s, cc_last_error(ctx)); }
    }
    CHECK(ok && data.v[0] == 3.0f, "three steps add three, once each (%g)", ok ? (double)data.v[0] : -1.0);
    CHECK_INT(cc_cuda_backend_graph_status(&be, &why), 0, "the steps do not replay a graph");
    CHECK(why && strstr(why, "plain launches") && strstr(why, "syncs"), "the reason names the op that broke the capture (%s)",
          why ? why : "(none)");
    CHECK(standin_violation_count() >= 1, "the stand-in saw the host synchronisation inside the capture");
    standin_clear_violations();
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cudaFree(data.v);
    cc_context_destroy(ctx);
    expect_clean("graph fallback");
}

/* ---- two executors on one graph backend: each replays its own step -------------------------*/
static void CUDART_CB pe_add(void* p) { *(float*)p += 1.0f; }
static void pe_op(void* stream, void* p) { (void)cudaLaunchHostFunc((cudaStream_t)stream, pe_add, p); }
static void test_graphs_per_exec(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan *p1 = NULL, *p2 = NULL;
    cc_exec *x1 = NULL, *x2 = NULL;
    cc_backend be = { NULL, NULL };
    cc_cuda_backend_desc bd = {0};
    cc_cuda_graph_counts n;
    cc_op_desc d;
    float* v = NULL;
    const char* why = NULL;
    int s, ok = 1, launched = 0;
    standin_reset();
    cc_context_create(NULL, &ctx);
    if (cudaMalloc((void**)&v, sizeof(float)) != cudaSuccess) { CHECK(0, "cudaMalloc"); return; }
    v[0] = 0;
    cc_graph_create(ctx, NULL, &g);
    d = (cc_op_desc){0}; d.name = "add"; d.duration_us = 1; d.fn = pe_op; d.user_data = v;
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &p1);
    cc_plan_create(ctx, g, NULL, &p2);
    bd.use_graphs = 1;
    CHECK_OK(cc_cuda_backend_create(ctx, &bd, &be), "a backend with use_graphs");
    CHECK_OK(cc_exec_create(ctx, p1, &be, &x1), "executor 1");
    CHECK_OK(cc_exec_create(ctx, p2, &be, &x2), "executor 2, on the same backend");
    /* alternating, 2 steps each, 4 times: each executor's first step is its
       warm-up, its second is captured, every later one replayed */
    for (s = 0; s < 16 && ok; s++) {
        cc_exec* x = (s / 2) % 2 ? x2 : x1;
        if (cc_exec_step(x) != CC_OK) { ok = 0; CHECK(0, "step %d: %s", s, cc_last_error(ctx)); }
        if (s >= 6) launched += cc_cuda_backend_graph_status(&be, NULL);
    }
    CHECK(ok && v[0] == 16.0f, "16 steps add 16, once each (%g)", ok ? (double)v[0] : -1.0);
    CHECK_OK(cc_cuda_backend_graph_counts(&be, &n), "cc_cuda_backend_graph_counts");
    CHECK(n.n_plain == 2 && n.n_captured == 2 && n.n_replayed == 12 && n.n_graphs == 2,
          "each executor: 1 warm-up, 1 capture, then replays: plain %ld (2), captured %ld (2), replayed %ld (12), graphs %d (2)",
          n.n_plain, n.n_captured, n.n_replayed, n.n_graphs);
    CHECK_INT(launched, 10, "every step after both captures launched a graph");
    CHECK(cc_cuda_backend_graph_status(&be, &why) == 1 && why && strstr(why, "replaying"), "the status says so (%s)", why ? why : "");
    cc_exec_destroy(x2);
    (void)cc_cuda_backend_graph_counts(&be, &n);
    CHECK(n.n_graphs == 1, "destroying executor 2 forgets its graph (%d left)",
          n.n_graphs);
    CHECK(cc_exec_step(x1) == CC_OK && v[0] == 17.0f, "executor 1 still steps (%g)", (double)v[0]);
    (void)cc_cuda_backend_graph_counts(&be, &n);
    CHECK(n.n_replayed == 13, "and replays its graph (%ld replays)", n.n_replayed);
    cc_exec_destroy(x1);
    cc_backend_destroy(&be);
    CHECK(cc_cuda_backend_graph_counts(NULL, &n) == CC_ERR_INVALID_ARG, "graph counts of no backend: CC_ERR_INVALID_ARG");
    cc_plan_destroy(p2);
    cc_plan_destroy(p1);
    cc_graph_destroy(g);
    cudaFree(v);
    cc_context_destroy(ctx);
    expect_clean("graphs per executor");
}

/* ---- copy ops: cudaMemcpy2DAsync, plain, captured and replayed --------------------------*/
#define CP_ROWS 8
#define CP_COLS 12
typedef struct cp_bump { float* t; } cp_bump;
static void CUDART_CB cp_bump_host(void* p) { cp_bump* b = (cp_bump*)p; int i; for (i = 0; i < CP_ROWS * 4; i++) b->t[i] += 100.0f; }
static void cp_bump_op(void* stream, void* p) { (void)cudaLaunchHostFunc((cudaStream_t)stream, cp_bump_host, p); }
static cc_region cp_cols(cc_buffer b, int c0, int nc) {
    cc_region r = {0};
    r.buffer = b; r.offset_bytes = (uint64_t)c0 * 4; r.n_bytes = (uint64_t)nc * 4;
    r.n_rows = CP_ROWS; r.stride_bytes = CP_COLS * 4;
    return r;
}
/* Columns 2..5 of device matrix m packed into a transient buffer (in the
   arena, backend memory), 100 added there by a host function on the
   stream, unpacked into columns 6..9 of o: o as computed by hand after
   every step (the first plain, the second captured, the rest replayed). */
static void test_copy_ops(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be = { NULL, NULL };
    cc_cuda_backend_desc bd = {0};
    cc_cuda_graph_counts n;
    cc_buffer bm, bo, bt;
    cc_region r1, r2;
    cc_op_desc d;
    cc__rw w;
    cp_bump bump = { NULL };
    float *m = NULL, *o = NULL, want[CP_ROWS * CP_COLS];
    int s, i, ok = 1;
    standin_reset();
    cc_context_create(NULL, &ctx);
    if (cudaMalloc((void**)&m, sizeof want) != cudaSuccess || cudaMalloc((void**)&o, sizeof want) != cudaSuccess) {
        CHECK(0, "cudaMalloc");
        return;
    }
    for (i = 0; i < CP_ROWS * CP_COLS; i++) { m[i] = 1.0f + 0.5f * (float)i; want[i] = -7.0f; }
    for (i = 0; i < CP_ROWS * 4; i++) want[(i / 4) * CP_COLS + 6 + i % 4] = m[(i / 4) * CP_COLS + 2 + i % 4] + 100.0f;
    memset(&w, 0, sizeof w);
    w.ctx = ctx; w.who = "test_copy_ops"; w.d.copy_us_per_byte = 1e-6;
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "m", sizeof want, &bm);
    cc_graph_add_buffer(g, "o", sizeof want, &bo);
    cc_graph_add_transient(g, "t", CP_ROWS * 4 * sizeof(float), &bt);
    r1 = cp_cols(bm, 2, 4);
    r2 = (cc_region){0}; r2.buffer = bt; r2.n_bytes = CP_ROWS * 4 * sizeof(float);
    CHECK_OK(cc__rw_add_copy(&w, g, "pack", 0, &r1, m + 2, &r2, NULL, NULL, 0, NULL), "pack: strided -> the transient buffer");
    d = (cc_op_desc){0}; d.name = "bump"; d.duration_us = 1; d.fn = cp_bump_op; d.user_data = &bump;
    d.reads = &r2; d.n_reads = 1; d.writes = &r2; d.n_writes = 1;
    CHECK_OK(cc_graph_add_op(g, &d, NULL), "bump");
    r1 = cp_cols(bo, 6, 4);
    CHECK_OK(cc__rw_add_copy(&w, g, "unpack", 0, &r2, NULL, &r1, o + 6, NULL, 0, NULL), "unpack: the transient buffer -> strided");
    CHECK_OK(cc_plan_create(ctx, g, NULL, &plan), "plan");
    bd.use_graphs = 1;
    CHECK_OK(cc_cuda_backend_create(ctx, &bd, &be), "a backend with use_graphs");
    CHECK_OK(cc_exec_create(ctx, plan, &be, &x), "an executor of a plan with copy ops");
    bump.t = x ? (float*)cc_exec_buffer_ptr(x, bt) : NULL;
    for (s = 0; s < 4 && ok && bump.t; s++) {
        for (i = 0; i < CP_ROWS * CP_COLS; i++) o[i] = -7.0f;
        if (cc_exec_step(x) != CC_OK) { ok = 0; CHECK(0, "step %d: %s", s, cc_last_error(ctx)); }
        else CHECK(memcmp(o, want, sizeof want) == 0, "step %d: o holds the packed, bumped, unpacked columns and nothing else", s);
    }
    CHECK_OK(cc_cuda_backend_graph_counts(&be, &n), "cc_cuda_backend_graph_counts");
    CHECK(n.n_captured == 1 && n.n_replayed == 2, "one step captured, two replayed (captured %ld, replayed %ld)", n.n_captured,
          n.n_replayed);
    CHECK_INT(standin_violation_count(), 0, "the stand-in saw no misuse of cudaMemcpy2DAsync");
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cudaFree(m);
    cudaFree(o);
    cc_context_destroy(ctx);
    expect_clean("copy ops");
}

/* ---- a failure while a graph holds the collectives: graphs go before the abort -----------*/
typedef struct ab_run { cc_result first; char msg[600]; int blocking, captured; } ab_run;
static cc_result abort_rank(int r, int n, void* p) {
    ab_run* A = (ab_run*)p;
    cuda_rank cr;
    model m;
    float* mem = NULL;
    step_graph sg;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_cuda_graph_counts gc;
    cc_result rc;
    int s;
    memset(&sg, 0, sizeof sg);
    memset(&m, 0, sizeof m);
    rc = cuda_rank_open(&cr, r, n, 1, 2);
    if (rc == CC_OK) A->blocking = standin_nccl_comm_blocking(cc_nccl_comm_handle(cr.comm));
    if (rc == CC_OK && cudaMalloc((void**)&mem, (2 * L + 1) * W * 4) != cudaSuccess) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK) {
        model_carve(&m, mem, 1);
        model_init(&m, r);
        rc = build_step(cr.ctx, &m, cr.comm, &sg);
    }
    if (rc == CC_OK) rc = cc_plan_create(cr.ctx, sg.g, NULL, &plan);
    if (rc == CC_OK) rc = cc_exec_create(cr.ctx, plan, &cr.be, &x);
    if (rc == CC_OK) rc = cc_exec_agree(x, cr.comm);
    for (s = 0; s < 3 && rc == CC_OK; s++) { reset_x(&m); rc = cc_exec_step(x); }
    if (rc != CC_OK) snprintf(A->msg, sizeof A->msg, "set-up: %s", cr.ctx ? cc_last_error(cr.ctx) : "no context");
    if (rc == CC_OK && cc_cuda_backend_graph_counts(&cr.be, &gc) == CC_OK) A->captured = gc.n_graphs;
    if (rc == CC_OK) {
        standin_nccl_inject_async_error(r, 0, ncclSystemError);   /* the replayed graph's first collective */
        reset_x(&m);
        A->first = cc_exec_step(x);
        snprintf(A->msg, sizeof A->msg, "%s", cc_last_error(cr.ctx));
    }
    cc_exec_destroy(x);
    cc_plan_destroy(plan);
    cc_graph_destroy(sg.g);
    if (mem) cudaFree(mem);
    cuda_rank_close(&cr);
    return rc;
}

/* The wrong order, without the backend: a graph exec that holds an
   all-reduce, then ncclCommAbort. */
static cc_result wrong_abort_rank(int r, int n, void* p) {
    ncclComm_t comm = NULL;
    cudaStream_t st = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    float* buf = NULL;
    ncclResult_t* res = (ncclResult_t*)p;
    ncclCommInitRank(&comm, n, g_id, r);
    cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
    cudaMalloc((void**)&buf, 16);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
    ncclAllReduce(buf, buf, 4, ncclFloat32, ncclSum, comm, st);
    cudaStreamEndCapture(st, &g);
    cudaGraphInstantiate(&ex, g, 0);
    *res = ncclCommAbort(comm);
    cudaGraphExecDestroy(ex);
    cudaGraphDestroy(g);
    cudaFree(buf);
    cudaStreamDestroy(st);
    return CC_OK;
}

static void test_abort_after_graphs(void) {
    ab_run A;
    cc_result rc[MAXR];
    ncclResult_t res = ncclSuccess;
    int i, waits = 0;
    standin_reset();
    ncclGetUniqueId(&g_id);
    memset(&A, 0, sizeof A);
    run_team(1, abort_rank, &A, rc);
    CHECK_OK(rc[0], "a rank with graphs: set-up and 3 steps (%s)", A.msg);
    CHECK_INT(A.blocking, 1, "the communicator was made with an explicit config of blocking = 1");
    CHECK_INT(A.captured, 1, "the step was captured (1 graph) before the failure");
    CHECK(A.first != CC_OK && strstr(A.msg, "aborted the communicators"), "an asynchronous NCCL error in a replayed step fails it "
          "and aborts the communicator (%s)", A.msg);
    for (i = 0; i < standin_violation_count(); i++) if (strstr(standin_violation(i), "2.26")) waits++;
    CHECK_INT(waits, 0, "no ncclCommAbort while a graph held the communicator's collectives");
    standin_clear_violations();
    CHECK_INT(standin_live_handles(), 0, "every handle freed");
    /* cc_nccl_comm_init_all: one group of ncclCommInitRankConfig, blocking = 1 */
    standin_reset();
    {
        cc_context* ctx = NULL;
        cc_comm* comms[2] = { NULL, NULL };
        cc_context_create(NULL, &ctx);
        CHECK_OK(cc_nccl_comm_init_all(ctx, 2, NULL, comms), "cc_nccl_comm_init_all of 2 devices (%s)", cc_last_error(ctx));
        CHECK(comms[0] && comms[1] && standin_nccl_comm_blocking(cc_nccl_comm_handle(comms[0])) == 1 &&
              standin_nccl_comm_blocking(cc_nccl_comm_handle(comms[1])) == 1, "both made with an explicit config of blocking = 1");
        CHECK(comms[0] && comms[1] && cc_comm_rank(comms[0]) == 0 && cc_comm_rank(comms[1]) == 1 && cc_comm_size(comms[1]) == 2,
              "ranks 0 and 1 of 2");
        cc_comm_destroy(comms[1]);
        cc_comm_destroy(comms[0]);
        cc_context_destroy(ctx);
        expect_clean("cc_nccl_comm_init_all");
    }
    /* the stand-in catches the wrong order */
    standin_reset();
    ncclGetUniqueId(&g_id);
    run_team(1, wrong_abort_rank, &res, rc);
    for (i = 0; i < standin_violation_count(); i++) if (strstr(standin_violation(i), "2.26")) waits++;
    CHECK(waits == 1 && res == ncclInvalidUsage, "ncclCommAbort with a live graph exec holding an all-reduce is caught (%d, %s)",
          waits, ncclGetErrorString(res));
    standin_clear_violations();
    standin_reset();
}

/* ---- stream priorities -----------------------------------------------------------------*/
static int g_prio[2];
static void prio_op(void* stream, void* p) { g_prio[*(int*)p] = standin_stream_priority((cudaStream_t)stream); }
static void test_priorities(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be = { NULL, NULL };
    cc_op_desc d;
    static int which[2] = { 0, 1 };
    int lo = 0, hi = 0;
    standin_reset();
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    d = (cc_op_desc){0}; d.name = "on_compute"; d.duration_us = 1; d.fn = prio_op; d.user_data = &which[0];
    cc_graph_add_op(g, &d, NULL);
    d.name = "on_comm"; d.stream = CC_STREAM_COMM; d.user_data = &which[1];
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &plan);
    CHECK_OK(cc_cuda_backend_create(ctx, NULL, &be), "the backend on the current device");
    CHECK_OK(cc_exec_create(ctx, plan, &be, &x), "an executor");
    CHECK_OK(cc_exec_step(x), "a step");
    cudaDeviceGetStreamPriorityRange(&lo, &hi);
    CHECK_INT(g_prio[1], hi, "the communication stream has the greatest priority");
    CHECK(g_prio[0] > g_prio[1] || lo == hi, "the compute stream a lower one (%d vs %d)", g_prio[0], g_prio[1]);
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    expect_clean("priorities");
}

int main(void) {
    standin_set_device_count(8);
    TH_RUN(test_priorities);
    TH_RUN(test_step_numbers);
    TH_RUN(test_collectives);
    TH_RUN(test_failures_across_ranks);
    TH_RUN(test_faults_four_ranks);
    TH_RUN(test_alloc_failures);
    TH_RUN(test_every_call_site);
    TH_RUN(test_rules_bite);
    TH_RUN(test_graph_fallback);
    TH_RUN(test_graphs_per_exec);
    TH_RUN(test_copy_ops);
    TH_RUN(test_abort_after_graphs);
    standin_reset();
    return th_done();
}
