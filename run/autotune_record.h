/* autotune_record.h: what --autotune searches and what it keeps (private to
 * run/autotune.c and run/autotune_record.c): the search space, a trial, and
 * their files in the run directory: RUN/autotune.json, the plan (the data
 * and every option as given), and RUN/trials.jsonl, a line per trial that
 * ended and last the winner's. */
#ifndef RUN_AUTOTUNE_RECORD_H
#define RUN_AUTOTUNE_RECORD_H

#include <stddef.h>

#include "run/options.h"

#define AUTOTUNE_PLAN "autotune.json"
#define AUTOTUNE_TRIALS "trials.jsonl"
#define AUTOTUNE_VALUE_LEN 24

/* An option searched and the values it may take; epochs' are fractions of
 * the first trial's (the options as given). */
typedef struct {
    const char *name;
    int n;
    const char *values[5];
} Axis;

enum { AXIS_TOKENIZER, AXIS_VOCAB, AXIS_D_MODEL, AXIS_LAYERS, AXIS_LR, AXIS_WD, AXIS_DROPOUT, AXIS_EPOCHS,
       AXIS_MAX_LEN, N_AXES };

/* The search space. */
extern const Axis AUTOTUNE_AXES[N_AXES];

typedef struct {
    int n;                                   /* the trial's number, from 1 */
    char value[N_AXES][AUTOTUNE_VALUE_LEN];  /* the searched options' values */
    int epochs, epochs_run;
    int stopped_at;                          /* the rung epoch it was stopped at; 0: it ended by itself */
    int cut;                                 /* 1: stopped by the clock, not for its loss (printed, not recorded) */
    int failed;                              /* 1: it ended in an error */
    double val_loss, val_acc;                /* of the weights it ended with (stopped early: its last epoch's) */
    int val_n;                               /* the validation examples val_acc is over (0: not recorded) */
    double *curve;                           /* (epochs_run) validation loss at each epoch's end, to 6 decimals */
    double seconds;
} Trial;

/* Writes dir/autotune.json: data_path and every option of base (paths as
 * given to it), and which were given. Status as base/errors.h. */
int autotune_write_plan(const char *dir, const char *data_path, const Options *base, char *err, size_t errlen);
/* Reads it back into base (over its defaults; the options a resume gives
 * itself, such as --threads, left out) and *data_path (malloc'd). */
int autotune_read_plan(const char *dir, Options *base, char **data_path, char *err, size_t errlen);
/* Writes dir/trials.jsonl whole and atomically: trials (n), then the
 * winner's line when winner (a trial number) is not 0, with the trial best
 * on validation and the standard error the choice allowed (autotune.c). */
int autotune_write_trials(const char *dir, const Trial *trials, int n, int winner, int best, double standard_error,
                          char *err, size_t errlen);
/* Reads dir/trials.jsonl (none: 0 trials) into trials (room for max), *n
 * and *winner (0 when not chosen). ERR_INPUT naming the line that is not
 * one this program writes. */
int autotune_read_trials(const char *dir, Trial *trials, int max, int *n, int *winner, char *err, size_t errlen);

#endif
