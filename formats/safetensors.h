/* safetensors.h: reading and writing the safetensors format (u64 LE header
 * size, JSON header, little-endian row-major data, __metadata__ string map).
 * Loading validates everything and never trusts the file. */
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define ST_MAX_DIMS 8

typedef enum { ST_F32 = 0, ST_I32 = 1, ST_I64 = 2, ST_U8 = 3 } StDtype;

/* A tensor to write: data points at count(shape) elements of dtype. */
typedef struct {
    const char *name;
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    const void *data;
} StTensorOut;

/* A tensor found in a loaded file. */
typedef struct {
    char *name;
    StDtype dtype;
    int ndim;
    int64_t shape[ST_MAX_DIMS];
    size_t n_elements;
    const unsigned char *data;   /* points into StFile.buf, little-endian */
    size_t n_bytes;
} StTensor;

typedef struct {
    unsigned char *buf;          /* whole file */
    size_t size;
    StTensor *tensors;
    int n_tensors;
    char **meta_keys;
    char **meta_values;
    int n_meta;
} StFile;

/* Writes atomically (temporary file in the same directory, fsync, rename).
 * Metadata values are arbitrary strings (JSON-escaped on write).
 * Returns 0, or -1 with a message in err. */
int st_write(const char *path, const StTensorOut *tensors, int n_tensors,
             const char *const *meta_keys, const char *const *meta_values, int n_meta,
             char *err, size_t errlen);

/* Parses a buffer already in memory; takes ownership of buf (freed by st_free,
 * also on failure). Returns 0, or -1 with a message in err. */
int st_parse(unsigned char *buf, size_t size, StFile *out, char *err, size_t errlen);
/* Reads and parses a file; messages start with the path. */
int st_load(const char *path, StFile *out, char *err, size_t errlen);
void st_free(StFile *f);

const StTensor *st_find(const StFile *f, const char *name);
const char *st_meta(const StFile *f, const char *key);   /* NULL when absent */
/* Copies an F32 tensor into dst after checking dtype and exact shape. */
int st_read_f32(const StFile *f, const char *name, float *dst, int ndim, const int64_t *shape,
                char *err, size_t errlen);

#endif
