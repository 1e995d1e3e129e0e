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
    int best_kept;               /* 1: model.safetensors holds best_epoch's weights (--patience), 0: the last
                                  * epoch's or the average; -1: not known (a state written before the key) */
    int n_averaged;              /* --swa: epochs' end weights in the average so far */
    int epochs;                  /* the --epochs in force when saved (a resume may change it) */
    char run_id[33];             /* the run's id as run.json holds it (run/record.h); "" when it has none */
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
 * and no average: n_averaged 0; one written before best_kept: -1; one
 * written before run ids: run_id "". */
int state_load(Model *m, float *average, TrainProgress *p, const char *dir, int capacity, char *err,
               size_t errlen);

/* Early stopping taken up by a resume when the state kept no best weights
 * (best_kept 0): the count starts again at the epoch the state ended, whose
 * weights are the model's (returns 1), or, for a state saved inside an
 * epoch, at the next epoch to end (returns 0). */
int state_restart_best(TrainProgress *p);
/* The --epochs in force when dir/state.safetensors was last saved, or 0
 * (no state, or one written before the key). */
int state_saved_epochs(const char *dir);
/* The finished epochs dir/state.safetensors records, exactly as saved
 * (*history malloc'd; the caller frees it): their count, or -1 (no state,
 * or a malformed one). */
int state_saved_history(const char *dir, EpochRecord **history);

#endif
