/* model.h: a transformer-encoder sequence classifier with hand-written
 * backpropagation and AdamW (docs/DESIGN.md §4). The model knows token ids,
 * labels and its own checkpoint file; nothing about text or the terminal. */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/tokens.h"
#include "formats/safetensors.h"
#include "nn/precision.h"


typedef enum { ACT_RELU = 0, ACT_GELU = 1 } Activation;
typedef enum { NORM_POST = 0, NORM_PRE = 1 } NormPlacement;
typedef enum { POOL_MEAN = 0, POOL_CLS = 1 } Pooling;
typedef enum { PE_SINUSOIDAL = 0, PE_LEARNED = 1, PE_NONE = 2 } PosEncoding;

typedef struct {
    int vocab_size;   /* including the 5 specials */
    int max_len;      /* longest sequence, [CLS] and [SEP] included */
    int d_model;
    int n_heads;
    int d_ff;
    int n_layers;
    int n_classes;    /* 0: a pretraining model, the MLM head of docs/DESIGN.md §4b instead of the classifier's */
    float dropout;
    Activation activation;
    NormPlacement norm;
    Pooling pool;
    PosEncoding pe;
    float emb_scale;  /* multiplies the embedding lookup; sqrt(d_model) by default */
    Precision precision;  /* of the products (docs/DESIGN.md §4); the weights are float32 either way */
} ModelConfig;

/* One named parameter tensor: a view into the model's single parameter,
 * gradient and moment allocations. Names are the PyTorch twin's state_dict keys. */
typedef struct {
    char name[64];
    int ndim;
    int shape[2];
    size_t size;        /* number of floats */
    size_t offset;      /* into params, grads, adam_m, adam_v */
    int decay;          /* 1: AdamW weight decay applies (matrices, embeddings) */
    int grad_written;   /* 1: model_backward writes this gradient whole (linear layers), without zeroing it first */
} ParamTensor;

#define MODEL_MAX_TENSORS 256

typedef struct ModelActs ModelActs;

typedef struct {
    ModelConfig cfg;
    int max_batch;

    ParamTensor tensors[MODEL_MAX_TENSORS];
    int n_tensors;
    size_t n_params;
    float *params;      /* one allocation each, n_params floats */
    float *grads;
    float grad_scale;   /* the clipping factor model_clip_grads found, applied by the next AdamW step (1: none) */
    float *adam_m;
    float *adam_v;
    long adam_step;     /* AdamW steps taken */

    float *pe_table;    /* (max_len, d_model) sinusoidal table, NULL otherwise */

    ModelActs *acts;    /* activations of the last forward, sized for max_batch x max_len */
    size_t acts_floats; /* size of the activation arena in floats */

    /* Results of the last forward: logits and probs are (B, n_classes). */
    int batch, seq_len;
    float *logits;
    float *probs;
    float loss;
} Model;

/* Per-forward options. */
typedef struct {
    int training;               /* 1: dropout active, PAD zeroed, backward possible */
    int forward_only;           /* 1: no model_backward follows and no stage is inspected, so what only
                                 * they read (the FFN's output, the attention output before its residual
                                 * sum) is not kept: predict and evaluation */
    uint64_t seed;              /* dropout key: (seed, step, site, index) */
    uint64_t step;
    long row0;                  /* the global batch index of example 0: dropout's index counts from it,
                                 * so an MPI rank's slice draws the masks of the whole batch (docs/DESIGN.md §7) */
    const int *rows;            /* NULL, or (B) example b's index is row0 + rows[b] (the examples of a
                                 * batch an MPI rank holds need not be contiguous); kept by reference
                                 * until the backward */
    const float *class_weights; /* (n_classes) or NULL for the plain mean */
} ForwardOptions;

/* 1 for a pretraining model (n_classes 0): tensors mlm.dense.weight|bias,
 * mlm.norm.weight|bias and mlm.bias instead of head.weight|bias. */
static inline int model_is_mlm(const ModelConfig *cfg) { return cfg->n_classes == 0; }

/* Sizes beyond this (d_model, heads, d_ff, a batch; vocab_size 16 times it)
 * are refused before any arithmetic could overflow. */
#define MODEL_MAX_DIM (1 << 20)

/* Checks a config; on failure writes a message naming the option and returns -1. */
int model_config_check(const ModelConfig *cfg, char *err, size_t errlen);
/* Default config values (used by the command line and the tests). */
ModelConfig model_config_default(void);
/* Bytes model_create would allocate for this config and batch size. */
size_t model_memory_bytes(const ModelConfig *cfg, int max_batch);

/* Allocates everything up front. Returns NULL (and a message) on failure. */
Model *model_create(const ModelConfig *cfg, int max_batch, char *err, size_t errlen);
void model_free(Model *model);
/* PyTorch-style initialisation from a seed; zeroes grads and Adam moments. */
void model_init(Model *model, uint64_t seed);
const ParamTensor *model_find_tensor(const Model *model, const char *name);

/* tokens is (B,T) row-major int32, padded with TOKEN_PAD after [SEP];
 * labels is (B) or NULL (then loss is not computed and is 0).
 * Fills model->logits, model->probs, model->loss; returns the loss. */
float model_forward(Model *model, const int *tokens, const int *labels, int B, int T,
                    const ForwardOptions *opt);
/* Gradients of the last training forward's loss, written (not accumulated) into grads.
 * The forward must have had labels (classifier) or be model_forward_mlm's. */
void model_backward(Model *model);

/* Masked-language-model forward (pretraining models only): tokens (B,T) are
 * the corrupted ids, targets (B,T) the original id at each selected position
 * and -1 elsewhere (nn/mlm.h's mlm_mask makes both). The head runs on the
 * selected positions only. Returns the mean cross-entropy over them (0 when
 * none), also in model->loss. model_backward then gives its gradients. */
float model_forward_mlm(Model *model, const int *tokens, const int *targets, int B, int T,
                        const ForwardOptions *opt);
/* The selected positions of the last model_forward_mlm, in row-major order:
 * their count, row b*T+t, target id, vocabulary probabilities (vocab_size)
 * and most probable id (lowest on a tie). Valid until model_backward. */
int model_mlm_count(const Model *model);
int model_mlm_position(const Model *model, int i);
int model_mlm_target(const Model *model, int i);
const float *model_mlm_probs(const Model *model, int i);
int model_mlm_predicted(const Model *model, int i);
/* The backward walked stage by stage, for teaching (trace --backward):
 * model_backward_walk is model_backward calling tap at each stage boundary
 * with the gradient of the loss there (layer -1 outside the layers). */
typedef enum {
    GRAD_LOGITS,        /* (B,n_classes): d loss / d logits */
    GRAD_POOLED,        /* (B,d) */
    GRAD_ENCODER_OUT,   /* (B,T,d): the pooling's input (after the final LayerNorm, pre-norm) */
    GRAD_FINAL_NORM_IN, /* (B,T,d), pre-norm only: the final LayerNorm's input */
    GRAD_LAYER_MID,     /* (B,T,d): layer l between its attention and FFN blocks (post: LN1's output; pre: r1) */
    GRAD_LAYER_IN,      /* (B,T,d): layer l's input */
    GRAD_EMBEDDING_SUM, /* (B,T,d): E[token] * emb_scale + PE, after the embedding dropout's mask */
} GradStage;
typedef void (*GradTap)(void *ctx, GradStage stage, int layer, const float *grad);
void model_backward_walk(Model *model, GradTap tap, void *ctx);
/* The predicted class of row b of the last forward: the most probable one,
 * the lowest index on a tie. eval, predict and trace all use this. */
int model_predicted_class(const Model *model, int b);
void model_zero_grad(Model *model);

/* Global L2 norm of all gradients (in double, fixed order). */
double model_grad_norm(const Model *model);
/* PyTorch clip_grad_norm_: the gradients are scaled by max_norm/(norm+1e-6)
 * when norm > max_norm. Returns the norm before clipping. max_norm <= 0
 * disables clipping. The factor is kept in grad_scale, not applied to grads
 * in memory: the next model_adamw_step multiplies each gradient by it as it
 * reads it (the same numbers, one pass over the gradients fewer). The next
 * backward or model_zero_grad sets it back to 1. */
double model_clip_grads(Model *model, double max_norm);
/* One AdamW step (beta 0.9/0.999, eps 1e-8, PyTorch order), decay on tensors
 * with decay=1, on the gradients times grad_scale (which it sets back to 1). */
void model_adamw_step(Model *model, float lr, float weight_decay);
/* Stochastic weight averaging (--swa), PyTorch's AveragedModel rule: with
 * n_averaged weight sets already in average (n_params floats), the model's
 * weights join it: a copy when n_averaged is 0, else
 * average += (params - average) / (n_averaged + 1), in float. */
void model_average_update(const Model *model, float *average, long n_averaged);

/* Read-only views of the last forward's activations, for teaching (trace).
 * Shapes use the last forward's B and T. */
const float *model_embedding_sum(const Model *model);         /* (B,T,d): E[token] * emb_scale + PE */
const float *model_attention_probs(const Model *model, int layer);  /* (B,n_heads,T,T), before dropout */
/* (B,T,d): linear2's output, before the residual (kept only by a forward
 * that neither is forward_only nor trains: trace's) */
const float *model_ffn_output(const Model *model, int layer);
const float *model_layer_output(const Model *model, int layer);     /* (B,T,d) */
const float *model_encoder_output(const Model *model);        /* (B,T,d): after the final LayerNorm (pre-norm) */
const float *model_pooled(const Model *model);                /* (B,d) */

/* Checkpoint: safetensors with the state_dict names and config metadata.
 * params is (n_params) weights laid out as model->params (NULL: the model's
 * own), so a run can save its best epoch's weights. extra_keys/extra_values
 * add metadata (vocab, labels, ...). Atomic write. */
int model_save(const Model *model, const float *params, const char *path, const char *const *extra_keys,
               const char *const *extra_values, int n_extra, char *err, size_t errlen);
/* Reads the config from a checkpoint's metadata (validated). */
int model_config_from_file(const char *path, ModelConfig *cfg, char *err, size_t errlen);
/* Loads weights into an existing model whose config matches the file. */
int model_load_weights(Model *model, const char *path, char *err, size_t errlen);
/* The same weights into params (n_params floats) instead of the model's own. */
int model_read_weights(const Model *model, const char *path, float *params, char *err, size_t errlen);

/* Training state in its own safetensors file: the current weights, Adam
 * moments and step (the checkpoint may hold the best weights instead), the
 * running weight average of --swa when average is not NULL (tensors
 * "average.*"), plus the caller's metadata. Loading checks it belongs to
 * this config. */
int model_save_state(const Model *model, const float *average, const char *path, const char *const *extra_keys,
                     const char *const *extra_values, int n_extra, char *err, size_t errlen);
int model_load_state(Model *model, const char *path, char *err, size_t errlen);
/* The same from an opened state file (path for messages), so a caller
 * reading its own metadata parses the file once. average: NULL when the
 * state holds no average, else n_params floats that receive it (the file
 * must then hold one). */
int model_load_state_from(Model *model, float *average, const StFile *file, const char *path, char *err,
                          size_t errlen);

/* Names of enum values as they appear on the command line and in metadata. */
const char *activation_name(Activation a);
const char *norm_name(NormPlacement n);
const char *pool_name(Pooling p);
const char *pe_name(PosEncoding p);
int activation_parse(const char *s, Activation *out);
int norm_parse(const char *s, NormPlacement *out);
int pool_parse(const char *s, Pooling *out);
int pe_parse(const char *s, PosEncoding *out);
const char *precision_name(Precision p);
int precision_parse(const char *s, Precision *out);

#endif
