/* bpe_learn.c: counting the training pieces and learning the BPE merges
 * from them (see bpe.h for the rules).
 *
 * Learning keeps every distinct piece as a linked list of positions, the
 * count of each adjacent pair (weighted by piece count), a list of the
 * positions where each pair was formed (entries go stale, they are checked
 * when used) and a binary heap of (count, pair) with lazy deletion: an entry
 * whose count is no longer the pair's is dropped when it surfaces. A merge
 * only touches the positions of its own pair, so its cost is its occurrences,
 * however long the pieces. */
#include "text/bpe.h"

#include "base/errors.h"
#include "text/bpe_tables.h"
#include "text/tokenizer.h"

#include <stdlib.h>
#include <string.h>

/* ---- Counting ---- */

BpeCounter *bpe_counter_new(void) { return calloc(1, sizeof(BpeCounter)); }

void bpe_counter_free(BpeCounter *c) {
    if (!c) return;
    strset_free(&c->pieces);
    free(c);
}

int bpe_counter_add(BpeCounter *c, const char *piece, size_t len) { return bpe_counter_add_count(c, piece, len, 1); }

int bpe_counter_add_count(BpeCounter *c, const char *piece, size_t len, long long count) {
    if (!c || (!piece && len) || count < 0) return -1;
    if (len == 0) return 0;
    if (memchr(piece, '\0', len)) return -1;
    return strset_add(&c->pieces, piece, len, count) < 0 ? -1 : 0;
}

static int count_token(const char *piece, size_t len, int special, void *ctx) {
    return special >= 0 ? 0 : bpe_counter_add(ctx, piece, len);
}

int bpe_counter_add_text(BpeCounter *c, const char *text) {
    if (!c) return -1;
    return text ? tokenize(TOKENIZER_WORD, text, count_token, c) : 0;
}

/* ---- Learning ---- */

typedef struct {
    int left, right; /* symbol ids */
    long long count; /* adjacent occurrences now, weighted by piece count */
    int head;        /* first of the Nodes listing where it was formed, -1 none */
    int touched;     /* 1 while listed in Learner.touched */
} Pair;

typedef struct {
    int pos, next; /* a position where a pair was formed; the next Node or -1 */
} Node;

typedef struct {
    long long count; /* the pair's count when pushed */
    int pair;        /* index in Learner.pairs */
} HeapItem;

typedef struct {
    Bpe *b;
    int n_pos;           /* units of all distinct pieces, laid end to end */
    int *sym;            /* [n_pos] symbol id, -1 once merged into its left neighbour */
    int *prev, *next;    /* [n_pos] neighbours in the piece, -1 at its ends */
    long long *weight;   /* [n_pos] count of the piece holding the position */
    Pair *pairs;         /* every pair ever counted */
    int n_pairs, pairs_cap;
    PairMap pair_of;     /* (left, right) -> index in pairs */
    Node *nodes;         /* pool of the pairs' position lists */
    int n_nodes, nodes_cap;
    HeapItem *heap;      /* best first: count desc, left then right in byte order */
    int n_heap, heap_cap;
    int *touched;        /* pairs whose count changed since the heap last saw them */
    int n_touched, touched_cap;
    int *work;           /* positions of the pair being merged */
    int work_cap;
} Learner;

static void learner_free(Learner *L) {
    free(L->sym);
    free(L->prev);
    free(L->next);
    free(L->weight);
    free(L->pairs);
    free(L->pair_of.slot);
    free(L->nodes);
    free(L->heap);
    free(L->touched);
    free(L->work);
}

/* Adds delta to the count of (left, right), noting pos (>= 0) as a place it
 * was formed. Pairs holding [UNK] are not counted. Returns 0 or -1 (memory). */
static int pair_change(Learner *L, int left, int right, long long delta, int pos) {
    if (left == BPE_UNK || right == BPE_UNK) return 0;
    uint64_t k = pair_key(left, right);
    int p = pairmap_get(&L->pair_of, k);
    if (p < 0) {
        if (grow(&L->pairs, &L->pairs_cap, L->n_pairs + 1, sizeof *L->pairs)) return -1;
        if (pairmap_put(&L->pair_of, k, L->n_pairs)) return -1;
        p = L->n_pairs++;
        L->pairs[p] = (Pair){left, right, 0, -1, 0};
    }
    Pair *pr = &L->pairs[p];
    pr->count += delta;
    if (pos >= 0) {
        if (grow(&L->nodes, &L->nodes_cap, L->n_nodes + 1, sizeof *L->nodes)) return -1;
        L->nodes[L->n_nodes] = (Node){pos, pr->head};
        pr->head = L->n_nodes++;
    }
    if (!pr->touched) {
        if (grow(&L->touched, &L->touched_cap, L->n_touched + 1, sizeof *L->touched)) return -1;
        L->touched[L->n_touched++] = p;
        pr->touched = 1;
    }
    return 0;
}

/* Whether heap item a ranks before b. */
static int item_before(const Learner *L, HeapItem a, HeapItem b) {
    if (a.count != b.count) return a.count > b.count;
    const Pair *x = &L->pairs[a.pair], *y = &L->pairs[b.pair];
    const Entry *e = L->b->sym.e;
    int c = x->left == y->left ? 0 : bytes_cmp(e[x->left].str, e[x->left].len, e[y->left].str, e[y->left].len);
    if (c == 0 && x->right != y->right)
        c = bytes_cmp(e[x->right].str, e[x->right].len, e[y->right].str, e[y->right].len);
    return c < 0;
}

static void heap_sift_down(Learner *L, int i) {
    HeapItem *h = L->heap;
    for (;;) {
        int best = i, l = 2 * i + 1, r = l + 1;
        if (l < L->n_heap && item_before(L, h[l], h[best])) best = l;
        if (r < L->n_heap && item_before(L, h[r], h[best])) best = r;
        if (best == i) return;
        HeapItem t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/* Pushes the touched pairs that still occur, with their counts now. */
static int push_touched(Learner *L) {
    for (int t = 0; t < L->n_touched; t++) {
        Pair *pr = &L->pairs[L->touched[t]];
        pr->touched = 0;
        if (pr->count <= 0) continue;
        if (grow(&L->heap, &L->heap_cap, L->n_heap + 1, sizeof *L->heap)) return -1;
        int i = L->n_heap++;
        L->heap[i] = (HeapItem){pr->count, L->touched[t]};
        while (i > 0 && item_before(L, L->heap[i], L->heap[(i - 1) / 2])) {
            HeapItem tmp = L->heap[i];
            L->heap[i] = L->heap[(i - 1) / 2];
            L->heap[(i - 1) / 2] = tmp;
            i = (i - 1) / 2;
        }
    }
    L->n_touched = 0;
    return 0;
}

/* Pops the best pair whose heap count is current: its index, or -1. */
static int pop_best(Learner *L) {
    while (L->n_heap > 0) {
        HeapItem top = L->heap[0];
        L->heap[0] = L->heap[--L->n_heap];
        heap_sift_down(L, 0);
        if (top.count == L->pairs[top.pair].count) return top.pair;
    }
    return -1;
}

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Replaces pair p's occurrences by result, left to right without overlap,
 * keeping the neighbouring pair counts. Returns 0 or -1 (memory). */
static int merge_pair(Learner *L, int p, int result) {
    int left = L->pairs[p].left, right = L->pairs[p].right, n = 0;
    for (int k = L->pairs[p].head; k >= 0; k = L->nodes[k].next) {
        if (grow(&L->work, &L->work_cap, n + 1, sizeof *L->work)) return -1;
        L->work[n++] = L->nodes[k].pos;
    }
    L->pairs[p].head = -1;
    qsort(L->work, (size_t)n, sizeof *L->work, cmp_int);
    int *sym = L->sym;
    for (int k = 0; k < n; k++) {
        int i = L->work[k], j = L->next[i];
        if (sym[i] != left || j < 0 || sym[j] != right) continue; /* stale, or taken by an overlap */
        long long w = L->weight[i];
        int before = L->prev[i], after = L->next[j];
        if ((before >= 0 && pair_change(L, sym[before], left, -w, -1)) || pair_change(L, left, right, -w, -1) ||
            (after >= 0 && pair_change(L, right, sym[after], -w, -1)))
            return -1;
        sym[i] = result;
        sym[j] = -1;
        L->next[i] = after;
        if (after >= 0) L->prev[after] = i;
        if ((before >= 0 && pair_change(L, sym[before], result, w, before)) ||
            (after >= 0 && pair_change(L, result, sym[after], w, i)))
            return -1;
    }
    return push_touched(L);
}

/* Count descending, then byte order. */
static int cmp_base(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return bytes_cmp(x->str, x->len, y->str, y->len);
}

/* Counts the base symbols, gives ids to the kept ones and lays out the
 * pieces' positions. Returns 0 or -1 with err set. */
static int learner_bases(Learner *L, const StrSet *pieces, int vocab_size, int min_freq, char *err, size_t errlen) {
    StrSet base = {0};
    Entry *order = NULL;
    char buf[MARK_LEN + UNIT_MAX];
    long long n_pos = 0;
    for (const Entry *p = pieces->e; p < pieces->e + pieces->n; p++)
        for (size_t i = 0, u; i < p->len; i += u, n_pos++) {
            u = unit_len(p->str + i, p->len - i);
            if (strset_add(&base, buf, unit_symbol(p->str + i, u, i == 0, buf), p->count) < 0) goto oom;
        }
    if (n_pos > INT_MAX / 4) {
        strset_free(&base);
        return fail(err, errlen, -1, "the training pieces hold %lld code points, more than %d", n_pos, INT_MAX / 4);
    }
    order = malloc(((size_t)base.n + 1) * sizeof *order);
    if (!order) goto oom;
    int n_kept = 0;
    for (int id = 0; id < base.n; id++)
        if (base.e[id].count >= min_freq) order[n_kept++] = base.e[id];
    qsort(order, (size_t)n_kept, sizeof *order, cmp_base);
    if (n_kept > vocab_size - BPE_N_SPECIAL) n_kept = vocab_size - BPE_N_SPECIAL;
    for (int k = 0; k < n_kept; k++)
        if (strset_add(&L->b->sym, order[k].str, order[k].len, 0) < 0) goto oom;
    L->n_pos = (int)n_pos;
    size_t n = (size_t)n_pos + 1;
    L->sym = malloc(n * sizeof *L->sym);
    L->prev = malloc(n * sizeof *L->prev);
    L->next = malloc(n * sizeof *L->next);
    L->weight = malloc(n * sizeof *L->weight);
    if (!L->sym || !L->prev || !L->next || !L->weight) goto oom;
    int pos = 0;
    for (const Entry *p = pieces->e; p < pieces->e + pieces->n; p++)
        for (size_t i = 0, u; i < p->len; i += u, pos++) {
            u = unit_len(p->str + i, p->len - i);
            L->sym[pos] = bpe_lookup(L->b, buf, unit_symbol(p->str + i, u, i == 0, buf));
            L->prev[pos] = i == 0 ? -1 : pos - 1;
            L->next[pos] = i + u < p->len ? pos + 1 : -1;
            L->weight[pos] = p->count;
        }
    free(order);
    strset_free(&base);
    return 0;
oom:
    free(order);
    strset_free(&base);
    return fail(err, errlen, -1, "out of memory counting the base symbols");
}

/* Counts the initial pairs, then merges until the vocabulary is full or the
 * best count is below the floor. Returns 0 or -1 (memory). */
static int learner_run(Learner *L, int vocab_size, int min_freq) {
    for (int i = 0; i < L->n_pos; i++)
        if (L->next[i] >= 0 && pair_change(L, L->sym[i], L->sym[L->next[i]], L->weight[i], i)) return -1;
    if (push_touched(L)) return -1;
    long long least = min_freq > 2 ? min_freq : 2; /* the smallest count worth a merge */
    while (L->b->sym.n < vocab_size) {
        int p = pop_best(L);
        if (p < 0 || L->pairs[p].count < least) break;
        int added, result = bpe_concat(L->b, L->pairs[p].left, L->pairs[p].right, &added);
        if (result < 0 || bpe_add_merge(L->b, L->pairs[p].left, L->pairs[p].right, result)) return -1;
        if (merge_pair(L, p, result)) return -1;
    }
    return 0;
}

int bpe_learn(const BpeCounter *c, int vocab_size, int min_freq, Bpe **out, char *err, size_t errlen) {
    if (!out) return fail(err, errlen, -1, "bpe_learn: no place for the result");
    *out = NULL;
    if (!c) return fail(err, errlen, -1, "bpe_learn: no piece counter");
    if (vocab_size < BPE_N_SPECIAL)
        return fail(err, errlen, -1, "the BPE vocabulary size must be at least %d (the specials), got %d", BPE_N_SPECIAL,
                    vocab_size);
    if (min_freq < 0) return fail(err, errlen, -1, "the BPE min_freq must be 0 or more, got %d", min_freq);
    Learner L = {0};
    L.b = bpe_new();
    if (!L.b) return fail(err, errlen, -1, "out of memory starting the BPE vocabulary");
    int rc = learner_bases(&L, &c->pieces, vocab_size, min_freq, err, errlen);
    if (!rc && learner_run(&L, vocab_size, min_freq)) rc = fail(err, errlen, -1, "out of memory learning BPE merges");
    learner_free(&L);
    if (rc) {
        bpe_free(L.b);
        return -1;
    }
    *out = L.b;
    return 0;
}
