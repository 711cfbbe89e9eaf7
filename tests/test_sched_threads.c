/* tests/test_sched_threads.c - AUTO's restarts on several threads
   (cc_sched_desc.threads): the schedule of a solve on one thread, start for
   start, with the same counts, on 2 and 4 threads; valid by the test's own
   checker and by cc_schedule_check; a refused allocation on any thread
   gives out of memory or that same schedule, with nothing leaked; bad
   thread counts are refused by name. Not in THREAD_FREE: make tsan runs it. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_sched_desc restarts_desc(int threads, uint64_t seed) {
    cc_sched_desc d = tu_sched_desc();
    d.method = CC_SCHED_AUTO;
    d.tuning.budget_schedules = 1000;   /* restarts as long as the main line (evolution, branch and bound): */
    d.tuning.bnb_nodes = 500;           /* the threads take restarts side by side */
    d.tuning.restarts = 8;
    d.seed = seed;
    d.threads = threads;
    return d;
}

/* Six random graphs of 30-50 ops on 3-4 cumulative resources: one thread, then
   2 and 4. */
static void test_same_on_any_threads(void) {
    tu_rng rng = {4242};
    tu_gen gen = {30, 50, 3, 4, 0, 6, 9, 1.0, 0.12, 0.0};
    int trial, n_trials = 6, n_restarted = 0, n_bad_same = 0, n_bad_valid = 0, n_fail = 0;
    cc_context* ctx = NULL;
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "context")) return;
    for (trial = 0; trial < n_trials; trial++) {
        tu_inst* in = tu_random_inst(&rng, &gen);
        cc_graph* g = NULL;
        cc_schedule s[3];
        cc_sched_stats st[3];
        static const int th[3] = {1, 2, 4};
        int v;
        memset(s, 0, sizeof s);
        memset(st, 0, sizeof st);
        if (tu_build_graph(ctx, in, &g) != CC_OK) { n_fail++; tu_inst_free(in); continue; }
        for (v = 0; v < 3; v++) {
            cc_sched_desc d = restarts_desc(th[v], (uint64_t)trial + 1);
            char why[300], msg[300];
            double mk = -1, mc = -1;
            if (cc_sched_solve_stats(ctx, g, &d, &s[v], &st[v]) != CC_OK) {
                if (n_fail++ < 3) NOTE("trial %d, %d threads: %s", trial, th[v], cc_last_error(ctx));
                continue;
            }
            if (!tu_check(in, s[v].start_us, &mk, msg, sizeof msg) || mk != s[v].makespan_us ||
                cc_schedule_check(ctx, g, s[v].start_us, &mc) != CC_OK || mc != mk) {
                if (n_bad_valid++ < 3) NOTE("trial %d, %d threads: invalid (%s), makespan %g, own %g, checker %g", trial, th[v], msg,
                                            s[v].makespan_us, mk, mc);
            }
            if (v > 0 && s[0].n_ops == in->n && !tu_same_schedule(&s[0], &st[0], &s[v], &st[v], why, sizeof why))
                if (n_bad_same++ < 3) NOTE("trial %d: 1 thread vs %d: %s", trial, th[v], why);
        }
        /* the restarts ran: more schedules than the first evolution's budget */
        n_restarted += st[0].n_schedules > 2 * 1000;
        for (v = 0; v < 3; v++) cc_schedule_release(ctx, &s[v]);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d of %d graphs ran restarts", n_restarted, n_trials);
    CHECK_INT(n_fail, 0, "every solve on 1, 2 and 4 threads returns CC_OK");
    CHECK_INT(n_bad_valid, 0, "every schedule valid by the test's checker and by cc_schedule_check");
    CHECK_INT(n_bad_same, 0, "2 and 4 threads give one thread's schedule, bound and counts");
    CHECK(n_restarted >= n_trials / 2, "the restarts ran on most graphs (%d of %d)", n_restarted, n_trials);
    cc_context_destroy(ctx);
}

/* A tu_alloc behind a lock: the restarts allocate on several threads. */
typedef struct locked_alloc {
    pthread_mutex_t mu;
    tu_alloc a;
    cc_allocator inner;
} locked_alloc;

static void* la_alloc(size_t n, void* ud) {
    locked_alloc* l = (locked_alloc*)ud;
    void* p;
    pthread_mutex_lock(&l->mu);
    p = l->inner.alloc_fn(n, l->inner.user_data);
    pthread_mutex_unlock(&l->mu);
    return p;
}

static void* la_realloc(void* q, size_t n, void* ud) {
    locked_alloc* l = (locked_alloc*)ud;
    void* p;
    pthread_mutex_lock(&l->mu);
    p = l->inner.realloc_fn(q, n, l->inner.user_data);
    pthread_mutex_unlock(&l->mu);
    return p;
}

static void la_free(void* q, void* ud) {
    locked_alloc* l = (locked_alloc*)ud;
    pthread_mutex_lock(&l->mu);
    l->inner.free_fn(q, l->inner.user_data);
    pthread_mutex_unlock(&l->mu);
}

/* Allocations of a solve on 2 threads refused one at a time, the first 20
   and then every 97th (which one the k-th is depends on the threads'
   timing): out of memory or the schedule of the solve on one thread
   without refusals, nothing leaked. */
static void test_refusals_on_threads(void) {
    tu_rng rng = {99};
    tu_gen gen = {36, 36, 3, 3, 0, 6, 9, 1.0, 0.12, 0.0};
    tu_inst* in = NULL;
    cc_schedule ref;
    cc_sched_stats ref_st;
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    long k, n_allocs = 0, n_tried = 0;
    int bad = 0, n_oom = 0, n_same = 0, tries;
    memset(&ref, 0, sizeof ref);
    memset(&ref_st, 0, sizeof ref_st);
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK, "setup")) return;
    /* the first of these graphs where the restarts run */
    for (tries = 0; tries < 20; tries++) {
        cc_sched_desc d = restarts_desc(1, 5);
        cc_schedule_release(ctx, &ref);
        cc_graph_destroy(g); g = NULL;
        tu_inst_free(in);
        in = tu_random_inst(&rng, &gen);
        if (tu_build_graph(ctx, in, &g) != CC_OK || cc_sched_solve_stats(ctx, g, &d, &ref, &ref_st) != CC_OK) {
            CHECK(0, "build and solve the reference: %s", cc_last_error(ctx));
            goto out;
        }
        if (ref_st.n_schedules > 2 * d.tuning.budget_schedules && !ref.proven_optimal) break;
    }
    if (!CHECK(tries < 20, "a graph of 36 ops where the restarts run (%d tried)", tries)) goto out;
    for (k = 0; k <= n_allocs + 1; k += (k < 20 ? 1 : 97)) {
        locked_alloc l;
        cc_context_desc cd = {0};
        cc_context* c2 = NULL;
        cc_graph* g2 = NULL;
        cc_schedule s;
        cc_sched_stats s_st;
        cc_sched_desc d = restarts_desc(2, 5);
        cc_result rc;
        memset(&l, 0, sizeof l);
        memset(&s, 0, sizeof s);
        pthread_mutex_init(&l.mu, NULL);
        l.a.fail_at = k;
        l.inner = tu_allocator(&l.a);
        cd.allocator.alloc_fn = la_alloc; cd.allocator.realloc_fn = la_realloc; cd.allocator.free_fn = la_free;
        cd.allocator.user_data = &l;
        if (cc_context_create(&cd, &c2) != CC_OK) { pthread_mutex_destroy(&l.mu); continue; }
        rc = tu_build_graph(c2, in, &g2);
        if (rc == CC_OK) rc = cc_sched_solve_stats(c2, g2, &d, &s, &s_st);
        n_tried++;
        if (k == 0) {
            n_allocs = l.a.n_calls;
            if (!CHECK(rc == CC_OK, "no refusal: solves (%s)", cc_last_error(c2))) k = n_allocs + 2;
        }
        if (rc == CC_ERR_OUT_OF_MEMORY) n_oom++;
        else if (rc != CC_OK) { if (bad++ < 3) NOTE("refusal %ld: %s: %s", k, tu_res_name(rc), cc_last_error(c2)); }
        else {
            char why[300];
            if (!tu_same_schedule(&ref, &ref_st, &s, &s_st, why, sizeof why)) { if (bad++ < 3) NOTE("refusal %ld of %ld: %s", k, n_allocs, why); }
            else n_same++;
        }
        cc_schedule_release(c2, &s);
        cc_graph_destroy(g2);
        cc_context_destroy(c2);
        if (l.a.live || l.a.bad_frees) if (bad++ < 3) NOTE("refusal %ld: %ld blocks live, %ld bad frees", k, l.a.live, l.a.bad_frees);
        pthread_mutex_destroy(&l.mu);
    }
    CHECK_INT(bad, 0, "%ld of the %ld allocations of a solve on 2 threads refused: out of memory or the one-thread schedule, "
              "nothing leaked", n_tried - 1, n_allocs);
    CHECK(n_oom > 0 && n_same > 0, "refusals reach the caller as out of memory (%d), and the solve without one succeeds (%d)",
          n_oom, n_same);
out:
    cc_schedule_release(ctx, &ref);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    tu_inst_free(in);
}

/* Thread counts out of range, and too many restarts, refused by name. */
static void test_bad_threads(void) {
    tu_rng rng = {7};
    tu_gen gen = {12, 12, 2, 2, 0, 3, 5, 1.0, 0.2, 0.0};
    tu_inst* in = tu_random_inst(&rng, &gen);
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    static const int bad_threads[3] = {-1, 257, 1000000};
    int i;
    if (!CHECK(cc_context_create(NULL, &ctx) == CC_OK && tu_build_graph(ctx, in, &g) == CC_OK, "setup")) goto out;
    for (i = 0; i < 3; i++) {
        cc_sched_desc d = restarts_desc(bad_threads[i], 1);
        cc_schedule s;
        cc_result rc;
        memset(&s, 0, sizeof s);
        rc = cc_sched_solve(ctx, g, &d, &s);
        CHECK(rc == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "threads") && s.start_us == NULL,
              "threads %d: refused naming threads (%s: %s), no schedule", bad_threads[i], tu_res_name(rc), cc_last_error(ctx));
        cc_schedule_release(ctx, &s);
    }
    {
        cc_sched_desc d = restarts_desc(2, 1);
        cc_schedule s;
        cc_result rc;
        memset(&s, 0, sizeof s);
        d.tuning.restarts = 100001;
        rc = cc_sched_solve(ctx, g, &d, &s);
        CHECK(rc == CC_ERR_INVALID_ARG && strstr(cc_last_error(ctx), "restarts"), "restarts 100001: refused naming restarts (%s: %s)",
              tu_res_name(rc), cc_last_error(ctx));
        cc_schedule_release(ctx, &s);
    }
    {
        cc_sched_desc d = tu_sched_desc(), q;
        q = cc_sched_query_defaults(&d, 60);
        CHECK(q.threads == 1, "threads defaults to 1 (%d)", q.threads);
    }
out:
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    tu_inst_free(in);
}

int main(void) {
    TH_RUN(test_same_on_any_threads);
    TH_RUN(test_refusals_on_threads);
    TH_RUN(test_bad_threads);
    return th_done();
}
