/* tests/test_exact_shave.c - tests/test_exact.c again, with the search
   shaving the windows of every node (the contexts' test-only
   bnb_shave_depth above any job count; by default only the root bound
   shaves), so that the brute force also covers the search that starts
   from the root's shaved windows and shaves as it goes. */
#define TEST_SHAVE_DEPTH 1000
#include "test_exact.c"
