/* train_gpt.cu - the example GPT trainer on NVIDIA GPUs: the same model,
   graph, command line and files as train_gpt.c, with its kernels on the
   GPU, its collectives through NCCL, and the step scheduled by Concerto-C.

   Everything but the kernels and the ranks' set-up is the CPU trainer's:
   gpt_common.h (configuration, options, data, checkpoints),
   ../steps/gpt_step.h (a rank's tensors, the graph builder) and
   gpt_train.h (a rank's life, gpt_rank_main, and the host's side). The
   graph of the step is built by the same code from the same records; only
   the table of kernels behind its ops (cuda_kernels) differs, and the
   tensors live in device memory (cudaMalloc). --graph-fingerprint prints
   the same fingerprints as train_gpt for the same model and layout.

   Ranks: one process drives TP x DP GPUs, a host thread per GPU (rank r
   on device r), each with its own context, CUDA backend (concerto_cuda.h)
   and NCCL communicator of all ranks (concerto_nccl.h, one unique id
   shared in memory), from which the TP and DP groups are split.

   Kernels, on the op's stream (the backend's cudaStream_t):
   - matmuls through cuBLAS (cublasGemmEx, compute in float32: no TF32),
     except the ops with a split rule, which the library may cut into
     chunks (gpt_op_args.chunked: the ops next to the tensor-parallel
     collectives, gpt_step.h's split rules section: proj, fcproj and the
     input gradients of fc and attn; with --sp also qkv, fc with its GELU
     and the input gradients of fcproj and proj): whole and in chunks of
     rows or of columns they run a tiled kernel of this file whose every
     output element is one sum in a fixed order, given the chunk's block
     through offsets and leading dimensions (GELU and its gradient then
     on that block), so that a chunk comes out bit-identical to the whole
     op's and the library's rewrites change no number; a chunk of the
     reduction (a partial sum, used only where the trainer runs with
     --exact off) is cuBLAS on the block (offsets and leading
     dimensions), beta 1 after the first chunk, as is a chunk of a weight
     gradient's rows (with --sp: the rows are its reduction);
   - attention (cut only by sequences) from cuBLAS strided-batched GEMMs
     over the heads, bfloat16 tensor cores with --dtype bf16, with causal
     softmax kernels of this file; the probabilities are kept as the CPU's
     k_attention keeps them (attention_gemm_fwd, _bwd);
   - this file's kernels for the embedding, layer norm (its weight gradient,
     and the matmuls' bias gradients, by blocks of 32 columns where the op
     is never cut), GELU, softmax cross-entropy, the gradient's squared
     norm (per-block partial sums, then one fixed-order sum) and AdamW.
   TRAIN_GPT_CUDA_EXACT=1 in the environment selects the reference kernels
   instead: a warp per query row for attention, one block per squared norm
   and a thread per column for the layer norm and bias gradients.
   No kernel uses atomics: every sum runs in a fixed order, so a step
   gives the same bits every run, in either order and replayed as a CUDA
   graph (--cuda-graphs on). The collectives are NCCL's: with 3 or more
   ranks in a group, an all-reduce cut into chunks or fused into a bucket
   may sum an element in another order than whole (NCCL's ring splits the
   buffer by position), so the library's order and program order are then
   equal within rounding rather than bit for bit; with one or two ranks
   per group they are bit-identical.

   --dtype bf16: float32 master weights, AdamW's moments, activations; the
   matmuls' operands are rounded to bfloat16 (cuBLAS with bfloat16 inputs
   and float32 accumulation; the tiled kernel rounds its loads), as are
   attention's q, k, v, dy, probabilities and scores' gradient for its
   GEMMs (the softmax itself in float32), and the
   tensors that are all-reduced (the tensor-parallel partial sums and the
   gradients) are bfloat16, so the collectives move bfloat16. Sums into a
   bfloat16 gradient run in float32 and round once (the layer norms'
   backward ops and the weight gradients are then not cut into chunks:
   gpt_step.h).

   Built by `make` when nvcc, cuBLAS and NCCL are found (build/train_gpt_cuda).
   Run with --help for the options. */
#define CONCERTO_IMPLEMENTATION
#include "../../concerto.h"
#include "../../concerto_cuda.h"
#include "../../concerto_nccl.h"
#include "gpt_common.h"
#include "gpt_train.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <pthread.h>

typedef __nv_bfloat16 bf16;

/* ---- a rank's GPU state ------------------------------------------------------ */
/* Each rank is one host thread; what its kernels need besides the op's
   tensors is here, made before its first step (nothing is allocated while
   a step may be captured into a CUDA graph). */
typedef struct gpu_rank {
    cublasHandle_t blas;
    void* blas_ws;                 /* cuBLAS's workspace: fixed, as CUDA graphs need */
    size_t blas_ws_bytes;
    bf16 *opa, *opb;               /* [scratch] a matmul's operands rounded to bfloat16 */
    size_t scratch;                /* elements of each */
    double* rowloss;               /* [N] cross-entropy per row, summed in order */
    float* dots;                   /* [Bl][Hl][T] attention backward: sum of p * dp per query row */
    /* Attention from batched GEMMs (attention_gemm): the heads' q, k, v and
       dy as [B NH][T][HS] (bfloat16 with --dtype bf16, else float32), three
       float32 results of that shape, the scores' gradient [B NH][T][T] in
       float32 and a bfloat16 copy of probabilities or their gradient. */
    void *aq, *ak, *av, *ao;
    float *ar0, *ar1, *ar2, *ss;
    bf16* ssb;
    size_t att_act;                /* elements of each [B NH][T][HS] buffer */
    size_t att_tt;                 /* elements of ss (and ssb) */
    int exact;                     /* TRAIN_GPT_CUDA_EXACT=1: the warp-per-row attention kernels */
    /* The gradient norms' per-block partial sums, a slice per stream the
       sumsq ops ran on (so ops on different streams never share one). */
    double* part;
    cudaStream_t part_stream[16];
    int n_part;
    int bf16;                      /* --dtype bf16 */
    char err[512];                 /* the first failure since error() was asked */
} gpu_rank;

static thread_local gpu_rank* g_rank;

static void note(const char* fmt, const char* what, const char* detail) {
    if (g_rank && !g_rank->err[0]) snprintf(g_rank->err, sizeof g_rank->err, fmt, what, detail);
}
static int cuda_ok(cudaError_t e, const char* what) {
    if (e == cudaSuccess) return 1;
    note("%s failed: %s", what, cudaGetErrorString(e));
    return 0;
}
static int blas_ok(cublasStatus_t st, const char* what) {
    if (st == CUBLAS_STATUS_SUCCESS) return 1;
    note("%s failed: %s", what, cublasGetStatusString(st));
    return 0;
}

/* ---- device helpers ---------------------------------------------------------- */
__device__ __forceinline__ float ld(const void* p, size_t i, int bf) {
    return bf ? __bfloat162float(((const bf16*)p)[i]) : ((const float*)p)[i];
}
__device__ __forceinline__ void st(void* p, size_t i, int bf, float x) {
    if (bf) ((bf16*)p)[i] = __float2bfloat16(x);
    else ((float*)p)[i] = x;
}
__device__ __forceinline__ float round_bf16(float x) { return __bfloat162float(__float2bfloat16(x)); }

template <typename F> __device__ __forceinline__ F warp_sum(F v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
__device__ __forceinline__ float warp_max(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
/* The sum over the block (blockDim.x a multiple of 32), in a fixed order,
   to every thread; sh holds 33 values. */
template <typename F> __device__ F block_sum(F v, F* sh) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    if (lane == 0) sh[w] = v;
    __syncthreads();
    if (w == 0) {
        F x = lane < nw ? sh[lane] : F(0);
        x = warp_sum(x);
        if (lane == 0) sh[32] = x;
    }
    __syncthreads();
    F r = sh[32];
    __syncthreads();
    return r;
}
__device__ float block_max(float v, float* sh) {
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_max(v);
    if (lane == 0) sh[w] = v;
    __syncthreads();
    if (w == 0) {
        float x = lane < nw ? sh[lane] : -INFINITY;
        x = warp_max(x);
        if (lane == 0) sh[32] = x;
    }
    __syncthreads();
    float r = sh[32];
    __syncthreads();
    return r;
}

#define GELU_S 0.7978845608028654f   /* sqrt(2 / pi) */
#define THREADS 256
static unsigned blocks_for(size_t n) { return (unsigned)((n + THREADS - 1) / THREADS); }

/* ---- kernels ------------------------------------------------------------------ */
/* x[N][C] = wte[tokens[n]] + wpe[(row0 + n) % T] */
__global__ void embed_kernel(float* x, const float* wte, const float* wpe, const int* tokens, int N, int T, int C, int row0) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * C) return;
    int n = (int)(i / C), k = (int)(i % C);
    x[i] = wte[(size_t)tokens[n] * C + k] + wpe[(size_t)((row0 + n) % T) * C + k];
}

/* A block per row: y = (x - mean) * rstd * w + b; biased variance, eps 1e-5. */
__global__ void layernorm_kernel(float* y, float* mean, float* rstd, const float* x, const float* w, const float* b, int C) {
    __shared__ float sh[33];
    const float* xr = x + (size_t)blockIdx.x * C;
    float* yr = y + (size_t)blockIdx.x * C;
    float s = 0, v = 0;
    for (int c = threadIdx.x; c < C; c += blockDim.x) s += xr[c];
    float m = block_sum(s, sh) / (float)C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) v += (xr[c] - m) * (xr[c] - m);
    float rs = 1.0f / sqrtf(block_sum(v, sh) / (float)C + 1e-5f);
    for (int c = threadIdx.x; c < C; c += blockDim.x) yr[c] = (xr[c] - m) * rs * w[c] + b[c];
    if (threadIdx.x == 0) { mean[blockIdx.x] = m; rstd[blockIdx.x] = rs; }
}

/* A block per row: dx = (resid or 0) + the norm's input gradient of dy
   (dy may be bfloat16). */
__global__ void layernorm_bwd_x_kernel(float* dx, const float* resid, const void* dy, int dy_bf, const float* x, const float* mean,
                                       const float* rstd, const float* w, int C) {
    __shared__ float sh[33];
    size_t row = (size_t)blockIdx.x * C;
    float m = mean[blockIdx.x], rs = rstd[blockIdx.x], s1 = 0, s2 = 0;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float norm = (x[row + c] - m) * rs, dn = ld(dy, row + c, dy_bf) * w[c];
        s1 += dn;
        s2 += dn * norm;
    }
    float sum_dn = block_sum(s1, sh) / (float)C, sum_dn_norm = block_sum(s2, sh) / (float)C;
    for (int c = threadIdx.x; c < C; c += blockDim.x) {
        float norm = (x[row + c] - m) * rs, dn = ld(dy, row + c, dy_bf) * w[c];
        dx[row + c] = (resid ? resid[row + c] : 0.0f) + rs * (dn - sum_dn - norm * sum_dn_norm);
    }
}

/* A thread per column: dw[c] (+)= sum over rows of dy * norm, db[c] (+)= sum of dy,
   rows in order (chunks after the first add to what the first wrote). */
__global__ void layernorm_bwd_w_kernel(void* dw, void* db, int g_bf, const void* dy, int dy_bf, const float* x, const float* mean,
                                       const float* rstd, int N, int C, int accumulate) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    float sw = accumulate ? ld(dw, c, g_bf) : 0.0f, sb = accumulate ? ld(db, c, g_bf) : 0.0f;
    int n = 0;
    for (; n + 8 <= N; n += 8) {           /* eight rows' loads in flight, summed in order */
        float g[8], nm[8];
        for (int u = 0; u < 8; u++) {
            size_t i = (size_t)(n + u) * C + c;
            g[u] = ld(dy, i, dy_bf);
            nm[u] = (x[i] - mean[n + u]) * rstd[n + u];
        }
        for (int u = 0; u < 8; u++) {
            sw += g[u] * nm[u];
            sb += g[u];
        }
    }
    for (; n < N; n++) {
        float g = ld(dy, (size_t)n * C + c, dy_bf), nm = (x[(size_t)n * C + c] - mean[n]) * rstd[n];
        sw += g * nm;
        sb += g;
    }
    st(dw, c, g_bf, sw);
    st(db, c, g_bf, sb);
}
/* The same sums for an op never cut into chunks: a block of 32 x 32
   threads per 32 columns, thread (i, c) summing rows i, i + 32, ... in
   order, then the 32 sums of a column in order, added to what is there
   when accumulating. Fixed order, so deterministic; not the bits of the
   kernel above. */
__global__ void __launch_bounds__(1024) layernorm_bwd_w_cols_kernel(void* dw, void* db, int g_bf, const void* dy, int dy_bf,
                                                                    const float* x, const float* mean, const float* rstd, int N, int C,
                                                                    int accumulate) {
    __shared__ float sws[32][33], sbs[32][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5, c = blockIdx.x * 32 + tx;
    float sw = 0, sb = 0;
    if (c < C)
        for (int n = ty; n < N; n += 32) {
            size_t i = (size_t)n * C + c;
            float g = ld(dy, i, dy_bf), nm = (x[i] - mean[n]) * rstd[n];
            sw += g * nm;
            sb += g;
        }
    sws[ty][tx] = sw;
    sbs[ty][tx] = sb;
    __syncthreads();
    if (ty == 0 && c < C) {
        float tw = 0, tb = 0;
        for (int k = 0; k < 32; k++) {
            tw += sws[k][tx];
            tb += sbs[k][tx];
        }
        st(dw, c, g_bf, (accumulate ? ld(dw, c, g_bf) : 0.0f) + tw);
        st(db, c, g_bf, (accumulate ? ld(db, c, g_bf) : 0.0f) + tb);
    }
}

/* y[n][j] = sum over k of x[n][k] * W(j, k) (+ bias[j]), W(j, k) = w[j][k]
   (trans_w 0) or w[k][j] (trans_w 1), for n < N, j < J, k < K; rows of x,
   w and y are ldx, ldw and ldy elements apart, so that x, w and y may be
   blocks of larger matrices (a chunk of columns). 64 x 64 tiles, each
   thread 4 x 4 outputs; every output is one sum over k in increasing
   order, whatever N and J, so a chunk of rows or of columns gives the
   whole op's bits. With round_in, operands are rounded to bfloat16
   first. */
#define TM 64
#define TK 16
__global__ void matmul_tiled_kernel(void* y, int y_bf, const float* x, const float* w, const float* bias, int N, int K, int J,
                                    int trans_w, int round_in, int ldx, int ldw, int ldy) {
    __shared__ float xs[TK][TM + 1];
    __shared__ float ws[TK][TM + 1];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    int n0 = blockIdx.y * TM, j0 = blockIdx.x * TM;
    float acc[4][4] = { { 0 } };
    for (int k0 = 0; k0 < K; k0 += TK) {
        for (int i = threadIdx.x; i < TM * TK; i += 256) {
            int r = i / TK, kk = i % TK, n = n0 + r, k = k0 + kk;
            float xv = n < N && k < K ? x[(size_t)n * ldx + k] : 0.0f;
            int j = j0 + r;
            float wv = 0.0f;
            if (j < J && k < K) wv = trans_w ? w[(size_t)k * ldw + j] : w[(size_t)j * ldw + k];
            if (round_in) { xv = round_bf16(xv); wv = round_bf16(wv); }
            xs[kk][r] = xv;
            ws[kk][r] = wv;
        }
        __syncthreads();
        for (int kk = 0; kk < TK; kk++)
            for (int a = 0; a < 4; a++)
                for (int b = 0; b < 4; b++) acc[a][b] += xs[kk][ty * 4 + a] * ws[kk][tx * 4 + b];
        __syncthreads();
    }
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            int n = n0 + ty * 4 + a, j = j0 + tx * 4 + b;
            if (n < N && j < J) st(y, (size_t)n * ldy + j, y_bf, acc[a][b] + (bias ? bias[j] : 0.0f));
        }
}

/* y[n][j] += bias[j] (y float32) */
__global__ void add_bias_kernel(float* y, const float* bias, int N, int J) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)N * J) y[i] += bias[i % J];
}
/* h += bias; u = gelu(h) (tanh approximation) */
__global__ void bias_gelu_kernel(float* h, float* u, const float* bias, int N, int J) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)N * J) return;
    float x = h[i] + bias[i % J];
    h[i] = x;
    u[i] = 0.5f * x * (1.0f + tanhf(GELU_S * (x + 0.044715f * x * x * x)));
}
/* u = gelu(h) on a block of N rows of J, rows ld apart (a chunk's columns
   of h and u, or all of them) */
__global__ void gelu_block_kernel(float* u, const float* h, int N, int J, int ldh) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, at;
    if (i >= (size_t)N * J) return;
    at = i / J * ldh + i % J;
    float x = h[at];
    u[at] = 0.5f * x * (1.0f + tanhf(GELU_S * (x + 0.044715f * x * x * x)));
}
/* d = d * gelu'(h) on such a block */
__global__ void gelu_bwd_block_kernel(float* d, const float* h, int N, int J, int ldh) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, at;
    if (i >= (size_t)N * J) return;
    at = i / J * ldh + i % J;
    float x = h[at], u = GELU_S * (x + 0.044715f * x * x * x), t = tanhf(u);
    d[at] *= 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_S * (1.0f + 3.0f * 0.044715f * x * x);
}
/* d = d * gelu'(h) */
__global__ void gelu_bwd_kernel(float* d, const float* h, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = h[i], u = GELU_S * (x + 0.044715f * x * x * x), t = tanhf(u);
    d[i] *= 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * GELU_S * (1.0f + 3.0f * 0.044715f * x * x);
}
/* A thread per column: dbias[j] = sum over rows of dy[n][j], in order
   (TRAIN_GPT_CUDA_EXACT=1, or an op cut into chunks of rows); with
   accumulate the sum goes on from what dbias holds. */
__global__ void bias_grad_kernel(void* dbias, int g_bf, const float* dy, int N, int J, int accumulate) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= J) return;
    float s = accumulate ? ld(dbias, j, g_bf) : 0.0f;
    for (int n = 0; n < N; n++) s += dy[(size_t)n * J + j];
    st(dbias, j, g_bf, s);
}
/* The same sums by a block of 32 x 32 threads per 32 columns: thread (i, j)
   sums rows i, i + 32, ... in order, then the 32 sums of a column in order
   (the op that runs it is never cut into chunks), added to what dbias
   holds with accumulate. */
__global__ void __launch_bounds__(1024) bias_grad_cols_kernel(void* dbias, int g_bf, const float* dy, int N, int J, int accumulate) {
    __shared__ float sh[32][33];
    int tx = threadIdx.x & 31, ty = threadIdx.x >> 5, j = blockIdx.x * 32 + tx;
    float s = 0;
    if (j < J)
        for (int n = ty; n < N; n += 32) s += dy[(size_t)n * J + j];
    sh[ty][tx] = s;
    __syncthreads();
    if (ty == 0 && j < J) {
        float t = 0;
        for (int k = 0; k < 32; k++) t += sh[k][tx];
        st(dbias, j, g_bf, (accumulate ? ld(dbias, j, g_bf) : 0.0f) + t);
    }
}
/* float32 to bfloat16 */
__global__ void to_bf16_kernel(bf16* out, const float* in, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __float2bfloat16(in[i]);
}

/* A warp per query row (b, h, t): the probabilities att[b][h][t][0..T) (zero
   past t) and y = sum over t2 <= t of att * v. qkv[B T][3 W], W = NH HS. */
__global__ void attention_kernel(float* y, float* att, const float* qkv, int B, int T, int NH, int HS) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= (size_t)B * NH * T) return;
    int t = (int)(row % T), h = (int)(row / T % NH), b = (int)(row / T / NH), W = NH * HS;
    float scale = 1.0f / sqrtf((float)HS);
    const float* q = qkv + ((size_t)b * T + t) * 3 * W + h * HS;
    float* a = att + row * T;
    float mx = -INFINITY, sum = 0;
    for (int t2 = lane; t2 <= t; t2 += 32) {
        const float* k = qkv + ((size_t)b * T + t2) * 3 * W + W + h * HS;
        float s = 0;
        for (int d = 0; d < HS; d++) s += q[d] * k[d];
        a[t2] = s * scale;
        mx = fmaxf(mx, s * scale);
    }
    mx = warp_max(mx);
    for (int t2 = lane; t2 <= t; t2 += 32) {
        float e = expf(a[t2] - mx);
        a[t2] = e;
        sum += e;
    }
    sum = warp_sum(sum);
    for (int t2 = lane; t2 < T; t2 += 32) a[t2] = t2 <= t ? a[t2] / sum : 0.0f;
    __syncwarp();
    for (int d = lane; d < HS; d += 32) {
        float o = 0;
        for (int t2 = 0; t2 <= t; t2++) o += a[t2] * qkv[((size_t)b * T + t2) * 3 * W + 2 * W + h * HS + d];
        y[((size_t)b * T + t) * W + h * HS + d] = o;
    }
}

/* Attention backward, first half: a warp per query row t: dp[t2] = dy_t . v_t2,
   dot = sum of att * dp, ds = att (dp - dot) scale; dq_t = sum ds k_t2.
   dot goes to dots for the second half. */
#define ATT_WARPS 8
__global__ void attention_bwd_q_kernel(float* dqkv, float* dots, const float* dy, const float* att, const float* qkv, int B, int T,
                                       int NH, int HS) {
    __shared__ float ds_all[ATT_WARPS][MAX_T];
    int lane = threadIdx.x & 31, wi = threadIdx.x / 32;
    size_t row = (size_t)blockIdx.x * ATT_WARPS + wi;
    if (row >= (size_t)B * NH * T) return;
    int t = (int)(row % T), h = (int)(row / T % NH), b = (int)(row / T / NH), W = NH * HS;
    float scale = 1.0f / sqrtf((float)HS), dot = 0;
    const float* a = att + row * T;
    const float* g = dy + ((size_t)b * T + t) * W + h * HS;
    float* ds = ds_all[wi];
    for (int t2 = lane; t2 <= t; t2 += 32) {
        const float* v = qkv + ((size_t)b * T + t2) * 3 * W + 2 * W + h * HS;
        float s = 0;
        for (int d = 0; d < HS; d++) s += g[d] * v[d];
        ds[t2] = s;
        dot += a[t2] * s;
    }
    dot = warp_sum(dot);
    for (int t2 = lane; t2 <= t; t2 += 32) ds[t2] = a[t2] * (ds[t2] - dot) * scale;
    __syncwarp();
    for (int d = lane; d < HS; d += 32) {
        float o = 0;
        for (int t2 = 0; t2 <= t; t2++) o += ds[t2] * qkv[((size_t)b * T + t2) * 3 * W + W + h * HS + d];
        dqkv[((size_t)b * T + t) * 3 * W + h * HS + d] = o;
    }
    if (lane == 0) dots[row] = dot;
}
/* Second half: a warp per key row t2: dk_t2 = sum over t >= t2 of ds[t][t2] q_t,
   dv_t2 = sum of att[t][t2] dy_t, t in increasing order. HS <= 128. */
__global__ void attention_bwd_kv_kernel(float* dqkv, const float* dots, const float* dy, const float* att, const float* qkv, int B,
                                        int T, int NH, int HS) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= (size_t)B * NH * T) return;
    int t2 = (int)(row % T), h = (int)(row / T % NH), b = (int)(row / T / NH), W = NH * HS;
    float scale = 1.0f / sqrtf((float)HS), dk[4] = { 0, 0, 0, 0 }, dv[4] = { 0, 0, 0, 0 }, vv[4];
    const float* v = qkv + ((size_t)b * T + t2) * 3 * W + 2 * W + h * HS;
    for (int i = 0; i < 4; i++) vv[i] = lane + 32 * i < HS ? v[lane + 32 * i] : 0.0f;
    for (int t = t2; t < T; t++) {
        size_t qrow = (size_t)b * T + t;
        float p = att[(((size_t)b * NH + h) * T + t) * T + t2], s = 0;
        const float* g = dy + qrow * W + h * HS;
        for (int i = 0; i < 4; i++) if (lane + 32 * i < HS) s += g[lane + 32 * i] * vv[i];
        s = warp_sum(s);
        float ds = p * (s - dots[((size_t)b * NH + h) * T + t]) * scale;
        const float* q = qkv + qrow * 3 * W + h * HS;
        for (int i = 0; i < 4; i++)
            if (lane + 32 * i < HS) {
                dk[i] += ds * q[lane + 32 * i];
                dv[i] += p * g[lane + 32 * i];
            }
    }
    float* out = dqkv + ((size_t)b * T + t2) * 3 * W + h * HS;
    for (int i = 0; i < 4; i++)
        if (lane + 32 * i < HS) {
            out[W + lane + 32 * i] = dk[i];
            out[2 * W + lane + 32 * i] = dv[i];
        }
}

/* Attention from batched GEMMs (attention_gemm, below): the heads' rows
   gathered into [B NH][T][HS] (q, k and v from qkv [B T][3 W], or dy from
   [B T][W]; src points at the first head's column, stride is the row's
   length), stored as float32 or bfloat16. */
__global__ void heads_gather_kernel(void* out, int out_bf, const float* src, int stride, int B, int T, int NH, int HS) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)B * NH * T * HS) return;
    int d = (int)(i % HS), t = (int)(i / HS % T), h = (int)(i / HS / T % NH), b = (int)(i / HS / T / NH);
    st(out, i, out_bf, src[((size_t)b * T + t) * stride + h * HS + d]);
}
/* The inverse: [B NH][T][HS] float32 into the rows of dst (stride as above). */
__global__ void heads_scatter_kernel(float* dst, int stride, const float* in, int B, int T, int NH, int HS) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)B * NH * T * HS) return;
    int d = (int)(i % HS), t = (int)(i / HS % T), h = (int)(i / HS / T % NH), b = (int)(i / HS / T / NH);
    dst[((size_t)b * T + t) * stride + h * HS + d] = in[i];
}
/* A warp per row (b, h, t) of the scaled scores att[b][h][t][0..T): the
   causal softmax in place (zero past t), each lane's terms summed in order
   and then across the warp in a fixed order; pb: a bfloat16 copy, or NULL. */
__global__ void softmax_causal_kernel(float* att, bf16* pb, size_t rows, int T) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    int t = (int)(row % T);
    float* a = att + row * T;
    float mx = -INFINITY, sum = 0;
    for (int t2 = lane; t2 <= t; t2 += 32) mx = fmaxf(mx, a[t2]);
    mx = warp_max(mx);
    for (int t2 = lane; t2 <= t; t2 += 32) sum += expf(a[t2] - mx);
    sum = warp_sum(sum);
    for (int t2 = lane; t2 < T; t2 += 32) {
        float p = t2 <= t ? expf(a[t2] - mx) / sum : 0.0f;
        a[t2] = p;
        if (pb) pb[row * T + t2] = __float2bfloat16(p);
    }
}
/* A warp per row: the scores' gradient from the probabilities' (dp, in
   ds): ds = att (dp - sum of att dp) scale up to t, zero past it; into ds
   in place, or into dsb (bfloat16) when it is not NULL. */
__global__ void softmax_causal_bwd_kernel(float* ds, bf16* dsb, const float* att, size_t rows, int T, float scale) {
    int lane = threadIdx.x & 31;
    size_t row = (size_t)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    if (row >= rows) return;
    int t = (int)(row % T);
    const float* p = att + row * T;
    float* d = ds + row * T;
    float dot = 0;
    for (int t2 = lane; t2 <= t; t2 += 32) dot += p[t2] * d[t2];
    dot = warp_sum(dot);
    for (int t2 = lane; t2 < T; t2 += 32) {
        float g = t2 <= t ? p[t2] * (d[t2] - dot) * scale : 0.0f;
        if (dsb) dsb[row * T + t2] = __float2bfloat16(g);
        else d[t2] = g;
    }
}

/* y = x + (part + bias) (part may be bfloat16) */
__global__ void residual_kernel(float* y, const float* x, const void* part, int part_bf, const float* bias, int N, int C) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (size_t)N * C) y[i] = x[i] + (ld(part, i, part_bf) + bias[i % C]);
}

/* A block per row: its loss (double) and, with dlogits, (softmax - onehot) / N. */
__global__ void crossentropy_kernel(double* rowloss, float* dlogits, const float* logits, const int* targets, int N, int V) {
    /* N: the rows the gradient is a mean over */
    __shared__ float sh[33];
    const float* l = logits + (size_t)blockIdx.x * V;
    float mx = -INFINITY, s = 0;
    for (int v = threadIdx.x; v < V; v += blockDim.x) mx = fmaxf(mx, l[v]);
    mx = block_max(mx, sh);
    for (int v = threadIdx.x; v < V; v += blockDim.x) s += expf(l[v] - mx);
    float sum = block_sum(s, sh);
    int tg = targets[blockIdx.x];
    if (threadIdx.x == 0) rowloss[blockIdx.x] = (double)(logf(sum) + mx - l[tg]);
    if (dlogits) {
        float inv = 1.0f / sum;
        float* dl = dlogits + (size_t)blockIdx.x * V;
        for (int v = threadIdx.x; v < V; v += blockDim.x) dl[v] = expf(l[v] - mx) * inv / (float)N - (v == tg ? 1.0f / (float)N : 0.0f);
    }
}
/* One block: loss[0] = the mean of rowloss, summed in a fixed order. */
__global__ void mean_loss_kernel(float* loss, const double* rowloss, int N) {
    __shared__ double sh[33];
    double s = 0;
    for (int n = threadIdx.x; n < N; n += blockDim.x) s += rowloss[n];
    s = block_sum(s, sh);
    if (threadIdx.x == 0) loss[0] = (float)(s / N);
}

/* A thread per element (v, k) of dwte: what is there plus dx[n][k] for
   every n with tokens[n] == v, n in order, summed in float32 and stored
   once (the CPU's order; one rounding to bfloat16). */
__global__ void embed_bwd_wte_kernel(void* dwte, int g_bf, const float* dx, const int* tokens, int N, int V, int C) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)V * C) return;
    int v = (int)(i / C), k = (int)(i % C);
    float s = ld(dwte, i, g_bf);
    for (int n = 0; n < N; n++)
        if (tokens[n] == v) s += dx[(size_t)n * C + k];
    st(dwte, i, g_bf, s);
}
/* dwpe[t][k] = the sum over the N rows n at position (row0 + n) % T == t
   of dx[n][k], in row order */
__global__ void embed_bwd_wpe_kernel(void* dwpe, int g_bf, const float* dx, int N, int T, int C, int row0) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (size_t)T * C) return;
    int t = (int)(i / C), k = (int)(i % C);
    float s = 0;
    for (int n = ((t - row0) % T + T) % T; n < N; n += T) s += dx[(size_t)n * C + k];
    st(dwpe, i, g_bf, s);
}

/* One block: slot[0] = the squared norm of g (double), or 0 where it does
   not count (TRAIN_GPT_CUDA_EXACT=1). */
__global__ void sumsq_kernel(double* slot, const void* g, int g_bf, size_t n, int counted) {
    __shared__ double sh[33];
    double s = 0;
    if (counted)
        for (size_t i = threadIdx.x; i < n; i += blockDim.x) {
            double x = ld(g, i, g_bf);
            s += x * x;
        }
    s = block_sum(s, sh);
    if (threadIdx.x == 0) slot[0] = s;
}
/* The squared norm in two passes (run_sumsq): nb blocks of THREADS
   threads, block b's thread i summing elements b THREADS + i, then every
   nb THREADS on, in order, each block's sum in a fixed order
   (sumsq_block); then the nb partial sums in a fixed order (sum_parts).
   nb depends on n alone, so the bits do not depend on the launch. */
#define SUMSQ_PARTS 512
__device__ double sumsq_block(const void* g, int g_bf, size_t n, unsigned b, unsigned nb, double* sh) {
    double s = 0;
    for (size_t i = (size_t)b * blockDim.x + threadIdx.x; i < n; i += (size_t)nb * blockDim.x) {
        double x = ld(g, i, g_bf);
        s += x * x;
    }
    return block_sum(s, sh);
}
__device__ double sum_parts(const double* part, unsigned np, double* sh) {
    double s = 0;
    for (unsigned i = threadIdx.x; i < np; i += blockDim.x) s += part[i];
    return block_sum(s, sh);
}
__global__ void sumsq_part_kernel(double* part, const void* g, int g_bf, size_t n) {
    __shared__ double sh[33];
    double s = sumsq_block(g, g_bf, n, blockIdx.x, gridDim.x, sh);
    if (threadIdx.x == 0) part[blockIdx.x] = s;
}
__global__ void sumsq_final_kernel(double* slot, const double* part, unsigned np) {
    __shared__ double sh[33];
    double s = sum_parts(part, np, sh);
    if (threadIdx.x == 0) slot[0] = s;
}
/* The same two passes and bits in one block, for a stream with no slice of
   the partial sums left. */
__global__ void sumsq_serial_kernel(double* slot, const void* g, int g_bf, size_t n, unsigned nb) {
    __shared__ double sh[33];
    __shared__ double part[SUMSQ_PARTS];
    for (unsigned b = 0; b < nb; b++) {
        double s = sumsq_block(g, g_bf, n, b, nb, sh);
        if (threadIdx.x == 0) part[b] = s;
    }
    __syncthreads();
    double s = sum_parts(part, nb, sh);
    if (threadIdx.x == 0) slot[0] = s;
}
/* One thread: normsq[0] = the sum of sumsq, in order. */
__global__ void grad_norm_kernel(double* normsq, const double* sumsq, size_t n) {
    double s = 0;
    for (size_t i = 0; i < n; i++) s += sumsq[i];
    normsq[0] = s;
}
/* AdamW as the CPU's k_adamw, the gradient clipped to norm 1; the learning
   rate and step count read from device memory (a replayed graph sees the
   host's latest). */
__global__ void adamw_kernel(float* p, float* m, float* v, const void* g, int g_bf, const double* normsq, const gpt_adamw_step* step,
                             size_t n, float wd) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double norm = sqrt(normsq[0]), coef = 1.0 / (norm + 1e-6);
    float scale = (float)(coef < 1.0 ? coef : 1.0), lr = step->lr, beta1 = 0.9f, beta2 = 0.95f, eps = 1e-8f;
    float bc1 = 1.0f - powf(beta1, (float)step->t), bc2 = 1.0f - powf(beta2, (float)step->t), sqrt_bc2 = sqrtf(bc2);
    float gi = ld(g, i, g_bf) * scale;
    m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
    v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
    p[i] *= 1.0f - lr * wd;
    p[i] -= lr / bc1 * m[i] / (sqrtf(v[i]) / sqrt_bc2 + eps);
}

/* ---- matmuls ------------------------------------------------------------------ */
/* Column-major C[m][n] = op(A) op(B) + beta C with cuBLAS on stream s; with
   --dtype bf16 the float32 operands go through the rank's bfloat16 scratch
   (a_elems, b_elems: the elements from A and B up to the last one used). */
static void gemm_beta(cudaStream_t s, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* A, size_t a_elems,
                      int lda, const float* B, size_t b_elems, int ldb, void* C, int c_bf, int ldc, float beta) {
    gpu_rank* r = g_rank;
    const float one = 1.0f;
    const void *a = A, *b = B;
    cudaDataType_t in = CUDA_R_32F;
    /* cublasSetStream resets the workspace to cuBLAS's pool: set ours again */
    if (!blas_ok(cublasSetStream(r->blas, s), "cublasSetStream") ||
        !blas_ok(cublasSetWorkspace(r->blas, r->blas_ws, r->blas_ws_bytes), "cublasSetWorkspace"))
        return;
    if (r->bf16) {
        if (a_elems > r->scratch || b_elems > r->scratch) {
            note("%s: %s", "a matmul", "operands larger than the bfloat16 scratch");
            return;
        }
        to_bf16_kernel<<<blocks_for(a_elems), THREADS, 0, s>>>(r->opa, A, a_elems);
        to_bf16_kernel<<<blocks_for(b_elems), THREADS, 0, s>>>(r->opb, B, b_elems);
        a = r->opa;
        b = r->opb;
        in = CUDA_R_16BF;
    }
    blas_ok(cublasGemmEx(r->blas, ta, tb, m, n, k, &one, a, in, lda, b, in, ldb, &beta, C, c_bf ? CUDA_R_16BF : CUDA_R_32F, ldc,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
}
static void gemm(cudaStream_t s, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const float* A, size_t a_elems,
                 int lda, const float* B, size_t b_elems, int ldb, void* C, int c_bf, int ldc) {
    gemm_beta(s, ta, tb, m, n, k, A, a_elems, lda, B, b_elems, ldb, C, c_bf, ldc, 0.0f);
}
/* y[N][OC] = x[N][C] w[OC][C]^T (no bias) */
static void matmul_fwd(cudaStream_t s, void* y, int y_bf, const float* x, const float* w, int N, int C, int OC) {
    gemm(s, CUBLAS_OP_T, CUBLAS_OP_N, OC, N, C, w, (size_t)OC * C, C, x, (size_t)N * C, C, y, y_bf, OC);
}
/* dx[N][C] = dy[N][OC] w[OC][C] */
static void matmul_bwd_x(cudaStream_t s, void* dx, int dx_bf, const float* dy, const float* w, int N, int C, int OC) {
    gemm(s, CUBLAS_OP_N, CUBLAS_OP_N, C, N, OC, w, (size_t)OC * C, C, dy, (size_t)N * OC, OC, dx, dx_bf, C);
}
/* Column-major batched C_i[m][n] = alpha op(A_i) op(B_i) (beta 0), C float32,
   A and B bfloat16 (in_bf) or float32; float32 accumulation either way. */
static int bgemm(cudaStream_t s, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, float alpha, const void* A, int lda,
                 long long sa, const void* B, int ldb, long long sb, float* C, int ldc, long long sc, int batch, int in_bf) {
    gpu_rank* r = g_rank;
    const float zero = 0.0f;
    cudaDataType_t in = in_bf ? CUDA_R_16BF : CUDA_R_32F;
    if (!blas_ok(cublasSetStream(r->blas, s), "cublasSetStream") ||
        !blas_ok(cublasSetWorkspace(r->blas, r->blas_ws, r->blas_ws_bytes), "cublasSetWorkspace"))
        return 0;
    return blas_ok(cublasGemmStridedBatchedEx(r->blas, ta, tb, m, n, k, &alpha, A, in, lda, sa, B, in, ldb, sb, &zero, C, CUDA_R_32F, ldc,
                                              sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                   "cublasGemmStridedBatchedEx");
}

/* Attention from batched GEMMs, one batch of B NH heads each (bfloat16
   tensor cores with --dtype bf16, float32 otherwise), with the causal
   softmax and its gradient as kernels of this file:
     forward:  att = softmax(scale Q K^T) (masked), y = att V;
     backward: dV = att^T dO, dP = dO V^T, dS = att (dP - rowsum(att dP))
               scale, dQ = dS K, dK = dS^T Q.
   The full T x T products are computed and the softmax zeroes what lies
   past each query. Used for the attention ops only. Their split rule
   (gpt_step.h's "attention_seqs") lets the library cut them by sequences:
   a chunk runs the same path as the whole op (chosen by the whole op's
   sizes) on its sequences. The warp-per-row kernels give each row the
   whole op's bits; cuBLAS gives the same bits every run on one GPU model
   with a fixed workspace, but another batch count may pick another
   algorithm, so a chunk's bits are not promised to be the whole op's
   (these ops are next to no collective: no context the library splits
   holds them in these layouts). The reference is the warp-per-row kernels
   above (TRAIN_GPT_CUDA_EXACT=1), with fewer roundings in float32: the two
   agree within rounding, and bfloat16 rounds q, k, v, dy, att and dS. */
static int attention_fits(const gpt_op_args* a) {
    const gpu_rank* r = g_rank;
    return !r->exact && (size_t)a->B * a->NH * a->T * a->HS <= r->att_act && (size_t)a->B * a->NH * a->T * a->T <= r->att_tt;
}
static void gather_heads(cudaStream_t s, void* out, const float* src, int stride, const gpt_op_args* a) {
    size_t n = (size_t)a->B * a->NH * a->T * a->HS;
    heads_gather_kernel<<<blocks_for(n), THREADS, 0, s>>>(out, g_rank->bf16, src, stride, a->B, a->T, a->NH, a->HS);
}
static void scatter_heads(cudaStream_t s, float* dst, int stride, const float* in, const gpt_op_args* a) {
    size_t n = (size_t)a->B * a->NH * a->T * a->HS;
    heads_scatter_kernel<<<blocks_for(n), THREADS, 0, s>>>(dst, stride, in, a->B, a->T, a->NH, a->HS);
}
/* in: qkv [B T][3 W]; out: y [B T][W], att [B NH][T][T] */
static void attention_gemm_fwd(cudaStream_t s, float* y, float* att, const float* qkv, const gpt_op_args* a) {
    gpu_rank* r = g_rank;
    int T = a->T, HS = a->HS, W = a->NH * a->HS, BH = a->B * a->NH, bf = r->bf16;
    long long per = (long long)T * HS, tt = (long long)T * T;
    size_t rows = (size_t)BH * T;
    gather_heads(s, r->aq, qkv, 3 * W, a);
    gather_heads(s, r->ak, qkv + W, 3 * W, a);
    gather_heads(s, r->av, qkv + 2 * W, 3 * W, a);
    /* att_cm(t2, t) = scale sum_d K(t2, d) Q(t, d): row-major att[t][t2] */
    if (!bgemm(s, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, 1.0f / sqrtf((float)HS), r->ak, HS, per, r->aq, HS, per, att, T, tt, BH, bf))
        return;
    softmax_causal_kernel<<<(unsigned)((rows + 7) / 8), THREADS, 0, s>>>(att, bf ? r->ssb : NULL, rows, T);
    /* Y_cm(d, t) = sum_t2 V(t2, d) att[t][t2] */
    if (!bgemm(s, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, 1.0f, r->av, HS, per, bf ? (const void*)r->ssb : (const void*)att, T, tt, r->ar0,
               HS, per, BH, bf))
        return;
    scatter_heads(s, y, W, r->ar0, a);
}
/* in: dy [B T][W], att, qkv; out: dqkv [B T][3 W] */
static void attention_gemm_bwd(cudaStream_t s, float* dqkv, const float* dy, const float* att, const float* qkv, const gpt_op_args* a) {
    gpu_rank* r = g_rank;
    int T = a->T, HS = a->HS, W = a->NH * a->HS, BH = a->B * a->NH, bf = r->bf16;
    long long per = (long long)T * HS, tt = (long long)T * T;
    size_t rows = (size_t)BH * T;
    const void* p = att;
    const void* ds = r->ss;
    gather_heads(s, r->aq, qkv, 3 * W, a);
    gather_heads(s, r->ak, qkv + W, 3 * W, a);
    gather_heads(s, r->av, qkv + 2 * W, 3 * W, a);
    gather_heads(s, r->ao, dy, W, a);
    if (bf) {
        to_bf16_kernel<<<blocks_for(rows * T), THREADS, 0, s>>>(r->ssb, att, rows * T);
        p = ds = r->ssb;
    }
    /* dV_cm(d, t2) = sum_t dO(t, d) att[t][t2] */
    if (!bgemm(s, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, 1.0f, r->ao, HS, per, p, T, tt, r->ar2, HS, per, BH, bf)) return;
    /* dP_cm(t2, t) = sum_d V(t2, d) dO(t, d) */
    if (!bgemm(s, CUBLAS_OP_T, CUBLAS_OP_N, T, T, HS, 1.0f, r->av, HS, per, r->ao, HS, per, r->ss, T, tt, BH, bf)) return;
    softmax_causal_bwd_kernel<<<(unsigned)((rows + 7) / 8), THREADS, 0, s>>>(r->ss, bf ? r->ssb : NULL, att, rows, T,
                                                                             1.0f / sqrtf((float)HS));
    /* dQ_cm(d, t) = sum_t2 K(t2, d) dS[t][t2]; dK_cm(d, t2) = sum_t Q(t, d) dS[t][t2] */
    if (!bgemm(s, CUBLAS_OP_N, CUBLAS_OP_N, HS, T, T, 1.0f, r->ak, HS, per, ds, T, tt, r->ar0, HS, per, BH, bf) ||
        !bgemm(s, CUBLAS_OP_N, CUBLAS_OP_T, HS, T, T, 1.0f, r->aq, HS, per, ds, T, tt, r->ar1, HS, per, BH, bf))
        return;
    scatter_heads(s, dqkv, 3 * W, r->ar0, a);
    scatter_heads(s, dqkv + W, 3 * W, r->ar1, a);
    scatter_heads(s, dqkv + 2 * W, 3 * W, r->ar2, a);
}

/* The stream's slice of the partial sums (SUMSQ_PARTS each), or NULL when
   every slice is taken. Ops on one stream run one after another, so they
   can share a slice; the slices are allocated before the first step. */
static double* part_of(cudaStream_t s) {
    gpu_rank* r = g_rank;
    int i;
    int slots = (int)(sizeof r->part_stream / sizeof r->part_stream[0]);
    if (!r->part) return NULL;
    for (i = 0; i < r->n_part; i++)
        if (r->part_stream[i] == s) return r->part + (size_t)i * SUMSQ_PARTS;
    if (r->n_part == slots) return NULL;
    r->part_stream[r->n_part] = s;
    return r->part + (size_t)r->n_part++ * SUMSQ_PARTS;
}

static dim3 tiles(int N, int J) { return dim3((unsigned)((J + TM - 1) / TM), (unsigned)((N + TM - 1) / TM)); }

/* ---- the kernels as ops ----------------------------------------------------------- */
/* Each op's tensors as the CPU trainer's kernels take them (train_gpt.c gives
   the shapes); v->stream is the op's cudaStream_t. */
#define STREAM(v) ((cudaStream_t)(v)->stream)
static int bf_of(const gpt_tensor* t) { return t ? t->bf16 : 0; }

static void run_embed(const gpt_op_args* a, const gpt_op_view* v) {
    embed_kernel<<<blocks_for((size_t)v->N * a->C), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (const float*)v->in[0],
                                                                              (const float*)v->in[1], (const int*)v->in[2], v->N, a->T,
                                                                              a->C, a->row0);
}
static void run_layernorm(const gpt_op_args* a, const gpt_op_view* v) {
    if (v->N > 0)
        layernorm_kernel<<<v->N, THREADS, 0, STREAM(v)>>>((float*)v->out[0], (float*)v->out[1], (float*)v->out[2],
                                                           (const float*)v->in[0], (const float*)v->in[1], (const float*)v->in[2], a->C);
}
/* Element i of a tensor of floats (float32) or of bfloat16 (bf). */
static void* elem_at(void* p, size_t i, int bf) { return (char*)p + i * (bf ? sizeof(bf16) : sizeof(float)); }

/* in: x, w, bias or NULL; out: y (bfloat16 for the partial sums with --dtype bf16). An op with a split
   rule (a->chunked) runs the tiled kernel, whole or for a chunk of rows or columns (the same bits for each
   element), or cuBLAS for a chunk of the reduction (x's and w's columns [lo, hi), with beta 1 after the
   first chunk: a partial sum). */
static void run_matmul(const gpt_op_args* a, const gpt_op_view* v) {
    int y_bf = bf_of(a->out[0]), lo = v->lo, nc = v->hi - v->lo, C = a->C, OC = a->OC;
    const float *x = (const float*)v->in[0], *w = (const float*)v->in[1], *bias = (const float*)v->in[2];
    if (v->N <= 0) return;
    if (a->chunked && v->axis == CC_AXIS_COLS) {
        matmul_tiled_kernel<<<tiles(v->N, nc), THREADS, 0, STREAM(v)>>>(elem_at(v->out[0], (size_t)lo, y_bf), y_bf, x,
                                                                       w + (size_t)lo * C, bias ? bias + lo : NULL, v->N, C, nc, 0,
                                                                       g_rank->bf16, C, C, OC);
        return;
    }
    if (a->chunked && v->axis == CC_AXIS_REDUCE) {   /* no bias: the rule declares the reduction only without one */
        gemm_beta(STREAM(v), CUBLAS_OP_T, CUBLAS_OP_N, OC, v->N, nc, w + lo, (size_t)(OC - 1) * C + nc, C, x + lo,
                  (size_t)(v->N - 1) * C + nc, C, v->out[0], y_bf, OC, v->first ? 0.0f : 1.0f);
        return;
    }
    if (a->chunked) {          /* the same bits for a chunk's rows as for the whole op's */
        matmul_tiled_kernel<<<tiles(v->N, OC), THREADS, 0, STREAM(v)>>>(v->out[0], y_bf, x, w, bias, v->N, C, OC, 0, g_rank->bf16, C,
                                                                       C, OC);
        return;
    }
    matmul_fwd(STREAM(v), v->out[0], y_bf, x, w, v->N, C, OC);
    if (bias) add_bias_kernel<<<blocks_for((size_t)v->N * OC), THREADS, 0, STREAM(v)>>>((float*)v->out[0], bias, v->N, OC);
}
/* in: x, w, bias; out: h (x w^T + bias), u (gelu of h). With a split rule: the tiled kernel and GELU on the
   chunk's block (rows, or columns [lo, hi) of h and u from w's rows and bias's elements). */
static void run_matmul_gelu(const gpt_op_args* a, const gpt_op_view* v) {
    if (a->chunked) {
        int lo = v->axis == CC_AXIS_COLS ? v->lo : 0, nc = v->axis == CC_AXIS_COLS ? v->hi - v->lo : a->OC, C = a->C, OC = a->OC;
        float *h = (float*)v->out[0] + lo, *u = (float*)v->out[1] + lo;
        const float *w = (const float*)v->in[1] + (size_t)lo * C, *bias = (const float*)v->in[2] + lo;
        if (v->N <= 0 || nc <= 0) return;
        matmul_tiled_kernel<<<tiles(v->N, nc), THREADS, 0, STREAM(v)>>>(h, 0, (const float*)v->in[0], w, bias, v->N, C, nc, 0,
                                                                       g_rank->bf16, C, C, OC);
        gelu_block_kernel<<<blocks_for((size_t)v->N * nc), THREADS, 0, STREAM(v)>>>(u, h, v->N, nc, OC);
        return;
    }
    matmul_fwd(STREAM(v), v->out[0], 0, (const float*)v->in[0], (const float*)v->in[1], v->N, a->C, a->OC);
    bias_gelu_kernel<<<blocks_for((size_t)v->N * a->OC), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (float*)v->out[1],
                                                                                 (const float*)v->in[2], v->N, a->OC);
}
/* The op's record for the view's sequences (the whole op's, or a chunk's
   of its split rule: v->N / T of them). */
static gpt_op_args seqs_of(const gpt_op_args* a, const gpt_op_view* v) {
    gpt_op_args c = *a;
    c.B = v->N / a->T;
    return c;
}
static void run_attention(const gpt_op_args* a, const gpt_op_view* v) {
    gpt_op_args c = seqs_of(a, v);
    if (c.B <= 0) return;
    if (attention_fits(a)) {
        attention_gemm_fwd(STREAM(v), (float*)v->out[0], (float*)v->out[1], (const float*)v->in[0], &c);
        return;
    }
    size_t rows = (size_t)c.B * a->NH * a->T;
    attention_kernel<<<(unsigned)((rows + 7) / 8), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (float*)v->out[1],
                                                                           (const float*)v->in[0], c.B, a->T, a->NH, a->HS);
}
static void run_residual(const gpt_op_args* a, const gpt_op_view* v) {
    residual_kernel<<<blocks_for((size_t)v->N * a->C), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (const float*)v->in[0], v->in[1],
                                                                                bf_of(a->in[1]), (const float*)v->in[2], v->N, a->C);
}
static void run_crossentropy(const gpt_op_args* a, const gpt_op_view* v) {
    crossentropy_kernel<<<v->N, THREADS, 0, STREAM(v)>>>(g_rank->rowloss, (float*)v->out[1], (const float*)v->in[0],
                                                         (const int*)v->in[1], a->grad_rows ? a->grad_rows : v->N, a->V);
    mean_loss_kernel<<<1, THREADS, 0, STREAM(v)>>>((float*)v->out[0], g_rank->rowloss, v->N);
}
/* in: dy [N][OC], x [N][C]; out: dw [OC][C], dbias [OC] or NULL (gradients: bfloat16 with --dtype bf16) */
/* Overwritten by the first chunk of rows (of a record that does not accumulate), added to by the others
   (cuBLAS with beta 1, the bias gradient's sums going on from what it holds). */
static void run_matmul_bwd_w(const gpt_op_args* a, const gpt_op_view* v) {
    int g_bf = bf_of(a->out[0]), acc = !v->first;
    gemm_beta(STREAM(v), CUBLAS_OP_N, CUBLAS_OP_T, a->C, a->OC, v->N, (const float*)v->in[1], (size_t)v->N * a->C, a->C,
              (const float*)v->in[0], (size_t)v->N * a->OC, a->OC, v->out[0], g_bf, a->C, acc ? 1.0f : 0.0f);
    if (v->out[1] && !g_rank->exact && !a->chunked)
        bias_grad_cols_kernel<<<(unsigned)((a->OC + 31) / 32), 1024, 0, STREAM(v)>>>(v->out[1], bf_of(a->out[1]), (const float*)v->in[0],
                                                                                      v->N, a->OC, acc);
    else if (v->out[1])
        bias_grad_kernel<<<blocks_for((size_t)a->OC), THREADS, 0, STREAM(v)>>>(v->out[1], bf_of(a->out[1]), (const float*)v->in[0], v->N,
                                                                               a->OC, acc);
}
/* in: dy [N][OC], w [OC][C]; out: dx [N][C]. With a split rule as run_matmul: the tiled kernel whole or for
   a chunk of rows or of columns (dx's and w's [lo, hi)), cuBLAS for a chunk of the reduction (dy's columns
   and w's rows [lo, hi)). */
static void run_matmul_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    int dx_bf = bf_of(a->out[0]), lo = v->lo, nc = v->hi - v->lo, C = a->C, OC = a->OC;
    const float *dy = (const float*)v->in[0], *w = (const float*)v->in[1];
    if (v->N <= 0) return;
    if (a->chunked && v->axis == CC_AXIS_COLS) {
        matmul_tiled_kernel<<<tiles(v->N, nc), THREADS, 0, STREAM(v)>>>(elem_at(v->out[0], (size_t)lo, dx_bf), dx_bf, dy, w + lo, NULL,
                                                                       v->N, OC, nc, 1, g_rank->bf16, OC, C, C);
        return;
    }
    if (a->chunked && v->axis == CC_AXIS_REDUCE) {
        gemm_beta(STREAM(v), CUBLAS_OP_N, CUBLAS_OP_N, C, v->N, nc, w + (size_t)lo * C, (size_t)nc * C, C, dy + lo,
                  (size_t)(v->N - 1) * OC + nc, OC, v->out[0], dx_bf, C, v->first ? 0.0f : 1.0f);
        return;
    }
    if (a->chunked) {
        matmul_tiled_kernel<<<tiles(v->N, C), THREADS, 0, STREAM(v)>>>(v->out[0], dx_bf, dy, w, NULL, v->N, OC, C, 1, g_rank->bf16, OC,
                                                                      C, C);
        return;
    }
    matmul_bwd_x(STREAM(v), v->out[0], dx_bf, dy, w, v->N, C, OC);
}
/* in: dy, w, h (GELU's input); out: dh. With a split rule: the tiled kernel and GELU's gradient on the
   chunk's block (rows, or columns [lo, hi) of dh, w and h). */
static void run_matmul_gelu_bwd_x(const gpt_op_args* a, const gpt_op_view* v) {
    if (a->chunked) {
        int lo = v->axis == CC_AXIS_COLS ? v->lo : 0, nc = v->axis == CC_AXIS_COLS ? v->hi - v->lo : a->C, C = a->C, OC = a->OC;
        float* dh = (float*)v->out[0] + lo;
        if (v->N <= 0 || nc <= 0) return;
        matmul_tiled_kernel<<<tiles(v->N, nc), THREADS, 0, STREAM(v)>>>(dh, 0, (const float*)v->in[0], (const float*)v->in[1] + lo, NULL,
                                                                       v->N, OC, nc, 1, g_rank->bf16, OC, C, C);
        gelu_bwd_block_kernel<<<blocks_for((size_t)v->N * nc), THREADS, 0, STREAM(v)>>>(dh, (const float*)v->in[2] + lo, v->N, nc, C);
        return;
    }
    matmul_bwd_x(STREAM(v), v->out[0], 0, (const float*)v->in[0], (const float*)v->in[1], v->N, a->C, a->OC);
    gelu_bwd_kernel<<<blocks_for((size_t)v->N * a->C), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (const float*)v->in[2],
                                                                                (size_t)v->N * a->C);
}
/* in: resid or NULL, dy, x, mean, rstd, w; out: dx, dw, db (chunks after the first add to dw and db) */
static void run_layernorm_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    if (v->N <= 0) return;
    layernorm_bwd_x_kernel<<<v->N, THREADS, 0, STREAM(v)>>>((float*)v->out[0], (const float*)v->in[0], v->in[1], bf_of(a->in[1]),
                                                             (const float*)v->in[2], (const float*)v->in[3], (const float*)v->in[4],
                                                             (const float*)v->in[5], a->C);
    if (!a->chunked && !g_rank->exact) {   /* never cut: the bits need not match a chunk's */
        layernorm_bwd_w_cols_kernel<<<(unsigned)((a->C + 31) / 32), 1024, 0, STREAM(v)>>>(
            v->out[1], v->out[2], bf_of(a->out[1]), v->in[1], bf_of(a->in[1]), (const float*)v->in[2], (const float*)v->in[3],
            (const float*)v->in[4], v->N, a->C, !v->first);
        return;
    }
    layernorm_bwd_w_kernel<<<blocks_for((size_t)a->C), THREADS, 0, STREAM(v)>>>(v->out[1], v->out[2], bf_of(a->out[1]), v->in[1],
                                                                               bf_of(a->in[1]), (const float*)v->in[2],
                                                                               (const float*)v->in[3], (const float*)v->in[4], v->N,
                                                                               a->C, !v->first);
}
static void run_attention_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    gpt_op_args c = seqs_of(a, v);
    if (c.B <= 0) return;
    if (attention_fits(a)) {
        attention_gemm_bwd(STREAM(v), (float*)v->out[0], (const float*)v->in[0], (const float*)v->in[1], (const float*)v->in[2], &c);
        return;
    }
    size_t rows = (size_t)c.B * a->NH * a->T;
    attention_bwd_q_kernel<<<(unsigned)((rows + ATT_WARPS - 1) / ATT_WARPS), 32 * ATT_WARPS, 0, STREAM(v)>>>(
        (float*)v->out[0], g_rank->dots, (const float*)v->in[0], (const float*)v->in[1], (const float*)v->in[2], c.B, a->T, a->NH,
        a->HS);
    attention_bwd_kv_kernel<<<(unsigned)((rows + 7) / 8), THREADS, 0, STREAM(v)>>>((float*)v->out[0], g_rank->dots,
                                                                                  (const float*)v->in[0], (const float*)v->in[1],
                                                                                  (const float*)v->in[2], c.B, a->T, a->NH, a->HS);
}
static void run_embed_bwd(const gpt_op_args* a, const gpt_op_view* v) {
    size_t V = gpt_tensor_elems(a->out[0]) / (size_t)a->C;
    embed_bwd_wte_kernel<<<blocks_for(V * a->C), THREADS, 0, STREAM(v)>>>(v->out[0], bf_of(a->out[0]), (const float*)v->in[0],
                                                                          (const int*)v->in[1], v->N, (int)V, a->C);
    embed_bwd_wpe_kernel<<<blocks_for((size_t)a->T * a->C), THREADS, 0, STREAM(v)>>>(v->out[1], bf_of(a->out[1]),
                                                                                    (const float*)v->in[0], v->N, a->T, a->C, a->row0);
}
static void run_sumsq(const gpt_op_args* a, const gpt_op_view* v) {
    size_t blocks = a->counted ? (a->n + THREADS - 1) / THREADS : 0;
    unsigned nb = (unsigned)(blocks < SUMSQ_PARTS ? blocks : SUMSQ_PARTS);
    double* part;
    if (g_rank->exact) {
        sumsq_kernel<<<1, THREADS, 0, STREAM(v)>>>((double*)v->out[0], v->in[0], bf_of(a->in[0]), a->n, a->counted);
        return;
    }
    if (nb > 0 && (part = part_of(STREAM(v))) != NULL) {
        sumsq_part_kernel<<<nb, THREADS, 0, STREAM(v)>>>(part, v->in[0], bf_of(a->in[0]), a->n);
        sumsq_final_kernel<<<1, THREADS, 0, STREAM(v)>>>((double*)v->out[0], part, nb);
    } else
        sumsq_serial_kernel<<<1, THREADS, 0, STREAM(v)>>>((double*)v->out[0], v->in[0], bf_of(a->in[0]), a->n, nb);
}
static void run_grad_norm(const gpt_op_args* a, const gpt_op_view* v) {
    grad_norm_kernel<<<1, 1, 0, STREAM(v)>>>((double*)v->out[0], (const double*)v->in[0], a->n);
}
static void run_adamw(const gpt_op_args* a, const gpt_op_view* v) {
    adamw_kernel<<<blocks_for(a->n), THREADS, 0, STREAM(v)>>>((float*)v->out[0], (float*)v->out[1], (float*)v->out[2], v->in[0],
                                                              bf_of(a->in[0]), (const double*)v->in[1], (const gpt_adamw_step*)v->in[2],
                                                              a->n, a->weight_decay);
}

/* ---- memory ------------------------------------------------------------------------ */
static void* gpu_alloc_zeroed(size_t n_bytes) {
    void* p = NULL;
    if (!cuda_ok(cudaMalloc(&p, n_bytes), "cudaMalloc")) return NULL;
    if (!cuda_ok(cudaMemset(p, 0, n_bytes), "cudaMemset")) {
        cudaFree(p);
        return NULL;
    }
    return p;
}
static void gpu_free(void* p) { cudaFree(p); }
/* Host to device, complete on return (the device idle after it: a pageable
   copy may return before its DMA ends, and the backend's streams do not
   wait for the legacy stream). */
static int gpu_copy_in(void* dst, const void* src, size_t n) {
    return cuda_ok(cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice), "cudaMemcpy to the device") &&
           cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize after a copy");
}
static int gpu_copy_out(void* dst, const void* src, size_t n) {
    return cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize before a copy") &&
           cuda_ok(cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
}
static const char* gpu_error(void) {
    static thread_local char taken[512];
    if (!g_rank || !g_rank->err[0]) return NULL;
    memcpy(taken, g_rank->err, sizeof taken);
    g_rank->err[0] = 0;
    return taken;
}

/* A chunk of no rows (the library cut an op into more chunks than it has
   rows) launches nothing: a grid of 0 blocks is a launch error. Only chunks
   after the first are skipped, as the first also starts what later chunks
   add to. */
static gpt_kernel_fn cuda_run_kind[GPT_OP_KINDS];
static void run_rows(const gpt_op_args* a, const gpt_op_view* v) {
    if (a->chunked && v->N == 0 && !v->first) return;
    cuda_run_kind[a->kind](a, v);
}

static gpt_kernel_table make_cuda_kernels(void) {
    gpt_kernel_table k;
    int i;
    memset(&k, 0, sizeof k);
    k.run[GPT_OP_EMBED] = run_embed;
    k.run[GPT_OP_LAYERNORM] = run_layernorm;
    k.run[GPT_OP_MATMUL] = run_matmul;
    k.run[GPT_OP_MATMUL_GELU] = run_matmul_gelu;
    k.run[GPT_OP_ATTENTION] = run_attention;
    k.run[GPT_OP_RESIDUAL] = run_residual;
    k.run[GPT_OP_CROSSENTROPY] = run_crossentropy;
    k.run[GPT_OP_MATMUL_BWD_W] = run_matmul_bwd_w;
    k.run[GPT_OP_MATMUL_BWD_X] = run_matmul_bwd_x;
    k.run[GPT_OP_MATMUL_GELU_BWD_X] = run_matmul_gelu_bwd_x;
    k.run[GPT_OP_LAYERNORM_BWD] = run_layernorm_bwd;
    k.run[GPT_OP_ATTENTION_BWD] = run_attention_bwd;
    k.run[GPT_OP_EMBED_BWD] = run_embed_bwd;
    k.run[GPT_OP_SUMSQ] = run_sumsq;
    k.run[GPT_OP_GRAD_NORM] = run_grad_norm;
    k.run[GPT_OP_ADAMW] = run_adamw;
    for (i = 0; i < GPT_OP_KINDS; i++) {
        cuda_run_kind[i] = k.run[i];
        k.run[i] = run_rows;
    }
    k.alloc_zeroed = gpu_alloc_zeroed;
    k.free_memory = gpu_free;
    k.copy_in = gpu_copy_in;
    k.copy_out = gpu_copy_out;
    k.error = gpu_error;
    return k;
}
static const gpt_kernel_table cuda_kernels = make_cuda_kernels();

/* ---- the ranks ---------------------------------------------------------------------- */
/* The rank's cuBLAS handle, workspace and scratch, sized for the model. */
static int gpu_rank_init(gpu_rank* r, const shared* sh) {
    const options* o = &sh->o;
    size_t T = (size_t)sh->cfg.T, C = (size_t)sh->cfg.C, V = (size_t)sh->cfg.V;
    size_t N = (size_t)(o->batch / o->dp) * T, need = N * V;
    size_t ws = r->blas_ws_bytes = 32u << 20;
    if (V * C > need) need = V * C;
    if (N * 4 * C > need) need = N * 4 * C;
    if (4 * C * C > need) need = 4 * C * C;
    r->bf16 = o->dtype == GPT_BF16;
    r->scratch = r->bf16 ? need : 0;
    if (!blas_ok(cublasCreate(&r->blas), "cublasCreate")) return 0;
    if (!cuda_ok(cudaMalloc(&r->blas_ws, ws), "cudaMalloc (cuBLAS workspace)") ||
        !blas_ok(cublasSetWorkspace(r->blas, r->blas_ws, ws), "cublasSetWorkspace") ||
        !blas_ok(cublasSetMathMode(r->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode"))
        return 0;
    if (r->bf16 && (!cuda_ok(cudaMalloc((void**)&r->opa, sizeof(bf16) * need), "cudaMalloc (bfloat16 scratch)") ||
                    !cuda_ok(cudaMalloc((void**)&r->opb, sizeof(bf16) * need), "cudaMalloc (bfloat16 scratch)")))
        return 0;
    if (!cuda_ok(cudaMalloc((void**)&r->rowloss, sizeof(double) * N), "cudaMalloc (row losses)") ||
        !cuda_ok(cudaMalloc((void**)&r->dots, sizeof(float) * N * (size_t)sh->cfg.H), "cudaMalloc (attention scratch)"))
        return 0;
    const char* exact = getenv("TRAIN_GPT_CUDA_EXACT");
    r->exact = exact && exact[0] == '1';
    if (r->exact) return 1;
    /* attention_gemm's buffers, for every head of the model (a rank has at most that many) */
    r->att_act = N * C;
    r->att_tt = N * (size_t)sh->cfg.H * T;
    void** act[4] = { &r->aq, &r->ak, &r->av, &r->ao };
    float** res[3] = { &r->ar0, &r->ar1, &r->ar2 };
    for (int i = 0; i < 4; i++)
        if (!cuda_ok(cudaMalloc(act[i], sizeof(float) * r->att_act), "cudaMalloc (attention heads)")) return 0;
    for (int i = 0; i < 3; i++)
        if (!cuda_ok(cudaMalloc((void**)res[i], sizeof(float) * r->att_act), "cudaMalloc (attention results)")) return 0;
    if (!cuda_ok(cudaMalloc((void**)&r->ss, sizeof(float) * r->att_tt), "cudaMalloc (attention scores' gradient)") ||
        (r->bf16 && !cuda_ok(cudaMalloc((void**)&r->ssb, sizeof(bf16) * r->att_tt), "cudaMalloc (attention scores, bfloat16)")))
        return 0;
    return cuda_ok(cudaMalloc((void**)&r->part, sizeof(double) * SUMSQ_PARTS * (sizeof r->part_stream / sizeof r->part_stream[0])),
                   "cudaMalloc (partial sums)");
}
static void gpu_rank_free(gpu_rank* r) {
    if (r->blas) cublasDestroy(r->blas);
    cudaFree(r->blas_ws);
    cudaFree(r->opa);
    cudaFree(r->opb);
    cudaFree(r->rowloss);
    cudaFree(r->dots);
    cudaFree(r->aq);
    cudaFree(r->ak);
    cudaFree(r->av);
    cudaFree(r->ao);
    cudaFree(r->ar0);
    cudaFree(r->ar1);
    cudaFree(r->ar2);
    cudaFree(r->ss);
    cudaFree(r->ssb);
    cudaFree(r->part);
}

/* Where the ranks meet before NCCL's set-up, which waits for every rank
   with no time limit: a rank that failed before it (or a thread that was
   never started) stops them all there instead. */
typedef struct start_gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n, ready, failed;
} start_gate;

/* 1 when every rank arrived ready; ok: this rank is. */
static int gate_pass(start_gate* g, int ok) {
    int go;
    pthread_mutex_lock(&g->mu);
    g->ready++;
    if (!ok) g->failed = 1;
    pthread_cond_broadcast(&g->cv);
    while (g->ready < g->n && !g->failed) pthread_cond_wait(&g->cv, &g->mu);
    go = !g->failed;
    pthread_mutex_unlock(&g->mu);
    return go;
}
static void gate_fail(start_gate* g) {
    pthread_mutex_lock(&g->mu);
    g->failed = 1;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

typedef struct cuda_rank_arg {
    shared* sh;
    const ncclUniqueId* id;
    start_gate* gate;
    int me, n;
    int status;                    /* 0, or 1 when the rank failed (it said why) */
} cuda_rank_arg;

/* Rank me on device me: its context, NCCL communicator of all ranks, CUDA
   backend and GPU state, then the rank's life (gpt_rank_main). */
static void* cuda_rank(void* p) {
    cuda_rank_arg* ra = (cuda_rank_arg*)p;
    const options* o = &ra->sh->o;
    gpu_rank r;
    cc_context* ctx = NULL;
    cc_comm* world = NULL;
    cc_backend be;
    int have_be = 0;
    cc_result rc = CC_OK;
    memset(&r, 0, sizeof r);
    g_rank = &r;
    if (!cuda_ok(cudaSetDevice(ra->me), "cudaSetDevice") || !gpu_rank_init(&r, ra->sh)) rc = CC_ERR_BACKEND;
    if (rc == CC_OK && (rc = cc_context_create(NULL, &ctx)) != CC_OK) snprintf(r.err, sizeof r.err, "cannot create a context");
    if (!gate_pass(ra->gate, rc == CC_OK) && rc == CC_OK) {
        rc = CC_ERR_BACKEND;       /* another rank failed: it says why */
        ra->status = 2;
    }
    if (rc == CC_OK) {
        cc_nccl_desc nd = {};
        cc_cuda_backend_desc bd = {};
        nd.name = "world";
        nd.timeout_s = 120;
        bd.use_graphs = o->cuda_graphs;
        bd.timeout_s = 120;
        rc = cc_nccl_comm_init_rank(ctx, ra->id, ra->n, ra->me, &nd, &world);
        if (rc == CC_OK && (rc = cc_cuda_backend_create(ctx, &bd, &be)) == CC_OK) have_be = 1;
        if (rc == CC_OK) rc = gpt_rank_main(ra->sh, ctx, world, &be, ra->me);
    }
    if (rc != CC_OK && ra->status != 2) {
        const char* why = r.err[0] ? r.err : ctx && *cc_last_error(ctx) ? cc_last_error(ctx) : cc_result_description(rc);
        fprintf(stderr, "%s: rank %d: %s\n", gpt_program, ra->me, why);
        ra->status = 1;
    }
    if (have_be) cc_backend_destroy(&be);
    cc_comm_destroy(world);
    if (ctx) cc_context_destroy(ctx);
    gpu_rank_free(&r);
    g_rank = NULL;
    return NULL;
}

/* TP x DP ranks, one per GPU, as threads of this process (cuda_rank),
   once the model is known to suit the kernels. 0, or the exit status. */
static int cuda_run_ranks(shared* sh) {
    const options* o = &sh->o;
    int n = o->tp * o->dp, count = 0, i, status = 0, hs = sh->cfg.C / sh->cfg.H;
    cudaError_t e;
    ncclUniqueId id;
    ncclResult_t nr;
    pthread_t* th;
    cuda_rank_arg* args;
    start_gate gate;
    if (hs > 128) {
        fprintf(stderr, "%s: heads of size %d: the attention kernels take at most 128 (use more heads)\n", gpt_program, hs);
        return 2;
    }
    e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess) {
        fprintf(stderr, "%s: no usable CUDA device: %s (%s)\n", gpt_program, cudaGetErrorString(e), cudaGetErrorName(e));
        return 1;
    }
    if (count < n) {
        fprintf(stderr, "%s: TP %d x DP %d needs %d GPUs (a rank per GPU); this machine has %d\n", gpt_program, o->tp, o->dp, n, count);
        return 1;
    }
    if ((nr = ncclGetUniqueId(&id)) != ncclSuccess) {
        fprintf(stderr, "%s: ncclGetUniqueId failed: %s\n", gpt_program, ncclGetErrorString(nr));
        return 1;
    }
    th = (pthread_t*)calloc((size_t)n, sizeof *th);
    args = (cuda_rank_arg*)calloc((size_t)n, sizeof *args);
    if (!th || !args) {
        fprintf(stderr, "%s: out of memory\n", gpt_program);
        free(th);
        free(args);
        return 1;
    }
    pthread_mutex_init(&gate.mu, NULL);
    pthread_cond_init(&gate.cv, NULL);
    gate.n = n;
    gate.ready = gate.failed = 0;
    for (i = 0; i < n; i++) {
        args[i].sh = sh;
        args[i].id = &id;
        args[i].gate = &gate;
        args[i].me = i;
        args[i].n = n;
        if (pthread_create(&th[i], NULL, cuda_rank, &args[i]) != 0) {
            fprintf(stderr, "%s: cannot start the thread of rank %d\n", gpt_program, i);
            args[i].status = -1;
            status = 1;
            gate_fail(&gate);
            break;
        }
    }
    for (i = 0; i < n; i++) {
        if (args[i].status == -1) break;
        pthread_join(th[i], NULL);
        if (args[i].status) status = 1;
    }
    pthread_cond_destroy(&gate.cv);
    pthread_mutex_destroy(&gate.mu);
    free(th);
    free(args);
    return status;
}

/* ---- main ----------------------------------------------------------------------- */
static const gpt_trainer cuda_trainer = { "train_gpt_cuda", &cuda_kernels, 1, 1, 0, 0 };

int main(int argc, char** argv) {
    shared* sh = NULL;
    int status = gpt_parse(argc, argv, &cuda_trainer, &sh);   /* the options */
    if (!sh) return status;
    status = gpt_load(sh);                                     /* the model and its data */
    if (status == 0 && sh->o.graph_fingerprint)
        status = gpt_fingerprint_ranks(sh);                    /* only the ranks' graphs: nothing trains */
    else if (status == 0)
        status = cuda_run_ranks(sh);                           /* a thread per GPU, each running gpt_rank_main */
    status = gpt_report(sh, status);                           /* the report and the files */
    gpt_free(sh);
    return status;
}
