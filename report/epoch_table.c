/* epoch_table.c: what a training run prints per epoch: the table row with
 * its observation, and the progress bar (see epoch_table.h). */
#include "report/epoch_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#define CONVERGING_GAIN 0.05   /* train loss falling by less than 5% an epoch */
#define PLATEAU_GAIN 0.01      /* ... by less than 1% */
#define CONVERGED_FRACTION 0.05 /* train loss below 5% of the first epoch's */

/* Epochs in a row, ending at the last, where val loss rose while train loss fell. */
static int overfit_streak(const EpochRecord *h, int n) {
    int streak = 0;
    for (int i = n - 1; i > 0; i--) {
        if (h[i].val_loss > h[i - 1].val_loss && h[i].train_loss < h[i - 1].train_loss) streak++;
        else break;
    }
    return streak;
}

void epoch_observation(const EpochRecord *h, int n, int has_val, int best_epoch, char *buf, size_t len) {
    const EpochRecord *last = &h[n - 1];
    const char *best = has_val && best_epoch == last->epoch ? " (best val loss)" : "";
    if (!isfinite(last->train_loss) || (has_val && !isfinite(last->val_loss))) {
        snprintf(buf, len, "diverged: the loss is not a finite number");
        return;
    }
    if (n == 1) {
        snprintf(buf, len, "first epoch%s", best);
        return;
    }
    const EpochRecord *prev = &h[n - 2];
    double gain = (prev->train_loss - last->train_loss) / fmax(prev->train_loss, 1e-12);
    /* once the loss is a small fraction of where it started, its swings are noise */
    int converged = last->train_loss < CONVERGED_FRACTION * h[0].train_loss;
    int streak = has_val ? overfit_streak(h, n) : 0;
    if (gain < -0.5 && !converged) snprintf(buf, len, "diverging: train loss up %.0f%%", -100 * gain);
    else if (streak >= 2) snprintf(buf, len, "overfitting: val loss up %d epochs while train loss falls", streak);
    else if (streak == 1) snprintf(buf, len, "val loss up while train loss falls: watch for overfitting");
    else if (converged) snprintf(buf, len, "converged: train loss %.2g%% of epoch 1's%s",
                                 100 * last->train_loss / h[0].train_loss, best);
    else if (gain < 0) snprintf(buf, len, "train loss up %.1f%%%s", -100 * gain, best);
    else if (gain < PLATEAU_GAIN) snprintf(buf, len, "plateau%s", best);
    else if (gain < CONVERGING_GAIN) snprintf(buf, len, "converging%s", best);
    else snprintf(buf, len, "learning%s", best);
}

void epoch_table_header(FILE *out, int has_val) {
    if (has_val) {
        fprintf(out, "Epoch |   Loss | Accuracy | Val loss | Val acc | Val F1 | Seconds | Observation\n");
        fprintf(out, "------+--------+----------+----------+---------+--------+---------+------------\n");
    } else {
        fprintf(out, "Epoch |   Loss | Accuracy | Seconds | Observation\n");
        fprintf(out, "------+--------+----------+---------+------------\n");
    }
    fflush(out);
}

void epoch_table_row(FILE *out, const EpochRecord *r, int has_val, const char *observation) {
    if (has_val)
        fprintf(out, "%5d | %6.4f | %8.4f | %8.4f | %7.4f | %6.4f | %7.1f | %s\n", r->epoch, r->train_loss,
                r->train_acc, r->val_loss, r->val_acc, r->val_f1, r->seconds, observation);
    else
        fprintf(out, "%5d | %6.4f | %8.4f | %7.1f | %s\n", r->epoch, r->train_loss, r->train_acc, r->seconds,
                observation);
    fflush(out);
}

void epoch_table_header_mlm(FILE *out, int has_val) {
    if (has_val) {
        fprintf(out, "Epoch |   Loss | Accuracy | Perplexity | Val loss | Val acc |  Val ppl | Seconds | Observation\n");
        fprintf(out, "------+--------+----------+------------+----------+---------+----------+---------+------------\n");
    } else {
        fprintf(out, "Epoch |   Loss | Accuracy | Perplexity | Seconds | Observation\n");
        fprintf(out, "------+--------+----------+------------+---------+------------\n");
    }
    fflush(out);
}

void epoch_table_row_mlm(FILE *out, const EpochRecord *r, int has_val, const char *observation) {
    if (has_val)
        fprintf(out, "%5d | %6.4f | %8.4f | %10.2f | %8.4f | %7.4f | %8.2f | %7.1f | %s\n", r->epoch, r->train_loss,
                r->train_acc, exp(r->train_loss), r->val_loss, r->val_acc, exp(r->val_loss), r->seconds, observation);
    else
        fprintf(out, "%5d | %6.4f | %8.4f | %10.2f | %7.1f | %s\n", r->epoch, r->train_loss, r->train_acc,
                exp(r->train_loss), r->seconds, observation);
    fflush(out);
}

/* ------------------------------------------------------------ progress bar */

static void format_duration(double seconds, char *buf, size_t len) {
    long s = (long)(seconds + 0.5);
    if (s >= 3600) snprintf(buf, len, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
    else snprintf(buf, len, "%ld:%02ld", s / 60, s % 60);
}

void progress_draw(ProgressBar *bar, int epoch, int epochs, int step, int steps, double elapsed,
                   double loss, double acc) {
    if (!bar->enabled || (elapsed - bar->last_draw < 0.1 && step < steps)) return;
    bar->last_draw = elapsed;
    enum { WIDTH = 24 };
    int filled = steps > 0 ? step * WIDTH / steps : WIDTH;
    char cells[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++) cells[i] = i < filled ? '=' : i == filled ? '>' : ' ';
    cells[WIDTH] = '\0';
    char eta[32];
    format_duration(step > 0 ? elapsed / step * (steps - step) : 0.0, eta, sizeof eta);
    printf("\r\033[Kepoch %d/%d [%s] %d/%d  ETA %s  loss %.4f  acc %.4f", epoch, epochs, cells, step, steps, eta,
           loss, acc);
    fflush(stdout);
}

void progress_clear(ProgressBar *bar) {
    if (!bar->enabled) return;
    printf("\r\033[K");
    fflush(stdout);
}
