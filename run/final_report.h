/* report.h: what a run shows at its end, and what `eval` shows: the text
 * loss chart, classification reports and confusion matrices, report.txt and
 * confusion.png. */
#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

#include "run/corpus.h"
#include "run/fit.h"

/* Evaluates m on d and prints a titled classification report and confusion
 * matrix to out. Fills *accuracy and, when confusion_png is set, draws the
 * matrix there. Returns 0, or -1 with a message. */
int dataset_report(Model *m, const EncodedDataset *d, const LabelSet *labels, const char *title, FILE *out,
                   double *accuracy, const char *confusion_png, char *err, size_t errlen);

/* After training: chart, val and test reports (stdout unless quiet, and
 * dir/report.txt), dir/confusion.png. Returns an exit code. */
int final_reports(Model *m, const Corpus *c, const char *dir, const EpochRecord *history, int n_history,
                  int best_epoch, int restored_best, int quiet, FitSummary *summary, char *err, size_t errlen);

#endif
