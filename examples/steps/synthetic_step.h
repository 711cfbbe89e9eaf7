/* synthetic_step.h - synthetic training-step graphs shaped like a transformer's
   forward, backward and gradient communication, for benchmarks and tests.

   Per layer l (0..L-1):
     comm:    ag[l]            all-gather of the layer's parameters (ZeRO-3 style)
     compute: f[l][0..6]       ln1, qkv, attn, proj, ln2, fc1, fc2 (a chain)
   then a loss op, then for l = L-1..0 the backward:
     compute: dx[l][6..0]      input gradients (a chain, reverse order)
              dw[l][j]         weight gradients of the ops with weights
     comm:    rs[l]            reduce-scatter of the layer's weight gradients
     compute: opt[l]           the optimizer step of the layer's shard
   That is 7 + 1 + 7 + 5 + 1 + 1 = 22 ops per layer (+1 loss). Durations are
   deterministic pseudo-random around a base; comm_ratio scales the
   collectives against the compute. Dependencies are explicit (building a 1M-op
   graph through buffer regions would measure the region analysis instead).
   Program order is the order above, which is what a framework would issue. */
#ifndef SYNTHETIC_STEP_H_INCLUDED
#define SYNTHETIC_STEP_H_INCLUDED
#include "../../concerto.h"
#include <stdio.h>

static double synthetic_step__jitter(uint64_t* s, double base) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return base * (0.8 + 0.4 * (double)(z >> 11) / 9007199254740992.0);
}

static cc_result synthetic_step_add(cc_graph* g, cc_op* out, const char* name, double dur, int stream,
                                    const cc_op* deps, int n_deps) {
    cc_op_desc d = {0};
    d.name = name;
    d.duration_us = dur;
    d.stream = stream;
    d.deps = deps;
    d.n_deps = n_deps;
    return cc_graph_add_op(g, &d, out);
}

/* Builds the graph of about 22*layers+1 ops into a new graph *out. */
static cc_result synthetic_step_build(cc_context* ctx, int layers, double comm_ratio, uint64_t seed, cc_graph** out) {
    static const double fwd_us[7] = { 10, 60, 45, 20, 10, 80, 80 };
    static const int has_w[7] = { 0, 1, 0, 1, 0, 1, 1 };
    cc_graph* g = NULL;
    cc_op *f = NULL, *ag = NULL, loss, prev, deps[8], last_dx;
    cc_result rc;
    char nm[64];
    int l, j;
    uint64_t s = seed;
    if ((rc = cc_graph_create(ctx, NULL, &g)) != CC_OK) return rc;
    f = (cc_op*)malloc(sizeof(cc_op) * (size_t)layers * 7);
    ag = (cc_op*)malloc(sizeof(cc_op) * (size_t)layers);
    if (!f || !ag) { free(f); free(ag); cc_graph_destroy(g); return CC_ERR_OUT_OF_MEMORY; }
#define SYNTHETIC_STEP_TRY(x) do { if ((rc = (x)) != CC_OK) goto fail; } while (0)
    prev.id = 0;
    for (l = 0; l < layers; l++) {
        snprintf(nm, sizeof nm, "L%d.allgather", l);
        SYNTHETIC_STEP_TRY(synthetic_step_add(g, &ag[l], nm, synthetic_step__jitter(&s, 120 * comm_ratio), CC_STREAM_COMM, NULL, 0));
        for (j = 0; j < 7; j++) {
            int nd = 0;
            if (prev.id) deps[nd++] = prev;
            if (j == 0) deps[nd++] = ag[l];
            snprintf(nm, sizeof nm, "L%d.fwd%d", l, j);
            SYNTHETIC_STEP_TRY(synthetic_step_add(g, &f[l * 7 + j], nm, synthetic_step__jitter(&s, fwd_us[j]), CC_STREAM_COMPUTE,
                                                  deps, nd));
            prev = f[l * 7 + j];
        }
    }
    SYNTHETIC_STEP_TRY(synthetic_step_add(g, &loss, "loss", synthetic_step__jitter(&s, 15), CC_STREAM_COMPUTE, &prev, 1));
    last_dx = loss;
    for (l = layers - 1; l >= 0; l--) {
        cc_op dw[7], rs;
        int nw = 0;
        for (j = 6; j >= 0; j--) {
            cc_op in_grad = last_dx;
            deps[0] = in_grad; deps[1] = f[l * 7 + j];
            snprintf(nm, sizeof nm, "L%d.dx%d", l, j);
            SYNTHETIC_STEP_TRY(synthetic_step_add(g, &last_dx, nm, synthetic_step__jitter(&s, fwd_us[j]), CC_STREAM_COMPUTE, deps, 2));
            if (has_w[j]) {
                snprintf(nm, sizeof nm, "L%d.dw%d", l, j);
                SYNTHETIC_STEP_TRY(synthetic_step_add(g, &dw[nw], nm, synthetic_step__jitter(&s, fwd_us[j]), CC_STREAM_COMPUTE, deps, 2));
                nw++;
            }
        }
        snprintf(nm, sizeof nm, "L%d.reducescatter", l);
        SYNTHETIC_STEP_TRY(synthetic_step_add(g, &rs, nm, synthetic_step__jitter(&s, 240 * comm_ratio), CC_STREAM_COMM, dw, nw));
        snprintf(nm, sizeof nm, "L%d.optimizer", l);
        SYNTHETIC_STEP_TRY(synthetic_step_add(g, NULL, nm, synthetic_step__jitter(&s, 15), CC_STREAM_COMPUTE, &rs, 1));
    }
#undef SYNTHETIC_STEP_TRY
    free(f); free(ag);
    *out = g;
    return CC_OK;
fail:
    free(f); free(ag);
    cc_graph_destroy(g);
    return rc;
}
#endif
