/* reference.h: every layer of the model once more, written as the math
 * reads: one loop nest per formula, no blocking, no fusing, no threads.
 * They are the oracle the fast layers (layers.h, attention.h) are tested
 * against (tests/test_reference.c), and what build/train-ref trains with
 * (nn/reference_bind.h), for reading and for stepping through in a debugger.
 * The math is that of docs/DESIGN.md §4; the reading path, docs/READING.md.
 *
 * Shapes: B examples of T positions, d (or C) features, h heads of dh =
 * d/h, N = B*T rows. Arrays are flat and row-major. A forward writes its
 * output; a backward ADDS to the gradients it is given (callers zero them),
 * except the loss's, which starts the chain and writes. */
#ifndef REFERENCE_H
#define REFERENCE_H

#include "nn/dropout.h"   /* DropoutKey: which random numbers a dropout uses */

/* --------------------------------------------- embedding, positions, dropout */

/* tokens (B,T) -> x (B,T,d) = E[token] * scale + pe[t]  (pe (T,d) or NULL) */
void ref_embedding_forward(float *x, const int *tokens, const float *E, float scale, const float *pe, int B, int T,
                           int d);
/* dx (B,T,d) -> dE (V,d) += scale * dx at each token's row, dpe (T,d) += dx summed over b (NULL: none) */
void ref_embedding_backward(float *dE, float *dpe, const float *dx, const int *tokens, float scale, int B, int T,
                            int d);
/* -> pe (T,d): pe[t][2i] = sin(t * 10000^(-2i/d)), pe[t][2i+1] = cos(the same angle) */
void ref_positional_encoding(float *pe, int T, int d);

/* -> mask (B,T,W): each element's dropout factor, 0 when rng_uniform(key) < p, else 1/(1-p) */
void ref_dropout_mask(float *mask, int B, int T, int W, DropoutKey key);
/* tokens (B,T) -> mask (B,T,d) of the embedding's masked dropout: 1 at [CLS], [SEP], [MASK]
 * (never dropped), 0 at [PAD], ref_dropout_mask's factor elsewhere */
void ref_token_dropout_mask(float *mask, const int *tokens, int B, int T, int d, DropoutKey key);
/* -> mask (B,h,T,T) of the attention probabilities: query t1, key t2 of head hd of example b */
void ref_attention_dropout_mask(float *mask, int B, int h, int T, DropoutKey key);
/* x (n) -> y (n) = x * mask */
void ref_dropout_forward(float *y, const float *x, const float *mask, long n);
/* dy (n) -> dx (n) += dy * mask */
void ref_dropout_backward(float *dx, const float *dy, const float *mask, long n);

/* a (n), b (n) -> y (n) = a + b: the residual sum */
void ref_residual_forward(float *y, const float *a, const float *b, long n);
/* dy (n) -> da (n) += dy, db (n) += dy */
void ref_residual_backward(float *da, float *db, const float *dy, long n);

/* ------------------------------------------------------------------ linear */

/* x (N,C), W (OC,C), b (OC) or NULL -> y (N,OC) = x W^T + b */
void ref_linear_forward(float *y, const float *x, const float *W, const float *b, int N, int C, int OC);
/* dy (N,OC) -> dx (N,C) += dy W, dW (OC,C) += dy^T x, db (OC) += sum over n of dy (each may be NULL) */
void ref_linear_backward(float *dx, float *dW, float *db, const float *dy, const float *x, const float *W, int N,
                         int C, int OC);

/* --------------------------------------------------------------- attention */

/* qkv (B,T,3d) -> out (B,T,d). q, k, v are qkv's three column blocks, head hd
 * the columns hd*dh..(hd+1)*dh of each. Kept for the backward, each (B,h,T,T):
 *   scores = q k^T / sqrt(dh), -inf where the key is [PAD]
 *   probs  = softmax of scores over the keys
 *   used   = probs * mask  (mask: ref_attention_dropout_mask, or NULL: no dropout)
 *   out    = used v */
void ref_attention_forward(float *out, float *scores, float *probs, float *used, const float *qkv, const int *tokens,
                           const float *mask, int B, int T, int d, int h);
/* dout (B,T,d) -> dqkv (B,T,3d) +=, from the forward's probs, used and mask;
 * dused, dscores (B,h,T,T) are scratch the caller owns */
void ref_attention_backward(float *dqkv, float *dused, float *dscores, const float *dout, const float *qkv,
                            const float *probs, const float *used, const float *mask, int B, int T, int d, int h);

/* -------------------------------------------------------------- layer norm */

/* x (N,C) -> y (N,C) = (x - mean) * rstd * w + b, rstd = 1/sqrt(var + 1e-5),
 * var the biased variance; mean, rstd (N) kept for the backward */
void ref_layernorm_forward(float *y, float *mean, float *rstd, const float *x, const float *w, const float *b, int N,
                           int C);
/* dy (N,C) -> dx (N,C) +=, dw (C) +=, db (C) += */
void ref_layernorm_backward(float *dx, float *dw, float *db, const float *dy, const float *x, const float *w,
                            const float *mean, const float *rstd, int N, int C);

/* ------------------------------------------------------------- activations */

/* x (n) -> y (n) = max(x, 0) */
void ref_relu_forward(float *y, const float *x, long n);
/* dy (n) -> dx (n) += dy where x > 0 */
void ref_relu_backward(float *dx, const float *dy, const float *x, long n);
/* x (n) -> y (n) = x * Phi(x) = x/2 * (1 + erf(x / sqrt 2)) */
void ref_gelu_forward(float *y, const float *x, long n);
/* dy (n) -> dx (n) += dy * (Phi(x) + x * phi(x)) */
void ref_gelu_backward(float *dx, const float *dy, const float *x, long n);

/* ----------------------------------------------------------------- pooling */

/* x (B,T,d) -> y (B,d) = the mean of x over the positions that are not [PAD] */
void ref_mean_pool_forward(float *y, const float *x, const int *tokens, int B, int T, int d);
/* dy (B,d) -> dx (B,T,d) += dy / count at the positions that are not [PAD] */
void ref_mean_pool_backward(float *dx, const float *dy, const int *tokens, int B, int T, int d);
/* x (B,T,d) -> y (B,d) = x at position 0, the [CLS] token */
void ref_cls_pool_forward(float *y, const float *x, int B, int T, int d);
/* dy (B,d) -> dx (B,T,d) += dy at position 0 */
void ref_cls_pool_backward(float *dx, const float *dy, int B, int T, int d);

/* -------------------------------------------------------------------- loss */

/* z (B,C) -> p (B,C) = softmax of each row */
void ref_softmax_forward(float *p, const float *z, int B, int C);
/* z (B,C), y (B) -> loss = sum_b w[y_b] * nll_b / sum_b w[y_b], nll_b = log sum_c e^z[b][c] - z[b][y_b]
 * (w (C) or NULL: every w 1, the plain mean) */
float ref_crossentropy_forward(const float *z, const int *y, const float *w, int B, int C);
/* p (B,C), y (B) -> dz (B,C) = w[y_b] / sum w * (p - onehot(y_b)): written, the first gradient */
void ref_crossentropy_backward(float *dz, const float *p, const int *y, const float *w, int B, int C);

/* ------------------------------------------------------------------- AdamW */

/* One AdamW step, number t (from 1), on n parameters p with gradients g and
 * moments m, v (beta 0.9, 0.999, eps 1e-8), PyTorch's order: decay the
 * weight (decay 1: matrices and embeddings; 0: biases and norms), then the
 * moments, then the step. */
void ref_adamw_step(float *p, float *m, float *v, const float *g, long n, float lr, float weight_decay, int decay,
                    long t);

#endif
