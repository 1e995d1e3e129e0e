/* saved_model.h: model.safetensors as a run writes and every command reads
 * it: the model's tensors and config (model/checkpoint.c) plus this
 * layer's metadata, in one place: "tokenizer", "vocab" and "labels" (JSON
 * arrays) and "epoch", so the file alone serves predict, eval and trace. */
#ifndef RUN_SAVED_MODEL_H
#define RUN_SAVED_MODEL_H

#include <stddef.h>

#include "base/errors.h"
#include "model.h"
#include "text/encode.h"

typedef struct {
    Model *model;
    Vocab vocab;
    LabelSet labels;
    TokenizerKind tokenizer;
} SavedModel;

/* Writes path atomically: m's config with params (NULL: the model's own)
 * as weights. Status as base/errors.h. */
int saved_model_write(const char *path, const Model *m, const float *params, TokenizerKind tokenizer,
                      const Vocab *vocab, const LabelSet *labels, int epoch, char *err, size_t errlen);
/* path is a run directory or a model.safetensors file; the model gets room
 * for batches of max_batch. ERR_INPUT for a file that is not a valid
 * checkpoint or one too large for this machine's memory. */
int saved_model_load(const char *path, int max_batch, SavedModel *out, char *err, size_t errlen);
void saved_model_free(SavedModel *s);
/* The checkpoint file that saved_model_load reads for path: path itself, or
 * path/model.safetensors when path is a directory. */
void saved_model_file(const char *path, char *buf, size_t len);

/* 0 when the model and its activations for batch_size fit in the machine's
 * memory, else ERR_INPUT (a config too large is bad input) with the bytes
 * needed and the options that reduce them. */
int saved_model_check_memory(const ModelConfig *cfg, int batch_size, char *err, size_t errlen);

#endif
