/* init.h: `--init RUN` (docs/DESIGN.md §4b): a classifier that starts from a pretrain
 * run (or a classifier's run): its tokenizer and vocabulary, embeddings,
 * positional table and encoder layers, with a fresh head. */
#ifndef RUN_INIT_H
#define RUN_INIT_H

#include <stddef.h>
#include <stdio.h>

#include "base/errors.h"
#include "model.h"
#include "run/options.h"

/* Makes o's model options those of o->init_dir's checkpoint: one not given
 * takes RUN's value, one given with another value is ERR_INPUT naming both.
 * Covers the width, heads, layers, d_ff, activation, norm, pe, max-len,
 * tokenizer and vocab-size (the vocabulary is RUN's). EXIT_OK without --init. */
int init_adopt_options(Options *o, char *err, size_t errlen);

/* Copies every tensor of m but the classifier head (head.*) from
 * init_dir's checkpoint, which must hold each under the same name and shape:
 * a pretrain run's, or a classifier's (fine-tuning it on other labels).
 * With log, a note says what was taken and what dropped (RUN's own head).
 * Status as base/errors.h. */
int init_load_encoder(Model *m, const char *init_dir, FILE *log, char *err, size_t errlen);

#endif
