/* gpu - the executor on one GPU: the CUDA backend (concerto_cuda.h) and a
   one-rank NCCL communicator (concerto_nccl.h). CUDA C++, built by nvcc.

   build/bench_gpu device      the GPU the figures are taken on
   build/bench_gpu overhead    executor cost per op, against a plain loop
   build/bench_gpu graphs      plain launches vs CUDA-graph replay, same plans
   build/bench_gpu step [--copies] [--layers L] [--dim D]
                               a synthetic step, program order vs the
                               library's order, measured and predicted

   Without a GPU (cudaGetDeviceCount fails or finds none) every command
   prints one line saying the benchmarks were skipped and why, and exits 0.
   A failing CUDA, NCCL or library call prints what failed and exits 1.

   overhead: a plan of N empty ops per stream (each enqueues an empty kernel
   <<<1,1,0,stream>>>) on S streams, with no dependencies between streams or
   a chain across them (every op waits for the one before it, on another
   stream), on the plain CUDA backend without timestamps (the bare path, as
   in bench/exec.c), run 41 times (median). Against it, interleaved, a plain
   loop calls the same op function on the executor's own streams; for the
   chain it records an event after every op and makes the next op's stream
   wait for it (what one would write by hand). Step: from the first launch
   until the streams are idle (the executor's synchronize, which polls with
   naps of 20 to 250 us; the loop's cudaStreamSynchronize). Enqueue: the host
   time of cc_exec_launch, or of the loop. Overhead per op per stream: the
   difference of the medians divided by N.

   graphs: the same plans on three backends, 41 steps each (median): plain
   launches without timestamps, plain launches of the default backend (two
   timestamps per op), and use_graphs = 1 (the first step a warm-up, the
   second captured, every later one replayed); whether the steps did
   replay, and why not.

   step: L layers (default 12) of three D x D sub-layers (default D 512, M =
   D rows), each sub-layer a matmul on the compute stream forward and two
   backward (dX = dY W^T, dW = X^T dY), a simple tiled SGEMM of this file;
   per layer, on the communication stream, an all-reduce (sum, float32) on a
   one-rank NCCL communicator after the layer's weight gradients, or with
   --copies a device-to-device cudaMemcpyAsync instead; then the layer's
   update (W -= lr dW) after it. A one-rank all-reduce copies its input, so
   its size is chosen, from a calibration of the matmuls and of the copy,
   to take `target` times the layer's backward compute (0.5, 1 and 2). Every
   op is profiled (cc_exec_profile_ops, median of 5), the schedule solved
   (cc_sched_solve); then program order and the schedule run 15 steps each
   after one warm-up step. Measured: the median over steps of the last op's
   end in the timeline (the backend's timestamps); predicted: cc_simulate of
   program order and the schedule's makespan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_cuda.h"
#include "../concerto_nccl.h"

static cc_context* ctx;
static char device_name[256];

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
static int cmp_d(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }
static double median(double* v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_d); return v[n / 2]; }

#define CHECK_CUDA(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) { \
    fprintf(stderr, "bench_gpu: %s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_), \
            cudaGetErrorName(e_)); exit(1); } } while (0)
#define CHECK_NCCL(call) do { ncclResult_t n_ = (call); if (n_ != ncclSuccess) { \
    fprintf(stderr, "bench_gpu: %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call, ncclGetErrorString(n_)); exit(1); } } while (0)
#define CHECK_CC(call) do { cc_result r_ = (call); if (r_ != CC_OK) { \
    fprintf(stderr, "bench_gpu: %s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call, cc_result_description(r_), \
            cc_last_error(ctx)); exit(1); } } while (0)

/* ---- kernels ------------------------------------------------------------ */
__global__ void empty_kernel(void) {}

#define TILE 16
/* C (M x N, row-major, ldc N) = A (M x K) B (K x N), where A(i, k) =
   A[i a_rs + k a_cs] and B(k, j) = B[k b_rs + j b_cs]: a transposed operand
   is the same memory with its strides swapped. Each operand's tile is read
   along whichever of its strides is 1, so that loads coalesce. */
__global__ void sgemm_kernel(int M, int N, int K, const float* A, int a_rs, int a_cs, const float* B, int b_rs, int b_cs,
                             float* C) {
    __shared__ float as[TILE][TILE + 1], bs[TILE][TILE + 1];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row0 = blockIdx.y * TILE, col0 = blockIdx.x * TILE;
    float acc = 0.0f;
    int k0, k;
    for (k0 = 0; k0 < K; k0 += TILE) {
        int r, c;
        if (a_cs == 1) { r = ty; c = tx; } else { r = tx; c = ty; }   /* as[r][c] = A(row0 + r, k0 + c) */
        as[r][c] = row0 + r < M && k0 + c < K ? A[(size_t)(row0 + r) * a_rs + (size_t)(k0 + c) * a_cs] : 0.0f;
        if (b_cs == 1) { r = ty; c = tx; } else { r = tx; c = ty; }   /* bs[r][c] = B(k0 + r, col0 + c) */
        bs[r][c] = k0 + r < K && col0 + c < N ? B[(size_t)(k0 + r) * b_rs + (size_t)(col0 + c) * b_cs] : 0.0f;
        __syncthreads();
        for (k = 0; k < TILE; k++) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row0 + ty < M && col0 + tx < N) C[(size_t)(row0 + ty) * N + col0 + tx] = acc;
}

__global__ void axpy_kernel(float* y, const float* x, size_t n, float a) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

/* Values in [-scale, scale) from a hash of the index. */
__global__ void fill_kernel(float* p, size_t n, float scale, unsigned seed) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15; h *= 2246822519u; h ^= h >> 13;
        p[i] = scale * ((float)(h & 0xffff) / 32768.0f - 1.0f);
    }
}

static unsigned blocks_for(size_t n) { return (unsigned)((n + 255) / 256); }

/* ---- op functions ------------------------------------------------------- */
/* An empty kernel; the stream it got is kept in *user (the plain loop uses
   the executor's own streams). */
static void op_empty(void* stream, void* user) {
    *(cudaStream_t*)user = (cudaStream_t)stream;
    empty_kernel<<<1, 1, 0, (cudaStream_t)stream>>>();
}

typedef struct mm_arg { int M, N, K; const float* A; int a_rs, a_cs; const float* B; int b_rs, b_cs; float* C; } mm_arg;
static void launch_mm(const mm_arg* m, cudaStream_t s) {
    dim3 grid((unsigned)((m->N + TILE - 1) / TILE), (unsigned)((m->M + TILE - 1) / TILE)), block(TILE, TILE);
    sgemm_kernel<<<grid, block, 0, s>>>(m->M, m->N, m->K, m->A, m->a_rs, m->a_cs, m->B, m->b_rs, m->b_cs, m->C);
}
static void op_matmul(void* stream, void* user) { launch_mm((const mm_arg*)user, (cudaStream_t)stream); }

typedef struct axpy_arg { float* y; const float* x; size_t n; float a; } axpy_arg;
static void op_axpy(void* stream, void* user) {
    const axpy_arg* u = (const axpy_arg*)user;
    axpy_kernel<<<blocks_for(u->n), 256, 0, (cudaStream_t)stream>>>(u->y, u->x, u->n, u->a);
}

typedef struct copy_arg { void* dst; const void* src; size_t n_bytes; } copy_arg;
static void op_copy(void* stream, void* user) {
    const copy_arg* c = (const copy_arg*)user;
    (void)cudaMemcpyAsync(c->dst, c->src, c->n_bytes, cudaMemcpyDeviceToDevice, (cudaStream_t)stream);   /* the backend reads cudaGetLastError */
}

/* ---- overhead and graphs ------------------------------------------------ */
typedef struct layout { int n_per_stream, streams, chain; } layout;
static const layout layouts[] = { { 2000, 1, 0 }, { 2000, 2, 0 }, { 2000, 2, 1 }, { 2000, 3, 0 }, { 2000, 3, 1 } };
#define N_LAYOUTS ((int)(sizeof layouts / sizeof *layouts))
#define MAX_STREAMS 3
#define N_STEPS 41

static cudaStream_t seen[MAX_STREAMS];   /* the executor's streams, as op_empty saw them */

static cc_graph* empty_graph(const layout* lo) {
    cc_graph_desc gd = {};
    cc_graph* g;
    cc_op prev;
    int i, n = lo->n_per_stream * lo->streams;
    prev.id = 0; prev.graph = 0;
    gd.n_streams = lo->streams;
    CHECK_CC(cc_graph_create(ctx, &gd, &g));
    for (i = 0; i < n; i++) {
        cc_op_desc d = {};
        cc_op op;
        d.duration_us = 1;
        d.stream = i % lo->streams;
        d.fn = op_empty;
        d.user_data = &seen[i % lo->streams];
        if (lo->chain && prev.id) { d.deps = &prev; d.n_deps = 1; }
        CHECK_CC(cc_graph_add_op(g, &d, &op));
        prev = op;
    }
    return g;
}

/* The same ops without the executor, on the executor's streams; for the
   chain, an event per stream carries each op's dependency on the one
   before it. */
static void plain_loop(const layout* lo, cudaEvent_t* ev, double* enqueue_us, double* step_us) {
    int i, s, n = lo->n_per_stream * lo->streams;
    double t0 = now_us(), t1;
    for (i = 0; i < n; i++) {
        int k = i % lo->streams;
        if (lo->chain && i > 0) CHECK_CUDA(cudaStreamWaitEvent(seen[k], ev[(i - 1) % lo->streams], 0));
        op_empty((void*)seen[k], &seen[k]);
        if (lo->chain) CHECK_CUDA(cudaEventRecord(ev[k], seen[k]));
    }
    CHECK_CUDA(cudaGetLastError());
    t1 = now_us();
    for (s = 0; s < lo->streams; s++) CHECK_CUDA(cudaStreamSynchronize(seen[s]));
    *enqueue_us = t1 - t0;
    *step_us = now_us() - t0;
}

typedef struct timing {
    double step_us, enqueue_us;        /* medians of the executor's steps */
    double loop_us, loop_enqueue_us;   /* and of the plain loop, where asked */
    int replayed;                      /* graph status after the last step */
    char why[256];
} timing;

/* N_STEPS steps of plan pl on a fresh CUDA backend (use_graphs; timestamps
   0: the table without its timestamp entry), after two warm-up steps; with
   loop, the plain loop after each step. */
static timing time_plan(cc_plan* pl, const layout* lo, int use_graphs, int timestamps, int loop) {
    cc_cuda_backend_desc bd = {};
    cc_backend be, run;
    cc_backend_fns fns;
    cc_exec* x;
    cudaEvent_t ev[MAX_STREAMS];
    double step[N_STEPS], enq[N_STEPS], lstep[N_STEPS], lenq[N_STEPS];
    const char* why = NULL;
    timing t;
    int s;
    memset(&t, 0, sizeof t);
    bd.use_graphs = use_graphs;
    CHECK_CC(cc_cuda_backend_create(ctx, &bd, &be));
    run = be;
    if (!timestamps) {
        fns = *be.fns;
        fns.timestamp = NULL;
        run.fns = &fns;
    }
    CHECK_CC(cc_exec_create(ctx, pl, &run, &x));
    for (s = 0; s < lo->streams; s++) CHECK_CUDA(cudaEventCreateWithFlags(&ev[s], cudaEventDisableTiming));
    CHECK_CC(cc_exec_step(x));   /* warm up */
    CHECK_CC(cc_exec_step(x));   /* with graphs, the capture */
    for (s = 0; s < N_STEPS; s++) {
        double t0 = now_us(), t1;
        CHECK_CC(cc_exec_launch(x));
        t1 = now_us();
        CHECK_CC(cc_exec_wait(x));
        step[s] = now_us() - t0;
        enq[s] = t1 - t0;
        if (loop) plain_loop(lo, ev, &lenq[s], &lstep[s]);
    }
    t.step_us = median(step, N_STEPS);
    t.enqueue_us = median(enq, N_STEPS);
    if (loop) {
        t.loop_us = median(lstep, N_STEPS);
        t.loop_enqueue_us = median(lenq, N_STEPS);
    }
    t.replayed = cc_cuda_backend_graph_status(&be, &why);
    snprintf(t.why, sizeof t.why, "%.255s", why ? why : "");
    for (s = 0; s < lo->streams; s++) CHECK_CUDA(cudaEventDestroy(ev[s]));
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    return t;
}

static int run_overhead(void) {
    int k;
    printf("| ops per stream | streams | cross-stream chain | step us (median of %d) | plain loop us | overhead per op per stream us "
           "| enqueue us | plain enqueue us | enqueue overhead per op per stream us | device |\n", N_STEPS);
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (k = 0; k < N_LAYOUTS; k++) {
        const layout* lo = &layouts[k];
        cc_graph* g = empty_graph(lo);
        cc_plan* pl;
        timing t;
        CHECK_CC(cc_plan_create(ctx, g, NULL, &pl));
        t = time_plan(pl, lo, 0, 0, 1);
        printf("| %d | %d | %s | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f | measured on %s |\n", lo->n_per_stream, lo->streams,
               lo->chain ? "yes" : "no", t.step_us, t.loop_us, (t.step_us - t.loop_us) / lo->n_per_stream, t.enqueue_us,
               t.loop_enqueue_us, (t.enqueue_us - t.loop_enqueue_us) / lo->n_per_stream, device_name);
        fflush(stdout);
        cc_plan_destroy(pl);
        cc_graph_destroy(g);
    }
    return 0;
}

static int run_graphs(void) {
    int k;
    printf("| ops per stream | streams | cross-stream chain | plain step us, no timestamps (median of %d) | plain step us, default "
           "backend | graph replay step us | speed-up over plain, no timestamps | speed-up over default plain | plain enqueue us "
           "| graph enqueue us | graph status | device |\n", N_STEPS);
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (k = 0; k < N_LAYOUTS; k++) {
        const layout* lo = &layouts[k];
        cc_graph* g = empty_graph(lo);
        cc_plan* pl;
        timing bare, plain, graph;
        CHECK_CC(cc_plan_create(ctx, g, NULL, &pl));
        bare = time_plan(pl, lo, 0, 0, 0);
        plain = time_plan(pl, lo, 0, 1, 0);
        graph = time_plan(pl, lo, 1, 1, 0);
        printf("| %d | %d | %s | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.0f | %.0f | %s | measured on %s |\n", lo->n_per_stream,
               lo->streams, lo->chain ? "yes" : "no", bare.step_us, plain.step_us, graph.step_us, bare.step_us / graph.step_us,
               plain.step_us / graph.step_us, plain.enqueue_us, graph.enqueue_us,
               graph.replayed ? "replayed" : graph.why, device_name);
        fflush(stdout);
        cc_plan_destroy(pl);
        cc_graph_destroy(g);
    }
    return 0;
}

/* ---- the synthetic step ------------------------------------------------- */
typedef struct step_opts { int layers, dim, copies; } step_opts;

typedef struct model {
    int L, D, n_sub;               /* n_sub = 3 L sub-layers; every matrix D x D (M = D rows) */
    float* mem;                    /* one allocation: */
    float *act, *grad;             /* [n_sub + 1][D][D]: the sub-layers' inputs; the gradients of their outputs */
    float *w, *dw;                 /* [n_sub][D][D] */
    float *comm_src, *comm_dst;    /* [comm_cap] each: what the communication ops move */
    size_t comm_cap;
} model;

static void alloc_model(model* m, const step_opts* o, size_t comm_cap) {
    size_t dd = (size_t)o->dim * (size_t)o->dim, n;
    m->L = o->layers; m->D = o->dim; m->n_sub = 3 * o->layers;
    m->comm_cap = comm_cap;
    n = 2 * (size_t)(m->n_sub + 1) * dd + 2 * (size_t)m->n_sub * dd + 2 * comm_cap;
    CHECK_CUDA(cudaMalloc((void**)&m->mem, n * sizeof(float)));
    m->act = m->mem;
    m->grad = m->act + (size_t)(m->n_sub + 1) * dd;
    m->w = m->grad + (size_t)(m->n_sub + 1) * dd;
    m->dw = m->w + (size_t)m->n_sub * dd;
    m->comm_src = m->dw + (size_t)m->n_sub * dd;
    m->comm_dst = m->comm_src + comm_cap;
    fill_kernel<<<blocks_for(n), 256>>>(m->mem, n, 1.0f, 12345u);
    CHECK_CUDA(cudaGetLastError());
    fill_kernel<<<blocks_for((size_t)m->n_sub * dd), 256>>>(m->w, (size_t)m->n_sub * dd, 1.0f / sqrtf((float)o->dim), 777u);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
}

/* the three matmuls of sub-layer k */
static mm_arg mm_fwd(const model* m, int k) {   /* act[k+1] = act[k] w[k] */
    size_t dd = (size_t)m->D * m->D;
    mm_arg a = { m->D, m->D, m->D, m->act + k * dd, m->D, 1, m->w + k * dd, m->D, 1, m->act + (k + 1) * dd };
    return a;
}
static mm_arg mm_dx(const model* m, int k) {    /* grad[k] = grad[k+1] w[k]^T */
    size_t dd = (size_t)m->D * m->D;
    mm_arg a = { m->D, m->D, m->D, m->grad + (k + 1) * dd, m->D, 1, m->w + k * dd, 1, m->D, m->grad + k * dd };
    return a;
}
static mm_arg mm_dw(const model* m, int k) {    /* dw[k] = act[k]^T grad[k+1] */
    size_t dd = (size_t)m->D * m->D;
    mm_arg a = { m->D, m->D, m->D, m->act + k * dd, 1, m->D, m->grad + (k + 1) * dd, m->D, 1, m->dw + k * dd };
    return a;
}

/* Median time in us of what(user) on stream s, by events, after a warm-up. */
static double time_on_stream(void (*what)(cudaStream_t, const void*), const void* user, cudaStream_t s) {
    cudaEvent_t a, b;
    double v[11];
    int i;
    CHECK_CUDA(cudaEventCreate(&a));
    CHECK_CUDA(cudaEventCreate(&b));
    what(s, user);
    CHECK_CUDA(cudaGetLastError());
    for (i = 0; i < 11; i++) {
        float ms = 0;
        CHECK_CUDA(cudaEventRecord(a, s));
        what(s, user);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(b, s));
        CHECK_CUDA(cudaEventSynchronize(b));
        CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));
        v[i] = 1e3 * (double)ms;
    }
    CHECK_CUDA(cudaEventDestroy(a));
    CHECK_CUDA(cudaEventDestroy(b));
    return median(v, 11);
}

/* one layer's backward: three dX and three dW matmuls */
static void backward_layer(cudaStream_t s, const void* user) {
    const model* m = (const model*)user;
    int j;
    for (j = 2; j >= 0; j--) {
        mm_arg a = mm_dx(m, j), b = mm_dw(m, j);
        launch_mm(&a, s);
        launch_mm(&b, s);
    }
}

typedef struct comm_probe { const model* m; cc_comm* comm; size_t n_elems; } comm_probe;
static void comm_once(cudaStream_t s, const void* user) {
    const comm_probe* p = (const comm_probe*)user;
    if (p->comm)
        CHECK_NCCL(ncclAllReduce(p->m->comm_src, p->m->comm_dst, p->n_elems, ncclFloat32, ncclSum, cc_nccl_comm_handle(p->comm), s));
    else
        CHECK_CUDA(cudaMemcpyAsync(p->m->comm_dst, p->m->comm_src, p->n_elems * sizeof(float), cudaMemcpyDeviceToDevice, s));
}

typedef struct step_row {
    double target, comm_us, bwd_us;    /* profiled: communication and backward compute, summed */
    double mib;                        /* per layer */
    int capped;
    double pred[2], meas[2];           /* program order, scheduled */
} step_row;

/* The graph of the step (program order), every op's work in the arrays
   given; n_elems floats per communication op. */
static cc_graph* step_graph(const model* m, cc_comm* comm, size_t n_elems, mm_arg* mm, axpy_arg* up, cc_collective* ar,
                            copy_arg* cp, cc_op* comm_ops, cc_op* bwd_ops) {
    cc_graph* g;
    cc_op prev, *fw = (cc_op*)malloc(sizeof(cc_op) * (size_t)m->n_sub);
    size_t dd = (size_t)m->D * m->D;
    char name[48];
    int l, j, k, n_bwd = 0;
    if (!fw) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
    prev.id = 0; prev.graph = 0;
    CHECK_CC(cc_graph_create(ctx, NULL, &g));
    for (k = 0; k < m->n_sub; k++) {
        cc_op_desc d = {};
        snprintf(name, sizeof name, "L%d.fwd%d", k / 3, k % 3);
        mm[k] = mm_fwd(m, k);
        d.name = name; d.duration_us = 1; d.fn = op_matmul; d.user_data = &mm[k];
        if (prev.id) { d.deps = &prev; d.n_deps = 1; }
        CHECK_CC(cc_graph_add_op(g, &d, &fw[k]));
        prev = fw[k];
    }
    for (l = m->L - 1; l >= 0; l--) {
        cc_op dwo[3], deps[2], red, last_dx, ud[2], upd;
        for (j = 2; j >= 0; j--) {
            cc_op_desc d = {};
            k = 3 * l + j;
            deps[0] = prev; deps[1] = fw[k];
            mm[m->n_sub + 2 * k] = mm_dx(m, k);
            mm[m->n_sub + 2 * k + 1] = mm_dw(m, k);
            snprintf(name, sizeof name, "L%d.dx%d", l, j);
            d.name = name; d.duration_us = 1; d.fn = op_matmul; d.user_data = &mm[m->n_sub + 2 * k]; d.deps = deps; d.n_deps = 2;
            CHECK_CC(cc_graph_add_op(g, &d, &prev));
            bwd_ops[n_bwd++] = prev;
            snprintf(name, sizeof name, "L%d.dw%d", l, j);
            d.name = name; d.user_data = &mm[m->n_sub + 2 * k + 1];
            CHECK_CC(cc_graph_add_op(g, &d, &dwo[j]));
            bwd_ops[n_bwd++] = dwo[j];
        }
        last_dx = prev;
        {
            cc_op_desc d = {};
            d.duration_us = 1; d.stream = CC_STREAM_COMM; d.deps = dwo; d.n_deps = 3;
            if (comm) {
                memset(&ar[l], 0, sizeof ar[l]);
                ar[l].kind = CC_COLL_ALL_REDUCE; ar[l].dtype = CC_DTYPE_FLOAT32; ar[l].reduce = CC_REDUCE_SUM;
                ar[l].n_elems = n_elems; ar[l].comm = comm; ar[l].send_buf = m->comm_src; ar[l].recv_buf = m->comm_dst;
                snprintf(name, sizeof name, "L%d.all_reduce", l);
                d.coll = &ar[l];
            } else {
                cp[l].dst = m->comm_dst; cp[l].src = m->comm_src; cp[l].n_bytes = n_elems * sizeof(float);
                snprintf(name, sizeof name, "L%d.copy", l);
                d.fn = op_copy; d.user_data = &cp[l];
            }
            d.name = name;
            CHECK_CC(cc_graph_add_op(g, &d, &red));
            comm_ops[l] = red;
            /* the update writes w of the layer, which its last dX reads */
            d = cc_op_desc();
            up[l].y = m->w + (size_t)3 * l * dd; up[l].x = m->dw + (size_t)3 * l * dd; up[l].n = 3 * dd; up[l].a = -1e-6f;
            ud[0] = red; ud[1] = last_dx;
            snprintf(name, sizeof name, "L%d.update", l);
            d.name = name; d.duration_us = 1; d.fn = op_axpy; d.user_data = &up[l]; d.deps = ud; d.n_deps = 2;
            CHECK_CC(cc_graph_add_op(g, &d, &upd));   /* the next layer's backward follows last_dx, not this */
        }
    }
    free(fw);
    return g;
}

static void step_run(const model* m, cc_comm* comm, size_t n_elems, step_row* row) {
    mm_arg* mm = (mm_arg*)calloc((size_t)m->n_sub * 3, sizeof(mm_arg));
    axpy_arg* up = (axpy_arg*)calloc((size_t)m->L, sizeof(axpy_arg));
    cc_collective* ar = (cc_collective*)calloc((size_t)m->L, sizeof(cc_collective));
    copy_arg* cp = (copy_arg*)calloc((size_t)m->L, sizeof(copy_arg));
    cc_op* comm_ops = (cc_op*)calloc((size_t)m->L, sizeof(cc_op));
    cc_op* bwd_ops = (cc_op*)calloc((size_t)m->n_sub * 2, sizeof(cc_op));
    cc_graph* g;
    cc_backend be;
    cc_schedule sched;
    double* en;
    int n, i, pass;
    if (!mm || !up || !ar || !cp || !comm_ops || !bwd_ops) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
    g = step_graph(m, comm, n_elems, mm, up, ar, cp, comm_ops, bwd_ops);
    n = cc_graph_n_ops(g);
    en = (double*)malloc(sizeof(double) * (size_t)n);
    if (!en) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
    CHECK_CC(cc_cuda_backend_create(ctx, NULL, &be));
    memset(&sched, 0, sizeof sched);
    for (pass = 0; pass < 2; pass++) {
        cc_plan* pl;
        cc_exec* x;
        double steps[15];
        int s;
        CHECK_CC(cc_plan_create(ctx, g, pass ? sched.order : NULL, &pl));
        CHECK_CC(cc_exec_create(ctx, pl, &be, &x));
        if (comm) CHECK_CC(cc_exec_agree(x, comm));
        if (pass == 0) {
            cc_sched_desc sd = {};
            cc_op* prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
            if (!prog) { fprintf(stderr, "bench_gpu: out of memory\n"); exit(1); }
            (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
            CHECK_CC(cc_exec_profile_ops(x, 5, comm));
            CHECK_CC(cc_sched_solve(ctx, g, &sd, &sched));
            for (i = 0; i < n; i++) prog[i] = cc_graph_op(g, i);
            CHECK_CC(cc_simulate(ctx, g, prog, n, NULL, &row->pred[0]));
            row->pred[1] = sched.makespan_us;
            free(prog);
            row->comm_us = row->bwd_us = 0;
            for (i = 0; i < m->L; i++) row->comm_us += cc_op_duration_us(g, comm_ops[i]);
            for (i = 0; i < 2 * m->n_sub; i++) row->bwd_us += cc_op_duration_us(g, bwd_ops[i]);
        }
        CHECK_CC(cc_exec_step(x));   /* warm up */
        for (s = 0; s < 15; s++) {
            CHECK_CC(cc_exec_step(x));
            CHECK_CC(cc_exec_timeline(x, NULL, en));
            for (i = 0, steps[s] = 0; i < n; i++) if (en[i] > steps[s]) steps[s] = en[i];
        }
        row->meas[pass] = median(steps, 15);
        cc_exec_destroy(x);
        cc_plan_destroy(pl);
    }
    cc_backend_destroy(&be);
    cc_schedule_release(ctx, &sched);
    cc_graph_destroy(g);
    free(en); free(mm); free(up); free(ar); free(cp); free(comm_ops); free(bwd_ops);
}

#define N_TARGETS 3
static int run_step(const step_opts* o) {
    static const double targets[N_TARGETS] = { 0.5, 1.0, 2.0 };
    const int n_targets = N_TARGETS;
    size_t free_b = 0, total_b = 0, probe_elems = (size_t)16 << 20, cap, need[N_TARGETS];
    cc_comm* comm = NULL;
    cudaStream_t s;
    model m;
    comm_probe probe;
    double bwd_layer_us, comm_probe_us;
    int k;
    if (!o->copies) {
        ncclUniqueId id;
        cc_nccl_desc nd = {};
        nd.name = "one-rank";
        CHECK_NCCL(ncclGetUniqueId(&id));
        CHECK_CC(cc_nccl_comm_init_rank(ctx, &id, 1, 0, &nd, &comm));
    }
    /* calibration, with the communication buffers at the probe's size */
    memset(&m, 0, sizeof m);
    alloc_model(&m, o, probe_elems);
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    bwd_layer_us = time_on_stream(backward_layer, &m, s);
    probe.m = &m; probe.comm = comm; probe.n_elems = probe_elems;
    comm_probe_us = time_on_stream(comm_once, &probe, s);
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_CUDA(cudaFree(m.mem));
    /* sizes: target x the layer's backward, at the probe's rate; the two
       buffers take at most half the free memory */
    CHECK_CUDA(cudaMemGetInfo(&free_b, &total_b));
    cap = free_b / 4 / sizeof(float);
    for (k = 0; k < n_targets; k++) {
        double want = targets[k] * bwd_layer_us / comm_probe_us * (double)probe_elems;
        need[k] = want < 256 ? 256 : (size_t)want / 256 * 256;
    }
    alloc_model(&m, o, need[n_targets - 1] < cap ? need[n_targets - 1] : cap);
    printf("| communication | comm / backward compute, target | comm / backward compute, profiled | MiB per layer "
           "| program predicted us | program measured us | ratio | scheduled predicted us | scheduled measured us | ratio "
           "| speed-up predicted | speed-up measured | device |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (k = 0; k < n_targets; k++) {
        step_row row;
        size_t n_elems = need[k] < m.comm_cap ? need[k] : m.comm_cap;
        memset(&row, 0, sizeof row);
        row.target = targets[k];
        row.capped = n_elems < need[k];
        row.mib = (double)n_elems * sizeof(float) / (1024.0 * 1024.0);
        step_run(&m, comm, n_elems, &row);
        printf("| %s | %.1f%s | %.2f | %.0f | %.0f | %.0f | %.3f | %.0f | %.0f | %.3f | %.2fx | %.2fx | measured on %s |\n",
               comm ? "NCCL all-reduce, 1 rank" : "cudaMemcpyAsync", row.target, row.capped ? " (capped by memory)" : "",
               row.comm_us / row.bwd_us, row.mib, row.pred[0], row.meas[0], row.meas[0] / row.pred[0], row.pred[1], row.meas[1],
               row.meas[1] / row.pred[1], row.pred[0] / row.pred[1], row.meas[0] / row.meas[1], device_name);
        fflush(stdout);
    }
    CHECK_CUDA(cudaFree(m.mem));
    cc_comm_destroy(comm);
    return 0;
}

/* ---- main ---------------------------------------------------------------- */
static int usage(void) {
    fprintf(stderr, "usage: bench_gpu device | overhead | graphs | step [--copies] [--layers L] [--dim D]\n");
    return 2;
}

int main(int argc, char** argv) {
    step_opts o;
    cudaDeviceProp prop;
    cudaError_t e;
    int n_dev = 0, i, rc;
    const char* what = argc > 1 ? argv[1] : "";
    o.layers = 12; o.dim = 512; o.copies = 0;
    if (strcmp(what, "device") && strcmp(what, "overhead") && strcmp(what, "graphs") && strcmp(what, "step")) return usage();
    for (i = 2; i < argc; i++) {
        if (!strcmp(what, "step") && !strcmp(argv[i], "--copies")) o.copies = 1;
        else if (!strcmp(what, "step") && !strcmp(argv[i], "--layers") && i + 1 < argc) o.layers = atoi(argv[++i]);
        else if (!strcmp(what, "step") && !strcmp(argv[i], "--dim") && i + 1 < argc) o.dim = atoi(argv[++i]);
        else return usage();
    }
    if (o.layers < 1 || o.layers > 1000 || o.dim < 16 || o.dim > 8192) {
        fprintf(stderr, "bench_gpu: --layers must be 1..1000 and --dim 16..8192\n");
        return 2;
    }
    e = cudaGetDeviceCount(&n_dev);
    if (e != cudaSuccess || n_dev < 1) {
        printf("GPU benchmarks skipped: no usable CUDA device (cudaGetDeviceCount: %s%s%s)\n",
               e == cudaSuccess ? "0 devices" : cudaGetErrorName(e), e == cudaSuccess ? "" : ", ",
               e == cudaSuccess ? "" : cudaGetErrorString(e));
        return 0;
    }
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
    snprintf(device_name, sizeof device_name, "%s", prop.name);
    if (!strcmp(what, "device")) {
        printf("device: %s (compute capability %d.%d, %d SMs, %.0f GiB); built with CUDA runtime %d, NCCL %d\n", prop.name, prop.major,
               prop.minor, prop.multiProcessorCount, (double)prop.totalGlobalMem / (1024.0 * 1024.0 * 1024.0), CUDART_VERSION,
               NCCL_VERSION_CODE);
        return 0;
    }
    if (cc_context_create(NULL, &ctx) != CC_OK) { fprintf(stderr, "bench_gpu: cc_context_create failed\n"); return 1; }
    if (!strcmp(what, "overhead")) rc = run_overhead();
    else if (!strcmp(what, "graphs")) rc = run_graphs();
    else rc = run_step(&o);
    cc_context_destroy(ctx);
    return rc;
}
