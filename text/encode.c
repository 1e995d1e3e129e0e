/* encode.c: texts into [CLS] tok... [SEP] id sequences, and padded batches
 * (see encode.h). */
#include "text/encode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"

typedef struct {
    const Vocab *vocab;
    int *ids;          /* (room) or NULL to count only */
    int n, room;
    int truncated;
} EncodeState;

/* A bpe piece: its subword ids, as many as fit. */
static int encode_piece(EncodeState *st, const char *tok, size_t len) {
    int space = st->ids ? st->room - st->n : 0;
    int total = bpe_encode_piece(st->vocab->bpe, tok, len, st->ids ? st->ids + st->n : NULL, space);
    if (total < 0) return -1;
    if (st->ids && total > space) {
        st->n = st->room;
        st->truncated = 1;
        return 1;
    }
    st->n += total;
    return 0;
}

static int encode_token(const char *tok, size_t len, int special, void *ctx) {
    EncodeState *st = ctx;
    if (st->ids && st->n == st->room) {   /* one token more than fits: stop here */
        st->truncated = 1;
        return 1;
    }
    if (special < 0 && st->vocab->bpe) return encode_piece(st, tok, len);
    if (st->ids) st->ids[st->n] = special >= 0 ? special : vocab_lookup(st->vocab, tok, len);
    st->n++;
    return 0;
}

int encode_length(const char *text, const Vocab *v, TokenizerKind kind) {
    EncodeState st = {v, NULL, 0, 0, 0};
    if (tokenize(kind, text, encode_token, &st) < 0) return -1;
    return st.n + 2;
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
    if (!out) return fail(err, errlen, ERR_RUNTIME, "encode_dataset: no output");
    memset(out, 0, sizeof *out);
    if (!d || !v) return fail(err, errlen, ERR_RUNTIME, "encode_dataset: missing argument");
    const char *path = d->path ? d->path : "(data)";
    if (max_len < 3)
        return fail(err, errlen, ERR_INPUT, "--max-len must be at least 3 ([CLS], a token, [SEP]), got %d", max_len);
    size_t n = d->n > 0 ? (size_t)d->n : 1;
    out->offsets = calloc(n, sizeof *out->offsets);
    out->lengths = calloc(n, sizeof *out->lengths);
    out->labels = calloc(n, sizeof *out->labels);
    int *ids = malloc((size_t)max_len * sizeof *ids);
    size_t cap = 0;
    int rc = (!out->offsets || !out->lengths || !out->labels || !ids)
                 ? fail(err, errlen, ERR_RUNTIME, "%s: out of memory encoding", path) : EXIT_OK;
    for (int i = 0; i < d->n && !rc; i++) {
        const Example *ex = &d->examples[i];
        int label = -1;
        if (labels) {
            label = labels_index(labels, ex->label);
            if (label < 0) {
                char known[200];
                describe_labels(labels, known, sizeof known);
                rc = fail(err, errlen, ERR_INPUT, "%s:%d: label '%.100s' is not one of the training labels %s",
                          path, ex->line, ex->label, known);
                break;
            }
        }
        int truncated = 0;
        int len = encode_text(ex->text, v, kind, max_len, ids, &truncated);
        if (len < 0 || append_ids(out, &cap, ids, len)) {
            rc = fail(err, errlen, ERR_RUNTIME, "%s:%d: out of memory encoding", path, ex->line);
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


/* Returns T, 0 when B <= 0, or -1 when an index is out of range. */
int encoded_batch(const EncodedDataset *e, const int *indices, int B, int *tokens, int *labels_out) {
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
