/* concerto.h - automatic communication scheduling for distributed training steps
   in plain C. Single header, no dependencies beyond the C standard library.

   DO THIS in exactly one C or C++ file:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"

   and include "concerto.h" without the define everywhere else.

   WHAT IT DOES
   A training step is described as a graph of operations. Each operation has a
   duration and a demand on renewable resources: by default one of a few named
   streams (a compute stream and one or more communication streams, each of
   capacity 1), in general a demand vector over K resources with capacities,
   so that PSPLIB project-scheduling instances fit too. Dependencies are given
   explicitly or derived from the buffer regions each operation reads and
   writes. The scheduler solves the resulting resource-constrained project
   scheduling problem (RCPSP) for a short makespan (step time):

       cc_context* ctx;  cc_graph* g;  cc_schedule s;
       cc_context_create(NULL, &ctx);
       cc_graph_create(ctx, NULL, &g);                 // streams "compute", "comm"
       cc_op_desc d = cc_op_desc_default();
       d.name = "matmul"; d.duration_us = 120; d.stream = CC_STREAM_COMPUTE;
       ...  cc_graph_add_op(g, &d, &op);
       cc_sched_desc sd = cc_sched_desc_default();
       if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) puts(cc_last_error(ctx));
       ... s.start_us[i], s.order[], s.makespan_us, s.lower_bound_us ...
       cc_schedule_release(ctx, &s);
       cc_graph_destroy(g);  cc_context_destroy(ctx);

   OPTIONS (define before including)
       CONCERTO_STATIC          all functions static: embed a private copy per
                                translation unit (use with the implementation)
       CONCERTO_API             override the declaration prefix (default extern)
       CONCERTO_ASSERT(x)       internal consistency checks (default: none)

   Errors: every function that can fail returns a cc_result (0 = CC_OK,
   negative ranges per area) and records a message naming the operation,
   buffer or input line at fault in its context: cc_last_error(ctx). The
   library never exits, aborts or prints; an optional logger receives the
   messages. All memory goes through the context's allocator.

   Time: durations are given in microseconds (double), rounded to the
   nearest nanosecond and scheduled on that integer grid, so schedules are
   exact and the same on every machine.

   Determinism: a solve depends only on the graph and the desc. Budgets are
   counted in schedules generated and search nodes, never in time, unless a
   time limit is set explicitly (then the result may depend on machine load).

   CONTENTS (grep for the markers)
       >>api          public declarations
       >>core         context, allocation, errors
       >>graph        operations, buffers, derived dependencies, validation
       >>prob         the internal RCPSP form of a graph, lower bounds
       >>sgs          schedule-generation schemes, priority rules, improvement
       >>bnb          exact branch and bound
       >>oddeven      odd-even windows for large graphs
       >>sched        cc_sched_solve: the strategy that ties them together
       >>check        independent schedule checker
       >>sim          stream simulator
       >>psplib       PSPLIB .sm reader and writer
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
   files and parsing -300.. . cc_result_description() gives the text. */
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

CONCERTO_API cc_context_desc cc_context_desc_default(void);
/* desc may be NULL for the defaults. *out is owned by the caller. */
CONCERTO_API cc_result   cc_context_create(const cc_context_desc* desc, cc_context** out);
CONCERTO_API void        cc_context_destroy(cc_context* ctx);
/* The message of the last failure in this context ("" if none). Borrowed,
   valid until the next failing call on the context. */
CONCERTO_API const char* cc_last_error(const cc_context* ctx);
CONCERTO_API cc_result   cc_last_result(const cc_context* ctx);
CONCERTO_API void        cc_clear_error(cc_context* ctx);

/* ---- graph --------------------------------------------------------------
   Handles are typed ids; id 0 is invalid. */
typedef struct cc_graph cc_graph;
typedef struct cc_op { uint32_t id; } cc_op;
typedef struct cc_buffer { uint32_t id; } cc_buffer;

typedef struct cc_region {
    cc_buffer buffer;
    uint64_t offset_bytes;
    uint64_t n_bytes;
} cc_region;

enum {
    CC_STREAM_COMPUTE = 0,   /* the default stream of an operation */
    CC_STREAM_COMM = 1,      /* first communication stream */
    CC_NO_STREAM = -1        /* the operation uses no resource */
};

#define CONCERTO_MAX_RESOURCES 64

typedef struct cc_graph_desc {
    /* Stream mode (n_resources == 0): n_streams streams of capacity 1;
       stream 0 is "compute", the others "comm", "comm1", ... (default 2). */
    int n_streams;
    const char* const* stream_names;  /* optional, n_streams entries */
    /* General mode (n_resources > 0): K renewable resources. */
    int n_resources;
    const int* capacities;            /* [n_resources], each >= 0 */
    const char* const* resource_names;/* optional */
} cc_graph_desc;

typedef struct cc_op_desc {
    const char* name;          /* copied; NULL gives "op<index>" */
    double duration_us;        /* >= 0 and finite */
    int stream;                /* resource index with demand 1, or CC_NO_STREAM */
    const int* demands;        /* optional: demand on every resource (overrides stream) */
    const cc_region* reads;  int n_reads;
    const cc_region* writes; int n_writes;
    const cc_op* deps;       int n_deps;   /* must run after these */
    void* user_data;
} cc_op_desc;

CONCERTO_API cc_graph_desc cc_graph_desc_default(void);
CONCERTO_API cc_op_desc    cc_op_desc_default(void);

/* desc may be NULL (two streams). The graph is an arena freed in one call. */
CONCERTO_API cc_result cc_graph_create(cc_context* ctx, const cc_graph_desc* desc, cc_graph** out);
CONCERTO_API void      cc_graph_destroy(cc_graph* graph);
CONCERTO_API cc_context* cc_graph_context(const cc_graph* graph);
CONCERTO_API cc_result cc_graph_add_buffer(cc_graph* graph, const char* name, uint64_t n_bytes, cc_buffer* out);
/* Program order is the order of cc_graph_add_op calls: region dependencies
   (read-after-write, write-after-read, write-after-write) follow it. */
CONCERTO_API cc_result cc_graph_add_op(cc_graph* graph, const cc_op_desc* desc, cc_op* out);
CONCERTO_API cc_result cc_graph_add_dep(cc_graph* graph, cc_op before, cc_op after);
CONCERTO_API cc_result cc_op_set_duration(cc_graph* graph, cc_op op, double duration_us);
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
/* Direct predecessors (explicit and derived) after a successful validate.
   Returns their number; writes at most max of them. */
CONCERTO_API int         cc_op_preds(const cc_graph* graph, cc_op op, cc_op* out, int max);

/* ---- scheduler ----------------------------------------------------------*/
typedef enum cc_sched_method {
    CC_SCHED_AUTO = 0,    /* up to 200 ops: a short evolution (1000 schedules),
                             branch and bound, then the rest of the budget;
                             above: every priority rule once, each improved,
                             then odd-even windows */
    CC_SCHED_LIST,        /* one pass of the priority rule (+ improvement) */
    CC_SCHED_SAMPLING,    /* every rule, then biased random sampling and a genetic
                             algorithm on activity lists, all improved; on large
                             graphs every rule once, improved */
    CC_SCHED_BNB,         /* exact branch and bound within bnb_nodes */
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
    CC__PRIO_COUNT
} cc_priority;

typedef struct cc_sched_desc {
    cc_sched_method method;
    cc_sgs sgs;               /* default: serial for small graphs, parallel for large */
    cc_priority priority;     /* default: LFT */
    int improve_passes;       /* forward-backward passes per schedule; 0 default (2), < 0 none */
    int64_t budget_schedules; /* schedules generated by sampling; 0 default (5000) */
    uint64_t seed;            /* sampling seed */
    int64_t bnb_nodes;        /* branch-and-bound nodes; 0 default (200000 up to 32 ops,
                                 scaled by (32/n)^3 above), < 0 none */
    int window_ops;           /* odd-even block size b (windows of 2b ops); 0 default (8) */
    int rounds;               /* odd-even rounds k; 0 default (4), < 0 none */
    int window_nodes;         /* node budget per odd-even window; 0 default (300) */
    double time_limit_s;      /* 0: none. A limit makes results depend on machine speed */
} cc_sched_desc;

typedef struct cc_schedule {
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
    int64_t n_schedules;      /* schedules generated */
    int64_t n_nodes;          /* branch-and-bound nodes */
    double solve_ms;          /* processor time */
} cc_schedule;

CONCERTO_API cc_sched_desc cc_sched_desc_default(void);
/* Fills *out (owned by the caller: cc_schedule_release). On failure *out is
   left empty. The graph is validated first. */
CONCERTO_API cc_result cc_sched_solve(cc_context* ctx, cc_graph* graph, const cc_sched_desc* desc, cc_schedule* out);
CONCERTO_API void      cc_schedule_release(cc_context* ctx, cc_schedule* schedule);
/* Lower bounds of the graph: critical path, resource load. Either may be NULL. */
CONCERTO_API cc_result cc_lower_bounds(cc_context* ctx, cc_graph* graph, double* critical_path_us, double* resource_us);

/* Independent checker: start_us[i] for op index i. Verifies every
   dependency and every resource's capacity at every instant; on failure
   names the operations and the instant. makespan_us may be NULL. */
CONCERTO_API cc_result cc_schedule_check(cc_context* ctx, cc_graph* graph, const double* start_us, double* makespan_us);

/* Stream simulator: issue_order lists every op once; each stream runs its
   ops one after another in that order, each as soon as its dependencies are
   done; ops with no stream run as soon as their dependencies are done. Only
   for stream graphs (each op on at most one resource of capacity 1).
   start_us (by op index) may be NULL. */
CONCERTO_API cc_result cc_simulate(cc_context* ctx, cc_graph* graph, const cc_op* issue_order, int n,
                                   double* start_us, double* makespan_us);

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

#ifndef CONCERTO_ASSERT
#define CONCERTO_ASSERT(x) ((void)0)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>core */
#define CC__MSG_MAX 512

struct cc_context {
    cc_allocator alloc;
    cc_logger logger;
    int rank;
    cc_result last_result;
    char last_error[CC__MSG_MAX];
};

CONCERTO_API const char* cc_result_description(cc_result result) {
    switch (result) {
#define CONCERTO__RESULT_CASE(name, value, text) case name: return text;
        CONCERTO__RESULTS(CONCERTO__RESULT_CASE)
#undef CONCERTO__RESULT_CASE
        default: return "unknown result";
    }
}

static void* cc__default_alloc(size_t n, void* ud) { (void)ud; return malloc(n); }
static void* cc__default_realloc(void* p, size_t n, void* ud) { (void)ud; return realloc(p, n); }
static void  cc__default_free(void* p, void* ud) { (void)ud; free(p); }

CONCERTO_API cc_context_desc cc_context_desc_default(void) {
    cc_context_desc d;
    memset(&d, 0, sizeof d);
    return d;
}

static cc_result cc__fail(cc_context* ctx, cc_result code, const char* file, int line, const char* fmt, ...) {
    if (ctx) {
        va_list ap;
        int n;
        int pre = ctx->rank ? snprintf(ctx->last_error, CC__MSG_MAX, "rank %d: ", ctx->rank) : 0;
        if (pre < 0) pre = 0;
        va_start(ap, fmt);
        n = vsnprintf(ctx->last_error + pre, (size_t)(CC__MSG_MAX - pre), fmt, ap);
        va_end(ap);
        if (n >= 0) n += pre;
        if (n >= 0 && n < CC__MSG_MAX)
            snprintf(ctx->last_error + n, (size_t)(CC__MSG_MAX - n), " (%s, %s:%d)",
                     cc_result_description(code), file, line);
        ctx->last_result = code;
        if (ctx->logger.log_fn) ctx->logger.log_fn(CC_LOG_ERROR, ctx->last_error, ctx->logger.user_data);
    }
    return code;
}
#define CC__FAIL(ctx, code, ...) cc__fail((ctx), (code), __FILE__, __LINE__, __VA_ARGS__)

CONCERTO_API cc_result cc_context_create(const cc_context_desc* desc, cc_context** out) {
    cc_context_desc d = desc ? *desc : cc_context_desc_default();
    cc_context* ctx;
    int n_set;
    if (!out) return CC_ERR_INVALID_ARG;
    *out = NULL;
    n_set = (d.allocator.alloc_fn != NULL) + (d.allocator.realloc_fn != NULL) + (d.allocator.free_fn != NULL);
    if (n_set != 0 && n_set != 3) return CC_ERR_INVALID_ARG;  /* all-or-none */
    if (n_set == 0) {
        d.allocator.alloc_fn = cc__default_alloc;
        d.allocator.realloc_fn = cc__default_realloc;
        d.allocator.free_fn = cc__default_free;
        d.allocator.user_data = NULL;
    }
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
    np = ctx->alloc.realloc_fn(*pp, nc * sz, ctx->alloc.user_data);
    if (!np) return 0;
    *pp = np;
    *cap = nc;
    return 1;
}
#define CC__GROW(ctx, arr, capv, need) cc__grow((ctx), (void**)&(arr), &(capv), (need), sizeof *(arr))

static double cc__cpu_s(void) { return (double)clock() / (double)CLOCKS_PER_SEC; }

/* 64-bit splitmix / xorshift generator: the same stream on every platform. */
static uint64_t cc__rng_next(uint64_t* s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double cc__rng_unit(uint64_t* s) { return (double)(cc__rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }

/* >>impl_marker: the remaining sections follow */
/* >>prob
   The internal form every solver works on: n jobs, K renewable resources,
   integer durations (1 tick = 1 ns), demands, both adjacency lists, and for
   sub-problems (odd-even windows) release times, deadlines and a fixed
   occupation of the resources by jobs outside the problem. */
typedef int64_t cc__time;
#define CC__TIME_MAX ((cc__time)INT64_MAX / 4)
#define CC__TICKS_PER_US 1000.0

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
} cc__prob;

/* Result of an exact search (see >>bnb). */
typedef struct cc__bnb_result {
    cc__time makespan;          /* of best (CC__TIME_MAX if none found) */
    cc__time lower_bound;       /* proven lower bound on the optimum */
    int proven;                 /* 1: makespan is optimal (or infeasible proven when none found) */
    int64_t nodes;
} cc__bnb_result;

/* Exact branch and bound, see >>bnb. best[] holds the incumbent on entry
   (have_incumbent) and the best schedule found on return. */
static cc_result cc__bnb_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                               int64_t node_budget, double time_limit_s, cc__bnb_result* res);

/* >>graph */
typedef struct cc__access {
    uint32_t op, buffer;        /* indices */
    uint64_t offset, n_bytes;
    int is_write;
} cc__access;

struct cc_graph {
    cc_context* ctx;
    int k;                      /* resources */
    int stream_mode;            /* 1: every resource is a stream of capacity 1 */
    int32_t cap[CONCERTO_MAX_RESOURCES];
    uint32_t res_name[CONCERTO_MAX_RESOURCES];   /* offsets into strs */
    /* ops, structure of arrays */
    int n;  size_t ops_cap;
    cc__time* dur;              /* ticks */
    double* dur_us;
    int32_t* dem;               /* [n*k] */
    uint32_t* name;             /* offsets into strs */
    void** user_data;
    size_t dem_cap, dur_us_cap, name_cap, ud_cap;
    /* explicit edges */
    int* e_from; int* e_to; size_t n_e, e_from_cap, e_to_cap;
    /* buffer accesses in program order */
    cc__access* acc; size_t n_acc, acc_cap;
    /* buffers */
    uint64_t* buf_bytes; uint32_t* buf_name; int n_buf; size_t buf_cap, buf_name_cap;
    /* string pool */
    char* strs; size_t strs_len, strs_cap;
    /* derived after validate */
    int valid;
    int *pred_off, *pred, *succ_off, *succ;
    int* topo;                  /* a topological order */
    size_t n_edges;
};

CONCERTO_API cc_graph_desc cc_graph_desc_default(void) {
    cc_graph_desc d;
    memset(&d, 0, sizeof d);
    d.n_streams = 2;
    return d;
}
CONCERTO_API cc_op_desc cc_op_desc_default(void) {
    cc_op_desc d;
    memset(&d, 0, sizeof d);
    return d;
}

static int cc__strpush(cc_graph* g, const char* s, size_t len, uint32_t* off) {
    if (!CC__GROW(g->ctx, g->strs, g->strs_cap, g->strs_len + len + 1)) return 0;
    memcpy(g->strs + g->strs_len, s, len);
    g->strs[g->strs_len + len] = 0;
    *off = (uint32_t)g->strs_len;
    g->strs_len += len + 1;
    return 1;
}

static void cc__graph_invalidate(cc_graph* g) {
    cc_context* ctx = g->ctx;
    cc__free(ctx, g->pred_off); cc__free(ctx, g->pred);
    cc__free(ctx, g->succ_off); cc__free(ctx, g->succ);
    cc__free(ctx, g->topo);
    g->pred_off = g->pred = g->succ_off = g->succ = g->topo = NULL;
    g->valid = 0;
}

CONCERTO_API void cc_graph_destroy(cc_graph* g) {
    cc_context* ctx;
    if (!g) return;
    ctx = g->ctx;
    cc__graph_invalidate(g);
    cc__free(ctx, g->dur); cc__free(ctx, g->dur_us); cc__free(ctx, g->dem);
    cc__free(ctx, g->name); cc__free(ctx, g->user_data);
    cc__free(ctx, g->e_from); cc__free(ctx, g->e_to); cc__free(ctx, g->acc);
    cc__free(ctx, g->buf_bytes); cc__free(ctx, g->buf_name); cc__free(ctx, g->strs);
    cc__free(ctx, g);
}

CONCERTO_API cc_result cc_graph_create(cc_context* ctx, const cc_graph_desc* desc, cc_graph** out) {
    cc_graph_desc d = desc ? *desc : cc_graph_desc_default();
    cc_graph* g;
    int r;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: out is NULL");
    *out = NULL;
    if (d.n_resources < 0 || d.n_resources > CONCERTO_MAX_RESOURCES)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_resources must be 0..%d, got %d",
                        CONCERTO_MAX_RESOURCES, d.n_resources);
    if (d.n_resources > 0 && !d.capacities)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_resources = %d but capacities is NULL", d.n_resources);
    if (d.n_resources == 0) {
        if (d.n_streams == 0) d.n_streams = 2;
        if (d.n_streams < 1 || d.n_streams > CONCERTO_MAX_RESOURCES)
            return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: n_streams must be 1..%d, got %d",
                            CONCERTO_MAX_RESOURCES, d.n_streams);
    }
    for (r = 0; r < d.n_resources; r++)
        if (d.capacities[r] < 0)
            return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_create: resource %d has negative capacity %d", r, d.capacities[r]);
    g = (cc_graph*)cc__calloc(ctx, 1, sizeof *g);
    if (!g) return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_create: out of memory");
    g->ctx = ctx;
    g->stream_mode = d.n_resources == 0;
    g->k = g->stream_mode ? d.n_streams : d.n_resources;
    for (r = 0; r < g->k; r++) {
        char buf[32];
        const char* nm;
        const char* const* names = g->stream_mode ? d.stream_names : d.resource_names;
        g->cap[r] = g->stream_mode ? 1 : d.capacities[r];
        if (names && names[r]) nm = names[r];
        else {
            if (g->stream_mode) {
                if (r == 0) snprintf(buf, sizeof buf, "compute");
                else if (r == 1) snprintf(buf, sizeof buf, "comm");
                else snprintf(buf, sizeof buf, "comm%d", r - 1);
            } else snprintf(buf, sizeof buf, "R%d", r + 1);
            nm = buf;
        }
        if (!cc__strpush(g, nm, strlen(nm), &g->res_name[r])) {
            cc_graph_destroy(g);
            return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_create: out of memory");
        }
    }
    *out = g;
    return CC_OK;
}

CONCERTO_API cc_context* cc_graph_context(const cc_graph* g) { return g ? g->ctx : NULL; }
CONCERTO_API int cc_graph_n_ops(const cc_graph* g) { return g ? g->n : 0; }
CONCERTO_API int cc_graph_n_resources(const cc_graph* g) { return g ? g->k : 0; }
CONCERTO_API int cc_graph_capacity(const cc_graph* g, int r) { return (g && r >= 0 && r < g->k) ? g->cap[r] : -1; }
CONCERTO_API const char* cc_graph_resource_name(const cc_graph* g, int r) {
    return (g && r >= 0 && r < g->k) ? g->strs + g->res_name[r] : "";
}
CONCERTO_API cc_op cc_graph_op(const cc_graph* g, int index) {
    cc_op op;
    op.id = (g && index >= 0 && index < g->n) ? (uint32_t)index + 1 : 0;
    return op;
}
CONCERTO_API int cc_op_index(const cc_graph* g, cc_op op) {
    return (g && op.id >= 1 && op.id <= (uint32_t)g->n) ? (int)op.id - 1 : -1;
}
CONCERTO_API const char* cc_op_name(const cc_graph* g, cc_op op) {
    int i = cc_op_index(g, op);
    return i < 0 ? "<invalid op>" : g->strs + g->name[i];
}
static const char* cc__name(const cc_graph* g, int i) { return g->strs + g->name[i]; }
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
    return i < 0 ? NULL : g->user_data[i];
}

CONCERTO_API cc_result cc_graph_add_buffer(cc_graph* g, const char* name, uint64_t n_bytes, cc_buffer* out) {
    cc_context* ctx;
    char buf[32];
    uint32_t off;
    if (!g) return CC_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (!name) { snprintf(buf, sizeof buf, "buffer%d", g->n_buf); name = buf; }
    if (!CC__GROW(ctx, g->buf_bytes, g->buf_cap, (size_t)g->n_buf + 1) ||
        !CC__GROW(ctx, g->buf_name, g->buf_name_cap, (size_t)g->n_buf + 1) ||
        !cc__strpush(g, name, strlen(name), &off))
        return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "buffer '%s': out of memory", name);
    g->buf_bytes[g->n_buf] = n_bytes;
    g->buf_name[g->n_buf] = off;
    g->n_buf++;
    if (out) out->id = (uint32_t)g->n_buf;
    return CC_OK;
}

static int cc__duration_ticks(double us, cc__time* out) {
    if (!(us >= 0.0) || us > 1e12) return 0;   /* rejects NaN, negatives, infinities */
    *out = (cc__time)llround(us * CC__TICKS_PER_US);
    return 1;
}

static cc_result cc__check_region(cc_graph* g, const char* opname, const cc_region* rg, const char* what, int idx) {
    uint32_t b = rg->buffer.id;
    if (b < 1 || b > (uint32_t)g->n_buf)
        return CC__FAIL(g->ctx, CC_ERR_UNKNOWN_BUFFER, "op '%s': %s[%d] names unknown buffer id %u", opname, what, idx, (unsigned)b);
    if (rg->offset_bytes > g->buf_bytes[b - 1] || rg->n_bytes > g->buf_bytes[b - 1] - rg->offset_bytes)
        return CC__FAIL(g->ctx, CC_ERR_REGION,
                        "op '%s': %s[%d] = [%llu, +%llu) lies outside buffer '%s' of %llu bytes", opname, what, idx,
                        (unsigned long long)rg->offset_bytes, (unsigned long long)rg->n_bytes,
                        g->strs + g->buf_name[b - 1], (unsigned long long)g->buf_bytes[b - 1]);
    return CC_OK;
}

CONCERTO_API cc_result cc_graph_add_op(cc_graph* g, const cc_op_desc* d, cc_op* out) {
    cc_context* ctx;
    char namebuf[32];
    const char* nm;
    cc__time ticks;
    int r, i, k;
    size_t n1, need_acc, need_e;
    cc_result rc;
    if (!g) return CC_ERR_INVALID_ARG;
    ctx = g->ctx;
    if (!d) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_add_op: desc is NULL");
    if (out) out->id = 0;
    k = g->k;
    if (g->n >= 0x7ffffffe) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_graph_add_op: too many operations");
    if (d->name) nm = d->name;
    else { snprintf(namebuf, sizeof namebuf, "op%d", g->n); nm = namebuf; }
    /* validate everything before touching the graph */
    if (!cc__duration_ticks(d->duration_us, &ticks))
        return CC__FAIL(ctx, CC_ERR_BAD_DURATION, "op '%s': duration %g us is negative, NaN, infinite or above 1e12",
                        nm, d->duration_us);
    if (d->demands) {
        for (r = 0; r < k; r++) {
            if (d->demands[r] < 0)
                return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': negative demand %d on resource '%s'",
                                nm, d->demands[r], cc_graph_resource_name(g, r));
            if (d->demands[r] > g->cap[r])
                return CC__FAIL(ctx, CC_ERR_CAPACITY, "op '%s': demand %d on resource '%s' exceeds its capacity %d",
                                nm, d->demands[r], cc_graph_resource_name(g, r), g->cap[r]);
        }
    } else if (d->stream != CC_NO_STREAM) {
        if (d->stream < 0 || d->stream >= k)
            return CC__FAIL(ctx, CC_ERR_UNKNOWN_RESOURCE, "op '%s': stream %d does not exist (the graph has %d)",
                            nm, d->stream, k);
        if (g->cap[d->stream] < 1)
            return CC__FAIL(ctx, CC_ERR_CAPACITY, "op '%s': demand 1 on resource '%s' exceeds its capacity %d",
                            nm, cc_graph_resource_name(g, d->stream), g->cap[d->stream]);
    }
    if ((d->n_reads && !d->reads) || (d->n_writes && !d->writes) || (d->n_deps && !d->deps) ||
        d->n_reads < 0 || d->n_writes < 0 || d->n_deps < 0)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "op '%s': a reads/writes/deps count without its array", nm);
    for (i = 0; i < d->n_reads; i++) if ((rc = cc__check_region(g, nm, &d->reads[i], "reads", i)) != CC_OK) return rc;
    for (i = 0; i < d->n_writes; i++) if ((rc = cc__check_region(g, nm, &d->writes[i], "writes", i)) != CC_OK) return rc;
    for (i = 0; i < d->n_deps; i++)
        if (d->deps[i].id < 1 || d->deps[i].id > (uint32_t)g->n)
            return CC__FAIL(ctx, CC_ERR_UNKNOWN_OP, "op '%s': deps[%d] names operation id %u, which does not exist",
                            nm, i, (unsigned)d->deps[i].id);
    /* reserve, then commit (a failed reservation leaves the graph as it was) */
    n1 = (size_t)g->n + 1;
    need_acc = g->n_acc + (size_t)d->n_reads + (size_t)d->n_writes;
    need_e = g->n_e + (size_t)d->n_deps;
    {
        size_t strs_len0 = g->strs_len;
        uint32_t off;
        if (!CC__GROW(ctx, g->dur, g->ops_cap, n1) || !CC__GROW(ctx, g->dur_us, g->dur_us_cap, n1) ||
            !CC__GROW(ctx, g->name, g->name_cap, n1) || !CC__GROW(ctx, g->user_data, g->ud_cap, n1) ||
            !CC__GROW(ctx, g->dem, g->dem_cap, n1 * (size_t)k) || !CC__GROW(ctx, g->acc, g->acc_cap, need_acc) ||
            !CC__GROW(ctx, g->e_from, g->e_from_cap, need_e) || !CC__GROW(ctx, g->e_to, g->e_to_cap, need_e) ||
            !cc__strpush(g, nm, strlen(nm), &off)) {
            g->strs_len = strs_len0;
            return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "op '%s': out of memory", nm);
        }
        g->name[g->n] = off;
    }
    i = g->n;
    g->dur[i] = ticks;
    g->dur_us[i] = d->duration_us;
    g->user_data[i] = d->user_data;
    for (r = 0; r < k; r++)
        g->dem[(size_t)i * k + r] = d->demands ? d->demands[r] : (d->stream == r ? 1 : 0);
    for (r = 0; r < d->n_reads + d->n_writes; r++) {
        const cc_region* rg = r < d->n_reads ? &d->reads[r] : &d->writes[r - d->n_reads];
        cc__access* a = &g->acc[g->n_acc++];
        a->op = (uint32_t)i;
        a->buffer = rg->buffer.id - 1;
        a->offset = rg->offset_bytes;
        a->n_bytes = rg->n_bytes;
        a->is_write = r >= d->n_reads;
    }
    for (r = 0; r < d->n_deps; r++) {
        g->e_from[g->n_e] = (int)d->deps[r].id - 1;
        g->e_to[g->n_e] = i;
        g->n_e++;
    }
    g->n++;
    cc__graph_invalidate(g);
    if (out) out->id = (uint32_t)g->n;
    return CC_OK;
}

CONCERTO_API cc_result cc_graph_add_dep(cc_graph* g, cc_op before, cc_op after) {
    int a, b;
    if (!g) return CC_ERR_INVALID_ARG;
    a = cc_op_index(g, before);
    b = cc_op_index(g, after);
    if (a < 0 || b < 0)
        return CC__FAIL(g->ctx, CC_ERR_UNKNOWN_OP, "cc_graph_add_dep: operation id %u does not exist",
                        (unsigned)(a < 0 ? before.id : after.id));
    if (!CC__GROW(g->ctx, g->e_from, g->e_from_cap, g->n_e + 1) || !CC__GROW(g->ctx, g->e_to, g->e_to_cap, g->n_e + 1))
        return CC__FAIL(g->ctx, CC_ERR_OUT_OF_MEMORY, "dependency '%s' -> '%s': out of memory", cc__name(g, a), cc__name(g, b));
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
    i = cc_op_index(g, op);
    if (i < 0) return CC__FAIL(g->ctx, CC_ERR_UNKNOWN_OP, "cc_op_set_duration: operation id %u does not exist", (unsigned)op.id);
    if (!cc__duration_ticks(duration_us, &t))
        return CC__FAIL(g->ctx, CC_ERR_BAD_DURATION, "op '%s': duration %g us is negative, NaN, infinite or above 1e12",
                        cc__name(g, i), duration_us);
    g->dur[i] = t;
    g->dur_us[i] = duration_us;
    return CC_OK;   /* structure unchanged: stays valid */
}

/* Sorting helpers (deterministic, no qsort_r portability issues). */
typedef struct cc__edge { int from, to; } cc__edge;
static int cc__edge_cmp(const void* a, const void* b) {
    const cc__edge* x = (const cc__edge*)a;
    const cc__edge* y = (const cc__edge*)b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    return 0;
}

/* Region dependencies: accesses grouped by buffer (stable in program order);
   per buffer an active list of earlier accesses; a write removes the records
   it fully covers (later accesses reach them through the write). */
static cc_result cc__derive_region_edges(cc_graph* g, cc__edge** edges, size_t* n_edges, size_t* cap_edges) {
    cc_context* ctx = g->ctx;
    size_t* start = NULL;
    uint32_t* byb = NULL;
    uint32_t* active = NULL;
    size_t n_active, active_cap = 0, a, j, b;
    cc_result rc = CC_OK;
    start = (size_t*)cc__calloc(ctx, (size_t)g->n_buf + 1, sizeof *start);
    byb = (uint32_t*)cc__alloc(ctx, (g->n_acc ? g->n_acc : 1) * sizeof *byb);
    if (!start || !byb) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
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
        n_active = 0;
        for (j = start[b]; j < start[b + 1]; j++) {
            const cc__access* x = &g->acc[byb[j]];
            size_t m, w = 0;
            if (x->n_bytes == 0) continue;
            for (m = 0; m < n_active; m++) {
                const cc__access* y = &g->acc[active[m]];
                int overlap = x->offset < y->offset + y->n_bytes && y->offset < x->offset + x->n_bytes;
                if (overlap && (x->is_write || y->is_write) && y->op != x->op) {
                    if (!CC__GROW(ctx, *edges, *cap_edges, *n_edges + 1)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                    (*edges)[*n_edges].from = (int)y->op;
                    (*edges)[*n_edges].to = (int)x->op;
                    (*n_edges)++;
                }
            }
            if (x->is_write) {   /* drop records the write covers */
                for (m = 0; m < n_active; m++) {
                    const cc__access* y = &g->acc[active[m]];
                    if (!(y->offset >= x->offset && y->offset + y->n_bytes <= x->offset + x->n_bytes))
                        active[w++] = active[m];
                }
                n_active = w;
            }
            if (!CC__GROW(ctx, active, active_cap, n_active + 1)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
            active[n_active++] = byb[j];
        }
    }
done:
    cc__free(ctx, start); cc__free(ctx, byb); cc__free(ctx, active);
    if (rc != CC_OK) return CC__FAIL(ctx, rc, "deriving buffer dependencies: out of memory");
    return CC_OK;
}

static cc_result cc__report_cycle(cc_graph* g, const int* indeg) {
    /* every op left with indeg > 0 has a predecessor also left: walk back */
    cc_context* ctx = g->ctx;
    int* seen;
    int v = -1, i, steps = 0;
    char msg[CC__MSG_MAX - 96];
    size_t len = 0;
    for (i = 0; i < g->n; i++) if (indeg[i] > 0) { v = i; break; }
    seen = (int*)cc__calloc(ctx, (size_t)g->n, sizeof *seen);
    if (!seen) return CC__FAIL(ctx, CC_ERR_CYCLE, "the graph has a dependency cycle through op '%s'", cc__name(g, v));
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
    return CC__FAIL(ctx, CC_ERR_CYCLE, "dependency cycle: %s", msg);
}

CONCERTO_API cc_result cc_graph_validate(cc_graph* g) {
    cc_context* ctx;
    cc__edge* edges = NULL;
    size_t n_edges = 0, cap_edges = 0, e, m;
    int* indeg = NULL;
    int i, head, tail;
    cc_result rc;
    if (!g) return CC_ERR_INVALID_ARG;
    if (g->valid) return CC_OK;
    ctx = g->ctx;
    cc__graph_invalidate(g);
    cap_edges = g->n_e + 16;
    edges = (cc__edge*)cc__alloc(ctx, cap_edges * sizeof *edges);
    if (!edges) return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_validate: out of memory");
    for (e = 0; e < g->n_e; e++) {
        if (g->e_from[e] == g->e_to[e]) {
            cc__free(ctx, edges);
            return CC__FAIL(ctx, CC_ERR_CYCLE, "dependency cycle: op '%s' depends on itself", cc__name(g, g->e_to[e]));
        }
        edges[n_edges].from = g->e_from[e];
        edges[n_edges].to = g->e_to[e];
        n_edges++;
    }
    if ((rc = cc__derive_region_edges(g, &edges, &n_edges, &cap_edges)) != CC_OK) { cc__free(ctx, edges); return rc; }
    qsort(edges, n_edges, sizeof *edges, cc__edge_cmp);
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
        return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_graph_validate: out of memory");
    }
    for (e = 0; e < n_edges; e++) { g->succ_off[edges[e].from + 1]++; g->pred_off[edges[e].to + 1]++; }
    for (i = 0; i < g->n; i++) { g->succ_off[i + 1] += g->succ_off[i]; g->pred_off[i + 1] += g->pred_off[i]; }
    for (e = 0; e < n_edges; e++) g->succ[g->succ_off[edges[e].from] + indeg[edges[e].from]++] = edges[e].to;
    memset(indeg, 0, ((size_t)g->n + 1) * sizeof(int));
    for (e = 0; e < n_edges; e++) g->pred[g->pred_off[edges[e].to] + indeg[edges[e].to]++] = edges[e].from;
    /* edges were sorted by (from, to): pred lists come out sorted too */
    g->n_edges = n_edges;
    cc__free(ctx, edges);
    /* Kahn, smallest index first among the ready (a FIFO keeps it O(n + e)) */
    for (i = 0; i < g->n; i++) indeg[i] = g->pred_off[i + 1] - g->pred_off[i];
    head = tail = 0;
    for (i = 0; i < g->n; i++) if (indeg[i] == 0) g->topo[tail++] = i;
    while (head < tail) {
        int v = g->topo[head++], s;
        for (s = g->succ_off[v]; s < g->succ_off[v + 1]; s++)
            if (--indeg[g->succ[s]] == 0) g->topo[tail++] = g->succ[s];
    }
    if (tail < g->n) {
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
        if (out && c < max) out[c].id = (uint32_t)g->pred[e] + 1;
    return c;
}

/* The problem of a whole validated graph (borrows the graph's arrays). */
static cc__time cc__gcd(cc__time a, cc__time b) { while (b) { cc__time t = a % b; a = b; b = t; } return a; }
static void cc__prob_of_graph(const cc_graph* g, cc__prob* p) {
    int i;
    memset(p, 0, sizeof *p);
    p->n = g->n; p->k = g->k;
    p->dur = g->dur; p->dem = g->dem; p->cap = g->cap;
    p->succ_off = g->succ_off; p->succ = g->succ; p->pred_off = g->pred_off; p->pred = g->pred;
    p->grain = 0;
    for (i = 0; i < g->n; i++) p->grain = cc__gcd(p->grain, g->dur[i]);
    if (p->grain < 1) p->grain = 1;
}

/* Earliest and latest times ignoring resources. es/lf may be NULL. Returns
   the critical-path length (release times respected). */
static cc__time cc__prob_times(const cc__prob* p, const int* topo, cc__time* es, cc__time* lf) {
    cc__time cp = 0;
    int t, i, e;
    for (t = 0; t < p->n; t++) {
        cc__time s;
        i = topo[t];
        s = p->release ? p->release[i] : 0;
        for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
            int q = p->pred[e];
            cc__time f = es[q] + p->dur[q];
            if (f > s) s = f;
        }
        es[i] = s;
        if (s + p->dur[i] > cp) cp = s + p->dur[i];
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
        if (p->cap[r] <= 0) return CC__TIME_MAX;
        lb = (cc__time)ceil(load / (double)p->cap[r] - 1e-9);
        if (lb > best) best = lb;
    }
    return best;
}

/* >>sgs
   Resource profile: breakpoints t[0] < t[1] < ... < t[m-1]; segment j is
   [t[j], t[j+1]) with use[j*k + r] units of resource r taken. t[0] is
   -infinity, the last segment runs to +infinity and is always empty. */
typedef struct cc__profile {
    int k, m;
    size_t cap_t, cap_u;
    cc__time* t;
    int32_t* use;
    const int32_t* cap;
} cc__profile;

static void cc__profile_free(cc_context* ctx, cc__profile* pr) {
    cc__free(ctx, pr->t); cc__free(ctx, pr->use);
    memset(pr, 0, sizeof *pr);
}
static int cc__profile_reserve(cc_context* ctx, cc__profile* pr, size_t m) {
    return CC__GROW(ctx, pr->t, pr->cap_t, m) && CC__GROW(ctx, pr->use, pr->cap_u, m * (size_t)(pr->k ? pr->k : 1));
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
    pr->t[0] = -CC__TIME_MAX;
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
    if (j == pr->m - 1 && pr->t[j] < s + d && !cc__fits(pr, j, dem)) return CC__TIME_MAX;
    return s;
}

/* Serial SGS: jobs in list order (precedence-feasible), each at the earliest
   precedence- and resource-feasible time. Returns the makespan, or -1 when a
   deadline cannot be met, -2 when out of memory. */
static cc__time cc__ssgs(cc_context* ctx, const cc__prob* p, const int* list, cc__time* start, cc__profile* pr) {
    cc__time mk = 0;
    int t, e;
    if (!cc__profile_init(ctx, pr, p)) return -2;
    for (t = 0; t < p->n; t++) {
        int i = list[t];
        cc__time est = p->release ? p->release[i] : 0, s;
        for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
            int q = p->pred[e];
            if (start[q] + p->dur[q] > est) est = start[q] + p->dur[q];
        }
        s = cc__profile_earliest(pr, est, p->dur[i], p->dem + (size_t)i * p->k);
        if (s == CC__TIME_MAX || (p->deadline && s + p->dur[i] > p->deadline[i])) return -1;
        start[i] = s;
        if (!cc__profile_add(ctx, pr, s, s + p->dur[i], p->dem + (size_t)i * p->k, 1)) return -2;
        if (s + p->dur[i] > mk) mk = s + p->dur[i];
    }
    return mk;
}

/* Parallel SGS: time advances over decision points; at each, the eligible
   jobs are tried in priority order (pos[i] = rank, smaller first) and start
   if they fit. Same return convention as cc__ssgs. */
static cc__time cc__psgs(cc_context* ctx, const cc__prob* p, const int* list, const int* pos, cc__time* start,
                         cc__profile* pr, int* scratch /* [2n] */) {
    int* left = scratch;          /* unscheduled preds, or -1 once scheduled */
    int* elig = scratch + p->n;   /* candidates in priority order */
    int n_done = 0, i, e, n_elig;
    cc__time t = -CC__TIME_MAX, mk = 0;
    (void)list;
    if (!cc__profile_init(ctx, pr, p)) return -2;
    for (i = 0; i < p->n; i++) left[i] = p->pred_off[i + 1] - p->pred_off[i];
    while (n_done < p->n) {
        cc__time next = CC__TIME_MAX;
        int j;
        /* eligible: all preds scheduled and finished by t, released */
        n_elig = 0;
        for (i = 0; i < p->n; i++) {
            cc__time est;
            if (left[i] != 0) continue;
            est = p->release ? p->release[i] : 0;
            for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
                int q = p->pred[e];
                if (start[q] + p->dur[q] > est) est = start[q] + p->dur[q];
            }
            if (est <= t) elig[n_elig++] = i;
            else if (est < next) next = est;
        }
        /* insertion sort by priority (eligible sets are small) */
        for (j = 1; j < n_elig; j++) {
            int v = elig[j], m = j;
            while (m > 0 && pos[elig[m - 1]] > pos[v]) { elig[m] = elig[m - 1]; m--; }
            elig[m] = v;
        }
        for (j = 0; j < n_elig; j++) {
            cc__time s;
            i = elig[j];
            s = cc__profile_earliest(pr, t, p->dur[i], p->dem + (size_t)i * p->k);
            if (s != t) continue;
            if (p->deadline && t + p->dur[i] > p->deadline[i]) return -1;
            start[i] = t;
            if (!cc__profile_add(ctx, pr, t, t + p->dur[i], p->dem + (size_t)i * p->k, 1)) return -2;
            if (t + p->dur[i] > mk) mk = t + p->dur[i];
            left[i] = -1;
            n_done++;
            for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++) left[p->succ[e]]--;
            if (p->dur[i] == 0) { next = t; }
        }
        if (n_done == p->n) break;
        if (next == t) continue;   /* zero-duration jobs released successors now */
        /* next decision point: the earliest start of a job whose predecessors
           are all placed (successors of the jobs just started included), or
           a breakpoint of the profile after t (capacity freed) */
        next = CC__TIME_MAX;
        for (i = 0; i < p->n; i++) {
            cc__time est;
            if (left[i] != 0) continue;
            est = p->release ? p->release[i] : 0;
            for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) {
                int q = p->pred[e];
                if (start[q] + p->dur[q] > est) est = start[q] + p->dur[q];
            }
            if (est > t && est < next) next = est;
        }
        {
            int sj = cc__profile_seg(pr, t);
            if (sj + 1 < pr->m && pr->t[sj + 1] < next) next = pr->t[sj + 1];
        }
        if (next == CC__TIME_MAX) return -1;
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

/* Binary heap of job indices ordered by (key, index). */
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

/* Stream graphs: every job takes at most one resource. Fast parallel list
   scheduling with a ready heap per resource, O((n + e) log n); jobs with no
   resource start when ready. Needs no release/deadline/busy. */
static int cc__prob_single_resource(const cc__prob* p) {
    int i, r;
    for (i = 0; i < p->n; i++) {
        int c = 0;
        for (r = 0; r < p->k; r++) if (p->dem[(size_t)i * p->k + r]) c++;
        if (c > 1) return 0;
    }
    return 1;
}
static int cc__job_resource(const cc__prob* p, int i) {
    int r;
    for (r = 0; r < p->k; r++) if (p->dem[(size_t)i * p->k + r]) return r;
    return -1;
}
typedef struct cc__ev { cc__time t; int job; } cc__ev;
static int cc__ev_less(const cc__ev* a, const cc__ev* b) { return a->t < b->t || (a->t == b->t && a->job < b->job); }
static void cc__ev_push(cc__ev* h, int* n, cc__ev x) {
    int i = (*n)++;
    while (i > 0) { int par = (i - 1) / 2; if (!cc__ev_less(&x, &h[par])) break; h[i] = h[par]; i = par; }
    h[i] = x;
}
static cc__ev cc__ev_pop(cc__ev* h, int* n) {
    cc__ev top = h[0], v = h[--(*n)];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && cc__ev_less(&h[c + 1], &h[c])) c++;
        if (!cc__ev_less(&h[c], &v)) break;
        h[i] = h[c]; i = c;
    }
    if (*n > 0) h[i] = v;
    return top;
}
static cc__time cc__list_fast(cc_context* ctx, const cc__prob* p, const double* key, cc__time* start) {
    int n = p->n, k = p->k, i, e, r, n_ev = 0, done = 0;
    int* left = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* res = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* heapmem = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    cc__ev* ev = (cc__ev*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__ev));
    cc__heap* hp = (cc__heap*)cc__calloc(ctx, (size_t)k + 1, sizeof(cc__heap));
    int* cnt = (int*)cc__calloc(ctx, (size_t)k + 2, sizeof(int));
    int32_t avail[CONCERTO_MAX_RESOURCES];
    cc__time t = 0, mk = 0;
    if (!left || !res || !heapmem || !ev || !hp || !cnt) { mk = -2; goto done; }
    for (i = 0; i < n; i++) { res[i] = cc__job_resource(p, i); cnt[res[i] + 1]++; }
    /* each resource's heap gets a slice of heapmem sized by its job count */
    {
        int off = cnt[0];   /* no-resource jobs never wait in a heap */
        for (r = 0; r < k; r++) { hp[r].a = heapmem + off; hp[r].n = 0; hp[r].key = key; off += cnt[r + 1]; }
    }
    for (r = 0; r < k; r++) avail[r] = p->cap[r];
    for (i = 0; i < n; i++) {
        left[i] = p->pred_off[i + 1] - p->pred_off[i];
        if (!left[i]) {
            if (res[i] < 0) { cc__ev x; start[i] = 0; x.t = p->dur[i]; x.job = i; cc__ev_push(ev, &n_ev, x); }
            else cc__heap_push(&hp[res[i]], i);
        }
    }
    for (;;) {
        for (r = 0; r < k; r++) {
            while (hp[r].n > 0 && p->dem[(size_t)hp[r].a[0] * k + r] <= avail[r]) {
                cc__ev x;
                int j = cc__heap_pop(&hp[r]);
                start[j] = t;
                avail[r] -= p->dem[(size_t)j * k + r];
                x.t = t + p->dur[j]; x.job = j;
                cc__ev_push(ev, &n_ev, x);
            }
        }
        if (n_ev == 0) break;
        t = ev[0].t;
        while (n_ev > 0 && ev[0].t == t) {
            cc__ev x = cc__ev_pop(ev, &n_ev);
            int j = x.job;
            done++;
            if (t > mk) mk = t;
            if (res[j] >= 0) avail[res[j]] += p->dem[(size_t)j * k + res[j]];
            for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++) {
                int s = p->succ[e];
                if (--left[s] == 0) {
                    if (res[s] < 0) { cc__ev y; start[s] = t; y.t = t + p->dur[s]; y.job = s; cc__ev_push(ev, &n_ev, y); }
                    else cc__heap_push(&hp[res[s]], s);
                }
            }
        }
    }
    if (done != n) mk = -1;
done:
    cc__free(ctx, left); cc__free(ctx, res); cc__free(ctx, heapmem); cc__free(ctx, ev);
    cc__free(ctx, hp); cc__free(ctx, cnt);
    return mk;
}

/* Unary problems (every capacity a job uses is 1, demands 0/1): the stream
   simulation of an issue order. Each resource runs its jobs in the order's
   sequence; a job starts when its predecessors are done and it is at the
   head of every resource it uses. O(n + e). Returns the makespan, -1 on a
   deadlock (blocked[0] then holds a job that never became ready), -2 OOM. */
static int cc__prob_unary(const cc__prob* p) {
    int i, r;
    for (i = 0; i < p->n; i++)
        for (r = 0; r < p->k; r++) {
            int32_t d = p->dem[(size_t)i * p->k + r];
            if (d != 0 && (d != 1 || p->cap[r] != 1)) return 0;
        }
    return p->n_busy == 0 && !p->release && !p->deadline;
}
static cc__time cc__stream_sim(cc_context* ctx, const cc__prob* p, const int* order, cc__time* start, int* blocked) {
    int n = p->n, k = p->k, i, e, r, head_q = 0, tail_q = 0, done = 0;
    int* next = (int*)cc__alloc(ctx, (size_t)(n + 1) * (size_t)(k ? k : 1) * sizeof(int));
    int* left = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* q = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    int* heads = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int)); /* resources still ahead of it */
    cc__time* ready = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__time));
    int first[CONCERTO_MAX_RESOURCES], last[CONCERTO_MAX_RESOURCES];
    cc__time free_at[CONCERTO_MAX_RESOURCES], mk = 0;
    if (!next || !left || !q || !heads || !ready) { mk = -2; goto done; }
    for (r = 0; r < k; r++) { first[r] = last[r] = -1; free_at[r] = 0; }
    for (i = 0; i < n; i++) heads[i] = 0;
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
        ready[i] = 0;
        if (!left[i] && !heads[i]) q[tail_q++] = i;
    }
    while (head_q < tail_q) {
        int v = q[head_q++];
        cc__time s = ready[v];
        for (r = 0; r < k; r++) if (p->dem[(size_t)v * k + r] && free_at[r] > s) s = free_at[r];
        start[v] = s;
        done++;
        heads[v] = -1;   /* processed */
        if (s + p->dur[v] > mk) mk = s + p->dur[v];
        for (r = 0; r < k; r++) {
            int w;
            if (!p->dem[(size_t)v * k + r]) continue;
            free_at[r] = s + p->dur[v];
            w = next[(size_t)v * k + r];
            if (w >= 0 && --heads[w] == 0 && left[w] == 0) q[tail_q++] = w;
        }
        for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) {
            int w = p->succ[e];
            if (s + p->dur[v] > ready[w]) ready[w] = s + p->dur[v];
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
/* out[] = jobs by increasing t[] (by decreasing t[] when desc, ranks reversed). */
static void cc__sort_jobs(const cc__prob* p, const cc__time* t, const int* rank, int desc, cc__tkey* tmp, int* out) {
    int i, n = p->n;
    for (i = 0; i < n; i++) {
        tmp[i].t = desc ? -t[i] : t[i];
        tmp[i].busy = p->dur[i] > 0;
        tmp[i].rank = desc ? -rank[i] : rank[i];
        tmp[i].job = i;
    }
    qsort(tmp, (size_t)n, sizeof *tmp, cc__tkey_cmp);
    for (i = 0; i < n; i++) out[i] = tmp[i].job;
}

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
} cc__heur;

static void cc__heur_free(cc__heur* h) {
    cc_context* ctx = h->ctx;
    cc__profile_free(ctx, &h->prof);
    cc__free(ctx, h->list); cc__free(ctx, h->pos); cc__free(ctx, h->scratch); cc__free(ctx, h->tk);
    cc__free(ctx, h->cur); cc__free(ctx, h->tmp); cc__free(ctx, h->fin); cc__free(ctx, h->best);
}
static int cc__heur_init(cc_context* ctx, cc__heur* h, const cc__prob* p, const int* rank) {
    size_t n1 = (size_t)p->n + 1;
    memset(h, 0, sizeof *h);
    h->ctx = ctx; h->p = p; h->rank = rank;
    h->rev = *p;
    h->rev.succ_off = p->pred_off; h->rev.succ = p->pred;
    h->rev.pred_off = p->succ_off; h->rev.pred = p->succ;
    h->unary = cc__prob_unary(p);
    h->best_mk = CC__TIME_MAX;
    h->list = (int*)cc__alloc(ctx, n1 * sizeof(int));
    h->pos = (int*)cc__alloc(ctx, n1 * sizeof(int));
    h->scratch = (int*)cc__alloc(ctx, 2 * n1 * sizeof(int));
    h->tk = (cc__tkey*)cc__alloc(ctx, n1 * sizeof(cc__tkey));
    h->cur = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->tmp = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->fin = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    h->best = (cc__time*)cc__alloc(ctx, n1 * sizeof(cc__time));
    return h->list && h->pos && h->scratch && h->tk && h->cur && h->tmp && h->fin && h->best;
}
static void cc__heur_offer(cc__heur* h, const cc__time* s, cc__time mk) {
    if (mk >= 0 && mk < h->best_mk) {
        h->best_mk = mk;
        memcpy(h->best, s, (size_t)h->p->n * sizeof(cc__time));
    }
}
/* Left-justifies the schedule in t[] keeping the order by start time
   (a never-worse transformation). Returns the makespan or < 0. */
static cc__time cc__justify(cc__heur* h, const cc__prob* p, cc__time* t, const cc__time* key, int desc) {
    cc__sort_jobs(p, key, h->rank, desc, h->tk, h->list);
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
        if (mf < 0) return mf;
        if (mf < mk) { memcpy(s, h->fin, (size_t)p->n * sizeof(cc__time)); mk = mf; }
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
        mk = cc__psgs(h->ctx, p, h->list, h->pos, h->cur, &h->prof, h->scratch);
    } else mk = cc__ssgs(h->ctx, p, h->list, h->cur, &h->prof);
    h->n_sched++;
    if (mk < 0) return mk;
    if (improve > 0) mk = cc__fbi(h, h->cur, mk, improve);
    if (mk < 0) return mk;
    cc__heur_offer(h, h->cur, mk);
    return mk;
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
typedef struct cc__window {
    int cap;                    /* jobs */
    int* glob;                  /* local -> global */
    int* loc;                   /* global -> local or -1 ([n] of the whole problem) */
    cc__time *dur, *rel, *dl, *start;
    int32_t* dem;
    int *pred_off, *pred, *succ_off, *succ;
    size_t pred_cap, succ_cap;
    cc__time *bs, *be; int32_t* bd;
    size_t bs_cap, be_cap, bd_cap;
} cc__window;

static void cc__window_free(cc_context* ctx, cc__window* w) {
    cc__free(ctx, w->glob); cc__free(ctx, w->loc); cc__free(ctx, w->dur); cc__free(ctx, w->rel);
    cc__free(ctx, w->dl); cc__free(ctx, w->start); cc__free(ctx, w->dem);
    cc__free(ctx, w->pred_off); cc__free(ctx, w->pred); cc__free(ctx, w->succ_off); cc__free(ctx, w->succ);
    cc__free(ctx, w->bs); cc__free(ctx, w->be); cc__free(ctx, w->bd);
}

static cc_result cc__oddeven(cc_context* ctx, cc__heur* h, cc__time* s, cc__time* mk_io, int b, int rounds,
                             int64_t window_nodes, double t_end, int64_t* nodes_out) {
    const cc__prob* p = h->p;
    int n = p->n, k = p->k, round, i, e, quiet = 0;
    cc__window w;
    cc__time maxdur = 0, mk = *mk_io;
    int* order = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    cc__time* s0 = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc__time));
    int* moved = (int*)cc__calloc(ctx, (size_t)n + 1, sizeof(int));
    int* moved_list = NULL;
    size_t moved_cap = 0;
    int n_moved = 0;
    int wsz = 2 * b;
    memset(&w, 0, sizeof w);
    w.cap = wsz;
    w.glob = (int*)cc__alloc(ctx, (size_t)wsz * sizeof(int));
    w.loc = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(int));
    w.dur = (cc__time*)cc__alloc(ctx, (size_t)wsz * sizeof(cc__time));
    w.rel = (cc__time*)cc__alloc(ctx, (size_t)wsz * sizeof(cc__time));
    w.dl = (cc__time*)cc__alloc(ctx, (size_t)wsz * sizeof(cc__time));
    w.start = (cc__time*)cc__alloc(ctx, (size_t)wsz * sizeof(cc__time));
    w.dem = (int32_t*)cc__alloc(ctx, (size_t)wsz * (size_t)(k ? k : 1) * sizeof(int32_t));
    w.pred_off = (int*)cc__alloc(ctx, ((size_t)wsz + 1) * sizeof(int));
    w.succ_off = (int*)cc__alloc(ctx, ((size_t)wsz + 1) * sizeof(int));
    if (!order || !s0 || !moved || !w.glob || !w.loc || !w.dur || !w.rel || !w.dl || !w.start || !w.dem || !w.pred_off || !w.succ_off) {
        goto oom;
    }
    for (i = 0; i < n; i++) { w.loc[i] = -1; if (p->dur[i] > maxdur) maxdur = p->dur[i]; }
    for (round = 0; round < rounds; round++) {
        int ws, changed = 0;
        cc__sort_jobs(p, s, h->rank, 0, h->tk, order);
        memcpy(s0, s, (size_t)n * sizeof(cc__time));
        n_moved = 0;
        for (ws = (round % 2) ? b : 0; ws < n; ws += wsz) {
            int m = n - ws < wsz ? n - ws : wsz, np = 0, ns = 0, lo, hi, nb = 0;
            cc__time T0 = CC__TIME_MAX, T1 = 0;
            cc__prob sub;
            cc__bnb_result br;
            cc_result rc;
            if (m < 2) break;
            if (t_end > 0 && cc__cpu_s() > t_end) break;
            for (i = 0; i < m; i++) {
                int v = order[ws + i];
                w.glob[i] = v; w.loc[v] = i;
                if (s[v] < T0) T0 = s[v];
                if (s[v] + p->dur[v] > T1) T1 = s[v] + p->dur[v];
            }
            /* local structure, releases and deadlines */
            for (i = 0; i < m; i++) {
                int v = w.glob[i];
                cc__time rel = T0, dl = CC__TIME_MAX;
                w.dur[i] = p->dur[v];
                memcpy(w.dem + (size_t)i * k, p->dem + (size_t)v * k, (size_t)k * sizeof(int32_t));
                w.pred_off[i] = np;
                for (e = p->pred_off[v]; e < p->pred_off[v + 1]; e++) {
                    int q = p->pred[e];
                    if (w.loc[q] >= 0) {
                        if (!CC__GROW(ctx, w.pred, w.pred_cap, (size_t)np + 1)) goto oom;
                        w.pred[np++] = w.loc[q];
                    } else if (s[q] + p->dur[q] > rel) rel = s[q] + p->dur[q];
                }
                for (e = p->succ_off[v]; e < p->succ_off[v + 1]; e++) {
                    int q = p->succ[e];
                    if (w.loc[q] < 0 && s[q] < dl) dl = s[q];
                }
                w.rel[i] = rel; w.dl[i] = dl; w.start[i] = s[v];
            }
            w.pred_off[m] = np;
            for (i = 0; i <= m; i++) w.succ_off[i] = 0;
            for (i = 0; i < np; i++) w.succ_off[w.pred[i] + 1]++;
            for (i = 0; i < m; i++) w.succ_off[i + 1] += w.succ_off[i];
            if (!CC__GROW(ctx, w.succ, w.succ_cap, (size_t)np + 1)) goto oom;
            {
                int fill[2 * 4096 + 1], *f = fill;   /* wsz is capped at 8192 by the caller */
                for (i = 0; i <= m; i++) f[i] = w.succ_off[i];
                for (i = 0; i < m; i++)
                    for (e = w.pred_off[i]; e < w.pred_off[i + 1]; e++) w.succ[f[w.pred[e]]++] = i;
                ns = np;
            }
            /* fixed occupation: jobs outside the window running in [T0, T1).
               Unmoved jobs are found by their start at the round's beginning
               (s0, sorted along order); jobs moved earlier in this round are
               on the moved list (pruned once they end before T0, since T0
               grows along the round). */
            {
                int a = 0, z = n, mi, mw = 0;
                cc__time from = T0 - maxdur;
                while (a < z) { int mid = (a + z) / 2; if (s0[order[mid]] < from) a = mid + 1; else z = mid; }
                lo = a;
                for (hi = lo; hi <= n + n_moved; hi++) {
                    int v;
                    if (hi < n) {
                        v = order[hi];
                        if (s0[v] >= T1) { hi = n - 1; continue; }   /* jump to the moved list */
                        if (moved[v] == round + 1) continue;
                    } else if (hi == n) continue;
                    else {
                        mi = hi - n - 1;
                        v = moved_list[mi];
                        if (s[v] + p->dur[v] <= T0) continue;       /* dropped below */
                        moved_list[mw++] = v;
                    }
                    if (w.loc[v] >= 0 || p->dur[v] == 0 || s[v] + p->dur[v] <= T0 || s[v] >= T1) continue;
                    if (!CC__GROW(ctx, w.bs, w.bs_cap, (size_t)nb + 1) || !CC__GROW(ctx, w.be, w.be_cap, (size_t)nb + 1) ||
                        !CC__GROW(ctx, w.bd, w.bd_cap, ((size_t)nb + 1) * (size_t)k)) goto oom;
                    w.bs[nb] = s[v]; w.be[nb] = s[v] + p->dur[v];
                    memcpy(w.bd + (size_t)nb * k, p->dem + (size_t)v * k, (size_t)k * sizeof(int32_t));
                    nb++;
                }
                n_moved = mw;
            }
            memset(&sub, 0, sizeof sub);
            sub.n = m; sub.k = k; sub.dur = w.dur; sub.dem = w.dem; sub.cap = p->cap;
            sub.succ_off = w.succ_off; sub.succ = w.succ; sub.pred_off = w.pred_off; sub.pred = w.pred;
            sub.release = w.rel; sub.deadline = w.dl;
            sub.n_busy = nb; sub.busy_start = w.bs; sub.busy_end = w.be; sub.busy_dem = w.bd;
            sub.grain = p->grain;
            (void)ns;
            rc = cc__bnb_solve(ctx, &sub, w.start, 1, window_nodes, 0.0, &br);
            *nodes_out += br.nodes;
            if (rc == CC_ERR_OUT_OF_MEMORY) goto oom;
            if (rc == CC_OK && br.makespan < T1) {
                for (i = 0; i < m; i++) {
                    int v = w.glob[i];
                    if (s[v] == w.start[i]) continue;
                    s[v] = w.start[i];
                    changed = 1;
                    if (moved[v] != round + 1) {
                        if (!CC__GROW(ctx, moved_list, moved_cap, (size_t)n_moved + 1)) goto oom;
                        moved[v] = round + 1;
                        moved_list[n_moved++] = v;
                    }
                }
            }
            for (i = 0; i < m; i++) w.loc[w.glob[i]] = -1;
        }
        /* pass the gains on */
        {
            cc__time m2;
            memcpy(h->tmp, s, (size_t)n * sizeof(cc__time));
            m2 = cc__justify(h, p, h->fin, h->tmp, 0);
            if (m2 == -2) goto oom;
            if (m2 >= 0 && m2 <= mk) { memcpy(s, h->fin, (size_t)n * sizeof(cc__time)); mk = m2; }
            else {
                /* cannot happen for a feasible input (justification in start
                   order never delays a job); recompute the makespan */
                cc__time mm = 0;
                for (i = 0; i < n; i++) if (s[i] + p->dur[i] > mm) mm = s[i] + p->dur[i];
                mk = mm;
            }
        }
        if (mk <= h->lb) break;
        if (t_end > 0 && cc__cpu_s() > t_end) break;
        quiet = changed ? 0 : quiet + 1;
        if (quiet >= 2) break;   /* both offsets tried without a change */
    }
    *mk_io = mk;
    cc__free(ctx, order); cc__free(ctx, s0); cc__free(ctx, moved); cc__free(ctx, moved_list);
    cc__window_free(ctx, &w);
    return CC_OK;
oom:
    cc__free(ctx, order); cc__free(ctx, s0); cc__free(ctx, moved); cc__free(ctx, moved_list);
    cc__window_free(ctx, &w);
    return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "odd-even windows: out of memory");
}

/* >>sched */
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
                if (pick < 0) pick = c;   /* cannot happen: the group is acyclic */
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

CONCERTO_API cc_sched_desc cc_sched_desc_default(void) {
    cc_sched_desc d;
    memset(&d, 0, sizeof d);
    return d;
}

#define CC__SMALL_N 5000      /* above: heuristics that scale (fast list scheduling, justification) */
#define CC__BNB_AUTO_N 200    /* AUTO runs branch and bound up to this size */
#define CC__AUTO_FIRST_BUDGET 1000  /* AUTO's schedules before branch and bound */

static void cc__desc_fill(cc_sched_desc* d, int n) {
    if (d->sgs == CC_SGS_DEFAULT) d->sgs = n <= CC__SMALL_N ? CC_SGS_SERIAL : CC_SGS_PARALLEL;
    if (d->priority == CC_PRIO_DEFAULT) d->priority = CC_PRIO_LFT;
    if (d->improve_passes == 0) d->improve_passes = 2;
    if (d->budget_schedules == 0) d->budget_schedules = 5000;
    if (d->bnb_nodes == 0) {
        /* nodes cost about n^3 more as graphs grow: 200000 at 32 ops (PSPLIB
           J30), about 27000 at 62 (J60), 819 at 200 */
        double scale = n > 32 ? 32.0 / (double)n : 1.0;
        d->bnb_nodes = (int64_t)(200000.0 * scale * scale * scale);
        if (d->bnb_nodes < 1) d->bnb_nodes = 1;
    }
    if (d->window_ops == 0) d->window_ops = 8;
    if (d->rounds == 0) d->rounds = 4;
    if (d->window_nodes == 0) d->window_nodes = 300;
}

CONCERTO_API void cc_schedule_release(cc_context* ctx, cc_schedule* s) {
    if (!ctx || !s) return;
    cc__free(ctx, s->start_us);
    cc__free(ctx, s->order);
    memset(s, 0, sizeof *s);
}

CONCERTO_API cc_result cc_lower_bounds(cc_context* ctx, cc_graph* g, double* cp_us, double* res_us) {
    cc__prob p;
    cc__time* es;
    cc__time cp;
    cc_result rc;
    if (!ctx || !g) return CC_ERR_INVALID_ARG;
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    cc__prob_of_graph(g, &p);
    es = (cc__time*)cc__alloc(ctx, ((size_t)p.n + 1) * sizeof *es);
    if (!es) return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_lower_bounds: out of memory");
    cp = cc__prob_times(&p, g->topo, es, NULL);
    cc__free(ctx, es);
    if (cp_us) *cp_us = (double)cp / CC__TICKS_PER_US;
    if (res_us) *res_us = (double)cc__round_up(cc__prob_resource_lb(&p), p.grain) / CC__TICKS_PER_US;
    return CC_OK;
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
    cc__sort_jobs(p, h->cur, h->rank, 0, h->tk, list);
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

/* Sampling and evolution: the rules once each with both schemes, then a
   population of regret-biased random lists from the seed, then a genetic
   algorithm on activity lists (two-point crossover, adjacent-swap mutation,
   the best of parents and children survive); every schedule improved by
   forward-backward passes. Until the budget, the lower bound or the time
   limit. */
#define CC__GA_POP 32
static cc_result cc__sample(cc__heur* h, const cc_sched_desc* d, const int* topo, double t_end) {
    static const cc_priority rules[6] = { CC_PRIO_LFT, CC_PRIO_LST, CC_PRIO_MTS, CC_PRIO_GRPW, CC_PRIO_BOTTOM_LEVEL,
                                          CC_PRIO_PROGRAM_ORDER };
    const int nr = 6;
    cc_context* ctx = h->ctx;
    const cc__prob* p = h->p;
    int n = p->n, r, it, i, P = CC__GA_POP, np = 0;
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
#define CC__STOP() (h->n_sched >= d->budget_schedules || h->best_mk <= h->lb || (t_end > 0 && cc__cpu_s() > t_end))
    /* every rule, both schemes */
    for (it = 0; it < 2 * nr && !CC__STOP(); it++) {
        if (!cc__make_list(ctx, p, keys + (size_t)(it % nr) * n1, NULL, h->list)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        if (cc__decode(h, it < nr ? CC_SGS_SERIAL : CC_SGS_PARALLEL, d->improve_passes) == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
    }
    /* initial population: the best so far, then biased random lists */
    if (h->best_mk < CC__TIME_MAX) {
        cc__sort_jobs(p, h->best, h->rank, 0, h->tk, pop);
        fit[0] = h->best_mk;
        np = 1;
    }
    for (; np < P && !CC__STOP(); np++) {
        int* L = pop + (size_t)np * n1;
        if (!cc__make_list(ctx, p, keys + (size_t)(np % nr) * n1, &rng, L)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        fit[np] = cc__ga_eval(h, L, d->improve_passes);
        if (fit[np] == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
        if (fit[np] < 0) fit[np] = CC__TIME_MAX;
    }
    /* generations */
    while (np >= 2 && !CC__STOP()) {
        int c, a, b;
        /* random pairing (Fisher-Yates over the parents) */
        for (i = 0; i < np; i++) idx[i] = i;
        for (i = np - 1; i > 0; i--) { int j = (int)(cc__rng_next(&rng) % (uint64_t)(i + 1)), t = idx[i]; idx[i] = idx[j]; idx[j] = t; }
        for (c = 0; c + 1 < np && !CC__STOP(); c += 2) {
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
                fit[np + c + side] = cc__ga_eval(h, child, d->improve_passes);
                if (fit[np + c + side] == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto done; }
                if (fit[np + c + side] < 0) fit[np + c + side] = CC__TIME_MAX;
                /* a child that repeats a member (same makespan, same list) is
                   dropped, so the population keeps its diversity */
                {
                    int m2, dup = 0;
                    for (m2 = 0; m2 < np + c + side && !dup; m2++)
                        if (fit[m2] == fit[np + c + side] &&
                            !memcmp(pop + (size_t)m2 * n1, child, (size_t)n * sizeof(int))) dup = 1;
                    if (dup) fit[np + c + side] = CC__TIME_MAX;
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
            cc__time nf[2 * CC__GA_POP];
            for (i = 0; i < np; i++) {
                memcpy(tmp + (size_t)i * n1, pop + (size_t)idx[i] * n1, (size_t)n * sizeof(int));
                nf[i] = fit[idx[i]];
            }
            memcpy(pop, tmp, (size_t)np * n1 * sizeof(int));
            memcpy(fit, nf, (size_t)np * sizeof(cc__time));
        }
    }
#undef CC__STOP
done:
    cc__free(ctx, keys); cc__free(ctx, pop); cc__free(ctx, fit); cc__free(ctx, idx); cc__free(ctx, tmp); cc__free(ctx, taken);
    return rc;
}

static const char* cc__method_name(cc_sched_method m) {
    switch (m) {
        case CC_SCHED_AUTO: return "auto"; case CC_SCHED_LIST: return "list";
        case CC_SCHED_SAMPLING: return "sampling"; case CC_SCHED_BNB: return "branch and bound";
        case CC_SCHED_ODD_EVEN: return "odd-even"; default: return "?";
    }
}

CONCERTO_API cc_result cc_sched_solve(cc_context* ctx, cc_graph* g, const cc_sched_desc* desc, cc_schedule* out) {
    cc_sched_desc d;
    cc__prob p;
    cc__heur h;
    cc__time cp, rlb, lb, mk;
    cc__time* es = NULL;
    int* rank = NULL;
    int i, n, small, proven = 0;
    cc_priority desc_priority;
    int64_t nodes = 0;
    double t0 = cc__cpu_s(), t_end;
    cc_result rc = CC_OK;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!g || !out) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: graph or out is NULL");
    memset(out, 0, sizeof *out);
    d = desc ? *desc : cc_sched_desc_default();
    if ((int)d.method < 0 || d.method > CC_SCHED_ODD_EVEN)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown method %d", (int)d.method);
    if ((int)d.priority < 0 || d.priority >= CC__PRIO_COUNT)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown priority rule %d", (int)d.priority);
    if ((int)d.sgs < 0 || d.sgs > CC_SGS_PARALLEL)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: unknown schedule-generation scheme %d", (int)d.sgs);
    if (!(d.time_limit_s >= 0) || d.window_ops < 0 || d.window_ops > 4096 || d.window_nodes < 0)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_sched_solve: time_limit_s must be >= 0, window_ops 0..4096, "
                        "window_nodes >= 0");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n;
    desc_priority = d.priority;
    cc__desc_fill(&d, n);
    t_end = d.time_limit_s > 0 ? t0 + d.time_limit_s : 0;
    cc__prob_of_graph(g, &p);
    small = n <= CC__SMALL_N;
    if (!cc__heur_init(ctx, &h, &p, NULL)) { cc__heur_free(&h); return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_sched_solve: out of memory"); }
    es = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *es);
    rank = (int*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *rank);
    out->start_us = (double*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(double));
    out->order = (cc_op*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(cc_op));
    if (!es || !rank || !out->start_us || !out->order) { rc = CC_ERR_OUT_OF_MEMORY; goto fail; }
    for (i = 0; i < n; i++) rank[g->topo[i]] = i;
    h.rank = rank;
    cp = cc__prob_times(&p, g->topo, es, NULL);
    rlb = cc__prob_resource_lb(&p);
    if (rlb == CC__TIME_MAX) {   /* cannot happen: capacities are checked on add */
        rc = CC__FAIL(ctx, CC_ERR_CAPACITY, "cc_sched_solve: a resource with capacity 0 is demanded");
        goto fail_noset;
    }
    lb = cc__round_up(cp > rlb ? cp : rlb, p.grain);
    h.lb = lb;

    /* first schedules: the chosen rule (LIST, BNB, ODD_EVEN, and small
       SAMPLING/AUTO, whose sampling covers every rule), or every rule once */
    {
        /* large graphs: every rule once (AUTO, SAMPLING) or the chosen one */
        double* key = (double*)cc__alloc(ctx, ((size_t)n + 1) * sizeof(double));
        int multi = (d.method == CC_SCHED_AUTO && n > CC__BNB_AUTO_N) || (d.method == CC_SCHED_SAMPLING && !small) ||
                    (d.method == CC_SCHED_ODD_EVEN && desc_priority == CC_PRIO_DEFAULT), rule;
        cc_priority chosen = (d.method == CC_SCHED_LIST || d.method == CC_SCHED_ODD_EVEN) ? d.priority : CC_PRIO_LFT;
        if (!key) { rc = CC_ERR_OUT_OF_MEMORY; goto fail; }
        for (rule = CC_PRIO_PROGRAM_ORDER; rule < CC__PRIO_COUNT; rule++) {
            cc__time m0;
            if (!multi && rule != (int)chosen) continue;
            if (multi && rule == CC_PRIO_LST) continue;   /* the order of BOTTOM_LEVEL up to ties */
            if ((rc = cc__prio_keys(ctx, &p, g->topo, (cc_priority)rule, key)) != CC_OK) break;
            if (small || d.sgs == CC_SGS_SERIAL || !cc__prob_single_resource(&p)) {
                if (!cc__make_list(ctx, &p, key, NULL, h.list)) { rc = CC_ERR_OUT_OF_MEMORY; break; }
                if (cc__decode(&h, d.sgs, d.improve_passes > 0 ? d.improve_passes : 0) == -2) { rc = CC_ERR_OUT_OF_MEMORY; break; }
            } else {
                m0 = cc__list_fast(ctx, &p, key, h.cur);
                h.n_sched++;
                if (m0 >= 0 && d.improve_passes > 0) m0 = cc__fbi(&h, h.cur, m0, d.improve_passes);
                if (m0 == -2) { rc = CC_ERR_OUT_OF_MEMORY; break; }
                cc__heur_offer(&h, h.cur, m0);
            }
            if (h.best_mk <= lb || (t_end > 0 && cc__cpu_s() > t_end)) break;
        }
        cc__free(ctx, key);
        if (rc != CC_OK) goto fail;
    }
    if (h.best_mk == CC__TIME_MAX) {
        rc = CC__FAIL(ctx, CC_ERR_INFEASIBLE, "cc_sched_solve: no schedule could be generated");
        goto fail_noset;
    }

    /* improvement by method */
    if (d.method == CC_SCHED_SAMPLING && small) {
        if ((rc = cc__sample(&h, &d, g->topo, t_end)) != CC_OK) goto fail;
    } else if (d.method == CC_SCHED_AUTO && n <= CC__BNB_AUTO_N) {
        /* a short evolution for an incumbent; the rest after branch and bound */
        cc_sched_desc d1 = d;
        if (d1.budget_schedules > CC__AUTO_FIRST_BUDGET) d1.budget_schedules = CC__AUTO_FIRST_BUDGET;
        if ((rc = cc__sample(&h, &d1, g->topo, t_end)) != CC_OK) goto fail;
    }
    if ((d.method == CC_SCHED_BNB || (d.method == CC_SCHED_AUTO && n <= CC__BNB_AUTO_N)) && d.bnb_nodes > 0 &&
        h.best_mk > lb) {
        cc__bnb_result br;
        double left = t_end > 0 ? t_end - cc__cpu_s() : 0;
        memcpy(h.cur, h.best, (size_t)n * sizeof(cc__time));
        if (t_end <= 0 || left > 0) {
            rc = cc__bnb_solve(ctx, &p, h.cur, 1, d.bnb_nodes, t_end > 0 ? left : 0.0, &br);
            if (rc == CC_ERR_OUT_OF_MEMORY) goto fail_noset;
            rc = CC_OK;
            nodes += br.nodes;
            if (br.makespan < h.best_mk) cc__heur_offer(&h, h.cur, br.makespan);
            if (br.proven) proven = 1;
            if (br.lower_bound > lb) lb = br.lower_bound;
        }
    }
    if (d.method == CC_SCHED_AUTO && n <= CC__BNB_AUTO_N && !proven && h.best_mk > lb && h.n_sched < d.budget_schedules) {
        h.lb = lb;
        if ((rc = cc__sample(&h, &d, g->topo, t_end)) != CC_OK) goto fail;
    }
    if ((d.method == CC_SCHED_ODD_EVEN || (d.method == CC_SCHED_AUTO && n > CC__BNB_AUTO_N)) && h.best_mk > lb &&
        d.rounds > 0) {
        mk = h.best_mk;
        memcpy(h.cur, h.best, (size_t)n * sizeof(cc__time));
        if ((rc = cc__oddeven(ctx, &h, h.cur, &mk, d.window_ops, d.rounds, d.window_nodes, t_end, &nodes)) != CC_OK)
            goto fail_noset;
        cc__heur_offer(&h, h.cur, mk);
    }

    /* output: the issue order (start time; zero-duration ops first; index;
       never before a dependency) and, for unary graphs, the stream
       simulation of that order, which is what an executor runs. It is never
       later than the schedule, except where a zero-duration op sits inside
       another op's interval on its stream (free in the RCPSP, not on a
       stream): then the simulation is what is reported. */
    mk = h.best_mk;
    if ((rc = cc__output_order(ctx, &p, h.best, h.tk, h.list)) != CC_OK) goto fail;
    if (h.unary) {
        cc__time m2 = cc__stream_sim(ctx, &p, h.list, h.cur, NULL);
        if (m2 == -2) { rc = CC_ERR_OUT_OF_MEMORY; goto fail; }
        if (m2 >= 0) {
            if (m2 > mk) proven = 0;
            memcpy(h.best, h.cur, (size_t)n * sizeof(cc__time));
            mk = m2;
            if ((rc = cc__output_order(ctx, &p, h.best, h.tk, h.list)) != CC_OK) goto fail;
        }
    }
    for (i = 0; i < n; i++) {
        out->start_us[i] = (double)h.best[i] / CC__TICKS_PER_US;
        out->order[i].id = (uint32_t)h.list[i] + 1;
    }
    out->n_ops = n;
    out->makespan_us = (double)mk / CC__TICKS_PER_US;
    if (mk <= lb) { proven = 1; lb = mk; }
    if (proven) lb = mk;
    out->lower_bound_us = (double)lb / CC__TICKS_PER_US;
    out->lb_critical_path_us = (double)cp / CC__TICKS_PER_US;
    out->lb_resource_us = (double)cc__round_up(rlb, p.grain) / CC__TICKS_PER_US;
    out->proven_optimal = proven;
    out->n_schedules = h.n_sched;
    out->n_nodes = nodes;
    out->solve_ms = (cc__cpu_s() - t0) * 1000.0;
    cc__free(ctx, es); cc__free(ctx, rank);
    cc__heur_free(&h);
    return CC_OK;
fail:
    if (rc == CC_ERR_OUT_OF_MEMORY) rc = CC__FAIL(ctx, rc, "cc_sched_solve (%s): out of memory", cc__method_name(d.method));
fail_noset:
    cc__free(ctx, es); cc__free(ctx, rank);
    cc__heur_free(&h);
    cc_schedule_release(ctx, out);
    return rc;
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
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!g || !start_us) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_schedule_check: graph or start_us is NULL");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n; k = g->k;
    st = (cc__time*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *st);
    ev = (cc__cev*)cc__alloc(ctx, (2 * (size_t)n + 1) * sizeof *ev);
    if (!st || !ev) { cc__free(ctx, st); cc__free(ctx, ev); return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_schedule_check: out of memory"); }
    for (i = 0; i < n; i++) {
        if (!(start_us[i] >= 0.0) || start_us[i] > 1e15) {
            rc = CC__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "op '%s' starts at %g us: not a finite time >= 0", cc__name(g, i), start_us[i]);
            goto done;
        }
        st[i] = (cc__time)llround(start_us[i] * CC__TICKS_PER_US);
        if (st[i] + g->dur[i] > mk) mk = st[i] + g->dur[i];
    }
    for (i = 0; i < n; i++)
        for (e = g->pred_off[i]; e < g->pred_off[i + 1]; e++) {
            int q = g->pred[e];
            if (st[i] < st[q] + g->dur[q]) {
                rc = CC__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "op '%s' starts at %.3f us before its dependency '%s' ends at %.3f us",
                              cc__name(g, i), (double)st[i] / CC__TICKS_PER_US, cc__name(g, q),
                              (double)(st[q] + g->dur[q]) / CC__TICKS_PER_US);
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
                rc = CC__FAIL(ctx, CC_ERR_INVALID_SCHEDULE,
                              "resource '%s' holds %lld units at %.3f us, above its capacity %d: %s",
                              cc_graph_resource_name(g, r), (long long)use[r], (double)ev[i].t / CC__TICKS_PER_US, g->cap[r], list);
                goto done;
            }
    }
    if (makespan_us) *makespan_us = (double)mk / CC__TICKS_PER_US;
    rc = CC_OK;
done:
    cc__free(ctx, st); cc__free(ctx, ev);
    return rc;
}

/* >>sim */
CONCERTO_API cc_result cc_simulate(cc_context* ctx, cc_graph* g, const cc_op* issue_order, int n_order,
                                   double* start_us, double* makespan_us) {
    cc__prob p;
    int* order = NULL;
    int* seen = NULL;
    cc__time* st = NULL;
    cc__time mk;
    int i, r, blocked[2] = { -1, -1 };
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!g || !issue_order) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_simulate: graph or issue_order is NULL");
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    if (n_order != g->n)
        return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_simulate: the issue order has %d ops, the graph %d", n_order, g->n);
    for (i = 0; i < g->n; i++) {
        int c = 0;
        for (r = 0; r < g->k; r++) {
            int32_t dm = g->dem[(size_t)i * g->k + r];
            if (dm && (dm != 1 || g->cap[r] != 1)) c = 99;
            else if (dm) c++;
        }
        if (c > 1)
            return CC__FAIL(ctx, CC_ERR_UNSUPPORTED, "cc_simulate: op '%s' is not on a single stream of capacity 1", cc__name(g, i));
    }
    order = (int*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof(int));
    seen = (int*)cc__calloc(ctx, (size_t)g->n + 1, sizeof(int));
    st = (cc__time*)cc__alloc(ctx, ((size_t)g->n + 1) * sizeof(cc__time));
    if (!order || !seen || !st) { rc = CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_simulate: out of memory"); goto done; }
    for (i = 0; i < g->n; i++) {
        int v = cc_op_index(g, issue_order[i]);
        if (v < 0) { rc = CC__FAIL(ctx, CC_ERR_UNKNOWN_OP, "cc_simulate: issue_order[%d] is not an op of the graph", i); goto done; }
        if (seen[v]) { rc = CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_simulate: op '%s' appears twice in the issue order", cc__name(g, v)); goto done; }
        seen[v] = 1;
        order[i] = v;
    }
    cc__prob_of_graph(g, &p);
    mk = cc__stream_sim(ctx, &p, order, st, blocked);
    if (mk == -2) { rc = CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_simulate: out of memory"); goto done; }
    if (mk == -1) {
        int rr = blocked[0] >= 0 ? cc__job_resource(&p, blocked[0]) : -1;
        rc = CC__FAIL(ctx, CC_ERR_DEADLOCK,
                      "cc_simulate: op '%s', next on stream '%s', waits for its dependency '%s', which cannot "
                      "finish first: the issue order contradicts the dependencies",
                      blocked[0] >= 0 ? cc__name(g, blocked[0]) : "?", rr >= 0 ? cc_graph_resource_name(g, rr) : "none",
                      blocked[1] >= 0 ? cc__name(g, blocked[1]) : "?");
        goto done;
    }
    if (start_us) for (i = 0; i < g->n; i++) start_us[i] = (double)st[i] / CC__TICKS_PER_US;
    if (makespan_us) *makespan_us = (double)mk / CC__TICKS_PER_US;
    rc = CC_OK;
done:
    cc__free(ctx, order); cc__free(ctx, seen); cc__free(ctx, st);
    return rc;
}

/* >>psplib */
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

#define CC__PSP_MAX_JOBS 1000000
#define CC__PSP_FIELDS 512

CONCERTO_API cc_result cc_psplib_parse(cc_context* ctx, const char* text, size_t n_bytes, const char* name, cc_graph** out) {
    cc__reader R;
    long long v[CC__PSP_FIELDS + 8];
    long long nj = 0, nk = 0;
    int* succ_off = NULL;
    int* succ = NULL;
    size_t succ_cap = 0, n_succ = 0;
    long long* durs = NULL;
    int* dems = NULL;
    int* req_line = NULL;
    int caps[CONCERTO_MAX_RESOURCES];
    cc_graph* g = NULL;
    cc_graph_desc gd;
    cc_result rc = CC_OK;
    int i, c, r;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!out || !text) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_parse: text or out is NULL");
    *out = NULL;
    if (!name) name = "<text>";
    memset(&R, 0, sizeof R);
    R.text = text; R.len = n_bytes;
#define CC__PERR(...) do { rc = CC__FAIL(ctx, CC_ERR_PARSE, __VA_ARGS__); goto done; } while (0)
    if (!cc__seek(&R, "jobs (incl. supersource/sink"))
        CC__PERR("%s: no 'jobs (incl. supersource/sink )' line: not a single-mode PSPLIB file", name);
    if (!cc__colon_int(&R, &nj) || nj < 2 || nj > CC__PSP_MAX_JOBS)
        CC__PERR("%s:%d: the number of jobs must be an integer 2..%d", name, R.line, CC__PSP_MAX_JOBS);
    if (!cc__seek(&R, "- renewable"))
        CC__PERR("%s: no '- renewable' line after line %d", name, R.line);
    if (!cc__colon_int(&R, &nk) || nk < 1 || nk > CONCERTO_MAX_RESOURCES)
        CC__PERR("%s:%d: the number of renewable resources must be an integer 1..%d", name, R.line, CONCERTO_MAX_RESOURCES);
    succ_off = (int*)cc__calloc(ctx, (size_t)nj + 1, sizeof(int));
    durs = (long long*)cc__calloc(ctx, (size_t)nj, sizeof(long long));
    req_line = (int*)cc__calloc(ctx, (size_t)nj, sizeof(int));
    dems = (int*)cc__calloc(ctx, (size_t)nj * (size_t)nk, sizeof(int));
    if (!succ_off || !durs || !dems || !req_line) { rc = CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
    if (!cc__seek(&R, "PRECEDENCE RELATIONS"))
        CC__PERR("%s: no 'PRECEDENCE RELATIONS:' section", name);
    for (i = 0; i < nj; i++) {
        int ns;
        if (!cc__next_data(&R))
            CC__PERR("%s:%d: precedence section ends after %d of %lld jobs", name, R.line, i, nj);
        c = cc__line_ints(&R, 0, v, CC__PSP_FIELDS);
        if (c < 0) {
            if (i == 0) { i--; continue; }   /* the column header line */
            CC__PERR("%s:%d: precedence line of job %d has a field that is not an integer", name, R.line, i + 1);
        }
        if (c < 3) CC__PERR("%s:%d: precedence line needs job number, modes, successor count", name, R.line);
        if (v[0] != i + 1) CC__PERR("%s:%d: expected job %d, found %lld", name, R.line, i + 1, v[0]);
        if (v[1] != 1) CC__PERR("%s:%d: job %d has %lld modes; only single-mode files are supported", name, R.line, i + 1, v[1]);
        if (v[2] < 0 || v[2] != c - 3)
            CC__PERR("%s:%d: job %d declares %lld successors but lists %d", name, R.line, i + 1, v[2], c - 3);
        if (c > CC__PSP_FIELDS) CC__PERR("%s:%d: too many successors", name, R.line);
        ns = c - 3;
        if (!CC__GROW(ctx, succ, succ_cap, n_succ + (size_t)ns + 1)) { rc = CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", name); goto done; }
        for (c = 0; c < ns; c++) {
            long long sj = v[3 + c];
            if (sj < 1 || sj > nj) CC__PERR("%s:%d: job %d names successor %lld, outside 1..%lld", name, R.line, i + 1, sj, nj);
            if (sj == i + 1) CC__PERR("%s:%d: job %d is its own successor", name, R.line, i + 1);
            succ[n_succ++] = (int)sj - 1;
        }
        succ_off[i + 1] = (int)n_succ;
    }
    if (!cc__seek(&R, "REQUESTS/DURATIONS"))
        CC__PERR("%s: no 'REQUESTS/DURATIONS:' section after line %d", name, R.line);
    for (i = 0; i < nj; i++) {
        if (!cc__next_data(&R))
            CC__PERR("%s:%d: durations section ends after %d of %lld jobs", name, R.line, i, nj);
        c = cc__line_ints(&R, 0, v, CC__PSP_FIELDS);
        if (c < 0) {
            size_t t = 0;
            while (t < R.n && (R.s[t] == ' ' || R.s[t] == '-')) t++;
            if (i == 0 && (t == R.n || cc__line_has(&R, "jobnr"))) { i--; continue; }   /* header, dashes */
            CC__PERR("%s:%d: durations line of job %d has a field that is not an integer", name, R.line, i + 1);
        }
        if (c != 3 + nk)
            CC__PERR("%s:%d: durations line of job %d needs %lld fields (job, mode, duration, %lld demands), found %d",
                     name, R.line, i + 1, 3 + nk, nk, c);
        if (v[0] != i + 1) CC__PERR("%s:%d: expected job %d, found %lld", name, R.line, i + 1, v[0]);
        if (v[2] < 0) { rc = CC__FAIL(ctx, CC_ERR_BAD_DURATION, "%s:%d: job %d has negative duration %lld", name, R.line, i + 1, v[2]); goto done; }
        durs[i] = v[2];
        req_line[i] = R.line;
        for (r = 0; r < nk; r++) {
            if (v[3 + r] < 0 || v[3 + r] > 1000000000LL)
                CC__PERR("%s:%d: job %d has demand %lld on resource %d", name, R.line, i + 1, v[3 + r], r + 1);
            dems[(size_t)i * nk + r] = (int)v[3 + r];
        }
    }
    if (!cc__seek(&R, "RESOURCEAVAILABILITIES"))
        CC__PERR("%s: no 'RESOURCEAVAILABILITIES:' section after line %d", name, R.line);
    for (;;) {
        if (!cc__next_data(&R)) CC__PERR("%s:%d: resource availabilities missing", name, R.line);
        c = cc__line_ints(&R, 0, v, CC__PSP_FIELDS);
        if (c < 0 && cc__line_has(&R, "R")) continue;   /* the 'R 1  R 2' header */
        if (c != nk) CC__PERR("%s:%d: expected %lld resource capacities, found %s", name, R.line, nk, c < 0 ? "a non-integer" : "another count");
        break;
    }
    for (r = 0; r < nk; r++) {
        if (v[r] < 0 || v[r] > 1000000000LL) CC__PERR("%s:%d: capacity %lld of resource %d is out of range", name, R.line, v[r], r + 1);
        caps[r] = (int)v[r];
    }
    for (i = 0; i < nj; i++)
        for (r = 0; r < nk; r++)
            if (dems[(size_t)i * nk + r] > caps[r]) {
                rc = CC__FAIL(ctx, CC_ERR_CAPACITY, "%s:%d: job %d demands %d of resource %d, above its capacity %d (line %d)",
                              name, req_line[i], i + 1, dems[(size_t)i * nk + r], r + 1, caps[r], R.line);
                goto done;
            }
    gd = cc_graph_desc_default();
    gd.n_resources = (int)nk;
    gd.capacities = caps;
    if ((rc = cc_graph_create(ctx, &gd, &g)) != CC_OK) goto done;
    for (i = 0; i < nj; i++) {
        cc_op_desc od = cc_op_desc_default();
        char nm[32];
        snprintf(nm, sizeof nm, "job%d", i + 1);
        od.name = nm;
        od.duration_us = (double)durs[i];
        od.demands = dems + (size_t)i * nk;
        if ((rc = cc_graph_add_op(g, &od, NULL)) != CC_OK) goto done;
    }
    for (i = 0; i < nj; i++)
        for (c = succ_off[i]; c < succ_off[i + 1]; c++)
            if ((rc = cc_graph_add_dep(g, cc_graph_op(g, i), cc_graph_op(g, succ[c]))) != CC_OK) goto done;
    if ((rc = cc_graph_validate(g)) != CC_OK) {
        char msg[CC__MSG_MAX];
        memcpy(msg, ctx->last_error, sizeof msg);
        msg[sizeof msg - 1] = 0;
        rc = CC__FAIL(ctx, rc, "%s: %s", name, msg);
        goto done;
    }
#undef CC__PERR
done:
    cc__free(ctx, succ_off); cc__free(ctx, succ); cc__free(ctx, durs); cc__free(ctx, dems); cc__free(ctx, req_line);
    if (rc != CC_OK) cc_graph_destroy(g);
    else *out = g;
    return rc;
}

CONCERTO_API cc_result cc_psplib_read(cc_context* ctx, const char* path, cc_graph** out) {
    FILE* f;
    char* buf = NULL;
    size_t cap = 0, len = 0;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!path || !out) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_read: path or out is NULL");
    *out = NULL;
    f = fopen(path, "rb");
    if (!f) return CC__FAIL(ctx, CC_ERR_IO, "cannot open '%s' for reading", path);
    for (;;) {
        size_t got;
        if (!CC__GROW(ctx, buf, cap, len + 65536)) {
            fclose(f); cc__free(ctx, buf);
            return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) { fclose(f); cc__free(ctx, buf); return CC__FAIL(ctx, CC_ERR_IO, "error reading '%s'", path); }
    fclose(f);
    rc = cc_psplib_parse(ctx, buf, len, path, out);
    cc__free(ctx, buf);
    return rc;
}

CONCERTO_API cc_result cc_psplib_write(cc_context* ctx, cc_graph* g, const char* path, double unit_us) {
    FILE* f;
    int n, k, i, e, r, nsum;
    long long horizon = 0, cp = 0;
    long long* du = NULL;
    long long* ef = NULL;
    cc_result rc;
    if (!ctx) return CC_ERR_INVALID_ARG;
    if (!g || !path) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_write: graph or path is NULL");
    if (!(unit_us > 0) || unit_us > 1e12) return CC__FAIL(ctx, CC_ERR_INVALID_ARG, "cc_psplib_write: unit_us must be > 0, got %g", unit_us);
    if ((rc = cc_graph_validate(g)) != CC_OK) return rc;
    n = g->n; k = g->k;
    du = (long long*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *du);
    ef = (long long*)cc__alloc(ctx, ((size_t)n + 1) * sizeof *ef);
    if (!du || !ef) { cc__free(ctx, du); cc__free(ctx, ef); return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "cc_psplib_write: out of memory"); }
    for (i = 0; i < n; i++) { du[i] = llround(g->dur_us[i] / unit_us); horizon += du[i]; }
    for (i = 0; i < n; i++) {
        int v = g->topo[i];
        long long s = 0;
        for (e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) if (ef[g->pred[e]] > s) s = ef[g->pred[e]];
        ef[v] = s + du[v];
        if (ef[v] > cp) cp = ef[v];
    }
    f = fopen(path, "wb");
    if (!f) { cc__free(ctx, du); cc__free(ctx, ef); return CC__FAIL(ctx, CC_ERR_IO, "cannot open '%s' for writing", path); }
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
    if (ferror(f)) { fclose(f); return CC__FAIL(ctx, CC_ERR_IO, "error writing '%s'", path); }
    if (fclose(f) != 0) return CC__FAIL(ctx, CC_ERR_IO, "error writing '%s'", path);
    return CC_OK;
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
     sorted in decreasing order, lexicographically <= B's.

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

#define CC__BNB_MEMO_BYTES ((size_t)64 << 20)  /* cap on the cutset memory */
#define CC__BNB_MEMO_SCAN 48                   /* entries compared per lookup */

typedef struct cc__bnb_child {
    int job;
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
    cc__time *rel, *tail, *dl_ls, *ls;
    int *pos_off, *pos_res;   /* CSR: resources with positive demand per job */
    /* resource profile: use[i*k + r] on [tp[i], tp[i+1]), tp[0] = -inf */
    cc__time* tp;
    int32_t* use;
    int m;
    /* current partial schedule */
    unsigned char* done;
    int* npl;                 /* unplaced predecessors */
    cc__time *st, *fin, *h, *sa, *sb;
    uint64_t* set;
    int n_done;
    /* child records of all nodes on the current path */
    cc__bnb_child* ch;
    size_t ch_cap, ch_n;
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
    cc__time* hj;             /* memo check: per job, lazily, min head over conf[j] */
    int64_t nodes, budget;
    double t_end;
    int stop;                 /* 1: budget or time, 2: incumbent meets the bound */
    int oom;
} cc__bnb;

static cc__time cc__bnb_max(cc__time a, cc__time b) { return a > b ? a : b; }

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
    memmove(b->use + (size_t)(i + 2) * k, b->use + (size_t)(i + 1) * k,
            (size_t)(b->m - i - 1) * (size_t)k * sizeof *b->use);
    b->tp[i + 1] = t;
    memcpy(b->use + (size_t)(i + 1) * k, b->use + (size_t)i * k, (size_t)k * sizeof *b->use);
    b->m++;
    *added = 1;
    return i + 1;
}

static void cc__bnb_bp_remove(cc__bnb* b, cc__time t) {
    int i = cc__bnb_find(b, t), k = b->k;
    memmove(b->tp + i, b->tp + i + 1, (size_t)(b->m - i - 1) * sizeof *b->tp);
    memmove(b->use + (size_t)i * k, b->use + (size_t)(i + 1) * k,
            (size_t)(b->m - i - 1) * (size_t)k * sizeof *b->use);
    b->m--;
}

/* Adds (sign 1) units dem over [s, f); returns the undo flags for the removal. */
static int cc__bnb_occupy(cc__bnb* b, cc__time s, cc__time f, const int32_t* dem) {
    int a0, a1, i0, i1, i, r;
    if (f <= s) return 0;
    i0 = cc__bnb_bp(b, s, &a0);
    i1 = cc__bnb_bp(b, f, &a1);
    for (i = i0; i < i1; i++)
        for (r = 0; r < b->k; r++) b->use[(size_t)i * b->k + r] += dem[r];
    return a0 | (a1 << 1) | 4;
}

static void cc__bnb_release(cc__bnb* b, cc__time s, cc__time f, const int32_t* dem, int flags) {
    int i0, i1, i, r;
    if (!(flags & 4)) return;
    i0 = cc__bnb_find(b, s);
    i1 = cc__bnb_find(b, f);
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

/* Lower bound on the makespan of every completion of the current partial
   schedule whose jobs start at or after t; CC__TIME_MAX when no completion
   meets the latest starts ls[]. Leaves the heads in h[]. */
static cc__time cc__bnb_bound(cc__bnb* b, cc__time t, cc__time maxfin) {
    const cc__prob* p = b->p;
    cc__time lb = maxfin, t0 = CC__TIME_MAX;
    int x, q, r;
    for (x = 0; x < b->n; x++) {
        int u = b->topo[x];
        cc__time hu;
        if (b->done[u]) continue;
        hu = cc__bnb_max(t, b->rel[u]);
        for (q = p->pred_off[u]; q < p->pred_off[u + 1]; q++) {
            int v = p->pred[q];
            hu = cc__bnb_max(hu, b->done[v] ? b->fin[v] : b->h[v] + p->dur[v]);
        }
        hu = cc__bnb_earliest(b, u, hu);  /* the placed jobs leave no room before */
        if (hu > b->ls[u]) return CC__TIME_MAX;
        b->h[u] = hu;
        if (hu < t0) t0 = hu;
        lb = cc__bnb_max(lb, hu + b->tail[u]);
    }
    if (t0 == CC__TIME_MAX) return lb;
    /* energy: the remaining work of resource r fits the free capacity after t0 */
    for (r = 0; r < b->k; r++) {
        int64_t w = 0, acc = 0, cap = p->cap[r];
        int i;
        cc__time tt = t0, end = t0;
        for (x = 0; x < b->n; x++)
            if (!b->done[x]) w += (int64_t)p->dur[x] * p->dem[(size_t)x * b->k + r];
        if (w <= 0) continue;
        i = cc__bnb_find(b, t0);
        for (;;) {
            int64_t fr = cap - b->use[(size_t)i * b->k + r];
            int last = (i + 1 >= b->m);
            cc__time se = last ? CC__TIME_MAX : b->tp[i + 1];
            if (fr > 0) {
                int64_t need = w - acc;
                if (last || (se - tt) >= (need + fr - 1) / fr) { end = tt + (need + fr - 1) / fr; break; }
                acc += fr * (se - tt);
            } else if (last) { end = CC__TIME_MAX; break; }
            tt = se;
            i++;
        }
        lb = cc__bnb_max(lb, end);
    }
    return lb;
}

/* Latest starts from the deadlines and the target makespan. */
static void cc__bnb_set_target(cc__bnb* b) {
    int j;
    b->target = b->U >= CC__TIME_MAX ? CC__TIME_MAX : b->U - b->step;
    for (j = 0; j < b->n; j++) {
        cc__time l = b->target >= CC__TIME_MAX ? CC__TIME_MAX : b->target - b->tail[j];
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
    for (e = 0; e < b->n; e++) b->hj[e] = -CC__TIME_MAX;  /* not computed yet */
    for (e = b->bucket[hsh & (b->n_bucket - 1)]; e >= 0 && scanned < CC__BNB_MEMO_SCAN; e = b->ent[e].next) {
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
            if (b->hj[j] == -CC__TIME_MAX) {
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

/* Stores the current node; silently stops storing when memory runs short. */
static void cc__bnb_memo_add(cc__bnb* b, uint64_t hsh, cc__time t, int last) {
    size_t e = b->n_ent, need = (size_t)b->n_done, i;
    int j;
    if (b->memo_full) return;
    if ((e + 1) * (sizeof(cc__bnb_ent) + (size_t)b->nw * 8 + 4) + (b->mst_n + need) * sizeof(cc__time) > CC__BNB_MEMO_BYTES ||
        e + 1 >= (size_t)0x7fffffff) { b->memo_full = 1; return; }
    if (!CC__GROW(b->ctx, b->ent, b->ent_cap, e + 1) ||
        !CC__GROW(b->ctx, b->mset, b->mset_cap, (e + 1) * (size_t)b->nw) ||
        !CC__GROW(b->ctx, b->mst, b->mst_cap, b->mst_n + need)) { b->memo_full = 1; return; }
    if (e + 1 > b->n_bucket * 2) {  /* rehash into twice the buckets */
        size_t nb = b->n_bucket ? b->n_bucket * 2 : 1024;
        int* bk = (int*)cc__alloc(b->ctx, nb * sizeof *bk);
        if (!bk) { b->memo_full = 1; return; }
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

static void cc__bnb_dfs(cc__bnb* b, cc__time t_prev, int last, cc__time maxfin) {
    const cc__prob* p = b->p;
    size_t base, c, e;
    int u, q;
    b->nodes++;
    if (b->budget > 0 && b->nodes >= b->budget) b->stop = 1;
    if (b->t_end > 0 && (b->nodes & 255) == 0 && cc__cpu_s() > b->t_end) b->stop = 1;
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
        uint64_t hsh;
        cc__time lbB = cc__bnb_bound(b, t_prev, maxfin), hmin = CC__TIME_MAX;
        if (lbB >= CC__TIME_MAX || cc__bnb_ceil(lbB, b->step) > b->target) return;
        for (u = 0; u < b->n; u++)
            if (!b->done[u] && b->h[u] < hmin) hmin = b->h[u];
        hsh = cc__bnb_hash(b);
        if (cc__bnb_memo_hit(b, hsh, t_prev, last, hmin, lbB)) return;
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
        lb = cc__bnb_dead(b, s) ? CC__TIME_MAX : cc__bnb_bound(b, s, cc__bnb_max(maxfin, b->fin[u]));
        cc__bnb_unplace(b, u, fl);
        if (lb >= CC__TIME_MAX) continue;
        lb = cc__bnb_ceil(lb, b->step);
        if (lb > b->target) continue;
        if (!CC__GROW(b->ctx, b->ch, b->ch_cap, b->ch_n + 1)) { b->oom = 1; b->stop = 1; b->ch_n = base; return; }
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
        cc__bnb_dfs(b, ch.s, ch.job, cc__bnb_max(maxfin, b->fin[ch.job]));
        cc__bnb_unplace(b, ch.job, fl);
    }
    b->ch_n = base;
}

static void cc__bnb_free_all(cc__bnb* b) {
    cc_context* ctx = b->ctx;
    cc__free(ctx, b->topo); cc__free(ctx, b->rel); cc__free(ctx, b->tail); cc__free(ctx, b->dl_ls);
    cc__free(ctx, b->ls); cc__free(ctx, b->pos_off); cc__free(ctx, b->pos_res); cc__free(ctx, b->tp);
    cc__free(ctx, b->use); cc__free(ctx, b->done); cc__free(ctx, b->npl); cc__free(ctx, b->st);
    cc__free(ctx, b->fin); cc__free(ctx, b->h); cc__free(ctx, b->sa); cc__free(ctx, b->sb);
    cc__free(ctx, b->set); cc__free(ctx, b->conf); cc__free(ctx, b->hj); cc__free(ctx, b->ch); cc__free(ctx, b->bucket); cc__free(ctx, b->ent);
    cc__free(ctx, b->mset); cc__free(ctx, b->mst);
}

static cc_result cc__bnb_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int have_incumbent,
                               int64_t node_budget, double time_limit_s, cc__bnb_result* res) {
    cc__bnb bb, *b = &bb;
    int n = p->n, k = p->k, i, j, q, x, nt, lattice = 1, infeasible = 0;
    size_t mcap;
    cc__time lb;
    uint64_t* desc;
    memset(b, 0, sizeof *b);
    res->makespan = CC__TIME_MAX;
    res->lower_bound = 0;
    res->proven = 0;
    res->nodes = 0;
    if (n <= 0) {
        res->makespan = 0;
        res->proven = 1;
        return CC_OK;
    }
    if (have_incumbent) {  /* reported even if the search cannot start */
        res->makespan = -CC__TIME_MAX;
        for (j = 0; j < n; j++) res->makespan = cc__bnb_max(res->makespan, best[j] + p->dur[j]);
    }
    b->ctx = ctx;
    b->p = p;
    b->n = n;
    b->k = k;
    b->nw = (n + 63) / 64;
    b->best = best;
    b->budget = node_budget;
    b->t_end = time_limit_s > 0 ? cc__cpu_s() + time_limit_s : 0;
    mcap = (size_t)2 * (size_t)n + (size_t)2 * (size_t)(p->n_busy > 0 ? p->n_busy : 0) + 2;
    b->topo = (int*)cc__alloc(ctx, (size_t)n * sizeof(int));
    b->rel = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->tail = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->dl_ls = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->ls = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->pos_off = (int*)cc__alloc(ctx, (size_t)(n + 1) * sizeof(int));
    b->pos_res = (int*)cc__alloc(ctx, (size_t)n * (size_t)(k > 0 ? k : 1) * sizeof(int));
    b->tp = (cc__time*)cc__alloc(ctx, mcap * sizeof(cc__time));
    b->use = (int32_t*)cc__calloc(ctx, mcap * (size_t)(k > 0 ? k : 1), sizeof(int32_t));
    b->done = (unsigned char*)cc__calloc(ctx, (size_t)n, 1);
    b->npl = (int*)cc__alloc(ctx, (size_t)n * sizeof(int));
    b->st = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->fin = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->h = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->sa = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->sb = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    b->set = (uint64_t*)cc__calloc(ctx, (size_t)b->nw, sizeof(uint64_t));
    b->conf = (uint64_t*)cc__calloc(ctx, (size_t)n * (size_t)b->nw, sizeof(uint64_t));
    b->hj = (cc__time*)cc__alloc(ctx, (size_t)n * sizeof(cc__time));
    if (!b->topo || !b->rel || !b->tail || !b->dl_ls || !b->ls || !b->pos_off || !b->pos_res || !b->tp ||
        !b->use || !b->done || !b->npl || !b->st || !b->fin || !b->h || !b->sa || !b->sb || !b->set || !b->conf || !b->hj) {
        cc__bnb_free_all(b);
        return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "branch and bound: out of memory for %d jobs", n);
    }
    /* lattice: then every generated time is a multiple of grain */
    b->step = p->grain > 0 ? p->grain : 1;
    for (j = 0; j < n; j++) {
        if (p->dur[j] % b->step) lattice = 0;
        if (p->release && p->release[j] % b->step) lattice = 0;
        if (p->deadline && p->deadline[j] < CC__TIME_MAX && p->deadline[j] % b->step) lattice = 0;
    }
    for (i = 0; i < p->n_busy; i++)
        if (p->busy_start[i] % b->step || p->busy_end[i] % b->step) lattice = 0;
    if (!lattice) b->step = 1;
    /* resources with positive demand; a job above a capacity never fits */
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
        b->rel[j] = p->release ? p->release[j] : 0;
        b->npl[j] = p->pred_off[j + 1] - p->pred_off[j];
    }
    /* topological order (Kahn, smallest id first is not needed: any order) */
    for (j = 0, nt = 0; j < n; j++) if (b->npl[j] == 0) b->topo[nt++] = j;
    for (i = 0; i < nt; i++)
        for (q = p->succ_off[b->topo[i]]; q < p->succ_off[b->topo[i] + 1]; q++)
            if (--b->npl[p->succ[q]] == 0) b->topo[nt++] = p->succ[q];
    if (nt < n) infeasible = 1;  /* a cycle */
    for (j = 0; j < n; j++) b->npl[j] = p->pred_off[j + 1] - p->pred_off[j];
    /* tails (precedence and successors' energy) and deadline latest starts, backwards */
    desc = (uint64_t*)cc__calloc(ctx, (size_t)n * (size_t)b->nw, sizeof(uint64_t));
    if (!desc) {
        cc__bnb_free_all(b);
        return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "branch and bound: out of memory for %d jobs", n);
    }
    for (i = nt - 1; i >= 0; i--) {
        cc__time tl = 0, lf = (p->deadline && p->deadline[b->topo[i]] < CC__TIME_MAX) ? p->deadline[b->topo[i]] : CC__TIME_MAX;
        j = b->topo[i];
        for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) {
            int s2 = p->succ[q];
            tl = cc__bnb_max(tl, b->tail[s2]);
            if (b->dl_ls[s2] < lf) lf = b->dl_ls[s2];
        }
        /* all successors run after j: their energy on each resource */
        {
            uint64_t* dj = desc + (size_t)j * b->nw;
            int r;
            for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) {
                int s2 = p->succ[q], w;
                for (w = 0; w < b->nw; w++) dj[w] |= desc[(size_t)s2 * b->nw + w];
                dj[s2 >> 6] |= (uint64_t)1 << (s2 & 63);
            }
            for (r = 0; r < k; r++) {
                int64_t e = 0;
                for (x = 0; x < n; x++)
                    if (dj[x >> 6] >> (x & 63) & 1) e += (int64_t)p->dur[x] * p->dem[(size_t)x * k + r];
                if (e > 0 && p->cap[r] > 0) tl = cc__bnb_max(tl, cc__bnb_ceil((e + p->cap[r] - 1) / p->cap[r], b->step));
            }
        }
        b->tail[j] = tl + p->dur[j];
        b->dl_ls[j] = lf >= CC__TIME_MAX ? CC__TIME_MAX : lf - p->dur[j];
    }
    cc__free(ctx, desc);
    /* conflicts: jobs sharing a resource with positive demand, successors */
    for (j = 0; j < n; j++) {
        uint64_t* cj = b->conf + (size_t)j * b->nw;
        for (i = 0; i < n; i++) {
            int a, c, hit = 0;
            for (a = b->pos_off[j]; a < b->pos_off[j + 1] && !hit; a++)
                for (c = b->pos_off[i]; c < b->pos_off[i + 1]; c++)
                    if (b->pos_res[a] == b->pos_res[c]) { hit = 1; break; }
            if (hit) cj[i >> 6] |= (uint64_t)1 << (i & 63);
        }
        for (q = p->succ_off[j]; q < p->succ_off[j + 1]; q++) cj[p->succ[q] >> 6] |= (uint64_t)1 << (p->succ[q] & 63);
    }
    /* profile: -inf sentinel plus the busy blocks */
    b->tp[0] = -CC__TIME_MAX * 2;
    b->m = 1;
    for (i = 0; i < p->n_busy; i++)
        if (p->busy_end[i] > p->busy_start[i])
            (void)cc__bnb_occupy(b, p->busy_start[i], p->busy_end[i], p->busy_dem + (size_t)i * k);
    /* root bound (deadline windows only), then the incumbent's target */
    b->U = CC__TIME_MAX;
    cc__bnb_set_target(b);
    lb = infeasible ? CC__TIME_MAX : cc__bnb_bound(b, -CC__TIME_MAX, -CC__TIME_MAX);
    if (lb < CC__TIME_MAX) lb = cc__bnb_ceil(lb, b->step);
    if (have_incumbent) {
        b->U = -CC__TIME_MAX;
        for (j = 0; j < n; j++) b->U = cc__bnb_max(b->U, best[j] + p->dur[j]);
    }
    cc__bnb_set_target(b);
    b->root_lb = lb;
    if (lb < CC__TIME_MAX && b->U > lb) cc__bnb_dfs(b, -CC__TIME_MAX, -1, -CC__TIME_MAX);
    res->nodes = b->nodes;
    res->makespan = b->U;
    if (b->oom) {
        res->lower_bound = lb < b->U ? lb : b->U;
        cc__bnb_free_all(b);
        return CC__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "branch and bound: out of memory after %lld nodes", (long long)res->nodes);
    }
    cc__bnb_free_all(b);
    if (b->stop == 1) {  /* budget or time: only the root bound is proven */
        res->lower_bound = lb < b->U ? lb : b->U;
        res->proven = b->U <= lb;
        return CC_OK;
    }
    res->proven = 1;
    res->lower_bound = b->U;
    if (b->U >= CC__TIME_MAX)
        return CC__FAIL(ctx, CC_ERR_INFEASIBLE, "branch and bound: no schedule of the %d jobs meets the constraints", n);
    return CC_OK;
}

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
