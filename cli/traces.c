/* traces.c: traces side by side (see traces.h). */
#include "cli/traces.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/metrics_csv.h"
#include "run/rundir.h"

static int same_numbers(const EpochRecord *a, const EpochRecord *b, int has_val) {
    /* compared as metrics.csv prints them: time columns are not part of a trace */
    char x[256], y[256];
    snprintf(x, sizeof x, "%.6f %.6f %.6f %.6f %.6f %.6e", a->train_loss, a->train_acc, has_val ? a->val_loss : 0,
             has_val ? a->val_acc : 0, has_val ? a->val_f1 : 0, a->lr);
    snprintf(y, sizeof y, "%.6f %.6f %.6f %.6f %.6f %.6e", b->train_loss, b->train_acc, has_val ? b->val_loss : 0,
             has_val ? b->val_acc : 0, has_val ? b->val_f1 : 0, b->lr);
    return strcmp(x, y) == 0;
}

/* One side of a row: loss and accuracy, then the validation pair or blanks. */
static void trace_cells(char *buf, size_t len, const EpochRecord *r, int has_val) {
    if (has_val) snprintf(buf, len, "%8.4f %8.4f %8.4f %8.4f", r->train_loss, r->train_acc, r->val_loss, r->val_acc);
    else snprintf(buf, len, "%8.4f %8.4f", r->train_loss, r->train_acc);
}

int traces_print(FILE *out, const char *name_a, const EpochRecord *a, int n_a, const char *name_b,
                 const EpochRecord *b, int n_b, int has_val, int mark_diff) {
    int n = n_a > n_b ? n_a : n_b, differing = 0, first_marked = 0;
    fprintf(out, "      | %-38.38s | %-38.38s |\n", name_a, name_b);
    fprintf(out, "Epoch | %8s %8s %8s %8s   | %8s %8s %8s %8s   |\n", "loss", "acc", has_val ? "val loss" : "",
            has_val ? "val acc" : "", "loss", "acc", has_val ? "val loss" : "", has_val ? "val acc" : "");
    for (int i = 0; i < n; i++) {
        char left[64] = "", right[64] = "";
        if (i < n_a) trace_cells(left, sizeof left, &a[i], has_val);
        if (i < n_b) trace_cells(right, sizeof right, &b[i], has_val);
        int same = i < n_a && i < n_b && same_numbers(&a[i], &b[i], has_val);
        const char *mark = "";
        if (!same) {
            differing++;
            if (mark_diff && !first_marked) { mark = "  <- first difference"; first_marked = 1; }
        }
        fprintf(out, "%5d | %-38s | %-38s |%s\n", i + 1, left, right, mark);
    }
    return differing;
}

int traces_read(const char *dir, EpochRecord **h, int *has_val) {
    char path[4096], err[512];
    rundir_path(path, sizeof path, dir, "metrics.csv");
    int n = metrics_csv_read(path, h, has_val, err, sizeof err);
    if (n < 0) fprintf(stderr, "error: %s\n", err);
    return n;
}
