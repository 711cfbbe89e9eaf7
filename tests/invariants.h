/* tests/invariants.h - the library's invariants (CONCERTO_ASSERT) checked
   in every test build: a broken one aborts the test program, which the
   runner counts as a failure. Include before the implementation. */
#ifndef TESTS_INVARIANTS_H
#define TESTS_INVARIANTS_H
#include <assert.h>
#define CONCERTO_ASSERT(x) assert(x)
#endif
