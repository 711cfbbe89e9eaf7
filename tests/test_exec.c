/* tests/test_exec.c - plans and the executor on the CPU backend.

   Ops sleep for random short times and record, with the test's own clock,
   when they start and end. The checks use only those records and the
   graph the test built: every op starts after all its dependencies ended,
   and each stream runs one op at a time, in the order the plan was given
   (the issue order filtered by stream, computed here). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "util.h"

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

typedef struct rec {
    int sleep_us;
    double start, end;
    int runs;
    void* stream;
} rec;

static void sleepy(void* stream, void* user) {
    rec* r = (rec*)user;
    struct timespec ts;
    r->start = now_us();
    r->stream = stream;
    ts.tv_sec = 0;
    ts.tv_nsec = (long)r->sleep_us * 1000L;
    if (r->sleep_us) nanosleep(&ts, NULL);
    r->end = now_us();
    r->runs++;
}

typedef struct case_ctx {
    int n, streams;
    int* stream_of;
    int* pred_off;             /* the test's own copy of the dependencies */
    int* pred;
    rec* recs;
} case_ctx;

/* Builds a random DAG on random streams; deps point to earlier ops. */
static cc_graph* random_case(cc_context* ctx, tu_rng* rng, case_ctx* c) {
    cc_graph* g = NULL;
    cc_graph_desc gd = {0};
    int i, j, np = 0;
    gd.n_streams = c->streams;
    if (cc_graph_create(ctx, &gd, &g) != CC_OK) return NULL;
    c->stream_of = (int*)malloc(sizeof(int) * (size_t)c->n);
    c->pred_off = (int*)malloc(sizeof(int) * (size_t)(c->n + 1));
    c->pred = (int*)malloc(sizeof(int) * (size_t)c->n * 4);
    c->recs = (rec*)calloc((size_t)c->n, sizeof(rec));
    for (i = 0; i < c->n; i++) {
        cc_op_desc d = {0};
        cc_op deps[4];
        char name[32];
        int nd = 0, tries;
        c->pred_off[i] = np;
        for (tries = 0; tries < 4 && i > 0; tries++) {
            if (tu_randint(rng, 0, 2) == 0) continue;
            j = tu_randint(rng, i > 8 ? i - 8 : 0, i - 1);
            if (nd > 0 && cc_op_index(g, deps[nd - 1]) == j) continue;
            deps[nd] = cc_graph_op(g, j);
            nd++;
            c->pred[np++] = j;
        }
        c->stream_of[i] = tu_randint(rng, 0, c->streams - 1);
        c->recs[i].sleep_us = tu_randint(rng, 0, 300);
        snprintf(name, sizeof name, "op%d", i);
        d.name = name;
        d.duration_us = c->recs[i].sleep_us + 20;
        d.stream = c->stream_of[i];
        d.deps = deps;
        d.n_deps = nd;
        d.fn = sleepy;
        d.user_data = &c->recs[i];
        if (cc_graph_add_op(g, &d, NULL) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    c->pred_off[c->n] = np;
    return g;
}

static void case_free(case_ctx* c) {
    free(c->stream_of); free(c->pred_off); free(c->pred); free(c->recs);
}

/* Checks the records of one step; returns the number of violations and
   describes the first in msg. */
static int check_step(const case_ctx* c, const int* order, char* msg, size_t n_msg) {
    int bad = 0, i, e, s;
    int* last = (int*)malloc(sizeof(int) * (size_t)c->streams);
    msg[0] = 0;
    for (i = 0; i < c->n; i++) {
        if (c->recs[i].runs != 1) {
            if (!bad++) snprintf(msg, n_msg, "op%d ran %d times", i, c->recs[i].runs);
            continue;
        }
        for (e = c->pred_off[i]; e < c->pred_off[i + 1]; e++) {
            int q = c->pred[e];
            if (c->recs[i].start < c->recs[q].end) {
                if (!bad++) snprintf(msg, n_msg, "op%d started at %.1f before its dependency op%d ended at %.1f", i,
                                     c->recs[i].start, q, c->recs[q].end);
            }
        }
    }
    /* per stream: in issue order, one at a time */
    for (s = 0; s < c->streams; s++) last[s] = -1;
    for (i = 0; i < c->n; i++) {
        int v = order[i], st = c->stream_of[v];
        if (last[st] >= 0 && c->recs[v].start < c->recs[last[st]].end) {
            if (!bad++) snprintf(msg, n_msg, "stream %d: op%d started at %.1f before op%d, issued before it, ended at %.1f", st, v,
                                 c->recs[v].start, last[st], c->recs[last[st]].end);
        }
        if (last[st] >= 0 && c->recs[v].stream != c->recs[last[st]].stream) {
            if (!bad++) snprintf(msg, n_msg, "op%d and op%d of stream %d ran on different stream handles", v, last[st], st);
        }
        last[st] = v;
    }
    free(last);
    return bad;
}

typedef struct run_arg {
    int trials;
    int no_events;
    int violations, runs, failures;
    char first[1024];
} run_arg;

static cc_result order_rank(cc_rank* rank, void* user) {
    run_arg* a = (run_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    tu_rng rng;
    int t;
    rng.s = 12345u + (unsigned)a->no_events;
    for (t = 0; t < a->trials; t++) {
        case_ctx c;
        cc_graph* g;
        cc_schedule s;
        cc_sched_desc sd = {0};
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        cc_backend be, run;
        cc_backend_fns noev;
        int* order;
        int i, step;
        char msg[512];
        memset(&c, 0, sizeof c);
        c.n = tu_randint(&rng, 2, 40);
        c.streams = tu_randint(&rng, 1, 3);
        g = random_case(ctx, &rng, &c);
        if (!g) { a->failures++; snprintf(a->first, sizeof a->first, "building: %s", cc_last_error(ctx)); case_free(&c); continue; }
        order = (int*)malloc(sizeof(int) * (size_t)c.n);
        memset(&s, 0, sizeof s);
        if (t % 3 == 0) {
            for (i = 0; i < c.n; i++) order[i] = i;   /* program order */
        } else {
            sd.method = t % 3 == 1 ? CC_SCHED_AUTO : CC_SCHED_LIST;
            if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) {
                a->failures++;
                snprintf(a->first, sizeof a->first, "solve: %s", cc_last_error(ctx));
                goto next;
            }
            for (i = 0; i < c.n; i++) order[i] = cc_op_index(g, s.order[i]);
        }
        {
            cc_op* ops = (cc_op*)malloc(sizeof(cc_op) * (size_t)c.n);
            cc_result r;
            for (i = 0; i < c.n; i++) ops[i] = cc_graph_op(g, order[i]);
            r = cc_plan_create(ctx, g, ops, &pl);
            free(ops);
            if (r != CC_OK) { a->failures++; snprintf(a->first, sizeof a->first, "plan: %s", cc_last_error(ctx)); goto next; }
        }
        if (cc_cpu_backend_create(rank, &be) != CC_OK) { a->failures++; goto next; }
        run = be;
        if (a->no_events) {   /* the CPU backend's table without its events */
            noev = *be.fns;
            noev.event_create = NULL; noev.event_record = NULL; noev.stream_wait_event = NULL; noev.event_destroy = NULL;
            run.fns = &noev;
        }
        if (cc_exec_create(ctx, pl, &run, &x) != CC_OK) {
            a->failures++;
            snprintf(a->first, sizeof a->first, "exec: %s", cc_last_error(ctx));
            cc_backend_destroy(&be);
            goto next;
        }
        for (step = 0; step < 3; step++) {
            for (i = 0; i < c.n; i++) c.recs[i].runs = 0;
            if (cc_exec_step(x) != CC_OK) {
                a->failures++;
                snprintf(a->first, sizeof a->first, "step: %s", cc_last_error(ctx));
                break;
            }
            a->runs++;
            if (check_step(&c, order, msg, sizeof msg)) {
                if (!a->violations) snprintf(a->first, sizeof a->first, "trial %d step %d: %s", t, step, msg);
                a->violations++;
            }
        }
        cc_exec_destroy(x);
        cc_backend_destroy(&be);
    next:
        cc_plan_destroy(pl);
        cc_schedule_release(ctx, &s);
        free(order);
        cc_graph_destroy(g);
        case_free(&c);
    }
    return CC_OK;
}


static void test_order(void) {
    run_arg a;
    cc_result rc;
    char err[512];
    memset(&a, 0, sizeof a);
    a.trials = 40;
    tu_run_world(1, order_rank, &a, &rc, err, sizeof err);
    CHECK_INT(rc, CC_OK, "the world ran (%s)", err);
    CHECK_INT(a.failures, 0, "40 random graphs planned and run without error (%s)", a.first);
    CHECK_INT(a.violations, 0, "%d steps: dependencies ended before their dependents started; streams ran one op at a time in "
              "issue order (%s)", a.runs, a.first);
    memset(&a, 0, sizeof a);
    a.trials = 15;
    a.no_events = 1;
    tu_run_world(1, order_rank, &a, &rc, err, sizeof err);
    CHECK_INT(a.failures + a.violations, 0, "without events (the synchronize fallback), %d steps keep every dependency (%s)", a.runs,
              a.first);
}

/* Hand-made layouts whose minimal waits are known. */
static void test_waits(void) {
    cc_context* ctx;
    cc_graph* g;
    cc_plan* pl;
    cc_op a, b, c, d2, e;
    cc_op_desc d = {0};
    cc_op dep[2];
    cc_context_create(NULL, &ctx);
    /* A (s0) -> B (s1) and A -> C (s1), C after B on s1: one wait */
    cc_graph_create(ctx, NULL, &g);
    d.name = "A"; d.stream = 0; cc_graph_add_op(g, &d, &a);
    dep[0] = a;
    d.name = "B"; d.stream = 1; d.deps = dep; d.n_deps = 1; cc_graph_add_op(g, &d, &b);
    d.name = "C"; cc_graph_add_op(g, &d, &c);
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan of A->B, A->C");
    CHECK_INT(cc_plan_n_waits(pl), 1, "the second wait on A is redundant (C follows B on its stream)");
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    /* A (s0) -> B (s1) -> C (s0) -> D (s1), and A -> D: A->D implied by C->D */
    cc_graph_create(ctx, NULL, &g);
    d = (cc_op_desc){0};
    d.name = "A"; d.stream = 0; cc_graph_add_op(g, &d, &a);
    dep[0] = a; d.deps = dep; d.n_deps = 1;
    d.name = "B"; d.stream = 1; cc_graph_add_op(g, &d, &b);
    dep[0] = b;
    d.name = "C"; d.stream = 0; cc_graph_add_op(g, &d, &c);
    dep[0] = c; dep[1] = a; d.n_deps = 2;
    d.name = "D"; d.stream = 1; cc_graph_add_op(g, &d, &d2);
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan of a cross-stream chain");
    CHECK_INT(cc_plan_n_waits(pl), 3, "B waits for A, C for B, D for C; D's wait for A (same stream as C) is implied");
    cc_plan_destroy(pl);
    /* three streams: A (s0) -> B (s1) -> C (s2), A -> C: C's wait for A is implied by B */
    {
        cc_graph* g3;
        cc_graph_desc gd = {0};
        cc_op x0, x1;
        gd.n_streams = 3;
        cc_graph_create(ctx, &gd, &g3);
        d = (cc_op_desc){0};
        d.name = "A"; d.stream = 0; cc_graph_add_op(g3, &d, &x0);
        dep[0] = x0; d.deps = dep; d.n_deps = 1;
        d.name = "B"; d.stream = 1; cc_graph_add_op(g3, &d, &x1);
        dep[0] = x1; dep[1] = x0; d.n_deps = 2;
        d.name = "C"; d.stream = 2; cc_graph_add_op(g3, &d, NULL);
        CHECK_RES(ctx, cc_plan_create(ctx, g3, NULL, &pl), CC_OK, "plan over three streams");
        CHECK_INT(cc_plan_n_waits(pl), 2, "C waits for B only: B's wait already covers A");
        cc_plan_destroy(pl);
        cc_graph_destroy(g3);
    }
    /* an order that puts D before B on stream 1 deadlocks */
    {
        cc_op ord[4];
        ord[0] = a; ord[1] = d2; ord[2] = b; ord[3] = c;
        CHECK_RES(ctx, cc_plan_create(ctx, g, ord, &pl), CC_ERR_DEADLOCK, "an issue order against the dependencies");
        CHECK_CONTAINS(cc_last_error(ctx), "'D'", "the message names the blocked op");
    }
    /* an op without a stream cannot be executed */
    d = (cc_op_desc){0};
    d.name = "nowhere"; d.stream = CC_NO_STREAM;
    cc_graph_add_op(g, &d, &e);
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_ERR_UNSUPPORTED, "an op on no stream");
    CHECK_CONTAINS(cc_last_error(ctx), "nowhere", "the message names it");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* cc_exec_agree_cap: three ranks give 0, 5000 and 3000 bytes; all take
   3000. Then all give 0: none. */
typedef struct cap_arg { uint64_t got[3], none[3]; cc_result rc[3]; } cap_arg;
static cc_result cap_rank(cc_rank* rank, void* arg) {
    cap_arg* a = (cap_arg*)arg;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank);
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_op_desc d = {0};
    static const uint64_t given[3] = {0, 5000, 3000};
    uint64_t cap = given[me], none = 0;
    cc_result r = cc_graph_create(ctx, NULL, &g);
    memset(&be, 0, sizeof be);
    d.name = "x"; d.duration_us = 1;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create(rank, &be);
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK) r = cc_exec_agree_cap(x, cc_rank_world_comm(rank), &cap);
    if (r == CC_OK) r = cc_exec_agree_cap(x, cc_rank_world_comm(rank), &none);
    a->got[me] = cap; a->none[me] = none; a->rc[me] = r;
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return r;
}

static void test_agree_cap(void) {
    cap_arg a;
    cc_result rc;
    char err[512];
    int r;
    memset(&a, 0, sizeof a);
    tu_run_world(3, cap_rank, &a, &rc, err, sizeof err);
    CHECK_INT(rc, CC_OK, "three ranks agree on a memory cap (%s)", err);
    for (r = 0; r < 3; r++)
        CHECK(a.got[r] == 3000 && a.none[r] == 0, "rank %d takes the smallest nonzero cap, 3000 (got %llu), and 0 where all gave 0 "
              "(got %llu)", r, (unsigned long long)a.got[r], (unsigned long long)a.none[r]);
}

/* The same graph gives the same hash; another order or name another. */
static void test_hash(void) {
    cc_context* ctx;
    cc_graph *g1, *g2;
    cc_plan *p1, *p2, *p3;
    cc_op ops[3], rev[3];
    int i;
    cc_context_create(NULL, &ctx);
    for (i = 0; i < 2; i++) {
        cc_graph** g = i ? &g2 : &g1;
        cc_op_desc d = {0};
        cc_graph_create(ctx, NULL, g);
        d.name = "x"; d.stream = 0; cc_graph_add_op(*g, &d, &ops[0]);
        d.name = "y"; d.stream = 0; cc_graph_add_op(*g, &d, &ops[1]);
        d.name = i ? "z2" : "z"; d.stream = 1; cc_graph_add_op(*g, &d, &ops[2]);
    }
    cc_plan_create(ctx, g1, NULL, &p1);
    cc_plan_create(ctx, g2, NULL, &p2);
    rev[0] = ops[1]; rev[1] = ops[0]; rev[2] = ops[2];
    cc_plan_create(ctx, g1, rev, &p3);
    CHECK(cc_plan_hash(p1) != cc_plan_hash(p2), "a renamed op changes the hash");
    CHECK(cc_plan_hash(p1) != cc_plan_hash(p3), "another order changes the hash");
    {
        cc_plan* p4;
        cc_plan_create(ctx, g1, NULL, &p4);
        CHECK(cc_plan_hash(p1) == cc_plan_hash(p4), "the same graph and order give the same hash");
        cc_plan_destroy(p4);
    }
    cc_plan_destroy(p1); cc_plan_destroy(p2); cc_plan_destroy(p3);
    cc_graph_destroy(g1); cc_graph_destroy(g2);
    cc_context_destroy(ctx);
}

/* A backend whose launch fails: the error names the op, nothing hangs. It
   wraps the CPU backend: its own function table, the CPU one's instance. */
typedef struct failing { cc_backend inner; int calls, fail_at, n_coll; } failing;
static cc_result failing_launch(void* self, void* stream, cc_op_fn fn, void* user) {
    failing* f = (failing*)self;
    if (++f->calls == f->fail_at) return CC_ERR_BACKEND;
    return f->inner.fns->launch(f->inner.self, stream, fn, user);
}
#define FWD(name, sig, args) static cc_result failing_##name sig { failing* f = (failing*)self; return f->inner.fns->name args; }
FWD(stream_create, (void* self, int i, void** s), (f->inner.self, i, s))
FWD(event_create, (void* self, void** e), (f->inner.self, e))
FWD(event_record, (void* self, void* e, void* s), (f->inner.self, e, s))
FWD(stream_wait_event, (void* self, void* s, void* e), (f->inner.self, s, e))
FWD(timestamp, (void* self, void* s, double* w), (f->inner.self, s, w))
FWD(synchronize, (void* self), (f->inner.self))
static void failing_stream_destroy(void* self, void* s) { failing* f = (failing*)self; f->inner.fns->stream_destroy(f->inner.self, s); }
static void failing_event_destroy(void* self, void* e) { failing* f = (failing*)self; f->inner.fns->event_destroy(f->inner.self, e); }
static double failing_now(void* self) { failing* f = (failing*)self; return f->inner.fns->now_us(f->inner.self); }
static const cc_backend_fns failing_fns = {
    "failing", "host", failing_stream_create, failing_stream_destroy, failing_launch, NULL,
    failing_event_create, failing_event_destroy, failing_event_record, failing_stream_wait_event,
    failing_timestamp, failing_synchronize, failing_now, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

static cc_result failing_rank(cc_rank* rank, void* user) {
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g;
    cc_plan* pl;
    cc_exec* x;
    failing f;
    cc_backend be;
    rec recs[4];
    int i;
    cc_result r;
    (void)user;
    memset(recs, 0, sizeof recs);
    cc_graph_create(ctx, NULL, &g);
    for (i = 0; i < 4; i++) {
        cc_op_desc d = {0};
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        d.name = name; d.stream = i % 2; d.duration_us = 1; d.fn = sleepy; d.user_data = &recs[i];
        cc_graph_add_op(g, &d, NULL);
    }
    cc_plan_create(ctx, g, NULL, &pl);
    memset(&f, 0, sizeof f);
    cc_cpu_backend_create(rank, &f.inner);
    f.fail_at = 3;
    be.fns = &failing_fns;
    be.self = &f;
    cc_exec_create(ctx, pl, &be, &x);
    r = cc_exec_step(x);
    CHECK_INT(r, CC_ERR_BACKEND, "a backend failure in launch is returned");
    CHECK_CONTAINS(cc_last_error(ctx), "k2", "and the message names the op it failed at (%s)", cc_last_error(ctx));
    f.fail_at = -1;
    CHECK_RES(ctx, cc_exec_step(x), CC_OK, "the next step runs");
    cc_exec_destroy(x);
    cc_backend_destroy(&f.inner);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_backend_failure(void) {
    cc_result rc;
    char err[512];
    tu_run_world(1, failing_rank, NULL, &rc, err, sizeof err);
    CHECK_INT(rc, CC_OK, "the world ran (%s)", err);
}


/* ---- the same numbers in every order ------------------------------------
   A two-layer linear step on each rank: y = x W1, z = y W2, gradients of
   0.5|z|^2, all-reduce (average) of both weight gradients on the comm
   stream, SGD updates. Program order and scheduled orders must leave
   bit-identical weights: the ops are deterministic and the collectives
   reduce in rank order. */
#define NB 8
#define ND 16
typedef struct mlp {
    float x[NB * ND], y[NB * ND], z[NB * ND], dz[NB * ND], dy[NB * ND];
    float w[2][ND * ND], dw[2][ND * ND];
} mlp;
typedef struct mjob { mlp* m; int which; } mjob;
static void mm(const float* a, const float* b, float* c, int n, int k, int m, int ta, int tb) {
    int i, j, q;
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            float s = 0;
            for (q = 0; q < k; q++) s += (ta ? a[q * n + i] : a[i * k + q]) * (tb ? b[j * k + q] : b[q * m + j]);
            c[i * m + j] = s;
        }
}
static void f_y(void* st, void* u) { mlp* m = ((mjob*)u)->m; (void)st; mm(m->x, m->w[0], m->y, NB, ND, ND, 0, 0); }
static void f_z(void* st, void* u) { mlp* m = ((mjob*)u)->m; (void)st; mm(m->y, m->w[1], m->z, NB, ND, ND, 0, 0); }
static void f_dz(void* st, void* u) { mlp* m = ((mjob*)u)->m; int i; (void)st; for (i = 0; i < NB * ND; i++) m->dz[i] = m->z[i] / NB; }
static void f_dw2(void* st, void* u) { mlp* m = ((mjob*)u)->m; (void)st; mm(m->y, m->dz, m->dw[1], ND, NB, ND, 1, 0); }
static void f_dy(void* st, void* u) { mlp* m = ((mjob*)u)->m; (void)st; mm(m->dz, m->w[1], m->dy, NB, ND, ND, 0, 1); }
static void f_dw1(void* st, void* u) { mlp* m = ((mjob*)u)->m; (void)st; mm(m->x, m->dy, m->dw[0], ND, NB, ND, 1, 0); }
static void f_up(void* st, void* u) {
    mjob* j = (mjob*)u;
    int i;
    (void)st;
    for (i = 0; i < ND * ND; i++) j->m->w[j->which][i] -= 0.05f * j->m->dw[j->which][i];
}

typedef struct same_arg { int bad, failures; char first[512]; float result[3][4][2 * ND * ND]; } same_arg;

static cc_region reg(cc_buffer b, int part, uint64_t n) {
    cc_region r = {0};
    r.buffer = b; r.offset_bytes = (uint64_t)part * n; r.n_bytes = n; r.split_rows = 0;
    return r;
}

static cc_result same_rank(cc_rank* rank, void* user) {
    same_arg* a = (same_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), variant, i;
    mlp m0, m;
    mjob jobs[2];
    cc_collective ar[2];
    cc_graph* g;
    cc_buffer act, wb, gb;
    cc_backend be;
    const uint64_t A = sizeof(float) * NB * ND, W = sizeof(float) * ND * ND;
    tu_rng rng;
    rng.s = 99u + (unsigned)me;
    for (i = 0; i < NB * ND; i++) m0.x[i] = (float)tu_unit(&rng) - 0.5f;
    rng.s = 7;   /* the same weights everywhere */
    for (i = 0; i < ND * ND; i++) { m0.w[0][i] = (float)tu_unit(&rng) - 0.5f; m0.w[1][i] = (float)tu_unit(&rng) - 0.5f; }
    jobs[0].m = &m; jobs[0].which = 0; jobs[1].m = &m; jobs[1].which = 1;
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "act", 5 * A, &act);   /* x y z dz dy */
    cc_graph_add_buffer(g, "w", 2 * W, &wb);
    cc_graph_add_buffer(g, "dw", 2 * W, &gb);
    {
        struct { const char* name; cc_op_fn fn; int reads[3][2]; int nr; int writes[2]; int which; } ops[] = {
            { "y=xW1", f_y, { { 0, 0 }, { 1, 0 } }, 2, { 0, 1 }, 0 },
            { "z=yW2", f_z, { { 0, 1 }, { 1, 1 } }, 2, { 0, 2 }, 0 },
            { "dz", f_dz, { { 0, 2 } }, 1, { 0, 3 }, 0 },
            { "dW2", f_dw2, { { 0, 1 }, { 0, 3 } }, 2, { 2, 1 }, 1 },
            { "dy", f_dy, { { 0, 3 }, { 1, 1 } }, 2, { 0, 4 }, 0 },
            { "dW1", f_dw1, { { 0, 0 }, { 0, 4 } }, 2, { 2, 0 }, 0 },
        };
        cc_buffer bufs[3];
        uint64_t sizes[3];
        size_t k;
        bufs[0] = act; bufs[1] = wb; bufs[2] = gb;
        sizes[0] = A; sizes[1] = W; sizes[2] = W;
        for (k = 0; k < sizeof ops / sizeof *ops; k++) {
            cc_op_desc d = {0};
            cc_region r[3] = {0}, w[1] = {0};
            int q;
            for (q = 0; q < ops[k].nr; q++) r[q] = reg(bufs[ops[k].reads[q][0]], ops[k].reads[q][1], sizes[ops[k].reads[q][0]]);
            w[0] = reg(bufs[ops[k].writes[0]], ops[k].writes[1], sizes[ops[k].writes[0]]);
            d.name = ops[k].name; d.duration_us = 10 + (double)k; d.fn = ops[k].fn; d.user_data = &jobs[0];
            d.reads = r; d.n_reads = ops[k].nr; d.writes = w; d.n_writes = 1;
            if (cc_graph_add_op(g, &d, NULL) != CC_OK) return cc_last_result(ctx);
            if (ops[k].fn == f_dw2 || ops[k].fn == f_dw1) {
                int which = ops[k].fn == f_dw2;
                cc_op_desc c = {0};
                char name[32];
                memset(&ar[which], 0, sizeof ar[which]);
                ar[which].kind = CC_COLL_ALL_REDUCE; ar[which].dtype = CC_DTYPE_FLOAT32; ar[which].reduce = CC_REDUCE_AVG;
                ar[which].n_elems = ND * ND; ar[which].comm = cc_rank_world_comm(rank);
                ar[which].send_buf = m.dw[which]; ar[which].recv_buf = m.dw[which];
                snprintf(name, sizeof name, "allreduce dW%d", which + 1);
                c.name = name; c.duration_us = 30; c.stream = CC_STREAM_COMM; c.coll = &ar[which];
                c.reads = w; c.n_reads = 1; c.writes = w; c.n_writes = 1;
                if (cc_graph_add_op(g, &c, NULL) != CC_OK) return cc_last_result(ctx);
                snprintf(name, sizeof name, "update W%d", which + 1);
                c = (cc_op_desc){0};
                r[0] = w[0]; r[1] = reg(wb, which, W);
                c.name = name; c.duration_us = 5; c.fn = f_up; c.user_data = &jobs[which];
                c.reads = r; c.n_reads = 2; c.writes = &r[1]; c.n_writes = 1;
                if (cc_graph_add_op(g, &c, NULL) != CC_OK) return cc_last_result(ctx);
            }
        }
    }
    if (cc_cpu_backend_create(rank, &be) != CC_OK) return cc_last_result(ctx);
    for (variant = 0; variant < 3; variant++) {
        cc_schedule s;
        cc_sched_desc sd = {0};
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        int step;
        cc_result r = CC_OK;
        memset(&s, 0, sizeof s);
        sd.method = variant == 1 ? CC_SCHED_AUTO : CC_SCHED_LIST;
        sd.tuning.priority = CC_PRIO_MTS;
        if (variant > 0) r = cc_sched_solve(ctx, g, &sd, &s);
        if (r == CC_OK) r = cc_plan_create(ctx, g, variant ? s.order : NULL, &pl);
        if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
        if (r == CC_OK) r = cc_exec_agree(x, cc_rank_world_comm(rank));
        memcpy(&m, &m0, sizeof m);
        for (step = 0; step < 4 && r == CC_OK; step++) r = cc_exec_step(x);
        if (r != CC_OK) { a->failures++; snprintf(a->first, sizeof a->first, "rank %d variant %d: %s", me, variant, cc_last_error(ctx)); }
        memcpy(a->result[variant][me], m.w, sizeof m.w);
        cc_exec_destroy(x);
        cc_plan_destroy(pl);
        cc_schedule_release(ctx, &s);
    }
    cc_backend_destroy(&be);
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_same_numbers(void) {
    cc_result rc;
    char err[512];
    static same_arg a;
    int v, r, ranks = 3;
    memset(&a, 0, sizeof a);
    tu_run_world(ranks, same_rank, &a, &rc, err, sizeof err);
    CHECK_INT(rc, CC_OK, "3 ranks ran the step in program order and two scheduled orders (%s)", err);
    CHECK_INT(a.failures, 0, "no step failed (%s)", a.first);
    for (v = 1; v < 3; v++)
        for (r = 0; r < ranks; r++)
            CHECK(!memcmp(a.result[v][r], a.result[0][r], sizeof a.result[0][r]),
                  "rank %d: weights after 4 steps in order %d are bit-identical to program order", r, v);
    CHECK(!memcmp(a.result[0][0], a.result[0][1], sizeof a.result[0][0]) &&
          !memcmp(a.result[0][0], a.result[0][2], sizeof a.result[0][0]),
          "every rank holds the same weights (the gradients were averaged)");
}

/* Ranks whose plans differ are refused before the first step. */
static cc_result mismatch_rank(cc_rank* rank, void* user) {
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g;
    cc_plan* pl;
    cc_exec* x;
    cc_backend be;
    cc_op_desc d = {0};
    cc_result r;
    int* out = (int*)user;
    cc_graph_create(ctx, NULL, &g);
    cc_collective c;
    float buf[4] = { 1, 2, 3, 4 };
    d.name = cc_rank_index(rank) == 1 ? "other_name" : "op";
    d.duration_us = 1;
    cc_graph_add_op(g, &d, NULL);
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.n_elems = 4; c.comm = cc_rank_world_comm(rank); c.send_buf = buf; c.recv_buf = buf;
    d = (cc_op_desc){0};
    d.name = "sum"; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &c;
    cc_graph_add_op(g, &d, NULL);
    cc_plan_create(ctx, g, NULL, &pl);
    cc_cpu_backend_create(rank, &be);
    cc_exec_create(ctx, pl, &be, &x);
    r = cc_exec_agree(x, cc_rank_world_comm(rank));
    out[cc_rank_index(rank)] = r;
    if (cc_rank_index(rank) == 0) snprintf((char*)(out + 4), 400, "%s", cc_last_error(ctx));
    out[2 + cc_rank_index(rank)] = cc_exec_step(x);
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_plan_mismatch(void) {
    int out[4 + 100];
    cc_result rc;
    char err[512];
    memset(out, 0, sizeof out);
    tu_run_world(2, mismatch_rank, out, &rc, err, sizeof err);
    CHECK_INT(out[0], CC_ERR_PLAN_MISMATCH, "rank 0 refuses to run a plan that differs from rank 1's");
    CHECK_INT(out[1], CC_ERR_PLAN_MISMATCH, "and so does rank 1");
    CHECK_CONTAINS((char*)(out + 4), "rank 1", "the message names the other rank (%s)", (char*)(out + 4));
    CHECK(out[2] == CC_ERR_PLAN_MISMATCH && out[3] == CC_ERR_PLAN_MISMATCH,
          "a plan with collectives does not launch without a successful agreement (%d, %d)", out[2], out[3]);
}

/* Trace and DOT files: the structure a viewer needs. */
/* A family whose collectives are never run: graphs and traces only look at
   the communicator's size and name. */
static cc_result idle_collective(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c;
    snprintf(msg, msg_size, "the idle family runs nothing");
    return CC_ERR_UNSUPPORTED;
}
static const cc_comm_fns idle_family = { "idle", "host", idle_collective, NULL, NULL, NULL, NULL };

static void test_trace_files(void) {
    cc_context* ctx;
    cc_graph* g;
    cc_trace* t;
    cc_op_desc d = {0};
    cc_collective c;
    double st[2] = { 0, 5 }, en[2] = { 4, 9 };
    char path[600], dot[600];
    char* text;
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    d.name = "matmul \"quoted\""; d.duration_us = 4;
    cc_graph_add_op(g, &d, NULL);
    memset(&c, 0, sizeof c);
    c.kind = CC_COLL_ALL_REDUCE; c.n_elems = 256; c.send_buf = st; c.recv_buf = st;
    CHECK_RES(ctx, cc_comm_wrap(ctx, &idle_family, NULL, 0, 2, "pair", &c.comm), CC_OK, "a communicator that never runs");
    d = (cc_op_desc){0};
    d.name = "grad_allreduce"; d.duration_us = 4; d.stream = CC_STREAM_COMM; d.coll = &c;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "a collective op");
    cc_trace_create(ctx, &t);
    CHECK_RES(ctx, cc_trace_add(t, g, 0, "rank 0", st, en), CC_OK, "measured timeline of rank 0");
    CHECK_RES(ctx, cc_trace_add(t, g, 1, "rank 1", st, NULL), CC_OK, "predicted timeline as rank 1");
    snprintf(path, sizeof path, "%s/trace.json", tu_tmp_dir());
    CHECK_RES(ctx, cc_trace_write(t, path), CC_OK, "written");
    text = tu_read_file(path, NULL);
    CHECK(text != NULL, "and readable");
    if (text) {
        int n_x = 0;
        const char* p = text;
        while ((p = strstr(p, "\"ph\":\"X\"")) != NULL) { n_x++; p++; }
        CHECK_INT(n_x, 4, "one complete event per op per rank");
        CHECK_CONTAINS(text, "\"traceEvents\"", "a Chrome trace object");
        CHECK_CONTAINS(text, "matmul \\\"quoted\\\"", "quotes in names are escaped");
        CHECK_CONTAINS(text, "\"collective\":\"all_reduce\",\"bytes\":1024", "collectives carry kind and size");
        CHECK_CONTAINS(text, "\"thread_name\"", "streams are named tracks");
        CHECK_CONTAINS(text, "\"comm\"", "the comm stream's name appears");
        free(text);
    }
    snprintf(dot, sizeof dot, "%s/graph.dot", tu_tmp_dir());
    CHECK_RES(ctx, cc_graph_write_dot(ctx, g, dot), CC_OK, "the graph as DOT");
    text = tu_read_file(dot, NULL);
    if (text) {
        CHECK_CONTAINS(text, "digraph", "a Graphviz digraph");
        CHECK_CONTAINS(text, "cluster_1", "a cluster per stream");
        free(text);
    }
    CHECK_RES(ctx, cc_trace_write(t, "/nonexistent-dir/x.json"), CC_ERR_IO, "an unwritable path");
    cc_trace_destroy(t);
    cc_graph_destroy(g);
    cc_comm_destroy(c.comm);
    cc_context_destroy(ctx);
}

/* The executor reaches collectives only through its backend: the plan
   agreement and the profile's agreement on durations each call the
   backend's collective entry (a wrapper that counts its calls and hands
   them to the CPU backend); a backend without one cannot agree; the CPU
   backend refuses a communicator of another rank. */
static cc_result counting_collective(void* self, void* stream, const cc_collective* c) {
    failing* f = (failing*)self;
    f->n_coll++;
    return f->inner.fns->collective(f->inner.self, stream, c);
}
static const cc_backend_fns counting_fns = {
    "counting", "host", failing_stream_create, failing_stream_destroy, failing_launch, counting_collective,
    failing_event_create, failing_event_destroy, failing_event_record, failing_stream_wait_event,
    failing_timestamp, failing_synchronize, failing_now, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
};

typedef struct through_arg {
    cc_comm* world[2];
    int n_agree, n_profile, no_entry_ok, foreign_ok, durations_ok;
    char msg[400];
} through_arg;

static cc_result through_rank(cc_rank* rank, void* user) {
    through_arg* A = (through_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), i;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec *x = NULL, *x2 = NULL;
    failing f;
    cc_backend be;
    rec recs[3];
    cc_result r;
    memset(recs, 0, sizeof recs);
    memset(&f, 0, sizeof f);
    f.fail_at = -1;
    A->world[me] = cc_rank_world_comm(rank);
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (i = 0; i < 3; i++) {
        cc_op_desc d = {0};
        recs[i].sleep_us = 100 * (i + 1);
        d.duration_us = 1; d.fn = sleepy; d.user_data = &recs[i];
        if ((r = cc_graph_add_op(g, &d, NULL)) != CC_OK) return r;
    }
    r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create(rank, &f.inner);
    be.fns = &counting_fns;
    be.self = &f;
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK) r = cc_exec_agree(x, cc_rank_world_comm(rank));
    if (me == 0) A->n_agree = f.n_coll;
    (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
    if (r == CC_OK) r = cc_exec_profile_ops(x, 3, cc_rank_world_comm(rank));
    if (me == 0) {
        A->n_profile = f.n_coll - A->n_agree;
        /* the ranks agreed on the maximum: every op at least its sleep */
        A->durations_ok = r == CC_OK;
        for (i = 0; i < 3; i++) A->durations_ok &= cc_op_duration_us(g, cc_graph_op(g, i)) >= 100.0 * (i + 1);
    }
    if (r == CC_OK && me == 0) {
        /* a table without the collective entry */
        cc_backend nb;
        nb.fns = &failing_fns;
        nb.self = &f;
        if (cc_exec_create(ctx, pl, &nb, &x2) == CC_OK) {
            cc_result r2 = cc_exec_agree(x2, cc_rank_world_comm(rank));
            A->no_entry_ok = r2 == CC_ERR_UNSUPPORTED && strstr(cc_last_error(ctx), "failing") != NULL;
            if (!A->no_entry_ok) snprintf(A->msg, sizeof A->msg, "no entry: %s", cc_last_error(ctx));
            cc_exec_destroy(x2);
        }
        /* rank 1's communicator given to rank 0's backend (nothing waits:
           the backend refuses it before it runs) */
        {
            cc_result r3 = cc_exec_agree(x, A->world[1]);
            A->foreign_ok = r3 == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "not this rank's") != NULL;
            if (!A->foreign_ok) snprintf(A->msg, sizeof A->msg, "foreign comm: %s", cc_last_error(ctx));
        }
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&f.inner);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return r;
}

static void test_through_backend(void) {
    through_arg A;
    cc_result rc;
    char err[512];
    cc_backend zero;
    memset(&A, 0, sizeof A);
    tu_run_world(2, through_rank, &A, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "the world ran (%s)", err);
    CHECK_INT(A.n_agree, 1, "cc_exec_agree: one call of the backend's collective entry");
    CHECK_INT(A.n_profile, 1, "cc_exec_profile_ops with a communicator: one more (the maximum of the durations)");
    CHECK(A.durations_ok, "the profiled durations are at least what each op sleeps");
    CHECK(A.no_entry_ok, "a backend without a collective entry cannot agree: CC_ERR_UNSUPPORTED naming it %s", A.msg);
    CHECK(A.foreign_ok, "the CPU backend refuses another rank's communicator %s", A.msg);
    memset(&zero, 0, sizeof zero);
    cc_backend_destroy(NULL);
    cc_backend_destroy(&zero);
    CHECK(zero.fns == NULL && zero.self == NULL, "cc_backend_destroy takes NULL and a zero backend");
}

/* A rank's step of two ops, issued as written: a compute op (sleepy with
   r0, writing buf's region where compute_writes) and an in-place all-reduce
   of buf (n floats) over all ranks after it; planned, on the CPU backend,
   agreed. The caller profiles it, reads the graph, and frees all four. */
typedef struct two_ops { cc_graph* g; cc_plan* pl; cc_exec* x; cc_backend be; cc_collective co; } two_ops;
static cc_result two_ops_make(cc_rank* rank, rec* r0, float* buf, size_t n, int compute_writes, two_ops* t) {
    cc_context* ctx = cc_rank_context(rank);
    cc_buffer b;
    cc_region reg = {0};
    cc_op_desc d = {0};
    cc_result r;
    memset(t, 0, sizeof *t);
    if ((r = cc_graph_create(ctx, NULL, &t->g)) != CC_OK) return r;
    cc_graph_add_buffer(t->g, "b", n * sizeof(float), &b);
    memset(&reg, 0, sizeof reg);
    reg.buffer = b; reg.n_bytes = n * sizeof(float);
    d.duration_us = 1; d.fn = sleepy; d.user_data = r0;
    if (compute_writes) { d.writes = &reg; d.n_writes = 1; }
    r = cc_graph_add_op(t->g, &d, NULL);
    t->co.kind = CC_COLL_ALL_REDUCE; t->co.dtype = CC_DTYPE_FLOAT32; t->co.reduce = CC_REDUCE_SUM; t->co.n_elems = n;
    t->co.comm = cc_rank_world_comm(rank); t->co.send_buf = buf; t->co.recv_buf = buf;
    d = (cc_op_desc){0};
    d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &t->co; d.reads = &reg; d.n_reads = 1; d.writes = &reg; d.n_writes = 1;
    if (r == CC_OK) r = cc_graph_add_op(t->g, &d, NULL);
    if (r == CC_OK) r = cc_plan_create(ctx, t->g, NULL, &t->pl);
    if (r == CC_OK) r = cc_cpu_backend_create(rank, &t->be);
    if (r == CC_OK) r = cc_exec_create(ctx, t->pl, &t->be, &t->x);
    if (r == CC_OK) r = cc_exec_agree(t->x, cc_rank_world_comm(rank));
    return r;
}
static void two_ops_free(two_ops* t) {
    cc_exec_destroy(t->x);
    cc_backend_destroy(&t->be);
    cc_plan_destroy(t->pl);
    cc_graph_destroy(t->g);
}

/* cc_exec_profile_ops measures the executor's costs: a cross-stream wait that
   blocks costs a thread's wake-up (more than nothing, far less than a
   second), and a one-element all-reduce on 2 ranks over an emulated link of
   latency 2000 us costs at least the ring's 2 (n - 1) steps of it (4000 us,
   the link model by hand). */
typedef struct costs_arg { cc_exec_costs costs; double startup, compute_us; } costs_arg;
static float costs_buf[2][64];
static cc_result costs_rank(cc_rank* rank, void* user) {
    costs_arg* A = (costs_arg*)user;
    int me = cc_rank_index(rank);
    two_ops t;
    rec r0;
    cc_result r;
    memset(&r0, 0, sizeof r0);
    r0.sleep_us = 200;
    r = two_ops_make(rank, &r0, costs_buf[me], 64, 0, &t);
    (void)cc_exec_allow_profile_writes(t.x, 1);   /* its buffers hold nothing to keep */
    if (r == CC_OK) r = cc_exec_profile_ops(t.x, 3, cc_rank_world_comm(rank));
    if (r == CC_OK && me == 0) {
        A->costs = cc_graph_exec_costs(t.g);
        A->startup = cc_graph_coll_startup(t.g, cc_rank_world_comm(rank));
        A->compute_us = cc_op_duration_us(t.g, cc_graph_op(t.g, 0));
    }
    two_ops_free(&t);
    return r;
}

/* fn on every rank of a world made from wd; the world's error, if any, in
   err. */
static cc_result run_world(cc_context* ctx, const cc_world_desc* wd, cc_result (*fn)(cc_rank*, void*), void* user, char* err,
                           size_t n) {
    cc_world* w = NULL;
    cc_result rc = cc_world_create(ctx, wd, &w);
    err[0] = 0;
    if (rc == CC_OK) rc = cc_world_run(w, fn, user);
    if (w) snprintf(err, n, "%s", cc_world_error(w));
    cc_world_destroy(w);
    return rc;
}

static void test_profiled_costs(void) {
    cc_world_desc wd = {0};
    cc_link slow = { 0 };
    char err[512];
    cc_context* ctx = NULL;
    costs_arg A;
    cc_result rc;
    memset(&A, 0, sizeof A);
    slow.latency_us = 2000;
    slow.us_per_byte = 0;
    wd.n_ranks = 2;
    wd.emulate_link = 1;
    wd.intra_node = &slow;
    wd.inter_node = &slow;
    cc_context_create(NULL, &ctx);
    rc = run_world(ctx, &wd, costs_rank, &A, err, sizeof err);
    CHECK_RES(ctx, rc, CC_OK, "profiling a step of a compute op and an all-reduce on 2 ranks (%s)", err);
    CHECK(A.costs.wait_us > 0 && A.costs.wait_us < 1e6, "a blocking cross-stream wait is measured: %.1f us", A.costs.wait_us);
    CHECK(A.costs.launch_us >= 0 && A.costs.launch_us < 1e6, "an op's launch is measured: %.1f us", A.costs.launch_us);
    CHECK(A.startup >= 4000 && A.startup < 4000 + 1e6, "a one-element all-reduce on the 2000 us link: %.0f us >= 2 (n-1) alpha = 4000",
          A.startup);
    CHECK(A.compute_us >= 200, "the compute op's duration is at least its sleep (%.0f us)", A.compute_us);
    CHECK(A.costs.compute_overlap >= 1 && A.costs.compute_overlap <= 10 && A.costs.comm_overlap >= 1 && A.costs.comm_overlap <= 10,
          "the overlap slowdowns are measured within 1..10 (compute %.2f, collective %.2f)", A.costs.compute_overlap,
          A.costs.comm_overlap);
    cc_context_destroy(ctx);
}

/* cc_exec_profile_steps: an op's time in the step, with what the step runs
   beside it. Op A (compute stream) sleeps 500 us, then 3500 us more if op
   C (another stream, 6000 us) is running, else 500 us: alone it takes
   about 1000 us, in the step (C started with it) about 4000 us; C takes
   6000 us either way. So profiled alone the step is predicted at about
   6000 us with A at 1000; profiled in its steps, A at 4000 or more and the
   prediction (cc_simulate of the same order) near the measured step. */
static pthread_mutex_t c_mu = PTHREAD_MUTEX_INITIALIZER;
static int c_running;
static int a_calls, a_beside;   /* calls of op_a, and those that found C running */
static void set_c_running(int v) {
    pthread_mutex_lock(&c_mu);
    c_running = v;
    pthread_mutex_unlock(&c_mu);
}
static void op_c(void* stream, void* user) {
    struct timespec ts = { 0, 6000 * 1000L };
    (void)stream; (void)user;
    set_c_running(1);
    nanosleep(&ts, NULL);
    set_c_running(0);
}
static void op_a(void* stream, void* user) {
    struct timespec ts = { 0, 500 * 1000L }, more = { 0, 3500 * 1000L };
    int beside;
    (void)stream; (void)user;
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&c_mu);
    beside = c_running;
    a_calls++;
    a_beside += beside;
    pthread_mutex_unlock(&c_mu);
    nanosleep(beside ? &more : &ts, NULL);
}

static void test_profile_steps(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_op_desc d = {0};
    cc_exec_costs costs;
    double alone_a = 0, step_a = 0, pred = 0, start[2], end[2], measured = 0;
    cc_op order[2];
    cc_result r;
    memset(&be, 0, sizeof be);
    cc_context_create(NULL, &ctx);
    r = cc_graph_create(ctx, NULL, &g);
    d.name = "A"; d.duration_us = 1; d.fn = op_a;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    d.name = "C"; d.stream = CC_STREAM_COMM; d.fn = op_c;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create_ctx(ctx, &be);
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
    a_calls = a_beside = 0;
    if (r == CC_OK) r = cc_exec_profile_ops(x, 3, NULL);
    alone_a = cc_op_duration_us(g, cc_graph_op(g, 0));
    costs = cc_graph_exec_costs(g);
    CHECK(a_calls > 0 && a_beside == 0, "cc_exec_profile_ops ran A alone (%d calls, %d beside C)", a_calls, a_beside);
    CHECK_RES(ctx, cc_exec_profile_steps(x, 0, NULL), CC_ERR_INVALID_ARG, "cc_exec_profile_steps refuses 0 steps");
    CHECK(strstr(cc_last_error(ctx), "steps") != NULL, "and says so: %s", cc_last_error(ctx));
    (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
    if (r == CC_OK) r = cc_exec_profile_steps(x, 5, NULL);
    CHECK_RES(ctx, r, CC_OK, "profiling a step of two ops on two streams, alone and in 5 steps");
    step_a = cc_op_duration_us(g, cc_graph_op(g, 0));
    /* sleeps never end early (lower bounds); on a loaded machine they end
       late by any amount, so which run A saw C in is counted, not timed */
    CHECK(alone_a >= 900, "alone, A takes about 1000 us (%.0f)", alone_a);
    CHECK(step_a >= 3800, "in the step, beside C, A takes about 4000 us (%.0f)", step_a);
    CHECK(cc_op_duration_us(g, cc_graph_op(g, 1)) >= 5800, "C takes its 6000 us (%.0f)", cc_op_duration_us(g, cc_graph_op(g, 1)));
    {
        cc_exec_costs now = cc_graph_exec_costs(g);
        CHECK(now.compute_overlap == 1 && now.comm_overlap == 1, "the overlap slowdowns are none (the durations hold them)");
        CHECK(now.launch_us >= 0 && now.launch_us < 5000 && now.wait_us == 0,
              "the launch is the steps' mean gap before an op (%.1f us; alone: %.1f), the wait 0: no op waited for another "
              "stream", now.launch_us, costs.launch_us);
    }
    /* The median of 5 steps against the prediction from the profile. On a
       loaded machine (a sanitized run beside other tests on two cores) the
       threads can lag by milliseconds for a while, slowing the measured
       steps but not the profile taken before them: up to three attempts,
       each profiling 5 steps again before measuring. A prediction that is
       wrong fails all three. */
    {
        double m[5], t;
        int i, j, attempt, near = 0;
        order[0] = cc_graph_op(g, 0);
        order[1] = cc_graph_op(g, 1);
        for (attempt = 0; attempt < 3 && r == CC_OK && !near; attempt++) {
            (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
            if (attempt > 0) r = cc_exec_profile_steps(x, 5, NULL);
            for (i = 0; i < 5 && r == CC_OK; i++) {
                r = cc_exec_step(x);
                if (r == CC_OK) r = cc_exec_timeline(x, start, end);
                m[i] = end[0] > end[1] ? end[0] : end[1];
                for (j = i; j > 0 && m[j] < m[j - 1]; j--) { t = m[j]; m[j] = m[j - 1]; m[j - 1] = t; }
            }
            measured = r == CC_OK ? m[2] : 0;
            if (r == CC_OK) r = cc_simulate(ctx, g, order, 2, NULL, &pred);
            near = r == CC_OK && pred >= 0.8 * measured && pred <= 1.25 * measured;
            if (!near && r == CC_OK) NOTE("attempt %d: predicted %.0f us, measured median %.0f us", attempt + 1, pred, measured);
        }
        CHECK_RES(ctx, r, CC_OK, "5 more steps, and their prediction");
        CHECK(near, "the prediction of the step from its own profile, %.0f us, is near the measured median of 5 steps, "
              "%.0f us (attempt %d of 3)", pred, measured, attempt);
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* With a communicator the ranks agree on the mean over them: rank 1's op
   sleeps 20000 us, rank 0's 500 us, so both get about 10250 us (the
   maximum would be 20000; the margins allow for a loaded machine); rank
   0's all-reduce after it waits about 19500 us for rank 1, rank 1's
   hardly at all, so both get about 9750 us. */
typedef struct steps_arg { double a[2], b[2], wait[2], hand[2], exposed[2]; } steps_arg;
static float steps_buf[2][16];
static cc_result steps_rank(cc_rank* rank, void* user) {
    steps_arg* A = (steps_arg*)user;
    int me = cc_rank_index(rank);
    two_ops t;
    rec r0;
    cc_result r;
    memset(&r0, 0, sizeof r0);
    r0.sleep_us = me == 1 ? 20000 : 500;
    r = two_ops_make(rank, &r0, steps_buf[me], 16, 1, &t);
    (void)cc_exec_allow_profile_writes(t.x, 1);   /* its buffers hold nothing to keep */
    if (r == CC_OK) r = cc_exec_profile_steps(t.x, 3, cc_rank_world_comm(rank));
    if (r == CC_OK) {
        A->a[me] = cc_op_duration_us(t.g, cc_graph_op(t.g, 0));
        A->b[me] = cc_op_duration_us(t.g, cc_graph_op(t.g, 1));
        A->wait[me] = cc_graph_exec_costs(t.g).wait_us;
    }
    /* one more step, added and applied: the all-reduce runs after the
       compute op it depends on, beside no compute, so all of its time is
       exposed; by hand, its end - start in this rank's timeline */
    if (r == CC_OK) {
        double st[2], en[2];
        cc_profile_result sp;
        r = cc_exec_step(t.x);
        if (r == CC_OK) r = cc_exec_timeline(t.x, st, en);
        if (r == CC_OK) r = cc_exec_profile_loop_step(t.x);
        if (r == CC_OK) r = cc_exec_profile_loop_apply(t.x, cc_rank_world_comm(rank));
        if (r == CC_OK) r = cc_exec_query_profile(t.x, &sp);
        if (r == CC_OK) {
            A->hand[me] = en[1] - st[1];
            A->exposed[me] = sp.exposed_median_us;
        }
    }
    two_ops_free(&t);
    return r;
}

static void test_profile_steps_agree(void) {
    cc_world_desc wd = {0};
    char err[512];
    cc_context* ctx = NULL;
    steps_arg A;
    cc_result rc;
    memset(&A, 0, sizeof A);
    wd.n_ranks = 2;
    cc_context_create(NULL, &ctx);
    rc = run_world(ctx, &wd, steps_rank, &A, err, sizeof err);
    CHECK_RES(ctx, rc, CC_OK, "profiling a compute op and an all-reduce in 3 steps on 2 ranks (%s)", err);
    CHECK(A.a[0] == A.a[1] && A.b[0] == A.b[1], "the ranks agree on every duration (%.0f %.0f, %.0f %.0f)", A.a[0], A.a[1], A.b[0],
          A.b[1]);
    CHECK(A.a[0] >= 10250 && A.a[0] < 16000, "the compute op: the mean of the ranks' 500 and 20000 us, not the maximum (%.0f)",
          A.a[0]);
    CHECK(A.b[0] >= 6000 && A.b[0] < 16000, "the all-reduce: the mean of rank 0's wait of about 19500 us in it for rank 1 and "
          "rank 1's none (%.0f)", A.b[0]);
    CHECK(A.wait[0] == A.wait[1] && A.wait[0] > 0 && A.wait[0] < 5000,
          "the all-reduce waits for the compute op on the other stream: a wait cost, agreed (%.1f us)", A.wait[0]);
    CHECK(A.exposed[0] == A.exposed[1] && fabs(A.exposed[0] - (A.hand[0] + A.hand[1]) / 2) < 0.01,
          "a step's exposed communication, agreed: the mean over the ranks of the all-reduce's time in their timelines, "
          "%.1f us by hand (%.1f, %.1f)", (A.hand[0] + A.hand[1]) / 2, A.exposed[0], A.exposed[1]);
    cc_context_destroy(ctx);
}

/* cc_exec_profile_loop_step / cc_exec_profile_loop_apply: the steps the caller runs,
   with its own work between them. Op B sleeps what the caller set before
   the step: 5000, 5000, 5000 and 45000 us. The expected figures are
   computed by hand from each step's timeline as measured (a loaded
   machine overruns sleeps by milliseconds): B's duration the mean of the
   four (about 15000 us; the last step alone would give about 45000, the
   last step added twice about 21000), the steps' makespans their median
   (between the 2nd and 3rd smallest) and mean. A fifth step of 30000 us
   is then alone in a fresh profile: its own time, where the four before
   it, kept, would give about 18000. */
static long b_sleep_us;
static void op_b(void* stream, void* user) {
    struct timespec ts;
    (void)stream; (void)user;
    ts.tv_sec = b_sleep_us / 1000000;
    ts.tv_nsec = (b_sleep_us % 1000000) * 1000L;
    nanosleep(&ts, NULL);
}

static void test_profile_add(void) {
    static const long sleeps[4] = { 5000, 5000, 5000, 45000 };
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_op_desc d = {0};
    double before, mean, st[5], en[5], hand, hand_mk;
    cc_result r;
    int k;
    memset(&be, 0, sizeof be);
    cc_context_create(NULL, &ctx);
    r = cc_graph_create(ctx, NULL, &g);
    d.name = "B"; d.duration_us = 77; d.fn = op_b;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, NULL);
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create_ctx(ctx, &be);
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    CHECK_RES(ctx, r, CC_OK, "a one-op plan on the CPU backend");
    if (r != CC_OK) goto done;
    {
        cc_profile_result none;
        CHECK_RES(ctx, cc_exec_query_profile(x, &none), CC_ERR_INVALID_ARG, "no makespans before a profile of steps");
    }
    CHECK_RES(ctx, cc_exec_profile_loop_step(x), CC_ERR_INVALID_ARG, "cc_exec_profile_loop_step before any step is refused");
    CHECK(strstr(cc_last_error(ctx), "no step") != NULL, "and says why: %s", cc_last_error(ctx));
    CHECK_RES(ctx, cc_exec_profile_loop_apply(x, NULL), CC_ERR_INVALID_ARG, "cc_exec_profile_loop_apply with no step added is refused");
    CHECK(strstr(cc_last_error(ctx), "no step added") != NULL, "and says why: %s", cc_last_error(ctx));
    before = cc_op_duration_us(g, cc_graph_op(g, 0));
    CHECK(before == 77, "and changes nothing (B keeps its 77 us: %.0f)", before);
    for (k = 0; k < 4 && r == CC_OK; k++) {
        b_sleep_us = sleeps[k];   /* the caller's work between steps */
        if ((r = cc_exec_step(x)) == CC_OK) r = cc_exec_timeline(x, &st[k], &en[k]);
        if (r == CC_OK) r = cc_exec_profile_loop_step(x);
    }
    CHECK_RES(ctx, r, CC_OK, "four steps, each added");
    CHECK_RES(ctx, cc_exec_profile_loop_step(x), CC_ERR_INVALID_ARG, "adding the last step again is refused");
    if (r == CC_OK) r = cc_exec_profile_loop_apply(x, NULL);
    CHECK_RES(ctx, r, CC_OK, "applying the four");
    if (r != CC_OK) goto done;
    for (k = 0, hand = 0, hand_mk = 0; k < 4; k++) { hand += (en[k] - st[k]) / 4; hand_mk += en[k] / 4; }
    mean = cc_op_duration_us(g, cc_graph_op(g, 0));
    CHECK(fabs(mean - hand) < 1 && fabs(mean - (4 * hand + en[3] - st[3]) / 5) > 1000 && fabs(mean - (en[3] - st[3])) > 1000,
          "B's duration is the mean of the four steps, %.1f us by hand (%.1f; the last step alone %.0f, the last added "
          "twice %.0f)", hand, mean, en[3] - st[3], (4 * hand + en[3] - st[3]) / 5);
    {
        cc_profile_result sp;
        double srt[4], med = -1, avg = -1;
        int a, b;
        memcpy(srt, en, sizeof srt);
        for (a = 1; a < 4; a++)
            for (b = a; b > 0 && srt[b - 1] > srt[b]; b--) { double t = srt[b]; srt[b] = srt[b - 1]; srt[b - 1] = t; }
        CHECK_RES(ctx, cc_exec_query_profile(x, &sp), CC_OK, "the steps' makespans after the apply");
        med = sp.makespan_median_us;
        avg = sp.makespan_mean_us;
        CHECK(sp.steps == 4 && sp.exposed_median_us == 0, "of 4 steps, none with a collective exposed (%d, %.0f us)", sp.steps,
              sp.exposed_median_us);
        CHECK(med >= srt[1] - 1 && med <= srt[2] + 1, "their median: between the middle two of the steps' %.0f, %.0f, %.0f and "
              "%.0f us (%.1f)", srt[0], srt[1], srt[2], srt[3], med);
        CHECK(fabs(avg - hand_mk) < 1, "their mean: %.1f us by hand (%.1f)", hand_mk, avg);
    }
    CHECK_RES(ctx, cc_exec_profile_loop_apply(x, NULL), CC_ERR_INVALID_ARG, "after applying the profile starts afresh");
    CHECK(cc_op_duration_us(g, cc_graph_op(g, 0)) == mean, "and the refused apply leaves B as it was");
    b_sleep_us = 30000;
    if (r == CC_OK) r = cc_exec_step(x);
    if (r == CC_OK) r = cc_exec_timeline(x, &st[4], &en[4]);
    if (r == CC_OK) r = cc_exec_profile_loop_step(x);
    if (r == CC_OK) r = cc_exec_profile_loop_apply(x, NULL);
    CHECK_RES(ctx, r, CC_OK, "one more step, added and applied");
    if (r != CC_OK) goto done;
    CHECK(fabs(cc_op_duration_us(g, cc_graph_op(g, 0)) - (en[4] - st[4])) < 1 &&
              fabs(cc_op_duration_us(g, cc_graph_op(g, 0)) - (4 * hand + en[4] - st[4]) / 5) > 1000,
          "B is that step's %.1f us alone (%.1f; %.0f with the earlier four kept): they were dropped", en[4] - st[4],
          cc_op_duration_us(g, cc_graph_op(g, 0)), (4 * hand + en[4] - st[4]) / 5);
done:
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* The steps' makespans against the makespan of their mean durations. Op
   P (compute stream) and op Q (communication stream) run side by side,
   each sleeping what the caller set: in one step P 5000 us and Q 25000
   us, in the next the other way round. Each step takes about 25000 us,
   and the median and the mean of the steps' makespans are those of the
   steps' timelines as measured, by hand (a loaded machine overruns sleeps
   by milliseconds); the mean durations are about 15000 us each, and a
   step simulated from them ends at least at the longer of them and below
   every step. */
static long p_sleep_us, q_sleep_us;
static void sleep_for(long us) {
    struct timespec ts;
    ts.tv_sec = us / 1000000;
    ts.tv_nsec = (us % 1000000) * 1000L;
    nanosleep(&ts, NULL);
}
static void op_p(void* stream, void* user) { (void)stream; (void)user; sleep_for(p_sleep_us); }
static void op_q(void* stream, void* user) { (void)stream; (void)user; sleep_for(q_sleep_us); }

static void test_profile_makespan(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_op_desc d = {0};
    cc_op order[2];
    double med = 0, avg = 0, of_means = 0, mk[4] = { 0, 0, 0, 0 }, hand_mean = 0, mean_p = 0, mean_q = 0;
    cc_profile_result sp;
    cc_result r;
    int k;
    memset(&be, 0, sizeof be);
    memset(&sp, 0, sizeof sp);
    cc_context_create(NULL, &ctx);
    r = cc_graph_create(ctx, NULL, &g);
    d.name = "P"; d.duration_us = 1; d.fn = op_p;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, &order[0]);
    d.name = "Q"; d.stream = CC_STREAM_COMM; d.fn = op_q;
    if (r == CC_OK) r = cc_graph_add_op(g, &d, &order[1]);
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create_ctx(ctx, &be);
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    for (k = 0; k < 4 && r == CC_OK; k++) {
        double s2[2], e2[2];
        p_sleep_us = k % 2 ? 25000 : 5000;
        q_sleep_us = k % 2 ? 5000 : 25000;
        if ((r = cc_exec_step(x)) == CC_OK) r = cc_exec_timeline(x, s2, e2);
        if (r == CC_OK) r = cc_exec_profile_loop_step(x);
        mk[k] = e2[0] > e2[1] ? e2[0] : e2[1];
        hand_mean += mk[k] / 4;
        mean_p += (e2[0] - s2[0]) / 4;
        mean_q += (e2[1] - s2[1]) / 4;
    }
    if (r == CC_OK) r = cc_exec_profile_loop_apply(x, NULL);
    if (r == CC_OK) r = cc_exec_query_profile(x, &sp);
    med = sp.makespan_median_us;
    avg = sp.makespan_mean_us;
    if (r == CC_OK) r = cc_simulate(ctx, g, order, 2, NULL, &of_means);
    CHECK_RES(ctx, r, CC_OK, "four steps of two ops side by side, profiled and simulated");
    {
        int a, b;
        for (a = 1; a < 4; a++)
            for (b = a; b > 0 && mk[b - 1] > mk[b]; b--) { double t = mk[b]; mk[b] = mk[b - 1]; mk[b - 1] = t; }
    }
    CHECK(med >= mk[1] - 1 && med <= mk[2] + 1 && fabs(avg - hand_mean) < 1,
          "every step takes about 25000 us (%.0f, %.0f, %.0f, %.0f as measured): the median of the steps simulated one by one "
          "(%.1f) lies between the middle two, their mean (%.1f) is theirs, %.1f by hand", mk[0], mk[1], mk[2], mk[3], med, avg,
          hand_mean);
    CHECK(of_means >= (mean_p > mean_q ? mean_p : mean_q) - 1 && of_means < mk[0],
          "the step from the mean durations (%.1f and %.1f us) ends at %.1f: at least the longer, below every step", mean_p,
          mean_q, of_means);
    {
        /* one step alone: its simulation from its own op times and gaps
           ends where its timeline measured (within rounding to ticks) */
        double st[2], en[2], measured;
        p_sleep_us = 2000;
        q_sleep_us = 700;
        if (r == CC_OK) r = cc_exec_step(x);
        if (r == CC_OK) r = cc_exec_timeline(x, st, en);
        if (r == CC_OK) r = cc_exec_profile_loop_step(x);
        if (r == CC_OK) r = cc_exec_profile_loop_apply(x, NULL);
        if (r == CC_OK) r = cc_exec_query_profile(x, &sp);
        measured = en[0] > en[1] ? en[0] : en[1];
        CHECK_RES(ctx, r, CC_OK, "one more step, profiled alone");
        CHECK(fabs(sp.makespan_median_us - measured) < 0.01, "the step simulated from its own times ends where it was measured "
              "to (%.3f us against %.3f us)", sp.makespan_median_us, measured);
        CHECK(sp.exposed_median_us == 0, "no collective, no exposed communication (%.3f us)", sp.exposed_median_us);
    }
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* cc_world_desc.thread_start: called on each rank's thread (stream -1) and
   on each stream worker of a CPU backend made for the rank (its stream
   index), with the user pointer. Two ranks, each with a plan of two
   streams: by hand, (rank, -1), (rank, 0) and (rank, 1) once each for
   both ranks, six calls. */
typedef struct start_log { pthread_mutex_t mu; int calls[2][3]; int other; } start_log;
static void on_thread_start(int rank, int stream, void* user) {
    start_log* L = (start_log*)user;
    pthread_mutex_lock(&L->mu);
    if (rank >= 0 && rank < 2 && stream >= -1 && stream < 2) L->calls[rank][stream + 1]++;
    else L->other++;
    pthread_mutex_unlock(&L->mu);
}
static float start_buf[2][8];
static cc_result start_rank(cc_rank* rank, void* user) {
    two_ops t;
    rec r0;
    cc_result r;
    (void)user;
    memset(&r0, 0, sizeof r0);
    r = two_ops_make(rank, &r0, start_buf[cc_rank_index(rank)], 8, 1, &t);
    if (r == CC_OK) r = cc_exec_step(t.x);   /* both workers have run an op: they have started */
    two_ops_free(&t);
    return r;
}
static void test_thread_start(void) {
    cc_world_desc wd = {0};
    char err[512];
    cc_context* ctx = NULL;
    start_log L;
    cc_result rc;
    int i, j, once = 1;
    memset(&L, 0, sizeof L);
    pthread_mutex_init(&L.mu, NULL);
    wd.n_ranks = 2;
    wd.thread_start = on_thread_start;
    wd.thread_start_user = &L;
    cc_context_create(NULL, &ctx);
    rc = run_world(ctx, &wd, start_rank, NULL, err, sizeof err);
    CHECK_RES(ctx, rc, CC_OK, "a step of two streams on two ranks with a thread_start hook (%s)", err);
    for (i = 0; i < 2; i++)
        for (j = 0; j < 3; j++) if (L.calls[i][j] != 1) once = 0;
    CHECK(once && L.other == 0, "called once on each rank's thread and once on each of its two stream workers, nothing else "
          "(rank 0: %d %d %d, rank 1: %d %d %d, other %d)", L.calls[0][0], L.calls[0][1], L.calls[0][2], L.calls[1][0],
          L.calls[1][1], L.calls[1][2], L.other);
    cc_context_destroy(ctx);
    pthread_mutex_destroy(&L.mu);
}

/* cc_exec_profile_ops measures the start-up of every communicator of the
   plan, however many: 20 here, each with one all-reduce, on two ranks. */
#define N_PROFILE_COMMS 20
typedef struct many_comms_arg { int n_set[2]; int agreed[2]; } many_comms_arg;
static cc_result many_comms_rank(cc_rank* rank, void* arg) {
    many_comms_arg* A = (many_comms_arg*)arg;
    cc_context* ctx = cc_rank_context(rank);
    cc_comm* world = cc_rank_world_comm(rank);
    cc_comm* comms[N_PROFILE_COMMS];
    cc_collective co[N_PROFILE_COMMS];
    float buf[N_PROFILE_COMMS];
    int me = cc_rank_index(rank), i;
    cc_graph* g = NULL;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_result r;
    memset(&be, 0, sizeof be);
    memset(buf, 0, sizeof buf);
    for (i = 0; i < N_PROFILE_COMMS; i++)
        if ((r = cc_comm_split(world, 0, me, &comms[i])) != CC_OK) return r;
    if ((r = cc_graph_create(ctx, NULL, &g)) != CC_OK) return r;
    for (i = 0; i < N_PROFILE_COMMS && r == CC_OK; i++) {
        cc_op_desc d = {0};
        memset(&co[i], 0, sizeof co[i]);
        co[i].kind = CC_COLL_ALL_REDUCE; co[i].dtype = CC_DTYPE_FLOAT32; co[i].reduce = CC_REDUCE_SUM; co[i].n_elems = 1;
        co[i].comm = comms[i]; co[i].send_buf = &buf[i]; co[i].recv_buf = &buf[i];
        d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &co[i];
        r = cc_graph_add_op(g, &d, NULL);
    }
    if (r == CC_OK) r = cc_plan_create(ctx, g, NULL, &pl);
    if (r == CC_OK) r = cc_cpu_backend_create(rank, &be);
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK) r = cc_exec_agree(x, world);
    (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
    if (r == CC_OK) r = cc_exec_profile_ops(x, 1, world);
    A->agreed[me] = r == CC_OK;
    for (i = 0; i < N_PROFILE_COMMS && r == CC_OK; i++)
        if (cc_graph_coll_startup(g, comms[i]) >= 0) A->n_set[me]++;
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return r;
}

static void test_profile_many_comms(void) {
    many_comms_arg A;
    cc_result rc;
    char err[512];
    memset(&A, 0, sizeof A);
    tu_run_world(2, many_comms_rank, &A, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "the world ran (%s)", err);
    CHECK(A.agreed[0] && A.agreed[1], "both ranks profiled their plan of %d communicators", N_PROFILE_COMMS);
    CHECK_INT(A.n_set[0], N_PROFILE_COMMS, "rank 0: every communicator has its start-up measured");
    CHECK_INT(A.n_set[1], N_PROFILE_COMMS, "rank 1: every communicator has its start-up measured");
}

int main(void) {
    TH_RUN(test_profiled_costs);
    TH_RUN(test_profile_steps);
    TH_RUN(test_profile_steps_agree);
    TH_RUN(test_profile_add);
    TH_RUN(test_profile_makespan);
    TH_RUN(test_thread_start);
    TH_RUN(test_same_numbers);
    TH_RUN(test_plan_mismatch);
    TH_RUN(test_trace_files);
    TH_RUN(test_order);
    TH_RUN(test_waits);
    TH_RUN(test_hash);
    TH_RUN(test_agree_cap);
    TH_RUN(test_backend_failure);
    TH_RUN(test_through_backend);
    TH_RUN(test_profile_many_comms);
    return th_done();
}
