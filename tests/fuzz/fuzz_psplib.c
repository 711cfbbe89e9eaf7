/* tests/fuzz/fuzz_psplib.c - the PSPLIB .sm reader (cc_psplib_parse) on
   arbitrary text. Invariants: it returns CC_OK with a valid graph or an
   error with a message; an instance it accepts is solved (small budgets)
   to a schedule the independent checker accepts, never below the lower
   bounds; nothing leaks. */
#define _POSIX_C_SOURCE 200809L
#ifndef FUZZ_LINKED_IMPL   /* the replays link tests/concerto_impl.o instead */
#define CONCERTO_IMPLEMENTATION
#endif
#include "../../concerto.h"
#include "../../concerto_rcpsp.h"
#include "fuzz.h"
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_result rc;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 0;
    rc = cc_psplib_parse(ctx, (const char*)data, size, "fuzz.sm", &g);
    if (rc != CC_OK) {
        FZ_CHECK(g == NULL, "a failed parse returned a graph");
        FZ_CHECK(cc_last_error(ctx)[0] != 0, "a failed parse (%d) left no message", (int)rc);
    } else if (cc_graph_n_ops(g) <= 40) {
        cc_sched_desc d;
        cc_schedule s;
        double cp = 0, res = 0, mk = 0;
        memset(&d, 0, sizeof d);
        memset(&s, 0, sizeof s);
        d.general = cc_rcpsp_search();
        d.allow_zero_durations = 1;
        d.tuning.budget_schedules = 50;
        d.tuning.bnb_nodes = 500;
        rc = cc_sched_solve(ctx, g, &d, &s);
        if (rc == CC_OK) {
            FZ_CHECK(cc_schedule_check(ctx, g, s.start_us, &mk) == CC_OK, "a solved schedule fails the checker: %s",
                     cc_last_error(ctx));
            FZ_CHECK(mk == s.makespan_us, "makespan %g, the checker's %g", s.makespan_us, mk);
            FZ_CHECK(cc_lower_bounds(ctx, g, &cp, &res) == CC_OK, "lower bounds failed: %s", cc_last_error(ctx));
            FZ_CHECK(s.makespan_us + 1e-6 >= cp && s.makespan_us + 1e-6 >= res, "makespan %g below a bound (%g, %g)",
                     s.makespan_us, cp, res);
            cc_schedule_release(ctx, &s);
        } else {
            FZ_CHECK(cc_last_error(ctx)[0] != 0, "a failed solve (%d) left no message", (int)rc);
        }
    }
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return 0;
}
