/* tests/test_determinism.c - the same inputs give the same schedule: twice in
   one context, in a fresh context, and while other processes load the CPU
   (budgets are counted in schedules and nodes, never in time). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "util.h"

static pid_t busy_children[4];
static int n_busy;

static void load_cpu(int n) {
    int i;
    fflush(stdout);
    for (i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0) {
            volatile unsigned long x = 0;
            alarm(120);   /* never outlive the test by much */
            for (;;) x++;
        }
        if (pid > 0) busy_children[n_busy++] = pid;
    }
}

static void unload_cpu(void) {
    int i;
    for (i = 0; i < n_busy; i++) {
        kill(busy_children[i], SIGKILL);
        waitpid(busy_children[i], NULL, 0);
    }
    n_busy = 0;
}

typedef struct scenario {
    const char* name;
    tu_inst* in;
    cc_sched_desc desc;
} scenario;

static void test_same_schedule(void) {
    tu_rng rng = {1234};
    tu_gen gen = {70, 70, 4, 4, 0, 10, 10, 1.0, 0.08, 0.0};
    tu_gen sgen = {150, 150, 3, 3, 1, 1, 20, 0.25, 0.05, 0.1};
    scenario sc[5];
    int n_sc = 5, i;
    cc_context* c1 = NULL;
    cc_context* c2 = NULL;
    cc_context_create(NULL, &c1);
    cc_context_create(NULL, &c2);
    sc[0].name = "AUTO, 70 ops, 4 resources, 1000 schedules, 20000 nodes";
    sc[0].in = tu_random_inst(&rng, &gen);
    sc[0].desc = tu_sched_desc();
    sc[0].desc.tuning.budget_schedules = 1000;
    sc[0].desc.tuning.bnb_nodes = 20000;
    sc[1].name = "SAMPLING, 70 ops, seed 9";
    sc[1].in = tu_random_inst(&rng, &gen);
    sc[1].desc = tu_sched_desc();
    sc[1].desc.method = CC_SCHED_SAMPLING;
    sc[1].desc.seed = 9;
    sc[2].name = "BNB, 70 ops, 20000 nodes";
    sc[2].in = tu_random_inst(&rng, &gen);
    sc[2].desc = tu_sched_desc();
    sc[2].desc.method = CC_SCHED_BNB;
    sc[2].desc.tuning.bnb_nodes = 20000;
    sc[3].name = "ODD_EVEN, 150-op stream graph";
    sc[3].in = tu_random_inst(&rng, &sgen);
    sc[3].desc = tu_sched_desc();
    sc[3].desc.method = CC_SCHED_ODD_EVEN;
    sc[4].name = "AUTO, 150-op stream graph";
    sc[4].in = tu_random_inst(&rng, &sgen);
    sc[4].desc = tu_sched_desc();
    for (i = 0; i < n_sc; i++) {
        cc_graph* g1 = NULL;
        cc_graph* g2 = NULL;
        cc_schedule a, b, c, d;
        cc_sched_stats sa, sb, sc_, sd;
        char why[256];
        cc_result ra, rb, rc, rd;
        memset(&a, 0, sizeof a); memset(&b, 0, sizeof b); memset(&c, 0, sizeof c); memset(&d, 0, sizeof d);
        if (tu_build_graph(c1, sc[i].in, &g1) != CC_OK || tu_build_graph(c2, sc[i].in, &g2) != CC_OK) {
            CHECK(0, "%s: setup: %s", sc[i].name, cc_last_error(c1));
            cc_graph_destroy(g1);
            cc_graph_destroy(g2);
            continue;
        }
        ra = cc_sched_solve_stats(c1, g1, &sc[i].desc, &a, &sa);
        rb = cc_sched_solve_stats(c1, g1, &sc[i].desc, &b, &sb);
        rc = cc_sched_solve_stats(c2, g2, &sc[i].desc, &c, &sc_);
        load_cpu(2);
        rd = cc_sched_solve_stats(c2, g2, &sc[i].desc, &d, &sd);
        unload_cpu();
        if (CHECK(ra == CC_OK && rb == CC_OK && rc == CC_OK && rd == CC_OK, "%s: all four solves succeed", sc[i].name)) {
            CHECK(tu_same_schedule(&a, &sa, &b, &sb, why, sizeof why), "%s: solved twice in one context: identical (%s)", sc[i].name,
                  tu_same_schedule(&a, &sa, &b, &sb, why, sizeof why) ? "" : why);
            CHECK(tu_same_schedule(&a, &sa, &c, &sc_, why, sizeof why), "%s: in another context with a rebuilt graph: identical (%s)",
                  sc[i].name, tu_same_schedule(&a, &sa, &c, &sc_, why, sizeof why) ? "" : why);
            CHECK(tu_same_schedule(&a, &sa, &d, &sd, why, sizeof why), "%s: with 2 busy processes loading the CPU: identical (%s)",
                  sc[i].name, tu_same_schedule(&a, &sa, &d, &sd, why, sizeof why) ? "" : why);
            NOTE("%s: makespan %g, lower bound %g, %lld schedules, %lld nodes, %.0f ms unloaded, %.0f ms loaded", sc[i].name,
                 a.makespan_us, a.lower_bound_us, (long long)sa.n_schedules, (long long)sa.n_nodes, sa.solve_ms, sd.solve_ms);
        }
        cc_schedule_release(c1, &a);
        cc_schedule_release(c1, &b);
        cc_schedule_release(c2, &c);
        cc_schedule_release(c2, &d);
        cc_graph_destroy(g1);
        cc_graph_destroy(g2);
        tu_inst_free(sc[i].in);
    }
    cc_context_destroy(c1);
    cc_context_destroy(c2);
}

int main(void) {
    TH_RUN(test_same_schedule);
    unload_cpu();
    return th_done();
}
