/* split.h: the validation split of a labelled dataset (--val-split): about
 * frac of each class, chosen by a seeded shuffle keyed by the class alone,
 * so the choice does not depend on the order of other classes' examples. */
#ifndef TEXT_SPLIT_H
#define TEXT_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "text/dataset.h"

/* Why a split found nothing to take (after "PATH: "), with what fixes it. */
#define SPLIT_NONE_WHY "cannot split off validation: no label has 2 or more examples; give --val FILE, or " \
                       "--val-split 0 to train without validation"

/* Stratified, seeded split: about frac of each class goes to val (at least one
 * example of a class with 2 or more). Examples are copied; both parts keep
 * the source's sha256 and lines. */
int dataset_split(const TextDataset *all, double frac, uint64_t seed, TextDataset *train, TextDataset *val,
                  char *err, size_t errlen);
/* The split's choice over n examples given their labels: is_val (n) set to 1
 * for validation. Returns how many, or -1 when out of memory. Lets the
 * labels of data held in shares (MPI) be split as one process would. */
int dataset_split_choose(const char *const *labels, int n, double frac, uint64_t seed, unsigned char *is_val);
/* Copies the examples of all whose flag equals want, in order (keeping
 * path, sha256 and lines). 0, or -1 when out of memory (out then partial:
 * dataset_free it). */
int dataset_subset(const TextDataset *all, const unsigned char *flags, int want, TextDataset *out);

#endif
