/* concerto_mpi.h - MPI communicators for concerto.h: a family of
   communicators ("mpi", stream kind "host") whose collectives run with MPI's
   non-blocking calls, so that a CPU job of one process per rank (mpirun,
   several nodes) runs the same plans as the in-process world, with the same
   results bit for bit.

   DO THIS: include concerto.h first, then this header; in the one file with
   the implementation, after concerto.h's:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"
       #include "concerto_mpi.h"

   It includes <mpi.h>: compile with mpicc (or add `mpicc --showme:compile`
   and `mpicc --showme:link`). MPI 3.0 or later (non-blocking collectives).

   ONE PROCESS PER RANK
       cc_mpi_init(ctx, &argc, &argv);        // MPI_Init_thread(MPI_THREAD_MULTIPLE)
       cc_mpi_desc md = {0};  md.name = "world";
       cc_mpi_comm_create(ctx, MPI_COMM_WORLD, &md, &world);
       cc_comm_split(world, rank / tp, rank % tp, &dp);     // MPI_Comm_split
       cc_cpu_backend_create_ctx(ctx, &be);
       cc_exec_create(ctx, plan, &be, &exec);
       cc_exec_agree(exec, world);            // every rank's plan hash, before the first step
       for (;;) cc_exec_step(exec);
       cc_exec_destroy(exec);  cc_backend_destroy(&be);
       cc_comm_destroy(dp);  cc_comm_destroy(world);  MPI_Finalize();

   THREADS. The CPU backend runs each communication stream's collectives on
   that stream's worker thread, so several threads call MPI at once: the
   library needs MPI_THREAD_MULTIPLE. cc_mpi_init asks for it (or, when MPI
   is initialised already, checks it) and fails with CC_ERR_UNSUPPORTED
   naming the level the MPI library provides; cc_mpi_comm_create checks it
   too. The context's allocator (and logger) are called from those threads.

   THE COLLECTIVES (cc_comm_fns.collective)
   Every kind of cc_collective, every element type, sum, avg and max; counts
   are elements; a call blocks its thread until the collective is done. They
   are issued as MPI non-blocking calls on a duplicate of the communicator
   given (the library's traffic never meets the caller's) and progressed
   by testing: the calling thread, in a plan a communication stream's
   worker, calls MPI_Testall with short naps (cc__nap: 2 us doubling to
   250 us), so MPI makes progress while the compute stream's thread
   computes, and the communication thread gives the cores back between
   tests instead of spinning in MPI_Wait.
     all_gather    MPI_Iallgather          broadcast   MPI_Ibcast (root = peer)
     all_to_all    MPI_Ialltoall           send, recv  MPI_Isend, MPI_Irecv
     reduce_scatter, all_reduce: see REDUCTIONS.
   Counts that do not fit MPI's int (in bytes) fail with CC_ERR_UNSUPPORTED.

   REDUCTIONS. The in-process world reduces in rank order in the element
   type (float16 and bfloat16 added in float and rounded after every
   addition), so every rank gets the same bits in every run, and so does
   this family by default (reduce = CC_MPI_REDUCE_RANK_ORDER), for every
   type: reduce_scatter is an MPI_Ialltoall that brings each rank the n
   contributions to its block, folded there in rank order with the world's
   own arithmetic; all_reduce is that on blocks of ceil(count / n) elements
   followed by an MPI_Iallgather of the reduced blocks. That moves as many
   bytes as a ring all-reduce (2 (n-1)/n of the buffer per rank) and gives
   results identical to the world's bit for bit, which MPI_Iallreduce
   cannot promise (MPI's reduction order depends on its algorithm, chosen by
   message and group size). reduce = CC_MPI_REDUCE_NATIVE uses
   MPI_Iallreduce and MPI_Ireduce_scatter_block with MPI_SUM / MPI_MAX, and
   for float16 and bfloat16 user-defined MPI_Ops (commutative; each
   addition in float, rounded to the type): deterministic for a given MPI
   library and job shape and the same on every rank with Open MPI's
   algorithms, not necessarily the world's bits. avg is the sum divided by
   the number of members, as the world does it (int32 truncates).

   WHAT PROTECTS YOU FROM RANKS THAT ISSUE DIFFERENT COLLECTIVES
   MPI cannot tell: ranks that issue different collectives in the same
   position on a communicator hang, fail with a truncation, or corrupt
   data. So, as in the world:
   - before the first step cc_exec_agree compares every rank's plan hash
     (an all_gather on this family);
   - every group collective first exchanges a header of six integers (kind,
     type, reduction, count, root, sequence number) with an MPI_Iallgather,
     and every member compares all of them before any data moves: members
     that issued different collectives at the same position all get
     CC_ERR_COLL_MISMATCH, naming the collective number, the first two
     ranks that differ and what each issued (the same text on every rank).
     A header costs one small collective's latency; a running hash would
     save it, but it is only compared after the data moved, when a mismatch
     has already hung or corrupted the step;
   - a send carries such a header ahead of its data (MPI_Isend of both);
     the receiver compares it with its recv (kind, count, type, and the
     number of the transfer between the two ranks) before it posts the
     data's MPI_Irecv, and fails with CC_ERR_COLL_MISMATCH;
   - a collective not complete after timeout_s (a member that never
     arrives, a stuck or dead peer) fails with CC_ERR_TIMEOUT.
   Group collectives of one rank on one communicator run one at a time in
   the order their threads reach it (a mutex); sends and recvs do not wait
   for them. A communicator whose collective failed is unusable: later
   collectives fail at once, quoting the first failure.

   ENDING THE JOB. MPI cannot cancel a collective that peers wait in, so a
   failure must end the job or peers may wait forever. The family's abort
   entry, which the CPU backend calls when a collective of a step fails
   (and which you may call, through cc_comm_fns.abort), marks the
   communicator failed, sends the reason to the context's logger (level
   CC_LOG_ERROR), waits abort_delay_s (so that peers that failed too can
   report it) and calls MPI_Abort(MPI_COMM_WORLD, 1): the job ends, mpirun
   exits non-zero and no process is left behind. This is the only place the
   library calls MPI_Abort; with keep_job = 1 it only marks the
   communicator failed and the job is yours to end. cc_comm_run and
   cc_exec_agree never abort: they return the error.

   WHAT IS TESTED (tests/test_mpi.c, tests/test_mpi.sh: mpirun -np 2 and 4)
   Every kind x type x reduction on the world and on split groups against a
   serial computation; float16/bfloat16 against the in-process world bit for
   bit; a plan on two communication streams with cc_exec over the CPU
   backend equal to program order; a mismatched order, a rank that never
   arrives and a rank killed mid-step end the job with an error on every
   rank that took part and no process left. MPI calls used:
   MPI_Initialized, MPI_Init_thread, MPI_Query_thread, MPI_Comm_dup,
   MPI_Comm_split, MPI_Comm_free, MPI_Comm_rank, MPI_Comm_size,
   MPI_Comm_set_errhandler, MPI_Iallgather, MPI_Ialltoall, MPI_Ibcast,
   MPI_Isend, MPI_Irecv, MPI_Iallreduce, MPI_Ireduce_scatter_block,
   MPI_Testall, MPI_Op_create, MPI_Op_free, MPI_Error_string, MPI_Abort.
*/
#ifndef CONCERTO_H_INCLUDED
#error "concerto_mpi.h: include concerto.h first"
#endif
#ifdef CONCERTO_NO_RUNTIME
#error "concerto_mpi.h: MPI communicators belong to the runtime, which CONCERTO_NO_RUNTIME leaves out"
#endif

#ifndef CONCERTO_MPI_H_INCLUDED
#define CONCERTO_MPI_H_INCLUDED
#include <mpi.h>

#if !defined(MPI_VERSION) || MPI_VERSION < 3
#error "concerto_mpi.h: needs MPI 3.0 or later (non-blocking collectives)"
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cc_mpi_reduce {
    CC_MPI_REDUCE_RANK_ORDER = 0,   /* the world's order and arithmetic: the same bits (default) */
    CC_MPI_REDUCE_NATIVE = 1        /* MPI_Iallreduce / MPI_Ireduce_scatter_block */
} cc_mpi_reduce;

typedef struct cc_mpi_desc {
    const char* name;      /* the communicator's name in messages (copied); NULL: "mpi" */
    /* Seconds of the monotonic clock a collective waits for its peers
       before it fails with CC_ERR_TIMEOUT; 0: 30 s (the world's default). */
    double timeout_s;
    cc_mpi_reduce reduce;  /* how all_reduce and reduce_scatter reduce */
    /* 0: the abort entry ends the job with MPI_Abort (see ENDING THE JOB);
       1: it only marks the communicator failed. */
    int keep_job;
    /* Seconds the abort entry waits before MPI_Abort; 0: 1 s, < 0: none. */
    double abort_delay_s;
} cc_mpi_desc;
/* Communicators split from one inherit its desc (the name gets ".color"). */

/* The desc as cc_mpi_comm_create resolves it (NULL: every field zero): name
   "mpi" where NULL, timeout_s 30 where 0, abort_delay_s 1 where 0. Nothing
   is checked. */
CONCERTO_API cc_mpi_desc cc_mpi_query_defaults(const cc_mpi_desc* desc);

/* The family's table: family "mpi", stream_kind "host". cc_comm_self(comm,
   cc_mpi_comm_fns()) is non-NULL for MPI communicators. */
CONCERTO_API const cc_comm_fns* cc_mpi_comm_fns(void);

/* Initialises MPI with MPI_THREAD_MULTIPLE (argc and argv may be NULL), or,
   if it is initialised already, checks its thread level. CC_ERR_UNSUPPORTED,
   naming the level provided, when it is less; CC_ERR_BACKEND when
   MPI_Init_thread fails. MPI_Finalize is yours to call. */
CONCERTO_API cc_result cc_mpi_init(cc_context* ctx, int* argc, char*** argv);
/* The thread-level check alone (MPI must be initialised). */
CONCERTO_API cc_result cc_mpi_check_thread_level(cc_context* ctx);

/* This process's communicator on a duplicate of comm (MPI_Comm_dup; every
   member calls it), with MPI_ERRORS_RETURN. desc may be NULL. Owned by the
   caller: cc_comm_destroy (before MPI_Finalize). */
CONCERTO_API cc_result cc_mpi_comm_create(cc_context* ctx, MPI_Comm comm, const cc_mpi_desc* desc, cc_comm** out);
/* The duplicate MPI communicator of an MPI communicator (for MPI calls of
   your own), MPI_COMM_NULL for any other. Borrowed. */
CONCERTO_API MPI_Comm cc_mpi_comm_handle(const cc_comm* comm);

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_MPI_H_INCLUDED */

/* ========================================================================
   IMPLEMENTATION
   ======================================================================== */
#if defined(CONCERTO_IMPLEMENTATION) && !defined(CONCERTO_MPI_IMPL_INCLUDED)
#define CONCERTO_MPI_IMPL_INCLUDED
#ifndef CONCERTO_IMPL_INCLUDED
#error "concerto_mpi.h: its implementation needs concerto.h's: include concerto.h with CONCERTO_IMPLEMENTATION first"
#endif

#include <limits.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* >>mpi
   The family: one object per communicator, wrapped by cc_comm_wrap. */

#define CONCERTO__MPI_HDR 6            /* kind, dtype, reduce, n_elems, peer, sequence */
#define CONCERTO__MPI_TAG_HDR 7301     /* point to point: the header, then the data */
#define CONCERTO__MPI_TAG_DATA 7302

typedef struct cc__mpi_comm {
    cc_context* ctx;           /* allocation, errors of split, the logger of abort */
    MPI_Comm mc;               /* the duplicate */
    cc_comm* handle;           /* the wrapper: name, rank, size */
    cc_mpi_desc desc;          /* resolved; name points into handle */
    pthread_mutex_t mu;        /* group collectives, one at a time (held throughout one) */
    pthread_mutex_t state_mu;  /* what follows from sent on; never held while waiting */
    uint64_t seq;              /* group collectives issued */
    uint64_t* sent;            /* [n] transfers to each member */
    uint64_t* received;        /* [n] transfers from each member */
    int64_t* hdrs;             /* [n * HDR]: the headers of the current group collective */
    void* scratch;             /* the rank-order reductions' buffers */
    size_t scratch_bytes;
    MPI_Op ops[4];             /* native: float16 sum, max; bfloat16 sum, max (MPI_OP_NULL until made) */
    int failed;                /* a collective failed: the communicator is unusable */
    int pending;               /* a request never completed: its buffers stay allocated */
    cc_result fail_code;
    char why[CONCERTO__MSG_MAX];
} cc__mpi_comm;

static const cc_comm_fns* cc__mpi_fns(void);   /* the table, defined after its entries */

static const char* cc__mpi_name(const cc__mpi_comm* k) { return k->handle ? cc_comm_name(k->handle) : k->desc.name; }

/* "all_reduce of 1024 float32 (sum) on communicator 'dp' (rank 0 of 2)" */
static void cc__mpi_coll_text(char* buf, size_t size, const cc__mpi_comm* k, const cc_collective* c) {
    cc__coll_text(buf, size, c);
    cc__append(buf, size, " on communicator '%s' (rank %d of %d)", cc__mpi_name(k), cc_comm_rank(k->handle),
               cc_comm_size(k->handle));
}

static void cc__mpi_error_text(int err, char* buf, size_t size) {
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(err, s, &len) != MPI_SUCCESS) cc__fmt(buf, size, "MPI error %d", err);
    else cc__fmt(buf, size, "%.*s", len, s);
}

static const char* cc__mpi_level_name(int level) {
    switch (level) {
        case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
        case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
        case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
        case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
        default: return "an unknown level";
    }
}

/* Marks the communicator failed (the first failure wins). */
static void cc__mpi_fail(cc__mpi_comm* k, cc_result code, const char* msg) {
    pthread_mutex_lock(&k->state_mu);
    if (!k->failed) {
        k->failed = 1;
        k->fail_code = code;
        cc__copy_msg(k->why, sizeof k->why, msg);
    }
    pthread_mutex_unlock(&k->state_mu);
}

/* A request never completed: MPI may still use its buffers. */
static void cc__mpi_set_pending(cc__mpi_comm* k) {
    pthread_mutex_lock(&k->state_mu);
    k->pending = 1;
    pthread_mutex_unlock(&k->state_mu);
}

static int cc__mpi_is_pending(cc__mpi_comm* k) {
    int p;
    pthread_mutex_lock(&k->state_mu);
    p = k->pending;
    pthread_mutex_unlock(&k->state_mu);
    return p;
}

/* CC_OK, or the earlier failure quoted for what. */
static cc_result cc__mpi_usable(cc__mpi_comm* k, const char* what, char* msg, size_t msg_size) {
    cc_result rc = CC_OK;
    pthread_mutex_lock(&k->state_mu);
    if (k->failed) {
        cc__fmt(msg, msg_size, "mpi: %s: the communicator failed earlier: %s", what, k->why);
        rc = k->fail_code;
    }
    pthread_mutex_unlock(&k->state_mu);
    return rc;
}

static void cc__mpi_abort(void* self, const char* why) {
    cc__mpi_comm* k = (cc__mpi_comm*)self;
    char m[CONCERTO__MSG_MAX];
    if (!k) return;
    cc__fmt(m, sizeof m, "mpi: communicator '%s' (rank %d of %d) aborted: %s", cc__mpi_name(k), cc_comm_rank(k->handle),
            cc_comm_size(k->handle), why && why[0] ? why : "no reason given");
    cc__mpi_fail(k, CC_ERR_BACKEND, m);
    if (k->desc.keep_job) return;
    if (k->ctx->logger.log_fn) {
        char full[CONCERTO__MSG_MAX];
        cc__fmt(full, sizeof full, "%s; ending the job (MPI_Abort)", m);
        k->ctx->logger.log_fn(CC_LOG_ERROR, full, k->ctx->logger.user_data);
    }
    if (k->desc.abort_delay_s > 0) cc__sleep_us(1e6 * k->desc.abort_delay_s);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* Tests reqs until all are done or timeout_s passed. what: the collective;
   phase: what the requests are. */
static cc_result cc__mpi_wait(cc__mpi_comm* k, int n, MPI_Request* reqs, const char* call, const char* what,
                              const char* phase, char* msg, size_t msg_size) {
    double deadline = cc__now_s() + k->desc.timeout_s, nap = 2;
    MPI_Status st[4];
    for (;;) {
        int flag = 0, i, e = MPI_Testall(n, reqs, &flag, st);
        if (e != MPI_SUCCESS) {
            char s[256];
            if (e == MPI_ERR_IN_STATUS)
                for (i = 0; i < n; i++) if (st[i].MPI_ERROR != MPI_SUCCESS && st[i].MPI_ERROR != MPI_ERR_PENDING) { e = st[i].MPI_ERROR; break; }
            cc__mpi_error_text(e, s, sizeof s);
            cc__fmt(msg, msg_size, "mpi: %s: %s failed (%s): %s", what, call, phase, s);
            for (i = 0; i < n; i++) if (reqs[i] != MPI_REQUEST_NULL) cc__mpi_set_pending(k);
            return CC_ERR_BACKEND;
        }
        if (flag) return CC_OK;
        if (cc__now_s() >= deadline) {
            cc__fmt(msg, msg_size, "mpi: %s: not complete after %g s (timeout_s) %s: a member has not issued it, or is "
                    "stuck or gone", what, k->desc.timeout_s, phase);
            cc__mpi_set_pending(k);
            return CC_ERR_TIMEOUT;
        }
        cc__nap(&nap);
    }
}

static cc_result cc__mpi_call_failed(int e, const char* call, const char* what, char* msg, size_t msg_size) {
    char s[256];
    cc__mpi_error_text(e, s, sizeof s);
    cc__fmt(msg, msg_size, "mpi: %s: %s failed: %s", what, call, s);
    return e == MPI_ERR_COUNT || e == MPI_ERR_ARG || e == MPI_ERR_BUFFER ? CC_ERR_INVALID_ARG : CC_ERR_BACKEND;
}

static void cc__mpi_header(int64_t* h, const cc_collective* c, uint64_t seq) {
    h[0] = (int64_t)c->kind;
    h[1] = (int64_t)c->dtype;
    h[2] = c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_REDUCE_SCATTER ? (int64_t)c->reduce : 0;
    h[3] = (int64_t)c->n_elems;
    h[4] = c->kind == CC_COLL_BROADCAST || c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV ? (int64_t)c->peer : 0;
    h[5] = (int64_t)seq;
}

/* A header for messages: "all_reduce of 8 float32 (sum)". */
static void cc__mpi_header_text(char* buf, size_t size, const int64_t* h) {
    cc_collective c;
    memset(&c, 0, sizeof c);
    c.kind = (cc_coll_kind)h[0];
    c.dtype = (cc_dtype)h[1];
    c.reduce = (cc_reduce_op)h[2];
    c.n_elems = (size_t)h[3];
    c.peer = (int)h[4];
    cc__coll_text(buf, size, &c);
}

static int cc__mpi_grow(cc__mpi_comm* k, size_t n_bytes) {
    if (k->scratch_bytes >= n_bytes) return 1;
    if (cc__mpi_is_pending(k)) return 0;   /* an MPI request may still write into the old one */
    cc__free(k->ctx, k->scratch);
    k->scratch_bytes = 0;
    if (!(k->scratch = cc__alloc(k->ctx, n_bytes))) return 0;
    k->scratch_bytes = n_bytes;
    return 1;
}

/* ---- native reductions: MPI's, with user-defined ops for the halves ------------*/
static void cc__mpi_half_op(void* in, void* inout, int* len, cc_dtype dt, cc_reduce_op op) {
    if (*len > 0) cc__world_reduce_into(inout, in, (size_t)*len, dt, op);   /* addition commutes bit for bit */
}
static void cc__mpi_f16_sum(void* in, void* inout, int* len, MPI_Datatype* t) { (void)t; cc__mpi_half_op(in, inout, len, CC_DTYPE_FLOAT16, CC_REDUCE_SUM); }
static void cc__mpi_f16_max(void* in, void* inout, int* len, MPI_Datatype* t) { (void)t; cc__mpi_half_op(in, inout, len, CC_DTYPE_FLOAT16, CC_REDUCE_MAX); }
static void cc__mpi_bf16_sum(void* in, void* inout, int* len, MPI_Datatype* t) { (void)t; cc__mpi_half_op(in, inout, len, CC_DTYPE_BFLOAT16, CC_REDUCE_SUM); }
static void cc__mpi_bf16_max(void* in, void* inout, int* len, MPI_Datatype* t) { (void)t; cc__mpi_half_op(in, inout, len, CC_DTYPE_BFLOAT16, CC_REDUCE_MAX); }

static int cc__mpi_native_type(cc__mpi_comm* k, const cc_collective* c, MPI_Datatype* t, MPI_Op* op) {
    int half = c->dtype == CC_DTYPE_FLOAT16 || c->dtype == CC_DTYPE_BFLOAT16, max = c->reduce == CC_REDUCE_MAX;
    switch (c->dtype) {
        case CC_DTYPE_FLOAT32: *t = MPI_FLOAT; break;
        case CC_DTYPE_FLOAT64: *t = MPI_DOUBLE; break;
        case CC_DTYPE_INT32: *t = MPI_INT32_T; break;
        case CC_DTYPE_FLOAT16: case CC_DTYPE_BFLOAT16: *t = MPI_UINT16_T; break;
        default: return 0;
    }
    if (!half) { *op = max ? MPI_MAX : MPI_SUM; return 1; }
    {
        int i = (c->dtype == CC_DTYPE_BFLOAT16 ? 2 : 0) + max;
        if (k->ops[i] == MPI_OP_NULL) {
            MPI_User_function* fn[4] = { cc__mpi_f16_sum, cc__mpi_f16_max, cc__mpi_bf16_sum, cc__mpi_bf16_max };
            if (MPI_Op_create(fn[i], 1, &k->ops[i]) != MPI_SUCCESS) { k->ops[i] = MPI_OP_NULL; return 0; }
        }
        *op = k->ops[i];
    }
    return 1;
}

/* ---- group collectives -------------------------------------------------------------
   Under k->mu. The header exchange first, then the data. */
static cc_result cc__mpi_group(cc__mpi_comm* k, const cc_collective* c, const char* what, char* msg, size_t msg_size) {
    int n = cc_comm_size(k->handle), me = cc_comm_rank(k->handle), e, m;
    size_t es = cc__dtype_size(c->dtype), cnt = c->n_elems;
    int64_t mine[CONCERTO__MPI_HDR];
    uint64_t seq = k->seq++;
    MPI_Request rq[1];
    cc_result rc;
    const char* call;
    /* the headers */
    cc__mpi_header(mine, c, seq);
    e = MPI_Iallgather(mine, CONCERTO__MPI_HDR, MPI_INT64_T, k->hdrs, CONCERTO__MPI_HDR, MPI_INT64_T, k->mc, rq);
    if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Iallgather (the headers)", what, msg, msg_size);
    if ((rc = cc__mpi_wait(k, 1, rq, "MPI_Iallgather", what, "exchanging the members' headers", msg, msg_size)) != CC_OK)
        return rc;
    for (m = 1; m < n; m++)
        if (memcmp(k->hdrs, k->hdrs + (size_t)m * CONCERTO__MPI_HDR, sizeof mine) != 0) {
            char a[128], b[128];
            cc__mpi_header_text(a, sizeof a, k->hdrs);
            cc__mpi_header_text(b, sizeof b, k->hdrs + (size_t)m * CONCERTO__MPI_HDR);
            if (k->hdrs[5] != k->hdrs[(size_t)m * CONCERTO__MPI_HDR + 5])
                cc__append(b, sizeof b, " as its collective #%lld", (long long)k->hdrs[(size_t)m * CONCERTO__MPI_HDR + 5]);
            cc__fmt(msg, msg_size, "mpi: %s: ranks issued different collectives as collective #%llu on the communicator: rank 0 "
                    "issued %s, rank %d issued %s", what, (unsigned long long)seq, a, m, b);
            return CC_ERR_COLL_MISMATCH;
        }
    if (cnt == 0) return CC_OK;
    if (cnt > (size_t)INT_MAX / es / (size_t)n) {
        cc__fmt(msg, msg_size, "mpi: %s: %llu elements are more than one MPI call moves here (INT_MAX bytes per member)", what,
                (unsigned long long)cnt);
        return CC_ERR_UNSUPPORTED;
    }
    /* the data */
    switch (c->kind) {
        case CC_COLL_ALL_GATHER:
            call = "MPI_Iallgather";
            e = MPI_Iallgather(c->send_buf, (int)(cnt * es), MPI_BYTE, c->recv_buf, (int)(cnt * es), MPI_BYTE, k->mc, rq);
            break;
        case CC_COLL_ALL_TO_ALL:
            call = "MPI_Ialltoall";
            e = MPI_Ialltoall(c->send_buf, (int)(cnt * es), MPI_BYTE, c->recv_buf, (int)(cnt * es), MPI_BYTE, k->mc, rq);
            break;
        case CC_COLL_BROADCAST:
            call = "MPI_Ibcast";
            if (me == c->peer && c->send_buf != c->recv_buf) memcpy(c->recv_buf, c->send_buf, cnt * es);
            e = MPI_Ibcast(c->recv_buf, (int)(cnt * es), MPI_BYTE, c->peer, k->mc, rq);
            break;
        default: {   /* all_reduce, reduce_scatter */
            int rs = c->kind == CC_COLL_REDUCE_SCATTER;
            if (k->desc.reduce == CC_MPI_REDUCE_NATIVE) {
                MPI_Datatype t;
                MPI_Op op;
                if (!cc__mpi_native_type(k, c, &t, &op)) {
                    cc__fmt(msg, msg_size, "mpi: %s: MPI_Op_create failed for the reduction", what);
                    return CC_ERR_BACKEND;
                }
                call = rs ? "MPI_Ireduce_scatter_block" : "MPI_Iallreduce";
                e = rs ? MPI_Ireduce_scatter_block(c->send_buf, c->recv_buf, (int)cnt, t, op, k->mc, rq)
                       : MPI_Iallreduce(c->send_buf == c->recv_buf ? MPI_IN_PLACE : c->send_buf, c->recv_buf, (int)cnt, t, op,
                                        k->mc, rq);
                if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, call, what, msg, msg_size);
                if ((rc = cc__mpi_wait(k, 1, rq, call, what, "reducing", msg, msg_size)) != CC_OK) return rc;
                if (c->reduce == CC_REDUCE_AVG) cc__world_divide(c->recv_buf, cnt, c->dtype, n);
                return CC_OK;
            } else {
                /* rank order: block b of every member's buffer goes to member
                   b (MPI_Ialltoall), which folds the n of them in rank order */
                size_t blk = rs ? cnt : (cnt + (size_t)n - 1) / (size_t)n, bb = blk * es;
                int pad = !rs && blk * (size_t)n != cnt;
                char *in, *parts, *out;
                if (!cc__mpi_grow(k, (size_t)(pad ? 3 : 1) * (size_t)n * bb)) {
                    cc__fmt(msg, msg_size, "mpi: %s: out of memory for %llu bytes of reduction buffers", what,
                            (unsigned long long)((size_t)(pad ? 3 : 1) * (size_t)n * bb));
                    return CC_ERR_OUT_OF_MEMORY;
                }
                parts = (char*)k->scratch;
                in = pad ? parts + (size_t)n * bb : (char*)c->send_buf;
                out = pad ? parts + 2 * (size_t)n * bb : (char*)c->recv_buf;
                if (pad) {
                    memcpy(in, c->send_buf, cnt * es);
                    memset(in + cnt * es, 0, (size_t)n * bb - cnt * es);
                }
                e = MPI_Ialltoall(in, (int)bb, MPI_BYTE, parts, (int)bb, MPI_BYTE, k->mc, rq);
                if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Ialltoall", what, msg, msg_size);
                if ((rc = cc__mpi_wait(k, 1, rq, "MPI_Ialltoall", what, "bringing each member its block", msg, msg_size)) != CC_OK)
                    return rc;
                for (m = 1; m < n; m++) cc__world_reduce_into(parts, parts + (size_t)m * bb, blk, c->dtype, c->reduce);
                if (c->reduce == CC_REDUCE_AVG) cc__world_divide(parts, blk, c->dtype, n);
                if (rs) { memcpy(c->recv_buf, parts, bb); return CC_OK; }
                e = MPI_Iallgather(parts, (int)bb, MPI_BYTE, out, (int)bb, MPI_BYTE, k->mc, rq);
                if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Iallgather", what, msg, msg_size);
                if ((rc = cc__mpi_wait(k, 1, rq, "MPI_Iallgather", what, "gathering the reduced blocks", msg, msg_size)) != CC_OK)
                    return rc;
                if (pad) memcpy(c->recv_buf, out, cnt * es);
                return CC_OK;
            }
        }
    }
    if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, call, what, msg, msg_size);
    return cc__mpi_wait(k, 1, rq, call, what, "moving the data", msg, msg_size);
}

/* ---- point to point ----------------------------------------------------------------*/
static cc_result cc__mpi_p2p(cc__mpi_comm* k, const cc_collective* c, const char* what, char* msg, size_t msg_size) {
    size_t nb = c->n_elems * cc__dtype_size(c->dtype);
    int64_t h[CONCERTO__MPI_HDR], theirs[CONCERTO__MPI_HDR];
    MPI_Request rq[2];
    uint64_t seq;
    int e, send = c->kind == CC_COLL_SEND;
    cc_result rc;
    if (nb > (size_t)INT_MAX) {
        cc__fmt(msg, msg_size, "mpi: %s: more than INT_MAX bytes in one MPI call", what);
        return CC_ERR_UNSUPPORTED;
    }
    pthread_mutex_lock(&k->state_mu);
    seq = send ? k->sent[c->peer]++ : k->received[c->peer]++;
    pthread_mutex_unlock(&k->state_mu);
    cc__mpi_header(h, c, seq);
    if (send) {
        e = MPI_Isend(h, CONCERTO__MPI_HDR, MPI_INT64_T, c->peer, CONCERTO__MPI_TAG_HDR, k->mc, &rq[0]);
        if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Isend (the header)", what, msg, msg_size);
        e = MPI_Isend(c->send_buf, (int)nb, MPI_BYTE, c->peer, CONCERTO__MPI_TAG_DATA, k->mc, &rq[1]);
        if (e != MPI_SUCCESS) {
            cc__mpi_set_pending(k);
            return cc__mpi_call_failed(e, "MPI_Isend", what, msg, msg_size);
        }
        return cc__mpi_wait(k, 2, rq, "MPI_Isend", what, "sending (the receiver has not posted its recv)", msg, msg_size);
    }
    e = MPI_Irecv(theirs, CONCERTO__MPI_HDR, MPI_INT64_T, c->peer, CONCERTO__MPI_TAG_HDR, k->mc, &rq[0]);
    if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Irecv (the header)", what, msg, msg_size);
    if ((rc = cc__mpi_wait(k, 1, rq, "MPI_Irecv", what, "waiting for the sender's header", msg, msg_size)) != CC_OK) return rc;
    if (theirs[0] != CC_COLL_SEND || theirs[1] != h[1] || theirs[3] != h[3] || theirs[5] != h[5]) {
        char t[128];
        cc__mpi_header_text(t, sizeof t, theirs);
        cc__fmt(msg, msg_size, "mpi: %s: transfer #%llu from rank %d: the sender issued %s as its transfer #%lld to this rank",
                what, (unsigned long long)seq, c->peer, t, (long long)theirs[5]);
        return CC_ERR_COLL_MISMATCH;
    }
    e = MPI_Irecv(c->recv_buf, (int)nb, MPI_BYTE, c->peer, CONCERTO__MPI_TAG_DATA, k->mc, &rq[0]);
    if (e != MPI_SUCCESS) return cc__mpi_call_failed(e, "MPI_Irecv", what, msg, msg_size);
    return cc__mpi_wait(k, 1, rq, "MPI_Irecv", what, "receiving the data", msg, msg_size);
}

static cc_result cc__mpi_collective(void* self, void* native_stream, const cc_collective* c, char* msg, size_t msg_size) {
    cc__mpi_comm* k = (cc__mpi_comm*)self;
    char what[CONCERTO__MSG_MAX];
    int n = cc_comm_size(k->handle), me = cc_comm_rank(k->handle), p2p;
    size_t es = cc__dtype_size(c->dtype);
    cc_result rc;
    (void)native_stream;   /* host streams: the calling thread is the stream */
    cc__mpi_coll_text(what, sizeof what, k, c);
    if (c->kind < CC_COLL_ALL_REDUCE || c->kind > CC_COLL_ALL_TO_ALL || !es ||
        ((c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_REDUCE_SCATTER) &&
         (c->reduce < CC_REDUCE_SUM || c->reduce > CC_REDUCE_MAX)) ||
        ((c->kind == CC_COLL_BROADCAST || c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) && (c->peer < 0 || c->peer >= n)) ||
        ((c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) && c->peer == me)) {
        cc__fmt(msg, msg_size, "mpi: %s: invalid collective (kind %d, type %d, reduction %d, peer %d of %d ranks%s)", what,
                (int)c->kind, (int)c->dtype, (int)c->reduce, c->peer, n,
                (c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) && c->peer == me ? ": itself" : "");
        return CC_ERR_INVALID_ARG;
    }
    if (c->n_elems && ((c->kind != CC_COLL_RECV && !(c->kind == CC_COLL_BROADCAST && c->peer != me) && !c->send_buf) ||
                       (c->kind != CC_COLL_SEND && !c->recv_buf))) {
        cc__fmt(msg, msg_size, "mpi: %s: %s is NULL", what, c->kind != CC_COLL_SEND && !c->recv_buf ? "recv_buf" : "send_buf");
        return CC_ERR_INVALID_ARG;
    }
    if ((rc = cc__mpi_usable(k, what, msg, msg_size)) != CC_OK) return rc;
    p2p = c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV;
    if (p2p) rc = cc__mpi_p2p(k, c, what, msg, msg_size);
    else {
        pthread_mutex_lock(&k->mu);
        if ((rc = cc__mpi_usable(k, what, msg, msg_size)) == CC_OK) rc = cc__mpi_group(k, c, what, msg, msg_size);
        pthread_mutex_unlock(&k->mu);
    }
    if (rc != CC_OK && rc != CC_ERR_INVALID_ARG && rc != CC_ERR_UNSUPPORTED) cc__mpi_fail(k, rc, msg);
    return rc;
}

static cc_result cc__mpi_poll(void* self, char* msg, size_t msg_size) {
    cc__mpi_comm* k = (cc__mpi_comm*)self;
    char what[160];
    cc__fmt(what, sizeof what, "communicator '%s'", cc__mpi_name(k));
    return cc__mpi_usable(k, what, msg, msg_size);
}

/* Frees the object; a communicator with a request that never completed
   keeps the MPI communicator and the buffers MPI may still write into. */
static void cc__mpi_destroy(void* self) {
    cc__mpi_comm* k = (cc__mpi_comm*)self;
    int i, fin = 0;
    if (!k) return;
    (void)MPI_Finalized(&fin);
    for (i = 0; i < 4; i++) if (k->ops[i] != MPI_OP_NULL && !fin) (void)MPI_Op_free(&k->ops[i]);
    if (!k->pending) {
        if (!fin && k->mc != MPI_COMM_NULL) (void)MPI_Comm_free(&k->mc);
        cc__free(k->ctx, k->scratch);
        cc__free(k->ctx, k->hdrs);
    }
    cc__free(k->ctx, k->sent);
    cc__free(k->ctx, k->received);
    pthread_mutex_destroy(&k->state_mu);
    pthread_mutex_destroy(&k->mu);
    cc__free(k->ctx, k);
}

/* Wraps mc (which it owns from now on, freed on failure). */
static cc_result cc__mpi_wrap(cc_context* ctx, MPI_Comm mc, const cc_mpi_desc* d, const char* name, const char* what,
                              cc_comm** out) {
    cc__mpi_comm* k = (cc__mpi_comm*)cc__calloc(ctx, 1, sizeof *k);
    int rank = -1, size = 0, e, i;
    cc_result rc;
    if (!k) {
        (void)MPI_Comm_free(&mc);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s '%s': out of memory", what, name);
    }
    k->ctx = ctx;
    k->mc = mc;
    k->desc = *d;
    for (i = 0; i < 4; i++) k->ops[i] = MPI_OP_NULL;
    if ((e = MPI_Comm_set_errhandler(mc, MPI_ERRORS_RETURN)) != MPI_SUCCESS || (e = MPI_Comm_rank(mc, &rank)) != MPI_SUCCESS ||
        (e = MPI_Comm_size(mc, &size)) != MPI_SUCCESS) {
        char s[256];
        cc__mpi_error_text(e, s, sizeof s);
        (void)MPI_Comm_free(&mc);
        cc__free(ctx, k);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "%s '%s': setting up the MPI communicator: %s", what, name, s);
    }
    k->sent = (uint64_t*)cc__calloc(ctx, (size_t)size, sizeof(uint64_t));
    k->received = (uint64_t*)cc__calloc(ctx, (size_t)size, sizeof(uint64_t));
    k->hdrs = (int64_t*)cc__calloc(ctx, (size_t)size * CONCERTO__MPI_HDR, sizeof(int64_t));
    if (!k->sent || !k->received || !k->hdrs) {
        cc__free(ctx, k->sent); cc__free(ctx, k->received); cc__free(ctx, k->hdrs);
        (void)MPI_Comm_free(&mc);
        cc__free(ctx, k);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s '%s': out of memory", what, name);
    }
    if (pthread_mutex_init(&k->mu, NULL) != 0 || pthread_mutex_init(&k->state_mu, NULL) != 0) {
        cc__free(ctx, k->sent); cc__free(ctx, k->received); cc__free(ctx, k->hdrs);
        (void)MPI_Comm_free(&mc);
        cc__free(ctx, k);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "%s '%s': pthread_mutex_init failed", what, name);
    }
    if ((rc = cc_comm_wrap(ctx, cc__mpi_fns(), k, rank, size, name, &k->handle)) != CC_OK) {
        cc__mpi_destroy(k);
        return rc;
    }
    k->desc.name = cc_comm_name(k->handle);
    *out = k->handle;
    return CC_OK;
}

static cc_result cc__mpi_split(void* self, int color, int key, cc_comm** out) {
    cc__mpi_comm* k = (cc__mpi_comm*)self;
    MPI_Comm nc = MPI_COMM_NULL;
    char name[CONCERTO__MSG_MAX];
    int e;
    *out = NULL;
    pthread_mutex_lock(&k->mu);   /* a collective on the parent: not beside its group collectives */
    if (cc__mpi_usable(k, "cc_comm_split", name, sizeof name) != CC_OK) {
        pthread_mutex_unlock(&k->mu);
        return CONCERTO__FAIL(k->ctx, k->fail_code, "cc_comm_split '%s': %s", cc__mpi_name(k), name);
    }
    e = MPI_Comm_split(k->mc, color < 0 ? MPI_UNDEFINED : color, key, &nc);
    pthread_mutex_unlock(&k->mu);
    if (e != MPI_SUCCESS) {
        char s[256];
        cc__mpi_error_text(e, s, sizeof s);
        return CONCERTO__FAIL(k->ctx, CC_ERR_BACKEND, "cc_comm_split '%s' (rank %d, color %d, key %d): MPI_Comm_split failed: %s",
                              cc__mpi_name(k), cc_comm_rank(k->handle), color, key, s);
    }
    if (color < 0 || nc == MPI_COMM_NULL) return CC_OK;
    cc__fmt(name, sizeof name, "%s.%d", cc__mpi_name(k), color);
    return cc__mpi_wrap(k->ctx, nc, &k->desc, name, "cc_comm_split", out);
}

static const cc_comm_fns cc__mpi_comm_fns_table = {
    "mpi", "host", cc__mpi_collective, cc__mpi_split, cc__mpi_destroy, cc__mpi_poll, cc__mpi_abort
};

static const cc_comm_fns* cc__mpi_fns(void) { return &cc__mpi_comm_fns_table; }

/* ---- set-up -----------------------------------------------------------------------*/
CONCERTO_API cc_mpi_desc cc_mpi_query_defaults(const cc_mpi_desc* desc) {
    cc_mpi_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.name) d.name = "mpi";
    if (d.timeout_s == 0) d.timeout_s = 30.0;
    if (d.abort_delay_s == 0) d.abort_delay_s = 1.0;
    return d;
}

CONCERTO_API const cc_comm_fns* cc_mpi_comm_fns(void) { return &cc__mpi_comm_fns_table; }

CONCERTO_API MPI_Comm cc_mpi_comm_handle(const cc_comm* comm) {
    const cc__mpi_comm* k = (const cc__mpi_comm*)cc_comm_self(comm, &cc__mpi_comm_fns_table);
    return k ? k->mc : MPI_COMM_NULL;
}

CONCERTO_API cc_result cc_mpi_check_thread_level(cc_context* ctx) {
    int init = 0, fin = 0, level = MPI_THREAD_SINGLE;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (MPI_Initialized(&init) != MPI_SUCCESS || !init)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "concerto_mpi.h: MPI is not initialised (call cc_mpi_init, or "
                              "MPI_Init_thread with MPI_THREAD_MULTIPLE, first)");
    if (MPI_Finalized(&fin) == MPI_SUCCESS && fin)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "concerto_mpi.h: MPI was finalised already");
    if (MPI_Query_thread(&level) != MPI_SUCCESS)
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "concerto_mpi.h: MPI_Query_thread failed");
    if (level < MPI_THREAD_MULTIPLE)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "concerto_mpi.h: the MPI library provides %s; the communication "
                              "streams' threads call MPI at once, which needs MPI_THREAD_MULTIPLE (initialise MPI with "
                              "MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...), or use an MPI built with thread support)",
                              cc__mpi_level_name(level));
    return CC_OK;
}

CONCERTO_API cc_result cc_mpi_init(cc_context* ctx, int* argc, char*** argv) {
    int init = 0, provided = MPI_THREAD_SINGLE, e;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (MPI_Initialized(&init) == MPI_SUCCESS && init) return cc_mpi_check_thread_level(ctx);
    if ((e = MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided)) != MPI_SUCCESS) {
        char s[256];
        cc__mpi_error_text(e, s, sizeof s);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_mpi_init: MPI_Init_thread failed: %s", s);
    }
    if (provided < MPI_THREAD_MULTIPLE)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_mpi_init: asked MPI_Init_thread for MPI_THREAD_MULTIPLE and the MPI "
                              "library provides %s: the communication streams' threads call MPI at once (use an MPI "
                              "built with thread support)", cc__mpi_level_name(provided));
    return CC_OK;
}

CONCERTO_API cc_result cc_mpi_comm_create(cc_context* ctx, MPI_Comm comm, const cc_mpi_desc* desc, cc_comm** out) {
    cc_mpi_desc d = cc_mpi_query_defaults(desc);
    MPI_Comm dup = MPI_COMM_NULL;
    cc_result rc;
    int e;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (out) *out = NULL;
    if (!out || comm == MPI_COMM_NULL || !(d.timeout_s > 0) || d.timeout_s - d.timeout_s != 0 ||
        (d.reduce != CC_MPI_REDUCE_RANK_ORDER && d.reduce != CC_MPI_REDUCE_NATIVE) || d.abort_delay_s != d.abort_delay_s)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_mpi_comm_create '%s': %s", d.name,
                              !out ? "out is NULL" : comm == MPI_COMM_NULL ? "comm is MPI_COMM_NULL" :
                              !(d.timeout_s > 0) || d.timeout_s - d.timeout_s != 0 ? "timeout_s must be >= 0 and finite" :
                              d.abort_delay_s != d.abort_delay_s ? "abort_delay_s is NaN" : "unknown reduce mode");
    if ((rc = cc_mpi_check_thread_level(ctx)) != CC_OK) return rc;
    if ((e = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS) {
        char s[256];
        cc__mpi_error_text(e, s, sizeof s);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_mpi_comm_create '%s': MPI_Comm_dup failed: %s", d.name, s);
    }
    return cc__mpi_wrap(ctx, dup, &d, d.name, "cc_mpi_comm_create", out);
}

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_IMPLEMENTATION && !CONCERTO_MPI_IMPL_INCLUDED */

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
