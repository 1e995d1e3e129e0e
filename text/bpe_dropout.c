/* bpe_dropout.c: BPE-dropout on encoded training batches (see bpe_dropout.h). */
#include "text/bpe_dropout.h"

#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "base/tokens.h"

int bpe_splits_build(BpeSplits *s, const Bpe *b) {
    memset(s, 0, sizeof *s);
    int n = bpe_vocab_size(b);
    s->parts = malloc(sizeof(int) * 2 * (size_t)(n > 0 ? n : 1));
    if (!s->parts) return -1;
    s->n = n;
    for (int i = 0; i < 2 * n; i++) s->parts[i] = -1;
    char *joined = NULL;
    size_t room = 0;
    for (int r = 0; r < bpe_n_merges(b); r++) {   /* in learned order: the first merge of a symbol wins */
        const char *left, *right;
        if (bpe_merge(b, r, &left, &right) != 0) continue;
        size_t nl = strlen(left), nr = strlen(right);
        if (nl + nr + 1 > room) {
            char *grown = realloc(joined, nl + nr + 1);
            if (!grown) {
                free(joined);
                bpe_splits_free(s);
                return -1;
            }
            joined = grown;
            room = nl + nr + 1;
        }
        memcpy(joined, left, nl);
        memcpy(joined + nl, right, nr + 1);
        int result = bpe_lookup(b, joined, nl + nr);
        if (result < N_SPECIAL_TOKENS || s->parts[2 * result] >= 0) continue;
        s->parts[2 * result] = bpe_lookup(b, left, nl);
        s->parts[2 * result + 1] = bpe_lookup(b, right, nr);
    }
    free(joined);
    return 0;
}

void bpe_splits_free(BpeSplits *s) {
    free(s->parts);
    memset(s, 0, sizeof *s);
}

static int has_parts(const BpeSplits *s, int sym) { return sym >= 0 && sym < s->n && s->parts[2 * sym] >= 0; }

/* Writes sym's split into out (room places) depth first, left part first,
 * drawing keyed from `first`; returns the count, or -1 when more than room
 * would be needed. stack holds room + 1 ints: each symbol on it becomes at
 * least one piece, so it never holds more than the pieces still to come. */
static int split_symbol(int sym, int *out, int room, const BpeSplits *s, const BpeDropoutKey *key, uint64_t first,
                        int *stack) {
    int n = 0, top = 0;
    uint64_t draw = 0;
    stack[top++] = sym;
    while (top > 0) {
        int x = stack[--top];
        if (has_parts(s, x) && rng_uniform(key->seed, key->step, BPE_DROPOUT_SITE, first + draw++) < key->p) {
            if (n + top + 2 > room) return -1;
            stack[top++] = s->parts[2 * x + 1];
            stack[top++] = s->parts[2 * x];
        } else {
            out[n++] = x;
        }
    }
    return n;
}

/* Row b of tokens (length T) split into out (max_len places); returns its length. */
static int split_row(const int *row, int T, int max_len, int place, const BpeSplits *s, const BpeDropoutKey *key,
                     int *out, int *stack) {
    int len = 0;
    while (len < T && row[len] != TOKEN_PAD) len++;
    int m = 0;
    for (int k = 0; k < len; k++) {
        int room = max_len - m - (len - k - 1);   /* one place kept for each token after this one */
        int got = -1;
        if (has_parts(s, row[k]) && key->p > 0.0) {
            uint64_t first = ((uint64_t)place << 40) + ((uint64_t)k << 20);
            got = split_symbol(row[k], out + m, room, s, key, first, stack);
        }
        if (got < 0) out[m++] = row[k];
        else m += got;
    }
    return m;
}

int bpe_dropout_batch(int *tokens, int B, int T, int max_len, const BpeSplits *s, BpeDropoutKey key, int *work) {
    if (B <= 0 || T <= 0 || key.p <= 0.0 || !s || !s->parts) return T;
    int *rows_out = work, *lengths = work + (size_t)B * max_len, *stack = lengths + B;
    int longest = 0;
    for (int b = 0; b < B; b++) {
        int place = key.rows ? key.rows[b] : b;
        lengths[b] = split_row(tokens + (size_t)b * T, T, max_len, place, s, &key, rows_out + (size_t)b * max_len,
                               stack);
        if (lengths[b] > longest) longest = lengths[b];
    }
    for (int b = 0; b < B; b++)
        for (int k = 0; k < longest; k++)
            tokens[(size_t)b * longest + k] = k < lengths[b] ? rows_out[(size_t)b * max_len + k] : TOKEN_PAD;
    return longest;
}
