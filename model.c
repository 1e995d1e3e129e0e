/* model.c: the transformer classifier: parameters in one allocation, forward
 * and backward passes through the layers of layers.c (docs/DESIGN.md §4).
 * The config's defaults and checks are in model/config.c, gradient clipping
 * and AdamW in model/optimizer.c, the option names of the config's enums in
 * model/names.c. */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/mlm.h"
#include "base/errors.h"
#include "base/rng.h"
#include "nn/attention.h"
#include "nn/layers.h"
#include "nn/threads.h"
#ifdef TRAIN_REFERENCE
#include "nn/reference_bind.h"   /* build/train-ref: the layers below are the plain ones of nn/reference.c */
#endif

/* Keys of the counter-based generator: one site per random draw location. */
enum { SITE_EMBED_DROPOUT = 1, SITE_LAYER_BASE = 100, SITES_PER_LAYER = 10, SITE_INIT_BASE = 1000000 };
enum { DROP_ATTENTION = 0, DROP_ATTN_OUT = 1, DROP_FFN_ACT = 2, DROP_FFN_OUT = 3 };

/* Parameter tensors of one encoder layer, as offsets into params/grads. */
typedef struct {
    size_t in_proj_w, in_proj_b, out_proj_w, out_proj_b;
    size_t linear1_w, linear1_b, linear2_w, linear2_b;
    size_t norm1_w, norm1_b, norm2_w, norm2_b;
} LayerParams;

/* Saved activations of one encoder layer (see the flow in layer_forward):
 * only what the backward reads. Dropout masks are not kept: the backward
 * draws them again from their keys, or (the FFN activation's, with relu)
 * reads them off the activation itself. */
typedef struct {
    float *ln1_out, *ln1_mean, *ln1_rstd;
    float *qkv;
    float *att_stats;   /* (B,NH,T,2): each attention softmax row's max and 1/sum */
    float *att_heads, *resid1;
    float *ln2_out, *ln2_mean, *ln2_rstd;
    float *ff_pre;      /* gelu only (NULL with relu, whose backward reads ff_hidden) */
    float *ff_hidden, *ff_out, *resid2;  /* ff_hidden: activation, after dropout */
} LayerActs;

struct ModelActs {
    ThreadsAdapt threads; /* the OpenMP team fitted to the cores others leave free */
    float *att_work;      /* the attention's work buffer (nn/layers.h), 64-byte aligned */
    int att_threads;      /* threads it has room for */
    float *arena;
    int *tokens;        /* (B,T) copy of the last batch */
    int *labels;        /* (B) */
    int has_labels;
    int training;
    uint64_t drop_seed, drop_step, drop_row0;   /* dropout key of the last training forward */
    const int *drop_rows;
    const float *class_weights;
    float *emb_sum, *emb_mask, *x0;
    LayerActs *layers;
    /* the attention probabilities of one layer, made only when asked for
     * (model_attention_probs); the attention output projection before the
     * residual sum, shared by all layers */
    float *att_probs, *att_proj;
    float *final_out, *final_mean, *final_rstd;
    float *pooled;
    float *logits, *probs;
    /* backward scratch */
    float *d_logits, *d_pooled, *d_stream, *d_stream2, *d_ln, *d_proj, *d_heads, *d_qkv;
    float *d_ff_a;
    /* parameter offsets */
    size_t embedding, pos_embedding, final_norm_w, final_norm_b, head_w, head_b;
    LayerParams *layer_params;
    /* The MLM head (n_classes 0, docs/DESIGN.md §4b), on the mlm_n selected rows only:
     * h = encoder output rows, pre = W h + b, act = gelu(pre),
     * out = LayerNorm(act), probs = softmax(out E^T + bias) (logits in place). */
    int mlm_n;
    int *mlm_rows, *mlm_targets;        /* (B*T) row in the batch, target id */
    float *mlm_h, *mlm_pre, *mlm_act, *mlm_out, *mlm_mean, *mlm_rstd, *mlm_probs, *mlm_row_loss;
    float *d_mlm_a, *d_mlm_b;           /* (B*T, d) backward scratch */
    size_t mlm_dense_w, mlm_dense_b, mlm_norm_w, mlm_norm_b, mlm_bias;
    /* model_backward_walk's observer, NULL otherwise */
    GradTap tap;
    void *tap_ctx;
};

/* Shows the gradient at a stage boundary to the walk's observer, if any. */
#define TAP(a, stage, layer, grad) do { if ((a)->tap) (a)->tap((a)->tap_ctx, (stage), (layer), (grad)); } while (0)

/* ------------------------------------------------------- parameter table */

static size_t add_tensor(Model *m, const char *name, int rows, int cols, int decay) {
    ParamTensor *t = &m->tensors[m->n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ndim = cols > 0 ? 2 : 1;
    t->shape[0] = rows;
    t->shape[1] = cols > 0 ? cols : 0;
    t->size = (size_t)rows * (size_t)(cols > 0 ? cols : 1);
    t->offset = m->n_params;
    t->decay = decay;
    t->grad_written = 0;
    m->n_params += t->size;
    return t->offset;
}

/* A linear layer's weight or bias: its backward (linear_backward_to/_from)
 * writes the whole gradient, as the first contribution of a backward pass,
 * so model_backward does not zero it first. (The tied embedding.weight of
 * pretraining is written by the MLM head first, then added to.) */
static size_t add_linear_tensor(Model *m, const char *name, int rows, int cols, int decay) {
    size_t offset = add_tensor(m, name, rows, cols, decay);
    m->tensors[m->n_tensors - 1].grad_written = 1;
    return offset;
}

/* Lays out every tensor, in state_dict order; fills the offsets in acts. */
static void layout_params(Model *m, ModelActs *a) {
    const ModelConfig *c = &m->cfg;
    int d = c->d_model;
    char name[64];
    m->n_tensors = 0;
    m->n_params = 0;
    /* pretraining: the tied head's product writes its gradient first */
    a->embedding = (model_is_mlm(c) ? add_linear_tensor : add_tensor)(m, "embedding.weight", c->vocab_size, d, 1);
    if (c->pe == PE_LEARNED) a->pos_embedding = add_tensor(m, "pos_embedding.weight", c->max_len, d, 1);
    for (int l = 0; l < c->n_layers; l++) {
        LayerParams *p = &a->layer_params[l];
#define LAYER_TENSOR(add, field, suffix, rows, cols, decay) \
        snprintf(name, sizeof name, "encoder.layers.%d.%s", l, suffix); \
        p->field = add(m, name, rows, cols, decay)
        LAYER_TENSOR(add_linear_tensor, in_proj_w, "self_attn.in_proj_weight", 3 * d, d, 1);
        LAYER_TENSOR(add_linear_tensor, in_proj_b, "self_attn.in_proj_bias", 3 * d, 0, 0);
        LAYER_TENSOR(add_linear_tensor, out_proj_w, "self_attn.out_proj.weight", d, d, 1);
        LAYER_TENSOR(add_linear_tensor, out_proj_b, "self_attn.out_proj.bias", d, 0, 0);
        LAYER_TENSOR(add_linear_tensor, linear1_w, "linear1.weight", c->d_ff, d, 1);
        LAYER_TENSOR(add_linear_tensor, linear1_b, "linear1.bias", c->d_ff, 0, 0);
        LAYER_TENSOR(add_linear_tensor, linear2_w, "linear2.weight", d, c->d_ff, 1);
        LAYER_TENSOR(add_linear_tensor, linear2_b, "linear2.bias", d, 0, 0);
        LAYER_TENSOR(add_tensor, norm1_w, "norm1.weight", d, 0, 0);
        LAYER_TENSOR(add_tensor, norm1_b, "norm1.bias", d, 0, 0);
        LAYER_TENSOR(add_tensor, norm2_w, "norm2.weight", d, 0, 0);
        LAYER_TENSOR(add_tensor, norm2_b, "norm2.bias", d, 0, 0);
#undef LAYER_TENSOR
    }
    if (c->norm == NORM_PRE) {
        a->final_norm_w = add_tensor(m, "encoder.norm.weight", d, 0, 0);
        a->final_norm_b = add_tensor(m, "encoder.norm.bias", d, 0, 0);
    }
    if (model_is_mlm(c)) {
        /* the tied projection's matrix is embedding.weight */
        a->mlm_dense_w = add_linear_tensor(m, "mlm.dense.weight", d, d, 1);
        a->mlm_dense_b = add_linear_tensor(m, "mlm.dense.bias", d, 0, 0);
        a->mlm_norm_w = add_tensor(m, "mlm.norm.weight", d, 0, 0);
        a->mlm_norm_b = add_tensor(m, "mlm.norm.bias", d, 0, 0);
        a->mlm_bias = add_linear_tensor(m, "mlm.bias", c->vocab_size, 0, 0);
        return;
    }
    a->head_w = add_linear_tensor(m, "head.weight", c->n_classes, d, 1);
    a->head_b = add_linear_tensor(m, "head.bias", c->n_classes, 0, 0);
}

const ParamTensor *model_find_tensor(const Model *m, const char *name) {
    for (int i = 0; i < m->n_tensors; i++)
        if (strcmp(m->tensors[i].name, name) == 0) return &m->tensors[i];
    return NULL;
}

/* ------------------------------------------------------ activation arena */

/* Walks every activation buffer in a fixed order: with base NULL it only
 * counts floats; with an arena it also sets the pointers. */
static size_t layout_acts(ModelActs *a, const ModelConfig *c, int max_batch, float *base) {
    size_t N = (size_t)max_batch * c->max_len, d = c->d_model, f = c->d_ff;
    size_t att = (size_t)max_batch * c->n_heads * c->max_len * c->max_len;
    size_t B = max_batch, NC = c->n_classes;
    size_t used = 0;
#define TAKE(ptr, count) do { if (base) (ptr) = base + used; used += (count); } while (0)
    TAKE(a->emb_sum, N * d);
    TAKE(a->emb_mask, N * d);
    TAKE(a->x0, N * d);
    for (int l = 0; l < c->n_layers; l++) {
        LayerActs *la = &a->layers[l];
        TAKE(la->ln1_out, N * d); TAKE(la->ln1_mean, N); TAKE(la->ln1_rstd, N);
        TAKE(la->qkv, 3 * N * d);
        TAKE(la->att_stats, 2 * N * c->n_heads);
        TAKE(la->att_heads, N * d);
        TAKE(la->resid1, N * d);
        TAKE(la->ln2_out, N * d); TAKE(la->ln2_mean, N); TAKE(la->ln2_rstd, N);
        if (c->activation == ACT_GELU) TAKE(la->ff_pre, N * f);   /* relu's backward reads ff_hidden */
        TAKE(la->ff_hidden, N * f); TAKE(la->ff_out, N * d);
        TAKE(la->resid2, N * d);
    }
    TAKE(a->att_probs, att); TAKE(a->att_proj, N * d);
    TAKE(a->final_out, N * d); TAKE(a->final_mean, N); TAKE(a->final_rstd, N);
    TAKE(a->pooled, B * d);
    TAKE(a->logits, B * NC); TAKE(a->probs, B * NC);
    TAKE(a->d_logits, B * NC); TAKE(a->d_pooled, B * d);
    TAKE(a->d_stream, N * d); TAKE(a->d_stream2, N * d); TAKE(a->d_ln, N * d);
    TAKE(a->d_proj, N * d); TAKE(a->d_heads, N * d); TAKE(a->d_qkv, 3 * N * d);
    TAKE(a->d_ff_a, N * f);
    if (model_is_mlm(c)) {   /* room for every position selected */
        size_t V = c->vocab_size;
        TAKE(a->mlm_h, N * d); TAKE(a->mlm_pre, N * d); TAKE(a->mlm_act, N * d); TAKE(a->mlm_out, N * d);
        TAKE(a->mlm_mean, N); TAKE(a->mlm_rstd, N); TAKE(a->mlm_row_loss, N);
        TAKE(a->mlm_probs, N * V);
        TAKE(a->d_mlm_a, N * d); TAKE(a->d_mlm_b, N * d);
    }
#undef TAKE
    return used;
}

static size_t count_params(const ModelConfig *c) {
    size_t d = c->d_model, f = c->d_ff;
    size_t per_layer = 3 * d * d + 3 * d + d * d + d + f * d + f + d * f + d + 4 * d;
    size_t n = (size_t)c->vocab_size * d + per_layer * c->n_layers + (size_t)c->n_classes * (d + 1);
    if (c->pe == PE_LEARNED) n += (size_t)c->max_len * d;
    if (c->norm == NORM_PRE) n += 2 * d;
    if (model_is_mlm(c)) n += d * d + 3 * d + (size_t)c->vocab_size;
    return n;
}

size_t model_memory_bytes(const ModelConfig *c, int max_batch) {
    /* Estimated in double first so absurd configs cannot overflow size_t. */
    double N = (double)max_batch * c->max_len, d = c->d_model, f = c->d_ff;
    double att = (double)max_batch * c->n_heads * c->max_len * c->max_len;
    double ff_pre = c->activation == ACT_GELU ? f : 0;   /* as layout_acts */
    double per_layer_acts = N * (9 * d + f + ff_pre + 4 + 2 * c->n_heads);
    double params = (double)c->vocab_size * d + c->n_layers * (4 * d * d + 2 * d * f + 9 * d + f) +
                    (double)c->max_len * d + (double)c->n_classes * (d + 1) + 2 * d;
    double floats = 4 * params + c->n_layers * per_layer_acts + N * (13 * d + f + 2) + att +
                    (double)max_batch * (2 * d + 4 * c->n_classes) + (double)c->max_len * d;
    if (model_is_mlm(c)) floats += 4 * (d * d + 3 * d + c->vocab_size) + N * (6 * d + 3 + c->vocab_size);
    double bytes = floats * sizeof(float) + N * sizeof(int) * 4;
    return bytes > (double)(SIZE_MAX / 2) ? SIZE_MAX / 2 : (size_t)bytes;
}

/* --------------------------------------------------------- create / free */

void model_free(Model *m) {
    if (!m) return;
    if (m->acts) {
        free(m->acts->arena);
        free(m->acts->att_work);
        free(m->acts->tokens);
        free(m->acts->layers);
        free(m->acts->layer_params);
        free(m->acts);
    }
    free(m->params);
    free(m->grads);
    free(m->adam_m);
    free(m->adam_v);
    free(m->pe_table);
    free(m);
}

Model *model_create(const ModelConfig *cfg, int max_batch, char *err, size_t errlen) {
    if (model_config_check(cfg, err, errlen) != 0) return NULL;
    if (max_batch < 1 || max_batch > MODEL_MAX_DIM) {
        set_error(err, errlen, "max_batch must be between 1 and %d (got %d)", MODEL_MAX_DIM, max_batch);
        return NULL;
    }
    if (count_params(cfg) > ((size_t)1 << 34)) {
        set_error(err, errlen, "model too large: %zu parameters", count_params(cfg));
        return NULL;
    }
    Model *m = calloc(1, sizeof *m);
    ModelActs *a = m ? calloc(1, sizeof *a) : NULL;
    if (!a) goto out_of_memory;
    m->cfg = *cfg;
    m->max_batch = max_batch;
    m->acts = a;
    a->layers = calloc((size_t)cfg->n_layers, sizeof *a->layers);
    a->layer_params = calloc((size_t)cfg->n_layers, sizeof *a->layer_params);
    if (!a->layers || !a->layer_params) goto out_of_memory;
    /* 12 tensors a layer, and at most 2 + 2 + 5 around them */
    if (12 * cfg->n_layers + 9 > MODEL_MAX_TENSORS) {
        set_error(err, errlen, "layers %d is more than this build supports (%d)", cfg->n_layers,
                 (MODEL_MAX_TENSORS - 9) / 12);
        model_free(m);
        return NULL;
    }
    layout_params(m, a);
    m->params = calloc(m->n_params, sizeof(float));
    m->grads = calloc(m->n_params, sizeof(float));
    m->grad_scale = 1.0f;
    m->adam_m = calloc(m->n_params, sizeof(float));
    m->adam_v = calloc(m->n_params, sizeof(float));
    m->acts_floats = layout_acts(a, cfg, max_batch, NULL);
    a->arena = calloc(m->acts_floats, sizeof(float));
#ifdef _OPENMP
    a->att_threads = omp_get_max_threads();
#else
    a->att_threads = 1;
#endif
    size_t att_bytes = (size_t)attention_work_floats(cfg->max_len, cfg->d_model, cfg->n_heads, a->att_threads) *
                       sizeof(float);
    a->att_work = aligned_alloc(64, (att_bytes + 63) / 64 * 64);
    if (!a->att_work) goto out_of_memory;
    a->tokens = calloc((size_t)max_batch * cfg->max_len * 3 + max_batch, sizeof(int));
    if (!m->params || !m->grads || !m->adam_m || !m->adam_v || !a->arena || !a->tokens) goto out_of_memory;
    a->labels = a->tokens + (size_t)max_batch * cfg->max_len;
    a->mlm_rows = a->labels + max_batch;
    a->mlm_targets = a->mlm_rows + (size_t)max_batch * cfg->max_len;
    layout_acts(a, cfg, max_batch, a->arena);
    m->logits = a->logits;
    m->probs = a->probs;
    if (cfg->pe == PE_SINUSOIDAL) {
        m->pe_table = malloc(sizeof(float) * cfg->max_len * cfg->d_model);
        if (!m->pe_table) goto out_of_memory;
        sinusoidal_table(m->pe_table, cfg->max_len, cfg->d_model);
    }
    return m;
out_of_memory:
    set_error(err, errlen, "out of memory: this model and batch need about %zu bytes",
             model_memory_bytes(cfg, max_batch));
    model_free(m);
    return NULL;
}

/* ------------------------------------------------------------------ init */

static void fill_uniform(float *x, size_t n, double bound, uint64_t seed, uint64_t site) {
    for (size_t i = 0; i < n; i++)
        x[i] = (float)((2.0 * rng_uniform_double(seed, 0, site, i) - 1.0) * bound);
}

static void fill_normal(float *x, size_t n, double std, uint64_t seed, uint64_t site) {
    /* Box-Muller on two keyed uniforms per value */
    for (size_t i = 0; i < n; i++) {
        double u1 = 1.0 - rng_uniform_double(seed, 0, site, 2 * i);   /* (0, 1] */
        double u2 = rng_uniform_double(seed, 0, site, 2 * i + 1);
        x[i] = (float)(std * sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2));
    }
}

/* PyTorch's defaults: Linear weight and bias U(-1/sqrt(fan_in), 1/sqrt(fan_in));
 * in_proj Xavier-uniform with zero bias; out_proj bias zero; LayerNorm 1 and 0;
 * embedding N(0, 1/sqrt(d)) (docs/DESIGN.md §4.1); learned positions N(0, 0.02). */
void model_init(Model *m, uint64_t seed) {
    const ModelConfig *c = &m->cfg;
    for (int i = 0; i < m->n_tensors; i++) {
        const ParamTensor *t = &m->tensors[i];
        float *x = m->params + t->offset;
        uint64_t site = SITE_INIT_BASE + (uint64_t)i;
        const char *name = t->name;
        size_t len = strlen(name);
        int fan_in = t->ndim == 2 ? t->shape[1] : 0;
#define ENDS_WITH(s) (len >= strlen(s) && strcmp(name + len - strlen(s), s) == 0)
        if (strcmp(name, "embedding.weight") == 0) fill_normal(x, t->size, 1.0 / sqrt(c->d_model), seed, site);
        else if (strcmp(name, "pos_embedding.weight") == 0) fill_normal(x, t->size, 0.02, seed, site);
        else if (strcmp(name, "mlm.bias") == 0) memset(x, 0, t->size * sizeof *x);   /* as BERT */
        else if (ENDS_WITH("in_proj_weight"))
            fill_uniform(x, t->size, sqrt(6.0 / (t->shape[0] + t->shape[1])), seed, site);
        else if (ENDS_WITH("in_proj_bias") || ENDS_WITH("out_proj.bias")) memset(x, 0, t->size * sizeof *x);
        else if (strstr(name, "norm") && ENDS_WITH(".weight")) for (size_t k = 0; k < t->size; k++) x[k] = 1.0f;
        else if (strstr(name, "norm") && ENDS_WITH(".bias")) memset(x, 0, t->size * sizeof *x);
        else if (t->ndim == 2) fill_uniform(x, t->size, 1.0 / sqrt(fan_in), seed, site);
        else fill_uniform(x, t->size, 1.0 / sqrt(m->tensors[i - 1].shape[1]), seed, site); /* Linear bias */
#undef ENDS_WITH
    }
    memset(m->grads, 0, m->n_params * sizeof(float));
    memset(m->adam_m, 0, m->n_params * sizeof(float));
    memset(m->adam_v, 0, m->n_params * sizeof(float));
    m->adam_step = 0;
}

/* --------------------------------------------------------------- forward */

static uint64_t layer_site(int layer, int which) {
    return SITE_LAYER_BASE + (uint64_t)layer * SITES_PER_LAYER + (uint64_t)which;
}

/* Parallel fill and copy for the activation-sized buffers (each thread
 * writes its own contiguous range). */
static void zero_floats(float *x, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) x[i] = 0.0f;
}

static void copy_floats(float *dst, const float *src, long n) {
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) dst[i] = src[i];
}

/* The key of the dropout at site of the last forward (p 0 when it did not
 * train or the model has no dropout): indices counted in the global batch
 * from its row0, max_len positions per example (nn/dropout.h). */
static DropoutKey drop_key(const Model *m, uint64_t site) {
    const ModelActs *a = m->acts;
    DropoutKey key = {a->training ? m->cfg.dropout : 0.0f, a->drop_seed, a->drop_step, site, a->drop_row0,
                      m->cfg.max_len, a->drop_rows};
    return key;
}

/* x (B,T,d) -> layer output. Post-norm (PyTorch default):
 *   r1 = x + drop(attn(x)); y1 = LN1(r1); r2 = y1 + drop(ffn(y1)); out = LN2(r2)
 * Pre-norm (norm_first):
 *   y1 = LN1(x); r1 = x + drop(attn(y1)); y2 = LN2(r1); out = r2 = r1 + drop(ffn(y2)) */
static const float *layer_forward(Model *m, int l, const float *x, int B, int T, const ForwardOptions *opt) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    LayerActs *la = &a->layers[l];
    const LayerParams *lp = &a->layer_params[l];
    const float *P = m->params;
    int N = B * T, d = c->d_model, f = c->d_ff;
    long Nf = (long)N * f;
    int dropout = opt->training && c->dropout > 0.0f;
    int pre = c->norm == NORM_PRE;

    const float *attn_in = x;
    if (pre) {
        layernorm_forward(la->ln1_out, la->ln1_mean, la->ln1_rstd, x, P + lp->norm1_w, P + lp->norm1_b, N, d);
        attn_in = la->ln1_out;
    }
    linear_forward(la->qkv, attn_in, P + lp->in_proj_w, P + lp->in_proj_b, N, d, 3 * d, c->precision);
    DropoutKey att_drop = drop_key(m, layer_site(l, DROP_ATTENTION));
    attention_forward(la->att_heads, la->att_stats, la->qkv, a->tokens, B, T, d, c->n_heads, att_drop, a->att_work,
                      a->att_threads, c->precision);
    /* the residual sum (through the dropout) is made as the product finishes,
     * in place when nothing reads the product itself: in training (its
     * backward needs only its input) and forward only */
    int sum_in_place = opt->forward_only || opt->training;
    DropoutKey attn_out_drop = drop_key(m, layer_site(l, DROP_ATTN_OUT));
    linear_forward_fused(sum_in_place ? la->resid1 : a->att_proj, la->att_heads, P + lp->out_proj_w,
                         P + lp->out_proj_b, N, d, d, NULL, x, la->resid1, &attn_out_drop, T, c->precision);

    const float *ffn_in;
    if (pre) {
        layernorm_forward(la->ln2_out, la->ln2_mean, la->ln2_rstd, la->resid1, P + lp->norm2_w, P + lp->norm2_b, N, d);
        ffn_in = la->ln2_out;
    } else {
        layernorm_forward(la->ln1_out, la->ln1_mean, la->ln1_rstd, la->resid1, P + lp->norm1_w, P + lp->norm1_b, N, d);
        ffn_in = la->ln1_out;
    }
    /* relu and its dropout are made in place as the product finishes: the
     * backward reads the output (linear_backward_relu), so only
     * gelu keeps the pre-activation */
    DropoutKey act_drop = drop_key(m, layer_site(l, DROP_FFN_ACT));
    if (c->activation == ACT_GELU) {
        linear_forward(la->ff_pre, ffn_in, P + lp->linear1_w, P + lp->linear1_b, N, d, f, c->precision);
        gelu_forward(la->ff_hidden, la->ff_pre, Nf);
        if (dropout) dropout_apply(la->ff_hidden, la->ff_hidden, B, T, f, act_drop);
    } else {
        linear_forward_fused(la->ff_hidden, ffn_in, P + lp->linear1_w, P + lp->linear1_b, N, d, f, la->ff_hidden,
                             NULL, NULL, &act_drop, T, c->precision);
    }
    /* the second residual adds to r1 (pre-norm) or to LN1's output (post-norm) */
    const float *residual = pre ? la->resid1 : ffn_in;
    DropoutKey ffn_out_drop = drop_key(m, layer_site(l, DROP_FFN_OUT));
    linear_forward_fused(sum_in_place ? la->resid2 : la->ff_out, la->ff_hidden, P + lp->linear2_w,
                         P + lp->linear2_b, N, f, d, NULL, residual, la->resid2, &ffn_out_drop, T, c->precision);
    if (pre) return la->resid2;
    layernorm_forward(la->ln2_out, la->ln2_mean, la->ln2_rstd, la->resid2, P + lp->norm2_w, P + lp->norm2_b, N, d);
    return la->ln2_out;
}

/* Embedding, masked dropout, the layers and (pre-norm) the final LayerNorm
 * over tokens (B,T); returns the encoder output (B,T,d). Shared by the
 * classifier and the MLM head. */
static const float *encoder_forward(Model *m, const int *tokens, int B, int T, const ForwardOptions *opt) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    int N = B * T, d = c->d_model;
    m->batch = B;
    m->seq_len = T;
    /* the team for this step: the cores other programs leave free */
    threads_adapt(&a->threads);
    /* ids outside the vocabulary cannot come from the data module; map them to [UNK] */
    for (int i = 0; i < N; i++)
        a->tokens[i] = tokens[i] >= 0 && tokens[i] < c->vocab_size ? tokens[i] : TOKEN_UNK;
    a->training = opt->training;
    a->drop_seed = opt->seed;
    a->drop_step = opt->step;
    a->drop_row0 = opt->row0;
    a->drop_rows = opt->rows;
    a->class_weights = opt->class_weights;

    const float *pos = c->pe == PE_SINUSOIDAL ? m->pe_table : c->pe == PE_LEARNED ? P + a->pos_embedding : NULL;
    embedding_forward(a->emb_sum, a->tokens, P + a->embedding, c->emb_scale, pos, N, T, d);
    const float *x = a->emb_sum;
    if (opt->training) {
        token_dropout_forward(a->x0, a->emb_mask, a->emb_sum, a->tokens, B, T, d, drop_key(m, SITE_EMBED_DROPOUT));
        x = a->x0;
    }
    for (int l = 0; l < c->n_layers; l++) x = layer_forward(m, l, x, B, T, opt);
    if (c->norm == NORM_PRE) {
        layernorm_forward(a->final_out, a->final_mean, a->final_rstd, x, P + a->final_norm_w,
                          P + a->final_norm_b, N, d);
        x = a->final_out;
    }
    return x;
}

float model_forward(Model *m, const int *tokens, const int *labels, int B, int T, const ForwardOptions *opt) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    int d = c->d_model;
    a->has_labels = labels != NULL && !model_is_mlm(c);
    a->mlm_n = -1;
    if (labels) memcpy(a->labels, labels, sizeof(int) * B);
    const float *x = encoder_forward(m, tokens, B, T, opt);
    if (model_is_mlm(c)) return m->loss = 0.0f;   /* no classifier head: model_forward_mlm */
    if (c->pool == POOL_MEAN) mean_pool_forward(a->pooled, x, a->tokens, B, T, d);
    else cls_pool_forward(a->pooled, x, B, T, d);
    linear_forward(a->logits, a->pooled, P + a->head_w, P + a->head_b, B, d, c->n_classes, c->precision);
    softmax_forward(a->probs, a->logits, B, c->n_classes);
    m->loss = labels ? crossentropy_forward(a->logits, a->labels, opt->class_weights, B, c->n_classes) : 0.0f;
    return m->loss;
}

float model_forward_mlm(Model *m, const int *tokens, const int *targets, int B, int T, const ForwardOptions *opt) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    int N = B * T, d = c->d_model, V = c->vocab_size;
    a->has_labels = 0;
    a->mlm_n = 0;
    m->loss = 0.0f;
    if (!model_is_mlm(c)) return 0.0f;
    const float *x = encoder_forward(m, tokens, B, T, opt);
    int M = 0;
    for (int i = 0; i < N; i++)
        if (targets[i] >= 0 && targets[i] < V) {
            a->mlm_rows[M] = i;
            a->mlm_targets[M++] = targets[i];
        }
    a->mlm_n = M;
    if (M == 0) return 0.0f;
    long Md = (long)M * d;
    rows_gather(a->mlm_h, x, a->mlm_rows, M, d);
    linear_forward(a->mlm_pre, a->mlm_h, P + a->mlm_dense_w, P + a->mlm_dense_b, M, d, d, c->precision);
    gelu_forward(a->mlm_act, a->mlm_pre, Md);
    layernorm_forward(a->mlm_out, a->mlm_mean, a->mlm_rstd, a->mlm_act, P + a->mlm_norm_w, P + a->mlm_norm_b, M, d);
    /* tied: logits = out E^T + bias, E unscaled */
    linear_forward(a->mlm_probs, a->mlm_out, P + a->embedding, P + a->mlm_bias, M, d, V, c->precision);
    m->loss = (float)softmax_xent_rows(a->mlm_probs, a->mlm_row_loss, a->mlm_targets, M, V);
    return m->loss;
}

int model_mlm_count(const Model *m) { return m->acts->mlm_n > 0 ? m->acts->mlm_n : 0; }
int model_mlm_position(const Model *m, int i) { return m->acts->mlm_rows[i]; }
int model_mlm_target(const Model *m, int i) { return m->acts->mlm_targets[i]; }
const float *model_mlm_probs(const Model *m, int i) { return m->acts->mlm_probs + (long)i * m->cfg.vocab_size; }
int model_mlm_predicted(const Model *m, int i) { return row_argmax(m->acts->mlm_probs, i, m->cfg.vocab_size); }

/* -------------------------------------------------------------- backward */

/* dout is the gradient of the layer output; writes the gradient of the
 * layer input x into dx (overwritten). Mirrors layer_forward. */
static void layer_backward(Model *m, int l, const float *x, const float *dout, float *dx, int B, int T) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    LayerActs *la = &a->layers[l];
    const LayerParams *lp = &a->layer_params[l];
    const float *P = m->params;
    float *G = m->grads;
    int N = B * T, d = c->d_model, f = c->d_ff;
    long Nd = (long)N * d, Nf = (long)N * f;
    int dropout = a->training && c->dropout > 0.0f;
    int pre = c->norm == NORM_PRE;
    float *d_resid2 = a->d_stream2, *d_ffn_in = a->d_ln;

    /* through LN2 (post) or straight (pre) to the second residual sum, and
     * through the FFN output's dropout (its mask drawn again from the
     * forward's key) to d_ff_out, in the same pass where LN2 makes it */
    const float *d_ff_out = d_resid2;
    DropoutKey ffn_out_drop = drop_key(m, layer_site(l, DROP_FFN_OUT));
    if (pre) {
        copy_floats(d_resid2, dout, Nd);
        if (dropout) dropout_apply(a->d_proj, d_resid2, B, T, d, ffn_out_drop);
    } else if (dropout) {
        layernorm_backward_to_dropout(d_resid2, a->d_proj, G + lp->norm2_w, G + lp->norm2_b, dout, la->resid2,
                                      P + lp->norm2_w, la->ln2_mean, la->ln2_rstd, N, d, ffn_out_drop, T);
    } else {
        layernorm_backward_to(d_resid2, G + lp->norm2_w, G + lp->norm2_b, dout, la->resid2, P + lp->norm2_w,
                              la->ln2_mean, la->ln2_rstd, N, d);
    }
    if (dropout) d_ff_out = a->d_proj;
    /* FFN branch: d_ff_out -> linear2 -> dropout -> activation -> linear1 */
    DropoutKey act_drop = drop_key(m, layer_site(l, DROP_FFN_ACT));
    if (c->activation == ACT_GELU) {
        linear_backward_to(a->d_ff_a, G + lp->linear2_w, G + lp->linear2_b, d_ff_out, la->ff_hidden,
                           P + lp->linear2_w, N, f, d, c->precision);
        if (dropout) dropout_apply(a->d_ff_a, a->d_ff_a, B, T, f, act_drop);
        gelu_backward_inplace(a->d_ff_a, la->ff_pre, Nf);
    } else {   /* through relu and its dropout as the product finishes, from ff_hidden alone */
        linear_backward_relu(a->d_ff_a, G + lp->linear2_w, G + lp->linear2_b, d_ff_out, la->ff_hidden,
                             P + lp->linear2_w, N, f, d, act_drop, c->precision);
    }
    const float *ffn_in = pre ? la->ln2_out : la->ln1_out;
    /* d of the FFN input: the residual path (post-norm) plus linear1's input gradient */
    if (pre)
        linear_backward_to(d_ffn_in, G + lp->linear1_w, G + lp->linear1_b, a->d_ff_a, ffn_in, P + lp->linear1_w,
                           N, d, f, c->precision);
    else
        linear_backward_from(d_ffn_in, d_resid2, G + lp->linear1_w, G + lp->linear1_b, a->d_ff_a, ffn_in,
                             P + lp->linear1_w, N, d, f, c->precision);

    /* to the first residual sum r1, and through the attention output's dropout */
    float *d_resid1 = a->d_stream2;   /* d_resid2 is no longer needed */
    DropoutKey attn_out_drop = drop_key(m, layer_site(l, DROP_ATTN_OUT));
    if (pre) {
        /* r2 = r1 + ffn(LN2(r1)): residual path already in d_stream2 */
        layernorm_backward(d_resid1, G + lp->norm2_w, G + lp->norm2_b, d_ffn_in, la->resid1, P + lp->norm2_w,
                           la->ln2_mean, la->ln2_rstd, N, d);
        if (dropout) dropout_apply(a->d_proj, d_resid1, B, T, d, attn_out_drop);
    } else if (dropout) {
        layernorm_backward_to_dropout(d_resid1, a->d_proj, G + lp->norm1_w, G + lp->norm1_b, d_ffn_in, la->resid1,
                                      P + lp->norm1_w, la->ln1_mean, la->ln1_rstd, N, d, attn_out_drop, T);
    } else {
        layernorm_backward_to(d_resid1, G + lp->norm1_w, G + lp->norm1_b, d_ffn_in, la->resid1, P + lp->norm1_w,
                              la->ln1_mean, la->ln1_rstd, N, d);
    }
    TAP(a, GRAD_LAYER_MID, l, pre ? d_resid1 : d_ffn_in);
    /* attention branch */
    const float *d_att_proj = dropout ? a->d_proj : d_resid1;
    linear_backward_to(a->d_heads, G + lp->out_proj_w, G + lp->out_proj_b, d_att_proj, la->att_heads,
                       P + lp->out_proj_w, N, d, d, c->precision);
    DropoutKey att_drop = drop_key(m, layer_site(l, DROP_ATTENTION));
    attention_backward(a->d_qkv, a->d_heads, la->qkv, la->att_stats, a->tokens, B, T, d, c->n_heads, att_drop,
                       a->att_work, a->att_threads, c->precision);
    /* to x: residual path plus the attention input's gradient */
    if (pre) {
        copy_floats(dx, d_resid1, Nd);
        linear_backward_to(a->d_ln, G + lp->in_proj_w, G + lp->in_proj_b, a->d_qkv, la->ln1_out, P + lp->in_proj_w,
                           N, d, 3 * d, c->precision);
        layernorm_backward(dx, G + lp->norm1_w, G + lp->norm1_b, a->d_ln, x, P + lp->norm1_w,
                           la->ln1_mean, la->ln1_rstd, N, d);
    } else {
        linear_backward_from(dx, d_resid1, G + lp->in_proj_w, G + lp->in_proj_b, a->d_qkv, x, P + lp->in_proj_w,
                             N, d, 3 * d, c->precision);
    }
}

/* The input of layer l as saved by the forward. */
static const float *layer_input(const Model *m, int l) {
    const ModelActs *a = m->acts;
    if (l == 0) return a->training ? a->x0 : a->emb_sum;
    const LayerActs *prev = &a->layers[l - 1];
    return m->cfg.norm == NORM_PRE ? prev->resid2 : prev->ln2_out;
}

static void encoder_backward(Model *m);

/* Zeroes the gradient of every tensor (all), or only of those the backward
 * adds to (embeddings, norms), not of those it writes whole (grad_written). */
static void zero_grads(Model *m, int all) {
    m->grad_scale = 1.0f;   /* new gradients: no clipping found for them yet */
    #pragma omp parallel
    for (int k = 0; k < m->n_tensors; k++) {
        const ParamTensor *t = &m->tensors[k];
        if (t->grad_written && !all) continue;
        float *g = m->grads + t->offset;
        long n = (long)t->size;
        #pragma omp for schedule(static) nowait
        for (long i = 0; i < n; i++) g[i] = 0.0f;
    }
}

/* The encoder output's gradient goes here before encoder_backward. */
static float *encoder_grad(Model *m) { return m->cfg.norm == NORM_PRE ? m->acts->d_ln : m->acts->d_stream; }

/* The MLM head's backward, from the probabilities of the last
 * model_forward_mlm; the tied projection adds to embedding.weight's
 * gradient, which encoder_backward adds to again. */
static void mlm_backward(Model *m) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    float *G = m->grads;
    int M = a->mlm_n, d = c->d_model, V = c->vocab_size;
    long Md = (long)M * d, Nd = (long)m->batch * m->seq_len * d;
    if (M <= 0) {
        zero_grads(m, 1);
        return;
    }
    zero_grads(m, 0);
    softmax_xent_rows_backward(a->mlm_probs, a->mlm_targets, M, V);   /* now d logits */
    linear_backward_to(a->d_mlm_a, G + a->embedding, G + a->mlm_bias, a->mlm_probs, a->mlm_out, P + a->embedding,
                       M, d, V, c->precision);
    layernorm_backward_to(a->d_mlm_b, G + a->mlm_norm_w, G + a->mlm_norm_b, a->d_mlm_a, a->mlm_act, P + a->mlm_norm_w,
                          a->mlm_mean, a->mlm_rstd, M, d);
    gelu_backward_inplace(a->d_mlm_b, a->mlm_pre, Md);
    linear_backward_to(a->d_mlm_a, G + a->mlm_dense_w, G + a->mlm_dense_b, a->d_mlm_b, a->mlm_h, P + a->mlm_dense_w,
                       M, d, d, c->precision);
    float *d_enc = encoder_grad(m);
    zero_floats(d_enc, Nd);
    rows_scatter_add(d_enc, a->d_mlm_a, a->mlm_rows, M, d);
    a->mlm_n = -1;   /* the probabilities are gradients now */
    encoder_backward(m);
}

void model_backward(Model *m) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    float *G = m->grads;
    int B = m->batch, T = m->seq_len, N = B * T, d = c->d_model, NC = c->n_classes;
    long Nd = (long)N * d;
    if (model_is_mlm(c)) {
        if (a->mlm_n >= 0) mlm_backward(m);
        return;
    }
    if (!a->has_labels) return;
    zero_grads(m, 0);

    crossentropy_backward(a->d_logits, a->probs, a->labels, a->class_weights, B, NC);
    TAP(a, GRAD_LOGITS, -1, a->d_logits);
    linear_backward_to(a->d_pooled, G + a->head_w, G + a->head_b, a->d_logits, a->pooled, P + a->head_w, B, d, NC,
                       c->precision);
    TAP(a, GRAD_POOLED, -1, a->d_pooled);

    /* gradient of the encoder output */
    float *d_enc = encoder_grad(m);
    zero_floats(d_enc, Nd);
    if (c->pool == POOL_MEAN) mean_pool_backward(d_enc, a->d_pooled, a->tokens, B, T, d);
    else cls_pool_backward(d_enc, a->d_pooled, B, T, d);
    encoder_backward(m);
}

/* From the encoder output's gradient in encoder_grad(m) down to the
 * embedding table: writes the linear layers' gradients, adds to the rest. */
static void encoder_backward(Model *m) {
    const ModelConfig *c = &m->cfg;
    ModelActs *a = m->acts;
    const float *P = m->params;
    float *G = m->grads;
    int B = m->batch, T = m->seq_len, N = B * T, d = c->d_model;
    long Nd = (long)N * d;
    const float *d_enc = encoder_grad(m);
    TAP(a, GRAD_ENCODER_OUT, -1, d_enc);
    if (c->norm == NORM_PRE) {
        const float *last = layer_input(m, c->n_layers);
        layernorm_backward_to(a->d_stream, G + a->final_norm_w, G + a->final_norm_b, d_enc, last,
                              P + a->final_norm_w, a->final_mean, a->final_rstd, N, d);
        TAP(a, GRAD_FINAL_NORM_IN, -1, a->d_stream);
    }
    /* layer by layer: layer_backward reads d_stream (its output gradient) before it
     * overwrites it with its input gradient */
    for (int l = c->n_layers - 1; l >= 0; l--) {
        layer_backward(m, l, layer_input(m, l), a->d_stream, a->d_stream, B, T);
        TAP(a, GRAD_LAYER_IN, l, a->d_stream);
    }
    /* embedding sum -> through the masked dropout -> table and learned positions */
    float *d_emb = a->d_stream;
    if (a->training) mul_forward(d_emb, d_emb, a->emb_mask, Nd);
    TAP(a, GRAD_EMBEDDING_SUM, -1, d_emb);
    embedding_backward(G + a->embedding, c->pe == PE_LEARNED ? G + a->pos_embedding : NULL, d_emb, a->tokens,
                       c->emb_scale, B, T, d, c->vocab_size);
}

void model_backward_walk(Model *m, GradTap tap, void *ctx) {
    m->acts->tap = tap;
    m->acts->tap_ctx = ctx;
    model_backward(m);
    m->acts->tap = NULL;
    m->acts->tap_ctx = NULL;
}

void model_zero_grad(Model *m) { zero_grads(m, 1); }

int model_predicted_class(const Model *m, int b) {
    const float *p = m->probs + (long)b * m->cfg.n_classes;
    int best = 0;
    for (int c = 1; c < m->cfg.n_classes; c++) if (p[c] > p[best]) best = c;
    return best;
}

/* ------------------------------------------------------------ views */

const float *model_embedding_sum(const Model *m) { return m->acts->emb_sum; }
const float *model_attention_probs(const Model *m, int l) {
    /* made again from the layer's saved q, k of the last forward */
    attention_probs(m->acts->att_probs, m->acts->layers[l].qkv, m->acts->tokens, m->batch, m->seq_len,
                    m->cfg.d_model, m->cfg.n_heads, m->acts->att_work, m->acts->att_threads, m->cfg.precision);
    return m->acts->att_probs;
}
const float *model_ffn_output(const Model *m, int l) { return m->acts->layers[l].ff_out; }
const float *model_layer_output(const Model *m, int l) { return layer_input(m, l + 1); }
const float *model_encoder_output(const Model *m) {
    return m->cfg.norm == NORM_PRE ? m->acts->final_out : layer_input(m, m->cfg.n_layers);
}
const float *model_pooled(const Model *m) { return m->acts->pooled; }
