/* tests/compile_c99.c - concerto.h and concerto_rcpsp.h as C99 with -Wall
   -Wextra -Werror -pedantic. The headers are included twice before the
   implementation and twice with it: each implementation must sit outside
   its include guard and have its own. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include <string.h>
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "harness.h"
#include "compile_scenario.inc"

static void test_c99(void) {
    CHECK(compile_scenario() == 14.0, "C99 build schedules matmul+allreduce / layernorm in 14 us (got %g)",
          compile_scenario());
    CHECK(strcmp(cc_result_description(CC_ERR_CYCLE), "") != 0, "cc_result_description links");
    CHECK(compile_rcpsp_scenario() == 3.0, "C99 build with concerto_rcpsp.h schedules 3 ops of 2 of 3 units in 3 us (got %g)",
          compile_rcpsp_scenario());
}

int main(void) {
    TH_RUN(test_c99);
    return th_done();
}
