/* step.c: one training step (see trainer.h). train_step and the
 * forward_backward below it read on one screen: forward, loss, backward,
 * clipping, AdamW. What pretraining (masked tokens), --bpe-dropout,
 * --accum-steps and MPI add sits behind named calls, each keyed by the
 * global step and by each example's place in the global batch, so that
 * ranks and micro-batches draw what one process would. */
#include <math.h>
#include <string.h>

#include "base/errors.h"
#include "nn/mlm.h"
#include "run/rundir.h"
#include "run/schedule.h"
#include "run/trainer.h"

static int my_examples(Trainer *t, int s);
static int forward_backward(Trainer *t, long step, const int *indices, const int *rows, int n, double stats[4],
                            double *weight);
static int mlm_forward_backward(Trainer *t, long step, const int *rows, int n, int T, double stats[4],
                                double *weight);
static int split_subwords(Trainer *t, long step, const int *rows, int n, int T);
static int accumulate_micro_batches(Trainer *t, long step, int n, double stats[4], double *weight);
static void sum_over_ranks(Trainer *t, double stats[4], double weight);
static int not_finite(const Trainer *t, int epoch, int s, long step, char *err, size_t errlen);
static void add_to_progress(TrainProgress *p, const double stats[4]);

/* ------------------------------------------------------------ the step */

int train_step(Trainer *t, int epoch, int s, char *err, size_t errlen) {
    const Options *o = t->o;
    Model *m = t->model;
    long step = (long)(epoch - 1) * t->steps_per_epoch + s;   /* the global step: keys every random draw */
    double stats[4] = {0, 0, 0, 0};   /* loss, correct, tokens, examples (masked positions when pretraining) */
    double weight = 0.0;              /* what the loss is a weighted mean over: class weights, or 1 an example */
    int n = my_examples(t, s), bad = 0;   /* this rank's examples of batch s (the whole batch in one process) */
    if (n == 0) model_zero_grad(m);   /* MPI: a rank holding none of the batch adds nothing */
    else if (n <= t->micro_rows) bad = forward_backward(t, step, t->indices, t->rows, n, stats, &weight);
    else bad = accumulate_micro_batches(t, step, n, stats, &weight);   /* --accum-steps */
    if (bad) return fail(err, errlen, ERR_RUNTIME, "epoch %d, step %d: a batch index is out of range", epoch, s + 1);
    if (t->dist->size > 1) sum_over_ranks(t, stats, weight);   /* MPI: every rank gets the whole batch's gradient */
    if (!isfinite(stats[0]) || !isfinite(model_clip_grads(m, o->clip)))   /* clip: the global norm to --clip */
        return not_finite(t, epoch, s, step, err, errlen);
    float lr = (float)schedule_cycle_lr(o->lr, o->warmup, step, t->steps_per_epoch, o->cycle, o->epochs);
    model_adamw_step(m, lr, (float)o->weight_decay);
    add_to_progress(&t->progress, stats);
    return EXIT_OK;
}

/* ------------------------------------------------------------ forward and backward */

/* Forward, loss and backward on n examples (local indices; rows: their
 * places in the global batch): gradients in the model; stats as train_step's
 * (zeroed by the caller) and *weight, the loss weight of the examples. -1
 * when the batch cannot be built. */
static int forward_backward(Trainer *t, long step, const int *indices, const int *rows, int n, double stats[4],
                            double *weight) {
    Model *m = t->model;
    int T = encoded_batch(&t->corpus.enc_train, indices, n, t->tokens, t->labels);   /* ids (n, T), labels (n) */
    if (T <= 0) return -1;
    if (t->mlm) return mlm_forward_backward(t, step, rows, n, T, stats, weight);
    stats[3] = n;
    if (t->splits.parts) T = split_subwords(t, step, rows, n, T);
    /* dropout keyed by each example's place in the global batch: the masks of one process */
    ForwardOptions opt = {.training = 1, .seed = (uint64_t)t->o->seed, .step = (uint64_t)step, .rows = rows,
                          .class_weights = t->class_weights};
    stats[0] = model_forward(m, t->tokens, t->labels, n, T, &opt);   /* forward and the cross-entropy loss */
    model_backward(m);                                               /* backward: the gradients in m->grads */
    for (int i = 0; i < n; i++) {
        stats[1] += model_predicted_class(m, i) == t->labels[i];
        for (int k = 0; k < T; k++) stats[2] += t->tokens[i * T + k] != TOKEN_PAD;
        *weight += t->class_weights ? t->class_weights[t->labels[i]] : 1.0;
    }
    return 0;
}

/* Pretraining: the batch masked (15%, 80-10-10, nn/mlm.c), the tied MLM
 * head's loss over the masked positions, and its backward. */
static int mlm_forward_backward(Trainer *t, long step, const int *rows, int n, int T, double stats[4],
                                double *weight) {
    Model *m = t->model;
    mlm_mask(t->mlm_tokens, t->mlm_targets, t->tokens, n, T, t->corpus.vocab.size, (uint64_t)t->o->seed,
             (uint64_t)step, MLM_SITE_TRAIN, 0, rows);
    ForwardOptions opt = {.training = 1, .seed = (uint64_t)t->o->seed, .step = (uint64_t)step, .rows = rows};
    stats[0] = model_forward_mlm(m, t->mlm_tokens, t->mlm_targets, n, T, &opt);
    int M = model_mlm_count(m);
    /* masked-token accuracy: no target is [UNK] (mlm_mask never selects it), so none counts */
    for (int i = 0; i < M; i++) stats[1] += model_mlm_predicted(m, i) == model_mlm_target(m, i);
    stats[3] = M;
    model_backward(m);
    for (long i = 0; i < (long)n * T; i++) stats[2] += t->tokens[i] != TOKEN_PAD;
    *weight = stats[3];   /* the loss is a mean over the masked positions */
    return 0;
}

/* --bpe-dropout: merged subwords of the batch split back into their parts
 * by keyed draws; returns the new length. */
static int split_subwords(Trainer *t, long step, const int *rows, int n, int T) {
    BpeDropoutKey key = {t->o->bpe_dropout, (uint64_t)t->o->seed, (uint64_t)step, rows};
    return bpe_dropout_batch(t->tokens, n, T, t->corpus.max_len, &t->splits, key, t->split_work);
}

/* More examples than one forward takes (--accum-steps): micro-batches of
 * micro_rows, their gradients and losses summed, each weighted by its loss
 * weight, into the weighted mean over all of them (in double: one rounding). */
static int accumulate_micro_batches(Trainer *t, long step, int n, double stats[4], double *weight) {
    Model *m = t->model;
    size_t P = m->n_params;
    memset(t->accum, 0, sizeof(double) * P);
    for (int at = 0; at < n; at += t->micro_rows) {
        int size = n - at < t->micro_rows ? n - at : t->micro_rows;
        double part[4] = {0, 0, 0, 0}, w = 0.0;
        if (forward_backward(t, step, t->indices + at, t->rows + at, size, part, &w) != 0) return -1;
        for (size_t i = 0; i < P; i++) t->accum[i] += w * (double)m->grads[i];
        stats[0] += part[0] * w;
        for (int k = 1; k < 4; k++) stats[k] += part[k];
        *weight += w;
    }
    for (size_t i = 0; i < P; i++) m->grads[i] = *weight > 0.0 ? (float)(t->accum[i] / *weight) : 0.0f;
    stats[0] = *weight > 0.0 ? stats[0] / *weight : 0.0;
    return 0;
}

/* ------------------------------------------------------------ the batch, the ranks, the progress */

/* The examples of batch s this rank holds (all of them in one process):
 * their local indices in t->indices and places in the global batch in
 * t->rows, in batch order. Returns how many. */
static int my_examples(Trainer *t, int s) {
    int B = t->o->batch_size, start = s * B;
    int nb = t->n_train - start < B ? t->n_train - start : B;
    int first = t->corpus.train.first, held = t->corpus.enc_train.n, n = 0;
    for (int i = 0; i < nb; i++) {
        int local = t->order[start + i] - first;
        if (local < 0 || local >= held) continue;
        t->indices[n] = local;
        t->rows[n++] = i;
    }
    return n;
}

/* MPI: every rank's share W_r / W of the batch's loss weight, where W_r sums
 * the loss weights of the examples rank r holds: the model's loss is a
 * weighted mean over them, so share-weighted sums of the ranks' losses and
 * gradients are those of the whole batch. Counts are summed. */
static void sum_over_ranks(Trainer *t, double stats[4], double weight) {
    int size = t->dist->size;
    for (int k = 0; k < size; k++) t->rank_shares[k] = k == t->dist->rank ? weight : 0.0;
    dist_sum_doubles(t->dist, t->rank_shares, size);
    double total = 0.0;
    for (int k = 0; k < size; k++) total += t->rank_shares[k];
    for (int k = 0; k < size; k++) t->rank_shares[k] = total > 0.0 ? t->rank_shares[k] / total : 0.0;
    dist_weighted_sum(t->reducer, t->model->grads, t->rank_shares);
    stats[0] *= t->rank_shares[t->dist->rank];
    dist_sum_doubles(t->dist, stats, 4);
}

/* A NaN or infinite loss or gradient stops the run: what is kept, and what
 * to change (a clip only helps when it is on). */
static int not_finite(const Trainer *t, int epoch, int s, long step, char *err, size_t errlen) {
    const Options *o = t->o;
    return fail(err, errlen, ERR_RUNTIME, "the loss or gradient became NaN/Inf at epoch %d, step %d (global step %ld); "
                "training stopped, %s. Start again with %s (and --overwrite to train into %s again)", epoch, s + 1,
                step + 1, rundir_holds(t->dir, "model.safetensors") ? "the last good checkpoint is kept"
                                                                    : "before any checkpoint was saved",
                o->clip > 0 ? "a lower --lr or --clip" : "a lower --lr, or --clip 1", t->dir);
}

static void add_to_progress(TrainProgress *p, const double stats[4]) {
    p->loss_sum += stats[0] * stats[3];
    p->correct += stats[1];
    p->tokens += stats[2];
    p->count += stats[3];
}
