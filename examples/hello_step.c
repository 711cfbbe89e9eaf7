/* hello_step.c - the smallest whole run: one training step described once,
   scheduled by the library and run on two CPU ranks of the in-process world.

   Each rank computes a weight gradient, averages it over the ranks with an
   all-reduce on the communication stream, and updates its weights; it also
   loads its next batch, which needs neither. The ops only name the buffers
   they read and write: the library derives the dependencies, and the
   scheduler moves the load behind the all-reduce, where program order
   would leave the compute stream waiting for it. Durations are estimates
   in microseconds (a trainer profiles them: cc_exec_profile_ops).

   build/hello_step                                                        */
#define _POSIX_C_SOURCE 200809L    /* the CPU world uses POSIX threads and clocks */
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <stdio.h>

#define N 4096    /* weights per rank */
#define CHECK(call) do { cc_result r_ = (call); if (r_ != CC_OK) return r_; } while (0)

typedef struct model { float x[N], w[N], grad[N], next[N]; } model;

static void backward(void* s, void* u) { model* m = (model*)u; int i; (void)s; for (i = 0; i < N; i++) m->grad[i] = m->x[i] * m->w[i]; }
static void update(void* s, void* u)   { model* m = (model*)u; int i; (void)s; for (i = 0; i < N; i++) m->w[i] -= 0.1f * m->grad[i]; }
static void load(void* s, void* u)     { model* m = (model*)u; int i; (void)s; for (i = 0; i < N; i++) m->next[i] = m->x[(i + 1) % N]; }

/* adds an op that reads region rd and writes region wr (each a whole buffer) */
static cc_result op(cc_graph* g, const char* name, double us, cc_op_fn fn, const cc_collective* coll, void* m,
                    cc_buffer rd, cc_buffer wr) {
    cc_op_desc d = {0};
    cc_region r = {0}, w = {0};
    r.buffer = rd; r.n_bytes = sizeof(float) * N;
    w.buffer = wr; w.n_bytes = sizeof(float) * N;
    d.name = name; d.duration_us = us; d.fn = fn; d.coll = coll; d.user_data = m;
    d.stream = coll ? CC_STREAM_COMM : CC_STREAM_COMPUTE;
    d.reads = &r; d.n_reads = 1; d.writes = &w; d.n_writes = 1;
    return cc_graph_add_op(g, &d, NULL);
}

static cc_result rank_main(cc_rank* rank, void* user) {
    cc_context* ctx = cc_rank_context(rank);
    model* m = (model*)user + cc_rank_index(rank);
    cc_graph_desc gd = {0};    /* zero is the default: two streams, compute and communication */
    cc_sched_desc sd = {0};    /* zero is the default: the scheduler picks its method by size */
    cc_collective ar = {0};
    cc_graph* g; cc_buffer x, w, grad, next; cc_schedule s; cc_backend be; cc_plan* plan; cc_exec* ex;
    int i;
    CHECK(cc_graph_create(ctx, &gd, &g));
    CHECK(cc_graph_add_buffer(g, "x", sizeof m->x, &x));
    CHECK(cc_graph_add_buffer(g, "w", sizeof m->w, &w));
    CHECK(cc_graph_add_buffer(g, "grad", sizeof m->grad, &grad));
    CHECK(cc_graph_add_buffer(g, "next", sizeof m->next, &next));
    ar.kind = CC_COLL_ALL_REDUCE; ar.dtype = CC_DTYPE_FLOAT32; ar.reduce = CC_REDUCE_AVG; ar.n_elems = N;
    ar.send_buf = m->grad; ar.recv_buf = m->grad; ar.comm = cc_rank_world_comm(rank);
    CHECK(op(g, "backward", 100, backward, NULL, m, w, grad));         /* program order: as added */
    CHECK(op(g, "all_reduce", 300, NULL, &ar, m, grad, grad));
    CHECK(op(g, "update", 50, update, NULL, m, grad, w));
    CHECK(op(g, "load_next", 200, load, NULL, m, x, next));
    CHECK(cc_sched_solve(ctx, g, &sd, &s));                            /* schedule the step */
    CHECK(cc_cpu_backend_create(rank, &be));                           /* run it on this rank's CPU streams */
    CHECK(cc_plan_create(ctx, g, s.order, &plan));
    CHECK(cc_exec_create(ctx, plan, &be, &ex));
    CHECK(cc_exec_agree(ex, cc_rank_world_comm(rank)));               /* every rank runs the same plan */
    for (i = 0; i < 3; i++) CHECK(cc_exec_step(ex));
    if (cc_rank_index(rank) == 0) {
        cc_op program[4];
        double program_us;
        for (i = 0; i < 4; i++) program[i] = cc_graph_op(g, i);
        CHECK(cc_simulate(ctx, g, program, 4, NULL, &program_us));
        printf("program order: %.0f us; scheduled: %.0f us (lower bound %.0f us); issue order:", program_us,
               s.makespan_us, s.lower_bound_us);
        for (i = 0; i < cc_graph_n_ops(g); i++) printf(" %s", cc_op_name(g, s.order[i]));
        printf("\n");
    }
    cc_exec_destroy(ex); cc_plan_destroy(plan); cc_backend_destroy(&be);
    cc_schedule_release(ctx, &s); cc_graph_destroy(g);
    return CC_OK;
}

int main(void) {
    static model m[2];
    cc_world_desc wd = {0};
    cc_context* ctx;
    cc_world* world = NULL;
    int i;
    for (i = 0; i < N; i++) {   /* the same weights on both ranks, different data */
        m[0].w[i] = m[1].w[i] = 1.0f;
        m[0].x[i] = (float)(i % 7); m[1].x[i] = (float)(i % 5);
    }
    wd.n_ranks = 2;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    if (cc_world_create(ctx, &wd, &world) != CC_OK || cc_world_run(world, rank_main, m) != CC_OK) {
        fprintf(stderr, "hello_step: %s\n", world ? cc_world_error(world) : cc_last_error(ctx));
        return 1;
    }
    for (i = 0; i < N; i++)
        if (m[0].w[i] != m[1].w[i]) { fprintf(stderr, "hello_step: the ranks' weights differ at %d\n", i); return 1; }
    printf("3 steps on 2 ranks; the weights agree on both: w[1] = %g\n", m[0].w[1]);
    cc_world_destroy(world);
    cc_context_destroy(ctx);
    return 0;
}
