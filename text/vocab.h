/* vocab.h: the vocabulary of a run: token strings and their ids, the five
 * specials first (docs/DESIGN.md §3). word, char and ngram count the training tokens;
 * bpe learns merges (text/bpe.h) and keeps them here for encoding.
 * Statuses follow base/errors.h. */
#ifndef TEXT_VOCAB_H
#define TEXT_VOCAB_H

#include <stddef.h>

#include "base/errors.h"
#include "base/strmap.h"
#include "text/bpe.h"
#include "text/dataset.h"
#include "text/tokenizer.h"

typedef struct {
    char **tokens;     /* (size) id -> token; ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK] */
    int size;
    int *table;        /* (table_cap) open-addressing hash: token -> id, -1 empty */
    int table_cap;
    Bpe *bpe;          /* bpe: the merges that encode a piece; NULL for word, char and ngram */
} Vocab;

/* word, char, ngram: specials, then tokens by descending frequency, ties in byte
 * order; max_size caps the total (specials included, 0 = no cap); min_freq
 * filters. bpe: the merges learned from the word tokens up to max_size
 * symbols (0 = until no pair repeats), base symbols seen fewer than
 * min_freq times left out. */
int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq,
                char *err, size_t errlen);
/* vocab_build in two halves, for training data held in shares (MPI): the
 * tokens (word, char, ngram) or pieces (bpe) of train added to counts (a StrMap,
 * zeroed when empty); then the vocabulary from counts summed over all
 * shares, the same as vocab_build over the whole. vocab_count returns 0, or
 * -1 when out of memory. */
int vocab_count(StrMap *counts, TokenizerKind kind, const TextDataset *train);
int vocab_from_counts(Vocab *v, TokenizerKind kind, const StrMap *counts, int max_size, int min_freq, char *err,
                      size_t errlen);
int vocab_from_tokens(Vocab *v, char *const *tokens, int n, char *err, size_t errlen);
/* A bpe vocabulary from its stored symbols and merges ({left, right} in learned order). */
int vocab_from_bpe(Vocab *v, char *const *tokens, int n, const char *const (*merges)[2], int n_merges, char *err,
                   size_t errlen);
int vocab_lookup(const Vocab *v, const char *tok, size_t len);   /* TOKEN_UNK when absent */
void vocab_free(Vocab *v);

#endif
