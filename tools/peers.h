/* tools/peers.h - the communication policies of the systems people train
   with today, each a short function written after its documentation, so
   that a planner can set the library's schedule beside them.

   Include concerto.h first. Everything here is static and uses only the
   library's public API; nothing depends on how a step is built: the bucket
   rules take the parameters as plain arrays and return plain arrays, the
   XLA-style scheduler takes a cc_graph.

       peer_knobs k = peer_knobs_default();
       k.dp = 64;
       peer_plan p = {0};
       p.grad_bucket = buckets; p.grad_when = when;        caller's arrays, n_params each
       if (peer_ddp_buckets(params, n_params, &k, &p, err, sizeof err) != CC_OK) ... err names the knob

   Parameters are given in the order the model defines them (embeddings,
   then layer 0, 1, ..., then the final norm, as a module's parameters()
   lists them). Gradients become ready in about the reverse of that order,
   which is the order every peer below buckets them in. Buckets are
   numbered in the order they are launched: bucket 0 first.

   Contents
     peer_param, peer_knobs, peer_plan    the inputs and the output
     peer_ddp_buckets                     PyTorch DistributedDataParallel
     peer_megatron_buckets                Megatron-LM (megatron.core DDP)
     peer_deepspeed_zero3_buckets         DeepSpeed ZeRO stage 3
     peer_llmc_buckets                    llm.c (train_gpt2.cu)
     peer_xla_buckets, peer_xla_schedule  XLA: all-reduce combiner, latency-hiding scheduler
     peer_prefetch1_buckets, _order       ZeRO-3 with a prefetch depth of one layer
     peer_policies, peer_policy_find      the table: name -> functions */
#ifndef CONCERTO_PEERS_H_INCLUDED
#define CONCERTO_PEERS_H_INCLUDED

#ifndef CONCERTO_H_INCLUDED
#error "tools/peers.h: include concerto.h first"
#endif

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define PEER__UNUSED __attribute__((unused))
#else
#define PEER__UNUSED
#endif

/* One parameter tensor as this rank holds it (its tensor-parallel shard). */
typedef struct peer_param {
    uint64_t n_bytes;   /* bytes of its gradient as it is reduced (n_elems x the reduced element size) */
    uint64_t n_elems;   /* elements of this rank's copy, before any ZeRO partitioning */
    int layer;          /* transformer layer, 0-based; -1 for parameters outside the layers
                           (embeddings, final norm, an untied head) */
} peer_param;

/* Where a gradient bucket's collective sits in program order. */
typedef enum peer_when {
    PEER_WHEN_READY = 0,      /* right after the bucket's last gradient is produced */
    PEER_AFTER_BACKWARD = 1   /* after the whole backward pass */
} peer_when;

/* The layout and every peer's knobs. peer_knobs_default() fills in each
   peer's documented default; a knob set to zero or below (or NaN) is an
   error naming it, never a silent default. */
typedef struct peer_knobs {
    int dp;                          /* data-parallel size, >= 1 */
    int tp;                          /* tensor-parallel size, >= 1 */
    int gpus_per_node;               /* >= 1 */
    int sequence_parallel;           /* 0 or 1 */
    int zero_stage;                  /* 0..3: what the step shards (DeepSpeed's overlap_comm default follows it) */
    double ddp_bucket_cap_mb;        /* PyTorch bucket_cap_mb, MiB: 25 */
    double ddp_first_bucket_mb;      /* dist._DEFAULT_FIRST_BUCKET_BYTES in MiB: 1 */
    double megatron_bucket_elems;    /* Megatron bucket_size, parameters; -1: its default max(40e6, 1e6 * dp) */
    int megatron_overlap_grad_reduce;/* --overlap-grad-reduce: 1 (0: one bucket after the backward) */
    int megatron_tp_comm_overlap;    /* --tp-comm-overlap asked for: 1 (granted only where allowed, see below) */
    double ds_reduce_bucket_elems;   /* DeepSpeed reduce_bucket_size, elements: 5e8 */
    double ds_prefetch_bucket_elems; /* DeepSpeed stage3_prefetch_bucket_size, elements: 5e7 */
    double ds_persistence_elems;     /* DeepSpeed stage3_param_persistence_threshold, elements: 1e5 */
    double xla_combine_mb;           /* XLA xla_gpu_all_reduce_combine_threshold_bytes in MiB: 30 */
    int xla_combine_count;           /* XLA AllReduceCombiner's combine_threshold_count: 256 */
} peer_knobs;

/* What a bucket rule decides. The caller provides the arrays (NULL where it
   does not want one); the rule fills them and the counts. */
typedef struct peer_plan {
    int* grad_bucket;          /* [n_params] bucket of parameter i's gradient (required) */
    peer_when* grad_when;      /* [n_params] entry b: where bucket b is placed (required; n_grad_buckets used) */
    int n_grad_buckets;
    int grad_overlap;          /* 1: the bucket's collective runs beside compute (a communication
                                  stream); 0: compute waits for it */
    /* ZeRO-3 parameter gathers (DeepSpeed; the other rules set n_gather_* 0 and fill -1):
       bucket of parameter i's all-gather in the forward pass (parameters taken
       in model order) and in the backward pass (reverse order); -1: the
       parameter is never gathered (kept whole on every rank). */
    int* gather_bucket_fwd;    /* [n_params] or NULL */
    int* gather_bucket_bwd;    /* [n_params] or NULL */
    int n_gather_fwd, n_gather_bwd;
    int gather_prefetch;       /* gather bucket b + gather_prefetch is issued when bucket b is first used
                                  (0: each bucket right before its own first use) */
    int tp_overlap;            /* 1: tensor-parallel collectives may overlap compute; 0: synchronous */
    const char* rule;          /* one line: the rule applied, with its source (static string) */
} peer_plan;

static PEER__UNUSED peer_knobs peer_knobs_default(void) {
    peer_knobs k;
    memset(&k, 0, sizeof k);
    k.dp = 1;
    k.tp = 1;
    k.gpus_per_node = 8;
    k.sequence_parallel = 0;
    k.zero_stage = 0;
    /* PyTorch torch.nn.parallel.DistributedDataParallel docs: "bucket_cap_mb
       ... controls the bucket size in MebiBytes (MiB). If None, a default
       size of 25 MiB will be used"; distributed.py keeps it as
       int(bucket_cap_mb * 1024 * 1024) bytes. The first bucket's cap is
       dist._DEFAULT_FIRST_BUCKET_BYTES, c10d::kDefaultFirstBucketBytes =
       1024 * 1024 in reducer.hpp. */
    k.ddp_bucket_cap_mb = 25.0;
    k.ddp_first_bucket_mb = 1.0;
    /* megatron/core/distributed/distributed_data_parallel_config.py:
       "bucket_size: Maximum number of parameters in each bucket. If
       unspecified, MCore uses a default value of max(40000000, 1000000 *
       dp_size) parameters". */
    k.megatron_bucket_elems = -1.0;
    k.megatron_overlap_grad_reduce = 1;
    k.megatron_tp_comm_overlap = 1;
    /* deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig):
       reduce_bucket_size = 5e8 "Number of elements reduced/allreduced at a
       time"; stage3_prefetch_bucket_size = 5e7 "Maximum number of parameter
       elements to fetch ahead of use"; stage3_param_persistence_threshold
       = 1e5 "Do not partition parameters smaller than this threshold". */
    k.ds_reduce_bucket_elems = 5e8;
    k.ds_prefetch_bucket_elems = 5e7;
    k.ds_persistence_elems = 1e5;
    /* xla/debug_options_flags.cc: xla_gpu_all_reduce_combine_threshold_bytes
       = 30 * 1024 * 1024; gpu_compiler.cc adds AllReduceCombiner(threshold,
       combine_threshold_count = 256). */
    k.xla_combine_mb = 30.0;
    k.xla_combine_count = 256;
    return k;
}

/* ---- checks shared by the rules -------------------------------------------*/
static PEER__UNUSED cc_result peer__fail(char* err, size_t errn, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static cc_result peer__fail(char* err, size_t errn, const char* fmt, ...) {
    va_list ap;
    if (err && errn) {
        va_start(ap, fmt);
        vsnprintf(err, errn, fmt, ap);
        va_end(ap);
    }
    return CC_ERR_INVALID_ARG;
}

/* A positive, finite amount: the knob named in the message. */
static cc_result peer__positive(double v, const char* knob, char* err, size_t errn) {
    if (!(v > 0.0) || !isfinite(v)) return peer__fail(err, errn, "%s must be a positive number, got %g", knob, v);
    return CC_OK;
}

static cc_result peer__check_common(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                    const char* who, char* err, size_t errn) {
    int i;
    if (err && errn) err[0] = '\0';
    if (!k) return peer__fail(err, errn, "%s: knobs is NULL (use peer_knobs_default())", who);
    if (!out || !out->grad_bucket || !out->grad_when)
        return peer__fail(err, errn, "%s: out, out->grad_bucket and out->grad_when are required", who);
    if (n_params < 1 || !params) return peer__fail(err, errn, "%s: n_params must be >= 1 with a params array, got %d", who, n_params);
    if (k->dp < 1) return peer__fail(err, errn, "%s: dp (data-parallel size) must be >= 1, got %d", who, k->dp);
    if (k->tp < 1) return peer__fail(err, errn, "%s: tp (tensor-parallel size) must be >= 1, got %d", who, k->tp);
    if (k->gpus_per_node < 1) return peer__fail(err, errn, "%s: gpus_per_node must be >= 1, got %d", who, k->gpus_per_node);
    if (k->zero_stage < 0 || k->zero_stage > 3) return peer__fail(err, errn, "%s: zero_stage must be 0..3, got %d", who, k->zero_stage);
    for (i = 0; i < n_params; i++) {
        if (params[i].layer < -1)
            return peer__fail(err, errn, "%s: parameter %d: layer must be >= 0, or -1 outside the layers, got %d", who, i, params[i].layer);
    }
    out->n_grad_buckets = 0;
    out->n_gather_fwd = out->n_gather_bwd = 0;
    out->gather_prefetch = 0;
    out->tp_overlap = 0;
    out->grad_overlap = 1;
    for (i = 0; i < n_params; i++) {
        out->grad_bucket[i] = -1;
        if (out->gather_bucket_fwd) out->gather_bucket_fwd[i] = -1;
        if (out->gather_bucket_bwd) out->gather_bucket_bwd[i] = -1;
    }
    return CC_OK;
}

/* ---- PyTorch DDP -------------------------------------------------------------
   Source: torch/csrc/distributed/c10d/reducer.cpp. After the first
   iteration the Reducer rebuilds its buckets (rebuild_buckets) in the order
   the gradients became ready, i.e. the reverse of the parameter order, with
   bucket_size_limits = {first_bucket_bytes_cap_, bucket_bytes_cap_}, and
   compute_bucket_assignment_by_size adds each tensor to the open bucket
   and closes the bucket as soon as its size reaches the limit
   ("if (bucket.size >= bucket_size_limit)": the tensor that crosses the cap
   stays in the bucket), then moves to the next limit, so only the first
   bucket has the 1 MiB cap. A bucket's all-reduce is launched when its last
   gradient is ready (autograd hook), on NCCL's stream. One dtype and
   device; sparse gradients (their own bucket) are left out. */
static PEER__UNUSED cc_result peer_ddp_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                               char* err, size_t errn) {
    cc_result rc;
    uint64_t cap_first, cap_rest, size = 0;
    int i, b = 0, open = 0;
    if ((rc = peer__check_common(params, n_params, k, out, "pytorch-ddp", err, errn)) != CC_OK) return rc;
    if ((rc = peer__positive(k->ddp_bucket_cap_mb, "pytorch-ddp: ddp_bucket_cap_mb (bucket_cap_mb)", err, errn)) != CC_OK) return rc;
    if ((rc = peer__positive(k->ddp_first_bucket_mb, "pytorch-ddp: ddp_first_bucket_mb (_DEFAULT_FIRST_BUCKET_BYTES)", err, errn)) != CC_OK)
        return rc;
    cap_first = (uint64_t)(k->ddp_first_bucket_mb * 1024.0 * 1024.0);
    cap_rest = (uint64_t)(k->ddp_bucket_cap_mb * 1024.0 * 1024.0);
    if (cap_first < 1) cap_first = 1;
    if (cap_rest < 1) cap_rest = 1;
    for (i = n_params - 1; i >= 0; i--) {
        out->grad_bucket[i] = b;
        open = 1;
        size += params[i].n_bytes;
        if (size >= (b == 0 ? cap_first : cap_rest)) { out->grad_when[b++] = PEER_WHEN_READY; size = 0; open = 0; }
    }
    if (open) out->grad_when[b++] = PEER_WHEN_READY;
    out->n_grad_buckets = b;
    out->grad_overlap = 1;
    out->rule = "PyTorch DDP: reverse parameter order, close at >= cap (first 1 MiB, then bucket_cap_mb 25 MiB), launched when ready";
    return CC_OK;
}

/* ---- Megatron-LM ---------------------------------------------------------------
   Source: megatron/core/distributed/param_and_grad_buffer.py. Parameters
   are laid out "in reverse order to roughly follow backprop order"
   (for param in params[::-1]) and a bucket closes after the parameter with
   which it holds bucket_size parameters or more ("(param_end_index -
   bucket_start_index) >= bucket_size"). bucket_size defaults to
   max(40000000, 1000000 * dp) (distributed_data_parallel.py) and is set to
   None, one bucket for everything, without overlap_grad_reduce; with it,
   a bucket's all-reduce / reduce-scatter is launched when its last
   gradient is ready, otherwise after the backward (finish_grad_sync).
   Tensor-parallel all-reduces are synchronous in the layers; TP comm
   overlap (--tp-comm-overlap, Transformer Engine userbuffers) is granted
   only with sequence parallelism ("Tensor parallel communication/GEMM
   overlap can happen only when sequence parallelism is enabled",
   arguments.py) and only for a TP group inside one node (its userbuffers
   work over NVLink). Left out: the padding of bucket boundaries for the
   distributed optimizer, the shared-embedding bucket of pipeline runs. */
static PEER__UNUSED cc_result peer_megatron_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                                    char* err, size_t errn) {
    cc_result rc;
    double cap;
    uint64_t cap_elems, in_bucket = 0;
    int i, b = 0, open = 0;
    if ((rc = peer__check_common(params, n_params, k, out, "megatron-lm", err, errn)) != CC_OK) return rc;
    cap = k->megatron_bucket_elems;
    if (cap == -1.0) cap = 1e6 * (double)k->dp > 4e7 ? 1e6 * (double)k->dp : 4e7;
    else if (!(cap > 0.0) || !isfinite(cap))
        return peer__fail(err, errn, "megatron-lm: megatron_bucket_elems (bucket_size) must be a positive number of parameters, "
                                     "or -1 for max(40e6, 1e6*dp), got %g", cap);
    cap_elems = (uint64_t)cap;
    if (cap_elems < 1) cap_elems = 1;
    for (i = n_params - 1; i >= 0; i--) {
        out->grad_bucket[i] = b;
        open = 1;
        in_bucket += params[i].n_elems;
        if (k->megatron_overlap_grad_reduce && in_bucket >= cap_elems) {
            out->grad_when[b++] = PEER_WHEN_READY;
            in_bucket = 0;
            open = 0;
        }
    }
    if (open) out->grad_when[b++] = k->megatron_overlap_grad_reduce ? PEER_WHEN_READY : PEER_AFTER_BACKWARD;
    out->n_grad_buckets = b;
    out->grad_overlap = k->megatron_overlap_grad_reduce ? 1 : 0;
    out->tp_overlap = k->megatron_tp_comm_overlap && k->tp > 1 && k->sequence_parallel && k->tp <= k->gpus_per_node;
    out->rule = "Megatron-LM: reverse order, close at >= max(40e6, 1e6*dp) parameters, overlapped grad reduce; "
                "TP synchronous unless SP and TP inside one node";
    return CC_OK;
}

/* ---- DeepSpeed ZeRO-3 ------------------------------------------------------------
   Sources: deepspeed/runtime/zero/stage3.py, partitioned_param_coordinator.py,
   parameter_offload.py, config.py.
   Gradients: reduce_independent_p_g_buckets_and_remove_grads runs as each
   gradient becomes ready (reverse order) and reduces the open bucket
   *before* adding a parameter that would take it past reduce_bucket_size
   ("if self.elements_in_ipg_bucket + param.ds_numel > reduce_bucket_size
   and self.elements_in_ipg_bucket > 0"); the rest is reduced after the
   backward (independent_gradient_partition_epilogue), which is where the
   last bucket's last gradient is produced anyway. Counts are elements
   (ds_numel), not bytes. overlap_comm defaults to True for stage 3 only
   ("self.overlap_comm = self.stage == ZeroStageEnum.weights").
   Parameters: those with ds_numel <= stage3_param_persistence_threshold
   are not partitioned (ds_persist) and never gathered. The coordinator
   prefetches, after fetching a module, the parameters next in the recorded
   trace while "numel_prefetching < max_params_to_prefetch" (= the
   prefetch bucket size): the parameter that crosses the limit is
   included. Modelled as gather buckets of consecutive partitioned
   parameters closed at >= stage3_prefetch_bucket_size elements, in model
   order for the forward and in reverse for the backward, bucket b+1
   gathered while bucket b is used (gather_prefetch 1). Left out:
   stage3_max_live_parameters (1e9) and stage3_max_reuse_distance (1e9),
   which bound memory, not the order. */
static void peer__gather_buckets(const peer_param* params, int n_params, uint64_t cap, uint64_t persist, int reverse, int* bucket,
                                 int* n_out) {
    uint64_t in_bucket = 0;
    int j, b = 0, open = 0;
    for (j = 0; j < n_params; j++) {
        int i = reverse ? n_params - 1 - j : j;
        if (params[i].n_elems <= persist) continue;
        if (bucket) bucket[i] = b;
        open = 1;
        in_bucket += params[i].n_elems;
        if (in_bucket >= cap) { b++; in_bucket = 0; open = 0; }
    }
    *n_out = b + open;
}

static PEER__UNUSED cc_result peer_deepspeed_zero3_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                                           char* err, size_t errn) {
    cc_result rc;
    uint64_t reduce_cap, prefetch_cap, persist, in_bucket = 0;
    int i, b = 0, open = 0;
    if ((rc = peer__check_common(params, n_params, k, out, "deepspeed-zero3", err, errn)) != CC_OK) return rc;
    if ((rc = peer__positive(k->ds_reduce_bucket_elems, "deepspeed-zero3: ds_reduce_bucket_elems (reduce_bucket_size)", err, errn)) != CC_OK)
        return rc;
    if ((rc = peer__positive(k->ds_prefetch_bucket_elems, "deepspeed-zero3: ds_prefetch_bucket_elems (stage3_prefetch_bucket_size)", err,
                             errn)) != CC_OK)
        return rc;
    if (!(k->ds_persistence_elems >= 0.0) || !isfinite(k->ds_persistence_elems))
        return peer__fail(err, errn, "deepspeed-zero3: ds_persistence_elems (stage3_param_persistence_threshold) must be >= 0, got %g",
                          k->ds_persistence_elems);
    reduce_cap = (uint64_t)k->ds_reduce_bucket_elems;
    prefetch_cap = (uint64_t)k->ds_prefetch_bucket_elems;
    persist = (uint64_t)k->ds_persistence_elems;
    if (reduce_cap < 1) reduce_cap = 1;
    if (prefetch_cap < 1) prefetch_cap = 1;
    for (i = n_params - 1; i >= 0; i--) {
        if (open && in_bucket + params[i].n_elems > reduce_cap) {
            out->grad_when[b++] = PEER_WHEN_READY;
            in_bucket = 0;
        }
        out->grad_bucket[i] = b;
        open = 1;
        in_bucket += params[i].n_elems;
    }
    if (open) out->grad_when[b++] = PEER_WHEN_READY;
    out->n_grad_buckets = b;
    out->grad_overlap = k->zero_stage == 3;
    peer__gather_buckets(params, n_params, prefetch_cap, persist, 0, out->gather_bucket_fwd, &out->n_gather_fwd);
    peer__gather_buckets(params, n_params, prefetch_cap, persist, 1, out->gather_bucket_bwd, &out->n_gather_bwd);
    out->gather_prefetch = 1;
    out->rule = "DeepSpeed ZeRO-3: reverse order, reduce before exceeding reduce_bucket_size 5e8 elements, overlap_comm; "
                "gathers in >= 5e7-element prefetch buckets one ahead, params <= 1e5 elements kept whole";
    return CC_OK;
}

/* ---- llm.c ------------------------------------------------------------------------
   Source: train_gpt2.cu, gpt2_backward_and_reduce. Right after layer l's
   backward kernels, on the last micro-step, the twelve gradients of that
   layer go to multi_gpu_async_reduce_gradient in one NCCL group (an
   all-reduce, or a reduce-scatter under ZeRO-1): one bucket per layer,
   launched when ready, layers from the last to the first. The gradients
   outside the layers (wte, wpe, lnfw, lnfb) are reduced together "after
   encoder_backward", i.e. after the whole backward, although lnf's are
   among the first produced. */
static PEER__UNUSED cc_result peer_llmc_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                                char* err, size_t errn) {
    cc_result rc;
    int i, b = 0, max_layer = -1, l, has_rest = 0;
    if ((rc = peer__check_common(params, n_params, k, out, "llm.c", err, errn)) != CC_OK) return rc;
    for (i = 0; i < n_params; i++) {
        if (params[i].layer > max_layer) max_layer = params[i].layer;
        if (params[i].layer < 0) has_rest = 1;
    }
    for (l = max_layer; l >= 0; l--) {
        int any = 0;
        for (i = 0; i < n_params; i++)
            if (params[i].layer == l) { out->grad_bucket[i] = b; any = 1; }
        if (any) out->grad_when[b++] = PEER_WHEN_READY;
    }
    if (has_rest) {
        for (i = 0; i < n_params; i++)
            if (params[i].layer < 0) out->grad_bucket[i] = b;
        out->grad_when[b++] = PEER_AFTER_BACKWARD;
    }
    out->n_grad_buckets = b;
    out->grad_overlap = 1;
    out->rule = "llm.c: one bucket per layer after that layer's backward (last layer first); the rest after the backward";
    return CC_OK;
}

/* ---- XLA: the all-reduce combiner -----------------------------------------------------
   Source: xla/service/all_reduce_combiner.cc with the GPU thresholds
   (xla_gpu_all_reduce_combine_threshold_bytes = 30 MiB, at most 256 ops).
   The combiner merges independent all-reduces while the combined size
   stays within the threshold: a gradient that would take the group past
   30 MiB or 256 members starts a new one. Taken in gradient order (the
   reverse of the parameters); each combined all-reduce can start when its
   last operand is ready. The order they then run in is the
   latency-hiding scheduler's (peer_xla_schedule). */
static PEER__UNUSED cc_result peer_xla_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out, char* err,
                                               size_t errn) {
    cc_result rc;
    uint64_t cap, size = 0;
    int i, b = 0, count = 0;
    if ((rc = peer__check_common(params, n_params, k, out, "xla", err, errn)) != CC_OK) return rc;
    if ((rc = peer__positive(k->xla_combine_mb, "xla: xla_combine_mb (xla_gpu_all_reduce_combine_threshold_bytes)", err, errn)) != CC_OK)
        return rc;
    if (k->xla_combine_count < 1)
        return peer__fail(err, errn, "xla: xla_combine_count (combine_threshold_count) must be >= 1, got %d", k->xla_combine_count);
    cap = (uint64_t)(k->xla_combine_mb * 1024.0 * 1024.0);
    for (i = n_params - 1; i >= 0; i--) {
        if (count > 0 && (size + params[i].n_bytes > cap || count + 1 > k->xla_combine_count)) {
            out->grad_when[b++] = PEER_WHEN_READY;
            size = 0;
            count = 0;
        }
        out->grad_bucket[i] = b;
        size += params[i].n_bytes;
        count++;
    }
    if (count > 0) out->grad_when[b++] = PEER_WHEN_READY;
    out->n_grad_buckets = b;
    out->grad_overlap = 1;
    out->tp_overlap = 1;   /* every collective is asynchronous under the latency-hiding scheduler */
    out->rule = "XLA: all-reduce combiner up to 30 MiB / 256 ops in gradient order; order by the latency-hiding scheduler";
    return CC_OK;
}

/* ---- XLA: the latency-hiding scheduler --------------------------------------------------
   Source: xla/service/latency_hiding_scheduler.{h,cc}. XLA's scheduler is a
   list scheduler that walks the graph from its end, with a ready set and a
   comparator of rules tried in turn (ReadySetLt), and a resource per kind
   of asynchronous collective whose in-flight count is limited by
   SchedulerConfig: all_reduce_overlap_limit, all_gather_overlap_limit,
   reduce_scatter_overlap_limit, all_to_all_overlap_limit,
   collective_broadcast_overlap_limit, send_recv_overlap_limit all default
   to 1, and a node that would cross the limit is skipped
   (scheduling_instruction_crosses_overlap_limit).

   Here, on a stream graph with durations, forward in time (a serial
   schedule-generation scheme; each stream runs its ops in the order chosen,
   an op as soon as its dependencies and its stream allow):
   modelled
     - at most one collective of each kind (cc_coll_kind: all-reduce,
       reduce-scatter, all-gather, broadcast, send, recv, all-to-all) runs at a
       time, whatever its stream (the overlap limits at their default 1);
     - kLessStall: among the ops whose dependencies are scheduled, the one
       that can start earliest goes first;
     - kScheduleDone: at equal start, a collective before compute: in the
       forward direction, "schedule the done as late as possible" is
       "start the collective as early as possible";
     - kUnlockDone: then an op one of whose successors is a collective
       (it unlocks a collective);
     - kOriginalOrder: then program order.
   left out
     - memory pressure (kMemoryPeakOverLimit, kDecreaseMemory): no sizes here;
     - the rules behind aggressive_scheduling_policies (kAsyncDepth,
       kAvoidWaste, kCreatesMoreReadyNodes, kStartAtZeroDepth), off by default;
     - kForceDelay, kIsNop and target-specific rules;
     - XLA's own cost model (approximate or profile-guided): the graph's
       durations stand in for it;
     - the walk from the end: the same rules are applied forward.

   The order alone cannot stop two collectives of one kind on different
   streams from overlapping in cc_simulate (each stream only keeps its own
   order), so with add_edges the scheduler adds to the graph an explicit
   dependency from each collective to the next one of its kind where they
   are not already serialised by sharing a stream; *n_edges counts them
   (without add_edges, the edges that would be needed). The order is a
   topological order of the graph with those edges: every stream's
   sequence is issued in an order that cannot deadlock. */
typedef struct peer__xla_item {
    double est;      /* earliest start when last evaluated (a lower bound of the true one) */
    int cls;         /* 0 collective, 1 compute */
    int lock;        /* 0 unlocks a collective, 1 does not */
    int i;           /* op index */
} peer__xla_item;

static int peer__xla_less(const peer__xla_item* a, const peer__xla_item* b) {
    if (a->est != b->est) return a->est < b->est;
    if (a->cls != b->cls) return a->cls < b->cls;
    if (a->lock != b->lock) return a->lock < b->lock;
    return a->i < b->i;
}

static void peer__xla_push(peer__xla_item* h, int* n, peer__xla_item it) {
    int c = (*n)++;
    while (c > 0) {
        int p = (c - 1) / 2;
        if (!peer__xla_less(&it, &h[p])) break;
        h[c] = h[p];
        c = p;
    }
    h[c] = it;
}

static peer__xla_item peer__xla_pop(peer__xla_item* h, int* n) {
    peer__xla_item top = h[0], last = h[--(*n)];
    int c = 0;
    for (;;) {
        int l = 2 * c + 1, r = l + 1, m = c;
        const peer__xla_item* best = &last;
        if (l < *n && peer__xla_less(&h[l], best)) { m = l; best = &h[l]; }
        if (r < *n && peer__xla_less(&h[r], best)) { m = r; }
        if (m == c) break;
        h[c] = h[m];
        c = m;
    }
    if (*n > 0) h[c] = last;
    return top;
}

#define PEER__N_KINDS 8   /* cc_coll_kind values 0..7 */

static PEER__UNUSED cc_result peer_xla_schedule(cc_graph* graph, int add_edges, cc_op* order, int* n_edges, char* err, size_t errn) {
    cc_context* ctx;
    cc_result rc = CC_OK;
    int n, k, i, r, e, n_heap = 0, n_done = 0, added = 0;
    int *stream = NULL, *kind = NULL, *lock = NULL, *indeg = NULL, *cursor = NULL, *succ_off = NULL, *succ = NULL, *pred_buf = NULL,
        *pred_off = NULL;
    double *ready = NULL, *free_at = NULL;
    cc_op* preds = NULL;
    peer__xla_item* heap = NULL;
    double kind_end[PEER__N_KINDS];
    int kind_last[PEER__N_KINDS];
    int n_pred_total = 0, max_pred = 0;

    if (err && errn) err[0] = '\0';
    if (n_edges) *n_edges = 0;
    if (!graph || !order) return peer__fail(err, errn, "xla-lhs: graph and order are required");
    ctx = cc_graph_context(graph);
    if ((rc = cc_graph_validate(graph)) != CC_OK) {
        peer__fail(err, errn, "xla-lhs: graph '%s' does not validate: %s", cc_graph_name(graph), cc_last_error(ctx));
        return rc;
    }
    n = cc_graph_n_ops(graph);
    k = cc_graph_n_resources(graph);
    if (n == 0) return CC_OK;
    stream = (int*)malloc(sizeof(int) * (size_t)n * 5 + sizeof(int) * ((size_t)n + 1) * 2);
    ready = (double*)malloc(sizeof(double) * (size_t)n);
    free_at = (double*)malloc(sizeof(double) * (size_t)(k > 0 ? k : 1));
    heap = (peer__xla_item*)malloc(sizeof(peer__xla_item) * (size_t)n * 2);
    if (!stream || !ready || !free_at || !heap) { rc = CC_ERR_OUT_OF_MEMORY; peer__fail(err, errn, "xla-lhs: out of memory"); goto out; }
    kind = stream + n;
    lock = kind + n;
    indeg = lock + n;
    cursor = indeg + n;
    succ_off = cursor + n;
    pred_off = succ_off + n + 1;
    for (r = 0; r < k; r++) {
        if (cc_graph_capacity(graph, r) != 1) {
            rc = peer__fail(err, errn, "xla-lhs: graph '%s' is not a stream graph: resource '%s' has capacity %d (streams have 1)",
                            cc_graph_name(graph), cc_graph_resource_name(graph, r), cc_graph_capacity(graph, r));
            goto out;
        }
        free_at[r] = 0.0;
    }
    /* streams, kinds, predecessor counts */
    pred_off[0] = 0;
    for (i = 0; i < n; i++) {
        cc_op op = cc_graph_op(graph, i);
        const cc_collective* c = cc_op_collective(graph, op);
        int np = cc_op_preds(graph, op, NULL, 0);
        stream[i] = -1;
        for (r = 0; r < k; r++) {
            int d = cc_op_demand(graph, op, r);
            if (d == 0) continue;
            if (d != 1 || stream[i] >= 0) {
                rc = peer__fail(err, errn, "xla-lhs: op '%s' of graph '%s' is not on one stream (demand %d on '%s')",
                                cc_op_name(graph, op), cc_graph_name(graph), d, cc_graph_resource_name(graph, r));
                goto out;
            }
            stream[i] = r;
        }
        kind[i] = c ? (int)c->kind : (int)CC_COLL_NONE;
        if (kind[i] < 0 || kind[i] >= PEER__N_KINDS) kind[i] = CC_COLL_NONE;
        if (np < 0) np = 0;
        indeg[i] = np;
        if (np > max_pred) max_pred = np;
        n_pred_total += np;
        pred_off[i + 1] = n_pred_total;
        ready[i] = 0.0;
        lock[i] = 1;
    }
    pred_buf = (int*)malloc(sizeof(int) * (size_t)(n_pred_total > 0 ? n_pred_total : 1) * 2);
    preds = (cc_op*)malloc(sizeof(cc_op) * (size_t)(max_pred > 0 ? max_pred : 1));
    if (!pred_buf || !preds) { rc = CC_ERR_OUT_OF_MEMORY; peer__fail(err, errn, "xla-lhs: out of memory"); goto out; }
    succ = pred_buf + n_pred_total;
    for (i = 0; i <= n; i++) succ_off[i] = 0;
    for (i = 0; i < n; i++) {
        int np = cc_op_preds(graph, cc_graph_op(graph, i), preds, max_pred);
        for (e = 0; e < np; e++) {
            int p = cc_op_index(graph, preds[e]);
            pred_buf[pred_off[i] + e] = p;
            succ_off[p + 1]++;
            if (kind[i] != CC_COLL_NONE) lock[p] = 0;   /* p unlocks a collective */
        }
    }
    for (i = 0; i < n; i++) succ_off[i + 1] += succ_off[i];
    for (i = 0; i < n; i++) cursor[i] = succ_off[i];
    for (i = 0; i < n; i++)
        for (e = pred_off[i]; e < pred_off[i + 1]; e++) succ[cursor[pred_buf[e]]++] = i;
    for (i = 0; i < PEER__N_KINDS; i++) { kind_end[i] = 0.0; kind_last[i] = -1; }
    for (i = 0; i < n; i++) {
        if (indeg[i] == 0) {
            peer__xla_item it;
            it.est = 0.0; it.cls = kind[i] != CC_COLL_NONE ? 0 : 1; it.lock = lock[i]; it.i = i;
            peer__xla_push(heap, &n_heap, it);
        }
    }
    while (n_heap > 0) {
        peer__xla_item it = peer__xla_pop(heap, &n_heap);
        int j = it.i, s = stream[j], kd = kind[j];
        double est = ready[j], end;
        cc_op op = cc_graph_op(graph, j);
        if (s >= 0 && free_at[s] > est) est = free_at[s];
        if (kd != CC_COLL_NONE && kind_end[kd] > est) est = kind_end[kd];
        if (est > it.est) {   /* its stream or its kind got busier since: try again later */
            it.est = est;
            peer__xla_push(heap, &n_heap, it);
            continue;
        }
        end = est + cc_op_duration_us(graph, op);
        order[n_done++] = op;
        if (s >= 0) free_at[s] = end;
        if (kd != CC_COLL_NONE) {
            int last = kind_last[kd];
            if (last >= 0 && (stream[last] < 0 || stream[last] != s)) {
                if (add_edges && (rc = cc_graph_add_dep(graph, cc_graph_op(graph, last), op)) != CC_OK) {
                    peer__fail(err, errn, "xla-lhs: adding the edge '%s' -> '%s' failed: %s", cc_op_name(graph, cc_graph_op(graph, last)),
                               cc_op_name(graph, op), cc_last_error(ctx));
                    goto out;
                }
                added++;
            }
            kind_last[kd] = j;
            if (end > kind_end[kd]) kind_end[kd] = end;
        }
        for (e = succ_off[j]; e < succ_off[j + 1]; e++) {
            int q = succ[e];
            if (end > ready[q]) ready[q] = end;
            if (--indeg[q] == 0) {
                peer__xla_item nq;
                nq.est = ready[q];
                nq.cls = kind[q] != CC_COLL_NONE ? 0 : 1;
                nq.lock = lock[q];
                nq.i = q;
                peer__xla_push(heap, &n_heap, nq);
            }
        }
    }
    if (n_done != n) {   /* cannot happen after a successful validate */
        peer__fail(err, errn, "xla-lhs: graph '%s': only %d of %d ops could be ordered", cc_graph_name(graph), n_done, n);
        rc = CC_ERR_CYCLE;
    }
    if (n_edges) *n_edges = added;
out:
    free(stream);
    free(ready);
    free(free_at);
    free(heap);
    free(pred_buf);
    free(preds);
    return rc;
}

/* ---- ZeRO-3, a prefetch depth of one layer ------------------------------------------
   A fixed prefetch policy as FSDP's (forward_prefetch, backward_prefetch
   BACKWARD_PRE: the next module's all-gather is issued when the current
   module starts) or DeepSpeed's with a prefetch bucket of one layer: the
   gradients bucketed as DeepSpeed ZeRO-3 does; the parameters gathered one
   layer a bucket (those outside the layers, one bucket per run of them);
   in the issue order, the gathers of module j (a run of the
   data-parallel communicator's all-gathers, the one named "dp", with no
   compute between them) wait for the first compute op (an op on the
   graph's first resource, the compute stream) after the gathers of module
   j - 1. So at most two modules' gathered parameters are alive besides
   those being freed, whatever the communication stream could run ahead. */
static PEER__UNUSED cc_result peer_prefetch1_buckets(const peer_param* params, int n_params, const peer_knobs* k, peer_plan* out,
                                                     char* err, size_t errn) {
    cc_result rc;
    int i, b = -1, prev = -2;
    if ((rc = peer_deepspeed_zero3_buckets(params, n_params, k, out, err, errn)) != CC_OK) {
        /* its messages name DeepSpeed's knobs; this policy's name first */
        if (err && errn) {
            char tmp[512];
            snprintf(tmp, sizeof tmp, "prefetch-1 (DeepSpeed's buckets): %s", err);
            snprintf(err, errn, "%s", tmp);
        }
        return rc;
    }
    for (i = 0; i < n_params; i++) {
        if (params[i].layer != prev) b++;
        prev = params[i].layer;
        if (out->gather_bucket_fwd) out->gather_bucket_fwd[i] = b;
        if (out->gather_bucket_bwd) out->gather_bucket_bwd[i] = b;
    }
    out->n_gather_fwd = out->n_gather_bwd = b + 1;
    out->gather_prefetch = 1;
    out->rule = "prefetch depth one layer: DeepSpeed ZeRO-3's gradient buckets; gathers one layer a bucket, each layer's "
                "issued when the layer before it starts computing";
    return CC_OK;
}

static PEER__UNUSED cc_result peer_prefetch1_order(cc_graph* graph, int add_edges, cc_op* order, int* n_edges, char* err, size_t errn) {
    cc_context* ctx;
    cc_result rc;
    int i, n, anchor = -1, last_anchor = -1, open = 0, added = 0;
    if (err && errn) err[0] = '\0';
    if (n_edges) *n_edges = 0;
    if (!graph || !order) return peer__fail(err, errn, "prefetch-1: graph and order are required");
    ctx = cc_graph_context(graph);
    if ((rc = cc_graph_validate(graph)) != CC_OK) {
        peer__fail(err, errn, "prefetch-1: graph '%s' does not validate: %s", cc_graph_name(graph), cc_last_error(ctx));
        return rc;
    }
    n = cc_graph_n_ops(graph);
    for (i = 0; i < n; i++) order[i] = cc_graph_op(graph, i);
    if (cc_graph_n_resources(graph) < 1) return CC_OK;
    for (i = 0; i < n; i++) {
        cc_op op = cc_graph_op(graph, i);
        const cc_collective* co = cc_op_collective(graph, op);
        if (co && co->kind == CC_COLL_ALL_GATHER && !strcmp(cc_comm_name(co->comm), "dp")) {
            if (!open) { open = 1; last_anchor = anchor; anchor = -1; }
            if (last_anchor >= 0) {
                if (add_edges && (rc = cc_graph_add_dep(graph, cc_graph_op(graph, last_anchor), op)) != CC_OK) {
                    peer__fail(err, errn, "prefetch-1: %s", cc_last_error(ctx));
                    return rc;
                }
                added++;
            }
        } else if (!co && cc_op_demand(graph, op, 0) > 0 && open) {
            open = 0;
            anchor = i;
        }
    }
    if (n_edges) *n_edges = added;
    return CC_OK;
}

/* ---- the table ------------------------------------------------------------------------------*/
typedef cc_result (*peer_bucket_fn)(const peer_param* params, int n_params, const peer_knobs* knobs, peer_plan* out, char* err,
                                    size_t errn);
typedef cc_result (*peer_order_fn)(cc_graph* graph, int add_edges, cc_op* order, int* n_edges, char* err, size_t errn);

typedef struct peer_policy {
    const char* name;          /* the key a planner prints: "pytorch-ddp", ... */
    const char* system;        /* what it stands for */
    peer_bucket_fn buckets;    /* its gradient (and gather) buckets */
    peer_order_fn order;       /* its issue order; NULL: program order, as the framework issues the step */
} peer_policy;

static PEER__UNUSED const peer_policy peer_policies[] = {
    { "pytorch-ddp", "PyTorch DistributedDataParallel", peer_ddp_buckets, NULL },
    { "megatron-lm", "Megatron-LM (megatron.core DDP, overlap_grad_reduce)", peer_megatron_buckets, NULL },
    { "deepspeed-zero3", "DeepSpeed ZeRO stage 3", peer_deepspeed_zero3_buckets, NULL },
    { "llm.c", "llm.c train_gpt2.cu", peer_llmc_buckets, NULL },
    { "xla-lhs", "XLA all-reduce combiner + latency-hiding scheduler", peer_xla_buckets, peer_xla_schedule },
    { "prefetch-1", "ZeRO-3 with a prefetch depth of one layer (FSDP's, or DeepSpeed with a one-layer prefetch bucket)",
      peer_prefetch1_buckets, peer_prefetch1_order },
};
#define PEER_N_POLICIES ((int)(sizeof peer_policies / sizeof peer_policies[0]))

/* The policy of that name, or NULL. */
static PEER__UNUSED const peer_policy* peer_policy_find(const char* name) {
    int i;
    for (i = 0; name && i < PEER_N_POLICIES; i++)
        if (strcmp(peer_policies[i].name, name) == 0) return &peer_policies[i];
    return NULL;
}

#endif /* CONCERTO_PEERS_H_INCLUDED */
