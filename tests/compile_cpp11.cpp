// tests/compile_cpp11.cpp - concerto.h and concerto_rcpsp.h as C++11 (g++
// -std=c++11 -Wall -Wextra -Werror -pedantic), declarations included once
// before the implementation.
#include <cstring>
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "harness.h"
#include "compile_scenario.inc"

static void test_cpp11(void) {
    double mk = compile_scenario();
    CHECK(mk == 14.0, "C++11 build schedules matmul+allreduce / layernorm in 14 us (got %g)", mk);
    cc_sched_desc d = {};
    CHECK(d.method == CC_SCHED_AUTO, "cc_sched_desc d = {} (zero: every default) is usable from C++");
    mk = compile_rcpsp_scenario();
    CHECK(mk == 3.0, "C++11 build with concerto_rcpsp.h schedules 3 ops of 2 of 3 units in 3 us (got %g)", mk);
}

int main() {
    TH_RUN(test_cpp11);
    return th_done();
}
