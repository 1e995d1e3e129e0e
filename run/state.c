/* state.c: the run state file (see state.h). */
#include "run/state.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/safetensors.h"
#include "run/rundir.h"

#define N_COUNTERS 10

/* The metadata keys of the counters, in TrainProgress order. */
static const char *const COUNTER_KEYS[N_COUNTERS] = {"epochs_done", "step_in_epoch", "loss_sum", "correct", "count",
                                                     "tokens", "epoch_seconds", "best_val_loss", "best_epoch",
                                                     "bad_epochs"};

static void counters_get(const TrainProgress *p, double v[N_COUNTERS]) {
    const double values[N_COUNTERS] = {p->epochs_done, p->step_in_epoch, p->loss_sum, p->correct, p->count,
                                       p->tokens, p->seconds, p->best_val_loss, p->best_epoch, p->bad_epochs};
    memcpy(v, values, sizeof values);
}

static void counters_set(TrainProgress *p, const double v[N_COUNTERS]) {
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
}

/* One line per epoch, every number round-tripping exactly (%.17g). */
static char *history_text(const TrainProgress *p) {
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
 * capacity records (the epochs still to run). -1 when malformed. */
static int history_parse(TrainProgress *p, const char *text, int capacity) {
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

/* The count of averaged epochs: a key of its own, absent from states
 * written before --swa existed (read as 0). */
#define AVERAGED_KEY "averaged"
/* Whether the checkpoint holds the best epoch's weights: absent from
 * states written before it (read as -1, not known). */
#define BEST_KEPT_KEY "best_kept"
/* The --epochs in force at the save: absent from older states (read as 0). */
#define EPOCHS_KEY "epochs"
/* The run's id (run.json's): absent from states of runs recorded without one. */
#define RUN_ID_KEY "run_id"

int state_save(const Model *m, const float *average, const TrainProgress *p, const char *dir, char *err,
               size_t errlen) {
    double v[N_COUNTERS];
    counters_get(p, v);
    char values[N_COUNTERS][40], averaged[24], epochs[24];
    const char *keys[N_COUNTERS + 5], *vals[N_COUNTERS + 5];
    for (int i = 0; i < N_COUNTERS; i++) {
        snprintf(values[i], sizeof values[i], "%.17g", v[i]);
        keys[i] = COUNTER_KEYS[i];
        vals[i] = values[i];
    }
    char *history = history_text(p);
    if (!history) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    keys[N_COUNTERS] = "history";
    vals[N_COUNTERS] = history;
    snprintf(averaged, sizeof averaged, "%d", p->n_averaged);
    keys[N_COUNTERS + 1] = AVERAGED_KEY;
    vals[N_COUNTERS + 1] = averaged;
    keys[N_COUNTERS + 2] = BEST_KEPT_KEY;
    vals[N_COUNTERS + 2] = p->best_kept > 0 ? "1" : "0";
    snprintf(epochs, sizeof epochs, "%d", p->epochs);
    keys[N_COUNTERS + 3] = EPOCHS_KEY;
    vals[N_COUNTERS + 3] = epochs;
    keys[N_COUNTERS + 4] = RUN_ID_KEY;
    vals[N_COUNTERS + 4] = p->run_id;
    char path[4096];
    rundir_path(path, sizeof path, dir, "state.safetensors");
    int n_keys = N_COUNTERS + 4 + (p->run_id[0] != 0);   /* a run recorded before ids saves none */
    int rc = model_save_state(m, p->n_averaged > 0 ? average : NULL, path, keys, vals, n_keys, err, errlen);
    free(history);
    return rc == 0 ? EXIT_OK : ERR_RUNTIME;
}

static int meta_number(const StFile *f, const char *key, double *out) {
    const char *s = st_meta(f, key);
    char *end;
    if (!s) return -1;
    *out = strtod(s, &end);
    return end == s || *end ? -1 : 0;
}

/* The counters of an opened state file, checked. */
static int read_counters(const StFile *f, const char *path, TrainProgress *p, int capacity, char *err,
                         size_t errlen) {
    double v[N_COUNTERS];
    for (int i = 0; i < N_COUNTERS; i++)
        if (meta_number(f, COUNTER_KEYS[i], &v[i]) != 0)
            return fail(err, errlen, ERR_INPUT, "%s: metadata '%s' is missing or not a number", path, COUNTER_KEYS[i]);
    const int counts[] = {0, 1, 8, 9};   /* epochs_done, step_in_epoch, best_epoch, bad_epochs */
    for (int i = 0; i < 4; i++) {
        double x = v[counts[i]];
        if (!(x >= 0 && x <= 1e9 && x == floor(x)))
            return fail(err, errlen, ERR_INPUT, "%s: metadata '%s' is not a count: %g", path, COUNTER_KEYS[counts[i]],
                        x);
    }
    const char *history = st_meta(f, "history");
    if (!history || history_parse(p, history, capacity) != 0)
        return fail(err, errlen, ERR_INPUT, "%s: metadata 'history' is missing or malformed", path);
    if ((int)v[0] != p->n_history)
        return fail(err, errlen, ERR_INPUT, "%s: %d epochs done but %d recorded in 'history'", path, (int)v[0],
                    p->n_history);
    if (v[8] > v[0] || v[9] > v[0])
        return fail(err, errlen, ERR_INPUT, "%s: metadata 'best_epoch' %g or 'bad_epochs' %g exceeds the %g epochs done",
                    path, v[8], v[9], v[0]);
    counters_set(p, v);
    double averaged = 0;
    if (st_meta(f, AVERAGED_KEY) &&
        (meta_number(f, AVERAGED_KEY, &averaged) != 0 || !(averaged >= 0 && averaged <= v[0] && averaged == floor(averaged))))
        return fail(err, errlen, ERR_INPUT, "%s: metadata '%s' is not a count of at most the %d epochs done", path,
                    AVERAGED_KEY, p->epochs_done);
    p->n_averaged = (int)averaged;
    const char *kept = st_meta(f, BEST_KEPT_KEY);
    if (kept && strcmp(kept, "0") != 0 && strcmp(kept, "1") != 0)
        return fail(err, errlen, ERR_INPUT, "%s: metadata '%s' is '%s', not 0 or 1", path, BEST_KEPT_KEY, kept);
    p->best_kept = kept ? kept[0] - '0' : -1;
    const char *id = st_meta(f, RUN_ID_KEY);
    if (id && (!*id || strlen(id) >= sizeof p->run_id))
        return fail(err, errlen, ERR_INPUT, "%s: metadata '%s' is not a run id", path, RUN_ID_KEY);
    snprintf(p->run_id, sizeof p->run_id, "%s", id ? id : "");
    return EXIT_OK;
}

int state_load(Model *m, float *average, TrainProgress *p, const char *dir, int capacity, char *err,
               size_t errlen) {
    char path[4096];
    rundir_path(path, sizeof path, dir, "state.safetensors");
    StFile f;
    if (st_load(path, &f, err, errlen) != 0) return ERR_INPUT;
    int rc = read_counters(&f, path, p, capacity, err, errlen);
    if (rc == EXIT_OK && p->n_averaged > 0 && !average)
        rc = fail(err, errlen, ERR_INPUT, "%s: holds a weight average (metadata 'averaged': %d), but this run keeps "
                  "none (--swa 0 or pretraining)", path, p->n_averaged);
    if (rc == EXIT_OK && model_load_state_from(m, p->n_averaged > 0 ? average : NULL, &f, path, err, errlen) != 0)
        rc = ERR_INPUT;
    st_free(&f);
    return rc;
}

int state_restart_best(TrainProgress *p) {
    int at_end = p->step_in_epoch == 0 && p->epochs_done > 0;
    p->best_epoch = at_end ? p->epochs_done : 0;
    p->best_val_loss = at_end ? p->history[p->epochs_done - 1].val_loss : 0.0;
    p->bad_epochs = 0;
    return at_end;
}

int state_saved_epochs(const char *dir) {
    char path[4096], err[256];
    rundir_path(path, sizeof path, dir, "state.safetensors");
    StFile f;
    if (st_load(path, &f, err, sizeof err) != 0) return 0;
    double epochs = 0;
    if (st_meta(&f, EPOCHS_KEY) && (meta_number(&f, EPOCHS_KEY, &epochs) != 0 || !(epochs >= 1 && epochs <= 1e9)))
        epochs = 0;
    st_free(&f);
    return (int)epochs;
}

int state_saved_history(const char *dir, EpochRecord **history) {
    char path[4096], err[256];
    rundir_path(path, sizeof path, dir, "state.safetensors");
    *history = NULL;
    StFile f;
    if (st_load(path, &f, err, sizeof err) != 0) return -1;
    TrainProgress p = {0};
    const char *text = st_meta(&f, "history");
    int n = text && history_parse(&p, text, 0) == 0 ? p.n_history : -1;
    st_free(&f);
    if (n < 0) free(p.history);
    else *history = p.history;
    return n;
}
