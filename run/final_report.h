/* final_report.h: what a run shows at its end: the text loss chart, the
 * validation and test reports (stdout and report.txt) and confusion.png. */
#ifndef RUN_FINAL_REPORT_H
#define RUN_FINAL_REPORT_H

#include "run/corpus.h"
#include "run/evaluate.h"
#include "report/history.h"

typedef struct {
    int best_epoch;          /* the epoch whose weights the model holds when restored_best */
    int restored_best;       /* 1: early stopping restored the best val-loss weights */
    int quiet;               /* 1: write report.txt only */
    int averaged_from;       /* --swa kept the weight average of epochs averaged_from..averaged_to (0: no) */
    int averaged_to;
    const char *note;        /* a line shown before the weights line ("" or NULL: none) */
} FinalReportOptions;

/* Writes dir/report.txt and dir/confusion.png (each cell coloured by its
 * share of the true class, counts written in; and prints unless quiet);
 * *val_acc and *test_acc get the final accuracies (0 without that set).
 * MPI: every rank calls it and evaluates its share of the data; rank 0
 * alone prints and writes. Status as base/errors.h. */
int final_report(Model *m, const DistContext *dist, const Corpus *c, const char *dir, const EpochRecord *history,
                 int n_history, const FinalReportOptions *opt, double *val_acc, double *test_acc, char *err,
                 size_t errlen);

/* The end of a pretraining run (docs/DESIGN.md §4b): the text chart and the masked-
 * token numbers of the epoch whose weights the model holds, printed unless
 * quiet and in report.txt; *acc and *loss get the held-out ones (the
 * training texts' without a validation set; 0 without an epoch). There are
 * no classes, so no classification report or confusion.png. */
int final_report_mlm(const Corpus *c, const char *dir, const EpochRecord *history, int n_history,
                     const FinalReportOptions *opt, double *acc, double *loss, char *err, size_t errlen);

#endif
