/* tests/compile_solver_only.c - the scheduler alone: CONCERTO_NO_RUNTIME
   leaves out the world, the executor, the backends and threads, so the
   implementation compiles as strict C99 with no POSIX at all. The Makefile
   builds this file with -std=c99 -pedantic, without _POSIX_C_SOURCE and
   without -pthread, with concerto_rcpsp.h; it then solves PSPLIB J30 instances (the first of the
   first four parameter groups) and compares the makespans with the proven
   optima of j30_bounds.csv. */
#define CONCERTO_NO_RUNTIME
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ub column (the proven optimum where optimal is 1) of instance name
   in j30_bounds.csv, or -1. */
static int optimum_of(const char* csv_path, const char* name) {
    FILE* f = fopen(csv_path, "r");
    char line[256];
    int best = -1;
    size_t n = strlen(name);
    if (!f) return -1;
    while (fgets(line, sizeof line, f)) {
        int jobs, res, cpm, lb, ub, optimal;
        char src[64];
        if (strncmp(line, name, n) != 0 || line[n] != ',') continue;
        if (sscanf(line + n + 1, "%d,%d,%d,%d,%63[^,],%d,%d", &jobs, &res, &cpm, &lb, src, &ub, &optimal) == 7 && optimal == 1)
            best = ub;
        break;
    }
    fclose(f);
    return best;
}

static void test_solver_only(void) {
    const char* dir = getenv("J30_DIR");
    const char* data = getenv("CONCERTO_DATA");
    char csv[600], path[700], name[32];
    cc_context* ctx = NULL;
    int par;
    if (!dir || !dir[0]) dir = "build/j30";
    if (!data || !data[0]) data = "../shared/data";
    snprintf(csv, sizeof csv, "%s/psplib/solutions/j30_bounds.csv", data);
    if (optimum_of(csv, "j301_1") < 0) { SKIP("%s not found (the repository is expected beside shared/)", csv); return; }
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "cc_context_create"); return; }
    for (par = 1; par <= 4; par++) {
        cc_graph* g = NULL;
        cc_schedule s;
        cc_sched_desc sd = {0};
        int opt;
        sd.general = cc_rcpsp_search();   /* PSPLIB's instances are general RCPSP */
        memset(&s, 0, sizeof s);
        snprintf(name, sizeof name, "j30%d_1", par);
        snprintf(path, sizeof path, "%s/%s.sm", dir, name);
        opt = optimum_of(csv, name);
        if (cc_psplib_read(ctx, path, &g) != CC_OK) {
            CHECK(0, "%s: read (%s)", name, cc_last_error(ctx));
            continue;
        }
        if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) CHECK(0, "%s: solve (%s)", name, cc_last_error(ctx));
        else CHECK(s.makespan_us == opt, "%s: makespan %g, the proven optimum %d", name, s.makespan_us, opt);
        cc_schedule_release(ctx, &s);
        cc_graph_destroy(g);
    }
    CHECK(cc_comm_size(NULL) == 0, "no communicators in this build");
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_solver_only);
    return th_done();
}
