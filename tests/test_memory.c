/* tests/test_memory.c - memory as a hard constraint: transient buffers,
   cc_sched_desc.memory_cap_bytes in every method, cc_memory_check, the
   error when nothing fits, a falling cap, and bad input.

   The references are the test's own: schedules enumerated by brute force
   (every order of the starts, each decoded chronologically with the
   memory held from a buffer's writer's start to its last reader's end),
   the smallest peak of any one-by-one order, and program order's. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

/* ---- small instances: 2 streams, transient buffers, one writer each ---- */
#define MI_MAX_OPS 8
#define MI_MAX_BUF 5

typedef struct mi {
    int n, nb;
    int dur[MI_MAX_OPS], stream[MI_MAX_OPS];
    int dep[MI_MAX_OPS][MI_MAX_OPS];      /* explicit: dep[j][i] = 1: i before j (i < j) */
    int writer[MI_MAX_BUF];
    int reads[MI_MAX_BUF][MI_MAX_OPS];    /* reads[b][j] = 1: op j reads buffer b (j > writer) */
    uint64_t bytes[MI_MAX_BUF];
} mi;

static void mi_random(tu_rng* r, mi* x) {
    int i, j, b;
    memset(x, 0, sizeof *x);
    x->n = tu_randint(r, 5, 7);
    x->nb = tu_randint(r, 2, 4);
    for (i = 0; i < x->n; i++) { x->dur[i] = tu_randint(r, 1, 5); x->stream[i] = tu_randint(r, 0, 1); }
    for (j = 1; j < x->n; j++)
        for (i = 0; i < j; i++) x->dep[j][i] = tu_randint(r, 0, 5) == 0;
    for (b = 0; b < x->nb; b++) {
        int nr = 0;
        x->writer[b] = tu_randint(r, 0, x->n - 2);
        x->bytes[b] = (uint64_t)tu_randint(r, 1, 6) * 100;
        for (j = x->writer[b] + 1; j < x->n; j++)
            if (tu_randint(r, 0, 2) == 0) { x->reads[b][j] = 1; nr++; }
        if (!nr) x->reads[b][tu_randint(r, x->writer[b] + 1, x->n - 1)] = 1;
    }
}

/* i must precede j (explicit or a buffer's writer before its reader). */
static int mi_before(const mi* x, int i, int j) {
    int b;
    if (i < j && x->dep[j][i]) return 1;
    for (b = 0; b < x->nb; b++) if (x->writer[b] == i && x->reads[b][j]) return 1;
    return 0;
}

static cc_graph* mi_graph(const mi* x) {
    cc_graph* g = NULL;
    cc_buffer buf[MI_MAX_BUF];
    cc_op ops[MI_MAX_OPS];
    int i, j, b;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    for (b = 0; b < x->nb; b++) {
        char nm[16];
        snprintf(nm, sizeof nm, "t%d", b);
        if (cc_graph_add_transient(g, nm, x->bytes[b], &buf[b]) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    for (j = 0; j < x->n; j++) {
        cc_region rd[MI_MAX_BUF] = {0}, wr[MI_MAX_BUF] = {0};
        cc_op deps[MI_MAX_OPS];
        int nr = 0, nw = 0, nd = 0;
        char nm[16];
        cc_op_desc d = {0};
        for (b = 0; b < x->nb; b++) {
            cc_region rg = {0};
            rg.buffer = buf[b];
            rg.n_bytes = x->bytes[b];
            if (x->writer[b] == j) wr[nw++] = rg;
            if (x->reads[b][j]) rd[nr++] = rg;
        }
        for (i = 0; i < j; i++) if (x->dep[j][i]) deps[nd++] = ops[i];
        snprintf(nm, sizeof nm, "op%d", j);
        d.name = nm; d.duration_us = x->dur[j]; d.stream = x->stream[j];
        d.reads = rd; d.n_reads = nr; d.writes = wr; d.n_writes = nw; d.deps = deps; d.n_deps = nd;
        if (cc_graph_add_op(g, &d, &ops[j]) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    return g;
}

/* The peak of running the ops one by one in order perm. */
static uint64_t mi_seq_peak(const mi* x, const int* perm) {
    int pos[MI_MAX_OPS], p, b, j;
    uint64_t peak = 0;
    for (p = 0; p < x->n; p++) pos[perm[p]] = p;
    for (p = 0; p < x->n; p++) {
        uint64_t use = 0;
        for (b = 0; b < x->nb; b++) {
            int last = pos[x->writer[b]];
            for (j = 0; j < x->n; j++) if (x->reads[b][j] && pos[j] > last) last = pos[j];
            if (pos[x->writer[b]] <= p && p <= last) use += x->bytes[b];
        }
        if (use > peak) peak = use;
    }
    return peak;
}

/* The makespan of perm's starts placed one after another in time (never
   before the previous start), each as early as its dependencies, its
   stream and the memory allow; -1 if the memory never allows one. Every
   schedule's start order decodes to one no later, so the minimum over
   the orders is the optimum. */
static int mi_decode(const mi* x, const int* perm, uint64_t cap) {
    int st[MI_MAX_OPS], placed[MI_MAX_OPS] = {0}, free_at[2] = {0, 0}, prev = 0, mk = 0, p, i, b, j;
    for (p = 0; p < x->n; p++) {
        int v = perm[p], t = prev;
        uint64_t need = 0;
        for (i = 0; i < x->n; i++) if (placed[i] && mi_before(x, i, v) && st[i] + x->dur[i] > t) t = st[i] + x->dur[i];
        if (free_at[x->stream[v]] > t) t = free_at[x->stream[v]];
        for (b = 0; b < x->nb; b++) if (x->writer[b] == v) need += x->bytes[b];
        if (need && cap) {
            /* the earliest t' >= t with room: the use only falls from t on
               (every later start is at t' or after), at the ends of the
               buffers whose readers are all placed */
            int cand, best = -1;
            for (cand = t; cand <= 1000 && best < 0; cand++) {
                uint64_t use = 0;
                for (b = 0; b < x->nb; b++) {
                    int done = 1, end = 0;
                    if (!placed[x->writer[b]]) continue;
                    for (j = 0; j < x->n; j++)
                        if (x->reads[b][j]) {
                            if (!placed[j]) done = 0;
                            else if (st[j] + x->dur[j] > end) end = st[j] + x->dur[j];
                        }
                    if (!done || end > cand) use += x->bytes[b];
                }
                if (use + need <= cap) best = cand;
            }
            if (best < 0) return -1;
            t = best;
        }
        st[v] = t; placed[v] = 1; prev = t;
        free_at[x->stream[v]] = t + x->dur[v];
        if (t + x->dur[v] > mk) mk = t + x->dur[v];
    }
    return mk;
}

typedef struct mi_ref { int opt; uint64_t min_peak, po_peak; } mi_ref;

static void mi_enum(const mi* x, int* perm, int k, int* used, uint64_t cap, mi_ref* ref) {
    int v, i;
    if (k == x->n) {
        int mk = mi_decode(x, perm, cap);
        uint64_t pk = mi_seq_peak(x, perm);
        if (mk >= 0 && (ref->opt < 0 || mk < ref->opt)) ref->opt = mk;
        if (pk < ref->min_peak) ref->min_peak = pk;
        return;
    }
    for (v = 0; v < x->n; v++) {
        int ok = !used[v];
        for (i = 0; i < x->n && ok; i++) if (!used[i] && i != v && mi_before(x, i, v)) ok = 0;
        if (!ok) continue;
        used[v] = 1; perm[k] = v;
        mi_enum(x, perm, k + 1, used, cap, ref);
        used[v] = 0;
    }
}

static mi_ref mi_reference(const mi* x, uint64_t cap) {
    mi_ref ref;
    int perm[MI_MAX_OPS], used[MI_MAX_OPS] = {0}, i;
    ref.opt = -1; ref.min_peak = UINT64_MAX;
    mi_enum(x, perm, 0, used, cap, &ref);
    for (i = 0; i < x->n; i++) perm[i] = i;
    ref.po_peak = mi_seq_peak(x, perm);
    return ref;
}

static const char* method_name(cc_sched_method m) {
    switch (m) {
        case CC_SCHED_AUTO: return "AUTO";
        case CC_SCHED_LIST: return "LIST";
        case CC_SCHED_SAMPLING: return "SAMPLING";
        case CC_SCHED_BNB: return "BNB";
        default: return "ODD_EVEN";
    }
}

/* Random graphs: every method under caps from the program-order peak
   down to below the smallest feasible one. */
static void test_random_caps(void) {
    static const cc_sched_method methods[] = {CC_SCHED_AUTO, CC_SCHED_LIST, CC_SCHED_SAMPLING, CC_SCHED_BNB, CC_SCHED_ODD_EVEN};
    tu_rng r = {20261128};
    int inst, bad_check = 0, bad_peak = 0, bad_below = 0, bad_po = 0, bad_opt = 0, not_opt_auto = 0, solved = 0, refused = 0;
    int free_opt_bad = 0;
    for (inst = 0; inst < 40; inst++) {
        mi x;
        cc_graph* g;
        mi_ref ref0;
        uint64_t caps[5];
        int c, m;
        mi_random(&r, &x);
        if (!(g = mi_graph(&x))) { CHECK(0, "instance %d builds: %s", inst, cc_last_error(ctx)); return; }
        ref0 = mi_reference(&x, 0);
        {   /* the brute force without a cap is the scheduler's proven optimum */
            cc_sched_desc d = {0};
            cc_schedule s;
            d.method = CC_SCHED_BNB;
            if (cc_sched_solve(ctx, g, &d, &s) == CC_OK) {
                if (s.proven_optimal && fabs(s.makespan_us - ref0.opt) > 1e-9) free_opt_bad++;
                cc_schedule_release(ctx, &s);
            }
        }
        caps[0] = ref0.po_peak;
        caps[1] = (ref0.po_peak + ref0.min_peak) / 2;
        caps[2] = ref0.min_peak;
        caps[3] = ref0.min_peak - 1;
        caps[4] = 0;
        for (c = 0; c < 5; c++) {
            uint64_t cap = caps[c];
            mi_ref ref = cap ? mi_reference(&x, cap) : ref0;
            for (m = 0; m < 5; m++) {
                cc_sched_desc d = {0};
                cc_schedule s;
                cc_result rc;
                d.method = methods[m];
                d.memory_cap_bytes = cap;
                rc = cc_sched_solve(ctx, g, &d, &s);
                if (cap && cap < ref0.min_peak) {
                    /* a buffer larger than the cap is refused before the search */
                    int too_large = 0, bb;
                    for (bb = 0; bb < x.nb; bb++) if (x.bytes[bb] > cap) too_large = 1;
                    if (rc != (too_large ? CC_ERR_CAPACITY : CC_ERR_INFEASIBLE) || !strstr(cc_last_error(ctx), "memory_cap_bytes")) {
                        bad_below++;
                        th__note("instance %d cap %llu below the smallest peak %llu: %s gave %s", inst, (unsigned long long)cap,
                                 (unsigned long long)ref0.min_peak, method_name(methods[m]), tu_res_name(rc));
                    } else refused++;
                    if (rc == CC_OK) cc_schedule_release(ctx, &s);
                    continue;
                }
                if (rc != CC_OK) {
                    if (cap >= ref0.po_peak || cap == 0) {
                        bad_po++;
                        th__note("instance %d cap %llu (program order peaks at %llu): %s failed: %s", inst, (unsigned long long)cap,
                                 (unsigned long long)ref0.po_peak, method_name(methods[m]), cc_last_error(ctx));
                    }
                    continue;
                }
                solved++;
                {
                    uint64_t pk = 0;
                    if (cc_memory_check(ctx, g, s.start_us, NULL, cap, &pk, NULL) != CC_OK ||
                        cc_schedule_check(ctx, g, s.start_us, NULL) != CC_OK) {
                        bad_check++;
                        th__note("instance %d cap %llu %s: %s", inst, (unsigned long long)cap, method_name(methods[m]), cc_last_error(ctx));
                    }
                    if (pk != s.peak_bytes) bad_peak++;
                }
                if (ref.opt < 0 || s.makespan_us < ref.opt - 1e-9) {
                    bad_opt++;
                    th__note("instance %d cap %llu %s: makespan %g below the optimum %d", inst, (unsigned long long)cap,
                             method_name(methods[m]), s.makespan_us, ref.opt);
                }
                if ((methods[m] == CC_SCHED_AUTO || methods[m] == CC_SCHED_SAMPLING) && fabs(s.makespan_us - ref.opt) > 1e-9) {
                    not_opt_auto++;
                    th__note("instance %d cap %llu %s: makespan %g, the optimum under the cap %d", inst, (unsigned long long)cap,
                             method_name(methods[m]), s.makespan_us, ref.opt);
                }
                cc_schedule_release(ctx, &s);
            }
        }
        cc_graph_destroy(g);
    }
    CHECK(free_opt_bad == 0, "without a cap, the brute force equals branch and bound's proven optimum (%d differ)", free_opt_bad);
    CHECK(bad_check == 0, "every schedule under a cap passes cc_memory_check and cc_schedule_check (%d of %d fail)", bad_check, solved);
    CHECK(bad_peak == 0, "cc_schedule.peak_bytes is the peak cc_memory_check finds (%d differ)", bad_peak);
    CHECK(bad_below == 0, "below the smallest peak of any order every method fails naming the cap: CC_ERR_CAPACITY where one "
          "buffer is larger, else CC_ERR_INFEASIBLE "
          "(%d did not; %d refused)", bad_below, refused);
    CHECK(bad_po == 0, "at or above program order's peak every method succeeds (%d failed)", bad_po);
    CHECK(bad_opt == 0, "no makespan is below the brute-force optimum under its cap (%d are)", bad_opt);
    CHECK(not_opt_auto == 0, "AUTO and SAMPLING reach the brute-force optimum under every feasible cap (%d missed)", not_opt_auto);
}

/* ---- a prefetch-heavy step: ZeRO-3's gathers, twice per layer ---- */
typedef struct z3 { cc_graph* g; uint64_t po_peak; } z3;

/* L layers: forward gathers gp<i> (comm), fwd<i> reads it and writes the
   activation act<i>; backward gathers gb<i> again, bwd<i> reads it and
   act<i> and writes the gradient gr<i>, reduce-scattered by rs<i> (comm)
   into a bound shard. Program order prefetches nothing. */
static z3 z3_step(int L) {
    z3 z;
    cc_buffer shard, gp, gb, act[64], gr;
    uint64_t P = 4000, A = 1000, G = 4000;
    int i;
    z.g = NULL; z.po_peak = 0;
    if (L > 64 || cc_graph_create(ctx, NULL, &z.g) != CC_OK) return z;
    cc_graph_add_buffer(z.g, "shard", 1u << 20, &shard);
    for (i = 0; i < L; i++) {
        char nm[32];
        cc_op_desc d = {0};
        cc_region w = {0}, rd[2] = {0};
        snprintf(nm, sizeof nm, "gp%d", i); cc_graph_add_transient(z.g, nm, P, &gp);
        snprintf(nm, sizeof nm, "act%d", i); cc_graph_add_transient(z.g, nm, A, &act[i]);
        w.buffer = gp; w.offset_bytes = 0; w.n_bytes = P; w.split_rows = 0;
        snprintf(nm, sizeof nm, "ag_f%d", i);
        d.name = nm; d.duration_us = 3; d.stream = CC_STREAM_COMM; d.writes = &w; d.n_writes = 1;
        cc_graph_add_op(z.g, &d, NULL);
        rd[0] = w;
        w.buffer = act[i]; w.n_bytes = A;
        snprintf(nm, sizeof nm, "fwd%d", i);
        d.name = nm; d.duration_us = 4; d.stream = CC_STREAM_COMPUTE; d.reads = rd; d.n_reads = 1; d.writes = &w; d.n_writes = 1;
        cc_graph_add_op(z.g, &d, NULL);
    }
    for (i = L - 1; i >= 0; i--) {
        char nm[32];
        cc_op_desc d = {0};
        cc_region w = {0}, rd[2] = {0};
        snprintf(nm, sizeof nm, "gb%d", i); cc_graph_add_transient(z.g, nm, P, &gb);
        snprintf(nm, sizeof nm, "gr%d", i); cc_graph_add_transient(z.g, nm, G, &gr);
        w.buffer = gb; w.offset_bytes = 0; w.n_bytes = P; w.split_rows = 0;
        snprintf(nm, sizeof nm, "ag_b%d", i);
        d.name = nm; d.duration_us = 3; d.stream = CC_STREAM_COMM; d.writes = &w; d.n_writes = 1;
        cc_graph_add_op(z.g, &d, NULL);
        rd[0] = w;
        rd[1].buffer = act[i]; rd[1].offset_bytes = 0; rd[1].n_bytes = A; rd[1].split_rows = 0;
        w.buffer = gr; w.n_bytes = G;
        snprintf(nm, sizeof nm, "bwd%d", i);
        d.name = nm; d.duration_us = 8; d.stream = CC_STREAM_COMPUTE; d.reads = rd; d.n_reads = 2; d.writes = &w; d.n_writes = 1;
        cc_graph_add_op(z.g, &d, NULL);
        rd[0] = w;
        w.buffer = shard; w.offset_bytes = (uint64_t)i * (G / 4); w.n_bytes = G / 4;
        snprintf(nm, sizeof nm, "rs%d", i);
        d.name = nm; d.duration_us = 3; d.stream = CC_STREAM_COMM; d.reads = rd; d.n_reads = 1; d.writes = &w; d.n_writes = 1;
        cc_graph_add_op(z.g, &d, NULL);
    }
    /* one by one in program order: the forward's peak is every activation
       but the last plus the last layer's gathered copy and activation; the
       backward's: the activations left, gb and gr of a layer */
    {
        uint64_t f = (uint64_t)L * A + P, b = (uint64_t)L * A + P + G;
        z.po_peak = f > b ? f : b;
    }
    return z;
}

/* The cap falls from the unlimited peak to program order's; solved from
   the tightest up, each from the schedule before: the peak never exceeds
   the cap, every solve succeeds, the step time never grows as the cap
   rises. */
static void falling_cap(int L, cc_sched_method method) {
    z3 z = z3_step(L);
    cc_schedule s0, prev;
    cc_sched_desc d = {0};
    uint64_t free_peak = 0, caps[8];
    int i, ok_all = 1, mono = 1, fits = 1;
    double t_first = 0, t_last = 0;
    if (!z.g) { CHECK(0, "the ZeRO-3 step of %d layers builds", L); return; }
    d.method = method;
    if (cc_sched_solve(ctx, z.g, &d, &s0) != CC_OK) { CHECK(0, "uncapped solve: %s", cc_last_error(ctx)); cc_graph_destroy(z.g); return; }
    CHECK_RES(ctx, cc_memory_check(ctx, z.g, s0.start_us, NULL, 0, &free_peak, NULL), CC_OK, "the uncapped schedule's peak");
    CHECK(free_peak > z.po_peak, "%d layers, %s: unlimited, the schedule prefetches: peak %llu above program order's %llu",
          L, method_name(method), (unsigned long long)free_peak, (unsigned long long)z.po_peak);
    for (i = 0; i < 8; i++) caps[i] = z.po_peak + (free_peak - z.po_peak) * (uint64_t)i / 7;
    memset(&prev, 0, sizeof prev);
    for (i = 0; i < 8; i++) {
        cc_schedule s;
        uint64_t pk = 0;
        d.memory_cap_bytes = caps[i];
        d.start_from = i ? &prev : NULL;
        if (cc_sched_solve(ctx, z.g, &d, &s) != CC_OK) {
            ok_all = 0;
            th__note("cap %llu: %s", (unsigned long long)caps[i], cc_last_error(ctx));
            continue;
        }
        if (cc_memory_check(ctx, z.g, s.start_us, NULL, caps[i], &pk, NULL) != CC_OK) fits = 0;
        if (i && prev.n_ops && s.makespan_us > prev.makespan_us + 1e-9) {
            mono = 0;
            th__note("cap %llu: %g us, above %g us under the tighter cap", (unsigned long long)caps[i], s.makespan_us, prev.makespan_us);
        }
        if (i == 0) t_first = s.makespan_us;
        t_last = s.makespan_us;
        th__note("%d layers, %s, cap %llu: step %.1f us, peak %llu", L, method_name(method), (unsigned long long)caps[i],
                 s.makespan_us, (unsigned long long)pk);
        cc_schedule_release(ctx, &prev);
        prev = s;
    }
    CHECK(ok_all, "%d layers, %s: every cap from program order's peak up is solved", L, method_name(method));
    CHECK(fits, "%d layers, %s: every schedule's peak, by cc_memory_check, is within its cap", L, method_name(method));
    CHECK(mono, "%d layers, %s: the step time never grows as the cap rises", L, method_name(method));
    CHECK(t_last <= s0.makespan_us + 1e-9 || t_last <= t_first, "%d layers, %s: the loosest cap's step (%g us) is no later than "
          "the tightest's (%g us)", L, method_name(method), t_last, t_first);
    {   /* below the smallest one-by-one peak: the error names the cap and buffers */
        cc_schedule s;
        d.start_from = NULL;
        d.memory_cap_bytes = 2 * 4000 + 1000 - 1;   /* a layer's gb, gr and its activation never fit */
        CHECK_RES(ctx, cc_sched_solve(ctx, z.g, &d, &s), CC_ERR_INFEASIBLE, "%d layers, %s: a cap below any order's peak",
                  L, method_name(method));
        CHECK_CONTAINS(cc_last_error(ctx), "memory_cap_bytes = 8999", "the error names the cap");
        CHECK_CONTAINS(cc_last_error(ctx), "buffers alive", "the error lists the buffers alive at the peak");
    }
    cc_schedule_release(ctx, &prev);
    cc_schedule_release(ctx, &s0);
    cc_graph_destroy(z.g);
}

static void test_falling_cap(void) {
    falling_cap(8, CC_SCHED_AUTO);       /* 40 ops: evolution and branch and bound */
    falling_cap(50, CC_SCHED_AUTO);      /* 250 ops: odd-even windows */
    falling_cap(8, CC_SCHED_LIST);
}

/* The peak of an issue order: cc_simulate's starts through cc_memory_check,
   against a hand count. */
static void test_issue_order_peak(void) {
    z3 z = z3_step(3);
    cc_op order[64];
    double st[64], mk = 0;
    uint64_t pk = 0;
    int i, n;
    if (!z.g) { CHECK(0, "setup"); return; }
    n = cc_graph_n_ops(z.g);
    for (i = 0; i < n; i++) order[i] = cc_graph_op(z.g, i);
    CHECK_RES(ctx, cc_simulate(ctx, z.g, order, n, st, &mk), CC_OK, "simulate program order");
    CHECK_RES(ctx, cc_memory_check(ctx, z.g, st, NULL, 0, &pk, NULL), CC_OK, "its peak");
    /* streams overlap: ag_f1 runs beside fwd0 etc.; the peak is at least
       program order's one-by-one peak and at most every buffer at once */
    CHECK(pk >= z.po_peak && pk <= 3 * (4000 + 1000 + 4000 + 4000), "the simulated order peaks between the one-by-one peak and "
          "the sum of all buffers (%llu)", (unsigned long long)pk);
    CHECK_RES(ctx, cc_memory_check(ctx, z.g, st, NULL, pk - 1, NULL, NULL), CC_ERR_INVALID_SCHEDULE, "a cap one byte under its peak");
    CHECK_CONTAINS(cc_last_error(ctx), "above the cap", "the checker's message");
    cc_graph_destroy(z.g);
}

/* Hand-made: two buffers back to back (end == start) are not alive together. */
static void test_check_by_hand(void) {
    cc_graph* g = NULL;
    cc_buffer a, b;
    cc_op_desc d = {0};
    cc_region ra = {0}, rb = {0};
    double s[4];
    uint64_t pk = 0;
    double at = -1;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "setup"); return; }
    cc_graph_add_transient(g, "a", 300, &a);
    cc_graph_add_transient(g, "b", 500, &b);
    ra.buffer = a; ra.offset_bytes = 0; ra.n_bytes = 300; ra.split_rows = 0;
    rb = ra; rb.buffer = b; rb.n_bytes = 500;
    d.duration_us = 2; d.stream = 0;
    d.name = "wa"; d.writes = &ra; d.n_writes = 1; cc_graph_add_op(g, &d, NULL);
    d.name = "ra"; d.writes = NULL; d.n_writes = 0; d.reads = &ra; d.n_reads = 1; cc_graph_add_op(g, &d, NULL);
    d.name = "wb"; d.stream = 1; d.reads = NULL; d.n_reads = 0; d.writes = &rb; d.n_writes = 1; cc_graph_add_op(g, &d, NULL);
    d.name = "rb"; d.writes = NULL; d.n_writes = 0; d.reads = &rb; d.n_reads = 1; cc_graph_add_op(g, &d, NULL);
    s[0] = 0; s[1] = 2; s[2] = 4; s[3] = 6;   /* a [0,4), b [4,8) */
    CHECK_RES(ctx, cc_memory_check(ctx, g, s, NULL, 500, &pk, &at), CC_OK, "back to back: within a cap of 500");
    CHECK(pk == 500 && at == 4, "the peak is b's 500 bytes at 4 us (got %llu at %g)", (unsigned long long)pk, at);
    s[2] = 3; s[3] = 5;                        /* b [3,7) overlaps a's last microsecond */
    CHECK_RES(ctx, cc_memory_check(ctx, g, s, NULL, 700, &pk, &at), CC_ERR_INVALID_SCHEDULE, "overlapping by 1 us: above 700");
    CHECK(pk == 800 && at == 3, "the peak is 800 bytes at 3 us (got %llu at %g)", (unsigned long long)pk, at);
    CHECK_CONTAINS(cc_last_error(ctx), "'a' (300)", "the message names buffer a");
    CHECK_CONTAINS(cc_last_error(ctx), "'b' (500)", "the message names buffer b");
    {   /* the solve under 500 keeps them apart; under 499 b alone is too large */
        cc_sched_desc sd = {0};
        cc_schedule sc;
        static const uint64_t cap[2] = {500, 0};
        static const double want_mk[2] = {8, 4};
        static const uint64_t want_pk[2] = {500, 800};
        int k;
        for (k = 0; k < 2; k++) {   /* under 500 the streams wait for each other; without a cap they overlap */
            sd.memory_cap_bytes = cap[k];
            CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &sc), CC_OK, "solve under a cap of %llu (0: none)", (unsigned long long)cap[k]);
            if (!sc.n_ops) continue;
            CHECK(sc.makespan_us == want_mk[k] && sc.peak_bytes == want_pk[k], "%g us, peak %llu (got %g, %llu)", want_mk[k],
                  (unsigned long long)want_pk[k], sc.makespan_us, (unsigned long long)sc.peak_bytes);
            cc_schedule_release(ctx, &sc);
        }
        sd.memory_cap_bytes = 499;
        CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &sc), CC_ERR_CAPACITY, "a buffer larger than the cap");
        CHECK_CONTAINS(cc_last_error(ctx), "'b'", "the error names the buffer");
        CHECK_CONTAINS(cc_last_error(ctx), "499", "and the cap");
    }
    cc_graph_destroy(g);
}

static void test_bad_input(void) {
    cc_graph* g = NULL;
    cc_buffer a, b, c;
    cc_op_desc d = {0};
    cc_region ra = {0}, rb = {0};
    cc_schedule s;
    cc_sched_desc sd = {0};
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) { CHECK(0, "setup"); return; }
    CHECK_RES(ctx, cc_graph_add_transient(g, "empty", 0, &c), CC_ERR_INVALID_ARG, "a transient buffer of 0 bytes");
    CHECK_CONTAINS(cc_last_error(ctx), "'empty'", "the error names it");
    cc_graph_add_transient(g, "unread", 64, &a);
    cc_graph_add_transient(g, "early", 64, &b);
    CHECK(cc_graph_n_buffers(g) == 2 && cc_buffer_transient(g, a) && cc_buffer_bytes(g, b) == 64 &&
          strcmp(cc_buffer_name(g, cc_graph_buffer(g, 1)), "early") == 0 && cc_buffer_index(g, b) == 1,
          "the buffer getters");
    ra.buffer = a; ra.offset_bytes = 0; ra.n_bytes = 64; ra.split_rows = 0;
    d.name = "w"; d.duration_us = 1; d.writes = &ra; d.n_writes = 1;
    cc_graph_add_op(g, &d, NULL);
    CHECK_RES(ctx, cc_graph_validate(g), CC_ERR_INVALID_ARG, "a transient buffer no op reads");
    CHECK_CONTAINS(cc_last_error(ctx), "'unread'", "the error names it");
    rb = ra; rb.buffer = b;
    d.name = "r"; d.writes = NULL; d.n_writes = 0; d.reads = &ra; d.n_reads = 1;
    cc_graph_add_op(g, &d, NULL);
    d.name = "reads_early"; d.reads = &rb;
    cc_graph_add_op(g, &d, NULL);
    CHECK_RES(ctx, cc_graph_validate(g), CC_ERR_INVALID_ARG, "a transient buffer read before it is written");
    CHECK_CONTAINS(cc_last_error(ctx), "'early'", "the error names the buffer");
    CHECK_CONTAINS(cc_last_error(ctx), "'reads_early'", "and the op");
    CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_ERR_INVALID_ARG, "the solve refuses the graph too");
    cc_graph_destroy(g);
    {   /* start_from that is not a schedule of the graph */
        z3 z = z3_step(2);
        cc_schedule f;
        double st[16] = {0};
        if (!z.g) { CHECK(0, "setup"); return; }
        memset(&f, 0, sizeof f);
        f.n_ops = cc_graph_n_ops(z.g);
        f.start_us = st;   /* everything at 0: dependencies broken */
        sd.start_from = &f;
        CHECK_RES(ctx, cc_sched_solve(ctx, z.g, &sd, &s), CC_ERR_INVALID_ARG, "start_from breaking the dependencies");
        CHECK_CONTAINS(cc_last_error(ctx), "start_from", "the error names start_from");
        f.n_ops = 3;
        CHECK_RES(ctx, cc_sched_solve(ctx, z.g, &sd, &s), CC_ERR_INVALID_ARG, "start_from of another size");
        cc_graph_destroy(z.g);
    }
}

/* Without transient buffers a cap changes nothing. */
static void test_cap_without_transients(void) {
    tu_rng r = {7};
    tu_gen gen;
    int i, same = 1;
    memset(&gen, 0, sizeof gen);
    gen.n_min = gen.n_max = 30; gen.k_min = gen.k_max = 2; gen.streams = 1;
    gen.dur_max = 9; gen.unit_us = 1; gen.p_edge_max = 0.2;
    for (i = 0; i < 5; i++) {
        tu_inst* in = tu_random_inst(&r, &gen);
        cc_graph* g = NULL;
        cc_schedule a, b;
        cc_sched_desc d = {0};
        if (!in || tu_build_graph(ctx, in, &g) != CC_OK) { CHECK(0, "setup"); tu_inst_free(in); return; }
        if (cc_sched_solve(ctx, g, &d, &a) == CC_OK) {
            d.memory_cap_bytes = 1;
            if (cc_sched_solve(ctx, g, &d, &b) == CC_OK) {
                if (a.makespan_us != b.makespan_us || memcmp(a.start_us, b.start_us, (size_t)a.n_ops * sizeof(double))) same = 0;
                cc_schedule_release(ctx, &b);
            } else same = 0;
            cc_schedule_release(ctx, &a);
        } else same = 0;
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK(same, "a graph without transient buffers schedules the same under any cap");
}

/* A fusion whose best schedule breaks the cap is not kept. Two in-place
   all-reduces of adjacent pieces (program order: a0 w1 ar1 w2 ar2 c1 c2);
   c1, the last reader of transient A, needs the first's result, w2
   allocates transient B for c2. Apart, c1 can free A before w2 allocates
   B; fused, the bucket waits for w2, so A and B are alive together: above
   a cap of one of them. */
static cc_graph* fuse_case(void) {
    static float mem[512];
    static int comm;   /* its address stands for a communicator: the rewrite only compares it */
    cc_graph* g = NULL;
    cc_buffer p[2], a, b;
    cc_region rp[2] = {0}, ra = {0}, rb = {0}, rr[2] = {0};
    cc_collective co;
    cc_op_desc d = {0};
    int i;
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    cc_graph_add_buffer(g, "p1", 1024, &p[0]);
    cc_graph_add_buffer(g, "p2", 512, &p[1]);
    cc_graph_add_transient(g, "A", 1000, &a);
    cc_graph_add_transient(g, "B", 1000, &b);
    for (i = 0; i < 2; i++) { rp[i].buffer = p[i]; rp[i].offset_bytes = 0; rp[i].n_bytes = i ? 512 : 1024; rp[i].split_rows = 0; }
    ra = rp[0]; ra.buffer = a; ra.n_bytes = 1000;
    rb = ra; rb.buffer = b;
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.dtype = CC_DTYPE_FLOAT32; co.reduce = CC_REDUCE_SUM; co.comm = (cc_comm*)(void*)&comm;
    co.n_elems = 256;
    d.name = "a0"; d.duration_us = 5; d.writes = &ra; d.n_writes = 1; cc_graph_add_op(g, &d, NULL);
    d.name = "w1"; d.writes = &rp[0]; d.reads = &ra; d.n_reads = 1; cc_graph_add_op(g, &d, NULL);   /* A from the start */
    co.send_buf = co.recv_buf = mem;
    d.name = "ar1"; d.duration_us = 300; d.stream = CC_STREAM_COMM; d.coll = &co; d.reads = &rp[0]; d.n_reads = 1;
    d.writes = &rp[0]; d.n_writes = 1; cc_graph_add_op(g, &d, NULL);
    rr[0] = rb; rr[1] = rp[1];
    d = (cc_op_desc){0};
    d.name = "w2"; d.duration_us = 5; d.writes = rr; d.n_writes = 2; cc_graph_add_op(g, &d, NULL);
    co.send_buf = co.recv_buf = mem + 256;
    co.n_elems = 128;
    d = (cc_op_desc){0};
    d.name = "ar2"; d.duration_us = 250; d.stream = CC_STREAM_COMM; d.coll = &co; d.reads = &rp[1]; d.n_reads = 1;
    d.writes = &rp[1]; d.n_writes = 1; cc_graph_add_op(g, &d, NULL);
    ra = rb; ra.buffer = a;
    rr[0] = rp[0]; rr[1] = ra;
    d = (cc_op_desc){0};
    d.name = "c1"; d.duration_us = 5; d.reads = rr; d.n_reads = 2; cc_graph_add_op(g, &d, NULL);
    rr[0] = rb; rr[1] = rp[1];
    d = (cc_op_desc){0};
    d.name = "c2"; d.duration_us = 5; d.reads = rr; d.n_reads = 2; cc_graph_add_op(g, &d, NULL);
    return g;
}

static void test_fusion_over_cap(void) {
    cc_graph *g = fuse_case(), *f = NULL;
    cc_rewrite_desc rd;
    cc_rewrite_report rep;
    if (!g) { CHECK(0, "setup"); return; }
    memset(&rd, 0, sizeof rd);
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &f, &rep), CC_OK, "fusion without a cap");
    CHECK(rep.n_changed == 1 && rep.n_over_cap == 0, "without a cap the two all-reduces fuse (%d buckets)", rep.n_changed);
    if (f) {
        cc_schedule s;
        cc_sched_desc sd = {0};
        sd.memory_cap_bytes = 1000;
        CHECK_RES(ctx, cc_sched_solve(ctx, f, &sd, &s), CC_ERR_INFEASIBLE, "the fused step fits no order under 1000 bytes");
        cc_graph_destroy(f);
        f = NULL;
    }
    rd.sched.memory_cap_bytes = 1000;
    cc_clear_error(ctx);
    CHECK_RES(ctx, cc_graph_fuse(ctx, g, &rd, &f, &rep), CC_OK, "fusion under a cap of 1000 bytes");
    CHECK(rep.n_changed == 0 && rep.n_over_cap == 1 && rep.n_colls_after == 2, "under the cap the bucket is not kept, and the "
          "report counts it (%d buckets, %d over the cap)", rep.n_changed, rep.n_over_cap);
    CHECK(strcmp(cc_last_error(ctx), "") == 0, "the dropped candidate's error is not left as the rewrite's (\"%s\")", cc_last_error(ctx));
    if (f) {
        CHECK(cc_graph_n_buffers(f) == 4 && cc_buffer_transient(f, cc_graph_buffer(f, 2)) && !cc_buffer_transient(f, cc_graph_buffer(f, 0)),
              "the rewritten graph keeps which buffers are transient");
        cc_graph_destroy(f);
    }
    cc_graph_destroy(g);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) return 1;
    TH_RUN(test_check_by_hand);
    TH_RUN(test_bad_input);
    TH_RUN(test_cap_without_transients);
    TH_RUN(test_issue_order_peak);
    TH_RUN(test_fusion_over_cap);
    TH_RUN(test_random_caps);
    TH_RUN(test_falling_cap);
    cc_context_destroy(ctx);
    return th_done();
}
