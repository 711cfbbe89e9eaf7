/* tests/thread_free.c - linked, with -Wl,--wrap=pthread_create, into the
   test programs that the Makefile lists in THREAD_FREE. make tsan does not
   run those: ThreadSanitizer has nothing to check in a program that never
   starts a second thread. Should one of them start a thread after all
   (the library's CPU ranks or stream workers), it stops here, saying so,
   and tests/run.sh counts the crash as a failure: the list cannot go stale
   without make test noticing. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg);

int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg) {
    (void)thread; (void)attr; (void)start; (void)arg;
    fflush(stdout);
    fprintf(stderr, "FAIL: this program starts a thread, yet the Makefile lists it in THREAD_FREE, so make tsan "
                    "does not run it: take it off that list\n");
    abort();
}
