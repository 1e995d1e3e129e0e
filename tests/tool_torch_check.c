/* tool_torch_check.c: writes checkpoints, batches, logits, losses and gradients of the C model for scripts/twin.py to compare.
 * The cases named in BF16_CASES and BF16_MLM_CASES run again with --precision bf16 (as bf16_<name>) and
 * --precision amx (as amx_<name>): the checkpoint's metadata says so, and the twin rounds its products'
 * inputs the same way. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "model.h"
#include "formats/safetensors.h"
#include "nn/mlm.h"

#define B 5
#define T 9
#define STEPS 10
/* --swa's rule checked on the steps: the weights after each AdamW step from
 * this one (0-based) on join the average, whose eval logits are compared. */
#define SWA_FROM 6

typedef struct {
    const char *name;
    Activation activation;
    NormPlacement norm;
    Pooling pool;
    PosEncoding pe;
    int class_weights;  /* 1: use the weights below */
    float clip;
    float dropout;      /* > 0: only the eval-mode logits can be compared */
} Case;

static const Case cases[] = {
    {"post_relu_mean", ACT_RELU, NORM_POST, POOL_MEAN, PE_SINUSOIDAL, 0, 1.0f, 0.0f},
    {"post_gelu_cls", ACT_GELU, NORM_POST, POOL_CLS, PE_SINUSOIDAL, 0, 1.0f, 0.0f},
    {"pre_relu_cls", ACT_RELU, NORM_PRE, POOL_CLS, PE_SINUSOIDAL, 0, 1.0f, 0.0f},
    {"pre_gelu_mean", ACT_GELU, NORM_PRE, POOL_MEAN, PE_SINUSOIDAL, 0, 1.0f, 0.0f},
    {"learned_pe", ACT_GELU, NORM_PRE, POOL_CLS, PE_LEARNED, 0, 1.0f, 0.0f},
    {"no_pe", ACT_RELU, NORM_POST, POOL_MEAN, PE_NONE, 0, 1.0f, 0.0f},
    {"class_weights", ACT_RELU, NORM_POST, POOL_MEAN, PE_SINUSOIDAL, 1, 1.0f, 0.0f},
    {"no_clip", ACT_GELU, NORM_POST, POOL_CLS, PE_LEARNED, 1, 0.0f, 0.0f},
    {"eval_dropout", ACT_GELU, NORM_POST, POOL_MEAN, PE_SINUSOIDAL, 0, 1.0f, 0.3f},
};

/* Rows of different lengths: [CLS] ... [SEP] then [PAD]; one [MASK] (4) and one [UNK] (1). */
static const int batch_tokens[B * T] = {
    2, 7, 8, 9, 10, 11, 12, 13, 3,
    2, 14, 4, 15, 3, 0, 0, 0, 0,
    2, 16, 3, 0, 0, 0, 0, 0, 0,
    2, 17, 18, 1, 19, 20, 3, 0, 0,
    2, 21, 22, 7, 3, 0, 0, 0, 0,
};
static const int batch_labels[B] = {0, 2, 1, 2, 0};
static const float weights[3] = {0.5f, 2.0f, 1.25f};

static const float lr = 1e-2f, weight_decay = 0.1f;

/* the cases run again in bfloat16: post- and pre-norm, relu and gelu, mean and cls pooling, one pretraining */
static const char *const BF16_CASES[] = {"post_relu_mean", "pre_gelu_mean", "no_clip"};
static const char *const BF16_MLM_CASES[] = {"mlm_pre_gelu_learned"};

/* Appends one "grad.<name>" tensor per parameter tensor of m (views into
 * grads, names written into names[]) after out[0..n_out); the new count. */
static int add_grad_tensors(StTensorOut *out, int n_out, char (*names)[96], const Model *m, float *grads) {
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        snprintf(names[i], sizeof names[i], "grad.%s", t->name);
        StTensorOut *o = &out[n_out++];
        o->name = names[i];
        o->dtype = ST_F32;
        o->ndim = t->ndim;
        for (int d = 0; d < t->ndim; d++) o->shape[d] = t->shape[d];
        o->data = grads + t->offset;
    }
    return n_out;
}

/* A case's directory and line start with its precision: "" (float32), "bf16_" or "amx_". */
static const char *case_prefix(Precision prec) {
    return prec == PRECISION_BF16 ? "bf16_" : prec == PRECISION_AMX ? "amx_" : "";
}

static int run_case(const Case *c, const char *outdir, Precision prec) {
    char err[512], dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/%s%s", outdir, case_prefix(prec), c->name);
    if (make_dirs(dir, err, sizeof err) != 0) {
        fprintf(stderr, "tool_torch_check: %s\n", err);
        return 1;
    }

    ModelConfig cfg = model_config_default();
    cfg.vocab_size = 23;
    cfg.max_len = 12;
    cfg.d_model = 16;
    cfg.n_heads = 4;
    cfg.d_ff = 40;
    cfg.n_layers = 2;
    cfg.n_classes = 3;
    cfg.dropout = c->dropout;
    cfg.activation = c->activation;
    cfg.norm = c->norm;
    cfg.pool = c->pool;
    cfg.pe = c->pe;
    cfg.emb_scale = sqrtf((float)cfg.d_model);
    cfg.precision = prec;
    if (model_config_check(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "tool_torch_check: %s: config: %s\n", c->name, err);
        return 1;
    }
    Model *m = model_create(&cfg, B, err, sizeof err);
    if (!m) {
        fprintf(stderr, "tool_torch_check: %s: %s\n", c->name, err);
        return 1;
    }
    model_init(m, 1234 + (uint64_t)(c - cases));

    ForwardOptions opt = {0};
    opt.training = 1;
    opt.seed = 7;
    opt.class_weights = c->class_weights ? weights : NULL;

    /* One training-mode forward and backward on the initial weights. */
    float loss = model_forward(m, batch_tokens, batch_labels, B, T, &opt);
    model_backward(m);
    float *logits = malloc(sizeof(float) * B * cfg.n_classes);
    float *grads = malloc(sizeof(float) * m->n_params);
    memcpy(logits, m->logits, sizeof(float) * B * cfg.n_classes);
    memcpy(grads, m->grads, sizeof(float) * m->n_params);

    /* Vocabulary and labels as train.c stores them, so the twin reads them too. */
    char vocab[1024] = "[\"[PAD]\",\"[UNK]\",\"[CLS]\",\"[SEP]\",\"[MASK]\"";
    for (int v = N_SPECIAL_TOKENS; v < cfg.vocab_size; v++)
        snprintf(vocab + strlen(vocab), sizeof vocab - strlen(vocab), ",\"w%d\"", v);
    snprintf(vocab + strlen(vocab), sizeof vocab - strlen(vocab), "]");
    const char *extra_keys[] = {"vocab", "labels"};
    const char *extra_values[] = {vocab, "[\"neg\",\"neutral\",\"pos\"]"};
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if (model_save(m, NULL, path, extra_keys, extra_values, 2, err, sizeof err) != 0) {
        fprintf(stderr, "tool_torch_check: %s\n", err);
        return 1;
    }

    /* Eval-mode forward (no labels) on the same weights. */
    ForwardOptions eval = {0};
    model_forward(m, batch_tokens, NULL, B, T, &eval);
    float *eval_logits = malloc(sizeof(float) * B * cfg.n_classes);
    memcpy(eval_logits, m->logits, sizeof(float) * B * cfg.n_classes);

    /* AdamW steps on the same batch; each loss is recorded before its update.
     * From step SWA_FROM on, the weights after the step join the average. */
    float adamw_losses[STEPS];
    float *average = malloc(sizeof(float) * m->n_params);
    for (int s = 0; s < STEPS; s++) {
        opt.step = (uint64_t)s;
        adamw_losses[s] = model_forward(m, batch_tokens, batch_labels, B, T, &opt);
        model_backward(m);
        model_clip_grads(m, c->clip);
        model_adamw_step(m, lr, weight_decay);
        if (s >= SWA_FROM) model_average_update(m, average, s - SWA_FROM);
    }
    /* The average's eval-mode logits. */
    memcpy(m->params, average, sizeof(float) * m->n_params);
    model_forward(m, batch_tokens, NULL, B, T, &eval);
    float *swa_logits = malloc(sizeof(float) * B * cfg.n_classes);
    memcpy(swa_logits, m->logits, sizeof(float) * B * cfg.n_classes);

    /* The batch file: inputs, results and one gradient per parameter tensor. */
    int n_out = 0, cap = m->n_tensors + 8;
    StTensorOut *out = calloc((size_t)cap, sizeof *out);
    char (*names)[96] = calloc((size_t)m->n_tensors, sizeof *names);
    out[n_out++] = (StTensorOut){"tokens", ST_I32, 2, {B, T}, batch_tokens};
    out[n_out++] = (StTensorOut){"labels", ST_I32, 1, {B}, batch_labels};
    if (c->class_weights)
        out[n_out++] = (StTensorOut){"class_weights", ST_F32, 1, {cfg.n_classes}, weights};
    out[n_out++] = (StTensorOut){"logits", ST_F32, 2, {B, cfg.n_classes}, logits};
    out[n_out++] = (StTensorOut){"eval_logits", ST_F32, 2, {B, cfg.n_classes}, eval_logits};
    out[n_out++] = (StTensorOut){"loss", ST_F32, 1, {1}, &loss};
    out[n_out++] = (StTensorOut){"adamw_losses", ST_F32, 1, {STEPS}, adamw_losses};
    out[n_out++] = (StTensorOut){"swa_logits", ST_F32, 2, {B, cfg.n_classes}, swa_logits};
    n_out = add_grad_tensors(out, n_out, names, m, grads);
    char lr_s[32], wd_s[32], clip_s[32], steps_s[16], swa_s[16];
    snprintf(lr_s, sizeof lr_s, "%.9g", lr);
    snprintf(wd_s, sizeof wd_s, "%.9g", weight_decay);
    snprintf(clip_s, sizeof clip_s, "%.9g", c->clip);
    snprintf(steps_s, sizeof steps_s, "%d", STEPS);
    snprintf(swa_s, sizeof swa_s, "%d", SWA_FROM);
    const char *keys[] = {"lr", "weight_decay", "clip", "steps", "eval_only", "swa_from"};
    const char *values[] = {lr_s, wd_s, clip_s, steps_s, c->dropout > 0 ? "1" : "0", swa_s};
    snprintf(path, sizeof path, "%s/batch.safetensors", dir);
    int rc = st_write(path, out, n_out, keys, values, 6, err, sizeof err);
    if (rc != 0) fprintf(stderr, "tool_torch_check: %s\n", err);
    else printf("%s%-16s loss %.6f  after %d AdamW steps %.6f\n", case_prefix(prec), c->name, loss, STEPS,
                adamw_losses[STEPS - 1]);

    free(out);
    free(names);
    free(logits);
    free(eval_logits);
    free(swa_logits);
    free(average);
    free(grads);
    model_free(m);
    return rc != 0;
}

/* Pretraining (docs/DESIGN.md §4b): the batch corrupted by mlm_mask, the MLM head's
 * probabilities at the selected positions, its loss and gradients, and
 * AdamW steps on that loss. */
typedef struct {
    const char *name;
    Activation activation;
    NormPlacement norm;
    PosEncoding pe;
} MlmCase;

static const MlmCase mlm_cases[] = {
    {"mlm_post_relu", ACT_RELU, NORM_POST, PE_SINUSOIDAL},
    {"mlm_pre_gelu_learned", ACT_GELU, NORM_PRE, PE_LEARNED},
};

static int run_mlm_case(const MlmCase *c, int index, const char *outdir, Precision prec) {
    char err[512], dir[1024], path[1100];
    snprintf(dir, sizeof dir, "%s/%s%s", outdir, case_prefix(prec), c->name);
    if (make_dirs(dir, err, sizeof err) != 0) {
        fprintf(stderr, "tool_torch_check: %s\n", err);
        return 1;
    }
    ModelConfig cfg = model_config_default();
    cfg.vocab_size = 23; cfg.max_len = 12; cfg.d_model = 16; cfg.n_heads = 4; cfg.d_ff = 40; cfg.n_layers = 2;
    cfg.n_classes = 0; cfg.dropout = 0.0f; cfg.activation = c->activation; cfg.norm = c->norm; cfg.pe = c->pe;
    cfg.emb_scale = sqrtf((float)cfg.d_model);
    cfg.precision = prec;
    Model *m = model_create(&cfg, B, err, sizeof err);
    if (!m) {
        fprintf(stderr, "tool_torch_check: %s: %s\n", c->name, err);
        return 1;
    }
    model_init(m, 4321 + (uint64_t)index);
    /* the initial mlm.bias is zero; a non-zero one checks its use */
    const ParamTensor *bias = model_find_tensor(m, "mlm.bias");
    for (size_t i = 0; i < bias->size; i++) m->params[bias->offset + i] = 0.05f * sinf((float)i);
    int tokens[B * T], targets[B * T];
    long selected = mlm_mask(tokens, targets, batch_tokens, B, T, cfg.vocab_size, 11 + (uint64_t)index, 0, 1, 0, NULL);
    ForwardOptions opt = {.training = 1, .seed = 7};
    float loss = model_forward_mlm(m, tokens, targets, B, T, &opt);
    int M = model_mlm_count(m);
    float *probs = malloc(sizeof(float) * (size_t)M * cfg.vocab_size);
    for (int i = 0; i < M; i++) memcpy(probs + (size_t)i * cfg.vocab_size, model_mlm_probs(m, i),
                                       sizeof(float) * cfg.vocab_size);
    model_backward(m);
    float *grads = malloc(sizeof(float) * m->n_params);
    memcpy(grads, m->grads, sizeof(float) * m->n_params);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    const char *extra_keys[] = {"labels"};
    const char *extra_values[] = {"[]"};
    if (model_save(m, NULL, path, extra_keys, extra_values, 1, err, sizeof err) != 0) {
        fprintf(stderr, "tool_torch_check: %s\n", err);
        return 1;
    }
    float adamw_losses[STEPS];
    for (int s = 0; s < STEPS; s++) {
        opt.step = (uint64_t)s;
        adamw_losses[s] = model_forward_mlm(m, tokens, targets, B, T, &opt);
        model_backward(m);
        model_clip_grads(m, 1.0);
        model_adamw_step(m, lr, weight_decay);
    }
    int n_out = 0;
    StTensorOut *out = calloc((size_t)m->n_tensors + 8, sizeof *out);
    char (*names)[96] = calloc((size_t)m->n_tensors, sizeof *names);
    out[n_out++] = (StTensorOut){"tokens", ST_I32, 2, {B, T}, tokens};
    out[n_out++] = (StTensorOut){"targets", ST_I32, 2, {B, T}, targets};
    out[n_out++] = (StTensorOut){"mlm_probs", ST_F32, 2, {M, cfg.vocab_size}, probs};
    out[n_out++] = (StTensorOut){"loss", ST_F32, 1, {1}, &loss};
    out[n_out++] = (StTensorOut){"adamw_losses", ST_F32, 1, {STEPS}, adamw_losses};
    n_out = add_grad_tensors(out, n_out, names, m, grads);
    char lr_s[32], wd_s[32], steps_s[16];
    snprintf(lr_s, sizeof lr_s, "%.9g", lr);
    snprintf(wd_s, sizeof wd_s, "%.9g", weight_decay);
    snprintf(steps_s, sizeof steps_s, "%d", STEPS);
    const char *keys[] = {"lr", "weight_decay", "clip", "steps"};
    const char *values[] = {lr_s, wd_s, "1", steps_s};
    snprintf(path, sizeof path, "%s/batch.safetensors", dir);
    int rc = st_write(path, out, n_out, keys, values, 4, err, sizeof err);
    if (rc != 0) fprintf(stderr, "tool_torch_check: %s\n", err);
    else printf("%s%-16s %ld masked, loss %.6f  after %d AdamW steps %.6f\n", case_prefix(prec),
                c->name, selected, loss, STEPS,
                adamw_losses[STEPS - 1]);
    free(out);
    free(names);
    free(probs);
    free(grads);
    model_free(m);
    return rc != 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: tool_torch_check OUTDIR\n");
        return 2;
    }
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        failed += run_case(&cases[i], argv[1], PRECISION_FP32);
        for (size_t k = 0; k < sizeof BF16_CASES / sizeof *BF16_CASES; k++)
            if (strcmp(cases[i].name, BF16_CASES[k]) == 0)
                failed += run_case(&cases[i], argv[1], PRECISION_BF16) + run_case(&cases[i], argv[1], PRECISION_AMX);
    }
    for (size_t i = 0; i < sizeof mlm_cases / sizeof mlm_cases[0]; i++) {
        failed += run_mlm_case(&mlm_cases[i], (int)i, argv[1], PRECISION_FP32);
        for (size_t k = 0; k < sizeof BF16_MLM_CASES / sizeof *BF16_MLM_CASES; k++)
            if (strcmp(mlm_cases[i].name, BF16_MLM_CASES[k]) == 0)
                failed += run_mlm_case(&mlm_cases[i], (int)i, argv[1], PRECISION_BF16) +
                          run_mlm_case(&mlm_cases[i], (int)i, argv[1], PRECISION_AMX);
    }
    return failed ? 1 : 0;
}
