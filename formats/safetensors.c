/* safetensors.c: writes and strictly validates safetensors files (u64 LE header size, JSON header, data). */
#include "formats/safetensors.h"

#include "base/fileio.h"
#include "formats/json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tensor data is stored little-endian and copied to and from memory as is. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "safetensors.c copies tensor data as-is and needs a little-endian host"
#endif

#define ST_HEADER_MAX 100000000u            /* the reference loader's limit on the JSON header */
#define ST_INTEGER_LIMIT (UINT64_C(1) << 53) /* above it a double no longer holds every integer */
#define ST_METADATA_KEY "__metadata__"

static const char *const dtype_names[] = { "F32", "I32", "I64", "U8" };
static const size_t dtype_sizes[] = { 4, 4, 8, 1 };
#define ST_N_DTYPES 4


/* Copies a name for a message: printable ASCII kept, other bytes as '?',
 * cut at 60 characters. */
static void shown_name(const char *name, char *out, size_t outlen)
{
    size_t j = 0;
    const char *s = name;
    for (; *s && j + 4 < outlen && j < 60; s++)
        out[j++] = (unsigned char)*s >= 0x20 && (unsigned char)*s < 0x7F ? *s : '?';
    if (*s) {
        memcpy(out + j, "...", 3);
        j += 3;
    }
    out[j] = '\0';
}

/* Formats a shape as "[a, b, c]". */
static void shown_shape(int ndim, const int64_t *shape, char *out, size_t outlen)
{
    size_t used = (size_t)snprintf(out, outlen, "[");
    for (int i = 0; i < ndim && used < outlen; i++)
        used += (size_t)snprintf(out + used, outlen - used, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (used < outlen) snprintf(out + used, outlen - used, "]");
}

/* Number of elements in shape times elem_size, or -1 on overflow of size_t.
 * A zero dimension makes the product zero whatever the others are. */
static int tensor_bytes(int ndim, const int64_t *shape, size_t elem_size, size_t *elements, size_t *bytes)
{
    size_t n = 1;
    for (int i = 0; i < ndim; i++)
        if (shape[i] == 0) n = 0;
    for (int i = 0; i < ndim && n != 0; i++) {
        if (shape[i] < 0 || (uint64_t)shape[i] > SIZE_MAX / n) return -1;
        n *= (size_t)shape[i];
    }
    if (n > SIZE_MAX / elem_size) return -1;
    *elements = n;
    *bytes = n * elem_size;
    return 0;
}

/* ---------------------------------------------------------------- write */

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses a repeated name among names[0..n); what says which list. */
static int check_unique(const char *const *names, int n, const char *what, char *err, size_t errlen)
{
    if (n < 2) return 0;
    const char **sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted) {
        set_error(err, errlen, "out of memory");
        return -1;
    }
    memcpy(sorted, names, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_strings);
    int rc = 0;
    for (int i = 1; i < n && rc == 0; i++) {
        if (strcmp(sorted[i - 1], sorted[i]) == 0) {
            char shown[80];
            shown_name(sorted[i], shown, sizeof shown);
            set_error(err, errlen, "duplicate %s '%s'", what, shown);
            rc = -1;
        }
    }
    free(sorted);
    return rc;
}

/* Checks what st_write is given; fills tensor byte sizes and the data total. */
static int check_write_input(const StTensorOut *tensors, int n_tensors, const char *const *meta_keys,
                             const char *const *meta_values, int n_meta, size_t *sizes,
                             size_t *data_total, char *err, size_t errlen)
{
    const char **names = malloc(((size_t)n_tensors + 1) * sizeof *names);
    if (!names) {
        set_error(err, errlen, "out of memory");
        return -1;
    }
    size_t total = 0;
    int rc = 0;
    for (int i = 0; i < n_tensors && rc == 0; i++) {
        const StTensorOut *t = &tensors[i];
        const char *name = t->name ? t->name : "";
        char shown[80];
        shown_name(name, shown, sizeof shown);
        size_t elements;
        names[i] = name;
        if (!t->name || !json_utf8_valid(name, strlen(name)) || strcmp(name, ST_METADATA_KEY) == 0)
            set_error(err, errlen, "tensor %d: invalid name '%s'", i, shown), rc = -1;
        else if ((unsigned)t->dtype >= ST_N_DTYPES)
            set_error(err, errlen, "tensor '%s': unknown dtype %d", shown, (int)t->dtype), rc = -1;
        else if (t->ndim < 0 || t->ndim > ST_MAX_DIMS)
            set_error(err, errlen, "tensor '%s': %d dimensions (0 to %d allowed)", shown, t->ndim, ST_MAX_DIMS), rc = -1;
        else if (tensor_bytes(t->ndim, t->shape, dtype_sizes[t->dtype], &elements, &sizes[i]) != 0)
            set_error(err, errlen, "tensor '%s': invalid or too large shape", shown), rc = -1;
        else if (sizes[i] > 0 && !t->data)
            set_error(err, errlen, "tensor '%s': no data", shown), rc = -1;
        else if ((uint64_t)sizes[i] >= ST_INTEGER_LIMIT - total)
            set_error(err, errlen, "tensor '%s': data too large for a safetensors file", shown), rc = -1;
        else
            total += sizes[i];
    }
    if (rc == 0) rc = check_unique(names, n_tensors, "tensor name", err, errlen);
    free(names);
    for (int i = 0; i < n_meta && rc == 0; i++) {
        if (!meta_keys[i] || !meta_values[i] || !json_utf8_valid(meta_keys[i], strlen(meta_keys[i])) ||
            !json_utf8_valid(meta_values[i], strlen(meta_values[i]))) {
            set_error(err, errlen, "metadata entry %d: key or value missing or not valid UTF-8", i);
            rc = -1;
        }
    }
    if (rc == 0) rc = check_unique(meta_keys, n_meta, "metadata key", err, errlen);
    *data_total = total;
    return rc;
}

/* Builds the JSON header, padded with spaces to a multiple of 8 bytes. */
static int build_header(JsonBuf *h, const StTensorOut *tensors, int n_tensors, const size_t *sizes,
                        const char *const *meta_keys, const char *const *meta_values, int n_meta)
{
    int rc = jsonbuf_puts(h, "{");
    if (n_meta > 0) {
        rc |= jsonbuf_puts(h, "\"" ST_METADATA_KEY "\":{");
        for (int i = 0; i < n_meta; i++) {
            if (i > 0) rc |= jsonbuf_puts(h, ",");
            rc |= jsonbuf_string(h, meta_keys[i]);
            rc |= jsonbuf_puts(h, ":");
            rc |= jsonbuf_string(h, meta_values[i]);
        }
        rc |= jsonbuf_puts(h, "}");
    }
    size_t offset = 0;
    for (int i = 0; i < n_tensors; i++) {
        const StTensorOut *t = &tensors[i];
        if (i > 0 || n_meta > 0) rc |= jsonbuf_puts(h, ",");
        rc |= jsonbuf_string(h, t->name);
        rc |= jsonbuf_printf(h, ":{\"dtype\":\"%s\",\"shape\":[", dtype_names[t->dtype]);
        for (int d = 0; d < t->ndim; d++) rc |= jsonbuf_printf(h, "%s%lld", d ? "," : "", (long long)t->shape[d]);
        rc |= jsonbuf_printf(h, "],\"data_offsets\":[%zu,%zu]}", offset, offset + sizes[i]);
        offset += sizes[i];
    }
    rc |= jsonbuf_puts(h, "}");
    while (rc == 0 && h->len % 8 != 0) rc |= jsonbuf_puts(h, " ");
    return rc;
}

int st_write(const char *path, const StTensorOut *tensors, int n_tensors,
             const char *const *meta_keys, const char *const *meta_values, int n_meta,
             char *err, size_t errlen)
{
    char why[300] = "";
    if (n_tensors < 0 || n_meta < 0 || (n_tensors > 0 && !tensors) || (n_meta > 0 && (!meta_keys || !meta_values))) {
        set_error(err, errlen, "%s: st_write: bad arguments", path);
        return -1;
    }
    size_t *sizes = malloc(((size_t)n_tensors + 1) * sizeof *sizes);
    if (!sizes) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t data_total = 0;
    if (check_write_input(tensors, n_tensors, meta_keys, meta_values, n_meta, sizes, &data_total,
                          why, sizeof why) != 0) {
        set_error(err, errlen, "%s: %s", path, why);
        free(sizes);
        return -1;
    }
    JsonBuf header = {0};
    unsigned char *file = NULL;
    size_t file_size = 0;   /* 8-byte size, header, data */
    if (build_header(&header, tensors, n_tensors, sizes, meta_keys, meta_values, n_meta) == 0 &&
        data_total <= SIZE_MAX - 8 - header.len) {
        file_size = 8 + header.len + data_total;
        file = malloc(file_size);
    }
    if (!file) {
        set_error(err, errlen, "%s: out of memory building the file", path);
        jsonbuf_free(&header);
        free(sizes);
        return -1;
    }
    uint64_t header_len = header.len;
    for (int i = 0; i < 8; i++) file[i] = (unsigned char)(header_len >> (8 * i));   /* u64 little-endian */
    memcpy(file + 8, header.data, header.len);
    size_t at = 8 + header.len;
    for (int i = 0; i < n_tensors; i++) {
        if (sizes[i]) memcpy(file + at, tensors[i].data, sizes[i]);
        at += sizes[i];
    }
    int rc = atomic_write(path, file, file_size, err, errlen);
    free(file);
    jsonbuf_free(&header);
    free(sizes);
    return rc;
}

/* ----------------------------------------------------------------- read */

/* Reads a JSON number that must be an integer in [0, 2^53). */
static int json_to_count(const JsonValue *v, uint64_t *out)
{
    if (!v || v->type != JSON_NUMBER || !v->is_integer || signbit(v->number) ||
        v->number >= (double)ST_INTEGER_LIMIT)
        return -1;
    *out = (uint64_t)v->number;
    return 0;
}

static int parse_dtype(const JsonValue *v, StDtype *out)
{
    if (!v || v->type != JSON_STRING) return -1;
    for (int i = 0; i < ST_N_DTYPES; i++) {
        if (strcmp(v->string, dtype_names[i]) == 0 && strlen(v->string) == v->string_len) {
            *out = (StDtype)i;
            return 0;
        }
    }
    return -1;
}

/* Fills t (dtype, shape, sizes) and [begin, end) from one header entry.
 * data_size is the length of the data buffer. */
static int parse_tensor_entry(const JsonValue *entry, const char *shown, size_t data_size,
                              StTensor *t, uint64_t *begin, uint64_t *end, char *err, size_t errlen)
{
    if (entry->type != JSON_OBJECT) {
        set_error(err, errlen, "tensor '%s': entry is not a JSON object", shown);
        return -1;
    }
    for (int i = 0; i < entry->count; i++) {
        const char *k = entry->keys[i];
        if (strcmp(k, "dtype") != 0 && strcmp(k, "shape") != 0 && strcmp(k, "data_offsets") != 0) {
            char field[80];
            shown_name(k, field, sizeof field);
            set_error(err, errlen, "tensor '%s': unknown field '%s'", shown, field);
            return -1;
        }
    }
    const JsonValue *dtype = json_get(entry, "dtype");
    const JsonValue *shape = json_get(entry, "shape");
    const JsonValue *offsets = json_get(entry, "data_offsets");
    if (!dtype || !shape || !offsets) {
        set_error(err, errlen, "tensor '%s': missing field '%s'", shown,
                  !dtype ? "dtype" : !shape ? "shape" : "data_offsets");
        return -1;
    }
    if (parse_dtype(dtype, &t->dtype) != 0) {
        char got[40] = "(not a string)";
        if (dtype->type == JSON_STRING) shown_name(dtype->string, got, sizeof got);
        set_error(err, errlen, "tensor '%s': unsupported dtype %s (supported: F32, I32, I64, U8)", shown, got);
        return -1;
    }
    if (shape->type != JSON_ARRAY) {
        set_error(err, errlen, "tensor '%s': shape is not an array", shown);
        return -1;
    }
    if (shape->count > ST_MAX_DIMS) {
        set_error(err, errlen, "tensor '%s': shape has %d dimensions (at most %d)", shown, shape->count, ST_MAX_DIMS);
        return -1;
    }
    t->ndim = shape->count;
    for (int d = 0; d < t->ndim; d++) {
        uint64_t dim;
        if (json_to_count(&shape->items[d], &dim) != 0) {
            set_error(err, errlen, "tensor '%s': shape entry %d is not a non-negative integer below 2^53", shown, d);
            return -1;
        }
        t->shape[d] = (int64_t)dim;
    }
    if (offsets->type != JSON_ARRAY || offsets->count != 2 ||
        json_to_count(&offsets->items[0], begin) != 0 || json_to_count(&offsets->items[1], end) != 0) {
        set_error(err, errlen, "tensor '%s': data_offsets is not two non-negative integers below 2^53", shown);
        return -1;
    }
    if (*begin > *end) {
        set_error(err, errlen, "tensor '%s': data_offsets begin %llu is after end %llu", shown,
                  (unsigned long long)*begin, (unsigned long long)*end);
        return -1;
    }
    if (*end > data_size) {
        set_error(err, errlen, "tensor '%s': data_offsets end %llu is beyond the %zu-byte data buffer (file truncated?)",
                  shown, (unsigned long long)*end, data_size);
        return -1;
    }
    char dims[200];
    shown_shape(t->ndim, t->shape, dims, sizeof dims);
    if (tensor_bytes(t->ndim, t->shape, dtype_sizes[t->dtype], &t->n_elements, &t->n_bytes) != 0) {
        set_error(err, errlen, "tensor '%s': shape %s is too large", shown, dims);
        return -1;
    }
    if (t->n_bytes != *end - *begin) {
        set_error(err, errlen, "tensor '%s': shape %s of %s needs %zu bytes but data_offsets span %llu",
                  shown, dims, dtype_names[t->dtype], t->n_bytes, (unsigned long long)(*end - *begin));
        return -1;
    }
    return 0;
}

/* A tensor's byte range, for checking that ranges tile the data buffer. */
typedef struct { uint64_t begin, end; int index; } Extent;

static int compare_extents(const void *a, const void *b)
{
    const Extent *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    if (x->end != y->end) return x->end < y->end ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* The tensors must cover the data buffer exactly: sorted by offset, each
 * begins where the previous ended, and the last ends at the buffer's end. */
static int check_tiling(Extent *extents, int n, const StFile *f, size_t data_size, char *err, size_t errlen)
{
    qsort(extents, (size_t)n, sizeof *extents, compare_extents);
    uint64_t covered = 0;
    for (int i = 0; i < n; i++) {
        char shown[80];
        shown_name(f->tensors[extents[i].index].name, shown, sizeof shown);
        if (extents[i].begin < covered) {
            set_error(err, errlen, "tensor '%s': data [%llu, %llu) overlaps another tensor", shown,
                      (unsigned long long)extents[i].begin, (unsigned long long)extents[i].end);
            return -1;
        }
        if (extents[i].begin > covered) {
            set_error(err, errlen, "data bytes [%llu, %llu) before tensor '%s' belong to no tensor (a hole)",
                      (unsigned long long)covered, (unsigned long long)extents[i].begin, shown);
            return -1;
        }
        covered = extents[i].end;
    }
    if (covered != data_size) {
        set_error(err, errlen, "data bytes [%llu, %zu) at the end belong to no tensor (a hole or trailing garbage)",
                  (unsigned long long)covered, data_size);
        return -1;
    }
    return 0;
}

/* Moves "__metadata__" (an object of string values) into f. */
static int take_metadata(JsonValue *meta, StFile *f, char *err, size_t errlen)
{
    if (meta->type != JSON_OBJECT) {
        set_error(err, errlen, "__metadata__ is not a JSON object");
        return -1;
    }
    f->meta_keys = calloc((size_t)meta->count + 1, sizeof *f->meta_keys);
    f->meta_values = calloc((size_t)meta->count + 1, sizeof *f->meta_values);
    if (!f->meta_keys || !f->meta_values) {
        set_error(err, errlen, "out of memory");
        return -1;
    }
    for (int i = 0; i < meta->count; i++) {
        JsonValue *v = &meta->items[i];
        char shown[80];
        shown_name(meta->keys[i], shown, sizeof shown);
        if (v->type != JSON_STRING) {
            set_error(err, errlen, "__metadata__ value of '%s' is not a string", shown);
            return -1;
        }
        if (strlen(v->string) != v->string_len) {
            set_error(err, errlen, "__metadata__ value of '%s' contains \\u0000", shown);
            return -1;
        }
        f->meta_keys[i] = meta->keys[i];
        f->meta_values[i] = v->string;
        meta->keys[i] = NULL;
        v->string = NULL;
        f->n_meta = i + 1;
    }
    return 0;
}

/* Validates the parsed header against the data buffer and fills f. */
static int take_header(JsonValue *root, StFile *f, const unsigned char *data, size_t data_size,
                       char *err, size_t errlen)
{
    if (root->type != JSON_OBJECT) {
        set_error(err, errlen, "header is not a JSON object");
        return -1;
    }
    f->tensors = calloc((size_t)root->count + 1, sizeof *f->tensors);
    Extent *extents = calloc((size_t)root->count + 1, sizeof *extents);
    if (!f->tensors || !extents) {
        free(extents);
        set_error(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < root->count && rc == 0; i++) {
        if (strcmp(root->keys[i], ST_METADATA_KEY) == 0) {
            rc = take_metadata(&root->items[i], f, err, errlen);
            continue;
        }
        StTensor *t = &f->tensors[f->n_tensors];
        char shown[80];
        shown_name(root->keys[i], shown, sizeof shown);
        uint64_t begin, end;
        rc = parse_tensor_entry(&root->items[i], shown, data_size, t, &begin, &end, err, errlen);
        if (rc != 0) break;
        t->name = root->keys[i];
        root->keys[i] = NULL;
        t->data = data + begin;
        extents[f->n_tensors] = (Extent){ begin, end, f->n_tensors };
        f->n_tensors++;
    }
    if (rc == 0) rc = check_tiling(extents, f->n_tensors, f, data_size, err, errlen);
    free(extents);
    return rc;
}

int st_parse(unsigned char *buf, size_t size, StFile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->buf = buf;
    out->size = size;
    if (!buf) {
        set_error(err, errlen, "no data");
        return -1;
    }
    if (size < 8) {
        set_error(err, errlen, "file too short (%zu bytes) to hold the 8-byte safetensors header size", size);
        st_free(out);
        return -1;
    }
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = (header_len << 8) | buf[i];   /* u64 little-endian */
    if (header_len > size - 8) {
        set_error(err, errlen, "header size %llu is larger than the %zu bytes after it (truncated or not safetensors)",
                  (unsigned long long)header_len, size - 8);
        st_free(out);
        return -1;
    }
    if (header_len > ST_HEADER_MAX) {
        set_error(err, errlen, "header size %llu exceeds the limit of %u bytes",
                  (unsigned long long)header_len, ST_HEADER_MAX);
        st_free(out);
        return -1;
    }
    char why[300];
    JsonValue *root = json_parse((const char *)buf + 8, (size_t)header_len, why, sizeof why);
    if (!root) {
        set_error(err, errlen, "header: %s", why);
        st_free(out);
        return -1;
    }
    size_t data_start = 8 + (size_t)header_len;
    int rc = take_header(root, out, buf + data_start, size - data_start, why, sizeof why);
    json_free(root);   /* free(NULL) is fine for the keys and strings moved into out */
    if (rc != 0) {
        set_error(err, errlen, "header: %s", why);
        st_free(out);
        return -1;
    }
    return 0;
}

int st_load(const char *path, StFile *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t size;
    unsigned char *buf = read_file(path, &size, err, errlen);
    if (!buf) return -1;
    char why[400];
    if (st_parse(buf, size, out, why, sizeof why) != 0) {
        set_error(err, errlen, "%s: %s", path, why);
        return -1;
    }
    return 0;
}

void st_free(StFile *f)
{
    if (!f) return;
    for (int i = 0; i < f->n_tensors; i++) free(f->tensors[i].name);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    free(f->buf);
    memset(f, 0, sizeof *f);
}

const StTensor *st_find(const StFile *f, const char *name)
{
    if (!f || !name) return NULL;
    for (int i = 0; i < f->n_tensors; i++)
        if (strcmp(f->tensors[i].name, name) == 0) return &f->tensors[i];
    return NULL;
}

const char *st_meta(const StFile *f, const char *key)
{
    if (!f || !key) return NULL;
    for (int i = 0; i < f->n_meta; i++)
        if (strcmp(f->meta_keys[i], key) == 0) return f->meta_values[i];
    return NULL;
}

int st_read_f32(const StFile *f, const char *name, float *dst, int ndim, const int64_t *shape,
                char *err, size_t errlen)
{
    char shown[80];
    shown_name(name ? name : "", shown, sizeof shown);
    const StTensor *t = st_find(f, name);
    if (!t) {
        set_error(err, errlen, "tensor '%s' not found", shown);
        return -1;
    }
    if (t->dtype != ST_F32) {
        set_error(err, errlen, "tensor '%s' has dtype %s, expected F32", shown, dtype_names[t->dtype]);
        return -1;
    }
    int same = t->ndim == ndim;
    for (int i = 0; same && i < ndim; i++) same = t->shape[i] == shape[i];
    if (!same) {
        char have[200], want[200];
        shown_shape(t->ndim, t->shape, have, sizeof have);
        shown_shape(ndim >= 0 && ndim <= ST_MAX_DIMS ? ndim : 0, shape, want, sizeof want);
        set_error(err, errlen, "tensor '%s' has shape %s, expected %s", shown, have, want);
        return -1;
    }
    if (t->n_bytes) memcpy(dst, t->data, t->n_bytes);
    return 0;
}
