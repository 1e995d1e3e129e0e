/* report.c: end-of-run and eval reports (see report.h). */
#include "run/final_report.h"

#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "report/classreport.h"
#include "report/plot.h"

int dataset_report(Model *m, const EncodedDataset *d, const LabelSet *labels, const char *title, FILE *out,
                   double *accuracy, const char *confusion_png, char *err, size_t errlen) {
    Evaluation e;
    ClassReport rep;
    if (evaluate(m, d, &e) != 0 || report_compute(&rep, d->labels, e.predictions, d->n, labels->n) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *const *names = (const char *const *)labels->names;
    fprintf(out, "\n%s (%d examples, loss %.4f)\n\n", title, d->n, e.loss);
    report_print(&rep, names, 4, out);
    fprintf(out, "\n");
    confusion_print(&rep, names, out);
    *accuracy = rep.accuracy;
    int rc = 0;
    if (confusion_png) {
        int C = labels->n;
        float *counts = malloc(sizeof(float) * C * C);
        if (!counts) rc = -1;
        for (int i = 0; counts && i < C * C; i++) counts[i] = (float)rep.confusion[i];
        char plot_title[256];
        snprintf(plot_title, sizeof plot_title, "Confusion matrix: %s (rows true, columns predicted)", title);
        if (counts) rc = plot_heatmap_png(confusion_png, counts, C, C, names, names, plot_title, NULL, NULL, err, errlen);
        free(counts);
    }
    report_free(&rep);
    evaluation_free(&e);
    return rc;
}

static void loss_chart(FILE *out, const EpochRecord *h, int n, int has_val) {
    double *ys = malloc(sizeof(double) * 2 * (n ? n : 1));
    if (!ys) return;
    for (int i = 0; i < n; i++) {
        ys[i] = h[i].train_loss;
        ys[n + i] = h[i].val_loss;
    }
    PlotSeries series[2] = {{"train loss", ys, n, PLOT_COLOR_TRAIN, 0}, {"val loss", ys + n, n, PLOT_COLOR_VAL, 0}};
    PlotPanel panel = {"Loss per epoch", "epoch", "loss", series, has_val ? 2 : 1};
    fprintf(out, "\n");
    plot_text_chart(out, &panel, 60, 12);
    free(ys);
}

int final_reports(Model *m, const Corpus *c, const char *dir, const EpochRecord *history, int n_history,
                  int best_epoch, int restored_best, int quiet, FitSummary *summary, char *err, size_t errlen) {
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return EXIT_RUNTIME;
    }
    if (n_history > 0) loss_chart(out, history, n_history, c->has_val);
    fprintf(out, "\nrun %s: weights of epoch %d (%s)\n", dir, restored_best ? best_epoch : n_history,
            restored_best ? "best validation loss, restored" : "last epoch");
    char png[4096];
    snprintf(png, sizeof png, "%s/confusion.png", dir);
    double val_acc = 0, test_acc = 0;
    int rc = 0;
    if (c->has_val)
        rc = dataset_report(m, &c->enc_val, &c->labels, "validation", out, &val_acc, png, err, errlen);
    if (rc == 0 && c->has_test)
        rc = dataset_report(m, &c->enc_test, &c->labels, "test", out, &test_acc, c->has_val ? NULL : png, err, errlen);
    if (rc == 0 && !c->has_val && !c->has_test)
        rc = dataset_report(m, &c->enc_train, &c->labels, "training data (no validation set)", out, &val_acc, png,
                            err, errlen);
    fclose(out);
    if (rc == 0) {
        if (!quiet) fputs(text, stdout);
        char path[4096];
        snprintf(path, sizeof path, "%s/report.txt", dir);
        rc = atomic_write(path, text, text_len, err, errlen);
        if (!quiet) printf("\nwrote %s/{model.safetensors,state.safetensors,metrics.csv,curves.png,confusion.png,"
                           "report.txt,run.json}\n", dir);
    }
    free(text);
    if (summary) {
        summary->final_val_acc = val_acc;
        summary->final_test_acc = test_acc;
    }
    return rc == 0 ? EXIT_OK : EXIT_RUNTIME;
}
