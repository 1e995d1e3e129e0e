/* layers.c: forward/backward pairs of the transformer's layers (see layers.h). */
#include "nn/layers.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/matmul.h"
#include "base/rng.h"

#define LAYERNORM_EPS 1e-5

/* ---------------------------------------------------------------- linear */

void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int N, int C, int OC, Precision prec) {
    /* out = inp (N x C) times weight^T (C x OC), each row started from the bias */
    MatView x = {inp, C, 1}, w_t = {weight, 1, C};
    matmul(out, OC, x, w_t, bias, bias ? MM_BIAS : MM_ZERO, N, OC, C, prec);
}

void linear_forward_fused(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                          int OC, float *relu, const float *add, float *sum, const DropoutKey *drop, int T,
                          Precision prec) {
    MatView x = {inp, C, 1}, w_t = {weight, 1, C};
    /* relu or sum given as out itself: out keeps that instead of the product */
    int in_place = (relu && relu == out) || (sum && sum == out);
    int dropping = drop && drop->p > 0.0f && (relu || sum);
    MatEpilogue ep = {.relu = relu, .add = sum ? add : NULL, .sum = sum, .in_place = in_place,
                      .drop = dropping ? drop : NULL, .drop_T = T};
    matmul_epilogue(out, OC, x, w_t, bias, bias ? MM_BIAS : MM_ZERO, N, OC, C, relu || sum ? &ep : NULL, prec);
}

/* dinp_init: MM_ZERO writes dinp, MM_START writes start + the product;
 * ep (NULL: none): dinp's epilogue. */
static void linear_backward_init(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                 const float *weight, int N, int C, int OC, MatInit dinp_init, const float *start,
                                 const MatEpilogue *ep, Precision prec) {
    MatView g = {dout, OC, 1}, g_t = {dout, 1, OC};
    MatView w = {weight, C, 1}, x = {inp, C, 1};
    /* dinp (N x C) = (start +) dout (N x OC) times weight (OC x C) */
    if (dinp) matmul_epilogue(dinp, C, g, w, start, dinp_init, N, C, OC, ep, prec);
    /* dweight (OC x C) = dout^T (OC x N) times inp (N x C), and dbias[o] =
     * the sum over n of dout[n][o] (the rows of dout^T), n in increasing order */
    matmul_row_sums(dweight, C, g_t, x, OC, C, N, dbias, prec);
}

void linear_backward_to(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, int N, int C, int OC, Precision prec) {
    linear_backward_init(dinp, dweight, dbias, dout, inp, weight, N, C, OC, MM_ZERO, NULL, NULL, prec);
}

void linear_backward_from(float *dinp, const float *start, float *dweight, float *dbias, const float *dout,
                          const float *inp, const float *weight, int N, int C, int OC, Precision prec) {
    linear_backward_init(dinp, dweight, dbias, dout, inp, weight, N, C, OC, MM_START, start, NULL, prec);
}

void linear_backward_relu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                          const float *weight, int N, int C, int OC, DropoutKey key, Precision prec) {
    MatEpilogue ep = {.in_place = 1, .gate = inp, .gate_scale = dropout_keep_scale(&key)};
    linear_backward_init(dinp, dweight, dbias, dout, inp, weight, N, C, OC, MM_ZERO, NULL, &ep, prec);
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
    /* Each thread owns a range of columns of the whole table and walks all
     * positions in order, so the sum for one element always happens in the
     * same order, and the work is N*C whatever the vocabulary size. */
    enum { COLUMNS = 32 };
    int N = B * T, chunks = (C + COLUMNS - 1) / COLUMNS;
    (void)V;
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < chunks; ch++) {
        int c0 = ch * COLUMNS, c1 = c0 + COLUMNS < C ? c0 + COLUMNS : C;
        for (int n = 0; n < N; n++) {
            float *dt = dtable + (long)tokens[n] * C;
            const float *g = dout + (long)n * C;
            for (int c = c0; c < c1; c++) dt[c] += scale * g[c];
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

/* out = (add +) inp * each element's factor over (B,T,W): dropout_apply
 * (add NULL) and dropout_add share the draw; the choice is made per row,
 * outside the element loop. */
static void dropout_rows(float *out, const float *add, const float *inp, int B, int T, int W, DropoutKey key) {
    float keep_scale = dropout_keep_scale(&key);
    DropoutTest test = dropout_test(&key);
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < B * T; n++) {
        uint64_t first = dropout_index(&key, n / T, n % T, W, 0);
        const float *x = inp + (long)n * W;
        float *y = out + (long)n * W;
        if (!add) {
            for (int c = 0; c < W; c++) y[c] = x[c] * dropout_factor(&test, keep_scale, first + (uint64_t)c);
            continue;
        }
        const float *r = add + (long)n * W;
        for (int c = 0; c < W; c++) {
            float dropped = x[c] * dropout_factor(&test, keep_scale, first + (uint64_t)c);
            y[c] = r[c] + dropped;
        }
    }
}

void dropout_apply(float *out, const float *inp, int B, int T, int W, DropoutKey key) {
    dropout_rows(out, NULL, inp, B, T, W, key);
}

void dropout_add(float *out, const float *add, const float *inp, int B, int T, int W, DropoutKey key) {
    dropout_rows(out, add, inp, B, T, W, key);
}

/* The mask of token_dropout_mask and, when out is not NULL, out = inp * mask
 * in the same pass. */
static void token_dropout_rows(float *mask, float *out, const float *inp, const int *tokens, int B, int T, int C,
                               DropoutKey key) {
    float keep_scale = dropout_keep_scale(&key);
    DropoutTest test = dropout_test(&key);
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < B * T; n++) {
        float *m = mask + (long)n * C;
        int tok = tokens[n];
        uint64_t first = dropout_index(&key, n / T, n % T, C, 0);
        for (int c = 0; c < C; c++) {
            if (tok == TOKEN_PAD) m[c] = 0.0f;
            else if (tok == TOKEN_CLS || tok == TOKEN_SEP || tok == TOKEN_MASK) m[c] = 1.0f;
            else m[c] = dropout_drops(&test, first + (uint64_t)c) ? 0.0f : keep_scale;
        }
        if (out)
            for (int c = 0; c < C; c++) out[(long)n * C + c] = inp[(long)n * C + c] * m[c];
    }
}

void token_dropout_mask(float *mask, const int *tokens, int B, int T, int C, DropoutKey key) {
    token_dropout_rows(mask, NULL, NULL, tokens, B, T, C, key);
}

void token_dropout_forward(float *out, float *mask, const float *inp, const int *tokens, int B, int T, int C,
                           DropoutKey key) {
    token_dropout_rows(mask, out, inp, tokens, B, T, C, key);
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

/* Row sums in double over SUM_LANES interleaved partial sums (element c goes
 * to lane c % SUM_LANES), combined pairwise in a fixed order: the loop
 * vectorizes, and the order depends on nothing but the row length. */
enum { SUM_LANES = 8 };

static double combine_lanes(const double *part) {
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

static double row_sum(const float *x, int C) {
    double part[SUM_LANES] = {0};
    int c = 0;
    for (; c + SUM_LANES <= C; c += SUM_LANES)
        for (int l = 0; l < SUM_LANES; l++) part[l] += x[c + l];
    for (int l = 0; c < C; c++, l++) part[l] += x[c];
    return combine_lanes(part);
}

static double row_centered_squares(const float *x, double mu, int C) {
    double part[SUM_LANES] = {0};
    int c = 0;
    for (; c + SUM_LANES <= C; c += SUM_LANES)
        for (int l = 0; l < SUM_LANES; l++) part[l] += (x[c + l] - mu) * (x[c + l] - mu);
    for (int l = 0; c < C; c++, l++) part[l] += (x[c] - mu) * (x[c] - mu);
    return combine_lanes(part);
}

/* Per row of the backward: sums of g = dy * weight and of g * xhat, lane by
 * lane as row_sum. */
static void row_grad_sums(const float *dy, const float *x, const float *weight, float m, float rs, int C,
                          double *g_sum, double *gx_sum) {
    double g_part[SUM_LANES] = {0}, gx_part[SUM_LANES] = {0};
    int c = 0;
    for (; c + SUM_LANES <= C; c += SUM_LANES) {
        for (int l = 0; l < SUM_LANES; l++) {
            float g = dy[c + l] * weight[c + l];
            g_part[l] += g;
            gx_part[l] += g * ((x[c + l] - m) * rs);
        }
    }
    for (int l = 0; c < C; c++, l++) {
        float g = dy[c] * weight[c];
        g_part[l] += g;
        gx_part[l] += g * ((x[c] - m) * rs);
    }
    *g_sum = combine_lanes(g_part);
    *gx_sum = combine_lanes(gx_part);
}

void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, int N, int C) {
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * C;
        float *y = out + (long)n * C;
        double mu = row_sum(x, C) / C;
        double sq = row_centered_squares(x, mu, C);
        float rs = (float)(1.0 / sqrt(sq / C + LAYERNORM_EPS));
        float m = (float)mu;
        for (int c = 0; c < C; c++) y[c] = (x[c] - m) * rs * weight[c] + bias[c];
        mean[n] = m;
        rstd[n] = rs;
    }
}

/* accumulate 1: dinp += the input gradient; 0: dinp = 0 + it. */
/* dropped (not NULL): dropout_apply of dinp by drop over rows of T positions, in the same pass. */
static void layernorm_backward_init(float *dinp, float *dweight, float *dbias, const float *dout,
                                    const float *inp, const float *weight, const float *mean,
                                    const float *rstd, int N, int C, int accumulate, float *dropped,
                                    const DropoutKey *drop, int T) {
    DropoutTest test = {0, 0};
    float keep = 1.0f;
    if (dropped) test = dropout_test(drop), keep = dropout_keep_scale(drop);
    /* With xhat = (x - mean) * rstd and g = dout * weight:
     * dx = rstd * (g - mean(g) - xhat * mean(g * xhat)). */
    #pragma omp parallel for schedule(static)
    for (int n = 0; n < N; n++) {
        const float *x = inp + (long)n * C;
        const float *dy = dout + (long)n * C;
        float *dx = dinp + (long)n * C;
        float m = mean[n], rs = rstd[n];
        double g_sum, gx_sum;
        row_grad_sums(dy, x, weight, m, rs, C, &g_sum, &gx_sum);
        float g_mean = (float)(g_sum / C);
        float gx_mean = (float)(gx_sum / C);
        for (int c = 0; c < C; c++) {
            float xhat = (x[c] - m) * rs;
            float g = dy[c] * weight[c];
            float start = accumulate ? dx[c] : 0.0f;
            dx[c] = start + rs * (g - g_mean - xhat * gx_mean);
        }
        if (dropped) {   /* dropout_rows' draw of this row */
            uint64_t first = dropout_index(drop, n / T, n % T, C, 0);
            float *dd = dropped + (long)n * C;
            for (int c = 0; c < C; c++) dd[c] = dx[c] * dropout_factor(&test, keep, first + (uint64_t)c);
        }
    }
    /* weight and bias: threads own column ranges, rows summed in order */
    enum { COLUMNS = 32 };
    int chunks = (C + COLUMNS - 1) / COLUMNS;
    #pragma omp parallel for schedule(static)
    for (int ch = 0; ch < chunks; ch++) {
        int c0 = ch * COLUMNS, width = C - c0 < COLUMNS ? C - c0 : COLUMNS;
        float dw[COLUMNS] = {0}, db[COLUMNS] = {0};
        for (int n = 0; n < N; n++) {
            const float *dy = dout + (long)n * C + c0;
            const float *x = inp + (long)n * C + c0;
            float m = mean[n], rs = rstd[n];
            for (int c = 0; c < width; c++) {
                dw[c] += dy[c] * (x[c] - m) * rs;
                db[c] += dy[c];
            }
        }
        for (int c = 0; c < width; c++) {
            dweight[c0 + c] += dw[c];
            dbias[c0 + c] += db[c];
        }
    }
}

void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean,
                        const float *rstd, int N, int C) {
    layernorm_backward_init(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, 1, NULL, NULL, 0);
}

void layernorm_backward_to(float *dinp, float *dweight, float *dbias, const float *dout,
                           const float *inp, const float *weight, const float *mean,
                           const float *rstd, int N, int C) {
    layernorm_backward_init(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, 0, NULL, NULL, 0);
}

void layernorm_backward_to_dropout(float *dinp, float *dropped, float *dweight, float *dbias, const float *dout,
                                   const float *inp, const float *weight, const float *mean, const float *rstd,
                                   int N, int C, DropoutKey drop, int T) {
    layernorm_backward_init(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C, 0, dropped, &drop, T);
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

void gelu_backward_inplace(float *d, const float *inp, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        double x = inp[i];
        double cdf = 0.5 * (1.0 + erf(x * INV_SQRT2));
        double pdf = INV_SQRT_2PI * exp(-0.5 * x * x);
        d[i] = (float)(d[i] * (cdf + x * pdf));
    }
}

/* ------------------------------------------------------------------ pooling */

static int count_tokens(const int *tokens, int T) {
    int count = 0;
    for (int t = 0; t < T; t++) count += tokens[t] != TOKEN_PAD;
    return count;
}

void mean_pool_forward(float *out, const float *inp, const int *tokens, int B, int T, int C) {
    #pragma omp parallel for schedule(static) if ((long)B * T * C > 65536)
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
    #pragma omp parallel for schedule(static) if ((long)B * T * C > 65536)
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

double crossentropy_example(const float *z, int label, int NC) {
    /* nll = logsumexp(z) - z[y], in double so large logits stay finite */
    double max_z = z[0];
    for (int c = 1; c < NC; c++) if (z[c] > max_z) max_z = z[c];
    double sum = 0.0;
    for (int c = 0; c < NC; c++) sum += exp(z[c] - max_z);
    return max_z + log(sum) - z[label];
}

float crossentropy_forward(const float *logits, const int *labels, const float *weights, int B, int NC) {
    double total = 0.0, weight_sum = 0.0;
    for (int b = 0; b < B; b++) {
        double nll = crossentropy_example(logits + (long)b * NC, labels[b], NC);
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
