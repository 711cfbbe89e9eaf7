/* tests/test_world.c - the in-process world: ranks as threads, communicators,
   collectives with real data (checked against serial reference loops over
   every rank's inputs), mismatches, timeouts, a failing rank, the emulated
   link, bad arguments and the allocator's balance.

   Rank threads never call CHECK (the harness is not thread-safe): they count
   their failures and keep the first one's description, and the main thread
   checks those after cc_world_run. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"

/* The context the worlds of these tests are created in (main makes it). */
static cc_context* g_ctx;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_s(double s) {
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    nanosleep(&ts, NULL);
}

/* ---- a thread-safe counting allocator --------------------------------------*/
typedef struct count_alloc { pthread_mutex_t mu; long live, n_calls; } count_alloc;
static void* ca_alloc(size_t n, void* ud) {
    count_alloc* a = (count_alloc*)ud;
    void* p = malloc(n);
    pthread_mutex_lock(&a->mu);
    if (p) { a->live++; a->n_calls++; }
    pthread_mutex_unlock(&a->mu);
    return p;
}
static void* ca_realloc(void* p, size_t n, void* ud) {
    count_alloc* a = (count_alloc*)ud;
    void* q = realloc(p, n);
    pthread_mutex_lock(&a->mu);
    if (q && !p) a->live++;
    if (q) a->n_calls++;
    pthread_mutex_unlock(&a->mu);
    return q;
}
static void ca_free(void* p, void* ud) {
    count_alloc* a = (count_alloc*)ud;
    if (!p) return;
    free(p);
    pthread_mutex_lock(&a->mu);
    a->live--;
    pthread_mutex_unlock(&a->mu);
}

/* ---- a logger that keeps the last message ---------------------------------*/
typedef struct log_keep { pthread_mutex_t mu; int n; char last[600]; } log_keep;
static void keep_log(cc_log_level level, const char* message, void* user_data) {
    log_keep* k = (log_keep*)user_data;
    (void)level;
    pthread_mutex_lock(&k->mu);
    k->n++;
    snprintf(k->last, sizeof k->last, "%s", message);
    pthread_mutex_unlock(&k->mu);
}

/* ---- per-thread tallies ------------------------------------------------------*/
typedef struct tally { int n_cases, n_bad; char first_bad[400]; } tally;
static void tally_bad(tally* t, const char* fmt, ...) {
    va_list ap;
    t->n_bad++;
    if (t->n_bad > 1) return;
    va_start(ap, fmt);
    vsnprintf(t->first_bad, sizeof t->first_bad, fmt, ap);
    va_end(ap);
}

/* ---- inputs and the serial reference -------------------------------------------
   Element i of world rank r's send buffer, for a case salt. Values are
   small integers times a power of two plus a fraction so that float sums
   round, and the reference must add them in rank order to agree bitwise. */
static double input_value(int rank, size_t i, unsigned salt) {
    uint64_t z = (uint64_t)rank * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull + salt * 0x94D049BB133111EBull;
    z ^= z >> 29;
    z *= 0xBF58476D1CE4E5B9ull;
    z ^= z >> 32;
    return (double)(int)(z % 2001) - 1000.0 + (double)(z >> 40 & 1023) / 1024.0 * 0.3;
}

static size_t dsize(cc_dtype dt) { return dt == CC_DTYPE_FLOAT64 ? 8 : 4; }
static const char* dname(cc_dtype dt) { return dt == CC_DTYPE_FLOAT32 ? "float32" : dt == CC_DTYPE_FLOAT64 ? "float64" : "int32"; }
static const char* kname(cc_coll_kind k) {
    static const char* names[] = {"none", "all_reduce", "reduce_scatter", "all_gather", "broadcast", "send", "recv", "all_to_all"};
    return names[k];
}

static void fill(void* buf, cc_dtype dt, int rank, size_t n, unsigned salt) {
    size_t i;
    for (i = 0; i < n; i++) {
        double v = input_value(rank, i, salt);
        if (dt == CC_DTYPE_FLOAT32) ((float*)buf)[i] = (float)v;
        else if (dt == CC_DTYPE_FLOAT64) ((double*)buf)[i] = v;
        else ((int32_t*)buf)[i] = (int32_t)floor(v);
    }
}

/* reference reduction of element i over the members (in member order) */
static void ref_reduce(void* out, size_t o, cc_dtype dt, cc_reduce_op op, const int* members, int n, size_t i,
                       unsigned salt) {
    int m;
    if (dt == CC_DTYPE_FLOAT32) {
        float acc = (float)input_value(members[0], i, salt);
        for (m = 1; m < n; m++) {
            float x = (float)input_value(members[m], i, salt);
            if (op == CC_REDUCE_MAX) acc = x > acc ? x : acc; else acc = acc + x;
        }
        if (op == CC_REDUCE_AVG) acc = acc / (float)n;
        ((float*)out)[o] = acc;
    } else if (dt == CC_DTYPE_FLOAT64) {
        double acc = input_value(members[0], i, salt);
        for (m = 1; m < n; m++) {
            double x = input_value(members[m], i, salt);
            if (op == CC_REDUCE_MAX) acc = x > acc ? x : acc; else acc = acc + x;
        }
        if (op == CC_REDUCE_AVG) acc = acc / (double)n;
        ((double*)out)[o] = acc;
    } else {
        int32_t acc = (int32_t)floor(input_value(members[0], i, salt));
        for (m = 1; m < n; m++) {
            int32_t x = (int32_t)floor(input_value(members[m], i, salt));
            if (op == CC_REDUCE_MAX) acc = x > acc ? x : acc; else acc = acc + x;
        }
        if (op == CC_REDUCE_AVG) acc = acc / n;
        ((int32_t*)out)[o] = acc;
    }
}

static void ref_copy(void* out, size_t o, cc_dtype dt, int rank, size_t i, unsigned salt) {
    if (dt == CC_DTYPE_FLOAT32) ((float*)out)[o] = (float)input_value(rank, i, salt);
    else if (dt == CC_DTYPE_FLOAT64) ((double*)out)[o] = input_value(rank, i, salt);
    else ((int32_t*)out)[o] = (int32_t)floor(input_value(rank, i, salt));
}

/* ---- one case on one communicator, from one rank's thread ----------------------*/
typedef struct group_view {
    cc_rank* rank;
    cc_comm* comm;
    const int* members;   /* world ranks in comm order */
    int n, me;
} group_view;

static const size_t sizes[] = {0, 1, 5, 1000};
#define N_SIZES ((int)(sizeof sizes / sizeof sizes[0]))

/* Runs coll kind on the view and compares with the reference. */
static void run_case(const group_view* v, tally* t, cc_coll_kind kind, cc_dtype dt, cc_reduce_op op, size_t cnt,
                     int in_place, int root, unsigned salt) {
    int n = v->n, me = v->me, wr = v->members[me];
    size_t es = dsize(dt), n_send = cnt, n_recv = cnt, i;
    char *send, *recv, *want;
    cc_collective c;
    cc_result r;
    if (kind == CC_COLL_REDUCE_SCATTER || kind == CC_COLL_ALL_TO_ALL) n_send = cnt * (size_t)n;
    if (kind == CC_COLL_ALL_GATHER || kind == CC_COLL_ALL_TO_ALL) n_recv = cnt * (size_t)n;
    send = (char*)malloc(n_send * es + 8);
    recv = (char*)malloc(n_recv * es + 8);
    want = (char*)malloc(n_recv * es + 8);
    fill(send, dt, wr, n_send, salt);
    memset(recv, 0x5a, n_recv * es + 8);
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.dtype = dt;
    c.reduce = op;
    c.n_elems = cnt;
    c.peer = root;
    c.comm = v->comm;
    c.send_buf = send;
    c.recv_buf = recv;
    if (in_place) {
        memcpy(recv, send, n_send * es);
        c.send_buf = recv;
    }
    switch (kind) {
        case CC_COLL_ALL_REDUCE:
            for (i = 0; i < cnt; i++) ref_reduce(want, i, dt, op, v->members, n, i, salt);
            break;
        case CC_COLL_REDUCE_SCATTER:
            for (i = 0; i < cnt; i++) ref_reduce(want, i, dt, op, v->members, n, (size_t)me * cnt + i, salt);
            break;
        case CC_COLL_ALL_GATHER: {
            int m;
            for (m = 0; m < n; m++)
                for (i = 0; i < cnt; i++) ref_copy(want, (size_t)m * cnt + i, dt, v->members[m], i, salt);
            break;
        }
        case CC_COLL_BROADCAST:
            for (i = 0; i < cnt; i++) ref_copy(want, i, dt, v->members[root], i, salt);
            if (me != root && !in_place) c.send_buf = NULL;   /* ignored off the root */
            break;
        case CC_COLL_ALL_TO_ALL: {
            int m;
            for (m = 0; m < n; m++)
                for (i = 0; i < cnt; i++) ref_copy(want, (size_t)m * cnt + i, dt, v->members[m], (size_t)me * cnt + i, salt);
            break;
        }
        default: break;
    }
    t->n_cases++;
    r = cc_comm_run(&c);
    if (r != CC_OK) {
        tally_bad(t, "rank %d %s(%d) of %d %s%s root %d: %s: %s", wr, kname(kind), (int)op, (int)cnt, dname(dt),
                  in_place ? " in place" : "", root, tu_res_name(r), cc_last_error(cc_rank_context(v->rank)));
    } else if (memcmp(recv, want, n_recv * es) != 0) {
        size_t bad = 0;
        while (bad < n_recv * es && recv[bad] == want[bad]) bad++;
        tally_bad(t, "rank %d %s(%d) of %d %s%s root %d: result differs from the reference at element %d",
                  wr, kname(kind), (int)op, (int)cnt, dname(dt), in_place ? " in place" : "", root, (int)(bad / es));
    } else {
        unsigned char pad[8];
        memset(pad, 0x5a, sizeof pad);
        if (memcmp(recv + n_recv * es, pad, 8) != 0)
            tally_bad(t, "rank %d %s of %d %s wrote past the end of recv_buf", wr, kname(kind), (int)cnt, dname(dt));
    }
    free(send);
    free(recv);
    free(want);
}

/* Send/recv: every ordered pair (a, b) of the group in turn, a sends to b,
   twice in a row (the k-th send pairs with the k-th recv). */
static void run_p2p(const group_view* v, tally* t, cc_dtype dt, size_t cnt, unsigned salt) {
    int a, b, k;
    size_t es = dsize(dt), i;
    char* buf = (char*)malloc(cnt * es + 8);
    char* want = (char*)malloc(cnt * es + 8);
    for (a = 0; a < v->n; a++)
        for (b = 0; b < v->n; b++) {
            cc_collective c;
            cc_result r;
            if (a == b || (v->me != a && v->me != b)) continue;
            for (k = 0; k < 2; k++) {
                memset(&c, 0, sizeof c);
                c.dtype = dt;
                c.n_elems = cnt;
                c.comm = v->comm;
                if (v->me == a) {
                    fill(buf, dt, v->members[a], cnt, salt + (unsigned)k);
                    c.kind = CC_COLL_SEND;
                    c.peer = b;
                    c.send_buf = buf;
                } else {
                    memset(buf, 0x5a, cnt * es);
                    for (i = 0; i < cnt; i++) ref_copy(want, i, dt, v->members[a], i, salt + (unsigned)k);
                    c.kind = CC_COLL_RECV;
                    c.peer = a;
                    c.recv_buf = buf;
                }
                t->n_cases++;
                r = cc_comm_run(&c);
                if (r != CC_OK)
                    tally_bad(t, "rank %d %s of %d %s (%d->%d): %s: %s", v->members[v->me], kname(c.kind), (int)cnt,
                              dname(dt), a, b, tu_res_name(r), cc_last_error(cc_rank_context(v->rank)));
                else if (v->me == b && memcmp(buf, want, cnt * es) != 0)
                    tally_bad(t, "rank %d recv of %d %s from member %d: data differs", v->members[v->me], (int)cnt,
                              dname(dt), a);
            }
        }
    free(buf);
    free(want);
}

/* Every kind, size, dtype, op, root and in-place variant on one communicator. */
static void run_all_cases(const group_view* v, tally* t, unsigned salt) {
    static const cc_dtype dts[] = {CC_DTYPE_FLOAT32, CC_DTYPE_FLOAT64, CC_DTYPE_INT32};
    static const cc_reduce_op ops[] = {CC_REDUCE_SUM, CC_REDUCE_AVG, CC_REDUCE_MAX};
    int d, s, o, ip, root;
    for (d = 0; d < 3; d++)
        for (s = 0; s < N_SIZES; s++) {
            size_t cnt = sizes[s];
            for (o = 0; o < 3; o++)
                for (ip = 0; ip < 2; ip++) run_case(v, t, CC_COLL_ALL_REDUCE, dts[d], ops[o], cnt, ip, 0, salt++);
            for (o = 0; o < 3; o++) run_case(v, t, CC_COLL_REDUCE_SCATTER, dts[d], ops[o], cnt, 0, 0, salt++);
            run_case(v, t, CC_COLL_ALL_GATHER, dts[d], CC_REDUCE_SUM, cnt, 0, 0, salt++);
            for (root = 0; root < v->n; root++)
                for (ip = 0; ip < 2; ip++) run_case(v, t, CC_COLL_BROADCAST, dts[d], CC_REDUCE_SUM, cnt, ip, root, salt++);
            run_case(v, t, CC_COLL_ALL_TO_ALL, dts[d], CC_REDUCE_SUM, cnt, 0, 0, salt++);
            run_p2p(v, t, dts[d], cnt, salt++);
        }
}

/* ---- layouts -----------------------------------------------------------------------*/
#define MAXR 8
typedef struct layout_run {
    tally whole[MAXR];     /* the world communicator */
    tally row[MAXR];       /* 2x2: the tensor-parallel comm of the row */
    tally col[MAXR];       /* 2x2: the data-parallel comm of the column (second thread) */
    tally three[MAXR];     /* {3,1,0}: a group of three in a non-sorted order */
    int sizes_ok[MAXR];
} layout_run;

typedef struct col_thread { group_view v; tally* t; } col_thread;
static void* col_main(void* arg) {
    col_thread* c = (col_thread*)arg;
    run_all_cases(&c->v, c->t, 5000);
    return NULL;
}

static int find_me(const int* members, int n, int rank) {
    int i;
    for (i = 0; i < n; i++) if (members[i] == rank) return i;
    return -1;
}

static cc_result layout_rank(cc_rank* rank, void* ud) {
    layout_run* L = (layout_run*)ud;
    int r = cc_rank_index(rank), row = r / 2, col = r % 2;
    static const int world4[] = {0, 1, 2, 3};
    static const int three[] = {3, 1, 0};
    int rows[2][2] = {{0, 1}, {2, 3}};
    int cols[2][2] = {{2, 0}, {3, 1}};   /* comm order differs from rank order */
    group_view v;
    cc_comm *row_comm = NULL, *col_comm = NULL, *three_comm = NULL;
    col_thread ct;
    pthread_t th;
    cc_result res;
    /* 1. the whole world */
    v.rank = rank;
    v.comm = cc_rank_world_comm(rank);
    v.members = world4;
    v.n = 4;
    v.me = r;
    L->sizes_ok[r] = cc_rank_count(rank) == 4 && cc_comm_size(v.comm) == 4 && cc_comm_rank(v.comm) == r &&
                     cc_rank_context(rank) != NULL;
    run_all_cases(&v, &L->whole[r], 1);
    /* 2. rows and columns at once, from two threads of every rank */
    res = cc_comm_create(rank, rows[row], 2, &row_comm);
    if (res != CC_OK) { tally_bad(&L->row[r], "row comm: %s", cc_last_error(cc_rank_context(rank))); return res; }
    res = cc_comm_create(rank, cols[col], 2, &col_comm);
    if (res != CC_OK) { tally_bad(&L->col[r], "col comm: %s", cc_last_error(cc_rank_context(rank))); return res; }
    L->sizes_ok[r] = L->sizes_ok[r] && cc_comm_size(row_comm) == 2 && cc_comm_rank(row_comm) == find_me(rows[row], 2, r) &&
                     cc_comm_rank(col_comm) == find_me(cols[col], 2, r);
    ct.v.rank = rank;
    ct.v.comm = col_comm;
    ct.v.members = cols[col];
    ct.v.n = 2;
    ct.v.me = find_me(cols[col], 2, r);
    ct.t = &L->col[r];
    if (pthread_create(&th, NULL, col_main, &ct) != 0) return CC_ERR_BACKEND;
    v.comm = row_comm;
    v.members = rows[row];
    v.n = 2;
    v.me = find_me(rows[row], 2, r);
    run_all_cases(&v, &L->row[r], 3000);
    pthread_join(th, NULL);
    /* 3. a group of three, not in sorted order; rank 2 sits it out */
    if (r != 2) {
        res = cc_comm_create(rank, three, 3, &three_comm);
        if (res != CC_OK) { tally_bad(&L->three[r], "three comm: %s", cc_last_error(cc_rank_context(rank))); return res; }
        v.comm = three_comm;
        v.members = three;
        v.n = 3;
        v.me = find_me(three, 3, r);
        run_all_cases(&v, &L->three[r], 7000);
    }
    return CC_OK;
}

static void check_tallies(const char* what, const tally* t, int n_ranks, int skip_rank) {
    int r, cases = 0, bad = 0;
    const char* first = "";
    for (r = 0; r < n_ranks; r++) {
        if (r == skip_rank) continue;
        cases += t[r].n_cases;
        bad += t[r].n_bad;
        if (t[r].n_bad && !first[0]) first = t[r].first_bad;
    }
    th__check(bad == 0 && cases > 0, __FILE__, __LINE__, first, "%s: %d collective calls over the ranks match the serial reference (%d wrong)",
              what, cases, bad);
}

static void test_collectives(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    layout_run* L = (layout_run*)calloc(1, sizeof *L);
    cc_result r;
    double t0;
    int i;
    d.n_ranks = 4;
    d.timeout_s = 20;
    r = cc_world_create(g_ctx, &d, &w);
    CHECK_RES(NULL, r, CC_OK, "cc_world_create of 4 ranks");
    if (r != CC_OK) { free(L); return; }
    t0 = now_s();
    r = cc_world_run(w, layout_rank, L);
    CHECK_RES(NULL, r, CC_OK, "the layout run succeeds (%.2f s)%s%s", now_s() - t0, r ? ": " : "", r ? cc_world_error(w) : "");
    for (i = 0; i < 4; i++) CHECK(L->sizes_ok[i], "rank %d: rank index, count, context and comm rank/size are right", i);
    check_tallies("world of 4, one group", L->whole, 4, -1);
    check_tallies("2x2, a tensor-parallel comm per row", L->row, 4, -1);
    check_tallies("2x2, a data-parallel comm per column {2,0},{3,1} on a second thread", L->col, 4, -1);
    check_tallies("a group {3,1,0} of three", L->three, 4, 2);
    /* a second run on the same world continues the sequence numbers */
    memset(L, 0, sizeof *L);
    r = cc_world_run(w, layout_rank, L);
    CHECK_RES(NULL, r, CC_OK, "a second run on the same world succeeds%s%s", r ? ": " : "", r ? cc_world_error(w) : "");
    check_tallies("second run, world of 4", L->whole, 4, -1);
    check_tallies("second run, new comms created again", L->three, 4, 2);
    cc_world_destroy(w);
    free(L);
}

/* ---- mismatches ------------------------------------------------------------------*/
typedef struct mm_run {
    cc_result first[MAXR], later[MAXR], create[MAXR], p2p[MAXR];
    char first_msg[MAXR][600], later_msg[MAXR][600], create_msg[MAXR][600], p2p_msg[MAXR][600];
    double secs[MAXR];
} mm_run;

static cc_result coll_of(cc_rank* rank, cc_comm* comm, cc_coll_kind kind, size_t n, void* send, void* recv) {
    cc_collective c;
    (void)rank;   /* the communicator is the rank's own */
    memset(&c, 0, sizeof c);
    c.kind = kind;
    c.dtype = CC_DTYPE_FLOAT32;
    c.n_elems = n;
    c.comm = comm;
    c.send_buf = send;
    c.recv_buf = recv;
    return cc_comm_run(&c);
}

static cc_result mismatch_rank(cc_rank* rank, void* ud) {
    mm_run* M = (mm_run*)ud;
    int r = cc_rank_index(rank);
    float* a = (float*)calloc(4096, sizeof(float));
    float* b = (float*)calloc(4096, sizeof(float));
    cc_comm* comm = cc_rank_world_comm(rank);
    cc_comm* pair = NULL;
    int members01[2] = {0, 1}, members10[2] = {1, 0};
    double t0 = now_s();
    /* rank 0: all_reduce of 1024 then all_gather of 512; rank 1 the other way round */
    if (r == 0) M->first[r] = coll_of(rank, comm, CC_COLL_ALL_REDUCE, 1024, a, b);
    else M->first[r] = coll_of(rank, comm, CC_COLL_ALL_GATHER, 512, a, b);
    M->secs[r] = now_s() - t0;
    snprintf(M->first_msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    M->later[r] = coll_of(rank, comm, CC_COLL_ALL_REDUCE, 16, a, b);
    snprintf(M->later_msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    /* members given in different orders */
    M->create[r] = cc_comm_create(rank, r == 0 ? members01 : members10, 2, &pair);
    if (M->create[r] == CC_OK) M->create[r] = coll_of(rank, pair, CC_COLL_ALL_REDUCE, 4, a, b);
    snprintf(M->create_msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    /* send/recv of different counts on a fresh comm */
    if (cc_comm_create(rank, members01, 2, &pair) != CC_OK) { free(a); free(b); return CC_ERR_BACKEND; }
    {
        cc_collective c;
        memset(&c, 0, sizeof c);
        c.kind = r == 0 ? CC_COLL_SEND : CC_COLL_RECV;
        c.dtype = CC_DTYPE_FLOAT32;
        c.n_elems = r == 0 ? 10 : 12;
        c.peer = 1 - r;
        c.comm = pair;
        c.send_buf = a;
        c.recv_buf = b;
        M->p2p[r] = cc_comm_run(&c);
        snprintf(M->p2p_msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    }
    free(a);
    free(b);
    return CC_OK;
}

static void test_mismatch(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    mm_run* M = (mm_run*)calloc(1, sizeof *M);
    cc_result r;
    int i;
    d.n_ranks = 2;
    d.timeout_s = 10;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); free(M); return; }
    r = cc_world_run(w, mismatch_rank, M);
    CHECK_RES(NULL, r, CC_OK, "the ranks return (their results are checked below)");
    for (i = 0; i < 2; i++) {
        CHECK_RES(NULL, M->first[i], CC_ERR_COLL_MISMATCH, "rank %d: all_reduce vs all_gather at #0 is CC_ERR_COLL_MISMATCH", i);
        CHECK(M->secs[i] < 2.0, "rank %d: the mismatch is reported promptly (%.3f s, timeout 10 s)", i, M->secs[i]);
        CHECK_CONTAINS(M->first_msg[i], "rank 0 issued all_reduce of 1024 float32 (sum)", "rank %d: message names rank 0's collective", i);
        CHECK_CONTAINS(M->first_msg[i], "rank 1 issued all_gather of 512 float32", "rank %d: message names rank 1's collective", i);
        CHECK_CONTAINS(M->first_msg[i], "#0", "rank %d: message names the sequence number", i);
        CHECK_RES(NULL, M->later[i], CC_ERR_COLL_MISMATCH, "rank %d: a later collective on the poisoned comm fails at once", i);
        CHECK_CONTAINS(M->later_msg[i], "failed earlier", "rank %d: and says the communicator failed earlier", i);
        CHECK_RES(NULL, M->create[i], CC_ERR_COLL_MISMATCH, "rank %d: members {0,1} vs {1,0}: create or first collective fails", i);
        CHECK_CONTAINS(M->create_msg[i], "same list", "rank %d: the message says the lists must agree", i);
        CHECK_RES(NULL, M->p2p[i], CC_ERR_COLL_MISMATCH, "rank %d: send of 10 vs recv of 12 is CC_ERR_COLL_MISMATCH", i);
        CHECK_CONTAINS(M->p2p_msg[i], "rank 0 sends 10 float32, rank 1 receives 12 float32", "rank %d: message names both sides", i);
    }
    cc_world_destroy(w);
    free(M);
}

/* ---- a missing participant -------------------------------------------------------*/
typedef struct to_run { cc_result res[MAXR]; double secs[MAXR]; char msg[MAXR][600]; } to_run;
static cc_result timeout_rank(cc_rank* rank, void* ud) {
    to_run* T = (to_run*)ud;
    int r = cc_rank_index(rank);
    float a[8] = {0}, b[8];
    double t0 = now_s();
    if (r == 2) return CC_OK;   /* never joins */
    T->res[r] = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 8, a, b);
    T->secs[r] = now_s() - t0;
    snprintf(T->msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    return T->res[r];
}

static void test_timeout(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    to_run T;
    cc_result r;
    int i;
    double t0;
    memset(&T, 0, sizeof T);
    d.n_ranks = 3;
    d.timeout_s = 0.3;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    t0 = now_s();
    r = cc_world_run(w, timeout_rank, &T);
    CHECK_RES(NULL, r, CC_ERR_TIMEOUT, "cc_world_run returns the ranks' CC_ERR_TIMEOUT");
    CHECK(now_s() - t0 < 2.0, "and returns within about the timeout (%.3f s for 0.3 s)", now_s() - t0);
    CHECK_CONTAINS(cc_world_error(w), "did not join", "cc_world_error has the message");
    for (i = 0; i < 2; i++) {
        CHECK_RES(NULL, T.res[i], CC_ERR_TIMEOUT, "rank %d: CC_ERR_TIMEOUT when rank 2 never joins", i);
        CHECK(T.secs[i] >= 0.25 && T.secs[i] < 1.5, "rank %d: after about the timeout (%.3f s for 0.3 s)", i, T.secs[i]);
        CHECK_CONTAINS(T.msg[i], "rank 2 ", "rank %d: the message names rank 2", i);
        CHECK_CONTAINS(T.msg[i], "did not join", "rank %d: ... as the one that did not join", i);
        CHECK_CONTAINS(T.msg[i], "0.3 s", "rank %d: ... within the timeout", i);
        CHECK_CONTAINS(T.msg[i], "#0", "rank %d: ... and the sequence number", i);
    }
    r = cc_world_run(w, timeout_rank, &T);
    CHECK_RES(NULL, r, CC_ERR_BACKEND, "running an aborted world again fails at once");
    CHECK_CONTAINS(cc_world_error(w), "create a new world", "... and says what to do");
    cc_world_destroy(w);
}

/* ---- a rank fails while the others wait ---------------------------------------------*/
static cc_result failing_rank(cc_rank* rank, void* ud) {
    to_run* T = (to_run*)ud;
    int r = cc_rank_index(rank);
    float a[8] = {0}, b[8];
    double t0 = now_s();
    if (r == 2) {
        int bad[2] = {2, 9};
        cc_comm* c = NULL;
        sleep_s(0.05);
        return cc_comm_create(rank, bad, 2, &c);   /* fails: rank 9 is outside the world */
    }
    T->res[r] = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 8, a, b);
    T->secs[r] = now_s() - t0;
    snprintf(T->msg[r], 600, "%s", cc_last_error(cc_rank_context(rank)));
    return T->res[r];
}

static void test_failing_rank(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    to_run T;
    cc_result r;
    double t0;
    memset(&T, 0, sizeof T);
    d.n_ranks = 4;
    d.timeout_s = 20;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    t0 = now_s();
    r = cc_world_run(w, failing_rank, &T);
    CHECK(now_s() - t0 < 2.0, "cc_world_run returns promptly when rank 2 fails while the others wait (%.3f s, timeout 20 s)",
          now_s() - t0);
    CHECK_RES(NULL, r, CC_ERR_INVALID_ARG, "it returns rank 2's error, not the others' aborts");
    CHECK_CONTAINS(cc_world_error(w), "rank 2", "cc_world_error names rank 2");
    CHECK_CONTAINS(cc_world_error(w), "outside the world", "... and has its message");
    CHECK_RES(NULL, T.res[0], CC_ERR_BACKEND, "rank 0's waiting all_reduce fails");
    CHECK_CONTAINS(T.msg[0], "rank 2 failed", "rank 0's message says rank 2 failed");
    CHECK(T.secs[3] < 2.0, "rank 3 was woken promptly (%.3f s)", T.secs[3]);
    cc_world_destroy(w);
}

/* ---- the emulated link ---------------------------------------------------------------*/
typedef struct link_run { double secs_intra[MAXR], secs_inter[MAXR]; cc_result res[MAXR]; } link_run;
static cc_result link_rank(cc_rank* rank, void* ud) {
    link_run* L = (link_run*)ud;
    int r = cc_rank_index(rank);
    float* a = (float*)calloc(1024, sizeof(float));
    float* b = (float*)calloc(1024, sizeof(float));
    int pair[2] = {0, 1};
    cc_comm* c = NULL;
    double t0;
    cc_result res = CC_OK;
    /* warm up on the world comm (no model check), then time */
    res = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 0, a, b);
    if (res == CC_OK && r < 2) {
        res = cc_comm_create(rank, pair, 2, &c);
        t0 = now_s();
        if (res == CC_OK) res = coll_of(rank, c, CC_COLL_ALL_REDUCE, 1024, a, b);
        L->secs_intra[r] = now_s() - t0;
    }
    /* a barrier (its emulated time ends at the same instant on every rank), then time */
    if (res == CC_OK) res = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 0, a, b);
    if (res == CC_OK) {
        t0 = now_s();
        res = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 1024, a, b);
        L->secs_inter[r] = now_s() - t0;
    }
    L->res[r] = res;
    free(a);
    free(b);
    return res;
}

static void test_link(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    link_run L;
    cc_link link = { 0 }, intra = { 0 }, inter = { 0 };
    double m_intra, m_inter, max_intra = 0, min_inter = 1e9, max_inter = 0;
    cc_result r;
    int i;
    /* the formulas, by hand: B bytes per rank, n ranks */
    link.latency_us = 10;
    link.us_per_byte = 0.5;
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_ALL_REDUCE, 800, 4), 2.0 * 3 * (10 + 200 * 0.5), 1e-9, "all_reduce: 2(n-1)(a + B/n b)");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_REDUCE_SCATTER, 800, 4), 3 * (10 + 800 * 0.5), 1e-9, "reduce_scatter: (n-1)(a + B b)");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_ALL_GATHER, 800, 4), 3 * (10 + 800 * 0.5), 1e-9, "all_gather: (n-1)(a + B b)");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_BROADCAST, 800, 4), 3 * 10 + 800 * 0.5, 1e-9, "broadcast: (n-1)a + B b");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_SEND, 800, 2), 10 + 800 * 0.5, 1e-9, "send: a + B b");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_RECV, 800, 2), 10 + 800 * 0.5, 1e-9, "recv: a + B b");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_ALL_TO_ALL, 800, 4), 3 * (10 + 800 * 0.5), 1e-9, "all_to_all: (n-1)(a + B b)");
    CHECK_NEAR(tu_flat_us(&link, CC_COLL_ALL_REDUCE, 800, 1), 0, 0, "one rank: 0");

    memset(&L, 0, sizeof L);
    d.n_ranks = 4;
    d.ranks_per_node = 2;
    d.emulate_link = 1;
    intra.latency_us = 10000;        /* intra, 2 ranks: 2(2-1)(10000 + 2048 * 0.001) = 20.004 ms */
    intra.us_per_byte = 0.001;
    inter.latency_us = 5000;         /* inter, 4 ranks: 2(4-1)(5000 + 1024 * 0.002) = 30.012 ms */
    inter.us_per_byte = 0.002;
    d.intra_node = &intra;
    d.inter_node = &inter;
    m_intra = 2.0 * 1 * (10000 + 4096 / 2 * 0.001) * 1e-6;
    m_inter = 2.0 * 3 * (5000 + 4096 / 4 * 0.002) * 1e-6;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    r = cc_world_run(w, link_rank, &L);
    CHECK_RES(NULL, r, CC_OK, "emulated-link run%s%s", r ? ": " : "", r ? cc_world_error(w) : "");
    for (i = 0; i < 4; i++) {
        if (i < 2 && L.secs_intra[i] > max_intra) max_intra = L.secs_intra[i];
        if (L.secs_inter[i] > max_inter) max_inter = L.secs_inter[i];
        if (L.secs_inter[i] < min_inter) min_inter = L.secs_inter[i];
    }
    CHECK(max_intra >= 0.9 * m_intra && max_intra <= m_intra + 0.05,
          "all_reduce of 1024 float32 on {0,1} (one node) takes the intra-node model: %.1f ms for %.1f ms",
          max_intra * 1e3, m_intra * 1e3);
    CHECK(min_inter >= 0.9 * m_inter && max_inter <= m_inter + 0.05,
          "all_reduce on the world (two nodes) takes the inter-node model on every rank: %.1f..%.1f ms for %.1f ms",
          min_inter * 1e3, max_inter * 1e3, m_inter * 1e3);
    cc_world_destroy(w);
}

/* ---- bad arguments --------------------------------------------------------------------*/
typedef struct bad_run { cc_result res[MAXR][12]; char msg[MAXR][12][600]; cc_result after[MAXR], null_run[MAXR]; } bad_run;
static cc_result bad_rank(cc_rank* rank, void* ud) {
    bad_run* B = (bad_run*)ud;
    int r = cc_rank_index(rank), k = 0;
    float a[4] = {1, 2, 3, 4}, b[4];
    cc_comm* world = cc_rank_world_comm(rank);
    cc_comm* c = NULL;
    cc_collective col;
    int out_of_range[2] = {0, 5}, dup[2] = {r, r}, without_me[1] = {1 - r};
#define BAD(call) do { B->res[r][k] = (call); snprintf(B->msg[r][k], 600, "%s", cc_last_error(cc_rank_context(rank))); k++; } while (0)
    BAD(coll_of(rank, world, CC_COLL_ALL_REDUCE, 4, a, NULL));                 /* 0 */
    BAD(coll_of(rank, world, CC_COLL_ALL_REDUCE, 4, NULL, b));                 /* 1 */
    memset(&col, 0, sizeof col);
    col.kind = CC_COLL_SEND; col.n_elems = 4; col.peer = 5; col.comm = world; col.send_buf = a;
    BAD(cc_comm_run(&col));                                              /* 2 */
    col.peer = r;
    BAD(cc_comm_run(&col));                                              /* 3 send to itself */
    BAD(cc_comm_create(rank, out_of_range, 2, &c));                            /* 4 */
    BAD(cc_comm_create(rank, dup, 2, &c));                                     /* 5 */
    BAD(cc_comm_create(rank, without_me, 1, &c));                              /* 6 */
    col.kind = CC_COLL_ALL_REDUCE; col.dtype = (cc_dtype)7; col.peer = 0; col.recv_buf = b;
    BAD(cc_comm_run(&col));                                              /* 7 */
    BAD(cc_comm_split(world, 0, 0, NULL));                                     /* 8 */
    B->null_run[r] = cc_comm_run(NULL);
    BAD(coll_of(rank, world, CC_COLL_ALL_GATHER, 2, a, a));                    /* 9 in place all_gather */
#undef BAD
    /* none of that consumed a sequence number: a real collective still works */
    B->after[r] = coll_of(rank, world, CC_COLL_ALL_REDUCE, 4, a, b);
    return CC_OK;
}

static void test_bad_args(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    bad_run* B = (bad_run*)calloc(1, sizeof *B);
    log_keep lk;
    cc_context_desc cd = {0};
    cc_context* lctx = NULL;
    cc_link inf = { 0 };
    int i;
    static const char* want[] = {"recv_buf is NULL", "send_buf is NULL", "destination 5, outside", "names itself",
                                 "rank 5, outside the world", "listed twice", "not among the members", "invalid dtype 7",
                                 "cc_comm_split {0,1}: out is NULL", "overlap"};
    memset(&lk, 0, sizeof lk);
    pthread_mutex_init(&lk.mu, NULL);
    d.n_ranks = 0;
    d.timeout_s = -1;
    cd.logger.log_fn = keep_log;
    cd.logger.user_data = &lk;
    if (cc_context_create(&cd, &lctx) != CC_OK) { CHECK(0, "cc_context_create"); free(B); return; }
    CHECK_RES(NULL, cc_world_create(lctx, &d, &w), CC_ERR_INVALID_ARG, "cc_world_create with n_ranks 0 and timeout -1");
    CHECK(w == NULL, "leaves *out NULL");
    CHECK_CONTAINS(lk.last, "n_ranks must be >= 1, got 0", "the logged message names n_ranks");
    CHECK_CONTAINS(lk.last, "timeout_s must be >= 0", "... and timeout_s, in one message");
    cc_context_destroy(lctx);
    /* without a logger the message stays in the context */
    CHECK_RES(NULL, cc_world_create(g_ctx, &d, &w), CC_ERR_INVALID_ARG, "cc_world_create with no logger");
    CHECK_CONTAINS(cc_last_error(g_ctx), "n_ranks must be >= 1, got 0", "cc_last_error of the context names n_ranks (%s)",
                   cc_last_error(g_ctx));
    d = (cc_world_desc){0};
    d.n_ranks = 2;
    inf.latency_us = 1;
    inf.us_per_byte = HUGE_VAL;
    d.inter_node = &inf;
    CHECK_RES(NULL, cc_world_create(g_ctx, &d, &w), CC_ERR_INVALID_ARG, "cc_world_create with an infinite us_per_byte");
    CHECK_CONTAINS(cc_last_error(g_ctx), "inter_node", "the message names the link (%s)", cc_last_error(g_ctx));
    d = (cc_world_desc){0};
    d.n_ranks = 2;
    d.timeout_s = 5;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); free(B); return; }
    CHECK_RES(NULL, cc_world_run(w, NULL, NULL), CC_ERR_INVALID_ARG, "cc_world_run with no fn");
    CHECK_RES(NULL, cc_world_run(w, bad_rank, B), CC_OK, "the bad-argument run returns");
    for (i = 0; i < 2; i++) {
        int k;
        for (k = 0; k < 10; k++) {
            CHECK_RES(NULL, B->res[i][k], CC_ERR_INVALID_ARG, "rank %d case %d: CC_ERR_INVALID_ARG", i, k);
            CHECK_CONTAINS(B->msg[i][k], want[k], "rank %d case %d: the message says why", i, k);
        }
        CHECK_RES(NULL, B->null_run[i], CC_ERR_INVALID_ARG, "rank %d: cc_comm_run(NULL) is refused", i);
        CHECK_RES(NULL, B->after[i], CC_OK, "rank %d: the world comm still works after bad calls", i);
    }
    cc_world_destroy(w);
    free(B);
    pthread_mutex_destroy(&lk.mu);
}

/* ---- the allocator balances ---------------------------------------------------------*/
static cc_result alloc_rank(cc_rank* rank, void* ud) {
    int r = cc_rank_index(rank), k;
    float a[64], b[64 * 3];
    int trio[3] = {0, 1, 2}, pair[2] = {r & ~1, r | 1};
    cc_comm *c3 = NULL, *c2 = NULL;
    cc_result res;
    (void)ud;
    memset(a, 0, sizeof a);
    for (k = 0; k < 3; k++) {   /* the same member set three times: three distinct comms */
        res = cc_comm_create(rank, trio, 3, &c3);
        if (res != CC_OK) return res;
        res = coll_of(rank, c3, CC_COLL_ALL_REDUCE, 64, a, b);
        if (res != CC_OK) return res;
    }
    if ((r | 1) >= cc_rank_count(rank)) return CC_OK;
    res = cc_comm_create(rank, pair, 2, &c2);
    if (res == CC_OK) res = coll_of(rank, c2, CC_COLL_REDUCE_SCATTER, 32, a, b);
    return res;
}

static void test_allocator(void) {
    cc_world_desc d = {0};
    cc_context_desc cd = {0};
    cc_context* actx = NULL;
    cc_world* w = NULL;
    count_alloc ca;
    cc_result r;
    long base;
    memset(&ca, 0, sizeof ca);
    pthread_mutex_init(&ca.mu, NULL);
    d.n_ranks = 3 + 1;
    cd.allocator.alloc_fn = ca_alloc;
    cd.allocator.realloc_fn = ca_realloc;
    cd.allocator.free_fn = ca_free;
    cd.allocator.user_data = &ca;
    if (cc_context_create(&cd, &actx) != CC_OK) { CHECK(0, "cc_context_create"); return; }
    base = ca.live;   /* the context's own block */
    r = cc_world_create(actx, &d, &w);
    CHECK_RES(NULL, r, CC_OK, "cc_world_create with a counting allocator");
    if (r != CC_OK) { cc_context_destroy(actx); return; }
    /* rank 3 is not in trio: its comm_create with {2,3} pairs with rank 2 */
    r = cc_world_run(w, alloc_rank, NULL);
    CHECK(r == CC_ERR_INVALID_ARG, "rank 3, not among {0,1,2}, is refused (%s: %s)", tu_res_name(r), cc_world_error(w));
    CHECK(ca.live > base && ca.n_calls > 0, "the world allocates through the context's allocator (%ld live)", ca.live - base);
    cc_world_destroy(w);
    CHECK_INT(ca.live, base, "every allocation is freed by cc_world_destroy");
    d.n_ranks = 3;
    r = cc_world_create(actx, &d, &w);
    if (r == CC_OK) {
        r = cc_world_run(w, alloc_rank, NULL);
        CHECK_RES(NULL, r, CC_OK, "three ranks: comms and collectives%s%s", r ? ": " : "", r ? cc_world_error(w) : "");
        cc_world_destroy(w);
    }
    CHECK_INT(ca.live, base, "every allocation is freed after a successful run too");
    cc_context_destroy(actx);
    CHECK_INT(ca.live, 0, "and the context's with it");
    pthread_mutex_destroy(&ca.mu);
}

/* ---- two threads of one rank on one communicator ------------------------------------
   Collectives of one rank on one communicator run in the order they were
   issued, whichever thread issued them: two threads per rank, each doing
   the same all_reduces, always complete with the right sums. */
typedef struct same_run { tally t[MAXR][2]; cc_rank* rank[MAXR]; } same_run;
typedef struct same_arg { same_run* S; int r, th; } same_arg;
static void* same_thread(void* p) {
    same_arg* a = (same_arg*)p;
    cc_rank* rank = a->S->rank[a->r];
    int k, i;
    float x[16], y[16];
    for (k = 0; k < 200; k++) {
        cc_result res;
        for (i = 0; i < 16; i++) x[i] = (float)(a->r + 1);
        res = coll_of(rank, cc_rank_world_comm(rank), CC_COLL_ALL_REDUCE, 16, x, y);
        a->S->t[a->r][a->th].n_cases++;
        if (res != CC_OK) { tally_bad(&a->S->t[a->r][a->th], "rank %d thread %d: %s", a->r, a->th, tu_res_name(res)); break; }
        for (i = 0; i < 16; i++)
            if (y[i] != 6.0f) { tally_bad(&a->S->t[a->r][a->th], "rank %d thread %d: sum %g, expected 6", a->r, a->th, y[i]); break; }
    }
    return NULL;
}
static cc_result same_rank(cc_rank* rank, void* ud) {
    same_run* S = (same_run*)ud;
    int r = cc_rank_index(rank);
    same_arg args[2];
    pthread_t th[2];
    int i;
    S->rank[r] = rank;
    for (i = 0; i < 2; i++) {
        args[i].S = S;
        args[i].r = r;
        args[i].th = i;
        pthread_create(&th[i], NULL, same_thread, &args[i]);
    }
    for (i = 0; i < 2; i++) pthread_join(th[i], NULL);
    return CC_OK;
}

static void test_same_comm_threads(void) {
    cc_world_desc d = {0};
    cc_world* w = NULL;
    same_run S;
    cc_result r;
    int i, bad = 0, cases = 0;
    const char* first = "";
    memset(&S, 0, sizeof S);
    d.n_ranks = 3;
    d.timeout_s = 20;
    if (cc_world_create(g_ctx, &d, &w) != CC_OK) { CHECK(0, "cc_world_create"); return; }
    r = cc_world_run(w, same_rank, &S);
    CHECK_RES(NULL, r, CC_OK, "the run returns");
    for (i = 0; i < 3; i++) {
        int j;
        for (j = 0; j < 2; j++) {
            cases += S.t[i][j].n_cases;
            bad += S.t[i][j].n_bad;
            if (S.t[i][j].n_bad && !first[0]) first = S.t[i][j].first_bad;
        }
    }
    th__check(bad == 0 && cases == 3 * 2 * 200, __FILE__, __LINE__, first,
              "two threads per rank on the world comm: %d all_reduces complete in issue order", cases);
    cc_world_destroy(w);
}

/* cc_world_create with the k-th allocation failing: CC_ERR_OUT_OF_MEMORY
   and nothing left allocated, for every k until it succeeds. */
static void test_create_oom(void) {
    int k, n_oom = 0, n_other = 0, leaks = 0, ok_at = 0;
    for (k = 1; k < 200 && !ok_at; k++) {
        tu_alloc a;
        cc_context_desc cd = {0};
        cc_context* actx = NULL;
        cc_world_desc d = {0};
        cc_world* w = NULL;
        cc_result r;
        memset(&a, 0, sizeof a);
        cd.allocator = tu_allocator(&a);
        if (cc_context_create(&cd, &actx) != CC_OK) { n_other++; continue; }
        a.fail_at = a.n_calls + k;   /* the k-th request of cc_world_create */
        d.n_ranks = 3;
        r = cc_world_create(actx, &d, &w);
        if (r == CC_OK) { ok_at = k; cc_world_destroy(w); }
        else if (r == CC_ERR_OUT_OF_MEMORY && w == NULL && strstr(cc_last_error(actx), "out of memory")) n_oom++;
        else n_other++;
        cc_context_destroy(actx);
        if (a.live != 0 || a.bad_frees != 0) leaks++;
    }
    CHECK(ok_at > 1, "cc_world_create succeeds once enough allocations succeed (at request %d)", ok_at);
    CHECK(n_oom == ok_at - 1 && n_other == 0, "every earlier failure is CC_ERR_OUT_OF_MEMORY with a message (%d of %d)", n_oom,
          ok_at - 1);
    CHECK_INT(leaks, 0, "no allocation is left behind after any failure");
}

/* cc_world_create with no desc: one rank, the default links and timeout
   (what cc_world_query_defaults says); the world runs. */
static cc_result one_rank(cc_rank* rank, void* user) {
    int* seen = (int*)user;
    *seen = cc_rank_count(rank) * 10 + cc_rank_index(rank);
    return CC_OK;
}
static void test_null_desc(void) {
    cc_world* w = NULL;
    cc_world_desc q = cc_world_query_defaults(NULL);
    int seen = -1;
    CHECK_RES(g_ctx, cc_world_create(g_ctx, NULL, &w), CC_OK, "cc_world_create with a NULL desc");
    if (!w) return;
    CHECK_RES(g_ctx, cc_world_run(w, one_rank, &seen), CC_OK, "and its world runs");
    CHECK_INT(seen, 10, "on one rank, rank 0");
    cc_world_destroy(w);
    CHECK(q.n_ranks == 1 && q.timeout_s > 0 && q.intra_node && q.inter_node && q.intra_node->us_per_byte > 0 &&
              q.inter_node->us_per_byte > q.intra_node->us_per_byte,
          "the resolved default desc: 1 rank, a timeout, an inter-node link slower than the intra-node one");
}

int main(void) {
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 1;
    TH_RUN(test_collectives);
    TH_RUN(test_mismatch);
    TH_RUN(test_timeout);
    TH_RUN(test_failing_rank);
    TH_RUN(test_link);
    TH_RUN(test_bad_args);
    TH_RUN(test_allocator);
    TH_RUN(test_same_comm_threads);
    TH_RUN(test_create_oom);
    TH_RUN(test_null_desc);
    cc_context_destroy(g_ctx);
    return th_done();
}
