/* f64.h: the model compiled a second time with float meaning double, linked
 * into ./train for the live gradient check of `trace --backward`. In double a
 * central difference measures the gradient to about 1e-9, where float32's
 * rounding would swamp it; tests/test_f64_grad.c does the same.
 *
 * This header must not include model.h: f64.c reads model.c with float
 * defined as double, and model.h with it. So the config comes as plain ints
 * and doubles, and the weights as float32 in the float model's layout. */
#ifndef MODEL_F64_H
#define MODEL_F64_H

#include <stddef.h>

typedef struct {
    int vocab_size, max_len, d_model, n_heads, d_ff, n_layers, n_classes;
    int activation, norm, pool, pe;   /* the enum values of model.h */
    double emb_scale;
} F64Config;

/* One checked weight: its flat index into the parameters (the float model's
 * layout) and what the double build finds for it. */
typedef struct {
    size_t index;
    double analytic;   /* d loss / d weight by the double build's backward */
    double numeric;    /* (loss(w + h) - loss(w - h)) / 2h of the double build's loss */
} F64Probe;

/* Builds the double model for cfg with the weights params (n_params float32
 * values), runs one sequence tokens (T ids) with label in eval mode (no
 * dropout), its backward, and fills each probe with central differences of
 * step h. The loss is -log p_label from the double logits, evaluated to
 * keep its digits when it is small (see label_loss); *loss is its value.
 * 0, or -1 with a message. */
int model_f64_probe(const F64Config *cfg, const float *params, size_t n_params, const int *tokens, int T, int label,
                    double h, F64Probe *probes, int n_probes, double *loss, char *err, size_t errlen);

#endif
