/* psplib - solve PSPLIB single-mode RCPSP instances with concerto.

   build/psplib [--budget SCHEDULES] [--exact NODES] [--time-limit SECONDS]
                [--method auto|list|sampling|bnb|oddeven] FILE.sm...

   One line per instance:
       <file-basename> makespan=<int> lb=<int> optimal=<0|1> valid=<0|1> ms=<float>
   then a summary line. valid comes from the independent checker; ms is the
   wall-clock time of the solve. Exit status: 0 if every instance was read,
   solved and valid, 1 otherwise. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

static void usage(void) {
    fprintf(stderr,
            "usage: psplib [--budget SCHEDULES] [--exact NODES] [--time-limit SECONDS]\n"
            "              [--method auto|list|sampling|bnb|oddeven] FILE.sm...\n");
}

int main(int argc, char** argv) {
    cc_sched_desc sd = cc_sched_desc_default();
    cc_context* ctx = NULL;
    double* times;
    int a, n_files = 0, n_ok = 0, n_opt = 0, n_valid = 0, n_err = 0;
    double total_ms = 0;
    for (a = 1; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a++) {
        const char* opt = argv[a];
        if (!strcmp(opt, "--")) { a++; break; }
        if (a + 1 >= argc) { usage(); return 2; }
        if (!strcmp(opt, "--budget")) sd.budget_schedules = atoll(argv[++a]);
        else if (!strcmp(opt, "--exact")) { long long v = atoll(argv[++a]); sd.bnb_nodes = v > 0 ? v : -1; }
        else if (!strcmp(opt, "--time-limit")) sd.time_limit_s = atof(argv[++a]);
        else if (!strcmp(opt, "--method")) {
            const char* m = argv[++a];
            if (!strcmp(m, "auto")) sd.method = CC_SCHED_AUTO;
            else if (!strcmp(m, "list")) sd.method = CC_SCHED_LIST;
            else if (!strcmp(m, "sampling")) sd.method = CC_SCHED_SAMPLING;
            else if (!strcmp(m, "bnb")) sd.method = CC_SCHED_BNB;
            else if (!strcmp(m, "oddeven")) sd.method = CC_SCHED_ODD_EVEN;
            else { usage(); return 2; }
        } else { fprintf(stderr, "psplib: unknown option '%s'\n", opt); usage(); return 2; }
    }
    if (a >= argc) { usage(); return 2; }
    if (cc_context_create(NULL, &ctx) != CC_OK) { fprintf(stderr, "psplib: cannot create a context\n"); return 1; }
    times = (double*)malloc(sizeof(double) * (size_t)(argc - a));
    if (!times) { fprintf(stderr, "psplib: out of memory\n"); return 1; }
    for (; a < argc; a++) {
        const char* path = argv[a];
        const char* base = strrchr(path, '/');
        char name[256];
        cc_graph* g = NULL;
        cc_schedule s;
        double t0, ms, mk_checked = 0;
        int valid;
        size_t len;
        base = base ? base + 1 : path;
        snprintf(name, sizeof name, "%s", base);
        len = strlen(name);
        if (len > 3 && !strcmp(name + len - 3, ".sm")) name[len - 3] = 0;
        n_files++;
        if (cc_psplib_read(ctx, path, &g) != CC_OK) {
            fprintf(stderr, "psplib: %s\n", cc_last_error(ctx));
            printf("%s error=read\n", name);
            n_err++;
            continue;
        }
        t0 = now_ms();
        if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) {
            fprintf(stderr, "psplib: %s: %s\n", name, cc_last_error(ctx));
            printf("%s error=solve\n", name);
            n_err++;
            cc_graph_destroy(g);
            continue;
        }
        ms = now_ms() - t0;
        valid = cc_schedule_check(ctx, g, s.start_us, &mk_checked) == CC_OK && mk_checked == s.makespan_us;
        if (!valid) fprintf(stderr, "psplib: %s: invalid schedule: %s\n", name, cc_last_error(ctx));
        printf("%s makespan=%.0f lb=%.0f optimal=%d valid=%d ms=%.3f\n", name, s.makespan_us, s.lower_bound_us,
               s.proven_optimal, valid, ms);
        fflush(stdout);
        times[n_ok++] = ms;
        total_ms += ms;
        n_opt += s.proven_optimal;
        n_valid += valid;
        cc_schedule_release(ctx, &s);
        cc_graph_destroy(g);
    }
    qsort(times, (size_t)n_ok, sizeof *times, cmp_double);
    printf("summary: instances=%d solved=%d optimal=%d valid=%d errors=%d median_ms=%.3f max_ms=%.3f total_ms=%.1f\n",
           n_files, n_ok, n_opt, n_valid, n_err, n_ok ? times[n_ok / 2] : 0.0, n_ok ? times[n_ok - 1] : 0.0, total_ms);
    free(times);
    cc_context_destroy(ctx);
    return (n_err == 0 && n_valid == n_ok) ? 0 : 1;
}
