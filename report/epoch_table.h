/* epoch_table.h: what a training run prints per epoch: a progress bar while
 * it runs (terminals only), then a table row that stays, with an automatic
 * observation (SPEC section 6). */
#ifndef REPORT_EPOCH_TABLE_H
#define REPORT_EPOCH_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "report/history.h"

/* A short remark on the last of n records: learning, converging, plateau,
 * overfitting (val loss rising while train loss falls), diverged. */
void epoch_observation(const EpochRecord *history, int n, int has_val, int best_epoch, char *buf, size_t len);

void epoch_table_header(FILE *out, int has_val);
void epoch_table_row(FILE *out, const EpochRecord *r, int has_val, const char *observation);

/* The same for pretraining (SPEC 4b): the losses and accuracies are over
 * masked tokens, and each loss has its perplexity exp(loss) beside it. */
void epoch_table_header_mlm(FILE *out, int has_val);
void epoch_table_row_mlm(FILE *out, const EpochRecord *r, int has_val, const char *observation);

typedef struct {
    int enabled;           /* stdout is a terminal and not --quiet */
    double last_draw;      /* seconds, to redraw at most ~10 times a second */
} ProgressBar;

void progress_draw(ProgressBar *bar, int epoch, int epochs, int step, int steps, double elapsed,
                   double loss, double acc);
void progress_clear(ProgressBar *bar);

#endif
