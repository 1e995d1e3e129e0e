/* film.c: `./train film RUN`: the probes a run recorded epoch by epoch
 * (run/probes.h) as a table per probe, the moments that matter, one
 * self-contained page with a slider over the epochs (cli/film_page.h) and a
 * PNG strip of one head's attention at each epoch. Reads only the lines of
 * probes.jsonl that are whole, so it works while the run still trains.
 *
 * The moments, per probe, at an epoch e >= 1:
 *   - the predicted label differs from epoch e - 1's;
 *   - a head settles: from e to the last epoch its focus (the key with the
 *     largest attention averaged over the queries) is one key holding at
 *     least FOCUS_SHARE of that average weight, and at e - 1 it was not
 *     ("every query" when that key is every query's largest weight);
 *   - the most salient token (largest |gradient x input|) becomes the one
 *     it is at the last epoch and stays it from then on.
 * Only changes that last to the end are named, so a head that flickers
 * around the threshold is not a moment every time it crosses.
 * Each moment's line ends with the validation accuracy from e - 1 to e. */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "cli/commands.h"
#include "cli/film_page.h"
#include "cli/trace.h"
#include "formats/json.h"
#include "report/metrics_csv.h"
#include "report/plot.h"
#include "run/probes.h"
#include "run/rundir.h"

#define FOCUS_SHARE 0.5     /* a head "moves its weight" to a key holding at least this much of it */
#define TABLE_HEADS 8       /* more heads than this: the table shows the last layer's */
#define TOKEN_CHARS 8       /* token labels in the table are cut to this many characters */
#define MOMENT_LINES 6      /* moments printed per probe, at most */
#define FILM_PAGE_START "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>film of"

/* One probe at one recorded epoch, summarised. */
typedef struct {
    int predicted;
    double p_true;        /* NaN without a label */
    int *focus;           /* (L*H) the key with the largest mean weight over the queries */
    float *share;         /* (L*H) that mean weight */
    unsigned char *every; /* (L*H) 1: it is every query's largest weight */
    int salient;          /* the position of the largest |saliency| */
    float salient_value;
} Frame;

typedef struct {
    const char *dir;
    char *text;           /* probes.jsonl */
    JsonValue *head;      /* its header */
    char **lines;         /* (n_epochs) each epoch's line, NUL-ended in text */
    int *epochs;          /* (n_epochs) */
    int n_epochs, n_probes, L, H, C;
    const JsonValue *probes, *labels;   /* in head */
    Frame *frames;        /* (n_epochs, n_probes) */
    float *strip;         /* (n_epochs, L, H, T0, T0): probe 1's attention, for the PNG */
    int T0;
    EpochRecord *history; /* metrics.csv, when there is one */
    int n_history, has_val;
} Film;

static void film_free(Film *f) {
    for (int i = 0; f->frames && i < f->n_epochs * f->n_probes; i++) {
        free(f->frames[i].focus);
        free(f->frames[i].share);
        free(f->frames[i].every);
    }
    free(f->frames);
    free(f->strip);
    free(f->lines);
    free(f->epochs);
    free(f->history);
    json_free(f->head);
    free(f->text);
}

static int tokens_of(const Film *f, int p) { return json_get(&f->probes->items[p], "tokens")->count; }
static const char *token(const Film *f, int p, int t) {
    return json_get(&f->probes->items[p], "tokens")->items[t].string;
}
static int true_label(const Film *f, int p) {
    const JsonValue *l = json_get(&f->probes->items[p], "label");
    for (int c = 0; l && l->type == JSON_STRING && c < f->C; c++)
        if (strcmp(f->labels->items[c].string, l->string) == 0) return c;
    return -1;
}
static Frame *frame(const Film *f, int e, int p) { return &f->frames[(size_t)e * f->n_probes + p]; }

/* An array of n numbers, or NULL. */
static const JsonValue *numbers(const JsonValue *v, int n) {
    if (!v || v->type != JSON_ARRAY || v->count != n) return NULL;
    for (int i = 0; i < n; i++) if (v->items[i].type != JSON_NUMBER) return NULL;
    return v;
}

/* One probe's record at epoch e into its frame (and the strip for probe 0). 0, or -1 when malformed. */
static int summarise(Film *f, int e, int p, const JsonValue *r) {
    Frame *fr = frame(f, e, p);
    int T = tokens_of(f, p), LH = f->L * f->H;
    const JsonValue *pred = json_get(r, "predicted"), *probs = numbers(json_get(r, "probs"), f->C),
                    *sal = numbers(json_get(r, "saliency"), T), *attn = json_get(r, "attention");
    if (!pred || pred->type != JSON_STRING || !probs || !sal || !attn || attn->type != JSON_ARRAY ||
        attn->count != f->L)
        return -1;
    fr->predicted = -1;
    for (int c = 0; c < f->C; c++) if (strcmp(f->labels->items[c].string, pred->string) == 0) fr->predicted = c;
    int label = true_label(f, p);
    fr->p_true = label >= 0 ? probs->items[label].number : NAN;
    fr->salient = 0;
    for (int t = 1; t < T; t++)
        if (fabs(sal->items[t].number) > fabs(sal->items[fr->salient].number)) fr->salient = t;
    fr->salient_value = (float)sal->items[fr->salient].number;
    fr->focus = calloc((size_t)LH, sizeof(int));
    fr->share = calloc((size_t)LH, sizeof(float));
    fr->every = calloc((size_t)LH, 1);
    double *mean = calloc((size_t)T, sizeof(double));
    int ok = fr->focus && fr->share && fr->every && mean && fr->predicted >= 0;
    for (int l = 0; ok && l < f->L; l++) {
        const JsonValue *layer = &attn->items[l];
        ok = layer->type == JSON_ARRAY && layer->count == f->H;
        for (int h = 0; ok && h < f->H; h++) {
            const JsonValue *rows = &layer->items[h];
            ok = rows->type == JSON_ARRAY && rows->count == T;
            memset(mean, 0, sizeof(double) * T);
            for (int q = 0; ok && q < T; q++) {
                const JsonValue *row = numbers(&rows->items[q], T);
                ok = row != NULL;
                for (int k = 0; ok && k < T; k++) {
                    mean[k] += row->items[k].number / T;
                    if (p == 0) f->strip[(((size_t)e * f->L + l) * f->H + h) * T * T + (size_t)q * T + k] =
                        (float)row->items[k].number;
                }
            }
            int top = 0, hl = l * f->H + h;
            for (int k = 1; ok && k < T; k++) if (mean[k] > mean[top]) top = k;
            fr->focus[hl] = top;
            fr->share[hl] = (float)mean[top];
            fr->every[hl] = 1;
            for (int q = 0; ok && q < T; q++)
                for (int k = 0; k < T; k++)
                    if (rows->items[q].items[k].number > rows->items[q].items[top].number) fr->every[hl] = 0;
        }
    }
    free(mean);
    return ok ? 0 : -1;
}

/* probes.jsonl's whole lines: the header, then the epochs. */
static int film_load(Film *f, const char *dir, char *err, size_t errlen) {
    char path[4200];
    rundir_path(path, sizeof path, dir, PROBES_FILE);
    size_t len;
    f->dir = dir;
    if (!rundir_holds(dir, PROBES_FILE))
        return fail(err, errlen, ERR_INPUT, "%s: no probe record: the run was trained with --no-probes, before "
                    "probes existed, or is a pretraining run; train with --probe TEXT to record one", path);
    if (!(f->text = (char *)read_file(path, &len, err, errlen))) return ERR_RUNTIME;
    char *end = f->text + len;
    while (end > f->text && end[-1] != '\n') end--;   /* a line still being written is not read */
    *end = '\0';
    char *nl = strchr(f->text, '\n');
    if (nl) *nl = '\0';
    f->head = nl ? json_parse(f->text, strlen(f->text), err, errlen) : NULL;
    const JsonValue *format = f->head ? json_get(f->head, "format") : NULL;
    if (!format || format->type != JSON_STRING || strcmp(format->string, PROBES_FORMAT) != 0)
        return fail(err, errlen, ERR_INPUT, "%s: line 1 is not the header of a probe record", path);
    f->probes = json_get(f->head, "probes");
    f->labels = json_get(f->head, "labels");
    const JsonValue *L = json_get(f->head, "layers"), *H = json_get(f->head, "heads");
    if (!f->probes || f->probes->type != JSON_ARRAY || f->probes->count < 1 || !f->labels ||
        f->labels->type != JSON_ARRAY || !L || !H || L->type != JSON_NUMBER || H->type != JSON_NUMBER)
        return fail(err, errlen, ERR_INPUT, "%s: line 1 lacks the probes, labels, layers or heads", path);
    f->n_probes = f->probes->count, f->C = f->labels->count, f->L = (int)L->number, f->H = (int)H->number;
    for (int p = 0; p < f->n_probes; p++) {
        const JsonValue *t = json_get(&f->probes->items[p], "tokens");
        if (!t || t->type != JSON_ARRAY || t->count < 2)
            return fail(err, errlen, ERR_INPUT, "%s: probe %d of the header has no tokens", path, p + 1);
    }
    int cap = 0;
    for (char *s = nl + 1; s < end; s = strchr(s, '\0') + 1) {
        char *eol = strchr(s, '\n');
        *eol = '\0';
        cap++;
    }
    f->T0 = tokens_of(f, 0);
    f->lines = malloc(sizeof(char *) * (cap + 1));
    f->epochs = malloc(sizeof(int) * (cap + 1));
    f->frames = calloc((size_t)(cap + 1) * f->n_probes, sizeof(Frame));
    f->strip = malloc(sizeof(float) * (size_t)(cap + 1) * f->L * f->H * f->T0 * f->T0);
    if (!f->lines || !f->epochs || !f->frames || !f->strip) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    int line_no = 1;
    for (char *s = nl + 1; s < end; s = strchr(s, '\0') + 1) {
        line_no++;
        JsonValue *v = json_parse(s, strlen(s), err, errlen);
        const JsonValue *epoch = v ? json_get(v, "epoch") : NULL, *recs = v ? json_get(v, "probes") : NULL;
        int ok = epoch && epoch->type == JSON_NUMBER && recs && recs->type == JSON_ARRAY &&
                 recs->count == f->n_probes;
        for (int p = 0; ok && p < f->n_probes; p++) ok = summarise(f, f->n_epochs, p, &recs->items[p]) == 0;
        if (ok) {
            f->epochs[f->n_epochs] = (int)epoch->number;
            f->lines[f->n_epochs++] = s;
        }
        json_free(v);
        if (!ok) return fail(err, errlen, ERR_INPUT, "%s:%d: not an epoch record of the header's probes", path, line_no);
    }
    if (f->n_epochs == 0)
        return fail(err, errlen, ERR_INPUT, "%s: no epoch recorded yet (the first is written before training "
                    "starts); run film again once it is", path);
    rundir_path(path, sizeof path, dir, "metrics.csv");
    char ignored[256];
    if (rundir_holds(dir, "metrics.csv"))
        f->n_history = metrics_csv_read(path, &f->history, &f->has_val, ignored, sizeof ignored);
    if (f->n_history < 0) f->n_history = 0;
    return EXIT_OK;
}

/* ------------------------------------------------------------ the terminal */

static double val_acc(const Film *f, int epoch) {
    for (int i = 0; i < f->n_history; i++)
        if (f->history[i].epoch == epoch) return f->has_val ? f->history[i].val_acc : f->history[i].train_acc;
    return NAN;
}

static void print_table(const Film *f, int p) {
    const JsonValue *q = &f->probes->items[p];
    int label = true_label(f, p), first = f->L * f->H > TABLE_HEADS ? (f->L - 1) * f->H : 0;
    printf("\nprobe %d: \"%s\" (%s, label %s)\n", p + 1, json_get(q, "text")->string, json_get(q, "source")->string,
           label >= 0 ? f->labels->items[label].string : "not known");
    printf("epoch  predicted  p(true)  ");
    for (int hl = first; hl < f->L * f->H; hl++) {
        char name[32];
        snprintf(name, sizeof name, "head %d.%d", hl / f->H + 1, hl % f->H + 1);
        trace_print_padded(stdout, name, TOKEN_CHARS + 1);
    }
    printf("most salient\n");
    for (int e = 0; e < f->n_epochs; e++) {
        const Frame *fr = frame(f, e, p);
        printf("%5d  ", f->epochs[e]);
        trace_print_padded(stdout, f->labels->items[fr->predicted].string, 9);
        if (label >= 0) printf("  %.4f  ", fr->p_true);
        else printf("       -  ");
        for (int hl = first; hl < f->L * f->H; hl++) {
            trace_print_padded(stdout, token(f, p, fr->focus[hl]), TOKEN_CHARS);
            putchar(' ');
        }
        printf("%s %+.2e\n", token(f, p, fr->salient), fr->salient_value);
    }
}

/* The first epoch from which head hl of probe p keeps the focus it ends
 * with, holding at least FOCUS_SHARE: 0 when it always did, -1 when it ends
 * without one. */
static int head_settles(const Film *f, int p, int hl) {
    const Frame *end = frame(f, f->n_epochs - 1, p);
    if (end->share[hl] < FOCUS_SHARE) return -1;
    int e = f->n_epochs - 1;
    while (e > 0 && frame(f, e - 1, p)->focus[hl] == end->focus[hl] && frame(f, e - 1, p)->share[hl] >= FOCUS_SHARE)
        e--;
    return e;
}

/* The moments of probe p (the rule is at the top of this file). */
static void print_moments(const Film *f, int p) {
    int lines = 0, extra = 0, LH = f->L * f->H, salient = f->n_epochs - 1;
    while (salient > 0 && frame(f, salient - 1, p)->salient == frame(f, f->n_epochs - 1, p)->salient) salient--;
    int *settles = malloc(sizeof(int) * LH);
    if (!settles) return;
    for (int hl = 0; hl < LH; hl++) settles[hl] = head_settles(f, p, hl);
    for (int e = 1; e < f->n_epochs; e++) {
        const Frame *now = frame(f, e, p), *was = frame(f, e - 1, p);
        char text[2048] = "";
        size_t used = 0;
#define SAY(...) used += (size_t)snprintf(text + used, used < sizeof text ? sizeof text - used : 0, __VA_ARGS__)
        if (now->predicted != was->predicted)
            SAY("the prediction turns %s -> %s", f->labels->items[was->predicted].string,
                f->labels->items[now->predicted].string);
        /* the heads that settle here, grouped by the key they settle on */
        for (int hl = 0; hl < LH; hl++) {
            if (settles[hl] != e) continue;
            int key = now->focus[hl], n = 0;
            for (int other = hl; other < LH; other++) n += settles[other] == e && now->focus[other] == key;
            SAY("%s%s ", used ? "; " : "", n > 1 ? "heads" : "head");
            for (int other = hl, k = 0; other < LH; other++) {
                if (settles[other] != e || now->focus[other] != key) continue;
                SAY("%s%d.%d", k++ ? ", " : "", other / f->H + 1, other % f->H + 1);
                if (now->every[other]) SAY(" (every query)");
                else SAY(" (%.0f%%)", 100.0 * now->share[other]);
                if (other != hl) settles[other] = -1;   /* said */
            }
            SAY(" move%s %s weight to `%s`", n > 1 ? "" : "s", n > 1 ? "their" : "its", token(f, p, key));
        }
        if (e == salient)
            SAY("%sthe most salient token becomes `%s` (%+.2e)", used ? "; " : "", token(f, p, now->salient),
                now->salient_value);
#undef SAY
        if (!text[0]) continue;
        if (lines == MOMENT_LINES) {
            extra++;
            continue;
        }
        double before = val_acc(f, f->epochs[e - 1]), after = val_acc(f, f->epochs[e]);
        printf("  epoch %d: %s", f->epochs[e], text);
        const char *what = f->has_val ? "val accuracy" : "train accuracy";
        if (isfinite(before) && isfinite(after)) printf("; %s %.2f -> %.2f", what, before, after);
        else if (isfinite(after)) printf("; %s %.2f", what, after);
        printf("\n");
        lines++;
    }
    free(settles);
    if (extra) printf("  ... and %d more epoch%s with moments (see the page)\n", extra, extra == 1 ? "" : "s");
    if (lines == 0) printf("  no moments: the prediction, the heads' focus and the most salient token hold still\n");
}

/* ------------------------------------------------------------ the page and the picture */

/* Raw JSON made safe inside <script>: "</" (only in strings) as "<\/". */
static int put_script_json(JsonBuf *b, const char *s) {
    int bad = 0;
    for (const char *p = s; *p && !bad; ) {
        const char *lt = strstr(p, "</");
        size_t n = lt ? (size_t)(lt - p) : strlen(p);
        bad |= jsonbuf_append(b, p, n);
        if (lt) bad |= jsonbuf_puts(b, "<\\/");
        p += n + (lt ? 2 : 0);
    }
    return bad;
}

static int write_page(const Film *f, const char *path, int training, char *err, size_t errlen) {
    size_t len;
    char *old = (char *)read_file(path, &len, err, errlen);
    int foreign = old && strncmp(old, FILM_PAGE_START, strlen(FILM_PAGE_START)) != 0;
    free(old);
    if (foreign)
        return fail(err, errlen, ERR_INPUT, "--html %s: it exists and is not a page film wrote, so it is not "
                    "replaced; give another path", path);
    JsonBuf b = {0};
    int bad = jsonbuf_puts(&b, FILM_PAGE_START " ");
    bad |= jsonbuf_string(&b, f->dir);   /* in the title: quotes as \", < as is; escaped below */
    bad |= jsonbuf_puts(&b, "</title>\n<style>\n");
    bad |= jsonbuf_puts(&b, FILM_PAGE_STYLE);
    bad |= jsonbuf_puts(&b, "</style>\n</head>\n<body data-status=\"loading\">\n<div id=\"errors\"></div>\n"
                        "<div id=\"app\"><noscript>This page draws the film with its inline script; it needs "
                        "JavaScript.</noscript></div>\n<pre id=\"probe\"></pre>\n<script>\n"
                        "window.onerror = function (msg, src, line) {\n"
                        "  document.getElementById('errors').textContent += 'script error: ' + msg + ' (line ' + "
                        "line + ')\\n';\n};\n</script>\n<script>\nconst D = {\"run\": ");
    JsonBuf name = {0};
    bad |= jsonbuf_string(&name, f->dir) | put_script_json(&b, name.data ? name.data : "\"\"");
    jsonbuf_free(&name);
    bad |= jsonbuf_printf(&b, ", \"training\": %s, \"head\": ", training ? "true" : "false");
    bad |= put_script_json(&b, f->text);
    bad |= jsonbuf_puts(&b, ",\n\"epochs\": [");
    for (int e = 0; e < f->n_epochs; e++) {
        bad |= jsonbuf_puts(&b, e ? ",\n" : "\n");
        bad |= put_script_json(&b, f->lines[e]);
    }
    bad |= jsonbuf_puts(&b, "],\n\"metrics\": [");
    for (int i = 0; i < f->n_history; i++) {
        const EpochRecord *r = &f->history[i];
        bad |= jsonbuf_printf(&b, "%s{\"epoch\": %d, \"train_loss\": %.9g, \"train_acc\": %.9g", i ? ", " : "",
                              r->epoch, r->train_loss, r->train_acc);
        if (f->has_val) bad |= jsonbuf_printf(&b, ", \"val_loss\": %.9g, \"val_acc\": %.9g", r->val_loss, r->val_acc);
        bad |= jsonbuf_puts(&b, "}");
    }
    bad |= jsonbuf_puts(&b, "]};\n</script>\n<script>\n");
    bad |= jsonbuf_puts(&b, FILM_PAGE_SCRIPT);
    bad |= jsonbuf_puts(&b, "</script>\n</body>\n</html>\n");
    /* the title's text: < and & escaped (the run's name is the only text in it) */
    char *title = b.data ? strstr(b.data, "<title>") : NULL;
    for (char *c = title ? title + 7 : NULL; c && strncmp(c, "</title>", 8) != 0; c++)
        if (*c == '<' || *c == '&') *c = '_';
    int rc = bad ? fail(err, errlen, ERR_RUNTIME, "out of memory")
                 : atomic_write(path, b.data, b.len, err, errlen) == 0 ? EXIT_OK : ERR_RUNTIME;
    jsonbuf_free(&b);
    return rc;
}

/* The head of probe 1 whose focus at the last epoch holds the most weight, at every epoch. */
static int write_strip(const Film *f, const char *path, int *shown, char *err, size_t errlen) {
    int LH = f->L * f->H, best = 0, T = f->T0;
    const Frame *end = frame(f, f->n_epochs - 1, 0);
    for (int hl = 1; hl < LH; hl++) if (end->share[hl] > end->share[best]) best = hl;
    *shown = best;
    float *values = malloc(sizeof(float) * (size_t)f->n_epochs * T * T);
    char **titles = calloc((size_t)f->n_epochs, sizeof(char *));
    const char **labels = malloc(sizeof(char *) * T);
    int rc = values && titles && labels ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "out of memory");
    for (int e = 0; rc == EXIT_OK && e < f->n_epochs; e++) {
        memcpy(values + (size_t)e * T * T, f->strip + ((size_t)e * LH + best) * T * T, sizeof(float) * T * T);
        titles[e] = malloc(32);
        if (!titles[e]) rc = fail(err, errlen, ERR_RUNTIME, "out of memory");
        else snprintf(titles[e], 32, "epoch %d", f->epochs[e]);
    }
    for (int t = 0; rc == EXIT_OK && t < T; t++) labels[t] = token(f, 0, t);
    char title[512];
    snprintf(title, sizeof title, "layer %d head %d attention on probe 1 at each epoch (rows: queries, columns: keys)",
             best / f->H + 1, best % f->H + 1);
    PlotStrip strip = {values, f->n_epochs, T, T, labels, (const char *const *)titles, title};
    if (rc == EXIT_OK && plot_heatmap_strip(path, &strip, err, errlen) != 0) rc = ERR_RUNTIME;
    for (int e = 0; titles && e < f->n_epochs; e++) free(titles[e]);
    free(titles);
    free(values);
    free(labels);
    return rc;
}

/* ------------------------------------------------------------ the command */

int command_film(const Options *o, int argc, char **argv) {
    (void)argc;
    (void)argv;
    if (o->n_args != 1) {
        fprintf(stderr, "error: film: %s (usage: ./train film RUN [--html FILE])\n",
                o->n_args == 0 ? "no run directory given" : "give one run directory");
        return EXIT_USAGE;
    }
    const char *dir = o->args[0];
    Film f;
    memset(&f, 0, sizeof f);
    char err[1024];
    int rc = film_load(&f, dir, err, sizeof err);
    if (rc != EXIT_OK) {
        film_free(&f);
        fprintf(stderr, "error: %s\n", err);
        return rc;
    }
    /* still training: the record runs ahead of the finished report */
    int training = !rundir_holds(dir, "report.txt") || f.n_history < f.epochs[f.n_epochs - 1];
    printf("film of %s: %d probe%s, epochs %d to %d%s\n", dir, f.n_probes, f.n_probes == 1 ? "" : "s", f.epochs[0],
           f.epochs[f.n_epochs - 1], training ? " (the run may still be training)" : "");
    for (int p = 0; p < f.n_probes; p++) {
        print_table(&f, p);
        print_moments(&f, p);
    }
    char html[4200], png[4200];
    if (o->html_path && *o->html_path) snprintf(html, sizeof html, "%s", o->html_path);
    else rundir_path(html, sizeof html, dir, "film.html");
    rundir_path(png, sizeof png, dir, "film.png");
    int head = 0;
    if ((rc = write_page(&f, html, training, err, sizeof err)) == EXIT_OK &&
        (rc = write_strip(&f, png, &head, err, sizeof err)) == EXIT_OK)
        printf("\nwrote %s (a slider over the epochs) and %s (head %d.%d on probe 1 at each epoch)\n", html, png,
               head / f.H + 1, head % f.H + 1);
    else
        fprintf(stderr, "error: %s\n", err);
    film_free(&f);
    return rc;
}
