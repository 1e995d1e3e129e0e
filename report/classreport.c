/* classreport.c: confusion matrix, per-class precision/recall/F1 and the text
 * reports (scikit-learn's classification_report layout, confusion matrix),
 * and the confusion matrix's picture. */
#include "report/classreport.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "report/plot.h"

/* The averages' row names; the longest sets sklearn's minimum column width. */
#define LONGEST_AVG_HEADING "weighted avg"
/* A class is flagged when its recall is this far below the overall accuracy. */
#define RECALL_GAP_WARN 0.25
/* Confusion matrix: labels longer than this turn the columns into indices. */
#define CONFUSION_MAX_COL_LABEL 8
/* Confusion matrix: row labels are cut to this many characters. */
#define CONFUSION_MAX_ROW_LABEL 24
/* Confusion matrix: a labelled table wider than this turns to numbered columns. */
#define CONFUSION_MAX_WIDTH 80
/* The confusion matrix's corner: row labels are true, column labels predicted. */
#define CORNER "true\\pred"

static double safe_div(double num, double den) { return den > 0 ? num / den : 0.0; }

void classreport_free(ClassReport *r) {
    if (!r) return;
    free(r->confusion);
    free(r->precision);
    free(r->recall);
    free(r->f1);
    free(r->support);
    memset(r, 0, sizeof *r);
}

static int report_alloc(ClassReport *r, int n_classes) {
    size_t c = (size_t)n_classes;
    r->n_classes = n_classes;
    r->confusion = calloc(c * c, sizeof *r->confusion);
    r->precision = calloc(c, sizeof *r->precision);
    r->recall = calloc(c, sizeof *r->recall);
    r->f1 = calloc(c, sizeof *r->f1);
    r->support = calloc(c, sizeof *r->support);
    if (!r->confusion || !r->precision || !r->recall || !r->f1 || !r->support) return -1;
    return 0;
}

/* Per-class scores from the filled confusion matrix. F1 is computed from
 * counts as 2tp / (2tp + fp + fn), equal to the harmonic mean of precision
 * and recall and 0 where both are undefined (sklearn's zero_division=0). */
static void report_scores(ClassReport *r) {
    int c = r->n_classes;
    long correct = 0;
    for (int k = 0; k < c; k++) {
        long tp = r->confusion[(size_t)k * c + k];
        long predicted = 0, actual = 0;
        for (int j = 0; j < c; j++) {
            predicted += r->confusion[(size_t)j * c + k];
            actual += r->confusion[(size_t)k * c + j];
        }
        long fp = predicted - tp, fn = actual - tp;
        r->support[k] = (int)actual;
        r->precision[k] = safe_div((double)tp, (double)predicted);
        r->recall[k] = safe_div((double)tp, (double)actual);
        r->f1[k] = safe_div(2.0 * (double)tp, (double)(2 * tp + fp + fn));
        correct += tp;
    }
    r->accuracy = safe_div((double)correct, (double)r->total);
}

/* Macro: plain mean over all classes. Weighted: mean weighted by support. */
static void report_averages(ClassReport *r) {
    int c = r->n_classes;
    double mp = 0, mr = 0, mf = 0, wp = 0, wr = 0, wf = 0;
    for (int k = 0; k < c; k++) {
        mp += r->precision[k];
        mr += r->recall[k];
        mf += r->f1[k];
        wp += r->precision[k] * r->support[k];
        wr += r->recall[k] * r->support[k];
        wf += r->f1[k] * r->support[k];
    }
    r->macro_precision = mp / c;
    r->macro_recall = mr / c;
    r->macro_f1 = mf / c;
    r->weighted_precision = safe_div(wp, r->total);
    r->weighted_recall = safe_div(wr, r->total);
    r->weighted_f1 = safe_div(wf, r->total);
}

int classreport_compute(ClassReport *r, const int *y_true, const int *y_pred, int n, int n_classes) {
    if (!r) return -1;
    memset(r, 0, sizeof *r);
    if (n_classes < 1 || n < 0 || (n > 0 && (!y_true || !y_pred))) return -1;
    if ((size_t)n_classes > (size_t)46340) return -1; /* C*C must fit an int-sized index */
    if (report_alloc(r, n_classes) != 0) {
        classreport_free(r);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (y_true[i] < 0 || y_true[i] >= n_classes || y_pred[i] < 0 || y_pred[i] >= n_classes) {
            classreport_free(r);
            return -1;
        }
        r->confusion[(size_t)y_true[i] * n_classes + y_pred[i]]++;
    }
    r->total = n;
    report_scores(r);
    report_averages(r);
    return 0;
}

/* ---- text helpers (labels are UTF-8; widths count code points, as Python) ---- */

static int utf8_length(const char *s) {
    int count = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) count++;
    return count;
}

/* Prints s right-aligned (or left-aligned) in width code points. */
static void print_padded(FILE *out, const char *s, int width, int right_align) {
    int pad = width - utf8_length(s);
    if (right_align)
        for (int i = 0; i < pad; i++) fputc(' ', out);
    fputs(s, out);
    if (!right_align)
        for (int i = 0; i < pad; i++) fputc(' ', out);
}

/* Copies at most max_chars code points of s into buf (size bufsize); when
 * cut, the last kept character becomes '~' so truncation is visible. */
static void truncate_label(const char *s, int max_chars, char *buf, size_t bufsize) {
    size_t used = 0;
    int chars = 0, total = utf8_length(s);
    int keep = total > max_chars ? max_chars - 1 : total;
    const unsigned char *p = (const unsigned char *)s;
    while (*p && chars < keep) {
        size_t len = 1;
        while (p[len] && (p[len] & 0xC0) == 0x80) len++;
        if (used + len + 2 > bufsize) break;
        memcpy(buf + used, p, len);
        used += len;
        p += len;
        chars++;
    }
    if (total > max_chars && used + 2 <= bufsize) buf[used++] = '~';
    buf[used] = '\0';
}

/* The label of class k: labels[k], or its index when there is none. */
static const char *class_label(const char *const *labels, int k, char *buf, size_t bufsize) {
    if (labels && labels[k]) return labels[k];
    snprintf(buf, bufsize, "%d", k);
    return buf;
}

/* ---- classification report ---- */

static void print_score_row(FILE *out, const char *name, int width, int digits, double p, double r,
                            double f, int support) {
    print_padded(out, name, width, 1);
    fprintf(out, "  %9.*f %9.*f %9.*f %9d\n", digits, p, digits, r, digits, f, support);
}

/* Notes under the report that make a misleading accuracy visible: classes
 * whose recall is far below the accuracy (a rare class the model ignores),
 * and an accuracy no better than always predicting the majority class. */
static void print_report_warnings(const ClassReport *r, const char *const *labels, FILE *out) {
    char buf[32];
    int printed = 0, majority = 0;
    for (int k = 0; k < r->n_classes; k++) {
        if (r->support[k] > r->support[majority]) majority = k;
        if (r->support[k] == 0 || r->recall[k] > r->accuracy - RECALL_GAP_WARN) continue;
        if (!printed++) fputc('\n', out);
        fprintf(out, "! class '%s': recall %.2f while accuracy %.2f (support %d of %d)\n",
                class_label(labels, k, buf, sizeof buf), r->recall[k], r->accuracy, r->support[k],
                r->total);
    }
    if (r->total == 0 || r->n_classes < 2) return;
    double baseline = (double)r->support[majority] / r->total;
    if (baseline < 1.0 && r->accuracy <= baseline + 1e-12) {
        if (!printed++) fputc('\n', out);
        fprintf(out, "! accuracy %.2f is no better than always predicting '%s' (%.2f)\n", r->accuracy,
                class_label(labels, majority, buf, sizeof buf), baseline);
    }
}

/* Layout as sklearn: names right-aligned in width = max(longest name,
 * len("weighted avg"), digits); each column " {:>9}" after one extra space. */
void classreport_print(const ClassReport *r, const char *const *labels, int digits, FILE *out) {
    char buf[32];
    if (!r || !out || r->n_classes < 1 || !r->support) return;
    if (digits < 0) digits = 0;
    if (digits > 15) digits = 15;
    int width = (int)strlen(LONGEST_AVG_HEADING);
    if (digits > width) width = digits;
    for (int k = 0; k < r->n_classes; k++) {
        int len = utf8_length(class_label(labels, k, buf, sizeof buf));
        if (len > width) width = len;
    }
    print_padded(out, "", width, 1);
    fprintf(out, "  %9s %9s %9s %9s\n\n", "precision", "recall", "f1-score", "support");
    for (int k = 0; k < r->n_classes; k++)
        print_score_row(out, class_label(labels, k, buf, sizeof buf), width, digits, r->precision[k],
                        r->recall[k], r->f1[k], r->support[k]);
    fputc('\n', out);
    print_padded(out, "accuracy", width, 1);
    fprintf(out, "  %9s %9s %9.*f %9d\n", "", "", digits, r->accuracy, r->total);
    print_score_row(out, "macro avg", width, digits, r->macro_precision, r->macro_recall, r->macro_f1,
                    r->total);
    print_score_row(out, "weighted avg", width, digits, r->weighted_precision, r->weighted_recall,
                    r->weighted_f1, r->total);
    print_report_warnings(r, labels, out);
}

/* ---- confusion matrix ---- */

static int decimal_width(long v) {
    int w = 1;
    while (v >= 10) {
        v /= 10;
        w++;
    }
    return w;
}

/* Rows are true labels, columns predicted ones. Short labels head the
 * columns; when any label is long or the table would be wider than a
 * terminal, columns are numbered and each row shows its number next to its
 * (possibly cut) label. */
void classreport_confusion(const ClassReport *r, const char *const *labels, FILE *out) {
    char buf[32], cut[4 * CONFUSION_MAX_ROW_LABEL + 8];
    if (!r || !out || r->n_classes < 1 || !r->confusion) return;
    int c = r->n_classes, longest = 0, max_count = 0;
    for (int k = 0; k < c; k++) {
        int len = utf8_length(class_label(labels, k, buf, sizeof buf));
        if (len > longest) longest = len;
    }
    for (size_t i = 0; i < (size_t)c * c; i++)
        if (r->confusion[i] > max_count) max_count = r->confusion[i];
    int index_width = decimal_width(c - 1), count_width = decimal_width(max_count);
    int row_label_width = longest < CONFUSION_MAX_ROW_LABEL ? longest : CONFUSION_MAX_ROW_LABEL;
    int col_width = longest > count_width ? longest : count_width;
    int labelled_width = row_label_width + 2 + c * (col_width + 1);
    int numbered = longest > CONFUSION_MAX_COL_LABEL || labelled_width > CONFUSION_MAX_WIDTH;
    if (numbered) {
        col_width = index_width > count_width ? index_width : count_width;
        row_label_width += index_width + 1;
    }
    if (row_label_width < (int)strlen(CORNER)) row_label_width = (int)strlen(CORNER);

    fprintf(out, "Confusion matrix (rows: true label, columns: predicted label)\n");
    print_padded(out, CORNER, row_label_width, 0);
    fputs(" |", out);
    for (int k = 0; k < c; k++) {
        fputc(' ', out);
        if (numbered) {
            snprintf(buf, sizeof buf, "%d", k);
            print_padded(out, buf, col_width, 1);
        } else {
            print_padded(out, class_label(labels, k, buf, sizeof buf), col_width, 1);
        }
    }
    fputc('\n', out);
    for (int i = 0; i < row_label_width + 2 + c * (col_width + 1); i++) fputc('-', out);
    fputc('\n', out);
    for (int t = 0; t < c; t++) {
        truncate_label(class_label(labels, t, buf, sizeof buf), CONFUSION_MAX_ROW_LABEL, cut, sizeof cut);
        if (numbered) {
            fprintf(out, "%*d ", index_width, t);
            print_padded(out, cut, row_label_width - index_width - 1, 0);
        } else {
            print_padded(out, cut, row_label_width, 0);
        }
        fputs(" |", out);
        for (int p = 0; p < c; p++) fprintf(out, " %*d", col_width, r->confusion[(size_t)t * c + p]);
        fputc('\n', out);
    }
}

int classreport_confusion_png(const ClassReport *r, const char *const *labels, const char *title, const char *path,
                              char *err, size_t errlen) {
    int c = r->n_classes;
    size_t cells = (size_t)c * c;
    float *share = malloc(sizeof(float) * cells), *counts = malloc(sizeof(float) * cells);
    if (!share || !counts) {
        free(share);
        free(counts);
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < cells; i++) {
        int support = r->support[i / (size_t)c];
        counts[i] = (float)r->confusion[i];
        share[i] = support > 0 ? (float)((double)r->confusion[i] / support) : NAN;
    }
    char plot_title[256];
    snprintf(plot_title, sizeof plot_title, "Confusion matrix: %s (rows true, columns predicted)", title);
    PlotHeatmap map = {.values = share, .rows = c, .cols = c, .row_labels = labels, .col_labels = labels,
                       .title = plot_title, .colormap = PLOT_MAP_SEQUENTIAL, .cell_numbers = counts,
                       .bar_title = "share of the true class (row)", .unit_scale = 1};
    int rc = plot_heatmap(path, &map, NULL, NULL, err, errlen);
    free(share);
    free(counts);
    return rc;
}
