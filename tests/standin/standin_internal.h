/* tests/standin/standin_internal.h - what nccl_standin.c uses of
   cuda_standin.c: the one lock, the handle registry, allocations, streams
   and the call table. Not for tests (they use standin.h).

   Locking: one mutex guards all stand-in state (standin__lock). Functions
   marked "lock held" must be called with it held; the violation list and
   the call counts have their own leaf locks and may be used in any state. */
#ifndef STANDIN_INTERNAL_H_INCLUDED
#define STANDIN_INTERNAL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "standin.h"

#if defined(__GNUC__)
#  define STANDIN__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#  define STANDIN__PRINTF(a, b)
#endif

/* Every function of the stand-in: X(name, kind), kind 0 for a CUDA function
   returning cudaError_t, 1 for an NCCL function returning ncclResult_t, 2 for
   one that returns a string (counted, never failed). */
#define STANDIN__FUNCTIONS(X) \
    X(cudaGetDeviceCount, 0) X(cudaSetDevice, 0) X(cudaGetDevice, 0) X(cudaDeviceSynchronize, 0) \
    X(cudaDeviceGetStreamPriorityRange, 0) X(cudaStreamCreate, 0) X(cudaStreamCreateWithPriority, 0) \
    X(cudaStreamCreateWithFlags, 0) X(cudaStreamDestroy, 0) X(cudaStreamSynchronize, 0) X(cudaStreamQuery, 0) \
    X(cudaStreamWaitEvent, 0) X(cudaEventCreate, 0) X(cudaEventCreateWithFlags, 0) X(cudaEventDestroy, 0) \
    X(cudaEventRecord, 0) X(cudaEventSynchronize, 0) X(cudaEventQuery, 0) X(cudaEventElapsedTime, 0) \
    X(cudaLaunchHostFunc, 0) X(cudaStreamBeginCapture, 0) X(cudaStreamEndCapture, 0) \
    X(cudaStreamIsCapturing, 0) X(cudaGraphInstantiate, 0) X(cudaGraphLaunch, 0) X(cudaGraphExecDestroy, 0) \
    X(cudaGraphDestroy, 0) X(cudaMalloc, 0) X(cudaFree, 0) X(cudaMallocHost, 0) X(cudaFreeHost, 0) \
    X(cudaMemcpy, 0) X(cudaMemcpyAsync, 0) X(cudaMemcpy2DAsync, 0) X(cudaMemsetAsync, 0) X(cudaGetLastError, 0) \
    X(cudaPeekAtLastError, 0) X(cudaGetErrorString, 2) X(cudaGetErrorName, 2) \
    X(ncclGetVersion, 1) X(ncclGetUniqueId, 1) X(ncclCommInitRank, 1) X(ncclCommInitRankConfig, 1) X(ncclCommInitAll, 1) \
    X(ncclCommSplit, 1) X(ncclCommDestroy, 1) X(ncclCommAbort, 1) X(ncclCommFinalize, 1) \
    X(ncclCommGetAsyncError, 1) X(ncclCommCount, 1) X(ncclCommUserRank, 1) X(ncclCommCuDevice, 1) \
    X(ncclAllReduce, 1) X(ncclReduceScatter, 1) X(ncclAllGather, 1) X(ncclBroadcast, 1) X(ncclReduce, 1) \
    X(ncclSend, 1) X(ncclRecv, 1) X(ncclGroupStart, 1) X(ncclGroupEnd, 1) X(ncclGetErrorString, 2) \
    X(ncclGetLastError, 2)

#define STANDIN__FN_ENUM(name, kind) standin__fn_##name,
enum standin__fn { STANDIN__FUNCTIONS(STANDIN__FN_ENUM) standin__fn_count };
#undef STANDIN__FN_ENUM

/* Counts the call; returns 1 (and the code to return in *code) when the
   call must fail: an injected failure, or a call from inside a host
   function (recorded as a violation). Lock not held. */
int standin__enter(enum standin__fn fn, int* code);

void standin__lock(void);
void standin__unlock(void);
void standin__broadcast(void);                  /* lock held: wakes every waiter */
int standin__wait(double deadline_ms);          /* lock held; 0 if deadline_ms (> 0) passed */
double standin__now_ms(void);                   /* monotonic */
double standin__deadline(void);                 /* now + the timeout of standin_set_timeout_ms */
int standin__timeout_ms(void);
int standin__resetting(void);                   /* lock held */
void standin__violation(const char* fmt, ...) STANDIN__PRINTF(1, 2);
int standin__current_device(void);              /* the calling thread's */
int standin__device_count(void);

/* Registry of every handle created since the last reset; destroyed ones
   stay (dead = 1) so that a use after destroy is caught. */
enum standin__type { STANDIN__STREAM = 1, STANDIN__EVENT, STANDIN__GRAPH, STANDIN__EXEC, STANDIN__COMM };
typedef struct standin__obj {
    int type;
    int dead;
    unsigned serial;          /* shown in messages: "stream #3" */
    const char* killed_by;    /* the function that destroyed it */
} standin__obj;
int standin__register(standin__obj* o, int type);   /* lock held; 0 when out of memory */
/* lock held: the live object of that type, or NULL after recording a
   violation naming fn (never created, another type, destroyed) */
standin__obj* standin__check_handle(const void* h, int type, const char* fn);

/* Allocations (cudaMalloc, cudaMallocHost). */
typedef struct standin__alloc {
    const char* base;
    size_t size;
    int device;
    int host;                  /* cudaMallocHost */
    unsigned long long id;     /* never reused */
} standin__alloc;
/* lock held: 1 when p lies in [base, base + n_bytes) of a live allocation
   that has room for n_bytes, 0 when p is in no allocation, -1 when it runs
   past its allocation (a violation naming fn, what and `how`, e.g. "count
   1024 x 4-byte float32", is recorded). *out is filled for 1 and -1. */
int standin__check_extent(const char* fn, const char* what, const void* p, size_t n_bytes, const char* how,
                          standin__alloc* out);
int standin__alloc_live(unsigned long long id);     /* lock held */

/* Work of another kind (NCCL operations) on streams and in graphs. */
typedef struct standin__ext_fns {
    /* lock held: the work is issued on a stream that is not capturing (at
       enqueue) or by a graph launch; pos orders it on that stream */
    void (*issue)(void* payload, void* stream, uint64_t pos);
    void (*run)(void* payload, void* stream);      /* on the stream's worker, lock not held */
    void* (*clone)(const void* payload);           /* lock held; NULL when out of memory */
    void (*destroy)(void* payload);                /* lock held */
} standin__ext_fns;
/* lock held: checks the stream (0 is the calling thread's device's legacy
   stream) and gives its device */
cudaError_t standin__stream_check(cudaStream_t s, const char* fn, int* device);
/* lock held: enqueues (or records into the stream's capture) the payload,
   which the stand-in then owns; on an error it is left to the caller */
cudaError_t standin__enqueue_ext(cudaStream_t s, const standin__ext_fns* fns, void* payload, const char* fn);
/* lock held: what holds ext work (of fns) whose payload refers to arg
   (holds(payload, arg) != 0): "an open capture", "a CUDA graph" or "a CUDA
   graph exec" (the first found, named with its serial in buf), or NULL when
   nothing does. NCCL 2.26 and later wait in ncclCommAbort/Destroy until the
   graphs holding a communicator's operations are destroyed. */
const char* standin__graph_holder(const standin__ext_fns* fns, int (*holds)(const void* payload, const void* arg),
                                  const void* arg, char* buf, size_t size);
/* lock held: what the worker of `stream` is blocked on (for deadlock
   checks), and the position of the work it runs */
void standin__stream_set_blocked(void* stream, void* what);
void* standin__stream_blocked(void* stream);
uint64_t standin__stream_pos(void* stream);
unsigned standin__stream_serial(void* stream);
#define STANDIN__POS_SHIFT 20     /* pos = item position << shift | graph node index + 1 */

/* nccl_standin.c registers these on first use (lock held) */
typedef struct standin__nccl_hooks {
    void (*abort_all)(void);    /* lock held: release every waiting operation */
    void (*reset)(void);        /* lock held: free everything, after the streams stopped */
    int (*live)(void);          /* lock held: communicators not destroyed */
    void (*settings)(void);     /* lock held: back to the defaults */
} standin__nccl_hooks;
void standin__set_nccl_hooks(const standin__nccl_hooks* hooks);

#endif /* STANDIN_INTERNAL_H_INCLUDED */
