/* test_json.c: the strict JSON parser, the string escaper, the fixed-point number writer and string-array round trips. */
#include "formats/json.h"
#include "tests/check.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static JsonValue *parse(const char *text, char *err, size_t errlen)
{
    return json_parse(text, strlen(text), err, errlen);
}

/* Expects text to be refused with a message holding word. */
static void expect_refused(const char *text, size_t len, const char *word)
{
    char err[256] = "";
    JsonValue *v = json_parse(text, len, err, sizeof err);
    CHECK(v == NULL, "accepted invalid JSON: %.60s", text);
    CHECK(strstr(err, word) != NULL, "message for %.60s lacks '%s': %s", text, word, err);
    CHECK(strstr(err, "byte") != NULL, "message for %.60s gives no byte offset: %s", text, err);
    json_free(v);
}

static void test_values(void)
{
    char err[256];
    JsonValue *v = parse(" {\"a\": [1, -2.5, 3e2, true, false, null], \"b\": {\"c\": \"d\"}, \"e\": -0} ",
                         err, sizeof err);
    CHECK(v != NULL, "parse failed: %s", err);
    if (!v) return;
    CHECK(v->type == JSON_OBJECT && v->count == 3, "root object with 3 keys");
    const JsonValue *a = json_get(v, "a");
    CHECK(a && a->type == JSON_ARRAY && a->count == 6, "a is a 6-array");
    if (a && a->count == 6) {
        CHECK(a->items[0].type == JSON_NUMBER && a->items[0].number == 1 && a->items[0].is_integer, "1");
        CHECK(a->items[1].number == -2.5 && !a->items[1].is_integer, "-2.5");
        CHECK(a->items[2].number == 300 && !a->items[2].is_integer, "3e2 is 300, not written as integer");
        CHECK(a->items[3].type == JSON_BOOL && a->items[3].boolean == 1, "true");
        CHECK(a->items[4].type == JSON_BOOL && a->items[4].boolean == 0, "false");
        CHECK(a->items[5].type == JSON_NULL, "null");
    }
    const JsonValue *c = json_get(json_get(v, "b"), "c");
    CHECK(c && c->type == JSON_STRING && strcmp(c->string, "d") == 0 && c->string_len == 1, "b.c == d");
    const JsonValue *e = json_get(v, "e");
    CHECK(e && e->number == 0 && signbit(e->number), "-0 keeps its sign");
    CHECK(json_get(v, "zz") == NULL, "absent key gives NULL");
    CHECK(json_get(a, "a") == NULL, "json_get on an array gives NULL");
    json_free(v);

    v = parse("[0.1, 1E-3, 123456789012345678, 1.7976931348623157e308, 4.9e-324]", err, sizeof err);
    CHECK(v && v->count == 5, "numbers parse: %s", err);
    if (v && v->count == 5) {
        CHECK(v->items[0].number == 0.1, "0.1 correctly rounded");
        CHECK(v->items[1].number == 0.001, "1E-3");
        CHECK(v->items[2].number == 123456789012345678.0, "large integer");
        CHECK(v->items[3].number == 1.7976931348623157e308, "DBL_MAX");
        CHECK(v->items[4].number > 0, "smallest denormal");
    }
    json_free(v);

    v = parse("\"\"", err, sizeof err);
    CHECK(v && v->type == JSON_STRING && v->string && v->string_len == 0 && v->string[0] == 0, "empty string");
    json_free(v);
    v = parse("[]", err, sizeof err);
    CHECK(v && v->type == JSON_ARRAY && v->count == 0, "empty array");
    json_free(v);
    v = parse("{}", err, sizeof err);
    CHECK(v && v->type == JSON_OBJECT && v->count == 0, "empty object");
    json_free(v);
}

static void test_strings(void)
{
    char err[256];
    JsonValue *v = parse("\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\u20AC \\ud83d\\ude00 \\u0000end\"",
                         err, sizeof err);
    CHECK(v != NULL, "escapes: %s", err);
    if (v) {
        static const char want[] = "q\" b\\ s/ \b\f\n\r\t \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \0end";
        CHECK(v->string_len == sizeof want - 1, "decoded length %zu, want %zu", v->string_len, sizeof want - 1);
        CHECK(v->string_len == sizeof want - 1 && memcmp(v->string, want, sizeof want) == 0,
              "decoded bytes (with NUL terminator) match");
    }
    json_free(v);
    v = parse("\"raw \xC3\xA9 \xF4\x8F\xBF\xBF\"", err, sizeof err);
    CHECK(v && strcmp(v->string, "raw \xC3\xA9 \xF4\x8F\xBF\xBF") == 0, "raw UTF-8 kept: %s", err);
    json_free(v);
}

static void test_refusals(void)
{
    expect_refused("", 0, "expected a JSON value");
    expect_refused("   ", 3, "end of input");
    expect_refused("[1,]", 4, "expected a JSON value");
    expect_refused("{\"a\":1,}", 8, "string key");
    expect_refused("{\"a\" 1}", 7, "':'");
    expect_refused("{a:1}", 5, "string key");
    expect_refused("[1 2]", 5, "','");
    expect_refused("{} x", 4, "end of input");
    expect_refused("{}{}", 4, "end of input");
    expect_refused("01", 2, "leading zero");
    expect_refused("1.", 2, "decimal point");
    expect_refused(".5", 2, "JSON value");
    expect_refused("+1", 2, "JSON value");
    expect_refused("-", 1, "digit");
    expect_refused("1e", 2, "exponent");
    expect_refused("1e400", 5, "out of range");
    expect_refused("-1e400", 6, "out of range");
    expect_refused("tru", 3, "JSON value");
    expect_refused("nul", 3, "JSON value");
    expect_refused("True", 4, "JSON value");
    expect_refused("NaN", 3, "JSON value");
    expect_refused("\"abc", 4, "unterminated");
    expect_refused("\"abc\\", 5, "unterminated");
    expect_refused("\"a\tb\"", 5, "control character");
    expect_refused("\"a\nb\"", 5, "control character");
    expect_refused("\"\\x\"", 4, "invalid escape");
    expect_refused("\"\\u12zz\"", 8, "hex");
    expect_refused("\"\\u12", 5, "unterminated");
    expect_refused("\"\\u1\"", 5, "truncated");
    expect_refused("\"\\udc00\"", 8, "lone low surrogate");
    expect_refused("\"\\ud800\"", 8, "high surrogate");
    expect_refused("\"\\ud800\\u0041\"", 14, "not a low surrogate");
    expect_refused("\"\xC0\x80\"", 4, "UTF-8");           /* overlong NUL */
    expect_refused("\"\xE0\x80\xAF\"", 5, "UTF-8");       /* overlong '/' */
    expect_refused("\"\xED\xA0\x80\"", 5, "UTF-8");       /* encoded surrogate */
    expect_refused("\"\xF4\x90\x80\x80\"", 6, "UTF-8");   /* above U+10FFFF */
    expect_refused("\"\xF5\x80\x80\x80\"", 6, "UTF-8");
    expect_refused("\"\xC3\"", 3, "UTF-8");               /* truncated sequence */
    expect_refused("\"\x80\"", 3, "UTF-8");               /* lone continuation */
    expect_refused("\"\xFF\"", 3, "UTF-8");
    expect_refused("{\"a\":1,\"b\":2,\"a\":3}", 19, "duplicate key \"a\"");
    expect_refused("{\"x\\u0000y\":1}", 14, "\\u0000");
    expect_refused("[1]\0", 4, "end of input");
    expect_refused("\xEF\xBB\xBF{}", 5, "JSON value");     /* no BOM in strict JSON */

    /* the byte offset points at the offending byte */
    char err[256] = "";
    JsonValue *v = parse("[1, 2, x]", err, sizeof err);
    CHECK(!v && strstr(err, "at byte 7:") != NULL, "offset of 'x' is 7: %s", err);
    json_free(v);
    /* a NULL or zero-length error buffer is fine */
    CHECK(json_parse("[", 1, NULL, 0) == NULL, "refused without an error buffer");
}

/* Builds n nested arrays around a 1. */
static char *nested(int n)
{
    char *s = malloc((size_t)n * 2 + 2);
    if (!s) return NULL;
    memset(s, '[', (size_t)n);
    s[n] = '1';
    memset(s + n + 1, ']', (size_t)n);
    s[2 * n + 1] = '\0';
    return s;
}

static void test_depth(void)
{
    char err[256];
    char *ok = nested(64), *deep = nested(65), *huge = nested(200000);
    if (!ok || !deep || !huge) {
        CHECK(0, "out of memory");
        free(ok), free(deep), free(huge);
        return;
    }
    JsonValue *v = parse(ok, err, sizeof err);
    CHECK(v != NULL, "64 levels accepted: %s", err);
    json_free(v);
    v = parse(deep, err, sizeof err);
    CHECK(v == NULL && strstr(err, "nesting") != NULL, "65 levels refused: %s", err);
    json_free(v);
    v = parse(huge, err, sizeof err);
    CHECK(v == NULL && strstr(err, "nesting") != NULL, "200000 levels refused without crashing: %s", err);
    json_free(v);
    free(ok), free(deep), free(huge);

    /* a flat array of many tiny values is capped (memory per value >> text per value) */
    size_t n = 2000001;
    char *many = malloc(2 * n + 2);
    if (!many) return;
    many[0] = '[';
    for (size_t i = 0; i < n; i++) {
        many[1 + 2 * i] = '0';
        many[2 + 2 * i] = i + 1 < n ? ',' : ']';
    }
    v = json_parse(many, 2 * n + 1, err, sizeof err);
    CHECK(v == NULL && strstr(err, "values") != NULL, "2000001 values refused: %s", err);
    json_free(v);
    free(many);
}

static void test_writer(void)
{
    JsonBuf b = {0};
    int rc = jsonbuf_string(&b, "a\"b\\c\n\t\x01\x7f/\xC3\xA9");
    CHECK(rc == 0 && strcmp(b.data, "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f/\xC3\xA9\"") == 0, "escaped: %s", b.data);
    jsonbuf_free(&b);
    CHECK(b.data == NULL && b.len == 0, "jsonbuf_free resets");

    rc = jsonbuf_string(&b, "x\xFFy\xC3");   /* invalid UTF-8 becomes U+FFFD */
    CHECK(rc == 0 && strcmp(b.data, "\"x\\ufffdy\\ufffd\"") == 0, "invalid bytes replaced: %s", b.data);
    jsonbuf_free(&b);

    rc = jsonbuf_string_n(&b, "a\0b", 3);
    CHECK(rc == 0 && strcmp(b.data, "\"a\\u0000b\"") == 0, "embedded NUL: %s", b.data);
    jsonbuf_free(&b);

    rc = jsonbuf_puts(&b, "{") | jsonbuf_printf(&b, "\"n\":%d,\"x\":%.3f", 42, 1.5) | jsonbuf_append(&b, "}xyz", 1);
    CHECK(rc == 0 && strcmp(b.data, "{\"n\":42,\"x\":1.500}") == 0 && b.len == strlen(b.data), "printf: %s", b.data);
    jsonbuf_free(&b);

    CHECK(json_utf8_valid("", 0) && json_utf8_valid("\xF0\x9F\x98\x80", 4), "valid UTF-8");
    CHECK(!json_utf8_valid("\xF0\x9F\x98", 3) && !json_utf8_valid("\xED\xBF\xBF", 3), "invalid UTF-8");
}

static uint64_t next_random(uint64_t *state);

/* jsonbuf_fixed4 against its definition, snprintf's "%.4f" with trailing
 * zeros and '.' dropped: exact ties (j/32: 0.03125 -> 0.0312, printf rounds
 * half to even), whole numbers, values rounding up to the next whole one,
 * the probabilities' range at random (uniform, and every bit pattern), large
 * values and what falls back to printf (negative, infinite, NaN). */
static void fixed4_expected(float x, char *out, size_t size) {
    int n = snprintf(out, size, "%.4f", (double)x);
    while (n > 1 && out[n - 1] == '0') out[--n] = '\0';
    if (out[n - 1] == '.') out[--n] = '\0';
}

static void test_fixed4(int rounds) {
    float cases[] = {0.0f, 1.0f, 0.5f, 0.25f, 0.03125f, 0.09375f, 0.96875f, 1.5f, 100.0f, 2.5e-5f, 4.9999e-5f,
                     5.0001e-5f, 0.99995f, 0.99994f, 0.99996f, 9.99996f, 123456.78f, 3e9f, 1e12f, -0.0f, -0.25f,
                     INFINITY, -INFINITY, NAN};
    int wrong = 0, total = 0;
    uint64_t rng = 7;
    for (int i = 0; i < (int)(sizeof cases / sizeof *cases) + rounds; i++) {
        float x;
        if (i < (int)(sizeof cases / sizeof *cases)) x = cases[i];
        else if (i % 3 == 0) x = (float)(next_random(&rng) % 1000000) / 32.0f / 1000.0f;   /* ties and near */
        else if (i % 3 == 1) x = (float)(next_random(&rng) >> 40) / 16777216.0f;   /* uniform in [0, 1) */
        else {
            uint32_t bits = (uint32_t)next_random(&rng) % 0x3f800001u;   /* a float in [0, 1] */
            memcpy(&x, &bits, sizeof x);
        }
        char want[64];
        fixed4_expected(x, want, sizeof want);
        JsonBuf b = {0};
        int rc = jsonbuf_fixed4(&b, x);
        total++;
        if (rc != 0 || strcmp(b.data, want) != 0) {
            if (wrong++ < 5) CHECK(0, "jsonbuf_fixed4(%.9g) wrote \"%s\", printf's digits are \"%s\"", (double)x, b.data, want);
        }
        jsonbuf_free(&b);
    }
    CHECK(wrong == 0, "jsonbuf_fixed4: %d of %d values differ from printf's %%.4f", wrong, total);
}

/* xorshift64: a small deterministic generator for the randomized cases. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

/* Random valid UTF-8 text of code points drawn from awkward ranges, encoded
 * here by hand so the check does not lean on json.c's own encoder. */
static size_t random_utf8(uint64_t *rng, char *out, size_t max_points)
{
    static const unsigned ranges[][2] = {
        { 0x01, 0x1F }, { 0x20, 0x7F }, { '"', '"' }, { '\\', '\\' }, { 0x80, 0x7FF },
        { 0x800, 0xD7FF }, { 0xE000, 0xFFFF }, { 0x10000, 0x10FFFF },
    };
    size_t n = next_random(rng) % (max_points + 1), len = 0;
    for (size_t i = 0; i < n; i++) {
        const unsigned *r = ranges[next_random(rng) % 8];
        unsigned cp = r[0] + (unsigned)(next_random(rng) % (r[1] - r[0] + 1));
        if (cp < 0x80) out[len++] = (char)cp;
        else if (cp < 0x800) { out[len++] = (char)(0xC0 | (cp >> 6)); out[len++] = (char)(0x80 | (cp & 0x3F)); }
        else if (cp < 0x10000) {
            out[len++] = (char)(0xE0 | (cp >> 12));
            out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[len++] = (char)(0x80 | (cp & 0x3F));
        } else {
            out[len++] = (char)(0xF0 | (cp >> 18));
            out[len++] = (char)(0x80 | ((cp >> 12) & 0x3F));
            out[len++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[len++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    out[len] = '\0';
    return len;
}

static void test_string_arrays(int rounds)
{
    const char *awkward[] = { "", "plain", "qu\"ote", "back\\slash", "tab\there", "nl\nx", "\x01\x1f",
                              "[CLS]", "\xC3\xA9t\xC3\xA9", "\xF0\x9F\x98\x80", "\\u0041", "]", ",\"", "\x7f" };
    int n = (int)(sizeof awkward / sizeof awkward[0]);
    char *text = json_string_array(awkward, n);
    CHECK(text != NULL, "json_string_array");
    char err[256] = "";
    char **items = NULL;
    int got = json_parse_string_array(text, &items, err, sizeof err);
    CHECK(got == n, "decoded %d of %d strings: %s", got, n, err);
    for (int i = 0; i < n && got == n; i++)
        CHECK(strcmp(items[i], awkward[i]) == 0, "string %d round trips", i);
    CHECK(got == n && items[n] == NULL, "array is NULL-terminated");
    json_free_string_array(items, got);
    free(text);

    text = json_string_array(NULL, 0);
    CHECK(text && strcmp(text, "[]") == 0, "empty array encodes as []");
    got = json_parse_string_array(text, &items, err, sizeof err);
    CHECK(got == 0 && items && items[0] == NULL, "empty array decodes");
    json_free_string_array(items, got);
    free(text);

    /* random strings of every awkward kind survive escape then parse */
    uint64_t rng = 0x9E3779B97F4A7C15u;
    char buf[4][8 * 4 + 1];
    for (int r = 0; r < rounds; r++) {
        const char *strs[4];
        for (int i = 0; i < 4; i++) {
            random_utf8(&rng, buf[i], 8);
            strs[i] = buf[i];
        }
        text = json_string_array(strs, 4);
        got = text ? json_parse_string_array(text, &items, err, sizeof err) : -1;
        int same = got == 4;
        for (int i = 0; same && i < 4; i++) same = strcmp(items[i], strs[i]) == 0;
        CHECK(same, "random round %d round trips: %s", r, err);
        if (got >= 0) json_free_string_array(items, got);
        free(text);
        if (!same) break;
    }

    static const struct { const char *text, *word; } bad[] = {
        { "{\"a\":\"b\"}", "array" }, { "[\"a\",1]", "element 1" }, { "[\"a\\u0000b\"]", "\\u0000" },
        { "[\"a\"", "byte" }, { "[null]", "element 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        items = (char **)&err;   /* must be reset to NULL on failure */
        got = json_parse_string_array(bad[i].text, &items, err, sizeof err);
        CHECK(got == -1 && items == NULL, "refused: %s", bad[i].text);
        CHECK(strstr(err, bad[i].word) != NULL, "message for %s lacks '%s': %s", bad[i].text, bad[i].word, err);
    }
}

/* Mutates valid documents at random: parsing must never crash and, when it
 * succeeds, must give a tree whose strings are valid UTF-8. */
static int check_strings_valid(const JsonValue *v)
{
    if (v->type == JSON_STRING && !json_utf8_valid(v->string, v->string_len)) return 0;
    for (int i = 0; i < v->count; i++)
        if (!check_strings_valid(&v->items[i])) return 0;
    return 1;
}

static void test_mutations(int rounds)
{
    static const char seed[] = "{\"__metadata__\":{\"format\":\"pt\",\"vocab\":\"[\\\"a\\\",\\\"\\u00e9\\\"]\"},"
                               "\"w\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
                               "\"x\":[true,false,null,-1.5e3,\"\\ud83d\\ude00\"]}";
    uint64_t rng = 12345;
    char doc[sizeof seed];
    int accepted = 0, bad_tree = 0;
    for (int r = 0; r < rounds; r++) {
        memcpy(doc, seed, sizeof seed);
        int flips = 1 + (int)(next_random(&rng) % 4);
        for (int k = 0; k < flips; k++) {
            size_t at = next_random(&rng) % (sizeof seed - 1);
            doc[at] = (char)(next_random(&rng) & 0xFF);
        }
        size_t len = next_random(&rng) % 8 == 0 ? next_random(&rng) % sizeof seed : sizeof seed - 1;
        char *copy = malloc(len ? len : 1);   /* exact size, so ASan sees any overread */
        if (!copy) continue;
        memcpy(copy, doc, len);
        char err[256];
        JsonValue *v = json_parse(copy, len, err, sizeof err);
        if (v) {
            accepted++;
            if (!check_strings_valid(v)) bad_tree++;
        }
        json_free(v);
        free(copy);
    }
    CHECK(bad_tree == 0, "%d accepted mutants held invalid UTF-8", bad_tree);
    /* a changed digit, a letter inside a string or a key keeps a document valid: those are expected */
    printf("REPORT json mutations: %d of %d random mutants refused; %d still valid JSON, as expected (a changed "
           "digit or a character inside a string or key keeps a document valid), each parsed to valid UTF-8; "
           "none crashed\n", rounds - accepted, rounds, accepted);
}

int main(void)
{
    int quick = getenv("CHECK_QUICK") != NULL;
    test_values();
    test_strings();
    test_refusals();
    test_depth();
    test_writer();
    test_fixed4(quick ? 20000 : 200000);
    test_string_arrays(quick ? 200 : 2000);
    test_mutations(quick ? 2000 : 20000);
    return check_summary("test_json");
}
