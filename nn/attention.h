/* attention.h: multi-head self-attention's core (the products with the
 * softmax and dropout between them), fused in the manner of flash attention.
 * The projections around it are linear layers (layers.h). */
#ifndef ATTENTION_H
#define ATTENTION_H

#include "nn/layers.h"

/* Multi-head self-attention core, fused: qkv is (B,T,3C) packed q,k,v (head
 * h uses columns h*dh..(h+1)*dh of each); out (B,T,C), heads concatenated,
 * is the softmax of q.k/sqrt(dh) over keys whose token is not [PAD] (others
 * exactly 0), after dropout on the probabilities (the element (t1, t2) of head h of
 * example b has index (dropout_row(b) * NH + h) * positions^2 + t1 * positions + t2), times v. Nothing
 * of size T x T is stored: stats (B,NH,T,2) keeps each softmax row's maximum
 * and inverse sum for the backward. */
void attention_forward(float *out, float *stats, const float *qkv, const int *tokens, int B, int T, int C,
                       int NH, DropoutKey drop, float *work, int work_threads, Precision prec);
/* dqkv (B,T,3C) = the gradient (written, not added: the numbers of zeroing
 * it first and adding); the probabilities are made again from qkv and the
 * forward's stats, the dropout factors from their keys. */
void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *stats, const int *tokens,
                        int B, int T, int C, int NH, DropoutKey drop, float *work, int work_threads, Precision prec);
/* probs (B,NH,T,T): the attention probabilities before dropout, for views. */
void attention_probs(float *probs, const float *qkv, const int *tokens, int B, int T, int C, int NH, float *work,
                     int work_threads, Precision prec);
/* prec: the precision of the two products and their gradients. The three
 * take a work buffer of attention_work_floats(max T, C, NH,
 * work_threads) floats, 64-byte aligned, owned by the caller (one
 * allocation, not one per call); they run on at most work_threads threads. */
long attention_work_floats(int T, int C, int NH, int threads);

#endif
