/* evaluate.c: evaluation and its report (see evaluate.h). */
#include "run/evaluate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/layers.h"
#include "nn/mlm.h"
#include "report/classreport.h"

int evaluate(Model *m, const EncodedDataset *d, Evaluation *out, char *err, size_t errlen) {
    return evaluate_part(m, d, 0, d->n, out, err, errlen);
}

/* Examples begin..end-1 in order of length (ties in file order), so that a
 * batch pads its examples to about their own length. An example's logits
 * do not depend on its batch or padding (tests/test_model.c), so neither do
 * the results; the loss is summed per example in file order. */
static int *by_length(const EncodedDataset *d, int begin, int end) {
    int n = end - begin, longest = 0;
    for (int i = begin; i < end; i++) longest = d->lengths[i] > longest ? d->lengths[i] : longest;
    int *order = malloc(sizeof(int) * (n ? n : 1)), *count = calloc((size_t)longest + 2, sizeof(int));
    if (order && count) {   /* a counting sort: stable */
        for (int i = begin; i < end; i++) count[d->lengths[i] + 1]++;
        for (int len = 0; len <= longest; len++) count[len + 1] += count[len];
        for (int i = begin; i < end; i++) order[count[d->lengths[i]]++] = i;
    } else {
        free(order);
        order = NULL;
    }
    free(count);
    return order;
}

int evaluate_part(Model *m, const EncodedDataset *d, int begin, int end, Evaluation *out, char *err, size_t errlen) {
    int C = m->cfg.n_classes, B = m->max_batch, n = end - begin;
    memset(out, 0, sizeof *out);
    out->n = n;
    out->predictions = malloc(sizeof(int) * (n ? n : 1));
    out->probs = malloc(sizeof(float) * (size_t)(n ? n : 1) * C);
    double *nll = malloc(sizeof(double) * (n ? n : 1));
    int *tokens = malloc(sizeof(int) * (size_t)B * m->cfg.max_len);
    int *labels = malloc(sizeof(int) * B), *order = by_length(d, begin, end);
    int rc = out->predictions && out->probs && nll && tokens && labels && order
                 ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "out of memory evaluating %d examples", n);
    ForwardOptions eval = {.training = 0, .forward_only = 1};
    long correct = 0;
    for (int start = 0; rc == EXIT_OK && start < n; start += B) {
        int nb = n - start < B ? n - start : B;
        const int *indices = order + start;
        int T = encoded_batch(d, indices, nb, tokens, labels);
        if (T <= 0 || T > m->cfg.max_len) {
            rc = fail(err, errlen, ERR_RUNTIME, "evaluation: batch at example %d has length %d (max_len %d)",
                      indices[nb - 1], T, m->cfg.max_len);   /* the batch's longest */
            break;
        }
        model_forward(m, tokens, NULL, nb, T, &eval);
        for (int i = 0; i < nb; i++) {
            int at = indices[i] - begin;
            out->predictions[at] = model_predicted_class(m, i);
            memcpy(out->probs + (long)at * C, m->probs + (long)i * C, sizeof(float) * C);
            nll[at] = labels[i] >= 0 ? crossentropy_example(m->logits + (long)i * C, labels[i], C) : 0.0;
            correct += labels[i] >= 0 && out->predictions[at] == labels[i];
        }
    }
    double loss_sum = 0.0;
    for (int i = 0; rc == EXIT_OK && i < n; i++) loss_sum += nll[i];
    out->loss_sum = loss_sum;
    out->correct = correct;
    out->loss = n ? loss_sum / n : 0.0;
    out->accuracy = n ? (double)correct / n : 0.0;
    free(nll);
    free(tokens);
    free(labels);
    free(order);
    if (rc != EXIT_OK) evaluation_free(out);
    return rc;
}

int evaluate_mlm(Model *m, const EncodedDataset *d, long first, uint64_t seed, double sums[3], char *err,
                 size_t errlen) {
    int B = m->max_batch;
    size_t cells = (size_t)B * m->cfg.max_len;
    int *tokens = malloc(sizeof(int) * cells), *masked = malloc(sizeof(int) * cells);
    int *targets = malloc(sizeof(int) * cells), *indices = malloc(sizeof(int) * B);
    int rc = tokens && masked && targets && indices
                 ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "out of memory evaluating %d texts", d->n);
    double loss_sum = 0.0, correct = 0.0, count = 0.0;
    ForwardOptions eval = {.training = 0, .forward_only = 1};
    for (int start = 0; rc == EXIT_OK && start < d->n; start += B) {
        int nb = d->n - start < B ? d->n - start : B;
        for (int i = 0; i < nb; i++) indices[i] = start + i;
        int T = encoded_batch(d, indices, nb, tokens, NULL);
        if (T <= 0 || T > m->cfg.max_len) {
            rc = fail(err, errlen, ERR_RUNTIME, "evaluation: batch at text %d has length %d (max_len %d)", start, T,
                      m->cfg.max_len);
            break;
        }
        mlm_mask(masked, targets, tokens, nb, T, m->cfg.vocab_size, seed, 0, MLM_SITE_HELDOUT, first + start, NULL);
        float batch_loss = model_forward_mlm(m, masked, targets, nb, T, &eval);
        int M = model_mlm_count(m);
        loss_sum += (double)batch_loss * M;
        /* no target is [UNK] (mlm_mask never selects it): an [UNK] guess is never counted right */
        for (int i = 0; i < M; i++) correct += model_mlm_predicted(m, i) == model_mlm_target(m, i);
        count += M;
    }
    sums[0] = loss_sum;
    sums[1] = correct;
    sums[2] = count;
    free(tokens);
    free(masked);
    free(targets);
    free(indices);
    return rc;
}

void evaluation_free(Evaluation *e) {
    free(e->predictions);
    free(e->probs);
    memset(e, 0, sizeof *e);
}

double evaluation_macro_f1(const Evaluation *e, const EncodedDataset *d, int n_classes) {
    ClassReport rep;
    if (classreport_compute(&rep, d->labels, e->predictions, d->n, n_classes) != 0) return NAN;
    double f1 = rep.macro_f1;
    classreport_free(&rep);
    return f1;
}

int evaluate_shared(Model *m, const DistContext *dist, const EncodedDataset *d, int total, Evaluation *out,
                    int **labels, char *err, size_t errlen) {
    Evaluation mine;
    *labels = NULL;
    int rc = evaluate_part(m, d, 0, d->n, &mine, err, errlen);
    if (rc != EXIT_OK) return rc;
    memset(out, 0, sizeof *out);
    out->n = total;
    out->predictions = malloc(sizeof(int) * (total ? total : 1));
    *labels = malloc(sizeof(int) * (total ? total : 1));
    if (!out->predictions || !*labels) {
        evaluation_free(&mine);
        evaluation_free(out);
        free(*labels);
        *labels = NULL;
        return fail(err, errlen, ERR_RUNTIME, "out of memory evaluating %d examples", total);
    }
    double sums[2] = {mine.loss_sum, (double)mine.correct};
    dist_sum_doubles(dist, sums, 2);
    dist_gather_ints(dist, mine.predictions, mine.n, out->predictions);
    dist_gather_ints(dist, d->labels, d->n, *labels);
    evaluation_free(&mine);
    out->loss_sum = sums[0];
    out->correct = (long)sums[1];
    out->loss = total ? sums[0] / total : 0.0;
    out->accuracy = total ? sums[1] / total : 0.0;
    return EXIT_OK;
}

/* The report of e against labels (both e->n) into out; *accuracy. */
static int report_of(const Evaluation *e, const int *labels, const LabelSet *classes, const char *title, FILE *out,
                     double *accuracy, const char *confusion_png, char *err, size_t errlen) {
    ClassReport rep;
    if (classreport_compute(&rep, labels, e->predictions, e->n, classes->n) != 0)
        return fail(err, errlen, ERR_RUNTIME, "out of memory");
    const char *const *names = (const char *const *)classes->names;
    /* "validation (200 examples, loss 0.1234)"; a title that ends in its own
     * remark in parentheses takes the counts inside it:
     * "training data (no validation set; 700 examples, loss 0.1234)" */
    size_t tlen = strlen(title);
    int remark = tlen > 0 && title[tlen - 1] == ')';
    fprintf(out, "\n%.*s%s%d example%s, loss %.4f)\n\n", (int)(remark ? tlen - 1 : tlen), title, remark ? "; " : " (",
            e->n, e->n == 1 ? "" : "s", e->loss);
    classreport_print(&rep, names, 4, out);
    fprintf(out, "\n");
    classreport_confusion(&rep, names, out);
    *accuracy = rep.accuracy;
    int rc = EXIT_OK;
    if (confusion_png && classreport_confusion_png(&rep, names, title, confusion_png, err, errlen) != 0)
        rc = ERR_RUNTIME;
    classreport_free(&rep);
    return rc;
}

int evaluation_report(Model *m, const EncodedDataset *d, const LabelSet *labels, const char *title, FILE *out,
                      double *accuracy, const char *confusion_png, char *err, size_t errlen) {
    DistContext solo = dist_solo();
    return evaluation_report_shared(m, &solo, d, d->n, labels, title, out, accuracy, confusion_png, err, errlen);
}

int evaluation_report_shared(Model *m, const DistContext *dist, const EncodedDataset *d, int total,
                             const LabelSet *labels, const char *title, FILE *out, double *accuracy,
                             const char *confusion_png, char *err, size_t errlen) {
    Evaluation e;
    int *truth;
    int rc = evaluate_shared(m, dist, d, total, &e, &truth, err, errlen);
    if (rc != EXIT_OK) return rc;
    if (out) rc = report_of(&e, truth, labels, title, out, accuracy, confusion_png, err, errlen);
    else *accuracy = e.accuracy;
    evaluation_free(&e);
    free(truth);
    return rc;
}
