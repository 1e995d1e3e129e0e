/* f64.c: model.c (with model/config.c), nn/layers.c and nn/attention.c
 * compiled a second time with float meaning double (see f64.h). Only
 * model_f64_probe leaves this object: the Makefile makes every other symbol
 * local with objcopy, so the double model_forward and the float one never
 * meet at link time. */
#include "model/f64.h"   /* before the switch: its prototype keeps float32 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef float float32;

#define float double
#define sqrtf sqrt
#define expf exp
#define logf log
#include "nn/layers.c"
#include "nn/attention.c"
#include "model.c"
#include "model/config.c"
#undef float

/* The loss -log p_label of the last forward, from its double logits, written
 * so it keeps its digits when it is small: log1p(sum_{c != y} e^(z_c - z_y)).
 * crossentropy_forward's logsumexp(z) - z_y is the same function, but for a
 * confident model (loss 1e-4) the subtraction cancels the leading digits,
 * and a central difference divides what is left by 2h. */
static double label_loss(const Model *m, int y) {
    const double *z = m->logits;
    int C = m->cfg.n_classes;
    double top = 0.0;   /* the largest z_c - z_y over all c, y included */
    for (int c = 0; c < C; c++) top = fmax(top, z[c] - z[y]);
    double sum = 0.0;
    for (int c = 0; c < C; c++)
        if (c != y) sum += exp(z[c] - z[y] - top);
    return top == 0.0 ? log1p(sum) : top + log(exp(-top) + sum);
}

int model_f64_probe(const F64Config *fc, const float32 *params, size_t n_params, const int *tokens, int T, int label,
                    double h, F64Probe *probes, int n_probes, double *loss, char *err, size_t errlen) {
    ModelConfig cfg = model_config_default();
    cfg.vocab_size = fc->vocab_size;
    cfg.max_len = fc->max_len;
    cfg.d_model = fc->d_model;
    cfg.n_heads = fc->n_heads;
    cfg.d_ff = fc->d_ff;
    cfg.n_layers = fc->n_layers;
    cfg.n_classes = fc->n_classes;
    cfg.dropout = 0.0;
    cfg.activation = (Activation)fc->activation;
    cfg.norm = (NormPlacement)fc->norm;
    cfg.pool = (Pooling)fc->pool;
    cfg.pe = (PosEncoding)fc->pe;
    cfg.emb_scale = fc->emb_scale;
    Model *m = model_create(&cfg, 1, err, errlen);
    if (!m) return -1;
    if (m->n_params != n_params) {
        set_error(err, errlen, "the double build lays out %zu parameters, the float model %zu", m->n_params, n_params);
        model_free(m);
        return -1;
    }
    for (size_t i = 0; i < n_params; i++) m->params[i] = params[i];
    ForwardOptions eval = {.training = 0};
    model_forward(m, tokens, &label, 1, T, &eval);
    *loss = label_loss(m, label);
    model_backward(m);
    for (int k = 0; k < n_probes; k++) {
        F64Probe *p = &probes[k];
        if (p->index >= n_params) {
            set_error(err, errlen, "probe index %zu is past the %zu parameters", p->index, n_params);
            model_free(m);
            return -1;
        }
        p->analytic = m->grads[p->index];
        double saved = m->params[p->index];
        m->params[p->index] = saved + h;
        model_forward(m, tokens, &label, 1, T, &eval);
        double up = label_loss(m, label);
        m->params[p->index] = saved - h;
        model_forward(m, tokens, &label, 1, T, &eval);
        double down = label_loss(m, label);
        m->params[p->index] = saved;
        p->numeric = (up - down) / (2 * h);
    }
    model_free(m);
    return 0;
}
