/* tests/test_rcpsp_off.c - a build without concerto_rcpsp.h schedules
   training steps exactly as a build with it: this translation unit holds a
   private copy of the library (CONCERTO_STATIC) compiled without that
   header, rcpsp_off_with.c another compiled with it, and both schedule the
   steps of tests/rcpsp_off_steps.inc (the GPT trainer's step, alone and
   rewritten, and the planner's small model under four layouts), the second
   with cc_sched_desc.general set. Each step's makespan, lower bound,
   proof and issue order must be the same, and neither build may run lazy
   clause generation on them (their streams have capacity 1). The
   reference is the other build, so this shows that the general RCPSP
   search never serves a training step, not that the schedules are good
   (test_step, test_sched and test_plan.sh judge those). */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include <string.h>
#define CONCERTO_STATIC
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#ifdef CONCERTO_RCPSP_H_INCLUDED
#error "test_rcpsp_off.c: this translation unit must be built without concerto_rcpsp.h"
#endif
#include "../examples/steps/gpt_step.h"
#include "harness.h"
#include "rcpsp_off_steps.inc"

void rcpsp_off_with(int i, rcpsp_off_result* out);   /* rcpsp_off_with.c */

static void test_steps(void) {
    int i;
    for (i = 0; i < RCPSP_OFF_N_STEPS; i++) {
        rcpsp_off_result a, b;
        rcpsp_off_solve(i, NULL, &a);
        rcpsp_off_with(i, &b);
        if (!CHECK(a.rc == CC_OK && b.rc == CC_OK, "%s: schedules in both builds (rc %d without, %d with)", a.what, (int)a.rc,
                   (int)b.rc))
            continue;
        CHECK(a.n_ops == b.n_ops && a.makespan_us == b.makespan_us && a.lower_bound_us == b.lower_bound_us &&
                  a.proven_optimal == b.proven_optimal && a.order_hash == b.order_hash,
              "%s (%d ops): the same schedule without concerto_rcpsp.h as with it (makespan %.3f / %.3f us, lower bound "
              "%.3f / %.3f, proven %d / %d, orders %s)",
              a.what, a.n_ops, a.makespan_us, b.makespan_us, a.lower_bound_us, b.lower_bound_us, a.proven_optimal,
              b.proven_optimal, a.order_hash == b.order_hash ? "the same" : "differ");
        CHECK(a.n_conflicts == 0 && b.n_conflicts == 0, "%s: no lazy clause generation in either build (%lld, %lld conflicts)",
              a.what, (long long)a.n_conflicts, (long long)b.n_conflicts);
    }
}

int main(void) {
    TH_RUN(test_steps);
    return th_done();
}
