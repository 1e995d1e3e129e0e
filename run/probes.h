/* probes.h: probes recorded while training (docs/DESIGN.md §6): a few texts
 * walked through the model before the first epoch and at the end of every
 * epoch, dropout off, on a scratch copy of the weights, so that recording
 * changes nothing of the run. Each record is one line of RUN/probes.jsonl,
 * appended whole and synced: a reader takes the lines that end in '\n'.
 *
 * probes.jsonl: line 1 the header
 *   {"format": "train-probes 1", "labels": [..], "layers": L, "heads": H,
 *    "probes": [{"text", "label" (null: not known), "source", "tokens": [..]}]}
 * then one line per recorded epoch (0: the untrained model)
 *   {"epoch": E, "probes": [{"predicted", "probs": [C], "loss" (null without
 *    a label), "saliency_label", "saliency": [T], "norms": [L],
 *    "attention": [L][H][T queries][T keys]}]}: the attention as trace prints
 * it (4 decimals, trailing zeros dropped), the other numbers to 7 digits. */
#ifndef RUN_PROBES_H
#define RUN_PROBES_H

#include <stdio.h>

#include "model.h"
#include "run/corpus.h"
#include "run/options.h"

#define PROBES_FILE "probes.jsonl"
#define PROBES_FORMAT "train-probes 1"
#define PROBES_MAX 32        /* more --probe texts are refused */
#define PROBES_PICKED 4      /* with none given: one validation example per class, this many classes at most */

typedef struct ProbeSet ProbeSet;

/* The probes of a run into *out (NULL when it records none: --no-probes,
 * pretraining, or a resumed run that has no record). A new run takes
 * --probe and --probe-file, or picks validation examples (the training set
 * without one) by a rule keyed by --seed alone and says on log which
 * (refusing bad input before the run writes anything; the header is
 * written with the first record); a resumed run continues
 * RUN/probes.jsonl, keeping the epochs up to epochs_done. Status as
 * base/errors.h. */
int probes_open(ProbeSet **out, const Options *o, const Corpus *c, const Model *m, const char *dir, int resume,
                int epochs_done, FILE *log, char *err, size_t errlen);
/* Records every probe with trained's weights as epoch's line (nothing when
 * that epoch is recorded already). trained is only read. */
int probes_record(ProbeSet *p, const Model *trained, int epoch, char *err, size_t errlen);
void probes_free(ProbeSet *p);

/* Gradient x input per position, as trace --backward shows it:
 * s_t = -sum_j x[t,j] dloss/dx[t,j], in double; x and grad are (T, d). */
void probes_saliency(const float *x, const float *grad, int T, int d, float *out);

#endif
