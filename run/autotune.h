/* autotune.h: `--autotune DURATION` (docs/DESIGN.md §2): a search over the
 * options that matter within a time budget, judged on the validation split
 * alone. Each trial is an ordinary run in RUN/trials/NNN (made by fit with
 * the trial's options, never with --test); trial 1 is the options as given,
 * the others are drawn from a fixed space by the counter-based generator
 * keyed by --seed and the trial number; a trial clearly worse than the
 * earlier ones at a rung epoch is stopped there (successive halving on
 * validation loss). RUN/trials.jsonl records every trial as it ends and the
 * winner (the best on validation, or trial 1 when that lead is within one
 * standard error); the winner is then trained again as RUN itself (with --test's
 * report, the test file read only then), so RUN is an ordinary run of the
 * winner's options that `reproduce` repeats and `diff` compares. The clock
 * decides how many trials run and cuts a trial that could not end within
 * the budget; the plan and every other decision come from --seed and
 * validation numbers. */
#ifndef RUN_AUTOTUNE_H
#define RUN_AUTOTUNE_H

#include <stddef.h>

#include "run/dist.h"
#include "run/options.h"

/* 1 when dir holds an autotune (its plan, RUN/autotune.json): --resume
 * goes on with autotune_resume. */
int autotune_found(const char *dir);

/* A new autotune of data_path into dir (claimed by the caller), with the
 * user's options o (o->autotune set). Each run.json records as its command
 * the command line of its own options. Returns an exit code with the message in err; EXIT_INTERRUPTED
 * after a signal, the trial's state saved, with how to continue in err. */
int autotune_run(const DistContext *dist, const Options *o, const char *data_path, const char *dir, char *err,
                 size_t errlen);

/* `./train --resume RUN` of an autotune (autotune_found): claims
 * RUN, reads the plan and the trials that ended, and goes on from where it
 * stopped, to the same trials, numbers and model. given are the resume
 * command's options (only --threads and --quiet may be given with it). */
int autotune_resume(const DistContext *dist, const Options *given, char *err, size_t errlen);

/* A new run (an autotune or not) into dir: refused (exit 2) when dir
 * holds an autotune's record and overwrite is 0; with overwrite the
 * record goes (RUN/trials stays, each trial replaced when run again). */
int autotune_replace(const DistContext *dist, const char *dir, int overwrite, char *err, size_t errlen);

/* Checks the options an autotune cannot go with (exit 2 with the message). */
int autotune_check_options(const Options *o, char *err, size_t errlen);

#endif
