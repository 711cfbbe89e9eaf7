/* schedule_step.c - schedule one data-parallel training step of a small
   transformer and see what the scheduler gains over program order.

   The step is described the way a trainer would: every operation names the
   buffer regions it reads and writes, and the library derives the
   dependencies. Durations are made-up microseconds (a real trainer measures
   them). The gradient of each layer is reduce-scattered on the
   communication stream and the optimizer updates that layer's shard.

   It needs the scheduler alone: CONCERTO_NO_RUNTIME leaves out the
   executor, backends and threads, and the file is plain C99.

   build/schedule_step [LAYERS] [COMM_SCALE]                                 */
#define CONCERTO_NO_RUNTIME
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <stdio.h>
#include <stdlib.h>

#define CHECK(call) do { cc_result r_ = (call); if (r_ != CC_OK) { \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cc_last_error(ctx)); exit(1); } } while (0)

static cc_region whole(cc_buffer b, uint64_t n_bytes) {
    cc_region r = {0};
    r.buffer = b; r.offset_bytes = 0; r.n_bytes = n_bytes; r.split_rows = 0;
    return r;
}

/* adds an op that reads r[0..nr) and writes w[0..nw) */
static void add(cc_context* ctx, cc_graph* g, const char* name, double us, int stream,
                const cc_region* r, int nr, const cc_region* w, int nw) {
    cc_op_desc d = {0};
    d.name = name; d.duration_us = us; d.stream = stream;
    d.reads = r; d.n_reads = nr; d.writes = w; d.n_writes = nw;
    CHECK(cc_graph_add_op(g, &d, NULL));
}

int main(int argc, char** argv) {
    int layers = argc > 1 ? atoi(argv[1]) : 12, l, i, n;
    double comm = argc > 2 ? atof(argv[2]) : 1.5;
    const uint64_t ACT = 1 << 20, W = 4 << 20;   /* bytes of an activation, of a layer's weights */
    cc_context* ctx;
    cc_graph* g;
    cc_buffer act, grad_act, weights, grads;
    cc_schedule s;
    cc_sched_desc sd;
    cc_op* program;
    double program_us, scheduled_check_us, cp, res, comm_total = 0;
    char name[64];
    if (layers < 1 || layers > 1000 || !(comm > 0)) { fprintf(stderr, "usage: schedule_step [LAYERS 1..1000] [COMM_SCALE > 0]\n"); return 2; }
    CHECK(cc_context_create(NULL, &ctx));
    CHECK(cc_graph_create(ctx, NULL, &g));   /* streams: compute, comm */
    CHECK(cc_graph_add_buffer(g, "activations", ACT * (uint64_t)(layers + 1), &act));
    CHECK(cc_graph_add_buffer(g, "activation_grads", ACT * (uint64_t)(layers + 1), &grad_act));
    CHECK(cc_graph_add_buffer(g, "weights", W * (uint64_t)layers, &weights));
    CHECK(cc_graph_add_buffer(g, "weight_grads", W * (uint64_t)layers, &grads));

    /* forward: act[l+1] = layer_l(act[l], weights[l]) */
    for (l = 0; l < layers; l++) {
        cc_region r[2] = {0}, w[1] = {0};
        r[0] = whole(act, ACT); r[0].offset_bytes = ACT * (uint64_t)l;
        r[1] = whole(weights, W); r[1].offset_bytes = W * (uint64_t)l;
        w[0] = whole(act, ACT); w[0].offset_bytes = ACT * (uint64_t)(l + 1);
        snprintf(name, sizeof name, "L%d.forward", l);
        add(ctx, g, name, 300 + 10 * (l % 3), CC_STREAM_COMPUTE, r, 2, w, 1);
    }
    /* loss gradient */
    {
        cc_region r[1] = {0}, w[1] = {0};
        r[0] = whole(act, ACT); r[0].offset_bytes = ACT * (uint64_t)layers;
        w[0] = whole(grad_act, ACT); w[0].offset_bytes = ACT * (uint64_t)layers;
        add(ctx, g, "loss", 20, CC_STREAM_COMPUTE, r, 1, w, 1);
    }
    /* backward, reduce-scatter, optimizer per layer, in the order a trainer issues them */
    for (l = layers - 1; l >= 0; l--) {
        cc_region r[3] = {0}, w[1] = {0};
        r[0] = whole(grad_act, ACT); r[0].offset_bytes = ACT * (uint64_t)(l + 1);
        r[1] = whole(act, ACT); r[1].offset_bytes = ACT * (uint64_t)l;
        r[2] = whole(weights, W); r[2].offset_bytes = W * (uint64_t)l;
        w[0] = whole(grad_act, ACT); w[0].offset_bytes = ACT * (uint64_t)l;
        snprintf(name, sizeof name, "L%d.backward_input", l);
        add(ctx, g, name, 300, CC_STREAM_COMPUTE, r, 3, w, 1);
        w[0] = whole(grads, W); w[0].offset_bytes = W * (uint64_t)l;
        snprintf(name, sizeof name, "L%d.backward_weight", l);
        add(ctx, g, name, 300, CC_STREAM_COMPUTE, r, 2, w, 1);
        r[0] = w[0];
        snprintf(name, sizeof name, "L%d.reduce_scatter", l);
        add(ctx, g, name, 420 * comm, CC_STREAM_COMM, r, 1, w, 1);
        comm_total += 420 * comm;
        w[0] = whole(weights, W); w[0].offset_bytes = W * (uint64_t)l;
        snprintf(name, sizeof name, "L%d.optimizer", l);
        add(ctx, g, name, 40, CC_STREAM_COMPUTE, r, 1, w, 1);
    }

    /* program order: every stream runs its ops in the order they were added */
    n = cc_graph_n_ops(g);
    program = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
    if (!program) return 1;
    for (i = 0; i < n; i++) program[i] = cc_graph_op(g, i);
    CHECK(cc_simulate(ctx, g, program, n, NULL, &program_us));

    memset(&sd, 0, sizeof sd);
    CHECK(cc_sched_solve(ctx, g, &sd, &s));
    CHECK(cc_schedule_check(ctx, g, s.start_us, &scheduled_check_us));
    CHECK(cc_lower_bounds(ctx, g, &cp, &res));

    printf("step of %d layers: %d ops on streams '%s' and '%s', %.0f us of communication\n", layers, n,
           cc_graph_resource_name(g, 0), cc_graph_resource_name(g, 1), comm_total);
    printf("program order   : %9.1f us\n", program_us);
    printf("scheduled       : %9.1f us  (%.1f%% faster; checked: %.1f us)\n", s.makespan_us,
           100.0 * (program_us - s.makespan_us) / program_us, scheduled_check_us);
    printf("lower bound     : %9.1f us  (critical path %.1f, busiest stream %.1f)%s\n", s.lower_bound_us, cp, res,
           s.proven_optimal ? "  -> the schedule is optimal" : "");
    printf("issue order of the last ops on each stream:\n");
    for (i = n - 8 < 0 ? 0 : n - 8; i < n; i++) {
        cc_op op = s.order[i];
        int k = cc_op_index(g, op);
        printf("  %-8s %-22s %9.1f .. %9.1f us\n", cc_op_demand(g, op, 1) ? "comm" : "compute", cc_op_name(g, op),
               s.start_us[k], s.start_us[k] + cc_op_duration_us(g, op));
    }
    free(program);
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return 0;
}
