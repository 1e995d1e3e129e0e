/* corpus.c: reads and encodes the data of a training run (see corpus.h). */
#include "run/corpus.h"

#include <stdlib.h>
#include <string.h>

#define LEAK_EXAMPLES 3

static void report_leakage(const TextDataset *train, const TextDataset *other, const char *what, FILE *log) {
    int lines[LEAK_EXAMPLES];
    int count = dataset_leakage(train, other, lines, LEAK_EXAMPLES);
    if (count == 0) return;
    fprintf(log, "warning: leakage: %d %s example%s also in the training data (%s lines", count, what,
            count == 1 ? " is" : "s are", other->path);
    for (int i = 0; i < count && i < LEAK_EXAMPLES; i++) fprintf(log, "%s%d", i ? ", " : " ", lines[i]);
    fprintf(log, "%s)\n", count > LEAK_EXAMPLES ? ", ..." : "");
}

static int encode(const TextDataset *d, const Corpus *c, int max_len, EncodedDataset *out, const char *what,
                  FILE *log, char *err, size_t errlen) {
    int rc = encode_dataset(d, &c->vocab, c->tokenizer, &c->labels, max_len, out, err, errlen);
    if (rc != EXIT_OK) return rc;
    if (out->n_truncated > 0)
        fprintf(log, "note: %d of %d %s example%s longer than --max-len %d and %s truncated\n", out->n_truncated,
                out->n, what, out->n == 1 ? " is" : "s are", max_len, out->n_truncated == 1 ? "was" : "were");
    return 0;
}

int corpus_prepare(Corpus *c, const Options *o, const char *train_path, FILE *log, char *err, size_t errlen) {
    int rc;
    memset(c, 0, sizeof *c);
    if (tokenizer_parse(o->tokenizer, &c->tokenizer) != 0) return fail(err, errlen, ERR_INPUT, "--tokenizer must be word or char");
    TextDataset all;
    DatasetColumns columns = {o->label_column, o->text_column};
    if ((rc = dataset_read_columns(train_path, &columns, &all, err, errlen)) != EXIT_OK) return rc;
    if (o->val_path && *o->val_path) {
        c->train = all;
        if ((rc = dataset_read_columns(o->val_path, &columns, &c->val, err, errlen)) != EXIT_OK) return rc;
        c->has_val = 1;
    } else if (o->val_split > 0) {
        rc = dataset_split(&all, o->val_split, (uint64_t)o->seed, &c->train, &c->val, err, errlen);
        dataset_free(&all);
        if (rc != EXIT_OK) return rc;
        c->has_val = c->val.n > 0;
    } else {
        c->train = all;
    }
    if (o->test_path && *o->test_path) {
        if ((rc = dataset_read_columns(o->test_path, &columns, &c->test, err, errlen)) != EXIT_OK) return rc;
        c->has_test = 1;
    }
    labels_build(&c->labels, &c->train);
    if (c->labels.n < 2) {
        return fail(err, errlen, ERR_INPUT, "%s: only one class ('%s') in the training data; a classifier needs at "
                    "least two", train_path, c->labels.n ? c->labels.names[0] : "");
    }
    if ((rc = vocab_build(&c->vocab, c->tokenizer, &c->train, o->vocab_size, o->min_freq, err, errlen)) != EXIT_OK)
        return rc;
    if (c->has_val) report_leakage(&c->train, &c->val, "validation", log);
    if (c->has_test) report_leakage(&c->train, &c->test, "test", log);
    if ((rc = encode(&c->train, c, o->max_len, &c->enc_train, "training", log, err, errlen))) return rc;
    if (c->has_val && (rc = encode(&c->val, c, o->max_len, &c->enc_val, "validation", log, err, errlen))) return rc;
    if (c->has_test && (rc = encode(&c->test, c, o->max_len, &c->enc_test, "test", log, err, errlen))) return rc;
    return 0;
}

void corpus_free(Corpus *c) {
    encoded_free(&c->enc_train);
    encoded_free(&c->enc_val);
    encoded_free(&c->enc_test);
    vocab_free(&c->vocab);
    labels_free(&c->labels);
    dataset_free(&c->train);
    dataset_free(&c->val);
    dataset_free(&c->test);
    memset(c, 0, sizeof *c);
}
