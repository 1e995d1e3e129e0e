/* test_model.c: properties of the model core: positional encoding against
 * its closed form, masked dropout, padding invariance, thread-count
 * determinism, gradients written whatever grads held, clipping as PyTorch
 * clips, the checkpoint round trip and refusal of mismatched files. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "tests/check.h"
#include "nn/layers.h"
#include "model.h"
#include "formats/safetensors.h"
#include "run/evaluate.h"

static ModelConfig small_config(void) {
    ModelConfig cfg = model_config_default();
    cfg.vocab_size = 40;
    cfg.max_len = 64;
    cfg.d_model = 32;
    cfg.n_heads = 4;
    cfg.d_ff = 48;
    cfg.n_layers = 2;
    cfg.n_classes = 3;
    cfg.dropout = 0.1f;
    cfg.emb_scale = sqrtf(32.0f);
    return cfg;
}

/* Fills a (B,T) batch with rows of lengths 3..T: [CLS] ids [SEP] [PAD]... */
static void make_tokens(int *tokens, int *labels, int B, int T, uint32_t seed) {
    for (int b = 0; b < B; b++) {
        int len = 3 + (int)((seed + 7u * b) % (unsigned)(T - 2));
        for (int t = 0; t < T; t++) {
            int tok = TOKEN_PAD;
            if (t == 0) tok = TOKEN_CLS;
            else if (t == len - 1) tok = TOKEN_SEP;
            else if (t < len - 1) tok = 5 + (int)((seed * 31u + 17u * b + 13u * t) % 35u);
            tokens[b * T + t] = tok;
        }
        labels[b] = (int)((seed + b) % 3u);
    }
    tokens[1 * T + 2] = TOKEN_MASK;
}

/* ------------------------------------------------ positional encoding */

static long double pe_closed_form(int pos, int dim, int d) {
    long double freq = powl(10000.0L, -(long double)(dim - dim % 2) / d);
    return dim % 2 == 0 ? sinl(pos * freq) : cosl(pos * freq);
}

static void test_positional_encoding(void) {
    /* the classic 10 tokens x 512 dimensions, and a long position */
    double worst = 0.0;
    for (int pos = 0; pos < 10; pos++)
        for (int dim = 0; dim < 512; dim++) {
            double diff = fabs((double)(positional_encoding_value(pos, dim, 512) - pe_closed_form(pos, dim, 512)));
            if (diff > worst) worst = diff;
        }
    for (int dim = 0; dim < 512; dim++) {
        double diff = fabs((double)(positional_encoding_value(4999, dim, 512) - pe_closed_form(4999, dim, 512)));
        if (diff > worst) worst = diff;
    }
    printf("REPORT positional encoding: worst |float - long double closed form| = %.2e\n", worst);
    /* float rounding of a value in [-1, 1] is at most half an ulp of 1: 6e-8 */
    CHECK(worst <= 6e-8, "PE differs from its closed form by %.3e", worst);
    CHECK(positional_encoding_value(0, 0, 512) == 0.0f && positional_encoding_value(0, 1, 512) == 1.0f,
          "PE at position 0 must be sin 0 = 0 and cos 0 = 1");
    CHECK(fabsf(positional_encoding_value(1, 0, 512) - sinf(1.0f)) < 1e-7f, "PE[1,0] = sin(1/10000^(0/512))");
    float table[10 * 16];
    sinusoidal_table(table, 10, 16);
    CHECK(table[3 * 16 + 5] == positional_encoding_value(3, 5, 16), "table and single value agree");
}

/* ------------------------------------------------------ masked dropout */

/* The dropout rule of docs/DESIGN.md, element dropped when rng_uniform(seed, step,
 * site, index) < p, against the integer test the layers use (its threshold
 * ceil(p 2^24) on the generator's top 24 bits). */
static void test_dropout_rule(void) {
    const float ps[] = {0.0f, 0.1f, 0.3f, 1.0f / 3.0f, 0.5f, 0.9f, 1.0f};
    long wrong = 0, draws = 0;
    for (size_t k = 0; k < sizeof ps / sizeof ps[0]; k++) {
        DropoutKey key = {ps[k], 1234 + k, 7, 2, 0, 64, NULL};
        DropoutTest test = dropout_test(&key);
        /* the threshold is the first 24-bit value the rule keeps: value u drops iff u / 2^24 < p */
        uint64_t u = test.threshold;
        CHECK(u == 0 || (float)(u - 1) * (1.0f / 16777216.0f) < key.p, "p %g: value %llu below the threshold is kept",
              key.p, (unsigned long long)(u - 1));
        CHECK(u > 16777215 || !((float)u * (1.0f / 16777216.0f) < key.p), "p %g: the threshold %llu itself drops",
              key.p, (unsigned long long)u);
        for (uint64_t i = 0; i < 200000; i++) {
            uint64_t index = i * 0x9E3779B1ull + k;   /* spread over the 64-bit index space */
            int rule = rng_uniform(key.seed, key.step, key.site, index) < key.p;
            wrong += dropout_drops(&test, index) != rule;
            draws++;
        }
    }
    CHECK(wrong == 0, "dropout_drops disagrees with rng_uniform < p on %ld of %ld draws", wrong, draws);
}

static void test_masked_dropout(void) {
    enum { N = 4096, C = 64 };
    int *tokens = malloc(sizeof(int) * N);
    float *mask = malloc(sizeof(float) * N * C);
    for (int n = 0; n < N; n++) tokens[n] = n % 8 == 0 ? TOKEN_CLS : n % 8 == 1 ? TOKEN_SEP : n % 8 == 2 ? TOKEN_MASK
                                          : n % 8 == 3 ? TOKEN_PAD : 5 + n % 30;
    const float p = 0.3f;
    DropoutKey key = {p, 42, 3, 1, 0, 64, NULL};
    token_dropout_mask(mask, tokens, N / 64, 64, C, key);
    long kept = 0, others = 0, bad_special = 0, bad_pad = 0, bad_scale = 0;
    for (int n = 0; n < N; n++) {
        for (int c = 0; c < C; c++) {
            float m = mask[(long)n * C + c];
            int tok = tokens[n];
            if (tok == TOKEN_CLS || tok == TOKEN_SEP || tok == TOKEN_MASK) bad_special += m != 1.0f;
            else if (tok == TOKEN_PAD) bad_pad += m != 0.0f;
            else {
                others++;
                if (m != 0.0f) kept++;
                bad_scale += m != 0.0f && m != 1.0f / (1.0f - p);
            }
        }
    }
    CHECK(bad_special == 0, "[CLS]/[SEP]/[MASK] elements changed: %ld", bad_special);
    CHECK(bad_pad == 0, "[PAD] elements not zeroed: %ld", bad_pad);
    CHECK(bad_scale == 0, "kept elements not scaled by 1/(1-p): %ld", bad_scale);
    /* the keep rate over n draws has standard deviation sqrt(p(1-p)/n) ~ 0.0011 here; allow 5 sigma */
    double rate = (double)kept / others, sigma = sqrt(p * (1 - p) / others);
    printf("REPORT masked dropout p=0.3: keep rate %.4f over %ld elements (expected 0.7000 +- %.4f)\n", rate, others,
           5 * sigma);
    CHECK(fabs(rate - (1 - p)) < 5 * sigma, "keep rate %.4f not within 5 sigma of %.2f", rate, 1 - p);
    /* a different step draws a different mask; the same key draws the same */
    float *again = malloc(sizeof(float) * N * C);
    token_dropout_mask(again, tokens, N / 64, 64, C, key);
    CHECK(memcmp(again, mask, sizeof(float) * N * C) == 0, "same key, same mask");
    key.step = 4;
    token_dropout_mask(again, tokens, N / 64, 64, C, key);
    CHECK(memcmp(again, mask, sizeof(float) * N * C) != 0, "another step, another mask");
    /* docs/DESIGN.md §7: examples 10..19 of the batch alone (an MPI rank's slice), padded
     * to 40 positions instead of 64, draw exactly the whole batch's factors */
    key.step = 3;
    key.row0 = 10;
    int *slice_tokens = malloc(sizeof(int) * 10 * 40);
    float *slice = malloc(sizeof(float) * 10 * 40 * C);
    for (int b = 0; b < 10; b++)
        for (int t = 0; t < 40; t++) slice_tokens[b * 40 + t] = tokens[(10 + b) * 64 + t];
    token_dropout_mask(slice, slice_tokens, 10, 40, C, key);
    long differ = 0;
    for (int b = 0; b < 10; b++)
        for (int t = 0; t < 40; t++)
            differ += memcmp(slice + ((long)b * 40 + t) * C, mask + ((long)(10 + b) * 64 + t) * C, sizeof(float) * C) != 0;
    CHECK(differ == 0, "a slice of the batch (row0 10, padded to 40) draws other factors at %ld positions", differ);
    /* dropout_apply draws the factors token_dropout_mask draws at a plain token (tokens[4]) */
    float *ones = malloc(sizeof(float) * 64 * C), *applied = malloc(sizeof(float) * 64 * C);
    for (int i = 0; i < 64 * C; i++) ones[i] = 1.0f;
    key.row0 = 0;
    dropout_apply(applied, ones, 1, 64, C, key);
    token_dropout_mask(slice, tokens, 1, 64, C, key);
    CHECK(memcmp(applied + 4 * C, slice + 4 * C, sizeof(float) * C) == 0, "dropout_apply and token_dropout_mask disagree");
    /* dropout_add is the residual sum of the two passes, element for element:
     * add + x * factor, the factors dropout_apply gave the ones above */
    float *x = malloc(sizeof(float) * 64 * C), *add = malloc(sizeof(float) * 64 * C);
    float *sum = malloc(sizeof(float) * 64 * C);
    for (int i = 0; i < 64 * C; i++) {
        x[i] = (float)((i * 37) % 101 - 50) / 7.0f;
        add[i] = (float)((i * 53) % 97 - 48) / 3.0f;
    }
    dropout_add(sum, add, x, 1, 64, C, key);
    long wrong = 0, dropped = 0;
    for (int i = 0; i < 64 * C; i++) {
        float expect = add[i] + x[i] * applied[i];
        wrong += memcmp(&sum[i], &expect, sizeof(float)) != 0;
        dropped += applied[i] == 0.0f;
    }
    CHECK(wrong == 0 && dropped > 0, "dropout_add differs from add + dropout_apply at %ld of %d elements (%ld dropped)",
          wrong, 64 * C, dropped);
    dropout_add(add, add, x, 1, 64, C, key);   /* in place over add */
    CHECK(memcmp(add, sum, sizeof(float) * 64 * C) == 0, "dropout_add in place over add differs");
    free(x);
    free(add);
    free(sum);
    free(ones);
    free(applied);
    free(slice);
    free(slice_tokens);
    free(again);
    free(tokens);
    free(mask);
}

/* Eval mode is the identity: the same logits whatever the seed and step,
 * and training with dropout 0 gives the eval logits too. */
static void test_eval_identity(void) {
    ModelConfig cfg = small_config();
    char err[256];
    Model *m = model_create(&cfg, 6, err, sizeof err);
    if (!m) { CHECK(0, "%s", err); return; }
    model_init(m, 1);
    int tokens[6 * 20], labels[6];
    make_tokens(tokens, labels, 6, 20, 5);
    ForwardOptions eval1 = {.training = 0, .seed = 1, .step = 1}, eval2 = {.training = 0, .seed = 9, .step = 4};
    float first[18], second[18];
    model_forward(m, tokens, labels, 6, 20, &eval1);
    memcpy(first, m->logits, sizeof first);
    model_forward(m, tokens, labels, 6, 20, &eval2);
    memcpy(second, m->logits, sizeof second);
    CHECK(memcmp(first, second, sizeof first) == 0, "eval forward depends on the dropout key");
    ForwardOptions train = {.training = 1, .seed = 9, .step = 4};
    model_forward(m, tokens, labels, 6, 20, &train);
    CHECK(memcmp(first, m->logits, sizeof first) != 0, "training forward with dropout 0.1 changed nothing");
    m->cfg.dropout = 0.0f;
    model_forward(m, tokens, labels, 6, 20, &train);
    double worst = 0.0;
    for (int i = 0; i < 18; i++) worst = fmax(worst, fabs(first[i] - m->logits[i]));
    CHECK(worst < 1e-6, "training with dropout 0 differs from eval by %.3e", worst);
    model_free(m);
}

/* ---------------------------------------------------- padding invariance */

static void test_padding_invariance(void) {
    ModelConfig base = small_config();
    for (int variant = 0; variant < 4; variant++) {
        ModelConfig cfg = base;
        cfg.norm = variant & 1 ? NORM_PRE : NORM_POST;
        cfg.pool = variant & 2 ? POOL_CLS : POOL_MEAN;
        cfg.pe = variant == 3 ? PE_LEARNED : PE_SINUSOIDAL;
        cfg.activation = variant & 1 ? ACT_GELU : ACT_RELU;
        char err[256];
        Model *m = model_create(&cfg, 5, err, sizeof err);
        if (!m) { CHECK(0, "%s", err); return; }
        model_init(m, 11 + variant);
        enum { B = 5, T = 12, EXTRA = 37 };
        int tokens[B * T], labels[B], padded[B * (T + EXTRA)];
        make_tokens(tokens, labels, B, T, 3);
        for (int b = 0; b < B; b++)
            for (int t = 0; t < T + EXTRA; t++) padded[b * (T + EXTRA) + t] = t < T ? tokens[b * T + t] : TOKEN_PAD;
        ForwardOptions eval = {.training = 0};
        float short_logits[B * 3];
        model_forward(m, tokens, labels, B, T, &eval);
        memcpy(short_logits, m->logits, sizeof short_logits);
        float short_loss = m->loss;
        model_forward(m, padded, labels, B, T + EXTRA, &eval);
        double worst = 0.0;
        for (int i = 0; i < B * 3; i++) worst = fmax(worst, fabs(short_logits[i] - m->logits[i]));
        printf("REPORT padding invariance (%s, %s, %s): max logit change with %d extra [PAD] = %.2e\n",
               norm_name(cfg.norm), pool_name(cfg.pool), pe_name(cfg.pe), EXTRA, worst);
        CHECK(worst <= 1e-6, "logits change by %.3e with extra padding", worst);
        CHECK(fabsf(short_loss - m->loss) <= 1e-6f, "loss changes with extra padding");
        model_free(m);
    }
}

/* --------------------------------------------------- thread determinism */

typedef struct {
    float logits[8 * 3];
    float *grads;
    float *params;
} RunResult;

static void train_five_steps(int threads, RunResult *out) {
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
    ModelConfig cfg = small_config();
    cfg.pe = PE_LEARNED;
    cfg.norm = NORM_PRE;
    cfg.activation = ACT_GELU;
    char err[256];
    Model *m = model_create(&cfg, 8, err, sizeof err);
    if (!m) { CHECK(0, "%s", err); return; }
    model_init(m, 77);
    int tokens[8 * 24], labels[8];
    const float weights[3] = {1.0f, 2.0f, 0.5f};
    for (int step = 1; step <= 5; step++) {
        make_tokens(tokens, labels, 8, 24, (uint32_t)step);
        ForwardOptions opt = {.training = 1, .seed = 5, .step = (uint64_t)step, .class_weights = weights};
        model_forward(m, tokens, labels, 8, 24, &opt);
        if (step == 1) {
            memcpy(out->logits, m->logits, sizeof out->logits);
            model_backward(m);
            out->grads = malloc(sizeof(float) * m->n_params);
            memcpy(out->grads, m->grads, sizeof(float) * m->n_params);
        } else {
            model_backward(m);
        }
        model_clip_grads(m, 1.0);
        model_adamw_step(m, 1e-3f, 0.01f);
    }
    out->params = malloc(sizeof(float) * m->n_params);
    memcpy(out->params, m->params, sizeof(float) * m->n_params);
    model_free(m);
}

/* The sum of the squares of n floats, in double, in index order: summed
 * here, not by model_grad_norm, which test_clip_deferred checks against it. */
static double sum_of_squares(const float *x, size_t n) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
    return sum;
}

/* One training forward and backward on a fixed batch (the MLM objective
 * when cfg has no classes); the gradients are left in m->grads. */
static void forward_backward(Model *m, const int *tokens, const int *labels, int B, int T) {
    ForwardOptions opt = {.training = 1, .seed = 3, .step = 2};
    if (model_is_mlm(&m->cfg)) {
        int targets[8 * 24];
        for (int i = 0; i < B * T; i++) targets[i] = i % 5 == 1 && tokens[i] >= 5 ? tokens[i] : -1;
        model_forward_mlm(m, tokens, targets, B, T, &opt);
    } else {
        model_forward(m, tokens, labels, B, T, &opt);
    }
    model_backward(m);
}

/* model_backward writes every gradient: the linear layers' are written
 * without being zeroed first (grad_written), the rest zeroed and added to.
 * A second backward over gradients filled with garbage must give the same
 * bits as the first; a tensor wrongly taken as written keeps the garbage. */
static void test_backward_writes(void) {
    for (int variant = 0; variant < 3; variant++) {
        ModelConfig cfg = small_config();
        if (variant == 1) {
            cfg.norm = NORM_PRE;
            cfg.activation = ACT_GELU;
            cfg.pool = POOL_CLS;
            cfg.pe = PE_LEARNED;
        }
        if (variant == 2) cfg.n_classes = 0;
        char err[256];
        Model *m = model_create(&cfg, 8, err, sizeof err);
        if (!m) { CHECK(0, "%s", err); return; }
        model_init(m, 19);
        int tokens[8 * 24], labels[8];
        make_tokens(tokens, labels, 8, 24, 4u);
        forward_backward(m, tokens, labels, 8, 24);
        float *first = malloc(sizeof(float) * m->n_params);
        memcpy(first, m->grads, sizeof(float) * m->n_params);
        CHECK(sum_of_squares(first, m->n_params) > 0.0, "variant %d: the gradients are all zero", variant);
        for (size_t i = 0; i < m->n_params; i++) m->grads[i] = 1e30f;
        forward_backward(m, tokens, labels, 8, 24);
        for (int k = 0; k < m->n_tensors; k++) {
            const ParamTensor *t = &m->tensors[k];
            CHECK(memcmp(first + t->offset, m->grads + t->offset, sizeof(float) * t->size) == 0,
                  "variant %d: %s's gradient depends on what grads held before the backward", variant, t->name);
        }
        free(first);
        model_free(m);
    }
}

/* Clipping as PyTorch's clip_grad_norm_ does it: every gradient times
 * max_norm / (norm + 1e-6), then AdamW. The model defers the product to the
 * AdamW pass (grad_scale); twin B scales its gradients in memory instead,
 * by the factor made here from a norm summed here, and must reach the same
 * bits. Then a factor found for one set of gradients must not reach the
 * next: clip, a new backward, AdamW is AdamW on the new gradients unscaled. */
static void test_clip_deferred(void) {
    ModelConfig cfg = small_config();
    char err[256];
    Model *a = model_create(&cfg, 8, err, sizeof err), *b = model_create(&cfg, 8, err, sizeof err);
    if (!a || !b) {
        CHECK(0, "%s", err);
        model_free(a);
        model_free(b);
        return;
    }
    model_init(a, 23);
    model_init(b, 23);
    int tokens[8 * 24], labels[8];
    make_tokens(tokens, labels, 8, 24, 6u);
    forward_backward(a, tokens, labels, 8, 24);
    forward_backward(b, tokens, labels, 8, 24);
    double squares = sum_of_squares(b->grads, b->n_params);
    double max_norm = 0.05, norm = model_clip_grads(a, max_norm);
    CHECK(fabs(norm - sqrt(squares)) <= 1e-9 * sqrt(squares), "clip returned the norm %.17g, summed here %.17g", norm,
          sqrt(squares));
    CHECK(norm > 4 * max_norm, "the norm %g is too small for the test to clip", norm);
    /* the norm clip returned (checked above), so that a last-bit difference
     * between two summation orders cannot round the factor differently */
    float coef = (float)(max_norm / (norm + 1e-6));
    for (size_t i = 0; i < b->n_params; i++) b->grads[i] *= coef;
    model_adamw_step(a, 1e-2f, 0.01f);
    model_adamw_step(b, 1e-2f, 0.01f);
    CHECK(memcmp(a->params, b->params, sizeof(float) * a->n_params) == 0,
          "clipped AdamW differs from AdamW on gradients scaled in memory");
    CHECK(a->grad_scale == 1.0f, "AdamW left the clipping factor %g for the next step", a->grad_scale);

    /* a: clip (a factor found), then new gradients; b: the new gradients alone */
    model_clip_grads(a, max_norm);
    make_tokens(tokens, labels, 8, 24, 7u);
    forward_backward(a, tokens, labels, 8, 24);
    forward_backward(b, tokens, labels, 8, 24);
    model_adamw_step(a, 1e-2f, 0.01f);
    model_adamw_step(b, 1e-2f, 0.01f);
    CHECK(memcmp(a->params, b->params, sizeof(float) * a->n_params) == 0,
          "a clipping factor found before a backward scaled the gradients of that backward");
    model_free(a);
    model_free(b);
}

static void test_thread_determinism(void) {
    ModelConfig cfg = small_config();
    cfg.pe = PE_LEARNED;
    cfg.norm = NORM_PRE;
    char err[256];
    Model *probe = model_create(&cfg, 8, err, sizeof err);
    if (!probe) { CHECK(0, "%s", err); return; }
    size_t n_params = probe->n_params;
    model_free(probe);
    RunResult runs[3] = {{{0}, NULL, NULL}, {{0}, NULL, NULL}, {{0}, NULL, NULL}};
    const int threads[3] = {1, 2, 4};
    for (int i = 0; i < 3; i++) train_five_steps(threads[i], &runs[i]);
    for (int i = 1; i < 3; i++) {
        if (!runs[i].grads || !runs[0].grads) continue;
        CHECK(memcmp(runs[0].logits, runs[i].logits, sizeof runs[0].logits) == 0, "logits differ at %d threads",
              threads[i]);
        CHECK(memcmp(runs[0].grads, runs[i].grads, sizeof(float) * n_params) == 0, "gradients differ at %d threads",
              threads[i]);
        CHECK(memcmp(runs[0].params, runs[i].params, sizeof(float) * n_params) == 0,
              "parameters after 5 AdamW steps differ at %d threads", threads[i]);
    }
    printf("REPORT thread determinism: logits, gradients and parameters after 5 AdamW steps compared "
           "byte for byte at 1, 2 and 4 threads\n");
    for (int i = 0; i < 3; i++) {
        free(runs[i].grads);
        free(runs[i].params);
    }
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
}

/* ------------------------------------------------------------ checkpoint */

static void test_checkpoint_round_trip(const char *dir) {
    ModelConfig cfg = small_config();
    cfg.pe = PE_LEARNED;
    cfg.norm = NORM_PRE;
    char err[256], path[512], state_path[512];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(state_path, sizeof state_path, "%s/state.safetensors", dir);
    Model *m = model_create(&cfg, 4, err, sizeof err);
    if (!m) { CHECK(0, "%s", err); return; }
    model_init(m, 3);
    int tokens[4 * 10], labels[4];
    make_tokens(tokens, labels, 4, 10, 1);
    ForwardOptions opt = {.training = 1, .seed = 2, .step = 1};
    model_forward(m, tokens, labels, 4, 10, &opt);
    model_backward(m);
    model_adamw_step(m, 1e-3f, 0.01f);
    m->params[7] = -0.0f;   /* signed zero must survive */
    const char *keys[] = {"vocab", "labels"};
    const char *values[] = {"[\"[PAD]\",\"a \\\"quoted\\\" token\"]", "[\"neg\",\"pos\",\"x\"]"};
    int rc = model_save(m, NULL, path, keys, values, 2, err, sizeof err);
    CHECK(rc == 0, "model_save: %s", err);
    rc = model_save_state(m, NULL, state_path, NULL, NULL, 0, err, sizeof err);
    CHECK(rc == 0, "model_save_state: %s", err);

    ModelConfig loaded_cfg;
    rc = model_config_from_file(path, &loaded_cfg, err, sizeof err);
    CHECK(rc == 0, "model_config_from_file: %s", err);
    CHECK(rc == 0 && memcmp(&loaded_cfg, &cfg, sizeof cfg) == 0, "config does not round-trip");
    Model *copy = model_create(&cfg, 4, err, sizeof err);
    rc = copy ? model_load_weights(copy, path, err, sizeof err) : -1;
    CHECK(rc == 0, "model_load_weights: %s", err);
    CHECK(rc == 0 && memcmp(copy->params, m->params, sizeof(float) * m->n_params) == 0,
          "weights do not round-trip bit for bit");
    rc = copy ? model_load_state(copy, state_path, err, sizeof err) : -1;
    CHECK(rc == 0, "model_load_state: %s", err);
    CHECK(rc == 0 && copy->adam_step == m->adam_step &&
          memcmp(copy->adam_m, m->adam_m, sizeof(float) * m->n_params) == 0 &&
          memcmp(copy->adam_v, m->adam_v, sizeof(float) * m->n_params) == 0, "optimizer state does not round-trip");

    StFile f;
    rc = st_load(path, &f, err, sizeof err);
    CHECK(rc == 0, "st_load: %s", err);
    if (rc == 0) {
        CHECK(st_meta(&f, "format") && strcmp(st_meta(&f, "format"), "pt") == 0, "metadata format=pt");
        CHECK(st_meta(&f, "labels") && strcmp(st_meta(&f, "labels"), values[1]) == 0, "extra metadata survives");
        CHECK(st_meta(&f, "vocab") && strcmp(st_meta(&f, "vocab"), values[0]) == 0, "escaped metadata survives");
        CHECK(st_find(&f, "encoder.layers.1.self_attn.in_proj_weight") != NULL, "state_dict name present");
        CHECK(st_find(&f, "encoder.norm.weight") != NULL, "pre-norm final LayerNorm present");
        st_free(&f);
    }

    /* a checkpoint of another shape is refused, and the model is left untouched */
    ModelConfig other = cfg;
    other.d_ff = 40;
    Model *wrong = model_create(&other, 4, err, sizeof err);
    if (wrong) {
        model_init(wrong, 9);
        float before = wrong->params[0];
        rc = model_load_weights(wrong, path, err, sizeof err);
        char want[64];
        snprintf(want, sizeof want, "does not match the model's: d_ff %d in the file, 40 in the model", cfg.d_ff);
        CHECK(rc != 0 && strstr(err, want), "config mismatch refused, naming the field (got: %s)", err);
        CHECK(wrong->params[0] == before, "a refused load changed the model");
        model_free(wrong);
    }
    /* a file missing a tensor, and one with a contradicting shape */
    StTensorOut t = {.name = "embedding.weight", .dtype = ST_F32, .ndim = 2, .shape = {40, 32}, .data = m->params};
    const char *cfg_keys[] = {"format", "vocab_size", "max_len", "d_model", "heads", "d_ff", "layers", "n_classes",
                              "dropout", "emb_scale", "activation", "norm", "pool", "pe"};
    const char *cfg_vals[] = {"pt", "40", "64", "32", "4", "48", "2", "3", "0.1", "5.65685415", "relu", "pre", "mean",
                              "learned"};
    char bad[512];
    snprintf(bad, sizeof bad, "%s/missing.safetensors", dir);
    rc = st_write(bad, &t, 1, cfg_keys, cfg_vals, 14, err, sizeof err);
    CHECK(rc == 0, "st_write: %s", err);
    rc = model_load_weights(copy, bad, err, sizeof err);
    CHECK(rc != 0, "a checkpoint with one tensor was accepted");
    printf("REPORT refused checkpoint with a missing tensor: %s\n", err);
    model_free(copy);
    model_free(m);
}

/* --swa's average: weights 1, 2 and 4 in turn average to 7/3 (the float
 * rule a + (w - a) / (n + 1) of PyTorch's AveragedModel: 1, then 1.5, then
 * 1.5 + 2.5 / 3), -0.5 and 0.5 to 0 exactly; and the state file keeps the
 * average bit for bit, refusing to load it where none is expected. */
static void test_weight_average(const char *dir) {
    ModelConfig cfg = small_config();
    char err[256], path[512];
    Model *m = model_create(&cfg, 4, err, sizeof err);
    if (!m) { CHECK(0, "%s", err); return; }
    model_init(m, 11);
    float *average = malloc(sizeof(float) * m->n_params), *back = malloc(sizeof(float) * m->n_params);
    const float weights[3] = {1.0f, 2.0f, 4.0f}, other[3] = {-0.5f, 0.5f, 0.0f};
    for (int k = 0; k < 3; k++) {
        m->params[0] = weights[k];
        m->params[1] = other[k];
        model_average_update(m, average, k);
    }
    CHECK(fabsf(average[0] - 7.0f / 3.0f) <= 2.4e-7f, "mean of 1, 2, 4: %.9g, expected 7/3", average[0]);
    CHECK(average[1] == 0.0f, "mean of -0.5, 0.5, 0: %.9g, expected 0", average[1]);
    CHECK(average[2] == m->params[2], "a weight that never changed is its own mean");
    snprintf(path, sizeof path, "%s/state_average.safetensors", dir);
    int rc = model_save_state(m, average, path, NULL, NULL, 0, err, sizeof err);
    CHECK(rc == 0, "model_save_state with an average: %s", err);
    StFile f;
    if (rc == 0 && st_load(path, &f, err, sizeof err) == 0) {
        rc = model_load_state_from(m, back, &f, path, err, sizeof err);
        CHECK(rc == 0 && memcmp(back, average, sizeof(float) * m->n_params) == 0,
              "the average does not round-trip bit for bit (%s)", rc ? err : "");
        rc = model_load_state_from(m, NULL, &f, path, err, sizeof err);
        CHECK(rc != 0, "a state holding an average loaded where none was expected");
        st_free(&f);
    }
    free(average);
    free(back);
    model_free(m);
}

/* evaluate() checks each batch encoded_batch builds: a sequence longer than
 * the model's max_len (or an empty batch) is an error, never handed to the
 * forward pass, whose buffers hold max_len positions (the sanitizer build
 * would report the overflow). */
static void test_evaluate_checks_batches(void) {
    ModelConfig cfg = small_config();
    cfg.max_len = 8;
    char err[256] = "";
    Model *m = model_create(&cfg, 4, err, sizeof err);
    if (!m) { CHECK(0, "model_create: %s", err); return; }
    model_init(m, 5);
    int ids[12] = {TOKEN_CLS, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, TOKEN_SEP};
    size_t offsets[1] = {0};
    int lengths[1] = {12}, labels[1] = {1};
    EncodedDataset d = {.ids = ids, .offsets = offsets, .lengths = lengths, .labels = labels, .n = 1, .longest = 12};
    Evaluation e;
    int rc = evaluate(m, &d, &e, err, sizeof err);
    CHECK(rc == ERR_RUNTIME && strstr(err, "max_len 8"), "a batch of length 12 for max_len 8: rc %d, '%s'", rc, err);
    if (rc == EXIT_OK) evaluation_free(&e);
    lengths[0] = 0;
    rc = evaluate(m, &d, &e, err, sizeof err);
    CHECK(rc == ERR_RUNTIME && strstr(err, "length 0"), "an empty batch: rc %d, '%s'", rc, err);
    if (rc == EXIT_OK) evaluation_free(&e);
    model_free(m);
}

/* evaluate() runs the examples in order of length; each example's
 * probabilities and loss must be those it gets evaluated alone (padding
 * invariance: its batch and padding change none of its bits), the loss
 * their mean, in every precision. */
static void test_evaluate_order(void) {
    const Precision precs[] = {PRECISION_FP32, PRECISION_BF16, PRECISION_AMX};
    for (int prec = 0; prec < 3; prec++) {
        ModelConfig cfg = small_config();
        cfg.precision = precs[prec];
        char err[256] = "";
        Model *m = model_create(&cfg, 4, err, sizeof err);   /* batches of 4 */
        if (!m) { CHECK(0, "model_create: %s", err); return; }
        model_init(m, 9);
        enum { N = 23, MAXLEN = 30 };
        int ids[N * MAXLEN], lengths[N], labels[N];
        size_t offsets[N], at = 0;
        for (int i = 0; i < N; i++) {
            lengths[i] = 3 + (i * 5) % (MAXLEN - 2);   /* lengths out of order, some equal */
            labels[i] = i % 3;
            offsets[i] = at;
            ids[at++] = TOKEN_CLS;
            for (int t = 1; t < lengths[i] - 1; t++) ids[at++] = 5 + (i * 13 + t * 3) % 35;
            ids[at++] = TOKEN_SEP;
        }
        EncodedDataset d = {.ids = ids, .offsets = offsets, .lengths = lengths, .labels = labels, .n = N,
                            .longest = MAXLEN};
        Evaluation all;
        if (evaluate(m, &d, &all, err, sizeof err) != EXIT_OK) { CHECK(0, "evaluate: %s", err); model_free(m); return; }
        int differ = 0;
        double loss_sum = 0.0;
        for (int i = 0; i < N; i++) {
            Evaluation one;
            if (evaluate_part(m, &d, i, i + 1, &one, err, sizeof err) != EXIT_OK) { differ++; continue; }
            differ += memcmp(one.probs, all.probs + (long)i * 3, sizeof(float) * 3) != 0 ||
                      one.predictions[0] != all.predictions[i];
            loss_sum += one.loss_sum;
            evaluation_free(&one);
        }
        CHECK(differ == 0, "%s: %d of %d examples evaluated in a batch differ from themselves alone",
              precision_name(cfg.precision), differ, N);
        Evaluation part;   /* a range not starting at 0: its results in its own positions */
        if (evaluate_part(m, &d, 5, 17, &part, err, sizeof err) == EXIT_OK) {
            CHECK(part.n == 12 && memcmp(part.probs, all.probs + 5 * 3, sizeof(float) * 12 * 3) == 0 &&
                  memcmp(part.predictions, all.predictions + 5, sizeof(int) * 12) == 0,
                  "%s: examples 5-16 evaluated as a part differ from the whole set's", precision_name(cfg.precision));
            evaluation_free(&part);
        } else CHECK(0, "evaluate_part: %s", err);
        CHECK(all.loss_sum == loss_sum && all.loss == loss_sum / N,
              "%s: the loss %.17g is not the examples' own losses summed in file order %.17g",
              precision_name(cfg.precision), all.loss_sum, loss_sum);
        evaluation_free(&all);
        model_free(m);
    }
}

int main(void) {
    test_evaluate_checks_batches();
    test_evaluate_order();
    char dir[] = "/tmp/test_model_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    test_weight_average(dir);
    test_positional_encoding();
    test_dropout_rule();
    test_masked_dropout();
    test_eval_identity();
    test_padding_invariance();
    test_thread_determinism();
    test_backward_writes();
    test_clip_deferred();
    test_checkpoint_round_trip(dir);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("test_model");
}
