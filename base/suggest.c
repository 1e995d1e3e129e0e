/* suggest.c: the closest candidate to a mistyped word (see suggest.h). */
#include "base/suggest.h"

#include <stdlib.h>
#include <string.h>

int suggest_distance(const char *a, const char *b, int limit) {
    size_t n = strlen(a), m = strlen(b);
    if ((n > m ? n - m : m - n) > (size_t)limit) return limit + 1;
    /* three rows of the optimal-string-alignment table: i-2, i-1, i */
    int *rows = malloc(sizeof(int) * 3 * (m + 1));
    if (!rows) return limit + 1;
    int *before = rows, *prev = rows + (m + 1), *cur = rows + 2 * (m + 1);
    for (size_t j = 0; j <= m; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = (int)i;
        int row_min = cur[0];
        for (size_t j = 1; j <= m; j++) {
            int cost = a[i - 1] != b[j - 1];
            int d = prev[j - 1] + cost;
            if (prev[j] + 1 < d) d = prev[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 1 < d)
                d = before[j - 2] + 1;
            cur[j] = d;
            if (d < row_min) row_min = d;
        }
        if (row_min > limit) {
            free(rows);
            return limit + 1;
        }
        int *t = before;
        before = prev;
        prev = cur;
        cur = t;
    }
    int d = prev[m];
    free(rows);
    return d > limit ? limit + 1 : d;
}

const char *suggest_closest(const char *word, const char *const *candidates, size_t n) {
    size_t len = strlen(word);
    int limit = (int)(len / 3);
    if (limit < 1) limit = 1;
    if (limit > 3) limit = 3;
    const char *best = NULL;
    int best_d = limit + 1;
    for (size_t i = 0; i < n; i++) {
        int d = suggest_distance(word, candidates[i], limit);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    if (best) return best;
    const char *prefixed = NULL;
    for (size_t i = 0; len >= 3 && i < n; i++) {
        if (strncmp(candidates[i], word, len) != 0) continue;
        if (prefixed) return NULL;   /* more than one: the word does not say which */
        prefixed = candidates[i];
    }
    return prefixed;
}
