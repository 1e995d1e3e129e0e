/* classreport.h: classification metrics and reports laid out like
 * scikit-learn's classification_report, and the confusion matrix. */
#ifndef REPORT_CLASSREPORT_H
#define REPORT_CLASSREPORT_H

#include <stdio.h>

typedef struct {
    int n_classes;
    int total;
    int *confusion;          /* (C,C): rows true, columns predicted */
    double *precision;       /* (C) */
    double *recall;
    double *f1;
    int *support;
    double accuracy;
    double macro_precision, macro_recall, macro_f1;
    double weighted_precision, weighted_recall, weighted_f1;
} ClassReport;

/* Precision/recall/F1 are 0 where undefined (as sklearn's zero_division=0).
 * Returns 0, or -1 on allocation failure or a label outside [0, C). */
int classreport_compute(ClassReport *r, const int *y_true, const int *y_pred, int n, int n_classes);
void classreport_free(ClassReport *r);
/* The classification report (digits decimals, 2 like sklearn by default). */
void classreport_print(const ClassReport *r, const char *const *labels, int digits, FILE *out);
/* The confusion matrix with labels (rows true, columns predicted). */
void classreport_confusion(const ClassReport *r, const char *const *labels, FILE *out);
/* The confusion matrix as a PNG heatmap titled "Confusion matrix: title":
 * each cell coloured by its share of its row (recall on the diagonal, as
 * scikit-learn's normalize='true'), so a rare class's row is as visible as
 * a common one's; the counts written in the cells where they fit. A class
 * with no true examples has a grey row. Returns 0, or -1 with a message. */
int classreport_confusion_png(const ClassReport *r, const char *const *labels, const char *title, const char *path,
                              char *err, size_t errlen);

#endif
