/* concerto_cuda.h - the CUDA backend of concerto.h: the executor's streams,
   events, timers and collectives on the CUDA runtime, and optionally each
   executor's step captured once into a CUDA graph of its own and replayed.

   DO THIS: include concerto.h first, then this header; in the one file that
   has the implementation, after concerto.h's:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"
       #include "concerto_cuda.h"
       #include "concerto_nccl.h"      // optional: NCCL communicators

   It includes <cuda_runtime_api.h> only (no kernels), so that file may be
   C (gcc/clang: -std=c11 or gnu11, since CUDA's headers are not C99
   -pedantic clean) or CUDA C++ (nvcc). Link with -lcudart.

   RUNNING A STEP ON ONE GPU (one host thread per GPU)
       cc_cuda_backend_desc bd = {0};      // zero: the thread's current device, plain launches
       bd.use_graphs = 1;                  // optional
       cc_cuda_backend_create(ctx, &bd, &be);
       cc_plan_create(ctx, graph, schedule.order, &plan);
       cc_exec_create(ctx, plan, &be, &exec);
       cc_exec_agree(exec, comm);          // comm: e.g. from concerto_nccl.h
       cc_exec_bind_buffer(exec, buf, d_ptr); // each bound buffer's device memory
       cc_exec_profile_ops(exec, 5, comm); // optional: measured durations, memory put back
       for (;;) cc_exec_step(exec);
       cc_exec_destroy(exec);  cc_backend_destroy(&be);
       cc_comm_destroy(comm);              // after the backend: see CUDA GRAPHS

   WHAT THE BACKEND DOES
   - Streams: one non-blocking cudaStream_t per stream of the plan. Stream 0
     (compute) has the default priority, streams 1.. (communication) the
     greatest the device offers, so a collective's kernels get SMs as soon as
     they can run. An op's cc_op_fn is called on the host, at once, with the
     raw cudaStream_t (as void*) and enqueues its work there; a CUDA error
     it leaves (cudaGetLastError) fails the op.
   - Events: one cudaEvent_t (timing disabled) per op that another stream
     waits for, created with the executor and reused every step. No host
     synchronisation inside a step.
   - Collectives: the op's communicator must be of a family whose stream
     kind is "cuda" (NCCL's); the backend calls the family's collective with
     the cudaStream_t and remembers, until the step is synchronized, which
     collectives (kind, count, type, communicator, op) it issued, with an
     event after each.
   - Timing: timestamp records an event (a pool reused every step) and
     synchronize converts it to microseconds of the host's monotonic clock
     (now_us): a base event recorded on an idle stream at the host time of
     the first timestamp, plus cudaEventElapsedTime. cc_exec_timeline and
     cc_exec_profile_ops use them.
   - synchronize never blocks forever: it polls the streams (cudaStreamQuery,
     with naps of 20 to 250 us) and, while it waits, every communicator the
     step used (cc_comm_fns.poll: NCCL's asynchronous errors). On an
     asynchronous error, a failed stream, or when timeout_s passes, it calls
     abort on every communicator the step used and fails with CC_ERR_BACKEND
     or CC_ERR_TIMEOUT and a message that names the collective still
     running (kind, element count, type, reduction, communicator and family)
     and its op. That failure is sticky: every later entry, and the next
     step, fails at once with the same message; destroy the backend and the
     communicators. NCCL's abort stops NCCL's own kernels, but it frees
     memory, which waits for the device: where the stream is held by work
     of the program's own (a kernel or host function that does not end),
     synchronize returns only once that work ends.
   - Memory: mem_alloc/mem_free/mem_copy (cudaMalloc, cudaFree, a copy on
     the backend's own stream), so the executor's own collectives (agreement
     of plans, the maximum of profiled durations) run on device buffers.
   - Errors: every CUDA error becomes a cc_result recorded in the backend's
     context (CC_ERR_OUT_OF_MEMORY for cudaErrorMemoryAllocation, else
     CC_ERR_BACKEND), naming the CUDA call, cudaGetErrorString and
     cudaGetErrorName, and the op (the executor's label entry). A CUDA or
     NCCL call that fails in an entry is sticky like a failed step: the
     communicators the batch used (and the failed collective's) are
     aborted, so that peers waiting for a collective this rank will not
     issue fail instead of hanging, and every later entry fails with the
     same message. Nothing exits, aborts or prints.

   CUDA GRAPHS (use_graphs = 1)
   A step is known by its entries (stream, function and argument,
   collective, event, timestamp slot). The first time a step runs it runs
   plainly (its warm-up: lazy initialisation, workspaces and the like
   happen outside any capture) and its entries are kept; the next time a
   step begins with the same entries it is captured: cudaStreamBeginCapture
   on the backend's own origin stream, in cudaStreamCaptureModeThreadLocal;
   every stream of the backend joins the capture by waiting for an event
   recorded on the origin, the step's entries are issued as usual, every
   stream is joined back into the origin, and cudaStreamEndCapture ends it.
   The graph is instantiated once and launched (on the origin stream) at the
   end of that step, and at the end of every later step whose entries are
   the same; in those replayed steps the executor's entries enqueue nothing
   and op functions are not called. So op functions must enqueue the same
   work with the same pointers and arguments every step, as CUDA graphs
   require (a kernel argument read from host memory at enqueue time, like a
   step counter, is frozen at its captured value: read it from device
   memory instead).
   The backend keeps up to 16 known steps, each with its own graph (the
   least recently run makes room), so several executors (or plans) that
   alternate on one backend each replay their own step. A replayed step is
   followed entry by entry: where it parts from its graph, another known
   step that begins the same way is taken (replayed, or captured), or the
   entries so far are issued plainly and the step is kept as a new one
   (captured the next time it runs). Destroying a stream or an event (an
   executor going away) forgets the steps that used it.
   Why ThreadLocal: Global would make "unsafe" calls (cudaMalloc, ...) of
   every thread of the process fail during the capture, and a process that
   drives one GPU per thread captures on each of them; Relaxed would let an
   op function allocate during the capture, which then happens only once
   while the graph is replayed forever. ThreadLocal forbids those calls on
   the capturing thread alone: an op function that makes one breaks the
   capture, which is detected.
   If the capture or the instantiation fails, the step's recorded entries
   are issued again as plain launches (op functions are then called a
   second time in that step), and that step runs plainly from then on
   (other steps are not affected). cc_cuda_backend_graph_status says whether
   the last step launched a graph, and why not; cc_cuda_backend_graph_counts
   counts plain, captured and replayed steps. During captured and replayed
   steps timestamps are not recorded: the timeline's times are NaN
   (cc_exec_profile_ops never begins a step, so it times every op plainly in
   either mode). A collective enqueued into a capture that is then
   discarded is not run by NCCL; the plain issue that follows runs it.
   When a step fails for good (see Errors), an open capture is ended and
   every graph destroyed before any communicator is aborted: NCCL 2.26 and
   later wait in ncclCommAbort and ncclCommDestroy until the graphs holding
   the communicator's collectives are destroyed. For the same reason,
   destroy the backend before the communicators its steps used.
   Before an op function is called, a CUDA error left by other work
   (cudaGetLastError) is cleared, so that it is not charged to that op.

   WHAT IS VERIFIED WITHOUT A GPU
   Built in every `make test` as C11 (gcc -Wall -Wextra -Werror -pedantic)
   and as CUDA C++ (nvcc, warnings as errors), linked against the real
   libcudart; run there only as far as needs no GPU (the descs, the tables,
   the backend's creation failing cleanly with the CUDA error named and
   nothing leaked). `make test-gpu` runs plain and graph steps, NCCL and
   profiling on a real GPU. The CUDA calls used are: cudaGetDevice,
   cudaSetDevice, cudaDeviceGetStreamPriorityRange,
   cudaStreamCreateWithPriority, cudaStreamCreateWithFlags,
   cudaStreamDestroy, cudaStreamQuery, cudaStreamWaitEvent,
   cudaEventCreateWithFlags, cudaEventDestroy, cudaEventRecord,
   cudaEventQuery, cudaEventElapsedTime, cudaStreamBeginCapture,
   cudaStreamEndCapture, cudaGraphInstantiate, cudaGraphLaunch,
   cudaGraphExecDestroy, cudaGraphDestroy, cudaMalloc, cudaFree,
   cudaMemcpyAsync, cudaMemcpy2DAsync, cudaGetLastError, cudaGetErrorString, cudaGetErrorName.

   THREADS: a backend is driven from one host thread, whose current device
   must be the backend's (checked when streams are made, memory is
   allocated and every step begins).
*/
#ifndef CONCERTO_H_INCLUDED
#error "concerto_cuda.h: include concerto.h first"
#endif
#ifdef CONCERTO_NO_RUNTIME
#error "concerto_cuda.h: the CUDA backend belongs to the runtime, which CONCERTO_NO_RUNTIME leaves out"
#endif

#ifndef CONCERTO_CUDA_H_INCLUDED
#define CONCERTO_CUDA_H_INCLUDED
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cc_cuda_backend_desc {
    /* 0: the calling thread's current device (cudaGetDevice). 1: device
       `device` (>= 0), made current on the calling thread with
       cudaSetDevice. */
    int select_device;
    int device;              /* with select_device 1; 0 otherwise */
    /* 1: each step that runs again is captured into a CUDA graph (after a
       plain warm-up run) and replayed from then on (see CUDA GRAPHS above);
       0: plain launches. */
    int use_graphs;
    /* Seconds of the monotonic clock that synchronize waits for a step (or
       mem_copy for its copy) before it aborts the step's communicators and
       fails with CC_ERR_TIMEOUT; 0: 30 s. Every rank uses its own. */
    double timeout_s;
} cc_cuda_backend_desc;

/* The desc as cc_cuda_backend_create resolves it (NULL: a zero desc, every
   default): timeout_s 30 where it was 0; the current device stays
   select_device 0 (resolved by cudaGetDevice when the backend is made).
   Nothing is checked. */
CONCERTO_API cc_cuda_backend_desc cc_cuda_backend_query_defaults(const cc_cuda_backend_desc* desc);
/* Fills *out ({fns, self}); desc may be NULL. Errors are recorded in ctx,
   which the backend keeps for the messages of its entries; destroy it with
   cc_backend_destroy after the executors that use it and before the
   communicators its steps used (its CUDA graphs hold their collectives,
   and NCCL 2.26 and later wait in ncclCommDestroy until those graphs are
   destroyed). */
CONCERTO_API cc_result cc_cuda_backend_create(cc_context* ctx, const cc_cuda_backend_desc* desc, cc_backend* out);
/* The backend's function table (name "cuda", stream_kind "cuda"). */
CONCERTO_API const cc_backend_fns* cc_cuda_backend_fns(void);
/* 1 if the last step launched a CUDA graph (captured then, or replayed),
   else 0; *why (may be NULL) says what happened, or why not ("use_graphs is
   0", the step's warm-up, the capture that broke and the op it broke at,
   the failed CUDA call, ...). Borrowed, valid until the
   backend's next entry. 0 with a reason for anything but a CUDA backend. */
CONCERTO_API int cc_cuda_backend_graph_status(const cc_backend* backend, const char** why);
/* How the steps of a CUDA backend ran since it was made: each completed
   step counts once. */
typedef struct cc_cuda_graph_counts {
    long n_plain;       /* plain launches: use_graphs 0, a step's first run (its warm-up), a capture that failed */
    long n_captured;    /* captured into a CUDA graph, then launched */
    long n_replayed;    /* replayed a graph captured by an earlier step */
    int n_graphs;       /* the instantiated graphs the backend holds now (one per known step) */
} cc_cuda_graph_counts;
/* Fills *out. CC_ERR_INVALID_ARG (out zeroed) if out is NULL or backend is
   not a CUDA backend. Nothing is recorded in a context. */
CONCERTO_API cc_result cc_cuda_backend_graph_counts(const cc_backend* backend, cc_cuda_graph_counts* out);

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_CUDA_H_INCLUDED */

/* ========================================================================
   IMPLEMENTATION
   ======================================================================== */
#if defined(CONCERTO_IMPLEMENTATION) && !defined(CONCERTO_CUDA_IMPL_INCLUDED)
#define CONCERTO_CUDA_IMPL_INCLUDED
#ifndef CONCERTO_IMPL_INCLUDED
#error "concerto_cuda.h: its implementation needs concerto.h's: include concerto.h with CONCERTO_IMPLEMENTATION first"
#endif

#include <math.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* >>cuda
   The backend: its streams with their join events, event pools for
   timestamps and for the end of each collective, the collectives issued
   since the last synchronize, and for graphs the entries of the captured
   step. */

#define CONCERTO__CUDA_LABEL_MAX 128

/* what an entry of a step is */
enum { CC__CUDA_LAUNCH = 1, CC__CUDA_COLL, CC__CUDA_RECORD, CC__CUDA_WAIT, CC__CUDA_STAMP, CC__CUDA_COPY };
/* how the entries of the current step act: plain; plain and recorded (a
   warm-up); captured; replayed (nothing enqueued); not known yet (the
   first entry chooses) */
enum { CC__CUDA_PLAIN = 0, CC__CUDA_WARMUP, CC__CUDA_CAPTURE, CC__CUDA_REPLAY, CC__CUDA_PENDING };
/* the steps a backend keeps graphs of */
#define CONCERTO__CUDA_GRAPHS_MAX 16

typedef struct cc__cuda_stream {
    cudaStream_t s;
    int index;
    cudaEvent_t join;          /* capture: joins this stream back into the origin */
} cc__cuda_stream;

/* One entry of a step, as the executor made it. */
typedef struct cc__cuda_call {
    int kind;
    cc__cuda_stream* stream;
    cc_op_fn fn;                     /* LAUNCH */
    void* user_data;
    const cc_collective* coll;       /* COLL: the executor's descriptor ... */
    cc_collective coll_copy;         /* ... and what it said then */
    const cc_copy2d* copy;           /* COPY: the executor's descriptor ... */
    cc_copy2d copy_copy;             /* ... and what it said then */
    cudaEvent_t event;               /* RECORD, WAIT */
    double* where;                   /* STAMP */
    const char* label;               /* the op's name (the executor's pointer) */
} cc__cuda_call;

typedef struct cc__cuda_coll_rec {
    cc_collective coll;
    char label[CONCERTO__CUDA_LABEL_MAX];
    long done;                 /* its event in the done pool; -1: none (captured) */
} cc__cuda_coll_rec;

/* Events created on demand and reused: n_used of n_created taken since the
   last synchronize. */
typedef struct cc__cuda_pool {
    cudaEvent_t* ev;
    double** where;            /* the timestamp pool: where each goes */
    size_t n_created, cap, where_cap, n_used;
    unsigned flags;
} cc__cuda_pool;

/* A known step: its entries, and once captured its graph. */
typedef struct cc__cuda_graph {
    cc__cuda_call* calls;
    size_t n_calls, calls_cap;
    cudaGraphExec_t gexec;           /* NULL: run once plainly (its warm-up), captured next time */
    cc__cuda_coll_rec* colls;        /* the collectives of the captured step */
    size_t n_colls, colls_cap;
    int off;                         /* its capture failed: it runs plainly (why) */
    unsigned long used;              /* the backend's step count when it last ran */
    char why[CONCERTO__MSG_MAX];
} cc__cuda_graph;

typedef struct cc__cuda_backend {
    cc_context* ctx;
    int device, use_graphs;
    double timeout_s;
    int prio_least, prio_greatest;
    cudaStream_t origin;       /* capture origin, graph launches, copies, the timing base */
    cudaEvent_t fork;          /* capture: the plan's streams wait for it */
    cudaEvent_t base;          /* timing: recorded on origin at host time base_us */
    double base_us;
    int base_set;
    cc__cuda_stream** streams;
    int n_streams;
    size_t streams_cap;
    cc__cuda_pool stamps, done;
    cc__cuda_coll_rec* colls;  /* issued since the last synchronize */
    size_t n_colls, colls_cap;
    const char* label_ptr;
    char label[CONCERTO__CUDA_LABEL_MAX];
    /* graphs */
    int in_step, mode, broken, launched;
    cc__cuda_graph* graphs[CONCERTO__CUDA_GRAPHS_MAX];   /* the known steps */
    int n_graphs;
    cc__cuda_graph* cur;       /* the step's (replayed or captured); NULL */
    cc__cuda_call* calls;      /* the entries of the current step, recorded or captured */
    size_t n_calls, calls_cap, pos;
    unsigned long n_steps;
    long n_plain, n_captured, n_replayed;
    char graph_why[CONCERTO__MSG_MAX];
    char break_why[CONCERTO__MSG_MAX];
    /* a failed step: every later entry fails with it */
    cc_result sticky;
    char sticky_msg[CONCERTO__MSG_MAX];
} cc__cuda_backend;

/* ---- messages ---------------------------------------------------------------*/
static const char* cc__cuda_stream_role(int index) { return index == 0 ? "compute" : "communication"; }

/* "all_reduce of 1024 float32 (sum) on communicator 'dp' (nccl)[ at op 'x']" */
static void cc__cuda_coll_text(char* buf, size_t size, const cc_collective* c, const char* label) {
    cc__coll_text(buf, size, c);
    if (c->comm) cc__append(buf, size, " on communicator '%s' (%s)", c->comm->name, cc_comm_family(c->comm));
    if (label && label[0]) cc__append(buf, size, " at op '%s'", label);
}

/* Records a failed CUDA call: "what: call failed: text (name)[ at op 'x']". */
static cc_result cc__cuda_fail(cc__cuda_backend* be, cudaError_t e, const char* call, const char* what) {
    cc_result code = e == cudaErrorMemoryAllocation ? CC_ERR_OUT_OF_MEMORY : CC_ERR_BACKEND;
    (void)cudaGetLastError();   /* a non-sticky error is reported once */
    return CONCERTO__FAIL(be->ctx, code, "%s: %s failed: %s (%s)%s%s%s", what, call, cudaGetErrorString(e), cudaGetErrorName(e),
                          be->label[0] ? " at op '" : "", be->label, be->label[0] ? "'" : "");
}

static cc_result cc__cuda_sticky(cc__cuda_backend* be) {
    return CONCERTO__FAIL(be->ctx, be->sticky, "%s", be->sticky_msg);
}

#define CONCERTO__CUDA_STICKY(be) do { if ((be)->sticky != CC_OK) return cc__cuda_sticky(be); } while (0)

static void cc__cuda_set_label(cc__cuda_backend* be, const char* name) {
    be->label_ptr = name;
    cc__copy_msg(be->label, sizeof be->label, name ? name : "");
}

/* The calling thread's current device is the backend's. */
static cc_result cc__cuda_check_device(cc__cuda_backend* be, const char* what) {
    int d = -1;
    cudaError_t e = cudaGetDevice(&d);
    if (e != cudaSuccess) return cc__cuda_fail(be, e, "cudaGetDevice", what);
    if (d != be->device)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "%s: the calling thread's current CUDA device is %d, the backend's "
                              "is %d: call cudaSetDevice(%d) on this thread first", what, d, be->device, be->device);
    return CC_OK;
}

/* ---- event pools --------------------------------------------------------------*/
static cc_result cc__cuda_pool_take(cc__cuda_backend* be, cc__cuda_pool* p, const char* what, size_t* idx) {
    if (p->n_used == p->n_created) {
        cudaEvent_t ev;
        cudaError_t e;
        if (!CONCERTO__GROW(be->ctx, p->ev, p->cap, p->n_created + 1))
            return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
        if ((e = cudaEventCreateWithFlags(&ev, p->flags)) != cudaSuccess) return cc__cuda_fail(be, e, "cudaEventCreateWithFlags", what);
        p->ev[p->n_created++] = ev;
    }
    *idx = p->n_used++;
    return CC_OK;
}

static void cc__cuda_pool_free(cc__cuda_backend* be, cc__cuda_pool* p) {
    size_t i;
    for (i = 0; i < p->n_created; i++) (void)cudaEventDestroy(p->ev[i]);
    cc__free(be->ctx, p->ev);
    cc__free(be->ctx, p->where);
    memset(p, 0, sizeof *p);
}

/* ---- the collectives of a step -----------------------------------------------*/
static cc_result cc__cuda_add_coll(cc__cuda_backend* be, const cc_collective* c, long done) {
    cc__cuda_coll_rec* r;
    if (!CONCERTO__GROW(be->ctx, be->colls, be->colls_cap, be->n_colls + 1))
        return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "cuda backend: out of memory");
    r = &be->colls[be->n_colls++];
    r->coll = *c;
    cc__copy_msg(r->label, sizeof r->label, be->label);
    r->done = done;
    return CC_OK;
}

/* Forgets what the last synchronized batch issued. */
static void cc__cuda_batch_reset(cc__cuda_backend* be) {
    be->n_colls = 0;
    be->stamps.n_used = 0;
    be->done.n_used = 0;
    be->base_set = 0;
}

static void cc__cuda_graphs_close(cc__cuda_backend* be);

/* The step failed for good: names the collective it waits for, aborts every
   communicator the step used, and makes the failure sticky. */
static cc_result cc__cuda_step_failed(cc__cuda_backend* be, cc_result code, const char* reason, const cc_comm* culprit) {
    char* m = be->sticky_msg;
    const size_t n = sizeof be->sticky_msg;
    char what[CONCERTO__MSG_MAX];
    size_t i, j;
    long waiting = -1;
    int n_aborted = 0;
    cc__fmt(m, n, "cuda backend: %s", reason);
    for (i = 0; i < be->n_colls && waiting < 0; i++)
        if (be->colls[i].done >= 0 && cudaEventQuery(be->done.ev[be->colls[i].done]) != cudaSuccess) waiting = (long)i;
    if (be->n_colls == 0) cc__append(m, n, "; the step issued no collectives");
    else if (waiting >= 0) {
        cc__cuda_coll_text(what, sizeof what, &be->colls[waiting].coll, be->colls[waiting].label);
        cc__append(m, n, "; waiting for %s (collective %ld of %lu)", what, waiting + 1, (unsigned long)be->n_colls);
    } else if (be->colls[0].done < 0) {
        cc__cuda_coll_text(what, sizeof what, &be->colls[0].coll, be->colls[0].label);
        cc__append(m, n, "; the step replays a CUDA graph, which does not tell which of its %lu collectives runs; the first: %s",
                   (unsigned long)be->n_colls, what);
    } else {
        long last = -1;
        for (i = 0; i < be->n_colls; i++) if (be->colls[i].coll.comm == culprit) last = (long)i;
        cc__append(m, n, "; all %lu collectives of the step had completed", (unsigned long)be->n_colls);
        if (last >= 0) {
            cc__cuda_coll_text(what, sizeof what, &be->colls[last].coll, be->colls[last].label);
            cc__append(m, n, ", the last on '%s' being %s", culprit->name, what);
        }
    }
    (void)cudaGetLastError();
    cc__cuda_graphs_close(be);   /* before any abort: NCCL waits there for graphs holding its collectives */
    for (i = 0; i < be->n_colls; i++) {
        cc_comm* c = be->colls[i].coll.comm;
        int seen = 0;
        for (j = 0; j < i && !seen; j++) seen = be->colls[j].coll.comm == c;
        if (seen || !c || !c->fns->abort) continue;
        c->fns->abort(c->self, m);
        cc__append(m, n, "%s'%s'", n_aborted ? ", " : "; aborted the communicators ", c->name);
        n_aborted++;
    }
    be->sticky = code;
    return CONCERTO__FAIL(be->ctx, code, "%s", m);
}

/* An entry failed (a CUDA or NCCL call): the failure becomes sticky like
   one found by synchronize, and the communicators of the batch (and of the
   failed collective) are aborted, so that peers waiting in a collective this
   rank will never issue fail instead of hanging. Bad arguments are not
   sticky: nothing was enqueued. */
static cc_result cc__cuda_entry_failed(cc__cuda_backend* be, cc_result code, const cc_collective* failed) {
    char* m = be->sticky_msg;
    const size_t n = sizeof be->sticky_msg;
    cc_comm* seen[64];
    int n_seen = 0, j;
    size_t i;
    if (code == CC_ERR_INVALID_ARG || be->sticky != CC_OK) return code;
    cc__copy_msg(m, n, be->ctx->last_result == code ? be->ctx->last_error : cc_result_description(code));
    cc__cuda_graphs_close(be);   /* before any abort: NCCL waits there for graphs holding its collectives */
    for (i = 0; i <= be->n_colls; i++) {
        cc_comm* c = i < be->n_colls ? be->colls[i].coll.comm : failed ? failed->comm : NULL;
        int dup = 0;
        for (j = 0; j < n_seen && !dup; j++) dup = seen[j] == c;
        if (dup || !c || !c->fns->abort || n_seen == 64) continue;
        seen[n_seen++] = c;
        c->fns->abort(c->self, m);
        cc__append(m, n, "%s'%s'", n_seen > 1 ? ", " : "; aborted the communicators ", c->name);
    }
    be->sticky = code;
    return CONCERTO__FAIL(be->ctx, code, "%s", m);
}

/* Polls every communicator the batch used; the first asynchronous error
   fails the step. */
static cc_result cc__cuda_poll_comms(cc__cuda_backend* be) {
    size_t i, j;
    for (i = 0; i < be->n_colls; i++) {
        cc_comm* c = be->colls[i].coll.comm;
        char msg[CONCERTO__MSG_MAX], reason[CONCERTO__MSG_MAX];
        int seen = 0;
        cc_result r;
        for (j = 0; j < i && !seen; j++) seen = be->colls[j].coll.comm == c;
        if (seen || !c || !c->fns->poll) continue;
        msg[0] = 0;
        if ((r = c->fns->poll(c->self, msg, sizeof msg)) != CC_OK) {
            cc__fmt(reason, sizeof reason, "communicator '%s' (%s) reported an asynchronous error: %s", c->name,
                    cc_comm_family(c), msg[0] ? msg : cc_result_description(r));
            return cc__cuda_step_failed(be, CC_ERR_BACKEND, reason, c);
        }
    }
    return CC_OK;
}

/* Waits for the origin stream alone (a copy), bounded by the timeout. */
static cc_result cc__cuda_wait_origin(cc__cuda_backend* be, const char* what) {
    double deadline = cc__now_s() + be->timeout_s, nap = 20;
    for (;;) {
        cudaError_t e = cudaStreamQuery(be->origin);
        if (e == cudaSuccess) return CC_OK;
        if (e != cudaErrorNotReady) return cc__cuda_fail(be, e, "cudaStreamQuery", what);
        if (cc__now_s() >= deadline) {
            char reason[CONCERTO__MSG_MAX];
            cc__fmt(reason, sizeof reason, "%s did not finish within %g s", what, be->timeout_s);
            return cc__cuda_step_failed(be, CC_ERR_TIMEOUT, reason, NULL);
        }
        cc__nap(&nap);
    }
}

/* ---- entries as plain launches ------------------------------------------------*/
static cc_result cc__cuda_plain(cc__cuda_backend* be, const cc__cuda_call* c) {
    cudaStream_t s = c->stream->s;
    cudaError_t e;
    switch (c->kind) {
        case CC__CUDA_LAUNCH:
            (void)cudaGetLastError();   /* an error left by other work is not this op's */
            c->fn((void*)s, c->user_data);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return cc__cuda_fail(be, e, "a CUDA call of the op's function (cudaGetLastError after it)", "cuda backend");
            return CC_OK;
        case CC__CUDA_COLL: {
            char msg[CONCERTO__MSG_MAX], what[CONCERTO__MSG_MAX];
            const cc_collective* k = c->coll;
            size_t idx;
            cc_result r;
            msg[0] = 0;
            if ((r = k->comm->fns->collective(k->comm->self, (void*)s, k, msg, sizeof msg)) != CC_OK) {
                cc__cuda_coll_text(what, sizeof what, k, be->label);
                return CONCERTO__FAIL(be->ctx, r, "cuda backend: %s: %s", what, msg[0] ? msg : cc_result_description(r));
            }
            if ((r = cc__cuda_pool_take(be, &be->done, "cuda backend: the event after a collective", &idx)) != CC_OK) return r;
            if ((e = cudaEventRecord(be->done.ev[idx], s)) != cudaSuccess)
                return cc__cuda_fail(be, e, "cudaEventRecord", "cuda backend: the event after a collective");
            return cc__cuda_add_coll(be, k, (long)idx);
        }
        case CC__CUDA_COPY: {
            const cc_copy2d* k = c->copy;
            if ((e = cudaMemcpy2DAsync(k->dst, k->dst_pitch, k->src, k->src_pitch, k->width, k->height, cudaMemcpyDefault, s)) !=
                cudaSuccess)
                return cc__cuda_fail(be, e, "cudaMemcpy2DAsync", "cuda backend: a copy op");
            return CC_OK;
        }
        case CC__CUDA_RECORD:
            if ((e = cudaEventRecord(c->event, s)) != cudaSuccess)
                return cc__cuda_fail(be, e, "cudaEventRecord", "cuda backend: recording an op's event");
            return CC_OK;
        case CC__CUDA_WAIT:
            if ((e = cudaStreamWaitEvent(s, c->event, 0)) != cudaSuccess)
                return cc__cuda_fail(be, e, "cudaStreamWaitEvent", "cuda backend: a cross-stream wait");
            return CC_OK;
        case CC__CUDA_STAMP: {
            size_t idx;
            cc_result r;
            if (!be->base_set) {
                be->base_us = 1e6 * cc__now_s();
                if ((e = cudaEventRecord(be->base, be->origin)) != cudaSuccess)
                    return cc__cuda_fail(be, e, "cudaEventRecord", "cuda backend: the timing base");
                be->base_set = 1;
            }
            if ((r = cc__cuda_pool_take(be, &be->stamps, "cuda backend: a timestamp", &idx)) != CC_OK) return r;
            if (!CONCERTO__GROW(be->ctx, be->stamps.where, be->stamps.where_cap, idx + 1)) {
                be->stamps.n_used--;
                return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "cuda backend: a timestamp: out of memory");
            }
            if ((e = cudaEventRecord(be->stamps.ev[idx], s)) != cudaSuccess) {
                be->stamps.n_used--;
                return cc__cuda_fail(be, e, "cudaEventRecord", "cuda backend: a timestamp");
            }
            be->stamps.where[idx] = c->where;
            return CC_OK;
        }
        default:
            return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: unknown entry %d", c->kind);
    }
}

/* ---- graphs -----------------------------------------------------------------------
   A step is known by its entries. The backend keeps up to
   CONCERTO__CUDA_GRAPHS_MAX known steps (cc__cuda_graph): each was first
   run plainly (its warm-up), is captured the next time a step begins with
   the same entries, and is replayed from then on. A step chooses its graph
   by its entries as they come: while they match a captured step's nothing
   is enqueued; where they part, another known step with the same beginning
   is taken, or the step goes on plainly (recorded, to be captured next
   time). So executors that alternate on one backend each replay their own
   step. */
static void cc__cuda_graph_free(cc__cuda_backend* be, cc__cuda_graph* gr) {
    if (!gr) return;
    if (gr->gexec) (void)cudaGraphExecDestroy(gr->gexec);   /* one in flight is freed when it completes */
    cc__free(be->ctx, gr->calls);
    cc__free(be->ctx, gr->colls);
    cc__free(be->ctx, gr);
}

/* Forgets graph i (the order of the others is kept). */
static void cc__cuda_graph_remove(cc__cuda_backend* be, int i) {
    int j;
    if (be->cur == be->graphs[i]) be->cur = NULL;
    cc__cuda_graph_free(be, be->graphs[i]);
    for (j = i; j + 1 < be->n_graphs; j++) be->graphs[j] = be->graphs[j + 1];
    be->n_graphs--;
}

/* Forgets every graph whose step used the stream or the event (NULL: any):
   a handle destroyed now may be reused by a new one. */
static void cc__cuda_graph_forget(cc__cuda_backend* be, const cc__cuda_stream* s, cudaEvent_t ev) {
    int i = 0;
    while (i < be->n_graphs) {
        const cc__cuda_graph* gr = be->graphs[i];
        size_t k;
        int uses = 0;
        for (k = 0; k < gr->n_calls && !uses; k++)
            uses = (s && gr->calls[k].stream == s) ||
                   (ev && (gr->calls[k].kind == CC__CUDA_RECORD || gr->calls[k].kind == CC__CUDA_WAIT) && gr->calls[k].event == ev);
        if (uses) cc__cuda_graph_remove(be, i);
        else i++;
    }
}

/* Ends an open capture (its graph discarded) and destroys every graph: what
   must happen before a communicator whose collectives they hold is aborted
   (NCCL 2.26 and later wait for those graphs in ncclCommAbort). */
static void cc__cuda_graphs_close(cc__cuda_backend* be) {
    if (be->in_step && be->mode == CC__CUDA_CAPTURE) {
        cudaGraph_t g = NULL;
        if (cudaStreamEndCapture(be->origin, &g) == cudaSuccess && g) (void)cudaGraphDestroy(g);
        be->mode = CC__CUDA_PLAIN;
    }
    if (be->in_step && be->mode != CC__CUDA_PLAIN) be->mode = CC__CUDA_PLAIN;
    while (be->n_graphs > 0) cc__cuda_graph_remove(be, be->n_graphs - 1);
    be->cur = NULL;
    be->n_calls = 0;
    (void)cudaGetLastError();
}

static int cc__cuda_same_coll(const cc_collective* a, const cc_collective* b) {
    return a->kind == b->kind && a->dtype == b->dtype && a->reduce == b->reduce && a->n_elems == b->n_elems &&
           a->peer == b->peer && a->comm == b->comm && a->send_buf == b->send_buf && a->recv_buf == b->recv_buf;
}

static int cc__cuda_same_call(const cc__cuda_call* a, const cc__cuda_call* b) {
    if (a->kind != b->kind || a->stream != b->stream) return 0;
    switch (a->kind) {
        case CC__CUDA_LAUNCH: return a->fn == b->fn && a->user_data == b->user_data;
        case CC__CUDA_COLL: return a->coll == b->coll && cc__cuda_same_coll(&a->coll_copy, b->coll);
        case CC__CUDA_COPY: return a->copy == b->copy && memcmp(&a->copy_copy, b->copy, sizeof *b->copy) == 0;
        case CC__CUDA_RECORD: case CC__CUDA_WAIT: return a->event == b->event;
        case CC__CUDA_STAMP: return a->where == b->where;
        default: return 0;
    }
}

static const char* cc__cuda_call_name(int kind) {
    switch (kind) {
        case CC__CUDA_LAUNCH: return "launch";
        case CC__CUDA_COLL: return "collective";
        case CC__CUDA_COPY: return "copy";
        case CC__CUDA_RECORD: return "event_record";
        case CC__CUDA_WAIT: return "stream_wait_event";
        case CC__CUDA_STAMP: return "timestamp";
        default: return "?";
    }
}

/* A known step (not given up) that begins with the n entries of `prefix`
   followed by c (c NULL: that has exactly those n entries); captured ones
   first. NULL if none. */
static cc__cuda_graph* cc__cuda_graph_find(cc__cuda_backend* be, const cc__cuda_call* prefix, size_t n, const cc__cuda_call* c) {
    cc__cuda_graph* warm = NULL;
    int i;
    for (i = 0; i < be->n_graphs; i++) {
        cc__cuda_graph* gr = be->graphs[i];
        size_t k;
        int same = 1;
        if (gr->off || (c ? gr->n_calls <= n : gr->n_calls != n)) continue;
        for (k = 0; k < n && same; k++) same = cc__cuda_same_call(&gr->calls[k], &prefix[k]);
        if (!same || (c && !cc__cuda_same_call(&gr->calls[n], c))) continue;
        if (gr->gexec) return gr;
        if (!warm) warm = gr;
    }
    return warm;
}

/* Records an entry of the current step (a capture, or a plain step that is
   recorded to be captured next time). */
static cc_result cc__cuda_record(cc__cuda_backend* be, const cc__cuda_call* c) {
    if (!CONCERTO__GROW(be->ctx, be->calls, be->calls_cap, be->n_calls + 1))
        return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "cuda backend: recording a step's entries: out of memory");
    be->calls[be->n_calls++] = *c;
    return CC_OK;
}

/* Captures from here: the backend's streams join the origin's capture.
   0 if it could not begin (gr is given up, saying why). */
static int cc__cuda_capture_begin(cc__cuda_backend* be, cc__cuda_graph* gr) {
    cudaError_t e;
    const char* call = "cudaStreamBeginCapture";
    int i;
    be->broken = 0;
    if ((e = cudaStreamBeginCapture(be->origin, cudaStreamCaptureModeThreadLocal)) == cudaSuccess) {
        call = "cudaEventRecord (the capture's fork)";
        e = cudaEventRecord(be->fork, be->origin);
        for (i = 0; i < be->n_streams && e == cudaSuccess; i++) {
            call = "cudaStreamWaitEvent (a stream joining the capture)";
            e = cudaStreamWaitEvent(be->streams[i]->s, be->fork, 0);
        }
        if (e != cudaSuccess) {
            cudaGraph_t g = NULL;
            cudaError_t e2 = cudaStreamEndCapture(be->origin, &g);
            if (e2 == cudaSuccess && g) (void)cudaGraphDestroy(g);
        }
    }
    if (e != cudaSuccess) {
        gr->off = 1;
        cc__fmt(gr->why, sizeof gr->why, "%s failed: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
        (void)cudaGetLastError();
        return 0;
    }
    be->cur = gr;
    be->mode = CC__CUDA_CAPTURE;
    return 1;
}

/* An entry during a capture: issued into it and recorded. Errors of the
   capture itself are kept for capture_end (the step then runs plainly);
   a collective's refusal is the op's error. */
static cc_result cc__cuda_capture_call(cc__cuda_backend* be, const cc__cuda_call* c) {
    cudaError_t e = cudaSuccess;
    cc_result rc;
    if ((rc = cc__cuda_record(be, c)) != CC_OK) return rc;
    if (c->kind == CC__CUDA_STAMP) { *c->where = (double)NAN; return CC_OK; }
    if (be->broken) return CC_OK;
    switch (c->kind) {
        case CC__CUDA_LAUNCH:
            (void)cudaGetLastError();   /* an error left by other work is not this op's */
            c->fn((void*)c->stream->s, c->user_data);
            e = cudaGetLastError();
            break;
        case CC__CUDA_COLL: {
            char msg[CONCERTO__MSG_MAX], what[CONCERTO__MSG_MAX];
            const cc_collective* k = c->coll;
            cc_result r;
            msg[0] = 0;
            if ((r = k->comm->fns->collective(k->comm->self, (void*)c->stream->s, k, msg, sizeof msg)) != CC_OK) {
                be->n_calls--;
                cc__cuda_coll_text(what, sizeof what, k, be->label);
                return CONCERTO__FAIL(be->ctx, r, "cuda backend: %s (while capturing a CUDA graph): %s", what,
                                      msg[0] ? msg : cc_result_description(r));
            }
            return cc__cuda_add_coll(be, k, -1);
        }
        case CC__CUDA_COPY:
            e = cudaMemcpy2DAsync(c->copy->dst, c->copy->dst_pitch, c->copy->src, c->copy->src_pitch, c->copy->width,
                                  c->copy->height, cudaMemcpyDefault, c->stream->s);
            break;
        case CC__CUDA_RECORD: e = cudaEventRecord(c->event, c->stream->s); break;
        case CC__CUDA_WAIT: e = cudaStreamWaitEvent(c->stream->s, c->event, 0); break;
        default: break;
    }
    if (e != cudaSuccess) {
        cc__fmt(be->break_why, sizeof be->break_why, "the capture broke at the %s%s%s%s: %s (%s)", cc__cuda_call_name(c->kind),
                be->label[0] ? " of op '" : "", be->label, be->label[0] ? "'" : "", cudaGetErrorString(e), cudaGetErrorName(e));
        (void)cudaGetLastError();
        be->broken = 1;
    }
    return CC_OK;
}

/* Issues n entries (from a known step's list) into the current mode:
   captured, or plainly and recorded. */
static cc_result cc__cuda_reissue(cc__cuda_backend* be, const cc__cuda_call* calls, size_t n) {
    const char* label = be->label_ptr;
    size_t i;
    cc_result rc = CC_OK;
    for (i = 0; i < n && rc == CC_OK; i++) {
        cc__cuda_set_label(be, calls[i].label);
        if (be->mode == CC__CUDA_CAPTURE) rc = cc__cuda_capture_call(be, &calls[i]);
        else if ((rc = cc__cuda_plain(be, &calls[i])) == CC_OK) rc = cc__cuda_record(be, &calls[i]);
    }
    cc__cuda_set_label(be, label);
    return rc;
}

/* The step's entries so far (the n of prefix) are followed by c (NULL: the
   step ends there), which no replayed graph expects: takes the known step
   that begins so (replay, or capture) or goes on plainly, recording; the
   entries so far are issued in the new mode. */
static cc_result cc__cuda_choose(cc__cuda_backend* be, const cc__cuda_call* prefix, size_t n, const cc__cuda_call* c) {
    cc__cuda_graph* gr = cc__cuda_graph_find(be, prefix, n, c);
    be->n_calls = 0;
    be->cur = NULL;
    if (gr && gr->gexec) {
        be->cur = gr;
        be->mode = CC__CUDA_REPLAY;
        be->pos = n;
        return CC_OK;
    }
    be->mode = CC__CUDA_WARMUP;
    if (gr && !cc__cuda_capture_begin(be, gr)) be->mode = CC__CUDA_WARMUP;
    return cc__cuda_reissue(be, prefix, n);
}

/* Keeps the plain step just recorded (its warm-up) as a known step, unless
   it is one already; the least recently used one makes room. */
static void cc__cuda_keep(cc__cuda_backend* be) {
    cc__cuda_graph* gr;
    int i;
    for (i = 0; i < be->n_graphs; i++) {
        size_t k;
        int same;
        gr = be->graphs[i];
        same = gr->n_calls == be->n_calls;
        for (k = 0; k < gr->n_calls && same; k++) same = cc__cuda_same_call(&gr->calls[k], &be->calls[k]);
        if (!same) continue;
        gr->used = be->n_steps;
        if (gr->off) cc__fmt(be->graph_why, sizeof be->graph_why, "plain launches: %s", gr->why);
        return;
    }
    gr = (cc__cuda_graph*)cc__calloc(be->ctx, 1, sizeof *gr);
    if (!gr) return;   /* not kept: captured some later time */
    if (be->n_graphs == CONCERTO__CUDA_GRAPHS_MAX) {
        int lru = 0;
        for (i = 1; i < be->n_graphs; i++) if (be->graphs[i]->used < be->graphs[lru]->used) lru = i;
        cc__cuda_graph_remove(be, lru);
    }
    gr->calls = be->calls; gr->n_calls = be->n_calls; gr->calls_cap = be->calls_cap;
    be->calls = NULL; be->n_calls = 0; be->calls_cap = 0;
    gr->used = be->n_steps;
    be->graphs[be->n_graphs++] = gr;
    cc__fmt(be->graph_why, sizeof be->graph_why, "plain launches: the step's first run (its warm-up); it is captured the next time "
            "it runs");
}

/* Ends the capture: joins the streams, instantiates, launches. On failure
   the step's recorded entries are issued plainly and its graph given up
   (that step runs plainly from then on; others are not affected). */
static cc_result cc__cuda_capture_end(cc__cuda_backend* be, int completed) {
    cc__cuda_graph* gr = be->cur;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ex = NULL;
    cudaError_t e = cudaSuccess;
    const char* call = "";
    char why[CONCERTO__MSG_MAX];
    int i;
    why[0] = 0;
    for (i = 0; i < be->n_streams && !be->broken && e == cudaSuccess; i++) {
        call = "cudaEventRecord (joining a stream back)";
        e = cudaEventRecord(be->streams[i]->join, be->streams[i]->s);
        if (e == cudaSuccess) {
            call = "cudaStreamWaitEvent (joining a stream back)";
            e = cudaStreamWaitEvent(be->origin, be->streams[i]->join, 0);
        }
    }
    if (e != cudaSuccess) cc__fmt(why, sizeof why, "%s failed: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
    e = cudaStreamEndCapture(be->origin, &g);
    if (!why[0] && be->broken) cc__copy_msg(why, sizeof why, be->break_why);
    if (!why[0] && (e != cudaSuccess || !g))
        cc__fmt(why, sizeof why, "cudaStreamEndCapture failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    if (!completed) {   /* an op failed: nothing of the step runs; it is captured again next time */
        if (g) (void)cudaGraphDestroy(g);
        (void)cudaGetLastError();
        be->n_calls = 0;
        be->n_colls = 0;
        return CC_OK;
    }
    if (!why[0] && (e = cudaGraphInstantiate(&ex, g, 0)) != cudaSuccess) {
        ex = NULL;
        cc__fmt(why, sizeof why, "cudaGraphInstantiate failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    }
    if (g) (void)cudaGraphDestroy(g);   /* the instantiated graph does not need it */
    if (!why[0] && !CONCERTO__GROW(be->ctx, gr->colls, gr->colls_cap, be->n_colls + 1)) {
        (void)cudaGraphExecDestroy(ex);   /* nothing of the step runs; it is captured again next time */
        be->n_calls = 0;
        be->n_colls = 0;
        return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "cuda backend: keeping the captured step's collectives: out of memory");
    }
    if (!why[0] && (e = cudaGraphLaunch(ex, be->origin)) != cudaSuccess)
        cc__fmt(why, sizeof why, "cudaGraphLaunch failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    {   /* the captured entries become the step's */
        cc__cuda_call* t = gr->calls;
        size_t cap = gr->calls_cap;
        gr->calls = be->calls; gr->n_calls = be->n_calls; gr->calls_cap = be->calls_cap;
        be->calls = t; be->calls_cap = cap; be->n_calls = 0;
    }
    gr->used = be->n_steps;
    if (!why[0]) {
        size_t k;
        gr->gexec = ex;
        for (k = 0; k < be->n_colls; k++) gr->colls[k] = be->colls[k];
        gr->n_colls = be->n_colls;
        be->launched = 1;
        be->n_captured++;
        cc__fmt(be->graph_why, sizeof be->graph_why, "replaying the captured step (%lu entries, %lu collectives) as a CUDA graph",
                (unsigned long)gr->n_calls, (unsigned long)gr->n_colls);
        return CC_OK;
    }
    if (ex) (void)cudaGraphExecDestroy(ex);
    gr->off = 1;
    cc__copy_msg(gr->why, sizeof gr->why, why);
    cc__fmt(be->graph_why, sizeof be->graph_why, "plain launches: %s", why);
    (void)cudaGetLastError();
    be->mode = CC__CUDA_PLAIN;
    be->n_plain++;
    {   /* the step runs plainly: its recorded entries, issued again */
        const char* label = be->label_ptr;
        size_t k;
        cc_result rc = CC_OK;
        cc__cuda_batch_reset(be);
        for (k = 0; k < gr->n_calls && rc == CC_OK; k++) {
            cc__cuda_set_label(be, gr->calls[k].label);
            rc = cc__cuda_plain(be, &gr->calls[k]);
        }
        cc__cuda_set_label(be, label);
        return rc;
    }
}

/* Every entry of the executor goes through here. */
static cc_result cc__cuda_entry(cc__cuda_backend* be, cc__cuda_call* c) {
    cc_result rc = CC_OK;
    c->label = be->label_ptr;
    if (be->in_step && be->mode == CC__CUDA_PENDING) rc = cc__cuda_choose(be, NULL, 0, c);
    else if (be->in_step && be->mode == CC__CUDA_REPLAY && !(be->pos < be->cur->n_calls && cc__cuda_same_call(&be->cur->calls[be->pos], c)))
        rc = cc__cuda_choose(be, be->cur->calls, be->pos, c);
    if (rc == CC_OK && be->in_step && be->mode == CC__CUDA_REPLAY) {
        be->pos++;
        if (c->kind == CC__CUDA_STAMP) *c->where = (double)NAN;
        return CC_OK;
    }
    if (rc == CC_OK) {
        if (be->in_step && be->mode == CC__CUDA_CAPTURE) rc = cc__cuda_capture_call(be, c);
        else if ((rc = cc__cuda_plain(be, c)) == CC_OK && be->in_step && be->mode == CC__CUDA_WARMUP) rc = cc__cuda_record(be, c);
    }
    if (rc != CC_OK) rc = cc__cuda_entry_failed(be, rc, c->kind == CC__CUDA_COLL ? c->coll : NULL);
    return rc;
}

/* ---- the table's entries -----------------------------------------------------------*/
static cc_result cc__cuda_stream_create(void* self, int index, void** out) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_stream* s;
    cudaError_t e;
    cc_result rc;
    char what[96];
    CONCERTO__CUDA_STICKY(be);
    cc__fmt(what, sizeof what, "cuda backend: creating stream %d (%s)", index, cc__cuda_stream_role(index));
    if ((rc = cc__cuda_check_device(be, what)) != CC_OK) return rc;
    s = (cc__cuda_stream*)cc__calloc(be->ctx, 1, sizeof *s);
    if (!s) return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    s->index = index;
    e = cudaStreamCreateWithPriority(&s->s, cudaStreamNonBlocking, index == 0 ? be->prio_least : be->prio_greatest);
    if (e != cudaSuccess) { cc__free(be->ctx, s); return cc__cuda_fail(be, e, "cudaStreamCreateWithPriority", what); }
    if ((e = cudaEventCreateWithFlags(&s->join, cudaEventDisableTiming)) != cudaSuccess) {
        (void)cudaStreamDestroy(s->s);
        cc__free(be->ctx, s);
        return cc__cuda_fail(be, e, "cudaEventCreateWithFlags", what);
    }
    if (!CONCERTO__GROW(be->ctx, be->streams, be->streams_cap, (size_t)be->n_streams + 1)) {
        (void)cudaEventDestroy(s->join);
        (void)cudaStreamDestroy(s->s);
        cc__free(be->ctx, s);
        return CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    be->streams[be->n_streams++] = s;
    *out = s;
    return CC_OK;
}

/* The stream's pending work still completes (cudaStreamDestroy does not wait). */
static void cc__cuda_stream_destroy(void* self, void* stream) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_stream* s = (cc__cuda_stream*)stream;
    int i, j = 0;
    if (!s) return;
    for (i = 0; i < be->n_streams; i++) if (be->streams[i] != s) be->streams[j++] = be->streams[i];
    be->n_streams = j;
    cc__cuda_graph_forget(be, s, NULL);   /* the graphs of its steps: a new stream may get its address */
    (void)cudaEventDestroy(s->join);
    (void)cudaStreamDestroy(s->s);
    cc__free(be->ctx, s);
}

static cc_result cc__cuda_launch(void* self, void* stream, cc_op_fn fn, void* user_data) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    CONCERTO__CUDA_STICKY(be);
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_LAUNCH; c.stream = (cc__cuda_stream*)stream; c.fn = fn; c.user_data = user_data;
    return cc__cuda_entry(be, &c);
}

static cc_result cc__cuda_collective(void* self, void* stream, const cc_collective* coll) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    const char* kind;
    CONCERTO__CUDA_STICKY(be);
    if (!coll || !coll->comm)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: a collective %s", coll ? "without a communicator" : "descriptor is NULL");
    kind = coll->comm->fns->stream_kind ? coll->comm->fns->stream_kind : "host";
    if (strcmp(kind, "cuda") != 0) {
        char what[CONCERTO__MSG_MAX];
        cc__cuda_coll_text(what, sizeof what, coll, be->label);
        return CONCERTO__FAIL(be->ctx, CC_ERR_UNSUPPORTED, "cuda backend: %s: the family '%s' runs its collectives on '%s' streams, "
                              "not on CUDA streams", what, cc_comm_family(coll->comm), kind);
    }
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_COLL; c.stream = (cc__cuda_stream*)stream; c.coll = coll; c.coll_copy = *coll;
    return cc__cuda_entry(be, &c);
}

/* A copy op (cc_copy2d) as one cudaMemcpy2DAsync on the stream. */
static cc_result cc__cuda_copy(void* self, void* stream, const cc_copy2d* copy) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    CONCERTO__CUDA_STICKY(be);
    if (!copy) return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: a copy descriptor is NULL");
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_COPY; c.stream = (cc__cuda_stream*)stream; c.copy = copy; c.copy_copy = *copy;
    return cc__cuda_entry(be, &c);
}

static cc_result cc__cuda_event_create(void* self, void** out) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cudaEvent_t ev;
    cudaError_t e;
    CONCERTO__CUDA_STICKY(be);
    if ((e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming)) != cudaSuccess)
        return cc__cuda_fail(be, e, "cudaEventCreateWithFlags", "cuda backend: creating an op's event");
    *out = (void*)ev;
    return CC_OK;
}

static void cc__cuda_event_destroy(void* self, void* ev) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    if (!ev) return;
    cc__cuda_graph_forget(be, NULL, (cudaEvent_t)ev);   /* a new event may get its handle */
    (void)cudaEventDestroy((cudaEvent_t)ev);
}

static cc_result cc__cuda_event_record(void* self, void* ev, void* stream) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    CONCERTO__CUDA_STICKY(be);
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_RECORD; c.stream = (cc__cuda_stream*)stream; c.event = (cudaEvent_t)ev;
    return cc__cuda_entry(be, &c);
}

static cc_result cc__cuda_stream_wait_event(void* self, void* stream, void* ev) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    CONCERTO__CUDA_STICKY(be);
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_WAIT; c.stream = (cc__cuda_stream*)stream; c.event = (cudaEvent_t)ev;
    return cc__cuda_entry(be, &c);
}

static cc_result cc__cuda_timestamp(void* self, void* stream, double* where_us) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc__cuda_call c;
    CONCERTO__CUDA_STICKY(be);
    memset(&c, 0, sizeof c);
    c.kind = CC__CUDA_STAMP; c.stream = (cc__cuda_stream*)stream; c.where = where_us;
    return cc__cuda_entry(be, &c);
}

/* Waits for every stream, polling them and the step's communicators; see
   the doc block. Then fills the batch's timestamps. */
static cc_result cc__cuda_synchronize(void* self) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    double deadline, nap = 20;
    size_t k;
    cc_result rc;
    CONCERTO__CUDA_STICKY(be);
    if (be->in_step)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: synchronize between step_begin and step_end");
    deadline = cc__now_s() + be->timeout_s;
    for (;;) {
        int i, busy = 0;
        for (i = -1; i < be->n_streams; i++) {
            cudaError_t e = cudaStreamQuery(i < 0 ? be->origin : be->streams[i]->s);
            if (e == cudaErrorNotReady) { busy = 1; continue; }
            if (e != cudaSuccess) {
                char reason[CONCERTO__MSG_MAX];
                cc__fmt(reason, sizeof reason, "the step failed on the %s stream%s: cudaStreamQuery: %s (%s)",
                        i < 0 ? "backend's own" : cc__cuda_stream_role(be->streams[i]->index),
                        i < 0 && be->launched ? " (the step's CUDA graph)" : "", cudaGetErrorString(e),
                        cudaGetErrorName(e));
                return cc__cuda_step_failed(be, CC_ERR_BACKEND, reason, NULL);
            }
        }
        if ((rc = cc__cuda_poll_comms(be)) != CC_OK) return rc;
        if (!busy) break;
        if (cc__now_s() >= deadline) {
            char reason[CONCERTO__MSG_MAX];
            cc__fmt(reason, sizeof reason, "the step did not finish within %g s (timeout_s)", be->timeout_s);
            return cc__cuda_step_failed(be, CC_ERR_TIMEOUT, reason, NULL);
        }
        cc__nap(&nap);
    }
    for (k = 0; k < be->stamps.n_used; k++) {
        float ms = 0;
        cudaError_t e = cudaEventElapsedTime(&ms, be->base, be->stamps.ev[k]);
        if (e != cudaSuccess) {
            rc = cc__cuda_entry_failed(be, cc__cuda_fail(be, e, "cudaEventElapsedTime", "cuda backend: a timestamp"), NULL);
            cc__cuda_batch_reset(be);
            return rc;
        }
        *be->stamps.where[k] = be->base_us + 1e3 * (double)ms;
    }
    cc__cuda_batch_reset(be);
    cc__cuda_set_label(be, NULL);
    return CC_OK;
}

static double cc__cuda_now_us(void* self) { (void)self; return 1e6 * cc__now_s(); }

static cc_result cc__cuda_mem_alloc(void* self, size_t n_bytes, void** ptr) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cudaError_t e;
    cc_result rc;
    CONCERTO__CUDA_STICKY(be);
    if ((rc = cc__cuda_check_device(be, "cuda backend: mem_alloc")) != CC_OK) return rc;
    *ptr = NULL;
    if ((e = cudaMalloc(ptr, n_bytes ? n_bytes : 1)) != cudaSuccess) {
        *ptr = NULL;
        return cc__cuda_fail(be, e, "cudaMalloc", "cuda backend: mem_alloc");
    }
    return CC_OK;
}

static void cc__cuda_mem_free(void* self, void* ptr) {
    (void)self;
    if (ptr) (void)cudaFree(ptr);
}

/* A copy in any direction, on the backend's own stream, waited for. */
static cc_result cc__cuda_mem_copy(void* self, void* dst, const void* src, size_t n_bytes) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cudaError_t e;
    CONCERTO__CUDA_STICKY(be);
    if (!n_bytes) return CC_OK;
    if ((e = cudaMemcpyAsync(dst, src, n_bytes, cudaMemcpyDefault, be->origin)) != cudaSuccess)
        return cc__cuda_fail(be, e, "cudaMemcpyAsync", "cuda backend: mem_copy");
    return cc__cuda_wait_origin(be, "cuda backend: mem_copy");
}

static cc_result cc__cuda_step_begin(void* self) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc_result rc;
    CONCERTO__CUDA_STICKY(be);
    if (be->in_step) return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: step_begin twice without step_end");
    if ((rc = cc__cuda_check_device(be, "cuda backend: beginning a step")) != CC_OK) return rc;
    (void)cudaGetLastError();   /* an error left by earlier work is not charged to this step's ops */
    cc__cuda_set_label(be, NULL);
    be->in_step = 1;
    be->mode = be->use_graphs ? CC__CUDA_PENDING : CC__CUDA_PLAIN;
    be->pos = 0;
    be->n_calls = 0;
    be->cur = NULL;
    be->launched = 0;
    be->n_steps++;
    return CC_OK;
}

static cc_result cc__cuda_step_end(void* self, int completed) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc_result rc = CC_OK;
    int mode;
    if (!be->in_step) return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cuda backend: step_end without step_begin");
    if (be->mode == CC__CUDA_REPLAY && completed && be->sticky == CC_OK && be->pos != be->cur->n_calls &&
        (rc = cc__cuda_choose(be, be->cur->calls, be->pos, NULL)) != CC_OK)   /* the step ended early: another known step, or plain */
        rc = cc__cuda_entry_failed(be, rc, NULL);   /* ends a capture it began */
    mode = be->mode;
    be->in_step = 0;
    be->mode = CC__CUDA_PLAIN;
    if (rc != CC_OK) {}
    else if (mode == CC__CUDA_CAPTURE) rc = cc__cuda_capture_end(be, completed);   /* ends the capture even after a failure */
    else if (mode == CC__CUDA_REPLAY && completed && be->sticky == CC_OK) {
        cc__cuda_graph* gr = be->cur;
        if (!CONCERTO__GROW(be->ctx, be->colls, be->colls_cap, be->n_colls + gr->n_colls + 1))
            rc = CONCERTO__FAIL(be->ctx, CC_ERR_OUT_OF_MEMORY, "cuda backend: out of memory");   /* nothing launched */
        else {
            cudaError_t e = cudaGraphLaunch(gr->gexec, be->origin);
            if (e != cudaSuccess) {
                char why[CONCERTO__MSG_MAX];
                cc__fmt(why, sizeof why, "cudaGraphLaunch failed: %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
                (void)cudaGetLastError();
                (void)cudaGraphExecDestroy(gr->gexec);
                gr->gexec = NULL;
                gr->off = 1;
                cc__copy_msg(gr->why, sizeof gr->why, why);
                cc__fmt(be->graph_why, sizeof be->graph_why, "plain launches: %s", why);
                be->n_plain++;
                rc = cc__cuda_reissue(be, gr->calls, gr->n_calls);   /* plainly (mode is PLAIN), recorded */
                be->n_calls = 0;
            } else {
                size_t k;
                for (k = 0; k < gr->n_colls; k++) be->colls[be->n_colls + k] = gr->colls[k];
                be->n_colls += gr->n_colls;
                gr->used = be->n_steps;
                be->launched = 1;
                be->n_replayed++;
                cc__fmt(be->graph_why, sizeof be->graph_why, "replaying the captured step (%lu entries, %lu collectives) as a "
                        "CUDA graph", (unsigned long)gr->n_calls, (unsigned long)gr->n_colls);
            }
        }
    } else if (mode == CC__CUDA_WARMUP && completed && be->sticky == CC_OK) {
        be->n_plain++;
        cc__cuda_keep(be);
    } else if (mode == CC__CUDA_PLAIN && completed && be->sticky == CC_OK) {
        be->n_plain++;
    }
    be->cur = NULL;
    cc__cuda_set_label(be, NULL);
    if (rc == CC_OK && be->sticky != CC_OK) return cc__cuda_sticky(be);
    return rc;
}

static void cc__cuda_label(void* self, const char* op_name) { cc__cuda_set_label((cc__cuda_backend*)self, op_name); }

static void cc__cuda_destroy(void* self) {
    cc__cuda_backend* be = (cc__cuda_backend*)self;
    cc_context* ctx;
    int i;
    if (!be) return;
    ctx = be->ctx;
    cc__cuda_graphs_close(be);
    for (i = 0; i < be->n_streams; i++) {
        (void)cudaEventDestroy(be->streams[i]->join);
        (void)cudaStreamDestroy(be->streams[i]->s);
        cc__free(ctx, be->streams[i]);
    }
    cc__cuda_pool_free(be, &be->stamps);
    cc__cuda_pool_free(be, &be->done);
    if (be->fork) (void)cudaEventDestroy(be->fork);
    if (be->base) (void)cudaEventDestroy(be->base);
    if (be->origin) (void)cudaStreamDestroy(be->origin);
    (void)cudaGetLastError();
    cc__free(ctx, be->streams);
    cc__free(ctx, be->colls);
    cc__free(ctx, be->calls);
    cc__free(ctx, be);
}

static const cc_backend_fns cc__cuda_backend_fns_table = {
    "cuda", "cuda",
    cc__cuda_stream_create, cc__cuda_stream_destroy, cc__cuda_launch, cc__cuda_collective,
    cc__cuda_event_create, cc__cuda_event_destroy, cc__cuda_event_record, cc__cuda_stream_wait_event,
    cc__cuda_timestamp, cc__cuda_synchronize, cc__cuda_now_us,
    cc__cuda_mem_alloc, cc__cuda_mem_free, cc__cuda_mem_copy,
    cc__cuda_step_begin, cc__cuda_step_end, cc__cuda_label,
    cc__cuda_destroy,
    cc__cuda_copy
};

/* ---- public ------------------------------------------------------------------------*/
CONCERTO_API cc_cuda_backend_desc cc_cuda_backend_query_defaults(const cc_cuda_backend_desc* desc) {
    cc_cuda_backend_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (d.timeout_s == 0) d.timeout_s = 30.0;
    return d;
}

CONCERTO_API const cc_backend_fns* cc_cuda_backend_fns(void) { return &cc__cuda_backend_fns_table; }

CONCERTO_API cc_result cc_cuda_backend_create(cc_context* ctx, const cc_cuda_backend_desc* desc, cc_backend* out) {
    cc_cuda_backend_desc d = cc_cuda_backend_query_defaults(desc);
    cc__cuda_backend* be;
    cudaError_t e;
    const char* call;
    char what[64];
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cuda_backend_create: out is NULL");
    memset(out, 0, sizeof *out);
    if ((d.select_device != 0 && d.select_device != 1) || d.device < 0 || (!d.select_device && d.device != 0))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cuda_backend_create: select_device %d, device %d (want select_device 0 "
                              "and device 0 for the current device, or select_device 1 and device >= 0)", d.select_device, d.device);
    if ((d.use_graphs != 0 && d.use_graphs != 1) || !(d.timeout_s > 0) || d.timeout_s - d.timeout_s != 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cuda_backend_create: use_graphs %d (want 0 or 1), timeout_s %g "
                              "(want > 0 and finite, or 0 for 30 s)", d.use_graphs, d.timeout_s);
    be = (cc__cuda_backend*)cc__calloc(ctx, 1, sizeof *be);
    if (!be) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_cuda_backend_create: out of memory");
    be->ctx = ctx;
    be->use_graphs = d.use_graphs;
    be->timeout_s = d.timeout_s;
    be->device = -1;
    be->stamps.flags = cudaEventDefault;
    be->done.flags = cudaEventDisableTiming;
    cc__fmt(what, sizeof what, "cc_cuda_backend_create");
    call = "cudaSetDevice";
    e = d.select_device ? cudaSetDevice(d.device) : cudaSuccess;
    if (e == cudaSuccess) { call = "cudaGetDevice"; e = cudaGetDevice(&be->device); }
    if (e == cudaSuccess) { call = "cudaDeviceGetStreamPriorityRange"; e = cudaDeviceGetStreamPriorityRange(&be->prio_least, &be->prio_greatest); }
    if (e == cudaSuccess) { call = "cudaStreamCreateWithFlags"; e = cudaStreamCreateWithFlags(&be->origin, cudaStreamNonBlocking); }
    if (e != cudaSuccess) be->origin = NULL;
    if (e == cudaSuccess) { call = "cudaEventCreateWithFlags"; e = cudaEventCreateWithFlags(&be->fork, cudaEventDisableTiming); }
    if (e != cudaSuccess) be->fork = NULL;
    if (e == cudaSuccess) { call = "cudaEventCreateWithFlags"; e = cudaEventCreateWithFlags(&be->base, cudaEventDefault); }
    if (e != cudaSuccess) be->base = NULL;
    if (e != cudaSuccess) {
        cc_result rc;
        if (d.select_device) cc__fmt(what, sizeof what, "cc_cuda_backend_create (device %d)", d.device);
        rc = cc__cuda_fail(be, e, call, what);
        cc__cuda_destroy(be);
        return rc;
    }
    cc__fmt(be->graph_why, sizeof be->graph_why, "%s", be->use_graphs ? "no step captured yet" : "use_graphs is 0: plain launches");
    out->fns = &cc__cuda_backend_fns_table;
    out->self = be;
    return CC_OK;
}

CONCERTO_API int cc_cuda_backend_graph_status(const cc_backend* backend, const char** why) {
    const cc__cuda_backend* be;
    if (!backend || backend->fns != &cc__cuda_backend_fns_table || !backend->self) {
        if (why) *why = "not a CUDA backend (cc_cuda_backend_create)";
        return 0;
    }
    be = (const cc__cuda_backend*)backend->self;
    if (why) *why = be->graph_why;
    return be->launched;
}

CONCERTO_API cc_result cc_cuda_backend_graph_counts(const cc_backend* backend, cc_cuda_graph_counts* out) {
    const cc__cuda_backend* be;
    if (!out) return CC_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    if (!backend || backend->fns != &cc__cuda_backend_fns_table || !backend->self) return CC_ERR_INVALID_ARG;
    be = (const cc__cuda_backend*)backend->self;
    out->n_plain = be->n_plain;
    out->n_captured = be->n_captured;
    out->n_replayed = be->n_replayed;
    out->n_graphs = 0;
    {
        int i;
        for (i = 0; i < be->n_graphs; i++) out->n_graphs += be->graphs[i]->gexec != NULL;
    }
    return CC_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_IMPLEMENTATION && !CONCERTO_CUDA_IMPL_INCLUDED */

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
