/* epoch_table.h: what a training run prints per epoch: a progress bar while
 * it runs (terminals only), then a table row that stays, with an automatic
 * observation (docs/DESIGN.md §6). */
#ifndef REPORT_EPOCH_TABLE_H
#define REPORT_EPOCH_TABLE_H

#include <stddef.h>
#include <stdio.h>

#include "report/history.h"

/* What the observation needs besides the history, all of it optional (0 or
 * NULL: the rules that need it are skipped). The measured set is the
 * validation set, or the training set in a run without one. */
typedef struct {
    int n_classes;              /* C: guessing scores 1/C and a uniform guess's loss is ln(C) */
    double majority_rate;       /* the most frequent class's share of the measured set */
    const char *majority_name;  /* its label */
    int n_measured;             /* examples in the measured set */
    /* the last epoch's per-class numbers on the validation set (NULL without one) */
    const double *precision, *recall;   /* (n_classes) */
    const double *share;        /* (n_classes) each class's share of the validation set */
    const char *const *class_names;     /* (n_classes) */
} ObservationContext;

/* A short remark on the last of n records, saying plainly when a run is
 * bad: diverged or diverging, a loss far above guessing, accuracy at chance
 * (no better than 1/C or always answering the majority class), a loss stuck
 * high or swinging, overfitting (val loss rising while train loss falls), a
 * rare class missed while accuracy is high, precision and recall far apart,
 * F1 far below both; else learning, converging, plateau, converged. */
void epoch_observation(const EpochRecord *history, int n, int has_val, int best_epoch,
                       const ObservationContext *context, char *buf, size_t len);

/* v right-aligned in width characters with at most decimals decimals,
 * fewer (then an exponent) when it would not fit: a table's column never
 * breaks. buf holds at least width + 1 bytes. */
void format_column(char *buf, size_t len, double v, int width, int decimals);

void epoch_table_header(FILE *out, int has_val);
void epoch_table_row(FILE *out, const EpochRecord *r, int has_val, const char *observation);

/* The same for pretraining (docs/DESIGN.md §4b): the losses and accuracies are over
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
