/* llmc_files: inputs for llm.c's train_gpt2cu in its own formats, for the
   side-by-side benchmark (bench/run.sh gpt-cuda-llmc). Nothing of llm.c is
   needed to build it.

     llmc_files model FILE L C NH T    GPT-2 checkpoint, random weights
     llmc_files tokens FILE N          N random GPT-2 tokens

   model: 256 little-endian int32 (20240326, version 5 = bfloat16
   parameters, max context T, vocabulary 50257, L, NH, C, padded vocabulary
   50304), then the parameters as bfloat16 in llm.c's order: wte [Vp][C],
   wpe [T][C], ln1w, ln1b [L][C], qkvw [L][3C][C], qkvb [L][3C], attprojw
   [L][C][C], attprojb [L][C], ln2w, ln2b [L][C], fcw [L][4C][C], fcb
   [L][4C], fcprojw [L][C][4C], fcprojb [L][C], lnfw, lnfb [C]. Layer
   norm weights are 1, biases 0, the rest uniform in +-0.035 (standard
   deviation 0.02). tokens: 256 int32 (20240520, version 1, N), then N
   uint16 tokens below 50257. Exit status 0, or 1 with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LLMC_V 50257
#define LLMC_VP 50304

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_u32(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545F4914F6CDD1Dull) >> 32);
}
static uint16_t bf16_of(float x) {   /* round to nearest even */
    uint32_t u;
    memcpy(&u, &x, 4);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}
/* n values: constant c when kind is 0, else uniform in +-0.035 */
static int put(FILE* f, uint64_t n, int kind, float c) {
    uint16_t buf[4096];
    while (n > 0) {
        size_t k = n < 4096 ? (size_t)n : 4096, i;
        for (i = 0; i < k; i++)
            buf[i] = bf16_of(kind ? ((float)(next_u32() >> 8) / 16777216.0f * 2.0f - 1.0f) * 0.035f : c);
        if (fwrite(buf, 2, k, f) != k) return 0;
        n -= k;
    }
    return 1;
}
static int header(FILE* f, const int32_t* first, int n) {
    int32_t h[256];
    memset(h, 0, sizeof h);
    memcpy(h, first, sizeof(int32_t) * (size_t)n);
    return fwrite(h, sizeof h, 1, f) == 1;
}
static long arg(const char* s, const char* what) {
    char* end;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end != 0 || v <= 0 || v > 1000000000L) {
        fprintf(stderr, "llmc_files: %s must be a positive integer, not '%s'\n", what, s);
        exit(1);
    }
    return v;
}

int main(int argc, char** argv) {
    FILE* f;
    int ok;
    if (argc == 7 && !strcmp(argv[1], "model")) {
        uint64_t L = (uint64_t)arg(argv[3], "L"), C = (uint64_t)arg(argv[4], "C"), NH = (uint64_t)arg(argv[5], "NH"),
                 T = (uint64_t)arg(argv[6], "T");
        int32_t h[8] = { 20240326, 5, (int32_t)T, LLMC_V, (int32_t)L, (int32_t)NH, (int32_t)C, LLMC_VP };
        if (C % NH) {
            fprintf(stderr, "llmc_files: width %llu is not a multiple of %llu heads\n", (unsigned long long)C, (unsigned long long)NH);
            return 1;
        }
        if (!(f = fopen(argv[2], "wb"))) {
            perror(argv[2]);
            return 1;
        }
        ok = header(f, h, 8) && put(f, LLMC_VP * C, 1, 0) && put(f, T * C, 1, 0) && put(f, L * C, 0, 1) && put(f, L * C, 0, 0) &&
             put(f, L * 3 * C * C, 1, 0) && put(f, L * 3 * C, 0, 0) && put(f, L * C * C, 1, 0) && put(f, L * C, 0, 0) &&
             put(f, L * C, 0, 1) && put(f, L * C, 0, 0) && put(f, L * 4 * C * C, 1, 0) && put(f, L * 4 * C, 0, 0) &&
             put(f, L * C * 4 * C, 1, 0) && put(f, L * C, 0, 0) && put(f, C, 0, 1) && put(f, C, 0, 0);
    } else if (argc == 4 && !strcmp(argv[1], "tokens")) {
        uint64_t n = (uint64_t)arg(argv[3], "N"), i;
        int32_t h[3] = { 20240520, 1, (int32_t)n };
        if (!(f = fopen(argv[2], "wb"))) {
            perror(argv[2]);
            return 1;
        }
        ok = header(f, h, 3);
        for (i = 0; ok && i < n; i++) {
            uint16_t t = (uint16_t)(next_u32() % LLMC_V);
            ok = fwrite(&t, 2, 1, f) == 1;
        }
    } else {
        fprintf(stderr, "usage: llmc_files model FILE L C NH T | llmc_files tokens FILE N\n");
        return 1;
    }
    if (fclose(f) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, "llmc_files: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
