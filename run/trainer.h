/* trainer.h: what one training run holds, shared by run/fit.c (the run and
 * its epochs) and run/step.c (one optimisation step); private to the two. */
#ifndef RUN_TRAINER_H
#define RUN_TRAINER_H

#include "model.h"
#include "report/epoch_table.h"
#include "run/corpus.h"
#include "run/dist.h"
#include "run/options.h"
#include "run/probes.h"
#include "run/record.h"
#include "run/state.h"
#include "text/bpe_dropout.h"

/* Everything one training run holds. */
typedef struct {
    const Options *o;         /* the options, or resolved: with --epochs or --precision auto, a copy holding the choice */
    Options resolved;
    int precision_auto;       /* 1: --precision auto chose o->precision for this CPU */
    const char *dir;
    const DistContext *dist;  /* MPI: this rank; a single process is rank 0 of 1 */
    int writer;               /* 1 on rank 0, the only one that writes files */
    DistReducer *reducer;     /* MPI: sums the gradients over ranks */
    double *rank_shares;      /* MPI: (ranks) each rank's share of the batch's loss weight */
    Corpus corpus;
    Model *model;
    float *class_weights;     /* (C) or NULL */
    float *best_params;       /* (n_params) with --patience: the best epoch's weights */
    int swa;                  /* 1: --swa averages (classifying, with a val set, no --patience) */
    int cycles;               /* 1: a cycle's end may end the run (--cycle shorter than --epochs; classifying, with
                               * a val set, no --patience) */
    float *average;           /* (n_params) with --swa: the mean of the averaged epochs' end weights */
    float *live;              /* (n_params) with --swa: the run's weights while the average is evaluated */
    int average_kept;         /* 1: the average validated better and is the model */
    char average_note[256];   /* --swa: the comparison, for the final report ("" without one) */
    double average_val_loss;  /* --swa: the average's validation loss */
    TrainProgress progress;
    int steps_per_epoch;
    int n_train;              /* training examples over all ranks (MPI: each holds a share) */
    int *order;               /* (n_train) this epoch's order of the global example indices */
    int *lengths;             /* (n_train) with --group-by-length: every training example's length, all ranks' */
    int *order_work;          /* (n_train) with --group-by-length: the grouping's scratch */
    int *tokens, *labels, *indices;   /* (B, max_len), (B), (B): the batch being built */
    int *rows;                /* (B) MPI: the place in the global batch of each example this rank holds */
    int micro_rows;           /* --accum-steps: the most examples one forward takes, ceil(B / K) */
    double *accum;            /* (n_params) with --accum-steps > 1: the micro-batches' gradients summed */
    int mlm;                  /* 1: pretraining (docs/DESIGN.md §4b): masked tokens instead of labels */
    int *mlm_tokens, *mlm_targets;    /* (B, max_len): the batch masked, and what to predict */
    BpeSplits splits;         /* --bpe-dropout (bpe, classifying): each symbol's parts; parts NULL when off */
    int *split_work;          /* ((B + 1) x (max_len + 1)) bpe_dropout_batch's buffer */
    int paused;               /* 1: stopped by --stop-after, resumable */
    const char *piped;        /* a data path --resume cannot read again (a pipe, FIFO or device), or NULL */
    const char *piped_role;   /* its role: train, val or test */
    char run_id[RECORD_ID_LEN + 1];   /* with --resume: run.json's ("" in a record older than ids) */
    ProgressBar bar;
    ObservationContext observe;   /* what the table's observation needs besides the history */
    double *class_stats;      /* (3, C): each class's val precision, val recall, share of the measured set */
    ProbeSet *probes;         /* rank 0: the texts recorded each epoch (run/probes.h), or NULL */
} Trainer;
_Static_assert(sizeof ((TrainProgress *)0)->run_id == RECORD_ID_LEN + 1, "a state holds a run id of run.json's length");

/* One optimisation step on batch s of the epoch (run/step.c): forward, loss
 * and backward on this rank's examples, the gradients summed over MPI ranks,
 * clipping, AdamW; the step's numbers added to t->progress. EXIT_OK, or
 * ERR_RUNTIME with the message in err (a non-finite loss or gradient). */
int train_step(Trainer *t, int epoch, int s, char *err, size_t errlen);

#endif
