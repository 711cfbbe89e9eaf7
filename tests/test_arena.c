/* tests/test_arena.c - the plan's arena of transient buffers.

   Random stream graphs of ops that write and read whole transient buffers
   (compute ops and an all-reduce on a one-rank world, on two streams),
   scheduled under several memory caps and planned with those schedules.
   Independent references:
   - happens-before, computed here from the order the test passed (each
     stream's ops in that order) and the plan's waits (cc_plan_waits),
     closed transitively by search: every two buffers whose arena bytes
     overlap have all the users of one before all the users of the other;
   - the arena is at least the schedule's peak (cc_memory_check, the
     graph's own sweep) and at most the cap where the plan is made;
   - the values the ops read in a step equal the values the test computes
     from its own record of who writes what (each op writes a value made of
     its index and what it read) in program order. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include "util.h"

#define MAX_OPS 24
#define MAX_BUFS 32
#define MAX_IO 3

typedef struct op_io {
    int n_r, n_w;
    int r[MAX_IO], w[MAX_IO];         /* buffer indices (the test's) */
    int32_t* rp[MAX_IO];              /* arena addresses, filled after cc_exec_create */
    int32_t* wp[MAX_IO];
    uint64_t r_elems[MAX_IO], w_elems[MAX_IO];
    int32_t got[MAX_IO];              /* what the last step read; -1: not uniform */
    int id;
} op_io;

typedef struct inst {
    int n_ops, n_bufs;
    int stream[MAX_OPS];
    int coll_op;                      /* the all-reduce's op index, or -1 */
    uint64_t bytes[MAX_BUFS];
    op_io io[MAX_OPS];
    double dur[MAX_OPS];
} inst;

static int32_t value_of(const op_io* o, const int32_t* read) {
    int32_t v = 1000 * (o->id + 1);
    int k;
    for (k = 0; k < o->n_r; k++) v += 7 * read[k] % 100003;
    return v;
}

static void op_fn(void* stream, void* user) {
    op_io* o = (op_io*)user;
    int k;
    uint64_t e;
    (void)stream;
    for (k = 0; k < o->n_r; k++) {
        int32_t first = o->rp[k][0];
        for (e = 1; e < o->r_elems[k]; e++) if (o->rp[k][e] != first) { first = -1; break; }
        o->got[k] = first;
    }
    for (k = 0; k < o->n_w; k++) {
        int32_t v = value_of(o, o->got) + k;
        for (e = 0; e < o->w_elems[k]; e++) o->wp[k][e] = v;
    }
}

/* What each op reads in program order, by the test's own bookkeeping. */
static void expected_reads(const inst* in, int32_t want[MAX_OPS][MAX_IO]) {
    int32_t val[MAX_BUFS];
    int i, k;
    for (i = 0; i < in->n_ops; i++) {
        const op_io* o = &in->io[i];
        for (k = 0; k < o->n_r; k++) want[i][k] = val[o->r[k]];
        if (i == in->coll_op) { val[o->w[0]] = val[o->r[0]]; continue; }   /* one rank: a sum is a copy */
        for (k = 0; k < o->n_w; k++) val[o->w[k]] = value_of(o, want[i]) + k;
    }
}

/* Ops in program order, each reading a few buffers written before and
   writing one or two new ones; sink ops at the end read every buffer no
   op read. with_coll: one op on the comm stream all-reduces a buffer into
   a new one of the same size. */
static void make_inst(tu_rng* rng, inst* in, int with_coll) {
    int readers[MAX_BUFS], i, k, n_body;
    memset(in, 0, sizeof *in);
    n_body = tu_randint(rng, 6, 12);
    in->coll_op = -1;
    for (i = 0; i < n_body; i++) {
        op_io* o = &in->io[i];
        o->id = i;
        in->stream[i] = tu_randint(rng, 0, 3) == 0 ? 1 : 0;
        in->dur[i] = tu_randint(rng, 1, 20);
        for (k = 0; k < in->n_bufs; k++)
            if (tu_randint(rng, 0, 3) == 0 && o->n_r < MAX_IO) { o->r[o->n_r++] = k; readers[k]++; }
        if (with_coll && in->coll_op < 0 && o->n_r >= 1 && i > 2) {
            in->coll_op = i;
            in->stream[i] = 1;
            for (k = 1; k < o->n_r; k++) readers[o->r[k]]--;
            o->n_r = 1;
            o->w[0] = in->n_bufs; o->n_w = 1;
            in->bytes[in->n_bufs] = in->bytes[o->r[0]];
            readers[in->n_bufs++] = 0;
            continue;
        }
        {
            int nw = tu_randint(rng, 1, 2);
            for (k = 0; k < nw; k++) {
                o->w[o->n_w++] = in->n_bufs;
                in->bytes[in->n_bufs] = 4 * (uint64_t)tu_randint(rng, 1, 600);
                readers[in->n_bufs++] = 0;
            }
        }
    }
    in->n_ops = n_body;
    for (k = 0; k < in->n_bufs; k++) {   /* sinks */
        op_io* o;
        if (readers[k] > 0) continue;
        o = &in->io[in->n_ops - 1];
        if (in->n_ops == n_body || o->n_r == MAX_IO) {
            o = &in->io[in->n_ops];
            o->id = in->n_ops;
            in->stream[in->n_ops] = 0;
            in->dur[in->n_ops] = tu_randint(rng, 1, 5);
            in->n_ops++;
        }
        o->r[o->n_r++] = k;
        readers[k]++;
    }
}

/* The graph: buffers, then ops in program order. bound >= 0: buffer `bound` is
   bound instead of transient. */
static cc_graph* build(cc_context* ctx, cc_rank* rank, const inst* in, cc_buffer* buf, int bound) {
    cc_graph* g = NULL;
    int i, k;
    char nm[32];
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    for (k = 0; k < in->n_bufs; k++) {
        snprintf(nm, sizeof nm, "b%d", k);
        if ((k == bound ? cc_graph_add_buffer(g, nm, in->bytes[k], &buf[k]) : cc_graph_add_transient(g, nm, in->bytes[k], &buf[k])) != CC_OK) {
            cc_graph_destroy(g); return NULL;
        }
    }
    for (i = 0; i < in->n_ops; i++) {
        const op_io* o = &in->io[i];
        cc_op_desc d;
        cc_region rr[MAX_IO] = {0}, ww[MAX_IO] = {0};
        cc_collective c;
        memset(&d, 0, sizeof d);
        memset(rr, 0, sizeof rr); memset(ww, 0, sizeof ww);
        snprintf(nm, sizeof nm, i == in->coll_op ? "allreduce%d" : "op%d", i);
        d.name = nm;
        d.duration_us = in->dur[i];
        d.stream = in->stream[i];
        for (k = 0; k < o->n_r; k++) { rr[k].buffer = buf[o->r[k]]; rr[k].n_bytes = in->bytes[o->r[k]]; }
        for (k = 0; k < o->n_w; k++) { ww[k].buffer = buf[o->w[k]]; ww[k].n_bytes = in->bytes[o->w[k]]; }
        d.reads = rr; d.n_reads = o->n_r; d.writes = ww; d.n_writes = o->n_w;
        if (i == in->coll_op) {
            memset(&c, 0, sizeof c);
            c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_INT32; c.reduce = CC_REDUCE_SUM;
            c.n_elems = (size_t)(in->bytes[o->r[0]] / 4); c.comm = cc_rank_world_comm(rank);
            d.coll = &c;   /* send_buf, recv_buf NULL: resolved from the regions */
        } else {
            d.fn = op_fn; d.user_data = (void*)o;
        }
        if (cc_graph_add_op(g, &d, NULL) != CC_OK) { cc_graph_destroy(g); return NULL; }
    }
    return g;
}

/* The independent check of the arena: happens-before from the order (each
   stream's sequence) and the plan's waits; every two buffers sharing bytes
   have all users of one before all users of the other. Returns the number
   of unordered pairs (and of graph dependencies the order breaks in *deps). */
static int hb_violations(cc_graph* g, const cc_plan* pl, const inst* in, const cc_buffer* buf, const int* ord, int* deps) {
    static unsigned char reach[MAX_OPS][MAX_OPS];
    int adj[MAX_OPS][MAX_OPS + MAX_OPS], nadj[MAX_OPS];
    int i, j, k, a, b, bad = 0, last[2] = { -1, -1 };
    memset(reach, 0, sizeof reach);
    memset(nadj, 0, sizeof nadj);
    for (i = 0; i < in->n_ops; i++) {   /* stream order */
        int v = ord[i], s = in->stream[v];
        if (last[s] >= 0) adj[last[s]][nadj[last[s]]++] = v;
        last[s] = v;
    }
    for (i = 0; i < in->n_ops; i++) {   /* waits */
        cc_op src[MAX_OPS];
        int nw = cc_plan_waits(pl, cc_graph_op(g, i), src, MAX_OPS);
        for (k = 0; k < nw; k++) { int u = cc_op_index(g, src[k]); adj[u][nadj[u]++] = i; }
    }
    for (i = 0; i < in->n_ops; i++) {   /* search from each op */
        int stack[MAX_OPS * MAX_OPS], top = 0;
        stack[top++] = i;
        while (top) {
            int v = stack[--top];
            for (k = 0; k < nadj[v]; k++) if (!reach[i][adj[v][k]]) { reach[i][adj[v][k]] = 1; stack[top++] = adj[v][k]; }
        }
    }
    *deps = 0;   /* each read after its buffer's writer */
    for (i = 0; i < in->n_ops; i++)
        for (k = 0; k < in->io[i].n_r; k++)
            for (j = 0; j < in->n_ops; j++) {
                int w;
                for (w = 0; w < in->io[j].n_w; w++) if (in->io[j].w[w] == in->io[i].r[k] && !reach[j][i]) (*deps)++;
            }
    for (a = 0; a < in->n_bufs; a++)
        for (b = a + 1; b < in->n_bufs; b++) {
            uint64_t oa = cc_plan_buffer_offset(pl, buf[a]), ob = cc_plan_buffer_offset(pl, buf[b]);
            int ab = 1, ba = 1, u, v;
            if (!(oa < ob + in->bytes[b] && ob < oa + in->bytes[a])) continue;
            for (u = 0; u < in->n_ops; u++)
                for (v = 0; v < in->n_ops; v++) {
                    int ua = 0, vb = 0;
                    for (k = 0; k < in->io[u].n_r; k++) ua |= in->io[u].r[k] == a;
                    for (k = 0; k < in->io[u].n_w; k++) ua |= in->io[u].w[k] == a;
                    for (k = 0; k < in->io[v].n_r; k++) vb |= in->io[v].r[k] == b;
                    for (k = 0; k < in->io[v].n_w; k++) vb |= in->io[v].w[k] == b;
                    if (!ua || !vb) continue;
                    if (!reach[u][v]) ab = 0;
                    if (!reach[v][u]) ba = 0;
                }
            if (!ab && !ba) bad++;
        }
    return bad;
}

typedef struct stats {
    int graphs, plans, infeasible, hb_bad, dep_bad, above_cap, below_peak, wrong_values, not_program, failures;
    int unaligned;
    char first_error[400];
} stats;

static void note_error(stats* st, cc_context* ctx, const char* what) {
    st->failures++;
    if (!st->first_error[0]) snprintf(st->first_error, sizeof st->first_error, "%s: %s", what, cc_last_error(ctx));
}

/* A backend memory of its own: the CPU backend's table with mem_alloc,
   mem_free and mem_copy added, handing out blocks 8 bytes past a 256-byte
   boundary (so that the executor must pad) and counting them. */
static int mem_live, mem_allocs;
static cc_result odd_alloc(void* self, size_t n, void** ptr) {
    char* raw;
    (void)self;
    if (posix_memalign((void**)&raw, 256, n + 264)) return CC_ERR_OUT_OF_MEMORY;
    *ptr = raw + 8;
    mem_live++; mem_allocs++;
    return CC_OK;
}
static void odd_free(void* self, void* ptr) { (void)self; if (ptr) { free((char*)ptr - 8); mem_live--; } }
static cc_result odd_copy(void* self, void* dst, const void* src, size_t n) { (void)self; memcpy(dst, src, n); return CC_OK; }

/* Runs two steps of plan pl (with_mem: through a backend with its own
   memory); 0 and *got filled on success. */
static int run_plan_on(cc_context* ctx, cc_rank* rank, cc_plan* pl, inst* in, const cc_buffer* buf, int32_t got[MAX_OPS][MAX_IO],
                       stats* st, int with_mem) {
    cc_backend be, use;
    cc_backend_fns fns;
    cc_exec* x = NULL;
    int i, k, steps;
    if (cc_cpu_backend_create(rank, &be) != CC_OK) { note_error(st, ctx, "backend"); return 1; }
    use = be;
    if (with_mem) {
        fns = *be.fns;
        fns.mem_alloc = odd_alloc; fns.mem_free = odd_free; fns.mem_copy = odd_copy; fns.destroy = NULL;
        use.fns = &fns;
    }
    if (cc_exec_create(ctx, pl, &use, &x) != CC_OK) { note_error(st, ctx, "cc_exec_create"); cc_backend_destroy(&be); return 1; }
    if (with_mem && mem_live != 1) st->failures++, snprintf(st->first_error, sizeof st->first_error, "%d blocks live", mem_live);
    for (i = 0; i < in->n_ops; i++) {
        op_io* o = &in->io[i];
        for (k = 0; k < o->n_r; k++) { o->rp[k] = (int32_t*)cc_exec_buffer_ptr(x, buf[o->r[k]]); o->r_elems[k] = in->bytes[o->r[k]] / 4; }
        for (k = 0; k < o->n_w; k++) { o->wp[k] = (int32_t*)cc_exec_buffer_ptr(x, buf[o->w[k]]); o->w_elems[k] = in->bytes[o->w[k]] / 4; }
        for (k = 0; k < o->n_r; k++) if (!o->rp[k] || (uintptr_t)o->rp[k] % 256) st->unaligned++;
        for (k = 0; k < o->n_w; k++) if (!o->wp[k] || (uintptr_t)o->wp[k] % 256) st->unaligned++;
    }
    if (cc_exec_agree(x, cc_rank_world_comm(rank)) != CC_OK) { note_error(st, ctx, "cc_exec_agree"); goto fail; }
    for (steps = 0; steps < 2; steps++) {   /* the second step runs in the same arena */
        for (i = 0; i < in->n_ops; i++) for (k = 0; k < MAX_IO; k++) in->io[i].got[k] = -2;
        if (cc_exec_step(x) != CC_OK) { note_error(st, ctx, "cc_exec_step"); goto fail; }
    }
    for (i = 0; i < in->n_ops; i++) for (k = 0; k < in->io[i].n_r; k++) got[i][k] = in->io[i].got[k];
    /* the collective's reads are not recorded by an op fn: its result is read by a later op */
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    return 0;
fail:
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    return 1;
}

static int run_plan(cc_context* ctx, cc_rank* rank, cc_plan* pl, inst* in, const cc_buffer* buf, int32_t got[MAX_OPS][MAX_IO],
                    stats* st) {
    return run_plan_on(ctx, rank, pl, in, buf, got, st, 0);
}

static int same_reads(const inst* in, int32_t a[MAX_OPS][MAX_IO], int32_t b[MAX_OPS][MAX_IO]) {
    int i, k;
    for (i = 0; i < in->n_ops; i++) {
        if (i == in->coll_op) continue;
        for (k = 0; k < in->io[i].n_r; k++) if (a[i][k] != b[i][k]) return 0;
    }
    return 1;
}

static cc_result random_rank(cc_rank* rank, void* user) {
    stats* st = (stats*)user;
    cc_context* ctx = cc_rank_context(rank);
    tu_rng rng;
    int t;
    rng.s = 0xa7e4a;
    for (t = 0; t < 40; t++) {
        inst in;
        cc_buffer buf[MAX_BUFS];
        cc_graph* g;
        cc_plan* pl0 = NULL;
        int32_t want[MAX_OPS][MAX_IO], got0[MAX_OPS][MAX_IO];
        uint64_t caps[4], po_peak = 0;
        double po_start[MAX_OPS];
        cc_op po_order[MAX_OPS];
        int c, i;
        make_inst(&rng, &in, t % 2 == 0);
        if (!(g = build(ctx, rank, &in, buf, -1))) { note_error(st, ctx, "building the graph"); continue; }
        st->graphs++;
        expected_reads(&in, want);
        /* program order: the reference run */
        for (i = 0; i < in.n_ops; i++) po_order[i] = cc_graph_op(g, i);
        if (cc_simulate(ctx, g, po_order, in.n_ops, po_start, NULL) < 0 ||
            cc_memory_check(ctx, g, po_start, NULL, 0, &po_peak, NULL) != CC_OK) { note_error(st, ctx, "program order"); cc_graph_destroy(g); continue; }
        if (cc_plan_create(ctx, g, NULL, &pl0) != CC_OK) { note_error(st, ctx, "cc_plan_create"); cc_graph_destroy(g); continue; }
        {
            int ord[MAX_OPS], dep_bad = 0;
            for (i = 0; i < in.n_ops; i++) ord[i] = i;
            st->hb_bad += hb_violations(g, pl0, &in, buf, ord, &dep_bad);
            st->dep_bad += dep_bad;
        }
        if (run_plan(ctx, rank, pl0, &in, buf, got0, st) == 0 && !same_reads(&in, got0, want)) st->not_program++;
        if (t < 4) {   /* the arena in the backend's memory */
            int32_t gotm[MAX_OPS][MAX_IO];
            if (run_plan_on(ctx, rank, pl0, &in, buf, gotm, st, 1) == 0 && !same_reads(&in, gotm, want)) st->not_program++;
        }
        caps[0] = 0; caps[1] = po_peak * 2; caps[2] = po_peak + po_peak / 4; caps[3] = po_peak;
        for (c = 0; c < 4; c++) {
            cc_sched_desc sd;
            cc_schedule s;
            cc_plan_desc pd;
            cc_plan* pl = NULL;
            uint64_t peak = 0;
            cc_result r;
            int ord[MAX_OPS], dep_bad = 0;
            int32_t got[MAX_OPS][MAX_IO];
            memset(&sd, 0, sizeof sd);
            memset(&s, 0, sizeof s);
            sd.memory_cap_bytes = caps[c];
            sd.seed = (uint64_t)t + 1;
            if (cc_sched_solve(ctx, g, &sd, &s) != CC_OK) { note_error(st, ctx, "cc_sched_solve"); continue; }
            if (cc_memory_check(ctx, g, s.start_us, NULL, 0, &peak, NULL) != CC_OK) { note_error(st, ctx, "cc_memory_check"); cc_schedule_release(ctx, &s); continue; }
            memset(&pd, 0, sizeof pd);
            pd.order = s.order; pd.start_us = s.start_us; pd.memory_cap_bytes = caps[c];
            r = cc_plan_create_desc(ctx, g, &pd, &pl);
            if (r == CC_ERR_INFEASIBLE) {   /* fragmentation: the message names the cap */
                char capstr[32];
                snprintf(capstr, sizeof capstr, "%llu", (unsigned long long)caps[c]);
                st->infeasible++;
                if (!strstr(cc_last_error(ctx), capstr) || !strstr(cc_last_error(ctx), "memory_cap_bytes")) note_error(st, ctx, "infeasible message");
                cc_schedule_release(ctx, &s);
                continue;
            }
            if (r != CC_OK) { note_error(st, ctx, "cc_plan_create_desc"); cc_schedule_release(ctx, &s); continue; }
            st->plans++;
            if (caps[c] > 0 && cc_plan_arena_bytes(pl) > caps[c]) st->above_cap++;
            if (cc_plan_arena_bytes(pl) < peak) st->below_peak++;
            for (i = 0; i < in.n_ops; i++) ord[i] = cc_op_index(g, s.order[i]);
            st->hb_bad += hb_violations(g, pl, &in, buf, ord, &dep_bad);
            st->dep_bad += dep_bad;
            if (run_plan(ctx, rank, pl, &in, buf, got, st) == 0 && !same_reads(&in, got, got0)) st->wrong_values++;
            cc_plan_destroy(pl);
            cc_schedule_release(ctx, &s);
        }
        cc_plan_destroy(pl0);
        cc_graph_destroy(g);
    }
    return CC_OK;
}

static void test_random_arenas(void) {
    stats st;
    cc_result rc;
    char err[512];
    memset(&st, 0, sizeof st);
    tu_run_world(1, random_rank, &st, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "the world ran (%s)", err);
    CHECK(st.failures == 0, "every call succeeded (%d failures; first: %s)", st.failures, st.first_error);
    CHECK(st.graphs == 40 && st.plans >= 100, "%d graphs, %d plans made under caps (%d refused as fragmented)", st.graphs, st.plans,
          st.infeasible);
    CHECK(mem_allocs >= 4 && mem_live == 0, "the arena came from the backend's mem_alloc (%d blocks) and went back (%d live)",
          mem_allocs, mem_live);
    CHECK_INT(st.hb_bad, 0, "no two buffers sharing arena bytes are unordered by the plan's happens-before");
    CHECK_INT(st.dep_bad, 0, "the plan's happens-before holds every read after its buffer's writer");
    CHECK_INT(st.above_cap, 0, "no arena above its cap");
    CHECK_INT(st.below_peak, 0, "every arena holds the schedule's peak (cc_memory_check)");
    CHECK_INT(st.unaligned, 0, "every buffer's address is 256-byte aligned");
    CHECK_INT(st.not_program, 0, "the program-order plan reads the values the test computes");
    CHECK_INT(st.wrong_values, 0, "every scheduled plan reads the same values as program order");
}

/* Bad input: a bound buffer has no arena address; a collective with NULL
   buffers whose region is in a bound buffer is refused, naming the op. */
typedef struct bad_out { cc_result create; int ptr_null, t_ptr_ok; uint64_t off_bound; char msg[400]; } bad_out;

static cc_result bad_rank(cc_rank* rank, void* user) {
    bad_out* out = (bad_out*)user;
    cc_context* ctx = cc_rank_context(rank);
    inst in;
    cc_buffer buf[MAX_BUFS];
    cc_graph* g;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    tu_rng rng;
    int i;
    rng.s = 99;
    do make_inst(&rng, &in, 1); while (in.coll_op < 0);
    /* a plain graph: the bound buffer is b0 (no collective reads it when the collective reads another) */
    {
        int bound = in.io[in.coll_op].r[0] == 0 ? 1 : 0;
        g = build(ctx, rank, &in, buf, bound);
        if (!g || cc_plan_create(ctx, g, NULL, &pl) != CC_OK) return CC_ERR_INVALID_ARG;
        cc_cpu_backend_create(rank, &be);
        if (cc_exec_create(ctx, pl, &be, &x) == CC_OK) {
            out->ptr_null = cc_exec_buffer_ptr(x, buf[bound]) == NULL;
            out->t_ptr_ok = cc_exec_buffer_ptr(x, buf[1 - bound]) != NULL;
            out->off_bound = cc_plan_buffer_offset(pl, buf[bound]);
        }
        cc_exec_destroy(x); x = NULL;
        cc_plan_destroy(pl); pl = NULL;
        cc_graph_destroy(g);
    }
    /* the collective's source bound */
    g = build(ctx, rank, &in, buf, in.io[in.coll_op].r[0]);
    if (!g || cc_plan_create(ctx, g, NULL, &pl) != CC_OK) { cc_backend_destroy(&be); return CC_ERR_INVALID_ARG; }
    out->create = cc_exec_create(ctx, pl, &be, &x);
    snprintf(out->msg, sizeof out->msg, "%s", cc_last_error(ctx));
    for (i = 0; x && i < 1; i++) cc_exec_destroy(x);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_backend_destroy(&be);
    return CC_OK;
}

static void test_bad_input(void) {
    bad_out out;
    cc_result rc;
    char err[512];
    memset(&out, 0, sizeof out);
    tu_run_world(1, bad_rank, &out, &rc, err, sizeof err);
    CHECK_RES(NULL, rc, CC_OK, "the world ran (%s)", err);
    CHECK(out.ptr_null, "cc_exec_buffer_ptr of a bound buffer is NULL");
    CHECK(out.t_ptr_ok, "and of a transient one is an address");
    CHECK(out.off_bound == UINT64_MAX, "cc_plan_buffer_offset of a bound buffer is UINT64_MAX");
    CHECK_RES(NULL, out.create, CC_ERR_INVALID_ARG, "a collective with a NULL send_buf on a bound buffer is refused");
    CHECK_CONTAINS(out.msg, "allreduce", "the message names the op (%s)", out.msg);
}

/* A cap below what any placement needs: a clear error naming the cap. */
static void test_cap_too_small(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_buffer a, b;
    cc_op w1, w2;
    cc_plan* pl = NULL;
    cc_plan_desc pd;
    cc_op_desc d;
    cc_region ra = {0}, rb = {0};
    cc_result r;
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_transient(g, "a", 1000, &a);
    cc_graph_add_transient(g, "b", 1000, &b);
    memset(&ra, 0, sizeof ra); ra.buffer = a; ra.n_bytes = 1000;
    memset(&rb, 0, sizeof rb); rb.buffer = b; rb.n_bytes = 1000;
    memset(&d, 0, sizeof d); d.name = "wa"; d.duration_us = 1; d.writes = &ra; d.n_writes = 1; cc_graph_add_op(g, &d, &w1);
    memset(&d, 0, sizeof d); d.name = "wb"; d.duration_us = 1; d.writes = &rb; d.n_writes = 1; cc_graph_add_op(g, &d, &w2);
    memset(&d, 0, sizeof d); d.name = "rab"; d.duration_us = 1; d.reads = &ra; d.n_reads = 1; cc_graph_add_op(g, &d, NULL);
    memset(&d, 0, sizeof d); d.name = "rb"; d.duration_us = 1; d.reads = &rb; d.n_reads = 1; cc_graph_add_op(g, &d, NULL);
    memset(&pd, 0, sizeof pd);
    pd.memory_cap_bytes = 1500;   /* a and b live together: 256-aligned, 1256 + 1000 bytes */
    r = cc_plan_create_desc(ctx, g, &pd, &pl);
    CHECK_RES(ctx, r, CC_ERR_INFEASIBLE, "an arena above the cap is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "1500", "naming the cap (%s)", cc_last_error(ctx));
    CHECK_CONTAINS(cc_last_error(ctx), "2000", "and the lifetimes' peak");
    pd.memory_cap_bytes = 0;
    r = cc_plan_create_desc(ctx, g, &pd, &pl);
    CHECK_RES(ctx, r, CC_OK, "without a cap the plan is made");
    CHECK(cc_plan_arena_bytes(pl) == 2024, "the arena is 1024 (1000 aligned to 256) + 1000 bytes (%llu)",
          (unsigned long long)cc_plan_arena_bytes(pl));
    CHECK(cc_plan_buffer_offset(pl, a) != cc_plan_buffer_offset(pl, b), "buffers alive together have distinct offsets");
    {   /* wa, rab, wb, rb: a ends before b starts, so they share bytes and the hash differs */
        cc_plan* p2 = NULL;
        cc_op ord[4];
        int i;
        for (i = 0; i < 4; i++) ord[i] = cc_graph_op(g, i);
        ord[1] = cc_graph_op(g, 2); ord[2] = cc_graph_op(g, 1);
        pd.order = ord;
        r = cc_plan_create_desc(ctx, g, &pd, &p2);
        CHECK_RES(ctx, r, CC_OK, "the plan of the other order is made");
        CHECK(cc_plan_arena_bytes(p2) == 1000 && cc_plan_buffer_offset(p2, a) == 0 && cc_plan_buffer_offset(p2, b) == 0,
              "buffers one after the other share the arena (%llu bytes)", (unsigned long long)cc_plan_arena_bytes(p2));
        CHECK(cc_plan_hash(p2) != cc_plan_hash(pl), "plans that placed differently hash differently");
        cc_plan_destroy(p2);
    }
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

int main(void) {
    TH_RUN(test_cap_too_small);
    TH_RUN(test_bad_input);
    TH_RUN(test_random_arenas);
    return th_done();
}
