/* scale - scheduler cost and quality on synthetic training-step graphs.

   build/bench_scale LAYERS [COMM_RATIO]        one size: prints one line
   build/bench_scale --sweep LAYERS [COMM_RATIO] rounds x window-size table

   The graph (examples/steps/synthetic_step.h) has 22 ops per layer on a compute and a
   communication stream. Reported: ops, time to build and validate the graph,
   time to the first schedule (every priority rule once, each improved by
   forward-backward passes: ODD_EVEN with rounds < 0), time of the odd-even
   improvement with its default settings (ODD_EVEN started from that first
   schedule, its time minus the first schedule's), the makespans relative
   to the lower bound, the program-order makespan (stream simulation of the
   order in which the ops were added), and the peak resident memory of the
   process. Run one size per process so the peak is that size's. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>
#include "../examples/steps/synthetic_step.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
static double peak_mib(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}
#define CHECK(x) do { if ((x) != CC_OK) { fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cc_last_error(ctx)); exit(1); } } while (0)

static double program_order(cc_context* ctx, cc_graph* g) {
    int n = cc_graph_n_ops(g), i;
    cc_op* ord = (cc_op*)malloc(sizeof(cc_op) * (size_t)n);
    double mk = 0;
    for (i = 0; i < n; i++) ord[i] = cc_graph_op(g, i);
    CHECK(cc_simulate(ctx, g, ord, n, NULL, &mk));
    free(ord);
    return mk;
}

int main(int argc, char** argv) {
    cc_context* ctx;
    cc_graph* g;
    cc_schedule s1, s2;
    cc_sched_desc d;
    double t0, t1, t2, t3, t4, mk, prog;
    int sweep = argc > 1 && !strcmp(argv[1], "--sweep");
    int layers = argc > 1 + sweep ? atoi(argv[1 + sweep]) : 45;
    double ratio = argc > 2 + sweep ? atof(argv[2 + sweep]) : 1.0;
    if (layers < 1) { fprintf(stderr, "usage: bench_scale [--sweep] LAYERS [COMM_RATIO]\n"); return 2; }
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    t0 = now_s();
    CHECK(synthetic_step_build(ctx, layers, ratio, 1, &g));
    t1 = now_s();
    CHECK(cc_graph_validate(g));
    t2 = now_s();
    prog = program_order(ctx, g);
    if (sweep) {
        static const int rounds[] = { 1, 2, 4, 8 };
        static const int windows[] = { 4, 8, 16, 32 };
        size_t a, b;
        memset(&d, 0, sizeof d);
        d.method = CC_SCHED_ODD_EVEN;
        d.rounds = -1;
        CHECK(cc_sched_solve(ctx, g, &d, &s1));
        printf("ops=%d comm_ratio=%.2f lb_us=%.1f first=%.5f program=%.5f (makespan / lower bound)\n", cc_graph_n_ops(g),
               ratio, s1.lower_bound_us, s1.makespan_us / s1.lower_bound_us, prog / s1.lower_bound_us);
        printf("%-8s %-8s %-12s %-10s\n", "rounds", "block_b", "mk/lb", "seconds");
        for (a = 0; a < sizeof rounds / sizeof *rounds; a++)
            for (b = 0; b < sizeof windows / sizeof *windows; b++) {
                memset(&d, 0, sizeof d);
                d.method = CC_SCHED_ODD_EVEN;
                d.rounds = rounds[a];
                d.window_ops = windows[b];
                t3 = now_s();
                CHECK(cc_sched_solve(ctx, g, &d, &s2));
                t4 = now_s();
                CHECK(cc_schedule_check(ctx, g, s2.start_us, &mk));
                printf("%-8d %-8d %-12.5f %-10.3f\n", rounds[a], windows[b], s2.makespan_us / s2.lower_bound_us, t4 - t3);
                cc_schedule_release(ctx, &s2);
            }
        cc_schedule_release(ctx, &s1);
    } else {
        memset(&d, 0, sizeof d);
        d.method = CC_SCHED_ODD_EVEN;   /* every priority rule once, improved, */
        d.rounds = -1;                  /* and no odd-even round */
        t3 = now_s();
        CHECK(cc_sched_solve(ctx, g, &d, &s1));
        t4 = now_s();
        CHECK(cc_schedule_check(ctx, g, s1.start_us, &mk));
        {
            double t5, t6, first = t4 - t3;
            d.rounds = 0;               /* the default rounds */
            t5 = now_s();
            CHECK(cc_sched_solve(ctx, g, &d, &s2));
            t6 = now_s();
            CHECK(cc_schedule_check(ctx, g, s2.start_us, &mk));
            printf("ops=%d build_s=%.3f validate_s=%.3f first_schedule_s=%.3f oddeven_s=%.3f first_mk/lb=%.5f "
                   "oddeven_mk/lb=%.5f program_mk/lb=%.5f peak_mib=%.0f\n",
                   cc_graph_n_ops(g), t1 - t0, t2 - t1, first, (t6 - t5) - first, s1.makespan_us / s1.lower_bound_us,
                   s2.makespan_us / s2.lower_bound_us, prog / s1.lower_bound_us, peak_mib());
            cc_schedule_release(ctx, &s2);
        }
        cc_schedule_release(ctx, &s1);
    }
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return 0;
}
