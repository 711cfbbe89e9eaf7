/* tests/util.h - what the unit tests share, written independently of the
   library: random instances, a brute-force exact solver, a schedule checker,
   a stream simulator, a PSPLIB reader, a counting allocator that can fail.
   None of it calls the code under test except tu_build_graph (which only
   adds ops) and CHECK_RES (which reads the error message). */
#ifndef TESTS_UTIL_H_INCLUDED
#define TESTS_UTIL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include <string.h>
#include "harness.h"

/* ---- results ------------------------------------------------------------*/
const char* tu_res_name(cc_result r);   /* "CC_ERR_CYCLE" */

/* CHECK_RES(ctx, got, want, fmt, ...): result codes, with names and the
   context's last error on failure. ctx may be NULL. */
#define CHECK_RES(ctx, got, want, ...) do { \
        cc_result tu_g_ = (got), tu_w_ = (want); \
        char tu_d_[800]; \
        snprintf(tu_d_, sizeof tu_d_, "got %s, expected %s%s%.600s%s", tu_res_name(tu_g_), tu_res_name(tu_w_), \
                 (ctx) && tu_g_ != CC_OK ? " [last error: " : "", (ctx) && tu_g_ != CC_OK ? cc_last_error(ctx) : "", \
                 (ctx) && tu_g_ != CC_OK ? "]" : ""); \
        th__check(tu_g_ == tu_w_, __FILE__, __LINE__, tu_d_, __VA_ARGS__); \
    } while (0)

/* ---- the scheduler's desc ------------------------------------------------
   The zero desc (every default) with concerto_rcpsp.h's search plugged in
   (cc_sched_desc.general), as a program that solves general RCPSP
   instances sets it, and zero durations allowed; stream graphs never use it. A test that calls it
   links the implementation of concerto_rcpsp.h. */
static inline cc_sched_desc tu_sched_desc(void) {
    cc_sched_desc d;
    memset(&d, 0, sizeof d);
    d.general = cc_rcpsp_search();
    d.allow_zero_durations = 1;   /* random instances may draw every duration 0 */
    return d;
}

/* ---- paths ----------------------------------------------------------------
   Tests run from the repository root (tests/run.sh cds there). */
const char* tu_data_dir(void);   /* $CONCERTO_DATA or ../shared/data */
const char* tu_tmp_dir(void);    /* $TEST_TMPDIR or build/tmp (created) */
/* Reads a whole file (malloc'd, NUL-terminated); NULL if absent. */
char* tu_read_file(const char* path, size_t* n_bytes);

/* ---- the cost model -------------------------------------------------------
   A collective of n_bytes on n_ranks over one link by the flat alpha-beta
   model (CC_ALGO_FLAT, as the emulated link costs it), or -1 where
   cc_coll_us refuses it. */
double tu_flat_us(const cc_link* link, cc_coll_kind kind, size_t n_bytes, int n_ranks);
/* The ub column (best known makespan) of an instance in the text of a
   j{30,60}_bounds.csv, or -1. */
int tu_bound_ub(const char* csv, const char* instance);
/* 1 if msg contains num as a whole number (not part of a longer one). */
int tu_has_number(const char* msg, int num);

/* ---- random numbers (splitmix64, same everywhere) ------------------------*/
typedef struct tu_rng { uint64_t s; } tu_rng;
uint64_t tu_rand(tu_rng* r);
int      tu_randint(tu_rng* r, int lo, int hi);   /* lo..hi inclusive */
double   tu_unit(tu_rng* r);                      /* [0, 1) */

/* ---- instances ------------------------------------------------------------*/
#define TU_MAXK 8
typedef struct tu_inst {
    int n, k;
    int streams;        /* 1: a stream graph: k streams of capacity 1, op i on stream[i] or -1 */
    int* stream;        /* [n], stream mode */
    double* dur;        /* [n] microseconds */
    int* dem;           /* [n*k] demand of op i on resource r at dem[i*k + r] */
    int cap[TU_MAXK];
    unsigned char* adj; /* [n*n] adj[i*n + j]: j starts after i ends */
} tu_inst;

tu_inst* tu_inst_new(int n, int k, int streams);
void     tu_inst_free(tu_inst* in);
void     tu_set_stream(tu_inst* in, int i, int s);   /* stream mode: sets stream and demand */

typedef struct tu_gen {
    int n_min, n_max;
    int k_min, k_max;
    int streams;          /* 1: stream graph */
    int cap_max;          /* general mode: capacities 1..cap_max */
    int dur_max;          /* durations 0..dur_max units (0 rare) */
    double unit_us;       /* duration unit */
    double p_edge_max;    /* edge probability drawn in [0, p_edge_max] */
    double p_no_stream;   /* stream mode: share of ops on no stream */
} tu_gen;
/* A random DAG whose topological order is a random permutation of the
   indices (so program order is not a topological order). */
tu_inst* tu_random_inst(tu_rng* r, const tu_gen* g);

/* Adds the instance's ops (named "j<i>") and its edges to a new graph: edges
   to earlier ops through desc.deps, the others with cc_graph_add_dep. */
cc_result tu_build_graph(cc_context* ctx, const tu_inst* in, cc_graph** out);

/* ---- independent reference algorithms ----------------------------------- */
/* 1 if start[] satisfies every edge and capacity; else 0 and a message. */
int    tu_check(const tu_inst* in, const double* start_us, double* makespan_us, char* msg, size_t n_msg);
double tu_critical_path(const tu_inst* in);
double tu_resource_bound(const tu_inst* in);   /* max_r load_r / cap_r (no rounding) */
/* Exact optimum by enumerating activity lists through the serial SGS (with
   a bound to prune); durations must be integer multiples of unit_us. */
#define TU_BRUTE_MAXN 16   /* returns -1 above this */
double tu_brute_force(const tu_inst* in, double unit_us, long* n_nodes);
/* Stream simulator: 0 and start times, or -1 on deadlock. issue: op indices. */
int    tu_simulate(const tu_inst* in, const int* issue, double* start_us, double* makespan_us);

/* ---- PSPLIB .sm reader (well-formed files only) ---------------------------*/
tu_inst* tu_sm_parse(const char* text);   /* NULL if it does not understand the text */
/* Writes a .sm text for an instance with job 1 = in's op 0 etc (in must
   already have a single source and sink); malloc'd. */
char*    tu_sm_format(const tu_inst* in);

/* ---- a counting allocator that fails on request --------------------------*/
typedef struct tu_alloc {
    long n_calls;       /* allocation requests (alloc and realloc) so far */
    long fail_at;       /* 0: never; else the request number that fails */
    int  fail_after;    /* 1: every request from fail_at on fails */
    long n_failed;      /* requests refused */
    long live;          /* blocks allocated and not yet freed */
    long bad_frees;     /* frees of pointers this allocator did not hand out */
} tu_alloc;
cc_allocator tu_allocator(tu_alloc* a);

/* Capture stdout and stderr into a file while the library runs. */
typedef struct tu_capture { int saved_out, saved_err; char path[256]; } tu_capture;
int  tu_capture_begin(tu_capture* c);
long tu_capture_end(tu_capture* c, char* head, size_t n_head);  /* bytes captured */

/* 1 if two schedules are the same: every start and the issue order, the
   makespan, bound and proof, and the counts of schedules, nodes and
   windows; else 0 with the first difference in why. */
int tu_same_schedule(const cc_schedule* a, const cc_sched_stats* sa, const cc_schedule* b, const cc_sched_stats* sb,
                     char* why, size_t n_why);

/* Graph helpers for the world tests. */
/* A hash of every op's name, duration (ns) and demands, in program order. */
uint64_t tu_graph_fingerprint(cc_graph* g);
/* Ops with demand 1 on resource r. */
int tu_count_on(cc_graph* g, int r);
/* One step of g on the rank's CPU backend (order NULL: program order),
   after cc_exec_agree on the world communicator. */
cc_result tu_run_step(cc_rank* rank, cc_graph* g, const cc_op* order);
/* tu_run_step, calling before(exec, g, user) once the executor exists
   (e.g. to point the work at transient buffers' arena addresses). */
cc_result tu_run_step_with(cc_rank* rank, cc_graph* g, const cc_op* order, void (*before)(cc_exec*, cc_graph*, void*), void* user);
/* Runs fn on a world of n_ranks; *rc its result, err the world's message. */
void tu_run_world(int n_ranks, cc_result (*fn)(cc_rank*, void*), void* arg, cc_result* rc, char* err, size_t n_err);

#endif
