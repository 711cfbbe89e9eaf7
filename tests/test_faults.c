/* tests/test_faults.c - faults while a step runs, in the in-process world,
   and allocation failures swept where a step's machinery is made:
   - the world's checksum mode (cc_world_desc.checksum): one bit of one
     rank's data flipped in flight (test_flip_rank) in each kind of
     collective and in a send: every member fails with CC_ERR_BACKEND
     naming the collective and the rank whose data was corrupted, no
     receive buffer is written, the next call fails at once, and a new
     world runs; with no flip the results equal a serial reference;
   - the smallest timeout the world accepts (the smallest positive
     double): a collective a rank never joins ends in CC_ERR_TIMEOUT on
     every rank that issued it, naming the missing rank; with every rank
     there, the ranks never disagree (all succeed or all fail);
   - the k-th allocation refused, for every k, in the example trainer's
     step set-up as far as it goes through the library (the model's own
     tensors are malloc'd; TP2 x DP2, with and without ZeRO-1), in the world's
     communicators (cc_world_create, cc_comm_create, cc_comm_split and
     their first collectives and sends, on one and two ranks), a rank's CPU
     backend (cc_cpu_backend_create with a plan, an executor and a step on
     it) and profiling (cc_exec_profile_ops, cc_exec_profile_steps,
     cc_exec_profile_loop_step and _apply): CC_ERR_OUT_OF_MEMORY saying
     so, nothing left allocated, no duration changed by a failed profile,
     and the same calls succeed afterwards.
   Every rank's time to its error is printed (no timed asserts beyond
   "within the timeout").

   Rank threads never call CHECK: they record; the main thread checks. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"
#include "../examples/steps/gpt_step.h"

#define MAXR 4
#define N 1000

static cc_context* g_ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_times(const char* scenario, const double* secs, const cc_result* res, int n) {
    int r;
    printf("     time to the error, %s:", scenario);
    for (r = 0; r < n; r++) printf(" rank %d %.6f s (%s)", r, secs[r], tu_res_name(res[r]));
    printf("\n");
}

/* ---- checksums ---------------------------------------------------------------*/
static const char* kname(cc_coll_kind k) {
    switch (k) {
        case CC_COLL_ALL_REDUCE: return "all_reduce";
        case CC_COLL_REDUCE_SCATTER: return "reduce_scatter";
        case CC_COLL_ALL_GATHER: return "all_gather";
        case CC_COLL_BROADCAST: return "broadcast";
        case CC_COLL_ALL_TO_ALL: return "all_to_all";
        default: return "send";
    }
}

/* Element i of rank r's data: small integers, exact in float. */
static float val(int r, int i) { return (float)((r + 1) * 100 + i % 97); }

typedef struct ck_run {
    cc_coll_kind kind;
    int flip;                      /* 1: rank 2's data flipped in collective #1 (send #1) */
    cc_result first[MAXR], second[MAXR], later[MAXR];
    char msg[MAXR][600], later_msg[MAXR][600];
    double secs[MAXR];
    int recv_untouched[MAXR];      /* the failed collective wrote nothing */
    int send_untouched[MAXR];      /* the flipped rank's own buffer is as it was */
    int first_right[MAXR];         /* collective #0 equals the serial reference */
} ck_run;

static cc_result ck_coll(cc_comm* comm, cc_coll_kind kind, int r, float* send, float* recv) {
    cc_collective c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.dtype = CC_DTYPE_FLOAT32;
    c.n_elems = N;
    c.comm = comm;
    c.send_buf = send;
    c.recv_buf = recv;
    if (kind == CC_COLL_BROADCAST) c.peer = 2;   /* root: the rank whose data is flipped */
    if (kind == CC_COLL_SEND || kind == CC_COLL_RECV) {
        /* rank 2 sends to rank 0; ranks 1 and 3 take no part */
        if (r == 1 || r == 3) return CC_OK;
        c.kind = r == 2 ? CC_COLL_SEND : CC_COLL_RECV;
        c.peer = r == 2 ? 0 : 2;
    }
    return cc_comm_run(&c);
}

/* The serial reference of collective kind for rank r, element i of recv. */
static float ck_ref(cc_coll_kind kind, int r, int i) {
    int m;
    float s = 0;
    switch (kind) {
        case CC_COLL_ALL_REDUCE: for (m = 0; m < MAXR; m++) s += val(m, i); return s;
        case CC_COLL_REDUCE_SCATTER: for (m = 0; m < MAXR; m++) s += val(m, r * N + i); return s;
        case CC_COLL_ALL_GATHER: return val(i / N, i % N);
        case CC_COLL_BROADCAST: return val(2, i);
        case CC_COLL_ALL_TO_ALL: return val(i / N, r * N + i % N);
        default: return val(2, i);   /* rank 0's receive */
    }
}

static size_t ck_recv_n(cc_coll_kind kind, int r) {
    if (kind == CC_COLL_ALL_GATHER || kind == CC_COLL_ALL_TO_ALL) return (size_t)N * MAXR;
    if (kind == CC_COLL_SEND) return r == 0 ? N : 0;
    return N;
}

static cc_result ck_rank(cc_rank* rank, void* ud) {
    ck_run* K = (ck_run*)ud;
    int r = cc_rank_index(rank), i, ok;
    size_t nr = ck_recv_n(K->kind, r);
    float* send = (float*)malloc(sizeof(float) * N * MAXR);
    float* keep = (float*)malloc(sizeof(float) * N * MAXR);
    float* recv = (float*)malloc(sizeof(float) * N * MAXR);
    cc_comm* comm = cc_rank_world_comm(rank);
    double t0;
    for (i = 0; i < N * MAXR; i++) send[i] = val(r, i);
    memcpy(keep, send, sizeof(float) * N * MAXR);
    for (i = 0; i < N * MAXR; i++) recv[i] = -1;
    K->first[r] = ck_coll(comm, K->kind, r, send, recv);
    ok = K->first[r] == CC_OK;
    for (i = 0; ok && i < (int)nr; i++) ok = recv[i] == ck_ref(K->kind, r, i);
    K->first_right[r] = ok;
    for (i = 0; i < N * MAXR; i++) recv[i] = -1;
    t0 = now_s();
    K->second[r] = ck_coll(comm, K->kind, r, send, recv);
    K->secs[r] = now_s() - t0;
    snprintf(K->msg[r], 600, "%s", K->second[r] == CC_OK ? "" : cc_last_error(cc_rank_context(rank)));
    ok = 1;
    for (i = 0; i < N * MAXR; i++) ok &= recv[i] == -1;
    K->recv_untouched[r] = ok;
    K->send_untouched[r] = memcmp(send, keep, sizeof(float) * N * MAXR) == 0;
    if (K->flip) {
        K->later[r] = ck_coll(comm, K->kind, r, send, recv);
        snprintf(K->later_msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    }
    free(send);
    free(keep);
    free(recv);
    return CC_OK;
}

static void test_checksum(void) {
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_REDUCE_SCATTER, CC_COLL_ALL_GATHER,
                                          CC_COLL_BROADCAST, CC_COLL_ALL_TO_ALL, CC_COLL_SEND };
    int k, flip, r;
    for (k = 0; k < (int)(sizeof kinds / sizeof kinds[0]); k++)
        for (flip = 0; flip < 2; flip++) {
            cc_world_desc d = {0};
            cc_world* w = NULL;
            ck_run* K = (ck_run*)calloc(1, sizeof *K);
            const char* kn = kname(kinds[k]);
            d.n_ranks = MAXR;
            d.timeout_s = 20;
            d.checksum = 1;
            if (flip) { d.test_flip_rank = 2 + 1; d.test_flip_collective = 1; }
            K->kind = kinds[k];
            K->flip = flip;
            if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "%s: a world: %s", kn, cc_last_error(g_ctx)); free(K); return; }
            CHECK_RES(NULL, cc_world_run(w, ck_rank, K), CC_OK, "%s%s: the ranks return", kn, flip ? ", flipped" : "");
            for (r = 0; r < MAXR; r++) {
                int in_flip = kinds[k] != CC_COLL_SEND || r == 0 || r == 2;   /* the pair whose data is flipped */
                CHECK(K->first_right[r], "%s: rank %d: collective #0 equals the serial reference", kn, r);
                if (!flip || !in_flip) {
                    if (!flip) CHECK_RES(NULL, K->second[r], CC_OK, "%s: rank %d: collective #1 with no flip succeeds (%s)", kn, r, K->msg[r]);
                    continue;
                }
                CHECK_RES(NULL, K->second[r], CC_ERR_BACKEND, "%s: rank %d: the flipped collective fails", kn, r);
                CHECK_CONTAINS(K->msg[r], "the data of rank 2 arrived corrupted", "%s: rank %d: names rank 2 (%s)", kn, r, K->msg[r]);
                CHECK_CONTAINS(K->msg[r], kinds[k] == CC_COLL_SEND ? "from rank 2 to rank 0" : kn, "%s: rank %d: names the collective", kn, r);
                CHECK_CONTAINS(K->msg[r], "#1", "%s: rank %d: and its number", kn, r);
                CHECK(K->recv_untouched[r], "%s: rank %d: nothing was written into its receive buffer", kn, r);
                CHECK(K->send_untouched[r], "%s: rank %d: its send buffer is unchanged", kn, r);
                CHECK(K->secs[r] < 20, "%s: rank %d: within the timeout (%.6f s)", kn, r, K->secs[r]);
                CHECK(K->later[r] != CC_OK, "%s: rank %d: the next call fails at once (%s)", kn, r, K->later_msg[r]);
            }
            if (flip) {
                char what[80];
                snprintf(what, sizeof what, "checksum, rank 2's data flipped in %s #1", kn);
                print_times(what, K->secs, K->second, MAXR);
            }
            cc_world_destroy(w);
            free(K);
        }
    /* a new world runs afterwards */
    {
        cc_world_desc d = {0};
        cc_world* w = NULL;
        ck_run* K = (ck_run*)calloc(1, sizeof *K);
        d.n_ranks = MAXR;
        d.checksum = 1;
        K->kind = CC_COLL_ALL_REDUCE;
        if (cc_world_create(g_ctx, &d, &w) == CC_OK) {
            CHECK_RES(NULL, cc_world_run(w, ck_rank, K), CC_OK, "a new world afterwards runs");
            for (r = 0; r < MAXR; r++) CHECK_RES(NULL, K->second[r], CC_OK, "... rank %d's collectives succeed", r);
            cc_world_destroy(w);
        } else
            CHECK(0, "a new world: %s", cc_last_error(g_ctx));
        free(K);
    }
    {   /* the desc's new fields are checked */
        cc_world_desc d = {0};
        cc_world* w = NULL;
        d.n_ranks = 2;
        d.checksum = 2;
        d.test_flip_rank = 3;
        d.test_flip_collective = -1;
        CHECK_RES(g_ctx, cc_world_create(g_ctx, &d, &w), CC_ERR_INVALID_ARG, "checksum 2, test_flip_rank 3 of 2 ranks, collective -1");
        CHECK(w == NULL && strstr(cc_last_error(g_ctx), "checksum must be 0 or 1") &&
              strstr(cc_last_error(g_ctx), "test_flip_rank") && strstr(cc_last_error(g_ctx), "test_flip_collective"),
              "every problem named: %s", cc_last_error(g_ctx));
    }
}

/* ---- the smallest timeout ----------------------------------------------------------*/
typedef struct tm_run { int absent; cc_result res[MAXR]; double secs[MAXR]; char msg[MAXR][600]; } tm_run;

static cc_result tm_rank(cc_rank* rank, void* ud) {
    tm_run* T = (tm_run*)ud;
    int r = cc_rank_index(rank);
    float a[64], b[64];
    cc_collective c;
    double t0;
    memset(a, 0, sizeof a);
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.n_elems = 64;
    c.comm = cc_rank_world_comm(rank); c.send_buf = a; c.recv_buf = b;
    if (r == T->absent) return CC_OK;   /* never joins */
    t0 = now_s();
    T->res[r] = cc_comm_run(&c);
    T->secs[r] = now_s() - t0;
    snprintf(T->msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    return CC_OK;
}

static void test_smallest_timeout(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    tm_run T;
    int r, run, agree = 0, all_ok = 0;
    double tiny = nextafter(0.0, 1.0);
    d.n_ranks = MAXR;
    d.timeout_s = tiny;
    memset(&T, 0, sizeof T);
    T.absent = 3;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "a world with timeout_s %g: %s", tiny, cc_last_error(g_ctx)); return; }
    CHECK(cc_world_query_defaults(&d).timeout_s == tiny, "it is kept as given");
    CHECK_RES(NULL, cc_world_run(w, tm_rank, &T), CC_OK, "the ranks return");
    for (r = 0; r < MAXR - 1; r++) {
        CHECK_RES(NULL, T.res[r], CC_ERR_TIMEOUT, "rank %d: CC_ERR_TIMEOUT when rank 3 never joins", r);
        CHECK_CONTAINS(T.msg[r], "all_reduce", "rank %d: the message names the collective (%s)", r, T.msg[r]);
        CHECK_CONTAINS(T.msg[r], "3 (which has", "rank %d: ... and rank 3 among those missing", r);
        CHECK(T.secs[r] < 30, "rank %d: ends (%.6f s)", r, T.secs[r]);
    }
    print_times("world, timeout_s = smallest positive double, rank 3 never joins", T.secs, T.res, MAXR - 1);
    cc_world_destroy(w);
    /* everyone there: the ranks never disagree, whoever is first */
    for (run = 0; run < 20; run++) {
        int n_ok = 0;
        memset(&T, 0, sizeof T);
        T.absent = -1;
        if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "world %d", run); return; }
        cc_world_run(w, tm_rank, &T);
        for (r = 0; r < MAXR; r++) n_ok += T.res[r] == CC_OK;
        if (n_ok == 0 || n_ok == MAXR) agree++;
        if (n_ok == MAXR) all_ok++;
        cc_world_destroy(w);
    }
    CHECK_INT(agree, 20, "every rank there, 20 worlds: all ranks succeed or all fail (all succeeded %d times)", all_ok);
    /* a new world with the default timeout runs */
    d.timeout_s = 0;
    memset(&T, 0, sizeof T);
    T.absent = -1;
    if (cc_world_create(g_ctx, &d, &w) == CC_OK) {
        cc_world_run(w, tm_rank, &T);
        for (r = 0; r < MAXR; r++) CHECK_RES(NULL, T.res[r], CC_OK, "a new world afterwards: rank %d's all_reduce", r);
        cc_world_destroy(w);
    }
}

/* ---- allocation failures ------------------------------------------------------------
   tu_alloc behind a lock: stream threads and ranks allocate too. */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static cc_allocator g_inner;
static void* l_alloc(size_t n, void* u) { void* p; pthread_mutex_lock(&g_mu); p = g_inner.alloc_fn(n, u); pthread_mutex_unlock(&g_mu); return p; }
static void* l_realloc(void* q, size_t n, void* u) { void* p; pthread_mutex_lock(&g_mu); p = g_inner.realloc_fn(q, n, u); pthread_mutex_unlock(&g_mu); return p; }
static void l_free(void* q, void* u) { pthread_mutex_lock(&g_mu); g_inner.free_fn(q, u); pthread_mutex_unlock(&g_mu); }
static long a_calls(tu_alloc* a) { long n; pthread_mutex_lock(&g_mu); n = a->n_calls; pthread_mutex_unlock(&g_mu); return n; }
static long a_live(tu_alloc* a) { long n; pthread_mutex_lock(&g_mu); n = a->live; pthread_mutex_unlock(&g_mu); return n; }
static void a_fail(tu_alloc* a, long k) { pthread_mutex_lock(&g_mu); a->fail_at = k ? a->n_calls + k : 0; a->fail_after = 0; pthread_mutex_unlock(&g_mu); }

static cc_context* failing_context(tu_alloc* a) {
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    memset(a, 0, sizeof *a);
    g_inner = tu_allocator(a);
    cd.allocator = g_inner;
    cd.allocator.alloc_fn = l_alloc;
    cd.allocator.realloc_fn = l_realloc;
    cd.allocator.free_fn = l_free;
    return cc_context_create(&cd, &ctx) == CC_OK ? ctx : NULL;
}

/* A -> B (stream 1), A -> C (stream 1), D on stream 0 after B: ops that spin a little. */
static void spin(void* stream, void* user) { int i; volatile double x = 0; (void)stream; (void)user; for (i = 0; i < 2000; i++) x += i * 0.5; }
static cc_result small_graph(cc_context* ctx, cc_graph** g) {
    cc_op a, b, dep[1];
    cc_op_desc d = {0};
    cc_result r = cc_graph_create(ctx, NULL, g);
    if (r != CC_OK) return r;
    d.name = "A"; d.stream = 0; d.fn = spin; d.duration_us = 1;
    if ((r = cc_graph_add_op(*g, &d, &a)) != CC_OK) return r;
    dep[0] = a; d.deps = dep; d.n_deps = 1;
    d.name = "B"; d.stream = 1;
    if ((r = cc_graph_add_op(*g, &d, &b)) != CC_OK) return r;
    d.name = "C";
    if ((r = cc_graph_add_op(*g, &d, NULL)) != CC_OK) return r;
    dep[0] = b; d.name = "D"; d.stream = 0;
    return cc_graph_add_op(*g, &d, NULL);
}

/* Sweeps call over every k of the allocation requests it makes: each
   refusal gives CC_ERR_OUT_OF_MEMORY (or CC_OK where a refused request is
   retried), nothing stays allocated, and then call succeeds. Returns the
   number of points swept. */
typedef cc_result (*sweep_fn)(cc_context* ctx, void* user, char* msg, size_t msg_size);
static long sweep(const char* name, cc_context* ctx, tu_alloc* a, sweep_fn call, void* user) {
    long n, k, base, n_bad = 0, n_oom = 0;
    char msg[700];
    CHECK_RES(NULL, call(ctx, user, msg, sizeof msg), CC_OK, "%s: without refusals (a first time)", name);
    base = a_calls(a);
    CHECK_RES(NULL, call(ctx, user, msg, sizeof msg), CC_OK, "%s: without refusals", name);
    n = a_calls(a) - base;
    for (k = 1; k <= n; k++) {
        long live = a_live(a);
        cc_result r;
        a_fail(a, k);
        r = call(ctx, user, msg, sizeof msg);
        a_fail(a, 0);
        if (r == CC_ERR_OUT_OF_MEMORY) n_oom++;
        else if (r != CC_OK && n_bad++ < 3) NOTE("%s: k=%ld: %s: %s", name, k, tu_res_name(r), msg);
        if (r == CC_ERR_OUT_OF_MEMORY && !strstr(msg, "memory") && n_bad++ < 3)
            NOTE("%s: k=%ld: the message does not say what ran out: %s", name, k, msg);
        if (a_live(a) != live && n_bad++ < 3) NOTE("%s: k=%ld: %ld blocks left allocated", name, k, a_live(a) - live);
        r = call(ctx, user, msg, sizeof msg);
        if (r != CC_OK && n_bad++ < 3) NOTE("%s: k=%ld: the call fails afterwards: %s", name, k, msg);
    }
    printf("     allocation-failure points swept, %s: %ld (%ld refused with CC_ERR_OUT_OF_MEMORY)\n", name, n, n_oom);
    CHECK(n > 0, "%s makes %ld allocation requests", name, n);
    CHECK_INT(n_bad, 0, "%s: for k = 1..%ld: CC_ERR_OUT_OF_MEMORY or CC_OK, nothing left allocated, works afterwards", name, n);
    CHECK(n_oom > 0, "%s: refusals are reported (%ld of %ld)", name, n_oom, n);
    return n;
}

/* profiling: an executor made once; each call profiles it */
typedef struct prof_case { cc_graph* g; cc_plan* pl; cc_backend be; cc_exec* x; int which; double dur[4]; } prof_case;
static cc_result prof_call(cc_context* ctx, void* user, char* msg, size_t msg_size) {
    prof_case* P = (prof_case*)user;
    cc_result r;
    int i, same = 1;
    for (i = 0; i < 4; i++) P->dur[i] = cc_op_duration_us(P->g, cc_graph_op(P->g, i));
    switch (P->which) {
        case 0: r = cc_exec_profile_ops(P->x, 2, NULL); break;
        case 1: r = cc_exec_profile_steps(P->x, 2, NULL); break;
        default:
            r = cc_exec_step(P->x);
            if (r == CC_OK) r = cc_exec_profile_loop_step(P->x);
            if (r == CC_OK) r = cc_exec_profile_loop_apply(P->x, NULL);
            break;
    }
    /* a failed profile changes no duration (no partial state) */
    snprintf(msg, msg_size, "%s", r == CC_OK ? "" : cc_last_error(ctx));
    for (i = 0; r != CC_OK && i < 4; i++) same &= P->dur[i] == cc_op_duration_us(P->g, cc_graph_op(P->g, i));
    if (!same) { snprintf(msg, msg_size, "a failed profile changed a duration"); return CC_ERR_INVALID_SCHEDULE; }
    if (r == CC_OK && cc_exec_step(P->x) != CC_OK) {   /* the executor still runs */
        snprintf(msg, msg_size, "the step after the profile: %s", cc_last_error(ctx));
        return CC_ERR_BACKEND;
    }
    return r;
}

static void test_alloc_profile(void) {
    static const char* names[] = { "cc_exec_profile_ops", "cc_exec_profile_steps", "cc_exec_profile_loop_step + _apply" };
    tu_alloc a;
    cc_context* ctx = failing_context(&a);
    int w;
    if (!CHECK(ctx != NULL, "a context")) return;
    for (w = 0; w < 3; w++) {
        prof_case P;
        memset(&P, 0, sizeof P);
        P.which = w;
        if (small_graph(ctx, &P.g) != CC_OK || cc_plan_create(ctx, P.g, NULL, &P.pl) != CC_OK ||
            cc_cpu_backend_create_ctx(ctx, &P.be) != CC_OK || cc_exec_create(ctx, P.pl, &P.be, &P.x) != CC_OK) {
            CHECK(0, "%s: set-up: %s", names[w], cc_last_error(ctx));
            return;
        }
        sweep(names[w], ctx, &a, prof_call, &P);
        cc_exec_destroy(P.x);
        cc_backend_destroy(&P.be);
        cc_plan_destroy(P.pl);
        cc_graph_destroy(P.g);
    }
    cc_context_destroy(ctx);
    CHECK_INT(a.live, 0, "profiling: every block freed");
}

/* the world's communicators, the CPU backend of a rank and an executor on
   it, in a world of one rank (one thread: the k-th request is the same
   every time) and of two */
typedef struct wc_case { int n_ranks; int what; cc_result res[2]; char msg[2][600]; } wc_case;
static cc_result wc_rank(cc_rank* rank, void* user) {
    wc_case* W = (wc_case*)user;
    int r = cc_rank_index(rank), n = cc_rank_count(rank), members[2] = {0, 1};
    cc_context* ctx = cc_rank_context(rank);
    cc_comm *c = NULL, *s = NULL;
    cc_result res = CC_OK;
    float x[8] = {0}, y[16];
    cc_collective k;
    memset(&k, 0, sizeof k);
    k.kind = CC_COLL_ALL_REDUCE; k.dtype = CC_DTYPE_FLOAT32; k.n_elems = 8; k.send_buf = x; k.recv_buf = y;
    if (W->what == 0) {   /* communicators and their first collectives */
        res = cc_comm_create(rank, members, n, &c);
        if (res == CC_OK) { k.comm = c; res = cc_comm_run(&k); }
        if (res == CC_OK) res = cc_comm_split(c, 0, -r, &s);
        if (res == CC_OK) { k.comm = s; k.kind = CC_COLL_ALL_GATHER; res = cc_comm_run(&k); }
        if (res == CC_OK && n == 2) {   /* send/recv: the channels */
            k.comm = c; k.kind = r == 0 ? CC_COLL_SEND : CC_COLL_RECV; k.peer = 1 - r;
            res = cc_comm_run(&k);
        }
    } else {   /* the CPU backend of the rank, a plan and an executor on it, a step */
        cc_backend be;
        cc_graph* g = NULL;
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        res = cc_cpu_backend_create(rank, &be);
        if (res == CC_OK) {
            cc_result q = small_graph(ctx, &g);
            if (q == CC_OK) q = cc_plan_create(ctx, g, NULL, &pl);
            if (q == CC_OK) q = cc_exec_create(ctx, pl, &be, &x);
            if (q == CC_OK) q = cc_exec_step(x);
            res = q;
            cc_exec_destroy(x);
            cc_plan_destroy(pl);
            cc_graph_destroy(g);
            cc_backend_destroy(&be);
        }
    }
    W->res[r] = res;
    snprintf(W->msg[r], sizeof W->msg[r], "%s", res == CC_OK ? "" : cc_last_error(ctx));
    return res;
}

/* One world per call: cc_world_create, the ranks' work, cc_world_destroy.
   Returns the world's result (rank 0's first failure). */
static cc_result wc_call(cc_context* ctx, void* user, char* msg, size_t msg_size) {
    wc_case* W = (wc_case*)user;
    cc_world_desc d = {0};
    cc_world* w = NULL;
    cc_result r;
    d.n_ranks = W->n_ranks;
    d.timeout_s = 5;
    memset(W->res, 0, sizeof W->res);
    if ((r = cc_world_create(ctx, &d, &w)) != CC_OK) { snprintf(msg, msg_size, "%s", cc_last_error(ctx)); return r; }
    r = cc_world_run(w, wc_rank, W);
    snprintf(msg, msg_size, "%s", r == CC_OK ? "" : cc_world_error(w));
    cc_world_destroy(w);
    return r;
}

static void test_alloc_world(void) {
    static const char* names[] = { "cc_world_create + cc_comm_create + cc_comm_split + their collectives",
                                   "cc_world_create + cc_cpu_backend_create + plan, executor and a step on a rank" };
    tu_alloc a;
    cc_context* ctx = failing_context(&a);
    int what, n;
    if (!CHECK(ctx != NULL, "a context")) return;
    for (what = 0; what < 2; what++)
        for (n = 1; n <= 2; n++) {
            wc_case W;
            char name[200];
            memset(&W, 0, sizeof W);
            W.n_ranks = n;
            W.what = what;
            snprintf(name, sizeof name, "%s, %d rank%s", names[what], n, n > 1 ? "s" : "");
            sweep(name, ctx, &a, wc_call, &W);
        }
    cc_context_destroy(ctx);
    CHECK_INT(a.live, 0, "worlds: every block freed");
}

/* the example trainer's step set-up, as far as it goes through the
   library: the model's sizes (gpt_model_create without memory: its own
   tensors are malloc'd, not the context's), its communicators
   (cc_comm_wrap), the step's graph and a plan of it, TP2 x DP2 */
typedef struct gpt_case { int zero; } gpt_case;
static cc_result gpt_call(cc_context* ctx, void* user, char* msg, size_t msg_size) {
    gpt_case* G = (gpt_case*)user;
    gpt_step_desc d;
    gpt_model m;
    cc_graph* g = NULL;
    gpt_op_store ops;
    cc_plan* pl = NULL;
    cc_result r;
    memset(&d, 0, sizeof d);
    memset(&ops, 0, sizeof ops);
    d.cfg.V = 128; d.cfg.C = 64; d.cfg.L = 2; d.cfg.H = 4; d.cfg.T = 16;
    d.micro_batch = 2;
    d.tp = 2; d.dp = 2;
    d.zero = G->zero;
    r = gpt_model_create(&m, &d, NULL, ctx);
    if (r == CC_OK) r = gpt_step_plan_comms(&m);
    if (r == CC_OK) r = gpt_build_graph(&m, 1, &g, &ops);
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    snprintf(msg, msg_size, "%s%s%s", m.error, m.error[0] ? " / " : "", r == CC_OK ? "" : cc_last_error(ctx));
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    gpt_op_store_free(&ops);
    gpt_model_free(&m);
    return r;
}

static void test_alloc_gpt_setup(void) {
    tu_alloc a;
    cc_context* ctx = failing_context(&a);
    gpt_case G;
    if (!CHECK(ctx != NULL, "a context")) return;
    G.zero = 0;
    sweep("the trainer's step set-up (gpt_model_create, gpt_step_plan_comms, gpt_build_graph, cc_plan_create), TP2 x DP2",
          ctx, &a, gpt_call, &G);
    G.zero = 1;
    sweep("the same with ZeRO-1", ctx, &a, gpt_call, &G);
    cc_context_destroy(ctx);
    CHECK_INT(a.live, 0, "the trainer's set-up: every block freed");
}

int main(void) {
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 2;
    TH_RUN(test_checksum);
    TH_RUN(test_smallest_timeout);
    TH_RUN(test_alloc_profile);
    TH_RUN(test_alloc_world);
    TH_RUN(test_alloc_gpt_setup);
    cc_context_destroy(g_ctx);
    return th_done();
}
