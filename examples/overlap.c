/* overlap.c - a small data-parallel training step on CPU ranks, run in
   program order and in the scheduler's order over an emulated link.

   Every rank trains the same L-layer ReLU network (batch B, width D) on its
   own data. Per layer the backward pass computes the input gradient and the
   weight gradient, the weight gradient is averaged over the ranks with an
   all-reduce on the communication stream, and SGD updates the weight. In
   program order the update of layer l waits for its all-reduce, so the
   compute stream stalls on every layer; the scheduler moves the updates
   behind the remaining backward work so the all-reduces hide behind it.

   The ops only name the buffer regions they read and write; the library
   derives the dependencies, profiles the ops, agrees on their durations
   across ranks, schedules, plans the streams and events, and runs them.
   Each order is then profiled in a few of its own steps
   (cc_exec_profile_steps), which predicts its step as it runs beside the
   other ranks; both predictions are printed beside the measured steps.

   build/overlap [RANKS] [LAYERS] [US_PER_KB] [OUT_DIR]
     RANKS      2..8 (default 2; two per node)
     LAYERS     1..32 (default 6)
     US_PER_KB  emulated link: microseconds per KiB moved (default 25)
     OUT_DIR    where the traces go (default build; made if missing)
   Writes overlap_program.json and overlap_scheduled.json (measured) and
   overlap_predicted.json (the simulator's timeline of the scheduled order)
   into OUT_DIR, which chrome://tracing and ui.perfetto.dev open. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define B 32    /* batch rows per rank */
#define D 96    /* width */
#define MAX_LAYERS 32
#define PROFILE_WARMUP 5    /* steps of each order run before its profile */
#define PROFILE_STEPS 30    /* steps of each order profiled in place */

#define CHECK(call) do { cc_result r_ = (call); if (r_ != CC_OK) return r_; } while (0)

typedef struct net {
    float x[MAX_LAYERS + 1][B * D];    /* activations: x[0] input, x[l+1] = relu(x[l] W[l]) */
    float dx[MAX_LAYERS + 1][B * D];   /* their gradients */
    float w[MAX_LAYERS][D * D];        /* weights (D x D, row major) */
    float dw[MAX_LAYERS][D * D];       /* weight gradients, averaged in place */
} net;

typedef struct job { net* n; int layer; } job;

static void forward(void* stream, void* u) {              /* x[l+1] = relu(x[l] @ w[l]) */
    job* j = (job*)u;
    net* n = j->n;
    int l = j->layer, i, k, c;
    (void)stream;
    for (i = 0; i < B; i++)
        for (c = 0; c < D; c++) {
            float s = 0;
            for (k = 0; k < D; k++) s += n->x[l][i * D + k] * n->w[l][k * D + c];
            n->x[l + 1][i * D + c] = s > 0 ? s : 0;
        }
}
static void loss_grad(void* stream, void* u) {             /* d(0.5 |x_L|^2 / B) = x_L / B */
    job* j = (job*)u;
    int i;
    (void)stream;
    for (i = 0; i < B * D; i++) j->n->dx[j->layer][i] = j->n->x[j->layer][i] / B;
}
static void backward_input(void* stream, void* u) {        /* dx[l] = (dx[l+1] * relu') @ w[l]^T */
    job* j = (job*)u;
    net* n = j->n;
    int l = j->layer, i, k, c;
    (void)stream;
    for (i = 0; i < B; i++)
        for (k = 0; k < D; k++) {
            float s = 0;
            for (c = 0; c < D; c++)
                if (n->x[l + 1][i * D + c] > 0) s += n->dx[l + 1][i * D + c] * n->w[l][k * D + c];
            n->dx[l][i * D + k] = s;
        }
}
static void backward_weight(void* stream, void* u) {       /* dw[l] = x[l]^T @ (dx[l+1] * relu') */
    job* j = (job*)u;
    net* n = j->n;
    int l = j->layer, i, k, c;
    (void)stream;
    for (k = 0; k < D; k++)
        for (c = 0; c < D; c++) {
            float s = 0;
            for (i = 0; i < B; i++)
                if (n->x[l + 1][i * D + c] > 0) s += n->x[l][i * D + k] * n->dx[l + 1][i * D + c];
            n->dw[l][k * D + c] = s;
        }
}
static void update(void* stream, void* u) {                /* w[l] -= 0.01 dw[l] */
    job* j = (job*)u;
    int i;
    (void)stream;
    for (i = 0; i < D * D; i++) j->n->w[j->layer][i] -= 0.01f * j->n->dw[j->layer][i];
}

typedef struct shared {
    int ranks, layers, steps;
    double us_per_kb;
    cc_trace* measured[2];
    cc_trace* predicted;
    double step_us[2][8];      /* per rank: median measured step time, program / scheduled */
    double predicted_us[2];    /* from the ops profiled alone: program order simulated, the schedule's makespan */
    double in_place_us[2];     /* from steps of each order profiled in place (median over them) */
    int n_waits;
    float checksum[2][8];
} shared;

static int cmp_d(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }

static cc_region whole(cc_buffer b, uint64_t off, uint64_t n) {
    cc_region r = {0};
    r.buffer = b; r.offset_bytes = off; r.n_bytes = n; r.split_rows = 0;
    return r;
}

static cc_result rank_main(cc_rank* rank, void* user) {
    shared* sh = (shared*)user;
    cc_context* ctx = cc_rank_context(rank);
    int me = cc_rank_index(rank), L = sh->layers, l, i, pass;
    net* n = (net*)calloc(1, sizeof(net));
    net* snapshot = (net*)malloc(sizeof(net));
    job* jobs = (job*)calloc((size_t)(L + 1), sizeof(job));
    cc_graph* g = NULL;
    cc_buffer bx, bdx, bw, bdw;
    cc_collective* ar = (cc_collective*)calloc((size_t)L, sizeof(cc_collective));
    cc_backend be;
    cc_schedule sched;
    uint64_t seed = 0x9E3779B97F4A7C15ull * (uint64_t)(me + 1);
    const uint64_t ACT = sizeof(float) * B * D, WB = sizeof(float) * D * D;
    if (!n || !snapshot || !jobs || !ar) { free(n); free(snapshot); free(jobs); free(ar); return CC_ERR_OUT_OF_MEMORY; }
    /* the same weights on every rank, different data */
    for (l = 0; l < L; l++)
        for (i = 0; i < D * D; i++) n->w[l][i] = (float)((((unsigned)(l * 7919 + i * 104729) % 2001) / 1000.0 - 1.0) * 0.18);
    for (i = 0; i < B * D; i++) { seed = seed * 6364136223846793005ull + 1442695040888963407ull; n->x[0][i] = (float)((seed >> 40) % 2001) / 1000.0f - 1.0f; }
    for (l = 0; l <= L; l++) { jobs[l].n = n; jobs[l].layer = l; }

    CHECK(cc_graph_create(ctx, NULL, &g));
    CHECK(cc_graph_add_buffer(g, "x", ACT * (uint64_t)(L + 1), &bx));
    CHECK(cc_graph_add_buffer(g, "dx", ACT * (uint64_t)(L + 1), &bdx));
    CHECK(cc_graph_add_buffer(g, "w", WB * (uint64_t)L, &bw));
    CHECK(cc_graph_add_buffer(g, "dw", WB * (uint64_t)L, &bdw));
    for (l = 0; l < L; l++) {
        cc_op_desc d = {0};
        cc_region r[2] = {0}, w[1] = {0};
        char name[32];
        snprintf(name, sizeof name, "L%d.forward", l);
        r[0] = whole(bx, ACT * (uint64_t)l, ACT); r[1] = whole(bw, WB * (uint64_t)l, WB); w[0] = whole(bx, ACT * (uint64_t)(l + 1), ACT);
        d.name = name; d.duration_us = 1; d.fn = forward; d.user_data = &jobs[l];
        d.reads = r; d.n_reads = 2; d.writes = w; d.n_writes = 1;
        CHECK(cc_graph_add_op(g, &d, NULL));
    }
    {
        cc_op_desc d = {0};
        cc_region r[1] = {0}, w[1] = {0};
        r[0] = whole(bx, ACT * (uint64_t)L, ACT); w[0] = whole(bdx, ACT * (uint64_t)L, ACT);
        d.name = "loss_grad"; d.duration_us = 1; d.fn = loss_grad; d.user_data = &jobs[L];
        d.reads = r; d.n_reads = 1; d.writes = w; d.n_writes = 1;
        CHECK(cc_graph_add_op(g, &d, NULL));
    }
    for (l = L - 1; l >= 0; l--) {
        cc_op_desc d = {0};
        cc_region r[3] = {0}, w[1] = {0};
        char name[32];
        r[0] = whole(bdx, ACT * (uint64_t)(l + 1), ACT); r[1] = whole(bx, ACT * (uint64_t)(l + 1), ACT);
        r[2] = whole(bw, WB * (uint64_t)l, WB); w[0] = whole(bdx, ACT * (uint64_t)l, ACT);
        snprintf(name, sizeof name, "L%d.backward_input", l);
        d.name = name; d.duration_us = 1; d.fn = backward_input; d.user_data = &jobs[l];
        d.reads = r; d.n_reads = 3; d.writes = w; d.n_writes = 1;
        if (l > 0) CHECK(cc_graph_add_op(g, &d, NULL));   /* the input's gradient is not needed */
        r[2] = whole(bx, ACT * (uint64_t)l, ACT); w[0] = whole(bdw, WB * (uint64_t)l, WB);
        snprintf(name, sizeof name, "L%d.backward_weight", l);
        d.name = name; d.fn = backward_weight;
        CHECK(cc_graph_add_op(g, &d, NULL));
        ar[l].kind = CC_COLL_ALL_REDUCE; ar[l].dtype = CC_DTYPE_FLOAT32; ar[l].reduce = CC_REDUCE_AVG;
        ar[l].n_elems = (size_t)D * D; ar[l].comm = cc_rank_world_comm(rank);
        ar[l].send_buf = n->dw[l]; ar[l].recv_buf = n->dw[l];
        d = (cc_op_desc){0};
        r[0] = whole(bdw, WB * (uint64_t)l, WB); w[0] = r[0];
        snprintf(name, sizeof name, "L%d.all_reduce", l);
        d.name = name; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &ar[l];
        d.reads = r; d.n_reads = 1; d.writes = w; d.n_writes = 1;
        CHECK(cc_graph_add_op(g, &d, NULL));
        d = (cc_op_desc){0};
        r[1] = whole(bw, WB * (uint64_t)l, WB); w[0] = r[1];
        snprintf(name, sizeof name, "L%d.update", l);
        d.name = name; d.duration_us = 1; d.fn = update; d.user_data = &jobs[l];
        d.reads = r; d.n_reads = 2; d.writes = w; d.n_writes = 1;
        CHECK(cc_graph_add_op(g, &d, NULL));
    }
    CHECK(cc_cpu_backend_create(rank, &be));
    memset(&sched, 0, sizeof sched);
    memcpy(snapshot, n, sizeof *n);
    for (pass = 0; pass < 2; pass++) {   /* 0: program order, 1: the scheduler's order */
        cc_plan* plan = NULL;
        cc_exec* x = NULL;
        double times[64], *st = (double*)malloc(sizeof(double) * (size_t)cc_graph_n_ops(g)),
               *en = (double*)malloc(sizeof(double) * (size_t)cc_graph_n_ops(g));
        int s;
        CHECK(cc_plan_create(ctx, g, pass ? sched.order : NULL, &plan));
        CHECK(cc_exec_create(ctx, plan, &be, &x));
        /* where the buffers are: profiling puts them back as it found them */
        CHECK(cc_exec_bind_buffer(x, bx, n->x));
        CHECK(cc_exec_bind_buffer(x, bdx, n->dx));
        CHECK(cc_exec_bind_buffer(x, bw, n->w));
        CHECK(cc_exec_bind_buffer(x, bdw, n->dw));
        CHECK(cc_exec_agree(x, cc_rank_world_comm(rank)));
        if (pass == 0) {
            /* measure every op alone, agree on durations, schedule */
            cc_sched_desc sd = {0};
            CHECK(cc_exec_profile_ops(x, 7, cc_rank_world_comm(rank)));
            CHECK(cc_sched_solve(ctx, g, &sd, &sched));
            {
                cc_op* prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)cc_graph_n_ops(g));
                for (i = 0; i < cc_graph_n_ops(g); i++) prog[i] = cc_graph_op(g, i);
                CHECK(cc_simulate(ctx, g, prog, cc_graph_n_ops(g), NULL, &sh->predicted_us[0]));
                free(prog);
            }
            sh->predicted_us[1] = sched.makespan_us;
            if (me == 0) CHECK(cc_trace_add(sh->predicted, g, 0, "rank 0 (predicted)", sched.start_us, NULL));
        } else sh->n_waits = cc_plan_n_waits(plan);
        {
            /* the order's own steps profiled where they run (after a few
               unprofiled ones): what they share, the cores with the other
               ranks' threads and the waits between streams and ranks, which
               ops profiled alone do not see; the state restored after */
            cc_profile_result sp;
            memset(&sp, 0, sizeof sp);
            for (s = 0; s < PROFILE_WARMUP; s++) CHECK(cc_exec_step(x));
            CHECK(cc_exec_profile_steps(x, PROFILE_STEPS, cc_rank_world_comm(rank)));
            CHECK(cc_exec_query_profile(x, &sp));
            sh->in_place_us[pass] = sp.makespan_median_us;
            memcpy(n, snapshot, sizeof *n);
        }
        for (s = 0; s < sh->steps; s++) {
            CHECK(cc_exec_step(x));
            CHECK(cc_exec_timeline(x, st, en));
            for (i = 0, times[s] = 0; i < cc_graph_n_ops(g); i++) if (en[i] > times[s]) times[s] = en[i];
        }
        {
            char pname[32];
            snprintf(pname, sizeof pname, "rank %d", me);
            CHECK(cc_trace_add(sh->measured[pass], g, me, pname, st, en));
        }
        qsort(times, (size_t)sh->steps, sizeof(double), cmp_d);
        sh->step_us[pass][me] = times[sh->steps / 2];
        {
            float cs = 0;
            for (l = 0; l < L; l++) for (i = 0; i < D * D; i++) cs += n->w[l][i];
            sh->checksum[pass][me] = cs;
        }
        memcpy(n, snapshot, sizeof *n);
        cc_exec_destroy(x);
        cc_plan_destroy(plan);
        free(st); free(en);
    }
    cc_backend_destroy(&be);
    cc_schedule_release(ctx, &sched);
    cc_graph_destroy(g);
    free(n); free(snapshot); free(jobs); free(ar);
    return CC_OK;
}

int main(int argc, char** argv) {
    shared sh;
    cc_world_desc wd = {0};
    cc_link intra = { 0 }, inter = { 0 };
    cc_world* w;
    cc_context* ctx;
    cc_result r;
    const char* dir = argc > 4 ? argv[4] : "build";
    char path[3][4096];
    const char* name[3] = { "overlap_program.json", "overlap_scheduled.json", "overlap_predicted.json" };
    int i;
    memset(&sh, 0, sizeof sh);
    sh.ranks = argc > 1 ? atoi(argv[1]) : 2;
    sh.layers = argc > 2 ? atoi(argv[2]) : 6;
    sh.us_per_kb = argc > 3 ? atof(argv[3]) : 25;
    sh.steps = 15;
    if (sh.ranks < 2 || sh.ranks > 8 || sh.layers < 1 || sh.layers > MAX_LAYERS || !(sh.us_per_kb >= 0)) {
        fprintf(stderr, "usage: overlap [RANKS 2..8] [LAYERS 1..%d] [US_PER_KB >= 0] [OUT_DIR]\n", MAX_LAYERS);
        return 2;
    }
    for (i = 0; i < 3; i++)
        if (snprintf(path[i], sizeof path[i], "%s/%s", dir, name[i]) >= (int)sizeof path[i]) {
            fprintf(stderr, "overlap: output directory name too long: '%s'\n", dir);
            return 2;
        }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "overlap: cannot make the output directory '%s': %s\n", dir, strerror(errno));
        return 1;
    }
    wd.n_ranks = sh.ranks;
    wd.ranks_per_node = 2;
    wd.emulate_link = 1;
    intra.latency_us = 20; intra.us_per_byte = sh.us_per_kb / 1024.0;
    inter.latency_us = 40; inter.us_per_byte = 2 * sh.us_per_kb / 1024.0;
    wd.intra_node = &intra;
    wd.inter_node = &inter;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    if (cc_trace_create(ctx, &sh.measured[0]) || cc_trace_create(ctx, &sh.measured[1]) || cc_trace_create(ctx, &sh.predicted)) return 1;
    if (cc_world_create(ctx, &wd, &w) != CC_OK) { fprintf(stderr, "overlap: %s\n", cc_last_error(ctx)); return 1; }
    r = cc_world_run(w, rank_main, &sh);
    if (r != CC_OK) { fprintf(stderr, "overlap: %s\n", cc_world_error(w)); return 1; }
    printf("%d ranks (2 per node), %d layers of %dx%d, emulated link %.0f us/KiB; median of %d steps\n", sh.ranks, sh.layers,
           B, D, sh.us_per_kb, sh.steps);
    printf("                 measured (rank 0)   predicted: steps profiled in place   ops profiled alone\n");
    printf("program order    %10.0f us       %10.0f us                        %10.0f us\n", sh.step_us[0][0], sh.in_place_us[0],
           sh.predicted_us[0]);
    printf("scheduled        %10.0f us       %10.0f us                        %10.0f us   (%d cross-stream waits)\n",
           sh.step_us[1][0], sh.in_place_us[1], sh.predicted_us[1], sh.n_waits);
    printf("speed-up         %10.2fx          %10.2fx                         %10.2fx\n", sh.step_us[0][0] / sh.step_us[1][0],
           sh.in_place_us[0] / sh.in_place_us[1], sh.predicted_us[0] / sh.predicted_us[1]);
    printf("(in place: the median of %d steps of each order, each simulated from its own op times; measured: %d later steps)\n",
           PROFILE_STEPS, sh.steps);
    for (i = 0; i < sh.ranks; i++)
        if (sh.checksum[0][i] != sh.checksum[1][i]) printf("rank %d: the weights differ between the orders!\n", i);
    printf("weights after %d steps identical in both orders on every rank: %s\n", sh.steps,
           memcmp(sh.checksum[0], sh.checksum[1], sizeof(float) * (size_t)sh.ranks) ? "no" : "yes");
    if (cc_trace_write(sh.measured[0], path[0]) || cc_trace_write(sh.measured[1], path[1]) ||
        cc_trace_write(sh.predicted, path[2]))
        fprintf(stderr, "overlap: %s\n", cc_last_error(ctx));
    else printf("traces: %s %s %s\n", path[0], path[1], path[2]);
    cc_trace_destroy(sh.measured[0]); cc_trace_destroy(sh.measured[1]); cc_trace_destroy(sh.predicted);
    cc_world_destroy(w);
    cc_context_destroy(ctx);
    return 0;
}
