/* tests/concerto_impl.c - the one translation unit with the implementation
   (concerto.h's and concerto_rcpsp.h's) that the unit tests link against. */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
