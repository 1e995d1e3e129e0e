/* history.c: columns of an epoch history (see history.h). */
#include "report/history.h"

void history_column(const EpochRecord *h, int n, HistoryField field, double *ys) {
    for (int i = 0; i < n; i++) {
        switch (field) {
        case HISTORY_TRAIN_LOSS: ys[i] = h[i].train_loss; break;
        case HISTORY_TRAIN_ACC: ys[i] = h[i].train_acc; break;
        case HISTORY_VAL_LOSS: ys[i] = h[i].val_loss; break;
        case HISTORY_VAL_ACC: ys[i] = h[i].val_acc; break;
        }
    }
}
