/* step_sm - a synthetic training step (examples/steps/synthetic_step.h) written
   as a PSPLIB .sm instance, for solvers that read that format (build/psplib,
   bench/solver/cpsat_ref.py).

   build/bench_step_sm LAYERS COMM_RATIO FILE.sm

   The step has 22 ops per layer plus a loss op on a compute and a
   communication stream; the file has one resource of capacity 1 per stream,
   a source and a sink job around the ops, and durations rounded to whole
   microseconds (cc_psplib_write with unit_us = 1). Prints one line: ops,
   jobs in the file, and the file's name. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "../../examples/steps/synthetic_step.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    int layers;
    double ratio;
    if (argc != 4 || (layers = atoi(argv[1])) < 1 || !((ratio = atof(argv[2])) > 0)) {
        fprintf(stderr, "usage: bench_step_sm LAYERS COMM_RATIO FILE.sm\n");
        return 2;
    }
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    if (synthetic_step_build(ctx, layers, ratio, 1, &g) != CC_OK || cc_psplib_write(ctx, g, argv[3], 1.0) != CC_OK) {
        fprintf(stderr, "bench_step_sm: %s\n", cc_last_error(ctx));
        return 1;
    }
    printf("ops=%d jobs=%d file=%s\n", cc_graph_n_ops(g), cc_graph_n_ops(g) + 2, argv[3]);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return 0;
}
