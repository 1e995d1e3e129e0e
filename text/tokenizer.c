/* tokenizer.c: the word, char and ngram tokenizers: text into tokens
 * (docs/DESIGN.md §3); bpe.c refines the word tokens into subwords. */
#include "text/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* ispunct() in the C locale: the printable ASCII that is neither a letter,
 * a digit nor a space. */
static int is_punct(unsigned char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}


/* ---- Tokenizers ---- */

static const char *const TOKENIZER_NAMES[] = {"word", "char", "bpe", "ngram"};

const char *tokenizer_name(TokenizerKind k) { return TOKENIZER_NAMES[k]; }

int tokenizer_parse(const char *s, TokenizerKind *out) {
    for (int k = 0; s && out && k < (int)(sizeof TOKENIZER_NAMES / sizeof *TOKENIZER_NAMES); k++) {
        if (strcmp(s, TOKENIZER_NAMES[k]) == 0) {
            *out = (TokenizerKind)k;
            return 0;
        }
    }
    return -1;
}

/* Length of a literal [CLS], [SEP] or [MASK] at s (0 when none); sets *id. */
static size_t special_at(const char *s, int *id) {
    static const int literal_ids[] = {TOKEN_CLS, TOKEN_SEP, TOKEN_MASK};
    if (*s != '[') return 0;
    for (int k = 0; k < 3; k++) {
        const char *name = TOKEN_NAMES[literal_ids[k]];
        size_t n = strlen(name);
        if (strncmp(s, name, n) == 0) {
            *id = literal_ids[k];
            return n;
        }
    }
    return 0;
}

/* Bytes of the UTF-8 sequence at s: its length when the lead byte and its
 * continuation bytes are well formed, else 1 (the stray byte alone). */
static size_t utf8_length_at(const char *s) {
    unsigned char c = (unsigned char)s[0];
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    for (size_t k = 1; k < n; k++)     /* stops at the NUL, which is no continuation byte */
        if (((unsigned char)s[k] & 0xC0) != 0x80) return 1;
    return n;
}

static int tokenize_word(const char *text, const char *lower, TokenFn fn, void *ctx) {
    size_t i = 0;
    while (text[i]) {
        int id, rc;
        size_t special = special_at(text + i, &id);
        unsigned char c = (unsigned char)text[i];
        if (special) {
            rc = fn(text + i, special, id, ctx);
            i += special;
        } else if (is_space(c)) {
            i++;
            continue;
        } else if (is_punct(c)) {
            rc = fn(lower + i, 1, -1, ctx);
            i++;
        } else {
            /* A word runs to whitespace or punctuation; '[' being punctuation,
             * no literal special can hide inside it. */
            size_t start = i;
            while (text[i] && !is_space((unsigned char)text[i]) && !is_punct((unsigned char)text[i])) i++;
            rc = fn(lower + start, i - start, -1, ctx);
        }
        if (rc) return rc;
    }
    return 0;
}

static int tokenize_char(const char *text, TokenFn fn, void *ctx) {
    size_t i = 0;
    while (text[i]) {
        int id, rc;
        size_t special = special_at(text + i, &id);
        if (special) {
            rc = fn(text + i, special, id, ctx);
            i += special;
        } else {
            size_t n = utf8_length_at(text + i);
            rc = fn(text + i, n, -1, ctx);
            i += n;
        }
        if (rc) return rc;
    }
    return 0;
}

/* ngram: each word token as "<word>", then its character n-grams (code
 * points of "<word>", NGRAM_MIN to NGRAM_MAX long, shortest first, left to
 * right), leaving out "<word>" itself. */
#define NGRAM_MIN 2
#define NGRAM_MAX 5

typedef struct {
    TokenFn fn;
    void *ctx;
    char *buf;        /* (cap) "<" token ">" */
    size_t cap;
    size_t *starts;   /* (cap + 1) byte offset of each code point of buf, then its length */
} NgramJob;

static int ngram_token(const char *tok, size_t len, int special, void *ctx) {
    NgramJob *job = ctx;
    if (special >= 0) return job->fn(tok, len, special, job->ctx);
    if (len + 2 > job->cap) {
        size_t cap = 2 * (len + 2);
        char *buf = realloc(job->buf, cap);
        if (buf) job->buf = buf;
        size_t *starts = buf ? realloc(job->starts, (cap + 1) * sizeof *starts) : NULL;
        if (!starts) return -1;
        job->starts = starts;
        job->cap = cap;
    }
    size_t n = len + 2, units = 0;
    job->buf[0] = '<';
    memcpy(job->buf + 1, tok, len);
    job->buf[n - 1] = '>';
    for (size_t i = 0; i < n; i += utf8_length_at(job->buf + i)) job->starts[units++] = i;
    job->starts[units] = n;
    int rc = job->fn(job->buf, n, -1, job->ctx);
    for (size_t g = NGRAM_MIN; g <= NGRAM_MAX && g < units && !rc; g++)
        for (size_t u = 0; u + g <= units && !rc; u++)
            rc = job->fn(job->buf + job->starts[u], job->starts[u + g] - job->starts[u], -1, job->ctx);
    return rc;
}

/* Returns 0, fn's first non-zero value, or -1 when out of memory. */
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx) {
    if (!text || !fn) return 0;
    /* bpe's pieces are the word tokens */
    if (kind == TOKENIZER_CHAR) return tokenize_char(text, fn, ctx);
    if (kind == TOKENIZER_NGRAM) {
        NgramJob job = {fn, ctx, NULL, 0, NULL};
        int rc = tokenize(TOKENIZER_WORD, text, ngram_token, &job);
        free(job.buf);
        free(job.starts);
        return rc;
    }
    size_t len = 0;
    int has_upper = 0;
    for (; text[len]; len++) has_upper |= text[len] >= 'A' && text[len] <= 'Z';
    if (!has_upper) return tokenize_word(text, text, fn, ctx);
    /* Word tokens come from a copy with A-Z lower-cased at the same offsets. */
    char *lower = strndup(text, len);
    if (!lower) return -1;
    for (size_t i = 0; i < len; i++)
        if (lower[i] >= 'A' && lower[i] <= 'Z') lower[i] = (char)(lower[i] - 'A' + 'a');
    int rc = tokenize_word(text, lower, fn, ctx);
    free(lower);
    return rc;
}
