/* dataset.h: labelled text files (docs/DESIGN.md §3): reading TSV and CSV,
 * the stratified validation split and the leakage check. Knows nothing of
 * tokens or the model. Every error message names the file and line;
 * statuses follow base/errors.h. */
#ifndef TEXT_DATASET_H
#define TEXT_DATASET_H

#include <stddef.h>
#include <stdint.h>

#include "base/errors.h"

typedef struct {
    char *label;
    char *text;
    int line;          /* 1-based line in the source file */
} Example;

typedef struct {
    char *path;        /* as given by the user */
    Example *examples; /* (n) */
    int n;
    char sha256[65];   /* of the source's bytes, hashed as they were read (a stream is read once) */
    long lines;        /* the source's lines, a last one without '\n' included */
    int first;         /* a share (dataset_read_shard): examples of the source before examples[0] */
    int total;         /* examples in the whole source (n unless a share) */
    char *header_label; /* a file with a header row: that row's field in the label column; else NULL */
    int header_line;    /* that row's line in the file (blank and comment lines come before it) */
    int header_by_number; /* a TSV whose first line was taken as its header because both columns were chosen
                             by number: no name in it confirmed that it is one */
    int tabbed, first_tabbed;   /* TSV lines without a header whose text holds a tab (more columns?), the first's line */
} TextDataset;

/* Which columns of a file with a header row hold the label and the text
 * (--label-column, --text-column): a header name (compared without case)
 * or a 1-based column number. NULL or "" means "label" and "text". */
typedef struct {
    const char *label;
    const char *text;
} DatasetColumns;

/* Reads a TSV (label<TAB>text) or a CSV with a header holding `label` and
 * `text` columns (RFC 4180), chosen by the .csv extension or a header line.
 * A TSV whose first line has more than two columns, 'label' and 'text' among
 * them, is read as a table with that header row. Tolerates CRLF, a BOM,
 * blank lines and '#' comment lines; refuses invalid UTF-8, NUL bytes,
 * missing tab, empty label or text, an empty file. The file is read once,
 * as a stream (a FIFO or a pipe works), each line checked as it arrives: a
 * line longer than the limit is refused as soon as the limit is passed, so an
 * endless line (/dev/zero) ends quickly. */
int dataset_read(const char *path, TextDataset *out, char *err, size_t errlen);
/* Texts for pretraining (docs/DESIGN.md §4b): a TSV or CSV as above (its labels are
 * kept but mean nothing), or, when the first content line has no tab and is
 * no CSV header, one text a line, each labelled TEXTS_LABEL. */
#define TEXTS_LABEL "-"
int dataset_read_texts(const char *path, TextDataset *out, char *err, size_t errlen);
/* An MPI rank's contiguous share of a file: of parts processes, part keeps
 * the examples whose line starts in bytes [size*part/parts,
 * size*(part+1)/parts) of the file, which must be a regular file when
 * parts > 1. Without seek each process reads and checks the whole file
 * (sha256, lines, first and total are of the whole). With seek, once the
 * format is known from the file's first content line (its header), a TSV
 * or a text file is read from the share's first line to its last only,
 * numbered from lines_before (the newlines before the share: the sum of
 * dataset_share_newlines over the parts before); then sha256 is "", lines
 * 0, and first and total are for the caller to fill in (from every part's
 * n), as is the "no examples" check. A CSV (quoted fields may hold newlines)
 * is still read whole. texts = 1 reads as dataset_read_texts. */
typedef struct {
    int part, parts;
    long lines_before;
    int seek;
} DatasetShard;
int dataset_read_shard(const char *path, const DatasetColumns *columns, int texts, DatasetShard shard,
                       TextDataset *out, char *err, size_t errlen);
/* Newlines in the share's bytes (for lines_before); -1 with a message. */
long dataset_share_newlines(const char *path, DatasetShard shard, char *err, size_t errlen);
/* The SHA-256 and line count of a whole file, streamed (what a read of it records). Status as base/errors.h. */
int dataset_digest(const char *path, char sha256[65], long *lines, char *err, size_t errlen);
/* Same, from a buffer (for tests and fuzzing); path is used in messages. */
int dataset_parse(const char *path, const char *buf, size_t len, TextDataset *out, char *err, size_t errlen);
/* Same, with the columns chosen: when a choice differs from label/text the
 * file must have a header row (CSV, or TSV with tabs between all columns). */
int dataset_read_columns(const char *path, const DatasetColumns *columns, TextDataset *out, char *err,
                         size_t errlen);
int dataset_parse_columns(const char *path, const char *buf, size_t len, const DatasetColumns *columns,
                          TextDataset *out, char *err, size_t errlen);
void dataset_free(TextDataset *d);
/* One label (len bytes) checked by the rules a data file's label meets, the
 * one place they are: not empty, no control character (a tab or line break
 * would break tab-separated outputs), valid UTF-8, no surrounding space
 * (reading trims it). 0, or -1 with why saying what is wrong. */
int dataset_check_label(const char *s, size_t len, char *why, size_t whylen);
/* One text checked by the rules a data file's text meets (predict's
 * inputs): no NUL byte, valid UTF-8, not empty once surrounding ASCII
 * whitespace is trimmed. TEXT_OK sets *start and *trimmed_len (either may
 * be NULL) to the trimmed span; otherwise why says what is wrong. */
typedef enum { TEXT_OK, TEXT_EMPTY, TEXT_INVALID } TextCheck;
TextCheck dataset_check_text(const char *s, size_t len, size_t *start, size_t *trimmed_len, char *why,
                             size_t whylen);

/* Exact duplicates (ignoring surrounding whitespace) of training texts in
 * other: returns the count (-1 when out of memory) and stores up to
 * max_lines of their line numbers in other. */
int dataset_leakage(const TextDataset *train, const TextDataset *other, int *lines, int max_lines);
/* A 64-bit hash (FNV-1a) of a text without its surrounding whitespace: the
 * leakage check across MPI ranks compares these. */
uint64_t dataset_text_hash(const char *text);

#endif
