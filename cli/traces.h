/* traces.h: two runs' epoch traces side by side, for reproduce, diff and
 * compare-pe. */
#ifndef CLI_TRACES_H
#define CLI_TRACES_H

#include <stdio.h>

#include "report/history.h"

/* Prints both traces; marks the first epoch whose numbers differ when
 * mark_diff is set. Returns the number of epochs that differ. */
int traces_print(FILE *out, const char *name_a, const EpochRecord *a, int n_a, const char *name_b,
                 const EpochRecord *b, int n_b, int has_val, int mark_diff);
/* dir/metrics.csv: the count of epochs, or -1 after printing the error. */
int traces_read(const char *dir, EpochRecord **history, int *has_val);

#endif
