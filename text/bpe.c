/* bpe.c: the byte-pair-encoding tokenizer (see bpe.h for the rules): the
 * vocabulary and its merges, rebuilding them from stored lists, and
 * encoding. Learning the merges is in bpe_learn.c.
 *
 * Encoding keeps a piece's units as a linked list and a heap of candidate
 * merges keyed on (rank, position); see encode_units. */
#include "text/bpe.h"

#include "base/errors.h"
#include "text/bpe_tables.h"
#include "text/tokenizer.h"

#include <stdlib.h>
#include <string.h>

/* ---- The vocabulary and merges ---- */

void bpe_free(Bpe *b) {
    if (!b) return;
    strset_free(&b->sym);
    free(b->merges);
    free(b->rank.slot);
    free(b);
}

Bpe *bpe_new(void) {
    Bpe *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    for (int i = 0; i < BPE_N_SPECIAL; i++)
        if (strset_add(&b->sym, TOKEN_NAMES[i], strlen(TOKEN_NAMES[i]), 0) != i) {
            bpe_free(b);
            return NULL;
        }
    return b;
}

int bpe_add_merge(Bpe *b, int left, int right, int result) {
    if (grow(&b->merges, &b->merges_cap, b->n_merges + 1, sizeof *b->merges)) return -1;
    uint64_t k = pair_key(left, right);
    if (pairmap_get(&b->rank, k) < 0 && pairmap_put(&b->rank, k, b->n_merges)) return -1;
    b->merges[b->n_merges++] = (Merge){left, right, result};
    return 0;
}

int bpe_concat(Bpe *b, int left, int right, int *added) {
    size_t nl = b->sym.e[left].len, nr = b->sym.e[right].len;
    char *s = malloc(nl + nr + 1);
    if (!s) return -1;
    memcpy(s, b->sym.e[left].str, nl);
    memcpy(s + nl, b->sym.e[right].str, nr);
    int id = strset_find(&b->sym, s, nl + nr);
    *added = id < 0;
    if (id < 0) id = strset_add(&b->sym, s, nl + nr, 0);
    free(s);
    return id;
}

int bpe_vocab_size(const Bpe *b) { return b ? b->sym.n : 0; }
int bpe_n_merges(const Bpe *b) { return b ? b->n_merges : 0; }

const char *bpe_symbol(const Bpe *b, int id) { return b && id >= 0 && id < b->sym.n ? b->sym.e[id].str : NULL; }

int bpe_merge(const Bpe *b, int i, const char **left, const char **right) {
    if (!b || i < 0 || i >= b->n_merges) return -1;
    if (left) *left = b->sym.e[b->merges[i].left].str;
    if (right) *right = b->sym.e[b->merges[i].right].str;
    return 0;
}

int bpe_lookup(const Bpe *b, const char *s, size_t len) {
    int id = b && s ? strset_find(&b->sym, s, len) : -1;
    return id < 0 ? BPE_UNK : id;
}

/* ---- Rebuilding from stored lists ---- */

/* Whether s (len > 0 bytes) is one unit, marked or not. */
static int is_single_unit(const char *s, size_t len) {
    if (unit_len(s, len) == len) return 1;
    return len > MARK_LEN && memcmp(s, MARK, MARK_LEN) == 0 && unit_len(s + MARK_LEN, len - MARK_LEN) == len - MARK_LEN;
}

/* Adds the merges of the lists to b, checking them; made[id] is set for each
 * symbol that exists so far. Returns 0 or -1 with err set. */
static int add_listed_merges(Bpe *b, const char *const (*merges)[2], int n_merges, char *made, char *err,
                             size_t errlen) {
    for (int i = 0; i < n_merges; i++) {
        int ids[2];
        for (int side = 0; side < 2; side++) {
            const char *s = merges[i][side];
            if (!s) return fail(err, errlen, -1, "merge %d has no %s symbol", i, side ? "right" : "left");
            ids[side] = strset_find(&b->sym, s, strlen(s));
            if (ids[side] < 0) return fail(err, errlen, -1, "merge %d: \"%.40s\" is not in the vocab", i, s);
            if (ids[side] < BPE_N_SPECIAL) return fail(err, errlen, -1, "merge %d uses the special %s", i, s);
            if (!made[ids[side]])
                return fail(err, errlen, -1, "merge %d uses \"%.40s\" before any merge makes it", i, s);
        }
        int added, result = bpe_concat(b, ids[0], ids[1], &added);
        if (result < 0) return fail(err, errlen, -1, "out of memory rebuilding the BPE merges");
        if (added || result < BPE_N_SPECIAL)
            return fail(err, errlen, -1, "merge %d: \"%.40s\" + \"%.40s\" is %s", i, merges[i][0], merges[i][1],
                        added ? "not in the vocab" : "a special token");
        if (bpe_add_merge(b, ids[0], ids[1], result)) return fail(err, errlen, -1, "out of memory rebuilding the BPE merges");
        made[result] = 1;
    }
    return 0;
}

static int check_lists(Bpe *b, const char *const *vocab, int n_vocab, const char *const (*merges)[2], int n_merges,
                       char *err, size_t errlen) {
    if (!vocab || n_vocab < BPE_N_SPECIAL)
        return fail(err, errlen, -1, "the BPE vocab has %d symbols; it needs at least the %d specials", vocab ? n_vocab : 0,
                    BPE_N_SPECIAL);
    if (n_merges < 0 || (n_merges > 0 && !merges)) return fail(err, errlen, -1, "the BPE merges list is missing");
    for (int i = 0; i < BPE_N_SPECIAL; i++)
        if (!vocab[i] || strcmp(vocab[i], TOKEN_NAMES[i]) != 0)
            return fail(err, errlen, -1, "BPE vocab[%d] is \"%.40s\", expected \"%s\"", i, vocab[i] ? vocab[i] : "(null)",
                        TOKEN_NAMES[i]);
    for (int i = BPE_N_SPECIAL; i < n_vocab; i++) {
        if (!vocab[i] || !vocab[i][0]) return fail(err, errlen, -1, "BPE vocab[%d] is empty", i);
        size_t len = strlen(vocab[i]);
        int seen = strset_find(&b->sym, vocab[i], len);
        if (seen >= 0) return fail(err, errlen, -1, "BPE vocab[%d] \"%.40s\" repeats vocab[%d]", i, vocab[i], seen);
        if (strset_add(&b->sym, vocab[i], len, 0) != i) return fail(err, errlen, -1, "out of memory rebuilding the BPE vocab");
    }
    char *made = calloc((size_t)n_vocab, 1);
    if (!made) return fail(err, errlen, -1, "out of memory rebuilding the BPE vocab");
    for (int i = BPE_N_SPECIAL; i < n_vocab; i++) made[i] = (char)is_single_unit(vocab[i], strlen(vocab[i]));
    int rc = add_listed_merges(b, merges, n_merges, made, err, errlen);
    for (int i = BPE_N_SPECIAL; !rc && i < n_vocab; i++)
        if (!made[i]) rc = fail(err, errlen, -1, "BPE vocab[%d] \"%.40s\" is neither one code point nor made by a merge", i,
                                vocab[i]);
    free(made);
    return rc;
}

int bpe_from_lists(const char *const *vocab, int n_vocab, const char *const (*merges)[2], int n_merges, Bpe **out,
                   char *err, size_t errlen) {
    if (!out) return fail(err, errlen, -1, "bpe_from_lists: no place for the result");
    *out = NULL;
    Bpe *b = bpe_new();
    if (!b) return fail(err, errlen, -1, "out of memory rebuilding the BPE vocab");
    if (check_lists(b, vocab, n_vocab, merges, n_merges, err, errlen)) {
        bpe_free(b);
        return -1;
    }
    *out = b;
    return 0;
}

/* ---- Encoding ---- */

typedef struct {
    int rank, pos; /* a merge's rank and the position of its left symbol */
} Cand;

typedef struct {
    int *sym, *prev, *next; /* [cap] per unit: symbol id (-1 once merged away), neighbours (-1 none) */
    int cap;
    Cand *heap;             /* candidate merges, least (rank, pos) first; entries may be stale */
    int n_heap, heap_cap;
    Cand *held;             /* candidates ranked before the current round, pushed when it ends */
    int n_held, held_cap;
} Work;

static void work_free(Work *w) {
    free(w->sym);
    free(w->prev);
    free(w->next);
    free(w->heap);
    free(w->held);
}

/* The rank of the merge of (left, right), or -1 when none ([UNK] has none). */
static int rank_of(const Bpe *b, int left, int right) {
    return left == BPE_UNK || right == BPE_UNK ? -1 : pairmap_get(&b->rank, pair_key(left, right));
}

static int cand_before(Cand a, Cand b) { return a.rank != b.rank ? a.rank < b.rank : a.pos < b.pos; }

static int cand_push(Work *w, Cand c) {
    if (grow(&w->heap, &w->heap_cap, w->n_heap + 1, sizeof *w->heap)) return -1;
    int i = w->n_heap++;
    for (; i > 0 && cand_before(c, w->heap[(i - 1) / 2]); i = (i - 1) / 2) w->heap[i] = w->heap[(i - 1) / 2];
    w->heap[i] = c;
    return 0;
}

static Cand cand_pop(Work *w) {
    Cand top = w->heap[0], last = w->heap[--w->n_heap];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= w->n_heap) break;
        if (c + 1 < w->n_heap && cand_before(w->heap[c + 1], w->heap[c])) c++;
        if (!cand_before(w->heap[c], last)) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->n_heap > 0) w->heap[i] = last;
    return top;
}

/* Notes the merge candidate at pos (if its pair has a merge): held back when
 * ranked before the current round, whose occurrences all go first. */
static int note_cand(const Bpe *b, Work *w, int pos, int round) {
    int j = w->next[pos];
    int rank = j >= 0 ? rank_of(b, w->sym[pos], w->sym[j]) : -1;
    if (rank < 0) return 0;
    if (rank >= round) return cand_push(w, (Cand){rank, pos});
    if (grow(&w->held, &w->held_cap, w->n_held + 1, sizeof *w->held)) return -1;
    w->held[w->n_held++] = (Cand){rank, pos};
    return 0;
}

/* Lays out the marked units of the piece in w. Returns the count or -1. */
static int load_units(const Bpe *b, Work *w, const char *piece, size_t len) {
    if (len > INT_MAX / 2) return -1;
    int cap = w->cap;
    if (grow(&w->sym, &cap, (int)len, sizeof *w->sym)) return -1;
    cap = w->cap;
    if (grow(&w->prev, &cap, (int)len, sizeof *w->prev)) return -1;
    cap = w->cap;
    if (grow(&w->next, &cap, (int)len, sizeof *w->next)) return -1;
    w->cap = cap;
    char buf[MARK_LEN + UNIT_MAX];
    int n = 0;
    for (size_t i = 0, u; i < len; i += u, n++) {
        u = unit_len(piece + i, len - i);
        int id = bpe_lookup(b, buf, unit_symbol(piece + i, u, i == 0, buf));
        w->sym[n] = id < BPE_N_SPECIAL ? BPE_UNK : id; /* no symbol holds a NUL byte */
        w->prev[n] = n - 1;
        w->next[n] = n + 1;
    }
    if (n > 0) w->next[n - 1] = -1;
    return n;
}

/* Encodes the piece into w's linked list (head at 0). Rounds: the least
 * rank present is merged at all its positions left to right (the heap pops
 * them in position order; a position merged away or changed is stale), new
 * pairs ranked before the round wait in held until it ends. Returns the
 * unit count or -1. */
static int encode_units(const Bpe *b, Work *w, const char *piece, size_t len) {
    int n = load_units(b, w, piece, len);
    if (n <= 0) return n;
    w->n_heap = w->n_held = 0;
    for (int i = 0; i + 1 < n; i++)
        if (note_cand(b, w, i, 0)) return -1;
    int round = -1;
    for (;;) {
        if (w->n_heap == 0 || (w->heap[0].rank != round && w->n_held > 0)) {
            if (w->n_held == 0) break;
            for (int k = 0; k < w->n_held; k++)
                if (cand_push(w, w->held[k])) return -1;
            w->n_held = 0;
        }
        Cand c = cand_pop(w);
        int i = c.pos, j = w->next[i];
        if (w->sym[i] < 0 || j < 0 || rank_of(b, w->sym[i], w->sym[j]) != c.rank) continue;
        round = c.rank;
        w->sym[i] = b->merges[c.rank].result;
        w->sym[j] = -1;
        w->next[i] = w->next[j];
        if (w->next[i] >= 0) w->prev[w->next[i]] = i;
        if ((w->prev[i] >= 0 && note_cand(b, w, w->prev[i], round)) || note_cand(b, w, i, round)) return -1;
    }
    return n;
}

/* Appends the encoded piece's ids to ids[*total..cap). */
static void emit(const Work *w, int n, int *ids, int cap, long long *total) {
    for (int i = n > 0 ? 0 : -1; i >= 0; i = w->next[i], ++*total)
        if (*total < cap) ids[*total] = w->sym[i];
}

static int finish_total(long long total) { return total > INT_MAX ? -1 : (int)total; }

int bpe_encode_piece(const Bpe *b, const char *piece, size_t len, int *ids, int cap) {
    if (!b || (!piece && len) || cap < 0 || (cap > 0 && !ids)) return -1;
    Work w = {0};
    long long total = 0;
    int n = encode_units(b, &w, piece, len);
    if (n >= 0) emit(&w, n, ids, cap, &total);
    work_free(&w);
    return n < 0 ? -1 : finish_total(total);
}

typedef struct {
    const Bpe *b;
    Work w;
    int *ids, cap;
    long long total;
} TextJob;

static int encode_token(const char *piece, size_t len, int special, void *ctx) {
    TextJob *job = ctx;
    if (special >= 0) {
        if (job->total < job->cap) job->ids[job->total] = special;
        job->total++;
        return 0;
    }
    int n = encode_units(job->b, &job->w, piece, len);
    if (n < 0) return -1;
    emit(&job->w, n, job->ids, job->cap, &job->total);
    return 0;
}

int bpe_encode_text(const Bpe *b, const char *text, int *ids, int cap) {
    if (!b || cap < 0 || (cap > 0 && !ids)) return -1;
    if (!text) return 0;
    TextJob job = {b, {0}, ids, cap, 0};
    int rc = tokenize(TOKENIZER_WORD, text, encode_token, &job);
    work_free(&job.w);
    return rc ? -1 : finish_total(job.total);
}
