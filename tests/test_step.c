/* tests/test_step.c - the transformer step described once
   (examples/steps/gpt_step.h), built with sizes only as a planner builds it:
   - a small GPT (L=2, C=64, H=4, T=16, V=128, micro-batch 2) under TP2 x
     DP2: the number of ops of each kind, each layer's FLOPs forward and
     backward, the parameters of one shard and the bytes of every
     collective, each against a hand computation in the comments; and with
     sequence parallelism, ZeRO-1/2/3, custom buckets (padded for dp 3),
     gradients reduced when ready, two pipeline stages with 4 micro-batches
     in 1F1B order, and float16;
   - the graph built in memory (a kernel table's allocator) and the
     sizes-only graph are the same graph (fingerprints), for several
     layouts; building twice gives identical graphs and op descriptions;
   - a 96-layer model of GPT-3 175B's shape builds in little memory;
   - bad input is refused with a message naming the option;
   - a planning communicator refuses to run a collective;
   - the library's decomposition and fusion rewrite a sizes-only step;
   - transients: the same ops and the same order (every op's set of
     ancestors) as the bound step, in several layouts; the buffers marked
     transient (activations, ZeRO-3's gathers, one per pass) and bound
     (parameters, gradients, shards), with sizes by hand. */
#include <string.h>
#include <sys/resource.h>
#include "util.h"
#include "../examples/steps/gpt_step.h"

static cc_context* g_ctx;

/* The small model: N = 2 x 16 = 32 rows, C = 64; with TP2 Cl = 32,
   F = 4C/2 = 128, Hl = 2 heads of 16. */
static gpt_step_desc small_desc(int tp, int dp) {
    gpt_step_desc d;
    memset(&d, 0, sizeof d);
    d.cfg.V = 128; d.cfg.C = 64; d.cfg.L = 2; d.cfg.H = 4; d.cfg.T = 16;
    d.micro_batch = 2;
    d.tp = tp; d.dp = dp;
    return d;
}

/* A built step: model, graph, records. */
typedef struct built { gpt_model m; cc_graph* g; gpt_op_store ops; cc_result rc; } built;

static built* build(const gpt_step_desc* d, int train) {
    built* b = (built*)calloc(1, sizeof *b);
    if (!b) return NULL;
    b->rc = gpt_model_create(&b->m, d, NULL, g_ctx);
    if (b->rc == CC_OK) b->rc = gpt_step_plan_comms(&b->m);
    if (b->rc == CC_OK) b->rc = gpt_build_graph(&b->m, train, &b->g, &b->ops);
    if (b->rc != CC_OK) NOTE("build failed: %s / %s", b->m.error, cc_last_error(g_ctx));
    return b;
}
static void unbuild(built* b) {
    if (!b) return;
    cc_graph_destroy(b->g);
    gpt_op_store_free(&b->ops);
    gpt_model_free(&b->m);
    free(b);
}

/* Counts of ops of a built graph, by what they are. */
static int count(const built* b, int kind, cc_coll_kind coll, int group) {
    int i, n = 0;
    for (i = 0; i < b->ops.n_info; i++) {
        const gpt_step_op_info* in = &b->ops.info[i];
        if ((kind < -1 || in->kind == kind) && in->coll == coll && (group < 0 || in->group == group)) n++;
    }
    return n;
}
static int n_compute(const built* b) {
    int i, n = 0;
    for (i = 0; i < b->ops.n_info; i++) n += b->ops.info[i].kind >= 0;
    return n;
}
static double layer_flops(const built* b, int layer, int phase, int micro) {
    double f = 0;
    int i;
    for (i = 0; i < b->ops.n_info; i++) {
        const gpt_step_op_info* in = &b->ops.info[i];
        if (in->layer == layer && in->phase == phase && in->micro == micro && in->kind >= 0) f += in->flops;
    }
    return f;
}
/* The op named name (exactly), or -1. */
static int op_named(const built* b, const char* name) {
    int i, n = cc_graph_n_ops(b->g);
    for (i = 0; i < n; i++)
        if (!strcmp(cc_op_name(b->g, cc_graph_op(b->g, i)), name)) return i;
    return -1;
}

/* ---- TP2 x DP2, float32 ---------------------------------------------------- */
static void test_tp2_dp2(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b = build(&d, 1);
    size_t shard = 0;
    int p, i;
    if (!CHECK(b && b->rc == CC_OK, "TP2 x DP2 builds with sizes only")) { unbuild(b); return; }
    /* parameters: 2 embeddings + 12 per block x 2 + 2 final norm = 28 */
    CHECK_INT(b->m.np, 28, "28 parameter tensors");
    /* one TP rank's shard of a block: ln1 2x64, attn_w 192x64/2 = 6144,
       attn_b 96, proj_w 64x64/2 = 2048, proj_b 64, ln2 2x64, fc_w
       256x64/2 = 8192, fc_b 128, fcproj_w 64x256/2 = 8192, fcproj_b 64:
       128 + 6144 + 96 + 2048 + 64 + 128 + 8192 + 128 + 8192 + 64 = 25184;
       the whole shard: wte 128x64 = 8192, wpe 16x64 = 1024, 2 blocks,
       lnf 128: 8192 + 1024 + 50368 + 128 = 59712 */
    for (p = 0; p < b->m.np; p++) shard += gpt_tensor_elems(b->m.param[p]);
    CHECK_INT(shard, 59712, "one TP rank's shard of the parameters: 59712 elements");
    for (p = 2, shard = 0; p < 14; p++) shard += gpt_tensor_elems(b->m.param[p]);
    CHECK_INT(shard, 25184, "one block's shard: 25184 elements");
    /* compute ops: forward embed + 9 per block x 2 + lnf, head, loss = 22;
       backward head.bwd_w, head.bwd_x, lnf.bwd + 11 per block x 2 +
       embed.bwd = 26; update 28 sumsq + grad_norm + 28 adamw = 57 */
    CHECK_INT(n_compute(b), 22 + 26 + 57, "105 compute ops");
    CHECK_INT(count(b, GPT_OP_MATMUL, CC_COLL_NONE, -1), 2 * 3 + 1, "7 matmuls (qkv, proj, fcproj per block; the head)");
    CHECK_INT(count(b, GPT_OP_MATMUL_BWD_W, CC_COLL_NONE, -1), 2 * 4 + 1, "9 weight-gradient matmuls");
    /* TP all-reduces: 2 forward and 2 backward per block, the norm's 1 = 9;
       DP: the loss and one per parameter = 29 */
    CHECK_INT(count(b, -2, CC_COLL_ALL_REDUCE, GPT_GROUP_TP), 9, "9 TP all-reduces");
    CHECK_INT(count(b, -2, CC_COLL_ALL_REDUCE, GPT_GROUP_DP), 29, "29 DP all-reduces");
    CHECK_INT(cc_graph_n_ops(b->g), 105 + 9 + 29, "143 ops in all");
    CHECK_INT(b->ops.n_info, cc_graph_n_ops(b->g), "one op description per op");
    /* FLOPs of block 0 forward, one TP rank (N = 32, C = 64, Cl = 32, F = 128):
         ln1    8 N C              =  16384
         qkv    2 N C (3 Cl)       = 393216
         attn   B Hl (4 T^2 hs + 5 T^2) = 2 x 2 x (16384 + 1280) = 70656
         proj   2 N Cl C           = 131072
         resid1 2 N C              =   4096
         ln2                       =  16384
         fc     2 N C F + 8 N F    = 524288 + 32768 = 557056
         fcproj 2 N F C            = 524288
         resid2                    =   4096
       sum 1717248 */
    CHECK_NEAR(layer_flops(b, 0, GPT_PHASE_FORWARD, 0), 1717248, 0.5, "block 0 forward: 1717248 FLOPs");
    CHECK_NEAR(layer_flops(b, 1, GPT_PHASE_FORWARD, 0), 1717248, 0.5, "block 1 forward: the same");
    /* backward: fcproj.bwd_w 524288, fcproj.bwd_x 524288 + 10 N F = 565248,
       fc.bwd_w 524288, fc.bwd_x 524288, ln2.bwd 12 N C = 24576,
       proj.bwd_w 131072, proj.bwd_x 131072,
       attn.bwd B Hl (8 T^2 hs + 4 T^2) = 4 x (32768 + 1024) = 135168,
       qkv.bwd_w 393216, qkv.bwd_x 393216, ln1.bwd 24576: sum 3371008 */
    CHECK_NEAR(layer_flops(b, 0, GPT_PHASE_BACKWARD, 0), 3371008, 0.5, "block 0 backward: 3371008 FLOPs");
    /* bytes: a TP all-reduce moves N x C = 2048 floats = 8192 bytes; the
       gradient all-reduce of h0.attn_w its shard, 6144 x 4 = 24576; of
       wte 8192 x 4 = 32768; the loss 4 bytes, the norm 8 */
    i = op_named(b, "h0.proj.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 8192 && b->ops.info[i].group_size == 2, "h0.proj.allreduce: 8192 bytes over 2 ranks");
    i = op_named(b, "h1.qkv.bwd.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 8192 && b->ops.info[i].phase == GPT_PHASE_BACKWARD, "h1.qkv.bwd.allreduce: 8192 bytes");
    i = op_named(b, "h0.attn_w.grad.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 24576 && b->ops.info[i].first_param == 4 && b->ops.info[i].n_params == 1,
          "h0.attn_w.grad.allreduce: 24576 bytes, covering parameter 4 alone");
    i = op_named(b, "wte.grad.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 32768, "wte.grad.allreduce: 32768 bytes");
    i = op_named(b, "loss.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 4, "loss.allreduce: 4 bytes");
    i = op_named(b, "grad_norm.allreduce");
    CHECK(i >= 0 && b->ops.info[i].bytes == 8 && b->ops.info[i].group == GPT_GROUP_TP, "grad_norm.allreduce: 8 bytes over TP");
    /* after the backward (the default): every gradient all-reduce after embed.bwd */
    CHECK(op_named(b, "h1.fcproj_b.grad.allreduce") > op_named(b, "embed.bwd"), "gradients reduced after the whole backward");
    /* no fn anywhere, and the graph's collectives run nothing */
    {
        cc_op op = cc_graph_op(b->g, op_named(b, "h0.qkv"));
        CHECK(cc_op_user_data(b->g, op) == NULL, "a sizes-only compute op has no work");
    }
    unbuild(b);
}

/* ---- sequence parallelism ---------------------------------------------------- */
static void test_sp(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    int i;
    d.sp = 1;
    b = build(&d, 1);
    if (!CHECK(b && b->rc == CC_OK, "TP2 x DP2 with SP builds")) { unbuild(b); return; }
    /* forward per block: all-gathers before qkv and fc, reduce-scatters
       after proj and fcproj; backward: all-gathers of dy and dx1,
       reduce-scatters after fc.bwd_x and qkv.bwd_x: 4 + 4 per block */
    CHECK_INT(count(b, -2, CC_COLL_ALL_GATHER, GPT_GROUP_TP), 2 * 4, "8 TP all-gathers");
    CHECK_INT(count(b, -2, CC_COLL_REDUCE_SCATTER, GPT_GROUP_TP), 2 * 4, "8 TP reduce-scatters");
    /* TP all-reduces: no activation ones; the loss (AVG over TP), the
       norm, and the gradients of the parameters applied on N/tp rows:
       wte, wpe, ln1 and ln2 (w, b) of 2 blocks, lnf (w, b) = 2 + 8 + 2 = 12 */
    CHECK_INT(count(b, -2, CC_COLL_ALL_REDUCE, GPT_GROUP_TP), 2 + 12, "14 TP all-reduces (loss, norm, 12 partial gradients)");
    /* a reduce-scatter of proj: its input N x C = 2048 floats (8192 bytes
       whole), each rank keeps 1024 */
    i = op_named(b, "h0.proj.reduce_scatter");
    CHECK(i >= 0 && b->ops.info[i].bytes == 8192 && b->ops.info[i].n_elems == 1024, "h0.proj.reduce_scatter: 8192 bytes, 1024 each");
    i = op_named(b, "h0.ln1.allgather");
    CHECK(i >= 0 && b->ops.info[i].bytes == 8192 && b->ops.info[i].n_elems == 1024, "h0.ln1.allgather: 1024 each, 8192 bytes whole");
    /* block 0 forward with norms and residuals on 16 rows: 1717248 - 8192 x 2 - 2048 x 2 = 1696768 */
    CHECK_NEAR(layer_flops(b, 0, GPT_PHASE_FORWARD, 0), 1696768, 0.5, "block 0 forward with SP: 1696768 FLOPs");
    /* the norm gradient's TP all-reduce comes before its DP all-reduce */
    CHECK(op_named(b, "h0.ln1_w.grad.tp_allreduce") >= 0 &&
          op_named(b, "h0.ln1_w.grad.tp_allreduce") < op_named(b, "h0.ln1_w.grad.allreduce"),
          "h0.ln1_w: summed over TP, then averaged over DP");
    CHECK(op_named(b, "h0.proj_b.grad.tp_allreduce") < 0, "h0.proj_b's gradient is whole: no TP all-reduce");
    unbuild(b);
}

/* ---- ZeRO ------------------------------------------------------------------------ */
static void test_zero(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    int z, i;
    for (z = 1; z <= 2; z++) {
        d.zero = z;
        b = build(&d, 1);
        if (!CHECK(b && b->rc == CC_OK, "ZeRO-%d builds", z)) { unbuild(b); continue; }
        /* 28 buckets, 28 gathers after the update. ZeRO-2: 28 gradient
           reduce-scatters and no gradient all-reduce; ZeRO-1: the 28
           gradient all-reduces of the step without ZeRO and no
           reduce-scatter. The norm summed over DP as well. */
        CHECK_INT(count(b, -2, CC_COLL_REDUCE_SCATTER, GPT_GROUP_DP), z == 2 ? 28 : 0, "ZeRO-%d: %d gradient reduce-scatters", z,
                  z == 2 ? 28 : 0);
        CHECK_INT(count(b, -2, CC_COLL_ALL_GATHER, GPT_GROUP_DP), 28, "ZeRO-%d: 28 parameter all-gathers", z);
        CHECK_INT(count(b, -2, CC_COLL_ALL_REDUCE, GPT_GROUP_DP), z == 2 ? 2 : 30,
                  "ZeRO-%d: DP all-reduces of the loss and the norm (and with ZeRO-1 the 28 gradients')", z);
        /* AdamW on the rank's half: h0.attn_w 6144 / 2 = 3072 elements */
        i = op_named(b, "h0.attn_w.adamw");
        CHECK(i >= 0 && b->m.adam_m[4]->bytes == 3072 * 4,
              "ZeRO-%d: h0.attn_w's moments are 3072 floats (half the shard)", z);
        if (z == 2) {
            i = op_named(b, "h0.attn_w.grad.reduce_scatter");
            CHECK(i >= 0 && b->ops.info[i].n_elems == 3072 && b->ops.info[i].bytes == 24576,
                  "ZeRO-2: h0.attn_w.grad.reduce_scatter: 3072 each of 24576 bytes");
        } else {   /* the whole bucket all-reduced; the rank's shard is its DP rank's part of it */
            i = op_named(b, "h0.attn_w.grad.allreduce");
            CHECK(i >= 0 && b->ops.info[i].n_elems == 6144 && b->ops.info[i].bytes == 24576,
                  "ZeRO-1: h0.attn_w.grad.allreduce: 6144 elements, 24576 bytes");
            CHECK(b->m.grad_shard[4]->whole == b->m.grads &&
                  b->m.grad_shard[4]->off == b->m.bucket_grad[4]->off + (size_t)b->m.dp_rank * 3072 * 4,
                  "ZeRO-1: the rank's gradient shard is its part of the all-reduced bucket");
        }
        CHECK(op_named(b, "h0.attn_w.param.allgather") > op_named(b, "h0.attn_w.adamw"), "ZeRO-%d: gathered after its update", z);
        unbuild(b);
    }
    d.zero = 3;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "ZeRO-3 builds")) {
        /* gathers: forward embed 2, blocks 12 x 2, final 2 (wte is still
           there for the head) = 28; backward final 2 + wte 1, blocks 24,
           the embedding's backward reads no weight = 27; none after the
           update */
        CHECK_INT(count(b, -2, CC_COLL_ALL_GATHER, GPT_GROUP_DP), 28 + 27, "ZeRO-3: 55 parameter all-gathers");
        CHECK_INT(count(b, -2, CC_COLL_REDUCE_SCATTER, GPT_GROUP_DP), 28, "ZeRO-3: 28 gradient reduce-scatters");
        CHECK(op_named(b, "h1.fc_w.param.allgather") < op_named(b, "h1.ln1"), "ZeRO-3: block 1's parameters gathered before its forward");
        for (i = 0; i < b->ops.n_info; i++)
            if (b->ops.info[i].coll == CC_COLL_ALL_GATHER && b->ops.info[i].phase == GPT_PHASE_UPDATE) break;
        CHECK(i == b->ops.n_info, "ZeRO-3: no gather after the update");
        i = op_named(b, "h0.attn_w.param.allgather");
        CHECK(i >= 0 && b->ops.info[i].bucket == 4 && b->ops.info[i].bytes == 24576, "ZeRO-3: h0.attn_w's gather covers bucket 4, 24576 bytes");
    }
    unbuild(b);
}

/* ---- buckets ------------------------------------------------------------------ */
static void test_buckets(void) {
    /* 3 buckets: {wte, wpe}, block 0, block 1 with lnf; dp 3 with ZeRO-2:
       elements per TP2 rank 9216, 25184, 25184 + 128 = 25312, padded to
       multiples of 3: 9216, 25185, 25314; shards 3072, 8395, 8438 */
    int bucket_of[28], p, i;
    gpt_step_desc d = small_desc(2, 3);
    built* b;
    for (p = 0; p < 28; p++) bucket_of[p] = p < 2 ? 0 : p < 14 ? 1 : 2;
    d.bucket_of = bucket_of;
    d.n_bucket_of = 28;
    d.zero = 2;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "3 buckets, ZeRO-2 over dp 3, build")) {
        CHECK_INT(count(b, -2, CC_COLL_REDUCE_SCATTER, GPT_GROUP_DP), 3, "3 reduce-scatters");
        i = op_named(b, "bucket1.grad.reduce_scatter");
        CHECK(i >= 0 && b->ops.info[i].n_elems == 8395 && b->ops.info[i].first_param == 2 && b->ops.info[i].n_params == 12,
              "bucket 1: 8395 elements each (25184 padded to 25185), parameters 2..13");
        i = op_named(b, "bucket2.grad.reduce_scatter");
        CHECK(i >= 0 && b->ops.info[i].n_elems == 8438, "bucket 2: 8438 elements each (25312 padded to 25314)");
        i = op_named(b, "bucket0.grad.reduce_scatter");
        CHECK(i >= 0 && b->ops.info[i].bytes == 9216 * 4, "bucket 0: 36864 bytes whole");
    }
    unbuild(b);
    /* when ready, all-reduce: bucket 2 (block 1 and lnf) is complete after
       h1's backward, before block 0's; bucket 0 only after embed.bwd */
    d = small_desc(2, 2);
    d.bucket_of = bucket_of;
    d.n_bucket_of = 28;
    d.grad_sync = GPT_SYNC_WHEN_READY;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "3 buckets when ready build")) {
        int b2 = op_named(b, "bucket2.grad.allreduce"), b1 = op_named(b, "bucket1.grad.allreduce");
        int b0 = op_named(b, "bucket0.grad.allreduce");
        CHECK(b2 > op_named(b, "h1.ln1.bwd") && b2 < op_named(b, "h0.fcproj.bwd_w"), "bucket 2 right after h1's backward");
        CHECK(b1 > op_named(b, "h0.ln1.bwd") && b1 < op_named(b, "embed.bwd"), "bucket 1 right after h0's backward");
        CHECK(b0 > op_named(b, "embed.bwd") && b0 < op_named(b, "wte.sumsq"), "bucket 0 after embed.bwd (wte's last producer)");
        CHECK(b2 >= 0 && b->ops.info[b2].bytes == 25312 * 4, "bucket 2: 101248 bytes");
    }
    unbuild(b);
    /* a bucket that is not consecutive parameters */
    bucket_of[5] = 0;
    d = small_desc(2, 2);
    d.bucket_of = bucket_of;
    d.n_bucket_of = 28;
    b = build(&d, 1);
    CHECK(b && b->rc == CC_ERR_INVALID_ARG, "a bucket of non-consecutive parameters is refused");
    if (b) {
        const char* msg = b->m.error;
        CHECK_CONTAINS(msg, "consecutive", "the message says buckets must be consecutive");
    }
    unbuild(b);
}

/* ---- pipeline ------------------------------------------------------------------ */
/* The compute ops' (phase, micro-batch) changes in program order as a
   string: F0 F1 B0 ... */
static void order_of(const built* b, char* out, size_t n) {
    int i, ph = -1, mi = -1;
    size_t at = 0;
    out[0] = 0;
    for (i = 0; i < b->ops.n_info; i++) {
        const gpt_step_op_info* in = &b->ops.info[i];
        if (in->kind < 0 || in->phase == GPT_PHASE_UPDATE) continue;
        if (in->phase == ph && in->micro == mi) continue;
        ph = in->phase;
        mi = in->micro;
        at += (size_t)snprintf(out + at, n - at, "%s%c%d", at ? " " : "", ph == GPT_PHASE_FORWARD ? 'F' : 'B', mi);
    }
}

static void test_pipeline(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    char order[256];
    int i;
    d.pp = 2;
    d.n_micro = 4;
    /* stage 0 of 2: 1F1B warms up with pp - 1 - 0 = 1 forward */
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "stage 0 of 2, 4 micro-batches, builds")) {
        order_of(b, order, sizeof order);
        CHECK(!strcmp(order, "F0 F1 B0 F2 B1 F3 B2 B3"), "stage 0's 1F1B order: F0 F1 B0 F2 B1 F3 B2 B3 (got %s)", order);
        CHECK_INT(count(b, -2, CC_COLL_SEND, GPT_GROUP_PP), 4, "stage 0: 4 sends of activations");
        CHECK_INT(count(b, -2, CC_COLL_RECV, GPT_GROUP_PP), 4, "stage 0: 4 receives of gradients");
        CHECK_INT(count(b, -1, CC_COLL_NONE, GPT_GROUP_PP), 4, "stage 0: 4 no-stream ops for the later stages");
        /* stage 0 holds wte, wpe and block 0: 2 + 12 parameters */
        CHECK_INT(b->m.np, 14, "stage 0: 14 parameters");
        /* the activations sent: N x C = 2048 floats, 8192 bytes */
        i = op_named(b, "mb2.pp.send_act");
        CHECK(i >= 0 && b->ops.info[i].bytes == 8192 && b->ops.info[i].micro == 2, "mb2.pp.send_act: 8192 bytes, micro-batch 2");
        CHECK(op_named(b, "mb2.pp.other_stages") > i && op_named(b, "mb2.pp.recv_grad") > op_named(b, "mb2.pp.other_stages"),
              "mb2: send, the later stages, then the gradient's receive");
        /* each micro-batch's block 0 forward has the same FLOPs */
        CHECK_NEAR(layer_flops(b, 0, GPT_PHASE_FORWARD, 3), 1717248, 0.5, "micro-batch 3's block 0 forward: 1717248 FLOPs");
        CHECK(op_named(b, "grad_norm.pp_allreduce") >= 0, "the norm summed over the stages");
    }
    unbuild(b);
    d.pp_rank = 1;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "stage 1 of 2 builds")) {
        order_of(b, order, sizeof order);
        CHECK(!strcmp(order, "F0 B0 F1 B1 F2 B2 F3 B3"), "the last stage alternates: F0 B0 F1 B1 ... (got %s)", order);
        CHECK_INT(count(b, -2, CC_COLL_RECV, GPT_GROUP_PP), 4, "stage 1: 4 receives of activations");
        CHECK_INT(count(b, -2, CC_COLL_SEND, GPT_GROUP_PP), 4, "stage 1: 4 sends of gradients");
        /* block 1, lnf (2) and the head's own copy of wte */
        CHECK_INT(b->m.np, 15, "stage 1: 15 parameters (block 1, lnf, head_w)");
        i = op_named(b, "mb1.h1.qkv");
        CHECK(i >= 0 && b->ops.info[i].layer == 1, "stage 1 names its block by its global index (h1)");
    }
    unbuild(b);
    /* gradient accumulation: pp 1, 3 micro-batches */
    d = small_desc(1, 2);
    d.n_micro = 3;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "3 accumulated micro-batches build")) {
        order_of(b, order, sizeof order);
        CHECK(!strcmp(order, "F0 B0 F1 B1 F2 B2"), "accumulation: F0 B0 F1 B1 F2 B2 (got %s)", order);
        CHECK_INT(count(b, -2, CC_COLL_ALL_REDUCE, GPT_GROUP_DP), 3 + 28, "one DP gradient all-reduce per parameter, once");
        i = op_named(b, "mb1.h0.qkv.bwd_w");
        CHECK(i >= 0 && op_named(b, "mb0.h0.qkv.bwd_w") < i, "micro-batch 1 accumulates after micro-batch 0");
    }
    unbuild(b);
}

/* ---- float16 ------------------------------------------------------------------- */
static void test_fp16(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    int i;
    d.coll_dtype = CC_DTYPE_FLOAT16;
    d.act_bytes = 2;
    d.param_bytes = 2;
    d.pp = 2;
    d.n_micro = 2;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "float16 with pp 2 builds")) {
        /* half the bytes of float32: 2048 x 2 */
        i = op_named(b, "mb0.h0.proj.allreduce");
        CHECK(i >= 0 && b->ops.info[i].bytes == 4096, "mb0.h0.proj.allreduce: 4096 bytes in float16");
        i = op_named(b, "mb1.pp.send_act");
        CHECK(i >= 0 && b->ops.info[i].bytes == 4096, "mb1.pp.send_act: 4096 bytes");
        i = op_named(b, "h0.attn_w.grad.allreduce");
        CHECK(i >= 0 && b->ops.info[i].bytes == 6144 * 2, "h0.attn_w.grad.allreduce: 12288 bytes");
        CHECK_NEAR(layer_flops(b, 0, GPT_PHASE_FORWARD, 1), 1717248, 0.5, "FLOPs do not depend on the element size");
    }
    unbuild(b);
}

/* ---- the same graph in memory and with sizes only; twice the same ------------- */
static void* host_alloc(size_t n) { return calloc(n, 1); }
static int host_copy(void* dst, const void* src, size_t n) { memcpy(dst, src, n); return 1; }

static void test_same_graph(void) {
    static const int layouts[][7] = {   /* tp, dp, pp, sp, zero, bf16, n_micro */
        { 1, 1, 1, 0, 0, 0, 1 }, { 2, 2, 1, 0, 0, 0, 1 }, { 2, 2, 1, 0, 0, 1, 1 }, { 4, 1, 1, 1, 0, 1, 1 },
        { 2, 2, 1, 1, 3, 0, 2 }, { 1, 2, 2, 0, 1, 0, 4 }, { 2, 1, 2, 1, 0, 1, 2 },
    };
    gpt_kernel_table k;
    int li;
    memset(&k, 0, sizeof k);
    k.alloc_zeroed = host_alloc;
    k.free_memory = free;
    k.copy_in = host_copy;
    k.copy_out = host_copy;
    for (li = 0; li < (int)(sizeof layouts / sizeof layouts[0]); li++) {
        const int* L = layouts[li];
        gpt_step_desc d = small_desc(L[0], L[1]);
        built *a, *b, *mem = (built*)calloc(1, sizeof *mem);
        int t;
        d.pp = L[2]; d.sp = L[3]; d.zero = L[4]; d.n_micro = L[6];
        d.coll_dtype = L[5] ? CC_DTYPE_BFLOAT16 : CC_DTYPE_FLOAT32;
        d.pp_rank = L[2] - 1;
        for (t = 0; t < 2; t++) {
            a = build(&d, t);
            b = build(&d, t);
            mem->rc = gpt_model_create(&mem->m, &d, &k, g_ctx);
            if (mem->rc == CC_OK) mem->rc = gpt_step_plan_comms(&mem->m);
            if (mem->rc == CC_OK) mem->rc = gpt_build_graph(&mem->m, t, &mem->g, &mem->ops);
            if (CHECK(a && b && a->rc == CC_OK && b->rc == CC_OK && mem->rc == CC_OK, "layout %d (%s) builds three times", li,
                      t ? "step" : "evaluation")) {
                CHECK(a->ops.fingerprint == b->ops.fingerprint && a->ops.n_info == b->ops.n_info &&
                          !memcmp(a->ops.info, b->ops.info, sizeof(gpt_step_op_info) * (size_t)a->ops.n_info),
                      "tp %d dp %d pp %d sp %d zero %d %s M %d: building twice gives the same graph and descriptions", L[0], L[1],
                      L[2], L[3], L[4], L[5] ? "bf16" : "f32", L[6]);
                CHECK(a->ops.fingerprint == mem->ops.fingerprint && mem->m.n_blocks > 0,
                      "tp %d dp %d pp %d sp %d zero %d %s M %d: the graph in memory is the sizes-only graph (%016llx)", L[0],
                      L[1], L[2], L[3], L[4], L[5] ? "bf16" : "f32", L[6], (unsigned long long)a->ops.fingerprint);
            }
            unbuild(a);
            unbuild(b);
            cc_graph_destroy(mem->g);
            gpt_op_store_free(&mem->ops);
            gpt_model_free(&mem->m);
            memset(mem, 0, sizeof *mem);
        }
        free(mem);
    }
}

/* ---- a 96-layer model --------------------------------------------------------- */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GPT_TEST_MAX_RSS_MIB 4096
#else
#define GPT_TEST_MAX_RSS_MIB 512
#endif
static void test_large(void) {
    /* GPT-3 175B's shape (Brown et al. 2020, table 2.1): 96 layers, width
       12288, 96 heads, context 2048; vocabulary 50257 */
    gpt_step_desc d;
    built* b;
    struct rusage ru;
    double params = 0;
    int p;
    memset(&d, 0, sizeof d);
    d.cfg.V = 50257; d.cfg.C = 12288; d.cfg.L = 96; d.cfg.H = 96; d.cfg.T = 2048;
    d.micro_batch = 1;
    d.tp = 8; d.dp = 16; d.pp = 1; d.n_micro = 1; d.zero = 1;
    d.coll_dtype = CC_DTYPE_FLOAT16; d.act_bytes = 2; d.param_bytes = 2;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "GPT-3 175B's shape, 96 layers, TP8 x DP16 ZeRO-1, builds with sizes only")) {
        /* 12 C^2 + 13 C per block: 96 x (12 x 12288^2 + 13 x 12288) =
           173,946,175,488; plus wte 50257 x 12288, wpe 2048 x 12288, lnf
           2 x 12288: about 174.6e9 */
        for (p = 0; p < b->m.layout->n; p++) params += (double)b->m.layout->p[p].rows * b->m.layout->p[p].cols;
        CHECK_NEAR(params / 1e9, 174.6, 0.1, "the model has 174.6 billion parameters (%.1f)", params / 1e9);
        /* sizes only: megabytes, where the model's bytes would be 350 GB
           (sanitizers' shadow and quarantine take more of the process) */
        getrusage(RUSAGE_SELF, &ru);
        CHECK(ru.ru_maxrss < (long)GPT_TEST_MAX_RSS_MIB * 1024, "built in %ld MiB of memory (< %d)", ru.ru_maxrss / 1024,
              GPT_TEST_MAX_RSS_MIB);
        CHECK(cc_graph_n_ops(b->g) > 96 * 20, "%d ops", cc_graph_n_ops(b->g));
    }
    unbuild(b);
    d.pp = 8; d.pp_rank = 3; d.n_micro = 16; d.dp = 2; d.zero = 3;
    b = build(&d, 1);
    CHECK(b && b->rc == CC_OK && b->m.Ls == 12, "stage 3 of 8 (12 layers), 16 micro-batches, ZeRO-3, builds (%d ops)",
          b && b->g ? cc_graph_n_ops(b->g) : 0);
    unbuild(b);
}

/* ---- bad input ---------------------------------------------------------------- */
static void refused(gpt_step_desc d, const char* option, const char* what) {
    built* b = build(&d, 1);
    const char* msg = b ? b->m.error : "";
    if (CHECK(b && b->rc == CC_ERR_INVALID_ARG, "%s is refused", what)) CHECK_CONTAINS(msg, option, "the message names %s", option);
    unbuild(b);
}
static void test_bad_input(void) {
    gpt_step_desc d = small_desc(3, 1);
    refused(d, "--tp", "TP 3 with 4 heads");
    d = small_desc(1, 1); d.pp = 3; d.n_micro = 3;
    refused(d, "--pp", "PP 3 with 2 layers");
    d = small_desc(1, 1); d.pp = 2; d.n_micro = 1;
    refused(d, "--micro-batches", "1 micro-batch for 2 stages");
    d = small_desc(1, 2); d.zero = 4;
    refused(d, "--zero", "ZeRO 4");
    d = small_desc(1, 1); d.zero = 1;
    refused(d, "--dp", "ZeRO without DP");
    d = small_desc(1, 2); d.sp = 1;
    refused(d, "--sp", "SP without TP");
    d = small_desc(2, 1); d.micro_batch = 0;
    refused(d, "--micro-batch", "no sequences");
    d = small_desc(2, 1); d.cfg.H = 5;
    refused(d, "--heads", "a width that does not divide into the heads");
    d = small_desc(2, 1); d.act_bytes = 3;
    refused(d, "2 or 4", "3-byte activations");
}

/* ---- the library's rewrites on a sizes-only step --------------------------------- */
/* With chunk_stubs the ops around the TP all-reduces may be cut into
   chunks, so decomposition has something to split; the gradient
   all-reduces lie back to back in the flat gradient buffer, so fusion
   may merge them. Durations from the CPU trainer's model of a slow link
   (gpt_train.h's model_durations with --link 50 --latency 10): compute
   1 us per 1000 bytes touched; DP collectives 10 us + 50 us per KiB, TP
   collectives 5 us + 12.5 us per KiB. */
static void test_rewrites(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    int i;
    d.chunk_stubs = 1;
    b = build(&d, 1);
    if (CHECK(b && b->rc == CC_OK, "TP2 x DP2 with chunk stubs builds")) {
        cc_graph *dg = NULL, *fg = NULL;
        cc_rewrite_report rep;
        for (i = 0; i < cc_graph_n_ops(b->g); i++) {
            const gpt_step_op_info* in = &b->ops.info[i];
            double us = in->group == GPT_GROUP_TP ? 5 + in->bytes * 50.0 / 4096 : in->group == GPT_GROUP_DP ? 10 + in->bytes * 50.0 / 1024
                      : in->bytes / 1000;
            cc_op_set_duration(b->g, cc_graph_op(b->g, i), us);
        }
        cc_result r;
        memset(&rep, 0, sizeof rep);
        r = cc_graph_decompose(g_ctx, b->g, NULL, &dg, &rep);
        CHECK(r == CC_OK && rep.n_changed > 0, "decomposition splits TP all-reduces of the sizes-only step (%d of %d)", rep.n_changed,
              rep.n_candidates);
        if (r != CC_OK) NOTE("%s", cc_last_error(g_ctx));
        memset(&rep, 0, sizeof rep);
        r = cc_graph_fuse(g_ctx, b->g, NULL, &fg, &rep);
        CHECK(r == CC_OK && rep.n_changed > 0, "fusion merges gradient all-reduces of the sizes-only step (%d buckets of %d candidates)",
              rep.n_changed, rep.n_candidates);
        cc_graph_destroy(dg);
        cc_graph_destroy(fg);
    }
    unbuild(b);
}

/* With SP the ops next to the all-gathers and reduce-scatters have split
   rules too (gpt_step.h's split rules section), so decomposition splits
   those collectives: on the same slow link as above, with exact splits
   the forward's reduce-scatters (their producers and consumers cut by
   rows, bit for bit) and the forward's all-gathers with their matmuls,
   the weight gradients that read the gathered rows left whole (their row
   split is a partial sum); with partial sums allowed the all-gathers'
   contexts take the weight gradients too. */
static void test_rewrites_sp(void) {
    gpt_step_desc d = small_desc(2, 2);
    built* b;
    int i, exact;
    d.chunk_stubs = 1;
    d.sp = 1;
    b = build(&d, 1);
    if (!CHECK(b && b->rc == CC_OK, "TP2 x DP2 with SP and chunk stubs builds")) { unbuild(b); return; }
    for (i = 0; i < cc_graph_n_ops(b->g); i++) {
        const gpt_step_op_info* in = &b->ops.info[i];
        double us = in->group == GPT_GROUP_TP ? 5 + in->bytes * 50.0 / 4096 : in->group == GPT_GROUP_DP ? 10 + in->bytes * 50.0 / 1024
                  : in->bytes / 1000;
        cc_op_set_duration(b->g, cc_graph_op(b->g, i), us);
    }
    for (exact = 1; exact >= 0; exact--) {
        cc_rewrite_desc rd;
        cc_rewrite_report rep;
        cc_graph* dg = NULL;
        cc_result r;
        int n_rs = 0, n_ag = 0, n_bwd = 0, n_inexact = 0, c;
        memset(&rd, 0, sizeof rd);
        memset(&rep, 0, sizeof rep);
        rd.exact_only = exact;
        r = cc_graph_decompose(g_ctx, b->g, &rd, &dg, &rep);
        if (r != CC_OK) NOTE("%s", cc_last_error(g_ctx));
        for (c = 0; r == CC_OK && c < rep.n_contexts; c++) {
            const cc_rewrite_context* x = &rep.contexts[c];
            NOTE("exact %d: %s along %s in %d (%d ops: %s)", exact, x->collective, cc_axis_name(x->axis), x->n_chunks, x->n_ops, x->ops);
            n_rs += x->kind == CC_COLL_REDUCE_SCATTER;
            n_ag += x->kind == CC_COLL_ALL_GATHER;
            n_bwd += strstr(x->collective, "bwd") != NULL || strstr(x->collective, "dy.") != NULL || strstr(x->collective, "dx1.") != NULL;
            n_inexact += strstr(x->ops, "bwd_w") != NULL || strstr(x->ops, "ln1.bwd") != NULL || strstr(x->ops, "ln2.bwd") != NULL ||
                         strstr(x->ops, "lnf.bwd") != NULL;
        }
        if (exact)
            CHECK(r == CC_OK && n_rs > 0 && n_ag > 0 && n_inexact == 0,
                  "exact splits only: reduce-scatters (%d) and all-gathers (%d) of the SP step split (of %d candidates; %d of "
                  "the backward), no context with a partial sum (%d)", n_rs, n_ag, rep.n_candidates, n_bwd, n_inexact);
        else
            CHECK(r == CC_OK && n_ag > 0 && n_inexact > 0,
                  "partial sums allowed: all-gathers of the SP step split too (%d all-gathers, %d reduce-scatters of %d candidates), "
                  "%d contexts with a weight gradient or a norm's backward", n_ag, n_rs, rep.n_candidates, n_inexact);
        cc_graph_destroy(dg);
    }
    unbuild(b);
}

/* ---- planning communicators ---------------------------------------------------- */
/* Every op's ancestors (ops are in program order, a topological order):
   n x n bits; NULL when out of memory. */
static unsigned char* ancestors(cc_graph* g) {
    int n = cc_graph_n_ops(g), i, k, m;
    size_t row = ((size_t)n + 7) / 8;
    unsigned char* a = (unsigned char*)calloc((size_t)n * row + 1, 1);
    cc_op* preds = (cc_op*)malloc(sizeof(cc_op) * ((size_t)n + 1));
    if (!a || !preds) { free(a); free(preds); return NULL; }
    for (i = 0; i < n; i++) {
        m = cc_op_preds(g, cc_graph_op(g, i), preds, n);
        for (k = 0; k < m; k++) {
            int p = cc_op_index(g, preds[k]);
            size_t j;
            for (j = 0; j < row; j++) a[(size_t)i * row + j] |= a[(size_t)p * row + j];
            a[(size_t)i * row + (size_t)p / 8] |= (unsigned char)(1u << (p % 8));
        }
    }
    free(preds);
    return a;
}

/* The buffer of that name (the first), or -1. */
static int buffer_named(cc_graph* g, const char* name) {
    int i;
    for (i = 0; i < cc_graph_n_buffers(g); i++)
        if (!strcmp(cc_buffer_name(g, cc_graph_buffer(g, i)), name)) return i;
    return -1;
}

static int n_transient_named(cc_graph* g, const char* name) {
    int i, k = 0;
    for (i = 0; i < cc_graph_n_buffers(g); i++) {
        cc_buffer b = cc_graph_buffer(g, i);
        k += cc_buffer_transient(g, b) && !strcmp(cc_buffer_name(g, b), name);
    }
    return k;
}

static void test_transients(void) {
    static const struct { const char* what; int tp, dp, pp, M, zero, sp, layer_buckets; } L[] = {
        { "TP2 x DP2", 2, 2, 1, 1, 0, 0, 0 },
        { "ZeRO-3 DP2, 2 micro-batches", 1, 2, 1, 2, 3, 0, 0 },
        { "ZeRO-3 TP2 x DP2, buckets of one layer", 2, 2, 1, 1, 3, 0, 1 },
        { "ZeRO-1 DP2 with SP TP2", 2, 2, 1, 2, 1, 1, 0 },
        { "PP2 x DP2, 4 micro-batches, ZeRO-3", 1, 2, 2, 4, 3, 0, 0 },
    };
    size_t c;
    int i, stage;
    for (c = 0; c < sizeof L / sizeof L[0]; c++)
        for (stage = 0; stage < L[c].pp; stage++) {
            gpt_step_desc d = small_desc(L[c].tp, L[c].dp);
            built *a, *t;
            int n, same = 1, bk[64];
            d.pp = L[c].pp; d.pp_rank = stage; d.n_micro = L[c].M; d.zero = L[c].zero; d.sp = L[c].sp;
            if (L[c].layer_buckets) {   /* wte wpe | block 0 | block 1 | lnf: 2 + 24 + 2 parameters */
                for (i = 0; i < 28; i++) bk[i] = i < 2 ? 0 : i < 14 ? 1 : i < 26 ? 2 : 3;
                d.bucket_of = bk; d.n_bucket_of = 28;
            }
            a = build(&d, 1);
            d.transients = 1;
            t = build(&d, 1);
            if (!CHECK(a && t && a->rc == CC_OK && t->rc == CC_OK, "%s, stage %d: both build", L[c].what, stage)) {
                unbuild(a); unbuild(t);
                continue;
            }
            n = cc_graph_n_ops(a->g);
            CHECK_INT(cc_graph_n_ops(t->g), n, "%s, stage %d: the same ops", L[c].what, stage);
            for (i = 0; i < n && same; i++)
                same = !strcmp(cc_op_name(a->g, cc_graph_op(a->g, i)), cc_op_name(t->g, cc_graph_op(t->g, i)));
            CHECK(same, "%s, stage %d: in the same order, by name", L[c].what, stage);
            if (cc_graph_n_ops(t->g) == n) {
                unsigned char *x = ancestors(a->g), *y = ancestors(t->g);
                CHECK(x && y && !memcmp(x, y, (size_t)n * (((size_t)n + 7) / 8)),
                      "%s, stage %d: every op has the same ancestors (transients add only implied dependencies)", L[c].what, stage);
                free(x); free(y);
            }
            /* the bound step has no transient buffer; the transient one its activations */
            for (i = 0, same = 0; i < cc_graph_n_buffers(a->g); i++) same += cc_buffer_transient(a->g, cc_graph_buffer(a->g, i));
            CHECK_INT(same, 0, "%s, stage %d: without transients every buffer is bound", L[c].what, stage);
            /* qkv: N x 3 Cl float32 = 32 x 3 (64 / tp) x 4 bytes, one per block and micro-batch */
            i = buffer_named(t->g, "qkv");
            CHECK(i >= 0 && cc_buffer_transient(t->g, cc_graph_buffer(t->g, i)) &&
                  cc_buffer_bytes(t->g, cc_graph_buffer(t->g, i)) == (uint64_t)32 * 3 * (64 / L[c].tp) * 4,
                  "%s, stage %d: qkv is transient, 32 x 3 x %d x 4 bytes", L[c].what, stage, 64 / L[c].tp);
            CHECK_INT(n_transient_named(t->g, "qkv"), (2 / L[c].pp) * L[c].M, "%s, stage %d: one qkv per block and micro-batch",
                      L[c].what, stage);
            i = buffer_named(t->g, L[c].zero ? "param_shard" : "params");
            CHECK(i >= 0 && !cc_buffer_transient(t->g, cc_graph_buffer(t->g, i)), "%s, stage %d: the parameters stay bound", L[c].what,
                  stage);
            i = buffer_named(t->g, "grads");
            CHECK(i >= 0 && !cc_buffer_transient(t->g, cc_graph_buffer(t->g, i)), "%s, stage %d: the gradients stay bound", L[c].what,
                  stage);
            if (L[c].zero == 3 && !L[c].layer_buckets) {
                /* block 0's attn_w (stage 0's first block): 3C x C / tp = 192 x 64 / tp elements, float32,
                   gathered in each pass: forward and backward of every micro-batch */
                char name[64];
                int l0 = stage * (2 / L[c].pp);
                uint64_t want = (uint64_t)192 * 64 / (uint64_t)L[c].tp * 4;
                snprintf(name, sizeof name, L[c].M > 1 ? "h%d.attn_w.mb0.fwd.gathered" : "h%d.attn_w.fwd.gathered", l0);
                i = buffer_named(t->g, name);
                CHECK(i >= 0 && cc_buffer_transient(t->g, cc_graph_buffer(t->g, i)) && cc_buffer_bytes(t->g, cc_graph_buffer(t->g, i)) == want,
                      "%s, stage %d: %s is transient, %llu bytes", L[c].what, stage, name, (unsigned long long)want);
                snprintf(name, sizeof name, L[c].M > 1 ? "h%d.attn_w.mb%d.bwd.gathered" : "h%d.attn_w.bwd.gathered", l0, L[c].M - 1);
                CHECK(buffer_named(t->g, name) >= 0, "%s, stage %d: and %s, the last backward's", L[c].what, stage, name);
                /* a bias is not read in the backward: its backward gathers write a bound buffer */
                snprintf(name, sizeof name, "h%d.attn_b.gathered_unread", l0);
                i = buffer_named(t->g, name);
                CHECK(i >= 0 && !cc_buffer_transient(t->g, cc_graph_buffer(t->g, i)), "%s, stage %d: %s is bound", L[c].what, stage,
                      name);
            }
            if (L[c].layer_buckets) {
                /* bucket 1 (block 0): its 12 parameters' TP2 shards, elements by hand:
                   ln 2 x 64 x 2, attn 192 x 64 / 2 + 192 / 2, proj 64 x 64 / 2 + 64, fc 256 x 64 / 2 + 256 / 2,
                   fcproj 64 x 256 / 2 + 64 = 256 + 6240 + 2112 + 8320 + 8256 = 25,184, even: 100,736 bytes */
                i = buffer_named(t->g, "bucket1.fwd.gathered");
                CHECK(i >= 0 && cc_buffer_bytes(t->g, cc_graph_buffer(t->g, i)) == 25184u * 4, "%s: bucket1.fwd.gathered is %u bytes "
                      "(got %llu)", L[c].what, 25184u * 4, i >= 0 ? (unsigned long long)cc_buffer_bytes(t->g, cc_graph_buffer(t->g, i)) : 0ull);
            }
            unbuild(a);
            unbuild(t);
        }
    {   /* the forward passes alone stay bound */
        gpt_step_desc d = small_desc(1, 2);
        built* f;
        d.zero = 3; d.transients = 1;
        f = build(&d, 0);
        if (CHECK(f && f->rc == CC_OK, "a forward-only step with transients builds")) {
            for (i = 0, stage = 0; i < cc_graph_n_buffers(f->g); i++) stage += cc_buffer_transient(f->g, cc_graph_buffer(f->g, i));
            CHECK_INT(stage, 0, "the forward-only step has no transient buffer");
        }
        unbuild(f);
    }
}

static void test_plan_comm(void) {
    gpt_step_desc d = small_desc(2, 1);
    built* b = build(&d, 1);
    cc_collective co;
    float x = 1;
    if (!CHECK(b && b->rc == CC_OK, "TP2 builds")) { unbuild(b); return; }
    CHECK(!strcmp(cc_comm_family(b->m.tp_comm), "model") && cc_comm_size(b->m.tp_comm) == 2, "the TP communicator: family 'model', size 2");
    memset(&co, 0, sizeof co);
    co.kind = CC_COLL_ALL_REDUCE;
    co.n_elems = 1;
    co.comm = b->m.tp_comm;
    co.send_buf = &x;
    co.recv_buf = &x;
    CHECK(cc_comm_run(&co) == CC_ERR_UNSUPPORTED, "running a collective on it is refused");
    CHECK_CONTAINS(cc_last_error(g_ctx), "planning communicator", "the message says it is a planning communicator");
    unbuild(b);
}

int main(void) {
    if (cc_context_create(NULL, &g_ctx) != CC_OK) return 1;
    TH_RUN(test_tp2_dp2);
    TH_RUN(test_sp);
    TH_RUN(test_zero);
    TH_RUN(test_buckets);
    TH_RUN(test_pipeline);
    TH_RUN(test_fp16);
    TH_RUN(test_same_graph);
    TH_RUN(test_bad_input);
    TH_RUN(test_plan_comm);
    TH_RUN(test_transients);
    TH_RUN(test_rewrites);
    TH_RUN(test_rewrites_sp);
    TH_RUN(test_large);
    cc_context_destroy(g_ctx);
    return th_done();
}
