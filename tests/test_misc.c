/* tests/test_misc.c - result descriptions, error state per context, the
   logger, and a library that never prints. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static void test_descriptions(void) {
    static const cc_result codes[] = {
#define CODE(name, value, text) name,
        CONCERTO__RESULTS(CODE)
#undef CODE
    };
    int n = (int)(sizeof codes / sizeof codes[0]), i, j, n_empty = 0, n_same = 0;
    for (i = 0; i < n; i++) {
        const char* d = cc_result_description(codes[i]);
        if (!d || !d[0]) { n_empty++; NOTE("%s has no description", tu_res_name(codes[i])); continue; }
        for (j = 0; j < i; j++)
            if (strcmp(d, cc_result_description(codes[j])) == 0) { n_same++; NOTE("%s and %s share \"%s\"", tu_res_name(codes[i]), tu_res_name(codes[j]), d); }
    }
    CHECK_INT(n_empty, 0, "all %d result codes have a non-empty description", n);
    CHECK_INT(n_same, 0, "no two codes share a description");
    CHECK(cc_result_description((cc_result)-12345) && cc_result_description((cc_result)-12345)[0],
          "an unknown code still gets a non-empty description (\"%s\")", cc_result_description((cc_result)-12345));
    CHECK_INT(CC_OK, 0, "CC_OK is 0");
    for (i = 1, j = 0; i < n; i++) j += codes[i] >= 0;
    CHECK_INT(j, 0, "every error code is negative");
}

typedef struct log_record { int n; cc_log_level level; char last[600]; } log_record;
static void log_fn(cc_log_level level, const char* message, void* user_data) {
    log_record* r = (log_record*)user_data;
    r->n++;
    r->level = level;
    snprintf(r->last, sizeof r->last, "%s", message ? message : "(null)");
}


static void test_errors_and_logger(void) {
    cc_context_desc cd = {0};
    cc_context* ctx = NULL;
    cc_context* other = NULL;
    cc_graph* g = NULL;
    cc_op_desc d = {0};
    cc_op op;
    log_record rec;
    memset(&rec, 0, sizeof rec);
    cd.logger.log_fn = log_fn;
    cd.logger.user_data = &rec;
    cd.rank = 7;
    if (cc_context_create(&cd, &ctx) != CC_OK || cc_context_create(NULL, &other) != CC_OK) { CHECK(0, "setup"); return; }
    CHECK(cc_last_error(ctx) && cc_last_error(ctx)[0] == 0, "a new context has no error message");
    CHECK_INT(cc_last_result(ctx), CC_OK, "a new context's last result is CC_OK");
    cc_graph_create(ctx, NULL, &g);
    d.name = "negative_op";
    d.duration_us = -3;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_ERR_BAD_DURATION, "a negative duration fails");
    CHECK_INT(cc_last_result(ctx), CC_ERR_BAD_DURATION, "cc_last_result records it");
    CHECK_INT(rec.n, 1, "the logger got one message");
    CHECK_INT(rec.level, CC_LOG_ERROR, "at level CC_LOG_ERROR");
    CHECK(strcmp(rec.last, cc_last_error(ctx)) == 0, "the logged message is cc_last_error (\"%s\" vs \"%s\")", rec.last,
          cc_last_error(ctx));
    CHECK(strstr(cc_last_error(ctx), "rank") && tu_has_number(cc_last_error(ctx), 7), "the message shows the context's rank 7: \"%s\"",
          cc_last_error(ctx));
    CHECK(cc_last_error(other)[0] == 0, "another context's error state is untouched");
    cc_clear_error(ctx);
    CHECK(cc_last_error(ctx)[0] == 0 && cc_last_result(ctx) == CC_OK, "cc_clear_error empties the message and result");
    d.duration_us = 1;
    CHECK_RES(ctx, cc_graph_add_op(g, &d, &op), CC_OK, "a good op");
    CHECK(cc_last_error(ctx)[0] == 0, "success leaves no message");
    CHECK_INT(rec.n, 1, "success logs no error");
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    cc_context_destroy(other);
    CHECK(cc_last_error(NULL) != NULL, "cc_last_error(NULL) returns a string");
    cc_context_destroy(NULL);
    cc_graph_destroy(NULL);
    CHECK(1, "destroying NULL context and graph is harmless");
}

/* Every public function called, many of them failing: nothing appears on
   stdout or stderr. */
static void test_never_prints(void) {
    tu_capture cap;
    char head[400];
    long n;
    cc_context* ctx = NULL;
    cc_graph* g = NULL;
    cc_graph* pg = NULL;
    cc_schedule s;
    cc_sched_desc sd = {0};
    cc_op ops[4], junk;
    cc_op_desc d = {0};
    cc_buffer b, ghost = {77, 0};
    cc_region reg = {0};
    double t[4] = {0, 0, 0, 0}, mk, cp, rb;
    int i;
    const char* bad_sm = "this is not a PSPLIB file\n";
    memset(&s, 0, sizeof s);
    if (tu_capture_begin(&cap) != 0) { SKIP("cannot capture stdout/stderr in %s", tu_tmp_dir()); return; }
    cc_context_create(NULL, &ctx);
    cc_graph_create(ctx, NULL, &g);
    cc_graph_add_buffer(g, "buf", 16, &b);
    for (i = 0; i < 4; i++) {
        d.name = NULL;
        d.duration_us = 1 + i;
        d.stream = i % 2;
        d.deps = i ? &ops[i - 1] : NULL;
        d.n_deps = i ? 1 : 0;
        cc_graph_add_op(g, &d, &ops[i]);
    }
    d.duration_us = NAN; cc_graph_add_op(g, &d, &junk);
    d.duration_us = 1; d.stream = 9; cc_graph_add_op(g, &d, &junk);
    reg.buffer = ghost; reg.offset_bytes = 0; reg.n_bytes = 1;
    d.stream = 0; d.reads = &reg; d.n_reads = 1; cc_graph_add_op(g, &d, &junk);
    reg.buffer = b; reg.n_bytes = 17; cc_graph_add_op(g, &d, &junk);
    cc_schedule_check(ctx, g, t, &mk);
    cc_lower_bounds(ctx, g, &cp, &rb);
    for (i = CC_SCHED_AUTO; i <= CC_SCHED_ODD_EVEN; i++) {
        sd.method = (cc_sched_method)i;
        if (cc_sched_solve(ctx, g, &sd, &s) == CC_OK) {
            cc_simulate(ctx, g, s.order, s.n_ops, NULL, &mk);
            cc_schedule_release(ctx, &s);
        }
    }
    {
        cc_op rev[4];
        for (i = 0; i < 4; i++) rev[i] = ops[3 - i];
        cc_simulate(ctx, g, rev, 4, NULL, &mk);
    }
    cc_graph_add_dep(g, ops[3], ops[0]);   /* a cycle */
    cc_graph_validate(g);
    cc_sched_solve(ctx, g, &sd, &s);
    cc_schedule_release(ctx, &s);
    cc_psplib_parse(ctx, bad_sm, strlen(bad_sm), "bad.sm", &pg);
    cc_psplib_read(ctx, "/nonexistent/file.sm", &pg);
    cc_graph_destroy(pg);
    cc_graph_destroy(g);
    cc_context_destroy(ctx);
    n = tu_capture_end(&cap, head, sizeof head);
    CHECK(n == 0, "the library printed nothing on stdout or stderr (got %ld bytes: \"%s\")", n, head);
}

int main(void) {
    TH_RUN(test_descriptions);
    TH_RUN(test_errors_and_logger);
    TH_RUN(test_never_prints);
    return th_done();
}
