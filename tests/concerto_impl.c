/* tests/concerto_impl.c - the one translation unit with the implementation
   that the unit tests link against. */
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
