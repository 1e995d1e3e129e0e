/* vocab.c: the vocabulary: token strings and ids, built from the training
 * texts by counting (word, char, ngram) or by learning byte-pair merges (bpe). */
#include "text/vocab.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/hash.h"
#include "base/strmap.h"

static uint64_t hash_span(const char *s, size_t len) { return hash_bytes(HASH_START, s, len); }

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
    bpe_free(v->bpe);
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

/* The vocabulary's token strings are the Bpe's symbols; v->bpe owns it. */
static int vocab_take_bpe(Vocab *v, Bpe *bpe, char *err, size_t errlen) {
    int n = bpe_vocab_size(bpe);
    char **symbols = malloc(sizeof(char *) * (size_t)n);
    if (!symbols) {
        bpe_free(bpe);
        return fail(err, errlen, ERR_RUNTIME, "vocabulary: out of memory");
    }
    for (int id = 0; id < n; id++) symbols[id] = (char *)bpe_symbol(bpe, id);
    int rc = vocab_from_tokens(v, symbols, n, err, errlen);
    free(symbols);
    if (rc == EXIT_OK) v->bpe = bpe;
    else bpe_free(bpe);
    return rc;
}

/* bpe: merges learned from the pieces' counts. */
static int vocab_build_bpe(Vocab *v, const StrMap *counts, int max_size, int min_freq, char *err, size_t errlen) {
    BpeCounter *counter = bpe_counter_new();
    int rc = counter ? 0 : -1;
    for (int e = 0; e < counts->n && rc == 0; e++)
        rc = bpe_counter_add_count(counter, counts->keys[e], counts->key_lens[e], counts->counts[e]);
    Bpe *bpe = NULL;
    char why[512] = "out of memory";
    if (rc == 0) rc = bpe_learn(counter, max_size > 0 ? max_size : INT_MAX, min_freq, &bpe, why, sizeof why);
    bpe_counter_free(counter);
    if (rc != 0) return fail(err, errlen, ERR_RUNTIME, "learning the bpe vocabulary: %s", why);
    return vocab_take_bpe(v, bpe, err, errlen);
}

int vocab_from_bpe(Vocab *v, char *const *tokens, int n, const char *const (*merges)[2], int n_merges, char *err,
                   size_t errlen) {
    memset(v, 0, sizeof *v);
    Bpe *bpe = NULL;
    char why[512];
    if (bpe_from_lists((const char *const *)tokens, n, merges, n_merges, &bpe, why, sizeof why) != 0)
        return fail(err, errlen, ERR_INPUT, "bpe vocabulary: %s", why);
    return vocab_take_bpe(v, bpe, err, errlen);
}

int vocab_count(StrMap *counts, TokenizerKind kind, const TextDataset *train) {
    int rc = 0;
    for (int i = 0; i < train->n && !rc; i++) rc = tokenize(kind, train->examples[i].text, count_token, counts);
    return rc ? -1 : 0;
}

int vocab_from_counts(Vocab *v, TokenizerKind kind, const StrMap *counts, int max_size, int min_freq, char *err,
                      size_t errlen) {
    memset(v, 0, sizeof *v);
    if (max_size < 0 || (max_size > 0 && max_size < N_SPECIAL_TOKENS))
        return fail(err, errlen, ERR_INPUT, "--vocab-size must be 0 (no cap) or at least %d (the specials), got %d",
                    N_SPECIAL_TOKENS, max_size);
    if (min_freq < 0) return fail(err, errlen, ERR_INPUT, "--min-freq must be 0 or more, got %d", min_freq);
    if (kind == TOKENIZER_BPE) return vocab_build_bpe(v, counts, max_size, min_freq, err, errlen);
    TokenCount *chosen = malloc(((size_t)counts->n + 1) * sizeof *chosen);
    int n = 0, rc = chosen ? 0 : -1;
    if (chosen) {
        for (int e = 0; e < counts->n; e++) {
            if (counts->counts[e] < min_freq) continue;
            chosen[n].token = counts->keys[e];
            chosen[n].count = counts->counts[e];
            n++;
        }
        qsort(chosen, (size_t)n, sizeof *chosen, compare_token_counts);
        if (max_size > 0 && n > max_size - N_SPECIAL_TOKENS) n = max_size - N_SPECIAL_TOKENS;
        rc = vocab_fill(v, chosen, n);
    }
    free(chosen);
    if (rc) {
        vocab_free(v);
        return fail(err, errlen, ERR_RUNTIME, "out of memory building the vocabulary");
    }
    return EXIT_OK;
}

int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq, char *err,
                size_t errlen) {
    if (!v || !train) return fail(err, errlen, ERR_RUNTIME, "vocab_build: missing argument");
    memset(v, 0, sizeof *v);
    StrMap counts;
    memset(&counts, 0, sizeof counts);
    const char *path = train->path ? train->path : "(data)";
    int rc = vocab_count(&counts, kind, train) == 0
                 ? vocab_from_counts(v, kind, &counts, max_size, min_freq, err, errlen)
                 : fail(err, errlen, ERR_RUNTIME, "%s: out of memory building the vocabulary", path);
    strmap_free(&counts);
    if (rc == ERR_RUNTIME && strncmp(err, path, strlen(path)) != 0) {   /* name the data in the message */
        char why[512];
        snprintf(why, sizeof why, "%s", err);
        set_error(err, errlen, "%s: %s", path, why);
    }
    return rc;
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

