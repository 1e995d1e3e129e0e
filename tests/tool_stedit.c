/* tool_stedit.c: rewrites a safetensors file with one change, to make hostile checkpoints for the CLI tests. */
#include "formats/safetensors.h"
#include "base/fileio.h"
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
    fprintf(stderr,
            "usage: tool_stedit IN OUT OPERATION...\n"
            "  drop-tensor NAME          leave one tensor out\n"
            "  shape NAME D0[,D1...]     give a tensor another shape (data zero-padded or cut)\n"
            "  dtype NAME F32|I32|I64|U8 relabel a tensor's dtype (data zero-padded or cut)\n"
            "  drop-meta KEY             leave one metadata entry out\n"
            "  set-meta KEY VALUE        set (or add) one metadata entry\n"
            "  offsets NAME BEGIN END    edit a tensor's data_offsets in the header text\n"
            "  replace OLD NEW           replace the first OLD in the header text by NEW\n"
            "  flip BYTE BIT             flip one bit of the file\n"
            "  poison                    a training state whose weights are all 3e38 (it loads; a step overflows)\n"
            "  resave-meta KEY VALUE     a training state saved again with one metadata entry changed\n"
            "The first five rewrite the file with st_write (the checksum is left stale);\n"
            "the next three edit bytes and keep everything else as it is; poison and\n"
            "resave-meta write a valid state (checksum and all) through the model's own functions.\n");
    return 2;
}

/* ---------------------------------------------------- structured edits */

static int parse_dtype(const char *s, StDtype *out) {
    const char *names[] = {"F32", "I32", "I64", "U8"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) { *out = (StDtype)i; return 0; }
    return -1;
}

static size_t dtype_size(StDtype d) { return d == ST_I64 ? 8 : d == ST_U8 ? 1 : 4; }

static int parse_shape(const char *s, int64_t *shape) {
    int n = 0;
    while (*s && n < ST_MAX_DIMS) {
        char *end;
        shape[n++] = strtoll(s, &end, 10);
        if (end == s) return -1;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? -1 : n;
}

/* Copies t's bytes into a fresh buffer of bytes bytes, zero-padded or cut. */
static void *resized_copy(const StTensor *t, size_t bytes) {
    unsigned char *copy = calloc(bytes ? bytes : 1, 1);
    if (copy) memcpy(copy, t->data, t->n_bytes < bytes ? t->n_bytes : bytes);
    return copy;
}

/* Applies a structured operation to the tensor list out (n entries). */
static int edit_tensors(StFile *f, StTensorOut *out, int *n, void **owned, char **argv, int argc) {
    const char *op = argv[0];
    if (argc < 2) return -1;
    int k = -1;
    for (int i = 0; i < *n; i++)
        if (strcmp(out[i].name, argv[1]) == 0) k = i;
    if (k < 0) { fprintf(stderr, "tool_stedit: no tensor '%s'\n", argv[1]); return -1; }
    if (strcmp(op, "drop-tensor") == 0) {
        out[k] = out[--*n];
        return 0;
    }
    if (argc < 3) return -1;
    if (strcmp(op, "shape") == 0) {
        int nd = parse_shape(argv[2], out[k].shape);
        if (nd < 0) return -1;
        out[k].ndim = nd;
    } else if (strcmp(op, "dtype") != 0 || parse_dtype(argv[2], &out[k].dtype) != 0) {
        return -1;
    }
    size_t count = 1;
    for (int d = 0; d < out[k].ndim; d++) count *= (size_t)out[k].shape[d];
    *owned = resized_copy(&f->tensors[k], count * dtype_size(out[k].dtype));
    out[k].data = *owned;
    return *owned ? 0 : -1;
}

/* Applies a structured operation to the metadata arrays (room for one more). */
static int edit_meta(const char **keys, const char **vals, int *n, char **argv, int argc) {
    if (argc < 2) return -1;
    int k = -1;
    for (int i = 0; i < *n; i++)
        if (strcmp(keys[i], argv[1]) == 0) k = i;
    if (strcmp(argv[0], "drop-meta") == 0) {
        if (k < 0) { fprintf(stderr, "tool_stedit: no metadata '%s'\n", argv[1]); return -1; }
        keys[k] = keys[*n - 1];
        vals[k] = vals[*n - 1];
        --*n;
        return 0;
    }
    if (argc < 3) return -1;
    if (k < 0) k = (*n)++;
    keys[k] = argv[1];
    vals[k] = argv[2];
    return 0;
}

static int structured_edit(const char *in, const char *out_path, char **argv, int argc) {
    StFile f;
    char err[1024];
    if (st_load(in, &f, err, sizeof err) != 0) { fprintf(stderr, "tool_stedit: %s\n", err); return 1; }
    StTensorOut *out = calloc((size_t)f.n_tensors + 1, sizeof *out);
    const char **keys = calloc((size_t)f.n_meta + 1, sizeof *keys), **vals = calloc((size_t)f.n_meta + 1, sizeof *vals);
    void *owned = NULL;
    int n = f.n_tensors, n_meta = f.n_meta, rc = out && keys && vals ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i++) {
        const StTensor *t = &f.tensors[i];
        out[i] = (StTensorOut){.name = t->name, .dtype = t->dtype, .ndim = t->ndim, .data = t->data};
        memcpy(out[i].shape, t->shape, sizeof t->shape);
    }
    for (int i = 0; rc == 0 && i < n_meta; i++) {
        keys[i] = f.meta_keys[i];
        vals[i] = f.meta_values[i];
    }
    if (rc == 0) rc = strstr(argv[0], "meta") ? edit_meta(keys, vals, &n_meta, argv, argc)
                                              : edit_tensors(&f, out, &n, &owned, argv, argc);
    if (rc != 0) fprintf(stderr, "tool_stedit: cannot apply '%s'\n", argv[0]);
    else if (st_write(out_path, out, n, keys, vals, n_meta, err, sizeof err) != 0) {
        fprintf(stderr, "tool_stedit: %s\n", err);
        rc = -1;
    }
    free(owned);
    free(out);
    free(keys);
    free(vals);
    st_free(&f);
    return rc == 0 ? 0 : 1;
}

/* --------------------------------------------------------- byte edits */

/* Replaces header text [at, at + old_len) by repl and fixes the size field. */
static unsigned char *splice_header(const unsigned char *buf, size_t *size, size_t at, size_t old_len,
                                    const char *repl) {
    size_t repl_len = strlen(repl), new_size = *size - old_len + repl_len;
    unsigned char *out = malloc(new_size);
    if (!out) return NULL;
    memcpy(out, buf, at);
    memcpy(out + at, repl, repl_len);
    memcpy(out + at + repl_len, buf + at + old_len, *size - at - old_len);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | buf[i];
    header_len = header_len - old_len + repl_len;
    for (int i = 0; i < 8; i++) out[i] = (unsigned char)(header_len >> (8 * i));
    *size = new_size;
    return out;
}

/* Position of needle in the header text from position from, or 0 when absent. */
static size_t header_find(const unsigned char *buf, size_t size, size_t from, const char *needle) {
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | buf[i];
    size_t end = 8 + (header_len < size - 8 ? (size_t)header_len : size - 8), n = strlen(needle);
    for (size_t i = from > 8 ? from : 8; n && i + n <= end; i++)
        if (memcmp(buf + i, needle, n) == 0) return i;
    return 0;
}

static unsigned char *byte_edit(unsigned char *buf, size_t *size, char **argv, int argc) {
    const char *op = argv[0];
    if (strcmp(op, "flip") == 0 && argc >= 3) {
        size_t at = strtoull(argv[1], NULL, 10);
        if (at >= *size) return NULL;
        buf[at] ^= (unsigned char)(1u << (atoi(argv[2]) & 7));
        return buf;
    }
    if (strcmp(op, "replace") == 0 && argc >= 3) {
        size_t at = header_find(buf, *size, 8, argv[1]);
        return at ? splice_header(buf, size, at, strlen(argv[1]), argv[2]) : NULL;
    }
    if (strcmp(op, "offsets") == 0 && argc >= 4) {
        char name[512], repl[128];
        snprintf(name, sizeof name, "\"%s\":", argv[1]);
        size_t at = header_find(buf, *size, 8, name);
        size_t open = at ? header_find(buf, *size, at, "\"data_offsets\":[") : 0;
        size_t close = open ? header_find(buf, *size, open, "]") : 0;
        if (!close) return NULL;
        snprintf(repl, sizeof repl, "\"data_offsets\":[%s,%s]", argv[2], argv[3]);
        return splice_header(buf, size, open, close + 1 - open, repl);
    }
    return NULL;
}

static int raw_edit(const char *in, const char *out_path, char **argv, int argc) {
    char err[1024];
    size_t size;
    unsigned char *buf = read_file(in, &size, err, sizeof err);
    if (!buf) { fprintf(stderr, "tool_stedit: %s\n", err); return 1; }
    unsigned char *edited = size >= 8 ? byte_edit(buf, &size, argv, argc) : NULL;
    int rc = 1;
    if (!edited) fprintf(stderr, "tool_stedit: cannot apply '%s' to %s\n", argv[0], in);
    else if (atomic_write(out_path, edited, size, err, sizeof err) != 0) fprintf(stderr, "tool_stedit: %s\n", err);
    else rc = 0;
    if (edited && edited != buf) free(edited);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------- poison */

/* Metadata that model_save_state writes itself (the config, step, checksum). */
static int written_by_save_state(const char *key) {
    const char *own[] = {"format", "vocab_size", "max_len", "d_model", "heads", "d_ff", "layers", "n_classes",
                         "dropout", "emb_scale", "activation", "norm", "pool", "pe", "precision", "adam_step",
                         "checksum"};
    for (size_t i = 0; i < sizeof own / sizeof *own; i++)
        if (strcmp(key, own[i]) == 0) return 1;
    return 0;
}

/* Loads a state.safetensors and saves it again, valid (checksum and all),
 * with one change: poison sets every weight to 3e38 (finite, so the state
 * loads, a NaN being refused as damage, but the first forward pass
 * overflows and training must stop on the non-finite loss); otherwise the
 * metadata entry key gets value (a counter the loader must check). */
static int resave_state(const char *in, const char *out_path, int poison, const char *key, const char *value) {
    char err[1024];
    ModelConfig cfg;
    StFile f;
    if (model_config_from_file(in, &cfg, err, sizeof err) != 0 || st_load(in, &f, err, sizeof err) != 0) {
        fprintf(stderr, "tool_stedit: %s\n", err);
        return 1;
    }
    Model *m = model_create(&cfg, 1, err, sizeof err);
    const char **keys = calloc((size_t)f.n_meta + 1, sizeof *keys), **vals = calloc((size_t)f.n_meta + 1, sizeof *vals);
    /* a state with a --swa weight average keeps it (the average stays finite) */
    char average_name[128];
    snprintf(average_name, sizeof average_name, "average.%s", m ? m->tensors[0].name : "");
    float *average = m && st_find(&f, average_name) ? malloc(sizeof(float) * m->n_params) : NULL;
    int rc = m && keys && vals && (average || !st_find(&f, average_name)) &&
                     model_load_state_from(m, average, &f, in, err, sizeof err) == 0 ? 0 : 1;
    int n = 0;
    for (int i = 0; rc == 0 && i < f.n_meta; i++) {
        if (written_by_save_state(f.meta_keys[i])) continue;
        keys[n] = f.meta_keys[i];
        vals[n++] = key && strcmp(f.meta_keys[i], key) == 0 ? value : f.meta_values[i];
    }
    if (rc == 0) {
        for (size_t i = 0; poison && i < m->n_params; i++) m->params[i] = 3e38f;
        rc = model_save_state(m, average, out_path, keys, vals, n, err, sizeof err) == 0 ? 0 : 1;
    }
    if (rc) fprintf(stderr, "tool_stedit: %s\n", err);
    free(average);
    free(keys);
    free(vals);
    model_free(m);
    st_free(&f);
    return rc;
}

int main(int argc, char **argv) {
    if (argc < 4) return usage();
    const char *op = argv[3];
    const char *structured[] = {"drop-tensor", "shape", "dtype", "drop-meta", "set-meta"};
    for (int i = 0; i < 5; i++)
        if (strcmp(op, structured[i]) == 0) return structured_edit(argv[1], argv[2], argv + 3, argc - 3);
    if (strcmp(op, "flip") == 0 || strcmp(op, "replace") == 0 || strcmp(op, "offsets") == 0)
        return raw_edit(argv[1], argv[2], argv + 3, argc - 3);
    if (strcmp(op, "poison") == 0) return resave_state(argv[1], argv[2], 1, NULL, NULL);
    if (strcmp(op, "resave-meta") == 0 && argc == 6) return resave_state(argv[1], argv[2], 0, argv[4], argv[5]);
    return usage();
}
