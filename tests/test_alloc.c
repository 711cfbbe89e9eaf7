/* tests/test_alloc.c - an allocator that refuses the k-th request, for every
   k a small scenario makes: every call returns CC_OK or CC_ERR_OUT_OF_MEMORY,
   nothing crashes (each k runs in a child process), nothing leaks, and a call
   retried after a single refusal gives the same end result as a run without
   refusals. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util.h"

static char* sm_text;        /* a small .sm text */
static size_t sm_len;
static char sm_out[600];     /* where the scenario writes */

typedef struct outcome {
    int n_ops;
    double makespan_auto, makespan_oe, sim_makespan, makespan_mem;
    uint64_t peak_mem;
    int n_psplib_ops;
    char error[400];         /* first violation, "" if none */
} outcome;

/* mode 0: single refusal, retry once; mode 1: refuse from k on, give up at
   the first refusal. */
static void scenario(tu_alloc* a, int mode, outcome* out) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_graph* pg = NULL;
    cc_graph* back = NULL;
    cc_schedule s1, s2, s3;
    cc_context_desc cd = {0};
    cc_result r;
    cc_buffer buf[2];
    cc_op ops[10];
    int i;
    memset(out, 0, sizeof *out);
    memset(&s1, 0, sizeof s1);
    memset(&s2, 0, sizeof s2);
    memset(&s3, 0, sizeof s3);
    cd.allocator = tu_allocator(a);

/* STEP(call): OK goes on; OOM retries once (mode 0) or stops (mode 1);
   anything else is a violation. */
#define STEP(what, call) do { \
        r = (call); \
        if (r == CC_ERR_OUT_OF_MEMORY && mode == 0) r = (call); \
        if (r == CC_ERR_OUT_OF_MEMORY && mode == 1) goto done; \
        if (r != CC_OK) { \
            snprintf(out->error, sizeof out->error, "%s returned %s: %s", what, tu_res_name(r), ctx ? cc_last_error(ctx) : ""); \
            goto done; \
        } \
    } while (0)

    STEP("cc_context_create", cc_context_create(&cd, &ctx));
    STEP("cc_graph_create", cc_graph_create(ctx, NULL, &g));
    STEP("cc_graph_add_buffer", cc_graph_add_buffer(g, "activations", 4096, &buf[0]));
    STEP("cc_graph_add_buffer", cc_graph_add_buffer(g, "gradients", 4096, &buf[1]));
    for (i = 0; i < 10; i++) {
        cc_op_desc d = {0};
        cc_region rd = {0}, wr = {0};
        char name[32];
        snprintf(name, sizeof name, "%s%d", i % 3 == 2 ? "allreduce" : "layer", i);
        rd.buffer = buf[i % 2]; rd.offset_bytes = (uint64_t)(i % 4) * 512; rd.n_bytes = 1024;
        wr.buffer = buf[(i + 1) % 2]; wr.offset_bytes = (uint64_t)(i % 3) * 512; wr.n_bytes = 512;
        d.name = name;
        d.duration_us = 1 + (i * 7) % 5;
        d.stream = i % 3 == 2 ? CC_STREAM_COMM : CC_STREAM_COMPUTE;
        d.reads = &rd; d.n_reads = 1;
        d.writes = &wr; d.n_writes = 1;
        if (i >= 4) { d.deps = &ops[i - 4]; d.n_deps = 1; }
        STEP("cc_graph_add_op", cc_graph_add_op(g, &d, &ops[i]));
    }
    STEP("cc_graph_add_dep", cc_graph_add_dep(g, ops[1], ops[9]));
    STEP("cc_op_set_duration", cc_op_set_duration(g, ops[3], 2.5));
    STEP("cc_graph_validate", cc_graph_validate(g));
    out->n_ops = cc_graph_n_ops(g);
    {
        cc_sched_desc sd = tu_sched_desc();
        STEP("cc_sched_solve(AUTO)", cc_sched_solve(ctx, g, &sd, &s1));
        out->makespan_auto = s1.makespan_us;
        sd.method = CC_SCHED_ODD_EVEN;
        sd.window_ops = 3;
        STEP("cc_sched_solve(ODD_EVEN)", cc_sched_solve(ctx, g, &sd, &s2));
        out->makespan_oe = s2.makespan_us;
        sd = tu_sched_desc();
        sd.method = CC_SCHED_SAMPLING;
        sd.tuning.budget_schedules = 20;
        STEP("cc_sched_solve(SAMPLING)", cc_sched_solve(ctx, g, &sd, &s3));
    }
    {
        double cp, rb, mk;
        STEP("cc_lower_bounds", cc_lower_bounds(ctx, g, &cp, &rb));
        STEP("cc_schedule_check", cc_schedule_check(ctx, g, s1.start_us, &mk));
        STEP("cc_simulate", cc_simulate(ctx, g, s1.order, s1.n_ops, NULL, &out->sim_makespan));
    }
    {   /* transient buffers under a memory cap: two layers' gathered
           weights and activations, a cap that holds one layer's weights */
        cc_graph* mg = NULL;
        cc_buffer w[3], act[3];
        cc_schedule ms;
        cc_sched_desc sd = tu_sched_desc();
        memset(&ms, 0, sizeof ms);
        r = cc_graph_create(ctx, NULL, &mg);
        if (r == CC_ERR_OUT_OF_MEMORY && mode == 0) r = cc_graph_create(ctx, NULL, &mg);
        if (r != CC_OK) { if (!(r == CC_ERR_OUT_OF_MEMORY && mode == 1)) snprintf(out->error, sizeof out->error, "cc_graph_create"); goto done; }
        for (i = 0; i < 3 && r == CC_OK; i++) {
            cc_op_desc d = {0};
            cc_region rg[2] = {0};
            char nm[3][16];
            snprintf(nm[0], 16, "w%d", i); snprintf(nm[1], 16, "act%d", i);
#define MSTEP(what, call) do { r = (call); if (r == CC_ERR_OUT_OF_MEMORY && mode == 0) r = (call); } while (0)
            MSTEP("transient", cc_graph_add_transient(mg, nm[0], 1000, &w[i]));
            if (r == CC_OK) MSTEP("transient", cc_graph_add_transient(mg, nm[1], 100, &act[i]));
            rg[0].buffer = w[i]; rg[0].offset_bytes = 0; rg[0].n_bytes = 1000; rg[0].split_rows = 0;
            d.name = nm[0]; d.duration_us = 2; d.stream = CC_STREAM_COMM; d.writes = rg; d.n_writes = 1;
            if (r == CC_OK) MSTEP("op", cc_graph_add_op(mg, &d, NULL));
            rg[1] = rg[0]; rg[1].buffer = act[i]; rg[1].n_bytes = 100;
            snprintf(nm[2], 16, "f%d", i);
            d.name = nm[2]; d.stream = CC_STREAM_COMPUTE; d.reads = rg; d.n_reads = 1; d.writes = rg + 1; d.n_writes = 1;
            if (r == CC_OK) MSTEP("op", cc_graph_add_op(mg, &d, NULL));
            d.name = nm[1]; d.reads = rg + 1; d.writes = NULL; d.n_writes = 0;
            if (r == CC_OK) MSTEP("op", cc_graph_add_op(mg, &d, NULL));
#undef MSTEP
        }
        sd.memory_cap_bytes = 1300;
        sd.method = CC_SCHED_SAMPLING;   /* a few schedules: every request of the capped search is refused in turn */
        sd.tuning.budget_schedules = 20;

        if (r == CC_OK) { r = cc_sched_solve(ctx, mg, &sd, &ms); if (r == CC_ERR_OUT_OF_MEMORY && mode == 0) r = cc_sched_solve(ctx, mg, &sd, &ms); }
        if (r == CC_OK) { r = cc_memory_check(ctx, mg, ms.start_us, NULL, 1300, &out->peak_mem, NULL);
                          if (r == CC_ERR_OUT_OF_MEMORY && mode == 0) r = cc_memory_check(ctx, mg, ms.start_us, NULL, 1300, &out->peak_mem, NULL); }
        out->makespan_mem = ms.makespan_us;
        cc_schedule_release(ctx, &ms);
        cc_graph_destroy(mg);
        if (r == CC_ERR_OUT_OF_MEMORY && mode == 1) goto done;
        if (r != CC_OK) { snprintf(out->error, sizeof out->error, "memory-capped solve returned %s: %s", tu_res_name(r), cc_last_error(ctx)); goto done; }
    }
    STEP("cc_psplib_parse", cc_psplib_parse(ctx, sm_text, sm_len, "small.sm", &pg));
    {
        cc_sched_desc sd = tu_sched_desc();
        cc_schedule_release(ctx, &s3);
        sd.method = CC_SCHED_BNB;
        sd.tuning.bnb_nodes = 500;
        STEP("cc_sched_solve(psplib, BNB 500 nodes)", cc_sched_solve(ctx, pg, &sd, &s3));
    }
    STEP("cc_psplib_write", cc_psplib_write(ctx, g, sm_out, 0.5));
    STEP("cc_psplib_read", cc_psplib_read(ctx, sm_out, &back));
    out->n_psplib_ops = cc_graph_n_ops(back);
#undef STEP
done:
    cc_schedule_release(ctx, &s1);
    cc_schedule_release(ctx, &s2);
    cc_schedule_release(ctx, &s3);
    cc_graph_destroy(back);
    cc_graph_destroy(pg);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    if (!out->error[0] && (a->live != 0 || a->bad_frees != 0))
        snprintf(out->error, sizeof out->error, "%ld blocks still live and %ld bad frees after destroying everything", a->live,
                 a->bad_frees);
}

static int same_outcome(const outcome* a, const outcome* b) {
    return a->n_ops == b->n_ops && a->makespan_auto == b->makespan_auto && a->makespan_oe == b->makespan_oe &&
           a->sim_makespan == b->sim_makespan && a->n_psplib_ops == b->n_psplib_ops && a->makespan_mem == b->makespan_mem &&
           a->peak_mem == b->peak_mem;
}

/* Runs the scenario for k = 1..n_total in child processes. */
static void sweep(int mode, long n_total, const outcome* ref) {
    long k;
    int n_bad = 0, n_refused_runs = 0;
    for (k = 1; k <= n_total; k++) {
        int fds[2], status = 0;
        pid_t pid;
        outcome o;
        ssize_t got;
        if (pipe(fds) != 0) { CHECK(0, "pipe"); return; }
        fflush(stdout);
        pid = fork();
        if (pid == 0) {
            tu_alloc a;
            close(fds[0]);
            memset(&a, 0, sizeof a);
            a.fail_at = k;
            a.fail_after = mode;
            scenario(&a, mode, &o);
            if (!o.error[0] && mode == 0 && !same_outcome(&o, ref))
                snprintf(o.error, sizeof o.error,
                         "after retrying the refused call the results differ: ops %d/%d, AUTO %g/%g, ODD_EVEN %g/%g, sim %g/%g, psplib ops %d/%d",
                         o.n_ops, ref->n_ops, o.makespan_auto, ref->makespan_auto, o.makespan_oe, ref->makespan_oe, o.sim_makespan,
                         ref->sim_makespan, o.n_psplib_ops, ref->n_psplib_ops);
            if (a.n_failed == 0 && !o.error[0]) snprintf(o.error, sizeof o.error, "(no request was refused)");
            if (write(fds[1], &o, sizeof o) != (ssize_t)sizeof o) _exit(3);
            _exit(0);
        }
        close(fds[1]);
        memset(&o, 0, sizeof o);
        got = read(fds[0], &o, sizeof o);
        close(fds[0]);
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) {
            if (n_bad++ < 5) NOTE("mode %s, k=%ld: crashed with signal %d", mode ? "refuse-from-k" : "refuse-k", k, WTERMSIG(status));
        } else if (got != (ssize_t)sizeof o) {
            if (n_bad++ < 5) NOTE("k=%ld: the child exited with status %d without reporting", k, WEXITSTATUS(status));
        } else if (o.error[0]) {
            if (n_bad++ < 5) NOTE("mode %s, k=%ld: %s", mode ? "refuse-from-k" : "refuse-k", k, o.error);
        } else {
            n_refused_runs++;
        }
    }
    CHECK_INT(n_bad, 0, "%s for k = 1..%ld: only CC_OK or CC_ERR_OUT_OF_MEMORY, no crash, no leak%s", mode ? "every request from the k-th on refused"
              : "the k-th request refused, the call retried", n_total, mode ? "" : ", same results after the retry");
}

static void test_refusals(void) {
    tu_alloc a;
    outcome ref;
    memset(&a, 0, sizeof a);
    scenario(&a, 0, &ref);
    if (!CHECK(ref.error[0] == 0, "the scenario runs without refusals%s%s", ref.error[0] ? ": " : "", ref.error)) return;
    CHECK(a.n_calls > 0, "the scenario makes %ld allocation requests through the context's allocator", a.n_calls);
    CHECK_INT(a.live, 0, "and frees every block");
    NOTE("reference: %d ops, AUTO %g us, ODD_EVEN %g us, simulated %g us, psplib round trip %d ops", ref.n_ops,
         ref.makespan_auto, ref.makespan_oe, ref.sim_makespan, ref.n_psplib_ops);
    sweep(0, a.n_calls, &ref);
    sweep(1, a.n_calls, &ref);
}

static void test_partial_allocator(void) {
    tu_alloc a;
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    memset(&a, 0, sizeof a);
    cd.allocator = tu_allocator(&a);
    cd.allocator.realloc_fn = NULL;
    CHECK_RES(NULL, cc_context_create(&cd, &ctx), CC_ERR_INVALID_ARG, "an allocator with only two of three functions");
    CHECK(ctx == NULL, "no context then");
    CHECK_RES(NULL, cc_context_create(NULL, NULL), CC_ERR_INVALID_ARG, "cc_context_create with out NULL");
}

int main(void) {
    char path[600];
    snprintf(path, sizeof path, "%s/psplib/samples/j301_1.sm", tu_data_dir());
    sm_text = tu_read_file(path, &sm_len);
    if (!sm_text) {   /* any small instance does: a chain of three jobs */
        tu_inst* in = tu_inst_new(5, 2, 0);
        int i;
        in->cap[0] = 2; in->cap[1] = 3;
        for (i = 1; i < 4; i++) { in->dur[i] = i; in->dem[i * 2] = 1; in->dem[i * 2 + 1] = i; }
        for (i = 0; i < 4; i++) in->adj[i * 5 + i + 1] = 1;
        sm_text = tu_sm_format(in);
        sm_len = strlen(sm_text);
        tu_inst_free(in);
    }
    snprintf(sm_out, sizeof sm_out, "%s/alloc_%ld.sm", tu_tmp_dir(), (long)getpid());
    TH_RUN(test_partial_allocator);
    TH_RUN(test_refusals);
    free(sm_text);
    remove(sm_out);
    return th_done();
}
