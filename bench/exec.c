/* exec - the executor on the CPU backend.

   build/bench_exec overhead          executor cost per op, against a plain loop
   build/bench_exec agree [RANKS]     measured vs predicted step time, program
                                      order and scheduled, at a few link speeds

   overhead: a step of N empty ops on S streams (no dependencies between
   streams, or a chain across them), run many times; the median step time
   minus the median time of a plain loop calling the same functions, divided
   by the ops per stream, is the executor's overhead per op per stream.

   agree: a data-parallel step (examples/steps/synthetic_step.h's shape, 12 layers) on
   RANKS ranks (default 2) with an emulated link; compute ops sleep for their
   nominal duration, collectives move real data and take the link model's
   time. Every op is profiled (median of 5), the ranks agree on durations,
   the scheduler runs on them; then program order and the schedule each
   run 18 steps, the last 15 profiled in place (cc_exec_profile_steps)
   and 15 measured. Reported: the prediction from the ops profiled alone
   (program order: cc_simulate; scheduled: the schedule's makespan), the
   prediction from the order's own steps (cc_exec_query_profile, the
   median), the median measured step, and its ratio to the latter. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}
static int cmp_d(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }
static double median(double* v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_d); return v[n / 2]; }

#define CHECK(call) do { cc_result r_ = (call); if (r_ != CC_OK) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, \
    cc_last_error(cc_rank_context(rank))); return r_; } } while (0)

/* ---- overhead ---------------------------------------------------------- */
static volatile int sink;
static void empty_op(void* stream, void* u) { (void)stream; sink += (int)(size_t)u; }

typedef struct ov_arg { int n_per_stream, streams, chain; double per_op_us, loop_us, step_us; } ov_arg;

static cc_result overhead_rank(cc_rank* rank, void* user) {
    ov_arg* a = (ov_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    cc_graph_desc gd = {0};
    cc_graph* g;
    cc_plan* pl;
    cc_exec* x;
    cc_backend be, bare;
    cc_backend_fns fns;
    double steps[41], loops[41];
    int i, s, n = a->n_per_stream * a->streams;
    cc_op prev;
    prev.id = 0;
    gd.n_streams = a->streams;
    CHECK(cc_graph_create(ctx, &gd, &g));
    for (i = 0; i < n; i++) {
        cc_op_desc d = {0};
        cc_op op;
        d.duration_us = 1;
        d.stream = i % a->streams;
        d.fn = empty_op;
        d.user_data = (void*)(size_t)1;
        if (a->chain && prev.id) { d.deps = &prev; d.n_deps = 1; }
        CHECK(cc_graph_add_op(g, &d, &op));
        prev = op;
    }
    CHECK(cc_plan_create(ctx, g, NULL, &pl));
    CHECK(cc_cpu_backend_create(rank, &be));
    fns = *be.fns;
    fns.timestamp = NULL;   /* measure the bare path */
    bare.fns = &fns;
    bare.self = be.self;
    CHECK(cc_exec_create(ctx, pl, &bare, &x));
    CHECK(cc_exec_step(x));   /* warm up (the queues reach their size) */
    for (s = 0; s < 41; s++) {
        double t0 = now_us(), t1;
        CHECK(cc_exec_step(x));
        t1 = now_us();
        steps[s] = t1 - t0;
        t0 = now_us();
        for (i = 0; i < n; i++) empty_op(NULL, (void*)(size_t)1);
        loops[s] = now_us() - t0;
    }
    a->step_us = median(steps, 41);
    a->loop_us = median(loops, 41);
    a->per_op_us = (a->step_us - a->loop_us) / a->n_per_stream;
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return CC_OK;
}

static int run_overhead(void) {
    static const int layouts[][3] = { { 2000, 1, 0 }, { 2000, 2, 0 }, { 2000, 2, 1 }, { 2000, 3, 0 } };
    size_t k;
    printf("| ops per stream | streams | cross-stream chain | step us (median of 41) | plain loop us | overhead per op per stream us |\n");
    printf("|---|---|---|---|---|---|\n");
    for (k = 0; k < sizeof layouts / sizeof *layouts; k++) {
        cc_world_desc wd = {0};
        cc_world* w;
        cc_context* ctx;
        ov_arg a;
        memset(&a, 0, sizeof a);
        a.n_per_stream = layouts[k][0]; a.streams = layouts[k][1]; a.chain = layouts[k][2];
        wd.n_ranks = 1;
        if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
        if (cc_world_create(ctx, &wd, &w) != CC_OK || cc_world_run(w, overhead_rank, &a) != CC_OK) { fprintf(stderr, "overhead run failed\n"); return 1; }
        cc_world_destroy(w);
        cc_context_destroy(ctx);
        printf("| %d | %d | %s | %.0f | %.1f | %.3f |\n", a.n_per_stream, a.streams, a.chain ? "yes" : "no", a.step_us, a.loop_us,
               a.per_op_us);
    }
    return 0;
}

/* ---- agreement --------------------------------------------------------- */
typedef struct sleeper { double us; } sleeper;
static void sleep_op(void* stream, void* u) {
    sleeper* s = (sleeper*)u;
    double end = now_us() + s->us;
    struct timespec ts;
    (void)stream;
    ts.tv_sec = (time_t)(s->us / 1e6);
    ts.tv_nsec = (long)((s->us - (double)ts.tv_sec * 1e6) * 1000.0);
    nanosleep(&ts, NULL);
    while (now_us() < end) { }
}

typedef struct ag_arg { int layers; double alone[2], pred[2], meas[2]; } ag_arg;

static cc_result agree_rank(cc_rank* rank, void* user) {
    static const double fwd_us[3] = { 300, 450, 300 };
    ag_arg* a = (ag_arg*)user;
    cc_context* ctx = cc_rank_context(rank);
    int L = a->layers, l, j, i, pass, n;
    cc_graph* g;
    cc_backend be;
    cc_schedule sched;
    sleeper* sl = (sleeper*)calloc((size_t)L * 16, sizeof(sleeper));
    float* grads = (float*)calloc((size_t)L * 16384, sizeof(float));
    cc_collective* ar = (cc_collective*)calloc((size_t)L, sizeof(cc_collective));
    cc_op* fw = (cc_op*)calloc((size_t)L * 3, sizeof(cc_op));
    cc_op prev;
    int ns = 0;
    char name[48];
    prev.id = 0;
    CHECK(cc_graph_create(ctx, NULL, &g));
    for (l = 0; l < L; l++)
        for (j = 0; j < 3; j++) {
            cc_op_desc d = {0};
            snprintf(name, sizeof name, "L%d.fwd%d", l, j);
            sl[ns].us = fwd_us[j];
            d.name = name; d.duration_us = fwd_us[j]; d.fn = sleep_op; d.user_data = &sl[ns++];
            if (prev.id) { d.deps = &prev; d.n_deps = 1; }
            CHECK(cc_graph_add_op(g, &d, &fw[l * 3 + j]));
            prev = fw[l * 3 + j];
        }
    for (l = L - 1; l >= 0; l--) {
        cc_op dw[3], up, deps[2], red;
        for (j = 2; j >= 0; j--) {
            cc_op_desc d = {0};
            deps[0] = prev; deps[1] = fw[l * 3 + j];
            snprintf(name, sizeof name, "L%d.dx%d", l, j);
            sl[ns].us = fwd_us[j];
            d.name = name; d.duration_us = fwd_us[j]; d.fn = sleep_op; d.user_data = &sl[ns++]; d.deps = deps; d.n_deps = 2;
            CHECK(cc_graph_add_op(g, &d, &prev));
            snprintf(name, sizeof name, "L%d.dw%d", l, j);
            sl[ns].us = fwd_us[j];
            d.name = name; d.user_data = &sl[ns++];
            CHECK(cc_graph_add_op(g, &d, &dw[j]));
        }
        {
            cc_op_desc d = {0};
            ar[l].kind = CC_COLL_ALL_REDUCE; ar[l].dtype = CC_DTYPE_FLOAT32; ar[l].reduce = CC_REDUCE_SUM;
            ar[l].n_elems = 16384; ar[l].comm = cc_rank_world_comm(rank);
            ar[l].send_buf = grads + (size_t)l * 16384; ar[l].recv_buf = grads + (size_t)l * 16384;
            snprintf(name, sizeof name, "L%d.all_reduce", l);
            d.name = name; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &ar[l]; d.deps = dw; d.n_deps = 3;
            CHECK(cc_graph_add_op(g, &d, &red));
            d = (cc_op_desc){0};
            snprintf(name, sizeof name, "L%d.update", l);
            sl[ns].us = 60;
            d.name = name; d.duration_us = 60; d.fn = sleep_op; d.user_data = &sl[ns++]; d.deps = &red; d.n_deps = 1;
            CHECK(cc_graph_add_op(g, &d, &up));
        }
    }
    n = cc_graph_n_ops(g);
    CHECK(cc_cpu_backend_create(rank, &be));
    memset(&sched, 0, sizeof sched);
    for (pass = 0; pass < 2; pass++) {
        cc_plan* pl;
        cc_exec* x;
        double steps[15];
        double* en = (double*)malloc(sizeof(double) * (size_t)n);
        int s;
        CHECK(cc_plan_create(ctx, g, pass ? sched.order : NULL, &pl));
        CHECK(cc_exec_create(ctx, pl, &be, &x));
        CHECK(cc_exec_agree(x, cc_rank_world_comm(rank)));
        if (pass == 0) {
            cc_sched_desc sd = {0};
            cc_op* prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
            (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
            CHECK(cc_exec_profile_ops(x, 5, cc_rank_world_comm(rank)));
            CHECK(cc_sched_solve(ctx, g, &sd, &sched));
            for (i = 0; i < n; i++) prog[i] = cc_graph_op(g, i);
            CHECK(cc_simulate(ctx, g, prog, n, NULL, &a->alone[0]));
            a->alone[1] = sched.makespan_us;
            free(prog);
        }
        {
            /* the order's own steps profiled where they run: 3 not
               profiled, then 15 (cc_exec_profile_steps), the median of
               them each simulated from its own op times */
            cc_profile_result sp;
            memset(&sp, 0, sizeof sp);
            for (s = 0; s < 3; s++) CHECK(cc_exec_step(x));
            (void)cc_exec_allow_profile_writes(x, 1);   /* its buffers hold nothing to keep */
            CHECK(cc_exec_profile_steps(x, 15, cc_rank_world_comm(rank)));
            CHECK(cc_exec_query_profile(x, &sp));
            a->pred[pass] = sp.makespan_median_us;
        }
        for (s = 0; s < 15; s++) {
            CHECK(cc_exec_step(x));
            CHECK(cc_exec_timeline(x, NULL, en));
            for (i = 0, steps[s] = 0; i < n; i++) if (en[i] > steps[s]) steps[s] = en[i];
        }
        if (cc_rank_index(rank) == 0) a->meas[pass] = median(steps, 15);
        cc_exec_destroy(x);
        cc_plan_destroy(pl);
        free(en);
    }
    cc_backend_destroy(&be);
    cc_schedule_release(ctx, &sched);
    cc_graph_destroy(g);
    free(sl); free(grads); free(ar); free(fw);
    return CC_OK;
}

static int run_agree(int ranks) {
    static const double us_per_kb[] = { 5, 15, 30, 60 };
    size_t k;
    printf("| link us/KiB | all-reduce model us | program predicted (alone) | program predicted | program measured | ratio | "
           "scheduled predicted (alone) | scheduled predicted | scheduled measured | ratio | speed-up predicted | speed-up measured |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (k = 0; k < sizeof us_per_kb / sizeof *us_per_kb; k++) {
        cc_world_desc wd = {0};
        cc_world* w;
        cc_context* ctx;
        cc_link link = { 0 };
        cc_group_shape grp;
        double link_us;
        ag_arg a;
        memset(&a, 0, sizeof a);
        a.layers = 12;
        wd.n_ranks = ranks;
        wd.ranks_per_node = ranks;
        wd.emulate_link = 1;
        link.latency_us = 20;
        link.us_per_byte = us_per_kb[k] / 1024.0;
        wd.intra_node = &link;
        if (cc_context_create(NULL, &ctx) != CC_OK || cc_world_create(ctx, &wd, &w) != CC_OK) return 1;
        if (cc_world_run(w, agree_rank, &a) != CC_OK) { fprintf(stderr, "agree run failed: %s\n", cc_world_error(w)); return 1; }
        cc_world_destroy(w);
        cc_context_destroy(ctx);
        grp.n_ranks = grp.ranks_per_node = ranks;
        if (cc_coll_us(NULL, &link, NULL, 0, CC_COLL_ALL_REDUCE, 16384 * 4, grp, CC_ALGO_FLAT, &link_us) != CC_OK) return 1;
        printf("| %.0f | %.0f | %.0f | %.0f | %.0f | %.3f | %.0f | %.0f | %.0f | %.3f | %.2fx | %.2fx |\n", us_per_kb[k],
               link_us, a.alone[0], a.pred[0], a.meas[0],
               a.meas[0] / a.pred[0], a.alone[1], a.pred[1], a.meas[1], a.meas[1] / a.pred[1], a.pred[0] / a.pred[1],
               a.meas[0] / a.meas[1]);
    }
    return 0;
}

int main(int argc, char** argv) {
    if (argc > 1 && !strcmp(argv[1], "overhead")) return run_overhead();
    if (argc > 1 && !strcmp(argv[1], "agree")) return run_agree(argc > 2 ? atoi(argv[2]) : 2);
    fprintf(stderr, "usage: bench_exec overhead | agree [RANKS]\n");
    return 2;
}
