/* reference.c: the layers as the math reads (see reference.h). Each
 * formula is one loop nest; each backward walks its forward's formulas in
 * reverse, one nest for each, under the same comment. */
#include "nn/reference.h"

#include <math.h>

#include "base/rng.h"
#include "base/tokens.h"

/* --------------------------------------------- embedding, positions, dropout */

void ref_embedding_forward(float *x, const int *tokens, const float *E, float scale, const float *pe, int B, int T,
                           int d) {
    /* x[b][t] = E[tokens[b][t]] * scale + pe[t] */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d; c++) {
                long n = (long)b * T + t;
                x[n * d + c] = E[(long)tokens[n] * d + c] * scale + (pe ? pe[(long)t * d + c] : 0.0f);
            }
}

void ref_embedding_backward(float *dE, float *dpe, const float *dx, const int *tokens, float scale, int B, int T,
                            int d) {
    /* dE[tokens[b][t]] += dx[b][t] * scale */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d; c++) {
                long n = (long)b * T + t;
                dE[(long)tokens[n] * d + c] += scale * dx[n * d + c];
            }
    /* dpe[t] += dx[b][t] */
    if (dpe)
        for (int t = 0; t < T; t++)
            for (int b = 0; b < B; b++)
                for (int c = 0; c < d; c++) dpe[(long)t * d + c] += dx[((long)b * T + t) * d + c];
}

void ref_positional_encoding(float *pe, int T, int d) {
    /* dimensions 2i and 2i+1 share the angle t * 10000^(-2i/d); in double, stored as float */
    for (int t = 0; t < T; t++)
        for (int c = 0; c < d; c++) {
            int i = c / 2;
            double angle = t * pow(10000.0, -2.0 * i / d);
            pe[(long)t * d + c] = (float)(c % 2 == 0 ? sin(angle) : cos(angle));
        }
}

/* Whether the element at index of key's stream is dropped: its uniform number is below p. */
static int dropped(const DropoutKey *key, uint64_t index) {
    return rng_uniform(key->seed, key->step, key->site, index) < key->p;
}

/* Example b's place in the whole batch: row0 + b, or row0 + rows[b]. */
static uint64_t batch_row(const DropoutKey *key, int b) {
    return key->row0 + (uint64_t)(key->rows ? key->rows[b] : b);
}

void ref_dropout_mask(float *mask, int B, int T, int W, DropoutKey key) {
    /* element c at position t of example b is number (row * positions + t) * W + c of the stream */
    float keep = 1.0f / (1.0f - key.p);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            for (int c = 0; c < W; c++) {
                uint64_t index = (batch_row(&key, b) * (uint64_t)key.positions + (uint64_t)t) * (uint64_t)W + (uint64_t)c;
                mask[((long)b * T + t) * W + c] = dropped(&key, index) ? 0.0f : keep;
            }
}

void ref_token_dropout_mask(float *mask, const int *tokens, int B, int T, int d, DropoutKey key) {
    /* the ordinary mask first, then the special positions overwritten: [CLS] (what cls pooling
     * reads), [SEP] and [MASK] (what masked-LM pretraining predicts) kept whole; [PAD] is no token */
    ref_dropout_mask(mask, B, T, d, key);
    for (int n = 0; n < B * T; n++)
        for (int c = 0; c < d; c++) {
            int tok = tokens[n];
            if (tok == TOKEN_CLS || tok == TOKEN_SEP || tok == TOKEN_MASK) mask[(long)n * d + c] = 1.0f;
            if (tok == TOKEN_PAD) mask[(long)n * d + c] = 0.0f;
        }
}

void ref_attention_dropout_mask(float *mask, int B, int h, int T, DropoutKey key) {
    /* (query t1, key t2) of head hd of example b is number ((row * h + hd) * P + t1) * P + t2, P = positions */
    float keep = 1.0f / (1.0f - key.p);
    uint64_t P = (uint64_t)key.positions;
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++)
                for (int t2 = 0; t2 < T; t2++) {
                    uint64_t index = ((batch_row(&key, b) * (uint64_t)h + (uint64_t)hd) * P + (uint64_t)t1) * P + (uint64_t)t2;
                    mask[(((long)b * h + hd) * T + t1) * T + t2] = dropped(&key, index) ? 0.0f : keep;
                }
}

void ref_dropout_forward(float *y, const float *x, const float *mask, long n) {
    for (long i = 0; i < n; i++) y[i] = x[i] * mask[i];
}

void ref_dropout_backward(float *dx, const float *dy, const float *mask, long n) {
    for (long i = 0; i < n; i++) dx[i] += dy[i] * mask[i];
}

void ref_residual_forward(float *y, const float *a, const float *b, long n) {
    for (long i = 0; i < n; i++) y[i] = a[i] + b[i];
}

void ref_residual_backward(float *da, float *db, const float *dy, long n) {
    for (long i = 0; i < n; i++) {
        da[i] += dy[i];
        db[i] += dy[i];
    }
}

/* ------------------------------------------------------------------ linear */

void ref_linear_forward(float *y, const float *x, const float *W, const float *b, int N, int C, int OC) {
    /* y[n][o] = b[o] + sum_c x[n][c] W[o][c] */
    for (int n = 0; n < N; n++)
        for (int o = 0; o < OC; o++) {
            float sum = b ? b[o] : 0.0f;
            for (int c = 0; c < C; c++) sum += x[(long)n * C + c] * W[(long)o * C + c];
            y[(long)n * OC + o] = sum;
        }
}

void ref_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x, const float *W, int N,
                         int C, int OC) {
    /* dx[n][c] += sum_o dy[n][o] W[o][c] */
    if (dx)
        for (int n = 0; n < N; n++)
            for (int c = 0; c < C; c++)
                for (int o = 0; o < OC; o++) dx[(long)n * C + c] += dy[(long)n * OC + o] * W[(long)o * C + c];
    /* dW[o][c] += sum_n dy[n][o] x[n][c] */
    if (dW)
        for (int o = 0; o < OC; o++)
            for (int c = 0; c < C; c++)
                for (int n = 0; n < N; n++) dW[(long)o * C + c] += dy[(long)n * OC + o] * x[(long)n * C + c];
    /* db[o] += sum_n dy[n][o] */
    if (db)
        for (int o = 0; o < OC; o++)
            for (int n = 0; n < N; n++) db[o] += dy[(long)n * OC + o];
}

/* --------------------------------------------------------------- attention */

/* Index of (b, t, column j) in a (B,T,width) array, and of (b, head hd, t1, t2) in (B,h,T,T). */
#define AT(b, t, j, width) (((long)(b) * T + (t)) * (width) + (j))
#define ATT(b, hd, t1, t2) ((((long)(b) * h + (hd)) * T + (t1)) * T + (t2))

void ref_attention_forward(float *out, float *scores, float *probs, float *used, const float *qkv, const int *tokens,
                           const float *mask, int B, int T, int d, int h) {
    int dh = d / h;
    float scale = 1.0f / sqrtf((float)dh);
    const float *q = qkv, *k = qkv + d, *v = qkv + 2 * d;   /* rows of width 3d */
    /* scores[t1][t2] = q[t1] . k[t2] / sqrt(dh); the padding mask: a [PAD] key scores -inf,
     * so its probability is exactly 0 and no query attends to it */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++)
                for (int t2 = 0; t2 < T; t2++) {
                    float dot = 0.0f;
                    for (int i = 0; i < dh; i++) dot += q[AT(b, t1, hd * dh + i, 3 * d)] * k[AT(b, t2, hd * dh + i, 3 * d)];
                    scores[ATT(b, hd, t1, t2)] = tokens[(long)b * T + t2] == TOKEN_PAD ? -INFINITY : dot * scale;
                }
    /* probs[t1][t2] = e^(scores[t1][t2] - max) / sum_j e^(scores[t1][j] - max), max the row's largest */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++) {
                const float *s = scores + ATT(b, hd, t1, 0);
                float *p = probs + ATT(b, hd, t1, 0);
                float max = -INFINITY, sum = 0.0f;
                for (int t2 = 0; t2 < T; t2++) max = s[t2] > max ? s[t2] : max;
                for (int t2 = 0; t2 < T; t2++) sum += expf(s[t2] - max);
                for (int t2 = 0; t2 < T; t2++) p[t2] = expf(s[t2] - max) / sum;
            }
    /* used = probs * mask: dropout on the probabilities */
    long n = (long)B * h * T * T;
    for (long i = 0; i < n; i++) used[i] = mask ? probs[i] * mask[i] : probs[i];
    /* out[t1] = sum_t2 used[t1][t2] v[t2], the heads side by side */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++)
                for (int i = 0; i < dh; i++) {
                    float sum = 0.0f;
                    for (int t2 = 0; t2 < T; t2++) sum += used[ATT(b, hd, t1, t2)] * v[AT(b, t2, hd * dh + i, 3 * d)];
                    out[AT(b, t1, hd * dh + i, d)] = sum;
                }
}

void ref_attention_backward(float *dqkv, float *dused, float *dscores, const float *dout, const float *qkv,
                            const float *probs, const float *used, const float *mask, int B, int T, int d, int h) {
    int dh = d / h;
    float scale = 1.0f / sqrtf((float)dh);
    const float *q = qkv, *k = qkv + d, *v = qkv + 2 * d;
    float *dq = dqkv, *dk = dqkv + d, *dv = dqkv + 2 * d;
    /* out = used v:  dused[t1][t2] = dout[t1] . v[t2],  dv[t2] += sum_t1 used[t1][t2] dout[t1] */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++)
                for (int t2 = 0; t2 < T; t2++) {
                    float dot = 0.0f;
                    for (int i = 0; i < dh; i++) dot += dout[AT(b, t1, hd * dh + i, d)] * v[AT(b, t2, hd * dh + i, 3 * d)];
                    dused[ATT(b, hd, t1, t2)] = dot;
                }
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t2 = 0; t2 < T; t2++)
                for (int i = 0; i < dh; i++)
                    for (int t1 = 0; t1 < T; t1++)
                        dv[AT(b, t2, hd * dh + i, 3 * d)] += used[ATT(b, hd, t1, t2)] * dout[AT(b, t1, hd * dh + i, d)];
    /* used = probs * mask:  dprobs = dused * mask (kept in dused) */
    long n = (long)B * h * T * T;
    if (mask)
        for (long i = 0; i < n; i++) dused[i] *= mask[i];
    /* probs = softmax(scores):  dscores[t1][t2] = probs[t1][t2] (dprobs[t1][t2] - sum_j probs[t1][j] dprobs[t1][j]);
     * a [PAD] key has probability 0, so its score gets no gradient */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++) {
                const float *p = probs + ATT(b, hd, t1, 0), *dp = dused + ATT(b, hd, t1, 0);
                float dot = 0.0f;
                for (int j = 0; j < T; j++) dot += p[j] * dp[j];
                for (int t2 = 0; t2 < T; t2++) dscores[ATT(b, hd, t1, t2)] = p[t2] * (dp[t2] - dot);
            }
    /* scores = q k^T / sqrt(dh):  dq[t1] += sum_t2 dscores[t1][t2] k[t2] / sqrt(dh),
     *                             dk[t2] += sum_t1 dscores[t1][t2] q[t1] / sqrt(dh) */
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++)
                for (int i = 0; i < dh; i++)
                    for (int t2 = 0; t2 < T; t2++)
                        dq[AT(b, t1, hd * dh + i, 3 * d)] += dscores[ATT(b, hd, t1, t2)] * scale * k[AT(b, t2, hd * dh + i, 3 * d)];
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t2 = 0; t2 < T; t2++)
                for (int i = 0; i < dh; i++)
                    for (int t1 = 0; t1 < T; t1++)
                        dk[AT(b, t2, hd * dh + i, 3 * d)] += dscores[ATT(b, hd, t1, t2)] * scale * q[AT(b, t1, hd * dh + i, 3 * d)];
}

#undef AT
#undef ATT

/* -------------------------------------------------------------- layer norm */

#define REF_LAYERNORM_EPS 1e-5f

void ref_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b, int N,
                           int C) {
    for (int n = 0; n < N; n++) {
        const float *xn = x + (long)n * C;
        /* mean = sum_c x[c] / C */
        float sum = 0.0f;
        for (int c = 0; c < C; c++) sum += xn[c];
        mean[n] = sum / C;
        /* var = sum_c (x[c] - mean)^2 / C (biased); rstd = 1 / sqrt(var + eps) */
        float sq = 0.0f;
        for (int c = 0; c < C; c++) sq += (xn[c] - mean[n]) * (xn[c] - mean[n]);
        rstd[n] = 1.0f / sqrtf(sq / C + REF_LAYERNORM_EPS);
        /* y[c] = (x[c] - mean) * rstd * w[c] + b[c] */
        for (int c = 0; c < C; c++) y[(long)n * C + c] = (xn[c] - mean[n]) * rstd[n] * w[c] + b[c];
    }
}

void ref_layernorm_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                            const float *mean, const float *rstd, int N, int C) {
    /* with xhat = (x - mean) * rstd and g = dy * w:
     * dx = rstd * (g - mean_c(g) - xhat * mean_c(g * xhat)) */
    for (int n = 0; n < N; n++) {
        const float *xn = x + (long)n * C, *dyn = dy + (long)n * C;
        float g_sum = 0.0f, gx_sum = 0.0f;
        for (int c = 0; c < C; c++) {
            float xhat = (xn[c] - mean[n]) * rstd[n];
            g_sum += dyn[c] * w[c];
            gx_sum += dyn[c] * w[c] * xhat;
        }
        float g_mean = g_sum / C, gx_mean = gx_sum / C;
        for (int c = 0; c < C; c++) {
            float xhat = (xn[c] - mean[n]) * rstd[n];
            dx[(long)n * C + c] += rstd[n] * (dyn[c] * w[c] - g_mean - xhat * gx_mean);
        }
    }
    /* dw[c] += sum_n dy[n][c] xhat[n][c];  db[c] += sum_n dy[n][c] */
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++) {
            float xhat = (x[(long)n * C + c] - mean[n]) * rstd[n];
            dw[c] += dy[(long)n * C + c] * xhat;
            db[c] += dy[(long)n * C + c];
        }
}

/* ------------------------------------------------------------- activations */

void ref_relu_forward(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void ref_relu_backward(float *dx, const float *dy, const float *x, long n) {
    for (long i = 0; i < n; i++) dx[i] += x[i] > 0.0f ? dy[i] : 0.0f;
}

/* Phi, the standard normal's distribution function, and phi, its density, in double */
static double normal_cdf(double x) { return 0.5 * (1.0 + erf(x / sqrt(2.0))); }
static double normal_pdf(double x) { return exp(-0.5 * x * x) / sqrt(2.0 * M_PI); }

void ref_gelu_forward(float *y, const float *x, long n) {
    for (long i = 0; i < n; i++) y[i] = (float)(x[i] * normal_cdf(x[i]));
}

void ref_gelu_backward(float *dx, const float *dy, const float *x, long n) {
    for (long i = 0; i < n; i++) dx[i] += (float)(dy[i] * (normal_cdf(x[i]) + x[i] * normal_pdf(x[i])));
}

/* ----------------------------------------------------------------- pooling */

/* Positions of example b that hold a token, not [PAD]. */
static int count_tokens(const int *tokens, int b, int T) {
    int count = 0;
    for (int t = 0; t < T; t++) count += tokens[(long)b * T + t] != TOKEN_PAD;
    return count;
}

void ref_mean_pool_forward(float *y, const float *x, const int *tokens, int B, int T, int d) {
    /* y[b] = sum over non-[PAD] t of x[b][t] / count */
    for (int b = 0; b < B; b++) {
        int count = count_tokens(tokens, b, T);
        for (int c = 0; c < d; c++) {
            float sum = 0.0f;
            for (int t = 0; t < T; t++)
                if (tokens[(long)b * T + t] != TOKEN_PAD) sum += x[((long)b * T + t) * d + c];
            y[(long)b * d + c] = count > 0 ? sum / count : 0.0f;
        }
    }
}

void ref_mean_pool_backward(float *dx, const float *dy, const int *tokens, int B, int T, int d) {
    /* dx[b][t] += dy[b] / count at non-[PAD] t */
    for (int b = 0; b < B; b++) {
        int count = count_tokens(tokens, b, T);
        for (int t = 0; t < T; t++)
            for (int c = 0; c < d; c++)
                if (tokens[(long)b * T + t] != TOKEN_PAD) dx[((long)b * T + t) * d + c] += dy[(long)b * d + c] / count;
    }
}

void ref_cls_pool_forward(float *y, const float *x, int B, int T, int d) {
    for (int b = 0; b < B; b++)
        for (int c = 0; c < d; c++) y[(long)b * d + c] = x[(long)b * T * d + c];
}

void ref_cls_pool_backward(float *dx, const float *dy, int B, int T, int d) {
    for (int b = 0; b < B; b++)
        for (int c = 0; c < d; c++) dx[(long)b * T * d + c] += dy[(long)b * d + c];
}

/* -------------------------------------------------------------------- loss */

void ref_softmax_forward(float *p, const float *z, int B, int C) {
    /* p[c] = e^(z[c] - max) / sum_j e^(z[j] - max), the sum in double */
    for (int b = 0; b < B; b++) {
        const float *zb = z + (long)b * C;
        float max = zb[0];
        for (int c = 1; c < C; c++) max = zb[c] > max ? zb[c] : max;
        double sum = 0.0;
        for (int c = 0; c < C; c++) sum += exp((double)zb[c] - max);
        for (int c = 0; c < C; c++) p[(long)b * C + c] = (float)(exp((double)zb[c] - max) / sum);
    }
}

float ref_crossentropy_forward(const float *z, const int *y, const float *w, int B, int C) {
    /* nll_b = -log p[y_b] = log sum_c e^(z[c] - max) + max - z[y_b], in double so no e^z overflows */
    double total = 0.0, weight_sum = 0.0;
    for (int b = 0; b < B; b++) {
        const float *zb = z + (long)b * C;
        double max = zb[0], sum = 0.0;
        for (int c = 1; c < C; c++) max = zb[c] > max ? zb[c] : max;
        for (int c = 0; c < C; c++) sum += exp(zb[c] - max);
        double nll = log(sum) + max - zb[y[b]];
        double wb = w ? w[y[b]] : 1.0;
        total += wb * nll;
        weight_sum += wb;
    }
    return weight_sum > 0.0 ? (float)(total / weight_sum) : 0.0f;
}

void ref_crossentropy_backward(float *dz, const float *p, const int *y, const float *w, int B, int C) {
    /* d loss / d z[b][c] = w[y_b] / sum_b' w[y_b'] * (p[b][c] - (c == y_b)): softmax and log together give p - y */
    double weight_sum = 0.0;
    for (int b = 0; b < B; b++) weight_sum += w ? w[y[b]] : 1.0;
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) {
            float share = (float)((w ? w[y[b]] : 1.0) / weight_sum);
            float onehot = c == y[b] ? 1.0f : 0.0f;
            dz[(long)b * C + c] = share * (p[(long)b * C + c] - onehot);
        }
}

/* ------------------------------------------------------------------- AdamW */

void ref_adamw_step(float *p, float *m, float *v, const float *g, long n, float lr, float weight_decay, int decay,
                    long t) {
    const float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
    /* 1 - beta in double, as PyTorch forms it from Python floats */
    const float one_minus_beta1 = (float)(1.0 - 0.9), one_minus_beta2 = (float)(1.0 - 0.999);
    double correction1 = 1.0 - pow(0.9, (double)t), correction2 = 1.0 - pow(0.999, (double)t);
    float step_size = (float)(lr / correction1), correction2_sqrt = (float)sqrt(correction2);
    /* p *= 1 - lr * weight_decay: decoupled weight decay, with the scheduled lr */
    if (decay) {
        float shrink = (float)(1.0 - (double)lr * weight_decay);
        for (long i = 0; i < n; i++) p[i] *= shrink;
    }
    /* m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2 */
    for (long i = 0; i < n; i++) m[i] = beta1 * m[i] + one_minus_beta1 * g[i];
    for (long i = 0; i < n; i++) v[i] = beta2 * v[i] + one_minus_beta2 * g[i] * g[i];
    /* p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps) */
    for (long i = 0; i < n; i++) p[i] -= step_size * (m[i] / (sqrtf(v[i]) / correction2_sqrt + eps));
}
