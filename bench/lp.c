/* bench/lp.c - odd-even windows on synthetic training-step graphs
   (examples/steps/synthetic_step.h), solved by branch and bound vs lp_solve:
   time per window and the makespan reached, window sizes 20..250 ops.
     build/bench_lp [LAYERS] [COMM_RATIO]      (default 23 layers: 507 ops, 2.0) */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../examples/steps/synthetic_step.h"
#include <stdlib.h>
#include <time.h>

static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
    static const int sizes[] = { 20, 50, 100, 250 };
    int layers = argc > 1 ? atoi(argv[1]) : 23;
    double ratio = argc > 2 ? atof(argv[2]) : 2.0;
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    size_t a;
    int e;
    if (cc_context_create(NULL, &ctx) != CC_OK || synthetic_step_build(ctx, layers, ratio, 1, &g) != CC_OK) return 1;
    printf("| window ops | solver | windows | ms per window | makespan us | start makespan us | lower bound us |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (a = 0; a < sizeof sizes / sizeof *sizes; a++)
        for (e = 0; e < 2; e++) {
            cc_sched_desc d = {0};
            cc_schedule s0, s1;
            double t0, t1;
            int nwin;
            d.method = CC_SCHED_ODD_EVEN; d.window_ops = sizes[a] / 2; d.rounds = -1;
            d.exact = e ? CC_EXACT_LPSOLVE : CC_EXACT_BNB;
            if (cc_sched_solve(ctx, g, &d, &s0) != CC_OK) { printf("error: %s\n", cc_last_error(ctx)); return 1; }
            d.rounds = 2;
            t0 = wall_s();
            if (cc_sched_solve(ctx, g, &d, &s1) != CC_OK) { printf("error: %s\n", cc_last_error(ctx)); return 1; }
            t1 = wall_s();
            nwin = 2 * ((s1.n_ops + sizes[a] - 1) / sizes[a]);   /* two rounds, both offsets (an upper count) */
            printf("| %d | %s | %d | %.1f | %.1f | %.1f | %.1f |%s\n", sizes[a], e ? "lp_solve" : "bnb", nwin,
                   1000.0 * (t1 - t0) / nwin, s1.makespan_us, s0.makespan_us, s1.lower_bound_us,
                   cc_schedule_check(ctx, g, s1.start_us, NULL) == CC_OK ? "" : " INVALID");
            fflush(stdout);
            cc_schedule_release(ctx, &s0);
            cc_schedule_release(ctx, &s1);
        }
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return 0;
}
