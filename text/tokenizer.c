/* tokenizer.c: the word and char tokenizers, vocabulary and label set,
 * encoding texts into [CLS] ... [SEP] id sequences, padded batches and the
 * train/val leakage check (SPEC section 3). */
#include "text/dataset.h"
#include "model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

static const char *const SPECIAL_NAMES[N_SPECIAL_TOKENS] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

/* ispunct() in the C locale: the printable ASCII that is neither a letter,
 * a digit nor a space. */
static int is_punct(unsigned char c) {
    return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

static char *copy_span(const char *s, size_t len) {
    char *copy = malloc(len + 1);
    if (!copy) return NULL;
    memcpy(copy, s, len);
    copy[len] = '\0';
    return copy;
}

/* FNV-1a over a byte span. */
static uint64_t hash_span(const char *s, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001B3ull;
    return h;
}

/* ---- Tokenizers ---- */

const char *tokenizer_name(TokenizerKind k) { return k == TOKENIZER_CHAR ? "char" : "word"; }

int tokenizer_parse(const char *s, TokenizerKind *out) {
    if (!s || !out) return -1;
    if (strcmp(s, "word") == 0) *out = TOKENIZER_WORD;
    else if (strcmp(s, "char") == 0) *out = TOKENIZER_CHAR;
    else return -1;
    return 0;
}

/* Length of a literal [CLS], [SEP] or [MASK] at s (0 when none); sets *id. */
static size_t special_at(const char *s, int *id) {
    static const int literal_ids[] = {TOKEN_CLS, TOKEN_SEP, TOKEN_MASK};
    if (*s != '[') return 0;
    for (int k = 0; k < 3; k++) {
        const char *name = SPECIAL_NAMES[literal_ids[k]];
        size_t n = strlen(name);
        if (strncmp(s, name, n) == 0) {
            *id = literal_ids[k];
            return n;
        }
    }
    return 0;
}

/* Bytes of the UTF-8 sequence at s: its length when the lead byte and its
 * continuation bytes are well formed, else 1 (the stray byte alone). */
static size_t utf8_length_at(const char *s) {
    unsigned char c = (unsigned char)s[0];
    size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    for (size_t k = 1; k < n; k++)     /* stops at the NUL, which is no continuation byte */
        if (((unsigned char)s[k] & 0xC0) != 0x80) return 1;
    return n;
}

static int tokenize_word(const char *text, const char *lower, TokenFn fn, void *ctx) {
    size_t i = 0;
    while (text[i]) {
        int id, rc;
        size_t special = special_at(text + i, &id);
        unsigned char c = (unsigned char)text[i];
        if (special) {
            rc = fn(text + i, special, id, ctx);
            i += special;
        } else if (is_space(c)) {
            i++;
            continue;
        } else if (is_punct(c)) {
            rc = fn(lower + i, 1, -1, ctx);
            i++;
        } else {
            /* A word runs to whitespace or punctuation; '[' being punctuation,
             * no literal special can hide inside it. */
            size_t start = i;
            while (text[i] && !is_space((unsigned char)text[i]) && !is_punct((unsigned char)text[i])) i++;
            rc = fn(lower + start, i - start, -1, ctx);
        }
        if (rc) return rc;
    }
    return 0;
}

static int tokenize_char(const char *text, TokenFn fn, void *ctx) {
    size_t i = 0;
    while (text[i]) {
        int id, rc;
        size_t special = special_at(text + i, &id);
        if (special) {
            rc = fn(text + i, special, id, ctx);
            i += special;
        } else {
            size_t n = utf8_length_at(text + i);
            rc = fn(text + i, n, -1, ctx);
            i += n;
        }
        if (rc) return rc;
    }
    return 0;
}

/* Returns 0, fn's first non-zero value, or -1 when out of memory. */
int tokenize(TokenizerKind kind, const char *text, TokenFn fn, void *ctx) {
    if (!text || !fn) return 0;
    if (kind == TOKENIZER_CHAR) return tokenize_char(text, fn, ctx);
    size_t len = 0;
    int has_upper = 0;
    for (; text[len]; len++) has_upper |= text[len] >= 'A' && text[len] <= 'Z';
    if (!has_upper) return tokenize_word(text, text, fn, ctx);
    /* Word tokens come from a copy with A-Z lower-cased at the same offsets. */
    char *lower = copy_span(text, len);
    if (!lower) return -1;
    for (size_t i = 0; i < len; i++)
        if (lower[i] >= 'A' && lower[i] <= 'Z') lower[i] = (char)(lower[i] - 'A' + 'a');
    int rc = tokenize_word(text, lower, fn, ctx);
    free(lower);
    return rc;
}

/* ---- A string-keyed hash map with counts (open addressing) ---- */

typedef struct {
    char **keys;
    size_t *key_lens;
    long *counts;
    int n, entries_cap;
    int *slots;                      /* entry index or -1; a power of two long */
    size_t n_slots;
} StrMap;

static void strmap_free(StrMap *m) {
    for (int i = 0; i < m->n; i++) free(m->keys[i]);
    free(m->keys);
    free(m->key_lens);
    free(m->counts);
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* Slot holding key, or the empty slot where it would go. */
static size_t strmap_slot(const StrMap *m, const char *key, size_t len) {
    size_t mask = m->n_slots - 1;
    size_t s = (size_t)hash_span(key, len) & mask;
    for (;;) {
        int e = m->slots[s];
        if (e < 0 || (m->key_lens[e] == len && memcmp(m->keys[e], key, len) == 0)) return s;
        s = (s + 1) & mask;
    }
}

static int strmap_rehash(StrMap *m, size_t n_slots) {
    int *slots = malloc(n_slots * sizeof *slots);
    if (!slots) return -1;
    for (size_t s = 0; s < n_slots; s++) slots[s] = -1;
    free(m->slots);
    m->slots = slots;
    m->n_slots = n_slots;
    for (int e = 0; e < m->n; e++) m->slots[strmap_slot(m, m->keys[e], m->key_lens[e])] = e;
    return 0;
}

static int strmap_grow_entries(StrMap *m) {
    if (m->n >= (1 << 30)) return -1;
    int cap = m->entries_cap ? m->entries_cap * 2 : 64;
    char **keys = realloc(m->keys, (size_t)cap * sizeof *keys);
    if (!keys) return -1;
    m->keys = keys;
    size_t *lens = realloc(m->key_lens, (size_t)cap * sizeof *lens);
    if (!lens) return -1;
    m->key_lens = lens;
    long *counts = realloc(m->counts, (size_t)cap * sizeof *counts);
    if (!counts) return -1;
    m->counts = counts;
    m->entries_cap = cap;
    return 0;
}

/* Entry index of key, inserted with count 0 when new; -1 when out of memory. */
static int strmap_add(StrMap *m, const char *key, size_t len) {
    if ((size_t)(m->n + 1) * 2 > m->n_slots && strmap_rehash(m, m->n_slots ? m->n_slots * 2 : 128)) return -1;
    size_t s = strmap_slot(m, key, len);
    if (m->slots[s] >= 0) return m->slots[s];
    if (m->n == m->entries_cap && strmap_grow_entries(m)) return -1;
    char *copy = copy_span(key, len);
    if (!copy) return -1;
    int e = m->n++;
    m->keys[e] = copy;
    m->key_lens[e] = len;
    m->counts[e] = 0;
    m->slots[s] = e;
    return e;
}

static int strmap_contains(const StrMap *m, const char *key, size_t len) {
    return m->n_slots && m->slots[strmap_slot(m, key, len)] >= 0;
}

/* ---- Vocabulary ---- */

/* Fills v->table from v->tokens; returns the first duplicate id, 0 when none
 * (id 0 can never be a duplicate), or -1 when out of memory. */
static int vocab_index(Vocab *v) {
    int cap = 16;
    while (cap < 2 * v->size) cap *= 2;
    v->table = malloc((size_t)cap * sizeof *v->table);
    if (!v->table) return -1;
    v->table_cap = cap;
    for (int s = 0; s < cap; s++) v->table[s] = -1;
    for (int id = 0; id < v->size; id++) {
        const char *tok = v->tokens[id];
        size_t len = strlen(tok);
        size_t s = (size_t)hash_span(tok, len) & (size_t)(cap - 1);
        while (v->table[s] >= 0) {
            if (strcmp(v->tokens[v->table[s]], tok) == 0) return id;
            s = (s + 1) & (size_t)(cap - 1);
        }
        v->table[s] = id;
    }
    return 0;
}

int vocab_lookup(const Vocab *v, const char *tok, size_t len) {
    if (!v || !v->table || !tok || memchr(tok, '\0', len)) return TOKEN_UNK;
    size_t mask = (size_t)v->table_cap - 1;
    size_t s = (size_t)hash_span(tok, len) & mask;
    for (int probes = 0; probes < v->table_cap; probes++) {
        int id = v->table[s];
        if (id < 0) break;
        /* strncmp stops at the stored token's end, so no over-read. */
        if (strncmp(v->tokens[id], tok, len) == 0 && v->tokens[id][len] == '\0') return id;
        s = (s + 1) & mask;
    }
    return TOKEN_UNK;
}

void vocab_free(Vocab *v) {
    if (!v) return;
    for (int i = 0; i < v->size; i++) free(v->tokens[i]);
    free(v->tokens);
    free(v->table);
    memset(v, 0, sizeof *v);
}

typedef struct {
    const char *token;
    long count;
} TokenCount;

/* Descending count, then ascending byte order (strcmp compares as unsigned char). */
static int compare_token_counts(const void *a, const void *b) {
    const TokenCount *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return strcmp(x->token, y->token);
}

static int count_token(const char *tok, size_t len, int special, void *ctx) {
    if (special >= 0) return 0;
    StrMap *m = ctx;
    int e = strmap_add(m, tok, len);
    if (e < 0) return -1;
    m->counts[e]++;
    return 0;
}

/* Fills v with the specials and then the n chosen tokens. */
static int vocab_fill(Vocab *v, const TokenCount *chosen, int n) {
    v->tokens = calloc((size_t)n + N_SPECIAL_TOKENS, sizeof *v->tokens);
    if (!v->tokens) return -1;
    for (int i = 0; i < N_SPECIAL_TOKENS + n; i++) {
        const char *src = i < N_SPECIAL_TOKENS ? SPECIAL_NAMES[i] : chosen[i - N_SPECIAL_TOKENS].token;
        v->tokens[i] = copy_span(src, strlen(src));
        if (!v->tokens[i]) return -1;
        v->size = i + 1;
    }
    return vocab_index(v) != 0 ? -1 : 0;
}

int vocab_build(Vocab *v, TokenizerKind kind, const TextDataset *train, int max_size, int min_freq, char *err,
                size_t errlen) {
    if (!v || !train) return fail(err, errlen, DATA_ERR_IO, "vocab_build: missing argument");
    memset(v, 0, sizeof *v);
    if (max_size < 0 || (max_size > 0 && max_size < N_SPECIAL_TOKENS))
        return fail(err, errlen, DATA_ERR_INPUT, "--vocab-size must be 0 (no cap) or at least %d (the specials), got %d",
                    N_SPECIAL_TOKENS, max_size);
    if (min_freq < 0) return fail(err, errlen, DATA_ERR_INPUT, "--min-freq must be 0 or more, got %d", min_freq);
    StrMap counts;
    memset(&counts, 0, sizeof counts);
    int rc = 0;
    for (int i = 0; i < train->n && !rc; i++) rc = tokenize(kind, train->examples[i].text, count_token, &counts);
    TokenCount *chosen = NULL;
    int n = 0;
    if (!rc) chosen = malloc(((size_t)counts.n + 1) * sizeof *chosen);
    if (!rc && chosen) {
        for (int e = 0; e < counts.n; e++) {
            if (counts.counts[e] < min_freq) continue;
            chosen[n].token = counts.keys[e];
            chosen[n].count = counts.counts[e];
            n++;
        }
        qsort(chosen, (size_t)n, sizeof *chosen, compare_token_counts);
        if (max_size > 0 && n > max_size - N_SPECIAL_TOKENS) n = max_size - N_SPECIAL_TOKENS;
        rc = vocab_fill(v, chosen, n);
    }
    int ok = !rc && chosen;
    free(chosen);
    strmap_free(&counts);
    if (!ok) {
        vocab_free(v);
        return fail(err, errlen, DATA_ERR_IO, "%s: out of memory building the vocabulary",
                    train->path ? train->path : "(data)");
    }
    return DATA_OK;
}

int vocab_from_tokens(Vocab *v, char *const *tokens, int n, char *err, size_t errlen) {
    if (!v) return fail(err, errlen, DATA_ERR_IO, "vocab_from_tokens: missing argument");
    memset(v, 0, sizeof *v);
    if (!tokens || n < N_SPECIAL_TOKENS)
        return fail(err, errlen, DATA_ERR_INPUT, "vocabulary has %d tokens; it needs at least the %d specials", n,
                    N_SPECIAL_TOKENS);
    for (int id = 0; id < n; id++) {
        if (!tokens[id] || !tokens[id][0])
            return fail(err, errlen, DATA_ERR_INPUT, "vocabulary: token %d is empty", id);
        if (id < N_SPECIAL_TOKENS && strcmp(tokens[id], SPECIAL_NAMES[id]) != 0)
            return fail(err, errlen, DATA_ERR_INPUT, "vocabulary: token %d must be %s", id, SPECIAL_NAMES[id]);
    }
    v->tokens = calloc((size_t)n, sizeof *v->tokens);
    if (!v->tokens) return fail(err, errlen, DATA_ERR_IO, "vocabulary: out of memory");
    for (int id = 0; id < n; id++) {
        v->tokens[id] = copy_span(tokens[id], strlen(tokens[id]));
        if (!v->tokens[id]) {
            vocab_free(v);
            return fail(err, errlen, DATA_ERR_IO, "vocabulary: out of memory");
        }
        v->size = id + 1;
    }
    int dup = vocab_index(v);
    if (dup != 0) {
        int rc = dup < 0 ? fail(err, errlen, DATA_ERR_IO, "vocabulary: out of memory")
                         : fail(err, errlen, DATA_ERR_INPUT, "vocabulary: token %d ('%.40s') appears twice", dup,
                                v->tokens[dup]);
        vocab_free(v);
        return rc;
    }
    return DATA_OK;
}

/* ---- Labels ---- */

static int compare_strings(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int labels_build(LabelSet *l, const TextDataset *train) {
    if (!l) return DATA_ERR_IO;
    memset(l, 0, sizeof *l);
    if (!train || train->n <= 0) return DATA_ERR_INPUT;
    const char **sorted = malloc((size_t)train->n * sizeof *sorted);
    if (!sorted) return DATA_ERR_IO;
    for (int i = 0; i < train->n; i++) sorted[i] = train->examples[i].label;
    qsort(sorted, (size_t)train->n, sizeof *sorted, compare_strings);
    int unique = 0;
    for (int i = 0; i < train->n; i++)
        if (i == 0 || strcmp(sorted[i], sorted[unique - 1]) != 0) sorted[unique++] = sorted[i];
    int rc = labels_from_names(l, (char *const *)sorted, unique);
    free(sorted);
    return rc;
}

/* Names must be distinct and already in byte order: class i of a model is names[i]. */
int labels_from_names(LabelSet *l, char *const *names, int n) {
    if (!l) return DATA_ERR_IO;
    memset(l, 0, sizeof *l);
    if (!names || n <= 0) return DATA_ERR_INPUT;
    for (int i = 0; i < n; i++) {
        if (!names[i] || !names[i][0]) return DATA_ERR_INPUT;
        if (i > 0 && strcmp(names[i - 1], names[i]) >= 0) return DATA_ERR_INPUT;
    }
    l->names = calloc((size_t)n, sizeof *l->names);
    if (!l->names) return DATA_ERR_IO;
    for (int i = 0; i < n; i++) {
        l->names[i] = copy_span(names[i], strlen(names[i]));
        if (!l->names[i]) {
            labels_free(l);
            return DATA_ERR_IO;
        }
        l->n = i + 1;
    }
    return DATA_OK;
}

int labels_index(const LabelSet *l, const char *name) {
    if (!l || !name) return -1;
    int lo = 0, hi = l->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(name, l->names[mid]);
        if (c == 0) return mid;
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return -1;
}

void labels_free(LabelSet *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) free(l->names[i]);
    free(l->names);
    memset(l, 0, sizeof *l);
}

/* ---- Encoding ---- */

typedef struct {
    const Vocab *vocab;
    int *ids;
    int n, room;
    int truncated;
} EncodeState;

static int encode_token(const char *tok, size_t len, int special, void *ctx) {
    EncodeState *st = ctx;
    if (st->n == st->room) {            /* one token more than fits: stop here */
        st->truncated = 1;
        return 1;
    }
    st->ids[st->n++] = special >= 0 ? special : vocab_lookup(st->vocab, tok, len);
    return 0;
}

/* Returns the length, or -1 for max_len < 3, no ids, or out of memory. */
int encode_text(const char *text, const Vocab *v, TokenizerKind kind, int max_len, int *ids, int *truncated) {
    if (truncated) *truncated = 0;
    if (max_len < 3 || !ids) return -1;
    EncodeState st = {v, ids + 1, 0, max_len - 2, 0};
    ids[0] = TOKEN_CLS;
    if (tokenize(kind, text, encode_token, &st) < 0) return -1;
    ids[st.n + 1] = TOKEN_SEP;
    if (truncated) *truncated = st.truncated;
    return st.n + 2;
}

void encoded_free(EncodedDataset *e) {
    if (!e) return;
    free(e->ids);
    free(e->offsets);
    free(e->lengths);
    free(e->labels);
    memset(e, 0, sizeof *e);
}

/* "(a, b, c)" listing the known labels, shortened with "..." when long. */
static void describe_labels(const LabelSet *l, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < l->n && used < size; i++) {
        if (used + strlen(l->names[i]) + 8 > 160) {
            used += (size_t)snprintf(buf + used, size - used, "%s...", i ? ", " : "");
            break;
        }
        used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", l->names[i]);
    }
    if (used < size) snprintf(buf + used, size - used, ")");
}

static int append_ids(EncodedDataset *out, size_t *cap, const int *ids, int len) {
    size_t used = out->n ? out->offsets[out->n - 1] + (size_t)out->lengths[out->n - 1] : 0;
    if (used + (size_t)len > *cap) {
        size_t new_cap = *cap ? *cap * 2 : 1024;
        while (new_cap < used + (size_t)len) new_cap *= 2;
        int *grown = realloc(out->ids, new_cap * sizeof *grown);
        if (!grown) return -1;
        out->ids = grown;
        *cap = new_cap;
    }
    memcpy(out->ids + used, ids, (size_t)len * sizeof *ids);
    out->offsets[out->n] = used;
    out->lengths[out->n] = len;
    return 0;
}

int encode_dataset(const TextDataset *d, const Vocab *v, TokenizerKind kind, const LabelSet *labels, int max_len,
                   EncodedDataset *out, char *err, size_t errlen) {
    if (!out) return fail(err, errlen, DATA_ERR_IO, "encode_dataset: no output");
    memset(out, 0, sizeof *out);
    if (!d || !v) return fail(err, errlen, DATA_ERR_IO, "encode_dataset: missing argument");
    const char *path = d->path ? d->path : "(data)";
    if (max_len < 3)
        return fail(err, errlen, DATA_ERR_INPUT, "--max-len must be at least 3 ([CLS], a token, [SEP]), got %d", max_len);
    size_t n = d->n > 0 ? (size_t)d->n : 1;
    out->offsets = calloc(n, sizeof *out->offsets);
    out->lengths = calloc(n, sizeof *out->lengths);
    out->labels = calloc(n, sizeof *out->labels);
    int *ids = malloc((size_t)max_len * sizeof *ids);
    size_t cap = 0;
    int rc = (!out->offsets || !out->lengths || !out->labels || !ids)
                 ? fail(err, errlen, DATA_ERR_IO, "%s: out of memory encoding", path) : DATA_OK;
    for (int i = 0; i < d->n && !rc; i++) {
        const Example *ex = &d->examples[i];
        int label = -1;
        if (labels) {
            label = labels_index(labels, ex->label);
            if (label < 0) {
                char known[200];
                describe_labels(labels, known, sizeof known);
                rc = fail(err, errlen, DATA_ERR_INPUT, "%s:%d: label '%.100s' is not one of the training labels %s",
                          path, ex->line, ex->label, known);
                break;
            }
        }
        int truncated = 0;
        int len = encode_text(ex->text, v, kind, max_len, ids, &truncated);
        if (len < 0 || append_ids(out, &cap, ids, len)) {
            rc = fail(err, errlen, DATA_ERR_IO, "%s:%d: out of memory encoding", path, ex->line);
            break;
        }
        out->labels[i] = label;
        out->n_truncated += truncated;
        if (len > out->longest) out->longest = len;
        out->n = i + 1;
    }
    free(ids);
    if (rc) encoded_free(out);
    return rc;
}

/* ---- Batches, leakage, class counts ---- */

/* Returns T, 0 when B <= 0, or -1 when an index is out of range. */
int make_batch(const EncodedDataset *e, const int *indices, int B, int *tokens, int *labels_out) {
    if (!e || !indices || !tokens || B <= 0) return 0;
    int T = 0;
    for (int b = 0; b < B; b++) {
        int idx = indices[b];
        if (idx < 0 || idx >= e->n) return -1;
        if (e->lengths[idx] > T) T = e->lengths[idx];
    }
    for (int b = 0; b < B; b++) {
        int idx = indices[b];
        int len = e->lengths[idx];
        int *row = tokens + (size_t)b * (size_t)T;
        memcpy(row, e->ids + e->offsets[idx], (size_t)len * sizeof *row);
        for (int t = len; t < T; t++) row[t] = TOKEN_PAD;
        if (labels_out) labels_out[b] = e->labels ? e->labels[idx] : -1;
    }
    return T;
}

/* Trimmed span of a text: the comparison ignores surrounding whitespace. */
static void trimmed(const char *s, const char **start, size_t *len) {
    size_t n = strlen(s);
    while (n && is_space((unsigned char)*s)) { s++; n--; }
    while (n && is_space((unsigned char)s[n - 1])) n--;
    *start = s;
    *len = n;
}

/* Returns the number of duplicates, or -1 when out of memory. */
int find_leakage(const TextDataset *train, const TextDataset *other, int *lines, int max_lines) {
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

void class_counts(const int *labels, int n, int n_classes, int *counts) {
    if (!counts) return;
    for (int c = 0; c < n_classes; c++) counts[c] = 0;
    if (!labels) return;
    for (int i = 0; i < n; i++)
        if (labels[i] >= 0 && labels[i] < n_classes) counts[labels[i]]++;
}
