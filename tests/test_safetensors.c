/* test_safetensors.c: bit-exact round trips, the exact byte layout, and a table of hostile files. */
#include "formats/safetensors.h"
#include "base/fileio.h"
#include "formats/json.h"
#include "tests/check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static uint64_t next_random(uint64_t *state)   /* xorshift64 */
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* Builds a file: 8-byte size field (header_len_field), header text, then
 * data_len bytes of a counting pattern. */
static unsigned char *make_file(const char *header, uint64_t header_len_field, size_t data_len, size_t *size)
{
    size_t hlen = strlen(header);
    *size = 8 + hlen + data_len;
    unsigned char *buf = malloc(*size ? *size : 1);
    if (!buf) return NULL;
    for (int i = 0; i < 8; i++) buf[i] = (unsigned char)(header_len_field >> (8 * i));
    memcpy(buf + 8, header, hlen);
    for (size_t i = 0; i < data_len; i++) buf[8 + hlen + i] = (unsigned char)i;
    return buf;
}

/* Parses a copy of buf[0..size) (exactly sized, so ASan sees any overread). */
static int parse_copy(const unsigned char *buf, size_t size, StFile *f, char *err, size_t errlen)
{
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy) return -2;
    if (size) memcpy(copy, buf, size);
    return st_parse(copy, size, f, err, errlen);
}

/* Invariants of any successfully parsed file: every tensor inside the data
 * buffer, sizes consistent with shapes, tensors covering the buffer. */
static int parsed_file_consistent(const StFile *f)
{
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | f->buf[i];
    const unsigned char *data = f->buf + 8 + header_len, *end = f->buf + f->size;
    size_t total = 0;
    for (int i = 0; i < f->n_tensors; i++) {
        const StTensor *t = &f->tensors[i];
        size_t n = 1;
        for (int d = 0; d < t->ndim; d++) n *= (size_t)t->shape[d];
        size_t elem = t->dtype == ST_I64 ? 8 : t->dtype == ST_U8 ? 1 : 4;
        if (t->n_elements != n || t->n_bytes != n * elem) return 0;
        if (t->data < data || t->data > end || (size_t)(end - t->data) < t->n_bytes) return 0;
        total += t->n_bytes;
    }
    return total == (size_t)(end - data);
}

/* ---------------------------------------------------------- round trip */

static uint32_t f32_bits[] = {
    0x00000000, 0x80000000,             /* +0, -0 */
    0x00000001, 0x807FFFFF, 0x00400000, /* denormals */
    0x7F800000, 0xFF800000,             /* +-inf */
    0x7FC00000, 0x7FC00001, 0xFFBFFFFF, 0x7F800001, 0x7FA5A5A5,   /* NaNs with payloads, quiet and signalling */
    0x3F800000, 0xC0490FDB,             /* 1, -pi */
};
static int32_t i32_vals[] = { INT32_MIN, -1, 0, 1, INT32_MAX, 123456789 };
static int64_t i64_vals[] = { INT64_MIN, -1, 0, 1, INT64_MAX, (int64_t)1 << 53, 0x0102030405060708 };

static const char *meta_keys[] = { "format", "vocab", "awkward", "empty", "unicode", "\"key\" with\tstuff" };
static const char *meta_vals[] = {
    "pt", "[\"[PAD]\",\"a\\\"b\",\"c\\\\d\"]", "quote\" back\\ tab\t nl\n cr\r ctl\x01\x1f del\x7f", "",
    "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "v",
};
#define N_META 6

static void test_round_trip(const char *dir)
{
    unsigned char u8_vals[256];
    for (int i = 0; i < 256; i++) u8_vals[i] = (unsigned char)i;
    float scalar;
    uint32_t pi_bits = 0x40490FDB;
    memcpy(&scalar, &pi_bits, 4);
    StTensorOut out[] = {
        { "f32.weird", ST_F32, 2, { 2, 7 }, f32_bits },
        { "i32", ST_I32, 1, { 6 }, i32_vals },
        { "i64", ST_I64, 3, { 7, 1, 1 }, i64_vals },
        { "u8", ST_U8, 2, { 16, 16 }, u8_vals },
        { "empty", ST_F32, 2, { 0, 5 }, NULL },
        { "scalar", ST_F32, 0, { 0 }, &scalar },
        { "odd.u8", ST_U8, 1, { 3 }, u8_vals + 100 },   /* leaves the next tensor unaligned */
        { "after.odd", ST_I64, 1, { 2 }, i64_vals },
    };
    int n = (int)(sizeof out / sizeof out[0]);
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(st_write(path, out, n, meta_keys, meta_vals, N_META, err, sizeof err) == 0, "st_write: %s", err);

    StFile f;
    if (st_load(path, &f, err, sizeof err) != 0) {
        CHECK(0, "st_load: %s", err);
        return;
    }
    CHECK(f.n_tensors == n, "%d tensors, want %d", f.n_tensors, n);
    const unsigned char *expect_data = NULL;
    for (int i = 0; i < n && i < f.n_tensors; i++) {
        const StTensor *t = &f.tensors[i];
        CHECK(strcmp(t->name, out[i].name) == 0, "tensor %d keeps its place: %s", i, t->name);
        CHECK(t->dtype == out[i].dtype && t->ndim == out[i].ndim, "%s: dtype and ndim", t->name);
        for (int d = 0; d < t->ndim && d < out[i].ndim; d++)
            CHECK(t->shape[d] == out[i].shape[d], "%s: dim %d", t->name, d);
        CHECK(t->n_bytes == 0 || memcmp(t->data, out[i].data, t->n_bytes) == 0, "%s: bit-exact data", t->name);
        if (expect_data) CHECK(t->data == expect_data, "%s: laid out right after the previous tensor", t->name);
        expect_data = t->data + t->n_bytes;
        CHECK(st_find(&f, out[i].name) == t, "st_find %s", out[i].name);
    }
    CHECK(f.tensors[0].n_bytes == 56 && f.tensors[3].n_elements == 256 && f.tensors[4].n_bytes == 0 &&
          f.tensors[5].n_elements == 1, "element and byte counts");
    CHECK(expect_data == f.buf + f.size, "tensors end exactly at the end of the file");
    CHECK(f.n_meta == N_META, "%d metadata entries", f.n_meta);
    for (int i = 0; i < N_META; i++) {
        const char *v = st_meta(&f, meta_keys[i]);
        CHECK(v && strcmp(v, meta_vals[i]) == 0, "metadata %s round trips", meta_keys[i]);
    }
    CHECK(st_meta(&f, "absent") == NULL && st_find(&f, "absent") == NULL, "absent names give NULL");

    /* st_read_f32: success, wrong shape, wrong dtype, missing */
    uint32_t got[14];
    int64_t shape[2] = { 2, 7 }, wrong[2] = { 7, 2 };
    CHECK(st_read_f32(&f, "f32.weird", (float *)got, 2, shape, err, sizeof err) == 0, "read_f32: %s", err);
    CHECK(memcmp(got, f32_bits, sizeof got) == 0, "read_f32 keeps NaN payloads and -0 bit for bit");
    CHECK(st_read_f32(&f, "f32.weird", (float *)got, 2, wrong, err, sizeof err) == -1 &&
          strstr(err, "shape [2, 7], expected [7, 2]"), "wrong shape: %s", err);
    CHECK(st_read_f32(&f, "f32.weird", (float *)got, 1, shape, err, sizeof err) == -1 && strstr(err, "shape"),
          "wrong rank: %s", err);
    CHECK(st_read_f32(&f, "i32", (float *)got, 1, (int64_t[]){ 6 }, err, sizeof err) == -1 &&
          strstr(err, "dtype I32"), "wrong dtype: %s", err);
    CHECK(st_read_f32(&f, "nope", (float *)got, 1, shape, err, sizeof err) == -1 && strstr(err, "not found"),
          "missing: %s", err);
    CHECK(st_read_f32(&f, "scalar", (float *)got, 0, NULL, err, sizeof err) == 0 && got[0] == pi_bits,
          "scalar: %s", err);
    st_free(&f);
    CHECK(f.buf == NULL && f.tensors == NULL, "st_free clears");
    unlink(path);
}

/* The bytes of a one-tensor file, spelled out from the format description. */
static void test_exact_layout(const char *dir)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/exact.safetensors", dir);
    float w[2] = { 1.0f, -2.0f };
    StTensorOut t = { "w", ST_F32, 1, { 2 }, w };
    const char *k[] = { "format" }, *v[] = { "pt" };
    CHECK(st_write(path, &t, 1, k, v, 1, err, sizeof err) == 0, "st_write: %s", err);
    const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},"
                          "\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
    size_t hlen = (sizeof header - 1 + 7) / 8 * 8;   /* padded with spaces to a multiple of 8 */
    unsigned char want[256];
    memset(want, 0, sizeof want);
    want[0] = (unsigned char)hlen;                     /* u64 little-endian; hlen < 256 */
    memset(want + 8, ' ', hlen);
    memcpy(want + 8, header, sizeof header - 1);
    const unsigned char data[8] = { 0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0 };   /* 1.0f, -2.0f LE */
    memcpy(want + 8 + hlen, data, 8);
    size_t len = 0;
    unsigned char *got = read_file(path, &len, err, sizeof err);
    CHECK(got && len == 8 + hlen + 8 && memcmp(got, want, len) == 0, "file bytes match the format exactly");
    free(got);

    /* no metadata: no __metadata__ key at all */
    CHECK(st_write(path, &t, 1, NULL, NULL, 0, err, sizeof err) == 0, "st_write: %s", err);
    StFile f;
    CHECK(st_load(path, &f, err, sizeof err) == 0, "load: %s", err);
    CHECK(f.n_meta == 0 && st_meta(&f, "format") == NULL, "no metadata");
    CHECK(strstr((const char *)f.buf + 8, "__metadata__") == NULL, "no __metadata__ written");
    st_free(&f);

    /* zero tensors: a valid file with an empty data buffer */
    CHECK(st_write(path, NULL, 0, k, v, 1, err, sizeof err) == 0, "st_write: %s", err);
    CHECK(st_load(path, &f, err, sizeof err) == 0 && f.n_tensors == 0 && f.n_meta == 1, "empty load: %s", err);
    st_free(&f);
    unlink(path);
}

static void test_write_refusals(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/bad.safetensors", dir);
    float w[2] = { 0 };
    StTensorOut dup[] = { { "a", ST_F32, 1, { 2 }, w }, { "a", ST_F32, 1, { 2 }, w } };
    CHECK(st_write(path, dup, 2, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "duplicate"), "dup: %s", err);
    StTensorOut reserved = { "__metadata__", ST_F32, 1, { 2 }, w };
    CHECK(st_write(path, &reserved, 1, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "name"), "%s", err);
    StTensorOut negative = { "n", ST_F32, 1, { -2 }, w };
    CHECK(st_write(path, &negative, 1, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "shape"), "%s", err);
    StTensorOut too_many = { "n", ST_F32, ST_MAX_DIMS + 1, { 1 }, w };
    CHECK(st_write(path, &too_many, 1, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "dimensions"), "%s", err);
    StTensorOut no_data = { "n", ST_F32, 1, { 2 }, NULL };
    CHECK(st_write(path, &no_data, 1, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "no data"), "%s", err);
    StTensorOut bad_dtype = { "n", (StDtype)9, 1, { 2 }, w };
    CHECK(st_write(path, &bad_dtype, 1, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, "dtype"), "%s", err);
    const char *k[] = { "a", "a" }, *v[] = { "x", "y" }, *bad_v[] = { "\xFF" };
    CHECK(st_write(path, NULL, 0, k, v, 2, err, sizeof err) == -1 && strstr(err, "duplicate"), "%s", err);
    CHECK(st_write(path, NULL, 0, k, bad_v, 1, err, sizeof err) == -1 && strstr(err, "UTF-8"), "%s", err);
    CHECK(access(path, F_OK) != 0, "no file written by refused calls");
    char missing[512];
    snprintf(missing, sizeof missing, "%s/nodir/x.safetensors", dir);
    CHECK(st_write(missing, NULL, 0, NULL, NULL, 0, err, sizeof err) == -1 && strstr(err, missing), "%s", err);
}

/* ------------------------------------------------------------- hostile */

#define T1(dtype, shape, b, e) "{\"dtype\":\"" dtype "\",\"shape\":" shape ",\"data_offsets\":[" #b "," #e "]}"

typedef struct {
    const char *header;
    size_t data_len;
    const char *word;    /* NULL: must be accepted */
} HostileCase;

static const HostileCase hostile_cases[] = {
    { "{\"a\":" T1("F32", "[2]", 0, 8) "}", 8, NULL },
    { "{\"a\":" T1("F32", "[2]", 0, 8) "}     ", 8, NULL },                /* space padding */
    { "{}", 0, NULL },
    { "{\"a\":" T1("U8", "[0,9007199254740991]", 0, 0) "}", 0, NULL },     /* zero dim beats a huge one */
    { "{\"a\":" T1("F32", "[0]", 0, 0) ",\"b\":" T1("F32", "[0]", 0, 0) "}", 0, NULL },
    { "{\"a\":" T1("I64", "[1]", 8, 16) ",\"b\":" T1("I32", "[2]", 0, 8) "}", 16, NULL },   /* any order */
    { "{\"a\":" T1("F32", "[2]", 0, 8) "}", 4, "beyond" },
    { "{\"a\":" T1("F32", "[2]", 0, 8) "}", 12, "no tensor" },               /* trailing bytes */
    { "{}", 4, "no tensor" },
    { "{\"a\":" T1("F32", "[2]", 8, 0) "}", 8, "after end" },
    { "{\"a\":" T1("F32", "[2]", 0, 8) ",\"b\":" T1("F32", "[2]", 4, 12) "}", 12, "overlap" },
    { "{\"a\":" T1("F32", "[2]", 0, 8) ",\"b\":" T1("F32", "[2]", 0, 8) "}", 8, "overlap" },
    { "{\"a\":" T1("F32", "[1]", 0, 4) ",\"b\":" T1("F32", "[1]", 8, 12) "}", 12, "hole" },
    { "{\"a\":" T1("F32", "[1]", 4, 8) "}", 8, "hole" },
    { "{\"a\":" T1("F16", "[2]", 0, 4) "}", 4, "dtype" },
    { "{\"a\":" T1("BF16", "[2]", 0, 4) "}", 4, "dtype" },
    { "{\"a\":" T1("f32", "[2]", 0, 8) "}", 8, "dtype" },
    { "{\"a\":{\"dtype\":4,\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype" },
    { "{\"a\":{\"dtype\":\"F32\\u0000\",\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "dtype" },
    { "{\"a\":" T1("F32", "[3]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("I64", "[2]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[-2]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[2.0]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[2e0]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[\"2\"]", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[-0]", 0, 0) "}", 0, "shape" },
    { "{\"a\":" T1("F32", "2", 0, 8) "}", 8, "shape" },
    { "{\"a\":" T1("F32", "[1,1,1,1,1,1,1,1,2]", 0, 8) "}", 8, "dimensions" },
    { "{\"a\":" T1("F32", "[4294967296,4294967296,4294967296]", 0, 8) "}", 8, "too large" },
    { "{\"a\":" T1("U8", "[9007199254740992]", 0, 8) "}", 8, "shape" },     /* 2^53 */
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8,8]}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[\"0\",\"8\"]}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0.0,8]}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,9007199254740993]}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":{\"0\":8}}}", 8, "data_offsets" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "missing field 'data_offsets'" },
    { "{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 8, "missing field 'dtype'" },
    { "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8],\"extra\":1}}", 8, "unknown field" },
    { "{\"a\":[0,8]}", 8, "not a JSON object" },
    { "{\"a\":" T1("F32", "[2]", 0, 8) ",\"a\":" T1("F32", "[2]", 0, 8) "}", 8, "duplicate" },
    { "{\"__metadata__\":{\"x\":1}}", 0, "metadata" },
    { "{\"__metadata__\":{\"x\":null}}", 0, "metadata" },
    { "{\"__metadata__\":[\"x\"]}", 0, "metadata" },
    { "{\"__metadata__\":\"x\"}", 0, "metadata" },
    { "{\"__metadata__\":{\"x\":\"a\\u0000b\"}}", 0, "\\u0000" },
    { "{\"__metadata__\":{},\"__metadata__\":{}}", 0, "duplicate" },
    { "[]", 0, "not a JSON object" },
    { "\"x\"", 0, "not a JSON object" },
    { "{\"a\":", 0, "JSON" },
    { "", 0, "JSON" },
    { "{\"\xFF\":1}", 0, "UTF-8" },
    { "{\"a\":" T1("F32", "[2]", 0, 8) "} x", 8, "JSON" },
};

static void test_hostile_table(void)
{
    int n = (int)(sizeof hostile_cases / sizeof hostile_cases[0]);
    for (int i = 0; i < n; i++) {
        const HostileCase *c = &hostile_cases[i];
        size_t size;
        unsigned char *buf = make_file(c->header, strlen(c->header), c->data_len, &size);
        char err[512] = "";
        StFile f;
        int rc = buf ? parse_copy(buf, size, &f, err, sizeof err) : -2;
        free(buf);
        if (!c->word) {
            CHECK(rc == 0, "case %d should load: %s (header %s)", i, err, c->header);
            if (rc == 0) CHECK(parsed_file_consistent(&f), "case %d consistent", i);
            if (rc == 0) st_free(&f);
        } else {
            CHECK(rc == -1, "case %d should be refused (%s): header %s", i, c->word, c->header);
            if (rc == 0) st_free(&f);
            CHECK(strstr(err, c->word) != NULL, "case %d: message lacks '%s': %s", i, c->word, err);
            CHECK(rc != -1 || strncmp(err, "header", 6) == 0, "case %d: message says where: %s", i, err);
        }
    }
}

static void test_framing(void)
{
    char err[512];
    StFile f;
    size_t size;
    const char *h = "{\"a\":" T1("F32", "[2]", 0, 8) "}";
    struct { uint64_t field; const char *word; } bad_sizes[] = {
        { 1000, "larger than" }, { UINT64_MAX, "larger than" }, { (uint64_t)1 << 63, "larger than" },
        { 3, "JSON" }, { 0, "JSON" },
    };
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++) {
        unsigned char *buf = make_file(h, bad_sizes[i].field, 8, &size);
        int rc = buf ? parse_copy(buf, size, &f, err, sizeof err) : -2;
        free(buf);
        CHECK(rc == -1 && strstr(err, bad_sizes[i].word), "header size %llu: %s",
              (unsigned long long)bad_sizes[i].field, err);
    }
    for (size_t short_len = 0; short_len < 8; short_len++) {
        unsigned char tiny[8] = { 2, 0, 0, 0, 0, 0, 0, 0 };
        CHECK(parse_copy(tiny, short_len, &f, err, sizeof err) == -1 && strstr(err, "too short"),
              "%zu-byte file: %s", short_len, err);
    }
    CHECK(st_parse(NULL, 0, &f, err, sizeof err) == -1, "NULL buffer refused");

    /* a header padded with NUL bytes instead of spaces is not valid JSON */
    unsigned char nul_padded[8 + 128 + 8] = { 0 };
    size_t hlen = strlen(h);
    nul_padded[0] = (unsigned char)(hlen + 3);   /* header: h, then 3 NUL bytes; then 8 data bytes */
    memcpy(nul_padded + 8, h, hlen);
    CHECK(parse_copy(nul_padded, 8 + hlen + 3 + 8, &f, err, sizeof err) == -1 && strstr(err, "JSON"),
          "NUL padding: %s", err);
}

/* Every proper prefix of a valid file is refused; so is one extra byte. */
static void test_truncations(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/small.safetensors", dir);
    int32_t a[3] = { 1, 2, 3 };
    uint8_t b[5] = { 9, 8, 7, 6, 5 };
    StTensorOut t[] = { { "a", ST_I32, 1, { 3 }, a }, { "b", ST_U8, 2, { 5, 1 }, b } };
    const char *k[] = { "format" }, *v[] = { "pt" };
    CHECK(st_write(path, t, 2, k, v, 1, err, sizeof err) == 0, "write: %s", err);
    size_t size = 0;
    unsigned char *full = read_file(path, &size, err, sizeof err);
    unlink(path);
    if (!full) {
        CHECK(0, "read back: %s", err);
        return;
    }
    int refused = 0;
    for (size_t len = 0; len < size; len++) {
        StFile f;
        int rc = parse_copy(full, len, &f, err, sizeof err);
        if (rc == -1) refused++;
        else if (rc == 0) st_free(&f);
    }
    CHECK(refused == (int)size, "%d of %zu truncations refused", refused, size);
    unsigned char *longer = malloc(size + 1);
    if (longer) {
        memcpy(longer, full, size);
        longer[size] = 0;
        StFile f;
        CHECK(parse_copy(longer, size + 1, &f, err, sizeof err) == -1 && strstr(err, "no tensor"),
              "an extra byte refused: %s", err);
        free(longer);
    }
    free(full);
}

/* Random bit flips and byte changes of a valid file: never a crash; any
 * file still accepted must be self-consistent. */
static void test_bit_flips(const char *dir, int rounds)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/flip.safetensors", dir);
    float w[6] = { 1, 2, 3, 4, 5, 6 };
    int64_t ids[2] = { 7, 8 };
    StTensorOut t[] = { { "layer.0.w", ST_F32, 2, { 2, 3 }, w }, { "ids", ST_I64, 1, { 2 }, ids } };
    const char *k[] = { "format", "labels" }, *v[] = { "pt", "[\"neg\",\"pos\"]" };
    CHECK(st_write(path, t, 2, k, v, 2, err, sizeof err) == 0, "write: %s", err);
    size_t size = 0;
    unsigned char *valid = read_file(path, &size, err, sizeof err);
    unlink(path);
    unsigned char *work = valid ? malloc(size) : NULL;
    if (!work) {
        CHECK(0, "setup: %s", err);
        free(valid);
        return;
    }
    /* the tensor data starts after the 8-byte size and the JSON header */
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = header_len << 8 | valid[i];
    size_t data_start = (size_t)(8 + header_len);
    uint64_t rng = 0xC0FFEE;
    int accepted = 0, inconsistent = 0, in_data = 0, unchanged = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(work, valid, size);
        int flips = 1 + (int)(next_random(&rng) % 3);
        for (int i = 0; i < flips; i++) {
            size_t at = next_random(&rng) % size;
            if (next_random(&rng) % 4 == 0) work[at] = (unsigned char)next_random(&rng);
            else work[at] ^= (unsigned char)(1u << (next_random(&rng) % 8));
        }
        StFile f;
        if (parse_copy(work, size, &f, err, sizeof err) == 0) {
            accepted++;
            if (!parsed_file_consistent(&f)) inconsistent++;
            st_free(&f);
            /* where the accepted ones differ: only in tensor values, or (also) in the header */
            size_t first_change = size;
            for (size_t i = 0; i < size && first_change == size; i++)
                if (work[i] != valid[i]) first_change = i;
            if (first_change == size) unchanged++;
            else if (first_change >= data_start) in_data++;
        }
    }
    CHECK(inconsistent == 0, "%d accepted mutants were inconsistent", inconsistent);
    CHECK(accepted < rounds, "some mutants must be refused");
    /* safetensors has no checksum: a changed tensor value, or header text that
     * stays valid JSON with the same meaning to the parser, is still a valid
     * file (./train's checkpoints add a checksum in the metadata for that) */
    printf("REPORT safetensors bit flips: %d of %d mutants refused; %d still parse, as expected: %d changed only "
           "tensor values, %d header text that stays valid (a name, a metadata value, a digit), %d put a random "
           "byte back; safetensors has no checksum (./train's checkpoints add one); every accepted file is "
           "self-consistent, none crashed\n", rounds - accepted, rounds, accepted, in_data,
           accepted - in_data - unchanged, unchanged);
    free(work);
    free(valid);
}

static void test_load_errors(const char *dir)
{
    char path[512], err[512] = "";
    StFile f;
    snprintf(path, sizeof path, "%s/absent.safetensors", dir);
    CHECK(st_load(path, &f, err, sizeof err) == -1 && strncmp(err, path, strlen(path)) == 0, "missing: %s", err);
    CHECK(st_load(dir, &f, err, sizeof err) == -1 && strstr(err, "is a directory"), "directory: %s", err);
    snprintf(path, sizeof path, "%s/junk.safetensors", dir);
    CHECK(atomic_write(path, "not a safetensors file", 22, err, sizeof err) == 0, "write: %s", err);
    CHECK(st_load(path, &f, err, sizeof err) == -1 && strncmp(err, path, strlen(path)) == 0 &&
          strstr(err, "header size"), "junk names the file: %s", err);
    unlink(path);
}

int main(void)
{
    int quick = getenv("CHECK_QUICK") != NULL;
    char dir[] = "/tmp/test_safetensors.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_round_trip(dir);
    test_exact_layout(dir);
    test_write_refusals(dir);
    test_hostile_table();
    test_framing();
    test_truncations(dir);
    test_bit_flips(dir, quick ? 1000 : 5000);
    test_load_errors(dir);
    CHECK(rmdir(dir) == 0, "no files (or temporaries) left in %s", dir);
    return check_summary("test_safetensors");
}
