/* tests/fuzz/fuzz_api.c - libFuzzer target, the graph API more widely than
   fuzz_graph.c (all collective kinds and dtypes, chunk rules, bad handles,
   negative durations, start-ups and executor costs, restarts and lazy
   clause generation): a sequence of graph API calls decoded from the input (buffers bound and transient, regions, ops with
   streams or resource demands, collectives, dependencies, durations, chunk
   rules), then validation, a solve with each scheduling method, the
   independent checker, the simulator, the memory check and plan creation.

   Invariants (abort() on a violation, so the fuzzer reports it): every call
   returns a defined cc_result; an error leaves a message in the context; a
   solve that succeeds passes cc_schedule_check and, under a memory cap,
   cc_memory_check at that cap. Leaks are LeakSanitizer's to find.
   Graphs stay small (at most 12 ops) and every solve has node and schedule
   budgets, so one input runs in milliseconds. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#ifndef FUZZ_LINKED_IMPL   /* the replays link tests/concerto_impl.o instead */
#define CONCERTO_IMPLEMENTATION
#endif
#include "../../concerto.h"
#include "../../concerto_rcpsp.h"

typedef struct fz_in { const uint8_t* p; size_t n; } fz_in;

static unsigned fz_u8(fz_in* in) {
    if (in->n == 0) return 0;
    in->n--;
    return *in->p++;
}
static unsigned fz_u16(fz_in* in) { unsigned a = fz_u8(in); return a | (fz_u8(in) << 8); }

static int fz_defined(cc_result r) {
    return r == CC_OK || (r < 0 && strcmp(cc_result_description(r), "unknown result") != 0);
}

/* every call's result: defined, and an error leaves a message */
static cc_result fz_res(cc_context* ctx, cc_result r, const char* what) {
    if (!fz_defined(r)) {
        fprintf(stderr, "%s: undefined result %d\n", what, (int)r);
        abort();
    }
    if (r != CC_OK && (!cc_last_error(ctx) || !cc_last_error(ctx)[0])) {
        fprintf(stderr, "%s: error %d without a message\n", what, (int)r);
        abort();
    }
    cc_clear_error(ctx);
    return r;
}

static void fz_chunk(void* stream, void* user, int chunk, int n) { (void)stream; (void)user; (void)chunk; (void)n; }
static void fz_fn(void* stream, void* user) { (void)stream; (void)user; }
static void fz_part(void* stream, void* user, const cc_split_chunk* c) { (void)stream; (void)user; (void)c; }

/* A user split rule that moves each chunk's regions by a shift the input
   chose: right (a row split of the first region), or wrong in many ways. */
static int fz_rule(void* user, const cc_split_chunk* c, cc_region* rd, int nr, cc_region* wr, int nw, int* partial) {
    unsigned v = *(const unsigned*)user;
    int q;
    if ((v & 7) == 7) return 1;
    for (q = 0; q < nr + nw; q++) {
        cc_region* r = q < nr ? &rd[q] : &wr[q - nr];
        uint64_t each = c->end > c->begin && r->n_bytes ? r->n_bytes / (c->count ? (uint64_t)c->count : 1) : 0;
        if (v & 1) { r->offset_bytes += c->begin * each / (c->end - c->begin ? c->end - c->begin : 1); r->n_bytes = each; }
        if (v & 2) r->offset_bytes += (uint64_t)c->index * (v >> 3);
        if ((v & 4) && q >= nr) partial[q - nr] = c->index & 1;
    }
    return 0;
}

/* a stand-in communicator: only its identity matters to the graph */
static cc_result fz_comm_run(void* self, void* stream, const cc_collective* c, char* msg, size_t msg_size) {
    (void)self; (void)stream; (void)c; (void)msg; (void)msg_size;
    return CC_OK;
}

#define FZ_MAX_OPS 12
#define FZ_MAX_BUF 6

static void fz_solve(cc_context* ctx, cc_graph* g, fz_in* in, int n_ops, int stream_mode) {
    static const cc_sched_method methods[] = { CC_SCHED_AUTO, CC_SCHED_LIST, CC_SCHED_SAMPLING, CC_SCHED_BNB,
                                               CC_SCHED_ODD_EVEN };
    unsigned sel = fz_u8(in);
    unsigned m;
    for (m = 0; m < sizeof methods / sizeof methods[0] + 3; m++) {
        cc_sched_desc sd;
        cc_schedule s;
        cc_result r;
        unsigned knob = fz_u8(in);
        memset(&sd, 0, sizeof sd);
        memset(&s, 0, sizeof s);
        if (m < 5) sd.method = methods[m];
        else if (m == 5) { sd.method = CC_SCHED_BNB; sd.general = cc_rcpsp_search(); }   /* lazy clause generation */
        else if (m == 6) { sd.method = CC_SCHED_AUTO; sd.general = cc_rcpsp_search(); sd.tuning.restarts = 1; }
        else {
#ifdef CONCERTO_USE_LPSOLVE
            sd.method = CC_SCHED_BNB; sd.exact = (knob & 1) ? CC_EXACT_LPSOLVE : CC_EXACT_BOTH;
            sd.tuning.lp_time_limit_s = 0.05; sd.tuning.lp_window_time_limit_s = 0.02;
#else
            sd.method = CC_SCHED_BNB; sd.exact = CC_EXACT_LPSOLVE;   /* refused: not compiled in */
#endif
        }
        if (!(sel & (1u << (m & 7))) && m != 0) continue;
        sd.seed = knob;
        sd.tuning.budget_schedules = 20 + (knob & 31);
        sd.tuning.bnb_nodes = 200 + 10 * (knob & 15);
        sd.tuning.window_nodes = 50;
        sd.tuning.improve_passes = (knob & 64) ? -1 : 0;
        sd.tuning.priority = (cc_priority)((knob >> 2) % (CC__PRIO_COUNT + 1));
        if (sd.tuning.priority == CC__PRIO_COUNT) sd.tuning.priority = CC_PRIO_ALL;
        sd.tuning.sgs = (cc_sgs)((knob >> 5) % 3);
        sd.window_ops = 2 + (knob & 3);
        sd.rounds = 1 + ((knob >> 4) & 1);
        if (knob & 128) sd.memory_cap_bytes = 1 + fz_u16(in);
        r = fz_res(ctx, cc_sched_solve(ctx, g, &sd, &s), "cc_sched_solve");
        if (r != CC_OK) {
            if (s.start_us || s.order) { fprintf(stderr, "failed solve left a schedule\n"); abort(); }
            continue;
        }
        if (s.n_ops != n_ops) { fprintf(stderr, "schedule of %d ops for %d\n", s.n_ops, n_ops); abort(); }
        {
            double mk = -1;
            r = cc_schedule_check(ctx, g, s.start_us, &mk);
            if (r != CC_OK) { fprintf(stderr, "method %u: solved schedule fails the checker: %s\n", m, cc_last_error(ctx)); abort(); }
            if (s.makespan_us + 1e-6 < mk) { fprintf(stderr, "makespan %g below the checker's %g\n", s.makespan_us, mk); abort(); }
            if (s.lower_bound_us > s.makespan_us + 1e-6) { fprintf(stderr, "bound %g above makespan %g\n", s.lower_bound_us, s.makespan_us); abort(); }
        }
        if (sd.memory_cap_bytes) {
            double end[FZ_MAX_OPS];
            int i;
            for (i = 0; i < n_ops; i++) end[i] = s.start_us[i] + cc_op_duration_us(g, cc_graph_op(g, i));
            r = cc_memory_check(ctx, g, s.start_us, end, sd.memory_cap_bytes, NULL, NULL);
            if (r != CC_OK) { fprintf(stderr, "method %u: solve under cap %llu breaks it: %s\n", m,
                                      (unsigned long long)sd.memory_cap_bytes, cc_last_error(ctx)); abort(); }
        }
        if (stream_mode) {
            double st[FZ_MAX_OPS], mk;
            fz_res(ctx, cc_simulate(ctx, g, s.order, s.n_ops, st, &mk), "cc_simulate");
        }
        {
            cc_plan* plan = NULL;
            if (fz_res(ctx, cc_plan_create(ctx, g, s.order, &plan), "cc_plan_create") == CC_OK) cc_plan_destroy(plan);
            else if (plan) { fprintf(stderr, "failed plan left a plan\n"); abort(); }
        }
        cc_schedule_release(ctx, &s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    fz_in in;
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_graph_desc gd;
    cc_comm* comm = NULL;
    cc_comm_fns cf;
    cc_buffer bufs[FZ_MAX_BUF];
    cc_op ops[FZ_MAX_OPS];
    unsigned rule_v[FZ_MAX_OPS];   /* each user rule's choice, alive as long as the graph */
    int caps[4];
    int n_buf = 0, n_ops = 0, stream_mode, steps;
    unsigned hdr;

    in.p = data; in.n = size;
    if (cc_context_create(NULL, &ctx) != CC_OK) return 0;
    memset(&cf, 0, sizeof cf);
    cf.family = "fuzz";
    cf.stream_kind = "host";
    cf.collective = fz_comm_run;
    fz_res(ctx, cc_comm_wrap(ctx, &cf, NULL, 0, 2, "fz", &comm), "cc_comm_wrap");

    hdr = fz_u8(&in);
    memset(&gd, 0, sizeof gd);
    stream_mode = !(hdr & 1);
    if (stream_mode) gd.n_streams = (int)((hdr >> 1) & 3);   /* 0: the default 2 */
    else {
        int k = 1 + (int)((hdr >> 1) & 3), i;
        for (i = 0; i < k; i++) caps[i] = (int)(fz_u8(&in) % 4);
        gd.n_resources = k; gd.capacities = caps;
    }
    if (fz_res(ctx, cc_graph_create(ctx, &gd, &g), "cc_graph_create") != CC_OK) goto done;

    for (steps = 0; steps < 64 && in.n > 0; steps++) {
        unsigned what = fz_u8(&in) % 6;
        if (what == 0 && n_buf < FZ_MAX_BUF) {   /* a buffer */
            unsigned v = fz_u8(&in);
            uint64_t nb = (uint64_t)(fz_u8(&in) + 1) * ((v & 2) ? 64 : 1);
            cc_buffer b;
            if (v & 4) nb = 0;
            if (fz_res(ctx, (v & 1) ? cc_graph_add_transient(g, NULL, nb, &b) : cc_graph_add_buffer(g, "b", nb, &b),
                       "cc_graph_add_buffer") == CC_OK)
                bufs[n_buf++] = b;
        } else if (what <= 2 && n_ops < FZ_MAX_OPS) {   /* an op */
            cc_op_desc d;
            cc_region rd[3] = {0}, wr[3] = {0};
            cc_op deps[3];
            cc_collective coll;
            cc_split sp;
            int dem[4], i;
            unsigned f = fz_u8(&in), dur = fz_u8(&in);
            cc_op op;
            memset(&d, 0, sizeof d);
            d.duration_us = (f & 0x80) ? (double)dur / 4.0 : (double)dur;
            d.stream = (int)(f & 3) - 1;
            if (!stream_mode) {
                for (i = 0; i < 4; i++) dem[i] = (int)(fz_u8(&in) % 4);
                d.demands = dem;
            }
            d.n_reads = (int)((f >> 2) & 3) % 3;
            d.n_writes = (int)((f >> 4) & 3) % 3;
            for (i = 0; i < d.n_reads + d.n_writes; i++) {
                cc_region* r = i < d.n_reads ? &rd[i] : &wr[i - d.n_reads];
                unsigned bi = fz_u8(&in), off = fz_u8(&in), len = fz_u8(&in), sr = fz_u8(&in);
                memset(r, 0, sizeof *r);
                if (n_buf > 0) r->buffer = bufs[bi % n_buf];
                else { r->buffer.id = bi; r->buffer.graph = 7; }
                r->offset_bytes = off % 64;
                r->n_bytes = len;
                r->split_rows = sr % 5;
                if (sr & 8) {   /* strided: rows (sr >> 4) % 4 of len bytes, a stride at least len */
                    r->n_rows = (sr >> 4) % 4;
                    r->stride_bytes = len + (off >> 6) * 8;
                    r->split_rows = (sr >> 6) & 1 ? r->n_rows : 0;
                }
            }
            d.reads = rd; d.writes = wr;
            {
                unsigned nd = fz_u8(&in) % 4;
                d.n_deps = 0;
                for (i = 0; i < (int)nd && n_ops > 0; i++) deps[d.n_deps++] = ops[fz_u8(&in) % n_ops];
                d.deps = deps;
            }
            if (f & 0x40) {   /* a collective */
                memset(&coll, 0, sizeof coll);
                coll.kind = (cc_coll_kind)(fz_u8(&in) % 8);
                coll.dtype = (cc_dtype)(fz_u8(&in) % 5);
                coll.n_elems = fz_u8(&in) % 17;
                coll.peer = (int)(fz_u8(&in) % 3);
                coll.comm = comm;
                d.coll = &coll;
            } else {
                d.fn = fz_fn;
                if (what == 2) d.chunk_fn = fz_chunk;
            }
            if (what == 2 && (dur & 1)) {   /* a split rule of any kind, often wrong, then checked along an axis */
                unsigned sk = fz_u8(&in), ex = fz_u8(&in);
                int a;
                memset(&sp, 0, sizeof sp);
                sp.kind = (cc_split_kind)(sk % 6);
                for (a = 0; a < CC_AXIS_COUNT; a++) sp.extent[a] = (ex >> (2 * a)) & 3 ? ((ex >> (2 * a)) & 3) * ((sk >> 3) % 5 + 1) : 0;
                sp.axes = (sk >> 6) & 1 ? 1u << ((sk >> 4) & 3) : 0;
                rule_v[n_ops % FZ_MAX_OPS] = ex;
                sp.fn = (sk & 0x80) ? fz_rule : NULL;
                sp.user_data = &rule_v[n_ops % FZ_MAX_OPS];
                d.split = &sp;
                d.part_fn = fz_part;
                d.chunk_fn = (sk & 0x20) ? fz_chunk : NULL;
                if (fz_res(ctx, cc_graph_add_op(g, &d, &op), "cc_graph_add_op") == CC_OK) {
                    int exact = -1;
                    ops[n_ops++] = op;
                    fz_res(ctx, cc_op_split_check(g, op, (cc_axis)(ex % 5), (int)(sk >> 5), &exact), "cc_op_split_check");
                }
            } else if (fz_res(ctx, cc_graph_add_op(g, &d, &op), "cc_graph_add_op") == CC_OK) ops[n_ops++] = op;
        } else if (what == 3 && n_ops > 0) {   /* a dependency, maybe a cycle */
            cc_op a = ops[fz_u8(&in) % n_ops], b = ops[fz_u8(&in) % n_ops];
            fz_res(ctx, cc_graph_add_dep(g, a, b), "cc_graph_add_dep");
        } else if (what == 4 && n_ops > 0) {   /* a duration, maybe out of range */
            unsigned v = fz_u8(&in);
            double du = (v & 0x80) ? -1.0 : (double)(v & 0x7f) * 1.5;
            fz_res(ctx, cc_op_set_duration(g, ops[fz_u8(&in) % n_ops], du), "cc_op_set_duration");
        } else if (what == 5) {
            unsigned v = fz_u8(&in);
            if (v & 1) fz_res(ctx, cc_graph_set_coll_startup(g, comm, (double)(v >> 1)), "cc_graph_set_coll_startup");
            else {
                cc_exec_costs c;
                memset(&c, 0, sizeof c);
                fz_res(ctx, cc_graph_set_exec_costs(g, &c), "cc_graph_set_exec_costs");
            }
        }
    }

    if (fz_res(ctx, cc_graph_validate(g), "cc_graph_validate") == CC_OK) {
        double cp, res;
        fz_res(ctx, cc_lower_bounds(ctx, g, &cp, &res), "cc_lower_bounds");
        if (stream_mode && n_ops > 0) {
            double mk;
            fz_res(ctx, cc_simulate(ctx, g, ops, n_ops, NULL, &mk), "cc_simulate");
        }
        {
            cc_plan* plan = NULL;
            if (fz_res(ctx, cc_plan_create(ctx, g, NULL, &plan), "cc_plan_create") == CC_OK) cc_plan_destroy(plan);
        }
        fz_solve(ctx, g, &in, n_ops, stream_mode);
    }
done:
    cc_graph_destroy(g);
    cc_comm_destroy(comm);
    cc_context_destroy(ctx);
    return 0;
}
