/* strmap.c: a string-keyed hash map with counts (see strmap.h). */
#include "base/strmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/hash.h"


void strmap_free(StrMap *m) {
    for (int i = 0; i < m->n; i++) free(m->keys[i]);
    free(m->keys);
    free(m->key_lens);
    free(m->counts);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Slot holding key, or the empty slot where it would go. */
static size_t strmap_slot(const StrMap *m, const char *key, size_t len) {
    size_t mask = m->n_slots - 1;
    size_t s = (size_t)hash_bytes(HASH_START, key, len) & mask;
    for (;;) {
        int e = m->slots[s];
        if (e < 0 || (m->key_lens[e] == len && memcmp(m->keys[e], key, len) == 0)) return s;
        s = (s + 1) & mask;
    }
}

static int strmap_rehash(StrMap *m, size_t n_slots) {
    int *slots = malloc(n_slots * sizeof *slots);
    if (!slots) return -1;
    for (size_t s = 0; s < n_slots; s++) slots[s] = -1;
    free(m->slots);
    m->slots = slots;
    m->n_slots = n_slots;
    for (int e = 0; e < m->n; e++) m->slots[strmap_slot(m, m->keys[e], m->key_lens[e])] = e;
    return 0;
}

static int strmap_grow_entries(StrMap *m) {
    if (m->n >= (1 << 30)) return -1;
    int cap = m->entries_cap ? m->entries_cap * 2 : 64;
    char **keys = realloc(m->keys, (size_t)cap * sizeof *keys);
    if (!keys) return -1;
    m->keys = keys;
    size_t *lens = realloc(m->key_lens, (size_t)cap * sizeof *lens);
    if (!lens) return -1;
    m->key_lens = lens;
    long *counts = realloc(m->counts, (size_t)cap * sizeof *counts);
    if (!counts) return -1;
    m->counts = counts;
    m->entries_cap = cap;
    return 0;
}

/* Entry index of key, inserted with count 0 when new; -1 when out of memory. */
int strmap_add(StrMap *m, const char *key, size_t len) {
    if ((size_t)(m->n + 1) * 2 > m->n_slots && strmap_rehash(m, m->n_slots ? m->n_slots * 2 : 128)) return -1;
    size_t s = strmap_slot(m, key, len);
    if (m->slots[s] >= 0) return m->slots[s];
    if (m->n == m->entries_cap && strmap_grow_entries(m)) return -1;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, key, len);
    copy[len] = '\0';
    int e = m->n++;
    m->keys[e] = copy;
    m->key_lens[e] = len;
    m->counts[e] = 0;
    m->slots[s] = e;
    return e;
}

int strmap_contains(const StrMap *m, const char *key, size_t len) {
    return m->n_slots && m->slots[strmap_slot(m, key, len)] >= 0;
}
