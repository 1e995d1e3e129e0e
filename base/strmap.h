/* strmap.h: a map from byte strings to entries with a count, by open
 * addressing: vocabulary counting and the leakage check use it. */
#ifndef BASE_STRMAP_H
#define BASE_STRMAP_H

#include <stddef.h>

typedef struct {
    char **keys;         /* (n) NUL-terminated copies */
    size_t *key_lens;    /* (n) */
    long *counts;        /* (n) for the caller to count with; 0 when added */
    int n, entries_cap;
    int *slots;          /* (n_slots) entry index or -1; n_slots a power of two */
    size_t n_slots;
} StrMap;

/* Entry index of key (len bytes), inserted with count 0 when new; -1 when
 * out of memory. A zeroed StrMap is an empty map. */
int strmap_add(StrMap *m, const char *key, size_t len);
/* 1 when key is in the map. */
int strmap_contains(const StrMap *m, const char *key, size_t len);
void strmap_free(StrMap *m);

#endif
