/* window_dump - tools/psplib, with every odd-even window of the inner
   search's size (windows of more than 128 ops, such as the paper's 2x125)
   that the search leaves unproven written to a file of its own, for
   bench/cpsat_window.py to solve alone (bench/run.sh windows).

   build/bench_window_dump DIR [psplib's options] FILE.sm

   DIR must exist; the windows go to DIR/win000.txt, DIR/win001.txt, ... in
   the order they were solved (a window of a later round sees the schedule
   the earlier ones left). Everything else is tools/psplib's: its options,
   its output line.

   A window's file, all times in the .sm file's units (the solver's ticks
   divided by the grain):
       window <index> jobs <n> resources <k> t0 <first start> makespan <its end>
              lower_bound <its proven bound>
       capacity <c_1> ... <c_k>
       job <i> <duration> <release> <deadline or -1> <start> <d_1> ... <d_k> preds <p> ...
       busy <start> <end> <d_1> ... <d_k>
   one job line per job (in a topological order), one busy line per block
   of a job outside the window running in its span. */
/* (no header before psplib.c's own: it sets the feature macros first) */
struct cc__prob;
static void wd_dump(const struct cc__prob* p, const void* start_v, long long mk, long long lb, int proven, long long t0);
#define CONCERTO__WINDOW_HOOK(sub, start, br, t0) wd_dump((sub), (start), (br)->makespan, (br)->lower_bound, (br)->proven, (t0))
#define main psplib_main
#include "../tools/psplib.c"
#undef main

static const char* wd_dir;
static int wd_count, wd_failed;

static void wd_dump(const struct cc__prob* p, const void* start_v, long long mk, long long lb, int proven, long long t0) {
    char path[4096];
    FILE* f;
    int i, e, r, b;
    const cc__time* start = (const cc__time*)start_v;
    long long g = p->grain > 0 ? p->grain : 1;
    if (proven || mk >= CONCERTO__TIME_MAX) return;
    snprintf(path, sizeof path, "%s/win%03d.txt", wd_dir, wd_count);
    if (!(f = fopen(path, "w"))) {
        if (!wd_failed) fprintf(stderr, "bench_window_dump: cannot write %s\n", path);
        wd_failed = 1;
        return;
    }
    wd_count++;
    fprintf(f, "window %d jobs %d resources %d t0 %lld makespan %lld lower_bound %lld\n", wd_count - 1, p->n, p->k,
            (long long)(t0 / g), (long long)(mk / g), (long long)(lb / g));
    fprintf(f, "capacity");
    for (r = 0; r < p->k; r++) fprintf(f, " %d", (int)p->cap[r]);
    fprintf(f, "\n");
    for (i = 0; i < p->n; i++) {
        long long dl = p->deadline && p->deadline[i] < CONCERTO__TIME_MAX ? p->deadline[i] / g : -1;
        fprintf(f, "job %d %lld %lld %lld %lld", i, (long long)(p->dur[i] / g), (long long)((p->release ? p->release[i] : 0) / g),
                (long long)dl, (long long)(start[i] / g));
        for (r = 0; r < p->k; r++) fprintf(f, " %d", (int)p->dem[(size_t)i * p->k + r]);
        fprintf(f, " preds");
        for (e = p->pred_off[i]; e < p->pred_off[i + 1]; e++) fprintf(f, " %d", p->pred[e]);
        fprintf(f, "\n");
    }
    for (b = 0; b < p->n_busy; b++) {
        fprintf(f, "busy %lld %lld", (long long)(p->busy_start[b] / g), (long long)(p->busy_end[b] / g));
        for (r = 0; r < p->k; r++) fprintf(f, " %d", (int)p->busy_dem[(size_t)b * p->k + r]);
        fprintf(f, "\n");
    }
    if (fclose(f) != 0 && !wd_failed) {
        fprintf(stderr, "bench_window_dump: cannot write %s\n", path);
        wd_failed = 1;
    }
}

int main(int argc, char** argv) {
    int rc;
    if (argc < 3) {
        fprintf(stderr, "usage: bench_window_dump DIR [psplib's options] FILE.sm\n");
        return 2;
    }
    wd_dir = argv[1];
    argv[1] = argv[0];
    rc = psplib_main(argc - 1, argv + 1);
    fprintf(stderr, "bench_window_dump: %d unproven windows written to %s\n", wd_count, wd_dir);
    return rc != 0 ? rc : wd_failed;
}
