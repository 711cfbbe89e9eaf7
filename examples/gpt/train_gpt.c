/* train_gpt.c - a GPT-2-style character model trained on CPU ranks, its
   training step written as a graph of library operations and scheduled by
   Concerto-C.

   The model and every file format are in FORMATS.md. Parallelism, in any
   2-D layout TP x DP (world rank r = dp_rank * TP + tp_rank, the TP group
   on one node):
   - tensor parallel, Megatron style: each TP rank holds H/TP heads
     (its rows of attn_w and attn_b, its columns of proj_w) and 4C/TP of
     the MLP's hidden units (rows of fc_w and fc_b, columns of fcproj_w);
     an all-reduce after each row-parallel projection in the forward pass
     (proj, fcproj) and after each column-parallel one in the backward pass
     (the input gradients of fc and attn). Embeddings, layer norms and the
     biases of the row-parallel layers are replicated;
   - data parallel: every DP rank takes B/DP sequences of the global batch
     of B, and each gradient is averaged over the DP group by an all-reduce.
   The gradient is clipped by its global norm (a float64 all-reduce over
   the TP group) and AdamW updates each rank's shards.

   Every operation of the step (forward, backward, communication, optimizer)
   is a library op on one of three streams (compute, tp, dp) that names the
   tensors it reads and writes; the library derives the dependencies,
   profiles the ops, agrees on their durations across ranks, schedules the
   step, and runs it with the fewest cross-stream waits. "Program order" is
   the order the ops are added here, as a straightforward trainer issues
   them: the weight gradient of each layer before its input gradient, and
   the gradient all-reduces in parameter order after the backward pass.

   Before scheduling, the library may rewrite the step (the library's order
   only; --decompose, --fuse): the ops around each tensor-parallel
   all-reduce can run in chunks of token rows (their chunk functions below),
   so it cuts them and the all-reduce into pieces that overlap; the
   gradients lie back to back in memory, so it can fuse their all-reduces
   into buckets. Both keep every sum in the same order: the losses stay
   bit-identical to program order's.

   Run with --help for the options. */
#define _POSIX_C_SOURCE 200809L
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "gpt_kernels.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LAYERS 64
#define MAX_PARAMS (2 + 12 * MAX_LAYERS + 2)
#define MAX_T 1024

/* ---- configuration and options ------------------------------------------ */
typedef struct config { int V, C, L, H, T; } config;

typedef struct options {
    const char* data;
    config cfg;               /* V comes from the data */
    int batch, tp, dp, steps;
    uint64_t seed;
    double lr;
    int warmup;
    int order;                /* 0 program, 1 concerto, 2 both (program first) */
    int emulate;
    double link_alpha_us, link_us_per_kib;
    const char *save, *save_init, *load, *dump_batches, *dump_grads, *losses, *trace;
    int eval_batches, sample_chars, profile_repeats, print_every, compare_steps;
    int decompose, fuse;      /* rewrites before scheduling (the library's order only) */
    int budget;               /* schedules the scheduler may try; 0: the library's default */
} options;

static void usage(FILE* f) {
    fprintf(f,
            "usage: train_gpt [options]\n"
            "  --data FILE          training text (default: a corpus generated here)\n"
            "  --layers L           blocks (default 2)\n"
            "  --embd C             embedding width (default 64)\n"
            "  --heads H            attention heads (default 4)\n"
            "  --seq T              context length (default 32)\n"
            "  --batch B            global batch, sequences per step (default 8)\n"
            "  --tp N, --dp N       tensor- and data-parallel degree (default 1, 1)\n"
            "  --steps N            training steps (default 100)\n"
            "  --lr X               peak learning rate (default 3e-3), --warmup N steps (default 10)\n"
            "  --seed N             initialisation and batch order (default 1)\n"
            "  --order program|concerto|both   issue order of the step (default concerto)\n"
            "  --decompose on|off   let the library cut tensor-parallel all-reduces and the ops\n"
            "                       around them into chunks (default on; the library's order only)\n"
            "  --fuse on|off        let the library fuse gradient all-reduces into buckets (default on)\n"
            "  --link US_PER_KIB    emulated inter-node link: microseconds per KiB (default 40);\n"
            "                       the intra-node (TP) link is 4x faster\n"
            "  --latency US         emulated link latency per step (default 30; intra-node: half)\n"
            "  --no-link            collectives run at memory speed\n"
            "  --load CKPT          start from a checkpoint (its configuration wins)\n"
            "  --save CKPT          write the trained model; --save-init CKPT the initial one\n"
            "  --dump-batches FILE  the batches of every step (FORMATS.md)\n"
            "  --dump-grads FILE    the gradient of the first step, before clipping\n"
            "  --losses FILE        the training loss of every step, one per line\n"
            "  --trace FILE         Chrome trace of the last step (every rank)\n"
            "  --eval N             validation batches at the end (default 8)\n"
            "  --sample N           characters of generated text at the end (default 200)\n"
            "  --profile N          repeats per op when profiling (default 3); 0: no profiling, durations\n"
            "                       from a model (1 GB/s over the bytes an op touches; collectives on the\n"
            "                       emulated link), the same on every machine\n"
            "  --print-every N      print every Nth step (default 1)\n"
            "  --compare N          steps timed in each order side by side before training (default 5)\n"
            "  --budget N           schedules the scheduler may try (default: the library's, 5000)\n");
}

/* ---- small utilities -------------------------------------------------- */
static uint64_t rng_next(uint64_t* s) {           /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
static double rng_unit(uint64_t* s) { return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0); }
static double rng_normal(uint64_t* s) {
    double u1 = rng_unit(s), u2 = rng_unit(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
static int cmp_double(const void* a, const void* b) { double x = *(const double*)a, y = *(const double*)b; return (x > y) - (x < y); }
static double median(double* v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
static double wall_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- parameters: shapes, order, sharding --------------------------------- */
enum { SH_REPL = 0, SH_ROWS, SH_COLS };   /* replicated; rows split (per section); columns split */

typedef struct pinfo {
    char name[32];
    int rows, cols;          /* global shape [rows][cols] (vectors: cols 1) */
    int shard, sections;     /* SH_ROWS: rows in `sections` equal blocks, each split by TP */
    int decay;               /* weight decay applies (2-D tensors) */
    size_t offset;           /* in the global parameter vector */
} pinfo;

typedef struct model_layout { int n; pinfo p[MAX_PARAMS]; size_t total; } model_layout;

static void add_param(model_layout* m, const char* name, int layer, int rows, int cols, int shard, int sections, int decay) {
    pinfo* p = &m->p[m->n++];
    if (layer >= 0) snprintf(p->name, sizeof p->name, "h%d.%s", layer, name);
    else snprintf(p->name, sizeof p->name, "%s", name);
    p->rows = rows; p->cols = cols; p->shard = shard; p->sections = sections; p->decay = decay;
    p->offset = m->total;
    m->total += (size_t)rows * (size_t)cols;
}

/* The order of FORMATS.md. */
static void layout_model(const config* c, model_layout* m) {
    int l, C = c->C;
    memset(m, 0, sizeof *m);
    add_param(m, "wte", -1, c->V, C, SH_REPL, 1, 1);
    add_param(m, "wpe", -1, c->T, C, SH_REPL, 1, 1);
    for (l = 0; l < c->L; l++) {
        add_param(m, "ln1_w", l, C, 1, SH_REPL, 1, 0);
        add_param(m, "ln1_b", l, C, 1, SH_REPL, 1, 0);
        add_param(m, "attn_w", l, 3 * C, C, SH_ROWS, 3, 1);
        add_param(m, "attn_b", l, 3 * C, 1, SH_ROWS, 3, 0);
        add_param(m, "proj_w", l, C, C, SH_COLS, 1, 1);
        add_param(m, "proj_b", l, C, 1, SH_REPL, 1, 0);
        add_param(m, "ln2_w", l, C, 1, SH_REPL, 1, 0);
        add_param(m, "ln2_b", l, C, 1, SH_REPL, 1, 0);
        add_param(m, "fc_w", l, 4 * C, C, SH_ROWS, 1, 1);
        add_param(m, "fc_b", l, 4 * C, 1, SH_ROWS, 1, 0);
        add_param(m, "fcproj_w", l, C, 4 * C, SH_COLS, 1, 1);
        add_param(m, "fcproj_b", l, C, 1, SH_REPL, 1, 0);
    }
    add_param(m, "lnf_w", -1, C, 1, SH_REPL, 1, 0);
    add_param(m, "lnf_b", -1, C, 1, SH_REPL, 1, 0);
}

/* Elements of one TP rank's shard of parameter p. */
static size_t shard_size(const pinfo* p, int tp) {
    return (size_t)p->rows * (size_t)p->cols / (p->shard == SH_REPL ? 1u : (size_t)tp);
}

/* Copies between a global tensor g and rank t's shard s (to_shard: g -> s). */
static void shard_copy(const pinfo* p, int tp, int t, float* g, float* s, int to_shard) {
    int r, c;
    if (p->shard == SH_REPL) {
        if (to_shard) memcpy(s, g, sizeof(float) * shard_size(p, 1));
        else memcpy(g, s, sizeof(float) * shard_size(p, 1));
    } else if (p->shard == SH_ROWS) {
        int sec_rows = p->rows / p->sections, part = sec_rows / tp, k, i = 0;
        for (k = 0; k < p->sections; k++)
            for (r = 0; r < part; r++, i++) {
                float* grow = g + (size_t)(k * sec_rows + t * part + r) * (size_t)p->cols;
                float* srow = s + (size_t)i * (size_t)p->cols;
                if (to_shard) memcpy(srow, grow, sizeof(float) * (size_t)p->cols);
                else memcpy(grow, srow, sizeof(float) * (size_t)p->cols);
            }
    } else {
        int part = p->cols / tp;
        for (r = 0; r < p->rows; r++)
            for (c = 0; c < part; c++) {
                float* gv = g + (size_t)r * (size_t)p->cols + (size_t)(t * part + c);
                float* sv = s + (size_t)r * (size_t)part + (size_t)c;
                if (to_shard) *sv = *gv;
                else *gv = *sv;
            }
    }
}

/* GPT-2's initialisation: N(0, 0.02) for weights and embeddings, the
   residual projections scaled by 1/sqrt(2L), zero biases, unit norms. */
static void init_params(const config* c, const model_layout* m, float* w, uint64_t seed) {
    int i;
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 17;
    for (i = 0; i < m->n; i++) {
        const pinfo* p = &m->p[i];
        size_t k, n = (size_t)p->rows * (size_t)p->cols;
        const char* leaf = strchr(p->name, '.') ? strchr(p->name, '.') + 1 : p->name;
        double sd = 0.02;
        if (!strcmp(leaf, "proj_w") || !strcmp(leaf, "fcproj_w")) sd = 0.02 / sqrt(2.0 * c->L);
        for (k = 0; k < n; k++) {
            if (strstr(leaf, "ln") == leaf) w[p->offset + k] = strstr(leaf, "_w") ? 1.0f : 0.0f;
            else if (p->cols == 1) w[p->offset + k] = 0.0f;
            else w[p->offset + k] = (float)(sd * rng_normal(&s));
        }
    }
}

/* ---- data -------------------------------------------------------------- */
typedef struct dataset {
    int V;
    unsigned char vocab[256];  /* token -> byte */
    int token_of[256];         /* byte -> token, -1 if absent */
    int* tokens; size_t n;     /* the whole text, encoded */
    size_t n_train;            /* the first 90% trains, the rest validates */
} dataset;

/* A corpus with structure to learn when no file is given: sentences from a
   small grammar, deterministic. */
static char* generate_corpus(size_t* n_out) {
    static const char* subj[] = { "the cat", "a dog", "the old man", "my friend", "the bird", "a child", "the queen", "our king" };
    static const char* verb[] = { "sees", "likes", "follows", "finds", "hears", "helps", "calls", "loves" };
    static const char* obj[] = { "the moon", "a red ball", "the river", "her brother", "the small house", "a song", "the sea", "bread" };
    static const char* tail[] = { ".", " today.", " at night.", " again.", " in the garden.", " with joy." };
    size_t cap = 200000, n = 0;
    char* text = (char*)malloc(cap + 128);
    uint64_t s = 12345;
    if (!text) return NULL;
    while (n < cap) {
        int len = snprintf(text + n, 128, "%s %s %s%s%s", subj[rng_next(&s) % 8], verb[rng_next(&s) % 8], obj[rng_next(&s) % 8],
                           tail[rng_next(&s) % 6], rng_next(&s) % 5 == 0 ? "\n" : " ");
        n += (size_t)len;
    }
    *n_out = n;
    return text;
}

static int load_text(const char* path, char** text, size_t* n, char* err, size_t errn) {
    FILE* f;
    long len;
    if (!path) {
        *text = generate_corpus(n);
        if (!*text) { snprintf(err, errn, "out of memory"); return 0; }
        return 1;
    }
    f = fopen(path, "rb");
    if (!f) { snprintf(err, errn, "cannot open data file '%s': %s", path, strerror(errno)); return 0; }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errn, "cannot read data file '%s'", path);
        fclose(f);
        return 0;
    }
    *text = (char*)malloc((size_t)len + 1);
    if (!*text) { fclose(f); snprintf(err, errn, "out of memory for '%s' (%ld bytes)", path, len); return 0; }
    if (fread(*text, 1, (size_t)len, f) != (size_t)len) {
        snprintf(err, errn, "cannot read data file '%s'", path);
        fclose(f);
        free(*text);
        return 0;
    }
    fclose(f);
    *n = (size_t)len;
    return 1;
}

/* Encodes text; with a fixed vocabulary (from a checkpoint) every byte
   must be in it. Needs room for T+1 tokens in both splits. */
static int make_dataset(dataset* d, const char* text, size_t n, const unsigned char* fixed_vocab, int fixed_V, int T,
                        const char* what, char* err, size_t errn) {
    size_t i;
    int v;
    memset(d, 0, sizeof *d);
    for (v = 0; v < 256; v++) d->token_of[v] = -1;
    if (fixed_vocab) {
        d->V = fixed_V;
        for (v = 0; v < fixed_V; v++) { d->vocab[v] = fixed_vocab[v]; d->token_of[fixed_vocab[v]] = v; }
    } else {
        int seen[256] = { 0 };
        for (i = 0; i < n; i++) seen[(unsigned char)text[i]] = 1;
        for (v = 0; v < 256; v++) if (seen[v]) { d->token_of[v] = d->V; d->vocab[d->V++] = (unsigned char)v; }
    }
    if (n < 10 * (size_t)(T + 1)) {
        snprintf(err, errn, "%s: %zu characters is too little text for a context of %d (need at least %d)", what, n, T,
                 10 * (T + 1));
        return 0;
    }
    d->tokens = (int*)malloc(sizeof(int) * n);
    if (!d->tokens) { snprintf(err, errn, "out of memory"); return 0; }
    for (i = 0; i < n; i++) {
        int t = d->token_of[(unsigned char)text[i]];
        if (t < 0) {
            snprintf(err, errn, "%s: byte %zu (0x%02x) is not in the checkpoint's vocabulary", what, i, (unsigned char)text[i]);
            free(d->tokens);
            d->tokens = NULL;
            return 0;
        }
        d->tokens[i] = t;
    }
    d->n = n;
    d->n_train = n - n / 10;
    return 1;
}

/* The global batch of a step: B windows of T+1 tokens at random offsets of
   one split, the same on every rank. */
static void make_batch(const dataset* d, int val, uint64_t seed, int step, int B, int T, int* inputs, int* targets) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + (uint64_t)step * 0xD1B54A32D192ED03ull + (val ? 0x5555u : 0);
    size_t lo = val ? d->n_train : 0, hi = val ? d->n : d->n_train, span = hi - lo - (size_t)T - 1;
    int b, t;
    for (b = 0; b < B; b++) {
        size_t off = lo + (size_t)(rng_next(&s) % span);
        for (t = 0; t < T; t++) {
            inputs[b * T + t] = d->tokens[off + (size_t)t];
            targets[b * T + t] = d->tokens[off + (size_t)t + 1];
        }
    }
}

static double lr_at(const options* o, int step) {   /* linear warm-up, then cosine to 10% */
    double frac;
    if (step < o->warmup) return o->lr * (step + 1) / o->warmup;
    if (o->steps <= o->warmup) return o->lr;
    frac = (double)(step - o->warmup) / (double)(o->steps - o->warmup);
    return o->lr * (0.1 + 0.45 * (1.0 + cos(3.141592653589793 * frac)));
}

/* ---- files: checkpoints, batches, gradients (FORMATS.md) ---------------- */
static uint64_t fnv1a(uint64_t h, const void* p, size_t n) {
    const unsigned char* b = (const unsigned char*)p;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001B3ull; }
    return h;
}
#define FNV_START 0xCBF29CE484222325ull

typedef struct hwriter { FILE* f; uint64_t h; int ok; } hwriter;
static void hw(hwriter* w, const void* p, size_t n) {
    if (w->ok && fwrite(p, 1, n, w->f) != n) w->ok = 0;
    w->h = fnv1a(w->h, p, n);
}

static int save_checkpoint(const char* path, const config* c, const dataset* d, int steps_done, const float* w, size_t P,
                           char* err, size_t errn) {
    hwriter wr;
    uint32_t hdr[8];
    uint64_t n64 = P;
    unsigned char vocab[260];
    size_t vpad = ((size_t)c->V + 3) / 4 * 4;
    wr.f = fopen(path, "wb");
    wr.h = FNV_START;
    wr.ok = wr.f != NULL;
    if (!wr.f) { snprintf(err, errn, "cannot write checkpoint '%s': %s", path, strerror(errno)); return 0; }
    hdr[0] = 1; hdr[1] = (uint32_t)c->V; hdr[2] = (uint32_t)c->C; hdr[3] = (uint32_t)c->L; hdr[4] = (uint32_t)c->H;
    hdr[5] = (uint32_t)c->T; hdr[6] = (uint32_t)steps_done; hdr[7] = 0;
    memset(vocab, 0, sizeof vocab);
    memcpy(vocab, d->vocab, (size_t)c->V);
    hw(&wr, "CCGPTCK1", 8);
    hw(&wr, hdr, sizeof hdr);
    hw(&wr, &n64, 8);
    hw(&wr, vocab, vpad);
    hw(&wr, w, sizeof(float) * P);
    {
        uint64_t h = wr.h;
        hw(&wr, &h, 8);
    }
    if (fclose(wr.f) != 0) wr.ok = 0;
    if (!wr.ok) snprintf(err, errn, "writing checkpoint '%s' failed", path);
    return wr.ok;
}

/* Reads a checkpoint: the configuration, vocabulary and parameters
   (*w malloc'd). Every inconsistency is an error naming the file. */
static int load_checkpoint(const char* path, config* c, unsigned char* vocab, int* steps_done, float** w, size_t* P,
                           char* err, size_t errn) {
    FILE* f = fopen(path, "rb");
    unsigned char* buf = NULL;
    long len;
    uint32_t hdr[8];
    uint64_t n64, h_file, h;
    size_t vpad, need;
    model_layout* m = NULL;
    int ok = 0;
    *w = NULL;
    if (!f) { snprintf(err, errn, "cannot open checkpoint '%s': %s", path, strerror(errno)); return 0; }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        snprintf(err, errn, "cannot read checkpoint '%s'", path);
        goto out;
    }
    if (len < 56) { snprintf(err, errn, "checkpoint '%s': %ld bytes is shorter than the 48-byte header", path, len); goto out; }
    buf = (unsigned char*)malloc((size_t)len);
    if (!buf) { snprintf(err, errn, "checkpoint '%s': out of memory", path); goto out; }
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) { snprintf(err, errn, "cannot read checkpoint '%s'", path); goto out; }
    if (memcmp(buf, "CCGPTCK1", 8) != 0) { snprintf(err, errn, "'%s' is not a checkpoint (magic CCGPTCK1 missing)", path); goto out; }
    memcpy(hdr, buf + 8, sizeof hdr);
    memcpy(&n64, buf + 40, 8);
    if (hdr[0] != 1) { snprintf(err, errn, "checkpoint '%s': format version %u, this program reads version 1", path, hdr[0]); goto out; }
    c->V = (int)hdr[1]; c->C = (int)hdr[2]; c->L = (int)hdr[3]; c->H = (int)hdr[4]; c->T = (int)hdr[5];
    if (c->V < 2 || c->V > 256 || c->C < 1 || c->C > 65536 || c->L < 1 || c->L > MAX_LAYERS || c->H < 1 || c->C % c->H ||
        c->T < 2 || c->T > MAX_T) {
        snprintf(err, errn, "checkpoint '%s': implausible configuration V=%d C=%d L=%d H=%d T=%d", path, c->V, c->C, c->L, c->H, c->T);
        goto out;
    }
    m = (model_layout*)malloc(sizeof *m);
    if (!m) { snprintf(err, errn, "out of memory"); goto out; }
    layout_model(c, m);
    if (n64 != m->total) {
        snprintf(err, errn, "checkpoint '%s': %llu parameters in the header, the configuration has %zu", path,
                 (unsigned long long)n64, m->total);
        goto out;
    }
    vpad = ((size_t)c->V + 3) / 4 * 4;
    need = 48 + vpad + sizeof(float) * m->total + 8;
    if ((size_t)len != need) {
        snprintf(err, errn, "checkpoint '%s': %ld bytes, the header implies %zu (%s)", path, len, need,
                 (size_t)len < need ? "truncated" : "trailing bytes");
        goto out;
    }
    h = fnv1a(FNV_START, buf, need - 8);
    memcpy(&h_file, buf + need - 8, 8);
    if (h != h_file) { snprintf(err, errn, "checkpoint '%s' is corrupt: its hash does not match its contents", path); goto out; }
    memcpy(vocab, buf + 48, (size_t)c->V);
    *steps_done = (int)hdr[6];
    *P = m->total;
    *w = (float*)malloc(sizeof(float) * m->total);
    if (!*w) { snprintf(err, errn, "out of memory"); goto out; }
    memcpy(*w, buf + 48 + vpad, sizeof(float) * m->total);
    ok = 1;
out:
    if (f) fclose(f);
    free(buf);
    free(m);
    return ok;
}

/* ---- a rank's tensors ----------------------------------------------------- */
/* A tensor the graph knows as a buffer. rows > 0: its leading dimension is
   the batch (rows of tokens, or of sequences), along which the library may
   cut ops that read or write it into chunks (decomposition). */
typedef struct tensor { const char* name; void* p; size_t bytes; uint64_t rows; int owned; cc_buffer buf; } tensor;

typedef struct layer_t {
    /* forward, [N][.] with N = B_local * T; Cl = C/TP, F = 4C/TP, Hl = H/TP */
    float *a, *mean1, *rstd1;     /* ln1 out [N][C], stats [N] */
    float *qkv;                   /* [N][3 Cl] */
    float *att;                   /* [B][Hl][T][T] */
    float *y;                     /* [N][Cl] */
    float *pp;                    /* [N][C] partial projection, all-reduced over TP */
    float *x1;                    /* [N][C] residual after attention */
    float *m, *mean2, *rstd2;     /* ln2 out [N][C] */
    float *h, *u;                 /* [N][F] before and after GELU */
    float *pf;                    /* [N][C] partial MLP output, all-reduced over TP */
    /* backward */
    float *dx1;                   /* [N][C] */
    float *dh;                    /* [N][F] */
    float *dm;                    /* [N][C] partial, all-reduced */
    float *dy;                    /* [N][Cl] */
    float *dqkv;                  /* [N][3 Cl] */
    float *da;                    /* [N][C] partial, all-reduced */
} layer_t;

typedef struct shared shared;

typedef struct rank_state {
    shared* sh;
    cc_rank* rank;
    cc_context* ctx;
    int me, tp_rank, dp_rank;
    config cfg;
    int TP, DP, Bl, N, Cl, F, Hl;
    const model_layout* layout;
    int np;
    float *param[MAX_PARAMS], *grad[MAX_PARAMS], *adam_m[MAX_PARAMS], *adam_v[MAX_PARAMS];
    size_t pn[MAX_PARAMS];
    int *inputs, *targets;        /* [N] */
    float* x[MAX_LAYERS + 1];     /* residual stream [N][C] */
    float* dx[MAX_LAYERS + 1];    /* its gradient */
    layer_t lay[MAX_LAYERS];
    float *xf, *meanf, *rstdf, *logits, *dlogits, *dxf;
    float* loss;                  /* [1], averaged over DP */
    double *sumsq, *normsq;       /* [np] per-parameter squared norms; [1] the global one */
    /* set by the host before each step */
    float lr;
    int t;
    int train;                    /* the loss op also writes dlogits */
    tensor* tensors; int n_tensors, cap_tensors;
    float* grad_slab;             /* every gradient, in parameter order */
    cc_comm *tp_comm, *dp_comm;
    cc_collective* colls; int n_colls, cap_colls;
} rank_state;

/* Registers p (allocated here if NULL, then owned) as a tensor. */
static void* rs_tensor(rank_state* s, const char* name, void* p, size_t bytes, uint64_t rows) {
    int owned = p == NULL;
    if (s->n_tensors == s->cap_tensors) {
        int cap = s->cap_tensors ? 2 * s->cap_tensors : 256;
        tensor* t = (tensor*)realloc(s->tensors, sizeof(tensor) * (size_t)cap);
        if (!t) return NULL;
        s->tensors = t;
        s->cap_tensors = cap;
    }
    if (owned && !(p = calloc(1, bytes ? bytes : 1))) return NULL;
    s->tensors[s->n_tensors].name = name;
    s->tensors[s->n_tensors].p = p;
    s->tensors[s->n_tensors].bytes = bytes;
    s->tensors[s->n_tensors].rows = rows;
    s->tensors[s->n_tensors].owned = owned;
    s->tensors[s->n_tensors].buf.id = 0;
    s->n_tensors++;
    return p;
}

static tensor* find_tensor(rank_state* s, const void* p) {
    int i;
    for (i = s->n_tensors - 1; i >= 0; i--) if (s->tensors[i].p == p) return &s->tensors[i];
    return NULL;
}

static void rs_free(rank_state* s) {
    int i;
    for (i = 0; i < s->n_tensors; i++) if (s->tensors[i].owned) free(s->tensors[i].p);
    free(s->tensors);
    free(s->grad_slab);
    free(s->colls);
}

#define ALLOCR(ptr, name, count, rows) \
    do { if (!((ptr) = rs_tensor(s, name, NULL, sizeof(*(ptr)) * (size_t)(count), (uint64_t)(rows)))) return 0; } while (0)
#define ALLOC(ptr, name, count) ALLOCR(ptr, name, count, 0)

static int rs_init(rank_state* s) {
    const config* c = &s->cfg;
    int l, p, N = s->N, C = c->C;
    size_t total = 0, off = 0;
    /* the gradients lie back to back in parameter order, so that the
       library can fuse their all-reduces into buckets */
    for (p = 0; p < s->np; p++) total += s->pn[p] = shard_size(&s->layout->p[p], s->TP);
    if (!(s->grad_slab = (float*)calloc(total, sizeof(float)))) return 0;
    for (p = 0; p < s->np; p++) {
        size_t n = s->pn[p];
        ALLOC(s->param[p], s->layout->p[p].name, n);
        if (!(s->grad[p] = (float*)rs_tensor(s, "grad", s->grad_slab + off, sizeof(float) * n, 0))) return 0;
        off += n;
        ALLOC(s->adam_m[p], "adam_m", n);
        ALLOC(s->adam_v[p], "adam_v", n);
    }
    /* activations: rows of tokens (N), attention probabilities rows of sequences */
    ALLOCR(s->inputs, "inputs", N, N);
    ALLOCR(s->targets, "targets", N, N);
    for (l = 0; l <= c->L; l++) { ALLOCR(s->x[l], "x", N * C, N); ALLOCR(s->dx[l], "dx", N * C, N); }
    for (l = 0; l < c->L; l++) {
        layer_t* y = &s->lay[l];
        ALLOCR(y->a, "ln1", N * C, N); ALLOCR(y->mean1, "mean1", N, N); ALLOCR(y->rstd1, "rstd1", N, N);
        ALLOCR(y->qkv, "qkv", N * 3 * s->Cl, N);
        ALLOCR(y->att, "att", (size_t)s->Bl * s->Hl * c->T * c->T, s->Bl);
        ALLOCR(y->y, "attn_out", N * s->Cl, N);
        ALLOCR(y->pp, "proj_partial", N * C, N);
        ALLOCR(y->x1, "x1", N * C, N);
        ALLOCR(y->m, "ln2", N * C, N); ALLOCR(y->mean2, "mean2", N, N); ALLOCR(y->rstd2, "rstd2", N, N);
        ALLOCR(y->h, "fc", N * s->F, N); ALLOCR(y->u, "gelu", N * s->F, N);
        ALLOCR(y->pf, "fcproj_partial", N * C, N);
        ALLOCR(y->dx1, "dx1", N * C, N);
        ALLOCR(y->dh, "dfc", N * s->F, N);
        ALLOCR(y->dm, "dln2_partial", N * C, N);
        ALLOCR(y->dy, "dattn_out", N * s->Cl, N);
        ALLOCR(y->dqkv, "dqkv", N * 3 * s->Cl, N);
        ALLOCR(y->da, "dln1_partial", N * C, N);
    }
    ALLOCR(s->xf, "lnf", N * C, N); ALLOCR(s->meanf, "meanf", N, N); ALLOCR(s->rstdf, "rstdf", N, N);
    ALLOCR(s->logits, "logits", N * c->V, N);
    ALLOCR(s->dlogits, "dlogits", N * c->V, N);
    ALLOCR(s->dxf, "dlnf", N * C, N);
    ALLOC(s->loss, "loss", 1);
    ALLOC(s->sumsq, "sumsq", s->np);
    ALLOC(s->normsq, "normsq", 1);
    return 1;
}

/* ---- the ops' work ---------------------------------------------------------- */
typedef struct job { rank_state* s; int l; int p; } job;
#define JOB rank_state* s = ((job*)u)->s; int l = ((job*)u)->l; const config* c = &s->cfg; (void)stream; (void)l; (void)c
#define PW(i) s->param[2 + 12 * l + (i)]
#define GW(i) s->grad[2 + 12 * l + (i)]
enum { P_LN1W, P_LN1B, P_ATTNW, P_ATTNB, P_PROJW, P_PROJB, P_LN2W, P_LN2B, P_FCW, P_FCB, P_FCPROJW, P_FCPROJB };

static void op_embed(void* stream, void* u) {
    JOB;
    int n, k;
    for (n = 0; n < s->N; n++) {
        const float* te = s->param[0] + (size_t)s->inputs[n] * c->C;
        const float* pe = s->param[1] + (size_t)(n % c->T) * c->C;
        for (k = 0; k < c->C; k++) s->x[0][(size_t)n * c->C + k] = te[k] + pe[k];
    }
}
static void op_ln1(void* stream, void* u) { JOB; layer_t* y = &s->lay[l]; k_layernorm(y->a, y->mean1, y->rstd1, s->x[l], PW(P_LN1W), PW(P_LN1B), s->N, c->C); }
static void op_qkv(void* stream, void* u) { JOB; layer_t* y = &s->lay[l]; k_matmul(y->qkv, y->a, PW(P_ATTNW), PW(P_ATTNB), s->N, c->C, 3 * s->Cl); }
static void op_attn(void* stream, void* u) { JOB; layer_t* y = &s->lay[l]; k_attention(y->y, y->att, y->qkv, s->Bl, c->T, s->Hl, c->C / c->H); }
/* Ops around the tensor-parallel all-reduces also run in chunks of rows
   (tokens) when the library decomposes them: chunk i of n covers rows
   [i N/n, (i+1) N/n). The whole op is chunk 0 of 1. */
#define CHUNK JOB; int r0 = (int)((int64_t)s->N * chunk / n_chunks), r1 = (int)((int64_t)s->N * (chunk + 1) / n_chunks); \
    size_t R0 = (size_t)r0; (void)R0
static void ch_proj(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    layer_t* y = &s->lay[l];
    k_matmul(y->pp + R0 * c->C, y->y + R0 * s->Cl, PW(P_PROJW), NULL, r1 - r0, s->Cl, c->C);
}
static void op_proj(void* stream, void* u) { ch_proj(stream, u, 0, 1); }
/* out = x + (part + bias) on rows [r0, r1) of [N][C] */
static void resid_rows(float* out, const float* x, const float* part, const float* bias, int r0, int r1, int C) {
    int n, k;
    for (n = r0; n < r1; n++)
        for (k = 0; k < C; k++) {
            size_t i = (size_t)n * C + k;
            out[i] = x[i] + (part[i] + bias[k]);
        }
}
static void ch_resid1(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    resid_rows(s->lay[l].x1, s->x[l], s->lay[l].pp, PW(P_PROJB), r0, r1, c->C);
}
static void op_resid1(void* stream, void* u) { ch_resid1(stream, u, 0, 1); }
static void op_ln2(void* stream, void* u) { JOB; layer_t* y = &s->lay[l]; k_layernorm(y->m, y->mean2, y->rstd2, y->x1, PW(P_LN2W), PW(P_LN2B), s->N, c->C); }
static void op_fc(void* stream, void* u) {
    JOB;
    layer_t* y = &s->lay[l];
    k_matmul(y->h, y->m, PW(P_FCW), PW(P_FCB), s->N, c->C, s->F);
    k_gelu(y->u, y->h, (size_t)s->N * s->F);
}
static void ch_fcproj(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    layer_t* y = &s->lay[l];
    k_matmul(y->pf + R0 * c->C, y->u + R0 * s->F, PW(P_FCPROJW), NULL, r1 - r0, s->F, c->C);
}
static void op_fcproj(void* stream, void* u) { ch_fcproj(stream, u, 0, 1); }
static void ch_resid2(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    resid_rows(s->x[l + 1], s->lay[l].x1, s->lay[l].pf, PW(P_FCPROJB), r0, r1, c->C);
}
static void op_resid2(void* stream, void* u) { ch_resid2(stream, u, 0, 1); }
static void op_lnf(void* stream, void* u) { JOB; k_layernorm(s->xf, s->meanf, s->rstdf, s->x[c->L], s->param[s->np - 2], s->param[s->np - 1], s->N, c->C); }
static void op_head(void* stream, void* u) { JOB; k_matmul(s->logits, s->xf, s->param[0], NULL, s->N, c->C, c->V); }
static void op_loss(void* stream, void* u) {
    JOB;
    s->loss[0] = (float)k_cross_entropy(s->train ? s->dlogits : NULL, s->logits, s->targets, s->N, c->V);
}
static void op_head_bwd_w(void* stream, void* u) { JOB; k_matmul_bwd_weight(s->grad[0], NULL, s->dlogits, s->xf, s->N, c->C, c->V); }
static void op_head_bwd_x(void* stream, void* u) { JOB; k_matmul_bwd_input(s->dxf, s->dlogits, s->param[0], s->N, c->C, c->V); }
static void op_lnf_bwd(void* stream, void* u) {
    JOB;
    k_layernorm_bwd(s->dx[c->L], s->grad[s->np - 2], s->grad[s->np - 1], NULL, s->dxf, s->x[c->L], s->meanf, s->rstdf,
                    s->param[s->np - 2], s->N, c->C, 0);
}
static void op_fcproj_bwd_w(void* stream, void* u) { JOB; k_matmul_bwd_weight(GW(P_FCPROJW), GW(P_FCPROJB), s->dx[l + 1], s->lay[l].u, s->N, s->F, c->C); }
static void op_fcproj_bwd_x(void* stream, void* u) {
    JOB;
    layer_t* y = &s->lay[l];
    k_matmul_bwd_input(y->dh, s->dx[l + 1], PW(P_FCPROJW), s->N, s->F, c->C);
    k_gelu_bwd(y->dh, y->dh, y->h, (size_t)s->N * s->F);
}
static void op_fc_bwd_w(void* stream, void* u) { JOB; k_matmul_bwd_weight(GW(P_FCW), GW(P_FCB), s->lay[l].dh, s->lay[l].m, s->N, c->C, s->F); }
static void ch_fc_bwd_x(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    k_matmul_bwd_input(s->lay[l].dm + R0 * c->C, s->lay[l].dh + R0 * s->F, PW(P_FCW), r1 - r0, c->C, s->F);
}
static void op_fc_bwd_x(void* stream, void* u) { ch_fc_bwd_x(stream, u, 0, 1); }
/* the weight gradients of a norm sum over rows: chunk 0 writes them, later chunks add */
static void ch_ln2_bwd(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    layer_t* y = &s->lay[l];
    k_layernorm_bwd(y->dx1 + R0 * c->C, GW(P_LN2W), GW(P_LN2B), s->dx[l + 1] + R0 * c->C, y->dm + R0 * c->C, y->x1 + R0 * c->C,
                    y->mean2 + R0, y->rstd2 + R0, PW(P_LN2W), r1 - r0, c->C, chunk > 0);
}
static void op_ln2_bwd(void* stream, void* u) { ch_ln2_bwd(stream, u, 0, 1); }
static void op_proj_bwd_w(void* stream, void* u) { JOB; k_matmul_bwd_weight(GW(P_PROJW), GW(P_PROJB), s->lay[l].dx1, s->lay[l].y, s->N, s->Cl, c->C); }
static void op_proj_bwd_x(void* stream, void* u) { JOB; k_matmul_bwd_input(s->lay[l].dy, s->lay[l].dx1, PW(P_PROJW), s->N, s->Cl, c->C); }
static void op_attn_bwd(void* stream, void* u) {
    JOB;
    layer_t* y = &s->lay[l];
    k_attention_bwd(y->dqkv, y->dy, y->att, y->qkv, s->Bl, c->T, s->Hl, c->C / c->H);
}
static void op_qkv_bwd_w(void* stream, void* u) { JOB; k_matmul_bwd_weight(GW(P_ATTNW), GW(P_ATTNB), s->lay[l].dqkv, s->lay[l].a, s->N, c->C, 3 * s->Cl); }
static void ch_qkv_bwd_x(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    k_matmul_bwd_input(s->lay[l].da + R0 * c->C, s->lay[l].dqkv + R0 * 3 * s->Cl, PW(P_ATTNW), r1 - r0, c->C, 3 * s->Cl);
}
static void op_qkv_bwd_x(void* stream, void* u) { ch_qkv_bwd_x(stream, u, 0, 1); }
static void ch_ln1_bwd(void* stream, void* u, int chunk, int n_chunks) {
    CHUNK;
    layer_t* y = &s->lay[l];
    k_layernorm_bwd(s->dx[l] + R0 * c->C, GW(P_LN1W), GW(P_LN1B), y->dx1 + R0 * c->C, y->da + R0 * c->C, s->x[l] + R0 * c->C,
                    y->mean1 + R0, y->rstd1 + R0, PW(P_LN1W), r1 - r0, c->C, chunk > 0);
}
static void op_ln1_bwd(void* stream, void* u) { ch_ln1_bwd(stream, u, 0, 1); }
static void op_embed_bwd(void* stream, void* u) {   /* wte's gradient accumulates onto the head's */
    JOB;
    int n, k, t, b;
    for (n = 0; n < s->N; n++) {
        float* g = s->grad[0] + (size_t)s->inputs[n] * c->C;
        for (k = 0; k < c->C; k++) g[k] += s->dx[0][(size_t)n * c->C + k];
    }
    for (t = 0; t < c->T; t++)
        for (k = 0; k < c->C; k++) {
            float v = 0;
            for (b = 0; b < s->Bl; b++) v += s->dx[0][((size_t)b * c->T + t) * c->C + k];
            s->grad[1][(size_t)t * c->C + k] = v;
        }
}
/* Squared norm of one gradient, counted once across TP: replicated
   tensors only on TP rank 0. */
static void op_sumsq(void* stream, void* u) {
    JOB;
    int p = ((job*)u)->p;
    size_t i;
    double v = 0;
    if (s->layout->p[p].shard != SH_REPL || s->tp_rank == 0)
        for (i = 0; i < s->pn[p]; i++) v += (double)s->grad[p][i] * s->grad[p][i];
    s->sumsq[p] = v;
}
static void op_norm(void* stream, void* u) {
    JOB;
    int p;
    double v = 0;
    for (p = 0; p < s->np; p++) v += s->sumsq[p];
    s->normsq[0] = v;
}
static void op_update(void* stream, void* u) {
    JOB;
    int p = ((job*)u)->p;
    double norm = sqrt(s->normsq[0]), coef = 1.0 / (norm + 1e-6);
    float scale = (float)(coef < 1.0 ? coef : 1.0);
    k_adamw(s->param[p], s->adam_m[p], s->adam_v[p], s->grad[p], s->pn[p], scale, s->lr, 0.9f, 0.95f, 1e-8f,
            s->layout->p[p].decay ? 0.1f : 0.0f, s->t);
}

/* ---- building the graph ------------------------------------------------------- */
enum { S_COMPUTE = 0, S_TP = 1, S_DP = 2 };

typedef struct builder {
    rank_state* s;
    cc_graph* g;
    job* jobs; int n_jobs, cap_jobs;
    cc_result rc;
    const void* slot_ptr;            /* a region of this tensor instead of the whole */
    cc_op_chunk_fn chunk;            /* the next op can run in chunks: this does one */
    uint64_t slot_off, slot_bytes;
} builder;

static cc_region region_of(builder* b, const void* p) {
    cc_region r;
    tensor* t = find_tensor(b->s, p);
    memset(&r, 0, sizeof r);
    if (!t) return r;
    if (t->buf.id == 0 && cc_graph_add_buffer(b->g, t->name, t->bytes, &t->buf) != CC_OK) return r;
    r.buffer = t->buf;
    r.n_bytes = t->bytes;
    r.split_rows = t->rows;
    if (p == b->slot_ptr) { r.offset_bytes = b->slot_off; r.n_bytes = b->slot_bytes; r.split_rows = 0; }
    return r;
}

/* One op: name, work, layer, param index, the tensors read and written
   (NULL-terminated lists), or a collective on a stream. */
static void add_op(builder* b, const char* name, int l, cc_op_fn fn, int p, const cc_collective* coll, int stream,
                   const void* const* reads, const void* const* writes) {
    cc_op_desc d = cc_op_desc_default();
    cc_region rr[16], ww[8];
    int nr = 0, nw = 0;
    char full[64];
    if (b->rc != CC_OK) return;
    while (reads && reads[nr]) { rr[nr] = region_of(b, reads[nr]); nr++; }
    while (writes && writes[nw]) { ww[nw] = region_of(b, writes[nw]); nw++; }
    if (l >= 0) snprintf(full, sizeof full, "h%d.%s", l, name);
    else snprintf(full, sizeof full, "%s", name);
    d.name = full;
    d.duration_us = 1;
    d.stream = stream;
    d.reads = rr; d.n_reads = nr;
    d.writes = ww; d.n_writes = nw;
    if (fn) {
        job* j = &b->jobs[b->n_jobs++];   /* sized in advance: the pointers must stay valid */
        j->s = b->s; j->l = l; j->p = p;
        d.fn = fn;
        d.user_data = j;
    }
    d.coll = coll;
    d.chunk_fn = b->chunk;
    b->chunk = NULL;
    b->rc = cc_graph_add_op(b->g, &d, NULL);
}

#define R(...) ((const void* const[]){ __VA_ARGS__, NULL })

static void add_allreduce(builder* b, const char* name, int l, void* buf, size_t n, cc_dtype dt, cc_reduce_op red, cc_comm* comm,
                          int stream) {
    cc_collective co;
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE; co.dtype = dt; co.reduce = red; co.n_elems = n; co.comm = comm;
    co.send_buf = buf; co.recv_buf = buf;
    add_op(b, name, l, NULL, -1, &co, stream, R(buf), R(buf));
}

/* The training step (train = 1) or the forward pass with the loss (0). */
static cc_result build_graph(rank_state* s, int train, cc_graph** out, job** jobs_out) {
    static const char* const names[] = { "compute", "tp", "dp" };
    const config* c = &s->cfg;
    cc_graph_desc gd = cc_graph_desc_default();
    builder bb, *b = &bb;
    int l, p, i;
    memset(b, 0, sizeof *b);
    b->s = s;
    b->cap_jobs = 64 * c->L + 4 * s->np + 64;
    b->jobs = (job*)calloc((size_t)b->cap_jobs, sizeof(job));
    if (!b->jobs) return CC_ERR_OUT_OF_MEMORY;
    for (i = 0; i < s->n_tensors; i++) s->tensors[i].buf.id = 0;
    gd.n_streams = 3;
    gd.stream_names = names;
    b->rc = cc_graph_create(s->ctx, &gd, &b->g);
    if (b->rc != CC_OK) { free(b->jobs); return b->rc; }

    /* forward */
    add_op(b, "embed", -1, op_embed, -1, NULL, S_COMPUTE, R(s->param[0], s->param[1], s->inputs), R(s->x[0]));
    for (l = 0; l < c->L; l++) {
        layer_t* y = &s->lay[l];
        add_op(b, "ln1", l, op_ln1, -1, NULL, S_COMPUTE, R(s->x[l], PW(P_LN1W), PW(P_LN1B)), R(y->a, y->mean1, y->rstd1));
        add_op(b, "qkv", l, op_qkv, -1, NULL, S_COMPUTE, R(y->a, PW(P_ATTNW), PW(P_ATTNB)), R(y->qkv));
        add_op(b, "attn", l, op_attn, -1, NULL, S_COMPUTE, R(y->qkv), R(y->y, y->att));
        b->chunk = ch_proj;
        add_op(b, "proj", l, op_proj, -1, NULL, S_COMPUTE, R(y->y, PW(P_PROJW)), R(y->pp));
        if (s->TP > 1) add_allreduce(b, "proj.allreduce", l, y->pp, (size_t)s->N * c->C, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
        b->chunk = ch_resid1;
        add_op(b, "resid1", l, op_resid1, -1, NULL, S_COMPUTE, R(s->x[l], y->pp, PW(P_PROJB)), R(y->x1));
        add_op(b, "ln2", l, op_ln2, -1, NULL, S_COMPUTE, R(y->x1, PW(P_LN2W), PW(P_LN2B)), R(y->m, y->mean2, y->rstd2));
        add_op(b, "fc", l, op_fc, -1, NULL, S_COMPUTE, R(y->m, PW(P_FCW), PW(P_FCB)), R(y->h, y->u));
        b->chunk = ch_fcproj;
        add_op(b, "fcproj", l, op_fcproj, -1, NULL, S_COMPUTE, R(y->u, PW(P_FCPROJW)), R(y->pf));
        if (s->TP > 1) add_allreduce(b, "fcproj.allreduce", l, y->pf, (size_t)s->N * c->C, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
        b->chunk = ch_resid2;
        add_op(b, "resid2", l, op_resid2, -1, NULL, S_COMPUTE, R(y->x1, y->pf, PW(P_FCPROJB)), R(s->x[l + 1]));
    }
    l = -1;
    add_op(b, "lnf", -1, op_lnf, -1, NULL, S_COMPUTE, R(s->x[c->L], s->param[s->np - 2], s->param[s->np - 1]), R(s->xf, s->meanf, s->rstdf));
    add_op(b, "head", -1, op_head, -1, NULL, S_COMPUTE, R(s->xf, s->param[0]), R(s->logits));
    if (train) add_op(b, "loss", -1, op_loss, -1, NULL, S_COMPUTE, R(s->logits, s->targets), R(s->loss, s->dlogits));
    else add_op(b, "loss", -1, op_loss, -1, NULL, S_COMPUTE, R(s->logits, s->targets), R(s->loss));
    if (s->DP > 1) add_allreduce(b, "loss.allreduce", -1, s->loss, 1, CC_DTYPE_FLOAT32, CC_REDUCE_AVG, s->dp_comm, S_DP);

    if (train) {
        /* backward: for each matmul the weight gradient, then the input gradient */
        add_op(b, "head.bwd_w", -1, op_head_bwd_w, -1, NULL, S_COMPUTE, R(s->dlogits, s->xf), R(s->grad[0]));
        add_op(b, "head.bwd_x", -1, op_head_bwd_x, -1, NULL, S_COMPUTE, R(s->dlogits, s->param[0]), R(s->dxf));
        add_op(b, "lnf.bwd", -1, op_lnf_bwd, -1, NULL, S_COMPUTE, R(s->dxf, s->x[c->L], s->meanf, s->rstdf, s->param[s->np - 2]),
               R(s->dx[c->L], s->grad[s->np - 2], s->grad[s->np - 1]));
        for (l = c->L - 1; l >= 0; l--) {
            layer_t* y = &s->lay[l];
            add_op(b, "fcproj.bwd_w", l, op_fcproj_bwd_w, -1, NULL, S_COMPUTE, R(s->dx[l + 1], y->u), R(GW(P_FCPROJW), GW(P_FCPROJB)));
            add_op(b, "fcproj.bwd_x", l, op_fcproj_bwd_x, -1, NULL, S_COMPUTE, R(s->dx[l + 1], PW(P_FCPROJW), y->h), R(y->dh));
            add_op(b, "fc.bwd_w", l, op_fc_bwd_w, -1, NULL, S_COMPUTE, R(y->dh, y->m), R(GW(P_FCW), GW(P_FCB)));
            b->chunk = ch_fc_bwd_x;
            add_op(b, "fc.bwd_x", l, op_fc_bwd_x, -1, NULL, S_COMPUTE, R(y->dh, PW(P_FCW)), R(y->dm));
            if (s->TP > 1) add_allreduce(b, "fc.bwd.allreduce", l, y->dm, (size_t)s->N * c->C, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
            b->chunk = ch_ln2_bwd;
            add_op(b, "ln2.bwd", l, op_ln2_bwd, -1, NULL, S_COMPUTE, R(s->dx[l + 1], y->dm, y->x1, y->mean2, y->rstd2, PW(P_LN2W)),
                   R(y->dx1, GW(P_LN2W), GW(P_LN2B)));
            add_op(b, "proj.bwd_w", l, op_proj_bwd_w, -1, NULL, S_COMPUTE, R(y->dx1, y->y), R(GW(P_PROJW), GW(P_PROJB)));
            add_op(b, "proj.bwd_x", l, op_proj_bwd_x, -1, NULL, S_COMPUTE, R(y->dx1, PW(P_PROJW)), R(y->dy));
            add_op(b, "attn.bwd", l, op_attn_bwd, -1, NULL, S_COMPUTE, R(y->dy, y->att, y->qkv), R(y->dqkv));
            add_op(b, "qkv.bwd_w", l, op_qkv_bwd_w, -1, NULL, S_COMPUTE, R(y->dqkv, y->a), R(GW(P_ATTNW), GW(P_ATTNB)));
            b->chunk = ch_qkv_bwd_x;
            add_op(b, "qkv.bwd_x", l, op_qkv_bwd_x, -1, NULL, S_COMPUTE, R(y->dqkv, PW(P_ATTNW)), R(y->da));
            if (s->TP > 1) add_allreduce(b, "qkv.bwd.allreduce", l, y->da, (size_t)s->N * c->C, CC_DTYPE_FLOAT32, CC_REDUCE_SUM, s->tp_comm, S_TP);
            b->chunk = ch_ln1_bwd;
            add_op(b, "ln1.bwd", l, op_ln1_bwd, -1, NULL, S_COMPUTE, R(y->dx1, y->da, s->x[l], y->mean1, y->rstd1, PW(P_LN1W)),
                   R(s->dx[l], GW(P_LN1W), GW(P_LN1B)));
        }
        add_op(b, "embed.bwd", -1, op_embed_bwd, -1, NULL, S_COMPUTE, R(s->dx[0], s->inputs, s->grad[0]), R(s->grad[0], s->grad[1]));
        /* gradients averaged over the data-parallel group, in parameter order */
        if (s->DP > 1)
            for (p = 0; p < s->np; p++) {
                char nm[48];
                snprintf(nm, sizeof nm, "%s.grad.allreduce", s->layout->p[p].name);
                add_allreduce(b, nm, -1, s->grad[p], s->pn[p], CC_DTYPE_FLOAT32, CC_REDUCE_AVG, s->dp_comm, S_DP);
            }
        /* clipping by the global norm, then AdamW */
        for (p = 0; p < s->np; p++) {
            char nm[48];
            snprintf(nm, sizeof nm, "%s.sumsq", s->layout->p[p].name);
            /* each writes its own slot of sumsq: a region, not the whole buffer */
            b->slot_ptr = s->sumsq; b->slot_off = sizeof(double) * (uint64_t)p; b->slot_bytes = sizeof(double);
            add_op(b, nm, -1, op_sumsq, p, NULL, S_COMPUTE, R(s->grad[p]), R(s->sumsq));
            b->slot_ptr = NULL;
        }
        add_op(b, "grad_norm", -1, op_norm, -1, NULL, S_COMPUTE, R(s->sumsq), R(s->normsq));
        if (s->TP > 1) add_allreduce(b, "grad_norm.allreduce", -1, s->normsq, 1, CC_DTYPE_FLOAT64, CC_REDUCE_SUM, s->tp_comm, S_TP);
        for (p = 0; p < s->np; p++) {
            char nm[48];
            snprintf(nm, sizeof nm, "%s.adamw", s->layout->p[p].name);
            add_op(b, nm, -1, op_update, p, NULL, S_COMPUTE, R(s->grad[p], s->normsq), R(s->param[p], s->adam_m[p], s->adam_v[p]));
        }
    }
    if (b->rc == CC_OK) b->rc = cc_graph_validate(b->g);
    if (b->rc != CC_OK) {
        cc_graph_destroy(b->g);
        free(b->jobs);
        return b->rc;
    }
    *out = b->g;
    *jobs_out = b->jobs;
    return CC_OK;
}

/* ---- a rank's life ------------------------------------------------------------ */
struct shared {
    options o;
    config cfg;
    const model_layout* layout;
    const dataset* data;
    const float* init_params;      /* global, unsharded */
    float* final_params;           /* written by the ranks of DP rank 0 */
    float* grads0;                 /* the first step's gradient (--dump-grads) */
    double loss0;
    int passes, pass_order[2];     /* the orders trained, in turn */
    double* losses[2];             /* [steps] per pass */
    double* step_ms[2];            /* rank 0, measured */
    double* exposed_ms[2];
    double pred_ms[2], pred_exposed_ms[2];  /* by order: 0 program, 1 concerto */
    double cal_ms[2];              /* side by side: median step time by order */
    double cal_exposed_ms[2];
    int n_ops, n_colls, n_waits[2], moved;
    cc_rewrite_report dec, fus;    /* what decomposition and fusion did */
    int n_ops_run, n_colls_run;    /* the step the library's order runs */
    double plain_ms, rewritten_ms; /* predicted: the step as written / rewritten, scheduled */
    int rewrites_dropped;          /* its schedule was the shorter: rewrites not used */
    double sched_ms, lower_bound_ms;
    double val_loss;
    char sample[4096];
    cc_trace* trace;
    double train_s;
};

typedef struct snapshot { void** copy; int n; } snapshot;
static int snap_save(rank_state* s, snapshot* sn) {
    int i;
    sn->n = s->n_tensors;
    sn->copy = (void**)calloc((size_t)sn->n, sizeof(void*));
    if (!sn->copy) return 0;
    for (i = 0; i < sn->n; i++) {
        sn->copy[i] = malloc(s->tensors[i].bytes ? s->tensors[i].bytes : 1);
        if (!sn->copy[i]) return 0;
        memcpy(sn->copy[i], s->tensors[i].p, s->tensors[i].bytes);
    }
    return 1;
}
static void snap_restore(rank_state* s, const snapshot* sn) {
    int i;
    for (i = 0; i < sn->n; i++) memcpy(s->tensors[i].p, sn->copy[i], s->tensors[i].bytes);
}
static void snap_free(snapshot* sn) {
    int i;
    for (i = 0; i < sn->n && sn->copy; i++) free(sn->copy[i]);
    free(sn->copy);
    sn->copy = NULL;
}

/* Shards of every parameter (or gradient) into a global vector; only the
   ranks of DP rank 0 write, replicated tensors only TP rank 0. */
static void unshard_all(rank_state* s, float* const* local, float* global) {
    int p;
    if (s->dp_rank != 0) return;
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        if (pi->shard == SH_REPL && s->tp_rank != 0) continue;
        shard_copy(pi, s->TP, s->tp_rank, global + pi->offset, local[p], 0);
    }
}

static void set_batch(rank_state* s, int val, int step, int* gin, int* gtg) {
    const options* o = &s->sh->o;
    make_batch(s->sh->data, val, o->seed, step, o->batch, s->cfg.T, gin, gtg);
    memcpy(s->inputs, gin + (size_t)s->dp_rank * s->N, sizeof(int) * (size_t)s->N);
    memcpy(s->targets, gtg + (size_t)s->dp_rank * s->N, sizeof(int) * (size_t)s->N);
}

/* Step time (launch to the last op's end) and the part of it the compute
   stream was idle: the communication it could not hide. */
static cc_result measure_step(cc_exec* x, cc_graph* g, double* st, double* en, double* step_ms, double* exposed_ms) {
    int i, n = cc_graph_n_ops(g);
    double end = 0, busy = 0;
    cc_result r = cc_exec_timeline(x, st, en);
    if (r != CC_OK) return r;
    for (i = 0; i < n; i++) {
        if (en[i] > end) end = en[i];
        if (cc_op_demand(g, cc_graph_op(g, i), S_COMPUTE)) busy += en[i] - st[i];
    }
    *step_ms = end / 1000.0;
    *exposed_ms = (end - busy) / 1000.0;
    return CC_OK;
}

static double predicted_exposed(cc_graph* g, double makespan_us) {
    int i;
    double busy = 0;
    for (i = 0; i < cc_graph_n_ops(g); i++)
        if (cc_op_demand(g, cc_graph_op(g, i), S_COMPUTE)) busy += cc_op_duration_us(g, cc_graph_op(g, i));
    return (makespan_us - busy) / 1000.0;
}

/* Durations without measuring (--profile 0): a compute op moves the bytes
   of its regions at 1 GB/s; a collective takes the emulated link's time
   (intra-node for the TP group, inter-node for DP). Deterministic. */
static cc_result model_durations(rank_state* s, cc_graph* g) {
    const options* o = &s->sh->o;
    int i, n = cc_graph_n_ops(g);
    cc_link intra, inter;
    intra.alpha_us = o->link_alpha_us / 2; intra.us_per_byte = o->link_us_per_kib / 4 / 1024.0;
    inter.alpha_us = o->link_alpha_us; inter.us_per_byte = o->link_us_per_kib / 1024.0;
    for (i = 0; i < n; i++) {
        cc_op op = cc_graph_op(g, i);
        double us = 0;
        if (cc_op_demand(g, op, S_TP) || cc_op_demand(g, op, S_DP)) {
            /* the step's collectives are all-reduces of the region they write */
            us = cc_link_time_us(cc_op_demand(g, op, S_TP) ? &intra : &inter, CC_COLL_ALL_REDUCE,
                                 (size_t)cc_op_bytes(g, op, 1), cc_op_demand(g, op, S_TP) ? s->TP : s->DP);
        } else us = (double)(cc_op_bytes(g, op, 0) + cc_op_bytes(g, op, 1)) / 1000.0;
        {
            cc_result r = cc_op_set_duration(g, op, us);
            if (r != CC_OK) return r;
        }
    }
    return CC_OK;
}

#define TRY(call) do { rc = (call); if (rc != CC_OK) goto done; } while (0)
#define TRY_MEM(cond) do { if (!(cond)) { rc = CC_ERR_OUT_OF_MEMORY; goto done; } } while (0)

static cc_result rank_main(cc_rank* rank, void* user) {
    shared* sh = (shared*)user;
    const options* o = &sh->o;
    rank_state st, *s = &st;
    cc_result rc = CC_OK;
    cc_graph *g = NULL, *ge = NULL, *gd = NULL, *gf = NULL;
    cc_graph* gx;                 /* the step the library's order runs: g rewritten */
    cc_graph* gk[2];
    job *jobs = NULL, *ejobs = NULL;
    cc_backend be;
    int have_be = 0, i, p, pass, step, n_ops;
    cc_plan* plan[2] = { NULL, NULL };
    cc_plan* eplan = NULL;
    cc_exec* ex[2] = { NULL, NULL };
    cc_exec* eex = NULL;
    cc_schedule sched;
    snapshot snap;
    int *gin = NULL, *gtg = NULL;
    double *tst = NULL, *ten = NULL;
    cc_op* prog = NULL;

    memset(s, 0, sizeof *s);
    memset(&sched, 0, sizeof sched);
    memset(&snap, 0, sizeof snap);
    s->sh = sh; s->rank = rank; s->ctx = cc_rank_context(rank);
    s->me = cc_rank_index(rank);
    s->cfg = sh->cfg;
    s->TP = o->tp; s->DP = o->dp;
    s->tp_rank = s->me % o->tp; s->dp_rank = s->me / o->tp;
    s->Bl = o->batch / o->dp; s->N = s->Bl * s->cfg.T;
    s->Cl = s->cfg.C / o->tp; s->F = 4 * s->cfg.C / o->tp; s->Hl = s->cfg.H / o->tp;
    s->layout = sh->layout; s->np = sh->layout->n;
    s->train = 1;
    TRY_MEM(rs_init(s));
    gin = (int*)malloc(sizeof(int) * (size_t)o->batch * s->cfg.T);
    gtg = (int*)malloc(sizeof(int) * (size_t)o->batch * s->cfg.T);
    TRY_MEM(gin && gtg);
    for (p = 0; p < s->np; p++) shard_copy(&s->layout->p[p], s->TP, s->tp_rank, (float*)sh->init_params + s->layout->p[p].offset, s->param[p], 1);

    /* communicators: the TP group (one node) and the DP group */
    {
        int members[256];
        if (o->tp > 1) {
            for (i = 0; i < o->tp; i++) members[i] = s->dp_rank * o->tp + i;
            TRY(cc_comm_create(rank, members, o->tp, &s->tp_comm));
        }
        if (o->dp > 1) {
            for (i = 0; i < o->dp; i++) members[i] = i * o->tp + s->tp_rank;
            TRY(cc_comm_create(rank, members, o->dp, &s->dp_comm));
        }
    }
    TRY(build_graph(s, 1, &g, &jobs));
    TRY(build_graph(s, 0, &ge, &ejobs));
    n_ops = cc_graph_n_ops(g);
    TRY_MEM(prog = (cc_op*)malloc(sizeof(cc_op) * (size_t)n_ops));
    for (i = 0; i < n_ops; i++) prog[i] = cc_graph_op(g, i);
    TRY(cc_cpu_backend_create(rank, &be));
    have_be = 1;

    /* program order; profile every op alone (agreeing on the slowest rank's
       time), on a copy of the state that is put back afterwards */
    TRY(cc_plan_create(s->ctx, g, NULL, &plan[0]));
    TRY(cc_exec_create(s->ctx, plan[0], &be, &ex[0]));
    TRY(cc_exec_agree(ex[0], cc_rank_world_comm(rank)));
    TRY_MEM(snap_save(s, &snap));
    set_batch(s, 0, 0, gin, gtg);
    s->lr = 0; s->t = 1;
    if (o->profile_repeats > 0) TRY(cc_exec_profile(ex[0], o->profile_repeats, cc_rank_world_comm(rank)));
    else TRY(model_durations(s, g));
    snap_restore(s, &snap);

    /* decomposition and fusion, judged by the library with the profiled
       durations (the same on every rank, so every rank rewrites alike); the
       rewritten step is profiled again */
    gx = g;
    if (o->decompose || o->fuse) {
        cc_rewrite_desc rd = cc_rewrite_desc_default();
        /* candidates are judged by a short sampling search, closer to the
           final schedule than one list pass (a rewrite that helps a list
           schedule can hurt the optimised one) */
        rd.sched.method = CC_SCHED_SAMPLING;
        rd.sched.budget_schedules = o->budget > 0 && o->budget < 200 ? o->budget : 200;
        cc_rewrite_report rep;
        cc_plan* px = NULL;
        cc_exec* xx = NULL;
        if (o->decompose) {
            TRY(cc_graph_decompose(s->ctx, gx, &rd, &gd, &rep));
            if (s->me == 0) sh->dec = rep;
            gx = gd;
        }
        if (o->fuse) {
            TRY(cc_graph_fuse(s->ctx, gx, &rd, &gf, &rep));
            if (s->me == 0) sh->fus = rep;
            gx = gf;
        }
        rc = cc_plan_create(s->ctx, gx, NULL, &px);
        if (rc == CC_OK) rc = cc_exec_create(s->ctx, px, &be, &xx);
        if (rc == CC_OK) rc = cc_exec_agree(xx, cc_rank_world_comm(rank));
        if (rc == CC_OK && o->profile_repeats > 0) rc = cc_exec_profile(xx, o->profile_repeats, cc_rank_world_comm(rank));
        cc_exec_destroy(xx);
        cc_plan_destroy(px);
        snap_restore(s, &snap);
        if (rc != CC_OK) goto done;
    }
    gk[0] = g;
    gk[1] = gx;
    {
        int nmax = cc_graph_n_ops(gx) > n_ops ? cc_graph_n_ops(gx) : n_ops;
        TRY_MEM((tst = (double*)malloc(sizeof(double) * (size_t)nmax)) && (ten = (double*)malloc(sizeof(double) * (size_t)nmax)));
    }

    /* the library's schedule, the same on every rank; the rewritten step
       is kept only if its schedule is shorter than the one of the step as
       written (with its own measured durations) */
    {
        cc_sched_desc sd = cc_sched_desc_default();
        double mk0;
        int nx;
        if (o->budget > 0) sd.budget_schedules = o->budget;
        TRY(cc_sched_solve(s->ctx, gx, &sd, &sched));
        if (gx != g) {
            cc_schedule plain;
            memset(&plain, 0, sizeof plain);
            TRY(cc_sched_solve(s->ctx, g, &sd, &plain));
            if (s->me == 0) { sh->plain_ms = plain.makespan_us / 1000.0; sh->rewritten_ms = sched.makespan_us / 1000.0; }
            if (plain.makespan_us < sched.makespan_us) {
                cc_schedule_release(s->ctx, &sched);
                sched = plain;
                gx = g;
                if (s->me == 0) sh->rewrites_dropped = 1;
            } else cc_schedule_release(s->ctx, &plain);
        }
        nx = cc_graph_n_ops(gx);
        gk[1] = gx;
        TRY(cc_simulate(s->ctx, g, prog, n_ops, NULL, &mk0));
        if (s->me == 0) {
            sh->pred_ms[0] = mk0 / 1000.0;
            sh->pred_ms[1] = sched.makespan_us / 1000.0;
            sh->pred_exposed_ms[0] = predicted_exposed(g, mk0);
            sh->pred_exposed_ms[1] = predicted_exposed(gx, sched.makespan_us);
            sh->sched_ms = sched.solve_ms;
            sh->lower_bound_ms = sched.lower_bound_us / 1000.0;
            sh->n_ops = n_ops;
            sh->n_ops_run = nx;
            for (i = 0; i < n_ops; i++) if (!cc_op_demand(g, prog[i], S_COMPUTE)) sh->n_colls++;
            for (i = 0; i < nx; i++) if (!cc_op_demand(gx, cc_graph_op(gx, i), S_COMPUTE)) sh->n_colls_run++;
            /* ops issued at another position than in program order (of the graph that runs) */
            for (i = 0; i < nx; i++) if (cc_op_index(gx, sched.order[i]) != i) sh->moved++;
        }
    }
    TRY(cc_plan_create(s->ctx, gx, sched.order, &plan[1]));
    TRY(cc_exec_create(s->ctx, plan[1], &be, &ex[1]));
    TRY(cc_exec_agree(ex[1], cc_rank_world_comm(rank)));
    if (s->me == 0) { sh->n_waits[0] = cc_plan_n_waits(plan[0]); sh->n_waits[1] = cc_plan_n_waits(plan[1]); }
    TRY(cc_plan_create(s->ctx, ge, NULL, &eplan));
    TRY(cc_exec_create(s->ctx, eplan, &be, &eex));
    TRY(cc_exec_agree(eex, cc_rank_world_comm(rank)));

    /* side by side: the two orders alternately on the same state */
    if (o->compare_steps > 0) {
        double* m[2][2];
        int k;
        for (k = 0; k < 2; k++) {
            m[k][0] = (double*)malloc(sizeof(double) * (size_t)o->compare_steps);
            m[k][1] = (double*)malloc(sizeof(double) * (size_t)o->compare_steps);
        }
        if (!(m[0][0] && m[0][1] && m[1][0] && m[1][1])) rc = CC_ERR_OUT_OF_MEMORY;
        for (step = 0; step < o->compare_steps && rc == CC_OK; step++)
            for (k = 0; k < 2 && rc == CC_OK; k++) {
                snap_restore(s, &snap);
                set_batch(s, 0, step, gin, gtg);
                s->lr = 0; s->t = 1;
                rc = cc_exec_step(ex[k]);
                if (rc == CC_OK) rc = measure_step(ex[k], gk[k], tst, ten, &m[k][0][step], &m[k][1][step]);
            }
        if (s->me == 0 && rc == CC_OK)
            for (k = 0; k < 2; k++) {
                sh->cal_ms[k] = median(m[k][0], o->compare_steps);
                sh->cal_exposed_ms[k] = median(m[k][1], o->compare_steps);
            }
        for (k = 0; k < 2; k++) { free(m[k][0]); free(m[k][1]); }
        if (rc != CC_OK) goto done;
        snap_restore(s, &snap);
    }

    /* training, once per order asked for, from the same start */
    for (pass = 0; pass < sh->passes; pass++) {
        int k = sh->pass_order[pass];
        double t0 = wall_s();
        snap_restore(s, &snap);
        if (s->me == 0 && sh->passes > 1) printf("--- training in %s order ---\n", k ? "the library's" : "program");
        for (step = 0; step < o->steps; step++) {
            double ms, exp_ms;
            set_batch(s, 0, step, gin, gtg);
            s->lr = (float)lr_at(o, step);
            s->t = step + 1;
            TRY(cc_exec_step(ex[k]));
            TRY(measure_step(ex[k], gk[k], tst, ten, &ms, &exp_ms));
            if (s->me == 0) {
                sh->losses[pass][step] = s->loss[0];
                sh->step_ms[pass][step] = ms;
                sh->exposed_ms[pass][step] = exp_ms;
                if (o->print_every > 0 && (step % o->print_every == 0 || step == o->steps - 1))
                    printf("step %4d  loss %.4f  lr %.2e  step %7.2f ms (predicted %7.2f)  exposed comm %6.2f ms (predicted %6.2f)\n",
                           step + 1, s->loss[0], s->lr, ms, sh->pred_ms[k], exp_ms, sh->pred_exposed_ms[k]);
            }
            if (step == 0 && pass == 0) {
                unshard_all(s, s->grad, sh->grads0);
                if (s->me == 0) sh->loss0 = s->loss[0];
            }
        }
        if (s->me == 0) sh->train_s = wall_s() - t0;
        if (pass == sh->passes - 1 && sh->trace) {
            char pname[48];
            snprintf(pname, sizeof pname, "rank %d (tp %d, dp %d)", s->me, s->tp_rank, s->dp_rank);
            TRY(cc_exec_timeline(ex[k], tst, ten));
            TRY(cc_trace_add(sh->trace, gk[k], s->me, pname, tst, ten));
        }
    }

    /* validation loss and a sample, with the forward graph */
    s->train = 0;
    if (o->eval_batches > 0) {
        double sum = 0;
        for (i = 0; i < o->eval_batches; i++) {
            set_batch(s, 1, i, gin, gtg);
            TRY(cc_exec_step(eex));
            sum += s->loss[0];
        }
        if (s->me == 0) sh->val_loss = sum / o->eval_batches;
    }
    if (o->sample_chars > 0) {
        int ctx_len = 1, T = s->cfg.T, n = 0;
        int* context = (int*)calloc((size_t)T, sizeof(int));
        uint64_t rs = o->seed ^ 0xA5A5A5A5ull;
        TRY_MEM(context);
        context[0] = sh->data->token_of['\n'] >= 0 ? sh->data->token_of['\n'] : 0;
        for (n = 0; n < o->sample_chars && n < (int)sizeof sh->sample - 1; n++) {
            const float* lg;
            double mx = -1e30, sum = 0, r;
            int v, b, pick = 0, V = s->cfg.V;
            for (b = 0; b < s->Bl; b++)
                for (i = 0; i < T; i++) { s->inputs[b * T + i] = i < ctx_len ? context[i] : 0; s->targets[b * T + i] = 0; }
            rc = cc_exec_step(eex);
            if (rc != CC_OK) { free(context); goto done; }
            lg = s->logits + (size_t)(ctx_len - 1) * V;
            for (v = 0; v < V; v++) if (lg[v] > mx) mx = lg[v];
            for (v = 0; v < V; v++) sum += exp(lg[v] - mx);
            r = rng_unit(&rs) * sum;
            for (v = 0; v < V; v++) { r -= exp(lg[v] - mx); if (r <= 0) { pick = v; break; } pick = v; }
            if (s->me == 0) sh->sample[n] = (char)sh->data->vocab[pick];
            if (ctx_len == T) { memmove(context, context + 1, sizeof(int) * (size_t)(T - 1)); ctx_len--; }
            context[ctx_len++] = pick;
        }
        if (s->me == 0) sh->sample[n] = 0;
        free(context);
    }
    unshard_all(s, s->param, sh->final_params);

done:
    cc_exec_destroy(eex); cc_plan_destroy(eplan);
    for (i = 0; i < 2; i++) { cc_exec_destroy(ex[i]); cc_plan_destroy(plan[i]); }
    if (have_be) cc_backend_destroy(&be);
    cc_schedule_release(s->ctx, &sched);
    cc_graph_destroy(g); cc_graph_destroy(ge); cc_graph_destroy(gd); cc_graph_destroy(gf);
    free(jobs); free(ejobs);
    snap_free(&snap);
    free(gin); free(gtg); free(tst); free(ten); free(prog);
    rs_free(s);
    return rc;
}

/* ---- the command line ------------------------------------------------------- */
static int parse_int(const char* opt, const char* v, int lo, int hi, int* out) {
    char* end;
    long x;
    errno = 0;
    x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "train_gpt: %s needs an integer in %d..%d, got '%s'\n", opt, lo, hi, v ? v : "(nothing)");
        return 0;
    }
    *out = (int)x;
    return 1;
}
static int parse_double(const char* opt, const char* v, double lo, double hi, double* out) {
    char* end;
    double x;
    errno = 0;
    x = v ? strtod(v, &end) : 0;
    if (!v || errno || *end || !(x >= lo && x <= hi)) {
        fprintf(stderr, "train_gpt: %s needs a number in %g..%g, got '%s'\n", opt, lo, hi, v ? v : "(nothing)");
        return 0;
    }
    *out = x;
    return 1;
}

/* 1: run, 0: stop with status 2, -1: stop with status 0 (--help) */
static int parse_args(int argc, char** argv, options* o) {
    int i, seed = 1;
    memset(o, 0, sizeof *o);
    o->cfg.C = 64; o->cfg.L = 2; o->cfg.H = 4; o->cfg.T = 32;
    o->batch = 8; o->tp = 1; o->dp = 1; o->steps = 100; o->lr = 3e-3; o->warmup = 10;
    o->order = 1; o->emulate = 1; o->link_alpha_us = 30; o->link_us_per_kib = 40;
    o->eval_batches = 8; o->sample_chars = 200; o->profile_repeats = 3; o->print_every = 1; o->compare_steps = 5;
    o->decompose = 1; o->fuse = 1;
    for (i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1, takes = 1;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return -1; }
        else if (!strcmp(a, "--data")) o->data = v;
        else if (!strcmp(a, "--layers")) ok = parse_int(a, v, 1, MAX_LAYERS, &o->cfg.L);
        else if (!strcmp(a, "--embd")) ok = parse_int(a, v, 1, 4096, &o->cfg.C);
        else if (!strcmp(a, "--heads")) ok = parse_int(a, v, 1, 4096, &o->cfg.H);
        else if (!strcmp(a, "--seq")) ok = parse_int(a, v, 2, MAX_T, &o->cfg.T);
        else if (!strcmp(a, "--batch")) ok = parse_int(a, v, 1, 1 << 16, &o->batch);
        else if (!strcmp(a, "--tp")) ok = parse_int(a, v, 1, 64, &o->tp);
        else if (!strcmp(a, "--dp")) ok = parse_int(a, v, 1, 64, &o->dp);
        else if (!strcmp(a, "--steps")) ok = parse_int(a, v, 0, 1 << 24, &o->steps);
        else if (!strcmp(a, "--warmup")) ok = parse_int(a, v, 1, 1 << 24, &o->warmup);
        else if (!strcmp(a, "--seed")) ok = parse_int(a, v, 0, 1 << 30, &seed);
        else if (!strcmp(a, "--lr")) ok = parse_double(a, v, 0, 10, &o->lr);
        else if (!strcmp(a, "--link")) ok = parse_double(a, v, 0, 1e6, &o->link_us_per_kib);
        else if (!strcmp(a, "--latency")) ok = parse_double(a, v, 0, 1e6, &o->link_alpha_us);
        else if (!strcmp(a, "--no-link")) { o->emulate = 0; takes = 0; }
        else if (!strcmp(a, "--order")) {
            if (v && !strcmp(v, "program")) o->order = 0;
            else if (v && !strcmp(v, "concerto")) o->order = 1;
            else if (v && !strcmp(v, "both")) o->order = 2;
            else { fprintf(stderr, "train_gpt: --order takes program, concerto or both, got '%s'\n", v ? v : "(nothing)"); ok = 0; }
        }
        else if (!strcmp(a, "--decompose") || !strcmp(a, "--fuse")) {
            int on = v && !strcmp(v, "on"), off = v && !strcmp(v, "off");
            if (!on && !off) { fprintf(stderr, "train_gpt: %s takes on or off, got '%s'\n", a, v ? v : "(nothing)"); ok = 0; }
            else if (!strcmp(a, "--fuse")) o->fuse = on;
            else o->decompose = on;
        }
        else if (!strcmp(a, "--load")) o->load = v;
        else if (!strcmp(a, "--save")) o->save = v;
        else if (!strcmp(a, "--save-init")) o->save_init = v;
        else if (!strcmp(a, "--dump-batches")) o->dump_batches = v;
        else if (!strcmp(a, "--dump-grads")) o->dump_grads = v;
        else if (!strcmp(a, "--losses")) o->losses = v;
        else if (!strcmp(a, "--trace")) o->trace = v;
        else if (!strcmp(a, "--eval")) ok = parse_int(a, v, 0, 1 << 20, &o->eval_batches);
        else if (!strcmp(a, "--sample")) ok = parse_int(a, v, 0, 4000, &o->sample_chars);
        else if (!strcmp(a, "--profile")) ok = parse_int(a, v, 0, 1000, &o->profile_repeats);
        else if (!strcmp(a, "--print-every")) ok = parse_int(a, v, 0, 1 << 24, &o->print_every);
        else if (!strcmp(a, "--compare")) ok = parse_int(a, v, 0, 1000, &o->compare_steps);
        else if (!strcmp(a, "--budget")) ok = parse_int(a, v, 1, 1 << 30, &o->budget);
        else { fprintf(stderr, "train_gpt: unknown option '%s' (--help lists them)\n", a); return 0; }
        if (!ok) return 0;
        if (takes) {
            if (!v) { fprintf(stderr, "train_gpt: %s needs a value\n", a); return 0; }
            i++;
        }
    }
    o->seed = (uint64_t)seed;
    return 1;
}

/* The configuration must split over the layout; says what does not. */
static int check_layout(const options* o, const config* c) {
    if (c->C % c->H) { fprintf(stderr, "train_gpt: the embedding width %d does not divide into %d heads\n", c->C, c->H); return 0; }
    if (c->H % o->tp) {
        fprintf(stderr, "train_gpt: %d heads do not divide by the tensor-parallel degree %d\n", c->H, o->tp);
        return 0;
    }
    if ((4 * c->C) % o->tp) {
        fprintf(stderr, "train_gpt: the MLP's hidden size %d does not divide by the tensor-parallel degree %d\n", 4 * c->C, o->tp);
        return 0;
    }
    if (o->batch % o->dp) {
        fprintf(stderr, "train_gpt: the global batch %d does not divide by the data-parallel degree %d\n", o->batch, o->dp);
        return 0;
    }
    if (o->tp * o->dp > 256) { fprintf(stderr, "train_gpt: at most 256 ranks\n"); return 0; }
    return 1;
}

static int write_batches(const char* path, const options* o, const dataset* d, int T, char* err, size_t errn) {
    FILE* f = fopen(path, "wb");
    uint32_t hdr[4];
    int step, ok = f != NULL;
    int* in = (int*)malloc(sizeof(int) * (size_t)o->batch * T);
    int* tg = (int*)malloc(sizeof(int) * (size_t)o->batch * T);
    if (!f || !in || !tg) {
        snprintf(err, errn, "cannot write batches '%s': %s", path, f ? "out of memory" : strerror(errno));
        if (f) fclose(f);
        free(in); free(tg);
        return 0;
    }
    hdr[0] = (uint32_t)o->steps; hdr[1] = (uint32_t)o->batch; hdr[2] = (uint32_t)T; hdr[3] = 0;
    ok = fwrite("CCGPTBT1", 1, 8, f) == 8 && fwrite(hdr, sizeof hdr, 1, f) == 1;
    for (step = 0; ok && step < o->steps; step++) {
        double lr = lr_at(o, step);
        float lr32 = (float)lr;
        lr = lr32;              /* the trainer steps with the float32 value */
        make_batch(d, 0, o->seed, step, o->batch, T, in, tg);
        ok = fwrite(&lr, 8, 1, f) == 1 && fwrite(in, sizeof(int), (size_t)o->batch * T, f) == (size_t)o->batch * T &&
             fwrite(tg, sizeof(int), (size_t)o->batch * T, f) == (size_t)o->batch * T;
    }
    if (fclose(f) != 0) ok = 0;
    free(in); free(tg);
    if (!ok) snprintf(err, errn, "writing batches '%s' failed", path);
    return ok;
}

static int write_grads(const char* path, double loss, const float* g, size_t P, char* err, size_t errn) {
    FILE* f = fopen(path, "wb");
    uint64_t n = P;
    int ok;
    if (!f) { snprintf(err, errn, "cannot write gradients '%s': %s", path, strerror(errno)); return 0; }
    ok = fwrite("CCGPTGR1", 1, 8, f) == 8 && fwrite(&loss, 8, 1, f) == 1 && fwrite(&n, 8, 1, f) == 1 &&
         fwrite(g, sizeof(float), P, f) == P;
    if (fclose(f) != 0) ok = 0;
    if (!ok) snprintf(err, errn, "writing gradients '%s' failed", path);
    return ok;
}

int main(int argc, char** argv) {
    options o;
    shared* sh = NULL;
    model_layout* layout = NULL;
    dataset data;
    char* text = NULL;
    size_t n_text = 0;
    char err[512];
    config cfg;
    unsigned char ck_vocab[256];
    float* params = NULL;
    size_t P = 0;
    int steps_done = 0, status = 1, i, k, pr = parse_args(argc, argv, &o);
    cc_world_desc wd = cc_world_desc_default();
    cc_link intra, inter;
    cc_world* world = NULL;
    cc_context* ctx = NULL;
    cc_result r;

    memset(&data, 0, sizeof data);
    if (pr <= 0) return pr < 0 ? 0 : 2;
    cfg = o.cfg;
    if (o.load && !load_checkpoint(o.load, &cfg, ck_vocab, &steps_done, &params, &P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        return 1;
    }
    if (!check_layout(&o, &cfg)) { free(params); return 2; }
    if (!load_text(o.data, &text, &n_text, err, sizeof err)) { fprintf(stderr, "train_gpt: %s\n", err); free(params); return 1; }
    if (n_text == 0) { fprintf(stderr, "train_gpt: data file '%s' is empty\n", o.data); goto out; }
    if (!make_dataset(&data, text, n_text, o.load ? ck_vocab : NULL, cfg.V, cfg.T, o.data ? o.data : "the generated corpus", err,
                      sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        goto out;
    }
    cfg.V = data.V;
    layout = (model_layout*)malloc(sizeof *layout);
    sh = (shared*)calloc(1, sizeof *sh);
    if (!layout || !sh) { fprintf(stderr, "train_gpt: out of memory\n"); goto out; }
    layout_model(&cfg, layout);
    if (!params) {
        params = (float*)malloc(sizeof(float) * layout->total);
        if (!params) { fprintf(stderr, "train_gpt: out of memory\n"); goto out; }
        init_params(&cfg, layout, params, o.seed);
    }
    P = layout->total;
    if (o.save_init && !save_checkpoint(o.save_init, &cfg, &data, steps_done, params, P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        goto out;
    }
    if (o.dump_batches && !write_batches(o.dump_batches, &o, &data, cfg.T, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        goto out;
    }

    sh->o = o;
    sh->cfg = cfg;
    sh->layout = layout;
    sh->data = &data;
    sh->init_params = params;
    sh->passes = o.order == 2 ? 2 : 1;
    sh->pass_order[0] = o.order == 2 ? 0 : o.order;
    sh->pass_order[1] = 1;
    sh->final_params = (float*)calloc(P, sizeof(float));
    sh->grads0 = (float*)calloc(P, sizeof(float));
    for (k = 0; k < sh->passes; k++) {
        sh->losses[k] = (double*)calloc((size_t)o.steps + 1, sizeof(double));
        sh->step_ms[k] = (double*)calloc((size_t)o.steps + 1, sizeof(double));
        sh->exposed_ms[k] = (double*)calloc((size_t)o.steps + 1, sizeof(double));
        if (!sh->losses[k] || !sh->step_ms[k] || !sh->exposed_ms[k]) { fprintf(stderr, "train_gpt: out of memory\n"); goto out; }
    }
    if (!sh->final_params || !sh->grads0) { fprintf(stderr, "train_gpt: out of memory\n"); goto out; }
    if (cc_context_create(NULL, &ctx) != CC_OK) { fprintf(stderr, "train_gpt: cannot create a context\n"); goto out; }
    if (o.trace && cc_trace_create(ctx, &sh->trace) != CC_OK) { fprintf(stderr, "train_gpt: %s\n", cc_last_error(ctx)); goto out; }

    printf("model: %d layers, width %d, %d heads, context %d, vocabulary %d: %zu parameters\n", cfg.L, cfg.C, cfg.H, cfg.T, cfg.V, P);
    printf("data: %s, %zu characters (%zu train, %zu validation)\n", o.data ? o.data : "generated corpus", data.n, data.n_train,
           data.n - data.n_train);
    printf("ranks: %d = TP %d x DP %d; global batch %d x %d tokens; ", o.tp * o.dp, o.tp, o.dp, o.batch, cfg.T);
    if (o.emulate)
        printf("emulated link: %.0f us + %.1f us/KiB between nodes, %.0f us + %.1f us/KiB within\n", o.link_alpha_us,
               o.link_us_per_kib, o.link_alpha_us / 2, o.link_us_per_kib / 4);
    else printf("no link emulation\n");
    fflush(stdout);

    wd.n_ranks = o.tp * o.dp;
    wd.ranks_per_node = o.tp;
    wd.emulate_link = o.emulate;
    inter.alpha_us = o.link_alpha_us;
    inter.us_per_byte = o.link_us_per_kib / 1024.0;
    intra.alpha_us = o.link_alpha_us / 2;
    intra.us_per_byte = o.link_us_per_kib / 4 / 1024.0;
    wd.inter_node = &inter;
    wd.intra_node = &intra;
    wd.timeout_s = 120;
    if (cc_world_create(ctx, &wd, &world) != CC_OK) { fprintf(stderr, "train_gpt: %s\n", cc_last_error(ctx)); goto out; }
    r = cc_world_run(world, rank_main, sh);
    if (r != CC_OK) {
        const char* m = cc_world_error(world);
        fprintf(stderr, "train_gpt: %s\n", m && *m ? m : cc_result_description(r));
        goto out;
    }

    /* results */
    if (sh->passes == 2) {
        int same = 1;
        for (i = 0; i < o.steps; i++) if (sh->losses[0][i] != sh->losses[1][i]) same = 0;
        printf("losses of all %d steps identical in program order and the library's order: %s\n", o.steps, same ? "yes" : "NO");
    }
    if (o.steps > 0) printf("trained %d steps in %.1f s\n", o.steps, sh->train_s);
    if (o.eval_batches > 0) printf("validation loss: %.4f (ln V = %.4f)\n", sh->val_loss, log((double)cfg.V));
    if (o.sample_chars > 0) printf("sample:\n%s\n", sh->sample);
    printf("\nwhat the library did to the step (%d ops, %d collectives as written):\n", sh->n_ops, sh->n_colls);
    if (o.decompose)
        printf("  decomposed %d all-reduce(s) with the ops around them into chunks: %d -> %d ops (%d schedules judged)\n",
               sh->dec.n_changed, sh->dec.n_ops_before, sh->dec.n_ops_after, sh->dec.n_evaluations);
    else printf("  decomposition: off\n");
    if (o.fuse)
        printf("  fused collectives into %d bucket(s): %d -> %d collectives (%d schedules judged)\n", sh->fus.n_changed,
               sh->fus.n_colls_before, sh->fus.n_colls_after, sh->fus.n_evaluations);
    else printf("  fusion: off\n");
    if (o.decompose || o.fuse)
        printf("  %s: predicted %.2f ms scheduled with them, %.2f ms without\n",
               sh->rewrites_dropped ? "rewrites not used" : "rewrites kept", sh->rewritten_ms, sh->plain_ms);
    printf("  scheduled %d ops (%d collectives) in %.1f ms: %d issued at another position, cross-stream waits %d -> %d\n",
           sh->n_ops_run, sh->n_colls_run, sh->sched_ms, sh->moved, sh->n_waits[0], sh->n_waits[1]);
    printf("  predicted step: %.2f ms in program order, %.2f ms scheduled (lower bound %.2f): %.2fx\n", sh->pred_ms[0], sh->pred_ms[1],
           sh->lower_bound_ms, sh->pred_ms[1] > 0 ? sh->pred_ms[0] / sh->pred_ms[1] : 0);
    printf("  predicted exposed communication: %.2f ms -> %.2f ms\n", sh->pred_exposed_ms[0], sh->pred_exposed_ms[1]);
    if (o.compare_steps > 0)
        printf("  measured side by side (median of %d steps each): %.2f ms -> %.2f ms: %.2fx; exposed communication %.2f -> %.2f ms\n",
               o.compare_steps, sh->cal_ms[0], sh->cal_ms[1], sh->cal_ms[1] > 0 ? sh->cal_ms[0] / sh->cal_ms[1] : 0,
               sh->cal_exposed_ms[0], sh->cal_exposed_ms[1]);
    for (k = 0; k < sh->passes && o.steps > 0; k++) {
        double* tmp = (double*)malloc(sizeof(double) * (size_t)o.steps);
        double* tmp2 = (double*)malloc(sizeof(double) * (size_t)o.steps);
        if (tmp && tmp2) {
            memcpy(tmp, sh->step_ms[k], sizeof(double) * (size_t)o.steps);
            memcpy(tmp2, sh->exposed_ms[k], sizeof(double) * (size_t)o.steps);
            printf("  training in %s order: median step %.2f ms, exposed communication %.2f ms, %.0f tokens/s\n",
                   sh->pass_order[k] ? "the library's" : "program", median(tmp, o.steps), median(tmp2, o.steps),
                   (double)o.batch * cfg.T / (median(tmp, o.steps) / 1000.0));
        }
        free(tmp); free(tmp2);
    }
    if (o.losses) {
        FILE* f = fopen(o.losses, "w");
        int last = sh->passes - 1;
        if (!f) { fprintf(stderr, "train_gpt: cannot write '%s': %s\n", o.losses, strerror(errno)); goto out; }
        for (i = 0; i < o.steps; i++) fprintf(f, "%.9g\n", sh->losses[last][i]);
        if (fclose(f) != 0) { fprintf(stderr, "train_gpt: writing '%s' failed\n", o.losses); goto out; }
    }
    if (o.dump_grads && o.steps > 0 && !write_grads(o.dump_grads, sh->loss0, sh->grads0, P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        goto out;
    }
    if (o.save && !save_checkpoint(o.save, &cfg, &data, steps_done + o.steps, sh->final_params, P, err, sizeof err)) {
        fprintf(stderr, "train_gpt: %s\n", err);
        goto out;
    }
    if (sh->trace) {
        if (cc_trace_write(sh->trace, o.trace) != CC_OK) { fprintf(stderr, "train_gpt: %s\n", cc_last_error(ctx)); goto out; }
        printf("trace of the last step: %s\n", o.trace);
    }
    status = 0;
out:
    if (world) cc_world_destroy(world);
    if (sh) {
        if (sh->trace) cc_trace_destroy(sh->trace);
        for (k = 0; k < 2; k++) { free(sh->losses[k]); free(sh->step_ms[k]); free(sh->exposed_ms[k]); }
        free(sh->final_params);
        free(sh->grads0);
    }
    if (ctx) cc_context_destroy(ctx);
    free(sh);
    free(layout);
    free(params);
    free(text);
    free(data.tokens);
    return status;
}
