/* fuzz_data.c: libFuzzer target for the data module: parses the input as TSV
 * and as CSV, then builds vocabularies with both tokenizers, encodes, splits,
 * batches and checks leakage, asserting the invariants of each result. */
#include "text/encode.h"
#include "text/split.h"
#include "model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stops the fuzzer when an invariant breaks. */
static void require(int ok, const char *what) {
    if (!ok) {
        fprintf(stderr, "invariant broken: %s\n", what);
        abort();
    }
}

static void check_encoded(const EncodedDataset *e, const Vocab *v, int max_len, int n) {
    require(e->n == n, "every example encoded");
    for (int i = 0; i < e->n; i++) {
        int len = e->lengths[i];
        const int *ids = e->ids + e->offsets[i];
        require(len >= 2 && len <= max_len, "length within [2, max_len]");
        require(ids[0] == TOKEN_CLS && ids[len - 1] == TOKEN_SEP, "[CLS] ... [SEP]");
        for (int t = 0; t < len; t++) require(ids[t] > TOKEN_PAD && ids[t] < v->size, "id in vocab, never [PAD]");
    }
    if (e->n > 0) {
        int indices[2] = {0, e->n - 1};
        int *tokens = malloc((size_t)2 * (size_t)e->longest * sizeof *tokens);
        int labels[2];
        if (tokens) {
            int T = encoded_batch(e, indices, 2, tokens, labels);
            require(T >= 2 && T <= e->longest, "batch length");
            free(tokens);
        }
    }
}

static void exercise(const TextDataset *d) {
    static const TokenizerKind KINDS[] = {TOKENIZER_WORD, TOKENIZER_CHAR, TOKENIZER_NGRAM};
    for (int kind = 0; kind < 3; kind++) {   /* the index also varies the cap, --min-freq and max_len */
        char err[256];
        Vocab v;
        LabelSet labels;
        if (vocab_build(&v, KINDS[kind], d, kind ? 0 : 40, kind, err, sizeof err) != 0) continue;
        require(v.size >= N_SPECIAL_TOKENS, "vocab has the specials");
        for (int i = 0; i < v.size; i++)
            require(vocab_lookup(&v, v.tokens[i], strlen(v.tokens[i])) == i, "vocab lookup finds each token");
        Vocab copy;
        if (vocab_from_tokens(&copy, v.tokens, v.size, err, sizeof err) == 0) vocab_free(&copy);
        else require(0, "a built vocab reloads");
        if (labels_build(&labels, d) == 0) {
            EncodedDataset e;
            int max_len = 3 + kind * 5;
            if (encode_dataset(d, &v, KINDS[kind], &labels, max_len, &e, err, sizeof err) == 0) {
                check_encoded(&e, &v, max_len, d->n);
                int *counts = calloc((size_t)labels.n, sizeof *counts);
                if (counts) {
                    labels_count(e.labels, e.n, labels.n, counts);
                    int total = 0;
                    for (int c = 0; c < labels.n; c++) total += counts[c];
                    require(total == e.n, "class counts add up");
                    free(counts);
                }
                encoded_free(&e);
            }
            labels_free(&labels);
        }
        vocab_free(&v);
    }
    TextDataset train, val;
    char err[256];
    if (dataset_split(d, 0.3, 7, &train, &val, err, sizeof err) == 0) {
        require(train.n + val.n == d->n && val.n > 0, "split covers the data");
        int lines[4];
        int leaks = dataset_leakage(&train, &val, lines, 4);
        require(leaks >= 0 && leaks <= val.n, "leakage count");
        dataset_free(&train);
        dataset_free(&val);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char *const paths[] = {"fuzz.tsv", "fuzz.csv"};
    for (int p = 0; p < 2; p++) {
        TextDataset d;
        char err[256];
        err[0] = '\0';
        int rc = dataset_parse(paths[p], (const char *)data, size, &d, err, sizeof err);
        if (rc == 0) {
            require(d.n > 0, "a parsed dataset has examples");
            for (int i = 0; i < d.n; i++)
                require(d.examples[i].label[0] && d.examples[i].text[0] && d.examples[i].line >= 1, "example fields");
            exercise(&d);
        } else {
            require(rc == ERR_INPUT && d.n == 0 && strncmp(err, paths[p], strlen(paths[p])) == 0,
                    "a refusal names the file");
        }
        dataset_free(&d);
    }
    return 0;
}
