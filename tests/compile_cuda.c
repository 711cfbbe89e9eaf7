/* tests/compile_cuda.c - concerto.h, concerto_cuda.h and concerto_nccl.h with
   their implementations in one translation unit, compiled twice by the
   Makefile: by gcc as C11 (-Wall -Wextra -Werror -pedantic; CUDA's headers
   are not C99 -pedantic clean) into compile_cuda, and by nvcc as CUDA C++
   (-x cu, warnings as errors) into compile_cuda_nvcc; both linked against
   the real libcudart and libnccl. The headers are included twice before
   the implementation and twice with it.

   Run, each checks what needs no GPU (and, on a machine with one, that the
   backend and a one-rank communicator are made and freed):
   - the descs and their defaults, the function tables;
   - cc_exec_create refuses a plan whose collective runs on the world's
     host communicator with the CUDA backend (before touching the device);
   - without a GPU, cc_cuda_backend_create, cc_nccl_comm_init_rank and
     cc_nccl_comm_init_all fail with CC_ERR_BACKEND, naming the CUDA or
     NCCL call and its error, leaving nothing allocated;
   - the unique-id exchanges (ncclGetUniqueId needs no GPU): through a file
     and over TCP between threads, every rank gets rank 0's id; their
     timeouts, a foreign file, a mismatched n_ranks and bad arguments fail
     with the right result and a message naming the file or host:port.
   CONCERTO_TEST_NO_NCCL: CUDA without NCCL (the NCCL part is skipped).
   CONCERTO_NCCL_WITH_MPI: the MPI variant (compile_cuda_mpi, built by
   mpicc where MPI is found): concerto_nccl.h also declares and builds
   cc_nccl_id_exchange_mpi, which tests/test_mpi.sh runs under mpirun -np 2:
   every rank gets the root's id, and a root outside the communicator is
   refused. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../concerto.h"
#include "../concerto_cuda.h"
#ifndef CONCERTO_TEST_NO_NCCL
#include "../concerto_nccl.h"
#endif
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
#include "../concerto.h"
#include "../concerto_cuda.h"
#ifndef CONCERTO_TEST_NO_NCCL
#include "../concerto_nccl.h"
#endif
#include "harness.h"

#if defined(__SANITIZE_ADDRESS__)
/* NCCL keeps its bootstrap's memory until the process ends. */
#ifdef __cplusplus
extern "C"
#endif
const char* __asan_default_options(void);
const char* __asan_default_options(void) { return "detect_leaks=0"; }
#endif

static int have_gpu;   /* cudaGetDeviceCount found a device */

/* ---- a counting allocator: what the library leaves allocated -------------*/
typedef struct counting { long live; } counting;
static void* count_alloc(size_t n, void* ud) { void* p = malloc(n); if (p) ((counting*)ud)->live++; return p; }
static void* count_realloc(void* p, size_t n, void* ud) {
    void* q = realloc(p, n ? n : 1);
    if (q && !p) ((counting*)ud)->live++;
    return q;
}
static void count_free(void* p, void* ud) { if (p) { ((counting*)ud)->live--; free(p); } }

static cc_context* counted_context(counting* c) {
    cc_context_desc d;
    memset(&d, 0, sizeof d);
    cc_context* ctx = NULL;
    c->live = 0;
    d.allocator.alloc_fn = count_alloc;
    d.allocator.realloc_fn = count_realloc;
    d.allocator.free_fn = count_free;
    d.allocator.user_data = c;
    if (cc_context_create(&d, &ctx) != CC_OK) return NULL;
    c->live = 0;   /* the context itself is not counted */
    return ctx;
}

/* ---- CUDA -------------------------------------------------------------------*/
static void test_versions(void) {
    int n = -1;
#ifndef CONCERTO_TEST_NO_NCCL
    int v = 0;
#endif
    cudaError_t e = cudaGetDeviceCount(&n);
    have_gpu = e == cudaSuccess && n > 0;
    NOTE("cudaGetDeviceCount: %s (%d device%s)%s", e == cudaSuccess ? "success" : cudaGetErrorName(e), n < 0 ? 0 : n,
         n == 1 ? "" : "s", have_gpu ? "" : ": no GPU, the checks below are those that need none");
    CHECK(CUDART_VERSION >= 12000, "built against CUDA 12 or later (CUDART_VERSION %d)", (int)CUDART_VERSION);
#ifndef CONCERTO_TEST_NO_NCCL
    if (ncclGetVersion(&v) != ncclSuccess) v = -1;
    CHECK(v >= 21800, "ncclGetVersion links and says 2.18 or later (%d)", v);
#endif
}

static void test_cuda_desc(void) {
    cc_cuda_backend_desc d, q;
    memset(&d, 0, sizeof d);   /* zero: every default ({0} in C, {} in C++) */
    q = cc_cuda_backend_query_defaults(NULL);
    CHECK(q.select_device == 0 && q.device == 0 && q.use_graphs == 0 && q.timeout_s == 30.0,
          "query_defaults(NULL): the current device, no graphs, 30 s");
    q = cc_cuda_backend_query_defaults(&d);
    CHECK(q.select_device == 0 && q.device == 0 && q.use_graphs == 0 && q.timeout_s == 30.0,
          "query_defaults of a zero desc: the same as NULL's");
    d.timeout_s = 2.5; d.select_device = 1; d.device = 3; d.use_graphs = 1;
    q = cc_cuda_backend_query_defaults(&d);
    CHECK(q.select_device == 1 && q.device == 3 && q.use_graphs == 1 && q.timeout_s == 2.5, "query_defaults keeps what was set");
}

static void test_cuda_table(void) {
    const cc_backend_fns* f = cc_cuda_backend_fns();
    cc_backend none;
    const char* why = NULL;
    int r;
    CHECK(f && strcmp(f->name, "cuda") == 0 && f->stream_kind && strcmp(f->stream_kind, "cuda") == 0,
          "the table is named 'cuda' and takes 'cuda' streams");
    CHECK(f->stream_create && f->stream_destroy && f->launch && f->collective && f->event_create && f->event_destroy &&
          f->event_record && f->stream_wait_event && f->timestamp && f->synchronize && f->now_us && f->mem_alloc &&
          f->mem_free && f->mem_copy && f->step_begin && f->step_end && f->label && f->destroy, "every entry is there");
    CHECK(f->now_us(NULL) > 0, "now_us reads the monotonic clock without a device");
    memset(&none, 0, sizeof none);
    none.fns = f;
    r = cc_cuda_backend_graph_status(&none, &why);
    CHECK(r == 0 && why && strstr(why, "not a CUDA backend"), "graph_status of no backend: 0, '%s'", why ? why : "(null)");
    CHECK(cc_cuda_backend_graph_status(NULL, NULL) == 0, "graph_status(NULL, NULL): 0");
}

static void test_cuda_create(void) {
    counting cnt;
    cc_context* ctx = counted_context(&cnt);
    cc_cuda_backend_desc d;
    cc_backend be;
    cc_result r;
    const char* why = NULL;
    if (!CHECK(ctx != NULL, "a counted context")) return;
    memset(&d, 0, sizeof d);
    memset(&be, 1, sizeof be);
    d.timeout_s = -1;
    r = cc_cuda_backend_create(ctx, &d, &be);
    CHECK(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "timeout_s -1"), "timeout_s -1 is refused: %s", cc_last_error(ctx));
    CHECK(be.fns == NULL && be.self == NULL, "and *out is zero");
    memset(&d, 0, sizeof d); d.select_device = 1; d.device = -2;
    CHECK(cc_cuda_backend_create(ctx, &d, &be) == CC_ERR_INVALID_ARG, "device -2 is refused");
    memset(&d, 0, sizeof d); d.device = 1;
    r = cc_cuda_backend_create(ctx, &d, &be);
    CHECK(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "select_device 0, device 1"),
          "a device without select_device is refused, not ignored: %s", cc_last_error(ctx));
    memset(&d, 0, sizeof d); d.select_device = 2;
    CHECK(cc_cuda_backend_create(ctx, &d, &be) == CC_ERR_INVALID_ARG, "select_device 2 is refused");
    memset(&d, 0, sizeof d); d.use_graphs = 2;
    CHECK(cc_cuda_backend_create(ctx, &d, &be) == CC_ERR_INVALID_ARG, "use_graphs 2 is refused");
    CHECK(cc_cuda_backend_create(ctx, NULL, NULL) == CC_ERR_INVALID_ARG, "out NULL is refused");
    CHECK(cc_cuda_backend_create(NULL, NULL, &be) == CC_ERR_INVALID_ARG, "ctx NULL is refused");
    r = cc_cuda_backend_create(ctx, NULL, &be);
    if (have_gpu) {
        CHECK(r == CC_OK, "on the GPU, the default desc gives a backend (%s)", cc_last_error(ctx));
        int st = cc_cuda_backend_graph_status(&be, &why);
        CHECK(st == 0 && why && strstr(why, "use_graphs is 0"),
              "plain launches: '%s'", why ? why : "(null)");
        cc_backend_destroy(&be);
        memset(&d, 0, sizeof d); d.use_graphs = 1; d.select_device = 1; d.device = 0;
        r = cc_cuda_backend_create(ctx, &d, &be);
        why = NULL;
        st = r == CC_OK ? cc_cuda_backend_graph_status(&be, &why) : -1;
        CHECK(st == 0 && why && strstr(why, "no step captured yet"), "with use_graphs on device 0: '%s'", why ? why : "(null)");
        cc_backend_destroy(&be);
    } else {
        const char* m = cc_last_error(ctx);
        CHECK(r == CC_ERR_BACKEND, "without a GPU, cc_cuda_backend_create fails with CC_ERR_BACKEND (%d)", (int)r);
        CHECK(strstr(m, "cc_cuda_backend_create: cudaGetDevice failed: ") && strstr(m, "(cudaError"),
              "naming the CUDA call and its error: %s", m);
        CHECK(be.fns == NULL && be.self == NULL, "*out is zero");
        memset(&d, 0, sizeof d); d.select_device = 1; d.device = 0;
        r = cc_cuda_backend_create(ctx, &d, &be);
        m = cc_last_error(ctx);
        CHECK(r == CC_ERR_BACKEND && strstr(m, "(device 0): cudaSetDevice failed: "), "device 0: names cudaSetDevice: %s", m);
    }
    CHECK_INT(cnt.live, 0, "nothing is left allocated in the context");
    cc_context_destroy(ctx);
}

/* A plan with a collective of the in-process world (host streams): the
   CUDA backend cannot run it, and cc_exec_create says so before it makes a
   stream. */
static cc_result refuse_rank(cc_rank* rank, void* arg) {
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g = NULL;
    cc_plan* plan = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_collective c;
    cc_op_desc d;
    memset(&d, 0, sizeof d);
    cc_op op;
    float buf[4] = {1, 2, 3, 4};
    cc_result r = CC_ERR_BACKEND;
    (void)arg;
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.n_elems = 4;
    c.comm = cc_rank_world_comm(rank); c.send_buf = buf; c.recv_buf = buf;
    d.name = "grad_allreduce"; d.stream = CC_STREAM_COMM; d.duration_us = 5; d.coll = &c;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK || cc_graph_add_op(g, &d, &op) != CC_OK ||
        cc_plan_create(ctx, g, NULL, &plan) != CC_OK) goto done;
    be.fns = cc_cuda_backend_fns();
    be.self = NULL;   /* never reached: the plan is refused first */
    r = cc_exec_create(ctx, plan, &be, &x);
    if (r == CC_OK) cc_exec_destroy(x);
done:
    cc_plan_destroy(plan);
    cc_graph_destroy(g);
    return r;
}

static char refuse_msg[600];

static void test_exec_refuses_world(void) {
    cc_context* ctx = NULL;
    cc_world* w = NULL;
    cc_result r;
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK && cc_world_create(ctx, NULL, &w) == CC_OK, "a world of one rank"))
        { cc_context_destroy(ctx); return; }
    r = cc_world_run(w, refuse_rank, NULL);
    snprintf(refuse_msg, sizeof refuse_msg, "%s", cc_world_error(w));
    CHECK(r == CC_ERR_UNSUPPORTED, "cc_exec_create refuses a world collective on the CUDA backend (%d)", (int)r);
    CHECK(strstr(refuse_msg, "grad_allreduce") && strstr(refuse_msg, "'host' streams") && strstr(refuse_msg, "backend 'cuda'"),
          "naming the op, the communicator's stream kind and the backend: %s", refuse_msg);
    cc_world_destroy(w);
    cc_context_destroy(ctx);
}

#ifndef CONCERTO_TEST_NO_NCCL
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char* tmp_dir(void) {
    const char* t = getenv("TEST_TMPDIR");
    return t && t[0] ? t : "/tmp";
}

/* ---- NCCL ---------------------------------------------------------------------*/
static void test_nccl_desc_table(void) {
    cc_nccl_desc d, q;
    const cc_comm_fns* f = cc_nccl_comm_fns();
    memset(&d, 0, sizeof d);
    CHECK(d.name == NULL && d.timeout_s == 0, "the default NCCL desc is all zero");
    q = cc_nccl_query_defaults(NULL);
    CHECK(q.name && strcmp(q.name, "nccl") == 0 && q.timeout_s == 30.0, "query_defaults(NULL): 'nccl', 30 s");
    d.name = "tp"; d.timeout_s = 4;
    q = cc_nccl_query_defaults(&d);
    CHECK(strcmp(q.name, "tp") == 0 && q.timeout_s == 4, "query_defaults keeps what was set");
    CHECK(f && strcmp(f->family, "nccl") == 0 && strcmp(f->stream_kind, "cuda") == 0, "the family 'nccl' takes 'cuda' streams");
    CHECK(f->collective && f->split && f->destroy && f->poll && f->abort, "with every entry, poll and abort included");
    CHECK(cc_nccl_comm_handle(NULL) == NULL, "cc_nccl_comm_handle(NULL) is NULL");
}

static void test_nccl_init(void) {
    counting cnt;
    cc_context* ctx = counted_context(&cnt);
    ncclUniqueId id;
    cc_comm* comm = (cc_comm*)&cnt;   /* not NULL: the call must clear it */
    cc_comm* comms[2];
    cc_nccl_desc nd;
    memset(&nd, 0, sizeof nd);
    cc_result r;
    if (!CHECK(ctx != NULL, "a counted context")) return;
    memset(&id, 0, sizeof id);
    CHECK(cc_nccl_comm_init_rank(ctx, &id, 0, 0, NULL, &comm) == CC_ERR_INVALID_ARG && comm == NULL,
          "n_ranks 0 is refused and *out cleared");
    CHECK(cc_nccl_comm_init_rank(ctx, &id, 2, 2, NULL, &comm) == CC_ERR_INVALID_ARG &&
          strstr(cc_last_error(ctx), "need 0 <= rank < n_ranks"), "rank 2 of 2 is refused: %s", cc_last_error(ctx));
    CHECK(cc_nccl_comm_init_rank(ctx, NULL, 1, 0, NULL, &comm) == CC_ERR_INVALID_ARG, "a NULL id is refused");
    CHECK(cc_nccl_comm_init_all(ctx, 0, NULL, comms) == CC_ERR_INVALID_ARG, "init_all of 0 devices is refused");
    if (!CHECK(ncclGetUniqueId(&id) == ncclSuccess, "ncclGetUniqueId works without a GPU")) { cc_context_destroy(ctx); return; }
    nd.name = "solo";
    r = cc_nccl_comm_init_rank(ctx, &id, 1, 0, &nd, &comm);
    if (have_gpu) {
        cc_comm* none = (cc_comm*)&cnt;
        CHECK(r == CC_OK, "on the GPU, a one-rank communicator (%s)", cc_last_error(ctx));
        if (r == CC_OK) {
            CHECK(cc_comm_rank(comm) == 0 && cc_comm_size(comm) == 1 && strcmp(cc_comm_name(comm), "solo") == 0 &&
                  strcmp(cc_comm_family(comm), "nccl") == 0, "rank 0 of 1, named 'solo', family 'nccl'");
            CHECK(cc_nccl_comm_handle(comm) != NULL, "with its NCCL handle");
            CHECK(cc_comm_split(comm, -1, 0, &none) == CC_OK && none == NULL, "a split with color -1 gives no communicator");
            cc_comm_destroy(comm);
        }
    } else {
        const char* m = cc_last_error(ctx);
        CHECK(r == CC_ERR_BACKEND && comm == NULL, "without a GPU, cc_nccl_comm_init_rank fails with CC_ERR_BACKEND (%d)", (int)r);
        CHECK(strstr(m, "cc_nccl_comm_init_rank 'solo' (rank 0 of 1): ncclCommInitRankConfig failed: ") != NULL,
              "naming the communicator and the NCCL call: %s", m);
        comms[0] = comms[1] = (cc_comm*)&cnt;
        r = cc_nccl_comm_init_all(ctx, 2, NULL, comms);
        m = cc_last_error(ctx);
        CHECK(r == CC_ERR_BACKEND && comms[0] == NULL && comms[1] == NULL, "cc_nccl_comm_init_all fails and clears comms (%d)", (int)r);
        CHECK(strstr(m, "cc_nccl_comm_init_all (devices 0, 1): ") != NULL && strstr(m, " failed: ") != NULL,
              "naming the devices and the failed call: %s", m);
    }
    CHECK_INT(cnt.live, 0, "nothing is left allocated in the context");
    cc_context_destroy(ctx);
}

/* ---- the unique id through a file ------------------------------------------*/
static void test_id_file(void) {
    cc_context* ctx = NULL;
    char path[512], bad[512];
    ncclUniqueId id0, id1;
    double t0;
    cc_result r;
    FILE* f;
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "a context")) return;
    snprintf(path, sizeof path, "%s/compile_cuda_%ld.id", tmp_dir(), (long)getpid());
    snprintf(bad, sizeof bad, "%s/compile_cuda_%ld.bad", tmp_dir(), (long)getpid());
    remove(path);
    t0 = now_s();
    r = cc_nccl_id_exchange_file(ctx, path, 1, 0.2, &id1);
    t0 = now_s() - t0;
    CHECK(r == CC_ERR_TIMEOUT && strstr(cc_last_error(ctx), path) && strstr(cc_last_error(ctx), "after 0.2 s"),
          "rank 1 with no file: CC_ERR_TIMEOUT naming the path: %s", cc_last_error(ctx));
    CHECK(t0 >= 0.2 && t0 < 5.0, "after its timeout (%.3f s)", t0);
    memset(&id0, 1, sizeof id0);
    memset(&id1, 2, sizeof id1);
    r = cc_nccl_id_exchange_file(ctx, path, 0, 0, &id0);
    CHECK(r == CC_OK, "rank 0 writes the id (%s)", r == CC_OK ? "" : cc_last_error(ctx));
    r = cc_nccl_id_exchange_file(ctx, path, 1, 0, &id1);
    CHECK(r == CC_OK && memcmp(&id0, &id1, sizeof id0) == 0, "rank 1 reads rank 0's id (%s)", r == CC_OK ? "" : cc_last_error(ctx));
    remove(path);
    if ((f = fopen(bad, "wb")) != NULL) { fputs("not an id at all, but long enough to be read", f); fclose(f); }
    r = cc_nccl_id_exchange_file(ctx, bad, 3, 1, &id1);
    CHECK(r == CC_ERR_PARSE && strstr(cc_last_error(ctx), bad), "a foreign file: CC_ERR_PARSE naming it: %s", cc_last_error(ctx));
    remove(bad);
    r = cc_nccl_id_exchange_file(ctx, "/nonexistent_concerto_dir/job.id", 0, 1, &id0);
    CHECK(r == CC_ERR_IO && strstr(cc_last_error(ctx), "/nonexistent_concerto_dir/job.id.tmp.") &&
          strstr(cc_last_error(ctx), strerror(ENOENT)), "an unwritable place: CC_ERR_IO naming the file and errno's text: %s",
          cc_last_error(ctx));
    CHECK(cc_nccl_id_exchange_file(ctx, NULL, 0, 1, &id0) == CC_ERR_INVALID_ARG, "no path is refused");
    CHECK(cc_nccl_id_exchange_file(ctx, path, -1, 1, &id0) == CC_ERR_INVALID_ARG, "rank -1 is refused");
    CHECK(cc_nccl_id_exchange_file(ctx, path, 1, -1, &id0) == CC_ERR_INVALID_ARG, "timeout -1 is refused");
    cc_context_destroy(ctx);
}

/* ---- the unique id over TCP, ranks as threads ---------------------------------*/
typedef struct tcp_rank {
    int port, rank, n_ranks;
    double timeout_s;
    ncclUniqueId id;
    cc_result r;
    char msg[600];
} tcp_rank;

static void* tcp_rank_main(void* arg) {
    tcp_rank* t = (tcp_rank*)arg;
    cc_context* ctx = NULL;
    if (cc_context_create(NULL, &ctx) != CC_OK) { t->r = CC_ERR_OUT_OF_MEMORY; return NULL; }
    t->r = cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", t->port, t->rank, t->n_ranks, t->timeout_s, &t->id);
    snprintf(t->msg, sizeof t->msg, "%s", cc_last_error(ctx));
    cc_context_destroy(ctx);
    return NULL;
}

/* Runs n ranks (n_ranks and timeouts per rank) as threads; 0 if a thread
   could not start. */
static int tcp_run(tcp_rank* t, int n) {
    pthread_t th[8];
    int i, ok = 1;
    for (i = 0; i < n; i++) if (pthread_create(&th[i], NULL, tcp_rank_main, &t[i]) != 0) { ok = 0; break; }
    while (i-- > 0) pthread_join(th[i], NULL);
    return ok;
}

static void tcp_set(tcp_rank* t, int port, int rank, int n_ranks, double timeout_s) {
    memset(t, 0, sizeof *t);
    t->port = port; t->rank = rank; t->n_ranks = n_ranks; t->timeout_s = timeout_s;
}

static void test_id_tcp(void) {
    tcp_rank t[3];
    cc_context* ctx = NULL;
    ncclUniqueId id;
    int port = 0, attempt;
    char where[64];
    /* a port free on this machine (another test program may hold one) */
    for (attempt = 0; attempt < 8; attempt++) {
        port = 20000 + (int)((getpid() * 7 + attempt * 997) % 20000);
        tcp_set(&t[0], port, 0, 3, 10); tcp_set(&t[1], port, 1, 3, 10); tcp_set(&t[2], port, 2, 3, 10);
        if (!CHECK(tcp_run(t, 3), "three rank threads start")) return;
        if (!(t[0].r == CC_ERR_IO && strstr(t[0].msg, "cannot listen"))) break;
        NOTE("port %d is taken (%s): another", port, t[0].msg);
    }
    CHECK(t[0].r == CC_OK && t[1].r == CC_OK && t[2].r == CC_OK, "3 ranks over TCP on port %d: all succeed%s%s%s%s%s", port,
          t[0].r || t[1].r || t[2].r ? ": " : "", t[0].r ? t[0].msg : "", t[1].r ? t[1].msg : "", t[2].r ? t[2].msg : "", "");
    CHECK(memcmp(&t[0].id, &t[1].id, sizeof id) == 0 && memcmp(&t[0].id, &t[2].id, sizeof id) == 0,
          "ranks 1 and 2 got rank 0's id");

    /* nobody listens: the client retries until its timeout */
    tcp_set(&t[1], port, 1, 2, 0.3);
    tcp_run(&t[1], 1);
    snprintf(where, sizeof where, "127.0.0.1:%d", port);
    CHECK(t[1].r == CC_ERR_TIMEOUT && strstr(t[1].msg, where) && strstr(t[1].msg, strerror(ECONNREFUSED)),
          "nobody on %s: CC_ERR_TIMEOUT naming host:port and errno's text: %s", where, t[1].msg);

    /* rank 0 waits for a rank that never comes */
    tcp_set(&t[0], port, 0, 3, 0.5); tcp_set(&t[1], port, 1, 3, 5);
    tcp_run(t, 2);
    CHECK(t[1].r == CC_OK, "rank 1 of 3 gets its id%s%s", t[1].r ? ": " : "", t[1].r ? t[1].msg : "");
    CHECK(t[0].r == CC_ERR_TIMEOUT && strstr(t[0].msg, "missing ranks: 2") && strstr(t[0].msg, "port"),
          "rank 0: CC_ERR_TIMEOUT naming the missing rank and the port: %s", t[0].msg);

    /* ranks that disagree on n_ranks: no id for the stranger */
    tcp_set(&t[0], port, 0, 2, 0.8); tcp_set(&t[1], port, 1, 3, 0.5);
    tcp_run(t, 2);
    CHECK(t[1].r == CC_ERR_TIMEOUT && strstr(t[1].msg, "n_ranks"), "a rank with another n_ranks is turned away: %s", t[1].msg);
    CHECK(t[0].r == CC_ERR_TIMEOUT, "and rank 0 times out waiting for rank 1: %s", t[0].msg);

    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "a context")) return;
    CHECK(cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", 1, 0, 1, 1, &id) == CC_OK, "one rank: rank 0 just creates the id, "
          "listening nowhere");
    CHECK(cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", 0, 1, 2, 1, &id) == CC_ERR_INVALID_ARG &&
          strstr(cc_last_error(ctx), "port must be 1..65535"), "port 0 is refused: %s", cc_last_error(ctx));
    CHECK(cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", 70000, 1, 2, 1, &id) == CC_ERR_INVALID_ARG, "port 70000 is refused");
    CHECK(cc_nccl_id_exchange_tcp(ctx, NULL, port, 1, 2, 1, &id) == CC_ERR_INVALID_ARG, "rank 1 without a host is refused");
    CHECK(cc_nccl_id_exchange_tcp(ctx, "127.0.0.1", port, 2, 2, 1, &id) == CC_ERR_INVALID_ARG, "rank 2 of 2 is refused");
    cc_context_destroy(ctx);
}
#endif /* CONCERTO_TEST_NO_NCCL */

#if defined(CONCERTO_NCCL_WITH_MPI) && defined(CONCERTO_TEST_NO_NCCL)
#error "compile_cuda.c: the MPI variant tests concerto_nccl.h: it needs NCCL"
#endif
#ifdef CONCERTO_NCCL_WITH_MPI
static void test_id_mpi(void) {
    cc_context* ctx = NULL;
    ncclUniqueId id;
    unsigned char* all;
    int rank = 0, size = 1, i, same = 1, nonzero = 0;
    cc_result r;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "a context")) return;
    memset(&id, 0, sizeof id);
    r = cc_nccl_id_exchange_mpi(ctx, MPI_COMM_WORLD, size - 1, &id);
    CHECK(r == CC_OK, "cc_nccl_id_exchange_mpi from root %d of %d: %s", size - 1, size, r == CC_OK ? "" : cc_last_error(ctx));
    all = (unsigned char*)malloc(sizeof id * (size_t)size);
    if (all) {
        MPI_Allgather(&id, (int)sizeof id, MPI_BYTE, all, (int)sizeof id, MPI_BYTE, MPI_COMM_WORLD);
        for (i = 1; i < size; i++) same = same && memcmp(all, all + i * sizeof id, sizeof id) == 0;
        for (i = 0; i < (int)sizeof id; i++) nonzero = nonzero || all[i] != 0;
        free(all);
    }
    CHECK(all && same && nonzero, "every one of the %d ranks has the root's id (and it is not all zeros)", size);
    r = cc_nccl_id_exchange_mpi(ctx, MPI_COMM_WORLD, size, &id);
    CHECK(r == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "root"), "a root outside the communicator is refused: %s",
          cc_last_error(ctx));
    CHECK(cc_nccl_id_exchange_mpi(ctx, MPI_COMM_WORLD, 0, NULL) == CC_ERR_INVALID_ARG, "a NULL id is refused");
    cc_context_destroy(ctx);
}
#endif

int main(void) {
#ifdef CONCERTO_NCCL_WITH_MPI
    int mpi_rank = 0;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
    if (mpi_rank == 0) {   /* the other ranks only take part in the MPI test (the TCP test's ports are the same) */
#endif
    TH_RUN(test_versions);
    TH_RUN(test_cuda_desc);
    TH_RUN(test_cuda_table);
    TH_RUN(test_cuda_create);
    TH_RUN(test_exec_refuses_world);
#ifndef CONCERTO_TEST_NO_NCCL
    TH_RUN(test_nccl_desc_table);
    TH_RUN(test_nccl_init);
    TH_RUN(test_id_file);
    TH_RUN(test_id_tcp);
#ifdef CONCERTO_NCCL_WITH_MPI
    }
    TH_RUN(test_id_mpi);
#endif
#else
    th__test = "test_nccl";
    SKIP("built without NCCL (no <nccl.h> with -lnccl beside CUDA, or NO_NCCL=1): concerto_nccl.h is untested; install NCCL "
         "2.18 or later (libnccl-dev from NVIDIA's CUDA repository, or https://developer.nvidia.com/nccl)");
#endif
#ifdef CONCERTO_NCCL_WITH_MPI
    MPI_Finalize();
#endif
    return th_done();
}
