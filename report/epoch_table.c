/* epoch_table.c: what a training run prints per epoch: the table row with
 * its observation, and the progress bar (see epoch_table.h). */
#include "report/epoch_table.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

#define CONVERGING_GAIN 0.05    /* train loss falling by less than 5% an epoch */
#define PLATEAU_GAIN 0.01       /* ... by less than 1% */
#define CONVERGED_FRACTION 0.05 /* train loss below 5% of a uniform guess's ln(C) */
#define FAR_ABOVE_GUESS 3.0     /* train loss above 3 ln(C): the steps are too large */
#define STUCK_FRACTION 0.9      /* train loss above 90% of ln(C) for 3 epochs: not learning */
#define SWING_RISE 0.10         /* a rise of more than 10% in an epoch counts as a swing */
#define APART 0.30              /* a class's precision and recall this far apart */
#define F1_BELOW 0.10           /* macro F1 this far below macro precision and recall */
#define RARE_RECALL 0.50        /* a rarer-than-even class found less than half the time */

/* Epochs in a row, ending at the last, where val loss rose while train loss fell. */
static int overfit_streak(const EpochRecord *h, int n) {
    int streak = 0;
    for (int i = n - 1; i > 0; i--) {
        if (h[i].val_loss > h[i - 1].val_loss && h[i].train_loss < h[i - 1].train_loss) streak++;
        else break;
    }
    return streak;
}

/* Accuracy no better than guessing: within two standard errors (at least
 * 0.02) of the better of 1/C and always answering the majority class. */
static int at_chance(const ObservationContext *c, double acc, double *baseline) {
    if (!c || c->n_classes < 2) return 0;
    double b = fmax(1.0 / c->n_classes, c->majority_rate);
    double margin = c->n_measured > 0 ? fmax(0.02, 2.0 * sqrt(b * (1.0 - b) / c->n_measured)) : 0.02;
    *baseline = b;
    return acc <= b + margin;
}

/* The first class rarer than an even share whose recall is low, or -1. */
static int missed_rare_class(const ObservationContext *c) {
    if (!c || !c->recall || !c->share || c->n_classes < 2) return -1;
    for (int k = 0; k < c->n_classes; k++)
        if (c->share[k] > 0 && c->share[k] < 1.0 / c->n_classes && c->recall[k] < RARE_RECALL) return k;
    return -1;
}

/* The class whose precision and recall are furthest apart (at least APART), or -1. */
static int precision_recall_apart(const ObservationContext *c) {
    if (!c || !c->precision || !c->recall || !c->share) return -1;
    int worst = -1;
    double gap = APART;
    for (int k = 0; k < c->n_classes; k++) {
        double d = fabs(c->precision[k] - c->recall[k]);
        if (c->share[k] > 0 && d >= gap) {
            gap = d;
            worst = k;
        }
    }
    return worst;
}

static const char *class_name(const ObservationContext *c, int k, char *buf, size_t len) {
    if (c->class_names && c->class_names[k]) snprintf(buf, len, "%.24s", c->class_names[k]);
    else snprintf(buf, len, "%d", k);
    return buf;
}

void epoch_observation(const EpochRecord *h, int n, int has_val, int best_epoch, const ObservationContext *c,
                       char *buf, size_t len) {
    const EpochRecord *last = &h[n - 1];
    const char *best = has_val && best_epoch == last->epoch ? " (best val loss)" : "";
    const char *set = has_val ? "val" : "train";
    double acc = has_val ? last->val_acc : last->train_acc;
    int C = c ? c->n_classes : 0;
    /* a uniform guess's loss, ln(C): where a model starts, and what "low" is measured against */
    double guess_loss = C >= 2 ? log((double)C) : h[0].train_loss;
    char name[32];
    if (!isfinite(last->train_loss) || (has_val && !isfinite(last->val_loss))) {
        snprintf(buf, len, "diverged: the loss is not a finite number");
        return;
    }
    if (C >= 2 && last->train_loss > FAR_ABOVE_GUESS * guess_loss) {
        snprintf(buf, len, "bad: train loss %.3g, far above a uniform guess's %.2f (try a lower --lr)",
                 last->train_loss, guess_loss);
        return;
    }
    if (n == 1) {
        snprintf(buf, len, "first epoch%s", best);
        return;
    }
    const EpochRecord *prev = &h[n - 2];
    double gain = (prev->train_loss - last->train_loss) / fmax(prev->train_loss, 1e-12);
    /* once the loss is a small fraction of a guess's, its swings are noise */
    int converged = last->train_loss < CONVERGED_FRACTION * guess_loss;
    int streak = has_val ? overfit_streak(h, n) : 0;
    double baseline = 0;
    if (gain < -0.5 && !converged) {
        snprintf(buf, len, "diverging: train loss up %.0f%%", -100 * gain);
        return;
    }
    if (at_chance(c, acc, &baseline)) {
        if (c->majority_rate > 1.0 / C + 0.01 && c->majority_name)
            snprintf(buf, len, "bad: at chance, %s acc %.2f; always answering '%.24s' gets %.2f", set, acc,
                     c->majority_name, baseline);
        else
            snprintf(buf, len, "bad: at chance, %s acc %.2f; guessing among %d classes gets %.2f", set, acc, C,
                     baseline);
        return;
    }
    if (n >= 3 && C >= 2) {
        int stuck = 1;
        for (int i = n - 3; i < n; i++) stuck &= h[i].train_loss > STUCK_FRACTION * guess_loss;
        if (stuck) {
            snprintf(buf, len, "bad: train loss stuck at %.2f, near a uniform guess's %.2f", last->train_loss,
                     guess_loss);
            return;
        }
    }
    if (n >= 4 && !converged) {
        int rises = 0;
        for (int i = n - 3; i < n; i++)
            rises += h[i].train_loss > h[i - 1].train_loss * (1.0 + SWING_RISE);
        if (rises >= 2) {
            snprintf(buf, len, "bad: train loss swings, up in %d of the last 3 epochs (try a lower --lr)", rises);
            return;
        }
    }
    if (streak >= 2) {
        snprintf(buf, len, "overfitting: val loss up %d epochs while train loss falls", streak);
        return;
    }
    int rare = has_val ? missed_rare_class(c) : -1;
    if (rare >= 0) {
        snprintf(buf, len, "bad: class '%s' recall %.2f though val acc %.2f (try --class-weights balanced)",
                 class_name(c, rare, name, sizeof name), c->recall[rare], acc);
        return;
    }
    int apart = has_val ? precision_recall_apart(c) : -1;
    if (apart >= 0) {
        snprintf(buf, len, "bad: class '%s' precision %.2f, recall %.2f: far apart",
                 class_name(c, apart, name, sizeof name), c->precision[apart], c->recall[apart]);
        return;
    }
    if (has_val && c && c->precision && c->recall && C >= 2) {
        double p = 0, r = 0;
        for (int k = 0; k < C; k++) {
            p += c->precision[k] / C;
            r += c->recall[k] / C;
        }
        if (last->val_f1 < fmin(p, r) - F1_BELOW) {
            snprintf(buf, len, "bad: val F1 %.2f far below precision %.2f and recall %.2f", last->val_f1, p, r);
            return;
        }
    }
    if (streak == 1) snprintf(buf, len, "val loss up while train loss falls: watch for overfitting");
    else if (converged) snprintf(buf, len, "converged: train loss %.2g (a uniform guess: %.2f)%s", last->train_loss,
                                 guess_loss, best);
    else if (gain <= -PLATEAU_GAIN) snprintf(buf, len, "train loss up %.0f%%%s", -100 * gain, best);
    else if (gain < PLATEAU_GAIN) snprintf(buf, len, "plateau%s", best);
    else if (gain < CONVERGING_GAIN) snprintf(buf, len, "converging%s", best);
    else snprintf(buf, len, "learning%s", best);
}

void format_column(char *buf, size_t len, double v, int width, int decimals) {
    char tmp[64];
    if (!isfinite(v)) {
        snprintf(buf, len, "%*s", width, isnan(v) ? "nan" : v > 0 ? "inf" : "-inf");
        return;
    }
    for (int d = decimals; d >= 0; d--) {
        snprintf(tmp, sizeof tmp, "%.*f", d, v);
        if ((int)strlen(tmp) <= width) {
            snprintf(buf, len, "%*s", width, tmp);
            return;
        }
    }
    for (int d = width; d >= 0; d--) {
        snprintf(tmp, sizeof tmp, "%.*e", d, v);
        if ((int)strlen(tmp) <= width || d == 0) break;
    }
    snprintf(buf, len, "%*s", width, tmp);
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
    char epoch[64], loss[64], acc[64], val_loss[64], val_acc[64], val_f1[64], seconds[64];
    format_column(epoch, sizeof epoch, r->epoch, 5, 0);
    format_column(loss, sizeof loss, r->train_loss, 6, 4);
    format_column(acc, sizeof acc, r->train_acc, 8, 4);
    format_column(seconds, sizeof seconds, r->seconds, 7, 1);
    if (has_val) {
        format_column(val_loss, sizeof val_loss, r->val_loss, 8, 4);
        format_column(val_acc, sizeof val_acc, r->val_acc, 7, 4);
        format_column(val_f1, sizeof val_f1, r->val_f1, 6, 4);
        fprintf(out, "%s | %s | %s | %s | %s | %s | %s | %s\n", epoch, loss, acc, val_loss, val_acc, val_f1, seconds,
                observation);
    } else {
        fprintf(out, "%s | %s | %s | %s | %s\n", epoch, loss, acc, seconds, observation);
    }
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
