/* fit.c: a training run (see fit.h): prepare the corpus and the model, run
 * the epochs step by step (each step: run/step.c), validate, write the
 * run's files after every epoch, and stop cleanly on a signal, a
 * non-finite loss or --stop-after. */
#include "run/fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/fileio.h"
#include "base/hash.h"
#include "report/classreport.h"
#include "report/curves.h"
#include "report/epoch_table.h"
#include "report/metrics_csv.h"
#include "run/corpus.h"
#include "run/evaluate.h"
#include "run/final_report.h"
#include "run/init.h"
#include "run/probes.h"
#include "run/record.h"
#include "run/rundir.h"
#include "run/saved_model.h"
#include "run/schedule.h"
#include "run/signals.h"
#include "run/state.h"
#include "run/trainer.h"


static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------------------ preparing */

static int build_model(Trainer *t, int resume, char *err, size_t errlen) {
    const Options *o = t->o;
    ModelConfig cfg;
    int n_classes = t->mlm ? 0 : t->corpus.labels.n;   /* 0: the MLM head */
    int rc = options_model_config(o, t->corpus.vocab.size, n_classes, t->corpus.max_len, &cfg, err, errlen);
    if (rc != EXIT_OK) return rc;
    /* A rank holds about B / ranks of each batch's examples (MPI: any number up
     * to B, as they fall in its share of the data); it takes them in micro-batches
     * of ceil(B / (K x ranks)), K = --accum-steps: K of them on average */
    long parts = (long)(o->accum_steps > 0 ? o->accum_steps : 1) * t->dist->size;
    t->micro_rows = (int)((o->batch_size + parts - 1) / parts);
    if ((rc = saved_model_check_memory(&cfg, t->micro_rows, err, errlen)) != EXIT_OK) return rc;
    t->model = model_create(&cfg, t->micro_rows, err, errlen);
    if (!t->model) return ERR_RUNTIME;
    model_init(t->model, (uint64_t)o->seed);
    if (o->init_dir && *o->init_dir)   /* a new run says what it took (stdout: rank 0's alone is shown) */
        return init_load_encoder(t->model, o->init_dir, resume ? NULL : stdout, err, errlen);
    return EXIT_OK;
}

/* --group-by-length: every training example's length on every rank (MPI:
 * each rank fills its share, the rest zero, and the shares are summed). */
static int gather_lengths(Trainer *t) {
    int n = t->n_train, first = t->corpus.train.first;
    const EncodedDataset *e = &t->corpus.enc_train;
    double *all = calloc((size_t)n, sizeof *all);
    t->lengths = malloc(sizeof(int) * n);
    t->order_work = malloc(sizeof(int) * n);
    if (!all || !t->lengths || !t->order_work) {
        free(all);
        return -1;
    }
    for (int i = 0; i < e->n; i++) all[first + i] = e->lengths[i];
    dist_sum_doubles(t->dist, all, n);
    for (int i = 0; i < n; i++) t->lengths[i] = (int)all[i];
    free(all);
    return 0;
}

static int allocate_buffers(Trainer *t) {
    int B = t->o->batch_size, n = t->n_train;
    int keep_best = t->o->patience > 0 && t->corpus.has_val;
    t->order = malloc(sizeof(int) * n);
    if (t->o->group_by_length && gather_lengths(t) != 0) return -1;
    t->tokens = malloc(sizeof(int) * (size_t)B * t->corpus.max_len);
    t->labels = malloc(sizeof(int) * B);
    t->indices = malloc(sizeof(int) * B);
    t->rows = malloc(sizeof(int) * B);
    t->progress.history = realloc(t->progress.history, sizeof(EpochRecord) * (size_t)(t->o->epochs + 1));
    if (keep_best) t->best_params = malloc(sizeof(float) * t->model->n_params);
    t->progress.best_kept = keep_best;
    t->progress.epochs = t->o->epochs;
    /* with --patience the best epoch's weights are the model, as early stopping promises */
    t->swa = !t->mlm && t->corpus.has_val && !keep_best && t->o->swa > 0.0;
    t->cycles = !t->mlm && t->corpus.has_val && !keep_best && t->o->cycle < t->o->epochs;
    if (t->swa || (!t->mlm && t->o->swa > 0.0)) {   /* a resumed state may hold an average */
        t->average = malloc(sizeof(float) * t->model->n_params);
        t->live = malloc(sizeof(float) * t->model->n_params);
        if (!t->average || !t->live) return -1;
    }
    t->rank_shares = malloc(sizeof(double) * t->dist->size);
    if (t->micro_rows < B && !(t->accum = malloc(sizeof(double) * t->model->n_params))) return -1;
    if (!t->mlm && t->o->bpe_dropout > 0.0 && t->corpus.vocab.bpe) {
        if (bpe_splits_build(&t->splits, t->corpus.vocab.bpe) != 0) return -1;
        t->split_work = malloc(sizeof(int) * (size_t)(B + 1) * (size_t)(t->corpus.max_len + 1));
        if (!t->split_work) return -1;
    }
    if (t->mlm) {
        t->mlm_tokens = malloc(sizeof(int) * (size_t)B * t->corpus.max_len);
        t->mlm_targets = malloc(sizeof(int) * (size_t)B * t->corpus.max_len);
        if (!t->mlm_tokens || !t->mlm_targets) return -1;
    }
    return t->order && t->tokens && t->labels && t->indices && t->rows && t->progress.history && t->rank_shares &&
           (t->best_params || !keep_best) ? 0 : -1;
}

static void trainer_free(Trainer *t) {
    probes_free(t->probes);
    free(t->class_stats);
    corpus_free(&t->corpus);
    model_free(t->model);
    free(t->class_weights);
    free(t->best_params);
    free(t->average);
    free(t->live);
    free(t->progress.history);
    free(t->order);
    free(t->lengths);
    free(t->order_work);
    free(t->tokens);
    bpe_splits_free(&t->splits);
    free(t->split_work);
    free(t->labels);
    free(t->indices);
    free(t->rows);
    free(t->accum);
    free(t->rank_shares);
    free(t->mlm_tokens);
    free(t->mlm_targets);
    dist_reducer_free(t->reducer);
}

/* With --resume, before the data is read: the recorded data files must be
 * there and unchanged (a missing one is named, exit 2). */
static int resume_check_data(Trainer *t, char *err, size_t errlen) {
    RunRecord info;
    char why[1024];
    if (record_read(t->dir, 1, &info, err, errlen) != 0) return ERR_INPUT;
    memcpy(t->run_id, info.run_id, sizeof t->run_id);
    int rc = record_check_data(&info, why, sizeof why);
    record_free(&info);
    return rc == EXIT_OK ? EXIT_OK : fail(err, errlen, rc, "cannot resume %s: %s", t->dir, why);
}

/* --swa: the first epoch averaged in the cycle holding epoch (past the
 * run's end, its last cycle), or 0 when none is. */
static int swa_first(const Trainer *t, int epoch) {
    if (!t->swa) return 0;
    int first, last;
    schedule_cycle(epoch < t->o->epochs ? epoch : t->o->epochs, t->o->cycle, t->o->epochs, &first, &last);
    int start = schedule_swa_start(t->o->swa, last - first + 1);
    return start ? first - 1 + start : 0;
}

/* --cycle: the lowest val loss of the epochs before the second half of
 * the cycle ending at epoch (those of the whole run so far). */
static double loss_before_half(const Trainer *t, int epoch, int *half) {
    int first, last;
    schedule_cycle(epoch, t->o->cycle, t->o->epochs, &first, &last);
    *half = first + (last - first + 1) / 2;
    double lowest = INFINITY;
    for (int e = 1; e < *half && e <= t->progress.n_history; e++)
        lowest = fmin(lowest, t->progress.history[e - 1].val_loss);
    return lowest;
}

/* 1 when the run ends with epoch: its last, or (t->cycles) the last of a
 * cycle whose second half did not lower the val loss below all before it:
 * learning had stopped, and overfitting set in. */
static int run_ended(const Trainer *t, int epoch) {
    if (epoch >= t->o->epochs) return 1;
    int first, last, half;
    schedule_cycle(epoch, t->o->cycle, t->o->epochs, &first, &last);
    if (!t->cycles || epoch != last || epoch > t->progress.n_history) return 0;
    return !(t->progress.history[epoch - 1].val_loss < loss_before_half(t, epoch, &half));
}

/* With --resume: the state, and with --patience the best weights (the
 * checkpoint holds them). */
static int resume_state(Trainer *t, char *err, size_t errlen) {
    int rc;
    char path[4096];
    rundir_path(path, sizeof path, t->dir, "state.safetensors");
    if (access(path, F_OK) != 0)
        return fail(err, errlen, ERR_INPUT, "%s: no saved state: the run stopped before its first epoch ended; "
                    "start it again without --resume", path);
    if ((rc = state_load(t->model, t->average, &t->progress, t->dir, t->o->epochs + 1, err, errlen)) != EXIT_OK)
        return rc;
    /* another run's state (of the same shapes) would continue it here and rewrite this run's epochs */
    if (strcmp(t->progress.run_id, t->run_id) != 0)
        return fail(err, errlen, ERR_INPUT, "cannot resume %s: %s is not this run's: its run id is %s, and %s/run.json "
                    "records %s (the id is a digest of the recorded options, seed included, and data files, so the "
                    "state was saved by a run that differs in one of them); nothing was changed: put back this run's "
                    "own state, or train again with --overwrite", t->dir, path,
                    t->progress.run_id[0] ? t->progress.run_id : "missing", t->dir, t->run_id[0] ? t->run_id : "missing");
    if (!t->run_id[0] && !t->o->quiet)
        printf("note: %s/run.json was written before runs had an id, so the state cannot be checked to be this run's; "
               "it is taken as it is\n", t->dir);
    if (t->progress.step_in_epoch >= t->steps_per_epoch)
        return fail(err, errlen, ERR_INPUT, "%s: step %d of an epoch of %d steps", path, t->progress.step_in_epoch,
                    t->steps_per_epoch);
    /* --epochs changed on resume moves --swa's window: an average that would
     * not run on unbroken into it is dropped, and the window starts afresh */
    TrainProgress *p = &t->progress;
    int next = p->epochs_done + 1, swa_start = swa_first(t, next), cycle_first, cycle_last;
    schedule_cycle(next, t->o->cycle, t->o->epochs, &cycle_first, &cycle_last);
    /* (a run that has ended keeps its average; a new cycle starts its own) */
    if (p->n_averaged > 0 &&
        (!t->swa || (!run_ended(t, p->epochs_done) && cycle_first < next && (swa_start == 0 || swa_start > next)))) {
        int first = p->epochs_done - p->n_averaged + 1;
        if (!t->o->quiet && swa_start)
            printf("note: --epochs %d moves --swa's window to epochs %d-%d; the average of epochs %d-%d is dropped\n",
                   t->o->epochs, swa_start, cycle_last, first, p->epochs_done);
        else if (!t->o->quiet)
            printf("note: this resume averages no epochs (--patience, or --epochs too few for --swa); the average of "
                   "epochs %d-%d is dropped\n", first, p->epochs_done);
        p->n_averaged = 0;
    }
    /* --patience new on this resume (the checkpoint holds the last epoch's
     * weights or their average), or a state from inside the first epoch (no
     * checkpoint yet): early stopping starts here */
    if (t->best_params && (p->best_kept == 0 || p->best_epoch == 0)) {
        char from[96] = "the next epoch that ends";
        int at_end = state_restart_best(p);
        if (at_end) snprintf(from, sizeof from, "epoch %d (val loss %.4f), the weights it ended with", p->best_epoch,
                             p->best_val_loss);
        memcpy(t->best_params, t->model->params, sizeof(float) * t->model->n_params);
        rundir_path(path, sizeof path, t->dir, "model.safetensors");   /* the model is then what the run says */
        if (at_end && t->writer && saved_model_write(path, t->model, NULL, t->corpus.tokenizer, &t->corpus.vocab,
                                                     &t->corpus.labels, p->best_epoch, err, errlen) != EXIT_OK)
            return ERR_RUNTIME;
        if (!t->o->quiet && p->best_kept == 0)
            printf("note: --patience is new on this resume and the earlier epochs' best weights were not kept: early "
                   "stopping counts from %s\n", from);
    } else if (t->best_params) {
        rundir_path(path, sizeof path, t->dir, "model.safetensors");
        if (model_read_weights(t->model, path, t->best_params, err, errlen) != 0) return ERR_INPUT;
    }
    p->best_kept = t->best_params != NULL;
    return EXIT_OK;
}

/* MPI: the ranks must start from the same data, weights and progress, or
 * they would drift apart; a rank on a host with other files is caught here. */
static int check_ranks_agree(Trainer *t, char *err, size_t errlen) {
    if (t->dist->size == 1) return EXIT_OK;
    const Model *m = t->model;
    const TrainProgress *p = &t->progress;
    uint64_t hash = corpus_hash(&t->corpus);
    JsonBuf options = {0};   /* the recorded options: every rank must train the same run */
    if (options_to_json(t->o, &options) == 0 && options.data) hash = hash_bytes(hash, options.data, options.len);
    free(options.data);
    hash = hash_bytes(hash, m->params, sizeof(float) * m->n_params);
    hash = hash_bytes(hash, m->adam_m, sizeof(float) * m->n_params);
    hash = hash_bytes(hash, m->adam_v, sizeof(float) * m->n_params);
    hash = hash_bytes(hash, &m->adam_step, sizeof m->adam_step);
    int counters[4] = {p->epochs_done, p->step_in_epoch, p->n_history, p->n_averaged};
    hash = hash_bytes(hash, counters, sizeof counters);
    if (p->n_averaged > 0) hash = hash_bytes(hash, t->average, sizeof(float) * m->n_params);
    int rank = dist_first_mismatch(t->dist, hash);
    if (rank < 0) return EXIT_OK;
    return fail(err, errlen, ERR_INPUT, "MPI rank %d does not have the same options, data%s as rank 0; every rank "
                "must be started with the same options, and every host must see the same files at the same paths", rank,
                p->epochs_done || p->step_in_epoch ? " or run state" : "");
}

/* A new run: the first data file that --resume could not read again (a
 * pipe, say) in t->piped; with it --stop-after is refused, since the run
 * could then never finish. A missing file is left to the reading. */
static int find_piped(Trainer *t, const char *data_path, char *err, size_t errlen) {
    const char *paths[3] = {data_path, t->o->val_path, t->o->test_path};
    static const char *const roles[3] = {"train", "val", "test"};
    for (int i = 0; i < 3 && !t->piped; i++) {
        struct stat st;
        if (!paths[i] || !*paths[i] || stat(paths[i], &st) != 0 || record_rereadable(paths[i])) continue;
        t->piped = paths[i];
        t->piped_role = roles[i];
    }
    if (t->piped && t->o->stop_after > 0 && t->o->stop_after < t->o->epochs)
        return fail(err, errlen, ERR_INPUT, "--stop-after %d: %s (the %s data) is a pipe, FIFO or device, which "
                    "--resume cannot read again, so the run could never finish; save the data to a file and train "
                    "on that, or drop --stop-after", t->o->stop_after, t->piped, t->piped_role);
    return EXIT_OK;
}

/* run.json for a new run; a note when a data file cannot be read again. */
static int write_record(Trainer *t, const char *data_path, int argc, char **argv, char *err, size_t errlen) {
    DataFileInfo files[RECORD_MAX_FILES];
    int n = corpus_data_files(&t->corpus, t->o, files);
    if (record_run_id(t->o, files, n, t->progress.run_id) != 0) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    if (t->piped)
        printf("note: %s (the %s data) is a pipe, FIFO or device, not a file: this run cannot be resumed or "
               "reproduced, since neither can read the data again; save it to a file to keep both\n", t->piped,
               t->piped_role);
#ifdef _OPENMP
    int threads = omp_get_max_threads();
#else
    int threads = 1;
#endif
    return record_write(t->dir, t->o, data_path, argc, argv, threads, files, n, err, errlen) == 0 ? EXIT_OK
                                                                                                   : ERR_RUNTIME;
}

/* --init naming the directory this run writes to (with --overwrite): the
 * pretrain run would be removed while this one starts from it. */
static int refuse_init_into_itself(const Trainer *t, char *err, size_t errlen) {
    const char *init = t->o->init_dir;
    char file[4200];   /* init/model.safetensors when init is a folder: in init itself */
    if (init && *init) saved_model_file(init, file, sizeof file);
    if (init && *init && rundir_contains(t->dir, file))
        return fail(err, errlen, ERR_INPUT, "--init %s is in %s, the directory this run writes to: it would be "
                    "replaced while this run starts from it; give another --out", init, t->dir);
    return EXIT_OK;
}

static int prepare(Trainer *t, const char *data_path, int resume, int argc, char **argv, char *err, size_t errlen) {
    int rc;
    if (resume && (rc = resume_check_data(t, err, errlen)) != EXIT_OK) return rc;
    if (!resume && (rc = find_piped(t, data_path, err, errlen)) != EXIT_OK) return rc;
    if (!resume && (rc = refuse_init_into_itself(t, err, errlen)) != EXIT_OK) return rc;
    /* the model's options alone, before the data is read (a vocabulary and length the data cannot undercut) */
    ModelConfig least;
    if ((rc = options_model_config(t->o, N_SPECIAL_TOKENS + 1, t->mlm ? 0 : 2, t->o->max_len > 0 ? t->o->max_len : 3,
                                   &least, err, errlen)) != EXIT_OK || (rc = saved_model_check_memory(&least, 1, err, errlen)))
        return rc;
    if ((rc = corpus_prepare(&t->corpus, t->o, t->dist, data_path, stdout, err, errlen)) != EXIT_OK) return rc;
    /* --epochs, --cycle and --precision auto: the run holds and records the choice */
    int epochs_auto = t->o->epochs == 0, cycle_auto = t->o->cycle == 0;
    t->precision_auto = strcmp(t->o->precision, "auto") == 0;
    if (epochs_auto || cycle_auto || t->precision_auto) {
        t->resolved = *t->o;
        if (epochs_auto) t->resolved.epochs = t->corpus.epochs;
        if (cycle_auto) t->resolved.cycle = t->corpus.cycle;
        if (t->precision_auto) {   /* rank 0's CPU decides for every rank, so that they agree */
            double chosen = (double)options_precision(t->o);
            dist_share_rank0(t->dist, &chosen, 1);
            t->resolved.precision = precision_name((Precision)(int)chosen);
        }
        t->o = &t->resolved;
    }
    t->n_train = t->corpus.train.total;
    if ((rc = build_model(t, resume, err, errlen)) != EXIT_OK) return rc;
    t->steps_per_epoch = schedule_steps_per_epoch(t->n_train, t->o->batch_size);
    if (corpus_class_weights(&t->corpus, t->o, t->dist, &t->class_weights) != 0 || allocate_buffers(t) != 0 ||
        corpus_observation(&t->corpus, t->dist, &t->observe, &t->class_stats) != 0)
        return fail(err, errlen, ERR_RUNTIME, "out of memory");
    if (t->dist->size > 1 && !(t->reducer = dist_reducer_create(t->dist, t->model->n_params, err, errlen)))
        return ERR_RUNTIME;
    if (t->writer) rundir_remove_temporaries(t->dir);
    /* the probes (rank 0 alone records them), a new run's checked before its directory is touched */
    if (resume) {
        rc = resume_state(t, err, errlen);
        if (rc == EXIT_OK && t->writer)
            rc = probes_open(&t->probes, t->o, &t->corpus, t->model, t->dir, 1, t->progress.epochs_done, stdout, err,
                             errlen);
        return rc == EXIT_OK ? check_ranks_agree(t, err, errlen) : rc;
    }
    if (t->writer && (rc = probes_open(&t->probes, t->o, &t->corpus, t->model, t->dir, 0, 0, stdout, err, errlen)))
        return rc;
    if (t->writer) {
        if (make_dirs(t->dir, err, errlen) != 0) return ERR_RUNTIME;
        /* a new run: what an earlier run (replaced with --overwrite) left goes now the data has been read */
        if ((rc = rundir_remove_outputs(t->dir, stdout, err, errlen)) != EXIT_OK) return rc;
        if ((rc = write_record(t, data_path, argc, argv, err, errlen)) != EXIT_OK) return rc;
    }
    return check_ranks_agree(t, err, errlen);
}

static void print_intro(const Trainer *t, int resume) {
    if (t->o->quiet) return;
    const Corpus *c = &t->corpus;
    if (t->mlm)
        printf("%s %s: masked-token pretraining on %d texts, vocabulary %d (%s tokens)", resume ? "resuming" : "pretraining",
               t->dir, t->n_train, c->vocab.size, tokenizer_name(c->tokenizer));
    else
        printf("%s %s: %d training examples, %d classes, vocabulary %d (%s tokens)", resume ? "resuming" : "training",
               t->dir, t->n_train, c->labels.n, c->vocab.size, tokenizer_name(c->tokenizer));
    if (c->has_val) printf(", %d validation", c->val.total);
    if (c->has_test) printf(", %d test", c->test.total);
    int none = strcmp(t->o->pe, "none") == 0;
    const char *head = t->mlm ? "tied MLM head" : strcmp(t->o->pool, "cls") == 0 ? "cls pooling" : "mean pooling";
    printf("\nmodel: %zu parameters, d_model %d, %d head%s, %d layer%s, d_ff %d, %s-norm, %s, %s PE; "
           "%d step%s per epoch", t->model->n_params, t->o->d_model, t->o->heads, t->o->heads == 1 ? "" : "s",
           t->o->layers, t->o->layers == 1 ? "" : "s", t->o->d_ff, t->o->norm, head, none ? "no" : t->o->pe,
           t->steps_per_epoch, t->steps_per_epoch == 1 ? "" : "s");
    if (t->model->cfg.precision == PRECISION_AMX)
        printf("; amx products%s", !amx_hardware() ? " (emulated: this CPU or kernel lacks AMX, much slower)"
                                   : t->precision_auto ? " (auto: this CPU has AMX)" : "");
    else if (t->model->cfg.precision == PRECISION_BF16)
        printf("; bf16 products%s", !bf16_hardware() ? " (emulated: this CPU lacks AVX-512 BF16, slower)"
                                    : t->precision_auto ? " (auto: this CPU has AVX-512 BF16)" : "");
    else if (t->precision_auto && bf16_hardware())
        printf("; fp32 products (auto: on this CPU AVX-512 BF16 is no faster than float32, and it has no AMX or the kernel does not grant it)");
    else if (t->precision_auto)
        printf("; fp32 products (auto: no AVX-512 BF16 on this CPU, or not in this build)");
    if (t->dist->size > 1)
        printf(", each batch split over %d MPI ranks, each holding its share of the data", t->dist->size);
    printf("\n");
    if (t->cycles) {   /* the cycles' lengths, the last one cut at --epochs */
        printf("schedule: at most %d epochs, in learning-rate cycles of", t->o->epochs);
        for (int first = 1, last; first <= t->o->epochs; first = last + 1) {
            schedule_cycle(first, t->o->cycle, t->o->epochs, &first, &last);
            printf("%s %d", first == 1 ? "" : last == t->o->epochs ? " and" : ",", last - first + 1);
        }
        printf(" epochs; the next cycle only while the val loss still falls in the second half of the last "
               "(--cycle)\n");
    }
}

/* ------------------------------------------------------------ an epoch's end */

/* metrics.csv and curves.png: drawn from the history, which the state holds. */
static int write_history_files(const Trainer *t, char *err, size_t errlen) {
    const TrainProgress *p = &t->progress;
    char path[4096];
    rundir_path(path, sizeof path, t->dir, "metrics.csv");
    if ((t->mlm ? metrics_csv_write_mlm : metrics_csv_write)(path, p->history, p->n_history, t->corpus.has_val, err,
                                                              errlen) != 0)
        return ERR_RUNTIME;
    rundir_path(path, sizeof path, t->dir, "curves.png");
    if (curves_write_png(path, p->history, p->n_history, t->corpus.has_val, t->best_params ? p->best_epoch : 0, err,
                         errlen) != EXIT_OK)
        return ERR_RUNTIME;
    return EXIT_OK;
}

/* The checkpoint (with --patience: the best weights, otherwise the latest),
 * the state, then metrics.csv and curves at the end of an epoch. The work
 * goes first: when the disk fills while the pictures are written, the epoch
 * is still saved, and --resume writes the history files again. */
static int write_epoch_files(Trainer *t, int epoch, int improved, char *err, size_t errlen) {
    const TrainProgress *p = &t->progress;
    char path[4096];
    if (!t->best_params || improved) {
        rundir_path(path, sizeof path, t->dir, "model.safetensors");
        int rc = saved_model_write(path, t->model, t->best_params, t->corpus.tokenizer, &t->corpus.vocab,
                                   &t->corpus.labels, epoch, err, errlen);
        if (rc != EXIT_OK) return rc;
    }
    int rc = state_save(t->model, t->average, p, t->dir, err, errlen);
    if (rc != EXIT_OK && (!t->best_params || improved)) {
        /* the checkpoint is of this epoch, the rest of the run is not: say so */
        char why[1024];   /* through set_error, which keeps the end of a message too long */
        snprintf(why, sizeof why, "%s", err);
        if (rundir_holds(t->dir, "state.safetensors"))
            set_error(err, errlen, "%s. model.safetensors already holds epoch %d, but the state, metrics.csv and "
                      "report.txt do not; --resume %s once there is room trains epoch %d again (to the same numbers) "
                      "and brings them level", why, epoch, t->dir, epoch);
        else
            set_error(err, errlen, "%s. model.safetensors holds epoch %d and works, but no state was ever saved, so "
                      "the run cannot be resumed; once there is room, train again with --overwrite", why, epoch);
    }
    return rc != EXIT_OK ? rc : write_history_files(t, err, errlen);
}

/* The validation numbers val[3] (loss, accuracy, macro-F1; NaN F1 when
 * pretraining): each rank evaluates its share of the validation set and
 * the sums are added in rank order, so every rank gets the same numbers. */
static int validation_numbers(Trainer *t, double val[3], char *err, size_t errlen) {
    const EncodedDataset *d = &t->corpus.enc_val;
    val[2] = NAN;
    if (t->mlm) {
        double sums[3];
        int rc = evaluate_mlm(t->model, d, t->corpus.val.first, (uint64_t)t->o->seed, sums, err, errlen);
        if (rc != EXIT_OK) return rc;
        dist_sum_doubles(t->dist, sums, 3);
        val[0] = sums[2] > 0 ? sums[0] / sums[2] : 0.0;
        val[1] = sums[2] > 0 ? sums[1] / sums[2] : 0.0;
        return EXIT_OK;
    }
    Evaluation e;
    int *labels;
    int rc = evaluate_shared(t->model, t->dist, d, t->corpus.val.total, &e, &labels, err, errlen);
    if (rc != EXIT_OK) return rc;
    val[0] = e.loss;
    val[1] = e.accuracy;
    /* per-class precision and recall for the observation */
    ClassReport report;
    int C = t->corpus.labels.n;
    if (classreport_compute(&report, labels, e.predictions, e.n, C) == 0) {
        val[2] = report.macro_f1;
        memcpy(t->class_stats, report.precision, sizeof(double) * C);
        memcpy(t->class_stats + C, report.recall, sizeof(double) * C);
        t->observe.precision = t->class_stats;
        t->observe.recall = t->class_stats + C;
        classreport_free(&report);
    }
    evaluation_free(&e);
    free(labels);
    return EXIT_OK;
}

/* Validation numbers into rec; early stopping's counters. *improved is 1
 * when the val loss is the best so far (always without a val set). */
static int validate(Trainer *t, int epoch, EpochRecord *rec, int *improved, char *err, size_t errlen) {
    TrainProgress *p = &t->progress;
    *improved = 1;
    if (!t->corpus.has_val) return EXIT_OK;
    double val[3];
    int rc = validation_numbers(t, val, err, errlen);
    if (rc != EXIT_OK) return rc;
    /* MPI: every rank decides (early stopping) on rank 0's numbers */
    dist_share_rank0(t->dist, val, 3);
    rec->val_loss = val[0];
    rec->val_acc = val[1];
    rec->val_f1 = val[2];
    *improved = p->best_epoch == 0 || rec->val_loss < p->best_val_loss;
    if (*improved) {
        p->best_val_loss = rec->val_loss;
        p->best_epoch = epoch;
        p->bad_epochs = 0;
    } else {
        p->bad_epochs++;
    }
    return EXIT_OK;
}

/* Validation, the table row and the run's files at the end of an epoch.
 * Sets *stop when early stopping ends the run. */
static int finish_epoch(Trainer *t, int epoch, double epoch_seconds, int *stop, char *err, size_t errlen) {
    const Options *o = t->o;
    TrainProgress *p = &t->progress;
    EpochRecord rec = {.epoch = epoch, .train_loss = p->loss_sum / p->count, .train_acc = p->correct / p->count,
                       .lr = schedule_cycle_lr(o->lr, o->warmup, (long)epoch * t->steps_per_epoch - 1,
                                               t->steps_per_epoch, o->cycle, o->epochs),
                       .seconds = epoch_seconds, .tokens_per_s = epoch_seconds > 0 ? p->tokens / epoch_seconds : 0};
    int improved;
    int rc = validate(t, epoch, &rec, &improved, err, errlen);
    if (rc != EXIT_OK) return rc;
    p->history[p->n_history++] = rec;
    p->epochs_done = epoch;
    p->step_in_epoch = 0;
    p->loss_sum = p->correct = p->count = p->tokens = p->seconds = 0;
    char observation[160];
    epoch_observation(p->history, p->n_history, t->corpus.has_val, p->best_epoch, &t->observe, observation,
                      sizeof observation);
    progress_clear(&t->bar);
    (t->mlm ? epoch_table_row_mlm : epoch_table_row)(stdout, &rec, t->corpus.has_val, observation);
    if (!isfinite(rec.train_loss) || (t->corpus.has_val && !isfinite(rec.val_loss)))
        return fail(err, errlen, ERR_RUNTIME, "the loss is not finite at the end of epoch %d", epoch);
    if (t->best_params && improved) memcpy(t->best_params, t->model->params, sizeof(float) * t->model->n_params);
    int swa_start = swa_first(t, epoch);
    if (swa_start > 0 && epoch >= swa_start) {   /* --swa: the epoch's end weights join the average */
        model_average_update(t->model, t->average, t->progress.n_averaged);
        t->progress.n_averaged++;
    }
    if ((rc = probes_record(t->probes, t->model, epoch, err, errlen)) != EXIT_OK) return rc;
    if (t->writer && (rc = write_epoch_files(t, epoch, improved, err, errlen)) != EXIT_OK) return rc;
    *stop = o->patience > 0 && t->corpus.has_val && p->bad_epochs >= o->patience;
    return EXIT_OK;
}

/* ------------------------------------------------------------ the loop */

/* The signal that asks to stop, or 0. MPI: a signal on any rank stops
 * every rank after the same step. */
static int agreed_stop(const Trainer *t) { return dist_max_int(t->dist, signals_pending()); }

/* What continues this run, in buf: the --resume command (under mpirun for
 * an MPI job), or why none can. */
static const char *resume_advice(const Trainer *t, char *buf, size_t len) {
    if (t->piped)
        snprintf(buf, len, "%s (the %s data) is a pipe, FIFO or device, which --resume cannot read again, so this "
                 "run cannot continue; the model of its last finished epoch is in %s", t->piped, t->piped_role, t->dir);
    else if (t->dist->size > 1)
        snprintf(buf, len, "continue with: mpirun -np %d ./train --resume %s", t->dist->size, t->dir);
    else
        snprintf(buf, len, "continue with: ./train --resume %s", t->dir);
    return buf;
}

static int interrupted(Trainer *t, int sig, int epoch, int step, char *err, size_t errlen) {
    progress_clear(&t->bar);
    if (!t->writer) return EXIT_INTERRUPTED;
    if (state_save(t->model, t->average, &t->progress, t->dir, err, errlen) != EXIT_OK) return ERR_RUNTIME;
    char advice[4600];   /* the caller prints it: stdout may be a reader that has gone (SIGPIPE) */
    return fail(err, errlen, EXIT_INTERRUPTED, "interrupted by %s in epoch %d after step %d of %d%s\n%s",
                signals_name(sig), epoch, step, t->steps_per_epoch, t->piped ? "." : "; state saved.",
                resume_advice(t, advice, sizeof advice));
}

/* The steps of one epoch from where the progress stands. */
static int run_epoch(Trainer *t, int epoch, char *err, size_t errlen) {
    TrainProgress *p = &t->progress;
    schedule_shuffle(t->order, t->n_train, (uint64_t)t->o->seed, epoch);
    if (t->lengths)
        schedule_group_by_length(t->order, t->n_train, t->lengths, t->o->batch_size, (uint64_t)t->o->seed, epoch,
                                 t->order_work);
    double start = now_seconds() - p->seconds;
    t->bar.last_draw = -1.0;
    for (int s = p->step_in_epoch; s < t->steps_per_epoch; s++) {
        int rc = train_step(t, epoch, s, err, errlen);   /* run/step.c */
        if (rc != EXIT_OK) {
            progress_clear(&t->bar);
            return rc;
        }
        p->step_in_epoch = s + 1;
        p->seconds = now_seconds() - start;
        progress_draw(&t->bar, epoch, t->o->epochs, s + 1, t->steps_per_epoch, p->seconds, p->loss_sum / p->count,
                      p->correct / p->count);
        int sig = agreed_stop(t);
        if (sig && s + 1 < t->steps_per_epoch) return interrupted(t, sig, epoch, s + 1, err, errlen);
    }
    return EXIT_OK;
}

/* --swa, at the end of a run: the average replaces the run's weights (the
 * last, or with --patience the best) when its validation loss is lower;
 * model.safetensors then holds it. Every MPI rank evaluates its share. */
static int choose_average(Trainer *t, char *err, size_t errlen) {
    TrainProgress *p = &t->progress;
    if (p->n_averaged == 0 || p->n_history == 0) return EXIT_OK;
    size_t bytes = sizeof(float) * t->model->n_params;
    double val[3];
    memcpy(t->live, t->model->params, bytes);
    memcpy(t->model->params, t->average, bytes);
    int rc = validation_numbers(t, val, err, errlen);
    if (rc != EXIT_OK) {
        memcpy(t->model->params, t->live, bytes);
        return rc;
    }
    dist_share_rank0(t->dist, val, 3);
    int compared = t->best_params ? p->best_epoch : p->n_history;
    double run_loss = p->history[compared - 1].val_loss;
    int first = p->n_history - p->n_averaged + 1;
    t->average_kept = val[0] < run_loss;
    t->average_val_loss = val[0];
    snprintf(t->average_note, sizeof t->average_note, "swa: the mean of the weights at the ends of epochs %d-%d: val "
             "loss %.4f (accuracy %.4f); epoch %d's weights: %.4f; the model is %s", first, p->n_history, val[0],
             val[1], compared, run_loss, t->average_kept ? "the mean" : "unchanged");
    if (!t->average_kept) {
        memcpy(t->model->params, t->live, bytes);
        return EXIT_OK;
    }
    if (!t->writer) return EXIT_OK;
    char path[4096];
    rundir_path(path, sizeof path, t->dir, "model.safetensors");
    return saved_model_write(path, t->model, NULL, t->corpus.tokenizer, &t->corpus.vocab, &t->corpus.labels,
                             p->n_history, err, errlen);
}

static int train_epochs(Trainer *t, char *err, size_t errlen) {
    const Options *o = t->o;
    TrainProgress *p = &t->progress;
    /* under an MPI launcher stdout can be a pseudo-terminal the launcher copies into a redirected log (Open MPI
     * does so), and it does not say where its own output goes: no bar there, the epoch rows alone */
    t->bar.enabled = !o->quiet && !t->dist->mpi && isatty(STDOUT_FILENO);
    (t->mlm ? epoch_table_header_mlm : epoch_table_header)(stdout, t->corpus.has_val);
    for (int i = 0; i < p->n_history; i++)
        (t->mlm ? epoch_table_row_mlm : epoch_table_row)(stdout, &p->history[i], t->corpus.has_val, "(recorded)");
    int rc = p->epochs_done || p->step_in_epoch ? EXIT_OK : probes_record(t->probes, t->model, 0, err, errlen);
    if (rc != EXIT_OK) return rc;
    int ended = p->epochs_done > 0 && p->epochs_done < o->epochs && p->step_in_epoch == 0 &&
                run_ended(t, p->epochs_done);
    if (ended && !o->quiet)
        printf("the run ended at epoch %d of at most %d: the cycle ending there no longer lowered the val loss "
               "(--cycle %d); nothing to train\n", p->epochs_done, o->epochs, o->cycle);
    for (int epoch = p->epochs_done + 1; epoch <= o->epochs && !ended; epoch++) {
        int first, last;
        schedule_cycle(epoch, o->cycle, o->epochs, &first, &last);
        if (epoch == first) p->n_averaged = 0;   /* each cycle averages its own epochs */
        double start = now_seconds() - p->seconds;
        rc = run_epoch(t, epoch, err, errlen);
        if (rc != EXIT_OK) return rc;
        int stop = 0;
        if ((rc = finish_epoch(t, epoch, now_seconds() - start, &stop, err, errlen)) != EXIT_OK) return rc;
        if (stop) {
            printf("early stopping: val loss has not improved for %d epoch%s; restored the weights of epoch %d\n",
                   o->patience, o->patience == 1 ? "" : "s", p->best_epoch);
            break;
        }
        if (t->cycles && epoch == last && epoch < o->epochs) {   /* --cycle: train another? */
            int half;
            double before = loss_before_half(t, epoch, &half);
            ended = run_ended(t, epoch);
            if (!o->quiet && half > 1)
                printf("cycle of epochs %d-%d: val loss %.4f at its end, %s the lowest of epochs 1-%d (%.4f): %s\n",
                       first, last, p->history[epoch - 1].val_loss, ended ? "not below" : "below", half - 1, before,
                       ended ? "the run ends here" : "another cycle follows");
            else if (!o->quiet)
                printf("cycle of epoch 1: no epoch before its second half to compare with; another cycle follows\n");
            if (ended) break;
        }
        int sig = agreed_stop(t);
        if (sig) return interrupted(t, sig, epoch, t->steps_per_epoch, err, errlen);
        if (o->stop_after == epoch && epoch < o->epochs) {
            char advice[4600];
            printf("stopped after epoch %d (--stop-after); %s\n", epoch, resume_advice(t, advice, sizeof advice));
            t->paused = 1;
            return EXIT_OK;
        }
    }
    if (t->best_params) memcpy(t->model->params, t->best_params, sizeof(float) * t->model->n_params);
    return choose_average(t, err, errlen);
}

int fit(const DistContext *dist, const Options *o, const char *data_path, const char *out_dir, int resume, int argc,
        char **argv, FitSummary *summary, char *err, size_t errlen) {
    DistContext solo = dist_solo();
    if (!dist) dist = &solo;
    Trainer t;
    memset(&t, 0, sizeof t);
    t.o = o;
    t.dir = out_dir;
    t.dist = dist;
    t.writer = dist->rank == 0;
    t.mlm = options_pretrain(o);
    double val_acc = 0, test_acc = 0, val_loss = 0;
    int rc = prepare(&t, data_path, resume, argc, argv, err, errlen);
    o = t.o;   /* --epochs auto resolved */
    /* a run stopped between its state and its history files gets them again */
    if (rc == EXIT_OK && resume && t.writer && t.progress.n_history > 0) rc = write_history_files(&t, err, errlen);
    if (rc == EXIT_OK) {
        print_intro(&t, resume);
        if (resume && o->stop_after > 0 && o->stop_after <= t.progress.epochs_done && o->stop_after < o->epochs &&
            t.writer)
            printf("warning: --stop-after %d has no effect: %s has done %d epoch%s already (give a later epoch to "
                   "stop after)\n", o->stop_after, out_dir, t.progress.epochs_done, t.progress.epochs_done == 1 ? "" : "s");
        if (t.progress.epochs_done >= o->epochs && t.progress.step_in_epoch == 0)
            printf("%d epochs of %s are done, %s --epochs %d; nothing to train (raise --epochs to continue)\n",
                   t.progress.epochs_done, out_dir, t.progress.epochs_done > o->epochs ? "more than" : "all of",
                   o->epochs);
        rc = train_epochs(&t, err, errlen);
        if (rc == EXIT_OK && !t.paused) {   /* MPI: every rank evaluates its share, rank 0 alone reports */
            FinalReportOptions fo = {t.progress.best_epoch, t.best_params != NULL, o->quiet,
                                     t.average_kept ? t.progress.n_history - t.progress.n_averaged + 1 : 0,
                                     t.progress.n_history, t.average_note};
            if (t.mlm && t.writer)
                rc = final_report_mlm(&t.corpus, t.dir, t.progress.history, t.progress.n_history, &fo, &val_acc,
                                      &val_loss, err, errlen);
            else if (!t.mlm)
                rc = final_report(t.model, t.dist, &t.corpus, t.dir, t.progress.history, t.progress.n_history, &fo,
                                  &val_acc, &test_acc, err, errlen);
            /* the validation loss of the weights the run ends with: the average's, the best epoch's or the last's */
            int ended = t.best_params && t.progress.best_epoch > 0 ? t.progress.best_epoch : t.progress.n_history;
            if (!t.mlm && t.corpus.has_val && ended > 0)
                val_loss = t.average_kept ? t.average_val_loss : t.progress.history[ended - 1].val_loss;
        }
    }
    if (summary) {
        summary->has_val = t.corpus.has_val;
        summary->n_val = t.corpus.has_val ? t.corpus.val.total : 0;
        summary->mlm = t.mlm;
        summary->final_val_loss = val_loss;
        summary->n_epochs = t.progress.n_history;
        summary->history = t.progress.history;
        summary->final_val_acc = val_acc;
        summary->final_test_acc = test_acc;
        t.progress.history = NULL;
    }
    trainer_free(&t);
    return rc;
}
