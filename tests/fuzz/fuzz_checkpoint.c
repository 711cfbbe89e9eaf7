/* tests/fuzz/fuzz_checkpoint.c - the example trainer's checkpoint reader
   (load_checkpoint, examples/gpt/gpt_common.h; the format in FORMATS.md)
   on arbitrary files: the input as it is, and the input with its last 8
   bytes made the hash of the rest, so that the fuzzer reaches past the
   checksum. Invariants: a file is refused with a message naming it, or
   loaded with as many parameters as its configuration's layout has;
   nothing leaks. */
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

static void load(const char* path, const uint8_t* data, size_t size) {
    FILE* f = fopen(path, "wb");
    gpt_config c;
    unsigned char vocab[256];
    int steps = -1;
    float* w = NULL;
    size_t P = 0;
    char err[512];
    if (!f) return;
    if (size && fwrite(data, 1, size, f) != size) { fclose(f); return; }
    fclose(f);
    memset(&c, 0, sizeof c);
    err[0] = 0;
    if (load_checkpoint(path, &c, vocab, &steps, &w, &P, err, sizeof err)) {
        gpt_model_layout m;
        memset(&m, 0, sizeof m);
        FZ_CHECK(w != NULL && steps >= 0, "a checkpoint loaded without parameters or with steps %d", steps);
        FZ_CHECK(gpt_layout_model(&c, &m), "a loaded configuration has no layout");
        FZ_CHECK(m.total == P, "%zu parameters loaded, the layout has %zu", P, m.total);
        gpt_layout_free(&m);
        free(w);
    } else {
        FZ_CHECK(w == NULL, "a refused checkpoint left parameters");
        FZ_CHECK(strstr(err, path) != NULL || strstr(err, "out of memory") != NULL, "the error does not name the file: %s", err);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    char path[256];
    const char* dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/fuzz_checkpoint.%ld", dir && dir[0] ? dir : "/tmp", (long)getpid());
    load(path, data, size);
    if (size > 8) {
        uint8_t* fixed = (uint8_t*)malloc(size);
        uint64_t h;
        if (fixed) {
            memcpy(fixed, data, size);
            h = gpt_fnv1a(GPT_FNV_START, fixed, size - 8);
            memcpy(fixed + size - 8, &h, 8);
            load(path, fixed, size);
            free(fixed);
        }
    }
    remove(path);
    return 0;
}
