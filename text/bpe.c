/* bpe.c: the byte-pair-encoding tokenizer (see bpe.h for the rules).
 *
 * Learning keeps every distinct piece as a linked list of positions, the
 * count of each adjacent pair (weighted by piece count), a list of the
 * positions where each pair was formed (entries go stale, they are checked
 * when used) and a binary heap of (count, pair) with lazy deletion: an entry
 * whose count is no longer the pair's is dropped when it surfaces. A merge
 * only touches the positions of its own pair, so its cost is its occurrences,
 * however long the pieces.
 *
 * Encoding keeps a piece's units as a linked list and a heap of candidate
 * merges keyed on (rank, position); see encode_units. */
#include "text/bpe.h"

#include "base/errors.h"
#include "text/tokenizer.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARK "\xE2\x96\x81" /* U+2581, the first unit's marker */
#define MARK_LEN 3
#define UNIT_MAX 4          /* bytes in a unit */
#define NO_KEY UINT64_MAX   /* an empty PairMap slot */


/* Makes *(T **)pp hold at least need elements of elem bytes (*cap counts
 * them). Returns 0, or -1 when out of memory or past INT_MAX / 2. */
static int grow(void *pp, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    if (need > INT_MAX / 2) return -1;
    int n = *cap > 8 ? *cap : 8;
    while (n < need) n *= 2;
    void *p;
    memcpy(&p, pp, sizeof p);
    p = realloc(p, (size_t)n * elem);
    if (!p) return -1;
    memcpy(pp, &p, sizeof p);
    *cap = n;
    return 0;
}

/* Bytes of the unit at s (n > 0 bytes left): a well-formed UTF-8 sequence
 * whole, any other byte alone. */
static size_t unit_len(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t u = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    if (u > n) return 1;
    for (size_t k = 1; k < u; k++)
        if (((unsigned char)s[k] & 0xC0) != 0x80) return 1;
    return u;
}

/* The symbol of the unit of u bytes at s, marked when first: into buf
 * (MARK_LEN + UNIT_MAX bytes), its length returned. */
static size_t unit_symbol(const char *s, size_t u, int first, char *buf) {
    size_t n = first ? MARK_LEN : 0;
    memcpy(buf, MARK, n);
    memcpy(buf + n, s, u);
    return n + u;
}

/* Byte order: memcmp, a prefix first. */
static int bytes_cmp(const char *a, size_t na, const char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
    return h ^ (h >> 29);
}

/* ---- StrSet: distinct strings with ids in insertion order and counts ---- */

typedef struct {
    char *str;       /* owned NUL-terminated copy */
    size_t len;      /* its byte length */
    long long count; /* summed weights given to strset_add */
} Entry;

typedef struct {
    Entry *e;    /* [n] id -> string, in insertion order */
    int n, cap;  /* entries held / room in e */
    int *slot;   /* [mask + 1] id or -1: open addressing, linear probing */
    size_t mask; /* slot count - 1 (the slot count is a power of two) */
} StrSet;

static size_t strset_probe(const StrSet *s, const char *p, size_t len) {
    size_t i = hash_bytes(p, len) & s->mask;
    for (;;) {
        int id = s->slot[i];
        if (id < 0 || (s->e[id].len == len && memcmp(s->e[id].str, p, len) == 0)) return i;
        i = (i + 1) & s->mask;
    }
}

/* The id of the len bytes at p, or -1. */
static int strset_find(const StrSet *s, const char *p, size_t len) {
    return s->slot ? s->slot[strset_probe(s, p, len)] : -1;
}

/* Adds w to the count of the len bytes at p, inserting a copy when new.
 * Returns its id, or -1 when out of memory. */
static int strset_add(StrSet *s, const char *p, size_t len, long long w) {
    if (!s->slot || (size_t)s->n * 2 + 2 > s->mask + 1) {
        size_t n_slots = s->slot ? (s->mask + 1) * 2 : 64;
        int *slot = malloc(n_slots * sizeof *slot);
        if (!slot) return -1;
        for (size_t i = 0; i < n_slots; i++) slot[i] = -1;
        free(s->slot);
        s->slot = slot;
        s->mask = n_slots - 1;
        for (int id = 0; id < s->n; id++) s->slot[strset_probe(s, s->e[id].str, s->e[id].len)] = id;
    }
    size_t i = strset_probe(s, p, len);
    if (s->slot[i] >= 0) {
        s->e[s->slot[i]].count += w;
        return s->slot[i];
    }
    char *copy = malloc(len + 1);
    if (!copy || grow(&s->e, &s->cap, s->n + 1, sizeof *s->e)) {
        free(copy);
        return -1;
    }
    memcpy(copy, p, len);
    copy[len] = '\0';
    s->e[s->n] = (Entry){copy, len, w};
    s->slot[i] = s->n;
    return s->n++;
}

static void strset_free(StrSet *s) {
    for (int id = 0; id < s->n; id++) free(s->e[id].str);
    free(s->e);
    free(s->slot);
}

/* ---- PairMap: (left id, right id) -> int ---- */

typedef struct {
    uint64_t key; /* left << 32 | right, or NO_KEY when empty */
    int val;      /* the value stored with key */
} Slot;

typedef struct {
    Slot *slot;  /* [mask + 1] open addressing, linear probing */
    size_t mask; /* slot count - 1 (the slot count is a power of two) */
    size_t n;    /* keys stored */
} PairMap;

static uint64_t pair_key(int left, int right) { return (uint64_t)(uint32_t)left << 32 | (uint32_t)right; }

static size_t pairmap_probe(const PairMap *m, uint64_t k) {
    uint64_t h = k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h ^ (h >> 31)) & m->mask;
    while (m->slot[i].key != NO_KEY && m->slot[i].key != k) i = (i + 1) & m->mask;
    return i;
}

static int pairmap_get(const PairMap *m, uint64_t k) {
    if (!m->slot) return -1;
    const Slot *s = &m->slot[pairmap_probe(m, k)];
    return s->key == k ? s->val : -1;
}

/* Stores val for k (replacing any). Returns 0, or -1 when out of memory. */
static int pairmap_put(PairMap *m, uint64_t k, int val) {
    if (!m->slot || (m->n + 1) * 2 > m->mask + 1) {
        size_t n_old = m->slot ? m->mask + 1 : 0, n_slots = n_old ? n_old * 2 : 64;
        PairMap big = {malloc(n_slots * sizeof(Slot)), n_slots - 1, m->n};
        if (!big.slot) return -1;
        for (size_t i = 0; i < n_slots; i++) big.slot[i].key = NO_KEY;
        for (size_t i = 0; i < n_old; i++)
            if (m->slot[i].key != NO_KEY) big.slot[pairmap_probe(&big, m->slot[i].key)] = m->slot[i];
        free(m->slot);
        *m = big;
    }
    Slot *s = &m->slot[pairmap_probe(m, k)];
    m->n += s->key == NO_KEY;
    *s = (Slot){k, val};
    return 0;
}

/* ---- The vocabulary and merges ---- */

typedef struct {
    int left, right, result; /* symbol ids: left + right = result */
} Merge;

struct Bpe {
    StrSet sym;    /* id -> symbol string; ids 0..4 the specials (counts unused) */
    Merge *merges; /* [n_merges] in learned order; the index is the rank */
    int n_merges, merges_cap;
    PairMap rank;  /* (left, right) -> rank of the first merge of that pair */
};

struct BpeCounter {
    StrSet pieces; /* distinct pieces (no marker) -> times added */
};

void bpe_free(Bpe *b) {
    if (!b) return;
    strset_free(&b->sym);
    free(b->merges);
    free(b->rank.slot);
    free(b);
}

/* A Bpe holding the five specials, or NULL when out of memory. */
static Bpe *bpe_new(void) {
    Bpe *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    for (int i = 0; i < BPE_N_SPECIAL; i++)
        if (strset_add(&b->sym, TOKEN_NAMES[i], strlen(TOKEN_NAMES[i]), 0) != i) {
            bpe_free(b);
            return NULL;
        }
    return b;
}

/* Records a merge; a pair seen before keeps its first rank. 0 or -1 (memory). */
static int bpe_add_merge(Bpe *b, int left, int right, int result) {
    if (grow(&b->merges, &b->merges_cap, b->n_merges + 1, sizeof *b->merges)) return -1;
    uint64_t k = pair_key(left, right);
    if (pairmap_get(&b->rank, k) < 0 && pairmap_put(&b->rank, k, b->n_merges)) return -1;
    b->merges[b->n_merges++] = (Merge){left, right, result};
    return 0;
}

/* The id of left + right, adding it when new (*added set); -1 when out of memory. */
static int bpe_concat(Bpe *b, int left, int right, int *added) {
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
