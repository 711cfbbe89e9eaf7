/* tests/test_gpu.c - the CUDA backend and NCCL communicators on one real GPU
   (`make test-gpu`). Without a GPU (cudaGetDeviceCount fails or finds none)
   it fails, saying why, when GPU_PRESENT=1 (`make test-gpu` found one with
   its probe, so a check that cannot run is a failure), and otherwise skips.

   The step: five ops on two streams over int32 buffers of N_ELEMS on the
   device (a, b, c, d, e):
       fill   compute   a = bytes 0x01 (cudaMemsetAsync)
       ar     comm      b = all-reduce sum of a over a one-rank NCCL
                        communicator (without NCCL: a copy on stream 1)
       fill2  compute   c = bytes 0x02
       copy   compute   d = b (cudaMemcpyAsync), after ar
       copy2  compute   e = c, after fill2
   so that after a step every element of d is 0x01010101 and of e
   0x02020202, whatever the order. d and e are cleared before each step.
   Checked: plain launches, graph warm-up, capture and replay (the same
   results, replays counted, graph status, NaN timeline), profiling, two
   executors alternating on one graph backend (each replays its own step),
   an op function that breaks the capture (the step still right, the
   capture counted as broken and the status naming it), cc_comm_run on the communicator's own
   stream, split, and last a step that hangs: synchronize gives up after
   timeout_s, names the collective and its op, aborts the communicator, and
   the failure is sticky.
   CONCERTO_TEST_NO_NCCL: without NCCL (no communicator). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../concerto.h"
#include "../concerto_cuda.h"
#ifndef CONCERTO_TEST_NO_NCCL
#include "../concerto_nccl.h"
#endif
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_cuda.h"
#ifndef CONCERTO_TEST_NO_NCCL
#include "../concerto_nccl.h"
#endif
#include "harness.h"

#define N_ELEMS (1u << 20)
#define N_BYTES ((size_t)N_ELEMS * sizeof(int32_t))

static int32_t *dev_a, *dev_b, *dev_c, *dev_d, *dev_e;
static int32_t* host_buf;
static cc_comm* comm;          /* one rank, or NULL without NCCL */

typedef struct fill_arg { void* p; int value; } fill_arg;
typedef struct copy_arg { void* dst; const void* src; } copy_arg;

static void op_fill(void* stream, void* user) {
    fill_arg* f = (fill_arg*)user;
    (void)cudaMemsetAsync(f->p, f->value, N_BYTES, (cudaStream_t)stream);
}

static void op_copy(void* stream, void* user) {
    copy_arg* c = (copy_arg*)user;
    (void)cudaMemcpyAsync(c->dst, c->src, N_BYTES, cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
}

/* An op function that makes a call that is not allowed while its thread
   captures (cudaMalloc), then its real work. */
static void op_fill_alloc(void* stream, void* user) {
    void* p = NULL;
    if (cudaMalloc(&p, 256) == cudaSuccess) (void)cudaFree(p);   /* failing, it leaves its error for the backend */
    op_fill(stream, user);
}

static fill_arg fill_a = {NULL, 0x01}, fill_c = {NULL, 0x02};
static copy_arg copy_ab, copy_bd, copy_ce;
static cc_collective ar_coll;

/* The step's graph; fill_fn for the first op. */
static cc_graph* build_step(cc_context* ctx, cc_op_fn fill_fn) {
    cc_graph* g = NULL;
    cc_op ops[5];
    cc_op_desc d;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    d = (cc_op_desc){0};
    d.name = "fill"; d.stream = CC_STREAM_COMPUTE; d.duration_us = 20; d.fn = fill_fn; d.user_data = &fill_a;
    if (cc_graph_add_op(g, &d, &ops[0]) != CC_OK) goto fail;
    d = (cc_op_desc){0};
    d.name = "ar"; d.stream = CC_STREAM_COMM; d.duration_us = 30; d.deps = &ops[0]; d.n_deps = 1;
    if (comm) {
        memset(&ar_coll, 0, sizeof ar_coll);
        ar_coll.kind = CC_COLL_ALL_REDUCE; ar_coll.dtype = CC_DTYPE_INT32; ar_coll.reduce = CC_REDUCE_SUM;
        ar_coll.n_elems = N_ELEMS; ar_coll.comm = comm; ar_coll.send_buf = dev_a; ar_coll.recv_buf = dev_b;
        d.coll = &ar_coll;
    } else {
        d.fn = op_copy; d.user_data = &copy_ab;
    }
    if (cc_graph_add_op(g, &d, &ops[1]) != CC_OK) goto fail;
    d = (cc_op_desc){0};
    d.name = "fill2"; d.stream = CC_STREAM_COMPUTE; d.duration_us = 20; d.fn = op_fill; d.user_data = &fill_c;
    if (cc_graph_add_op(g, &d, &ops[2]) != CC_OK) goto fail;
    d = (cc_op_desc){0};
    d.name = "copy"; d.stream = CC_STREAM_COMPUTE; d.duration_us = 10; d.fn = op_copy; d.user_data = &copy_bd;
    d.deps = &ops[1]; d.n_deps = 1;
    if (cc_graph_add_op(g, &d, &ops[3]) != CC_OK) goto fail;
    d = (cc_op_desc){0};
    d.name = "copy2"; d.stream = CC_STREAM_COMPUTE; d.duration_us = 10; d.fn = op_copy; d.user_data = &copy_ce;
    d.deps = &ops[2]; d.n_deps = 1;
    if (cc_graph_add_op(g, &d, &ops[4]) != CC_OK) goto fail;
    return g;
fail:
    cc_graph_destroy(g);
    return NULL;
}

static int clear_outputs(void) {
    return cudaMemsetAsync(dev_d, 0, N_BYTES, 0) == cudaSuccess && cudaMemsetAsync(dev_e, 0, N_BYTES, 0) == cudaSuccess &&
           cudaDeviceSynchronize() == cudaSuccess;
}

/* Index of the first element of dev that is not value, -1 if none, -2 if
   the copy failed. */
static long first_wrong(const int32_t* dev, int32_t value) {
    size_t i;
    if (cudaMemcpy(host_buf, dev, N_BYTES, cudaMemcpyDeviceToHost) != cudaSuccess) return -2;
    for (i = 0; i < N_ELEMS; i++) if (host_buf[i] != value) return (long)i;
    return -1;
}

/* n steps of x, each checked; returns the number of right ones. */
static int run_steps(cc_context* ctx, cc_exec* x, int n, const char* what) {
    int s, right = 0;
    for (s = 0; s < n; s++) {
        long wd, we;
        cc_result r;
        if (!clear_outputs()) { CHECK(0, "%s: clearing d and e", what); break; }
        r = cc_exec_step(x);
        if (!CHECK(r == CC_OK, "%s: step %d runs%s%s", what, s + 1, r ? ": " : "", r ? cc_last_error(ctx) : "")) break;
        wd = first_wrong(dev_d, 0x01010101);
        we = first_wrong(dev_e, 0x02020202);
        if (wd == -1 && we == -1) right++;
        else NOTE("%s: step %d: d wrong at %ld, e wrong at %ld", what, s + 1, wd, we);
    }
    return right;
}

static cc_exec* make_exec(cc_context* ctx, cc_plan* plan, cc_backend* be) {
    cc_exec* x = NULL;
    if (!CHECK(cc_exec_create(ctx, plan, be, &x) == CC_OK, "cc_exec_create (%s)", cc_last_error(ctx))) return NULL;
    if (comm && !CHECK(cc_exec_agree(x, comm) == CC_OK, "cc_exec_agree on the device (%s)", cc_last_error(ctx))) {
        cc_exec_destroy(x);
        return NULL;
    }
    return x;
}

/* Timing bounds: on a GPU, an op starts at most 50 us before the launch's
   timestamp and a failed step's successor fails within 0.2 s. On the
   stand-in (make test) the ops are threads beside every other test on the
   machine's cores, with no device clock: there only the order of the
   times is asserted. */
#ifdef TEST_GPU_STANDIN
#define LAUNCH_SLACK_US 1e9
#define FAIL_FAST_S 1e9
#else
#define LAUNCH_SLACK_US 50
#define FAIL_FAST_S 0.2
#endif

/* ---- tests ----------------------------------------------------------------------*/
static void test_plain(void) {
    cc_context* ctx = NULL;
    cc_graph* g;
    cc_plan* plan = NULL;
    cc_backend be;
    cc_exec* x;
    double start[5] = {0, 0, 0, 0, 0}, end[5] = {0, 0, 0, 0, 0};
    const char* why = NULL;
    int i, st, ok = 1;
    cc_context_create(NULL, &ctx);
    g = build_step(ctx, op_fill);
    if (!CHECK(g && cc_plan_create(ctx, g, NULL, &plan) == CC_OK, "the step's graph and plan")) goto done;
    if (!CHECK(cc_cuda_backend_create(ctx, NULL, &be) == CC_OK, "a plain backend (%s)", cc_last_error(ctx))) goto done;
    if ((x = make_exec(ctx, plan, &be)) != NULL) {
        CHECK_INT(run_steps(ctx, x, 3, "plain"), 3, "3 plain steps give d = 0x01010101, e = 0x02020202");
        st = cc_exec_timeline(x, start, end);
        CHECK(st == CC_OK, "the timeline of the last step (%s)", st == CC_OK ? "" : cc_last_error(ctx));
        for (i = 0; i < 5; i++)
            if (!(start[i] >= -LAUNCH_SLACK_US && end[i] >= start[i] && end[i] < 1e7)) ok = 0;
        CHECK(ok, "every op starts after the launch and ends after it starts (fill %.1f..%.1f us, copy2 %.1f..%.1f us)", start[0],
              end[0], start[4], end[4]);
        CHECK(end[3] >= end[1], "copy ends after ar (%.1f >= %.1f us)", end[3], end[1]);
        cc_exec_destroy(x);
    }
    st = cc_cuda_backend_graph_status(&be, &why);
    CHECK(st == 0 && strstr(why, "use_graphs is 0"), "graph status: '%s'", why);
    cc_backend_destroy(&be);
done:
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

static void test_graphs(void) {
    cc_context* ctx = NULL;
    cc_graph* g;
    cc_plan* plan = NULL;
    cc_backend be;
    cc_cuda_backend_desc bd = {0};
    cc_exec* x;
    double start[5] = {0, 0, 0, 0, 0}, end[5] = {0, 0, 0, 0, 0};
    const char* why = NULL;
    int st;
    cc_context_create(NULL, &ctx);
    g = build_step(ctx, op_fill);
    if (!CHECK(g && cc_plan_create(ctx, g, NULL, &plan) == CC_OK, "the step's graph and plan")) goto done;
    bd.use_graphs = 1;
    if (!CHECK(cc_cuda_backend_create(ctx, &bd, &be) == CC_OK, "a graph backend (%s)", cc_last_error(ctx))) goto done;
    if ((x = make_exec(ctx, plan, &be)) != NULL) {
        cc_cuda_graph_counts n = {0, 0, 0, 0};
        CHECK_INT(run_steps(ctx, x, 1, "warm-up"), 1, "the first step (its warm-up, plain) gives the plain steps' results");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 0 && strstr(why, "warm-up"), "graph status after it: 0, '%s'", why);
        CHECK_INT(run_steps(ctx, x, 1, "captured"), 1, "the captured step gives the plain steps' results");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 1 && strstr(why, "replaying"), "graph status after it: 1, '%s'", why);
        CHECK_INT(run_steps(ctx, x, 5, "replayed"), 5, "5 replayed steps give the plain steps' results");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 1, "still replaying: '%s'", why);
        (void)cc_cuda_backend_graph_counts(&be, &n);
        CHECK(n.n_plain == 1 && n.n_captured == 1 && n.n_replayed == 5,
              "1 plain, 1 captured, 5 replayed steps (%ld, %ld, %ld)", n.n_plain, n.n_captured, n.n_replayed);
        st = cc_exec_timeline(x, start, end);
        CHECK(st == CC_OK && isnan(start[0]) && isnan(end[4]), "the timeline of a replayed step is NaN (%g)", start[0]);
        (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
        CHECK(cc_exec_profile_ops(x, 3, comm) == CC_OK, "profiling on the graph backend (plain, op by op) (%s)", cc_last_error(ctx));
        CHECK_INT(run_steps(ctx, x, 2, "after profiling"), 2, "steps after profiling still right");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 1, "and replayed: '%s'", why);
        cc_exec_destroy(x);
    }
    cc_backend_destroy(&be);
done:
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

static void test_profile(void) {
    cc_context* ctx = NULL;
    cc_graph* g;
    cc_plan* plan = NULL;
    cc_backend be;
    cc_exec* x;
    int i, ok = 1;
    cc_context_create(NULL, &ctx);
    g = build_step(ctx, op_fill);
    if (!CHECK(g && cc_plan_create(ctx, g, NULL, &plan) == CC_OK, "the step's graph and plan")) goto done;
    if (!CHECK(cc_cuda_backend_create(ctx, NULL, &be) == CC_OK, "a plain backend (%s)", cc_last_error(ctx))) goto done;
    if ((x = make_exec(ctx, plan, &be)) != NULL) {
        (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
        CHECK(cc_exec_profile_ops(x, 5, comm) == CC_OK, "cc_exec_profile_ops, 5 repeats (%s)", cc_last_error(ctx));
        for (i = 0; i < 5; i++) {
            double us = cc_op_duration_us(g, cc_graph_op(g, i));
            NOTE("%s: %.1f us", cc_op_name(g, cc_graph_op(g, i)), us);
            if (!(us >= 0 && us < 1e6)) ok = 0;
        }
        CHECK(ok, "every measured duration is finite and >= 0");
        CHECK(cc_op_duration_us(g, cc_graph_op(g, 0)) > 0, "filling 4 MiB takes time (%.2f us)", cc_op_duration_us(g, cc_graph_op(g, 0)));
        CHECK_INT(run_steps(ctx, x, 2, "after profiling"), 2, "steps after profiling are right");
        cc_exec_destroy(x);
    }
    cc_backend_destroy(&be);
done:
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* Two executors of two plans on one graph backend, alternating: each keeps
   its own graph (this replaced the earlier design, in which a step that
   differed from the one captured gave graphs up for good). */
static void test_two_execs(void) {
    cc_context* ctx = NULL;
    cc_graph* g;
    cc_plan *p1 = NULL, *p2 = NULL;
    cc_backend be;
    cc_cuda_backend_desc bd = {0};
    cc_exec *x1 = NULL, *x2 = NULL;
    const char* why = NULL;
    int st, right = 0;
    cc_context_create(NULL, &ctx);
    g = build_step(ctx, op_fill);
    if (!CHECK(g && cc_plan_create(ctx, g, NULL, &p1) == CC_OK && cc_plan_create(ctx, g, NULL, &p2) == CC_OK, "two plans")) goto done;
    bd.use_graphs = 1;
    if (!CHECK(cc_cuda_backend_create(ctx, &bd, &be) == CC_OK, "a graph backend (%s)", cc_last_error(ctx))) goto done;
    if ((x1 = make_exec(ctx, p1, &be)) != NULL && (right += run_steps(ctx, x1, 2, "exec 1"), (x2 = make_exec(ctx, p2, &be)) != NULL)) {
        right += run_steps(ctx, x2, 2, "exec 2");
        right += run_steps(ctx, x1, 2, "exec 1 again");
        right += run_steps(ctx, x2, 1, "exec 2 again");
        cc_cuda_graph_counts n = {0, 0, 0, 0};
        right += run_steps(ctx, x1, 2, "exec 1, third time");
        CHECK_INT(right, 9, "every step of the two executors is right");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 1 && strstr(why, "replaying"), "the last step replayed exec 1's graph: '%s'", why);
        (void)cc_cuda_backend_graph_counts(&be, &n);
        CHECK(n.n_plain == 2 && n.n_captured == 2 && n.n_replayed == 5 &&
              n.n_graphs == 2, "each executor warmed up, was captured, then replayed: plain %ld (2), captured %ld (2), "
              "replayed %ld (5), graphs %d (2)", n.n_plain, n.n_captured, n.n_replayed, n.n_graphs);
    }
    cc_exec_destroy(x2);
    cc_exec_destroy(x1);
    cc_backend_destroy(&be);
done:
    cc_plan_destroy(p2);
    cc_plan_destroy(p1);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

static void test_capture_breaks(void) {
    cc_context* ctx = NULL;
    cc_graph* g;
    cc_plan* plan = NULL;
    cc_backend be;
    cc_cuda_backend_desc bd = {0};
    cc_exec* x;
    const char* why = NULL;
    int st;
    cc_context_create(NULL, &ctx);
    g = build_step(ctx, op_fill_alloc);
    if (!CHECK(g && cc_plan_create(ctx, g, NULL, &plan) == CC_OK, "the step's graph and plan")) goto done;
    bd.use_graphs = 1;
    if (!CHECK(cc_cuda_backend_create(ctx, &bd, &be) == CC_OK, "a graph backend (%s)", cc_last_error(ctx))) goto done;
    if ((x = make_exec(ctx, plan, &be)) != NULL) {
        cc_cuda_graph_counts n = {0, 0, 0, 0};
        CHECK_INT(run_steps(ctx, x, 3, "cudaMalloc in an op"), 3, "an op calling cudaMalloc: every step right all the same");
        st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 0 && strstr(why, "plain launches") && strstr(why, "fill"), "the capture broke, naming the op: %d, '%s'", st, why);
        (void)cc_cuda_backend_graph_counts(&be, &n);
        CHECK(n.n_captured == 0 && n.n_replayed == 0 && n.n_plain == 3,
              "no step captured or replayed, 3 plain (%ld, %ld, %ld)", n.n_captured, n.n_replayed, n.n_plain);
        cc_exec_destroy(x);
    }
    cc_backend_destroy(&be);
done:
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

#ifndef CONCERTO_TEST_NO_NCCL
static void test_comm_run(void) {
    cc_collective c;
    cc_comm* sub = NULL;
    cc_comm* none = comm;
    cc_result r;
    memset(&c, 0, sizeof c);
    if (!CHECK(cudaMemsetAsync(dev_a, 0x03, N_BYTES, 0) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess, "a = bytes 0x03")) return;
    c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_INT32; c.reduce = CC_REDUCE_MAX; c.n_elems = N_ELEMS;
    c.comm = comm; c.send_buf = dev_a; c.recv_buf = dev_d;
    CHECK(cc_comm_run(&c) == CC_OK, "cc_comm_run: an all-reduce on the communicator's own stream, waited for");
    CHECK(first_wrong(dev_d, 0x03030303) == -1, "d = a");
    c.kind = CC_COLL_ALL_TO_ALL; c.dtype = CC_DTYPE_FLOAT32; c.recv_buf = dev_e;
    CHECK(cc_comm_run(&c) == CC_OK && first_wrong(dev_e, 0x03030303) == -1, "an all-to-all of one rank copies");
    c.kind = CC_COLL_BROADCAST; c.peer = 1;
    CHECK(cc_comm_run(&c) == CC_ERR_INVALID_ARG, "a broadcast from root 1 of 1 rank is refused");
    r = cc_comm_split(comm, 0, 0, &sub);
    CHECK(r == CC_OK && sub && cc_comm_size(sub) == 1 && strcmp(cc_comm_family(sub), "nccl") == 0,
          "split with color 0: a one-rank NCCL communicator named '%s'", cc_comm_name(sub));
    cc_comm_destroy(sub);
    CHECK(cc_comm_split(comm, -1, 0, &none) == CC_OK && none == NULL, "split with color -1: none");
}
#endif

/* Set by the test's thread, read by the one running the host function:
   relaxed atomics (a plain int is a data race, which ThreadSanitizer
   reports where the stand-in runs it). */
static int release_blocker;
#define RELEASE_SET(v) __atomic_store_n(&release_blocker, (v), __ATOMIC_RELAXED)
#define RELEASE_GET() __atomic_load_n(&release_blocker, __ATOMIC_RELAXED)
#define BLOCK_S 3.0   /* the blocker gives up after this long of its own */

/* Waits for release_blocker, or BLOCK_S seconds: the step's timeout
   (0.5 s) comes first, and NCCL's abort then frees memory, which waits for
   the device, so a blocker that waited for the test alone would hold the
   abort, and the step, forever. */
static void CUDART_CB blocker(void* user) {
    struct timespec ts;
    double end = cc__now_s() + BLOCK_S;
    (void)user;
    ts.tv_sec = 0;
    ts.tv_nsec = 1000000;
    while (!RELEASE_GET() && cc__now_s() < end) nanosleep(&ts, NULL);
}

static void op_block(void* stream, void* user) { (void)cudaLaunchHostFunc((cudaStream_t)stream, blocker, user); }

/* Last: a step whose stream does not finish in time (a host function that
   waits BLOCK_S seconds). synchronize gives up after timeout_s, names the
   collective it waits for and its op, aborts the communicator (which, on
   one GPU, returns only once the blocker has ended: ncclCommAbort frees
   memory); later steps fail at once with the same message. */
static void test_timeout(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_backend be;
    cc_cuda_backend_desc bd = {0};
    cc_exec* x = NULL;
    cc_comm* own = NULL;
    cc_op ops[2];
    cc_op_desc d;
    cc_collective c;
    cc_result r;
    char first[600];
    double t0;
    cc_context_create(NULL, &ctx);
#ifndef CONCERTO_TEST_NO_NCCL
    {
        ncclUniqueId id;
        cc_nccl_desc nd = {0};
        nd.name = "hang";
        if (!CHECK(ncclGetUniqueId(&id) == ncclSuccess && cc_nccl_comm_init_rank(ctx, &id, 1, 0, &nd, &own) == CC_OK,
                   "a communicator of its own (%s)", cc_last_error(ctx))) goto done;
    }
#endif
    if (!CHECK(cc_graph_create(ctx, NULL, &g) == CC_OK, "a graph")) goto done;
    d = (cc_op_desc){0};
    d.name = "block"; d.stream = CC_STREAM_COMM; d.fn = op_block;
    if (!CHECK(cc_graph_add_op(g, &d, &ops[0]) == CC_OK, "op block")) goto done;
    d = (cc_op_desc){0};
    d.name = own ? "stuck_ar" : "stuck_copy"; d.stream = CC_STREAM_COMM; d.deps = &ops[0]; d.n_deps = 1;
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.n_elems = 1024; c.comm = own; c.send_buf = dev_a; c.recv_buf = dev_b;
    if (own) d.coll = &c;
    else { d.fn = op_copy; d.user_data = &copy_ab; }
    if (!CHECK(cc_graph_add_op(g, &d, &ops[1]) == CC_OK && cc_plan_create(ctx, g, NULL, &plan) == CC_OK, "op %s and the plan", d.name))
        goto done;
    bd.timeout_s = 0.5;
    if (!CHECK(cc_cuda_backend_create(ctx, &bd, &be) == CC_OK, "a backend with timeout_s 0.5")) goto done;
    if (!CHECK(cc_exec_create(ctx, plan, &be, &x) == CC_OK && (!own || cc_exec_agree(x, own) == CC_OK), "its executor (%s)",
               cc_last_error(ctx))) { cc_backend_destroy(&be); goto done; }
    RELEASE_SET(0);
    t0 = cc__now_s();
    r = cc_exec_step(x);
    t0 = cc__now_s() - t0;
    snprintf(first, sizeof first, "%s", cc_last_error(ctx));
    CHECK(r == CC_ERR_TIMEOUT && t0 >= 0.5 && t0 < BLOCK_S + 10, "the hanging step fails with CC_ERR_TIMEOUT after %.2f s", t0);
    CHECK(strstr(first, "did not finish within 0.5 s") != NULL, "the message says why: %s", first);
    if (own) {
        CHECK(strstr(first, "waiting for all_reduce of 1024 float32 (sum) on communicator 'hang' (nccl) at op 'stuck_ar'") != NULL,
              "names the collective, its communicator and its op");
        CHECK(strstr(first, "aborted the communicators 'hang'") != NULL, "and the communicator it aborted");
#ifndef CONCERTO_TEST_NO_NCCL
        CHECK(cc_nccl_comm_handle(own) == NULL, "which is aborted");
#endif
    }
    t0 = cc__now_s();
    r = cc_exec_step(x);
    t0 = cc__now_s() - t0;
    CHECK(r == CC_ERR_TIMEOUT && t0 < FAIL_FAST_S, "the next step fails at once (%.3f s) with CC_ERR_TIMEOUT", t0);
    CHECK(strstr(cc_last_error(ctx), "did not finish within 0.5 s") != NULL, "and the same message: %s", cc_last_error(ctx));
    RELEASE_SET(1);
    (void)cudaDeviceSynchronize();
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
done:
    RELEASE_SET(1);
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    cc_comm_destroy(own);
    cc_context_destroy(ctx);
}

int main(void) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    cc_context* ctx = NULL;
    if (e != cudaSuccess || n < 1) {
        const char* present = getenv("GPU_PRESENT");
        th__test = "test_gpu";
        if (present && !strcmp(present, "1"))   /* make test-gpu's probe found a GPU: a check that cannot run fails */
            CHECK(0, "no CUDA device (cudaGetDeviceCount: %s, %d devices) although GPU_PRESENT=1", e == cudaSuccess ? "success" :
                  cudaGetErrorName(e), n);
        else
            SKIP("no CUDA device (cudaGetDeviceCount: %s, %d devices): run `make test-gpu` on a machine with an NVIDIA GPU and "
                 "its driver", e == cudaSuccess ? "success" : cudaGetErrorName(e), n);
        return th_done();
    }
    cc_context_create(NULL, &ctx);
    host_buf = (int32_t*)malloc(N_BYTES);
    if (!host_buf || cudaMalloc((void**)&dev_a, N_BYTES) != cudaSuccess || cudaMalloc((void**)&dev_b, N_BYTES) != cudaSuccess ||
        cudaMalloc((void**)&dev_c, N_BYTES) != cudaSuccess || cudaMalloc((void**)&dev_d, N_BYTES) != cudaSuccess ||
        cudaMalloc((void**)&dev_e, N_BYTES) != cudaSuccess) {
        th__test = "test_gpu";
        CHECK(0, "allocating 5 buffers of %u int32 on the device", N_ELEMS);
        return th_done();
    }
    fill_a.p = dev_a; fill_c.p = dev_c;
    copy_ab.dst = dev_b; copy_ab.src = dev_a;
    copy_bd.dst = dev_d; copy_bd.src = dev_b;
    copy_ce.dst = dev_e; copy_ce.src = dev_c;
#ifndef CONCERTO_TEST_NO_NCCL
    {
        ncclUniqueId id;
        cc_nccl_desc nd = {0};
        th__test = "test_gpu";
        nd.name = "gpu";
        if (!CHECK(ncclGetUniqueId(&id) == ncclSuccess && cc_nccl_comm_init_rank(ctx, &id, 1, 0, &nd, &comm) == CC_OK,
                   "a one-rank NCCL communicator (%s)", cc_last_error(ctx)))
            return th_done();
    }
#else
    th__test = "test_gpu";
    SKIP("built without NCCL: the 'ar' op is a copy, no communicator is tested");
#endif
    TH_RUN(test_plain);
    TH_RUN(test_graphs);
    TH_RUN(test_profile);
    TH_RUN(test_two_execs);
    TH_RUN(test_capture_breaks);
#ifndef CONCERTO_TEST_NO_NCCL
    TH_RUN(test_comm_run);
#endif
    TH_RUN(test_timeout);
    cc_comm_destroy(comm);
    cudaFree(dev_a); cudaFree(dev_b); cudaFree(dev_c); cudaFree(dev_d); cudaFree(dev_e);
    free(host_buf);
    cc_context_destroy(ctx);
    return th_done();
}
