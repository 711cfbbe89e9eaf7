/* tests/test_guard.c - a user's own mistakes, caught: an op that writes a
   region it does not declare (cc_exec_step_checked), profiling that would
   change the caller's memory (cc_exec_bind_buffer, cc_exec_allow_profile_writes),
   ranks whose plans differ (cc_exec_agree names the first op), a write
   between the rows of a strided region, and a graph
   never profiled (every compute op of 0 us). The references are the bytes
   the test's own ops write, known by hand. */
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 16   /* floats a tensor */

/* llm.c's mistake: the encoder's backward adds into the token embedding's
   gradient as well as the position embedding's, and its op declares only
   the latter. */
typedef struct model {
    float dout[N], dwte[N], dwpe[N];
    int plant;          /* 1: encoder_backward also writes dwte[5] */
} model;

static void encoder_backward(void* stream, void* user) {
    model* m = (model*)user;
    int i;
    (void)stream;
    for (i = 0; i < N; i++) m->dwpe[i] += m->dout[i];
    if (m->plant) m->dwte[5] += 1.0f;
}
static void lm_head_backward(void* stream, void* user) {
    model* m = (model*)user;
    int i;
    (void)stream;
    for (i = 0; i < N; i++) m->dwte[i] += 2.0f * m->dout[i];
}

static cc_region whole(cc_buffer b) {
    cc_region r = {0};
    memset(&r, 0, sizeof r);
    r.buffer = b;
    r.n_bytes = N * sizeof(float);
    return r;
}

static void fill(model* m, int plant) {
    int i;
    memset(m, 0, sizeof *m);
    for (i = 0; i < N; i++) { m->dout[i] = 0.5f + (float)i; m->dwte[i] = (float)(3 * i); m->dwpe[i] = -(float)i; }
    m->plant = plant;
}

/* The step's graph: lm_head_backward then encoder_backward; declare: 1
   declares the encoder's write of dwte as well. */
static cc_graph* llmc_graph(cc_context* ctx, model* m, int declare, cc_buffer* b) {
    cc_graph* g = NULL;
    cc_op_desc d;
    cc_region rd[1] = {0}, wr[2] = {0};
    if (cc_graph_create(ctx, NULL, &g) != CC_OK) return NULL;
    cc_graph_add_buffer(g, "dout", sizeof m->dout, &b[0]);
    cc_graph_add_buffer(g, "dwte", sizeof m->dwte, &b[1]);
    cc_graph_add_buffer(g, "dwpe", sizeof m->dwpe, &b[2]);
    memset(&d, 0, sizeof d);
    rd[0] = whole(b[0]); wr[0] = whole(b[1]);
    d.name = "lm_head_backward"; d.duration_us = 10; d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = 1;
    d.fn = lm_head_backward; d.user_data = m;
    cc_graph_add_op(g, &d, NULL);
    memset(&d, 0, sizeof d);
    rd[0] = whole(b[0]); wr[0] = whole(b[2]); wr[1] = whole(b[1]);
    d.name = "encoder_backward"; d.duration_us = 10; d.reads = rd; d.n_reads = 1; d.writes = wr; d.n_writes = declare ? 2 : 1;
    d.fn = encoder_backward; d.user_data = m;
    cc_graph_add_op(g, &d, NULL);
    return g;
}

static void test_undeclared_write(void) {
    cc_context* ctx = NULL;
    int declare;
    cc_context_create(NULL, &ctx);
    for (declare = 0; declare < 2; declare++) {
        model m, ref;
        cc_buffer b[3];
        cc_graph* g = llmc_graph(ctx, &m, declare, b);
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        cc_backend be;
        int i;
        fill(&m, 1);
        CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan of the llm.c step");
        CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "CPU backend");
        CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "executor");
        CHECK_RES(ctx, cc_exec_bind_buffer(x, b[0], m.dout), CC_OK, "bind dout");
        CHECK_RES(ctx, cc_exec_bind_buffer(x, b[1], m.dwte), CC_OK, "bind dwte");
        CHECK_RES(ctx, cc_exec_bind_buffer(x, b[2], m.dwpe), CC_OK, "bind dwpe");
        CHECK(cc_exec_buffer_ptr(x, b[1]) == (void*)m.dwte, "cc_exec_buffer_ptr gives a bound buffer's address");
        if (!declare) {
            CHECK_RES(ctx, cc_exec_step_checked(x), CC_ERR_UNDECLARED_WRITE, "the checked step catches the undeclared write");
            CHECK_CONTAINS(cc_last_error(ctx), "encoder_backward", "it names the op (%s)", cc_last_error(ctx));
            CHECK_CONTAINS(cc_last_error(ctx), "'dwte'", "and the buffer");
            {   /* dwte[5] is bytes 20..23; 15 -> 16 changes some of them */
                const char* at = strstr(cc_last_error(ctx), "byte ");
                long byte = at ? strtol(at + 5, NULL, 10) : -1;
                CHECK(byte >= 20 && byte < 24, "and a byte of dwte[5] (byte %ld, want 20..23)", byte);
            }
            /* a plain step runs it without a word: the mistake is silent there */
            fill(&m, 1);
            CHECK_RES(ctx, cc_exec_step(x), CC_OK, "the plain step does not see it");
        } else {
            /* declared: checked, and the results are program order's by hand */
            fill(&ref, 1);
            for (i = 0; i < N; i++) { ref.dwte[i] += 2.0f * ref.dout[i]; ref.dwpe[i] += ref.dout[i]; }
            ref.dwte[5] += 1.0f;
            CHECK_RES(ctx, cc_exec_step_checked(x), CC_OK, "declared, the checked step passes");
            CHECK(memcmp(m.dwte, ref.dwte, sizeof m.dwte) == 0 && memcmp(m.dwpe, ref.dwpe, sizeof m.dwpe) == 0,
                  "and its results are the step's, by hand");
        }
        cc_exec_destroy(x);
        cc_backend_destroy(&be);
        cc_plan_destroy(pl);
        cc_graph_destroy(g);
    }
    cc_context_destroy(ctx);
}

/* A strided write: an op declares columns [1, 3) of a 4 x 4 float matrix
   and also writes element (2, 3), inside the declared rows' bounding range
   (bytes 4..59) but in no declared row: the checked step names byte 44..47. */
typedef struct cols_job { float m[16]; int stray; } cols_job;
static void write_cols(void* stream, void* user) {
    cols_job* j = (cols_job*)user;
    int r;
    (void)stream;
    for (r = 0; r < 4; r++) { j->m[r * 4 + 1] += 1.0f; j->m[r * 4 + 2] += 2.0f; }
    if (j->stray) j->m[2 * 4 + 3] += 3.0f;
}

static void test_undeclared_strided(void) {
    cc_context* ctx = NULL;
    int stray;
    cc_context_create(NULL, &ctx);
    for (stray = 0; stray < 2; stray++) {
        cols_job j;
        cc_graph* g = NULL;
        cc_buffer b;
        cc_region w;
        cc_op_desc d;
        cc_plan* pl = NULL;
        cc_exec* x = NULL;
        cc_backend be;
        int i;
        memset(&j, 0, sizeof j);
        for (i = 0; i < 16; i++) j.m[i] = (float)i;
        j.stray = stray;
        cc_graph_create(ctx, NULL, &g);
        cc_graph_add_buffer(g, "mat", sizeof j.m, &b);
        memset(&w, 0, sizeof w);
        w.buffer = b; w.offset_bytes = 4; w.n_bytes = 8; w.n_rows = 4; w.stride_bytes = 16;
        memset(&d, 0, sizeof d);
        d.name = "cols"; d.duration_us = 1; d.writes = &w; d.n_writes = 1; d.fn = write_cols; d.user_data = &j;
        CHECK_RES(ctx, cc_graph_add_op(g, &d, NULL), CC_OK, "an op writing two columns, declared strided");
        CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan");
        CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "CPU backend");
        CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "executor");
        CHECK_RES(ctx, cc_exec_bind_buffer(x, b, j.m), CC_OK, "bind mat");
        if (stray) {
            const char* at;
            long byte;
            CHECK_RES(ctx, cc_exec_step_checked(x), CC_ERR_UNDECLARED_WRITE, "a write between the declared rows is caught");
            at = strstr(cc_last_error(ctx), "byte ");
            byte = at ? strtol(at + 5, NULL, 10) : -1;
            CHECK(byte >= 44 && byte < 48, "it names a byte of element (2, 3) (byte %ld, want 44..47)", byte);
        } else {
            CHECK_RES(ctx, cc_exec_step_checked(x), CC_OK, "the declared columns pass the checked step");
            CHECK(j.m[1] == 2.0f && j.m[14] == 16.0f && j.m[11] == 11.0f, "and the columns changed, by hand");
        }
        cc_exec_destroy(x);
        cc_backend_destroy(&be);
        cc_plan_destroy(pl);
        cc_graph_destroy(g);
    }
    cc_context_destroy(ctx);
}

/* An op that writes past its region of a transient buffer, in the arena. */
typedef struct arena_job { float* at; int over; } arena_job;
static void write_act(void* stream, void* user) {
    arena_job* j = (arena_job*)user;
    int i;
    (void)stream;
    for (i = 0; i < N / 2 + j->over; i++) j->at[i] = (float)i + 1;
}
static void read_act(void* stream, void* user) { (void)stream; (void)user; }

static void test_undeclared_arena(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_buffer act;
    cc_op_desc d;
    cc_region r = {0};
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    arena_job j = { NULL, 1 };
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_transient(g, "act", N * sizeof(float), &act);
    memset(&r, 0, sizeof r);
    r.buffer = act; r.n_bytes = N / 2 * sizeof(float);   /* declares the first half */
    memset(&d, 0, sizeof d);
    d.name = "forward"; d.duration_us = 5; d.writes = &r; d.n_writes = 1; d.fn = write_act; d.user_data = &j;
    cc_graph_add_op(g, &d, NULL);
    r.n_bytes = N * sizeof(float);
    memset(&d, 0, sizeof d);
    d.name = "backward"; d.duration_us = 5; d.reads = &r; d.n_reads = 1; d.fn = read_act;
    cc_graph_add_op(g, &d, NULL);
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan with a transient buffer");
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "CPU backend");
    CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "executor");
    j.at = (float*)cc_exec_buffer_ptr(x, act);
    memset(j.at, 0, N * sizeof(float));
    CHECK_RES(ctx, cc_exec_step_checked(x), CC_ERR_UNDECLARED_WRITE, "a write one float past the declared region is caught");
    CHECK_CONTAINS(cc_last_error(ctx), "'forward'", "naming the op (%s)", cc_last_error(ctx));
    CHECK_CONTAINS(cc_last_error(ctx), "'act'", "and the transient buffer");
    j.over = 0;
    CHECK_RES(ctx, cc_exec_step_checked(x), CC_OK, "within its region it passes");
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* Profiling an optimizer step: AdamW's kind of op changes the weights. */
typedef struct opt { float w[N]; float* act; } opt;
static void adamw(void* stream, void* user) {
    opt* o = (opt*)user;
    int i;
    (void)stream;
    for (i = 0; i < N; i++) o->w[i] -= 0.25f;
    if (o->act) for (i = 0; i < N; i++) o->act[i] = o->w[i];
}
static void use_act(void* stream, void* user) { (void)stream; (void)user; }

static void test_profile_keeps_memory(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_buffer w, act;
    cc_op_desc d;
    cc_region rw = {0}, ra = {0};
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    opt o;
    float w0[N], a0[N];
    int i;
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "w", sizeof o.w, &w);
    cc_graph_add_transient(g, "act", sizeof o.w, &act);
    memset(&rw, 0, sizeof rw); rw.buffer = w; rw.n_bytes = sizeof o.w;
    memset(&ra, 0, sizeof ra); ra.buffer = act; ra.n_bytes = sizeof o.w;
    memset(&d, 0, sizeof d);
    {
        cc_region wr[2] = {0};
        wr[0] = rw; wr[1] = ra;
        d.name = "adamw"; d.duration_us = 5; d.writes = wr; d.n_writes = 2; d.fn = adamw; d.user_data = &o;
        cc_graph_add_op(g, &d, NULL);
    }
    memset(&d, 0, sizeof d);
    d.name = "use"; d.duration_us = 5; d.reads = &ra; d.n_reads = 1; d.fn = use_act;
    cc_graph_add_op(g, &d, NULL);
    for (i = 0; i < N; i++) { o.w[i] = (float)i; w0[i] = o.w[i]; }
    CHECK_RES(ctx, cc_plan_create(ctx, g, NULL, &pl), CC_OK, "plan");
    CHECK_RES(ctx, cc_cpu_backend_create_ctx(ctx, &be), CC_OK, "CPU backend");
    CHECK_RES(ctx, cc_exec_create(ctx, pl, &be, &x), CC_OK, "executor");
    o.act = (float*)cc_exec_buffer_ptr(x, act);
    for (i = 0; i < N; i++) { o.act[i] = 100.0f + (float)i; a0[i] = o.act[i]; }
    /* unbound: refused, and nothing ran */
    CHECK_RES(ctx, cc_exec_profile_ops(x, 3, NULL), CC_ERR_INVALID_ARG, "profiling refuses to change a buffer it cannot put back");
    CHECK_CONTAINS(cc_last_error(ctx), "'adamw'", "naming the op (%s)", cc_last_error(ctx));
    CHECK_CONTAINS(cc_last_error(ctx), "'w'", "and the buffer");
    CHECK(memcmp(o.w, w0, sizeof w0) == 0, "the weights are untouched");
    CHECK_RES(ctx, cc_exec_profile_steps(x, 2, NULL), CC_ERR_INVALID_ARG, "and so does profiling whole steps");
    /* bound: profiled, and put back as found */
    CHECK_RES(ctx, cc_exec_bind_buffer(x, w, o.w), CC_OK, "bind w");
    CHECK_RES(ctx, cc_exec_profile_ops(x, 3, NULL), CC_OK, "profiling the ops, w bound");
    CHECK(cc_op_duration_us(g, cc_graph_op(g, 0)) >= 0, "a duration was measured");
    CHECK(memcmp(o.w, w0, sizeof w0) == 0, "the weights are as they were (w[1] = %g, want 1)", (double)o.w[1]);
    CHECK(memcmp(o.act, a0, sizeof a0) == 0, "and so is the arena (act[1] = %g, want 101)", (double)o.act[1]);
    CHECK_RES(ctx, cc_exec_profile_steps(x, 3, NULL), CC_OK, "profiling 3 whole steps");
    CHECK(memcmp(o.w, w0, sizeof w0) == 0 && memcmp(o.act, a0, sizeof a0) == 0, "the memory is as it was");
    /* a step still changes them: the restore is profiling's alone */
    CHECK_RES(ctx, cc_exec_step(x), CC_OK, "one step");
    CHECK(o.w[1] == 0.75f, "a step updates the weights (w[1] = %g, want 0.75)", (double)o.w[1]);
    /* the caller's choice: unbound and allowed, profiling changes them */
    memcpy(o.w, w0, sizeof w0);
    CHECK_RES(ctx, cc_exec_bind_buffer(x, w, NULL), CC_OK, "unbind w");
    CHECK_RES(ctx, cc_exec_allow_profile_writes(x, 1), CC_OK, "allow profiling to change it");
    CHECK_RES(ctx, cc_exec_profile_ops(x, 2, NULL), CC_OK, "profiling, allowed");
    CHECK(o.w[1] < 1.0f, "left changed, as allowed (w[1] = %g)", (double)o.w[1]);
    CHECK_RES(ctx, cc_exec_bind_buffer(x, act, o.w), CC_ERR_INVALID_ARG, "a transient buffer cannot be bound");
    CHECK_CONTAINS(cc_last_error(ctx), "'act'", "naming it");
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

/* Ranks whose plans differ: rank 1's second all-reduce has more elements,
   or (extra) rank 1 has one op more at the end. */
typedef struct mm_out { cc_result rc[2]; char msg[2][600]; int extra; } mm_out;
static void nothing(void* stream, void* user) { (void)stream; (void)user; }
static cc_result mismatch_rank(cc_rank* rank, void* arg) {
    mm_out* out = (mm_out*)arg;
    int me = cc_rank_index(rank);
    cc_context* ctx = cc_rank_context(rank);
    cc_graph* g = NULL;
    cc_op_desc d;
    cc_collective c;
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    float buf[8] = { 0 };
    int k;
    cc_graph_create(ctx, NULL, &g);
    for (k = 0; k < 2; k++) {
        memset(&d, 0, sizeof d);
        d.name = k ? "mlp" : "attn"; d.duration_us = 1; d.fn = nothing;
        cc_graph_add_op(g, &d, NULL);
        memset(&c, 0, sizeof c);
        c.kind = CC_COLL_ALL_REDUCE; c.dtype = CC_DTYPE_FLOAT32; c.comm = cc_rank_world_comm(rank);
        c.n_elems = (k == 1 && me == 1 && !out->extra) ? 8 : 4; c.send_buf = buf; c.recv_buf = buf;
        memset(&d, 0, sizeof d);
        d.name = k ? "mlp_sum" : "attn_sum"; d.duration_us = 1; d.stream = CC_STREAM_COMM; d.coll = &c;
        cc_graph_add_op(g, &d, NULL);
    }
    if (out->extra && me == 1) {
        memset(&d, 0, sizeof d);
        d.name = "extra"; d.duration_us = 1; d.fn = nothing;
        cc_graph_add_op(g, &d, NULL);
    }
    cc_plan_create(ctx, g, NULL, &pl);
    cc_cpu_backend_create(rank, &be);
    cc_exec_create(ctx, pl, &be, &x);
    out->rc[me] = cc_exec_agree(x, cc_rank_world_comm(rank));
    snprintf(out->msg[me], sizeof out->msg[me], "%s", cc_last_error(ctx));
    cc_exec_destroy(x);
    cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    cc_graph_destroy(g);
    return CC_OK;
}

static void test_plan_mismatch_named(void) {
    mm_out out;
    cc_result rc;
    char err[512];
    int r;
    memset(&out, 0, sizeof out);
    tu_run_world(2, mismatch_rank, &out, &rc, err, sizeof err);
    for (r = 0; r < 2; r++) {
        CHECK_INT(out.rc[r], CC_ERR_PLAN_MISMATCH, "rank %d: the plans differ", r);
        CHECK_CONTAINS(out.msg[r], "'mlp_sum'", "rank %d names the first op that differs (%s)", r, out.msg[r]);
        CHECK_CONTAINS(out.msg[r], r ? "rank 0" : "rank 1", "rank %d names the other rank", r);
        CHECK_CONTAINS(out.msg[r], "another op or collective", "rank %d says the op itself differs", r);
    }
    memset(&out, 0, sizeof out);
    out.extra = 1;
    tu_run_world(2, mismatch_rank, &out, &rc, err, sizeof err);
    CHECK_INT(out.rc[0], CC_ERR_PLAN_MISMATCH, "one op more on rank 1: rank 0 refuses");
    CHECK_INT(out.rc[1], CC_ERR_PLAN_MISMATCH, "and rank 1");
    CHECK(strstr(out.msg[0], "more ops on stream 0") && strstr(out.msg[0], "its 5 ops, this rank's 4"),
          "rank 0 says rank 1 has one op more on stream 0 (%s)", out.msg[0]);
    CHECK_CONTAINS(out.msg[1], "'extra'", "rank 1 names its extra op (%s)", out.msg[1]);
    CHECK_CONTAINS(out.msg[1], "position 2 of stream 0", "and where it is");
}

/* A graph never profiled: every compute op of 0 us. */
static void test_zero_durations(void) {
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_schedule s;
    cc_sched_desc sd;
    cc_op_desc d;
    cc_op ops[3];
    int i;
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    for (i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof name, "k%d", i);
        memset(&d, 0, sizeof d);
        d.name = name; d.stream = i % 2;
        cc_graph_add_op(g, &d, &ops[i]);
    }
    memset(&sd, 0, sizeof sd);
    memset(&s, 0, sizeof s);
    CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_ERR_BAD_DURATION, "a graph whose compute ops all last 0 is refused");
    CHECK_CONTAINS(cc_last_error(ctx), "allow_zero_durations", "saying how to accept it (%s)", cc_last_error(ctx));
    CHECK_CONTAINS(cc_last_error(ctx), "'k0'", "naming its first op");
    CHECK(s.start_us == NULL, "and nothing is returned");
    sd.allow_zero_durations = 1;
    CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_OK, "allowed, it is solved");
    CHECK(s.makespan_us == 0, "to makespan 0");
    cc_schedule_release(ctx, &s);
    sd.allow_zero_durations = 0;
    CHECK_RES(ctx, cc_op_set_duration(g, ops[1], 7), CC_OK, "one op given a duration");
    CHECK_RES(ctx, cc_sched_solve(ctx, g, &sd, &s), CC_OK, "zero-duration ops beside one that lasts are legal");
    CHECK(s.makespan_us == 7, "makespan 7 (%g)", s.makespan_us);
    cc_schedule_release(ctx, &s);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
}

int main(void) {
    test_undeclared_write();
    test_undeclared_arena();
    test_undeclared_strided();
    test_profile_keeps_memory();
    test_plan_mismatch_named();
    test_zero_durations();
    return th_done();
}
