/* tests/compile_static_b.c - the second private copy, see compile_static_a.c. */
#include <string.h>
#define CONCERTO_STATIC
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "compile_scenario.inc"

double compile_static_b(void);
double compile_static_b(void) { return compile_scenario(); }
