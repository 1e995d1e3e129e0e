/* corpus.c: reads and encodes the data of a training run (see corpus.h). */
#include "run/corpus.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/saved_model.h"

#define LEAK_EXAMPLES 3
#define AUTO_COVERAGE 0.99   /* --max-len auto holds this share of the training sequences */
#define AUTO_MULTIPLE 8      /* ... rounded up to a multiple of this */
#define AUTO_MAX_LEN 256     /* ... and at most this */
#define UNK_WARN_SHARE 0.5   /* warn when more of the validation tokens are [UNK] */

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
    /* pretraining texts have no classes: no labels to map */
    const LabelSet *labels = c->labels.n > 0 ? &c->labels : NULL;
    int rc = encode_dataset(d, &c->vocab, c->tokenizer, labels, max_len, out, err, errlen);
    if (rc != EXIT_OK) return rc;
    if (out->n_truncated > 0 && log)
        fprintf(log, "note: %d of %d %s example%s longer than --max-len %d and %s truncated\n", out->n_truncated,
                out->n, what, out->n == 1 ? " is" : "s are", max_len, out->n_truncated == 1 ? "was" : "were");
    return 0;
}

static int compare_ints(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* --max-len auto: the smallest multiple of 8 that holds 99% of the training
 * sequences ([CLS] and [SEP] included), at most 256. */
static int auto_max_len(const Corpus *c, int *max_len, char *err, size_t errlen) {
    int n = c->train.n;
    int *lengths = malloc(sizeof(int) * (size_t)n);
    if (!lengths) return fail(err, errlen, ERR_RUNTIME, "out of memory measuring the training sequences");
    for (int i = 0; i < n; i++) {
        lengths[i] = encode_length(c->train.examples[i].text, &c->vocab, c->tokenizer);
        if (lengths[i] < 0) {
            free(lengths);
            return fail(err, errlen, ERR_RUNTIME, "out of memory measuring the training sequences");
        }
    }
    qsort(lengths, (size_t)n, sizeof *lengths, compare_ints);
    int held = (int)ceil(AUTO_COVERAGE * n);
    int need = lengths[(held > 0 ? held : 1) - 1];
    free(lengths);
    int chosen = (need + AUTO_MULTIPLE - 1) / AUTO_MULTIPLE * AUTO_MULTIPLE;
    *max_len = chosen > AUTO_MAX_LEN ? AUTO_MAX_LEN : chosen;
    return EXIT_OK;
}

/* Share of the non-special tokens of d that are [UNK]. */
static double unk_share(const EncodedDataset *d) {
    long unk = 0, total = 0;
    for (int i = 0; i < d->n; i++)
        for (int t = 0; t < d->lengths[i]; t++) {
            int id = d->ids[d->offsets[i] + t];
            if (id == TOKEN_CLS || id == TOKEN_SEP) continue;
            total++;
            unk += id == TOKEN_UNK;
        }
    return total ? (double)unk / total : 0.0;
}

/* Labels that look like text: more classes than half the examples. Said
 * before the validation split, which such data would make fail. */
static void warn_label_column(const TextDataset *all, FILE *log) {
    LabelSet labels;
    if (labels_build(&labels, all) != EXIT_OK) return;
    if (labels.n > all->n / 2)
        fprintf(log, "warning: the label column holds %d distinct values for %d examples: are the columns swapped? "
                "(each line is label<TAB>text)\n", labels.n, all->n);
    labels_free(&labels);
}

/* A setup that defaults or options cannot serve, said once before training
 * with the option that fixes it. */
static void warn_setup(const Corpus *c, const Options *o, FILE *log) {
    double unk = c->has_val ? unk_share(&c->enc_val) : 0.0;
    if (unk > UNK_WARN_SHARE)
        fprintf(log, "warning: %.0f%% of the validation tokens are [UNK] (unseen in training): try --tokenizer bpe "
                "or --tokenizer char\n", 100 * unk);
    if (o->patience > 0 && !c->has_val)
        fprintf(log, "warning: --patience has no effect without a validation set (give --val FILE or --val-split F)\n");
    if (o->val_path && *o->val_path && options_given(o, "val-split"))
        fprintf(log, "warning: --val-split has no effect with --val (the validation set is that file)\n");
}

int corpus_prepare(Corpus *c, const Options *o, const char *train_path, FILE *log, char *err, size_t errlen) {
    int rc;
    memset(c, 0, sizeof *c);
    if (tokenizer_parse(o->tokenizer, &c->tokenizer) != 0)
        return fail(err, errlen, ERR_INPUT, "--tokenizer must be word, char or bpe");
    TextDataset all;
    int pretrain = options_pretrain(o);
    DatasetColumns columns = {o->label_column, o->text_column};
    if ((rc = pretrain ? dataset_read_texts(train_path, &all, err, errlen)
                       : dataset_read_columns(train_path, &columns, &all, err, errlen)) != EXIT_OK)
        return rc;
    if (!pretrain) warn_label_column(&all, log);
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
    if (pretrain) {   /* the texts' labels mean nothing: the model has none */
        labels_free(&c->labels);
        memset(&c->labels, 0, sizeof c->labels);
    } else if (c->labels.n < 2) {
        return fail(err, errlen, ERR_INPUT, "%s: only one class ('%s') in the training data; a classifier needs at "
                    "least two", train_path, c->labels.n ? c->labels.names[0] : "");
    }
    if (o->init_dir && *o->init_dir) {
        /* --init: the pretrain run's tokenizer and vocabulary, which its embeddings index */
        SavedModel s;
        char why[1024];
        if (saved_model_load(o->init_dir, 1, &s, why, sizeof why) != EXIT_OK)
            return fail(err, errlen, ERR_INPUT, "--init %s: %s", o->init_dir, why);
        c->tokenizer = s.tokenizer;
        c->vocab = s.vocab;
        memset(&s.vocab, 0, sizeof s.vocab);
        saved_model_free(&s);
    } else if ((rc = vocab_build(&c->vocab, c->tokenizer, &c->train, o->vocab_size, o->min_freq, err, errlen)) !=
               EXIT_OK) {
        return rc;
    }
    if (c->has_val) report_leakage(&c->train, &c->val, "validation", log);
    if (c->has_test) report_leakage(&c->train, &c->test, "test", log);
    c->max_len = o->max_len;
    if (c->max_len == 0 && (rc = auto_max_len(c, &c->max_len, err, errlen)) != EXIT_OK) return rc;
    FILE *train_log = o->max_len == 0 ? NULL : log;   /* auto says what it truncates itself */
    if ((rc = encode(&c->train, c, c->max_len, &c->enc_train, "training", train_log, err, errlen))) return rc;
    if (o->max_len == 0)
        fprintf(log, "max-len auto: %d, the smallest multiple of %d holding %.0f%% of the training sequences "
                "(at most %d); it truncates %d of %d\n", c->max_len, AUTO_MULTIPLE, 100 * AUTO_COVERAGE, AUTO_MAX_LEN,
                c->enc_train.n_truncated, c->enc_train.n);
    if (c->has_val && (rc = encode(&c->val, c, c->max_len, &c->enc_val, "validation", log, err, errlen))) return rc;
    if (c->has_test && (rc = encode(&c->test, c, c->max_len, &c->enc_test, "test", log, err, errlen))) return rc;
    warn_setup(c, o, log);
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
