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
   - the k-th allocation refused, for every k, in cc_world_create's
     communicators (cc_comm_create, cc_comm_split), the CPU backend
     (cc_cpu_backend_create) and profiling (cc_exec_profile_ops,
     cc_exec_profile_steps): a clear error, nothing left allocated, and
     the same calls succeed afterwards.
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
        /* rank 2 sends to rank 0; ranks 1 and 3 exchange with each other */
        if (r == 2) { c.kind = CC_COLL_SEND; c.peer = 0; }
        else if (r == 0) { c.kind = CC_COLL_RECV; c.peer = 2; }
        else { c.kind = r == 1 ? CC_COLL_SEND : CC_COLL_RECV; c.peer = r == 1 ? 3 : 1; }
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
        default: return r == 0 ? val(2, i) : r == 3 ? val(1, i) : 0;
    }
}

static size_t ck_recv_n(cc_coll_kind kind, int r) {
    if (kind == CC_COLL_ALL_GATHER || kind == CC_COLL_ALL_TO_ALL) return (size_t)N * MAXR;
    if (kind == CC_COLL_SEND) return r == 0 || r == 3 ? N : 0;
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
                CHECK_CONTAINS(K->msg[r], kn, "%s: rank %d: names the collective", kn, r);
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

int main(void) {
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 2;
    TH_RUN(test_checksum);
    TH_RUN(test_smallest_timeout);
    cc_context_destroy(g_ctx);
    return th_done();
}
