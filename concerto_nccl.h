/* concerto_nccl.h - NCCL communicators for concerto.h: a family of
   communicators ("nccl", stream kind "cuda") whose collectives run with
   NCCL on CUDA streams, their set-up (all GPUs of one process, or one
   process per GPU with the unique id exchanged through a file or TCP), and
   their asynchronous errors and abort for the CUDA backend's synchronize.

   DO THIS: include concerto.h first, then this header (concerto_cuda.h is
   not needed, but it is what runs these communicators' collectives in a
   plan); in the one file with the implementation, after concerto.h's:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"
       #include "concerto_cuda.h"
       #include "concerto_nccl.h"

   It includes <nccl.h> and <cuda_runtime_api.h>: compile that file as C11
   (gcc/clang) or CUDA C++ (nvcc), link with -lnccl -lcudart. NCCL 2.18 or
   later (ncclCommSplit).

   ONE PROCESS PER GPU (the usual launch: one rank per process)
       ncclUniqueId id;
       cc_nccl_id_exchange_tcp(ctx, "node0", 29500, rank, n_ranks, 60, &id);
       //   or cc_nccl_id_exchange_file(ctx, "/shared/job42.id", rank, 60, &id);
       cudaSetDevice(local_rank);
       cc_nccl_desc nd = {0};  nd.name = "world";
       cc_nccl_comm_init_rank(ctx, &id, n_ranks, rank, &nd, &world);
       cc_comm_split(world, rank / tp, rank % tp, &dp);     // subgroups
       ... cc_cuda_backend_create, cc_exec_create(ctx, plan, &be, &exec),
           cc_exec_agree(exec, world), cc_exec_step(exec) ...
       cc_comm_destroy(dp);  cc_comm_destroy(world);

   ALL GPUS OF ONE PROCESS: cc_nccl_comm_init_all makes one communicator
   per device in one call. NCCL then needs every GPU driven from its own
   host thread (each with cudaSetDevice, its own CUDA backend and
   executor), because a collective on one device waits for its peers to be
   launched. The communicators report the errors of cc_comm_run and
   cc_comm_split into the one ctx given: threads that want a context each
   can instead share a ncclUniqueId in memory and call
   cc_nccl_comm_init_rank on every thread with its own context.

   THE COLLECTIVES (cc_comm_fns.collective)
   Counts are elements, as in cc_collective; float32, float64, int32,
   float16 and bfloat16 map to NCCL's types, sum, avg and max to its
   operations. Each call is one ncclGroupStart/ncclGroupEnd: all-reduce,
   reduce-scatter, all-gather, broadcast (peer = root), send and recv (peer),
   and all-to-all as a send and a recv to every member. On a CUDA stream
   they are enqueued there; with no stream (cc_comm_run, the executor's own
   collectives on a backend without streams) they run on the communicator's
   own stream, on its device (made current for the call), and the call
   waits for them, polling ncclCommGetAsyncError, at most timeout_s before
   it aborts the communicator and fails with CC_ERR_TIMEOUT. split is
   ncclCommSplit (a negative color: no new communicator, *out NULL), poll is
   ncclCommGetAsyncError, abort is ncclCommAbort: afterwards every
   collective on the communicator fails at once quoting why.
   Every NCCL error becomes a cc_result (CC_ERR_INVALID_ARG for NCCL's
   invalid argument or usage, else CC_ERR_BACKEND) with a message naming
   the NCCL call, ncclGetErrorString and ncclGetLastError, and the
   collective (kind, element count, type, communicator, rank).

   WHAT PROTECTS YOU FROM RANKS THAT ISSUE DIFFERENT COLLECTIVES
   NCCL itself cannot tell: ranks that issue different collectives, or the
   same ones in another order, hang or corrupt data. So:
   - before the first step, cc_exec_agree compares the hashes of every
     rank's plan (its ops, their order and collectives) over the
     communicator: a rank whose plan differs gets CC_ERR_PLAN_MISMATCH and
     no step is launched;
   - during a step, the CUDA backend's synchronize polls the asynchronous
     error of every communicator the step used and, after its timeout_s,
     aborts every one of them and fails with CC_ERR_TIMEOUT, naming the
     collective it was waiting for and its op, instead of hanging. Every
     rank does so after its own timeout (a rank whose peer aborted first
     usually sees an asynchronous error sooner), and the failure is sticky
     on that backend. ncclCommAbort ends the communicator's kernels that
     wait for peers, then frees memory, which waits for the device: a
     stream held by an op of the program's own that never ends holds the
     abort too (seen on an H200 with NCCL 2.28: cuMemFreeHost inside
     ncclCommAbort).
   Set-up is not covered: ncclCommInitRank waits for every rank as long as
   NCCL's own bootstrap allows; the id exchanges below have timeouts.

   STARTING UNDER MPI (how most multi-node trainers start)
   Where MPI is there, cc_nccl_id_exchange_mpi shares the id with
   MPI_Bcast: root creates it, every member of the MPI communicator gets it.
   It is compiled when <mpi.h> was included before this header, or when
   CONCERTO_NCCL_WITH_MPI is defined (this header then includes <mpi.h>);
   otherwise concerto_nccl.h never needs MPI. MPI_Bcast blocks like the rest
   of MPI's start-up: there is no timeout, and its errors follow the MPI
   communicator's error handler (MPI_ERRORS_ARE_FATAL unless you set one).
       MPI_Init(&argc, &argv);  MPI_Comm_rank(MPI_COMM_WORLD, &rank);  ...
       cc_nccl_id_exchange_mpi(ctx, MPI_COMM_WORLD, 0, &id);
       cc_nccl_comm_init_rank(ctx, &id, n_ranks, rank, &nd, &world);

   WHAT IS VERIFIED WITHOUT A GPU
   Built in every `make test` as C11 and as CUDA C++ and linked against the
   real libnccl and libcudart; run there as far as needs no GPU: the
   descs, the family table, the unique-id exchanges through a file and
   through TCP between threads (ncclGetUniqueId needs no GPU), their
   timeouts and bad input, and communicator creation failing cleanly with
   NCCL's error named. `make test-gpu` runs a one-rank communicator's
   collectives on a real GPU. NCCL calls used: ncclGetVersion,
   ncclGetUniqueId, ncclCommInitRankConfig, ncclCommSplit,
   ncclCommDestroy, ncclCommAbort, ncclCommGetAsyncError, ncclCommCount,
   ncclCommUserRank, ncclCommCuDevice, ncclAllReduce, ncclReduceScatter,
   ncclAllGather, ncclBroadcast, ncclSend, ncclRecv, ncclGroupStart,
   ncclGroupEnd, ncclGetErrorString, ncclGetLastError; CUDA: cudaGetDevice,
   cudaSetDevice, cudaStreamCreateWithFlags, cudaStreamDestroy,
   cudaStreamQuery, cudaGetLastError, cudaGetErrorString, cudaGetErrorName.
*/
#ifndef CONCERTO_H_INCLUDED
#error "concerto_nccl.h: include concerto.h first"
#endif
#ifdef CONCERTO_NO_RUNTIME
#error "concerto_nccl.h: NCCL communicators belong to the runtime, which CONCERTO_NO_RUNTIME leaves out"
#endif

#ifndef CONCERTO_NCCL_H_INCLUDED
#define CONCERTO_NCCL_H_INCLUDED
#include <cuda_runtime_api.h>
#include <nccl.h>
#ifdef CONCERTO_NCCL_WITH_MPI
#include <mpi.h>
#endif

#if !defined(NCCL_VERSION_CODE) || NCCL_VERSION_CODE < 21800
#error "concerto_nccl.h: needs NCCL 2.18 or later (ncclCommSplit)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cc_nccl_desc {
    const char* name;   /* the communicator's name in messages (copied); NULL: "nccl" */
    /* Seconds of the monotonic clock that a collective issued with no
       stream (cc_comm_run) waits before it aborts the communicator and
       fails with CC_ERR_TIMEOUT; 0: 30 s. Communicators split from this one
       inherit it. (On a CUDA stream, the backend's timeout_s applies.) */
    double timeout_s;
} cc_nccl_desc;

/* The desc as the init functions resolve it (NULL: every field zero): name
   "nccl" where NULL, timeout_s 30 where 0. Nothing is checked. */
CONCERTO_API cc_nccl_desc cc_nccl_query_defaults(const cc_nccl_desc* desc);

/* The family's table: family "nccl", stream_kind "cuda". cc_comm_self(comm,
   cc_nccl_comm_fns()) is non-NULL for NCCL communicators. */
CONCERTO_API const cc_comm_fns* cc_nccl_comm_fns(void);

/* One communicator per device of this process (what ncclCommInitAll does:
   ncclCommInitRankConfig with blocking = 1 for each device in one group,
   so NCCL_COMM_BLOCKING=0 does not make them non-blocking): comms[i]
   is rank i, on devices[i] (devices NULL: devices 0..n_devices-1), named
   "nccl", timeout 30 s. Drive each device from its own thread (see above).
   Owned by the caller: cc_comm_destroy each. On failure every comms[i] is
   NULL. */
CONCERTO_API cc_result cc_nccl_comm_init_all(cc_context* ctx, int n_devices, const int* devices, cc_comm** comms);
/* This process's rank of n_ranks (ncclCommInitRankConfig with blocking =
   1, so NCCL_COMM_BLOCKING=0 in the environment does not make it
   non-blocking; splits are made the same way) on the calling thread's
   current device; every rank calls it with the same id. Blocks until every
   rank has joined. desc may be NULL. Owned by the caller: destroy it after
   every CUDA backend whose steps used it (cc_backend_destroy first: NCCL
   2.26 and later wait, in ncclCommDestroy and ncclCommAbort, until the CUDA
   graphs that captured the communicator's collectives are destroyed). */
CONCERTO_API cc_result cc_nccl_comm_init_rank(cc_context* ctx, const ncclUniqueId* id, int n_ranks, int rank,
                                              const cc_nccl_desc* desc, cc_comm** out);
/* The raw NCCL communicator of an NCCL communicator (for NCCL calls of your
   own), NULL for any other or an aborted one. Borrowed. */
CONCERTO_API ncclComm_t cc_nccl_comm_handle(const cc_comm* comm);

/* The unique id through a file that every rank can read (a shared file
   system, or one machine): rank 0 creates the id (ncclGetUniqueId) and
   writes it atomically (a temporary file beside path, then rename), the
   others read it, retrying until timeout_s passes (0: 30 s;
   CC_ERR_TIMEOUT). A file left by an earlier run would be read as this
   run's: remove it first, or use a path unique to the run (a job id). */
CONCERTO_API cc_result cc_nccl_id_exchange_file(cc_context* ctx, const char* path, int rank, double timeout_s,
                                                ncclUniqueId* id);
/* The unique id over TCP (plain POSIX sockets, for this bootstrap only):
   rank 0 creates it, listens on port (every interface) and hands it to
   each of the n_ranks - 1 others, which connect to host:port, retrying
   until it answers; everything within timeout_s (0: 30 s; CC_ERR_TIMEOUT,
   naming the ranks that did not come). Rank 0 ignores host. */
CONCERTO_API cc_result cc_nccl_id_exchange_tcp(cc_context* ctx, const char* host, int port, int rank, int n_ranks,
                                               double timeout_s, ncclUniqueId* id);
#if defined(MPI_VERSION) && !defined(CONCERTO__NCCL_MPI_DECLARED)
#define CONCERTO__NCCL_MPI_DECLARED
/* The unique id through MPI (see STARTING UNDER MPI): rank root of comm
   creates it (ncclGetUniqueId) and MPI_Bcast gives it to every member of
   comm, which all call this. CC_ERR_INVALID_ARG for a root outside comm;
   CC_ERR_BACKEND, naming the call, when ncclGetUniqueId or MPI fails. */
CONCERTO_API cc_result cc_nccl_id_exchange_mpi(cc_context* ctx, MPI_Comm comm, int root, ncclUniqueId* id);
#endif

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_NCCL_H_INCLUDED */

/* ========================================================================
   IMPLEMENTATION
   ======================================================================== */
#if defined(CONCERTO_IMPLEMENTATION) && !defined(CONCERTO_NCCL_IMPL_INCLUDED)
#define CONCERTO_NCCL_IMPL_INCLUDED
#ifndef CONCERTO_IMPL_INCLUDED
#error "concerto_nccl.h: its implementation needs concerto.h's: include concerto.h with CONCERTO_IMPLEMENTATION first"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

/* >>nccl
   The family: one object per communicator, wrapped by cc_comm_wrap. */

typedef struct cc__nccl_comm {
    cc_context* ctx;           /* errors of split; the wrapper's context */
    ncclComm_t nc;             /* NULL once aborted */
    cc_comm* handle;           /* the wrapper: name, rank, size */
    int device;
    double timeout_s;
    cudaStream_t own;          /* collectives with no stream; made when first needed */
    int aborted;
    char why[CONCERTO__MSG_MAX];
} cc__nccl_comm;

static const cc_comm_fns* cc__nccl_fns(void);   /* the table, defined after its entries */

static cc_result cc__nccl_code(ncclResult_t r) {
    return r == ncclInvalidArgument || r == ncclInvalidUsage ? CC_ERR_INVALID_ARG : CC_ERR_BACKEND;
}

static int cc__nccl_dtype(cc_dtype dt, ncclDataType_t* out) {
    switch (dt) {
        case CC_DTYPE_FLOAT32: *out = ncclFloat32; return 1;
        case CC_DTYPE_FLOAT64: *out = ncclFloat64; return 1;
        case CC_DTYPE_INT32: *out = ncclInt32; return 1;
        case CC_DTYPE_FLOAT16: *out = ncclFloat16; return 1;
        case CC_DTYPE_BFLOAT16: *out = ncclBfloat16; return 1;
        default: return 0;
    }
}

static int cc__nccl_op(cc_reduce_op op, ncclRedOp_t* out) {
    switch (op) {
        case CC_REDUCE_SUM: *out = ncclSum; return 1;
        case CC_REDUCE_AVG: *out = ncclAvg; return 1;
        case CC_REDUCE_MAX: *out = ncclMax; return 1;
        default: return 0;
    }
}

static const char* cc__nccl_name(const cc__nccl_comm* k) { return k->handle ? cc_comm_name(k->handle) : "nccl"; }

/* "all_reduce of 1024 float32 (sum) on communicator 'dp' (rank 0 of 2)" */
static void cc__nccl_coll_text(char* buf, size_t size, const cc__nccl_comm* k, const cc_collective* c) {
    cc__coll_text(buf, size, c);
    cc__append(buf, size, " on communicator '%s' (rank %d of %d)", cc__nccl_name(k), cc_comm_rank(k->handle), cc_comm_size(k->handle));
}

static void cc__nccl_abort(void* self, const char* why) {
    cc__nccl_comm* k = (cc__nccl_comm*)self;
    if (!k || k->aborted) return;
    cc__copy_msg(k->why, sizeof k->why, why && why[0] ? why : "aborted");
    if (k->nc) (void)ncclCommAbort(k->nc);
    k->nc = NULL;
    k->aborted = 1;
}

/* Waits for the communicator's own stream: polls it and NCCL's
   asynchronous error (also once it is done: a collective released by a
   peer's abort completes with an error); after timeout_s aborts. */
static cc_result cc__nccl_wait_own(cc__nccl_comm* k, const char* what, char* msg, size_t msg_size) {
    double deadline = cc__now_s() + k->timeout_s, nap = 20;
    for (;;) {
        ncclResult_t r, async = ncclSuccess;
        cudaError_t e = cudaStreamQuery(k->own);
        if (e != cudaSuccess && e != cudaErrorNotReady) {
            cc__fmt(msg, msg_size, "nccl: %s: cudaStreamQuery failed: %s (%s); aborted the communicator", what,
                    cudaGetErrorString(e), cudaGetErrorName(e));
            (void)cudaGetLastError();
            cc__nccl_abort(k, msg);
            return CC_ERR_BACKEND;
        }
        r = ncclCommGetAsyncError(k->nc, &async);
        if (r != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
            cc__fmt(msg, msg_size, "nccl: %s: %s: %s (%s); aborted the communicator", what,
                    r != ncclSuccess ? "ncclCommGetAsyncError failed" : "asynchronous error",
                    ncclGetErrorString(r != ncclSuccess ? r : async), ncclGetLastError(k->nc));
            cc__nccl_abort(k, msg);
            return CC_ERR_BACKEND;
        }
        if (e == cudaSuccess) return CC_OK;   /* done, and no asynchronous error (a peer's abort included) */
        if (cc__now_s() >= deadline) {
            cc__fmt(msg, msg_size, "nccl: %s did not finish within %g s (timeout_s); aborted the communicator", what, k->timeout_s);
            cc__nccl_abort(k, msg);
            return CC_ERR_TIMEOUT;
        }
        cc__nap(&nap);
    }
}

/* The NCCL calls of one collective, between ncclGroupStart and
   ncclGroupEnd; *call names the one that failed. */
static ncclResult_t cc__nccl_issue(cc__nccl_comm* k, const cc_collective* c, ncclDataType_t dt, ncclRedOp_t op,
                                   cudaStream_t s, const char** call) {
    ncclResult_t r;
    size_t esz = cc__dtype_size(c->dtype);
    int j, n = cc_comm_size(k->handle);
    switch (c->kind) {
        case CC_COLL_ALL_REDUCE:
            *call = "ncclAllReduce";
            return ncclAllReduce(c->send_buf, c->recv_buf, c->n_elems, dt, op, k->nc, s);
        case CC_COLL_REDUCE_SCATTER:
            *call = "ncclReduceScatter";
            return ncclReduceScatter(c->send_buf, c->recv_buf, c->n_elems, dt, op, k->nc, s);
        case CC_COLL_ALL_GATHER:
            *call = "ncclAllGather";
            return ncclAllGather(c->send_buf, c->recv_buf, c->n_elems, dt, k->nc, s);
        case CC_COLL_BROADCAST:
            *call = "ncclBroadcast";
            return ncclBroadcast(c->send_buf, c->recv_buf, c->n_elems, dt, c->peer, k->nc, s);
        case CC_COLL_SEND:
            *call = "ncclSend";
            return ncclSend(c->send_buf, c->n_elems, dt, c->peer, k->nc, s);
        case CC_COLL_RECV:
            *call = "ncclRecv";
            return ncclRecv(c->recv_buf, c->n_elems, dt, c->peer, k->nc, s);
        case CC_COLL_ALL_TO_ALL:
            for (j = 0; j < n; j++) {
                size_t off = (size_t)j * c->n_elems * esz;
                *call = "ncclSend (all_to_all)";
                if ((r = ncclSend((const char*)c->send_buf + off, c->n_elems, dt, j, k->nc, s)) != ncclSuccess) return r;
                *call = "ncclRecv (all_to_all)";
                if ((r = ncclRecv((char*)c->recv_buf + off, c->n_elems, dt, j, k->nc, s)) != ncclSuccess) return r;
            }
            return ncclSuccess;
        default:
            *call = "(none)";
            return ncclInvalidArgument;
    }
}

static cc_result cc__nccl_collective(void* self, void* native_stream, const cc_collective* c, char* msg, size_t msg_size) {
    cc__nccl_comm* k = (cc__nccl_comm*)self;
    char what[CONCERTO__MSG_MAX];
    ncclDataType_t dt = ncclFloat32;
    ncclRedOp_t op = ncclSum;
    ncclResult_t r, r2;
    cudaStream_t s;
    cudaError_t e;
    const char* call = "ncclGroupStart";
    int saved = -1, n = cc_comm_size(k->handle);
    cc_result rc = CC_OK;
    cc__nccl_coll_text(what, sizeof what, k, c);
    if (k->aborted) {
        cc__fmt(msg, msg_size, "nccl: %s: the communicator was aborted: %s", what, k->why);
        return CC_ERR_BACKEND;
    }
    if (c->kind < CC_COLL_ALL_REDUCE || c->kind > CC_COLL_ALL_TO_ALL || !cc__nccl_dtype(c->dtype, &dt) ||
        ((c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_REDUCE_SCATTER) && !cc__nccl_op(c->reduce, &op)) ||
        ((c->kind == CC_COLL_BROADCAST || c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) && (c->peer < 0 || c->peer >= n))) {
        cc__fmt(msg, msg_size, "nccl: %s: invalid collective (kind %d, type %d, reduction %d, peer %d of %d ranks)", what,
                (int)c->kind, (int)c->dtype, (int)c->reduce, c->peer, n);
        return CC_ERR_INVALID_ARG;
    }
    if (native_stream) s = (cudaStream_t)native_stream;
    else {   /* on the communicator's own stream, on its device */
        if ((e = cudaGetDevice(&saved)) == cudaSuccess && saved != k->device) e = cudaSetDevice(k->device);
        if (e == cudaSuccess && !k->own && (e = cudaStreamCreateWithFlags(&k->own, cudaStreamNonBlocking)) != cudaSuccess)
            k->own = NULL;
        if (e != cudaSuccess) {
            cc__fmt(msg, msg_size, "nccl: %s: setting up its device %d and stream: %s (%s)", what, k->device,
                    cudaGetErrorString(e), cudaGetErrorName(e));
            (void)cudaGetLastError();
            if (saved >= 0 && saved != k->device) (void)cudaSetDevice(saved);
            return CC_ERR_BACKEND;
        }
        s = k->own;
    }
    r = ncclGroupStart();
    if (r == ncclSuccess) {
        r = cc__nccl_issue(k, c, dt, op, s, &call);
        r2 = ncclGroupEnd();   /* the group is closed whatever happened inside it */
        if (r == ncclSuccess && r2 != ncclSuccess) { r = r2; call = "ncclGroupEnd"; }
    }
    if (r != ncclSuccess) {
        cc__fmt(msg, msg_size, "nccl: %s failed for %s: %s (%s)", call, what, ncclGetErrorString(r), ncclGetLastError(k->nc));
        rc = cc__nccl_code(r);
    } else if (!native_stream)
        rc = cc__nccl_wait_own(k, what, msg, msg_size);
    if (!native_stream && saved >= 0 && saved != k->device) (void)cudaSetDevice(saved);
    return rc;
}

static cc_result cc__nccl_poll(void* self, char* msg, size_t msg_size) {
    cc__nccl_comm* k = (cc__nccl_comm*)self;
    ncclResult_t r, async = ncclSuccess;
    if (k->aborted) {
        cc__fmt(msg, msg_size, "nccl: communicator '%s' was aborted: %s", cc__nccl_name(k), k->why);
        return CC_ERR_BACKEND;
    }
    r = ncclCommGetAsyncError(k->nc, &async);
    if (r != ncclSuccess) {
        cc__fmt(msg, msg_size, "nccl: communicator '%s': ncclCommGetAsyncError failed: %s (%s)", cc__nccl_name(k),
                ncclGetErrorString(r), ncclGetLastError(k->nc));
        return CC_ERR_BACKEND;
    }
    if (async != ncclSuccess && async != ncclInProgress) {
        cc__fmt(msg, msg_size, "nccl: communicator '%s': %s (%s)", cc__nccl_name(k), ncclGetErrorString(async),
                ncclGetLastError(k->nc));
        return CC_ERR_BACKEND;
    }
    return CC_OK;
}

/* Frees the object; an aborted communicator has nothing left, and one with
   an asynchronous error is aborted rather than destroyed (ncclCommDestroy
   would flush its operations and might wait for peers that are gone). */
static void cc__nccl_destroy(void* self) {
    cc__nccl_comm* k = (cc__nccl_comm*)self;
    if (!k) return;
    if (!k->aborted && k->nc) {
        ncclResult_t async = ncclSuccess;
        if (ncclCommGetAsyncError(k->nc, &async) != ncclSuccess || (async != ncclSuccess && async != ncclInProgress))
            (void)ncclCommAbort(k->nc);
        else
            (void)ncclCommDestroy(k->nc);
    }
    if (k->own) (void)cudaStreamDestroy(k->own);
    cc__free(k->ctx, k);
}

/* Wraps a fresh NCCL communicator; on failure it is aborted. */
static cc_result cc__nccl_wrap(cc_context* ctx, ncclComm_t nc, const char* name, double timeout_s, const char* what, cc_comm** out) {
    cc__nccl_comm* k = (cc__nccl_comm*)cc__calloc(ctx, 1, sizeof *k);
    ncclResult_t r;
    const char* call = "ncclCommUserRank";
    int rank = -1, size = 0;
    cc_result rc;
    if (!k) {
        (void)ncclCommAbort(nc);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s '%s': out of memory", what, name);
    }
    k->ctx = ctx;
    k->nc = nc;
    k->timeout_s = timeout_s;
    r = ncclCommUserRank(nc, &rank);
    if (r == ncclSuccess) { call = "ncclCommCount"; r = ncclCommCount(nc, &size); }
    if (r == ncclSuccess) { call = "ncclCommCuDevice"; r = ncclCommCuDevice(nc, &k->device); }
    if (r != ncclSuccess) {
        rc = CONCERTO__FAIL(ctx, cc__nccl_code(r), "%s '%s': %s failed: %s (%s)", what, name, call, ncclGetErrorString(r),
                            ncclGetLastError(nc));
        (void)ncclCommAbort(nc);
        cc__free(ctx, k);
        return rc;
    }
    if ((rc = cc_comm_wrap(ctx, cc__nccl_fns(), k, rank, size, name, &k->handle)) != CC_OK) {
        (void)ncclCommAbort(nc);
        cc__free(ctx, k);
        return rc;
    }
    *out = k->handle;
    return CC_OK;
}

static cc_result cc__nccl_split(void* self, int color, int key, cc_comm** out) {
    cc__nccl_comm* k = (cc__nccl_comm*)self;
    ncclComm_t nc = NULL;
    ncclResult_t r;
    char name[CONCERTO__MSG_MAX];
    *out = NULL;
    if (k->aborted)
        return CONCERTO__FAIL(k->ctx, CC_ERR_BACKEND, "cc_comm_split '%s': the communicator was aborted: %s", cc__nccl_name(k), k->why);
    {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;   /* whatever NCCL_COMM_BLOCKING says: every call here expects a blocking communicator */
        r = ncclCommSplit(k->nc, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &nc, &config);
    }
    if (r != ncclSuccess)
        return CONCERTO__FAIL(k->ctx, cc__nccl_code(r), "cc_comm_split '%s' (rank %d, color %d, key %d): ncclCommSplit failed: %s (%s)",
                              cc__nccl_name(k), cc_comm_rank(k->handle), color, key, ncclGetErrorString(r), ncclGetLastError(k->nc));
    if (color < 0 || !nc) return CC_OK;
    cc__fmt(name, sizeof name, "%s.%d", cc__nccl_name(k), color);
    return cc__nccl_wrap(k->ctx, nc, name, k->timeout_s, "cc_comm_split", out);
}

static const cc_comm_fns cc__nccl_comm_fns_table = {
    "nccl", "cuda", cc__nccl_collective, cc__nccl_split, cc__nccl_destroy, cc__nccl_poll, cc__nccl_abort
};

static const cc_comm_fns* cc__nccl_fns(void) { return &cc__nccl_comm_fns_table; }

/* ---- set-up -----------------------------------------------------------------------*/
static cc_result cc__nccl_check_version(cc_context* ctx, const char* what) {
    int v = 0;
    ncclResult_t r = ncclGetVersion(&v);
    if (r != ncclSuccess)
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "%s: ncclGetVersion failed: %s", what, ncclGetErrorString(r));
    if (v < 21800)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "%s: the NCCL library is version %d.%d.%d; concerto_nccl.h needs 2.18 or "
                              "later (ncclCommSplit)", what, v / 10000, v / 100 % 100, v % 100);
    return CC_OK;
}

static int cc__nccl_bad_timeout(double t) { return !(t >= 0) || t - t != 0; }   /* negative, NaN or infinite */

CONCERTO_API cc_nccl_desc cc_nccl_query_defaults(const cc_nccl_desc* desc) {
    cc_nccl_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.name) d.name = "nccl";
    if (d.timeout_s == 0) d.timeout_s = 30.0;
    return d;
}

CONCERTO_API const cc_comm_fns* cc_nccl_comm_fns(void) { return &cc__nccl_comm_fns_table; }

CONCERTO_API ncclComm_t cc_nccl_comm_handle(const cc_comm* comm) {
    const cc__nccl_comm* k = (const cc__nccl_comm*)cc_comm_self(comm, &cc__nccl_comm_fns_table);
    return k && !k->aborted ? k->nc : NULL;
}

CONCERTO_API cc_result cc_nccl_comm_init_all(cc_context* ctx, int n_devices, const int* devices, cc_comm** comms) {
    ncclComm_t* ncs;
    ncclResult_t r;
    cc_result rc;
    int i, j;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!comms || n_devices < 1)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_comm_init_all: %s", comms ? "n_devices must be >= 1" : "comms is NULL");
    for (i = 0; i < n_devices; i++) comms[i] = NULL;
    if ((rc = cc__nccl_check_version(ctx, "cc_nccl_comm_init_all")) != CC_OK) return rc;
    ncs = (ncclComm_t*)cc__calloc(ctx, (size_t)n_devices, sizeof *ncs);
    if (!ncs) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_nccl_comm_init_all: out of memory");
    {   /* ncclCommInitAll's work, with a config: a rank per device in one group */
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        ncclUniqueId id;
        const char* call = "ncclGetUniqueId";
        int cur = -1, started = 0;
        cudaError_t ce = cudaGetDevice(&cur);
        config.blocking = 1;   /* whatever NCCL_COMM_BLOCKING says: every call here expects a blocking communicator */
        r = ce != cudaSuccess ? ncclUnhandledCudaError : ncclGetUniqueId(&id);
        if (ce != cudaSuccess) call = "cudaGetDevice";
        if (r == ncclSuccess) { call = "ncclGroupStart"; r = ncclGroupStart(); started = r == ncclSuccess; }
        for (i = 0; i < n_devices && r == ncclSuccess; i++) {
            if ((ce = cudaSetDevice(devices ? devices[i] : i)) != cudaSuccess) { call = "cudaSetDevice"; r = ncclUnhandledCudaError; }
            else { call = "ncclCommInitRankConfig"; r = ncclCommInitRankConfig(&ncs[i], n_devices, id, i, &config); }
        }
        if (started) {
            ncclResult_t r2 = ncclGroupEnd();
            if (r == ncclSuccess && r2 != ncclSuccess) { call = "ncclGroupEnd"; r = r2; }
        }
        if (cur >= 0) (void)cudaSetDevice(cur);
        if (r != ncclSuccess) {
            char list[256];
            list[0] = 0;
            for (i = 0; i < n_devices; i++) cc__append(list, sizeof list, "%s%d", i ? ", " : "", devices ? devices[i] : i);
            for (i = 0; i < n_devices; i++) if (ncs[i]) (void)ncclCommAbort(ncs[i]);
            cc__free(ctx, ncs);
            return CONCERTO__FAIL(ctx, cc__nccl_code(r), "cc_nccl_comm_init_all (devices %s): %s failed: %s (%s)", list, call,
                                  ce != cudaSuccess ? cudaGetErrorString(ce) : ncclGetErrorString(r),
                                  ce != cudaSuccess ? cudaGetErrorName(ce) : ncclGetLastError(NULL));
        }
    }
    for (i = 0; i < n_devices; i++)
        if ((rc = cc__nccl_wrap(ctx, ncs[i], "nccl", 30.0, "cc_nccl_comm_init_all", &comms[i])) != CC_OK) {
            for (j = i + 1; j < n_devices; j++) (void)ncclCommAbort(ncs[j]);   /* cc__nccl_wrap aborted ncs[i] */
            for (j = 0; j < i; j++) {
                cc__nccl_abort(cc_comm_self(comms[j], &cc__nccl_comm_fns_table), "cc_nccl_comm_init_all failed");
                cc_comm_destroy(comms[j]);
                comms[j] = NULL;
            }
            comms[i] = NULL;
            cc__free(ctx, ncs);
            return rc;
        }
    cc__free(ctx, ncs);
    return CC_OK;
}

CONCERTO_API cc_result cc_nccl_comm_init_rank(cc_context* ctx, const ncclUniqueId* id, int n_ranks, int rank,
                                              const cc_nccl_desc* desc, cc_comm** out) {
    cc_nccl_desc d = cc_nccl_query_defaults(desc);
    ncclComm_t nc = NULL;
    ncclResult_t r;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (out) *out = NULL;
    if (!id || !out || n_ranks < 1 || rank < 0 || rank >= n_ranks || cc__nccl_bad_timeout(d.timeout_s))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_comm_init_rank '%s': %s", d.name,
                              !id ? "id is NULL" : !out ? "out is NULL" :
                              n_ranks < 1 || rank < 0 || rank >= n_ranks ? "need 0 <= rank < n_ranks" :
                              "timeout_s must be >= 0 and finite");
    if ((rc = cc__nccl_check_version(ctx, "cc_nccl_comm_init_rank")) != CC_OK) return rc;
    {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 1;   /* whatever NCCL_COMM_BLOCKING says: every call here expects a blocking communicator */
        r = ncclCommInitRankConfig(&nc, n_ranks, *id, rank, &config);
    }
    if (r != ncclSuccess)
        return CONCERTO__FAIL(ctx, cc__nccl_code(r), "cc_nccl_comm_init_rank '%s' (rank %d of %d): ncclCommInitRankConfig "
                              "failed: %s (%s)", d.name, rank, n_ranks, ncclGetErrorString(r), ncclGetLastError(NULL));
    return cc__nccl_wrap(ctx, nc, d.name, d.timeout_s, "cc_nccl_comm_init_rank", out);
}

/* ---- the unique id: file ---------------------------------------------------------
   The file and the TCP answer are 8 bytes of magic and the id's 128. */
#define CONCERTO__NCCL_ID_MAGIC "CCNCCLID"
#define CONCERTO__NCCL_HI_MAGIC "CCNCCLHI"
#define CONCERTO__NCCL_ID_BYTES (8 + sizeof(ncclUniqueId))

static cc_result cc__nccl_new_id(cc_context* ctx, const char* what, ncclUniqueId* id) {
    ncclResult_t r = ncclGetUniqueId(id);
    if (r != ncclSuccess)
        return CONCERTO__FAIL(ctx, cc__nccl_code(r), "%s: ncclGetUniqueId failed: %s (%s)", what, ncclGetErrorString(r),
                              ncclGetLastError(NULL));
    return CC_OK;
}

static cc_result cc__nccl_write_id_file(cc_context* ctx, const char* path, const ncclUniqueId* id) {
    size_t len = strlen(path);
    char* tmp = (char*)cc__alloc(ctx, len + 32);
    unsigned char buf[CONCERTO__NCCL_ID_BYTES];
    FILE* f;
    int ok, err;
    if (!tmp) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_nccl_id_exchange_file: out of memory");
    snprintf(tmp, len + 32, "%s.tmp.%ld", path, (long)getpid());
    memcpy(buf, CONCERTO__NCCL_ID_MAGIC, 8);
    memcpy(buf + 8, id, sizeof *id);
    if (!(f = fopen(tmp, "wb"))) {
        err = errno;
        cc__free(ctx, tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_file: rank 0 cannot write '%s.tmp.%ld': %s", path,
                              (long)getpid(), strerror(err));
    }
    ok = fwrite(buf, 1, sizeof buf, f) == sizeof buf;
    err = errno;
    if (fclose(f) != 0 && ok) { ok = 0; err = errno; }
    if (ok && rename(tmp, path) != 0) {
        err = errno;
        (void)remove(tmp);
        cc__free(ctx, tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_file: rank 0 cannot rename its temporary file to '%s': %s",
                              path, strerror(err));
    }
    if (!ok) {
        (void)remove(tmp);
        cc__free(ctx, tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_file: rank 0 cannot write '%s.tmp.%ld': %s", path,
                              (long)getpid(), strerror(err));
    }
    cc__free(ctx, tmp);
    return CC_OK;
}

CONCERTO_API cc_result cc_nccl_id_exchange_file(cc_context* ctx, const char* path, int rank, double timeout_s,
                                                ncclUniqueId* id) {
    double t, deadline;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!path || !path[0] || !id || rank < 0 || cc__nccl_bad_timeout(timeout_s))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_id_exchange_file: %s",
                              !path || !path[0] ? "no path" : !id ? "id is NULL" : rank < 0 ? "rank must be >= 0" :
                              "timeout_s must be >= 0 and finite");
    if (rank == 0) {
        if ((rc = cc__nccl_new_id(ctx, "cc_nccl_id_exchange_file", id)) != CC_OK) return rc;
        return cc__nccl_write_id_file(ctx, path, id);
    }
    t = timeout_s == 0 ? 30.0 : timeout_s;
    deadline = cc__now_s() + t;
    for (;;) {
        FILE* f = fopen(path, "rb");
        if (f) {
            unsigned char buf[CONCERTO__NCCL_ID_BYTES];
            size_t n = fread(buf, 1, sizeof buf, f);
            fclose(f);
            if (n >= 8 && memcmp(buf, CONCERTO__NCCL_ID_MAGIC, 8) != 0)
                return CONCERTO__FAIL(ctx, CC_ERR_PARSE, "cc_nccl_id_exchange_file: rank %d: '%s' is not an id written by "
                                      "cc_nccl_id_exchange_file", rank, path);
            if (n == sizeof buf) {
                memcpy(id, buf + 8, sizeof *id);
                return CC_OK;
            }
        } else if (errno != ENOENT) {
            int err = errno;
            return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_file: rank %d cannot read '%s': %s", rank, path, strerror(err));
        }
        if (cc__now_s() >= deadline)
            return CONCERTO__FAIL(ctx, CC_ERR_TIMEOUT, "cc_nccl_id_exchange_file: rank %d: no id in '%s' after %g s (rank 0 "
                                  "writes it: is it running, with the same path?)", rank, path, t);
        cc__sleep_us(20000);
    }
}

/* ---- the unique id: TCP ------------------------------------------------------------*/
/* 1: fd is ready; 0: the deadline passed; -1: poll failed (errno). Polls
   at least once, so that what is ready already is seen after the deadline. */
static int cc__nccl_fd_wait(int fd, short events, double deadline) {
    for (;;) {
        struct pollfd p;
        double left = deadline - cc__now_s();
        int r;
        p.fd = fd;
        p.events = events;
        p.revents = 0;
        r = poll(&p, 1, left <= 0 ? 0 : left > 1.0 ? 1000 : (int)(left * 1000.0) + 1);
        if (r > 0) return 1;
        if (r < 0 && errno != EINTR) return -1;
        if (r == 0 && cc__now_s() >= deadline) return 0;
    }
}

/* Sends or receives exactly n bytes on a non-blocking socket. 0, or an
   errno value: ETIMEDOUT when the deadline passed, ECONNRESET when the peer
   closed the connection first. */
static int cc__nccl_fd_io(int fd, void* buf, size_t n, int sending, double deadline) {
    char* p = (char*)buf;
    size_t done = 0;
    while (done < n) {
        ssize_t k;
        int w = cc__nccl_fd_wait(fd, sending ? POLLOUT : POLLIN, deadline);
        if (w == 0) return ETIMEDOUT;
        if (w < 0) { int e = errno; return e ? e : EIO; }
        k = sending ? send(fd, p + done, n - done, MSG_NOSIGNAL) : recv(fd, p + done, n - done, 0);
        if (k > 0) { done += (size_t)k; continue; }
        if (k == 0) return ECONNRESET;
        if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) { int e = errno; return e ? e : EIO; }
    }
    return 0;
}

static int cc__nccl_nonblocking(int fd) {
    int fl = fcntl(fd, F_GETFL, 0);
    return fl >= 0 && fcntl(fd, F_SETFL, fl | O_NONBLOCK) == 0;
}

static void cc__nccl_put_u32(unsigned char* p, uint32_t v) {
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16); p[2] = (unsigned char)(v >> 8); p[3] = (unsigned char)v;
}

static uint32_t cc__nccl_get_u32(const unsigned char* p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* A listening socket on port, every interface (IPv6 with IPv4 mapped where
   there is IPv6); -1 with *err the errno value, or *gai getaddrinfo's error. */
static int cc__nccl_listen(int port, int backlog, int* err, int* gai) {
    struct addrinfo hints, *res = NULL, *ai;
    char portstr[16];
    int fd = -1, pass, g;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(portstr, sizeof portstr, "%d", port);
    *gai = 0;
    if ((g = getaddrinfo(NULL, portstr, &hints, &res)) != 0) { *gai = g; return -1; }
    *err = EADDRNOTAVAIL;
    for (pass = 0; pass < 2 && fd < 0; pass++)
        for (ai = res; ai && fd < 0; ai = ai->ai_next) {
            int one = 1, zero = 0;
            if ((ai->ai_family == AF_INET6) != (pass == 0)) continue;
            if ((fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol)) < 0) { *err = errno; continue; }
            (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (ai->ai_family == AF_INET6) (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
            if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0 || !cc__nccl_nonblocking(fd)) {
                *err = errno;
                close(fd);
                fd = -1;
            }
        }
    freeaddrinfo(res);
    return fd;
}

/* Rank 0: hands the id to every other rank that says hello. */
static cc_result cc__nccl_tcp_serve(cc_context* ctx, int port, int n_ranks, double timeout_s, const ncclUniqueId* id) {
    double deadline = cc__now_s() + timeout_s;
    unsigned char* seen;
    unsigned char reply[CONCERTO__NCCL_ID_BYTES];
    int fd, err = 0, gai = 0, got = 0, i;
    cc_result rc = CC_OK;
    if ((fd = cc__nccl_listen(port, n_ranks < 128 ? n_ranks : 128, &err, &gai)) < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_tcp: rank 0 cannot listen on port %d: %s", port,
                              gai ? gai_strerror(gai) : strerror(err));
    seen = (unsigned char*)cc__calloc(ctx, (size_t)n_ranks, 1);
    if (!seen) { close(fd); return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_nccl_id_exchange_tcp: out of memory"); }
    memcpy(reply, CONCERTO__NCCL_ID_MAGIC, 8);
    memcpy(reply + 8, id, sizeof *id);
    while (got < n_ranks - 1) {
        unsigned char hello[16];
        int c, w = cc__nccl_fd_wait(fd, POLLIN, deadline);
        if (w == 0) {
            char missing[256];
            missing[0] = 0;
            for (i = 1; i < n_ranks; i++) if (!seen[i]) cc__append(missing, sizeof missing, "%s%d", missing[0] ? ", " : "", i);
            rc = CONCERTO__FAIL(ctx, CC_ERR_TIMEOUT, "cc_nccl_id_exchange_tcp: rank 0: %d of the %d other ranks fetched the id "
                                "from port %d within %g s (missing ranks: %s)", got, n_ranks - 1, port, timeout_s, missing);
            break;
        }
        if (w < 0) {
            err = errno;
            rc = CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_tcp: rank 0: waiting on port %d: %s", port, strerror(err));
            break;
        }
        if ((c = accept(fd, NULL, NULL)) < 0) continue;   /* gone already, or a signal: wait again */
        if (cc__nccl_nonblocking(c)) {
            double patience = cc__now_s() + 5.0;
            if (patience > deadline) patience = deadline;
            if (cc__nccl_fd_io(c, hello, sizeof hello, 0, patience) == 0 && memcmp(hello, CONCERTO__NCCL_HI_MAGIC, 8) == 0) {
                uint32_t their_rank = cc__nccl_get_u32(hello + 8), their_n = cc__nccl_get_u32(hello + 12);
                if (their_n == (uint32_t)n_ranks && their_rank >= 1 && their_rank < (uint32_t)n_ranks &&
                    cc__nccl_fd_io(c, reply, sizeof reply, 1, patience) == 0 && !seen[their_rank]) {
                    seen[their_rank] = 1;
                    got++;
                }
            }
        }
        close(c);
    }
    cc__free(ctx, seen);
    close(fd);
    return rc;
}

/* Ranks 1..: connects to host:port until rank 0 answers. */
static cc_result cc__nccl_tcp_fetch(cc_context* ctx, const char* host, int port, int rank, int n_ranks, double timeout_s,
                                    ncclUniqueId* id) {
    double deadline = cc__now_s() + timeout_s;
    struct addrinfo hints;
    unsigned char hello[16], reply[CONCERTO__NCCL_ID_BYTES];
    char portstr[16], last[160];
    int reason = 0;            /* last holds a reason (not just a timeout) */
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(portstr, sizeof portstr, "%d", port);
    memcpy(hello, CONCERTO__NCCL_HI_MAGIC, 8);
    cc__nccl_put_u32(hello + 8, (uint32_t)rank);
    cc__nccl_put_u32(hello + 12, (uint32_t)n_ranks);
    cc__fmt(last, sizeof last, "no attempt");
    for (;;) {
        struct addrinfo *res = NULL, *ai;
        int g = getaddrinfo(host, portstr, &hints, &res);
        if (g != 0 && g != EAI_AGAIN)
            return CONCERTO__FAIL(ctx, CC_ERR_IO, "cc_nccl_id_exchange_tcp: rank %d cannot resolve '%s' (port %d): %s", rank, host,
                                  port, gai_strerror(g));
        if (g != 0) { cc__fmt(last, sizeof last, "resolving '%s': %s", host, gai_strerror(g)); reason = 1; }
        for (ai = g == 0 ? res : NULL; ai; ai = ai->ai_next) {
            double patience = cc__now_s() + 5.0;
            int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol), err = 0;
            const char* stage = "connect";
            if (patience > deadline) patience = deadline;
            if (fd < 0) { cc__fmt(last, sizeof last, "socket: %s", strerror(errno)); reason = 1; continue; }
            if (!cc__nccl_nonblocking(fd)) err = errno;
            else if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
                err = errno;
                if (err == EINPROGRESS || err == EINTR) {
                    socklen_t len = sizeof err;
                    int w = cc__nccl_fd_wait(fd, POLLOUT, patience);
                    if (w == 0) err = ETIMEDOUT;
                    else if (w < 0) err = errno;
                    else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
                }
            }
            if (!err) { stage = "sending"; err = cc__nccl_fd_io(fd, hello, sizeof hello, 1, patience); }
            if (!err) { stage = "receiving"; err = cc__nccl_fd_io(fd, reply, sizeof reply, 0, patience); }
            close(fd);
            if (!err) {
                freeaddrinfo(res);
                if (memcmp(reply, CONCERTO__NCCL_ID_MAGIC, 8) != 0)
                    return CONCERTO__FAIL(ctx, CC_ERR_PARSE, "cc_nccl_id_exchange_tcp: rank %d: %s:%d answered, but not with an "
                                          "id of cc_nccl_id_exchange_tcp", rank, host, port);
                memcpy(id, reply + 8, sizeof *id);
                return CC_OK;
            }
            /* an attempt cut short by the deadline does not hide an earlier reason */
            if (err != ETIMEDOUT || !reason) {
                if (err == ECONNRESET && strcmp(stage, "receiving") == 0)
                    cc__fmt(last, sizeof last, "rank 0 closed the connection without an id (is n_ranks the same on every rank?)");
                else
                    cc__fmt(last, sizeof last, "%s: %s", stage, strerror(err));
                reason = 1;
            }
        }
        if (res) freeaddrinfo(res);
        if (cc__now_s() >= deadline)
            return CONCERTO__FAIL(ctx, CC_ERR_TIMEOUT, "cc_nccl_id_exchange_tcp: rank %d: no id from %s:%d within %g s (last "
                                  "attempt: %s)", rank, host, port, timeout_s, last);
        cc__sleep_us(100000);
    }
}

CONCERTO_API cc_result cc_nccl_id_exchange_tcp(cc_context* ctx, const char* host, int port, int rank, int n_ranks,
                                               double timeout_s, ncclUniqueId* id) {
    double t;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!id || port < 1 || port > 65535 || n_ranks < 1 || rank < 0 || rank >= n_ranks || (rank > 0 && (!host || !host[0])) ||
        cc__nccl_bad_timeout(timeout_s))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_id_exchange_tcp (host '%s', port %d, rank %d of %d): %s",
                              host ? host : "(null)", port, rank, n_ranks,
                              !id ? "id is NULL" : port < 1 || port > 65535 ? "port must be 1..65535" :
                              n_ranks < 1 || rank < 0 || rank >= n_ranks ? "need 0 <= rank < n_ranks" :
                              rank > 0 && (!host || !host[0]) ? "no host to connect to" : "timeout_s must be >= 0 and finite");
    t = timeout_s == 0 ? 30.0 : timeout_s;
    if (rank > 0) return cc__nccl_tcp_fetch(ctx, host, port, rank, n_ranks, t, id);
    if ((rc = cc__nccl_new_id(ctx, "cc_nccl_id_exchange_tcp", id)) != CC_OK) return rc;
    return n_ranks == 1 ? CC_OK : cc__nccl_tcp_serve(ctx, port, n_ranks, t, id);
}

/* ---- the unique id: MPI ------------------------------------------------------------*/
#ifdef MPI_VERSION
CONCERTO_API cc_result cc_nccl_id_exchange_mpi(cc_context* ctx, MPI_Comm comm, int root, ncclUniqueId* id) {
    char s[MPI_MAX_ERROR_STRING];
    int rank = -1, size = 0, e, len = 0;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!id || comm == MPI_COMM_NULL)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_id_exchange_mpi: %s", !id ? "id is NULL" : "comm is MPI_COMM_NULL");
    if ((e = MPI_Comm_rank(comm, &rank)) == MPI_SUCCESS) e = MPI_Comm_size(comm, &size);
    if (e != MPI_SUCCESS) {
        if (MPI_Error_string(e, s, &len) != MPI_SUCCESS) len = 0;
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_nccl_id_exchange_mpi: MPI_Comm_rank/MPI_Comm_size failed: %.*s", len, s);
    }
    if (root < 0 || root >= size)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_nccl_id_exchange_mpi (rank %d of %d): root %d is outside the communicator",
                              rank, size, root);
    if (rank == root && (rc = cc__nccl_new_id(ctx, "cc_nccl_id_exchange_mpi", id)) != CC_OK) return rc;
    /* a failed ncclGetUniqueId on root leaves the others in MPI_Bcast: as with any start-up failure, end the job */
    if ((e = MPI_Bcast(id, (int)sizeof *id, MPI_BYTE, root, comm)) != MPI_SUCCESS) {
        if (MPI_Error_string(e, s, &len) != MPI_SUCCESS) len = 0;
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_nccl_id_exchange_mpi (rank %d of %d, root %d): MPI_Bcast failed: %.*s", rank,
                              size, root, len, s);
    }
    return CC_OK;
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_IMPLEMENTATION && !CONCERTO_NCCL_IMPL_INCLUDED */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 The Concerto-C authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
