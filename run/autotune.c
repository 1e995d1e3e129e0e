/* autotune.c: --autotune DURATION (see autotune.h): each
 * trial's plan and its run with rungs, the record (RUN/autotune.json, the
 * plan; RUN/trials.jsonl, the trials), the clock's cut, and the winner
 * trained again as the run itself. */
#include "run/autotune.h"
#include "run/autotune_record.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fileio.h"
#include "base/rng.h"
#include "run/fit.h"
#include "run/record.h"
#include "run/rundir.h"
#include "run/schedule.h"
#include "run/signals.h"
#include "run/state.h"

#define SITE_AUTOTUNE 0x4155544F54554E45ull   /* "AUTOTUNE": the rng site of the trials' draws, used by nothing else */
#define MAX_TRIALS 999
#define ETA 3          /* a rung lets the best third of the trials that reached it go on */
#define MAX_RUNGS 16
#define MAX_FAILED 3   /* trials failing in a row end the search */

typedef struct {
    const DistContext *dist;
    const char *dir;
    Options base;          /* the options as given, paths absolute */
    char *data_path;
    double budget;         /* seconds */
    Trial *trials;         /* the trials that ended, in order */
    int n_trials;
    int winner;            /* the chosen trial's number; 0 while searching */
    int resumed;           /* 1: a resumed autotune, whose next trial and final run may continue from a state */
    double clock0, before; /* this process's start; the recorded trials' seconds */
} Search;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A number as metrics.csv and trials.jsonl write it (%.6f), so that a
 * decision made from the record after a resume is the one made from the
 * numbers in memory. */
static double six(double x) {
    char text[64];
    snprintf(text, sizeof text, "%.6f", x);
    return strtod(text, NULL);
}

/* A fact about the files as rank 0 sees it, for every MPI rank (which
 * could otherwise look after rank 0 has begun to change them). */
static int rank0_sees(const DistContext *dist, int fact) {
    double shared = fact;
    dist_share_rank0(dist, &shared, 1);
    return shared != 0;
}

/* ------------------------------------------------------------ options */

static int set_option(Options *o, const char *name, const char *value) {
    char err[256];
    return options_set(o, options_find(name), value, err, sizeof err);
}

/* 1 when the search draws the axis: not given by the user, nor taken from
 * --init's run (nor epochs when they are not a count to take fractions of). */
static int searched(const Search *s, int axis) {
    int from_init = s->base.init_dir && *s->base.init_dir && axis != AXIS_LR && axis != AXIS_WD &&
                    axis != AXIS_DROPOUT && axis != AXIS_EPOCHS;
    return !options_given(&s->base, AUTOTUNE_AXES[axis].name) && !from_init &&
           (axis != AXIS_EPOCHS || s->base.epochs > 0);
}

/* The axis's k-th value as options_set takes it. */
static void axis_value(const Search *s, int axis, int k, char out[AUTOTUNE_VALUE_LEN]) {
    int num, den;
    if (axis == AXIS_EPOCHS && sscanf(AUTOTUNE_AXES[axis].values[k], "%d/%d", &num, &den) == 2) {
        long e = (long)s->base.epochs * num / den;
        snprintf(out, AUTOTUNE_VALUE_LEN, "%ld", e < 1 ? 1 : e);
    } else {
        snprintf(out, AUTOTUNE_VALUE_LEN, "%s", AUTOTUNE_AXES[axis].values[k]);
    }
}

/* A trial's options: the given ones with the trial's values; the final run
 * (final) keeps --test, --autotune and the probes, a trial has none of them. */
static int trial_options(const Search *s, char value[N_AXES][AUTOTUNE_VALUE_LEN], int final, Options *o) {
    if (options_copy(o, &s->base) != 0) return -1;
    int rc = 0;
    for (int a = 0; a < N_AXES; a++) rc |= set_option(o, AUTOTUNE_AXES[a].name, value[a]);
    /* --cycle auto as a trial resolves it (its --epochs is drawn, not given), so its recorded command repeats it */
    if (o->cycle == 0 && !options_given(&s->base, "epochs") && o->patience == 0) o->cycle = SCHEDULE_CYCLE_AUTO;
    /* a width drawn keeps the feed-forward's ratio to it */
    if (o->d_model != s->base.d_model && !options_given(&s->base, "d-ff"))
        o->d_ff = (int)((long)s->base.d_ff * o->d_model / s->base.d_model);
    if (!final) {
        rc |= set_option(o, "test", "") | set_option(o, "autotune", "");
        o->autotune_trials = 0;
        o->no_probes = 1;
    }
    rc |= set_option(o, "out", "") | set_option(o, "resume", "");
    o->stop_after = 0;
    o->overwrite = 0;
    return rc;
}

/* 1 when the values make a model the options allow (heads dividing the width, say). */
static int trial_valid(const Search *s, char value[N_AXES][AUTOTUNE_VALUE_LEN]) {
    Options o;
    ModelConfig cfg;
    char err[256];
    int ok = trial_options(s, value, 0, &o) == 0 &&
             options_model_config(&o, 64, 2, o.max_len > 0 ? o.max_len : 64, &cfg, err, sizeof err) == EXIT_OK;
    options_free(&o);
    return ok;
}

/* The trial chosen so far: of those that ran all their epochs, the highest
 * validation accuracy, then the lowest validation loss, then the first. */
static const Trial *best_trial(const Search *s) {
    const Trial *best = NULL;
    for (int i = 0; i < s->n_trials; i++) {
        const Trial *t = &s->trials[i];
        if (t->stopped_at || t->failed) continue;
        if (!best || t->val_acc > best->val_acc || (t->val_acc == best->val_acc && t->val_loss < best->val_loss))
            best = t;
    }
    return best;
}

/* The winner: the best trial (best_trial), unless its validation accuracy
 * leads trial 1's (the options as given) by no more than one standard
 * error of a validation accuracy, sqrt(p (1 - p) / n) at the best's p over
 * the n validation examples: then trial 1. The best of many noisy measures
 * sits above its own truth, and a lead within the noise does not displace
 * the options as given (the one-standard-error rule of model selection).
 * best and se (each NULL or where to put it): the best trial and that
 * error (0 when n is unknown: an older record, which keeps the best). */
static const Trial *choose_winner(const Search *s, const Trial **best, double *se) {
    const Trial *top = best_trial(s), *first = &s->trials[0];
    double error = top && top->val_n > 0 ? six(sqrt(top->val_acc * (1 - top->val_acc) / top->val_n)) : 0;
    if (best) *best = top;
    if (se) *se = error;
    if (!top || top->val_n <= 0 || first->failed || first->stopped_at) return top;
    /* in whole millionths, as recorded: a lead equal to the error is within it */
    return lround((top->val_acc - first->val_acc) * 1e6) <= lround(error * 1e6) ? first : top;
}

static int fits_clock(const Search *s, const Trial *t);

/* Trial n's values, drawn from (seed, n): trial 1 the options as given; an
 * even trial every searched option drawn anew; an odd one the best trial so
 * far with one or two of them drawn anew (two draws of an axis may meet). A
 * draw that repeats an earlier trial, makes no valid model or does not fit
 * the clock is drawn again. 0 when none is found. */
static int plan_trial(const Search *s, int n, Trial *t) {
    memset(t, 0, sizeof *t);
    t->n = n;
    for (int a = 0; a < N_AXES; a++)
        options_format(&s->base, options_find(AUTOTUNE_AXES[a].name), t->value[a], AUTOTUNE_VALUE_LEN);
    if (n == 1) return 1;
    int axes[N_AXES], n_axes = 0;
    for (int a = 0; a < N_AXES; a++)
        if (searched(s, a)) axes[n_axes++] = a;
    const Trial *best = best_trial(s);
    if (n_axes == 0) return 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        uint64_t stream = rng_stream((uint64_t)s->base.seed, (uint64_t)n * 128 + attempt, SITE_AUTOTUNE);
        char value[N_AXES][AUTOTUNE_VALUE_LEN];
        memcpy(value, n % 2 && best ? best->value : s->trials[0].value, sizeof value);
        int redraw[N_AXES] = {0};
        if (n % 2 && best) {
            redraw[axes[rng_bits_at(stream, 0) % n_axes]] = 1;
            redraw[axes[rng_bits_at(stream, 1) % n_axes]] = 1;
        } else {
            for (int i = 0; i < n_axes; i++) redraw[axes[i]] = 1;
        }
        for (int a = 0; a < N_AXES; a++)
            if (redraw[a]) axis_value(s, a, (int)(rng_bits_at(stream, 16 + a) % AUTOTUNE_AXES[a].n), value[a]);
        int seen = 0;   /* compared as strings: the bytes after a value's end are not part of it */
        for (int i = 0; i < s->n_trials && !seen; i++) {
            seen = 1;
            for (int a = 0; a < N_AXES && seen; a++) seen = strcmp(value[a], s->trials[i].value[a]) == 0;
        }
        if (!seen && trial_valid(s, value)) {
            memcpy(t->value, value, sizeof value);
            if (fits_clock(s, t)) return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ the record (run/autotune_record.c) */

static int write_plan(const Search *s, char *err, size_t errlen) {
    return s->dist->rank == 0 ? autotune_write_plan(s->dir, s->data_path, &s->base, err, errlen) : EXIT_OK;
}

static int write_trials(const Search *s, char *err, size_t errlen) {
    const Trial *best = NULL;
    double se = 0;
    if (s->winner) choose_winner(s, &best, &se);
    return s->dist->rank == 0 ? autotune_write_trials(s->dir, s->trials, s->n_trials, s->winner, best ? best->n : 0,
                                                      se, err, errlen)
                              : EXIT_OK;
}

/* The trials that ended and the winner, if chosen; their seconds count against the budget. */
static int read_trials(Search *s, char *err, size_t errlen) {
    int rc = autotune_read_trials(s->dir, s->trials, MAX_TRIALS, &s->n_trials, &s->winner, err, errlen);
    for (int i = 0; rc == EXIT_OK && i < s->n_trials; i++) s->before += s->trials[i].seconds;
    return rc;
}

/* ------------------------------------------------------------ a trial */

/* The rung epochs of a trial of `epochs` epochs: u, 3u, 9u, ... below
 * epochs, u a ninth of the first trial's epochs (at least 1). */
static int rungs(const Search *s, int epochs, int rung[MAX_RUNGS]) {
    int n = 0;
    for (long r = s->base.epochs / 9 > 1 ? s->base.epochs / 9 : 1; r < epochs && n < MAX_RUNGS; r *= ETA)
        rung[n++] = (int)r;
    return n;
}

/* Clearly worse at rung epoch r: of the trials that reached r (this one
 * among them, at least 2), outside the best third by validation loss there
 * (of 2, worse than the other). */
static int clearly_worse(const Search *s, double loss, int r) {
    int count = 1, better = 0;
    for (int i = 0; i < s->n_trials; i++) {
        const Trial *t = &s->trials[i];
        if (t->epochs_run < r) continue;
        count++;
        better += t->curve[r - 1] < loss;
    }
    return count >= 2 && better >= (count + ETA - 1) / ETA;
}

/* The validation losses and accuracies of the epochs a trial's saved
 * state holds (0 epochs without one): the epochs its resume goes on from. */
static int read_history(const char *dir, double **loss, double **acc) {
    EpochRecord *h = NULL;
    int n = rundir_holds(dir, "state.safetensors") ? state_saved_history(dir, &h) : 0;
    if (n < 0) n = 0;
    *loss = malloc(sizeof(double) * (size_t)(n + 1));
    *acc = malloc(sizeof(double) * (size_t)(n + 1));
    for (int e = 0; e < n && *loss && *acc; e++) {
        (*loss)[e] = six(h[e].val_loss);
        (*acc)[e] = six(h[e].val_acc);
    }
    free(h);
    return *loss && *acc ? n : -1;
}

/* fit with the options' command line as run.json's command (a trial's
 * own; for the run itself the winner's, whichever process trains it). */
static int fit_as_command(const Search *s, const Options *o, const char *dir, int resume, FitSummary *sum, char *err,
                          size_t errlen) {
    int argc;
    char **argv = options_command_line(o, s->data_path, &argc);
    if (sum) memset(sum, 0, sizeof *sum);
    int rc = argv ? fit(s->dist, o, s->data_path, dir, resume, argc, argv, sum, err, errlen)
                  : fail(err, errlen, ERR_RUNTIME, "out of memory");
    options_command_free(argv, argc);
    return rc;
}

/* One fit of a trial into its directory: a new run, or its state continued;
 * rank 0's output goes to the trial's train.log. */
static int trial_fit(const Search *s, const Options *o, const char *dir, int resume, FitSummary *sum, char *err,
                     size_t errlen) {
    RunDirPolicy policy = {resume ? RUNDIR_RESUME : RUNDIR_OVERWRITE, 0, NULL, NULL};
    RunDir rd;
    int rc = rundir_claim(&rd, s->dist, dir, &policy, err, errlen);
    if (rc != EXIT_OK) return rc;
    int saved = -1;
    if (s->dist->rank == 0) {
        char path[4200];
        rundir_path(path, sizeof path, dir, "train.log");
        fflush(stdout);
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0 && (saved = dup(STDOUT_FILENO)) >= 0) dup2(fd, STDOUT_FILENO);
        if (fd >= 0) close(fd);
    }
    if (sum) free(sum->history);
    rc = fit_as_command(s, o, dir, resume, sum, err, errlen);
    if (saved >= 0) {
        fflush(stdout);
        dup2(saved, STDOUT_FILENO);
        close(saved);
    }
    rundir_release(&rd);
    return rc;
}

/* The one clock rule (rank 0's clock): 1 when the time so far, `more`
 * seconds and the winner's training again (at least `again`, a trial's own
 * should it win) fit in the budget. */
static int within_budget(const Search *s, double more, double again) {
    const Trial *w = choose_winner(s, NULL, NULL);
    double go = s->before + now_seconds() - s->clock0 + more + fmax(w ? w->seconds : 0, again) <= s->budget;
    dist_share_rank0(s->dist, &go, 1);
    return go != 0;
}

/* The clock's cut: 1 when a trial whose epochs took `pace` seconds each
 * would, with its `left` epochs of `epochs` to go, end past the budget
 * (trained again should it win). Such a trial could not be chosen: it stops here. */
static int past_the_clock(const Search *s, double pace, int left, int epochs) {
    return !within_budget(s, pace * left, pace * epochs);
}

static void trial_dir(const Search *s, int n, char *buf, size_t len) {
    snprintf(buf, len, "%s/trials/%03d", s->dir, n);
}

/* Runs trial t to its first rung, and on through each rung it is not
 * clearly worse at, to its end. Only a resumed autotune's first trial
 * (continue) goes on from a state saved in its directory. */
static int run_trial(Search *s, Trial *t, int resume, char *err, size_t errlen) {
    char dir[4096];
    trial_dir(s, t->n, dir, sizeof dir);
    Options o;
    if (trial_options(s, t->value, 0, &o) != 0) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    t->epochs = o.epochs;
    int rung[MAX_RUNGS], n_rungs = rungs(s, o.epochs, rung);
    double *loss = NULL, *acc = NULL;
    int done = resume ? read_history(dir, &loss, &acc) : 0, rc = done < 0 ? ERR_RUNTIME : EXIT_OK;
    /* a state saved inside its first epoch has no metrics.csv yet, and is continued all the same */
    resume = rank0_sees(s->dist, resume && rundir_holds(dir, "state.safetensors") && rundir_holds(dir, "run.json"));
    FitSummary sum = {0};
    double start = now_seconds();
    for (int k = 0; k <= n_rungs && rc == EXIT_OK; k++) {
        int target = k < n_rungs ? rung[k] : o.epochs;
        if (k == n_rungs || done < target) {
            o.stop_after = k < n_rungs ? target : 0;
            rc = trial_fit(s, &o, dir, resume, &sum, err, errlen);
            if (rc != EXIT_OK) break;
            resume = 1;
            double *l = realloc(loss, sizeof(double) * (size_t)(sum.n_epochs + 1));
            double *a = l ? realloc(acc, sizeof(double) * (size_t)(sum.n_epochs + 1)) : NULL;
            if (l) loss = l;
            if (a) acc = a;
            if (!l || !a) rc = fail(err, errlen, ERR_RUNTIME, "out of memory");
            for (int e = 0; rc == EXIT_OK && e < sum.n_epochs; e++) {
                loss[e] = six(sum.history[e].val_loss);
                acc[e] = six(sum.history[e].val_acc);
            }
            done = sum.n_epochs;
            t->val_n = sum.n_val;
            if (k == n_rungs || done < target) {   /* its end: all its epochs, or --patience's early stopping */
                t->val_loss = six(sum.final_val_loss);
                t->val_acc = six(sum.final_val_acc);
                break;
            }
        }
        int worse = clearly_worse(s, loss[target - 1], target);
        /* its pace: the mean of its epochs' own times (start-up aside; before a resume too) */
        double pace = 0;
        for (int e = 0; e < target && sum.n_epochs >= target; e++) pace += sum.history[e].seconds / target;
        /* trial 1 always ends: the search needs one trial that ran all its epochs */
        int cut = !worse && t->n > 1 && pace > 0 && past_the_clock(s, pace, o.epochs - target, o.epochs);
        if (worse || cut) {
            t->cut = cut;
            t->stopped_at = target;
            t->val_loss = loss[target - 1];
            t->val_acc = acc[target - 1];
            done = target;
            break;
        }
    }
    free(sum.history);
    free(acc);
    options_free(&o);
    t->curve = loss;
    t->epochs_run = done;
    t->seconds = now_seconds() - start;
    dist_share_rank0(s->dist, &t->seconds, 1);   /* MPI: rank 0's clock */
    return rc;
}

/* ------------------------------------------------------------ the search */

/* Seconds trial t may take to the first rung where it can be stopped (one
 * an earlier trial reached; else to its end): its epochs x layers x
 * width^2 at the slowest rate of the trials so far with its tokenizer (of
 * all trials when none has it: a tokenizer sets the tokens per epoch, and
 * characters ran at 2.2-2.4 times the rate of bpe pieces), and at least the
 * shortest of them (a trial's fixed cost). */
static double estimate(const Search *s, const Trial *t) {
    double rate = 0, rate_same = 0, least = INFINITY;
    for (int i = 0; i < s->n_trials; i++) {
        const Trial *p = &s->trials[i];
        double d = atof(p->value[AXIS_D_MODEL]), units = p->epochs_run * atof(p->value[AXIS_LAYERS]) * d * d;
        if (units > 0) {
            rate = fmax(rate, p->seconds / units);
            if (strcmp(p->value[AXIS_TOKENIZER], t->value[AXIS_TOKENIZER]) == 0)
                rate_same = fmax(rate_same, p->seconds / units);
        }
        least = fmin(least, p->seconds);
    }
    if (rate_same > 0) rate = rate_same;
    int rung[MAX_RUNGS], epochs = atoi(t->value[AXIS_EPOCHS]), n_rungs = rungs(s, epochs, rung), first = epochs;
    for (int k = 0; k < n_rungs && first == epochs; k++)
        for (int i = 0; i < s->n_trials; i++)
            if (s->trials[i].epochs_run >= rung[k]) first = rung[k];
    double d = atof(t->value[AXIS_D_MODEL]);
    return fmax(rate * first * atof(t->value[AXIS_LAYERS]) * d * d, isfinite(least) ? least : 0);
}

/* Whether trial t fits the clock: its estimate within the budget. */
static int fits_clock(const Search *s, const Trial *t) { return within_budget(s, estimate(s, t), 0); }

static void print_trial(const Search *s, const Trial *t, const char *failure) {
    printf("trial %3d ", t->n);
    for (int a = 0; a < N_AXES; a++)
        if (searched(s, a)) printf(" %s %s", AUTOTUNE_AXES[a].name, t->value[a]);
    if (failure) printf("  failed: %s\n", failure);
    else if (t->cut) printf("  | val loss %.4f  val acc %.4f  %.1f s  cut by the clock at epoch %d of %d (it would end "
                            "past the budget)\n", t->val_loss, t->val_acc, t->seconds, t->stopped_at, t->epochs);
    else if (t->stopped_at) printf("  | val loss %.4f  val acc %.4f  %.1f s  stopped early at epoch %d of %d\n",
                                   t->val_loss, t->val_acc, t->seconds, t->stopped_at, t->epochs);
    else printf("  | val loss %.4f  val acc %.4f  %.1f s\n", t->val_loss, t->val_acc, t->seconds);
    fflush(stdout);
}

/* An interrupt's message: where it stopped and the command that goes on. */
static int interrupted(const Search *s, const char *where, char *err, size_t errlen) {
    if (s->dist->rank != 0) {   /* MPI: rank 0 says it */
        err[0] = '\0';
        return EXIT_INTERRUPTED;
    }
    char first[512];
    snprintf(first, sizeof first, "%s", err[0] ? err : "interrupted");
    first[strcspn(first, "\n")] = '\0';
    char launcher[64] = "";
    if (s->dist->size > 1) snprintf(launcher, sizeof launcher, "mpirun -np %d ", s->dist->size);
    return fail(err, errlen, EXIT_INTERRUPTED, "%s (%s of the autotune of %s)\ncontinue with: %s./train --resume %s",
                first, where, s->dir, launcher, s->dir);
}

/* The interrupted trial n's values, from the run.json of its directory (its
 * draw depended on the clock then): 1, or 0 when it has none. */
static int interrupted_plan(const Search *s, int n, Trial *t) {
    char dir[4096];
    trial_dir(s, n, dir, sizeof dir);
    RunRecord info;
    char err[256];
    if (!rank0_sees(s->dist, rundir_holds(dir, "run.json")) || record_read(dir, 0, &info, err, sizeof err) != 0)
        return 0;
    memset(t, 0, sizeof *t);
    t->n = n;
    for (int a = 0; a < N_AXES; a++)
        options_format(&info.options, options_find(AUTOTUNE_AXES[a].name), t->value[a], AUTOTUNE_VALUE_LEN);
    record_free(&info);
    return 1;
}

static int search(Search *s, char *err, size_t errlen) {
    int failed_in_a_row = 0, continue_first = s->resumed;
    while (s->n_trials < MAX_TRIALS && failed_in_a_row < MAX_FAILED) {
        Trial *t = &s->trials[s->n_trials];
        int n = s->n_trials + 1;
        if (s->base.autotune_trials > 0 && n > s->base.autotune_trials) break;
        if (!(continue_first && n > 1 && interrupted_plan(s, n, t)) && !plan_trial(s, n, t)) break;
        int rc = run_trial(s, t, continue_first, err, errlen);
        continue_first = 0;
        char where[64];
        snprintf(where, sizeof where, "trial %d", t->n);
        if (rc == EXIT_INTERRUPTED) {
            free(t->curve);
            return interrupted(s, where, err, errlen);
        }
        if (rc != EXIT_OK && t->n == 1) {   /* the options as given fail: the user's to mend */
            free(t->curve);
            return rc;
        }
        t->failed = rc != EXIT_OK;
        failed_in_a_row = t->failed ? failed_in_a_row + 1 : 0;
        s->n_trials++;
        print_trial(s, t, t->failed ? err : NULL);
        if ((rc = write_trials(s, err, errlen)) != EXIT_OK) return rc;
        err[0] = '\0';
        int sig = dist_max_int(s->dist, signals_pending());
        if (sig) {
            set_error(err, errlen, "interrupted by %s after trial %d ended", signals_name(sig), t->n);
            return interrupted(s, "between trials", err, errlen);
        }
    }
    const Trial *w = choose_winner(s, NULL, NULL);   /* trial 1 ran all its epochs: nothing could stop it */
    if (!w) return fail(err, errlen, ERR_RUNTIME, "no trial ran all its epochs");
    s->winner = w->n;
    return write_trials(s, err, errlen);
}

/* The winner trained again as RUN itself, now with --test (read only
 * here), so RUN is an ordinary run of the winner's options. */
static int final_run(const Search *s, int resume, char *err, size_t errlen) {
    const Trial *w = &s->trials[s->winner - 1];
    if (rank0_sees(s->dist, resume && rundir_holds(s->dir, "report.txt") && rundir_holds(s->dir, "run.json"))) {
        printf("the autotune of %s has ended: trial %d won (val loss %.4f, val acc %.4f); its model is %s's\n", s->dir,
               w->n, w->val_loss, w->val_acc, s->dir);
        return EXIT_OK;
    }
    Options o;
    char value[N_AXES][AUTOTUNE_VALUE_LEN];
    memcpy(value, w->value, sizeof value);
    if (trial_options(s, value, 1, &o) != 0) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    resume = rank0_sees(s->dist, resume && rundir_holds(s->dir, "state.safetensors") &&
                                     rundir_holds(s->dir, "run.json"));
    const Trial *best;
    double se;
    choose_winner(s, &best, &se);
    if (best && best != w)
        printf("\nthe options as given are kept: trial %d %s on validation (val acc %.4f against %.4f), within "
               "one standard error of a validation accuracy (%.4f over %d examples)", best->n,
               best->val_acc > w->val_acc ? "led them" : "tied with them in accuracy", best->val_acc, w->val_acc, se,
               best->val_n);
    printf("\nwinner: trial %d of %d (val loss %.4f, val acc %.4f; the options as given: %.4f, %.4f); %s as the run "
           "%s%s\n\n", w->n, s->n_trials, w->val_loss, w->val_acc, s->trials[0].val_loss, s->trials[0].val_acc,
           resume ? "continuing its training" : "training it again", s->dir,
           o.test_path && *o.test_path ? ", now with the test file's report" : "");
    fflush(stdout);
    int rc = fit_as_command(s, &o, s->dir, resume, NULL, err, errlen);
    options_free(&o);
    return rc == EXIT_INTERRUPTED ? interrupted(s, "the winner's training", err, errlen) : rc;
}

static void search_free(Search *s) {
    for (int i = 0; i < s->n_trials; i++) free(s->trials[i].curve);
    free(s->trials);
    free(s->data_path);
    options_free(&s->base);
}

static void print_start(const Search *s) {
    printf("autotune %s: %s, up to %s (%.0f s)", s->dir, s->data_path, s->base.autotune, s->budget);
    if (s->base.autotune_trials > 0) printf(" and %d trials", s->base.autotune_trials);
    printf(", judged on the validation split%s\nsearching:", s->base.test_path && *s->base.test_path
           ? " (the test file is read only at the end, for the winner's report)" : "");
    for (int a = 0; a < N_AXES; a++)
        if (searched(s, a)) printf(" %s", AUTOTUNE_AXES[a].name);
    printf("\nfixed:");
    int any = 0;
    for (int a = 0; a < N_AXES; a++) {
        if (searched(s, a)) continue;
        char value[AUTOTUNE_VALUE_LEN];
        options_format(&s->base, options_find(AUTOTUNE_AXES[a].name), value, sizeof value);
        printf(" %s %s", AUTOTUNE_AXES[a].name, value);
        any = 1;
    }
    printf("%s\neach trial an ordinary run in %s/trials/NNN (its output in its train.log); trial 1 is the options "
           "as given\n", any ? "" : " none", s->dir);
    fflush(stdout);
}

static int search_and_final(Search *s, char *err, size_t errlen) {
    if (!(s->trials = calloc(MAX_TRIALS, sizeof *s->trials))) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    if (options_duration(s->base.autotune, &s->budget) != 0)
        return fail(err, errlen, ERR_INPUT, "--autotune: '%s' is not a duration", s->base.autotune);
    int rc = s->resumed ? read_trials(s, err, errlen) : EXIT_OK;
    if (rc != EXIT_OK) return rc;
    int final_resumes = s->resumed && s->winner > 0;
    s->clock0 = now_seconds();
    if (!s->base.quiet || s->resumed) print_start(s);
    if (s->resumed) {
        printf("resuming: %d trial%s recorded%s\n", s->n_trials, s->n_trials == 1 ? "" : "s",
               s->winner ? ", the winner chosen" : "");
        for (int i = 0; i < s->n_trials; i++) print_trial(s, &s->trials[i], s->trials[i].failed ? "(recorded)" : NULL);
    }
    if (!s->winner && (rc = search(s, err, errlen)) != EXIT_OK) return rc;
    return final_run(s, final_resumes, err, errlen);
}

/* ------------------------------------------------------------ entry points */

int autotune_check_options(const Options *o, char *err, size_t errlen) {
    int on = o->autotune && *o->autotune;
    if (!on && options_given(o, "autotune-trials"))
        return fail(err, errlen, ERR_INPUT, "--autotune-trials caps --autotune's trials; give --autotune DURATION too");
    if (!on) return EXIT_OK;
    if (options_pretrain(o))
        return fail(err, errlen, ERR_INPUT, "--autotune searches a classifier's options on its validation split; "
                    "pretraining has no labels to judge by: drop --autotune");
    if (o->stop_after > 0)
        return fail(err, errlen, ERR_INPUT, "--stop-after pauses one run; an autotune is paused with Ctrl-C (its "
                    "trial's state saved) and continued with --resume RUN: drop --stop-after");
    if (!(o->val_path && *o->val_path) && o->val_split <= 0)
        return fail(err, errlen, ERR_INPUT, "--autotune judges on the validation split, and --val-split 0 leaves "
                    "none: give --val FILE or a --val-split above 0");
    return EXIT_OK;
}

int autotune_found(const char *dir) { return rundir_holds(dir, AUTOTUNE_PLAN); }

int autotune_replace(const DistContext *dist, const char *dir, int overwrite, char *err, size_t errlen) {
    if (!rank0_sees(dist, rundir_holds(dir, AUTOTUNE_PLAN) || rundir_holds(dir, AUTOTUNE_TRIALS))) return EXIT_OK;
    if (!overwrite)
        return fail(err, errlen, ERR_INPUT, "%s holds an autotune (%s): --resume %s continues it, --overwrite "
                    "replaces it, --out DIR writes elsewhere", dir, AUTOTUNE_PLAN, dir);
    static const char *const RECORD[] = {AUTOTUNE_PLAN, AUTOTUNE_TRIALS};
    for (int i = 0; i < 2 && dist->rank == 0; i++) {
        char path[4096];
        rundir_path(path, sizeof path, dir, RECORD[i]);
        if (unlink(path) != 0 && access(path, F_OK) == 0)
            return fail(err, errlen, ERR_RUNTIME, "%s: cannot remove the earlier autotune's record", path);
    }
    return EXIT_OK;
}

/* A path made absolute (trials and the final run read it from other directories' records). */
static int absolute(char **path) {
    if (!*path || !**path) return 0;
    char *full = realpath(*path, NULL);
    if (!full) return 0;   /* missing: the reading says so, naming it */
    free(*path);
    *path = full;
    return 0;
}

int autotune_run(const DistContext *dist, const Options *o, const char *data_path, const char *dir, char *err,
                 size_t errlen) {
    int rc = autotune_check_options(o, err, errlen);
    if (rc != EXIT_OK) return rc;
    if (!record_rereadable(data_path))
        return fail(err, errlen, ERR_INPUT, "--autotune reads %s once for every trial, and it is a pipe, FIFO or "
                    "device, which can be read once: save it to a file and train on that", data_path);
    if ((rc = autotune_replace(dist, dir, o->overwrite, err, errlen)) != EXIT_OK) return rc;
    Search s;
    memset(&s, 0, sizeof s);
    s.dist = dist;
    s.dir = dir;
    if (options_copy(&s.base, o) != 0 || !(s.data_path = realpath(data_path, NULL))) {
        rc = s.data_path ? fail(err, errlen, ERR_RUNTIME, "out of memory")
                         : fail(err, errlen, ERR_INPUT, "%s: cannot open the data file", data_path);
        search_free(&s);
        return rc;
    }
    /* --precision auto chosen once, here, and kept in the plan: a resumed search goes on in it on any CPU */
    if (rc == EXIT_OK && strcmp(s.base.precision, "auto") == 0)
        rc = options_set(&s.base, options_find("precision"), precision_name(options_precision(o)), err, errlen);
    if (rc != EXIT_OK) {
        search_free(&s);
        return rc;
    }
    absolute((char **)&s.base.val_path);
    absolute((char **)&s.base.test_path);
    absolute((char **)&s.base.init_dir);
    absolute((char **)&s.base.probe_file);
    if ((rc = make_dirs(dir, err, errlen) == 0 ? EXIT_OK : ERR_RUNTIME) == EXIT_OK) rc = write_plan(&s, err, errlen);
    if (rc == EXIT_OK) rc = search_and_final(&s, err, errlen);
    search_free(&s);
    return rc;
}

int autotune_resume(const DistContext *dist, const Options *given, char *err, size_t errlen) {
    if (given->n_args > 0)
        return fail(err, errlen, EXIT_USAGE, "--resume takes its data from the run's record; drop '%s'",
                    given->args[0]);
    for (int i = 0; i < OPTION_COUNT; i++) {
        const char *name = OPTION_TABLE[i].name;
        if (options_given(given, name) && strcmp(name, "resume") && strcmp(name, "threads") && strcmp(name, "quiet"))
            return fail(err, errlen, EXIT_USAGE, "--%s cannot go with --resume of an autotune, which goes on as it "
                        "started; only --threads and --quiet can (drop --%s)", name, name);
    }
    const char *dir = given->resume_dir;
    RunDirPolicy policy = {RUNDIR_RESUME, 1, NULL, stderr};
    RunDir claimed;
    char why[1024] = "";
    int rc = rundir_claim(&claimed, dist, dir, &policy, why, sizeof why);
    if (rc != EXIT_OK) {
        if (why[0]) set_error(err, errlen, "cannot resume: %s", why);
        return rc;
    }
    Search s;
    memset(&s, 0, sizeof s);
    s.dist = dist;
    s.dir = dir;
    s.resumed = 1;
    options_defaults(&s.base);
    rc = autotune_read_plan(s.dir, &s.base, &s.data_path, err, errlen);
    if (rc == EXIT_OK && options_given(given, "quiet")) s.base.quiet = given->quiet;
    /* the data must be what the trials so far were trained on */
    char first[4200];
    RunRecord info;
    trial_dir(&s, 1, first, sizeof first);
    if (rc == EXIT_OK && rundir_holds(first, "run.json") && record_read(first, 1, &info, why, sizeof why) == 0) {
        rc = record_check_data(&info, why, sizeof why);
        if (rc != EXIT_OK) set_error(err, errlen, "cannot resume %s: %s", dir, why);
        record_free(&info);
    }
    if (rc == EXIT_OK) rc = search_and_final(&s, err, errlen);
    search_free(&s);
    rundir_release(&claimed);
    return rc;
}
