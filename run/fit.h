/* trainer.h: training runs (fit and resume) and evaluation of a model on
 * encoded data. */
#ifndef TRAINER_H
#define TRAINER_H

#include "text/dataset.h"
#include "run/dist.h"
#include "report/epochlog.h"
#include "model.h"
#include "run/options.h"

/* Exit codes (SPEC section 2), plus the conventional code for an interrupt. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

typedef struct {
    double loss;           /* unweighted mean cross-entropy */
    double accuracy;
    int *predictions;      /* (n) */
    float *probs;          /* (n, C) */
    int n;
} Evaluation;

/* Runs the model in eval mode over all of d in batches of at most
 * model->max_batch. Returns 0, or -1 on allocation failure. */
int evaluate(Model *m, const EncodedDataset *d, Evaluation *out);
void evaluation_free(Evaluation *e);

typedef struct {
    EpochRecord *history;  /* owned by the caller after fit returns */
    int n_epochs;
    int has_val;
    double final_val_acc, final_test_acc;
} FitSummary;

/* Trains on data_path into out_dir (or continues it when resume is set).
 * argv is recorded in run.json. Returns an exit code. summary may be NULL. */
int fit(const Options *o, const char *data_path, const char *out_dir, int resume, int argc, char **argv,
        FitSummary *summary);

/* fit as one rank of an MPI job (dist.h): each batch is split over the
 * ranks, which keep identical weights; only rank 0 prints and writes. */
int fit_distributed(const DistContext *dist, const Options *o, const char *data_path, const char *out_dir, int resume,
                    int argc, char **argv, FitSummary *summary);

/* Installs SIGINT/SIGTERM/SIGUSR1 handlers that ask the training loop to stop
 * after the current step (mpirun forwards SIGUSR1 to every rank). */
void install_interrupt_handlers(void);

/* 1 when the model and its activations for batch_size fit in the machine's
 * memory; else 0 with a message giving the bytes needed. */
int memory_fits(const ModelConfig *cfg, int batch_size, char *err, size_t errlen);

/* dir + "/" + name into buf */
void run_path(char *buf, size_t len, const char *dir, const char *name);

#endif
