/* optimizer.c: the global gradient norm, clipping to it, and the AdamW
 * step over the parameters of a Model (docs/DESIGN.md §4.6). */
#include "model.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "model/param_blocks.h"
#ifdef TRAIN_REFERENCE
#include "nn/reference.h"
#endif

#define ADAM_BETA1 0.9
#define ADAM_BETA2 0.999
#define ADAM_EPS 1e-8f
#define CLIP_EPS 1e-6

/* Sum of squares of x[begin, end) in double over 8 interleaved lanes
 * (element i in lane (i - begin) % 8), combined in a fixed order. */
static double sum_squares(const float *x, size_t begin, size_t end) {
    double part[8] = {0};
    size_t i = begin;
    for (; i + 8 <= end; i += 8)
        for (int l = 0; l < 8; l++) part[l] += (double)x[i + l] * x[i + l];
    for (int l = 0; i < end; i++, l++) part[l] += (double)x[i] * x[i];
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

double model_grad_norm(const Model *m) {
    /* blocks in parallel, then their sums in block order */
    double block_sums[PARAM_BLOCKS];
    #pragma omp parallel for schedule(static)
    for (int blk = 0; blk < PARAM_BLOCKS; blk++) {
        size_t begin, end;
        param_block(m->n_params, blk, &begin, &end);
        block_sums[blk] = sum_squares(m->grads, begin, end);
    }
    double total = 0.0;
    for (int blk = 0; blk < PARAM_BLOCKS; blk++) total += block_sums[blk];
    return sqrt(total);
}

double model_clip_grads(Model *m, double max_norm) {
    double norm = model_grad_norm(m);
    m->grad_scale = max_norm > 0.0 && norm > max_norm ? (float)(max_norm / (norm + CLIP_EPS)) : 1.0f;
    return norm;
}

void model_adamw_step(Model *m, float lr, float weight_decay) {
    m->adam_step++;
#ifdef TRAIN_REFERENCE
    /* build/train-ref: the gradients clipped in memory, as clip_grad_norm_ leaves them, then the
     * reference step tensor by tensor (decay on matrices and embeddings only) */
    for (size_t i = 0; i < m->n_params; i++) m->grads[i] *= m->grad_scale;
    m->grad_scale = 1.0f;
    for (int k = 0; k < m->n_tensors; k++) {
        const ParamTensor *t = &m->tensors[k];
        ref_adamw_step(m->params + t->offset, m->adam_m + t->offset, m->adam_v + t->offset, m->grads + t->offset,
                       (long)t->size, lr, weight_decay, t->decay, m->adam_step);
    }
    return;
#endif
    double bias1 = 1.0 - pow(ADAM_BETA1, (double)m->adam_step);
    double bias2 = 1.0 - pow(ADAM_BETA2, (double)m->adam_step);
    float step_size = (float)(lr / bias1);
    float bias2_sqrt = (float)sqrt(bias2);
    float b1 = (float)ADAM_BETA1, b2 = (float)ADAM_BETA2;
    float one_minus_b1 = (float)(1.0 - ADAM_BETA1), one_minus_b2 = (float)(1.0 - ADAM_BETA2);
    /* the clipped gradient g * scale (times 1 exactly when not clipped), as
     * clip_grad_norm_ would have stored it */
    float scale = m->grad_scale;
    m->grad_scale = 1.0f;
    /* one parallel region; tensors follow each other without a barrier */
    #pragma omp parallel
    for (int k = 0; k < m->n_tensors; k++) {
        const ParamTensor *t = &m->tensors[k];
        float decay = t->decay ? (float)(1.0 - (double)lr * weight_decay) : 1.0f;
        float *p = m->params + t->offset, *g = m->grads + t->offset;
        float *mo = m->adam_m + t->offset, *v = m->adam_v + t->offset;
        long n = (long)t->size;
        /* PyTorch order: decay the weight, update the moments, then the step */
        #pragma omp for schedule(static) nowait
        for (long i = 0; i < n; i++) {
            float gi = g[i] * scale;
            p[i] *= decay;
            mo[i] = mo[i] * b1 + gi * one_minus_b1;
            v[i] = v[i] * b2 + one_minus_b2 * gi * gi;
            float denom = sqrtf(v[i]) / bias2_sqrt + ADAM_EPS;
            p[i] -= step_size * (mo[i] / denom);
        }
    }
}

void model_average_update(const Model *m, float *average, long n_averaged) {
    const float *p = m->params;
    long n = (long)m->n_params;
    if (n_averaged == 0) {
        memcpy(average, p, sizeof(float) * (size_t)n);
        return;
    }
    float count = (float)(n_averaged + 1);
    #pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) average[i] = average[i] + (p[i] - average[i]) / count;
}
