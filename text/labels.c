/* labels.c: the label set: training labels sorted in byte order, class i
 * being names[i] (see labels.h). */
#include "text/labels.h"

#include <stdlib.h>
#include <string.h>

#include "base/errors.h"

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int labels_build(LabelSet *l, const TextDataset *train) {
    if (!l) return ERR_RUNTIME;
    memset(l, 0, sizeof *l);
    if (!train || train->n <= 0) return ERR_INPUT;
    const char **sorted = malloc((size_t)train->n * sizeof *sorted);
    if (!sorted) return ERR_RUNTIME;
    for (int i = 0; i < train->n; i++) sorted[i] = train->examples[i].label;
    qsort(sorted, (size_t)train->n, sizeof *sorted, compare_strings);
    int unique = 0;
    for (int i = 0; i < train->n; i++)
        if (i == 0 || strcmp(sorted[i], sorted[unique - 1]) != 0) sorted[unique++] = sorted[i];
    int rc = labels_from_names(l, (char *const *)sorted, unique);
    free(sorted);
    return rc;
}

/* Names must be distinct and already in byte order: class i of a model is names[i]. */
int labels_from_names(LabelSet *l, char *const *names, int n) {
    if (!l) return ERR_RUNTIME;
    memset(l, 0, sizeof *l);
    if (!names || n <= 0) return ERR_INPUT;
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0]) return ERR_INPUT;
        if (i > 0 && strcmp(names[i - 1], names[i]) >= 0) return ERR_INPUT;
    }
    l->names = calloc((size_t)n, sizeof *l->names);
    if (!l->names) return ERR_RUNTIME;
    for (int i = 0; i < n; i++) {
        l->names[i] = strndup(names[i], strlen(names[i]));
        if (!l->names[i]) {
            labels_free(l);
            return ERR_RUNTIME;
        }
        l->n = i + 1;
    }
    return EXIT_OK;
}

int labels_index(const LabelSet *l, const char *name) {
    if (!l || !name) return -1;
    int lo = 0, hi = l->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, l->names[mid]);
        if (c == 0) return mid;
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

void labels_free(LabelSet *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}


void labels_count(const int *labels, int n, int n_classes, int *counts) {
    if (!counts) return;
    for (int c = 0; c < n_classes; c++) counts[c] = 0;
    if (!labels) return;
    for (int i = 0; i < n; i++)
        if (labels[i] >= 0 && labels[i] < n_classes) counts[labels[i]]++;
}
