/* bpe_dropout.h: BPE-dropout on encoded training batches (--bpe-dropout).
 *
 * Subword regularisation in the manner of BPE-dropout (Provilkov et al.,
 * 2020), applied to the ids of a batch instead of while encoding text, so
 * that a batch needs no text and draws the same under MPI and on resume:
 *
 * - Every merged symbol has parts: the left and right symbol of the first
 *   merge (lowest rank) whose concatenation it is. Base symbols and the
 *   specials have none.
 * - In each row, the tokens are taken left to right. A token with parts is
 *   split with probability p into its parts, and each part in turn the same
 *   way (depth first, left part before right). The draws of one token are
 *   numbered d = 0, 1, ... in that order, and draw d of the token at position
 *   k of the row at place r of the global batch is
 *       rng_uniform(seed, step, BPE_DROPOUT_SITE, r * 2^40 + k * 2^20 + d) < p
 *   (base/rng.h). A symbol without parts takes no draw.
 * - A row never grows past max_len: a token's split is kept only when its
 *   pieces fit in the places left once each token after it has one;
 *   otherwise the token stays whole.
 *
 * Validation, test, predict and the other tokenizers are untouched. */
#ifndef TEXT_BPE_DROPOUT_H
#define TEXT_BPE_DROPOUT_H

#include <stdint.h>

#include "text/bpe.h"

/* The generator site of the draws; the model's dropout sites are below
 * 900000, the epoch shuffle and pretraining's training masks share 900001
 * (run/schedule.c, nn/mlm.h), the held-out masks 900002 and the batch
 * order 900004. */
#define BPE_DROPOUT_SITE 900003

typedef struct {
    int n;        /* symbols, the specials included */
    int *parts;   /* (n, 2): each symbol's left and right part, -1 -1 when it has none */
} BpeSplits;

/* The parts of every symbol of b. 0, or -1 when out of memory. */
int bpe_splits_build(BpeSplits *s, const Bpe *b);
void bpe_splits_free(BpeSplits *s);

/* The draws of one batch: the generator's key, and where each row sits. */
typedef struct {
    double p;            /* probability of splitting a symbol that has parts */
    uint64_t seed, step;
    const int *rows;     /* (B) each row's place in the global batch; NULL: 0..B-1 */
} BpeDropoutKey;

/* Splits the tokens of the rows of tokens (B, T), padded with [PAD], in
 * place as above; returns the new T (the longest row, at most max_len).
 * tokens must have room for B x max_len ids; work holds (B + 1) x (max_len + 1)
 * ints. */
int bpe_dropout_batch(int *tokens, int B, int T, int max_len, const BpeSplits *s, BpeDropoutKey key, int *work);

#endif
