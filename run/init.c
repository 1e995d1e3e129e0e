/* init.c: a classifier from a pretrain run, or another classifier's run (see init.h). */
#include "run/init.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/saved_model.h"

/* One model option against RUN's value (as text): adopt or refuse. */
static int adopt(Options *o, const char *name, const char *run_value, const char *run, char *err, size_t errlen) {
    const OptionSpec *s = options_find(name);
    char given[256];
    options_format(o, s, given, sizeof given);
    if (options_given(o, name)) {
        if (strcmp(given, run_value) == 0) return EXIT_OK;
        return fail(err, errlen, ERR_INPUT, "--%s %s disagrees with --init %s, whose model has %s %s; drop --%s "
                    "or give its value", name, given, run, name, run_value, name);
    }
    char why[256];
    if (options_set(o, s, run_value, why, sizeof why) != 0)
        return fail(err, errlen, ERR_INPUT, "--init %s: its %s '%s' is not valid here: %s", run, name, run_value, why);
    return EXIT_OK;
}

int init_adopt_options(Options *o, char *err, size_t errlen) {
    if (!o->init_dir || !*o->init_dir) return EXIT_OK;
    if (options_pretrain(o)) return fail(err, errlen, ERR_INPUT, "--init starts a classifier; pretraining starts fresh");
    SavedModel s;
    char why[1024];
    if (saved_model_load(o->init_dir, 1, &s, why, sizeof why) != EXIT_OK)
        return fail(err, errlen, ERR_INPUT, "--init %s: %s", o->init_dir, why);
    const ModelConfig *c = &s.model->cfg;
    char v[8][32];
    snprintf(v[0], sizeof v[0], "%d", c->d_model);
    snprintf(v[1], sizeof v[1], "%d", c->n_heads);
    snprintf(v[2], sizeof v[2], "%d", c->n_layers);
    snprintf(v[3], sizeof v[3], "%d", c->d_ff);
    snprintf(v[4], sizeof v[4], "%d", c->max_len);
    snprintf(v[5], sizeof v[5], "%d", c->vocab_size);
    const char *names[] = {"d-model", "heads", "layers", "d-ff", "max-len", "vocab-size",
                           "activation", "norm", "pe", "tokenizer"};
    const char *values[] = {v[0], v[1], v[2], v[3], v[4], v[5], activation_name(c->activation),
                            norm_name(c->norm), pe_name(c->pe), tokenizer_name(s.tokenizer)};
    int rc = EXIT_OK;
    for (size_t i = 0; i < sizeof names / sizeof *names && rc == EXIT_OK; i++)
        rc = adopt(o, names[i], values[i], o->init_dir, err, errlen);
    saved_model_free(&s);
    return rc;
}

static int is_head(const char *name) { return strncmp(name, "head.", 5) == 0; }

#define SHOWN_CLASSES 5   /* a dropped head's classes named in the note, at most */

/* What --init took from s and what it dropped, for a classifier m. */
static void describe(FILE *log, const char *init_dir, const SavedModel *s, const Model *m) {
    const ModelConfig *from = &s->model->cfg;
    int layers = from->n_layers;
    fprintf(log, "note: --init %s is a %s: this run takes its tokenizer and vocabulary (%d %s tokens), embeddings%s "
            "and %d encoder layer%s; it drops its ", init_dir, model_is_mlm(from) ? "pretrain run" : "classifier's run",
            from->vocab_size, tokenizer_name(s->tokenizer), from->pe == PE_LEARNED ? ", learned positions" : "",
            layers, layers == 1 ? "" : "s");
    if (model_is_mlm(from)) {
        fprintf(log, "masked-LM head");
    } else {
        fprintf(log, "classifier head (%d classes:", s->labels.n);
        for (int k = 0; k < s->labels.n && k < SHOWN_CLASSES; k++)
            fprintf(log, "%s %s", k ? "," : "", s->labels.names[k]);
        fprintf(log, "%s)", s->labels.n > SHOWN_CLASSES ? ", ..." : "");
        if (from->pool != m->cfg.pool)
            fprintf(log, " and its %s pooling (--pool is this run's own)", from->pool == POOL_CLS ? "cls" : "mean");
    }
    fprintf(log, "; the head for this data's %d classes starts fresh\n", m->cfg.n_classes);
}

int init_load_encoder(Model *m, const char *init_dir, FILE *log, char *err, size_t errlen) {
    SavedModel s;
    char why[1024];
    if (saved_model_load(init_dir, 1, &s, why, sizeof why) != EXIT_OK)
        return fail(err, errlen, ERR_INPUT, "--init %s: %s", init_dir, why);
    int rc = EXIT_OK;
    for (int i = 0; i < m->n_tensors && rc == EXIT_OK; i++) {
        const ParamTensor *t = &m->tensors[i];
        if (is_head(t->name)) continue;
        const ParamTensor *src = model_find_tensor(s.model, t->name);
        if (!src || src->ndim != t->ndim || src->shape[0] != t->shape[0] || src->shape[1] != t->shape[1])
            rc = fail(err, errlen, ERR_INPUT, "--init %s: its model has no tensor %s of this shape", init_dir, t->name);
        else
            memcpy(m->params + t->offset, s.model->params + src->offset, sizeof(float) * t->size);
    }
    if (rc == EXIT_OK && log) describe(log, init_dir, &s, m);
    saved_model_free(&s);
    return rc;
}
