/* saved_model.c: the checkpoint schema of a run (see saved_model.h). */
#include "run/saved_model.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "formats/json.h"
#include "formats/safetensors.h"
#include "run/rundir.h"
#include "text/dataset.h"

/* The merges of a bpe vocabulary as a JSON array of [left, right] pairs
 * in learned order; NULL when out of memory. */
static char *merges_json(const Bpe *bpe) {
    JsonBuf b = {0};
    int rc = jsonbuf_puts(&b, "[");
    for (int i = 0; i < bpe_n_merges(bpe) && rc == 0; i++) {
        const char *left, *right;
        bpe_merge(bpe, i, &left, &right);
        rc |= jsonbuf_puts(&b, i ? ",[" : "[");
        rc |= jsonbuf_string(&b, left);
        rc |= jsonbuf_puts(&b, ",");
        rc |= jsonbuf_string(&b, right);
        rc |= jsonbuf_puts(&b, "]");
    }
    rc |= jsonbuf_puts(&b, "]");
    if (rc != 0) {
        jsonbuf_free(&b);
        return NULL;
    }
    return b.data;
}

int saved_model_write(const char *path, const Model *m, const float *params, TokenizerKind tokenizer,
                      const Vocab *vocab, const LabelSet *labels, int epoch, char *err, size_t errlen) {
    char *vocab_json = json_string_array((const char *const *)vocab->tokens, vocab->size);
    char *labels_json = json_string_array((const char *const *)labels->names, labels->n);
    char *merges = vocab->bpe ? merges_json(vocab->bpe) : NULL;
    char epoch_text[16];
    snprintf(epoch_text, sizeof epoch_text, "%d", epoch);
    int rc = vocab_json && labels_json && (merges || !vocab->bpe)
                 ? EXIT_OK : fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    if (rc == EXIT_OK) {
        const char *keys[] = {"tokenizer", "vocab", "labels", "epoch", "merges"};
        const char *vals[] = {tokenizer_name(tokenizer), vocab_json, labels_json, epoch_text, merges};
        if (model_save(m, params, path, keys, vals, merges ? 5 : 4, err, errlen) != 0) rc = ERR_RUNTIME;
    }
    free(vocab_json);
    free(labels_json);
    free(merges);
    return rc;
}

/* "merges" of a bpe checkpoint: pairs (n, 2) of strings owned by root. */
static int parse_merges(const char *text, JsonValue **root, const char *(**pairs)[2], int *n,
                        char *err, size_t errlen) {
    char why[256];
    *root = json_parse(text, strlen(text), why, sizeof why);
    if (!*root) return fail(err, errlen, ERR_INPUT, "metadata 'merges' is not JSON: %s", why);
    const JsonValue *a = *root;
    if (a->type != JSON_ARRAY) return fail(err, errlen, ERR_INPUT, "metadata 'merges' is not an array");
    *pairs = malloc(sizeof **pairs * (size_t)(a->count ? a->count : 1));
    if (!*pairs) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    for (int i = 0; i < a->count; i++) {
        const JsonValue *p = &a->items[i];
        if (p->type != JSON_ARRAY || p->count != 2 || p->items[0].type != JSON_STRING ||
            p->items[1].type != JSON_STRING)
            return fail(err, errlen, ERR_INPUT, "metadata 'merges': item %d is not a [left, right] pair of "
                        "strings", i);
        (*pairs)[i][0] = p->items[0].string;
        (*pairs)[i][1] = p->items[1].string;
    }
    *n = a->count;
    return EXIT_OK;
}

/* The vocabulary of the file: its tokens, with the merges for bpe. */
static int read_vocab(const StFile *f, SavedModel *s, char **items, int n, char *err,
                      size_t errlen) {
    if (s->tokenizer != TOKENIZER_BPE) return vocab_from_tokens(&s->vocab, items, n, err, errlen);
    const char *merges = st_meta(f, "merges");
    if (!merges) return fail(err, errlen, ERR_INPUT, "a bpe checkpoint without metadata 'merges'");
    JsonValue *root = NULL;
    const char *(*pairs)[2] = NULL;
    int n_pairs = 0;
    int rc = parse_merges(merges, &root, &pairs, &n_pairs, err, errlen);
    if (rc == EXIT_OK) rc = vocab_from_bpe(&s->vocab, items, n, (const char *const (*)[2])pairs, n_pairs, err, errlen);
    free(pairs);
    json_free(root);
    return rc;
}

int saved_model_check_memory(const ModelConfig *cfg, int batch_size, char *err, size_t errlen) {
    size_t need = model_memory_bytes(cfg, batch_size);
    double have = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (have > 0 && (double)need > have)
        return fail(err, errlen, ERR_INPUT, "this config needs %zu bytes (%.1f GiB) but the machine has %.0f bytes "
                    "(%.1f GiB); reduce --batch-size, --max-len, --d-model, --d-ff or --layers",
                    need, need / 1073741824.0, have, have / 1073741824.0);
    return EXIT_OK;
}

void saved_model_file(const char *path, char *buf, size_t len) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) rundir_path(buf, len, path, "model.safetensors");
    else snprintf(buf, len, "%s", path);
}

/* --model given something else: a directory without a checkpoint, or a
 * file that starts with text, such as a data file (a safetensors file starts
 * with an 8-byte little-endian header size, whose high bytes are zero).
 * ERR_INPUT with a message saying so; EXIT_OK for anything that may be a
 * checkpoint, whose damage the full check then names. */
static int check_is_checkpoint(const char *path, const char *file, char *err, size_t errlen) {
    struct stat st;
    int found = stat(path, &st) == 0;
    if (!found && errno == ENOENT)
        return fail(err, errlen, ERR_INPUT, "%s: No such file or directory: no run directory or checkpoint there (give "
                    "the directory a training run wrote, such as runs/NAME, or its model.safetensors)", path);
    if (found && S_ISDIR(st.st_mode) && stat(file, &st) != 0) {
        /* a run that has not finished an epoch yet: run.json, perhaps a state */
        int record = rundir_holds(path, "run.json");
        if (record && rundir_holds(path, "state.safetensors"))
            return fail(err, errlen, ERR_INPUT, "%s: this run has no model yet: it is inside its first epoch, still "
                        "training or stopped there; if it stopped, continue it with ./train --resume %s", path, path);
        if (record)
            return fail(err, errlen, ERR_INPUT, "%s: this run has no model yet: it is still in its first epoch, or it "
                        "stopped before one ended with nothing to resume (then train it again, with --overwrite into "
                        "the same directory)", path);
        return fail(err, errlen, ERR_INPUT, "%s: not a run directory or checkpoint: it holds no model.safetensors "
                    "(give a training run's directory or its model.safetensors)", path);
    }
    FILE *f = fopen(file, "rb");
    if (!f) return EXIT_OK;   /* the loader names the error */
    unsigned char head[8];
    size_t got = fread(head, 1, sizeof head, f);
    fclose(f);
    if (got < sizeof head) return EXIT_OK;
    /* text: no control character but tab and line breaks, and no byte that
     * UTF-8 never uses (0xF5-0xFF: a huge header size is not text) */
    for (int i = 0; i < 8; i++)
        if ((head[i] < 0x20 && head[i] != '\t' && head[i] != '\n' && head[i] != '\r') || head[i] >= 0xF5)
            return EXIT_OK;
    return fail(err, errlen, ERR_INPUT, "%s: not a run directory or checkpoint: it starts with text, where a "
                "safetensors file starts with its header size (give a training run's directory or its "
                "model.safetensors)", file);
}

/* The index of the first label that training's rule refuses (why says
 * why), or -1. */
static int bad_label(char *const *labels, int n, char *why, size_t whylen) {
    for (int i = 0; i < n; i++)
        if (dataset_check_label(labels[i], strlen(labels[i]), why, whylen) != 0) return i;
    return -1;
}

/* vocab, labels and tokenizer from the file's metadata. */
static int read_text_metadata(const StFile *f, const char *file, const ModelConfig *cfg, SavedModel *s, char *err,
                              size_t errlen) {
    const char *tokenizer = st_meta(f, "tokenizer"), *vocab = st_meta(f, "vocab"), *labels = st_meta(f, "labels");
    char **vocab_items = NULL, **label_items = NULL;
    int n_vocab = -1, n_labels = -1, rc = ERR_INPUT, bad;
    char why[512] = "";
    if (!tokenizer && st_meta(f, "adam_step"))
        set_error(err, errlen, "%s: a training state (Adam moments and progress, for --resume), not a model: give "
                  "the run's directory or its model.safetensors", file);
    else if (!tokenizer || tokenizer_parse(tokenizer, &s->tokenizer) != 0)
        set_error(err, errlen, "%s: metadata 'tokenizer' is missing or unknown", file);
    else if (!vocab || (n_vocab = json_parse_string_array(vocab, &vocab_items, why, sizeof why)) != cfg->vocab_size)
        set_error(err, errlen, "%s: metadata 'vocab' is missing or does not hold %d tokens%s%s", file,
                  cfg->vocab_size, why[0] ? ": " : "", why);
    else if (!labels || (n_labels = json_parse_string_array(labels, &label_items, why, sizeof why)) != cfg->n_classes)
        set_error(err, errlen, "%s: metadata 'labels' is missing or does not hold %d labels%s%s", file,
                  cfg->n_classes, why[0] ? ": " : "", why);
    else if (read_vocab(f, s, vocab_items, n_vocab, why, sizeof why) != 0)
        set_error(err, errlen, "%s: %s", file, why[0] ? why : "bad vocabulary");
    else if ((bad = bad_label(label_items, n_labels, why, sizeof why)) >= 0)   /* what training refuses */
        set_error(err, errlen, "%s: metadata 'labels': label %d: %s (training refuses such a label, so the checkpoint "
                  "was not written by a training run: it is damaged or forged)", file, bad + 1, why);
    else if (n_labels > 0 && labels_from_names(&s->labels, label_items, n_labels) != 0)   /* none: pretraining */
        set_error(err, errlen, "%s: metadata 'labels' must list distinct, non-empty labels in byte order, as training "
                  "writes them", file);
    else
        rc = EXIT_OK;
    if (vocab_items) json_free_string_array(vocab_items, n_vocab);
    if (label_items) json_free_string_array(label_items, n_labels);
    return rc;
}

int saved_model_load(const char *path, int max_batch, SavedModel *s, char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    char file[4096];
    saved_model_file(path, file, sizeof file);
    int checked = check_is_checkpoint(path, file, err, errlen);
    if (checked != EXIT_OK) return checked;
    ModelConfig cfg;
    if (model_config_from_file(file, &cfg, err, errlen) != 0) return ERR_INPUT;
    StFile f;
    if (st_load(file, &f, err, errlen) != 0) return ERR_INPUT;
    int rc = read_text_metadata(&f, file, &cfg, s, err, errlen);
    st_free(&f);
    char why[512];
    if (rc == EXIT_OK && (rc = saved_model_check_memory(&cfg, max_batch, why, sizeof why)) != EXIT_OK)
        set_error(err, errlen, "%s: %s", file, why);
    else if (rc == EXIT_OK && !(s->model = model_create(&cfg, max_batch, why, sizeof why)))
        rc = fail(err, errlen, ERR_RUNTIME, "%s: %s", file, why);
    else if (rc == EXIT_OK && model_load_weights(s->model, file, err, errlen) != 0)
        rc = ERR_INPUT;
    if (rc != EXIT_OK) saved_model_free(s);
    return rc;
}

void saved_model_free(SavedModel *s) {
    model_free(s->model);
    vocab_free(&s->vocab);
    labels_free(&s->labels);
    memset(s, 0, sizeof *s);
}
