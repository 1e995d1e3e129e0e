/* corpus.h: the data of one run, prepared from the options: training file,
 * validation (file or split: stratified, random when pretraining), test
 * file, vocabulary, labels and the encoded token ids. Notes on leakage and
 * truncation go to a log. */
#ifndef RUN_CORPUS_H
#define RUN_CORPUS_H

#include <stdint.h>
#include <stdio.h>

#include "report/epoch_table.h"
#include "text/encode.h"
#include "run/dist.h"
#include "run/options.h"
#include "run/record.h"

typedef struct {
    TextDataset train, val, test;
    int has_val, has_test;
    TokenizerKind tokenizer;
    int max_len;       /* --max-len, or what auto chose from the training data */
    int epochs;        /* --epochs, or what auto chose from the training data's size */
    int cycle;         /* --cycle, or what auto chose (SCHEDULE_CYCLE_AUTO, or epochs: one cycle) */
    Vocab vocab;
    LabelSet labels;
    EncodedDataset enc_train, enc_val, enc_test;
    char *init_file;          /* --init's checkpoint, read for the vocabulary; NULL without --init */
    char init_sha256[65];     /* its SHA-256, for run.json */
} Corpus;

/* Status as base/errors.h; notes (leakage, truncation) go to log. With MPI
 * (dist of more than one rank; NULL: one process) each rank holds only its
 * contiguous share of every file's examples (train, val, test; their first
 * and total say where it lies), and what needs the whole data (labels,
 * vocabulary, the split, leakage, --max-len auto, the notes) comes from
 * counts gathered in rank order: the one-process result. enc_* hold the
 * shares. */
int corpus_prepare(Corpus *c, const Options *o, const DistContext *dist, const char *train_path, FILE *log,
                   char *err, size_t errlen);
void corpus_free(Corpus *c);
/* What every MPI rank must hold alike, as one hash: the files' digests (each
 * rank's own), the vocabulary, the classes, the sequence length and the
 * sizes of the sets. */
uint64_t corpus_hash(const Corpus *c);
/* Examples per class of d (a rank's share of one of c's sets) summed over
 * the ranks into counts (C). 0, or -1 out of memory. */
int corpus_class_counts(const Corpus *c, const DistContext *dist, const EncodedDataset *d, double *counts);
/* The epoch observation's context (the classes of the measured set: the
 * validation set, or the training set without one) into o, with *stats
 * allocated (3, C): precision and recall, which each epoch fills in, and
 * each class's share of the measured set, which o->share points to.
 * 0, or -1 when out of memory. */
int corpus_observation(const Corpus *c, const DistContext *dist, ObservationContext *o, double **stats);
/* With --class-weights balanced, *weights = (C) w_c = n / (C * n_c) over the
 * training set (0 for a class it lacks); otherwise NULL. 0, or -1 out of
 * memory. */
int corpus_class_weights(const Corpus *c, const Options *o, const DistContext *dist, float **weights);
/* The files read (train first, then --val and --test when given, then
 * --init's checkpoint) with their hashes, for run.json. Returns how many. */
int corpus_data_files(const Corpus *c, const Options *o, DataFileInfo files[RECORD_MAX_FILES]);
/* The warning for a header row whose label field is one of the labels: the
 * file has none, and --label-column/--text-column (which say it has) made
 * its first example the header. Training and eval both give it. */
void corpus_warn_header(const TextDataset *data, const LabelSet *labels, FILE *log);

#endif
