/* concerto.h - automatic communication scheduling for distributed training steps
   in plain C. Single header. The scheduler needs the C standard library
   alone; the runtime (backends, executor, the in-process world) needs POSIX
   threads and clocks.

   DO THIS in exactly one C or C++ file:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"

   and include "concerto.h" without the define everywhere else. Link with
   -pthread -lm, and compile that one file as gnu99/gnu11 (the compilers'
   default) or with #define _POSIX_C_SOURCE 200809L before its first
   #include. With CONCERTO_NO_RUNTIME (below) it is strict C99: no POSIX,
   no threads.

   WHAT IT DOES
   A training step is described as a graph of operations. Each operation has a
   duration and a demand on renewable resources: by default one of a few named
   streams (a compute stream and one or more communication streams, each of
   capacity 1), in general a demand vector over K resources with capacities,
   so that PSPLIB project-scheduling instances fit too. Dependencies are given
   explicitly or derived from the buffer regions each operation reads and
   writes. The scheduler solves the resulting resource-constrained project
   scheduling problem (RCPSP) for a short makespan (step time):

       cc_context* ctx;  cc_graph* g;  cc_schedule s;  cc_op op;
       cc_context_create(NULL, &ctx);
       cc_graph_create(ctx, NULL, &g);                 // streams "compute", "comm"
       cc_op_desc d = {0};                             // zero: every default
       d.name = "matmul"; d.duration_us = 120; d.stream = CC_STREAM_COMPUTE;
       ...  cc_graph_add_op(g, &d, &op);
       cc_sched_desc sd = {0};                         // zero: every default
       sd.time_limit_s = 2;                            // the common fields first; sd.tuning for the rest
       if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) puts(cc_last_error(ctx));
       ... s.start_us[i], s.order[], s.makespan_us, s.lower_bound_us ...
       cc_schedule_release(ctx, &s);
       cc_graph_destroy(g);  cc_context_destroy(ctx);

   cc_sched_solve_stats is the same solve that also fills a cc_sched_stats
   (schedules, nodes, windows, the exact solver's failures).

   THE PIPELINE:

       build graph -> profile -> decompose -> fuse -> schedule -> plan -> execute
                                                        (check, simulate)   (trace)

   A trainer builds the graph of its step (cc_graph_*), measures each op on
   its backend (cc_exec_profile_ops), lets the library rewrite the step
   (cc_graph_decompose splits a synchronous all-reduce, reduce-scatter or
   all-gather, with the ops that produce and consume its data and, a few
   ops further, theirs, into chunks that overlap; cc_graph_fuse
   merges small all-reduces into buckets; each rewrite judged by the
   scheduler), schedules it (cc_sched_solve), turns the schedule's order
   into per-stream sequences with the fewest cross-stream waits
   (cc_plan_create), and runs that plan every step (cc_exec_step).
   The file's sections do not follow the pipeline but dependency order:
   each section uses only those above it, so the scheduler comes before
   the rewrites that it judges, and the executor before the profiling that
   runs on it (CONTENTS below).

   Memory: a buffer is bound (the caller's, cc_graph_add_buffer) or
   transient (cc_graph_add_transient): alive from the op that first writes
   it to the last op that touches it. cc_sched_desc.memory_cap_bytes caps
   the transient bytes alive at once as a hard constraint in every method
   (cc_memory_check is the independent check of any timeline; the solve
   fails, naming the cap and the buffers at the peak, where nothing fits);
   the plan places transient buffers in one arena per rank.

   General RCPSP instances (a resource of capacity above 1, PSPLIB's) get
   more of the scheduler from concerto_rcpsp.h: lazy clause generation and
   restarts with a large-neighbourhood search, plugged in through
   cc_sched_desc.general (sd.general = cc_rcpsp_search()). Without it they
   are solved by branch and bound alone; a training step's streams never
   use it, so a build without it schedules every step the same.

   Collectives name a communicator of some family (the in-process world
   here; NCCL in concerto_nccl.h; MPI; or one's own through cc_comm_wrap)
   and run on a backend (the CPU one here; CUDA in concerto_cuda.h) whose
   kind of stream the family takes: the graph-building code is the same on
   all of them.

   OPTIONS (define before including)
       CONCERTO_STATIC          all functions static: embed a private copy per
                                translation unit (use with the implementation)
       CONCERTO_API             override the declaration prefix (default extern)
       CONCERTO_ASSERT(x)       the library's invariants, checked (default: not)
       CONCERTO_NO_RUNTIME      the scheduler alone: leaves out backends, the
                                executor and the world (their declarations
                                too), so no POSIX and no threads are needed
       CONCERTO_USE_LPSOLVE     compile in the lp_solve 5.5 ILP backend
                                (<lpsolve/lp_lib.h>; link -llpsolve55 -lcolamd
                                -lm -ldl); without it CC_EXACT_LPSOLVE fails
                                with CC_ERR_UNSUPPORTED

   Descs: every create and solve takes a desc in which zero means "the
   default" (a NULL desc: all defaults): start from `cc_graph_desc d = {0};`
   (`{}` in C++) and set what you need. cc_*_query_defaults says what a desc
   resolves to. The exceptions say so where they are declared: a world's
   n_ranks must be set (a NULL world desc is one rank).

   Errors: every function that can fail returns a cc_result (0 = CC_OK,
   negative ranges per area) and records a message naming the operation,
   buffer or input line at fault in its context: cc_last_error(ctx). A
   graph belongs to the context it was made in; functions that take both
   refuse a graph of another context. Op and buffer handles carry their
   graph: a handle of another graph is refused, naming both. The library
   never exits, aborts or prints; an optional logger receives the messages.
   All memory goes through the context's allocator.

   Time: durations are given in microseconds (double), rounded to the
   nearest nanosecond and scheduled on that integer grid, so schedules are
   exact and the same on every machine. Time limits, timeouts and
   timestamps use one clock, the monotonic clock (processor time in a
   CONCERTO_NO_RUNTIME build).

   Determinism: a solve depends only on the graph and the desc. Budgets are
   counted in schedules generated and search nodes, never in time, unless a
   time limit is set explicitly (then the result may depend on machine load).

   CONTENTS (grep for the markers), every section in file order
       >>api          public declarations, in the same order
       >>core         context, allocation, errors; the clock, hashes, string
                      pool, element sizes, byte ranges, heap, topological
                      order, time ticks
       >>graph        operations, buffers, handles, derived dependencies,
                      validation
       >>prob         the problem form the solvers share, its bounds, the
                      stream simulation of an issue order
       >>sgs          list scheduling: resource profiles, serial and parallel
                      schedule generation, priority rules
       >>improve      forward-backward justification, sampling and a genetic
                      algorithm
       >>bnb          exact branch and bound (lazy clause generation and the
                      restarts are concerto_rcpsp.h's)
       >>lpsolve      the optional lp_solve ILP backend
       >>exact        one exact solve: branch and bound, lp_solve or both
       >>oddeven      odd-even windows for large graphs
       >>sched        cc_sched_solve: defaults, the methods, the result
       >>check        the independent schedule checker
       >>sim          cc_simulate
       >>cluster      the cluster cost model: presets, collectives' algorithms on
                      intra- and inter-node links, the compute roofline
       >>psplib       PSPLIB .sm reader and writer
       >>rewrite      the collective cost model; copy ops (>>copy); decomposition,
                      then fusion
       >>plan         per-stream sequences and the fewest cross-stream waits
       >>exec         running a plan every step through a backend, agreement
       >>profile      measuring every op alone or in whole steps, the ranks' maximum
       >>world        ranks as threads, communicators, collectives, the link
                      emulation
       >>backend_cpu  the CPU backend: a worker thread per stream
       >>trace        Chrome trace JSON, Graphviz DOT

   RUNNING A STEP (the CPU backend on the in-process world)
       cc_world_create(ctx, &wd, &world);  cc_world_run(world, rank_main, arg);
       // in rank_main(cc_rank* rank, void* arg), on every rank:
       cc_cpu_backend_create(rank, &be);
       cc_plan_create(ctx, graph, schedule.order, &plan);   // or NULL: program order
       cc_exec_create(ctx, plan, &be, &exec);
       cc_exec_agree(exec, cc_rank_world_comm(rank));       // same plan everywhere?
       cc_exec_profile_ops(exec, 5, comm);                  // optional: measured durations
       for (;;) cc_exec_step(exec);
       cc_exec_destroy(exec);  cc_backend_destroy(&be);
   Profiling has one call per way: cc_exec_profile_ops (each op alone),
   cc_exec_profile_steps (ops in place over steps the library runs),
   cc_exec_profile_loop_step after each step of your own loop, then
   cc_exec_profile_loop_apply; cc_exec_query_profile reads what the last
   profile of steps predicts.
   A process that is one rank of a job (mpirun) makes its backend with
   cc_cpu_backend_create_ctx(ctx, &be) and its communicators with
   concerto_mpi.h; the rest is the same.
   With the rewrites: profile the graph (a program-order plan will do: it
   also measures what a chunk of each decomposable op costs), then
       cc_graph_decompose(ctx, graph, &rd, &g2, NULL);      // new graphs, the
       cc_graph_fuse(ctx, g2, &rd, &g3, NULL);              // input unchanged
   with rd.sched the desc the step is scheduled with, and schedule, plan
   and run g3 as above.
*/
#ifndef CONCERTO_H_INCLUDED
#define CONCERTO_H_INCLUDED
/* >>api */
#include <stddef.h>
#include <stdint.h>

#ifndef CONCERTO_API
#  ifdef CONCERTO_STATIC
#    if defined(__GNUC__) || defined(__clang__)
#      define CONCERTO_API static __attribute__((unused))
#    else
#      define CONCERTO_API static
#    endif
#  else
#    define CONCERTO_API extern
#  endif
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- results ------------------------------------------------------------
   0 is success; general errors are -1..-99, graph -100.., scheduler -200..,
   files and parsing -300.., backends and collectives -400.. .
   cc_result_description() gives the text. */
#define CONCERTO__RESULTS(X) \
    X(CC_OK,                     0,    "success") \
    X(CC_ERR_INVALID_ARG,       -1,    "invalid argument") \
    X(CC_ERR_OUT_OF_MEMORY,     -2,    "out of memory") \
    X(CC_ERR_UNSUPPORTED,       -3,    "not supported") \
    X(CC_ERR_CYCLE,           -100,    "dependency cycle") \
    X(CC_ERR_BAD_DURATION,    -101,    "duration negative, NaN or infinite") \
    X(CC_ERR_CAPACITY,        -102,    "demand above resource capacity") \
    X(CC_ERR_UNKNOWN_BUFFER,  -103,    "unknown buffer") \
    X(CC_ERR_REGION,          -104,    "region outside its buffer") \
    X(CC_ERR_UNKNOWN_OP,      -105,    "unknown operation") \
    X(CC_ERR_UNKNOWN_RESOURCE,-106,    "unknown resource or stream") \
    X(CC_ERR_INVALID_SCHEDULE,-200,    "schedule violates precedence or capacity") \
    X(CC_ERR_DEADLOCK,        -201,    "issue order deadlocks the streams") \
    X(CC_ERR_INFEASIBLE,      -202,    "no feasible schedule") \
    X(CC_ERR_BACKEND,         -400,    "backend failure") \
    X(CC_ERR_COLL_MISMATCH,   -401,    "ranks issued different collectives") \
    X(CC_ERR_TIMEOUT,         -402,    "timed out") \
    X(CC_ERR_PLAN_MISMATCH,   -403,    "plans differ across ranks") \
    X(CC_ERR_UNDECLARED_WRITE,-404,    "an op wrote outside the regions it declares") \
    X(CC_ERR_IO,              -300,    "file could not be read or written") \
    X(CC_ERR_PARSE,           -301,    "malformed input")

typedef enum cc_result {
#define CONCERTO__RESULT_ENUM(name, value, text) name = value,
    CONCERTO__RESULTS(CONCERTO__RESULT_ENUM)
#undef CONCERTO__RESULT_ENUM
    CC__RESULT_FORCE_INT = -0x7fffffff
} cc_result;

CONCERTO_API const char* cc_result_description(cc_result result);

/* ---- context ------------------------------------------------------------
   One context per rank; there is no global state. The allocator and the
   logger are optional; the allocator's three functions are all-or-none. */
typedef struct cc_context cc_context;

typedef struct cc_allocator {
    void* (*alloc_fn)(size_t n_bytes, void* user_data);
    void* (*realloc_fn)(void* ptr, size_t n_bytes, void* user_data);
    void  (*free_fn)(void* ptr, void* user_data);
    void* user_data;
} cc_allocator;

typedef enum cc_log_level { CC_LOG_ERROR = 1, CC_LOG_WARN = 2, CC_LOG_INFO = 3 } cc_log_level;

typedef struct cc_logger {
    void (*log_fn)(cc_log_level level, const char* message, void* user_data);
    void* user_data;
} cc_logger;

typedef struct cc_context_desc {
    cc_allocator allocator;   /* zero: the C library's malloc/realloc/free */
    cc_logger logger;         /* zero: messages are only recorded */
    int rank;                 /* shown in messages */
} cc_context_desc;

/* The desc as cc_context_create resolves it (NULL: every field zero): the
   C library's allocator where none is set. Nothing is checked (an
   allocator set in part stays as it is, and cc_context_create refuses it). */
CONCERTO_API cc_context_desc cc_context_query_defaults(const cc_context_desc* desc);
/* desc may be NULL for the defaults. *out is owned by the caller. */
CONCERTO_API cc_result   cc_context_create(const cc_context_desc* desc, cc_context** out);
CONCERTO_API void        cc_context_destroy(cc_context* ctx);
/* The message of the last failure in this context ("" if none). Borrowed,
   valid until the next failing call on the context. */
CONCERTO_API const char* cc_last_error(const cc_context* ctx);
CONCERTO_API cc_result   cc_last_result(const cc_context* ctx);
CONCERTO_API void        cc_clear_error(cc_context* ctx);

/* ---- graph --------------------------------------------------------------
   Handles are typed: id (1 + the index; 0 is invalid) and the serial of the
   graph that made them. Every function refuses a handle of another graph
   (an op of the input given to the output of a rewrite, say) with a
   message naming both graphs, and the getters answer as for an invalid
   handle. Take handles from the library (cc_graph_add_op,
   cc_graph_add_buffer, cc_graph_op), never build them. */
typedef struct cc_graph cc_graph;
typedef struct cc_op { uint32_t id; uint32_t graph; } cc_op;
typedef struct cc_buffer { uint32_t id; uint32_t graph; } cc_buffer;

/* Bytes of a buffer an op reads or writes. Start from zero (cc_region r =
   {0}, or memset) and set what you need: every field has a meaning at 0. */
typedef struct cc_region {
    cc_buffer buffer;
    uint64_t offset_bytes;
    uint64_t n_bytes;
    uint64_t split_rows;      /* decomposition: 0 = every chunk of the op uses the region whole;
                                 R > 0 = the region is R equal rows and chunk i of n uses
                                 rows [i*R/n, (i+1)*R/n) (R must divide by n, n_bytes by R; in
                                 the strided form R must divide n_rows) */
    uint64_t n_rows;          /* the strided (2-D) form: 0 = the n_bytes bytes at offset_bytes; R >= 1 =
                                 R rows of n_bytes bytes each, row r at offset_bytes + r * stride_bytes
                                 (a block of columns of a row-major matrix). Dependencies, the checked
                                 step and the plan follow its bytes exactly, not its bounding range.
                                 A collective's regions must be contiguous (n_rows 0 or 1). */
    uint64_t stride_bytes;    /* strided, n_rows >= 2: from one row's start to the next's, >= n_bytes */
} cc_region;

enum {
    CC_STREAM_COMPUTE = 0,   /* the default stream of an operation */
    CC_STREAM_COMM = 1,      /* first communication stream */
    CC_NO_STREAM = -1        /* the operation uses no resource */
};

#define CONCERTO_MAX_RESOURCES 64

typedef struct cc_graph_desc {
    const char* name;                 /* copied; NULL: "graph<N>", the context's N-th graph */
    /* Stream mode (n_resources == 0): n_streams streams of capacity 1;
       stream 0 is "compute", the others "comm", "comm1", ... (0: 2). */
    int n_streams;
    const char* const* stream_names;  /* optional, n_streams entries */
    /* General mode (n_resources > 0): K renewable resources. */
    int n_resources;
    const int* capacities;            /* [n_resources], each >= 0 */
    const char* const* resource_names;/* optional */
} cc_graph_desc;

/* ---- collectives --------------------------------------------------------
   What a communication op does. Counts are elements, never bytes:
     ALL_REDUCE      n_elems in send_buf on every rank -> n_elems in recv_buf
     REDUCE_SCATTER  n_elems * size in send_buf -> this rank's n_elems block
     ALL_GATHER      n_elems in send_buf -> n_elems * size in recv_buf (rank order)
     BROADCAST       n_elems from the root's send_buf -> every recv_buf
     SEND / RECV     n_elems to / from rank peer (of the communicator)
     ALL_TO_ALL      block j (n_elems) of send_buf goes to rank j, which puts it
                     in block i of its recv_buf (i = the sender)
   send_buf == recv_buf is allowed (in place) for ALL_REDUCE and BROADCAST. */
typedef struct cc_comm cc_comm;

typedef enum cc_coll_kind {
    CC_COLL_NONE = 0, CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER,
    CC_COLL_BROADCAST, CC_COLL_SEND, CC_COLL_RECV, CC_COLL_ALL_TO_ALL
} cc_coll_kind;
/* FLOAT16 is IEEE binary16, BFLOAT16 the top half of a float32; both are
   held as uint16_t bit patterns on the host. */
typedef enum cc_dtype {
    CC_DTYPE_FLOAT32 = 0, CC_DTYPE_FLOAT64, CC_DTYPE_INT32, CC_DTYPE_FLOAT16, CC_DTYPE_BFLOAT16
} cc_dtype;
#define CONCERTO_DTYPE_COUNT 5
typedef enum cc_reduce_op { CC_REDUCE_SUM = 0, CC_REDUCE_AVG, CC_REDUCE_MAX } cc_reduce_op;

typedef struct cc_collective {
    cc_coll_kind kind;
    cc_dtype dtype;
    cc_reduce_op reduce;
    size_t n_elems;
    int peer;                  /* BROADCAST: root; SEND: destination; RECV: source */
    cc_comm* comm;             /* this rank's communicator */
    const void* send_buf;
    void* recv_buf;
} cc_collective;

/* ---- communicators ---------------------------------------------------------
   A communicator is one rank's handle on a group of ranks. A family of
   communicators makes it: the in-process world's (cc_rank_world_comm,
   cc_comm_create), NCCL's (concerto_nccl.h), MPI's, or your own
   (cc_comm_wrap). The graph, the cost model and the executor see only its
   rank, size, name and family; its collectives run through the family's
   table, on a stream of the backend that runs the plan, and a backend runs
   only communicators whose stream kind is its own (cc_backend_fns.stream_kind),
   so the same graph-building code serves every family. */
typedef struct cc_comm_fns {
    const char* family;        /* "world", "nccl", "mpi", ...: named in messages */
    /* The streams collective() takes: "host" (a host thread; the collective
       runs on the calling thread and returns when done) or "cuda" (a
       cudaStream_t: it is enqueued there). */
    const char* stream_kind;
    /* Runs coll (coll->comm is this communicator) on native_stream, or, with
       native_stream NULL, at once on the calling thread, returning when it is
       done. On failure it writes a message into msg. Required. */
    cc_result (*collective)(void* self, void* native_stream, const cc_collective* coll, char* msg, size_t msg_size);
    /* A communicator of the members that give the same color, ordered by key
       and then by rank; every member calls it; color < 0: *out NULL. Optional
       (cc_comm_split fails with CC_ERR_UNSUPPORTED). */
    cc_result (*split)(void* self, int color, int key, cc_comm** out);
    /* Frees self (cc_comm_destroy of a wrapped communicator). Optional. */
    void (*destroy)(void* self);
    /* Optional, for families whose collectives complete asynchronously (a
       backend waiting for a step calls them): poll returns CC_OK or the
       communicator's asynchronous error (message in msg); abort tears the
       communicator down so that collectives waiting on it, on every member,
       fail, and every later one fails with why. */
    cc_result (*poll)(void* self, char* msg, size_t msg_size);
    void (*abort)(void* self, const char* why);
} cc_comm_fns;

/* A communicator of your own family: rank in 0..size-1; name copied (NULL:
   "comm"); errors of cc_comm_run and cc_comm_split on it go to ctx. fns is
   borrowed and must outlive it; cc_comm_destroy calls fns->destroy(self). */
CONCERTO_API cc_result   cc_comm_wrap(cc_context* ctx, const cc_comm_fns* fns, void* self, int rank, int size,
                                      const char* name, cc_comm** out);
/* Destroys a communicator made by cc_comm_wrap or by a family that hands
   ownership to the caller (NCCL's, cc_comm_split of one). Communicators of
   the in-process world belong to the world and are left alone. NULL is allowed. */
CONCERTO_API void        cc_comm_destroy(cc_comm* comm);
/* This rank's index in the communicator and its size; -1 and 0 for NULL. */
CONCERTO_API int         cc_comm_rank(const cc_comm* comm);
CONCERTO_API int         cc_comm_size(const cc_comm* comm);
CONCERTO_API const char* cc_comm_name(const cc_comm* comm);     /* "" for NULL */
CONCERTO_API const char* cc_comm_family(const cc_comm* comm);   /* fns->family; "" for NULL */
/* The family's own object if comm belongs to the family of fns, else NULL. */
CONCERTO_API void*       cc_comm_self(const cc_comm* comm, const cc_comm_fns* fns);
/* Splits comm (every member calls it): see cc_comm_fns.split. The new
   communicator belongs to the same family; destroy it with cc_comm_destroy. */
CONCERTO_API cc_result   cc_comm_split(cc_comm* comm, int color, int key, cc_comm** out);
/* Runs a collective now, on the calling thread, blocking (coll->comm's
   family on no stream). Errors are recorded in the communicator's context. */
CONCERTO_API cc_result   cc_comm_run(const cc_collective* coll);

/* Work of a compute op. The CPU backend calls it on the op's stream thread
   with its stream handle; the CUDA backend calls it on the host to enqueue
   work on the cudaStream_t it gets. */
typedef void (*cc_op_fn)(void* stream, void* user_data);
/* The work of one chunk of a decomposed compute op (see cc_graph_decompose). */
typedef void (*cc_op_chunk_fn)(void* stream, void* user_data, int chunk, int n_chunks);

/* ---- split rules ------------------------------------------------------------
   How a compute op splits into chunks that together do its work, for
   decomposition. An op's rule (cc_op_desc.split) names the axes it may be
   split along and their lengths. Chunk i of n along an axis of length E
   covers [i*E/n, (i+1)*E/n): chunks are uneven where n does not divide E,
   and n may not exceed E. For each chunk the rule gives the op's regions:
   a region that follows the axis is cut, one that does not is used whole
   by every chunk, and a partial-sum output is written by every chunk
   (chunk 0 overwrites it, later chunks add into it, in chunk order; a
   decomposition beside a reduce-scatter or all-gather runs chunk 0 first
   and the others in its own order, see cc_graph_decompose).

   Exactness: a split whose every output follows the axis (rows, columns,
   heads) computes each output element as the whole op does, so its results
   are bit-identical. A split with a partial-sum output (a matmul's
   reduction dimension) changes the order of that sum: its results match
   within rounding (about K * 2^-24 relative for a float sum of K terms).
   cc_split_exact tells which a split is. */
typedef enum cc_axis {
    CC_AXIS_ROWS = 0,      /* rows of the outputs (a matmul's M, attention's query rows) */
    CC_AXIS_COLS,          /* columns of a matmul's output (N) */
    CC_AXIS_REDUCE,        /* a matmul's reduction dimension (K): partial sums */
    CC_AXIS_HEADS,         /* attention heads */
    CC_AXIS_COUNT
} cc_axis;

typedef enum cc_split_kind {
    CC_SPLIT_NONE = 0,     /* the op does not split */
    CC_SPLIT_ROWWISE,      /* row by row (elementwise, a layer norm, a softmax over rows): a region with split_rows
                              R > 0 is R rows (R a multiple of extent[ROWS]) and follows ROWS; the others are whole */
    CC_SPLIT_MATMUL,       /* C = A B, row-major, each region contiguous or strided with n_rows its rows:
                              reads[0] A (M x K), reads[1] B (K x N), writes[0] C (M x N); further reads whole, no
                              further writes. extent[ROWS] = M: rows of A and C, B whole; extent[COLS] = N: columns
                              of B and C, A whole; extent[REDUCE] = K: columns of A and rows of B, C a partial sum */
    CC_SPLIT_ATTENTION,    /* reads[0..2] Q, K, V and writes[0] O, each rows x (H heads x head columns), K and V
                              with Q's rows unless strided; further reads whole, no further writes.
                              extent[HEADS] = H: head h's columns of all four; extent[ROWS]: query rows of Q and O,
                              K and V whole (a causal chunk reads only a prefix of them: whole is a superset) */
    CC_SPLIT_USER          /* fn gives each chunk's regions */
} cc_split_kind;

/* One chunk of a split: which axis, which chunk of how many, and its part
   [begin, end) of the axis's extent. */
typedef struct cc_split_chunk {
    cc_axis axis;
    int index, count;
    uint64_t begin, end;
} cc_split_chunk;

/* A rule of your own: reads[0..n_reads) and writes[0..n_writes) hold the
   op's regions; rewrite them to the chunk's, and set partial[w] = 1 for a
   write every chunk adds into (it must then be the op's whole region).
   Return 0, or non-zero to refuse the chunk (the library says so, naming
   the op and the rule). The library checks what it returns (see
   cc_op_split_check). */
typedef int (*cc_split_fn)(void* user_data, const cc_split_chunk* chunk, cc_region* reads, int n_reads,
                           cc_region* writes, int n_writes, int* partial);

typedef struct cc_split {
    cc_split_kind kind;
    uint64_t extent[CC_AXIS_COUNT];  /* the length of each axis; the kinds above say which they need */
    unsigned axes;                   /* the axes the op allows, bit (1u << axis) each; 0: every axis of its kind
                                        (CC_SPLIT_USER: every axis with a non-zero extent) */
    cc_split_fn fn;                  /* CC_SPLIT_USER */
    void* user_data;                 /* for fn */
    const char* name;                /* the rule's name in messages (copied; NULL: "rowwise", "matmul", "attention",
                                        "user") */
} cc_split;

/* The work of one chunk of a split op: its axis, index and part. */
typedef void (*cc_op_part_fn)(void* stream, void* user_data, const cc_split_chunk* chunk);

/* What a chunk of a decomposable op costs: t(n) = a_us + b_us * n, for a
   chunk whose share of its axis is n (0 < n <= 1: its part of the extent,
   end - begin over E; 1/k for each of k chunks of a chunk_fn op), so a_us is the
   fixed cost of any chunk (a launch, a smaller and less efficient kernel)
   and b_us the work that scales with the chunk. cc_exec_profile_ops fits it
   (see >>profile); cc_op_set_chunk_cost sets it. Decomposition gives chunk
   n of an op whose duration is d the duration d * t(n) / t(1): t(n) itself
   after cc_exec_profile_ops (whose t(1) is the op's measured duration); a
   duration measured or set otherwise keeps the fit's proportions, so the k
   chunks of an op never add up to less than the op (d (k a + b) / (a + b)).
   An op without one (or with a_us = 0) gives each chunk its share of d. */
typedef struct cc_chunk_cost {
    double a_us;               /* >= 0 and finite */
    double b_us;               /* >= 0 and finite: the part that scales, for all of the axis (n = 1) */
} cc_chunk_cost;

typedef struct cc_op_desc {
    const char* name;          /* copied; NULL gives "op<index>" */
    double duration_us;        /* >= 0 and finite */
    int stream;                /* resource index with demand 1, or CC_NO_STREAM */
    const int* demands;        /* optional: demand on every resource (overrides stream) */
    const cc_region* reads;  int n_reads;
    const cc_region* writes; int n_writes;
    const cc_op* deps;       int n_deps;   /* must run after these */
    void* user_data;
    cc_op_fn fn;               /* compute work, called with user_data (optional) */
    const cc_collective* coll; /* a communication op: the collective (copied); a NULL send_buf (recv_buf) is
                                  its first read (write) region, resolved by cc_exec_create */
    cc_op_chunk_fn chunk_fn;  /* optional: the work of chunk `chunk` of `n_chunks`; makes a compute op
                                 decomposable. fn is still required (the whole op). Chunks of one op run in
                                 order 0..n-1 (beside a reduce-scatter or all-gather: chunk 0 first, then in
                                 the order cc_graph_decompose gives); a chunk that writes a region with split_rows 0 (e.g. a weight
                                 gradient summed over rows) must overwrite it in chunk 0 and accumulate after. */
    const cc_split* split;     /* optional: how the op splits (copied; see split rules). Needs fn and part_fn */
    cc_op_part_fn part_fn;     /* the work of one chunk of a split, told its axis and part */
    const cc_chunk_cost* chunk_cost;   /* optional (copied): what a chunk costs; only for an op with chunk_fn, or a
                                          split rule and part_fn (see cc_op_set_chunk_cost) */
} cc_op_desc;

/* The desc as cc_graph_create resolves it (NULL: every field zero). */
CONCERTO_API cc_graph_desc cc_graph_query_defaults(const cc_graph_desc* desc);

/* desc may be NULL (two streams). The graph is an arena freed in one call;
   it belongs to ctx: functions that take a context and a graph refuse a
   graph of another context. */
CONCERTO_API cc_result cc_graph_create(cc_context* ctx, const cc_graph_desc* desc, cc_graph** out);
CONCERTO_API void      cc_graph_destroy(cc_graph* graph);
CONCERTO_API cc_context* cc_graph_context(const cc_graph* graph);
CONCERTO_API const char* cc_graph_name(const cc_graph* graph);      /* borrowed */
/* A buffer is bound or transient. A bound buffer (cc_graph_add_buffer) is
   the caller's memory, alive for the whole step; the library knows its
   name and size. A transient buffer (cc_graph_add_transient) is memory
   the library places: it is allocated at the start of the op that first
   accesses it (which must write it) and freed at the end of the last op
   that accesses it, so it is alive from the one to the other in any
   schedule. Its bytes count against cc_sched_desc.memory_cap_bytes, and
   an executor places it in one arena per rank at an offset its plan fixes
   (cc_exec_buffer_ptr). Validation adds a dependency from its first
   writer to every other op that accesses it, and refuses, naming the
   buffer, one first accessed by a read or never read. Name copied (NULL:
   "buffer<N>"); a transient buffer must have n_bytes >= 1. */
CONCERTO_API cc_result cc_graph_add_buffer(cc_graph* graph, const char* name, uint64_t n_bytes, cc_buffer* out);
CONCERTO_API cc_result cc_graph_add_transient(cc_graph* graph, const char* name, uint64_t n_bytes, cc_buffer* out);
CONCERTO_API int         cc_graph_n_buffers(const cc_graph* graph);
CONCERTO_API cc_buffer   cc_graph_buffer(const cc_graph* graph, int index);          /* index 0..n-1 */
CONCERTO_API int         cc_buffer_index(const cc_graph* graph, cc_buffer buffer);   /* -1 if invalid */
CONCERTO_API const char* cc_buffer_name(const cc_graph* graph, cc_buffer buffer);    /* borrowed; "" if invalid */
CONCERTO_API uint64_t    cc_buffer_bytes(const cc_graph* graph, cc_buffer buffer);   /* 0 if invalid */
CONCERTO_API int         cc_buffer_transient(const cc_graph* graph, cc_buffer buffer); /* 1 transient, 0 bound or invalid */
/* Program order is the order of cc_graph_add_op calls: region dependencies
   (read-after-write, write-after-read, write-after-write) follow it. */
CONCERTO_API cc_result cc_graph_add_op(cc_graph* graph, const cc_op_desc* desc, cc_op* out);
CONCERTO_API cc_result cc_graph_add_dep(cc_graph* graph, cc_op before, cc_op after);
CONCERTO_API cc_result cc_op_set_duration(cc_graph* graph, cc_op op, double duration_us);
/* Sets what a chunk of op costs, t(n) = a_us + b_us * n (see cc_chunk_cost),
   for an op measured otherwise than by cc_exec_profile_ops (your own
   timers, cc_exec_profile_steps' timeline of a decomposed step). Kept per
   op and copied by the rewrites with the op (its chunks have none).
   Errors, changing nothing: CC_ERR_UNKNOWN_OP; CC_ERR_INVALID_ARG naming
   the op for a_us or b_us negative, NaN, infinite or above 1e12, and for
   an op that does not decompose (a collective, whose chunks the cost model
   of a resized collective prices, or a compute op with neither chunk_fn
   nor a split rule with part_fn). Cost: O(1). */
CONCERTO_API cc_result cc_op_set_chunk_cost(cc_graph* graph, cc_op op, double a_us, double b_us);
/* 1 and *out (NULL allowed) the op's chunk cost if it has one (measured or
   set); 0 and *out untouched if not, or for an invalid op. */
CONCERTO_API int       cc_op_chunk_cost(const cc_graph* graph, cc_op op, cc_chunk_cost* out);
/* What running a step costs on an executor besides its ops' own time:
   - launch_us: per op, on its stream, from the end of the op before to
     its start (the executor's and the backend's own work: a queue, a
     thread picking it up, a kernel launch);
   - wait_us: a cross-stream wait that blocks, from the event's record on
     one stream to the waiting stream's next op (a thread's wake-up on the
     CPU backend; cudaStreamWaitEvent on a GPU).
   The stream simulation (cc_simulate, the schedule of a stream graph, and
   with it every judgement of a rewrite) adds launch_us to every op and
   wait_us to every op whose start is set by a dependency on another
   stream that ends after the op's own stream is free; so a plan with more
   waits is predicted slower; and it stretches the overlapped part of an op
   by its class's overlap slowdown. cc_exec_profile_ops measures them all on
   its backend and sets them; a rewrite copies them. Zero by default; NULL
   costs: zero; launch and wait must be 0..1e6 us, the slowdowns 0..10. */
typedef struct cc_exec_costs {
    double launch_us;
    double wait_us;
    /* Slowdowns of ops that overlap ops of the other class (compute beside
       communication): a compute op runs compute_overlap times as long for
       the part of it that overlaps a collective, and a collective
       comm_overlap times for the part that overlaps compute (the paper's
       alpha on a GPU, where both share the SMs; on the CPU backend, ranks'
       threads sharing the cores). 0 or 1: none; at most 10. */
    double compute_overlap, comm_overlap;
} cc_exec_costs;
CONCERTO_API cc_result     cc_graph_set_exec_costs(cc_graph* graph, const cc_exec_costs* costs);
CONCERTO_API cc_exec_costs cc_graph_exec_costs(const cc_graph* graph);   /* zero for NULL */
/* A collective's fixed cost on a communicator: the time of a one-element
   all-reduce on it, whatever the link's latency, the rendezvous of the
   ranks and the backend add (cc_exec_profile_ops measures it for every
   communicator of the plan). The rewrites' cost of a resized collective
   starts from it: a chunk of a collective costs this plus its share of
   the rest, so splitting a collective into k is never predicted free. Any
   number of communicators per graph (the table grows through the context's
   allocator: CC_ERR_OUT_OF_MEMORY, changing nothing, where it cannot);
   copied by the rewrites. us >= 0 and finite. */
CONCERTO_API cc_result cc_graph_set_coll_startup(cc_graph* graph, const cc_comm* comm, double us);
CONCERTO_API double    cc_graph_coll_startup(const cc_graph* graph, const cc_comm* comm);   /* -1: not set */
/* Derives region dependencies and checks the graph (cycles name the
   operations on them). Solvers call it themselves; it is cheap when nothing
   changed. */
CONCERTO_API cc_result cc_graph_validate(cc_graph* graph);

CONCERTO_API int         cc_graph_n_ops(const cc_graph* graph);
CONCERTO_API int         cc_graph_n_resources(const cc_graph* graph);
CONCERTO_API int         cc_graph_capacity(const cc_graph* graph, int resource);
CONCERTO_API const char* cc_graph_resource_name(const cc_graph* graph, int resource);
CONCERTO_API cc_op       cc_graph_op(const cc_graph* graph, int index);  /* index 0..n-1 */
CONCERTO_API int         cc_op_index(const cc_graph* graph, cc_op op);   /* -1 if invalid */
CONCERTO_API const char* cc_op_name(const cc_graph* graph, cc_op op);    /* borrowed */
CONCERTO_API double      cc_op_duration_us(const cc_graph* graph, cc_op op);
CONCERTO_API int         cc_op_demand(const cc_graph* graph, cc_op op, int resource);
CONCERTO_API void*       cc_op_user_data(const cc_graph* graph, cc_op op);
/* The op's collective (borrowed, valid while the graph lives), or NULL for a
   compute op and an invalid op. */
CONCERTO_API const cc_collective* cc_op_collective(const cc_graph* graph, cc_op op);
/* The bytes of the regions the op reads (writes == 0) or writes (writes != 0),
   summed (overlaps counted twice); 0 for an invalid op. Scans the graph's
   accesses: linear in their number. */
CONCERTO_API uint64_t    cc_op_bytes(const cc_graph* graph, cc_op op, int writes);
/* Direct predecessors (explicit and derived) after a successful validate.
   Returns their number; writes at most max of them. */
CONCERTO_API int         cc_op_preds(const cc_graph* graph, cc_op op, cc_op* out, int max);
/* Op op's regions in chunk `index` of `count` along axis, by its split
   rule: reads and writes get as many regions as the op has (room for them
   is the caller's), partial[w] (NULL allowed) 1 for a partial-sum write.
   Errors (CC_ERR_INVALID_ARG, or CC_ERR_REGION for a region the rule gets
   wrong, naming the op and the rule): no rule, an axis the op does not
   allow, count < 1 or above the axis's extent, index outside 0..count-1,
   a region that does not have the shape the rule needs, a user rule that
   refuses or returns a region outside its buffer or of another buffer.
   The graph is never changed. Cost: O(regions) (a user rule's own). */
CONCERTO_API cc_result cc_op_split_regions(cc_graph* graph, cc_op op, cc_axis axis, int index, int count,
                                           cc_region* reads, cc_region* writes, int* partial);
/* Checks every chunk of op along axis into count by cc_op_split_regions,
   and that together they are the op: each region either the same in every
   chunk (a read used whole, or a partial-sum write) or cut so that the
   chunks' parts lie inside it, meet nowhere and cover it, and a write
   that is the same in every chunk is a partial sum. *exact (NULL allowed)
   is 1 if no write is a partial sum. Errors name the op, the rule, the
   chunk and the region. Cost: O(count * regions * rows log rows). */
CONCERTO_API cc_result cc_op_split_check(cc_graph* graph, cc_op op, cc_axis axis, int count, int* exact);
/* The name of an axis ("rows", "columns", "reduction", "heads"); "?" if unknown. */
CONCERTO_API const char* cc_axis_name(cc_axis axis);

/* ---- scheduler ----------------------------------------------------------*/
typedef enum cc_sched_method {
    CC_SCHED_AUTO = 0,    /* up to 200 ops: a short evolution (1000 schedules),
                             branch and bound, then the rest of the budget, and
                             where a resource is cumulative the restarts with
                             their neighbourhood searches (see tuning.restarts; they
                             need cc_sched_desc.general);
                             above: every priority rule once, each improved,
                             then odd-even windows */
    CC_SCHED_LIST,        /* one pass of the priority rule (+ improvement) */
    CC_SCHED_SAMPLING,    /* every rule, then biased random sampling and a genetic
                             algorithm on activity lists, all improved; on large
                             graphs every rule once, improved */
    CC_SCHED_BNB,         /* exact branch and bound within tuning.bnb_nodes */
    CC_SCHED_ODD_EVEN     /* a list schedule improved by odd-even windows */
} cc_sched_method;

typedef enum cc_sgs { CC_SGS_DEFAULT = 0, CC_SGS_SERIAL, CC_SGS_PARALLEL } cc_sgs;

typedef enum cc_priority {
    CC_PRIO_DEFAULT = 0,
    CC_PRIO_PROGRAM_ORDER,  /* order of cc_graph_add_op */
    CC_PRIO_LFT,            /* latest finish time */
    CC_PRIO_LST,            /* latest start time */
    CC_PRIO_MTS,            /* most total successors */
    CC_PRIO_GRPW,           /* greatest rank positional weight */
    CC_PRIO_BOTTOM_LEVEL,   /* longest path to the end */
    CC__PRIO_COUNT,         /* the single rules end here */
    CC_PRIO_ALL = 64        /* every rule once (LST aside: it orders as BOTTOM_LEVEL up to
                               ties), each improved, the best kept */
} cc_priority;

typedef enum cc_exact {
    CC_EXACT_DEFAULT = 0,     /* the built-in branch and bound */
    CC_EXACT_BNB,
    CC_EXACT_LPSOLVE,         /* lp_solve's ILP: needs CONCERTO_USE_LPSOLVE */
    CC_EXACT_BOTH             /* both from the same incumbent; the better wins */
} cc_exact;

/* An odd-even window the solve left unproven (cc_sched_tuning.on_window):
   its jobs, with every job outside it fixed. Times in microseconds, all
   multiples of grain_us where the graph's are; arrays borrowed, valid
   during the call. Jobs are numbered 0..n_jobs-1 in a topological order. */
typedef struct cc_sched_window {
    int n_jobs, n_resources;
    const int32_t* capacity;     /* [n_resources] */
    const double* duration_us;   /* [n_jobs] */
    const int32_t* demand;       /* [n_jobs * n_resources]: job i's on resource r at [i * n_resources + r] */
    const double* release_us;    /* [n_jobs] earliest start (from the fixed predecessors) */
    const double* deadline_us;   /* [n_jobs] latest end (from the fixed successors); < 0: none */
    const int* pred_off;         /* [n_jobs + 1]: job i's predecessors in the window are */
    const int* pred;             /*   pred[pred_off[i]] .. pred[pred_off[i + 1] - 1] */
    const double* start_us;      /* [n_jobs] the placement the solve keeps */
    int n_busy;                  /* the fixed jobs running in the window's span, as blocks: */
    const double* busy_start_us; /* [n_busy] from, */
    const double* busy_end_us;   /* [n_busy] to, */
    const int32_t* busy_demand;  /* [n_busy * n_resources] holding these units */
    double first_start_us;       /* the window's first start before its solve */
    double makespan_us;          /* the end of the placement's last job */
    double lower_bound_us;       /* the solve's proven bound on that end (< makespan_us) */
    double grain_us;             /* the step every duration of the graph is a multiple of */
} cc_sched_window;
typedef void (*cc_sched_window_fn)(const cc_sched_window* window, void* user_data);

/* For those who tune the solver: zero is the default of every field. */
typedef struct cc_sched_tuning {
    cc_sgs sgs;               /* schedule generation; 0: serial up to 5000 ops, parallel above */
    cc_priority priority;     /* the first schedules' rule; 0: CC_PRIO_ALL for ODD_EVEN, AUTO above
                                 200 ops and SAMPLING above 5000 ops, else CC_PRIO_LFT */
    int improve_passes;       /* forward-backward passes per schedule; 0: 2; < 0: none */
    int64_t budget_schedules; /* schedules generated by sampling (AUTO up to 200 ops: by each
                                 evolution of the restarts); 0: 10000 for AUTO up to 200 ops, else 5000 */
    int64_t bnb_nodes;        /* branch-and-bound work on a whole graph (lazy clause generation, where it
                                 runs, half as many conflicts); 0: 200000 nodes up to 32 ops, (32/n)^3 as
                                 many above; < 0: no exact search of the whole graph */
    int window_nodes;         /* branch-and-bound work per odd-even window; 0: 300 nodes */
    int window_max_ops;       /* > window_ops: after the rounds, rounds of ever larger blocks (1.5 and 4/3
                                 times in turn) up to this size, repeated while the schedule shortens;
                                 slower, better schedules; 0: none */
    int perturbations;        /* odd-even windows: restarts from the best schedule with its order
                                 perturbed, each kept where it ends no later; 0: none; at most 100000 */
    int window_prove;         /* 1: each window of unary streams alone that the search leaves unproven tries
                                 a bounded proof by shaving, which never changes the schedule; 0: only those
                                 of at most 128 ops in rounds of blocks above 64 ops do */
    int restarts;             /* AUTO up to 200 ops with a cumulative resource: evolutions from fresh
                                 populations, each with a neighbourhood search; 0: 10; < 0: one
                                 evolution and no neighbourhood search; at most 100000 */
    double lp_time_limit_s;   /* lp_solve, per model of a whole graph; 0: 10 s */
    double lp_window_time_limit_s;   /* lp_solve, per model of an odd-even window; 0: 1 s */
    int64_t lp_warm_nodes;    /* CC_EXACT_LPSOLVE on a whole graph: branch-and-bound nodes run first
                                 for an incumbent and a bound; 0: bnb_nodes / 4; < 0: none */
    /* Optional: called on the caller's thread with each window of more than
       16 jobs, of odd-even rounds of blocks above 64 ops, that the solve
       leaves unproven, in the order solved (a later window sees the
       placements of those before). It must not call the library on the
       solve's context. */
    cc_sched_window_fn on_window;
    void* on_window_user_data;
} cc_sched_tuning;

/* The search that serves general RCPSP instances alone (graphs with a
   resource that is not unary): lazy clause generation, and AUTO's restarts
   with their neighbourhood search. Opaque: concerto_rcpsp.h gives it
   (cc_rcpsp_search) for cc_sched_desc.general. */
typedef struct cc_sched_extension cc_sched_extension;
typedef struct cc_schedule cc_schedule;   /* a solve's result: below */

/* How cc_sched_solve schedules a graph. Zero is the default of every field
   (cc_sched_desc d = {0}; in C, {} in C++); cc_sched_query_defaults says
   what the zeros resolve to for a graph of a given size. */
typedef struct cc_sched_desc {
    cc_sched_method method;   /* 0: CC_SCHED_AUTO */
    double time_limit_s;      /* 0: none. A limit makes the schedule depend on the machine's speed
                                 (monotonic clock; processor time in a CONCERTO_NO_RUNTIME build) */
    uint64_t seed;            /* of the random choices; the same seed, the same schedule */
    cc_exact exact;           /* the exact solver of whole small graphs and of windows; 0: CC_EXACT_BNB */
    int threads;              /* threads for AUTO's restarts, the caller's among them (the allocator is then
                                 called from several at once); the same schedule on any number. 0 or 1: the
                                 caller's alone; at most 256; one with lp_solve or CONCERTO_NO_RUNTIME */
    int window_ops;           /* odd-even block size b (windows of 2b ops); 0: 8 */
    int rounds;               /* odd-even rounds; 0: 4; < 0: none */
    /* The most bytes of transient buffers alive at once (a hard limit, held
       at every instant: a buffer from its allocating op's start to its last
       user's end); 0: none. Every rank must give the same cap, as it gives
       the same durations. The solve runs first without the cap: where that
       schedule fits, it is the result; else it seeds the capped search, in
       which every method keeps only schedules that fit, repairing others
       by the serial scheme, and lp_solve and d.general (no memory
       resource) do not run (the stats say so).
       No schedule found that fits: CC_ERR_INFEASIBLE naming the cap, the
       smallest peak found and the buffers alive there. */
    uint64_t memory_cap_bytes;
    /* Optional: a schedule of this graph the solve starts from (a result
       of an earlier solve, say under a tighter cap): where it fits the cap
       the result is no later than it (where the stream simulation of the
       best order comes out later, start_from's own times are the result),
       so a falling cap solved from the tightest up gives step times that
       never grow as the cap rises.
       Checked with cc_schedule_check (CC_ERR_INVALID_ARG if it fails). */
    const cc_schedule* start_from;
    /* 1: solve a graph whose compute ops (ops that are not collectives) all
       last 0 us. 0: such a graph (one never profiled, say) is refused with
       CC_ERR_BAD_DURATION, as every order of it would tie at makespan 0 and
       the schedule would be arbitrary. Graphs with no compute op, or with
       some zero-duration ops beside others that last, are always solved. */
    int allow_zero_durations;
    const cc_sched_extension* general;   /* concerto_rcpsp.h's cc_rcpsp_search(): lazy clause generation and
                                 the restarts where a resource is not unary. NULL: neither (restarts and
                                 threads do nothing). Stream graphs (training steps) never use it */
    cc_sched_tuning tuning;
} cc_sched_desc;

/* What a solve did, for benchmarks and diagnosis (cc_sched_solve_stats). */
typedef struct cc_sched_stats {
    int64_t n_schedules;      /* schedules generated */
    int64_t n_nodes;          /* branch-and-bound nodes */
    int64_t n_conflicts;      /* conflicts of lazy clause generation */
    double solve_ms;          /* the solve's time, on the clock of time_limit_s */
    int64_t exact_wins_bnb;   /* exact solves (whole graph, windows) where branch and */
    int64_t exact_wins_lp;    /* bound / lp_solve gave the better schedule (BOTH: ties go to bnb) */
    /* Runs of the exact solver (whole graph, windows) that failed: any end
       but a proof, a budget stop or an lp_solve time-out after a better
       schedule. The run keeps the schedule it started from; with
       CC_EXACT_BOTH lp_solve failing leaves branch and bound's result. */
    cc_result exact_status;   /* CC_OK if none failed, else the first failure's code: CC_ERR_TIMEOUT
                                 (lp_solve found nothing better in time), CC_ERR_BACKEND (lp_solve
                                 failed), CC_ERR_UNSUPPORTED (ILP model too large),
                                 CC_ERR_INVALID_SCHEDULE (a fault: a solver's schedule failed its check),
                                 CC_ERR_OUT_OF_MEMORY (lp_solve's run under CC_EXACT_BOTH) */
    int64_t exact_failures;   /* failed runs */
    char exact_message[256];  /* the first failure's message ("" if none) */
    /* Odd-even windows: each an exact solve of its jobs, all else fixed. */
    int64_t n_windows;        /* windows solved */
    int64_t n_windows_proven; /* of those, proven optimal */
    double window_gap_max;    /* the largest (end - proven bound) / (end - first start) of an unproven
                                 window that ended normally; 0: none */
    double window_ms_max;     /* the slowest window's solve, ms on the clock of time_limit_s */
    /* Under memory_cap_bytes: schedules found above the cap and rebuilt by
       the serial scheme, and the solvers that did not run because they
       hold no memory resource ("" if none). */
    int64_t memory_repairs;
    char memory_note[160];
} cc_sched_stats;

struct cc_schedule {
    int n_ops;
    double* start_us;         /* [n_ops] by op index; owned, see cc_schedule_release */
    cc_op* order;             /* [n_ops] ops by start time; at equal starts zero-duration
                                 ops first, then by index, never before a dependency:
                                 an issue order for cc_simulate and executors */
    double makespan_us;
    double lower_bound_us;    /* max of the two below, and the search's own bound */
    double lb_critical_path_us;
    double lb_resource_us;    /* max over resources of load / capacity, rounded up
                                 to the common step of the durations */
    int proven_optimal;       /* 1 only when makespan == a proven lower bound */
    uint64_t peak_bytes;      /* the most bytes of transient buffers alive at once (cc_memory_check) */
};

/* The desc as cc_sched_solve resolves it for a graph of n_ops ops (NULL:
   the default desc): every zero field replaced by the value the solve
   uses. Passing the result to cc_sched_solve gives the same schedule. */
CONCERTO_API cc_sched_desc cc_sched_query_defaults(const cc_sched_desc* desc, int n_ops);
/* Fills *out (owned by the caller: cc_schedule_release); desc may be NULL
   (every default). On failure *out is left empty. The graph is validated
   first. On a stream graph the result is the stream simulation of its
   order (cc_simulate, with the graph's executor costs), and never later
   than program order's where program order is an order of the graph.
   Under memory_cap_bytes, where that simulation would break the cap, the
   result keeps the schedule's own times, which leave out the executor's
   costs (the plan's memory edges keep the order's memory within the cap).
   An exact solver that fails or times out is not a failure of the solve: it
   returns CC_OK with the best schedule found (never worse than the
   heuristic's), proven_optimal 0 unless something else proved it, and says
   so in the stats' exact_status, exact_failures and exact_message. A
   failure on the whole graph is also recorded in the context
   (cc_last_error, the logger); failures in odd-even windows only in the
   stats. Errors: CC_ERR_INVALID_ARG (a field out of range, named),
   CC_ERR_UNSUPPORTED (lp_solve asked for but not compiled in),
   CC_ERR_INFEASIBLE, CC_ERR_OUT_OF_MEMORY, the graph's validation errors.
   Cost: bounded by the desc's budgets (schedules, search nodes, windows and
   rounds: cc_sched_query_defaults for a graph's size) and time_limit_s. */
CONCERTO_API cc_result cc_sched_solve(cc_context* ctx, cc_graph* graph, const cc_sched_desc* desc, cc_schedule* out);
/* cc_sched_solve, and what it did in *stats (may be NULL; zeroed on failure).
   The schedule is the same as cc_sched_solve's. */
CONCERTO_API cc_result cc_sched_solve_stats(cc_context* ctx, cc_graph* graph, const cc_sched_desc* desc, cc_schedule* out,
                                            cc_sched_stats* stats);
CONCERTO_API void      cc_schedule_release(cc_context* ctx, cc_schedule* schedule);
/* Lower bounds of the graph: critical path, resource load. Either may be NULL. */
CONCERTO_API cc_result cc_lower_bounds(cc_context* ctx, cc_graph* graph, double* critical_path_us, double* resource_us);

/* Independent checker: start_us[i] for op index i. Verifies every
   dependency and every resource's capacity at every instant; on failure
   (CC_ERR_INVALID_SCHEDULE) names the operations and the instant.
   makespan_us may be NULL. Cost: O(n log n + n K + dependencies) for n ops
   and K resources. */
CONCERTO_API cc_result cc_schedule_check(cc_context* ctx, cc_graph* graph, const double* start_us, double* makespan_us);

/* Memory of a timeline of the graph's ops (start_us[i], end_us[i] by op
   index; end_us NULL: start plus duration): the most bytes of transient
   buffers alive at once, each from the earliest start to the latest end of
   the ops that access it (a buffer ending at t and one starting at t are
   not alive together). *peak_bytes and *at_us (the instant; either may be
   NULL). With cap_bytes > 0, a peak above it is CC_ERR_INVALID_SCHEDULE,
   naming the cap, the instant and the buffers alive there. The graph's
   own check, written apart from the solvers. For an issue order, pass its
   cc_simulate starts. Cost: O(a + b log b) for a accesses, b buffers. */
CONCERTO_API cc_result cc_memory_check(cc_context* ctx, cc_graph* graph, const double* start_us, const double* end_us,
                                       uint64_t cap_bytes, uint64_t* peak_bytes, double* at_us);

/* Stream simulator: issue_order lists every op once; each stream runs its
   ops one after another in that order, each as soon as its dependencies are
   done; ops with no stream run as soon as their dependencies are done. Only
   for stream graphs (each op on at most one resource of capacity 1).
   start_us (by op index) may be NULL. Errors: CC_ERR_UNSUPPORTED (not a
   stream graph), CC_ERR_INVALID_ARG (issue_order not every op once),
   CC_ERR_DEADLOCK (the order contradicts a dependency: both ops named).
   Cost: O(n k + dependencies) for n ops on k streams. */
CONCERTO_API cc_result cc_simulate(cc_context* ctx, cc_graph* graph, const cc_op* issue_order, int n,
                                   double* start_us, double* makespan_us);
/* Exposed communication of a timeline of the graph's ops (start_us[i],
   end_us[i] by op index: a step's cc_exec_timeline, or a prediction's
   starts with each op's duration added, end_us NULL): the time during
   which some communication op (one with a collective) runs and no compute
   op (one without) does. The one definition of it, for what was measured
   and what was predicted alike. Zero for a graph without collectives.
   Cost: O(n log n) for n ops. */
CONCERTO_API cc_result cc_exposed_comm_us(cc_context* ctx, cc_graph* graph, const double* start_us, const double* end_us,
                                          double* exposed_us);

/* ---- PSPLIB -------------------------------------------------------------
   Single-mode .sm files. Jobs become ops named "job<N>" (N as in the file,
   source and sink included), in a general-mode graph with the file's
   renewable resources. Errors name the file and line. */
CONCERTO_API cc_result cc_psplib_read(cc_context* ctx, const char* path, cc_graph** out);
CONCERTO_API cc_result cc_psplib_parse(cc_context* ctx, const char* text, size_t n_bytes,
                                       const char* name, cc_graph** out);
/* Writes a graph as a .sm instance; durations are rounded to integers in
   units of unit_us (> 0). A source and a sink job are added around it.
   Stream graphs are written with one resource of capacity 1 per stream. */
CONCERTO_API cc_result cc_psplib_write(cc_context* ctx, cc_graph* graph, const char* path, double unit_us);

/* ---- cost model ---------------------------------------------------------
   One link model and one function that costs a collective on it.

   A link (cc_link) has a latency per algorithm step and a bandwidth, given
   either as us_per_byte (> 0 takes precedence) or as a line rate gbps
   times efficiency (GB/s = 1e3 bytes/us). A link of zeros is free.

   cc_coll_us costs one collective of kind on a group of group.n_ranks
   members, group.ranks_per_node of them in each node, over intra (inside a
   node) and inter (between nodes; may be NULL where the group is in one
   node), on nodes of gpus_per_node GPUs (0: unbounded), with algorithm
   algo. For a cluster spec s: cc_coll_us(ctx, &s.intra, &s.inter,
   s.gpus_per_node, ...), after cc_cluster_check. The algorithms:
     CC_ALGO_FLAT: the alpha-beta model on one link, intra if the group is
       in one node, else inter (a collective that spans nodes runs at the
       inter-node link's speed). One step costs a + bytes b (a the latency,
       b the link's us per byte); with n = n_ranks, B = n_bytes:
         ALL_REDUCE (ring)                          2(n-1)(a + (B/n) b)
         REDUCE_SCATTER, ALL_GATHER, ALL_TO_ALL     (n-1)(a + B b)
         BROADCAST (pipelined)                      (n-1) a + B b
         SEND / RECV                                a + B b
       This is what the in-process world's emulated link charges.
     CC_ALGO_RING, CC_ALGO_TREE, CC_ALGO_HIERARCHICAL, CC_ALGO_AUTO: NCCL's
       algorithms, described under the cluster cost model below.
   n_bytes is n_elems times the element size, n_elems as in cc_collective.
   n_ranks == 1 costs 0. Errors: CC_ERR_INVALID_ARG for a NULL us or intra,
   a NULL inter where the group spans nodes, a link whose numbers are
   negative, NaN or infinite (or, outside FLAT, with no bandwidth), a
   negative gpus_per_node, a kind that is not a collective or a bad group
   (naming the field; ranks_per_node may not pass gpus_per_node);
   CC_ERR_UNSUPPORTED for an algorithm that does not apply. *us is 0 on
   failure. ctx may be NULL. Cost: a few flops. */
typedef struct cc_link {
    double latency_us;         /* per algorithm step, >= 0 */
    double us_per_byte;        /* inverse bandwidth (1 GB/s = 0.001 us per byte); > 0 takes precedence */
    double gbps;               /* else the line rate, GB/s per GPU, one direction */
    double efficiency;         /* fraction of gbps a collective moves data at, in [0, 1]; 0: 1 */
} cc_link;

/* A collective's group: n_ranks members, ranks_per_node of them in each
   node it spans (ranks_per_node divides n_ranks and is at most the node's
   GPUs; 0: packed, min(n_ranks, gpus_per_node), or n_ranks where
   gpus_per_node is 0). */
typedef struct cc_group_shape { int n_ranks; int ranks_per_node; } cc_group_shape;

typedef enum cc_coll_algo {
    CC_ALGO_AUTO = 0, CC_ALGO_RING, CC_ALGO_TREE, CC_ALGO_HIERARCHICAL, CC_ALGO_FLAT
} cc_coll_algo;

CONCERTO_API cc_result cc_coll_us(cc_context* ctx, const cc_link* intra, const cc_link* inter, int gpus_per_node,
                                  cc_coll_kind kind, uint64_t n_bytes, cc_group_shape group, cc_coll_algo algo,
                                  double* us);

/* ---- cluster cost model ---------------------------------------------------
   What a step costs on a cluster that exists only as a description: compute
   from FLOPs and bytes against a device's peaks, collectives from the
   algorithms NCCL uses, placed on the link they cross. Pure arithmetic
   (a CONCERTO_NO_RUNTIME build has it); every figure it gives is a model.

   Units. Bandwidths are GB/s = 1e9 bytes/s = 1e3 bytes/us, per GPU and one
   direction (NVIDIA quotes NVLink as the total of both directions: NVLink3
   on the A100 is "600 GB/s", 300 GB/s each way; a NIC is quoted in Gb/s:
   200 Gb/s = 25 GB/s). A link of line rate G GB/s and efficiency e moves
   bytes at b = e * G GB/s; latencies are per algorithm step.

   Collectives. n = group.n_ranks, r = group.ranks_per_node (members in one
   node), k = n / r nodes. S = n_bytes as in cc_coll_us: n_elems times
   the element size, n_elems as in cc_collective (the whole buffer of an
   all-reduce or broadcast, one rank's block of a reduce-scatter, all-gather
   or all-to-all). bi, li: the intra link's rate and latency; be, le: the
   inter link's (each GPU's share of its node's NICs). k == 1 uses the
   intra link alone; r == 1 the inter link alone.

   RING (NCCL's rings; across nodes one ring per GPU of a node, each leaving
   the node through another GPU's NIC, so a node's r NICs carry the traffic
   together and NVLink hops run at the same time as network hops):
       the per-byte cost of a ring step
           c = 1/bi                                   k == 1
           c = max((r-1)/(r bi), 1/(r be))            k > 1 (pipelined: the slower side)
       and a step's latency L = li (k == 1), else the mean over the ring's
       hops (k le + (n-k) li) / n.
       ALL_REDUCE       2(n-1) L + 2(n-1)/n S c
       REDUCE_SCATTER,
       ALL_GATHER        (n-1) L +  (n-1)   S c
       BROADCAST         (n-1) L +          S c       (pipelined chain)
   TREE, ALL_REDUCE only: NCCL's double binary tree (Sanders, Speck and
   Traeff, "Two-tree algorithms for full bandwidth broadcast, reduction and
   scan", Parallel Computing 2009; in NCCL since 2.4): a chain inside each
   node, two binary trees across the k nodes, each carrying half the data,
   reduce up and broadcast down pipelined. Latency grows with the depth:
       2 ((r-1) li + ceil(log2 k) le)
       + S max(2/bi if r > 1,  V/(r be) if k > 1)
   where V, the bytes a node sends over the network, is 2S (a node is inner
   in one tree: S/2 up and S/2 to each of two children; a leaf in the other:
   S/2 up), and S when k == 2 (each node is the other's root and leaf: S/2
   each way). That is why a two-node tree's bus bandwidth can pass the
   network's (NVIDIA's nccl-tests issue 196).
   HIERARCHICAL, k > 1 and r > 1: the intra-node phase, then the
   inter-node one among the k members of each rail (same local index), each
   on its own NIC, as rings:
       ALL_REDUCE       RS_intra(S) + AR_inter(S/r) + AG_intra(S)
                        = 2[(r-1) li + (r-1)/r S/bi] + 2(k-1) le + 2(k-1)/k (S/r)/be
       REDUCE_SCATTER   (r-1)(li + k S/bi) + (k-1)(le + S/be)
                        (intra reduce-scatter of the n S bytes, then across nodes on k S)
       ALL_GATHER       (k-1)(le + S/be) + (r-1)(li + k S/bi)   (the reverse)
   The sum of its phases: nothing pipelines between them, so it loses to the
   ring on bandwidth where NVLink is not much faster than r NICs, and wins
   on latency (2(r-1) + 2(k-1) steps against 2(n-1)).
   ALL_TO_ALL (direct exchange, every peer at once):
       (k > 1 ? le : li) + max((r-1) S/bi, (n-r) S/be)
   SEND / RECV: le + S/be, or li + S/bi where the group lies in one node
       (r == n); the group is the communicator, usually the two peers.
   AUTO: the fastest algorithm that applies to the kind and the shape (ring
   and, for ALL_REDUCE, tree; hierarchical where k > 1 and r > 1); it
   always answers (FLAT is never its choice). An algorithm that does not
   apply (TREE for anything but ALL_REDUCE; HIERARCHICAL for one node, one
   member per node, broadcast, all-to-all or send/recv; anything but AUTO
   or FLAT for send/recv and all-to-all) is CC_ERR_UNSUPPORTED, naming
   both. n_ranks == 1 costs 0.
   Not modelled: NVLink SHARP (NVLS) and in-network (CollNet/SHARP)
   reductions, NCCL's protocols (LL, LL128, Simple: folded into the
   efficiencies), congestion between groups sharing links, and the
   compute a reduction does.

   Compute (cc_cluster_compute_us): a roofline plus a launch,
       launch_us + max(flops / (peak e_f), bytes / (mem_gbps e_m)) ,
   peak = fp16_tflops for half precision (fp16/bf16 tensor cores), else
   fp32_tflops. Compute that overlaps communication runs overlap_slowdown
   times slower (the Concerto paper's alpha): the caller applies it where
   it models overlap. */
typedef struct cc_device_spec {      /* one accelerator */
    const char* name;
    double fp32_tflops, fp16_tflops; /* dense peaks, TFLOP/s (fp16: fp16/bf16 tensor cores) */
    double mem_gbps;                 /* HBM bandwidth, GB/s */
    double flops_efficiency;         /* fraction of the peak a large matmul reaches; 0: 0.7 */
    double mem_efficiency;           /* fraction of mem_gbps a streaming kernel reaches; 0: 0.8 */
    double launch_us;                /* per kernel, >= 0 */
} cc_device_spec;

typedef struct cc_cluster_spec {
    const char* name;
    cc_device_spec device;
    int gpus_per_node;               /* >= 1 */
    cc_link intra;                   /* inside a node: NVLink/NVSwitch or PCIe (latency_us, gbps,
                                        efficiency; us_per_byte 0) */
    cc_link inter;                   /* between nodes: each GPU's share of its node's NICs */
    double overlap_slowdown;         /* compute beside communication runs this many times slower
                                        (the paper's alpha), >= 1; 0: 1.2 */
} cc_cluster_spec;

/* A named preset ("a800", "a100", "h100"; case-insensitive) into *out
   (name borrowed, static). Unknown: CC_ERR_INVALID_ARG naming it and the
   known names. ctx may be NULL (no message is recorded then). */
CONCERTO_API cc_result cc_cluster_preset(cc_context* ctx, const char* name, cc_cluster_spec* out);
/* The names of the presets, NULL-terminated (static). */
CONCERTO_API const char* const* cc_cluster_preset_names(void);
/* CC_OK, or CC_ERR_INVALID_ARG naming the first field that is zero,
   negative, NaN or infinite where it must not be (peaks, gpus_per_node,
   a link's gbps unless its us_per_byte is > 0; negative latencies,
   us_per_byte or launch; efficiencies outside [0, 1]; overlap_slowdown
   below 1 and not 0). ctx may be NULL. */
CONCERTO_API cc_result cc_cluster_check(cc_context* ctx, const cc_cluster_spec* spec);
/* The algorithm AUTO picks for this collective (CC_ALGO_RING where the
   kind has one algorithm); CC_ALGO_AUTO for n_ranks <= 1 or a bad input. */
CONCERTO_API cc_coll_algo cc_cluster_coll_algo(const cc_cluster_spec* spec, cc_coll_kind kind, uint64_t n_bytes,
                                               cc_group_shape group);
/* The roofline time of a compute op, in us (see above); flops and bytes
   >= 0, half_precision nonzero for fp16/bf16. A spec that fails
   cc_cluster_check, or negative or NaN counts, give -1. */
CONCERTO_API double cc_cluster_compute_us(const cc_cluster_spec* spec, double flops, double bytes, int half_precision);
/* overlap_slowdown as resolved (0: the default 1.2). */
CONCERTO_API double cc_cluster_overlap_slowdown(const cc_cluster_spec* spec);
/* nccl-tests' bus bandwidth, GB/s, of a collective of kind on n ranks
   that took us: algbw = total bytes / time with the total as nccl-tests
   counts it (the buffer for all-reduce and broadcast, n times the block
   for reduce-scatter and all-gather), times 2(n-1)/n for all-reduce,
   (n-1)/n for reduce-scatter and all-gather, 1 otherwise. */
CONCERTO_API double cc_busbw_gbps(cc_coll_kind kind, uint64_t n_bytes, int n_ranks, double us);

/* ---- rewrites: decomposition and fusion ----------------------------------
   Graph-to-graph rewrites run after profiling and before scheduling:

       build graph -> profile -> cc_graph_decompose -> cc_graph_fuse -> schedule -> plan -> execute

   Each ranks its candidates cheaply and judges only the best few with the
   scheduler itself (desc.sched). The screen of a candidate is the stream
   simulation of the step in the best issue order known of the graph so
   far, with the rewrite in place (each op replaced by the ops it becomes).
   A full solve of a whole candidate step (cc_sched_solve with desc.sched)
   decides: a rewrite is kept only if the judged makespan shrinks
   (decomposition) or does not grow (fusion), and the result is never
   judged worse than the input. The search's budget is counted in work,
   not time (desc.max_evaluations screens and desc.max_screen_ops ops
   screened, desc.full_judgements full solves), so the result stays
   deterministic. Under
   sched.memory_cap_bytes a candidate that no schedule found fits, or whose
   schedule's arena (cc_plan_create_desc from its starts) does not, is not
   kept either (report.n_over_cap counts them); the screens do not see the
   cap, the full solves do;
   transient buffers stay transient in every graph a rewrite makes. Both are deterministic: the same graph and
   durations give the same new graph on every rank (fusion also looks at
   buffer addresses: ranks whose buffers are laid out differently can fuse
   differently, which cc_exec_agree then reports).

   Decomposition splits a synchronous collective into N chunks along rows
   or columns, with its context, so that chunk i's collective overlaps chunk i+1's
   compute: an in-place all-reduce whose written region has split_rows > 0
   (a chunk is a contiguous run of its rows), a reduce-scatter (matmul ->
   reduce-scatter, as in sequence parallelism and ZeRO's gradient shards)
   or an all-gather (all-gather -> matmul). A chunk of a reduce-scatter or
   all-gather moves each rank's part of the chunk, so every rank's data
   keeps its layout: chunk i is sub-block i of every rank's block, packed
   (reduce-scatter) or unpacked (all-gather) by a copy op through a
   transient buffer, and the ops on the side of the rank blocks are cut so
   that the pieces of chunk i cover exactly those rows, one piece per
   rank's block. The context is the same rule propagation for every kind:
   the ops that produce and consume the collective's data and split along
   the axis (one that does not split stays whole, outside the context: it
   waits for every chunk, or every chunk waits for it; at least one must
   split) and, up to max_context_depth ops from it, the producers of those
   producers and the consumers of those consumers whose pieces line up
   with theirs (a piece needs no later chunk's piece of another op),
   stopping at ops next to another collective. Collectives are tried most
   exposed first: the most time not overlapped by compute in the stream
   simulation of the current graph's best issue order known (see the
   searches below). A compute op's piece takes its share of the op's
   duration, or, where the op has a chunk cost (measured by cc_exec_profile_ops, or set:
   cc_chunk_cost), what that says, fixed cost included; the report's
   contexts say which (cc_rewrite_context.measured). To make
   an op decomposable either give it a split rule that allows rows and a
   part_fn (see split rules: the rule gives each piece's regions, and
   pieces may be uneven), or a chunk_fn and, in every region it reads or
   writes, how it splits (split_rows). The axis is rows; a collective more
   of whose producers and consumers split by columns than by rows (their
   rules allow columns; rows on ties) and whose regions are rows of the
   same elements (split_rows) is split by columns: chunk i is column block
   i of every row, strided, packed into a transient buffer, all-reduced,
   reduce-scattered or gathered from there (into a second buffer) and
   unpacked. A reduce-scatter's or all-gather's full side is then its
   ranks' blocks of R rows one after another, and the buffer of chunk i
   holds every rank's column block of its rows in rank order, so each
   rank's data keeps its layout; the ops on that side are cut in N (a
   column block spans every rank's block). No other axis is used so far.

   Fusion merges runs of small all-reduces, reduce-scatters or all-gathers
   into one (bucketing). Members must follow each other among the
   collectives of their stream and share kind, communicator, element type
   and reduction. All-reduces whose send ranges (and receive ranges) form
   one contiguous range, in place all or none, become one collective over
   it. Any other bucket goes through buffers the library places: pack ops
   copy each member's send region into the bucket, the collective runs on
   the bucket, unpack ops copy the result into each member's receive
   region. A reduce-scatter or all-gather of two buffers is not that of
   their concatenation, so its bucket is interleaved by rank: block j of
   the fused collective (what rank j receives, or sends, of it) is block j
   of every member, one after another, and each rank's data lands where
   the members put it. The copies' cost is in the model (copy ops, below),
   so the judging schedule says whether a bucket pays.

   Copy ops. A rewrite may add ops that copy one region into another of the
   same byte count, either side contiguous or strided (packing strided
   pieces into a bucket buffer the library places, and back). Such an op
   runs on the stream the rewrite gives it, through the backend's copy
   entry (cc_copy2d); its addresses are resolved by cc_exec_create as a
   collective's NULL buffers are; its modelled duration is its bytes times
   desc.copy_us_per_byte. It has no fn and no user_data of the caller's. */
typedef struct cc_rewrite_desc {
    const cc_link* link;       /* cost of a resized collective: cc_coll_us, CC_ALGO_FLAT, on this link with the
                                  communicator's size; NULL: a + b*bytes fitted (least squares, a, b >= 0)
                                  to the current durations of the graph's collectives of the same kind on the
                                  same communicator; with fewer than two distinct sizes, b = duration/bytes, a = 0 */
    cc_sched_desc sched;       /* how a candidate graph is judged: a cc_sched_solve with this desc (zero: the
                                  scheduler's defaults). Judge with the desc the step will be scheduled with */
    int max_chunks;            /* decomposition: chunk counts 2, 4, 8 ... up to this, increasing while doubling the
                                  count still shortens the judged step; 0: 4 (16 gives N in {2, 4, 8, 16}; each
                                  count judged costs a solve of a larger graph) */
    uint64_t max_bucket_bytes; /* fusion: the most bytes of a fused collective's n_elems (one rank's block of a
                                  reduce-scatter or all-gather); 0 = no limit */
    int max_evaluations;       /* candidate graphs screened at most; 0: 1000; the search stops there */
    int full_judgements;       /* full solves (cc_sched_solve with sched) of candidate graphs at most, beside the
                                  input's and the last one; 0: 32. The search's budget in work, not time: a
                                  larger one judges more candidates in full (slower; the result may differ
                                  either way), the same one gives the same result (see cc_graph_decompose) */
    int exact_only;            /* decomposition: 1 = only splits whose results are bit-identical to the whole ops'
                                  (no partial sums: neither a rule's split with a partial-sum write nor a chunk_fn
                                  op writing a region with split_rows 0) */
    double copy_us_per_byte;   /* the modelled duration of a copy op a rewrite adds (packing into a bucket, say):
                                  its bytes times this, the launch left to cc_exec_costs.launch_us. 0: 1e-4 (10
                                  GB/s, a host memcpy's order; an accelerator copies one to two orders faster: set
                                  it from its memory bandwidth, e.g. 2 / (mem_gbps * 1e3) for a read and a write);
                                  finite and >= 0 (negative: refused). Profiling measures the copy ops as any op */
    int max_context_depth;     /* decomposition: how far a context reaches from its collective, in ops along
                                  producers of producers and consumers of consumers: 1 = the immediate producers
                                  and consumers only; 0: 3 (two ops beyond them). Each op reached costs a walk of
                                  the graph, not a judgement */
    uint64_t max_screen_ops;   /* the screens' work: the search stops screening once the ops of the candidate graphs
                                  it screened add up to this (a decomposition's candidates grow with the chunks
                                  kept, so a screen's cost does too); 0: no limit, max_evaluations alone */
} cc_rewrite_desc;

/* A context decomposition split: the collective, the axis, the chunk
   count, the ops it covers and the predicted gain. */
typedef struct cc_rewrite_context {
    const char* collective;    /* the input op's name */
    cc_coll_kind kind;
    cc_axis axis;
    int n_chunks;
    int n_ops;                 /* ops split, the collective included */
    const char* ops;           /* their names, in program order, ", " between */
    double gain_us;            /* its share of the judged makespan's drop: the drop between two graphs kept by
                                  full solves is shared by the contexts split between them in proportion to
                                  their screened gains (the contexts' gains add up to the report's drop) */
    int measured;              /* 1: every compute op of the context had a chunk cost (measured by
                                  cc_exec_profile_ops or set by cc_op_set_chunk_cost), which gave its chunks'
                                  durations; 0: some op's chunks took their share of its duration (modelled,
                                  no fixed cost). The collective's chunks are always modelled (desc.link or
                                  the fit of the graph's collectives) */
} cc_rewrite_context;

typedef struct cc_rewrite_report {
    int n_candidates;          /* collectives considered */
    int n_changed;             /* fusion: buckets formed (>= 2 collectives each); decomposition: collectives split */
    int n_ops_before, n_ops_after;
    int n_colls_before, n_colls_after;
    double makespan_before_us, makespan_after_us;   /* by the judging schedule: full solves of the input and result */
    int n_evaluations;         /* candidate graphs screened (by simulation in the best order known) */
    int n_full_judgements;     /* graphs solved in full with desc.sched (the input's own solve not counted) */
    int n_over_cap;            /* of the full solves, graphs dropped because no schedule found fits
                                  sched.memory_cap_bytes, or its arena does not (the input itself not fitting
                                  is an error) */
    const cc_rewrite_context* contexts;   /* decomposition: each context split, in the order it was (n_changed of
                                             them); they belong to *out and live as long as it does */
    int n_contexts;
} cc_rewrite_report;

/* The desc as the rewrites resolve it (NULL: every field zero); sched is
   left to cc_sched_solve (cc_sched_query_defaults). */
CONCERTO_API cc_rewrite_desc cc_rewrite_query_defaults(const cc_rewrite_desc* desc);
/* Both write a new graph into *out (the caller destroys it; the input is unchanged), report may be NULL.
   The new graph, named "decompose(<input>)" or "fuse(<input>)", keeps the stream/resource layout,
   buffers, program order, fn/user_data, collectives and chunk costs of every op not rewritten; its durations are
   estimates (profile it again for measured ones): a chunk of compute op i with share n of its axis takes
   d_i n, or d_i t(n) / t(1) where op i has a chunk cost t (cc_chunk_cost); handles of the input name none of its ops.
   If the judged makespan cannot be improved, *out is an unchanged copy (n_changed 0). On failure *out is
   NULL and the report zero.
   Decomposition: candidates are in-place all-reduces whose written regions all have split_rows > 0, and
   reduce-scatters and all-gathers with one read and one write region, each holding exactly the
   collective's elements on its side (contiguous). They are tried most exposed first (the collective's
   time not overlapped by compute in the stream simulation of the best order known of the graph as
   rewritten so far; program order
   on ties), each on the graph as rewritten so far. The axis is rows; a collective is tried by columns
   instead where more of its producers and consumers split by columns than by rows, N divides a row's
   elements C, and its regions are rows of C elements: an all-reduce's one region, read and written,
   contiguous, with split_rows R > 0; a reduce-scatter's or all-gather's two, each with split_rows, the
   full side's n_ranks times the shard's R (rank j's block its rows [j*R, (j+1)*R)). The context: of
   the collective's producers (the last writers of what it reads; of an all-reduce, of what it accesses)
   and consumers (readers of what it wrote, up to the next writer), those that split along the axis in
   their pieces (a rule that allows it, or for rows a chunk_fn; with exact_only, exactly); the others
   (a collective, an op without either, one whose split is not exact under exact_only or does not divide
   for this N) stay whole outside the context, and the dependencies derived from the regions make such a
   consumer wait for every chunk and every chunk wait for such a producer (a reduce-scatter's pack copies
   read a whole producer's output; a whole consumer of an all-gather reads after every unpack). A
   collective none of whose producers and consumers splits in N is not split in N. Grown from those
   that split, breadth first, to at most max_context_depth ops from the collective: producers of what a
   producer reads and consumers of what a consumer writes, each taken if it splits, is no producer or
   consumer of another collective, and lines up with every op already taken.
   In N chunks, the collective's chunk i covers elements [i*n/N, (i+1)*n/N) of n_elems n: of its buffer
   (an all-reduce by rows), or of every rank's block on the full side (the send of a reduce-scatter, the
   receive of an all-gather) and of its own block on the other (by rows); by columns, column block i of
   every row on each side.
   A reduce-scatter's chunk i is a copy op "<name>#<i>/<N>.pack" on its stream (sub-block i of every
   block, in rank order, into a transient buffer "<name>#<i>/<N>.buf"), then "<name>#<i>/<N>"
   reduce-scattering that buffer into sub-block i of its block; an all-gather's is "<name>#<i>/<N>",
   gathering sub-block i of its block into such a buffer, then "<name>#<i>/<N>.unpack" into sub-block i
   of every block; an all-reduce by columns' is "<name>#<i>/<N>.pack" (columns [i*C/N, (i+1)*C/N) of
   its R rows of C, strided, into such a buffer), "<name>#<i>/<N>" (the buffer all-reduced in place)
   and "<name>#<i>/<N>.unpack" (back). By columns, a reduce-scatter's or all-gather's chunk i is those
   columns of every row on both sides: "<name>#<i>/<N>.pack" copies them from the send side (strided)
   into a transient buffer, "<name>#<i>/<N>" runs the collective from it into another, and
   "<name>#<i>/<N>.unpack" copies that into the receive side (strided); the buffer of every rank's rows
   (n_ranks * R rows of C/N, rank j's column block of its rows j-th) is "<name>#<i>/<N>.buf", the
   rank's own (R rows of C/N) "<name>#<i>/<N>.shard". The chunk collectives are chained in chunk order.
   A compute op of the context is cut in N pieces, or, on the full side of a reduce-scatter or
   all-gather split by rows, in n_ranks * N pieces, piece j*N + i being sub-block i of block j (the
   rows it covers there when its rule's extent divides evenly) and belonging to chunk i, so that chunk
   i's compute is i's rows of every block. Piece c of k is an op at its place, "<name>#<c>/<k>", its
   regions those of rows [c*R/k, (c+1)*R/k) of each split region and the whole of the others (an op
   with a split rule: the regions its rule gives piece c of k along the axis, checked by
   cc_op_split_check); the pieces of one op are chained in the order they run: c = 0 .. k-1, or on
   the full side by rows chunk by chunk (sub-block i of every block, block 0 first, before sub-block
   i + 1), piece 0 first either way. N must divide
   n_elems (and every split_rows of an all-reduce's context ops without a rule), and every op must
   split in its pieces. An op lines up with another if no piece of the earlier of the two conflicts
   with (writes what it touches, or touches what it writes) a piece of the later one that belongs to an
   earlier chunk. N = 2, 4, ..., max_chunks is tried while doubling N shortens the screened makespan,
   with the grown context, then (if none of it screens strictly better) with the immediate one alone;
   the best is kept as the searches below say. A collective with NULL buffers (resolved from its regions) is a
   candidate where its first read and write regions hold exactly its elements (on the full side of a
   reduce-scatter or all-gather, n_ranks blocks of them); its chunks keep NULL buffers and resolve from
   their chunk regions (a chunk collective whose side is packed or unpacked: from the transient
   buffer). Chunk ops call chunk_fn (part_fn) through a record the new graph owns
   (copies of the graph get their own); they have no chunk_fn themselves, so a context is split once.
   cc_op_user_data of a chunk op still gives the op's user_data.
   Fusion: candidates are all-reduces, reduce-scatters and all-gathers with n_elems > 0. A bucket's ops
   sit at its last member's place in program order; its collective is named "<first>+<k-1>", n_elems the
   members' sum. Where the members are all-reduces that join into one range (members with NULL buffers
   holding exactly their elements in their first regions, each side in one buffer, contiguous there), it
   is one op with the members' regions (the lowest member's first) and the lowest send/receive
   addresses. Otherwise it runs on transient buffers "<name>.bucket" (all-reduce, in place) or
   "<name>.send" and "<name>.recv", with NULL buffers, after one copy op per member "<member>/pack" and
   before one "<member>/unpack", all on the members' stream, each costing its bytes times
   desc.copy_us_per_byte; members packed so must each have one read and one write region, contiguous,
   holding exactly their send and receive elements (a pointer is its region's address; a NULL one's
   region must be in a transient buffer). Explicit edges of members become edges of all the bucket's
   ops. A bucket is refused if an op between its members touches the region of an earlier member or
   has an explicit edge to or from one, if its members touch each other's regions or addresses, or if
   a path through other ops joins two members.
   The searches. Decomposition, most exposed first: of a context's k (and of its immediate context's), the
   one with the shortest screen; taken by its screen where that is strictly shorter than the graph so far's, or, where it is at most 2% longer, by
   a full solve strictly shorter than the graph so far's (solved first where it changed since its last);
   the graph so far is solved in full again after every ceil(2 n / full_judgements) splits taken by screens
   (n: the input's collectives) and at the end; the result is the last graph whose full solve was shorter
   than the one kept before it (the input first). Fusion: every pair of collectives next to each other on a
   stream of the input that may fuse is screened (a packed pair with its copies' cost); of those at most 2%
   longer than the input's best order (all under sched.memory_cap_bytes), the full_judgements with the
   shortest screens (program order on ties) are judged in program order, each added to the buckets so far
   (the input rebuilt with them) and kept where a full solve is no longer (ties: fewer collectives), so
   buckets grow left to right as in the greedy search.
   Cost: at most max_evaluations screens, and about max_screen_ops ops screened in all where it is set
   (each a graph built, validated and simulated, O(ops + edges); fusion's without a graph), and
   full_judgements + 2 full solves with desc.sched, the input's included. */
CONCERTO_API cc_result cc_graph_decompose(cc_context* ctx, cc_graph* graph, const cc_rewrite_desc* desc, cc_graph** out,
                                          cc_rewrite_report* report);
CONCERTO_API cc_result cc_graph_fuse(cc_context* ctx, cc_graph* graph, const cc_rewrite_desc* desc, cc_graph** out,
                                     cc_rewrite_report* report);

/* ---- plan ----------------------------------------------------------------
   A plan is, for each stream, the sequence of ops it issues and the fewest
   cross-stream waits that enforce every dependency; and the offset of each
   transient buffer in one arena, with the waits that keep buffers sharing
   bytes apart in time. */
typedef struct cc_plan cc_plan;

typedef struct cc_plan_desc {
    const cc_op* order;          /* an issue order (a cc_schedule's order: every op once); NULL: program order */
    const double* start_us;      /* by op index, the starts the transient buffers' lifetimes come from (a
                                    schedule of the graph in this order, e.g. a cc_schedule's start_us);
                                    NULL: the stream simulation of the order (cc_simulate) */
    uint64_t memory_cap_bytes;   /* > 0: the arena may not exceed it; 0: no cap */
} cc_plan_desc;

/* order: an issue order (a cc_schedule's order: every op once), or NULL
   for program order. The plan borrows graph, which must outlive it.
   Errors: CC_ERR_INVALID_ARG (order not every op once), CC_ERR_DEADLOCK
   (order contradicts the dependencies on the streams), CC_ERR_UNSUPPORTED
   (general resources, an op on no stream or on several), the graph's
   validation errors. Cost: O((ops + dependencies) x streams^2) at most. */
CONCERTO_API cc_result cc_plan_create(cc_context* ctx, cc_graph* graph, const cc_op* order, cc_plan** out);
/* cc_plan_create with a desc (NULL: every field zero; cc_plan_create is the
   desc with order alone). Each transient buffer lives from the earliest
   start to the latest end of the ops that access it, by desc->start_us
   (which must be a schedule of the graph, e.g. one cc_schedule_check
   accepts, with each stream's ops starting in the order's sequence) or by
   the stream simulation of the order. Buffers whose lifetimes overlap get
   disjoint bytes of the arena (offsets aligned to 256 bytes, placed largest
   first, deterministic); where two buffers share bytes, the plan waits for
   every op that accesses the earlier one before the first writer of the
   later one runs. Bound buffers are not in the arena. Errors, besides
   cc_plan_create's: CC_ERR_INFEASIBLE (an arena above memory_cap_bytes,
   naming the cap, the arena and the lifetimes' peak), CC_ERR_INVALID_ARG
   (a start not finite and >= 0), CC_ERR_DEADLOCK (start_us that contradict
   the order). Cost: cc_plan_create's plus O(t^2 (log t + u)) for t
   transient buffers with u accesses each. */
CONCERTO_API cc_result cc_plan_create_desc(cc_context* ctx, cc_graph* graph, const cc_plan_desc* desc, cc_plan** out);
CONCERTO_API void      cc_plan_destroy(cc_plan* plan);
/* ops, order, collectives, waits, the arena's size and offsets */
CONCERTO_API uint64_t  cc_plan_hash(const cc_plan* plan);
CONCERTO_API int       cc_plan_n_waits(const cc_plan* plan);
/* The ops op waits for on other streams before it runs (the plan's waits),
   at most max of them into sources (may be NULL with max 0); returns how
   many there are, -1 for an invalid plan or op. */
CONCERTO_API int       cc_plan_waits(const cc_plan* plan, cc_op op, cc_op* sources, int max);
/* The arena's size in bytes (0: no transient buffers), and a buffer's
   offset in it: UINT64_MAX for a bound or invalid buffer. */
CONCERTO_API uint64_t  cc_plan_arena_bytes(const cc_plan* plan);
CONCERTO_API uint64_t  cc_plan_buffer_offset(const cc_plan* plan, cc_buffer buffer);

#ifndef CONCERTO_NO_RUNTIME
/* ========================================================================
   The runtime: backends, the executor and its profiling, the in-process
   world of ranks. Left out by CONCERTO_NO_RUNTIME (threads and clocks of
   POSIX).
   ======================================================================== */
typedef struct cc_rank cc_rank;

/* ---- backend interface --------------------------------------------------
   What the executor needs from a device: a table of functions, one per kind
   of backend (const, usually static), and the instance they act on. The
   executor reaches streams, events, timers and collectives only through it:
   every step, the agreement of plans (cc_exec_agree) and the profiling of
   ops (cc_exec_profile_ops) alike, so a backend that brings its own
   communicators serves all of them.
   A backend's streams are of one kind (stream_kind: "host" for threads,
   "cuda" for cudaStream_t); it runs the collectives of communicators whose
   family takes that kind of stream, and cc_exec_create refuses a plan with
   any other.
   Required entries: stream_create, stream_destroy, launch, synchronize;
   collective for plans with collectives and for cc_exec_agree /
   cc_exec_profile_ops with a communicator. Optional, with their fallbacks:
     event_create, event_destroy, event_record, stream_wait_event (all four
                  or none): without them a cross-stream wait becomes synchronize
     timestamp    none: no measured timeline (cc_exec_timeline fails) and
                  profiling times each op with now_us around a synchronize
     now_us       none: profiling needs timestamp
     mem_alloc, mem_free, mem_copy (all three or none): where the executor's
                  own collectives (agreement, the durations' maximum) keep
                  their buffers; none: host memory
     step_begin, step_end (both or none): around the ops of each step that
                  cc_exec_launch issues (step_end's completed is 0 when an op
                  failed and the rest were not issued; synchronize follows),
                  e.g. to capture the step once and replay it; none: nothing
     label        the name of the op whose entries follow, for messages;
                  none: the executor alone names the op
     destroy      none: cc_backend_destroy frees nothing
     copy         a 2-D copy on a stream (cc_copy2d), for the copy ops the
                  rewrites add (packing members into a bucket); none:
                  cc_exec_create refuses a plan with copy ops, naming one
   Every entry returns CC_OK or an error code; asynchronous errors surface
   from synchronize. */
/* A 2-D copy: height rows of width bytes, row r from src + r * src_pitch to
   dst + r * dst_pitch (pitches >= width; the two sides never overlap). A
   contiguous copy is one row. cudaMemcpy2DAsync's arguments, on the host
   or a device as the backend's memory is. */
typedef struct cc_copy2d {
    void* dst;
    size_t dst_pitch;
    const void* src;
    size_t src_pitch;
    size_t width, height;
} cc_copy2d;

typedef struct cc_backend_fns {
    const char* name;
    const char* stream_kind;   /* NULL: "host" */
    cc_result (*stream_create)(void* self, int index, void** stream);
    void      (*stream_destroy)(void* self, void* stream);
    cc_result (*launch)(void* self, void* stream, cc_op_fn fn, void* user_data);
    /* enqueues coll on stream; the descriptor must stay valid until it ran */
    cc_result (*collective)(void* self, void* stream, const cc_collective* coll);
    cc_result (*event_create)(void* self, void** event);
    void      (*event_destroy)(void* self, void* event);
    cc_result (*event_record)(void* self, void* event, void* stream);
    cc_result (*stream_wait_event)(void* self, void* stream, void* event);
    /* when the stream reaches this point, *where_us = the backend's clock */
    cc_result (*timestamp)(void* self, void* stream, double* where_us);
    cc_result (*synchronize)(void* self);
    double    (*now_us)(void* self);
    /* memory the backend's collectives can use, and a blocking copy in any
       direction between it and host memory */
    cc_result (*mem_alloc)(void* self, size_t n_bytes, void** ptr);
    void      (*mem_free)(void* self, void* ptr);
    cc_result (*mem_copy)(void* self, void* dst, const void* src, size_t n_bytes);
    cc_result (*step_begin)(void* self);
    cc_result (*step_end)(void* self, int completed);
    void      (*label)(void* self, const char* op_name);
    void      (*destroy)(void* self);
    /* enqueues copy on stream; the descriptor stays valid until it ran */
    cc_result (*copy)(void* self, void* stream, const cc_copy2d* copy);
} cc_backend_fns;

typedef struct cc_backend {
    const cc_backend_fns* fns;   /* borrowed: must outlive the backend */
    void* self;                  /* the instance: cc_backend_destroy frees it */
} cc_backend;

/* fns->destroy(self) where there is one; then *backend is zero. NULL and
   a zero backend are allowed. */
CONCERTO_API void      cc_backend_destroy(cc_backend* backend);

/* ---- executor --------------------------------------------------------------*/
typedef struct cc_exec cc_exec;

/* The backend is copied (its fns and self), not owned: destroy it after
   the executor. The executor allocates the plan's arena once
   (cc_plan_arena_bytes; through the backend's mem_alloc where it has one,
   e.g. one cudaMalloc, else from the context's allocator; its base aligned
   to 256 bytes, padded where the allocation is not) and frees it in
   cc_exec_destroy; nothing is allocated per step. A collective whose
   send_buf (recv_buf) is NULL gets the address of its op's first read
   (write) region: a transient buffer's arena address plus the region's
   offset. A copy op that a rewrite added (see the rewrites) is resolved
   the same way and runs through the backend's copy entry.
   Errors: CC_ERR_INVALID_ARG (such a collective or copy whose region is in
   a bound buffer, or that has no such region, naming the op),
   CC_ERR_UNSUPPORTED (copy ops and a backend without copy, naming an op),
   CC_ERR_OUT_OF_MEMORY, the backend's. */
CONCERTO_API cc_result cc_exec_create(cc_context* ctx, cc_plan* plan, const cc_backend* backend, cc_exec** out);
CONCERTO_API void      cc_exec_destroy(cc_exec* exec);
/* The address of a transient buffer in the executor's arena (backend
   memory where the backend allocates it), valid until cc_exec_destroy;
   for a bound buffer, the address given to cc_exec_bind_buffer (NULL if
   none); NULL for an invalid buffer. A compute op reaches its transient
   tensors through it: the caller fills the op's user_data (which the graph
   holds by pointer) after cc_exec_create and before the first step. */
CONCERTO_API void*     cc_exec_buffer_ptr(const cc_exec* exec, cc_buffer buffer);
/* Where a bound buffer's bytes are (host memory, or the backend's memory
   where it allocates its own, as the arena), so that the executor can keep
   them: profiling puts them back as it found them, and
   cc_exec_step_checked checks them; cc_exec_buffer_ptr then returns ptr.
   NULL forgets it. Errors: CC_ERR_UNKNOWN_BUFFER (not a buffer of the
   plan's graph), CC_ERR_INVALID_ARG (a transient buffer, or a step still
   running). Cost: O(1). */
CONCERTO_API cc_result cc_exec_bind_buffer(cc_exec* exec, cc_buffer buffer, void* ptr);
/* Profiling (cc_exec_profile_ops, cc_exec_profile_steps) runs the plan's
   real ops on real memory, then puts back the arena and every buffer
   bound with cc_exec_bind_buffer. An op that writes a bound buffer not
   bound would be left changed: profiling refuses it (CC_ERR_INVALID_ARG
   naming the op and the buffer) unless allow is 1, by which the caller
   takes on putting such buffers back. Errors: exec NULL. */
CONCERTO_API cc_result cc_exec_allow_profile_writes(cc_exec* exec, int allow);
/* One step, checked: the ops one at a time in the plan's issue order
   (program order for a plan of program order; each issued alone, then
   the backend synchronised), and after each, every byte the
   executor knows (the arena, and every buffer bound with
   cc_exec_bind_buffer) compared with before it: a byte changed outside the
   op's declared write regions is CC_ERR_UNDECLARED_WRITE naming the op,
   the buffer and the byte (the step stops there). Bytes of buffers not
   bound are not checked. Otherwise the step's results are a step's of
   the plan. For tests and first runs: every member of a collective's
   communicator must run its step checked too. Errors: as cc_exec_launch,
   CC_ERR_OUT_OF_MEMORY. Cost: a host copy of the memory checked, and per
   op a copy and a comparison of all of it. */
CONCERTO_API cc_result cc_exec_step_checked(cc_exec* exec);
/* Compares the plan's hash with every other member of comm (all must call
   it), through the backend's collective entry. Where any differs:
   CC_ERR_PLAN_MISMATCH naming, on every member, its own op at the first
   place (stream and position) where some member's plan differs, that
   member, and whether the op or collective differs or only its waits. A
   plan with collectives does not launch before this succeeded. Cost: one
   all-gather of 8 bytes; where plans differ, two more (of the plans' sizes
   and 16 bytes an op). */
CONCERTO_API cc_result cc_exec_agree(cc_exec* exec, cc_comm* comm);
/* The members of comm agree on a memory cap before they schedule, as they
   agree on durations: every member calls it (with an exec of any plan on
   its backend, program order's say), and *cap_bytes becomes the smallest
   nonzero cap any member gave (0 where all gave 0), so every rank solves
   under the same cc_sched_desc.memory_cap_bytes and plans the same order.
   Errors: the backend's (as cc_exec_agree). Cost: one all-gather. */
CONCERTO_API cc_result cc_exec_agree_cap(cc_exec* exec, cc_comm* comm, uint64_t* cap_bytes);
/* Enqueues one step and returns; cc_exec_wait waits for it. */
CONCERTO_API cc_result cc_exec_launch(cc_exec* exec);
CONCERTO_API cc_result cc_exec_wait(cc_exec* exec);
CONCERTO_API cc_result cc_exec_step(cc_exec* exec);           /* launch + wait */
/* Start and end of every op (by op index) in the last step, in us from the
   step's launch, where the backend has timestamps. */
CONCERTO_API cc_result cc_exec_timeline(cc_exec* exec, double* start_us, double* end_us);
/* Profiling sets the graph's durations and executor costs (cc_exec_costs,
   collective start-ups) from measurements on the backend, so that
   predictions and schedules use them. Three ways, one call each; the
   members of comm (NULL: this rank alone) all call it and agree on the
   figures, so that they compute the same schedule. Why each way measures
   what it does: the >>profile section comment.

   cc_exec_profile_ops: every op alone, repeats (1..1000) times each in
   plan order; each duration is the median, agreed as the maximum over
   comm. Also measures an op's launch, a blocking cross-stream wait, each
   communicator's start-up and the overlap slowdowns, and, for every
   compute op that decomposes, one chunk of it (its first eighth, quarter
   or half), fitting what a chunk costs (cc_chunk_cost). Needs
   cc_exec_agree first where the plan has collectives
   (CC_ERR_PLAN_MISMATCH), and timestamps or a clock (CC_ERR_UNSUPPORTED).
   Cost: repeats runs of every op, one at a time, and of one chunk of each
   op that decomposes.

   cc_exec_profile_steps: steps (1..1000) whole steps, run back to back by
   the library (cc_exec_step); each duration is the mean of the op's times
   in them, and the launch and wait costs the mean gaps the timelines show,
   agreed as the mean over comm; the overlap slowdowns are set to none.
   Steps recorded before (cc_exec_profile_loop_step) are dropped. Needs
   per-op timestamps (CC_ERR_UNSUPPORTED without: no timestamps, a
   replayed CUDA graph). Cost: steps steps, run on the state as it is.

   Both run the real ops on the real memory and put back what they
   change where the executor knows it (cc_exec_bind_buffer, the arena),
   as cc_exec_allow_profile_writes says: an op writing a bound buffer
   not bound is refused (CC_ERR_INVALID_ARG naming it) unless allowed.
   The copy costs host memory the size of the arena and the buffers
   bound.

   cc_exec_profile_loop_step, after each step of the caller's own loop
   (after cc_exec_wait or cc_exec_step): records that step.
   cc_exec_profile_loop_apply then sets the same figures as
   cc_exec_profile_steps from the steps recorded (each member having
   recorded its own) and starts afresh. Errors: a second record before the
   next step, or an apply with none recorded, CC_ERR_INVALID_ARG (nothing
   changes); a step without per-op times, CC_ERR_UNSUPPORTED (nothing is
   recorded); a 1001st record before an apply, CC_ERR_INVALID_ARG. Cost:
   a simulation of the step per record.

   For all three: repeats or steps out of range, or a step still running,
   are CC_ERR_INVALID_ARG; a failed collective's or op's error is
   returned, naming it. */
CONCERTO_API cc_result cc_exec_profile_ops(cc_exec* exec, int repeats, cc_comm* comm);
CONCERTO_API cc_result cc_exec_profile_steps(cc_exec* exec, int steps, cc_comm* comm);
CONCERTO_API cc_result cc_exec_profile_loop_step(cc_exec* exec);
CONCERTO_API cc_result cc_exec_profile_loop_apply(cc_exec* exec, cc_comm* comm);
/* The last profile of steps (cc_exec_profile_steps or
   cc_exec_profile_loop_apply) as it predicts the plan's step: each step
   recorded, simulated in the plan's order from its own op times and gaps
   (agreed step by step as the mean over comm, so members need the same
   number of steps). These makespans exceed cc_simulate's from the mean
   durations (see >>profile). CC_ERR_INVALID_ARG before such a profile was
   applied, or for out NULL. Cost: a copy. */
typedef struct cc_profile_result {
    int steps;                  /* in the profile */
    double makespan_median_us;  /* of the steps, each simulated as above */
    double makespan_mean_us;
    double exposed_median_us;   /* of the steps' exposed communication (cc_exposed_comm_us) */
} cc_profile_result;
CONCERTO_API cc_result cc_exec_query_profile(cc_exec* exec, cc_profile_result* out);
/* ---- world: ranks as threads in one process ------------------------------
   N ranks, each a thread with its own context, running fn; ranks are grouped
   into nodes of ranks_per_node. Collectives between them move real data:
   - reductions run in rank order in the element type, so every rank gets
     bit-identical results (int32 sums wrap, int32 averages truncate);
     float16 and bfloat16 are added in float and rounded to the element
     type after every addition (to nearest, ties to even: the result of
     exact arithmetic rounded once), and an average is that sum divided by
     the number of members, rounded the same way;
   - a rank's collectives on one communicator run in the order issued, from
     any of its threads; send and recv pair by order per (source, destination);
   - members that issue different collectives at the same position get
     CC_ERR_COLL_MISMATCH (naming both), a member missing after timeout_s
     gives CC_ERR_TIMEOUT; either makes the communicator unusable (later
     calls fail at once, quoting the first error);
   - a rank whose fn fails aborts the world: collectives waiting on it fail
     with CC_ERR_BACKEND and the world cannot run again;
   - with emulate_link a collective completes no earlier than the last
     member's arrival plus cc_coll_us, CC_ALGO_FLAT, on intra_node if every member is
     on one node (rank / ranks_per_node), else on inter_node.
   The world and every rank's context use the allocator and logger of the
   context it is created with; they are called from every rank's thread and
   must be thread-safe. */
typedef struct cc_world cc_world;

typedef struct cc_world_desc {
    int n_ranks;               /* >= 1, required (a NULL desc: 1) */
    int ranks_per_node;        /* 0: all ranks on one node */
    int emulate_link;          /* 1: a collective takes its modelled time (spent waiting) */
    const cc_link* intra_node; /* copied; NULL: the default, 2 us + 100 GB/s. A link of zeros is free */
    const cc_link* inter_node; /* copied; NULL: the default, 10 us + 12.5 GB/s */
    double timeout_s;          /* seconds of the monotonic clock: a rank that has waited this
                                  long for the other members of a collective fails it; 0: 30 s */
    /* NULL: none. Called on every thread of a rank as it starts, before
       it runs anything of the rank's: the rank's own thread (stream -1)
       and each stream worker of a CPU backend made for the rank
       (cc_cpu_backend_create; the stream's index). Where an application
       places threads on cores: ranks of one process share the machine's
       cores, and where the operating system moves their threads between
       cores a step's time jumps between regimes, which no profile
       predicts; a rank
       kept to its own cores runs its steps alike. The library sets no
       affinity itself (that is not portable C). */
    void (*thread_start)(int rank, int stream, void* user);
    void* thread_start_user;
    /* 1: every collective checks the data it moves. Each member computes a
       checksum (64-bit FNV-1a) of the bytes it contributes as it issues the
       collective (all_reduce, reduce_scatter, all_gather and all_to_all:
       its send buffer; broadcast: the root's; send: the sender's), and
       the data is checked against it where it is received, before any of it
       is written. Data that changed in between fails the collective on
       every member with CC_ERR_BACKEND, naming the collective and the rank
       whose data arrived corrupted; the communicator is then unusable, as
       after a mismatch. Cost: one pass over the contributed bytes when
       issued and one when received. 0: off. */
    int checksum;
    /* For tests of checksum only; 0: off. test_flip_rank = r + 1 flips one
       bit of world rank r's data in flight (after its checksum, in a copy:
       its buffer is not changed) in the world communicator's collective
       #test_flip_collective (counted from 0 in issue order) and in its
       send #test_flip_collective to each member on that communicator. */
    int test_flip_rank;
    int test_flip_collective;
} cc_world_desc;

/* The desc as cc_world_create resolves it (NULL: one rank, every other
   field zero): every
   default filled in, the links pointing at the library's constant default
   links where the desc had none. Nothing is checked. */
CONCERTO_API cc_world_desc cc_world_query_defaults(const cc_world_desc* desc);
/* desc may be NULL (one rank). Errors are recorded in ctx, whose allocator
   and logger the world and its ranks use; the world does not keep ctx. */
CONCERTO_API cc_result   cc_world_create(cc_context* ctx, const cc_world_desc* desc, cc_world** out);
CONCERTO_API void        cc_world_destroy(cc_world* world);
/* Runs fn on every rank, each on its own thread, and waits for them. Returns
   the first non-CC_OK result of a rank (its message is in
   cc_world_error), or CC_OK. */
CONCERTO_API cc_result   cc_world_run(cc_world* world, cc_result (*fn)(cc_rank* rank, void* user_data), void* user_data);
CONCERTO_API const char* cc_world_error(const cc_world* world);
CONCERTO_API int         cc_rank_index(const cc_rank* rank);
CONCERTO_API int         cc_rank_count(const cc_rank* rank);
CONCERTO_API cc_context* cc_rank_context(cc_rank* rank);
/* The communicator of all ranks (borrowed). */
CONCERTO_API cc_comm*    cc_rank_world_comm(cc_rank* rank);
/* A communicator of the given world ranks, in that order; every member calls
   it with the same list (other ranks must not). It belongs to the world
   (freed with it), as do those cc_comm_split makes of world communicators.
   The world's communicators are of the family "world" with stream kind
   "host"; a collective on one must be issued from its own rank's threads. */
CONCERTO_API cc_result   cc_comm_create(cc_rank* rank, const int* members, int n_members, cc_comm** out);

/* The CPU backend of a rank: one worker thread per stream; collectives on
   the rank's communicators of the in-process world, and on communicators of
   any other family with "host" streams (MPI's in concerto_mpi.h, your own).
   A collective that fails on a stream calls its family's abort entry, where
   there is one, so that peers waiting for this rank fail too (the world has
   none: its collectives fail on every member by themselves). */
CONCERTO_API cc_result cc_cpu_backend_create(cc_rank* rank, cc_backend* out);
/* The same backend for a process that is one rank of a job (under mpirun,
   say), from its context alone: its errors go to ctx, whose allocator must
   then be thread-safe (the stream threads use it). It runs collectives of
   host-stream families other than the world, whose communicators belong to
   a cc_rank (those are refused). */
CONCERTO_API cc_result cc_cpu_backend_create_ctx(cc_context* ctx, cc_backend* out);
#endif /* CONCERTO_NO_RUNTIME */

/* ---- trace ----------------------------------------------------------------
   Chrome trace event JSON (chrome://tracing, Perfetto): one process per
   rank, one track per stream, an event per op with its collective's kind
   and size in the arguments. cc_trace_add may be called from every rank's
   thread at once. */
typedef struct cc_trace cc_trace;
CONCERTO_API cc_result cc_trace_create(cc_context* ctx, cc_trace** out);
CONCERTO_API void      cc_trace_destroy(cc_trace* trace);
/* Adds the ops of graph as process pid (shown as process_name): start_us and
   end_us by op index (end_us NULL: start + duration). */
CONCERTO_API cc_result cc_trace_add(cc_trace* trace, cc_graph* graph, int pid, const char* process_name,
                                    const double* start_us, const double* end_us);
CONCERTO_API cc_result cc_trace_write(cc_trace* trace, const char* path);
/* The graph as Graphviz DOT: one cluster per stream, an edge per dependency. */
CONCERTO_API cc_result cc_graph_write_dot(cc_context* ctx, cc_graph* graph, const char* path);

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_H_INCLUDED */

/* ========================================================================
   IMPLEMENTATION
   ======================================================================== */
#if defined(CONCERTO_IMPLEMENTATION) && !defined(CONCERTO_IMPL_INCLUDED)
#define CONCERTO_IMPL_INCLUDED

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <stdarg.h>
#include <math.h>
#include <time.h>
#include <errno.h>
#ifndef CONCERTO_NO_RUNTIME
#include <pthread.h>
#include <unistd.h>
#if !defined(_POSIX_C_SOURCE) || _POSIX_C_SOURCE < 200809L
#error "concerto.h: the implementation needs POSIX 2008 (threads, clocks): compile it with -std=gnu99 or later, or #define _POSIX_C_SOURCE 200809L before any #include in that file (or define CONCERTO_NO_RUNTIME for the scheduler alone)"
#endif
#endif
#ifdef CONCERTO_USE_LPSOLVE
#include <lpsolve/lp_lib.h>
#endif

/* Invariants: what the code relies on and no input can break. Off by
   default; the tests define it as assert(). */
#ifndef CONCERTO_ASSERT
#define CONCERTO_ASSERT(x) ((void)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>core
   What every section needs: the context with its allocator and errors,
   formatted messages, the one clock, a random generator, hashing, a string
   pool, element sizes and names, byte ranges, a heap, topological order,
   and time in integer ticks. */
#define CONCERTO__MSG_MAX 512

struct cc_context {
    cc_allocator alloc;
    cc_logger logger;
    int rank;
    cc_result last_result;
    char last_error[CONCERTO__MSG_MAX];
    uint32_t n_graphs;          /* graphs created: their serials */
    struct cc_graph* graphs;    /* the live ones, a list (to name a handle's graph) */
    int bnb_shave_depth;        /* tests only (tests/test_exact_shave.c sets it): branch and bound's
                                   nodes of fewer placed jobs shave their windows; 0: none do */
};

CONCERTO_API const char* cc_result_description(cc_result result) {
    switch (result) {
#define CONCERTO__RESULT_CASE(name, value, text) case name: return text;
        CONCERTO__RESULTS(CONCERTO__RESULT_CASE)
#undef CONCERTO__RESULT_CASE
        default: return "unknown result";
    }
}

/* ---- messages ------------------------------------------------------------*/
#if defined(__GNUC__) || defined(__clang__)
#define CONCERTO__PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define CONCERTO__PRINTF(f, a)
#endif

static void cc__fmt(char* buf, size_t size, const char* fmt, ...) CONCERTO__PRINTF(3, 4);
static void cc__append(char* buf, size_t size, const char* fmt, ...) CONCERTO__PRINTF(3, 4);

/* Formats into buf[size], cut to fit. */
static void cc__fmt(char* buf, size_t size, const char* fmt, ...) {
    va_list ap;
    if (!buf || !size) return;
    va_start(ap, fmt);
    vsnprintf(buf, size, fmt, ap);
    va_end(ap);
}

/* Appends to the NUL-terminated string in buf[size], cut to fit. */
static void cc__append(char* buf, size_t size, const char* fmt, ...) {
    va_list ap;
    size_t len = strlen(buf);
    if (len + 1 >= size) return;
    va_start(ap, fmt);
    vsnprintf(buf + len, size - len, fmt, ap);
    va_end(ap);
}

/* Copies a message into dst[n], cut to fit. */
static void cc__copy_msg(char* dst, size_t n, const char* src) {
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

/* Records a failure in ctx (the message, then " (description, file:line)"),
   hands it to the logger, and returns code. */
static cc_result cc__fail(cc_context* ctx, cc_result code, const char* file, int line, const char* fmt, ...) {
    va_list ap;
    size_t pre;
    if (!ctx) return code;
    ctx->last_error[0] = 0;
    if (ctx->rank) cc__fmt(ctx->last_error, CONCERTO__MSG_MAX, "rank %d: ", ctx->rank);
    pre = strlen(ctx->last_error);
    va_start(ap, fmt);
    vsnprintf(ctx->last_error + pre, CONCERTO__MSG_MAX - pre, fmt, ap);
    va_end(ap);
    cc__append(ctx->last_error, CONCERTO__MSG_MAX, " (%s, %s:%d)", cc_result_description(code), file, line);
    ctx->last_result = code;
    if (ctx->logger.log_fn) ctx->logger.log_fn(CC_LOG_ERROR, ctx->last_error, ctx->logger.user_data);
    return code;
}

#ifdef __clang_analyzer__
/* clang's static analyzer does not carry cc__fail's result (always code)
   out of its variadic formatting, and then explores error paths that
   "succeed"; for it alone, the code is also the expression's value. */
#define CONCERTO__FAIL(ctx, code, ...) (cc__fail((ctx), (code), __FILE__, __LINE__, __VA_ARGS__), (code))
#else
#define CONCERTO__FAIL(ctx, code, ...) cc__fail((ctx), (code), __FILE__, __LINE__, __VA_ARGS__)
#endif

/* ---- context and memory --------------------------------------------------*/
static void* cc__default_alloc(size_t n, void* ud) { (void)ud; return malloc(n); }
static void* cc__default_realloc(void* p, size_t n, void* ud) { (void)ud; return realloc(p, n); }
static void  cc__default_free(void* p, void* ud) { (void)ud; free(p); }

CONCERTO_API cc_context_desc cc_context_query_defaults(const cc_context_desc* desc) {
    cc_context_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (!d.allocator.alloc_fn && !d.allocator.realloc_fn && !d.allocator.free_fn) {
        d.allocator.alloc_fn = cc__default_alloc;
        d.allocator.realloc_fn = cc__default_realloc;
        d.allocator.free_fn = cc__default_free;
        d.allocator.user_data = NULL;
    }
    return d;
}

CONCERTO_API cc_result cc_context_create(const cc_context_desc* desc, cc_context** out) {
    cc_context_desc d = cc_context_query_defaults(desc);
    cc_context* ctx;
    int n_set;
    if (!out) return CC_ERR_INVALID_ARG;
    *out = NULL;
    n_set = (d.allocator.alloc_fn != NULL) + (d.allocator.realloc_fn != NULL) + (d.allocator.free_fn != NULL);
    if (n_set != 3) return CC_ERR_INVALID_ARG;  /* all-or-none */
    ctx = (cc_context*)d.allocator.alloc_fn(sizeof *ctx, d.allocator.user_data);
    if (!ctx) return CC_ERR_OUT_OF_MEMORY;
    memset(ctx, 0, sizeof *ctx);
    ctx->alloc = d.allocator;
    ctx->logger = d.logger;
    ctx->rank = d.rank;
    *out = ctx;
    return CC_OK;
}

CONCERTO_API void cc_context_destroy(cc_context* ctx) {
    if (ctx) ctx->alloc.free_fn(ctx, ctx->alloc.user_data);
}

CONCERTO_API const char* cc_last_error(const cc_context* ctx) { return ctx ? ctx->last_error : "no context"; }
CONCERTO_API cc_result cc_last_result(const cc_context* ctx) { return ctx ? ctx->last_result : CC_ERR_INVALID_ARG; }
CONCERTO_API void cc_clear_error(cc_context* ctx) { if (ctx) { ctx->last_error[0] = 0; ctx->last_result = CC_OK; } }

static void* cc__alloc(cc_context* ctx, size_t n) {
    return ctx->alloc.alloc_fn(n ? n : 1, ctx->alloc.user_data);
}

static void* cc__calloc(cc_context* ctx, size_t count, size_t size) {
    void* p;
    size_t total;
    if (size && count > (size_t)-1 / size) return NULL;
    total = count * size;
    p = cc__alloc(ctx, total);
    if (p) memset(p, 0, total ? total : 1);
    return p;
}

static void cc__free(cc_context* ctx, void* p) { if (p) ctx->alloc.free_fn(p, ctx->alloc.user_data); }

/* Grows *pp to hold at least need elements of size sz; *cap tracks capacity. */
static int cc__grow(cc_context* ctx, void** pp, size_t* cap, size_t need, size_t sz) {
    size_t nc;
    void* np;
    if (need <= *cap) return 1;
    nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    if (nc > (size_t)-1 / sz) return 0;
    np = ctx->alloc.realloc_fn(*pp, nc * sz, ctx->alloc.user_data);
    if (!np) return 0;
    *pp = np;
    *cap = nc;
    return 1;
}

#define CONCERTO__GROW(ctx, arr, capv, need) cc__grow((ctx), (void**)&(arr), &(capv), (need), sizeof *(arr))

/* ---- files written whole ------------------------------------------------------
   Every file the library writes goes through a cc__afile: the bytes go to a
   temporary file beside the destination (path.tmp.PID; path.tmp in a
   CONCERTO_NO_RUNTIME build, which has no process id), which
   cc__afile_commit flushes, fsyncs (not in a CONCERTO_NO_RUNTIME build),
   closes and renames over the destination. A process killed at any point
   leaves the old file whole; on an error the temporary is removed, the old
   file is left as it was and the error names the file. No allocation. */
typedef struct cc__afile {
    FILE* f;
    const char* path;
    char tmp[4128];
} cc__afile;

static cc_result cc__afile_open(cc_context* ctx, cc__afile* a, const char* path, const char* who) {
    int k;
    a->f = NULL;
    a->path = path;
#ifdef CONCERTO_NO_RUNTIME
    k = snprintf(a->tmp, sizeof a->tmp, "%s.tmp", path);
#else
    k = snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid());
#endif
    if (k < 0 || (size_t)k >= sizeof a->tmp)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: path '%s' is too long (%d bytes at most)", who, path,
                              (int)sizeof a->tmp - 32);
    a->f = fopen(a->tmp, "wb");
    if (!a->f)
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "%s: cannot write '%s': cannot create its temporary file '%s': %s", who, path,
                              a->tmp, strerror(errno));
    return CC_OK;
}

static cc_result cc__afile_commit(cc_context* ctx, cc__afile* a, const char* who) {
    int bad = ferror(a->f) != 0, err = 0;
    if (!bad && fflush(a->f) != 0) { bad = 1; err = errno; }
#ifndef CONCERTO_NO_RUNTIME
    if (!bad && fsync(fileno(a->f)) != 0) { bad = 1; err = errno; }
#endif
    if (fclose(a->f) != 0 && !bad) { bad = 1; err = errno; }
    a->f = NULL;
    if (!bad && rename(a->tmp, a->path) != 0) {
        err = errno;
        (void)remove(a->tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "%s: cannot write '%s': cannot rename its temporary file over it: %s", who,
                              a->path, strerror(err));
    }
    if (bad) {
        (void)remove(a->tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_IO, "%s: error writing '%s'%s%s (the file is left as it was)", who, a->path,
                              err ? ": " : "", err ? strerror(err) : "");
    }
    return CC_OK;
}

/* ---- the clock -------------------------------------------------------------
   One clock for every time limit, timeout and timestamp: the monotonic
   clock (CLOCK_MONOTONIC), in seconds. A CONCERTO_NO_RUNTIME build has no
   POSIX: there it is the processor time of the process (clock()). */
static double cc__now_s(void) {
#ifdef CONCERTO_NO_RUNTIME
    return (double)clock() / (double)CLOCKS_PER_SEC;
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

#ifndef CONCERTO_NO_RUNTIME
/* Helpers that only the backend headers (concerto_cuda.h, concerto_nccl.h)
   call: a translation unit without them does not use them. */
#if defined(__GNUC__) || defined(__clang__)
#define CONCERTO__FOR_BACKENDS static __attribute__((unused))
#else
#define CONCERTO__FOR_BACKENDS static
#endif

CONCERTO__FOR_BACKENDS void cc__sleep_us(double us) {
    struct timespec ts;
    ts.tv_sec = (time_t)(us / 1e6);
    ts.tv_nsec = (long)((us - 1e6 * (double)ts.tv_sec) * 1e3);
    nanosleep(&ts, NULL);
}

/* For loops that poll what cannot be waited on (a device's stream, a
   communicator's asynchronous error): sleeps *nap_us, then doubles it, up
   to 250 us. */
CONCERTO__FOR_BACKENDS void cc__nap(double* nap_us) {
    cc__sleep_us(*nap_us);
    if (*nap_us < 250) *nap_us *= 2;
}
#endif

/* ---- random numbers and hashes --------------------------------------------*/
/* 64-bit splitmix generator: the same stream on every platform. */
static uint64_t cc__rng_next(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double cc__rng_unit(uint64_t* s) { return (double)(cc__rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* FNV-1a, 64 bits: of bytes, and of an integer's 8 little-endian bytes. */
#define CONCERTO__FNV_START 0xCBF29CE484222325ull
static uint64_t cc__fnv(uint64_t h, const void* data, size_t n) {
    const unsigned char* b = (const unsigned char*)data;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001B3ull; }
    return h;
}

static uint64_t cc__fnv_int(uint64_t h, int64_t v) {
    unsigned char b[8];
    int i;
    for (i = 0; i < 8; i++) b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return cc__fnv(h, b, 8);
}

/* ---- a string pool: NUL-terminated strings by offset ----------------------*/
typedef struct cc__strpool { char* s; size_t len, cap; } cc__strpool;

/* Adds str[0..len) and a NUL; *off its offset. 0 when out of memory (the
   pool is unchanged). */
static int cc__strpool_add(cc_context* ctx, cc__strpool* pool, const char* str, size_t len, uint32_t* off) {
    if (pool->len + len + 1 > 0xffffffffu || !CONCERTO__GROW(ctx, pool->s, pool->cap, pool->len + len + 1)) return 0;
    memcpy(pool->s + pool->len, str, len);
    pool->s[pool->len + len] = 0;
    *off = (uint32_t)pool->len;
    pool->len += len + 1;
    return 1;
}

/* ---- element sizes, collectives by name ----------------------------------*/
static size_t cc__dtype_size(cc_dtype dt) {
    switch (dt) {
        case CC_DTYPE_FLOAT32: return 4;
        case CC_DTYPE_FLOAT64: return 8;
        case CC_DTYPE_INT32: return 4;
        case CC_DTYPE_FLOAT16: case CC_DTYPE_BFLOAT16: return 2;
        default: return 0;
    }
}

static const char* cc__coll_name(cc_coll_kind kind) {
    switch (kind) {
        case CC_COLL_NONE: return "none";
        case CC_COLL_ALL_REDUCE: return "all_reduce";
        case CC_COLL_REDUCE_SCATTER: return "reduce_scatter";
        case CC_COLL_ALL_GATHER: return "all_gather";
        case CC_COLL_BROADCAST: return "broadcast";
        case CC_COLL_SEND: return "send";
        case CC_COLL_RECV: return "recv";
        case CC_COLL_ALL_TO_ALL: return "all_to_all";
        default: return "(invalid kind)";
    }
}

#ifndef CONCERTO_NO_RUNTIME   /* names and conversions the runtime's collectives need */
static const char* cc__dtype_name(cc_dtype dt) {
    switch (dt) {
        case CC_DTYPE_FLOAT32: return "float32";
        case CC_DTYPE_FLOAT64: return "float64";
        case CC_DTYPE_INT32: return "int32";
        case CC_DTYPE_FLOAT16: return "float16";
        case CC_DTYPE_BFLOAT16: return "bfloat16";
        default: return "(invalid dtype)";
    }
}

static const char* cc__reduce_name(cc_reduce_op op) {
    switch (op) {
        case CC_REDUCE_SUM: return "sum";
        case CC_REDUCE_AVG: return "avg";
        case CC_REDUCE_MAX: return "max";
        default: return "(invalid op)";
    }
}

/* A collective for messages: "all_reduce of 1024 float32 (sum)", with the
   root of a broadcast and the peer of a send or recv; the backends add the
   communicator and the op. */
static void cc__coll_text(char* buf, size_t size, const cc_collective* c) {
    cc__fmt(buf, size, "%s of %llu %s", cc__coll_name(c->kind), (unsigned long long)c->n_elems, cc__dtype_name(c->dtype));
    if (c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_REDUCE_SCATTER)
        cc__append(buf, size, " (%s)", cc__reduce_name(c->reduce));
    if (c->kind == CC_COLL_BROADCAST) cc__append(buf, size, " from root %d", c->peer);
    if (c->kind == CC_COLL_SEND) cc__append(buf, size, " to rank %d", c->peer);
    if (c->kind == CC_COLL_RECV) cc__append(buf, size, " from rank %d", c->peer);
}

/* ---- half-precision numbers: bit patterns <-> float ------------------------
   Conversions to float are exact; from float they round to nearest, ties to
   even, overflow to infinity, and keep NaN a (quiet) NaN. */
static float cc__bits_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static uint32_t cc__float_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static float cc__bf16_to_float(uint16_t h) { return cc__bits_float((uint32_t)h << 16); }

static uint16_t cc__float_to_bf16(float f) {
    uint32_t u = cc__float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x0040u);   /* NaN stays NaN */
    u += 0x7fffu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float cc__f16_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f) return cc__bits_float(sign | 0x7f800000u | (m << 13));   /* inf, NaN */
    if (e == 0) {   /* zero and subnormals: m * 2^-24 is exact in float */
        float v = (float)m * (1.0f / 16777216.0f);
        return sign ? -v : v;
    }
    return cc__bits_float(sign | ((e + 112u) << 23) | (m << 13));
}

static uint16_t cc__float_to_f16(float f) {
    uint32_t u = cc__float_bits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));   /* NaN */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* rounds to 65536 or above: infinity */
    if (a < 0x38800000u) {   /* below 2^-14: a subnormal (or zero), in units of 2^-24 */
        uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126u - (a >> 23), q, rest, half;
        if (a < 0x33000000u) return (uint16_t)sign;   /* at most 2^-25: rounds to zero */
        q = m >> shift; rest = m & ((1u << shift) - 1u); half = 1u << (shift - 1u);
        if (rest > half || (rest == half && (q & 1u))) q++;
        return (uint16_t)(sign | q);
    }
    a += 0xfffu + ((a >> 13) & 1u);   /* round the 13 dropped bits, ties to even */
    return (uint16_t)(sign | (((a >> 23) - 112u) << 10) | ((a >> 13) & 0x3ffu));
}
#endif

/* ---- byte ranges -----------------------------------------------------------*/
/* 1 if [a, a + n_a) and [b, b + n_b) share a byte (an empty range shares none). */
static int cc__ranges_overlap(uint64_t a, uint64_t n_a, uint64_t b, uint64_t n_b) {
    return n_a && n_b && a < b + n_b && b < a + n_a;
}

/* ---- a binary heap of indices ordered by (key[i], i) ---------------------*/
typedef struct cc__heap { int* a; int n; const double* key; } cc__heap;

static int cc__heap_less(const cc__heap* h, int x, int y) {
    return h->key[x] < h->key[y] || (h->key[x] == h->key[y] && x < y);
}

static void cc__heap_push(cc__heap* h, int v) {
    int i = h->n++;
    while (i > 0) {
        int par = (i - 1) / 2;
        if (!cc__heap_less(h, v, h->a[par])) break;
        h->a[i] = h->a[par];
        i = par;
    }
    h->a[i] = v;
}

static int cc__heap_pop(cc__heap* h) {
    int top = h->a[0], v = h->a[--h->n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && cc__heap_less(h, h->a[c + 1], h->a[c])) c++;
        if (!cc__heap_less(h, h->a[c], v)) break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n > 0) h->a[i] = v;
    return top;
}

/* ---- topological order ------------------------------------------------------
   Kahn's algorithm over the arcs of one or two adjacency lists in CSR form
   (off2/adj2 may be NULL): out[] gets the nodes in an order where every arc
   goes forwards, first-in first-out from the sources in index order, a
   node's arcs of the first list before those of the second. left[n] is
   scratch; on return it holds the arcs still unresolved (> 0 only on a
   cycle). Returns how many nodes were ordered: n unless there is a cycle. */
static int cc__topo_order(int n, const int* off1, const int* adj1, const int* off2, const int* adj2, int* left, int* out) {
    int i, e, head = 0, tail = 0, pass;
    for (i = 0; i < n; i++) left[i] = 0;
    for (i = 0; i < n; i++) {
        for (e = off1[i]; e < off1[i + 1]; e++) left[adj1[e]]++;
        if (off2) for (e = off2[i]; e < off2[i + 1]; e++) left[adj2[e]]++;
    }
    for (i = 0; i < n; i++) if (!left[i]) out[tail++] = i;
    while (head < tail) {
        int v = out[head++];
        for (pass = 0; pass < 2; pass++) {
            const int* off = pass ? off2 : off1;
            const int* adj = pass ? adj2 : adj1;
            if (!off) continue;
            for (e = off[v]; e < off[v + 1]; e++)
                if (--left[adj[e]] == 0) out[tail++] = adj[e];
        }
    }
    return tail;
}

/* Helpers that only concerto_rcpsp.h and the lp_solve backend call: a
   translation unit with neither does not use them. */
#if defined(__GNUC__) || defined(__clang__)
#define CONCERTO__FOR_SEARCH static __attribute__((unused))
#else
#define CONCERTO__FOR_SEARCH static
#endif

/* Each node's successors, transitively, as bitsets of nw words a node
   (reach, zeroed by the caller), over the arcs off/adj in CSR form, along
   topo (a topological order of all n nodes) backwards. */
CONCERTO__FOR_SEARCH void cc__reach(int n, const int* off, const int* adj, const int* topo, size_t nw, uint64_t* reach) {
    int i, e;
    size_t x;
    for (i = n - 1; i >= 0; i--) {
        int v = topo[i];
        uint64_t* rv = reach + (size_t)v * nw;
        for (e = off[v]; e < off[v + 1]; e++) {
            int s2 = adj[e];
            const uint64_t* rs = reach + (size_t)s2 * nw;
            for (x = 0; x < nw; x++) rv[x] |= rs[x];
            rv[s2 >> 6] |= (uint64_t)1 << (s2 & 63);
        }
    }
}

/* ---- demands ---------------------------------------------------------------*/
/* How a job with demand row dem[k] uses resources of capacities cap[k]: the
   number of resources it demands anything of; *first the first of them (-1
   for none); *unary (if not NULL) 1 if each such demand is 1 of a resource
   of capacity 1 (a stream). */
static int cc__demand_use(const int32_t* dem, const int32_t* cap, int k, int* first, int* unary) {
    int r, c = 0;
    *first = -1;
    if (unary) *unary = 1;
    for (r = 0; r < k; r++) {
        if (!dem[r]) continue;
        if (c++ == 0) *first = r;
        if (unary && (dem[r] != 1 || cap[r] != 1)) *unary = 0;
    }
    return c;
}

/* ---- time: integer ticks ---------------------------------------------------
   Durations are given in microseconds and scheduled as integer
   nanoseconds, so schedules are exact and the same on every machine. */
typedef int64_t cc__time;
#define CONCERTO__TIME_MAX ((cc__time)INT64_MAX / 4)
#define CONCERTO__TICKS_PER_US 1000.0

static cc__time cc__gcd(cc__time a, cc__time b) { while (b) { cc__time t = a % b; a = b; b = t; } return a; }

/* ---- communicators: the part every family shares --------------------------
   A family embeds a struct cc_comm in its own per-rank object (the world) or
   has cc_comm_wrap allocate one (wrapped: cc_comm_destroy frees it). */
struct cc_comm {
    const cc_comm_fns* fns;
    void* self;
    cc_context* ctx;           /* errors of cc_comm_run and cc_comm_split */
    int rank, size;
    const char* name;
    int wrapped;
};

static void cc__comm_init(cc_comm* c, const cc_comm_fns* fns, void* self, cc_context* ctx, int rank, int size,
                          const char* name) {
    c->fns = fns; c->self = self; c->ctx = ctx; c->rank = rank; c->size = size; c->name = name; c->wrapped = 0;
}

CONCERTO_API cc_result cc_comm_wrap(cc_context* ctx, const cc_comm_fns* fns, void* self, int rank, int size,
                                    const char* name, cc_comm** out) {
    cc_comm* c;
    size_t len;
    if (out) *out = NULL;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_wrap: out is NULL");
    if (!fns || !fns->collective)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_wrap: %s", fns ? "fns has no collective entry" : "fns is NULL");
    if (size < 1 || rank < 0 || rank >= size)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_wrap '%s': rank %d of size %d (need 0 <= rank < size)",
                              name ? name : "comm", rank, size);
    if (!name) name = "comm";
    len = strlen(name);
    c = (cc_comm*)cc__alloc(ctx, sizeof *c + len + 1);
    if (!c) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_comm_wrap '%s': out of memory", name);
    memcpy((char*)(c + 1), name, len + 1);
    cc__comm_init(c, fns, self, ctx, rank, size, (const char*)(c + 1));
    c->wrapped = 1;
    *out = c;
    return CC_OK;
}

CONCERTO_API void cc_comm_destroy(cc_comm* c) {
    if (!c || !c->wrapped) return;
    if (c->fns->destroy) c->fns->destroy(c->self);
    cc__free(c->ctx, c);
}

CONCERTO_API int cc_comm_rank(const cc_comm* c) { return c ? c->rank : -1; }

CONCERTO_API int cc_comm_size(const cc_comm* c) { return c ? c->size : 0; }

CONCERTO_API const char* cc_comm_name(const cc_comm* c) { return c ? c->name : ""; }

CONCERTO_API const char* cc_comm_family(const cc_comm* c) { return c && c->fns->family ? c->fns->family : ""; }

CONCERTO_API void* cc_comm_self(const cc_comm* c, const cc_comm_fns* fns) { return c && fns && c->fns == fns ? c->self : NULL; }

#ifndef CONCERTO_NO_RUNTIME
static const char* cc__comm_stream_kind(const cc_comm* c) { return c->fns->stream_kind ? c->fns->stream_kind : "host"; }
#endif

CONCERTO_API cc_result cc_comm_split(cc_comm* c, int color, int key, cc_comm** out) {
    if (out) *out = NULL;
    if (!c) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(c->ctx, CC_ERR_INVALID_ARG, "cc_comm_split %s: out is NULL", c->name);
    if (!c->fns->split)
        return CONCERTO__FAIL(c->ctx, CC_ERR_UNSUPPORTED, "cc_comm_split %s: the family '%s' cannot split communicators",
                              c->name, cc_comm_family(c));
    return c->fns->split(c->self, color, key, out);
}

CONCERTO_API cc_result cc_comm_run(const cc_collective* coll) {
    char msg[CONCERTO__MSG_MAX];
    cc_result r;
    if (!coll || !coll->comm) return CC_ERR_INVALID_ARG;   /* no context to tell */
    msg[0] = 0;
    r = coll->comm->fns->collective(coll->comm->self, NULL, coll, msg, sizeof msg);
    if (r != CC_OK) return CONCERTO__FAIL(coll->comm->ctx, r, "%s", msg[0] ? msg : cc_result_description(r));
    return CC_OK;
}

/* >>graph
   Operations (a structure of arrays), buffers and their accesses, explicit
   edges, handles checked against their graph, and validation: the region
   dependencies derived, both adjacency lists, a topological order, cycles
   named. */

typedef struct cc__access {
    uint32_t op, buffer;        /* indices */
    uint64_t offset, n_bytes;   /* the bounding range: from the first row's start to the last row's end */
    uint64_t split_rows;        /* cc_region's: how decomposition cuts it */
    uint64_t rows, row_bytes, stride;   /* rows of row_bytes, stride apart; contiguous: rows 1, row_bytes n_bytes */
    int is_write;
} cc__access;

/* ---- accesses' bytes ------------------------------------------------------
   An access is rows of row_bytes bytes, stride apart (a contiguous one is
   one row). These answer questions about its bytes exactly; code that only
   needs a superset uses the bounding range [offset, offset + n_bytes). */

/* The bytes an access touches (rows * row_bytes; no overflow: validated). */
static uint64_t cc__acc_bytes(const cc__access* x) { return x->rows * x->row_bytes; }

/* 1 if x (at base bx) touches a byte of [lo, hi) (at the same base). */
static int cc__acc_hits_range(const cc__access* x, uint64_t bx, uint64_t lo, uint64_t hi) {
    uint64_t o = bx + x->offset, jlo, jhi;
    if (!x->row_bytes || lo >= hi || hi <= o || o + x->n_bytes <= lo) return 0;
    if (x->rows <= 1) return 1;
    /* rows j with o + j*stride < hi and o + j*stride + row_bytes > lo */
    jlo = lo < o + x->row_bytes ? 0 : (lo - o - x->row_bytes) / x->stride + 1;
    jhi = (hi - o - 1) / x->stride;
    if (jhi > x->rows - 1) jhi = x->rows - 1;
    return jlo <= jhi;
}

/* 1 if accesses x (at base bx) and y (at base by) share a byte: the rows of
   the one with fewer rows, each tested against the other in O(1), so
   O(min(rows)). Buffers are not compared (the caller knows they match). */
static int cc__acc_overlap_at(const cc__access* x, uint64_t bx, const cc__access* y, uint64_t by) {
    uint64_t r;
    if (!cc__ranges_overlap(bx + x->offset, x->n_bytes, by + y->offset, y->n_bytes) || !x->row_bytes || !y->row_bytes) return 0;
    if (x->rows > y->rows) { const cc__access* t = x; uint64_t tb = bx; x = y; bx = by; y = t; by = tb; }
    for (r = 0; r < x->rows; r++) {
        uint64_t lo = bx + x->offset + r * x->stride;
        if (cc__acc_hits_range(y, by, lo, lo + x->row_bytes)) return 1;
    }
    return 0;
}

/* 1 if accesses x and y, of one buffer, share a byte. */
static int cc__acc_overlap(const cc__access* x, const cc__access* y) { return cc__acc_overlap_at(x, 0, y, 0); }

/* 1 if x covers every byte of the bounding range [lo, hi) of an access
   (exact for a contiguous x; a strided x is said to cover nothing, which
   only keeps more records). */
static int cc__acc_covers(const cc__access* x, uint64_t lo, uint64_t hi) {
    return x->rows <= 1 && lo >= x->offset && hi <= x->offset + x->n_bytes;
}

/* The work of a chunk op made by decomposition (>>rewrite): the user's chunk
   function, its user_data and which chunk. The graph owns these records
   (recs); a chunk op's fn is cc__chunk_trampoline and its user_data a record. */
typedef struct cc__chunk_rec {
    cc_op_chunk_fn fn;
    void* user_data;
    int chunk, n_chunks;
    cc_op_part_fn part;          /* an op split by its rule: part(stream, user_data, &sc) instead of fn */
    cc_split_chunk sc;
} cc__chunk_rec;

static void cc__chunk_trampoline(void* stream, void* user_data) {
    const cc__chunk_rec* r = (const cc__chunk_rec*)user_data;
    if (r->part) r->part(stream, r->user_data, &r->sc);
    else r->fn(stream, r->user_data, r->chunk, r->n_chunks);
}

/* A copy op made by a rewrite (>>copy): its fn is cc__copy_fn (a marker,
   never called) and its user_data a record the graph owns (copies). It
   copies its first read region into its first write region (same byte
   count; either contiguous, or both strided with the same rows); src
   (dst) is that region's address, or NULL where cc_exec_create resolves
   it from the region in a transient buffer. */
typedef struct cc__copy_rec {
    const void* src;
    void* dst;
} cc__copy_rec;

static void cc__copy_fn(void* stream, void* user_data) { (void)stream; (void)user_data; }

typedef struct cc__startup { const cc_comm* comm; double us; } cc__startup;

/* An op's split rule as the graph keeps it: the desc's (its name NULL),
   the name's offset into the graph's names, the chunk work. */
typedef struct cc__split_rec {
    cc_split s;
    uint32_t name;
    cc_op_part_fn part_fn;
} cc__split_rec;

struct cc_graph {
    cc_context* ctx;
    uint32_t serial;            /* in every handle of the graph */
    uint32_t gname;             /* its name: offset into names */
    struct cc_graph* next_live; /* the context's list of live graphs */
    int k;                      /* resources */
    int stream_mode;            /* 1: every resource is a stream of capacity 1 */
    int32_t cap[CONCERTO_MAX_RESOURCES];
    uint32_t res_name[CONCERTO_MAX_RESOURCES];   /* offsets into names */
    /* ops, structure of arrays */
    int n;  size_t ops_cap;
    cc__time* dur;              /* ticks */
    double* dur_us;
    int32_t* dem;               /* [n*k] */
    uint32_t* name;             /* offsets into names */
    void** user_data;
    cc_op_fn* fn;
    cc_op_chunk_fn* chunk_fn;
    int* coll_of;               /* index into colls, or -1 */
    int* split_of;              /* index into splits, or -1 */
    size_t dem_cap, dur_us_cap, name_cap, ud_cap, fn_cap, chunk_fn_cap, coll_of_cap, split_of_cap;
    cc_chunk_cost* ccost;       /* [n] what a chunk costs, where has_ccost[i] (cc_op_set_chunk_cost) */
    unsigned char* has_ccost;
    size_t ccost_cap, has_ccost_cap;
    cc__split_rec* splits; size_t n_splits, splits_cap;
    cc_rewrite_context* rw_ctx; int n_rw_ctx;   /* what the decomposition that made the graph split; strings owned */
    cc_collective* colls; size_t n_colls, colls_cap;
    /* explicit edges */
    int* e_from; int* e_to; size_t n_e, e_from_cap, e_to_cap;
    /* buffer accesses in program order */
    cc__access* acc; size_t n_acc, acc_cap;
    /* buffers */
    uint64_t* buf_bytes; uint32_t* buf_name; int n_buf; size_t buf_cap, buf_name_cap;
    unsigned char* buf_transient; size_t buf_tr_cap;   /* [n_buf] 1: placed by the library */
    cc__strpool names;          /* of ops, buffers, resources */
    cc_exec_costs costs;        /* cc_graph_set_exec_costs */
    cc__startup* startup;       /* cc_graph_set_coll_startup, [n_startup] */
    size_t n_startup, startup_cap;
    /* chunk records of decomposed ops, each its own allocation (stable addresses) */
    cc__chunk_rec** recs; size_t n_recs, recs_cap;
    /* records of copy ops (cc__copy_rec), each its own allocation */
    cc__copy_rec** copies; size_t n_copies, copies_cap;
    /* derived after validate */
    int valid;
    int *pred_off, *pred, *succ_off, *succ;
    int* topo;                  /* a topological order */
    size_t n_edges;
    /* transient buffers after validate: n_mb of them, mb_buf[m] the buffer,
       mb_alloc[m] its first writer; users (distinct ops, the writer among
       them) mb_user[mb_user_off[m] ..]; each op's transient buffers
       op_mb[op_mb_off[i] ..] */
    int n_mb;
    int *mb_buf, *mb_alloc, *mb_user_off, *mb_user, *op_mb_off, *op_mb;
    uint64_t* mb_bytes;
};

CONCERTO_API cc_graph_desc cc_graph_query_defaults(const cc_graph_desc* desc) {
    cc_graph_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if (d.n_resources == 0 && d.n_streams == 0) d.n_streams = 2;
    return d;
}

static void cc__graph_invalidate(cc_graph* g) {
    cc_context* ctx = g->ctx;
    cc__free(ctx, g->pred_off); cc__free(ctx, g->pred);
    cc__free(ctx, g->succ_off); cc__free(ctx, g->succ);
    cc__free(ctx, g->topo);
    g->pred_off = g->pred = g->succ_off = g->succ = g->topo = NULL;
    cc__free(ctx, g->mb_buf); cc__free(ctx, g->mb_alloc); cc__free(ctx, g->mb_user_off); cc__free(ctx, g->mb_user);
    cc__free(ctx, g->op_mb_off); cc__free(ctx, g->op_mb); cc__free(ctx, g->mb_bytes);
    g->mb_buf = g->mb_alloc = g->mb_user_off = g->mb_user = g->op_mb_off = g->op_mb = NULL;
    g->mb_bytes = NULL;
    g->n_mb = 0;
    g->valid = 0;
}

CONCERTO_API void cc_graph_destroy(cc_graph* g) {
    cc_context* ctx;
    cc_graph** link;
    if (!g) return;
    ctx = g->ctx;
    for (link = &ctx->graphs; *link; link = &(*link)->next_live)
        if (*link == g) { *link = g->next_live; break; }
    cc__graph_invalidate(g);
    cc__free(ctx, g->dur); cc__free(ctx, g->dur_us); cc__free(ctx, g->dem);
    cc__free(ctx, g->name); cc__free(ctx, g->user_data);
    cc__free(ctx, g->fn); cc__free(ctx, g->chunk_fn); cc__free(ctx, g->coll_of); cc__free(ctx, g->colls);
    cc__free(ctx, g->split_of); cc__free(ctx, g->splits);
    cc__free(ctx, g->ccost); cc__free(ctx, g->has_ccost);
    while (g->n_rw_ctx) {
        cc_rewrite_context* rc = &g->rw_ctx[--g->n_rw_ctx];
        cc__free(ctx, (char*)rc->collective); cc__free(ctx, (char*)rc->ops);
    }
    cc__free(ctx, g->rw_ctx);
    while (g->n_recs) cc__free(ctx, g->recs[--g->n_recs]);
    cc__free(ctx, g->recs);
    while (g->n_copies) cc__free(ctx, g->copies[--g->n_copies]);
    cc__free(ctx, g->copies);
    cc__free(ctx, g->e_from); cc__free(ctx, g->e_to); cc__free(ctx, g->acc);
    cc__free(ctx, g->buf_bytes); cc__free(ctx, g->buf_name); cc__free(ctx, g->buf_transient); cc__free(ctx, g->names.s);
    cc__free(ctx, g->startup);
    cc__free(ctx, g);
}

/* Every problem of a resolved graph desc, or CC_OK. */
static cc_result cc__graph_desc_check(cc_context* ctx, const cc_graph_desc* d) {
    int r;
    if (d->n_resources < 0 || d->n_resources > CONCERTO_MAX_RESOURCES)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_resources must be 0..%d, got %d",
                              CONCERTO_MAX_RESOURCES, d->n_resources);
    if (d->n_resources > 0 && !d->capacities)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_resources = %d but capacities is NULL", d->n_resources);
    if (d->n_resources == 0 && (d->n_streams < 1 || d->n_streams > CONCERTO_MAX_RESOURCES))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_streams must be 1..%d, got %d",
                              CONCERTO_MAX_RESOURCES, d->n_streams);
    for (r = 0; r < d->n_resources; r++)
        if (d->capacities[r] < 0)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: resource %d has negative capacity %d", r, d->capacities[r]);
    return CC_OK;
}

/* The names of the graph and of its resources, into its pool. */
static int cc__graph_names(cc_graph* g, const cc_graph_desc* d) {
    const char* const* names = g->stream_mode ? d->stream_names : d->resource_names;
    char buf[32];
    int r;
    const char* gn = d->name;
    if (!gn) { cc__fmt(buf, sizeof buf, "graph%u", (unsigned)g->ctx->n_graphs); gn = buf; }
    if (!cc__strpool_add(g->ctx, &g->names, gn, strlen(gn), &g->gname)) return 0;
    for (r = 0; r < g->k; r++) {
        const char* nm = names && names[r] ? names[r] : buf;
        if (!(names && names[r])) {
            if (!g->stream_mode) cc__fmt(buf, sizeof buf, "R%d", r + 1);
            else if (r == 0) cc__fmt(buf, sizeof buf, "compute");
            else if (r == 1) cc__fmt(buf, sizeof buf, "comm");
            else cc__fmt(buf, sizeof buf, "comm%d", r - 1);
        }
        if (!cc__strpool_add(g->ctx, &g->names, nm, strlen(nm), &g->res_name[r])) return 0;
    }
    return 1;
}

CONCERTO_API cc_result cc_graph_create(cc_context* ctx, const cc_graph_desc* desc, cc_graph** out) {
    cc_graph_desc d = cc_graph_query_defaults(desc);
    cc_graph* g;
    cc_result rc;
    int r;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: out is NULL");
    *out = NULL;
    if ((rc = cc__graph_desc_check(ctx, &d)) != CC_OK) return rc;
    g = (cc_graph*)cc__calloc(ctx, 1, sizeof *g);
    if (!g) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_create: out of memory");
    g->ctx = ctx;
    g->stream_mode = d.n_resources == 0;
    g->k = g->stream_mode ? d.n_streams : d.n_resources;
    for (r = 0; r < g->k; r++) g->cap[r] = g->stream_mode ? 1 : d.capacities[r];
    /* a serial unlikely to be another context's: the count mixed with the
       context's address */
    ctx->n_graphs++;
    g->serial = (uint32_t)cc__fnv_int(cc__fnv_int(CONCERTO__FNV_START, (int64_t)(uintptr_t)ctx), ctx->n_graphs);
    if (!g->serial) g->serial = 1;
    if (!cc__graph_names(g, &d)) {
        cc_graph_destroy(g);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_create: out of memory");
    }
    g->next_live = ctx->graphs;
    ctx->graphs = g;
    *out = g;
    return CC_OK;
}

CONCERTO_API const char* cc_graph_name(const cc_graph* g) { return g ? g->names.s + g->gname : ""; }

/* The name of the graph a handle names, for messages. */
static const char* cc__serial_name(const cc_context* ctx, uint32_t serial) {
    const cc_graph* h;
    if (!serial) return NULL;
    for (h = ctx->graphs; h; h = h->next_live)
        if (h->serial == serial) return h->names.s + h->gname;
    return NULL;
}

/* The index of op handle op in g; else -1 and a message in g's context
   naming who, the handle and both graphs. */
static int cc__op_arg(cc_graph* g, cc_op op, const char* who) {
    const char* other;
    if (op.graph == g->serial && op.id >= 1 && op.id <= (uint32_t)g->n) return (int)op.id - 1;
    if (op.graph == g->serial || op.id == 0)
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_OP, "%s: operation id %u does not exist in graph '%s' (%d ops)", who,
                       (unsigned)op.id, cc_graph_name(g), g->n);
    else if ((other = cc__serial_name(g->ctx, op.graph)) != NULL)
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_OP, "%s: the handle of operation id %u is one of graph '%s', not of graph '%s'",
                       who, (unsigned)op.id, other, cc_graph_name(g));
    else
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_OP, "%s: the handle of operation id %u is not one of graph '%s' (it is of %s)", who,
                       (unsigned)op.id, cc_graph_name(g), op.graph ? "a destroyed graph, or one of another context" : "no graph");
    return -1;
}

/* The same for a buffer handle. */
static int cc__buffer_arg(cc_graph* g, cc_buffer b, const char* who) {
    const char* other;
    if (b.graph == g->serial && b.id >= 1 && b.id <= (uint32_t)g->n_buf) return (int)b.id - 1;
    if (b.graph == g->serial || b.id == 0)
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_BUFFER, "%s names unknown buffer id %u (graph '%s' has %d)", who, (unsigned)b.id,
                       cc_graph_name(g), g->n_buf);
    else if ((other = cc__serial_name(g->ctx, b.graph)) != NULL)
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_BUFFER, "%s names buffer id %u of graph '%s', not of graph '%s'", who,
                       (unsigned)b.id, other, cc_graph_name(g));
    else
        CONCERTO__FAIL(g->ctx, CC_ERR_UNKNOWN_BUFFER, "%s names buffer id %u, not one of graph '%s' (it is of %s)", who,
                       (unsigned)b.id, cc_graph_name(g), b.graph ? "a destroyed graph, or one of another context" : "no graph");
    return -1;
}

/* The common arguments of a function that takes a context and a graph:
   both there, and the graph one of the context (its failures are recorded
   in the graph's context, so a mismatch is refused). */
static cc_result cc__graph_args(cc_context* ctx, const cc_graph* g, const char* who) {
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!g) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: graph is NULL", who);
    if (g->ctx != ctx)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: graph '%s' belongs to another context: pass the context it was "
                              "created in (cc_graph_context)", who, cc_graph_name(g));
    return CC_OK;
}

/* An issue order given by the caller as op indices into idx[n]: every op
   of g exactly once. what names the array in messages. */
static cc_result cc__graph_order(cc_graph* g, const cc_op* order, int n_order, const char* who, const char* what, int* idx) {
    char where[96];
    char* seen;
    int i;
    if (n_order != g->n)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "%s: the %s has %d ops, graph '%s' %d", who, what, n_order,
                              cc_graph_name(g), g->n);
    seen = (char*)cc__calloc(g->ctx, (size_t)g->n + 1, 1);
    if (!seen) return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    for (i = 0; i < g->n; i++) {
        int v;
        cc__fmt(where, sizeof where, "%s: %s[%d]", who, what, i);
        if ((v = cc__op_arg(g, order[i], where)) < 0) { cc__free(g->ctx, seen); return CC_ERR_UNKNOWN_OP; }
        if (seen[v]) {
            cc__free(g->ctx, seen);
            return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "%s: op '%s' appears twice in the %s", who, g->names.s + g->name[v], what);
        }
        seen[v] = 1;
        idx[i] = v;
    }
    cc__free(g->ctx, seen);
    return CC_OK;
}

CONCERTO_API cc_context* cc_graph_context(const cc_graph* g) { return g ? g->ctx : NULL; }

CONCERTO_API int cc_graph_n_ops(const cc_graph* g) { return g ? g->n : 0; }

CONCERTO_API int cc_graph_n_resources(const cc_graph* g) { return g ? g->k : 0; }

CONCERTO_API int cc_graph_capacity(const cc_graph* g, int r) { return (g && r >= 0 && r < g->k) ? g->cap[r] : -1; }

CONCERTO_API const char* cc_graph_resource_name(const cc_graph* g, int r) {
    return (g && r >= 0 && r < g->k) ? g->names.s + g->res_name[r] : "";
}

CONCERTO_API cc_op cc_graph_op(const cc_graph* g, int index) {
    cc_op op;
    int ok = g && index >= 0 && index < g->n;
    op.id = ok ? (uint32_t)index + 1 : 0;
    op.graph = ok ? g->serial : 0;
    return op;
}

CONCERTO_API int cc_op_index(const cc_graph* g, cc_op op) {
    return (g && op.graph == g->serial && op.id >= 1 && op.id <= (uint32_t)g->n) ? (int)op.id - 1 : -1;
}

static const char* cc__name(const cc_graph* g, int i) { return g->names.s + g->name[i]; }

/* The stream (the first resource) op i demands, -1 if none. */
static int cc__op_stream(const cc_graph* g, int i) {
    int first;
    (void)cc__demand_use(g->dem + (size_t)i * g->k, g->cap, g->k, &first, NULL);
    return first;
}

CONCERTO_API const char* cc_op_name(const cc_graph* g, cc_op op) {
    int i = cc_op_index(g, op);
    return i < 0 ? "<invalid op>" : g->names.s + g->name[i];
}

static const cc_collective* cc__op_coll(const cc_graph* g, int i) { return g->coll_of[i] >= 0 ? &g->colls[g->coll_of[i]] : NULL; }


CONCERTO_API double cc_op_duration_us(const cc_graph* g, cc_op op) {
    int i = cc_op_index(g, op);
    return i < 0 ? -1.0 : g->dur_us[i];
}

CONCERTO_API int cc_op_demand(const cc_graph* g, cc_op op, int r) {
    int i = cc_op_index(g, op);
    return (i < 0 || r < 0 || r >= g->k) ? -1 : g->dem[(size_t)i * g->k + r];
}

CONCERTO_API void* cc_op_user_data(const cc_graph* g, cc_op op) {
    int i = cc_op_index(g, op);
    if (i < 0) return NULL;
    if (g->fn[i] == cc__chunk_trampoline) return ((const cc__chunk_rec*)g->user_data[i])->user_data;
    if (g->fn[i] == cc__copy_fn) return NULL;   /* a copy op's record is the library's */
    return g->user_data[i];
}

CONCERTO_API const cc_collective* cc_op_collective(const cc_graph* g, cc_op op) {
    int i = cc_op_index(g, op);
    return i < 0 ? NULL : cc__op_coll(g, i);
}

/* Op i's accesses: g->acc[first .. *end), the value returned being first.
   cc_graph_add_op appends an op's accesses after those of every op before
   it, so g->acc is sorted by op: a binary search, O(log n_acc). */
static size_t cc__op_accesses(const cc_graph* g, int i, size_t* end) {
    size_t lo = 0, hi = g->n_acc, first;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->acc[mid].op < (uint32_t)i) lo = mid + 1;
        else hi = mid;
    }
    first = lo;
    hi = g->n_acc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->acc[mid].op <= (uint32_t)i) lo = mid + 1;
        else hi = mid;
    }
    *end = lo;
    return first;
}

CONCERTO_API uint64_t cc_op_bytes(const cc_graph* g, cc_op op, int writes) {
    int i = cc_op_index(g, op);
    size_t a, end;
    uint64_t sum = 0;
    if (i < 0) return 0;
    for (a = cc__op_accesses(g, i, &end); a < end; a++)
        if ((g->acc[a].is_write != 0) == (writes != 0)) sum += cc__acc_bytes(&g->acc[a]);
    return sum;
}

static cc_result cc__graph_add_buffer(cc_graph* g, const char* name, uint64_t n_bytes, int transient, cc_buffer* out) {
    cc_context* ctx;
    char buf[32];
    uint32_t off;
    if (!g) return CC_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (out) { out->id = 0; out->graph = 0; }
    if (!name) { cc__fmt(buf, sizeof buf, "buffer%d", g->n_buf); name = buf; }
    if (transient && n_bytes == 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_add_transient: buffer '%s' has 0 bytes (want >= 1)", name);
    if (!CONCERTO__GROW(ctx, g->buf_bytes, g->buf_cap, (size_t)g->n_buf + 1) ||
        !CONCERTO__GROW(ctx, g->buf_name, g->buf_name_cap, (size_t)g->n_buf + 1) ||
        !CONCERTO__GROW(ctx, g->buf_transient, g->buf_tr_cap, (size_t)g->n_buf + 1) ||
        !cc__strpool_add(g->ctx, &g->names, name, strlen(name), &off))
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "buffer '%s': out of memory", name);
    g->buf_bytes[g->n_buf] = n_bytes;
    g->buf_name[g->n_buf] = off;
    g->buf_transient[g->n_buf] = (unsigned char)(transient != 0);
    g->n_buf++;
    if (transient) cc__graph_invalidate(g);
    if (out) { out->id = (uint32_t)g->n_buf; out->graph = g->serial; }
    return CC_OK;
}

CONCERTO_API cc_result cc_graph_add_buffer(cc_graph* g, const char* name, uint64_t n_bytes, cc_buffer* out) {
    return cc__graph_add_buffer(g, name, n_bytes, 0, out);
}

CONCERTO_API cc_result cc_graph_add_transient(cc_graph* g, const char* name, uint64_t n_bytes, cc_buffer* out) {
    return cc__graph_add_buffer(g, name, n_bytes, 1, out);
}

CONCERTO_API int cc_graph_n_buffers(const cc_graph* g) { return g ? g->n_buf : 0; }

CONCERTO_API cc_buffer cc_graph_buffer(const cc_graph* g, int index) {
    cc_buffer b;
    b.id = 0; b.graph = 0;
    if (g && index >= 0 && index < g->n_buf) { b.id = (uint32_t)index + 1; b.graph = g->serial; }
    return b;
}

CONCERTO_API int cc_buffer_index(const cc_graph* g, cc_buffer b) {
    if (!g || b.graph != g->serial || b.id < 1 || b.id > (uint32_t)g->n_buf) return -1;
    return (int)b.id - 1;
}

CONCERTO_API const char* cc_buffer_name(const cc_graph* g, cc_buffer b) {
    int i = cc_buffer_index(g, b);
    return i < 0 ? "" : g->names.s + g->buf_name[i];
}

CONCERTO_API uint64_t cc_buffer_bytes(const cc_graph* g, cc_buffer b) {
    int i = cc_buffer_index(g, b);
    return i < 0 ? 0 : g->buf_bytes[i];
}

CONCERTO_API int cc_buffer_transient(const cc_graph* g, cc_buffer b) {
    int i = cc_buffer_index(g, b);
    return i < 0 ? 0 : g->buf_transient[i];
}

static int cc__duration_ticks(double us, cc__time* out) {
    if (!(us >= 0.0) || us > 1e12) return 0;   /* rejects NaN, negatives, infinities */
    *out = (cc__time)llround(us * CONCERTO__TICKS_PER_US);
    return 1;
}

static cc_result cc__check_region_at(cc_graph* g, const char* where, const cc_region* rg) {
    int b;
    if ((b = cc__buffer_arg(g, rg->buffer, where)) < 0) return CC_ERR_UNKNOWN_BUFFER;
    if (rg->n_rows > 1) {   /* strided: rows that do not overlap each other, the last one inside */
        uint64_t size = g->buf_bytes[b], room = size >= rg->n_bytes ? size - rg->n_bytes : 0;
        if (rg->n_bytes == 0 || rg->stride_bytes < rg->n_bytes)
            return CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "%s: %llu rows of %llu bytes need stride_bytes >= n_bytes >= 1 "
                                  "(stride_bytes %llu)", where, (unsigned long long)rg->n_rows, (unsigned long long)rg->n_bytes,
                                  (unsigned long long)rg->stride_bytes);
        if (rg->n_bytes > size || rg->n_rows - 1 > room / rg->stride_bytes ||
            rg->offset_bytes > room - (rg->n_rows - 1) * rg->stride_bytes)
            return CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "%s = %llu rows of %llu bytes from byte %llu, %llu apart, lies outside "
                                  "buffer '%s' of %llu bytes", where, (unsigned long long)rg->n_rows, (unsigned long long)rg->n_bytes,
                                  (unsigned long long)rg->offset_bytes, (unsigned long long)rg->stride_bytes,
                                  g->names.s + g->buf_name[b], (unsigned long long)size);
        if (rg->split_rows && rg->n_rows % rg->split_rows)
            return CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "%s: split_rows %llu does not divide its n_rows %llu", where,
                                  (unsigned long long)rg->split_rows, (unsigned long long)rg->n_rows);
        return CC_OK;
    }
    if (rg->offset_bytes > g->buf_bytes[b] || rg->n_bytes > g->buf_bytes[b] - rg->offset_bytes)
        return CONCERTO__FAIL(g->ctx, CC_ERR_REGION,
                        "%s = [%llu, +%llu) lies outside buffer '%s' of %llu bytes", where,
                        (unsigned long long)rg->offset_bytes, (unsigned long long)rg->n_bytes,
                        g->names.s + g->buf_name[b], (unsigned long long)g->buf_bytes[b]);
    return CC_OK;
}

static cc_result cc__check_region(cc_graph* g, const char* opname, const cc_region* rg, const char* what, int idx) {
    char where[160];
    const cc_buffer* h = &rg->buffer;
    if (h->graph == g->serial && h->id >= 1 && h->id <= (uint32_t)g->n_buf && rg->n_rows <= 1 &&
        rg->offset_bytes <= g->buf_bytes[h->id - 1] && rg->n_bytes <= g->buf_bytes[h->id - 1] - rg->offset_bytes)
        return CC_OK;   /* a contiguous region inside a buffer of g: cc__check_region_at's test, without formatting where */
    cc__fmt(where, sizeof where, "op '%s': %s[%d]", opname, what, idx);
    return cc__check_region_at(g, where, rg);
}

/* The demand of op desc d (named nm): a demand vector, one stream, or none. */
static cc_result cc__check_demand(cc_graph* g, const cc_op_desc* d, const char* nm) {
    int r, k = g->k;
    cc_context* ctx = g->ctx;
    if (d->demands) {
        for (r = 0; r < k; r++) {
            if (d->demands[r] < 0)
                return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': negative demand %d on resource '%s'",
                                      nm, d->demands[r], cc_graph_resource_name(g, r));
            if (d->demands[r] > g->cap[r])
                return CONCERTO__FAIL(ctx, CC_ERR_CAPACITY, "op '%s': demand %d on resource '%s' exceeds its capacity %d",
                                      nm, d->demands[r], cc_graph_resource_name(g, r), g->cap[r]);
        }
    } else if (d->stream != CC_NO_STREAM) {
        if (d->stream < 0 || d->stream >= k)
            return CONCERTO__FAIL(ctx, CC_ERR_UNKNOWN_RESOURCE, "op '%s': stream %d does not exist (the graph has %d)",
                                  nm, d->stream, k);
        if (g->cap[d->stream] < 1)
            return CONCERTO__FAIL(ctx, CC_ERR_CAPACITY, "op '%s': demand 1 on resource '%s' exceeds its capacity %d",
                                  nm, cc_graph_resource_name(g, d->stream), g->cap[d->stream]);
    }
    return CC_OK;
}

static const char* cc__split_kind_name(cc_split_kind k) {
    switch (k) {
        case CC_SPLIT_ROWWISE: return "rowwise";
        case CC_SPLIT_MATMUL: return "matmul";
        case CC_SPLIT_ATTENTION: return "attention";
        case CC_SPLIT_USER: return "user";
        default: return "none";
    }
}

/* The name of split rule r in messages. */
static const char* cc__split_name(const cc_split* r) { return r->name ? r->name : cc__split_kind_name(r->kind); }

/* The axes rule kind k has (bits), and the extents it needs (bits). */
static unsigned cc__split_kind_axes(cc_split_kind k) {
    switch (k) {
        case CC_SPLIT_ROWWISE: return 1u << CC_AXIS_ROWS;
        case CC_SPLIT_MATMUL: return (1u << CC_AXIS_ROWS) | (1u << CC_AXIS_COLS) | (1u << CC_AXIS_REDUCE);
        case CC_SPLIT_ATTENTION: return (1u << CC_AXIS_ROWS) | (1u << CC_AXIS_HEADS);
        case CC_SPLIT_USER: return (1u << CC_AXIS_COUNT) - 1u;
        default: return 0;
    }
}

/* The axes rule r allows (bits). */
static unsigned cc__split_axes(const cc_split* r) {
    unsigned k = cc__split_kind_axes(r->kind), a, ext = 0;
    if (r->kind == CC_SPLIT_USER) {
        for (a = 0; a < CC_AXIS_COUNT; a++) if (r->extent[a]) ext |= 1u << a;
        k &= ext;
    }
    return r->axes ? r->axes & k : k;
}

CONCERTO_API const char* cc_axis_name(cc_axis axis) {
    switch (axis) {
        case CC_AXIS_ROWS: return "rows";
        case CC_AXIS_COLS: return "columns";
        case CC_AXIS_REDUCE: return "reduction";
        case CC_AXIS_HEADS: return "heads";
        default: return "?";
    }
}

/* Op desc d's split rule, as far as it can be checked before a split. */
static cc_result cc__check_split(cc_graph* g, const cc_op_desc* d, const char* nm) {
    const cc_split* r = d->split;
    const char* rn = cc__split_name(r);
    unsigned need = cc__split_kind_axes(r->kind), a;
    if (r->kind <= CC_SPLIT_NONE || r->kind > CC_SPLIT_USER)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': split rule '%s' has unknown kind %d", nm, rn, (int)r->kind);
    if (d->coll || !d->fn || !d->part_fn)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': split rule '%s' needs a compute op with fn (the whole op) "
                              "and part_fn (a chunk)", nm, rn);
    if (r->axes & ~need)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': split rule '%s': axes 0x%x names an axis a %s rule does not "
                              "have", nm, rn, r->axes, cc__split_kind_name(r->kind));
    if (r->kind == CC_SPLIT_USER) {
        if (!r->fn) return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': user split rule '%s' has no fn", nm, rn);
        return CC_OK;
    }
    for (a = 0; a < CC_AXIS_COUNT; a++)
        if ((need >> a & 1u) && !r->extent[a])
            return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': split rule '%s' needs extent[%s] (the length of its %s "
                                  "axis)", nm, rn, cc_axis_name((cc_axis)a), cc_axis_name((cc_axis)a));
    if ((r->kind == CC_SPLIT_MATMUL && (d->n_reads < 2 || d->n_writes != 1)) ||
        (r->kind == CC_SPLIT_ATTENTION && (d->n_reads < 3 || d->n_writes != 1)))
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': split rule '%s' needs %s reads and exactly one write "
                              "(it has %d and %d)", nm, rn, r->kind == CC_SPLIT_MATMUL ? "A, B (2 or more)" : "Q, K, V (3 or more)",
                              d->n_reads, d->n_writes);
    return CC_OK;
}

/* The collective and the work of op desc d: one of them, well formed. */
static cc_result cc__check_work(cc_graph* g, const cc_op_desc* d, const char* nm) {
    cc_context* ctx = g->ctx;
    const cc_collective* c = d->coll;
    int i;
    if (c) {
        if (c->kind <= CC_COLL_NONE || c->kind > CC_COLL_ALL_TO_ALL)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': unknown collective kind %d", nm, (int)c->kind);
        if ((int)c->dtype < 0 || (int)c->dtype >= CONCERTO_DTYPE_COUNT || (int)c->reduce < 0 || c->reduce > CC_REDUCE_MAX)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': unknown element type %d or reduction %d", nm, (int)c->dtype, (int)c->reduce);
        if (!c->comm) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': the collective has no communicator", nm);
        if (c->n_elems && ((c->kind != CC_COLL_RECV && !c->send_buf && d->n_reads < 1) || (c->kind != CC_COLL_SEND && !c->recv_buf && d->n_writes < 1)))
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': the collective's send or receive buffer is NULL, with no region "
                                  "of that kind to take it from", nm);
        if (d->fn || d->chunk_fn)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': an op is either compute (fn, chunk_fn) or a collective, not both", nm);
        if (d->demands || d->stream == CC_NO_STREAM)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': a collective runs on a stream: set stream, not demands", nm);
        for (i = 0; i < d->n_reads + d->n_writes; i++) {
            const cc_region* rg = i < d->n_reads ? &d->reads[i] : &d->writes[i - d->n_reads];
            if (rg->n_rows > 1)
                return CONCERTO__FAIL(ctx, CC_ERR_REGION, "op '%s': %s[%d] is strided (%llu rows): a collective's regions must be "
                                      "contiguous", nm, i < d->n_reads ? "reads" : "writes", i < d->n_reads ? i : i - d->n_reads,
                                      (unsigned long long)rg->n_rows);
        }
    }
    if (d->chunk_fn && !d->fn)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': chunk_fn without fn: a decomposable op still needs fn (the whole op)", nm);
    if (d->part_fn && !d->split)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': part_fn without a split rule (cc_op_desc.split)", nm);
    if (d->split) return cc__check_split(g, d, nm);
    return CC_OK;
}

/* A chunk cost (cc_chunk_cost) for op nm, which decomposes or not (who:
   the caller in the message). */
static cc_result cc__check_chunk_cost(cc_context* ctx, const char* who, const char* nm, const cc_chunk_cost* c, int decomposes) {
    if (!(c->a_us >= 0 && c->a_us <= 1e12 && c->b_us >= 0 && c->b_us <= 1e12))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%sop '%s': chunk cost a_us %g, b_us %g: each must be 0..1e12 (not NaN)", who,
                              nm, c->a_us, c->b_us);
    if (!decomposes)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%sop '%s': a chunk cost for an op that does not decompose (a collective, "
                              "or a compute op with neither chunk_fn nor a split rule with part_fn)", who, nm);
    return CC_OK;
}

/* Everything of op desc d that can be wrong, before the graph is touched. */
static cc_result cc__check_op_desc(cc_graph* g, const cc_op_desc* d, const char* nm, cc__time* ticks) {
    char where[160];
    cc_result rc;
    int i;
    if (!cc__duration_ticks(d->duration_us, ticks))
        return CONCERTO__FAIL(g->ctx, CC_ERR_BAD_DURATION, "op '%s': duration %g us is negative, NaN, infinite or above 1e12",
                              nm, d->duration_us);
    if ((rc = cc__check_demand(g, d, nm)) != CC_OK) return rc;
    if ((d->n_reads && !d->reads) || (d->n_writes && !d->writes) || (d->n_deps && !d->deps) ||
        d->n_reads < 0 || d->n_writes < 0 || d->n_deps < 0)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s': a reads/writes/deps count without its array", nm);
    for (i = 0; i < d->n_reads; i++) if ((rc = cc__check_region(g, nm, &d->reads[i], "reads", i)) != CC_OK) return rc;
    for (i = 0; i < d->n_writes; i++) if ((rc = cc__check_region(g, nm, &d->writes[i], "writes", i)) != CC_OK) return rc;
    if ((rc = cc__check_work(g, d, nm)) != CC_OK) return rc;
    if (d->chunk_cost &&
        (rc = cc__check_chunk_cost(g->ctx, "", nm, d->chunk_cost, !d->coll && d->fn && (d->chunk_fn || d->split))) != CC_OK)
        return rc;
    for (i = 0; i < d->n_deps; i++) {
        if (d->deps[i].graph == g->serial && d->deps[i].id >= 1 && d->deps[i].id <= (uint32_t)g->n) continue;   /* (cc__op_arg's test) */
        cc__fmt(where, sizeof where, "op '%s': deps[%d]", nm, i);
        if (cc__op_arg(g, d->deps[i], where) < 0) return CC_ERR_UNKNOWN_OP;
    }
    return CC_OK;
}

/* Room for one more op with d's accesses and edges, and its name in the
   pool (*off). 0 when out of memory: the graph is as it was. */
static int cc__reserve_op(cc_graph* g, const cc_op_desc* d, const char* nm, uint32_t* off, uint32_t* split_off) {
    const char* sn = d->split ? cc__split_name(d->split) : NULL;
    cc_context* ctx = g->ctx;
    size_t n1 = (size_t)g->n + 1, need_acc = g->n_acc + (size_t)d->n_reads + (size_t)d->n_writes;
    size_t need_e = g->n_e + (size_t)d->n_deps, names_len0 = g->names.len;
    if (!CONCERTO__GROW(ctx, g->dur, g->ops_cap, n1) || !CONCERTO__GROW(ctx, g->dur_us, g->dur_us_cap, n1) ||
        !CONCERTO__GROW(ctx, g->name, g->name_cap, n1) || !CONCERTO__GROW(ctx, g->user_data, g->ud_cap, n1) ||
        !CONCERTO__GROW(ctx, g->fn, g->fn_cap, n1) || !CONCERTO__GROW(ctx, g->chunk_fn, g->chunk_fn_cap, n1) ||
        !CONCERTO__GROW(ctx, g->coll_of, g->coll_of_cap, n1) || !CONCERTO__GROW(ctx, g->split_of, g->split_of_cap, n1) ||
        !CONCERTO__GROW(ctx, g->ccost, g->ccost_cap, n1) || !CONCERTO__GROW(ctx, g->has_ccost, g->has_ccost_cap, n1) ||
        (d->coll && !CONCERTO__GROW(ctx, g->colls, g->colls_cap, g->n_colls + 1)) ||
        (d->split && !CONCERTO__GROW(ctx, g->splits, g->splits_cap, g->n_splits + 1)) ||
        !CONCERTO__GROW(ctx, g->dem, g->dem_cap, n1 * (size_t)g->k) || !CONCERTO__GROW(ctx, g->acc, g->acc_cap, need_acc) ||
        !CONCERTO__GROW(ctx, g->e_from, g->e_from_cap, need_e) || !CONCERTO__GROW(ctx, g->e_to, g->e_to_cap, need_e) ||
        !cc__strpool_add(ctx, &g->names, nm, strlen(nm), off) ||
        (sn && !cc__strpool_add(ctx, &g->names, sn, strlen(sn), split_off))) {
        g->names.len = names_len0;
        return 0;
    }
    return 1;
}

CONCERTO_API cc_result cc_graph_add_op(cc_graph* g, const cc_op_desc* d, cc_op* out) {
    char namebuf[32];
    const char* nm;
    cc__time ticks = 0;
    uint32_t off, split_off = 0;
    int r, i, k;
    cc_result rc;
    if (!g) return CC_ERR_INVALID_ARG;
    if (out) { out->id = 0; out->graph = 0; }
    if (!d) return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "cc_graph_add_op: desc is NULL");
    if (g->n >= 0x7ffffffe) return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "cc_graph_add_op: too many operations");
    if (d->name) nm = d->name;
    else { cc__fmt(namebuf, sizeof namebuf, "op%d", g->n); nm = namebuf; }
    if ((rc = cc__check_op_desc(g, d, nm, &ticks)) != CC_OK) return rc;
    if (!cc__reserve_op(g, d, nm, &off, &split_off)) return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "op '%s': out of memory", nm);
    /* commit */
    i = g->n;
    k = g->k;
    g->name[i] = off;
    g->dur[i] = ticks;
    g->dur_us[i] = d->duration_us;
    g->user_data[i] = d->user_data;
    g->fn[i] = d->fn;
    g->chunk_fn[i] = d->chunk_fn;
    g->coll_of[i] = -1;
    if (d->coll) { g->colls[g->n_colls] = *d->coll; g->coll_of[i] = (int)g->n_colls++; }
    g->split_of[i] = -1;
    if (d->split) {
        cc__split_rec* sr = &g->splits[g->n_splits];
        sr->s = *d->split;
        sr->s.name = NULL;
        sr->name = split_off;
        sr->part_fn = d->part_fn;
        g->split_of[i] = (int)g->n_splits++;
    }
    g->has_ccost[i] = d->chunk_cost != NULL;
    if (d->chunk_cost) g->ccost[i] = *d->chunk_cost;
    for (r = 0; r < k; r++)
        g->dem[(size_t)i * k + r] = d->demands ? d->demands[r] : (d->stream == r ? 1 : 0);
    for (r = 0; r < d->n_reads + d->n_writes; r++) {
        const cc_region* rg = r < d->n_reads ? &d->reads[r] : &d->writes[r - d->n_reads];
        cc__access* a = &g->acc[g->n_acc++];
        a->op = (uint32_t)i;
        a->buffer = rg->buffer.id - 1;
        a->offset = rg->offset_bytes;
        a->split_rows = rg->split_rows;
        a->rows = rg->n_rows > 1 ? rg->n_rows : 1;
        a->row_bytes = rg->n_bytes;
        a->stride = rg->n_rows > 1 ? rg->stride_bytes : rg->n_bytes;
        a->n_bytes = (a->rows - 1) * a->stride + a->row_bytes;
        a->is_write = r >= d->n_reads;
    }
    for (r = 0; r < d->n_deps; r++) {
        g->e_from[g->n_e] = (int)d->deps[r].id - 1;
        g->e_to[g->n_e] = i;
        g->n_e++;
    }
    g->n++;
    cc__graph_invalidate(g);
    if (out) *out = cc_graph_op(g, i);
    return CC_OK;
}

CONCERTO_API cc_result cc_graph_add_dep(cc_graph* g, cc_op before, cc_op after) {
    int a, b;
    if (!g) return CC_ERR_INVALID_ARG;
    if ((a = cc__op_arg(g, before, "cc_graph_add_dep: before")) < 0) return CC_ERR_UNKNOWN_OP;
    if ((b = cc__op_arg(g, after, "cc_graph_add_dep: after")) < 0) return CC_ERR_UNKNOWN_OP;
    if (!CONCERTO__GROW(g->ctx, g->e_from, g->e_from_cap, g->n_e + 1) || !CONCERTO__GROW(g->ctx, g->e_to, g->e_to_cap, g->n_e + 1))
        return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "dependency '%s' -> '%s': out of memory", cc__name(g, a), cc__name(g, b));
    g->e_from[g->n_e] = a;
    g->e_to[g->n_e] = b;
    g->n_e++;
    cc__graph_invalidate(g);
    return CC_OK;
}

CONCERTO_API cc_result cc_op_set_duration(cc_graph* g, cc_op op, double duration_us) {
    int i;
    cc__time t;
    if (!g) return CC_ERR_INVALID_ARG;
    if ((i = cc__op_arg(g, op, "cc_op_set_duration")) < 0) return CC_ERR_UNKNOWN_OP;
    if (!cc__duration_ticks(duration_us, &t))
        return CONCERTO__FAIL(g->ctx, CC_ERR_BAD_DURATION, "op '%s': duration %g us is negative, NaN, infinite or above 1e12",
                        cc__name(g, i), duration_us);
    g->dur[i] = t;
    g->dur_us[i] = duration_us;
    return CC_OK;   /* structure unchanged: stays valid */
}

CONCERTO_API cc_result cc_op_set_chunk_cost(cc_graph* g, cc_op op, double a_us, double b_us) {
    cc_chunk_cost c;
    cc_result rc;
    int i, dec;
    if (!g) return CC_ERR_INVALID_ARG;
    if ((i = cc__op_arg(g, op, "cc_op_set_chunk_cost")) < 0) return CC_ERR_UNKNOWN_OP;
    c.a_us = a_us;
    c.b_us = b_us;
    dec = g->coll_of[i] < 0 && g->fn[i] && (g->chunk_fn[i] || (g->split_of[i] >= 0 && g->splits[g->split_of[i]].part_fn));
    if ((rc = cc__check_chunk_cost(g->ctx, "cc_op_set_chunk_cost: ", cc__name(g, i), &c, dec)) != CC_OK) return rc;
    g->ccost[i] = c;
    g->has_ccost[i] = 1;
    return CC_OK;   /* structure unchanged: stays valid */
}

CONCERTO_API int cc_op_chunk_cost(const cc_graph* g, cc_op op, cc_chunk_cost* out) {
    int i = cc_op_index(g, op);
    if (i < 0 || !g->has_ccost[i]) return 0;
    if (out) *out = g->ccost[i];
    return 1;
}

CONCERTO_API cc_result cc_graph_set_exec_costs(cc_graph* g, const cc_exec_costs* costs) {
    cc_exec_costs c;
    if (!g) return CC_ERR_INVALID_ARG;
    memset(&c, 0, sizeof c);
    if (costs) c = *costs;
    if (!(c.launch_us >= 0 && c.launch_us <= 1e6) || !(c.wait_us >= 0 && c.wait_us <= 1e6))
        return CONCERTO__FAIL(g->ctx, CC_ERR_BAD_DURATION, "cc_graph_set_exec_costs: graph '%s': launch %g us, wait %g us: each must "
                              "be 0..1e6 and not NaN", cc_graph_name(g), c.launch_us, c.wait_us);
    if (!(c.compute_overlap >= 0 && c.compute_overlap <= 10) || !(c.comm_overlap >= 0 && c.comm_overlap <= 10))
        return CONCERTO__FAIL(g->ctx, CC_ERR_BAD_DURATION, "cc_graph_set_exec_costs: graph '%s': overlap slowdowns %g and %g must be "
                              "0..10 and not NaN", cc_graph_name(g), c.compute_overlap, c.comm_overlap);
    g->costs = c;
    return CC_OK;
}

CONCERTO_API cc_exec_costs cc_graph_exec_costs(const cc_graph* g) {
    cc_exec_costs c;
    memset(&c, 0, sizeof c);
    return g ? g->costs : c;
}

CONCERTO_API cc_result cc_graph_set_coll_startup(cc_graph* g, const cc_comm* comm, double us) {
    size_t i;
    if (!g) return CC_ERR_INVALID_ARG;
    if (!comm) return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "cc_graph_set_coll_startup: graph '%s': comm is NULL", cc_graph_name(g));
    if (!(us >= 0 && us <= 1e12))
        return CONCERTO__FAIL(g->ctx, CC_ERR_BAD_DURATION, "cc_graph_set_coll_startup: graph '%s': %g us must be 0..1e12 and not NaN",
                              cc_graph_name(g), us);
    for (i = 0; i < g->n_startup; i++)
        if (g->startup[i].comm == comm) break;
    if (i == g->n_startup) {
        if (!CONCERTO__GROW(g->ctx, g->startup, g->startup_cap, g->n_startup + 1))
            return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_set_coll_startup: graph '%s': out of memory for %d communicators",
                                  cc_graph_name(g), (int)g->n_startup + 1);
        g->n_startup++;
    }
    g->startup[i].comm = comm;
    g->startup[i].us = us;
    return CC_OK;
}

CONCERTO_API double cc_graph_coll_startup(const cc_graph* g, const cc_comm* comm) {
    size_t i;
    if (!g) return -1;
    for (i = 0; i < g->n_startup; i++)
        if (g->startup[i].comm == comm) return g->startup[i].us;
    return -1;
}

/* Sorting helpers (deterministic, no qsort_r portability issues). */
typedef struct cc__edge { int from, to; } cc__edge;

/* Region dependencies: accesses grouped by buffer (stable in program order);
   per buffer the active records of earlier accesses, writes and reads apart
   (a read meets only the writes: two reads make no edge); a write removes
   the records it fully covers (later accesses reach them through the
   write). Records of one bounding range form a group (a list of accesses
   chained through nxt); the groups of a kind are kept by the length of
   their range, in classes [2^c, 2^(c+1)) bytes, each sorted by its start,
   so that an access looks only at groups whose ranges may meet its own:
   about log n + hits per class in use, not every record. */
typedef struct cc__act { uint64_t lo, hi; uint32_t head, tail; } cc__act;
typedef struct cc__act_set {
    cc__act* buf[64];    /* class c's groups are buf[c][b0[c] .. b0[c] + n[c]): room at both ends, so that groups
                            arriving in rising or in falling order join in constant time */
    cc__act* v[64];      /* buf[c] + b0[c] */
    size_t b0[64], n[64], cap[64];
    uint64_t used;       /* bit c: class c holds groups */
    uint32_t* nxt;       /* [access]: the next access of its group, UINT32_MAX at the end (shared by both kinds) */
} cc__act_set;

/* The first group of class c whose start is at least lo (upper: above lo). */
static size_t cc__act_find(const cc__act_set* s, int c, uint64_t lo, int upper) {
    size_t b = 0, e = s->n[c];
    while (b < e) {
        size_t mid = b + (e - b) / 2;
        if (upper ? s->v[c][mid].lo <= lo : s->v[c][mid].lo < lo) b = mid + 1;
        else e = mid;
    }
    return b;
}

static int cc__act_class(uint64_t len) {
    int c = 0;
    while (c < 63 && (len >> (c + 1)) != 0) c++;
    return c;
}

/* Edges from the accesses of s that share a byte with access x (of op x->op). */
static int cc__act_hits(cc_graph* g, const cc__act_set* s, const cc__access* x, cc__edge** edges, size_t* n_edges,
                        size_t* cap_edges) {
    uint64_t lo = x->offset, hi = x->offset + x->n_bytes, used = s->used;
    int c;
    for (c = 0; used; c++, used >>= 1) {
        uint64_t span = c < 63 ? (uint64_t)1 << (c + 1) : UINT64_MAX;   /* longer than any record of the class */
        size_t m;
        if (!(used & 1u) || !s->v[c]) continue;
        /* a record that starts at or before lo - span ends before lo */
        for (m = lo > span ? cc__act_find(s, c, lo - span, 1) : 0; m < s->n[c] && s->v[c][m].lo < hi; m++) {
            uint32_t a;
            if (s->v[c][m].hi <= lo) continue;
            for (a = s->v[c][m].head; a != UINT32_MAX; a = s->nxt[a]) {
                const cc__access* y = &g->acc[a];
                if (y->op != x->op && cc__acc_overlap(x, y)) {
                    if (!CONCERTO__GROW(g->ctx, *edges, *cap_edges, *n_edges + 1)) return 0;
                    (*edges)[*n_edges].from = (int)y->op;
                    (*edges)[*n_edges].to = (int)x->op;
                    (*n_edges)++;
                }
            }
        }
    }
    return 1;
}

/* Drops the groups of s that write x covers (cc__acc_covers). */
static void cc__act_cover(cc__act_set* s, const cc__access* x) {
    uint64_t lo = x->offset, hi = x->offset + x->n_bytes, used = s->used;
    int c;
    if (x->rows > 1) return;   /* a strided write covers nothing */
    for (c = 0; used; c++, used >>= 1) {
        size_t b, m, w;
        if (!(used & 1u)) continue;
        if (c < 63 && ((uint64_t)1 << c) > hi - lo) break;   /* longer than x: none covered, nor in the classes above */
        b = cc__act_find(s, c, lo, 0);
        for (m = w = b; m < s->n[c] && s->v[c][m].lo < hi; m++)
            if (!cc__acc_covers(x, s->v[c][m].lo, s->v[c][m].hi)) s->v[c][w++] = s->v[c][m];
        if (w == m) continue;
        memmove(&s->v[c][w], &s->v[c][m], (s->n[c] - m) * sizeof *s->v[c]);
        s->n[c] -= m - w;
        if (!s->n[c]) s->used &= ~((uint64_t)1 << c);
    }
}

/* Class c emptied, its room kept. */
static void cc__act_clear(cc__act_set* s, int c) {
    s->n[c] = 0;
    s->b0[c] = s->cap[c] / 2;
    s->v[c] = s->buf[c] + s->b0[c];
}

/* Access acc (x) joins s: its range's group, or a new group after those that start where it does. */
static int cc__act_add(cc_context* ctx, cc__act_set* s, const cc__access* x, uint32_t acc) {
    int c = cc__act_class(x->n_bytes);
    size_t at, n = s->n[c];
    cc__act* r;
    s->nxt[acc] = UINT32_MAX;
    for (at = cc__act_find(s, c, x->offset, 0); at < n && s->v[c][at].lo == x->offset; at++)
        if (s->v[c][at].hi == x->offset + x->n_bytes) {
            s->nxt[s->v[c][at].tail] = acc;
            s->v[c][at].tail = acc;
            return 1;
        }
    /* at: the first group that starts above x (its place, which recentring keeps) */
    if (s->b0[c] == 0 || s->b0[c] + n == s->cap[c]) {   /* an end reached: the groups recentred, in more room if half full */
        size_t cap = s->cap[c] < 2 * n + 8 ? 2 * (n + 8) : s->cap[c], b0 = (cap - n) / 2;
        cc__act* nb = s->buf[c];
        if (cap != s->cap[c] && !(nb = (cc__act*)cc__alloc(ctx, cap * sizeof *nb))) return 0;
        if (n) memmove(nb + b0, s->v[c], n * sizeof *nb);
        if (nb != s->buf[c]) { cc__free(ctx, s->buf[c]); s->buf[c] = nb; s->cap[c] = cap; }
        s->b0[c] = b0;
        s->v[c] = nb + b0;
    }
    if (at < n - at) {   /* the shorter side moves */
        memmove(s->v[c] - 1, s->v[c], at * sizeof *s->v[c]);
        s->b0[c]--;
        s->v[c]--;
    } else memmove(&s->v[c][at + 1], &s->v[c][at], (n - at) * sizeof *s->v[c]);
    r = &s->v[c][at];
    r->lo = x->offset;
    r->hi = x->offset + x->n_bytes;
    r->head = r->tail = acc;
    s->n[c]++;
    s->used |= (uint64_t)1 << c;
    return 1;
}

static cc_result cc__derive_region_edges(cc_graph* g, cc__edge** edges, size_t* n_edges, size_t* cap_edges) {
    cc_context* ctx = g->ctx;
    size_t* start = NULL;
    uint32_t* byb = NULL;
    cc__act_set act[2];   /* [0] reads, [1] writes */
    size_t a, j, b;
    int side, c;
    cc_result rc = CC_OK;
    memset(act, 0, sizeof act);
    start = (size_t*)cc__calloc(ctx, (size_t)g->n_buf + 1, sizeof *start);
    byb = (uint32_t*)cc__alloc(ctx, (g->n_acc ? g->n_acc : 1) * sizeof *byb);
    act[0].nxt = act[1].nxt = (uint32_t*)cc__alloc(ctx, (g->n_acc ? g->n_acc : 1) * sizeof *act[0].nxt);
    if (!start || !byb || !act[0].nxt) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    for (a = 0; a < g->n_acc; a++) start[g->acc[a].buffer + 1]++;
    for (b = 0; b < (size_t)g->n_buf; b++) start[b + 1] += start[b];
    {
        size_t* fill = (size_t*)cc__alloc(ctx, ((size_t)g->n_buf + 1) * sizeof *fill);
        if (!fill) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        memcpy(fill, start, ((size_t)g->n_buf + 1) * sizeof *fill);
        for (a = 0; a < g->n_acc; a++) byb[fill[g->acc[a].buffer]++] = (uint32_t)a;
        cc__free(ctx, fill);
    }
    for (b = 0; b < (size_t)g->n_buf; b++) {
        for (side = 0; side < 2; side++) {   /* the classes in use emptied (the others are) */
            for (c = 0; act[side].used; c++, act[side].used >>= 1)
                if (act[side].used & 1u) cc__act_clear(&act[side], c);
        }
        for (j = start[b]; j < start[b + 1]; j++) {
            const cc__access* x = &g->acc[byb[j]];
            if (x->n_bytes == 0) continue;
            for (side = x->is_write ? 0 : 1; side < 2; side++)
                if (!cc__act_hits(g, &act[side], x, edges, n_edges, cap_edges)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
            if (x->is_write) { cc__act_cover(&act[0], x); cc__act_cover(&act[1], x); }
            if (!cc__act_add(ctx, &act[x->is_write != 0], x, byb[j])) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        }
    }
done:
    cc__free(ctx, start); cc__free(ctx, byb); cc__free(ctx, act[0].nxt);
    for (side = 0; side < 2; side++)
        for (c = 0; c < 64; c++) cc__free(ctx, act[side].buf[c]);
    if (rc != CC_OK) return CONCERTO__FAIL(ctx, rc, "deriving buffer dependencies: out of memory");
    return CC_OK;
}

/* Transient buffers: each one's first writer, its users and each op's
   transient buffers into the graph (mb_*, op_mb*), and an edge from the
   first writer to every other user. Refuses, naming the buffer, one whose
   first access is a read or that no op reads. */
static cc_result cc__derive_transients(cc_graph* g, cc__edge** edges, size_t* n_edges, size_t* cap_edges) {
    cc_context* ctx = g->ctx;
    int* mb_of = NULL;   /* buffer -> its transient index, or -1 */
    int* last = NULL;    /* per transient: the last op counted as a user */
    char* read = NULL;
    size_t a;
    int b, m, i, nm = 0, nu = 0;
    cc_result rc = CC_OK;
    for (b = 0; b < g->n_buf; b++) nm += g->buf_transient[b];
    if (nm == 0) return CC_OK;
    mb_of = (int*)cc__alloc(ctx, (size_t)g->n_buf * sizeof(int));
    last = (int*)cc__alloc(ctx, (size_t)nm * sizeof(int));
    read = (char*)cc__calloc(ctx, (size_t)nm, 1);
    g->mb_buf = (int*)cc__alloc(ctx, (size_t)nm * sizeof(int));
    g->mb_alloc = (int*)cc__alloc(ctx, (size_t)nm * sizeof(int));
    g->mb_bytes = (uint64_t*)cc__alloc(ctx, (size_t)nm * sizeof(uint64_t));
    g->mb_user_off = (int*)cc__calloc(ctx, (size_t)nm + 1, sizeof(int));
    g->op_mb_off = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
    if (!mb_of || !last || !read || !g->mb_buf || !g->mb_alloc || !g->mb_bytes || !g->mb_user_off || !g->op_mb_off) {
        rc = CC_ERR_OUT_OF_MEMORY; goto done;
    }
    for (b = 0, m = 0; b < g->n_buf; b++) {
        mb_of[b] = g->buf_transient[b] ? m : -1;
        if (g->buf_transient[b]) { g->mb_buf[m] = b; g->mb_alloc[m] = -1; g->mb_bytes[m] = g->buf_bytes[b]; last[m] = -1; m++; }
    }
    g->n_mb = nm;
    /* accesses are in program order: the first one of a buffer is its first access */
    for (a = 0; a < g->n_acc; a++) {
        const cc__access* x = &g->acc[a];
        if ((m = mb_of[x->buffer]) < 0) continue;
        if (g->mb_alloc[m] < 0) {
            if (!x->is_write)
                { rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "transient buffer '%s' is read by op '%s' before any op writes it",
                                      g->names.s + g->buf_name[x->buffer], cc__name(g, (int)x->op)); goto done; }
            g->mb_alloc[m] = (int)x->op;
        }
        if (!x->is_write) read[m] = 1;
        if (last[m] != (int)x->op) {   /* an op's accesses are consecutive */
            last[m] = (int)x->op;
            g->mb_user_off[m + 1]++;
            g->op_mb_off[x->op + 1]++;
            nu++;
        }
    }
    for (m = 0; m < nm; m++)
        if (!read[m]) {
            rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, g->mb_alloc[m] < 0 ? "transient buffer '%s' is accessed by no op"
                                : "transient buffer '%s' is written but no op reads it", g->names.s + g->buf_name[g->mb_buf[m]]);
            goto done;
        }
    for (m = 0; m < nm; m++) g->mb_user_off[m + 1] += g->mb_user_off[m];
    for (i = 0; i < g->n; i++) g->op_mb_off[i + 1] += g->op_mb_off[i];
    g->mb_user = (int*)cc__alloc(ctx, ((size_t)nu + 1) * sizeof(int));
    g->op_mb = (int*)cc__alloc(ctx, ((size_t)nu + 1) * sizeof(int));
    if (!g->mb_user || !g->op_mb) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    for (m = 0; m < nm; m++) last[m] = 0;   /* reused: users filled per buffer */
    for (a = 0; a < g->n_acc; a++) {        /* users in program order (an op's accesses are consecutive) */
        const cc__access* x = &g->acc[a];
        int* fu;
        if ((m = mb_of[x->buffer]) < 0) continue;
        fu = &last[m];
        if (*fu > 0 && g->mb_user[g->mb_user_off[m] + *fu - 1] == (int)x->op) continue;
        g->mb_user[g->mb_user_off[m] + (*fu)++] = (int)x->op;
    }
    {
        int* fill = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
        if (!fill) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        for (m = 0; m < nm; m++) {
            int k;
            for (k = g->mb_user_off[m]; k < g->mb_user_off[m + 1]; k++) {
                int u = g->mb_user[k];
                g->op_mb[g->op_mb_off[u] + fill[u]++] = m;
                if (u == g->mb_alloc[m]) continue;
                if (!CONCERTO__GROW(ctx, *edges, *cap_edges, *n_edges + 1)) { cc__free(ctx, fill); rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                (*edges)[*n_edges].from = g->mb_alloc[m];
                (*edges)[*n_edges].to = u;
                (*n_edges)++;
            }
        }
        cc__free(ctx, fill);
    }
done:
    cc__free(ctx, mb_of); cc__free(ctx, last); cc__free(ctx, read);
    if (rc == CC_ERR_OUT_OF_MEMORY) return CONCERTO__FAIL(ctx, rc, "cc_graph_validate: out of memory");
    return rc;
}

static cc_result cc__report_cycle(cc_graph* g, const int* indeg) {
    /* every op left with indeg > 0 has a predecessor also left: walk back */
    cc_context* ctx = g->ctx;
    int* seen;
    int v = -1, i, steps = 0;
    char msg[CONCERTO__MSG_MAX - 96];
    size_t len = 0;
    for (i = 0; i < g->n; i++) if (indeg[i] > 0) { v = i; break; }
    seen = (int*)cc__calloc(ctx, (size_t)g->n, sizeof *seen);
    if (!seen) return CONCERTO__FAIL(ctx, CC_ERR_CYCLE, "the graph has a dependency cycle through op '%s'", cc__name(g, v));
    while (!seen[v]) {
        int e, p = -1;
        seen[v] = ++steps;
        for (e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (indeg[g->pred[e]] > 0) { p = g->pred[e]; break; }
        v = p;
    }
    /* v is on the cycle: list it forwards */
    {
        int u = v, count = 0;
        int* cyc = (int*)cc__alloc(ctx, (size_t)(steps + 1) * sizeof *cyc);
        if (cyc) {
            do {
                int e, p = -1;
                cyc[count++] = u;
                for (e = g->pred_off[u]; e < g->pred_off[u + 1]; e++)
                    if (indeg[g->pred[e]] > 0 && seen[g->pred[e]]) { p = g->pred[e]; break; }
                u = p;
            } while (u != v && u >= 0 && count <= steps);
            for (i = count - 1; i >= 0 && len + 8 < sizeof msg; i--) {
                int w = snprintf(msg + len, sizeof msg - len, "'%s' -> ", cc__name(g, cyc[i]));
                if (w < 0) break;
                len += (size_t)w;
                if (len >= sizeof msg) { len = sizeof msg - 1; break; }
            }
            if (len < sizeof msg) snprintf(msg + len, sizeof msg - len, "'%s'", cc__name(g, cyc[count - 1]));
            cc__free(ctx, cyc);
        } else snprintf(msg, sizeof msg, "'%s'", cc__name(g, v));
    }
    cc__free(ctx, seen);
    return CONCERTO__FAIL(ctx, CC_ERR_CYCLE, "dependency cycle: %s", msg);
}

/* The edges sorted by (from, to): by to, then stably by from (two
   counting passes, linear in edges and ops). */
static cc_result cc__sort_edges(cc_graph* g, cc__edge* edges, size_t n_edges) {
    cc_context* ctx = g->ctx;
    size_t* at = (size_t*)cc__calloc(ctx, (size_t)g->n + 1, sizeof *at);
    cc__edge* tmp = (cc__edge*)cc__alloc(ctx, (n_edges + 1) * sizeof *tmp);
    size_t e;
    int i, pass;
    if (!at || !tmp) {
        cc__free(ctx, at); cc__free(ctx, tmp);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_validate: out of memory");
    }
    for (pass = 0; pass < 2; pass++) {   /* by to into tmp, then by from back into edges */
        const cc__edge* src = pass ? tmp : edges;
        cc__edge* dst = pass ? edges : tmp;
        size_t sum = 0;
        memset(at, 0, ((size_t)g->n + 1) * sizeof *at);
        for (e = 0; e < n_edges; e++) at[pass ? src[e].from : src[e].to]++;
        for (i = 0; i < g->n; i++) { size_t c = at[i]; at[i] = sum; sum += c; }
        for (e = 0; e < n_edges; e++) dst[at[pass ? src[e].from : src[e].to]++] = src[e];
    }
    cc__free(ctx, at); cc__free(ctx, tmp);
    return CC_OK;
}

CONCERTO_API cc_result cc_graph_validate(cc_graph* g) {
    cc_context* ctx;
    cc__edge* edges = NULL;
    size_t n_edges = 0, cap_edges = 0, e, m;
    int* indeg = NULL;
    int i;
    cc_result rc;
    if (!g) return CC_ERR_INVALID_ARG;
    if (g->valid) return CC_OK;
    ctx = g->ctx;
    cc__graph_invalidate(g);
    cap_edges = g->n_e + 16;
    edges = (cc__edge*)cc__alloc(ctx, cap_edges * sizeof *edges);
    if (!edges) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_validate: out of memory");
    for (e = 0; e < g->n_e; e++) {
        if (g->e_from[e] == g->e_to[e]) {
            cc__free(ctx, edges);
            return CONCERTO__FAIL(ctx, CC_ERR_CYCLE, "dependency cycle: op '%s' depends on itself", cc__name(g, g->e_to[e]));
        }
        edges[n_edges].from = g->e_from[e];
        edges[n_edges].to = g->e_to[e];
        n_edges++;
    }
    if ((rc = cc__derive_region_edges(g, &edges, &n_edges, &cap_edges)) != CC_OK) { cc__free(ctx, edges); return rc; }
    if ((rc = cc__derive_transients(g, &edges, &n_edges, &cap_edges)) != CC_OK) {
        cc__free(ctx, edges);
        cc__graph_invalidate(g);
        return rc;
    }
    if ((rc = cc__sort_edges(g, edges, n_edges)) != CC_OK) { cc__free(ctx, edges); cc__graph_invalidate(g); return rc; }
    for (e = 0, m = 0; e < n_edges; e++)
        if (m == 0 || edges[e].from != edges[m - 1].from || edges[e].to != edges[m - 1].to) edges[m++] = edges[e];
    n_edges = m;
    g->succ_off = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
    g->pred_off = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
    g->succ = (int*)cc__alloc(ctx, (n_edges + 1) * sizeof(int));
    g->pred = (int*)cc__alloc(ctx, (n_edges + 1) * sizeof(int));
    g->topo = (int*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof(int));
    indeg = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
    if (!g->succ_off || !g->pred_off || !g->succ || !g->pred || !g->topo || !indeg) {
        cc__free(ctx, edges); cc__free(ctx, indeg);
        cc__graph_invalidate(g);
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_validate: out of memory");
    }
    for (e = 0; e < n_edges; e++) { g->succ_off[edges[e].from + 1]++; g->pred_off[edges[e].to + 1]++; }
    for (i = 0; i < g->n; i++) { g->succ_off[i + 1] += g->succ_off[i]; g->pred_off[i + 1] += g->pred_off[i]; }
    for (e = 0; e < n_edges; e++) g->succ[g->succ_off[edges[e].from] + indeg[edges[e].from]++] = edges[e].to;
    memset(indeg, 0, ((size_t)g->n + 1) * sizeof(int));
    for (e = 0; e < n_edges; e++) g->pred[g->pred_off[edges[e].to] + indeg[edges[e].to]++] = edges[e].from;
    /* edges were sorted by (from, to): pred lists come out sorted too */
    g->n_edges = n_edges;
    cc__free(ctx, edges);
    if (cc__topo_order(g->n, g->succ_off, g->succ, NULL, NULL, indeg, g->topo) < g->n) {
        rc = cc__report_cycle(g, indeg);
        cc__free(ctx, indeg);
        cc__graph_invalidate(g);
        return rc;
    }
    cc__free(ctx, indeg);
    g->valid = 1;
    return CC_OK;
}

CONCERTO_API int cc_op_preds(const cc_graph* g, cc_op op, cc_op* out, int max) {
    int i = cc_op_index(g, op), e, c = 0;
    if (i < 0 || !g->valid) return -1;
    for (e = g->pred_off[i]; e < g->pred_off[i + 1]; e++, c++)
        if (out && c < max) out[c] = cc_graph_op(g, g->pred[e]);
    return c;
}

/* ---- split rules (>>split) ------------------------------------------------
   cc_op_split_regions gives a chunk's regions from the op's, by its rule;
   cc_op_split_check runs every chunk and proves that together they are the
   op. The built-in rules see a region as a row-major matrix of a known
   number of rows (contiguous: n_bytes / rows each; strided: n_rows of
   them) and cut a block of rows or of bytes within each row (columns). */

/* Region r seen as R rows: each row's bytes and the stride. 0 if it is not
   R rows (a contiguous region whose bytes R does not divide, a strided one
   of other n_rows). */
static int cc__split_view(const cc_region* r, uint64_t R, uint64_t* row, uint64_t* stride) {
    if (R == 0) return 0;
    if (r->n_rows > 1) {
        if (r->n_rows != R) return 0;
        *row = r->n_bytes;
        *stride = r->stride_bytes;
        return 1;
    }
    if (r->n_bytes % R) return 0;
    *row = r->n_bytes / R;
    *stride = *row;
    return 1;
}

/* Rows [r0, r1) and bytes [b0, b1) of each row of r seen with (row, stride):
   contiguous where it can be, strided otherwise. */
static cc_region cc__split_block(const cc_region* r, uint64_t row, uint64_t stride, uint64_t r0, uint64_t r1, uint64_t b0,
                                 uint64_t b1) {
    cc_region o = *r;
    o.offset_bytes = r->offset_bytes + r0 * stride + b0;
    o.split_rows = 0;
    if (r1 - r0 == 1 || (b0 == 0 && b1 == row && stride == row)) {
        o.n_bytes = (r1 - r0 - 1) * stride + (b1 - b0);
        o.n_rows = 0;
        o.stride_bytes = 0;
    } else {
        o.n_bytes = b1 - b0;
        o.n_rows = r1 - r0;
        o.stride_bytes = stride;
    }
    return o;
}

/* What a split call knows, for its messages: "op 'x', rule 'y', chunk i of n along AXIS". */
typedef struct cc__split_ctx {
    cc_graph* g;
    const cc__split_rec* rec;
    cc_split_chunk ch;
    char where[256];
} cc__split_ctx;

/* Cuts region q (which of the op's, for messages) along [begin, end) of
   extent E: rows (cols 0) or bytes within rows (cols 1) of the region seen
   as R rows. */
static cc_result cc__split_cut(cc__split_ctx* c, cc_region* rg, const char* what, uint64_t R, int cols, uint64_t E) {
    uint64_t row, stride;
    if (!cc__split_view(rg, R, &row, &stride))
        return CONCERTO__FAIL(c->g->ctx, CC_ERR_REGION, "%s: %s (%llu bytes%s) is not %llu rows", c->where, what,
                              (unsigned long long)rg->n_bytes, rg->n_rows > 1 ? " a row" : "", (unsigned long long)R);
    if (!cols) {
        uint64_t m = R / E;   /* rows of the region per unit of the axis */
        if (R % E)
            return CONCERTO__FAIL(c->g->ctx, CC_ERR_REGION, "%s: %s has %llu rows, not a multiple of the axis's %llu", c->where,
                                  what, (unsigned long long)R, (unsigned long long)E);
        *rg = cc__split_block(rg, row, stride, c->ch.begin * m, c->ch.end * m, 0, row);
        return CC_OK;
    }
    if (row % E)
        return CONCERTO__FAIL(c->g->ctx, CC_ERR_REGION, "%s: a row of %s (%llu bytes) does not divide into the axis's %llu "
                              "columns", c->where, what, (unsigned long long)row, (unsigned long long)E);
    *rg = cc__split_block(rg, row, stride, 0, R, c->ch.begin * (row / E), c->ch.end * (row / E));
    return CC_OK;
}

/* The chunk's regions by a built-in rule; rd/wr hold the op's. */
static cc_result cc__split_builtin(cc__split_ctx* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    const cc_split* r = &c->rec->s;
    cc_axis ax = c->ch.axis;
    uint64_t E = r->extent[ax];
    int q;
    cc_result rc = CC_OK;
    (void)nr;
    switch (r->kind) {
        case CC_SPLIT_ROWWISE:
            for (q = 0; q < nr + nw && rc == CC_OK; q++) {
                cc_region* rg = q < nr ? &rd[q] : &wr[q - nr];
                char what[32];
                uint64_t R = rg->split_rows;
                if (!R) {
                    if (q >= nr)
                        return CONCERTO__FAIL(c->g->ctx, CC_ERR_REGION, "%s: writes[%d] has split_rows 0: a row-wise op's "
                                              "outputs are rows", c->where, q - nr);
                    continue;
                }
                snprintf(what, sizeof what, "%s[%d]", q < nr ? "reads" : "writes", q < nr ? q : q - nr);
                if (rg->n_rows > 1) {   /* split_rows of strided rows: R runs of n_rows / R rows */
                    uint64_t each = rg->n_rows / R;
                    cc_region t = *rg;
                    if (R % E) {
                        return CONCERTO__FAIL(c->g->ctx, CC_ERR_REGION, "%s: %s has %llu rows, not a multiple of the "
                                              "axis's %llu", c->where, what, (unsigned long long)R, (unsigned long long)E);
                    }
                    t.offset_bytes += c->ch.begin * (R / E) * each * rg->stride_bytes;
                    t.n_rows = (c->ch.end - c->ch.begin) * (R / E) * each;
                    t.split_rows = (c->ch.end - c->ch.begin) * (R / E);
                    if (t.n_rows == 1) { t.n_rows = 0; t.stride_bytes = 0; }
                    *rg = t;
                } else {
                    rc = cc__split_cut(c, rg, what, R, 0, E);
                    rg->split_rows = (c->ch.end - c->ch.begin) * (R / E);
                }
            }
            return rc;
        case CC_SPLIT_MATMUL: {
            uint64_t M = r->extent[CC_AXIS_ROWS], N = r->extent[CC_AXIS_COLS], K = r->extent[CC_AXIS_REDUCE];
            if (ax == CC_AXIS_ROWS) {
                if ((rc = cc__split_cut(c, &rd[0], "reads[0] (A)", M, 0, M)) != CC_OK) return rc;
                return cc__split_cut(c, &wr[0], "writes[0] (C)", M, 0, M);
            }
            if (ax == CC_AXIS_COLS) {
                if ((rc = cc__split_cut(c, &rd[1], "reads[1] (B)", K, 1, N)) != CC_OK) return rc;
                return cc__split_cut(c, &wr[0], "writes[0] (C)", M, 1, N);
            }
            if ((rc = cc__split_cut(c, &rd[0], "reads[0] (A)", M, 1, K)) != CC_OK) return rc;
            if ((rc = cc__split_cut(c, &rd[1], "reads[1] (B)", K, 0, K)) != CC_OK) return rc;
            partial[0] = 1;   /* C: every chunk adds its part of the sum */
            return CC_OK;
        }
        case CC_SPLIT_ATTENTION: {
            uint64_t T = r->extent[CC_AXIS_ROWS], H = r->extent[CC_AXIS_HEADS];
            static const char* const nm[4] = {"reads[0] (Q)", "reads[1] (K)", "reads[2] (V)", "writes[0] (O)"};
            for (q = 0; q < 4 && rc == CC_OK; q++) {
                cc_region* rg = q < 3 ? &rd[q] : &wr[0];
                int kv = q == 1 || q == 2;
                if (ax == CC_AXIS_HEADS) rc = cc__split_cut(c, rg, nm[q], kv && rg->n_rows > 1 ? rg->n_rows : T, 1, H);
                else if (!kv) rc = cc__split_cut(c, rg, nm[q], T, 0, T);
            }
            return rc;
        }
        default:
            return CONCERTO__FAIL(c->g->ctx, CC_ERR_INVALID_ARG, "%s: unknown rule kind %d", c->where, (int)r->kind);
    }
}

/* Access x as the cc_region that made it, of the graph with serial `serial`. */
static cc_region cc__acc_region(const cc__access* x, uint32_t serial) {
    cc_region o;
    memset(&o, 0, sizeof o);
    o.buffer.id = x->buffer + 1;
    o.buffer.graph = serial;
    o.offset_bytes = x->offset;
    o.n_bytes = x->row_bytes;
    o.split_rows = x->split_rows;
    o.n_rows = x->rows > 1 ? x->rows : 0;
    o.stride_bytes = x->rows > 1 ? x->stride : 0;
    return o;
}

/* Op i's regions, reads then writes, as cc_region (of graph g). */
static int cc__op_regions(const cc_graph* g, int i, cc_region* rd, cc_region* wr) {
    size_t a, end;
    int nr = 0, nw = 0;
    for (a = cc__op_accesses(g, i, &end); a < end; a++) {
        const cc__access* x = &g->acc[a];
        if (x->is_write) wr[nw++] = cc__acc_region(x, g->serial);
        else rd[nr++] = cc__acc_region(x, g->serial);
    }
    return nr;
}

/* The numbers of reads and writes of op i. */
static void cc__op_counts(const cc_graph* g, int i, int* nr, int* nw) {
    size_t a, end;
    *nr = *nw = 0;
    for (a = cc__op_accesses(g, i, &end); a < end; a++)
        if (g->acc[a].is_write) (*nw)++;
        else (*nr)++;
}

/* cc_op_split_regions on op i (validated arguments). */
static cc_result cc__split_regions(cc_graph* g, int i, cc_axis axis, int index, int count, cc_region* rd, cc_region* wr,
                                   int* partial) {
    cc__split_ctx c;
    const cc__split_rec* rec;
    uint64_t E;
    int nr, nw, q;
    cc_result rc;
    memset(&c, 0, sizeof c);
    c.g = g;
    if (g->split_of[i] < 0)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s' has no split rule", cc__name(g, i));
    rec = c.rec = &g->splits[g->split_of[i]];
    if ((int)axis < 0 || axis >= CC_AXIS_COUNT || !(cc__split_axes(&rec->s) >> axis & 1u))
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s', rule '%s': the op does not split along %s", cc__name(g, i),
                              g->names.s + rec->name, cc_axis_name(axis));
    E = rec->s.extent[axis];
    if (count < 1 || (uint64_t)count > E || index < 0 || index >= count)
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s', rule '%s': chunk %d of %d along %s: want 1 <= count <= the "
                              "axis's length %llu and 0 <= index < count", cc__name(g, i), g->names.s + rec->name, index, count,
                              cc_axis_name(axis), (unsigned long long)E);
    c.ch.axis = axis;
    c.ch.index = index;
    c.ch.count = count;
    c.ch.begin = (uint64_t)index * E / (uint64_t)count;
    c.ch.end = (uint64_t)(index + 1) * E / (uint64_t)count;
    cc__fmt(c.where, sizeof c.where, "op '%s', rule '%s', chunk %d of %d along %s", cc__name(g, i), g->names.s + rec->name, index,
            count, cc_axis_name(axis));
    nr = cc__op_regions(g, i, rd, wr);
    cc__op_counts(g, i, &q, &nw);
    for (q = 0; q < nw; q++) partial[q] = 0;
    if (rec->s.kind == CC_SPLIT_USER) {
        cc_region* orig = (cc_region*)cc__alloc(g->ctx, ((size_t)nr + (size_t)nw + 1) * sizeof *orig);
        if (!orig) return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", c.where);
        memcpy(orig, rd, (size_t)nr * sizeof *rd);
        memcpy(orig + nr, wr, (size_t)nw * sizeof *wr);
        if (rec->s.fn(rec->s.user_data, &c.ch, rd, nr, wr, nw, partial) != 0) {
            cc__free(g->ctx, orig);
            return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "%s: the user rule refused the chunk", c.where);
        }
        rc = CC_OK;
        for (q = 0; q < nr + nw && rc == CC_OK; q++) {
            const cc_region* rg = q < nr ? &rd[q] : &wr[q - nr];
            char where[300];
            cc__fmt(where, sizeof where, "%s: %s[%d]", c.where, q < nr ? "reads" : "writes", q < nr ? q : q - nr);
            if (rg->buffer.id != orig[q].buffer.id || rg->buffer.graph != orig[q].buffer.graph)
                rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "%s is in another buffer than the op's region", where);
            else rc = cc__check_region_at(g, where, rg);
        }
        cc__free(g->ctx, orig);
        return rc;
    }
    return cc__split_builtin(&c, rd, nr, wr, nw, partial);
}

CONCERTO_API cc_result cc_op_split_regions(cc_graph* g, cc_op op, cc_axis axis, int index, int count, cc_region* reads,
                                           cc_region* writes, int* partial) {
    int i, nr, nw, *pw;
    cc_result rc;
    cc_region* tmp;
    if (!g) return CC_ERR_INVALID_ARG;
    if ((i = cc__op_arg(g, op, "cc_op_split_regions: op")) < 0) return CC_ERR_UNKNOWN_OP;
    cc__op_counts(g, i, &nr, &nw);
    if ((nr && !reads) || (nw && !writes))
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "cc_op_split_regions: op '%s' has %d reads and %d writes: reads or "
                              "writes is NULL", cc__name(g, i), nr, nw);
    /* work on copies: the caller's arrays change only on success */
    tmp = (cc_region*)cc__alloc(g->ctx, ((size_t)nr + (size_t)nw + 1) * sizeof *tmp);
    pw = (int*)cc__alloc(g->ctx, ((size_t)nw + 1) * sizeof *pw);
    if (!tmp || !pw) {
        cc__free(g->ctx, tmp); cc__free(g->ctx, pw);
        return CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "cc_op_split_regions: out of memory");
    }
    rc = cc__split_regions(g, i, axis, index, count, tmp, tmp + nr, pw);
    if (rc == CC_OK) {
        if (nr) memcpy(reads, tmp, (size_t)nr * sizeof *tmp);
        if (nw) memcpy(writes, tmp + nr, (size_t)nw * sizeof *tmp);
        if (partial) memcpy(partial, pw, (size_t)nw * sizeof *pw);
    }
    cc__free(g->ctx, tmp);
    cc__free(g->ctx, pw);
    return rc;
}

/* 1 if regions a and b name the same bytes the same way. */
static int cc__region_same(const cc_region* a, const cc_region* b) {
    uint64_t ra = a->n_rows > 1 ? a->n_rows : 1, rb = b->n_rows > 1 ? b->n_rows : 1;
    return a->buffer.id == b->buffer.id && a->offset_bytes == b->offset_bytes && a->n_bytes == b->n_bytes && ra == rb &&
           (ra == 1 || a->stride_bytes == b->stride_bytes);
}

typedef struct cc__split_iv { uint64_t lo, hi; int chunk; } cc__split_iv;

static int cc__split_iv_cmp(const void* a, const void* b) {
    const cc__split_iv* x = (const cc__split_iv*)a;
    const cc__split_iv* y = (const cc__split_iv*)b;
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    return x->chunk < y->chunk ? -1 : x->chunk > y->chunk;
}

/* 1 if bytes [lo, hi) lie inside region r (one of its rows). */
static int cc__region_holds(const cc_region* r, uint64_t lo, uint64_t hi) {
    uint64_t rows = r->n_rows > 1 ? r->n_rows : 1, stride = r->n_rows > 1 ? r->stride_bytes : r->n_bytes, j;
    if (lo < r->offset_bytes || hi < lo) return 0;
    j = stride ? (lo - r->offset_bytes) / stride : 0;
    if (j >= rows) return 0;
    return hi <= r->offset_bytes + j * stride + r->n_bytes;
}

CONCERTO_API cc_result cc_op_split_check(cc_graph* g, cc_op op, cc_axis axis, int count, int* exact) {
    int i, nr, nw, nq, ch, q;
    cc_region* all = NULL;     /* [count][nq]: every chunk's regions */
    cc_region* own = NULL;     /* [nq]: the op's */
    int* part = NULL;          /* [count][nw] */
    cc__split_iv* iv = NULL;
    size_t n_iv_cap = 0;
    cc_result rc = CC_OK;
    const char* rn;
    if (exact) *exact = 0;
    if (!g) return CC_ERR_INVALID_ARG;
    if ((i = cc__op_arg(g, op, "cc_op_split_check: op")) < 0) return CC_ERR_UNKNOWN_OP;
    if (g->split_of[i] < 0) return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s' has no split rule", cc__name(g, i));
    rn = g->names.s + g->splits[g->split_of[i]].name;
    cc__op_counts(g, i, &nr, &nw);
    nq = nr + nw;
    if (count < 1 || count > (1 << 20))
        return CONCERTO__FAIL(g->ctx, CC_ERR_INVALID_ARG, "op '%s', rule '%s': count %d along %s is not in 1..2^20", cc__name(g, i),
                              rn, count, cc_axis_name(axis));
    all = (cc_region*)cc__alloc(g->ctx, ((size_t)count * (size_t)nq + 1) * sizeof *all);
    own = (cc_region*)cc__alloc(g->ctx, ((size_t)nq + 1) * sizeof *own);
    part = (int*)cc__alloc(g->ctx, ((size_t)count * (size_t)nw + 1) * sizeof *part);
    if (!all || !own || !part) { rc = CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "cc_op_split_check: out of memory"); goto done; }
    cc__op_regions(g, i, own, own + nr);
    for (ch = 0; ch < count && rc == CC_OK; ch++)
        rc = cc__split_regions(g, i, axis, ch, count, all + (size_t)ch * nq, all + (size_t)ch * nq + nr, part + (size_t)ch * nw);
    if (exact && rc == CC_OK) *exact = 1;
    for (q = 0; q < nq && rc == CC_OK; q++) {
        const cc_region* whole = &own[q];
        const char* kind = q < nr ? "reads" : "writes";
        int qi = q < nr ? q : q - nr, same = 1, n_part = 0;
        size_t n_iv = 0, k;
        uint64_t covered = 0, need = whole->n_bytes * (whole->n_rows > 1 ? whole->n_rows : 1);
        for (ch = 0; ch < count; ch++) {
            same &= cc__region_same(&all[(size_t)ch * nq + q], whole);
            if (q >= nr) n_part += part[(size_t)ch * nw + qi] != 0;
        }
        if (q >= nr && n_part && n_part != count) {
            rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s' along %s in %d: writes[%d] is a partial sum in %d chunks "
                                "of %d: a partial sum is written by every chunk", cc__name(g, i), rn, cc_axis_name(axis), count,
                                qi, n_part, count);
            break;
        }
        if (q >= nr && n_part && !same) {
            rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s' along %s in %d: partial-sum writes[%d] is not the op's "
                                "whole region in every chunk", cc__name(g, i), rn, cc_axis_name(axis), count, qi);
            break;
        }
        if (n_part) { if (exact && count > 1) *exact = 0; continue; }   /* one chunk sums as the op does */
        if (same && (q < nr || count == 1)) continue;
        if (same) {
            rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s' along %s in %d: writes[%d] is the same in every chunk "
                                "but not a partial sum: the chunks would overwrite each other", cc__name(g, i), rn,
                                cc_axis_name(axis), count, qi);
            break;
        }
        /* cut: every chunk's rows inside the op's region, none meeting, all of it covered */
        for (ch = 0; ch < count && rc == CC_OK; ch++) {
            const cc_region* r = &all[(size_t)ch * nq + q];
            uint64_t rows = r->n_rows > 1 ? r->n_rows : 1, j;
            if (!CONCERTO__GROW(g->ctx, iv, n_iv_cap, n_iv + rows)) {
                rc = CONCERTO__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "cc_op_split_check: out of memory");
                break;
            }
            for (j = 0; j < rows; j++) {
                cc__split_iv* v = &iv[n_iv++];
                v->lo = r->offset_bytes + j * (rows > 1 ? r->stride_bytes : 0);
                v->hi = v->lo + r->n_bytes;
                v->chunk = ch;
                if (!cc__region_holds(whole, v->lo, v->hi)) {
                    rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s', chunk %d of %d along %s: %s[%d] has bytes "
                                        "[%llu, %llu) outside the op's own region", cc__name(g, i), rn, ch, count,
                                        cc_axis_name(axis), kind, qi, (unsigned long long)v->lo, (unsigned long long)v->hi);
                    break;
                }
            }
        }
        if (rc != CC_OK) break;
        qsort(iv, n_iv, sizeof *iv, cc__split_iv_cmp);
        for (k = 0; k < n_iv; k++) {
            if (k && iv[k].lo < iv[k - 1].hi) {
                rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s' along %s in %d: %s[%d] of chunks %d and %d overlap "
                                    "at byte %llu: a cut region's chunks must meet nowhere", cc__name(g, i), rn, cc_axis_name(axis),
                                    count, kind, qi, iv[k - 1].chunk, iv[k].chunk, (unsigned long long)iv[k].lo);
                break;
            }
            covered += iv[k].hi - iv[k].lo;
        }
        if (rc == CC_OK && covered != need)
            rc = CONCERTO__FAIL(g->ctx, CC_ERR_REGION, "op '%s', rule '%s' along %s in %d: the chunks of %s[%d] cover %llu of its "
                                "%llu bytes: a cut region's chunks must cover it", cc__name(g, i), rn, cc_axis_name(axis), count,
                                kind, qi, (unsigned long long)covered, (unsigned long long)need);
    }
done:
    if (rc != CC_OK && exact) *exact = 0;
    cc__free(g->ctx, all); cc__free(g->ctx, own); cc__free(g->ctx, part); cc__free(g->ctx, iv);
    return rc;
}

/* >>prob
   The internal form every solver works on: n jobs, K renewable resources,
   integer durations (1 tick = 1 ns), demands, both adjacency lists, and for
   sub-problems (odd-even windows) release times, deadlines and a fixed
   occupation of the resources by jobs outside the problem. */

typedef struct cc__prob {
    int n, k;
    const cc__time* dur;        /* [n] */
    const int32_t* dem;         /* [n*k]: demand of job i on resource r at dem[i*k + r] */
    const int32_t* cap;         /* [k] */
    const int* succ_off;        /* [n+1] CSR of direct successors */
    const int* succ;
    const int* pred_off;        /* [n+1] CSR of direct predecessors */
    const int* pred;
    const cc__time* release;    /* [n] earliest start, or NULL (all 0) */
    const cc__time* deadline;   /* [n] latest finish, or NULL (none) */
    int n_busy;                 /* fixed occupation: busy_dem[b*k + r] units of */
    const cc__time* busy_start; /* resource r are taken in [busy_start[b], busy_end[b]) */
    const cc__time* busy_end;
    const int32_t* busy_dem;
    cc__time grain;             /* every duration is a multiple of grain (>= 1) */
    cc__time launch, wait;      /* the executor's costs (cc_exec_costs), for the stream simulation only */
    const cc__time* launch_of;  /* [n] or NULL: job v's own launch and wait costs in place of launch */
    const cc__time* wait_of;    /* and wait (a step replayed from its timeline) */
    double slow[2];             /* overlap slowdowns by class: [0] compute, [1] communication (1: none) */
    const int* coll_of;         /* [n] >= 0: a communication job (with slow[]), or NULL */
    /* memory (a whole graph's problem alone; mem_cap 0: none): n_mb
       transient buffers, each held from its allocating job's start to its
       users' last end (the graph's mb_* and op_mb*) */
    uint64_t mem_cap;
    int n_mb;
    const uint64_t* mb_bytes;
    const int *mb_alloc, *mb_user_off, *mb_user, *op_mb_off, *op_mb;
} cc__prob;

/* The problem of a whole validated graph (borrows the graph's arrays). */

static void cc__prob_of_graph(const cc_graph* g, cc__prob* p) {
    int i;
    memset(p, 0, sizeof *p);
    p->n = g->n; p->k = g->k;
    p->dur = g->dur; p->dem = g->dem; p->cap = g->cap;
    p->succ_off = g->succ_off; p->succ = g->succ; p->pred_off = g->pred_off; p->pred = g->pred;
    p->grain = 0;
    for (i = 0; i < g->n; i++) p->grain = cc__gcd(p->grain, g->dur[i]);
    if (p->grain < 1) p->grain = 1;
    p->launch = (cc__time)llround(g->costs.launch_us * CONCERTO__TICKS_PER_US);
    p->wait = (cc__time)llround(g->costs.wait_us * CONCERTO__TICKS_PER_US);
    p->slow[0] = g->costs.compute_overlap > 1 ? g->costs.compute_overlap : 1;
    p->slow[1] = g->costs.comm_overlap > 1 ? g->costs.comm_overlap : 1;
    p->coll_of = g->coll_of;
    p->n_mb = g->n_mb; p->mb_bytes = g->mb_bytes; p->mb_alloc = g->mb_alloc;
    p->mb_user_off = g->mb_user_off; p->mb_user = g->mb_user; p->op_mb_off = g->op_mb_off; p->op_mb = g->op_mb;
}

/* The peak of the transient buffers of starts s (each from its allocating
   job's start to its users' last end), the instant *at (may be NULL).
   ev: scratch of 2 n_mb entries. */
typedef struct cc__mev { cc__time t; int64_t d; } cc__mev;

static int cc__mev_cmp(const void* a, const void* b) {
    const cc__mev* x = (const cc__mev*)a;
    const cc__mev* y = (const cc__mev*)b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->d > y->d) - (x->d < y->d);   /* frees first at equal times */
}

static uint64_t cc__mem_peak(const cc__prob* p, const cc__time* s, cc__mev* ev, cc__time* at) {
    int m, k, ne = 0;
    int64_t cur = 0, best = 0;
    if (at) *at = 0;
    for (m = 0; m < p->n_mb; m++) {
        cc__time e = 0;
        for (k = p->mb_user_off[m]; k < p->mb_user_off[m + 1]; k++) {
            int u = p->mb_user[k];
            if (s[u] + p->dur[u] > e) e = s[u] + p->dur[u];
        }
        ev[ne].t = s[p->mb_alloc[m]]; ev[ne].d = (int64_t)p->mb_bytes[m]; ne++;
        ev[ne].t = e > s[p->mb_alloc[m]] ? e : s[p->mb_alloc[m]] + 1; ev[ne].d = -(int64_t)p->mb_bytes[m]; ne++;
    }
    qsort(ev, (size_t)ne, sizeof *ev, cc__mev_cmp);
    for (k = 0; k < ne; k++) {
        cur += ev[k].d;
        if (cur > best) { best = cur; if (at) *at = ev[k].t; }
    }
    return (uint64_t)best;
}

/* The earliest start of job i after its predecessors, which start at
   start[] (and after its release). */
static cc__time cc__prob_est(const cc__prob* p, int i, const cc__time* start) {
    cc__time s = p->release ? p->release[i] : 0;
    int e;
    for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
        int q = p->pred[e];
        if (start[q] + p->dur[q] > s) s = start[q] + p->dur[q];
    }
    return s;
}

/* The makespan of the starts s. */
static cc__time cc__makespan(const cc__prob* p, const cc__time* s) {
    cc__time mk = 0;
    int i;
    for (i = 0; i < p->n; i++) if (s[i] + p->dur[i] > mk) mk = s[i] + p->dur[i];
    return mk;
}

/* Earliest starts and latest finishes ignoring resources, in topological
   order topo; lf may be NULL. Returns the critical-path length (release
   times respected). */
static cc__time cc__prob_times(const cc__prob* p, const int* topo, cc__time* es, cc__time* lf) {
    cc__time cp = 0;
    int t, i, e;
    for (t = 0; t < p->n; t++) {
        i = topo[t];
        es[i] = cc__prob_est(p, i, es);
        if (es[i] + p->dur[i] > cp) cp = es[i] + p->dur[i];
    }
    if (lf) {
        for (t = p->n - 1; t >= 0; t--) {
            cc__time f = cp;
            i = topo[t];
            for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++) {
                int q = p->succ[e];
                cc__time l = lf[q] - p->dur[q];
                if (l < f) f = l;
            }
            lf[i] = f;
        }
    }
    return cp;
}

/* The critical-path length, or -2 when out of memory. */
static cc__time cc__prob_critical_path(cc_context* ctx, const cc__prob* p, const int* topo) {
    cc__time* es = (cc__time*)cc__alloc(ctx, ((size_t)p->n + 1) * sizeof *es);
    cc__time cp;
    if (!es) return -2;
    cp = cc__prob_times(p, topo, es, NULL);
    cc__free(ctx, es);
    return cp;
}

static cc__time cc__round_up(cc__time t, cc__time grain) { return grain > 1 ? ((t + grain - 1) / grain) * grain : t; }

/* Resource bound: max over r of ceil(sum d_i * r_i / cap_r). */
static cc__time cc__prob_resource_lb(const cc__prob* p) {
    cc__time best = 0;
    int r, i;
    for (r = 0; r < p->k; r++) {
        double load = 0;   /* double: 1e6 ops * 1e12 ns would overflow int64 */
        cc__time lb;
        for (i = 0; i < p->n; i++) load += (double)p->dur[i] * (double)p->dem[(size_t)i * p->k + r];
        if (load <= 0) continue;
        if (p->cap[r] <= 0) return CONCERTO__TIME_MAX;
        lb = (cc__time)ceil(load / (double)p->cap[r] - 1e-9);
        if (lb > best) best = lb;
    }
    return best;
}

/* 1 when some resource's capacity is above 1 (a cumulative resource), 0
   on unary streams alone. */
static int cc__prob_cumulative(const cc__prob* p) {
    int r;
    for (r = 0; r < p->k; r++)
        if (p->cap[r] > 1) return 1;
    return 0;
}

/* The shape of the demands: *single (may be NULL) 1 if every job demands
   at most one resource (then fast list scheduling applies); *unary (may
   be NULL) 1 if every demand is 1 of a resource of capacity 1 and there
   are no releases, deadlines or busy blocks (then the stream simulation
   below applies). Returns the first job on more than one resource or with
   a demand other than 1 of a stream, -1 if none (a stream graph). */
static int cc__prob_shape(const cc__prob* p, int* single, int* unary) {
    int i, bad = -1, is_single = 1, is_unary = 1;
    for (i = 0; i < p->n; i++) {
        int first, u, c = cc__demand_use(p->dem + (size_t)i * p->k, p->cap, p->k, &first, &u);
        if (c > 1) is_single = 0;
        if (!u) is_unary = 0;
        if ((c > 1 || !u) && bad < 0) bad = i;
    }
    if (single) *single = is_single;
    if (unary) *unary = is_unary && p->n_busy == 0 && !p->release && !p->deadline;
    return bad;
}

/* The stream simulation of an issue order on a unary problem. Each
   resource runs its jobs in the order's sequence; a job starts when its
   predecessors are done and it is at the head of every resource it uses,
   after the executor's costs: p->launch before every job on a stream, and
   p->wait more where a predecessor on another stream (or on none) ends
   after the job's own stream and same-stream predecessors let it start:
   the stream blocked in a wait; and a job that overlaps the job last
   placed on another stream of the other class (compute beside
   communication) runs the overlapped part p->slow[class] times as long.
   The stretched jobs' durations go to dur_out (by job; may be NULL).
   O(n k + e). Returns the makespan, -1 on a deadlock (blocked[0] then holds a
   job that never became ready, blocked[1] the dependency it waits for),
   -2 when out of memory. */
static cc__time cc__stream_sim_d(cc_context* ctx, const cc__prob* p, const int* order, cc__time* start, int* blocked,
                                 cc__time* dur_out) {
    int n = p->n, k = p->k, i, e, r, head_q = 0, tail_q = 0, done = 0;
    int* next = (int*)cc__alloc(ctx, (size_t)(n + 1) * (size_t)(k ? k : 1) * sizeof(int));
    int* left = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* q = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* heads = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int)); /* resources still ahead of it */
    cc__time* ready = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__time));
    cc__time* ready_x = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__time));   /* from other streams */
    int* res_of = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));                  /* its stream, or -1 */
    int first[CONCERTO_MAX_RESOURCES], last[CONCERTO_MAX_RESOURCES], cls_at[CONCERTO_MAX_RESOURCES];
    cc__time free_at[CONCERTO_MAX_RESOURCES], from_at[CONCERTO_MAX_RESOURCES], mk = 0;
    int slowed = p->coll_of && (p->slow[0] > 1 || p->slow[1] > 1);
    if (!next || !left || !q || !heads || !ready || !ready_x || !res_of) { mk = -2; goto done; }
    for (r = 0; r < k; r++) { first[r] = last[r] = -1; free_at[r] = from_at[r] = 0; cls_at[r] = -1; }
    for (i = 0; i < n; i++) {
        heads[i] = 0;
        res_of[i] = -1;
        for (r = 0; r < k && res_of[i] < 0; r++) if (p->dem[(size_t)i * k + r]) res_of[i] = r;
    }
    for (i = 0; i < n; i++) {
        int v = order[i];
        for (r = 0; r < k; r++) {
            if (!p->dem[(size_t)v * k + r]) continue;
            next[(size_t)v * k + r] = -1;
            if (last[r] < 0) first[r] = v; else { next[(size_t)last[r] * k + r] = v; heads[v]++; }
            last[r] = v;
        }
    }
    for (i = 0; i < n; i++) {
        left[i] = p->pred_off[i + 1] - p->pred_off[i];
        ready[i] = ready_x[i] = 0;
        if (!left[i] && !heads[i]) q[tail_q++] = i;
    }
    while (head_q < tail_q) {
        int v = q[head_q++];
        cc__time s = ready[v];
        for (r = 0; r < k; r++) if (p->dem[(size_t)v * k + r] && free_at[r] > s) s = free_at[r];
        cc__time d = p->dur[v];
        if (res_of[v] >= 0) s += p->launch_of ? p->launch_of[v] : p->launch;
        if (ready_x[v] > s) s = ready_x[v] + (res_of[v] >= 0 ? (p->wait_of ? p->wait_of[v] : p->wait) : 0);
        if (slowed && res_of[v] >= 0 && d > 0) {   /* the part beside the other class, stretched */
            int cls = p->coll_of[v] >= 0;
            cc__time over = 0;
            for (r = 0; r < k; r++) {
                cc__time a, z;
                if (r == res_of[v] || cls_at[r] < 0 || cls_at[r] == cls) continue;
                a = from_at[r] > s ? from_at[r] : s;
                z = free_at[r] < s + d ? free_at[r] : s + d;
                if (z - a > over) over = z - a;
            }
            if (over > 0) d += (cc__time)llround((double)over * (p->slow[cls] - 1));
        }
        if (dur_out) dur_out[v] = d;
        start[v] = s;
        done++;
        heads[v] = -1;   /* processed */
        if (s + d > mk) mk = s + d;
        for (r = 0; r < k; r++) {
            int w;
            if (!p->dem[(size_t)v * k + r]) continue;
            from_at[r] = s;
            cls_at[r] = p->coll_of ? p->coll_of[v] >= 0 : 0;
            free_at[r] = s + d;
            w = next[(size_t)v * k + r];
            if (w >= 0 && --heads[w] == 0 && left[w] == 0) q[tail_q++] = w;
        }
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) {
            int w = p->succ[e];
            cc__time* rw = res_of[w] >= 0 && res_of[w] == res_of[v] ? &ready[w] : &ready_x[w];
            if (s + d > *rw) *rw = s + d;
            if (--left[w] == 0 && heads[w] == 0) q[tail_q++] = w;
        }
    }
    if (done < n) {
        mk = -1;
        if (blocked) {
            /* a stream head that waits for a dependency, and that dependency */
            blocked[0] = blocked[1] = -1;
            for (i = 0; i < n && blocked[0] < 0; i++) if (heads[order[i]] == 0 && left[order[i]] > 0) blocked[0] = order[i];
            if (blocked[0] >= 0)
                for (e = p->pred_off[blocked[0]]; e < p->pred_off[blocked[0] + 1]; e++)
                    if (heads[p->pred[e]] != -1) { blocked[1] = p->pred[e]; break; }
        }
    }
    (void)first;
done:
    cc__free(ctx, next); cc__free(ctx, left); cc__free(ctx, q); cc__free(ctx, heads); cc__free(ctx, ready);
    cc__free(ctx, ready_x); cc__free(ctx, res_of);
    return mk;
}

static cc__time cc__stream_sim(cc_context* ctx, const cc__prob* p, const int* order, cc__time* start, int* blocked) {
    return cc__stream_sim_d(ctx, p, order, start, blocked, NULL);
}

CONCERTO_API cc_result cc_lower_bounds(cc_context* ctx, cc_graph* g, double* cp_us, double* res_us) {
    cc__prob p;
    cc__time cp;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_lower_bounds")) != CC_OK) return rc;
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    cc__prob_of_graph(g, &p);
    if ((cp = cc__prob_critical_path(ctx, &p, g->topo)) < 0) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_lower_bounds: out of memory");
    if (cp_us) *cp_us = (double)cp / CONCERTO__TICKS_PER_US;
    if (res_us) *res_us = (double)cc__round_up(cc__prob_resource_lb(&p), p.grain) / CONCERTO__TICKS_PER_US;
    return CC_OK;
}

/* >>sgs
   List scheduling: resource profiles, the serial and parallel
   schedule-generation schemes, priority rules and activity lists, and fast
   list scheduling of large stream graphs.

   Resource profile: breakpoints t[0] < t[1] < ... < t[m-1]; segment j is
   [t[j], t[j+1]) with use[j*k + r] units of resource r taken. t[0] is
   -infinity, the last segment runs to +infinity and is always empty. */

typedef struct cc__profile {
    int k, m;
    size_t cap_t, cap_u;
    cc__time* t;
    int32_t* use;
    const int32_t* cap;
    /* the time grid of the serial SGS (cc__ssgs_grid), set up for the
       problem whose durations and demands are g_dur and g_dem */
    const cc__time* g_dur;
    const int32_t* g_dem;
    int g_n, g_ok, g_hz, g_dirty;   /* jobs; grid usable; cells per resource; cells used */
    int32_t *g_du, *g_su, *g_use;   /* durations and starts in grains; use[cell * k + r] */
    int *g_off, *g_res;             /* CSR: each job's resources of positive demand */
    int32_t* g_room;                /* and the use that leaves it room there (capacity - demand) */
    /* packed cells (g_packed: at most 4 resources, capacities below 2^15):
       one 64-bit word a cell, the use of resource r in bits [16r, 16r + 15);
       per job its demands packed the same way, and its room (capacity -
       demand, or 2^15 - 1 where it demands nothing) with bit 15 of each
       lane set */
    int g_packed;
    uint64_t *g_cell, *g_pdem, *g_proom;
    size_t g_du_cap, g_su_cap, g_use_cap, g_off_cap, g_res_cap, g_room_cap, g_cell_cap, g_pdem_cap, g_proom_cap;
    /* memory under a cap (the serial SGS): allocations and frees so far,
       by time (frees first at equal times); per transient buffer its users
       placed and their last end */
    cc__mev* m_ev; int m_ne;
    int64_t m_held;                 /* the sum of the events: bytes held for ever after the last one */
    int* m_cnt; cc__time* m_end;
    int* m_left; char* m_done;      /* the serial SGS's: predecessors left, placed */
    size_t m_ev_cap, m_cnt_cap, m_end_cap, m_left_cap, m_done_cap;
} cc__profile;

static void cc__profile_free(cc_context* ctx, cc__profile* pr) {
    cc__free(ctx, pr->t); cc__free(ctx, pr->use);
    cc__free(ctx, pr->g_du); cc__free(ctx, pr->g_su); cc__free(ctx, pr->g_use);
    cc__free(ctx, pr->g_off); cc__free(ctx, pr->g_res); cc__free(ctx, pr->g_room);
    cc__free(ctx, pr->g_cell); cc__free(ctx, pr->g_pdem); cc__free(ctx, pr->g_proom);
    cc__free(ctx, pr->m_ev); cc__free(ctx, pr->m_cnt); cc__free(ctx, pr->m_end);
    cc__free(ctx, pr->m_left); cc__free(ctx, pr->m_done);
    memset(pr, 0, sizeof *pr);
}

static int cc__profile_reserve(cc_context* ctx, cc__profile* pr, size_t m) {
    return CONCERTO__GROW(ctx, pr->t, pr->cap_t, m) && CONCERTO__GROW(ctx, pr->use, pr->cap_u, m * (size_t)(pr->k ? pr->k : 1));
}

/* Index of the segment containing t. */
static int cc__profile_seg(const cc__profile* pr, cc__time t) {
    int lo = 0, hi = pr->m - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (pr->t[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Splits so that a breakpoint sits at t; returns its index. Needs room for one more. */
static int cc__profile_split(cc__profile* pr, cc__time t) {
    int j = cc__profile_seg(pr, t), k = pr->k;
    if (pr->t[j] == t) return j;
    memmove(pr->t + j + 2, pr->t + j + 1, (size_t)(pr->m - j - 1) * sizeof *pr->t);
    memmove(pr->use + (size_t)(j + 2) * k, pr->use + (size_t)(j + 1) * k, (size_t)(pr->m - j - 1) * k * sizeof *pr->use);
    pr->t[j + 1] = t;
    memcpy(pr->use + (size_t)(j + 1) * k, pr->use + (size_t)j * k, (size_t)k * sizeof *pr->use);
    pr->m++;
    return j + 1;
}

static int cc__profile_add(cc_context* ctx, cc__profile* pr, cc__time s, cc__time e, const int32_t* dem, int sign) {
    int a, b, j, r;
    if (e <= s) return 1;
    for (r = 0; r < pr->k; r++) if (dem[r]) break;
    if (r == pr->k) return 1;
    if (!cc__profile_reserve(ctx, pr, (size_t)pr->m + 2)) return 0;
    a = cc__profile_split(pr, s);
    b = cc__profile_split(pr, e);
    for (j = a; j < b; j++)
        for (r = 0; r < pr->k; r++) pr->use[(size_t)j * pr->k + r] += sign * dem[r];
    return 1;
}

/* Resets to the empty profile plus the problem's fixed occupation. */
static int cc__profile_init(cc_context* ctx, cc__profile* pr, const cc__prob* p) {
    int b;
    pr->k = p->k;
    pr->cap = p->cap;
    pr->m = 0;
    if (!cc__profile_reserve(ctx, pr, 2)) return 0;
    pr->t[0] = -CONCERTO__TIME_MAX;
    memset(pr->use, 0, (size_t)(p->k ? p->k : 1) * sizeof *pr->use);
    pr->m = 1;
    for (b = 0; b < p->n_busy; b++)
        if (!cc__profile_add(ctx, pr, p->busy_start[b], p->busy_end[b], p->busy_dem + (size_t)b * p->k, 1)) return 0;
    return 1;
}

static int cc__fits(const cc__profile* pr, int j, const int32_t* dem) {
    int r;
    const int32_t* u = pr->use + (size_t)j * pr->k;
    for (r = 0; r < pr->k; r++) if (dem[r] && u[r] + dem[r] > pr->cap[r]) return 0;
    return 1;
}

/* Earliest s >= est at which dem fits for d ticks. */
static cc__time cc__profile_earliest(const cc__profile* pr, cc__time est, cc__time d, const int32_t* dem) {
    cc__time s = est;
    int j, r;
    for (r = 0; r < pr->k; r++) if (dem[r]) break;
    if (d == 0 || r == pr->k) return est;
    j = cc__profile_seg(pr, s);
    while (j < pr->m - 1 && pr->t[j] < s + d) {
        if (!cc__fits(pr, j, dem)) { s = pr->t[j + 1]; }
        j++;
    }
    /* the last segment is empty, so a start there always fits */
    if (j == pr->m - 1 && pr->t[j] < s + d && !cc__fits(pr, j, dem)) return CONCERTO__TIME_MAX;
    return s;
}

/* The serial SGS on a time grid, for the heuristics' whole problems (no
   release, deadline or fixed occupation): every start is then a sum of
   durations, so a multiple of the grain, and one cell per grain step and
   resource holds the use. Finding a start looks at each cell of the job's
   span once, and placing a job adds to its cells, where the segment list
   searches and splits (memmove) its segments: the same schedule, cheaper
   where jobs are a few grains long. The grid spans
   the sum of the durations (no serial schedule is longer: a job can always
   start at the latest finish so far); it serves where that is at most
   CONCERTO__GRID_CELLS cells over the resources and CONCERTO__GRID_MEAN_CELLS
   per job on average, else the segment list does. */
#define CONCERTO__GRID_CELLS ((size_t)1 << 20)
#define CONCERTO__GRID_MEAN_CELLS 16
#define CONCERTO__LANE_MAX 0x7fff
#define CONCERTO__LANE_GUARD 0x8000800080008000ull

/* Packed lanes (k <= 4 resources, values below 2^15, resource r in bits
   [16r, 16r + 15)): a demand vector, and the room word a use is checked
   against: capacity - demand (capacity alone with own, where the job's own
   part is already in the use) in each demanded lane, 2^15 - 1 in the
   others, bit 15 of each lane set. dem NULL: no demand. */
static uint64_t cc__lanes_dem(int k, const int32_t* dem) {
    uint64_t w = 0;
    int r;
    for (r = 0; r < k; r++) w |= (uint64_t)(dem[r] > 0 ? dem[r] : 0) << (16 * r);
    return w;
}

static uint64_t cc__lanes_room(int k, const int32_t* dem, const int32_t* cap, int own) {
    uint64_t w = CONCERTO__LANE_GUARD;
    int r;
    for (r = 0; r < 4; r++) {
        int32_t d = r < k && dem ? dem[r] : 0;
        w |= (uint64_t)(d > 0 ? cap[r] - (own ? 0 : d) : CONCERTO__LANE_MAX) << (16 * r);
    }
    return w;
}

/* Sets the grid up for p (once per problem: p and its reverse share their
   durations); 1 if the grid serves p, 0 if not (the segment list then),
   -2 out of memory. */
static int cc__grid_ready(cc_context* ctx, cc__profile* pr, const cc__prob* p) {
    int i;
    size_t hz = 1;
    if (p->release || p->deadline || p->n_busy > 0 || p->grain < 1) return 0;
    if (pr->g_dur == p->dur && pr->g_dem == p->dem && pr->g_n == p->n) return pr->g_ok;
    pr->g_dur = p->dur; pr->g_dem = p->dem; pr->g_n = p->n; pr->g_ok = 0; pr->g_dirty = 0;
    if (!CONCERTO__GROW(ctx, pr->g_du, pr->g_du_cap, (size_t)p->n + 1) ||
        !CONCERTO__GROW(ctx, pr->g_su, pr->g_su_cap, (size_t)p->n + 1)) { pr->g_dur = NULL; return -2; }
    for (i = 0; i < p->n; i++) {
        cc__time u = p->dur[i] / p->grain;
        if (p->dur[i] % p->grain || u > (cc__time)CONCERTO__GRID_CELLS) return 0;
        pr->g_du[i] = (int32_t)u;
        hz += (size_t)u;
        if (hz * (size_t)(p->k > 0 ? p->k : 1) > CONCERTO__GRID_CELLS) return 0;
    }
    /* a cell costs a look per job it spans: long jobs (a step's measured
       durations on a fine grain) are cheaper as a few segments */
    if (hz > (size_t)CONCERTO__GRID_MEAN_CELLS * (size_t)p->n + 1) return 0;
    {
        size_t nr = 0;
        int r;
        for (i = 0; i < p->n * p->k; i++) nr += p->dem[i] > 0;
        if (!CONCERTO__GROW(ctx, pr->g_off, pr->g_off_cap, (size_t)p->n + 1) ||
            !CONCERTO__GROW(ctx, pr->g_res, pr->g_res_cap, nr + 1) || !CONCERTO__GROW(ctx, pr->g_room, pr->g_room_cap, nr + 1)) {
            pr->g_dur = NULL;
            return -2;
        }
        nr = 0;
        for (i = 0; i < p->n; i++) {
            pr->g_off[i] = (int)nr;
            for (r = 0; r < p->k; r++)
                if (p->dem[(size_t)i * p->k + r] > 0) {
                    if (p->dem[(size_t)i * p->k + r] > p->cap[r]) return 0;   /* never fits: the segment list says so */
                    pr->g_res[nr] = r;
                    pr->g_room[nr++] = p->cap[r] - p->dem[(size_t)i * p->k + r];
                }
        }
        pr->g_off[p->n] = (int)nr;
    }
    pr->g_packed = p->k >= 1 && p->k <= 4;
    for (i = 0; i < p->k; i++) if (p->cap[i] < 0 || p->cap[i] > CONCERTO__LANE_MAX) pr->g_packed = 0;
    if (pr->g_packed) {
        if (!CONCERTO__GROW(ctx, pr->g_cell, pr->g_cell_cap, hz) || !CONCERTO__GROW(ctx, pr->g_pdem, pr->g_pdem_cap, (size_t)p->n + 1) ||
            !CONCERTO__GROW(ctx, pr->g_proom, pr->g_proom_cap, (size_t)p->n + 1)) {
            pr->g_dur = NULL;
            return -2;
        }
        for (i = 0; i < p->n; i++) {
            pr->g_pdem[i] = cc__lanes_dem(p->k, p->dem + (size_t)i * p->k);
            pr->g_proom[i] = cc__lanes_room(p->k, p->dem + (size_t)i * p->k, p->cap, 0);
        }
        memset(pr->g_cell, 0, hz * sizeof *pr->g_cell);
    } else {
        if (!CONCERTO__GROW(ctx, pr->g_use, pr->g_use_cap, hz * (size_t)(p->k > 0 ? p->k : 1))) { pr->g_dur = NULL; return -2; }
        memset(pr->g_use, 0, hz * (size_t)(p->k > 0 ? p->k : 1) * sizeof *pr->g_use);
    }
    pr->g_hz = (int)hz;
    pr->g_ok = 1;
    return 1;
}

/* The serial SGS on the grid (cc__grid_ready said 1): the same starts as
   the segment list's. A candidate start s is checked from the last cell of
   [s, s + d) backwards: a full cell c moves s to c + 1 at once, and the
   cells after c, known to have room, are not looked at again. */
static cc__time cc__ssgs_grid(const cc__prob* p, const int* list, cc__time* start, cc__profile* pr) {
    const int k = p->k, hz = pr->g_hz;
    const int32_t *du = pr->g_du, *room = pr->g_room;
    const int *off = pr->g_off, *res = pr->g_res;
    int32_t* su = pr->g_su;
    int32_t* g = pr->g_use;
    int t, mk = 0, e;
    if (pr->g_dirty > 0) memset(g, 0, (size_t)pr->g_dirty * (size_t)k * sizeof *g);
    pr->g_dirty = 0;
    for (t = 0; t < p->n; t++) {
        int i = list[t], d = du[i], s = 0, q0 = off[i], q1 = off[i + 1], c, q;
        for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
            int f = su[p->pred[e]] + du[p->pred[e]];
            if (f > s) s = f;
        }
        if (d > 0 && q1 > q0) {
            int ok = s - 1;   /* the cells [s, ok] have room */
            for (;;) {
                if (s + d > hz) return -3;   /* not on the grid after all */
                for (c = s + d - 1; c > ok; c--) {
                    const int32_t* u = g + (size_t)c * k;
                    for (q = q0; q < q1; q++) if (u[res[q]] > room[q]) break;
                    if (q < q1) break;
                }
                if (c <= ok) break;
                ok = s + d - 1;
                s = c + 1;
            }
            for (c = s; c < s + d; c++) {
                int32_t* u = g + (size_t)c * k;
                for (q = q0; q < q1; q++) u[res[q]] += p->cap[res[q]] - room[q];
            }
            if (s + d > pr->g_dirty) pr->g_dirty = s + d;
        }
        su[i] = s;
        start[i] = (cc__time)s * p->grain;
        if (s + d > mk) mk = s + d;
    }
    return (cc__time)mk * p->grain;
}

/* The same on packed cells (g_packed). A job fits a cell when every lane of
   its room word (bit 15 set) minus the cell's use keeps bit 15: the use
   of a lane is at most its capacity, below 2^15, so no lane borrows from
   the next, and a lane keeps its bit exactly when its use is at most its
   room. One subtraction a cell instead of a look per resource: the same
   starts. */
static cc__time cc__ssgs_packed(const cc__prob* p, const int* list, cc__time* start, cc__profile* pr) {
    const int hz = pr->g_hz;
    const int32_t* du = pr->g_du;
    const uint64_t *pdem = pr->g_pdem, *proom = pr->g_proom;
    int32_t* su = pr->g_su;
    uint64_t* g = pr->g_cell;
    int t, mk = 0, e;
    if (pr->g_dirty > 0) memset(g, 0, (size_t)pr->g_dirty * sizeof *g);
    pr->g_dirty = 0;
    for (t = 0; t < p->n; t++) {
        int i = list[t], d = du[i], s = 0, c;
        uint64_t dw = pdem[i], rw = proom[i];
        for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
            int f = su[p->pred[e]] + du[p->pred[e]];
            if (f > s) s = f;
        }
        if (d > 0 && dw) {
            int ok = s - 1;   /* the cells [s, ok] have room */
            for (;;) {
                if (s + d > hz) return -3;   /* not on the grid after all */
                for (c = s + d - 1; c > ok; c--)
                    if (((rw - g[c]) & CONCERTO__LANE_GUARD) != CONCERTO__LANE_GUARD) break;
                if (c <= ok) break;
                ok = s + d - 1;
                s = c + 1;
            }
            for (c = s; c < s + d; c++) g[c] += dw;
            if (s + d > pr->g_dirty) pr->g_dirty = s + d;
        }
        su[i] = s;
        start[i] = (cc__time)s * p->grain;
        if (s + d > mk) mk = s + d;
    }
    return (cc__time)mk * p->grain;
}

/* Serial SGS: jobs in list order (precedence-feasible), each at the earliest
   precedence- and resource-feasible time. Returns the makespan, or -1 when a
   deadline cannot be met, -2 when out of memory. */
/* Memory in the serial SGS (p->mem_cap > 0). A buffer is held from its
   allocating job's start; until its last user is placed it is held for
   ever, then to that user's end. So the use after any instant t is known
   to be at most what the events say, and a job that allocates `need`
   bytes fits at t exactly when the use never exceeds cap - need from t
   on: a set [t_m, infinity), found by one scan from the end. */
static int cc__mem_begin(cc_context* ctx, cc__profile* pr, const cc__prob* p) {
    if (!CONCERTO__GROW(ctx, pr->m_ev, pr->m_ev_cap, 2 * (size_t)p->n_mb + 1) ||
        !CONCERTO__GROW(ctx, pr->m_cnt, pr->m_cnt_cap, (size_t)p->n_mb + 1) ||
        !CONCERTO__GROW(ctx, pr->m_end, pr->m_end_cap, (size_t)p->n_mb + 1))
        return 0;
    pr->m_ne = 0;
    pr->m_held = 0;
    memset(pr->m_cnt, 0, (size_t)p->n_mb * sizeof(int));
    memset(pr->m_end, 0, (size_t)p->n_mb * sizeof(cc__time));
    return 1;
}

static void cc__mem_event(cc__profile* pr, cc__time t, int64_t d) {
    int i = pr->m_ne;
    cc__mev x;
    x.t = t; x.d = d;
    while (i > 0 && cc__mev_cmp(&pr->m_ev[i - 1], &x) > 0) { pr->m_ev[i] = pr->m_ev[i - 1]; i--; }
    pr->m_ev[i] = x;
    pr->m_ne++;
    pr->m_held += d;
}

/* The earliest t from which `need` more bytes fit for ever; TIME_MAX: never. */
static cc__time cc__mem_earliest(const cc__profile* pr, uint64_t cap, uint64_t need) {
    int64_t total = pr->m_held, room = (int64_t)cap - (int64_t)need;
    int i;
    if (need > cap) return CONCERTO__TIME_MAX;
    if (total > room) return CONCERTO__TIME_MAX;
    /* backwards: the use on [t_i, t_{i+1}) is the sum of events 0..i */
    for (i = pr->m_ne - 1; i >= 0; i--) {
        cc__time next = pr->m_ev[i + 1 < pr->m_ne ? i + 1 : i].t;
        if (i + 1 < pr->m_ne && next == pr->m_ev[i].t) { total -= pr->m_ev[i].d; continue; }   /* an empty segment */
        if (total > room) return i + 1 < pr->m_ne ? next : CONCERTO__TIME_MAX;
        total -= pr->m_ev[i].d;
    }
    return 0;
}

/* Job i placed at s: its allocations, and the frees of the buffers whose
   last user it is. */
static void cc__mem_place(cc__profile* pr, const cc__prob* p, const cc__time* start, int i, cc__time s) {
    int k;
    for (k = p->op_mb_off[i]; k < p->op_mb_off[i + 1]; k++) {
        int m = p->op_mb[k];
        cc__time e = s + p->dur[i];
        if (p->mb_alloc[m] == i) cc__mem_event(pr, s, (int64_t)p->mb_bytes[m]);
        if (e > pr->m_end[m]) pr->m_end[m] = e;
        if (++pr->m_cnt[m] == p->mb_user_off[m + 1] - p->mb_user_off[m]) {
            cc__time a = start[p->mb_alloc[m]];
            cc__mem_event(pr, pr->m_end[m] > a ? pr->m_end[m] : a + 1, -(int64_t)p->mb_bytes[m]);
        }
    }
}

/* The bytes job i allocates. */
static uint64_t cc__mem_need(const cc__prob* p, int i) {
    uint64_t need = 0;
    int k;
    for (k = p->op_mb_off[i]; k < p->op_mb_off[i + 1]; k++)
        if (p->mb_alloc[p->op_mb[k]] == i) need += p->mb_bytes[p->op_mb[k]];
    return need;
}

/* The serial SGS under a memory cap. The next job is the first of the
   list whose predecessors are placed and whose allocation fits for ever
   after some instant (the use held now plus its bytes within the cap):
   a list that would deadlock the memory defers such a job until the
   frees it waits for are placed. The list itself wherever it fits (so
   program order fits wherever running the ops one by one does). -1 when
   no job can go on. */
/* Whether placing job j (allocating need) leaves a way on: after it, some
   job whose predecessors are placed fits the bytes held (or none is left).
   One step of lookahead: a list that allocates every prefetch first would
   otherwise fill the cap with buffers whose users cannot start. */
static int cc__mem_safe(const cc__prob* p, const cc__profile* pr, const int* list, int head, const char* done, const int* left,
                        int j, uint64_t need) {
    int64_t held = pr->m_held + (int64_t)need;
    int k, pos, any = 0;
    for (k = p->op_mb_off[j]; k < p->op_mb_off[j + 1]; k++) {   /* what j frees as the last user */
        int m = p->op_mb[k];
        if (pr->m_cnt[m] + 1 == p->mb_user_off[m + 1] - p->mb_user_off[m]) held -= (int64_t)p->mb_bytes[m];
    }
    for (pos = head; pos < p->n; pos++) {
        int x = list[pos], e, ready = 1;
        if (done[x] || x == j) continue;
        any = 1;
        if (left[x] > 0) {   /* ready once j is placed? */
            int l = left[x];
            for (e = p->pred_off[x]; e < p->pred_off[x + 1]; e++) if (p->pred[e] == j) l--;
            ready = l == 0;
        }
        if (ready && held + (int64_t)cc__mem_need(p, x) <= (int64_t)p->mem_cap) return 1;
    }
    return !any;
}

/* The serial scheme's step: job i at the earliest time from est its
   resources allow, within its deadline; the makespan so far in *mk.
   0, -1 (no room or past the deadline) or -2 (out of memory). */
static int cc__ssgs_place(cc_context* ctx, const cc__prob* p, cc__profile* pr, cc__time* start, int i, cc__time est, cc__time* mk) {
    cc__time s = cc__profile_earliest(pr, est, p->dur[i], p->dem + (size_t)i * p->k);
    if (s == CONCERTO__TIME_MAX || (p->deadline && s + p->dur[i] > p->deadline[i])) return -1;
    start[i] = s;
    if (!cc__profile_add(ctx, pr, s, s + p->dur[i], p->dem + (size_t)i * p->k, 1)) return -2;
    if (s + p->dur[i] > *mk) *mk = s + p->dur[i];
    return 0;
}

static cc__time cc__ssgs_mem(cc_context* ctx, const cc__prob* p, const int* list, cc__time* start, cc__profile* pr) {
    int n = p->n, head = 0, t, pos, e, rc;
    uint64_t need, max_need = 0;
    cc__time mk = 0;
    int* left;
    char* done;
    if (!CONCERTO__GROW(ctx, pr->m_left, pr->m_left_cap, (size_t)n + 1) ||
        !CONCERTO__GROW(ctx, pr->m_done, pr->m_done_cap, (size_t)n + 1) || !cc__mem_begin(ctx, pr, p))
        return -2;
    left = pr->m_left;
    done = pr->m_done;
    memset(done, 0, (size_t)n + 1);
    for (t = 0; t < n; t++) left[t] = p->pred_off[t + 1] - p->pred_off[t];
    for (t = 0; t < n; t++) if ((need = cc__mem_need(p, t)) > max_need) max_need = need;
    for (t = 0; t < n; t++) {
        int i = -1, fallback = -1;
        cc__time est, tm = 0, tm_fb = 0;
        for (pos = head; pos < n; pos++) {
            int j = list[pos];
            cc__time tj = 0;
            if (done[j] || left[j] > 0) continue;
            need = cc__mem_need(p, j);
            if (need > 0 && (tj = cc__mem_earliest(pr, p->mem_cap, need)) == CONCERTO__TIME_MAX) continue;
            if (need > 0 && pr->m_held + need + max_need > p->mem_cap && !cc__mem_safe(p, pr, list, head, done, left, j, need)) {
                if (fallback < 0) { fallback = j; tm_fb = tj; }
                continue;
            }
            i = j; tm = tj;
            break;
        }
        if (i < 0) { i = fallback; tm = tm_fb; }
        if (i < 0) return -1;
        est = cc__prob_est(p, i, start);
        if (tm > est) est = tm;
        if ((rc = cc__ssgs_place(ctx, p, pr, start, i, est, &mk)) != 0) return rc;
        cc__mem_place(pr, p, start, i, start[i]);
        done[i] = 1;
        for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++) left[p->succ[e]]--;
        while (head < n && done[list[head]]) head++;
    }
    return mk;
}

static cc__time cc__ssgs(cc_context* ctx, const cc__prob* p, const int* list, cc__time* start, cc__profile* pr) {
    cc__time mk = 0;
    int mem = p->mem_cap > 0 && p->n_mb > 0;
    int t = mem ? 0 : cc__grid_ready(ctx, pr, p);
    if (t == -2) return -2;
    if (t == 1 && (mk = pr->g_packed ? cc__ssgs_packed(p, list, start, pr) : cc__ssgs_grid(p, list, start, pr)) != -3) return mk;
    mk = 0;
    if (!cc__profile_init(ctx, pr, p)) return -2;
    if (mem) return cc__ssgs_mem(ctx, p, list, start, pr);
    for (t = 0; t < p->n; t++) {
        int rc = cc__ssgs_place(ctx, p, pr, start, list[t], cc__prob_est(p, list[t], start), &mk);
        if (rc != 0) return rc;
    }
    return mk;
}

/* Parallel SGS: time advances over decision points; at each, the eligible
   jobs are tried in priority order (pos[i] = rank, smaller first) and start
   if they fit. Same return convention as cc__ssgs. The jobs whose
   predecessors are all placed are kept on a list (a job joins it when its
   last predecessor is placed), so a decision point looks at those alone,
   not at every job, and a job tried where it does not fit is tried
   again only once time reaches where it did (the profile only fills, so
   it fits nowhere before): the same starts as a scan of every job at
   every point, at a fraction of its cost on large graphs. */
static cc__time cc__psgs(cc_context* ctx, const cc__prob* p, const int* pos, cc__time* start,
                         cc__profile* pr, int* scratch /* [3n] */) {
    int* left = scratch;              /* unplaced preds, or -1 once placed */
    int* elig = scratch + p->n;       /* candidates in priority order */
    int* ready = scratch + 2 * p->n;  /* unplaced jobs whose preds are all placed (start[]: the earliest
                                         they could start: est, then where they fit when last tried) */
    int n_done = 0, n_ready = 0, i, e, j, n_elig;
    cc__time t = -CONCERTO__TIME_MAX, mk = 0;
    if (!cc__profile_init(ctx, pr, p)) return -2;
    for (i = 0; i < p->n; i++)
        if ((left[i] = p->pred_off[i + 1] - p->pred_off[i]) == 0) {
            ready[n_ready++] = i;
            start[i] = cc__prob_est(p, i, start);
        }
    while (n_done < p->n) {
        cc__time next = CONCERTO__TIME_MAX;
        int zero = 0, m;
        /* eligible: all preds placed and finished by t, released */
        n_elig = 0;
        for (j = 0; j < n_ready; j++)
            if (start[ready[j]] <= t) elig[n_elig++] = ready[j];
        /* insertion sort by priority (eligible sets are small) */
        for (j = 1; j < n_elig; j++) {
            int v = elig[j];
            m = j;
            while (m > 0 && pos[elig[m - 1]] > pos[v]) { elig[m] = elig[m - 1]; m--; }
            elig[m] = v;
        }
        for (j = 0; j < n_elig; j++) {
            cc__time s;
            i = elig[j];
            s = cc__profile_earliest(pr, t, p->dur[i], p->dem + (size_t)i * p->k);
            if (s != t) {   /* no room before s now, nor later: the profile only fills */
                start[i] = s;
                continue;
            }
            if (p->deadline && t + p->dur[i] > p->deadline[i]) return -1;
            start[i] = t;
            if (!cc__profile_add(ctx, pr, t, t + p->dur[i], p->dem + (size_t)i * p->k, 1)) return -2;
            if (t + p->dur[i] > mk) mk = t + p->dur[i];
            left[i] = -1;
            n_done++;
            for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++)
                if (--left[p->succ[e]] == 0) {
                    ready[n_ready++] = p->succ[e];
                    start[p->succ[e]] = cc__prob_est(p, p->succ[e], start);
                }
            if (p->dur[i] == 0) zero = 1;
        }
        /* the placed leave the list */
        for (j = m = 0; j < n_ready; j++) if (left[ready[j]] == 0) ready[m++] = ready[j];
        n_ready = m;
        if (n_done == p->n) break;
        if (zero) continue;   /* zero-duration jobs released successors now */
        /* next decision point: the earliest start of a job whose predecessors
           are all placed (successors of the jobs just started included), or
           a breakpoint of the profile after t (capacity freed) */
        for (j = 0; j < n_ready; j++) {
            cc__time est = start[ready[j]];
            if (est > t && est < next) next = est;
        }
        {
            int sj = cc__profile_seg(pr, t);
            if (sj + 1 < pr->m && pr->t[sj + 1] < next) next = pr->t[sj + 1];
        }
        if (next == CONCERTO__TIME_MAX) return -1;
        t = next;
    }
    return mk;
}

/* Priority keys: smaller is better. */
static cc_result cc__prio_keys(cc_context* ctx, const cc__prob* p, const int* topo, cc_priority rule, double* key) {
    int i, e, n = p->n;
    cc__time *es = NULL, *lf = NULL;
    if (rule == CC_PRIO_PROGRAM_ORDER) {
        for (i = 0; i < n; i++) key[i] = (double)i;
        return CC_OK;
    }
    if (rule == CC_PRIO_GRPW) {
        for (i = 0; i < n; i++) {
            double w = (double)p->dur[i];
            for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++) w += (double)p->dur[p->succ[e]];
            key[i] = -w;
        }
        return CC_OK;
    }
    if (rule == CC_PRIO_MTS) {
        /* exact transitive successor counts with bitsets where they fit, else
           the path-count estimate sum over successors of (1 + count), capped */
        if (n <= 8192) {
            size_t words = ((size_t)n + 63) / 64;
            uint64_t* bits = (uint64_t*)cc__calloc(ctx, (size_t)n * words, sizeof(uint64_t));
            int t;
            if (!bits) return CC_ERR_OUT_OF_MEMORY;
            for (t = n - 1; t >= 0; t--) {
                int v = topo[t], c = 0;
                size_t w;
                uint64_t* bv = bits + (size_t)v * words;
                for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) {
                    int s = p->succ[e];
                    uint64_t* bs = bits + (size_t)s * words;
                    bv[s / 64] |= (uint64_t)1 << (s % 64);
                    for (w = 0; w < words; w++) bv[w] |= bs[w];
                }
                for (w = 0; w < words; w++) {
                    uint64_t x = bv[w];
                    while (x) { x &= x - 1; c++; }
                }
                key[v] = -(double)c;
            }
            cc__free(ctx, bits);
        } else {
            int t;
            for (t = n - 1; t >= 0; t--) {
                int v = topo[t];
                double c = 0;
                for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) c += 1.0 - key[p->succ[e]];
                key[v] = -(c > 1e15 ? 1e15 : c);
            }
        }
        return CC_OK;
    }
    if (rule == CC_PRIO_BOTTOM_LEVEL) {
        /* longest path from the start of a job to the end (cp - LST: the same
           order as LST up to ties) */
        int t;
        for (t = n - 1; t >= 0; t--) {
            int v = topo[t];
            double bl = 0;
            for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) if (-key[p->succ[e]] > bl) bl = -key[p->succ[e]];
            key[v] = -(bl + (double)p->dur[v]);
        }
        return CC_OK;
    }
    es = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *es);
    lf = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *lf);
    if (!es || !lf) { cc__free(ctx, es); cc__free(ctx, lf); return CC_ERR_OUT_OF_MEMORY; }
    cc__prob_times(p, topo, es, lf);
    for (i = 0; i < n; i++) {
        switch (rule) {
            case CC_PRIO_LST: key[i] = (double)(lf[i] - p->dur[i]); break;
            default: key[i] = (double)lf[i]; break;   /* LFT */
        }
    }
    cc__free(ctx, es); cc__free(ctx, lf);
    return CC_OK;
}

/* Activity list: repeatedly take an eligible job (all preds taken). With
   rng == NULL the best key; otherwise a regret-biased random choice. */
static int cc__make_list(cc_context* ctx, const cc__prob* p, const double* key, uint64_t* rng, int* list) {
    int n = p->n, i, e, t;
    int* left = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* heapa = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    cc__heap h;
    if (!left || !heapa) { cc__free(ctx, left); cc__free(ctx, heapa); return 0; }
    h.a = heapa; h.n = 0; h.key = key;
    for (i = 0; i < n; i++) {
        left[i] = p->pred_off[i + 1] - p->pred_off[i];
        if (!left[i]) { if (rng) h.a[h.n++] = i; else cc__heap_push(&h, i); }
    }
    for (t = 0; t < n; t++) {
        int v;
        if (!rng) v = cc__heap_pop(&h);
        else {
            /* weight (regret / range + 0.1)^2 */
            double lo = key[h.a[0]], hi = key[h.a[0]], tot = 0, x, range;
            int j, pick = 0;
            for (j = 1; j < h.n; j++) { if (key[h.a[j]] < lo) lo = key[h.a[j]]; if (key[h.a[j]] > hi) hi = key[h.a[j]]; }
            range = hi - lo > 0 ? hi - lo : 1.0;
            for (j = 0; j < h.n; j++) { double w = (hi - key[h.a[j]]) / range + 0.1; tot += w * w; }
            x = cc__rng_unit(rng) * tot;
            for (j = 0; j < h.n; j++) {
                double w = (hi - key[h.a[j]]) / range + 0.1;
                x -= w * w;
                if (x <= 0) break;
            }
            pick = j < h.n ? j : h.n - 1;
            v = h.a[pick];
            h.a[pick] = h.a[--h.n];
        }
        list[t] = v;
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++)
            if (--left[p->succ[e]] == 0) { if (rng) h.a[h.n++] = p->succ[e]; else cc__heap_push(&h, p->succ[e]); }
    }
    cc__free(ctx, left); cc__free(ctx, heapa);
    return 1;
}

static cc__time cc__list_fast(cc_context* ctx, const cc__prob* p, const double* key, cc__time* start) {
    int n = p->n, k = p->k, i, e, r, done = 0;
    int* left = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* res = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* heapmem = (int*)cc__alloc(ctx, 2 * ((size_t)n + 1) * sizeof(int));
    double* fin = (double*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(double));   /* finish times of started jobs */
    cc__heap* hp = (cc__heap*)cc__calloc(ctx, (size_t)k + 1, sizeof(cc__heap));
    int* cnt = (int*)cc__calloc(ctx, (size_t)k + 2, sizeof(int));
    int32_t avail[CONCERTO_MAX_RESOURCES];
    cc__heap ev;                /* running jobs by finish time */
    cc__time t = 0, mk = 0;
    if (!left || !res || !heapmem || !fin || !hp || !cnt) { mk = -2; goto done; }
    for (i = 0; i < n; i++) { (void)cc__demand_use(p->dem + (size_t)i * k, p->cap, k, &res[i], NULL); cnt[res[i] + 1]++; }
    /* each resource's ready heap gets a slice of heapmem sized by its job
       count; the running jobs the second half */
    {
        int off = cnt[0];   /* no-resource jobs never wait in a heap */
        for (r = 0; r < k; r++) { hp[r].a = heapmem + off; hp[r].n = 0; hp[r].key = key; off += cnt[r + 1]; }
    }
    ev.a = heapmem + n + 1; ev.n = 0; ev.key = fin;
    for (r = 0; r < k; r++) avail[r] = p->cap[r];
    for (i = 0; i < n; i++) {
        left[i] = p->pred_off[i + 1] - p->pred_off[i];
        if (!left[i]) {
            if (res[i] < 0) { start[i] = 0; fin[i] = (double)p->dur[i]; cc__heap_push(&ev, i); }
            else cc__heap_push(&hp[res[i]], i);
        }
    }
    for (;;) {
        for (r = 0; r < k; r++) {
            while (hp[r].n > 0 && p->dem[(size_t)hp[r].a[0] * k + r] <= avail[r]) {
                int j = cc__heap_pop(&hp[r]);
                start[j] = t;
                avail[r] -= p->dem[(size_t)j * k + r];
                fin[j] = (double)(t + p->dur[j]);
                cc__heap_push(&ev, j);
            }
        }
        if (ev.n == 0) break;
        t = start[ev.a[0]] + p->dur[ev.a[0]];
        while (ev.n > 0 && start[ev.a[0]] + p->dur[ev.a[0]] == t) {
            int j = cc__heap_pop(&ev);
            done++;
            if (t > mk) mk = t;
            if (res[j] >= 0) avail[res[j]] += p->dem[(size_t)j * k + res[j]];
            for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++) {
                int s = p->succ[e];
                if (--left[s] == 0) {
                    if (res[s] < 0) { start[s] = t; fin[s] = (double)(t + p->dur[s]); cc__heap_push(&ev, s); }
                    else cc__heap_push(&hp[res[s]], s);
                }
            }
        }
    }
    if (done != n) mk = -1;
done:
    cc__free(ctx, left); cc__free(ctx, res); cc__free(ctx, heapmem); cc__free(ctx, fin);
    cc__free(ctx, hp); cc__free(ctx, cnt);
    return mk;
}

/* Sorting jobs by time; at equal times zero-duration jobs first (on a
   stream they must not queue behind a job that starts with them), then by
   topological rank (so zero-duration chains stay in dependency order). */
typedef struct cc__tkey { cc__time t; int busy; int rank; int job; } cc__tkey;

static int cc__tkey_cmp(const void* a, const void* b) {
    const cc__tkey* x = (const cc__tkey*)a;
    const cc__tkey* y = (const cc__tkey*)b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->busy != y->busy) return x->busy < y->busy ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

/* Bits needed to write x (0 for 0). */
static int cc__bits_of(uint64_t x) {
    int b = 0;
    while (x) { b++; x >>= 1; }
    return b;
}

/* Sorts a[0..n) ascending, b[0..n) scratch: insertion sort of runs of 16
   (the keys often come nearly sorted: jobs by index roughly follow their
   start times), then bottom-up merges. */
static void cc__sort_u64(uint64_t* a, uint64_t* b, int n) {
    int i, w, lo;
    uint64_t *src = a, *dst = b;
    for (lo = 0; lo < n; lo += 16) {
        int hi = lo + 16 < n ? lo + 16 : n;
        for (i = lo + 1; i < hi; i++) {
            uint64_t v = a[i];
            int j = i;
            while (j > lo && a[j - 1] > v) { a[j] = a[j - 1]; j--; }
            a[j] = v;
        }
    }
    for (w = 16; w < n; w *= 2) {
        for (lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, x = lo, y = mid, o = lo;
            while (x < mid && y < hi) dst[o++] = src[y] < src[x] ? src[y++] : src[x++];
            while (x < mid) dst[o++] = src[x++];
            while (y < hi) dst[o++] = src[y++];
        }
        { uint64_t* t = src; src = dst; dst = t; }
    }
    if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* out[] = jobs by increasing t[] (by decreasing t[] when desc, ranks
   reversed). tmp has room for n + 1 keys. Where the spread of the times,
   the ranks and the job indices fit one 64-bit word together (always on
   graphs of PSPLIB's size), each job's key is that word and the sort runs
   inline; else qsort. The order is the same either way: ranks are
   distinct, so the key is a total order. Every justification sorts, so
   the sort is on the heuristics' hot path, where a call through qsort's
   comparator per compare costs more than the compare. */
static void cc__sort_jobs(const cc__prob* p, const cc__time* t, const int* rank, int desc, cc__tkey* tmp, int* out) {
    int i, n = p->n;
    if (n >= 2) {
        cc__time lo = CONCERTO__TIME_MAX, hi = -CONCERTO__TIME_MAX;
        int rlo = rank[0], rhi = rank[0], jb, rb;
        for (i = 0; i < n; i++) {
            cc__time v = desc ? -t[i] : t[i];
            if (v < lo) lo = v;
            if (v > hi) hi = v;
            if (rank[i] < rlo) rlo = rank[i];
            if (rank[i] > rhi) rhi = rank[i];
        }
        jb = cc__bits_of((uint64_t)(n - 1));
        rb = cc__bits_of((uint64_t)((int64_t)rhi - rlo));
        if (jb + rb + 1 < 64 && cc__bits_of((uint64_t)hi - (uint64_t)lo) <= 63 - jb - rb) {
            /* 16 bytes a job in a buffer of 24 (n + 1): keys, then scratch */
            uint64_t* a = (uint64_t*)(void*)tmp;
            uint64_t mask = ((uint64_t)1 << jb) - 1;
            for (i = 0; i < n; i++) {
                cc__time v = desc ? -t[i] : t[i];
                uint64_t r = (uint64_t)(desc ? (int64_t)rhi - rank[i] : (int64_t)rank[i] - rlo);
                a[i] = (((uint64_t)v - (uint64_t)lo) << (jb + rb + 1)) | ((uint64_t)(p->dur[i] > 0) << (jb + rb)) |
                       (r << jb) | (uint64_t)i;
            }
            cc__sort_u64(a, a + n, n);
            for (i = 0; i < n; i++) out[i] = (int)(a[i] & mask);
            return;
        }
    }
    for (i = 0; i < n; i++) {
        tmp[i].t = desc ? -t[i] : t[i];
        tmp[i].busy = p->dur[i] > 0;
        tmp[i].rank = desc ? -rank[i] : rank[i];
        tmp[i].job = i;
    }
    qsort(tmp, (size_t)n, sizeof *tmp, cc__tkey_cmp);
    for (i = 0; i < n; i++) out[i] = tmp[i].job;
}

/* The same order as cc__sort_jobs, by counting: ord lists every job by
   (zero duration first, rank), ranks reversed when desc; cnt has room for
   CONCERTO__CSORT_SPAN + 1 counts and bk for n. A stable pass over ord
   into buckets of equal time gives (time, zero duration first, rank).
   Times count in grains (grain: the problem's lattice). Where they spread
   over more than CONCERTO__CSORT_SPAN grains, or one is off the lattice,
   it returns 0 and does nothing (cc__sort_jobs then). The heuristics'
   times are whole schedules of a few hundred grains on PSPLIB: there a
   sort costs about n + span steps instead of n log n compares. */
#define CONCERTO__CSORT_SPAN 1024

static int cc__sort_jobs_count(int n, const cc__time* t, cc__time grain, const int* ord, int desc, int* cnt, int* bk,
                               int* out) {
    cc__time lo = CONCERTO__TIME_MAX, hi = -CONCERTO__TIME_MAX;
    double inv;
    int i, span, sum = 0;
    for (i = 0; i < n; i++) {
        cc__time v = desc ? -t[i] : t[i];
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (n < 1 || grain < 1 || hi - lo > (cc__time)CONCERTO__CSORT_SPAN * grain) return 0;
    span = (int)((hi - lo) / grain);
    inv = 1.0 / (double)grain;
    for (i = 0; i < n; i++) {   /* a time off the grain lattice: no buckets (exact: the values are below 2^53) */
        cc__time x = (desc ? -t[i] : t[i]) - lo;
        int q = (int)((double)x * inv + 0.5);
        if ((cc__time)q * grain != x) return 0;
        bk[i] = q;
    }
    memset(cnt, 0, ((size_t)span + 1) * sizeof *cnt);
    for (i = 0; i < n; i++) cnt[bk[i]]++;
    for (i = 0; i <= span; i++) { int c = cnt[i]; cnt[i] = sum; sum += c; }
    for (i = 0; i < n; i++) { int j = ord[i]; out[cnt[bk[j]]++] = j; }
    return 1;
}

/* >>improve
   Improving schedules: forward-backward justification, and biased random
   sampling with a genetic algorithm on activity lists, every schedule
   justified. */

/* Working state of the heuristics on a whole problem (no release, deadline
   or fixed occupation). */
typedef struct cc__heur {
    cc_context* ctx;
    const cc__prob* p;
    cc__prob rev;               /* the same problem with every edge reversed */
    const int* rank;            /* topological rank of each job */
    int unary;                  /* stream simulation can justify */
    cc__profile prof;
    int *list, *pos, *scratch;
    cc__tkey* tk;
    cc__time *cur, *tmp, *fin, *best;
    cc__time best_mk, lb;
    int64_t n_sched;
    int *ord, *cnt, *bk;        /* cc__sort_jobs_count: the tie orders (ascending, then descending), scratch */
    int ord_ok;                 /* ord is set */
    const int* cancel;          /* set from another thread: stop here (a restart the merge drops) */
    /* under a memory cap (p->mem_cap): scratch for the peak and the repair,
       and the schedule of the smallest peak seen while none fitted */
    cc__mev* mev;
    cc__time *rep, *mem_min;
    int* rlist;
    uint64_t mem_min_peak;      /* UINT64_MAX: none seen */
    int64_t mem_repairs;        /* schedules above the cap rebuilt by the serial scheme */
    int oom;                    /* a repair ran out of memory */
} cc__heur;

/* Relaxed atomics for the restarts' flags (concerto_rcpsp.h's cc__solve_restarts) */
#if defined(__GNUC__) || defined(__clang__)
#define CONCERTO__LOAD(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define CONCERTO__STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#else
#define CONCERTO__LOAD(p) (*(const volatile int*)(p))
#define CONCERTO__STORE(p, v) (*(volatile int*)(p) = (v))
#endif

static int cc__heur_cancelled(const cc__heur* h) { return h->cancel && CONCERTO__LOAD(h->cancel); }

static void cc__heur_free(cc__heur* h) {
    cc_context* ctx = h->ctx;
    cc__profile_free(ctx, &h->prof);
    cc__free(ctx, h->list); cc__free(ctx, h->pos); cc__free(ctx, h->scratch); cc__free(ctx, h->tk);
    cc__free(ctx, h->cur); cc__free(ctx, h->tmp); cc__free(ctx, h->fin); cc__free(ctx, h->best);
    cc__free(ctx, h->ord); cc__free(ctx, h->cnt); cc__free(ctx, h->bk);
    cc__free(ctx, h->mev); cc__free(ctx, h->rep); cc__free(ctx, h->mem_min); cc__free(ctx, h->rlist);
}

static int cc__heur_init(cc_context* ctx, cc__heur* h, const cc__prob* p, const int* rank) {
    size_t n1 = (size_t)p->n + 1;
    memset(h, 0, sizeof *h);
    h->ctx = ctx; h->p = p; h->rank = rank;
    h->rev = *p;
    h->rev.succ_off = p->pred_off; h->rev.succ = p->pred;
    h->rev.pred_off = p->succ_off; h->rev.pred = p->succ;
    h->rev.mem_cap = 0;   /* the backward pass only orders; the forward pass holds the cap */
    h->mem_min_peak = UINT64_MAX;
    (void)cc__prob_shape(p, NULL, &h->unary);
    h->best_mk = CONCERTO__TIME_MAX;
    h->list = (int*)cc__alloc(ctx, n1 * sizeof(int));
    h->pos = (int*)cc__alloc(ctx, n1 * sizeof(int));
    h->scratch = (int*)cc__alloc(ctx, 3 * n1 * sizeof(int));
    h->tk = (cc__tkey*)cc__alloc(ctx, n1 * sizeof(cc__tkey));
    h->cur = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->tmp = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->fin = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->best = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->ord = (int*)cc__alloc(ctx, 2 * n1 * sizeof(int));
    h->cnt = (int*)cc__alloc(ctx, (CONCERTO__CSORT_SPAN + 1) * sizeof(int));
    h->bk = (int*)cc__alloc(ctx, n1 * sizeof(int));
    if (!h->list || !h->pos || !h->scratch || !h->tk || !h->cur || !h->tmp || !h->fin || !h->best || !h->ord || !h->cnt || !h->bk)
        return 0;
    if (p->mem_cap > 0 && p->n_mb > 0) {
        h->mev = (cc__mev*)cc__alloc(ctx, (2 * (size_t)p->n_mb + 1) * sizeof(cc__mev));
        h->rep = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
        h->mem_min = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
        h->rlist = (int*)cc__alloc(ctx, n1 * sizeof(int));
        if (!h->mev || !h->rep || !h->mem_min || !h->rlist) return 0;
    }
    return 1;
}

/* cc__sort_jobs with the heuristics' ranks (p: theirs or its reverse, the
   same durations): by counting where it can. */
static void cc__heur_sort(cc__heur* h, const cc__prob* p, const cc__time* t, int desc, int* out) {
    size_t n1 = (size_t)p->n + 1;
    if (!h->ord_ok) {   /* the tie orders, as cc__sort_jobs orders equal times (rank is set after init) */
        int i, d;
        for (d = 0; d < 2; d++) {
            for (i = 0; i < p->n; i++) {
                h->tk[i].t = 0;
                h->tk[i].busy = p->dur[i] > 0;
                h->tk[i].rank = d ? -h->rank[i] : h->rank[i];
                h->tk[i].job = i;
            }
            qsort(h->tk, (size_t)p->n, sizeof *h->tk, cc__tkey_cmp);
            for (i = 0; i < p->n; i++) h->ord[(size_t)d * n1 + (size_t)i] = h->tk[i].job;
        }
        h->ord_ok = 1;
    }
    if (!cc__sort_jobs_count(p->n, t, p->grain, h->ord + (desc ? n1 : 0), desc, h->cnt, h->bk, out))
        cc__sort_jobs(p, t, h->rank, desc, h->tk, out);
}

/* 1 if the starts s fit the memory cap (always without one). */
static int cc__heur_fits(cc__heur* h, const cc__time* s) {
    const cc__prob* p = h->p;
    return !(p->mem_cap > 0 && p->n_mb > 0) || cc__mem_peak(p, s, h->mev, NULL) <= p->mem_cap;
}

/* A schedule offered to the incumbent: kept where it is shorter. Under a
   memory cap one above the cap is rebuilt first by the serial scheme in
   its start order (which holds the cap, or fails), and while nothing has
   fitted the one of smallest peak is remembered for the error. */
static void cc__heur_offer(cc__heur* h, const cc__time* s, cc__time mk) {
    const cc__prob* p = h->p;
    if (mk < 0 || mk >= h->best_mk) return;
    if (p->mem_cap > 0 && p->n_mb > 0) {
        uint64_t pk = cc__mem_peak(p, s, h->mev, NULL);
        if (pk > p->mem_cap) {
            cc__time m2;
            if (h->best_mk == CONCERTO__TIME_MAX && pk < h->mem_min_peak) {
                h->mem_min_peak = pk;
                memcpy(h->mem_min, s, (size_t)p->n * sizeof(cc__time));
            }
            cc__heur_sort(h, p, s, 0, h->rlist);
            m2 = cc__ssgs(h->ctx, p, h->rlist, h->rep, &h->prof);
            h->mem_repairs++;
            if (m2 == -2) h->oom = 1;
            if (m2 < 0 || m2 >= h->best_mk) return;
            CONCERTO_ASSERT(cc__mem_peak(p, h->rep, h->mev, NULL) <= p->mem_cap);
            s = h->rep; mk = m2;
        }
    }
    h->best_mk = mk;
    memcpy(h->best, s, (size_t)p->n * sizeof(cc__time));
}

/* Left-justifies the schedule in t[] keeping the order by start time
   (a never-worse transformation). Returns the makespan or < 0. */
static cc__time cc__justify(cc__heur* h, const cc__prob* p, cc__time* t, const cc__time* key, int desc) {
    cc__heur_sort(h, p, key, desc, h->list);
    h->n_sched++;
    if (h->unary) return cc__stream_sim(h->ctx, p, h->list, t, NULL);
    return cc__ssgs(h->ctx, p, h->list, t, &h->prof);
}

/* Forward-backward improvement: right-justify in reverse finish order, then
   left-justify in start order; repeat while it helps. */
static cc__time cc__fbi(cc__heur* h, cc__time* s, cc__time mk, int passes) {
    const cc__prob* p = h->p;
    int pass, i;
    for (pass = 0; pass < passes; pass++) {
        cc__time mb, mf;
        for (i = 0; i < p->n; i++) h->fin[i] = s[i] + p->dur[i];
        /* backward: in reversed time a job's start is mk - finish; rank reversed too */
        mb = cc__justify(h, &h->rev, h->tmp, h->fin, 1);
        if (mb < 0) return mb;
        for (i = 0; i < p->n; i++) h->tmp[i] = mb - h->tmp[i] - p->dur[i];
        mf = cc__justify(h, p, h->fin, h->tmp, 0);
        if (mf == -2) return mf;
        if (mf >= 0 && mf < mk && cc__heur_fits(h, h->fin)) { memcpy(s, h->fin, (size_t)p->n * sizeof(cc__time)); mk = mf; }
        else break;
    }
    return mk;
}

/* Decodes the current list with the chosen SGS, improves, offers. */
static cc__time cc__decode(cc__heur* h, cc_sgs sgs, int improve) {
    const cc__prob* p = h->p;
    cc__time mk;
    int i;
    if (sgs == CC_SGS_PARALLEL) {
        for (i = 0; i < p->n; i++) h->pos[h->list[i]] = i;
        mk = cc__psgs(h->ctx, p, h->pos, h->cur, &h->prof, h->scratch);
    } else mk = cc__ssgs(h->ctx, p, h->list, h->cur, &h->prof);
    h->n_sched++;
    if (mk < 0) return mk;
    if (improve > 0) mk = cc__fbi(h, h->cur, mk, improve);
    if (mk < 0) return mk;
    cc__heur_offer(h, h->cur, mk);
    return mk;
}

/* Decodes an activity list with the serial SGS, improves it, and writes the
   improved schedule's start order back into the list (so offspring inherit
   the improvement). Returns the makespan or < 0. */
static cc__time cc__ga_eval(cc__heur* h, int* list, int improve) {
    const cc__prob* p = h->p;
    cc__time mk = cc__ssgs(h->ctx, p, list, h->cur, &h->prof);
    h->n_sched++;
    if (mk < 0) return mk;
    if (improve > 0) mk = cc__fbi(h, h->cur, mk, improve);
    if (mk < 0) return mk;
    cc__heur_offer(h, h->cur, mk);
    cc__heur_sort(h, p, h->cur, 0, list);
    return mk;
}

static int cc__has_edge(const cc__prob* p, int a, int b) {
    int e;
    for (e = p->succ_off[a]; e < p->succ_off[a + 1]; e++) if (p->succ[e] == b) return 1;
    return 0;
}

/* Two-point crossover of activity lists: [0,q1) from mother, then the
   father's order of the rest up to q2, then the mother's order of the rest.
   Precedence-feasible lists give a precedence-feasible child. */
static void cc__ga_cross(int n, const int* mo, const int* fa, int q1, int q2, char* taken, int* child) {
    int i, c = 0;
    memset(taken, 0, (size_t)n);
    for (i = 0; i < q1; i++) { child[c++] = mo[i]; taken[mo[i]] = 1; }
    for (i = 0; i < n && c < q2; i++) if (!taken[fa[i]]) { child[c++] = fa[i]; taken[fa[i]] = 1; }
    for (i = 0; i < n && c < n; i++) if (!taken[mo[i]]) { child[c++] = mo[i]; taken[mo[i]] = 1; }
}

/* Shift mutation: a random job of the list moves to a random place
   between its last predecessor and its first successor there (so the
   list stays precedence-feasible). Adjacent swaps alone move a job one
   place at a time; a shift moves it anywhere it may go, as the insertion
   neighbourhoods of list-based local search do (e.g. Fleszar & Hindi,
   "Solving the resource-constrained project scheduling problem by a
   variable neighbourhood search", EJOR 155(2), 2004). */
static void cc__ga_shift(const cc__prob* p, int* list, uint64_t* rng) {
    int n = p->n, from, v, lo = 0, hi, to, e, j;
    if (n < 2) return;
    from = (int)(cc__rng_next(rng) % (uint64_t)n);
    v = list[from];
    hi = n - 1;
    for (j = from - 1; j >= 0 && lo == 0; j--)
        for (e = p->pred_off[v]; e < p->pred_off[v + 1]; e++)
            if (p->pred[e] == list[j]) { lo = j + 1; break; }
    for (j = from + 1; j < n && hi == n - 1; j++)
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++)
            if (p->succ[e] == list[j]) { hi = j - 1; break; }
    to = lo + (int)(cc__rng_next(rng) % (uint64_t)(hi - lo + 1));
    if (to < from) memmove(list + to + 1, list + to, (size_t)(from - to) * sizeof(int));
    else if (to > from) memmove(list + from, list + from + 1, (size_t)(to - from) * sizeof(int));
    list[to] = v;
}

/* Sampling and evolution: the rules once each with both schemes, then a
   population of regret-biased random lists from the seed, then a genetic
   algorithm on activity lists (two-point crossover, adjacent-swap and shift
   mutation, the best of parents and children survive); every schedule improved by
   forward-backward passes. Until the budget, the lower bound or the time
   limit. */
#define CONCERTO__GA_POP 32

/* Shift mutations per child, after the swaps. */
#define CONCERTO__GA_SHIFTS 2

static cc_result cc__sample(cc__heur* h, const cc_sched_desc* d, const int* topo, double t_end, int fresh,
                            const int* seeds, int n_seeds) {
    static const cc_priority rules[6] = { CC_PRIO_LFT, CC_PRIO_LST, CC_PRIO_MTS, CC_PRIO_GRPW, CC_PRIO_BOTTOM_LEVEL,
                                          CC_PRIO_PROGRAM_ORDER };
    const int nr = 6;
    cc_context* ctx = h->ctx;
    const cc__prob* p = h->p;
    int n = p->n, r, it, i, P = CONCERTO__GA_POP, np = 0;
    size_t n1 = (size_t)n + 1;
    double* keys = (double*)cc__alloc(ctx, (size_t)nr * n1 * sizeof(double));
    int* pop = (int*)cc__alloc(ctx, 2 * (size_t)P * n1 * sizeof(int));   /* parents, then children */
    cc__time* fit = (cc__time*)cc__alloc(ctx, 2 * (size_t)P * sizeof(cc__time));
    int* idx = (int*)cc__alloc(ctx, 2 * (size_t)P * sizeof(int));
    int* tmp = (int*)cc__alloc(ctx, (size_t)P * n1 * sizeof(int));
    char* taken = (char*)cc__alloc(ctx, n1);
    uint64_t rng = d->seed ^ 0x5EEDC0C0A5ull;
    cc_result rc = CC_OK;
    if (!keys || !pop || !fit || !idx || !tmp || !taken) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    for (r = 0; r < nr; r++)
        if (cc__prio_keys(ctx, p, topo, rules[r], keys + (size_t)r * n1) != CC_OK) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
#define CONCERTO__STOP() (h->n_sched >= d->tuning.budget_schedules || h->best_mk <= h->lb || (t_end > 0 && cc__now_s() > t_end) || \
                          cc__heur_cancelled(h))
    /* every rule, both schemes (not in a fresh start: the same schedules
       every time, and the population would start from their best) */
    for (it = 0; it < 2 * nr && !fresh && !CONCERTO__STOP(); it++) {
        if (!cc__make_list(ctx, p, keys + (size_t)(it % nr) * n1, NULL, h->list)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        if (cc__decode(h, it < nr ? CC_SGS_SERIAL : CC_SGS_PARALLEL, d->tuning.improve_passes) == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    }
    /* initial population: the best so far, the seeds (lists of stride
       n + 1, precedence-feasible: start orders), then biased random lists */
    if (h->best_mk < CONCERTO__TIME_MAX && !fresh) {
        cc__sort_jobs(p, h->best, h->rank, 0, h->tk, pop);
        fit[0] = h->best_mk;
        np = 1;
    }
    for (i = 0; i < n_seeds && np < P && !CONCERTO__STOP(); i++, np++) {
        int* L = pop + (size_t)np * n1;
        memcpy(L, seeds + (size_t)i * n1, (size_t)n * sizeof(int));
        fit[np] = cc__ga_eval(h, L, d->tuning.improve_passes);
        if (fit[np] == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        if (fit[np] < 0) fit[np] = CONCERTO__TIME_MAX;
    }
    for (; np < P && !CONCERTO__STOP(); np++) {
        int* L = pop + (size_t)np * n1;
        if (!cc__make_list(ctx, p, keys + (size_t)(np % nr) * n1, &rng, L)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        fit[np] = cc__ga_eval(h, L, d->tuning.improve_passes);
        if (fit[np] == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        if (fit[np] < 0) fit[np] = CONCERTO__TIME_MAX;
    }
    /* generations */
    while (np >= 2 && !CONCERTO__STOP()) {
        int c, a, b;
        /* random pairing (Fisher-Yates over the parents) */
        for (i = 0; i < np; i++) idx[i] = i;
        for (i = np - 1; i > 0; i--) { int j = (int)(cc__rng_next(&rng) % (uint64_t)(i + 1)), t = idx[i]; idx[i] = idx[j]; idx[j] = t; }
        for (c = 0; c + 1 < np && !CONCERTO__STOP(); c += 2) {
            int q1 = (int)(cc__rng_next(&rng) % (uint64_t)n), q2 = (int)(cc__rng_next(&rng) % (uint64_t)n), side;
            if (q1 > q2) { int t = q1; q1 = q2; q2 = t; }
            for (side = 0; side < 2; side++) {
                int* child = pop + (size_t)(np + c + side) * n1;
                const int* mo = pop + (size_t)idx[c + side] * n1;
                const int* fa = pop + (size_t)idx[c + 1 - side] * n1;
                cc__ga_cross(n, mo, fa, q1, q2, taken, child);
                for (i = 0; i + 1 < n; i++)   /* mutation: swap neighbours with probability 1/16 */
                    if ((cc__rng_next(&rng) & 15) == 0 && !cc__has_edge(p, child[i], child[i + 1])) {
                        int t = child[i]; child[i] = child[i + 1]; child[i + 1] = t;
                    }
                for (i = 0; i < CONCERTO__GA_SHIFTS; i++) cc__ga_shift(p, child, &rng);
                fit[np + c + side] = cc__ga_eval(h, child, d->tuning.improve_passes);
                if (fit[np + c + side] == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                if (fit[np + c + side] < 0) fit[np + c + side] = CONCERTO__TIME_MAX;
                /* a child that repeats a member (same makespan, same list) is
                   dropped, so the population keeps its diversity */
                {
                    int m2, dup = 0;
                    for (m2 = 0; m2 < np + c + side && !dup; m2++)
                        if (fit[m2] == fit[np + c + side] &&
                            !memcmp(pop + (size_t)m2 * n1, child, (size_t)n * sizeof(int))) dup = 1;
                    if (dup) fit[np + c + side] = CONCERTO__TIME_MAX;
                }
            }
        }
        /* survivors: the best np of parents and the c children (stable: parents win ties) */
        for (i = 0; i < np + c; i++) idx[i] = i;
        for (a = 1; a < np + c; a++) {
            int v = idx[a];
            b = a;
            while (b > 0 && fit[idx[b - 1]] > fit[v]) { idx[b] = idx[b - 1]; b--; }
            idx[b] = v;
        }
        {
            cc__time nf[2 * CONCERTO__GA_POP] = { 0 };
            for (i = 0; i < np; i++) {
                memcpy(tmp + (size_t)i * n1, pop + (size_t)idx[i] * n1, (size_t)n * sizeof(int));
                nf[i] = fit[idx[i]];
            }
            memcpy(pop, tmp, (size_t)np * n1 * sizeof(int));
            memcpy(fit, nf, (size_t)np * sizeof(cc__time));
        }
    }
#undef CONCERTO__STOP
done:
    cc__free(ctx, keys); cc__free(ctx, pop); cc__free(ctx, fit); cc__free(ctx, idx); cc__free(ctx, tmp); cc__free(ctx, taken);
    return rc;
}

/* >>bnb
   Exact branch and bound: a precedence-tree search over serial schedule
   generation (Patterson et al. 1989, Sprecher 2000) with a cutset memory
   (Demeulemeester & Herroelen 1992).

   A node is a partial schedule built by placing one eligible job (all of its
   predecessors placed) at a time, each at its earliest precedence-,
   release- and resource-feasible start that is not earlier than the start of
   the job placed before it (t_prev). Starts thus never decrease along a path;
   every schedule the search reaches is feasible, and for every schedule S
   the search can reach one that is no later in any job (so an optimum).
   Time-varying capacity (busy blocks) and releases change nothing in this.

   Pruning, for a child that places job j at s (its parent's last job i):
   - bounds: heads h_u of the unplaced jobs (>= t_prev, >= release, after the
     predecessors, then moved to the earliest start that fits the partial
     resource profile) plus tails (longest path to the end, at least the
     job plus its successors' energy per resource / capacity) must not exceed
     the target makespan (incumbent minus one lattice step), nor may
     h_u exceed the latest start from the deadlines; an energy bound per
     resource fills the remaining work into the free capacity after the
     earliest head.
   - propagation against the target T (incumbent minus one step): every
     unplaced job starts in [head, T - tail]; time-tabling puts the
     compulsory parts of these windows beside the placed jobs and moves each
     window to where the job fits; a pair that cannot overlap (together
     above a capacity) is ordered when one order leaves no room; on cliques
     of jobs no two of which overlap (pairs above a capacity or on a path of
     precedence edges, built once) edge-finding orders a job after or
     before a whole set, in a round where the cheaper rules moved nothing;
     on each unary stream (a resource of capacity 1) overload checking,
     edge-finding, detectable precedences and not-first/not-last in
     O(c log c) (Vilim's theta-lambda tree); windows move along the
     precedence edges; a few rounds. Where every resource is unary, the
     streams' rules run alone (without time-tabling, pairs and cliques),
     in every node of a problem of up to CONCERTO__BNB_UNARY_NODES_N jobs
     (there a child propagates when it is searched, from its parent's
     windows, and is dropped then if refuted) and in the root bound of
     larger ones. A child's
     propagation starts from the windows its parent's left (they hold for
     every completion of the parent, so of the child). An empty window or an
     overloaded resource drops the node; the moved heads raise the bound.
     Every completion that ends by T keeps its jobs in these windows, so no
     completion better than the incumbent is lost.
   - root: a destructive bound (the propagation above plus energetic
     reasoning, not in searches of fewer than
     CONCERTO__BNB_ENERGETIC_MIN_NODES nodes, and, where some resource is
     cumulative, shaving: each end of
     each job's window is tried and cut where the propagation refutes it,
     refute targets between the bound and the incumbent, by binary search),
     so that an incumbent at the bound stops the search at once. Where it
     shaves, the root bound runs again over a second clique cover (jobs of
     equal duration taken by id descending) and keeps the higher; the
     search keeps the first cover. The nodes do not shave.
   - look-ahead: a child is dropped at once when an unplaced job with all
     predecessors placed fits entirely before s (it could only be placed
     later, where the left-shift rule would drop it).
   - left shift: if j fits (precedence, release, resources of the placed
     jobs) at a start before s, the child is dropped: every completion of it
     lets j move left, which no minimal schedule allows (later jobs start at
     or after s, so the part of j's interval after s only shrinks).
   - single enumeration: if s == start of i, j < i and i is not a direct
     predecessor of j, the same partial schedule is reached with j first.
   - cutset memory: a node B (placed set X, t_B, last job) is dropped if an
     earlier node A with the same set X had t_A <= t_B, every job j of X
     finishing in A no later than max(its finish in B, H_j), H_j = the least
     head in B of the unplaced jobs that share a resource with j or follow it
     (capped by B's bound; so every completion of B also completes A)
     and either t_A < t_B, or t_A == t_B with the same last job and A's starts,
     sorted in decreasing order, lexicographically <= B's. Where the
     propagation runs, a child meets the memory before its propagation (a
     child the memory drops costs no propagation and is not a node), and
     not again as a node: what was stored meanwhile lies in the subtrees of
     its siblings searched before it, whose sets hold a job its set lacks.

   Why the rules combine: among the optimal schedules take those whose start
   vector sorted in decreasing order is lexicographically least (M). Such a
   schedule is left-shift free, and the serial generation along its start
   order (ties: smallest available index) reproduces it without being cut by
   the single-enumeration rule. If its path is cut by a memory entry A, then
   A's partial schedule plus its remaining jobs is again in M (the extra
   conditions above make its sorted start vector no larger) and its path runs
   through A, which was searched before B; taking the member of M whose path
   is cut earliest in depth-first order gives a contradiction. Hence a search
   that ends without exhausting its budget has found an optimum.

   When no release, deadline or busy time is off the grain lattice, every
   generated schedule lies on it, so bounds are rounded up to a multiple of
   grain and the target is incumbent - grain. */

/* Result of an exact search (branch and bound or lp_solve). */
typedef struct cc__bnb_result {
    cc__time makespan;          /* of best (CONCERTO__TIME_MAX if none found) */
    cc__time lower_bound;       /* proven lower bound on the optimum */
    int proven;                 /* 1: makespan is optimal (or infeasible proven when none found) */
    int64_t nodes;
} cc__bnb_result;

#define CONCERTO__BNB_MEMO_BYTES ((size_t)64 << 20)  /* cap on the cutset memory */

#define CONCERTO__BNB_MEMO_SCAN 48                   /* entries compared per lookup */

/* The node budget counts work: a node is one unit plus its propagation
   steps (cc__bnb.work) over this many, times (n / 32)^2.5 above 32 jobs
   (where the budget itself is smaller by (32 / n)^3 while a step costs
   more), so that a search whose nodes propagate much stops sooner.
   Steps, not time: the same search on every machine. The streams' rules
   count two steps per task and stream; unary-only problems above
   CONCERTO__BNB_UNARY_NODES_N jobs do not propagate in their nodes, so
   there a node is one unit. */
#define CONCERTO__BNB_WORK_PER_NODE 115

typedef struct cc__bnb_child {
    int job;
    int win;                  /* its windows are kept (slot in cc__bnb.win) */
    int checked;              /* it passed the memory's check as a child */
    size_t slot;
    cc__time s, lb;
} cc__bnb_child;

typedef struct cc__bnb_ent {
    uint64_t hash;
    cc__time t;
    int last, next;
    size_t off;               /* starts of the set's jobs (increasing job id) in mst */
} cc__bnb_ent;

typedef struct cc__bnb {
    cc_context* ctx;
    const cc__prob* p;
    int n, k, nw;
    cc__time step;            /* grain on the lattice, else 1 */
    int* topo;
    int n_topo;               /* its length: n unless there is a cycle */
    cc__time *rel, *tail, *dl_ls, *ls;
    cc__time* hd;             /* heads of the bound: rel, raised by the root's shaving */
    int *pos_off, *pos_res;   /* CSR: resources with positive demand per job */
    /* packed profile (packed: at most 4 resources, every demand at most its
       capacity, and all demands and busy blocks of each resource together
       below 2^15): pu[i] holds segment i's use as cc__ssgs_packed's cells
       do, in place of use[]; per job its room words, with its own part out
       (pown) or not. A segment is then checked by one subtraction */
    int packed;
    uint64_t *pu, *proom, *pown;
    /* resource profile: use[i*k + r] on [tp[i], tp[i+1]), tp[0] = -inf */
    cc__time* tp;
    int32_t* use;
    int m;
    /* current partial schedule */
    unsigned char* done;
    int* npl;                 /* unplaced predecessors */
    cc__time *st, *fin, *h, *sa, *sb;
    cc__time *lt, *cs, *ce;     /* time-tabling: latest starts, compulsory parts */
    int *cfl, *cjob;
    uint64_t* set;
    int n_done;
    /* child records of all nodes on the current path */
    cc__bnb_child* ch;
    size_t ch_cap, ch_n;
    /* per child record: the heads and latest starts its propagation left
       ([2n] per slot), where the propagation of its own children starts */
    cc__time* win;
    size_t win_cap;
    const cc__time* pw;       /* the parent's windows for the next bound, or NULL */
    int tt_ran;               /* the last bound propagated (h[] and lt[] are its windows) */
    /* cutset memory */
    int* bucket;
    size_t n_bucket;          /* power of two */
    cc__bnb_ent* ent;
    size_t ent_cap, n_ent;
    uint64_t* mset;
    size_t mset_cap;
    cc__time* mst;
    size_t mst_cap, mst_n;
    int memo_full;
    /* incumbent and limits */
    cc__time* best;
    cc__time U, target, root_lb;
    uint64_t* conf;           /* [n*nw]: jobs sharing a resource with j, or successors of j */
    uint64_t* dis;            /* [n*nw]: jobs that cannot overlap j (together above a capacity) */
    uint64_t* desc;           /* [n*nw]: successors of j, transitively */
    int *clq, *clq_off, n_clq;   /* cliques of jobs no two of which overlap (CSR) */
    cc__time *ef_est, *ef_lct, *ef_lb, *ef_c;   /* edge-finding scratch, [n] each */
    int *ef_ord, *ef_job;
    cc__time* ef_snap;          /* per clique member: h and lt after the clique's last run */
    unsigned char* ef_fresh;    /* per clique: its snapshot is from this propagation */
    /* unary streams (resources of capacity 1): their jobs (CSR) and the
       busy blocks on them, merged where they overlap or touch (CSR) */
    int n_str, str_max;       /* streams with 2+ tasks; most tasks of one */
    int *str_off, *str_job, *bz_off;
    cc__time *bz_s, *bz_e;
    cc__time *u_est, *u_lct, *u_p, *u_ne, *u_nl, *u_key, *u_ect;   /* [str_max]: one stream's tasks */
    int *u_id, *u_oe, *u_ol, *u_os, *u_oc, *u_tmp, *u_pos;
    unsigned char* u_in;
    /* the rules' four orders (by est, lct, lst, ect) of each stream's last
       run, each side: stream s's at u_ord + 8 * (str_off[s] + bz_off[s]),
       order q of side d at (4 d + q) * its tasks; u_ordc[8 s + 4 d + q]
       their count (0: none) */
    int *u_ord, *u_ordc;
    struct cc__uny_node* t;      /* the theta-lambda tree, [2 * u_np] */
    struct cc__uny_wnode* tw;    /* the theta tree of white leaves alone, [2 * u_np] */
    int u_np;
    int uo;                   /* unary streams alone: the propagation runs their rules and the edges only */
    int lazy;                 /* a child propagates when it is searched, not when it is generated */
    cc__time* hj;             /* memo check: per job, lazily, min head over conf[j] */
    int64_t nodes, budget;
    int64_t work;             /* propagation steps: jobs through a rule's pass, clique members through edge-finding */
    int64_t work_unit;        /* steps that count as one node of the budget */
    double t_end;
    int stop;                 /* 1: budget or time, 2: incumbent meets the bound */
    int energetic;            /* the bound also runs energetic reasoning */
    int no_energetic;         /* a small search: the destructive bound without it */
    int tt;                   /* the bound runs time-tabling (not for the memory's heads) */
    int probing;              /* the shaving's probes run (the cliques' snapshots are of this node) */
    int shave;                /* nodes of fewer than this many placed jobs shave their windows (0: none) */
    int shave_sides;          /* which ends shaving cuts: 1 heads, 2 latest starts (0: both) */
    int64_t shave_cap;        /* work one shaving may spend (0: no cap) */
    cc__time *sh_w, *sh_pv;   /* shaving: the windows, a probe's windows ([2n] each) */
    /* the streams' rules in shaving's probes (the same jobs placed in
       each): per stream, the windows of its jobs when its rules last ran
       and moved nothing (sk_*), and a copy of those taken where shaving's
       windows were a fixpoint (bk_*); a stream whose windows equal either
       is not run again, its work counted as if it ran (sk_on: 1) */
    cc__time *sk_h, *sk_l, *bk_h, *bk_l;   /* [str_off[n_str]] */
    int *sk_c, *bk_c;                       /* [n_str] tasks of that run */
    unsigned char *sk_ok, *bk_ok;           /* [n_str] the snapshot holds */
    int sk_on;
    int oom;
} cc__bnb;

static cc__time cc__bnb_max(cc__time a, cc__time b) { return a > b ? a : b; }

/* Index of the lowest set bit of m (m != 0). */
static int cc__bnb_ctz(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(m);
#else
    int i = 0;
    while (!(m & 1)) { m >>= 1; i++; }
    return i;
#endif
}

/* Smallest multiple of g that is >= x. */
static cc__time cc__bnb_ceil(cc__time x, cc__time g) {
    cc__time q = x / g;
    if (q * g < x) q++;
    return q * g;
}

/* Index of the last breakpoint <= t (tp[0] is -inf). */
static int cc__bnb_find(const cc__bnb* b, cc__time t) {
    int lo = 0, hi = b->m - 1;
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (b->tp[mid] <= t) lo = mid; else hi = mid - 1;
    }
    return lo;
}

/* Earliest start >= lo at which job j fits the current profile. */
static cc__time cc__bnb_earliest(const cc__bnb* b, int j, cc__time lo) {
    const cc__time d = b->p->dur[j];
    const int32_t* dem = b->p->dem + (size_t)j * (size_t)b->k;
    int i, q, r0 = b->pos_off[j], r1 = b->pos_off[j + 1];
    cc__time s = lo;
    if (d <= 0 || r0 == r1) return lo;
    i = cc__bnb_find(b, s);
    if (b->packed) {
        const uint64_t rw = b->proom[j];
        while (i < b->m && b->tp[i] < s + d) {
            int clash = ((rw - b->pu[i]) & CONCERTO__LANE_GUARD) != CONCERTO__LANE_GUARD;
            i++;
            if (clash) s = b->tp[i];
        }
        return s;
    }
    while (i < b->m && b->tp[i] < s + d) {
        const int32_t* u = b->use + (size_t)i * (size_t)b->k;
        int clash = 0;
        for (q = r0; q < r1; q++) {
            int r = b->pos_res[q];
            if ((int64_t)u[r] + dem[r] > b->p->cap[r]) { clash = 1; break; }
        }
        i++;
        if (clash) s = b->tp[i];  /* the last segment is always empty */
    }
    return s;
}

/* Makes t a breakpoint; returns its index and whether it was new. */
static int cc__bnb_bp(cc__bnb* b, cc__time t, int* added) {
    int i = cc__bnb_find(b, t), k = b->k;
    *added = 0;
    if (b->tp[i] == t) return i;
    memmove(b->tp + i + 2, b->tp + i + 1, (size_t)(b->m - i - 1) * sizeof *b->tp);
    b->tp[i + 1] = t;
    if (b->packed) {
        memmove(b->pu + i + 2, b->pu + i + 1, (size_t)(b->m - i - 1) * sizeof *b->pu);
        b->pu[i + 1] = b->pu[i];
    } else {
        memmove(b->use + (size_t)(i + 2) * k, b->use + (size_t)(i + 1) * k,
                (size_t)(b->m - i - 1) * (size_t)k * sizeof *b->use);
        memcpy(b->use + (size_t)(i + 1) * k, b->use + (size_t)i * k, (size_t)k * sizeof *b->use);
    }
    b->m++;
    *added = 1;
    return i + 1;
}

static void cc__bnb_bp_remove(cc__bnb* b, cc__time t) {
    int i = cc__bnb_find(b, t), k = b->k;
    memmove(b->tp + i, b->tp + i + 1, (size_t)(b->m - i - 1) * sizeof *b->tp);
    if (b->packed) memmove(b->pu + i, b->pu + i + 1, (size_t)(b->m - i - 1) * sizeof *b->pu);
    else memmove(b->use + (size_t)i * k, b->use + (size_t)(i + 1) * k, (size_t)(b->m - i - 1) * (size_t)k * sizeof *b->use);
    b->m--;
}

/* The use of resource r in segment i (the packed profile's lane, or the
   word per resource). */
static int32_t cc__bnb_use(const cc__bnb* b, int i, int r) {
    return b->packed ? (int32_t)((b->pu[i] >> (16 * r)) & 0xffff) : b->use[(size_t)i * (size_t)b->k + r];
}

/* Adds (sign 1) units dem over [s, f); returns the undo flags for the removal. */
static int cc__bnb_occupy(cc__bnb* b, cc__time s, cc__time f, const int32_t* dem) {
    int a0, a1, i0, i1, i, r;
    if (f <= s) return 0;
    i0 = cc__bnb_bp(b, s, &a0);
    i1 = cc__bnb_bp(b, f, &a1);
    if (b->packed) {
        uint64_t w = cc__lanes_dem(b->k, dem);
        for (i = i0; i < i1; i++) b->pu[i] += w;
    } else
        for (i = i0; i < i1; i++)
            for (r = 0; r < b->k; r++) b->use[(size_t)i * b->k + r] += dem[r];
    return a0 | (a1 << 1) | 4;
}

static void cc__bnb_release(cc__bnb* b, cc__time s, cc__time f, const int32_t* dem, int flags) {
    int i0, i1, i, r;
    if (!(flags & 4)) return;
    i0 = cc__bnb_find(b, s);
    i1 = cc__bnb_find(b, f);
    if (b->packed) {
        uint64_t w = cc__lanes_dem(b->k, dem);
        for (i = i0; i < i1; i++) b->pu[i] -= w;
    } else
        for (i = i0; i < i1; i++)
            for (r = 0; r < b->k; r++) b->use[(size_t)i * b->k + r] -= dem[r];
    if (flags & 2) cc__bnb_bp_remove(b, f);
    if (flags & 1) cc__bnb_bp_remove(b, s);
}

/* Places job j at s (profile, state); returns the profile's undo flags. */
static int cc__bnb_place(cc__bnb* b, int j, cc__time s) {
    const cc__prob* p = b->p;
    int q, fl = 0;
    b->st[j] = s;
    b->fin[j] = s + p->dur[j];
    b->done[j] = 1;
    b->n_done++;
    b->set[j >> 6] |= (uint64_t)1 << (j & 63);
    for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) b->npl[p->succ[q]]--;
    if (b->pos_off[j] < b->pos_off[j + 1])
        fl = cc__bnb_occupy(b, s, b->fin[j], p->dem + (size_t)j * (size_t)b->k);
    return fl;
}

static void cc__bnb_unplace(cc__bnb* b, int j, int fl) {
    const cc__prob* p = b->p;
    int q;
    cc__bnb_release(b, b->st[j], b->fin[j], p->dem + (size_t)j * (size_t)b->k, fl);
    b->done[j] = 0;
    b->n_done--;
    b->set[j >> 6] &= ~((uint64_t)1 << (j & 63));
    for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) b->npl[p->succ[q]]++;
}

/* ---- time-tabling: compulsory parts against the target makespan ----
   With the target T, an unplaced job u of every completion that ends by T
   starts in [h[u], lt[u]] (lt from T - tail and the deadlines), so it
   occupies [lt[u], h[u] + d[u]) whenever that is not empty (its compulsory
   part). The placed jobs plus these parts are a lower envelope of the
   resource use of every such completion: u can start only where it fits
   that envelope without its own part (h moves right, lt left), and an
   envelope above a capacity leaves no completion. Heads and latest starts
   then move along the precedence edges, and the parts are rebuilt, a few
   rounds. */

/* Does job j fit segment i of the profile, its own part [cs, ce) taken out? */
static int cc__bnb_seg_fits(const cc__bnb* b, int j, int i, cc__time cs, cc__time ce) {
    const int32_t* dem = b->p->dem + (size_t)j * (size_t)b->k;
    const int32_t* u = b->use + (size_t)i * (size_t)b->k;
    int own = b->tp[i] >= cs && b->tp[i] < ce, q;
    if (b->packed)
        return (((own ? b->pown[j] : b->proom[j]) - b->pu[i]) & CONCERTO__LANE_GUARD) == CONCERTO__LANE_GUARD;
    for (q = b->pos_off[j]; q < b->pos_off[j + 1]; q++) {
        int r = b->pos_res[q];
        if ((int64_t)u[r] - (own ? dem[r] : 0) + dem[r] > b->p->cap[r]) return 0;
    }
    return 1;
}

/* Earliest start >= lo where j fits (its own part out), or > hi if none <= hi. */
static cc__time cc__bnb_fit_first(const cc__bnb* b, int j, cc__time lo, cc__time hi, cc__time cs, cc__time ce) {
    const cc__time d = b->p->dur[j];
    cc__time s = lo;
    int i = cc__bnb_find(b, s);
    while (i < b->m && b->tp[i] < s + d && s <= hi) {
        int ok = cc__bnb_seg_fits(b, j, i, cs, ce);
        i++;
        if (!ok) s = b->tp[i];  /* the last segment is always empty */
    }
    return s;
}

/* Latest start <= hi where j fits (its own part out); < lo if none >= lo. */
static cc__time cc__bnb_fit_last(const cc__bnb* b, int j, cc__time lo, cc__time hi, cc__time cs, cc__time ce) {
    const cc__time d = b->p->dur[j];
    cc__time s = hi;
    int i = cc__bnb_find(b, s + d - 1);
    while (i > 0 && s >= lo) {
        cc__time se = i + 1 < b->m ? b->tp[i + 1] : CONCERTO__TIME_MAX;
        if (se <= s) break;          /* the segments left of s do not matter */
        if (!cc__bnb_seg_fits(b, j, i, cs, ce)) {
            s = b->tp[i] - d;
            i = cc__bnb_find(b, s + d - 1);
            continue;
        }
        i--;
    }
    return s;
}

#define CONCERTO__BNB_TT_ROUNDS 8

/* Problems of unary streams alone (a training step's streams, its
   odd-even windows) run the streams' rules in the destructive root bound,
   and up to this many jobs in every node searched (lazily: a child
   propagates when it is searched, not when it is generated, so a node
   costs one propagation, not one per child). On small windows the nodes'
   propagation proves more in fewer nodes; on larger ones a node of long
   streams costs more than the nodes it saves, and the root bound alone
   keeps most of the gain. */
#define CONCERTO__BNB_UNARY_NODES_N 32

#define CONCERTO__BNB_CLIQUES 32     /* cliques kept for edge-finding */

/* The root shaves only where the node budget is unlimited or at least this
   many (odd-even windows search 300 nodes: there shaving costs more than
   the search and finds nothing better). */
#define CONCERTO__BNB_SHAVE_MIN_NODES 10000

/* The root's destructive bound runs energetic reasoning only where the node
   budget is unlimited or at least this many: a search of a few hundred
   nodes gains nothing from it for its cost. */
#define CONCERTO__BNB_ENERGETIC_MIN_NODES 2000

/* One time-tabling pass: the compulsory parts of the unplaced jobs (from
   h[] and lt[]) join the profile; then every unplaced job's head moves to
   the first start where it fits, its latest start to the last one, its own
   part taken out. Sets *changed when a head or latest start moved. Returns
   0 when the parts overload a resource or a job fits nowhere in its window. */
static int cc__bnb_tt_pass(cc__bnb* b, int* changed) {
    const cc__prob* p = b->p;
    int x, i, r, nc = 0, ok = 1;
    for (x = 0; x < b->n; x++) {
        cc__time cs = b->lt[x], ce = b->h[x] + p->dur[x];
        b->cs[x] = b->ce[x] = 0;
        if (b->done[x] || b->pos_off[x] == b->pos_off[x + 1] || cs >= ce) continue;
        b->cs[x] = cs; b->ce[x] = ce;
        b->cfl[x] = cc__bnb_occupy(b, cs, ce, p->dem + (size_t)x * (size_t)b->k);
        b->cjob[nc++] = x;
    }
    b->work += b->n - b->n_done;
    if (nc == 0) return 1;   /* the placed jobs alone: the heads already fit them */
    for (i = 1; i < b->m && ok; i++)
        for (r = 0; r < b->k; r++)
            if (cc__bnb_use(b, i, r) > p->cap[r]) { ok = 0; break; }
    for (x = 0; x < b->n && ok; x++) {
        cc__time nh, nl;
        if (b->done[x] || b->pos_off[x] == b->pos_off[x + 1]) continue;
        nh = cc__bnb_fit_first(b, x, b->h[x], b->lt[x], b->cs[x], b->ce[x]);
        if (nh > b->lt[x]) { ok = 0; break; }
        nl = cc__bnb_fit_last(b, x, nh, b->lt[x], b->cs[x], b->ce[x]);
        if (nh != b->h[x] || nl != b->lt[x]) *changed = 1;
        b->h[x] = nh;
        b->lt[x] = nl;
    }
    while (nc > 0) {  /* in reverse, so that every breakpoint goes with its maker */
        x = b->cjob[--nc];
        cc__bnb_release(b, b->cs[x], b->ce[x], p->dem + (size_t)x * (size_t)b->k, b->cfl[x]);
    }
    return ok;
}

/* Pairs of unplaced jobs that cannot overlap (together above a capacity,
   dis[]): when one order leaves no room in the windows [h, lt], the other
   holds, and the first job's head and the second's latest start move.
   Sets *changed; returns 0 when neither order fits. */
static int cc__bnb_pairs(cc__bnb* b, int* changed) {
    const cc__prob* p = b->p;
    int x, y, w;
    b->work += b->n - b->n_done;
    for (x = 0; x < b->n; x++) {
        const uint64_t* dx = b->dis + (size_t)x * b->nw;
        if (b->done[x] || b->pos_off[x] == b->pos_off[x + 1]) continue;
        for (w = (x + 1) >> 6; w < b->nw; w++) {
          /* the unplaced jobs y > x of dx's word w, lowest first */
          uint64_t m = dx[w] & ~b->set[w];
          if (w == (x + 1) >> 6) m &= ~(uint64_t)0 << ((x + 1) & 63);
          for (; m; m &= m - 1) {
            int y_after, x_after, f, s2;
            y = 64 * w + cc__bnb_ctz(m);
            y_after = b->lt[y] >= b->h[x] + p->dur[x];
            x_after = b->lt[x] >= b->h[y] + p->dur[y];
            if (y_after && x_after) continue;
            if (!y_after && !x_after) return 0;
            f = y_after ? x : y;   /* f before s2 */
            s2 = y_after ? y : x;
            if (b->h[f] + p->dur[f] > b->h[s2]) { b->h[s2] = b->h[f] + p->dur[f]; *changed = 1; }
            if (b->lt[s2] - p->dur[f] < b->lt[f]) { b->lt[f] = b->lt[s2] - p->dur[f]; *changed = 1; }
            if (b->h[x] > b->lt[x] || b->h[y] > b->lt[y]) return 0;
          }
        }
    }
    return 1;
}

/* ---- edge-finding on cliques of jobs no two of which overlap ----
   A clique (built once: jobs that pairwise share too little capacity or
   are ordered by precedence) behaves as one unary resource. Its unplaced
   jobs lie in [h, lt + d], its placed ones at [st, fin]. For every set O
   of the clique and job i outside it, if min(est of O and i) + p(O) + p_i
   > max lct of O, then i cannot precede or meet any job of O, so it starts
   after all of O: est_i >= est(O') + p(O') for every O' in O (edge-finding,
   O(c^2) per clique with the sets {est >= est_m, lct <= lct_k} of
   Baptiste, Le Pape and Nuijten); a set whose jobs do not fit between
   their est and lct leaves no completion. The same on mirrored time moves
   the latest starts. */

/* Edge-finding on the c tasks ef_job[0..c) with windows ef_est/ef_lct
   (durations p->dur), est in increasing order in ef_ord; raises the
   heads into ef_lb. Returns 0 on an overload. */
static int cc__bnb_ef_run(cc__bnb* b, int c) {
    const cc__prob* p = b->p;
    int a, i, kk;
    for (a = 0; a < c; a++) b->ef_lb[a] = b->ef_est[a];
    for (kk = 0; kk < c; kk++) {
        cc__time lk = b->ef_lct[kk], P = 0, C = -CONCERTO__TIME_MAX, H = -CONCERTO__TIME_MAX;
        for (a = c - 1; a >= 0; a--) {
            i = b->ef_ord[a];
            if (b->ef_lct[i] <= lk) {
                P += p->dur[b->ef_job[i]];
                if (b->ef_est[i] + P > C) C = b->ef_est[i] + P;
                if (C > lk) return 0;
            }
            b->ef_c[i] = C;
        }
        for (a = 0; a < c; a++) {
            cc__time pi;
            i = b->ef_ord[a];
            pi = p->dur[b->ef_job[i]];
            if (b->ef_lct[i] <= lk) {
                if (b->ef_est[i] + P > H) H = b->ef_est[i] + P;
                P -= pi;
            } else {
                if (b->ef_est[i] + P + pi > lk && b->ef_c[i] > b->ef_lb[i]) b->ef_lb[i] = b->ef_c[i];
                if (H + pi > lk && C > b->ef_lb[i]) b->ef_lb[i] = C;
            }
        }
    }
    return 1;
}

/* Sorts ef_ord[0..c) by ef_est (insertion sort; c is small). */
static void cc__bnb_ef_sort(cc__bnb* b, int c) {
    int a, x;
    for (a = 0; a < c; a++) b->ef_ord[a] = a;
    for (a = 1; a < c; a++) {
        int v = b->ef_ord[a];
        for (x = a; x > 0 && b->ef_est[b->ef_ord[x - 1]] > b->ef_est[v]; x--) b->ef_ord[x] = b->ef_ord[x - 1];
        b->ef_ord[x] = v;
    }
}

/* Edge-finding on every clique, both directions; moves h[] and lt[] of
   the unplaced jobs. Sets *changed; returns 0 when no completion exists. */
static int cc__bnb_edgefind(cc__bnb* b, int* changed) {
    const cc__prob* p = b->p;
    int q, a;
    for (q = 0; q < b->n_clq; q++) {
        int c = 0, same = b->ef_fresh[q];
        cc__time e0 = CONCERTO__TIME_MAX, *snap = b->ef_snap + 2 * (size_t)b->clq_off[q];
        for (a = b->clq_off[q]; a < b->clq_off[q + 1]; a++) {
            int j = b->clq[a];
            if (b->done[j]) continue;
            if (b->h[j] < e0) e0 = b->h[j];
            if (same && (snap[2 * (a - b->clq_off[q])] != b->h[j] || snap[2 * (a - b->clq_off[q]) + 1] != b->lt[j])) same = 0;
        }
        if (same || e0 == CONCERTO__TIME_MAX) continue;   /* nothing moved since its last run, or nothing left */
        for (a = b->clq_off[q]; a < b->clq_off[q + 1]; a++) {
            int j = b->clq[a];
            b->ef_job[c] = j;
            if (b->done[j]) {
                if (b->fin[j] <= e0) continue;   /* before every unplaced job: no set gains from it */
                b->ef_est[c] = b->st[j]; b->ef_lct[c] = b->fin[j];
            } else { b->ef_est[c] = b->h[j]; b->ef_lct[c] = b->lt[j] + p->dur[j]; }
            c++;
        }
        if (c < 2) continue;
        b->work += 2 * c;
        /* heads */
        cc__bnb_ef_sort(b, c);
        if (!cc__bnb_ef_run(b, c)) return 0;
        for (a = 0; a < c; a++) {
            int j = b->ef_job[a];
            if (b->ef_lb[a] <= b->ef_est[a]) continue;
            if (b->done[j]) return 0;   /* a placed job would have to move */
            b->h[j] = b->ef_lb[a];
            if (b->h[j] > b->lt[j]) return 0;
            *changed = 1;
        }
        /* latest starts: the same on mirrored time */
        for (a = 0; a < c; a++) {
            int j = b->ef_job[a];
            cc__time e = b->done[j] ? b->st[j] : b->h[j];
            cc__time l = b->done[j] ? b->fin[j] : b->lt[j] + p->dur[j];
            b->ef_est[a] = -l;
            b->ef_lct[a] = -e;
        }
        cc__bnb_ef_sort(b, c);
        if (!cc__bnb_ef_run(b, c)) return 0;
        for (a = 0; a < c; a++) {
            int j = b->ef_job[a];
            cc__time nl;
            if (b->ef_lb[a] <= b->ef_est[a]) continue;
            if (b->done[j]) return 0;
            nl = -b->ef_lb[a] - p->dur[j];
            b->lt[j] = nl;
            if (b->h[j] > b->lt[j]) return 0;
            *changed = 1;
        }
        for (a = b->clq_off[q]; a < b->clq_off[q + 1]; a++) {
            int j = b->clq[a];
            snap[2 * (a - b->clq_off[q])] = b->h[j];
            snap[2 * (a - b->clq_off[q]) + 1] = b->lt[j];
        }
        b->ef_fresh[q] = 1;
    }
    return 1;
}

/* ---- disjunctive reasoning on unary streams ----
   On a resource of capacity 1 (a stream) no two jobs overlap. Its unplaced
   jobs lie in [h, lt + d] (est, lct), its placed jobs and the busy blocks
   on it (merged where they overlap or touch) are fixed intervals. With a
   theta-lambda tree (Vilim, "Filtering algorithms for the unary resource
   constraint", 2007/2008: a balanced tree over the tasks in est order whose
   nodes keep, for a set Theta of white leaves, the sum of durations P and
   ECT(Theta) = max over O in Theta of est(O) + p(O), and the same with at
   most one gray leaf of a second set Lambda added, with the gray leaf that
   achieves it), each rule costs O(c log c) for c tasks:
   - overload: ECT(Theta) > lct_j for Theta = the tasks with lct <= lct_j
     leaves no completion;
   - edge-finding: a gray task i with ECT(Theta + i) > lct(Theta) cannot end
     before a job of Theta ends (all of Theta + i would then end by
     lct(Theta)), so it ends last and starts at or after ECT(Theta);
   - detectable precedences: when lst_j < ect_i, j cannot start after i
     ends, so it precedes i; i starts at or after ECT of all such j;
   - not-last: i cannot end last among O = {j != i: lst_j < lct_i} when
     ECT(O) > lst_i; then some j of O starts after i ends, so i ends by the
     largest lst of O.
   The same on mirrored time (t -> -t) moves the latest ends (and gives
   not-first). A fixed task that a rule would move, or a window that
   empties, leaves no completion. Every completion that ends by the target
   keeps its jobs in the windows, so no completion better than the
   incumbent is lost.
   Cost: O(c log c) per rule and stream. The tree's comparisons go either
   way at random, so they are selected by masks, not branches; detectable
   precedences and not-last share one sweep of one theta tree; and a
   stream sorts from the orders of its last run, which the windows change
   little. */

#define CONCERTO__UNY_NEG (-CONCERTO__TIME_MAX)

/* A node of the theta-lambda tree: over its leaves, Theta's sum of
   durations and ECT, the same with at most one gray leaf added, and the
   gray leaves that achieve them (-1: none). The theta tree alone keeps
   the first two. */
typedef struct cc__uny_node { cc__time sp, ect, spb, ectb; int rsp, rect; } cc__uny_node;
typedef struct cc__uny_wnode { cc__time sp, ect; } cc__uny_wnode;

/* One step up the white tree from node v (the path's P in *sp, its ECT
   ect; o the sibling): the parent's ECT, and its P in *sp. The side the
   path comes from is picked by a mask, not a branch: it goes either way at
   random, so a branch on it would mispredict. */
static cc__time cc__uny_wup(const cc__uny_wnode* o, int v, cc__time* sp, cc__time ect) {
    cc__time right = -(cc__time)(v & 1);   /* all ones: the path is the right child */
    cc__time e = (cc__bnb_max(ect, o->ect + *sp) & right) | (cc__bnb_max(o->ect, ect + o->sp) & ~right);
    *sp += o->sp;
    return e;
}

/* Sorts ord[0..c) (filled here with 0..c-1) by key, ties by index
   (a merge sort; tmp has c entries). With last (the order of the last
   run, *lastc its count; NULL: none): from that order by insertion when it
   has as many tasks, as the windows move little between runs, and by the
   merge sort where that takes more than 4c moves; the result, the one
   order by key and index, either way, goes back to last. */
static void cc__uny_sort(int* ord, const cc__time* key, int c, int* tmp, int* last, int* lastc) {
    int w, i;
    if (last && *lastc == c) {
        int moves = 0, x, y;
        for (x = 0; x < c && moves <= 4 * c; x++) {
            int v = last[x];
            cc__time kv = key[v];
            for (y = x; y > 0 && (key[ord[y - 1]] > kv || (key[ord[y - 1]] == kv && ord[y - 1] > v)); y--) ord[y] = ord[y - 1];
            ord[y] = v;
            moves += x - y;
        }
        if (x == c && moves <= 4 * c) {
            memcpy(last, ord, (size_t)c * sizeof *ord);
            return;
        }
    }
    for (i = 0; i < c; i++) ord[i] = i;
    for (w = 1; w < c; w *= 2) {
        for (i = 0; i < c; i += 2 * w) {
            int a = i, m = i + w < c ? i + w : c, z = i + 2 * w < c ? i + 2 * w : c, x = a, y = m, o = a;
            while (x < m && y < z) tmp[o++] = key[ord[y]] < key[ord[x]] ? ord[y++] : ord[x++];
            while (x < m) tmp[o++] = ord[x++];
            while (y < z) tmp[o++] = ord[y++];
        }
        memcpy(ord, tmp, (size_t)c * sizeof *ord);
    }
    if (last) {
        memcpy(last, ord, (size_t)c * sizeof *ord);
        *lastc = c;
    }
}

/* Node v of the tree from its children. */
static void cc__uny_pull(cc__uny_node* t, int v) {
    const cc__uny_node *l = t + 2 * v, *r = l + 1;
    cc__uny_node* x = t + v;
    cc__time a = l->spb + r->sp, c2 = l->sp + r->spb, d;
    x->sp = l->sp + r->sp;
    x->ect = cc__bnb_max(r->ect, l->ect + r->sp);
    {   /* by masks, not branches: the comparisons go either way at random and mispredict
           (written inline, not through a select helper: this is the proofs' inner loop) */
        cc__time ma = -(cc__time)(a >= c2), m1, mm;
        int mai = (int)ma, i1, mmi;
        x->spb = (a & ma) | (c2 & ~ma);
        x->rsp = (l->rsp & mai) | (r->rsp & ~mai);
        a = r->ectb; c2 = l->ect + r->spb; d = l->ectb + r->sp;
        ma = -(cc__time)(a >= c2); mai = (int)ma;
        m1 = (a & ma) | (c2 & ~ma);
        i1 = (r->rect & mai) | (r->rsp & ~mai);
        mm = -(cc__time)(m1 >= d); mmi = (int)mm;
        x->ectb = (m1 & mm) | (d & ~mm);
        x->rect = (i1 & mmi) | (l->rect & ~mmi);
    }
}

/* Leaf of task i (est rank u_pos[i]): 0 empty, 1 white (in Theta), 2 gray
   (in Lambda); up: recompute the path to the root. */
static void cc__uny_leaf(cc__bnb* b, int i, int state, int up) {
    int v = b->u_np + b->u_pos[i];
    cc__uny_node* x = b->t + v;
    cc__time e = b->u_est[i] + b->u_p[i];
    x->sp = state == 1 ? b->u_p[i] : 0;
    x->ect = state == 1 ? e : CONCERTO__UNY_NEG;
    x->spb = state ? b->u_p[i] : 0;
    x->ectb = state ? e : CONCERTO__UNY_NEG;
    x->rsp = x->rect = state == 2 ? i : -1;
    if (up)
        for (v /= 2; v >= 1; v /= 2) cc__uny_pull(b->t, v);
}

/* The same for the tree of white leaves alone (P and ECT only). */
static void cc__uny_leaf_white(cc__bnb* b, int i, int in) {
    int v = b->u_np + b->u_pos[i];
    cc__uny_wnode* t = b->tw;
    cc__time sp = in ? b->u_p[i] : 0, ect = in ? b->u_est[i] + b->u_p[i] : CONCERTO__UNY_NEG;
    t[v].sp = sp; t[v].ect = ect;
    for (; v > 1; v /= 2) {
        ect = cc__uny_wup(t + (v ^ 1), v, &sp, ect);
        t[v / 2].sp = sp; t[v / 2].ect = ect;
    }
}

/* ECT of the white tree's Theta without task i (a white leaf): the path
   from i's leaf to the root recomputed with that leaf empty, the tree
   unchanged (what removing i, reading the root and adding i back gives). */
static cc__time cc__uny_ect_without(const cc__bnb* b, int i) {
    int v = b->u_np + b->u_pos[i];
    const cc__uny_wnode* t = b->tw;
    cc__time sp = 0, ect = CONCERTO__UNY_NEG;
    for (; v > 1; v /= 2) ect = cc__uny_wup(t + (v ^ 1), v, &sp, ect);
    return ect;
}

/* Every leaf in state (0 or 1), the tree built bottom-up. */
static void cc__uny_fill(cc__bnb* b, int c, int state) {
    int v;
    for (v = b->u_np; v < 2 * b->u_np; v++) {
        cc__uny_node* x = b->t + v;
        x->sp = x->spb = 0;
        x->ect = x->ectb = CONCERTO__UNY_NEG;
        x->rsp = x->rect = -1;
    }
    if (state)
        for (v = 0; v < c; v++) cc__uny_leaf(b, v, state, 0);
    for (v = b->u_np - 1; v >= 1; v--) cc__uny_pull(b->t, v);
}

/* The white tree empty. */
static void cc__uny_fill_white(cc__bnb* b) {
    int v;
    for (v = 1; v < 2 * b->u_np; v++) { b->tw[v].sp = 0; b->tw[v].ect = CONCERTO__UNY_NEG; }
}

/* The rules on the c tasks u_est/u_lct/u_p: new heads into u_ne
   (edge-finding, detectable precedences) and new latest ends into u_nl
   (not-last), both from the windows as given. Returns 0 on an overload.
   last (NULL: none): the four orders of this stream's and side's last
   run, cap apart, to sort from (cc__uny_sort), lastc their counts. */
static int cc__uny_side(cc__bnb* b, int c, int* last, int cap, int* lastc) {
    cc__time* lst = b->u_key;
    int a, q, i, j;
    for (i = 0; i < c; i++) { b->u_ne[i] = b->u_est[i]; b->u_nl[i] = b->u_lct[i]; }
    for (b->u_np = 1; b->u_np < c; b->u_np *= 2) {}
    cc__uny_sort(b->u_oe, b->u_est, c, b->u_tmp, last, lastc);
    for (a = 0; a < c; a++) b->u_pos[b->u_oe[a]] = a;
    cc__uny_sort(b->u_ol, b->u_lct, c, b->u_tmp, last ? last + cap : NULL, last ? lastc + 1 : NULL);
    for (i = 0; i < c; i++) lst[i] = b->u_lct[i] - b->u_p[i];
    cc__uny_sort(b->u_os, lst, c, b->u_tmp, last ? last + 2 * (size_t)cap : NULL, last ? lastc + 2 : NULL);
    /* overload and edge-finding: Theta = the tasks of lct <= lct_j, by decreasing lct */
    cc__uny_fill(b, c, 1);
    for (a = c - 1; a >= 0; a--) {
        j = b->u_ol[a];
        if (b->t[1].ect > b->u_lct[j]) return 0;
        cc__uny_leaf(b, j, 2, 1);
        if (a == 0) break;
        j = b->u_ol[a - 1];
        while (b->t[1].ectb > b->u_lct[j]) {
            i = b->t[1].rect;
            if (i < 0) return 0;   /* Theta alone overloaded */
            if (b->t[1].ect > b->u_ne[i]) b->u_ne[i] = b->t[1].ect;
            cc__uny_leaf(b, i, 0, 1);
        }
    }
    /* detectable precedences (each i by increasing ect: O = the tasks of
       lst < ect_i) and not-last (each i by increasing lct: O = the tasks
       of lst < lct_i) in one sweep over the thresholds, O growing in lst
       order in one theta tree */
    {
        int* oc = b->u_oc;
        cc__time* ect = b->u_ect;
        int z = 0;
        for (i = 0; i < c; i++) { b->u_in[i] = 0; ect[i] = b->u_est[i] + b->u_p[i]; }
        cc__uny_sort(oc, ect, c, b->u_tmp, last ? last + 3 * (size_t)cap : NULL, last ? lastc + 3 : NULL);
        cc__uny_fill_white(b);
        for (a = 0, q = 0; a < c || z < c;) {
            int dp = z >= c || (a < c && ect[oc[a]] <= b->u_lct[b->u_ol[z]]);
            cc__time th, e;
            i = dp ? oc[a++] : b->u_ol[z++];
            th = dp ? ect[i] : b->u_lct[i];
            while (q < c && lst[b->u_os[q]] < th) { b->u_in[b->u_os[q]] = 1; cc__uny_leaf_white(b, b->u_os[q], 1); q++; }
            if (q == 0 || b->tw[1].ect <= (dp ? b->u_ne[i] : lst[i])) continue;   /* (ECT without i is no more) */
            e = b->u_in[i] ? cc__uny_ect_without(b, i) : b->tw[1].ect;
            if (dp) {
                if (e > b->u_ne[i]) b->u_ne[i] = e;
            } else if (e > lst[i]) {
                /* the largest lst of O: the last task added, or the one before it when that is i */
                int k2 = b->u_os[q - 1] != i ? q - 1 : q - 2;
                if (k2 >= 0 && lst[b->u_os[k2]] < b->u_nl[i]) b->u_nl[i] = lst[b->u_os[k2]];
            }
        }
    }
    return 1;
}

/* 1 when stream s's rules ran, in a probe of the same shaving, on the
   windows its jobs have now and moved nothing (b->sk_* or b->bk_*): they
   would move nothing again, as they read only those windows, the placed
   jobs and the busy blocks; *c: that run's tasks. */
static int cc__bnb_unary_still(const cc__bnb* b, int s, int* c) {
    int a, same_s = b->sk_ok[s], same_b = b->bk_ok[s];
    for (a = b->str_off[s]; a < b->str_off[s + 1] && (same_s || same_b); a++) {
        int j = b->str_job[a];
        if (b->h[j] != b->sk_h[a] || b->lt[j] != b->sk_l[a]) same_s = 0;
        if (b->h[j] != b->bk_h[a] || b->lt[j] != b->bk_l[a]) same_b = 0;
    }
    *c = same_s ? b->sk_c[s] : b->bk_c[s];
    return same_s || same_b;
}

/* The stream rules on every stream, both directions; moves h[] and lt[]
   of the unplaced jobs. Sets *changed; returns 0 when no completion
   exists. In shaving's probes a stream whose rules moved nothing on the
   same windows before is skipped (cc__bnb_unary_still): the same result
   and the same work counted, in less time (a probe changes one job's
   window, so most streams are as they were). */
static int cc__bnb_unary(cc__bnb* b, int* changed) {
    const cc__prob* p = b->p;
    int s, a, c, pass, cap;
    for (s = 0; s < b->n_str; s++) {
        cc__time e0 = CONCERTO__TIME_MAX, l1 = -CONCERTO__TIME_MAX;
        int moved = 0, snap = b->sk_on && b->probing && b->sk_h;
        if (snap && cc__bnb_unary_still(b, s, &c)) { b->work += 2 * c; continue; }
        for (a = b->str_off[s]; a < b->str_off[s + 1]; a++) {
            int j = b->str_job[a];
            if (b->done[j]) continue;
            if (b->h[j] < e0) e0 = b->h[j];
            if (b->lt[j] + p->dur[j] > l1) l1 = b->lt[j] + p->dur[j];
        }
        if (e0 == CONCERTO__TIME_MAX) continue;
        /* the fixed tasks that can meet an unplaced window: ending after e0, starting before l1 */
        c = 0;
        for (a = b->str_off[s]; a < b->str_off[s + 1]; a++) {
            int j = b->str_job[a];
            if (b->done[j]) {
                if (b->fin[j] <= e0 || b->st[j] >= l1) continue;
                b->u_est[c] = b->st[j]; b->u_lct[c] = b->fin[j]; b->u_id[c] = -1;
            } else { b->u_est[c] = b->h[j]; b->u_lct[c] = b->lt[j] + p->dur[j]; b->u_id[c] = j; }
            b->u_p[c] = p->dur[j];
            c++;
        }
        for (a = b->bz_off[s]; a < b->bz_off[s + 1]; a++) {
            if (b->bz_e[a] <= e0 || b->bz_s[a] >= l1) continue;
            b->u_est[c] = b->bz_s[a]; b->u_lct[c] = b->bz_e[a]; b->u_p[c] = b->bz_e[a] - b->bz_s[a]; b->u_id[c] = -1;
            c++;
        }
        if (c < 2) continue;
        b->work += 2 * c;
        cap = (b->str_off[s + 1] - b->str_off[s]) + (b->bz_off[s + 1] - b->bz_off[s]);   /* (the stream's tasks at most) */
        for (pass = 0; pass < 2; pass++) {   /* heads, then latest ends on mirrored time */
            int* last = b->u_ord + 8 * (size_t)(b->str_off[s] + b->bz_off[s]) + 4 * (size_t)pass * cap;
            if (!cc__uny_side(b, c, last, cap, b->u_ordc + 8 * s + 4 * pass)) return 0;
            for (a = 0; a < c; a++) {
                cc__time ne = b->u_ne[a], nl = b->u_nl[a];
                if (ne == b->u_est[a] && nl == b->u_lct[a]) continue;
                if (b->u_id[a] < 0 || ne + b->u_p[a] > nl) return 0;   /* a fixed task would move, or the window empties */
                b->u_est[a] = ne; b->u_lct[a] = nl;
                moved = 1;
            }
            for (a = 0; a < c; a++) {   /* mirror */
                cc__time e = b->u_est[a];
                b->u_est[a] = -b->u_lct[a]; b->u_lct[a] = -e;
            }
        }
        for (a = 0; a < c; a++) {
            int j = b->u_id[a];
            if (j < 0) continue;
            b->h[j] = b->u_est[a];
            b->lt[j] = b->u_lct[a] - p->dur[j];
        }
        if (moved) *changed = 1;
        if (snap) {
            b->sk_ok[s] = (unsigned char)!moved;
            b->sk_c[s] = c;
            if (!moved)
                for (a = b->str_off[s]; a < b->str_off[s + 1]; a++) { b->sk_h[a] = b->h[b->str_job[a]]; b->sk_l[a] = b->lt[b->str_job[a]]; }
        }
    }
    return 1;
}

/* Time-tabling and pairs of the unplaced jobs against the target, from the
   heads in h[] (updated in place, as are the latest starts lt[], which
   start from ls[]), with the precedence edges between passes, until
   nothing moves or CONCERTO__BNB_TT_ROUNDS; edge-finding on the cliques
   in a round where those moved nothing (and in the last round). Returns 0
   when no completion ends by the target. */
static int cc__bnb_timetable(cc__bnb* b) {
    const cc__prob* p = b->p;
    int x, q, i, round;
    for (x = 0; x < b->n; x++) b->lt[x] = b->ls[x];
    if (b->pw) {   /* the parent's windows hold for every completion of this node */
        const cc__time *ph = b->pw, *pl = b->pw + b->n;
        for (x = 0; x < b->n; x++) {
            if (b->done[x]) continue;
            if (ph[x] > b->h[x]) b->h[x] = ph[x];
            if (pl[x] < b->lt[x]) b->lt[x] = pl[x];
            if (b->h[x] > b->lt[x]) return 0;
        }
    }
    if (!b->probing)   /* a probe of the shaving is at the same node: the snapshots hold */
        for (x = 0; x < b->n_clq; x++) b->ef_fresh[x] = 0;
    for (round = 0; round < CONCERTO__BNB_TT_ROUNDS; round++) {
        int changed = 0;
        if (!b->uo && (!cc__bnb_tt_pass(b, &changed) || !cc__bnb_pairs(b, &changed))) return 0;
        if (b->n_str > 0 && !cc__bnb_unary(b, &changed)) return 0;
        /* edge-finding, the dearest rule, once the cheaper ones are still */
        if (!b->uo && (!changed || round == CONCERTO__BNB_TT_ROUNDS - 1) && !cc__bnb_edgefind(b, &changed)) return 0;
        if (!changed) break;
        b->work += b->n - b->n_done;
        /* along the precedence edges */
        for (i = 0; i < b->n_topo; i++) {
            int u = b->topo[i];
            if (b->done[u]) continue;
            for (q = p->pred_off[u]; q < p->pred_off[u + 1]; q++) {
                int v = p->pred[q];
                if (!b->done[v]) b->h[u] = cc__bnb_max(b->h[u], b->h[v] + p->dur[v]);
            }
            if (b->h[u] > b->lt[u]) return 0;
        }
        for (i = b->n_topo - 1; i >= 0; i--) {
            int u = b->topo[i];
            if (b->done[u]) continue;
            for (q = p->succ_off[u]; q < p->succ_off[u + 1]; q++) {
                int v = p->succ[q];
                if (b->lt[v] - p->dur[u] < b->lt[u]) b->lt[u] = b->lt[v] - p->dur[u];
            }
            if (b->h[u] > b->lt[u]) return 0;
        }
    }
    return 1;
}

/* Energetic reasoning against the target: in every interval [t1, t2)
   each unplaced job j needs at least dem * min(d, t2 - t1, h + d - t1,
   t2 - lt) of each resource (its part that cannot leave the interval), and
   the placed jobs and busy blocks take what the profile says; more than the
   capacity leaves no completion. Intervals from the heads and latest starts
   and their ends. Returns 0 when some interval is overloaded. */
static int cc__bnb_energetic(cc__bnb* b) {
    const cc__prob* p = b->p;
    int n = b->n, a, c, x, r;
    for (a = 0; a < 2 * n; a++) {
        int ja = a % n;
        cc__time t1 = a < n ? b->h[ja] : b->lt[ja];
        if (b->done[ja] || b->pos_off[ja] == b->pos_off[ja + 1]) continue;
        for (c = 0; c < 2 * n; c++) {
            int jc = c % n;
            cc__time t2 = c < n ? b->h[jc] + p->dur[jc] : b->lt[jc] + p->dur[jc];
            if (b->done[jc] || b->pos_off[jc] == b->pos_off[jc + 1] || t2 <= t1) continue;
            for (r = 0; r < b->k; r++) {
                int64_t need = 0, avail;
                int i;
                for (x = 0; x < n; x++) {
                    cc__time mi;
                    int32_t d = p->dem[(size_t)x * b->k + r];
                    if (b->done[x] || d <= 0) continue;
                    mi = p->dur[x];
                    if (t2 - t1 < mi) mi = t2 - t1;
                    if (b->h[x] + p->dur[x] - t1 < mi) mi = b->h[x] + p->dur[x] - t1;
                    if (t2 - b->lt[x] < mi) mi = t2 - b->lt[x];
                    if (mi > 0) need += (int64_t)d * mi;
                }
                if (need == 0) continue;
                avail = (int64_t)p->cap[r] * (t2 - t1);
                for (i = cc__bnb_find(b, t1); i < b->m && b->tp[i] < t2; i++) {
                    cc__time s0 = b->tp[i] > t1 ? b->tp[i] : t1;
                    cc__time s1 = i + 1 < b->m && b->tp[i + 1] < t2 ? b->tp[i + 1] : t2;
                    avail -= (int64_t)cc__bnb_use(b, i, r) * (s1 - s0);
                }
                if (need > avail) return 0;
            }
        }
    }
    return 1;
}

/* Shaving (Martin & Shmoys 1996; for the RCPSP the destructive bounds of
   Klein & Scholl 1999 and Baptiste & Demassey 2004): a job's window is cut
   at either end where holding the job to that end lets the propagation
   refute every completion. cc__bnb_probe propagates from the windows w
   (heads, then latest starts: [2n]) with job j held in [lo, hi]; 1 when it
   leaves a completion (its windows then in h[] and lt[]). */
static int cc__bnb_probe(cc__bnb* b, const cc__time* w, int j, cc__time lo, cc__time hi) {
    size_t n = (size_t)b->n;
    const cc__time* pw = b->pw;
    int ok;
    memcpy(b->sh_pv, w, 2 * n * sizeof *w);
    if (lo > b->sh_pv[j]) b->sh_pv[j] = lo;
    if (hi < b->sh_pv[n + (size_t)j]) b->sh_pv[n + (size_t)j] = hi;
    memcpy(b->h, b->sh_pv, n * sizeof *b->h);
    b->pw = b->sh_pv;
    b->probing = 1;
    ok = cc__bnb_timetable(b);
    b->probing = 0;
    b->pw = pw;
    return ok;
}

/* Shaves the windows h[] and lt[] (propagated) of the unplaced jobs:
   where holding job j to its head alone is refuted, a binary search finds
   a longer refuted piece [head, z] and the head moves to z + step (the
   latest start likewise), then the propagation runs again from the new
   windows; up to CONCERTO__BNB_SHAVE_PASSES passes over the jobs while
   some window moves. b->shave_sides picks the ends cut (0: both);
   b->shave_cap and the time limit stop it early, with the windows cut so
   far. Every completion that ends by the target keeps its jobs in the
   shaved windows. Returns 0 when a window empties (no completion), else 1
   with the windows in h[] and lt[]. */
#define CONCERTO__BNB_SHAVE_PASSES 3

/* The streams' snapshots' arrays (b->sk_*, b->bk_*); 0, and no
   snapshots (sk_on 0), when they cannot be had. */
static int cc__bnb_snap_alloc(cc__bnb* b) {
    cc_context* ctx = b->ctx;
    size_t m = (size_t)b->str_off[b->n_str] + 1, ns = (size_t)b->n_str;
    if (b->sk_h) return 1;
    b->sk_h = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->sk_l = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->bk_h = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->bk_l = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->sk_c = (int*)cc__calloc(ctx, ns, sizeof(int));
    b->bk_c = (int*)cc__calloc(ctx, ns, sizeof(int));
    b->sk_ok = (unsigned char*)cc__calloc(ctx, ns, 1);
    b->bk_ok = (unsigned char*)cc__calloc(ctx, ns, 1);
    if (b->sk_h && b->sk_l && b->bk_h && b->bk_l && b->sk_c && b->bk_c && b->sk_ok && b->bk_ok) return 1;
    cc__free(ctx, b->sk_h); cc__free(ctx, b->sk_l); cc__free(ctx, b->bk_h); cc__free(ctx, b->bk_l);
    cc__free(ctx, b->sk_c); cc__free(ctx, b->bk_c); cc__free(ctx, b->sk_ok); cc__free(ctx, b->bk_ok);
    b->sk_h = b->sk_l = b->bk_h = b->bk_l = NULL;
    b->sk_c = b->bk_c = NULL;
    b->sk_ok = b->bk_ok = NULL;
    b->sk_on = 0;
    return 0;
}

/* The windows now in h[] and lt[] are a fixpoint of the propagation: the
   streams' snapshots of this moment serve every probe from them. */
static void cc__bnb_shave_base(cc__bnb* b) {
    if (!b->sk_h) return;
    memcpy(b->bk_h, b->sk_h, (size_t)b->str_off[b->n_str] * sizeof *b->bk_h);
    memcpy(b->bk_l, b->sk_l, (size_t)b->str_off[b->n_str] * sizeof *b->bk_l);
    memcpy(b->bk_c, b->sk_c, (size_t)b->n_str * sizeof *b->bk_c);
    memcpy(b->bk_ok, b->sk_ok, (size_t)b->n_str);
}

static int cc__bnb_shave(cc__bnb* b) {
    size_t n = (size_t)b->n;
    cc__time* w = b->sh_w;
    cc__time g = b->step;
    int pass, j, moved = 1, sides = b->shave_sides ? b->shave_sides : 3;
    int64_t w0 = b->work;
    memcpy(w, b->h, n * sizeof *w);
    memcpy(w + n, b->lt, n * sizeof *w);
    if (b->n_str > 0 && b->sk_on && cc__bnb_snap_alloc(b)) {
        /* the streams' snapshots of these windows, from a probe that
           changes nothing (neither its outcome nor its work counts: the
           shaving is the one without snapshots, only faster) */
        int64_t wb = b->work;
        memset(b->sk_ok, 0, (size_t)b->n_str);
        for (j = 0; j < b->n && b->done[j]; j++) {}
        if (j < b->n) (void)cc__bnb_probe(b, w, j, w[j], w[n + (size_t)j]);
        cc__bnb_shave_base(b);   /* (a snapshot holds for its own windows, whatever the probe's end) */
        memcpy(b->h, w, n * sizeof *w);
        memcpy(b->lt, w + n, n * sizeof *w);
        b->work = wb;
    }
    for (pass = 0; pass < CONCERTO__BNB_SHAVE_PASSES && moved; pass++) {
        moved = 0;
        for (j = 0; j < b->n; j++) {
            cc__time lo, hi, a, z;
            int side;
            if ((b->shave_cap > 0 && b->work - w0 > b->shave_cap) || (b->t_end > 0 && cc__now_s() > b->t_end)) {
                moved = 0;
                break;
            }
            for (side = 0; side < 2; side++) {
                if (b->done[j]) break;
                if (!(sides >> side & 1)) continue;
                lo = w[j]; hi = w[n + (size_t)j];
                if (lo >= hi) break;
                if (side == 0 ? cc__bnb_probe(b, w, j, lo, lo) : cc__bnb_probe(b, w, j, hi, hi)) continue;
                /* the end is refuted (a); the whole window is not known to be (z) */
                if (side == 0) {
                    for (a = lo, z = hi; z - a > g;) {
                        cc__time mid = a + ((z - a) / g / 2) * g;
                        if (cc__bnb_probe(b, w, j, lo, mid)) z = mid; else a = mid;
                    }
                    w[j] = a + g;
                } else {
                    for (a = hi, z = lo; a - z > g;) {
                        cc__time mid = z + ((a - z) / g / 2) * g;
                        if (cc__bnb_probe(b, w, j, mid, hi)) z = mid; else a = mid;
                    }
                    w[n + (size_t)j] = a - g;
                }
                moved = 1;
                /* the propagation from the cut window */
                if (w[j] > w[n + (size_t)j] || !cc__bnb_probe(b, w, j, w[j], w[n + (size_t)j])) return 0;
                memcpy(w, b->h, n * sizeof *w);
                memcpy(w + n, b->lt, n * sizeof *w);
                cc__bnb_shave_base(b);
            }
        }
    }
    memcpy(b->h, w, n * sizeof *w);
    memcpy(b->lt, w + n, n * sizeof *w);
    return 1;
}

/* The propagation's part of the bound: from the heads in h[] and the bound
   lb without it, the bound with it (CONCERTO__TIME_MAX when it leaves no
   completion); sets tt_ran when it ran. */
static cc__time cc__bnb_bound_prop(cc__bnb* b, cc__time lb) {
    int x;
    b->tt_ran = 0;
    if (lb >= CONCERTO__TIME_MAX || b->target >= CONCERTO__TIME_MAX || cc__bnb_ceil(lb, b->step) > b->target) return lb;
    if (!cc__bnb_timetable(b)) return CONCERTO__TIME_MAX;
    b->tt_ran = 1;
    if (b->energetic && !cc__bnb_energetic(b)) return CONCERTO__TIME_MAX;
    if (b->shave > b->n_done) {
        int64_t w0 = b->work;
        int ok = cc__bnb_shave(b);
        if (b->n_done == 0) b->work = w0;   /* the root's shaving: bounded on its own, not the search's budget */
        if (!ok) return CONCERTO__TIME_MAX;
    }
    for (x = 0; x < b->n; x++)
        if (!b->done[x]) lb = cc__bnb_max(lb, b->h[x] + b->tail[x]);
    return lb;
}

/* Lower bound on the makespan of every completion of the current partial
   schedule whose jobs start at or after t; CONCERTO__TIME_MAX when no completion
   meets the latest starts ls[]. Leaves the heads in h[]. */
static cc__time cc__bnb_bound(cc__bnb* b, cc__time t, cc__time maxfin) {
    const cc__prob* p = b->p;
    cc__time lb = maxfin, t0 = CONCERTO__TIME_MAX;
    int x, q, r;
    b->tt_ran = 0;
    for (x = 0; x < b->n; x++) {
        int u = b->topo[x];
        cc__time hu;
        if (b->done[u]) continue;
        hu = cc__bnb_max(t, b->hd[u]);
        for (q = p->pred_off[u]; q < p->pred_off[u + 1]; q++) {
            int v = p->pred[q];
            hu = cc__bnb_max(hu, b->done[v] ? b->fin[v] : b->h[v] + p->dur[v]);
        }
        hu = cc__bnb_earliest(b, u, hu);  /* the placed jobs leave no room before */
        if (hu > b->ls[u]) return CONCERTO__TIME_MAX;
        b->h[u] = hu;
        if (hu < t0) t0 = hu;
        lb = cc__bnb_max(lb, hu + b->tail[u]);
    }
    if (t0 == CONCERTO__TIME_MAX) return lb;
    /* energy: the remaining work of resource r fits the free capacity after t0 */
    for (r = 0; r < b->k; r++) {
        int64_t w = 0, acc = 0, cap = p->cap[r];
        int i;
        cc__time tt = t0, end;
        for (x = 0; x < b->n; x++)
            if (!b->done[x]) w += (int64_t)p->dur[x] * p->dem[(size_t)x * b->k + r];
        if (w <= 0) continue;
        i = cc__bnb_find(b, t0);
        for (;;) {
            int64_t fr = cap - cc__bnb_use(b, i, r);
            int last = (i + 1 >= b->m);
            cc__time se = last ? CONCERTO__TIME_MAX : b->tp[i + 1];
            if (fr > 0) {
                int64_t need = w - acc;
                if (last || (se - tt) >= (need + fr - 1) / fr) { end = tt + (need + fr - 1) / fr; break; }
                acc += fr * (se - tt);
            } else if (last) { end = CONCERTO__TIME_MAX; break; }
            tt = se;
            i++;
        }
        lb = cc__bnb_max(lb, end);
    }
    return b->tt ? cc__bnb_bound_prop(b, lb) : lb;
}

/* Latest starts from the deadlines and the target makespan. */
static void cc__bnb_set_target(cc__bnb* b) {
    int j;
    b->target = b->U >= CONCERTO__TIME_MAX ? CONCERTO__TIME_MAX : b->U - b->step;
    for (j = 0; j < b->n; j++) {
        cc__time l = b->target >= CONCERTO__TIME_MAX ? CONCERTO__TIME_MAX : b->target - b->tail[j];
        b->ls[j] = l < b->dl_ls[j] ? l : b->dl_ls[j];
    }
}

/* ---- cutset memory ---- */
static uint64_t cc__bnb_hash(const cc__bnb* b) {
    uint64_t hsh = 0x9E3779B97F4A7C15ull;
    int w;
    for (w = 0; w < b->nw; w++) {
        hsh ^= b->set[w];
        hsh *= 0xBF58476D1CE4E5B9ull;
        hsh ^= hsh >> 29;
    }
    return hsh;
}

static int cc__bnb_cmp_desc(const void* a, const void* c) {
    cc__time x = *(const cc__time*)a, y = *(const cc__time*)c;
    return x > y ? -1 : x < y ? 1 : 0;
}

/* Is the current node (t, last) dominated by a stored one? hmin is the
   least head of the unplaced jobs (in h[]) and lb a bound on the makespan
   of every completion: a placed job j may finish later in A than in B if it
   finishes by the time the first job that needs one of its resources or
   follows it can start in B (and by lb): it then hinders no completion. */
static int cc__bnb_memo_hit(cc__bnb* b, uint64_t hsh, cc__time t, int last, cc__time hmin, cc__time lbB) {
    const cc__prob* p = b->p;
    int e, scanned = 0;
    if (!b->n_bucket) return 0;
    for (e = 0; e < b->n; e++) b->hj[e] = -CONCERTO__TIME_MAX;  /* not computed yet */
    for (e = b->bucket[hsh & (b->n_bucket - 1)]; e >= 0 && scanned < CONCERTO__BNB_MEMO_SCAN; e = b->ent[e].next) {
        const cc__bnb_ent* en = b->ent + e;
        const cc__time* sa;
        int j, x, ok = 1;
        if (en->hash != hsh || en->t > t) continue;
        scanned++;
        if (en->t == t && en->last != last) continue;
        if (memcmp(b->mset + (size_t)e * b->nw, b->set, (size_t)b->nw * sizeof *b->set) != 0) continue;
        sa = b->mst + en->off;
        for (j = 0, x = 0; j < b->n && ok; j++) {
            cc__time fa;
            if (!b->done[j]) continue;
            fa = sa[x++] + p->dur[j];
            if (fa <= hmin || fa <= b->fin[j]) continue;
            if (b->hj[j] == -CONCERTO__TIME_MAX) {
                const uint64_t* cj = b->conf + (size_t)j * b->nw;
                cc__time hm = lbB;
                int v;
                for (v = 0; v < b->n; v++)
                    if (!b->done[v] && (cj[v >> 6] >> (v & 63) & 1) && b->h[v] < hm) hm = b->h[v];
                b->hj[j] = hm;
            }
            if (fa > b->hj[j]) ok = 0;
        }
        if (!ok) continue;
        if (en->t == t) {  /* decreasing sorted starts: A's <= B's */
            int c = 0;
            for (j = 0, x = 0; j < b->n; j++)
                if (b->done[j]) { b->sa[x] = sa[x]; b->sb[x] = b->st[j]; x++; }
            qsort(b->sa, (size_t)x, sizeof *b->sa, cc__bnb_cmp_desc);
            qsort(b->sb, (size_t)x, sizeof *b->sb, cc__bnb_cmp_desc);
            for (j = 0; j < x && c == 0; j++) c = b->sa[j] < b->sb[j] ? -1 : b->sa[j] > b->sb[j] ? 1 : 0;
            if (c > 0) continue;
        }
        return 1;
    }
    return 0;
}

/* Stores the current node. Past CONCERTO__BNB_MEMO_BYTES it stops storing
   (the search goes on without); an allocation that fails stops the search
   with CC_ERR_OUT_OF_MEMORY. */
static void cc__bnb_memo_add(cc__bnb* b, uint64_t hsh, cc__time t, int last) {
    size_t e = b->n_ent, need = (size_t)b->n_done, i;
    int j;
    if (b->memo_full) return;
    if ((e + 1) * (sizeof(cc__bnb_ent) + (size_t)b->nw * 8 + 4) + (b->mst_n + need) * sizeof(cc__time) > CONCERTO__BNB_MEMO_BYTES ||
        e + 1 >= (size_t)0x7fffffff) { b->memo_full = 1; return; }
    if (!CONCERTO__GROW(b->ctx, b->ent, b->ent_cap, e + 1) ||
        !CONCERTO__GROW(b->ctx, b->mset, b->mset_cap, (e + 1) * (size_t)b->nw) ||
        !CONCERTO__GROW(b->ctx, b->mst, b->mst_cap, b->mst_n + need)) { b->oom = 1; b->stop = 1; return; }
    if (e + 1 > b->n_bucket * 2) {  /* rehash into twice the buckets */
        size_t nb = b->n_bucket ? b->n_bucket * 2 : 1024;
        int* bk = (int*)cc__alloc(b->ctx, nb * sizeof *bk);
        if (!bk) { b->oom = 1; b->stop = 1; return; }
        for (i = 0; i < nb; i++) bk[i] = -1;
        for (i = 0; i < e; i++) {  /* keep the newest first within a bucket */
            size_t h = b->ent[i].hash & (nb - 1);
            b->ent[i].next = bk[h];
            bk[h] = (int)i;
        }
        cc__free(b->ctx, b->bucket);
        b->bucket = bk;
        b->n_bucket = nb;
    }
    b->ent[e].hash = hsh;
    b->ent[e].t = t;
    b->ent[e].last = last;
    b->ent[e].off = b->mst_n;
    memcpy(b->mset + e * (size_t)b->nw, b->set, (size_t)b->nw * sizeof *b->set);
    for (j = 0; j < b->n; j++)
        if (b->done[j]) b->mst[b->mst_n++] = b->st[j];
    b->ent[e].next = b->bucket[hsh & (b->n_bucket - 1)];
    b->bucket[hsh & (b->n_bucket - 1)] = (int)e;
    b->n_ent = e + 1;
}

/* ---- search ---- */
static int cc__bnb_is_pred(const cc__prob* p, int i, int j) {
    int q;
    for (q = p->pred_off[j]; q < p->pred_off[j + 1]; q++)
        if (p->pred[q] == i) return 1;
    return 0;
}

/* Look-ahead of the left-shift rule: if an unplaced job whose predecessors
   are all placed fits entirely before t (the last start), it will be
   left-shiftable wherever it is placed later (all later jobs start at or
   after t), so no completion of this node survives. */
static int cc__bnb_dead(const cc__bnb* b, cc__time t) {
    const cc__prob* p = b->p;
    int v, q;
    for (v = 0; v < b->n; v++) {
        cc__time elo, ev;
        if (b->done[v] || b->npl[v] > 0) continue;
        elo = b->rel[v];
        for (q = p->pred_off[v]; q < p->pred_off[v + 1]; q++) elo = cc__bnb_max(elo, b->fin[p->pred[q]]);
        if (elo >= t) continue;
        ev = cc__bnb_earliest(b, v, elo);
        if (ev < t && ev + p->dur[v] <= t) return 1;
    }
    return 0;
}

static cc__time cc__bnb_hmin(const cc__bnb* b) {
    cc__time hmin = CONCERTO__TIME_MAX;
    int u;
    for (u = 0; u < b->n; u++)
        if (!b->done[u] && b->h[u] < hmin) hmin = b->h[u];
    return hmin;
}

/* pslot: the slot of the parent's windows ((size_t)-1: none); checked:
   this node passed the memory's check as a child. It is then not checked
   again: the entries stored since are nodes of the subtrees of the
   siblings searched before it, each of which holds that sibling's job,
   which this node's set lacks, so none of them has its set. */
static void cc__bnb_dfs(cc__bnb* b, cc__time t_prev, int last, cc__time maxfin, size_t pslot, int checked) {
    const cc__prob* p = b->p;
    size_t base, c, e, n2 = 2 * (size_t)b->n;
    int u, q;
    b->nodes++;
    if (b->budget > 0 && b->nodes + b->work / b->work_unit >= b->budget) b->stop = 1;
    if (b->t_end > 0 && (b->nodes & 255) == 0 && cc__now_s() > b->t_end) b->stop = 1;
    if (b->n_done == b->n) {  /* leaf: a complete schedule better than the target */
        if (maxfin < b->U) {
            memcpy(b->best, b->st, (size_t)b->n * sizeof *b->st);
            b->U = maxfin;
            cc__bnb_set_target(b);
            if (b->U <= b->root_lb) b->stop = 2;
        }
        return;
    }
    if (b->stop) return;
    if (b->n_done > 0) {
        uint64_t hsh = cc__bnb_hash(b);
        if (!checked) {
            cc__time lbB;
            int tt = b->tt;
            b->tt = 0;
            lbB = cc__bnb_bound(b, t_prev, maxfin);
            b->tt = tt;
            if (lbB >= CONCERTO__TIME_MAX || cc__bnb_ceil(lbB, b->step) > b->target) return;
            if (cc__bnb_memo_hit(b, hsh, t_prev, last, cc__bnb_hmin(b), lbB)) return;
        }
        cc__bnb_memo_add(b, hsh, t_prev, last);
    }
    /* children: every eligible job at its earliest start >= t_prev */
    base = b->ch_n;
    for (u = 0; u < b->n; u++) {
        cc__time elo, s, lb;
        int fl;
        if (b->done[u] || b->npl[u] > 0) continue;
        elo = b->rel[u];
        for (q = p->pred_off[u]; q < p->pred_off[u + 1]; q++) elo = cc__bnb_max(elo, b->fin[p->pred[q]]);
        s = cc__bnb_earliest(b, u, cc__bnb_max(elo, t_prev));
        if (s > b->ls[u]) continue;
        if (elo < t_prev && cc__bnb_earliest(b, u, elo) < s) continue;          /* left shift */
        if (last >= 0 && s == t_prev && u < last && !cc__bnb_is_pred(p, last, u)) continue;  /* single enumeration */
        fl = cc__bnb_place(b, u, s);
        b->pw = pslot != (size_t)-1 ? b->win + pslot * n2 : NULL;
        if (cc__bnb_dead(b, s)) lb = CONCERTO__TIME_MAX;
        else {   /* the bound without the propagation, the memory (where it propagates), then the propagation */
            int tt = b->tt;
            b->tt = 0;
            lb = cc__bnb_bound(b, s, cc__bnb_max(maxfin, b->fin[u]));
            b->tt = tt;
            if (b->tt && lb < CONCERTO__TIME_MAX && cc__bnb_ceil(lb, b->step) <= b->target &&
                cc__bnb_memo_hit(b, cc__bnb_hash(b), s, u, cc__bnb_hmin(b), lb)) lb = CONCERTO__TIME_MAX;
            if (b->tt && !b->lazy) lb = cc__bnb_bound_prop(b, lb);
        }
        b->pw = NULL;
        cc__bnb_unplace(b, u, fl);
        if (lb >= CONCERTO__TIME_MAX) continue;
        lb = cc__bnb_ceil(lb, b->step);
        if (lb > b->target) continue;
        if (!CONCERTO__GROW(b->ctx, b->ch, b->ch_cap, b->ch_n + 1)) { b->oom = 1; b->stop = 1; b->ch_n = base; return; }
        b->ch[b->ch_n].win = b->tt_ran;
        b->ch[b->ch_n].slot = b->ch_n;
        if (b->tt_ran) {
            if (!CONCERTO__GROW(b->ctx, b->win, b->win_cap, (b->ch_n + 1) * n2)) { b->oom = 1; b->stop = 1; b->ch_n = base; return; }
            memcpy(b->win + b->ch_n * n2, b->h, (size_t)b->n * sizeof *b->h);
            memcpy(b->win + b->ch_n * n2 + b->n, b->lt, (size_t)b->n * sizeof *b->lt);
        }
        b->ch[b->ch_n].checked = b->tt;
        b->ch[b->ch_n].job = u;
        b->ch[b->ch_n].s = s;
        b->ch[b->ch_n].lb = lb;
        /* insertion sort: bound, then latest start, then start, then id */
        for (c = b->ch_n; c > base; c--) {
            const cc__bnb_child* x = b->ch + c - 1;
            const cc__bnb_child* y = b->ch + c;
            int before = y->lb != x->lb ? y->lb < x->lb
                       : b->ls[y->job] != b->ls[x->job] ? b->ls[y->job] < b->ls[x->job]
                       : y->s != x->s ? y->s < x->s : y->job < x->job;
            if (!before) break;
            { cc__bnb_child tmp = b->ch[c]; b->ch[c] = b->ch[c - 1]; b->ch[c - 1] = tmp; }
        }
        b->ch_n++;
    }
    e = b->ch_n;
    for (c = base; c < e && !b->stop; c++) {
        cc__bnb_child ch = b->ch[c];
        int fl;
        if (ch.lb > b->target || ch.s > b->ls[ch.job]) continue;  /* the target may have dropped */
        fl = cc__bnb_place(b, ch.job, ch.s);
        if (b->lazy && b->tt) {   /* its propagation now, from this node's windows */
            cc__time lb;
            b->pw = pslot != (size_t)-1 ? b->win + pslot * n2 : NULL;
            b->tt = 0;
            lb = cc__bnb_bound(b, ch.s, cc__bnb_max(maxfin, b->fin[ch.job]));
            b->tt = 1;
            lb = cc__bnb_bound_prop(b, lb);
            b->pw = NULL;
            if (lb >= CONCERTO__TIME_MAX || cc__bnb_ceil(lb, b->step) > b->target) { cc__bnb_unplace(b, ch.job, fl); continue; }
            ch.win = b->tt_ran;
            ch.slot = c;   /* free: this node's children's records lie below e, their own above */
            if (ch.win) {
                if (!CONCERTO__GROW(b->ctx, b->win, b->win_cap, (c + 1) * n2)) { b->oom = 1; b->stop = 1; cc__bnb_unplace(b, ch.job, fl); break; }
                memcpy(b->win + c * n2, b->h, (size_t)b->n * sizeof *b->h);
                memcpy(b->win + c * n2 + b->n, b->lt, (size_t)b->n * sizeof *b->lt);
            }
        }
        cc__bnb_dfs(b, ch.s, ch.job, cc__bnb_max(maxfin, b->fin[ch.job]), ch.win ? ch.slot : (size_t)-1, ch.checked);
        cc__bnb_unplace(b, ch.job, fl);
    }
    b->ch_n = base;
}

/* A destructive lower bound at the root: a target T that the bound with
   its time-tabling refutes proves the optimum above T, so a binary search
   between lb and the incumbent's target finds a refuted T as high as it
   can (lattice steps). b->U is the incumbent's makespan; b->target is left
   for the caller to set again. */
static cc__time cc__bnb_destructive(cc__bnb* b, cc__time lb) {
    cc__time lo = lb, hi = b->U - b->step, U = b->U;   /* is some T in [lo, hi] refuted? */
    b->energetic = !b->uo && !b->no_energetic;
    while (lo <= hi) {
        cc__time mid = lo + ((hi - lo) / b->step / 2) * b->step, r;
        b->U = mid + b->step;
        cc__bnb_set_target(b);
        r = cc__bnb_bound(b, -CONCERTO__TIME_MAX, -CONCERTO__TIME_MAX);
        if (r >= CONCERTO__TIME_MAX || cc__bnb_ceil(r, b->step) > mid) { lb = mid + b->step; lo = mid + b->step; }
        else hi = mid - b->step;
    }
    b->U = U;
    b->energetic = 0;
    return lb;
}

static void cc__bnb_free_all(cc__bnb* b) {
    cc_context* ctx = b->ctx;
    cc__free(ctx, b->hd); cc__free(ctx, b->sh_w); cc__free(ctx, b->sh_pv);
    cc__free(ctx, b->topo); cc__free(ctx, b->rel); cc__free(ctx, b->tail); cc__free(ctx, b->dl_ls);
    cc__free(ctx, b->ls); cc__free(ctx, b->pos_off); cc__free(ctx, b->pos_res); cc__free(ctx, b->tp);
    cc__free(ctx, b->pu); cc__free(ctx, b->proom); cc__free(ctx, b->pown);
    cc__free(ctx, b->use); cc__free(ctx, b->done); cc__free(ctx, b->npl); cc__free(ctx, b->st);
    cc__free(ctx, b->lt); cc__free(ctx, b->cs); cc__free(ctx, b->ce); cc__free(ctx, b->cfl); cc__free(ctx, b->cjob);
    cc__free(ctx, b->fin); cc__free(ctx, b->h); cc__free(ctx, b->sa); cc__free(ctx, b->sb);
    cc__free(ctx, b->set); cc__free(ctx, b->conf); cc__free(ctx, b->dis); cc__free(ctx, b->hj); cc__free(ctx, b->ch); cc__free(ctx, b->win); cc__free(ctx, b->bucket); cc__free(ctx, b->ent);
    cc__free(ctx, b->mset); cc__free(ctx, b->mst);
    cc__free(ctx, b->desc); cc__free(ctx, b->clq); cc__free(ctx, b->clq_off); cc__free(ctx, b->ef_est);
    cc__free(ctx, b->ef_lct); cc__free(ctx, b->ef_lb); cc__free(ctx, b->ef_c); cc__free(ctx, b->ef_ord); cc__free(ctx, b->ef_job);
    cc__free(ctx, b->ef_snap); cc__free(ctx, b->ef_fresh);
    cc__free(ctx, b->str_off); cc__free(ctx, b->str_job); cc__free(ctx, b->bz_off); cc__free(ctx, b->bz_s); cc__free(ctx, b->bz_e);
    cc__free(ctx, b->sk_h); cc__free(ctx, b->sk_l); cc__free(ctx, b->bk_h); cc__free(ctx, b->bk_l);
    cc__free(ctx, b->sk_c); cc__free(ctx, b->bk_c); cc__free(ctx, b->sk_ok); cc__free(ctx, b->bk_ok);
    cc__free(ctx, b->u_est); cc__free(ctx, b->u_lct); cc__free(ctx, b->u_p); cc__free(ctx, b->u_ne); cc__free(ctx, b->u_nl);
    cc__free(ctx, b->u_key); cc__free(ctx, b->u_ect); cc__free(ctx, b->u_id); cc__free(ctx, b->u_oe); cc__free(ctx, b->u_ol); cc__free(ctx, b->u_os);
    cc__free(ctx, b->u_oc); cc__free(ctx, b->u_tmp); cc__free(ctx, b->u_pos); cc__free(ctx, b->u_in);
    cc__free(ctx, b->t); cc__free(ctx, b->tw); cc__free(ctx, b->u_ord); cc__free(ctx, b->u_ordc);
}

/* The search's arrays; 0 when out of memory. */
static int cc__bnb_alloc(cc__bnb* b) {
    cc_context* ctx = b->ctx;
    size_t n = (size_t)b->n, k1 = (size_t)(b->k > 0 ? b->k : 1);
    size_t mcap = 2 * n + 2 * (size_t)(b->p->n_busy > 0 ? b->p->n_busy : 0) + 2;
    b->topo = (int*)cc__alloc(ctx, n * sizeof(int));
    b->rel = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->hd = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->sh_w = (cc__time*)cc__alloc(ctx, 2 * n * sizeof(cc__time));
    b->sh_pv = (cc__time*)cc__alloc(ctx, 2 * n * sizeof(cc__time));
    if (!(b->hd && b->sh_w && b->sh_pv)) return 0;
    b->tail = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->dl_ls = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ls = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->pos_off = (int*)cc__alloc(ctx, (n + 1) * sizeof(int));
    b->pos_res = (int*)cc__alloc(ctx, n * k1 * sizeof(int));
    b->tp = (cc__time*)cc__alloc(ctx, mcap * sizeof(cc__time));
    b->use = (int32_t*)cc__calloc(ctx, mcap * k1, sizeof(int32_t));
    b->pu = (uint64_t*)cc__calloc(ctx, mcap, sizeof(uint64_t));
    b->proom = (uint64_t*)cc__alloc(ctx, n * sizeof(uint64_t));
    b->pown = (uint64_t*)cc__alloc(ctx, n * sizeof(uint64_t));
    if (!(b->pu && b->proom && b->pown)) return 0;
    b->done = (unsigned char*)cc__calloc(ctx, n, 1);
    b->npl = (int*)cc__alloc(ctx, n * sizeof(int));
    b->st = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->fin = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->h = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->lt = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->cs = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ce = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->cfl = (int*)cc__alloc(ctx, n * sizeof(int));
    b->cjob = (int*)cc__alloc(ctx, n * sizeof(int));
    b->sa = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->sb = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->set = (uint64_t*)cc__calloc(ctx, (size_t)b->nw, sizeof(uint64_t));
    b->conf = (uint64_t*)cc__calloc(ctx, n * (size_t)b->nw, sizeof(uint64_t));
    b->dis = (uint64_t*)cc__calloc(ctx, n * (size_t)b->nw, sizeof(uint64_t));
    b->hj = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->desc = (uint64_t*)cc__calloc(ctx, n * (size_t)b->nw, sizeof(uint64_t));
    b->clq = (int*)cc__alloc(ctx, n * CONCERTO__BNB_CLIQUES * sizeof(int));
    b->clq_off = (int*)cc__alloc(ctx, (CONCERTO__BNB_CLIQUES + 1) * sizeof(int));
    b->ef_est = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ef_lct = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ef_lb = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ef_c = (cc__time*)cc__alloc(ctx, n * sizeof(cc__time));
    b->ef_ord = (int*)cc__alloc(ctx, n * sizeof(int));
    b->ef_job = (int*)cc__alloc(ctx, n * sizeof(int));
    b->ef_snap = (cc__time*)cc__alloc(ctx, 2 * n * CONCERTO__BNB_CLIQUES * sizeof(cc__time));
    b->ef_fresh = (unsigned char*)cc__calloc(ctx, CONCERTO__BNB_CLIQUES, 1);
    if (!(b->ef_snap && b->ef_fresh && b->desc && b->clq && b->clq_off && b->ef_est && b->ef_lct && b->ef_lb && b->ef_c && b->ef_ord && b->ef_job)) return 0;
    return b->topo && b->rel && b->tail && b->dl_ls && b->ls && b->pos_off && b->pos_res && b->tp && b->use && b->done &&
           b->npl && b->st && b->fin && b->h && b->lt && b->cs && b->ce && b->cfl && b->cjob && b->sa && b->sb && b->set && b->conf && b->dis && b->hj;
}

/* The time step: the grain when every duration, release, deadline and
   busy time lies on its lattice (then every generated time does), else 1. */
static cc__time cc__bnb_step(const cc__prob* p) {
    cc__time g = p->grain > 0 ? p->grain : 1;
    int j;
    for (j = 0; j < p->n; j++) {
        if (p->dur[j] % g) return 1;
        if (p->release && p->release[j] % g) return 1;
        if (p->deadline && p->deadline[j] < CONCERTO__TIME_MAX && p->deadline[j] % g) return 1;
    }
    for (j = 0; j < p->n_busy; j++)
        if (p->busy_start[j] % g || p->busy_end[j] % g) return 1;
    return g;
}

/* Resources with positive demand per job, releases, predecessor counts, a
   topological order. Returns 1 if no schedule exists (a job above a
   capacity, a cycle). */
static int cc__bnb_structure(cc__bnb* b) {
    const cc__prob* p = b->p;
    int i, j, x, n = b->n, k = b->k, infeasible = 0;
    b->pos_off[0] = 0;
    for (j = 0, x = 0; j < n; j++) {
        for (i = 0; i < k; i++) {
            int32_t d = p->dem[(size_t)j * k + i];
            if (d > 0 && p->dur[j] > 0) {
                b->pos_res[x++] = i;
                if (d > p->cap[i]) infeasible = 1;
            }
        }
        b->pos_off[j + 1] = x;
        b->rel[j] = b->hd[j] = p->release ? p->release[j] : 0;
    }
    b->packed = k >= 1 && k <= 4 && !infeasible;
    for (i = 0; i < k && b->packed; i++) {   /* the most a lane can hold */
        int64_t all = 0;
        for (j = 0; j < n; j++) all += p->dem[(size_t)j * k + i] > 0 ? p->dem[(size_t)j * k + i] : 0;
        for (j = 0; j < p->n_busy; j++) all += p->busy_dem[(size_t)j * k + i] > 0 ? p->busy_dem[(size_t)j * k + i] : 0;
        if (all > CONCERTO__LANE_MAX || p->cap[i] > CONCERTO__LANE_MAX) b->packed = 0;
    }
    for (j = 0; j < n && b->packed; j++) {   /* a job without duration takes no room */
        const int32_t* dj = p->dur[j] > 0 ? p->dem + (size_t)j * k : NULL;
        b->proom[j] = cc__lanes_room(k, dj, p->cap, 0);
        b->pown[j] = cc__lanes_room(k, dj, p->cap, 1);
    }
    b->n_topo = cc__topo_order(n, p->succ_off, p->succ, NULL, NULL, b->npl, b->topo);
    if (b->n_topo < n) infeasible = 1;  /* a cycle */
    for (j = 0; j < n; j++) b->npl[j] = p->pred_off[j + 1] - p->pred_off[j];
    return infeasible;
}

/* Tails (the longest path to the end, and the successors' energy per
   resource over its capacity) and latest starts from the deadlines,
   backwards along the topological order. 0 when out of memory. */
static int cc__bnb_tails(cc__bnb* b) {
    const cc__prob* p = b->p;
    int i, j, q, x, r, n = b->n, k = b->k, nw = b->nw;
    uint64_t* desc = b->desc;   /* successors, transitively */
    for (i = b->n_topo - 1; i >= 0; i--) {
        uint64_t* dj;
        cc__time tl = 0, lf;
        j = b->topo[i];
        lf = (p->deadline && p->deadline[j] < CONCERTO__TIME_MAX) ? p->deadline[j] : CONCERTO__TIME_MAX;
        dj = desc + (size_t)j * nw;
        for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) {
            int s2 = p->succ[q], w;
            tl = cc__bnb_max(tl, b->tail[s2]);
            if (b->dl_ls[s2] < lf) lf = b->dl_ls[s2];
            for (w = 0; w < nw; w++) dj[w] |= desc[(size_t)s2 * nw + w];
            dj[s2 >> 6] |= (uint64_t)1 << (s2 & 63);
        }
        for (r = 0; r < k; r++) {   /* all successors run after j */
            int64_t e = 0;
            for (x = 0; x < n; x++)
                if (dj[x >> 6] >> (x & 63) & 1) e += (int64_t)p->dur[x] * p->dem[(size_t)x * k + r];
            if (e > 0 && p->cap[r] > 0) tl = cc__bnb_max(tl, cc__bnb_ceil((e + p->cap[r] - 1) / p->cap[r], b->step));
        }
        b->tail[j] = tl + p->dur[j];
        b->dl_ls[j] = lf >= CONCERTO__TIME_MAX ? CONCERTO__TIME_MAX : lf - p->dur[j];
    }
    return 1;
}

/* conf[j]: the jobs sharing a resource with positive demand with j, and
   j's successors; the profile: the -inf sentinel plus the busy blocks. */
static void cc__bnb_conflicts(cc__bnb* b) {
    const cc__prob* p = b->p;
    int i, j, q, n = b->n;
    for (j = 0; j < n; j++) {
        uint64_t* cj = b->conf + (size_t)j * b->nw;
        for (i = 0; i < n; i++) {
            int a, c, hit = 0;
            for (a = b->pos_off[j]; a < b->pos_off[j + 1] && !hit; a++)
                for (c = b->pos_off[i]; c < b->pos_off[i + 1]; c++)
                    if (b->pos_res[a] == b->pos_res[c]) { hit = 1; break; }
            if (hit) cj[i >> 6] |= (uint64_t)1 << (i & 63);
            for (a = b->pos_off[j]; a < b->pos_off[j + 1] && hit && i != j; a++) {
                int r = b->pos_res[a];
                if ((int64_t)p->dem[(size_t)j * b->k + r] + p->dem[(size_t)i * b->k + r] > p->cap[r] && p->dur[i] > 0) {
                    b->dis[(size_t)j * b->nw + (i >> 6)] |= (uint64_t)1 << (i & 63);
                    break;
                }
            }
        }
        for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) cj[p->succ[q] >> 6] |= (uint64_t)1 << (p->succ[q] & 63);
    }
    b->tp[0] = -CONCERTO__TIME_MAX * 2;
    b->pu[0] = 0;
    b->m = 1;
    for (i = 0; i < p->n_busy; i++)
        if (p->busy_end[i] > p->busy_start[i])
            (void)cc__bnb_occupy(b, p->busy_start[i], p->busy_end[i], p->busy_dem + (size_t)i * b->k);
}

/* The unary streams: for each resource of capacity 1, its jobs with a
   duration and the busy blocks on it, sorted by start and merged where
   they overlap or touch (one fixed interval each); a stream with fewer
   than two tasks, or no job, is left out. Scratch for its rules. 0 when
   out of memory. */
static int cc__bnb_streams(cc__bnb* b) {
    cc_context* ctx = b->ctx;
    const cc__prob* p = b->p;
    int r, j, a, x, x2, np2, nj = 0, nz = 0, k = b->k;
    size_t m;
    b->n_str = 0; b->str_max = 0;
    for (r = 0; r < k; r++) {
        if (p->cap[r] != 1) continue;
        for (j = 0; j < b->n; j++)
            for (a = b->pos_off[j]; a < b->pos_off[j + 1]; a++) nj += b->pos_res[a] == r;
        for (j = 0; j < p->n_busy; j++) nz += p->busy_dem[(size_t)j * k + r] > 0 && p->busy_end[j] > p->busy_start[j];
    }
    if (nj == 0) return 1;
    b->str_off = (int*)cc__alloc(ctx, ((size_t)k + 1) * sizeof(int));
    b->bz_off = (int*)cc__alloc(ctx, ((size_t)k + 1) * sizeof(int));
    b->str_job = (int*)cc__alloc(ctx, (size_t)nj * sizeof(int));
    b->bz_s = (cc__time*)cc__alloc(ctx, ((size_t)nz + 1) * sizeof(cc__time));
    b->bz_e = (cc__time*)cc__alloc(ctx, ((size_t)nz + 1) * sizeof(cc__time));
    if (!b->str_off || !b->bz_off || !b->str_job || !b->bz_s || !b->bz_e) return 0;
    b->str_off[0] = b->bz_off[0] = 0;
    for (r = 0; r < k; r++) {
        int s = b->n_str, j0 = b->str_off[s], z0 = b->bz_off[s], c;
        if (p->cap[r] != 1) continue;
        x = j0;
        for (j = 0; j < b->n; j++)
            for (a = b->pos_off[j]; a < b->pos_off[j + 1]; a++)
                if (b->pos_res[a] == r) b->str_job[x++] = j;
        c = z0;
        for (j = 0; j < p->n_busy; j++) {   /* by start (insertion: few blocks), then merged */
            int y;
            cc__time bs = p->busy_start[j], be = p->busy_end[j];
            if (p->busy_dem[(size_t)j * k + r] <= 0 || be <= bs) continue;
            for (y = c; y > z0 && b->bz_s[y - 1] > bs; y--) { b->bz_s[y] = b->bz_s[y - 1]; b->bz_e[y] = b->bz_e[y - 1]; }
            b->bz_s[y] = bs; b->bz_e[y] = be;
            c++;
        }
        x2 = z0;
        for (a = z0; a < c; a++) {
            if (x2 > z0 && b->bz_s[a] <= b->bz_e[x2 - 1]) {
                if (b->bz_e[a] > b->bz_e[x2 - 1]) b->bz_e[x2 - 1] = b->bz_e[a];
            } else { b->bz_s[x2] = b->bz_s[a]; b->bz_e[x2] = b->bz_e[a]; x2++; }
        }
        c = x2;
        if (x == j0 || (x - j0) + (c - z0) < 2) continue;
        b->str_off[s + 1] = x;
        b->bz_off[s + 1] = c;
        if ((x - j0) + (c - z0) > b->str_max) b->str_max = (x - j0) + (c - z0);
        b->n_str++;
    }
    if (b->n_str == 0) return 1;
    b->sk_on = 1;   /* (the snapshots' arrays come with the first shaving) */
    m = (size_t)b->str_max;
    for (np2 = 1; np2 < b->str_max; np2 *= 2) {}
    b->u_est = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_lct = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_p = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_ne = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_nl = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_key = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_ect = (cc__time*)cc__alloc(ctx, m * sizeof(cc__time));
    b->u_id = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_oe = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_ol = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_os = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_oc = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_tmp = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_pos = (int*)cc__alloc(ctx, m * sizeof(int));
    b->u_in = (unsigned char*)cc__alloc(ctx, m);
    b->u_ord = (int*)cc__alloc(ctx, (8 * ((size_t)b->str_off[b->n_str] + b->bz_off[b->n_str]) + 1) * sizeof(int));
    b->u_ordc = (int*)cc__calloc(ctx, 8 * (size_t)b->n_str + 1, sizeof(int));
    m = 2 * (size_t)np2;
    b->t = (cc__uny_node*)cc__alloc(ctx, m * sizeof(cc__uny_node));
    b->tw = (cc__uny_wnode*)cc__alloc(ctx, m * sizeof(cc__uny_wnode));
    return b->u_est && b->u_lct && b->u_p && b->u_ne && b->u_nl && b->u_key && b->u_ect && b->u_id && b->u_oe && b->u_ol && b->u_os &&
           b->u_oc && b->u_tmp && b->u_pos && b->u_in && b->t && b->tw && b->u_ord && b->u_ordc;
}

/* Cliques for edge-finding: from each job with a duration (longest
   first), greedily the longest jobs that overlap none of those taken
   (dis[] or a path of precedence edges); sets of 3 or more, each once, at
   most CONCERTO__BNB_CLIQUES. Jobs of equal duration go by id, or with
   rev by id descending: a second cover, which the root bound also tries.
   The cover decides what edge-finding sees: the two covers can give
   different root bounds. */
static void cc__bnb_cliques(cc__bnb* b, int rev) {
    const cc__prob* p = b->p;
    int n = b->n, nw = b->nw, a, c, x, q, tried = 0;
    int* ord = b->ef_job;   /* scratch: jobs by decreasing duration, then id (rev: descending) */
    int m = 0;
    b->n_clq = 0;
    b->clq_off[0] = 0;
    for (x = 0; x < n; x++)
        if (p->dur[x] > 0) ord[m++] = x;
    for (a = 1; a < m; a++) {
        int v = ord[a];
        for (x = a; x > 0 && (p->dur[ord[x - 1]] < p->dur[v] || (rev && p->dur[ord[x - 1]] == p->dur[v])); x--) ord[x] = ord[x - 1];
        ord[x] = v;
    }
    for (a = 0; a < m && b->n_clq < CONCERTO__BNB_CLIQUES && tried < 4 * CONCERTO__BNB_CLIQUES; a++) {
        int* cl = b->clq + b->clq_off[b->n_clq];
        int len = 0, dup = 0;
        tried++;
        cl[len++] = ord[a];
        for (c = 0; c < m; c++) {
            int y = ord[c], ok = 1;
            if (y == ord[a]) continue;
            for (x = 0; x < len && ok; x++) {
                int z = cl[x];
                ok = (b->dis[(size_t)z * nw + (y >> 6)] >> (y & 63) & 1) || (b->desc[(size_t)z * nw + (y >> 6)] >> (y & 63) & 1) ||
                     (b->desc[(size_t)y * nw + (z >> 6)] >> (z & 63) & 1);
            }
            if (ok) cl[len++] = y;
        }
        if (len < 3) continue;
        for (x = 1; x < len; x++) {   /* by id, to compare with the cliques kept */
            int v = cl[x], y;
            for (y = x; y > 0 && cl[y - 1] > v; y--) cl[y] = cl[y - 1];
            cl[y] = v;
        }
        for (q = 0; q < b->n_clq && !dup; q++)
            dup = b->clq_off[q + 1] - b->clq_off[q] == len &&
                  !memcmp(b->clq + b->clq_off[q], cl, (size_t)len * sizeof *cl);
        if (dup) continue;
        b->n_clq++;
        b->clq_off[b->n_clq] = b->clq_off[b->n_clq - 1] + len;
    }
}

/* The work a proof by shaving (cc__bnb_run's prove) may spend, counted
   in propagation steps (cc__bnb.work), so the same on every machine. */
#define CONCERTO__BNB_PROVE_WORK ((int64_t)1 << 23)

/* Branch and bound (cc__bnb_solve below) whose nodes propagate on
   unary-only problems of up to unary_nodes jobs (cc__bnb_solve:
   CONCERTO__BNB_UNARY_NODES_N). prove, on unary streams alone with an
   incumbent above the root bound: before the search, the root's windows
   against the incumbent's target (its makespan less a step) are shaved at
   their latest starts (cc__bnb_shave, up to CONCERTO__BNB_PROVE_WORK); a
   window that empties proves the incumbent optimal. */
static cc_result cc__bnb_run(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                             int64_t node_budget, double time_limit_s, int unary_nodes, int prove, cc__bnb_result* res) {
    cc__bnb bb, *b = &bb;
    int infeasible, i;
    cc__time lb;
    memset(b, 0, sizeof *b);
    res->makespan = have_incumbent ? cc__makespan(p, best) : CONCERTO__TIME_MAX;  /* even if the search cannot start */
    res->lower_bound = 0;
    res->proven = 0;
    res->nodes = 0;
    if (p->n <= 0) { res->makespan = 0; res->proven = 1; return CC_OK; }
    b->ctx = ctx; b->p = p; b->n = p->n; b->k = p->k; b->nw = (p->n + 63) / 64;
    b->best = best;
    b->budget = node_budget;
    b->work_unit = CONCERTO__BNB_WORK_PER_NODE;
    if (p->n > 32) {   /* (n/32)^2.5 by IEEE's exactly rounded operations, so the same on every machine */
        double r = (double)p->n / 32.0;
        b->work_unit = (int64_t)((double)b->work_unit * r * r * sqrt(r));
    }
    b->t_end = time_limit_s > 0 ? cc__now_s() + time_limit_s : 0;
    b->step = cc__bnb_step(p);
    /* the propagation (time-tabling, pairs, cliques, the destructive root
       bound) where some resource is cumulative; on unary resources alone (a
       training step's streams) compulsory parts rarely prune and make a
       node dearer for no better schedule, so there the streams' rules run
       instead (below) */
    b->tt = cc__prob_cumulative(p);
    if (!cc__bnb_alloc(b)) goto oom;
    infeasible = cc__bnb_structure(b);
    if (!cc__bnb_tails(b)) goto oom;
    cc__bnb_conflicts(b);
    if (!cc__bnb_streams(b)) goto oom;
    if (b->tt) cc__bnb_cliques(b, 0);
    else if (b->n_str > 0) b->tt = b->uo = 1;   /* streams alone: their rules */
    /* root bound (deadline windows only), then the incumbent's target */
    b->U = CONCERTO__TIME_MAX;
    cc__bnb_set_target(b);
    lb = infeasible ? CONCERTO__TIME_MAX : cc__bnb_bound(b, -CONCERTO__TIME_MAX, -CONCERTO__TIME_MAX);
    if (lb < CONCERTO__TIME_MAX) lb = cc__bnb_ceil(lb, b->step);
    if (have_incumbent) b->U = cc__makespan(p, best);
    /* the root bound shaves, but not in a search of a few hundred nodes
       (an odd-even window), where it would cost more than the search */
    b->shave = b->tt && !b->uo && (node_budget <= 0 || node_budget >= CONCERTO__BNB_SHAVE_MIN_NODES);
    b->no_energetic = node_budget > 0 && node_budget < CONCERTO__BNB_ENERGETIC_MIN_NODES;
    if (b->tt && lb < CONCERTO__TIME_MAX && b->U < CONCERTO__TIME_MAX) lb = cc__bnb_destructive(b, lb);
    if (prove && b->uo && lb < CONCERTO__TIME_MAX && lb < b->U && b->U < CONCERTO__TIME_MAX) {
        /* the proof: the incumbent's target refuted by shaving. On a
           training step's windows the destructive bound can stay below
           makespans that are optimal; every completion by the target
           needs each job to start by its latest start, and holding one
           there is refuted job after job along the window, until one
           window empties */
        cc__time r;
        cc__bnb_set_target(b);
        b->shave = 1; b->shave_sides = 2; b->shave_cap = CONCERTO__BNB_PROVE_WORK;
        r = cc__bnb_bound(b, -CONCERTO__TIME_MAX, -CONCERTO__TIME_MAX);
        b->shave = 0; b->shave_sides = 0; b->shave_cap = 0;
        if (r >= CONCERTO__TIME_MAX || cc__bnb_ceil(r, b->step) > b->target) lb = b->U;
    }
    if (b->shave && b->n_clq > 0 && lb < CONCERTO__TIME_MAX && lb < b->U && b->U < CONCERTO__TIME_MAX) {
        /* the same bound over the second clique cover (cc__bnb_cliques);
           the search keeps the first: both covers in every node cost
           more nodes than they save; at the root alone it costs one more
           destructive bound */
        cc__time lb2;
        cc__bnb_cliques(b, 1);
        lb2 = cc__bnb_destructive(b, lb);
        cc__bnb_cliques(b, 0);
        if (lb2 > lb) lb = lb2;
    }
    /* where some resource is cumulative, the destructive bound at the root
       shaves its windows (cc__bnb_shave); the nodes do not (shaving every
       node cuts the nodes of the hardest proofs, but each node then costs
       far more than that saves), except those of fewer than
       ctx->bnb_shave_depth placed jobs, a depth only tests set, whose
       search then starts from the root's shaved windows */
    if (b->shave) b->shave = ctx->bnb_shave_depth;
    if (b->shave > 0 && lb < CONCERTO__TIME_MAX && lb < b->U && b->U < CONCERTO__TIME_MAX) {
        /* the root's windows against the incumbent's target, shaved, become
           the heads and latest starts of every node's bound */
        cc__time r;
        cc__bnb_set_target(b);
        r = cc__bnb_bound(b, -CONCERTO__TIME_MAX, -CONCERTO__TIME_MAX);
        if (r >= CONCERTO__TIME_MAX || cc__bnb_ceil(r, b->step) > b->target) lb = b->U;
        else if (b->tt_ran)
            for (i = 0; i < p->n; i++) {
                b->hd[i] = cc__bnb_max(b->hd[i], b->h[i]);
                if (b->lt[i] < b->dl_ls[i]) b->dl_ls[i] = b->lt[i];
            }
    }
    if (b->uo && p->n > unary_nodes) b->tt = 0;   /* larger: the root bound alone */
    b->lazy = b->uo;
    cc__bnb_set_target(b);
    b->root_lb = lb;
    if (lb < CONCERTO__TIME_MAX && b->U > lb) cc__bnb_dfs(b, -CONCERTO__TIME_MAX, -1, -CONCERTO__TIME_MAX, (size_t)-1, 0);
    res->nodes = b->nodes;
    res->makespan = b->U;
    cc__bnb_free_all(b);
    if (b->oom) {
        res->lower_bound = lb < b->U ? lb : b->U;
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "branch and bound: out of memory after %lld nodes", (long long)res->nodes);
    }
    if (b->stop == 1) {  /* budget or time: only the root bound is proven */
        res->lower_bound = lb < b->U ? lb : b->U;
        res->proven = b->U <= lb;
        return CC_OK;
    }
    res->proven = 1;
    res->lower_bound = b->U;
    if (b->U >= CONCERTO__TIME_MAX)
        return CONCERTO__FAIL(ctx, CC_ERR_INFEASIBLE, "branch and bound: no schedule of the %d jobs meets the constraints", p->n);
    return CC_OK;
oom:
    cc__bnb_free_all(b);
    return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "branch and bound: out of memory for %d jobs", p->n);
}

static cc_result cc__bnb_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                               int64_t node_budget, double time_limit_s, cc__bnb_result* res) {
    return cc__bnb_run(ctx, p, best, have_incumbent, node_budget, time_limit_s, CONCERTO__BNB_UNARY_NODES_N, 0, res);
}

/* The root bound of best[]'s problem (unary streams alone) with the proof
   of its makespan by shaving (cc__bnb_run's prove): one node, no search. */
static cc_result cc__bnb_prove(cc_context* ctx, const cc__prob* p, cc__time* best, double time_limit_s, cc__bnb_result* res) {
    return cc__bnb_run(ctx, p, best, 1, 1, time_limit_s, CONCERTO__BNB_UNARY_NODES_N, 1, res);
}

#ifdef CONCERTO_USE_LPSOLVE

/* >>lpsolve: the optional lp_solve 5.5 backend, compiled when
   CONCERTO_USE_LPSOLVE is defined (Debian: liblpsolve55-dev; link
   -llpsolve55 -lcolamd -lm -ldl). cc__lp_solve has cc__bnb_solve's
   contract: best[] in and out, res->proven only for a proven optimum;
   CC_ERR_UNSUPPORTED when it is not compiled in, CC_ERR_INFEASIBLE /
   CC_ERR_TIMEOUT / CC_ERR_BACKEND reported as such, best[] never lost.

   Two ILP models of the same problem (a whole small graph, or one odd-even
   window with releases, deadlines and busy blocks from the fixed part):

   - disjunctive, when every resource is disjunctive (any two jobs that use it
     cannot overlap: unary streams). Continuous starts s_j, one ordering
     binary per pair of jobs that share a resource and are not already
     ordered by precedence or by their time windows, one binary per (job,
     busy interval it cannot overlap) choosing before/after, big-M rows.
     Exact in continuous time: no grid, so off-grain windows are no problem.
     The schedule returned is not lp_solve's numbers but the earliest starts
     implied by its orderings, computed in integer ticks (longest path), so
     rounding never leaks into it.
   - time-indexed otherwise (cumulative resources, PSPLIB): over the pulses
     x_{j,m} = "job j starts at origin + m * grain", assignment rows,
     disaggregated precedence rows, one capacity row per resource and grid
     cell (a cell's free capacity is the least over the cell, so off-grain
     busy blocks only make the model stricter), clique rows (jobs no two of
     which can overlap run one at a time), releases rounded up and deadlines
     down. The binaries are the steps y_{j,m} = "job j starts at m or
     earlier" (x_{j,m} = y_{j,m} - y_{j,m-1}, y_{j,m-1} <= y_{j,m}; tests
     also build it over the pulses themselves, cc__lp.pulse): a change of variables with
     the same relaxation, but lp_solve's branching on one splits a job's
     window in two rather than fixing or forbidding one start, and the
     precedence and capacity rows telescope to two entries a job, so it
     proves more than the pulses and raises the bound where it does not
     prove. Only the starts inside
     time windows propagated at the model's horizon (precedence and
     time-tabling, cc__lp_win_prop) get a binary. The least horizon
     propagation does not refute is a lower bound, raised to branch and
     bound's root bound where that is higher (its time-tabling, energetic
     reasoning and edge-finding by bisection below the incumbent,
     cc__lp_root_bound; or the bound the caller passes: a short branch and
     bound's before lp_solve alone); from it, feasibility models at rising
     horizons (each proven infeasible raises the bound; the first feasible
     one is optimal) share the time limit. A model whose releases, deadlines and busy times all lie
     on the grid is exact; otherwise it is a restriction and never claims a
     proof. Models above CONCERTO__LP_MAX_TI_COLS binaries are refused
     (CC_ERR_UNSUPPORTED).

   Both models minimise the makespan C with C <= incumbent - 1 tick (so any
   solution is a strict improvement; the incumbent is the warm start through
   this horizon, which also bounds every start window and every big-M).
   Every solution is checked against p exactly (precedence, release,
   deadline, capacity with the busy blocks, strict improvement) before it
   replaces best[]; one that fails is dropped.

   Status mapping (res->makespan is always the makespan of best[] on return,
   so best[] is never lost):
     OPTIMAL            the schedule; proven iff the model is exact
     SUBOPTIMAL, or a time-out / abort after an integer solution
                        the schedule if better, not proven, CC_OK
     INFEASIBLE         with an incumbent and an exact model: the incumbent
                        is optimal (proven, CC_OK); an inexact model: CC_OK,
                        not proven; without an incumbent: CC_ERR_INFEASIBLE
     time-out / abort without a solution
                        CC_ERR_TIMEOUT, best[] unchanged
     anything else      CC_ERR_BACKEND with lp_solve's status in the message
                        (name and number: "solve returned NUMFAILURE (5)");
                        so is make_lp returning NULL (lp_solve's own memory)
   The time limit is wall-clock per model (an abort callback checks it, so
   it may be below a second; set_timeout gets the ceiling as a backstop).
   lp_solve prints nothing (verbosity NEUTRAL). */

#define CONCERTO__LP_MAX_TI_COLS 40000   /* time-indexed model: binaries at most */

#define CONCERTO__LP_MAX_DISJ_COLS 60000 /* disjunctive model: columns at most */

/* Fault injection, for tests only: the two lp_solve calls whose failures the
   public API cannot provoke (make_lp: NULL; solve: NUMFAILURE, NOMEMORY ...)
   go through these pointers. The library never changes them. A test that
   compiles the implementation into its own translation unit
   (tests/test_lpsolve.c) swaps in fakes and puts these back. */
static make_lp_func* cc__lp_make_call = make_lp;

static solve_func* cc__lp_solve_call = solve;

/* The name of an lp_solve status (solve's return value). */
static const char* cc__lp_status_name(int ret) {
    switch (ret) {
        case UNKNOWNERROR: return "UNKNOWNERROR"; case DATAIGNORED: return "DATAIGNORED";
        case NOBFP: return "NOBFP"; case NOMEMORY: return "NOMEMORY"; case NOTRUN: return "NOTRUN";
        case OPTIMAL: return "OPTIMAL"; case SUBOPTIMAL: return "SUBOPTIMAL"; case INFEASIBLE: return "INFEASIBLE";
        case UNBOUNDED: return "UNBOUNDED"; case DEGENERATE: return "DEGENERATE"; case NUMFAILURE: return "NUMFAILURE";
        case USERABORT: return "USERABORT"; case TIMEOUT: return "TIMEOUT"; case RUNNING: return "RUNNING";
        case PRESOLVED: return "PRESOLVED"; case ACCURACYERROR: return "ACCURACYERROR";
        default: return "unknown status";
    }
}

typedef struct cc__lp {
    cc_context* ctx;
    const cc__prob* p;
    int n, k;
    int* topo;
    cc__time *es, *lf;        /* earliest start, latest finish (ticks) */
    cc__time lim;             /* latest finish allowed */
    int nbt;                  /* busy profile: u[i*k + r] on [bt[i], bt[i+1]) */
    cc__time* bt;
    int32_t* bu;
    /* forbidden intervals per job (the job alone does not fit the busy profile) */
    int* fo;                  /* [n+1] CSR */
    cc__time *fa, *fb;
    size_t f_cap_a, f_cap_b;
    double t_end;             /* wall clock */
    cc__time known_lb;        /* a lower bound from the caller; < 0: branch and bound's root bound */
    int pulse;                /* tests only: time-indexed models with pulse columns (0: step columns) */
} cc__lp;


static int __WINAPI cc__lp_abort(lprec* lp, void* handle) {
    (void)lp;
    return cc__now_s() > *(const double*)handle ? 1 : 0;
}

static cc__time cc__lp_floordiv(cc__time a, cc__time b) { cc__time q = a / b; if (q * b > a) q--; return q; }

static cc__time cc__lp_ceildiv(cc__time a, cc__time b) { cc__time q = a / b; if (q * b < a) q++; return q; }

static void cc__lp_free_all(cc__lp* L) {
    cc_context* ctx = L->ctx;
    cc__free(ctx, L->topo); cc__free(ctx, L->es); cc__free(ctx, L->lf); cc__free(ctx, L->bt); cc__free(ctx, L->bu);
    cc__free(ctx, L->fo); cc__free(ctx, L->fa); cc__free(ctx, L->fb);
}

/* Exact check of s against p: precedence, release, deadline, capacity with
   the busy blocks, every finish <= lim. 1 if valid; *mk the makespan. */
static int cc__lp_check(cc_context* ctx, const cc__prob* p, const cc__time* s, cc__time lim, cc__time* mk) {
    int n = p->n, k = p->k, i, j, e, r, ok = 1;
    cc__time m = -CONCERTO__TIME_MAX;
    int64_t* use = (int64_t*)cc__alloc(ctx, (size_t)(k > 0 ? k : 1) * 2 * sizeof(int64_t));
    if (!use) return 0;
    for (j = 0; j < n && ok; j++) {
        if (s[j] + p->dur[j] > m) m = s[j] + p->dur[j];
        if (s[j] + p->dur[j] > lim) ok = 0;
        if (p->release && s[j] < p->release[j]) ok = 0;
        if (p->deadline && p->deadline[j] < CONCERTO__TIME_MAX && s[j] + p->dur[j] > p->deadline[j]) ok = 0;
        for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++)
            if (s[p->succ[e]] < s[j] + p->dur[j]) ok = 0;
    }
    /* usage at every start (of a job or a busy block) where a job runs */
    for (i = 0; i < n + p->n_busy && ok; i++) {
        cc__time t = i < n ? s[i] : p->busy_start[i - n];
        int64_t* uj = use + (k > 0 ? k : 1);
        if (i < n && p->dur[i] == 0) continue;
        for (r = 0; r < k; r++) use[r] = uj[r] = 0;
        for (j = 0; j < n; j++)
            if (p->dur[j] > 0 && s[j] <= t && t < s[j] + p->dur[j])
                for (r = 0; r < k; r++) { use[r] += p->dem[(size_t)j * k + r]; uj[r] += p->dem[(size_t)j * k + r]; }
        for (j = 0; j < p->n_busy; j++)
            if (p->busy_start[j] <= t && t < p->busy_end[j])
                for (r = 0; r < k; r++) use[r] += p->busy_dem[(size_t)j * k + r];
        for (r = 0; r < k; r++)
            if (uj[r] > 0 && use[r] > p->cap[r]) ok = 0;
    }
    cc__free(ctx, use);
    *mk = n > 0 ? m : 0;
    return ok;
}

/* Topological order, earliest starts, latest finishes, the busy profile
   and each job's forbidden intervals. Returns CC_OK, CC_ERR_INFEASIBLE
   (a cycle or a job above a capacity: proven), or CC_ERR_OUT_OF_MEMORY. */
static cc_result cc__lp_prepare(cc__lp* L) {
    const cc__prob* p = L->p;
    int n = L->n, k = L->k, i, j, e, r, nt = 0, nf = 0;
    int* indeg;
    L->topo = (int*)cc__alloc(L->ctx, (size_t)n * sizeof(int));
    L->es = (cc__time*)cc__alloc(L->ctx, (size_t)n * sizeof(cc__time));
    L->lf = (cc__time*)cc__alloc(L->ctx, (size_t)n * sizeof(cc__time));
    L->fo = (int*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(int));
    L->bt = (cc__time*)cc__alloc(L->ctx, ((size_t)2 * (size_t)p->n_busy + 2) * sizeof(cc__time));
    L->bu = (int32_t*)cc__calloc(L->ctx, ((size_t)2 * (size_t)p->n_busy + 2) * (size_t)(k > 0 ? k : 1), sizeof(int32_t));
    indeg = (int*)cc__alloc(L->ctx, (size_t)n * sizeof(int));
    if (!L->topo || !L->es || !L->lf || !L->fo || !L->bt || !L->bu || !indeg) { cc__free(L->ctx, indeg); return CC_ERR_OUT_OF_MEMORY; }
    nt = cc__topo_order(n, p->succ_off, p->succ, NULL, NULL, indeg, L->topo);
    cc__free(L->ctx, indeg);
    if (nt < n) return CC_ERR_INFEASIBLE;
    for (j = 0; j < n; j++)
        for (r = 0; r < k; r++)
            if (p->dur[j] > 0 && p->dem[(size_t)j * k + r] > p->cap[r]) return CC_ERR_INFEASIBLE;
    (void)cc__prob_times(p, L->topo, L->es, NULL);
    for (i = n - 1; i >= 0; i--) {
        j = L->topo[i];
        L->lf[j] = L->lim;
        if (p->deadline && p->deadline[j] < L->lf[j]) L->lf[j] = p->deadline[j];
        for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++) {
            int q = p->succ[e];
            if (L->lf[q] - p->dur[q] < L->lf[j]) L->lf[j] = L->lf[q] - p->dur[q];
        }
    }
    /* busy profile: sorted distinct breakpoints */
    L->nbt = 0;
    for (i = 0; i < p->n_busy; i++) {
        if (p->busy_end[i] <= p->busy_start[i]) continue;
        L->bt[L->nbt++] = p->busy_start[i];
        L->bt[L->nbt++] = p->busy_end[i];
    }
    for (i = 1; i < L->nbt; i++) {   /* insertion sort: few breakpoints */
        cc__time t = L->bt[i];
        for (j = i - 1; j >= 0 && L->bt[j] > t; j--) L->bt[j + 1] = L->bt[j];
        L->bt[j + 1] = t;
    }
    for (i = 0, j = 0; i < L->nbt; i++) if (j == 0 || L->bt[j - 1] != L->bt[i]) L->bt[j++] = L->bt[i];
    L->nbt = j;
    for (i = 0; i + 1 < L->nbt; i++)
        for (j = 0; j < p->n_busy; j++)
            if (p->busy_start[j] <= L->bt[i] && L->bt[i] < p->busy_end[j])
                for (r = 0; r < k; r++) L->bu[(size_t)i * k + r] += p->busy_dem[(size_t)j * k + r];
    /* forbidden intervals: merged segments where the job alone does not fit */
    for (j = 0; j < n; j++) {
        L->fo[j] = nf;
        if (p->dur[j] <= 0) continue;
        for (i = 0; i + 1 < L->nbt; i++) {
            int bad = 0;
            for (r = 0; r < k && !bad; r++) {
                int32_t d = p->dem[(size_t)j * k + r];
                if (d > 0 && (int64_t)L->bu[(size_t)i * k + r] + d > p->cap[r]) bad = 1;
            }
            if (!bad) continue;
            if (nf > L->fo[j] && L->fb[nf - 1] == L->bt[i]) { L->fb[nf - 1] = L->bt[i + 1]; continue; }
            if (!CONCERTO__GROW(L->ctx, L->fa, L->f_cap_a, (size_t)nf + 1) ||
                !CONCERTO__GROW(L->ctx, L->fb, L->f_cap_b, (size_t)nf + 1)) return CC_ERR_OUT_OF_MEMORY;
            L->fa[nf] = L->bt[i]; L->fb[nf] = L->bt[i + 1];
            nf++;
        }
    }
    L->fo[n] = nf;
    return CC_OK;
}

/* 1 if every resource is disjunctive: any two jobs using it cannot overlap. */
static int cc__lp_disjunctive(const cc__prob* p) {
    int r, j, k = p->k;
    for (r = 0; r < k; r++) {
        int32_t m1 = INT32_MAX, m2 = INT32_MAX;
        for (j = 0; j < p->n; j++) {
            int32_t d = p->dem[(size_t)j * k + r];
            if (d <= 0 || p->dur[j] <= 0) continue;
            if (d < m1) { m2 = m1; m1 = d; } else if (d < m2) m2 = d;
        }
        if (m2 < INT32_MAX && (int64_t)m1 + m2 <= p->cap[r]) return 0;
    }
    return 1;
}

static int cc__lp_share(const cc__prob* p, int i, int j) {
    int r, k = p->k;
    if (p->dur[i] <= 0 || p->dur[j] <= 0) return 0;
    for (r = 0; r < k; r++)
        if (p->dem[(size_t)i * k + r] > 0 && p->dem[(size_t)j * k + r] > 0) return 1;
    return 0;
}

/* A growable row: (column, value) pairs. */
typedef struct cc__lp_row { int* col; REAL* val; size_t cap_c, cap_v; int len; } cc__lp_row;

static int cc__lp_put(cc_context* ctx, cc__lp_row* w, int col, double v) {
    if (!CONCERTO__GROW(ctx, w->col, w->cap_c, (size_t)w->len + 1) || !CONCERTO__GROW(ctx, w->val, w->cap_v, (size_t)w->len + 1))
        return 0;
    w->col[w->len] = col; w->val[w->len] = (REAL)v; w->len++;
    return 1;
}

/* Model state shared by the two builders. */
typedef struct cc__lp_model {
    lprec* lp;
    int exact;                /* 1: the model's optimum is the problem's */
    int disj;                 /* which model */
    int ncols;
    /* disjunctive: pairs (pi[q] before pj[q] when y_q = 1) and intervals */
    int *pi, *pj, *ycol;
    size_t cap_pi, cap_pj, cap_y;
    int npair;
    int *zjob, *zint, *zcol;  /* z = 1: job after interval */
    size_t cap_zj, cap_zi, cap_zc;
    int nz;
    int *fixa, *fixb;          /* pairs ordered without a binary: fixa before fixb */
    size_t cap_fa, cap_fb;
    int nfix;
    cc__time* lowb;           /* [n] extra lower bounds on starts (after intervals) */
    double scale;
    cc__time origin;
    /* time-indexed */
    int step;                 /* columns are y_i = "starts at cm[i] or earlier" (not cc__lp.pulse), not x_i */
    int* c0;                  /* [n+1] first column of job j (1-based), CSR */
    cc__time* cm;             /* grid index of each x column (0-based column - 1) */
    size_t cap_cm;
} cc__lp_model;

static void cc__lp_model_free(cc_context* ctx, cc__lp_model* m) {
    if (m->lp) delete_lp(m->lp);
    cc__free(ctx, m->pi); cc__free(ctx, m->pj); cc__free(ctx, m->ycol);
    cc__free(ctx, m->zjob); cc__free(ctx, m->zint); cc__free(ctx, m->zcol);
    cc__free(ctx, m->fixa); cc__free(ctx, m->fixb); cc__free(ctx, m->lowb);
    cc__free(ctx, m->c0); cc__free(ctx, m->cm);
}

/* A row over the time-indexed model's pulse columns x (each job's x_i =
   "starts at cm[i]"), rewritten in place over its step columns y where the
   model has them (m->step): x_i = y_i - y_{i-1} within the job's columns
   (y before the first is 0), equal columns merged, zeros dropped. A row
   over a range of one job's starts telescopes to its two ends: capacity
   and precedence rows become two entries a job. 0: out of memory. */
typedef struct cc__lp_ent { int col; REAL val; } cc__lp_ent;
static int cc__lp_ent_cmp(const void* a, const void* b) {
    int x = ((const cc__lp_ent*)a)->col, y = ((const cc__lp_ent*)b)->col;
    return (x > y) - (x < y);
}
static int cc__lp_step_row(cc_context* ctx, const cc__lp_model* m, int n, cc__lp_row* w) {
    cc__lp_ent* e;
    int i, len = 0, out = 0;
    if (!m->step || w->len == 0) return 1;
    e = (cc__lp_ent*)cc__alloc(ctx, 2 * (size_t)w->len * sizeof *e);
    if (!e) return 0;
    for (i = 0; i < w->len; i++) {
        int c = w->col[i] - 1, lo = 0, hi = n;   /* 0-based pulse column; its job by bisection */
        if (c >= m->c0[n]) { e[len].col = w->col[i]; e[len++].val = w->val[i]; continue; }   /* C */
        while (hi - lo > 1) { int mid = (lo + hi) / 2; if (m->c0[mid] <= c) lo = mid; else hi = mid; }
        e[len].col = c + 1; e[len++].val = w->val[i];
        if (c > m->c0[lo]) { e[len].col = c; e[len++].val = -w->val[i]; }
    }
    qsort(e, (size_t)len, sizeof *e, cc__lp_ent_cmp);
    /* a pulse column becomes up to two step columns: the row may grow */
    if (!CONCERTO__GROW(ctx, w->col, w->cap_c, (size_t)len) || !CONCERTO__GROW(ctx, w->val, w->cap_v, (size_t)len)) {
        cc__free(ctx, e);
        return 0;
    }
    for (i = 0; i < len; i++) {
        if (out > 0 && w->col[out - 1] == e[i].col) { w->val[out - 1] += e[i].val; continue; }
        if (out > 0 && w->val[out - 1] == 0) out--;
        w->col[out] = e[i].col; w->val[out++] = e[i].val;
    }
    if (out > 0 && w->val[out - 1] == 0) out--;
    w->len = out;
    cc__free(ctx, e);
    return 1;
}

#define CONCERTO__LP_ROW(type, rhs) do { \
        if (!cc__lp_step_row(L->ctx, m, L->n, w)) return CC_ERR_OUT_OF_MEMORY; \
        if (!add_constraintex(m->lp, w->len, w->val, w->col, (type), (REAL)(rhs))) return CC_ERR_BACKEND; \
        w->len = 0; \
    } while (0)

#define CONCERTO__LP_PUT(col, v) do { if (!cc__lp_put(L->ctx, w, (col), (v))) return CC_ERR_OUT_OF_MEMORY; } while (0)

/* A time in the disjunctive model's units. */
static double cc__lp_u(const cc__lp_model* m, cc__time t) { return (double)(t - m->origin) / m->scale; }

/* The pairs of jobs that share a resource and are not ordered by
   precedence: a binary each where both orders fit the time windows, a
   fixed order where one does. CC_ERR_INFEASIBLE if neither does. */
static cc_result cc__lp_disj_pairs(cc__lp* L, cc__lp_model* m) {
    const cc__prob* p = L->p;
    int n = L->n, i, j, nw = (n + 63) / 64;
    uint64_t* reach = (uint64_t*)cc__calloc(L->ctx, (size_t)n * (size_t)nw, sizeof(uint64_t));   /* successors, transitively */
    cc_result rc = CC_OK;
    if (!reach) return CC_ERR_OUT_OF_MEMORY;
    cc__reach(n, p->succ_off, p->succ, L->topo, (size_t)nw, reach);
    m->npair = 0; m->nfix = 0;
    for (i = 0; i < n && rc == CC_OK; i++)
        for (j = i + 1; j < n && rc == CC_OK; j++) {
            int ij, ji;
            if (!cc__lp_share(p, i, j)) continue;
            if ((reach[(size_t)i * nw + (j >> 6)] >> (j & 63) & 1) || (reach[(size_t)j * nw + (i >> 6)] >> (i & 63) & 1)) continue;
            ij = L->es[i] + p->dur[i] + p->dur[j] <= L->lf[j];   /* i before j possible */
            ji = L->es[j] + p->dur[j] + p->dur[i] <= L->lf[i];
            if (!ij && !ji) rc = CC_ERR_INFEASIBLE;
            else if (ij && ji) {
                if (!CONCERTO__GROW(L->ctx, m->pi, m->cap_pi, (size_t)m->npair + 1) ||
                    !CONCERTO__GROW(L->ctx, m->pj, m->cap_pj, (size_t)m->npair + 1)) rc = CC_ERR_OUT_OF_MEMORY;
                else { m->pi[m->npair] = i; m->pj[m->npair] = j; m->npair++; }
            } else {
                if (!CONCERTO__GROW(L->ctx, m->fixa, m->cap_fa, (size_t)m->nfix + 1) ||
                    !CONCERTO__GROW(L->ctx, m->fixb, m->cap_fb, (size_t)m->nfix + 1)) rc = CC_ERR_OUT_OF_MEMORY;
                else { m->fixa[m->nfix] = ij ? i : j; m->fixb[m->nfix] = ij ? j : i; m->nfix++; }
            }
        }
    cc__free(L->ctx, reach);
    return rc;
}

/* The busy intervals a job cannot overlap: a binary each where the job
   fits before and after it, a lower bound on its start where only after. */
static cc_result cc__lp_disj_intervals(cc__lp* L, cc__lp_model* m) {
    const cc__prob* p = L->p;
    int j, q;
    m->nz = 0;
    for (j = 0; j < L->n; j++)
        for (q = L->fo[j]; q < L->fo[j + 1]; q++) {
            cc__time a = L->fa[q], b = L->fb[q];
            int before, after;
            if (b <= L->es[j] || a >= L->lf[j]) continue;
            before = L->es[j] + p->dur[j] <= a;
            after = b + p->dur[j] <= L->lf[j];
            if (!before && !after) return CC_ERR_INFEASIBLE;
            if (before && after) {
                if (!CONCERTO__GROW(L->ctx, m->zjob, m->cap_zj, (size_t)m->nz + 1) ||
                    !CONCERTO__GROW(L->ctx, m->zint, m->cap_zi, (size_t)m->nz + 1)) return CC_ERR_OUT_OF_MEMORY;
                m->zjob[m->nz] = j; m->zint[m->nz] = q; m->nz++;
            } else if (after && b > m->lowb[j]) m->lowb[j] = b;
            /* only before: an upper bound on the start, in the columns */
        }
    return CC_OK;
}

/* The columns: s_j = 1..n with their bounds, C = n+1, then the pair and
   interval binaries; the objective min C. */
static cc_result cc__lp_disj_columns(cc__lp* L, cc__lp_model* m, cc__lp_row* w) {
    const cc__prob* p = L->p;
    int n = L->n, j, q, col;
    m->ncols = n + 1 + m->npair + m->nz;
    if (m->ncols > CONCERTO__LP_MAX_DISJ_COLS) return CC_ERR_UNSUPPORTED;
    m->ycol = (int*)cc__alloc(L->ctx, ((size_t)m->npair + 1) * sizeof(int));
    m->zcol = (int*)cc__alloc(L->ctx, ((size_t)m->nz + 1) * sizeof(int));
    if (!m->ycol || !m->zcol) return CC_ERR_OUT_OF_MEMORY;
    m->lp = cc__lp_make_call(0, m->ncols);
    if (!m->lp) return CC_ERR_BACKEND;
    set_verbose(m->lp, NEUTRAL);
    for (j = 0; j < n; j++) {
        cc__time ub = L->lf[j] - p->dur[j];
        for (q = L->fo[j]; q < L->fo[j + 1]; q++) {   /* before-only intervals */
            cc__time a = L->fa[q], b = L->fb[q];
            if (b <= L->es[j] || a >= L->lf[j]) continue;
            if (!(b + p->dur[j] <= L->lf[j]) && a - p->dur[j] < ub) ub = a - p->dur[j];
        }
        if (ub < m->lowb[j]) return CC_ERR_INFEASIBLE;
        set_lowbo(m->lp, j + 1, cc__lp_u(m, m->lowb[j]));
        set_upbo(m->lp, j + 1, cc__lp_u(m, ub));
    }
    set_lowbo(m->lp, n + 1, 0);
    set_upbo(m->lp, n + 1, cc__lp_u(m, L->lim));
    col = n + 2;
    for (q = 0; q < m->npair; q++) { m->ycol[q] = col; set_binary(m->lp, col, TRUE); col++; }
    for (q = 0; q < m->nz; q++) { m->zcol[q] = col; set_binary(m->lp, col, TRUE); col++; }
    CONCERTO__LP_PUT(n + 1, 1.0);
    if (!set_obj_fnex(m->lp, w->len, w->val, w->col)) return CC_ERR_BACKEND;
    w->len = 0;
    set_minim(m->lp);
    return CC_OK;
}

/* The rows: precedence, the makespan, fixed orders, the big-M pairs and
   the interval sides. */
static cc_result cc__lp_disj_rows(cc__lp* L, cc__lp_model* m, cc__lp_row* w) {
    const cc__prob* p = L->p;
    double S = m->scale;
    int n = L->n, j, e, q;
    set_add_rowmode(m->lp, TRUE);
    for (j = 0; j < n; j++) {
        for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++) {   /* s_succ - s_j >= d_j */
            CONCERTO__LP_PUT(p->succ[e] + 1, 1.0); CONCERTO__LP_PUT(j + 1, -1.0);
            CONCERTO__LP_ROW(GE, (double)p->dur[j] / S);
        }
        if (p->succ_off[j] == p->succ_off[j + 1]) {   /* C - s_j >= d_j */
            CONCERTO__LP_PUT(n + 1, 1.0); CONCERTO__LP_PUT(j + 1, -1.0);
            CONCERTO__LP_ROW(GE, (double)p->dur[j] / S);
        }
    }
    for (q = 0; q < m->nfix; q++) {
        CONCERTO__LP_PUT(m->fixb[q] + 1, 1.0); CONCERTO__LP_PUT(m->fixa[q] + 1, -1.0);
        CONCERTO__LP_ROW(GE, (double)p->dur[m->fixa[q]] / S);
    }
    for (q = 0; q < m->npair; q++) {
        int a = m->pi[q], b = m->pj[q];
        double M1 = (double)(L->lf[a] - L->es[b]) / S, M2 = (double)(L->lf[b] - L->es[a]) / S;
        /* y = 1: a before b:  s_a - s_b + M1 y <= M1 - d_a */
        CONCERTO__LP_PUT(a + 1, 1.0); CONCERTO__LP_PUT(b + 1, -1.0); CONCERTO__LP_PUT(m->ycol[q], M1);
        CONCERTO__LP_ROW(LE, M1 - (double)p->dur[a] / S);
        /* y = 0: b before a:  s_b - s_a - M2 y <= -d_b */
        CONCERTO__LP_PUT(b + 1, 1.0); CONCERTO__LP_PUT(a + 1, -1.0); CONCERTO__LP_PUT(m->ycol[q], -M2);
        CONCERTO__LP_ROW(LE, -(double)p->dur[b] / S);
    }
    for (q = 0; q < m->nz; q++) {
        int jj = m->zjob[q];
        cc__time a = L->fa[m->zint[q]], b = L->fb[m->zint[q]];
        /* z = 1: s >= b;  z = 0: s + d <= a */
        CONCERTO__LP_PUT(jj + 1, 1.0); CONCERTO__LP_PUT(m->zcol[q], -(double)(b - m->lowb[jj]) / S);
        CONCERTO__LP_ROW(GE, cc__lp_u(m, m->lowb[jj]));
        CONCERTO__LP_PUT(jj + 1, 1.0); CONCERTO__LP_PUT(m->zcol[q], -(double)(L->lf[jj] - a) / S);
        CONCERTO__LP_ROW(LE, cc__lp_u(m, a - p->dur[jj]));
    }
    set_add_rowmode(m->lp, FALSE);
    return CC_OK;
}

/* Disjunctive model. Returns CC_OK, CC_ERR_INFEASIBLE (proven by the
   windows alone), CC_ERR_UNSUPPORTED (too large), CC_ERR_OUT_OF_MEMORY or
   CC_ERR_BACKEND. */
static cc_result cc__lp_build_disj(cc__lp* L, cc__lp_model* m, cc__lp_row* w) {
    const cc__prob* p = L->p;
    int j;
    cc__time o = CONCERTO__TIME_MAX;
    cc_result rc;
    for (j = 0; j < L->n; j++) if (L->es[j] < o) o = L->es[j];
    m->origin = o;
    m->scale = (double)(p->grain > 0 ? p->grain : 1);
    if ((double)(L->lim - o) / m->scale > 1e7) { m->scale = (double)(L->lim - o) / 1e7; m->exact = 0; }   /* numerics first */
    m->lowb = (cc__time*)cc__alloc(L->ctx, (size_t)L->n * sizeof(cc__time));
    if (!m->lowb) return CC_ERR_OUT_OF_MEMORY;
    for (j = 0; j < L->n; j++) m->lowb[j] = L->es[j];
    if ((rc = cc__lp_disj_pairs(L, m)) != CC_OK) return rc;
    if ((rc = cc__lp_disj_intervals(L, m)) != CC_OK) return rc;
    if ((rc = cc__lp_disj_columns(L, m, w)) != CC_OK) return rc;
    return cc__lp_disj_rows(L, m, w);
}

/* The exact schedule implied by the disjunctive solution v (1-based
   columns at v[col - 1]): earliest starts in ticks under precedence, the
   chosen orders and the chosen sides of the busy intervals. 0 on a cycle
   or out of memory. */
static int cc__lp_extract_disj(cc__lp* L, cc__lp_model* m, const REAL* v, cc__time* s) {
    const cc__prob* p = L->p;
    int n = L->n, i, j, e, q, na = m->npair + m->nfix, nt = 0, ok = 1;
    int* from = (int*)cc__alloc(L->ctx, ((size_t)na + 1) * sizeof(int));
    int* to = (int*)cc__alloc(L->ctx, ((size_t)na + 1) * sizeof(int));
    int* off = (int*)cc__calloc(L->ctx, (size_t)n + 2, sizeof(int));
    int* adj = (int*)cc__alloc(L->ctx, ((size_t)na + 1) * sizeof(int));
    int* indeg = (int*)cc__calloc(L->ctx, (size_t)n + 1, sizeof(int));
    int* order = (int*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(int));
    if (!from || !to || !off || !adj || !indeg || !order) { ok = 0; goto done; }
    for (q = 0; q < m->npair; q++) {
        int y = v[m->ycol[q] - 1] > 0.5;
        from[q] = y ? m->pi[q] : m->pj[q]; to[q] = y ? m->pj[q] : m->pi[q];
    }
    for (q = 0; q < m->nfix; q++) { from[m->npair + q] = m->fixa[q]; to[m->npair + q] = m->fixb[q]; }
    for (q = 0; q < na; q++) off[from[q] + 1]++;
    for (j = 0; j < n; j++) off[j + 1] += off[j];
    for (q = 0; q < na; q++) adj[off[from[q]] + indeg[from[q]]++] = to[q];   /* indeg as a fill counter */
    for (j = 0; j < n; j++) s[j] = m->lowb[j];
    for (q = 0; q < m->nz; q++)
        if (v[m->zcol[q] - 1] > 0.5 && L->fb[m->zint[q]] > s[m->zjob[q]]) s[m->zjob[q]] = L->fb[m->zint[q]];
    /* longest paths over precedence and the chosen orders, in topological order */
    nt = cc__topo_order(n, p->succ_off, p->succ, off, adj, indeg, order);
    for (i = 0; i < nt; i++) {
        int u = order[i];
        cc__time f = s[u] + p->dur[u];
        for (e = p->succ_off[u]; e < p->succ_off[u + 1]; e++) if (f > s[p->succ[e]]) s[p->succ[e]] = f;
        for (e = off[u]; e < off[u + 1]; e++) if (f > s[adj[e]]) s[adj[e]] = f;
    }
    if (nt < n) ok = 0;
done:
    cc__free(L->ctx, from); cc__free(L->ctx, to); cc__free(L->ctx, off); cc__free(L->ctx, adj);
    cc__free(L->ctx, indeg); cc__free(L->ctx, order);
    return ok;
}

/* Time windows of the time-indexed model, by propagation on its grid
   (cells of one grain from the origin): every job j starts in a cell of
   [a_j, b_j] and runs D_j cells; every job finishes by the horizon h.
   Precedence moves a_j forward and b_j backward (the critical path both
   ways); time-tabling (Le Pape 1994; Baptiste, Le Pape and Nuijten,
   "Constraint-Based Scheduling", 2001, ch. 2) takes the compulsory part
   [b_j, a_j + D_j) of every job whose window is narrower than twice its
   duration into a profile, and moves a_j and b_j past the cells where the
   job no longer fits beside the others' compulsory parts and the busy
   blocks. Each rule removes only starts that no schedule of the model at
   horizon h uses, so an empty window proves the model infeasible at h,
   and the fixpoint at h is contained in the one at h + 1 (propagation is
   monotone): the least h that survives is a lower bound, found by
   bisection. The same profile removes the starts inside a window where
   the job does not fit (holes), so the model has fewer binaries and a
   tighter relaxation. */
typedef struct cc__lp_win {
    cc__time ncell;           /* cells in the profile: the largest horizon */
    cc__time *a, *b, *D;      /* [n] first and last start cell, duration in cells */
    int32_t* free_cap;        /* [ncell*k] capacity left by the busy blocks (least over the cell) */
    int32_t* cp;              /* [ncell*k] compulsory usage */
    cc__time o, g;            /* origin, grain */
    int on;                   /* 0: the profile is too large, precedence only */
} cc__lp_win;

#define CONCERTO__LP_MAX_PROFILE (1 << 22)   /* cells x resources of the time-tabling profile at most */

static void cc__lp_win_free(cc_context* ctx, cc__lp_win* W) {
    cc__free(ctx, W->a); cc__free(ctx, W->b); cc__free(ctx, W->D); cc__free(ctx, W->free_cap); cc__free(ctx, W->cp);
}

/* Allocates the windows for horizons up to hmax cells and the busy profile. */
static cc_result cc__lp_win_init(cc__lp* L, cc__lp_win* W, cc__time o, cc__time g, cc__time hmax) {
    const cc__prob* p = L->p;
    int n = L->n, k = L->k, i, j, r;
    memset(W, 0, sizeof *W);
    W->o = o; W->g = g;
    W->ncell = hmax > 0 ? hmax : 0;
    W->a = (cc__time*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(cc__time));
    W->b = (cc__time*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(cc__time));
    W->D = (cc__time*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(cc__time));
    if (!W->a || !W->b || !W->D) return CC_ERR_OUT_OF_MEMORY;
    for (j = 0; j < n; j++) W->D[j] = p->dur[j] / g;
    W->on = k > 0 && W->ncell > 0 && (double)W->ncell * (double)k <= (double)CONCERTO__LP_MAX_PROFILE;
    if (!W->on) return CC_OK;
    W->free_cap = (int32_t*)cc__alloc(L->ctx, (size_t)W->ncell * (size_t)k * sizeof(int32_t));
    W->cp = (int32_t*)cc__alloc(L->ctx, (size_t)W->ncell * (size_t)k * sizeof(int32_t));
    if (!W->free_cap || !W->cp) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < (int)W->ncell; i++) for (r = 0; r < k; r++) W->free_cap[(size_t)i * k + r] = p->cap[r];
    for (i = 0; i + 1 < L->nbt; i++) {
        cc__time c0 = cc__lp_floordiv(L->bt[i] - o, g), c1 = cc__lp_ceildiv(L->bt[i + 1] - o, g), c;
        if (c0 < 0) c0 = 0;
        if (c1 > W->ncell) c1 = W->ncell;
        for (r = 0; r < k; r++) {
            int32_t u = L->bu[(size_t)i * k + r], f = p->cap[r] - u;
            if (u <= 0) continue;
            if (f < 0) f = 0;
            for (c = c0; c < c1; c++) if (f < W->free_cap[(size_t)c * k + r]) W->free_cap[(size_t)c * k + r] = f;
        }
    }
    return CC_OK;
}

/* Adds (sign 1) or removes (-1) job j's compulsory part; 0 if adding it
   overloads a cell. */
static int cc__lp_win_cp(const cc__lp* L, cc__lp_win* W, int j, int sign) {
    int k = L->k, r, ok = 1;
    cc__time c;
    if (W->D[j] <= 0 || W->b[j] >= W->a[j] + W->D[j]) return 1;
    for (c = W->b[j]; c < W->a[j] + W->D[j]; c++)
        for (r = 0; r < k; r++) {
            int32_t d = L->p->dem[(size_t)j * k + r];
            if (d <= 0) continue;
            W->cp[(size_t)c * k + r] += sign * d;
            if (sign > 0 && W->cp[(size_t)c * k + r] > W->free_cap[(size_t)c * k + r]) ok = 0;
        }
    return ok;
}

/* 1 if job j cannot run in cell c beside the others' compulsory parts. */
static int cc__lp_win_clash(const cc__lp* L, const cc__lp_win* W, int j, cc__time c) {
    int k = L->k, r, own = c >= W->b[j] && c < W->a[j] + W->D[j];
    if (c < 0 || c >= W->ncell) return 1;
    for (r = 0; r < k; r++) {
        int32_t d = L->p->dem[(size_t)j * k + r];
        if (d > 0 && (int64_t)W->cp[(size_t)c * k + r] - (own ? d : 0) + d > W->free_cap[(size_t)c * k + r]) return 1;
    }
    return 0;
}

/* The fixpoint of precedence and time-tabling at horizon h (cells). 1 if
   every window is non-empty, 0 if the model is infeasible at h. */
static int cc__lp_win_prop(const cc__lp* L, cc__lp_win* W, cc__time h) {
    const cc__prob* p = L->p;
    int n = L->n, i, j, e, pass, changed = 1, tt = W->on && h <= W->ncell;
    cc__time o = W->o, g = W->g, c, t;
    for (j = 0; j < n; j++) {
        cc__time lfin = o + h * g;
        if (p->deadline && p->deadline[j] < lfin) lfin = p->deadline[j];
        W->a[j] = cc__lp_ceildiv(L->es[j] - o, g);
        W->b[j] = cc__lp_floordiv(lfin - p->dur[j] - o, g);
    }
    for (pass = 0; changed && pass < 4 * n + 16; pass++) {
        changed = 0;
        for (i = 0; i < n; i++) {   /* precedence, both ways */
            j = L->topo[i];
            for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++)
                if (W->a[j] + W->D[j] > W->a[p->succ[e]]) { W->a[p->succ[e]] = W->a[j] + W->D[j]; changed = 1; }
        }
        for (i = n - 1; i >= 0; i--) {
            j = L->topo[i];
            for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++)
                if (W->b[p->succ[e]] - W->D[j] < W->b[j]) { W->b[j] = W->b[p->succ[e]] - W->D[j]; changed = 1; }
        }
        for (j = 0; j < n; j++) if (W->a[j] > W->b[j]) return 0;
        if (!tt) break;
        memset(W->cp, 0, (size_t)W->ncell * (size_t)L->k * sizeof(int32_t));
        for (j = 0; j < n; j++) if (!cc__lp_win_cp(L, W, j, 1)) return 0;
        for (j = 0; j < n; j++) {   /* time-tabling */
            cc__time na, nb;
            if (W->D[j] <= 0) continue;
            for (t = W->a[j]; t <= W->b[j]; ) {   /* earliest start: past the last clash */
                cc__time bad = -1;
                for (c = t + W->D[j] - 1; c >= t; c--) if (cc__lp_win_clash(L, W, j, c)) { bad = c; break; }
                if (bad < 0) break;
                t = bad + 1;
            }
            na = t;
            if (na > W->b[j]) return 0;
            for (t = W->b[j]; t >= na; ) {        /* latest start: before the first clash */
                cc__time bad = -1;
                for (c = t; c < t + W->D[j]; c++) if (cc__lp_win_clash(L, W, j, c)) { bad = c; break; }
                if (bad < 0) break;
                t = bad - W->D[j];
            }
            nb = t;
            if (nb < na) return 0;
            if (na != W->a[j] || nb != W->b[j]) {
                (void)cc__lp_win_cp(L, W, j, -1);
                W->a[j] = na; W->b[j] = nb;
                if (!cc__lp_win_cp(L, W, j, 1)) return 0;
                changed = 1;
            }
        }
    }
    return 1;
}

/* Clique rows of the time-indexed model: a set K of jobs no two of which
   can overlap (on some resource their demands together exceed the
   capacity, or one precedes the other, transitively) runs at most one job
   in every cell t: sum over j in K of the x_{j,m} with m <= t < m + D_j is
   at most 1. The capacity rows allow fractions of such jobs side by side
   (three jobs of demand 6 on a capacity of 10 fill 10/18 each); the clique
   row does not, so the relaxation is tighter (the clique inequalities of
   the time-indexed RCPSP model; Christofides, Alvarez-Valdes and Tamarit,
   EJOR 29, 1987, derive the same kind of cut from incompatible sets). One
   greedy maximal clique per job (the others in decreasing order of their
   largest demand share), each kept once. */
static cc_result cc__lp_ti_cliques(cc__lp* L, cc__lp_model* m, cc__lp_row* w, int ncell) {
    const cc__prob* p = L->p;
    int n = L->n, k = L->k, nw = (n + 63) / 64, i, j, r, q, nk = 0, sz;
    uint64_t *inc = (uint64_t*)cc__calloc(L->ctx, (size_t)n * (size_t)nw, sizeof(uint64_t));   /* incompatible pairs */
    uint64_t *kept = (uint64_t*)cc__calloc(L->ctx, (size_t)n * (size_t)nw, sizeof(uint64_t));  /* the cliques kept */
    uint64_t *cur = (uint64_t*)cc__calloc(L->ctx, (size_t)nw, sizeof(uint64_t));
    int* ord = (int*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(int));
    double* share = (double*)cc__calloc(L->ctx, (size_t)n + 1, sizeof(double));
    cc_result rc = CC_OK;
    cc__time t;
    if (!inc || !kept || !cur || !ord || !share) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    /* precedence, transitively: inc[v] holds v's successors, then symmetrised */
    cc__reach(n, p->succ_off, p->succ, L->topo, (size_t)nw, inc);
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (inc[(size_t)i * nw + (j >> 6)] >> (j & 63) & 1) inc[(size_t)j * nw + (i >> 6)] |= (uint64_t)1 << (i & 63);
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            for (r = 0; r < k; r++)
                if ((int64_t)p->dem[(size_t)i * k + r] + p->dem[(size_t)j * k + r] > p->cap[r] && p->dem[(size_t)i * k + r] > 0 &&
                    p->dem[(size_t)j * k + r] > 0) {
                    inc[(size_t)i * nw + (j >> 6)] |= (uint64_t)1 << (j & 63);
                    inc[(size_t)j * nw + (i >> 6)] |= (uint64_t)1 << (i & 63);
                    break;
                }
    for (j = 0; j < n; j++) {
        ord[j] = j;
        for (r = 0; r < k; r++)
            if (p->cap[r] > 0 && (double)p->dem[(size_t)j * k + r] / p->cap[r] > share[j]) share[j] = (double)p->dem[(size_t)j * k + r] / p->cap[r];
    }
    for (i = 1; i < n; i++) {   /* insertion sort by share, descending; index breaks ties */
        int v = ord[i];
        for (j = i - 1; j >= 0 && share[ord[j]] < share[v]; j--) ord[j + 1] = ord[j];
        ord[j + 1] = v;
    }
    for (i = 0; i < n; i++) {
        int seed = ord[i], dup = 0;
        if (p->dur[seed] <= 0) continue;
        memset(cur, 0, (size_t)nw * sizeof(uint64_t));
        cur[seed >> 6] |= (uint64_t)1 << (seed & 63);
        sz = 1;
        for (q = 0; q < n; q++) {
            int v = ord[q], ok = 1, x;
            if (v == seed || p->dur[v] <= 0) continue;
            for (x = 0; x < nw && ok; x++) if ((cur[x] & ~inc[(size_t)v * nw + x]) != 0) ok = 0;
            if (ok) { cur[v >> 6] |= (uint64_t)1 << (v & 63); sz++; }
        }
        if (sz < 2) continue;
        for (q = 0; q < nk && !dup; q++) dup = !memcmp(kept + (size_t)q * nw, cur, (size_t)nw * sizeof(uint64_t));
        if (dup) continue;
        memcpy(kept + (size_t)nk * nw, cur, (size_t)nw * sizeof(uint64_t));
        nk++;
        for (t = 0; t < ncell; t++) {
            int jobs = 0;
            w->len = 0;
            for (j = 0; j < n; j++) {
                cc__time D = p->dur[j] / (p->grain > 0 ? p->grain : 1);
                int any = 0, a;
                if (!(cur[j >> 6] >> (j & 63) & 1)) continue;
                for (a = m->c0[j]; a < m->c0[j + 1]; a++)
                    if (m->cm[a] <= t && t < m->cm[a] + D) {
                        if (!cc__lp_put(L->ctx, w, a + 1, 1.0)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                        any = 1;
                    }
                jobs += any;
            }
            if (jobs < 2) continue;
            if (!cc__lp_step_row(L->ctx, m, n, w)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
            if (!add_constraintex(m->lp, w->len, w->val, w->col, LE, 1.0)) { rc = CC_ERR_BACKEND; goto done; }
        }
    }
done:
    w->len = 0;
    cc__free(L->ctx, inc); cc__free(L->ctx, kept); cc__free(L->ctx, cur); cc__free(L->ctx, ord); cc__free(L->ctx, share);
    return rc;
}

/* 1 if the time-indexed model on the grid o + m * g is exact: releases,
   deadlines and busy times all on the grid (durations always are). */
static int cc__lp_ti_exact(const cc__lp* L, cc__time o, cc__time g) {
    const cc__prob* p = L->p;
    int i, j;
    for (j = 0; j < L->n; j++) {
        if (p->release && (p->release[j] - o) % g) return 0;
        if (p->deadline && p->deadline[j] < CONCERTO__TIME_MAX && (p->deadline[j] - o) % g) return 0;
    }
    for (i = 0; i < L->nbt; i++) if ((L->bt[i] - o) % g) return 0;
    return 1;
}

/* Time-indexed model on the grid origin W->o + m * grain, with the starts
   of W's windows (propagated at the model's horizon) where the job fits
   the busy blocks and, where W has a profile, the others' compulsory
   parts; the makespan C >= c_lo cells. */
static cc_result cc__lp_build_ti(cc__lp* L, cc__lp_model* m, cc__lp_row* w, const cc__lp_win* W, cc__time c_lo) {
    const cc__prob* p = L->p;
    int n = L->n, k = L->k, i, j, e, q, r, col, ncell;
    cc__time o = W->o, g = W->g, mmax = 0, t;
    int32_t* avail = NULL;
    cc_result rq;
    m->origin = o; m->scale = (double)g;
    m->exact = cc__lp_ti_exact(L, o, g);
    m->c0 = (int*)cc__alloc(L->ctx, ((size_t)n + 1) * sizeof(int));
    if (!m->c0) return CC_ERR_OUT_OF_MEMORY;
    /* columns: allowed grid starts of every job */
    col = 0;
    for (j = 0; j < n; j++) {
        cc__time a = W->a[j], b = W->b[j], x, D = W->D[j], nclash = 0;
        int holes = W->on && D > 0 && b + D <= W->ncell;
        m->c0[j] = col;
        if (b - a > CONCERTO__LP_MAX_TI_COLS) return CC_ERR_UNSUPPORTED;
        /* nclash: cells of [x, x + D) where j clashes with the compulsory profile */
        if (holes) for (t = a; t < a + D; t++) nclash += cc__lp_win_clash(L, W, j, t);
        for (x = a; x <= b; x++) {
            cc__time s0 = o + x * g, s1 = s0 + p->dur[j];
            int bad = 0;
            if (holes && x > a) nclash += cc__lp_win_clash(L, W, j, x + D - 1) - cc__lp_win_clash(L, W, j, x - 1);
            if (nclash > 0) continue;
            for (q = L->fo[j]; q < L->fo[j + 1] && !bad; q++) if (L->fa[q] < s1 && s0 < L->fb[q]) bad = 1;
            if (bad) continue;
            if (col >= CONCERTO__LP_MAX_TI_COLS) return CC_ERR_UNSUPPORTED;
            if (!CONCERTO__GROW(L->ctx, m->cm, m->cap_cm, (size_t)col + 1)) return CC_ERR_OUT_OF_MEMORY;
            m->cm[col++] = x;
            if (x + D > mmax) mmax = x + D;
        }
        if (col == m->c0[j]) return CC_ERR_INFEASIBLE;   /* on the grid */
    }
    m->c0[n] = col;
    m->ncols = col + 1;
    ncell = (int)mmax;
    m->lp = cc__lp_make_call(0, m->ncols);
    if (!m->lp) return CC_ERR_BACKEND;
    set_verbose(m->lp, NEUTRAL);
    for (i = 1; i <= col; i++) set_binary(m->lp, i, TRUE);
    set_lowbo(m->lp, col + 1, (double)(c_lo < mmax ? c_lo : mmax));
    set_upbo(m->lp, col + 1, (double)mmax);
    CONCERTO__LP_PUT(col + 1, 1.0);
    if (!set_obj_fnex(m->lp, w->len, w->val, w->col)) return CC_ERR_BACKEND;
    w->len = 0;
    set_minim(m->lp);
    set_add_rowmode(m->lp, TRUE);
    m->step = !L->pulse;
    for (j = 0; j < n; j++) {
        if (m->step)   /* y_{i-1} <= y_i: started by one start, started by the next */
            for (i = m->c0[j] + 1; i < m->c0[j + 1]; i++) {
                CONCERTO__LP_PUT(i, 1.0);
                CONCERTO__LP_PUT(i + 1, -1.0);
                if (!add_constraintex(m->lp, w->len, w->val, w->col, LE, 0.0)) return CC_ERR_BACKEND;
                w->len = 0;
            }
        for (i = m->c0[j]; i < m->c0[j + 1]; i++) CONCERTO__LP_PUT(i + 1, 1.0);
        CONCERTO__LP_ROW(EQ, 1.0);
        for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++) {
            /* disaggregated (much tighter than sum m x_s - sum m x_j >= D_j):
               for every grid time t of the successor s2,
               sum_{m <= t} x_{s2,m} <= sum_{m <= t - D_j} x_{j,m} */
            int s2 = p->succ[e], a;
            cc__time D = p->dur[j] / g;
            for (q = m->c0[s2]; q < m->c0[s2 + 1]; q++) {
                cc__time tt = m->cm[q];
                int need = 0;
                for (a = m->c0[j]; a < m->c0[j + 1]; a++) if (m->cm[a] > tt - D) need = 1;
                if (!need) continue;   /* every start of j is early enough */
                for (i = m->c0[s2]; i <= q; i++) CONCERTO__LP_PUT(i + 1, 1.0);
                for (a = m->c0[j]; a < m->c0[j + 1]; a++) if (m->cm[a] <= tt - D) CONCERTO__LP_PUT(a + 1, -1.0);
                CONCERTO__LP_ROW(LE, 0.0);
            }
        }
        if (p->succ_off[j] == p->succ_off[j + 1]) {   /* C >= sum (m + D_j) x_j */
            CONCERTO__LP_PUT(col + 1, 1.0);
            for (i = m->c0[j]; i < m->c0[j + 1]; i++) CONCERTO__LP_PUT(i + 1, -(double)(m->cm[i] + p->dur[j] / g));
            CONCERTO__LP_ROW(GE, 0.0);
        }
    }
    /* capacity per resource and cell; free capacity: least over the cell */
    avail = (int32_t*)cc__alloc(L->ctx, (size_t)(ncell > 0 ? ncell : 1) * sizeof(int32_t));
    if (!avail) return CC_ERR_OUT_OF_MEMORY;
    for (r = 0; r < k; r++) {
        for (t = 0; t < ncell; t++) avail[t] = p->cap[r];
        for (i = 0; i + 1 < L->nbt; i++) {
            cc__time c0 = cc__lp_floordiv(L->bt[i] - o, g), c1 = cc__lp_ceildiv(L->bt[i + 1] - o, g), c;
            int32_t u = L->bu[(size_t)i * k + r];
            if (u <= 0) continue;
            if (c0 < 0) c0 = 0;
            if (c1 > ncell) c1 = ncell;
            for (c = c0; c < c1; c++) if (p->cap[r] - u < avail[c]) avail[c] = p->cap[r] - u;
        }
        for (t = 0; t < ncell; t++) {
            int64_t tot = 0;
            w->len = 0;
            for (j = 0; j < n; j++) {
                int32_t d = p->dem[(size_t)j * k + r];
                cc__time D = p->dur[j] / g;
                int any = 0;
                if (d <= 0 || D <= 0) continue;
                for (i = m->c0[j]; i < m->c0[j + 1]; i++)
                    if (m->cm[i] <= t && t < m->cm[i] + D) { CONCERTO__LP_PUT(i + 1, (double)d); any = 1; }
                if (any) tot += d;
            }
            if (tot <= (avail[t] > 0 ? avail[t] : 0)) { w->len = 0; continue; }
            if (!cc__lp_step_row(L->ctx, m, n, w)) { cc__free(L->ctx, avail); return CC_ERR_OUT_OF_MEMORY; }
            if (!add_constraintex(m->lp, w->len, w->val, w->col, LE, (REAL)(avail[t] > 0 ? avail[t] : 0))) {
                cc__free(L->ctx, avail);
                return CC_ERR_BACKEND;
            }
            w->len = 0;
        }
    }
    cc__free(L->ctx, avail);
    rq = cc__lp_ti_cliques(L, m, w, ncell);
    if (rq != CC_OK) return rq;
    set_add_rowmode(m->lp, FALSE);
    return CC_OK;
}

static int cc__lp_extract_ti(cc__lp* L, cc__lp_model* m, const REAL* v, cc__time* s) {
    int j, i;
    cc__time g = L->p->grain > 0 ? L->p->grain : 1;
    for (j = 0; j < L->n; j++) {
        int found = -1;
        for (i = m->c0[j]; i < m->c0[j + 1]; i++)
            if (v[i] - (m->step && i > m->c0[j] ? v[i - 1] : 0) > 0.5) { found = i; break; }
        if (found < 0) return 0;
        s[j] = m->origin + m->cm[found] * g;
    }
    return 1;
}

#undef CONCERTO__LP_ROW

#undef CONCERTO__LP_PUT

/* The latest finish a model allows: below the incumbent, or a safe
   horizon (every job alone after everything). */
static cc__time cc__lp_limit(const cc__prob* p, int have_incumbent, cc__time inc) {
    cc__time hi = 0;
    int j;
    if (have_incumbent) return inc - 1;
    for (j = 0; j < p->n; j++) if (p->release && p->release[j] > hi) hi = p->release[j];
    for (j = 0; j < p->n_busy; j++) if (p->busy_end[j] > hi) hi = p->busy_end[j];
    for (j = 0; j < p->n; j++) hi += p->dur[j];
    return hi;
}

/* The message of a model that could not be built (rc not CC_OK). */
static cc_result cc__lp_build_failed(cc_context* ctx, cc_result rc, const cc__lp_model* m, const char* what, int n) {
    switch (rc) {
        case CC_ERR_OUT_OF_MEMORY:
            return CONCERTO__FAIL(ctx, rc, "lp_solve backend: out of memory for %d jobs", n);
        case CC_ERR_UNSUPPORTED:
            return CONCERTO__FAIL(ctx, rc, "lp_solve backend: the %s model of %d jobs is too large", what, n);
        case CC_ERR_BACKEND:
            if (!m->lp)
                return CONCERTO__FAIL(ctx, rc, "lp_solve backend: make_lp(0, %d) returned NULL for the %s model of %d jobs "
                                      "(lp_solve out of memory)", m->ncols, what, n);
            return CONCERTO__FAIL(ctx, rc, "lp_solve backend: building the %s model of %d jobs failed", what, n);
        default:
            return rc;   /* CC_ERR_INFEASIBLE: the caller decides */
    }
}

/* Solves the built model and takes a schedule it finds, checked exactly,
   into best[] (res->makespan, res->proven). Returns CC_OK,
   CC_ERR_INFEASIBLE (nothing finishes by L->lim), CC_ERR_TIMEOUT or
   CC_ERR_BACKEND with a message, or CC_ERR_OUT_OF_MEMORY. */
static cc_result cc__lp_run(cc__lp* L, cc__lp_model* m, cc__time* best, int have_incumbent, double t_limit, cc__bnb_result* res) {
    cc_context* ctx = L->ctx;
    const char* what = m->disj ? "disjunctive" : "time-indexed";
    cc__time* s = (cc__time*)cc__alloc(ctx, (size_t)L->n * sizeof(cc__time));
    REAL* v = (REAL*)cc__alloc(ctx, ((size_t)m->ncols + 1) * sizeof(REAL));
    double left = L->t_end - cc__now_s();
    cc__time mk = 0;
    cc_result rc = CC_OK;
    int ret;
    if (!s || !v) { cc__free(ctx, s); cc__free(ctx, v); return CC_ERR_OUT_OF_MEMORY; }
    set_outputfile(m->lp, (char*)"");
    set_verbose(m->lp, NEUTRAL);
    put_abortfunc(m->lp, cc__lp_abort, &L->t_end);
    set_timeout(m->lp, (long)ceil(left > 0 ? left : 0) + 1);
    /* branch and bound: the ceiling branch first, and gap selection, which
       finds improved solutions of the time-indexed model where the default
       rule often finds none in its time; presolve, improve and scaling are
       lp_solve's defaults */
    set_bb_floorfirst(m->lp, BRANCH_CEILING);
    set_bb_rule(m->lp, NODE_GAPSELECT);
    ret = cc__lp_solve_call(m->lp);
    if (ret == OPTIMAL || ret == PRESOLVED || ret == SUBOPTIMAL ||
        ((ret == TIMEOUT || ret == USERABORT) && get_solutioncount(m->lp) > 0)) {
        if (!get_variables(m->lp, v))
            rc = CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "lp_solve: get_variables failed after solve returned %s (%d)",
                                cc__lp_status_name(ret), ret);
        else if (!(m->disj ? cc__lp_extract_disj(L, m, v, s) : cc__lp_extract_ti(L, m, v, s)) ||
                 !cc__lp_check(ctx, L->p, s, L->lim, &mk))
            rc = CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "lp_solve (%s model, %d jobs): the solution (status %s) fails the "
                                "exact check; the schedule is kept", what, L->n, cc__lp_status_name(ret));
        else {
            memcpy(best, s, (size_t)L->n * sizeof(cc__time));
            res->makespan = mk;
            if ((ret == OPTIMAL || ret == PRESOLVED) && m->exact) { res->proven = 1; res->lower_bound = mk; }
        }
    } else if (ret == INFEASIBLE) {
        rc = CC_ERR_INFEASIBLE;
    } else if (ret == TIMEOUT || ret == USERABORT) {
        rc = CONCERTO__FAIL(ctx, CC_ERR_TIMEOUT, "lp_solve (%s model, %d jobs, %d columns): no %s schedule within %g s",
                            what, L->n, m->ncols, have_incumbent ? "better" : "feasible", t_limit);
    } else {
        rc = CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "lp_solve (%s model, %d jobs, %d columns): solve returned %s (%d)", what, L->n,
                            m->ncols, cc__lp_status_name(ret), ret);
    }
    cc__free(ctx, s);
    cc__free(ctx, v);
    return rc;
}

/* The lower bound of branch and bound's root (cc__bnb_solve with a budget of
   one node, from a copy of the incumbent best[]): its propagation, reused
   rather than repeated here. CC_OK with *lb, or CC_ERR_OUT_OF_MEMORY with
   the message recorded. */
static cc_result cc__lp_root_bound(cc__lp* L, const cc__time* best, cc__time* lb) {
    cc__bnb_result br;
    cc__time* tmp = (cc__time*)cc__alloc(L->ctx, ((size_t)L->n + 1) * sizeof(cc__time));
    cc_result rc;
    if (!tmp) return CONCERTO__FAIL(L->ctx, CC_ERR_OUT_OF_MEMORY, "lp_solve backend: out of memory for %d jobs", L->n);
    memcpy(tmp, best, (size_t)L->n * sizeof(cc__time));
    rc = cc__bnb_solve(L->ctx, L->p, tmp, 1, 1, 0.0, &br);
    cc__free(L->ctx, tmp);
    *lb = rc == CC_OK ? br.lower_bound : 0;
    return rc == CC_ERR_OUT_OF_MEMORY ? rc : CC_OK;
}

/* The time-indexed model from the incumbent. The windows are propagated
   (cc__lp_win_prop) and the least horizon h_lb that propagation does not
   refute is a lower bound, raised to branch and bound's root bound. Then
   models at h_lb, h_lb + 1, ... each ask for any schedule finishing by h, with
   windows propagated at h: one proven infeasible raises the bound, the
   first feasible one is optimal. Models share the time limit (L->t_end).
   On return m holds the last model (freed by the caller), L->lim its
   horizon; the return codes are cc__lp_run's, CC_ERR_INFEASIBLE when
   nothing finishes by incumbent - 1 (m->exact: proven). */
static cc_result cc__lp_ti_solve(cc__lp* L, cc__lp_model* m, cc__lp_row* w, cc__time* best, int have_incumbent,
                                 double t_limit, cc__bnb_result* res) {
    const cc__prob* p = L->p;
    cc__lp_win W;
    cc__time o = CONCERTO__TIME_MAX, g = p->grain > 0 ? p->grain : 1, lo = 0, hi, h, top, x;
    int j, exact;
    cc_result rc = CC_OK;
    for (j = 0; j < L->n; j++) if (L->es[j] < o) o = L->es[j];
    for (j = 0; j < L->n; j++) {
        x = cc__lp_ceildiv(L->es[j] + p->dur[j] - o, g);
        if (x > lo) lo = x;
    }
    top = cc__lp_floordiv(L->lim - o, g);
    exact = cc__lp_ti_exact(L, o, g);
    m->exact = exact;
    if (have_incumbent && top >= lo) {
        /* branch and bound's root bound (time-tabling, energetic reasoning,
           edge-finding, by bisection below the incumbent), without a search:
           a bound of the problem, so of the model too (the model is the
           problem or a restriction of it) */
        cc__time b_lo = L->known_lb;
        if (b_lo < 0 && (rc = cc__lp_root_bound(L, best, &b_lo)) != CC_OK) return rc;
        x = cc__lp_ceildiv(b_lo - o, g);
        if (x > lo) lo = x;
    }
    if (top < lo) return CC_ERR_INFEASIBLE;
    if ((rc = cc__lp_win_init(L, &W, o, g, top)) != CC_OK) { cc__lp_win_free(L->ctx, &W); return cc__lp_build_failed(L->ctx, rc, m, "time-indexed", L->n); }
    /* the least horizon propagation does not refute (monotone: bisection) */
    if (!cc__lp_win_prop(L, &W, top)) { cc__lp_win_free(L->ctx, &W); return CC_ERR_INFEASIBLE; }
    hi = top;
    while (lo < hi) {
        h = lo + (hi - lo) / 2;
        if (cc__lp_win_prop(L, &W, h)) hi = h; else lo = h + 1;
    }
    if (exact && o + lo * g > res->lower_bound) res->lower_bound = o + lo * g;
    for (h = lo; h <= top; h++) {
        if (!cc__lp_win_prop(L, &W, h)) continue;   /* not for h >= lo (monotone); the windows at h */
        cc__lp_model_free(L->ctx, m);
        memset(m, 0, sizeof *m);
        L->lim = o + h * g;
        rc = cc__lp_build_ti(L, m, w, &W, h);
        if (rc == CC_OK) {
            rc = cc__lp_run(L, m, best, have_incumbent, t_limit, res);
            if (rc == CC_ERR_OUT_OF_MEMORY) rc = CONCERTO__FAIL(L->ctx, rc, "lp_solve backend: out of memory for %d jobs", L->n);
        } else if (rc != CC_ERR_INFEASIBLE) rc = cc__lp_build_failed(L->ctx, rc, m, "time-indexed", L->n);
        m->exact = exact;
        if (rc != CC_ERR_INFEASIBLE) break;
        if (exact && L->lim + g > res->lower_bound) res->lower_bound = L->lim + g;
        if (h < top && cc__now_s() > L->t_end) {
            rc = CONCERTO__FAIL(L->ctx, CC_ERR_TIMEOUT, "lp_solve (time-indexed models, %d jobs): no %s schedule within %g s "
                                "(none finishes by %lld)", L->n, have_incumbent ? "better" : "feasible", t_limit, (long long)L->lim);
            break;
        }
    }
    if (rc == CC_OK && exact && res->makespan <= res->lower_bound) res->proven = 1;
    cc__lp_win_free(L->ctx, &W);
    return rc;
}

static cc_result cc__lp_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                              double time_limit_s, cc__time known_lb, cc__bnb_result* res) {
    cc__lp L;
    cc__lp_model m;
    cc__lp_row w;
    cc_result rc;
    cc__time inc = have_incumbent ? cc__makespan(p, best) : CONCERTO__TIME_MAX;
    int n = p->n, j;
    double t_limit = time_limit_s > 0 ? time_limit_s : 10.0;
    const char* what;
    memset(&L, 0, sizeof L);
    memset(&m, 0, sizeof m);
    memset(&w, 0, sizeof w);
    res->makespan = inc;
    res->lower_bound = 0;
    res->proven = 0;
    res->nodes = 0;
    if (n <= 0) { res->makespan = 0; res->proven = 1; return CC_OK; }
    L.ctx = ctx; L.p = p; L.n = n; L.k = p->k;
    L.known_lb = known_lb;
    L.t_end = cc__now_s() + t_limit;
    L.lim = cc__lp_limit(p, have_incumbent, inc);
    m.exact = 1;
    rc = cc__lp_prepare(&L);
    for (j = 0; j < n && rc == CC_OK; j++) if (L.es[j] + p->dur[j] > L.lf[j]) rc = CC_ERR_INFEASIBLE;
    if (rc == CC_OK) m.disj = cc__lp_disjunctive(p);
    what = m.disj ? "disjunctive" : "time-indexed";
    if (rc == CC_OK && !m.disj) {
        rc = cc__lp_ti_solve(&L, &m, &w, best, have_incumbent, t_limit, res);
    } else if (rc == CC_OK) {
        rc = cc__lp_build_disj(&L, &m, &w);
        if (rc == CC_OK) {
            rc = cc__lp_run(&L, &m, best, have_incumbent, t_limit, res);
            if (rc == CC_ERR_OUT_OF_MEMORY) rc = CONCERTO__FAIL(ctx, rc, "lp_solve backend: out of memory for %d jobs", n);
        } else rc = cc__lp_build_failed(ctx, rc, &m, what, n);
    }
    if (rc == CC_ERR_INFEASIBLE) {
        /* no schedule finishing by lim: with an incumbent, it is optimal
           when the model is exact */
        if (have_incumbent) {
            rc = CC_OK;
            if (m.exact) { res->proven = 1; res->lower_bound = inc; }
        } else {
            res->proven = m.exact;
            rc = CONCERTO__FAIL(ctx, CC_ERR_INFEASIBLE, "lp_solve (%s model): no schedule of the %d jobs meets the constraints%s",
                                what, n, m.exact ? "" : " on the grid of the durations (not proven for off-grid times)");
        }
    }
    cc__lp_model_free(ctx, &m);
    cc__free(ctx, w.col);
    cc__free(ctx, w.val);
    cc__lp_free_all(&L);
    return rc;
}

#endif /* CONCERTO_USE_LPSOLVE */

#ifndef CONCERTO_USE_LPSOLVE

static cc_result cc__lp_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                              double time_limit_s, cc__time known_lb, cc__bnb_result* res) {
    (void)p; (void)best; (void)have_incumbent; (void)time_limit_s; (void)known_lb;
    res->makespan = CONCERTO__TIME_MAX; res->lower_bound = 0; res->proven = 0; res->nodes = 0;
    return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "lp_solve was not compiled in: define CONCERTO_USE_LPSOLVE and link "
                          "-llpsolve55 -lcolamd -lm -ldl (Debian: liblpsolve55-dev)");
}

#endif

/* >>exact
   One exact solve of a problem (a whole graph or an odd-even window) by
   branch and bound, lp_solve or both, and the record of how each run ended. */

/* Which exact solver, its budgets, who won, and which runs failed (the
   cc_sched_stats fields exact_status, exact_failures, exact_message). */
typedef struct cc__exact_cfg {
    cc_exact which;
    int64_t nodes;
    int64_t lp_warm_nodes;      /* LPSOLVE: branch and bound's nodes before lp_solve (0: none) */
    double time_limit_s;        /* branch and bound (0: none) */
    double lp_time_limit_s;     /* per lp_solve model */
    int64_t wins[2];            /* bnb, lp */
    int64_t failures;           /* solver runs that returned an error */
    cc_result status;           /* the first of those errors, CC_OK if none */
    char message[256];          /* its message */
    int inner;                  /* the windows of an inner search (>>oddeven): they nest no further */
    int unary_nodes;            /* branch and bound: every node propagates on unary-only problems of
                                   up to this many jobs (0: CONCERTO__BNB_UNARY_NODES_N) */
    int prove;                  /* odd-even windows: one left unproven tries the proof by shaving
                                   (cc__bnb_prove; cc_sched_tuning.window_prove) */
    int64_t windows, windows_proven;   /* odd-even windows: the cc_sched_stats fields */
    double window_gap_max, window_ms_max;
    cc_sched_window_fn on_window;      /* odd-even windows: cc_sched_tuning.on_window */
    void* on_window_user_data;
} cc__exact_cfg;

/* Counts a solver run that returned an error; the first one's code and
   message (the context's, which the solvers set on every error) are kept
   in cfg. Called before the odd-even windows put the caller's message back. */
static void cc__exact_note(cc_context* ctx, cc__exact_cfg* cfg, cc_result rc, const char* solver) {
    if (rc == CC_OK) return;
    cfg->failures++;
    if (cfg->status != CC_OK) return;
    cfg->status = rc;
    if (ctx->last_result == rc && ctx->last_error[0]) cc__copy_msg(cfg->message, sizeof cfg->message, ctx->last_error);
    else snprintf(cfg->message, sizeof cfg->message, "%s: %s", solver, cc_result_description(rc));
}

/* One exact solve by the configured solver(s). BOTH runs each from the
   incumbent and keeps the better (ties: branch and bound); a failure of
   one never loses the other's schedule or the incumbent. LPSOLVE with
   cfg->lp_warm_nodes runs that many nodes of branch and bound first (its
   proof ends the solve), then lp_solve from its schedule and bound. Every run that
   returns an error is noted in cfg (cc__exact_note). */
static cc_result cc__exact_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_inc, cc__exact_cfg* cfg,
                                 cc__bnb_result* res) {
    cc_result rb = CC_OK, rl = CC_OK;
    cc__bnb_result b, l;
    cc__time* alt;
    if (cfg->which != CC_EXACT_LPSOLVE) {
        rb = cc__bnb_run(ctx, p, best, have_inc, cfg->nodes, cfg->time_limit_s,
                         cfg->unary_nodes > 0 ? cfg->unary_nodes : CONCERTO__BNB_UNARY_NODES_N, 0, &b);
        cc__exact_note(ctx, cfg, rb, "branch and bound");
        if (cfg->which != CC_EXACT_BOTH) {
            *res = b;
            if (rb == CC_OK && b.makespan < CONCERTO__TIME_MAX) cfg->wins[0]++;
            return rb;
        }
    }
    if (cfg->which == CC_EXACT_LPSOLVE) {
        int warm = 0;
        if (cfg->lp_warm_nodes > 0) {
            /* a short branch and bound first: its search finds the schedules
               that lp_solve's models do not reach from above in their time;
               a proof ends it */
            rb = cc__bnb_solve(ctx, p, best, have_inc, cfg->lp_warm_nodes, cfg->time_limit_s, &b);
            cc__exact_note(ctx, cfg, rb, "branch and bound");
            if (rb == CC_ERR_OUT_OF_MEMORY) { *res = b; return rb; }
            if (rb == CC_OK && b.proven) { *res = b; cfg->wins[0]++; return rb; }
            warm = rb == CC_OK && b.makespan < CONCERTO__TIME_MAX;
        }
        rl = cc__lp_solve(ctx, p, best, have_inc || warm, cfg->lp_time_limit_s, warm ? b.lower_bound : -1, &l);
        cc__exact_note(ctx, cfg, rl, "lp_solve");
        *res = l;
        if (warm) {
            if (b.lower_bound > res->lower_bound) res->lower_bound = b.lower_bound;
            if (res->makespan <= res->lower_bound) res->proven = 1;
            res->nodes = b.nodes;
        }
        if (rl == CC_OK && l.makespan < CONCERTO__TIME_MAX) cfg->wins[1]++;
        return rl;
    }
    /* both: lp_solve from the same incumbent into a copy */
    alt = (cc__time*)cc__alloc(ctx, ((size_t)p->n + 1) * sizeof(cc__time));
    if (!alt) { *res = b; return rb == CC_OK ? CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "exact solve: out of memory") : rb; }
    if (rb == CC_OK || b.makespan < CONCERTO__TIME_MAX) {
        /* best[] holds branch and bound's answer; lp_solve starts from the
           same incumbent branch and bound started from when there was one */
        memcpy(alt, best, (size_t)p->n * sizeof(cc__time));
    }
    /* lp_solve's own models here (known bound 0), beside branch and bound's */
    rl = cc__lp_solve(ctx, p, alt, have_inc || b.makespan < CONCERTO__TIME_MAX, cfg->lp_time_limit_s, 0, &l);
    cc__exact_note(ctx, cfg, rl, "lp_solve");
    *res = b;
    if (rl == CC_OK && l.makespan < b.makespan) {
        memcpy(best, alt, (size_t)p->n * sizeof(cc__time));
        res->makespan = l.makespan;
        cfg->wins[1]++;
    } else if (b.makespan < CONCERTO__TIME_MAX) cfg->wins[0]++;
    if (rl == CC_OK) {
        if (l.lower_bound > res->lower_bound) res->lower_bound = l.lower_bound;
        if (l.proven && l.makespan <= res->makespan) res->proven = 1;
    }
    res->nodes = b.nodes;
    cc__free(ctx, alt);
    return rb;
}

/* Adds the failures of one exact phase (whole graph or windows) to the
   stats' exact_* fields; the first failure's code and message stay. */
static void cc__exact_report(cc_sched_stats* out, const cc__exact_cfg* cfg) {
    out->exact_failures += cfg->failures;
    out->n_windows += cfg->windows;
    out->n_windows_proven += cfg->windows_proven;
    if (cfg->window_gap_max > out->window_gap_max) out->window_gap_max = cfg->window_gap_max;
    if (cfg->window_ms_max > out->window_ms_max) out->window_ms_max = cfg->window_ms_max;
    if (out->exact_status == CC_OK && cfg->status != CC_OK) {
        out->exact_status = cfg->status;
        cc__copy_msg(out->exact_message, sizeof out->exact_message, cfg->message);
    }
}

/* >>oddeven
   Windows of 2b consecutive jobs of the current order (by start time) are
   re-solved exactly with everything outside them fixed: releases from fixed
   predecessors, deadlines from fixed successors, and the fixed jobs'
   occupation of the resources. A window is never placed before its current
   earliest start and its incumbent is its current placement, so no window
   makes the schedule worse. After each round the schedule is left-justified
   in start order (never worse either), which passes the gains on. Rounds
   alternate the window offset by one block (odd-even). */

/* The inner search of large windows (cc__oe_inner): windows of 2b jobs
   above CONCERTO__OE_INNER_MIN, blocks CONCERTO__OE_INNER_B0 to _BMAX. */
#define CONCERTO__OE_INNER_MIN 128
#define CONCERTO__OE_INNER_B0 8
#define CONCERTO__OE_INNER_BMAX 32
#define CONCERTO__OE_INNER_PASSES 4
/* A round of large windows can end on a shorter window (down to 2 _B0 + 1
   jobs). One of up to this many jobs that its search leaves unproven tries
   the proof by shaving whatever window_prove says (cc__bnb_prove): such
   short last windows of large rounds are where a training step's search
   leaves its largest gaps, and shaving proves them cheaply. */
#define CONCERTO__OE_PROVE_SMALL 128
/* The inner windows of a large window whose list schedules all miss a
   deadline (cc__oe_window_solve) propagate in every node up to this many
   jobs: all of them (2 _BMAX) */
#define CONCERTO__OE_INNER_PROP_N (2 * CONCERTO__OE_INNER_BMAX)

typedef struct cc__window {
    int cap;                    /* jobs */
    int m;                      /* jobs in the current window */
    int* glob;                  /* local -> global */
    int* loc;                   /* global -> local or -1 ([n] of the whole problem) */
    cc__time *dur, *rel, *dl, *start;
    cc__time t0, t1;            /* the window's current span */
    int32_t* dem;
    int *pred_off, *pred, *succ_off, *succ, *fill;
    size_t pred_cap, succ_cap;
    int nb;                     /* busy blocks: jobs outside running in [t0, t1) */
    cc__time *bs, *be; int32_t* bd;
    size_t bs_cap, be_cap, bd_cap;
} cc__window;

/* The state of the odd-even improvement. */
typedef struct cc__oe {
    cc_context* ctx;
    cc__heur* h;
    const cc__prob* p;
    cc__time* s;                /* the schedule being improved */
    cc__window w;
    int* order;                 /* jobs by start at the round's beginning */
    cc__time* s0;               /* starts at the round's beginning */
    int* moved;                 /* round + 1 if the job moved in this round */
    int* moved_list;            /* those jobs, pruned as windows pass them */
    size_t moved_cap;
    int n_moved, round;
    int inner;                  /* windows of 2b > CONCERTO__OE_INNER_MIN jobs: the inner search */
    cc__time maxdur;
    cc__exact_cfg* cfg;
    int64_t nodes;
    double t_end;               /* time limit (0: none) */
} cc__oe;

static cc_result cc__oddeven(cc_context* ctx, cc__heur* h, cc__time* s, cc__time* mk_io, int b, int rounds,
                             cc__exact_cfg* cfg, double t_end, int64_t* nodes);

static void cc__oe_free(cc__oe* o) {
    cc_context* ctx = o->ctx;
    cc__window* w = &o->w;
    cc__free(ctx, o->order); cc__free(ctx, o->s0); cc__free(ctx, o->moved); cc__free(ctx, o->moved_list);
    cc__free(ctx, w->glob); cc__free(ctx, w->loc); cc__free(ctx, w->dur); cc__free(ctx, w->rel);
    cc__free(ctx, w->dl); cc__free(ctx, w->start); cc__free(ctx, w->dem);
    cc__free(ctx, w->pred_off); cc__free(ctx, w->pred); cc__free(ctx, w->succ_off); cc__free(ctx, w->succ);
    cc__free(ctx, w->fill); cc__free(ctx, w->bs); cc__free(ctx, w->be); cc__free(ctx, w->bd);
}

static int cc__oe_init(cc__oe* o, cc_context* ctx, cc__heur* h, cc__time* s, int b, cc__exact_cfg* cfg) {
    const cc__prob* p = h->p;
    cc__window* w = &o->w;
    size_t n1 = (size_t)p->n + 1, wsz = 2 * (size_t)b;
    int i;
    memset(o, 0, sizeof *o);
    o->ctx = ctx; o->h = h; o->p = p; o->s = s; o->cfg = cfg;
    o->inner = 2 * b > CONCERTO__OE_INNER_MIN && !cfg->inner;
    o->order = (int*)cc__alloc(ctx, n1 * sizeof(int));
    o->s0 = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    o->moved = (int*)cc__calloc(ctx, n1, sizeof(int));
    w->cap = (int)wsz;
    w->glob = (int*)cc__alloc(ctx, wsz * sizeof(int));
    w->loc = (int*)cc__alloc(ctx, n1 * sizeof(int));
    w->dur = (cc__time*)cc__alloc(ctx, wsz * sizeof(cc__time));
    w->rel = (cc__time*)cc__alloc(ctx, wsz * sizeof(cc__time));
    w->dl = (cc__time*)cc__alloc(ctx, wsz * sizeof(cc__time));
    w->start = (cc__time*)cc__alloc(ctx, wsz * sizeof(cc__time));
    w->dem = (int32_t*)cc__alloc(ctx, wsz * (size_t)(p->k ? p->k : 1) * sizeof(int32_t));
    w->pred_off = (int*)cc__alloc(ctx, (wsz + 1) * sizeof(int));
    w->succ_off = (int*)cc__alloc(ctx, (wsz + 1) * sizeof(int));
    w->fill = (int*)cc__alloc(ctx, (wsz + 1) * sizeof(int));
    if (!o->order || !o->s0 || !o->moved || !w->glob || !w->loc || !w->dur || !w->rel || !w->dl || !w->start || !w->dem ||
        !w->pred_off || !w->succ_off || !w->fill)
        return 0;
    for (i = 0; i < p->n; i++) { w->loc[i] = -1; if (p->dur[i] > o->maxdur) o->maxdur = p->dur[i]; }
    return 1;
}

/* Window jobs order[ws .. ws + m): their durations and demands, the
   precedence among them, releases from the fixed predecessors, deadlines
   from the fixed successors, and their current placement. */
static int cc__oe_window_jobs(cc__oe* o, int ws, int m) {
    const cc__prob* p = o->p;
    cc__window* w = &o->w;
    const cc__time* s = o->s;
    int i, e, np = 0, k = p->k;
    w->m = m; w->t0 = CONCERTO__TIME_MAX; w->t1 = 0;
    for (i = 0; i < m; i++) {
        int v = o->order[ws + i];
        w->glob[i] = v; w->loc[v] = i;
        if (s[v] < w->t0) w->t0 = s[v];
        if (s[v] + p->dur[v] > w->t1) w->t1 = s[v] + p->dur[v];
    }
    for (i = 0; i < m; i++) {
        int v = w->glob[i];
        cc__time rel = w->t0, dl = CONCERTO__TIME_MAX;
        /* the problem's own release and deadline (an inner search's) */
        if (p->release && p->release[v] > rel) rel = p->release[v];
        if (p->deadline) dl = p->deadline[v];
        w->dur[i] = p->dur[v];
        memcpy(w->dem + (size_t)i * k, p->dem + (size_t)v * k, (size_t)k * sizeof(int32_t));
        w->pred_off[i] = np;
        for (e = p->pred_off[v]; e < p->pred_off[v + 1]; e++) {
            int q = p->pred[e];
            if (w->loc[q] >= 0) {
                if (!CONCERTO__GROW(o->ctx, w->pred, w->pred_cap, (size_t)np + 1)) return 0;
                w->pred[np++] = w->loc[q];
            } else if (s[q] + p->dur[q] > rel) rel = s[q] + p->dur[q];
        }
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) {
            int q = p->succ[e];
            if (w->loc[q] < 0 && s[q] < dl) dl = s[q];
        }
        w->rel[i] = rel; w->dl[i] = dl; w->start[i] = s[v];
    }
    w->pred_off[m] = np;
    /* successors: the transposed CSR */
    for (i = 0; i <= m; i++) w->succ_off[i] = 0;
    for (i = 0; i < np; i++) w->succ_off[w->pred[i] + 1]++;
    for (i = 0; i < m; i++) w->succ_off[i + 1] += w->succ_off[i];
    if (!CONCERTO__GROW(o->ctx, w->succ, w->succ_cap, (size_t)np + 1)) return 0;
    for (i = 0; i <= m; i++) w->fill[i] = w->succ_off[i];
    for (i = 0; i < m; i++)
        for (e = w->pred_off[i]; e < w->pred_off[i + 1]; e++) w->succ[w->fill[w->pred[e]]++] = i;
    return 1;
}

/* Adds a busy block [bs, be) of demands dem to the window. */
static int cc__window_add_busy(cc_context* ctx, cc__window* w, int k, cc__time bs, cc__time be, const int32_t* dem) {
    if (!CONCERTO__GROW(ctx, w->bs, w->bs_cap, (size_t)w->nb + 1) || !CONCERTO__GROW(ctx, w->be, w->be_cap, (size_t)w->nb + 1) ||
        !CONCERTO__GROW(ctx, w->bd, w->bd_cap, ((size_t)w->nb + 1) * (size_t)k))
        return 0;
    w->bs[w->nb] = bs; w->be[w->nb] = be;
    memcpy(w->bd + (size_t)w->nb * k, dem, (size_t)k * sizeof(int32_t));
    w->nb++;
    return 1;
}

/* The fixed occupation: jobs outside the window running in [t0, t1).
   Unmoved jobs are found by their start at the round's beginning (s0,
   sorted along order); jobs moved earlier in this round are on the moved
   list (pruned once they end before t0, since t0 grows along the round),
   then the problem's own busy blocks (an inner search's). */
static int cc__oe_window_busy(cc__oe* o) {
    const cc__prob* p = o->p;
    cc__window* w = &o->w;
    const cc__time* s = o->s;
    int n = p->n, a = 0, z = n, k = p->k, hi, mw = 0;
    cc__time from = w->t0 - o->maxdur;
    w->nb = 0;
    while (a < z) { int mid = (a + z) / 2; if (o->s0[o->order[mid]] < from) a = mid + 1; else z = mid; }
    for (hi = a; hi <= n + o->n_moved; hi++) {
        int v;
        if (hi < n) {
            v = o->order[hi];
            if (o->s0[v] >= w->t1) { hi = n - 1; continue; }   /* jump to the moved list */
            if (o->moved[v] == o->round + 1) continue;
        } else if (hi == n) continue;
        else {
            v = o->moved_list[hi - n - 1];
            if (s[v] + p->dur[v] <= w->t0) continue;            /* dropped below */
            o->moved_list[mw++] = v;
        }
        if (w->loc[v] >= 0 || p->dur[v] == 0 || s[v] + p->dur[v] <= w->t0 || s[v] >= w->t1) continue;
        if (!cc__window_add_busy(o->ctx, w, k, s[v], s[v] + p->dur[v], p->dem + (size_t)v * k)) return 0;
    }
    o->n_moved = mw;
    /* the problem's own fixed occupation (an inner search's) */
    for (hi = 0; hi < p->n_busy; hi++) {
        if (p->busy_end[hi] <= w->t0 || p->busy_start[hi] >= w->t1) continue;
        if (!cc__window_add_busy(o->ctx, w, k, p->busy_start[hi], p->busy_end[hi], p->busy_dem + (size_t)hi * k)) return 0;
    }
    return 1;
}

/* Counts a window's solve in cfg: proven or its gap (for a run that ended
   normally), and its time in ms. The window's jobs start at or after t0. */
static void cc__oe_window_note(cc__exact_cfg* cfg, cc_result rc, const cc__bnb_result* br, cc__time t0, double ms) {
    cfg->windows++;
    if (ms > cfg->window_ms_max) cfg->window_ms_max = ms;
    if (rc != CC_OK) return;
    if (br->proven) { cfg->windows_proven++; return; }
    if (br->makespan > t0 && br->makespan < CONCERTO__TIME_MAX) {
        cc__time lb = br->lower_bound > t0 ? br->lower_bound : t0;
        double gap = lb >= br->makespan ? 0.0 : (double)(br->makespan - lb) / (double)(br->makespan - t0);
        if (gap > cfg->window_gap_max) cfg->window_gap_max = gap;
    }
}

/* The next block size of the deepening: 1.5 times a power of two, else
   4/3 times (8, 12, 16, 24, 32, 48, 64, ...); always larger. */
static int cc__oe_next_block(int b) {
    int next = (b & (b - 1)) == 0 ? b + b / 2 : b + b / 3;
    return next > b ? next : b + 1;
}

#define CONCERTO__LNS_ROUNDS 4   /* rounds a block size in a neighbourhood search */

/* Odd-even windows over s (makespan *mk_io) with the block sizes from b0
   to b_max (cc__oe_next_block), each for up to `rounds` rounds; the sizes
   again while a pass shortens the schedule, at most `passes` passes; stops
   at lb and at t_end (0: none). Never worse. */
static cc_result cc__oe_passes(cc_context* ctx, cc__heur* h, cc__time* s, cc__time* mk_io, cc__time lb, int b0, int b_max,
                               int rounds, int passes, cc__exact_cfg* cfg, double t_end, int64_t* nodes) {
    cc_result rc = CC_OK;
    int b, pass;
    for (pass = 0; rc == CC_OK && pass < passes; pass++) {
        cc__time before = *mk_io;
        for (b = b0; rc == CC_OK && b <= b_max; b = cc__oe_next_block(b)) {
            if (*mk_io <= lb || (t_end > 0 && cc__now_s() > t_end) || cc__heur_cancelled(h)) break;
            rc = cc__oddeven(ctx, h, s, mk_io, b, rounds, cfg, t_end, nodes);
        }
        if (*mk_io >= before) break;
    }
    return rc;
}

/* Windows of 2b > CONCERTO__OE_INNER_MIN jobs (and a shorter last window
   of such a round, above 2 CONCERTO__OE_INNER_B0 jobs) are too large for the
   branch and bound's search to move its incumbent (more nodes end at the
   same placement, though its root bound is tight), so it is first replaced by the best
   of its list schedules where that ends earlier (cc__oe_window_lists),
   then improved by odd-even
   windows of its own, blocks of CONCERTO__OE_INNER_B0 to _BMAX jobs with
   the window's nodes each, passes while they gain, until they reach the
   window's root bound (branch and bound with one node, run first: a
   proof where they meet); if they stay above it, the branch and bound
   searches from their placement. The inner windows use branch and bound
   whatever the exact solver, and nest no further (cc__exact_cfg.inner).
   Never worse: each inner window keeps its incumbent. unary_nodes: the inner windows' branch and
   bound propagates in every node of a unary-only window up to this many
   jobs (0: CONCERTO__BNB_UNARY_NODES_N), for a window whose deadlines no
   list schedule met (cc__oe_window_solve). */
static cc_result cc__oe_inner(cc__oe* o, const cc__prob* sub, cc__time* start, cc__time lb, int b0, int b_max,
                              int unary_nodes) {
    cc_context* ctx = o->ctx;
    cc__heur hs;
    cc__exact_cfg icfg;
    cc__time mk = cc__makespan(sub, start);
    cc_result rc;
    int* rank = (int*)cc__alloc(ctx, ((size_t)sub->n + 1) * sizeof(int));
    int i;
    /* the window's jobs are in start order, ties by rank: a topological order */
    if (rank) for (i = 0; i < sub->n; i++) rank[i] = i;
    if (!rank || !cc__heur_init(ctx, &hs, sub, rank)) {
        if (rank) cc__heur_free(&hs);
        cc__free(ctx, rank);
        return CC_ERR_OUT_OF_MEMORY;
    }
    hs.lb = lb;   /* the inner windows stop there */
    memset(&icfg, 0, sizeof icfg);
    icfg.which = CC_EXACT_BNB; icfg.nodes = o->cfg->nodes; icfg.inner = 1; icfg.unary_nodes = unary_nodes;
    rc = cc__oe_passes(ctx, &hs, start, &mk, lb, b0, b_max, CONCERTO__LNS_ROUNDS, CONCERTO__OE_INNER_PASSES, &icfg, o->t_end,
                       &o->nodes);
    /* the inner windows' failures count as the window's */
    o->cfg->failures += icfg.failures;
    if (o->cfg->status == CC_OK && icfg.status != CC_OK) {
        o->cfg->status = icfg.status;
        memcpy(o->cfg->message, icfg.message, sizeof icfg.message);
    }
    cc__heur_free(&hs);
    cc__free(ctx, rank);
    return rc == CC_ERR_OUT_OF_MEMORY ? rc : CC_OK;
}

/* List schedules of a large window's jobs (sub, in start order: a
   topological order): the serial schedule generation by each of four
   priority rules, then CONCERTO__OE_LIST_SAMPLES regret-biased samples
   around each (a seeded generator: the same every run), and each rule's
   list by the parallel schedule generation too, which never leaves a
   stream idle while a job is ready for it, and so can reach a window's
   bound where the serial schedules and the searches after them do not
   (compute waiting on tensor-parallel all-reduces, micro-batches to
   interleave); the shortest that
   ends before the placement start[] and meets every release, deadline and
   busy block replaces it. The placement a window inherits, from the whole
   graph's list schedule and the windows before, can be far from what a
   rule computed on the window alone gives, which can end at the window's
   root bound where the inner search and branch and bound from the
   placement do not; so these schedules prove more windows. *met:
   how many of the schedules met every constraint (none: the window's
   deadlines bind harder than a greedy placement sees). 0: out of memory
   (start[] then holds the placement or a shorter schedule found before,
   either valid). */
#define CONCERTO__OE_LIST_SAMPLES 8
static int cc__oe_window_lists(cc_context* ctx, const cc__prob* sub, cc__time* start, int* met) {
    static const cc_priority rules[] = { CC_PRIO_BOTTOM_LEVEL, CC_PRIO_LFT, CC_PRIO_MTS, CC_PRIO_GRPW };
    int n = sub->n, i, ok = 1, smp;
    size_t ri;
    uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)n;
    cc__time best = cc__makespan(sub, start);
    int* topo = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* list = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    double* key = (double*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(double));
    cc__time* s = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__time));
    int* pos = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* scr = (int*)cc__alloc(ctx, 3 * ((size_t)n + 1) * sizeof(int));
    cc__profile pr;
    memset(&pr, 0, sizeof pr);
    *met = 0;
    if (!topo || !list || !key || !s || !pos || !scr) ok = 0;
    for (i = 0; ok && i < n; i++) topo[i] = i;
    for (ri = 0; ok && ri < sizeof rules / sizeof rules[0]; ri++) {
        if (cc__prio_keys(ctx, sub, topo, rules[ri], key) != CC_OK) { ok = 0; break; }
        for (smp = 0; smp <= CONCERTO__OE_LIST_SAMPLES; smp++) {   /* (0: the rule itself) */
            cc__time mk;
            if (!cc__make_list(ctx, sub, key, smp ? &rng : NULL, list) || (mk = cc__ssgs(ctx, sub, list, s, &pr)) == -2) {
                ok = 0;
                break;
            }
            if (mk >= 0) (*met)++;
            if (mk >= 0 && mk < best) { best = mk; memcpy(start, s, (size_t)n * sizeof *s); }
            if (smp == 0) {   /* the rule's list by the parallel SGS too */
                int q;
                for (q = 0; q < n; q++) pos[list[q]] = q;
                if ((mk = cc__psgs(ctx, sub, pos, s, &pr, scr)) == -2) { ok = 0; break; }
                if (mk >= 0) (*met)++;
                if (mk >= 0 && mk < best) { best = mk; memcpy(start, s, (size_t)n * sizeof *s); }
            }
        }
    }
    cc__profile_free(ctx, &pr);
    cc__free(ctx, topo); cc__free(ctx, list); cc__free(ctx, key); cc__free(ctx, s); cc__free(ctx, pos); cc__free(ctx, scr);
    return ok;
}

/* Hands a window the solve left unproven to cc_sched_tuning.on_window:
   its problem sub (releases and deadlines from the jobs outside, their
   busy blocks), the placement start[] it keeps, its result br and its
   first start t0, in microseconds. CC_ERR_OUT_OF_MEMORY or CC_OK. */
static cc_result cc__oe_window_report(cc_context* ctx, const cc__exact_cfg* cfg, const cc__prob* sub, const cc__time* start,
                                      const cc__bnb_result* br, cc__time t0) {
    int n = sub->n, nb = sub->n_busy, i;
    double* t = (double*)cc__alloc(ctx, (4 * (size_t)n + 2 * (size_t)nb + 1) * sizeof(double));
    cc_sched_window w;
    if (!t) return CC_ERR_OUT_OF_MEMORY;
    memset(&w, 0, sizeof w);
    w.n_jobs = n; w.n_resources = sub->k;
    w.capacity = sub->cap; w.demand = sub->dem;
    w.pred_off = sub->pred_off; w.pred = sub->pred;
    w.n_busy = nb; w.busy_demand = sub->busy_dem;
    w.duration_us = t; w.release_us = t + n; w.deadline_us = t + 2 * n; w.start_us = t + 3 * n;
    w.busy_start_us = t + 4 * n; w.busy_end_us = t + 4 * n + nb;
    for (i = 0; i < n; i++) {
        t[i] = (double)sub->dur[i] / CONCERTO__TICKS_PER_US;
        t[n + i] = sub->release ? (double)sub->release[i] / CONCERTO__TICKS_PER_US : 0.0;
        t[2 * n + i] = sub->deadline && sub->deadline[i] < CONCERTO__TIME_MAX ? (double)sub->deadline[i] / CONCERTO__TICKS_PER_US : -1.0;
        t[3 * n + i] = (double)start[i] / CONCERTO__TICKS_PER_US;
    }
    for (i = 0; i < nb; i++) {
        t[4 * n + i] = (double)sub->busy_start[i] / CONCERTO__TICKS_PER_US;
        t[4 * n + nb + i] = (double)sub->busy_end[i] / CONCERTO__TICKS_PER_US;
    }
    w.first_start_us = (double)t0 / CONCERTO__TICKS_PER_US;
    w.makespan_us = (double)br->makespan / CONCERTO__TICKS_PER_US;
    w.lower_bound_us = (double)br->lower_bound / CONCERTO__TICKS_PER_US;
    w.grain_us = (double)(sub->grain > 0 ? sub->grain : 1) / CONCERTO__TICKS_PER_US;
    cfg->on_window(&w, cfg->on_window_user_data);
    cc__free(ctx, t);
    return CC_OK;
}

/* Solves the current window exactly, keeps a better placement. A window
   that fails (time-out, solver error) keeps its placement; it is not the
   caller's error: it is kept out of the logger and the context's last
   error, and counted in cfg for the stats' exact_* fields. Returns
   CC_OK or CC_ERR_OUT_OF_MEMORY; *changed is set if a job moved. */
static cc_result cc__oe_window_solve(cc__oe* o, int* changed) {
    cc_context* ctx = o->ctx;
    cc__window* w = &o->w;
    cc__prob sub;
    cc__bnb_result br;
    char saved_msg[CONCERTO__MSG_MAX];
    cc_logger saved_logger = ctx->logger;
    cc_result saved_result = ctx->last_result, rc;
    double t_start;
    int i, large = o->inner && w->m > 2 * CONCERTO__OE_INNER_B0;   /* the inner search's path */
    memset(&sub, 0, sizeof sub);
    memset(&br, 0, sizeof br);
    sub.n = w->m; sub.k = o->p->k; sub.dur = w->dur; sub.dem = w->dem; sub.cap = o->p->cap;
    sub.succ_off = w->succ_off; sub.succ = w->succ; sub.pred_off = w->pred_off; sub.pred = w->pred;
    sub.release = w->rel; sub.deadline = w->dl;
    sub.n_busy = w->nb; sub.busy_start = w->bs; sub.busy_end = w->be; sub.busy_dem = w->bd;
    sub.grain = o->p->grain;
    memcpy(saved_msg, ctx->last_error, sizeof saved_msg);
    ctx->logger.log_fn = NULL;
    t_start = cc__now_s();
    if (large) {
        /* list schedules first (cc__oe_window_lists); then the root bound
           (branch and bound with one node), where the inner search stops;
           the exact solve only if it stays above. Where every list
           schedule missed a deadline (the planner's pipeline steps: the
           ops due before another window's wall of busy blocks on a
           stream), the inner windows propagate in every node, which
           carries those deadlines into the search; elsewhere their nodes
           cost more for nothing */
        int met = 0;
        rc = cc__oe_window_lists(ctx, &sub, w->start, &met) ? cc__bnb_solve(ctx, &sub, w->start, 1, 1, 0.0, &br)
                                                            : CC_ERR_OUT_OF_MEMORY;
        cc__exact_note(ctx, o->cfg, rc, "branch and bound");
        if (rc == CC_OK && !br.proven)
            rc = cc__oe_inner(o, &sub, w->start, br.lower_bound, CONCERTO__OE_INNER_B0, CONCERTO__OE_INNER_BMAX,
                              met ? 0 : CONCERTO__OE_INNER_PROP_N);
        if (rc == CC_OK && !br.proven) {
            cc__time lb = br.lower_bound, mk = cc__makespan(&sub, w->start);
            if (mk <= lb) { br.makespan = mk; br.proven = 1; }
            else {
                rc = cc__exact_solve(ctx, &sub, w->start, 1, o->cfg, &br);
                if (lb > br.lower_bound) br.lower_bound = lb;
                if (br.makespan <= br.lower_bound) br.proven = 1;
            }
        }
    } else rc = cc__exact_solve(ctx, &sub, w->start, 1, o->cfg, &br);
    if ((o->cfg->prove || (o->inner && w->m <= CONCERTO__OE_PROVE_SMALL)) && !cc__prob_cumulative(&sub) && rc == CC_OK && !br.proven && br.makespan < CONCERTO__TIME_MAX &&
        (o->t_end <= 0 || cc__now_s() < o->t_end)) {
        /* the placement's makespan proven optimal by shaving (unary
           streams alone) */
        cc__bnb_result pr;
        cc_result r2 = cc__bnb_prove(ctx, &sub, w->start, o->t_end > 0 ? o->t_end - cc__now_s() : 0.0, &pr);
        cc__exact_note(ctx, o->cfg, r2, "branch and bound");
        if (r2 == CC_ERR_OUT_OF_MEMORY) rc = r2;
        else if (r2 == CC_OK) {
            if (pr.makespan < br.makespan) br.makespan = pr.makespan;   /* (its one node kept a better placement) */
            if (pr.lower_bound > br.lower_bound) br.lower_bound = pr.lower_bound;
            if (br.lower_bound >= br.makespan) br.proven = 1;
        }
    }
    cc__oe_window_note(o->cfg, rc, &br, w->t0, 1e3 * (cc__now_s() - t_start));
    if (rc == CC_OK && large && o->cfg->on_window && !br.proven && br.makespan < CONCERTO__TIME_MAX)
        rc = cc__oe_window_report(ctx, o->cfg, &sub, w->start, &br, w->t0);
    ctx->logger = saved_logger;
    ctx->last_result = saved_result;
    memcpy(ctx->last_error, saved_msg, sizeof saved_msg);
    o->nodes += br.nodes;
    if (rc == CC_ERR_OUT_OF_MEMORY) return rc;
    if (rc != CC_OK || br.makespan >= w->t1) return CC_OK;
    if (o->p->mem_cap > 0 && o->p->n_mb > 0) {
        /* the window's jobs know no memory: its placement is kept only
           where the whole schedule still fits the cap */
        cc__time* old = (cc__time*)cc__alloc(ctx, ((size_t)w->m + 1) * sizeof(cc__time));
        int fits;
        if (!old) return CC_ERR_OUT_OF_MEMORY;
        for (i = 0; i < w->m; i++) { old[i] = o->s[w->glob[i]]; o->s[w->glob[i]] = w->start[i]; }
        fits = cc__heur_fits(o->h, o->s);
        for (i = 0; i < w->m; i++) o->s[w->glob[i]] = old[i];
        cc__free(ctx, old);
        if (!fits) return CC_OK;
    }
    for (i = 0; i < w->m; i++) {
        int v = w->glob[i];
        if (o->s[v] == w->start[i]) continue;
        o->s[v] = w->start[i];
        *changed = 1;
        if (o->moved[v] != o->round + 1) {
            if (!CONCERTO__GROW(ctx, o->moved_list, o->moved_cap, (size_t)o->n_moved + 1)) return CC_ERR_OUT_OF_MEMORY;
            o->moved[v] = o->round + 1;
            o->moved_list[o->n_moved++] = v;
        }
    }
    return CC_OK;
}

/* One round: windows of 2b jobs from offset 0 (even rounds) or b (odd). */
static cc_result cc__oe_round(cc__oe* o, int b, double t_end, int* changed) {
    const cc__prob* p = o->p;
    int ws, i, n = p->n, wsz = 2 * b;
    cc__sort_jobs(p, o->s, o->h->rank, 0, o->h->tk, o->order);
    memcpy(o->s0, o->s, (size_t)n * sizeof(cc__time));
    o->n_moved = 0;
    for (ws = (o->round % 2) ? b : 0; ws < n; ws += wsz) {
        int m = n - ws < wsz ? n - ws : wsz;
        cc_result rc;
        if (m < 2 || (t_end > 0 && cc__now_s() > t_end) || cc__heur_cancelled(o->h)) break;
        if (!cc__oe_window_jobs(o, ws, m) || !cc__oe_window_busy(o)) return CC_ERR_OUT_OF_MEMORY;
        if ((rc = cc__oe_window_solve(o, changed)) != CC_OK) return rc;
        for (i = 0; i < m; i++) o->w.loc[o->w.glob[i]] = -1;
    }
    return CC_OK;
}

/* Improves s (makespan *mk_io) by at most rounds rounds of windows of 2b
   jobs; stops early at the lower bound, the time limit, or after both
   offsets changed nothing. Branch-and-bound nodes are added to *nodes. */
static cc_result cc__oddeven(cc_context* ctx, cc__heur* h, cc__time* s, cc__time* mk_io, int b, int rounds,
                             cc__exact_cfg* cfg, double t_end, int64_t* nodes) {
    const cc__prob* p = h->p;
    cc__oe o;
    cc__time mk = *mk_io;
    cc_result rc = CC_OK;
    int quiet = 0;
    if (!cc__oe_init(&o, ctx, h, s, b, cfg)) rc = CC_ERR_OUT_OF_MEMORY;
    o.t_end = t_end;
    for (o.round = 0; rounds > o.round && rc == CC_OK; o.round++) {
        int changed = 0;
        cc__time m2;
        if ((rc = cc__oe_round(&o, b, t_end, &changed)) != CC_OK) break;
        /* pass the gains on: justification in start order never delays a
           job of the RCPSP; on streams (the stream simulation of unary
           problems) a zero-duration job inside another's interval waits its
           turn and can end up later, and then the windows' schedule stays */
        memcpy(h->tmp, s, (size_t)p->n * sizeof(cc__time));
        m2 = cc__justify(h, p, h->fin, h->tmp, 0);
        if (m2 == -2) { rc = CC_ERR_OUT_OF_MEMORY; break; }
        if (m2 >= 0 && m2 <= mk) { memcpy(s, h->fin, (size_t)p->n * sizeof(cc__time)); mk = m2; }
        else mk = cc__makespan(p, s);
        if (mk <= h->lb || (t_end > 0 && cc__now_s() > t_end) || cc__heur_cancelled(h)) break;
        quiet = changed ? 0 : quiet + 1;
        if (quiet >= 2) break;   /* both offsets tried without a change */
    }
    *nodes += o.nodes;
    *mk_io = mk;
    cc__oe_free(&o);
    if (rc == CC_ERR_OUT_OF_MEMORY) return CONCERTO__FAIL(ctx, rc, "odd-even windows: out of memory");
    return rc;
}

/* >>sched
   cc_sched_solve: the desc resolved, first schedules by priority rules, the
   method's improvement (sampling, exact search, odd-even windows), and the
   issue order with its stream simulation as the result. */

/* The issue order of a schedule: by start time, zero-duration ops first,
   then by index; inside a group of equal start times an op never precedes
   a dependency (possible only through zero-duration ops). */
static cc_result cc__output_order(cc_context* ctx, const cc__prob* p, const cc__time* st, cc__tkey* tk, int* out) {
    int n = p->n, a = 0, i, e;
    char* placed = NULL;
    int* ident = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    if (!ident) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) ident[i] = i;
    cc__sort_jobs(p, st, ident, 0, tk, out);
    while (a < n) {
        int b = a, linked = 0;
        while (b < n && st[out[b]] == st[out[a]]) b++;
        for (i = a; i < b && !linked; i++) {
            int v = out[i];
            if (p->dur[v] != 0) continue;
            for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) if (st[p->succ[e]] == st[v]) { linked = 1; break; }
        }
        if (linked) {
            /* selection: the first op in (zero first, index) order whose
               dependencies in the group are placed */
            int c;
            if (!placed && !(placed = (char*)cc__calloc(ctx, (size_t)n + 1, 1))) { cc__free(ctx, ident); return CC_ERR_OUT_OF_MEMORY; }
            for (c = a; c < b; c++) {
                int j, pick = -1;
                for (j = c; j < b && pick < 0; j++) {
                    int v = out[j], ok = 1;
                    for (e = p->pred_off[v]; e < p->pred_off[v + 1]; e++) {
                        int q = p->pred[e];
                        if (st[q] == st[v] && !placed[q]) { ok = 0; break; }
                    }
                    if (ok) pick = j;
                }
                CONCERTO_ASSERT(pick >= 0);   /* the group is acyclic */
                if (pick < 0) pick = c;
                {
                    int v = out[pick];
                    memmove(out + c + 1, out + c, (size_t)(pick - c) * sizeof(int));
                    out[c] = v;
                    placed[v] = 1;
                }
            }
        }
        a = b;
    }
    cc__free(ctx, placed);
    cc__free(ctx, ident);
    return CC_OK;
}

#define CONCERTO__SMALL_N 5000      /* above: heuristics that scale (fast list scheduling, justification) */
#define CONCERTO__BNB_AUTO_N 200    /* AUTO runs branch and bound up to this size */
#define CONCERTO__PROOF_N 32        /* up to this size the exact search has its full budget and aims at a
                                       proof (PSPLIB J30); above, it mostly looks for better schedules */
#define CONCERTO__MAX_THREADS 256   /* cc_sched_desc.threads, at most */
#define CONCERTO__AUTO_FIRST_BUDGET 1000  /* AUTO's schedules before branch and bound */
/* AUTO's budget up to CONCERTO__BNB_AUTO_N ops: the schedules of each
   evolution of the restarts; larger budgets gain little for their time. */
#define CONCERTO__AUTO_BUDGET 10000

/* The defaults, in one place: every zero field of d filled in as a solve
   of a graph of n ops uses it. */
static void cc__sched_resolve(cc_sched_desc* d, int n) {
    if (d->tuning.sgs == CC_SGS_DEFAULT) d->tuning.sgs = n <= CONCERTO__SMALL_N ? CC_SGS_SERIAL : CC_SGS_PARALLEL;
    if (d->tuning.priority == CC_PRIO_DEFAULT) {
        int every = d->method == CC_SCHED_ODD_EVEN || (d->method == CC_SCHED_AUTO && n > CONCERTO__BNB_AUTO_N) ||
                    (d->method == CC_SCHED_SAMPLING && n > CONCERTO__SMALL_N);
        d->tuning.priority = every ? CC_PRIO_ALL : CC_PRIO_LFT;
    }
    if (d->tuning.improve_passes == 0) d->tuning.improve_passes = 2;
    if (d->tuning.budget_schedules == 0)   /* AUTO's evolutions on small graphs: see restarts */
        d->tuning.budget_schedules = d->method == CC_SCHED_AUTO && n <= CONCERTO__BNB_AUTO_N ? CONCERTO__AUTO_BUDGET : 5000;
    if (d->tuning.bnb_nodes == 0) {
        /* nodes cost about n^3 more as graphs grow: 200000 at 32 ops (PSPLIB
           J30), about 27000 at 62 (J60), 819 at 200 */
        double scale = n > CONCERTO__PROOF_N ? (double)CONCERTO__PROOF_N / (double)n : 1.0;
        d->tuning.bnb_nodes = (int64_t)(200000.0 * scale * scale * scale);
        if (d->tuning.bnb_nodes < 1) d->tuning.bnb_nodes = 1;
    }
    if (d->window_ops == 0) d->window_ops = 8;
    if (d->rounds == 0) d->rounds = 4;
    if (d->tuning.window_nodes == 0) d->tuning.window_nodes = 300;
    if (d->tuning.window_max_ops < d->window_ops) d->tuning.window_max_ops = d->window_ops;
    if (d->tuning.restarts == 0) d->tuning.restarts = 10;
    if (d->threads == 0) d->threads = 1;
    if (d->exact == CC_EXACT_DEFAULT) d->exact = CC_EXACT_BNB;
    if (d->tuning.lp_time_limit_s == 0) d->tuning.lp_time_limit_s = 10.0;
    if (d->tuning.lp_window_time_limit_s == 0) d->tuning.lp_window_time_limit_s = 1.0;
    if (d->tuning.lp_warm_nodes == 0) d->tuning.lp_warm_nodes = d->tuning.bnb_nodes > 0 ? d->tuning.bnb_nodes / 4 : -1;
}

CONCERTO_API cc_sched_desc cc_sched_query_defaults(const cc_sched_desc* desc, int n_ops) {
    cc_sched_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    cc__sched_resolve(&d, n_ops);
    return d;
}

CONCERTO_API void cc_schedule_release(cc_context* ctx, cc_schedule* s) {
    if (!ctx || !s) return;
    cc__free(ctx, s->start_us);
    cc__free(ctx, s->order);
    memset(s, 0, sizeof *s);
}

static const char* cc__method_name(cc_sched_method m) {
    switch (m) {
        case CC_SCHED_AUTO: return "auto"; case CC_SCHED_LIST: return "list";
        case CC_SCHED_SAMPLING: return "sampling"; case CC_SCHED_BNB: return "branch and bound";
        case CC_SCHED_ODD_EVEN: return "odd-even"; default: return "?";
    }
}

/* Every field of a desc in its range, and the exact solver compiled in. */
static cc_result cc__sched_check(cc_context* ctx, const cc_sched_desc* d) {
    if ((int)d->method < 0 || d->method > CC_SCHED_ODD_EVEN)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown method %d", (int)d->method);
    if (((int)d->tuning.priority < 0 || d->tuning.priority >= CC__PRIO_COUNT) && d->tuning.priority != CC_PRIO_ALL)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown priority rule %d", (int)d->tuning.priority);
    if ((int)d->tuning.sgs < 0 || d->tuning.sgs > CC_SGS_PARALLEL)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown schedule-generation scheme %d", (int)d->tuning.sgs);
    if (!(d->time_limit_s >= 0) || d->window_ops < 0 || d->window_ops > 4096 || d->tuning.window_nodes < 0 ||
        d->tuning.window_max_ops < 0 || d->tuning.window_max_ops > 4096)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: time_limit_s must be >= 0, window_ops and "
                              "window_max_ops 0..4096, window_nodes >= 0");
    if (d->tuning.perturbations < 0 || d->tuning.perturbations > 100000)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: perturbations %d (want 0..100000)", d->tuning.perturbations);
    if (d->tuning.restarts > 100000)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: restarts %d (want at most 100000)", d->tuning.restarts);
    if (d->tuning.window_prove < 0 || d->tuning.window_prove > 1)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: window_prove %d (want 0 or 1)", d->tuning.window_prove);
    if (d->threads < 0 || d->threads > CONCERTO__MAX_THREADS)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: threads %d (want 0..%d)", d->threads,
                              CONCERTO__MAX_THREADS);
    if ((int)d->exact < 0 || d->exact > CC_EXACT_BOTH || !(d->tuning.lp_time_limit_s >= 0) || !(d->tuning.lp_window_time_limit_s >= 0))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown exact solver %d or a negative lp_time_limit_s "
                              "or lp_window_time_limit_s", (int)d->exact);
#ifndef CONCERTO_USE_LPSOLVE
    if (d->exact == CC_EXACT_LPSOLVE || d->exact == CC_EXACT_BOTH)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_sched_solve: lp_solve was not compiled in: define "
                              "CONCERTO_USE_LPSOLVE and link -llpsolve55 -lcolamd -lm -ldl (Debian: liblpsolve55-dev)");
#endif
    return CC_OK;
}

/* The desc's memory fields against the graph: start_from a schedule of
   it; no transient buffer above the cap. Under a cap the
   solvers without a memory resource are left out, and *st says which. */
static cc_result cc__sched_memory_args(cc_context* ctx, const cc_graph* g, cc_sched_desc* d, cc_sched_stats* st) {
    int b;
    if (d->start_from) {
        const cc_schedule* f = d->start_from;
        if (f->n_ops != g->n || !f->start_us)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: start_from has %d ops and %s start times; graph '%s' "
                                  "has %d ops", f->n_ops, f->start_us ? "its" : "no", cc_graph_name(g), g->n);
        if (cc_schedule_check(ctx, (cc_graph*)g, f->start_us, NULL) != CC_OK) {
            char why[CONCERTO__MSG_MAX];
            cc__copy_msg(why, sizeof why, ctx->last_error);
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: start_from is not a schedule of graph '%s': %s",
                                  cc_graph_name(g), why);
        }
    }
    if (d->memory_cap_bytes == 0 || g->n_mb == 0) return CC_OK;
    for (b = 0; b < g->n_mb; b++)
        if (g->mb_bytes[b] > d->memory_cap_bytes)
            return CONCERTO__FAIL(ctx, CC_ERR_CAPACITY, "cc_sched_solve: transient buffer '%s' of %llu bytes is larger than "
                                  "memory_cap_bytes = %llu", g->names.s + g->buf_name[g->mb_buf[b]],
                                  (unsigned long long)g->mb_bytes[b], (unsigned long long)d->memory_cap_bytes);
    if (d->exact == CC_EXACT_LPSOLVE || d->exact == CC_EXACT_BOTH) {
        d->exact = CC_EXACT_BNB;
        cc__fmt(st->memory_note, sizeof st->memory_note, "lp_solve not run: it has no memory resource; branch and bound ran alone");
    }
    if (d->general) {
        size_t len = strlen(st->memory_note);
        d->general = NULL;
        cc__fmt(st->memory_note + len, sizeof st->memory_note - len, "%slazy clause generation and the restarts not run: "
                "no memory resource", len ? "; " : "");
    }
    return CC_OK;
}

/* CC_ERR_INFEASIBLE under a cap: the cap, the smallest peak found (starts
   s) and the buffers alive at its instant, in graph order, as many as
   the message holds. */
static cc_result cc__sched_no_fit(cc_context* ctx, const cc_graph* g, const cc__prob* p, const cc__time* s, uint64_t peak) {
    char msg[CONCERTO__MSG_MAX - 160];
    size_t len = 0;
    cc__time at = 0;
    int m, k, n_alive = 0;
    cc__mev* ev = (cc__mev*)cc__alloc(ctx, (2 * (size_t)p->n_mb + 1) * sizeof *ev);
    msg[0] = 0;
    if (ev) {
        (void)cc__mem_peak(p, s, ev, &at);
        cc__free(ctx, ev);
        for (m = 0; m < p->n_mb; m++) {
            cc__time e = 0, a = s[p->mb_alloc[m]];
            int w;
            for (k = p->mb_user_off[m]; k < p->mb_user_off[m + 1]; k++) {
                int u = p->mb_user[k];
                if (s[u] + p->dur[u] > e) e = s[u] + p->dur[u];
            }
            if (e <= a) e = a + 1;
            if (!(a <= at && at < e)) continue;
            n_alive++;
            if (len + 64 >= sizeof msg) continue;
            w = snprintf(msg + len, sizeof msg - len, "%s'%s' (%llu)", len ? ", " : "", g->names.s + g->buf_name[g->mb_buf[m]],
                         (unsigned long long)p->mb_bytes[m]);
            if (w > 0) len += (size_t)w < sizeof msg - len ? (size_t)w : sizeof msg - len - 1;
        }
    }
    return CONCERTO__FAIL(ctx, CC_ERR_INFEASIBLE, "cc_sched_solve: no order found fits memory_cap_bytes = %llu: the best "
                          "peaks at %llu bytes at %.3f us, with %d buffers alive: %s", (unsigned long long)p->mem_cap,
                          (unsigned long long)peak, (double)at / CONCERTO__TICKS_PER_US, n_alive, msg);
}

/* A solve in progress. */
typedef struct cc__solve {
    cc_context* ctx;
    const cc_graph* g;
    cc_sched_desc d;            /* resolved */
    cc__prob p;
    cc__heur h;                 /* the incumbent: h.best, h.best_mk */
    int* rank;                  /* topological rank of each op */
    cc__time cp, rlb, lb;       /* critical path, resource bound, best bound */
    double t_end;               /* the time limit on cc__now_s, 0: none */
    int proven;
    int64_t nodes, conflicts, wins[2];
    cc_schedule* out;
    cc_sched_stats* st;         /* what the solve did (never NULL) */
    const cc_schedule* seed;    /* under a cap: the uncapped solve's schedule, above the cap */
} cc__solve;

/* cc_sched_desc.general: the search that serves graphs with a resource
   that is not unary (concerto_rcpsp.h's cc_rcpsp_search), run from the
   solve's steps below. Both entries are required; each returns CC_OK or
   out of memory (other failures are noted in S->out). */
struct cc_sched_extension {
    /* Lazy clause generation on the whole graph from the incumbent, with
       `conflicts`: the exact search's sequel on a graph with a cumulative
       resource (cc__solve_exact, where branch and bound did not prove). It
       does nothing unless the exact solver is CC_EXACT_BNB and something
       is left to prove. *ran (may be NULL): 1 when it took the problem. */
    cc_result (*lcg)(cc__solve* S, int64_t conflicts, int* ran);
    /* AUTO up to CONCERTO__BNB_AUTO_N ops on a graph that is not unary,
       with restarts > 0 and something left to prove, after the first
       evolution: in place of cc__solve_main_line. */
    cc_result (*restarts)(cc__solve* S);
};

static int cc__solve_out_of_time(const cc__solve* S) { return S->t_end > 0 && cc__now_s() > S->t_end; }

/* First schedules: the desc's rule, or every rule once (CC_PRIO_ALL;
   LST is skipped there: it orders as BOTTOM_LEVEL up to ties), each
   improved; large stream graphs by fast list scheduling. */
static cc_result cc__solve_first(cc__solve* S) {
    const cc_sched_desc* d = &S->d;
    cc__heur* h = &S->h;
    int n = S->p.n, rule, single, every = d->tuning.priority == CC_PRIO_ALL;
    double* key = (double*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof(double));
    cc_result rc = CC_OK;
    if (!key) return CC_ERR_OUT_OF_MEMORY;
    (void)cc__prob_shape(&S->p, &single, NULL);
    for (rule = CC_PRIO_PROGRAM_ORDER; rule < CC__PRIO_COUNT && rc == CC_OK; rule++) {
        if (every ? rule == CC_PRIO_LST : rule != (int)d->tuning.priority) continue;
        if ((rc = cc__prio_keys(S->ctx, &S->p, S->g->topo, (cc_priority)rule, key)) != CC_OK) break;
        if (n <= CONCERTO__SMALL_N || d->tuning.sgs == CC_SGS_SERIAL || !single) {
            if (!cc__make_list(S->ctx, &S->p, key, NULL, h->list)) rc = CC_ERR_OUT_OF_MEMORY;
            else if (cc__decode(h, d->tuning.sgs, d->tuning.improve_passes > 0 ? d->tuning.improve_passes : 0) == -2) rc = CC_ERR_OUT_OF_MEMORY;
        } else {
            cc__time m0 = cc__list_fast(S->ctx, &S->p, key, h->cur);
            h->n_sched++;
            if (m0 >= 0 && d->tuning.improve_passes > 0) m0 = cc__fbi(h, h->cur, m0, d->tuning.improve_passes);
            if (m0 == -2) rc = CC_ERR_OUT_OF_MEMORY;
            else cc__heur_offer(h, h->cur, m0);
        }
        if (h->best_mk <= S->lb || cc__solve_out_of_time(S)) break;
    }
    if (rc == CC_OK && S->p.mem_cap > 0 && S->p.n_mb > 0) {
        /* under a cap program order by the serial scheme is always a
           candidate: it fits wherever running the ops one by one does */
        int i;
        for (i = 0; i < n; i++) key[i] = (double)i;
        if (!cc__make_list(S->ctx, &S->p, key, NULL, h->list) ||
            cc__decode(h, CC_SGS_SERIAL, d->tuning.improve_passes > 0 ? d->tuning.improve_passes : 0) == -2) rc = CC_ERR_OUT_OF_MEMORY;
        if (rc == CC_OK && h->best_mk == CONCERTO__TIME_MAX) {
            /* nothing fits so far: program order without the cap, offered
               (and refused) for the smallest peak the error names */
            uint64_t cap = S->p.mem_cap;
            cc__time m0;
            S->p.mem_cap = 0;
            m0 = cc__ssgs(S->ctx, &S->p, h->list, h->cur, &h->prof);
            S->p.mem_cap = cap;
            if (m0 == -2) rc = CC_ERR_OUT_OF_MEMORY;
            else cc__heur_offer(h, h->cur, m0);
        }
    }
    cc__free(S->ctx, key);
    {   /* the caller's start, and the uncapped solve's (repaired by the offer) */
        const cc_schedule* from[2];
        int i, k;
        from[0] = d->start_from; from[1] = S->seed;
        for (k = 0; k < 2 && rc == CC_OK; k++) {
            if (!from[k]) continue;
            for (i = 0; i < n; i++) h->cur[i] = (cc__time)llround(from[k]->start_us[i] * CONCERTO__TICKS_PER_US);
            cc__heur_offer(h, h->cur, cc__makespan(&S->p, h->cur));
        }
    }
    if (rc == CC_OK && h->oom) rc = CC_ERR_OUT_OF_MEMORY;
    return rc;
}

/* An exact solver's result in S->h.cur: its schedule offered, its proof
   and bound kept. */
static void cc__solve_take(cc__solve* S, const cc__bnb_result* br) {
    if (br->makespan < S->h.best_mk) cc__heur_offer(&S->h, S->h.cur, br->makespan);
    if (br->proven && S->h.best_mk <= br->makespan) S->proven = 1;   /* (under a cap the proof may be of one dropped) */
    if (br->lower_bound > S->lb) S->lb = br->lower_bound;
}

/* Branch and bound (or lp_solve) on the whole graph from the incumbent,
   then (lcg_after, with d.general) lazy clause generation where that did
   not prove. A failed exact run is noted in the schedule, not returned
   (out of memory aside). */
static cc_result cc__solve_exact(cc__solve* S, int lcg_after) {
    cc__exact_cfg cfg;
    cc__bnb_result br;
    double left = S->t_end > 0 ? S->t_end - cc__now_s() : 0;
    cc_result rc;
    if (S->d.tuning.bnb_nodes <= 0 || S->h.best_mk <= S->lb || (S->t_end > 0 && left <= 0)) return CC_OK;
    memcpy(S->h.cur, S->h.best, (size_t)S->p.n * sizeof(cc__time));
    memset(&cfg, 0, sizeof cfg);
    cfg.which = S->d.exact; cfg.nodes = S->d.tuning.bnb_nodes; cfg.time_limit_s = S->t_end > 0 ? left : 0.0;
    cfg.lp_time_limit_s = S->d.tuning.lp_time_limit_s;
    cfg.lp_warm_nodes = S->d.tuning.lp_warm_nodes > 0 ? S->d.tuning.lp_warm_nodes : 0;
    rc = cc__exact_solve(S->ctx, &S->p, S->h.cur, 1, &cfg, &br);
    S->wins[0] += cfg.wins[0]; S->wins[1] += cfg.wins[1];
    if (rc == CC_ERR_OUT_OF_MEMORY) return rc;
    cc__exact_report(S->st, &cfg);
    S->nodes += br.nodes;
    cc__solve_take(S, &br);
    /* what branch and bound did not prove: lazy clause generation, half as
       many conflicts as nodes */
    if (!lcg_after || !S->d.general || !cc__prob_cumulative(&S->p)) return CC_OK;
    return S->d.general->lcg(S, S->d.tuning.bnb_nodes / 2 > 0 ? S->d.tuning.bnb_nodes / 2 : 1, NULL);
}

#define CONCERTO__OE_DEEP_PASSES 4   /* passes of the deepening over its block sizes, at most */

/* Odd-even windows over h's incumbent (>>oddeven: windows of 2b
   consecutive jobs by start, re-solved exactly with the rest fixed as
   releases, deadlines and resource occupation), with `nodes` per window:
   a pass runs the block sizes from b0 to b_max (cc__oe_next_block), each
   for up to `rounds` rounds or until both offsets change nothing; the
   passes repeat, at most `passes` of them, while one shortens the
   schedule (what the large blocks moved opens room for small ones). Never
   worse than the incumbent (every window starts from its placement;
   justification is kept only where it is no later); the budget is in
   branch-and-bound work, not time. */
/* The windows' solver settings of the solve, `nodes` a window. */
static void cc__windows_cfg(const cc_sched_desc* d, int64_t nodes, cc__exact_cfg* cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->which = d->exact; cfg->nodes = nodes;
    cfg->lp_time_limit_s = d->tuning.lp_window_time_limit_s;
    cfg->prove = d->tuning.window_prove;
    cfg->on_window = d->tuning.on_window;
    cfg->on_window_user_data = d->tuning.on_window_user_data;
}

/* What windows run with cfg did, into the solve's counts and its result. */
static void cc__windows_report(cc__solve* S, const cc__exact_cfg* cfg) {
    S->wins[0] += cfg->wins[0]; S->wins[1] += cfg->wins[1];
    cc__exact_report(S->st, cfg);
}

/* The windows over h's incumbent down to the bound lb, counted in cfg and
   *nodes_io: reads the solve's problem and time limit, writes only h and
   these, so restarts on other threads run it (h->ctx their own context). */
static cc_result cc__windows_run(const cc__solve* S, const cc_sched_desc* d, cc__time lb, cc__heur* h, int b0, int b_max,
                                 int rounds, int64_t nodes, int passes, cc__exact_cfg* cfg, int64_t* nodes_io) {
    cc__time mk = h->best_mk;
    cc_result rc;
    cc__windows_cfg(d, nodes, cfg);
    if (mk >= CONCERTO__TIME_MAX || mk <= lb || rounds <= 0) return CC_OK;
    memcpy(h->cur, h->best, (size_t)S->p.n * sizeof(cc__time));
    rc = cc__oe_passes(h->ctx, h, h->cur, &mk, lb, b0, b_max, rounds, passes, cfg, S->t_end, nodes_io);
    if (rc == CC_OK) cc__heur_offer(h, h->cur, mk);
    return rc;
}

static cc_result cc__solve_windows_of(cc__solve* S, cc__heur* h, int b0, int b_max, int rounds, int64_t nodes, int passes) {
    cc__exact_cfg cfg;
    cc_result rc = cc__windows_run(S, &S->d, S->lb, h, b0, b_max, rounds, nodes, passes, &cfg, &S->nodes);
    cc__windows_report(S, &cfg);
    return rc;
}

#define CONCERTO__PERTURB_NOISE 4.0   /* a perturbation's draw: up to this many mean durations */

/* An iterated local search over the odd-even windows (d.tuning.perturbations):
   from the best schedule, each op keyed by its start plus a uniform draw in
   [0, CONCERTO__PERTURB_NOISE mean durations), the ops scheduled in that
   order (the serial scheme; above CONCERTO__SMALL_N ops on streams alone,
   the fast list scheme, as the first schedules), then the windows as the
   solve ran them; the result becomes the base where it ends no later (so
   the search also drifts along schedules of the same makespan). The
   windows' results depend on where they start: from another first
   schedule the same windows can reach a shorter makespan, and a perturbed
   start gives them such a schedule of their own. Budget in restarts, so
   deterministic (the solve's seed). */
static cc_result cc__solve_perturb(cc__solve* S, int b0, int b_max, int rounds, int64_t nodes, int passes) {
    const cc__prob* p = &S->p;
    cc__heur* h = &S->h;
    int n = p->n, it, i, single = 0;
    uint64_t rng = S->d.seed ^ 0xA0761D6478BD642Full;
    double md = 0;
    double* key;
    cc__time* base;
    cc__time bmk = h->best_mk;
    cc__exact_cfg cfg;
    cc_result rc = CC_OK;
    if (S->d.tuning.perturbations <= 0 || n < 2 || bmk >= CONCERTO__TIME_MAX || bmk <= S->lb || rounds <= 0) return CC_OK;
    key = (double*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof(double));
    base = (cc__time*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof(cc__time));
    if (!key || !base) { cc__free(S->ctx, key); cc__free(S->ctx, base); return CC_ERR_OUT_OF_MEMORY; }
    memcpy(base, h->best, (size_t)n * sizeof(cc__time));
    (void)cc__prob_shape(p, &single, NULL);
    for (i = 0; i < n; i++) md += (double)p->dur[i];
    md = md / n * CONCERTO__PERTURB_NOISE;
    cc__windows_cfg(&S->d, nodes, &cfg);
    for (it = 0; it < S->d.tuning.perturbations && bmk > S->lb && !cc__solve_out_of_time(S); it++) {
        cc__time mk;
        for (i = 0; i < n; i++) key[i] = (double)base[i] + md * cc__rng_unit(&rng);
        if (n > CONCERTO__SMALL_N && single) mk = cc__list_fast(S->ctx, p, key, h->cur);
        else if (!cc__make_list(S->ctx, p, key, NULL, h->list)) mk = -2;
        else mk = cc__ssgs(S->ctx, p, h->list, h->cur, &h->prof);
        h->n_sched++;
        if (mk == -2) { rc = CC_ERR_OUT_OF_MEMORY; break; }
        if (mk < 0) break;   /* not reached: the order respects the dependencies */
        rc = cc__oe_passes(S->ctx, h, h->cur, &mk, S->lb, b0, b_max, rounds, passes, &cfg, S->t_end, &S->nodes);
        if (rc != CC_OK) break;
        if (mk <= bmk) { bmk = mk; memcpy(base, h->cur, (size_t)n * sizeof(cc__time)); }
    }
    cc__windows_report(S, &cfg);
    if (rc == CC_OK) cc__heur_offer(h, base, bmk);
    cc__free(S->ctx, key); cc__free(S->ctx, base);
    return rc;
}

/* The odd-even method: windows of window_ops, deepened up to
   window_max_ops (larger blocks move what the smaller ones could not: a
   whole micro-batch's ops past another's), then the perturbation
   restarts. */
static cc_result cc__solve_windows(cc__solve* S) {
    int deep = S->d.tuning.window_max_ops > S->d.window_ops;
    int passes = deep ? CONCERTO__OE_DEEP_PASSES : 1;
    cc_result rc = cc__solve_windows_of(S, &S->h, S->d.window_ops, S->d.tuning.window_max_ops, S->d.rounds, S->d.tuning.window_nodes, passes);
    if (rc == CC_OK) rc = cc__solve_perturb(S, S->d.window_ops, S->d.tuning.window_max_ops, S->d.rounds, S->d.tuning.window_nodes, passes);
    return rc;
}

/* The rest of AUTO's evolution on a small graph after the exact search,
   down to the solve's bound, where nothing proved the incumbent. */
static cc_result cc__solve_evolve_rest(cc__solve* S) {
    if (S->proven || S->h.best_mk <= S->lb || S->h.n_sched >= S->d.tuning.budget_schedules) return CC_OK;
    S->h.lb = S->lb;
    return cc__sample(&S->h, &S->d, S->g->topo, S->t_end, 0, NULL, 0);
}

/* AUTO's main line on a small graph after the first evolution, without
   restarts: the exact search (branch and bound, then, with d.general,
   lazy clause generation where that did not prove), then the rest of the
   evolution. With restarts, d.general's restarts run in its place. */
static cc_result cc__solve_main_line(cc__solve* S) {
    cc_result rc = cc__solve_exact(S, 1);
    if (rc != CC_OK) return rc;
    return cc__solve_evolve_rest(S);
}

/* The method's improvement of the first schedules:
     SAMPLING            sampling and evolution up to the budget
     BNB                 the exact search
     AUTO, small graphs  a short evolution for an incumbent, the exact
                         search, then the rest of the budget (or, with
                         d.general on a graph that is not unary, its
                         restarts)
     ODD_EVEN, AUTO on larger graphs   odd-even windows
   A graph whose resources all have capacity 1 (a stream graph: a
   training step's) never reaches d.general: lazy clause generation needs
   a cumulative resource, the restarts a graph that is not unary. */
static cc_result cc__solve_improve(cc__solve* S) {
    cc_sched_desc d1 = S->d;
    int small_auto = S->d.method == CC_SCHED_AUTO && S->p.n <= CONCERTO__BNB_AUTO_N;
    int restarts = small_auto && !S->h.unary && S->d.tuning.restarts > 0 && S->d.general != NULL;
    cc_result rc = CC_OK;
    switch (S->d.method) {
        case CC_SCHED_SAMPLING:
            if (S->p.n <= CONCERTO__SMALL_N) rc = cc__sample(&S->h, &S->d, S->g->topo, S->t_end, 0, NULL, 0);
            break;
        case CC_SCHED_BNB:
            rc = cc__solve_exact(S, 1);
            break;
        case CC_SCHED_AUTO:
            if (!small_auto) { rc = cc__solve_windows(S); break; }
            if (d1.tuning.budget_schedules > CONCERTO__AUTO_FIRST_BUDGET) d1.tuning.budget_schedules = CONCERTO__AUTO_FIRST_BUDGET;
            if ((rc = cc__sample(&S->h, &d1, S->g->topo, S->t_end, 0, NULL, 0)) != CC_OK) break;
            if (restarts && S->h.best_mk > S->lb) rc = S->d.general->restarts(S);
            else rc = cc__solve_main_line(S);
            break;
        case CC_SCHED_ODD_EVEN:
            rc = cc__solve_windows(S);
            break;
        default:
            break;
    }
    return rc;
}

/* The result: the issue order (start time; zero-duration ops first;
   index; never before a dependency) and, for unary graphs, the stream
   simulation of that order, which is what an executor runs. It is never
   later than the schedule, except where a zero-duration op sits inside
   another op's interval on its stream (free in the RCPSP, not on a
   stream): then the simulation is what is reported. Nor is it later than
   program order's simulation: where that is shorter (a large graph's
   parallel scheme, the executor's costs), program order is the result. */
static cc_result cc__solve_output(cc__solve* S, double t0) {
    cc__heur* h = &S->h;
    cc_schedule* out = S->out;
    cc__time mk = h->best_mk, lb = S->lb;
    int i, n = S->p.n;
    cc_result rc;
    if ((rc = cc__output_order(S->ctx, &S->p, h->best, h->tk, h->list)) != CC_OK) return rc;
    if (h->unary) {
        cc__time m2 = cc__stream_sim(S->ctx, &S->p, h->list, h->cur, NULL), mp;
        if (m2 == -2) return CC_ERR_OUT_OF_MEMORY;
        CONCERTO_ASSERT(m2 >= 0);   /* the order respects every dependency */
        if (m2 >= 0 && !cc__heur_fits(h, h->cur)) m2 = -1;   /* under a cap the schedule's own times stand */
        if (m2 >= 0) {
            if (m2 > mk) S->proven = 0;
            memcpy(h->best, h->cur, (size_t)n * sizeof(cc__time));
            mk = m2;
        }
        /* never later than the step as written: program order's own
           simulation, where it is an order of the graph (its explicit
           edges may point backwards) */
        for (i = 0; i < n; i++) h->list[i] = i;
        if ((mp = cc__stream_sim(S->ctx, &S->p, h->list, h->cur, NULL)) == -2) return CC_ERR_OUT_OF_MEMORY;
        if (mp >= 0 && mp < mk && cc__heur_fits(h, h->cur)) {
            memcpy(h->best, h->cur, (size_t)n * sizeof(cc__time));
            if (mp > lb) S->proven = 0;
            mk = mp;
        }
        if ((rc = cc__output_order(S->ctx, &S->p, h->best, h->tk, h->list)) != CC_OK) return rc;
    }
    if (S->d.start_from) {
        /* never later than start_from where it fits: its own times, where
           the simulation of an order came out later than them */
        for (i = 0; i < n; i++) h->cur[i] = (cc__time)llround(S->d.start_from->start_us[i] * CONCERTO__TICKS_PER_US);
        if (cc__makespan(&S->p, h->cur) < mk && cc__heur_fits(h, h->cur)) {
            memcpy(h->best, h->cur, (size_t)n * sizeof(cc__time));
            mk = cc__makespan(&S->p, h->cur);
            S->proven = mk <= lb;
            if ((rc = cc__output_order(S->ctx, &S->p, h->best, h->tk, h->list)) != CC_OK) return rc;
        }
    }
    for (i = 0; i < n; i++) {
        out->start_us[i] = (double)h->best[i] / CONCERTO__TICKS_PER_US;
        out->order[i] = cc_graph_op(S->g, h->list[i]);
    }
    out->n_ops = n;
    out->makespan_us = (double)mk / CONCERTO__TICKS_PER_US;
    if (mk <= lb) S->proven = 1;
    if (S->proven) lb = mk;
    out->lower_bound_us = (double)lb / CONCERTO__TICKS_PER_US;
    out->lb_critical_path_us = (double)S->cp / CONCERTO__TICKS_PER_US;
    out->lb_resource_us = (double)cc__round_up(S->rlb, S->p.grain) / CONCERTO__TICKS_PER_US;
    out->proven_optimal = S->proven;
    if (S->g->n_mb > 0) {
        cc__mev* ev = (cc__mev*)cc__alloc(S->ctx, (2 * (size_t)S->g->n_mb + 1) * sizeof *ev);
        if (!ev) return CC_ERR_OUT_OF_MEMORY;
        out->peak_bytes = cc__mem_peak(&S->p, h->best, ev, NULL);
        cc__free(S->ctx, ev);
    }
    S->st->memory_repairs = h->mem_repairs;
    S->st->n_schedules = h->n_sched;
    S->st->n_nodes = S->nodes;
    S->st->n_conflicts = S->conflicts;
    S->st->exact_wins_bnb = S->wins[0];
    S->st->exact_wins_lp = S->wins[1];
    S->st->solve_ms = (cc__now_s() - t0) * 1000.0;
    return CC_OK;
}

/* The solve's arrays, the bounds; CC_ERR_OUT_OF_MEMORY or CC_OK. */
static cc_result cc__solve_init(cc__solve* S) {
    int i, n = S->g->n;
    cc__prob_of_graph(S->g, &S->p);
    if (S->g->n_mb > 0) S->p.mem_cap = S->d.memory_cap_bytes;
    if (!cc__heur_init(S->ctx, &S->h, &S->p, NULL)) return CC_ERR_OUT_OF_MEMORY;
    S->rank = (int*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof *S->rank);
    S->out->start_us = (double*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof(double));
    S->out->order = (cc_op*)cc__alloc(S->ctx, ((size_t)n + 1) * sizeof(cc_op));
    if (!S->rank || !S->out->start_us || !S->out->order) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < n; i++) S->rank[S->g->topo[i]] = i;
    S->h.rank = S->rank;
    S->cp = cc__prob_critical_path(S->ctx, &S->p, S->g->topo);
    S->rlb = cc__prob_resource_lb(&S->p);
    if (S->cp < 0) return CC_ERR_OUT_OF_MEMORY;
    CONCERTO_ASSERT(S->rlb < CONCERTO__TIME_MAX);   /* capacities are checked when ops are added */
    S->lb = cc__round_up(S->cp > S->rlb ? S->cp : S->rlb, S->p.grain);
    S->h.lb = S->lb;
    return CC_OK;
}

/* CC_ERR_BAD_DURATION where g has compute ops and all of them last 0 (a
   graph never profiled): cc_sched_desc.allow_zero_durations. */
static cc_result cc__sched_durations_set(cc_context* ctx, const cc_graph* g) {
    int i, n_compute = 0, first = -1;
    for (i = 0; i < g->n; i++) {
        if (g->coll_of[i] >= 0) continue;
        if (g->dur_us[i] > 0) return CC_OK;
        if (first < 0) first = i;
        n_compute++;
    }
    if (n_compute == 0) return CC_OK;
    return CONCERTO__FAIL(ctx, CC_ERR_BAD_DURATION, "cc_sched_solve: graph '%s': all %d compute ops (op '%s' first) last 0 us, "
                          "so every order ties and the schedule would be arbitrary: profile the graph (cc_exec_profile_ops) "
                          "or set durations (cc_op_set_duration), or set cc_sched_desc.allow_zero_durations", g->names.s + g->gname,
                          n_compute, cc__name(g, first));
}

CONCERTO_API cc_result cc_sched_solve_stats(cc_context* ctx, cc_graph* g, const cc_sched_desc* desc, cc_schedule* out,
                                            cc_sched_stats* stats) {
    cc__solve S;
    cc_sched_stats st;
    cc_schedule free_s;
    double t0 = cc__now_s();
    cc_result rc;
    if (stats) memset(stats, 0, sizeof *stats);
    memset(&free_s, 0, sizeof free_s);
    if ((rc = cc__graph_args(ctx, g, "cc_sched_solve")) != CC_OK) return rc;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: out is NULL");
    memset(out, 0, sizeof *out);
    memset(&S, 0, sizeof S);
    memset(&st, 0, sizeof st);
    S.st = &st;
    if (desc) S.d = *desc;
    if ((rc = cc__sched_check(ctx, &S.d)) != CC_OK) return rc;
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    if (!S.d.allow_zero_durations && (rc = cc__sched_durations_set(ctx, g)) != CC_OK) return rc;
    cc__sched_resolve(&S.d, g->n);
    if ((rc = cc__sched_memory_args(ctx, g, &S.d, &st)) != CC_OK) return rc;
    if (S.d.memory_cap_bytes > 0 && g->n_mb > 0) {
        /* first without the cap: where that schedule fits (and is no later
           than start_from), it is the result (a cap at or above its peak
           changes nothing); else it seeds the capped search, which
           repairs it */
        cc_sched_desc free_d;
        cc_sched_stats free_st;
        if (desc) free_d = *desc;
        else memset(&free_d, 0, sizeof free_d);
        free_d.memory_cap_bytes = 0;
        if ((rc = cc_sched_solve_stats(ctx, g, &free_d, &free_s, &free_st)) != CC_OK) return rc;
        double from_mk = -1;
        if (S.d.start_from) {
            int i;
            for (i = 0; i < g->n; i++)
                if (S.d.start_from->start_us[i] + g->dur_us[i] > from_mk) from_mk = S.d.start_from->start_us[i] + g->dur_us[i];
        }
        if (free_s.peak_bytes <= S.d.memory_cap_bytes && (from_mk < 0 || free_s.makespan_us <= from_mk)) {
            *out = free_s;
            if (stats) *stats = free_st;
            return CC_OK;
        }
        S.seed = &free_s;
        if (S.d.time_limit_s > 0) {
            double left = S.d.time_limit_s - (cc__now_s() - t0);
            S.d.time_limit_s = left > 1e-3 ? left : 1e-3;
        }
    }
    S.ctx = ctx; S.g = g; S.out = out;
    S.t_end = S.d.time_limit_s > 0 ? cc__now_s() + S.d.time_limit_s : 0;
    rc = cc__solve_init(&S);
    if (rc == CC_OK) rc = cc__solve_first(&S);
    if (rc == CC_OK && S.h.best_mk == CONCERTO__TIME_MAX && S.p.mem_cap > 0 && S.h.mem_min_peak != UINT64_MAX)
        rc = cc__sched_no_fit(ctx, g, &S.p, S.h.mem_min, S.h.mem_min_peak);
    if (rc == CC_OK && S.h.best_mk == CONCERTO__TIME_MAX)
        rc = CONCERTO__FAIL(ctx, CC_ERR_INFEASIBLE, "cc_sched_solve: no schedule could be generated");
    if (rc == CC_OK) rc = cc__solve_improve(&S);
    if (rc == CC_OK && S.h.oom) rc = CC_ERR_OUT_OF_MEMORY;   /* a repair under the cap could not run */
    if (rc == CC_OK) rc = cc__solve_output(&S, t0);
    cc__free(ctx, S.rank);
    cc__heur_free(&S.h);
    cc_schedule_release(ctx, &free_s);
    if (rc == CC_OK) {
        if (stats) *stats = st;
        return CC_OK;
    }
    cc_schedule_release(ctx, out);
    if (rc == CC_ERR_OUT_OF_MEMORY)
        return CONCERTO__FAIL(ctx, rc, "cc_sched_solve (%s): out of memory", cc__method_name(S.d.method));
    return rc;   /* its message is recorded */
}

CONCERTO_API cc_result cc_sched_solve(cc_context* ctx, cc_graph* g, const cc_sched_desc* desc, cc_schedule* out) {
    return cc_sched_solve_stats(ctx, g, desc, out, NULL);
}

/* >>check
   Written apart from the solvers: edges from the graph, capacity by a sweep
   over start and end events. */

typedef struct cc__cev { cc__time t; int delta_sign; int op; } cc__cev;

static int cc__cev_cmp(const void* a, const void* b) {
    const cc__cev* x = (const cc__cev*)a;
    const cc__cev* y = (const cc__cev*)b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->delta_sign != y->delta_sign) return x->delta_sign < y->delta_sign ? -1 : 1;   /* ends first */
    return x->op < y->op ? -1 : (x->op > y->op);
}

CONCERTO_API cc_result cc_schedule_check(cc_context* ctx, cc_graph* g, const double* start_us, double* makespan_us) {
    cc__time* st;
    cc__cev* ev;
    int64_t use[CONCERTO_MAX_RESOURCES];
    int i, e, r, n, k, m = 0;
    cc__time mk = 0;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_schedule_check")) != CC_OK) return rc;
    if (!start_us) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_schedule_check: start_us is NULL");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n; k = g->k;
    st = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *st);
    ev = (cc__cev*)cc__alloc(ctx, (2 * (size_t)n + 1) * sizeof *ev);
    if (!st || !ev) { cc__free(ctx, st); cc__free(ctx, ev); return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_schedule_check: out of memory"); }
    for (i = 0; i < n; i++) {
        if (!(start_us[i] >= 0.0) || start_us[i] > 1e15) {
            rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "op '%s' starts at %g us: not a finite time >= 0", cc__name(g, i), start_us[i]);
            goto done;
        }
        st[i] = (cc__time)llround(start_us[i] * CONCERTO__TICKS_PER_US);
        if (st[i] + g->dur[i] > mk) mk = st[i] + g->dur[i];
    }
    for (i = 0; i < n; i++)
        for (e = g->pred_off[i]; e < g->pred_off[i + 1]; e++) {
            int q = g->pred[e];
            if (st[i] < st[q] + g->dur[q]) {
                rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "op '%s' starts at %.3f us before its dependency '%s' ends at %.3f us",
                              cc__name(g, i), (double)st[i] / CONCERTO__TICKS_PER_US, cc__name(g, q),
                              (double)(st[q] + g->dur[q]) / CONCERTO__TICKS_PER_US);
                goto done;
            }
        }
    for (i = 0; i < n; i++) {
        if (g->dur[i] == 0) continue;
        ev[m].t = st[i]; ev[m].delta_sign = 1; ev[m].op = i; m++;
        ev[m].t = st[i] + g->dur[i]; ev[m].delta_sign = -1; ev[m].op = i; m++;
    }
    qsort(ev, (size_t)m, sizeof *ev, cc__cev_cmp);
    for (r = 0; r < k; r++) use[r] = 0;
    for (i = 0; i < m; i++) {
        const int32_t* dm = g->dem + (size_t)ev[i].op * k;
        for (r = 0; r < k; r++) use[r] += ev[i].delta_sign * dm[r];
        if (i + 1 < m && ev[i + 1].t == ev[i].t) continue;   /* settle the instant first */
        for (r = 0; r < k; r++)
            if (use[r] > g->cap[r]) {
                /* name the ops running at this instant on r */
                char list[256];
                size_t len = 0;
                int j;
                list[0] = 0;
                for (j = 0; j < n && len + 4 < sizeof list; j++)
                    if (g->dem[(size_t)j * k + r] && g->dur[j] && st[j] <= ev[i].t && ev[i].t < st[j] + g->dur[j]) {
                        int w = snprintf(list + len, sizeof list - len, "%s'%s'", len ? ", " : "", cc__name(g, j));
                        if (w < 0 || (size_t)w >= sizeof list - len) break;
                        len += (size_t)w;
                    }
                rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_SCHEDULE,
                              "resource '%s' holds %lld units at %.3f us, above its capacity %d: %s",
                              cc_graph_resource_name(g, r), (long long)use[r], (double)ev[i].t / CONCERTO__TICKS_PER_US, g->cap[r], list);
                goto done;
            }
    }
    if (makespan_us) *makespan_us = (double)mk / CONCERTO__TICKS_PER_US;
    rc = CC_OK;
done:
    cc__free(ctx, st); cc__free(ctx, ev);
    return rc;
}

/* Memory: each transient buffer alive from the earliest start to the
   latest end of the ops that access it (from the graph's accesses, not
   the solvers' derived arrays), swept over its events. */
CONCERTO_API cc_result cc_memory_check(cc_context* ctx, cc_graph* g, const double* start_us, const double* end_us,
                                       uint64_t cap_bytes, uint64_t* peak_bytes, double* at_us) {
    cc__time *lo = NULL, *hi = NULL;
    cc__cev* ev = NULL;
    size_t a;
    int b, m = 0, i;
    int64_t cur = 0, best = 0;
    cc__time at = 0;
    cc_result rc;
    if (peak_bytes) *peak_bytes = 0;
    if (at_us) *at_us = 0;
    if ((rc = cc__graph_args(ctx, g, "cc_memory_check")) != CC_OK) return rc;
    if (!start_us) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_memory_check: start_us is NULL");
    if (g->n_buf == 0) return CC_OK;
    lo = (cc__time*)cc__alloc(ctx, (size_t)g->n_buf * sizeof *lo);
    hi = (cc__time*)cc__alloc(ctx, (size_t)g->n_buf * sizeof *hi);
    ev = (cc__cev*)cc__alloc(ctx, 2 * (size_t)g->n_buf * sizeof *ev);
    if (!lo || !hi || !ev) { rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_memory_check: out of memory"); goto done; }
    for (b = 0; b < g->n_buf; b++) { lo[b] = CONCERTO__TIME_MAX; hi[b] = -1; }
    for (i = 0; i < g->n; i++) {
        double e = end_us ? end_us[i] : start_us[i] + g->dur_us[i];
        if (!(start_us[i] >= 0 && start_us[i] < 1e12) || !(e >= start_us[i] && e < 1e12)) {
            rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_memory_check: op '%s' has start %g us and end %g us (want 0 <= start "
                                "<= end, finite)", cc__name(g, i), start_us[i], e);
            goto done;
        }
    }
    for (a = 0; a < g->n_acc; a++) {
        const cc__access* x = &g->acc[a];
        int o = (int)x->op;
        cc__time s0 = (cc__time)llround(start_us[o] * CONCERTO__TICKS_PER_US);
        cc__time e0 = end_us ? (cc__time)llround(end_us[o] * CONCERTO__TICKS_PER_US) : s0 + g->dur[o];
        if (!g->buf_transient[x->buffer]) continue;
        if (s0 < lo[x->buffer]) lo[x->buffer] = s0;
        if (e0 > hi[x->buffer]) hi[x->buffer] = e0;
    }
    for (b = 0; b < g->n_buf; b++) {
        if (!g->buf_transient[b] || hi[b] < 0) continue;
        if (hi[b] <= lo[b]) hi[b] = lo[b] + 1;   /* an instant still holds it */
        ev[m].t = lo[b]; ev[m].delta_sign = 1; ev[m].op = b; m++;
        ev[m].t = hi[b]; ev[m].delta_sign = -1; ev[m].op = b; m++;
    }
    qsort(ev, (size_t)m, sizeof *ev, cc__cev_cmp);
    for (i = 0; i < m; i++) {
        cur += ev[i].delta_sign * (int64_t)g->buf_bytes[ev[i].op];
        if (cur > best) { best = cur; at = ev[i].t; }
    }
    if (peak_bytes) *peak_bytes = (uint64_t)best;
    if (at_us) *at_us = (double)at / CONCERTO__TICKS_PER_US;
    if (cap_bytes > 0 && (uint64_t)best > cap_bytes) {
        char list[CONCERTO__MSG_MAX - 200];
        size_t len = 0;
        int n_alive = 0;
        list[0] = 0;
        for (b = 0; b < g->n_buf; b++) {
            int w;
            if (!g->buf_transient[b] || hi[b] < 0 || !(lo[b] <= at && at < hi[b])) continue;
            n_alive++;
            if (len + 64 >= sizeof list) continue;
            w = snprintf(list + len, sizeof list - len, "%s'%s' (%llu)", len ? ", " : "", g->names.s + g->buf_name[b],
                         (unsigned long long)g->buf_bytes[b]);
            if (w > 0) len += (size_t)w < sizeof list - len ? (size_t)w : sizeof list - len - 1;
        }
        rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "memory: %llu bytes alive at %.3f us, above the cap of %llu: %d "
                            "buffers: %s", (unsigned long long)best, (double)at / CONCERTO__TICKS_PER_US,
                            (unsigned long long)cap_bytes, n_alive, list);
    }
done:
    cc__free(ctx, lo); cc__free(ctx, hi); cc__free(ctx, ev);
    return rc;
}

/* >>sim
   cc_simulate: the stream simulation (>>prob) of a caller's issue order,
   with the order checked and a deadlock explained. */

/* An endpoint of an op's interval: +1 at its start, -1 at its end; comm:
   the op has a collective. Sorted by time, ends before starts. */
typedef struct cc__span_pt { double t; int delta, comm; } cc__span_pt;
static int cc__span_cmp(const void* a, const void* b) {
    const cc__span_pt* x = (const cc__span_pt*)a;
    const cc__span_pt* y = (const cc__span_pt*)b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->delta - y->delta;
}

CONCERTO_API cc_result cc_exposed_comm_us(cc_context* ctx, cc_graph* g, const double* start_us, const double* end_us,
                                          double* exposed_us) {
    cc__span_pt* pt;
    int i, n, m = 0, comm = 0, compute = 0;
    double exposed = 0;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_exposed_comm_us")) != CC_OK) return rc;
    if (!start_us || !exposed_us) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exposed_comm_us: start_us or exposed_us is NULL");
    n = g->n;
    if (!(pt = (cc__span_pt*)cc__alloc(ctx, (2 * (size_t)n + 1) * sizeof *pt)))
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_exposed_comm_us: out of memory");
    for (i = 0; i < n; i++) {
        double s = start_us[i], e = end_us ? end_us[i] : start_us[i] + g->dur_us[i];
        if (!(s == s) || !(e == e) || e < s) {
            cc__free(ctx, pt);
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exposed_comm_us: op '%s' runs from %g to %g us: not an interval",
                                  cc__name(g, i), s, e);
        }
        if (e == s) continue;
        pt[m].t = s; pt[m].delta = 1; pt[m++].comm = g->coll_of[i] >= 0;
        pt[m].t = e; pt[m].delta = -1; pt[m++].comm = g->coll_of[i] >= 0;
    }
    qsort(pt, (size_t)m, sizeof *pt, cc__span_cmp);
    for (i = 0; i < m; i++) {
        if (i > 0 && comm > 0 && compute == 0) exposed += pt[i].t - pt[i - 1].t;
        if (pt[i].comm) comm += pt[i].delta; else compute += pt[i].delta;
    }
    cc__free(ctx, pt);
    *exposed_us = exposed;
    return CC_OK;
}

CONCERTO_API cc_result cc_simulate(cc_context* ctx, cc_graph* g, const cc_op* issue_order, int n_order,
                                   double* start_us, double* makespan_us) {
    cc__prob p;
    int* order = NULL;
    cc__time* st = NULL;
    cc__time mk;
    int i, bad, blocked[2] = { -1, -1 };
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_simulate")) != CC_OK) return rc;
    if (!issue_order) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_simulate: issue_order is NULL");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    cc__prob_of_graph(g, &p);
    if ((bad = cc__prob_shape(&p, NULL, NULL)) >= 0)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_simulate: op '%s' is not on a single stream of capacity 1", cc__name(g, bad));
    order = (int*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof(int));
    st = (cc__time*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof(cc__time));
    if (!order || !st) { rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_simulate: out of memory"); goto done; }
    if ((rc = cc__graph_order(g, issue_order, n_order, "cc_simulate", "issue order", order)) != CC_OK) goto done;
    mk = cc__stream_sim(ctx, &p, order, st, blocked);
    if (mk == -2) { rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_simulate: out of memory"); goto done; }
    if (mk == -1) {
        int rr = blocked[0] >= 0 ? cc__op_stream(g, blocked[0]) : -1;
        rc = CONCERTO__FAIL(ctx, CC_ERR_DEADLOCK,
                      "cc_simulate: op '%s', next on stream '%s', waits for its dependency '%s', which cannot "
                      "finish first: the issue order contradicts the dependencies",
                      blocked[0] >= 0 ? cc__name(g, blocked[0]) : "?", rr >= 0 ? cc_graph_resource_name(g, rr) : "none",
                      blocked[1] >= 0 ? cc__name(g, blocked[1]) : "?");
        goto done;
    }
    if (start_us) for (i = 0; i < g->n; i++) start_us[i] = (double)st[i] / CONCERTO__TICKS_PER_US;
    if (makespan_us) *makespan_us = (double)mk / CONCERTO__TICKS_PER_US;
    rc = CC_OK;
done:
    cc__free(ctx, order); cc__free(ctx, st);
    return rc;
}

/* >>cluster
   The cluster cost model: presets, checks, the collectives' algorithms and
   the compute roofline. Arithmetic only; the formulas are stated with the
   declarations (>>api, "cluster cost model"). */

#define CONCERTO__FLOPS_EFF_DEFAULT 0.7     /* an assumption: a large matmul's share of the dense peak */
#define CONCERTO__MEM_EFF_DEFAULT 0.8       /* an assumption: a streaming kernel's share of HBM bandwidth */
#define CONCERTO__OVERLAP_DEFAULT 1.2       /* the Concerto paper's alpha */

/* Presets. Device figures: dense peaks (no sparsity), HBM bandwidth.
   Links: GB/s per GPU and direction. Link efficiency: NCCL's protocol
   overhead; an NCCL maintainer puts it at ~20% on NVLink ("450GB/s is the
   line rate ... NCCL can get an effective NVLink bandwidth of 370GB/s",
   NVIDIA/nccl-tests issue 212), 370/450 = 0.82, and NVIDIA's engineers
   expect "46-48GB/s per NIC" of NDR's 50 GB/s (NVIDIA/nccl-tests issue 290),
   47/50 = 0.94. Per-step latencies: NCCL's tuning model (src/graph/tuning.cc)
   puts a ring step at 0.4 (LL) to 5.7 us (Simple) on NVLink and 0.9 to 6.6
   us on the network; the presets take 1 us inside a node and 3 us between
   nodes, the small-message protocols' range plus a switch hop. launch_us 4
   is an assumption (a CUDA kernel launch costs a few us). */
static const cc_cluster_spec cc__cluster_presets[] = {
    {   /* The Concerto paper's node: 8 x A800-80GB SXM, NVLink 400 GB/s, 800 Gb/s between nodes.
           The A800 is the A100 with NVLink capped at 400 GB/s (both directions): its compute and
           HBM are the A100-80GB SXM's (NVIDIA A100 datasheet: FP32 19.5 TFLOPS, FP16/BF16 tensor
           312 TFLOPS dense, HBM2e 2,039 GB/s). 800 Gb/s per node, 8 GPUs: 100 Gb/s = 12.5 GB/s
           each (the paper gives the node's total; read as 4 x 200 Gb/s HDR). */
        "a800", { "A800-80GB-SXM", 19.5, 312.0, 2039.0, CONCERTO__FLOPS_EFF_DEFAULT, CONCERTO__MEM_EFF_DEFAULT, 4.0 },
        8, { 1.0, 0, 200.0, 0.82 }, { 3.0, 0, 12.5, 0.94 }, CONCERTO__OVERLAP_DEFAULT },
    {   /* DGX A100: 8 x A100-80GB SXM (NVIDIA A100 datasheet: FP32 19.5, FP16/BF16 tensor 312 TFLOPS
           dense, HBM2e 2,039 GB/s; NVLink3 600 GB/s both directions = 300 each way), 8 x 200 Gb/s
           HDR ConnectX-6 for compute traffic (DGX A100 user guide): 25 GB/s per GPU. */
        "a100", { "A100-80GB-SXM", 19.5, 312.0, 2039.0, CONCERTO__FLOPS_EFF_DEFAULT, CONCERTO__MEM_EFF_DEFAULT, 4.0 },
        8, { 1.0, 0, 300.0, 0.82 }, { 3.0, 0, 25.0, 0.94 }, CONCERTO__OVERLAP_DEFAULT },
    {   /* DGX H100: 8 x H100-SXM5-80GB (NVIDIA H100 datasheet/whitepaper: FP32 66.9 TFLOPS, FP16/BF16
           tensor 989.4 TFLOPS dense (1,979 with sparsity), HBM3 3,350 GB/s; NVLink4 900 GB/s both
           directions = 450 each way), 8 x 400 Gb/s NDR ConnectX-7: 50 GB/s per GPU. */
        "h100", { "H100-SXM-80GB", 66.9, 989.4, 3350.0, CONCERTO__FLOPS_EFF_DEFAULT, CONCERTO__MEM_EFF_DEFAULT, 4.0 },
        8, { 1.0, 0, 450.0, 0.82 }, { 3.0, 0, 50.0, 0.94 }, CONCERTO__OVERLAP_DEFAULT },
};
#define CONCERTO__N_CLUSTER_PRESETS ((int)(sizeof cc__cluster_presets / sizeof cc__cluster_presets[0]))

CONCERTO_API const char* const* cc_cluster_preset_names(void) {
    static const char* const names[] = { "a800", "a100", "h100", NULL };
    return names;
}

static int cc__ieq(const char* a, const char* b) {
    for (; *a && *b; a++, b++) {
        int x = *a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a, y = *b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

CONCERTO_API cc_result cc_cluster_preset(cc_context* ctx, const char* name, cc_cluster_spec* out) {
    int i;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cluster_preset: out is NULL");
    memset(out, 0, sizeof *out);
    if (!name) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cluster_preset: no name given (known: a800, a100, h100)");
    for (i = 0; i < CONCERTO__N_CLUSTER_PRESETS; i++)
        if (cc__ieq(name, cc__cluster_presets[i].name)) { *out = cc__cluster_presets[i]; return CC_OK; }
    return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cluster_preset: unknown cluster '%s' (known: a800, a100, h100)", name);
}

/* x is a finite number > 0 (positive) or >= 0 */
static int cc__finite(double x) { return x == x && x < HUGE_VAL && x > -HUGE_VAL; }

CONCERTO_API cc_result cc_cluster_check(cc_context* ctx, const cc_cluster_spec* s) {
    const char* who = "cc_cluster_check";
    const char* nm;
    int i;
    struct { const char* field; double v; } f[5];
    if (!s) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: spec is NULL", who);
    nm = s->name ? s->name : "(unnamed)";
    if (s->gpus_per_node < 1)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: cluster '%s': gpus_per_node must be >= 1, got %d", who, nm, s->gpus_per_node);
    /* must be > 0 */
    f[0].field = "device.fp32_tflops"; f[0].v = s->device.fp32_tflops;
    f[1].field = "device.fp16_tflops"; f[1].v = s->device.fp16_tflops;
    f[2].field = "device.mem_gbps";    f[2].v = s->device.mem_gbps;
    f[3].field = "intra.gbps";         f[3].v = s->intra.us_per_byte > 0 ? 1 : s->intra.gbps;
    f[4].field = "inter.gbps";         f[4].v = s->inter.us_per_byte > 0 ? 1 : s->inter.gbps;
    for (i = 0; i < 5; i++)
        if (!cc__finite(f[i].v) || f[i].v <= 0)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: cluster '%s': %s must be a finite number > 0, got %g", who, nm,
                                  f[i].field, f[i].v);
    /* must be >= 0 */
    f[0].field = "device.launch_us";   f[0].v = s->device.launch_us;
    f[1].field = "intra.latency_us";   f[1].v = s->intra.latency_us;
    f[2].field = "inter.latency_us";   f[2].v = s->inter.latency_us;
    f[3].field = "intra.us_per_byte";  f[3].v = s->intra.us_per_byte;
    f[4].field = "inter.us_per_byte";  f[4].v = s->inter.us_per_byte;
    for (i = 0; i < 5; i++)
        if (!cc__finite(f[i].v) || f[i].v < 0)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: cluster '%s': %s must be a finite number >= 0, got %g", who, nm,
                                  f[i].field, f[i].v);
    /* fractions in [0, 1], 0 meaning the default */
    f[0].field = "device.flops_efficiency"; f[0].v = s->device.flops_efficiency;
    f[1].field = "device.mem_efficiency";   f[1].v = s->device.mem_efficiency;
    f[2].field = "intra.efficiency";        f[2].v = s->intra.efficiency;
    f[3].field = "inter.efficiency";        f[3].v = s->inter.efficiency;
    for (i = 0; i < 4; i++)
        if (!(f[i].v >= 0 && f[i].v <= 1))
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: cluster '%s': %s must be in [0, 1] (0: the default), got %g", who,
                                  nm, f[i].field, f[i].v);
    if (!(s->overlap_slowdown == 0 || (s->overlap_slowdown >= 1 && cc__finite(s->overlap_slowdown))))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: cluster '%s': overlap_slowdown must be >= 1 (0: the default %g), got %g",
                              who, nm, CONCERTO__OVERLAP_DEFAULT, s->overlap_slowdown);
    return CC_OK;
}

CONCERTO_API double cc_cluster_overlap_slowdown(const cc_cluster_spec* s) {
    return !s || s->overlap_slowdown == 0 ? CONCERTO__OVERLAP_DEFAULT : s->overlap_slowdown;
}

/* A link's rate in bytes per us (1 GB/s = 1e3 bytes/us). */
static double cc__link_rate(const cc_link* l) {
    if (l->us_per_byte > 0) return 1.0 / l->us_per_byte;
    return l->gbps * (l->efficiency > 0 ? l->efficiency : 1.0) * 1e3;
}

/* A link's inverse bandwidth in us per byte; 0 for a link of zeros. */
static double cc__link_us_per_byte(const cc_link* l) {
    double rate;
    if (l->us_per_byte > 0 || !(l->gbps > 0)) return l->us_per_byte;
    rate = cc__link_rate(l);
    return rate > 0 ? 1.0 / rate : 0;
}

/* The flat alpha-beta model of kind on n ranks of one link (see cc_coll_us). */
static double cc__link_flat_us(const cc_link* link, cc_coll_kind kind, double bytes, int n_ranks) {
    double a, b, n = (double)n_ranks;
    if (!link || n_ranks <= 1) return 0;
    a = link->latency_us;
    b = cc__link_us_per_byte(link);
    switch (kind) {
        case CC_COLL_ALL_REDUCE: return 2.0 * (n - 1) * (a + bytes / n * b);
        case CC_COLL_REDUCE_SCATTER:
        case CC_COLL_ALL_GATHER:
        case CC_COLL_ALL_TO_ALL: return (n - 1) * (a + bytes * b);
        case CC_COLL_BROADCAST: return (n - 1) * a + bytes * b;
        case CC_COLL_SEND:
        case CC_COLL_RECV: return a + bytes * b;
        default: return 0;
    }
}

static const char* cc__algo_name(cc_coll_algo a) {
    switch (a) {
        case CC_ALGO_AUTO: return "auto";
        case CC_ALGO_RING: return "ring";
        case CC_ALGO_TREE: return "tree";
        case CC_ALGO_HIERARCHICAL: return "hierarchical";
        case CC_ALGO_FLAT: return "flat";
        default: return "unknown";
    }
}

/* The time of kind with algorithm algo (not AUTO) on the group, or -1
   where algo does not apply. n >= 2, r resolved and valid. */
static double cc__cluster_algo_us(const cc_link* in, const cc_link* ex, cc_coll_kind kind, double S, int n, int r,
                                  cc_coll_algo algo) {
    int k = n / r;
    double bi = cc__link_rate(in), be = cc__link_rate(ex);
    double li = in->latency_us, le = ex->latency_us;
    double c, L, nn = (double)n, rr = (double)r, kk = (double)k;
    if (algo == CC_ALGO_FLAT) return cc__link_flat_us(k == 1 ? in : ex, kind, S, n);
    switch (kind) {
        case CC_COLL_SEND:
        case CC_COLL_RECV:
            if (algo != CC_ALGO_RING) return -1;
            return k == 1 ? li + S / bi : le + S / be;
        case CC_COLL_ALL_TO_ALL: {
            double t_in = (rr - 1) * S / bi, t_out = (nn - rr) * S / be;
            if (algo != CC_ALGO_RING) return -1;
            return (k > 1 ? le : li) + (t_in > t_out ? t_in : t_out);
        }
        default: break;
    }
    if (algo == CC_ALGO_RING) {
        if (k == 1) { c = 1.0 / bi; L = li; }
        else {
            double a = (rr - 1) / (rr * bi), b = 1.0 / (rr * be);
            c = a > b ? a : b;
            L = (kk * le + (nn - kk) * li) / nn;
        }
        switch (kind) {
            case CC_COLL_ALL_REDUCE: return 2 * (nn - 1) * L + 2 * (nn - 1) / nn * S * c;
            case CC_COLL_REDUCE_SCATTER:
            case CC_COLL_ALL_GATHER: return (nn - 1) * L + (nn - 1) * S * c;
            case CC_COLL_BROADCAST: return (nn - 1) * L + S * c;
            default: return -1;
        }
    }
    if (algo == CC_ALGO_TREE) {
        double depth = 0, t_in = 0, t_out = 0;
        if (kind != CC_COLL_ALL_REDUCE) return -1;
        while ((1 << (int)depth) < k) depth += 1;          /* ceil(log2 k) */
        if (r > 1) t_in = 2 * S / bi;
        if (k > 1) t_out = (k == 2 ? S : 2 * S) / (rr * be);
        return 2 * ((rr - 1) * li + depth * le) + (t_in > t_out ? t_in : t_out);
    }
    if (algo == CC_ALGO_HIERARCHICAL) {
        if (k == 1 || r == 1) return -1;
        switch (kind) {
            case CC_COLL_ALL_REDUCE:
                return 2 * ((rr - 1) * li + (rr - 1) / rr * S / bi) + 2 * (kk - 1) * le + 2 * (kk - 1) / kk * (S / rr) / be;
            case CC_COLL_REDUCE_SCATTER:
            case CC_COLL_ALL_GATHER:
                return (rr - 1) * (li + kk * S / bi) + (kk - 1) * (le + S / be);
            default: return -1;
        }
    }
    return -1;
}

/* Checks the group and resolves ranks_per_node into *r: 0 is packed into
   nodes of gpn GPUs (gpn 0: one node). */
static cc_result cc__coll_group(cc_context* ctx, const char* who, int gpn, cc_group_shape g, int* r) {
    int rr = g.ranks_per_node;
    if (g.n_ranks < 1)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: group.n_ranks must be >= 1, got %d", who, g.n_ranks);
    if (rr == 0) rr = gpn == 0 || g.n_ranks < gpn ? g.n_ranks : gpn;
    if (rr < 1 || rr > g.n_ranks || g.n_ranks % rr != 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG,
                              "%s: group.ranks_per_node must divide group.n_ranks (%d) and be in 1..n_ranks, got %d", who,
                              g.n_ranks, rr);
    if (gpn > 0 && rr > gpn)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG,
                              "%s: group.ranks_per_node %d is more than a node has (gpus_per_node %d)", who, rr, gpn);
    *r = rr;
    return CC_OK;
}

/* CC_OK, or CC_ERR_INVALID_ARG naming the field of a link (what names it)
   that is negative, NaN or infinite; need_bw: it must have a bandwidth. */
static cc_result cc__link_check(cc_context* ctx, const char* who, const char* what, const cc_link* l, int need_bw) {
    struct { const char* field; double v; } f[3];
    int i;
    f[0].field = "latency_us"; f[0].v = l->latency_us;
    f[1].field = "us_per_byte"; f[1].v = l->us_per_byte;
    f[2].field = "gbps"; f[2].v = l->gbps;
    for (i = 0; i < 3; i++)
        if (!cc__finite(f[i].v) || f[i].v < 0)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: %s.%s must be a finite number >= 0, got %g", who, what,
                                  f[i].field, f[i].v);
    if (!(l->efficiency >= 0 && l->efficiency <= 1))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: %s.efficiency must be in [0, 1] (0: 1), got %g", who, what,
                              l->efficiency);
    if (need_bw && !(l->us_per_byte > 0) && !(l->gbps > 0))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: %s has no bandwidth: us_per_byte or gbps must be > 0", who, what);
    return CC_OK;
}

/* The fastest applicable algorithm and its time; n >= 2. */
static cc_coll_algo cc__cluster_best(const cc_link* in, const cc_link* ex, cc_coll_kind kind, double S, int n, int r,
                                     double* us) {
    static const cc_coll_algo algos[] = { CC_ALGO_RING, CC_ALGO_TREE, CC_ALGO_HIERARCHICAL };
    cc_coll_algo best = CC_ALGO_AUTO;
    double bt = -1;
    int i;
    for (i = 0; i < 3; i++) {
        double t = cc__cluster_algo_us(in, ex, kind, S, n, r, algos[i]);
        if (t >= 0 && (bt < 0 || t < bt)) { bt = t; best = algos[i]; }
    }
    *us = bt;
    return best;
}

CONCERTO_API cc_result cc_coll_us(cc_context* ctx, const cc_link* in, const cc_link* ex, int gpus_per_node,
                                  cc_coll_kind kind, uint64_t n_bytes, cc_group_shape group, cc_coll_algo algo,
                                  double* us) {
    const char* who = "cc_coll_us";
    cc_result rc;
    int r = 0, flat = algo == CC_ALGO_FLAT;
    double t;
    if (!us) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: us is NULL", who);
    *us = 0;
    if (!in) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: intra is NULL", who);
    if ((rc = cc__link_check(ctx, who, "intra", in, !flat)) != CC_OK) return rc;
    if (ex && (rc = cc__link_check(ctx, who, "inter", ex, !flat)) != CC_OK) return rc;
    if (gpus_per_node < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: gpus_per_node must be >= 0, got %d", who, gpus_per_node);
    if (kind < CC_COLL_ALL_REDUCE || kind > CC_COLL_ALL_TO_ALL)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: kind %d is not a collective", who, (int)kind);
    if (algo < CC_ALGO_AUTO || algo > CC_ALGO_FLAT)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: algo %d is not an algorithm", who, (int)algo);
    if ((rc = cc__coll_group(ctx, who, gpus_per_node, group, &r)) != CC_OK) return rc;
    if ((kind == CC_COLL_SEND || kind == CC_COLL_RECV || kind == CC_COLL_ALL_TO_ALL) && algo != CC_ALGO_AUTO && !flat)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "%s: %s has one algorithm: pass CC_ALGO_AUTO, not %s", who,
                              cc__coll_name(kind), cc__algo_name(algo));
    if (r < group.n_ranks && !ex)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: the group spans %d nodes and inter is NULL", who,
                              group.n_ranks / r);
    if (!ex) ex = in;
    if (group.n_ranks == 1) return CC_OK;
    if (algo == CC_ALGO_AUTO) cc__cluster_best(in, ex, kind, (double)n_bytes, group.n_ranks, r, &t);
    else t = cc__cluster_algo_us(in, ex, kind, (double)n_bytes, group.n_ranks, r, algo);
    if (t < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED,
                              "%s: algorithm %s does not apply to %s on %d ranks, %d per node (tree: all_reduce "
                              "only; hierarchical: all_reduce, reduce_scatter, all_gather across nodes with several per node)",
                              who, cc__algo_name(algo), cc__coll_name(kind), group.n_ranks, r);
    *us = t;
    return CC_OK;
}

CONCERTO_API cc_coll_algo cc_cluster_coll_algo(const cc_cluster_spec* s, cc_coll_kind kind, uint64_t n_bytes, cc_group_shape group) {
    int r;
    double t;
    if (cc_cluster_check(NULL, s) != CC_OK || kind < CC_COLL_ALL_REDUCE || kind > CC_COLL_ALL_TO_ALL) return CC_ALGO_AUTO;
    if (cc__coll_group(NULL, "", s->gpus_per_node, group, &r) != CC_OK || group.n_ranks <= 1) return CC_ALGO_AUTO;
    return cc__cluster_best(&s->intra, &s->inter, kind, (double)n_bytes, group.n_ranks, r, &t);
}

CONCERTO_API double cc_cluster_compute_us(const cc_cluster_spec* s, double flops, double bytes, int half_precision) {
    double peak, mem, ef, em, t_c, t_m;
    if (cc_cluster_check(NULL, s) != CC_OK || !(flops >= 0) || !(bytes >= 0)) return -1;
    ef = s->device.flops_efficiency > 0 ? s->device.flops_efficiency : CONCERTO__FLOPS_EFF_DEFAULT;
    em = s->device.mem_efficiency > 0 ? s->device.mem_efficiency : CONCERTO__MEM_EFF_DEFAULT;
    peak = (half_precision ? s->device.fp16_tflops : s->device.fp32_tflops) * ef * 1e6;   /* flops per us */
    mem = s->device.mem_gbps * em * 1e3;                                                  /* bytes per us */
    t_c = flops / peak;
    t_m = bytes / mem;
    return s->device.launch_us + (t_c > t_m ? t_c : t_m);
}

CONCERTO_API double cc_busbw_gbps(cc_coll_kind kind, uint64_t n_bytes, int n_ranks, double us) {
    double n = (double)n_ranks, total = (double)n_bytes, f = 1;
    if (n_ranks < 1 || !(us > 0)) return 0;
    switch (kind) {
        case CC_COLL_ALL_REDUCE: f = 2 * (n - 1) / n; break;
        case CC_COLL_REDUCE_SCATTER:
        case CC_COLL_ALL_GATHER: total *= n; f = (n - 1) / n; break;
        default: break;
    }
    return total / us * 1e-3 * f;   /* bytes/us = 1e-3 GB/s */
}


/* >>psplib
   Single-mode PSPLIB .sm files: a line reader, the four sections, and the
   writer. Every error names the file and the line. */

typedef struct cc__reader {
    const char* text; size_t len, pos;
    int line;                   /* number of the line last returned */
    const char* s; size_t n;    /* that line */
} cc__reader;

static int cc__read_line(cc__reader* R) {
    size_t a = R->pos;
    if (R->pos >= R->len) return 0;
    while (R->pos < R->len && R->text[R->pos] != '\n') R->pos++;
    R->s = R->text + a;
    R->n = R->pos - a;
    if (R->n && R->s[R->n - 1] == '\r') R->n--;
    if (R->pos < R->len) R->pos++;
    R->line++;
    return 1;
}

static int cc__line_has(const cc__reader* R, const char* word) {
    size_t w = strlen(word), i;
    for (i = 0; i + w <= R->n; i++) if (!memcmp(R->s + i, word, w)) return 1;
    return 0;
}

/* Whitespace-separated integers of the current line. Returns how many were
   read (at most max), or -1 if a token is not an integer. */
static int cc__line_ints(const cc__reader* R, size_t from, long long* out, int max) {
    size_t i = from;
    int c = 0;
    while (i < R->n) {
        long long v = 0;
        int neg = 0, digits = 0;
        while (i < R->n && (R->s[i] == ' ' || R->s[i] == '\t')) i++;
        if (i >= R->n) break;
        if (R->s[i] == '-' || R->s[i] == '+') { neg = R->s[i] == '-'; i++; }
        while (i < R->n && R->s[i] >= '0' && R->s[i] <= '9') {
            if (v < 100000000000000LL) v = v * 10 + (R->s[i] - '0');
            i++; digits++;
        }
        if (!digits || (i < R->n && R->s[i] != ' ' && R->s[i] != '\t')) return -1;
        if (c < max) out[c] = neg ? -v : v;
        c++;
    }
    return c;
}

static int cc__line_blank(const cc__reader* R) {
    size_t i;
    for (i = 0; i < R->n; i++) if (R->s[i] != ' ' && R->s[i] != '\t') return 0;
    return 1;
}

/* Moves to the first line containing word; 0 at end of text. */
static int cc__seek(cc__reader* R, const char* word) {
    while (cc__read_line(R)) if (cc__line_has(R, word)) return 1;
    return 0;
}

/* Reads the next non-blank line whose first token is a number (data line). */
static int cc__next_data(cc__reader* R) {
    while (cc__read_line(R)) {
        size_t i = 0;
        if (cc__line_blank(R)) continue;
        while (i < R->n && (R->s[i] == ' ' || R->s[i] == '\t')) i++;
        if (R->s[i] == '*') return 0;
        return 1;
    }
    return 0;
}

static int cc__colon_int(const cc__reader* R, long long* v) {
    size_t i;
    for (i = 0; i < R->n; i++) if (R->s[i] == ':') break;
    if (i == R->n) return 0;
    {   /* only the first token counts ("4   R") */
        cc__reader T = *R;
        size_t j = i + 1;
        while (j < T.n && (T.s[j] == ' ' || T.s[j] == '\t')) j++;
        while (j < T.n && T.s[j] != ' ' && T.s[j] != '\t') j++;
        T.n = j;
        return cc__line_ints(&T, i + 1, v, 1) == 1;
    }
}

#define CONCERTO__PSP_MAX_JOBS 1000000

/* What the reader has of a .sm file so far. */
typedef struct cc__psp {
    cc_context* ctx;
    cc__reader R;
    const char* name;
    long long nj, nk;           /* jobs, renewable resources */
    int* succ_off;              /* [nj + 1] CSR of successors */
    int* succ;
    size_t succ_cap, n_succ;
    long long* durs;            /* [nj] */
    int* dems;                  /* [nj * nk] */
    int* req_line;              /* [nj]: the line of each job's requests */
    int caps[CONCERTO_MAX_RESOURCES];
    long long* v;               /* [n_fields + 8] the current line's integers */
    int n_fields;               /* the most a line may hold: a job's successors and three, or a job's demands and three */
} cc__psp;

/* A syntax error: the message, then where the reader stands (the byte
   offset of the start of the current line, or of the end of the text when
   it ran out), so that a cut file is told from a bad one. */
static cc_result cc__psp_fail(cc__psp* P, const char* file, int line, const char* fmt, ...) {
    char msg[CONCERTO__MSG_MAX];
    const cc__reader* R = &P->R;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (R->line > 0 && R->pos < R->len)
        return cc__fail(P->ctx, CC_ERR_PARSE, file, line, "%s (line %d starts at byte %lu)", msg, R->line,
                        (unsigned long)(R->s - R->text));
    if (R->line > 0)
        return cc__fail(P->ctx, CC_ERR_PARSE, file, line, "%s (line %d starts at byte %lu; the text ends at byte %lu: truncated?)",
                        msg, R->line, (unsigned long)(R->s - R->text), (unsigned long)R->len);
    return cc__fail(P->ctx, CC_ERR_PARSE, file, line, "%s (the text ends at byte %lu: truncated?)", msg, (unsigned long)R->len);
}

#define CONCERTO__PSP_ERR(P, ...) cc__psp_fail((P), __FILE__, __LINE__, __VA_ARGS__)

/* The header: the number of jobs and of renewable resources; the arrays. */
static cc_result cc__psp_header(cc__psp* P) {
    cc__reader* R = &P->R;
    if (!cc__seek(R, "jobs (incl. supersource/sink"))
        return CONCERTO__PSP_ERR(P, "%s: no 'jobs (incl. supersource/sink )' line: not a single-mode PSPLIB file", P->name);
    if (!cc__colon_int(R, &P->nj) || P->nj < 2 || P->nj > CONCERTO__PSP_MAX_JOBS)
        return CONCERTO__PSP_ERR(P, "%s:%d: the number of jobs must be an integer 2..%d", P->name, R->line, CONCERTO__PSP_MAX_JOBS);
    if (!cc__seek(R, "- renewable"))
        return CONCERTO__PSP_ERR(P, "%s: no '- renewable' line after line %d", P->name, R->line);
    if (!cc__colon_int(R, &P->nk) || P->nk < 1 || P->nk > CONCERTO_MAX_RESOURCES)
        return CONCERTO__PSP_ERR(P, "%s:%d: the number of renewable resources must be an integer 1..%d", P->name, R->line,
                                 CONCERTO_MAX_RESOURCES);
    P->succ_off = (int*)cc__calloc(P->ctx, (size_t)P->nj + 1, sizeof(int));
    P->durs = (long long*)cc__calloc(P->ctx, (size_t)P->nj, sizeof(long long));
    P->req_line = (int*)cc__calloc(P->ctx, (size_t)P->nj, sizeof(int));
    P->dems = (int*)cc__calloc(P->ctx, (size_t)P->nj * (size_t)P->nk, sizeof(int));
    P->n_fields = (int)(P->nj + 3 > P->nk + 3 ? P->nj + 3 : P->nk + 3);
    P->v = (long long*)cc__calloc(P->ctx, (size_t)P->n_fields + 8, sizeof(long long));
    if (!P->succ_off || !P->durs || !P->dems || !P->req_line || !P->v)
        return CONCERTO__FAIL(P->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", P->name);
    return CC_OK;
}

/* PRECEDENCE RELATIONS: job number, modes (1), successor count, successors. */
static cc_result cc__psp_precedence(cc__psp* P) {
    cc__reader* R = &P->R;
    long long* v = P->v;
    int i, c;
    if (!cc__seek(R, "PRECEDENCE RELATIONS")) return CONCERTO__PSP_ERR(P, "%s: no 'PRECEDENCE RELATIONS:' section", P->name);
    for (i = 0; i < P->nj; i++) {
        int ns;
        if (!cc__next_data(R))
            return CONCERTO__PSP_ERR(P, "%s:%d: precedence section ends after %d of %lld jobs", P->name, R->line, i, P->nj);
        c = cc__line_ints(R, 0, v, P->n_fields);
        if (c < 0) {
            if (i == 0) { i--; continue; }   /* the column header line */
            return CONCERTO__PSP_ERR(P, "%s:%d: precedence line of job %d has a field that is not an integer", P->name, R->line, i + 1);
        }
        if (c < 3) return CONCERTO__PSP_ERR(P, "%s:%d: precedence line needs job number, modes, successor count", P->name, R->line);
        if (v[0] != i + 1) return CONCERTO__PSP_ERR(P, "%s:%d: expected job %d, found %lld", P->name, R->line, i + 1, v[0]);
        if (v[1] != 1)
            return CONCERTO__PSP_ERR(P, "%s:%d: job %d has %lld modes; only single-mode files are supported", P->name, R->line, i + 1, v[1]);
        if (v[2] < 0 || v[2] != c - 3)
            return CONCERTO__PSP_ERR(P, "%s:%d: job %d declares %lld successors but lists %d", P->name, R->line, i + 1, v[2], c - 3);
        if (c > P->n_fields) return CONCERTO__PSP_ERR(P, "%s:%d: too many successors", P->name, R->line);
        ns = c - 3;
        if (!CONCERTO__GROW(P->ctx, P->succ, P->succ_cap, P->n_succ + (size_t)ns + 1))
            return CONCERTO__FAIL(P->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", P->name);
        for (c = 0; c < ns; c++) {
            long long sj = v[3 + c];
            if (sj < 1 || sj > P->nj)
                return CONCERTO__PSP_ERR(P, "%s:%d: job %d names successor %lld, outside 1..%lld", P->name, R->line, i + 1, sj, P->nj);
            if (sj == i + 1) return CONCERTO__PSP_ERR(P, "%s:%d: job %d is its own successor", P->name, R->line, i + 1);
            P->succ[P->n_succ++] = (int)sj - 1;
        }
        P->succ_off[i + 1] = (int)P->n_succ;
    }
    return CC_OK;
}

/* REQUESTS/DURATIONS: job, mode, duration, a demand per resource. */
static cc_result cc__psp_requests(cc__psp* P) {
    cc__reader* R = &P->R;
    long long* v = P->v;
    int i, c, r;
    if (!cc__seek(R, "REQUESTS/DURATIONS"))
        return CONCERTO__PSP_ERR(P, "%s: no 'REQUESTS/DURATIONS:' section after line %d", P->name, R->line);
    for (i = 0; i < P->nj; i++) {
        if (!cc__next_data(R))
            return CONCERTO__PSP_ERR(P, "%s:%d: durations section ends after %d of %lld jobs", P->name, R->line, i, P->nj);
        c = cc__line_ints(R, 0, v, P->n_fields);
        if (c < 0) {
            size_t t = 0;
            while (t < R->n && (R->s[t] == ' ' || R->s[t] == '-')) t++;
            if (i == 0 && (t == R->n || cc__line_has(R, "jobnr"))) { i--; continue; }   /* header, dashes */
            return CONCERTO__PSP_ERR(P, "%s:%d: durations line of job %d has a field that is not an integer", P->name, R->line, i + 1);
        }
        if (c != 3 + P->nk)
            return CONCERTO__PSP_ERR(P, "%s:%d: durations line of job %d needs %lld fields (job, mode, duration, %lld demands), found %d",
                                     P->name, R->line, i + 1, 3 + P->nk, P->nk, c);
        if (v[0] != i + 1) return CONCERTO__PSP_ERR(P, "%s:%d: expected job %d, found %lld", P->name, R->line, i + 1, v[0]);
        if (v[2] < 0)
            return CONCERTO__FAIL(P->ctx, CC_ERR_BAD_DURATION, "%s:%d: job %d has negative duration %lld", P->name, R->line, i + 1, v[2]);
        P->durs[i] = v[2];
        P->req_line[i] = R->line;
        for (r = 0; r < P->nk; r++) {
            if (v[3 + r] < 0 || v[3 + r] > 1000000000LL)
                return CONCERTO__PSP_ERR(P, "%s:%d: job %d has demand %lld on resource %d", P->name, R->line, i + 1, v[3 + r], r + 1);
            P->dems[(size_t)i * P->nk + r] = (int)v[3 + r];
        }
    }
    return CC_OK;
}

/* RESOURCEAVAILABILITIES: a capacity per resource, no job above one. */
static cc_result cc__psp_capacities(cc__psp* P) {
    cc__reader* R = &P->R;
    long long* v = P->v;
    int i, c, r;
    if (!cc__seek(R, "RESOURCEAVAILABILITIES"))
        return CONCERTO__PSP_ERR(P, "%s: no 'RESOURCEAVAILABILITIES:' section after line %d", P->name, R->line);
    for (;;) {
        if (!cc__next_data(R)) return CONCERTO__PSP_ERR(P, "%s:%d: resource availabilities missing", P->name, R->line);
        c = cc__line_ints(R, 0, v, P->n_fields);
        if (c < 0 && cc__line_has(R, "R")) continue;   /* the 'R 1  R 2' header */
        if (c != P->nk)
            return CONCERTO__PSP_ERR(P, "%s:%d: expected %lld resource capacities, found %s", P->name, R->line, P->nk,
                                     c < 0 ? "a non-integer" : "another count");
        break;
    }
    if (R->pos >= R->len && (R->len == 0 || R->text[R->len - 1] != '\n'))   /* the last number may be cut short */
        return CONCERTO__PSP_ERR(P, "%s:%d: the resource capacities line ends the text without a newline: the file may be truncated",
                                 P->name, R->line);
    for (r = 0; r < P->nk; r++) {
        if (v[r] < 0 || v[r] > 1000000000LL)
            return CONCERTO__PSP_ERR(P, "%s:%d: capacity %lld of resource %d is out of range", P->name, R->line, v[r], r + 1);
        P->caps[r] = (int)v[r];
    }
    for (i = 0; i < P->nj; i++)
        for (r = 0; r < P->nk; r++)
            if (P->dems[(size_t)i * P->nk + r] > P->caps[r])
                return CONCERTO__FAIL(P->ctx, CC_ERR_CAPACITY, "%s:%d: job %d demands %d of resource %d, above its capacity %d (line %d)",
                                      P->name, P->req_line[i], i + 1, P->dems[(size_t)i * P->nk + r], r + 1, P->caps[r], R->line);
    return CC_OK;
}

/* The graph of what was read: jobs "job<N>", their successors, validated. */
static cc_result cc__psp_graph(cc__psp* P, cc_graph** out) {
    cc_graph_desc gd;
    cc_graph* g = NULL;
    cc_result rc;
    int i, c;
    memset(&gd, 0, sizeof gd);
    gd.name = P->name;
    gd.n_resources = (int)P->nk;
    gd.capacities = P->caps;
    if ((rc = cc_graph_create(P->ctx, &gd, &g)) != CC_OK) return rc;
    for (i = 0; i < P->nj && rc == CC_OK; i++) {
        cc_op_desc od;
        char nm[32];
        memset(&od, 0, sizeof od);
        cc__fmt(nm, sizeof nm, "job%d", i + 1);
        od.name = nm;
        od.duration_us = (double)P->durs[i];
        od.demands = P->dems + (size_t)i * P->nk;
        rc = cc_graph_add_op(g, &od, NULL);
    }
    for (i = 0; i < P->nj && rc == CC_OK; i++)
        for (c = P->succ_off[i]; c < P->succ_off[i + 1] && rc == CC_OK; c++)
            rc = cc_graph_add_dep(g, cc_graph_op(g, i), cc_graph_op(g, P->succ[c]));
    if (rc == CC_OK && (rc = cc_graph_validate(g)) != CC_OK) {
        char msg[CONCERTO__MSG_MAX];
        cc__copy_msg(msg, sizeof msg, P->ctx->last_error);
        rc = CONCERTO__FAIL(P->ctx, rc, "%s: %s", P->name, msg);
    }
    if (rc != CC_OK) { cc_graph_destroy(g); return rc; }
    *out = g;
    return CC_OK;
}

CONCERTO_API cc_result cc_psplib_parse(cc_context* ctx, const char* text, size_t n_bytes, const char* name, cc_graph** out) {
    cc__psp* P;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out || !text) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_parse: text or out is NULL");
    *out = NULL;
    P = (cc__psp*)cc__calloc(ctx, 1, sizeof *P);
    if (!P) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", name ? name : "<text>");
    P->ctx = ctx;
    P->name = name ? name : "<text>";
    P->R.text = text;
    P->R.len = n_bytes;
    rc = cc__psp_header(P);
    if (rc == CC_OK) rc = cc__psp_precedence(P);
    if (rc == CC_OK) rc = cc__psp_requests(P);
    if (rc == CC_OK) rc = cc__psp_capacities(P);
    if (rc == CC_OK) rc = cc__psp_graph(P, out);
    cc__free(ctx, P->succ_off); cc__free(ctx, P->succ); cc__free(ctx, P->durs); cc__free(ctx, P->dems);
    cc__free(ctx, P->req_line); cc__free(ctx, P->v);
    cc__free(ctx, P);
    return rc;
}

#undef CONCERTO__PSP_ERR

CONCERTO_API cc_result cc_psplib_read(cc_context* ctx, const char* path, cc_graph** out) {
    FILE* f;
    char* buf = NULL;
    size_t cap = 0, len = 0;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!path || !out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_read: path or out is NULL");
    *out = NULL;
    f = fopen(path, "rb");
    if (!f) return CONCERTO__FAIL(ctx, CC_ERR_IO, "cannot open '%s' for reading", path);
    for (;;) {
        size_t got;
        if (!CONCERTO__GROW(ctx, buf, cap, len + 65536)) {
            fclose(f); cc__free(ctx, buf);
            return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) { fclose(f); cc__free(ctx, buf); return CONCERTO__FAIL(ctx, CC_ERR_IO, "error reading '%s'", path); }
    fclose(f);
    rc = cc_psplib_parse(ctx, buf, len, path, out);
    cc__free(ctx, buf);
    return rc;
}

CONCERTO_API cc_result cc_psplib_write(cc_context* ctx, cc_graph* g, const char* path, double unit_us) {
    cc__afile af;
    FILE* f;
    int n, k, i, e, r, nsum;
    long long horizon = 0, cp = 0;
    long long* du = NULL;
    long long* ef = NULL;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_psplib_write")) != CC_OK) return rc;
    if (!path) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_write: path is NULL");
    if (!(unit_us > 0) || unit_us > 1e12) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_write: unit_us must be > 0, got %g", unit_us);
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n; k = g->k;
    du = (long long*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *du);
    ef = (long long*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *ef);
    if (!du || !ef) { cc__free(ctx, du); cc__free(ctx, ef); return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_psplib_write: out of memory"); }
    for (i = 0; i < n; i++) { du[i] = llround(g->dur_us[i] / unit_us); horizon += du[i]; }
    for (i = 0; i < n; i++) {
        int v = g->topo[i];
        long long s = 0;
        for (e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) if (ef[g->pred[e]] > s) s = ef[g->pred[e]];
        ef[v] = s + du[v];
        if (ef[v] > cp) cp = ef[v];
    }
    if ((rc = cc__afile_open(ctx, &af, path, "cc_psplib_write")) != CC_OK) { cc__free(ctx, du); cc__free(ctx, ef); return rc; }
    f = af.f;
    fprintf(f, "************************************************************************\n");
    fprintf(f, "file with basedata            : concerto.bas\n");
    fprintf(f, "initial value random generator: 0\n");
    fprintf(f, "************************************************************************\n");
    fprintf(f, "projects                      :  1\n");
    fprintf(f, "jobs (incl. supersource/sink ):  %d\n", n + 2);
    fprintf(f, "horizon                       :  %lld\n", horizon);
    fprintf(f, "RESOURCES\n");
    fprintf(f, "  - renewable                 :  %d   R\n", k);
    fprintf(f, "  - nonrenewable              :  0   N\n");
    fprintf(f, "  - doubly constrained        :  0   D\n");
    fprintf(f, "************************************************************************\n");
    fprintf(f, "PROJECT INFORMATION:\n");
    fprintf(f, "pronr.  #jobs rel.date duedate tardcost  MPM-Time\n");
    fprintf(f, "    1   %5d      0   %5lld        0   %5lld\n", n, cp, cp);
    fprintf(f, "************************************************************************\n");
    fprintf(f, "PRECEDENCE RELATIONS:\n");
    fprintf(f, "jobnr.    #modes  #successors   successors\n");
    for (i = 0, nsum = 0; i < n; i++) if (g->pred_off[i + 1] == g->pred_off[i]) nsum++;
    fprintf(f, "   1        1       %5d   ", n ? nsum : 1);
    if (!n) fprintf(f, " %d", 2);
    for (i = 0; i < n; i++) if (g->pred_off[i + 1] == g->pred_off[i]) fprintf(f, " %d", i + 2);
    fprintf(f, "\n");
    for (i = 0; i < n; i++) {
        int ns = g->succ_off[i + 1] - g->succ_off[i];
        fprintf(f, "%4d        1       %5d   ", i + 2, ns ? ns : 1);
        if (!ns) fprintf(f, " %d", n + 2);
        for (e = g->succ_off[i]; e < g->succ_off[i + 1]; e++) fprintf(f, " %d", g->succ[e] + 2);
        fprintf(f, "\n");
    }
    fprintf(f, "%4d        1           0\n", n + 2);
    fprintf(f, "************************************************************************\n");
    fprintf(f, "REQUESTS/DURATIONS:\n");
    fprintf(f, "jobnr. mode duration");
    for (r = 0; r < k; r++) fprintf(f, "  R %d", r + 1);
    fprintf(f, "\n------------------------------------------------------------------------\n");
    fprintf(f, "  1      1     0");
    for (r = 0; r < k; r++) fprintf(f, "    0");
    fprintf(f, "\n");
    for (i = 0; i < n; i++) {
        fprintf(f, "%3d      1 %5lld", i + 2, du[i]);
        for (r = 0; r < k; r++) fprintf(f, " %4d", g->dem[(size_t)i * k + r]);
        fprintf(f, "\n");
    }
    fprintf(f, "%3d      1     0", n + 2);
    for (r = 0; r < k; r++) fprintf(f, "    0");
    fprintf(f, "\n************************************************************************\n");
    fprintf(f, "RESOURCEAVAILABILITIES:\n");
    for (r = 0; r < k; r++) fprintf(f, "  R %d", r + 1);
    fprintf(f, "\n");
    for (r = 0; r < k; r++) fprintf(f, " %4d", g->cap[r]);
    fprintf(f, "\n************************************************************************\n");
    cc__free(ctx, du); cc__free(ctx, ef);
    return cc__afile_commit(ctx, &af, "cc_psplib_write");
}

/* >>rewrite: graph-to-graph rewrites (decomposition, then fusion) and what
   they share: the alpha-beta cost model of a collective, a new graph built
   from an old one op by op with some ops replaced, judging a graph with the
   scheduler.

   The input graph is only read (and validated). Every candidate is a whole
   new graph (fusion screens its pairs without one); a search holds its
   current graph, the last graph a full solve kept (often the same one) and
   at most two candidates, and destroys the rest, so a failure anywhere
   frees everything it made and returns with *out NULL. Ops are visited in
   index (program) order (decomposition's collectives most exposed first,
   ties in index order), candidates ranked by their screens (ties in
   program order) and the budgets counted in screens and solves, so the
   result depends on the graph and the desc alone (and, for fusion's
   contiguity, on this rank's buffer addresses). */

typedef struct cc__rw_fit {          /* duration = a + b * bytes, per (kind, communicator) */
    cc_coll_kind kind;
    const cc_comm* comm;
    double a_us, b_us_per_byte;
} cc__rw_fit;

typedef struct cc__rw {
    cc_context* ctx;
    const char* who;                 /* "cc_graph_fuse", "cc_graph_decompose" */
    char out_name[96];               /* of every graph it makes: "fuse(<input>)", "decompose(<input>)" */
    cc_rewrite_desc d;               /* defaults resolved */
    cc__rw_fit* fits; size_t n_fits, fits_cap;
    int n_eval;                      /* candidate graphs screened */
    uint64_t screen_ops;             /* their ops, summed */
    int n_full;                      /* graphs solved in full (the input's not counted) */
    int judged_input;                /* the input's own judgement is done */
    int n_over_cap;                  /* candidates no schedule fitted under d.sched.memory_cap_bytes */
} cc__rw;

/* 1 once the screens' budget is spent: max_evaluations screens, or max_screen_ops ops screened where set. */
static int cc__rw_spent(const cc__rw* w) {
    return w->n_eval >= w->d.max_evaluations || (w->d.max_screen_ops > 0 && w->screen_ops >= w->d.max_screen_ops);
}

/* What a build needs of its source graph: where each op's accesses are. */
typedef struct cc__rw_src {
    const cc_graph* g;
    size_t* acc_off;                 /* [n + 1]: op i's accesses are acc[acc_off[i] .. acc_off[i + 1]) */
    size_t max_acc;                  /* the most accesses of one op */
} cc__rw_src;

/* The defaults, in one place. The judging desc is the scheduler's and is
   resolved by cc_sched_solve for each candidate graph. */
static void cc__rewrite_resolve(cc_rewrite_desc* d) {
    if (d->copy_us_per_byte == 0) d->copy_us_per_byte = 1e-4;
    if (d->max_chunks == 0) d->max_chunks = 4;
    if (d->max_context_depth == 0) d->max_context_depth = 3;
    if (d->max_evaluations == 0) d->max_evaluations = 1000;
    if (d->full_judgements == 0) d->full_judgements = 32;
}

CONCERTO_API cc_rewrite_desc cc_rewrite_query_defaults(const cc_rewrite_desc* desc) {
    cc_rewrite_desc d;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    cc__rewrite_resolve(&d);
    return d;
}

/* ---- the cost model of a resized collective -----------------------------*/
static double cc__rw_bytes(const cc_collective* c, size_t n_elems) {
    return (double)n_elems * (double)cc__dtype_size(c->dtype);
}

/* Op j's collective if it is of f's kind and communicator, else NULL. */
static const cc_collective* cc__rw_fit_member(const cc_graph* g, int j, const cc__rw_fit* f) {
    const cc_collective* e = cc__op_coll(g, j);
    return e && e->kind == f->kind && e->comm == f->comm ? e : NULL;
}

/* Least squares of duration = a + b bytes over the graph's collectives of
   f's kind and communicator, with a, b >= 0: the unconstrained fit where it
   is feasible, else the better of the two boundary fits (b = 0, a = mean;
   a = 0, b = sum xy / sum xx). One size only: a = 0, b = mean / size (a =
   mean for size 0). Sums in program order. */
static void cc__rw_fit_one(const cc_graph* g, cc__rw_fit* f) {
    double n = 0, mx = 0, my = 0, sxx = 0, sxy = 0, x0 = -1, a, b;
    int distinct = 0, j;
    for (j = 0; j < g->n; j++) {
        const cc_collective* e = cc__rw_fit_member(g, j, f);
        double x;
        if (!e) continue;
        x = cc__rw_bytes(e, e->n_elems);
        if (x0 < 0) x0 = x;
        else if (x != x0) distinct = 1;
        n++; mx += x; my += g->dur_us[j];
    }
    if (n == 0) { f->a_us = f->b_us_per_byte = 0; return; }
    mx /= n; my /= n;
    if (!distinct) {
        /* one size: the communicator's fixed cost where it was measured,
           the rest by the byte */
        double s = cc_graph_coll_startup(g, f->comm);
        s = s < 0 ? 0 : s < my ? s : my;
        f->a_us = x0 > 0 ? s : my;
        f->b_us_per_byte = x0 > 0 ? (my - s) / x0 : 0;
        return;
    }
    for (j = 0; j < g->n; j++) {
        const cc_collective* e = cc__rw_fit_member(g, j, f);
        double x;
        if (!e) continue;
        x = cc__rw_bytes(e, e->n_elems);
        sxx += (x - mx) * (x - mx);
        sxy += (x - mx) * (g->dur_us[j] - my);
    }
    b = sxy / sxx;
    a = my - b * mx;
    if (!(a >= 0) || !(b >= 0)) {
        double sx2 = 0, sxy0 = 0, e1 = 0, e2 = 0, b2;
        for (j = 0; j < g->n; j++) {
            const cc_collective* e = cc__rw_fit_member(g, j, f);
            double x;
            if (!e) continue;
            x = cc__rw_bytes(e, e->n_elems);
            sx2 += x * x;
            sxy0 += x * g->dur_us[j];
        }
        b2 = sx2 > 0 ? sxy0 / sx2 : 0;
        for (j = 0; j < g->n; j++) {
            const cc_collective* e = cc__rw_fit_member(g, j, f);
            double x, y;
            if (!e) continue;
            x = cc__rw_bytes(e, e->n_elems);
            y = g->dur_us[j];
            e1 += (y - my) * (y - my);
            e2 += (y - b2 * x) * (y - b2 * x);
        }
        if (e1 <= e2) { a = my; b = 0; }
        else { a = 0; b = b2; }
    }
    f->a_us = a;
    f->b_us_per_byte = b;
}

/* One fit per (kind, communicator) among the input's collectives, in order
   of first appearance. Nothing to fit when the desc gives a link. */
static cc_result cc__rw_fit_all(cc__rw* w, const cc_graph* g) {
    int i;
    size_t f;
    if (w->d.link) return CC_OK;
    for (i = 0; i < g->n; i++) {
        const cc_collective* c = cc__op_coll(g, i);
        if (!c) continue;
        for (f = 0; f < w->n_fits; f++)
            if (w->fits[f].kind == c->kind && w->fits[f].comm == c->comm) break;
        if (f < w->n_fits) continue;
        if (!CONCERTO__GROW(w->ctx, w->fits, w->fits_cap, w->n_fits + 1))
            return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
        w->fits[w->n_fits].kind = c->kind;
        w->fits[w->n_fits].comm = c->comm;
        cc__rw_fit_one(g, &w->fits[w->n_fits]);
        w->n_fits++;
    }
    return CC_OK;
}

/* The modelled duration of collective c resized to n_elems. */
static double cc__rw_coll_us(const cc__rw* w, const cc_collective* c, size_t n_elems) {
    double bytes = cc__rw_bytes(c, n_elems), t = 0;
    size_t f;
    if (w->d.link) t = cc__link_flat_us(w->d.link, c->kind, (double)(size_t)bytes, cc_comm_size(c->comm));
    else
        for (f = 0; f < w->n_fits; f++)
            if (w->fits[f].kind == c->kind && w->fits[f].comm == c->comm) {
                t = w->fits[f].a_us + w->fits[f].b_us_per_byte * bytes;
                break;
            }
    if (!(t >= 0)) t = 0;
    if (t > 1e12) t = 1e12;
    return t;
}

/* ---- copy ops (>>copy) ------------------------------------------------------
   An op that copies one region into another of the same byte count, added
   by a rewrite: to pack strided pieces into a bucket (a transient buffer
   the library places, cc__graph_add_buffer with transient 1) and unpack
   them after. The executor runs it through the backend's copy entry, a 2-D
   copy (cc_copy2d): a contiguous side is cut into rows of the other
   side's width; two strided sides need the same rows. */

/* Adds op d, a copy with record r (its src, dst), to g; the record is
   copied into one g owns. Errors name the op. */
static cc_result cc__copy_add(cc_context* ctx, const char* who, cc_graph* g, cc_op_desc* d, const cc__copy_rec* r, cc_op* out) {
    cc__copy_rec* rec;
    cc_result rc;
    if (!CONCERTO__GROW(g->ctx, g->copies, g->copies_cap, g->n_copies + 1) ||
        !(rec = (cc__copy_rec*)cc__alloc(g->ctx, sizeof *rec)))
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: op '%s': out of memory", who, d->name ? d->name : "?");
    *rec = *r;
    d->fn = cc__copy_fn;
    d->user_data = rec;
    if ((rc = cc_graph_add_op(g, d, out)) != CC_OK) { cc__free(g->ctx, rec); return rc; }
    g->copies[g->n_copies++] = rec;
    return CC_OK;
}

/* The rows of a region: its count, each one's bytes, the stride. */
static void cc__copy_shape(const cc_region* r, uint64_t* rows, uint64_t* width, uint64_t* pitch) {
    if (r->n_rows >= 2) { *rows = r->n_rows; *width = r->n_bytes; *pitch = r->stride_bytes; }
    else { *rows = 1; *width = r->n_bytes; *pitch = r->n_bytes; }
}

/* cc__rw_add_copy: adds to g (a graph a rewrite is building) an op named
   name, on stream `stream` (demand 1 there), that copies region `from`
   into region `to`, after deps[0..n_deps) (explicit edges; region
   dependencies follow program order as for any op). Either region may be
   contiguous or strided (n_rows >= 2); both hold the same bytes, and two
   strided ones the same rows of the same width. from_addr (to_addr) is the
   address of the region's first byte, as a collective's send_buf is; NULL
   where the region lies in a transient buffer of g, whose address
   cc_exec_create resolves in its arena. Its modelled duration is its
   bytes times w->d.copy_us_per_byte. Two regions of one buffer must not
   overlap, even in their spans (first byte to last). *out (NULL allowed)
   gets the op. Errors (the graph unchanged):
   CC_ERR_INVALID_ARG naming the op (shapes, overlap, a NULL address of a
   bound buffer's region), cc_graph_add_op's (a region outside its
   buffer), CC_ERR_OUT_OF_MEMORY. Cost: cc_graph_add_op's. */
static cc_result cc__rw_add_copy(cc__rw* w, cc_graph* g, const char* name, int stream, const cc_region* from,
                                 const void* from_addr, const cc_region* to, void* to_addr, const cc_op* deps, int n_deps,
                                 cc_op* out) {
    cc_op_desc d;
    cc__copy_rec rec;
    cc_region rd = *from, wr = *to;
    uint64_t fr, fw, fp, tr, tw, tp;
    int fb = cc_buffer_index(g, from->buffer), tb = cc_buffer_index(g, to->buffer);
    if (out) { out->id = 0; out->graph = 0; }
    if (fb < 0 || tb < 0) return CONCERTO__FAIL(w->ctx, CC_ERR_UNKNOWN_BUFFER, "%s: copy op '%s': a region's buffer is not "
                                                 "of graph '%s'", w->who, name, cc_graph_name(g));
    cc__copy_shape(from, &fr, &fw, &fp);
    cc__copy_shape(to, &tr, &tw, &tp);
    if (fr * fw != tr * tw || !fw || !tw || (fr > 1 && tr > 1 && (fr != tr || fw != tw)))
        return CONCERTO__FAIL(w->ctx, CC_ERR_INVALID_ARG, "%s: copy op '%s': from %llu rows of %llu bytes to %llu rows of %llu "
                              "bytes: not the same bytes, or two strided sides of different rows", w->who, name,
                              (unsigned long long)fr, (unsigned long long)fw, (unsigned long long)tr, (unsigned long long)tw);
    if (fb == tb && cc__ranges_overlap(from->offset_bytes, (fr - 1) * fp + fw, to->offset_bytes, (tr - 1) * tp + tw))
        return CONCERTO__FAIL(w->ctx, CC_ERR_INVALID_ARG, "%s: copy op '%s': its two regions of buffer '%s' overlap", w->who,
                              name, cc_buffer_name(g, from->buffer));
    if ((!from_addr && !g->buf_transient[fb]) || (!to_addr && !g->buf_transient[tb]))
        return CONCERTO__FAIL(w->ctx, CC_ERR_INVALID_ARG, "%s: copy op '%s': no address for its region of bound buffer '%s'",
                              w->who, name, cc_buffer_name(g, !from_addr && !g->buf_transient[fb] ? from->buffer : to->buffer));
    rd.split_rows = wr.split_rows = 0;
    memset(&d, 0, sizeof d);
    d.name = name;
    d.duration_us = (double)(fr * fw) * w->d.copy_us_per_byte;
    d.stream = stream;
    d.reads = &rd; d.n_reads = 1;
    d.writes = &wr; d.n_writes = 1;
    d.deps = deps; d.n_deps = n_deps;
    rec.src = from_addr;
    rec.dst = to_addr;
    return cc__copy_add(w->ctx, w->who, g, &d, &rec, out);
}

/* The duration of the chunk of compute op i of g that rec describes: its
   share n of the axis (its part of the rule's extent, or 1/k for a
   chunk_fn op) of the op's duration d, or, where the op has a chunk cost
   t (cc_chunk_cost), d * t(n) / t(1). */
static double cc__rw_chunk_us(const cc_graph* g, int i, const cc__chunk_rec* rec) {
    double d = g->dur_us[i], n, t1, t;
    uint64_t e = rec->part ? g->splits[g->split_of[i]].s.extent[rec->sc.axis] : 0;
    n = rec->part ? (double)(rec->sc.end - rec->sc.begin) / (double)e : 1.0 / (double)rec->n_chunks;
    if (!g->has_ccost[i] || !((t1 = g->ccost[i].a_us + g->ccost[i].b_us) > 0))
        return rec->part ? d * (double)(rec->sc.end - rec->sc.begin) / (double)e : d / rec->n_chunks;
    t = d * (g->ccost[i].a_us + g->ccost[i].b_us * n) / t1;
    return t < 1e12 ? t : 1e12;
}

/* ---- building a new graph from an old one --------------------------------*/
static cc_result cc__rw_src_init(cc__rw* w, const cc_graph* g, cc__rw_src* s) {
    size_t a;
    int i;
    s->g = g;
    s->max_acc = 0;
    s->acc_off = (size_t*)cc__calloc(w->ctx, (size_t)g->n + 1, sizeof *s->acc_off);
    if (!s->acc_off) return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    /* accesses are stored in program order, each op's together */
    for (a = 0; a < g->n_acc; a++) s->acc_off[g->acc[a].op + 1]++;
    for (i = 0; i < g->n; i++) {
        if (s->acc_off[i + 1] > s->max_acc) s->max_acc = s->acc_off[i + 1];
        s->acc_off[i + 1] += s->acc_off[i];
    }
    return CC_OK;
}

static void cc__rw_src_free(cc__rw* w, cc__rw_src* s) { cc__free(w->ctx, s->acc_off); s->acc_off = NULL; }

/* An empty graph with src's streams or resources and buffers. */
static cc_result cc__rw_begin(cc__rw* w, const cc_graph* src, cc_graph** out) {
    cc_graph_desc gd;
    const char* names[CONCERTO_MAX_RESOURCES];
    int caps[CONCERTO_MAX_RESOURCES], r, b;
    cc_graph* g = NULL;
    cc_result rc;
    *out = NULL;
    memset(&gd, 0, sizeof gd);
    gd.name = w->out_name;
    for (r = 0; r < src->k; r++) { names[r] = src->names.s + src->res_name[r]; caps[r] = src->cap[r]; }
    if (src->stream_mode) {
        gd.n_streams = src->k;
        gd.stream_names = names;
    } else {
        gd.n_resources = src->k;
        gd.capacities = caps;
        gd.resource_names = names;
    }
    if ((rc = cc_graph_create(w->ctx, &gd, &g)) != CC_OK) return rc;
    g->costs = src->costs;
    if (src->n_startup && !CONCERTO__GROW(w->ctx, g->startup, g->startup_cap, src->n_startup)) {
        cc_graph_destroy(g);
        return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    }
    if (src->n_startup) memcpy(g->startup, src->startup, src->n_startup * sizeof *g->startup);
    g->n_startup = src->n_startup;
    for (b = 0; b < src->n_buf; b++)
        if ((rc = cc__graph_add_buffer(g, src->names.s + src->buf_name[b], src->buf_bytes[b], src->buf_transient[b], NULL)) != CC_OK) {
            cc_graph_destroy(g);
            return rc;
        }
    *out = g;
    return CC_OK;
}

/* The regions of op i, reads then writes, into regs, as regions of the
   graph being built, dst (whose buffers are the source's, in the same
   order); returns their number and the number of reads in *n_reads. */
static int cc__rw_regions(const cc__rw_src* s, int i, const cc_graph* dst, cc_region* regs, int* n_reads) {
    const cc_graph* g = s->g;
    size_t a;
    int m = 0, pass;
    *n_reads = 0;
    for (pass = 0; pass < 2; pass++)
        for (a = s->acc_off[i]; a < s->acc_off[i + 1]; a++) {
            const cc__access* x = &g->acc[a];
            if (x->is_write != pass) continue;
            regs[m++] = cc__acc_region(x, dst->serial);
            if (!pass) (*n_reads)++;
        }
    return m;
}

/* The desc that adds op i of the source again, without its explicit edges
   (cc__rw_edges adds them) to dst: regs must hold its accesses, dem k
   ints. A collective keeps its stream, other ops their demand vector. */
static void cc__rw_desc_of(const cc__rw_src* s, int i, const cc_graph* dst, cc_region* regs, int* dem, cc_split* sp,
                           cc_op_desc* d) {
    const cc_graph* g = s->g;
    int r, m, nr;
    memset(d, 0, sizeof *d);
    d->name = cc__name(g, i);
    d->duration_us = g->dur_us[i];
    m = cc__rw_regions(s, i, dst, regs, &nr);
    d->reads = regs; d->n_reads = nr;
    d->writes = regs + nr; d->n_writes = m - nr;
    d->coll = cc__op_coll(g, i);
    if (d->coll) {
        d->stream = cc__op_stream(g, i);
    } else {
        for (r = 0; r < g->k; r++) dem[r] = g->dem[(size_t)i * g->k + r];
        d->demands = dem;
    }
    d->user_data = g->user_data[i];
    d->fn = g->fn[i];
    d->chunk_fn = g->chunk_fn[i];
    if (g->split_of[i] >= 0) {   /* the rule, its name from the source's pool */
        const cc__split_rec* sr = &g->splits[g->split_of[i]];
        *sp = sr->s;
        sp->name = g->names.s + sr->name;
        d->split = sp;
        d->part_fn = sr->part_fn;
    }
    d->chunk_cost = g->has_ccost[i] ? &g->ccost[i] : NULL;
}

/* Adds an op to dst. A chunk op's record (d->user_data) is copied into a
   record that dst owns; a chunk op does not decompose: it has no chunk cost. */
static cc_result cc__rw_add(cc__rw* w, cc_graph* dst, cc_op_desc* d) {
    if (d->fn == cc__copy_fn) return cc__copy_add(w->ctx, w->who, dst, d, (const cc__copy_rec*)d->user_data, NULL);
    if (d->fn == cc__chunk_trampoline) {
        cc__chunk_rec* rec = NULL;
        d->chunk_cost = NULL;
        if (!CONCERTO__GROW(dst->ctx, dst->recs, dst->recs_cap, dst->n_recs + 1) ||
            !(rec = (cc__chunk_rec*)cc__alloc(dst->ctx, sizeof *rec)))
            return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: op '%s': out of memory", w->who, d->name);
        *rec = *(const cc__chunk_rec*)d->user_data;
        dst->recs[dst->n_recs++] = rec;
        d->user_data = rec;
    }
    return cc_graph_add_op(dst, d, NULL);
}

/* The source's explicit edges in dst: source op i became the new ops
   first[i] .. first[i] + count[i] - 1; an edge joins every new op of its
   tail to every new op of its head, except an op to itself (the edges
   between members of a fused op vanish). */
static cc_result cc__rw_edges(cc__rw* w, cc_graph* dst, const cc_graph* src, const int* first, const int* count) {
    size_t e;
    int a, b;
    cc_result rc;
    (void)w;
    for (e = 0; e < src->n_e; e++) {
        int f = src->e_from[e], t = src->e_to[e];
        if (f != t && first[f] == first[t]) continue;   /* inside one fused group */
        for (a = 0; a < count[f]; a++)
            for (b = 0; b < count[t]; b++) {
                if (first[f] + a == first[t] + b) continue;
                if ((rc = cc_graph_add_dep(dst, cc_graph_op(dst, first[f] + a), cc_graph_op(dst, first[t] + b))) != CC_OK)
                    return rc;
            }
    }
    return CC_OK;
}

/* Scratch for building from s: regions (room for a fused op's, which are two
   ops', and for both ops' own), a name buffer (longer than any name), where
   each source op went (first new op, how many), and a mark and a queue per
   op for the searches. */
typedef struct cc__rw_scratch {
    cc_region* regs;
    int* part;                       /* a split's partial-sum flags, one per write */
    char* name;
    size_t name_cap;
    int* first;
    int* count;
    char* mark;
    int* queue;
} cc__rw_scratch;

static cc_result cc__rw_scratch_init(cc__rw* w, const cc__rw_src* s, cc__rw_scratch* x) {
    memset(x, 0, sizeof *x);
    x->regs = (cc_region*)cc__calloc(w->ctx, 4 * s->max_acc + 1, sizeof *x->regs);
    x->part = (int*)cc__calloc(w->ctx, s->max_acc + 1, sizeof *x->part);
    x->name_cap = s->g->names.len + 64;
    x->name = (char*)cc__alloc(w->ctx, x->name_cap);
    x->first = (int*)cc__calloc(w->ctx, (size_t)s->g->n + 1, sizeof(int));
    x->count = (int*)cc__calloc(w->ctx, (size_t)s->g->n + 1, sizeof(int));
    x->mark = (char*)cc__calloc(w->ctx, (size_t)s->g->n + 1, 1);
    x->queue = (int*)cc__calloc(w->ctx, (size_t)s->g->n + 1, sizeof(int));
    if (!x->regs || !x->part || !x->name || !x->first || !x->count || !x->mark || !x->queue)
        return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    return CC_OK;
}

static void cc__rw_scratch_free(cc__rw* w, cc__rw_scratch* x) {
    cc__free(w->ctx, x->regs); cc__free(w->ctx, x->part); cc__free(w->ctx, x->name); cc__free(w->ctx, x->first); cc__free(w->ctx, x->count);
    cc__free(w->ctx, x->mark); cc__free(w->ctx, x->queue);
    memset(x, 0, sizeof *x);
}

/* The index and scratch of g, built again (a search calls it when its
   current graph changed). */
static cc_result cc__rw_index(cc__rw* w, const cc_graph* g, cc__rw_src* s, cc__rw_scratch* x) {
    cc_result rc;
    cc__rw_scratch_free(w, x);
    cc__rw_src_free(w, s);
    if ((rc = cc__rw_src_init(w, g, s)) != CC_OK) return rc;
    return cc__rw_scratch_init(w, s, x);
}

/* An unchanged copy of g. */
static cc_result cc__rw_copy(cc__rw* w, const cc_graph* g, cc_graph** out) {
    cc__rw_src s;
    cc__rw_scratch x;
    cc_graph* dst = NULL;
    int i, dem[CONCERTO_MAX_RESOURCES];
    cc_result rc;
    *out = NULL;
    memset(&x, 0, sizeof x);
    if ((rc = cc__rw_src_init(w, g, &s)) != CC_OK) return rc;
    if ((rc = cc__rw_scratch_init(w, &s, &x)) != CC_OK) goto done;
    if ((rc = cc__rw_begin(w, g, &dst)) != CC_OK) goto done;
    for (i = 0; i < g->n && rc == CC_OK; i++) {
        cc_op_desc d;
        cc_split sp;
        cc__rw_desc_of(&s, i, dst, x.regs, dem, &sp, &d);
        x.first[i] = dst->n;
        x.count[i] = 1;
        rc = cc__rw_add(w, dst, &d);
    }
    if (rc == CC_OK) rc = cc__rw_edges(w, dst, g, x.first, x.count);
done:
    cc__rw_scratch_free(w, &x);
    cc__rw_src_free(w, &s);
    if (rc != CC_OK) { cc_graph_destroy(dst); return rc; }
    *out = dst;
    return CC_OK;
}

/* The judged makespan of g. A candidate (not the input) that no schedule
   fits under the desc's memory cap, or whose schedule's arena does not
   (cc_plan_create_desc from its starts: alignment and gaps come on top of
   the lifetimes' peak, and a rewrite's buckets add buffers), is judged
   infinitely long and counted in w->n_over_cap, quietly: its error is not
   the rewrite's. */
static cc_result cc__rw_judge(cc__rw* w, cc_graph* g, double* makespan_us, int* ord) {
    cc_schedule s;
    cc_context* ctx = w->ctx;
    int quiet = w->d.sched.memory_cap_bytes > 0 && w->judged_input;
    char saved_msg[CONCERTO__MSG_MAX];
    cc_logger saved_logger = ctx->logger;
    cc_result saved_result = ctx->last_result, rc;
    if (quiet) { memcpy(saved_msg, ctx->last_error, sizeof saved_msg); ctx->logger.log_fn = NULL; }
    rc = cc_sched_solve(ctx, g, &w->d.sched, &s);
    if (quiet && rc == CC_OK && g->stream_mode && g->n_mb > 0) {
        cc_plan_desc pd;
        cc_plan* pl = NULL;
        memset(&pd, 0, sizeof pd);
        pd.order = s.order;
        pd.start_us = s.start_us;
        pd.memory_cap_bytes = w->d.sched.memory_cap_bytes;
        cc_result prc = cc_plan_create_desc(ctx, g, &pd, &pl);
        if (prc != CC_OK) {   /* not the rewrite's error either; any other than the cap's leaves the judgement */
            ctx->last_result = saved_result;
            memcpy(ctx->last_error, saved_msg, sizeof saved_msg);
        }
        if (prc == CC_ERR_INFEASIBLE) {
            cc_schedule_release(ctx, &s);
            rc = CC_ERR_INFEASIBLE;
        }
        cc_plan_destroy(pl);
    }
    if (quiet) {
        ctx->logger = saved_logger;
        if (rc == CC_ERR_INFEASIBLE) {
            ctx->last_result = saved_result;
            memcpy(ctx->last_error, saved_msg, sizeof saved_msg);
            w->n_over_cap++;
            *makespan_us = HUGE_VAL;
            return CC_OK;
        }
    }
    w->judged_input = 1;
    if (rc != CC_OK) return rc;
    *makespan_us = s.makespan_us;
    if (ord) {   /* the schedule's issue order, as op indices */
        int i;
        for (i = 0; i < g->n; i++) ord[i] = (int)s.order[i].id - 1;
    }
    cc_schedule_release(w->ctx, &s);
    return CC_OK;
}

/* Arguments, defaults, the input validated, the cost model fitted. */
static cc_result cc__rw_start(cc__rw* w, cc_context* ctx, const char* who, cc_graph* g, const cc_rewrite_desc* desc,
                              cc_graph** out, cc_rewrite_report* report) {
    cc_result rc;
    memset(w, 0, sizeof *w);
    w->ctx = ctx;
    w->who = who;
    if (report) memset(report, 0, sizeof *report);
    if (out) *out = NULL;
    if ((rc = cc__graph_args(ctx, g, who)) != CC_OK) return rc;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: out is NULL", who);
    if (desc) w->d = *desc;
    else memset(&w->d, 0, sizeof w->d);
    if (w->d.max_chunks < 0 || w->d.max_evaluations < 0 || w->d.full_judgements < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG,
                              "%s: max_chunks (%d), max_evaluations (%d) and full_judgements (%d) must be >= 0", who,
                              w->d.max_chunks, w->d.max_evaluations, w->d.full_judgements);
    if (w->d.max_context_depth < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: max_context_depth (%d) must be >= 0", who, w->d.max_context_depth);
    if (w->d.link && !(w->d.link->latency_us >= 0 && w->d.link->latency_us <= 1e12 && w->d.link->us_per_byte >= 0 &&
                       w->d.link->us_per_byte <= 1e12))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: link latency_us %g and us_per_byte %g must be finite and >= 0", who,
                              w->d.link->latency_us, w->d.link->us_per_byte);
    if (!(w->d.copy_us_per_byte >= 0 && w->d.copy_us_per_byte <= 1e12))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "%s: copy_us_per_byte %g must be finite and >= 0", who,
                              w->d.copy_us_per_byte);
    cc__rewrite_resolve(&w->d);
    cc__fmt(w->out_name, sizeof w->out_name, "%s(%s)", who + 9, cc_graph_name(g));   /* who without "cc_graph_" */
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    return cc__rw_fit_all(w, g);
}

static void cc__rw_finish(cc__rw* w, const cc_graph* in, const cc_graph* out, double mk0, double mk1, int n_candidates,
                          int n_changed, cc_rewrite_report* report) {
    if (!report) return;
    report->n_candidates = n_candidates;
    report->n_changed = n_changed;
    report->n_ops_before = in->n;
    report->n_ops_after = out->n;
    report->n_colls_before = (int)in->n_colls;
    report->n_colls_after = (int)out->n_colls;
    report->makespan_before_us = mk0;
    report->makespan_after_us = mk1;
    report->n_evaluations = w->n_eval;
    report->n_full_judgements = w->n_full;
    report->n_over_cap = w->n_over_cap;
}

/* A search in progress. Candidates are ranked by a screen: the stream
   simulation of the candidate in the best issue order known of the current
   graph (each op replaced by the ops it became). Full solves with d.sched
   (the judgement that keeps a rewrite) are the budget: at most
   d.full_judgements of them besides the input's and one at the end.
   Decomposition spends them on the current graph every few rewrites kept
   by their screens and on candidates whose screen is close, paced over
   the input's collectives so that they spread over the whole graph;
   fusion screens every pair first and spends them on the best screened
   (cc__fuse_rank). The result is the last graph whose full solve was
   shorter (fusion: no longer) than the one kept before it, the input's
   first: every rewrite in it is judged by a full solve of the whole step,
   and the result is never judged worse than the input.

   cur: the input rewritten so far; ord its best order known and mk the
   stream simulation of cur in ord (the screens' yardstick); cur_full its
   full solve's makespan where ready (solved since it last changed). ck:
   the last graph kept by a full solve (ck_mk its makespan; ck_changed and
   ck_n_ctxs the report's counts then); it may be cur itself. cord: a
   candidate's order; bord: the best candidate's of a decomposition; rem:
   scratch. every: rewrites kept by screens between full solves of cur,
   since: those since the last. seen: the input's collectives visited so
   far (the budget's pace). The index of cur is built again only when it
   changed. */
typedef struct cc__rw_search {
    cc__rw w;
    const cc_graph* input;
    cc_graph* cur;
    double mk0, mk, cur_full;
    cc__rw_src s;
    cc__rw_scratch x;
    int indexed;
    int n_candidates, n_changed, stop;
    cc_rewrite_context* ctxs; size_t n_ctxs, ctxs_cap;   /* decomposition: the contexts split so far */
    int *ord, *cord, *bord, *rem;
    size_t ord_cap;
    cc_graph* ck;
    double ck_mk;
    int ck_changed;
    size_t ck_n_ctxs;
    int every, since, ready, seen;
} cc__rw_search;

/* A screen at most this fraction above mk still earns a full solve
   (budget allowing): a reschedule often hides again what the order
   screened exposes. */
#define CONCERTO__RW_CLOSE 0.02

static void cc__rw_ctxs_drop(cc__rw_search* S, size_t keep) {
    while (S->n_ctxs > keep) {
        cc_rewrite_context* c = &S->ctxs[--S->n_ctxs];
        cc__free(S->w.ctx, (char*)c->collective); cc__free(S->w.ctx, (char*)c->ops);
    }
}

/* Frees what the search holds. On success the current graph goes to *out
   with the report; on failure it is destroyed, *out stays NULL and the
   report zero. Returns rc. */
static cc_result cc__rw_search_end(cc__rw_search* S, cc_result rc, cc_graph** out, cc_rewrite_report* report) {
    cc__rw* w = &S->w;
    cc__rw_scratch_free(w, &S->x);
    cc__rw_src_free(w, &S->s);
    if (w->ctx) {
        cc__free(w->ctx, S->ord); cc__free(w->ctx, S->cord); cc__free(w->ctx, S->bord); cc__free(w->ctx, S->rem);
    }
    S->ord = S->cord = S->bord = S->rem = NULL;
    if (S->ck != S->cur) cc_graph_destroy(S->ck);
    S->ck = NULL;
    if (rc == CC_OK) {
        cc__rw_finish(w, S->input, S->cur, S->mk0, S->mk, S->n_candidates, S->n_changed, report);
        if (!S->n_ctxs) {   /* (those split and then dropped) */
            cc__free(w->ctx, S->ctxs);
            S->ctxs = NULL;
            S->ctxs_cap = 0;
        }
        S->cur->rw_ctx = S->ctxs;   /* the contexts go with the graph */
        S->cur->n_rw_ctx = (int)S->n_ctxs;
        S->ctxs = NULL;
        S->n_ctxs = 0;
        if (report) { report->contexts = S->cur->rw_ctx; report->n_contexts = S->cur->n_rw_ctx; }
        *out = S->cur;
    } else {
        cc_graph_destroy(S->cur);
        if (report) memset(report, 0, sizeof *report);
    }
    S->cur = NULL;
    if (w->ctx) cc__rw_ctxs_drop(S, 0);
    if (w->ctx) { cc__free(w->ctx, S->ctxs); cc__free(w->ctx, w->fits); }
    return rc;
}

/* Room in the search's orders for graphs of n ops. */
static cc_result cc__rw_ord_reserve(cc__rw_search* S, int n) {
    cc_context* ctx = S->w.ctx;
    size_t want = (size_t)n + 1, i;
    int** v[4];
    if (want <= S->ord_cap) return CC_OK;
    if (want < 2 * S->ord_cap) want = 2 * S->ord_cap;
    v[0] = &S->ord; v[1] = &S->cord; v[2] = &S->bord; v[3] = &S->rem;
    for (i = 0; i < 4; i++) {
        int* p = (int*)cc__alloc(ctx, want * sizeof(int));
        if (!p) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", S->w.who);
        if (*v[i]) memcpy(p, *v[i], S->ord_cap * sizeof(int));
        cc__free(ctx, *v[i]);
        *v[i] = p;
    }
    S->ord_cap = want;
    return CC_OK;
}

/* The stream simulation of g (validated here) in issue order ord: *mk,
   HUGE_VAL where the order contradicts a dependency. */
static cc_result cc__rw_sim(cc__rw_search* S, cc_graph* g, const int* ord, double* mk) {
    cc__prob p;
    cc__time t, *st;
    int blocked[2] = { -1, -1 };
    cc_result rc;
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    cc__prob_of_graph(g, &p);
    st = (cc__time*)cc__alloc(S->w.ctx, ((size_t)g->n + 1) * sizeof *st);
    t = st ? cc__stream_sim(S->w.ctx, &p, ord, st, blocked) : -2;
    cc__free(S->w.ctx, st);
    if (t == -2) return CONCERTO__FAIL(S->w.ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", S->w.who);
    *mk = t < 0 ? HUGE_VAL : (double)t / CONCERTO__TICKS_PER_US;
    return CC_OK;
}

/* The screen of a candidate built from cur (x.first, x.count: cur's op ->
   its first op there and how many): cur's best order with each op
   replaced by its ops there, an op that several of cur's became placed at
   the last of them; the order into cord, its simulation into *mk. */
static cc_result cc__rw_screen(cc__rw_search* S, cc_graph* cand, double* mk) {
    int i, j, n = 0;
    cc_result rc;
    if ((rc = cc__rw_ord_reserve(S, cand->n)) != CC_OK) return rc;
    for (j = 0; j < cand->n; j++) S->rem[j] = 0;
    for (i = 0; i < S->cur->n; i++)
        for (j = S->x.first[i]; j < S->x.first[i] + S->x.count[i]; j++) S->rem[j]++;
    for (i = 0; i < S->cur->n; i++) {
        int o = S->ord[i];
        for (j = S->x.first[o]; j < S->x.first[o] + S->x.count[o]; j++)
            if (--S->rem[j] == 0) S->cord[n++] = j;
    }
    S->w.n_eval++;
    S->w.screen_ops += (uint64_t)cand->n;
    if (n != cand->n) { *mk = HUGE_VAL; return CC_OK; }
    return cc__rw_sim(S, cand, S->cord, mk);
}

/* 1 if need more full solves fit the budget now: at most its share of the
   input's collectives visited so far (and one), at most all of it. */
static int cc__rw_can_solve(const cc__rw_search* S, int need) {
    int F = S->w.d.full_judgements, n = (int)S->input->n_colls;
    double share = 1.0 + (double)F * (double)(S->seen < n ? S->seen : n) / (double)(n > 0 ? n : 1);
    return S->w.n_full + need <= F && (double)(S->w.n_full + need) <= share + 1e-9;
}

/* g solved in full: *f its makespan, its order into cord (HUGE_VAL and
   no order where it fits no schedule under the memory cap). */
static cc_result cc__rw_solve(cc__rw_search* S, cc_graph* g, double* f) {
    cc_result rc;
    int i;
    if ((rc = cc__rw_ord_reserve(S, g->n)) != CC_OK) return rc;
    for (i = 0; i < g->n; i++) S->cord[i] = i;   /* (program order, where no schedule fits) */
    if ((rc = cc__rw_judge(&S->w, g, f, S->cord)) != CC_OK) return rc;
    S->w.n_full++;
    return CC_OK;
}

/* cur solved in full, f: kept as ck where shorter than ck (or no longer,
   with le); changed: the report's count for it. The contexts split since
   the last graph kept share the drop from its makespan to f, each in
   proportion to its estimated gain (equally where those are not positive),
   so that the report's gains add up to the judged drop. */
static void cc__rw_keep(cc__rw_search* S, double f, int le, int changed) {
    S->ready = 1;
    S->since = 0;
    S->cur_full = f;
    if (f < S->ck_mk || (le && f <= S->ck_mk)) {
        size_t i;
        double w = 0;
        for (i = S->ck_n_ctxs; i < S->n_ctxs; i++) w += S->ctxs[i].gain_us > 0 ? S->ctxs[i].gain_us : 0;
        for (i = S->ck_n_ctxs; i < S->n_ctxs; i++)
            S->ctxs[i].gain_us = (S->ck_mk - f) * (w > 0 ? (S->ctxs[i].gain_us > 0 ? S->ctxs[i].gain_us : 0) / w
                                                           : 1.0 / (double)(S->n_ctxs - S->ck_n_ctxs));
        if (S->ck != S->cur) cc_graph_destroy(S->ck);
        S->ck = S->cur;
        S->ck_mk = f;
        S->ck_changed = changed;
        S->ck_n_ctxs = S->n_ctxs;
    }
}

/* cur, just solved in full (f, its order in cord), kept (cc__rw_keep);
   its order replaces ord where it simulates shorter (always where ord is
   not set yet: mk HUGE_VAL). */
static cc_result cc__rw_solved(cc__rw_search* S, double f, int le, int changed) {
    double smk = 0;
    cc_result rc;
    cc__rw_keep(S, f, le, changed);
    if (f == HUGE_VAL) return CC_OK;
    if ((rc = cc__rw_sim(S, S->cur, S->cord, &smk)) != CC_OK) return rc;
    if (smk < S->mk || S->mk == HUGE_VAL) {
        int* t = S->ord;
        S->ord = S->cord;
        S->cord = t;
        S->mk = smk;
    }
    return CC_OK;
}

/* A full solve of cur where it changed since its last (force) or where
   every rewrites kept by screens have passed since; budget allowing. */
static cc_result cc__rw_search_full(cc__rw_search* S, int force, int le, int changed) {
    double f = 0;
    cc_result rc;
    if (S->ready || (!force && S->since < S->every) || !cc__rw_can_solve(S, 1)) return CC_OK;
    if ((rc = cc__rw_solve(S, S->cur, &f)) != CC_OK) return rc;
    return cc__rw_solved(S, f, le, changed);
}

/* Arguments, defaults, the cost model; the input copied and solved in
   full, the first graph kept. */
static cc_result cc__rw_search_begin(cc__rw_search* S, cc_context* ctx, const char* who, cc_graph* g, const cc_rewrite_desc* desc,
                                     cc_graph** out, cc_rewrite_report* report) {
    cc_result rc;
    int n;
    memset(S, 0, sizeof *S);
    S->input = g;
    rc = cc__rw_start(&S->w, ctx, who, g, desc, out, report);
    if (rc != CC_OK) {
        if (ctx) cc__free(ctx, S->w.fits);
        return rc;
    }
    if ((rc = cc__rw_copy(&S->w, g, &S->cur)) == CC_OK) rc = cc__rw_ord_reserve(S, g->n);
    if (rc == CC_OK) rc = cc__rw_judge(&S->w, S->cur, &S->mk0, S->cord);
    if (rc == CC_OK) {
        n = (int)g->n_colls;
        /* about half the budget for the current graph, the rest for close candidates */
        S->every = 2 * n / S->w.d.full_judgements + (2 * n % S->w.d.full_judgements != 0);
        if (S->every < 1) S->every = 1;
        S->mk = S->ck_mk = HUGE_VAL;
        S->ck = NULL;
        rc = cc__rw_solved(S, S->mk0, 1, 0);   /* cur becomes ck; its order ord */
        if (S->mk == HUGE_VAL) S->mk = S->mk0;
    }
    if (rc != CC_OK) return cc__rw_search_end(S, rc, out, report);
    return CC_OK;
}

/* The index of the current graph, built again only when it changed. */
static cc_result cc__rw_search_index(cc__rw_search* S) {
    cc_result rc;
    if (S->indexed) return CC_OK;
    if ((rc = cc__rw_index(&S->w, S->cur, &S->s, &S->x)) != CC_OK) return rc;
    S->indexed = 1;
    return CC_OK;
}

/* A candidate screened mk (its order in cord) becomes the current graph,
   its order ord. */
static void cc__rw_search_take(cc__rw_search* S, cc_graph* cand, double mk) {
    int* t = S->ord;
    if (S->cur != S->ck) cc_graph_destroy(S->cur);
    S->cur = cand;
    S->mk = mk;
    S->indexed = 0;
    S->ord = S->cord;
    S->cord = t;
    S->ready = 0;
    S->since++;
}

/* A close candidate (screened smk, its order in cord) judged by a full
   solve against cur's, cur solved first where it changed since: taken
   where shorter (or no longer, with le); cur_changed and changed: the
   report's counts without and with it. *taken says which (on 0 the caller
   still owns cand), *full the candidate's full solve. */
static cc_result cc__rw_search_close(cc__rw_search* S, cc_graph* cand, double smk, int le, int cur_changed, int changed,
                                     int* taken, double* full) {
    double f = 0, cf = 0;
    int* keep;
    cc_result rc;
    *taken = 0;
    if (!cc__rw_can_solve(S, S->ready ? 1 : 2)) return CC_OK;
    keep = S->bord;   /* the candidate's screened order, out of the way of cur's solve */
    S->bord = S->cord;
    S->cord = keep;
    if ((rc = cc__rw_search_full(S, 1, le, cur_changed)) != CC_OK) return rc;
    if ((rc = cc__rw_solve(S, cand, &cf)) != CC_OK) return rc;
    *full = cf;
    if (!(cf < S->cur_full || (le && cf <= S->cur_full))) return CC_OK;
    /* the better of its screened order and its solved one */
    if ((rc = cc__rw_sim(S, cand, S->cord, &f)) != CC_OK) return rc;
    if (!(f < smk)) {
        int* t = S->bord;
        S->bord = S->cord;
        S->cord = t;
        f = smk;
    }
    cc__rw_search_take(S, cand, f);
    *taken = 1;
    cc__rw_keep(S, cf, le, changed);
    return CC_OK;
}

/* The search's end: cur solved in full where it changed since, then the
   graph kept last (ck) is the result. */
static cc_result cc__rw_search_settle(cc__rw_search* S, int le, int changed) {
    cc_result rc = CC_OK;
    double f = 0;
    if (!S->ready) {
        if ((rc = cc__rw_solve(S, S->cur, &f)) != CC_OK) return rc;
        if ((rc = cc__rw_solved(S, f, le, changed)) != CC_OK) return rc;
    }
    if (S->cur != S->ck) cc_graph_destroy(S->cur);
    S->cur = S->ck;
    S->mk = S->ck_mk;
    S->n_changed = S->ck_changed;
    cc__rw_ctxs_drop(S, S->ck_n_ctxs);
    return CC_OK;
}

static int cc__rw_overlap(const cc__access* x, const cc__access* y) {
    return x->buffer == y->buffer && cc__acc_overlap(x, y);
}

/* ---- decomposition ------------------------------------------------------
   Byte intervals of buffers, to find an all-reduce's context: the last
   writers of what it accesses, and the readers of what it wrote. */
typedef struct cc__rw_iv { uint32_t buffer; uint64_t lo, hi; } cc__rw_iv;

/* Adds the bytes of x, a row at a time. */
static int cc__iv_add(cc_context* ctx, cc__rw_iv** v, size_t* n, size_t* cap, const cc__access* x) {
    uint64_t r;
    if (!x->row_bytes) return 1;
    for (r = 0; r < x->rows; r++) {
        if (!CONCERTO__GROW(ctx, *v, *cap, *n + 1)) return 0;
        (*v)[*n].buffer = x->buffer;
        (*v)[*n].lo = x->offset + r * x->stride;
        (*v)[*n].hi = (*v)[*n].lo + x->row_bytes;
        (*n)++;
    }
    return 1;
}

static int cc__iv_hits(const cc__rw_iv* v, size_t n, const cc__access* x) {
    size_t i;
    for (i = 0; i < n; i++)
        if (v[i].buffer == x->buffer && cc__acc_hits_range(x, 0, v[i].lo, v[i].hi)) return 1;
    return 0;
}

/* Removes the bytes of x from the intervals, a row at a time (one may
   split in two). */
static int cc__iv_cut(cc_context* ctx, cc__rw_iv** v, size_t* n, size_t* cap, const cc__access* x) {
    uint64_t r;
    for (r = 0; r < x->rows && x->row_bytes; r++) {
        uint64_t lo = x->offset + r * x->stride, hi = lo + x->row_bytes;
        size_t i, m = *n, k = 0;
        for (i = 0; i < m; i++) {
            cc__rw_iv* p = &(*v)[i];
            if (p->buffer != x->buffer || p->hi <= lo || hi <= p->lo) continue;
            if (p->lo < lo && hi < p->hi) {
                uint64_t end = p->hi;
                if (!CONCERTO__GROW(ctx, *v, *cap, *n + 1)) return 0;
                p = &(*v)[i];
                (*v)[*n].buffer = x->buffer;
                (*v)[*n].lo = hi;
                (*v)[*n].hi = end;
                (*n)++;
                p->hi = lo;
            } else if (p->lo < lo) p->hi = lo;
            else if (hi < p->hi) p->lo = hi;
            else p->hi = p->lo;   /* all of it */
        }
        for (i = 0; i < *n; i++) if ((*v)[i].lo < (*v)[i].hi) (*v)[k++] = (*v)[i];
        *n = k;
    }
    return 1;
}

/* Where collective op i's send (write 0) or receive (write 1) elements
   are: *buf -1 and *at its address, or, for a NULL pointer (resolved from
   the op's first region of that kind by cc_exec_create), *buf that
   region's buffer and *at its offset. Returns that region (NULL for a
   pointer, or for a NULL one without a region). */
static const cc__access* cc__coll_at(const cc__rw_src* s, int i, int write, int* buf, uintptr_t* at) {
    const cc_graph* g = s->g;
    const cc_collective* c = cc__op_coll(g, i);
    const void* p = write ? (const void*)c->recv_buf : c->send_buf;
    size_t a;
    *buf = -1;
    *at = (uintptr_t)p;
    if (p) return NULL;
    for (a = s->acc_off[i]; a < s->acc_off[i + 1]; a++)
        if (g->acc[a].is_write == write) {
            *buf = (int)g->acc[a].buffer;
            *at = (uintptr_t)g->acc[a].offset;
            return &g->acc[a];
        }
    return NULL;
}

/* 1 if collective op i's elements on both sides are where its regions
   say, for rewriting them: a pointer, or a NULL one whose region holds
   exactly the n_elems elements (so that cutting or joining the region
   cuts or joins the elements alike). */
static int cc__coll_rewritable(const cc__rw_src* s, int i) {
    const cc_collective* c = cc__op_coll(s->g, i);
    uint64_t bytes = (uint64_t)c->n_elems * cc__dtype_size(c->dtype);
    int side, buf;
    uintptr_t at;
    for (side = 0; side < 2; side++) {
        const cc__access* x = cc__coll_at(s, i, side, &buf, &at);
        if (buf >= 0 && (!x || x->n_bytes != bytes)) return 0;
    }
    return 1;
}

/* An in-place all-reduce whose every written region is split in rows (a
   NULL buffer's region too: its chunks take their elements from it); or a
   reduce-scatter or all-gather with one read and one write region, each
   holding exactly its elements on that side (n_ranks blocks on the full
   side: the send of a reduce-scatter, the receive of an all-gather). */
static int cc__dec_candidate(const cc__rw_src* s, int i) {
    const cc_graph* g = s->g;
    const cc_collective* c = cc__op_coll(g, i);
    const cc__access* x;
    size_t a;
    int n_w = 0, buf;
    uintptr_t at;
    if (c && (c->kind == CC_COLL_REDUCE_SCATTER || c->kind == CC_COLL_ALL_GATHER) && c->n_elems > 0) {
        const cc__access *rd = NULL, *wr = NULL;
        uint64_t blk = (uint64_t)c->n_elems * cc__dtype_size(c->dtype), full, shard;
        if (s->acc_off[i + 1] - s->acc_off[i] != 2) return 0;
        for (a = s->acc_off[i]; a < s->acc_off[i + 1]; a++)
            if (g->acc[a].is_write) wr = &g->acc[a];
            else rd = &g->acc[a];
        if (!rd || !wr || rd->rows > 1 || wr->rows > 1) return 0;
        full = c->kind == CC_COLL_REDUCE_SCATTER ? rd->n_bytes : wr->n_bytes;
        shard = c->kind == CC_COLL_REDUCE_SCATTER ? wr->n_bytes : rd->n_bytes;
        return shard == blk && full % blk == 0 && full / blk >= 1;
    }
    if (!c || c->kind != CC_COLL_ALL_REDUCE || c->n_elems == 0 || c->send_buf != c->recv_buf) return 0;
    if (!cc__coll_rewritable(s, i)) return 0;
    if ((x = cc__coll_at(s, i, 0, &buf, &at)) != NULL && !x->split_rows) return 0;
    for (a = s->acc_off[i]; a < s->acc_off[i + 1]; a++) {
        if (!g->acc[a].is_write) continue;
        if (!g->acc[a].split_rows) return 0;
        n_w++;
    }
    return n_w > 0;
}

/* 1 if candidate a may split by columns: an all-reduce with one region,
   read and written (in place), contiguous, its split_rows rows; a
   reduce-scatter or all-gather (one read, one write region, contiguous:
   cc__dec_candidate) whose two regions both have split_rows, in rows of
   the same bytes (the full side n_ranks times the shard's rows, rank j's
   block its rows [j*R, (j+1)*R)). */
static int cc__dec_by_cols(const cc__rw_src* s, int a) {
    const cc_graph* g = s->g;
    const cc__access *x = &g->acc[s->acc_off[a]], *y = &g->acc[s->acc_off[a] + 1];
    if (s->acc_off[a + 1] - s->acc_off[a] != 2) return 0;
    if (cc__op_coll(g, a)->kind != CC_COLL_ALL_REDUCE)
        return x->is_write != y->is_write && x->split_rows && y->split_rows && x->n_bytes % x->split_rows == 0 &&
               y->n_bytes % y->split_rows == 0 && x->n_bytes / x->split_rows == y->n_bytes / y->split_rows;
    return x->buffer == y->buffer && x->offset == y->offset && x->n_bytes == y->n_bytes && x->rows <= 1 && y->rows <= 1 &&
           x->split_rows && x->split_rows == y->split_rows;
}

/* How compute op j splits along axis: 3 by a split rule that allows the
   axis (the op has part_fn), 1 by a chunk_fn and split_rows (rows only;
   under exact_only none of its writes a partial sum, split_rows 0), 0 not
   at all (a collective, an op without fn). */
static int cc__dec_kind(const cc__rw* w, const cc__rw_src* s, int j, cc_axis axis) {
    const cc_graph* g = s->g;
    size_t p;
    if (g->coll_of[j] >= 0 || !g->fn[j]) return 0;
    if (g->split_of[j] >= 0 && (cc__split_axes(&g->splits[g->split_of[j]].s) >> axis & 1u) && g->splits[g->split_of[j]].part_fn)
        return 3;
    if (!g->chunk_fn[j] || axis != CC_AXIS_ROWS) return 0;
    if (w->d.exact_only)
        for (p = s->acc_off[j]; p < s->acc_off[j + 1]; p++)
            if (g->acc[p].is_write && !g->acc[p].split_rows) return 0;
    return 1;
}

/* The neighbours of op j on one side, each once, into out[0 .. *n): side 0
   its producers, the last writers before j of the bytes j reads (all: of
   every byte j accesses); side 1 its consumers, the ops after j that read
   bytes j wrote before another op overwrites them. seen (one per op) is
   all zero before and after. Cost: a walk of the graph from j, O(accesses
   * intervals). */
static cc_result cc__dec_scan(cc__rw* w, const cc__rw_src* s, int j, int side, int all, int* out, int* n, char* seen) {
    const cc_graph* g = s->g;
    cc__rw_iv* v = NULL;
    size_t nv = 0, cap = 0, p;
    int q, m, oom = 0;
    *n = 0;
    for (p = s->acc_off[j]; p < s->acc_off[j + 1] && !oom; p++)
        if ((side == 0 ? all || !g->acc[p].is_write : g->acc[p].is_write) && !cc__iv_add(w->ctx, &v, &nv, &cap, &g->acc[p])) oom = 1;
    for (q = side == 0 ? j - 1 : j + 1; q >= 0 && q < g->n && nv > 0 && !oom; q += side == 0 ? -1 : 1) {
        for (p = s->acc_off[q]; p < s->acc_off[q + 1] && !seen[q]; p++)
            if (g->acc[p].is_write == (side == 0) && cc__iv_hits(v, nv, &g->acc[p])) {
                seen[q] = 1;
                out[(*n)++] = q;
            }
        for (p = s->acc_off[q]; p < s->acc_off[q + 1] && !oom; p++)
            if (g->acc[p].is_write && !cc__iv_cut(w->ctx, &v, &nv, &cap, &g->acc[p])) oom = 1;
    }
    for (m = 0; m < *n; m++) seen[out[m]] = 0;
    cc__free(w->ctx, v);
    return oom ? CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who) : CC_OK;
}

/* A context being formed around collective a along axis: its immediate
   neighbours (node[0 .. n_near), depth 1: the last writers, before a, of
   the bytes a accesses, and the ops after a that read bytes a wrote before
   another op overwrites them; kind 0 for one that does not split along the
   axis, which stays whole), then the ops reached beyond the neighbours
   that split, each once, breadth first, at most max_context_depth ops from
   a: upstream the producers of a producer (of what it reads), downstream
   the consumers of a consumer. An op beyond the immediate neighbours is
   reached only if it splits along the axis and is no neighbour of another
   collective (whose own context it belongs to). Which of them a split in k
   takes is cc__dec_roles'. A neighbour left whole is outside the context:
   the dependencies derived from the regions make it wait for every chunk
   (a consumer) or every chunk wait for it (a producer). */
typedef struct cc__dec_node { int op, parent, kind, depth; } cc__dec_node;   /* parent: a node index, -1 for a's own */
typedef struct cc__dec_ctx {
    int a;
    cc_axis axis;
    cc_coll_kind kind;               /* a's */
    int ranks;                       /* a reduce-scatter's or all-gather's blocks (n_ranks); 1 for an all-reduce */
    cc__dec_node* node; size_t n_node, node_cap;
    size_t n_near;
    int n_split;                     /* immediate neighbours that split along the axis (kind > 0) */
} cc__dec_ctx;

static cc_result cc__dec_push(cc__rw* w, cc__dec_ctx* C, int op, int parent, int kind, int depth) {
    cc__dec_node* nd;
    if (!CONCERTO__GROW(w->ctx, C->node, C->node_cap, C->n_node + 1))
        return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    nd = &C->node[C->n_node++];
    nd->op = op; nd->parent = parent; nd->kind = kind; nd->depth = depth;
    return CC_OK;
}

static cc_result cc__dec_reach(cc__rw* w, const cc__rw_src* s, int a, cc_axis axis, cc__dec_ctx* C) {
    const cc_graph* g = s->g;
    int *buf, *buf2, n, n2, m, side;
    char *seen, *mark;
    size_t h;
    cc_result rc = CC_OK;
    C->a = a; C->axis = axis; C->n_node = C->n_near = 0; C->n_split = 0;
    C->kind = cc__op_coll(g, a)->kind;
    C->ranks = 1;
    if (C->kind != CC_COLL_ALL_REDUCE) {   /* the full side's bytes over a block's */
        uint64_t full = 0, blk = (uint64_t)cc__op_coll(g, a)->n_elems * cc__dtype_size(cc__op_coll(g, a)->dtype);
        size_t p;
        for (p = s->acc_off[a]; p < s->acc_off[a + 1]; p++)
            if (g->acc[p].is_write == (C->kind == CC_COLL_ALL_GATHER)) full = g->acc[p].n_bytes;
        C->ranks = (int)(full / blk);
    }
    buf = (int*)cc__alloc(w->ctx, ((size_t)g->n + 1) * sizeof *buf);
    buf2 = (int*)cc__alloc(w->ctx, ((size_t)g->n + 1) * sizeof *buf2);
    seen = (char*)cc__calloc(w->ctx, (size_t)g->n + 1, 1);
    mark = (char*)cc__calloc(w->ctx, (size_t)g->n + 1, 1);
    if (!buf || !buf2 || !seen || !mark) { rc = CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who); goto done; }
    mark[a] = 1;
    for (side = 0; side < 2 && rc == CC_OK; side++) {
        if ((rc = cc__dec_scan(w, s, a, side, C->kind == CC_COLL_ALL_REDUCE, buf, &n, seen)) != CC_OK) break;
        for (m = 0; m < n && rc == CC_OK; m++) {
            int kind = cc__dec_kind(w, s, buf[m], axis);
            C->n_split += kind != 0;
            mark[buf[m]] = 1;
            rc = cc__dec_push(w, C, buf[m], -1, kind, 1);
        }
    }
    C->n_near = C->n_node;
    for (h = 0; h < C->n_node && rc == CC_OK && C->n_split; h++) {
        cc__dec_node nd = C->node[h];
        if (nd.depth >= w->d.max_context_depth || !nd.kind) continue;   /* growth only through ops that split */
        if ((rc = cc__dec_scan(w, s, nd.op, nd.op > a, 0, buf, &n, seen)) != CC_OK) break;
        for (m = 0; m < n && rc == CC_OK; m++) {
            int q = buf[m], kind, other = 0, i;
            if (mark[q]) continue;
            mark[q] = 1;
            if (!(kind = cc__dec_kind(w, s, q, axis))) continue;
            for (side = 0; side < 2 && !other && rc == CC_OK; side++)
                if ((rc = cc__dec_scan(w, s, q, side, 1, buf2, &n2, seen)) == CC_OK)
                    for (i = 0; i < n2; i++) other |= buf2[i] != a && g->coll_of[buf2[i]] >= 0;
            if (rc == CC_OK && !other) rc = cc__dec_push(w, C, q, (int)h, kind, nd.depth + 1);
        }
    }
done:
    cc__free(w->ctx, buf); cc__free(w->ctx, buf2); cc__free(w->ctx, seen); cc__free(w->ctx, mark);
    return rc;
}

/* cc_op_split_check of op j along axis in k, quietly (a candidate that
   does not split is no error of the rewrite's): *yes 1 if it passes (and
   is exact where the desc asks for exact splits). Fails only out of
   memory. */
static cc_result cc__rw_splits(cc__rw* w, const cc_graph* g, int j, cc_axis axis, int k, int* yes) {
    cc_context* ctx = w->ctx;
    char saved_msg[CONCERTO__MSG_MAX];
    cc_logger saved_logger = ctx->logger;
    cc_result saved_result = ctx->last_result, rc;
    int exact = 0;
    memcpy(saved_msg, ctx->last_error, sizeof saved_msg);
    ctx->logger.log_fn = NULL;
    rc = cc_op_split_check((cc_graph*)g, cc_graph_op(g, j), axis, k, &exact);   /* reads the graph only */
    ctx->logger = saved_logger;
    ctx->last_result = saved_result;
    memcpy(ctx->last_error, saved_msg, sizeof saved_msg);
    *yes = rc == CC_OK && (exact || !w->d.exact_only);
    if (rc == CC_ERR_OUT_OF_MEMORY) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    return CC_OK;
}

/* *yes 1 if op j (role r) splits in k: by its rule (r 3:
   cc_op_split_check; chunks may be uneven), or by split_rows (r 1, 2),
   whose every split region's rows k divides (a contiguous region's bytes
   divide into its rows). Fails only out of memory. */
static cc_result cc__dec_splits_in(cc__rw* w, const cc__rw_src* s, int j, int r, cc_axis axis, int k, int* yes) {
    const cc_graph* g = s->g;
    size_t p;
    if (r == 3) return cc__rw_splits(w, g, j, axis, k, yes);
    *yes = 1;
    for (p = s->acc_off[j]; p < s->acc_off[j + 1]; p++) {
        const cc__access* x = &g->acc[p];
        if (x->split_rows && (x->split_rows % (uint64_t)k || (x->rows <= 1 && x->n_bytes % x->split_rows))) *yes = 0;
    }
    return CC_OK;
}

/* The full side of a reduce-scatter or all-gather is its n_ranks blocks:
   the send of a reduce-scatter, whose producers are on it, the receive of
   an all-gather, whose consumers are. Chunk i of N of the collective moves
   sub-block i of every rank's block, so an op on the full side is cut in
   n_ranks * N pieces, piece j*N + i being sub-block i of block j, and piece
   c belongs to the collective's chunk c % N (its stage); an op elsewhere
   (every op of an all-reduce's context, and every op of any context split
   by columns: a column block spans every rank's block) is cut in N, piece
   c in stage c. */
static int cc__dec_full(const cc__dec_ctx* C, int j) {
    return C->ranks > 1 && j != C->a && C->axis == CC_AXIS_ROWS &&
           ((C->kind == CC_COLL_REDUCE_SCATTER && j < C->a) || (C->kind == CC_COLL_ALL_GATHER && j > C->a));
}
static int cc__dec_pieces(const cc__dec_ctx* C, int j, int N) { return cc__dec_full(C, j) ? C->ranks * N : N; }
static int cc__dec_stage(const cc__dec_ctx* C, int j, int c, int N) { return cc__dec_full(C, j) ? c % N : c; }

/* *yes 1 if N chunks fit C's collective: N divides its n_elems (and, for
   an all-reduce by rows, its split regions' rows; by columns, a row's
   elements, the same in its regions: cc__dec_by_cols). Fails only out of
   memory. */
static cc_result cc__dec_fits(cc__rw* w, const cc__rw_src* s, const cc__dec_ctx* C, int N, int* yes) {
    const cc_graph* g = s->g;
    cc_result rc = CC_OK;
    *yes = cc__op_coll(g, C->a)->n_elems % (size_t)N == 0;
    if (*yes && C->axis == CC_AXIS_COLS) {   /* by columns: N divides a row's elements */
        const cc__access* x = &g->acc[s->acc_off[C->a]];
        uint64_t es = cc__dtype_size(cc__op_coll(g, C->a)->dtype);
        *yes = x->split_rows && x->n_bytes % x->split_rows == 0 && (x->n_bytes / x->split_rows) % (es * (uint64_t)N) == 0;
    }
    if (*yes && C->kind == CC_COLL_ALL_REDUCE && C->axis == CC_AXIS_ROWS) rc = cc__dec_splits_in(w, s, C->a, 2, C->axis, N, yes);
    return rc;
}

/* Chunk ch of k of op i of a context (role r) along axis: its regions,
   reads then writes, into regs (regions of s->g), *n of them, the first
   *nr reads; part (one per write) its partial-sum flags. By the op's rule
   (r 3); by split_rows (r 1, an all-reduce): rows [ch*R/k, (ch+1)*R/k) of
   each region with split_rows R, the others whole; a reduce-scatter's or
   all-gather's chunk by rows: sub-block ch of its block on the shard side
   (contiguous) and of every rank's block on the full side (strided, one
   row a block); a collective's chunk by columns: column block ch of every
   row of each region (R rows of C bytes, split_rows R: bytes
   [ch*C/k, (ch+1)*C/k) of each, strided). */
static cc_result cc__dec_chunk(const cc__rw_src* s, int i, int r, cc_axis axis, int ch, int k, cc_region* regs, int* part, int* nr,
                               int* n) {
    const cc_collective* c = cc__op_coll(s->g, i);
    int q;
    *n = cc__rw_regions(s, i, s->g, regs, nr);
    if (r == 3) return cc__split_regions((cc_graph*)s->g, i, axis, ch, k, regs, regs + *nr, part);
    if (c && axis == CC_AXIS_COLS) {   /* columns ch of each region's split_rows rows, strided */
        for (q = 0; q < *n; q++) {
            cc_region* rg = &regs[q];
            uint64_t R = rg->split_rows, row = rg->n_bytes / R, cw = row / (uint64_t)k;
            rg->offset_bytes += (uint64_t)ch * cw;
            rg->n_bytes = cw;
            rg->n_rows = R >= 2 ? R : 0;
            rg->stride_bytes = R >= 2 ? row : 0;
            rg->split_rows = 0;
        }
        return CC_OK;
    }
    if (c && c->kind != CC_COLL_ALL_REDUCE) {   /* a candidate: one read, one write */
        uint64_t blk = (uint64_t)c->n_elems * cc__dtype_size(c->dtype), sub = blk / (uint64_t)k;
        int rs = c->kind == CC_COLL_REDUCE_SCATTER;
        cc_region* full = &regs[rs ? 0 : 1];
        cc_region* shard = &regs[rs ? 1 : 0];
        uint64_t ranks = full->n_bytes / blk;
        shard->offset_bytes += (uint64_t)ch * sub;
        shard->n_bytes = sub;
        shard->split_rows = 0;
        full->offset_bytes += (uint64_t)ch * sub;
        full->n_bytes = sub;
        full->split_rows = 0;
        full->n_rows = ranks >= 2 ? ranks : 0;
        full->stride_bytes = ranks >= 2 ? blk : 0;
        return CC_OK;
    }
    for (q = 0; q < *n; q++) {
        cc_region* rg = &regs[q];
        if (rg->split_rows && rg->n_rows > 1) {   /* strided: its rows in k runs */
            uint64_t each = rg->n_rows / (uint64_t)k;
            rg->offset_bytes += (uint64_t)ch * each * rg->stride_bytes;
            rg->n_rows = each;
            rg->split_rows /= (uint64_t)k;
        } else if (rg->split_rows) {
            uint64_t rows = rg->split_rows / (uint64_t)k, row_bytes = rg->n_bytes / rg->split_rows;
            rg->offset_bytes += (uint64_t)ch * rows * row_bytes;
            rg->n_bytes = rows * row_bytes;
            rg->split_rows = rows;
        }
    }
    return CC_OK;
}

/* Region rg as an access, to test overlaps. */
static cc__access cc__dec_acc(const cc_region* rg, int is_write) {
    cc__access a;
    memset(&a, 0, sizeof a);
    a.buffer = rg->buffer.id - 1;
    a.offset = rg->offset_bytes;
    a.rows = rg->n_rows > 1 ? rg->n_rows : 1;
    a.row_bytes = rg->n_bytes;
    a.stride = rg->n_rows > 1 ? rg->stride_bytes : rg->n_bytes;
    a.n_bytes = (a.rows - 1) * a.stride + a.row_bytes;
    a.is_write = is_write;
    return a;
}

/* 1 if the regions x (nx, the first rx reads) and y conflict: one of them
   writes a byte the other touches. */
static int cc__dec_conflict(const cc_region* x, int nx, int rx, const cc_region* y, int ny, int ry) {
    int p, q;
    for (p = 0; p < nx; p++)
        for (q = 0; q < ny; q++) {
            cc__access u, v;
            if ((p < rx && q < ry) || x[p].buffer.id != y[q].buffer.id) continue;
            u = cc__dec_acc(&x[p], p >= rx);
            v = cc__dec_acc(&y[q], q >= ry);
            if (cc__acc_overlap(&u, &v)) return 1;
        }
    return 0;
}

/* Every piece of op i (role r) in k: piece ch's regions at regs[ch * st ..]. */
static cc_result cc__dec_chunks(const cc__rw_src* s, int i, int r, cc_axis axis, int k, cc_region* regs, size_t st, int* part,
                                int* nr, int* n) {
    int ch;
    cc_result rc = CC_OK;
    for (ch = 0; ch < k && rc == CC_OK; ch++) rc = cc__dec_chunk(s, i, r, axis, ch, k, regs + (size_t)ch * st, part, nr, n);
    return rc;
}

/* *yes = 1 if op q (role r), cut in its pieces for N chunks, lines up with
   every op of the context (role): of each pair, a piece of the earlier op
   conflicts with a piece of the later one only where its stage is not
   after the later piece's, so that no piece waits for a later stage and
   the chunks pipeline. Cost: O(context * pieces^2 * regions^2). */
static cc_result cc__dec_lines_up(cc__rw* w, const cc__rw_src* s, const cc__dec_ctx* C, const char* role, int q, int r, int N,
                                  int* yes) {
    const cc_graph* g = s->g;
    size_t st = s->max_acc ? s->max_acc : 1;
    int kq = cc__dec_pieces(C, q, N), kmax = C->ranks * N;
    cc_region* A = (cc_region*)cc__alloc(w->ctx, (size_t)kmax * st * sizeof *A);
    cc_region* B = (cc_region*)cc__alloc(w->ctx, (size_t)kmax * st * sizeof *B);
    int* part = (int*)cc__alloc(w->ctx, st * sizeof *part);
    int na = 0, ra = 0, nb = 0, rb = 0, c, i, m;
    cc_result rc = CC_OK;
    *yes = 0;
    if (!A || !B || !part) { rc = CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who); goto done; }
    if ((rc = cc__dec_chunks(s, q, r, C->axis, kq, A, st, part, &ra, &na)) != CC_OK) goto done;
    *yes = 1;
    for (c = 0; c < g->n && *yes; c++) {
        const cc_region *E, *L;
        int ne, re, nl, rl, ke, kl, e_op, l_op, kc = cc__dec_pieces(C, c, N);
        if (!role[c] || c == q) continue;
        if ((rc = cc__dec_chunks(s, c, role[c], C->axis, kc, B, st, part, &rb, &nb)) != CC_OK) { *yes = 0; break; }
        if (c < q) { E = B; ne = nb; re = rb; ke = kc; e_op = c; L = A; nl = na; rl = ra; kl = kq; l_op = q; }
        else { E = A; ne = na; re = ra; ke = kq; e_op = q; L = B; nl = nb; rl = rb; kl = kc; l_op = c; }
        for (i = 0; i < kl && *yes; i++)
            for (m = 0; m < ke && *yes; m++)
                if (cc__dec_stage(C, e_op, m, N) > cc__dec_stage(C, l_op, i, N) &&
                    cc__dec_conflict(E + (size_t)m * st, ne, re, L + (size_t)i * st, nl, rl))
                    *yes = 0;
    }
done:
    cc__free(w->ctx, A); cc__free(w->ctx, B); cc__free(w->ctx, part);
    return rc;
}

/* The context C in N chunks, into role (one per op): the collective (2),
   if N fits it, and each immediate neighbour that splits in its pieces
   (its kind; the others 0, whole); then, unless near_only, each op reached
   beyond them, in the order reached, whose parent is in, that splits in
   its pieces and lines up with every op already in. *fits 0 (role all
   zero) if N does not fit the collective or no immediate neighbour splits
   in it; *grown 1 if an op beyond them is in. */
static cc_result cc__dec_roles(cc__rw* w, const cc__rw_src* s, const cc__dec_ctx* C, int N, int near_only, char* role, int* fits,
                               int* grown) {
    const cc_graph* g = s->g;
    size_t h;
    int yes;
    cc_result rc;
    memset(role, 0, (size_t)g->n);
    *fits = *grown = 0;
    if ((rc = cc__dec_fits(w, s, C, N, &yes)) != CC_OK || !yes) return rc;
    role[C->a] = 2;
    for (h = 0; h < C->n_near; h++) {
        const cc__dec_node* nd = &C->node[h];
        if (!nd->kind) continue;
        if ((rc = cc__dec_splits_in(w, s, nd->op, nd->kind, C->axis, cc__dec_pieces(C, nd->op, N), &yes)) != CC_OK) break;
        if (yes) { role[nd->op] = (char)nd->kind; *fits = 1; }
    }
    if (rc != CC_OK || !*fits) { memset(role, 0, (size_t)g->n); return rc; }
    for (h = C->n_near; h < C->n_node && !near_only; h++) {
        const cc__dec_node* nd = &C->node[h];
        if (!role[C->node[nd->parent].op]) continue;
        if ((rc = cc__dec_splits_in(w, s, nd->op, nd->kind, C->axis, cc__dec_pieces(C, nd->op, N), &yes)) != CC_OK) return rc;
        if (!yes) continue;
        if ((rc = cc__dec_lines_up(w, s, C, role, nd->op, nd->kind, N, &yes)) != CC_OK) return rc;
        if (yes) { role[nd->op] = (char)nd->kind; *grown = 1; }
    }
    return CC_OK;
}

/* A reduce-scatter's or all-gather's N chunks into dst, in chunk order.
   By rows, each moves sub-block ch of every rank's block through a
   transient buffer "<name>#<ch>/<N>.buf" of n_ranks sub-blocks in rank
   order: a reduce-scatter's chunk packs them from its send ("...pack", a
   copy op on its stream) and reduce-scatters the buffer into sub-block ch
   of its receive; an all-gather's chunk gathers sub-block ch of its send
   into the buffer and unpacks it into its receive ("...unpack"). By
   columns (an all-reduce's too), each packs column block ch of its send
   region's rows into a transient buffer, runs the collective from it into
   another (an all-reduce: in place in the first) and unpacks that into
   column block ch of its receive region's rows; the buffer of n_ranks
   blocks (rank j's: column block ch of rows [j*R, (j+1)*R)) is "...buf",
   the rank's own block "...shard" (an all-reduce's one buffer "...buf").
   The chunk collectives are chained in chunk order. */
static cc_result cc__dec_build_coll(cc__rw* w, const cc__rw_src* s, cc__rw_scratch* x, cc_graph* dst, int i, cc_axis axis, int N) {
    const cc_graph* g = s->g;
    const cc_collective* c = cc__op_coll(g, i);
    size_t each = c->n_elems / (size_t)N;
    uint64_t sub = (uint64_t)each * cc__dtype_size(c->dtype);
    int rs = c->kind == CC_COLL_REDUCE_SCATTER, ar = c->kind == CC_COLL_ALL_REDUCE, cols = axis == CC_AXIS_COLS;
    int ch, q, nr, n, side, dem[CONCERTO_MAX_RESOURCES];
    int prev = -1;
    cc_result rc = CC_OK;
    for (ch = 0; ch < N && rc == CC_OK; ch++) {
        cc_op_desc d;
        cc_split sp;
        cc_collective part;
        cc_buffer tb[2];
        cc_region whole[2];   /* the transient buffers the chunk collective reads, writes (an all-reduce's: one) */
        memset(tb, 0, sizeof tb);
        cc_op dep;
        uint64_t bytes[2], cw = 0;
        const char* nm = cc__name(g, i);
        cc__rw_desc_of(s, i, dst, x->regs, dem, &sp, &d);
        if ((rc = cc__dec_chunk(s, i, 2, axis, ch, N, x->regs, x->part, &nr, &n)) != CC_OK) break;
        for (q = 0; q < n; q++) x->regs[q].buffer.graph = dst->serial;
        for (side = 0; side < 2; side++)   /* a chunk region's bytes: its rows (1 if contiguous) times a row's */
            bytes[side] = (x->regs[side].n_rows > 1 ? x->regs[side].n_rows : 1) * x->regs[side].n_bytes;
        if (cols) cw = x->regs[0].n_bytes;   /* a column block's bytes in a row, the same on both sides */
        else if (!ar) bytes[0] = bytes[1] = bytes[rs ? 0 : 1];   /* the full side's sub-blocks */
        for (side = 0; side < 2 && rc == CC_OK; side++) {
            if (side == 1 && ar) { tb[1] = tb[0]; break; }   /* in place */
            if (side == 1 && !cols) break;                     /* one buffer by rows */
            snprintf(x->name, x->name_cap, "%s#%d/%d.%s", nm, ch, N, ar || !cols || side == !rs ? "buf" : "shard");
            rc = cc__graph_add_buffer(dst, x->name, bytes[side], 1, &tb[side]);
        }
        if (rc != CC_OK) break;
        for (side = 0; side < 2; side++) {
            memset(&whole[side], 0, sizeof whole[side]);
            whole[side].buffer = tb[cols ? side : 0];
            whole[side].n_bytes = bytes[side];
        }
        part = *c;
        part.n_elems = each;
        if (cols || rs) {   /* the send side packed: column block ch of every row, or sub-block ch of every block */
            snprintf(x->name, x->name_cap, "%s#%d/%d.pack", nm, ch, N);
            if ((rc = cc__rw_add_copy(w, dst, x->name, d.stream, &x->regs[0],
                                      c->send_buf ? (const char*)c->send_buf + ch * (cols ? cw : sub) : NULL, &whole[0], NULL,
                                      NULL, 0, NULL)) != CC_OK)
                break;
            part.send_buf = NULL;   /* the buffer: its first read region */
            d.reads = &whole[0];
        } else {
            part.send_buf = c->send_buf ? (const char*)c->send_buf + ch * sub : NULL;
            d.reads = &x->regs[0];
        }
        if (cols || !rs) {   /* the receive side unpacked after it */
            part.recv_buf = NULL;   /* the buffer: its first write region */
            d.writes = &whole[1];
        } else {
            part.recv_buf = c->recv_buf ? (char*)c->recv_buf + ch * sub : NULL;
            d.writes = &x->regs[1];
        }
        d.n_reads = d.n_writes = 1;
        snprintf(x->name, x->name_cap, "%s#%d/%d", nm, ch, N);
        d.name = x->name;
        d.coll = &part;
        d.duration_us = cc__rw_coll_us(w, &part, each);
        if (prev >= 0) {   /* the chunk collectives in chunk order, the same on every rank */
            dep = cc_graph_op(dst, prev);
            d.deps = &dep;
            d.n_deps = 1;
        }
        if ((rc = cc__rw_add(w, dst, &d)) != CC_OK) break;
        prev = dst->n - 1;
        if (cols || !rs) {
            uint64_t off = cols ? cw * (uint64_t)ch : sub * (uint64_t)ch;
            snprintf(x->name, x->name_cap, "%s#%d/%d.unpack", nm, ch, N);
            rc = cc__rw_add_copy(w, dst, x->name, d.stream, &whole[1], NULL, &x->regs[1],
                                 c->recv_buf ? (char*)c->recv_buf + off : NULL, NULL, 0, NULL);
        }
    }
    return rc;
}

/* The graph with every op of the context C (role) replaced by its pieces
   for N chunks in its place (an op on the full side of a reduce-scatter or
   all-gather: in stage order, sub-block i of every block before i + 1);
   x->first / x->count say where each source op went. */
static cc_result cc__dec_build(cc__rw* w, const cc__rw_src* s, cc__rw_scratch* x, const cc__dec_ctx* C, const char* role, int N,
                               cc_graph** out) {
    const cc_graph* g = s->g;
    cc_axis axis = C->axis;
    cc_graph* dst = NULL;
    int i, t, ch, q, dem[CONCERTO_MAX_RESOURCES];
    cc_result rc;
    *out = NULL;
    if ((rc = cc__rw_begin(w, g, &dst)) != CC_OK) return rc;
    for (i = 0; i < g->n && rc == CC_OK; i++) {
        int k = role[i] ? cc__dec_pieces(C, i, N) : 1, full = role[i] && cc__dec_full(C, i);
        x->first[i] = dst->n;
        if (role[i] == 2 && (C->kind != CC_COLL_ALL_REDUCE || axis != CC_AXIS_ROWS)) {
            rc = cc__dec_build_coll(w, s, x, dst, i, axis, N);
            x->count[i] = dst->n - x->first[i];
            continue;
        }
        x->count[i] = k;
        for (t = 0; t < k && rc == CC_OK; t++) {
            cc_op_desc d;
            cc_collective part;
            cc__chunk_rec rec;
            cc_op prev;
            cc_split sp;
            int nr, n;
            ch = full ? (t % C->ranks) * N + t / C->ranks : t;   /* block t % ranks, stage t / ranks */
            cc__rw_desc_of(s, i, dst, x->regs, dem, &sp, &d);
            memset(&rec, 0, sizeof rec);
            if (role[i]) {   /* the piece's regions */
                if ((rc = cc__dec_chunk(s, i, role[i], axis, ch, k, x->regs, x->part, &nr, &n)) != CC_OK) break;
                for (q = 0; q < n; q++) x->regs[q].buffer.graph = dst->serial;
            }
            if (role[i] == 3) {   /* by its rule: told its part of the axis */
                const cc__split_rec* sr = &g->splits[g->split_of[i]];
                uint64_t E = sr->s.extent[axis];
                rec.part = sr->part_fn;
                rec.sc.axis = axis;
                rec.sc.index = ch;
                rec.sc.count = k;
                rec.sc.begin = (uint64_t)ch * E / (uint64_t)k;
                rec.sc.end = (uint64_t)(ch + 1) * E / (uint64_t)k;
            }
            if (role[i]) {
                snprintf(x->name, x->name_cap, "%s#%d/%d", cc__name(g, i), ch, k);
                d.name = x->name;
                if (d.coll) {   /* (d.coll is op i's collective: copied from there) */
                    size_t each = d.coll->n_elems / (size_t)k, off = each * (size_t)ch * cc__dtype_size(d.coll->dtype);
                    part = *cc__op_coll(g, i);
                    part.n_elems = each;
                    if (part.send_buf) part.send_buf = (const char*)part.send_buf + off;   /* NULL: the chunk's region */
                    if (part.recv_buf) part.recv_buf = (char*)part.recv_buf + off;
                    d.coll = &part;
                    d.duration_us = cc__rw_coll_us(w, &part, each);
                } else {
                    rec.fn = g->chunk_fn[i];
                    rec.user_data = g->user_data[i];
                    rec.chunk = ch;
                    rec.n_chunks = k;
                    d.fn = cc__chunk_trampoline;
                    d.user_data = &rec;
                    d.chunk_fn = NULL;
                    d.split = NULL;
                    d.part_fn = NULL;
                    d.duration_us = cc__rw_chunk_us(g, i, &rec);
                }
                if (t > 0) {   /* the pieces of one op run in the order made */
                    prev = cc_graph_op(dst, dst->n - 1);
                    d.deps = &prev;
                    d.n_deps = 1;
                }
            }
            rc = cc__rw_add(w, dst, &d);
        }
    }
    if (rc == CC_OK) rc = cc__rw_edges(w, dst, g, x->first, x->count);
    if (rc != CC_OK) { cc_graph_destroy(dst); return rc; }
    *out = dst;
    return CC_OK;
}

/* Remembers the context (role) of collective a of the current graph,
   split along axis in k with the judged gain, for the report. */
static cc_result cc__dec_record(cc__rw_search* S, int a, const char* role, cc_axis axis, int k, double gain) {
    cc__rw* w = &S->w;
    const cc_graph* g = S->cur;
    cc_rewrite_context* c;
    size_t len = 1, at = 0;
    int j;
    char* ops;
    char* coll;
    for (j = 0; j < g->n; j++) if (role[j]) len += strlen(cc__name(g, j)) + 2;
    ops = (char*)cc__alloc(w->ctx, len);
    coll = (char*)cc__alloc(w->ctx, strlen(cc__name(g, a)) + 1);
    if (!ops || !coll || !CONCERTO__GROW(w->ctx, S->ctxs, S->ctxs_cap, S->n_ctxs + 1)) {
        cc__free(w->ctx, ops); cc__free(w->ctx, coll);
        return CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    }
    ops[0] = 0;
    for (j = 0; j < g->n; j++) {
        const char* nm = cc__name(g, j);
        size_t n = strlen(nm);
        if (!role[j]) continue;
        if (at) { memcpy(ops + at, ", ", 2); at += 2; }
        memcpy(ops + at, nm, n);
        at += n;
        ops[at] = 0;
    }
    strcpy(coll, cc__name(g, a));
    c = &S->ctxs[S->n_ctxs++];
    memset(c, 0, sizeof *c);
    c->collective = coll;
    c->kind = cc__op_coll(g, a)->kind;
    c->axis = axis;
    c->n_chunks = k;
    for (j = 0; j < g->n; j++) c->n_ops += role[j] != 0;
    c->ops = ops;
    c->gain_us = gain;
    c->measured = 1;
    for (j = 0; j < g->n; j++)
        if (role[j] && g->coll_of[j] < 0 && !g->has_ccost[j]) c->measured = 0;
    return CC_OK;
}

/* A decomposition in progress: the search, the context being tried, where
   each input op is now, and the current graph's start times in the stream
   simulation of its best order known. */
typedef struct cc__dec {
    cc__rw_search S;
    cc__dec_ctx C;
    int* map;                        /* input op -> its op in the current graph, -1 once split */
    double* start; size_t start_cap; /* [cur->n] the current graph's simulated start times */
    double* busy; size_t n_busy;     /* their compute time: merged [lo, hi) pairs */
    int busy_valid;
} cc__dec;

/* Tries the context D->C of the current graph in k = 2, 4, ... max_chunks
   chunks, each screened, k increasing while doubling it still shortens the
   screen: first the context grown as far as it splits in k and lines up
   (cc__dec_roles); if no k of it screens shorter than the current graph,
   the immediate context alone, for the k where the two differ. The best
   screened (the first found on ties) becomes the current graph where its
   screen is strictly shorter than the current graph's, or, where it is
   close, if a full solve of it is strictly shorter than the current
   graph's; D->map follows it. */
static cc_result cc__dec_try(cc__dec* D) {
    cc__rw_search* S = &D->S;
    cc__rw* w = &S->w;
    const cc__dec_ctx* C = &D->C;
    cc_graph* best = NULL;
    int* best_first = NULL;
    char* best_role = NULL;
    double best_mk = HUGE_VAL, cmk = 0;
    unsigned grown_k = 0;   /* bit log2(k): the grown context at k differs from the immediate one */
    int i, k, lg, best_k = 0, near, n = S->cur->n, taken = 0;
    cc_result rc = CC_OK;
    best_first = (int*)cc__alloc(w->ctx, ((size_t)n + 1) * sizeof *best_first);
    best_role = (char*)cc__alloc(w->ctx, (size_t)n + 1);
    if (!best_first || !best_role) rc = CONCERTO__FAIL(w->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", w->who);
    for (near = 0; near < 2 && rc == CC_OK && !(best && best_mk < S->mk) && !S->stop; near++) {
        double prev = HUGE_VAL;
        if (near && !grown_k) break;   /* the same context: screened already */
        for (k = 2, lg = 1; k <= w->d.max_chunks && rc == CC_OK; k *= 2, lg++) {
            cc_graph* cand = NULL;
            int fits = 0, grown = 0;
            if ((rc = cc__dec_roles(w, &S->s, C, k, near, S->x.mark, &fits, &grown)) != CC_OK) break;
            if (grown && lg < 32) grown_k |= 1u << lg;
            if (fits && (!near || (lg < 32 && (grown_k >> lg & 1u)))) {
                if (cc__rw_spent(w)) { S->stop = 1; break; }
                if ((rc = cc__dec_build(w, &S->s, &S->x, C, S->x.mark, k, &cand)) != CC_OK) break;
                if ((rc = cc__rw_screen(S, cand, &cmk)) != CC_OK) { cc_graph_destroy(cand); break; }
                if (cmk < best_mk) {   /* strictly better; the first found on ties */
                    int* t = S->bord;
                    memcpy(best_first, S->x.first, (size_t)n * sizeof *best_first);
                    memcpy(best_role, S->x.mark, (size_t)n);
                    cc_graph_destroy(best);
                    best = cand;
                    best_mk = cmk;
                    best_k = k;
                    S->bord = S->cord;   /* its order to bord */
                    S->cord = t;
                } else cc_graph_destroy(cand);
                if (!(cmk < prev)) break;   /* doubling k no longer pays */
                prev = cmk;
            }
            if (k > w->d.max_chunks / 2) break;   /* k * 2 would pass max_chunks (or overflow) */
        }
    }
    if (rc == CC_OK && best) {
        int* t = S->bord;
        S->bord = S->cord;   /* its order back to cord */
        S->cord = t;
        if (best_mk < S->mk) {   /* kept by its screen */
            if ((rc = cc__dec_record(S, C->a, best_role, C->axis, best_k, S->mk - best_mk)) == CC_OK) {
                cc__rw_search_take(S, best, best_mk);
                taken = 1;
            }
        } else if (best_mk <= S->mk * (1 + CONCERTO__RW_CLOSE) && cc__rw_can_solve(S, S->ready ? 1 : 2)) {
            double before = 0, after = 0;
            t = S->bord;   /* cur's own solve first, out of its order's way */
            S->bord = S->cord;
            S->cord = t;
            if ((rc = cc__rw_search_full(S, 1, 0, S->n_changed)) == CC_OK) {
                before = S->cur_full;
                t = S->bord;
                S->bord = S->cord;
                S->cord = t;
                rc = cc__dec_record(S, C->a, best_role, C->axis, best_k, 0);
            }
            if (rc == CC_OK) rc = cc__rw_search_close(S, best, best_mk, 0, S->n_changed, S->n_changed + 1, &taken, &after);
            if (rc == CC_OK && taken) S->ctxs[S->n_ctxs - 1].gain_us = before - after;
            else if (rc == CC_OK) cc__rw_ctxs_drop(S, S->n_ctxs - 1);
        }
    }
    if (rc == CC_OK && taken) {
        for (i = 0; i < S->input->n; i++)
            if (D->map[i] >= 0) D->map[i] = best_role[D->map[i]] ? -1 : best_first[D->map[i]];
        best = NULL;
        D->busy_valid = 0;
        S->n_changed++;
        if (!S->ready) rc = cc__rw_search_full(S, 0, 0, S->n_changed);
    }
    cc_graph_destroy(best);
    cc__free(w->ctx, best_first); cc__free(w->ctx, best_role);
    return rc;
}

/* ---- exposed time: which collective is tried first -----------------------*/
static int cc__dec_span_cmp(const void* x, const void* y) {
    const double* a = (const double*)x;
    const double* b = (const double*)y;
    return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1];
}

/* D->start: the current graph's start times in the stream simulation of
   its best order known (all 0 where that order is not one of it). */
static cc_result cc__dec_starts(cc__dec* D) {
    cc__rw_search* S = &D->S;
    const cc_graph* g = S->cur;
    cc_context* ctx = S->w.ctx;
    cc__prob p;
    cc__time t = -2, *st;
    int i;
    if (!CONCERTO__GROW(ctx, D->start, D->start_cap, (size_t)g->n + 1))
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", S->w.who);
    cc__prob_of_graph(g, &p);   /* (validated: the search indexed it) */
    st = (cc__time*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof *st);
    if (st) t = cc__stream_sim(ctx, &p, S->ord, st, NULL);
    if (t == -2) { cc__free(ctx, st); return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", S->w.who); }
    for (i = 0; i < g->n; i++) D->start[i] = t < 0 ? 0 : (double)st[i] / CONCERTO__TICKS_PER_US;
    cc__free(ctx, st);
    return CC_OK;
}

/* The compute time of the current graph's schedule (every op that
   is not a collective, with a duration), merged into sorted [lo, hi). */
static cc_result cc__dec_busy(cc__dec* D) {
    const cc_graph* g = D->S.cur;
    size_t n = 0, m = 0, j;
    int i;
    cc__free(D->S.w.ctx, D->busy);
    D->n_busy = 0;
    D->busy = (double*)cc__alloc(D->S.w.ctx, ((size_t)g->n + 1) * 2 * sizeof *D->busy);
    if (!D->busy) return CONCERTO__FAIL(D->S.w.ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", D->S.w.who);
    for (i = 0; i < g->n; i++)
        if (g->coll_of[i] < 0 && g->dur_us[i] > 0) {
            D->busy[2 * n] = D->start[i];
            D->busy[2 * n + 1] = D->start[i] + g->dur_us[i];
            n++;
        }
    qsort(D->busy, n, 2 * sizeof *D->busy, cc__dec_span_cmp);
    for (j = 0; j < n; j++) {
        if (m && D->busy[2 * j] <= D->busy[2 * m - 1]) {
            if (D->busy[2 * j + 1] > D->busy[2 * m - 1]) D->busy[2 * m - 1] = D->busy[2 * j + 1];
            continue;
        }
        D->busy[2 * m] = D->busy[2 * j];
        D->busy[2 * m + 1] = D->busy[2 * j + 1];
        m++;
    }
    D->n_busy = m;
    D->busy_valid = 1;
    return CC_OK;
}

/* Collective a's time in the current schedule that no compute overlaps. */
static double cc__dec_exposed(const cc__dec* D, int a) {
    double lo = D->start[a], hi = lo + D->S.cur->dur_us[a], t = hi - lo;
    size_t b = 0, e = D->n_busy, j;
    while (b < e) {   /* the first span that ends after lo */
        size_t mid = b + (e - b) / 2;
        if (D->busy[2 * mid + 1] <= lo) b = mid + 1;
        else e = mid;
    }
    for (j = b; j < D->n_busy && D->busy[2 * j] < hi; j++) {
        double x = D->busy[2 * j] > lo ? D->busy[2 * j] : lo, y = D->busy[2 * j + 1] < hi ? D->busy[2 * j + 1] : hi;
        if (y > x) t -= y - x;
    }
    return t > 0 ? t : 0;
}

CONCERTO_API cc_result cc_graph_decompose(cc_context* ctx, cc_graph* graph, const cc_rewrite_desc* desc, cc_graph** out,
                                          cc_rewrite_report* report) {
    cc__dec D;
    cc__rw_search* S = &D.S;
    char* done;               /* input ops considered (or no candidate) */
    int i;
    cc_result rc;
    memset(&D, 0, sizeof D);
    if ((rc = cc__rw_search_begin(S, ctx, "cc_graph_decompose", graph, desc, out, report)) != CC_OK) return rc;
    D.map = (int*)cc__alloc(ctx, ((size_t)graph->n + 1) * sizeof *D.map);
    done = (char*)cc__calloc(ctx, (size_t)graph->n + 1, 1);
    if (!D.map || !done) {
        rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_decompose: out of memory");
        goto end;
    }
    for (i = 0; i < graph->n; i++) D.map[i] = i;
    for (;;) {   /* the candidate most exposed in the current schedule next (the first in program order on ties) */
        int ia, best_ia = -1, a;
        double e, best_e = -1;
        if ((rc = cc__rw_search_index(S)) != CC_OK) break;
        if (!D.busy_valid && ((rc = cc__dec_starts(&D)) != CC_OK || (rc = cc__dec_busy(&D)) != CC_OK)) break;
        for (ia = 0; ia < graph->n; ia++) {
            if (done[ia]) continue;
            a = D.map[ia];
            if (a < 0 || !cc__dec_candidate(&S->s, a)) {
                done[ia] = 1;
                if (cc__op_coll(graph, ia)) S->seen++;
                continue;
            }
            if ((e = cc__dec_exposed(&D, a)) > best_e) { best_e = e; best_ia = ia; }
        }
        if (best_ia < 0) break;
        done[best_ia] = 1;
        S->seen++;
        S->n_candidates++;
        if (S->stop) continue;
        if ((rc = cc__dec_reach(&S->w, &S->s, D.map[best_ia], CC_AXIS_ROWS, &D.C)) != CC_OK) break;
        if ((size_t)D.C.n_split < D.C.n_near && cc__dec_by_cols(&S->s, D.map[best_ia])) {
            /* a collective that may split by columns: the axis more of its neighbours split along (rows on ties) */
            int by_rows = D.C.n_split;
            if ((rc = cc__dec_reach(&S->w, &S->s, D.map[best_ia], CC_AXIS_COLS, &D.C)) != CC_OK) break;
            if (D.C.n_split <= by_rows && (rc = cc__dec_reach(&S->w, &S->s, D.map[best_ia], CC_AXIS_ROWS, &D.C)) != CC_OK) break;
        }
        if (D.C.n_split && (rc = cc__dec_try(&D)) != CC_OK) break;
    }
    if (rc == CC_OK) rc = cc__rw_search_settle(S, 0, S->n_changed);
end:
    cc__free(ctx, D.map); cc__free(ctx, D.start); cc__free(ctx, D.busy); cc__free(ctx, D.C.node); cc__free(ctx, done);
    return cc__rw_search_end(S, rc, out, report);
}

/* ---- fusion ---------------------------------------------------------------
   Buckets are formed on the input graph, and every candidate is built from
   the input afresh: a bucket is a run of collectives of one stream (its
   members, in program order), and a candidate graph is the input with each
   bucket of two or more members replaced, at its last member's place, by
   - one collective over the members' joined range, where they are
     all-reduces whose ranges join into one (contiguous: no copies);
   - else pack ops (each member's send region into a bucket buffer the
     library places), the collective on the bucket, and unpack ops (the
     bucket into each member's receive region), all on the members'
     stream. A reduce-scatter's or all-gather's bucket is interleaved by
     rank: rank j's block of the fused collective is the members' blocks j
     one after another, so that every rank's data lands where the members
     put it. */
static int cc__fuse_candidate(const cc_graph* g, int i) {
    const cc_collective* c = cc__op_coll(g, i);
    return c && c->n_elems > 0 &&
           (c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_REDUCE_SCATTER || c->kind == CC_COLL_ALL_GATHER);
}

/* A bucket: members mem[off .. off + n) (input ops, program order), elems
   the fused collective's n_elems. contiguous: an all-reduce bucket whose
   send range [slo, shi) and receive range [rlo, rhi) are each one range of
   buffer sbuf, rbuf (-1: addresses), all members in place or none. */
typedef struct cc__fuse_bucket {
    int off, n;
    int contiguous, in_place, sbuf, rbuf;
    uintptr_t slo, shi, rlo, rhi;
    uint64_t elems;
} cc__fuse_bucket;

/* The search's state: the input's index and scratch, the buckets so far
   (the open one last), their members bucket after bucket, and each input
   op's bucket (-1: none). */
typedef struct cc__fuse {
    cc__rw_src s;
    cc__rw_scratch x;
    cc__fuse_bucket* b; int n_b;
    int* mem; int n_mem;
    int* bucket_of;
    cc_region* regs;             /* [n_acc + 4]: a joined collective's regions */
    int* order;                  /* [n]: a joined bucket's members by address */
} cc__fuse;

static int cc__fuse_ranks(const cc_collective* c) { int z = cc_comm_size(c->comm); return z < 1 ? 1 : z; }

/* The bytes of a collective's send (write 0) or receive (write 1) side. */
static uint64_t cc__fuse_side_bytes(const cc_collective* c, int write) {
    uint64_t b = (uint64_t)c->n_elems * cc__dtype_size(c->dtype);
    if ((c->kind == CC_COLL_REDUCE_SCATTER && !write) || (c->kind == CC_COLL_ALL_GATHER && write)) b *= (uint64_t)cc__fuse_ranks(c);
    return b;
}

/* 1 if member i can be packed: one read and one write region, contiguous,
   holding exactly its send and receive elements (a pointer being its
   region's address; a NULL one's region in a transient buffer). */
static int cc__fuse_packable(const cc__rw_src* s, int i) {
    const cc_graph* g = s->g;
    const cc_collective* c = cc__op_coll(g, i);
    const cc__access *rd = NULL, *wr = NULL;
    size_t a;
    for (a = s->acc_off[i]; a < s->acc_off[i + 1]; a++) {
        const cc__access* x = &g->acc[a];
        if (x->is_write) { if (wr) return 0; wr = x; }
        else { if (rd) return 0; rd = x; }
    }
    if (!rd || !wr || rd->rows > 1 || wr->rows > 1) return 0;
    if (rd->n_bytes != cc__fuse_side_bytes(c, 0) || wr->n_bytes != cc__fuse_side_bytes(c, 1)) return 0;
    if ((!c->send_buf && !g->buf_transient[rd->buffer]) || (!c->recv_buf && !g->buf_transient[wr->buffer])) return 0;
    return 1;
}

/* A new bucket of op i alone; returns its index. */
static int cc__fuse_open(cc__fuse* F, int i) {
    const cc__rw_src* s = &F->s;
    const cc_collective* c = cc__op_coll(s->g, i);
    cc__fuse_bucket* B = &F->b[F->n_b];
    uint64_t bytes = (uint64_t)c->n_elems * cc__dtype_size(c->dtype);
    memset(B, 0, sizeof *B);
    B->off = F->n_mem;
    B->n = 1;
    B->elems = c->n_elems;
    F->mem[F->n_mem++] = i;
    F->bucket_of[i] = F->n_b;
    B->contiguous = c->kind == CC_COLL_ALL_REDUCE && cc__coll_rewritable(s, i);
    if (B->contiguous) {
        cc__coll_at(s, i, 0, &B->sbuf, &B->slo);
        cc__coll_at(s, i, 1, &B->rbuf, &B->rlo);
        B->shi = B->slo + (uintptr_t)bytes;
        B->rhi = B->rlo + (uintptr_t)bytes;
        B->in_place = B->sbuf == B->rbuf && B->slo == B->rlo;
    }
    return F->n_b++;
}

/* Closes bucket k (the last): one of a single member is dropped. */
static void cc__fuse_close(cc__fuse* F, int k) {
    if (k < 0 || F->b[k].n >= 2) return;
    F->bucket_of[F->mem[F->b[k].off]] = -1;
    F->n_mem = F->b[k].off;
    F->n_b = k;
}

/* 1 if op c may join bucket k (the open one), *nb the bucket it then is:
   the same kind, communicator, element type and reduction; joined where
   its ranges join the bucket's, else every member packable; no member's
   regions touched by c, nor by an op between the last member and c (the
   members' effects move to c's place); no explicit edge between a member
   and an op between the first member and c; no path from one member to
   another through other ops (the fused group would close a cycle). */
static int cc__fuse_fits(const cc__rw* w, cc__fuse* F, int k, int c, cc__fuse_bucket* nb) {
    const cc__rw_src* s = &F->s;
    const cc_graph* g = s->g;
    const cc__fuse_bucket* B = &F->b[k];
    const int* mem = F->mem + B->off;
    int first = mem[0], last = mem[B->n - 1], m, y, head = 0, tail = 0;
    const cc_collective* c0 = cc__op_coll(g, first);
    const cc_collective* cc = cc__op_coll(g, c);
    size_t es = cc__dtype_size(c0->dtype), a, b, e;
    char* seen = F->x.mark;
    int* queue = F->x.queue;
    *nb = *B;
    if (cc->kind != c0->kind || cc->comm != c0->comm || cc->dtype != c0->dtype || cc->reduce != c0->reduce) return 0;
    nb->elems = B->elems + cc->n_elems;
    if (w->d.max_bucket_bytes && (nb->elems * es > w->d.max_bucket_bytes || nb->elems < B->elems)) return 0;
    nb->contiguous = 0;
    if (B->contiguous && cc__coll_rewritable(s, c)) {   /* joined, as one range on each side */
        int bsc, brc, ip;
        uintptr_t sc, rcv, bf = B->shi - B->slo, bc = (uintptr_t)(cc->n_elems * es);
        cc__coll_at(s, c, 0, &bsc, &sc);
        cc__coll_at(s, c, 1, &brc, &rcv);
        ip = bsc == brc && sc == rcv;
        if (ip == B->in_place && bsc == B->sbuf && brc == B->rbuf &&
            ((B->shi == sc && B->rhi == rcv) || (sc + bc == B->slo && rcv + bc == B->rlo))) {
            nb->contiguous = 1;
            nb->slo = sc < B->slo ? sc : B->slo;
            nb->rlo = rcv < B->rlo ? rcv : B->rlo;
            nb->shi = nb->slo + bf + bc;
            nb->rhi = nb->rlo + bf + bc;
            /* the joined send range may not overlap its receive range */
            if (!ip && B->sbuf == B->rbuf && nb->slo < nb->rhi && nb->rlo < nb->shi) nb->contiguous = 0;
        }
    }
    if (!nb->contiguous) {
        if (!cc__fuse_packable(s, c)) return 0;
        for (m = 0; m < B->n; m++) if (!cc__fuse_packable(s, mem[m])) return 0;
    }
    /* the members must not depend on each other through memory: their regions, and their addresses */
    for (m = 0; m < B->n; m++) {
        const cc_collective* cm = cc__op_coll(g, mem[m]);
        int p, q;
        for (p = 0; p < 2; p++)
            for (q = 0; q < 2; q++) {
                uintptr_t x = (uintptr_t)(p ? (const void*)cm->recv_buf : cm->send_buf);
                uintptr_t z = (uintptr_t)(q ? (const void*)cc->recv_buf : cc->send_buf);
                uint64_t nx = cc__fuse_side_bytes(cm, p), nz = cc__fuse_side_bytes(cc, q);
                if ((p || q) && x && z && x < z + nz && z < x + nx) return 0;
            }
    }
    for (m = 0; m < B->n; m++)
        for (a = s->acc_off[mem[m]]; a < s->acc_off[mem[m] + 1]; a++)
            for (b = s->acc_off[c]; b < s->acc_off[c + 1]; b++)
                if ((g->acc[a].is_write || g->acc[b].is_write) && cc__rw_overlap(&g->acc[a], &g->acc[b])) return 0;
    /* ops between the last member and c: none may touch a member's regions */
    for (y = last + 1; y < c; y++)
        for (a = s->acc_off[y]; a < s->acc_off[y + 1]; a++)
            for (m = 0; m < B->n; m++)
                for (b = s->acc_off[mem[m]]; b < s->acc_off[mem[m] + 1]; b++)
                    if (cc__rw_overlap(&g->acc[a], &g->acc[b])) return 0;
    /* ... nor have an explicit edge to or from a member */
    for (e = 0; e < g->n_e; e++) {
        int from = g->e_from[e], to = g->e_to[e];
        int mf = from == c || F->bucket_of[from] == k, mt = to == c || F->bucket_of[to] == k;
        if (mf && !mt && to > first && to < c) return 0;
        if (mt && !mf && from > first && from < c) return 0;
    }
    /* no path from one member to another through other ops */
    memset(seen, 0, (size_t)g->n);
    for (m = 0; m <= B->n; m++) {
        int v = m < B->n ? mem[m] : c, q;
        for (q = g->succ_off[v]; q < g->succ_off[v + 1]; q++) {
            int u = g->succ[q];
            if (u != c && F->bucket_of[u] != k && !seen[u]) { seen[u] = 1; queue[tail++] = u; }
        }
    }
    while (head < tail) {
        int v = queue[head++], q;
        for (q = g->succ_off[v]; q < g->succ_off[v + 1]; q++) {
            int u = g->succ[q];
            if (u == c || F->bucket_of[u] == k) return 0;
            if (!seen[u]) { seen[u] = 1; queue[tail++] = u; }
        }
    }
    return 1;
}

/* Bucket B's ops, added to dst at its last member's place (see fusion
   above): name "<first member>+<n-1>" for the collective, "<member>/pack"
   and "<member>/unpack" for the copies, "<name>.bucket" (all-reduce) or
   "<name>.send" and "<name>.recv" for the buffers. */
static cc_result cc__fuse_emit(cc__rw* w, cc__fuse* F, const cc__fuse_bucket* B, cc_graph* dst) {
    const cc__rw_src* s = &F->s;
    const cc_graph* g = s->g;
    const int* mem = F->mem + B->off;
    int last = mem[B->n - 1], m, q, o = 0, dem[CONCERTO_MAX_RESOURCES], stream = cc__op_stream(g, last);
    const cc_collective* cl = cc__op_coll(g, last);
    size_t es = cc__dtype_size(cl->dtype);
    cc_collective fc = *cl;       /* the fused op's, alive until it is added */
    cc_region* tmp = F->x.regs;
    cc_op_desc d;
    cc_split sp;
    char name[CONCERTO__MSG_MAX], cname[CONCERTO__MSG_MAX];
    cc_result rc = CC_OK;
    cc__fmt(name, sizeof name, "%s+%d", cc__name(g, mem[0]), B->n - 1);
    cc__rw_desc_of(s, last, dst, tmp, dem, &sp, &d);    /* stream, user_data and the rest from the last member */
    d.name = name;
    fc.n_elems = (size_t)B->elems;
    d.coll = &fc;
    d.duration_us = cc__rw_coll_us(w, &fc, fc.n_elems);
    if (B->contiguous) {
        /* the members by send address: the lowest one's regions first, where NULL buffers resolve from */
        int nr = 0, i, j;
        for (m = 0; m < B->n; m++) {
            int bs;
            uintptr_t at, at2;
            cc__coll_at(s, mem[m], 0, &bs, &at);
            for (i = m; i > 0; i--) {
                cc__coll_at(s, F->order[i - 1], 0, &bs, &at2);
                if (at2 <= at) break;
                F->order[i] = F->order[i - 1];
            }
            F->order[i] = mem[m];
        }
        for (q = 0; q < 2; q++)
            for (m = 0; m < B->n; m++) {
                int n_r, n_all = cc__rw_regions(s, F->order[m], dst, tmp, &n_r);
                for (j = q ? n_r : 0; j < (q ? n_all : n_r); j++) F->regs[o++] = tmp[j];
                if (!q) nr = o;
            }
        fc.send_buf = cc__op_coll(g, F->order[0])->send_buf;
        fc.recv_buf = cc__op_coll(g, F->order[0])->recv_buf;
        d.reads = F->regs; d.n_reads = nr;
        d.writes = F->regs + nr; d.n_writes = o - nr;
        return cc__rw_add(w, dst, &d);
    } else {
        int z = cl->kind == CC_COLL_ALL_REDUCE ? 1 : cc__fuse_ranks(cl), by_rank_send = cl->kind == CC_COLL_REDUCE_SCATTER && z > 1,
            by_rank_recv = cl->kind == CC_COLL_ALL_GATHER && z > 1;
        uint64_t N = B->elems, prefix = 0;
        cc_buffer sb, rb;
        cc_region whole_s, whole_r, slot;
        memset(&whole_s, 0, sizeof whole_s);
        if (cl->kind == CC_COLL_ALL_REDUCE) {
            cc__fmt(cname, sizeof cname, "%s.bucket", name);
            rc = cc__graph_add_buffer(dst, cname, N * es, 1, &sb);
            rb = sb;
        } else {
            cc__fmt(cname, sizeof cname, "%s.send", name);
            rc = cc__graph_add_buffer(dst, cname, N * es * (by_rank_send ? (uint64_t)z : 1), 1, &sb);
            cc__fmt(cname, sizeof cname, "%s.recv", name);
            if (rc == CC_OK) rc = cc__graph_add_buffer(dst, cname, N * es * (by_rank_recv ? (uint64_t)z : 1), 1, &rb);
        }
        if (rc != CC_OK) return rc;
        whole_r = whole_s;
        whole_s.buffer = sb; whole_s.n_bytes = cc_buffer_bytes(dst, sb);
        whole_r.buffer = rb; whole_r.n_bytes = cc_buffer_bytes(dst, rb);
        /* member m's slot in a bucket: its n_m elements at the prefix, in each of z rank blocks where interleaved */
        for (m = 0; m < B->n && rc == CC_OK; m++) {
            const cc_collective* cm = cc__op_coll(g, mem[m]);
            int n_r;
            (void)cc__rw_regions(s, mem[m], dst, tmp, &n_r);   /* packable: tmp[0] its read, tmp[1] its write */
            memset(&slot, 0, sizeof slot);
            slot.buffer = sb; slot.offset_bytes = prefix * es; slot.n_bytes = cm->n_elems * es;
            if (by_rank_send) { slot.n_rows = (uint64_t)z; slot.stride_bytes = N * es; }
            cc__fmt(cname, sizeof cname, "%s/pack", cc__name(g, mem[m]));
            rc = cc__rw_add_copy(w, dst, cname, stream, &tmp[0], cm->send_buf, &slot, NULL, NULL, 0, NULL);
            prefix += cm->n_elems;
        }
        fc.send_buf = NULL;
        fc.recv_buf = NULL;
        d.reads = &whole_s; d.n_reads = 1;
        d.writes = &whole_r; d.n_writes = 1;
        if (rc == CC_OK) rc = cc__rw_add(w, dst, &d);
        for (m = 0, prefix = 0; m < B->n && rc == CC_OK; m++) {
            const cc_collective* cm = cc__op_coll(g, mem[m]);
            int n_r;
            (void)cc__rw_regions(s, mem[m], dst, tmp, &n_r);
            memset(&slot, 0, sizeof slot);
            slot.buffer = rb; slot.offset_bytes = prefix * es; slot.n_bytes = cm->n_elems * es;
            if (by_rank_recv) { slot.n_rows = (uint64_t)z; slot.stride_bytes = N * es; }
            cc__fmt(cname, sizeof cname, "%s/unpack", cc__name(g, mem[m]));
            rc = cc__rw_add_copy(w, dst, cname, stream, &slot, NULL, &tmp[1], cm->recv_buf, NULL, 0, NULL);
            prefix += cm->n_elems;
        }
        return rc;
    }
}

/* The input with every bucket of two or more members fused. */
static cc_result cc__fuse_build(cc__rw* w, cc__fuse* F, cc_graph** out) {
    const cc__rw_src* s = &F->s;
    const cc_graph* g = s->g;
    cc_graph* dst = NULL;
    int i, m, dem[CONCERTO_MAX_RESOURCES];
    cc_result rc;
    *out = NULL;
    if ((rc = cc__rw_begin(w, g, &dst)) != CC_OK) return rc;
    for (i = 0; i < g->n && rc == CC_OK; i++) {
        int k = F->bucket_of[i];
        const cc__fuse_bucket* B = k >= 0 ? &F->b[k] : NULL;
        cc_op_desc d;
        cc_split sp;
        if (B && B->n >= 2) {
            int start = dst->n;
            if (F->mem[B->off + B->n - 1] != i) continue;   /* the group goes at the last member's place */
            rc = cc__fuse_emit(w, F, B, dst);
            for (m = 0; m < B->n; m++) {
                F->x.first[F->mem[B->off + m]] = start;
                F->x.count[F->mem[B->off + m]] = dst->n - start;
            }
            continue;
        }
        F->x.first[i] = dst->n;
        F->x.count[i] = 1;
        cc__rw_desc_of(s, i, dst, F->x.regs, dem, &sp, &d);
        rc = cc__rw_add(w, dst, &d);
    }
    if (rc == CC_OK) rc = cc__rw_edges(w, dst, g, F->x.first, F->x.count);
    if (rc != CC_OK) { cc_graph_destroy(dst); return rc; }
    *out = dst;
    return CC_OK;
}

/* Buckets of two or more members. */
static int cc__fuse_changed(const cc__fuse* F) {
    int k, c = 0;
    for (k = 0; k < F->n_b; k++) c += F->b[k].n >= 2;
    return c;
}

/* Bucket k's members moved to the end of F->mem (the others shifted down),
   so that the next member can be appended. */
static void cc__fuse_to_end(cc__fuse* F, int k) {
    cc__fuse_bucket* B = &F->b[k];
    int m, j, n = B->n, off = B->off, tmp;
    if (off + n == F->n_mem) return;
    for (m = 0; m < n; m++) {   /* rotate [off, n_mem) left by n, one member at a time */
        tmp = F->mem[off];
        for (j = off; j < F->n_mem - 1; j++) F->mem[j] = F->mem[j + 1];
        F->mem[F->n_mem - 1] = tmp;
    }
    for (j = 0; j < F->n_b; j++)
        if (F->b[j].off > off) F->b[j].off -= n;
    B->off = F->n_mem - n;
}

/* A pair of collectives next to each other on a stream of the input (x <
   y, input ops), screened mk on the input with the two fused. */
typedef struct cc__fuse_pair { int x, y; double mk; } cc__fuse_pair;

static int cc__fuse_pair_cmp(const void* a, const void* b) {   /* by screen, then program order */
    const cc__fuse_pair* p = (const cc__fuse_pair*)a;
    const cc__fuse_pair* q = (const cc__fuse_pair*)b;
    if (p->mk != q->mk) return p->mk < q->mk ? -1 : 1;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

static int cc__fuse_pair_cmp_order(const void* a, const void* b) {   /* program order */
    const cc__fuse_pair* p = (const cc__fuse_pair*)a;
    const cc__fuse_pair* q = (const cc__fuse_pair*)b;
    if (p->y != q->y) return p->y < q->y ? -1 : 1;
    return (p->x > q->x) - (p->x < q->x);
}

/* The screen of ops f < c of the current graph fused (as cc__fuse_build
   would, at c's place), without building that graph: the current graph's
   problem with f's dependencies moved to c, c lasting what the cost model
   gives the fused op and f left without work or stream, simulated in the
   current graph's best order; *mk. extra_us: what the fused op costs
   beside the collective (a packed bucket's copies). */
static cc_result cc__fuse_screen(cc__rw_search* S, int f, int c, double extra_us, double* mk) {
    const cc_graph* g = S->cur;
    cc_context* ctx = S->w.ctx;
    const cc_collective* cf = cc__op_coll(g, f);
    cc_collective fc = *cc__op_coll(g, c);
    int n = g->n, k = g->k, m = g->succ_off[g->n], v, side, e, at;
    cc__time* dur = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *dur);
    cc__time* st = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *st);
    int32_t* dem = (int32_t*)cc__alloc(ctx, ((size_t)n * (size_t)k + 1) * sizeof *dem);
    int* off[2];
    int* lst[2];
    cc__prob p;
    cc__time t = -2;
    off[0] = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    off[1] = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    lst[0] = (int*)cc__alloc(ctx, ((size_t)m + 1) * sizeof(int));
    lst[1] = (int*)cc__alloc(ctx, ((size_t)m + 1) * sizeof(int));
    if (dur && st && dem && off[0] && off[1] && lst[0] && lst[1]) {
        cc__prob_of_graph(g, &p);
        memcpy(dur, g->dur, (size_t)n * sizeof *dur);
        memcpy(dem, g->dem, (size_t)n * (size_t)k * sizeof *dem);
        fc.n_elems += cf->n_elems;
        dur[f] = 0;
        memset(dem + (size_t)f * (size_t)k, 0, (size_t)k * sizeof *dem);
        if (!cc__duration_ticks(cc__rw_coll_us(&S->w, &fc, fc.n_elems) + extra_us, &dur[c])) dur[c] = g->dur[c];
        for (side = 0; side < 2; side++) {   /* successors, then predecessors: f's become c's */
            const int* o = side ? g->pred_off : g->succ_off;
            const int* l = side ? g->pred : g->succ;
            at = 0;
            for (v = 0; v < n; v++) {
                int u, pass;
                off[side][v] = at;
                if (v == f) continue;
                for (pass = 0; pass < (v == c ? 2 : 1); pass++) {
                    u = pass ? f : v;
                    for (e = o[u]; e < o[u + 1]; e++) {
                        int w = l[e] == f ? c : l[e];
                        if (v == c && w == c) continue;   /* an edge between the two */
                        lst[side][at++] = w;
                    }
                }
            }
            off[side][n] = at;
        }
        p.dur = dur;
        p.dem = dem;
        p.succ_off = off[0]; p.succ = lst[0];
        p.pred_off = off[1]; p.pred = lst[1];
        /* the fused op at the later of the two places in the order */
        for (v = 0; v < n && S->ord[v] != f && S->ord[v] != c; v++) {}
        if (v < n && S->ord[v] == c) {
            for (e = v + 1; e < n && S->ord[e] != f; e++) {}
            if (e < n) { S->ord[v] = f; S->ord[e] = c; }
            t = cc__stream_sim(ctx, &p, S->ord, st, NULL);
            if (e < n) { S->ord[v] = c; S->ord[e] = f; }
        } else t = cc__stream_sim(ctx, &p, S->ord, st, NULL);
    }
    cc__free(ctx, dur); cc__free(ctx, st); cc__free(ctx, dem);
    cc__free(ctx, off[0]); cc__free(ctx, off[1]); cc__free(ctx, lst[0]); cc__free(ctx, lst[1]);
    if (t == -2) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", S->w.who);
    S->w.n_eval++;
    S->w.screen_ops += (uint64_t)n;
    *mk = t < 0 ? HUGE_VAL : (double)t / CONCERTO__TICKS_PER_US;
    return CC_OK;
}

/* Ranks: every pair of the input that may fuse (cc__fuse_fits on a bucket
   of the first alone), screened, a packed pair with the copies' cost of
   the second, and of the first where it may not join the op before it
   (the screen is a filter: the full solves judge the buckets); the
   best full_judgements of those screened at most CONCERTO__RW_CLOSE above
   the input's best order (under a memory cap, which the screens do not
   see, of all) into *pairs, in program order. F holds no bucket before
   and after. */
static cc_result cc__fuse_rank(cc__rw_search* S, cc__fuse* F, cc__fuse_pair** pairs, int* n_pairs) {
    cc_context* ctx = S->w.ctx;
    const cc_graph* g = S->cur;   /* the input's copy: the same ops as F's */
    size_t cap = 0;
    int i, r, n = 0;
    cc_result rc = CC_OK;
    *pairs = NULL;
    *n_pairs = 0;
    for (r = 0; r < g->k && !S->stop && rc == CC_OK; r++) {
        int open = -1, linked = 0;   /* linked: open may join the op before it */
        for (i = 0; i < g->n && !S->stop && rc == CC_OK; i++) {
            double cmk = 0, extra = 0;
            cc__fuse_bucket nb;
            int k, fits;
            if (!cc__op_coll(g, i) || !g->dem[(size_t)i * g->k + r]) continue;
            if (!cc__fuse_candidate(g, i)) { open = -1; linked = 0; continue; }
            S->seen++;
            if (open < 0) { open = i; continue; }
            if (cc__rw_spent(&S->w)) { S->stop = 1; break; }
            if ((rc = cc__rw_search_index(S)) != CC_OK) break;
            k = cc__fuse_open(F, open);
            fits = cc__fuse_fits(&S->w, F, k, i, &nb);
            cc__fuse_close(F, k);
            if (!fits) { open = i; linked = 0; continue; }
            if (!nb.contiguous) {   /* pack and unpack: i's, and open's unless it may join a bucket before it
                                       (which then pays for it: a member's copies are paid once) */
                const cc_collective *cx = cc__op_coll(g, open), *cy = cc__op_coll(g, i);
                extra = (double)(cc__fuse_side_bytes(cy, 0) + cc__fuse_side_bytes(cy, 1)) * S->w.d.copy_us_per_byte;
                if (!linked) extra += (double)(cc__fuse_side_bytes(cx, 0) + cc__fuse_side_bytes(cx, 1)) * S->w.d.copy_us_per_byte;
            }
            linked = 1;
            rc = cc__fuse_screen(S, open, i, extra, &cmk);
            if (rc == CC_OK && (cmk <= S->mk * (1 + CONCERTO__RW_CLOSE) || S->w.d.sched.memory_cap_bytes > 0)) {
                if (!CONCERTO__GROW(ctx, *pairs, cap, (size_t)n + 1))
                    rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_fuse: out of memory");
                else {
                    (*pairs)[n].x = open;
                    (*pairs)[n].y = i;
                    (*pairs)[n].mk = cmk;
                    n++;
                }
            }
            open = i;
        }
    }
    if (rc == CC_OK && n > 1) qsort(*pairs, (size_t)n, sizeof **pairs, cc__fuse_pair_cmp);
    if (n > S->w.d.full_judgements) n = S->w.d.full_judgements;
    if (rc == CC_OK && n > 1) qsort(*pairs, (size_t)n, sizeof **pairs, cc__fuse_pair_cmp_order);
    *n_pairs = n;
    return rc;
}

CONCERTO_API cc_result cc_graph_fuse(cc_context* ctx, cc_graph* graph, const cc_rewrite_desc* desc, cc_graph** out,
                                     cc_rewrite_report* report) {
    cc__rw_search S;
    cc__fuse F;
    cc__fuse_pair* pairs = NULL;
    int i, q, n_pairs = 0;
    cc_result rc;
    if ((rc = cc__rw_search_begin(&S, ctx, "cc_graph_fuse", graph, desc, out, report)) != CC_OK) return rc;
    memset(&F, 0, sizeof F);
    for (i = 0; i < graph->n; i++) S.n_candidates += cc__fuse_candidate(graph, i);
    if ((rc = cc__rw_src_init(&S.w, graph, &F.s)) == CC_OK && (rc = cc__rw_scratch_init(&S.w, &F.s, &F.x)) == CC_OK) {
        F.b = (cc__fuse_bucket*)cc__calloc(ctx, (size_t)graph->n + 1, sizeof *F.b);
        F.mem = (int*)cc__calloc(ctx, (size_t)graph->n + 1, sizeof *F.mem);
        F.bucket_of = (int*)cc__calloc(ctx, (size_t)graph->n + 1, sizeof *F.bucket_of);
        F.order = (int*)cc__calloc(ctx, (size_t)graph->n + 1, sizeof *F.order);
        F.regs = (cc_region*)cc__calloc(ctx, graph->n_acc + 4, sizeof *F.regs);
        if (!F.b || !F.mem || !F.bucket_of || !F.order || !F.regs) rc = CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_fuse: out of memory");
    }
    for (i = 0; rc == CC_OK && i < graph->n; i++) F.bucket_of[i] = -1;
    if (rc == CC_OK) rc = cc__fuse_rank(&S, &F, &pairs, &n_pairs);
    /* the best screened, left to right, each judged by a full solve of the
       input with the buckets so far and it: kept where no longer (ties
       too: one collective fewer) */
    for (q = 0; q < n_pairs && rc == CC_OK && S.w.n_full < S.w.d.full_judgements; q++) {
        int x = pairs[q].x, y = pairs[q].y, k = F.bucket_of[x], opened = k < 0;
        cc__fuse_bucket saved, nb;
        cc_graph* cand = NULL;
        double cf = 0;
        if (F.bucket_of[y] >= 0) continue;
        if (opened) k = cc__fuse_open(&F, x);
        else cc__fuse_to_end(&F, k);
        if (!cc__fuse_fits(&S.w, &F, k, y, &nb)) {   /* (the buckets kept since ranking) */
            if (opened) cc__fuse_close(&F, k);
            continue;
        }
        saved = F.b[k];
        F.b[k] = nb;
        F.b[k].n++;
        F.mem[F.n_mem++] = y;
        F.bucket_of[y] = k;
        if ((rc = cc__fuse_build(&S.w, &F, &cand)) != CC_OK) break;
        if ((rc = cc__rw_solve(&S, cand, &cf)) != CC_OK) { cc_graph_destroy(cand); break; }
        if (cf <= S.cur_full) {
            cc__rw_search_take(&S, cand, cf);
            cc__rw_keep(&S, cf, 1, cc__fuse_changed(&F));
        } else {
            cc_graph_destroy(cand);
            F.b[k] = saved;
            F.n_mem--;
            F.bucket_of[y] = -1;
            if (opened) cc__fuse_close(&F, k);
        }
    }
    if (rc == CC_OK) rc = cc__rw_search_settle(&S, 1, cc__fuse_changed(&F));
    cc__rw_scratch_free(&S.w, &F.x);
    cc__rw_src_free(&S.w, &F.s);
    cc__free(ctx, F.b); cc__free(ctx, F.mem); cc__free(ctx, F.bucket_of); cc__free(ctx, F.order); cc__free(ctx, F.regs);
    cc__free(ctx, pairs);
    return cc__rw_search_end(&S, rc, out, report);
}

/* >>plan
   Per stream, the ops in issue order; per op, the events it waits for.
   Waits are chosen with vector clocks: vc[op][t] is the last position on
   stream t known to be complete when op starts (through its stream's order
   and the waits before it). A dependency on stream t is covered when the
   clock already reaches it; of the uncovered ones only the latest per stream
   matters, and one that another chosen wait already implies is dropped.
   The arena: each transient buffer lives from its first writer's start to
   its users' last end (by the caller's starts or the stream simulation of
   the order). Largest first, each buffer takes the lowest 256-aligned
   offset clear of every placed buffer whose lifetime overlaps its own.
   Buffers that share bytes then never overlap in time; the executor does
   not keep those times, so for each such pair every user of the earlier
   is a memory edge into the later one's first writer, and the waits cover
   memory edges as they cover dependencies. */

typedef struct cc__plan_op {
    cc_op_fn fn;
    void* user_data;
    cc_collective coll;        /* kind CC_COLL_NONE for compute */
    int stream, pos;
    int wait_off, n_waits;     /* into plan->waits: source ops */
    int record;                /* some other stream waits for this op */
} cc__plan_op;

struct cc_plan {
    cc_context* ctx;
    cc_graph* g;               /* borrowed: must outlive the plan */
    int n_ops, n_streams, n_waits;
    cc__plan_op* op;
    int* waits;
    size_t waits_cap;
    int* issue;                /* host enqueue order: sources before waiters */
    int* seq_off;              /* [n_streams + 1] */
    int* seq;                  /* ops of each stream in order */
    uint64_t hash;
    uint64_t arena_bytes;
    uint64_t* mb_off;          /* [g->n_mb]: each transient buffer's offset in the arena */
    int* mem_pred_off;         /* [n_ops + 1] or NULL: memory edges into each op */
    int* mem_pred;
    int* mem_succ_off;         /* [n_ops + 1] or NULL: the same edges out of each op */
    int* mem_succ;
};

CONCERTO_API void cc_plan_destroy(cc_plan* pl) {
    cc_context* ctx;
    if (!pl) return;
    ctx = pl->ctx;
    cc__free(ctx, pl->op); cc__free(ctx, pl->waits); cc__free(ctx, pl->issue);
    cc__free(ctx, pl->seq_off); cc__free(ctx, pl->seq);
    cc__free(ctx, pl->mb_off); cc__free(ctx, pl->mem_pred_off); cc__free(ctx, pl->mem_pred);
    cc__free(ctx, pl->mem_succ_off); cc__free(ctx, pl->mem_succ);
    cc__free(ctx, pl);
}

CONCERTO_API uint64_t cc_plan_hash(const cc_plan* pl) { return pl ? pl->hash : 0; }

CONCERTO_API int cc_plan_n_waits(const cc_plan* pl) { return pl ? pl->n_waits : -1; }

CONCERTO_API int cc_plan_waits(const cc_plan* pl, cc_op op, cc_op* sources, int max) {
    int v, w;
    if (!pl || (v = cc_op_index(pl->g, op)) < 0) return -1;
    for (w = 0; w < pl->op[v].n_waits && w < max && sources; w++) sources[w] = cc_graph_op(pl->g, pl->waits[pl->op[v].wait_off + w]);
    return pl->op[v].n_waits;
}

CONCERTO_API uint64_t cc_plan_arena_bytes(const cc_plan* pl) { return pl ? pl->arena_bytes : 0; }

CONCERTO_API uint64_t cc_plan_buffer_offset(const cc_plan* pl, cc_buffer buffer) {
    int b, m;
    if (!pl || (b = cc_buffer_index(pl->g, buffer)) < 0) return UINT64_MAX;
    for (m = 0; m < pl->g->n_mb; m++) if (pl->g->mb_buf[m] == b) return pl->mb_off[m];
    return UINT64_MAX;
}

/* Each op's stream and position on it, in the issue order ord; the
   streams' sequences. Every op must be on exactly one stream. */
static cc_result cc__plan_streams(cc_plan* pl, const int* ord) {
    const cc_graph* g = pl->g;
    int i, r, S = pl->n_streams;
    for (i = 0; i < pl->n_ops; i++) {
        int v = ord[i], st, c = cc__demand_use(g->dem + (size_t)v * S, g->cap, S, &st, NULL);
        if (c != 1)
            return CONCERTO__FAIL(pl->ctx, CC_ERR_UNSUPPORTED, "cc_plan_create: op '%s' is on %s stream; an executor runs "
                                  "every op on one stream", cc__name(g, v), c ? "more than one" : "no");
        pl->op[v].stream = st;
        pl->op[v].pos = pl->seq_off[st + 1]++;
        pl->op[v].fn = g->fn[v];
        pl->op[v].user_data = g->user_data[v];
        if (cc__op_coll(g, v)) pl->op[v].coll = *cc__op_coll(g, v);
        else pl->op[v].coll.kind = CC_COLL_NONE;
    }
    for (r = 0; r < S; r++) pl->seq_off[r + 1] += pl->seq_off[r];
    for (i = 0; i < pl->n_ops; i++) { int v = ord[i]; pl->seq[pl->seq_off[pl->op[v].stream] + pl->op[v].pos] = v; }
    return CC_OK;
}

/* The host's enqueue order: topological over the dependencies plus each
   stream's order (next_off/next: an op's successor on its stream). */
static cc_result cc__plan_issue(cc_plan* pl, const int* ord, int* next_off, int* next, int* left) {
    const cc_graph* g = pl->g;
    int i, v, e, n = pl->n_ops;
    for (v = 0; v < n; v++) {   /* next: [n + memory edges] */
        const cc__plan_op* o = &pl->op[v];
        int last = o->pos + 1 == pl->seq_off[o->stream + 1] - pl->seq_off[o->stream], k = next_off[v];
        if (!last) next[k++] = pl->seq[pl->seq_off[o->stream] + o->pos + 1];
        if (pl->mem_succ_off)
            for (e = pl->mem_succ_off[v]; e < pl->mem_succ_off[v + 1]; e++) next[k++] = pl->mem_succ[e];
        next_off[v + 1] = k;
    }
    if (cc__topo_order(n, g->succ_off, g->succ, next_off, next, left, pl->issue) == n) return CC_OK;
    for (i = 0, v = -1; i < n && v < 0; i++) if (left[ord[i]] > 0) v = ord[i];
    return CONCERTO__FAIL(pl->ctx, CC_ERR_DEADLOCK, "cc_plan_create: the order deadlocks the streams: op '%s' on stream '%s' "
                          "waits for a dependency%s queued behind it", cc__name(g, v), cc_graph_resource_name(g, pl->op[v].stream),
                          pl->mem_succ_off ? " or a buffer sharing its arena bytes" : "");
}

/* The waits of op v: its vector clock cv from its stream predecessor, the
   latest uncovered dependency per other stream, minus those another one
   implies. cand: scratch of n_streams. */
static cc_result cc__plan_waits_of(cc_plan* pl, int v, int* vc, int* cand) {
    const cc_graph* g = pl->g;
    int S = pl->n_streams, st = pl->op[v].stream, e, r, a, b, nc = 0;
    int* cv = vc + (size_t)v * S;
    if (pl->op[v].pos > 0) memcpy(cv, vc + (size_t)pl->seq[pl->seq_off[st] + pl->op[v].pos - 1] * S, (size_t)S * sizeof(int));
    else for (r = 0; r < S; r++) cv[r] = -1;
    if (pl->op[v].pos > 0) cv[st] = pl->op[v].pos - 1;
    for (r = 0; r < S; r++) cand[r] = -1;
    for (e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        int u = g->pred[e], su = pl->op[u].stream;
        if (su == st || cv[su] >= pl->op[u].pos) continue;
        if (cand[su] < 0 || pl->op[cand[su]].pos < pl->op[u].pos) cand[su] = u;
    }
    if (pl->mem_pred_off)   /* memory edges, as dependencies */
        for (e = pl->mem_pred_off[v]; e < pl->mem_pred_off[v + 1]; e++) {
            int u = pl->mem_pred[e], su = pl->op[u].stream;
            if (su == st || cv[su] >= pl->op[u].pos) continue;
            if (cand[su] < 0 || pl->op[cand[su]].pos < pl->op[u].pos) cand[su] = u;
        }
    for (a = 0; a < S; a++) {   /* drop a candidate implied by another */
        if (cand[a] < 0) continue;
        for (b = 0; b < S; b++)
            if (b != a && cand[b] >= 0 && vc[(size_t)cand[b] * S + a] >= pl->op[cand[a]].pos) { cand[a] = -1; break; }
    }
    pl->op[v].wait_off = pl->n_waits;
    for (a = 0; a < S; a++) {
        int u = cand[a];
        if (u < 0) continue;
        if (!CONCERTO__GROW(pl->ctx, pl->waits, pl->waits_cap, (size_t)pl->n_waits + 1)) return CC_ERR_OUT_OF_MEMORY;
        pl->waits[pl->n_waits++] = u;
        pl->op[u].record = 1;
        nc++;
        /* what u knows, plus u itself */
        for (r = 0; r < S; r++) if (vc[(size_t)u * S + r] > cv[r]) cv[r] = vc[(size_t)u * S + r];
        if (pl->op[u].pos > cv[a]) cv[a] = pl->op[u].pos;
    }
    pl->op[v].n_waits = nc;
    return CC_OK;
}

/* The hash ranks compare: streams, per stream the ops in order by name and
   collective, and the waits. */
static uint64_t cc__plan_hash_of(const cc_plan* pl) {
    uint64_t h = CONCERTO__FNV_START;
    int r, S = pl->n_streams;
    h = cc__fnv_int(h, pl->n_ops);
    h = cc__fnv_int(h, S);
    for (r = 0; r < S; r++) {
        int j;
        h = cc__fnv_int(h, pl->seq_off[r + 1] - pl->seq_off[r]);
        for (j = pl->seq_off[r]; j < pl->seq_off[r + 1]; j++) {
            int v = pl->seq[j], w;
            const cc_collective* c = &pl->op[v].coll;
            const char* nm = cc__name(pl->g, v);
            h = cc__fnv(h, nm, strlen(nm) + 1);
            h = cc__fnv_int(h, c->kind);
            if (c->kind != CC_COLL_NONE) {
                h = cc__fnv_int(h, c->dtype); h = cc__fnv_int(h, c->reduce);
                h = cc__fnv_int(h, (int64_t)c->n_elems); h = cc__fnv_int(h, c->peer);
            }
            for (w = 0; w < pl->op[v].n_waits; w++) {
                int u = pl->waits[pl->op[v].wait_off + w];
                h = cc__fnv_int(h, pl->op[u].stream); h = cc__fnv_int(h, pl->op[u].pos);
            }
        }
    }
    if (pl->g->n_mb > 0) {   /* a plan without transient buffers hashes as before */
        int m;
        h = cc__fnv_int(h, (int64_t)pl->arena_bytes);
        for (m = 0; m < pl->g->n_mb; m++) h = cc__fnv_int(h, (int64_t)pl->mb_off[m]);
    }
    return h;
}

/* The transient buffers' lifetimes [lo, hi) in ticks from the starts st. */
static void cc__plan_lifetimes(const cc_graph* g, const cc__time* st, cc__time* lo, cc__time* hi) {
    int m, k;
    for (m = 0; m < g->n_mb; m++) {
        lo[m] = st[g->mb_alloc[m]]; hi[m] = lo[m];
        for (k = g->mb_user_off[m]; k < g->mb_user_off[m + 1]; k++) {
            int u = g->mb_user[k];
            if (st[u] < lo[m]) lo[m] = st[u];
            if (st[u] + g->dur[u] > hi[m]) hi[m] = st[u] + g->dur[u];
        }
        if (hi[m] <= lo[m]) hi[m] = lo[m] + 1;   /* an instant still holds it */
    }
}

typedef struct cc__plan_place { const cc_graph* g; const cc__time* lo; } cc__plan_place;

/* largest first, then earliest, then by index; qsort has no context, so the
   sort below is an insertion sort (t is the number of transient buffers) */
static int cc__plan_place_before(const cc__plan_place* c, int a, int b) {
    if (c->g->mb_bytes[a] != c->g->mb_bytes[b]) return c->g->mb_bytes[a] > c->g->mb_bytes[b];
    if (c->lo[a] != c->lo[b]) return c->lo[a] < c->lo[b];
    return a < b;
}

#define CONCERTO__ARENA_ALIGN 256u

/* Offsets of the transient buffers (pl->mb_off), the arena's size, and the
   memory edges between buffers that share bytes. */
static cc_result cc__plan_arena(cc_plan* pl, const cc__time* lo, const cc__time* hi) {
    const cc_graph* g = pl->g;
    cc_context* ctx = pl->ctx;
    int nm = g->n_mb, n = pl->n_ops, i, j, a, b, k, np;
    int *idx = NULL, *near = NULL, *fromto = NULL;
    size_t ne = 0, cap = 0;
    cc__plan_place c;
    cc_result rc = CC_OK;
    c.g = g; c.lo = lo;
    pl->mb_off = (uint64_t*)cc__calloc(ctx, (size_t)nm + 1, sizeof(uint64_t));
    idx = (int*)cc__alloc(ctx, ((size_t)nm + 1) * sizeof(int));
    near = (int*)cc__alloc(ctx, ((size_t)nm + 1) * sizeof(int));
    if (!pl->mb_off || !idx || !near) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    for (i = 0; i < nm; i++) {
        int x = i;
        for (j = i; j > 0 && cc__plan_place_before(&c, x, idx[j - 1]); j--) idx[j] = idx[j - 1];
        idx[j] = x;
    }
    for (i = 0; i < nm; i++) {
        uint64_t off = 0, sz = g->mb_bytes[idx[i]];
        a = idx[i];
        for (j = 0, np = 0; j < i; j++) {   /* placed ones alive with a, by offset */
            int x = idx[j];
            if (!(lo[x] < hi[a] && lo[a] < hi[x])) continue;
            for (k = np; k > 0 && pl->mb_off[near[k - 1]] > pl->mb_off[x]; k--) near[k] = near[k - 1];
            near[k] = x; np++;
        }
        for (k = 0; k < np; k++) {
            uint64_t o = pl->mb_off[near[k]], e = o + g->mb_bytes[near[k]];
            if (off + sz <= o) break;
            if (e > off) off = (e + CONCERTO__ARENA_ALIGN - 1) / CONCERTO__ARENA_ALIGN * CONCERTO__ARENA_ALIGN;
        }
        pl->mb_off[a] = off;
        if (off + sz > pl->arena_bytes) pl->arena_bytes = off + sz;
    }
    /* memory edges: a's users -> b's first writer where a ends before b starts and they share bytes */
    for (a = 0; a < nm; a++)
        for (b = 0; b < nm; b++) {
            int w = g->mb_alloc[b];
            if (a == b || hi[a] > lo[b]) continue;
            if (!(pl->mb_off[a] < pl->mb_off[b] + g->mb_bytes[b] && pl->mb_off[b] < pl->mb_off[a] + g->mb_bytes[a])) continue;
            for (k = g->mb_user_off[a]; k < g->mb_user_off[a + 1]; k++) {
                if (g->mb_user[k] == w) continue;
                if (!CONCERTO__GROW(ctx, fromto, cap, 2 * ne + 2)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                fromto[2 * ne] = g->mb_user[k]; fromto[2 * ne + 1] = w; ne++;
            }
        }
    if (ne == 0) goto done;
    pl->mem_pred_off = (int*)cc__calloc(ctx, (size_t)n + 2, sizeof(int));
    pl->mem_succ_off = (int*)cc__calloc(ctx, (size_t)n + 2, sizeof(int));
    pl->mem_pred = (int*)cc__alloc(ctx, ne * sizeof(int));
    pl->mem_succ = (int*)cc__alloc(ctx, ne * sizeof(int));
    if (!pl->mem_pred_off || !pl->mem_succ_off || !pl->mem_pred || !pl->mem_succ) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    for (i = 0; i < (int)ne; i++) { pl->mem_succ_off[fromto[2 * i] + 2]++; pl->mem_pred_off[fromto[2 * i + 1] + 2]++; }
    for (i = 0; i < n; i++) { pl->mem_succ_off[i + 2] += pl->mem_succ_off[i + 1]; pl->mem_pred_off[i + 2] += pl->mem_pred_off[i + 1]; }
    for (i = 0; i < (int)ne; i++) {
        pl->mem_succ[pl->mem_succ_off[fromto[2 * i] + 1]++] = fromto[2 * i + 1];
        pl->mem_pred[pl->mem_pred_off[fromto[2 * i + 1] + 1]++] = fromto[2 * i];
    }
done:
    cc__free(ctx, idx); cc__free(ctx, near); cc__free(ctx, fromto);
    return rc;
}

CONCERTO_API cc_result cc_plan_create(cc_context* ctx, cc_graph* g, const cc_op* order, cc_plan** out) {
    cc_plan_desc d;
    memset(&d, 0, sizeof d);
    d.order = order;
    return cc_plan_create_desc(ctx, g, &d, out);
}

CONCERTO_API cc_result cc_plan_create_desc(cc_context* ctx, cc_graph* g, const cc_plan_desc* desc, cc_plan** out) {
    cc_plan* pl = NULL;
    cc_plan_desc d;
    int* ord = NULL;
    int* vc = NULL;          /* [n * S] */
    int* scratch = NULL;     /* [3n + 2 + S + memory edges]: left, next_off, next; cand */
    cc__time* tm = NULL;     /* [n + 6t]: starts; lifetimes lo, hi; the peak's events */
    int n, S, i, nme = 0;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_plan_create")) != CC_OK) return rc;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_plan_create: out is NULL");
    *out = NULL;
    if (desc) d = *desc;
    else memset(&d, 0, sizeof d);
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n; S = g->k;
    if (!g->stream_mode)
        return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_plan_create: the graph has general resources; plans need a stream graph");
    pl = (cc_plan*)cc__calloc(ctx, 1, sizeof *pl);
    if (!pl) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_plan_create: out of memory");
    pl->ctx = ctx; pl->g = g; pl->n_ops = n; pl->n_streams = S;
    pl->op = (cc__plan_op*)cc__calloc(ctx, (size_t)n + 1, sizeof *pl->op);
    pl->issue = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    pl->seq_off = (int*)cc__calloc(ctx, (size_t)S + 1, sizeof(int));
    pl->seq = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    ord = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    vc = (int*)cc__alloc(ctx, ((size_t)n + 1) * (size_t)S * sizeof(int));
    if (!pl->op || !pl->issue || !pl->seq_off || !pl->seq || !ord || !vc) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    if (d.order) rc = cc__graph_order(g, d.order, n, "cc_plan_create", "order", ord);
    else for (i = 0; i < n; i++) ord[i] = i;
    if (rc == CC_OK) rc = cc__plan_streams(pl, ord);
    if (rc == CC_OK && g->n_mb > 0) {   /* the arena */
        cc__time *lo, *hi;
        tm = (cc__time*)cc__alloc(ctx, ((size_t)n + 6 * (size_t)g->n_mb + 1) * sizeof(cc__time));
        if (!tm) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        lo = tm + n; hi = lo + g->n_mb;
        if (d.start_us) {
            for (i = 0; i < n; i++) {
                if (!(d.start_us[i] >= 0 && d.start_us[i] < 1e12))
                    { rc = CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_plan_create_desc: op '%s' has start %g us (want >= 0, "
                                          "finite)", cc__name(g, i), d.start_us[i]); goto done; }
                tm[i] = (cc__time)llround(d.start_us[i] * CONCERTO__TICKS_PER_US);
            }
        } else {
            cc__prob p;
            int blocked[2] = { -1, -1 };
            cc__time mk;
            cc__prob_of_graph(g, &p);
            mk = cc__stream_sim(ctx, &p, ord, tm, blocked);
            if (mk == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
            if (mk < 0) {   /* the order deadlocks: the issue order says where */
                scratch = (int*)cc__calloc(ctx, 3 * (size_t)n + 2 + (size_t)S, sizeof(int));
                if (!scratch) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                rc = cc__plan_issue(pl, ord, scratch + n, scratch + 2 * n + 1, scratch);
                if (rc == CC_OK)
                    rc = CONCERTO__FAIL(ctx, CC_ERR_DEADLOCK, "cc_plan_create: the order deadlocks the streams");
                goto done;
            }
        }
        cc__plan_lifetimes(g, tm, lo, hi);
        if ((rc = cc__plan_arena(pl, lo, hi)) != CC_OK) goto done;
        if (d.memory_cap_bytes > 0 && pl->arena_bytes > d.memory_cap_bytes) {
            cc__prob p;
            cc__time at = 0;
            uint64_t peak;
            cc__prob_of_graph(g, &p);
            peak = cc__mem_peak(&p, tm, (cc__mev*)(void*)(hi + g->n_mb), &at);
            rc = CONCERTO__FAIL(ctx, CC_ERR_INFEASIBLE, "cc_plan_create_desc: the arena needs %llu bytes, above memory_cap_bytes "
                                "%llu (the buffers' lifetimes peak at %llu bytes at %g us; the rest is fragmentation)",
                                (unsigned long long)pl->arena_bytes, (unsigned long long)d.memory_cap_bytes,
                                (unsigned long long)peak, (double)at / CONCERTO__TICKS_PER_US);
            goto done;
        }
        if (pl->mem_succ_off) nme = pl->mem_succ_off[n];
    }
    if (rc == CC_OK) {
        scratch = (int*)cc__calloc(ctx, 3 * (size_t)n + 2 + (size_t)S + (size_t)nme, sizeof(int));
        if (!scratch) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        rc = cc__plan_issue(pl, ord, scratch + n, scratch + 2 * n + 1, scratch);
    }
    for (i = 0; i < n && rc == CC_OK; i++) rc = cc__plan_waits_of(pl, pl->issue[i], vc, scratch + 3 * n + 2 + nme);
    if (rc == CC_OK) {
        pl->hash = cc__plan_hash_of(pl);
        *out = pl;
        pl = NULL;
    }
done:
    if (rc == CC_ERR_OUT_OF_MEMORY) rc = CONCERTO__FAIL(ctx, rc, "cc_plan_create: out of memory");
    cc_plan_destroy(pl);
    cc__free(ctx, ord); cc__free(ctx, vc); cc__free(ctx, scratch); cc__free(ctx, tm);
    return rc;
}

#ifndef CONCERTO_NO_RUNTIME
/* >>exec
   Running a plan: every step the ops of the plan in host order, each with
   its waits, timestamps and event record, all through the backend. */

#define CONCERTO__PROFILE_MAX_STEPS 1000   /* steps cc_exec_profile_loop_step takes before an apply */

struct cc_exec {
    cc_context* ctx;
    cc_plan* plan;
    cc_backend be;             /* a copy: fns and self */
    const char* be_name;
    int has_events;            /* all four event entries: else waits synchronize */
    void** streams;            /* [n_streams] */
    void** events;             /* [n_ops]: for ops that record */
    double* t;                 /* [2 n_ops]: start, end timestamps */
    double t0;
    int launched;
    int has_coll;              /* the plan issues collectives */
    int agreed;                /* cc_exec_agree succeeded */
    int ran;                   /* a step ended since the last cc_exec_profile_loop_step */
    int prof_steps;            /* steps added since the last cc_exec_profile_loop_apply */
    double* prof;              /* [n_ops + 4]: their ops' times summed, launch gaps (sum,
                                  count), wait gaps (sum, count) */
    double* prof_mk;           /* [2 CONCERTO__PROFILE_MAX_STEPS]: each added step simulated from
                                  its own times (us), then each one's exposed communication */
    double* prof_se;           /* [2 n_ops]: scratch, one step's starts and ends */
    cc_profile_result prof_last; /* as the last apply agreed it; steps 0: none */
    cc__time* prof_dur;        /* [4 n_ops]: scratch, one step's times in ticks, its simulated starts,
                                  each op's launch and wait gaps in ticks */
    cc_collective* coll;       /* [n_ops]: the plan's collectives with their buffers resolved */
    cc_copy2d* cp;             /* [n_ops]: the plan's copy ops, resolved (>>copy) */
    void* arena;               /* the plan's arena: 256-aligned (backend memory where arena_dev) */
    void* arena_raw;           /* what was allocated */
    int arena_dev;             /* allocated by the backend's mem_alloc */
    void** bound;              /* [n_buf]: where each bound buffer's bytes are (cc_exec_bind_buffer); NULL: unknown */
    int n_bound;               /* the graph's buffers when the executor was created */
    int profile_writes;        /* cc_exec_allow_profile_writes */
};

CONCERTO_API void cc_backend_destroy(cc_backend* be) {
    if (!be) return;
    if (be->fns && be->fns->destroy) be->fns->destroy(be->self);
    be->fns = NULL;
    be->self = NULL;
}

CONCERTO_API void cc_exec_destroy(cc_exec* x) {
    const cc_backend_fns* f;
    int i;
    if (!x) return;
    f = x->be.fns;
    if (x->launched) (void)f->synchronize(x->be.self);
    if (x->events)
        for (i = 0; i < x->plan->n_ops; i++) if (x->events[i]) f->event_destroy(x->be.self, x->events[i]);
    if (x->streams)
        for (i = 0; i < x->plan->n_streams; i++) if (x->streams[i]) f->stream_destroy(x->be.self, x->streams[i]);
    cc__free(x->ctx, x->events); cc__free(x->ctx, x->streams); cc__free(x->ctx, x->t); cc__free(x->ctx, x->prof);
    cc__free(x->ctx, x->prof_mk); cc__free(x->ctx, x->prof_dur); cc__free(x->ctx, x->prof_se);
    cc__free(x->ctx, x->coll); cc__free(x->ctx, x->cp);
    cc__free(x->ctx, (void*)x->bound);
    if (x->arena_raw) {
        if (x->arena_dev && f->mem_free) f->mem_free(x->be.self, x->arena_raw);
        else cc__free(x->ctx, x->arena_raw);
    }
    cc__free(x->ctx, x);
}

CONCERTO_API void* cc_exec_buffer_ptr(const cc_exec* x, cc_buffer buffer) {
    uint64_t off;
    int b;
    if (!x) return NULL;
    if ((b = cc_buffer_index(x->plan->g, buffer)) >= 0 && !x->plan->g->buf_transient[b]) return b < x->n_bound ? x->bound[b] : NULL;
    if (!x->arena || (off = cc_plan_buffer_offset(x->plan, buffer)) == UINT64_MAX) return NULL;
    return (char*)x->arena + off;
}

CONCERTO_API cc_result cc_exec_bind_buffer(cc_exec* x, cc_buffer buffer, void* ptr) {
    const cc_graph* g;
    int b;
    if (!x) return CC_ERR_INVALID_ARG;
    g = x->plan->g;
    if ((b = cc_buffer_index(g, buffer)) < 0 || b >= x->n_bound)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNKNOWN_BUFFER, "cc_exec_bind_buffer: not a buffer of graph '%s' when the executor "
                              "was created", cc_graph_name(g));
    if (g->buf_transient[b])
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_bind_buffer: buffer '%s' is transient: the executor places it "
                              "in its arena (cc_exec_buffer_ptr)", g->names.s + g->buf_name[b]);
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_bind_buffer: wait for the step first");
    x->bound[b] = ptr;
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_allow_profile_writes(cc_exec* x, int allow) {
    if (!x) return CC_ERR_INVALID_ARG;
    x->profile_writes = allow != 0;
    return CC_OK;
}

static const char* cc__backend_stream_kind(const cc_backend_fns* f) { return f->stream_kind ? f->stream_kind : "host"; }

/* 1 if a backend with table f can run collectives on comm. */
static int cc__exec_serves(const cc_backend_fns* f, const cc_comm* comm) {
    return strcmp(cc__backend_stream_kind(f), cc__comm_stream_kind(comm)) == 0;
}

/* The backend's required entries are there, and the collective entry when
   the plan needs it, for the plan's communicators. */
static cc_result cc__exec_check_backend(cc_context* ctx, const cc_plan* plan, const cc_backend* be, int* has_coll) {
    const cc_backend_fns* f = be->fns;
    const char* name = f && f->name ? f->name : "?";
    int i;
    if (!f) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: the backend has no function table (fns is NULL)");
    if (!f->stream_create || !f->stream_destroy || !f->launch || !f->synchronize)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: backend '%s' lacks a required entry "
                              "(stream_create, stream_destroy, launch, synchronize)", name);
    if ((f->mem_alloc || f->mem_free || f->mem_copy) && !(f->mem_alloc && f->mem_free && f->mem_copy))
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: backend '%s' has some of mem_alloc, mem_free, "
                              "mem_copy: all three or none", name);
    if (!f->step_begin != !f->step_end)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: backend '%s' has one of step_begin and step_end: "
                              "both or none", name);
    *has_coll = 0;
    for (i = 0; i < plan->n_ops; i++) {
        const cc_collective* c = &plan->op[i].coll;
        if (plan->op[i].fn == cc__copy_fn && !f->copy)
            return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_exec_create: op '%s' is a copy op and backend '%s' has no copy "
                                  "entry", cc__name(plan->g, i), name);
        if (c->kind == CC_COLL_NONE) continue;
        *has_coll = 1;
        if (!f->collective)
            return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_exec_create: the plan has collectives and backend '%s' has none", name);
        if (!cc__exec_serves(f, c->comm))
            return CONCERTO__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_exec_create: op '%s' runs on communicator %s of family '%s' "
                                  "('%s' streams), which backend '%s' ('%s' streams) cannot run",
                                  cc__name(plan->g, i), c->comm->name, cc_comm_family(c->comm),
                                  cc__comm_stream_kind(c->comm), name, cc__backend_stream_kind(f));
    }
    return CC_OK;
}

/* Records what failed, followed by the backend's own message where it left
   one for this result in the context. */
static cc_result cc__exec_fail(cc_context* ctx, cc_result rc, const char* fmt, const char* a, const char* b) {
    char what[CONCERTO__MSG_MAX], why[CONCERTO__MSG_MAX];
    why[0] = 0;
    if (ctx->last_result == rc) cc__copy_msg(why, sizeof why, ctx->last_error);
    cc__fmt(what, sizeof what, fmt, a, b);
    return CONCERTO__FAIL(ctx, rc, "%s%s%s", what, why[0] ? ": " : "", why);
}

/* Copy op v (>>copy) as a 2-D copy: its read region into its write
   region, an address NULL in its record taken from the arena. */
static cc_result cc__exec_copy_resolve(cc_exec* x, int v) {
    const cc_plan* pl = x->plan;
    const cc_graph* g = pl->g;
    const cc__copy_rec* r = (const cc__copy_rec*)pl->op[v].user_data;
    const cc__access *rd = NULL, *wr = NULL;
    char* base[2];
    size_t a, end, first = cc__op_accesses(g, v, &end);
    int m, side;
    cc_copy2d* c = &x->cp[v];
    for (a = first; a < end; a++) {
        if (g->acc[a].is_write && !wr) wr = &g->acc[a];
        if (!g->acc[a].is_write && !rd) rd = &g->acc[a];
    }
    if (!rd || !wr || cc__acc_bytes(rd) != cc__acc_bytes(wr) || (rd->rows > 1 && wr->rows > 1 && rd->row_bytes != wr->row_bytes))
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_create: copy op '%s' does not read and write regions of "
                              "the same bytes", cc__name(g, v));
    for (side = 0; side < 2; side++) {
        const cc__access* acc = side ? wr : rd;
        const void* given = side ? (const void*)r->dst : r->src;
        base[side] = NULL;
        if (given) { base[side] = (char*)(uintptr_t)given; continue; }
        for (m = 0; m < g->n_mb; m++) if (g->mb_buf[m] == (int)acc->buffer) base[side] = (char*)x->arena + pl->mb_off[m] + acc->offset;
        if (!base[side])
            return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_create: copy op '%s' has no address for its %s region "
                                  "in bound buffer '%s'", cc__name(g, v), side ? "write" : "read", g->names.s + g->buf_name[acc->buffer]);
    }
    c->src = base[0];
    c->dst = base[1];
    c->width = (size_t)(rd->rows > 1 ? rd->row_bytes : wr->rows > 1 ? wr->row_bytes : rd->row_bytes);
    c->height = (size_t)(cc__acc_bytes(rd) / c->width);
    c->src_pitch = (size_t)(rd->rows > 1 ? rd->stride : c->width);
    c->dst_pitch = (size_t)(wr->rows > 1 ? wr->stride : c->width);
    return CC_OK;
}

/* The arena, and the collectives' NULL buffers resolved from their ops'
   first read and write regions. */
static cc_result cc__exec_arena(cc_exec* x) {
    const cc_plan* pl = x->plan;
    const cc_graph* g = pl->g;
    const cc_backend_fns* f = x->be.fns;
    cc_context* ctx = x->ctx;
    int v, m;
    size_t a;
    cc_result rc;
    if (pl->arena_bytes > 0) {
        if (f->mem_alloc) {
            if ((rc = f->mem_alloc(x->be.self, (size_t)pl->arena_bytes, &x->arena_raw)) != CC_OK) {
                char nb[32];
                x->arena_raw = NULL;
                cc__fmt(nb, sizeof nb, "%llu", (unsigned long long)pl->arena_bytes);
                return cc__exec_fail(ctx, rc, "cc_exec_create: backend '%s' could not allocate the arena of %s bytes", x->be_name, nb);
            }
            x->arena_dev = 1;
            if ((uintptr_t)x->arena_raw % CONCERTO__ARENA_ALIGN) {   /* less aligned than a device's: pad, still one allocation */
                f->mem_free(x->be.self, x->arena_raw);
                x->arena_raw = NULL;
                if ((rc = f->mem_alloc(x->be.self, (size_t)pl->arena_bytes + CONCERTO__ARENA_ALIGN - 1, &x->arena_raw)) != CC_OK) {
                    x->arena_raw = NULL;
                    return cc__exec_fail(ctx, rc, "cc_exec_create: backend '%s' could not allocate the arena%s", x->be_name, "");
                }
            }
            x->arena = (char*)x->arena_raw + (CONCERTO__ARENA_ALIGN - (uintptr_t)x->arena_raw % CONCERTO__ARENA_ALIGN) % CONCERTO__ARENA_ALIGN;
        } else {
            x->arena_raw = cc__alloc(ctx, (size_t)pl->arena_bytes + CONCERTO__ARENA_ALIGN - 1);
            if (!x->arena_raw) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_exec_create: out of memory for the arena of %llu bytes",
                                                    (unsigned long long)pl->arena_bytes);
            x->arena = (char*)x->arena_raw + (CONCERTO__ARENA_ALIGN - (uintptr_t)x->arena_raw % CONCERTO__ARENA_ALIGN) % CONCERTO__ARENA_ALIGN;
        }
    }
    for (v = 0; v < pl->n_ops; v++) x->coll[v] = pl->op[v].coll;
    for (a = 0; a < g->n_acc; a++) {   /* in the op's order of regions: the first one of each kind fills the pointer */
        const cc__access* acc = &g->acc[a];
        cc_collective* c = &x->coll[acc->op];
        char* base = NULL;
        if (c->kind == CC_COLL_NONE || (acc->is_write ? c->recv_buf != NULL : c->send_buf != NULL)) continue;
        for (m = 0; m < g->n_mb; m++) if (g->mb_buf[m] == (int)acc->buffer) base = (char*)x->arena + pl->mb_off[m];
        if (!base)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: op '%s' is a collective with a NULL %s and its first %s "
                                  "region is in bound buffer '%s': give the collective the buffer's address",
                                  cc__name(g, (int)acc->op), acc->is_write ? "recv_buf" : "send_buf", acc->is_write ? "write" : "read",
                                  g->names.s + g->buf_name[acc->buffer]);
        if (acc->is_write) c->recv_buf = base + acc->offset;
        else c->send_buf = base + acc->offset;
    }
    for (v = 0; v < pl->n_ops; v++)
        if (pl->op[v].fn == cc__copy_fn && (rc = cc__exec_copy_resolve(x, v)) != CC_OK) return rc;
    for (v = 0; v < pl->n_ops; v++) {
        const cc_collective* c = &x->coll[v];
        if (c->kind == CC_COLL_NONE) continue;
        if (c->n_elems && !c->recv_buf && c->kind != CC_COLL_SEND)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: op '%s' is a collective with a NULL recv_buf and no "
                                  "write region to take it from", cc__name(g, v));
        if (c->n_elems && !c->send_buf && c->kind != CC_COLL_RECV)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: op '%s' is a collective with a NULL send_buf and no "
                                  "read region to take it from", cc__name(g, v));
    }
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_create(cc_context* ctx, cc_plan* plan, const cc_backend* be, cc_exec** out) {
    cc_exec* x;
    const cc_backend_fns* f;
    int i, has_coll = 0;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!plan || !be || !out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_exec_create: plan, backend or out is NULL");
    *out = NULL;
    if ((rc = cc__exec_check_backend(ctx, plan, be, &has_coll)) != CC_OK) return rc;
    f = be->fns;
    x = (cc_exec*)cc__calloc(ctx, 1, sizeof *x);
    if (!x) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_exec_create: out of memory");
    x->ctx = ctx; x->plan = plan; x->be = *be; x->has_coll = has_coll;
    x->be_name = f->name ? f->name : "?";
    x->has_events = f->event_create && f->event_destroy && f->event_record && f->stream_wait_event;
    x->streams = (void**)cc__calloc(ctx, (size_t)plan->n_streams + 1, sizeof(void*));
    x->events = (void**)cc__calloc(ctx, (size_t)plan->n_ops + 1, sizeof(void*));
    x->t = (double*)cc__calloc(ctx, 2 * (size_t)plan->n_ops + 1, sizeof(double));
    x->prof = (double*)cc__calloc(ctx, (size_t)plan->n_ops + 4, sizeof(double));
    x->prof_mk = (double*)cc__calloc(ctx, 2 * CONCERTO__PROFILE_MAX_STEPS, sizeof(double));
    x->prof_se = (double*)cc__calloc(ctx, 2 * (size_t)plan->n_ops + 1, sizeof(double));
    x->prof_dur = (cc__time*)cc__calloc(ctx, 4 * (size_t)plan->n_ops + 1, sizeof(cc__time));
    x->coll = (cc_collective*)cc__calloc(ctx, (size_t)plan->n_ops + 1, sizeof(cc_collective));
    x->cp = (cc_copy2d*)cc__calloc(ctx, (size_t)plan->n_ops + 1, sizeof(cc_copy2d));
    x->bound = (void**)cc__calloc(ctx, (size_t)plan->g->n_buf + 1, sizeof(void*));
    x->n_bound = plan->g->n_buf;
    if (!x->streams || !x->events || !x->t || !x->prof || !x->prof_mk || !x->prof_dur || !x->prof_se || !x->coll || !x->cp || !x->bound) { cc_exec_destroy(x); return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_exec_create: out of memory"); }
    if ((rc = cc__exec_arena(x)) != CC_OK) { cc_exec_destroy(x); return rc; }
    for (i = 0; i < plan->n_streams; i++)
        if ((rc = f->stream_create(be->self, i, &x->streams[i])) != CC_OK) {
            char idx[16];
            cc__fmt(idx, sizeof idx, "%d", i);
            rc = cc__exec_fail(ctx, rc, "cc_exec_create: backend '%s' could not create stream %s", x->be_name, idx);
            x->streams[i] = NULL;
            cc_exec_destroy(x);
            return rc;
        }
    if (x->has_events)
        for (i = 0; i < plan->n_ops; i++)
            if (plan->op[i].record && (rc = f->event_create(be->self, &x->events[i])) != CC_OK) {
                rc = cc__exec_fail(ctx, rc, "cc_exec_create: backend '%s' could not create the event of op '%s'", x->be_name,
                                   cc__name(plan->g, i));
                x->events[i] = NULL;
                cc_exec_destroy(x);
                return rc;
            }
    *out = x;
    return CC_OK;
}

/* Issues op v on its stream: its waits (with_waits), a timestamp before
   and after it (where the backend has them), the work, and its event
   record. Returns the backend's result. */
static cc_result cc__exec_issue(cc_exec* x, int v, int with_waits) {
    const cc_plan* pl = x->plan;
    const cc_backend_fns* f = x->be.fns;
    const cc__plan_op* o = &pl->op[v];
    void* self = x->be.self;
    void* st = x->streams[o->stream];
    cc_result rc = CC_OK;
    int w;
    for (w = 0; with_waits && w < o->n_waits && rc == CC_OK; w++) {
        int u = pl->waits[o->wait_off + w];
        rc = x->has_events ? f->stream_wait_event(self, st, x->events[u]) : f->synchronize(self);   /* fallback */
    }
    if (rc == CC_OK && f->timestamp) rc = f->timestamp(self, st, &x->t[2 * v]);
    if (rc == CC_OK) {
        if (o->coll.kind != CC_COLL_NONE) rc = f->collective(self, st, &x->coll[v]);
        else if (o->fn == cc__copy_fn) rc = f->copy(self, st, &x->cp[v]);
        else if (o->fn) rc = f->launch(self, st, o->fn, o->user_data);
    }
    if (rc == CC_OK && f->timestamp) rc = f->timestamp(self, st, &x->t[2 * v + 1]);
    if (rc == CC_OK && with_waits && o->record && x->has_events) rc = f->event_record(self, x->events[v], st);
    return rc;
}

/* The memory the executor knows (the arena, then every bound buffer
   bound with cc_exec_bind_buffer), copied to host memory and back: the
   backend's mem_copy where it has one, else memcpy. */
typedef struct cc__exec_snap {
    int n;
    void** mem;                /* [n]: where each piece is */
    size_t* bytes;             /* [n] */
    int* buf;                  /* [n]: the bound buffer; -1: the arena */
    unsigned char** copy;      /* [n]: host copies */
} cc__exec_snap;

static void cc__exec_snap_free(cc_exec* x, cc__exec_snap* sn) {
    int i;
    for (i = 0; sn->copy && i < sn->n; i++) cc__free(x->ctx, sn->copy[i]);
    cc__free(x->ctx, (void*)sn->mem); cc__free(x->ctx, sn->bytes); cc__free(x->ctx, sn->buf); cc__free(x->ctx, (void*)sn->copy);
    memset(sn, 0, sizeof *sn);
}

static cc_result cc__exec_copy(cc_exec* x, void* dst, const void* src, size_t n) {
    if (!n) return CC_OK;
    if (x->be.fns->mem_copy) return x->be.fns->mem_copy(x->be.self, dst, src, n);
    memcpy(dst, src, n);
    return CC_OK;
}

/* Copies everything the executor knows into sn (what names the caller). */
static cc_result cc__exec_snap_take(cc_exec* x, cc__exec_snap* sn, const char* what) {
    const cc_graph* g = x->plan->g;
    int b, k = x->n_bound + 1, i;
    cc_result rc = CC_OK;
    memset(sn, 0, sizeof *sn);
    sn->mem = (void**)cc__calloc(x->ctx, (size_t)k, sizeof(void*));
    sn->bytes = (size_t*)cc__calloc(x->ctx, (size_t)k, sizeof(size_t));
    sn->buf = (int*)cc__calloc(x->ctx, (size_t)k, sizeof(int));
    sn->copy = (unsigned char**)cc__calloc(x->ctx, (size_t)k, sizeof(unsigned char*));
    if (!sn->mem || !sn->bytes || !sn->buf || !sn->copy) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK && x->arena && x->plan->arena_bytes > 0) {
        sn->mem[sn->n] = x->arena; sn->bytes[sn->n] = (size_t)x->plan->arena_bytes; sn->buf[sn->n++] = -1;
    }
    for (b = 0; rc == CC_OK && b < x->n_bound; b++)
        if (x->bound[b] && g->buf_bytes[b] > 0) { sn->mem[sn->n] = x->bound[b]; sn->bytes[sn->n] = (size_t)g->buf_bytes[b]; sn->buf[sn->n++] = b; }
    for (i = 0; rc == CC_OK && i < sn->n; i++) {
        if (!(sn->copy[i] = (unsigned char*)cc__alloc(x->ctx, sn->bytes[i]))) rc = CC_ERR_OUT_OF_MEMORY;
        else if ((rc = cc__exec_copy(x, sn->copy[i], sn->mem[i], sn->bytes[i])) != CC_OK)
            rc = cc__exec_fail(x->ctx, rc, "%s: backend '%s' could not copy the memory it keeps", what, x->be_name);
    }
    if (rc == CC_ERR_OUT_OF_MEMORY) rc = CONCERTO__FAIL(x->ctx, rc, "%s: out of memory for a copy of the executor's buffers", what);
    if (rc != CC_OK) cc__exec_snap_free(x, sn);
    return rc;
}

/* Puts sn's copies back (what names the caller). */
static cc_result cc__exec_snap_put(cc_exec* x, const cc__exec_snap* sn, const char* what) {
    int i;
    cc_result rc = CC_OK;
    for (i = 0; i < sn->n && rc == CC_OK; i++) rc = cc__exec_copy(x, sn->mem[i], sn->copy[i], sn->bytes[i]);
    if (rc != CC_OK) return cc__exec_fail(x->ctx, rc, "%s: backend '%s' could not put back the memory it keeps", what, x->be_name);
    return CC_OK;
}

/* Profiling puts back what it changes: refused where an op writes a bound
   buffer the executor does not know, unless the caller allowed it. */
static cc_result cc__exec_profile_guard(cc_exec* x, const char* what) {
    const cc_graph* g = x->plan->g;
    size_t a;
    if (x->profile_writes) return CC_OK;
    for (a = 0; a < g->n_acc; a++) {
        const cc__access* acc = &g->acc[a];
        int b = (int)acc->buffer;
        if (!acc->is_write || g->buf_transient[b] || (b < x->n_bound && x->bound[b])) continue;
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "%s: op '%s' writes bound buffer '%s', whose address the executor does "
                              "not know, so profiling could not put it back as it found it: bind it (cc_exec_bind_buffer), or "
                              "let profiling change it (cc_exec_allow_profile_writes)", what, cc__name(g, (int)acc->op),
                              g->names.s + g->buf_name[b]);
    }
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_launch(cc_exec* x) {
    const cc_plan* pl;
    const cc_backend_fns* f;
    cc_result rc;
    int i;
    if (!x) return CC_ERR_INVALID_ARG;
    pl = x->plan;
    f = x->be.fns;
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_launch: the previous step was not waited for");
    if (x->has_coll && !x->agreed)
        return CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_launch: the plan has collectives: call cc_exec_agree "
                              "first, so that ranks with different plans never start");
    x->ran = 0;
    x->t0 = f->now_us ? f->now_us(x->be.self) : 0;
    if (f->step_begin && (rc = f->step_begin(x->be.self)) != CC_OK)
        return cc__exec_fail(x->ctx, rc, "cc_exec_launch: backend '%s' could not begin the step", x->be_name, NULL);
    for (i = 0; i < pl->n_ops; i++) {
        int v = pl->issue[i];
        if (f->label) f->label(x->be.self, cc__name(pl->g, v));
        if ((rc = cc__exec_issue(x, v, 1)) != CC_OK) {
            rc = cc__exec_fail(x->ctx, rc, "cc_exec_launch: backend '%s' failed at op '%s'", x->be_name, cc__name(pl->g, v));
            if (f->step_end) (void)f->step_end(x->be.self, 0);
            (void)f->synchronize(x->be.self);   /* nothing of the step left running */
            return rc;
        }
    }
    if (f->step_end && (rc = f->step_end(x->be.self, 1)) != CC_OK) {
        rc = cc__exec_fail(x->ctx, rc, "cc_exec_launch: backend '%s' could not end the step", x->be_name, NULL);
        (void)f->synchronize(x->be.self);
        return rc;
    }
    x->launched = 1;
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_wait(cc_exec* x) {
    cc_result rc;
    if (!x) return CC_ERR_INVALID_ARG;
    if (!x->launched) return CC_OK;
    rc = x->be.fns->synchronize(x->be.self);
    x->launched = 0;
    x->ran = rc == CC_OK;
    return rc;
}

CONCERTO_API cc_result cc_exec_step(cc_exec* x) {
    cc_result rc = cc_exec_launch(x);
    if (rc != CC_OK) return rc;
    return cc_exec_wait(x);
}

/* 1 if op v of g declares a write of byte `at` of buffer b (arena: b -1,
   at an arena offset, through the plan's offsets). */
static int cc__op_declares_write(const cc_plan* pl, int v, int b, uint64_t at) {
    const cc_graph* g = pl->g;
    size_t a;
    int m;
    for (a = 0; a < g->n_acc; a++) {
        const cc__access* acc = &g->acc[a];
        uint64_t base = 0;
        if ((int)acc->op != v || !acc->is_write) continue;
        if (b >= 0) {
            if ((int)acc->buffer != b) continue;
        } else {
            for (m = 0; m < g->n_mb && g->mb_buf[m] != (int)acc->buffer; m++) {}
            if (m == g->n_mb) continue;
            base = pl->mb_off[m];
        }
        if (cc__acc_hits_range(acc, base, at, at + 1)) return 1;
    }
    return 0;
}

/* The first byte of piece i of sn that op v changed (now) outside its
   declared writes, or -1. */
static int64_t cc__exec_undeclared(const cc_exec* x, const cc__exec_snap* sn, int i, int v, const unsigned char* now) {
    size_t j, n = sn->bytes[i];
    const unsigned char* was = sn->copy[i];
    if (memcmp(was, now, n) == 0) return -1;
    for (j = 0; j < n; j++)
        if (was[j] != now[j] && !cc__op_declares_write(x->plan, v, sn->buf[i], (uint64_t)j)) return (int64_t)j;
    return -1;
}

CONCERTO_API cc_result cc_exec_step_checked(cc_exec* x) {
    const char* what = "cc_exec_step_checked";
    const cc_plan* pl;
    const cc_graph* g;
    const cc_backend_fns* f;
    cc__exec_snap sn;
    unsigned char* now = NULL;
    size_t most = 0;
    int i, k, v;
    cc_result rc;
    if (!x) return CC_ERR_INVALID_ARG;
    pl = x->plan; g = pl->g; f = x->be.fns;
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "%s: wait for the step first", what);
    if (x->has_coll && !x->agreed)
        return CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "%s: the plan has collectives: call cc_exec_agree first", what);
    if ((rc = cc__exec_snap_take(x, &sn, what)) != CC_OK) return rc;
    for (i = 0; i < sn.n; i++) if (sn.bytes[i] > most) most = sn.bytes[i];
    if (!(now = (unsigned char*)cc__alloc(x->ctx, most + 1))) {
        cc__exec_snap_free(x, &sn);
        return CONCERTO__FAIL(x->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    x->ran = 0;
    for (k = 0; k < pl->n_ops && rc == CC_OK; k++) {
        v = pl->issue[k];   /* the plan's order: transient buffers sharing arena bytes are apart in it */
        if (f->label) f->label(x->be.self, cc__name(g, v));
        rc = cc__exec_issue(x, v, 0);
        if (rc == CC_OK) rc = f->synchronize(x->be.self);
        else (void)f->synchronize(x->be.self);
        if (rc != CC_OK) { rc = cc__exec_fail(x->ctx, rc, "cc_exec_step_checked: backend '%s' failed at op '%s'", x->be_name, cc__name(g, v)); break; }
        for (i = 0; i < sn.n && rc == CC_OK; i++) {
            int64_t at;
            if ((rc = cc__exec_copy(x, now, sn.mem[i], sn.bytes[i])) != CC_OK) {
                rc = cc__exec_fail(x->ctx, rc, "%s: backend '%s' could not copy the memory it checks", what, x->be_name);
                break;
            }
            if ((at = cc__exec_undeclared(x, &sn, i, v, now)) >= 0) {
                if (sn.buf[i] >= 0) {
                    rc = CONCERTO__FAIL(x->ctx, CC_ERR_UNDECLARED_WRITE, "%s: op '%s' wrote byte %lld of buffer '%s', outside the "
                                        "regions it declares it writes", what, cc__name(g, v), (long long)at,
                                        g->names.s + g->buf_name[sn.buf[i]]);
                } else {
                    int m, in = -1;
                    for (m = 0; m < g->n_mb && in < 0; m++)
                        if ((uint64_t)at >= pl->mb_off[m] && (uint64_t)at < pl->mb_off[m] + g->mb_bytes[m]) in = m;
                    rc = CONCERTO__FAIL(x->ctx, CC_ERR_UNDECLARED_WRITE, "%s: op '%s' wrote byte %lld of the arena (%s%s%s), "
                                        "outside the regions it declares it writes", what, cc__name(g, v), (long long)at,
                                        in >= 0 ? "in transient buffer '" : "between transient buffers",
                                        in >= 0 ? g->names.s + g->buf_name[g->mb_buf[in]] : "", in >= 0 ? "'" : "");
                }
                break;
            }
            memcpy(sn.copy[i], now, sn.bytes[i]);
        }
    }
    cc__free(x->ctx, now);
    cc__exec_snap_free(x, &sn);
    return rc;
}

CONCERTO_API cc_result cc_exec_timeline(cc_exec* x, double* start_us, double* end_us) {
    int i;
    if (!x) return CC_ERR_INVALID_ARG;
    if (!x->be.fns->timestamp)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "cc_exec_timeline: backend '%s' has no timestamps", x->be_name);
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_timeline: wait for the step first");
    for (i = 0; i < x->plan->n_ops; i++) {
        if (start_us) start_us[i] = x->t[2 * i] - x->t0;
        if (end_us) end_us[i] = x->t[2 * i + 1] - x->t0;
    }
    return CC_OK;
}

/* A collective of the executor's own, now, through the backend: enqueued on
   the plan's first stream, then synchronize. c's buffers are host memory
   (send_bytes and recv_bytes long); a backend with memory entries gets
   copies in its memory. The errors are the backend's (recorded in its
   context); what names the caller in the message. */
static cc_result cc__exec_collective_now(cc_exec* x, const cc_collective* c, size_t send_bytes, size_t recv_bytes,
                                         const char* what) {
    const cc_backend_fns* f = x->be.fns;
    cc_collective d = *c;
    void *dsend = NULL, *drecv = NULL;
    int in_place = c->send_buf == (const void*)c->recv_buf;
    cc_result rc = CC_OK;
    if (!f->collective)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "%s: backend '%s' has no collective entry", what, x->be_name);
    if (!cc__exec_serves(f, c->comm))
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "%s: communicator %s of family '%s' runs on '%s' streams, "
                              "backend '%s' has '%s' streams", what, c->comm->name, cc_comm_family(c->comm),
                              cc__comm_stream_kind(c->comm), x->be_name, cc__backend_stream_kind(f));
    if (f->mem_alloc) {
        rc = f->mem_alloc(x->be.self, recv_bytes, &drecv);
        if (rc == CC_OK && !in_place) rc = f->mem_alloc(x->be.self, send_bytes, &dsend);
        if (rc == CC_OK) rc = f->mem_copy(x->be.self, in_place ? drecv : dsend, c->send_buf, send_bytes);
        d.send_buf = in_place ? drecv : dsend;
        d.recv_buf = drecv;
    }
    if (rc == CC_OK) {
        rc = f->collective(x->be.self, x->streams[0], &d);
        if (rc == CC_OK) rc = f->synchronize(x->be.self);
        else (void)f->synchronize(x->be.self);
    }
    if (rc == CC_OK && f->mem_alloc) rc = f->mem_copy(x->be.self, c->recv_buf, drecv, recv_bytes);
    if (dsend) f->mem_free(x->be.self, dsend);
    if (drecv) f->mem_free(x->be.self, drecv);
    if (rc != CC_OK) {
        char msg[CONCERTO__MSG_MAX];
        cc__copy_msg(msg, sizeof msg, cc_last_error(x->ctx));
        return CONCERTO__FAIL(x->ctx, rc, "%s: %s", what, msg[0] ? msg : cc_result_description(rc));
    }
    return CC_OK;
}

/* Every member's k 64-bit values, by member: *all (k times the size of
   comm: member i's at [i k, (i + 1) k)), the caller frees it. Errors named
   with what. */
static cc_result cc__exec_allgather_u64s(cc_exec* x, cc_comm* comm, const uint64_t* values, size_t k, uint64_t** all_out,
                                         const char* what) {
    int32_t *mine, *all;
    uint64_t* out;
    cc_collective c;
    size_t i, n = (size_t)cc_comm_size(comm);
    cc_result rc;
    *all_out = NULL;
    mine = (int32_t*)cc__alloc(x->ctx, 2 * k * sizeof(int32_t));
    all = (int32_t*)cc__alloc(x->ctx, 2 * k * n * sizeof(int32_t));
    out = (uint64_t*)cc__alloc(x->ctx, k * n * sizeof(uint64_t));
    if (!mine || !all || !out) {
        cc__free(x->ctx, mine); cc__free(x->ctx, all); cc__free(x->ctx, out);
        return CONCERTO__FAIL(x->ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    for (i = 0; i < k; i++) {
        mine[2 * i] = (int32_t)(uint32_t)(values[i] & 0xffffffffu);
        mine[2 * i + 1] = (int32_t)(uint32_t)(values[i] >> 32);
    }
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_GATHER;
    c.dtype = CC_DTYPE_INT32;
    c.n_elems = 2 * k;
    c.comm = comm;
    c.send_buf = mine;
    c.recv_buf = all;
    rc = cc__exec_collective_now(x, &c, 2 * k * sizeof(int32_t), 2 * k * n * sizeof(int32_t), what);
    for (i = 0; rc == CC_OK && i < k * n; i++) out[i] = (uint64_t)(uint32_t)all[2 * i] | ((uint64_t)(uint32_t)all[2 * i + 1] << 32);
    cc__free(x->ctx, mine);
    cc__free(x->ctx, all);
    if (rc != CC_OK) { cc__free(x->ctx, out); return rc; }
    *all_out = out;
    return CC_OK;
}

static cc_result cc__exec_allgather_u64(cc_exec* x, cc_comm* comm, uint64_t value, uint64_t** all_out, const char* what) {
    return cc__exec_allgather_u64s(x, comm, &value, 1, all_out, what);
}

/* The plan described entry by entry: into h[2 (r stride + p)] the op at
   position p of stream r (its name and collective), into h[2 (r stride +
   p) + 1] its waits; positions past a stream's end are 0. */
static void cc__plan_entry_hashes(const cc_plan* pl, uint64_t* h, int stride) {
    int r, j;
    memset(h, 0, 2 * (size_t)pl->n_streams * (size_t)stride * sizeof *h);
    for (r = 0; r < pl->n_streams; r++)
        for (j = pl->seq_off[r]; j < pl->seq_off[r + 1] && j - pl->seq_off[r] < stride; j++) {
            int v = pl->seq[j], w;
            size_t k = (size_t)r * (size_t)stride + (size_t)(j - pl->seq_off[r]);
            const cc_collective* c = &pl->op[v].coll;
            const char* nm = cc__name(pl->g, v);
            uint64_t a = CONCERTO__FNV_START, b = CONCERTO__FNV_START;
            a = cc__fnv(a, nm, strlen(nm) + 1);
            a = cc__fnv_int(a, c->kind);
            if (c->kind != CC_COLL_NONE) {
                a = cc__fnv_int(a, c->dtype); a = cc__fnv_int(a, c->reduce);
                a = cc__fnv_int(a, (int64_t)c->n_elems); a = cc__fnv_int(a, c->peer);
            }
            for (w = 0; w < pl->op[v].n_waits; w++) {
                int u = pl->waits[pl->op[v].wait_off + w];
                b = cc__fnv_int(b, pl->op[u].stream); b = cc__fnv_int(b, pl->op[u].pos);
            }
            h[2 * k] = a | 1;   /* never 0: 0 marks a position past a stream's end */
            h[2 * k + 1] = b;
        }
}

/* After hashes differed (rank other's first): where. Every member calls it
   (they all saw the same hashes), exchanging each plan's sizes and then
   its entries (cc__plan_entry_hashes), and records CC_ERR_PLAN_MISMATCH
   naming this rank's op at the first place (stream by stream, position by
   position) where some member's differs. */
static cc_result cc__exec_mismatch(cc_exec* x, cc_comm* comm, int other, const uint64_t* hashes) {
    const cc_plan* pl = x->plan;
    const char* what = "cc_exec_agree: locating the difference between the ranks' plans";
    uint64_t sizes[3], *all_sizes = NULL, *mine = NULL, *all = NULL;
    int i, r, n = cc_comm_size(comm), stride = 0, S = pl->n_streams, at = -1, at_rank = -1, waits_only = 0;
    size_t len, j;
    cc_result rc;
    sizes[0] = (uint64_t)pl->n_ops;
    sizes[1] = (uint64_t)S;
    sizes[2] = 0;
    for (r = 0; r < S; r++)
        if ((uint64_t)(pl->seq_off[r + 1] - pl->seq_off[r]) > sizes[2]) sizes[2] = (uint64_t)(pl->seq_off[r + 1] - pl->seq_off[r]);
    if ((rc = cc__exec_allgather_u64s(x, comm, sizes, 3, &all_sizes, what)) != CC_OK) goto plain;
    for (i = 0; i < n; i++) {
        if (all_sizes[3 * i + 2] > (uint64_t)stride) stride = (int)all_sizes[3 * i + 2];
        if (all_sizes[3 * i + 1] != sizes[1]) {
            rc = CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plan of rank %d of the group has %d streams, "
                                "this rank's %d: ranks would issue different collectives", i, (int)all_sizes[3 * i + 1], S);
            cc__free(x->ctx, all_sizes);
            return rc;
        }
    }
    len = (size_t)S * (size_t)stride;
    mine = (uint64_t*)cc__alloc(x->ctx, 2 * (len + 1) * sizeof(uint64_t));
    if (!mine) { rc = CC_ERR_OUT_OF_MEMORY; goto plain; }
    cc__plan_entry_hashes(pl, mine, stride);
    if ((rc = cc__exec_allgather_u64s(x, comm, mine, 2 * len, &all, what)) != CC_OK) goto plain;
    for (j = 0; j < len && at < 0; j++)
        for (i = 0; i < n; i++) {
            const uint64_t* e = all + 2 * ((size_t)i * len + j);
            if (e[0] != mine[2 * j] || e[1] != mine[2 * j + 1]) { at = (int)j; at_rank = i; waits_only = e[0] == mine[2 * j]; break; }
        }
    if (at >= 0) {
        int sr = at / stride, pos = at % stride;
        uint64_t theirs = all[2 * ((size_t)at_rank * len + (size_t)at)];
        if (mine[2 * (size_t)at] == 0)
            rc = CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plan of rank %d of the group has more ops on "
                                "stream %d than this rank's %d (its %d ops, this rank's %d): ranks would issue different "
                                "collectives", at_rank, sr, pos, (int)all_sizes[3 * at_rank], pl->n_ops);
        else {
            int v = pl->seq[pl->seq_off[sr] + pos];
            if (theirs == 0)
                rc = CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plan of rank %d of the group has no op where "
                                    "this rank's has op '%s' (position %d of stream %d; its %d ops, this rank's %d): ranks would "
                                    "issue different collectives", at_rank, cc__name(pl->g, v), pos, sr,
                                    (int)all_sizes[3 * at_rank], pl->n_ops);
            else
                rc = CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plans first differ at op '%s' (%s, position %d "
                                    "of stream %d): rank %d of the group has %s there: ranks would issue different collectives",
                                    cc__name(pl->g, v), pl->op[v].coll.kind != CC_COLL_NONE ? "a collective" : "compute", pos, sr,
                                    at_rank, waits_only ? "the same op with other cross-stream waits" : "another op or collective");
        }
    } else {
        rc = CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plan of rank %d of the group differs from this "
                            "rank's in its arena (every op, collective and wait agree; hash %016llx vs %016llx)", other,
                            (unsigned long long)hashes[other], (unsigned long long)pl->hash);
    }
    cc__free(x->ctx, all_sizes); cc__free(x->ctx, mine); cc__free(x->ctx, all);
    return rc;
plain:
    cc__free(x->ctx, all_sizes); cc__free(x->ctx, mine); cc__free(x->ctx, all);
    return CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_agree: the plan of rank %d of the group differs from this "
                          "rank's (hash %016llx vs %016llx): ranks would issue different collectives (%s)", other,
                          (unsigned long long)hashes[other], (unsigned long long)pl->hash,
                          rc == CC_ERR_OUT_OF_MEMORY ? "out of memory to locate the difference" : "the difference could not be located");
}

CONCERTO_API cc_result cc_exec_agree(cc_exec* x, cc_comm* comm) {
    uint64_t* all;
    int i, n;
    cc_result rc;
    if (!x) return CC_ERR_INVALID_ARG;
    if (!comm) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_agree: comm is NULL");
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_agree: wait for the step first");
    n = cc_comm_size(comm);
    if ((rc = cc__exec_allgather_u64(x, comm, x->plan->hash, &all, "cc_exec_agree")) != CC_OK) return rc;
    for (i = 0; i < n; i++)
        if (all[i] != all[0]) {   /* every member sees the same hashes: all of them locate the difference */
            int other = 0;
            while (all[other] == x->plan->hash) other++;
            rc = cc__exec_mismatch(x, comm, other, all);
            break;
        }
    cc__free(x->ctx, all);
    if (rc == CC_OK) x->agreed = 1;
    return rc;
}

CONCERTO_API cc_result cc_exec_agree_cap(cc_exec* x, cc_comm* comm, uint64_t* cap_bytes) {
    uint64_t *all, best = 0;
    int i, n;
    cc_result rc;
    if (!x) return CC_ERR_INVALID_ARG;
    if (!comm || !cap_bytes) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_agree_cap: comm or cap_bytes is NULL");
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_agree_cap: wait for the step first");
    n = cc_comm_size(comm);
    if ((rc = cc__exec_allgather_u64(x, comm, *cap_bytes, &all, "cc_exec_agree_cap")) != CC_OK) return rc;
    for (i = 0; i < n; i++)
        if (all[i] && (!best || all[i] < best)) best = all[i];
    *cap_bytes = best;
    cc__free(x->ctx, all);
    return CC_OK;
}

/* >>profile
   Three ways to measure a plan's ops on its backend (declared with
   cc_exec_profile_ops), and why each measures what it does.

   Ops alone (cc_exec_profile_ops): every op on its own, repeats times, in
   plan order (so ranks issue their collectives alike); the median of each
   becomes its duration, after the members of comm agreed on the maximum.
   The executor's own costs are measured on the backend too (an op's
   launch, a blocking cross-stream wait, each communicator's start-up: a
   one-element all-reduce) and agreed the same way.

   Chunks (cc_exec_profile_ops too): decomposition runs an op as k smaller
   kernels, and a smaller kernel is not simply a k-th of the time (a launch,
   a kernel too small to fill the device, a tile left half empty). So every
   compute op that decomposes is also run as one chunk, repeats times, right
   after the ops: chunk 0 of k along the first axis its rule allows (rows
   where it allows them) or of its chunk_fn, k the largest of 8, 4, 2 that
   the op takes (a rule: k at most the axis's length, the chunks passing
   cc_op_split_check; a chunk_fn: k dividing every split_rows of its
   regions). With the whole op's median t(1) and the chunk's t(n) at its
   share n, both agreed as the maximum, the line through them gives
   a = (t(n) - n t(1)) / (1 - n), within 0..t(1) (a chunk cheaper than its
   share: a = 0, the share model; dearer than the op: a = t(1), b = 0), and
   b = t(1) - a. Both are timed as an op is, between timestamps around its
   work, so a is the chunk's own fixed cost: the launch before each op is
   launch_us, added apart. Two sizes, and these two: the whole op is
   measured anyway, so the fit costs one chunk run (at most half the op);
   the line through the op and its eighth covers the halves and quarters
   decomposition tries by default, and of the chunk sizes an op takes the
   smallest puts the least noise into a (its variance (k^2 + 1) / (k - 1)^2
   times a sample's: 1.3 for k = 8, 1.9 for k = 4). Chunk 0 is the one chunk
   that overwrites a partial-sum output rather than adding into it, and it
   writes within the op's own regions: profiling puts them back with the
   rest, and the check that refuses an op writing a bound buffer not bound
   covers its chunk. An op without a chunk measured keeps the chunk cost it
   had.

   Ops in place, over whole steps (cc_exec_profile_steps, or the caller's
   loop: cc_exec_profile_loop_step and cc_exec_profile_loop_apply). Alone,
   an op runs with nothing beside it; in the step it shares what the step
   shares: a compute op the cores with the other ranks' threads (ranks of
   one process) or the SMs with a collective beside it, a collective waits
   for its last member to arrive, a thread woken for the next op waits for
   a core. So the durations are the op's start-to-end times in the step
   (cc_exec_timeline), the launch and wait costs the gaps the timelines
   show (an op's start after its stream let it go; after the other-stream
   dependency it waited for), and the overlap slowdowns are none (the
   durations hold them). Means, not medians: a step's time is a sum of its
   ops' and gaps' times, stalls included. The members agree on the mean,
   not the maximum: in a step the members of a collective end it together,
   each after waiting for the last, so the mean of their times runs from
   their mean arrival to that end, which is where a prediction from the
   mean durations of the ops before it puts them; the maximum would count
   the wait of the earliest member on top of the latest's arrival. A
   prediction of this plan from these durations is made under the
   conditions it was measured in; another order of the same graph shares
   other things (profile it in its own steps). Steps run back to back by
   the library are not the steps of a training loop, which does host work
   between them (the next batch, the loss read back, a log line), and the
   ranks' starts drift apart differently there: a prediction for that loop
   comes true only if profiled in it, hence the loop's own two calls.

   The result (cc_exec_query_profile): each step recorded is simulated in
   the plan's order from its own op times and each op's own launch or wait
   gap, so that it ends where it was measured to. Steps vary, and a step
   ends with whichever path was slowest in it, so these makespans exceed
   cc_simulate's makespan from the mean durations and costs (a makespan is
   a maximum over paths, and the mean of a maximum is at least the maximum
   of the means; a long gap, a thread woken on a busy core, counts where it
   fell, on its path): the more paths run side by side, the more (an
   overlapped plan more than program order). Likewise the exposed
   communication of each step, which a timeline from the mean durations
   puts where no step had it. */

static int cc__dbl_cmp(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* samples[v * repeats + rep]: op v alone, its duration in us. */
static cc_result cc__profile_samples(cc_exec* x, int repeats, double* samples) {
    const cc_plan* pl = x->plan;
    const cc_backend_fns* f = x->be.fns;
    int i, rep;
    for (rep = 0; rep < repeats; rep++)
        for (i = 0; i < pl->n_ops; i++) {
            int v = pl->issue[i];
            double h0 = f->now_us ? f->now_us(x->be.self) : 0, h1;
            cc_result rc = cc__exec_issue(x, v, 0);
            if (rc == CC_OK) rc = f->synchronize(x->be.self);
            if (rc != CC_OK) {
                char msg[CONCERTO__MSG_MAX];
                cc__copy_msg(msg, sizeof msg, cc_last_error(x->ctx));
                return CONCERTO__FAIL(x->ctx, rc, "cc_exec_profile_ops: op '%s': %s", cc__name(pl->g, v), msg);
            }
            h1 = f->now_us ? f->now_us(x->be.self) : 0;
            samples[(size_t)v * repeats + rep] = f->timestamp ? x->t[2 * v + 1] - x->t[2 * v] : h1 - h0;
        }
    return CC_OK;
}

/* The chunk that profiling measures of op v of g (>>profile), if v is a
   compute op that decomposes: chunk 0 of k along the first axis its rule
   allows (rows where it allows them), k the largest of 8, 4, 2 that the
   op takes (a rule: k at most the axis's extent, and cc_op_split_check
   passes, quietly; a chunk_fn: k divides every split_rows of its regions,
   as decomposition needs). Returns 1 with rec and *share (the chunk's part
   of the axis), else 0. */
static int cc__profile_chunk_of(cc_graph* g, int v, cc__chunk_rec* rec, double* share) {
    int k, a;
    memset(rec, 0, sizeof *rec);
    if (g->coll_of[v] >= 0 || !g->fn[v]) return 0;
    rec->user_data = g->user_data[v];
    if (g->split_of[v] >= 0 && g->splits[g->split_of[v]].part_fn) {
        const cc__split_rec* sr = &g->splits[g->split_of[v]];
        unsigned axes = cc__split_axes(&sr->s);
        uint64_t e;
        for (a = 0; a < CC_AXIS_COUNT && !(axes >> a & 1u); a++) {}
        if (a == CC_AXIS_COUNT) return 0;
        e = sr->s.extent[a];
        for (k = 8; k >= 2; k /= 2) {
            cc_context* ctx = g->ctx;
            char saved_msg[CONCERTO__MSG_MAX];
            cc_logger saved_logger = ctx->logger;
            cc_result saved_result = ctx->last_result, rc;
            if ((uint64_t)k > e) continue;
            memcpy(saved_msg, ctx->last_error, sizeof saved_msg);
            ctx->logger.log_fn = NULL;
            rc = cc_op_split_check(g, cc_graph_op(g, v), (cc_axis)a, k, NULL);
            ctx->logger = saved_logger;
            ctx->last_result = saved_result;
            memcpy(ctx->last_error, saved_msg, sizeof saved_msg);
            if (rc != CC_OK) continue;
            rec->part = sr->part_fn;
            rec->sc.axis = (cc_axis)a;
            rec->sc.index = 0;
            rec->sc.count = k;
            rec->sc.begin = 0;
            rec->sc.end = e / (uint64_t)k;
            *share = (double)rec->sc.end / (double)e;
            return 1;
        }
        return 0;
    }
    if (!g->chunk_fn[v]) return 0;
    for (k = 8; k >= 2; k /= 2) {
        size_t p, end;
        int ok = 1;
        for (p = cc__op_accesses(g, v, &end); p < end; p++) {
            const cc__access* x = &g->acc[p];
            if (x->split_rows && (x->split_rows % (uint64_t)k || (x->rows <= 1 && x->n_bytes % x->split_rows))) ok = 0;
        }
        if (!ok) continue;
        rec->fn = g->chunk_fn[v];
        rec->chunk = 0;
        rec->n_chunks = k;
        *share = 1.0 / k;
        return 1;
    }
    return 0;
}

/* cs[v * repeats + rep]: chunk rec[v] of op v alone (ops with has[v]), on
   the op's stream, timed as cc__profile_samples times the op. The chunk
   reads and writes within the op's regions, which profiling puts back. */
static cc_result cc__profile_chunk_samples(cc_exec* x, int repeats, const cc__chunk_rec* rec, const unsigned char* has, double* cs) {
    const cc_plan* pl = x->plan;
    const cc_backend_fns* f = x->be.fns;
    void* self = x->be.self;
    int i, rep;
    for (rep = 0; rep < repeats; rep++)
        for (i = 0; i < pl->n_ops; i++) {
            int v = pl->issue[i];
            void* st = x->streams[pl->op[v].stream];
            double h0, h1, ts[2] = { 0, 0 };
            cc_result rc = CC_OK;
            if (!has[v]) continue;
            h0 = f->now_us ? f->now_us(self) : 0;
            if (f->timestamp) rc = f->timestamp(self, st, &ts[0]);
            if (rc == CC_OK) rc = f->launch(self, st, cc__chunk_trampoline, (void*)&rec[v]);
            if (rc == CC_OK && f->timestamp) rc = f->timestamp(self, st, &ts[1]);
            if (rc == CC_OK) rc = f->synchronize(self);
            else (void)f->synchronize(self);
            if (rc != CC_OK) {
                char msg[CONCERTO__MSG_MAX];
                cc__copy_msg(msg, sizeof msg, cc_last_error(x->ctx));
                return CONCERTO__FAIL(x->ctx, rc, "cc_exec_profile_ops: op '%s', chunk 0 of %d: %s", cc__name(pl->g, v),
                                      rec[v].part ? rec[v].sc.count : rec[v].n_chunks, msg);
            }
            h1 = f->now_us ? f->now_us(self) : 0;
            cs[(size_t)v * repeats + rep] = f->timestamp ? ts[1] - ts[0] : h1 - h0;
        }
    return CC_OK;
}

static void cc__profile_empty(void* stream, void* user) { (void)stream; (void)user; }
static void cc__profile_nap(void* stream, void* user) { (void)stream; cc__sleep_us(*(const double*)user); }

static double cc__median_of(double* v, int n) {
    qsort(v, (size_t)n, sizeof(double), cc__dbl_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The executor's costs on this backend (cc_exec_costs), medians of
   `repeats` (at least 5) measurements with the executor's streams:
   launch: from a timestamp to the next on stream 0 with an empty op
   between them; wait (two streams or more, with events): stream 1 waits
   for an event that stream 0 records after a nap of 1 ms, from the
   timestamp just before the record to the one just after the wait. On a
   backend whose op functions run at enqueue (the CUDA backend), the nap
   delays the host, not the stream: the wait then measures a
   cudaStreamWaitEvent on an event already complete. */
/* A collective's fixed cost on each communicator of the plan, in plan
   order of first use (the same on every rank): a one-element float32
   all-reduce on the stream of the communicator's first op, between two
   timestamps, median of n. comms[]/us[]: room for one per op of the plan. */
static cc_result cc__profile_startups(cc_exec* x, int n, const cc_comm** comms, double* us, int* n_comms, double* v) {
    const cc_backend_fns* f = x->be.fns;
    const cc_plan* pl = x->plan;
    void* self = x->be.self;
    int i, c, rep;
    cc_result rc = CC_OK;
    *n_comms = 0;
    if (!f->collective || !f->timestamp) return CC_OK;
    for (i = 0; i < pl->n_ops && rc == CC_OK; i++) {
        const cc__plan_op* po = &pl->op[pl->issue[i]];
        float host[2] = { 0, 0 };
        void* dev = NULL;
        cc_collective d;
        double ts[2];
        if (po->coll.kind == CC_COLL_NONE || !po->coll.comm || !cc__exec_serves(f, po->coll.comm)) continue;
        for (c = 0; c < *n_comms; c++) if (comms[c] == po->coll.comm) break;
        if (c < *n_comms) continue;
        memset(&d, 0, sizeof d);
        d.kind = CC_COLL_ALL_REDUCE; d.dtype = CC_DTYPE_FLOAT32; d.reduce = CC_REDUCE_SUM; d.n_elems = 1;
        d.comm = po->coll.comm; d.send_buf = host; d.recv_buf = host;
        if (f->mem_alloc) {
            if ((rc = f->mem_alloc(self, sizeof host, &dev)) != CC_OK) break;
            d.send_buf = dev; d.recv_buf = dev;
        }
        for (rep = 0; rep < n && rc == CC_OK; rep++) {
            rc = f->timestamp(self, x->streams[po->stream], &ts[0]);
            if (rc == CC_OK) rc = f->collective(self, x->streams[po->stream], &d);
            if (rc == CC_OK) rc = f->timestamp(self, x->streams[po->stream], &ts[1]);
            if (rc == CC_OK) rc = f->synchronize(self);
            else (void)f->synchronize(self);
            v[rep] = ts[1] - ts[0];
        }
        if (dev) f->mem_free(self, dev);
        if (rc == CC_OK) {
            comms[*n_comms] = po->coll.comm;
            us[(*n_comms)++] = cc__median_of(v, n) > 0 ? cc__median_of(v, n) : 0;
        }
    }
    return rc;
}

static cc_result cc__profile_costs(cc_exec* x, int repeats, cc_exec_costs* out, const cc_comm** comms, double* startups,
                                   int* n_comms) {
    const cc_backend_fns* f = x->be.fns;
    void* self = x->be.self;
    double* v = NULL;
    double ts[3], nap_us = 1000;
    void* ev = NULL;
    int rep, n = repeats < 5 ? 5 : repeats;
    cc_result rc = CC_OK;
    memset(out, 0, sizeof *out);
    *n_comms = 0;
    if (!f->timestamp) return CC_OK;
    if (!(v = (double*)cc__alloc(x->ctx, 2 * (size_t)n * sizeof(double)))) return CC_ERR_OUT_OF_MEMORY;
    for (rep = 0; rep < n && rc == CC_OK; rep++) {
        rc = f->timestamp(self, x->streams[0], &ts[0]);
        if (rc == CC_OK) rc = f->launch(self, x->streams[0], cc__profile_empty, NULL);
        if (rc == CC_OK) rc = f->timestamp(self, x->streams[0], &ts[1]);
        if (rc == CC_OK) rc = f->synchronize(self);
        v[rep] = ts[1] - ts[0];
    }
    if (rc == CC_OK) out->launch_us = cc__median_of(v, n) > 0 ? cc__median_of(v, n) : 0;
    if (rc == CC_OK && x->plan->n_streams >= 2 && x->has_events) {
        rc = f->event_create(self, &ev);
        for (rep = 0; rep < n && rc == CC_OK; rep++) {
            rc = f->launch(self, x->streams[0], cc__profile_nap, &nap_us);
            if (rc == CC_OK) rc = f->timestamp(self, x->streams[0], &ts[0]);
            if (rc == CC_OK) rc = f->event_record(self, ev, x->streams[0]);
            if (rc == CC_OK) rc = f->stream_wait_event(self, x->streams[1], ev);
            if (rc == CC_OK) rc = f->timestamp(self, x->streams[1], &ts[1]);
            if (rc == CC_OK) rc = f->synchronize(self);
            v[n + rep] = ts[1] - ts[0];
        }
        if (rc == CC_OK) out->wait_us = cc__median_of(v + n, n) > 0 ? cc__median_of(v + n, n) : 0;
        if (ev) f->event_destroy(self, ev);
    }
    if (rc == CC_OK) rc = cc__profile_startups(x, n, comms, startups, n_comms, v);
    cc__free(x->ctx, v);
    if (rc != CC_OK) {
        char msg[CONCERTO__MSG_MAX];
        cc__copy_msg(msg, sizeof msg, cc_last_error(x->ctx));
        return CONCERTO__FAIL(x->ctx, rc, "cc_exec_profile_ops: measuring the executor's costs on backend '%s': %s", x->be_name, msg);
    }
    return CC_OK;
}

/* 1 if ops a and b of g may not run at the same time: an explicit edge
   between them, or regions of one buffer that overlap where either writes. */
static int cc__ops_conflict(const cc_graph* g, int a, int b) {
    size_t i, j;
    for (i = 0; i < g->n_e; i++)
        if ((g->e_from[i] == a && g->e_to[i] == b) || (g->e_from[i] == b && g->e_to[i] == a)) return 1;
    for (i = 0; i < g->n_acc; i++) {
        const cc__access* p = &g->acc[i];
        if ((int)p->op != a) continue;
        for (j = 0; j < g->n_acc; j++) {
            const cc__access* q = &g->acc[j];
            if ((int)q->op == b && q->buffer == p->buffer && (p->is_write || q->is_write) && cc__acc_overlap(p, q))
                return 1;
        }
    }
    return 0;
}

/* cc__ops_conflict, or ops a and b touch bytes of plan pl's arena that
   two transient buffers share (one of them writing): buffers whose
   lifetimes do not overlap may take the same bytes. */
static int cc__plan_ops_conflict(const cc_plan* pl, int a, int b) {
    const cc_graph* g = pl->g;
    size_t i, j;
    int m, n;
    if (cc__ops_conflict(g, a, b)) return 1;
    for (i = 0; i < g->n_acc; i++) {
        const cc__access* p = &g->acc[i];
        if ((int)p->op != a) continue;
        for (m = 0; m < g->n_mb && g->mb_buf[m] != (int)p->buffer; m++) {}
        if (m == g->n_mb) continue;
        for (j = 0; j < g->n_acc; j++) {
            const cc__access* q = &g->acc[j];
            if ((int)q->op != b || !(p->is_write || q->is_write)) continue;
            for (n = 0; n < g->n_mb && g->mb_buf[n] != (int)q->buffer; n++) {}
            if (n < g->n_mb && cc__acc_overlap_at(p, pl->mb_off[m], q, pl->mb_off[n]))
                return 1;
        }
    }
    return 0;
}

/* The overlap slowdowns (cc_exec_costs): the longest compute op and the
   longest collective of the plan that touch no common memory (nor arena
   bytes that two transient buffers share) and are not
   ordered by an explicit edge (by the agreed durations med, so every rank
   picks the same two) issued together on their streams, max(repeats, 3)
   times; each one's median time over its time alone, within 1..10. None
   such: no slowdown is measured (1). */
static cc_result cc__profile_overlap(cc_exec* x, int repeats, const double* med, cc_exec_costs* costs) {
    const cc_plan* pl = x->plan;
    const cc_backend_fns* f = x->be.fns;
    int i, j, vc = -1, vm = -1, rep, n = repeats < 3 ? 3 : repeats;
    double* t;
    cc_result rc = CC_OK;
    costs->compute_overlap = costs->comm_overlap = 1;
    if (!f->timestamp) return CC_OK;
    for (i = 0; i < pl->n_ops; i++) {   /* the pair with the longest shorter member */
        if (pl->op[i].coll.kind != CC_COLL_NONE || !pl->op[i].fn) continue;
        for (j = 0; j < pl->n_ops; j++) {
            double best = vc < 0 ? -1 : (med[vc] < med[vm] ? med[vc] : med[vm]), here = med[i] < med[j] ? med[i] : med[j];
            if (pl->op[j].coll.kind == CC_COLL_NONE || pl->op[j].stream == pl->op[i].stream || here <= best) continue;
            if (cc__plan_ops_conflict(pl, i, j)) continue;
            vc = i;
            vm = j;
        }
    }
    if (vc < 0 || !(med[vc] > 0) || !(med[vm] > 0)) return CC_OK;
    if (!(t = (double*)cc__alloc(x->ctx, 2 * (size_t)n * sizeof(double)))) return CC_ERR_OUT_OF_MEMORY;
    for (rep = 0; rep < n && rc == CC_OK; rep++) {
        rc = cc__exec_issue(x, vc, 0);
        if (rc == CC_OK) rc = cc__exec_issue(x, vm, 0);
        if (rc == CC_OK) rc = f->synchronize(x->be.self);
        else (void)f->synchronize(x->be.self);
        t[rep] = x->t[2 * vc + 1] - x->t[2 * vc];
        t[n + rep] = x->t[2 * vm + 1] - x->t[2 * vm];
    }
    if (rc == CC_OK) {
        double a = cc__median_of(t, n) / med[vc], c = cc__median_of(t + n, n) / med[vm];
        costs->compute_overlap = a > 1 ? (a < 10 ? a : 10) : 1;
        costs->comm_overlap = c > 1 ? (c < 10 ? c : 10) : 1;
    }
    cc__free(x->ctx, t);
    if (rc != CC_OK) {
        char msg[CONCERTO__MSG_MAX];
        cc__copy_msg(msg, sizeof msg, cc_last_error(x->ctx));
        return CONCERTO__FAIL(x->ctx, rc, "cc_exec_profile_ops: measuring ops '%s' and '%s' together: %s", cc__name(pl->g, vc),
                              cc__name(pl->g, vm), msg);
    }
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_profile_ops(cc_exec* x, int repeats, cc_comm* comm) {
    const cc_plan* pl;
    double* samples = NULL;
    double* med = NULL;
    cc_exec_costs costs;
    const cc_comm** comms = NULL;   /* [n_ops]: each communicator of the plan, in plan order of first use */
    double* startups = NULL;        /* [n_ops]: its start-up cost */
    cc__chunk_rec* crec = NULL;     /* [n_ops]: the chunk measured of each op that decomposes (chas) */
    unsigned char* chas = NULL;
    double* cshare = NULL;          /* [n_ops]: its share of the axis */
    double* csamples = NULL;
    int n_comms = 0, k;
    int i;
    cc__exec_snap kept;
    cc_result rc = CC_OK;
    memset(&kept, 0, sizeof kept);
    if (!x) return CC_ERR_INVALID_ARG;
    pl = x->plan;
    if (repeats < 1 || repeats > 1000) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_ops: repeats must be 1..1000, got %d", repeats);
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_ops: wait for the step first");
    if (x->has_coll && !x->agreed)
        return CONCERTO__FAIL(x->ctx, CC_ERR_PLAN_MISMATCH, "cc_exec_profile_ops: the plan has collectives: call cc_exec_agree first");
    if (!x->be.fns->timestamp && !x->be.fns->now_us)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "cc_exec_profile_ops: backend '%s' has neither timestamps nor a clock",
                              x->be_name);
    if ((rc = cc__exec_profile_guard(x, "cc_exec_profile_ops")) != CC_OK) return rc;
    if ((rc = cc__exec_snap_take(x, &kept, "cc_exec_profile_ops")) != CC_OK) return rc;
    samples = (double*)cc__alloc(x->ctx, (size_t)pl->n_ops * (size_t)repeats * sizeof(double) + 1);
    med = (double*)cc__alloc(x->ctx, (3 * (size_t)pl->n_ops + 2) * sizeof(double));
    comms = (const cc_comm**)cc__alloc(x->ctx, ((size_t)pl->n_ops + 1) * sizeof *comms);
    startups = (double*)cc__alloc(x->ctx, ((size_t)pl->n_ops + 1) * sizeof(double));
    crec = (cc__chunk_rec*)cc__alloc(x->ctx, ((size_t)pl->n_ops + 1) * sizeof *crec);
    chas = (unsigned char*)cc__calloc(x->ctx, (size_t)pl->n_ops + 1, 1);
    cshare = (double*)cc__alloc(x->ctx, ((size_t)pl->n_ops + 1) * sizeof(double));
    csamples = (double*)cc__calloc(x->ctx, (size_t)pl->n_ops * (size_t)repeats + 1, sizeof(double));
    if (!samples || !med || !comms || !startups || !crec || !chas || !cshare || !csamples) {
        rc = CONCERTO__FAIL(x->ctx, CC_ERR_OUT_OF_MEMORY, "cc_exec_profile_ops: out of memory");
        goto done;
    }
    for (i = 0; i < pl->n_ops; i++) chas[i] = (unsigned char)cc__profile_chunk_of(pl->g, i, &crec[i], &cshare[i]);
    if ((rc = cc__profile_samples(x, repeats, samples)) != CC_OK) goto done;
    if ((rc = cc__profile_chunk_samples(x, repeats, crec, chas, csamples)) != CC_OK) goto done;
    if ((rc = cc__profile_costs(x, repeats, &costs, comms, startups, &n_comms)) != CC_OK) goto done;
    for (i = 0; i < pl->n_ops; i++) {
        med[i] = cc__median_of(samples + (size_t)i * repeats, repeats);
        if (med[i] < 0) med[i] = 0;
        med[2 * pl->n_ops + 2 + i] = chas[i] ? cc__median_of(csamples + (size_t)i * repeats, repeats) : 0;
        if (med[2 * pl->n_ops + 2 + i] < 0) med[2 * pl->n_ops + 2 + i] = 0;
    }
    if (comm) {
        cc_collective c;
        memset(&c, 0, sizeof c);
        size_t m = 3 * (size_t)pl->n_ops + 2;   /* the same on every member: their plans agree */
        med[pl->n_ops] = costs.launch_us;
        med[pl->n_ops + 1] = costs.wait_us;
        for (k = 0; k < pl->n_ops; k++) med[pl->n_ops + 2 + k] = k < n_comms ? startups[k] : 0;
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT64; c.reduce = CC_REDUCE_MAX;
        c.n_elems = m; c.comm = comm; c.send_buf = med; c.recv_buf = med;
        if ((rc = cc__exec_collective_now(x, &c, m * sizeof(double), m * sizeof(double), "cc_exec_profile_ops: agreeing on durations")) !=
            CC_OK)
            goto done;
        costs.launch_us = med[pl->n_ops];
        costs.wait_us = med[pl->n_ops + 1];
        for (k = 0; k < n_comms; k++) startups[k] = med[pl->n_ops + 2 + k];
    }
    if ((rc = cc__profile_overlap(x, repeats, med, &costs)) != CC_OK) goto done;
    if (comm && x->has_coll) {   /* the slowdowns agreed: the largest (without collectives there are none) */
        cc_collective c;
        double two[2];
        memset(&c, 0, sizeof c);
        two[0] = costs.compute_overlap;
        two[1] = costs.comm_overlap;
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT64; c.reduce = CC_REDUCE_MAX;
        c.n_elems = 2; c.comm = comm; c.send_buf = two; c.recv_buf = two;
        if ((rc = cc__exec_collective_now(x, &c, sizeof two, sizeof two, "cc_exec_profile_ops: agreeing on the overlap slowdowns")) != CC_OK)
            goto done;
        costs.compute_overlap = two[0];
        costs.comm_overlap = two[1];
    }
    for (i = 0; i < pl->n_ops; i++)
        if ((rc = cc_op_set_duration(pl->g, cc_graph_op(pl->g, i), med[i])) != CC_OK) goto done;
    if (costs.launch_us > 1e6) costs.launch_us = 1e6;
    if (costs.wait_us > 1e6) costs.wait_us = 1e6;
    rc = cc_graph_set_exec_costs(pl->g, &costs);
    for (k = 0; k < n_comms && rc == CC_OK; k++) rc = cc_graph_set_coll_startup(pl->g, comms[k], startups[k] < 1e12 ? startups[k] : 1e12);
    for (i = 0; i < pl->n_ops && rc == CC_OK; i++) {   /* t(n) = a + b n through the op (n = 1) and its chunk */
        double t1 = med[i], tn = med[2 * pl->n_ops + 2 + i], n = cshare[i], a;
        if (!chas[i]) continue;
        a = (tn - n * t1) / (1 - n);
        a = a > 0 ? (a < t1 ? a : t1) : 0;
        if (t1 > 1e12) { a = a / t1 * 1e12; t1 = 1e12; }
        rc = cc_op_set_chunk_cost(pl->g, cc_graph_op(pl->g, i), a, t1 - a);
    }
done:
    if (kept.n > 0) {   /* put back even after a failure: the ops may have run */
        cc_result put = cc__exec_snap_put(x, &kept, "cc_exec_profile_ops");
        if (rc == CC_OK) rc = put;
    }
    cc__exec_snap_free(x, &kept);
    cc__free(x->ctx, samples); cc__free(x->ctx, med);
    cc__free(x->ctx, (void*)comms); cc__free(x->ctx, startups);
    cc__free(x->ctx, crec); cc__free(x->ctx, chas); cc__free(x->ctx, cshare); cc__free(x->ctx, csamples);
    return rc;
}

/* The executor's costs as one step showed them (start, end by op): an op
   whose other-stream dependencies (and ops on no stream) were done before
   its stream let it start shows a launch, start - that time; one that
   waited for them shows a wait, start - when they ended (the stream
   simulation's launch_us and wait_us). Sums and counts go to acc: launch
   gaps, then wait gaps. */
static void cc__profile_gaps(const cc_plan* pl, const double* t, double t0, double* acc, cc__time* launch_of,
                             cc__time* wait_of) {
    const cc_graph* g = pl->g;
    int v, e;
    for (v = 0; v < pl->n_ops; v++) {
        const cc__plan_op* o = &pl->op[v];
        double base = t0, other = t0 - 1, gap;
        if (launch_of) launch_of[v] = wait_of[v] = 0;
        if (o->stream < 0) continue;
        if (o->pos > 0) base = t[2 * pl->seq[pl->seq_off[o->stream] + o->pos - 1] + 1];
        for (e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            int u = g->pred[e];
            if (pl->op[u].stream != o->stream && t[2 * u + 1] > other) other = t[2 * u + 1];
            if (pl->op[u].stream == o->stream && t[2 * u + 1] > base) base = t[2 * u + 1];
        }
        gap = t[2 * v] - (other > base ? other : base);
        if (other > base) { acc[2] += gap; acc[3] += 1; }
        else { acc[0] += gap; acc[1] += 1; }
        if (launch_of) {
            cc__time ticks = (cc__time)llround((gap > 0 ? (gap < 1e12 ? gap : 1e12) : 0) * CONCERTO__TICKS_PER_US);
            if (other > base) wait_of[v] = ticks; else launch_of[v] = ticks;
        }
    }
}

CONCERTO_API cc_result cc_exec_profile_loop_step(cc_exec* x) {
    const cc_plan* pl;
    double gaps[4], exposed = 0;
    cc__prob p;
    cc__time mk;
    cc_result rc;
    int i, blocked[2];
    if (!x) return CC_ERR_INVALID_ARG;
    pl = x->plan;
    if (!x->be.fns->timestamp)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "cc_exec_profile_loop_step: backend '%s' has no timestamps", x->be_name);
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_loop_step: wait for the step first");
    if (!x->ran)
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_loop_step: no step has ended since the last one added "
                              "(run one with cc_exec_step, or cc_exec_launch and cc_exec_wait)");
    if (x->prof_steps >= CONCERTO__PROFILE_MAX_STEPS)
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_loop_step: %d steps added already, the most it takes: "
                              "apply them first", x->prof_steps);
    for (i = 0; i < pl->n_ops; i++)   /* checked first: a step that cannot be added adds nothing */
        if (!(x->t[2 * i + 1] - x->t[2 * i] == x->t[2 * i + 1] - x->t[2 * i]))
            return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "cc_exec_profile_loop_step: op '%s' has no time in the step on backend "
                                  "'%s' (a replayed graph times only the whole step)", cc__name(pl->g, i), x->be_name);
    for (i = 0; i < pl->n_ops; i++) {
        x->prof_se[i] = x->t[2 * i];
        x->prof_se[pl->n_ops + i] = x->t[2 * i + 1];
    }
    if ((rc = cc_exposed_comm_us(x->ctx, pl->g, x->prof_se, x->prof_se + pl->n_ops, &exposed)) != CC_OK) return rc;
    memset(gaps, 0, sizeof gaps);
    cc__profile_gaps(pl, x->t, x->t0, gaps, x->prof_dur + 2 * (size_t)pl->n_ops, x->prof_dur + 3 * (size_t)pl->n_ops);
    for (i = 0; i < pl->n_ops; i++) {
        double d = x->t[2 * i + 1] - x->t[2 * i];
        x->prof_dur[i] = (cc__time)llround((d > 0 ? (d < 1e12 ? d : 1e12) : 0) * CONCERTO__TICKS_PER_US);
    }
    /* the step again, simulated in the plan's order from its own op times
       and each op's own launch or wait gap: where steps vary, the mean of
       these is what a step costs, and it exceeds a step simulated from the
       mean times (each step ends with its own slowest path); and the gaps
       fall where they fell (a thread woken on a busy core waits longer
       than the mean gap, on whichever path it is) */
    cc__prob_of_graph(pl->g, &p);
    p.dur = x->prof_dur;
    p.grain = 1;
    p.launch_of = x->prof_dur + 2 * (size_t)pl->n_ops;
    p.wait_of = x->prof_dur + 3 * (size_t)pl->n_ops;
    p.slow[0] = p.slow[1] = 1;
    mk = cc__stream_sim(x->ctx, &p, pl->issue, x->prof_dur + pl->n_ops, blocked);
    if (mk < 0)
        return CONCERTO__FAIL(x->ctx, mk == -2 ? CC_ERR_OUT_OF_MEMORY : CC_ERR_DEADLOCK, "cc_exec_profile_loop_step: simulating the step "
                              "from its times: %s", mk == -2 ? "out of memory" : "the plan's order contradicts its dependencies");
    for (i = 0; i < pl->n_ops; i++) {   /* nothing fails from here: the step is added whole */
        double d = x->t[2 * i + 1] - x->t[2 * i];
        x->prof[i] += d > 0 ? d : 0;
    }
    for (i = 0; i < 4; i++) x->prof[pl->n_ops + i] += gaps[i];
    x->prof_mk[x->prof_steps] = (double)mk / CONCERTO__TICKS_PER_US;
    x->prof_mk[CONCERTO__PROFILE_MAX_STEPS + x->prof_steps] = exposed;
    x->prof_steps++;
    x->ran = 0;
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_profile_loop_apply(cc_exec* x, cc_comm* comm) {
    const cc_plan* pl;
    const double* acc;
    double* mean;
    cc_exec_costs costs;
    int i, m;
    cc_result rc = CC_OK;
    if (!x) return CC_ERR_INVALID_ARG;
    pl = x->plan;
    if (x->prof_steps < 1)
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_loop_apply: no step added (cc_exec_profile_loop_step after "
                              "each step to profile)");
    m = pl->n_ops + 2 + 2 * x->prof_steps;   /* the means, then each step's simulated makespan, its exposure */
    acc = x->prof + pl->n_ops;
    if (!(mean = (double*)cc__alloc(x->ctx, (size_t)m * sizeof(double))))
        return CONCERTO__FAIL(x->ctx, CC_ERR_OUT_OF_MEMORY, "cc_exec_profile_loop_apply: out of memory");
    memcpy(mean + pl->n_ops + 2, x->prof_mk, (size_t)x->prof_steps * sizeof(double));
    memcpy(mean + pl->n_ops + 2 + x->prof_steps, x->prof_mk + CONCERTO__PROFILE_MAX_STEPS, (size_t)x->prof_steps * sizeof(double));
    /* means: a step's time is a sum of its ops' times and gaps, and a
       stall in one of them is part of what a step costs */
    for (i = 0; i < pl->n_ops; i++) mean[i] = x->prof[i] / x->prof_steps;
    mean[pl->n_ops] = acc[1] > 0 ? acc[0] / acc[1] : 0;
    mean[pl->n_ops + 1] = acc[3] > 0 ? acc[2] / acc[3] : 0;
    if (comm) {
        cc_collective c;
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT64; c.reduce = CC_REDUCE_SUM;
        c.n_elems = (size_t)m; c.comm = comm; c.send_buf = mean; c.recv_buf = mean;
        if ((rc = cc__exec_collective_now(x, &c, (size_t)m * sizeof(double), (size_t)m * sizeof(double),
                                          "cc_exec_profile_loop_apply: agreeing on durations")) != CC_OK)
            goto done;
        for (i = 0; i < m; i++) mean[i] /= cc_comm_size(comm) > 0 ? cc_comm_size(comm) : 1;
    }
    for (i = 0; i < pl->n_ops; i++)
        if (!(mean[i] >= 0 && mean[i] <= 1e12)) {   /* checked before any is set: the graph is changed whole or not at all */
            rc = CONCERTO__FAIL(x->ctx, CC_ERR_BACKEND, "cc_exec_profile_loop_apply: op '%s' has a mean time of %g us on backend '%s'",
                                cc__name(pl->g, i), mean[i], x->be_name);
            goto done;
        }
    for (i = 0; i < pl->n_ops; i++)
        if ((rc = cc_op_set_duration(pl->g, cc_graph_op(pl->g, i), mean[i])) != CC_OK) goto done;
    costs = cc_graph_exec_costs(pl->g);
    costs.launch_us = mean[pl->n_ops] < 0 ? 0 : mean[pl->n_ops] < 1e6 ? mean[pl->n_ops] : 1e6;
    costs.wait_us = mean[pl->n_ops + 1] < 0 ? 0 : mean[pl->n_ops + 1] < 1e6 ? mean[pl->n_ops + 1] : 1e6;
    costs.compute_overlap = costs.comm_overlap = 1;
    if ((rc = cc_graph_set_exec_costs(pl->g, &costs)) != CC_OK) goto done;
    {
        double *mk = mean + pl->n_ops + 2, *ex = mk + x->prof_steps;
        int n = x->prof_steps;
        x->prof_last.steps = n;
        x->prof_last.makespan_mean_us = 0;
        for (i = 0; i < n; i++) x->prof_last.makespan_mean_us += mk[i] / n;
        qsort(mk, (size_t)n, sizeof(double), cc__dbl_cmp);
        qsort(ex, (size_t)n, sizeof(double), cc__dbl_cmp);
        x->prof_last.makespan_median_us = n % 2 ? mk[n / 2] : (mk[n / 2 - 1] + mk[n / 2]) / 2;
        x->prof_last.exposed_median_us = n % 2 ? ex[n / 2] : (ex[n / 2 - 1] + ex[n / 2]) / 2;
    }
    memset(x->prof, 0, ((size_t)pl->n_ops + 4) * sizeof(double));
    x->prof_steps = 0;
done:
    cc__free(x->ctx, mean);
    return rc;
}

CONCERTO_API cc_result cc_exec_query_profile(cc_exec* x, cc_profile_result* out) {
    if (!x) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_query_profile: out is NULL");
    if (x->prof_last.steps < 1)
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_query_profile: no profile of whole steps applied yet "
                              "(cc_exec_profile_steps, or cc_exec_profile_loop_step and cc_exec_profile_loop_apply)");
    *out = x->prof_last;
    return CC_OK;
}

CONCERTO_API cc_result cc_exec_profile_steps(cc_exec* x, int steps, cc_comm* comm) {
    int k;
    cc__exec_snap kept;
    cc_result rc = CC_OK;
    if (!x) return CC_ERR_INVALID_ARG;
    if (steps < 1 || steps > 1000)
        return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_steps: steps must be 1..1000, got %d", steps);
    if (x->launched) return CONCERTO__FAIL(x->ctx, CC_ERR_INVALID_ARG, "cc_exec_profile_steps: wait for the step first");
    if (!x->be.fns->timestamp)
        return CONCERTO__FAIL(x->ctx, CC_ERR_UNSUPPORTED, "cc_exec_profile_steps: backend '%s' has no timestamps", x->be_name);
    if ((rc = cc__exec_profile_guard(x, "cc_exec_profile_steps")) != CC_OK) return rc;
    if ((rc = cc__exec_snap_take(x, &kept, "cc_exec_profile_steps")) != CC_OK) return rc;
    memset(x->prof, 0, ((size_t)x->plan->n_ops + 4) * sizeof(double));   /* its own steps alone */
    x->prof_steps = 0;
    for (k = 0; k < steps && rc == CC_OK; k++)
        if ((rc = cc_exec_step(x)) == CC_OK) rc = cc_exec_profile_loop_step(x);
    if (kept.n > 0) {
        cc_result put = cc__exec_snap_put(x, &kept, "cc_exec_profile_steps");
        if (rc == CC_OK) rc = put;
    }
    cc__exec_snap_free(x, &kept);
    return rc == CC_OK ? cc_exec_profile_loop_apply(x, comm) : rc;
}

/* >>world: ranks as threads in one process, communicators, collectives with
   real data, and the emulation of the alpha-beta link model.

   Layout. A cc_world owns its own context (world-level memory), one cc_rank
   per rank (each with its own context) and every communicator. A
   communicator is a shared group (cc__world_group: mutex, condition variable,
   the rendezvous state) plus one view per member (struct cc_comm, the handle
   a rank gets): views never change after creation, everything that does
   lives in the group under its mutex.

   Group collectives. Member m issuing its s-th collective on the group
   publishes its descriptor and buffers in info[m] and waits. The member that
   arrives last moves all the data itself (outside the mutex, while every
   other member is blocked in the same collective), in rank order, so every
   rank gets bit-identical results; then it marks collective s done and wakes
   the others. A member can only arrive at s+1 once s is done, so one set of
   per-member slots suffices, and the scratch buffer is only ever used by one
   mover at a time.

   Point to point. Per ordered pair (src, dst) of members a channel with one
   posted send and one posted recv; the k-th send pairs with the k-th recv.
   Whoever posts second checks that the two agree and copies.

   Failure. A mismatch, a timeout, data that fails its checksum
   (desc.checksum: checked by the mover, or by the second to post, before
   anything is written) or a failed rank (cc_world_run's abort)
   poisons the group: every waiter wakes, and every later collective on it
   fails at once with a message that names the original failure.

   Lock order: world->mu before group->mu; nothing takes them the other way. */

#define CONCERTO__WORLD_SITE_GROUP (-1)   /* poison_site: a group collective (poison_seq) */

#define CONCERTO__WORLD_SITE_ABORT (-2)   /* poison_site: the world was aborted */

typedef struct cc__world_info {     /* one member's collective as issued */
    cc_coll_kind kind;
    cc_dtype dtype;
    cc_reduce_op reduce;
    size_t n_elems;
    int peer;
    const void* send;
    void* recv;
    uint64_t sum;                   /* desc.checksum: of the bytes contributed, as issued */
} cc__world_info;

typedef struct cc__world_chan {     /* point to point, from member src to member dst */
    uint64_t next_send, next_recv;  /* sequence number of the next send / recv posted */
    uint64_t n_done;                /* transfers complete */
    int send_posted, recv_posted;
    int moving;                     /* both posted, data being copied (outside the lock) */
    cc__world_info send, recv;
    double t_send_s, t_recv_s;      /* when they were posted */
    double deadline_s;              /* emulated link: completion of the last transfer */
} cc__world_chan;

typedef struct cc__world_group {
    cc_world* world;
    int n;
    int* members;                   /* [n] world ranks, in the creator's order */
    int* sorted;                    /* [n] the same, sorted: the creation key */
    int instance;                   /* k-th group created with this member set */
    int is_world;
    const cc_link* link;            /* intra_node if every member is on one node */
    char name[96];                  /* "{0,1,2,3}" */
    struct cc__world_view* views;   /* [n] the per-member handles */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* everything below under mu */
    unsigned char* joined;          /* [n] member created its view */
    unsigned char* abort_hit;       /* [n] member got the abort error */
    uint64_t* issued;               /* [n] group collectives issued by the member */
    uint64_t* waiting_at;           /* [n] 1 + the sequence number it waits in, 0 none */
    cc__world_info* info;           /* [n] */
    uint64_t n_done;                /* group collectives complete */
    int n_arrived, moving;
    double deadline_s;              /* emulated link: completion of the last collective */
    cc__world_chan* chan;           /* [n*n] by src*n + dst, allocated by the first send/recv */
    int poisoned;
    cc_result poison_code;
    int poison_site;                /* CC__WORLD_SITE_*, or the channel index */
    uint64_t poison_seq;
    char poison_msg[CONCERTO__MSG_MAX];
    void* scratch;                  /* used only by the mover of a collective */
    size_t scratch_bytes;
} cc__world_group;

/* A member's handle: the communicator it is given (comm, whose self is the
   view) and where it sits. */
typedef struct cc__world_view {
    cc_comm comm;
    cc__world_group* g;
    int me;                         /* index in the group */
    cc_rank* rank;
} cc__world_view;

struct cc_rank {
    cc_world* world;
    int index;
    cc_context* ctx;
    cc_comm* world_comm;
    pthread_t thread;
    int abort_hit;                  /* under world->mu: cc_comm_create failed because of the abort */
    cc_result result;
    char error[CONCERTO__MSG_MAX];
};

struct cc_world {
    cc_context* ctx;                /* world-level memory and errors of cc_world_* calls */
    cc_world_desc desc;             /* defaults resolved; its links point at the two below */
    cc_link intra_node, inter_node;
    pthread_mutex_t mu;
    cc_rank* ranks;                 /* [n_ranks] */
    cc__world_group* world_group;
    /* under mu */
    cc__world_group** groups;       /* every group but the world's, in creation order */
    size_t n_groups, cap_groups;
    int running;
    int aborted;
    int abort_rank;
    cc_result (*fn)(cc_rank* rank, void* user_data);
    void* user_data;
    char error[CONCERTO__MSG_MAX];
};

/* ---- helpers ------------------------------------------------------------*/

static struct timespec cc__world_timespec(double t_s) {
    struct timespec ts;
    double sec = floor(t_s);
    ts.tv_sec = (time_t)sec;
    ts.tv_nsec = (long)((t_s - sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) { ts.tv_sec++; ts.tv_nsec -= 1000000000L; }
    if (ts.tv_nsec < 0) ts.tv_nsec = 0;
    return ts;
}

/* Sleeps (no spinning) until the monotonic clock reaches t_s. */
static void cc__world_sleep_until(double t_s) {
    struct timespec ts;
    if (t_s <= 0 || cc__now_s() >= t_s) return;
    ts = cc__world_timespec(t_s);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
}

/* Waits on the group's condition variable until woken or until t_s;
   returns 1 if t_s has passed. */
static int cc__world_wait(cc__world_group* g, double t_s) {
    struct timespec ts = cc__world_timespec(t_s);
    int rc = pthread_cond_timedwait(&g->cv, &g->mu, &ts);
    return rc == ETIMEDOUT || cc__now_s() >= t_s;
}

static int cc__world_reduces(cc_coll_kind kind) {
    return kind == CC_COLL_ALL_REDUCE || kind == CC_COLL_REDUCE_SCATTER;
}

/* "all_reduce of 1024 float32 (sum)", "broadcast of 8 int32 from root 1 (rank 3)" */
static void cc__world_describe(char* buf, size_t size, const cc__world_group* g, const cc__world_info* c) {
    cc_collective k;
    memset(&k, 0, sizeof k);
    k.kind = c->kind; k.dtype = c->dtype; k.reduce = c->reduce; k.n_elems = c->n_elems; k.peer = c->peer;
    cc__coll_text(buf, size, &k);
    if (c->kind == CC_COLL_BROADCAST && c->peer >= 0 && c->peer < g->n) cc__append(buf, size, " (rank %d)", g->members[c->peer]);
}

static int cc__world_same(const cc__world_info* a, const cc__world_info* b) {
    if (a->kind != b->kind || a->n_elems != b->n_elems || a->dtype != b->dtype) return 0;
    if (cc__world_reduces(a->kind) && a->reduce != b->reduce) return 0;
    if (a->kind == CC_COLL_BROADCAST && a->peer != b->peer) return 0;
    return 1;
}

static int cc__world_node_of(const cc_world* w, int rank) {
    return w->desc.ranks_per_node > 0 ? rank / w->desc.ranks_per_node : 0;
}

/* ---- reductions (in the element type, int32 wraps around) -----------------*/
static void cc__world_reduce_into(void* acc, const void* in, size_t n, cc_dtype dt, cc_reduce_op op) {
    size_t i;
    int max = op == CC_REDUCE_MAX;
    switch (dt) {
        case CC_DTYPE_FLOAT32: {
            float* a = (float*)acc;
            const float* x = (const float*)in;
            if (max) { for (i = 0; i < n; i++) if (x[i] > a[i]) a[i] = x[i]; }
            else for (i = 0; i < n; i++) a[i] += x[i];
            break;
        }
        case CC_DTYPE_FLOAT64: {
            double* a = (double*)acc;
            const double* x = (const double*)in;
            if (max) { for (i = 0; i < n; i++) if (x[i] > a[i]) a[i] = x[i]; }
            else for (i = 0; i < n; i++) a[i] += x[i];
            break;
        }
        case CC_DTYPE_INT32: {
            int32_t* a = (int32_t*)acc;
            const int32_t* x = (const int32_t*)in;
            if (max) { for (i = 0; i < n; i++) if (x[i] > a[i]) a[i] = x[i]; }
            else for (i = 0; i < n; i++) a[i] = (int32_t)((uint32_t)a[i] + (uint32_t)x[i]);
            break;
        }
        case CC_DTYPE_FLOAT16: case CC_DTYPE_BFLOAT16: {
            /* In float, rounded back after every addition: float's 24 bits are
               enough for that to round as exact arithmetic would. */
            uint16_t* a = (uint16_t*)acc;
            const uint16_t* x = (const uint16_t*)in;
            int bf = dt == CC_DTYPE_BFLOAT16;
            for (i = 0; i < n; i++) {
                float fa = bf ? cc__bf16_to_float(a[i]) : cc__f16_to_float(a[i]);
                float fx = bf ? cc__bf16_to_float(x[i]) : cc__f16_to_float(x[i]);
                if (max) { if (fx > fa) a[i] = x[i]; }
                else a[i] = bf ? cc__float_to_bf16(fa + fx) : cc__float_to_f16(fa + fx);
            }
            break;
        }
        default: break;
    }
}

static void cc__world_divide(void* acc, size_t n, cc_dtype dt, int count) {
    size_t i;
    switch (dt) {
        case CC_DTYPE_FLOAT32: { float* a = (float*)acc; for (i = 0; i < n; i++) a[i] /= (float)count; break; }
        case CC_DTYPE_FLOAT64: { double* a = (double*)acc; for (i = 0; i < n; i++) a[i] /= (double)count; break; }
        case CC_DTYPE_INT32: { int32_t* a = (int32_t*)acc; for (i = 0; i < n; i++) a[i] /= count; break; }
        case CC_DTYPE_FLOAT16: {
            uint16_t* a = (uint16_t*)acc;
            for (i = 0; i < n; i++) a[i] = cc__float_to_f16(cc__f16_to_float(a[i]) / (float)count);
            break;
        }
        case CC_DTYPE_BFLOAT16: {
            uint16_t* a = (uint16_t*)acc;
            for (i = 0; i < n; i++) a[i] = cc__float_to_bf16(cc__bf16_to_float(a[i]) / (float)count);
            break;
        }
        default: break;
    }
}

/* ---- poison -----------------------------------------------------------------
   Under g->mu. The first failure wins; later ones keep the original cause. */
static void cc__world_poison(cc__world_group* g, cc_result code, int site, uint64_t seq, const char* text) {
    if (g->poisoned) return;
    g->poisoned = 1;
    g->poison_code = code;
    g->poison_site = site;
    g->poison_seq = seq;
    cc__fmt(g->poison_msg, sizeof g->poison_msg, "%s", text);
    pthread_cond_broadcast(&g->cv);
}

/* The error of an operation that found (or was woken by) the poison. Under
   g->mu. site/seq: the operation's own; what: its description. */
static cc_result cc__world_poison_error(cc__world_group* g, int me, int site, uint64_t seq, const char* what,
                                        char* msg, size_t msg_size) {
    if (g->poison_site == CONCERTO__WORLD_SITE_ABORT) {
        g->abort_hit[me] = 1;
        cc__fmt(msg, msg_size, "comm %s %s: aborted: %s", g->name, what, g->poison_msg);
    } else if (g->poison_site == site && g->poison_seq == seq) {
        cc__fmt(msg, msg_size, "%s", g->poison_msg);   /* the failure itself */
    } else {
        cc__fmt(msg, msg_size, "comm %s %s: the communicator failed earlier: %s", g->name, what, g->poison_msg);
    }
    return g->poison_code;
}

/* ---- argument checks (no lock needed: views never change) ----------------*/
static int cc__world_overlap(const void* a, const void* b, size_t n_a, size_t n_b) {
    if (!a || !b) return 0;
    return cc__ranges_overlap((uint64_t)(uintptr_t)a, n_a, (uint64_t)(uintptr_t)b, n_b);
}

static cc_result cc__world_check(const cc__world_view* comm, const cc_collective* c, char* msg, size_t msg_size) {
    const cc__world_group* g = comm->g;
    int n = g->n, me_rank = g->members[comm->me];
    const char* kind = cc__coll_name(c->kind);
    size_t es = cc__dtype_size(c->dtype), n_send, n_recv;
    if (c->kind <= CC_COLL_NONE || c->kind > CC_COLL_ALL_TO_ALL) {
        cc__fmt(msg, msg_size, "comm %s: rank %d issued a collective of invalid kind %d", g->name, me_rank, (int)c->kind);
        return CC_ERR_INVALID_ARG;
    }
    if (!es) {
        cc__fmt(msg, msg_size, "comm %s %s: rank %d gave invalid dtype %d", g->name, kind, me_rank, (int)c->dtype);
        return CC_ERR_INVALID_ARG;
    }
    if (cc__world_reduces(c->kind) && (c->reduce < CC_REDUCE_SUM || c->reduce > CC_REDUCE_MAX)) {
        cc__fmt(msg, msg_size, "comm %s %s: rank %d gave invalid reduce op %d", g->name, kind, me_rank, (int)c->reduce);
        return CC_ERR_INVALID_ARG;
    }
    if (c->kind == CC_COLL_BROADCAST || c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) {
        const char* role = c->kind == CC_COLL_BROADCAST ? "root" : c->kind == CC_COLL_SEND ? "destination" : "source";
        if (c->peer < 0 || c->peer >= n) {
            cc__fmt(msg, msg_size, "comm %s %s: rank %d gave %s %d, outside the communicator's %d ranks",
                          g->name, kind, me_rank, role, c->peer, n);
            return CC_ERR_INVALID_ARG;
        }
        if (c->kind != CC_COLL_BROADCAST && c->peer == comm->me) {
            cc__fmt(msg, msg_size, "comm %s %s: rank %d names itself as the %s", g->name, kind, me_rank, role);
            return CC_ERR_INVALID_ARG;
        }
    }
    /* element counts of the two buffers */
    n_send = n_recv = c->n_elems;
    if (c->kind == CC_COLL_REDUCE_SCATTER || c->kind == CC_COLL_ALL_TO_ALL) n_send = c->n_elems * (size_t)n;
    if (c->kind == CC_COLL_ALL_GATHER || c->kind == CC_COLL_ALL_TO_ALL) n_recv = c->n_elems * (size_t)n;
    if (c->n_elems > (size_t)-1 / es / (size_t)n) {
        cc__fmt(msg, msg_size, "comm %s %s: rank %d: %llu elements overflow the address space",
                      g->name, kind, me_rank, (unsigned long long)c->n_elems);
        return CC_ERR_INVALID_ARG;
    }
    if (c->n_elems == 0) return CC_OK;
    if (c->kind != CC_COLL_RECV && !c->send_buf && (c->kind != CC_COLL_BROADCAST || c->peer == comm->me)) {
        cc__fmt(msg, msg_size, "comm %s %s: rank %d: send_buf is NULL with n_elems %llu",
                      g->name, kind, me_rank, (unsigned long long)c->n_elems);
        return CC_ERR_INVALID_ARG;
    }
    if (c->kind != CC_COLL_SEND && !c->recv_buf) {
        cc__fmt(msg, msg_size, "comm %s %s: rank %d: recv_buf is NULL with n_elems %llu",
                      g->name, kind, me_rank, (unsigned long long)c->n_elems);
        return CC_ERR_INVALID_ARG;
    }
    if (c->kind != CC_COLL_SEND && c->kind != CC_COLL_RECV && !(c->kind == CC_COLL_BROADCAST && c->peer != comm->me)) {
        int in_place_ok = c->kind == CC_COLL_ALL_REDUCE || c->kind == CC_COLL_BROADCAST;
        if (cc__world_overlap(c->send_buf, c->recv_buf, n_send * es, n_recv * es) &&
            !(in_place_ok && c->send_buf == c->recv_buf)) {
            cc__fmt(msg, msg_size, "comm %s %s: rank %d: send_buf and recv_buf overlap%s", g->name, kind, me_rank,
                          in_place_ok ? " without being equal (in place)" : " (in place is allowed only for all_reduce and broadcast)");
            return CC_ERR_INVALID_ARG;
        }
    }
    return CC_OK;
}

/* ---- data movement of a group collective -----------------------------------
   Called by the last member to arrive, without the lock; every other member
   is blocked in the same collective. Reductions go through the scratch
   buffer in rank order, so results do not depend on who moves the data and
   in-place buffers are safe. */
static cc_result cc__world_move(cc__world_group* g, char* msg, size_t msg_size) {
    const cc__world_info* c0 = &g->info[0];
    int n = g->n, m, d;
    size_t es = cc__dtype_size(c0->dtype), cnt = c0->n_elems, blk = cnt * es;
    if (cnt == 0) return CC_OK;
    switch (c0->kind) {
        case CC_COLL_ALL_REDUCE:
        case CC_COLL_REDUCE_SCATTER: {
            size_t total = c0->kind == CC_COLL_ALL_REDUCE ? cnt : cnt * (size_t)n;
            if (g->scratch_bytes < total * es) {
                cc_context* wctx = g->world->ctx;
                cc__free(wctx, g->scratch);
                g->scratch_bytes = 0;
                g->scratch = cc__alloc(wctx, total * es);
                if (!g->scratch) {
                    cc__fmt(msg, msg_size, "comm %s %s: out of memory for a %llu-byte reduction buffer", g->name,
                                  cc__coll_name(c0->kind), (unsigned long long)(total * es));
                    return CC_ERR_OUT_OF_MEMORY;
                }
                g->scratch_bytes = total * es;
            }
            memcpy(g->scratch, g->info[0].send, total * es);
            for (m = 1; m < n; m++) cc__world_reduce_into(g->scratch, g->info[m].send, total, c0->dtype, c0->reduce);
            if (c0->reduce == CC_REDUCE_AVG) cc__world_divide(g->scratch, total, c0->dtype, n);
            for (m = 0; m < n; m++)
                memcpy(g->info[m].recv, (const char*)g->scratch + (c0->kind == CC_COLL_ALL_REDUCE ? 0 : (size_t)m * blk),
                       blk);
            break;
        }
        case CC_COLL_ALL_GATHER:
            for (d = 0; d < n; d++)
                for (m = 0; m < n; m++) memcpy((char*)g->info[d].recv + (size_t)m * blk, g->info[m].send, blk);
            break;
        case CC_COLL_BROADCAST: {
            const void* src = g->info[c0->peer].send;
            for (m = 0; m < n; m++)
                if (g->info[m].recv != src) memcpy(g->info[m].recv, src, blk);
            break;
        }
        case CC_COLL_ALL_TO_ALL:
            for (d = 0; d < n; d++)
                for (m = 0; m < n; m++)
                    memcpy((char*)g->info[d].recv + (size_t)m * blk, (const char*)g->info[m].send + (size_t)d * blk, blk);
            break;
        default: break;
    }
    return CC_OK;
}

/* ---- checksums (desc.checksum) ---------------------------------------------
   The bytes member m contributes to collective c (0: none). */
static size_t cc__world_contrib_bytes(const cc__world_info* c, int n, int m) {
    size_t b = c->n_elems * cc__dtype_size(c->dtype);
    if (c->kind == CC_COLL_REDUCE_SCATTER || c->kind == CC_COLL_ALL_TO_ALL) return b * (size_t)n;
    if (c->kind == CC_COLL_BROADCAST && c->peer != m) return 0;
    if (c->kind == CC_COLL_RECV) return 0;
    return b;
}

/* Checks member m's data as received against the checksum it sent; with
   the test hook on, the data received is a copy with one bit flipped. No
   lock held: the data is not written until the collective completes. */
static cc_result cc__world_verify(cc__world_group* g, const cc__world_info* c, int m, uint64_t seq, const char* what,
                                  char* msg, size_t msg_size) {
    cc_world* w = g->world;
    size_t n_bytes = cc__world_contrib_bytes(c, g->n, m);
    const void* got = c->send;
    unsigned char* flipped = NULL;
    uint64_t sum;
    if (n_bytes == 0) return CC_OK;
    if (g->is_world && w->desc.test_flip_rank == g->members[m] + 1 && seq == (uint64_t)w->desc.test_flip_collective) {
        flipped = (unsigned char*)cc__alloc(w->ctx, n_bytes);
        if (!flipped) {
            cc__fmt(msg, msg_size, "comm %s %s: out of memory for a %llu-byte copy of rank %d's data (test_flip_rank)",
                    g->name, what, (unsigned long long)n_bytes, g->members[m]);
            return CC_ERR_OUT_OF_MEMORY;
        }
        memcpy(flipped, c->send, n_bytes);
        flipped[n_bytes / 2] ^= 0x10;
        got = flipped;
    }
    sum = cc__fnv(CONCERTO__FNV_START, got, n_bytes);
    cc__free(w->ctx, flipped);
    if (sum == c->sum) return CC_OK;
    cc__fmt(msg, msg_size, "comm %s %s: the data of rank %d arrived corrupted: checksum %016llx when sent, %016llx "
            "on receipt (%llu bytes)", g->name, what, g->members[m], (unsigned long long)c->sum,
            (unsigned long long)sum, (unsigned long long)n_bytes);
    return CC_ERR_BACKEND;
}

/* Who did not arrive at group collective seq, for a timeout message. Under g->mu. */
static void cc__world_missing(const cc__world_group* g, uint64_t seq, char* buf, size_t size) {
    int m, n_missing = 0;
    buf[0] = 0;
    for (m = 0; m < g->n; m++) {
        if (g->waiting_at[m] == seq + 1) continue;
        cc__append(buf, size, "%s%d", n_missing ? ", " : "", g->members[m]);
        if (!g->joined[m]) cc__append(buf, size, " (which has not created this communicator)");
        else cc__append(buf, size, " (which has issued %llu collectives on it)", (unsigned long long)g->issued[m]);
        n_missing++;
    }
    if (n_missing == 0) cc__fmt(buf, size, "(nobody)");
}

static cc_result cc__world_group_coll(cc__world_view* comm, const cc_collective* c, char* msg, size_t msg_size) {
    cc__world_group* g = comm->g;
    cc_world* w = g->world;
    int me = comm->me, m;
    uint64_t seq;
    double timeout_s = w->desc.timeout_s, t_fail, deadline = 0;
    char what[160], text[CONCERTO__MSG_MAX];
    cc__world_info mine;
    mine.kind = c->kind;
    mine.dtype = c->dtype;
    mine.reduce = c->reduce;
    mine.n_elems = c->n_elems;
    mine.peer = c->peer;
    mine.send = c->send_buf;
    mine.recv = c->recv_buf;
    mine.sum = 0;
    if (w->desc.checksum) mine.sum = cc__fnv(CONCERTO__FNV_START, mine.send, cc__world_contrib_bytes(&mine, g->n, me));

    pthread_mutex_lock(&g->mu);
    seq = g->issued[me]++;
    {
        char d[112];
        cc__world_describe(d, sizeof d, g, &mine);
        cc__fmt(what, sizeof what, "collective #%llu (%s)", (unsigned long long)seq, d);
    }
    if (g->poisoned) {
        cc_result r = cc__world_poison_error(g, me, CONCERTO__WORLD_SITE_GROUP, seq, what, msg, msg_size);
        pthread_mutex_unlock(&g->mu);
        return r;
    }
    /* another thread of this rank may have issued the previous one on this
       communicator: collectives of one rank on one communicator run in
       the order they were issued */
    while (!g->poisoned && g->n_done != seq) pthread_cond_wait(&g->cv, &g->mu);
    if (g->poisoned) {
        cc_result r = cc__world_poison_error(g, me, CONCERTO__WORLD_SITE_GROUP, seq, what, msg, msg_size);
        pthread_mutex_unlock(&g->mu);
        return r;
    }
    /* the same collective as everyone already here? */
    for (m = 0; m < g->n; m++) {
        char mine_d[112], theirs_d[112];
        if (m == me || g->waiting_at[m] != seq + 1 || cc__world_same(&g->info[m], &mine)) continue;
        cc__world_describe(theirs_d, sizeof theirs_d, g, &g->info[m]);
        cc__world_describe(mine_d, sizeof mine_d, g, &mine);
        cc__fmt(text, sizeof text, "comm %s collective #%llu: rank %d issued %s, rank %d issued %s", g->name,
                 (unsigned long long)seq, g->members[m < me ? m : me], m < me ? theirs_d : mine_d,
                 g->members[m < me ? me : m], m < me ? mine_d : theirs_d);
        cc__world_poison(g, CC_ERR_COLL_MISMATCH, CONCERTO__WORLD_SITE_GROUP, seq, text);
        {
            cc_result r = cc__world_poison_error(g, me, CONCERTO__WORLD_SITE_GROUP, seq, what, msg, msg_size);
            pthread_mutex_unlock(&g->mu);
            return r;
        }
    }
    g->info[me] = mine;
    g->waiting_at[me] = seq + 1;
    g->n_arrived++;
    if (g->n_arrived == g->n) {
        /* last to arrive: move the data, complete, wake the others */
        double t_last = cc__now_s();
        cc_result r;
        g->moving = 1;
        pthread_mutex_unlock(&g->mu);
        r = CC_OK;
        for (m = 0; w->desc.checksum && m < g->n && r == CC_OK; m++)
            r = cc__world_verify(g, &g->info[m], m, seq, what, text, sizeof text);
        if (r == CC_OK) r = cc__world_move(g, text, sizeof text);
        pthread_mutex_lock(&g->mu);
        g->moving = 0;
        g->n_arrived = 0;
        for (m = 0; m < g->n; m++) g->waiting_at[m] = 0;
        if (r != CC_OK) {
            cc__world_poison(g, r, CONCERTO__WORLD_SITE_GROUP, seq, text);
            r = cc__world_poison_error(g, me, CONCERTO__WORLD_SITE_GROUP, seq, what, msg, msg_size);
            pthread_mutex_unlock(&g->mu);
            return r;
        }
        if (w->desc.emulate_link)
            g->deadline_s = t_last + 1e-6 * cc__link_flat_us(g->link, mine.kind,
                                                             (double)(mine.n_elems * cc__dtype_size(mine.dtype)), g->n);
        deadline = g->deadline_s;
        g->n_done = seq + 1;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        if (w->desc.emulate_link) cc__world_sleep_until(deadline);
        return CC_OK;
    }
    t_fail = cc__now_s() + timeout_s;
    while (g->n_done <= seq && (!g->poisoned || g->moving)) {   /* never leave while the mover writes our buffers */
        if (g->moving) { pthread_cond_wait(&g->cv, &g->mu); continue; }   /* everyone is here: no timeout */
        if (cc__world_wait(g, t_fail) && g->n_done <= seq && !g->poisoned && g->n_arrived < g->n && !g->moving) {
            char who[CONCERTO__MSG_MAX / 2];
            cc__world_missing(g, seq, who, sizeof who);
            cc__fmt(text, sizeof text, "comm %s %s: rank%s %s did not join within %g s", g->name, what,
                     strchr(who, ',') ? "s" : "", who, timeout_s);
            cc__world_poison(g, CC_ERR_TIMEOUT, CONCERTO__WORLD_SITE_GROUP, seq, text);
        }
    }
    if (g->n_done <= seq) {   /* failed */
        cc_result r;
        if (g->waiting_at[me] == seq + 1) { g->waiting_at[me] = 0; g->n_arrived--; }
        r = cc__world_poison_error(g, me, CONCERTO__WORLD_SITE_GROUP, seq, what, msg, msg_size);
        pthread_mutex_unlock(&g->mu);
        return r;
    }
    deadline = g->deadline_s;   /* collective seq + 1 cannot have completed: it needs this rank */
    pthread_mutex_unlock(&g->mu);
    if (w->desc.emulate_link) cc__world_sleep_until(deadline);
    return CC_OK;
}

/* ---- point to point ---------------------------------------------------------*/
static cc_result cc__world_p2p(cc__world_view* comm, const cc_collective* c, char* msg, size_t msg_size) {
    cc__world_group* g = comm->g;
    cc_world* w = g->world;
    int me = comm->me, is_send = c->kind == CC_COLL_SEND;
    int src = is_send ? me : c->peer, dst = is_send ? c->peer : me, site = src * g->n + dst;
    int peer_rank = g->members[c->peer];
    cc__world_chan* ch;
    double timeout_s = w->desc.timeout_s, t_fail = cc__now_s() + timeout_s, deadline = 0;
    uint64_t seq;
    char what[160], text[CONCERTO__MSG_MAX];
    cc__world_info mine;
    mine.kind = c->kind;
    mine.dtype = c->dtype;
    mine.reduce = c->reduce;
    mine.n_elems = c->n_elems;
    mine.peer = c->peer;
    mine.send = c->send_buf;
    mine.recv = c->recv_buf;
    mine.sum = 0;
    if (w->desc.checksum && is_send) mine.sum = cc__fnv(CONCERTO__FNV_START, mine.send, cc__world_contrib_bytes(&mine, g->n, me));

    pthread_mutex_lock(&g->mu);
    if (!g->chan) {   /* n*n channels: only for groups that use send/recv */
        g->chan = (cc__world_chan*)cc__calloc(w->ctx, (size_t)g->n * (size_t)g->n, sizeof(cc__world_chan));
        if (!g->chan) {
            pthread_mutex_unlock(&g->mu);
            cc__fmt(msg, msg_size, "comm %s %s from rank %d to rank %d: out of memory for the channels",
                          g->name, cc__coll_name(c->kind), g->members[src], g->members[dst]);
            return CC_ERR_OUT_OF_MEMORY;
        }
    }
    ch = &g->chan[site];
    /* another thread of this rank may still have a transfer on this channel */
    while (!g->poisoned && (is_send ? ch->send_posted : ch->recv_posted)) {
        if (ch->moving) { pthread_cond_wait(&g->cv, &g->mu); continue; }
        if (cc__world_wait(g, t_fail) && !g->poisoned && (is_send ? ch->send_posted : ch->recv_posted) &&
            !ch->moving) {
            cc__fmt(text, sizeof text, "comm %s %s from rank %d to rank %d: the previous one did not complete within %g s: "
                     "rank %d did not post the matching %s", g->name, cc__coll_name(c->kind), g->members[src],
                     g->members[dst], timeout_s, peer_rank, is_send ? "recv" : "send");
            cc__world_poison(g, CC_ERR_TIMEOUT, site, is_send ? ch->next_send : ch->next_recv, text);
        }
    }
    seq = is_send ? ch->next_send : ch->next_recv;
    cc__fmt(what, sizeof what, "%s #%llu from rank %d to rank %d (%llu %s)", cc__coll_name(c->kind),
             (unsigned long long)seq, g->members[src], g->members[dst], (unsigned long long)c->n_elems,
             cc__dtype_name(c->dtype));
    if (g->poisoned) {
        cc_result r = cc__world_poison_error(g, me, site, seq, what, msg, msg_size);
        pthread_mutex_unlock(&g->mu);
        return r;
    }
    if (is_send) { ch->next_send++; ch->send = mine; ch->send_posted = 1; ch->t_send_s = cc__now_s(); }
    else { ch->next_recv++; ch->recv = mine; ch->recv_posted = 1; ch->t_recv_s = cc__now_s(); }
    if (ch->send_posted && ch->recv_posted) {
        /* second to post: check, copy, complete */
        double t_last = cc__now_s();
        if (ch->send.n_elems != ch->recv.n_elems || ch->send.dtype != ch->recv.dtype) {
            cc_result r;
            cc__fmt(text, sizeof text, "comm %s send/recv #%llu from rank %d to rank %d: rank %d sends %llu %s, "
                     "rank %d receives %llu %s", g->name, (unsigned long long)seq, g->members[src], g->members[dst],
                     g->members[src], (unsigned long long)ch->send.n_elems, cc__dtype_name(ch->send.dtype),
                     g->members[dst], (unsigned long long)ch->recv.n_elems, cc__dtype_name(ch->recv.dtype));
            cc__world_poison(g, CC_ERR_COLL_MISMATCH, site, seq, text);
            ch->send_posted = ch->recv_posted = 0;
            r = cc__world_poison_error(g, me, site, seq, what, msg, msg_size);
            pthread_mutex_unlock(&g->mu);
            return r;
        }
        ch->moving = 1;
        pthread_mutex_unlock(&g->mu);
        if (w->desc.checksum) {
            cc_result r = cc__world_verify(g, &ch->send, src, seq, what, text, sizeof text);
            if (r != CC_OK) {
                pthread_mutex_lock(&g->mu);
                ch->moving = 0;
                cc__world_poison(g, r, site, seq, text);
                ch->send_posted = ch->recv_posted = 0;
                r = cc__world_poison_error(g, me, site, seq, what, msg, msg_size);
                pthread_mutex_unlock(&g->mu);
                return r;
            }
        }
        if (c->n_elems) memcpy(ch->recv.recv, ch->send.send, c->n_elems * cc__dtype_size(c->dtype));
        pthread_mutex_lock(&g->mu);
        ch->moving = 0;
        if (w->desc.emulate_link) {
            const cc_link* link = cc__world_node_of(w, g->members[src]) == cc__world_node_of(w, g->members[dst])
                                      ? w->desc.intra_node : w->desc.inter_node;
            ch->deadline_s = t_last + 1e-6 * cc__link_flat_us(link, CC_COLL_SEND,
                                                              (double)(c->n_elems * cc__dtype_size(c->dtype)), 2);
        }
        deadline = ch->deadline_s;
        ch->send_posted = ch->recv_posted = 0;
        ch->n_done = seq + 1;
        pthread_cond_broadcast(&g->cv);
        pthread_mutex_unlock(&g->mu);
        if (w->desc.emulate_link) cc__world_sleep_until(deadline);
        return CC_OK;
    }
    t_fail = cc__now_s() + timeout_s;
    while (ch->n_done <= seq && (!g->poisoned || ch->moving)) {   /* never leave while our buffer is being copied */
        if (ch->moving) { pthread_cond_wait(&g->cv, &g->mu); continue; }
        if (cc__world_wait(g, t_fail) && ch->n_done <= seq && !g->poisoned && !ch->moving) {
            cc__fmt(text, sizeof text, "comm %s %s: rank %d did not post the matching %s within %g s", g->name, what,
                     peer_rank, is_send ? "recv" : "send", timeout_s);
            cc__world_poison(g, CC_ERR_TIMEOUT, site, seq, text);
        }
    }
    if (ch->n_done <= seq) {
        cc_result r = cc__world_poison_error(g, me, site, seq, what, msg, msg_size);
        pthread_mutex_unlock(&g->mu);
        return r;
    }
    deadline = ch->deadline_s;
    pthread_mutex_unlock(&g->mu);
    if (w->desc.emulate_link) cc__world_sleep_until(deadline);
    return CC_OK;
}

/* Runs a collective on the calling thread. Any thread may call it (the CPU
   backend's stream threads do); it touches no cc_context, and on failure
   writes the message into msg. comm is the calling rank's view. */
static cc_result cc__comm_collective(cc__world_view* comm, const cc_collective* c, char* msg, size_t msg_size) {
    cc_result r;
    if (msg && msg_size) msg[0] = 0;
    if (!c) { cc__fmt(msg, msg_size, "collective: the descriptor is NULL"); return CC_ERR_INVALID_ARG; }
    if (!comm) {
        cc__fmt(msg, msg_size, "%s: the communicator is NULL", cc__coll_name(c->kind));
        return CC_ERR_INVALID_ARG;
    }
    r = cc__world_check(comm, c, msg, msg_size);
    if (r != CC_OK) return r;
    if (c->kind == CC_COLL_SEND || c->kind == CC_COLL_RECV) return cc__world_p2p(comm, c, msg, msg_size);
    return cc__world_group_coll(comm, c, msg, msg_size);
}

/* ---- the world's family of communicators ------------------------------------*/
static cc_result cc__world_comm_collective(void* self, void* native_stream, const cc_collective* c, char* msg,
                                           size_t msg_size) {
    (void)native_stream;   /* host streams: the calling thread is the stream */
    return cc__comm_collective((cc__world_view*)self, c, msg, msg_size);
}

/* Every member's (color, key) through the parent, then cc_comm_create with
   the members of this rank's color in (key, parent index) order. */
static cc_result cc__world_comm_split(void* self, int color, int key, cc_comm** out) {
    cc__world_view* v = (cc__world_view*)self;
    cc_context* ctx = v->rank->ctx;
    int n = v->g->n, i, j, m = 0;
    int32_t mine[2];
    int32_t* all = (int32_t*)cc__alloc(ctx, (size_t)n * 2 * sizeof(int32_t) + (size_t)n * sizeof(int));
    int* members = all ? (int*)(all + 2 * n) : NULL;
    cc_collective c;
    char msg[CONCERTO__MSG_MAX];
    cc_result r;
    if (!all) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_comm_split %s: out of memory", v->g->name);
    mine[0] = color < 0 ? -1 : color; mine[1] = key;
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_GATHER; c.dtype = CC_DTYPE_INT32; c.n_elems = 2; c.comm = &v->comm;
    c.send_buf = mine; c.recv_buf = all;
    r = cc__comm_collective(v, &c, msg, sizeof msg);
    if (r != CC_OK) { cc__free(ctx, all); return CONCERTO__FAIL(ctx, r, "cc_comm_split %s: %s", v->g->name, msg); }
    if (color < 0) { cc__free(ctx, all); return CC_OK; }
    for (i = 0; i < n; i++) {   /* insertion by (key, index in the parent) */
        if (all[2 * i] != color) continue;
        for (j = m; j > 0 && all[2 * (members[j - 1]) + 1] > all[2 * i + 1]; j--) members[j] = members[j - 1];
        members[j] = i;
        m++;
    }
    for (i = 0; i < m; i++) members[i] = v->g->members[members[i]];   /* parent index -> world rank */
    r = cc_comm_create(v->rank, members, m, out);
    cc__free(ctx, all);
    return r;
}

static const cc_comm_fns cc__world_comm_fns = {
    "world", "host", cc__world_comm_collective, cc__world_comm_split, NULL, NULL, NULL
};

/* ---- groups -------------------------------------------------------------------*/
static void cc__world_group_free(cc_context* wctx, cc__world_group* g) {
    if (!g) return;
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    cc__free(wctx, g->scratch);
    cc__free(wctx, g->chan);
    cc__free(wctx, g);   /* the arrays live in the same block */
}

/* One allocation: the group and its arrays. Members are world ranks. */
static cc__world_group* cc__world_group_new(cc_world* w, const int* members, int n) {
    cc_context* wctx = w->ctx;
    size_t nn = (size_t)n, off = 0, total;
    size_t o_head, o_members, o_sorted, o_views, o_joined, o_hit, o_issued, o_waiting, o_info;
    cc__world_group* g;
    char* base;
    int i, j, node0, one_node = 1;
    pthread_condattr_t ca;
#define CONCERTO__WORLD_CARVE(o, bytes) (off = (off + 15) & ~(size_t)15, o = off, off += (bytes))
    CONCERTO__WORLD_CARVE(o_head, sizeof(cc__world_group));
    CONCERTO__WORLD_CARVE(o_members, nn * sizeof(int));
    CONCERTO__WORLD_CARVE(o_sorted, nn * sizeof(int));
    CONCERTO__WORLD_CARVE(o_views, nn * sizeof(cc__world_view));
    CONCERTO__WORLD_CARVE(o_joined, nn);
    CONCERTO__WORLD_CARVE(o_hit, nn);
    CONCERTO__WORLD_CARVE(o_issued, nn * sizeof(uint64_t));
    CONCERTO__WORLD_CARVE(o_waiting, nn * sizeof(uint64_t));
    CONCERTO__WORLD_CARVE(o_info, nn * sizeof(cc__world_info));
#undef CONCERTO__WORLD_CARVE
    (void)o_head;
    total = off;
    base = (char*)cc__calloc(wctx, 1, total);
    if (!base) return NULL;
    g = (cc__world_group*)base;
    g->world = w;
    g->n = n;
    g->members = (int*)(base + o_members);
    g->sorted = (int*)(base + o_sorted);
    g->views = (cc__world_view*)(base + o_views);
    g->joined = (unsigned char*)(base + o_joined);
    g->abort_hit = (unsigned char*)(base + o_hit);
    g->issued = (uint64_t*)(base + o_issued);
    g->waiting_at = (uint64_t*)(base + o_waiting);
    g->info = (cc__world_info*)(base + o_info);
    if (pthread_mutex_init(&g->mu, NULL) != 0) { cc__free(wctx, base); return NULL; }
    if (pthread_condattr_init(&ca) != 0) { pthread_mutex_destroy(&g->mu); cc__free(wctx, base); return NULL; }
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (pthread_cond_init(&g->cv, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        pthread_mutex_destroy(&g->mu);
        cc__free(wctx, base);
        return NULL;
    }
    pthread_condattr_destroy(&ca);
    for (i = 0; i < n; i++) {
        g->members[i] = g->sorted[i] = members[i];
        g->views[i].g = g;
        g->views[i].me = i;
        g->views[i].rank = &w->ranks[members[i]];
        cc__comm_init(&g->views[i].comm, &cc__world_comm_fns, &g->views[i], w->ranks[members[i]].ctx, i, n, g->name);
    }
    for (i = 1; i < n; i++)   /* insertion sort: groups are small */
        for (j = i; j > 0 && g->sorted[j - 1] > g->sorted[j]; j--) {
            int t = g->sorted[j]; g->sorted[j] = g->sorted[j - 1]; g->sorted[j - 1] = t;
        }
    node0 = cc__world_node_of(w, members[0]);
    for (i = 1; i < n; i++) if (cc__world_node_of(w, members[i]) != node0) one_node = 0;
    g->link = one_node ? w->desc.intra_node : w->desc.inter_node;
    g->name[0] = 0;
    for (i = 0; i < n; i++) {
        if (strlen(g->name) > sizeof g->name - 24) { cc__append(g->name, sizeof g->name, ",...,%d", members[n - 1]); break; }
        cc__append(g->name, sizeof g->name, "%s%d", i ? "," : "{", members[i]);
    }
    cc__append(g->name, sizeof g->name, "}");
    return g;
}

/* ---- world -----------------------------------------------------------------------*/
/* The links a world uses when its desc names none. */
static const cc_link cc__link_intra_default = { 2.0, 1e-5, 0, 0 };    /* 100 GB/s */

static const cc_link cc__link_inter_default = { 10.0, 8e-5, 0, 0 };   /* 12.5 GB/s */

CONCERTO_API cc_world_desc cc_world_query_defaults(const cc_world_desc* desc) {
    cc_world_desc d;
    if (desc) d = *desc;
    else { memset(&d, 0, sizeof d); d.n_ranks = 1; }
    if (!d.intra_node) d.intra_node = &cc__link_intra_default;
    if (!d.inter_node) d.inter_node = &cc__link_inter_default;
    if (d.timeout_s == 0) d.timeout_s = 30.0;
    return d;
}

static int cc__world_bad_double(double x) { return !(x >= 0) || x - x != 0; }   /* negative, NaN or infinite */

/* Every problem of a resolved desc in one message; problems[0] == 0 if none. */
static void cc__world_desc_problems(const cc_world_desc* d, char* problems, size_t size) {
    problems[0] = 0;
#define CONCERTO__WORLD_PROBLEM(...) \
    (cc__append(problems, size, "%s", problems[0] ? "; " : ""), cc__append(problems, size, __VA_ARGS__))
    if (d->n_ranks < 1) CONCERTO__WORLD_PROBLEM("n_ranks must be >= 1, got %d", d->n_ranks);
    if (d->ranks_per_node < 0) CONCERTO__WORLD_PROBLEM("ranks_per_node must be >= 0, got %d", d->ranks_per_node);
    if (cc__world_bad_double(d->intra_node->latency_us) || cc__world_bad_double(d->intra_node->us_per_byte))
        CONCERTO__WORLD_PROBLEM("intra_node must have latency_us and us_per_byte >= 0 and finite, got %g and %g",
                                d->intra_node->latency_us, d->intra_node->us_per_byte);
    if (cc__world_bad_double(d->inter_node->latency_us) || cc__world_bad_double(d->inter_node->us_per_byte))
        CONCERTO__WORLD_PROBLEM("inter_node must have latency_us and us_per_byte >= 0 and finite, got %g and %g",
                                d->inter_node->latency_us, d->inter_node->us_per_byte);
    if (cc__world_bad_double(d->timeout_s)) CONCERTO__WORLD_PROBLEM("timeout_s must be >= 0 and finite, got %g", d->timeout_s);
    if (d->checksum != 0 && d->checksum != 1) CONCERTO__WORLD_PROBLEM("checksum must be 0 or 1, got %d", d->checksum);
    if (d->test_flip_rank < 0 || d->test_flip_rank > d->n_ranks)
        CONCERTO__WORLD_PROBLEM("test_flip_rank must be 0 (off) or a world rank + 1 (1..%d), got %d", d->n_ranks, d->test_flip_rank);
    if (d->test_flip_collective < 0)
        CONCERTO__WORLD_PROBLEM("test_flip_collective must be >= 0, got %d", d->test_flip_collective);
#undef CONCERTO__WORLD_PROBLEM
}

CONCERTO_API cc_result cc_world_create(cc_context* ctx, const cc_world_desc* desc, cc_world** out) {
    cc_world_desc d;
    cc_context_desc cd;
    cc_context* wctx = NULL;
    cc_world* w;
    char problems[CONCERTO__MSG_MAX];
    int i;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_world_create: out is NULL");
    *out = NULL;
    d = cc_world_query_defaults(desc);
    cc__world_desc_problems(&d, problems, sizeof problems);
    if (problems[0]) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_world_create: %s", problems);
    memset(&cd, 0, sizeof cd);
    cd.allocator = ctx->alloc;
    cd.logger = ctx->logger;
    if (cc_context_create(&cd, &wctx) != CC_OK)
        return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_world_create: out of memory for %d ranks", d.n_ranks);
    w = (cc_world*)cc__calloc(wctx, 1, sizeof *w);
    if (!w) goto oom;
    w->ctx = wctx;
    w->intra_node = *d.intra_node;
    w->inter_node = *d.inter_node;
    w->desc = d;
    w->desc.intra_node = &w->intra_node;
    w->desc.inter_node = &w->inter_node;
    w->abort_rank = -1;
    if (pthread_mutex_init(&w->mu, NULL) != 0) { cc__free(wctx, w); w = NULL; goto oom; }
    w->ranks = (cc_rank*)cc__calloc(wctx, (size_t)d.n_ranks, sizeof *w->ranks);
    if (!w->ranks) goto fail;
    for (i = 0; i < d.n_ranks; i++) {
        cc_context_desc rd = cd;
        rd.rank = i;
        w->ranks[i].world = w;
        w->ranks[i].index = i;
        if (cc_context_create(&rd, &w->ranks[i].ctx) != CC_OK) goto fail;
    }
    {
        int* members = (int*)cc__alloc(wctx, (size_t)d.n_ranks * sizeof(int));
        if (!members) goto fail;
        for (i = 0; i < d.n_ranks; i++) members[i] = i;
        w->world_group = cc__world_group_new(w, members, d.n_ranks);
        cc__free(wctx, members);
        if (!w->world_group) goto fail;
    }
    w->world_group->is_world = 1;
    for (i = 0; i < d.n_ranks; i++) {
        w->world_group->joined[i] = 1;
        w->ranks[i].world_comm = &w->world_group->views[i].comm;
    }
    *out = w;
    return CC_OK;
fail:
    cc_world_destroy(w);   /* and wctx with it */
    return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_world_create: out of memory for %d ranks", d.n_ranks);
oom:
    cc_context_destroy(wctx);
    return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_world_create: out of memory for %d ranks", d.n_ranks);
}

CONCERTO_API void cc_world_destroy(cc_world* w) {
    cc_context* wctx;
    size_t k;
    int i;
    if (!w) return;
    wctx = w->ctx;
    for (k = 0; k < w->n_groups; k++) cc__world_group_free(wctx, w->groups[k]);
    cc__free(wctx, w->groups);
    cc__world_group_free(wctx, w->world_group);
    if (w->ranks) {
        for (i = 0; i < w->desc.n_ranks; i++) cc_context_destroy(w->ranks[i].ctx);
        cc__free(wctx, w->ranks);
    }
    pthread_mutex_destroy(&w->mu);
    cc__free(wctx, w);
    cc_context_destroy(wctx);
}

CONCERTO_API const char* cc_world_error(const cc_world* world) { return world ? world->error : "no world"; }

/* A rank failed: poison every communicator so that nobody waits for it. */
static void cc__world_abort(cc_world* w, int rank, const char* why) {
    size_t k;
    char text[CONCERTO__MSG_MAX];
    pthread_mutex_lock(&w->mu);
    if (!w->aborted) { w->aborted = 1; w->abort_rank = rank; }
    cc__fmt(text, sizeof text, "rank %d failed: %s", rank, why);
    for (k = 0; k <= w->n_groups; k++) {
        cc__world_group* g = k < w->n_groups ? w->groups[k] : w->world_group;
        pthread_mutex_lock(&g->mu);
        cc__world_poison(g, CC_ERR_BACKEND, CONCERTO__WORLD_SITE_ABORT, 0, text);
        pthread_mutex_unlock(&g->mu);
    }
    pthread_mutex_unlock(&w->mu);
}

static void* cc__world_thread(void* arg) {
    cc_rank* rank = (cc_rank*)arg;
    cc_world* w = rank->world;
    cc_result r;
    if (w->desc.thread_start) w->desc.thread_start(rank->index, -1, w->desc.thread_start_user);
    r = w->fn(rank, w->user_data);
    rank->result = r;
    if (r != CC_OK) {
        const char* m = cc_last_error(rank->ctx);
        if (m && m[0]) cc__fmt(rank->error, sizeof rank->error, "%s", m);
        else cc__fmt(rank->error, sizeof rank->error, "rank %d returned %s with no message", rank->index,
                      cc_result_description(r));
        cc__world_abort(w, rank->index, rank->error);
    }
    return NULL;
}

CONCERTO_API cc_result cc_world_run(cc_world* w, cc_result (*fn)(cc_rank* rank, void* user_data), void* user_data) {
    int i, n, n_started = 0, pick = -1;
    cc_result r = CC_OK;
    size_t k;
    if (!w) return CC_ERR_INVALID_ARG;
    n = w->desc.n_ranks;
    if (!fn) {
        r = CONCERTO__FAIL(w->ctx, CC_ERR_INVALID_ARG, "cc_world_run: fn is NULL");
        cc__fmt(w->error, sizeof w->error, "%s", cc_last_error(w->ctx));
        return r;
    }
    pthread_mutex_lock(&w->mu);
    if (w->running || w->aborted) {
        int running = w->running, ar = w->abort_rank;
        pthread_mutex_unlock(&w->mu);
        if (running) r = CONCERTO__FAIL(w->ctx, CC_ERR_INVALID_ARG, "cc_world_run: the world is already running");
        else r = CONCERTO__FAIL(w->ctx, CC_ERR_BACKEND, "cc_world_run: the world was aborted in an earlier run when rank %d "
                          "failed; its communicators are unusable: create a new world", ar);
        cc__fmt(w->error, sizeof w->error, "%s", cc_last_error(w->ctx));
        return r;
    }
    w->running = 1;
    w->fn = fn;
    w->user_data = user_data;
    w->error[0] = 0;
    pthread_mutex_unlock(&w->mu);
    for (i = 0; i < n; i++) {
        cc_clear_error(w->ranks[i].ctx);
        w->ranks[i].result = CC_OK;
        w->ranks[i].abort_hit = 0;
        w->ranks[i].error[0] = 0;
    }
    for (i = 0; i < n; i++) {
        if (pthread_create(&w->ranks[i].thread, NULL, cc__world_thread, &w->ranks[i]) != 0) break;
        n_started++;
    }
    if (n_started < n) {
        char why[96];
        cc__fmt(why, sizeof why, "cc_world_run could not start a thread for rank %d of %d", n_started, n);
        cc__world_abort(w, n_started, why);
    }
    for (i = 0; i < n_started; i++) pthread_join(w->ranks[i].thread, NULL);
    pthread_mutex_lock(&w->mu);
    w->running = 0;
    pthread_mutex_unlock(&w->mu);
    if (n_started < n) {
        r = CONCERTO__FAIL(w->ctx, CC_ERR_BACKEND, "cc_world_run: could not start a thread for rank %d of %d", n_started, n);
        cc__fmt(w->error, sizeof w->error, "%s", cc_last_error(w->ctx));
        return r;
    }
    /* The first failed rank by index, preferring those whose failure is not
       merely the abort caused by another rank's failure. */
    for (i = 0; i < n && pick < 0; i++) {
        int hit = w->ranks[i].abort_hit;
        if (w->ranks[i].result == CC_OK) continue;
        for (k = 0; k <= w->n_groups && !hit; k++) {
            cc__world_group* g = k < w->n_groups ? w->groups[k] : w->world_group;
            int m;
            for (m = 0; m < g->n; m++) if (g->members[m] == i && g->abort_hit[m]) hit = 1;
        }
        if (!hit) pick = i;
    }
    for (i = 0; i < n && pick < 0; i++) if (w->ranks[i].result != CC_OK) pick = i;
    if (pick < 0) return CC_OK;
    {
        char prefix[32];
        cc__fmt(prefix, sizeof prefix, "rank %d: ", pick);
        if (strncmp(w->ranks[pick].error, prefix, strlen(prefix)) == 0)
            cc__fmt(w->error, sizeof w->error, "%s", w->ranks[pick].error);
        else cc__fmt(w->error, sizeof w->error, "%s%s", prefix, w->ranks[pick].error);
    }
    return w->ranks[pick].result;
}

CONCERTO_API int cc_rank_index(const cc_rank* rank) { return rank ? rank->index : -1; }

CONCERTO_API int cc_rank_count(const cc_rank* rank) { return rank ? rank->world->desc.n_ranks : 0; }

CONCERTO_API cc_context* cc_rank_context(cc_rank* rank) { return rank ? rank->ctx : NULL; }

CONCERTO_API cc_comm* cc_rank_world_comm(cc_rank* rank) { return rank ? rank->world_comm : NULL; }

/* ---- communicators ------------------------------------------------------------
   Creations are matched by key: the sorted member list and how many groups
   of that list this rank created before. The first member to call creates
   the group, the others join it; a member whose ordered list differs fails,
   and poisons the group so that the others fail on their first collective. */
CONCERTO_API cc_result cc_comm_create(cc_rank* rank, const int* members, int n, cc_comm** out) {
    cc_world* w;
    cc_context* ctx;
    int i, j, me = -1, instance = 0, n_ranks;
    int* sorted = NULL;
    cc__world_group* g = NULL;
    size_t k;
    char list[96];
    cc_result r = CC_OK;
    if (out) *out = NULL;
    if (!rank) return CC_ERR_INVALID_ARG;
    w = rank->world;
    ctx = rank->ctx;
    n_ranks = w->desc.n_ranks;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create: out is NULL");
    if (!members || n < 1)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create: %s", !members ? "members is NULL" : "n_members must be >= 1");
    if (n > n_ranks)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create: %d members in a world of %d ranks", n, n_ranks);
    list[0] = 0;
    for (i = 0; i < n; i++) {
        if (strlen(list) > sizeof list - 24) { cc__append(list, sizeof list, ",..."); break; }
        cc__append(list, sizeof list, "%s%d", i ? "," : "{", members[i]);
    }
    cc__append(list, sizeof list, "}");
    for (i = 0; i < n; i++) {
        if (members[i] < 0 || members[i] >= n_ranks)
            return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create %s: member %d is rank %d, outside the world's %d ranks",
                            list, i, members[i], n_ranks);
        for (j = 0; j < i; j++)
            if (members[j] == members[i])
                return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create %s: rank %d is listed twice (members %d and %d)",
                                list, members[i], j, i);
        if (members[i] == rank->index) me = i;
    }
    if (me < 0)
        return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_comm_create %s: the calling rank %d is not among the members",
                        list, rank->index);
    sorted = (int*)cc__alloc(ctx, (size_t)n * sizeof(int));
    if (!sorted) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_comm_create %s: out of memory", list);
    for (i = 0; i < n; i++) sorted[i] = members[i];
    for (i = 1; i < n; i++)
        for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) { int t = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = t; }

    pthread_mutex_lock(&w->mu);
    if (w->aborted) {
        int ar = w->abort_rank;
        rank->abort_hit = 1;
        pthread_mutex_unlock(&w->mu);
        cc__free(ctx, sorted);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_comm_create %s: the world was aborted (rank %d failed)", list, ar);
    }
    /* this rank's instance number for the member set: groups of the set it already joined */
    for (k = 0; k < w->n_groups; k++) {
        cc__world_group* h = w->groups[k];
        int joined;
        if (h->n != n || memcmp(h->sorted, sorted, (size_t)n * sizeof(int)) != 0) continue;
        pthread_mutex_lock(&h->mu);
        for (i = 0; i < n; i++) if (h->members[i] == rank->index) break;
        joined = h->joined[i];
        pthread_mutex_unlock(&h->mu);
        if (joined) instance++;
        else if (!g || h->instance < g->instance) g = h;   /* the oldest one not yet joined */
    }
    CONCERTO_ASSERT(!g || g->instance == instance);   /* instances are joined in order */
    if (g && g->instance != instance) g = NULL;
    if (g) {
        pthread_mutex_lock(&g->mu);
        if (memcmp(g->members, members, (size_t)n * sizeof(int)) != 0) {
            char text[CONCERTO__MSG_MAX];
            int first = -1;
            for (i = 0; i < n; i++) if (g->joined[i]) { first = g->members[i]; break; }
            cc__fmt(text, sizeof text, "cc_comm_create: rank %d gave members %s, rank %d gave %s for the same "
                     "communicator (creation #%d of this set of ranks): every member must give the same list",
                     rank->index, list, first, g->name, instance);
            cc__world_poison(g, CC_ERR_COLL_MISMATCH, CONCERTO__WORLD_SITE_GROUP, (uint64_t)-1, text);
            for (i = 0; i < n; i++)   /* this creation is used up: the rank's next one pairs with the next group */
                if (g->members[i] == rank->index) g->joined[i] = 1;
            pthread_mutex_unlock(&g->mu);
            pthread_mutex_unlock(&w->mu);
            cc__free(ctx, sorted);
            return CONCERTO__FAIL(ctx, CC_ERR_COLL_MISMATCH, "%s", text);
        }
        for (i = 0; i < n; i++) if (g->members[i] == rank->index) break;
        g->joined[i] = 1;
        *out = &g->views[i].comm;
        pthread_mutex_unlock(&g->mu);
    } else if (!CONCERTO__GROW(w->ctx, w->groups, w->cap_groups, w->n_groups + 1)) {
        r = CC_ERR_OUT_OF_MEMORY;
    } else {
        g = cc__world_group_new(w, members, n);
        if (!g) r = CC_ERR_OUT_OF_MEMORY;
        else {
            g->instance = instance;
            g->joined[me] = 1;   /* nobody else can see it yet */
            w->groups[w->n_groups++] = g;
            *out = &g->views[me].comm;
        }
    }
    pthread_mutex_unlock(&w->mu);
    cc__free(ctx, sorted);
    if (r != CC_OK) return CONCERTO__FAIL(ctx, r, "cc_comm_create %s: out of memory", list);
    return CC_OK;
}

/* >>backend_cpu
   One worker thread per stream runs its queue in order. Events are
   counters: a record enqueued as the k-th record of an event sets its
   completed count to k when the stream reaches it; a wait enqueued after
   the k-th record blocks its stream until completed >= k (CUDA's
   semantics). One mutex and condition variable per backend guard all of
   it. After a failure the streams skip the remaining work but still pass
   records and timestamps, so no stream waits forever; synchronize reports
   the first failure. */

enum { CC__CPU_FN, CC__CPU_COLL, CC__CPU_RECORD, CC__CPU_WAIT, CC__CPU_STAMP };

typedef struct cc__cpu_event {
    uint64_t enqueued, completed;
} cc__cpu_event;

typedef struct cc__cpu_item {
    int kind;
    cc_op_fn fn;
    void* user_data;
    const cc_collective* coll;
    cc__cpu_event* ev;
    uint64_t value;
    double* where;
} cc__cpu_item;

typedef struct cc__cpu_backend cc__cpu_backend;

typedef struct cc__cpu_stream {
    cc__cpu_backend* be;
    int index;                 /* the executor's stream index */
    pthread_t thread;
    int started;
    cc__cpu_item* ring;
    size_t cap, head, tail;    /* head: next to run; tail: next free (monotonic) */
    int busy;                  /* running an item outside the lock */
} cc__cpu_stream;

struct cc__cpu_backend {
    cc_rank* rank;
    cc_context* ctx;           /* the rank's context: used from the host thread only */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    cc__cpu_stream** streams;
    int n_streams;
    size_t streams_cap;
    cc_result err;             /* first failure since the last synchronize */
    char err_msg[CONCERTO__MSG_MAX];
};


static void* cc__cpu_worker(void* arg) {
    cc__cpu_stream* s = (cc__cpu_stream*)arg;
    cc__cpu_backend* be = s->be;
    if (be->rank && be->rank->world->desc.thread_start)
        be->rank->world->desc.thread_start(be->rank->index, s->index, be->rank->world->desc.thread_start_user);
    pthread_mutex_lock(&be->mu);
    for (;;) {
        cc__cpu_item it;
        while (!be->stop && s->head == s->tail) pthread_cond_wait(&be->cv, &be->mu);
        if (s->head == s->tail) break;   /* stopping and drained */
        it = s->ring[s->head % s->cap];
        if (it.kind == CC__CPU_WAIT) {
            while (it.ev->completed < it.value && !be->stop) pthread_cond_wait(&be->cv, &be->mu);
            s->head++;
            pthread_cond_broadcast(&be->cv);
            continue;
        }
        if (it.kind == CC__CPU_RECORD) {
            if (it.value > it.ev->completed) it.ev->completed = it.value;
            s->head++;
            pthread_cond_broadcast(&be->cv);
            continue;
        }
        s->busy = 1;
        {
            int failed = be->err != CC_OK;
            pthread_mutex_unlock(&be->mu);
            if (it.kind == CC__CPU_STAMP) *it.where = 1e6 * cc__now_s();
            else if (!failed && it.kind == CC__CPU_FN) it.fn((void*)s, it.user_data);
            else if (!failed && it.kind == CC__CPU_COLL) {
                char msg[CONCERTO__MSG_MAX];
                cc_result r;
                msg[0] = 0;
                r = it.coll->comm->fns->collective(it.coll->comm->self, NULL, it.coll, msg, sizeof msg);
                if (r != CC_OK) {
                    pthread_mutex_lock(&be->mu);
                    if (be->err == CC_OK) {
                        be->err = r;
                        memcpy(be->err_msg, msg, sizeof msg);
                    }
                    pthread_mutex_unlock(&be->mu);
                    /* peers may be waiting in a collective this rank will not
                       issue: a family that can abort its communicator does */
                    if (it.coll->comm->fns->abort) it.coll->comm->fns->abort(it.coll->comm->self, msg);
                }
            }
            pthread_mutex_lock(&be->mu);
        }
        s->busy = 0;
        s->head++;
        pthread_cond_broadcast(&be->cv);
    }
    pthread_mutex_unlock(&be->mu);
    return NULL;
}

static cc_result cc__cpu_push(cc__cpu_backend* be, void* stream, const cc__cpu_item* it) {
    cc__cpu_stream* s = (cc__cpu_stream*)stream;
    pthread_mutex_lock(&be->mu);
    if (s->tail - s->head == s->cap) {
        /* grow the ring (only until it holds a step) */
        size_t nc = s->cap * 2, i;
        cc__cpu_item* nr = (cc__cpu_item*)cc__alloc(be->ctx, nc * sizeof *nr);
        if (!nr) { pthread_mutex_unlock(&be->mu); return CC_ERR_OUT_OF_MEMORY; }
        for (i = s->head; i < s->tail; i++) nr[i % nc] = s->ring[i % s->cap];
        cc__free(be->ctx, s->ring);
        s->ring = nr;
        s->cap = nc;
    }
    s->ring[s->tail % s->cap] = *it;
    s->tail++;
    pthread_cond_broadcast(&be->cv);
    pthread_mutex_unlock(&be->mu);
    return CC_OK;
}

static cc_result cc__cpu_stream_create(void* self, int index, void** out) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_stream* s = (cc__cpu_stream*)cc__calloc(be->ctx, 1, sizeof *s);
    if (!s) return CC_ERR_OUT_OF_MEMORY;
    s->be = be;
    s->index = index;
    s->cap = 256;
    s->ring = (cc__cpu_item*)cc__alloc(be->ctx, s->cap * sizeof *s->ring);
    if (!s->ring) { cc__free(be->ctx, s); return CC_ERR_OUT_OF_MEMORY; }
    pthread_mutex_lock(&be->mu);
    if (!CONCERTO__GROW(be->ctx, be->streams, be->streams_cap, (size_t)be->n_streams + 1)) {
        pthread_mutex_unlock(&be->mu);
        cc__free(be->ctx, s->ring); cc__free(be->ctx, s);
        return CC_ERR_OUT_OF_MEMORY;
    }
    be->streams[be->n_streams++] = s;
    pthread_mutex_unlock(&be->mu);
    if (pthread_create(&s->thread, NULL, cc__cpu_worker, s) != 0) {
        pthread_mutex_lock(&be->mu);
        be->n_streams--;
        pthread_mutex_unlock(&be->mu);
        cc__free(be->ctx, s->ring); cc__free(be->ctx, s);
        return CC_ERR_BACKEND;
    }
    s->started = 1;
    *out = s;
    return CC_OK;
}

/* Streams live until the backend is destroyed; destroying one drains it. */
static void cc__cpu_stream_destroy(void* self, void* stream) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_stream* s = (cc__cpu_stream*)stream;
    pthread_mutex_lock(&be->mu);
    while (s->head != s->tail) pthread_cond_wait(&be->cv, &be->mu);
    pthread_mutex_unlock(&be->mu);
}

static cc_result cc__cpu_launch(void* self, void* stream, cc_op_fn fn, void* user_data) {
    cc__cpu_item it;
    memset(&it, 0, sizeof it);
    it.kind = CC__CPU_FN; it.fn = fn; it.user_data = user_data;
    return cc__cpu_push((cc__cpu_backend*)self, stream, &it);
}

/* A copy (cc_copy2d) on the stream's thread, row by row. */
static void cc__cpu_copy_run(void* stream, void* user_data) {
    const cc_copy2d* c = (const cc_copy2d*)user_data;
    size_t r;
    (void)stream;
    for (r = 0; r < c->height; r++) memcpy((char*)c->dst + r * c->dst_pitch, (const char*)c->src + r * c->src_pitch, c->width);
}

static cc_result cc__cpu_copy(void* self, void* stream, const cc_copy2d* copy) {
    return cc__cpu_launch(self, stream, cc__cpu_copy_run, (void*)(uintptr_t)copy);
}

/* Communicators whose collectives run on host threads; of the world's, only
   this rank's (a collective on another rank's view would run as that rank). */
static cc_result cc__cpu_collective(void* self, void* stream, const cc_collective* coll) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_item it;
    const cc__world_view* v;
    if (!coll || !coll->comm)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cpu backend: a collective %s", coll ? "without a communicator" : "descriptor is NULL");
    if (strcmp(cc__comm_stream_kind(coll->comm), "host") != 0)
        return CONCERTO__FAIL(be->ctx, CC_ERR_UNSUPPORTED, "cpu backend: %s on communicator %s of family '%s', which runs on "
                              "'%s' streams, not host threads", cc__coll_name(coll->kind), coll->comm->name,
                              cc_comm_family(coll->comm), cc__comm_stream_kind(coll->comm));
    v = (const cc__world_view*)cc_comm_self(coll->comm, &cc__world_comm_fns);
    if (v && !be->rank)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cpu backend made by cc_cpu_backend_create_ctx: %s on communicator "
                              "%s of the in-process world (rank %d): make the backend with cc_cpu_backend_create(rank)",
                              cc__coll_name(coll->kind), v->g->name, v->rank->index);
    if (v && v->rank != be->rank)
        return CONCERTO__FAIL(be->ctx, CC_ERR_INVALID_ARG, "cpu backend of rank %d: %s on communicator %s of rank %d, not this rank's",
                              be->rank->index, cc__coll_name(coll->kind), v->g->name, v->rank->index);
    memset(&it, 0, sizeof it);
    it.kind = CC__CPU_COLL; it.coll = coll;
    return cc__cpu_push(be, stream, &it);
}

static cc_result cc__cpu_event_create(void* self, void** out) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_event* e = (cc__cpu_event*)cc__calloc(be->ctx, 1, sizeof *e);
    if (!e) return CC_ERR_OUT_OF_MEMORY;
    *out = e;
    return CC_OK;
}

static void cc__cpu_event_destroy(void* self, void* ev) { cc__free(((cc__cpu_backend*)self)->ctx, ev); }

static cc_result cc__cpu_event_record(void* self, void* ev, void* stream) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_item it;
    memset(&it, 0, sizeof it);
    it.kind = CC__CPU_RECORD; it.ev = (cc__cpu_event*)ev;
    pthread_mutex_lock(&be->mu);
    it.value = ++it.ev->enqueued;
    pthread_mutex_unlock(&be->mu);
    return cc__cpu_push(be, stream, &it);
}

static cc_result cc__cpu_stream_wait_event(void* self, void* stream, void* ev) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc__cpu_item it;
    memset(&it, 0, sizeof it);
    it.kind = CC__CPU_WAIT; it.ev = (cc__cpu_event*)ev;
    pthread_mutex_lock(&be->mu);
    it.value = it.ev->enqueued;
    pthread_mutex_unlock(&be->mu);
    return cc__cpu_push(be, stream, &it);
}

static cc_result cc__cpu_timestamp(void* self, void* stream, double* where) {
    cc__cpu_item it;
    memset(&it, 0, sizeof it);
    it.kind = CC__CPU_STAMP; it.where = where;
    return cc__cpu_push((cc__cpu_backend*)self, stream, &it);
}

static cc_result cc__cpu_synchronize(void* self) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    cc_result rc;
    char msg[CONCERTO__MSG_MAX];
    int i, idle = 0;
    pthread_mutex_lock(&be->mu);
    while (!idle) {
        idle = 1;
        for (i = 0; i < be->n_streams; i++) if (be->streams[i]->head != be->streams[i]->tail) idle = 0;
        if (!idle) pthread_cond_wait(&be->cv, &be->mu);
    }
    rc = be->err;
    memcpy(msg, be->err_msg, sizeof msg);
    be->err = CC_OK;
    be->err_msg[0] = 0;
    pthread_mutex_unlock(&be->mu);
    if (rc != CC_OK) return CONCERTO__FAIL(be->ctx, rc, "%s", msg);
    return CC_OK;
}

static double cc__cpu_now_us(void* self) { (void)self; return 1e6 * cc__now_s(); }

static void cc__cpu_destroy(void* self) {
    cc__cpu_backend* be = (cc__cpu_backend*)self;
    int i;
    if (!be) return;
    pthread_mutex_lock(&be->mu);
    be->stop = 1;
    pthread_cond_broadcast(&be->cv);
    pthread_mutex_unlock(&be->mu);
    for (i = 0; i < be->n_streams; i++) {
        if (be->streams[i]->started) pthread_join(be->streams[i]->thread, NULL);
        cc__free(be->ctx, be->streams[i]->ring);
        cc__free(be->ctx, be->streams[i]);
    }
    cc__free(be->ctx, be->streams);
    pthread_cond_destroy(&be->cv);
    pthread_mutex_destroy(&be->mu);
    cc__free(be->ctx, be);
}

static const cc_backend_fns cc__cpu_backend_fns = {
    "cpu", "host",
    cc__cpu_stream_create, cc__cpu_stream_destroy, cc__cpu_launch, cc__cpu_collective,
    cc__cpu_event_create, cc__cpu_event_destroy, cc__cpu_event_record, cc__cpu_stream_wait_event,
    cc__cpu_timestamp, cc__cpu_synchronize, cc__cpu_now_us,
    NULL, NULL, NULL,   /* host memory serves the executor's collectives */
    NULL, NULL, NULL,   /* no step hooks, no labels */
    cc__cpu_destroy,
    cc__cpu_copy
};

/* rank: NULL for a backend of a process that is one rank (no world). */
static cc_result cc__cpu_backend_make(cc_context* ctx, cc_rank* rank, const char* what, cc_backend* out) {
    cc__cpu_backend* be;
    memset(out, 0, sizeof *out);
    be = (cc__cpu_backend*)cc__calloc(ctx, 1, sizeof *be);
    if (!be) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    be->rank = rank;
    be->ctx = ctx;
    if (pthread_mutex_init(&be->mu, NULL) != 0) { cc__free(ctx, be); return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "%s: mutex", what); }
    if (pthread_cond_init(&be->cv, NULL) != 0) {
        pthread_mutex_destroy(&be->mu);
        cc__free(ctx, be);
        return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "%s: condition variable", what);
    }
    out->fns = &cc__cpu_backend_fns;
    out->self = be;
    return CC_OK;
}

CONCERTO_API cc_result cc_cpu_backend_create(cc_rank* rank, cc_backend* out) {
    if (!rank || !out) return CC_ERR_INVALID_ARG;
    return cc__cpu_backend_make(cc_rank_context(rank), rank, "cc_cpu_backend_create", out);
}

CONCERTO_API cc_result cc_cpu_backend_create_ctx(cc_context* ctx, cc_backend* out) {
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_cpu_backend_create_ctx: out is NULL");
    return cc__cpu_backend_make(ctx, NULL, "cc_cpu_backend_create_ctx", out);
}

#endif /* CONCERTO_NO_RUNTIME */

/* >>trace
   Chrome trace JSON and Graphviz DOT. cc_trace_add may be called from the
   ranks' threads at once (a mutex; in a CONCERTO_NO_RUNTIME build, which
   has no threads, none). */
#ifdef CONCERTO_NO_RUNTIME
#define CONCERTO__TRACE_LOCK(t) ((void)0)
#define CONCERTO__TRACE_UNLOCK(t) ((void)0)
#else
#define CONCERTO__TRACE_LOCK(t) pthread_mutex_lock(&(t)->mu)
#define CONCERTO__TRACE_UNLOCK(t) pthread_mutex_unlock(&(t)->mu)
#endif

typedef struct cc__tev {
    uint32_t name;             /* into names */
    int pid, tid;
    double ts, dur;
    int coll_kind;
    uint64_t coll_bytes;
} cc__tev;

struct cc_trace {
    cc_context* ctx;
#ifndef CONCERTO_NO_RUNTIME
    pthread_mutex_t mu;
#endif
    cc__tev* ev; size_t n_ev, ev_cap;
    cc__strpool names;
    struct { int pid; uint32_t name; int n_streams; uint32_t stream_name[CONCERTO_MAX_RESOURCES]; }* procs;
    size_t n_procs, procs_cap;
};

static int cc__trace_str(cc_trace* t, const char* str, uint32_t* off) {
    return cc__strpool_add(t->ctx, &t->names, str, strlen(str), off);
}

CONCERTO_API cc_result cc_trace_create(cc_context* ctx, cc_trace** out) {
    cc_trace* t;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_trace_create: out is NULL");
    t = (cc_trace*)cc__calloc(ctx, 1, sizeof *t);
    if (!t) return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_trace_create: out of memory");
    t->ctx = ctx;
#ifndef CONCERTO_NO_RUNTIME
    if (pthread_mutex_init(&t->mu, NULL) != 0) { cc__free(ctx, t); return CONCERTO__FAIL(ctx, CC_ERR_BACKEND, "cc_trace_create: mutex"); }
#endif
    *out = t;
    return CC_OK;
}

CONCERTO_API void cc_trace_destroy(cc_trace* t) {
    if (!t) return;
#ifndef CONCERTO_NO_RUNTIME
    pthread_mutex_destroy(&t->mu);
#endif
    cc__free(t->ctx, t->ev); cc__free(t->ctx, t->names.s); cc__free(t->ctx, t->procs);
    cc__free(t->ctx, t);
}

CONCERTO_API cc_result cc_trace_add(cc_trace* t, cc_graph* g, int pid, const char* process_name,
                                    const double* start_us, const double* end_us) {
    cc_result rc = CC_OK;
    int i, r;
    if (!t) return CC_ERR_INVALID_ARG;
    if (!g || !start_us) return CONCERTO__FAIL(t->ctx, CC_ERR_INVALID_ARG, "cc_trace_add: graph or start_us is NULL");
    CONCERTO__TRACE_LOCK(t);
    if (!CONCERTO__GROW(t->ctx, t->procs, t->procs_cap, t->n_procs + 1)) goto oom;
    t->procs[t->n_procs].pid = pid;
    t->procs[t->n_procs].n_streams = g->k;
    if (!cc__trace_str(t, process_name ? process_name : "process", &t->procs[t->n_procs].name)) goto oom;
    for (r = 0; r < g->k; r++)
        if (!cc__trace_str(t, cc_graph_resource_name(g, r), &t->procs[t->n_procs].stream_name[r])) goto oom;
    t->n_procs++;
    for (i = 0; i < g->n; i++) {
        cc__tev* e;
        const cc_collective* c = g->coll_of ? cc__op_coll(g, i) : NULL;
        if (!CONCERTO__GROW(t->ctx, t->ev, t->ev_cap, t->n_ev + 1)) goto oom;
        e = &t->ev[t->n_ev];
        if (!cc__trace_str(t, cc__name(g, i), &e->name)) goto oom;
        e->pid = pid;
        e->tid = cc__op_stream(g, i) > 0 ? cc__op_stream(g, i) : 0;
        e->ts = start_us[i];
        e->dur = end_us ? end_us[i] - start_us[i] : g->dur_us[i];
        if (e->dur < 0) e->dur = 0;
        e->coll_kind = c ? (int)c->kind : 0;
        e->coll_bytes = c ? (uint64_t)c->n_elems * cc__dtype_size(c->dtype) : 0;
        t->n_ev++;
    }
    CONCERTO__TRACE_UNLOCK(t);
    return rc;
oom:
    CONCERTO__TRACE_UNLOCK(t);
    return CONCERTO__FAIL(t->ctx, CC_ERR_OUT_OF_MEMORY, "cc_trace_add: out of memory");
}

/* Writes s as a JSON string body (quotes and control characters escaped). */
static void cc__json_str(FILE* f, const char* s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
}

CONCERTO_API cc_result cc_trace_write(cc_trace* t, const char* path) {
    cc__afile af;
    cc_result rc;
    FILE* f;
    size_t i;
    int r, first = 1;
    if (!t) return CC_ERR_INVALID_ARG;
    if (!path) return CONCERTO__FAIL(t->ctx, CC_ERR_INVALID_ARG, "cc_trace_write: path is NULL");
    if ((rc = cc__afile_open(t->ctx, &af, path, "cc_trace_write")) != CC_OK) return rc;
    f = af.f;
    CONCERTO__TRACE_LOCK(t);
    fprintf(f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    for (i = 0; i < t->n_procs; i++) {
        fprintf(f, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"", first ? "" : ",\n", t->procs[i].pid);
        first = 0;
        cc__json_str(f, t->names.s + t->procs[i].name);
        fprintf(f, "\"}}");
        for (r = 0; r < t->procs[i].n_streams; r++) {
            fprintf(f, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"", t->procs[i].pid, r);
            cc__json_str(f, t->names.s + t->procs[i].stream_name[r]);
            fprintf(f, "\"}}");
        }
    }
    for (i = 0; i < t->n_ev; i++) {
        const cc__tev* e = &t->ev[i];
        fprintf(f, "%s{\"ph\":\"X\",\"name\":\"", first ? "" : ",\n");
        first = 0;
        cc__json_str(f, t->names.s + e->name);
        fprintf(f, "\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f", e->pid, e->tid, e->ts, e->dur);
        if (e->coll_kind)
            fprintf(f, ",\"cat\":\"comm\",\"args\":{\"collective\":\"%s\",\"bytes\":%llu}", cc__coll_name((cc_coll_kind)e->coll_kind),
                    (unsigned long long)e->coll_bytes);
        else fprintf(f, ",\"cat\":\"compute\"");
        fprintf(f, "}");
    }
    fprintf(f, "\n]}\n");
    CONCERTO__TRACE_UNLOCK(t);
    return cc__afile_commit(t->ctx, &af, "cc_trace_write");
}

CONCERTO_API cc_result cc_graph_write_dot(cc_context* ctx, cc_graph* g, const char* path) {
    cc__afile af;
    FILE* f;
    int i, r, e;
    cc_result rc;
    if ((rc = cc__graph_args(ctx, g, "cc_graph_write_dot")) != CC_OK) return rc;
    if (!path) return CONCERTO__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_write_dot: path is NULL");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    if ((rc = cc__afile_open(ctx, &af, path, "cc_graph_write_dot")) != CC_OK) return rc;
    f = af.f;
    fprintf(f, "digraph step {\n  rankdir=LR;\n  node [shape=box, fontsize=10];\n");
    for (r = -1; r < g->k; r++) {
        if (r >= 0) {
            fprintf(f, "  subgraph cluster_%d {\n    label=\"", r);
            cc__json_str(f, cc_graph_resource_name(g, r));
            fprintf(f, "\";\n");
        }
        for (i = 0; i < g->n; i++) {
            if (cc__op_stream(g, i) != r) continue;
            fprintf(f, "    n%d [label=\"", i);
            cc__json_str(f, cc__name(g, i));
            fprintf(f, "\\n%.1f us\"%s];\n", g->dur_us[i], g->coll_of && cc__op_coll(g, i) ? ", style=filled, fillcolor=lightblue" : "");
        }
        if (r >= 0) fprintf(f, "  }\n");
    }
    for (i = 0; i < g->n; i++)
        for (e = g->succ_off[i]; e < g->succ_off[i + 1]; e++) fprintf(f, "  n%d -> n%d;\n", i, g->succ[e]);
    fprintf(f, "}\n");
    return cc__afile_commit(ctx, &af, "cc_graph_write_dot");
}
#undef CONCERTO__TRACE_LOCK
#undef CONCERTO__TRACE_UNLOCK

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_IMPLEMENTATION */

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
