/* state.h: state.safetensors, everything a stopped run needs to continue
 * bit-exactly: the model's current weights, Adam moments and step (through
 * the model's own API), the epoch history, the position in the unfinished
 * epoch, early-stopping's counters and --swa's running weight average. */
#ifndef RUN_STATE_H
#define RUN_STATE_H

#include <stddef.h>

#include "base/errors.h"
#include "model.h"
#include "report/history.h"

typedef struct {
    int epochs_done;
    int step_in_epoch;           /* batches done of the unfinished epoch */
    double loss_sum, correct, count, tokens, seconds;   /* the unfinished epoch so far */
    double best_val_loss;
    int best_epoch, bad_epochs;  /* early stopping */
    int n_averaged;              /* --swa: epochs' end weights in the average so far */
    EpochRecord *history;        /* (n_history) finished epochs; room for the run's epochs */
    int n_history;
} TrainProgress;

/* Writes dir/state.safetensors atomically, with the weight average (n_params
 * floats) when p->n_averaged > 0. Status as base/errors.h. */
int state_save(const Model *m, const float *average, const TrainProgress *p, const char *dir, char *err,
               size_t errlen);
/* Reads dir/state.safetensors into m, p and, when the state holds an
 * average, average (NULL: the run keeps none, and such a state is refused),
 * p->history getting room for at least capacity records. ERR_INPUT for a
 * missing or malformed file. A state written before --swa holds no count
 * and no average: n_averaged 0. */
int state_load(Model *m, float *average, TrainProgress *p, const char *dir, int capacity, char *err,
               size_t errlen);

#endif
