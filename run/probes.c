/* probes.c: the probes of a run and their record (see probes.h). */
#include "run/probes.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/rng.h"
#include "formats/json.h"
#include "run/rundir.h"

#define SITE_PROBES 0x50524F4245ull   /* "PROBE": the rng site of the default choice, used by nothing else */

typedef struct {
    char *text;
    char *source;     /* where it came from, for the header and the log */
    int label;        /* class index, -1 when not known */
    int *ids;         /* (T) [CLS] ... [SEP] */
    int T;
} Probe;

struct ProbeSet {
    char path[4200];
    const LabelSet *labels;
    const Vocab *vocab;
    Probe items[PROBES_MAX];
    int n;
    int last_epoch;   /* the last epoch recorded, -1 before any */
    int header_due;   /* a new run: the header goes first, with the first record */
    Model *scratch;   /* the trained weights are copied here: its gradients and activations are the probes' own */
    float *input_grad;/* (max_len, d): the embedding sum's gradient */
    float *values;    /* (max_len + n_layers): a probe's saliency or norms */
};

void probes_saliency(const float *x, const float *grad, int T, int d, float *out) {
    for (int t = 0; t < T; t++) {
        double s = 0.0;
        for (int j = 0; j < d; j++) s += (double)x[(size_t)t * d + j] * grad[(size_t)t * d + j];
        out[t] = (float)-s;
    }
}

void probes_free(ProbeSet *p) {
    if (!p) return;
    for (int i = 0; i < p->n; i++) {
        free(p->items[i].text);
        free(p->items[i].source);
        free(p->items[i].ids);
    }
    model_free(p->scratch);
    free(p->input_grad);
    free(p->values);
    free(p);
}

/* ------------------------------------------------------------ choosing */

static int add_probe(ProbeSet *p, const Corpus *c, const char *text, int label, const char *source, char *err,
                     size_t errlen) {
    if (p->n == PROBES_MAX)
        return fail(err, errlen, ERR_INPUT, "%s: more than %d probes; give at most %d (each is recorded every epoch)",
                    source, PROBES_MAX, PROBES_MAX);
    char why[160];
    if (dataset_check_text(text, strlen(text), NULL, NULL, why, sizeof why) != TEXT_OK)
        return fail(err, errlen, ERR_INPUT, "%s: the probe text %s; give a non-empty UTF-8 text", source, why);
    Probe *q = &p->items[p->n];
    q->text = strdup(text);
    q->source = strdup(source);
    q->ids = malloc(sizeof(int) * c->max_len);
    q->label = label;
    if (!q->text || !q->source || !q->ids) {
        p->n++;   /* freed with the set */
        return fail(err, errlen, ERR_RUNTIME, "out of memory");
    }
    int truncated;
    q->T = encode_text(text, &c->vocab, c->tokenizer, c->max_len, q->ids, &truncated);
    p->n++;
    return q->T < 2 ? fail(err, errlen, ERR_RUNTIME, "out of memory") : EXIT_OK;
}

/* --probe (texts joined by newlines) and --probe-file (TSV with labels, or one text a line). */
static int given_probes(ProbeSet *p, const Options *o, const Corpus *c, char *err, size_t errlen) {
    int rc = EXIT_OK;
    for (const char *s = o->probe_texts; s && *s && rc == EXIT_OK;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        char *text = strndup(s, n);
        if (!text) return fail(err, errlen, ERR_RUNTIME, "out of memory");
        rc = add_probe(p, c, text, -1, "--probe", err, errlen);
        free(text);
        s += n + (nl != NULL);
    }
    if (rc != EXIT_OK || !o->probe_file || !*o->probe_file) return rc;
    TextDataset d;
    if ((rc = dataset_read_texts(o->probe_file, &d, err, errlen)) != EXIT_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", err);
        return fail(err, errlen, rc, "--probe-file: %s", why);
    }
    for (int i = 0; i < d.n && rc == EXIT_OK; i++) {
        const Example *e = &d.examples[i];
        int label = strcmp(e->label, TEXTS_LABEL) == 0 ? -1 : labels_index(&c->labels, e->label);
        char source[4300];
        snprintf(source, sizeof source, "%s:%d", o->probe_file, e->line);
        if (label < 0 && strcmp(e->label, TEXTS_LABEL) != 0)
            rc = fail(err, errlen, ERR_INPUT, "--probe-file %s: label '%s' is not one of the run's %d classes; "
                      "give one of them, or the text alone on its line", source, e->label, c->labels.n);
        else
            rc = add_probe(p, c, e->text, label, source, err, errlen);
    }
    dataset_free(&d);
    return rc;
}

/* With none given: for each of the first PROBES_PICKED classes in label
 * order, the validation example (training, without a validation set) of
 * that class at a place drawn from (seed, class) at SITE_PROBES. Under MPI,
 * from rank 0's share. */
static int picked_probes(ProbeSet *p, const Options *o, const Corpus *c, char *err, size_t errlen) {
    const TextDataset *set = c->has_val ? &c->val : &c->train;
    const EncodedDataset *enc = c->has_val ? &c->enc_val : &c->enc_train;
    int rc = EXIT_OK;
    for (int k = 0; k < c->labels.n && k < PROBES_PICKED && rc == EXIT_OK; k++) {
        int count = 0;
        for (int i = 0; i < enc->n; i++) count += enc->labels[i] == k;
        if (count == 0) continue;
        int want = (int)(rng_uniform_double((uint64_t)o->seed, (uint64_t)k, SITE_PROBES, 0) * count);
        for (int i = 0; i < enc->n; i++) {
            if (enc->labels[i] != k || want-- > 0) continue;
            char source[4300];
            snprintf(source, sizeof source, "%s line %d", c->has_val ? "validation" : "training",
                     set->examples[i].line);
            rc = add_probe(p, c, set->examples[i].text, k, source, err, errlen);
            break;
        }
    }
    return rc;
}

/* ------------------------------------------------------------ the file */

static int append_line(const char *path, const JsonBuf *b, char *err, size_t errlen) {
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0) return fail(err, errlen, ERR_RUNTIME, "%s: cannot append: %s", path, strerror(errno));
    size_t done = 0;
    while (done < b->len) {
        ssize_t w = write(fd, b->data + done, b->len - done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    int ok = done == b->len && fsync(fd) == 0;
    int saved = errno;
    close(fd);
    return ok ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "%s: cannot append a record: %s", path, strerror(saved));
}

static int write_header(const ProbeSet *p, const ModelConfig *m, char *err, size_t errlen) {
    JsonBuf b = {0};
    int bad = jsonbuf_printf(&b, "{\"format\": \"%s\", \"labels\": [", PROBES_FORMAT);
    for (int k = 0; k < p->labels->n; k++) {
        bad |= jsonbuf_puts(&b, k ? ", " : "");
        bad |= jsonbuf_string(&b, p->labels->names[k]);
    }
    bad |= jsonbuf_printf(&b, "], \"layers\": %d, \"heads\": %d, \"probes\": [", m->n_layers, m->n_heads);
    for (int i = 0; i < p->n; i++) {
        const Probe *q = &p->items[i];
        bad |= jsonbuf_puts(&b, i ? ", {\"text\": " : "{\"text\": ");
        bad |= jsonbuf_string(&b, q->text);
        bad |= jsonbuf_puts(&b, ", \"label\": ");
        bad |= q->label >= 0 ? jsonbuf_string(&b, p->labels->names[q->label]) : jsonbuf_puts(&b, "null");
        bad |= jsonbuf_puts(&b, ", \"source\": ");
        bad |= jsonbuf_string(&b, q->source);
        bad |= jsonbuf_puts(&b, ", \"tokens\": [");
        for (int t = 0; t < q->T; t++) {
            bad |= jsonbuf_puts(&b, t ? ", " : "");
            bad |= jsonbuf_string(&b, p->vocab->tokens[q->ids[t]]);
        }
        bad |= jsonbuf_puts(&b, "]}");
    }
    bad |= jsonbuf_puts(&b, "]}\n");
    int rc = bad ? fail(err, errlen, ERR_RUNTIME, "out of memory") : atomic_write(p->path, b.data, b.len, err, errlen);
    jsonbuf_free(&b);
    return rc == 0 ? EXIT_OK : ERR_RUNTIME;
}

/* A resumed run: the probes from the header, the epochs recorded up to
 * epochs_done kept (a record written before a crash that lost the epoch's
 * state goes: that epoch is trained and recorded again), a torn last line
 * dropped. */
static int continue_record(ProbeSet *p, const Corpus *c, int epochs_done, char *err, size_t errlen) {
    size_t len;
    char *text = (char *)read_file(p->path, &len, err, errlen);
    if (!text) return ERR_RUNTIME;
    char *nl = memchr(text, '\n', len);
    JsonValue *head = nl ? json_parse(text, (size_t)(nl - text), err, errlen) : NULL;
    const JsonValue *format = head ? json_get(head, "format") : NULL, *list = head ? json_get(head, "probes") : NULL;
    int rc = EXIT_OK;
    if (!format || format->type != JSON_STRING || strcmp(format->string, PROBES_FORMAT) != 0 || !list ||
        list->type != JSON_ARRAY)
        rc = fail(err, errlen, ERR_INPUT, "%s: not a probe record this program wrote (its first line is not the "
                  "header); move it away to resume without one", p->path);
    for (int i = 0; rc == EXIT_OK && i < list->count; i++) {
        const JsonValue *t = json_get(&list->items[i], "text"), *l = json_get(&list->items[i], "label"),
                        *s = json_get(&list->items[i], "source");
        if (!t || t->type != JSON_STRING || !s || s->type != JSON_STRING || !l)
            rc = fail(err, errlen, ERR_INPUT, "%s: probe %d of the header lacks its text, label or source", p->path,
                      i + 1);
        else
            rc = add_probe(p, c, t->string, l->type == JSON_STRING ? labels_index(&c->labels, l->string) : -1,
                           s->string, err, errlen);
    }
    /* the complete epoch lines up to epochs_done */
    size_t keep = nl ? (size_t)(nl - text) + 1 : 0;
    for (char *line = nl ? nl + 1 : NULL; rc == EXIT_OK && line && line < text + len;) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        int epoch;
        if (!end || sscanf(line, "{\"epoch\": %d,", &epoch) != 1 || epoch > epochs_done) break;
        p->last_epoch = epoch;
        keep = (size_t)(end - text) + 1;
        line = end + 1;
    }
    if (rc == EXIT_OK && keep < len) rc = atomic_write(p->path, text, keep, err, errlen) == 0 ? EXIT_OK : ERR_RUNTIME;
    json_free(head);
    free(text);
    return rc;
}

int probes_open(ProbeSet **out, const Options *o, const Corpus *c, const Model *m, const char *dir, int resume,
                int epochs_done, FILE *log, char *err, size_t errlen) {
    *out = NULL;
    if (options_pretrain(o) || o->no_probes) return EXIT_OK;
    ProbeSet *p = calloc(1, sizeof *p);
    if (!p) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    rundir_path(p->path, sizeof p->path, dir, PROBES_FILE);
    p->labels = &c->labels;
    p->vocab = &c->vocab;
    p->last_epoch = -1;
    int rc;
    if (resume) {
        if (access(p->path, F_OK) != 0) {   /* a run recorded without probes stays without */
            free(p);
            return EXIT_OK;
        }
        rc = continue_record(p, c, epochs_done, err, errlen);
    } else {
        int given = (o->probe_texts && *o->probe_texts) || (o->probe_file && *o->probe_file);
        rc = given ? given_probes(p, o, c, err, errlen) : picked_probes(p, o, c, err, errlen);
        p->header_due = 1;   /* the run directory is made, and an earlier run's files removed, after this */
        if (rc == EXIT_OK && p->n > 0 && log && !o->quiet) {
            fprintf(log, "probes: %d recorded every epoch into %s%s:\n", p->n, p->path,
                    given ? "" : " (one validation example per class, chosen by --seed; --probe TEXT chooses)");
            for (int i = 0; i < p->n; i++)
                fprintf(log, "  %s [%s] %s\n", p->items[i].source,
                        p->items[i].label >= 0 ? c->labels.names[p->items[i].label] : "?", p->items[i].text);
        }
    }
    if (rc == EXIT_OK && p->n > 0) {
        p->scratch = model_create(&m->cfg, 1, err, errlen);
        p->input_grad = malloc(sizeof(float) * (size_t)m->cfg.max_len * m->cfg.d_model);
        p->values = malloc(sizeof(float) * (size_t)(m->cfg.max_len + m->cfg.n_layers));
        if (!p->scratch) rc = ERR_RUNTIME;
        else if (!p->input_grad || !p->values) rc = fail(err, errlen, ERR_RUNTIME, "out of memory");
    }
    if (rc != EXIT_OK || p->n == 0) {
        probes_free(p);
        return rc;
    }
    *out = p;
    return EXIT_OK;
}

/* ------------------------------------------------------------ recording */

static void keep_input_grad(void *ctx, GradStage stage, int layer, const float *grad) {
    (void)layer;
    ProbeSet *p = ctx;
    if (stage == GRAD_EMBEDDING_SUM)
        memcpy(p->input_grad, grad, sizeof(float) * (size_t)p->scratch->seq_len * p->scratch->cfg.d_model);
}

/* x as a JSON array; format NULL: as trace prints attention (%.4f), its
 * trailing zeros dropped (the record's bulk: about 7 bytes a weight). */
static int put_floats(JsonBuf *b, const float *x, int n, const char *format) {
    int bad = jsonbuf_puts(b, "[");
    for (int i = 0; i < n; i++) {
        bad |= i ? jsonbuf_append(b, ",", 1) : 0;
        if (format) bad |= jsonbuf_printf(b, format, (double)x[i]);
        else bad |= jsonbuf_fixed4(b, x[i]);
    }
    return bad | jsonbuf_puts(b, "]");
}

/* One probe through the scratch model, appended to b as its object. */
static int record_probe(ProbeSet *p, const Probe *q, JsonBuf *b) {
    Model *m = p->scratch;
    const ModelConfig *c = &m->cfg;
    int T = q->T, L = c->n_layers, H = c->n_heads;
    ForwardOptions eval = {.training = 0};
    int label = q->label;
    if (label < 0) {   /* no label known: the saliency is toward the predicted class */
        model_forward(m, q->ids, NULL, 1, T, &eval);
        label = model_predicted_class(m, 0);
    }
    model_forward(m, q->ids, &label, 1, T, &eval);
    int predicted = model_predicted_class(m, 0);
    int bad = jsonbuf_puts(b, "{\"predicted\": ");
    bad |= jsonbuf_string(b, p->labels->names[predicted]);
    bad |= jsonbuf_puts(b, ", \"probs\": ");
    bad |= put_floats(b, m->probs, c->n_classes, "%.7g");
    if (q->label >= 0) bad |= jsonbuf_printf(b, ", \"loss\": %.7g", (double)m->loss);
    else bad |= jsonbuf_puts(b, ", \"loss\": null");
    float *norms = p->values;
    for (int l = 0; l < L; l++) {
        const float *y = model_layer_output(m, l);
        double sum = 0.0;
        for (size_t i = 0; i < (size_t)T * c->d_model; i++) sum += (double)y[i] * y[i];
        norms[l] = (float)sqrt(sum);
    }
    bad |= jsonbuf_puts(b, ", \"norms\": ");
    bad |= put_floats(b, norms, L, "%.7g");
    bad |= jsonbuf_puts(b, ", \"attention\": [");
    for (int l = 0; l < L; l++) {
        const float *a = model_attention_probs(m, l);
        bad |= jsonbuf_puts(b, l ? ",[" : "[");
        for (int h = 0; h < H; h++)
            for (int r = 0; r < T; r++) {
                bad |= jsonbuf_puts(b, r ? "," : h ? "],[" : "[");
                bad |= put_floats(b, a + ((size_t)h * T + r) * T, T, NULL);
            }
        bad |= jsonbuf_puts(b, "]]");
    }
    bad |= jsonbuf_puts(b, "], \"saliency_label\": ");
    bad |= jsonbuf_string(b, p->labels->names[label]);
    /* the saliency last: the backward overwrites what the forward kept */
    model_backward_walk(m, keep_input_grad, p);
    float *saliency = p->values;
    probes_saliency(model_embedding_sum(m), p->input_grad, T, c->d_model, saliency);
    bad |= jsonbuf_puts(b, ", \"saliency\": ");
    bad |= put_floats(b, saliency, T, "%.7g");
    return bad | jsonbuf_puts(b, "}");
}

int probes_record(ProbeSet *p, const Model *trained, int epoch, char *err, size_t errlen) {
    if (!p || epoch <= p->last_epoch) return EXIT_OK;
    if (p->header_due && write_header(p, &trained->cfg, err, errlen) != EXIT_OK) return ERR_RUNTIME;
    p->header_due = 0;
    memcpy(p->scratch->params, trained->params, sizeof(float) * trained->n_params);
    JsonBuf b = {0};
    int bad = jsonbuf_printf(&b, "{\"epoch\": %d, \"probes\": [", epoch);
    for (int i = 0; i < p->n; i++) {
        bad |= jsonbuf_puts(&b, i ? ", " : "");
        bad |= record_probe(p, &p->items[i], &b);
    }
    bad |= jsonbuf_puts(&b, "]}\n");   /* one epoch, one line */
    int rc = bad ? fail(err, errlen, ERR_RUNTIME, "out of memory") : append_line(p->path, &b, err, errlen);
    jsonbuf_free(&b);
    if (rc == EXIT_OK) p->last_epoch = epoch;
    return rc;
}
