/* tool_bpe.c: learns BPE from a text file and prints the vocabulary, the
 * merges and the ids of every line, in the format of scripts/bpe_ref.py
 * (tests/test_bpe_twin.sh compares the two).
 *
 *   tool_bpe FILE VOCAB_SIZE MIN_FREQ [P SEED MAX_LEN]
 *
 * FILE holds one example a line; a line with a TAB holds its text after the
 * first TAB. Output:
 *   vocab N      then N lines, one symbol each, by id
 *   merges M     then M lines "left right"
 *   ids L        then L lines, the ids of each line, space-separated
 * Every line is also encoded with a Bpe rebuilt by bpe_from_lists; the tool
 * fails when the two disagree. With P, SEED and MAX_LEN, then:
 *   dropout L    then L lines: each line's [CLS] ids [SEP] (cut to MAX_LEN)
 *                after bpe_dropout_batch (text/bpe_dropout.h), the lines
 *                taken in batches of DROP_BATCH, batch j at step j, row i of
 *                a batch at place 2i + 1 of the global batch. */
#include "text/bpe.h"
#include "text/bpe_dropout.h"
#include "base/tokens.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, NUL-terminated, or NULL. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1) break;
        char *bigger = realloc(buf, cap * 2);
        if (!bigger) free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return NULL;
    }
    if (buf) buf[n] = '\0';
    return buf;
}

/* Splits data into lines in place (a last empty line after the final
 * newline dropped); each line's text starts after its first TAB if any. */
static char **split_lines(char *data, int *n_lines) {
    int n = 0, cap = 1024;
    char **lines = malloc(cap * sizeof *lines);
    for (char *p = data; lines && *p;) {
        char *end = strchr(p, '\n');
        if (end) *end = '\0';
        char *tab = strchr(p, '\t');
        if (n == cap) {
            char **bigger = realloc(lines, (size_t)cap * 2 * sizeof *lines);
            if (!bigger) free(lines);
            lines = bigger;
            cap *= 2;
            if (!lines) break;
        }
        lines[n++] = tab ? tab + 1 : p;
        if (!end) break;
        p = end + 1;
    }
    *n_lines = n;
    return lines;
}

/* Encodes text with b into a new array; its length in *n. NULL on failure. */
static int *encode_all(const Bpe *b, const char *text, int *n) {
    *n = bpe_encode_text(b, text, NULL, 0);
    if (*n < 0) return NULL;
    int *ids = malloc(((size_t)*n + 1) * sizeof *ids);
    if (ids && bpe_encode_text(b, text, ids, *n) != *n) {
        free(ids);
        return NULL;
    }
    return ids;
}

/* Rebuilds b from its own lists; NULL (with a message) on failure. */
static Bpe *rebuild(const Bpe *b) {
    int nv = bpe_vocab_size(b), nm = bpe_n_merges(b);
    const char **vocab = malloc((size_t)nv * sizeof *vocab);
    const char *(*merges)[2] = malloc(((size_t)nm + 1) * sizeof *merges);
    Bpe *copy = NULL;
    char err[256] = "out of memory";
    if (vocab && merges) {
        for (int i = 0; i < nv; i++) vocab[i] = bpe_symbol(b, i);
        for (int i = 0; i < nm; i++) bpe_merge(b, i, &merges[i][0], &merges[i][1]);
        bpe_from_lists(vocab, nv, (const char *const(*)[2])merges, nm, &copy, err, sizeof err);
    }
    if (!copy) fprintf(stderr, "tool_bpe: bpe_from_lists refused the learned lists: %s\n", err);
    free(vocab);
    free(merges);
    return copy;
}

static int print_ids(const Bpe *b, const Bpe *copy, char **lines, int n_lines) {
    printf("ids %d\n", n_lines);
    for (int l = 0; l < n_lines; l++) {
        int n, n2;
        int *ids = encode_all(b, lines[l], &n), *ids2 = encode_all(copy, lines[l], &n2);
        int same = ids && ids2 && n == n2 && memcmp(ids, ids2, (size_t)n * sizeof *ids) == 0;
        for (int k = 0; same && k < n; k++) printf(k ? " %d" : "%d", ids[k]);
        putchar('\n');
        free(ids);
        free(ids2);
        if (!same) {
            fprintf(stderr, "tool_bpe: line %d: encoding failed or the rebuilt Bpe disagrees\n", l + 1);
            return -1;
        }
    }
    return 0;
}

enum { DROP_BATCH = 7 };

/* The dropout section: see the top of the file. */
static int print_dropout(const Bpe *b, char **lines, int n_lines, double p, unsigned long long seed, int max_len) {
    BpeSplits s = {0};
    int *tokens = malloc(sizeof(int) * DROP_BATCH * (size_t)max_len);
    int *work = malloc(sizeof(int) * (DROP_BATCH + 1) * (size_t)(max_len + 1));
    int places[DROP_BATCH], rc = -1;
    if (!tokens || !work || bpe_splits_build(&s, b) != 0) goto out;
    for (int i = 0; i < DROP_BATCH; i++) places[i] = 2 * i + 1;
    printf("dropout %d\n", n_lines);
    for (int first = 0; first < n_lines; first += DROP_BATCH) {
        int rows = n_lines - first < DROP_BATCH ? n_lines - first : DROP_BATCH, T = 0;
        int len[DROP_BATCH];
        for (int r = 0; r < rows; r++) {   /* [CLS] ids [SEP], into a scratch row of max_len */
            int n, *ids = encode_all(b, lines[first + r], &n);
            if (!ids) goto out;
            int keep = n < max_len - 2 ? n : max_len - 2;
            int *row = work + (size_t)r * max_len;
            row[0] = TOKEN_CLS;
            memcpy(row + 1, ids, sizeof(int) * (size_t)keep);
            row[keep + 1] = TOKEN_SEP;
            len[r] = keep + 2;
            if (len[r] > T) T = len[r];
            free(ids);
        }
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < T; k++) tokens[r * T + k] = k < len[r] ? work[(size_t)r * max_len + k] : TOKEN_PAD;
        BpeDropoutKey key = {p, seed, (unsigned long long)(first / DROP_BATCH), places};
        T = bpe_dropout_batch(tokens, rows, T, max_len, &s, key, work);
        for (int r = 0; r < rows; r++) {
            for (int k = 0; k < T && tokens[r * T + k] != TOKEN_PAD; k++) printf(k ? " %d" : "%d", tokens[r * T + k]);
            putchar('\n');
        }
    }
    rc = 0;
out:
    if (rc) fprintf(stderr, "tool_bpe: out of memory in the dropout section\n");
    bpe_splits_free(&s);
    free(tokens);
    free(work);
    return rc;
}

int main(int argc, char **argv) {
    if (argc != 4 && argc != 7) {
        fprintf(stderr, "usage: tool_bpe FILE VOCAB_SIZE MIN_FREQ [P SEED MAX_LEN]\n");
        return 2;
    }
    char *data = read_file(argv[1]);
    if (!data) {
        fprintf(stderr, "tool_bpe: cannot read %s\n", argv[1]);
        return 1;
    }
    int n_lines = 0, rc = 1;
    char **lines = split_lines(data, &n_lines);
    BpeCounter *c = bpe_counter_new();
    Bpe *b = NULL, *copy = NULL;
    char err[256];
    int oom = !lines || !c;
    for (int l = 0; !oom && l < n_lines; l++) oom = bpe_counter_add_text(c, lines[l]) != 0;
    if (oom) {
        fprintf(stderr, "tool_bpe: out of memory\n");
        goto done;
    }
    if (bpe_learn(c, atoi(argv[2]), atoi(argv[3]), &b, err, sizeof err)) {
        fprintf(stderr, "tool_bpe: %s\n", err);
        goto done;
    }
    if (!(copy = rebuild(b))) goto done;
    printf("vocab %d\n", bpe_vocab_size(b));
    for (int i = 0; i < bpe_vocab_size(b); i++) printf("%s\n", bpe_symbol(b, i));
    printf("merges %d\n", bpe_n_merges(b));
    for (int i = 0; i < bpe_n_merges(b); i++) {
        const char *l, *r;
        bpe_merge(b, i, &l, &r);
        printf("%s %s\n", l, r);
    }
    rc = print_ids(b, copy, lines, n_lines) ? 1 : 0;
    if (rc == 0 && argc == 7 && atoi(argv[6]) >= 3)
        rc = print_dropout(b, lines, n_lines, atof(argv[4]), strtoull(argv[5], NULL, 10), atoi(argv[6])) ? 1 : 0;
done:
    bpe_free(copy);
    bpe_free(b);
    bpe_counter_free(c);
    free(lines);
    free(data);
    return rc;
}
