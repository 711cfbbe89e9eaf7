/* tests/compile_static_a.c - CONCERTO_STATIC: this translation unit and
   compile_static_b.c each embed a private copy of the implementation
   (concerto.h's and concerto_rcpsp.h's); the two are linked into one
   program without clashing symbols. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include <string.h>
#define CONCERTO_STATIC
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#define TH_PROGRAM "compile_static"
#include "harness.h"
#include "compile_scenario.inc"

double compile_static_b(void);   /* the other copy */
double compile_static_b_rcpsp(void);

static void test_static(void) {
    double a = compile_scenario(), b = compile_static_b();
    CHECK(a == 14.0, "static copy A schedules the scenario in 14 us (got %g)", a);
    CHECK(b == 14.0, "static copy B schedules the scenario in 14 us (got %g)", b);
    a = compile_rcpsp_scenario(); b = compile_static_b_rcpsp();
    CHECK(a == 3.0, "static copy A with concerto_rcpsp.h schedules its scenario in 3 us (got %g)", a);
    CHECK(b == 3.0, "static copy B with concerto_rcpsp.h schedules its scenario in 3 us (got %g)", b);
}

int main(void) {
    TH_RUN(test_static);
    return th_done();
}
