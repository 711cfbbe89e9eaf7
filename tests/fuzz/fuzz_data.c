/* tests/fuzz/fuzz_data.c - the example trainer's data loader (load_text,
   make_dataset, make_batch in examples/gpt/gpt_common.h) on arbitrary
   text. The first byte picks the context length and whether the
   vocabulary is fixed (as when resuming from a checkpoint: the bytes of
   the second to fifth bytes' span); the rest is the file. Invariants: the
   text is refused with a message or encoded so that every token of every
   batch of both splits is in the vocabulary; nothing leaks. */
#define _POSIX_C_SOURCE 200809L
#include "../../concerto.h"
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wunused-function"
#endif
#include "../../examples/gpt/gpt_common.h"
#include "fuzz.h"
#include <unistd.h>

#ifndef FUZZ_LINKED_IMPL   /* the replays link tests/concerto_impl.o instead */
#define CONCERTO_IMPLEMENTATION
#endif
#include "../../concerto.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    char path[256], err[512];
    const char* dir = getenv("TMPDIR");
    FILE* f;
    char* text = NULL;
    size_t n = 0;
    int T, fixed, fixed_V = 0, i, b, step;
    unsigned char vocab[256];
    dataset d;
    if (size < 1) return 0;
    T = 2 + data[0] % 32;
    fixed = data[0] >= 128;
    if (fixed && size >= 5) {   /* the vocabulary: bytes lo..hi */
        int lo = data[1], hi = data[2];
        if (lo > hi) { int t = lo; lo = hi; hi = t; }
        for (i = lo; i <= hi; i++) vocab[fixed_V++] = (unsigned char)i;
        if (fixed_V < 2) fixed = 0;
    } else fixed = 0;
    snprintf(path, sizeof path, "%s/fuzz_data.%ld", dir && dir[0] ? dir : "/tmp", (long)getpid());
    if (!(f = fopen(path, "wb"))) return 0;
    if (size > 1 && fwrite(data + 1, 1, size - 1, f) != size - 1) { fclose(f); remove(path); return 0; }
    fclose(f);
    err[0] = 0;
    if (!load_text(path, &text, &n, err, sizeof err)) {
        FZ_CHECK(strstr(err, path) != NULL || strstr(err, "out of memory"), "the error does not name the file: %s", err);
        remove(path);
        return 0;
    }
    remove(path);
    if (make_dataset(&d, text, n, fixed ? vocab : NULL, fixed_V, T, path, err, sizeof err)) {
        int in[4 * 33], tg[4 * 33];
        FZ_CHECK(d.V >= 1 && d.V <= 256 && d.n == n && d.n_train <= d.n, "dataset V %d n %zu train %zu", d.V, d.n, d.n_train);
        for (step = 0; step < 3; step++)
            for (b = 0; b < 2; b++) {
                make_batch(&d, b, 7, step, 4, T, in, tg);
                for (i = 0; i < 4 * T; i++)
                    FZ_CHECK(in[i] >= 0 && in[i] < d.V && tg[i] >= 0 && tg[i] < d.V, "token %d/%d outside the vocabulary of %d",
                             in[i], tg[i], d.V);
            }
        free(d.tokens);
    } else {
        FZ_CHECK(err[0] != 0, "a refused text left no message");
    }
    free(text);
    return 0;
}
