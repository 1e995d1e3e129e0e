/* test_reference.c: every fast layer (nn/layers.h, nn/attention.h, the
 * AdamW step of model/optimizer.c) against its plain reference
 * (nn/reference.h), forward and backward, on random shapes with padding.
 *
 * How close is close enough:
 * - bit for bit where both do the same operations in the same order:
 *   positional encoding, embedding, dropout masks and their products, the
 *   residual sum, relu, gelu, cls pooling, softmax, cross-entropy, AdamW;
 *   and the linear layer on a target without fused multiply-add (the
 *   sanitizer build), where both are one chain over the shared index.
 * - the linear layer with fma: elementwise |fast - ref| <= 2 gamma_K S, where
 *   S is the sum of the absolute values of the K terms (and of the bias or
 *   start) and gamma_K = K u / (1 - K u), u = 2^-24: the classical bound on
 *   a sum of K products in float in any order, once for each side.
 * - layer norm (the fast one sums in double), mean pooling (a reciprocal
 *   times the sum instead of a division) and attention (blocked products,
 *   e^x within an ulp, a reciprocal of the row's sum): max |fast - ref| <=
 *   1e-5 * max |ref| over each tensor, about 84 float ulps of its largest
 *   element. The sums here are at most a few hundred terms, which round to
 *   a few ulps; a wrong sign, index or mask moves elements by a sizeable
 *   fraction of the largest (the planted-sign check in the report). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "base/rng.h"
#include "base/tokens.h"
#include "model.h"
#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/reference.h"

#define REL_TOL 1e-5

static uint64_t draws;   /* the test's own counter for random data */

static float uniform(float lo, float hi) { return lo + (hi - lo) * rng_uniform(7, 0, 1, draws++); }

static float *randoms(long n, float lo, float hi) {
    float *x = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (long i = 0; i < n; i++) x[i] = uniform(lo, hi);
    return x;
}

static float *copy_of(const float *x, long n) {
    float *y = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    memcpy(y, x, sizeof(float) * (size_t)n);
    return y;
}

static float *zeros(long n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(float)); }

static float *absolute(const float *x, long n) {
    float *y = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    for (long i = 0; i < n; i++) y[i] = fabsf(x[i]);
    return y;
}

/* One shape: B rows of T positions, width d, h heads, FFN width f. */
typedef struct { int B, T, d, h, f; } Shape;

/* Row b: [CLS] tokens [SEP] then [PAD]; row 0 full, row 1 (when B > 1) only
 * [CLS] [SEP] (the heaviest padding), others of random length; a [MASK] here and there. */
static int *make_tokens(const Shape *s, int V) {
    int *tok = malloc(sizeof(int) * (size_t)s->B * s->T);
    for (int b = 0; b < s->B; b++) {
        int len = b == 0 ? s->T : b == 1 ? (s->T < 2 ? s->T : 2) : 1 + (int)(uniform(0, 1) * s->T);
        if (len < 1) len = 1;
        for (int t = 0; t < s->T; t++) {
            int id = 5 + (int)(uniform(0, 1) * (V - 5));
            if (id >= V) id = V - 1;
            if (uniform(0, 1) < 0.1f) id = TOKEN_MASK;
            tok[(long)b * s->T + t] = t == 0 ? TOKEN_CLS : t == len - 1 ? TOKEN_SEP : t < len ? id : TOKEN_PAD;
        }
    }
    return tok;
}

/* ------------------------------------------------------------ comparisons */

static void same_bits(const char *what, const Shape *s, const float *fast, const float *ref, long n) {
    long first = -1;
    for (long i = 0; i < n && first < 0; i++)
        if (memcmp(&fast[i], &ref[i], sizeof(float)) != 0) first = i;
    CHECK(first < 0, "%s (B %d T %d d %d h %d): element %ld differs: fast %.9g, reference %.9g", what, s->B, s->T,
          s->d, s->h, first, first < 0 ? 0.0 : fast[first], first < 0 ? 0.0 : ref[first]);
}

static double worst_rel[16];   /* the largest error / tolerance seen per kind, for the report */
enum { W_LINEAR, W_LAYERNORM, W_MEANPOOL, W_ATTENTION, W_KINDS };
static const char *const KIND_NAMES[W_KINDS] = {"linear (of 2 gamma_K S)", "layer norm", "mean pooling", "attention"};

static void close_rel(int kind, const char *what, const Shape *s, const float *fast, const float *ref, long n) {
    double err = 0.0, scale = 0.0;
    for (long i = 0; i < n; i++) {
        err = fmax(err, fabs((double)fast[i] - ref[i]));
        scale = fmax(scale, fabs((double)ref[i]));
    }
    double ratio = scale > 0.0 ? err / (REL_TOL * scale) : err > 0.0 ? INFINITY : 0.0;
    worst_rel[kind] = fmax(worst_rel[kind], ratio);
    CHECK(ratio <= 1.0, "%s (B %d T %d d %d h %d): max |fast - ref| %.3g is over %g of max |ref| %.3g", what, s->B,
          s->T, s->d, s->h, err, REL_TOL, scale);
}

/* |fast - ref| <= 2 gamma_K * S elementwise, S (n) the sums of absolute values */
static void close_gamma(const char *what, const Shape *s, const float *fast, const float *ref, const float *S, long K,
                        long n) {
    double u = ldexp(1.0, -24), gamma = K * u / (1.0 - K * u);
    long worst = 0;
    double worst_ratio = 0.0;
    for (long i = 0; i < n; i++) {
        double bound = 2.0 * gamma * S[i] * (1.0 + 1e-6) + 1e-37;   /* S itself summed in float */
        double ratio = fabs((double)fast[i] - ref[i]) / bound;
        if (ratio > worst_ratio) worst_ratio = ratio, worst = i;
    }
    worst_rel[W_LINEAR] = fmax(worst_rel[W_LINEAR], worst_ratio);
    CHECK(worst_ratio <= 1.0, "%s (B %d T %d d %d h %d): element %ld: fast %.9g, reference %.9g, beyond 2 gamma_%ld S",
          what, s->B, s->T, s->d, s->h, worst, fast[worst], ref[worst], K);
#if !defined(__FMA__) && !defined(__ARM_FEATURE_FMA)
    same_bits(what, s, fast, ref, n);   /* without fma both are the same chain of products and sums */
#endif
}

/* -------------------------------------------------------------- the layers */

static DropoutKey key_for(float p, uint64_t site, const Shape *s, const int *rows) {
    DropoutKey key = {p, 42, 7, site, 3, s->T + 2, rows};   /* positions > T, row0 3: as a padded slice of a batch */
    return key;
}

static void test_embedding_and_dropout(const Shape *s) {
    int B = s->B, T = s->T, d = s->d, V = 23;
    long n = (long)B * T * d;
    int *tok = make_tokens(s, V);
    float *E = randoms((long)V * d, -1, 1), *learned = randoms((long)T * d, -0.1f, 0.1f);
    float *pe_fast = zeros((long)T * d), *pe_ref = zeros((long)T * d);
    sinusoidal_table(pe_fast, T, d);
    ref_positional_encoding(pe_ref, T, d);
    same_bits("positional encoding", s, pe_fast, pe_ref, (long)T * d);
    const float *pes[3] = {pe_ref, learned, NULL};
    float *x_fast = zeros(n), *x_ref = zeros(n);
    for (int k = 0; k < 3; k++) {
        embedding_forward(x_fast, tok, E, 2.5f, pes[k], B * T, T, d);
        ref_embedding_forward(x_ref, tok, E, 2.5f, pes[k], B, T, d);
        same_bits("embedding forward", s, x_fast, x_ref, n);
    }
    float *dx = randoms(n, -1, 1), *dE0 = randoms((long)V * d, -1, 1), *dpe0 = randoms((long)T * d, -1, 1);
    float *dE_fast = copy_of(dE0, (long)V * d), *dE_ref = copy_of(dE0, (long)V * d);
    float *dpe_fast = copy_of(dpe0, (long)T * d), *dpe_ref = copy_of(dpe0, (long)T * d);
    embedding_backward(dE_fast, dpe_fast, dx, tok, 2.5f, B, T, d, V);
    ref_embedding_backward(dE_ref, dpe_ref, dx, tok, 2.5f, B, T, d);
    same_bits("embedding backward (table)", s, dE_fast, dE_ref, (long)V * d);
    same_bits("embedding backward (learned positions)", s, dpe_fast, dpe_ref, (long)T * d);

    /* the masks: contiguous rows and an MPI rank's scattered rows, a light and a heavy p */
    int *rows = malloc(sizeof(int) * (size_t)B);
    for (int b = 0; b < B; b++) rows[b] = 2 * b + 1;
    float *m_fast = zeros(n), *m_ref = zeros(n), *y_fast = zeros(n), *y_ref = zeros(n), *add = randoms(n, -1, 1);
    for (int k = 0; k < 4; k++) {
        DropoutKey key = key_for(k % 2 ? 0.5f : 0.1f, 1 + (uint64_t)k, s, k >= 2 ? rows : NULL);
        token_dropout_mask(m_fast, tok, B, T, d, key);
        ref_token_dropout_mask(m_ref, tok, B, T, d, key);
        same_bits("embedding dropout mask", s, m_fast, m_ref, n);
        for (long i = 0; i < n; i++) {   /* what the mask must be, from its definition */
            int t = tok[i / d];
            int special = t == TOKEN_CLS || t == TOKEN_SEP || t == TOKEN_MASK;
            if (special && m_ref[i] != 1.0f) { CHECK(0, "a [CLS]/[SEP]/[MASK] element has factor %g", m_ref[i]); break; }
            if (t == TOKEN_PAD && m_ref[i] != 0.0f) { CHECK(0, "a [PAD] element has factor %g", m_ref[i]); break; }
            if (!special && t != TOKEN_PAD && m_ref[i] != 0.0f && m_ref[i] != 1.0f / (1.0f - key.p)) {
                CHECK(0, "a token element has factor %g", m_ref[i]);
                break;
            }
        }
        mul_forward(y_fast, x_ref, m_fast, n);
        ref_dropout_forward(y_ref, x_ref, m_ref, n);
        same_bits("masked dropout forward", s, y_fast, y_ref, n);
        /* the mask and the product in one pass */
        memset(m_fast, 0, sizeof(float) * (size_t)n);
        memset(y_fast, 0, sizeof(float) * (size_t)n);
        token_dropout_forward(y_fast, m_fast, x_ref, tok, B, T, d, key);
        same_bits("embedding dropout mask (with the product)", s, m_fast, m_ref, n);
        same_bits("masked dropout forward (with the mask)", s, y_fast, y_ref, n);
        float *g_fast = copy_of(add, n), *g_ref = copy_of(add, n);
        mul_backward(g_fast, dx, m_fast, n);
        ref_dropout_backward(g_ref, dx, m_ref, n);
        same_bits("masked dropout backward", s, g_fast, g_ref, n);
        /* the plain dropout of a sub-layer's output, alone and before the residual sum */
        dropout_apply(y_fast, x_ref, B, T, d, key);
        ref_dropout_mask(m_ref, B, T, d, key);
        ref_dropout_forward(y_ref, x_ref, m_ref, n);
        same_bits("dropout", s, y_fast, y_ref, n);
        dropout_add(y_fast, add, x_ref, B, T, d, key);
        ref_residual_forward(y_ref, add, y_ref, n);
        same_bits("dropout and residual sum", s, y_fast, y_ref, n);
        free(g_fast);
        free(g_ref);
    }
    free(tok); free(E); free(learned); free(pe_fast); free(pe_ref); free(x_fast); free(x_ref); free(dx);
    free(dE0); free(dpe0); free(dE_fast); free(dE_ref); free(dpe_fast); free(dpe_ref); free(rows);
    free(m_fast); free(m_ref); free(y_fast); free(y_ref); free(add);
}

static void test_linear(const Shape *s) {
    int N = s->B * s->T, C = s->d, OC = s->f;
    long nx = (long)N * C, ny = (long)N * OC, nw = (long)OC * C;
    float *x = randoms(nx, -1, 1), *W = randoms(nw, -0.5f, 0.5f), *b = randoms(OC, -0.5f, 0.5f);
    float *ax = absolute(x, nx), *aW = absolute(W, nw), *ab = absolute(b, OC);
    float *y_fast = zeros(ny), *y_ref = zeros(ny), *S = zeros(ny);
    for (int bias = 0; bias < 2; bias++) {
        linear_forward(y_fast, x, W, bias ? b : NULL, N, C, OC, PRECISION_FP32);
        ref_linear_forward(y_ref, x, W, bias ? b : NULL, N, C, OC);
        ref_linear_forward(S, ax, aW, bias ? ab : NULL, N, C, OC);   /* the same sums of absolute values */
        close_gamma("linear forward", s, y_fast, y_ref, S, C + 1, ny);
    }
    /* fused: relu of the product, and the residual sum with the product */
    float *relu = zeros(ny), *relu_ref = zeros(ny), *add = randoms(ny, -1, 1), *sum = zeros(ny), *sum_ref = zeros(ny);
    linear_forward_fused(y_fast, x, W, b, N, C, OC, relu, NULL, NULL, NULL, s->T, PRECISION_FP32);
    ref_relu_forward(relu_ref, y_fast, ny);
    same_bits("linear + relu (relu of its own product)", s, relu, relu_ref, ny);
    linear_forward_fused(y_fast, x, W, b, N, C, OC, NULL, add, sum, NULL, s->T, PRECISION_FP32);
    ref_residual_forward(sum_ref, add, y_fast, ny);
    same_bits("linear + residual sum (of its own product)", s, sum, sum_ref, ny);
    /* and through a dropout, whose mask the reference draws by its own code
     * (a key with rows not from 0, positions past T), also in place */
    DropoutKey key = {0.3f, 7, 11, 13, 5, s->T + 3, NULL};
    float *mask = zeros(ny), *dropped = zeros(ny);
    ref_dropout_mask(mask, s->B, s->T, OC, key);
    for (int in_place = 0; in_place < 2; in_place++) {
        linear_forward_fused(y_fast, x, W, b, N, C, OC, NULL, NULL, NULL, NULL, s->T, PRECISION_FP32);
        linear_forward_fused(in_place ? relu : y_fast, x, W, b, N, C, OC, relu, NULL, NULL, &key, s->T, PRECISION_FP32);
        ref_relu_forward(relu_ref, y_fast, ny);
        ref_dropout_forward(relu_ref, relu_ref, mask, ny);
        same_bits(in_place ? "linear + relu + dropout, in place" : "linear + relu + dropout", s, relu, relu_ref, ny);
        linear_forward_fused(in_place ? sum : y_fast, x, W, b, N, C, OC, NULL, add, sum, &key, s->T, PRECISION_FP32);
        ref_dropout_forward(dropped, y_fast, mask, ny);
        ref_residual_forward(sum_ref, add, dropped, ny);
        same_bits(in_place ? "linear + dropout + residual sum, in place" : "linear + dropout + residual sum", s, sum,
                  sum_ref, ny);
    }
    free(mask);
    free(dropped);

    float *dy = randoms(ny, -1, 1), *ady = absolute(dy, ny), *start = randoms(nx, -1, 1), *astart = absolute(start, nx);
    float *dx_fast = randoms(nx, 5, 6), *dW_fast = randoms(nw, 5, 6), *db_fast = randoms(OC, 5, 6);   /* overwritten */
    float *dx_ref = zeros(nx), *dW_ref = zeros(nw), *db_ref = zeros(OC);
    float *Sx = zeros(nx), *SW = zeros(nw), *Sb = zeros(OC);
    linear_backward_to(dx_fast, dW_fast, db_fast, dy, x, W, N, C, OC, PRECISION_FP32);
    ref_linear_backward(dx_ref, dW_ref, db_ref, dy, x, W, N, C, OC);
    ref_linear_backward(Sx, SW, Sb, ady, ax, aW, N, C, OC);
    close_gamma("linear backward dx", s, dx_fast, dx_ref, Sx, OC, nx);
    close_gamma("linear backward dW", s, dW_fast, dW_ref, SW, N, nw);
    close_gamma("linear backward db", s, db_fast, db_ref, Sb, N, OC);
    /* from a start: dx = start + dy W */
    memcpy(dx_ref, start, sizeof(float) * (size_t)nx);
    memset(dW_ref, 0, sizeof(float) * (size_t)nw);
    memset(db_ref, 0, sizeof(float) * (size_t)OC);
    memcpy(Sx, astart, sizeof(float) * (size_t)nx);
    linear_backward_from(dx_fast, start, dW_fast, db_fast, dy, x, W, N, C, OC, PRECISION_FP32);
    ref_linear_backward(dx_ref, dW_ref, db_ref, dy, x, W, N, C, OC);
    ref_linear_backward(Sx, NULL, NULL, ady, ax, aW, N, C, OC);
    close_gamma("linear backward dx from a start", s, dx_fast, dx_ref, Sx, OC + 1, nx);
    close_gamma("linear backward dW (from)", s, dW_fast, dW_ref, SW, N, nw);
    free(x); free(W); free(b); free(ax); free(aW); free(ab); free(y_fast); free(y_ref); free(S);
    free(relu); free(relu_ref); free(add); free(sum); free(sum_ref); free(dy); free(ady); free(start); free(astart);
    free(dx_fast); free(dW_fast); free(db_fast); free(dx_ref); free(dW_ref); free(db_ref); free(Sx); free(SW); free(Sb);
}

static void test_attention(const Shape *s) {
    int B = s->B, T = s->T, d = s->d, h = s->h;
    long nq = (long)B * T * 3 * d, no = (long)B * T * d, na = (long)B * h * T * T;
    int *tok = make_tokens(s, 30);
    float *qkv = randoms(nq, -2, 2), *dout = randoms(no, -1, 1);
    int threads = 2;
    float *work = aligned_alloc(64, ((size_t)attention_work_floats(T, d, h, threads) * sizeof(float) + 63) / 64 * 64);
    float *stats = zeros((long)B * h * T * 2), *out_fast = zeros(no), *out_ref = zeros(no);
    float *scores = zeros(na), *probs = zeros(na), *used = zeros(na), *mask = zeros(na), *probs_fast = zeros(na);
    float *dused = zeros(na), *dscores = zeros(na), *dqkv_fast = randoms(nq, 5, 6), *dqkv_ref = zeros(nq);
    /* the probabilities, for views: before dropout */
    attention_probs(probs_fast, qkv, tok, B, T, d, h, work, threads, PRECISION_FP32);
    ref_attention_forward(out_ref, scores, probs, used, qkv, tok, NULL, B, T, d, h);
    close_rel(W_ATTENTION, "attention probabilities", s, probs_fast, probs, na);
    /* what the padding mask means, from its definition: no key at [PAD] has weight, each row sums to 1 */
    long pad_weights = 0, bad_rows = 0;
    for (int b = 0; b < B; b++)
        for (int hd = 0; hd < h; hd++)
            for (int t1 = 0; t1 < T; t1++) {
                double sum = 0.0;
                for (int t2 = 0; t2 < T; t2++) {
                    float p = probs[(((long)b * h + hd) * T + t1) * T + t2];
                    sum += p;
                    pad_weights += tok[(long)b * T + t2] == TOKEN_PAD && p != 0.0f;
                }
                bad_rows += fabs(sum - 1.0) > 1e-5;
            }
    CHECK(pad_weights == 0, "%ld [PAD] keys have a probability (B %d T %d)", pad_weights, B, T);
    CHECK(bad_rows == 0, "%ld rows of probabilities do not sum to 1 (B %d T %d)", bad_rows, B, T);
    int *rows = malloc(sizeof(int) * (size_t)B);
    for (int b = 0; b < B; b++) rows[b] = B - 1 - b;
    for (int k = 0; k < 3; k++) {
        DropoutKey key = key_for(k == 0 ? 0.0f : 0.2f, 9, s, k == 2 ? rows : NULL);
        if (key.p > 0.0f) ref_attention_dropout_mask(mask, B, h, T, key);
        attention_forward(out_fast, stats, qkv, tok, B, T, d, h, key, work, threads, PRECISION_FP32);
        ref_attention_forward(out_ref, scores, probs, used, qkv, tok, key.p > 0.0f ? mask : NULL, B, T, d, h);
        close_rel(W_ATTENTION, "attention forward", s, out_fast, out_ref, no);
        attention_backward(dqkv_fast, dout, qkv, stats, tok, B, T, d, h, key, work, threads, PRECISION_FP32);
        memset(dqkv_ref, 0, sizeof(float) * (size_t)nq);
        ref_attention_backward(dqkv_ref, dused, dscores, dout, qkv, probs, used, key.p > 0.0f ? mask : NULL, B, T, d, h);
        close_rel(W_ATTENTION, "attention backward", s, dqkv_fast, dqkv_ref, nq);
    }
    free(tok); free(qkv); free(dout); free(work); free(stats); free(out_fast); free(out_ref); free(scores);
    free(probs); free(used); free(mask); free(probs_fast); free(dused); free(dscores); free(dqkv_fast); free(dqkv_ref);
    free(rows);
}

static void test_layernorm(const Shape *s) {
    int N = s->B * s->T, C = s->d;
    long n = (long)N * C;
    float *x = randoms(n, -3, 1), *w = randoms(C, 0.5f, 1.5f), *b = randoms(C, -0.5f, 0.5f), *dy = randoms(n, -1, 1);
    for (long i = 0; i < n; i += 7) x[i] *= 10.0f;   /* uneven rows */
    float *y_fast = zeros(n), *y_ref = zeros(n), *mean_f = zeros(N), *mean_r = zeros(N), *rstd_f = zeros(N),
          *rstd_r = zeros(N);
    layernorm_forward(y_fast, mean_f, rstd_f, x, w, b, N, C);
    ref_layernorm_forward(y_ref, mean_r, rstd_r, x, w, b, N, C);
    close_rel(W_LAYERNORM, "layer norm forward", s, y_fast, y_ref, n);
    close_rel(W_LAYERNORM, "layer norm mean", s, mean_f, mean_r, N);
    close_rel(W_LAYERNORM, "layer norm rstd", s, rstd_f, rstd_r, N);
    float *start = randoms(n, -1, 1), *dw0 = randoms(C, -1, 1), *db0 = randoms(C, -1, 1);
    for (int accumulate = 0; accumulate < 2; accumulate++) {
        float *dx_f = accumulate ? copy_of(start, n) : randoms(n, 5, 6), *dx_r = accumulate ? copy_of(start, n) : zeros(n);
        float *dw_f = copy_of(dw0, C), *dw_r = copy_of(dw0, C), *db_f = copy_of(db0, C), *db_r = copy_of(db0, C);
        (accumulate ? layernorm_backward : layernorm_backward_to)(dx_f, dw_f, db_f, dy, x, w, mean_f, rstd_f, N, C);
        ref_layernorm_backward(dx_r, dw_r, db_r, dy, x, w, mean_r, rstd_r, N, C);
        close_rel(W_LAYERNORM, accumulate ? "layer norm backward dx (added)" : "layer norm backward dx", s, dx_f, dx_r, n);
        close_rel(W_LAYERNORM, "layer norm backward dw", s, dw_f, dw_r, C);
        close_rel(W_LAYERNORM, "layer norm backward db", s, db_f, db_r, C);
        free(dx_f); free(dx_r); free(dw_f); free(dw_r); free(db_f); free(db_r);
    }
    /* the input gradient and, in the same pass, that through a dropout: the
     * same bits as layernorm_backward_to, then the reference's mask applied */
    if (s->T > 0 && N % s->T == 0) {
        for (int k = 0; k < 2; k++) {
            DropoutKey key = key_for(k ? 0.5f : 0.1f, 7 + (uint64_t)k, s, NULL);
            float *dx_a = zeros(n), *dx_b = randoms(n, 5, 6), *dd = randoms(n, 5, 6), *mask = zeros(n), *want = zeros(n);
            float *dw_a = copy_of(dw0, C), *dw_b = copy_of(dw0, C), *db_a = copy_of(db0, C), *db_b = copy_of(db0, C);
            layernorm_backward_to(dx_a, dw_a, db_a, dy, x, w, mean_f, rstd_f, N, C);
            layernorm_backward_to_dropout(dx_b, dd, dw_b, db_b, dy, x, w, mean_f, rstd_f, N, C, key, s->T);
            same_bits("layer norm backward dx (with its dropout)", s, dx_b, dx_a, n);
            same_bits("layer norm backward dw (with its dropout)", s, dw_b, dw_a, C);
            same_bits("layer norm backward db (with its dropout)", s, db_b, db_a, C);
            ref_dropout_mask(mask, N / s->T, s->T, C, key);
            ref_dropout_forward(want, dx_a, mask, n);
            same_bits("layer norm backward through a dropout", s, dd, want, n);
            free(dx_a); free(dx_b); free(dd); free(mask); free(want); free(dw_a); free(dw_b); free(db_a); free(db_b);
        }
    }
    free(x); free(w); free(b); free(dy); free(y_fast); free(y_ref); free(mean_f); free(mean_r); free(rstd_f);
    free(rstd_r); free(start); free(dw0); free(db0);
}

static void test_activations(const Shape *s) {
    long n = (long)s->B * s->T * s->f;
    float *x = randoms(n, -4, 4), *dy = randoms(n, -1, 1), *start = randoms(n, -1, 1);
    float *y_f = zeros(n), *y_r = zeros(n), *dx_f = copy_of(start, n), *dx_r = copy_of(start, n);
    relu_forward(y_f, x, n);
    ref_relu_forward(y_r, x, n);
    same_bits("relu forward", s, y_f, y_r, n);
    relu_backward(dx_f, dy, x, n);
    ref_relu_backward(dx_r, dy, x, n);
    same_bits("relu backward", s, dx_f, dx_r, n);
    gelu_forward(y_f, x, n);
    ref_gelu_forward(y_r, x, n);
    same_bits("gelu forward", s, y_f, y_r, n);
    memcpy(dx_f, start, sizeof(float) * (size_t)n);
    memcpy(dx_r, start, sizeof(float) * (size_t)n);
    gelu_backward(dx_f, dy, x, n);
    ref_gelu_backward(dx_r, dy, x, n);
    same_bits("gelu backward", s, dx_f, dx_r, n);
    memcpy(dx_f, dy, sizeof(float) * (size_t)n);
    memset(dx_r, 0, sizeof(float) * (size_t)n);
    gelu_backward_inplace(dx_f, x, n);
    ref_gelu_backward(dx_r, dy, x, n);
    same_bits("gelu backward in place", s, dx_f, dx_r, n);
    /* the linear layer after relu and dropout, back from its input alone
     * (linear_backward_relu): the product dout W2, then dropout's backward
     * with the reference's mask, then relu's at x; with and without dropout */
    int OC = s->d;
    float *W2 = randoms((long)OC * s->f, -1, 1), *dout = randoms((long)s->B * s->T * OC, -1, 1);
    float *mask = zeros(n), *out = zeros(n), *d_prod = zeros(n), *d_hidden = zeros(n);
    float *dW_f = zeros((long)OC * s->f), *db_f = zeros(OC), *dW_r = zeros((long)OC * s->f), *db_r = zeros(OC);
    for (int dropping = 0; dropping < 2; dropping++) {
        DropoutKey key = key_for(dropping ? 0.3f : 0.0f, 5, s, NULL);
        for (long i = 0; i < n; i++) mask[i] = 1.0f;
        if (dropping) ref_dropout_mask(mask, s->B, s->T, s->f, key);
        ref_relu_forward(y_r, x, n);
        ref_dropout_forward(out, y_r, mask, n);
        int N = s->B * s->T;
        linear_backward_relu(dx_f, dW_f, db_f, dout, out, W2, N, s->f, OC, key, PRECISION_FP32);
        linear_backward_to(d_prod, dW_r, db_r, dout, out, W2, N, s->f, OC, PRECISION_FP32);
        memset(d_hidden, 0, sizeof(float) * (size_t)n);
        ref_dropout_backward(d_hidden, d_prod, mask, n);
        memset(dx_r, 0, sizeof(float) * (size_t)n);
        ref_relu_backward(dx_r, d_hidden, x, n);
        same_bits(dropping ? "linear backward through relu and dropout" : "linear backward through relu", s, dx_f,
                  dx_r, n);
        same_bits("linear backward through relu: dW", s, dW_f, dW_r, (long)OC * s->f);
        same_bits("linear backward through relu: db", s, db_f, db_r, OC);
    }
    free(x); free(dy); free(start); free(y_f); free(y_r); free(dx_f); free(dx_r); free(mask); free(out); free(d_hidden);
    free(W2); free(dout); free(d_prod); free(dW_f); free(db_f); free(dW_r); free(db_r);
}

static void test_pooling_and_loss(const Shape *s) {
    int B = s->B, T = s->T, d = s->d, NC = s->h + 1;
    long n = (long)B * T * d;
    int *tok = make_tokens(s, 30);
    float *x = randoms(n, -1, 1), *dy = randoms((long)B * d, -1, 1), *start = randoms(n, -1, 1);
    float *y_f = zeros((long)B * d), *y_r = zeros((long)B * d), *dx_f = copy_of(start, n), *dx_r = copy_of(start, n);
    mean_pool_forward(y_f, x, tok, B, T, d);
    ref_mean_pool_forward(y_r, x, tok, B, T, d);
    close_rel(W_MEANPOOL, "mean pooling forward", s, y_f, y_r, (long)B * d);
    mean_pool_backward(dx_f, dy, tok, B, T, d);
    ref_mean_pool_backward(dx_r, dy, tok, B, T, d);
    close_rel(W_MEANPOOL, "mean pooling backward", s, dx_f, dx_r, n);
    cls_pool_forward(y_f, x, B, T, d);
    ref_cls_pool_forward(y_r, x, B, T, d);
    same_bits("cls pooling forward", s, y_f, y_r, (long)B * d);
    memcpy(dx_f, start, sizeof(float) * (size_t)n);
    memcpy(dx_r, start, sizeof(float) * (size_t)n);
    cls_pool_backward(dx_f, dy, B, T, d);
    ref_cls_pool_backward(dx_r, dy, B, T, d);
    same_bits("cls pooling backward", s, dx_f, dx_r, n);

    float *z = randoms((long)B * NC, -6, 6), *w = randoms(NC, 0.2f, 3.0f);
    float *p_f = zeros((long)B * NC), *p_r = zeros((long)B * NC), *dz_f = zeros((long)B * NC), *dz_r = zeros((long)B * NC);
    int *y = malloc(sizeof(int) * (size_t)B);
    for (int b = 0; b < B; b++) y[b] = (b * 7 + 3) % NC;
    softmax_forward(p_f, z, B, NC);
    ref_softmax_forward(p_r, z, B, NC);
    same_bits("softmax", s, p_f, p_r, (long)B * NC);
    for (int weighted = 0; weighted < 2; weighted++) {
        const float *wt = weighted ? w : NULL;
        float l_f = crossentropy_forward(z, y, wt, B, NC), l_r = ref_crossentropy_forward(z, y, wt, B, NC);
        same_bits("cross-entropy", s, &l_f, &l_r, 1);
        crossentropy_backward(dz_f, p_r, y, wt, B, NC);
        ref_crossentropy_backward(dz_r, p_r, y, wt, B, NC);
        same_bits("cross-entropy backward", s, dz_f, dz_r, (long)B * NC);
    }
    free(tok); free(x); free(dy); free(start); free(y_f); free(y_r); free(dx_f); free(dx_r); free(z); free(w);
    free(p_f); free(p_r); free(dz_f); free(dz_r); free(y);
}

/* The model's AdamW step (with a clip) against the reference step on each tensor. */
static void test_adamw(void) {
    ModelConfig cfg = model_config_default();
    cfg.vocab_size = 30, cfg.max_len = 8, cfg.d_model = 16, cfg.n_heads = 2, cfg.d_ff = 24, cfg.n_layers = 1;
    cfg.n_classes = 3, cfg.emb_scale = 4.0f;
    char err[256];
    Model *m = model_create(&cfg, 2, err, sizeof err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m) return;
    model_init(m, 5);
    long P = (long)m->n_params;
    float *p = copy_of(m->params, P), *mo = zeros(P), *v = zeros(P), *g = zeros(P);
    Shape all = {0, 0, 0, 0, 0};
    for (long t = 1; t <= 3; t++) {
        for (long i = 0; i < P; i++) m->grads[i] = uniform(-2, 2);
        double norm = model_clip_grads(m, t == 2 ? 0.5 : 0.0);   /* step 2 clipped */
        float scale = t == 2 ? (float)(0.5 / (norm + 1e-6)) : 1.0f;
        for (long i = 0; i < P; i++) g[i] = m->grads[i] * scale;
        float lr = 1e-3f * (float)t, wd = 0.01f;
        model_adamw_step(m, lr, wd);
        for (int k = 0; k < m->n_tensors; k++) {
            const ParamTensor *tt = &m->tensors[k];
            ref_adamw_step(p + tt->offset, mo + tt->offset, v + tt->offset, g + tt->offset, (long)tt->size, lr, wd,
                           tt->decay, t);
        }
        same_bits("AdamW parameters", &all, m->params, p, P);
        same_bits("AdamW first moments", &all, m->adam_m, mo, P);
        same_bits("AdamW second moments", &all, m->adam_v, v, P);
    }
    free(p); free(mo); free(v); free(g);
    model_free(m);
}

int main(void) {
    Shape shapes[16] = {
        {1, 1, 8, 1, 8},      /* one position: only [CLS] */
        {2, 5, 8, 2, 16},     /* row 1 is [CLS] [SEP] and three [PAD] */
        {3, 9, 12, 3, 20},    /* dh 4 */
        {4, 17, 32, 4, 48},   /* rows of 17, 2 and random lengths */
        {5, 33, 24, 3, 40},
        {2, 150, 8, 2, 8},    /* T over the fast attention's block of query rows */
    };
    int n = 6, quick = getenv("CHECK_QUICK") != NULL;
    if (quick) n = 5;   /* the sanitizer build: the long sequence is slow there */
    for (int r = 0; r < 4; r++) {   /* and random ones */
        int h = 1 + (int)(uniform(0, 1) * 4), dh = 2 * (1 + (int)(uniform(0, 1) * 6));
        Shape s = {1 + (int)(uniform(0, 1) * 6), 2 + (int)(uniform(0, 1) * 40), h * dh, h,
                   4 + (int)(uniform(0, 1) * 60)};
        shapes[n++] = s;
    }
    for (int i = 0; i < n; i++) {
        const Shape *s = &shapes[i];
        test_embedding_and_dropout(s);
        test_linear(s);
        test_attention(s);
        test_layernorm(s);
        test_activations(s);
        test_pooling_and_loss(s);
    }
    test_adamw();
    for (int k = 0; k < W_KINDS; k++)
        printf("REPORT reference: %s, worst error over %d shapes = %.3f of its tolerance\n", KIND_NAMES[k], n,
               worst_rel[k]);
    return check_summary("test_reference");
}
