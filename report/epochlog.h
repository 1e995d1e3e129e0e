/* epochlog.h: what a training run shows per epoch: a progress bar while it
 * runs (terminals only), a table row that stays, an automatic observation,
 * and metrics.csv. */
#ifndef EPOCHLOG_H
#define EPOCHLOG_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    int epoch;             /* from 1 */
    double train_loss, train_acc;
    double val_loss, val_acc, val_f1;
    double lr;             /* learning rate at the epoch's last step */
    double seconds, tokens_per_s;
} EpochRecord;

/* A short remark on the last of n records: learning, converging, plateau,
 * overfitting (val loss rising while train loss falls), diverged. */
void epoch_observation(const EpochRecord *history, int n, int has_val, int best_epoch, char *buf, size_t len);

void table_header(FILE *out, int has_val);
void table_row(FILE *out, const EpochRecord *r, int has_val, const char *observation);

/* metrics.csv: header and one row per record, written atomically. */
int metrics_csv_write(const char *path, const EpochRecord *history, int n, int has_val, char *err, size_t errlen);
/* Reads a metrics.csv back (for reproduce and diff). Returns the count or -1. */
int metrics_csv_read(const char *path, EpochRecord **history, int *has_val, char *err, size_t errlen);
/* The CSV text of the records (caller frees). */
char *metrics_csv_format(const EpochRecord *history, int n, int has_val);

typedef struct {
    int enabled;           /* stdout is a terminal and not --quiet */
    double last_draw;      /* seconds, to redraw at most ~10 times a second */
} ProgressBar;

void progress_draw(ProgressBar *bar, int epoch, int epochs, int step, int steps, double elapsed,
                   double loss, double acc);
void progress_clear(ProgressBar *bar);

#endif
