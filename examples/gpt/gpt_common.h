/* gpt_common.h - what the example GPT trainers share, whatever runs their
   kernels, besides the step itself (../steps/gpt_step.h, included here: the
   parameter layout, a rank's tensors and the step's graph): the options
   and the command line, the data (vocabulary, splits, the generated
   corpus, batches), the files of FORMATS.md (checkpoints, batches,
   gradients), and the step's description for a trainer's rank.

   Plain C99, host code only. Each trainer is one translation unit that
   includes concerto.h and then this header; every function here is static.
   Sections:
     >>config    options, usage
     >>util      splitmix64, medians, the clock
     >>params    sharding, initialisation
     >>data      text, vocabulary, splits, batches, learning rate
     >>files     checkpoints, batches, gradients
     >>cmdline   parsing the options, checking the layout
     >>model     a trainer rank's step (gpt_step_desc) */
#ifndef GPT_COMMON_H_INCLUDED
#define GPT_COMMON_H_INCLUDED

#ifndef CONCERTO_H_INCLUDED
#error "include concerto.h first"
#endif

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../steps/gpt_step.h"

/* The trainers' bounds (the step's description has none). */
#define MAX_LAYERS 64
#define MAX_T 1024

/* ---- >>config: options ------------------------------------------------------ */
/* The program's name in messages: the trainer sets it. */
static const char* gpt_program = "train_gpt";

enum { GPT_F32 = 0, GPT_BF16 = 1 };   /* options.dtype */

typedef struct options {
    const char* data;
    gpt_config cfg;               /* V comes from the data */
    int batch, tp, dp, steps;
    uint64_t seed;
    double lr;
    int warmup;
    int order;                /* 0 program, 1 concerto, 2 both (program first) */
    int emulate;
    double link_alpha_us, link_us_per_kib;
    const char *save, *save_init, *load, *dump_batches, *dump_grads, *losses, *trace;
    int eval_batches, sample_chars, profile_repeats, print_every, compare_steps;
    int profile_steps;             /* steps of each order profiled in place (cc_exec_profile_loop_step, run as training runs them); 0: none */
    int profile_warmup;            /* steps of each order run before those, not profiled */
    int pin;                       /* CPU ranks as threads: each rank's threads kept to one core (Linux) */
    int decompose, fuse;      /* rewrites before scheduling (the library's order only) */
    int exact;                /* decomposition keeps the losses bit-identical (cc_rewrite_desc.exact_only):
                                 no split whose chunks add partial sums */
    int budget;               /* schedules the scheduler may try, for the step and for judging each
                                 candidate rewrite; 0: the library's default */
    int graph_fingerprint;    /* print the step's graph fingerprint (graph_fingerprint) and stop */
    int dtype;                /* GPT_F32, or GPT_BF16: matmuls and collectives in bfloat16 (CUDA trainer) */
    int cuda_graphs;          /* capture the step into a CUDA graph and replay it (CUDA trainer) */
    uint64_t memory_cap;      /* a rank's memory for the training step, bytes (--memory-cap); 0: no cap */
    int zero;                 /* ZeRO stage 0..3 over the data-parallel group (--zero) */
    int sp;                   /* sequence parallelism inside the tensor-parallel group (--sp) */
    int check_step;           /* the first step of each order run checked (cc_exec_step_checked) */
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
            "  --decompose on|off   let the library cut tensor-parallel all-reduces (with --sp all-gathers\n"
            "                       and reduce-scatters) and the ops around them into chunks (default on;\n"
            "                       the library's order only)\n"
            "  --exact on|off       on (default): decomposition only splits ops into chunks that each\n"
            "                       compute their outputs whole (rows, columns), so the losses are\n"
            "                       program order's bit for bit; off: also into chunks that add\n"
            "                       partial sums (a layer norm's weight gradient over rows, a matmul's\n"
            "                       reduction), equal within rounding\n"
            "  --fuse on|off        let the library fuse gradient all-reduces into buckets (default on)\n"
            "  --link US_PER_KIB    emulated inter-node link: microseconds per KiB (default 40);\n"
            "                       the intra-node (TP) link is 4x faster\n"
            "  --latency US         emulated link latency per step (default 30; intra-node: half)\n"
            "  --no-link            collectives run at memory speed\n"
            "  --pin on|off         ranks as threads (build/train_gpt): keep each rank's threads on one\n"
            "                       core, rank r on the r-th core the process may use, cycling (default\n"
            "                       on; Linux only, elsewhere the option does nothing)\n"
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
            "  --profile-steps N    steps of each order run to profile its ops in place, with what the step\n"
            "                       runs beside them, for the predictions (default 20; 0: ops profiled alone)\n"
            "  --profile-warmup N   steps of each order run before those and not profiled (default 20: on a\n"
            "                       shared machine the first steps after a change of work run faster)\n"
            "  --print-every N      print every Nth step (default 1)\n"
            "  --compare N          steps timed in each order side by side, alternating, before training (default 20);\n"
            "                       where the library's order runs the step rewritten, the step as written in\n"
            "                       the library's order takes its turn too, timing the rewrites\n"
            "  --budget N           schedules the scheduler may try, for the step and for judging each\n"
            "                       candidate rewrite (default 1000; 0: the library's default, 5000)\n"
            );
    fprintf(f,
            "  --zero 0|1|2|3       shard over the data-parallel group AdamW's state (1), and the gradients\n"
            "                       (2, reduce-scattered), and the parameters (3, all-gathered before each\n"
            "                       use); needs --dp 2 or more (default 0)\n"
            "  --sp                 sequence parallelism: norms, residuals, embeddings and the loss run on\n"
            "                       the rank's 1/tp of the tokens; an all-gather before each tensor-parallel\n"
            "                       region and a reduce-scatter after it replace the all-reduce (needs --tp 2\n"
            "                       or more, and a micro-batch of tokens that divides by --tp)\n"
            "  --memory-cap BYTES   a rank's memory for the training step (suffixes K M G T, KiB..TiB,\n"
            "                       KB..TB): the persistent bytes (parameters, gradients, AdamW state, the\n"
            "                       batch) plus the activations alive at once in the step's arena, which the\n"
            "                       library's schedule and plan keep within it (default: no cap)\n"
            "  --check-step         run the first step of each order op by op, checking that every op writes\n"
            "                       only the regions it declares (cc_exec_step_checked): for first runs of\n"
            "                       a changed trainer; an op at fault is named with the buffer and byte\n"
            "  --graph-fingerprint  print the fingerprints of rank 0's graphs (training step, evaluation)\n"
            "                       as built, and as a planner builds them with sizes only (gpt_step.h),\n"
            "                       and stop: the same model and layout give the same ones\n"
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

/* ---- >>params: sharding and initialisation (the layout: gpt_step.h) ------- */
/* Copies between a global tensor g and rank t's shard s (to_shard: g -> s). */
static void shard_copy(const gpt_pinfo* p, int tp, int t, float* g, float* s, int to_shard) {
    int r, c;
    if (p->shard == GPT_SH_REPL) {
        if (to_shard) memcpy(s, g, sizeof(float) * gpt_shard_size(p, 1));
        else memcpy(g, s, sizeof(float) * gpt_shard_size(p, 1));
    } else if (p->shard == GPT_SH_ROWS) {
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
static void init_params(const gpt_config* c, const gpt_model_layout* m, float* w, uint64_t seed) {
    int i;
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 17;
    for (i = 0; i < m->n; i++) {
        const gpt_pinfo* p = &m->p[i];
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

/* Reads the whole file at path (or generates the corpus when path is
   NULL) into *text (malloc'd, n bytes). It reads to the end whatever
   the file is (a pipe, /proc), and refuses what cannot be read (a
   directory, an I/O error) naming the file and the reason. */
static int load_text(const char* path, char** text, size_t* n, char* err, size_t errn) {
    FILE* f;
    size_t cap = 1 << 16, len = 0, got;
    char* buf;
    if (!path) {
        *text = generate_corpus(n);
        if (!*text) { snprintf(err, errn, "out of memory"); return 0; }
        return 1;
    }
    f = fopen(path, "rb");
    if (!f) { snprintf(err, errn, "cannot open data file '%s': %s", path, strerror(errno)); return 0; }
    buf = (char*)malloc(cap + 1);
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            char* nb = cap < ((size_t)-1 - 1) / 2 ? (char*)realloc(buf, cap * 2 + 1) : NULL;
            if (!nb) { free(buf); buf = NULL; break; }
            buf = nb;
            cap *= 2;
        }
    }
    if (!buf) { fclose(f); snprintf(err, errn, "out of memory reading data file '%s' (%zu bytes read)", path, len); return 0; }
    if (ferror(f)) {
        snprintf(err, errn, "cannot read data file '%s' (after %zu bytes): %s", path, len, strerror(errno));
        fclose(f);
        free(buf);
        return 0;
    }
    fclose(f);
    buf[len] = 0;
    *text = buf;
    *n = len;
    return 1;
}

/* Encodes text; with a fixed vocabulary (from a checkpoint) every byte
   must be in it. Needs a window of T+1 tokens and room to move it in both splits. */
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
    /* each split, the validation tenth too, must hold a window of T+1
       tokens and room to place it (make_batch draws its offset modulo the
       room left, which must not be 0) */
    if (n < 10 * (size_t)(T + 2)) {
        snprintf(err, errn, "%s: %zu characters is too little text for a context of %d (need at least %d)", what, n, T,
                 10 * (T + 2));
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

/* Every file the trainers write goes through an afile: the bytes go to a
   temporary file beside the destination (path.tmp.PID), which afile_commit
   flushes, fsyncs, closes and renames over the destination. A process
   killed at any point leaves the old file whole (and perhaps a stale
   temporary); on any error the temporary is removed, the old file is left
   as it was, and err names the file. The running FNV-1a hash of what was
   written is kept for the checkpoint's trailer.
   GPT_SAVE_KILL_AT (for the crash test, tests/test_gpt_crash.sh): N, the
   process raises SIGKILL on itself once N bytes of a file are written
   (flushed to the temporary); "rename", just before the rename; "renamed",
   just after it. */
typedef struct afile {
    FILE* f;
    const char* path;
    const char* what;     /* "checkpoint", "batches", ... for the messages */
    char tmp[4096];
    uint64_t h;
    unsigned long long n_written;
    int ok, err;          /* err: errno of the first failure, 0 if none known */
} afile;

static long long afile_kill_at(void) {   /* bytes, -1 off, -2 before rename, -3 after */
    const char* v = getenv("GPT_SAVE_KILL_AT");
    if (!v || !*v) return -1;
    if (!strcmp(v, "rename")) return -2;
    if (!strcmp(v, "renamed")) return -3;
    return strtoll(v, NULL, 10);
}

static int afile_open(afile* a, const char* path, const char* what, char* err, size_t errn) {
    memset(a, 0, sizeof *a);
    a->path = path;
    a->what = what;
    a->h = GPT_FNV_START;
    if ((size_t)snprintf(a->tmp, sizeof a->tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof a->tmp) {
        snprintf(err, errn, "cannot write %s '%s': the path is too long", what, path);
        return 0;
    }
    a->f = fopen(a->tmp, "wb");
    if (!a->f) {
        snprintf(err, errn, "cannot write %s '%s': cannot create its temporary file '%s.tmp.%ld': %s", what, path, path,
                 (long)getpid(), strerror(errno));
        return 0;
    }
    a->ok = 1;
    return 1;
}

static void afile_write(afile* a, const void* p, size_t n) {
    long long kill_at = afile_kill_at();
    a->h = gpt_fnv1a(a->h, p, n);
    if (!a->ok) return;
    if (kill_at >= 0 && a->n_written + n >= (unsigned long long)kill_at) {
        size_t part = (size_t)((unsigned long long)kill_at - a->n_written);
        if (part) (void)fwrite(p, 1, part, a->f);
        fflush(a->f);
        raise(SIGKILL);
    }
    if (fwrite(p, 1, n, a->f) != n) { a->ok = 0; a->err = errno; }
    a->n_written += n;
}

static void afile_printf(afile* a, const char* fmt, ...) {
    char line[512];
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof line) { a->ok = 0; return; }
    afile_write(a, line, (size_t)k);
}

/* Ends the file: 1 when it is now at a->path whole, else 0 with err set
   (the temporary removed, the old file untouched). */
static int afile_commit(afile* a, char* err, size_t errn) {
    long long kill_at = afile_kill_at();
    if (a->ok && (fflush(a->f) != 0 || fsync(fileno(a->f)) != 0)) { a->ok = 0; a->err = errno; }
    if (fclose(a->f) != 0 && a->ok) { a->ok = 0; a->err = errno; }
    a->f = NULL;
    if (a->ok && kill_at >= 0 && a->n_written >= (unsigned long long)kill_at) raise(SIGKILL);  /* N = the whole file */
    if (a->ok && kill_at == -2) raise(SIGKILL);
    if (a->ok && rename(a->tmp, a->path) != 0) {
        a->err = errno;
        snprintf(err, errn, "cannot write %s '%s': cannot rename its temporary file over it: %s", a->what, a->path,
                 strerror(a->err));
        (void)remove(a->tmp);
        return 0;
    }
    if (!a->ok) {
        snprintf(err, errn, "writing %s '%s' failed%s%s (the file is left as it was)", a->what, a->path, a->err ? ": " : "",
                 a->err ? strerror(a->err) : "");
        (void)remove(a->tmp);
        return 0;
    }
    if (kill_at == -3) raise(SIGKILL);
    return 1;
}

static int save_checkpoint(const char* path, const gpt_config* c, const dataset* d, int steps_done, const float* w, size_t P,
                           char* err, size_t errn) {
    afile wr;
    uint32_t hdr[8];
    uint64_t n64 = P;
    unsigned char vocab[260];
    size_t vpad = ((size_t)c->V + 3) / 4 * 4;
    if (!afile_open(&wr, path, "checkpoint", err, errn)) return 0;
    hdr[0] = 1; hdr[1] = (uint32_t)c->V; hdr[2] = (uint32_t)c->C; hdr[3] = (uint32_t)c->L; hdr[4] = (uint32_t)c->H;
    hdr[5] = (uint32_t)c->T; hdr[6] = (uint32_t)steps_done; hdr[7] = 0;
    memset(vocab, 0, sizeof vocab);
    memcpy(vocab, d->vocab, (size_t)c->V);
    afile_write(&wr, "CCGPTCK1", 8);
    afile_write(&wr, hdr, sizeof hdr);
    afile_write(&wr, &n64, 8);
    afile_write(&wr, vocab, vpad);
    afile_write(&wr, w, sizeof(float) * P);
    {
        uint64_t h = wr.h;
        afile_write(&wr, &h, 8);
    }
    return afile_commit(&wr, err, errn);
}

/* Reads a checkpoint: the configuration, vocabulary and parameters
   (*w malloc'd). Every inconsistency is an error naming the file. */
static int load_checkpoint(const char* path, gpt_config* c, unsigned char* vocab, int* steps_done, float** w, size_t* P,
                           char* err, size_t errn) {
    FILE* f = fopen(path, "rb");
    unsigned char* buf = NULL;
    long len;
    uint32_t hdr[8];
    uint64_t n64, h_file, h;
    size_t vpad, need;
    gpt_model_layout* m = NULL;
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
    m = (gpt_model_layout*)calloc(1, sizeof *m);
    if (!m || !gpt_layout_model(c, m)) { snprintf(err, errn, "out of memory"); goto out; }
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
    h = gpt_fnv1a(GPT_FNV_START, buf, need - 8);
    memcpy(&h_file, buf + need - 8, 8);
    if (h != h_file) { snprintf(err, errn, "checkpoint '%s' is corrupt: its hash does not match its contents", path); goto out; }
    memcpy(vocab, buf + 48, (size_t)c->V);
    if (hdr[6] > (uint32_t)INT32_MAX / 2) {   /* a count of steps a run could not have taken */
        snprintf(err, errn, "checkpoint '%s': implausible count of steps done, %u", path, hdr[6]);
        goto out;
    }
    *steps_done = (int)hdr[6];
    *P = m->total;
    *w = (float*)malloc(sizeof(float) * m->total);
    if (!*w) { snprintf(err, errn, "out of memory"); goto out; }
    memcpy(*w, buf + 48 + vpad, sizeof(float) * m->total);
    ok = 1;
out:
    if (f) fclose(f);
    free(buf);
    if (m) gpt_layout_free(m);
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
    o->eval_batches = 8; o->sample_chars = 200; o->profile_repeats = 3; o->print_every = 1; o->compare_steps = 20;
    o->profile_steps = 20;
    o->profile_warmup = 20;
    o->decompose = 1; o->exact = 1; o->fuse = 1; o->budget = 1000; o->pin = 1;
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
        else if (!strcmp(a, "--decompose") || !strcmp(a, "--fuse") || !strcmp(a, "--cuda-graphs") || !strcmp(a, "--pin") ||
                 !strcmp(a, "--exact")) {
            int on = v && !strcmp(v, "on"), off = v && !strcmp(v, "off");
            if (!on && !off) { fprintf(stderr, "%s: %s takes on or off, got '%s'\n", gpt_program, a, v ? v : "(nothing)"); ok = 0; }
            else if (!strcmp(a, "--fuse")) o->fuse = on;
            else if (!strcmp(a, "--pin")) o->pin = on;
            else if (!strcmp(a, "--exact")) o->exact = on;
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
        else if (!strcmp(a, "--profile-steps")) ok = parse_int(a, v, 0, 1000, &o->profile_steps);
        else if (!strcmp(a, "--profile-warmup")) ok = parse_int(a, v, 0, 1000, &o->profile_warmup);
        else if (!strcmp(a, "--print-every")) ok = parse_int(a, v, 0, 1 << 24, &o->print_every);
        else if (!strcmp(a, "--compare")) ok = parse_int(a, v, 0, 1000, &o->compare_steps);
        else if (!strcmp(a, "--budget")) ok = parse_int(a, v, 0, 1 << 30, &o->budget);
        else if (!strcmp(a, "--zero")) ok = parse_int(a, v, 0, 3, &o->zero);
        else if (!strcmp(a, "--sp")) { o->sp = 1; takes = 0; }
        else if (!strcmp(a, "--check-step")) { o->check_step = 1; takes = 0; }
        else if (!strcmp(a, "--memory-cap")) {
            ok = gpt_parse_bytes(v, &o->memory_cap);
            if (!ok) fprintf(stderr, "%s: --memory-cap needs " GPT_BYTES_FORM ", got '%s'\n", gpt_program, v ? v : "(nothing)");
        }
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
static int check_layout(const options* o, const gpt_config* c) {
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
    if (o->sp && o->tp < 2) {
        fprintf(stderr, "%s: --sp splits the tokens over the tensor-parallel group, which needs --tp 2 or more (got --tp %d)\n",
                gpt_program, o->tp);
        return 0;
    }
    if (o->sp && (o->batch / o->dp) * c->T % o->tp) {
        fprintf(stderr, "%s: --sp: a rank's %d sequences of --seq %d tokens (%d) do not divide by --tp %d\n", gpt_program,
                o->batch / o->dp, c->T, (o->batch / o->dp) * c->T, o->tp);
        return 0;
    }
    if (o->zero && o->dp < 2) {
        fprintf(stderr, "%s: --zero %d shards over the data-parallel group, which needs --dp 2 or more (got --dp %d)\n", gpt_program,
                o->zero, o->dp);
        return 0;
    }
    return 1;
}

static int write_batches(const char* path, const options* o, const dataset* d, int T, char* err, size_t errn) {
    afile f;
    uint32_t hdr[4];
    int step;
    int* in = (int*)malloc(sizeof(int) * (size_t)o->batch * T);
    int* tg = (int*)malloc(sizeof(int) * (size_t)o->batch * T);
    if (!in || !tg) {
        snprintf(err, errn, "cannot write batches '%s': out of memory", path);
        free(in); free(tg);
        return 0;
    }
    if (!afile_open(&f, path, "batches", err, errn)) { free(in); free(tg); return 0; }
    hdr[0] = (uint32_t)o->steps; hdr[1] = (uint32_t)o->batch; hdr[2] = (uint32_t)T; hdr[3] = 0;
    afile_write(&f, "CCGPTBT1", 8);
    afile_write(&f, hdr, sizeof hdr);
    for (step = 0; f.ok && step < o->steps; step++) {
        double lr = lr_at(o, step);
        float lr32 = (float)lr;
        lr = lr32;              /* the trainer steps with the float32 value */
        make_batch(d, 0, o->seed, step, o->batch, T, in, tg);
        afile_write(&f, &lr, 8);
        afile_write(&f, in, sizeof(int) * (size_t)o->batch * T);
        afile_write(&f, tg, sizeof(int) * (size_t)o->batch * T);
    }
    free(in); free(tg);
    return afile_commit(&f, err, errn);
}

static int write_grads(const char* path, double loss, const float* g, size_t P, char* err, size_t errn) {
    afile f;
    uint64_t n = P;
    if (!afile_open(&f, path, "gradients", err, errn)) return 0;
    afile_write(&f, "CCGPTGR1", 8);
    afile_write(&f, &loss, 8);
    afile_write(&f, &n, 8);
    afile_write(&f, g, sizeof(float) * P);
    return afile_commit(&f, err, errn);
}

/* ---- >>model: a rank's model ----------------------------------------------- */
/* The step of world rank `me` of the layout o (world rank r = dp_rank * TP
   + tp_rank): one stage, one micro-batch of B/DP sequences, the
   communicated tensors in bfloat16 with --dtype bf16. */
static gpt_step_desc model_desc(const options* o, const gpt_config* cfg, int me) {
    gpt_step_desc d;
    memset(&d, 0, sizeof d);
    d.cfg = *cfg;
    d.micro_batch = o->batch / o->dp;
    d.tp = o->tp;
    d.dp = o->dp;
    d.tp_rank = me % o->tp;
    d.dp_rank = me / o->tp;
    d.coll_dtype = o->dtype == GPT_BF16 ? CC_DTYPE_BFLOAT16 : CC_DTYPE_FLOAT32;
    d.transients = 1;   /* the training step's activations live in its plan's arena */
    d.zero = o->zero;
    d.sp = o->sp;
    return d;
}

#endif /* GPT_COMMON_H_INCLUDED */
