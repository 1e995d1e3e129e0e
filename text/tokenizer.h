/* tokenizer.h: the word, char and ngram tokenizers, text into tokens
 * (docs/DESIGN.md §3). The bpe tokenizer splits text as word does, then
 * text/bpe.h turns each word token (a piece) into subwords. */
#ifndef TEXT_TOKENIZER_H
#define TEXT_TOKENIZER_H

#include <stddef.h>

#include "base/errors.h"
#include "base/tokens.h"

/* ngram: each word token as "<token>", then its character n-grams, 2 to 5
 * code points of "<token>" (shortest first, left to right; "<token>" once). */
typedef enum { TOKENIZER_WORD = 0, TOKENIZER_CHAR = 1, TOKENIZER_BPE = 2, TOKENIZER_NGRAM = 3 } TokenizerKind;

/* Calls fn for each token of text. special is the fixed id of a literal
 * [CLS]/[SEP]/[MASK], or -1 for an ordinary token (tok, len).
 * Returns 0, or the first non-zero value fn returned. */
typedef int (*TokenFn)(const char *tok, size_t len, int special, void *ctx);
/* TOKENIZER_BPE gives the word tokens (bpe's pieces). */
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx);
const char *tokenizer_name(TokenizerKind k);
/* 0, or -1 for a name that is not a tokenizer. */
int tokenizer_parse(const char *s, TokenizerKind *out);

#endif
