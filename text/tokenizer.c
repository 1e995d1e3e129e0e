/* tokenizer.c: the word and char tokenizers and the vocabulary
 * (SPEC section 3). */
#include "text/tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/hash.h"
#include "base/strmap.h"

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* ispunct() in the C locale: the printable ASCII that is neither a letter,
 * a digit nor a space. */
static int is_punct(unsigned char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static uint64_t hash_span(const char *s, size_t len) { return hash_bytes(HASH_START, s, len); }

/* ---- Tokenizers ---- */

const char *tokenizer_name(TokenizerKind k) { return k == TOKENIZER_CHAR ? "char" : "word"; }

int tokenizer_parse(const char *s, TokenizerKind *out) {
    if (!s || !out) return -1;
    if (strcmp(s, "word") == 0) *out = TOKENIZER_WORD;
    else if (strcmp(s, "char") == 0) *out = TOKENIZER_CHAR;
    else return -1;
    return 0;
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

/* Returns 0, fn's first non-zero value, or -1 when out of memory. */
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx) {
    if (!text || !fn) return 0;
    if (kind == TOKENIZER_CHAR) return tokenize_char(text, fn, ctx);
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

/* ---- Vocabulary ---- */

/* Fills v->table from v->tokens; returns the first duplicate id, 0 when none
 * (id 0 can never be a duplicate), or -1 when out of memory. */
static int vocab_index(Vocab *v) {
    int cap = 16;
    while (cap < 2 * v->size) cap *= 2;
    v->table = malloc((size_t)cap * sizeof *v->table);
    if (!v->table) return -1;
    v->table_cap = cap;
    for (int s = 0; s < cap; s++) v->table[s] = -1;
    for (int id = 0; id < v->size; id++) {
        const char *tok = v->tokens[id];
        size_t len = strlen(tok);
        size_t s = (size_t)hash_span(tok, len) & (size_t)(cap - 1);
        while (v->table[s] >= 0) {
            if (strcmp(v->tokens[v->table[s]], tok) == 0) return id;
            s = (s + 1) & (size_t)(cap - 1);
        }
        v->table[s] = id;
    }
    return 0;
}

int vocab_lookup(const Vocab *v, const char *tok, size_t len) {
    if (!v || !v->table || !tok || memchr(tok, '\0', len)) return TOKEN_UNK;
    size_t mask = (size_t)v->table_cap - 1;
    size_t s = (size_t)hash_span(tok, len) & mask;
    for (int probes = 0; probes < v->table_cap; probes++) {
        int id = v->table[s];
        if (id < 0) break;
        /* strncmp stops at the stored token's end, so no over-read. */
        if (strncmp(v->tokens[id], tok, len) == 0 && v->tokens[id][len] == '\0') return id;
        s = (s + 1) & mask;
    }
    return TOKEN_UNK;
}

void vocab_free(Vocab *v) {
    if (!v) return;
    for (int i = 0; i < v->size; i++) free(v->tokens[i]);
    free(v->tokens);
    free(v->table);
    memset(v, 0, sizeof *v);
}

typedef struct {
    const char *token;
    long count;
} TokenCount;

/* Descending count, then ascending byte order (strcmp compares as unsigned char). */
static int compare_token_counts(const void *a, const void *b) {
    const TokenCount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->token, y->token);
}

static int count_token(const char *tok, size_t len, int special, void *ctx) {
    if (special >= 0) return 0;
    StrMap *m = ctx;
    int e = strmap_add(m, tok, len);
    if (e < 0) return -1;
    m->counts[e]++;
    return 0;
}

/* Fills v with the specials and then the n chosen tokens. */
static int vocab_fill(Vocab *v, const TokenCount *chosen, int n) {
    v->tokens = calloc((size_t)n + N_SPECIAL_TOKENS, sizeof *v->tokens);
    if (!v->tokens) return -1;
    for (int i = 0; i < N_SPECIAL_TOKENS + n; i++) {
        const char *src = i < N_SPECIAL_TOKENS ? TOKEN_NAMES[i] : chosen[i - N_SPECIAL_TOKENS].token;
        v->tokens[i] = strndup(src, strlen(src));
        if (!v->tokens[i]) return -1;
        v->size = i + 1;
    }
    return vocab_index(v) != 0 ? -1 : 0;
}

int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq, char *err,
                size_t errlen) {
    if (!v || !train) return fail(err, errlen, ERR_RUNTIME, "vocab_build: missing argument");
    memset(v, 0, sizeof *v);
    if (max_size < 0 || (max_size > 0 && max_size < N_SPECIAL_TOKENS))
        return fail(err, errlen, ERR_INPUT, "--vocab-size must be 0 (no cap) or at least %d (the specials), got %d",
                    N_SPECIAL_TOKENS, max_size);
    if (min_freq < 0) return fail(err, errlen, ERR_INPUT, "--min-freq must be 0 or more, got %d", min_freq);
    StrMap counts;
    memset(&counts, 0, sizeof counts);
    int rc = 0;
    for (int i = 0; i < train->n && !rc; i++) rc = tokenize(kind, train->examples[i].text, count_token, &counts);
    TokenCount *chosen = NULL;
    int n = 0;
    if (!rc) chosen = malloc(((size_t)counts.n + 1) * sizeof *chosen);
    if (!rc && chosen) {
        for (int e = 0; e < counts.n; e++) {
            if (counts.counts[e] < min_freq) continue;
            chosen[n].token = counts.keys[e];
            chosen[n].count = counts.counts[e];
            n++;
        }
        qsort(chosen, (size_t)n, sizeof *chosen, compare_token_counts);
        if (max_size > 0 && n > max_size - N_SPECIAL_TOKENS) n = max_size - N_SPECIAL_TOKENS;
        rc = vocab_fill(v, chosen, n);
    }
    int ok = !rc && chosen;
    free(chosen);
    strmap_free(&counts);
    if (!ok) {
        vocab_free(v);
        return fail(err, errlen, ERR_RUNTIME, "%s: out of memory building the vocabulary",
                    train->path ? train->path : "(data)");
    }
    return EXIT_OK;
}

int vocab_from_tokens(Vocab *v, char *const *tokens, int n, char *err, size_t errlen) {
    if (!v) return fail(err, errlen, ERR_RUNTIME, "vocab_from_tokens: missing argument");
    memset(v, 0, sizeof *v);
    if (!tokens || n < N_SPECIAL_TOKENS)
        return fail(err, errlen, ERR_INPUT, "vocabulary has %d tokens; it needs at least the %d specials", n,
                    N_SPECIAL_TOKENS);
    for (int id = 0; id < n; id++) {
        if (!tokens[id] || !tokens[id][0])
            return fail(err, errlen, ERR_INPUT, "vocabulary: token %d is empty", id);
        if (id < N_SPECIAL_TOKENS && strcmp(tokens[id], TOKEN_NAMES[id]) != 0)
            return fail(err, errlen, ERR_INPUT, "vocabulary: token %d must be %s", id, TOKEN_NAMES[id]);
    }
    v->tokens = calloc((size_t)n, sizeof *v->tokens);
    if (!v->tokens) return fail(err, errlen, ERR_RUNTIME, "vocabulary: out of memory");
    for (int id = 0; id < n; id++) {
        v->tokens[id] = strndup(tokens[id], strlen(tokens[id]));
        if (!v->tokens[id]) {
            vocab_free(v);
            return fail(err, errlen, ERR_RUNTIME, "vocabulary: out of memory");
        }
        v->size = id + 1;
    }
    int dup = vocab_index(v);
    if (dup != 0) {
        int rc = dup < 0 ? fail(err, errlen, ERR_RUNTIME, "vocabulary: out of memory")
                         : fail(err, errlen, ERR_INPUT, "vocabulary: token %d ('%.40s') appears twice", dup,
                                v->tokens[dup]);
        vocab_free(v);
        return rc;
    }
    return EXIT_OK;
}

