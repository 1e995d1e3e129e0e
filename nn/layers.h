/* layers.h: the transformer's layers as forward/backward pairs over flat
 * row-major float arrays. Conventions: N = B*T rows; backward functions
 * ACCUMULATE (+=) into input gradients and parameter gradients, so callers
 * zero or seed those buffers first, except where a function says it writes
 * (the *_to variants; *_from writes start + the gradient; the linear
 * layer's backward writes its parameter gradients too). Every parallel loop
 * owns its outputs and sums in a fixed order: results do not depend on the
 * thread count. */
#ifndef LAYERS_H
#define LAYERS_H

#include <math.h>
#include <stdint.h>

#include "base/rng.h"
#include "base/tokens.h"
#include "nn/dropout.h"
#include "nn/precision.h"

/* out is (N,OC), inp is (N,C), weight is (OC,C) (PyTorch Linear layout), bias is (OC) or NULL */
/* prec: the products' precision (nn/precision.h), here and in every function taking one. */
void linear_forward(float *out, const float *inp, const float *weight, const float *bias,
                    int N, int C, int OC, Precision prec);
/* linear_forward, and while each output row is in registers: relu (N,OC) =
 * relu_forward of out when relu is not NULL, sum (N,OC) = add + out when sum
 * is not NULL; with drop (not NULL, p > 0), relu = dropout_apply of that,
 * sum = dropout_add(add, out), the N rows being B examples of T positions.
 * The same numbers as the separate passes, without them. At most one of
 * relu and sum may be out itself, which then holds that result instead of
 * the product (for callers that need no product). */
void linear_forward_fused(float *out, const float *inp, const float *weight, const float *bias, int N, int C,
                          int OC, float *relu, const float *add, float *sum, const DropoutKey *drop, int T,
                          Precision prec);
/* The backward of a linear layer, writing (not adding to) its three
 * gradients: dinp (N,C) = dout @ weight, dweight (OC,C) = dout^T @ inp,
 * dbias (OC) = the column sums of dout, each element one chain started from
 * 0 in a register: the numbers of zeroing them first and adding, without
 * the zeroing pass or reading the zeros back. dinp and dbias may be NULL. */
void linear_backward_to(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, int N, int C, int OC, Precision prec);
/* linear_backward_to with dinp = start + dout @ weight (start (N,C), not
 * dinp): the numbers of copying start into dinp and adding, without the copy. */
void linear_backward_from(float *dinp, const float *start, float *dweight, float *dbias, const float *dout,
                          const float *inp, const float *weight, int N, int C, int OC, Precision prec);
/* linear_backward_to for a layer whose input is inp = relu(x) * factor
 * (each factor 0 or the key's keep scale, 1 when key.p is 0), with dinp
 * the gradient of x: inp > 0 exactly where x > 0 and the element was kept,
 * and there d(x) = (dout @ weight) * keep scale; elsewhere 0. Made as the
 * product finishes, from inp alone: neither x nor the mask is kept or
 * drawn again. (Where the element was dropped, d * 0 * relu' gave a zero
 * too, perhaps -0: a sum that starts from +0 adds it away.) dinp must not
 * be inp. */
void linear_backward_relu(float *dinp, float *dweight, float *dbias, const float *dout, const float *inp,
                          const float *weight, int N, int C, int OC, DropoutKey key, Precision prec);

/* out is (B,T,C): table[token] * scale + pos (pos is (T,C) or NULL) */
void embedding_forward(float *out, const int *tokens, const float *table, float scale,
                       const float *pos, int N, int T, int C);
/* dtable (V,C) += scale * dout at each token's row; dpos (T,C) += dout summed over the batch.
 * Threads own column ranges of the table (rows of pos) and add positions in order, so no
 * two threads share an element and each sum has one order. */
void embedding_backward(float *dtable, float *dpos, const float *dout, const int *tokens,
                        float scale, int B, int T, int C, int V);

/* Sinusoidal value at (pos, dim) for width d_model, PyTorch tutorial formula,
 * computed in double. */
float positional_encoding_value(int pos, int dim, int d_model);
/* Sinusoidal table (T,C), PyTorch tutorial formula, evaluated in double. */
void sinusoidal_table(float *table, int T, int C);

/* out = inp * mask elementwise (out may alias inp) */
void mul_forward(float *out, const float *inp, const float *mask, long n);
/* dinp += dout * mask */
void mul_backward(float *dinp, const float *dout, const float *mask, long n);

/* out (N,C) = (inp - mean) * rstd * weight + bias, biased variance, eps 1e-5;
 * mean and rstd (N) are saved for the backward. */
void layernorm_forward(float *out, float *mean, float *rstd, const float *inp,
                       const float *weight, const float *bias, int N, int C);
void layernorm_backward(float *dinp, float *dweight, float *dbias, const float *dout,
                        const float *inp, const float *weight, const float *mean,
                        const float *rstd, int N, int C);
/* layernorm_backward writing dinp instead of adding to it (0 + each term, so
 * the numbers of zeroing dinp first, signed zeros included). */
void layernorm_backward_to(float *dinp, float *dweight, float *dbias, const float *dout,
                           const float *inp, const float *weight, const float *mean,
                           const float *rstd, int N, int C);
/* layernorm_backward_to, and in the same pass dropped (N,C) = dropout_apply
 * of dinp by drop, the N rows being examples of T positions: the gradient
 * through a residual branch's dropout, without a pass of its own. */
void layernorm_backward_to_dropout(float *dinp, float *dropped, float *dweight, float *dbias, const float *dout,
                                   const float *inp, const float *weight, const float *mean, const float *rstd,
                                   int N, int C, DropoutKey drop, int T);

/* out = inp * each element's dropout factor for (B,T,W) data, without
 * storing the mask: the backward calls it again on the gradient with the
 * same key. out may alias inp. */
void dropout_apply(float *out, const float *inp, int B, int T, int W, DropoutKey key);
/* out = add + dropout_apply(inp) in one pass (the residual sum after a
 * dropped-out branch): each element add + (inp * factor), the numbers of the
 * two passes. out may alias add; inp is left as it was. */
void dropout_add(float *out, const float *add, const float *inp, int B, int T, int W, DropoutKey key);
/* The embedding-sum dropout of docs/DESIGN.md §4.2 for tokens (B,T) and width C:
 * [CLS]/[SEP]/[MASK] positions kept unscaled (factor 1), [PAD] positions
 * zeroed, other elements drawn as dropout_apply draws them. */
void token_dropout_mask(float *mask, const int *tokens, int B, int T, int C, DropoutKey key);
/* token_dropout_mask, and out (B,T,C) = inp * mask in the same pass. */
void token_dropout_forward(float *out, float *mask, const float *inp, const int *tokens, int B, int T, int C,
                           DropoutKey key);

/* Activations, elementwise over n: relu, or gelu in the exact erf form. */
void relu_forward(float *out, const float *inp, long n);
void relu_backward(float *dinp, const float *dout, const float *inp, long n);
void gelu_forward(float *out, const float *inp, long n);
void gelu_backward(float *dinp, const float *dout, const float *inp, long n);
/* The same gradient in place: d = d * gelu'(inp), d holding the output
 * gradient on entry (no second buffer, no zeroing). */
void gelu_backward_inplace(float *d, const float *inp, long n);

/* Pooling (B,T,C) -> (B,C): mean over non-[PAD] positions, or position 0 ([CLS]). */
void mean_pool_forward(float *out, const float *inp, const int *tokens, int B, int T, int C);
void mean_pool_backward(float *dinp, const float *dout, const int *tokens, int B, int T, int C);
void cls_pool_forward(float *out, const float *inp, int B, int T, int C);
void cls_pool_backward(float *dinp, const float *dout, int B, int T, int C);

/* Softmax cross-entropy: probs (B,NC) from logits; the loss is the mean over
 * the batch, or PyTorch's weighted mean sum(w_y * nll) / sum(w_y) when
 * weights (NC) is given. Returns the loss. */
void softmax_forward(float *probs, const float *logits, int B, int NC);
float crossentropy_forward(const float *logits, const int *labels, const float *weights, int B, int NC);
/* One example's negative log-likelihood -log softmax(z)[label], in double. */
double crossentropy_example(const float *z, int label, int NC);
/* dlogits (B,NC) = dloss/dlogits (set, not accumulated). */
void crossentropy_backward(float *dlogits, const float *probs, const int *labels,
                           const float *weights, int B, int NC);

#endif
