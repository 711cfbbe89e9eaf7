/* gpt_common.h - what the example GPT trainers share, whatever runs their
   kernels: the model's configuration and parameter layout, the options and
   the command line, the data (vocabulary, splits, the generated corpus,
   batches), the files of FORMATS.md (checkpoints, batches, gradients), a
   rank's tensors, and the construction of the step's graph: ops, their
   regions and their streams, with each op's work taken from the trainer's
   table of kernels (gpt_kernel_table).

   Plain C99, host code only. Each trainer is one translation unit that
   includes concerto.h and then this header; every function here is static.
   Sections:
     >>config    configuration, options, usage
     >>util      splitmix64, medians, the clock
     >>params    parameter shapes, order, sharding, initialisation
     >>data      text, vocabulary, splits, batches, learning rate
     >>files     checkpoints, batches, gradients
     >>cmdline   parsing the options, checking the layout
     >>model     a rank's tensors; the table of kernels (gpt_kernel_table)
     >>ops       the op records: what each op's kernel reads and writes
     >>graph     building the step's graph from the records, its fingerprint */
#ifndef GPT_COMMON_H_INCLUDED
#define GPT_COMMON_H_INCLUDED

#ifndef CONCERTO_H_INCLUDED
#error "include concerto.h first"
#endif

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LAYERS 64
#define MAX_PARAMS (2 + 12 * MAX_LAYERS + 2)
#define MAX_T 1024

/* ---- >>config: configuration and options --------------------------------- */
/* The program's name in messages: the trainer sets it. */
static const char* gpt_program = "train_gpt";

typedef struct config { int V, C, L, H, T; } config;

enum { GPT_F32 = 0, GPT_BF16 = 1 };   /* options.dtype */

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
    int budget;               /* schedules the scheduler may try, for the step and for judging each
                                 candidate rewrite; 0: the library's default */
    int graph_fingerprint;    /* print the step's graph fingerprint (graph_fingerprint) and stop */
    int dtype;                /* GPT_F32, or GPT_BF16: matmuls and collectives in bfloat16 (CUDA trainer) */
    int cuda_graphs;          /* capture the step into a CUDA graph and replay it (CUDA trainer) */
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
            "  --trace FILE         Chrome trace of the last step (every rank, measured and predicted)\n"
            "  --eval N             validation batches at the end (default 8)\n"
            "  --sample N           characters of generated text at the end (default 200)\n"
            "  --profile N          repeats per op when profiling (default 3); 0: no profiling, durations\n"
            "                       from a model (1 GB/s over the bytes an op touches; collectives on the\n"
            "                       emulated link), the same on every machine\n"
            "  --print-every N      print every Nth step (default 1)\n"
            "  --compare N          steps timed in each order side by side before training (default 5)\n"
            "  --budget N           schedules the scheduler may try, for the step and for judging each\n"
            "                       candidate rewrite (default 1000; 0: the library's default, 5000)\n"
            "  --graph-fingerprint  print the fingerprints of rank 0's graphs (training step, evaluation)\n"
            "                       as built, and stop: the same model and layout give the same ones\n"
            "  --dtype f32|bf16     f32 (default); bf16 keeps float32 master weights and runs matmuls and\n"
            "                       collectives in bfloat16 (train_gpt_cuda only)\n"
            "  --cuda-graphs on|off capture the step once into a CUDA graph and replay it (train_gpt_cuda\n"
            "                       only; default off)\n");
}

/* ---- >>util: small utilities ---------------------------------------------- */
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

/* ---- >>params: shapes, order, sharding ------------------------------------ */
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

/* ---- >>data ----------------------------------------------------------------- */
typedef struct dataset {
    int V;
    unsigned char vocab[256];  /* token -> byte */
    int token_of[256];         /* byte -> token, -1 if absent */
    int* tokens; size_t n;     /* the whole text, encoded */
    size_t n_train;            /* the first 90% trains, the rest validates */
} dataset;

/* A corpus with structure to learn when no file is given: sentences from a
   small grammar, deterministic (FORMATS.md). */
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
        /* one draw per word, in this order (not in an argument list, whose
           order of evaluation C leaves open) */
        const char* end = rng_next(&s) % 5 == 0 ? "\n" : " ";
        const char* t = tail[rng_next(&s) % 6];
        const char* o = obj[rng_next(&s) % 8];
        const char* v = verb[rng_next(&s) % 8];
        const char* su = subj[rng_next(&s) % 8];
        n += (size_t)snprintf(text + n, 128, "%s %s %s%s%s", su, v, o, t, end);
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

/* ---- >>files: checkpoints, batches, gradients (FORMATS.md) ------------------ */
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


/* ---- >>cmdline: the command line ----------------------------------------------- */
static int parse_int(const char* opt, const char* v, int lo, int hi, int* out) {
    char* end;
    long x;
    errno = 0;
    x = v ? strtol(v, &end, 10) : 0;
    if (!v || errno || *end || x < lo || x > hi) {
        fprintf(stderr, "%s: %s needs an integer in %d..%d, got '%s'\n", gpt_program, opt, lo, hi, v ? v : "(nothing)");
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
        fprintf(stderr, "%s: %s needs a number in %g..%g, got '%s'\n", gpt_program, opt, lo, hi, v ? v : "(nothing)");
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
    o->decompose = 1; o->fuse = 1; o->budget = 1000;
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
        else if (!strcmp(a, "--graph-fingerprint")) { o->graph_fingerprint = 1; takes = 0; }
        else if (!strcmp(a, "--order")) {
            if (v && !strcmp(v, "program")) o->order = 0;
            else if (v && !strcmp(v, "concerto")) o->order = 1;
            else if (v && !strcmp(v, "both")) o->order = 2;
            else { fprintf(stderr, "%s: --order takes program, concerto or both, got '%s'\n", gpt_program, v ? v : "(nothing)"); ok = 0; }
        }
        else if (!strcmp(a, "--decompose") || !strcmp(a, "--fuse") || !strcmp(a, "--cuda-graphs")) {
            int on = v && !strcmp(v, "on"), off = v && !strcmp(v, "off");
            if (!on && !off) { fprintf(stderr, "%s: %s takes on or off, got '%s'\n", gpt_program, a, v ? v : "(nothing)"); ok = 0; }
            else if (!strcmp(a, "--fuse")) o->fuse = on;
            else if (!strcmp(a, "--cuda-graphs")) o->cuda_graphs = on;
            else o->decompose = on;
        }
        else if (!strcmp(a, "--dtype")) {
            if (v && !strcmp(v, "f32")) o->dtype = GPT_F32;
            else if (v && !strcmp(v, "bf16")) o->dtype = GPT_BF16;
            else { fprintf(stderr, "%s: --dtype takes f32 or bf16, got '%s'\n", gpt_program, v ? v : "(nothing)"); ok = 0; }
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
        else if (!strcmp(a, "--budget")) ok = parse_int(a, v, 0, 1 << 30, &o->budget);
        else { fprintf(stderr, "%s: unknown option '%s' (--help lists them)\n", gpt_program, a); return 0; }
        if (!ok) return 0;
        if (takes) {
            if (!v) { fprintf(stderr, "%s: %s needs a value\n", gpt_program, a); return 0; }
            i++;
        }
    }
    o->seed = (uint64_t)seed;
    return 1;
}

/* The configuration must split over the layout; says what does not. */
static int check_layout(const options* o, const config* c) {
    if (c->C % c->H) { fprintf(stderr, "%s: the embedding width %d does not divide into %d heads\n", gpt_program, c->C, c->H); return 0; }
    if (c->H % o->tp) {
        fprintf(stderr, "%s: %d heads do not divide by the tensor-parallel degree %d\n", gpt_program, c->H, o->tp);
        return 0;
    }
    if ((4 * c->C) % o->tp) {
        fprintf(stderr, "%s: the MLP's hidden size %d does not divide by the tensor-parallel degree %d\n", gpt_program, 4 * c->C, o->tp);
        return 0;
    }
    if (o->batch % o->dp) {
        fprintf(stderr, "%s: the global batch %d does not divide by the data-parallel degree %d\n", gpt_program, o->batch, o->dp);
        return 0;
    }
    if (o->tp * o->dp > 256) { fprintf(stderr, "%s: at most 256 ranks\n", gpt_program); return 0; }
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

/* ---- >>model: a rank's tensors ------------------------------------------------- */
/* Shapes on one rank: N = Bl * T rows of tokens (Bl = B/DP sequences of T
   positions), C the embedding width, V the vocabulary; this TP rank holds
   Hl = H/TP heads of size hs = C/H, Cl = C/TP = Hl * hs of the attention's
   width and F = 4C/TP of the MLP's hidden units. */

/* A tensor of the rank, which the graph knows as a buffer. rows > 0: its
   leading dimension is the batch (rows of tokens, or of sequences), along
   which the library may cut the ops that use it into chunks
   (decomposition). A slot is a part of another tensor (`whole`): its
   region of that tensor's buffer. */
typedef struct tensor {
    const char* name;
    void* p;
    size_t bytes;
    uint64_t rows;
    int id;                        /* index among the rank's tensors */
    int bf16;                      /* its elements are bfloat16 (--dtype bf16: the tensors that are
                                      all-reduced); else float32, or as its name says (tokens, norms) */
    const struct tensor* whole;    /* a slot: the tensor it is part of; else NULL */
} tensor;

/* One block's parameters (or their gradients): this TP rank's shards. */
typedef struct layer_weights {
    tensor *ln1_w, *ln1_b;         /* [C] */
    tensor *attn_w, *attn_b;       /* [3 Cl][C], [3 Cl]: this rank's rows of q, k and v */
    tensor *proj_w, *proj_b;       /* [C][Cl], [C] */
    tensor *ln2_w, *ln2_b;         /* [C] */
    tensor *fc_w, *fc_b;           /* [F][C], [F] */
    tensor *fcproj_w, *fcproj_b;   /* [C][F], [C] */
} layer_weights;

typedef struct model_weights {
    tensor* wte;                   /* [V][C] */
    tensor* wpe;                   /* [T][C] */
    layer_weights h[MAX_LAYERS];
    tensor *lnf_w, *lnf_b;         /* [C] */
} model_weights;

/* One block's activations and their gradients. */
typedef struct layer_acts {
    tensor *ln1, *ln1_mean, *ln1_rstd;   /* [N][C], [N], [N] */
    tensor* qkv;                         /* [N][3 Cl] */
    tensor* att;                         /* [Bl][Hl][T][T] softmax probabilities (rows: sequences) */
    tensor* atty;                        /* [N][Cl] attention output, heads side by side */
    tensor* proj;                        /* [N][C] partial projection, all-reduced over TP */
    tensor* x1;                          /* [N][C] residual stream after attention */
    tensor *ln2, *ln2_mean, *ln2_rstd;   /* [N][C], [N], [N] */
    tensor *fch, *fch_gelu;              /* [N][F] before and after GELU */
    tensor* fcproj;                      /* [N][C] partial MLP output, all-reduced over TP */
    tensor* dx1;                         /* [N][C] */
    tensor* dfch;                        /* [N][F] */
    tensor* dln2;                        /* [N][C] partial, all-reduced */
    tensor* datty;                       /* [N][Cl] */
    tensor* dqkv;                        /* [N][3 Cl] */
    tensor* dln1;                        /* [N][C] partial, all-reduced */
} layer_acts;

/* Parameters, gradients, two moments and one squared-norm slot per
   parameter; per block 20 activations; the residual streams; 13 more. */
#define MAX_TENSORS (5 * MAX_PARAMS + 22 * MAX_LAYERS + 16)
#define MAX_BLOCKS 8

typedef struct adamw_step { float lr; int t; } adamw_step;   /* t counts from 1 */

/* Each op's record (below): the graph's ops point at them. */
typedef struct op_args op_args;
typedef struct op_store {
    op_args** ops; int n, cap;
    uint64_t fingerprint;          /* of the graph built with these records (graph_fingerprint) */
} op_store;

/* The kernels, by the kind of op. A trainer gives one table: the work of
   every kind (each entry is required) and the memory its tensors live in.
   The graph builder below takes each op's work from it, so the CPU trainer
   and a GPU trainer build the same graph, op for op, with their own
   kernels behind it. Nothing in this header reads or writes the tensors'
   memory: it only carves it and takes addresses and offsets in it, so the
   memory may be a device's. */
enum gpt_op_kind {
    GPT_OP_EMBED, GPT_OP_LAYERNORM, GPT_OP_MATMUL, GPT_OP_MATMUL_GELU, GPT_OP_ATTENTION, GPT_OP_RESIDUAL,
    GPT_OP_CROSSENTROPY, GPT_OP_MATMUL_BWD_W, GPT_OP_MATMUL_BWD_X, GPT_OP_MATMUL_GELU_BWD_X, GPT_OP_LAYERNORM_BWD,
    GPT_OP_ATTENTION_BWD, GPT_OP_EMBED_BWD, GPT_OP_SUMSQ, GPT_OP_GRAD_NORM, GPT_OP_ADAMW,
    GPT_OP_KINDS
};

typedef struct op_view op_view;
/* The work of one op (or of one chunk of it, v's rows): a's tensors as v
   gives them, on v's stream. */
typedef void (*gpt_kernel_fn)(const op_args* a, const op_view* v);

typedef struct gpt_kernel_table {
    gpt_kernel_fn run[GPT_OP_KINDS];          /* by enum gpt_op_kind */
    void* (*alloc_zeroed)(size_t n_bytes);     /* one group of tensors, zeroed; NULL: out of memory */
    void (*free_memory)(void* p);              /* what alloc_zeroed returned */
    /* Copies between the host and that memory, complete when they return
       (the host then reads or reuses its side); 1, or 0 on failure. */
    int (*copy_in)(void* dst, const void* host_src, size_t n_bytes);
    int (*copy_out)(void* host_dst, const void* src, size_t n_bytes);
    /* What failed in a kernel or a copy of the calling thread since the
       last call (then cleared), or NULL; may be NULL where nothing can. */
    const char* (*error)(void);
} gpt_kernel_table;

/* A rank's part of the model: its sizes, its tensors (holding this rank's
   shards), its communicators. The graph of the step is built from this
   alone (build_graph). */
typedef struct gpt_model {
    const gpt_kernel_table* kernels;
    cc_context* ctx;
    int tp_rank, dp_rank;
    config cfg;
    int TP, DP, Bl, N, Cl, F, Hl;
    const model_layout* layout;
    int np;                                /* parameter tensors */
    /* the tensors, and their memory: one allocation per group */
    tensor tensors[MAX_TENSORS]; int n_tensors;
    void* block[MAX_BLOCKS]; size_t block_bytes[MAX_BLOCKS]; int n_blocks;
    tensor *param, *grad, *adam_m, *adam_v;  /* [np] each, in parameter order */
    model_weights w, dw;                   /* the parameters and their gradients by name */
    tensor* inputs;                        /* [N] tokens */
    tensor* targets;                       /* [N] */
    tensor* x[MAX_LAYERS + 1];             /* [N][C] the residual stream into block l (x[L]: out of the last) */
    tensor* dx[MAX_LAYERS + 1];            /* [N][C] its gradient */
    layer_acts acts[MAX_LAYERS];
    tensor *lnf, *lnf_mean, *lnf_rstd;     /* [N][C], [N], [N] */
    tensor *logits, *dlogits;              /* [N][V] */
    tensor* dlnf;                          /* [N][C] */
    tensor* loss;                          /* [1] the mean over the global batch */
    tensor* sumsq;                         /* [np] float64: each gradient's squared norm */
    tensor* sumsq_slot;                    /* [np] slots of sumsq, one per parameter */
    tensor* normsq;                        /* [1] float64: the squared norm of the whole gradient */
    tensor* step_t;                        /* [1] adamw_step: AdamW's learning rate and step count */
    adamw_step step;                       /* the host's copy of step_t, which it writes before each step */
    int bf16;                              /* --dtype bf16: the all-reduced tensors are bfloat16 */
    cc_dtype reduced;                      /* their type: CC_DTYPE_BFLOAT16, or CC_DTYPE_FLOAT32 */
    cc_comm *tp_comm, *dp_comm;            /* NULL where TP or DP is 1 */
} gpt_model;

/* World rank `me` of the layout o: its sizes (rows of tokens, shards). */
static void model_init(gpt_model* s, const gpt_kernel_table* k, cc_context* ctx, const options* o, const config* cfg,
                       const model_layout* layout, int me) {
    s->kernels = k;
    s->ctx = ctx;
    s->cfg = *cfg;
    s->TP = o->tp; s->DP = o->dp;
    s->tp_rank = me % o->tp; s->dp_rank = me / o->tp;
    s->Bl = o->batch / o->dp; s->N = s->Bl * s->cfg.T;
    s->Cl = s->cfg.C / o->tp; s->F = 4 * s->cfg.C / o->tp; s->Hl = s->cfg.H / o->tp;
    s->bf16 = o->dtype == GPT_BF16;
    s->reduced = s->bf16 ? CC_DTYPE_BFLOAT16 : CC_DTYPE_FLOAT32;
    s->layout = layout; s->np = layout->n;
}

static tensor* tensor_add(gpt_model* s, const char* name, size_t bytes, uint64_t rows) {
    tensor* t = &s->tensors[s->n_tensors];
    memset(t, 0, sizeof *t);
    t->name = name;
    t->bytes = bytes;
    t->rows = rows;
    t->id = s->n_tensors++;
    return t;
}
/* A tensor of n elements of the all-reduced type: bfloat16 with --dtype
   bf16, else float32. */
static tensor* tensor_add_reduced(gpt_model* s, const char* name, size_t n, uint64_t rows) {
    tensor* t = tensor_add(s, name, n * (s->bf16 ? 2 : sizeof(float)), rows);
    t->bf16 = s->bf16;
    return t;
}
/* Elements of a tensor of floats (float32 or bfloat16). */
static size_t tensor_elems(const tensor* t) { return t->bytes / (t->bf16 ? 2 : sizeof(float)); }

/* Gives the tensors added since tensor `first` their memory: one zeroed
   allocation, carved in order, each tensor starting at a multiple of
   `align` bytes after the group's start (1: back to back, as the gradients
   must be for the library to fuse their all-reduces; 16 where float32 and
   bfloat16 tensors alternate, so that every tensor is aligned for any
   element type and for vector loads). */
static size_t carve_offset(size_t at, size_t align) { return (at + align - 1) / align * align; }
static int tensor_carve(gpt_model* s, int first, size_t align) {
    size_t total = 0;
    char* p;
    int i;
    for (i = first; i < s->n_tensors; i++) total = carve_offset(total, align) + s->tensors[i].bytes;
    if (s->n_blocks == MAX_BLOCKS || !(p = (char*)s->kernels->alloc_zeroed(total ? total : 1))) return 0;
    s->block[s->n_blocks] = p;
    s->block_bytes[s->n_blocks++] = total;
    for (i = first, total = 0; i < s->n_tensors; i++) {
        total = carve_offset(total, align);
        s->tensors[i].p = p + total;
        total += s->tensors[i].bytes;
    }
    return 1;
}

/* Points the names of w at t[0..], one tensor per parameter in the order of
   FORMATS.md. */
static void name_weights(model_weights* w, tensor* t, int L) {
    int l;
    w->wte = t++;
    w->wpe = t++;
    for (l = 0; l < L; l++) {
        layer_weights* h = &w->h[l];
        h->ln1_w = t++; h->ln1_b = t++;
        h->attn_w = t++; h->attn_b = t++;
        h->proj_w = t++; h->proj_b = t++;
        h->ln2_w = t++; h->ln2_b = t++;
        h->fc_w = t++; h->fc_b = t++;
        h->fcproj_w = t++; h->fcproj_b = t++;
    }
    w->lnf_w = t++;
    w->lnf_b = t;
}

/* Parameters, gradients and AdamW's moments: this rank's shards. The
   gradients lie back to back in parameter order, so that the library can
   fuse their all-reduces into buckets. */
static int create_weights(gpt_model* s) {
    int p, first;
    s->param = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, s->layout->p[p].name, sizeof(float) * shard_size(&s->layout->p[p], s->TP), 0);
    if (!tensor_carve(s, s->param->id, 1)) return 0;
    s->grad = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add_reduced(s, "grad", s->param[p].bytes / sizeof(float), 0);
    if (!tensor_carve(s, s->grad->id, 1)) return 0;
    first = s->n_tensors;
    s->adam_m = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, "adam_m", s->param[p].bytes, 0);
    s->adam_v = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) tensor_add(s, "adam_v", s->param[p].bytes, 0);
    if (!tensor_carve(s, first, 16)) return 0;
    name_weights(&s->w, s->param, s->cfg.L);
    name_weights(&s->dw, s->grad, s->cfg.L);
    return 1;
}

/* Activations, rows of tokens (N) unless stated. */
static int create_activations(gpt_model* s) {
    size_t f = sizeof(float), N = (size_t)s->N, C = (size_t)s->cfg.C, Cl = (size_t)s->Cl, F = (size_t)s->F;
    size_t T = (size_t)s->cfg.T, V = (size_t)s->cfg.V;
    int l, L = s->cfg.L, first = s->n_tensors;
    s->inputs = tensor_add(s, "inputs", sizeof(int) * N, N);
    s->targets = tensor_add(s, "targets", sizeof(int) * N, N);
    if (!tensor_carve(s, first, 16)) return 0;
    first = s->n_tensors;
    for (l = 0; l <= L; l++) {
        s->x[l] = tensor_add(s, "x", f * N * C, N);
        s->dx[l] = tensor_add(s, "dx", f * N * C, N);
    }
    for (l = 0; l < L; l++) {
        layer_acts* a = &s->acts[l];
        a->ln1 = tensor_add(s, "ln1", f * N * C, N);
        a->ln1_mean = tensor_add(s, "mean1", f * N, N);
        a->ln1_rstd = tensor_add(s, "rstd1", f * N, N);
        a->qkv = tensor_add(s, "qkv", f * N * 3 * Cl, N);
        a->att = tensor_add(s, "att", f * (size_t)s->Bl * (size_t)s->Hl * T * T, (uint64_t)s->Bl);
        a->atty = tensor_add(s, "attn_out", f * N * Cl, N);
        a->proj = tensor_add_reduced(s, "proj_partial", N * C, N);
        a->x1 = tensor_add(s, "x1", f * N * C, N);
        a->ln2 = tensor_add(s, "ln2", f * N * C, N);
        a->ln2_mean = tensor_add(s, "mean2", f * N, N);
        a->ln2_rstd = tensor_add(s, "rstd2", f * N, N);
        a->fch = tensor_add(s, "fc", f * N * F, N);
        a->fch_gelu = tensor_add(s, "gelu", f * N * F, N);
        a->fcproj = tensor_add_reduced(s, "fcproj_partial", N * C, N);
        a->dx1 = tensor_add(s, "dx1", f * N * C, N);
        a->dfch = tensor_add(s, "dfc", f * N * F, N);
        a->dln2 = tensor_add_reduced(s, "dln2_partial", N * C, N);
        a->datty = tensor_add(s, "dattn_out", f * N * Cl, N);
        a->dqkv = tensor_add(s, "dqkv", f * N * 3 * Cl, N);
        a->dln1 = tensor_add_reduced(s, "dln1_partial", N * C, N);
    }
    s->lnf = tensor_add(s, "lnf", f * N * C, N);
    s->lnf_mean = tensor_add(s, "meanf", f * N, N);
    s->lnf_rstd = tensor_add(s, "rstdf", f * N, N);
    s->logits = tensor_add(s, "logits", f * N * V, N);
    s->dlogits = tensor_add(s, "dlogits", f * N * V, N);
    s->dlnf = tensor_add(s, "dlnf", f * N * C, N);
    s->loss = tensor_add(s, "loss", f, 0);
    return tensor_carve(s, first, 16);
}

/* The squared norms of the gradients: one float64 slot per parameter, and
   their sum. */
static int create_norms(gpt_model* s) {
    int p, first = s->n_tensors;
    s->sumsq = tensor_add(s, "sumsq", sizeof(double) * (size_t)s->np, 0);
    s->normsq = tensor_add(s, "normsq", sizeof(double), 0);
    s->step_t = tensor_add(s, "adamw_step", sizeof(adamw_step), 0);
    if (!tensor_carve(s, first, 16)) return 0;
    s->sumsq_slot = &s->tensors[s->n_tensors];
    for (p = 0; p < s->np; p++) {
        tensor* t = tensor_add(s, "sumsq", sizeof(double), 0);
        t->p = (double*)s->sumsq->p + p;
        t->whole = s->sumsq;
    }
    return 1;
}

/* Every tensor of the rank, in groups: 1, or 0 when out of memory. */
static int model_create_tensors(gpt_model* s) {
    return create_weights(s) && create_activations(s) && create_norms(s);
}

static void model_free(gpt_model* s) {
    int i;
    for (i = 0; i < s->n_blocks; i++) s->kernels->free_memory(s->block[i]);
    s->n_blocks = 0;
}

/* ---- >>ops: the op records --------------------------------------------------- */
/* An op's record is the one place its tensors are named: the tensors its
   kernel reads (in) and writes (out), in the kernel's argument order, and
   the sizes it needs. The graph learns the op's read and write regions from
   the record (add_op), and the op's work gets the record and nothing else,
   so a tensor that is not declared cannot reach a kernel, and every
   dependency the library derives is one the kernel has. NULL entries are
   absent optional arguments (a bias, a residual, the loss's gradient).
   Besides tensors a record holds only sizes and flags (AdamW's learning
   rate and step count are a tensor, which the host writes before a step). */
#define OP_MAX_IN 6
#define OP_MAX_OUT 3

/* An op's tensors for one chunk: rows [c R/n, (c+1) R/n) of each tensor of
   R rows (the rows the library gives the chunk's regions), all of a tensor
   without rows; N, the rows of tokens of the chunk. The whole op is chunk 0
   of 1. */
struct op_view {
    void* stream;                  /* the op's stream (the backend's): where a device kernel runs */
    int N;
    int first;                     /* chunk 0: outputs summed over rows are overwritten, not added to */
    const void* in[OP_MAX_IN];
    void* out[OP_MAX_OUT];
};

struct op_args {
    int kind;                      /* enum gpt_op_kind */
    gpt_kernel_fn run;             /* the trainer's kernel of that kind */
    const tensor* in[OP_MAX_IN];   /* read */
    tensor* out[OP_MAX_OUT];       /* written */
    int N;                         /* rows of tokens */
    int C, OC;                     /* widths: a matmul's input and output; a norm's or residual's C */
    int B, T, NH, HS;              /* sequences, positions, heads and head size (attention, embeddings) */
    int V;                         /* vocabulary (cross-entropy) */
    size_t n;                      /* elements (the per-parameter ops) */
    int counted;                   /* sumsq: counts towards the norm on this rank */
    float weight_decay;            /* AdamW */
    int chunked;                   /* the library may run the op in chunks of rows (add_op's chunks): its
                                      kernel must give each row the same result whatever the chunk */
};

static void* rows_of(const tensor* t, int chunk, int n_chunks) {
    if (!t) return NULL;
    if (t->rows == 0) return t->p;
    return (char*)t->p + t->bytes / t->rows * (size_t)(t->rows * (uint64_t)chunk / (uint64_t)n_chunks);
}

static op_view view_of(const op_args* a, int chunk, int n_chunks) {
    op_view v;
    int i;
    v.stream = NULL;
    v.N = (int)((int64_t)a->N * (chunk + 1) / n_chunks - (int64_t)a->N * chunk / n_chunks);
    v.first = chunk == 0;
    for (i = 0; i < OP_MAX_IN; i++) v.in[i] = rows_of(a->in[i], chunk, n_chunks);
    for (i = 0; i < OP_MAX_OUT; i++) v.out[i] = rows_of(a->out[i], chunk, n_chunks);
    return v;
}

/* The work of a compute op (cc_op_fn) and of one of its chunks (cc_op_chunk_fn):
   the record's kernel. */
static void op_whole(void* stream, void* user_data) {
    const op_args* a = (const op_args*)user_data;
    op_view v = view_of(a, 0, 1);
    v.stream = stream;
    a->run(a, &v);
}
static void op_chunk(void* stream, void* user_data, int chunk, int n_chunks) {
    const op_args* a = (const op_args*)user_data;
    op_view v = view_of(a, chunk, n_chunks);
    v.stream = stream;
    a->run(a, &v);
}

/* ---- >>graph: building the step's graph --------------------------------------- */
enum { S_COMPUTE = 0, S_TP = 1, S_DP = 2 };   /* streams */
enum { WHOLE = 0, IN_CHUNKS = 1 };            /* add_op: the library may cut the op into chunks */

typedef struct builder {
    cc_graph* g;
    cc_buffer* buf;                /* [tensor id]: the tensor's buffer in g (id 0: not added yet) */
    op_store* store;
    const gpt_kernel_table* kernels;
    uint64_t fingerprint;          /* graph_fingerprint: of the ops added so far */
    cc_result rc;
} builder;

/* A new record for an op of this kernel, zeroed, owned by the store. */
static op_args* op_new(builder* b, int kind, int N) {
    op_store* st = b->store;
    op_args* a;
    if (b->rc != CC_OK) return NULL;
    if (st->n == st->cap) {
        int cap = st->cap ? 2 * st->cap : 256;
        op_args** grown = (op_args**)realloc(st->ops, sizeof(op_args*) * (size_t)cap);
        if (!grown) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
        st->ops = grown;
        st->cap = cap;
    }
    if (!(a = (op_args*)calloc(1, sizeof *a))) { b->rc = CC_ERR_OUT_OF_MEMORY; return NULL; }
    st->ops[st->n++] = a;
    a->kind = kind;
    a->run = b->kernels->run[kind];
    a->N = N;
    return a;
}

static void op_store_free(op_store* st) {
    int i;
    for (i = 0; i < st->n; i++) free(st->ops[i]);
    free(st->ops);
    memset(st, 0, sizeof *st);
}

static cc_region region_of(builder* b, const tensor* t) {
    const tensor* whole = t->whole ? t->whole : t;
    cc_region r;
    memset(&r, 0, sizeof r);
    if (b->buf[whole->id].id == 0 && b->rc == CC_OK) b->rc = cc_graph_add_buffer(b->g, whole->name, whole->bytes, &b->buf[whole->id]);
    r.buffer = b->buf[whole->id];
    r.offset_bytes = (uint64_t)((const char*)t->p - (const char*)whole->p);
    r.n_bytes = t->bytes;
    r.split_rows = t->rows;
    return r;
}

/* The graph's fingerprint: FNV-1a over its ops in program order, each by
   its name, stream, duration (as added: deterministic), whether it may run
   in chunks, its kind or its collective (kind, dtype, reduction, elements,
   the communicator's size) and its regions, read then written (the
   buffer's name and size, the region's offset, bytes and rows). The same
   model, layout and rank give the same fingerprint whatever runs the
   kernels: no addresses, no timings. */
static void fingerprint_u64(builder* b, uint64_t v) { b->fingerprint = fnv1a(b->fingerprint, &v, sizeof v); }
static void fingerprint_str(builder* b, const char* str) { b->fingerprint = fnv1a(b->fingerprint, str, strlen(str) + 1); }

static void fingerprint_tensor(builder* b, const tensor* t) {
    const tensor* whole = t->whole ? t->whole : t;
    fingerprint_str(b, whole->name);
    fingerprint_u64(b, whole->bytes);
    fingerprint_u64(b, (uint64_t)((const char*)t->p - (const char*)whole->p));
    fingerprint_u64(b, t->bytes);
    fingerprint_u64(b, t->rows);
}

static void fingerprint_op(builder* b, const cc_op_desc* d, const op_args* a, int chunks) {
    const cc_collective* co = d->coll;
    uint64_t duration;
    int i;
    memcpy(&duration, &d->duration_us, sizeof duration);
    fingerprint_str(b, d->name);
    fingerprint_u64(b, (uint64_t)d->stream);
    fingerprint_u64(b, duration);
    fingerprint_u64(b, (uint64_t)chunks);
    if (co) {
        fingerprint_u64(b, 1000 + (uint64_t)co->kind);
        fingerprint_u64(b, (uint64_t)co->dtype);
        fingerprint_u64(b, (uint64_t)co->reduce);
        fingerprint_u64(b, (uint64_t)co->n_elems);
        fingerprint_u64(b, (uint64_t)cc_comm_size(co->comm));
    } else fingerprint_u64(b, (uint64_t)a->kind);
    fingerprint_u64(b, (uint64_t)d->n_reads);
    for (i = 0; i < OP_MAX_IN; i++) if (a->in[i]) fingerprint_tensor(b, a->in[i]);
    fingerprint_u64(b, (uint64_t)d->n_writes);
    for (i = 0; i < OP_MAX_OUT; i++) if (a->out[i]) fingerprint_tensor(b, a->out[i]);
}

/* Adds the op of record a (or the collective coll on a's one tensor): its
   regions are a's tensors, read then written, in a's order. With chunks,
   every tensor with rows must have the op's N rows: the library cuts them
   as view_of does. */
static void add_op(builder* b, const char* name, int l, int stream, op_args* a, int chunks, const cc_collective* coll) {
    cc_op_desc d = cc_op_desc_default();
    cc_region reads[OP_MAX_IN], writes[OP_MAX_OUT];
    char full[64];
    int i;
    if (b->rc != CC_OK) return;
    if (l >= 0) snprintf(full, sizeof full, "h%d.%s", l, name);
    else snprintf(full, sizeof full, "%s", name);
    for (i = 0; i < OP_MAX_IN + OP_MAX_OUT; i++) {
        const tensor* t = i < OP_MAX_IN ? a->in[i] : a->out[i - OP_MAX_IN];
        if (chunks && t && t->rows > 0 && t->rows != (uint64_t)a->N) {
            fprintf(stderr, "%s: op '%s' runs in chunks of %d rows, but '%s' has %llu rows\n", gpt_program, full, a->N, t->name,
                    (unsigned long long)t->rows);
            b->rc = CC_ERR_INVALID_ARG;
            return;
        }
    }
    for (i = 0; i < OP_MAX_IN; i++) if (a->in[i]) reads[d.n_reads++] = region_of(b, a->in[i]);
    for (i = 0; i < OP_MAX_OUT; i++) if (a->out[i]) writes[d.n_writes++] = region_of(b, a->out[i]);
    a->chunked = chunks != 0;
    d.name = full;
    d.duration_us = 1;
    d.stream = stream;
    d.reads = reads;
    d.writes = writes;
    d.coll = coll;
    if (a->run) {
        d.fn = op_whole;
        d.user_data = a;
        if (chunks) d.chunk_fn = op_chunk;
    }
    fingerprint_op(b, &d, a, chunks);
    if (b->rc == CC_OK) b->rc = cc_graph_add_op(b->g, &d, NULL);
}

/* An in-place all-reduce of tensor t, whole, on a communication stream. */
static void add_allreduce(builder* b, const char* name, int l, tensor* t, cc_dtype dtype, cc_reduce_op reduce, cc_comm* comm,
                          int stream) {
    size_t size = dtype == CC_DTYPE_FLOAT64 ? sizeof(double) : dtype == CC_DTYPE_BFLOAT16 ? 2 : sizeof(float);
    cc_collective co;
    op_args a;
    memset(&co, 0, sizeof co);
    memset(&a, 0, sizeof a);
    a.in[0] = t;
    a.out[0] = t;
    co.kind = CC_COLL_ALL_REDUCE;
    co.dtype = dtype;
    co.reduce = reduce;
    co.n_elems = t->bytes / size;
    co.comm = comm;
    co.send_buf = t->p;
    co.recv_buf = t->p;
    add_op(b, name, l, stream, &a, WHOLE, &co);
}

/* One function per kernel: the op's tensors in the kernel's argument order. */
static void add_embed(builder* b, const char* name, tensor* x, const tensor* wte, const tensor* wpe, const tensor* tokens, int N,
                      int T, int C) {
    op_args* a = op_new(b, GPT_OP_EMBED, N);
    if (!a) return;
    a->out[0] = x;
    a->in[0] = wte; a->in[1] = wpe; a->in[2] = tokens;
    a->T = T; a->C = C;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_layernorm(builder* b, const char* name, int l, tensor* y, tensor* mean, tensor* rstd, const tensor* x,
                          const tensor* w, const tensor* bias, int N, int C) {
    op_args* a = op_new(b, GPT_OP_LAYERNORM, N);
    if (!a) return;
    a->out[0] = y; a->out[1] = mean; a->out[2] = rstd;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul(builder* b, const char* name, int l, int chunks, tensor* y, const tensor* x, const tensor* w,
                       const tensor* bias, int N, int C, int OC) {
    op_args* a = op_new(b, GPT_OP_MATMUL, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_matmul_gelu(builder* b, const char* name, int l, tensor* h, tensor* u, const tensor* x, const tensor* w,
                            const tensor* bias, int N, int C, int OC) {
    op_args* a = op_new(b, GPT_OP_MATMUL_GELU, N);
    if (!a) return;
    a->out[0] = h; a->out[1] = u;
    a->in[0] = x; a->in[1] = w; a->in[2] = bias;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_attention(builder* b, const char* name, int l, tensor* y, tensor* att, const tensor* qkv, int B, int T, int NH,
                          int HS) {
    op_args* a = op_new(b, GPT_OP_ATTENTION, B * T);
    if (!a) return;
    a->out[0] = y; a->out[1] = att;
    a->in[0] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_residual(builder* b, const char* name, int l, int chunks, tensor* y, const tensor* x, const tensor* part,
                         const tensor* bias, int N, int C) {
    op_args* a = op_new(b, GPT_OP_RESIDUAL, N);
    if (!a) return;
    a->out[0] = y;
    a->in[0] = x; a->in[1] = part; a->in[2] = bias;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_crossentropy(builder* b, const char* name, tensor* loss, tensor* dlogits, const tensor* logits,
                             const tensor* targets, int N, int V) {
    op_args* a = op_new(b, GPT_OP_CROSSENTROPY, N);
    if (!a) return;
    a->out[0] = loss; a->out[1] = dlogits;
    a->in[0] = logits; a->in[1] = targets;
    a->V = V;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul_bwd_w(builder* b, const char* name, int l, tensor* dw, tensor* dbias, const tensor* dy, const tensor* x,
                             int N, int C, int OC) {
    op_args* a = op_new(b, GPT_OP_MATMUL_BWD_W, N);
    if (!a) return;
    a->out[0] = dw; a->out[1] = dbias;
    a->in[0] = dy; a->in[1] = x;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_matmul_bwd_x(builder* b, const char* name, int l, int chunks, tensor* dx, const tensor* dy, const tensor* w, int N,
                             int C, int OC) {
    op_args* a = op_new(b, GPT_OP_MATMUL_BWD_X, N);
    if (!a) return;
    a->out[0] = dx;
    a->in[0] = dy; a->in[1] = w;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_matmul_gelu_bwd_x(builder* b, const char* name, int l, tensor* dh, const tensor* dy, const tensor* w,
                                  const tensor* h, int N, int C, int OC) {
    op_args* a = op_new(b, GPT_OP_MATMUL_GELU_BWD_X, N);
    if (!a) return;
    a->out[0] = dh;
    a->in[0] = dy; a->in[1] = w; a->in[2] = h;
    a->C = C; a->OC = OC;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_layernorm_bwd(builder* b, const char* name, int l, int chunks, tensor* dx, tensor* dw, tensor* dbias,
                              const tensor* resid, const tensor* dy, const tensor* x, const tensor* mean, const tensor* rstd,
                              const tensor* w, int N, int C) {
    op_args* a = op_new(b, GPT_OP_LAYERNORM_BWD, N);
    if (!a) return;
    a->out[0] = dx; a->out[1] = dw; a->out[2] = dbias;
    a->in[0] = resid; a->in[1] = dy; a->in[2] = x; a->in[3] = mean; a->in[4] = rstd; a->in[5] = w;
    a->C = C;
    add_op(b, name, l, S_COMPUTE, a, chunks, NULL);
}
static void add_attention_bwd(builder* b, const char* name, int l, tensor* dqkv, const tensor* dy, const tensor* att,
                              const tensor* qkv, int B, int T, int NH, int HS) {
    op_args* a = op_new(b, GPT_OP_ATTENTION_BWD, B * T);
    if (!a) return;
    a->out[0] = dqkv;
    a->in[0] = dy; a->in[1] = att; a->in[2] = qkv;
    a->B = B; a->T = T; a->NH = NH; a->HS = HS;
    add_op(b, name, l, S_COMPUTE, a, WHOLE, NULL);
}
static void add_embed_bwd(builder* b, const char* name, tensor* dwte, tensor* dwpe, const tensor* dx, const tensor* tokens, int B,
                          int T, int C) {
    op_args* a = op_new(b, GPT_OP_EMBED_BWD, B * T);
    if (!a) return;
    a->out[0] = dwte; a->out[1] = dwpe;
    a->in[0] = dx; a->in[1] = tokens; a->in[2] = dwte;
    a->B = B; a->T = T; a->C = C;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_sumsq(builder* b, const char* name, tensor* slot, const tensor* g, int counted) {
    op_args* a = op_new(b, GPT_OP_SUMSQ, 0);
    if (!a) return;
    a->out[0] = slot;
    a->in[0] = g;
    a->n = tensor_elems(g);
    a->counted = counted;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_grad_norm(builder* b, const char* name, tensor* normsq, const tensor* sumsq) {
    op_args* a = op_new(b, GPT_OP_GRAD_NORM, 0);
    if (!a) return;
    a->out[0] = normsq;
    a->in[0] = sumsq;
    a->n = sumsq->bytes / sizeof(double);
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}
static void add_adamw(builder* b, const char* name, tensor* param, tensor* m, tensor* v, const tensor* g, const tensor* normsq,
                      float weight_decay, const tensor* step) {
    op_args* a = op_new(b, GPT_OP_ADAMW, 0);
    if (!a) return;
    a->out[0] = param; a->out[1] = m; a->out[2] = v;
    a->in[0] = g; a->in[1] = normsq; a->in[2] = step;
    a->n = param->bytes / sizeof(float);
    a->weight_decay = weight_decay;
    add_op(b, name, -1, S_COMPUTE, a, WHOLE, NULL);
}

/* Block l's forward pass: Megatron's tensor parallelism, an all-reduce
   after each row-parallel projection. */
static void forward_layer(builder* b, const gpt_model* s, int l) {
    const layer_weights* w = &s->w.h[l];
    const layer_acts* a = &s->acts[l];
    int N = s->N, C = s->cfg.C, T = s->cfg.T;
    add_layernorm(b, "ln1", l, a->ln1, a->ln1_mean, a->ln1_rstd, s->x[l], w->ln1_w, w->ln1_b, N, C);
    add_matmul(b, "qkv", l, WHOLE, a->qkv, a->ln1, w->attn_w, w->attn_b, N, C, 3 * s->Cl);
    add_attention(b, "attn", l, a->atty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    add_matmul(b, "proj", l, IN_CHUNKS, a->proj, a->atty, w->proj_w, NULL, N, s->Cl, C);
    if (s->TP > 1) add_allreduce(b, "proj.allreduce", l, a->proj, s->reduced, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_residual(b, "resid1", l, IN_CHUNKS, a->x1, s->x[l], a->proj, w->proj_b, N, C);
    add_layernorm(b, "ln2", l, a->ln2, a->ln2_mean, a->ln2_rstd, a->x1, w->ln2_w, w->ln2_b, N, C);
    add_matmul_gelu(b, "fc", l, a->fch, a->fch_gelu, a->ln2, w->fc_w, w->fc_b, N, C, s->F);
    add_matmul(b, "fcproj", l, IN_CHUNKS, a->fcproj, a->fch_gelu, w->fcproj_w, NULL, N, s->F, C);
    if (s->TP > 1) add_allreduce(b, "fcproj.allreduce", l, a->fcproj, s->reduced, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_residual(b, "resid2", l, IN_CHUNKS, s->x[l + 1], a->x1, a->fcproj, w->fcproj_b, N, C);
}

/* Block l's backward pass: for each matmul the weight gradient, then the
   input gradient; an all-reduce after each column-parallel one. */
static void backward_layer(builder* b, const gpt_model* s, int l) {
    const layer_weights* w = &s->w.h[l];
    const layer_weights* dw = &s->dw.h[l];
    const layer_acts* a = &s->acts[l];
    int N = s->N, C = s->cfg.C, T = s->cfg.T;
    /* the layer norms' weight gradients sum over rows: in chunks, each
       chunk adds to what the one before stored, which in bfloat16 would
       round once per chunk; so with --dtype bf16 they run whole */
    int ln_chunks = s->bf16 ? WHOLE : IN_CHUNKS;
    add_matmul_bwd_w(b, "fcproj.bwd_w", l, dw->fcproj_w, dw->fcproj_b, s->dx[l + 1], a->fch_gelu, N, s->F, C);
    add_matmul_gelu_bwd_x(b, "fcproj.bwd_x", l, a->dfch, s->dx[l + 1], w->fcproj_w, a->fch, N, s->F, C);
    add_matmul_bwd_w(b, "fc.bwd_w", l, dw->fc_w, dw->fc_b, a->dfch, a->ln2, N, C, s->F);
    add_matmul_bwd_x(b, "fc.bwd_x", l, IN_CHUNKS, a->dln2, a->dfch, w->fc_w, N, C, s->F);
    if (s->TP > 1) add_allreduce(b, "fc.bwd.allreduce", l, a->dln2, s->reduced, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_layernorm_bwd(b, "ln2.bwd", l, ln_chunks, a->dx1, dw->ln2_w, dw->ln2_b, s->dx[l + 1], a->dln2, a->x1, a->ln2_mean,
                      a->ln2_rstd, w->ln2_w, N, C);
    add_matmul_bwd_w(b, "proj.bwd_w", l, dw->proj_w, dw->proj_b, a->dx1, a->atty, N, s->Cl, C);
    add_matmul_bwd_x(b, "proj.bwd_x", l, WHOLE, a->datty, a->dx1, w->proj_w, N, s->Cl, C);
    add_attention_bwd(b, "attn.bwd", l, a->dqkv, a->datty, a->att, a->qkv, s->Bl, T, s->Hl, C / s->cfg.H);
    add_matmul_bwd_w(b, "qkv.bwd_w", l, dw->attn_w, dw->attn_b, a->dqkv, a->ln1, N, C, 3 * s->Cl);
    add_matmul_bwd_x(b, "qkv.bwd_x", l, IN_CHUNKS, a->dln1, a->dqkv, w->attn_w, N, C, 3 * s->Cl);
    if (s->TP > 1) add_allreduce(b, "qkv.bwd.allreduce", l, a->dln1, s->reduced, CC_REDUCE_SUM, s->tp_comm, S_TP);
    add_layernorm_bwd(b, "ln1.bwd", l, ln_chunks, s->dx[l], dw->ln1_w, dw->ln1_b, a->dx1, a->dln1, s->x[l], a->ln1_mean,
                      a->ln1_rstd, w->ln1_w, N, C);
}

/* The forward pass and the loss (with train, also its gradient). */
static void build_forward(builder* b, const gpt_model* s, int train) {
    const model_weights* w = &s->w;
    int l, N = s->N, C = s->cfg.C, L = s->cfg.L;
    add_embed(b, "embed", s->x[0], w->wte, w->wpe, s->inputs, N, s->cfg.T, C);
    for (l = 0; l < L; l++) forward_layer(b, s, l);
    add_layernorm(b, "lnf", -1, s->lnf, s->lnf_mean, s->lnf_rstd, s->x[L], w->lnf_w, w->lnf_b, N, C);
    add_matmul(b, "head", -1, WHOLE, s->logits, s->lnf, w->wte, NULL, N, C, s->cfg.V);
    add_crossentropy(b, "loss", s->loss, train ? s->dlogits : NULL, s->logits, s->targets, N, s->cfg.V);
    if (s->DP > 1) add_allreduce(b, "loss.allreduce", -1, s->loss, CC_DTYPE_FLOAT32, CC_REDUCE_AVG, s->dp_comm, S_DP);
}

/* The backward pass, then the gradients averaged over the data-parallel
   group in parameter order. */
static void build_backward(builder* b, const gpt_model* s) {
    const model_weights *w = &s->w, *dw = &s->dw;
    int l, p, N = s->N, C = s->cfg.C, L = s->cfg.L;
    add_matmul_bwd_w(b, "head.bwd_w", -1, dw->wte, NULL, s->dlogits, s->lnf, N, C, s->cfg.V);
    add_matmul_bwd_x(b, "head.bwd_x", -1, WHOLE, s->dlnf, s->dlogits, w->wte, N, C, s->cfg.V);
    add_layernorm_bwd(b, "lnf.bwd", -1, WHOLE, s->dx[L], dw->lnf_w, dw->lnf_b, NULL, s->dlnf, s->x[L], s->lnf_mean, s->lnf_rstd,
                      w->lnf_w, N, C);
    for (l = L - 1; l >= 0; l--) backward_layer(b, s, l);
    add_embed_bwd(b, "embed.bwd", dw->wte, dw->wpe, s->dx[0], s->inputs, s->Bl, s->cfg.T, C);
    if (s->DP > 1)
        for (p = 0; p < s->np; p++) {
            char name[48];
            snprintf(name, sizeof name, "%s.grad.allreduce", s->layout->p[p].name);
            add_allreduce(b, name, -1, &s->grad[p], s->reduced, CC_REDUCE_AVG, s->dp_comm, S_DP);
        }
}

/* Clipping by the global norm (each gradient's squared norm into its own
   slot of sumsq, the sum over the TP group), then AdamW. */
static void build_update(builder* b, const gpt_model* s) {
    int p;
    char name[48];
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        snprintf(name, sizeof name, "%s.sumsq", pi->name);
        add_sumsq(b, name, &s->sumsq_slot[p], &s->grad[p], pi->shard != SH_REPL || s->tp_rank == 0);
    }
    add_grad_norm(b, "grad_norm", s->normsq, s->sumsq);
    if (s->TP > 1) add_allreduce(b, "grad_norm.allreduce", -1, s->normsq, CC_DTYPE_FLOAT64, CC_REDUCE_SUM, s->tp_comm, S_TP);
    for (p = 0; p < s->np; p++) {
        const pinfo* pi = &s->layout->p[p];
        snprintf(name, sizeof name, "%s.adamw", pi->name);
        add_adamw(b, name, &s->param[p], &s->adam_m[p], &s->adam_v[p], &s->grad[p], s->normsq, pi->decay ? 0.1f : 0.0f, s->step_t);
    }
}

/* The training step (train = 1) or the forward pass with the loss (0),
   on three streams; its op records go to *store. */
static cc_result build_graph(const gpt_model* s, int train, cc_graph** out, op_store* store) {
    static const char* const stream_names[] = { "compute", "tp", "dp" };
    cc_graph_desc gd = cc_graph_desc_default();
    builder b;
    memset(&b, 0, sizeof b);
    b.store = store;
    b.kernels = s->kernels;
    b.fingerprint = FNV_START;
    gd.n_streams = 3;
    gd.stream_names = stream_names;
    if (!(b.buf = (cc_buffer*)calloc((size_t)s->n_tensors, sizeof(cc_buffer)))) return CC_ERR_OUT_OF_MEMORY;
    b.rc = cc_graph_create(s->ctx, &gd, &b.g);
    build_forward(&b, s, train);
    if (train) {
        build_backward(&b, s);
        build_update(&b, s);
    }
    if (b.rc == CC_OK) b.rc = cc_graph_validate(b.g);
    free(b.buf);
    if (b.rc != CC_OK) {
        cc_graph_destroy(b.g);
        return b.rc;
    }
    store->fingerprint = b.fingerprint;
    *out = b.g;
    return CC_OK;
}

#endif /* GPT_COMMON_H_INCLUDED */
