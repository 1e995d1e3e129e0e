/* curves.h: an epoch history drawn: curves.png (loss and accuracy per
 * epoch, train and validation), the terminal loss chart, and two runs side
 * by side (compare-pe). */
#ifndef REPORT_CURVES_H
#define REPORT_CURVES_H

#include <stddef.h>
#include <stdio.h>

#include "base/errors.h"
#include "report/history.h"

/* curves.png of one run; best_epoch > 0 marks the epoch whose weights early
 * stopping keeps and restores (0: none). Status as base/errors.h. */
int curves_write_png(const char *path, const EpochRecord *history, int n, int has_val, int best_epoch, char *err,
                     size_t errlen);
/* The loss per epoch as a text chart. */
void curves_text_chart(FILE *out, const EpochRecord *history, int n, int has_val);
/* Two runs' curves in one PNG; names label the runs. Status as base/errors.h. */
int curves_compare_png(const char *path, const EpochRecord *const history[2], const int n[2], const int has_val[2],
                       const char *const names[2], char *err, size_t errlen);

#endif
