/* bench/mpi_overlap.c - how much of an MPI collective hides behind compute
   on the CPU backend (build/bench_mpi_overlap, by mpicc; run under mpirun,
   e.g. -np 2): a step of two independent ops, a compute loop on the
   compute stream and an all-reduce on a communication stream (concerto_mpi.h,
   progressed by MPI_Testall with naps from that stream's worker thread).
   Three plans run alternately, step by step: compute alone, the all-reduce
   alone, and both in one step. Reported (rank 0, medians of the steps):
   each alone, both, and the overlap = (compute + comm - both) /
   min(compute, comm): 1 when the shorter one hides completely behind the
   longer, 0 when they serialise.
   usage: bench_mpi_overlap [STEPS] [COMPUTE_MS] [ALLREDUCE_KIB]...   */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct work { long iters; volatile double sink; } work;

static void compute(void* stream, void* user) {
    work* w = (work*)user;
    double x = 1.0;
    long i;
    (void)stream;
    for (i = 0; i < w->iters; i++) x = x * 1.0000001 + 1e-9;
    w->sink = x;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}
static double median(double* v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* A plan of the compute op (with_compute), the all-reduce (with_comm), or both. */
static cc_result make_exec(cc_context* ctx, cc_comm* comm, cc_backend* be, work* w, float* buf, size_t n, int with_compute,
                           int with_comm, cc_graph** g, cc_plan** plan, cc_exec** ex) {
    cc_graph_desc gd = {0};
    cc_buffer b;
    cc_region r = {0};
    cc_collective co;
    cc_result rc;
    gd.n_streams = 2;
    if ((rc = cc_graph_create(ctx, &gd, g)) != CC_OK) return rc;
    if ((rc = cc_graph_add_buffer(*g, "grad", sizeof(float) * n, &b)) != CC_OK) return rc;
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = sizeof(float) * n;
    if (with_compute) {
        cc_op_desc d = {0};
        d.name = "compute";
        d.stream = 0;
        d.duration_us = 1;
        d.fn = compute;
        d.user_data = w;
        if ((rc = cc_graph_add_op(*g, &d, NULL)) != CC_OK) return rc;
    }
    if (with_comm) {
        cc_op_desc d = {0};
        memset(&co, 0, sizeof co);
        co.kind = CC_COLL_ALL_REDUCE;
        co.dtype = CC_DTYPE_FLOAT32;
        co.reduce = CC_REDUCE_SUM;
        co.n_elems = n;
        co.comm = comm;
        co.send_buf = buf;
        co.recv_buf = buf;
        d.name = "allreduce";
        d.stream = 1;
        d.duration_us = 1;
        d.reads = &r; d.n_reads = 1;
        d.writes = &r; d.n_writes = 1;
        d.coll = &co;
        if ((rc = cc_graph_add_op(*g, &d, NULL)) != CC_OK) return rc;
    }
    if ((rc = cc_graph_validate(*g)) != CC_OK) return rc;
    if ((rc = cc_plan_create(ctx, *g, NULL, plan)) != CC_OK) return rc;
    if ((rc = cc_exec_create(ctx, *plan, be, ex)) != CC_OK) return rc;
    return cc_exec_agree(*ex, comm);
}

int main(int argc, char** argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 21, rank = 0, a, k, s;
    double compute_ms = argc > 2 ? atof(argv[2]) : 20.0;
    cc_context* ctx = NULL;
    cc_comm* world = NULL;
    cc_backend be;
    cc_mpi_desc md = {0};
    work w;
    int status = 0;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    if (cc_mpi_init(ctx, &argc, &argv) != CC_OK) {
        fprintf(stderr, "bench_mpi_overlap: %s\n", cc_last_error(ctx));
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    md.name = "world";
    if (cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &world) != CC_OK || cc_cpu_backend_create_ctx(ctx, &be) != CC_OK) {
        fprintf(stderr, "bench_mpi_overlap: %s\n", cc_last_error(ctx));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* the compute loop's iterations for compute_ms, calibrated on rank 0 and shared */
    {
        double t0, ms;
        long iters = 1000000;
        w.iters = iters;
        t0 = now_ms();
        compute(NULL, &w);
        ms = now_ms() - t0;
        w.iters = (long)(iters * compute_ms / (ms > 0.01 ? ms : 0.01));
        MPI_Bcast(&w.iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        int size = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        printf("| ranks | all-reduce KiB | compute ms | all-reduce ms | both ms | overlap |\n|---|---|---|---|---|---|\n");
        (void)size;
    }
    for (a = 3; a < (argc > 3 ? argc : 6); a++) {
        size_t kib = argc > 3 ? (size_t)atol(argv[a]) : (size_t)(a == 3 ? 256 : a == 4 ? 2048 : 8192);
        size_t n = kib * 1024 / sizeof(float);
        float* buf = (float*)calloc(n, sizeof(float));
        cc_graph* g[3] = { 0 };
        cc_plan* plan[3] = { 0 };
        cc_exec* ex[3] = { 0 };
        double* ms = (double*)calloc((size_t)steps * 3, sizeof(double));
        cc_result rc = buf && ms ? CC_OK : CC_ERR_OUT_OF_MEMORY;
        for (k = 0; k < 3 && rc == CC_OK; k++)
            rc = make_exec(ctx, world, &be, &w, buf, n, k != 1, k != 0, &g[k], &plan[k], &ex[k]);
        for (s = 0; s < steps && rc == CC_OK; s++)
            for (k = 0; k < 3 && rc == CC_OK; k++) {
                double t0;
                MPI_Barrier(MPI_COMM_WORLD);
                t0 = now_ms();
                rc = cc_exec_step(ex[k]);
                ms[k * steps + s] = now_ms() - t0;
            }
        if (rc != CC_OK) {
            fprintf(stderr, "bench_mpi_overlap: rank %d: %s\n", rank, cc_last_error(ctx));
            status = 1;
        } else {
            double c, m, b, sz;
            int size = 0;
            MPI_Comm_size(MPI_COMM_WORLD, &size);
            c = median(ms, steps);
            m = median(ms + steps, steps);
            b = median(ms + 2 * steps, steps);
            sz = c < m ? c : m;
            if (rank == 0) printf("| %d | %zu | %.2f | %.2f | %.2f | %.2f |\n", size, kib, c, m, b, sz > 0 ? (c + m - b) / sz : 0);
        }
        for (k = 0; k < 3; k++) {
            cc_exec_destroy(ex[k]);
            cc_plan_destroy(plan[k]);
            cc_graph_destroy(g[k]);
        }
        free(buf);
        free(ms);
        if (status) break;
    }
    cc_backend_destroy(&be);
    cc_comm_destroy(world);
    MPI_Finalize();
    cc_context_destroy(ctx);
    return status;
}
