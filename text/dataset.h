/* data.h: labelled text files, tokenizers, vocabulary, labels, encoding and
 * batches (SPEC section 3). Knows nothing of the model. Every error message
 * names the file and line. Functions return 0 on success, DATA_ERR_INPUT (2)
 * for bad input (exit code 2) or DATA_ERR_IO (1) for other failures. */
#ifndef DATA_H
#define DATA_H

#include <stddef.h>
#include <stdint.h>

enum { DATA_OK = 0, DATA_ERR_IO = 1, DATA_ERR_INPUT = 2 };

typedef enum { TOKENIZER_WORD = 0, TOKENIZER_CHAR = 1 } TokenizerKind;

typedef struct {
    char *label;
    char *text;
    int line;          /* 1-based line in the source file */
} Example;

typedef struct {
    char *path;        /* as given by the user */
    Example *examples;
    int n;
} TextDataset;

/* Reads a TSV (label<TAB>text) or a CSV with a header holding `label` and
 * `text` columns (RFC 4180), chosen by the .csv extension or a header line.
 * Tolerates CRLF, a BOM, blank lines and '#' comment lines; refuses invalid
 * UTF-8, NUL bytes, missing tab, empty label or text, an empty file. */
int dataset_read(const char *path, TextDataset *out, char *err, size_t errlen);
/* Same, from a buffer (for tests and fuzzing); path is used in messages. */
int dataset_parse(const char *path, const char *buf, size_t len, TextDataset *out, char *err, size_t errlen);
void dataset_free(TextDataset *d);
/* Stratified, seeded split: about frac of each class goes to val (at least one
 * example of a class with 2 or more). Examples are copied. */
int dataset_split(const TextDataset *all, double frac, uint64_t seed, TextDataset *train, TextDataset *val,
                  char *err, size_t errlen);

/* Calls fn for each token of text. special is the fixed id of a literal
 * [CLS]/[SEP]/[MASK], or -1 for an ordinary token (tok, len).
 * Returns 0, or the first non-zero value fn returned. */
typedef int (*TokenFn)(const char *tok, size_t len, int special, void *ctx);
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx);
const char *tokenizer_name(TokenizerKind k);
int tokenizer_parse(const char *s, TokenizerKind *out);

typedef struct {
    char **tokens;     /* id -> token; ids 0..4 are [PAD] [UNK] [CLS] [SEP] [MASK] */
    int size;
    int *table;        /* open-addressing hash: token -> id */
    int table_cap;
} Vocab;

/* Specials, then tokens by descending frequency, ties in byte order;
 * max_size caps the total (specials included, 0 = no cap); min_freq filters. */
int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq,
                char *err, size_t errlen);
int vocab_from_tokens(Vocab *v, char *const *tokens, int n, char *err, size_t errlen);
int vocab_lookup(const Vocab *v, const char *tok, size_t len);   /* TOKEN_UNK when absent */
void vocab_free(Vocab *v);

typedef struct {
    char **names;      /* sorted in byte order */
    int n;
} LabelSet;

int labels_build(LabelSet *l, const TextDataset *train);
int labels_from_names(LabelSet *l, char *const *names, int n);
int labels_index(const LabelSet *l, const char *name);           /* -1 when absent */
void labels_free(LabelSet *l);

/* Token ids of each example: [CLS] tok... [SEP], at most max_len ids. */
typedef struct {
    int *ids;          /* all sequences back to back */
    size_t *offsets;   /* (n) start of each sequence in ids */
    int *lengths;      /* (n) */
    int *labels;       /* (n) class index, or -1 when encoded without labels */
    int n;
    int n_truncated;   /* examples longer than max_len */
    int longest;       /* longest encoded length */
} EncodedDataset;

/* labels may be NULL (predict). A label not in the set is bad input naming
 * the label, file and line. */
int encode_dataset(const TextDataset *d, const Vocab *v, TokenizerKind kind, const LabelSet *labels,
                   int max_len, EncodedDataset *out, char *err, size_t errlen);
/* Encodes one text into ids (capacity max_len); returns its length and sets
 * *truncated. */
int encode_text(const char *text, const Vocab *v, TokenizerKind kind, int max_len, int *ids, int *truncated);
void encoded_free(EncodedDataset *e);

/* Copies examples indices[0..B) into tokens (B, T) padded with [PAD], where T
 * is the longest of them; labels_out (B) may be NULL. Returns T. */
int make_batch(const EncodedDataset *e, const int *indices, int B, int *tokens, int *labels_out);

/* Exact duplicates of training texts in other: returns the count and stores up
 * to max_lines of their line numbers in other. */
int find_leakage(const TextDataset *train, const TextDataset *other, int *lines, int max_lines);

/* Counts per class of a label index array (n_classes) into counts. */
void class_counts(const int *labels, int n, int n_classes, int *counts);

#endif
