/* trace_backward.c: `./train trace --backward`: the loss for one label and
 * its gradient walked back stage by stage, from the logits to the
 * embeddings, by the model's own backward (model_backward_walk); every
 * parameter's gradient norm; a live finite-difference check of weights
 * chosen by the seed, in double (model/f64.h); and the per-token saliency. */

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/rng.h"
#include "cli/trace.h"
#include "model/f64.h"
#include "run/probes.h"

#define TOP_ENTRIES 5       /* largest entries printed per stage */
#define TOP_TOKENS 6        /* positions named per stage, by gradient norm */
#define SALIENCY_BAR 24     /* characters of the longest saliency bar */

/* The check, as tests/test_f64_grad.c makes it: central differences of step
 * h = 1e-5 in double have a truncation error of order h^2 ~ 1e-10 and a
 * rounding error of order 1e-16 * |loss| / h (the double build evaluates the
 * loss so that it keeps its digits when it is small: model/f64.c), both far
 * below 1e-6 of a gradient the check picks (one of the larger of its
 * tensor), while a wrong backward rule shows at 1e-2 or more. The trace's
 * own float32 gradient is printed beside the double one but not judged:
 * float32 keeps ~7 digits, and fewer of p - 1 when the model is confident. */
#define FD_STEP 1e-5
#define GRAD_TOLERANCE 1e-6
/* A failed check is taken again at the step FD_STEP / KINK_SHRINK (run_checks). */
#define KINK_SHRINK 100.0
/* A checked weight's gradient is at least this fraction of its tensor's largest. */
#define PICK_FRACTION 0.25
enum { SITE_PICK_TENSOR = 1, SITE_PICK_ELEMENT = 2, SITE_PICK_POSITION = 3 };

/* ------------------------------------------------------------ the walk */

typedef struct {
    const Trace *tr;
    TraceBackward *bw;
    float *input_grad;   /* (T, d): the embedding sum's gradient */
    int failed;          /* out of memory */
} Walk;

static double norm_of(const float *x, size_t n) {
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) sum += (double)x[i] * x[i];
    return sqrt(sum);
}

static const char *act_rule(Activation a) {
    return a == ACT_GELU ? "gelu'(u) = Phi(u) + u phi(u)" : "relu'(u) = 1 if u > 0, else 0";
}

/* Title and backward rule of a stage, in the words of the forward walk. */
static void describe(TraceStage *s, const Trace *tr, GradStage stage, int l) {
    const ModelConfig *c = &tr->run.model->cfg;
    int T = tr->in.T, d = c->d_model, real = 0, pre = c->norm == NORM_PRE;
    for (int t = 0; t < T; t++) real += tr->in.ids[t] != TOKEN_PAD;
    s->rule[0][0] = s->rule[1][0] = '\0';
    switch (stage) {
    case GRAD_LOGITS:
        snprintf(s->title, sizeof s->title, "the logits z: %d classes", c->n_classes);
        snprintf(s->rule[0], sizeof s->rule[0],
                 "softmax cross-entropy, loss = -log p_label: dloss/dz_c = p_c - [c = label]");
        break;
    case GRAD_POOLED:
        snprintf(s->title, sizeof s->title, "the pooled vector: %d values", d);
        snprintf(s->rule[0], sizeof s->rule[0],
                 "z = head.weight pooled + head.bias: dloss/dpooled = head.weight^T dloss/dz "
                 "(head.weight gets dloss/dz pooled^T, head.bias dloss/dz)");
        break;
    case GRAD_ENCODER_OUT:
        if (pre) snprintf(s->title, sizeof s->title, "the encoder output after the final LayerNorm: %d x %d", T, d);
        else snprintf(s->title, sizeof s->title, "the encoder output (layer %d's output): %d x %d", c->n_layers, T, d);
        if (c->pool == POOL_MEAN)
            snprintf(s->rule[0], sizeof s->rule[0],
                     "mean pooling: dloss/dh_t = dloss/dpooled / %d at each of the %d non-[PAD] positions "
                     "(the same vector at every position)", real, real);
        else
            snprintf(s->rule[0], sizeof s->rule[0],
                     "[CLS] pooling: dloss/dh_0 = dloss/dpooled; every other position gets 0 here");
        break;
    case GRAD_FINAL_NORM_IN:
        snprintf(s->title, sizeof s->title, "layer %d's output, before the final LayerNorm: %d x %d", c->n_layers,
                 T, d);
        snprintf(s->rule[0], sizeof s->rule[0],
                 "LayerNorm, per position over %d dims: dx = rstd (g - mean(g) - xhat mean(g xhat)), "
                 "g = dy gamma, xhat = (x - mean) rstd", d);
        break;
    case GRAD_LAYER_MID:
        if (pre) {
            snprintf(s->title, sizeof s->title, "layer %d, r1 = x + attention(LN1(x)), the FFN block's input: %d x %d",
                     l + 1, T, d);
            snprintf(s->rule[0], sizeof s->rule[0],
                     "out = r1 + W2 act(u) + b2, u = W1 LN2(r1) + b1: dr1 = dout + LN2 backward of "
                     "W1^T (act'(u) (W2^T dout))");
        } else {
            snprintf(s->title, sizeof s->title, "layer %d, y1 = LN1(x + attention(x)), the FFN block's input: %d x %d",
                     l + 1, T, d);
            snprintf(s->rule[0], sizeof s->rule[0],
                     "out = LN2(y1 + W2 act(u) + b2), u = W1 y1 + b1: g = LN2 backward of dout; "
                     "dy1 = g + W1^T (act'(u) (W2^T g))");
        }
        snprintf(s->rule[1], sizeof s->rule[1], "%s; LN backward as in the final LayerNorm's rule",
                 act_rule(c->activation));
        break;
    case GRAD_LAYER_IN:
        if (l > 0) snprintf(s->title, sizeof s->title, "layer %d's input = layer %d's output: %d x %d", l + 1, l, T, d);
        else snprintf(s->title, sizeof s->title, "layer 1's input = the embedding sum x: %d x %d", T, d);
        if (pre)
            snprintf(s->rule[0], sizeof s->rule[0],
                     "r1 = x + W_o heads + b_o, heads = attention(LN1(x)): dx = dr1 + LN1 backward of "
                     "W_in^T [dQ; dK; dV] (the residual passes dr1 straight through)");
        else
            snprintf(s->rule[0], sizeof s->rule[0],
                     "y1 = LN1(x + W_o heads + b_o), heads = attention(x): g = LN1 backward of dy1; "
                     "dx = g + W_in^T [dQ; dK; dV]");
        snprintf(s->rule[1], sizeof s->rule[1],
                 "each head: dO = W_o^T %s, dV = A^T dO, dA = dO V^T, dS = A (dA - rowsum(A dA)) / sqrt(%d), "
                 "dQ = dS K, dK = dS^T Q", pre ? "dr1" : "g", d / c->n_heads);
        break;
    case GRAD_EMBEDDING_SUM:
        break;
    }
}

static void tap(void *ctx, GradStage stage, int layer, const float *grad) {
    Walk *w = ctx;
    const ModelConfig *c = &w->tr->run.model->cfg;
    int T = w->tr->in.T, d = c->d_model;
    if (w->failed) return;
    if (stage == GRAD_EMBEDDING_SUM) {
        /* in eval mode the same as layer 1's input: kept for the saliency, not printed twice */
        memcpy(w->input_grad, grad, sizeof(float) * T * d);
        return;
    }
    TraceStage *s = &w->bw->stages[w->bw->n_stages];
    s->rows = stage == GRAD_LOGITS || stage == GRAD_POOLED ? 1 : T;
    s->cols = stage == GRAD_LOGITS ? c->n_classes : d;
    s->grad = malloc(sizeof(float) * s->rows * s->cols);
    if (!s->grad) {
        w->failed = 1;
        return;
    }
    memcpy(s->grad, grad, sizeof(float) * s->rows * s->cols);
    s->norm = norm_of(s->grad, (size_t)s->rows * s->cols);
    s->stage = stage;
    s->layer = layer;
    describe(s, w->tr, stage, layer);
    w->bw->n_stages++;
}

/* ------------------------------------------------------------ printing */

static void print_token(FILE *out, const Trace *tr, int t) {
    fprintf(out, "pos %-3d ", t);
    trace_print_padded(out, tr->in.shown[t], LABEL_CHARS);
}

/* The largest |entries| of a stage's gradient, with the tokens they belong to,
 * and the positions whose gradient is largest. */
static void print_stage(FILE *out, const Trace *tr, const TraceStage *s, const char *number) {
    size_t n = (size_t)s->rows * s->cols;
    fprintf(out, "\n[%s] gradient at %s\n", number, s->title);
    fprintf(out, "    rule: %s\n", s->rule[0]);
    if (s->rule[1][0]) fprintf(out, "          %s\n", s->rule[1]);
    fprintf(out, "    shape %d x %d, norm %.4e\n", s->rows, s->cols, s->norm);
    int shown[TOP_ENTRIES];
    int k_max = n < TOP_ENTRIES ? (int)n : TOP_ENTRIES;
    for (int k = 0; k < k_max; k++) {
        int best = -1;
        for (size_t i = 0; i < n; i++) {
            int taken = 0;
            for (int j = 0; j < k && !taken; j++) taken = shown[j] == (int)i;
            if (!taken && (best < 0 || fabsf(s->grad[i]) > fabsf(s->grad[best]))) best = (int)i;
        }
        shown[k] = best;
        fprintf(out, "    %s", k == 0 ? "largest: " : "         ");
        if (s->rows > 1) print_token(out, tr, best / s->cols);
        if (s->stage == GRAD_LOGITS) {
            fprintf(out, "class ");
            trace_print_padded(out, tr->run.labels.names[best], 16);
        } else {
            fprintf(out, "%sdim %-4d", s->rows > 1 ? " " : "", best % s->cols);
        }
        fprintf(out, " %+.4e\n", s->grad[best]);
    }
    if (s->rows <= 1) return;
    /* positions by the norm of their gradient row, largest first */
    int T = s->rows;
    double *row = malloc(sizeof(double) * T);
    int *order = malloc(sizeof(int) * T);
    if (!row || !order) {
        free(row);
        free(order);
        return;
    }
    for (int t = 0; t < T; t++) {
        row[t] = norm_of(s->grad + (size_t)t * s->cols, s->cols);
        order[t] = t;
    }
    for (int i = 1; i < T; i++)   /* insertion sort: T is small */
        for (int j = i; j > 0 && row[order[j]] > row[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    fprintf(out, "    by position (norm of the row, largest first):");
    for (int i = 0; i < T && i < TOP_TOKENS; i++)
        fprintf(out, "%s %s %.3e", i ? "," : "", tr->in.shown[order[i]], row[order[i]]);
    fprintf(out, "%s\n", T > TOP_TOKENS ? ", ..." : "");
    free(row);
    free(order);
}

static void print_params(FILE *out, const Model *m, const TraceBackward *bw, int number) {
    fprintf(out, "\n[7.%d] gradient of every parameter tensor (what AdamW would step on; global norm %.4e)\n",
            number, bw->grad_norm);
    fprintf(out, "    %-44s %-12s %12s\n", "tensor", "shape", "grad norm");
    for (int k = 0; k < m->n_tensors; k++) {
        const ParamTensor *t = &m->tensors[k];
        char shape[32];
        if (t->ndim == 2) snprintf(shape, sizeof shape, "%d x %d", t->shape[0], t->shape[1]);
        else snprintf(shape, sizeof shape, "%d", t->shape[0]);
        fprintf(out, "    %-44s %-12s %12.4e%s\n", t->name, shape, bw->param_norms[k],
                bw->param_norms[k] == 0.0 ? "  (nothing flows here for this text)" : "");
    }
}

static void print_checks(FILE *out, const TraceBackward *bw, uint64_t seed, int number) {
    fprintf(out, "\n[7.%d] live gradient check: 3 weights chosen by --seed %llu and one input, in double\n",
            number, (unsigned long long)seed);
    fprintf(out, "    model.c and nn/layers.c compiled a second time with float as double (as tests/test_f64_grad.c)\n"
                 "    give the backward's gradient and a central difference (loss(w+h) - loss(w-h)) / 2h, h = %g;\n"
                 "    they must agree within %g relative, the test's tolerance. The double build's loss: %.10e\n",
            FD_STEP, GRAD_TOLERANCE, bw->loss_f64);
    fprintf(out, "    %-54s %14s %15s %14s %9s\n", "weight", "float backward", "double backward", "central diff.",
            "rel. err");
    for (int k = 0; k < bw->n_checks; k++) {
        const TraceCheck *c = &bw->checks[k];
        fprintf(out, "    ");
        trace_print_padded(out, c->what, 54);
        fprintf(out, " %+14.6e %+14.6e %+14.6e %9.1e  %s\n", c->float_grad / c->scale,
                c->analytic / c->scale, c->numeric / c->scale, c->rel_error, c->passed ? "ok" : "FAIL");
    }
    for (int k = 0; k < bw->n_checks; k++)
        if (bw->checks[k].kink_error > 0)
            fprintf(out, "    (%s: at h = %g its central difference was off by %.1e, as a kink of the loss within "
                         "the step makes it (a ReLU input near 0); at h = %g it agrees, as shown)\n", bw->checks[k].what, FD_STEP,
                    bw->checks[k].kink_error, FD_STEP / KINK_SHRINK);
    int floored = 0;
    for (int k = 0; k < bw->n_checks; k++) floored += bw->checks[k].floored;
    if (floored)
        fprintf(out, "    (%d gradient%s under %.1e, the smallest a central difference resolves at this loss: "
                     "compared as if %s that large)\n", floored, floored == 1 ? " is" : "s are", bw->grad_floor,
                floored == 1 ? "it were" : "they were");
    fprintf(out, "    check: %d of %d within %g%s\n", bw->n_checks - bw->checks_failed, bw->n_checks, GRAD_TOLERANCE,
            bw->checks_failed ? ": a backward rule disagrees with its forward" : "");
}

static void print_saliency(FILE *out, const Trace *tr, const TraceBackward *bw, int number) {
    int T = tr->in.T;
    const char *label = tr->run.labels.names[bw->label];
    fprintf(out, "\n[7.%d] saliency: which tokens pushed the prediction toward '%s'\n", number, label);
    fprintf(out, "    s_t = -sum_j x[t,j] dloss/dx[t,j] over the %d dims of the embedding sum x (gradient x input);\n"
                 "    positive: toward '%s' (a step along x lowers its loss), negative: away from it\n",
            tr->run.model->cfg.d_model, label);
    int *order = malloc(sizeof(int) * T);
    if (!order) return;
    double largest = 0.0;
    for (int t = 0; t < T; t++) {
        order[t] = t;
        largest = fmax(largest, fabs(bw->saliency[t]));
    }
    for (int i = 1; i < T; i++)
        for (int j = i; j > 0 && bw->saliency[order[j]] > bw->saliency[order[j - 1]]; j--) {
            int x = order[j];
            order[j] = order[j - 1];
            order[j - 1] = x;
        }
    for (int i = 0; i < T; i++) {
        int t = order[i];
        double s = bw->saliency[t];
        int bar = largest > 0 ? (int)lround(fabs(s) / largest * SALIENCY_BAR) : 0;
        fprintf(out, "    %3d. ", i + 1);
        print_token(out, tr, t);
        fprintf(out, " %+.6e  %s ", s, s > 0 ? "toward" : s < 0 ? "away  " : "      ");
        for (int b = 0; b < bar; b++) fputs(s > 0 ? "+" : "-", out);
        fputc('\n', out);
    }
    fprintf(out, "    in the text's order:");
    for (int t = 0; t < T; t++) fprintf(out, " %s(%+.2e)", tr->in.shown[t], bw->saliency[t]);
    fputc('\n', out);
    free(order);
}

/* ------------------------------------------------------------ the check */

/* A weight of tensor k with one of the larger gradients (at least
 * PICK_FRACTION of the largest), drawn by seed; -1 when k has none. */
static long pick_element(const Model *m, int k, uint64_t seed, int draw) {
    const ParamTensor *t = &m->tensors[k];
    const float *g = m->grads + t->offset;
    float top = 0.0f;
    for (size_t i = 0; i < t->size; i++) top = fmaxf(top, fabsf(g[i]));
    if (top == 0.0f) return -1;
    size_t count = 0;
    for (size_t i = 0; i < t->size; i++) count += fabsf(g[i]) >= PICK_FRACTION * top;
    size_t want = (size_t)(rng_uniform_double(seed, 0, SITE_PICK_ELEMENT, (uint64_t)draw) * count);
    for (size_t i = 0; i < t->size; i++)
        if (fabsf(g[i]) >= PICK_FRACTION * top && want-- == 0) return (long)i;
    return -1;
}

static void name_element(char *buf, size_t len, const ParamTensor *t, size_t i) {
    if (t->ndim == 2) snprintf(buf, len, "%s[%zu, %zu]", t->name, i / (size_t)t->shape[1], i % (size_t)t->shape[1]);
    else snprintf(buf, len, "%s[%zu]", t->name, i);
}

/* Three weights, one from each third of the tensors in state_dict order
 * (the embedding end, the middle, the head end), so that a wrong rule
 * anywhere upstream shows; then one input x[t,j], through the embedding row
 * of a token the text holds once (its gradient there is emb_scale times x's). */
static void pick_checks(const Trace *tr, const float *input_grad, uint64_t seed, TraceBackward *bw) {
    const Model *m = tr->run.model;
    int n = m->n_tensors;
    bw->n_checks = 0;
    for (int part = 0; part < 3; part++) {
        int lo = n * part / 3, hi = n * (part + 1) / 3, live = 0;
        for (int k = lo; k < hi; k++) live += bw->param_norms[k] > 0.0;
        if (live == 0) continue;
        int want = (int)(rng_uniform_double(seed, 0, SITE_PICK_TENSOR, (uint64_t)part) * live), k = lo;
        for (; k < hi; k++)
            if (bw->param_norms[k] > 0.0 && want-- == 0) break;
        long i = pick_element(m, k, seed, part);
        if (i < 0) continue;
        TraceCheck *c = &bw->checks[bw->n_checks++];
        name_element(c->what, sizeof c->what, &m->tensors[k], (size_t)i);
        c->index = m->tensors[k].offset + (size_t)i;
        c->scale = 1.0;
        c->float_grad = m->grads[c->index];
    }
    const ParamTensor *table = model_find_tensor(m, "embedding.weight");
    int T = tr->in.T, d = m->cfg.d_model, once = 0;
    int *ids = tr->in.ids;
    for (int t = 0; t < T; t++) {
        int count = 0;
        for (int u = 0; u < T; u++) count += ids[u] == ids[t];
        once += count == 1;
    }
    if (!table || once == 0) return;
    int want = (int)(rng_uniform_double(seed, 0, SITE_PICK_POSITION, 0) * once), t = 0;
    for (; t < T; t++) {
        int count = 0;
        for (int u = 0; u < T; u++) count += ids[u] == ids[t];
        if (count == 1 && want-- == 0) break;
    }
    const float *row = input_grad + (size_t)t * d;
    int j = 0;
    for (int k = 1; k < d; k++) if (fabsf(row[k]) > fabsf(row[j])) j = k;
    if (row[j] == 0.0f) return;
    TraceCheck *c = &bw->checks[bw->n_checks++];
    char token[64];
    snprintf(token, sizeof token, "%s", tr->in.shown[t]);
    snprintf(c->what, sizeof c->what, "input x[%d, %d] (%s) via embedding.weight[%d, %d]", t, j, token, ids[t], j);
    c->index = table->offset + (size_t)ids[t] * d + j;
    c->scale = m->cfg.emb_scale;
    c->float_grad = m->grads[c->index];
}

/* The smallest gradient the check can judge. The central difference's
 * rounding error is about eps |loss| / h, times the ulps the loss may be
 * off: at most GRAD_FLOOR_ULPS eps |loss| / h. Gradients that small are
 * noise around 0 in both columns (a d_model 2 LayerNorm passes almost
 * nothing back, say), so each is compared as if at least that much over
 * GRAD_TOLERANCE. */
#define GRAD_FLOOR_ULPS 10.0
static double grad_floor(double loss) { return GRAD_FLOOR_ULPS * DBL_EPSILON * fabs(loss) / FD_STEP / GRAD_TOLERANCE; }

/* One check's verdict from its central difference, against floor. */
static void judge_check(TraceCheck *ck, double numeric, double floor) {
    ck->numeric = numeric;
    double scale = fmax(fmax(fabs(ck->numeric), fabs(ck->analytic)), floor);
    ck->rel_error = scale > 0 ? fabs(ck->numeric - ck->analytic) / scale : 0.0;
    ck->passed = ck->rel_error < GRAD_TOLERANCE;
    ck->floored = fmax(fabs(ck->numeric), fabs(ck->analytic)) < floor;
    ck->kink_error = 0.0;
}

static int run_checks(const Trace *tr, TraceBackward *bw) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    F64Config fc = {c->vocab_size, c->max_len, c->d_model, c->n_heads, c->d_ff, c->n_layers, c->n_classes,
                    (int)c->activation, (int)c->norm, (int)c->pool, (int)c->pe, c->emb_scale};
    F64Probe probes[TRACE_CHECKS];
    for (int k = 0; k < bw->n_checks; k++) probes[k].index = bw->checks[k].index;
    char err[512];
    if (model_f64_probe(&fc, m->params, m->n_params, tr->in.ids, tr->in.T, bw->label, FD_STEP, probes, bw->n_checks,
                        &bw->loss_f64, err, sizeof err) != 0) {
        fprintf(stderr, "error: the gradient check's double model: %s\n", err);
        return EXIT_RUNTIME;
    }
    bw->checks_failed = 0;
    bw->grad_floor = grad_floor(bw->loss_f64);
    for (int k = 0; k < bw->n_checks; k++) {
        TraceCheck *ck = &bw->checks[k];
        ck->analytic = probes[k].analytic;
        judge_check(ck, probes[k].numeric, bw->grad_floor);
    }
    /* A ReLU input within reach of the step makes the loss bend inside
     * [w - h, w + h]: the central difference then averages two slopes. A
     * check that fails is taken again with a step KINK_SHRINK times smaller,
     * which such a kink no longer reaches; a wrong backward rule fails at
     * every step. */
    int n_again = 0;
    F64Probe again[TRACE_CHECKS];
    int which[TRACE_CHECKS];
    for (int k = 0; k < bw->n_checks; k++)
        if (!bw->checks[k].passed) {
            which[n_again] = k;
            again[n_again++].index = bw->checks[k].index;
        }
    double loss_again;
    if (n_again > 0 && model_f64_probe(&fc, m->params, m->n_params, tr->in.ids, tr->in.T, bw->label,
                                       FD_STEP / KINK_SHRINK, again, n_again, &loss_again, err, sizeof err) != 0) {
        fprintf(stderr, "error: the gradient check's double model: %s\n", err);
        return EXIT_RUNTIME;
    }
    for (int i = 0; i < n_again; i++) {
        TraceCheck *ck = &bw->checks[which[i]], first = *ck;
        judge_check(ck, again[i].numeric, bw->grad_floor * KINK_SHRINK);   /* the floor grows as the step shrinks */
        if (ck->passed) ck->kink_error = first.rel_error;
        else *ck = first;   /* a real disagreement: shown at the usual step */
    }
    for (int k = 0; k < bw->n_checks; k++) bw->checks_failed += !bw->checks[k].passed;
    return EXIT_OK;
}

/* ------------------------------------------------------------ entry */

void trace_backward_free(TraceBackward *bw) {
    for (int k = 0; bw->stages && k < bw->n_stages; k++) free(bw->stages[k].grad);
    free(bw->stages);
    free(bw->param_norms);
    free(bw->saliency);
    memset(bw, 0, sizeof *bw);
}

int trace_backward(const Trace *tr, int label, uint64_t seed, TraceBackward *bw, FILE *out) {
    Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, d = c->d_model;
    memset(bw, 0, sizeof *bw);
    bw->label = label;
    Walk w = {tr, bw, malloc(sizeof(float) * T * d), 0};
    bw->stages = calloc((size_t)(4 + 2 * c->n_layers), sizeof *bw->stages);
    bw->param_norms = calloc((size_t)m->n_tensors, sizeof(double));
    bw->saliency = calloc((size_t)T, sizeof(float));
    if (!w.input_grad || !bw->stages || !bw->param_norms || !bw->saliency) goto out_of_memory;

    ForwardOptions eval = {.training = 0};
    bw->loss = model_forward(m, tr->in.ids, &label, 1, T, &eval);
    model_backward_walk(m, tap, &w);
    if (w.failed) goto out_of_memory;
    for (int k = 0; k < m->n_tensors; k++)
        bw->param_norms[k] = norm_of(m->grads + m->tensors[k].offset, m->tensors[k].size);
    bw->grad_norm = model_grad_norm(m);
    probes_saliency(model_embedding_sum(m), w.input_grad, T, d, bw->saliency);   /* as training's probes record it */

    const char *name = tr->run.labels.names[label];
    fprintf(out, "\n[7] backward: the loss for label '%s' and its gradient, from the logits back to the embeddings\n",
            name);
    fprintf(out, "    loss = -log p('%s') = -log %.6f = %.6e   (model_backward, as training runs it, "
                 "without dropout)\n", name, m->probs[label], bw->loss);
    char number[32];
    for (int k = 0; k < bw->n_stages; k++) {
        snprintf(number, sizeof number, "7.%d", k + 1);
        print_stage(out, tr, &bw->stages[k], number);
    }
    fprintf(out, "\n    to the tables: x_t = E[id_t] * %.4f + PE_t, so embedding.weight row id_t gets %.4f dloss/dx_t "
                 "(summed over a token's positions);\n    %s\n", c->emb_scale, c->emb_scale,
            c->pe == PE_LEARNED ? "pos_embedding.weight row t gets dloss/dx_t"
            : c->pe == PE_SINUSOIDAL ? "the sinusoidal PE is a fixed formula: nothing to learn there"
                                     : "no positional encoding");
    int next = bw->n_stages + 1;   /* the sections after the stages */
    print_params(out, m, bw, next);
    pick_checks(tr, w.input_grad, seed, bw);
    int rc = run_checks(tr, bw);
    if (rc == EXIT_OK) {
        print_checks(out, bw, seed, next + 1);
        print_saliency(out, tr, bw, next + 2);
    }
    free(w.input_grad);
    if (rc == EXIT_OK && bw->checks_failed) {
        fprintf(stderr, "error: trace --backward: %d of %d gradient checks failed (relative error above %g): the "
                        "backward disagrees with the forward\n", bw->checks_failed, bw->n_checks, GRAD_TOLERANCE);
        rc = EXIT_RUNTIME;
    }
    return rc;
out_of_memory:
    free(w.input_grad);
    fprintf(stderr, "error: out of memory\n");
    return EXIT_RUNTIME;
}
