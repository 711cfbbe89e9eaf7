/* tests/test_alloc_exec.c - plan and executor creation under an allocator
   that refuses the k-th request, for every k the two calls make: each
   refusal gives CC_ERR_OUT_OF_MEMORY, leaves nothing allocated, and the same
   calls then succeed on the same context and the executor runs. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

/* tu_alloc behind a lock: the stream threads allocate too. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static cc_allocator inner;
static void* l_alloc(size_t n, void* u) { void* p; pthread_mutex_lock(&mu); p = inner.alloc_fn(n, u); pthread_mutex_unlock(&mu); return p; }
static void* l_realloc(void* q, size_t n, void* u) { void* p; pthread_mutex_lock(&mu); p = inner.realloc_fn(q, n, u); pthread_mutex_unlock(&mu); return p; }
static void l_free(void* q, void* u) { pthread_mutex_lock(&mu); inner.free_fn(q, u); pthread_mutex_unlock(&mu); }

static int ran;
static void kern(void* stream, void* user) { (void)stream; (void)user; ran++; }

/* Builds A (s0) -> B (s1), A -> C (s1); returns CC_OK or the first error. */
static cc_result build(cc_context* ctx, cc_graph** g) {
    cc_op a, b, c, dep[1];
    cc_op_desc d = {0};
    cc_result r = cc_graph_create(ctx, NULL, g);
    if (r != CC_OK) return r;
    d.name = "A"; d.stream = 0; d.fn = kern;
    if ((r = cc_graph_add_op(*g, &d, &a)) != CC_OK) return r;
    dep[0] = a; d.deps = dep; d.n_deps = 1;
    d.name = "B"; d.stream = 1;
    if ((r = cc_graph_add_op(*g, &d, &b)) != CC_OK) return r;
    d.name = "C";
    return cc_graph_add_op(*g, &d, &c);
}

/* Plan, CPU backend, executor and (run) one run of it. */
static cc_result plan_exec(cc_context* ctx, cc_graph* g, int run) {
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    int have_be;
    cc_result r = cc_plan_create(ctx, g, NULL, &pl);
    if (r != CC_OK) return r;
    r = cc_cpu_backend_create_ctx(ctx, &be);
    have_be = r == CC_OK;
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK && run) {
        r = cc_exec_launch(x);
        if (r == CC_OK) r = cc_exec_wait(x);
    }
    cc_exec_destroy(x);
    if (have_be) cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    return r;
}

static void test_sweep(void) {
    tu_alloc a;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    long n, k, n_bad = 0, n_oom = 0, base;
    memset(&a, 0, sizeof a);
    inner = tu_allocator(&a);
    cd.allocator = inner;
    cd.allocator.alloc_fn = l_alloc;
    cd.allocator.realloc_fn = l_realloc;
    cd.allocator.free_fn = l_free;
    if (!CHECK(cc_context_create(&cd, &ctx) == CC_OK && build(ctx, &g) == CC_OK, "a context and a three-op graph")) return;
    /* the first run makes requests the context keeps (its own scratch) */
    CHECK_RES(ctx, plan_exec(ctx, g, 1), CC_OK, "plan, executor and a run without refusals");
    base = a.n_calls;
    CHECK_RES(ctx, plan_exec(ctx, g, 0), CC_OK, "and again");
    n = a.n_calls - base;
    CHECK(n > 0, "cc_plan_create, cc_cpu_backend_create_ctx and cc_exec_create make %ld allocation requests", n);
    for (k = 1; k <= n; k++) {
        cc_result r;
        long live = a.live;
        a.fail_at = a.n_calls + k;
        a.fail_after = 0;
        r = plan_exec(ctx, g, 0);
        a.fail_at = 0;
        if (r == CC_ERR_OUT_OF_MEMORY) n_oom++;
        else if (r != CC_OK && n_bad++ < 5) NOTE("k=%ld: %s: %s", k, tu_res_name(r), cc_last_error(ctx));
        if (a.live != live && n_bad++ < 5) NOTE("k=%ld: %ld blocks left allocated", k, a.live - live);
        ran = 0;
        if (plan_exec(ctx, g, 1) != CC_OK || ran != 3) {
            if (n_bad++ < 5) NOTE("k=%ld: the calls fail or run %d of 3 ops afterwards: %s", k, ran, cc_last_error(ctx));
        }
    }
    NOTE("allocation-failure points swept (cc_plan_create + cc_cpu_backend_create_ctx + cc_exec_create): %ld", n);
    CHECK_INT(n_bad, 0, "for k = 1..%ld: CC_ERR_OUT_OF_MEMORY or CC_OK, nothing left allocated, a plan and executor work afterwards", n);
    CHECK_INT(n_oom, n, "every refusal reported as CC_ERR_OUT_OF_MEMORY");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    CHECK_INT(a.live, 0, "every block freed");
}

int main(void) {
    TH_RUN(test_sweep);
    return th_done();
}
