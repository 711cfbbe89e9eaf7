/* bench/cluster_validate.c - the cluster cost model (concerto.h, >>cluster)
   against NCCL's published bus bandwidths. Every figure this prints for the
   model is simulated (a formula, not a measurement); the published figures
   are others' measurements, each with its source.

   build/bench_cluster            both tables
   build/bench_cluster model      the model's bus bandwidth per preset, size, group
   build/bench_cluster compare    the model beside published nccl-tests figures

   Bus bandwidth as nccl-tests defines it (doc/PERFORMANCE.md in
   NVIDIA/nccl-tests): algbw = size / time, size being the buffer of an
   all-reduce and the whole (gathered or scattered) buffer of an all-gather
   or reduce-scatter; busbw = algbw * 2(n-1)/n for all-reduce and
   algbw * (n-1)/n for the other two. */
#define CONCERTO_NO_RUNTIME      /* the model is arithmetic: the scheduler-only build has it */
#define CONCERTO_IMPLEMENTATION
#include "../concerto.h"

#include <stdio.h>
#include <string.h>

/* A collective on a cluster spec: the spec checked, then cc_coll_us on its links. */
static cc_result cluster_coll_us(cc_context* ctx, const cc_cluster_spec* s, cc_coll_kind kind, uint64_t n_bytes,
                                 cc_group_shape group, cc_coll_algo algo, double* us) {
    cc_result rc;
    *us = 0;
    if ((rc = cc_cluster_check(ctx, s)) != CC_OK) return rc;
    return cc_coll_us(ctx, &s->intra, &s->inter, s->gpus_per_node, kind, n_bytes, group, algo, us);
}

/* The model's busbw (GB/s) of kind on n ranks, r a node, nccl-tests size
   `size` bytes, with the algorithm AUTO picks (its name in *algo). */
static double model_busbw(const cc_cluster_spec* s, cc_coll_kind kind, double size, int n, int r, const char** algo) {
    static const char* names[] = { "auto", "ring", "tree", "hier" };
    cc_group_shape g;
    double us = 0;
    uint64_t bytes = (uint64_t)(kind == CC_COLL_ALL_REDUCE ? size : size / n);   /* n_bytes: a rank's block for RS/AG */
    g.n_ranks = n; g.ranks_per_node = r;
    if (cluster_coll_us(NULL, s, kind, bytes, g, CC_ALGO_AUTO, &us) != CC_OK) return -1;
    if (algo) *algo = names[cc_cluster_coll_algo(s, kind, bytes, g)];
    return cc_busbw_gbps(kind, bytes, n, us);
}

static const char* kind_name(cc_coll_kind k) {
    return k == CC_COLL_ALL_REDUCE ? "all_reduce" : k == CC_COLL_ALL_GATHER ? "all_gather" : "reduce_scatter";
}

static void model_tables(void) {
    static const char* presets[] = { "a800", "a100", "h100" };
    static const cc_coll_kind kinds[] = { CC_COLL_ALL_REDUCE, CC_COLL_ALL_GATHER, CC_COLL_REDUCE_SCATTER };
    static const int nodes[] = { 1, 2, 4, 16, 128 };
    static const double sizes[] = { 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1024.0 * (1 << 20), 4096.0 * (1 << 20),
                                    8192.0 * (1 << 20) };
    static const char* size_names[] = { "1M", "4M", "16M", "64M", "256M", "1G", "4G", "8G" };
    int p, k, nd, z;
    for (p = 0; p < 3; p++) {
        cc_cluster_spec s;
        cc_cluster_preset(NULL, presets[p], &s);
        printf("\n%s (%s, NVLink %.0f GB/s x %.2f each way, network %.1f GB/s x %.2f a GPU): model busbw, GB/s "
               "(simulated), with the algorithm AUTO picks\n\n",
               presets[p], s.device.name, s.intra.gbps, s.intra.efficiency, s.inter.gbps, s.inter.efficiency);
        printf("| collective | GPUs (nodes x 8) |");
        for (z = 0; z < 8; z++) printf(" %s |", size_names[z]);
        printf("\n|---|---|");
        for (z = 0; z < 8; z++) printf("---|");
        printf("\n");
        for (k = 0; k < 3; k++)
            for (nd = 0; nd < 5; nd++) {
                int n = 8 * nodes[nd];
                printf("| %s | %d (%d x 8) |", kind_name(kinds[k]), n, nodes[nd]);
                for (z = 0; z < 8; z++) {
                    const char* a = "";
                    double bw = model_busbw(&s, kinds[k], sizes[z], n, 8, &a);
                    printf(" %.1f %s |", bw, a);
                }
                printf("\n");
            }
    }
}

typedef struct published {
    const char* preset;        /* the model's preset */
    double inter_gbps;         /* > 0: the preset's network changed to this (GB/s a GPU) */
    cc_coll_kind kind;
    int nodes;
    double size;               /* nccl-tests size, bytes */
    double busbw;              /* published, GB/s */
    const char* what;          /* the machine and run */
    const char* source;
    const char* note;          /* calibration, or why not comparable */
} published;

static void compare(void) {
    static const published rows[] = {
        { "h100", 0, CC_COLL_ALL_GATHER, 1, 8.0 * (1 << 30), 370, "8 x H100 SXM, NVLink4, ring / non-all-reduce",
          "NCCL maintainer, NVIDIA/nccl-tests#212", "calibration: intra.efficiency 0.82 = 370/450" },
        { "h100", 0, CC_COLL_ALL_REDUCE, 1, 8.0 * (1 << 30), 370, "8 x H100 SXM, NCCL_ALGO=RING",
          "NCCL maintainer, NVIDIA/nccl-tests#212", "calibration (as above)" },
        { "h100", 0, CC_COLL_ALL_REDUCE, 1, 8.0 * (1 << 30), 480, "8 x H100 SXM, default (NVLink SHARP)",
          "NVIDIA/nccl-tests#212 (~480), #290 (476)", "NVLS not modelled" },
        { "a100", 0, CC_COLL_ALL_REDUCE, 1, 1.0 * (1 << 30), 200, "8 x A100-80GB SXM (HPE Apollo 6500), NCCL 2.18",
          "NVIDIA/nccl-tests#149", "independent" },
        { "a100", 0, CC_COLL_ALL_REDUCE, 4, 8.0 * (1 << 30), 192, "DGX A100 nodes, 8 x 200 Gb/s HDR (node count not given)",
          "NVIDIA engineer in NVIDIA/nccl#812, quoted in #1576", "independent (4 nodes assumed)" },
        { "a100", 12.5, CC_COLL_ALL_REDUCE, 3, 128.0 * (1 << 20), 96, "3 x (8 A100-40GB SXM, 4 x 200 Gb/s HDR), peak up to 128 MB",
          "NVIDIA/nccl-tests#119", "independent; the a800 preset's network (800 Gb/s a node)" },
        { "h100", 0, CC_COLL_ALL_REDUCE, 2, 8.0 * (1 << 30), 376, "2 x DGX H100, 8 x 400 Gb/s NDR, NCCL_ALGO=RING, 46-48 GB/s a NIC",
          "NVIDIA engineer, NVIDIA/nccl-tests#290", "calibration: inter.efficiency 0.94 = 47/50" },
        { "h100", 0, CC_COLL_ALL_REDUCE, 2, 8.0 * (1 << 30), 470, "2 x 8 H100, 8 x 400 Gb/s, default algorithm (expected)",
          "NVIDIA/nccl#2409 citing nccl-tests#309", "NVLS/tree across 2 nodes not modelled" },
        { "a800", 0, CC_COLL_ALL_REDUCE, 1, 8.0 * (1 << 30), 215, "8 x H800 (NVLink 400 GB/s like the A800), NVLS",
          "NVIDIA/nccl#1374", "not comparable: Hopper with NVLS; no A800 figure found" },
    };
    int i;
    printf("\nThe model (simulated) beside published nccl-tests bus bandwidths, GB/s\n\n");
    printf("| machine and run | collective | GPUs | size | published | model (simulated) | algorithm | model / published | source | note |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (i = 0; i < (int)(sizeof rows / sizeof rows[0]); i++) {
        const published* p = &rows[i];
        cc_cluster_spec s;
        const char* a = "";
        double bw;
        int n = 8 * p->nodes;
        cc_cluster_preset(NULL, p->preset, &s);
        if (p->inter_gbps > 0) s.inter.gbps = p->inter_gbps;
        bw = model_busbw(&s, p->kind, p->size, n, 8, &a);
        /* a forced ring where the published run forced one */
        if (strstr(p->what, "ALGO=RING")) {
            cc_group_shape g;
            double us = 0;
            uint64_t bytes = (uint64_t)(p->kind == CC_COLL_ALL_REDUCE ? p->size : p->size / n);
            g.n_ranks = n; g.ranks_per_node = 8;
            cluster_coll_us(NULL, &s, p->kind, bytes, g, CC_ALGO_RING, &us);
            bw = cc_busbw_gbps(p->kind, bytes, n, us);
            a = "ring";
        }
        printf("| %s | %s | %d | %.0f MB | %.0f | %.1f | %s | %.2f | %s | %s |\n", p->what, kind_name(p->kind), n, p->size / (1 << 20),
               p->busbw, bw, a, bw / p->busbw, p->source, p->note);
    }
}

int main(int argc, char** argv) {
    const char* what = argc > 1 ? argv[1] : "all";
    if (strcmp(what, "all") && strcmp(what, "model") && strcmp(what, "compare")) {
        fprintf(stderr, "usage: %s [model|compare|all]\n", argv[0]);
        return 2;
    }
    printf("cluster cost model: every model figure is simulated (concerto.h >>cluster), not measured\n");
    if (!strcmp(what, "all") || !strcmp(what, "model")) model_tables();
    if (!strcmp(what, "all") || !strcmp(what, "compare")) compare();
    return 0;
}
