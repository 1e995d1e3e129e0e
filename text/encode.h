/* encode.h: texts into id sequences [CLS] tok... [SEP] of at most max_len
 * ids, and padded (B,T) batches of them (docs/DESIGN.md §3). */
#ifndef TEXT_ENCODE_H
#define TEXT_ENCODE_H

#include <stddef.h>

#include "base/errors.h"
#include "text/labels.h"
#include "text/vocab.h"

typedef struct {
    int *ids;          /* all sequences back to back */
    size_t *offsets;   /* (n) start of each sequence in ids */
    int *lengths;      /* (n) */
    int *labels;       /* (n) class index, or -1 when encoded without labels */
    int n;
    int n_truncated;   /* examples longer than max_len */
    int longest;       /* longest encoded length */
} EncodedDataset;

/* labels may be NULL (predict). A label not in the set is bad input naming
 * the label, file and line. */
int encode_dataset(const TextDataset *d, const Vocab *v, TokenizerKind kind, const LabelSet *labels,
                   int max_len, EncodedDataset *out, char *err, size_t errlen);
/* Encodes one text into ids (capacity max_len); returns its length and sets
 * *truncated; -1 for max_len < 3 or out of memory. */
int encode_text(const char *text, const Vocab *v, TokenizerKind kind, int max_len, int *ids, int *truncated);
void encoded_free(EncodedDataset *e);
/* The length encode_text would give with no max_len, [CLS] and [SEP]
 * included; -1 when out of memory. */
int encode_length(const char *text, const Vocab *v, TokenizerKind kind);

/* Copies examples indices[0..B) into tokens (B, T) padded with [PAD], where T
 * is the longest of them; labels_out (B) may be NULL. Returns T, or -1 when an
 * index is out of range. */
int encoded_batch(const EncodedDataset *e, const int *indices, int B, int *tokens, int *labels_out);

#endif
