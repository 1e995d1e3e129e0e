/* mlm.h: the pieces of masked-language-model pretraining (docs/DESIGN.md §4b)
 * that are not the encoder's: choosing and corrupting the masked tokens
 * from the keyed generator, taking the selected rows out of (and their
 * gradients back into) the encoder output, and the cross-entropy over the
 * vocabulary at those rows. The head's dense layer, GELU, LayerNorm and
 * tied projection are the linear/gelu/layernorm layers of layers.h.
 * Conventions as layers.h: backward functions accumulate. */
#ifndef NN_MLM_H
#define NN_MLM_H

#include <stdint.h>

#include "base/tokens.h"

#define MLM_SELECT_P 0.15   /* share of the non-special tokens selected */
#define MLM_MASK_P 0.8      /* a selected token becomes [MASK] ... */
#define MLM_RANDOM_P 0.1    /* ... or a uniformly random non-special token, else stays */
#define MLM_MAX_POSITIONS 65536   /* the key's room for positions of one sequence */
/* Generator sites of the masks: training batches (keyed by their step) and
 * the held-out split (step 0, the same positions every epoch). Apart from
 * the model's dropout sites (below 1000000, above 100 per layer). */
#define MLM_SITE_TRAIN 900001
#define MLM_SITE_HELDOUT 900002

/* Masks B sequences of length T (rows padded with [PAD]): every token that
 * is not one of the 5 specials is selected with probability MLM_SELECT_P
 * ([UNK] never is, as in Hugging Face's masking: an out-of-vocabulary word
 * has nothing to predict, so it is in neither the loss nor the accuracy,
 * and an [UNK] guess can never count as right),
 * and when none is, one of them uniformly; a selected token becomes [MASK]
 * (0.8), a random id in [N_SPECIAL_TOKENS, vocab_size) (0.1) or stays (0.1).
 * Every draw is keyed by (seed, step, site, index) with index a function of
 * (first_seq + rows[b], position) (rows NULL: first_seq + b), row b's
 * place in the global batch: the masks do not depend on threads, on
 * padding, or on how MPI splits the batch. out gets the corrupted ids (out may alias tokens);
 * targets gets the original id at selected positions and -1 elsewhere.
 * Returns how many positions were selected. */
long mlm_mask(int *out, int *targets, const int *tokens, int B, int T, int vocab_size, uint64_t seed,
              uint64_t step, uint64_t site, long first_seq,
              const int *rows);

/* out (M,C) = rows rows[0..M) of inp (N,C). */
void rows_gather(float *out, const float *inp, const int *rows, int M, int C);
/* dinp rows rows[i] += dout row i; rows must be distinct. */
void rows_scatter_add(float *dinp, const float *dout, const int *rows, int M, int C);

/* In place over x (M,V): logits become softmax probabilities; row_loss (M)
 * gets each row's -log p[targets[i]] (from the logits, in double); returns
 * their mean summed in row order, 0 when M is 0. */
double softmax_xent_rows(float *x, float *row_loss, const int *targets, int M, int V);
/* In place over x (M,V) holding the probabilities: the gradient of that
 * mean, (p - onehot(target)) / M. */
void softmax_xent_rows_backward(float *x, const int *targets, int M, int V);
/* The most probable id of row i of p (M,V), the lowest on a tie. */
int row_argmax(const float *p, int i, int V);

#endif
