/* window_dump - schedules a PSPLIB instance with odd-even windows and
   writes every window the scheduler hands back unproven
   (cc_sched_tuning.on_window: windows of more than 16 ops, of rounds of
   blocks above 64 ops, such as the paper's 2x125) to a file of its own, for
   bench/cpsat_window.py to solve alone (bench/run.sh windows).

   build/bench_window_dump DIR [--method auto|list|sampling|bnb|oddeven]
                           [--window OPS] [--rounds K] [--window-nodes NODES]
                           [--window-max OPS] [--perturb N] [--window-prove]
                           [--time-limit SECONDS] FILE.sm

   The options are build/psplib's of the same names. DIR must exist; the
   windows go to DIR/win000.txt, DIR/win001.txt, ... in the order they were
   solved (a window of a later round sees the schedule the earlier ones
   left). Prints build/psplib's line for the instance:
       <name> makespan=<int> lb=<int> optimal=<0|1> valid=<0|1> ms=<float> nodes=<int>
              [windows=<int> windows_proven=<int> window_gap_max=<float> window_ms_max=<float>]

   A window's file, all times in units of the grain (the step every
   duration is a multiple of: the .sm file's units where its durations
   have no common factor):
       window <index> jobs <n> resources <k> t0 <first start> makespan <its end>
              lower_bound <its proven bound>
       capacity <c_1> ... <c_k>
       job <i> <duration> <release> <deadline or -1> <start> <d_1> ... <d_k> preds <p> ...
       busy <start> <end> <d_1> ... <d_k>
   one job line per job (in a topological order), one busy line per block
   of a job outside the window running in its span.
   Exit status: 0 when the instance was solved, its schedule valid and every
   window written; 1 otherwise; 2 for a usage error. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "../../concerto_rcpsp.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct dump {
    const char* dir;
    int count, failed;
} dump;

/* A time in microseconds as a whole number of grains (the solver's own
   integer ticks of 1 ns, divided). */
static long long in_grains(double us, long long grain_ticks) { return (long long)llround(us * 1000.0) / grain_ticks; }

static void write_window(const cc_sched_window* w, void* user_data) {
    dump* d = (dump*)user_data;
    char path[4096];
    FILE* f;
    int i, e, r, b, k = w->n_resources;
    long long g = llround(w->grain_us * 1000.0);
    if (g < 1) g = 1;
    snprintf(path, sizeof path, "%s/win%03d.txt", d->dir, d->count);
    if (!(f = fopen(path, "w"))) {
        if (!d->failed) fprintf(stderr, "bench_window_dump: cannot write %s\n", path);
        d->failed = 1;
        return;
    }
    d->count++;
    fprintf(f, "window %d jobs %d resources %d t0 %lld makespan %lld lower_bound %lld\n", d->count - 1, w->n_jobs, k,
            in_grains(w->first_start_us, g), in_grains(w->makespan_us, g), in_grains(w->lower_bound_us, g));
    fprintf(f, "capacity");
    for (r = 0; r < k; r++) fprintf(f, " %d", (int)w->capacity[r]);
    fprintf(f, "\n");
    for (i = 0; i < w->n_jobs; i++) {
        long long dl = w->deadline_us[i] >= 0 ? in_grains(w->deadline_us[i], g) : -1;
        fprintf(f, "job %d %lld %lld %lld %lld", i, in_grains(w->duration_us[i], g), in_grains(w->release_us[i], g), dl,
                in_grains(w->start_us[i], g));
        for (r = 0; r < k; r++) fprintf(f, " %d", (int)w->demand[(size_t)i * k + r]);
        fprintf(f, " preds");
        for (e = w->pred_off[i]; e < w->pred_off[i + 1]; e++) fprintf(f, " %d", w->pred[e]);
        fprintf(f, "\n");
    }
    for (b = 0; b < w->n_busy; b++) {
        fprintf(f, "busy %lld %lld", in_grains(w->busy_start_us[b], g), in_grains(w->busy_end_us[b], g));
        for (r = 0; r < k; r++) fprintf(f, " %d", (int)w->busy_demand[(size_t)b * k + r]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0 && !d->failed) {
        fprintf(stderr, "bench_window_dump: cannot write %s\n", path);
        d->failed = 1;
    }
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int usage(void) {
    fprintf(stderr, "usage: bench_window_dump DIR [--method auto|list|sampling|bnb|oddeven] [--window OPS] [--rounds K]\n"
                    "                         [--window-nodes NODES] [--window-max OPS] [--perturb N] [--window-prove]\n"
                    "                         [--time-limit SECONDS] FILE.sm\n");
    return 2;
}

int main(int argc, char** argv) {
    cc_sched_desc sd = {0};
    cc_sched_stats st;
    cc_schedule s;
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    dump d;
    const char *path, *base;
    char name[256];
    double t0, ms, mk_checked = 0;
    int a, valid, rc;
    size_t len;
    if (argc < 3) return usage();
    memset(&d, 0, sizeof d);
    d.dir = argv[1];
    for (a = 2; a < argc - 1; a++) {
        const char* opt = argv[a];
        if (!strcmp(opt, "--window-prove")) { sd.tuning.window_prove = 1; continue; }
        if (a + 1 >= argc - 1) return usage();
        if (!strcmp(opt, "--method")) {
            const char* m = argv[++a];
            if (!strcmp(m, "auto")) sd.method = CC_SCHED_AUTO;
            else if (!strcmp(m, "list")) sd.method = CC_SCHED_LIST;
            else if (!strcmp(m, "sampling")) sd.method = CC_SCHED_SAMPLING;
            else if (!strcmp(m, "bnb")) sd.method = CC_SCHED_BNB;
            else if (!strcmp(m, "oddeven")) sd.method = CC_SCHED_ODD_EVEN;
            else return usage();
        } else if (!strcmp(opt, "--window")) sd.window_ops = atoi(argv[++a]);
        else if (!strcmp(opt, "--rounds")) { int v = atoi(argv[++a]); sd.rounds = v > 0 ? v : -1; }
        else if (!strcmp(opt, "--window-nodes")) sd.tuning.window_nodes = atoi(argv[++a]);
        else if (!strcmp(opt, "--window-max")) sd.tuning.window_max_ops = atoi(argv[++a]);
        else if (!strcmp(opt, "--perturb")) sd.tuning.perturbations = atoi(argv[++a]);
        else if (!strcmp(opt, "--time-limit")) sd.time_limit_s = atof(argv[++a]);
        else return usage();
    }
    if (a != argc - 1) return usage();
    path = argv[a];
    base = strrchr(path, '/');
    snprintf(name, sizeof name, "%s", base ? base + 1 : path);
    len = strlen(name);
    if (len > 3 && !strcmp(name + len - 3, ".sm")) name[len - 3] = 0;
    sd.general = cc_rcpsp_search();   /* as build/psplib: the search for cumulative resources too */
    sd.tuning.on_window = write_window;
    sd.tuning.on_window_user_data = &d;
    if (cc_context_create(NULL, &ctx) != CC_OK) { fprintf(stderr, "bench_window_dump: cannot create a context\n"); return 1; }
    if (cc_psplib_read(ctx, path, &g) != CC_OK) {
        fprintf(stderr, "bench_window_dump: %s\n", cc_last_error(ctx));
        cc_context_destroy(ctx);
        return 1;
    }
    t0 = now_ms();
    if (cc_sched_solve_stats(ctx, g, &sd, &s, &st) != CC_OK) {
        fprintf(stderr, "bench_window_dump: %s: %s\n", name, cc_last_error(ctx));
        cc_graph_destroy(g);
        cc_context_destroy(ctx);
        return 1;
    }
    ms = now_ms() - t0;
    valid = cc_schedule_check(ctx, g, s.start_us, &mk_checked) == CC_OK && mk_checked == s.makespan_us;
    if (!valid) fprintf(stderr, "bench_window_dump: %s: invalid schedule: %s\n", name, cc_last_error(ctx));
    printf("%s makespan=%.0f lb=%.0f optimal=%d valid=%d ms=%.3f nodes=%lld", name, s.makespan_us, s.lower_bound_us,
           s.proven_optimal, valid, ms, (long long)st.n_nodes);
    if (st.n_windows > 0)
        printf(" windows=%lld windows_proven=%lld window_gap_max=%.5f window_ms_max=%.3f", (long long)st.n_windows,
               (long long)st.n_windows_proven, st.window_gap_max, st.window_ms_max);
    printf("\n");
    fprintf(stderr, "bench_window_dump: %d unproven windows written to %s\n", d.count, d.dir);
    rc = valid && !d.failed ? 0 : 1;
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    return rc;
}
