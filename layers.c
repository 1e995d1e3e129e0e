/* layers.c: forward/backward pairs of the transformer's layers (see layers.h). */
#include "layers.h"

#include <math.h>
#include <string.h>

#include "model.h"
#include "rng.h"

#define LAYERNORM_EPS 1e-5

/* ---------------------------------------------------------------- linear */

void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int N, int C, int OC) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * C;
        float *y = out + (long)n * OC;
        for (int o = 0; o < OC; o++) {
            const float *w = weight + (long)o * C;
            float sum = bias ? bias[o] : 0.0f;
            for (int c = 0; c < C; c++) sum += x[c] * w[c];
            y[o] = sum;
        }
    }
}

void linear_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                     const float *inp, const float *weight, int N, int C, int OC) {
    if (dinp) {
        #pragma omp parallel for schedule(static)
        for (int n = 0; n < N; n++) {
            const float *g = dout + (long)n * OC;
            float *dx = dinp + (long)n * C;
            for (int o = 0; o < OC; o++) {
                const float *w = weight + (long)o * C;
                float go = g[o];
                for (int c = 0; c < C; c++) dx[c] += go * w[c];
            }
        }
    }
    #pragma omp parallel for schedule(static)
    for (int o = 0; o < OC; o++) {
        float *dw = dweight + (long)o * C;
        float db = 0.0f;
        for (int n = 0; n < N; n++) {
            float go = dout[(long)n * OC + o];
            const float *x = inp + (long)n * C;
            db += go;
            for (int c = 0; c < C; c++) dw[c] += go * x[c];
        }
        if (dbias) dbias[o] += db;
    }
}

/* ------------------------------------------------- embedding and positions */

void embedding_forward(float *out, const int *tokens, const float *table, float scale,
                       const float *pos, int N, int T, int C) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *e = table + (long)tokens[n] * C;
        const float *p = pos ? pos + (long)(n % T) * C : NULL;
        float *y = out + (long)n * C;
        for (int c = 0; c < C; c++) y[c] = e[c] * scale + (p ? p[c] : 0.0f);
    }
}

void embedding_backward(float *dtable, float *dpos, const float *dout, const int *tokens,
                        float scale, int B, int T, int C, int V) {
    /* Each thread owns a range of token ids and walks all positions in order,
     * so the sum for one row always happens in the same order. */
    #pragma omp parallel for schedule(static)
    for (int v = 0; v < V; v++) {
        float *dt = dtable + (long)v * C;
        for (int n = 0; n < B * T; n++) {
            if (tokens[n] != v) continue;
            const float *g = dout + (long)n * C;
            for (int c = 0; c < C; c++) dt[c] += scale * g[c];
        }
    }
    if (!dpos) return;
    #pragma omp parallel for schedule(static)
    for (int t = 0; t < T; t++) {
        float *dp = dpos + (long)t * C;
        for (int b = 0; b < B; b++) {
            const float *g = dout + ((long)b * T + t) * C;
            for (int c = 0; c < C; c++) dp[c] += g[c];
        }
    }
}

void sinusoidal_table(float *table, int T, int C) {
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++) table[(long)t * C + c] = positional_encoding_value(t, c, C);
}

float positional_encoding_value(int pos, int dim, int d_model) {
    int pair = dim / 2;  /* dims 2i and 2i+1 share the frequency 10000^(-2i/d) */
    double angle = pos * pow(10000.0, -2.0 * pair / d_model);
    return (float)(dim % 2 == 0 ? sin(angle) : cos(angle));
}

/* ------------------------------------------------------------------ dropout */

void dropout_mask(float *mask, long n, float p, uint64_t seed, uint64_t step, uint64_t site) {
    float keep_scale = 1.0f / (1.0f - p);
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++)
        mask[i] = rng_uniform(seed, step, site, (uint64_t)i) < p ? 0.0f : keep_scale;
}

void token_dropout_mask(float *mask, const int *tokens, int N, int C, float p,
                        uint64_t seed, uint64_t step, uint64_t site) {
    float keep_scale = 1.0f / (1.0f - p);
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        float *m = mask + (long)n * C;
        int tok = tokens[n];
        for (int c = 0; c < C; c++) {
            if (tok == TOKEN_PAD) m[c] = 0.0f;
            else if (tok == TOKEN_CLS || tok == TOKEN_SEP || tok == TOKEN_MASK) m[c] = 1.0f;
            else m[c] = rng_uniform(seed, step, site, (uint64_t)n * C + c) < p ? 0.0f : keep_scale;
        }
    }
}

void mul_forward(float *out, const float *inp, const float *mask, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) out[i] = inp[i] * mask[i];
}

void mul_backward(float *dinp, const float *dout, const float *mask, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) dinp[i] += dout[i] * mask[i];
}

/* ---------------------------------------------------------------- layernorm */

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, int N, int C) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * C;
        float *y = out + (long)n * C;
        double sum = 0.0, sq = 0.0;
        for (int c = 0; c < C; c++) sum += x[c];
        double mu = sum / C;
        for (int c = 0; c < C; c++) sq += (x[c] - mu) * (x[c] - mu);
        float rs = (float)(1.0 / sqrt(sq / C + LAYERNORM_EPS));
        float m = (float)mu;
        for (int c = 0; c < C; c++) y[c] = (x[c] - m) * rs * weight[c] + bias[c];
        mean[n] = m;
        rstd[n] = rs;
    }
}

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean,
                        const float *rstd, int N, int C) {
    /* With xhat = (x - mean) * rstd and g = dout * weight:
     * dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). */
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * C;
        const float *dy = dout + (long)n * C;
        float *dx = dinp + (long)n * C;
        float m = mean[n], rs = rstd[n];
        double g_mean = 0.0, gx_mean = 0.0;
        for (int c = 0; c < C; c++) {
            float g = dy[c] * weight[c];
            g_mean += g;
            gx_mean += g * ((x[c] - m) * rs);
        }
        g_mean /= C;
        gx_mean /= C;
        for (int c = 0; c < C; c++) {
            float xhat = (x[c] - m) * rs;
            float g = dy[c] * weight[c];
            dx[c] += rs * (g - (float)g_mean - xhat * (float)gx_mean);
        }
    }
    #pragma omp parallel for schedule(static)
    for (int c = 0; c < C; c++) {
        float dw = 0.0f, db = 0.0f;
        for (int n = 0; n < N; n++) {
            float dy = dout[(long)n * C + c];
            dw += dy * (inp[(long)n * C + c] - mean[n]) * rstd[n];
            db += dy;
        }
        dweight[c] += dw;
        dbias[c] += db;
    }
}

/* ---------------------------------------------------------------- attention */

void attention_forward(float *out, float *probs, float *used, const float *qkv,
                       const float *drop_mask, const int *tokens, int B, int T, int C, int NH) {
    int dh = C / NH;
    float scale = 1.0f / sqrtf((float)dh);
    long C3 = 3L * C;
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            for (int t = 0; t < T; t++) {
                const float *q = qkv + ((long)b * T + t) * C3 + h * dh;
                long row = (((long)b * NH + h) * T + t) * T;
                float *p = probs + row;
                float *u = used + row;
                /* scores over unmasked keys; masked keys get probability exactly 0 */
                float max_score = -INFINITY;
                for (int t2 = 0; t2 < T; t2++) {
                    if (tokens[b * T + t2] == TOKEN_PAD) { p[t2] = -INFINITY; continue; }
                    const float *k = qkv + ((long)b * T + t2) * C3 + C + h * dh;
                    float s = 0.0f;
                    for (int i = 0; i < dh; i++) s += q[i] * k[i];
                    s *= scale;
                    p[t2] = s;
                    if (s > max_score) max_score = s;
                }
                float sum = 0.0f;
                for (int t2 = 0; t2 < T; t2++) {
                    float e = p[t2] == -INFINITY ? 0.0f : expf(p[t2] - max_score);
                    p[t2] = e;
                    sum += e;
                }
                float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
                for (int t2 = 0; t2 < T; t2++) {
                    p[t2] *= inv;
                    u[t2] = drop_mask ? p[t2] * drop_mask[row + t2] : p[t2];
                }
                float *o = out + ((long)b * T + t) * C + h * dh;
                for (int i = 0; i < dh; i++) o[i] = 0.0f;
                for (int t2 = 0; t2 < T; t2++) {
                    if (u[t2] == 0.0f) continue;
                    const float *v = qkv + ((long)b * T + t2) * C3 + 2L * C + h * dh;
                    for (int i = 0; i < dh; i++) o[i] += u[t2] * v[i];
                }
            }
        }
    }
}

void attention_backward(float *dqkv, float *scratch, const float *dout, const float *qkv,
                        const float *probs, const float *used, const float *drop_mask,
                        int B, int T, int C, int NH) {
    int dh = C / NH;
    float scale = 1.0f / sqrtf((float)dh);
    long C3 = 3L * C;
    /* One (batch, head) pair owns its slices of dq, dk and dv. */
    #pragma omp parallel for collapse(2) schedule(static)
    for (int b = 0; b < B; b++) {
        for (int h = 0; h < NH; h++) {
            for (int t = 0; t < T; t++) {
                long row = (((long)b * NH + h) * T + t) * T;
                const float *p = probs + row;
                const float *u = used + row;
                float *dscore = scratch + row;
                const float *g = dout + ((long)b * T + t) * C + h * dh;
                const float *q = qkv + ((long)b * T + t) * C3 + h * dh;
                float *dq = dqkv + ((long)b * T + t) * C3 + h * dh;
                /* d(used) = g . v, d(probs) = d(used) * mask, dv += used * g */
                float dot = 0.0f;
                for (int t2 = 0; t2 < T; t2++) {
                    const float *v = qkv + ((long)b * T + t2) * C3 + 2L * C + h * dh;
                    float *dv = dqkv + ((long)b * T + t2) * C3 + 2L * C + h * dh;
                    float du = 0.0f;
                    for (int i = 0; i < dh; i++) {
                        du += g[i] * v[i];
                        dv[i] += u[t2] * g[i];
                    }
                    float dp = drop_mask ? du * drop_mask[row + t2] : du;
                    dscore[t2] = dp;
                    dot += dp * p[t2];
                }
                /* softmax: ds = p * (dp - sum_j p_j dp_j), then through the scale */
                for (int t2 = 0; t2 < T; t2++) {
                    float ds = p[t2] * (dscore[t2] - dot) * scale;
                    if (ds == 0.0f) continue;
                    const float *k = qkv + ((long)b * T + t2) * C3 + C + h * dh;
                    float *dk = dqkv + ((long)b * T + t2) * C3 + C + h * dh;
                    for (int i = 0; i < dh; i++) {
                        dq[i] += ds * k[i];
                        dk[i] += ds * q[i];
                    }
                }
            }
        }
    }
}

/* -------------------------------------------------------------- activations */

void relu_forward(float *out, const float *inp, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) out[i] = inp[i] > 0.0f ? inp[i] : 0.0f;
}

void relu_backward(float *dinp, const float *dout, const float *inp, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) dinp[i] += inp[i] > 0.0f ? dout[i] : 0.0f;
}

#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794

void gelu_forward(float *out, const float *inp, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double x = inp[i];
        out[i] = (float)(0.5 * x * (1.0 + erf(x * INV_SQRT2)));
    }
}

void gelu_backward(float *dinp, const float *dout, const float *inp, long n) {
    /* d/dx [x * Phi(x)] = Phi(x) + x * phi(x) */
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double x = inp[i];
        double cdf = 0.5 * (1.0 + erf(x * INV_SQRT2));
        double pdf = INV_SQRT_2PI * exp(-0.5 * x * x);
        dinp[i] += (float)(dout[i] * (cdf + x * pdf));
    }
}

/* ------------------------------------------------------------------ pooling */

static int count_tokens(const int *tokens, int T) {
    int count = 0;
    for (int t = 0; t < T; t++) count += tokens[t] != TOKEN_PAD;
    return count;
}

void mean_pool_forward(float *out, const float *inp, const int *tokens, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        float *y = out + (long)b * C;
        int count = count_tokens(tokens + (long)b * T, T);
        for (int c = 0; c < C; c++) y[c] = 0.0f;
        for (int t = 0; t < T; t++) {
            if (tokens[b * T + t] == TOKEN_PAD) continue;
            const float *x = inp + ((long)b * T + t) * C;
            for (int c = 0; c < C; c++) y[c] += x[c];
        }
        float inv = count > 0 ? 1.0f / count : 0.0f;
        for (int c = 0; c < C; c++) y[c] *= inv;
    }
}

void mean_pool_backward(float *dinp, const float *dout, const int *tokens, int B, int T, int C) {
    for (int b = 0; b < B; b++) {
        int count = count_tokens(tokens + (long)b * T, T);
        float inv = count > 0 ? 1.0f / count : 0.0f;
        for (int t = 0; t < T; t++) {
            if (tokens[b * T + t] == TOKEN_PAD) continue;
            float *dx = dinp + ((long)b * T + t) * C;
            for (int c = 0; c < C; c++) dx[c] += dout[(long)b * C + c] * inv;
        }
    }
}

void cls_pool_forward(float *out, const float *inp, int B, int T, int C) {
    for (int b = 0; b < B; b++) memcpy(out + (long)b * C, inp + (long)b * T * C, sizeof(float) * C);
}

void cls_pool_backward(float *dinp, const float *dout, int B, int T, int C) {
    for (int b = 0; b < B; b++)
        for (int c = 0; c < C; c++) dinp[(long)b * T * C + c] += dout[(long)b * C + c];
}

/* ------------------------------------------------------------------- loss */

void softmax_forward(float *probs, const float *logits, int B, int NC) {
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * NC;
        float *p = probs + (long)b * NC;
        float max_z = z[0];
        for (int c = 1; c < NC; c++) if (z[c] > max_z) max_z = z[c];
        double sum = 0.0;
        for (int c = 0; c < NC; c++) sum += exp((double)z[c] - max_z);
        for (int c = 0; c < NC; c++) p[c] = (float)(exp((double)z[c] - max_z) / sum);
    }
}

float crossentropy_forward(const float *logits, const int *labels, const float *weights, int B, int NC) {
    double total = 0.0, weight_sum = 0.0;
    for (int b = 0; b < B; b++) {
        const float *z = logits + (long)b * NC;
        /* nll = logsumexp(z) - z[y], in double so large logits stay finite */
        double max_z = z[0];
        for (int c = 1; c < NC; c++) if (z[c] > max_z) max_z = z[c];
        double sum = 0.0;
        for (int c = 0; c < NC; c++) sum += exp(z[c] - max_z);
        double nll = max_z + log(sum) - z[labels[b]];
        double w = weights ? weights[labels[b]] : 1.0;
        total += w * nll;
        weight_sum += w;
    }
    return weight_sum > 0.0 ? (float)(total / weight_sum) : 0.0f;
}

void crossentropy_backward(float *dlogits, const float *probs, const int *labels,
                           const float *weights, int B, int NC) {
    double weight_sum = 0.0;
    for (int b = 0; b < B; b++) weight_sum += weights ? weights[labels[b]] : 1.0;
    for (int b = 0; b < B; b++) {
        float w = (float)((weights ? weights[labels[b]] : 1.0) / weight_sum);
        for (int c = 0; c < NC; c++) {
            float target = c == labels[b] ? 1.0f : 0.0f;
            dlogits[(long)b * NC + c] = w * (probs[(long)b * NC + c] - target);
        }
    }
}
