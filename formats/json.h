/* json.h: a small strict JSON reader (RFC 8259) and string escaping for
 * writers. Used by the safetensors header, checkpoint metadata and run.json. */
#ifndef JSON_H
#define JSON_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } JsonType;

typedef struct JsonValue JsonValue;
struct JsonValue {
    JsonType type;
    int boolean;
    double number;
    char *string;         /* JSON_STRING: decoded UTF-8, NUL-terminated (may hold \u0000 as-is: see string_len) */
    size_t string_len;
    JsonValue *items;     /* JSON_ARRAY elements or JSON_OBJECT values */
    char **keys;          /* JSON_OBJECT keys (decoded) */
    int count;
    int is_integer;       /* JSON_NUMBER written without fraction or exponent (so exact when |n| < 2^53) */
};

/* Parses text[0..len). Returns a tree (free with json_free) or NULL with a
 * message naming the byte offset. Depth is limited; never crashes. */
JsonValue *json_parse(const char *text, size_t len, char *err, size_t errlen);
void json_free(JsonValue *v);
const JsonValue *json_get(const JsonValue *object, const char *key);   /* NULL if absent */

/* Appends s as a quoted, escaped JSON string to a growable buffer.
 * Returns 0, -1 on allocation failure. data stays NUL-terminated.
 * Bytes that are not valid UTF-8 are written as U+FFFD so the output is
 * always valid JSON (check json_utf8_valid first where that matters). */
typedef struct { char *data; size_t len, cap; } JsonBuf;
int jsonbuf_append(JsonBuf *b, const char *s, size_t n);
int jsonbuf_puts(JsonBuf *b, const char *s);
int jsonbuf_printf(JsonBuf *b, const char *fmt, ...);
/* x as printf's "%.4f" writes it with trailing zeros (and a trailing '.')
 * dropped: 0.25 as 0.25, 1.0 as 1; the compact numbers of the probe
 * record, written without a printf call per number. */
int jsonbuf_fixed4(JsonBuf *b, float x);
int jsonbuf_string(JsonBuf *b, const char *s);       /* quoted and escaped */
int jsonbuf_string_n(JsonBuf *b, const char *s, size_t n);   /* may hold NUL bytes */
void jsonbuf_free(JsonBuf *b);
/* 1 if s[0..n) is well-formed UTF-8 (no overlongs, surrogates or > U+10FFFF). */
int json_utf8_valid(const char *s, size_t n);
/* Encodes an array of strings as a JSON array into a new malloc'd string. */
char *json_string_array(const char *const *items, int n);
/* Decodes a JSON array of strings; returns count or -1 with a message.
 * *items_out gets count+1 malloc'd pointers (the last NULL), each string
 * malloc'd; strings holding \u0000 are refused. Free with json_free_string_array. */
int json_parse_string_array(const char *text, char ***items_out, char *err, size_t errlen);
void json_free_string_array(char **items, int n);

#endif
