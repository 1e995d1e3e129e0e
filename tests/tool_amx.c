/* tool_amx.c: can AMX's tile product serve --precision bf16? (No: it has
 * its own rule, --precision amx, which tests/test_matmul.c checks.) Prints
 * two lines: how many outputs of random 16 x 16 products (k = 128, the inputs'
 * exponents spread over 32 binades, one in 16 of them subnormal or zero,
 * and some starting values subnormal) tdpbf16ps gives other than the
 * bf16 mode's rule (docs/DESIGN.md §4.8: pairs of k added one product at a
 * time, the odd element's first, each sum rounded to float32, as vdpbf16ps
 * does, worked here in plain float arithmetic), and the GFLOP/s of a loop
 * of tile products on one thread. Exits 0 with a "not run" line where the
 * CPU, the OS or the compiler has no AMX. For scripts/cpu-rates.sh. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* clock_gettime */
#endif
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "nn/precision.h"

#if AMX_COMPILED   /* nn/precision.h: a compiler and system with AMX */
#include <immintrin.h>
#endif

enum { ROWS = 16, COLS = 16, WORDS = 64 };   /* C 16 x 16, A 16 x 64 words (k = 128), B 64 x 16 words */

#if AMX_COMPILED
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} TileConfig;

static uint64_t state = 0x9e3779b97f4a7c15u;
static uint64_t next(void) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}
/* a bfloat16 of either sign with its exponent in [2^-8, 2^24), or one time in 16 a subnormal or zero */
static uint16_t random_bf16(void) {
    uint64_t r = next();
    if ((r >> 40) % 16 == 0) return (uint16_t)(r & 0x807fu);
    return (uint16_t)((r & 0x807fu) | (uint16_t)((119 + (r >> 20) % 32) << 7));
}
static float flush(float x) { return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x; }

__attribute__((target("amx-tile,amx-bf16"))) static void tile_setup(void) {
    static TileConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 3; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
    _tile_loadconfig(&cfg);
}

/* c (16 x 16) += a (16 x words) b (words x 16, pairs of k in each word), 16 words a tile product */
__attribute__((target("amx-tile,amx-bf16"))) static void tile_product(float *c, const uint32_t *a,
                                                                     const uint32_t *b, int words) {
    _tile_loadd(0, c, COLS * 4);
    for (int p = 0; p < words; p += 16) {
        _tile_loadd(1, a + p, words * 4);
        _tile_loadd(2, b + p * COLS, COLS * 4);
        _tile_dpbf16ps(0, 1, 2);
    }
    _tile_stored(0, c, COLS * 4);
}

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

int main(void) {
#if AMX_COMPILED
    if (!amx_hardware()) {
        printf("amx: not run (no AMX on this CPU, or the kernel does not grant it)\n");
        return 0;
    }
    tile_setup();
    static uint32_t a[ROWS * WORDS], b[WORDS * COLS];
    static float c[ROWS * COLS], want[ROWS * COLS];
    long differ = 0, total = 0;
    for (int trial = 0; trial < 500; trial++) {
        for (int i = 0; i < ROWS * WORDS; i++) a[i] = (uint32_t)random_bf16() << 16 | random_bf16();
        for (int i = 0; i < WORDS * COLS; i++) b[i] = (uint32_t)random_bf16() << 16 | random_bf16();
        for (int i = 0; i < ROWS * COLS; i++) {   /* every 8th trial starts from subnormals */
            uint32_t tiny = (uint32_t)next() & 0x807fffffu;
            float start = (float)((int)(next() % 2001) - 1000) / 64.0f;
            if (trial % 8 == 0) memcpy(&start, &tiny, sizeof start);
            c[i] = want[i] = start;
        }
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++) {
                float acc = flush(want[i * COLS + j]);
                for (int p = 0; p < WORDS; p++) {
                    uint32_t x = a[i * WORDS + p], y = b[p * COLS + j];
                    acc = flush(fmaf(bf16_value((uint16_t)(x >> 16)), bf16_value((uint16_t)(y >> 16)), acc));
                    acc = flush(fmaf(bf16_value((uint16_t)x), bf16_value((uint16_t)y), acc));
                }
                want[i * COLS + j] = acc;
            }
        tile_product(c, a, b, WORDS);
        for (int i = 0; i < ROWS * COLS; i++, total++) differ += memcmp(&c[i], &want[i], sizeof(float)) != 0;
    }
    printf("amx: tdpbf16ps differs from the bf16 mode's rule in %ld of %ld outputs\n", differ, total);
    static uint32_t big_a[ROWS * 512], big_b[512 * COLS];
    long reps = 100000;
    double t0 = seconds();
    for (long r = 0; r < reps; r++) tile_product(c, big_a, big_b, 512);
    double dt = seconds() - t0;
    printf("amx: tile products of 16 x 1024 by 1024 x 16 on one thread: %.1f GFLOP/s\n",
           (double)reps * ROWS * COLS * 1024 * 2 / dt / 1e9);
#else
    printf("amx: not run (this compiler or system has no AMX intrinsics)\n");
#endif
    return 0;
}
