/* commands.h: the subcommands besides training: eval, predict, reproduce,
 * diff and compare-pe, and loading a run's model for them. Each returns an
 * exit code. */
#ifndef COMMANDS_H
#define COMMANDS_H

#include "text/dataset.h"
#include "report/epochlog.h"
#include "model.h"
#include "run/options.h"

typedef struct {
    Model *model;
    Vocab vocab;
    LabelSet labels;
    TokenizerKind tokenizer;
} LoadedRun;

/* path is a run directory or a model.safetensors file. */
int load_run(const char *path, int max_batch, LoadedRun *run, char *err, size_t errlen);
void loaded_run_free(LoadedRun *run);

int command_eval(const Options *o);
int command_predict(const Options *o);
int command_reproduce(const Options *o, int argc, char **argv);
int command_diff(const Options *o);
int command_compare_pe(const Options *o, int argc, char **argv);

/* The default run directory for a data file: runs/<name>, where name is the
 * file name without extension, or its folder's name for train.tsv. */
void default_run_dir(const char *data_path, const char *suffix, char *buf, size_t len);

/* Two traces side by side; marks the first epoch whose numbers differ when
 * mark_diff is set. Returns the number of epochs that differ. */
int print_traces(FILE *out, const char *name_a, const EpochRecord *a, int n_a, const char *name_b,
                 const EpochRecord *b, int n_b, int has_val, int mark_diff);

#endif
