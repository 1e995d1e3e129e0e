/* records.h: one line or record of a data file split into fields: RFC 4180
 * CSV records fed one physical line at a time (a quoted field may span
 * lines), TSV lines split on tabs, and header columns found by name or
 * number. Knows nothing of labels or examples; statuses follow
 * base/errors.h, messages name "path:line". */
#ifndef TEXT_RECORDS_H
#define TEXT_RECORDS_H

#include <stddef.h>

#define MAX_LINE_BYTES ((size_t)1 << 20)     /* longest accepted line (and CSV record) */
#define CSV_MAX_FIELDS 4096                   /* most fields a record may have */

typedef struct {
    char *bytes;                     /* the fields' contents back to back */
    size_t len, cap;
    size_t *field_end;               /* end offset in bytes of each field */
    int n_fields, fields_cap;
    int active;                      /* a record has started and is not complete */
    int in_quotes;                   /* inside a quoted field */
    int after_quote;                 /* a quoted field closed; only blanks or ',' may follow */
    int field_has_text;              /* the unquoted field so far has a non-blank byte */
    int start_line, quote_line;
} CsvRecord;

/* Feeds one physical line (no '\n') into rec; rec->active stays set while a
 * quoted field continues on the next line. */
int csv_feed(CsvRecord *rec, const char *s, size_t n, const char *path, int line_no, char *err, size_t errlen);
/* Field k of the complete record, trimmed of surrounding blanks. */
void csv_field(const CsvRecord *rec, int k, const char **s, size_t *len);
/* 1 when s[0..len) is word, ASCII case ignored. */
int csv_span_equals_nocase(const char *s, size_t len, const char *word);
/* The index of the header field named name (case ignored), or -1. */
int csv_find_column(const CsvRecord *rec, const char *name);
/* The column a --label-column/--text-column spec (a name or a 1-based
 * number) names in the header record; an error lists the header's names. */
int csv_resolve_column(const CsvRecord *rec, const char *spec, const char *role, const char *path, int line_no,
                       int *index, char *err, size_t errlen);
/* Splits one TSV line on tabs into rec's fields. */
int csv_split_tsv(CsvRecord *rec, const char *s, size_t n, const char *path, int line_no, char *err, size_t errlen);
/* 1 for the ASCII whitespace bytes (space, \t \n \v \f \r). */
int csv_is_space(unsigned char c);
/* Narrows s[0..*len) to drop surrounding ASCII whitespace. */
void csv_trim_span(const char **s, size_t *len);
void csv_record_free(CsvRecord *rec);   /* the buffers; the struct may be reused zeroed */

#endif
