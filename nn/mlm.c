/* mlm.c: masking and the masked-token loss (see mlm.h). */
#include "nn/mlm.h"

#include <math.h>

#include "base/rng.h"

/* Draws of one position: which kind they decide. */
enum { DRAW_SELECT = 0, DRAW_KIND = 1, DRAW_RANDOM_ID = 2, DRAW_FALLBACK = 3, DRAWS_PER_POSITION = 4 };

static uint64_t draw_index(long seq, int pos, int draw) {
    return ((uint64_t)seq * MLM_MAX_POSITIONS + (uint64_t)pos) * DRAWS_PER_POSITION + (uint64_t)draw;
}

static int is_special(int id) { return id >= 0 && id < N_SPECIAL_TOKENS; }

long mlm_mask(int *out, int *targets, const int *tokens, int B, int T, int vocab_size, uint64_t seed,
              uint64_t step, uint64_t site, long first_seq, const int *rows) {
    long selected = 0;
    int n_random = vocab_size - N_SPECIAL_TOKENS;
    #pragma omp parallel for schedule(static) reduction(+ : selected)
    for (int b = 0; b < B; b++) {
        long seq = first_seq + (rows ? rows[b] : b);
        const int *in = tokens + (long)b * T;
        int *o = out + (long)b * T, *tg = targets + (long)b * T;
        int candidates = 0, chosen = 0;
        for (int t = 0; t < T; t++) {
            tg[t] = -1;
            if (is_special(in[t])) continue;
            candidates++;
            if (rng_uniform_double(seed, step, site, draw_index(seq, t, DRAW_SELECT)) < MLM_SELECT_P) {
                tg[t] = in[t];
                chosen++;
            }
        }
        if (candidates > 0 && chosen == 0) {
            /* at least one per sequence: the k-th candidate, k uniform */
            int k = (int)(rng_uniform_double(seed, step, site, draw_index(seq, 0, DRAW_FALLBACK)) * candidates);
            for (int t = 0; t < T; t++) {
                if (is_special(in[t])) continue;
                if (k-- == 0) {
                    tg[t] = in[t];
                    chosen = 1;
                    break;
                }
            }
        }
        for (int t = 0; t < T; t++) {
            int id = in[t];
            if (tg[t] >= 0) {
                double kind = rng_uniform_double(seed, step, site, draw_index(seq, t, DRAW_KIND));
                if (kind < MLM_MASK_P) {
                    id = TOKEN_MASK;
                } else if (kind < MLM_MASK_P + MLM_RANDOM_P && n_random > 0) {
                    double u = rng_uniform_double(seed, step, site, draw_index(seq, t, DRAW_RANDOM_ID));
                    int r = (int)(u * n_random);
                    id = N_SPECIAL_TOKENS + (r < n_random ? r : n_random - 1);
                }
            }
            o[t] = id;
        }
        selected += chosen;
    }
    return selected;
}

void rows_gather(float *out, const float *inp, const int *rows, int M, int C) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) {
        const float *src = inp + (long)rows[i] * C;
        float *dst = out + (long)i * C;
        for (int c = 0; c < C; c++) dst[c] = src[c];
    }
}

void rows_scatter_add(float *dinp, const float *dout, const int *rows, int M, int C) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) {
        float *dst = dinp + (long)rows[i] * C;
        const float *src = dout + (long)i * C;
        for (int c = 0; c < C; c++) dst[c] += src[c];
    }
}

double softmax_xent_rows(float *x, float *row_loss, const int *targets, int M, int V) {
    if (M <= 0) return 0.0;
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) {
        float *z = x + (long)i * V;
        /* nll = logsumexp(z) - z[y], in double so large logits stay finite */
        double max_z = z[0];
        for (int v = 1; v < V; v++) if (z[v] > max_z) max_z = z[v];
        double sum = 0.0;
        for (int v = 0; v < V; v++) sum += exp(z[v] - max_z);
        row_loss[i] = (float)(max_z + log(sum) - z[targets[i]]);
        for (int v = 0; v < V; v++) z[v] = (float)(exp(z[v] - max_z) / sum);
    }
    double total = 0.0;   /* in row order: the same sum at any thread count */
    for (int i = 0; i < M; i++) total += row_loss[i];
    return total / M;
}

void softmax_xent_rows_backward(float *x, const int *targets, int M, int V) {
    if (M <= 0) return;
    float scale = (float)(1.0 / M);
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; i++) {
        float *p = x + (long)i * V;
        p[targets[i]] -= 1.0f;
        for (int v = 0; v < V; v++) p[v] *= scale;
    }
}

int row_argmax(const float *p, int i, int V) {
    const float *row = p + (long)i * V;
    int best = 0;
    for (int v = 1; v < V; v++) if (row[v] > row[best]) best = v;
    return best;
}
