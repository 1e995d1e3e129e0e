/* config.c: the model config's defaults and the check that every size and
 * choice in it is one the model can be built with (docs/DESIGN.md §4). */
#include "model.h"

#include "base/errors.h"

#include <math.h>
#include <stdio.h>

ModelConfig model_config_default(void) {
    ModelConfig cfg = {
        .vocab_size = 0, .max_len = 64, .d_model = 64, .n_heads = 4, .d_ff = 256, .n_layers = 2,
        .n_classes = 0, .dropout = 0.1f, .activation = ACT_RELU, .norm = NORM_POST,
        .pool = POOL_MEAN, .pe = PE_SINUSOIDAL, .emb_scale = 0.0f, .precision = PRECISION_FP32,
    };
    return cfg;
}

static int check_range(const char *option, long value, long lo, long hi, char *err, size_t errlen) {
    if (value >= lo && value <= hi) return 0;
    set_error(err, errlen, "%s must be between %ld and %ld (got %ld)", option, lo, hi, value);
    return -1;
}

int model_config_check(const ModelConfig *cfg, char *err, size_t errlen) {
    if (check_range("vocab_size", cfg->vocab_size, N_SPECIAL_TOKENS + 1, MODEL_MAX_DIM * 16L, err, errlen) ||
        check_range("max_len", cfg->max_len, 3, 65536, err, errlen) ||
        check_range("d_model", cfg->d_model, 1, MODEL_MAX_DIM, err, errlen) ||
        check_range("heads", cfg->n_heads, 1, MODEL_MAX_DIM, err, errlen) ||
        check_range("d_ff", cfg->d_ff, 1, MODEL_MAX_DIM, err, errlen) ||
        check_range("layers", cfg->n_layers, 1, 1000, err, errlen) ||
        (cfg->n_classes != 0 && check_range("number of classes", cfg->n_classes, 2, 1 << 16, err, errlen)))
        return -1;
    if (cfg->d_model % cfg->n_heads != 0) {
        set_error(err, errlen, "d_model %d is not divisible by heads %d", cfg->d_model, cfg->n_heads);
        return -1;
    }
    if (cfg->pe == PE_SINUSOIDAL && cfg->d_model % 2 != 0) {
        set_error(err, errlen, "d_model %d is odd; sinusoidal positional encoding needs an even width", cfg->d_model);
        return -1;
    }
    if (!(cfg->dropout >= 0.0f && cfg->dropout < 1.0f)) {
        set_error(err, errlen, "dropout must be in [0, 1) (got %g)", cfg->dropout);
        return -1;
    }
    /* training sets sqrt(d_model), at most sqrt(MODEL_MAX_DIM) = 1024 */
    if (!isfinite(cfg->emb_scale) || cfg->emb_scale <= 0.0f || cfg->emb_scale > 1024.0f) {
        set_error(err, errlen, "emb_scale must be a positive number of at most 1024, sqrt of the widest d_model (got %g)",
                 cfg->emb_scale);
        return -1;
    }
    if ((unsigned)cfg->activation > ACT_GELU || (unsigned)cfg->norm > NORM_PRE ||
        (unsigned)cfg->pool > POOL_CLS || (unsigned)cfg->pe > PE_NONE) {
        set_error(err, errlen, "unknown activation, norm, pool or pe value");
        return -1;
    }
    return 0;
}
