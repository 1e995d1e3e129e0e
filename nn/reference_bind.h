/* reference_bind.h: build/train-ref only (model.c compiled with
 * -DTRAIN_REFERENCE): the fast layers' names bound to the reference layers
 * of reference.h. Each fast call of model.c becomes a static function here
 * with the fast signature that does what the fast layer promises (write or
 * add, fused or in place) with reference layers alone, so a debugger steps
 * from model.c straight into reference.c. Nothing is kept between calls:
 * dropout masks are drawn again from their keys, the attention's
 * probabilities made again by its reference forward, each in buffers
 * allocated for the call. */
#ifndef REFERENCE_BIND_H
#define REFERENCE_BIND_H

#include <stdlib.h>
#include <string.h>

#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/reference.h"

/* A zeroed buffer of n floats for one call. This debugging build stops
 * where memory runs out (abort: a debugger shows the call). */
static inline float *bind_alloc(long n) {
    float *x = calloc((size_t)(n > 0 ? n : 1), sizeof(float));
    if (!x) abort();
    return x;
}

static inline void bind_zero(float *x, long n) {
    if (x) memset(x, 0, sizeof(float) * (size_t)n);
}

/* ------------------------------------------------------------------ linear */

static inline void bind_linear_forward(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                                int OC, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    ref_linear_forward(out, inp, weight, bias, N, C, OC);
}

/* the product y, then relu = max(y, 0) or the residual sum = add + y, each
 * through the dropout when drop has p > 0 (N = B*T rows); out keeps y
 * unless it is relu or sum itself */
static inline void bind_linear_forward_fused(float *out, const float *inp, const float *weight, const float *bias, int N,
                                      int C, int OC, float *relu, const float *add, float *sum, const DropoutKey *drop,
                                      int T, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    long n = (long)N * OC;
    float *y = bind_alloc(n), *mask = NULL;
    ref_linear_forward(y, inp, weight, bias, N, C, OC);
    memcpy(out, y, sizeof(float) * (size_t)n);
    if (drop && drop->p > 0.0f) {
        mask = bind_alloc(n);
        ref_dropout_mask(mask, N / T, T, OC, *drop);
    }
    if (relu) {
        ref_relu_forward(relu, y, n);
        if (mask) ref_dropout_forward(relu, relu, mask, n);
    }
    if (sum) {
        if (mask) ref_dropout_forward(y, y, mask, n);
        ref_residual_forward(sum, add, y, n);
    }
    free(mask);
    free(y);
}

/* writes the gradients: zero, then the reference adds */
static inline void bind_linear_backward_to(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, int N, int C, int OC, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    bind_zero(dinp, (long)N * C);
    bind_zero(dweight, (long)OC * C);
    bind_zero(dbias, OC);
    ref_linear_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

/* dinp = start + the input gradient */
static inline void bind_linear_backward_from(float *dinp, const float *start, float *dweight, float *dbias,
                                      const float *dout, const float *inp, const float *weight, int N, int C,
                                      int OC, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    if (dinp != start) memcpy(dinp, start, sizeof(float) * (size_t)N * (size_t)C);
    bind_zero(dweight, (long)OC * C);
    bind_zero(dbias, OC);
    ref_linear_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

/* The layer's backward, then dinp back through the relu and dropout that
 * made inp = relu(x) * mask: model.c keeps neither x nor the mask with
 * relu. Where inp > 0, x > 0 and the element was kept (factor 1/(1-p));
 * elsewhere relu'(x) * mask is 0. So relu's backward at inp, after
 * dropout's backward with that factor, is the gradient. */
static inline void bind_linear_backward_relu(float *dinp, float *dweight, float *dbias, const float *dout,
                                             const float *inp, const float *weight, int N, int C, int OC,
                                             DropoutKey key, Precision prec) {
    long n = (long)N * C;
    float *dy = bind_alloc(n), *keep = bind_alloc(n), *d_hidden = bind_alloc(n);
    bind_linear_backward_to(dy, dweight, dbias, dout, inp, weight, N, C, OC, prec);
    for (long i = 0; i < n; i++) keep[i] = 1.0f / (1.0f - key.p);
    ref_dropout_backward(d_hidden, dy, keep, n);
    bind_zero(dinp, n);
    ref_relu_backward(dinp, d_hidden, inp, n);
    free(dy);
    free(keep);
    free(d_hidden);
}

/* ------------------------------------------------- embedding, positions, dropout */

static inline void bind_embedding_forward(float *out, const int *tokens, const float *table, float scale, const float *pos,
                                   int N, int T, int C) {
    ref_embedding_forward(out, tokens, table, scale, pos, N / T, T, C);
}

static inline void bind_embedding_backward(float *dtable, float *dpos, const float *dout, const int *tokens, float scale,
                                    int B, int T, int C, int V) {
    (void)V;
    ref_embedding_backward(dtable, dpos, dout, tokens, scale, B, T, C);
}

static inline void bind_sinusoidal_table(float *table, int T, int C) { ref_positional_encoding(table, T, C); }

static inline void bind_token_dropout_mask(float *mask, const int *tokens, int B, int T, int C, DropoutKey key) {
    ref_token_dropout_mask(mask, tokens, B, T, C, key);
}

/* the embedding's mask, then x0 = emb_sum * mask */
static inline void bind_token_dropout_forward(float *out, float *mask, const float *inp, const int *tokens, int B, int T,
                                              int C, DropoutKey key) {
    ref_token_dropout_mask(mask, tokens, B, T, C, key);
    ref_dropout_forward(out, inp, mask, (long)B * T * C);
}

/* model.c multiplies the embedding's gradient by its mask (in place) */
static inline void bind_mul_forward(float *out, const float *inp, const float *mask, long n) {
    ref_dropout_forward(out, inp, mask, n);
}

/* out = inp * the key's mask, the mask drawn for this call (the backward calls it again on the gradient) */
static inline void bind_dropout_apply(float *out, const float *inp, int B, int T, int W, DropoutKey key) {
    long n = (long)B * T * W;
    float *mask = bind_alloc(n);
    ref_dropout_mask(mask, B, T, W, key);
    ref_dropout_forward(out, inp, mask, n);
    free(mask);
}

/* out = add + dropout(inp): the residual sum after a dropped-out branch */
static inline void bind_dropout_add(float *out, const float *add, const float *inp, int B, int T, int W, DropoutKey key) {
    long n = (long)B * T * W;
    float *dropped = bind_alloc(n);
    bind_dropout_apply(dropped, inp, B, T, W, key);
    ref_residual_forward(out, add, dropped, n);
    free(dropped);
}

/* -------------------------------------------------------------- layer norm */

static inline void bind_layernorm_forward(float *out, float *mean, float *rstd, const float *inp, const float *weight,
                                   const float *bias, int N, int C) {
    ref_layernorm_forward(out, mean, rstd, inp, weight, bias, N, C);
}

static inline void bind_layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                                    const float *weight, const float *mean, const float *rstd, int N, int C) {
    ref_layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

static inline void bind_layernorm_backward_to(float *dinp, float *dweight, float *dbias, const float *dout,
                                       const float *inp, const float *weight, const float *mean, const float *rstd,
                                       int N, int C) {
    bind_zero(dinp, (long)N * C);
    ref_layernorm_backward(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
}

/* the layer norm's input gradient, then that through the residual branch's dropout */
static inline void bind_layernorm_backward_to_dropout(float *dinp, float *dropped, float *dweight, float *dbias,
                                                      const float *dout, const float *inp, const float *weight,
                                                      const float *mean, const float *rstd, int N, int C,
                                                      DropoutKey drop, int T) {
    bind_layernorm_backward_to(dinp, dweight, dbias, dout, inp, weight, mean, rstd, N, C);
    bind_dropout_apply(dropped, dinp, N / T, T, C, drop);
}

/* ------------------------------------------------------------- activations */

static inline void bind_gelu_forward(float *out, const float *inp, long n) { ref_gelu_forward(out, inp, n); }

/* d = d * gelu'(inp), in place */
static inline void bind_gelu_backward_inplace(float *d, const float *inp, long n) {
    float *dy = bind_alloc(n);
    memcpy(dy, d, sizeof(float) * (size_t)n);
    bind_zero(d, n);
    ref_gelu_backward(d, dy, inp, n);
    free(dy);
}

/* --------------------------------------------------------------- attention */

/* The reference forward over buffers of this call: out (B,T,C) and, when
 * probs_out is not NULL, the probabilities before dropout copied there. */
static inline void bind_attention_run(float *out, float *probs_out, const float *qkv, const int *tokens, int B, int T, int C,
                               int NH, DropoutKey drop, float *dqkv, const float *dout) {
    long n = (long)B * NH * T * T;
    float *scores = bind_alloc(n), *probs = bind_alloc(n), *used = bind_alloc(n);
    float *mask = drop.p > 0.0f ? bind_alloc(n) : NULL;
    if (mask) ref_attention_dropout_mask(mask, B, NH, T, drop);
    ref_attention_forward(out, scores, probs, used, qkv, tokens, mask, B, T, C, NH);
    if (probs_out) memcpy(probs_out, probs, sizeof(float) * (size_t)n);
    if (dqkv) {   /* the backward, written: zero, then the reference adds; scores' buffer is free now */
        float *dused = bind_alloc(n);
        bind_zero(dqkv, (long)B * T * 3 * C);
        ref_attention_backward(dqkv, dused, scores, dout, qkv, probs, used, mask, B, T, C, NH);
        free(dused);
    }
    free(scores);
    free(probs);
    free(used);
    free(mask);
}

static inline void bind_attention_forward(float *out, float *stats, const float *qkv, const int *tokens, int B, int T, int C,
                                   int NH, DropoutKey drop, float *work, int work_threads, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    (void)stats, (void)work, (void)work_threads;
    bind_attention_run(out, NULL, qkv, tokens, B, T, C, NH, drop, NULL, NULL);
}

static inline void bind_attention_backward(float *dqkv, const float *dout, const float *qkv, const float *stats,
                                    const int *tokens, int B, int T, int C, int NH, DropoutKey drop, float *work,
                                    int work_threads, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    (void)stats, (void)work, (void)work_threads;
    float *out = bind_alloc((long)B * T * C);
    bind_attention_run(out, NULL, qkv, tokens, B, T, C, NH, drop, dqkv, dout);
    free(out);
}

static inline void bind_attention_probs(float *probs, const float *qkv, const int *tokens, int B, int T, int C, int NH,
                                 float *work, int work_threads, Precision prec) {
    (void)prec;   /* the reference computes in float32 whatever --precision asks */
    (void)work, (void)work_threads;
    DropoutKey none = {0};
    float *out = bind_alloc((long)B * T * C);
    bind_attention_run(out, probs, qkv, tokens, B, T, C, NH, none, NULL, NULL);
    free(out);
}

/* ------------------------------------------------------------ pooling, loss */

static inline void bind_mean_pool_forward(float *out, const float *inp, const int *tokens, int B, int T, int C) {
    ref_mean_pool_forward(out, inp, tokens, B, T, C);
}
static inline void bind_mean_pool_backward(float *dinp, const float *dout, const int *tokens, int B, int T, int C) {
    ref_mean_pool_backward(dinp, dout, tokens, B, T, C);
}
static inline void bind_cls_pool_forward(float *out, const float *inp, int B, int T, int C) {
    ref_cls_pool_forward(out, inp, B, T, C);
}
static inline void bind_cls_pool_backward(float *dinp, const float *dout, int B, int T, int C) {
    ref_cls_pool_backward(dinp, dout, B, T, C);
}
static inline void bind_softmax_forward(float *probs, const float *logits, int B, int NC) {
    ref_softmax_forward(probs, logits, B, NC);
}
static inline float bind_crossentropy_forward(const float *logits, const int *labels, const float *weights, int B, int NC) {
    return ref_crossentropy_forward(logits, labels, weights, B, NC);
}
static inline void bind_crossentropy_backward(float *dlogits, const float *probs, const int *labels, const float *weights,
                                       int B, int NC) {
    ref_crossentropy_backward(dlogits, probs, labels, weights, B, NC);
}

/* From here on in the file that includes this one, each fast name means its binding. */
#define linear_forward bind_linear_forward
#define linear_forward_fused bind_linear_forward_fused
#define linear_backward_to bind_linear_backward_to
#define linear_backward_from bind_linear_backward_from
#define linear_backward_relu bind_linear_backward_relu
#define embedding_forward bind_embedding_forward
#define embedding_backward bind_embedding_backward
#define sinusoidal_table bind_sinusoidal_table
#define token_dropout_mask bind_token_dropout_mask
#define token_dropout_forward bind_token_dropout_forward
#define mul_forward bind_mul_forward
#define dropout_apply bind_dropout_apply
#define dropout_add bind_dropout_add
#define layernorm_forward bind_layernorm_forward
#define layernorm_backward bind_layernorm_backward
#define layernorm_backward_to bind_layernorm_backward_to
#define layernorm_backward_to_dropout bind_layernorm_backward_to_dropout
#define gelu_forward bind_gelu_forward
#define gelu_backward_inplace bind_gelu_backward_inplace
#define attention_forward bind_attention_forward
#define attention_backward bind_attention_backward
#define attention_probs bind_attention_probs
#define mean_pool_forward bind_mean_pool_forward
#define mean_pool_backward bind_mean_pool_backward
#define cls_pool_forward bind_cls_pool_forward
#define cls_pool_backward bind_cls_pool_backward
#define softmax_forward bind_softmax_forward
#define crossentropy_forward bind_crossentropy_forward
#define crossentropy_backward bind_crossentropy_backward

#endif
