/* dataset.c: reads labelled text (TSV, or CSV with a header) line by line into
 * examples, refusing bad input with "path:line: problem"; finds leakage
 * (docs/DESIGN.md §3). The validation split is split.c's. */
#include "text/dataset.h"
#include "text/records.h"

#include "base/hash.h"
#include "base/strmap.h"
#include "base/rng.h"
#include "base/sha256.h"
#include "base/suggest.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define READ_CHUNK_BYTES ((size_t)1 << 16)

enum { FORMAT_UNKNOWN, FORMAT_TSV, FORMAT_CSV, FORMAT_TEXT };

/* Offset of the first byte starting an invalid UTF-8 sequence, or len when
 * the span is valid. Refuses overlong forms, surrogates and code points
 * above U+10FFFF (RFC 3629). */
static size_t utf8_invalid_at(const unsigned char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        unsigned char c = s[i];
        size_t need;
        unsigned char lo = 0x80, hi = 0xBF;   /* allowed range of the second byte */
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) need = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0) lo = 0xA0;         /* overlong */
            if (c == 0xED) hi = 0x9F;         /* surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0) lo = 0x90;         /* overlong */
            if (c == 0xF4) hi = 0x8F;         /* above U+10FFFF */
        } else return i;
        if (len - i - 1 < need) return i;
        if (s[i + 1] < lo || s[i + 1] > hi) return i;
        for (size_t k = 2; k <= need; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return i;
        i += need + 1;
    }
    return len;
}

/* ---- Line reader: physical lines from a buffer or a file stream ---- */

typedef struct {
    const char *path;
    const char *mem;                 /* buffer source (fp == NULL) */
    size_t mem_len, mem_pos;
    FILE *fp;                        /* file source */
    Sha256 hash;                     /* of the file source's bytes, as they are read */
    char *chunk;
    size_t chunk_len, chunk_pos;
    int eof;
    char *line;                      /* the current line of a file source */
    size_t line_cap;
    int line_no;                     /* 1-based number of the line last returned */
    long long consumed;              /* bytes of the source taken up to the end of the last line returned */
    long long line_offset;           /* byte offset at which the line last returned starts */
} LineReader;

static int line_too_long(LineReader *r, size_t len, char *err, size_t errlen) {
    return fail(err, errlen, ERR_INPUT, "%s:%d: line is too long (%zu bytes; the limit is %zu)", r->path,
                r->line_no, len, MAX_LINE_BYTES);
}

static int reader_next_mem(LineReader *r, const char **line, size_t *len, int *got, char *err, size_t errlen) {
    if (r->mem_pos >= r->mem_len) return EXIT_OK;
    const char *start = r->mem + r->mem_pos;
    size_t left = r->mem_len - r->mem_pos;
    r->line_offset = (long long)r->mem_pos;
    const char *nl = memchr(start, '\n', left);
    size_t n = nl ? (size_t)(nl - start) : left;
    r->mem_pos += nl ? n + 1 : n;
    r->line_no++;
    if (n > MAX_LINE_BYTES) return line_too_long(r, n, err, errlen);
    *line = start;
    *len = n;
    *got = 1;
    return EXIT_OK;
}

/* Makes room for need bytes in the line buffer (need <= MAX_LINE_BYTES). */
static int reader_reserve(LineReader *r, size_t need, char *err, size_t errlen) {
    if (need <= r->line_cap) return EXIT_OK;
    size_t cap = r->line_cap ? r->line_cap : 256;
    while (cap < need) cap *= 2;
    char *grown = realloc(r->line, cap);
    if (!grown) return fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory", r->path, r->line_no + 1);
    r->line = grown;
    r->line_cap = cap;
    return EXIT_OK;
}

/* Reads on to the end of the line, hashing what it reads. A line longer
 * than MAX_LINE_BYTES is refused as soon as the limit is passed: the input
 * may be a stream that never ends (/dev/zero), so the rest is not read. */
static int reader_next_file(LineReader *r, const char **line, size_t *len, int *got, char *err, size_t errlen) {
    size_t total = 0;
    int seen = 0;
    r->line_offset = r->consumed;
    for (;;) {
        if (r->chunk_pos == r->chunk_len) {
            if (r->eof) break;
            r->chunk_len = fread(r->chunk, 1, READ_CHUNK_BYTES, r->fp);
            r->chunk_pos = 0;
            sha256_update(&r->hash, r->chunk, r->chunk_len);
            if (r->chunk_len == 0) {
                /* a stop signal (Ctrl-C) while a pipe had nothing to give */
                if (ferror(r->fp) && errno == EINTR)
                    return fail(err, errlen, EXIT_INTERRUPTED, "%s:%d: interrupted by a signal while reading the data, "
                                "before training began; nothing was trained", r->path, r->line_no + 1);
                if (ferror(r->fp))
                    return fail(err, errlen, ERR_RUNTIME, "%s:%d: read error: %s", r->path, r->line_no + 1,
                                strerror(errno));
                r->eof = 1;
                break;
            }
        }
        const char *start = r->chunk + r->chunk_pos;
        size_t avail = r->chunk_len - r->chunk_pos;
        const char *nl = memchr(start, '\n', avail);
        size_t n = nl ? (size_t)(nl - start) : avail;
        seen = 1;
        if (total + n > MAX_LINE_BYTES) {
            r->line_no++;
            return fail(err, errlen, ERR_INPUT, "%s:%d: line is too long (more than %zu bytes, the limit; "
                        "reading stopped there)", r->path, r->line_no, MAX_LINE_BYTES);
        }
        int rc = reader_reserve(r, total + n, err, errlen);
        if (rc) return rc;
        if (n) memcpy(r->line + total, start, n);
        total += n;
        r->chunk_pos += nl ? n + 1 : n;
        r->consumed += nl ? (long long)n + 1 : (long long)n;
        if (nl) break;
    }
    if (!seen) return EXIT_OK;
    r->line_no++;
    *line = r->line ? r->line : "";
    *len = total;
    *got = 1;
    return EXIT_OK;
}

/* Next physical line without its '\n'; *got is 0 at the end of the input. */
static int reader_next(LineReader *r, const char **line, size_t *len, int *got, char *err, size_t errlen) {
    *got = 0;
    if (r->line_no == INT_MAX) return fail(err, errlen, ERR_INPUT, "%s: too many lines", r->path);
    return r->fp ? reader_next_file(r, line, len, got, err, errlen)
                 : reader_next_mem(r, line, len, got, err, errlen);
}


/* ---- The parser: physical lines to examples ---- */

typedef struct {
    const char *path;
    LineReader reader;
    TextDataset *out;
    int cap;
    int format;
    int csv_by_name;                 /* the path ends in .csv */
    int texts;                       /* dataset_read_texts: a file without tabs is one text a line */
    int seen_content;                /* a non-blank, non-comment line was seen */
    CsvRecord rec;
    int n_columns, label_column, text_column;   /* from the CSV header; n_columns 0 until read */
    const char *label_choice, *text_choice;     /* --label-column, --text-column: names or 1-based numbers */
    int chosen_columns;              /* a choice differs from label/text: the file has a header row */
    int tsv_table;                   /* a TSV with a header row: every tab separates columns */
    long long shard_begin, shard_end;   /* keep the examples whose line starts in [begin, end); end < 0: all */
    int seek;                        /* read only [begin, end) once the format is known (not a CSV) */
    long lines_before;               /* with seek: the file's newlines before begin */
    int total;                       /* examples in the whole source */
    char *err;
    size_t errlen;
} Parser;

static int add_example(Parser *p, const char *label, size_t label_len, const char *text, size_t text_len,
                       int line_no) {
    csv_trim_span(&label, &label_len);
    csv_trim_span(&text, &text_len);
    char why[192];
    if (dataset_check_label(label, label_len, why, sizeof why) != 0)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: %s", p->path, line_no, why);
    if (!text_len) return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: empty text", p->path, line_no);
    TextDataset *d = p->out;
    if (p->total == INT_MAX) return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: too many examples", p->path, line_no);
    p->total++;
    long long at = p->reader.line_offset;
    if (p->shard_end >= 0 && (at < p->shard_begin || at >= p->shard_end)) {   /* another process's share */
        d->first += at < p->shard_begin;
        return EXIT_OK;
    }
    if (d->n == p->cap) {
        int cap = p->cap ? (p->cap > INT_MAX / 2 ? INT_MAX : p->cap * 2) : 64;
        Example *grown = realloc(d->examples, (size_t)cap * sizeof *grown);
        if (!grown) return fail(p->err, p->errlen, ERR_RUNTIME, "%s:%d: out of memory", p->path, line_no);
        d->examples = grown;
        p->cap = cap;
    }
    Example *ex = &d->examples[d->n];
    ex->label = strndup(label, label_len);
    ex->text = strndup(text, text_len);
    ex->line = line_no;
    if (!ex->label || !ex->text) {
        free(ex->label);
        free(ex->text);
        return fail(p->err, p->errlen, ERR_RUNTIME, "%s:%d: out of memory", p->path, line_no);
    }
    d->n++;
    return EXIT_OK;
}

/* A TSV line: label, first tab, text (later tabs are whitespace in the text). */
static int table_line(Parser *p, const char *s, size_t n);

static int tsv_line(Parser *p, const char *s, size_t n, int first_content) {
    if (p->tsv_table) return table_line(p, s, n);
    int line_no = p->reader.line_no;
    const char *tab = memchr(s, '\t', n);
    if (!tab)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: no tab between label and text", p->path, line_no);
    const char *label = s, *text = tab + 1;
    size_t label_len = (size_t)(tab - s), text_len = n - label_len - 1;
    if (first_content) {
        /* A first line "label<TAB>text" is a header, not an example. */
        const char *l = label, *t = text;
        size_t ll = label_len, tl = text_len;
        csv_trim_span(&l, &ll);
        csv_trim_span(&t, &tl);
        if (csv_span_equals_nocase(l, ll, "label") && csv_span_equals_nocase(t, tl, "text")) return EXIT_OK;
    }
    int kept = p->out->n, rc = add_example(p, label, label_len, text, text_len, line_no);
    if (rc == EXIT_OK && p->out->n > kept && memchr(text, '\t', text_len) && p->out->tabbed++ == 0)
        p->out->first_tabbed = line_no;   /* counted among the examples this read keeps (a share's) */
    return rc;
}

/* The header row (CSV, or TSV with a header): the label and text columns. */
static int csv_header(Parser *p) {
    int line_no = p->rec.start_line;
    int label_column, text_column;
    int rc = csv_resolve_column(&p->rec, p->label_choice, "label", p->path, line_no, &label_column, p->err, p->errlen);
    if (!rc) rc = csv_resolve_column(&p->rec, p->text_choice, "text", p->path, line_no, &text_column, p->err, p->errlen);
    if (rc) return rc;
    if (label_column == text_column)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: --label-column and --text-column both choose column %d",
                    p->path, line_no, label_column + 1);
    p->n_columns = p->rec.n_fields;
    p->label_column = label_column;
    p->text_column = text_column;
    const char *name;
    size_t len;
    csv_field(&p->rec, label_column, &name, &len);
    csv_trim_span(&name, &len);
    free(p->out->header_label);
    p->out->header_line = line_no;
    if (!(p->out->header_label = strndup(name, len)))
        return fail(p->err, p->errlen, ERR_RUNTIME, "%s:%d: out of memory", p->path, line_no);
    return EXIT_OK;
}

/* A complete record of a file with a header: the example in the chosen columns. */
static int record_example(Parser *p) {
    if (p->rec.n_fields != p->n_columns)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: wrong number of fields: %d, the header has %d",
                    p->path, p->rec.start_line, p->rec.n_fields, p->n_columns);
    const char *label, *text;
    size_t label_len, text_len;
    csv_field(&p->rec, p->label_column, &label, &label_len);
    csv_field(&p->rec, p->text_column, &text, &text_len);
    return add_example(p, label, label_len, text, text_len, p->rec.start_line);
}

static int csv_line(Parser *p, const char *s, size_t n) {
    int rc = csv_feed(&p->rec, s, n, p->path, p->reader.line_no, p->err, p->errlen);
    if (rc || p->rec.active) return rc;
    if (!p->n_columns) return csv_header(p);
    return record_example(p);
}

/* A line of a TSV with a header row. */
static int table_line(Parser *p, const char *s, size_t n) {
    int rc = csv_split_tsv(&p->rec, s, n, p->path, p->reader.line_no, p->err, p->errlen);
    if (rc) return rc;
    if (!p->n_columns) return csv_header(p);
    return record_example(p);
}

static int all_digits(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* The first content line decides the format unless the name did: a CSV
 * header with 'label' and 'text' columns means CSV, anything else TSV. */
static int first_content_line(Parser *p, const char *s, size_t n) {
    if (p->csv_by_name || (p->chosen_columns && !memchr(s, '\t', n))) {
        p->format = FORMAT_CSV;
        return csv_line(p, s, n);
    }
    char scratch[256];
    if (memchr(s, '\t', n)) {
        /* a TSV header row: chosen columns, or more than two columns with 'label' and 'text' among them */
        int rc = csv_split_tsv(&p->rec, s, n, p->path, p->reader.line_no, scratch, sizeof scratch);
        if (!rc && (p->chosen_columns || (p->rec.n_fields > 2 && csv_find_column(&p->rec, "label") >= 0 &&
                                          csv_find_column(&p->rec, "text") >= 0))) {
            p->format = FORMAT_TSV;
            p->tsv_table = 1;
            p->out->header_by_number = all_digits(p->label_choice) && all_digits(p->text_choice);
            return csv_header(p);
        }
        p->rec.active = 0;
    }
    int rc = csv_feed(&p->rec, s, n, p->path, p->reader.line_no, scratch, sizeof scratch);
    if (!rc && !p->rec.active && csv_find_column(&p->rec, "label") >= 0 && csv_find_column(&p->rec, "text") >= 0) {
        p->format = FORMAT_CSV;
        return csv_header(p);
    }
    p->rec.active = 0;
    if (p->texts && !memchr(s, '\t', n)) {
        p->format = FORMAT_TEXT;
        return add_example(p, TEXTS_LABEL, strlen(TEXTS_LABEL), s, n, p->reader.line_no);
    }
    p->format = FORMAT_TSV;
    return tsv_line(p, s, n, 1);
}

static int is_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!csv_is_space((unsigned char)s[i])) return 0;
    return 1;
}

static int is_comment(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && csv_is_space((unsigned char)s[i])) i++;
    return i < n && s[i] == '#';
}

/* A compressed format a data file may be by mistake, known by its first bytes. */
typedef struct {
    const char *magic;
    size_t len;
    int then_digit;              /* 1: a digit 1-9 follows the magic (bzip2's block size) */
    const char *name, *unpack;   /* the format, and the command that writes the text to stdout */
} Packing;

static const Packing *packing_of(const char *s, size_t n) {
    static const Packing known[] = {{"\x1F\x8B", 2, 0, "gzip", "gzip -dc"}, {"BZh", 3, 1, "bzip2", "bzip2 -dc"},
                                    {"\xFD" "7zXZ", 5, 0, "xz", "xz -dc"},
                                    {"\x28\xB5\x2F\xFD", 4, 0, "zstd", "zstd -dc"},
                                    {"PK\x03\x04", 4, 0, "zip", "unzip -p"}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        const Packing *k = &known[i];
        size_t need = k->len + (size_t)k->then_digit;
        if (n >= need && memcmp(s, k->magic, k->len) == 0 && (!k->then_digit || (s[k->len] >= '1' && s[k->len] <= '9')))
            return k;
    }
    return NULL;
}

static int parse_line(Parser *p, const char *s, size_t n) {
    int line_no = p->reader.line_no;
    const Packing *packed = line_no == 1 ? packing_of(s, n) : NULL;
    if (packed)
        return fail(p->err, p->errlen, ERR_INPUT, "%s: a %s-compressed file, not text: decompress it first, or read "
                    "it through a pipe: ./train <(%s %s)", p->path, packed->name, packed->unpack, p->path);
    if (line_no == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { s += 3; n -= 3; }   /* BOM */
    if (n && s[n - 1] == '\r') n--;                                                          /* CRLF */
    const char *nul = memchr(s, '\0', n);
    if (nul)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: NUL byte at byte column %zu%s", p->path, line_no,
                    (size_t)(nul - s) + 1, line_no == 1 ? " (a binary file, not TSV/CSV text?)" : "");
    /* a carriage return inside the first line: lines that end with CR alone
     * (classic Mac OS), which would be read as one long line */
    if (line_no == 1 && memchr(s, '\r', n))
        return fail(p->err, p->errlen, ERR_INPUT, "%s:1: a carriage return inside the line: the file's lines seem to "
                    "end with CR alone; convert them first, e.g. tr '\\r' '\\n' < %s > fixed.tsv", p->path, p->path);
    size_t bad = utf8_invalid_at((const unsigned char *)s, n);
    if (bad < n)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: invalid UTF-8 at byte column %zu", p->path, line_no,
                    bad + 1);
    if (p->rec.active) return csv_line(p, s, n);     /* a quoted field runs on */
    if (is_blank(s, n) || is_comment(s, n)) return EXIT_OK;
    if (p->format == FORMAT_UNKNOWN) return first_content_line(p, s, n);
    if (p->format == FORMAT_TEXT) return add_example(p, TEXTS_LABEL, strlen(TEXTS_LABEL), s, n, p->reader.line_no);
    return p->format == FORMAT_CSV ? csv_line(p, s, n) : tsv_line(p, s, n, 0);
}

static int path_ends_csv(const char *path) {
    size_t n = strlen(path);
    return n >= 4 && csv_span_equals_nocase(path + n - 4, 4, ".csv");
}

/* Seek: the reader jumps to the first line starting at or after the share's
 * first byte, numbered from the newlines before it. */
static int reader_seek(Parser *p) {
    LineReader *r = &p->reader;
    long long begin = p->shard_begin;
    if (fseeko(r->fp, (off_t)(begin - 1), SEEK_SET) != 0)
        return fail(p->err, p->errlen, ERR_RUNTIME, "%s: cannot seek to byte %lld: %s", p->path, begin, strerror(errno));
    int c = fgetc(r->fp);
    r->chunk_pos = r->chunk_len = 0;
    r->eof = 0;
    r->consumed = begin;
    r->line_no = (int)p->lines_before;
    if (c == '\n') return EXIT_OK;
    /* the line holding byte begin started in the share before: skip its rest */
    const char *line;
    size_t len;
    int got;
    return reader_next(r, &line, &len, &got, p->err, p->errlen);
}

/* With seek, a format that allows it: lines are independent (TSV, texts). */
static int seekable(const Parser *p) { return p->seek && (p->format == FORMAT_TSV || p->format == FORMAT_TEXT); }

static int parse_all(Parser *p) {
    for (;;) {
        if (p->seek && p->format != FORMAT_CSV && p->reader.consumed >= p->shard_end) break;   /* the share is read */
        const char *line = NULL;
        size_t len = 0;
        int got = 0;
        int rc = reader_next(&p->reader, &line, &len, &got, p->err, p->errlen);
        if (rc) return rc;
        if (!got) break;
        rc = parse_line(p, line, len);
        if (rc) return rc;
        if (seekable(p) && p->reader.consumed < p->shard_begin && (rc = reader_seek(p)) != EXIT_OK) return rc;
    }
    if (p->rec.active)
        return fail(p->err, p->errlen, ERR_INPUT, "%s:%d: unbalanced quote: the quoted field opened here is never closed",
                    p->path, p->rec.quote_line);
    if (p->total == 0 && !p->seek) return fail(p->err, p->errlen, ERR_INPUT, "%s: no examples", p->path);
    p->out->total = p->total;
    return EXIT_OK;
}

/* Runs the parser over a prepared reader, keeping the examples whose line
 * starts in bytes [begin, end) (end < 0: all); out is filled or left empty. */
static int parse_source(const char *path, LineReader *reader, const DatasetColumns *columns, int texts,
                        long long begin, long long end, const DatasetShard *seek, TextDataset *out, char *err,
                        size_t errlen) {
    Parser p;
    memset(&p, 0, sizeof p);
    p.shard_begin = begin;
    p.shard_end = end;
    p.seek = seek != NULL;
    p.lines_before = seek ? seek->lines_before : 0;
    p.texts = texts;
    p.path = path;
    p.label_choice = columns && columns->label && *columns->label ? columns->label : "label";
    p.text_choice = columns && columns->text && *columns->text ? columns->text : "text";
    p.chosen_columns = strcmp(p.label_choice, "label") != 0 || strcmp(p.text_choice, "text") != 0;
    p.reader = *reader;
    p.reader.path = path;
    p.out = out;
    p.csv_by_name = path_ends_csv(path);
    p.err = err;
    p.errlen = errlen;
    int rc = EXIT_OK;
    out->path = strndup(path, strlen(path));
    if (!out->path) rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    if (!rc) rc = parse_all(&p);
    if (!rc && p.seek && p.format != FORMAT_CSV) {   /* a share alone was read: no digest, no line count */
        out->sha256[0] = '\0';
        out->lines = 0;
    } else if (!rc) {   /* the whole source was read: its digest and line count */
        if (p.reader.fp) sha256_final_hex(&p.reader.hash, out->sha256);
        else sha256_hex(p.reader.mem, p.reader.mem_len, out->sha256);
        out->lines = p.reader.line_no;
    }
    csv_record_free(&p.rec);
    free(p.reader.line);
    if (rc) dataset_free(out);
    return rc;
}

int dataset_parse_columns(const char *path, const char *buf, size_t len, const DatasetColumns *columns,
                          TextDataset *out, char *err, size_t errlen) {
    if (!out) return fail(err, errlen, ERR_RUNTIME, "dataset_parse: no output");
    memset(out, 0, sizeof *out);
    if (!path) path = "(buffer)";
    if (!buf && len) return fail(err, errlen, ERR_RUNTIME, "%s: no buffer", path);
    LineReader reader;
    memset(&reader, 0, sizeof reader);
    reader.mem = buf ? buf : "";
    reader.mem_len = len;
    return parse_source(path, &reader, columns, 0, 0, -1, NULL, out, err, errlen);
}

int dataset_parse(const char *path, const char *buf, size_t len, TextDataset *out, char *err, size_t errlen) {
    return dataset_parse_columns(path, buf, len, NULL, out, err, errlen);
}

/* A file through the parser: columns chosen by name or number (NULL: label,
 * text), or texts = 1 for one text a line where a line has no tab; only
 * the shard's examples are kept. */
static int read_path(const char *path, const DatasetColumns *columns, int texts, DatasetShard shard,
                     TextDataset *out, char *err, size_t errlen) {
    if (!out) return fail(err, errlen, ERR_RUNTIME, "dataset_read: no output");
    memset(out, 0, sizeof *out);
    if (!path || !*path) return fail(err, errlen, ERR_INPUT, "no data file given");
    FILE *fp = fopen(path, "rb");
    if (!fp && errno == EINTR)   /* a stop signal while a FIFO waited for its writer */
        return fail(err, errlen, EXIT_INTERRUPTED, "%s: interrupted by a signal while opening the data, before "
                    "training began; nothing was trained", path);
    if (!fp && strcmp(path, "-") == 0)   /* the Unix habit: name standard input the way this program reads it */
        return fail(err, errlen, ERR_INPUT, "-: %s; to read the data from standard input, give /dev/stdin "
                    "(./train /dev/stdin < data.tsv)", strerror(errno));
    if (!fp) return fail(err, errlen, ERR_INPUT, "%s: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return fail(err, errlen, ERR_INPUT, "%s: is a directory, not a data file", path);
    }
    long long begin = 0, end = -1;
    if (shard.parts > 1) {
        if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
            fclose(fp);
            return fail(err, errlen, ERR_INPUT, "%s: not a regular file; with %d MPI ranks each rank keeps its share "
                        "of the file by byte offset, so the data must be a file (not a pipe or a device)", path,
                        shard.parts);
        }
        long long size = (long long)st.st_size;
        begin = size * shard.part / shard.parts;
        end = size * (shard.part + 1) / shard.parts;
    }
    LineReader reader;
    memset(&reader, 0, sizeof reader);
    reader.fp = fp;
    sha256_init(&reader.hash);
    reader.chunk = malloc(READ_CHUNK_BYTES);
    int rc;
    if (!reader.chunk) {
        dataset_free(out);
        rc = fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path);
    } else {
        rc = parse_source(path, &reader, columns, texts, begin, end, shard.parts > 1 && shard.seek ? &shard : NULL,
                          out, err, errlen);
    }
    free(reader.chunk);
    fclose(fp);
    return rc;
}

static const DatasetShard WHOLE = {0, 1, 0, 0};

/* The file open for a share: its byte range; -1 with a message. */
static FILE *open_share(const char *path, DatasetShard shard, long long *begin, long long *end, char *err,
                        size_t errlen) {
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        set_error(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(fp), &st) != 0 || !S_ISREG(st.st_mode)) {
        fclose(fp);
        set_error(err, errlen, "%s: not a regular file; with %d MPI ranks each rank reads its share of the file by "
                  "byte offset, so the data must be a file (not a pipe or a device)", path, shard.parts);
        return NULL;
    }
    *begin = (long long)st.st_size * shard.part / shard.parts;
    *end = (long long)st.st_size * (shard.part + 1) / shard.parts;
    return fp;
}

long dataset_share_newlines(const char *path, DatasetShard shard, char *err, size_t errlen) {
    long long begin, end;
    FILE *fp = open_share(path, shard, &begin, &end, err, errlen);
    if (!fp) return -1;
    char *chunk = malloc(READ_CHUNK_BYTES);
    long count = 0;
    int ok = chunk && fseeko(fp, (off_t)begin, SEEK_SET) == 0;
    for (long long at = begin; ok && at < end;) {
        size_t want = end - at < (long long)READ_CHUNK_BYTES ? (size_t)(end - at) : READ_CHUNK_BYTES;
        size_t got = fread(chunk, 1, want, fp);
        if (got == 0) break;
        for (const char *c = chunk, *stop = chunk + got; (c = memchr(c, '\n', (size_t)(stop - c))); c++) count++;
        at += (long long)got;
    }
    if (!ok || ferror(fp)) {
        set_error(err, errlen, "%s: %s", path, chunk ? "read error" : "out of memory");
        count = -1;
    }
    free(chunk);
    fclose(fp);
    return count;
}

int dataset_digest(const char *path, char sha256[65], long *lines, char *err, size_t errlen) {
    FILE *fp = fopen(path, "rb");
    if (!fp) return fail(err, errlen, ERR_INPUT, "%s: %s", path, strerror(errno));
    char *chunk = malloc(READ_CHUNK_BYTES);
    Sha256 hash;
    sha256_init(&hash);
    long count = 0;
    int last = '\n';
    size_t got;
    while (chunk && (got = fread(chunk, 1, READ_CHUNK_BYTES, fp)) > 0) {
        sha256_update(&hash, chunk, got);
        for (const char *c = chunk, *stop = chunk + got; (c = memchr(c, '\n', (size_t)(stop - c))); c++) count++;
        last = (unsigned char)chunk[got - 1];
    }
    int rc = !chunk ? fail(err, errlen, ERR_RUNTIME, "%s: out of memory", path)
             : ferror(fp) ? fail(err, errlen, ERR_RUNTIME, "%s: read error", path) : EXIT_OK;
    if (rc == EXIT_OK) {
        sha256_final_hex(&hash, sha256);
        *lines = count + (last != '\n');   /* a last line without '\n' counts */
    }
    free(chunk);
    fclose(fp);
    return rc;
}

int dataset_read(const char *path, TextDataset *out, char *err, size_t errlen) {
    return read_path(path, NULL, 0, WHOLE, out, err, errlen);
}

int dataset_read_columns(const char *path, const DatasetColumns *columns, TextDataset *out, char *err,
                         size_t errlen) {
    return read_path(path, columns, 0, WHOLE, out, err, errlen);
}

int dataset_read_texts(const char *path, TextDataset *out, char *err, size_t errlen) {
    return read_path(path, NULL, 1, WHOLE, out, err, errlen);
}

int dataset_read_shard(const char *path, const DatasetColumns *columns, int texts, DatasetShard shard,
                       TextDataset *out, char *err, size_t errlen) {
    if (shard.parts < 1 || shard.part < 0 || shard.part >= shard.parts)
        return fail(err, errlen, ERR_RUNTIME, "%s: share %d of %d does not exist", path, shard.part, shard.parts);
    return read_path(path, columns, texts, shard, out, err, errlen);
}

void dataset_free(TextDataset *d) {
    if (!d) return;
    for (int i = 0; i < d->n; i++) {
        free(d->examples[i].label);
        free(d->examples[i].text);
    }
    free(d->examples);
    free(d->path);
    free(d->header_label);
    memset(d, 0, sizeof *d);
}

/* ---- Leakage ---- */

/* Trimmed span of a text: the comparison ignores surrounding whitespace. */
static void trimmed(const char *s, const char **start, size_t *len) {
    *start = s;
    *len = strlen(s);
    csv_trim_span(start, len);
}

uint64_t dataset_text_hash(const char *text) {
    const char *s;
    size_t len;
    trimmed(text, &s, &len);
    return hash_bytes(HASH_START, s, len);
}

int dataset_leakage(const TextDataset *train, const TextDataset *other, int *lines, int max_lines) {
    if (!train || !other) return 0;
    StrMap seen;
    memset(&seen, 0, sizeof seen);
    for (int i = 0; i < train->n; i++) {
        const char *s;
        size_t len;
        trimmed(train->examples[i].text, &s, &len);
        if (strmap_add(&seen, s, len) < 0) {
            strmap_free(&seen);
            return -1;
        }
    }
    int count = 0;
    for (int i = 0; i < other->n; i++) {
        const char *s;
        size_t len;
        trimmed(other->examples[i].text, &s, &len);
        if (!strmap_contains(&seen, s, len)) continue;
        if (lines && count < max_lines) lines[count] = other->examples[i].line;
        count++;
    }
    strmap_free(&seen);
    return count;
}

/* ---- One text as predict meets it ---- */

int dataset_check_label(const char *s, size_t len, char *why, size_t whylen) {
    if (!len) return fail(why, whylen, -1, "empty label");
    /* a label is printed in tab-separated lines (predict --probs, reports):
     * a control character inside one (a quoted CSV field may hold a tab or a
     * line break) would break those lines */
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
            return fail(why, whylen, -1, "the label holds a control character (byte 0x%02x: a tab or line break, "
                        "say), which the tab-separated outputs cannot show; remove it", (unsigned char)s[i]);
    if (utf8_invalid_at((const unsigned char *)s, len) < len) return fail(why, whylen, -1, "the label is not valid UTF-8");
    if (s[0] == ' ' || s[len - 1] == ' ')   /* reading trims a label's surrounding spaces */
        return fail(why, whylen, -1, "the label starts or ends with a space, which reading data trims");
    return 0;
}

TextCheck dataset_check_text(const char *s, size_t len, size_t *start, size_t *trimmed_len, char *why,
                             size_t whylen) {
    const char *nul = memchr(s, '\0', len);
    if (nul) {
        set_error(why, whylen, "a NUL byte at byte %zu", (size_t)(nul - s) + 1);
        return TEXT_INVALID;
    }
    size_t bad = utf8_invalid_at((const unsigned char *)s, len);
    if (bad < len) {
        set_error(why, whylen, "invalid UTF-8 at byte %zu", bad + 1);
        return TEXT_INVALID;
    }
    const char *t = s;
    size_t n = len;
    csv_trim_span(&t, &n);
    if (start) *start = (size_t)(t - s);
    if (trimmed_len) *trimmed_len = n;
    if (!n) {
        set_error(why, whylen, "empty text");
        return TEXT_EMPTY;
    }
    return TEXT_OK;
}
