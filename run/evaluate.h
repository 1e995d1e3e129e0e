/* evaluate.h: a model in eval mode over encoded data: loss, accuracy,
 * predictions and probabilities; and the titled report of them. */
#ifndef RUN_EVALUATE_H
#define RUN_EVALUATE_H

#include <stddef.h>
#include <stdio.h>

#include "model.h"
#include "text/encode.h"
#include "run/dist.h"

typedef struct {
    double loss;           /* unweighted mean cross-entropy (0 without labels) */
    double accuracy;
    int *predictions;      /* (n) */
    float *probs;          /* (n, C) */
    int n;
    double loss_sum;       /* the sum behind loss, and correct predictions: what MPI ranks add up */
    long correct;
} Evaluation;

/* Runs m over all of d in batches of at most m->max_batch. Status as base/errors.h. */
int evaluate(Model *m, const EncodedDataset *d, Evaluation *out, char *err, size_t errlen);
/* Same over examples [begin, end) of d only: out->n = end - begin,
 * predictions and probs of those. */
int evaluate_part(Model *m, const EncodedDataset *d, int begin, int end, Evaluation *out, char *err, size_t errlen);
void evaluation_free(Evaluation *e);
/* MPI: d is this rank's share of a set of total examples (the shares in
 * rank order make the set). Every rank gets the whole set's evaluation:
 * loss and correct summed in rank order, the predictions and *labels (total,
 * malloc'd; the caller frees it) gathered in order; no probs. One process:
 * evaluate. Status as base/errors.h. */
int evaluate_shared(Model *m, const DistContext *dist, const EncodedDataset *d, int total, Evaluation *out,
                    int **labels, char *err, size_t errlen);

/* Pretraining (docs/DESIGN.md §4b): m in eval mode over the texts of d, with the
 * held-out masks keyed by seed and each text's index in the whole held-out
 * set (first + its index in d: d may be an MPI rank's share): the same
 * positions every epoch, at any batch size, thread count or rank count. sums gets the masked-token loss summed over the selected
 * positions, the correct predictions among them and their count (the loss
 * is sums[0] / sums[2], the accuracy sums[1] / sums[2]). Status as
 * base/errors.h. */
int evaluate_mlm(Model *m, const EncodedDataset *d, long first, uint64_t seed, double sums[3], char *err,
                 size_t errlen);
/* Macro-averaged F1 of e against d's labels (NaN when out of memory). */
double evaluation_macro_f1(const Evaluation *e, const EncodedDataset *d, int n_classes);

/* Evaluates m on d and prints a titled classification report and confusion
 * matrix to out; *accuracy gets the accuracy; confusion_png, when set, gets
 * the matrix as a heatmap. Status as base/errors.h. */
int evaluation_report(Model *m, const EncodedDataset *d, const LabelSet *labels, const char *title, FILE *out,
                      double *accuracy, const char *confusion_png, char *err, size_t errlen);
/* Same over a set held in shares (evaluate_shared); every rank takes part,
 * and those with out NULL get only *accuracy. */
int evaluation_report_shared(Model *m, const DistContext *dist, const EncodedDataset *d, int total,
                             const LabelSet *labels, const char *title, FILE *out, double *accuracy,
                             const char *confusion_png, char *err, size_t errlen);

#endif
