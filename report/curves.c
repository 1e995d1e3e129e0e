/* curves.c: epoch histories as charts (see curves.h). */
#include "report/curves.h"

#include <math.h>
#include <stdlib.h>

#include "report/plot.h"

/* ys (4, n): train loss, val loss, train acc, val acc; epochs past
 * n_have are NaN (gaps). */
static void four_columns(const EpochRecord *h, int n_have, int n, double *ys) {
    const HistoryField fields[4] = {HISTORY_TRAIN_LOSS, HISTORY_VAL_LOSS, HISTORY_TRAIN_ACC, HISTORY_VAL_ACC};
    for (int k = 0; k < 4; k++) {
        history_column(h, n_have, fields[k], ys + k * n);
        for (int i = n_have; i < n; i++) ys[k * n + i] = NAN;
    }
}

int curves_write_png(const char *path, const EpochRecord *h, int n, int has_val, int best_epoch, char *err,
                     size_t errlen) {
    double *ys = malloc(sizeof(double) * 4 * (n ? n : 1));
    if (!ys) return fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    four_columns(h, n, n, ys);
    PlotSeries loss[2] = {{"train", ys, n, PLOT_COLOR_TRAIN, 0}, {"val", ys + n, n, PLOT_COLOR_VAL, 0}};
    PlotSeries acc[2] = {{"train", ys + 2 * n, n, PLOT_COLOR_TRAIN, 0}, {"val", ys + 3 * n, n, PLOT_COLOR_VAL, 0}};
    char mark[64];
    snprintf(mark, sizeof mark, "best val loss: epoch %d (restored)", best_epoch);
    int marked = best_epoch > 0 && best_epoch <= n ? best_epoch : 0;
    PlotPanel panels[2] = {{"Loss", "epoch", "cross-entropy", loss, has_val ? 2 : 1, marked, mark},
                           {"Accuracy", "epoch", "accuracy", acc, has_val ? 2 : 1, marked, mark}};
    int rc = plot_panels_png(path, panels, 2, 1000, 420, err, errlen);
    free(ys);
    return rc == 0 ? EXIT_OK : ERR_RUNTIME;
}

void curves_text_chart(FILE *out, const EpochRecord *h, int n, int has_val) {
    double *ys = malloc(sizeof(double) * 4 * (n ? n : 1));
    if (!ys) return;
    four_columns(h, n, n, ys);
    PlotSeries series[2] = {{"train loss", ys, n, PLOT_COLOR_TRAIN, 0}, {"val loss", ys + n, n, PLOT_COLOR_VAL, 0}};
    PlotPanel panel = {"Loss per epoch", "epoch", "loss", series, has_val ? 2 : 1, 0, NULL};
    fprintf(out, "\n");
    plot_text_chart(out, &panel, 60, 12);
    free(ys);
}

int curves_compare_png(const char *path, const EpochRecord *const history[2], const int n_epochs[2],
                       const int has_val[2], const char *const names[2], char *err, size_t errlen) {
    int n = n_epochs[0] > n_epochs[1] ? n_epochs[0] : n_epochs[1];
    double *ys = calloc((size_t)8 * (n ? n : 1), sizeof(double));
    if (!ys) return fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    for (int r = 0; r < 2; r++) four_columns(history[r], n_epochs[r], n, ys + r * 4 * n);
    char labels[4][64];
    const char *kinds[] = {"train", "val"};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) snprintf(labels[r * 2 + k], 64, "%s %s", names[r], kinds[k]);
    const uint32_t colors[2][2] = {{PLOT_COLOR_TRAIN, PLOT_COLOR_VAL}, {PLOT_COLOR_3, PLOT_COLOR_4}};
    PlotSeries loss[4], acc[4];
    int n_series = 0;
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < (has_val[r] ? 2 : 1); k++) {
            /* column order per run: train loss, val loss, train acc, val acc */
            loss[n_series] = (PlotSeries){labels[r * 2 + k], ys + (r * 4 + k) * n, n, colors[r][k], r == 1};
            acc[n_series] = (PlotSeries){labels[r * 2 + k], ys + (r * 4 + 2 + k) * n, n, colors[r][k], r == 1};
            n_series++;
        }
    PlotPanel panels[2] = {{"Loss", "epoch", "cross-entropy", loss, n_series, 0, NULL},
                           {"Accuracy", "epoch", "accuracy", acc, n_series, 0, NULL}};
    int rc = plot_panels_png(path, panels, 2, 1100, 460, err, errlen);
    free(ys);
    return rc == 0 ? EXIT_OK : ERR_RUNTIME;
}
