/* json.c: a strict RFC 8259 JSON parser into a tree, and a growable buffer for writing JSON. */
#include "formats/json.h"

#include "base/fileio.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 64
/* Each value costs a JsonValue (~56 bytes) however short its text ("0,"),
 * so a cap keeps a hostile document from asking for gigabytes. */
#define JSON_MAX_VALUES 2000000

/* ---------------------------------------------------------------- UTF-8 */

/* Length of the well-formed UTF-8 sequence starting at s (1..4), or 0 when
 * the bytes there are not one (Unicode table 3-7: no overlong forms, no
 * surrogates D800-DFFF, nothing above U+10FFFF). */
static size_t utf8_sequence_length(const unsigned char *s, size_t avail)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;   /* allowed range of the second byte */
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0) lo = 0xA0;          /* overlong below U+0800 */
        if (c == 0xED) hi = 0x9F;          /* surrogates */
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0) lo = 0x90;          /* overlong below U+10000 */
        if (c == 0xF4) hi = 0x8F;          /* above U+10FFFF */
    } else {
        return 0;
    }
    if (avail < n) return 0;
    if (s[1] < lo || s[1] > hi) return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF) return 0;
    return n;
}

int json_utf8_valid(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t step = utf8_sequence_length(u + i, n - i);
        if (step == 0) return 0;
        i += step;
    }
    return 1;
}

/* Writes code point cp (<= 0x10FFFF, not a surrogate) as UTF-8; returns length. */
static size_t utf8_encode(unsigned cp, char out[4])
{
    if (cp < 0x80) { out[0] = (char)cp; return 1; }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* -------------------------------------------------------------- JsonBuf */

/* Makes room for extra more bytes plus the terminating NUL. */
static int jsonbuf_reserve(JsonBuf *b, size_t extra)
{
    if (extra > SIZE_MAX - b->len - 1) return -1;
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *grown = realloc(b->data, cap);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

int jsonbuf_append(JsonBuf *b, const char *s, size_t n)
{
    if (jsonbuf_reserve(b, n) != 0) return -1;
    if (n) memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int jsonbuf_puts(JsonBuf *b, const char *s)
{
    return jsonbuf_append(b, s, strlen(s));
}

int jsonbuf_fixed4(JsonBuf *b, float x)
{
    /* x * 10^4 is exact in double (24 + 14 bits), and nearbyint rounds it
     * half to even as printf rounds the exact value: the same digits */
    double scaled = (double)x * 10000.0;
    if (!(fabs(scaled) < 1e15) || signbit(x)) {   /* NaN, infinities and signs: printf's own way */
        char v[64];
        int n = snprintf(v, sizeof v, "%.4f", (double)x);
        while (n > 1 && v[n - 1] == '0') v[--n] = '\0';   /* "%.4f" always has its '.' */
        if (v[n - 1] == '.') v[--n] = '\0';
        return jsonbuf_append(b, v, (size_t)n);
    }
    unsigned long long units = (unsigned long long)nearbyint(scaled), whole = units / 10000;
    unsigned frac = (unsigned)(units % 10000);
    char v[32], *end = v + sizeof v, *p = end;
    int digits = 4;
    while (digits > 0 && frac % 10 == 0) frac /= 10, digits--;   /* trailing zeros dropped */
    for (int i = 0; i < digits; i++, frac /= 10) *--p = (char)('0' + frac % 10);
    if (digits > 0) *--p = '.';
    do *--p = (char)('0' + whole % 10); while ((whole /= 10) > 0);
    return jsonbuf_append(b, p, (size_t)(end - p));
}

int jsonbuf_printf(JsonBuf *b, const char *fmt, ...)
{
    va_list ap, ap2;
    va_start(ap, fmt);
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    int rc = -1;
    if (n >= 0 && jsonbuf_reserve(b, (size_t)n) == 0) {
        vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap2);
        b->len += (size_t)n;
        rc = 0;
    }
    va_end(ap2);
    return rc;
}

/* Appends the JSON escape for one byte that may not appear raw in a string. */
static int append_escape(JsonBuf *b, unsigned char c)
{
    switch (c) {
    case '"':  return jsonbuf_append(b, "\\\"", 2);
    case '\\': return jsonbuf_append(b, "\\\\", 2);
    case '\n': return jsonbuf_append(b, "\\n", 2);
    case '\t': return jsonbuf_append(b, "\\t", 2);
    case '\r': return jsonbuf_append(b, "\\r", 2);
    case '\b': return jsonbuf_append(b, "\\b", 2);
    case '\f': return jsonbuf_append(b, "\\f", 2);
    default:   return jsonbuf_printf(b, "\\u%04x", (unsigned)c);
    }
}

int jsonbuf_string_n(JsonBuf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (jsonbuf_append(b, "\"", 1) != 0) return -1;
    size_t i = 0;
    while (i < n) {
        /* copy a run of bytes that need no escaping in one go */
        size_t run = i;
        while (run < n && u[run] >= 0x20 && u[run] < 0x7F && u[run] != '"' && u[run] != '\\') run++;
        if (run > i && jsonbuf_append(b, s + i, run - i) != 0) return -1;
        i = run;
        if (i >= n) break;
        if (u[i] < 0x80) {                       /* quote, backslash, control, DEL */
            if (append_escape(b, u[i]) != 0) return -1;
            i++;
            continue;
        }
        size_t len = utf8_sequence_length(u + i, n - i);
        if (len == 0) {                          /* invalid byte: U+FFFD keeps the output valid */
            if (jsonbuf_append(b, "\\ufffd", 6) != 0) return -1;
            i++;
        } else {
            if (jsonbuf_append(b, s + i, len) != 0) return -1;
            i += len;
        }
    }
    return jsonbuf_append(b, "\"", 1);
}

int jsonbuf_string(JsonBuf *b, const char *s)
{
    return jsonbuf_string_n(b, s, strlen(s));
}

void jsonbuf_free(JsonBuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

/* --------------------------------------------------------------- parser */

typedef struct {
    const char *text;
    size_t len;
    size_t pos;
    int depth;
    size_t values;        /* values parsed so far, against JSON_MAX_VALUES */
    char *err;
    size_t errlen;
} Parser;

/* Records "invalid JSON at byte N: what"; always returns -1. */
static int parse_fail(Parser *p, size_t at, const char *fmt, ...)
{
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    set_error(p->err, p->errlen, "invalid JSON at byte %zu: %s", at, what);
    return -1;
}

/* Describes the byte at pos for a message: 'x', byte 0xNN, or end of input. */
static void describe_byte(const Parser *p, size_t pos, char *out, size_t outlen)
{
    if (pos >= p->len) snprintf(out, outlen, "end of input");
    else {
        unsigned char c = (unsigned char)p->text[pos];
        if (c >= 0x20 && c < 0x7F) snprintf(out, outlen, "'%c'", c);
        else snprintf(out, outlen, "byte 0x%02x", c);
    }
}

static int unexpected(Parser *p, const char *expected)
{
    char got[32];
    describe_byte(p, p->pos, got, sizeof got);
    return parse_fail(p, p->pos, "expected %s, found %s", expected, got);
}

static void skip_space(Parser *p)
{
    while (p->pos < p->len) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        p->pos++;
    }
}

static int parse_value(Parser *p, JsonValue *out);

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits of a \u escape at p->pos. */
static int parse_hex4(Parser *p, unsigned *out)
{
    if (p->len - p->pos < 4) return parse_fail(p, p->pos, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hex_value(p->text[p->pos + (size_t)i]);
        if (h < 0) return parse_fail(p, p->pos + (size_t)i, "invalid hex digit in \\u escape");
        v = v * 16 + (unsigned)h;
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* Decodes a \uXXXX escape (p->pos just after the 'u'), joining a UTF-16
 * surrogate pair \uD8xx\uDCxx into one code point, and appends its UTF-8. */
static int parse_unicode_escape(Parser *p, JsonBuf *b)
{
    size_t start = p->pos - 2;
    unsigned cp;
    if (parse_hex4(p, &cp) != 0) return -1;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return parse_fail(p, start, "lone low surrogate \\u%04x", cp);
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        if (p->len - p->pos < 2 || p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u')
            return parse_fail(p, start, "high surrogate \\u%04x not followed by a low surrogate", cp);
        p->pos += 2;
        unsigned low;
        if (parse_hex4(p, &low) != 0) return -1;
        if (low < 0xDC00 || low > 0xDFFF)
            return parse_fail(p, start, "high surrogate \\u%04x followed by \\u%04x, not a low surrogate", cp, low);
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    char utf8[4];
    size_t n = utf8_encode(cp, utf8);
    if (jsonbuf_append(b, utf8, n) != 0) return parse_fail(p, start, "out of memory");
    return 0;
}

/* Decodes one escape sequence; p->pos is on the backslash. */
static int parse_escape(Parser *p, JsonBuf *b)
{
    size_t start = p->pos;
    if (p->pos + 1 >= p->len) return parse_fail(p, start, "unterminated string");
    char c = p->text[p->pos + 1];
    p->pos += 2;
    const char *plain = NULL;
    switch (c) {
    case '"':  plain = "\""; break;
    case '\\': plain = "\\"; break;
    case '/':  plain = "/"; break;
    case 'b':  plain = "\b"; break;
    case 'f':  plain = "\f"; break;
    case 'n':  plain = "\n"; break;
    case 'r':  plain = "\r"; break;
    case 't':  plain = "\t"; break;
    case 'u':  return parse_unicode_escape(p, b);
    default: {
        char got[32];
        describe_byte(p, start + 1, got, sizeof got);
        return parse_fail(p, start, "invalid escape \\ followed by %s", got);
    }
    }
    if (jsonbuf_append(b, plain, 1) != 0) return parse_fail(p, start, "out of memory");
    return 0;
}

/* Length of the raw text of the string whose opening quote is at start, up
 * to its closing quote; -1 with an error when it has none. */
static int raw_string_length(Parser *p, size_t start, size_t *raw_len)
{
    size_t i = start + 1;
    while (i < p->len && p->text[i] != '"') i += p->text[i] == '\\' ? 2 : 1;
    if (i >= p->len) return parse_fail(p, start, "unterminated string");
    *raw_len = i - start - 1;
    return 0;
}

/* Parses a string literal at p->pos (on the opening quote) into a new
 * malloc'd NUL-terminated buffer. Decoding never lengthens the text (an
 * escape is at least as long as its UTF-8), so the buffer is allocated once
 * at the raw length. */
static int parse_string(Parser *p, char **out, size_t *out_len)
{
    const unsigned char *u = (const unsigned char *)p->text;
    size_t start = p->pos, raw_len = 0;
    if (raw_string_length(p, start, &raw_len) != 0) return -1;
    JsonBuf b = { malloc(raw_len + 1), 0, raw_len + 1 };
    if (!b.data) return parse_fail(p, start, "out of memory for a %zu-byte string", raw_len);
    b.data[0] = '\0';
    p->pos++;
    for (;;) {
        size_t run = p->pos;
        while (run < p->len && u[run] >= 0x20 && u[run] < 0x80 && u[run] != '"' && u[run] != '\\') run++;
        if (run > p->pos && jsonbuf_append(&b, p->text + p->pos, run - p->pos) != 0) {
            jsonbuf_free(&b);
            return parse_fail(p, start, "out of memory");
        }
        p->pos = run;
        if (p->pos >= p->len) {
            jsonbuf_free(&b);
            return parse_fail(p, start, "unterminated string");
        }
        unsigned char c = u[p->pos];
        int rc = 0;
        if (c == '"') {
            p->pos++;
            break;
        } else if (c == '\\') {
            rc = parse_escape(p, &b);
        } else if (c < 0x20) {
            rc = parse_fail(p, p->pos, "control character 0x%02x in string (must be escaped)", c);
        } else {
            size_t n = utf8_sequence_length(u + p->pos, p->len - p->pos);
            if (n == 0) rc = parse_fail(p, p->pos, "invalid UTF-8 in string");
            else if (jsonbuf_append(&b, p->text + p->pos, n) != 0) rc = parse_fail(p, start, "out of memory");
            else p->pos += n;
        }
        if (rc != 0) {
            jsonbuf_free(&b);
            return -1;
        }
    }
    *out = b.data;
    *out_len = b.len;
    return 0;
}

static void skip_digits(Parser *p)
{
    while (p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9') p->pos++;
}

static int at_digit(const Parser *p)
{
    return p->pos < p->len && p->text[p->pos] >= '0' && p->text[p->pos] <= '9';
}

/* number = [ "-" ] ( "0" / [1-9] *DIGIT ) [ "." 1*DIGIT ] [ ( "e" / "E" ) [ "+" / "-" ] 1*DIGIT ] */
static int parse_number(Parser *p, JsonValue *out)
{
    size_t start = p->pos;
    int is_integer = 1;
    if (p->text[p->pos] == '-') p->pos++;
    if (!at_digit(p)) return unexpected(p, "a digit");
    if (p->text[p->pos] == '0') {
        p->pos++;
        if (at_digit(p)) return parse_fail(p, start, "leading zeros are not allowed in numbers");
    } else {
        skip_digits(p);
    }
    if (p->pos < p->len && p->text[p->pos] == '.') {
        p->pos++;
        if (!at_digit(p)) return unexpected(p, "a digit after the decimal point");
        skip_digits(p);
        is_integer = 0;
    }
    if (p->pos < p->len && (p->text[p->pos] == 'e' || p->text[p->pos] == 'E')) {
        p->pos++;
        if (p->pos < p->len && (p->text[p->pos] == '+' || p->text[p->pos] == '-')) p->pos++;
        if (!at_digit(p)) return unexpected(p, "a digit in the exponent");
        skip_digits(p);
        is_integer = 0;
    }
    /* strtod needs a NUL-terminated copy; the grammar above already matched */
    size_t n = p->pos - start;
    char small[64];
    char *copy = n < sizeof small ? small : malloc(n + 1);
    if (!copy) return parse_fail(p, start, "out of memory");
    memcpy(copy, p->text + start, n);
    copy[n] = '\0';
    double value = strtod(copy, NULL);
    if (copy != small) free(copy);
    if (!isfinite(value)) return parse_fail(p, start, "number out of range");
    out->type = JSON_NUMBER;
    out->number = value;
    out->is_integer = is_integer;
    return 0;
}

static int parse_literal(Parser *p, JsonValue *out)
{
    static const struct { const char *word; JsonType type; int boolean; } literals[] = {
        { "true", JSON_BOOL, 1 }, { "false", JSON_BOOL, 0 }, { "null", JSON_NULL, 0 },
    };
    for (size_t i = 0; i < sizeof literals / sizeof literals[0]; i++) {
        size_t n = strlen(literals[i].word);
        if (p->len - p->pos >= n && memcmp(p->text + p->pos, literals[i].word, n) == 0) {
            p->pos += n;
            out->type = literals[i].type;
            out->boolean = literals[i].boolean;
            return 0;
        }
    }
    return unexpected(p, "a JSON value");
}

/* Grows v->items (and v->keys for objects) to hold one more entry; the new
 * slot is zeroed and counted so that a failure inside it is still freed. */
static JsonValue *push_slot(Parser *p, JsonValue *v, int *cap, size_t at)
{
    if (v->count == *cap) {
        if (*cap > INT_MAX / 2) {
            parse_fail(p, at, "too many elements");
            return NULL;
        }
        int new_cap = *cap ? *cap * 2 : 4;
        JsonValue *items = realloc(v->items, (size_t)new_cap * sizeof *items);
        if (!items) { parse_fail(p, at, "out of memory"); return NULL; }
        v->items = items;
        if (v->type == JSON_OBJECT) {
            char **keys = realloc(v->keys, (size_t)new_cap * sizeof *keys);
            if (!keys) { parse_fail(p, at, "out of memory"); return NULL; }
            v->keys = keys;
        }
        *cap = new_cap;
    }
    JsonValue *slot = &v->items[v->count];
    memset(slot, 0, sizeof *slot);
    if (v->type == JSON_OBJECT) v->keys[v->count] = NULL;
    v->count++;
    return slot;
}

static int enter(Parser *p)
{
    if (++p->depth > JSON_MAX_DEPTH) return parse_fail(p, p->pos, "nesting deeper than %d levels", JSON_MAX_DEPTH);
    return 0;
}

static int parse_array(Parser *p, JsonValue *out)
{
    int cap = 0;
    out->type = JSON_ARRAY;
    if (enter(p) != 0) return -1;
    p->pos++;
    skip_space(p);
    if (p->pos < p->len && p->text[p->pos] == ']') {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        JsonValue *slot = push_slot(p, out, &cap, p->pos);
        if (!slot || parse_value(p, slot) != 0) return -1;
        skip_space(p);
        if (p->pos < p->len && p->text[p->pos] == ',') { p->pos++; continue; }
        if (p->pos < p->len && p->text[p->pos] == ']') { p->pos++; break; }
        return unexpected(p, "',' or ']' in array");
    }
    p->depth--;
    return 0;
}

static int compare_key_pointers(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Refuses an object with a repeated key (sorts a copy of the key pointers). */
static int check_duplicate_keys(Parser *p, const JsonValue *v, size_t at)
{
    if (v->count < 2) return 0;
    char **sorted = malloc((size_t)v->count * sizeof *sorted);
    if (!sorted) return parse_fail(p, at, "out of memory");
    memcpy(sorted, v->keys, (size_t)v->count * sizeof *sorted);
    qsort(sorted, (size_t)v->count, sizeof *sorted, compare_key_pointers);
    int rc = 0;
    for (int i = 1; i < v->count && rc == 0; i++) {
        if (strcmp(sorted[i - 1], sorted[i]) == 0) {
            char shown[64];
            size_t j = 0;
            for (const char *k = sorted[i]; *k && j + 4 < sizeof shown; k++)
                shown[j++] = (unsigned char)*k >= 0x20 && *k != 0x7F ? *k : '?';
            shown[j] = '\0';
            rc = parse_fail(p, at, "duplicate key \"%s%s\" in object", shown, strlen(sorted[i]) > j ? "..." : "");
        }
    }
    free(sorted);
    return rc;
}

static int parse_object(Parser *p, JsonValue *out)
{
    int cap = 0;
    size_t start = p->pos;
    out->type = JSON_OBJECT;
    if (enter(p) != 0) return -1;
    p->pos++;
    skip_space(p);
    if (p->pos < p->len && p->text[p->pos] == '}') {
        p->pos++;
        p->depth--;
        return 0;
    }
    for (;;) {
        skip_space(p);
        if (p->pos >= p->len || p->text[p->pos] != '"') return unexpected(p, "a string key in object");
        size_t key_at = p->pos;
        JsonValue *slot = push_slot(p, out, &cap, key_at);
        if (!slot) return -1;
        char *key;
        size_t key_len;
        if (parse_string(p, &key, &key_len) != 0) return -1;
        out->keys[out->count - 1] = key;
        if (strlen(key) != key_len) return parse_fail(p, key_at, "object key contains \\u0000");
        skip_space(p);
        if (p->pos >= p->len || p->text[p->pos] != ':') return unexpected(p, "':' after object key");
        p->pos++;
        if (parse_value(p, slot) != 0) return -1;
        skip_space(p);
        if (p->pos < p->len && p->text[p->pos] == ',') { p->pos++; continue; }
        if (p->pos < p->len && p->text[p->pos] == '}') { p->pos++; break; }
        return unexpected(p, "',' or '}' in object");
    }
    p->depth--;
    return check_duplicate_keys(p, out, start);
}

static int parse_value(Parser *p, JsonValue *out)
{
    skip_space(p);
    if (p->pos >= p->len) return unexpected(p, "a JSON value");
    if (++p->values > JSON_MAX_VALUES) return parse_fail(p, p->pos, "more than %d values in one document", JSON_MAX_VALUES);
    char c = p->text[p->pos];
    if (c == '{') return parse_object(p, out);
    if (c == '[') return parse_array(p, out);
    if (c == '"') {
        out->type = JSON_STRING;
        return parse_string(p, &out->string, &out->string_len);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_number(p, out);
    return parse_literal(p, out);
}

/* Frees what v owns, not v itself. */
static void free_contents(JsonValue *v)
{
    free(v->string);
    for (int i = 0; i < v->count; i++) {
        if (v->items) free_contents(&v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

JsonValue *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    Parser p = { text, len, 0, 0, 0, err, errlen };
    if (!text) {
        parse_fail(&p, 0, "no input");
        return NULL;
    }
    JsonValue *root = calloc(1, sizeof *root);
    if (!root) {
        parse_fail(&p, 0, "out of memory");
        return NULL;
    }
    int rc = parse_value(&p, root);
    if (rc == 0) {
        skip_space(&p);
        if (p.pos < p.len) rc = unexpected(&p, "end of input after the JSON value");
    }
    if (rc != 0) {
        json_free(root);
        return NULL;
    }
    return root;
}

void json_free(JsonValue *v)
{
    if (!v) return;
    free_contents(v);
    free(v);
}

const JsonValue *json_get(const JsonValue *object, const char *key)
{
    if (!object || object->type != JSON_OBJECT || !key) return NULL;
    for (int i = 0; i < object->count; i++)
        if (strcmp(object->keys[i], key) == 0) return &object->items[i];
    return NULL;
}

/* ------------------------------------------------------- string arrays */

char *json_string_array(const char *const *items, int n)
{
    JsonBuf b = {0};
    int rc = jsonbuf_append(&b, "[", 1);
    for (int i = 0; i < n && rc == 0; i++) {
        if (i > 0) rc = jsonbuf_append(&b, ",", 1);
        if (rc == 0) rc = items[i] ? jsonbuf_string(&b, items[i]) : jsonbuf_puts(&b, "null");
    }
    if (rc == 0) rc = jsonbuf_append(&b, "]", 1);
    if (rc != 0) {
        jsonbuf_free(&b);
        return NULL;
    }
    return b.data;
}


int json_parse_string_array(const char *text, char ***items_out, char *err, size_t errlen)
{
    *items_out = NULL;
    if (!text) {
        set_error(err, errlen, "expected a JSON array of strings, got nothing");
        return -1;
    }
    JsonValue *root = json_parse(text, strlen(text), err, errlen);
    if (!root) return -1;
    if (root->type != JSON_ARRAY) {
        set_error(err, errlen, "expected a JSON array of strings");
        json_free(root);
        return -1;
    }
    for (int i = 0; i < root->count; i++) {
        const JsonValue *item = &root->items[i];
        const char *why = item->type != JSON_STRING ? "is not a string"
                        : strlen(item->string) != item->string_len ? "contains \\u0000" : NULL;
        if (why) {
            set_error(err, errlen, "JSON array of strings: element %d %s", i, why);
            json_free(root);
            return -1;
        }
    }
    char **items = malloc(((size_t)root->count + 1) * sizeof *items);
    if (!items) {
        set_error(err, errlen, "out of memory decoding %d strings", root->count);
        json_free(root);
        return -1;
    }
    int n = root->count;
    for (int i = 0; i < n; i++) {       /* take the strings over from the tree */
        items[i] = root->items[i].string;
        root->items[i].string = NULL;
    }
    items[n] = NULL;
    json_free(root);
    *items_out = items;
    return n;
}

void json_free_string_array(char **items, int n)
{
    if (!items) return;
    for (int i = 0; i < n; i++) free(items[i]);
    free(items);
}
