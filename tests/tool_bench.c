/* tool_bench.c: times full training steps (forward, backward, gradient
 * clipping, AdamW) of the model on random tokens and prints one JSON line:
 * ms per step, tokens per second, the analytic FLOP count and the GFLOP/s it
 * implies, peak RSS and the analytic memory the step needs.
 *
 *   tool_bench --config tiny|small|wide [--seq T] [--batch B] [--dropout P]
 *              [--steps S] [--warmup W] [--vocab V] [--d-model D] [--heads H]
 *              [--d-ff F] [--layers L] [--classes C] [--mlm 1] [--products 1]
 *              [--precision fp32|bf16|amx] [--peak fp32|bf16]
 *
 * With --products 1 it times instead the linear layers of the config alone
 * (linear_forward and linear_backward_to on the step's shapes, each the
 * fastest of S repetitions): what the matrix products reach without the rest
 * of the step, to set against the machine's peak and the step's GFLOP/s,
 * and step_ms, the time of a step's linear products (every layer) so timed.
 * --precision bf16 runs the products on bfloat16 inputs, amx sums them as
 * AMX's tiles do (docs/DESIGN.md §4.8).
 *
 * With --peak fp32|bf16 it times instead a loop of independent multiply-adds
 * held in registers on every thread (vfmadd231ps, or vdpbf16ps: two
 * multiply-adds a lane), the most the cores can do of either, for the
 * bfloat16 products' peak (PyTorch gives the float32 one, twin.py
 * matmul-peak).
 *
 * Threads come from OMP_NUM_THREADS, as for ./train --threads. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <time.h>
#include <sys/resource.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "model.h"
#include "base/rng.h"
#include "nn/precision.h"
#if BF16_HW_COMPILED
#include <immintrin.h>
#endif
#include "nn/layers.h"
#include "nn/mlm.h"

typedef struct {
    const char *name;
    int vocab, seq, d_model, heads, d_ff, layers, classes, batch;
} BenchConfig;

/* docs/DESIGN.md §9 */
static const BenchConfig CONFIGS[] = {
    {"tiny", 64, 32, 64, 4, 256, 2, 4, 32},
    {"small", 1000, 64, 128, 4, 512, 2, 2, 32},
    {"wide", 1000, 10, 512, 8, 2048, 1, 2, 32},
};

typedef struct {
    BenchConfig cfg;
    float dropout;
    int steps, warmup;
    int mlm;        /* 1: pretraining steps (docs/DESIGN.md §4b): masked batches, the tied MLM head */
    int products;   /* 1: time the linear layers alone (products_bench) */
    Precision precision;
    int peak;       /* 1: the multiply-add loop of --peak (peak_bench) */
} BenchOptions;

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int usage(const char *msg) {
    fprintf(stderr, "tool_bench: %s\n"
            "usage: tool_bench --config tiny|small|wide [--seq T] [--batch B] [--dropout P]\n"
            "                  [--steps S] [--warmup W] [--vocab V] [--d-model D] [--heads H]\n"
            "                  [--d-ff F] [--layers L] [--classes C] [--mlm 1] [--products 1]\n"
            "                  [--precision fp32|bf16|amx] [--peak fp32|bf16]\n", msg);
    return 2;
}

static int parse_args(int argc, char **argv, BenchOptions *o) {
    memset(o, 0, sizeof *o);
    o->cfg = CONFIGS[1];
    o->dropout = 0.1f;
    o->steps = 20;
    o->warmup = 3;
    o->precision = PRECISION_FP32;
    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        if (i + 1 >= argc) return usage("every option takes a value");
        const char *val = argv[++i];
        int *field = NULL;
        if (strcmp(opt, "--config") == 0) {
            int found = 0;
            for (size_t k = 0; k < sizeof CONFIGS / sizeof *CONFIGS; k++)
                if (strcmp(val, CONFIGS[k].name) == 0) { o->cfg = CONFIGS[k]; found = 1; }
            if (!found) return usage("unknown config");
            continue;
        }
        if (strcmp(opt, "--dropout") == 0) { o->dropout = strtof(val, NULL); continue; }
        if (strcmp(opt, "--precision") == 0 || strcmp(opt, "--peak") == 0) {
            int peak = strcmp(opt, "--peak") == 0;
            if (precision_parse(val, &o->precision) != 0 || (peak && o->precision == PRECISION_AMX))
                return usage("--precision is fp32, bf16 or amx; --peak fp32 or bf16");
            o->peak |= peak;
            continue;
        }
        if (strcmp(opt, "--seq") == 0) field = &o->cfg.seq;
        else if (strcmp(opt, "--batch") == 0) field = &o->cfg.batch;
        else if (strcmp(opt, "--steps") == 0) field = &o->steps;
        else if (strcmp(opt, "--warmup") == 0) field = &o->warmup;
        else if (strcmp(opt, "--vocab") == 0) field = &o->cfg.vocab;
        else if (strcmp(opt, "--d-model") == 0) field = &o->cfg.d_model;
        else if (strcmp(opt, "--heads") == 0) field = &o->cfg.heads;
        else if (strcmp(opt, "--d-ff") == 0) field = &o->cfg.d_ff;
        else if (strcmp(opt, "--layers") == 0) field = &o->cfg.layers;
        else if (strcmp(opt, "--classes") == 0) field = &o->cfg.classes;
        else if (strcmp(opt, "--mlm") == 0) field = &o->mlm;
        else if (strcmp(opt, "--products") == 0) field = &o->products;
        else return usage("unknown option");
        *field = atoi(val);
    }
    if (o->steps < 1 || o->warmup < 0) return usage("--steps must be >= 1 and --warmup >= 0");
    return 0;
}

/* Multiply-adds of one training step per token, counted analytically: the
 * forward's matrix products (in_proj 3d^2, out_proj d^2, FFN 2df, attention
 * scores and weighted values T*d each, the head d*C per sequence), times 3
 * for forward plus backward (each product's backward is two products of the
 * same size), times 2 flops per multiply-add. */
static double flops_per_token(const BenchConfig *c) {
    double d = c->d_model, f = c->d_ff, T = c->seq;
    double per_layer = 4 * d * d + 2 * d * f + 2 * T * d;
    double forward_macs = c->layers * per_layer + d * c->classes / T;
    return 2.0 * 3.0 * forward_macs;
}

/* Bytes a training step needs, analytically: parameters, gradients and both
 * Adam moments (4 floats each), plus the activations the backward must see:
 * per layer the inputs of every product and normalisation (qkv 3Nd, heads Nd,
 * residual sums 2Nd, normalised outputs 2Nd, the FFN's relu output Nf (its
 * backward needs no pre-activation), each attention softmax row's max and
 * 1/sum 2*N*heads), the embedding
 * sum Nd; one byte per element of each stored dropout mask (the attention's
 * are drawn where used, never stored); the backward's gradient buffers for
 * one layer at a time (stream 2Nd, qkv 3Nd, hidden Nf); and the fused
 * attention's buffers, per thread a block of query rows times T (four such
 * matrices, 64 KB each at most) and the head's packed k and v. */
static double analytic_bytes(const Model *m, const BenchConfig *c, float dropout, int threads) {
    double N = (double)c->batch * c->seq, d = c->d_model, f = c->d_ff;
    double per_layer = 8 * N * d + N * f + 2 * N * c->heads;
    double act_floats = c->layers * per_layer + N * d;
    double mask_bytes = dropout > 0 ? c->layers * (2 * N * d + N * f) + N * d : 0;
    double grad_floats = 5 * N * d + N * f;
    double dh_padded = ceil(d / c->heads / 32.0) * 32.0, t_padded = ceil(c->seq / 32.0) * 32.0;
    double att_work = threads * (4 * 16384.0 + 4 * (t_padded + dh_padded) * c->seq + 2 * dh_padded * c->seq);
    return 4.0 * (4.0 * m->n_params + act_floats + grad_floats + att_work) + mask_bytes;
}

static void random_batch(int *tokens, int *labels, const BenchConfig *c, uint64_t seed) {
    long n = (long)c->batch * c->seq;
    /* ordinary tokens only (no [PAD], no specials), as the PyTorch twin draws them */
    int ordinary = c->vocab - N_SPECIAL_TOKENS;
    for (long i = 0; i < n; i++)
        tokens[i] = N_SPECIAL_TOKENS + (int)(rng_bits(seed, 0, 1, (uint64_t)i) % (uint64_t)ordinary);
    for (int b = 0; b < c->batch; b++)
        labels[b] = (int)(rng_bits(seed, 0, 2, (uint64_t)b) % (uint64_t)c->classes);
}

/* FNV-1a over the parameters' bytes: runs at different thread counts must
 * print the same value (docs/DESIGN.md §7). */
static uint64_t params_hash(const Model *m) {
    const unsigned char *bytes = (const unsigned char *)m->params;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < m->n_params * sizeof(float); i++) h = (h ^ bytes[i]) * 0x100000001b3ull;
    return h;
}

static void train_step(Model *m, const int *tokens, const int *labels, const BenchConfig *c, uint64_t step) {
    ForwardOptions fo = {.training = 1, .seed = 1234, .step = step, .class_weights = NULL};
    if (m->cfg.n_classes == 0) {   /* pretraining: the batch masked afresh each step, as training does */
        static int *masked, *targets;
        long n = (long)c->batch * c->seq;
        if (!masked) masked = malloc(sizeof(int) * n), targets = malloc(sizeof(int) * n);
        mlm_mask(masked, targets, tokens, c->batch, c->seq, c->vocab, 1234, step, MLM_SITE_TRAIN, 0, NULL);
        model_forward_mlm(m, masked, targets, c->batch, c->seq, &fo);
    } else {
        model_forward(m, tokens, labels, c->batch, c->seq, &fo);
    }
    model_backward(m);
    model_clip_grads(m, 1.0);
    model_adamw_step(m, 1e-3f, 0.01f);
}

/* The fastest of reps runs of one linear layer's forward (backward = 0) or
 * backward (1), in seconds: N rows, C inputs, OC outputs. */
static double linear_seconds(int backward, int N, int C, int OC, int reps, float *x, float *w, float *b,
                             float *y, float *dx, float *dw, float *db, Precision prec) {
    double best = INFINITY;
    for (int r = 0; r < reps + 1; r++) {   /* one more: the first warms the caches */
        double start = now_seconds();
        if (backward) linear_backward_to(dx, dw, db, y, x, w, N, C, OC, prec);
        else linear_forward(y, x, w, b, N, C, OC, prec);
        double elapsed = now_seconds() - start;
        if (r > 0 && elapsed < best) best = elapsed;
    }
    return best;
}

/* The config's linear layers alone (in_proj, out_proj, linear1, linear2 of
 * one layer on a batch's N rows), forward and backward; prints one JSON line. */
static int products_bench(const BenchConfig *c, int reps, Precision prec) {
    int N = c->batch * c->seq, d = c->d_model, f = c->d_ff;
    int shapes[4][2] = {{d, 3 * d}, {d, d}, {d, f}, {f, d}};   /* (C, OC) */
    int widest = f > 3 * d ? f : 3 * d;                          /* the largest C or OC */
    long rows = (long)N * widest, weights = (long)widest * widest;
    float *x = malloc(sizeof(float) * rows), *y = malloc(sizeof(float) * rows), *dx = malloc(sizeof(float) * rows);
    float *w = malloc(sizeof(float) * weights), *dw = malloc(sizeof(float) * weights);
    float *b = malloc(sizeof(float) * widest), *db = malloc(sizeof(float) * widest);
    if (!x || !y || !dx || !w || !dw || !b || !db) {
        fprintf(stderr, "tool_bench: out of memory\n");
        return 1;
    }
    for (long i = 0; i < rows; i++) x[i] = y[i] = (float)(rng_bits(5, 0, 3, (uint64_t)i) % 1000) / 1000.0f - 0.5f;
    for (long i = 0; i < weights; i++) w[i] = (float)(rng_bits(5, 0, 4, (uint64_t)i) % 1000) / 1000.0f - 0.5f;
    for (int i = 0; i < widest; i++) b[i] = 0.01f * (float)i;
    double flops = 0.0, t_fwd = 0.0, t_bwd = 0.0;
    for (int s = 0; s < 4; s++) {
        int C = shapes[s][0], OC = shapes[s][1];
        flops += 2.0 * N * C * OC;
        t_fwd += linear_seconds(0, N, C, OC, reps, x, w, b, y, dx, dw, db, prec);
        t_bwd += linear_seconds(1, N, C, OC, reps, x, w, b, y, dx, dw, db, prec);
    }
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    /* step_ms: the linear products of a whole step (every layer), timed alone */
    printf("{\"config\": \"%s\", \"precision\": \"%s\", \"threads\": %d, \"rows\": %d, \"reps\": %d, "
           "\"forward_gflops\": %.3f, \"backward_gflops\": %.3f, \"gflops\": %.3f, \"step_ms\": %.4f}\n", c->name,
           precision_name(prec), threads, N, reps, flops / t_fwd * 1e-9, 2.0 * flops / t_bwd * 1e-9,
           3.0 * flops / (t_fwd + t_bwd) * 1e-9, c->layers * (t_fwd + t_bwd) * 1e3);
    free(x), free(y), free(dx), free(w), free(dw), free(b), free(db);
    return 0;
}

#if BF16_HW_COMPILED
/* Flops of iters rounds of PEAK_CHAINS independent multiply-add vectors
 * (enough chains to cover the instruction's latency on both FMA ports). */
enum { PEAK_CHAINS = 12 };

__attribute__((target("avx512f,avx512bf16")))
static float bf16_loop(long iters, double *flops) {
    __m512 acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
    __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x24002400);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_dpbf16_ps(acc[c], a, b);
    *flops = 4.0 * 16 * PEAK_CHAINS * (double)iters;   /* 16 lanes, 2 multiply-adds each */
    float sum = 0.0f;
    for (int c = 0; c < PEAK_CHAINS; c++) sum += _mm512_reduce_add_ps(acc[c]);
    return sum;
}

__attribute__((target("avx512f,fma")))
static float fma_loop(long iters, double *flops) {
    __m512 acc[PEAK_CHAINS];
    for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_set1_ps((float)c);
    __m512 a = _mm512_set1_ps(1.0f), b = _mm512_set1_ps(1e-7f);
    for (long i = 0; i < iters; i++)
        for (int c = 0; c < PEAK_CHAINS; c++) acc[c] = _mm512_fmadd_ps(a, b, acc[c]);
    *flops = 2.0 * 16 * PEAK_CHAINS * (double)iters;
    float sum = 0.0f;
    for (int c = 0; c < PEAK_CHAINS; c++) sum += _mm512_reduce_add_ps(acc[c]);
    return sum;
}
#endif

/* The best of reps timings of the loop on every thread at once; one JSON line. */
static int peak_bench(Precision prec, int reps) {
#if BF16_HW_COMPILED
    if (!__builtin_cpu_supports("avx512f") || (prec == PRECISION_BF16 && !bf16_hardware())) {
        fprintf(stderr, "tool_bench: --peak %s needs AVX-512%s\n", precision_name(prec),
                prec == PRECISION_BF16 ? " BF16" : "");
        return 1;
    }
    const long iters = 20000000;
    double best = 0.0;
    float sink = 0.0f;
    int threads = 1;
    for (int r = 0; r < reps + 1; r++) {
        double flops = 0.0, start = now_seconds();
        #pragma omp parallel reduction(+ : flops, sink)
        {
            double f;
            sink += prec == PRECISION_BF16 ? bf16_loop(iters, &f) : fma_loop(iters, &f);
            flops += f;
#ifdef _OPENMP
            #pragma omp master
            threads = omp_get_num_threads();
#endif
        }
        double gflops = flops / (now_seconds() - start) * 1e-9;
        if (r > 0 && gflops > best) best = gflops;
    }
    printf("{\"peak\": \"%s\", \"threads\": %d, \"gflops\": %.3f, \"sink\": %g}\n", precision_name(prec), threads,
           best, (double)sink);
    return 0;
#else
    fprintf(stderr, "tool_bench: --peak %s: this build has no AVX-512 BF16\n", precision_name(prec));
    return 1;
#endif
}

int main(int argc, char **argv) {
    BenchOptions o;
    if (parse_args(argc, argv, &o) != 0) return 2;
    const BenchConfig *c = &o.cfg;
    if (o.peak) return peak_bench(o.precision, o.steps < 5 ? o.steps : 5);
    if (o.products) return products_bench(c, o.steps, o.precision);
    ModelConfig mc = model_config_default();
    mc.vocab_size = c->vocab;
    mc.max_len = c->seq;
    mc.d_model = c->d_model;
    mc.n_heads = c->heads;
    mc.d_ff = c->d_ff;
    mc.n_layers = c->layers;
    mc.n_classes = o.mlm ? 0 : c->classes;   /* 0: the MLM head */
    mc.dropout = o.dropout;
    mc.emb_scale = sqrtf((float)c->d_model);
    mc.precision = o.precision;
    char err[256];
    Model *m = model_create(&mc, c->batch, err, sizeof err);
    if (!m) {
        fprintf(stderr, "tool_bench: %s\n", err);
        return 1;
    }
    model_init(m, 7);
    int *tokens = malloc(sizeof(int) * c->batch * c->seq);
    int *labels = malloc(sizeof(int) * c->batch);
    if (!tokens || !labels) {
        fprintf(stderr, "tool_bench: out of memory\n");
        return 1;
    }
    random_batch(tokens, labels, c, 99);

    uint64_t step = 0;
    for (int i = 0; i < o.warmup; i++) train_step(m, tokens, labels, c, ++step);
    double total = 0.0, best = INFINITY;
    for (int i = 0; i < o.steps; i++) {
        double start = now_seconds();
        train_step(m, tokens, labels, c, ++step);
        double elapsed = now_seconds() - start;
        total += elapsed;
        if (elapsed < best) best = elapsed;
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    double tokens_per_step = (double)c->batch * c->seq;
    double tokens_per_s = tokens_per_step * o.steps / total;
    double fpt = flops_per_token(c);
    printf("{\"config\": \"%s\", \"precision\": \"%s\", \"threads\": %d, \"vocab\": %d, \"seq\": %d, \"d_model\": %d, "
           "\"heads\": %d, \"d_ff\": %d, \"layers\": %d, \"classes\": %d, \"batch\": %d, "
           "\"dropout\": %g, \"steps\": %d, \"warmup\": %d, "
           "\"ms_per_step\": %.4f, \"ms_per_step_min\": %.4f, \"tokens_per_s\": %.1f, "
           "\"flops_per_token\": %.0f, \"gflops\": %.3f, \"peak_rss_kb\": %ld, "
           "\"analytic_bytes\": %.0f, \"arena_bytes\": %zu, \"n_params\": %zu, \"loss\": %.9g, "
           "\"params_hash\": \"%016llx\"}\n",
           c->name, precision_name(o.precision), threads, c->vocab, c->seq, c->d_model, c->heads, c->d_ff, c->layers, c->classes,
           c->batch, o.dropout, o.steps, o.warmup, 1000.0 * total / o.steps, 1000.0 * best, tokens_per_s,
           fpt, fpt * tokens_per_s * 1e-9, ru.ru_maxrss, analytic_bytes(m, c, o.dropout, threads),
           m->acts_floats * sizeof(float), m->n_params, m->loss, (unsigned long long)params_hash(m));
    free(tokens);
    free(labels);
    model_free(m);
    return 0;
}
