/* tests/test_lcg.c - lazy clause generation (>>lcg of concerto_rcpsp.h):
   - soundness of every clause it derives: on 300 random problems of 2-5
     jobs, each explanation, conflict and learnt clause is checked against
     every schedule the test enumerates (precedence, capacities, every job
     ending by the solver's target at that moment): each must hold in all
     of them, or the solver could cut an optimum;
   - against the test's own brute force on 1,000 random instances of 2-10
     ops (cumulative resources, tight capacities, unary resources beside a
     cumulative one, stream graphs, sets of jobs that pairwise cannot
     overlap): from a poor incumbent (program order, no improvement) it
     must find and prove the brute-force optimum, from an optimal one prove
     it; every schedule valid by the test's checker and cc_schedule_check;
   - its incremental time-tabling (profiles kept where no compulsory part
     changed; only the jobs that moved and those whose windows meet a
     change rescanned; nothing rescanned after a backjump) against passes
     that rebuild and rescan everything every time, on 150 random problems
     whose jobs use some of 2-4 resources: the same conflicts, schedule
     and proof;
   - AUTO above 32 ops with restarts: the solver runs in place of the
     branch and bound with half of bnb_nodes as conflicts, and where it
     cannot take the graph (a horizon above its limit) the branch and
     bound runs; valid schedules;
   - time-tabling on hand-made cases where it must and must not move a
     bound, and must and must not fail;
   - its schedule check (cc__lcg_verify) on starts that break a precedence
     and a capacity;
   - what it does not take (releases, busy blocks): CC_ERR_UNSUPPORTED with
     the incumbent untouched; a known lower bound at the incumbent ends it;
   - every allocation refused in turn: out of memory with the incumbent
     unchanged, or the same result; nothing leaked;
   - PSPLIB j3013_1 (group 13, the one the branch and bound does not
     prove), from its optimum 58 (from j30_bounds.csv): proven, the same
     conflicts on a second run; from a schedule of 59 it finds 58.
   This program compiles the implementation itself to reach the solver,
   which is private to the implementation's translation unit, and its test
   hooks (cc__lcg_hooks). */
#define _POSIX_C_SOURCE 200809L   /* the implementation needs POSIX threads and clocks */
#include "invariants.h"
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"
#include "../concerto_rcpsp.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;

/* The solver's test hooks (cc__lcg_hooks): every derived clause to
   lcg_clause_hook; tt_full 1: every time-tabling pass rebuilds and
   rescans all. */
static void lcg_clause_hook(const struct cc__lcg* L, const int* lits, int n);
static cc__lcg_hooks lcg_hooks = { lcg_clause_hook, 0 };

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LCG_STRIDE 3   /* every third instance under the sanitizers (several times slower) */
#else
#define LCG_STRIDE 1
#endif

/* ---- a hand-built problem ------------------------------------------------*/
#define HP_N 8
typedef struct hprob {
    cc__prob p;
    cc__time dur[HP_N];
    int32_t dem[HP_N * 2], cap[2];
    int succ_off[HP_N + 1], succ[HP_N * HP_N], pred_off[HP_N + 1], pred[HP_N * HP_N];
} hprob;

/* n jobs on k resources; edges e[2i] -> e[2i + 1] */
static void hp_init(hprob* h, int n, int k, const int* dur, const int* dem, const int* cap, const int* e, int ne) {
    int i, j, c;
    memset(h, 0, sizeof *h);
    for (i = 0; i < n; i++) h->dur[i] = dur[i];
    for (i = 0; i < n * k; i++) h->dem[i] = dem[i];
    for (i = 0; i < k; i++) h->cap[i] = cap[i];
    for (i = 0, c = 0; i < n; i++) {
        h->succ_off[i] = c;
        for (j = 0; j < ne; j++) if (e[2 * j] == i) h->succ[c++] = e[2 * j + 1];
    }
    h->succ_off[n] = c;
    for (i = 0, c = 0; i < n; i++) {
        h->pred_off[i] = c;
        for (j = 0; j < ne; j++) if (e[2 * j + 1] == i) h->pred[c++] = e[2 * j];
    }
    h->pred_off[n] = c;
    h->p.n = n; h->p.k = k; h->p.dur = h->dur; h->p.dem = h->dem; h->p.cap = h->cap;
    h->p.succ_off = h->succ_off; h->p.succ = h->succ; h->p.pred_off = h->pred_off; h->p.pred = h->pred;
    h->p.grain = 1;
    h->p.slow[0] = h->p.slow[1] = 1;
}

/* ---- soundness of every derived clause -------------------------------------*/
/* The schedules of the problem under test (starts in steps), enumerated
   once; the hook checks each clause against those ending by L->T. */
static struct {
    int active, n, count;
    int* starts;     /* [count * n] */
    int* makespan;   /* [count] */
    long clauses, bad, orders;   /* orders: clauses with a pair's order among their literals */
} snd;

static int lit_true(const struct cc__lcg* L, int lit, const int* s) {
    int v = lit >> 1, j, t, ge;
    if (v >= L->nb) {   /* an order: the first job ends by the other's start */
        int a = L->pi[v - L->nb], b = L->pj[v - L->nb];
        return (lit & 1) ? s[a] >= s[b] + L->D[b] : s[b] >= s[a] + L->D[a];
    }
    j = L->vjob[v]; t = cc__lcg_vt(L, v); ge = s[j] >= t;
    return (lit & 1) ? !ge : ge;
}

static void lcg_clause_hook(const struct cc__lcg* L, const int* lits, int n) {
    int q, i;
    if (!snd.active) return;
    snd.clauses++;
    for (i = 0; i < n; i++)
        if ((lits[i] >> 1) >= L->nb) { snd.orders++; break; }
    for (q = 0; q < snd.count; q++) {
        const int* s = snd.starts + (size_t)q * snd.n;
        int sat = 0;
        if (snd.makespan[q] > L->T) continue;
        for (i = 0; i < n && !sat; i++) sat = lit_true(L, lits[i], s);
        if (!sat) {
            if (snd.bad++ < 3) {
                char buf[200];
                int o = 0;
                for (i = 0; i < snd.n && o < 150; i++) o += snprintf(buf + o, sizeof buf - (size_t)o, " %d", s[i]);
                NOTE("a clause of %d literals (target %d) cuts the schedule%s", n, L->T, buf);
            }
            return;
        }
    }
}

/* every start vector with starts in [0, T], kept where it meets the problem */
static void snd_enumerate(const cc__prob* p, int T) {
    int n = p->n, i, e, r, t, total = 1;
    int* s = (int*)calloc((size_t)n, sizeof *s);
    for (i = 0; i < n; i++) total *= T + 1;
    snd.n = n;
    snd.count = 0;
    snd.starts = (int*)malloc((size_t)total * n * sizeof *snd.starts);
    snd.makespan = (int*)malloc((size_t)total * sizeof *snd.makespan);
    for (;;) {
        int ok = 1, mk = 0;
        for (i = 0; i < n && ok; i++) {
            if (s[i] + p->dur[i] > T) ok = 0;
            if (s[i] + p->dur[i] > mk) mk = s[i] + (int)p->dur[i];
            for (e = p->succ_off[i]; e < p->succ_off[i + 1] && ok; e++)
                if (s[p->succ[e]] < s[i] + p->dur[i]) ok = 0;
        }
        for (r = 0; r < p->k && ok; r++)
            for (t = 0; t <= T && ok; t++) {
                int64_t u = 0;
                for (i = 0; i < n; i++)
                    if (s[i] <= t && t < s[i] + p->dur[i]) u += p->dem[i * p->k + r];
                if (u > p->cap[r]) ok = 0;
            }
        if (ok) {
            memcpy(snd.starts + (size_t)snd.count * n, s, (size_t)n * sizeof *s);
            snd.makespan[snd.count++] = mk;
        }
        for (i = 0; i < n; i++) {
            if (++s[i] <= T) break;
            s[i] = 0;
        }
        if (i == n) break;
    }
    free(s);
}

static void test_clause_soundness(void) {
    tu_rng rng = {77031};
    int trial, n_trials = 300, bad_opt = 0, n_proofs = 0;
    for (trial = 0; trial < n_trials; trial++) {
        hprob h;
        int n = tu_randint(&rng, 2, 5), k = tu_randint(&rng, 1, 2), i, r, ne = 0, dur[HP_N], dem[HP_N * 2], cap[2], e[HP_N * HP_N];
        int serial = 0, best_mk = 1 << 30, q;
        cc__time best[HP_N];
        cc__bnb_result res;
        cc_result rc;
        for (r = 0; r < k; r++) cap[r] = tu_randint(&rng, 1, 3);
        for (i = 0; i < n; i++) {
            dur[i] = tu_randint(&rng, 1, 3);
            for (r = 0; r < k; r++) dem[i * k + r] = tu_randint(&rng, 0, cap[r]);
        }
        for (i = 0; i < n; i++) {
            int j;
            for (j = i + 1; j < n; j++)
                if (tu_unit(&rng) < 0.2) { e[2 * ne] = i; e[2 * ne + 1] = j; ne++; }
        }
        hp_init(&h, n, k, dur, dem, cap, e, ne);
        /* the incumbent: the jobs one after another (valid, usually poor) */
        for (i = 0; i < n; i++) { best[i] = serial; serial += dur[i]; }
        if (serial > 8 || serial < 2) continue;   /* keeps the enumeration small */
        snd_enumerate(&h.p, serial);
        for (q = 0; q < snd.count; q++) if (snd.makespan[q] < best_mk) best_mk = snd.makespan[q];
        snd.active = 1;
        rc = cc__lcg_solve_hooked(ctx, &h.p, best, 0, 0, 0, 0, &lcg_hooks, &res);
        snd.active = 0;
        if (rc != CC_OK || !res.proven || res.makespan != best_mk) {
            if (bad_opt++ < 3) NOTE("trial %d (n=%d): rc %d, makespan %lld proven %d, enumeration %d", trial, n, (int)rc,
                                    (long long)res.makespan, res.proven, best_mk);
        } else n_proofs++;
        free(snd.starts); free(snd.makespan);
        snd.starts = NULL; snd.makespan = NULL;
    }
    NOTE("%ld clauses checked against every schedule by the target, %d proofs", snd.clauses, n_proofs);
    CHECK(snd.clauses > 500, "the problems derive clauses to check (%ld)", snd.clauses);
    CHECK(snd.orders > 50, "pairs' orders among them (%ld)", snd.orders);
    CHECK_INT(snd.bad, 0, "no explanation, conflict or learnt clause cuts a schedule that ends by the target");
    CHECK_INT(bad_opt, 0, "the enumeration's optimum found and proven");
}

/* ---- against brute force ---------------------------------------------------*/
static int to_ticks(const cc_schedule* s, int n, cc__time* st) {
    int i;
    for (i = 0; i < n; i++) st[i] = (cc__time)llround(s->start_us[i] * CONCERTO__TICKS_PER_US);
    return 1;
}

static void test_brute_force(void) {
    tu_rng rng = {20251126};
    int trial, n_trials = 1000, bad_solve = 0, bad_valid = 0, bad_opt = 0, n_run = 0, n_search = 0;
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        cc__prob p;
        double opt;
        int v, kind = trial % 5;
        gen.n_min = 2; gen.n_max = 10;
        gen.k_min = 1; gen.k_max = 3;
        gen.streams = kind == 3;
        gen.cap_max = kind == 1 ? 2 : 5;
        gen.dur_max = 6;
        gen.unit_us = 1.0;
        gen.p_edge_max = kind == 0 ? 0.5 : 0.3;
        gen.p_no_stream = 0.1;
        in = tu_random_inst(&rng, &gen);
        if (kind == 2) {   /* unary resources beside a cumulative one */
            int r, i;
            if (in->cap[0] < 2) in->cap[0] = 2;
            for (r = 1; r < in->k; r++) {
                in->cap[r] = 1;
                for (i = 0; i < in->n; i++) in->dem[i * in->k + r] = in->dem[i * in->k + r] > 0;
            }
        }
        if (kind == 4) {   /* cliques on resource 0 */
            int i;
            in->cap[0] = 3;
            for (i = 0; i < in->n; i++) in->dem[i * in->k] = (i % 4 == 3) ? 1 : tu_randint(&rng, 2, 3);
        }
        if (trial % LCG_STRIDE) { tu_inst_free(in); continue; }
        opt = tu_brute_force(in, 1.0, NULL);
        if (tu_build_graph(ctx, in, &g) != CC_OK || cc_graph_validate(g) != CC_OK) {
            if (bad_solve++ < 3) NOTE("trial %d: graph: %s", trial, cc_last_error(ctx));
            cc_graph_destroy(g);
            tu_inst_free(in);
            continue;
        }
        cc__prob_of_graph(g, &p);
        n_run++;
        for (v = 0; v < 2; v++) {
            cc_sched_desc d = tu_sched_desc();
            cc_schedule s;
            cc__time* st = (cc__time*)malloc(((size_t)in->n + 1) * sizeof *st);
            double* us = (double*)malloc(((size_t)in->n + 1) * sizeof *us);
            cc__bnb_result res;
            cc_result rc;
            double mk = -1;
            char msg[300];
            int i;
            memset(&s, 0, sizeof s);
            if (v == 0) {   /* a poor incumbent */
                d.method = CC_SCHED_LIST;
                d.tuning.priority = CC_PRIO_PROGRAM_ORDER;
                d.tuning.improve_passes = -1;
            } else d.method = CC_SCHED_BNB;   /* an optimal one (branch and bound's, proven) */
            if (cc_sched_solve(ctx, g, &d, &s) != CC_OK) {
                if (bad_solve++ < 3) NOTE("trial %d: incumbent: %s", trial, cc_last_error(ctx));
                free(st); free(us);
                continue;
            }
            to_ticks(&s, in->n, st);
            rc = cc__lcg_solve(ctx, &p, st, 0, 0, 0, 0, &res);
            n_search += res.nodes > 0;
            for (i = 0; i < in->n; i++) us[i] = (double)st[i] / CONCERTO__TICKS_PER_US;
            if (rc != CC_OK) {
                if (bad_solve++ < 3) NOTE("trial %d: rc %d: %s", trial, (int)rc, cc_last_error(ctx));
            } else if (!tu_check(in, us, &mk, msg, sizeof msg) || cc_schedule_check(ctx, g, us, NULL) != CC_OK) {
                if (bad_valid++ < 3) NOTE("trial %d: invalid schedule: %s", trial, msg);
            } else if (!res.proven || fabs(mk - opt) > 1e-9 || fabs((double)res.makespan / CONCERTO__TICKS_PER_US - opt) > 1e-9) {
                if (bad_opt++ < 3)
                    NOTE("trial %d (n=%d, k=%d, %s incumbent %g): makespan %g, proven %d, brute force %g", trial, in->n, in->k,
                         v ? "optimal" : "poor", s.makespan_us, mk, res.proven, opt);
            }
            cc_schedule_release(ctx, &s);
            free(st); free(us);
        }
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d instances, %d solves that searched (at least one conflict)", n_run, n_search);
    CHECK(n_search > n_run / 4, "the poor incumbents leave something to search (%d solves)", n_search);
    CHECK_INT(bad_solve, 0, "every solve returns CC_OK");
    CHECK_INT(bad_valid, 0, "every schedule is valid (own checker and cc_schedule_check)");
    CHECK_INT(bad_opt, 0, "the brute-force optimum found and proven, from a poor and from an optimal incumbent");
}

/* Random graphs of n_min-n_max ops on 2-k_max cumulative resources of
   capacity up to 6, durations up to 8 us. */
static tu_gen cumulative_gen(int n_min, int n_max, int k_max, double p_edge_max) {
    tu_gen gen;
    gen.n_min = n_min; gen.n_max = n_max;
    gen.k_min = 2; gen.k_max = k_max;
    gen.streams = 0;
    gen.cap_max = 6;
    gen.dur_max = 8;
    gen.unit_us = 1.0;
    gen.p_edge_max = p_edge_max;
    gen.p_no_stream = 0.1;
    return gen;
}

/* ---- incremental time-tabling against full passes ---------------------------*/
/* A resource whose compulsory parts did not change keeps its profile; a
   pass rescans the jobs that moved and those whose windows meet where the
   profile changed; after a backjump nothing is rescanned. The reference
   rebuilds every profile and rescans every job of every resource on each
   pass: the searches must be the same (conflicts, schedule, proof). Jobs
   use some resources only, so a job's part is rebuilt on one resource
   while another rescans it. */
static void test_incremental_tt(void) {
    tu_rng rng = {4101};
    int trial, n_trials = 150, bad = 0, n_search = 0;
    int64_t conflicts = 0;
    for (trial = 0; trial < n_trials; trial++) {
        tu_gen gen;
        tu_inst* in;
        cc_graph* g = NULL;
        cc__prob p;
        cc_sched_desc d = tu_sched_desc();
        cc_schedule s;
        cc__time *st[2];
        cc__bnb_result res[2];
        cc_result rc[2];
        int i, v;
        gen = cumulative_gen(10, 22, 4, 0.2);
        in = tu_random_inst(&rng, &gen);
        for (i = 0; i < in->n * in->k; i++)
            if (tu_unit(&rng) < 0.4) in->dem[i] = 0;
        if (trial % LCG_STRIDE || tu_build_graph(ctx, in, &g) != CC_OK || cc_graph_validate(g) != CC_OK) {
            cc_graph_destroy(g);
            tu_inst_free(in);
            continue;
        }
        cc__prob_of_graph(g, &p);
        memset(&s, 0, sizeof s);
        d.method = CC_SCHED_LIST;
        d.tuning.priority = CC_PRIO_PROGRAM_ORDER;
        d.tuning.improve_passes = -1;
        if (cc_sched_solve(ctx, g, &d, &s) != CC_OK) {
            if (bad++ < 3) NOTE("trial %d: incumbent: %s", trial, cc_last_error(ctx));
            cc_graph_destroy(g);
            tu_inst_free(in);
            continue;
        }
        for (v = 0; v < 2; v++) {
            st[v] = (cc__time*)malloc(((size_t)in->n + 1) * sizeof *st[v]);
            to_ticks(&s, in->n, st[v]);
            lcg_hooks.tt_full = v;
            rc[v] = cc__lcg_solve_hooked(ctx, &p, st[v], 2000, 0, 0, 0, &lcg_hooks, &res[v]);
        }
        lcg_hooks.tt_full = 0;
        if (rc[0] != rc[1] || res[0].nodes != res[1].nodes || res[0].proven != res[1].proven ||
            res[0].makespan != res[1].makespan || memcmp(st[0], st[1], (size_t)in->n * sizeof *st[0])) {
            if (bad++ < 3)
                NOTE("trial %d (n=%d, k=%d): incremental rc %d, %lld conflicts, makespan %lld, proven %d; full rc %d, %lld, %lld, %d",
                     trial, in->n, in->k, (int)rc[0], (long long)res[0].nodes, (long long)res[0].makespan, res[0].proven,
                     (int)rc[1], (long long)res[1].nodes, (long long)res[1].makespan, res[1].proven);
        }
        if (res[0].nodes > 0) n_search++;
        conflicts += res[0].nodes;
        free(st[0]); free(st[1]);
        cc_schedule_release(ctx, &s);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    NOTE("%d searches, %lld conflicts", n_search, (long long)conflicts);
    CHECK(n_search > n_trials / (4 * LCG_STRIDE), "the poor incumbents leave something to search (%d)", n_search);
    CHECK_INT(bad, 0, "the same conflicts, schedule and proof with and without the incremental passes");
}

/* ---- AUTO's restarts -----------------------------------------------------------*/
/* One solve of `in` through AUTO with 2 restarts of 1000 schedules
   (nodes: bnb_nodes; 0 the default): its makespan by the test's checker,
   proof and conflicts into *r. 0 where the graph or the solve failed
   (noted and counted in *bad_solve, as is a failed exact run); an invalid
   schedule counts in *bad_valid. */
typedef struct { double mk; int proven; int64_t conflicts; } path_res;
static int path_solve(const tu_inst* in, int64_t nodes, int trial, int v, int* bad_solve, int* bad_valid, path_res* r) {
    cc_graph* g = NULL;
    cc_sched_desc d = tu_sched_desc();
    cc_schedule s;
    cc_sched_stats s_st;
    char msg[300];
    int ok = 0;
    r->mk = -1; r->proven = 0; r->conflicts = 0;
    if (tu_build_graph(ctx, in, &g) != CC_OK || cc_graph_validate(g) != CC_OK) {
        if ((*bad_solve)++ < 3) NOTE("trial %d: graph: %s", trial, cc_last_error(ctx));
        cc_graph_destroy(g);
        return 0;
    }
    d.tuning.restarts = 2;
    d.tuning.budget_schedules = 1000;
    if (nodes > 0) d.tuning.bnb_nodes = nodes;
    memset(&s, 0, sizeof s);
    if (cc_sched_solve_stats(ctx, g, &d, &s, &s_st) != CC_OK) {
        if ((*bad_solve)++ < 3) NOTE("trial %d (%d): solve: %s", trial, v, cc_last_error(ctx));
    } else {
        if (!tu_check(in, s.start_us, &r->mk, msg, sizeof msg) && (*bad_valid)++ < 3) NOTE("trial %d (%d): %s", trial, v, msg);
        if (s_st.exact_failures && (*bad_solve)++ < 3) NOTE("trial %d (%d): an exact run failed: %s", trial, v, s_st.exact_message);
        r->proven = s.proven_optimal;
        r->conflicts = s_st.n_conflicts;
        ok = 1;
        cc_schedule_release(ctx, &s);
    }
    cc_graph_destroy(g);
    return ok;
}

/* Above 32 ops lazy clause generation runs in place of the branch and
   bound; where it does not take the graph (durations without a common
   step, so that the horizon in steps is above its literals' limit) the
   branch and bound runs as before. Random graphs of 36-44 ops on 2-3
   cumulative resources, with small budgets; every schedule valid by the
   test's checker. */
static void test_restarts_path(void) {
    tu_rng rng = {5150};
    int trial, v, i, n_trials = LCG_STRIDE > 1 ? 2 : 5, n_lcg = 0, bad_valid = 0, bad_solve = 0, bad_path = 0;
    int64_t most = 0, nodes = 2000;
    path_res r;
    for (trial = 0; trial < n_trials; trial++)
        for (v = 0; v < 2; v++) {
            tu_gen gen = cumulative_gen(36, 44, 3, 0.1);
            tu_inst* in = tu_random_inst(&rng, &gen);
            if (v == 1)   /* durations of whole ms plus 1-3 ns: a step of 1 ns, a horizon of about 10^8 */
                for (i = 0; i < in->n; i++) in->dur[i] = in->dur[i] * 1000.0 + 0.001 * (i % 3 + 1);
            if (path_solve(in, nodes, trial, v, &bad_solve, &bad_valid, &r)) {
                if (v == 0 && r.conflicts > 0) n_lcg++;
                if (r.conflicts > most) most = r.conflicts;
                if (v == 1 && r.conflicts != 0 && bad_path++ < 3)
                    NOTE("trial %d: the solver ran (%lld conflicts) on a horizon of about 10^8 steps", trial, (long long)r.conflicts);
            }
            tu_inst_free(in);
        }
    NOTE("%d of %d graphs searched by lazy clause generation", n_lcg, n_trials);
    CHECK(n_lcg > 0, "lazy clause generation runs above 32 ops with restarts (%d graphs)", n_lcg);
    CHECK(most > nodes / 5 && most <= nodes / 2,
          "its budget is half of bnb_nodes (%lld), more than the half of a fifth that followed the branch and bound (most %lld)",
          (long long)(nodes / 2), (long long)most);
    CHECK_INT(bad_solve, 0, "every solve returns CC_OK with no failed exact run");
    CHECK_INT(bad_path, 0, "where the horizon is above the solver's limit, it does not run");
    CHECK_INT(bad_valid, 0, "every schedule is valid (the test's checker)");
}

/* ---- time-tabling by hand ---------------------------------------------------*/
/* Two jobs on one resource of capacity 2; job 0 (3 steps) fixed at `at`,
   job 1 (2 steps) free in its window; target T. Returns propagate's
   result, job 1's bounds in *lb, *ub. */
static int tt_case(int dem0, int dem1, int at, int T, int* lb, int* ub) {
    hprob h;
    cc__lcg L;
    int dur[2] = {3, 2}, dem[2], cap[1] = {2}, ok = -1;
    dem[0] = dem0; dem[1] = dem1;
    hp_init(&h, 2, 1, dur, dem, cap, NULL, 0);
    if (cc__lcg_init(&L, ctx, &h.p, 1, T, 0) == 1) {   /* a conflict anywhere on the way counts as one */
        ok = cc__lcg_target(&L, T) && cc__lcg_set_lb(&L, 0, at, CONCERTO__LCG_NONE) &&
             cc__lcg_set_ub(&L, 0, at, CONCERTO__LCG_NONE) && cc__lcg_propagate(&L);
        *lb = L.lb[1]; *ub = L.ub[1];
    }
    cc__lcg_free(&L);
    return ok;
}

static void test_timetabling(void) {
    int lb = -1, ub = -1, ok;
    ok = tt_case(2, 1, 0, 10, &lb, &ub);
    CHECK(ok == 1 && lb == 3 && ub == 8, "a full compulsory part [0, 3) moves the other job's earliest start to 3 (got ok %d, [%d, %d])", ok, lb, ub);
    ok = tt_case(1, 1, 0, 10, &lb, &ub);
    CHECK(ok == 1 && lb == 0 && ub == 8, "one that leaves room moves nothing (got ok %d, [%d, %d])", ok, lb, ub);
    ok = tt_case(2, 1, 5, 9, &lb, &ub);
    CHECK(ok == 1 && lb == 0 && ub == 3, "job 0 at [5, 8), target 9: job 1 must end by 5, latest start 3 (got ok %d, [%d, %d])", ok, lb, ub);
    ok = tt_case(1, 1, 5, 9, &lb, &ub);
    CHECK(ok == 1 && lb == 0 && ub == 7, "with room beside it, the latest start stays 7 (got ok %d, [%d, %d])", ok, lb, ub);
    ok = tt_case(2, 1, 1, 4, &lb, &ub);
    CHECK(ok == 0, "job 0 at [1, 4), target 4: job 1 fits nowhere, a conflict (got %d)", ok);
    ok = tt_case(1, 1, 1, 4, &lb, &ub);
    CHECK(ok == 1 && lb == 0 && ub == 2, "with capacity for both, no conflict (got ok %d, [%d, %d])", ok, lb, ub);
}

/* ---- the orders of pairs that cannot overlap, by hand ------------------------*/
/* Jobs 0 (3 steps) and 1 (2 steps) on one resource of capacity 2, target
   10 (windows [0, 7] and [0, 8]) or, for how 3, 12 ([0, 9] and [0, 10]).
   dem: their demands; edge: 0 -> 1 or none. how: 1 decides 0 before 1, 2
   decides 1 before 0, 3 sets s_0 >= 6 and s_1 <= 8 (no compulsory part
   either way). Returns the pairs made (-1 on failure), the bounds after
   propagation. */
static int ord_case(int dem0, int dem1, int edge, int how, int* lb, int* ub) {
    hprob h;
    cc__lcg L;
    int dur[2] = {3, 2}, dem[2], cap[1] = {2}, e[2] = {0, 1}, np = -1, T = how == 3 ? 12 : 10;
    dem[0] = dem0; dem[1] = dem1;
    hp_init(&h, 2, 1, dur, dem, cap, e, edge);
    if (cc__lcg_init(&L, ctx, &h.p, 1, T, 1) == 1 && cc__lcg_target(&L, T)) {
        int ok = 1;
        np = L.np;
        L.tlim[L.nlev] = L.ntrail; L.elim[L.nlev] = (int)L.nE; L.nlev++;
        if (how == 1 || how == 2) ok = L.np == 1 && cc__lcg_assign(&L, 2 * L.nb + (how == 1 ? 0 : 1), CONCERTO__LCG_NONE);
        else if (how == 3) ok = cc__lcg_set_lb(&L, 0, 6, CONCERTO__LCG_NONE) && cc__lcg_set_ub(&L, 1, 8, CONCERTO__LCG_NONE);
        if (!ok || !cc__lcg_propagate(&L)) np = -1;
        lb[0] = L.lb[0]; lb[1] = L.lb[1]; ub[0] = L.ub[0]; ub[1] = L.ub[1];
    }
    cc__lcg_free(&L);
    return np;
}

static void test_orders(void) {
    int lb[2], ub[2], np;
    np = ord_case(2, 1, 0, 0, lb, ub);
    CHECK(np == 1, "demands 2 and 1 on a capacity of 2: one pair (got %d)", np);
    np = ord_case(1, 1, 0, 0, lb, ub);
    CHECK(np == 0, "demands 1 and 1: room for both, no pair (got %d)", np);
    np = ord_case(2, 1, 1, 0, lb, ub);
    CHECK(np == 0, "an edge 0 -> 1 orders them: no pair (got %d)", np);
    np = ord_case(2, 1, 0, 1, lb, ub);
    CHECK(np == 1 && lb[1] == 3 && ub[0] == 5 && lb[0] == 0 && ub[1] == 8,
          "0 before 1: s_1 >= 3 and s_0 <= 5 (got s_0 in [%d, %d], s_1 in [%d, %d])", lb[0], ub[0], lb[1], ub[1]);
    np = ord_case(2, 1, 0, 2, lb, ub);
    CHECK(np == 1 && lb[0] == 2 && ub[1] == 5 && lb[1] == 0 && ub[0] == 7,
          "1 before 0: s_0 >= 2 and s_1 <= 5 (got s_0 in [%d, %d], s_1 in [%d, %d])", lb[0], ub[0], lb[1], ub[1]);
    np = ord_case(2, 1, 0, 3, lb, ub);
    CHECK(np == 1 && ub[1] == 7 && lb[0] == 6 && ub[0] == 9,
          "s_0 >= 6 cannot end by s_1 <= 8: 1 goes first, s_1 <= 9 - 2 (got s_0 in [%d, %d], s_1 in [%d, %d])",
          lb[0], ub[0], lb[1], ub[1]);
    np = ord_case(1, 1, 0, 3, lb, ub);
    CHECK(np == 0 && ub[1] == 8, "with room for both, s_1's latest start stays 8 (got %d)", ub[1]);
}

/* ---- where a restart backtracks to -------------------------------------------*/
/* Three decisions of activities 5, 3 and 1 with a free literal of 2: a
   restart keeps the first two levels (the search would decide them again
   first); with the free literal at 4, only the first. */
static void test_restart_level(void) {
    hprob h;
    cc__lcg L;
    int dur[3] = {2, 2, 2}, dem[3] = {1, 1, 1}, cap[1] = {3}, dec[3], times[3] = {5, 3, 1}, i, k, lev1 = -1, lev2 = -1, ok;
    hp_init(&h, 3, 1, dur, dem, cap, NULL, 0);
    ok = cc__lcg_init(&L, ctx, &h.p, 1, 10, 0) == 1 && cc__lcg_target(&L, 10);
    if (ok) {
        int f = cc__lcg_ge(&L, 1, 6);   /* [s_1 >= 6]: still free after the decisions */
        dec[0] = cc__lcg_ge(&L, 0, 3); dec[1] = cc__lcg_ge(&L, 1, 4); dec[2] = cc__lcg_ge(&L, 2, 5);
        for (i = 0; i < 3; i++)
            for (k = 0; k < times[i]; k++) cc__lcg_bump(&L, dec[i] >> 1);
        cc__lcg_bump(&L, f >> 1); cc__lcg_bump(&L, f >> 1);
        for (i = 0; i < 3 && ok; i++) {
            L.tlim[L.nlev] = L.ntrail; L.elim[L.nlev] = (int)L.nE; L.nlev++;
            ok = cc__lcg_assign(&L, dec[i], CONCERTO__LCG_NONE) && cc__lcg_propagate(&L);
        }
        ok = ok && L.nlev == 3 && cc__lcg_value(&L, f) < 0;
        if (ok) lev1 = cc__lcg_restart_level(&L);
        cc__lcg_bump(&L, f >> 1); cc__lcg_bump(&L, f >> 1);
        if (ok) lev2 = cc__lcg_restart_level(&L);
    }
    cc__lcg_free(&L);
    CHECK(ok && lev1 == 2, "decisions of activity 5, 3, 1 and a free literal of 2: the restart keeps 2 levels (got %d)", lev1);
    CHECK(ok && lev2 == 1, "the free literal at 4: it keeps 1 (got %d)", lev2);
}

/* ---- phases on backtrack ----------------------------------------------------*/
/* A decision [s_0 >= 3] against its phase 0, then a backtrack: a search for
   proofs saves the value as the phase, a search for better schedules
   keeps the best schedule's. */
static void test_keep_phase(void) {
    hprob h;
    cc__lcg L;
    int dur[2] = {2, 2}, dem[2] = {1, 1}, cap[1] = {2}, k, ph[2] = {-1, -1}, ok;
    hp_init(&h, 2, 1, dur, dem, cap, NULL, 0);
    for (k = 0; k < 2; k++) {
        ok = cc__lcg_init(&L, ctx, &h.p, 1, 10, 0) == 1 && cc__lcg_target(&L, 10);
        if (ok) {
            int l = cc__lcg_ge(&L, 0, 3);
            L.keep_phase = k;
            L.phase[l >> 1] = 0;
            L.tlim[L.nlev] = L.ntrail; L.elim[L.nlev] = (int)L.nE; L.nlev++;
            if (cc__lcg_assign(&L, l, CONCERTO__LCG_NONE) && cc__lcg_propagate(&L)) {
                cc__lcg_backtrack(&L, 0);
                ph[k] = L.phase[l >> 1];
            }
        }
        cc__lcg_free(&L);
    }
    CHECK(ph[0] == 1, "phases saved: [s_0 >= 3] decided true becomes its phase (got %d)", ph[0]);
    CHECK(ph[1] == 0, "the best schedule's phases kept: it stays 0 (got %d)", ph[1]);
}

/* ---- which learnt clauses a reduction keeps ---------------------------------*/
/* Ten learnt clauses of LBD 1, 2, 3, 3, 5, 6, 7, 8, 9, 10, those of LBD 3
   (the first), 5 and 7 used as reasons: with the middle tier (up to 6)
   the clauses of LBD 2 or less and the used ones up to 6 stay, and of the
   other six the three of least LBD; without it, the five of least LBD of
   all ten. A second reduction sees no use any more. */
static int reduce_case(int tier2, int twice, int* kept) {
    hprob h;
    cc__lcg L;
    int dur[2] = {2, 2}, dem[2] = {1, 1}, cap[1] = {2}, lbd[10] = {1, 2, 3, 3, 5, 6, 7, 8, 9, 10};
    int used[10] = {0, 0, 1, 0, 1, 0, 1, 0, 0, 0}, i, r, ok, flags = 0;
    size_t c;
    hp_init(&h, 2, 1, dur, dem, cap, NULL, 0);
    ok = cc__lcg_init(&L, ctx, &h.p, 1, 10, 0) == 1 && cc__lcg_target(&L, 10);
    for (i = 0; i < 10 && ok; i++) {   /* clause i: [s_0 >= 1 + i % 8] or [s_1 >= 1 + i / 8] */
        L.learnt[0] = cc__lcg_ge(&L, 0, 1 + i % 8);
        L.learnt[1] = cc__lcg_ge(&L, 1, 1 + i / 8);
        L.nlearnt = 2;
        r = cc__lcg_add_learnt(&L, lbd[i]);
        ok = r >= 0;
        if (ok && used[i]) L.A[r + 1] |= CONCERTO__LCG_USED;
    }
    L.tier2 = tier2;
    if (ok) cc__lcg_reduce(&L);
    if (ok && twice) cc__lcg_reduce(&L);
    *kept = 0;
    for (c = 0; ok && c < L.nA; c += (size_t)L.A[c] + 2) {
        int a = L.A[c + 2], b = L.A[c + 3];
        for (i = 0; i < 10; i++)
            if (a == cc__lcg_ge(&L, 0, 1 + i % 8) && b == cc__lcg_ge(&L, 1, 1 + i / 8)) *kept |= 1 << i;
        flags |= L.A[c + 1] & CONCERTO__LCG_USED;
    }
    cc__lcg_free(&L);
    return ok && !flags;
}

static void test_reduce_tiers(void) {
    int kept, ok;
    ok = reduce_case(6, 0, &kept);
    CHECK(ok && kept == 0x7f, "middle tier: LBD 1, 2, the used 3 and 5, then 3, 6, 7 of the six others (kept 0x%x)", kept);
    ok = reduce_case(0, 0, &kept);
    CHECK(ok && kept == 0x1f, "no middle tier: the five of least LBD (kept 0x%x)", kept);
    ok = reduce_case(6, 1, &kept);
    CHECK(ok && kept == 0x0f, "a second reduction: the marks of use are gone, LBD 1, 2 and two of 3, 3, 5, 6, 7 stay (kept 0x%x)", kept);
}

/* ---- the schedule check ---------------------------------------------------*/
static void test_verify(void) {
    hprob h;
    cc__lcg L;
    int dur[3] = {2, 2, 1}, dem[3] = {1, 1, 2}, cap[1] = {2}, e[2] = {0, 1};
    int good[3] = {0, 2, 4}, prec[3] = {0, 1, 4}, over[3] = {0, 2, 3};
    hp_init(&h, 3, 1, dur, dem, cap, e, 1);
    if (cc__lcg_init(&L, ctx, &h.p, 1, 6, 0) != 1) { CHECK(0, "init"); cc__lcg_free(&L); return; }
    CHECK(cc__lcg_verify(&L, good), "a valid schedule passes");
    CHECK(!cc__lcg_verify(&L, prec), "job 1 starting before job 0 ends fails");
    CHECK(!cc__lcg_verify(&L, over), "jobs 1 and 2 over the capacity at step 3 fail");
    cc__lcg_free(&L);
}

/* ---- what it does not take, and a known bound -------------------------------*/
static void test_refusals(void) {
    hprob h;
    int dur[2] = {2, 3}, dem[2] = {1, 1}, cap[1] = {1}, i, same = 1;
    cc__time rel[2] = {0, 1}, bs[1] = {0}, be[1] = {1};
    int32_t bd[1] = {1};
    cc__time best[2] = {3, 0}, keep[2];
    cc__bnb_result res;
    cc_result rc;
    hp_init(&h, 2, 1, dur, dem, cap, NULL, 0);
    memcpy(keep, best, sizeof keep);
    h.p.release = rel;
    rc = cc__lcg_solve(ctx, &h.p, best, 0, 0, 0, 0, &res);
    for (i = 0; i < 2; i++) same &= best[i] == keep[i];
    CHECK(rc == CC_ERR_UNSUPPORTED && same, "releases: CC_ERR_UNSUPPORTED, the incumbent untouched (rc %d)", (int)rc);
    h.p.release = NULL;
    h.p.n_busy = 1; h.p.busy_start = bs; h.p.busy_end = be; h.p.busy_dem = bd;
    rc = cc__lcg_solve(ctx, &h.p, best, 0, 0, 0, 0, &res);
    CHECK(rc == CC_ERR_UNSUPPORTED && best[0] == keep[0] && best[1] == keep[1], "busy blocks: CC_ERR_UNSUPPORTED (rc %d)", (int)rc);
    h.p.n_busy = 0;
    rc = cc__lcg_solve(ctx, &h.p, best, 0, 0, 5, 0, &res);
    CHECK(rc == CC_OK && res.proven && res.nodes == 0 && res.makespan == 5, "a known bound at the incumbent's makespan proves it at once");
    rc = cc__lcg_solve(ctx, &h.p, best, 0, 0, 0, 0, &res);
    CHECK(rc == CC_OK && res.proven && res.makespan == 5, "two jobs on one unit: 5 proven (rc %d, makespan %lld)", (int)rc, (long long)res.makespan);
}

/* ---- allocation failures ----------------------------------------------------*/
static void test_alloc_failures(void) {
    tu_rng rng = {4242};
    tu_gen gen;
    tu_inst* in;
    cc_graph* g = NULL;
    cc__prob p;
    cc_schedule s;
    cc_sched_desc d = tu_sched_desc();
    cc__time *st0, *st;
    cc__bnb_result ref, res;
    long at, total = 0, bad = 0, n_oom = 0, n_same = 0;
    int n, i, np = -1;
    cc__lcg L;
    gen.n_min = 10; gen.n_max = 10; gen.k_min = 2; gen.k_max = 2; gen.streams = 0; gen.cap_max = 3;
    gen.dur_max = 6; gen.unit_us = 1.0; gen.p_edge_max = 0.2; gen.p_no_stream = 0;
    in = tu_random_inst(&rng, &gen);
    n = in->n;
    if (tu_build_graph(ctx, in, &g) != CC_OK || cc_graph_validate(g) != CC_OK) { CHECK(0, "graph"); tu_inst_free(in); return; }
    cc__prob_of_graph(g, &p);
    memset(&s, 0, sizeof s);
    d.method = CC_SCHED_LIST; d.tuning.priority = CC_PRIO_PROGRAM_ORDER; d.tuning.improve_passes = -1;
    cc_sched_solve(ctx, g, &d, &s);
    st0 = (cc__time*)malloc((size_t)n * sizeof *st0);
    st = (cc__time*)malloc((size_t)n * sizeof *st);
    to_ticks(&s, n, st0);
    memcpy(st, st0, (size_t)n * sizeof *st);
    cc__lcg_solve(ctx, &p, st, 0, 0, 0, 0, &ref);
    if (cc__lcg_init(&L, ctx, &p, p.grain > 0 ? p.grain : 1, (int)(cc__makespan(&p, st0) / (p.grain > 0 ? p.grain : 1)) - 1, 1) == 1) np = L.np;
    cc__lcg_free(&L);
    for (at = 1;; at++) {
        tu_alloc a;
        cc_context* c2 = NULL;
        cc_result rc;
        memset(&a, 0, sizeof a);
        a.fail_at = at;
        if (cc_context_create(NULL, &c2) != CC_OK) break;
        c2->alloc = tu_allocator(&a);
        memcpy(st, st0, (size_t)n * sizeof *st);
        rc = cc__lcg_solve(c2, &p, st, 0, 0, 0, 0, &res);
        if (rc == CC_ERR_OUT_OF_MEMORY) {
            int same = 1;
            n_oom++;
            /* best[] is never lost: the incumbent, or a better schedule found before the failure */
            for (i = 0; i < n; i++) same &= st[i] == st0[i];
            if (!same && cc__makespan(&p, st) >= cc__makespan(&p, st0) && bad++ < 3) NOTE("refusal %ld: best[] changed but no better", at);
            if (strstr(cc_last_error(c2), "lazy clause generation") == NULL && bad++ < 3) NOTE("refusal %ld: message %s", at, cc_last_error(c2));
        } else if (rc == CC_OK && res.makespan == ref.makespan && res.proven == ref.proven && res.nodes == ref.nodes) n_same++;
        else if (bad++ < 3) NOTE("refusal %ld: rc %d makespan %lld", at, (int)rc, (long long)res.makespan);
        if (a.live != 0 && bad++ < 3) NOTE("refusal %ld: %ld blocks leaked", at, a.live);
        c2->alloc = ctx->alloc;
        cc_context_destroy(c2);
        if (a.n_failed == 0) break;   /* past the last allocation */
        total++;
    }
    NOTE("%ld allocations refused in turn: %ld out of memory, %ld the same result; %lld conflicts", total, n_oom, n_same, (long long)ref.nodes);
    CHECK(total >= 20 && n_oom > 0, "the solve allocates, and refusals reach it (%ld)", total);
    CHECK(np > 0, "the problem has pairs to order, so their allocations are refused too (%d pairs)", np);
    CHECK_INT(bad, 0, "each refusal: out of memory naming the solver with the incumbent kept, or the same result; nothing leaked");
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(in);
    free(st0); free(st);
}

/* Up to 32 ops lazy clause generation runs first and branch and bound
   only after it, where it did not prove or does not apply. Random graphs
   of 18-28 ops on 2-3 cumulative resources: the solver searches (before,
   branch and bound ran first and proved most of them without it); where
   its horizon is above its literals' limit, branch and bound proves them
   alone, at the same makespans. Every schedule valid by the test's
   checker. */
static void test_small_path(void) {
    tu_rng rng = {6262};
    int trial, v, i, n_trials = LCG_STRIDE > 1 ? 4 : 12, n_lcg = 0, n_lcg_proven = 0, bad_valid = 0, bad_solve = 0, bad_path = 0,
        n_bnb_proven = 0, bad_same = 0;
    for (trial = 0; trial < n_trials; trial++) {
        path_res r[2];
        tu_gen gen = cumulative_gen(18, 28, 3, 0.1);
        tu_inst* in = tu_random_inst(&rng, &gen);
        for (v = 0; v < 2; v++) {
            if (v == 1)   /* the durations times 1000, plus 1 ns: a step of 1 ns, a horizon of about 10^8 steps */
                for (i = 0; i < in->n; i++) in->dur[i] = in->dur[i] * 1000.0 + 0.001;
            if (!path_solve(in, 0, trial, v, &bad_solve, &bad_valid, &r[v])) continue;
            if (v == 0 && r[v].conflicts > 0) { n_lcg++; n_lcg_proven += r[v].proven; }
            if (v == 1 && r[v].conflicts != 0 && bad_path++ < 3)
                NOTE("trial %d: the solver ran (%lld conflicts) on a horizon of about 10^8 steps", trial, (long long)r[v].conflicts);
            if (v == 1) n_bnb_proven += r[v].proven;
        }
        /* both proven: the same optimum (times 1000; the 1 ns steps add at most the ops' count of ns) */
        if (r[0].proven && r[1].proven && fabs(r[0].mk * 1000.0 - r[1].mk) > 0.001 * in->n + 1e-6 && bad_same++ < 3)
            NOTE("trial %d: proven %g by the solver, %g by branch and bound", trial, r[0].mk, r[1].mk / 1000.0);
        tu_inst_free(in);
    }
    NOTE("%d of %d graphs searched by lazy clause generation (%d proven), %d proven by branch and bound alone",
         n_lcg, n_trials, n_lcg_proven, n_bnb_proven);
    CHECK(n_lcg >= n_trials / 2, "lazy clause generation runs first up to 32 ops with restarts (%d of %d graphs)", n_lcg, n_trials);
    CHECK(n_lcg_proven > 0 && n_bnb_proven > 0, "proofs by the solver first (%d) and by branch and bound where it does not apply (%d)",
          n_lcg_proven, n_bnb_proven);
    CHECK_INT(bad_solve, 0, "every solve returns CC_OK with no failed exact run");
    CHECK_INT(bad_path, 0, "where the horizon is above the solver's limit, it does not run");
    CHECK_INT(bad_same, 0, "where both prove, the same optimum");
    CHECK_INT(bad_valid, 0, "every schedule is valid (the test's checker)");
}

/* ---- PSPLIB j3013_1 ----------------------------------------------------------*/
static void test_j3013_1(void) {
    const char* dir = getenv("J30_DIR");
    char path[700], csv_path[600];
    char* csv;
    cc_graph* g = NULL;
    cc_schedule s;
    cc_sched_desc d = tu_sched_desc();
    cc__prob p;
    cc__time *st, *st1;
    cc__bnb_result r1, r2, r3;
    int ub, n, i;
    double mk = -1;
    char* text;
    tu_inst* ref;
    char msg[300];
    if (!dir || !dir[0]) dir = "build/j30";
    snprintf(csv_path, sizeof csv_path, "%s/psplib/solutions/j30_bounds.csv", tu_data_dir());
    csv = tu_read_file(csv_path, NULL);
    snprintf(path, sizeof path, "%s/j3013_1.sm", dir);
    text = tu_read_file(path, NULL);
    if (!csv || !text) {
        SKIP("%s or %s not found: extract %s/psplib/j30.tar.gz into build/ (make test does)", csv_path, path, tu_data_dir());
        free(csv); free(text);
        return;
    }
    ub = tu_bound_ub(csv, "j3013_1");
    ref = tu_sm_parse(text);
    free(text);
    free(csv);
    if (!ref || cc_psplib_read(ctx, path, &g) != CC_OK || cc_graph_validate(g) != CC_OK) {
        CHECK(0, "j3013_1 read: %s", cc_last_error(ctx));
        tu_inst_free(ref);
        cc_graph_destroy(g);
        return;
    }
    cc__prob_of_graph(g, &p);
    n = p.n;
    /* a schedule at the optimum: the default solve's (proven since lazy clause generation runs in it) */
    memset(&s, 0, sizeof s);
    if (cc_sched_solve(ctx, g, &d, &s) != CC_OK) { CHECK(0, "solve: %s", cc_last_error(ctx)); tu_inst_free(ref); cc_graph_destroy(g); return; }
    i = tu_check(ref, s.start_us, &mk, msg, sizeof msg);
    CHECK(i && (int)llround(mk) == ub && s.proven_optimal,
          "the default solve: valid, at the optimum %d, proven (makespan %g, proven %d)", ub, mk, s.proven_optimal);
    st = (cc__time*)malloc((size_t)n * sizeof *st);
    st1 = (cc__time*)malloc((size_t)n * sizeof *st1);
    to_ticks(&s, n, st);
    memcpy(st1, st, (size_t)n * sizeof *st);
    cc__lcg_solve(ctx, &p, st, 0, 0, 0, 0, &r1);
    CHECK(r1.proven && r1.makespan == cc__makespan(&p, st1) && r1.nodes > 0, "from the optimum: proven (%lld conflicts)", (long long)r1.nodes);
    memcpy(st, st1, (size_t)n * sizeof *st);
    cc__lcg_solve(ctx, &p, st, 0, 0, 0, 0, &r2);
    CHECK(r2.nodes == r1.nodes && r2.proven, "a second run: the same %lld conflicts", (long long)r1.nodes);
    memcpy(st, st1, (size_t)n * sizeof *st);
    cc__lcg_solve(ctx, &p, st, 0, 0, 0, 1, &r2);
    CHECK(r2.proven && r2.makespan == r1.makespan, "from the optimum with the incumbent's phases kept: proven too (%lld conflicts)",
          (long long)r2.nodes);
    /* a budget below the proof's conflicts stops it at exactly that many, the incumbent kept */
    {
        int64_t budgets[3] = {1, 37, 0};
        int bad = 0;
        budgets[2] = r1.nodes / 2;
        for (i = 0; i < 3; i++) {
            memcpy(st, st1, (size_t)n * sizeof *st);
            cc__lcg_solve(ctx, &p, st, budgets[i], 0, 0, 0, &r2);
            if (r2.nodes != budgets[i] || r2.proven || memcmp(st, st1, (size_t)n * sizeof *st)) {
                if (bad++ < 2) NOTE("budget %lld: %lld conflicts, proven %d", (long long)budgets[i], (long long)r2.nodes, r2.proven);
            }
        }
        CHECK_INT(bad, 0, "budgets of 1, 37 and half the proof's conflicts: each stops at exactly its budget, unproven, the schedule unchanged");
    }
    /* one unit later: the last job moved right by a step of the grain */
    {
        int last = 0;
        for (i = 0; i < n; i++) if (st1[i] + p.dur[i] > st1[last] + p.dur[last]) last = i;
        for (i = 0; i < n; i++) st[i] = st1[i];
        st[last] += p.grain;
        /* every job ending at the old makespan moves too, so the schedule stays valid */
        for (i = 0; i < n; i++) if (i != last && st1[i] + p.dur[i] == st1[last] + p.dur[last]) st[i] += p.grain;
    }
    cc__lcg_solve(ctx, &p, st, 0, 0, 0, 0, &r3);
    {
        double* us = (double*)malloc((size_t)n * sizeof *us);
        for (i = 0; i < n; i++) us[i] = (double)st[i] / CONCERTO__TICKS_PER_US;
        i = tu_check(ref, us, &mk, msg, sizeof msg);
        CHECK(r3.proven && i && (int)llround(mk) == ub,
              "from a schedule one unit longer: finds %d and proves it (makespan %g, proven %d)", ub, mk, r3.proven);
        free(us);
    }
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    tu_inst_free(ref);
    free(st); free(st1);
}

int main(void) {
    cc_context_create(NULL, &ctx);
    TH_RUN(test_timetabling);
    TH_RUN(test_orders);
    TH_RUN(test_restart_level);
    TH_RUN(test_keep_phase);
    TH_RUN(test_reduce_tiers);
    TH_RUN(test_verify);
    TH_RUN(test_refusals);
    TH_RUN(test_clause_soundness);
    TH_RUN(test_brute_force);
    TH_RUN(test_incremental_tt);
    TH_RUN(test_restarts_path);
    TH_RUN(test_small_path);
    TH_RUN(test_alloc_failures);
    TH_RUN(test_j3013_1);
    cc_context_destroy(ctx);
    return th_done();
}
