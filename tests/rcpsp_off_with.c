/* tests/rcpsp_off_with.c - the second translation unit of test_rcpsp_off:
   a private copy of the library (CONCERTO_STATIC) with concerto_rcpsp.h,
   scheduling tests/rcpsp_off_steps.inc's steps with cc_sched_desc.general
   set. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include <string.h>
#define CONCERTO_STATIC
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "../examples/steps/gpt_step.h"
#include "rcpsp_off_steps.inc"

void rcpsp_off_with(int i, rcpsp_off_result* out);
void rcpsp_off_with(int i, rcpsp_off_result* out) { rcpsp_off_solve(i, cc_rcpsp_search(), out); }
