/* concerto_rcpsp.h - the search for general RCPSP instances, plugged into
   concerto.h's scheduler: lazy clause generation, and the restarts of
   CC_SCHED_AUTO with their large-neighbourhood search. It serves graphs
   with a resource that is not unary (a capacity above 1, a demand other
   than 1: PSPLIB's instances); a training step's streams never use it, so
   a program that schedules only steps does without this header.

   DO THIS: include concerto.h first, then this header; in the one file
   that has the implementation, after concerto.h's:

       #define CONCERTO_IMPLEMENTATION
       #include "concerto.h"
       #include "concerto_rcpsp.h"

   and hand it to every solve of a general instance:

       cc_sched_desc sd = {0};                         // {} in C++
       sd.general = cc_rcpsp_search();
       cc_sched_solve(ctx, graph, &sd, &schedule);

   It needs what concerto.h's scheduler needs: the C standard library (C99,
   or C++11), and POSIX threads for the restarts on more than one thread
   (cc_sched_desc.threads), which a CONCERTO_NO_RUNTIME build runs on the
   caller's thread alone.

   WHAT IT ADDS (cc_sched_solve with cc_sched_desc.general set)
   - Lazy clause generation on the whole graph where some resource is
     cumulative: after branch and bound where that left the schedule
     unproven (methods AUTO and BNB, exact solver CC_EXACT_BNB), with half
     of bnb_nodes as conflicts (cc_sched_stats.n_conflicts); with restarts,
     before it (see cc_sched_tuning.bnb_nodes).
   - AUTO up to 200 ops on a graph that is not unary: the restarts
     (cc_sched_tuning.restarts, cc_sched_desc.threads), each an evolution
     followed by a large-neighbourhood search of exact windows, then one
     evolution seeded with their results and a deeper search.
   Without it (general NULL) the same solves run branch and bound alone,
   as with restarts < 0 and no lazy clause generation. The schedule does
   not depend on the number of threads.

   CONTENTS (grep for the markers)
       >>lcg          lazy clause generation: literals on start times,
                      time-tabling with explanations, learning, restarts
       >>restarts     AUTO's restarts: the pool, the main line beside it,
                      the merge, the seeded evolution, the neighbourhood
                      search; the entry cc_rcpsp_search
*/
#ifndef CONCERTO_H_INCLUDED
#error "concerto_rcpsp.h: include concerto.h first"
#endif

#ifndef CONCERTO_RCPSP_H_INCLUDED
#define CONCERTO_RCPSP_H_INCLUDED

#ifdef __cplusplus
extern "C" {
#endif

/* The search for general RCPSP instances, for cc_sched_desc.general.
   Borrowed: the same table for the life of the program. */
CONCERTO_API const cc_sched_extension* cc_rcpsp_search(void);

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_RCPSP_H_INCLUDED */

/* ========================================================================
   IMPLEMENTATION
   ======================================================================== */
#if defined(CONCERTO_IMPLEMENTATION) && !defined(CONCERTO_RCPSP_IMPL_INCLUDED)
#define CONCERTO_RCPSP_IMPL_INCLUDED
#ifndef CONCERTO_IMPL_INCLUDED
#error "concerto_rcpsp.h: its implementation needs concerto.h's: include concerto.h with CONCERTO_IMPLEMENTATION first"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* >>lcg
   Lazy clause generation (Ohrimenko, Stuckey & Codish 2009; for the RCPSP
   Schutt, Feydy, Stuckey & Wallace 2011): a SAT solver whose literals are
   the bounds of the start times, with propagators that explain what they
   derive as clauses, so that every failure teaches a nogood that prunes the
   rest of the search. Branch and bound (>>bnb) proves what its bounds and
   dominance rules close; the proofs it cannot finish within its nodes
   this solver, learning from its conflicts, can. It runs on whole graphs without releases, deadlines or busy
   blocks (cc__solve_lcg: after branch and bound, where that did not prove
   its schedule; in AUTO's main line with restarts, before it).

   - Time in steps of the grain. The target T (the incumbent's makespan
     minus one step) bounds every job: s_j in [head_j, T - tail_j] (the
     longest paths from the start and to the end).
   - Literals, eagerly: [s_j >= t] for t in (head_j, T - tail_j]; a bound
     change sets the literal and, down the ladder, the weaker ones of the
     same job (each explained by the next stronger), so the bounds are the
     literals' state and backtracking restores them.
   - In a search for proofs (incumbent_phases 0: up to 32 ops in AUTO),
     also one literal per pair of jobs that cannot overlap (some resource
     lacks the room for both) and that no path orders: "a runs before b",
     false for b before a. Set, it propagates like an edge
     ([s_b >= lb_a + D_a] from it and [s_a >= lb_a], and back for latest
     starts); where a cannot end by b's latest start it is set false
     (from [s_a >= lb_a] and [s_b <= ub_b]). Above all it is a decision:
     where jobs mostly cannot run together (low resource strength), the
     search splits on which of two jobs goes first, as in disjunctive
     scheduling, and needs fewer conflicts. A search for better schedules
     (above 32 ops) does without them.
   - Propagation: precedence (s_j >= t implies s_succ >= t + D_j, and back
     for upper bounds, each explained by the one literal), the learnt
     clauses (two watched literals with a blocker), and time-tabling per
     resource (compulsory parts [ub_j, lb_j + D_j); an overload fails, a job
     that cannot run at a point t of its earliest or latest window moves
     past it; a pass rescans only the jobs that moved and those whose
     windows meet where the profile changed, and a backjump, which lands
     on a fixpoint, only has the profiles rebuilt). Explanations are
     pointwise (Schutt et al.): the jobs whose compulsory parts cover t,
     largest demands first until they exceed what leaves no room, each by
     [s_i >= t - D_i + 1] and [s_i <= t], and the moved job by
     [s_j >= t - D_j + 1] (or [s_j <= t]).
   - Search: first-UIP learning with the clause minimised recursively (a
     literal whose reasons lead back to the clause's other literals and
     level 0 alone is dropped), VSIDS over the literals
     (decay CONCERTO__LCG_DECAY), phases from the best schedule (first
     the incumbent's starts and orders, then each schedule found: Demirovic, Chu &
     Stuckey's solution-based phase saving, a local search around the best
     schedule inside the complete search), which a search for proofs
     (incumbent_phases 0) saves on backtrack and a search for better
     schedules keeps, restarts when
     the mean literal-block distance of the last CONCERTO__LCG_RESTART_WINDOW
     learnt clauses, times CONCERTO__LCG_RESTART_K, is above the mean of
     all (Audemard & Simon's Glucose), each back to the first decision the
     search would not make again (one of lower activity than the best free
     literal: the trail above it is kept, van der Tak, Ramos & Heule 2011),
     and every CONCERTO__LCG_REDUCE (+300
     per reduction) conflicts the half of the learnt clauses of highest
     literal-block distance (lowered when a clause, as a reason in an
     analysis, spans fewer levels than when learnt) is dropped (those of
     distance 2 or less and the reasons of assigned literals stay). A
     search for proofs also keeps, out of that count, every clause of
     distance up to CONCERTO__LCG_TIER2 that served as a reason in an
     analysis since the last reduction (a middle tier, as in the SAT
     solvers after Glucose: Oh 2016, Kochemazov 2020), which shortens
     proofs. The search for better schedules does not keep them.
   - A schedule (every job fixed) is checked against the problem
     (precedence and capacities, cc__lcg_verify) before it replaces the
     incumbent; the target then drops below it, at level 0, and the learnt
     clauses stay (a lower target only adds unit clauses). A conflict at
     level 0 proves the incumbent optimal.
   - The budget counts conflicts, not time: the same search on every
     machine. */

#define CONCERTO__LCG_MAX_VARS ((int64_t)1 << 20)   /* literals at most (about 80 bytes each) */
#define CONCERTO__LCG_MAX_ARENA ((size_t)1 << 28)   /* ints of learnt clauses, and of explanations, at most */
#define CONCERTO__LCG_DECAY 1.05                     /* VSIDS: the bump grows by this per conflict */
#define CONCERTO__LCG_RESTART_WINDOW 50              /* restarts: the last conflicts whose LBDs are averaged */
#define CONCERTO__LCG_RESTART_K 0.8                  /* restarts: their mean times this above the mean of all */
#define CONCERTO__LCG_REDUCE 2000                    /* conflicts between reductions of the learnt clauses */
#define CONCERTO__LCG_TIER2 6                        /* a search for proofs keeps the used learnt clauses of LBD up to this */
#define CONCERTO__LCG_USED (1 << 30)                 /* in a learnt clause's LBD word: a reason in an analysis since the last reduction */
#define CONCERTO__LCG_LBD(w) ((w) & (CONCERTO__LCG_USED - 1))

/* Tests only: what a test that compiles the implementation itself hands
   cc__lcg_solve_hooked, or sets in a solver it built with cc__lcg_init
   (cc__lcg.hooks; NULL everywhere else). clause (may be NULL): called
   with every clause the solver derives (explanations, conflicts, learnt
   clauses) and the solver, whose target T it holds for. tt_full: nonzero
   makes every time-tabling pass rebuild its profiles and rescan every job
   (the reference the incremental passes must match). */
struct cc__lcg;
typedef struct cc__lcg_hooks {
    void (*clause)(const struct cc__lcg* L, const int* lits, int n);
    int tt_full;
} cc__lcg_hooks;

#define CONCERTO__LCG_CLAUSE(L, lits, n) \
    do { if ((L)->hooks && (L)->hooks->clause) (L)->hooks->clause((L), (lits), (n)); } while (0)

#define CONCERTO__LCG_TRUE (-1)
#define CONCERTO__LCG_FALSE (-2)
#define CONCERTO__LCG_NONE (-1)          /* reason of a decision or a level-0 fact */

typedef struct cc__lcg {
    cc_context* ctx;
    const cc__lcg_hooks* hooks;   /* tests only (NULL: none) */
    const cc__prob* p;
    int n, k, H, T;   /* T: the target, in steps */
    int *D, *tail, *lo, *hi, *base, *vjob;
    int nv, nb;   /* variables: nb bounds' literals [s_j >= t], then the pairs' orders */
    /* pairs of jobs that cannot overlap and that no path orders: pair q's
       variable nb + q, true when pi[q] runs before pj[q]; each job's pairs
       at poff[j] .. poff[j + 1]: the other job pot[e] and the literal
       "j runs first" plt[e] */
    int np, *pi, *pj, *poff, *pot, *plt;
    signed char *phase, *seen;
    int keep_phase;   /* the phases stay the best schedule's (not saved on backtrack) */
    int tier2;        /* reductions keep the used learnt clauses of LBD up to this (0: none) */
    signed char* lv;  /* [2 nv] each literal's value: 1 true, 0 false, -1 unassigned */
    char* keep;
    /* [k] time-tabling to do: CONCERTO__LCG_PROFILE, a compulsory part on
       the resource changed within [dx, dy) (the profile is rebuilt; the
       jobs whose earliest or latest window meets that range are
       rescanned); CONCERTO__LCG_JOBS, some job's bounds moved (the jobs
       whose jmod passed rscan are rescanned) */
    char* dirty;
    int *dx, *dy;
    int64_t clock, *jmod, *rscan;
    int *pmn, *pmx, *pmax;   /* [k] each profile's nonzero range [pmn, pmx) and peak */
    int *roff, *rj;   /* per resource: its jobs (demand > 0, duration > 0) by demand, descending */
    int *lvl, *rsn, *lb, *ub;
    int *trail, ntrail, qhead;
    int *tlim, *elim, nlev;
    /* learned clauses: [len, lbd (| CONCERTO__LCG_USED), lits...]; watch
       lists by literal: pairs (clause, blocker) */
    int* A; size_t nA, capA;
    int** wv; int *wn, *wc;
    int64_t next_reduce, nreduce;
    /* explanations: [len, lits...], lits[0] implied; a stack cut on backtrack */
    int* E; size_t nE, capE;
    /* conflict and analysis */
    int* confl; int nconfl;
    int* learnt; int nlearnt;
    int *stk, *clr, nclr;   /* the minimisation's stack and the literals it marked */
    /* VSIDS */
    double* act; double inc;
    int *heap, *hpos, nheap;
    /* [k + 1][H + 1]: each resource's profile of compulsory parts, then
       cc__lcg_verify's scratch; [n] each job's part [cs, ce) at the last
       rebuild; analysis stamps */
    int *prof, *cs, *ce, *stamp, nstamp, lbd;
    int64_t conflicts, decisions;
    int oom;
} cc__lcg;

static int cc__lcg_ge(const cc__lcg* L, int j, int t) {
    if (t <= L->lo[j]) return CONCERTO__LCG_TRUE;
    if (t > L->hi[j]) return CONCERTO__LCG_FALSE;
    return 2 * (L->base[j] + (t - L->lo[j] - 1));
}
/* [s_j <= u]: a literal, or a constant */
static int cc__lcg_le(const cc__lcg* L, int j, int u) {
    int g = cc__lcg_ge(L, j, u + 1);
    return g == CONCERTO__LCG_TRUE ? CONCERTO__LCG_FALSE : g == CONCERTO__LCG_FALSE ? CONCERTO__LCG_TRUE : g ^ 1;
}
static int cc__lcg_vt(const cc__lcg* L, int v) { return L->lo[L->vjob[v]] + 1 + (v - L->base[L->vjob[v]]); }
static int cc__lcg_value(const cc__lcg* L, int l) {
    return L->lv[l];
}

/* ---- VSIDS heap ---- */
static void cc__lcg_hup(cc__lcg* L, int i) {
    int v = L->heap[i];
    while (i > 0) {
        int pa = (i - 1) / 2;
        if (L->act[L->heap[pa]] > L->act[v] || (L->act[L->heap[pa]] == L->act[v] && L->heap[pa] < v)) break;
        L->heap[i] = L->heap[pa]; L->hpos[L->heap[i]] = i; i = pa;
    }
    L->heap[i] = v; L->hpos[v] = i;
}
static void cc__lcg_hdown(cc__lcg* L, int i) {
    int v = L->heap[i];
    for (;;) {
        int c = 2 * i + 1, b;
        if (c >= L->nheap) break;
        b = c;
        if (c + 1 < L->nheap) {
            int x = L->heap[c], y = L->heap[c + 1];
            if (L->act[y] > L->act[x] || (L->act[y] == L->act[x] && y < x)) b = c + 1;
        }
        if (L->act[L->heap[b]] < L->act[v] || (L->act[L->heap[b]] == L->act[v] && L->heap[b] > v)) break;
        L->heap[i] = L->heap[b]; L->hpos[L->heap[i]] = i; i = b;
    }
    L->heap[i] = v; L->hpos[v] = i;
}
static void cc__lcg_hins(cc__lcg* L, int v) {
    if (L->hpos[v] >= 0) return;
    L->heap[L->nheap] = v; L->hpos[v] = L->nheap; L->nheap++;
    cc__lcg_hup(L, L->nheap - 1);
}
static int cc__lcg_hpop(cc__lcg* L) {
    int v = L->heap[0];
    L->hpos[v] = -1;
    L->nheap--;
    if (L->nheap > 0) { L->heap[0] = L->heap[L->nheap]; L->hpos[L->heap[0]] = 0; cc__lcg_hdown(L, 0); }
    return v;
}
static void cc__lcg_bump(cc__lcg* L, int v) {
    L->act[v] += L->inc;
    if (L->act[v] > 1e100) {
        int i;
        for (i = 0; i < L->nv; i++) L->act[i] *= 1e-100;
        L->inc *= 1e-100;
    }
    if (L->hpos[v] >= 0) cc__lcg_hup(L, L->hpos[v]);
}

/* ---- assignment ---- */
#define CONCERTO__LCG_JOBS 1
#define CONCERTO__LCG_PROFILE 2

/* job j's bounds moved; its compulsory part [ub, lb + D) changed within
   [x, y) (none: x >= y) */
static void cc__lcg_touch(cc__lcg* L, int j, int x, int y) {
    int r;
    char f = (char)(x < y ? CONCERTO__LCG_PROFILE : CONCERTO__LCG_JOBS);
    L->jmod[j] = ++L->clock;
    for (r = 0; r < L->k; r++)
        if (L->p->dem[(size_t)j * L->k + r] > 0) {
            L->dirty[r] |= f;
            if (x < y) {
                if (x < L->dx[r]) L->dx[r] = x;
                if (y > L->dy[r]) L->dy[r] = y;
            }
        }
}

/* every profile to rebuild; all: every job to rescan too (else none: the
   bounds are a fixpoint, as after a backjump, and the next pass rescans
   only what moves from there) */
static void cc__lcg_touch_all(cc__lcg* L, int all) {
    int r;
    memset(L->dirty, CONCERTO__LCG_PROFILE, (size_t)L->k);
    for (r = 0; r < L->k; r++) {
        L->dx[r] = all ? 0 : L->H + 1;
        L->dy[r] = all ? L->H + 1 : 0;
        if (!all) L->rscan[r] = L->clock;
    }
}

static void cc__lcg_put(cc__lcg* L, int l, int rsn) {
    int v = l >> 1;
    L->lv[l] = 1; L->lv[l ^ 1] = 0;
    L->lvl[v] = L->nlev;
    L->rsn[v] = rsn;
    L->trail[L->ntrail++] = l;
}

/* The conflict of an implication p <- reason whose p is false: p (when it
   is a literal) and the reason's antecedents, negated. */
static void cc__lcg_conflict_of(cc__lcg* L, int p, int rsn) {
    L->nconfl = 0;
    if (p >= 0) L->confl[L->nconfl++] = p;
    if (rsn <= -2) L->confl[L->nconfl++] = (-2 - rsn) ^ 1;
    else if (rsn >= 0) {
        const int* c = (rsn & 1) ? L->E + (rsn >> 1) : L->A + (rsn >> 1);
        int len = c[0], i;
        const int* lits = (rsn & 1) ? c + 1 : c + 2;
        for (i = 1; i < len; i++) L->confl[L->nconfl++] = lits[i];
    }
}

/* s_j >= t because of rsn; 0 on a conflict (in L->confl). */
static int cc__lcg_set_lb(cc__lcg* L, int j, int t, int rsn) {
    int u, x;
    if (t <= L->lb[j]) return 1;
    if (t > L->ub[j]) { cc__lcg_conflict_of(L, cc__lcg_ge(L, j, t), rsn); return 0; }
    cc__lcg_put(L, cc__lcg_ge(L, j, t), rsn);
    for (u = t - 1; u > L->lb[j]; u--) cc__lcg_put(L, cc__lcg_ge(L, j, u), -2 - cc__lcg_ge(L, j, u + 1));
    x = L->lb[j] + L->D[j] > L->ub[j] ? L->lb[j] + L->D[j] : L->ub[j];   /* the part grows from x to t + D */
    L->lb[j] = t;
    cc__lcg_touch(L, j, x, t + L->D[j]);
    return 1;
}

/* s_j <= u because of rsn. */
static int cc__lcg_set_ub(cc__lcg* L, int j, int u, int rsn) {
    int w, g, y;
    if (u >= L->ub[j]) return 1;
    if (u < L->lb[j]) {
        g = cc__lcg_ge(L, j, u + 1);
        cc__lcg_conflict_of(L, g >= 0 ? g ^ 1 : -1, rsn);
        return 0;
    }
    cc__lcg_put(L, cc__lcg_ge(L, j, u + 1) ^ 1, rsn);
    for (w = u + 2; w <= L->ub[j]; w++) cc__lcg_put(L, cc__lcg_ge(L, j, w) ^ 1, -2 - (cc__lcg_ge(L, j, w - 1) ^ 1));
    y = L->lb[j] + L->D[j] < L->ub[j] ? L->lb[j] + L->D[j] : L->ub[j];   /* the part grows from y down to u */
    L->ub[j] = u;
    cc__lcg_touch(L, j, u, y);
    return 1;
}

static int cc__lcg_assign(cc__lcg* L, int l, int rsn) {
    int v = l >> 1, j, t;
    if (v >= L->nb) {   /* an order */
        if (L->lv[l] == 1) return 1;
        if (L->lv[l] == 0) { cc__lcg_conflict_of(L, l, rsn); return 0; }
        cc__lcg_put(L, l, rsn);
        return 1;
    }
    j = L->vjob[v]; t = cc__lcg_vt(L, v);
    return (l & 1) ? cc__lcg_set_ub(L, j, t - 1, rsn) : cc__lcg_set_lb(L, j, t, rsn);
}

static void cc__lcg_backtrack(cc__lcg* L, int level) {
    int i;
    if (L->nlev <= level) return;
    for (i = L->ntrail - 1; i >= L->tlim[level]; i--) {
        int l = L->trail[i], v = l >> 1, j, t;
        if (!L->keep_phase) L->phase[v] = L->lv[2 * v];
        L->lv[2 * v] = L->lv[2 * v + 1] = -1;
        cc__lcg_hins(L, v);
        if (v >= L->nb) continue;   /* an order: no bound */
        j = L->vjob[v]; t = cc__lcg_vt(L, v);
        if (l & 1) { if (L->ub[j] < t) L->ub[j] = t; }
        else if (L->lb[j] > t - 1) L->lb[j] = t - 1;
    }
    L->ntrail = L->qhead = L->tlim[level];
    cc__lcg_touch_all(L, 0);   /* the level backjumped to was a fixpoint */
    L->nE = (size_t)L->elim[level];
    L->nlev = level;
}

/* ---- explanations ---- */
static int cc__lcg_ebegin(cc__lcg* L, int p) {
    if (L->nE + (size_t)2 * L->n + 8 > CONCERTO__LCG_MAX_ARENA ||
        !CONCERTO__GROW(L->ctx, L->E, L->capE, L->nE + (size_t)2 * L->n + 8)) { L->oom = 1; return -1; }
    L->E[L->nE] = 1;
    L->E[L->nE + 1] = p;
    return (int)L->nE;
}
static void cc__lcg_eadd(cc__lcg* L, int off, int a) {   /* antecedent a (true), unless constant */
    if (a >= 0) { L->E[off + 1 + L->E[off]] = a ^ 1; L->E[off]++; }
}
static int cc__lcg_eend(cc__lcg* L, int off) {
    CONCERTO__LCG_CLAUSE(L, L->E + off + 1, L->E[off]);
    L->nE += (size_t)L->E[off] + 1;
    return (off << 1) | 1;
}

/* ---- clause propagation ---- */
static int cc__lcg_wpush(cc__lcg* L, int lit, int c, int blk) {
    if (L->wn[lit] + 2 > L->wc[lit]) {
        size_t cap = (size_t)L->wc[lit];
        if (!CONCERTO__GROW(L->ctx, L->wv[lit], cap, (size_t)L->wn[lit] + 2)) { L->oom = 1; return 0; }
        L->wc[lit] = (int)cap;
    }
    L->wv[lit][L->wn[lit]++] = c;
    L->wv[lit][L->wn[lit]++] = blk;
    return 1;
}

static int cc__lcg_watch(cc__lcg* L, int F) {
    int *w = L->wv[F], n = L->wn[F], i = 0, o = 0, ok = 1;
    while (i < n) {
        int c = w[i], blk = w[i + 1], len, *lits, q, first;
        i += 2;
        if (cc__lcg_value(L, blk) == 1) { w[o++] = c; w[o++] = blk; continue; }
        len = L->A[c]; lits = L->A + c + 2;
        if (lits[0] == F) { lits[0] = lits[1]; lits[1] = F; }
        first = lits[0];
        if (first != blk && cc__lcg_value(L, first) == 1) { w[o++] = c; w[o++] = first; continue; }
        for (q = 2; q < len; q++)
            if (cc__lcg_value(L, lits[q]) != 0) break;
        if (q < len) {
            lits[1] = lits[q]; lits[q] = F;
            if (!cc__lcg_wpush(L, lits[1], c, first)) { ok = 0; w = L->wv[F]; w[o++] = c; w[o++] = first; break; }
            w = L->wv[F];   /* lits[1] != F, so this list did not move */
            continue;
        }
        w[o++] = c; w[o++] = first;
        if (cc__lcg_value(L, first) == 0) {
            L->nconfl = 0;
            for (q = 0; q < len; q++) L->confl[L->nconfl++] = lits[q];
            ok = 0;
            break;
        }
        if (!cc__lcg_assign(L, first, c << 1)) { ok = 0; break; }
    }
    while (i < n) w[o++] = w[i++];
    L->wn[F] = o;
    return ok;
}

/* ---- time-tabling ---- */

/* Pushes the literals of tasks (other than skip) whose compulsory parts
   cover t on resource r, largest demand first, until their demand exceeds
   need; into the explanation at off (off < 0: into the conflict). */
static void cc__lcg_cover(cc__lcg* L, int r, int t, int skip, int64_t need, int off) {
    int i, a, k = L->k;
    int64_t sum = 0;
    for (i = L->roff[r]; i < L->roff[r + 1] && sum <= need; i++) {
        int j = L->rj[i], a1, a2;
        if (j == skip || L->cs[j] > t || t >= L->ce[j]) continue;
        a1 = cc__lcg_ge(L, j, t - L->D[j] + 1);
        a2 = cc__lcg_le(L, j, t);
        sum += L->p->dem[(size_t)j * k + r];
        for (a = 0; a < 2; a++) {
            int x = a ? a2 : a1;
            if (x < 0) continue;
            if (off < 0) L->confl[L->nconfl++] = x ^ 1;
            else cc__lcg_eadd(L, off, x);
        }
    }
}

/* 1: something moved, 0: nothing, -1: a conflict. A resource rescans the
   jobs that moved since its last pass and those whose earliest or latest
   window meets the range where its profile changed (it keeps the profile
   when nothing changed); the others were at their fixpoint against the
   same profile values, so the result is that of a pass over every job. */
static int cc__lcg_tt(cc__lcg* L) {
    int n = L->n, k = L->k, r, j, t, moved = 0, all = L->hooks && L->hooks->tt_full;
    for (r = 0; r < k; r++) {
        int64_t cap = L->p->cap[r], maxp, since = L->rscan[r];
        int* prof = L->prof + (size_t)r * ((size_t)L->H + 1);
        int full = (L->dirty[r] & CONCERTO__LCG_PROFILE) || all;
        int x0 = all ? 0 : L->dx[r], y0 = all ? L->H + 1 : L->dy[r];
        if (!L->dirty[r] && !all) continue;
        L->dirty[r] = 0;
        L->dx[r] = L->H + 1; L->dy[r] = 0;
        L->rscan[r] = L->clock;
        if (full) {   /* the profile of the compulsory parts, rebuilt over its range */
            int mn = L->H, mx = 0, run = 0, pk = 0;
            if (L->pmx[r] > L->pmn[r]) memset(prof + L->pmn[r], 0, ((size_t)(L->pmx[r] - L->pmn[r]) + 1) * sizeof *prof);
            for (j = 0; j < n; j++) {   /* (cs, ce: a job's part, the same on each of its resources) */
                int d = L->p->dem[(size_t)j * k + r];
                if (d <= 0 || L->D[j] <= 0) continue;
                L->cs[j] = L->ce[j] = 0;
                if (L->ub[j] < L->lb[j] + L->D[j]) {
                    L->cs[j] = L->ub[j]; L->ce[j] = L->lb[j] + L->D[j];
                    prof[L->cs[j]] += d;
                    prof[L->ce[j]] -= d;
                    if (L->cs[j] < mn) mn = L->cs[j];
                    if (L->ce[j] > mx) mx = L->ce[j];
                }
            }
            for (t = mn; t < mx; t++) {
                run += prof[t];
                prof[t] = run;
                if (run > pk) pk = run;
            }
            if (mx > mn) prof[mx] = 0;
            L->pmn[r] = mn < mx ? mn : 0; L->pmx[r] = mn < mx ? mx : 0; L->pmax[r] = pk;
            if (pk > cap)
                for (t = mn; t < mx; t++)
                    if (prof[t] > cap) {
                        L->nconfl = 0;
                        cc__lcg_cover(L, r, t, -1, cap, -1);
                        return -1;
                    }
        }
        maxp = L->pmax[r];
        if (maxp == 0) continue;
        for (j = 0; j < n; j++) {
            int d = L->p->dem[(size_t)j * k + r], D = L->D[j];
            if (d <= 0 || D <= 0 || L->lb[j] == L->ub[j] || maxp + d <= cap) continue;
            if (L->jmod[j] <= since && !(L->lb[j] < y0 && L->lb[j] + D > x0) && !(L->ub[j] < y0 && L->ub[j] + D > x0)) continue;
            /* earliest start */
            t = L->lb[j];
            while (t < L->lb[j] + D) {
                int own = (t >= L->cs[j] && t < L->ce[j]) ? d : 0;
                if ((int64_t)prof[t] - own + d > cap) {
                    int pl = cc__lcg_ge(L, j, t + 1), a = cc__lcg_ge(L, j, t - D + 1), off;
                    if (pl == CONCERTO__LCG_FALSE) {   /* s_j > t impossible: a conflict */
                        L->nconfl = 0;
                        if (a >= 0) L->confl[L->nconfl++] = a ^ 1;
                        cc__lcg_cover(L, r, t, j, cap - d, -1);
                        return -1;
                    }
                    off = cc__lcg_ebegin(L, pl);
                    if (off < 0) return -1;
                    cc__lcg_eadd(L, off, a);
                    cc__lcg_cover(L, r, t, j, cap - d, off);
                    if (!cc__lcg_set_lb(L, j, t + 1, cc__lcg_eend(L, off))) return -1;
                    moved = 1;
                    t = L->lb[j];
                } else t++;
            }
            if (L->lb[j] == L->ub[j]) continue;
            /* latest start */
            t = L->ub[j] + D - 1;
            while (t >= L->ub[j]) {
                int own = (t >= L->cs[j] && t < L->ce[j]) ? d : 0;
                if ((int64_t)prof[t] - own + d > cap) {
                    int g = cc__lcg_ge(L, j, t - D + 1);   /* s_j <= t - D is its negation */
                    int off, a;
                    if (g == CONCERTO__LCG_TRUE) {   /* s_j <= t - D impossible: a conflict */
                        L->nconfl = 0;
                        a = cc__lcg_ge(L, j, t + 1);
                        if (a >= 0) L->confl[L->nconfl++] = a;   /* s_j <= t (true) negated */
                        cc__lcg_cover(L, r, t, j, cap - d, -1);
                        return -1;
                    }
                    off = cc__lcg_ebegin(L, g ^ 1);
                    if (off < 0) return -1;
                    a = cc__lcg_ge(L, j, t + 1);
                    if (a >= 0) cc__lcg_eadd(L, off, a ^ 1);
                    cc__lcg_cover(L, r, t, j, cap - d, off);
                    if (!cc__lcg_set_ub(L, j, t - D, cc__lcg_eend(L, off))) return -1;
                    moved = 1;
                    t = L->ub[j] + D - 1;
                } else t--;
            }
        }
    }
    return moved;
}

/* ---- orders of the pairs that cannot overlap ---- */

/* The reason of lit (a literal, or the constant false) from the true
   literals a1 and a2 (either may be a constant): an explanation, or -1
   with their conflict in L->confl where lit is false (or out of memory). */
static int cc__lcg_because(cc__lcg* L, int lit, int a1, int a2) {
    int off;
    if (lit == CONCERTO__LCG_FALSE) {
        L->nconfl = 0;
        if (a1 >= 0) L->confl[L->nconfl++] = a1 ^ 1;
        if (a2 >= 0) L->confl[L->nconfl++] = a2 ^ 1;
        return -1;
    }
    off = cc__lcg_ebegin(L, lit);
    if (off < 0) return -1;
    cc__lcg_eadd(L, off, a1);
    cc__lcg_eadd(L, off, a2);
    return cc__lcg_eend(L, off);
}

/* The order o (true): a runs before b. b's earliest start from a's
   ([s_b >= lb_a + D_a] <- o, [s_a >= lb_a]); 0 on a conflict. */
static int cc__lcg_order_lb(cc__lcg* L, int o, int a, int b) {
    int x = L->lb[a] + L->D[a], r;
    if (x <= L->lb[b]) return 1;
    r = cc__lcg_because(L, cc__lcg_ge(L, b, x), o, cc__lcg_ge(L, a, L->lb[a]));
    return r >= 0 && cc__lcg_set_lb(L, b, x, r);
}
/* ... and a's latest start from b's ([s_a <= ub_b - D_a] <- o, [s_b <= ub_b]) */
static int cc__lcg_order_ub(cc__lcg* L, int o, int a, int b) {
    int x = L->ub[b] - L->D[a], r;
    if (L->ub[a] <= x) return 1;
    r = cc__lcg_because(L, cc__lcg_le(L, a, x), o, cc__lcg_le(L, b, L->ub[b]));
    return r >= 0 && cc__lcg_set_ub(L, a, x, r);
}

/* Job j's earliest start (lb) or latest start (!lb) moved: through each of
   its pairs, the other job's bound where the order is set, else the order
   where the bounds leave one (j cannot end by the other's latest start:
   the other runs first). 0 on a conflict. */
static int cc__lcg_pairs(cc__lcg* L, int j, int lb) {
    int e;
    if (L->np == 0) return 1;
    for (e = L->poff[j]; e < L->poff[j + 1]; e++) {
        int y = L->pot[e], jy = L->plt[e], r;
        if (lb) {
            if (L->lv[jy] == 1) { if (!cc__lcg_order_lb(L, jy, j, y)) return 0; }
            else if (L->lv[jy] < 0 && L->lb[j] + L->D[j] > L->ub[y]) {
                r = cc__lcg_because(L, jy ^ 1, cc__lcg_ge(L, j, L->lb[j]), cc__lcg_le(L, y, L->ub[y]));
                if (r < 0 || !cc__lcg_assign(L, jy ^ 1, r)) return 0;
            }
        } else {
            if (L->lv[jy] == 0) { if (!cc__lcg_order_ub(L, jy ^ 1, y, j)) return 0; }
            else if (L->lv[jy] < 0 && L->lb[y] + L->D[y] > L->ub[j]) {
                r = cc__lcg_because(L, jy, cc__lcg_ge(L, y, L->lb[y]), cc__lcg_le(L, j, L->ub[j]));
                if (r < 0 || !cc__lcg_assign(L, jy, r)) return 0;
            }
        }
    }
    return 1;
}

/* The pairs: jobs of positive duration that some resource lacks the room
   to run together and that no path orders (order: a topological order).
   0 on out of memory. */
static int cc__lcg_pairs_init(cc__lcg* L, const int* order) {
    const cc__prob* p = L->p;
    int n = L->n, w = (L->n + 63) / 64, a, b, e, r, pass;
    uint64_t* reach = (uint64_t*)cc__calloc(L->ctx, (size_t)n * (size_t)w + 1, sizeof(uint64_t));   /* [a][b]: a path a -> b */
    if (!reach || !(L->poff = (int*)cc__calloc(L->ctx, (size_t)n + 1, sizeof(int)))) { cc__free(L->ctx, reach); return 0; }
    cc__reach(n, p->succ_off, p->succ, order, (size_t)w, reach);
    for (pass = 0; pass < 2; pass++) {   /* count, then list */
        L->np = 0;
        for (a = 0; a < n; a++)
            for (b = a + 1; b < n; b++) {
                if (L->D[a] <= 0 || L->D[b] <= 0 || ((reach[(size_t)a * w + b / 64] >> (b % 64)) & 1) ||
                    ((reach[(size_t)b * w + a / 64] >> (a % 64)) & 1)) continue;
                for (r = 0; r < L->k; r++)
                    if ((int64_t)p->dem[(size_t)a * L->k + r] + p->dem[(size_t)b * L->k + r] > p->cap[r]) break;
                if (r == L->k) continue;
                if (pass == 1) {
                    L->pi[L->np] = a; L->pj[L->np] = b;
                    L->pot[L->poff[a]] = b; L->plt[L->poff[a]++] = 2 * (L->nb + L->np);
                    L->pot[L->poff[b]] = a; L->plt[L->poff[b]++] = 2 * (L->nb + L->np) + 1;
                } else { L->poff[a]++; L->poff[b]++; }
                L->np++;
            }
        if (pass == 0) {
            L->pi = (int*)cc__calloc(L->ctx, (size_t)L->np + 1, sizeof(int));
            L->pj = (int*)cc__calloc(L->ctx, (size_t)L->np + 1, sizeof(int));
            L->pot = (int*)cc__calloc(L->ctx, 2 * (size_t)L->np + 1, sizeof(int));
            L->plt = (int*)cc__calloc(L->ctx, 2 * (size_t)L->np + 1, sizeof(int));
            if (!L->pi || !L->pj || !L->pot || !L->plt) { cc__free(L->ctx, reach); return 0; }
            for (a = 0, e = 0; a <= n; a++) { int c = a < n ? L->poff[a] : 0; L->poff[a] = e; e += c; }   /* starts */
        }
    }
    for (a = n; a > 0; a--) L->poff[a] = L->poff[a - 1];   /* (each start advanced to its end: shifted back) */
    L->poff[0] = 0;
    cc__free(L->ctx, reach);
    return 1;
}

/* Propagates to a fixpoint: 1, or 0 on a conflict (in L->confl). */
static int cc__lcg_propagate(cc__lcg* L) {
    for (;;) {
        int r;
        while (L->qhead < L->ntrail) {
            int l = L->trail[L->qhead++], v = l >> 1, j, t, e;
            const cc__prob* p = L->p;
            if (L->wn[l ^ 1] && !cc__lcg_watch(L, l ^ 1)) return 0;
            if (v >= L->nb) {   /* an order: a before b */
                int q = v - L->nb, a = (l & 1) ? L->pj[q] : L->pi[q], b = (l & 1) ? L->pi[q] : L->pj[q];
                if (!cc__lcg_order_lb(L, l, a, b) || !cc__lcg_order_ub(L, l, a, b)) return 0;
                continue;
            }
            j = L->vjob[v]; t = cc__lcg_vt(L, v);
            if (!(l & 1)) {
                if (t != L->lb[j]) continue;
                for (e = p->succ_off[j]; e < p->succ_off[j + 1]; e++)
                    if (!cc__lcg_set_lb(L, p->succ[e], t + L->D[j], -2 - l)) return 0;
                if (!cc__lcg_pairs(L, j, 1)) return 0;
            } else {
                if (t - 1 != L->ub[j]) continue;
                for (e = p->pred_off[j]; e < p->pred_off[j + 1]; e++) {
                    int q = p->pred[e];
                    if (!cc__lcg_set_ub(L, q, t - 1 - L->D[q], -2 - l)) return 0;
                }
                if (!cc__lcg_pairs(L, j, 0)) return 0;
            }
        }
        if (L->oom) return 0;
        r = cc__lcg_tt(L);
        if (r < 0) return 0;
        if (r > 0) continue;
        return 1;
    }
}

/* ---- conflict analysis (first UIP) ---- */

/* the antecedents of v's reason into the analysis */
static const int* cc__lcg_reason(const cc__lcg* L, int v, int* len, int* one) {
    int r = L->rsn[v];
    if (r <= -2) { *one = (-2 - r) ^ 1; *len = 1; return one; }
    if (r & 1) { *len = L->E[r >> 1] - 1; return L->E + (r >> 1) + 2; }
    *len = L->A[r >> 1] - 1;
    return L->A + (r >> 1) + 3;
}

/* The learnt literal on variable v0 (which has a reason) follows from the
   clause's other literals: each antecedent down its reasons is in the
   clause (seen), at level 0, or again such a literal; abs: the clause's
   levels, hashed to bits, so that an antecedent of another level fails
   at once (MiniSat's recursive minimisation, Sorensson & Biere 2009). The
   literals found redundant stay seen, listed in L->clr, until the
   analysis clears them. */
static int cc__lcg_redundant(cc__lcg* L, int v0, unsigned abs) {
    int top = 0, mark = L->nclr, one;
    L->stk[top++] = v0;
    while (top > 0) {
        int u = L->stk[--top], len, i;
        const int* rc = cc__lcg_reason(L, u, &len, &one);
        for (i = 0; i < len; i++) {
            int w = rc[i] >> 1;
            if (L->seen[w] || L->lvl[w] == 0) continue;
            if (L->rsn[w] != CONCERTO__LCG_NONE && ((1u << (L->lvl[w] & 31)) & abs)) {
                L->seen[w] = 1;
                L->stk[top++] = w;
                L->clr[L->nclr++] = w;
            } else {   /* a decision, or a level not in the clause: undo this search's marks */
                for (i = mark; i < L->nclr; i++) L->seen[L->clr[i]] = 0;
                L->nclr = mark;
                return 0;
            }
        }
    }
    return 1;
}

/* Learns from L->confl; returns the backjump level, -1 when the conflict
   holds at level 0. */
static int cc__lcg_analyze(cc__lcg* L) {
    int path = 0, i, idx, top = 0, bj = 0, p = -1, one;
    const int* c = L->confl;
    int len = L->nconfl;
    for (i = 0; i < len; i++)
        if (L->lvl[c[i] >> 1] > top) top = L->lvl[c[i] >> 1];
    if (top == 0) return -1;
    if (top < L->nlev) cc__lcg_backtrack(L, top);
    L->nlearnt = 1;
    idx = L->ntrail - 1;
    for (;;) {
        for (i = 0; i < len; i++) {
            int q = c[i], v = q >> 1;
            if (L->seen[v] || L->lvl[v] == 0) continue;
            L->seen[v] = 1;
            cc__lcg_bump(L, v);
            if (L->lvl[v] >= L->nlev) path++;
            else L->learnt[L->nlearnt++] = q;
        }
        while (!L->seen[L->trail[idx] >> 1]) idx--;
        p = L->trail[idx--];
        L->seen[p >> 1] = 0;
        if (--path == 0) break;
        c = cc__lcg_reason(L, p >> 1, &len, &one);
        if (L->rsn[p >> 1] >= 0 && !(L->rsn[p >> 1] & 1)) {   /* a learnt clause's LBD, lowered where it is less now (Glucose) */
            int* cl = L->A + (L->rsn[p >> 1] >> 1), k, nl = 0;
            cl[1] |= CONCERTO__LCG_USED;
            if (CONCERTO__LCG_LBD(cl[1]) > 2) {
                L->nstamp++;
                for (k = 0; k < cl[0]; k++) {
                    int lv = L->lvl[cl[2 + k] >> 1];
                    if (L->stamp[lv] != L->nstamp) { L->stamp[lv] = L->nstamp; nl++; }
                }
                if (nl < CONCERTO__LCG_LBD(cl[1])) cl[1] = nl | CONCERTO__LCG_USED;
            }
        }
    }
    L->learnt[0] = p ^ 1;
    /* minimisation: a literal implied by the others is dropped */
    {
        int m = 1;
        unsigned abs = 0;
        L->nclr = 0;
        for (i = 1; i < L->nlearnt; i++) abs |= 1u << (L->lvl[L->learnt[i] >> 1] & 31);   /* (all seen) */
        for (i = 1; i < L->nlearnt; i++) {
            int v = L->learnt[i] >> 1;
            L->keep[i] = (char)(L->rsn[v] == CONCERTO__LCG_NONE || !cc__lcg_redundant(L, v, abs));
        }
        for (i = 1; i < L->nlearnt; i++) L->seen[L->learnt[i] >> 1] = 0;
        for (i = 0; i < L->nclr; i++) L->seen[L->clr[i]] = 0;
        for (i = 1; i < L->nlearnt; i++)
            if (L->keep[i]) L->learnt[m++] = L->learnt[i];
        L->nlearnt = m;
    }
    /* LBD: the distinct levels among the literals */
    L->nstamp++;
    L->lbd = 0;
    for (i = 0; i < L->nlearnt; i++) {
        int lv = L->lvl[L->learnt[i] >> 1];
        if (L->stamp[lv] != L->nstamp) { L->stamp[lv] = L->nstamp; L->lbd++; }
    }
    /* the highest other level goes to position 1 */
    for (i = 1; i < L->nlearnt; i++)
        if (L->lvl[L->learnt[i] >> 1] > bj) {
            int x = L->learnt[1];
            bj = L->lvl[L->learnt[i] >> 1];
            L->learnt[1] = L->learnt[i]; L->learnt[i] = x;
        }
    L->inc *= CONCERTO__LCG_DECAY;
    return bj;
}

/* Adds the learnt clause (at least two literals); its offset */
static int cc__lcg_add_learnt(cc__lcg* L, int lbd) {
    int c, i, m = L->nlearnt;
    if (L->nA + (size_t)m + 2 > CONCERTO__LCG_MAX_ARENA ||
        !CONCERTO__GROW(L->ctx, L->A, L->capA, L->nA + (size_t)m + 2)) { L->oom = 1; return -1; }
    c = (int)L->nA;
    L->A[c] = m;
    L->A[c + 1] = lbd;
    for (i = 0; i < m; i++) L->A[c + 2 + i] = L->learnt[i];
    if (!cc__lcg_wpush(L, L->learnt[0], c, L->learnt[1]) || !cc__lcg_wpush(L, L->learnt[1], c, L->learnt[0])) return -1;
    L->nA += (size_t)m + 2;
    CONCERTO__LCG_CLAUSE(L, L->A + c + 2, m);
    return c;
}

/* A learnt clause that a reduction keeps whatever its rank: of the middle
   tier (L->tier2: LBD 2 or less, or up to L->tier2 and used since the last
   reduction) */
static int cc__lcg_tiered(const cc__lcg* L, int w) {
    int b = CONCERTO__LCG_LBD(w);
    return L->tier2 > 0 && (b <= 2 || (b <= L->tier2 && (w & CONCERTO__LCG_USED)));
}

/* Drops the half of the learnt clauses of largest LBD (above 2, not the
   reason of an assigned literal; with L->tier2, the half of those outside
   the middle tier), compacts the arena, clears the clauses' marks of use
   and rebuilds the watches. */
static void cc__lcg_reduce(cc__lcg* L) {
    size_t c, o = 0;
    int hist[64], lim = 0, i, keep_at_lim, cnt = 0, half;
    memset(hist, 0, sizeof hist);
    for (c = 0; c < L->nA; c += (size_t)L->A[c] + 2) {
        int b = CONCERTO__LCG_LBD(L->A[c + 1]) > 63 ? 63 : CONCERTO__LCG_LBD(L->A[c + 1]);
        if (cc__lcg_tiered(L, L->A[c + 1])) continue;
        hist[b]++; cnt++;
    }
    half = cnt / 2;
    /* the LBD at which the kept half ends */
    for (i = 0, lim = 0; i < 64; i++) { if (lim + hist[i] > half) break; lim += hist[i]; }
    keep_at_lim = half - lim;   /* clauses of LBD i still kept */
    lim = i < 3 ? 3 : i;
    if (i < 3) keep_at_lim = 0;
    for (i = 0; i < 2 * L->nv; i++) L->wn[i] = 0;
    for (c = 0; c < L->nA;) {
        int len = L->A[c], b = CONCERTO__LCG_LBD(L->A[c + 1]) > 63 ? 63 : CONCERTO__LCG_LBD(L->A[c + 1]), p0 = L->A[c + 2], v = p0 >> 1;
        int locked = cc__lcg_value(L, p0) == 1 && L->rsn[v] == (int)(c << 1);
        int keep = locked || cc__lcg_tiered(L, L->A[c + 1]) || b < lim || (b == lim && keep_at_lim-- > 0);
        L->A[c + 1] = CONCERTO__LCG_LBD(L->A[c + 1]);
        if (keep) {
            if (locked) L->rsn[v] = (int)(o << 1);
            memmove(L->A + o, L->A + c, ((size_t)len + 2) * sizeof *L->A);
            cc__lcg_wpush(L, L->A[o + 2], (int)o, L->A[o + 3]);
            cc__lcg_wpush(L, L->A[o + 3], (int)o, L->A[o + 2]);
            o += (size_t)len + 2;
        }
        c += (size_t)len + 2;
    }
    L->nA = o;
}

/* The level a restart backtracks to: the decisions of higher activity
   than the best free literal, which the search would make again first,
   stay with what they implied. */
static int cc__lcg_restart_level(cc__lcg* L) {
    int lev, v;
    while (L->nheap > 0 && L->lv[2 * L->heap[0]] >= 0) cc__lcg_hpop(L);   /* (assigned: back in on backtrack) */
    if (L->nheap == 0) return 0;
    v = L->heap[0];
    for (lev = 0; lev < L->nlev; lev++) {
        int d = L->trail[L->tlim[lev]] >> 1;   /* level lev + 1's decision, the first on its trail */
        if (L->act[d] < L->act[v] || (L->act[d] == L->act[v] && d > v)) break;
    }
    return lev;
}

static void cc__lcg_free(cc__lcg* L) {
    cc_context* ctx = L->ctx;
    int i;
    cc__free(ctx, L->D); cc__free(ctx, L->tail); cc__free(ctx, L->lo); cc__free(ctx, L->hi);
    cc__free(ctx, L->base); cc__free(ctx, L->vjob); cc__free(ctx, L->lv); cc__free(ctx, L->phase);
    cc__free(ctx, L->seen); cc__free(ctx, L->lvl); cc__free(ctx, L->rsn); cc__free(ctx, L->lb);
    cc__free(ctx, L->ub); cc__free(ctx, L->trail); cc__free(ctx, L->tlim); cc__free(ctx, L->elim);
    cc__free(ctx, L->A); if (L->wv) for (i = 0; i < 2 * L->nv; i++) cc__free(ctx, L->wv[i]);
    cc__free(ctx, L->wv); cc__free(ctx, L->wn); cc__free(ctx, L->wc); cc__free(ctx, L->stamp); cc__free(ctx, L->keep); cc__free(ctx, L->dirty); cc__free(ctx, L->jmod); cc__free(ctx, L->dx); cc__free(ctx, L->dy); cc__free(ctx, L->rscan); cc__free(ctx, L->pmn); cc__free(ctx, L->pmx); cc__free(ctx, L->pmax); cc__free(ctx, L->roff); cc__free(ctx, L->rj); cc__free(ctx, L->E); cc__free(ctx, L->confl);
    cc__free(ctx, L->learnt); cc__free(ctx, L->stk); cc__free(ctx, L->clr); cc__free(ctx, L->act); cc__free(ctx, L->heap); cc__free(ctx, L->hpos);
    cc__free(ctx, L->prof); cc__free(ctx, L->cs); cc__free(ctx, L->ce);
    cc__free(ctx, L->pi); cc__free(ctx, L->pj); cc__free(ctx, L->poff); cc__free(ctx, L->pot); cc__free(ctx, L->plt);
}

/* New target: every job ends by T (steps); at level 0. 0: infeasible. */
static int cc__lcg_target(cc__lcg* L, int T) {
    int j;
    cc__lcg_backtrack(L, 0);
    L->T = T;
    for (j = 0; j < L->n; j++)
        if (!cc__lcg_set_ub(L, j, T - L->tail[j], CONCERTO__LCG_NONE)) return 0;
    return cc__lcg_propagate(L);
}

/* Learns from the conflict in L->confl and asserts the learnt literal;
   0 when the conflict holds at level 0 (or out of memory: L->oom). */
static int cc__lcg_learn(cc__lcg* L) {
    for (;;) {
        int bj, c, ok;
        CONCERTO__LCG_CLAUSE(L, L->confl, L->nconfl);
        L->conflicts++;
        bj = cc__lcg_analyze(L);
        if (bj < 0) return 0;
        cc__lcg_backtrack(L, bj);
        if (L->nlearnt == 1) ok = cc__lcg_assign(L, L->learnt[0], CONCERTO__LCG_NONE);
        else {
            if ((c = cc__lcg_add_learnt(L, L->lbd)) < 0) return 0;
            ok = cc__lcg_assign(L, L->learnt[0], c << 1);
        }
        if (ok) return 1;   /* (the asserted literal is unassigned after the backjump, so always) */
    }
}

/* The starts sol[] (steps) against the problem: precedence and every
   resource's capacity. 1 when they hold. */
static int cc__lcg_verify(cc__lcg* L, const int* sol) {
    const cc__prob* p = L->p;
    int i, e, r, t;
    for (i = 0; i < L->n; i++) {
        if (sol[i] < 0 || sol[i] + L->D[i] > L->H) return 0;
        for (e = p->succ_off[i]; e < p->succ_off[i + 1]; e++)
            if (sol[p->succ[e]] < sol[i] + L->D[i]) return 0;
    }
    for (r = 0; r < L->k; r++) {
        int64_t u = 0;
        int* prof = L->prof + (size_t)L->k * ((size_t)L->H + 1);   /* the scratch past the resources' profiles */
        memset(prof, 0, ((size_t)L->H + 1) * sizeof *prof);
        for (i = 0; i < L->n; i++)
            if (L->D[i] > 0 && p->dem[(size_t)i * L->k + r] > 0) {
                prof[sol[i]] += p->dem[(size_t)i * L->k + r];
                prof[sol[i] + L->D[i]] -= p->dem[(size_t)i * L->k + r];
            }
        for (t = 0; t < L->H; t++) {
            u += prof[t];
            if (u > p->cap[r]) return 0;
        }
    }
    return 1;
}

/* Builds the solver for the target T (steps): every job ends by T. 1 ready,
   0 out of memory, 2 the critical path alone leaves no room (nothing ends
   by T), -1 unsupported (a cycle, above CONCERTO__LCG_MAX_VARS literals,
   or the resources' profiles above 16 times that many steps). orders: also
   the pairs' order literals (cc__lcg_pairs_init). Durations must be
   multiples of g. cc__lcg_free in every case. */
static int cc__lcg_init(cc__lcg* L, cc_context* ctx, const cc__prob* p, cc__time g, int T, int orders) {
    int n = p->n, i, j, e, r, m;
    int64_t nv = 0;
    int* order;
    memset(L, 0, sizeof *L);
    L->ctx = ctx; L->p = p; L->n = n; L->k = p->k;
#define CONCERTO__LCG_A(x, type, cnt) if (!((x) = (type*)cc__calloc(ctx, (size_t)(cnt) + 1, sizeof(type)))) return 0
    CONCERTO__LCG_A(L->D, int, n); CONCERTO__LCG_A(L->tail, int, n); CONCERTO__LCG_A(L->lo, int, n); CONCERTO__LCG_A(L->hi, int, n);
    CONCERTO__LCG_A(L->base, int, n + 1); CONCERTO__LCG_A(L->lb, int, n); CONCERTO__LCG_A(L->ub, int, n);
    CONCERTO__LCG_A(L->cs, int, n); CONCERTO__LCG_A(L->ce, int, n);
    CONCERTO__LCG_A(L->roff, int, L->k + 1); CONCERTO__LCG_A(L->rj, int, (size_t)L->k * n); CONCERTO__LCG_A(L->dirty, char, L->k);
    CONCERTO__LCG_A(L->jmod, int64_t, n); CONCERTO__LCG_A(L->rscan, int64_t, L->k);
    CONCERTO__LCG_A(L->dx, int, L->k); CONCERTO__LCG_A(L->dy, int, L->k);
    CONCERTO__LCG_A(L->pmn, int, L->k); CONCERTO__LCG_A(L->pmx, int, L->k); CONCERTO__LCG_A(L->pmax, int, L->k);
    /* heads (longest paths from the start) and tails (to the end, with the
       job), in a topological order (cs[] its scratch) */
    order = L->ce;
    for (i = 0; i < n; i++) L->D[i] = (int)(p->dur[i] / g);
    if (cc__topo_order(n, p->succ_off, p->succ, NULL, NULL, L->cs, order) < n) return -1;
    for (i = 0; i < n; i++) {
        int x = order[i];
        for (e = p->succ_off[x]; e < p->succ_off[x + 1]; e++)
            if (L->lo[p->succ[e]] < L->lo[x] + L->D[x]) L->lo[p->succ[e]] = L->lo[x] + L->D[x];
    }
    for (i = n - 1; i >= 0; i--) {
        int x = order[i];
        L->tail[x] = L->D[x];
        for (e = p->succ_off[x]; e < p->succ_off[x + 1]; e++)
            if (L->tail[x] < L->D[x] + L->tail[p->succ[e]]) L->tail[x] = L->D[x] + L->tail[p->succ[e]];
    }
    for (i = 0; i < n; i++) {
        L->hi[i] = T - L->tail[i];
        if (L->hi[i] < L->lo[i]) return 2;
        nv += L->hi[i] - L->lo[i];
    }
    if (nv >= CONCERTO__LCG_MAX_VARS || ((int64_t)L->k + 1) * ((int64_t)T + 3) > CONCERTO__LCG_MAX_VARS * 16) return -1;
    for (i = 0; i < n; i++) {
        L->base[i + 1] = L->base[i] + (L->hi[i] - L->lo[i]);
        L->lb[i] = L->lo[i]; L->ub[i] = L->hi[i];
    }
    L->nb = (int)nv;
    if (orders && !cc__lcg_pairs_init(L, order)) return 0;
    nv += L->np;
    if (nv >= CONCERTO__LCG_MAX_VARS) return -1;
    L->nv = (int)nv;
    L->H = T + 2;
    CONCERTO__LCG_A(L->vjob, int, L->nb); CONCERTO__LCG_A(L->lv, signed char, 2 * nv); CONCERTO__LCG_A(L->phase, signed char, nv); CONCERTO__LCG_A(L->seen, signed char, nv);
    CONCERTO__LCG_A(L->keep, char, nv); CONCERTO__LCG_A(L->lvl, int, nv); CONCERTO__LCG_A(L->rsn, int, nv); CONCERTO__LCG_A(L->trail, int, nv);
    CONCERTO__LCG_A(L->tlim, int, nv + 1); CONCERTO__LCG_A(L->elim, int, nv + 1); CONCERTO__LCG_A(L->stamp, int, nv + 1);
    CONCERTO__LCG_A(L->wv, int*, 2 * nv); CONCERTO__LCG_A(L->wn, int, 2 * nv); CONCERTO__LCG_A(L->wc, int, 2 * nv);
    CONCERTO__LCG_A(L->confl, int, 2 * (size_t)n + nv + 4); CONCERTO__LCG_A(L->learnt, int, nv + 1);
    CONCERTO__LCG_A(L->stk, int, nv); CONCERTO__LCG_A(L->clr, int, nv);
    CONCERTO__LCG_A(L->act, double, nv); CONCERTO__LCG_A(L->heap, int, nv); CONCERTO__LCG_A(L->hpos, int, nv); CONCERTO__LCG_A(L->prof, int, ((size_t)L->k + 1) * ((size_t)L->H + 1));
#undef CONCERTO__LCG_A
    for (i = 0; i < n; i++)
        for (j = L->base[i]; j < L->base[i + 1]; j++) L->vjob[j] = i;
    for (i = 0; i < L->nv; i++) { L->hpos[i] = -1; L->lv[2 * i] = L->lv[2 * i + 1] = -1; }
    /* each resource's jobs by demand, descending (explanations take the largest first) */
    for (r = 0, m = 0; r < L->k; r++) {
        int first = m, y;
        for (i = 0; i < n; i++)
            if (p->dem[(size_t)i * L->k + r] > 0 && L->D[i] > 0) {
                for (y = m - 1; y >= first && p->dem[(size_t)L->rj[y] * L->k + r] < p->dem[(size_t)i * L->k + r]; y--) L->rj[y + 1] = L->rj[y];
                L->rj[y + 1] = i;
                m++;
            }
        L->roff[r + 1] = m;
    }
    for (i = 0; i < L->nv; i++) cc__lcg_hins(L, i);
    cc__lcg_touch_all(L, 1);   /* the first time-tabling sees every resource and job */
    L->inc = 1;
    return 1;
}

/* Lazy clause generation (>>lcg) from the incumbent best[] (required):
   cc__bnb_solve's contract (best[] in and out, never lost; res->proven
   only for a proven optimum; res->nodes the conflicts). known_lb: a lower
   bound already proven (0 if none); the search stops when it reaches it.
   budget: conflicts (<= 0: none); time_limit_s as branch and bound's.
   incumbent_phases: the decisions' phases stay the best schedule's
   (a search for better schedules) instead of being saved on backtrack
   (a search for a proof, which also decides the orders of the pairs that
   cannot overlap). hooks: tests only (cc__lcg_hooks; NULL: none).
   CC_ERR_UNSUPPORTED, best[] untouched, for a problem with releases,
   deadlines, busy blocks, durations off the grain or a model above
   CONCERTO__LCG_MAX_VARS literals. */
static cc_result cc__lcg_solve_hooked(cc_context* ctx, const cc__prob* p, cc__time* best, int64_t budget, double time_limit_s,
                                      cc__time known_lb, int incumbent_phases, const cc__lcg_hooks* hooks, cc__bnb_result* res) {
    cc__lcg LL, *L = &LL;
    int n = p->n, i, T, solved = 0, st;
    cc__time g = p->grain > 0 ? p->grain : 1, mk;
    int* sol = NULL;
    int lbdq[CONCERTO__LCG_RESTART_WINDOW], nq = 0, qsum = 0;   /* the last LBDs (a ring), how many since the last restart */
    double lbd_all = 0, t_end = time_limit_s > 0 ? cc__now_s() + time_limit_s : 0;
    mk = n > 0 ? cc__makespan(p, best) : 0;
    res->makespan = mk; res->lower_bound = 0; res->proven = 0; res->nodes = 0;
    if (p->release || p->deadline || p->n_busy > 0) return CC_ERR_UNSUPPORTED;
    for (i = 0; i < n; i++)
        if (p->dur[i] % g) return CC_ERR_UNSUPPORTED;
    if (mk / g >= CONCERTO__LCG_MAX_VARS) return CC_ERR_UNSUPPORTED;
    if (n == 0 || known_lb >= mk) { res->proven = 1; res->lower_bound = mk; return CC_OK; }
    T = (int)((mk + g - 1) / g) - 1;   /* the target: every job ends by T steps */
    st = cc__lcg_init(L, ctx, p, g, T, !incumbent_phases);
    L->hooks = hooks;
    if (st == 1 && !(sol = (int*)cc__alloc(ctx, (size_t)n * sizeof *sol))) st = 0;
    if (st == 0) goto oom;
    if (st < 0) { cc__lcg_free(L); return CC_ERR_UNSUPPORTED; }
    if (st == 2 || !cc__lcg_target(L, T)) {   /* nothing ends by T: the incumbent is optimal */
        if (L->oom) goto oom;
        solved = 1;
        goto done;
    }
    for (i = 0; i < L->nb; i++)   /* the first phases: the incumbent's starts and orders */
        L->phase[i] = (signed char)(best[L->vjob[i]] / g >= cc__lcg_vt(L, i));
    for (i = 0; i < L->np; i++) L->phase[L->nb + i] = (signed char)(best[L->pi[i]] < best[L->pj[i]]);
    L->keep_phase = incumbent_phases;
    L->tier2 = incumbent_phases ? 0 : CONCERTO__LCG_TIER2;
    L->next_reduce = CONCERTO__LCG_REDUCE;
    for (;;) {
        int v = -1;
        if (!cc__lcg_propagate(L)) {
            if (L->oom) goto oom;
            if (!cc__lcg_learn(L)) {
                if (L->oom) goto oom;
                solved = 1;
                break;
            }
            lbd_all += L->lbd;
            if (nq >= CONCERTO__LCG_RESTART_WINDOW) qsum -= lbdq[nq % CONCERTO__LCG_RESTART_WINDOW];
            lbdq[nq % CONCERTO__LCG_RESTART_WINDOW] = L->lbd;
            qsum += L->lbd;
            nq++;
            if (budget > 0 && L->conflicts >= budget) break;   /* (a run of conflicts counts each) */
            continue;
        }
        if (budget > 0 && L->conflicts >= budget) break;
        if (t_end > 0 && (L->decisions & 255) == 0 && cc__now_s() > t_end) break;
        if (L->conflicts >= L->next_reduce) {
            L->next_reduce = L->conflicts + CONCERTO__LCG_REDUCE + 300 * (L->nreduce++);
            cc__lcg_reduce(L);
            if (L->oom) goto oom;
        }
        if (nq >= CONCERTO__LCG_RESTART_WINDOW &&
            CONCERTO__LCG_RESTART_K * qsum / CONCERTO__LCG_RESTART_WINDOW > lbd_all / (double)L->conflicts) {
            nq = qsum = 0;   /* (the next restart after a full window again) */
            cc__lcg_backtrack(L, cc__lcg_restart_level(L));
            continue;
        }
        while (L->nheap > 0) {   /* the unassigned literal of highest activity */
            v = cc__lcg_hpop(L);
            if (L->lv[2 * v] < 0) break;
            v = -1;
        }
        if (v < 0) {   /* every job fixed: a schedule ending by T */
            int m2 = 0;
            for (i = 0; i < n; i++) {
                sol[i] = L->lb[i];
                if (L->lb[i] + L->D[i] > m2) m2 = L->lb[i] + L->D[i];
            }
            if (!cc__lcg_verify(L, sol)) {
                cc__lcg_free(L); cc__free(ctx, sol);
                return CONCERTO__FAIL(ctx, CC_ERR_INVALID_SCHEDULE, "lazy clause generation: a schedule of %d jobs failed "
                                      "the check (dropped; the incumbent is kept)", n);
            }
            for (i = 0; i < n; i++) best[i] = (cc__time)sol[i] * g;
            for (i = 0; i < L->nv; i++) L->phase[i] = L->lv[2 * i];   /* the next search starts near it */
            T = m2 - 1;
            if ((cc__time)m2 * g <= known_lb) { solved = 1; break; }
            if (!cc__lcg_target(L, T)) { if (L->oom) goto oom; solved = 1; break; }
            continue;
        }
        L->decisions++;
        L->tlim[L->nlev] = L->ntrail;
        L->elim[L->nlev] = (int)L->nE;
        L->nlev++;
        cc__lcg_assign(L, 2 * v + (L->phase[v] ? 0 : 1), CONCERTO__LCG_NONE);
    }
done:
    res->makespan = cc__makespan(p, best);
    res->nodes = L->conflicts;
    if (solved) { res->proven = 1; res->lower_bound = res->makespan; }
    else if (known_lb > 0) res->lower_bound = known_lb;
    cc__lcg_free(L); cc__free(ctx, sol);
    return CC_OK;
oom:
    cc__lcg_free(L); cc__free(ctx, sol);
    res->makespan = cc__makespan(p, best);
    return CONCERTO__FAIL(ctx, CC_ERR_OUT_OF_MEMORY, "lazy clause generation: out of memory for %d jobs", n);
}

/* cc__lcg_solve_hooked without hooks: the search. */
static cc_result cc__lcg_solve(cc_context* ctx, const cc__prob* p, cc__time* best, int64_t budget,
                               double time_limit_s, cc__time known_lb, int incumbent_phases, cc__bnb_result* res) {
    return cc__lcg_solve_hooked(ctx, p, best, budget, time_limit_s, known_lb, incumbent_phases, NULL, res);
}

/* >>restarts
   The search of AUTO on small graphs that are not unary, run from
   cc_sched_solve (>>sched of concerto.h) through cc_sched_desc.general:
   lazy clause generation on the whole graph (>>lcg) where branch and bound
   did not prove, and the restarts, each an evolution (>>improve) and a
   neighbourhood search of odd-even windows (>>oddeven), beside the main
   line. */

/* Lazy clause generation (>>lcg) on the whole graph from the incumbent
   with `conflicts`, where the exact solver is CC_EXACT_BNB, something is
   left to prove and some resource is cumulative (on unary resources alone
   the streams' rules of branch and bound serve). *ran (if given): 1 when
   the solver took the problem. A failed run is noted, not returned (out
   of memory aside). Above 32 ops its phases stay the best schedule's:
   its short run there mostly searches for better schedules, which the
   best schedule's phases serve; up to 32 ops its long run mostly proves,
   which phases saved on backtrack and deciding the orders of the pairs
   of ops that cannot overlap both shorten. */
static cc_result cc__solve_lcg(cc__solve* S, int64_t conflicts, int* ran) {
    cc__bnb_result br;
    double left;
    cc_result rc;
    if (ran) *ran = 0;
    if (S->proven || S->d.exact != CC_EXACT_BNB || S->h.best_mk <= S->lb || cc__solve_out_of_time(S)) return CC_OK;
    if (!cc__prob_cumulative(&S->p)) return CC_OK;
    memcpy(S->h.cur, S->h.best, (size_t)S->p.n * sizeof(cc__time));
    left = S->t_end > 0 ? S->t_end - cc__now_s() : 0;
    rc = cc__lcg_solve(S->ctx, &S->p, S->h.cur, conflicts, left, S->lb, S->p.n > CONCERTO__PROOF_N, &br);
    if (rc == CC_ERR_OUT_OF_MEMORY) return rc;
    if (rc == CC_ERR_UNSUPPORTED) return CC_OK;
    if (ran) *ran = 1;
    if (rc != CC_OK) {   /* a schedule that failed its check: counted, the incumbent kept */
        cc__exact_cfg f;
        memset(&f, 0, sizeof f);
        cc__exact_note(S->ctx, &f, rc, "lazy clause generation");
        cc__exact_report(S->st, &f);
        return CC_OK;
    }
    S->conflicts += br.nodes;
    cc__solve_take(S, &br);
    return CC_OK;
}

/* The large-neighbourhood search of the restarts: windows of 2b jobs, b
   from b0 to b_max, one pass of CONCERTO__LNS_ROUNDS rounds a size. */

static cc_result cc__solve_lns(cc__solve* S, cc__heur* h, int b0, int b_max, int64_t nodes) {
    return cc__solve_windows_of(S, h, b0, b_max, CONCERTO__LNS_ROUNDS, nodes, 1);
}

/* One restart of cc__solve_restarts, its result kept for the merge. A
   restart reads the solve's problem, ranks, order and time limit, and the
   pool's copies of its desc, bound and context, which no one changes while
   restarts run; it writes only its slot and its context (the caller's
   allocator, no logger: a failure's message reaches the caller's context
   at the merge), so any thread runs it. */
typedef struct cc__restart {
    int ran;                    /* 1: run (under the pool's lock) */
    int cancel;                 /* 1: the merge drops it: stop (CONCERTO__STORE) */
    cc_result rc;
    cc__time mk;                /* its best makespan, CONCERTO__TIME_MAX: none */
    cc__time* best;             /* [n] that schedule */
    int64_t n_sched, nodes;
    cc__exact_cfg cfg;          /* its windows' counts */
    cc_context ctx;
} cc__restart;

/* Restarts 1..n-1 on the caller's thread and up to threads - 1 more, each
   taking the next restart not yet taken, while the caller runs the main
   line (branch and bound, the rest of the first evolution, its
   neighbourhood search) and then takes its share. The restarts run to the
   bound known before the branch and bound (lb0), so that they do not wait
   for it. Restart r is not started, or stopped, once the merge would drop
   it: a restart before it failed or reached the solve's bound, or the main
   line proved its schedule. */
typedef struct cc__restart_pool {
    cc__solve* S;
    cc_sched_desc d;            /* the solve's, copied before the main line changes its node budget */
    cc_context ctx0;            /* a restart's context at its start */
    cc__time lb0, lb_final;     /* the restarts' bound; the solve's after the main line (-1 before) */
    cc__restart* slot;          /* [n], slot 0 unused */
    int* elite;                 /* [n] rows of n + 1: row 0 the main line's, row r restart r's start order */
    int n, next, stop;          /* restarts, the next to take, the last the merge can reach */
#ifndef CONCERTO_NO_RUNTIME
    pthread_mutex_t mu;
    int locked;                 /* mu initialised, threads may run */
    int n_threads;
    pthread_t th[CONCERTO__MAX_THREADS];
#endif
} cc__restart_pool;

static void cc__pool_lock(cc__restart_pool* P) {
#ifndef CONCERTO_NO_RUNTIME
    if (P->locked) pthread_mutex_lock(&P->mu);
#else
    (void)P;
#endif
}

static void cc__pool_unlock(cc__restart_pool* P) {
#ifndef CONCERTO_NO_RUNTIME
    if (P->locked) pthread_mutex_unlock(&P->mu);
#else
    (void)P;
#endif
}

/* The merge reaches no restart after r: none more starts, those running
   stop. Under the lock. */
static void cc__pool_stop_at(cc__restart_pool* P, int r) {
    int j;
    if (r >= P->stop) return;
    P->stop = r;
    for (j = r + 1; j < P->next; j++) CONCERTO__STORE(&P->slot[j].cancel, 1);
}

static void cc__restart_run(cc__restart_pool* P, int r) {
    cc__solve* S = P->S;
    cc__restart* R = &P->slot[r];
    cc__heur h2;
    cc_sched_desc d2 = P->d;
    R->ctx = P->ctx0;
    R->mk = CONCERTO__TIME_MAX;
    if (!cc__heur_init(&R->ctx, &h2, &S->p, S->rank)) { cc__heur_free(&h2); R->rc = CC_ERR_OUT_OF_MEMORY; return; }
    h2.lb = P->lb0;
    h2.cancel = &R->cancel;
    d2.seed = P->d.seed + (uint64_t)r * 0x9E3779B97F4A7C15ull;
    R->rc = cc__sample(&h2, &d2, S->g->topo, S->t_end, 1, NULL, 0);
    if (R->rc == CC_OK) R->rc = cc__windows_run(S, &P->d, P->lb0, &h2, 8, 8, CONCERTO__LNS_ROUNDS, 300, 1, &R->cfg, &R->nodes);
    R->n_sched = h2.n_sched;
    R->mk = h2.best_mk;
    if (h2.best_mk < CONCERTO__TIME_MAX) {
        memcpy(R->best, h2.best, (size_t)S->p.n * sizeof(cc__time));
        cc__sort_jobs(&S->p, h2.best, S->rank, 0, h2.tk, P->elite + (size_t)r * ((size_t)S->p.n + 1));
    }
    cc__heur_free(&h2);
}

static void cc__restart_pool_work(cc__restart_pool* P) {
    for (;;) {
        int r, go;
        cc__restart* R;
        cc__pool_lock(P);
        r = P->next;
        go = r < P->n && r < P->stop && !cc__solve_out_of_time(P->S);
        if (go) P->next++;
        cc__pool_unlock(P);
        if (!go) return;
        R = &P->slot[r];
        cc__restart_run(P, r);
        cc__pool_lock(P);
        R->ran = 1;
        if (R->rc != CC_OK || R->mk <= P->lb0 || (P->lb_final >= 0 && R->mk <= P->lb_final)) cc__pool_stop_at(P, r);
        cc__pool_unlock(P);
    }
}

#ifndef CONCERTO_NO_RUNTIME
static void* cc__restart_thread(void* arg) {
    cc__restart_pool_work((cc__restart_pool*)arg);
    return NULL;
}
#endif

/* Helper threads for the pool (a thread that does not start leaves its
   share to the others); none with lp_solve as the exact solver, whose
   windows then run on the caller's thread alone. */
static void cc__restart_pool_start(cc__restart_pool* P, int helpers) {
#ifndef CONCERTO_NO_RUNTIME
    int t;
    if (helpers > P->n - 1) helpers = P->n - 1;
    if (helpers > CONCERTO__MAX_THREADS) helpers = CONCERTO__MAX_THREADS;
    if (helpers <= 0 || P->d.exact != CC_EXACT_BNB || pthread_mutex_init(&P->mu, NULL) != 0) return;
    P->locked = 1;
    for (t = 0; t < helpers; t++)
        if (pthread_create(&P->th[P->n_threads], NULL, cc__restart_thread, P) == 0) P->n_threads++;
#else
    (void)P; (void)helpers;
#endif
}

static void cc__restart_pool_join(cc__restart_pool* P) {
#ifndef CONCERTO_NO_RUNTIME
    int t;
    for (t = 0; t < P->n_threads; t++) pthread_join(P->th[t], NULL);
    if (P->locked) pthread_mutex_destroy(&P->mu);
    P->n_threads = 0; P->locked = 0;
#else
    (void)P;
#endif
}

/* AUTO's main line on a small graph with restarts, after the first
   evolution (the restarts run beside it: cc__solve_restarts): the exact
   search, the rest of the evolution (cc__solve_evolve_rest) and the
   neighbourhood search of its incumbent. The exact search is lazy clause
   generation first, half of bnb_nodes as conflicts; then branch and bound
   where the solver does not apply (with a fifth of bnb_nodes above 32 ops)
   and, up to 32 ops, where it did not prove. Above 32 ops branch and
   bound rarely completes a proof that the solver did not, so it gets only
   a fifth of the nodes there; up to 32 ops the solver, run first, does
   most of the proving. */
static cc_result cc__solve_main_line_restarts(cc__solve* S) {
    int64_t nodes = S->d.tuning.bnb_nodes;
    cc_result rc = CC_OK;
    int ran = 0;
    if (nodes > 0) {   /* (without nodes there is no exact search) */
        rc = cc__solve_lcg(S, nodes / 2 > 0 ? nodes / 2 : 1, &ran);
        if (rc != CC_OK) return rc;
        if (!ran || (S->p.n <= CONCERTO__PROOF_N && !S->proven)) {
            S->d.tuning.bnb_nodes = S->p.n <= CONCERTO__PROOF_N ? nodes : nodes / 5 > 0 ? nodes / 5 : 1;
            rc = cc__solve_exact(S, 0);
            S->d.tuning.bnb_nodes = nodes;
        }
    }
    if (rc != CC_OK) return rc;
    if ((rc = cc__solve_evolve_rest(S)) != CC_OK) return rc;
    if (S->proven || S->h.best_mk <= S->lb) return CC_OK;
    S->h.lb = S->lb;
    return cc__solve_lns(S, &S->h, 8, 8, 300);
}

/* The restarts of AUTO on small graphs with a cumulative resource: the
   main line (its incumbent's neighbourhood search last), and beside it
   d.tuning.restarts - 1 more evolutions from fresh populations (seeds of their
   own), each with its own neighbourhood search (windows of 16 jobs, 300
   nodes each); the best is offered to the incumbent. Then one more
   evolution whose population starts from the searches' results (the
   incumbent's and each restart's best, so crossover combines what the
   independent runs found; the rest random), and a deeper search (windows
   of 24 and 32 jobs, 1000 nodes each) ends it. The restarts are combined
   in their order, whatever thread ran them, so the schedule is the same on
   any number of threads (d.threads). Independent starts pay: the best of
   several short runs beats one long run of the same schedules, and each
   restart's neighbourhood search and the seeded evolution's deeper one
   each shorten the result further. */
static cc_result cc__solve_restarts(cc__solve* S) {
    cc_result rc = CC_OK;
    int r, n_el = 0, nr = S->d.tuning.restarts > 0 ? S->d.tuning.restarts : 1, n = S->p.n;
    size_t n1 = (size_t)n + 1;
    cc__restart_pool P;
    memset(&P, 0, sizeof P);
    P.S = S; P.d = S->d; P.lb0 = S->lb; P.lb_final = -1; P.n = nr; P.next = 1; P.stop = nr;
    P.d.tuning.on_window = NULL;   /* (its windows run on other threads too) */
    P.ctx0 = *S->ctx;
    P.ctx0.logger.log_fn = NULL;
    P.ctx0.last_result = CC_OK; P.ctx0.last_error[0] = 0;
    P.elite = (int*)cc__alloc(S->ctx, (size_t)nr * n1 * sizeof(int));
    P.slot = (cc__restart*)cc__calloc(S->ctx, (size_t)nr, sizeof(cc__restart));
    if (P.slot) for (r = 1; r < nr; r++)
        if (!(P.slot[r].best = (cc__time*)cc__alloc(S->ctx, (size_t)n * sizeof(cc__time)))) break;
    if (!P.elite || !P.slot || (nr > 1 && !P.slot[nr - 1].best)) rc = CC_ERR_OUT_OF_MEMORY;
    if (rc == CC_OK) {
        cc__restart_pool_start(&P, S->d.threads - 1);
        rc = cc__solve_main_line_restarts(S);
        cc__pool_lock(&P);
        P.lb_final = S->lb;
        if (rc != CC_OK || S->proven || S->h.best_mk <= S->lb) cc__pool_stop_at(&P, 0);
        else for (r = 1; r < P.next; r++)
            if (P.slot[r].ran && P.slot[r].mk <= S->lb) { cc__pool_stop_at(&P, r); break; }
        cc__pool_unlock(&P);
        cc__restart_pool_work(&P);   /* the caller's share */
        cc__restart_pool_join(&P);
    }
    if (rc == CC_OK && !S->proven && S->h.best_mk > S->lb) {
        /* the searches' results as start orders (precedence-feasible lists) */
        cc__sort_jobs(&S->p, S->h.best, S->rank, 0, S->h.tk, P.elite);
        n_el = 1;
        /* the merge, in the order of the restarts */
        for (r = 1; r < nr; r++) {
            cc__restart* R = &P.slot[r];
            if (S->h.best_mk <= S->lb || !R->ran) break;
            S->h.n_sched += R->n_sched;
            S->nodes += R->nodes;
            cc__windows_report(S, &R->cfg);
            if (R->mk < S->h.best_mk) cc__heur_offer(&S->h, R->best, R->mk);
            if (R->mk < CONCERTO__TIME_MAX) {
                if (n_el != r) memmove(P.elite + (size_t)n_el * n1, P.elite + (size_t)r * n1, n1 * sizeof(int));
                n_el++;
            }
            if (R->rc != CC_OK) {
                rc = R->rc;
                if (R->ctx.last_result != CC_OK)
                    (void)CONCERTO__FAIL(S->ctx, R->ctx.last_result, "cc_sched_solve: restart %d: %s", r, R->ctx.last_error);
                break;
            }
        }
    }
    if (P.slot) for (r = 1; r < nr; r++) cc__free(S->ctx, P.slot[r].best);
    cc__free(S->ctx, P.slot);
    if (rc == CC_OK && n_el > 1 && S->h.best_mk > S->lb && !cc__solve_out_of_time(S)) {
        cc__heur h3;
        cc_sched_desc d3 = S->d;
        if (!cc__heur_init(S->ctx, &h3, &S->p, S->rank)) { cc__heur_free(&h3); cc__free(S->ctx, P.elite); return CC_ERR_OUT_OF_MEMORY; }
        h3.lb = S->lb;
        d3.seed = S->d.seed + (uint64_t)(S->d.tuning.restarts + 1) * 0x9E3779B97F4A7C15ull;
        rc = cc__sample(&h3, &d3, S->g->topo, S->t_end, 1, P.elite, n_el);
        S->h.n_sched += h3.n_sched;
        if (h3.best_mk < S->h.best_mk) cc__heur_offer(&S->h, h3.best, h3.best_mk);
        cc__heur_free(&h3);
    }
    cc__free(S->ctx, P.elite);
    if (rc == CC_OK && !S->proven) rc = cc__solve_lns(S, &S->h, 12, 16, 1000);
    return rc;
}

static const cc_sched_extension cc__rcpsp_search = { cc__solve_lcg, cc__solve_restarts };

CONCERTO_API const cc_sched_extension* cc_rcpsp_search(void) { return &cc__rcpsp_search; }

#ifdef __cplusplus
}
#endif
#endif /* CONCERTO_IMPLEMENTATION && !CONCERTO_RCPSP_IMPL_INCLUDED */

/*
------------------------------------------------------------------------------
MIT License

Copyright (c) 2026 The Concerto-C authors

Permission is hereby granted, free of charge, to any person obtaining a copy of
this software and associated documentation files (the "Software"), to deal in
the Software without restriction, including without limitation the rights to
use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
of the Software, and to permit persons to whom the Software is furnished to do
so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
------------------------------------------------------------------------------
*/
