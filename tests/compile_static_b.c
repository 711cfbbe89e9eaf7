/* tests/compile_static_b.c - the second private copy, see compile_static_a.c. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include <string.h>
#define CONCERTO_STATIC
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "compile_scenario.inc"

double compile_static_b(void);
double compile_static_b(void) { return compile_scenario(); }
double compile_static_b_rcpsp(void);
double compile_static_b_rcpsp(void) { return compile_rcpsp_scenario(); }
