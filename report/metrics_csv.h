/* metrics_csv.h: metrics.csv, the per-epoch numbers of a run (docs/DESIGN.md section
 * 6): header epoch,train_loss,train_acc,val_loss,val_acc,val_macro_f1,lr,
 * seconds,tokens_per_s, the val columns left out when there is no val set. */
#ifndef REPORT_METRICS_CSV_H
#define REPORT_METRICS_CSV_H

#include <stddef.h>

#include "base/errors.h"
#include "report/history.h"

/* Header and one row per record, written atomically. Status as errors.h. */
int metrics_csv_write(const char *path, const EpochRecord *history, int n, int has_val, char *err, size_t errlen);
/* Pretraining (docs/DESIGN.md §4b): header epoch,train_loss,train_acc,train_ppl,
 * val_loss,val_acc,val_ppl,lr,seconds,tokens_per_s over masked tokens,
 * perplexity = exp(loss); the val columns left out without a val set. */
int metrics_csv_write_mlm(const char *path, const EpochRecord *history, int n, int has_val, char *err,
                          size_t errlen);
char *metrics_csv_format_mlm(const EpochRecord *history, int n, int has_val);
/* Reads a metrics.csv back (for reproduce and diff), a classifier's or a
 * pretraining run's (whose perplexity columns it skips; val_f1 is 0).
 * Returns the count or -1. */
int metrics_csv_read(const char *path, EpochRecord **history, int *has_val, char *err, size_t errlen);
/* The CSV text of the records (caller frees); NULL when out of memory. */
char *metrics_csv_format(const EpochRecord *history, int n, int has_val);

#endif
