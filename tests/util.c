/* tests/util.c - see util.h. Plain C99 plus POSIX for files and dup2. */
#define _POSIX_C_SOURCE 200809L
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- results ------------------------------------------------------------*/
const char* tu_res_name(cc_result r) {
    switch (r) {
#define TU__NAME(name, value, text) case name: return #name;
        CONCERTO__RESULTS(TU__NAME)
#undef TU__NAME
        default: return "(unknown cc_result)";
    }
}

/* ---- paths ----------------------------------------------------------------*/
const char* tu_data_dir(void) {
    const char* d = getenv("CONCERTO_DATA");
    return d && d[0] ? d : "../shared/data";
}

const char* tu_tmp_dir(void) {
    const char* d = getenv("TEST_TMPDIR");
    if (!d || !d[0]) d = "build/tmp";
    mkdir("build", 0777);
    mkdir(d, 0777);
    return d;
}

char* tu_read_file(const char* path, size_t* n_bytes) {
    FILE* f = fopen(path, "rb");
    char* buf = NULL;
    size_t n = 0, cap = 0;
    if (!f) return NULL;
    for (;;) {
        size_t got;
        if (cap - n < 4096) {
            char* nb = (char*)realloc(buf, cap * 2 + 8192);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
            cap = cap * 2 + 8192;
        }
        got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    fclose(f);
    buf[n] = 0;
    if (n_bytes) *n_bytes = n;
    return buf;
}

/* ---- random numbers -------------------------------------------------------*/
uint64_t tu_rand(tu_rng* r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
int tu_randint(tu_rng* r, int lo, int hi) { return lo + (int)(tu_rand(r) % (uint64_t)(hi - lo + 1)); }
double tu_unit(tu_rng* r) { return (double)(tu_rand(r) >> 11) * (1.0 / 9007199254740992.0); }

/* ---- instances ------------------------------------------------------------*/
tu_inst* tu_inst_new(int n, int k, int streams) {
    tu_inst* in = (tu_inst*)calloc(1, sizeof *in);
    int i;
    in->n = n;
    in->k = k;
    in->streams = streams;
    in->stream = (int*)calloc((size_t)n + 1, sizeof(int));
    in->dur = (double*)calloc((size_t)n + 1, sizeof(double));
    in->dem = (int*)calloc((size_t)n * (size_t)k + 1, sizeof(int));
    in->adj = (unsigned char*)calloc((size_t)n * (size_t)n + 1, 1);
    for (i = 0; i < n; i++) in->stream[i] = -1;
    for (i = 0; i < k && i < TU_MAXK; i++) in->cap[i] = 1;
    return in;
}

void tu_inst_free(tu_inst* in) {
    if (!in) return;
    free(in->stream);
    free(in->dur);
    free(in->dem);
    free(in->adj);
    free(in);
}

void tu_set_stream(tu_inst* in, int i, int s) {
    int r;
    in->stream[i] = s;
    for (r = 0; r < in->k; r++) in->dem[i * in->k + r] = (r == s);
}

tu_inst* tu_random_inst(tu_rng* r, const tu_gen* g) {
    int n = tu_randint(r, g->n_min, g->n_max);
    int k = tu_randint(r, g->k_min, g->k_max);
    tu_inst* in = tu_inst_new(n, k, g->streams);
    double p = tu_unit(r) * g->p_edge_max;
    int* perm = (int*)malloc(sizeof(int) * (size_t)(n + 1));
    int i, j, res;
    for (i = 0; i < n; i++) perm[i] = i;
    for (i = n - 1; i > 0; i--) {
        int t, x = tu_randint(r, 0, i);
        t = perm[i]; perm[i] = perm[x]; perm[x] = t;
    }
    if (!g->streams)
        for (res = 0; res < k; res++) in->cap[res] = tu_randint(r, 1, g->cap_max);
    for (i = 0; i < n; i++) {
        int d = tu_randint(r, 1, g->dur_max);
        if (tu_randint(r, 0, 19) == 0) d = 0;
        in->dur[i] = d * g->unit_us;
        if (g->streams) {
            tu_set_stream(in, i, tu_unit(r) < g->p_no_stream ? -1 : tu_randint(r, 0, k - 1));
        } else {
            for (res = 0; res < k; res++)
                in->dem[i * k + res] = tu_randint(r, 0, 9) < 4 ? 0 : tu_randint(r, 1, in->cap[res]);
        }
    }
    /* perm[0] comes first in the topological order */
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (tu_unit(r) < p) in->adj[perm[i] * n + perm[j]] = 1;
    free(perm);
    return in;
}

cc_result tu_build_graph(cc_context* ctx, const tu_inst* in, cc_graph** out) {
    cc_graph_desc gd = {0};
    cc_graph* g = NULL;
    cc_op* ops = (cc_op*)calloc((size_t)in->n + 1, sizeof(cc_op));
    cc_op* deps = (cc_op*)calloc((size_t)in->n + 1, sizeof(cc_op));
    cc_result res;
    int i, j;
    *out = NULL;
    if (in->streams) {
        gd.n_streams = in->k;
    } else {
        gd.n_resources = in->k;
        gd.capacities = in->cap;
    }
    res = cc_graph_create(ctx, &gd, &g);
    for (i = 0; res == CC_OK && i < in->n; i++) {
        cc_op_desc d = {0};
        char name[32];
        int nd = 0;
        snprintf(name, sizeof name, "j%d", i);
        d.name = name;
        d.duration_us = in->dur[i];
        if (in->streams) d.stream = in->stream[i];
        else d.demands = in->dem + (size_t)i * (size_t)in->k;
        for (j = 0; j < i; j++)
            if (in->adj[j * in->n + i]) deps[nd++] = ops[j];
        d.deps = deps;
        d.n_deps = nd;
        res = cc_graph_add_op(g, &d, &ops[i]);
    }
    for (i = 0; res == CC_OK && i < in->n; i++)
        for (j = i + 1; res == CC_OK && j < in->n; j++)
            if (in->adj[j * in->n + i]) res = cc_graph_add_dep(g, ops[j], ops[i]);
    free(ops);
    free(deps);
    if (res != CC_OK) {
        cc_graph_destroy(g);
        return res;
    }
    *out = g;
    return CC_OK;
}

/* ---- checker --------------------------------------------------------------*/
#define TU_EPS 1e-7

int tu_check(const tu_inst* in, const double* s, double* makespan_us, char* msg, size_t n_msg) {
    int n = in->n, k = in->k, i, j, r;
    double mk = 0;
    if (msg && n_msg) msg[0] = 0;
    for (i = 0; i < n; i++) {
        if (!(s[i] >= -TU_EPS) || !isfinite(s[i])) {
            if (msg) snprintf(msg, n_msg, "j%d starts at %g", i, s[i]);
            return 0;
        }
        if (s[i] + in->dur[i] > mk) mk = s[i] + in->dur[i];
    }
    if (makespan_us) *makespan_us = mk;
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            if (in->adj[i * n + j] && s[j] < s[i] + in->dur[i] - TU_EPS) {
                if (msg) snprintf(msg, n_msg, "j%d starts at %g before its predecessor j%d ends at %g",
                                  j, s[j], i, s[i] + in->dur[i]);
                return 0;
            }
    /* the load can only rise at a start time */
    for (i = 0; i < n; i++) {
        double t = s[i];
        if (in->dur[i] <= 0) continue;
        for (r = 0; r < k; r++) {
            int load = 0;
            for (j = 0; j < n; j++)
                if (in->dur[j] > 0 && s[j] <= t + TU_EPS && t < s[j] + in->dur[j] - TU_EPS)
                    load += in->dem[j * k + r];
            if (load > in->cap[r]) {
                if (msg) snprintf(msg, n_msg, "resource %d holds %d > capacity %d at t=%g (j%d starts)",
                                  r, load, in->cap[r], t, i);
                return 0;
            }
        }
    }
    return 1;
}

/* Longest path; tail[i] = dur[i] + longest tail of a successor. */
static void tu__tails(const tu_inst* in, double* tail) {
    int n = in->n, i, j, changed = 1, pass = 0;
    for (i = 0; i < n; i++) tail[i] = in->dur[i];
    while (changed && pass++ <= n) {   /* Bellman-Ford; a DAG settles in n passes */
        changed = 0;
        for (i = 0; i < n; i++)
            for (j = 0; j < n; j++)
                if (in->adj[i * n + j] && in->dur[i] + tail[j] > tail[i]) {
                    tail[i] = in->dur[i] + tail[j];
                    changed = 1;
                }
    }
}

double tu_critical_path(const tu_inst* in) {
    double* tail = (double*)malloc(sizeof(double) * (size_t)(in->n + 1));
    double best = 0;
    int i;
    tu__tails(in, tail);
    for (i = 0; i < in->n; i++) if (tail[i] > best) best = tail[i];
    free(tail);
    return best;
}

double tu_resource_bound(const tu_inst* in) {
    double best = 0;
    int i, r;
    for (r = 0; r < in->k; r++) {
        double load = 0;
        for (i = 0; i < in->n; i++) load += in->dur[i] * in->dem[i * in->k + r];
        if (in->cap[r] > 0 && load / in->cap[r] > best) best = load / in->cap[r];
    }
    return best;
}

/* ---- brute force ----------------------------------------------------------*/
typedef struct tu__bf {
    int n, k, horizon;
    const tu_inst* in;
    int* d;          /* integer durations */
    int* tail;       /* integer tails */
    int* prof;       /* [horizon * k] resource use per time unit */
    int* fin;        /* finish of scheduled ops, -1 if not yet */
    int best;
    long nodes;
} tu__bf;

static int tu__bf_fits(const tu__bf* b, int i, int t) {
    int u, r, k = b->k;
    for (u = t; u < t + b->d[i]; u++)
        for (r = 0; r < k; r++)
            if (b->prof[u * k + r] + b->in->dem[i * k + r] > b->in->cap[r]) return 0;
    return 1;
}

static void tu__bf_add(tu__bf* b, int i, int t, int sign) {
    int u, r, k = b->k;
    for (u = t; u < t + b->d[i]; u++)
        for (r = 0; r < k; r++) b->prof[u * k + r] += sign * b->in->dem[i * k + r];
}

static void tu__bf_dfs(tu__bf* b, int depth, int cur_max) {
    int n = b->n, i, j, lb = cur_max;
    int est[TU_BRUTE_MAXN];
    b->nodes++;
    if (depth == n) {
        if (cur_max < b->best) b->best = cur_max;
        return;
    }
    for (i = 0; i < n; i++) {
        est[i] = -1;
        if (b->fin[i] >= 0) continue;
        est[i] = 0;
        for (j = 0; j < n; j++)
            if (b->in->adj[j * n + i]) {
                if (b->fin[j] < 0) { est[i] = -1; break; }
                if (b->fin[j] > est[i]) est[i] = b->fin[j];
            }
        if (est[i] >= 0 && est[i] + b->tail[i] > lb) lb = est[i] + b->tail[i];
    }
    if (lb < b->best) {
        for (i = 0; i < n; i++) {
            int t;
            if (est[i] < 0) continue;
            t = est[i];
            while (!tu__bf_fits(b, i, t)) t++;
            tu__bf_add(b, i, t, +1);
            b->fin[i] = t + b->d[i];
            if ((b->fin[i] > cur_max ? b->fin[i] : cur_max) < b->best)
                tu__bf_dfs(b, depth + 1, b->fin[i] > cur_max ? b->fin[i] : cur_max);
            b->fin[i] = -1;
            tu__bf_add(b, i, t, -1);
        }
    }
}

double tu_brute_force(const tu_inst* in, double unit_us, long* n_nodes) {
    tu__bf b;
    double* tl = (double*)malloc(sizeof(double) * (size_t)(in->n + 1));
    int i, sum = 0;
    if (in->n > TU_BRUTE_MAXN) { free(tl); return -1; }
    memset(&b, 0, sizeof b);
    b.n = in->n;
    b.k = in->k;
    b.in = in;
    b.d = (int*)malloc(sizeof(int) * (size_t)(in->n + 1));
    b.tail = (int*)malloc(sizeof(int) * (size_t)(in->n + 1));
    b.fin = (int*)malloc(sizeof(int) * (size_t)(in->n + 1));
    tu__tails(in, tl);
    for (i = 0; i < in->n; i++) {
        b.d[i] = (int)lround(in->dur[i] / unit_us);
        b.tail[i] = (int)lround(tl[i] / unit_us);
        b.fin[i] = -1;
        sum += b.d[i];
    }
    b.horizon = sum + 1;
    b.prof = (int*)calloc((size_t)b.horizon * (size_t)(in->k ? in->k : 1), sizeof(int));
    b.best = sum + 1;
    tu__bf_dfs(&b, 0, 0);
    if (n_nodes) *n_nodes = b.nodes;
    free(tl);
    free(b.d);
    free(b.tail);
    free(b.fin);
    free(b.prof);
    return b.best * unit_us;
}

/* ---- stream simulator -----------------------------------------------------*/
int tu_simulate(const tu_inst* in, const int* issue, double* start, double* makespan_us) {
    int n = in->n, k = in->k, i, j, done_count = 0;
    int* done = (int*)calloc((size_t)n + 1, sizeof(int));
    int* pos = (int*)calloc((size_t)k + 1, sizeof(int));       /* next issue position per stream */
    double* free_at = (double*)calloc((size_t)k + 1, sizeof(double));
    double* fin = (double*)calloc((size_t)n + 1, sizeof(double));
    double mk = 0;
    int rc = 0;
    while (done_count < n) {
        int progress = 0;
        for (j = 0; j < n; j++) {
            int op = issue[j], s = in->stream[op], ready = 1;
            double t = 0;
            if (done[op]) continue;
            if (s >= 0) {   /* the head of its stream: every earlier op of the stream is done */
                for (i = 0; i < j; i++)
                    if (in->stream[issue[i]] == s && !done[issue[i]]) { ready = 0; break; }
                if (!ready) continue;
                t = free_at[s];
            }
            for (i = 0; i < n && ready; i++)
                if (in->adj[i * n + op]) {
                    if (!done[i]) ready = 0;
                    else if (fin[i] > t) t = fin[i];
                }
            if (!ready) continue;
            done[op] = 1;
            done_count++;
            progress = 1;
            if (start) start[op] = t;
            fin[op] = t + in->dur[op];
            if (s >= 0) free_at[s] = fin[op];
            if (fin[op] > mk) mk = fin[op];
        }
        if (!progress) { rc = -1; break; }
    }
    if (makespan_us) *makespan_us = mk;
    free(done);
    free(pos);
    free(free_at);
    free(fin);
    return rc;
}

/* ---- PSPLIB ---------------------------------------------------------------*/
static const char* tu__next_line(const char* p) {
    p = strchr(p, '\n');
    return p ? p + 1 : NULL;
}

tu_inst* tu_sm_parse(const char* text) {
    const char* p;
    char* e;
    long n, k, i, r;
    tu_inst* in;
    if (!(p = strstr(text, "jobs (incl. supersource/sink ):"))) return NULL;
    n = strtol(strchr(p, ':') + 1, NULL, 10);
    if (!(p = strstr(text, "- renewable"))) return NULL;
    k = strtol(strchr(p, ':') + 1, NULL, 10);
    if (n < 2 || n > 100000 || k < 0 || k > TU_MAXK) return NULL;
    in = tu_inst_new((int)n, (int)k, 0);
    if (!(p = strstr(text, "PRECEDENCE RELATIONS:")) || !(p = tu__next_line(p)) || !(p = tu__next_line(p))) goto bad;
    for (i = 0; i < n; i++) {
        long id = strtol(p, &e, 10), modes, ns, s;
        modes = strtol(e, &e, 10);
        ns = strtol(e, &e, 10);
        (void)modes;
        if (id != i + 1) goto bad;
        while (ns-- > 0) {
            s = strtol(e, &e, 10);
            if (s < 1 || s > n) goto bad;
            in->adj[i * n + (s - 1)] = 1;
        }
        if (!(p = tu__next_line(e))) goto bad;
    }
    if (!(p = strstr(p, "REQUESTS/DURATIONS:")) || !(p = tu__next_line(p)) || !(p = tu__next_line(p)) ||
        !(p = tu__next_line(p)))
        goto bad;
    for (i = 0; i < n; i++) {
        long id = strtol(p, &e, 10);
        if (id != i + 1) goto bad;
        (void)strtol(e, &e, 10);   /* mode */
        in->dur[i] = (double)strtol(e, &e, 10);
        for (r = 0; r < k; r++) in->dem[i * k + r] = (int)strtol(e, &e, 10);
        if (!(p = tu__next_line(e))) goto bad;
    }
    if (!(p = strstr(p, "RESOURCEAVAILABILITIES:")) || !(p = tu__next_line(p)) || !(p = tu__next_line(p))) goto bad;
    for (r = 0; r < k; r++) in->cap[r] = (int)strtol(p, (char**)&p, 10);
    return in;
bad:
    tu_inst_free(in);
    return NULL;
}

char* tu_sm_format(const tu_inst* in) {
    size_t cap = 4096 + (size_t)in->n * (size_t)(in->n + in->k + 8) * 8;
    char* s = (char*)malloc(cap);
    size_t o = 0;
    int n = in->n, k = in->k, i, j, r;
    double horizon = 0;
    for (i = 0; i < n; i++) horizon += in->dur[i];
#define TU__P(...) (o += (size_t)snprintf(s + o, cap - o, __VA_ARGS__))
    TU__P("************************************************************************\n");
    TU__P("file with basedata            : test.bas\n");
    TU__P("initial value random generator: 1\n");
    TU__P("************************************************************************\n");
    TU__P("projects                      :  1\n");
    TU__P("jobs (incl. supersource/sink ):  %d\n", n);
    TU__P("horizon                       :  %d\n", (int)horizon);
    TU__P("RESOURCES\n");
    TU__P("  - renewable                 :  %d   R\n", k);
    TU__P("  - nonrenewable              :  0   N\n");
    TU__P("  - doubly constrained        :  0   D\n");
    TU__P("************************************************************************\n");
    TU__P("PROJECT INFORMATION:\n");
    TU__P("pronr.  #jobs rel.date duedate tardcost  MPM-Time\n");
    TU__P("    1     %d      0       %d       0       %d\n", n - 2, (int)tu_critical_path(in), (int)tu_critical_path(in));
    TU__P("************************************************************************\n");
    TU__P("PRECEDENCE RELATIONS:\n");
    TU__P("jobnr.    #modes  #successors   successors\n");
    for (i = 0; i < n; i++) {
        int ns = 0;
        for (j = 0; j < n; j++) ns += in->adj[i * n + j];
        TU__P("%4d        1          %d       ", i + 1, ns);
        for (j = 0; j < n; j++) if (in->adj[i * n + j]) TU__P("    %d", j + 1);
        TU__P("\n");
    }
    TU__P("************************************************************************\n");
    TU__P("REQUESTS/DURATIONS:\n");
    TU__P("jobnr. mode duration ");
    for (r = 0; r < k; r++) TU__P(" R %d", r + 1);
    TU__P("\n------------------------------------------------------------------------\n");
    for (i = 0; i < n; i++) {
        TU__P("%3d      1 %5d   ", i + 1, (int)in->dur[i]);
        for (r = 0; r < k; r++) TU__P("%5d", in->dem[i * k + r]);
        TU__P("\n");
    }
    TU__P("************************************************************************\n");
    TU__P("RESOURCEAVAILABILITIES:\n");
    for (r = 0; r < k; r++) TU__P("  R %d", r + 1);
    TU__P("\n");
    for (r = 0; r < k; r++) TU__P("  %3d", in->cap[r]);
    TU__P("\n************************************************************************\n");
#undef TU__P
    return s;
}

/* ---- allocator ------------------------------------------------------------*/
#define TU__MAGIC 0x5a17c0de5a17c0deull
typedef union tu__hdr { struct { uint64_t magic; size_t n; } h; long double align_ld; void* align_p; } tu__hdr;

static int tu__refuse(tu_alloc* a) {
    a->n_calls++;
    if (a->fail_at > 0 && (a->n_calls == a->fail_at || (a->fail_after && a->n_calls > a->fail_at))) {
        a->n_failed++;
        return 1;
    }
    return 0;
}

static void* tu__alloc(size_t n, void* ud) {
    tu_alloc* a = (tu_alloc*)ud;
    tu__hdr* h;
    if (tu__refuse(a)) return NULL;
    h = (tu__hdr*)malloc(sizeof *h + n);
    if (!h) return NULL;
    h->h.magic = TU__MAGIC;
    h->h.n = n;
    a->live++;
    return h + 1;
}

static void tu__free(void* p, void* ud) {
    tu_alloc* a = (tu_alloc*)ud;
    tu__hdr* h;
    if (!p) return;
    h = (tu__hdr*)p - 1;
    if (h->h.magic != TU__MAGIC) { a->bad_frees++; return; }
    h->h.magic = 0;
    a->live--;
    free(h);
}

static void* tu__realloc(void* p, size_t n, void* ud) {
    tu_alloc* a = (tu_alloc*)ud;
    tu__hdr* h;
    tu__hdr* nh;
    if (!p) return tu__alloc(n, ud);
    h = (tu__hdr*)p - 1;
    if (h->h.magic != TU__MAGIC) { a->bad_frees++; return NULL; }
    if (tu__refuse(a)) return NULL;
    nh = (tu__hdr*)realloc(h, sizeof *h + n);
    if (!nh) return NULL;
    nh->h.n = n;
    return nh + 1;
}

cc_allocator tu_allocator(tu_alloc* a) {
    cc_allocator al;
    al.alloc_fn = tu__alloc;
    al.realloc_fn = tu__realloc;
    al.free_fn = tu__free;
    al.user_data = a;
    return al;
}

/* ---- capture --------------------------------------------------------------*/
int tu_capture_begin(tu_capture* c) {
    int fd;
    snprintf(c->path, sizeof c->path, "%s/capture_%ld.txt", tu_tmp_dir(), (long)getpid());
    fflush(stdout);
    fflush(stderr);
    fd = open(c->path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0) return -1;
    c->saved_out = dup(1);
    c->saved_err = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    close(fd);
    return 0;
}

long tu_capture_end(tu_capture* c, char* head, size_t n_head) {
    size_t n = 0;
    char* text;
    fflush(stdout);
    fflush(stderr);
    dup2(c->saved_out, 1);
    dup2(c->saved_err, 2);
    close(c->saved_out);
    close(c->saved_err);
    text = tu_read_file(c->path, &n);
    if (head && n_head) {
        snprintf(head, n_head, "%s", text ? text : "");
    }
    free(text);
    remove(c->path);
    return (long)n;
}

int tu_bound_ub(const char* csv, const char* instance) {
    char key[64];
    const char* p;
    int col;
    snprintf(key, sizeof key, "\n%s,", instance);
    p = strstr(csv, key);
    if (!p) return -1;
    p += 1;
    /* instance,jobs,renewable,cpm_lb,lb,lb_source,ub,optimal */
    for (col = 0; col < 6; col++) {
        p = strchr(p, ',');
        if (!p) return -1;
        p++;
    }
    return atoi(p);
}

int tu_has_number(const char* msg, int num) {
    char buf[24];
    const char* p = msg;
    size_t len;
    snprintf(buf, sizeof buf, "%d", num);
    len = strlen(buf);
    while ((p = strstr(p, buf)) != NULL) {
        if ((p == msg || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[len])) return 1;
        p += len;
    }
    return 0;
}

uint64_t tu_graph_fingerprint(cc_graph* g) {
    uint64_t h = 1469598103934665603ull;
    int i, r;
    for (i = 0; i < cc_graph_n_ops(g); i++) {
        cc_op op = cc_graph_op(g, i);
        const char* s = cc_op_name(g, op);
        for (; *s; s++) { h ^= (unsigned char)*s; h *= 1099511628211ull; }
        h ^= (uint64_t)llround(cc_op_duration_us(g, op) * 1000.0); h *= 1099511628211ull;
        for (r = 0; r < cc_graph_n_resources(g); r++) { h ^= (uint64_t)cc_op_demand(g, op, r); h *= 1099511628211ull; }
    }
    return h;
}

int tu_count_on(cc_graph* g, int r) {
    int i, n = 0;
    for (i = 0; i < cc_graph_n_ops(g); i++) n += cc_op_demand(g, cc_graph_op(g, i), r) == 1;
    return n;
}

cc_result tu_run_step(cc_rank* rank, cc_graph* g, const cc_op* order) { return tu_run_step_with(rank, g, order, NULL, NULL); }

cc_result tu_run_step_with(cc_rank* rank, cc_graph* g, const cc_op* order, void (*before)(cc_exec*, cc_graph*, void*), void* user) {
    cc_context* ctx = cc_rank_context(rank);
    cc_plan* pl = NULL;
    cc_exec* x = NULL;
    cc_backend be;
    cc_result r;
    int have_be = 0;
    r = cc_plan_create(ctx, g, order, &pl);
    if (r == CC_OK && (r = cc_cpu_backend_create(rank, &be)) == CC_OK) have_be = 1;
    if (r == CC_OK) r = cc_exec_create(ctx, pl, &be, &x);
    if (r == CC_OK) r = cc_exec_agree(x, cc_rank_world_comm(rank));
    if (r == CC_OK && before) before(x, g, user);
    if (r == CC_OK) r = cc_exec_step(x);
    cc_exec_destroy(x);
    if (have_be) cc_backend_destroy(&be);
    cc_plan_destroy(pl);
    return r;
}

void tu_run_world(int n_ranks, cc_result (*fn)(cc_rank*, void*), void* arg, cc_result* rc, char* err, size_t n_err) {
    cc_world_desc wd = {0};
    cc_world* w = NULL;
    cc_context* ctx = NULL;
    wd.n_ranks = n_ranks;
    *rc = cc_context_create(NULL, &ctx);
    if (*rc != CC_OK) { snprintf(err, n_err, "cc_context_create failed"); return; }
    *rc = cc_world_create(ctx, &wd, &w);
    if (*rc != CC_OK) { snprintf(err, n_err, "%s", cc_last_error(ctx)); cc_context_destroy(ctx); return; }
    *rc = cc_world_run(w, fn, arg);
    snprintf(err, n_err, "%s", cc_world_error(w));
    cc_world_destroy(w);
    cc_context_destroy(ctx);
}

int tu_same_schedule(const cc_schedule* a, const cc_sched_stats* sa, const cc_schedule* b, const cc_sched_stats* sb,
                     char* why, size_t n_why) {
    int i;
    if (a->n_ops != b->n_ops) { snprintf(why, n_why, "n_ops %d vs %d", a->n_ops, b->n_ops); return 0; }
    for (i = 0; i < a->n_ops; i++) {
        if (a->start_us[i] != b->start_us[i]) {
            snprintf(why, n_why, "op %d starts at %.17g vs %.17g", i, a->start_us[i], b->start_us[i]);
            return 0;
        }
        if (a->order[i].id != b->order[i].id) { snprintf(why, n_why, "order[%d] differs", i); return 0; }
    }
    if (a->makespan_us != b->makespan_us || a->lower_bound_us != b->lower_bound_us ||
        a->proven_optimal != b->proven_optimal || sa->n_schedules != sb->n_schedules || sa->n_nodes != sb->n_nodes ||
        sa->n_conflicts != sb->n_conflicts || sa->n_windows != sb->n_windows || sa->n_windows_proven != sb->n_windows_proven) {
        snprintf(why, n_why, "makespan %g/%g, bound %g/%g, proven %d/%d, schedules %lld/%lld, nodes %lld/%lld, "
                 "conflicts %lld/%lld, windows %lld/%lld",
                 a->makespan_us, b->makespan_us, a->lower_bound_us, b->lower_bound_us, a->proven_optimal, b->proven_optimal,
                 (long long)sa->n_schedules, (long long)sb->n_schedules, (long long)sa->n_nodes, (long long)sb->n_nodes,
                 (long long)sa->n_conflicts, (long long)sb->n_conflicts, (long long)sa->n_windows, (long long)sb->n_windows);
        return 0;
    }
    return 1;
}

double tu_flat_us(const cc_link* link, cc_coll_kind kind, size_t n_bytes, int n_ranks) {
    cc_group_shape g;
    double us = -1;
    g.n_ranks = g.ranks_per_node = n_ranks;
    if (cc_coll_us(NULL, link, NULL, 0, kind, (uint64_t)n_bytes, g, CC_ALGO_FLAT, &us) != CC_OK) return -1;
    return us;
}
