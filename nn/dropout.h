/* dropout.h: the key of a dropout, which names the random numbers it
 * draws, and the drop test of one element; the layers (nn/layers.c) and the
 * products' epilogues (nn/matmul.h) draw the same masks from it. */
#ifndef DROPOUT_H
#define DROPOUT_H

#include <math.h>
#include <stdint.h>

#include "base/rng.h"

/* The key of a dropout. An element is dropped (factor 0, else 1/(1-p)) when
 * rng_uniform(seed, step, site, index) < p, its index counted in the global
 * batch (docs/DESIGN.md §7): example row0 + b of the batch, position t of `positions`
 * per example (the model's max_len, not the batch's padded length), then
 * the element within the position. So a batch split over MPI ranks, or
 * padded differently, draws exactly the masks of the whole batch in one
 * process. p = 0: no dropout. */
typedef struct {
    float p;
    uint64_t seed, step, site;
    uint64_t row0;      /* the global batch index of example 0 of this call */
    int positions;      /* positions counted per example: max_len (>= T) */
    const int *rows;    /* NULL, or (B) each example's global batch index, for examples not
                         * contiguous in the batch (the MPI rank holding them): row0 + rows[b] */
} DropoutKey;

/* Example b's place in the global batch. */
static inline uint64_t dropout_row(const DropoutKey *key, int b) {
    return key->row0 + (uint64_t)(key->rows ? key->rows[b] : b);
}

/* The index of element c (of width per position) at position t of example b. */
static inline uint64_t dropout_index(const DropoutKey *key, int b, int t, int width, int c) {
    return (dropout_row(key, b) * (uint64_t)key->positions + (uint64_t)t) * (uint64_t)width + (uint64_t)c;
}

/* The drop test of a key in integers: rng_uniform(...) < p, where
 * rng_uniform is the top 24 bits u of rng_bits times 2^-24 (exact), holds
 * exactly when u < ceil(p * 2^24) (exact too: a power-of-two scaling), so
 * dropout_drops(&test, index) decides as the key's rule says without the
 * conversion to float. */
typedef struct {
    uint64_t stream;      /* rng_stream(seed, step, site) */
    uint64_t threshold;   /* ceil(p * 2^24) */
} DropoutTest;

static inline DropoutTest dropout_test(const DropoutKey *key) {
    DropoutTest t = {rng_stream(key->seed, key->step, key->site), (uint64_t)ceil((double)key->p * 16777216.0)};
    return t;
}

static inline int dropout_drops(const DropoutTest *t, uint64_t index) {
    return (rng_high_bits_at(t->stream, index) >> 40) < t->threshold;   /* the top 24 bits */
}

/* The factor of a kept element, 1 / (1 - p): exactly 1 when p is 0. */
static inline float dropout_keep_scale(const DropoutKey *key) { return 1.0f / (1.0f - key->p); }

/* Element index's factor: 0 when the test drops it, else keep (the key's
 * dropout_keep_scale). Every dropout multiplies by it, x * factor, and a
 * residual adds that product in a statement of its own (no fused
 * multiply-add), so the layers and the products' epilogues agree to the bit. */
static inline float dropout_factor(const DropoutTest *t, float keep, uint64_t index) {
    return dropout_drops(t, index) ? 0.0f : keep;
}

#endif
