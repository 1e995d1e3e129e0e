/* test_observation.c: the epoch table's observation calls a run bad plainly
 * (a loss far above guessing, accuracy at chance or at the majority class's
 * rate, a loss stuck high or swinging, overfitting, a rare class missed while
 * accuracy is high, precision and recall far apart, F1 far below both) and
 * good runs learning, converging or converged; and no number breaks the
 * table's columns. */
#include "tests/check.h"
#include "report/epoch_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_EPOCHS 16

/* A history from train losses, val losses and val accuracies (n entries each). */
static int history(EpochRecord *h, int n, const double *train, const double *val, const double *acc) {
    for (int i = 0; i < n; i++) {
        memset(&h[i], 0, sizeof h[i]);
        h[i].epoch = i + 1;
        h[i].train_loss = train[i];
        h[i].train_acc = acc ? acc[i] : 0.5;
        h[i].val_loss = val ? val[i] : 0;
        h[i].val_acc = acc ? acc[i] : 0.5;
        h[i].val_f1 = acc ? acc[i] : 0.5;
    }
    return n;
}

static char obs[256];

static const char *observe(const EpochRecord *h, int n, int has_val, const ObservationContext *c) {
    int best = 1;
    for (int i = 1; i < n; i++)
        if (h[i].val_loss < h[best - 1].val_loss) best = i + 1;
    epoch_observation(h, n, has_val, best, c, obs, sizeof obs);
    return obs;
}

#define EXPECT(name, got, want) \
    CHECK(strstr((got), (want)) != NULL, "%s: observation '%s' lacks '%s'", (name), (got), (want))
#define EXPECT_NOT(name, got, unwanted) \
    CHECK(strstr((got), (unwanted)) == NULL, "%s: observation '%s' holds '%s'", (name), (got), (unwanted))

static const char *NAMES[] = {"neg", "pos", "spam"};

int main(void) {
    EpochRecord h[MAX_EPOCHS];
    double share2[2] = {0.5, 0.5};
    ObservationContext two = {.n_classes = 2, .majority_rate = 0.5, .majority_name = "neg", .n_measured = 200,
                              .share = share2, .class_names = NAMES};

    /* a healthy run: learning, then converged against ln 2 (not against epoch 1's loss) */
    {
        const double tl[] = {0.70, 0.55, 0.16, 0.04, 0.014}, vl[] = {0.69, 0.17, 0.008, 0.001, 0.0004};
        const double acc[] = {0.52, 0.94, 1.0, 1.0, 1.0};
        double p[2] = {1, 1}, r[2] = {1, 1};
        ObservationContext c = two;
        c.precision = p;
        c.recall = r;
        history(h, 5, tl, vl, acc);
        EXPECT("healthy 1", observe(h, 1, 1, &c), "first epoch (best val loss)");
        EXPECT("healthy 2", observe(h, 2, 1, &c), "learning (best val loss)");
        EXPECT("healthy 5", observe(h, 5, 1, &c), "converged: train loss 0.014 (a uniform guess: 0.69) (best val loss)");
        EXPECT_NOT("healthy 5", obs, "bad");
    }
    /* lr 10: a loss of 209 in epoch 1, then 0.87 with val acc 0.50 is at chance, not "converged" */
    {
        const double tl[] = {209.5749, 40.0, 0.87}, vl[] = {12.2, 3.1, 0.75}, acc[] = {0.5, 0.5, 0.5};
        history(h, 3, tl, vl, acc);
        EXPECT("lr 10, epoch 1", observe(h, 1, 1, &two), "bad: train loss 210, far above a uniform guess's 0.69");
        EXPECT("lr 10, epoch 1", obs, "lower --lr");
        EXPECT("lr 10, epoch 3", observe(h, 3, 1, &two), "bad: at chance, val acc 0.50; guessing among 2 classes gets 0.50");
        EXPECT_NOT("lr 10, epoch 3", obs, "converged");
    }
    /* imbalanced: 95% 'neg'; accuracy 0.95 is what always answering 'neg' gets */
    {
        double share[2] = {0.95, 0.05};
        ObservationContext c = {.n_classes = 2, .majority_rate = 0.95, .majority_name = "neg", .n_measured = 1000,
                                .share = share, .class_names = NAMES};
        const double tl[] = {0.3, 0.2, 0.19}, vl[] = {0.25, 0.2, 0.2}, acc[] = {0.95, 0.95, 0.951};
        history(h, 3, tl, vl, acc);
        EXPECT("majority", observe(h, 3, 1, &c), "bad: at chance, val acc 0.95; always answering 'neg' gets 0.95");
        /* without a validation set the training accuracy is measured */
        EXPECT("majority, no val", observe(h, 3, 0, &c), "train acc 0.95");
    }
    /* a loss stuck near ln 2 while accuracy is a little above chance */
    {
        const double tl[] = {0.70, 0.69, 0.68, 0.68}, vl[] = {0.7, 0.69, 0.69, 0.69}, acc[] = {0.5, 0.62, 0.63, 0.63};
        history(h, 4, tl, vl, acc);
        EXPECT("stuck", observe(h, 4, 1, &two), "bad: train loss stuck at 0.68, near a uniform guess's 0.69");
    }
    /* a loss that swings: up by more than 10% in 2 of the last 3 epochs */
    {
        const double tl[] = {0.6, 0.5, 0.6, 0.45, 0.55}, vl[] = {0.6, 0.5, 0.55, 0.5, 0.52};
        const double acc[] = {0.7, 0.8, 0.75, 0.8, 0.78};
        history(h, 5, tl, vl, acc);
        EXPECT("swings", observe(h, 5, 1, &two), "bad: train loss swings, up in 2 of the last 3 epochs");
    }
    /* training loss falling while validation loss rises */
    {
        const double tl[] = {0.6, 0.4, 0.3, 0.2, 0.1}, vl[] = {0.5, 0.4, 0.45, 0.5, 0.6};
        const double acc[] = {0.7, 0.8, 0.8, 0.8, 0.79};
        history(h, 5, tl, vl, acc);
        EXPECT("overfit 1", observe(h, 3, 1, &two), "val loss up while train loss falls: watch for overfitting");
        EXPECT("overfit 3", observe(h, 5, 1, &two), "overfitting: val loss up 3 epochs while train loss falls");
    }
    /* a rare class missed while accuracy is high */
    {
        double share[2] = {0.9, 0.1}, p[2] = {0.93, 0.9}, r[2] = {0.99, 0.3};
        ObservationContext c = {.n_classes = 2, .majority_rate = 0.9, .majority_name = "neg", .n_measured = 1000,
                                .precision = p, .recall = r, .share = share, .class_names = NAMES};
        const double tl[] = {0.4, 0.3, 0.2}, vl[] = {0.4, 0.3, 0.25}, acc[] = {0.9, 0.93, 0.95};
        history(h, 3, tl, vl, acc);
        EXPECT("rare", observe(h, 3, 1, &c), "bad: class 'pos' recall 0.30 though val acc 0.95");
        EXPECT("rare", obs, "--class-weights balanced");
    }
    /* precision and recall far apart on a class */
    {
        double share[3] = {1 / 3.0, 1 / 3.0, 1 / 3.0}, p[3] = {0.9, 0.95, 0.6}, r[3] = {0.9, 0.5, 0.95};
        ObservationContext c = {.n_classes = 3, .majority_rate = 1 / 3.0, .n_measured = 300, .precision = p,
                                .recall = r, .share = share, .class_names = NAMES};
        const double tl[] = {1.0, 0.8, 0.6}, vl[] = {1.0, 0.8, 0.7}, acc[] = {0.5, 0.7, 0.78};
        history(h, 3, tl, vl, acc);
        EXPECT("apart", observe(h, 3, 1, &c), "bad: class 'pos' precision 0.95, recall 0.50: far apart");
    }
    /* macro F1 far below macro precision and recall */
    {
        double share[2] = {0.5, 0.5}, p[2] = {0.29, 0.01}, r[2] = {0.01, 0.29};
        ObservationContext c = {.n_classes = 2, .majority_rate = 0.5, .n_measured = 200, .precision = p,
                                .recall = r, .share = share, .class_names = NAMES};
        const double tl[] = {0.6, 0.5, 0.4}, vl[] = {0.6, 0.5, 0.45}, acc[] = {0.7, 0.75, 0.8};
        history(h, 3, tl, vl, acc);
        h[2].val_f1 = 0.02;
        EXPECT("F1 low", observe(h, 3, 1, &c), "bad: val F1 0.02 far below precision 0.15 and recall 0.15");
    }
    /* words: a flat loss is a plateau, not "train loss up 0.0%"; a real rise is said in whole percents */
    {
        const double tl[] = {0.5, 0.30, 0.30001}, vl[] = {0.5, 0.3, 0.29}, acc[] = {0.7, 0.85, 0.85};
        history(h, 3, tl, vl, acc);
        EXPECT("flat", observe(h, 3, 1, &two), "plateau");
        EXPECT_NOT("flat", obs, "0.0%");
        const double tl2[] = {0.5, 0.30, 0.31}, acc2[] = {0.7, 0.85, 0.85};
        history(h, 3, tl2, vl, acc2);
        EXPECT("up 3%", observe(h, 3, 1, &two), "train loss up 3%");
        /* no context at all: the old rules, measured against epoch 1 */
        EXPECT("no context", observe(h, 2, 1, NULL), "learning");
    }
    /* non-finite */
    {
        const double tl[] = {0.7, NAN}, vl[] = {0.7, 0.7};
        history(h, 2, tl, vl, NULL);
        EXPECT("nan", observe(h, 2, 1, &two), "diverged");
    }

    /* the table: every '|' where the header has it, whatever the numbers */
    {
        const double values[] = {0.6931, 9.9999, 209.5749, 12345.678, 1e9, 3.2e-7, NAN, INFINITY};
        for (int has_val = 0; has_val <= 1; has_val++) {
            char *text = NULL;
            size_t len = 0;
            FILE *out = open_memstream(&text, &len);
            epoch_table_header(out, has_val);
            for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
                EpochRecord r = {.epoch = (int)(i == 5 ? 1000000 : i + 1), .train_loss = values[i],
                                 .train_acc = 1.0, .val_loss = values[i], .val_acc = 0.5, .val_f1 = 0.25,
                                 .seconds = i == 4 ? 123456789.0 : 0.5};
                epoch_table_row(out, &r, has_val, "remark");
            }
            fclose(out);
            /* the header's bar positions */
            char *line = strtok(text, "\n");
            int bars[16], n_bars = 0;
            for (int k = 0; line[k] && n_bars < 16; k++)
                if (line[k] == '|') bars[n_bars++] = k;
            int rows = 0;
            while ((line = strtok(NULL, "\n"))) {
                if (line[0] == '-') continue;
                rows++;
                int at = 0, ok = 1;
                for (int k = 0; line[k] && at < n_bars; k++)
                    if (line[k] == '|') ok &= k == bars[at++];
                CHECK(ok && at == n_bars, "has_val %d: row breaks the columns: '%s'", has_val, line);
            }
            CHECK(rows == 8, "has_val %d: %d rows", has_val, rows);
            free(text);
        }
        char buf[64];
        format_column(buf, sizeof buf, 209.5749, 6, 4);
        CHECK(strcmp(buf, "209.57") == 0, "209.5749 in 6 columns: '%s'", buf);
        format_column(buf, sizeof buf, 0.6931, 6, 4);
        CHECK(strcmp(buf, "0.6931") == 0, "0.6931 in 6 columns: '%s'", buf);
        format_column(buf, sizeof buf, 1e9, 6, 4);
        CHECK(strcmp(buf, " 1e+09") == 0, "1e9 in 6 columns: '%s'", buf);
    }
    return check_summary("test_observation");
}
