/* labels.h: the classes of a run: the training labels in byte order (so
 * "10" sorts before "2"), class i being names[i]. */
#ifndef TEXT_LABELS_H
#define TEXT_LABELS_H

#include "base/errors.h"
#include "text/dataset.h"

typedef struct {
    char **names;      /* (n) sorted in byte order */
    int n;
} LabelSet;

/* Statuses: 0, ERR_INPUT (no examples, or names not distinct and sorted),
 * ERR_RUNTIME (out of memory). */
int labels_build(LabelSet *l, const TextDataset *train);
int labels_from_names(LabelSet *l, char *const *names, int n);
int labels_index(const LabelSet *l, const char *name);           /* -1 when absent */
void labels_free(LabelSet *l);
/* Examples per class of a class-index array into counts (n_classes). */
void labels_count(const int *labels, int n, int n_classes, int *counts);

#endif
