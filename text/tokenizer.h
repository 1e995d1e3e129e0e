/* tokenizer.h: the word and char tokenizers and the vocabulary built from
 * training texts (SPEC section 3). Statuses follow base/errors.h. */
#ifndef TEXT_TOKENIZER_H
#define TEXT_TOKENIZER_H

#include <stddef.h>

#include "base/errors.h"
#include "base/tokens.h"
#include "text/dataset.h"

typedef enum { TOKENIZER_WORD = 0, TOKENIZER_CHAR = 1 } TokenizerKind;

/* Calls fn for each token of text. special is the fixed id of a literal
 * [CLS]/[SEP]/[MASK], or -1 for an ordinary token (tok, len).
 * Returns 0, or the first non-zero value fn returned. */
typedef int (*TokenFn)(const char *tok, size_t len, int special, void *ctx);
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx);
const char *tokenizer_name(TokenizerKind k);
/* 0, or -1 for a name that is not a tokenizer. */
int tokenizer_parse(const char *s, TokenizerKind *out);

typedef struct {
    char **tokens;     /* (size) id -> token; ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK] */
    int size;
    int *table;        /* (table_cap) open-addressing hash: token -> id, -1 empty */
    int table_cap;
} Vocab;

/* Specials, then tokens by descending frequency, ties in byte order;
 * max_size caps the total (specials included, 0 = no cap); min_freq filters. */
int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq,
                char *err, size_t errlen);
int vocab_from_tokens(Vocab *v, char *const *tokens, int n, char *err, size_t errlen);
int vocab_lookup(const Vocab *v, const char *tok, size_t len);   /* TOKEN_UNK when absent */
void vocab_free(Vocab *v);

#endif
