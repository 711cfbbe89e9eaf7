/* tests/harness.h - a tiny test harness for C99 and C++11.

   One line per check, a summary line per program:

       ok   test_cycle: add_dep closing a cycle is reported
       FAIL test_cycle: message names the ops: got "..." (tests/test_graph.c:42)
       skip test_j30: ../shared/data/psplib/j30.tar.gz not found
       # test_graph: 12 passed, 1 failed, 1 skipped

   tests/run.sh reads the '# ...' line of every program and prints the
   closing 'N passed, N failed[, N skipped]' line.

   Usage:
       static void test_something(void) { CHECK(x == 1, "x is one"); }
       int main(void) { TH_RUN(test_something); return th_done(); }

   With CI=true in the environment a SKIP counts as a failure: CI must have
   every input the tests need. */
#ifndef HARNESS_H_INCLUDED
#define HARNESS_H_INCLUDED

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#  define TH__UNUSED __attribute__((unused))
#else
#  define TH__UNUSED
#endif

static int th__passed, th__failed, th__skipped;
static const char* th__test = "main";

/* ok / FAIL line. detail (may be NULL) is shown only on failure. */
TH__UNUSED static int th__check(int ok, const char* file, int line, const char* detail, const char* fmt, ...) {
    va_list ap;
    printf("%s %s: ", ok ? "ok  " : "FAIL", th__test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (!ok) {
        if (detail && detail[0]) printf(": %s", detail);
        printf(" (%s:%d)", file, line);
    }
    printf("\n");
    fflush(stdout);
    if (ok) th__passed++; else th__failed++;
    return ok;
}

TH__UNUSED static int th__in_ci(void) {
    const char* ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0;
}

TH__UNUSED static void th__skip(const char* file, int line, const char* fmt, ...) {
    va_list ap;
    int ci = th__in_ci();
    printf("%s %s: ", ci ? "FAIL" : "skip", th__test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    if (ci) printf(" (a skip counts as a failure with CI=true) (%s:%d)", file, line);
    printf("\n");
    fflush(stdout);
    if (ci) th__failed++; else th__skipped++;
}

TH__UNUSED static void th__note(const char* fmt, ...) {
    va_list ap;
    printf("     %s: ", th__test);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Prints the summary line and returns the exit status for main(). */
TH__UNUSED static int th__done(const char* program) {
    const char* base = strrchr(program, '/');
    const char* dot;
    base = base ? base + 1 : program;
    dot = strchr(base, '.');   /* the program's name: the source file's without extension */
    printf("# %.*s: %d passed, %d failed, %d skipped\n", dot ? (int)(dot - base) : (int)strlen(base), base, th__passed,
           th__failed, th__skipped);
    fflush(stdout);
    return th__failed ? 1 : 0;
}

#define TH_RUN(fn) (th__test = #fn, fn())
#ifndef TH_PROGRAM
#define TH_PROGRAM __FILE__   /* the name in the summary line: the source file's, without extension */
#endif
#define th_done() th__done(TH_PROGRAM)

/* CHECK(cond, fmt, ...): one line, ok or FAIL. Returns cond. */
#define CHECK(cond, ...) th__check(!!(cond), __FILE__, __LINE__, NULL, __VA_ARGS__)

/* CHECK_INT(got, want, fmt, ...): equality of integers, shows both on failure. */
#define CHECK_INT(got, want, ...) do { \
        long long th_g_ = (long long)(got), th_w_ = (long long)(want); \
        char th_d_[96]; \
        snprintf(th_d_, sizeof th_d_, "got %lld, expected %lld", th_g_, th_w_); \
        th__check(th_g_ == th_w_, __FILE__, __LINE__, th_d_, __VA_ARGS__); \
    } while (0)

/* CHECK_NEAR(got, want, tol, fmt, ...): |got - want| <= tol. */
#define CHECK_NEAR(got, want, tol, ...) do { \
        double th_g_ = (double)(got), th_w_ = (double)(want); \
        char th_d_[96]; \
        snprintf(th_d_, sizeof th_d_, "got %.10g, expected %.10g", th_g_, th_w_); \
        th__check(th_g_ - th_w_ <= (tol) && th_w_ - th_g_ <= (tol), __FILE__, __LINE__, th_d_, __VA_ARGS__); \
    } while (0)

/* CHECK_CONTAINS(text, part, fmt, ...): strstr(text, part) != NULL. */
#define CHECK_CONTAINS(text, part, ...) do { \
        const char* th_t_ = (text); const char* th_p_ = (part); \
        char th_d_[700]; \
        snprintf(th_d_, sizeof th_d_, "\"%.560s\" does not contain \"%.100s\"", th_t_ ? th_t_ : "(null)", th_p_); \
        th__check(th_t_ != NULL && strstr(th_t_, th_p_) != NULL, __FILE__, __LINE__, th_d_, __VA_ARGS__); \
    } while (0)

/* SKIP(fmt, ...): the reason names what is missing. */
#define SKIP(...) th__skip(__FILE__, __LINE__, __VA_ARGS__)
/* NOTE(fmt, ...): an indented diagnostic line (no count). */
#define NOTE(...) th__note(__VA_ARGS__)

#endif /* HARNESS_H_INCLUDED */
