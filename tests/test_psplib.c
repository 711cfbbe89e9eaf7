/* tests/test_psplib.c - PSPLIB .sm reading, malformed input, writing and
   reading back. The reference for every number is the test's own reader
   (tu_sm_parse) or the file itself. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

static cc_context* ctx;
static char sample_path[512];
static char* sample_text;     /* j301_1.sm, or NULL */
static size_t sample_len;

/* Compares a graph with an instance in every number: ops, resources,
   capacities, names, durations, demands, direct predecessors. Returns the
   number of differences (the first few shown). */
static int compare(cc_graph* g, const tu_inst* in, int names_from_file, const char* what) {
    int n_diff = 0, i, r, j;
    cc_op* p = (cc_op*)calloc((size_t)in->n + 1, sizeof(cc_op));
#define DIFF(...) do { if (n_diff++ < 4) NOTE(__VA_ARGS__); } while (0)
    if (cc_graph_n_ops(g) != in->n) { DIFF("%s: %d ops, file has %d", what, cc_graph_n_ops(g), in->n); free(p); return n_diff; }
    if (cc_graph_n_resources(g) != in->k) { DIFF("%s: %d resources, file has %d", what, cc_graph_n_resources(g), in->k); free(p); return n_diff; }
    if (cc_graph_validate(g) != CC_OK) DIFF("%s: does not validate: %s", what, cc_last_error(ctx));
    for (r = 0; r < in->k; r++)
        if (cc_graph_capacity(g, r) != in->cap[r]) DIFF("%s: capacity of R%d is %d, file has %d", what, r + 1, cc_graph_capacity(g, r), in->cap[r]);
    for (i = 0; i < in->n; i++) {
        cc_op op = cc_graph_op(g, i);
        int np;
        char name[32];
        snprintf(name, sizeof name, "job%d", i + 1);
        if (names_from_file && strcmp(cc_op_name(g, op), name) != 0) DIFF("%s: op %d is named \"%s\", expected \"%s\"", what, i, cc_op_name(g, op), name);
        if (cc_op_duration_us(g, op) != in->dur[i]) DIFF("%s: job%d lasts %g, file has %g", what, i + 1, cc_op_duration_us(g, op), in->dur[i]);
        for (r = 0; r < in->k; r++)
            if (cc_op_demand(g, op, r) != in->dem[i * in->k + r])
                DIFF("%s: job%d demands %d of R%d, file has %d", what, i + 1, cc_op_demand(g, op, r), r + 1, in->dem[i * in->k + r]);
        np = cc_op_preds(g, op, p, in->n);
        {
            int n_file = 0, k;
            for (j = 0; j < in->n; j++) n_file += in->adj[j * in->n + i];
            if (np != n_file) DIFF("%s: job%d has %d predecessors, file has %d", what, i + 1, np, n_file);
            for (k = 0; k < np && k < in->n; k++) {
                int x = cc_op_index(g, p[k]);
                if (x < 0 || !in->adj[x * in->n + i]) DIFF("%s: job%d has predecessor index %d, not in the file", what, i + 1, x);
            }
        }
    }
#undef DIFF
    free(p);
    return n_diff;
}

static void test_read_sample(void) {
    cc_graph* g = NULL;
    tu_inst* ref;
    cc_result r;
    if (!sample_text) { SKIP("%s not found (the repository is expected beside shared/)", sample_path); return; }
    ref = tu_sm_parse(sample_text);
    if (!CHECK(ref != NULL, "the test's own reader understands %s", sample_path)) return;
    r = cc_psplib_read(ctx, sample_path, &g);
    CHECK_RES(ctx, r, CC_OK, "cc_psplib_read %s", sample_path);
    if (r == CC_OK) {
        CHECK_INT(cc_graph_n_ops(g), 32, "j301_1 has 32 jobs (30 + source + sink)");
        CHECK_INT(cc_graph_n_resources(g), 4, "j301_1 has 4 renewable resources");
        CHECK(cc_graph_capacity(g, 0) == 12 && cc_graph_capacity(g, 1) == 13 && cc_graph_capacity(g, 2) == 4 &&
              cc_graph_capacity(g, 3) == 12, "capacities are 12 13 4 12 as in the file");
        CHECK(strcmp(cc_op_name(g, cc_graph_op(g, 1)), "job2") == 0 && cc_op_duration_us(g, cc_graph_op(g, 1)) == 8 &&
              cc_op_demand(g, cc_graph_op(g, 1), 0) == 4, "job2: duration 8, demand 4 on R1");
        CHECK_INT(compare(g, ref, 1, "j301_1"), 0, "every duration, demand and precedence agrees with the test's own reader");
        {
            double cp = -1, rb = -1;
            CHECK_RES(ctx, cc_lower_bounds(ctx, g, &cp, &rb), CC_OK, "cc_lower_bounds on j301_1");
            CHECK(cp == 38, "critical path 38 = the file's MPM-Time (got %g)", cp);
            CHECK(fabs(cp - tu_critical_path(ref)) < 1e-9, "critical path agrees with the test's own");
        }
        cc_graph_destroy(g);
    }
    tu_inst_free(ref);
    g = NULL;
    r = cc_psplib_parse(ctx, sample_text, sample_len, "j301_1.sm", &g);
    CHECK_RES(ctx, r, CC_OK, "cc_psplib_parse of the same text");
    if (r == CC_OK) {
        CHECK_INT(cc_graph_n_ops(g), 32, "parse gives 32 ops too");
        cc_graph_destroy(g);
    }
    {
        char missing[600];
        snprintf(missing, sizeof missing, "%s/no_such_file.sm", tu_tmp_dir());
        g = NULL;
        CHECK_RES(ctx, cc_psplib_read(ctx, missing, &g), CC_ERR_IO, "reading a missing file");
        CHECK_CONTAINS(cc_last_error(ctx), "no_such_file.sm", "the message names the file");
        CHECK(g == NULL, "no graph on failure");
    }
}

/* ---- malformed texts --------------------------------------------------------*/
static int line_of(const char* text, const char* at) {
    int line = 1;
    const char* p;
    for (p = text; p < at; p++) line += *p == '\n';
    return line;
}

/* Does msg contain the number as a whole word? */

/* Replaces the first occurrence of old (after the marker) by new. */
static char* edit(const char* text, const char* marker, const char* old, const char* repl, int* line) {
    const char* m = strstr(text, marker);
    const char* at;
    char* out;
    size_t n = strlen(text), no = strlen(old), nr = strlen(repl);
    if (!m || !(at = strstr(m, old))) return NULL;
    out = (char*)malloc(n - no + nr + 1);
    memcpy(out, text, (size_t)(at - text));
    memcpy(out + (at - text), repl, nr);
    memcpy(out + (at - text) + nr, at + no, n - (size_t)(at - text) - no + 1);
    if (line) *line = line_of(text, at);
    return out;
}

typedef struct bad_case {
    const char* what;
    char* text;
    int line;              /* 0: no line to name */
    cc_result want1, want2;
    const char* also;      /* or NULL: another acceptable thing to name instead of the line */
} bad_case;

static void test_malformed(void) {
    const char* base = sample_text;
    char* generated = NULL;
    bad_case c[10];
    int n = 0, i;
    if (!base) {
        /* without the data, a generated instance in the same layout */
        tu_rng rng = {3};
        tu_gen gen = {8, 8, 4, 4, 0, 9, 9, 1.0, 0.4, 0};
        tu_inst* in = tu_random_inst(&rng, &gen);
        tu_inst* full = tu_inst_new(10, 4, 0);
        int a, b;
        for (a = 0; a < 4; a++) full->cap[a] = in->cap[a];
        for (a = 0; a < 8; a++) {
            full->dur[a + 1] = in->dur[a];
            for (b = 0; b < 4; b++) full->dem[(a + 1) * 4 + b] = in->dem[a * 4 + b];
            for (b = 0; b < 8; b++) full->adj[(a + 1) * 10 + b + 1] = in->adj[a * 8 + b];
            full->adj[0 * 10 + a + 1] = 1;
            full->adj[(a + 1) * 10 + 9] = 1;
        }
        generated = tu_sm_format(full);
        base = generated;
        tu_inst_free(in);
        tu_inst_free(full);
        NOTE("%s not found: malformed texts are made from a generated instance", sample_path);
    }
    memset(c, 0, sizeof c);
    {   /* truncated in the middle of the requests */
        const char* at = strstr(base, "REQUESTS/DURATIONS:");
        size_t cut = at ? (size_t)(at - base) + 300 : strlen(base) / 2;
        c[n].what = "truncated in REQUESTS/DURATIONS";
        c[n].text = (char*)malloc(cut + 1);
        memcpy(c[n].text, base, cut);
        c[n].text[cut] = 0;
        c[n].want1 = c[n].want2 = CC_ERR_PARSE;
        n++;
    }
    {   /* a word where job 3's duration belongs */
        const char* req = strstr(base, "REQUESTS/DURATIONS:");
        const char* line3 = req;
        int k;
        for (k = 0; k < 5 && line3; k++) line3 = strchr(line3, '\n') ? strchr(line3, '\n') + 1 : NULL;   /* header, title, dashes, job1, job2 */
        if (line3) {
            /* line3 is job 3: "  3      1     4 ..." -> replace the third number by "four" */
            const char* p = line3;
            int field;
            size_t pre, len;
            for (field = 0; field < 2; field++) {
                while (*p == ' ') p++;
                while (*p && *p != ' ') p++;
            }
            while (*p == ' ') p++;
            pre = (size_t)(p - base);
            len = strlen(base);
            c[n].text = (char*)malloc(len + 8);
            memcpy(c[n].text, base, pre);
            memcpy(c[n].text + pre, "four", 4);
            while (*p && *p != ' ') p++;
            memcpy(c[n].text + pre + 4, p, len - (size_t)(p - base) + 1);
            c[n].line = line_of(base, line3);
            c[n].what = "a word instead of job 3's duration";
            c[n].want1 = c[n].want2 = CC_ERR_PARSE;
            n++;
        }
    }
    {   /* successor id out of range in job 1's line */
        const char* prec = strstr(base, "PRECEDENCE RELATIONS:");
        const char* l1 = prec ? strchr(strchr(prec, '\n') + 1, '\n') + 1 : NULL;   /* skip title and header */
        if (l1) {
            const char* eol = strchr(l1, '\n');
            size_t pre = (size_t)(eol - base), len = strlen(base);
            /* the successor list gets one more entry: bump the count is harder, so replace the last successor */
            const char* last = eol;
            while (last > l1 && last[-1] == ' ') last--;
            while (last > l1 && isdigit((unsigned char)last[-1])) last--;
            pre = (size_t)(last - base);
            c[n].text = (char*)malloc(len + 8);
            memcpy(c[n].text, base, pre);
            memcpy(c[n].text + pre, "999", 3);
            {
                const char* rest = last;
                while (isdigit((unsigned char)*rest)) rest++;
                memcpy(c[n].text + pre + 3, rest, len - (size_t)(rest - base) + 1);
            }
            c[n].line = line_of(base, l1);
            c[n].what = "successor 999 in job 1's line";
            c[n].want1 = CC_ERR_PARSE;
            c[n].want2 = CC_ERR_UNKNOWN_OP;
            n++;
        }
    }
    {   /* the RESOURCEAVAILABILITIES section is missing */
        const char* at = strstr(base, "RESOURCEAVAILABILITIES:");
        if (at) {
            size_t cut = (size_t)(at - base);
            c[n].text = (char*)malloc(cut + 1);
            memcpy(c[n].text, base, cut);
            c[n].text[cut] = 0;
            c[n].what = "RESOURCEAVAILABILITIES missing";
            c[n].want1 = c[n].want2 = CC_ERR_PARSE;
            c[n].also = "RESOURCEAVAILABILITIES";
            n++;
        }
    }
    {   /* the PRECEDENCE RELATIONS title is missing */
        c[n].text = edit(base, "PROJECT INFORMATION", "PRECEDENCE RELATIONS:", "PRECEDENCE SOMETHING:", NULL);
        if (c[n].text) {
            c[n].what = "PRECEDENCE RELATIONS title missing";
            c[n].want1 = c[n].want2 = CC_ERR_PARSE;
            c[n].also = "PRECEDENCE";
            n++;
        }
    }
    {   /* capacities set to 1: some demand is above it */
        const char* at = strstr(base, "RESOURCEAVAILABILITIES:");
        const char* l = at ? strchr(strchr(at, '\n') + 1, '\n') + 1 : NULL;
        if (l && strchr(l, '\n')) {
            size_t pre = (size_t)(l - base);
            const char* text_caps = "    1    1    1    1";
            const char* rest = strchr(l, '\n');
            c[n].text = (char*)malloc(strlen(base) + strlen(text_caps) + 1);
            memcpy(c[n].text, base, pre);
            strcpy(c[n].text + pre, text_caps);
            strcat(c[n].text, rest);
            c[n].line = line_of(base, l);
            c[n].what = "capacities 1 1 1 1 below the demands";
            c[n].want1 = CC_ERR_CAPACITY;
            c[n].want2 = CC_ERR_PARSE;
            c[n].also = "job2";   /* the first job whose demand is too big */
            n++;
        }
    }
    {   /* a negative duration */
        c[n].text = edit(base, "REQUESTS/DURATIONS:", "\n  2      1     ", "\n  2      1    -", &c[n].line);
        if (c[n].text) {
            c[n].line++;   /* the match starts at the newline before job 2's line */
            c[n].what = "a negative duration for job 2";
            c[n].want1 = CC_ERR_PARSE;
            c[n].want2 = CC_ERR_BAD_DURATION;
            c[n].also = "job2";
            n++;
        }
    }
    c[n].text = (char*)calloc(1, 1);
    c[n].what = "an empty text";
    c[n].want1 = c[n].want2 = CC_ERR_PARSE;
    n++;

    for (i = 0; i < n; i++) {
        cc_graph* g = NULL;
        tu_alloc a;
        cc_context* cx = NULL;
        cc_context_desc cd = {0};
        cc_result r;
        memset(&a, 0, sizeof a);
        cd.allocator = tu_allocator(&a);
        cc_context_create(&cd, &cx);
        r = cc_psplib_parse(cx, c[i].text, strlen(c[i].text), "bad.sm", &g);
        CHECK(r == c[i].want1 || r == c[i].want2, "%s: %s%s%s (got %s: %s)", c[i].what, tu_res_name(c[i].want1),
              c[i].want2 != c[i].want1 ? " or " : "", c[i].want2 != c[i].want1 ? tu_res_name(c[i].want2) : "", tu_res_name(r),
              cc_last_error(cx));
        CHECK(g == NULL, "%s: no graph on failure", c[i].what);
        CHECK_CONTAINS(cc_last_error(cx), "bad.sm", "%s: message names the input", c[i].what);
        if (c[i].line)
            CHECK(tu_has_number(cc_last_error(cx), c[i].line) || (c[i].also && strstr(cc_last_error(cx), c[i].also)),
                  "%s: message names line %d%s%s: \"%s\"", c[i].what, c[i].line, c[i].also ? " or " : "", c[i].also ? c[i].also : "",
                  cc_last_error(cx));
        else if (c[i].also)
            CHECK_CONTAINS(cc_last_error(cx), c[i].also, "%s: message names what is missing", c[i].what);
        if (g) cc_graph_destroy(g);
        cc_context_destroy(cx);
        CHECK(a.live == 0 && a.bad_frees == 0, "%s: nothing leaks (%ld blocks live, %ld bad frees)", c[i].what, a.live, a.bad_frees);
        free(c[i].text);
    }
    CHECK_RES(ctx, cc_psplib_parse(ctx, NULL, 10, "null.sm", NULL), CC_ERR_INVALID_ARG, "NULL text and out");
    free(generated);
}

/* ---- write and read back ----------------------------------------------------*/
static void test_round_trip(void) {
    tu_rng rng = {17};
    int trial, n_diff = 0;
    char path[600];
    snprintf(path, sizeof path, "%s/round_trip.sm", tu_tmp_dir());
    for (trial = 0; trial < 20; trial++) {
        tu_gen gen = {1, 25, 1, 4, 0, 8, 9, 1.0, 0.3, 0.1};
        tu_inst* in;
        tu_inst* expect;
        cc_graph* g = NULL;
        cc_graph* back = NULL;
        int i, j, r, n;
        double unit = trial % 4 == 3 ? 0.5 : 1.0;
        cc_result res;
        gen.streams = trial % 3 == 2;
        gen.unit_us = unit;
        in = tu_random_inst(&rng, &gen);
        n = in->n;
        if (tu_build_graph(ctx, in, &g) != CC_OK) { n_diff++; tu_inst_free(in); continue; }
        res = cc_psplib_write(ctx, g, path, unit);
        if (res != CC_OK) {
            if (n_diff++ < 3) NOTE("trial %d: cc_psplib_write: %s", trial, cc_last_error(ctx));
            goto next;
        }
        res = cc_psplib_read(ctx, path, &back);
        if (res != CC_OK) {
            if (n_diff++ < 3) NOTE("trial %d: reading back: %s", trial, cc_last_error(ctx));
            goto next;
        }
        /* expected: source job1, ops as job2..job n+1 with durations in units, sink */
        expect = tu_inst_new(n + 2, in->k, 0);
        for (r = 0; r < in->k; r++) expect->cap[r] = in->cap[r];
        for (i = 0; i < n; i++) {
            int has_pred = 0, has_succ = 0;
            expect->dur[i + 1] = in->dur[i] / unit;
            for (r = 0; r < in->k; r++) expect->dem[(i + 1) * in->k + r] = in->dem[i * in->k + r];
            for (j = 0; j < n; j++) {
                if (in->adj[j * n + i]) has_pred = 1;
                if (in->adj[i * n + j]) { has_succ = 1; expect->adj[(i + 1) * (n + 2) + j + 1] = 1; }
            }
            /* the source precedes every op without predecessors, the sink follows every op without successors */
            if (!has_pred) expect->adj[0 * (n + 2) + i + 1] = 1;
            if (!has_succ) expect->adj[(i + 1) * (n + 2) + n + 1] = 1;
        }
        {
            char what[64];
            int d;
            snprintf(what, sizeof what, "round trip %d (n=%d%s, unit %g)", trial, n, in->streams ? ", streams" : "", unit);
            d = compare(back, expect, 1, what);
            n_diff += d;
        }
        tu_inst_free(expect);
    next:
        cc_graph_destroy(back);
        cc_graph_destroy(g);
        tu_inst_free(in);
    }
    CHECK_INT(n_diff, 0, "20 random graphs written and read back: same durations (in units), demands, precedence, "
              "source and sink around them");
    {
        cc_graph* g = NULL;
        cc_graph_create(ctx, NULL, &g);
        CHECK_RES(ctx, cc_psplib_write(ctx, g, path, 0.0), CC_ERR_INVALID_ARG, "unit_us 0 is refused");
        CHECK_RES(ctx, cc_psplib_write(ctx, g, "/nonexistent-dir/x.sm", 1.0), CC_ERR_IO, "writing into a missing folder");
        CHECK_CONTAINS(cc_last_error(ctx), "/nonexistent-dir/x.sm", "the message names the path");
        cc_graph_destroy(g);
    }
    {   /* written over an older file: the new one replaces it whole (a temporary renamed over it) */
        cc_graph* g = NULL;
        cc_graph* back = NULL;
        FILE* f = fopen(path, "wb");
        int ok_old = f && fputs("old contents, not a PSPLIB file\n", f) >= 0;
        int cap1 = 1;
        cc_graph_desc gd;
        memset(&gd, 0, sizeof gd);
        gd.n_resources = 1;
        gd.capacities = &cap1;
        if (f) fclose(f);
        cc_graph_create(ctx, &gd, &g);
        CHECK(ok_old, "an older file is there");
        CHECK_RES(ctx, cc_psplib_write(ctx, g, path, 1.0), CC_OK, "written over it");
        CHECK_RES(ctx, cc_psplib_read(ctx, path, &back), CC_OK, "what is there now reads back");
        CHECK_INT(back ? cc_graph_n_ops(back) : -1, 2, "as the empty graph's source and sink");
        cc_graph_destroy(back);
        cc_graph_destroy(g);
    }
    if (sample_text) {
        /* the sample itself: read, write, read: the graph gains a source and a sink, nothing else changes */
        cc_graph* g = NULL;
        cc_graph* back = NULL;
        tu_inst* ref = tu_sm_parse(sample_text);
        if (ref && cc_psplib_read(ctx, sample_path, &g) == CC_OK && cc_psplib_write(ctx, g, path, 1.0) == CC_OK &&
            cc_psplib_read(ctx, path, &back) == CC_OK) {
            char* text = tu_read_file(path, NULL);
            tu_inst* again = text ? tu_sm_parse(text) : NULL;
            CHECK(again != NULL, "the test's own reader understands what cc_psplib_write wrote");
            if (again) CHECK_INT(compare(back, again, 1, "j301_1 written"), 0, "j301_1 read back agrees with the written file");
            CHECK_INT(cc_graph_n_ops(back), 34, "j301_1 written and read back: 32 jobs + a new source and sink");
            tu_inst_free(again);
            free(text);
        } else {
            CHECK(0, "j301_1 read, write, read: %s", cc_last_error(ctx));
        }
        tu_inst_free(ref);
        cc_graph_destroy(g);
        cc_graph_destroy(back);
    }
}

/* A graph of 2000 independent ops is written with a source job of 2000
   successors on one line; the reader takes it back whole (2002 jobs, the
   ops' durations in order). */
static void test_wide_line(void) {
    char path[600];
    cc_graph* g = NULL;
    cc_graph* back = NULL;
    int i, same = 1;
    cc_result r;
    snprintf(path, sizeof path, "%s/wide.sm", tu_tmp_dir());
    r = cc_graph_create(ctx, NULL, &g);
    for (i = 0; i < 2000 && r == CC_OK; i++) {
        cc_op_desc d = {0};
        d.duration_us = 1 + i % 7;
        d.stream = i % 2;
        r = cc_graph_add_op(g, &d, NULL);
    }
    if (r == CC_OK) r = cc_psplib_write(ctx, g, path, 1.0);
    if (r == CC_OK) r = cc_psplib_read(ctx, path, &back);
    CHECK_RES(ctx, r, CC_OK, "2000 independent ops written and read back (a line of 2000 successors)");
    CHECK(back && cc_graph_n_ops(back) == 2002, "2002 jobs read back (%d)", back ? cc_graph_n_ops(back) : -1);
    for (i = 0; back && i < 2000 && i + 1 < cc_graph_n_ops(back); i++)
        if (cc_op_duration_us(back, cc_graph_op(back, i + 1)) != 1 + i % 7) same = 0;
    CHECK(same, "every op's duration is back in its place");
    cc_graph_destroy(g);
    cc_graph_destroy(back);
}

/* ---- truncated texts -----------------------------------------------------
   j301_1.sm cut at every byte: each cut is refused with a syntax error that
   names the file and a byte offset, and gives no graph; or, where the cut
   falls after the resource capacities line's newline (only the closing
   asterisks are lost), it reads as the whole file does (the reference: the
   test's own reader of the whole file). */
static void test_truncated(void) {
    tu_inst* ref;
    const char* caps;
    size_t complete, cut;
    int n_bad = 0, n_refused = 0, n_read = 0;
    if (!sample_text) { SKIP("%s not found (the repository is expected beside shared/)", sample_path); return; }
    ref = tu_sm_parse(sample_text);
    caps = strstr(sample_text, "RESOURCEAVAILABILITIES");
    if (!CHECK(ref != NULL && caps != NULL, "the test's own reader understands %s", sample_path)) { tu_inst_free(ref); return; }
    /* the capacities are the line after the 'R 1  R 2 ...' header: the file is complete after that line's newline */
    caps = strchr(caps, '\n');
    caps = caps ? strchr(caps + 1, '\n') : NULL;
    caps = caps ? strchr(caps + 1, '\n') : NULL;
    if (!CHECK(caps != NULL, "the sample has a capacities line")) { tu_inst_free(ref); return; }
    complete = (size_t)(caps - sample_text) + 1;
    for (cut = 0; cut <= sample_len; cut++) {
        cc_graph* g = NULL;
        cc_result r = cc_psplib_parse(ctx, sample_text, cut, "cut.sm", &g);
        if (r == CC_OK) {
            n_read++;
            if (cut < complete) { if (n_bad++ < 3) NOTE("cut at %lu of %lu reads as a graph", (unsigned long)cut, (unsigned long)sample_len); }
            else if (compare(g, ref, 1, "cut") != 0) n_bad++;
            cc_graph_destroy(g);
            continue;
        }
        n_refused++;
        if (cut >= complete || g != NULL || r != CC_ERR_PARSE || !strstr(cc_last_error(ctx), "cut.sm") ||
            !strstr(cc_last_error(ctx), "byte")) {
            if (n_bad++ < 3) NOTE("cut at %lu: %s (%s)", (unsigned long)cut, cc_result_description(r), cc_last_error(ctx));
        }
    }
    CHECK_INT(n_bad, 0, "%lu cuts of j301_1.sm: %d refused naming the file and a byte offset, %d (after the last "
              "line that holds numbers) read as the whole file", (unsigned long)sample_len + 1, n_refused, n_read);
    {
        cc_graph* g = NULL;
        CHECK_RES(ctx, cc_psplib_parse(ctx, sample_text, complete - 1, "cut.sm", &g), CC_ERR_PARSE,
                  "a text that ends in its last capacity without a newline is refused (the number may be cut short)");
        CHECK_CONTAINS(cc_last_error(ctx), "truncated", "the message says the file may be truncated");
    }
    tu_inst_free(ref);
}

int main(void) {
    if (cc_context_create(NULL, &ctx) != CC_OK) { CHECK(0, "context"); return th_done(); }
    snprintf(sample_path, sizeof sample_path, "%s/psplib/samples/j301_1.sm", tu_data_dir());
    sample_text = tu_read_file(sample_path, &sample_len);
    TH_RUN(test_read_sample);
    TH_RUN(test_malformed);
    TH_RUN(test_round_trip);
    TH_RUN(test_wide_line);
    TH_RUN(test_truncated);
    free(sample_text);
    cc_context_destroy(ctx);
    return th_done();
}
