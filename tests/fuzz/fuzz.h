/* tests/fuzz/fuzz.h - what the fuzz targets share: reading the fuzzer's
   bytes as small numbers, and an invariant check that stops the run.

   Each target is one file, tests/fuzz/fuzz_NAME.c, that compiles the
   implementation it needs and defines LLVMFuzzerTestOneInput. make fuzz
   links it with libFuzzer (clang); tests/fuzz/replay.c links it with a
   plain main that feeds it the committed corpus, in make test. */
#ifndef FUZZ_H_INCLUDED
#define FUZZ_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

typedef struct fz_in { const uint8_t* p; size_t n, at; } fz_in;

/* The next byte (0 once the input is used up). */
static inline unsigned fz_u8(fz_in* in) { return in->at < in->n ? in->p[in->at++] : 0u; }
static inline unsigned fz_u16(fz_in* in) { unsigned a = fz_u8(in); return a | (fz_u8(in) << 8); }
/* lo..hi from the next byte. */
static inline int fz_int(fz_in* in, int lo, int hi) { return lo + (int)(fz_u8(in) % (unsigned)(hi - lo + 1)); }
static inline int fz_done(const fz_in* in) { return in->at >= in->n; }

/* An invariant of the library broken: say which and stop (the fuzzer keeps
   the input; the replay fails). */
#define FZ_CHECK(cond, ...) do { \
        if (!(cond)) { \
            fprintf(stderr, "%s:%d: invariant broken: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            abort(); \
        } \
    } while (0)

#endif
