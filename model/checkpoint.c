/* checkpoint.c: the model's safetensors files (docs/DESIGN.md §5): weights under
 * the PyTorch twin's state_dict names with the config and a checksum in
 * __metadata__, and the training state (current weights and Adam moments).
 * Loading validates the config, every tensor's shape and the checksum before
 * touching the model. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "base/errors.h"
#include "base/hash.h"
#include "formats/safetensors.h"

#define N_CONFIG_KEYS 15
#define MAX_META (N_CONFIG_KEYS + 64)

/* Config values as metadata strings; floats with 9 significant digits so
 * they read back to the same float. */
typedef struct {
    char values[N_CONFIG_KEYS][32];
    const char *keys[MAX_META];
    const char *vals[MAX_META];
    int n;
} Metadata;

static void put(Metadata *md, const char *key, const char *value) {
    md->keys[md->n] = key;
    md->vals[md->n] = value;
    md->n++;
}

/* ------------------------------------------------------------ checksum */

/* A checksum in the metadata ("checksum": "fnv1a64:<16 hex>") covers every
 * other metadata entry (in key order) and every tensor (name and bytes, in
 * the model's order), so any changed byte is refused on load. FNV-1a is a
 * chain of bijections: a single changed byte always changes the result. */
#define CHECKSUM_KEY "checksum"
/* name and a NUL, so "ab"+"c" and "a"+"bc" differ */
static uint64_t hash_string(uint64_t h, const char *s) { return hash_bytes(h, s, strlen(s) + 1); }

typedef struct {
    const char *key, *value;
} MetaPair;

static int compare_pairs(const void *a, const void *b) {
    return strcmp(((const MetaPair *)a)->key, ((const MetaPair *)b)->key);
}

/* Hash of the metadata pairs except the checksum, in byte order of the keys.
 * Returns 0, or -1 when out of memory. */
static int metadata_hash(const char *const *keys, const char *const *vals, int n, uint64_t *out) {
    MetaPair *pairs = malloc(sizeof *pairs * (size_t)(n > 0 ? n : 1));
    if (!pairs) return -1;
    for (int i = 0; i < n; i++) pairs[i] = (MetaPair){keys[i], vals[i]};
    qsort(pairs, (size_t)n, sizeof *pairs, compare_pairs);
    uint64_t h = HASH_START;
    for (int i = 0; i < n; i++)
        if (strcmp(pairs[i].key, CHECKSUM_KEY) != 0) h = hash_string(hash_string(h, pairs[i].key), pairs[i].value);
    free(pairs);
    *out = h;
    return 0;
}

static void checksum_text(uint64_t h, char out[32]) { snprintf(out, 32, "fnv1a64:%016llx", (unsigned long long)h); }

static int config_metadata(Metadata *md, const ModelConfig *c, const char *const *extra_keys,
                           const char *const *extra_values, int n_extra, char *err, size_t errlen) {
    if (n_extra < 0 || n_extra > MAX_META - N_CONFIG_KEYS - 1) {
        set_error(err, errlen, "too many metadata entries (%d)", n_extra);
        return -1;
    }
    md->n = 0;
    int v = 0;
#define PUT_INT(key, value) snprintf(md->values[v], 32, "%d", value); put(md, key, md->values[v++])
#define PUT_FLOAT(key, value) snprintf(md->values[v], 32, "%.9g", (double)(value)); put(md, key, md->values[v++])
    put(md, "format", "pt");
    PUT_INT("vocab_size", c->vocab_size);
    PUT_INT("max_len", c->max_len);
    PUT_INT("d_model", c->d_model);
    PUT_INT("heads", c->n_heads);
    PUT_INT("d_ff", c->d_ff);
    PUT_INT("layers", c->n_layers);
    PUT_INT("n_classes", c->n_classes);
    PUT_FLOAT("dropout", c->dropout);
    PUT_FLOAT("emb_scale", c->emb_scale);
#undef PUT_INT
#undef PUT_FLOAT
    put(md, "activation", activation_name(c->activation));
    put(md, "norm", norm_name(c->norm));
    put(md, "pool", pool_name(c->pool));
    put(md, "pe", pe_name(c->pe));
    /* only when not fp32: a float32 model's file stays as it was before the option (absent means fp32) */
    if (c->precision != PRECISION_FP32) put(md, "precision", precision_name(c->precision));
    for (int i = 0; i < n_extra; i++) put(md, extra_keys[i], extra_values[i]);
    return 0;
}

/* prefix "" for the checkpoint; "param.", "adam_m.", "adam_v." for the state */
static int write_tensors(const Model *m, const char *path, const char *const *prefixes,
                         float *const *sources, int n_groups, const Metadata *md, char *err, size_t errlen) {
    int n = m->n_tensors * n_groups;
    StTensorOut *out = calloc((size_t)n, sizeof *out);
    char (*names)[96] = calloc((size_t)n, sizeof *names);
    if (!out || !names) {
        free(out);
        free(names);
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    uint64_t h;
    if (metadata_hash(md->keys, md->vals, md->n, &h) != 0) {
        free(out);
        free(names);
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (int g = 0; g < n_groups; g++) {
        for (int i = 0; i < m->n_tensors; i++) {
            const ParamTensor *t = &m->tensors[i];
            StTensorOut *o = &out[g * m->n_tensors + i];
            char *name = names[g * m->n_tensors + i];
            snprintf(name, 96, "%s%s", prefixes[g], t->name);
            o->name = name;
            o->dtype = ST_F32;
            o->ndim = t->ndim;
            for (int k = 0; k < t->ndim; k++) o->shape[k] = t->shape[k];
            o->data = sources[g] + t->offset;
            h = hash_bytes(hash_string(h, name), o->data, sizeof(float) * t->size);
        }
    }
    Metadata with_sum = *md;   /* config_metadata leaves a slot free for it */
    char sum[32];
    checksum_text(h, sum);
    put(&with_sum, CHECKSUM_KEY, sum);
    int rc = st_write(path, out, n, with_sum.keys, with_sum.vals, with_sum.n, err, errlen);
    free(out);
    free(names);
    return rc;
}

int model_save(const Model *m, const float *params, const char *path, const char *const *extra_keys,
               const char *const *extra_values, int n_extra, char *err, size_t errlen) {
    Metadata md;
    if (config_metadata(&md, &m->cfg, extra_keys, extra_values, n_extra, err, errlen) != 0) return -1;
    const char *prefixes[] = {""};
    float *sources[] = {(float *)(params ? params : m->params)};
    return write_tensors(m, path, prefixes, sources, 1, &md, err, errlen);
}

int model_save_state(const Model *m, const float *average, const char *path, const char *const *extra_keys,
                     const char *const *extra_values, int n_extra, char *err, size_t errlen) {
    char step[32];
    snprintf(step, sizeof step, "%ld", m->adam_step);
    const char *keys[MAX_META], *vals[MAX_META];
    if (n_extra < 0 || n_extra > MAX_META - N_CONFIG_KEYS - 2) {
        set_error(err, errlen, "too many metadata entries (%d)", n_extra);
        return -1;
    }
    keys[0] = "adam_step";
    vals[0] = step;
    for (int i = 0; i < n_extra; i++) {
        keys[i + 1] = extra_keys[i];
        vals[i + 1] = extra_values[i];
    }
    Metadata md;
    if (config_metadata(&md, &m->cfg, keys, vals, n_extra + 1, err, errlen) != 0) return -1;
    const char *prefixes[] = {"param.", "adam_m.", "adam_v.", "average."};
    float *sources[] = {m->params, m->adam_m, m->adam_v, (float *)average};
    return write_tensors(m, path, prefixes, sources, average ? 4 : 3, &md, err, errlen);
}

/* ------------------------------------------------------------- loading */

static int meta_int(const StFile *f, const char *path, const char *key, long lo, long hi, int *out,
                    char *err, size_t errlen) {
    const char *s = st_meta(f, key);
    if (!s) {
        set_error(err, errlen, "%s: metadata has no '%s'", path, key);
        return -1;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        set_error(err, errlen, "%s: metadata '%s' is not a whole number in [%ld, %ld]: '%.40s'", path, key, lo, hi, s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int meta_float(const StFile *f, const char *path, const char *key, float *out, char *err, size_t errlen) {
    const char *s = st_meta(f, key);
    if (!s) {
        set_error(err, errlen, "%s: metadata has no '%s'", path, key);
        return -1;
    }
    char *end;
    errno = 0;
    float v = strtof(s, &end);
    if (errno || end == s || *end) {
        set_error(err, errlen, "%s: metadata '%s' is not a number: '%.40s'", path, key, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* An enum-valued metadata entry, parsed with one of model.h's *_parse functions. */
#define META_ENUM(f, path, key, parse, out, err, errlen) \
    meta_enum_result((f), (path), (key), st_meta((f), (key)) && parse(st_meta((f), (key)), (out)) == 0, (err), (errlen))

static int meta_enum_result(const StFile *f, const char *path, const char *key, int parsed, char *err, size_t errlen) {
    if (parsed) return 0;
    const char *s = st_meta(f, key);
    if (s) set_error(err, errlen, "%s: metadata '%s' is not a known value: '%.40s'", path, key, s);
    else set_error(err, errlen, "%s: metadata has no '%s'", path, key);
    return -1;
}

static int config_from_st(const StFile *f, const char *path, ModelConfig *c, char *err, size_t errlen) {
    *c = model_config_default();
    if (meta_int(f, path, "vocab_size", 1, INT_MAX, &c->vocab_size, err, errlen) ||
        meta_int(f, path, "max_len", 1, INT_MAX, &c->max_len, err, errlen) ||
        meta_int(f, path, "d_model", 1, INT_MAX, &c->d_model, err, errlen) ||
        meta_int(f, path, "heads", 1, INT_MAX, &c->n_heads, err, errlen) ||
        meta_int(f, path, "d_ff", 1, INT_MAX, &c->d_ff, err, errlen) ||
        meta_int(f, path, "layers", 1, INT_MAX, &c->n_layers, err, errlen) ||
        meta_int(f, path, "n_classes", 0, INT_MAX, &c->n_classes, err, errlen) ||
        meta_float(f, path, "dropout", &c->dropout, err, errlen) ||
        meta_float(f, path, "emb_scale", &c->emb_scale, err, errlen) ||
        META_ENUM(f, path, "activation", activation_parse, &c->activation, err, errlen) ||
        META_ENUM(f, path, "norm", norm_parse, &c->norm, err, errlen) ||
        META_ENUM(f, path, "pool", pool_parse, &c->pool, err, errlen) ||
        META_ENUM(f, path, "pe", pe_parse, &c->pe, err, errlen) ||
        (st_meta(f, "precision") && META_ENUM(f, path, "precision", precision_parse, &c->precision, err, errlen)))
        return -1;
    char why[256];
    if (model_config_check(c, why, sizeof why) != 0) {
        set_error(err, errlen, "%s: the config in its metadata is invalid: %s", path, why);
        return -1;
    }
    return 0;
}

int model_config_from_file(const char *path, ModelConfig *cfg, char *err, size_t errlen) {
    StFile f;
    if (st_load(path, &f, err, errlen) != 0) return -1;
    int rc = config_from_st(&f, path, cfg, err, errlen);
    st_free(&f);
    return rc;
}

/* The first field (dropout aside) in which a file's config differs from the
 * model's, as "name FILE in the file, MODEL in the model" in buf; 0 when
 * they agree. Enumerations are compared by their numbers. */
static int config_difference(const ModelConfig *file, const ModelConfig *model, char *buf, size_t len) {
    const struct { const char *name; int file, model; } fields[] = {
        {"vocab_size", file->vocab_size, model->vocab_size}, {"max_len", file->max_len, model->max_len},
        {"d_model", file->d_model, model->d_model},          {"heads", file->n_heads, model->n_heads},
        {"d_ff", file->d_ff, model->d_ff},                   {"layers", file->n_layers, model->n_layers},
        {"n_classes", file->n_classes, model->n_classes},    {"activation", (int)file->activation, (int)model->activation},
        {"norm", (int)file->norm, (int)model->norm},         {"pool", (int)file->pool, (int)model->pool},
        {"pe", (int)file->pe, (int)model->pe}};
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i].file != fields[i].model) {
            snprintf(buf, len, "%s %d in the file, %d in the model", fields[i].name, fields[i].file, fields[i].model);
            return 1;
        }
    if (file->emb_scale != model->emb_scale) {
        snprintf(buf, len, "emb_scale %g in the file, %g in the model", file->emb_scale, model->emb_scale);
        return 1;
    }
    return 0;
}

/* Recomputes the checksum of a file whose tensors were already checked for
 * names, dtypes and shapes, and compares it with the stored one. */
static int verify_checksum(const Model *m, const StFile *f, const char *path, const char *const *prefixes,
                           int n_groups, char *err, size_t errlen) {
    const char *stored = st_meta(f, CHECKSUM_KEY);
    if (!stored) {
        set_error(err, errlen, "%s: metadata has no '%s' (not written by ./train, or damaged)", path, CHECKSUM_KEY);
        return -1;
    }
    uint64_t h;
    if (metadata_hash((const char *const *)f->meta_keys, (const char *const *)f->meta_values, f->n_meta, &h) != 0) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (int g = 0; g < n_groups; g++) {
        for (int i = 0; i < m->n_tensors; i++) {
            char name[96];
            snprintf(name, sizeof name, "%s%s", prefixes[g], m->tensors[i].name);
            const StTensor *t = st_find(f, name);
            h = hash_bytes(hash_string(h, name), t->data, t->n_bytes);
        }
    }
    char computed[32];
    checksum_text(h, computed);
    if (strcmp(stored, computed) != 0) {
        set_error(err, errlen, "%s: checksum mismatch (stored '%.40s', contents give '%s'): the file is damaged or "
                 "was edited", path, stored, computed);
        return -1;
    }
    return 0;
}

/* Copies each group of tensors (checked for dtype and shape) into scratch
 * first, so a refused file leaves the model untouched. */
static int read_tensors(const Model *m, const StFile *f, const char *path, const char *const *prefixes,
                        float *const *targets, int n_groups, char *err, size_t errlen) {
    ModelConfig file_cfg;
    if (config_from_st(f, path, &file_cfg, err, errlen) != 0) return -1;
    char differ[160];
    if (config_difference(&file_cfg, &m->cfg, differ, sizeof differ)) {
        set_error(err, errlen, "%s: its config does not match the model's: %s", path, differ);
        return -1;
    }
    if (f->n_tensors != m->n_tensors * n_groups) {
        set_error(err, errlen, "%s: holds %d tensors, the model has %d", path, f->n_tensors, m->n_tensors * n_groups);
        return -1;
    }
    float *scratch = malloc(sizeof(float) * m->n_params * n_groups);
    if (!scratch) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    for (int g = 0; g < n_groups; g++) {
        for (int i = 0; i < m->n_tensors; i++) {
            const ParamTensor *t = &m->tensors[i];
            char name[96];
            int64_t shape[2] = {t->shape[0], t->shape[1]};
            snprintf(name, sizeof name, "%s%s", prefixes[g], t->name);
            if (!st_find(f, name)) {
                set_error(err, errlen, "%s: missing tensor '%s'", path, name);
                free(scratch);
                return -1;
            }
            char why[512];
            float *values = scratch + g * m->n_params + t->offset;
            if (st_read_f32(f, name, values, t->ndim, shape, why, sizeof why) != 0) {
                set_error(err, errlen, "%s: %s", path, why);
                free(scratch);
                return -1;
            }
            /* training never saves a NaN, nor an infinite weight (a
             * non-finite loss or gradient stops it first), so one here is
             * damage; only an Adam moment may be +inf (a gradient past 1.8e19
             * squared, with --clip 0), which its update handles as 0 */
            int moment = strncmp(prefixes[g], "adam_", 5) == 0;
            for (size_t k = 0; k < t->size; k++) {
                if (isnan(values[k]) || (!moment && isinf(values[k]))) {
                    set_error(err, errlen, "%s: tensor '%s' holds %s at element %zu: the file is damaged (training "
                             "never saves one)", path, name, isnan(values[k]) ? "a NaN" : "an infinity", k);
                    free(scratch);
                    return -1;
                }
            }
        }
    }
    if (verify_checksum(m, f, path, prefixes, n_groups, err, errlen) != 0) {
        free(scratch);
        return -1;
    }
    for (int g = 0; g < n_groups; g++) memcpy(targets[g], scratch + g * m->n_params, sizeof(float) * m->n_params);
    free(scratch);
    return 0;
}

int model_read_weights(const Model *m, const char *path, float *params, char *err, size_t errlen) {
    StFile f;
    if (st_load(path, &f, err, errlen) != 0) return -1;
    const char *prefixes[] = {""};
    float *targets[] = {params};
    int rc = read_tensors(m, &f, path, prefixes, targets, 1, err, errlen);
    st_free(&f);
    return rc;
}

int model_load_weights(Model *m, const char *path, char *err, size_t errlen) {
    return model_read_weights(m, path, m->params, err, errlen);
}

int model_load_state_from(Model *m, float *average, const StFile *f, const char *path, char *err,
                          size_t errlen) {
    int step = 0;
    int rc = meta_int(f, path, "adam_step", 0, INT_MAX, &step, err, errlen);
    if (rc == 0) {
        const char *prefixes[] = {"param.", "adam_m.", "adam_v.", "average."};
        float *targets[] = {m->params, m->adam_m, m->adam_v, average};
        rc = read_tensors(m, f, path, prefixes, targets, average ? 4 : 3, err, errlen);
    }
    if (rc == 0) m->adam_step = step;
    return rc;
}

int model_load_state(Model *m, const char *path, char *err, size_t errlen) {
    StFile f;
    if (st_load(path, &f, err, errlen) != 0) return -1;
    int rc = model_load_state_from(m, NULL, &f, path, err, errlen);
    st_free(&f);
    return rc;
}
