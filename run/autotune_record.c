/* autotune_record.c: the search space and an autotune's files (see
 * autotune_record.h). */
#include "run/autotune_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/errors.h"
#include "base/fileio.h"
#include "formats/json.h"
#include "run/rundir.h"

const Axis AUTOTUNE_AXES[N_AXES] = {
    {"tokenizer", 4, {"bpe", "word", "char", "ngram"}},
    {"vocab-size", 5, {"1000", "2000", "4000", "8000", "32000"}},
    {"d-model", 4, {"32", "64", "96", "128"}},
    {"layers", 4, {"1", "2", "3", "4"}},
    {"lr", 5, {"0.001", "0.002", "0.003", "0.005", "0.008"}},
    {"weight-decay", 5, {"0", "0.01", "0.05", "0.1", "0.3"}},
    {"dropout", 5, {"0", "0.1", "0.2", "0.3", "0.5"}},
    {"epochs", 4, {"1/3", "1/2", "1/1", "3/2"}},
    {"max-len", 4, {"auto", "32", "64", "128"}},
};

/* b (then freed) written atomically to dir/name; rc: how building it went. */
static int write_whole(const char *dir, const char *name, JsonBuf *b, int rc, char *err, size_t errlen) {
    char path[4096];
    rundir_path(path, sizeof path, dir, name);
    if (rc == 0 && atomic_write(path, b->data, b->len, err, errlen) != 0) rc = -1;
    else if (rc != 0) set_error(err, errlen, "out of memory");
    jsonbuf_free(b);
    return rc == 0 ? EXIT_OK : ERR_RUNTIME;
}

int autotune_write_plan(const char *dir, const char *data_path, const Options *base, char *err, size_t errlen) {
    JsonBuf b = {0};
    int rc = jsonbuf_puts(&b, "{\n  \"data\": ") | jsonbuf_string(&b, data_path) | jsonbuf_puts(&b, ",\n  \"given\": [");
    for (int i = 0, first = 1; i < OPTION_COUNT; i++) {
        if (!options_given(base, OPTION_TABLE[i].name)) continue;
        rc |= jsonbuf_puts(&b, first ? "" : ", ") | jsonbuf_string(&b, OPTION_TABLE[i].name);
        first = 0;
    }
    rc |= jsonbuf_puts(&b, "],\n  \"options\": {");
    for (int i = 0; i < OPTION_COUNT; i++) {
        char value[4096];
        options_format(base, &OPTION_TABLE[i], value, sizeof value);
        rc |= jsonbuf_puts(&b, i ? ",\n    " : "\n    ") | jsonbuf_string(&b, OPTION_TABLE[i].name) |
              jsonbuf_puts(&b, ": ") | jsonbuf_string(&b, value);
    }
    rc |= jsonbuf_puts(&b, "\n  }\n}\n");
    return write_whole(dir, AUTOTUNE_PLAN, &b, rc, err, errlen);
}

/* Options a resume takes from its own command line, not from the plan. */
static int taken_on_resume(const char *name) {
    static const char *const NAMES[] = {"out", "resume", "overwrite", "threads", "quiet", "stop-after"};
    for (size_t i = 0; i < sizeof NAMES / sizeof *NAMES; i++)
        if (strcmp(name, NAMES[i]) == 0) return 1;
    return 0;
}

int autotune_read_plan(const char *dir, Options *base, char **data_path, char *err, size_t errlen) {
    char path[4096];
    rundir_path(path, sizeof path, dir, AUTOTUNE_PLAN);
    size_t len;
    char *text = (char *)read_file(path, &len, err, errlen);
    if (!text) return ERR_INPUT;
    JsonValue *root = json_parse(text, len, err, errlen);
    free(text);
    const JsonValue *data = root ? json_get(root, "data") : NULL, *given = root ? json_get(root, "given") : NULL;
    const JsonValue *opts = root ? json_get(root, "options") : NULL;
    int rc = root && data && data->type == JSON_STRING && given && given->type == JSON_ARRAY && opts &&
             opts->type == JSON_OBJECT ? EXIT_OK : ERR_INPUT;
    if (rc == EXIT_OK && !(*data_path = strdup(data->string))) rc = ERR_RUNTIME;
    for (int i = 0; rc == EXIT_OK && i < opts->count; i++) {
        const OptionSpec *spec = options_find(opts->keys[i]);
        const JsonValue *v = &opts->items[i];
        if (!spec || v->type != JSON_STRING) rc = ERR_INPUT;
        else if (taken_on_resume(spec->name) || (spec->kind == OPT_STRING && !*v->string)) continue;
        else if (strcmp(spec->name, "probe") != 0) rc = options_set(base, spec, v->string, err, errlen);
        else   /* --probe's texts, one a line, each set as given */
            for (char *line = v->string, *next; rc == EXIT_OK && line; line = next) {
                next = strchr(line, '\n');
                if (next) *next++ = '\0';
                rc = options_set(base, spec, line, err, errlen);
            }
    }
    for (int i = 0; rc == EXIT_OK && i < given->count; i++) {
        const OptionSpec *spec = given->items[i].type == JSON_STRING ? options_find(given->items[i].string) : NULL;
        if (spec) base->given |= 1ull << (spec - OPTION_TABLE);
    }
    json_free(root);
    if (rc == ERR_INPUT) return fail(err, errlen, ERR_INPUT, "%s is not an autotune's plan as this program writes it",
                                     path);
    return rc;
}

static int json_number(const JsonValue *o, const char *key, double *out) {
    const JsonValue *v = json_get(o, key);
    if (!v || v->type != JSON_NUMBER) return -1;
    *out = v->number;
    return 0;
}

static int trial_to_json(JsonBuf *b, const Trial *t) {
    int rc = jsonbuf_printf(b, "{\"trial\": %d, \"options\": {", t->n);
    for (int a = 0; a < N_AXES; a++)
        rc |= jsonbuf_puts(b, a ? ", " : "") | jsonbuf_string(b, AUTOTUNE_AXES[a].name) | jsonbuf_puts(b, ": ") |
              jsonbuf_string(b, t->value[a]);
    rc |= jsonbuf_printf(b, "}, \"epochs\": %d, \"epochs_run\": %d, \"stopped_early\": %s, \"failed\": %s, "
                         "\"val_loss\": %.6f, \"val_acc\": %.6f, \"val_n\": %d, \"val_losses\": [", t->epochs,
                         t->epochs_run, t->stopped_at ? "true" : "false", t->failed ? "true" : "false", t->val_loss,
                         t->val_acc, t->val_n);
    for (int e = 0; e < t->epochs_run; e++) rc |= jsonbuf_printf(b, "%s%.6f", e ? ", " : "", t->curve[e]);
    return rc | jsonbuf_printf(b, "], \"seconds\": %.2f}\n", t->seconds);
}

int autotune_write_trials(const char *dir, const Trial *trials, int n, int winner, int best, double standard_error,
                          char *err, size_t errlen) {
    JsonBuf b = {0};
    int rc = jsonbuf_puts(&b, "");
    for (int i = 0; i < n; i++) rc |= trial_to_json(&b, &trials[i]);
    const Trial *w = winner > 0 ? &trials[winner - 1] : NULL;
    if (w)
        rc |= jsonbuf_printf(&b, "{\"winner\": %d, \"trials\": %d, \"val_loss\": %.6f, \"val_acc\": %.6f, "
                             "\"best\": %d, \"standard_error\": %.6f}\n", w->n, n, w->val_loss, w->val_acc, best,
                             standard_error);
    return write_whole(dir, AUTOTUNE_TRIALS, &b, rc, err, errlen);
}

static int trial_from_json(const JsonValue *o, Trial *t) {
    memset(t, 0, sizeof *t);
    double n, epochs, run, seconds;
    const JsonValue *opts = json_get(o, "options"), *curve = json_get(o, "val_losses");
    const JsonValue *stopped = json_get(o, "stopped_early"), *failed = json_get(o, "failed");
    if (json_number(o, "trial", &n) || json_number(o, "epochs", &epochs) || json_number(o, "epochs_run", &run) ||
        json_number(o, "val_loss", &t->val_loss) || json_number(o, "val_acc", &t->val_acc) ||
        json_number(o, "seconds", &seconds) || !opts || opts->type != JSON_OBJECT || !curve ||
        curve->type != JSON_ARRAY || curve->count != (int)run || !stopped || stopped->type != JSON_BOOL || !failed ||
        failed->type != JSON_BOOL)
        return -1;
    t->n = (int)n;
    t->epochs = (int)epochs;
    t->epochs_run = (int)run;
    t->stopped_at = stopped->boolean ? t->epochs_run : 0;
    t->failed = failed->boolean;
    t->seconds = seconds;
    double val_n;   /* absent from the records of versions before it: 0 */
    t->val_n = json_number(o, "val_n", &val_n) == 0 && val_n >= 0 && val_n <= 2e9 ? (int)val_n : 0;
    for (int a = 0; a < N_AXES; a++) {
        const JsonValue *v = json_get(opts, AUTOTUNE_AXES[a].name);
        if (!v || v->type != JSON_STRING) return -1;
        snprintf(t->value[a], AUTOTUNE_VALUE_LEN, "%s", v->string);
    }
    if (run > 0 && !(t->curve = malloc(sizeof(double) * (size_t)run))) return -1;
    for (int e = 0; e < t->epochs_run; e++) {
        if (curve->items[e].type != JSON_NUMBER) return -1;
        t->curve[e] = curve->items[e].number;
    }
    return 0;
}

int autotune_read_trials(const char *dir, Trial *trials, int max, int *n, int *winner, char *err, size_t errlen) {
    *n = *winner = 0;
    char path[4096];
    rundir_path(path, sizeof path, dir, AUTOTUNE_TRIALS);
    if (access(path, F_OK) != 0) return EXIT_OK;
    size_t len;
    char *text = (char *)read_file(path, &len, err, errlen);
    if (!text) return ERR_INPUT;
    int rc = EXIT_OK, line_no = 0;
    for (char *line = text, *next; rc == EXIT_OK && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        line_no++;
        char why[256];
        JsonValue *o = json_parse(line, strlen(line), why, sizeof why);
        double chosen;
        if (o && json_get(o, "winner") && json_number(o, "winner", &chosen) == 0) {
            *winner = (int)chosen;
        } else if (o && *n < max) {
            Trial *t = &trials[*n];
            if (trial_from_json(o, t) != 0 || t->n != *n + 1) rc = ERR_INPUT;
            else (*n)++;
        } else {
            rc = ERR_INPUT;
        }
        json_free(o);
    }
    free(text);
    if (rc == EXIT_OK && (*winner < 0 || *winner > *n)) rc = ERR_INPUT;
    if (rc != EXIT_OK)
        return fail(err, errlen, ERR_INPUT, "%s:%d: not a trial's line as this program writes it; the autotune "
                    "cannot go on from it (start it again with --overwrite)", path, line_no);
    return EXIT_OK;
}

