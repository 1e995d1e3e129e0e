/* records.c: splits a data file's lines into fields (records.h). */
#include "text/records.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/suggest.h"

int csv_is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

void csv_trim_span(const char **s, size_t *len) {
    while (*len && csv_is_space((unsigned char)**s)) { (*s)++; (*len)--; }
    while (*len && csv_is_space((unsigned char)(*s)[*len - 1])) (*len)--;
}



static int csv_append(CsvRecord *rec, char c) {
    if (rec->len == rec->cap) {
        size_t cap = rec->cap ? rec->cap * 2 : 256;
        char *grown = realloc(rec->bytes, cap);
        if (!grown) return -1;
        rec->bytes = grown;
        rec->cap = cap;
    }
    rec->bytes[rec->len++] = c;
    return 0;
}

static size_t csv_field_start(const CsvRecord *rec, int k) { return k ? rec->field_end[k - 1] : 0; }

static int csv_end_field(CsvRecord *rec, const char *path, int line_no, char *err, size_t errlen) {
    if (rec->n_fields >= CSV_MAX_FIELDS)
        return fail(err, errlen, ERR_INPUT, "%s:%d: more than %d fields in a CSV record", path, line_no,
                    CSV_MAX_FIELDS);
    if (rec->n_fields == rec->fields_cap) {
        int cap = rec->fields_cap ? rec->fields_cap * 2 : 8;
        size_t *grown = realloc(rec->field_end, (size_t)cap * sizeof *grown);
        if (!grown) return fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory", path, line_no);
        rec->field_end = grown;
        rec->fields_cap = cap;
    }
    rec->field_end[rec->n_fields++] = rec->len;
    rec->after_quote = 0;
    rec->field_has_text = 0;
    return EXIT_OK;
}

/* Feeds one physical line. When it completes the record, rec->active drops
 * to 0; when a quoted field runs on, the next line continues it. */
int csv_feed(CsvRecord *rec, const char *s, size_t n, const char *path, int line_no, char *err,
                    size_t errlen) {
    if (!rec->active) {
        rec->active = 1;
        rec->len = 0;
        rec->n_fields = 0;
        rec->in_quotes = rec->after_quote = rec->field_has_text = 0;
        rec->start_line = line_no;
    } else if (csv_append(rec, '\n')) {      /* the line break inside a quoted field */
        return fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory", path, line_no);
    }
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int rc = 0;
        if (rec->in_quotes) {
            if (c != '"') rc = csv_append(rec, c);
            else if (i + 1 < n && s[i + 1] == '"') { rc = csv_append(rec, '"'); i++; }   /* "" is a quote */
            else { rec->in_quotes = 0; rec->after_quote = 1; }
        } else if (c == ',') {
            int frc = csv_end_field(rec, path, line_no, err, errlen);
            if (frc) return frc;
        } else if (rec->after_quote) {
            if (c != ' ' && c != '\t')
                return fail(err, errlen, ERR_INPUT, "%s:%d: text after a closing quote at byte column %zu",
                            path, line_no, i + 1);
        } else if (c == '"' && !rec->field_has_text) {
            rec->len = csv_field_start(rec, rec->n_fields);   /* drop blanks before the quote */
            rec->in_quotes = 1;
            rec->quote_line = line_no;
        } else {
            rc = csv_append(rec, c);
            if (c != ' ' && c != '\t') rec->field_has_text = 1;
        }
        if (rc) return fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory", path, line_no);
        if (rec->len > MAX_LINE_BYTES)
            return fail(err, errlen, ERR_INPUT, "%s:%d: CSV record is too long (more than %zu bytes)", path,
                        rec->start_line, MAX_LINE_BYTES);
    }
    if (rec->in_quotes) return EXIT_OK;
    rec->active = 0;
    return csv_end_field(rec, path, line_no, err, errlen);
}

/* Field k of a complete record, trimmed of ASCII whitespace. */
void csv_field(const CsvRecord *rec, int k, const char **s, size_t *len) {
    size_t start = csv_field_start(rec, k);
    *s = rec->bytes ? rec->bytes + start : "";   /* a record of empty fields has no bytes yet */
    *len = rec->field_end[k] - start;
    csv_trim_span(s, len);
}

int csv_span_equals_nocase(const char *s, size_t len, const char *word) {
    size_t n = strlen(word);
    if (len != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

/* Column of name in a header record: its index, -1 when absent, -2 when twice. */
int csv_find_column(const CsvRecord *rec, const char *name) {
    int found = -1;
    for (int k = 0; k < rec->n_fields; k++) {
        const char *s;
        size_t len;
        csv_field(rec, k, &s, &len);
        if (csv_span_equals_nocase(s, len, name)) {
            if (found >= 0) return -2;
            found = k;
        }
    }
    return found;
}

/* A column choice is a 1-based number when it is all digits, else a header name. */
static int column_is_number(const char *spec) {
    if (!*spec) return 0;
    for (const char *c = spec; *c; c++)
        if (*c < '0' || *c > '9') return 0;
    return 1;
}

/* The header's names, comma-separated, into buf (for messages). */
static void header_names(const CsvRecord *rec, char *buf, size_t len) {
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < rec->n_fields && used + 1 < len; k++) {
        const char *s;
        size_t n;
        csv_field(rec, k, &s, &n);
        int w = snprintf(buf + used, len - used, "%s'%.*s'", k ? ", " : "", (int)(n > 40 ? 40 : n), s);
        if (w < 0) break;
        used += (size_t)w;
    }
    if (used >= len && len > 4) memcpy(buf + len - 4, "...", 4);
}

/* The index of the column a choice names in a header record, or an error
 * naming the header's columns (and the closest name, for a typo). */
int csv_resolve_column(const CsvRecord *rec, const char *spec, const char *role, const char *path, int line_no,
                          int *index, char *err, size_t errlen) {
    char names[512];
    header_names(rec, names, sizeof names);
    if (column_is_number(spec)) {
        long k = strtol(spec, NULL, 10);
        if (k < 1 || k > rec->n_fields)
            return fail(err, errlen, ERR_INPUT, "%s:%d: --%s-column %s: the header has %d column%s (%s)", path,
                        line_no, role, spec, rec->n_fields, rec->n_fields == 1 ? "" : "s", names);
        *index = (int)k - 1;
        return EXIT_OK;
    }
    char lower[256];   /* names compare without case; the header's side is lowered by csv_find_column */
    snprintf(lower, sizeof lower, "%s", spec);
    for (char *c = lower; *c; c++)
        if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
    int k = csv_find_column(rec, lower);
    if (k == -2)
        return fail(err, errlen, ERR_INPUT, "%s:%d: the header names the '%s' column twice; choose it by number "
                    "with --%s-column N", path, line_no, spec, role);
    if (k >= 0) {
        *index = k;
        return EXIT_OK;
    }
    if (rec->n_fields == 1) {   /* one field: the file is not comma-separated */
        const char *s;
        size_t len;
        csv_field(rec, 0, &s, &len);
        if (memchr(s, '\t', len))
            return fail(err, errlen, ERR_INPUT, "%s:%d: the header is one field holding tabs: the file is "
                        "tab-separated, where a .csv is read as comma-separated; name it .tsv", path, line_no);
        if (memchr(s, ';', len))
            return fail(err, errlen, ERR_INPUT, "%s:%d: the header is one field holding semicolons: a CSV here is "
                        "comma-separated; turn the semicolons into commas (or tabs, in a .tsv)", path, line_no);
    }
    const char *candidates[64];
    char copies[64][64];
    int n = rec->n_fields < 64 ? rec->n_fields : 64;
    for (int i = 0; i < n; i++) {
        const char *s;
        size_t len;
        csv_field(rec, i, &s, &len);
        snprintf(copies[i], sizeof copies[i], "%.*s", (int)(len < 63 ? len : 63), s);
        for (char *c = copies[i]; *c; c++)
            if (*c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
        candidates[i] = copies[i];
    }
    const char *close = suggest_closest(lower, candidates, (size_t)n);
    if (close)
        return fail(err, errlen, ERR_INPUT, "%s:%d: no '%s' column in the header (%s); did you mean "
                    "--%s-column %s?", path, line_no, spec, names, role, close);
    return fail(err, errlen, ERR_INPUT, "%s:%d: no '%s' column in the header (%s); choose the %s column with "
                "--%s-column NAME or a 1-based number", path, line_no, spec, names, role, role);
}

/* Splits a TSV line at every tab into rec's fields (for a TSV with a header row). */
int csv_split_tsv(CsvRecord *rec, const char *s, size_t n, const char *path, int line_no, char *err,
                     size_t errlen) {
    rec->active = 0;
    rec->len = 0;
    rec->n_fields = 0;
    rec->start_line = line_no;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\t') {
            int rc = csv_end_field(rec, path, line_no, err, errlen);
            if (rc) return rc;
        } else if (csv_append(rec, s[i])) {
            return fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory", path, line_no);
        }
    }
    return csv_end_field(rec, path, line_no, err, errlen);
}

void csv_record_free(CsvRecord *rec) {
    free(rec->bytes);
    free(rec->field_end);
    rec->bytes = NULL;
    rec->field_end = NULL;
}
