/* test_matmul.c: the blocked, tiled matrix product of matmul.h against a
 * plain triple loop, bit for bit, on random shapes (including ones that are
 * not multiples of the tiles and K = 0), all four operand layouts and the
 * four ways of starting an output (zero, bias, accumulate, from another
 * matrix, with C holding NaNs that must not be read), serial and
 * threaded at 1 and 2 threads, and with the epilogue (ReLU and a sum made
 * as tiles finish) against the separate passes. The reference does the same
 * multiply-add chain over k in increasing order, so equality must be exact. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "nn/matmul.h"

/* A small LCG: the test's own, so shapes and values are the same everywhere. */
static uint32_t next_random(uint32_t *state) {
    *state = *state * 1664525u + 1013904223u;
    return *state >> 8;
}
static float random_value(uint32_t *state) { return (float)(next_random(state) & 0xffff) / 65536.0f - 0.5f; }
static long random_below(uint32_t *state, long n) { return (long)(next_random(state) % (uint32_t)n); }

/* a is (M,K) and b is (K,N), each stored row-major or transposed. */
static void make_views(int layout, const float *a_data, const float *b_data, long M, long N, long K,
                       MatView *a, MatView *b) {
    int a_transposed = layout & 1, b_transposed = layout & 2;
    *a = a_transposed ? (MatView){a_data, 1, M} : (MatView){a_data, K, 1};
    *b = b_transposed ? (MatView){b_data, 1, K} : (MatView){b_data, N, 1};
}

static void reference(float *c, MatView a, MatView b, const float *bias, MatInit init, long M, long N, long K) {
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++) {
            float acc = init == MM_BIAS ? bias[j] : init == MM_ZERO ? 0.0f : c[i * N + j];   /* MM_START: c holds start */
            for (long k = 0; k < K; k++) acc = MM_FMA(mat_at(a, i, k), mat_at(b, k, j), acc);
            c[i * N + j] = acc;
        }
    }
}

int main(void) {
    int trials = getenv("CHECK_QUICK") ? 60 : 300;
    uint32_t state = 7;
    long mismatched_trials = 0;
    for (int trial = 0; trial < trials; trial++) {
        int large = trial >= trials / 2;
        long M = 1 + random_below(&state, large ? 200 : 40);
        long N = 1 + random_below(&state, large ? 200 : 70);
        long K = random_below(&state, large ? 500 : 20);
        int layout = (int)random_below(&state, 4);
        MatInit init = (MatInit)random_below(&state, 4);
        float *a_data = malloc(sizeof(float) * (size_t)(M * K + 1));
        float *b_data = malloc(sizeof(float) * (size_t)(K * N + 1));
        float *bias = malloc(sizeof(float) * (size_t)N);
        float *expected = malloc(sizeof(float) * (size_t)(M * N));
        float *got = malloc(sizeof(float) * (size_t)(M * N));
        for (long i = 0; i < M * K; i++) a_data[i] = random_value(&state);
        for (long i = 0; i < K * N; i++) b_data[i] = random_value(&state);
        for (long j = 0; j < N; j++) bias[j] = random_value(&state);
        for (long i = 0; i < M * N; i++) expected[i] = random_value(&state);
        float *start = malloc(sizeof(float) * (size_t)(M * N));
        memcpy(start, expected, sizeof(float) * (size_t)(M * N));
        float *addend = malloc(sizeof(float) * (size_t)(M * N)), *relu = malloc(sizeof(float) * (size_t)(M * N));
        float *sum = malloc(sizeof(float) * (size_t)(M * N));
        for (long i = 0; i < M * N; i++) addend[i] = random_value(&state);
        MatView a, b;
        make_views(layout, a_data, b_data, M, N, K, &a, &b);
        reference(expected, a, b, bias, init, M, N, K);
        const float *bias_arg = init == MM_BIAS ? bias : init == MM_START ? start : NULL;
        /* serial, then threaded at 1 and 2 threads: all must equal the reference */
        /* variants 4 and 5: relu, then sum, in place (C keeps the result instead of the product) */
        for (int variant = 0; variant < 6; variant++) {
            if (init == MM_START) memset(got, 0xff, sizeof(float) * (size_t)(M * N));   /* NaNs: never read */
            else memcpy(got, start, sizeof(float) * (size_t)(M * N));
            if (variant == 0) {
                matmul_serial(got, N, a, b, bias_arg, init, M, N, K);
            } else if (variant == 3) {   /* 2 threads, with the epilogue */
                MatEpilogue ep = {relu, addend, sum, 0};
                matmul_epilogue(got, N, a, b, bias_arg, init, M, N, K, &ep);
                int fused_same = 1;
                for (long i = 0; i < M * N; i++) {
                    float r = expected[i] > 0.0f ? expected[i] : 0.0f, s_ = addend[i] + expected[i];
                    fused_same &= memcmp(&relu[i], &r, sizeof r) == 0 && memcmp(&sum[i], &s_, sizeof s_) == 0;
                }
                CHECK(fused_same, "trial %d: M %ld N %ld K %ld: the epilogue's relu or sum differs from the passes",
                      trial, M, N, K);
            } else if (variant >= 4) {
                float *self = got;
                MatEpilogue ep = {variant == 4 ? self : NULL, variant == 5 ? addend : NULL, variant == 5 ? self : NULL,
                                  1};
                matmul_epilogue(got, N, a, b, bias_arg, init, M, N, K, &ep);
                int in_place_same = 1;
                for (long i = 0; i < M * N; i++) {
                    float want = variant == 4 ? (expected[i] > 0.0f ? expected[i] : 0.0f) : addend[i] + expected[i];
                    in_place_same &= memcmp(&got[i], &want, sizeof want) == 0;
                }
                CHECK(in_place_same, "trial %d: M %ld N %ld K %ld: the in-place %s differs from the pass", trial, M,
                      N, K, variant == 4 ? "relu" : "sum");
                continue;
            } else {
#ifdef _OPENMP
                omp_set_num_threads(variant);
#endif
                matmul(got, N, a, b, bias_arg, init, M, N, K);
            }
            int same = memcmp(got, expected, sizeof(float) * (size_t)(M * N)) == 0;
            mismatched_trials += !same;
            CHECK(same, "trial %d: M %ld N %ld K %ld layout %d init %d variant %d differs from the plain loop", trial, M,
                  N, K, layout, (int)init, variant);
        }
        free(a_data);
        free(b_data);
        free(bias);
        free(expected);
        free(got);
        free(start);
        free(addend);
        free(relu);
        free(sum);
    }
    printf("REPORT matmul: %d random products x (serial, 1 thread, 2 threads, epilogue, in place) bit-identical "
           "to a plain loop: %s\n",
           trials, mismatched_trials ? "NO" : "yes");
    return check_summary("test_matmul");
}
