/* fit.h: a training run: the corpus, the model, the epoch loop with its
 * schedule, clipping and AdamW, validation and early stopping, the run
 * directory's files each epoch, resume, and clean stops (docs/DESIGN.md §§ 4,
 * 6, 7). */
#ifndef RUN_FIT_H
#define RUN_FIT_H

#include "run/dist.h"
#include "run/options.h"
#include "report/history.h"

typedef struct {
    EpochRecord *history;  /* (n_epochs) owned by the caller after fit returns */
    int n_epochs;
    int has_val;
    int n_val;             /* validation examples, over all ranks (0: none) */
    int mlm;               /* pretraining: final_val_acc is masked-token accuracy, final_val_loss its loss */
                           /* classifying: final_val_loss is that of the weights the run ends with */
    double final_val_acc, final_test_acc, final_val_loss;
} FitSummary;

/* Trains on data_path into out_dir (or continues it when resume is set).
 * The caller claims out_dir first (rundir_claim, run/rundir.h) and releases
 * it after: that is what keeps a run from replacing another, or two
 * processes from writing one directory.
 * argv is recorded in run.json. Returns an exit code (base/errors.h) with
 * the message in err; EXIT_INTERRUPTED after a signal, with the state saved
 * and the message (where it stopped, how to continue) in err for the caller
 * to print: stdout may be a reader that has gone. summary may be
 * NULL. dist is this process's place in an MPI job (each batch split over
 * the ranks, which keep identical weights; only rank 0 prints and writes),
 * or NULL for a single process. */
int fit(const DistContext *dist, const Options *o, const char *data_path, const char *out_dir, int resume, int argc,
        char **argv, FitSummary *summary, char *err, size_t errlen);

#endif
