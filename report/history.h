/* history.h: the record of one epoch, as the table, metrics.csv, the
 * curves and the run state keep it; and a column of a history as a plot
 * series. */
#ifndef REPORT_HISTORY_H
#define REPORT_HISTORY_H

#include <stddef.h>

typedef struct {
    int epoch;             /* from 1 */
    double train_loss, train_acc;
    double val_loss, val_acc, val_f1;
    double lr;             /* learning rate at the epoch's last step */
    double seconds, tokens_per_s;
} EpochRecord;

/* Which number of a record a series shows. */
typedef enum { HISTORY_TRAIN_LOSS, HISTORY_TRAIN_ACC, HISTORY_VAL_LOSS, HISTORY_VAL_ACC } HistoryField;

/* ys[i] = field of history[i], for i < n. */
void history_column(const EpochRecord *history, int n, HistoryField field, double *ys);

#endif
