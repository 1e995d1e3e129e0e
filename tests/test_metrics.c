/* test_metrics.c: confusion matrix, precision/recall/F1 with zero division,
 * the classification_report layout, the rare-class warning, confusion_print. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "report/classreport.h"

static int near(double a, double b) { return fabs(a - b) < 1e-6; }

/* Runs a print function into a string (caller frees). */
static char *capture_report(const ClassReport *r, const char *const *labels, int digits) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    classreport_print(r, labels, digits, f);
    fclose(f);
    return text;
}

static char *capture_confusion(const ClassReport *r, const char *const *labels) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    classreport_confusion(r, labels, f);
    fclose(f);
    return text;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

/* The worked example, by hand:
 *   y_true 0 0 0 1 1 2 2 2 2 2   (support 3, 2, 5; n = 10)
 *   y_pred 0 0 1 1 2 2 2 2 0 0
 * Confusion (rows true): [2 1 0] [0 1 1] [2 0 3]; column sums 4 2 4.
 *   precision 2/4 = .5, 1/2 = .5, 3/4 = .75
 *   recall    2/3,      1/2,      3/5
 *   f1 = 2tp/(2tp+fp+fn): 4/7, 2/4, 6/9
 *   accuracy 6/10
 *   macro  p (.5+.5+.75)/3 = .583333, r (2/3+.5+.6)/3 = .588889,
 *          f1 (4/7+.5+2/3)/3 = .579365
 *   weighted p (.5*3+.5*2+.75*5)/10 = .625, r = .6,
 *          f1 (4/7*3+.5*2+2/3*5)/10 = .604762 */
static const int EX_TRUE[10] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 2};
static const int EX_PRED[10] = {0, 0, 1, 1, 2, 2, 2, 2, 0, 0};

static void test_worked_example(void) {
    ClassReport r;
    CHECK(classreport_compute(&r, EX_TRUE, EX_PRED, 10, 3) == 0, "report_compute failed");
    static const int confusion[9] = {2, 1, 0, 0, 1, 1, 2, 0, 3};
    for (int i = 0; i < 9; i++) CHECK(r.confusion[i] == confusion[i], "confusion[%d] = %d", i, r.confusion[i]);
    CHECK(r.total == 10 && r.n_classes == 3, "total %d classes %d", r.total, r.n_classes);
    CHECK(r.support[0] == 3 && r.support[1] == 2 && r.support[2] == 5, "support");
    CHECK(near(r.precision[0], 0.5) && near(r.precision[1], 0.5) && near(r.precision[2], 0.75), "precision");
    CHECK(near(r.recall[0], 2.0 / 3) && near(r.recall[1], 0.5) && near(r.recall[2], 0.6), "recall");
    CHECK(near(r.f1[0], 4.0 / 7) && near(r.f1[1], 0.5) && near(r.f1[2], 6.0 / 9), "f1 %f %f %f", r.f1[0], r.f1[1],
          r.f1[2]);
    CHECK(near(r.accuracy, 0.6), "accuracy %f", r.accuracy);
    CHECK(near(r.macro_precision, 0.583333333) && near(r.macro_recall, 0.588888889) &&
              near(r.macro_f1, 0.579365079),
          "macro %f %f %f", r.macro_precision, r.macro_recall, r.macro_f1);
    CHECK(near(r.weighted_precision, 0.625) && near(r.weighted_recall, 0.6) && near(r.weighted_f1, 0.604761905),
          "weighted %f %f %f", r.weighted_precision, r.weighted_recall, r.weighted_f1);
    classreport_free(&r);
    CHECK(r.confusion == NULL && r.precision == NULL, "report_free clears the pointers");
    classreport_free(&r); /* twice is harmless */
}

/* sklearn's format: '{:>{width}s} ' + ' {:>9.{digits}f}' * 3 + ' {:>9}', width =
 * max(longest label, len("weighted avg") = 12, digits); the header and the
 * accuracy row leave the unused columns blank. Expected text written out by
 * hand from that rule (and equal to sklearn 1.2's output for this data). */
static void test_sklearn_layout(void) {
    static const char *const labels[3] = {"cat", "dog", "bird"};
    static const char expected[] =
        "              precision    recall  f1-score   support\n"
        "\n"
        "         cat       0.50      0.67      0.57         3\n"
        "         dog       0.50      0.50      0.50         2\n"
        "        bird       0.75      0.60      0.67         5\n"
        "\n"
        "    accuracy                           0.60        10\n"
        "   macro avg       0.58      0.59      0.58        10\n"
        "weighted avg       0.62      0.60      0.60        10\n";
    ClassReport r;
    CHECK(classreport_compute(&r, EX_TRUE, EX_PRED, 10, 3) == 0, "report_compute failed");
    char *text = capture_report(&r, labels, 2);
    CHECK(text && strcmp(text, expected) == 0, "report differs:\n%s\nexpected:\n%s", text ? text : "(null)",
          expected);
    free(text);

    /* digits = 3, a long label widens the name column; UTF-8 counts as one
     * character per code point ("café" is 4 wide, as Python counts it). */
    static const char *const long_labels[3] = {"cat", "a_very_long_class_name", "caf\xc3\xa9"};
    text = capture_report(&r, long_labels, 3);
    CHECK(text && strstr(text, "\na_very_long_class_name      0.500     0.500     0.500         2\n"),
          "long label row:\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "\n                  caf\xc3\xa9      0.750     0.600     0.667         5\n"),
          "utf-8 label row:\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "\n          weighted avg      0.625     0.600     0.605        10\n"),
          "weighted row, digits 3:\n%s", text ? text : "(null)");
    free(text);

    /* Without labels the class indices are the names. */
    text = capture_report(&r, NULL, 2);
    CHECK(text && strstr(text, "\n           2       0.75      0.60      0.67         5\n"), "index names:\n%s",
          text ? text : "(null)");
    free(text);
    classreport_free(&r);
}

/* Zero division: class 1 is never predicted (precision 0/0 -> 0, f1 0);
 * class 2 never occurs and is never predicted (all 0, support 0). Macro
 * averages count all three classes. */
static void test_zero_division(void) {
    static const int y_true[4] = {0, 0, 0, 1};
    static const int y_pred[4] = {0, 0, 0, 0};
    ClassReport r;
    CHECK(classreport_compute(&r, y_true, y_pred, 4, 3) == 0, "report_compute failed");
    /* class 0: tp 3, fp 1, fn 0 -> p .75, r 1, f1 6/7 */
    CHECK(near(r.precision[0], 0.75) && near(r.recall[0], 1.0) && near(r.f1[0], 6.0 / 7), "class 0");
    CHECK(r.precision[1] == 0 && r.recall[1] == 0 && r.f1[1] == 0 && r.support[1] == 1, "class 1");
    CHECK(r.precision[2] == 0 && r.recall[2] == 0 && r.f1[2] == 0 && r.support[2] == 0, "class 2");
    CHECK(near(r.macro_precision, 0.25) && near(r.macro_recall, 1.0 / 3) && near(r.macro_f1, 2.0 / 7), "macro");
    /* weighted: p .75*3/4, r 1*3/4, f1 6/7*3/4 */
    CHECK(near(r.weighted_precision, 0.5625) && near(r.weighted_recall, 0.75) && near(r.weighted_f1, 18.0 / 28),
          "weighted");
    CHECK(!isnan(r.macro_f1) && !isnan(r.weighted_f1), "no NaN");
    classreport_free(&r);

    /* No examples at all: everything 0, nothing NaN, and it still prints. */
    CHECK(classreport_compute(&r, NULL, NULL, 0, 2) == 0, "empty input is valid");
    CHECK(r.total == 0 && r.accuracy == 0 && r.weighted_f1 == 0 && r.macro_f1 == 0, "empty: zeros");
    char *text = capture_report(&r, NULL, 2);
    CHECK(text && strstr(text, "    accuracy                           0.00         0\n"), "empty report:\n%s",
          text ? text : "(null)");
    free(text);
    classreport_free(&r);
}

static void test_bad_input(void) {
    static const int y_true[3] = {0, 1, 2};
    static const int y_bad[3] = {0, 1, 3};
    static const int y_neg[3] = {0, -1, 1};
    ClassReport r;
    CHECK(classreport_compute(&r, y_true, y_bad, 3, 3) == -1, "predicted label out of range");
    CHECK(r.confusion == NULL, "failed compute leaves no allocation");
    CHECK(classreport_compute(&r, y_neg, y_true, 3, 3) == -1, "negative true label");
    CHECK(classreport_compute(&r, y_true, y_true, 3, 0) == -1, "zero classes");
    CHECK(classreport_compute(&r, y_true, y_true, -1, 3) == -1, "negative n");
    CHECK(classreport_compute(&r, NULL, y_true, 3, 3) == -1, "NULL labels with n > 0");
    CHECK(classreport_compute(NULL, y_true, y_true, 3, 3) == -1, "NULL report");
    /* Printing a zeroed report does nothing and does not crash. */
    ClassReport empty = {0};
    char *text = capture_report(&empty, NULL, 2);
    CHECK(text && text[0] == '\0', "empty report prints nothing");
    free(text);
    text = capture_confusion(&empty, NULL);
    CHECK(text && text[0] == '\0', "empty confusion prints nothing");
    free(text);
}

/* 97 "common" and 3 "rare" examples, all predicted common: accuracy .97
 * hides a class the model never finds. The report must say so. */
static void test_rare_class_warning(void) {
    int y_true[100], y_pred[100];
    for (int i = 0; i < 100; i++) {
        y_true[i] = i < 3 ? 1 : 0;
        y_pred[i] = 0;
    }
    static const char *const labels[2] = {"common", "rare"};
    ClassReport r;
    CHECK(classreport_compute(&r, y_true, y_pred, 100, 2) == 0, "report_compute failed");
    CHECK(near(r.accuracy, 0.97) && r.recall[1] == 0, "accuracy %f recall %f", r.accuracy, r.recall[1]);
    char *text = capture_report(&r, labels, 2);
    CHECK(text && strstr(text, "\n! class 'rare': recall 0.00 while accuracy 0.97"), "rare-class note:\n%s",
          text ? text : "(null)");
    CHECK(text && !strstr(text, "class 'common'"), "no note for the well-recalled class");
    CHECK(text && strstr(text, "no better than always predicting 'common'"), "majority baseline note:\n%s",
          text ? text : "(null)");
    free(text);
    classreport_free(&r);

    /* The worked example has no class far below its accuracy: no notes. */
    CHECK(classreport_compute(&r, EX_TRUE, EX_PRED, 10, 3) == 0, "report_compute failed");
    text = capture_report(&r, NULL, 2);
    CHECK(text && !strchr(text, '!'), "unexpected note:\n%s", text ? text : "(null)");
    free(text);
    classreport_free(&r);
}

static void test_confusion_print(void) {
    static const char *const labels[3] = {"cat", "dog", "bird"};
    ClassReport r;
    CHECK(classreport_compute(&r, EX_TRUE, EX_PRED, 10, 3) == 0, "report_compute failed");
    char *text = capture_confusion(&r, labels);
    CHECK(text && strstr(text, "rows: true") && strstr(text, "columns: predicted"), "header:\n%s",
          text ? text : "(null)");
    /* columns headed by the labels, rows hold the counts of the worked example */
    CHECK(text && strstr(text, "|  cat  dog bird\n"), "column labels:\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "\ncat       |    2    1    0\n"), "row cat:\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "\nbird      |    2    0    3\n"), "row bird:\n%s", text ? text : "(null)");
    free(text);
    classreport_free(&r);

    /* 12 classes with long labels: numbered columns, cut row labels, and
     * every matrix line equally long so the columns stay aligned. */
    enum { C = 12, N = 600 };
    int y_true[N], y_pred[N];
    for (int i = 0; i < N; i++) {
        y_true[i] = i % C;
        y_pred[i] = (i % 7 == 0) ? (i / 7) % C : i % C;
    }
    char names[C][64];
    const char *long_labels[C];
    for (int k = 0; k < C; k++) {
        snprintf(names[k], sizeof names[k], "category_number_%02d_with_a_long_descriptive_name", k);
        long_labels[k] = names[k];
    }
    CHECK(classreport_compute(&r, y_true, y_pred, N, C) == 0, "report_compute failed");
    text = capture_confusion(&r, long_labels);
    CHECK(text && count_lines(text) == 3 + C, "lines: %d", count_lines(text));
    CHECK(text && !strstr(text, "long_descriptive_name"), "long labels are cut:\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "category_number_00_with~"), "cut marked with '~':\n%s", text ? text : "(null)");
    CHECK(text && strstr(text, "|  0  1  2  3  4  5  6  7  8  9 10 11\n"), "numbered columns:\n%s",
          text ? text : "(null)");
    /* lines 2..end (column header, rule, rows) have one length */
    const char *line = text ? strchr(text, '\n') : NULL;
    int first_len = -1, aligned = line != NULL;
    while (line && line[1]) {
        const char *end = strchr(line + 1, '\n');
        if (!end) break;
        int len = (int)(end - line - 1);
        if (first_len < 0) first_len = len;
        if (len != first_len) aligned = 0;
        line = end;
    }
    CHECK(aligned && first_len > 0 && first_len < 80, "aligned lines of width %d:\n%s", first_len,
          text ? text : "(null)");
    /* short labels but a table wider than 80 columns: numbered as well */
    static const char *const short_labels[C] = {"alpha", "bravo",   "charlie", "delta", "echo", "foxtrot",
                                                "golf",  "hotel",   "india",   "juliett", "kilo", "lima"};
    char *wide = capture_confusion(&r, short_labels);
    CHECK(wide && strstr(wide, "\n 2 charlie |"), "numbered short labels:\n%s", wide ? wide : "(null)");
    for (const char *p = wide; p && *p;) {
        const char *end = strchr(p, '\n');
        if (!end) break;
        CHECK(end - p <= 80, "line wider than 80: %.*s", (int)(end - p), p);
        p = end + 1;
    }
    free(wide);
    /* the diagonal count of class 0 must appear in row 0 */
    char row0[64];
    snprintf(row0, sizeof row0, "| %2d ", r.confusion[0]);
    CHECK(text && strstr(text, row0), "row 0 starts with %s", row0);
    free(text);
    classreport_free(&r);
}

int main(void) {
    test_worked_example();
    test_sklearn_layout();
    test_zero_division();
    test_bad_input();
    test_rare_class_warning();
    test_confusion_print();
    return check_summary("test_metrics");
}
