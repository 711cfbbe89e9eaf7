/* tests/fuzz/replay.c - a fuzz target without libFuzzer: every file of its
   committed corpus (tests/fuzz/corpus/NAME, or the directories and files
   given) fed to LLVMFuzzerTestOneInput once, so that make test replays
   every input the fuzzers found or were seeded with. A broken invariant
   aborts the program (tests/run.sh counts it); otherwise one check per
   directory. Built by the Makefile with -DFUZZ_NAME=\"NAME\". */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"
#define TH_PROGRAM "replay_" FUZZ_NAME
#include "../harness.h"
#include <dirent.h>
#include <sys/stat.h>

static long replay_file(const char* path) {
    FILE* f = fopen(path, "rb");
    long n;
    unsigned char* buf;
    if (!f) return -1;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) { fclose(f); return -1; }
    buf = (unsigned char*)malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); fclose(f); return -1; }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 1;
}

static void replay(const char* path) {
    struct stat st;
    long files = 0, bad = 0;
    DIR* d;
    struct dirent* e;
    if (stat(path, &st) != 0) { CHECK(0, "%s: no such file or directory", path); return; }
    if (!S_ISDIR(st.st_mode)) {
        CHECK(replay_file(path) == 1, "%s replayed", path);
        return;
    }
    if (!(d = opendir(path))) { CHECK(0, "%s: cannot open", path); return; }
    while ((e = readdir(d)) != NULL) {
        char file[4096];
        if (e->d_name[0] == '.') continue;
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        if (replay_file(file) == 1) files++;
        else bad++;
    }
    closedir(d);
    CHECK(files > 0 && bad == 0, "%s: %ld inputs replayed, every invariant held (%ld unreadable)", path, files, bad);
}

int main(int argc, char** argv) {
    int i;
    th__test = "replay_" FUZZ_NAME;
    if (argc < 2) replay("tests/fuzz/corpus/" FUZZ_NAME);
    for (i = 1; i < argc; i++) replay(argv[i]);
    return th_done();
}
