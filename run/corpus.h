/* corpus.h: the data of one run, prepared from the options: training file,
 * validation (file or stratified split), test file, vocabulary, labels and
 * the encoded token ids. Notes on leakage and truncation go to a log. */
#ifndef CORPUS_H
#define CORPUS_H

#include <stdio.h>

#include "text/dataset.h"
#include "run/options.h"

typedef struct {
    TextDataset train, val, test;
    int has_val, has_test;
    TokenizerKind tokenizer;
    Vocab vocab;
    LabelSet labels;
    EncodedDataset enc_train, enc_val, enc_test;
} Corpus;

/* Returns 0, or an exit code (2 bad input, 1 other) after printing the error. */
int corpus_prepare(Corpus *c, const Options *o, const char *train_path, FILE *log);
void corpus_free(Corpus *c);

#endif
