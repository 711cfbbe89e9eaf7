/* gpt_kernels.h - the CPU kernels of the example GPT trainer: plain C,
   float32, row-major, single-threaded (each rank's compute stream is one
   thread). Shapes are given in the comments as [rows][cols].

   Every kernel overwrites its outputs unless its name ends in _acc; the
   trainer relies on that to need no zeroing between steps. Reductions run
   in a fixed order, so a kernel gives bit-identical results whenever it
   runs with the same inputs. */
#ifndef GPT_KERNELS_H
#define GPT_KERNELS_H

#include <math.h>
#include <string.h>

/* out[n][o] = sum over i of inp[n][i] w[o][i] (+ bias[o]), for N rows, O
   outputs and I terms, each row ld* elements from the next (a block of a
   larger matrix); with accumulate added to what out holds. Each output is
   one sum in a fixed order, whatever the block. */
static void k_matmul_ld(float* out, int ldo, const float* inp, int ldi, const float* w, int ldw, const float* bias, int N, int I, int O,
                        int accumulate) {
    int n, o, i;
    for (n = 0; n < N; n++) {
        const float* x = inp + (size_t)n * ldi;
        for (o = 0; o < O; o++) {
            const float* wr = w + (size_t)o * ldw;
            float s0 = 0, s1 = 0, s2 = 0, s3 = 0, s;
            for (i = 0; i + 3 < I; i += 4) {
                s0 += x[i] * wr[i];
                s1 += x[i + 1] * wr[i + 1];
                s2 += x[i + 2] * wr[i + 2];
                s3 += x[i + 3] * wr[i + 3];
            }
            for (; i < I; i++) s0 += x[i] * wr[i];
            s = (s0 + s1) + (s2 + s3) + (bias ? bias[o] : 0.0f);
            if (accumulate) out[(size_t)n * ldo + o] += s;
            else out[(size_t)n * ldo + o] = s;
        }
    }
}
/* out[N][O] = inp[N][I] w[O][I]^T (+ bias[O]) */
static void k_matmul(float* out, const float* inp, const float* w, const float* bias, int N, int I, int O) {
    k_matmul_ld(out, O, inp, I, w, I, bias, N, I, O, 0);
}

/* dinp[n][i] = sum over o of dout[n][o] w[o][i] (o in order), rows ld*
   elements apart; with accumulate the sum goes on from what dinp holds. */
static void k_matmul_bwd_input_ld(float* dinp, int ldd, const float* dout, int ldo, const float* w, int ldw, int N, int I, int O,
                                  int accumulate) {
    int n, o, i;
    for (n = 0; n < N; n++) {
        float* dx = dinp + (size_t)n * ldd;
        if (!accumulate) memset(dx, 0, sizeof(float) * (size_t)I);
        for (o = 0; o < O; o++) {
            float g = dout[(size_t)n * ldo + o];
            const float* wr = w + (size_t)o * ldw;
            for (i = 0; i < I; i++) dx[i] += g * wr[i];
        }
    }
}
/* dinp[N][I] = dout[N][O] w[O][I] */
static void k_matmul_bwd_input(float* dinp, const float* dout, const float* w, int N, int I, int O) {
    k_matmul_bwd_input_ld(dinp, I, dout, O, w, I, N, I, O, 0);
}

/* dw[O][I] = dout[N][O]^T inp[N][I]; dbias[O] = sum over n of dout (if
   dbias); overwritten, or with accumulate the sums go on from what dw and
   dbias hold (rows in order either way). */
static void k_matmul_bwd_weight(float* dw, float* dbias, const float* dout, const float* inp, int N, int I, int O, int accumulate) {
    int n, o, i;
    if (!accumulate) memset(dw, 0, sizeof(float) * (size_t)O * (size_t)I);
    for (o = 0; o < O; o++) {
        float* dr = dw + (size_t)o * I;
        for (n = 0; n < N; n++) {
            float g = dout[(size_t)n * O + o];
            const float* x = inp + (size_t)n * I;
            for (i = 0; i < I; i++) dr[i] += g * x[i];
        }
    }
    if (dbias)
        for (o = 0; o < O; o++) {
            float s = accumulate ? dbias[o] : 0.0f;
            for (n = 0; n < N; n++) s += dout[(size_t)n * O + o];
            dbias[o] = s;
        }
}

/* out[N][C] = (inp - mean) * rstd * w + b per row; mean[N], rstd[N] kept for
   the backward pass. Biased variance, eps 1e-5. */
static void k_layernorm(float* out, float* mean, float* rstd, const float* inp, const float* w, const float* b, int N, int C) {
    int n, c;
    for (n = 0; n < N; n++) {
        const float* x = inp + (size_t)n * C;
        float* y = out + (size_t)n * C;
        float m = 0, v = 0, rs;
        for (c = 0; c < C; c++) m += x[c];
        m /= (float)C;
        for (c = 0; c < C; c++) v += (x[c] - m) * (x[c] - m);
        v /= (float)C;
        rs = 1.0f / sqrtf(v + 1e-5f);
        for (c = 0; c < C; c++) y[c] = (x[c] - m) * rs * w[c] + b[c];
        mean[n] = m;
        rstd[n] = rs;
    }
}

/* dinp[N][C] = (resid ? resid : 0) + d layernorm / d inp applied to dout;
   dw[C], db[C] overwritten, or added to with accumulate (the rows of one
   batch in pieces: the sums come out the same, in the same order). */
static void k_layernorm_bwd(float* dinp, float* dw, float* db, const float* resid, const float* dout, const float* inp,
                            const float* mean, const float* rstd, const float* w, int N, int C, int accumulate) {
    int n, c;
    if (!accumulate) {
        memset(dw, 0, sizeof(float) * (size_t)C);
        memset(db, 0, sizeof(float) * (size_t)C);
    }
    for (n = 0; n < N; n++) {
        const float* x = inp + (size_t)n * C;
        const float* g = dout + (size_t)n * C;
        float* dx = dinp + (size_t)n * C;
        float m = mean[n], rs = rstd[n], sum_dn = 0, sum_dn_norm = 0;
        for (c = 0; c < C; c++) {
            float norm = (x[c] - m) * rs, dn = g[c] * w[c];
            sum_dn += dn;
            sum_dn_norm += dn * norm;
            dw[c] += g[c] * norm;
            db[c] += g[c];
        }
        sum_dn /= (float)C;
        sum_dn_norm /= (float)C;
        for (c = 0; c < C; c++) {
            float norm = (x[c] - m) * rs, dn = g[c] * w[c];
            float v = rs * (dn - sum_dn - norm * sum_dn_norm);
            dx[c] = (resid ? resid[(size_t)n * C + c] : 0.0f) + v;
        }
    }
}

/* Causal self-attention of Hh heads of size hs over B sequences of T:
   qkv[B*T][3*Hh*hs] (q, k, v blocks, head h at columns h*hs of each),
   att[B][Hh][T][T] (softmax probabilities, kept), y[B*T][Hh*hs]. */
static void k_attention(float* y, float* att, const float* qkv, int B, int T, int Hh, int hs) {
    int b, h, t, t2, d, W = Hh * hs;
    float scale = 1.0f / sqrtf((float)hs);
    for (b = 0; b < B; b++)
        for (h = 0; h < Hh; h++)
            for (t = 0; t < T; t++) {
                const float* q = qkv + ((size_t)b * T + t) * 3 * W + h * hs;
                float* a = att + (((size_t)b * Hh + h) * T + t) * T;
                float* out = y + ((size_t)b * T + t) * W + h * hs;
                float mx = -INFINITY, sum = 0;
                for (t2 = 0; t2 <= t; t2++) {
                    const float* k = qkv + ((size_t)b * T + t2) * 3 * W + W + h * hs;
                    float s = 0;
                    for (d = 0; d < hs; d++) s += q[d] * k[d];
                    a[t2] = s * scale;
                    if (a[t2] > mx) mx = a[t2];
                }
                for (t2 = 0; t2 <= t; t2++) { a[t2] = expf(a[t2] - mx); sum += a[t2]; }
                for (t2 = 0; t2 <= t; t2++) a[t2] /= sum;
                for (; t2 < T; t2++) a[t2] = 0;
                for (d = 0; d < hs; d++) out[d] = 0;
                for (t2 = 0; t2 <= t; t2++) {
                    const float* v = qkv + ((size_t)b * T + t2) * 3 * W + 2 * W + h * hs;
                    for (d = 0; d < hs; d++) out[d] += a[t2] * v[d];
                }
            }
}

/* dqkv[B*T][3W] (overwritten) from dy[B*T][W], att and qkv as above. */
static void k_attention_bwd(float* dqkv, const float* dy, const float* att, const float* qkv, int B, int T, int Hh, int hs) {
    int b, h, t, t2, d, W = Hh * hs;
    float scale = 1.0f / sqrtf((float)hs);
    float datt[1024];                       /* T <= 1024, checked by the trainer */
    memset(dqkv, 0, sizeof(float) * (size_t)B * T * 3 * W);
    for (b = 0; b < B; b++)
        for (h = 0; h < Hh; h++)
            for (t = 0; t < T; t++) {
                const float* a = att + (((size_t)b * Hh + h) * T + t) * T;
                const float* g = dy + ((size_t)b * T + t) * W + h * hs;
                const float* q = qkv + ((size_t)b * T + t) * 3 * W + h * hs;
                float* dq = dqkv + ((size_t)b * T + t) * 3 * W + h * hs;
                float dot = 0;
                for (t2 = 0; t2 <= t; t2++) {
                    const float* v = qkv + ((size_t)b * T + t2) * 3 * W + 2 * W + h * hs;
                    float* dv = dqkv + ((size_t)b * T + t2) * 3 * W + 2 * W + h * hs;
                    float s = 0;
                    for (d = 0; d < hs; d++) { s += g[d] * v[d]; dv[d] += a[t2] * g[d]; }
                    datt[t2] = s;
                    dot += a[t2] * s;
                }
                for (t2 = 0; t2 <= t; t2++) {
                    const float* k = qkv + ((size_t)b * T + t2) * 3 * W + W + h * hs;
                    float* dk = dqkv + ((size_t)b * T + t2) * 3 * W + W + h * hs;
                    float dpre = a[t2] * (datt[t2] - dot) * scale;
                    for (d = 0; d < hs; d++) { dq[d] += dpre * k[d]; dk[d] += dpre * q[d]; }
                }
            }
}

#define K_GELU_S 0.7978845608028654f   /* sqrt(2 / pi) */

static void k_gelu(float* out, const float* inp, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        float x = inp[i];
        out[i] = 0.5f * x * (1.0f + tanhf(K_GELU_S * (x + 0.044715f * x * x * x)));
    }
}

/* dinp = dout * gelu'(inp), in place allowed (dinp == dout) */
static void k_gelu_bwd(float* dinp, const float* dout, const float* inp, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        float x = inp[i], u = K_GELU_S * (x + 0.044715f * x * x * x), t = tanhf(u);
        float d = 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * K_GELU_S * (1.0f + 3.0f * 0.044715f * x * x);
        dinp[i] = dout[i] * d;
    }
}

/* Mean cross-entropy of logits[N][V] against targets[N]; with dlogits
   (may equal logits), also its gradient (softmax - onehot) / grad_rows
   (the rows the whole loss is a mean over: N, or more where other ranks
   hold the rest). Returns the loss (summed in double). */
static double k_cross_entropy(float* dlogits, const float* logits, const int* targets, int N, int V, int grad_rows) {
    int n, v;
    double loss = 0;
    for (n = 0; n < N; n++) {
        const float* l = logits + (size_t)n * V;
        float mx = l[0], sum = 0;
        for (v = 1; v < V; v++) if (l[v] > mx) mx = l[v];
        for (v = 0; v < V; v++) sum += expf(l[v] - mx);
        /* cppcheck-suppress invalidFunctionArg ; sum >= 1: the largest logit's term is exp(0) */
        loss += (double)(logf(sum) + mx - l[targets[n]]);
        if (dlogits) {
            float* dl = dlogits + (size_t)n * V;
            float inv = 1.0f / sum;
            for (v = 0; v < V; v++) dl[v] = expf(l[v] - mx) * inv / (float)grad_rows;
            dl[targets[n]] -= 1.0f / (float)grad_rows;
        }
    }
    return loss / N;
}

/* One AdamW step on n parameters as torch.optim.AdamW does it: decoupled
   weight decay, bias-corrected moments; the gradient is scaled by gscale
   (gradient clipping). t counts steps from 1. */
static void k_adamw(float* p, float* m, float* v, const float* g, size_t n, float gscale, float lr, float beta1, float beta2,
                    float eps, float wd, int t) {
    size_t i;
    float bc1 = 1.0f - powf(beta1, (float)t), bc2 = 1.0f - powf(beta2, (float)t), sqrt_bc2 = sqrtf(bc2);
    for (i = 0; i < n; i++) {
        float gi = g[i] * gscale;
        m[i] = beta1 * m[i] + (1.0f - beta1) * gi;
        v[i] = beta2 * v[i] + (1.0f - beta2) * gi * gi;
        p[i] *= 1.0f - lr * wd;
        p[i] -= lr / bc1 * m[i] / (sqrtf(v[i]) / sqrt_bc2 + eps);
    }
}

#endif
