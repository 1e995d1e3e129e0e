/* split.c: the stratified, seeded train/validation split of split.h. */
#include "text/split.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/hash.h"
#include "base/rng.h"

#define SPLIT_RNG_SITE 0x53504C4954ull      /* "SPLIT": rng site of the val split */

typedef struct {
    const char *label;
    int index;
} LabelledIndex;

static int compare_label_then_index(const void *a, const void *b) {
    const LabelledIndex *x = a, *y = b;
    int c = strcmp(x->label, y->label);
    if (c) return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* Marks round(frac * m) (at least 1, at most m-1) of a class's m examples as
 * validation, chosen by a seeded Fisher-Yates shuffle of the class. */
static void choose_val(LabelledIndex *group, int m, double frac, uint64_t seed, unsigned char *is_val) {
    if (m < 2) return;
    uint64_t class_key = hash_bytes(HASH_START, group[0].label, strlen(group[0].label));   /* per class */
    for (int i = m - 1; i > 0; i--) {
        int j = (int)(rng_bits(seed, class_key, SPLIT_RNG_SITE, (uint64_t)i) % (uint64_t)(i + 1));
        LabelledIndex t = group[i];
        group[i] = group[j];
        group[j] = t;
    }
    int k = (int)floor(frac * m + 0.5);
    if (k < 1) k = 1;
    if (k > m - 1) k = m - 1;
    for (int i = 0; i < k; i++) is_val[group[i].index] = 1;
}

int dataset_split_choose(const char *const *labels, int n, double frac, uint64_t seed, unsigned char *is_val) {
    LabelledIndex *order = malloc((size_t)(n ? n : 1) * sizeof *order);
    if (!order) return -1;
    memset(is_val, 0, (size_t)n);
    for (int i = 0; i < n; i++) {
        order[i].label = labels[i];
        order[i].index = i;
    }
    qsort(order, (size_t)n, sizeof *order, compare_label_then_index);
    for (int start = 0, end; start < n; start = end) {
        end = start + 1;
        while (end < n && strcmp(order[end].label, order[start].label) == 0) end++;
        choose_val(order + start, end - start, frac, seed, is_val);
    }
    free(order);
    int n_val = 0;
    for (int i = 0; i < n; i++) n_val += is_val[i];
    return n_val;
}

int dataset_subset(const TextDataset *all, const unsigned char *flags, int want, TextDataset *out) {
    memset(out, 0, sizeof *out);
    int count = 0;
    for (int i = 0; i < all->n; i++) count += flags[i] == want;
    out->path = strndup(all->path ? all->path : "", strlen(all->path ? all->path : ""));
    memcpy(out->sha256, all->sha256, sizeof out->sha256);
    out->lines = all->lines;
    out->examples = calloc(count ? (size_t)count : 1, sizeof *out->examples);
    if (!out->path || !out->examples) return -1;
    for (int i = 0; i < all->n; i++) {
        if (flags[i] != want) continue;
        const Example *src = &all->examples[i];
        Example *dst = &out->examples[out->n];
        dst->label = strndup(src->label, strlen(src->label));
        dst->text = strndup(src->text, strlen(src->text));
        dst->line = src->line;
        out->n++;                       /* counted first so dataset_free releases a partial copy */
        if (!dst->label || !dst->text) return -1;
    }
    out->total = out->n;
    return 0;
}

int dataset_split(const TextDataset *all, double frac, uint64_t seed, TextDataset *train, TextDataset *val,
                  char *err, size_t errlen) {
    if (!all || !train || !val) return fail(err, errlen, ERR_RUNTIME, "dataset_split: missing argument");
    memset(train, 0, sizeof *train);
    memset(val, 0, sizeof *val);
    const char *path = all->path ? all->path : "(data)";
    if (!(frac > 0.0 && frac < 1.0))
        return fail(err, errlen, ERR_INPUT, "--val-split must be between 0 and 1 (exclusive), got %g", frac);
    if (all->n < 2) return fail(err, errlen, ERR_INPUT, "%s: too few examples to split off validation", path);
    const char **labels = malloc((size_t)all->n * sizeof *labels);
    unsigned char *is_val = malloc((size_t)all->n);
    int n_val = -1;
    if (labels && is_val) {
        for (int i = 0; i < all->n; i++) labels[i] = all->examples[i].label;
        n_val = dataset_split_choose(labels, all->n, frac, seed, is_val);
    }
    int rc = EXIT_OK;
    if (n_val < 0)
        rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    else if (n_val == 0)
        rc = fail(err, errlen, ERR_INPUT, "%s: " SPLIT_NONE_WHY, path);
    else if (dataset_subset(all, is_val, 0, train) || dataset_subset(all, is_val, 1, val))
        rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    if (rc) {
        dataset_free(train);
        dataset_free(val);
    }
    free(labels);
    free(is_val);
    return rc;
}
