/* corpus.h: the data of one run, prepared from the options: training file,
 * validation (file or stratified split), test file, vocabulary, labels and
 * the encoded token ids. Notes on leakage and truncation go to a log. */
#ifndef RUN_CORPUS_H
#define RUN_CORPUS_H

#include <stdio.h>

#include "text/encode.h"
#include "run/options.h"

typedef struct {
    TextDataset train, val, test;
    int has_val, has_test;
    TokenizerKind tokenizer;
    int max_len;       /* --max-len, or what auto chose from the training data */
    Vocab vocab;
    LabelSet labels;
    EncodedDataset enc_train, enc_val, enc_test;
} Corpus;

/* Status as base/errors.h; notes (leakage, truncation) go to log. */
int corpus_prepare(Corpus *c, const Options *o, const char *train_path, FILE *log, char *err, size_t errlen);
void corpus_free(Corpus *c);

#endif
