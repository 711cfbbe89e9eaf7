/* tests/standin/standin.h - the test-side controls of the CPU stand-in for
   the CUDA runtime and NCCL (tests/standin/cuda_standin.c, nccl_standin.c).

   A test program includes <cuda_runtime_api.h> and <nccl.h> as usual and
   links build/tests/standin/cuda_standin.o and nccl_standin.o (the
   Makefile's STANDIN_OBJS) in place of -lcudart -lnccl. This header adds
   what a test needs around them: a reset between tests, fault injection,
   the list of rule violations the stand-in detected, call counts and a few
   settings. See tests/standin/README.md for the rules and what is not
   modelled.

   Every function here is thread-safe. */
#ifndef STANDIN_H_INCLUDED
#define STANDIN_H_INCLUDED

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Destroys everything: pending stream work is discarded (never run),
   hanging collectives are released, streams, events, graphs, graph execs,
   communicators and allocations are freed (destroyed handles too), the
   violations, call counts, pending fault injections and settings go back
   to their defaults. The calling thread's last CUDA error, current device
   and NCCL group depth are cleared (other threads' are not). Call it
   between tests, when no other thread is inside a stand-in call. If work
   was still pending or running, the list of violations afterwards holds
   one entry that says so (so `standin_reset(); CHECK(standin_violation_count()
   == 0)` also checks that a test left nothing running). */
void standin_reset(void);

/* The k-th call (1-based, counted from now) of the function named `name`
   ("cudaMalloc", "ncclAllReduce", ...), or of any stand-in function
   returning a cudaError_t or ncclResult_t when name is NULL, returns
   error_code (a cudaError_t for CUDA functions, an ncclResult_t for NCCL
   ones) without doing anything. Several injections may be pending at once.
   An unknown name is recorded as a violation. */
void standin_fail_call(const char* name, int k, int error_code);

/* Calls of the function named `name` since the last reset (all stand-in
   calls when name is NULL), failed ones included. */
int standin_call_count(const char* name);

/* The violations of the rules in README.md detected since the last reset
   or clear, in the order they were found. standin_violation(i) returns a
   copy owned by the stand-in, valid until the next clear or reset; NULL
   when i is out of range. */
int standin_violation_count(void);
const char* standin_violation(int i);
void standin_clear_violations(void);

/* With on != 0, every NCCL collective or send/recv issued outside
   ncclGroupStart/ncclGroupEnd is a violation (it still runs). */
void standin_require_groups(int on);

/* The number of devices cudaGetDeviceCount reports, 1..64 (default 8).
   Call it before creating anything. */
void standin_set_device_count(int n);

/* The priority stream s was created with (clamped to the range
   cudaDeviceGetStreamPriorityRange reports, [-5, 0]); 0 for the default
   stream; INT_MIN for a handle that is not a stream. */
int standin_stream_priority(cudaStream_t s);

/* Streams, events, graphs, graph execs, communicators and allocations
   (cudaMalloc, cudaMallocHost) created and not yet destroyed or freed. */
int standin_live_handles(void);

/* How long a host-side wait may block before it gives up with a violation
   (default 10000 ms): cudaStreamSynchronize, cudaDeviceSynchronize,
   cudaEventSynchronize, cudaMemcpy, cudaFree (which return cudaErrorTimeout
   then), ncclCommInitRank, ncclCommSplit and ncclGroupEnd waiting for their
   peers (ncclSystemError), ncclCommFinalize and ncclCommDestroy waiting for
   the communicator's operations (ncclInvalidUsage). */
void standin_set_timeout_ms(int ms);

/* The (after_n + 1)-th communication operation (collective, send or recv)
   issued from now on each communicator of rank `rank` (-1: every rank) hangs
   when its stream reaches it, and that communicator's async error
   (ncclCommGetAsyncError) becomes `result`. Communicators created later
   count from their creation. The operation stays pending until the
   communicator is aborted. result ncclSuccess cancels the injections not
   yet hit (on that rank's communicators, or every rank's for -1, and on
   those created later). */
void standin_nccl_inject_async_error(int rank, int after_n, int result);

/* The blocking field of the ncclConfig_t a communicator was made with
   (ncclCommInitRankConfig; ncclCommSplit: its config's, or its parent's
   without one): 1, 0 or NCCL_CONFIG_UNDEF_INT; -2 when it was made without a
   config (ncclCommInitRank, ncclCommInitAll); -3 (and a violation) for a
   handle that is not a live communicator. comm is an ncclComm_t. */
int standin_nccl_comm_blocking(void* comm);

/* The nodes and dependency edges of a graph from cudaStreamEndCapture;
   -1 if g is not a live graph. */
int standin_graph_node_count(cudaGraph_t g);
int standin_graph_edge_count(cudaGraph_t g);

#ifdef __cplusplus
}
#endif

#endif /* STANDIN_H_INCLUDED */
