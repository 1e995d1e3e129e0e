/* trainer.c: a training run: data, model, the epoch loop with its schedule,
 * clipping, AdamW, validation and early stopping; the run directory's files;
 * bit-exact resume and clean stops on SIGINT/SIGTERM or a non-finite loss. */
#include "run/fit.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "run/corpus.h"
#include "run/dist.h"
#include "base/fileio.h"
#include "formats/json.h"
#include "report/classreport.h"
#include "report/plot.h"
#include "run/final_report.h"
#include "base/rng.h"
#include "run/runinfo.h"
#include "formats/safetensors.h"

/* Site of the shuffle in the counter-based generator (model.c uses others). */
#define SITE_SHUFFLE 900001

/* Set by the signal handler, read by the training loop: the one piece of
 * process-wide state, as a signal handler can reach nothing else. */
static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) { stop_requested = sig; }

void install_interrupt_handlers(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGUSR1, &sa, NULL);   /* MPI: mpirun forwards SIGUSR1 to every rank and waits */
}

static const char *signal_name(int sig) {
    return sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "SIGINT";
}

void run_path(char *buf, size_t len, const char *dir, const char *name) {
    /* paths longer than PATH_MAX fail later with a clear open() error */
    if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len) buf[len - 1] = '\0';
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ evaluation */

int evaluate(Model *m, const EncodedDataset *d, Evaluation *out) {
    int C = m->cfg.n_classes, B = m->max_batch;
    memset(out, 0, sizeof *out);
    out->n = d->n;
    out->predictions = malloc(sizeof(int) * (d->n ? d->n : 1));
    out->probs = malloc(sizeof(float) * (size_t)(d->n ? d->n : 1) * C);
    int *tokens = malloc(sizeof(int) * (size_t)B * m->cfg.max_len);
    int *labels = malloc(sizeof(int) * B), *indices = malloc(sizeof(int) * B);
    if (!out->predictions || !out->probs || !tokens || !labels || !indices) {
        free(tokens); free(labels); free(indices);
        evaluation_free(out);
        return -1;
    }
    double loss_sum = 0.0;
    long correct = 0;
    ForwardOptions eval = {.training = 0};
    for (int start = 0; start < d->n; start += B) {
        int nb = d->n - start < B ? d->n - start : B;
        for (int i = 0; i < nb; i++) indices[i] = start + i;
        int T = make_batch(d, indices, nb, tokens, labels);
        int labelled = labels[0] >= 0;
        float loss = model_forward(m, tokens, labelled ? labels : NULL, nb, T, &eval);
        loss_sum += (double)loss * nb;
        for (int i = 0; i < nb; i++) {
            int pred = model_predicted_class(m, i);
            out->predictions[start + i] = pred;
            memcpy(out->probs + (long)(start + i) * C, m->probs + (long)i * C, sizeof(float) * C);
            correct += labelled && pred == labels[i];
        }
    }
    out->loss = d->n ? loss_sum / d->n : 0.0;
    out->accuracy = d->n ? (double)correct / d->n : 0.0;
    free(tokens); free(labels); free(indices);
    return 0;
}

void evaluation_free(Evaluation *e) {
    free(e->predictions);
    free(e->probs);
    memset(e, 0, sizeof *e);
}

/* ------------------------------------------------------------- schedule */

/* Linear warmup from lr/W at the first step to lr, then cosine decay toward
 * 0 over the remaining steps. step counts from 0. */
static double scheduled_lr(double lr, long step, long warmup_steps, long total_steps) {
    if (step < warmup_steps) return lr * (double)(step + 1) / warmup_steps;
    long decay_steps = total_steps - warmup_steps;
    if (decay_steps <= 0) return lr;
    double progress = (double)(step - warmup_steps) / decay_steps;
    return lr * 0.5 * (1.0 + cos(M_PI * progress));
}

static long warmup_step_count(double warmup, long total_steps) {
    long w = warmup < 1.0 ? lround(warmup * total_steps) : (long)warmup;
    return w > total_steps ? total_steps : w;
}

/* Fisher-Yates keyed by (seed, epoch): the order is a pure function of both. */
static void shuffle_order(int *order, int n, uint64_t seed, int epoch) {
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_bits(seed, (uint64_t)epoch, SITE_SHUFFLE, (uint64_t)i) % (uint64_t)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

/* ---------------------------------------------------------- run progress */

/* Everything that must survive a stop for the run to continue bit-exactly. */
typedef struct {
    int epochs_done;
    int step_in_epoch;           /* batches done of the unfinished epoch */
    double loss_sum, correct, count, tokens, seconds;   /* the unfinished epoch so far */
    double best_val_loss;
    int best_epoch, bad_epochs;
    EpochRecord *history;
    int n_history;
} RunProgress;

static char *history_text(const RunProgress *p) {
    size_t cap = 64 + (size_t)p->n_history * 256;
    char *text = malloc(cap);
    if (!text) return NULL;
    size_t used = 0;
    text[0] = '\0';
    for (int i = 0; i < p->n_history; i++) {
        const EpochRecord *r = &p->history[i];
        used += (size_t)snprintf(text + used, cap - used, "%d %.17g %.17g %.17g %.17g %.17g %.17g %.17g %.17g\n",
                                 r->epoch, r->train_loss, r->train_acc, r->val_loss, r->val_acc, r->val_f1, r->lr,
                                 r->seconds, r->tokens_per_s);
    }
    return text;
}

/* Replaces p->history with the recorded epochs, keeping room for at least
 * capacity records (the epochs still to run). */
static int history_parse(RunProgress *p, const char *text, int capacity) {
    int lines = 0;
    for (const char *c = text; *c; c++) lines += *c == '\n';
    free(p->history);
    p->n_history = 0;
    p->history = calloc((size_t)(lines > capacity ? lines : capacity) + 1, sizeof *p->history);
    if (!p->history) return -1;
    const char *line = text;
    for (int i = 0; i < lines; i++) {
        EpochRecord *r = &p->history[i];
        if (sscanf(line, "%d %lf %lf %lf %lf %lf %lf %lf %lf", &r->epoch, &r->train_loss, &r->train_acc, &r->val_loss,
                   &r->val_acc, &r->val_f1, &r->lr, &r->seconds, &r->tokens_per_s) != 9)
            return -1;
        line = strchr(line, '\n') + 1;
    }
    p->n_history = lines;
    return 0;
}

static int save_state(const Model *m, const RunProgress *p, const char *dir, char *err, size_t errlen) {
    char values[10][40];
    snprintf(values[0], 40, "%d", p->epochs_done);
    snprintf(values[1], 40, "%d", p->step_in_epoch);
    snprintf(values[2], 40, "%.17g", p->loss_sum);
    snprintf(values[3], 40, "%.17g", p->correct);
    snprintf(values[4], 40, "%.17g", p->count);
    snprintf(values[5], 40, "%.17g", p->tokens);
    snprintf(values[6], 40, "%.17g", p->seconds);
    snprintf(values[7], 40, "%.17g", p->best_val_loss);
    snprintf(values[8], 40, "%d", p->best_epoch);
    snprintf(values[9], 40, "%d", p->bad_epochs);
    char *history = history_text(p);
    if (!history) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *keys[] = {"epochs_done", "step_in_epoch", "loss_sum", "correct", "count", "tokens",
                          "epoch_seconds", "best_val_loss", "best_epoch", "bad_epochs", "history"};
    const char *vals[] = {values[0], values[1], values[2], values[3], values[4], values[5],
                          values[6], values[7], values[8], values[9], history};
    char path[4096];
    run_path(path, sizeof path, dir, "state.safetensors");
    int rc = model_save_state(m, path, keys, vals, 11, err, errlen);
    free(history);
    return rc;
}

static int meta_number(const StFile *f, const char *key, double *out) {
    const char *s = st_meta(f, key);
    char *end;
    if (!s) return -1;
    *out = strtod(s, &end);
    return end == s || *end ? -1 : 0;
}

static int load_state(Model *m, RunProgress *p, const char *dir, int capacity, char *err, size_t errlen) {
    char path[4096];
    run_path(path, sizeof path, dir, "state.safetensors");
    if (model_load_state(m, path, err, errlen) != 0) return -1;
    StFile f;
    if (st_load(path, &f, err, errlen) != 0) return -1;
    double v[10];
    const char *keys[] = {"epochs_done", "step_in_epoch", "loss_sum", "correct", "count", "tokens",
                          "epoch_seconds", "best_val_loss", "best_epoch", "bad_epochs"};
    int rc = 0;
    for (int i = 0; i < 10 && rc == 0; i++) {
        if (meta_number(&f, keys[i], &v[i]) != 0) {
            snprintf(err, errlen, "%.900s: metadata '%s' is missing or not a number", path, keys[i]);
            rc = -1;
        }
    }
    const char *history = st_meta(&f, "history");
    if (rc == 0 && (!history || history_parse(p, history, capacity) != 0)) {
        snprintf(err, errlen, "%.900s: metadata 'history' is missing or malformed", path);
        rc = -1;
    }
    st_free(&f);
    if (rc != 0) return -1;
    const int counters[] = {0, 1, 8, 9};   /* epochs_done, step_in_epoch, best_epoch, bad_epochs */
    for (int i = 0; i < 4; i++) {
        double x = v[counters[i]];
        if (!(x >= 0 && x <= 1e9 && x == floor(x))) {
            snprintf(err, errlen, "%.900s: metadata '%s' is not a count: %g", path, keys[counters[i]], x);
            return -1;
        }
    }
    if ((int)v[0] != p->n_history) {
        snprintf(err, errlen, "%.900s: %d epochs done but %d recorded in 'history'", path, (int)v[0], p->n_history);
        return -1;
    }
    p->epochs_done = (int)v[0];
    p->step_in_epoch = (int)v[1];
    p->loss_sum = v[2];
    p->correct = v[3];
    p->count = v[4];
    p->tokens = v[5];
    p->seconds = v[6];
    p->best_val_loss = v[7];
    p->best_epoch = (int)v[8];
    p->bad_epochs = (int)v[9];
    return 0;
}

/* -------------------------------------------------------------- the run */

typedef struct {
    const Options *o;
    const char *dir;
    const DistContext *dist;  /* MPI: this rank; a single process is rank 0 of 1 */
    int writer;               /* 1 on rank 0, the only one that writes files */
    DistReducer *reducer;     /* MPI: sums the gradients over ranks */
    double *rank_shares;      /* MPI: (ranks) each rank's share of the batch's loss weight */
    Corpus corpus;
    Model *model;
    float *class_weights;     /* (C) or NULL */
    float *best_params;       /* with --patience: the best epoch's weights */
    char *vocab_json, *labels_json;
    RunProgress progress;
    int steps_per_epoch;
    long total_steps, warmup_steps;
    int *order, *tokens, *labels, *indices;
    ProgressBar bar;
} Run;

static int save_checkpoint(Run *r, const float *params, int epoch, char *err, size_t errlen) {
    char path[4096], epoch_text[16];
    run_path(path, sizeof path, r->dir, "model.safetensors");
    snprintf(epoch_text, sizeof epoch_text, "%d", epoch);
    const char *keys[] = {"tokenizer", "vocab", "labels", "epoch"};
    const char *vals[] = {tokenizer_name(r->corpus.tokenizer), r->vocab_json, r->labels_json, epoch_text};
    /* model_save writes the model's own parameters; swap in the ones to save */
    float *current = r->model->params;
    r->model->params = (float *)params;
    int rc = model_save(r->model, path, keys, vals, 4, err, errlen);
    r->model->params = current;
    return rc;
}

int memory_fits(const ModelConfig *cfg, int batch_size, char *err, size_t errlen) {
    size_t need = model_memory_bytes(cfg, batch_size);
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (have > 0 && (double)need > have) {
        snprintf(err, errlen, "this config needs %zu bytes (%.1f GiB) but the machine has %.0f bytes (%.1f GiB); "
                 "reduce --batch-size, --max-len, --d-model, --d-ff or --layers",
                 need, need / 1073741824.0, have, have / 1073741824.0);
        return 0;
    }
    return 1;
}

static int build_model(Run *r, char *err, size_t errlen) {
    const Options *o = r->o;
    ModelConfig cfg = options_model_config(o, r->corpus.vocab.size, r->corpus.labels.n);
    if (model_config_check(&cfg, err, errlen) != 0) return EXIT_USAGE;
    int rows = (o->batch_size + r->dist->size - 1) / r->dist->size;   /* MPI: a rank holds only its slice */
    if (!memory_fits(&cfg, rows, err, errlen)) return EXIT_USAGE;
    r->model = model_create(&cfg, rows, err, errlen);
    if (!r->model) return EXIT_RUNTIME;
    model_init(r->model, (uint64_t)o->seed);
    return EXIT_OK;
}

/* balanced: w_c = n / (C * n_c) over the training set */
static int make_class_weights(Run *r) {
    if (strcmp(r->o->class_weights, "balanced") != 0) return 0;
    int C = r->corpus.labels.n, n = r->corpus.enc_train.n;
    int *counts = calloc((size_t)C, sizeof *counts);
    r->class_weights = malloc(sizeof(float) * C);
    if (!counts || !r->class_weights) { free(counts); return -1; }
    class_counts(r->corpus.enc_train.labels, n, C, counts);
    for (int c = 0; c < C; c++) r->class_weights[c] = counts[c] ? (float)((double)n / ((double)C * counts[c])) : 0.0f;
    free(counts);
    return 0;
}

static int write_curves(const Run *r, char *err, size_t errlen) {
    const RunProgress *p = &r->progress;
    int n = p->n_history;
    double *ys = malloc(sizeof(double) * 4 * (n ? n : 1));
    if (!ys) { snprintf(err, errlen, "out of memory"); return -1; }
    for (int i = 0; i < n; i++) {
        ys[i] = p->history[i].train_loss;
        ys[n + i] = p->history[i].val_loss;
        ys[2 * n + i] = p->history[i].train_acc;
        ys[3 * n + i] = p->history[i].val_acc;
    }
    int has_val = r->corpus.has_val;
    PlotSeries loss[2] = {{"train", ys, n, PLOT_COLOR_TRAIN, 0}, {"val", ys + n, n, PLOT_COLOR_VAL, 0}};
    PlotSeries acc[2] = {{"train", ys + 2 * n, n, PLOT_COLOR_TRAIN, 0}, {"val", ys + 3 * n, n, PLOT_COLOR_VAL, 0}};
    PlotPanel panels[2] = {{"Loss", "epoch", "cross-entropy", loss, has_val ? 2 : 1},
                           {"Accuracy", "epoch", "accuracy", acc, has_val ? 2 : 1}};
    char path[4096];
    run_path(path, sizeof path, r->dir, "curves.png");
    int rc = plot_panels_png(path, panels, 2, 1000, 420, err, errlen);
    free(ys);
    return rc;
}

/* MPI: every rank's share W_r / W of the batch's loss weight, where W_r sums
 * the class weights (1 without) of rank r's slice: the model's loss is a
 * weighted mean over its slice, so share-weighted sums of the ranks' losses
 * and gradients are those of the whole batch. */
static void compute_rank_shares(Run *r, int start, int nb) {
    const EncodedDataset *train = &r->corpus.enc_train;
    int size = r->dist->size;
    double total = 0.0;
    for (int k = 0; k < size; k++) {
        long begin, end;
        dist_slice(nb, k, size, &begin, &end);
        double weight = 0.0;
        for (long i = begin; i < end; i++) {
            int label = train->labels[r->order[start + i]];
            weight += r->class_weights ? r->class_weights[label] : 1.0;
        }
        r->rank_shares[k] = weight;
        total += weight;
    }
    for (int k = 0; k < size; k++) r->rank_shares[k] = total > 0.0 ? r->rank_shares[k] / total : 0.0;
}

/* Forward and backward on this rank's slice of batch s (the whole batch in
 * a single process). Fills stats with the loss, correct predictions and
 * tokens of the slice; an empty slice leaves zero gradients. */
static void slice_gradients(Run *r, int epoch, int s, int nb, double stats[3]) {
    Model *m = r->model;
    const EncodedDataset *train = &r->corpus.enc_train;
    long begin, end;
    dist_slice(nb, r->dist->rank, r->dist->size, &begin, &end);
    int n = (int)(end - begin);
    stats[0] = stats[1] = stats[2] = 0.0;
    if (n == 0) {
        model_zero_grad(m);
        return;
    }
    for (int i = 0; i < n; i++) r->indices[i] = r->order[s * r->o->batch_size + begin + i];
    int T = make_batch(train, r->indices, n, r->tokens, r->labels);
    long global_step = (long)(epoch - 1) * r->steps_per_epoch + s;
    ForwardOptions opt = {.training = 1, .seed = (uint64_t)r->o->seed, .step = (uint64_t)global_step,
                          .class_weights = r->class_weights};
    stats[0] = model_forward(m, r->tokens, r->labels, n, T, &opt);
    model_backward(m);
    for (int i = 0; i < n; i++) {
        stats[1] += model_predicted_class(m, i) == r->labels[i];
        for (int t = 0; t < T; t++) stats[2] += r->tokens[i * T + t] != TOKEN_PAD;
    }
}

/* One optimisation step on batch s of the epoch; returns 0 or -1 on a
 * non-finite loss or gradient. With MPI every rank works on its slice of
 * the batch, then the gradients and counts are summed over ranks in a fixed
 * order, so every rank takes the same step. */
static int train_step(Run *r, int epoch, int s) {
    const Options *o = r->o;
    Model *m = r->model;
    int start = s * o->batch_size;
    int nb = r->corpus.enc_train.n - start < o->batch_size ? r->corpus.enc_train.n - start : o->batch_size;
    double stats[3];   /* loss, correct, tokens */
    slice_gradients(r, epoch, s, nb, stats);
    if (r->dist->size > 1) {
        compute_rank_shares(r, start, nb);
        dist_weighted_sum(r->reducer, m->grads, r->rank_shares);
        stats[0] *= r->rank_shares[r->dist->rank];
        dist_sum_doubles(r->dist, stats, 3);
    }
    if (!isfinite(stats[0])) return -1;
    double norm = model_clip_grads(m, o->clip);
    if (!isfinite(norm)) return -1;
    long global_step = (long)(epoch - 1) * r->steps_per_epoch + s;
    model_adamw_step(m, (float)scheduled_lr(o->lr, global_step, r->warmup_steps, r->total_steps),
                     (float)o->weight_decay);
    RunProgress *p = &r->progress;
    p->loss_sum += stats[0] * nb;
    p->correct += stats[1];
    p->tokens += stats[2];
    p->count += nb;
    return 0;
}

static double macro_f1(const Evaluation *e, const EncodedDataset *d, int C) {
    ClassReport rep;
    if (report_compute(&rep, d->labels, e->predictions, d->n, C) != 0) return NAN;
    double f1 = rep.macro_f1;
    report_free(&rep);
    return f1;
}

/* metrics.csv, curves, the checkpoint (with --patience: the best weights,
 * otherwise the latest) and the state at the end of an epoch. */
static int write_epoch_files(Run *r, int epoch, int improved, char *err, size_t errlen) {
    char path[4096];
    run_path(path, sizeof path, r->dir, "metrics.csv");
    if (metrics_csv_write(path, r->progress.history, r->progress.n_history, r->corpus.has_val, err, errlen) != 0)
        return EXIT_RUNTIME;
    if (write_curves(r, err, errlen) != 0) return EXIT_RUNTIME;
    if (!r->best_params || improved) {
        const float *params = r->best_params ? r->best_params : r->model->params;
        if (save_checkpoint(r, params, epoch, err, errlen) != 0) return EXIT_RUNTIME;
    }
    if (save_state(r->model, &r->progress, r->dir, err, errlen) != 0) return EXIT_RUNTIME;
    return EXIT_OK;
}

/* Validation, the table row and the run's files at the end of an epoch.
 * Sets *stop when early stopping ends the run. */
static int finish_epoch(Run *r, int epoch, double epoch_seconds, int *stop, char *err, size_t errlen) {
    const Options *o = r->o;
    RunProgress *p = &r->progress;
    EpochRecord rec = {.epoch = epoch, .train_loss = p->loss_sum / p->count, .train_acc = p->correct / p->count,
                       .lr = scheduled_lr(o->lr, (long)epoch * r->steps_per_epoch - 1, r->warmup_steps, r->total_steps),
                       .seconds = epoch_seconds, .tokens_per_s = epoch_seconds > 0 ? p->tokens / epoch_seconds : 0};
    int improved = 1;
    if (r->corpus.has_val) {
        Evaluation e;
        if (evaluate(r->model, &r->corpus.enc_val, &e) != 0) { snprintf(err, errlen, "out of memory"); return EXIT_RUNTIME; }
        /* MPI: every rank decides (early stopping) on rank 0's numbers */
        double val[3] = {e.loss, e.accuracy, macro_f1(&e, &r->corpus.enc_val, r->corpus.labels.n)};
        evaluation_free(&e);
        dist_share_rank0(r->dist, val, 3);
        rec.val_loss = val[0];
        rec.val_acc = val[1];
        rec.val_f1 = val[2];
        improved = p->best_epoch == 0 || rec.val_loss < p->best_val_loss;
        if (improved) {
            p->best_val_loss = rec.val_loss;
            p->best_epoch = epoch;
            p->bad_epochs = 0;
        } else {
            p->bad_epochs++;
        }
    }
    p->history[p->n_history++] = rec;
    p->epochs_done = epoch;
    p->step_in_epoch = 0;
    p->loss_sum = p->correct = p->count = p->tokens = p->seconds = 0;
    char observation[128];
    epoch_observation(p->history, p->n_history, r->corpus.has_val, p->best_epoch, observation, sizeof observation);
    progress_clear(&r->bar);
    table_row(stdout, &rec, r->corpus.has_val, observation);
    if (!isfinite(rec.train_loss) || (r->corpus.has_val && !isfinite(rec.val_loss))) {
        snprintf(err, errlen, "the loss is not finite at the end of epoch %d", epoch);
        return EXIT_RUNTIME;
    }
    if (r->best_params && improved)
        memcpy(r->best_params, r->model->params, sizeof(float) * r->model->n_params);
    if (r->writer) {
        int rc = write_epoch_files(r, epoch, improved, err, errlen);
        if (rc != EXIT_OK) return rc;
    }
    *stop = o->patience > 0 && r->corpus.has_val && p->bad_epochs >= o->patience;
    return EXIT_OK;
}

static int allocate_buffers(Run *r) {
    int B = r->o->batch_size, n = r->corpus.enc_train.n;
    r->order = malloc(sizeof(int) * n);
    r->tokens = malloc(sizeof(int) * (size_t)B * r->o->max_len);
    r->labels = malloc(sizeof(int) * B);
    r->indices = malloc(sizeof(int) * B);
    r->progress.history = realloc(r->progress.history, sizeof(EpochRecord) * (size_t)(r->o->epochs + 1));
    if (r->o->patience > 0 && r->corpus.has_val) r->best_params = malloc(sizeof(float) * r->model->n_params);
    r->rank_shares = malloc(sizeof(double) * r->dist->size);
    return r->order && r->tokens && r->labels && r->indices && r->progress.history && r->rank_shares &&
           (r->best_params || !(r->o->patience > 0 && r->corpus.has_val)) ? 0 : -1;
}

static void free_run(Run *r) {
    corpus_free(&r->corpus);
    model_free(r->model);
    free(r->class_weights);
    free(r->best_params);
    free(r->vocab_json);
    free(r->labels_json);
    free(r->progress.history);
    free(r->order);
    free(r->tokens);
    free(r->labels);
    free(r->indices);
    free(r->rank_shares);
    dist_reducer_free(r->reducer);
}

/* With --resume: the recorded data must be unchanged, then state and best weights are loaded. */
static int resume_run(Run *r, char *err, size_t errlen) {
    RunInfo info;
    if (runinfo_read(r->dir, &info, err, errlen) != 0) return EXIT_USAGE;
    for (int i = 0; i < info.n_files; i++) {
        char hex[65];
        long lines;
        if (file_digest(info.files[i].path, hex, &lines, err, errlen) != 0 || strcmp(hex, info.files[i].sha256) != 0) {
            if (strcmp(hex, info.files[i].sha256) != 0)
                snprintf(err, errlen, "%s: changed since the run was recorded (SHA-256 differs); refusing to resume",
                         info.files[i].path);
            runinfo_free(&info);
            return EXIT_USAGE;
        }
    }
    runinfo_free(&info);
    char state[4096];
    run_path(state, sizeof state, r->dir, "state.safetensors");
    if (access(state, F_OK) != 0) {
        snprintf(err, errlen, "%.900s: no saved state: the run stopped before its first epoch ended; start it again "
                 "without --resume", state);
        return EXIT_USAGE;
    }
    if (load_state(r->model, &r->progress, r->dir, r->o->epochs + 1, err, errlen) != 0) return EXIT_USAGE;
    if (r->progress.step_in_epoch >= r->steps_per_epoch) {
        snprintf(err, errlen, "%s/state.safetensors: step %d of an epoch of %d steps", r->dir,
                 r->progress.step_in_epoch, r->steps_per_epoch);
        return EXIT_USAGE;
    }
    if (r->best_params) {
        char path[4096];
        run_path(path, sizeof path, r->dir, "model.safetensors");
        float *current = malloc(sizeof(float) * r->model->n_params);
        if (!current) return EXIT_RUNTIME;
        memcpy(current, r->model->params, sizeof(float) * r->model->n_params);
        int rc = model_load_weights(r->model, path, err, errlen);
        memcpy(r->best_params, r->model->params, sizeof(float) * r->model->n_params);
        memcpy(r->model->params, current, sizeof(float) * r->model->n_params);
        free(current);
        if (rc != 0) return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* Removes the temporary files (NAME.tmp.XXXXXX, see fileio.c) that a run
 * killed in the middle of an atomic write leaves behind. */
static void remove_stale_temporaries(const char *dir) {
    static const char *const outputs[] = {"model.safetensors", "state.safetensors", "metrics.csv", "curves.png",
                                          "confusion.png", "report.txt", "run.json"};
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        for (size_t i = 0; i < sizeof outputs / sizeof *outputs; i++) {
            size_t n = strlen(outputs[i]);
            if (strncmp(e->d_name, outputs[i], n) != 0 || strncmp(e->d_name + n, ".tmp.", 5) != 0 ||
                strlen(e->d_name + n + 5) != 6)
                continue;
            char path[4096];
            run_path(path, sizeof path, dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

static uint64_t hash_dataset(uint64_t hash, const EncodedDataset *d) {
    for (int i = 0; i < d->n; i++) {
        hash = dist_hash(hash, d->ids + d->offsets[i], sizeof(int) * d->lengths[i]);
        hash = dist_hash(hash, &d->labels[i], sizeof(int));
    }
    return dist_hash(hash, &d->n, sizeof d->n);
}

/* MPI: the ranks must start from the same data, weights and progress, or
 * they would drift apart; a rank on a host with other files is caught here. */
static int check_ranks_agree(Run *r, char *err, size_t errlen) {
    if (r->dist->size == 1) return EXIT_OK;
    const Model *m = r->model;
    const RunProgress *p = &r->progress;
    uint64_t hash = hash_dataset(hash_dataset(DIST_HASH_START, &r->corpus.enc_train), &r->corpus.enc_val);
    hash = dist_hash(hash, m->params, sizeof(float) * m->n_params);
    hash = dist_hash(hash, m->adam_m, sizeof(float) * m->n_params);
    hash = dist_hash(hash, m->adam_v, sizeof(float) * m->n_params);
    hash = dist_hash(hash, &m->adam_step, sizeof m->adam_step);
    int counters[3] = {p->epochs_done, p->step_in_epoch, p->n_history};
    hash = dist_hash(hash, counters, sizeof counters);
    int rank = dist_first_mismatch(r->dist, hash);
    if (rank < 0) return EXIT_OK;
    snprintf(err, errlen, "MPI rank %d does not have the same data%s as rank 0; every host must see the same files "
             "at the same paths", rank, r->progress.epochs_done || r->progress.step_in_epoch ? " or run state" : "");
    return EXIT_USAGE;
}

static int prepare(Run *r, const char *data_path, int resume, int argc, char **argv, char *err, size_t errlen) {
    int rc = corpus_prepare(&r->corpus, r->o, data_path, stdout);
    if (rc != 0) return rc;
    if ((rc = build_model(r, err, errlen)) != EXIT_OK) return rc;
    r->steps_per_epoch = (r->corpus.enc_train.n + r->o->batch_size - 1) / r->o->batch_size;
    r->total_steps = (long)r->o->epochs * r->steps_per_epoch;
    r->warmup_steps = warmup_step_count(r->o->warmup, r->total_steps);
    r->vocab_json = json_string_array((const char *const *)r->corpus.vocab.tokens, r->corpus.vocab.size);
    r->labels_json = json_string_array((const char *const *)r->corpus.labels.names, r->corpus.labels.n);
    if (!r->vocab_json || !r->labels_json || make_class_weights(r) != 0 || allocate_buffers(r) != 0) {
        snprintf(err, errlen, "out of memory");
        return EXIT_RUNTIME;
    }
    if (r->dist->size > 1 && !(r->reducer = dist_reducer_create(r->dist, r->model->n_params, err, errlen)))
        return EXIT_RUNTIME;
    if (r->writer) remove_stale_temporaries(r->dir);
    if (resume) {
        rc = resume_run(r, err, errlen);
        return rc == EXIT_OK ? check_ranks_agree(r, err, errlen) : rc;
    }
    if (r->writer && make_dirs(r->dir, err, errlen) != 0) return EXIT_RUNTIME;
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    if (r->writer && runinfo_write(r->dir, r->o, data_path, argc, argv, threads, err, errlen) != 0)
        return EXIT_RUNTIME;
    return check_ranks_agree(r, err, errlen);
}

static void print_intro(const Run *r, int resume) {
    if (r->o->quiet) return;
    const Corpus *c = &r->corpus;
    printf("%s %s: %d training examples, %d classes, vocabulary %d (%s tokens)", resume ? "resuming" : "training",
           r->dir, c->enc_train.n, c->labels.n, c->vocab.size, tokenizer_name(c->tokenizer));
    if (c->has_val) printf(", %d validation", c->enc_val.n);
    if (c->has_test) printf(", %d test", c->enc_test.n);
    printf("\nmodel: %zu parameters, d_model %d, %d heads, %d layers, d_ff %d, %s-norm, %s pooling, %s PE; "
           "%d steps per epoch", r->model->n_params, r->o->d_model, r->o->heads, r->o->layers, r->o->d_ff, r->o->norm,
           r->o->pool, r->o->pe, r->steps_per_epoch);
    if (r->dist->size > 1) printf(", each batch split over %d MPI ranks", r->dist->size);
    printf("\n");
}

/* The signal that asks to stop, or 0. MPI: a signal on any rank stops
 * every rank after the same step. */
static int agreed_stop(const Run *r) {
    return dist_max_int(r->dist, (int)stop_requested);
}

/* The command that continues this run (under mpirun for an MPI job). */
static const char *resume_command(const Run *r, char *buf, size_t len) {
    if (r->dist->size > 1) snprintf(buf, len, "mpirun -np %d ./train --resume %s", r->dist->size, r->dir);
    else snprintf(buf, len, "./train --resume %s", r->dir);
    return buf;
}

static int interrupted(Run *r, int sig, int epoch, int step, char *err, size_t errlen) {
    progress_clear(&r->bar);
    if (!r->writer) return EXIT_INTERRUPTED;
    if (save_state(r->model, &r->progress, r->dir, err, errlen) != 0) return EXIT_RUNTIME;
    char command[4200];
    fprintf(stderr, "\ninterrupted by %s in epoch %d after step %d of %d; state saved.\ncontinue with: %s\n",
            signal_name(sig), epoch, step, r->steps_per_epoch, resume_command(r, command, sizeof command));
    return EXIT_INTERRUPTED;
}

static int train_epochs(Run *r, char *err, size_t errlen) {
    const Options *o = r->o;
    RunProgress *p = &r->progress;
    r->bar.enabled = !o->quiet && isatty(STDOUT_FILENO);
    table_header(stdout, r->corpus.has_val);
    for (int i = 0; i < p->n_history; i++) table_row(stdout, &p->history[i], r->corpus.has_val, "(recorded)");
    for (int epoch = p->epochs_done + 1; epoch <= o->epochs; epoch++) {
        shuffle_order(r->order, r->corpus.enc_train.n, (uint64_t)o->seed, epoch);
        double start = now_seconds() - p->seconds;
        r->bar.last_draw = -1.0;
        for (int s = p->step_in_epoch; s < r->steps_per_epoch; s++) {
            if (train_step(r, epoch, s) != 0) {
                progress_clear(&r->bar);
                snprintf(err, errlen, "the loss or gradient became NaN/Inf at epoch %d, step %d (global step %ld); "
                         "training stopped, the last good checkpoint in %s is kept. Try a lower --lr or --clip.",
                         epoch, s + 1, (long)(epoch - 1) * r->steps_per_epoch + s + 1, r->dir);
                return EXIT_RUNTIME;
            }
            p->step_in_epoch = s + 1;
            p->seconds = now_seconds() - start;
            progress_draw(&r->bar, epoch, o->epochs, s + 1, r->steps_per_epoch, p->seconds, p->loss_sum / p->count,
                          p->correct / p->count);
            int sig = agreed_stop(r);
            if (sig && s + 1 < r->steps_per_epoch) return interrupted(r, sig, epoch, s + 1, err, errlen);
        }
        int stop = 0, rc = finish_epoch(r, epoch, now_seconds() - start, &stop, err, errlen);
        if (rc != EXIT_OK) return rc;
        if (stop) {
            printf("early stopping: val loss has not improved for %d epochs; restored the weights of epoch %d\n",
                   o->patience, p->best_epoch);
            break;
        }
        int sig = agreed_stop(r);
        if (sig) return interrupted(r, sig, epoch, r->steps_per_epoch, err, errlen);
        if (o->stop_after == epoch && epoch < o->epochs) {
            char command[4200];
            printf("stopped after epoch %d (--stop-after); continue with: %s\n", epoch,
                   resume_command(r, command, sizeof command));
            return -1;  /* not an error: the run is saved and can be resumed */
        }
    }
    if (r->best_params) memcpy(r->model->params, r->best_params, sizeof(float) * r->model->n_params);
    return EXIT_OK;
}

int fit(const Options *o, const char *data_path, const char *out_dir, int resume, int argc, char **argv,
        FitSummary *summary) {
    DistContext solo = dist_solo();
    return fit_distributed(&solo, o, data_path, out_dir, resume, argc, argv, summary);
}

int fit_distributed(const DistContext *dist, const Options *o, const char *data_path, const char *out_dir, int resume,
                    int argc, char **argv, FitSummary *summary) {
    Run r;
    memset(&r, 0, sizeof r);
    r.o = o;
    r.dir = out_dir;
    r.dist = dist;
    r.writer = dist->rank == 0;
    char err[1024] = "";
    int rc = prepare(&r, data_path, resume, argc, argv, err, sizeof err);
    if (rc == EXIT_OK) {
        print_intro(&r, resume);
        if (r.progress.epochs_done >= o->epochs && r.progress.step_in_epoch == 0)
            printf("all %d epochs of %s are done; nothing to train (raise --epochs to continue)\n", o->epochs, out_dir);
        rc = train_epochs(&r, err, sizeof err);
        if (rc == EXIT_OK && r.writer)   /* MPI: rank 0 alone reports */
            rc = final_reports(r.model, &r.corpus, r.dir, r.progress.history, r.progress.n_history,
                               r.progress.best_epoch, r.best_params != NULL, o->quiet, summary, err, sizeof err);
        else if (rc == -1) rc = EXIT_OK;
    }
    if (rc != EXIT_OK && rc != EXIT_INTERRUPTED && err[0]) {
        if (dist->size > 1) fprintf(stderr, "error (MPI rank %d): %s\n", dist->rank, err);
        else fprintf(stderr, "error: %s\n", err);
    }
    if (summary) {
        summary->has_val = r.corpus.has_val;
        summary->n_epochs = r.progress.n_history;
        summary->history = r.progress.history;
        r.progress.history = NULL;
    }
    free_run(&r);
    return rc;
}
