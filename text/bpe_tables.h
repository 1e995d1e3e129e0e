/* bpe_tables.h: what the BPE tokenizer's two files share (text/bpe.c: the
 * vocabulary, rebuilding it, encoding; text/bpe_learn.c: counting pieces
 * and learning merges): the units of a piece, the hash tables, the Bpe and
 * BpeCounter structs and the three functions that grow a Bpe. Private to
 * those two files, which include bpe.h first; everyone else includes bpe.h
 * alone. */
#ifndef TEXT_BPE_TABLES_H
#define TEXT_BPE_TABLES_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MARK "\xE2\x96\x81" /* U+2581, the first unit's marker */
#define MARK_LEN 3
#define UNIT_MAX 4          /* bytes in a unit */
#define NO_KEY UINT64_MAX   /* an empty PairMap slot */

/* Makes *(T **)pp hold at least need elements of elem bytes (*cap counts
 * them). Returns 0, or -1 when out of memory or past INT_MAX / 2. */
static inline int grow(void *pp, int *cap, int need, size_t elem) {
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
static inline size_t unit_len(const char *s, size_t n) {
    unsigned char c = (unsigned char)s[0];
    size_t u = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    if (u > n) return 1;
    for (size_t k = 1; k < u; k++)
        if (((unsigned char)s[k] & 0xC0) != 0x80) return 1;
    return u;
}

/* The symbol of the unit of u bytes at s, marked when first: into buf
 * (MARK_LEN + UNIT_MAX bytes), its length returned. */
static inline size_t unit_symbol(const char *s, size_t u, int first, char *buf) {
    size_t n = first ? MARK_LEN : 0;
    memcpy(buf, MARK, n);
    memcpy(buf + n, s, u);
    return n + u;
}

/* Byte order: memcmp, a prefix first. */
static inline int bytes_cmp(const char *a, size_t na, const char *b, size_t nb) {
    int c = memcmp(a, b, na < nb ? na : nb);
    return c ? c : (na > nb) - (na < nb);
}

static inline uint64_t hash_bytes(const char *s, size_t len) {
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

static inline size_t strset_probe(const StrSet *s, const char *p, size_t len) {
    size_t i = hash_bytes(p, len) & s->mask;
    for (;;) {
        int id = s->slot[i];
        if (id < 0 || (s->e[id].len == len && memcmp(s->e[id].str, p, len) == 0)) return i;
        i = (i + 1) & s->mask;
    }
}

/* The id of the len bytes at p, or -1. */
static inline int strset_find(const StrSet *s, const char *p, size_t len) {
    return s->slot ? s->slot[strset_probe(s, p, len)] : -1;
}

/* Adds w to the count of the len bytes at p, inserting a copy when new.
 * Returns its id, or -1 when out of memory. */
static inline int strset_add(StrSet *s, const char *p, size_t len, long long w) {
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

static inline void strset_free(StrSet *s) {
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

static inline uint64_t pair_key(int left, int right) { return (uint64_t)(uint32_t)left << 32 | (uint32_t)right; }

static inline size_t pairmap_probe(const PairMap *m, uint64_t k) {
    uint64_t h = k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h ^ (h >> 31)) & m->mask;
    while (m->slot[i].key != NO_KEY && m->slot[i].key != k) i = (i + 1) & m->mask;
    return i;
}

static inline int pairmap_get(const PairMap *m, uint64_t k) {
    if (!m->slot) return -1;
    const Slot *s = &m->slot[pairmap_probe(m, k)];
    return s->key == k ? s->val : -1;
}

/* Stores val for k (replacing any). Returns 0, or -1 when out of memory. */
static inline int pairmap_put(PairMap *m, uint64_t k, int val) {
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

/* A Bpe holding the five specials, or NULL when out of memory. */
struct Bpe *bpe_new(void);
/* Records a merge; a pair seen before keeps its first rank. 0 or -1 (memory). */
int bpe_add_merge(struct Bpe *b, int left, int right, int result);
/* The id of left + right, adding it when new (*added set); -1 when out of memory. */
int bpe_concat(struct Bpe *b, int left, int right, int *added);

#endif
