/* test_matmul.c: the blocked, tiled matrix product of matmul.h against a
 * plain triple loop, bit for bit, on random shapes (including ones that are
 * not multiples of the tiles and K = 0), all four operand layouts and the
 * four ways of starting an output (zero, bias, accumulate, from another
 * matrix, with C holding NaNs that must not be read), serial and
 * threaded at 1 and 2 threads, and with the epilogue (ReLU and a sum made
 * as tiles finish) against the separate passes, and the sums of A's rows
 * made beside a product (a bias gradient's) against a plain loop. The reference does the same
 * multiply-add chain over k in increasing order, so equality must be exact.
 *
 * The same again in bfloat16 (--precision bf16), emulated and on
 * vdpbf16ps: the reference rounds each input to bfloat16 by hand (from the
 * definition: 8 significant bits, ties to even, written apart from
 * bf16_round) and runs the same float32 chain, so equality is exact there
 * too (the test's values are never subnormal, where vdpbf16ps flushes).
 * Then the emulation against vdpbf16ps itself, on pairs of any exponent,
 * zeros, infinities and subnormal accumulators: the same bits; and the
 * operands' conversion on vcvtne2ps2bf16 against bf16_pair, on floats of
 * every kind, inputs ending at an unreadable page: the same words; and
 * the packed panels of A and B on it against the emulated mode's.
 *
 * And in --precision amx: the reference sums as AMX's tile product does
 * (amx_chain, from the rule), emulated and on the tiles; then the
 * emulation against tdpbf16ps on words of every kind. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* x to the nearest float with 8 significant bits, ties to the even one
 * (normal x; 0, inf and NaN as they are): x = q * 2^(e-8) with q an
 * integer below 2^8 after rounding. */
static float round_bf16_by_hand(float x) {
    if (x == 0.0f || !isfinite(x)) return x;
    int e;
    frexpf(x, &e);   /* |x| in [2^(e-1), 2^e): bfloat16's spacing there is 2^(e-8) */
    double ulp = ldexp(1.0, e - 8), q = (double)x / ulp;   /* exact */
    double r = floor(q), rest = q - r;
    if (rest > 0.5 || (rest == 0.5 && fmod(r, 2.0) != 0.0)) r += 1.0;
    return (float)(r * ulp);
}

/* Below float's smallest normal, a zero of the same sign. */
static float flush_by_hand(float x) { return fabsf(x) < 0x1p-126f ? copysignf(0.0f, x) : x; }

/* AMX's tile product, as its rule reads (docs/DESIGN.md §4): k in chunks of
 * 32 from 0; in each, the products of even k summed in one chain and those
 * of odd k in another, from 0, each sum rounded and flushed; then the
 * output plus the two chains' sum, each sum rounded and flushed. */
static float amx_chain(float acc, MatView a, MatView b, long i, long j, long K) {
    acc = flush_by_hand(acc);
    for (long k0 = 0; k0 < K; k0 += 32) {
        float even = 0.0f, odd = 0.0f;
        for (long k = k0; k < K && k < k0 + 32; k++) {
            float x = mat_at(a, i, k), y = mat_at(b, k, j);
            if (k % 2 == 0) even = flush_by_hand(fmaf(x, y, even));
            else odd = flush_by_hand(fmaf(x, y, odd));
        }
        acc = flush_by_hand(acc + flush_by_hand(even + odd));
    }
    return acc;
}

/* In bfloat16, a and b hold the inputs already rounded by hand: the
 * product of two is exact, so fmaf adds it with the one rounding of
 * vdpbf16ps's sum; AMX's sums go by amx_chain. */
static void reference(float *c, MatView a, MatView b, const float *bias, MatInit init, long M, long N, long K,
                      MatMode mode) {
    for (long i = 0; i < M; i++) {
        for (long j = 0; j < N; j++) {
            float acc = init == MM_BIAS ? bias[j] : init == MM_ZERO ? 0.0f : c[i * N + j];   /* MM_START: c holds start */
            if (mode == MM_AMX_EMULATED || mode == MM_AMX_HW) {
                c[i * N + j] = amx_chain(acc, a, b, i, j, K);
                continue;
            }
            for (long k = 0; k < K; k++) {
                float x = mat_at(a, i, k), y = mat_at(b, k, j);
                acc = mode != MM_F32 ? fmaf(x, y, acc) : MM_FMA(x, y, acc);
            }
            c[i * N + j] = acc;
        }
    }
}

/* matmul_run's row sums of A (M x K, a_data scaled element by element by
 * 2^-12 .. 2^11, so that the partial sums round and a change of their order
 * shows) against a plain loop, k in increasing order from 0; the product
 * goes to scratch. Returns the rows that differ. */
static long check_row_sums(const float *a_data, const float *b_data, long M, long N, long K, int layout,
                           MatMode mode) {
    float *scaled = malloc(sizeof(float) * (size_t)(M * K + 1)), *sums = malloc(sizeof(float) * (size_t)(M + 1));
    float *scratch = malloc(sizeof(float) * (size_t)(M * (N > 0 ? N : 1)));
    for (long i = 0; i < M * K; i++) scaled[i] = ldexpf(a_data[i], (int)(i % 24) - 12);
    MatView a, b;
    make_views(layout, scaled, b_data, M, N, K, &a, &b);
    matmul_run(scratch, N > 0 ? N : 1, a, b, NULL, MM_ZERO, M, N, K, NULL, sums, mode);
    long differ = 0;
    for (long i = 0; i < M; i++) {
        float want = 0.0f;
        for (long k = 0; k < K; k++) want += mat_at(a, i, k);
        differ += memcmp(&sums[i], &want, sizeof want) != 0;
    }
    free(scaled), free(sums), free(scratch);
    return differ;
}

/* The row sums on shapes the random products never draw, at 2 threads: no
 * columns (N = 0), and an A too large to be packed once (M * K / 2 words
 * past MM_WORDS_MAX) in a product split into column blocks, its last panel
 * partial; both layouts of A. */
static void check_row_sums_shapes(MatMode mode, const char *name) {
    static const long shapes[][3] = {{37, 0, 50}, {2100, 130, 1000}, {2101, 3, 777}};   /* M, N, K */
    uint32_t state = 11;
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    for (int s = 0; s < 3; s++) {
        long M = shapes[s][0], N = shapes[s][1], K = shapes[s][2];
        float *a_data = malloc(sizeof(float) * (size_t)(M * K)), *b_data = malloc(sizeof(float) * (size_t)(K * N + 1));
        for (long i = 0; i < M * K; i++) a_data[i] = random_value(&state);
        for (long i = 0; i < K * N; i++) b_data[i] = random_value(&state);
        for (int layout = 0; layout < 2; layout++)
            CHECK(check_row_sums(a_data, b_data, M, N, K, layout, mode) == 0,
                  "%s: M %ld N %ld K %ld layout %d: A's row sums differ from the plain loop", name, M, N, K, layout);
        free(a_data), free(b_data);
    }
}

/* The random products of one mode (float32, bfloat16 emulated or on
 * vdpbf16ps) against the plain loop; returns the trials that differed. */
static long check_products(MatMode mode, int trials) {
    uint32_t state = 7;
    long mismatched_trials = 0;
    const char *name = mode == MM_F32 ? "fp32" : mode == MM_BF16_HW ? "bf16 vdpbf16ps" : mode == MM_BF16_EMULATED
                                                                      ? "bf16 emulated" : mode == MM_AMX_HW ? "amx tiles" : "amx emulated";
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
        MatView a, b, a_ref, b_ref;
        make_views(layout, a_data, b_data, M, N, K, &a, &b);
        float *a_round = malloc(sizeof(float) * (size_t)(M * K + 1)), *b_round = malloc(sizeof(float) * (size_t)(K * N + 1));
        for (long i = 0; i < M * K; i++) a_round[i] = mode == MM_F32 ? a_data[i] : round_bf16_by_hand(a_data[i]);
        for (long i = 0; i < K * N; i++) b_round[i] = mode == MM_F32 ? b_data[i] : round_bf16_by_hand(b_data[i]);
        make_views(layout, a_round, b_round, M, N, K, &a_ref, &b_ref);
        reference(expected, a_ref, b_ref, bias, init, M, N, K, mode);
        const float *bias_arg = init == MM_BIAS ? bias : init == MM_START ? start : NULL;
        /* serial, then threaded at 1 and 2 threads: all must equal the reference */
        /* variants 4 and 5: relu, then sum, in place (C keeps the result instead of the product) */
        for (int variant = 0; variant < 6; variant++) {
            if (init == MM_START) memset(got, 0xff, sizeof(float) * (size_t)(M * N));   /* NaNs: never read */
            else memcpy(got, start, sizeof(float) * (size_t)(M * N));
#ifdef _OPENMP
            omp_set_num_threads(variant == 1 ? 1 : 2);
#endif
            if (variant == 0) {
                if (mode == MM_F32) matmul_serial(got, N, a, b, bias_arg, init, M, N, K);
                else continue;   /* float32 only */
            } else if (variant == 3) {   /* 2 threads, with the epilogue */
                MatEpilogue ep = {.relu = relu, .add = addend, .sum = sum};
                matmul_mode(got, N, a, b, bias_arg, init, M, N, K, &ep, mode);
                int fused_same = 1;
                for (long i = 0; i < M * N; i++) {
                    float r = expected[i] > 0.0f ? expected[i] : 0.0f, s_ = addend[i] + expected[i];
                    fused_same &= memcmp(&relu[i], &r, sizeof r) == 0 && memcmp(&sum[i], &s_, sizeof s_) == 0;
                }
                CHECK(fused_same, "%s trial %d: M %ld N %ld K %ld: the epilogue's relu or sum differs from the passes",
                      name, trial, M, N, K);
                /* through a dropout: rows are (example, position) of T = 3 positions of
                 * 5 counted, from example 2 on; the factor by the key's rule in floats */
                DropoutKey key = {0.25f, 9, (uint64_t)trial, 4, 2, 5, NULL};
                ep.drop = &key;
                ep.drop_T = 3;
                if (init != MM_START) memcpy(got, start, sizeof(float) * (size_t)(M * N));   /* C's start again */
                matmul_mode(got, N, a, b, bias_arg, init, M, N, K, &ep, mode);
                int dropped_same = 1;
                for (long i = 0; i < M * N; i++) {
                    long row = i / N, col = i % N;
                    uint64_t index = ((2 + (uint64_t)(row / 3)) * 5 + (uint64_t)(row % 3)) * (uint64_t)N + (uint64_t)col;
                    float factor = rng_uniform(9, (uint64_t)trial, 4, index) < 0.25f ? 0.0f : 1.0f / 0.75f;
                    float dropped = expected[i] * factor;   /* its own statement: never fused into the sum */
                    float r = (expected[i] > 0.0f ? expected[i] : 0.0f) * factor, s_ = addend[i] + dropped;
                    dropped_same &= memcmp(&relu[i], &r, sizeof r) == 0 && memcmp(&sum[i], &s_, sizeof s_) == 0;
                }
                CHECK(dropped_same, "%s trial %d: M %ld N %ld K %ld: the epilogue's dropout differs from the passes",
                      name, trial, M, N, K);
                /* the gate, in place (a gradient back through relu and dropout):
                 * C = gate > 0 ? product * scale : 0, the gate a random matrix;
                 * into relu's buffer, so that got keeps the product checked below */
                MatEpilogue gate = {.in_place = 1, .gate = addend, .gate_scale = 1.25f};
                float *gated = relu;
                if (init == MM_START) memset(gated, 0xff, sizeof(float) * (size_t)(M * N));
                else memcpy(gated, start, sizeof(float) * (size_t)(M * N));
                matmul_mode(gated, N, a, b, bias_arg, init, M, N, K, &gate, mode);
                int gated_same = 1;
                for (long i = 0; i < M * N; i++) {
                    float want = addend[i] > 0.0f ? expected[i] * 1.25f : 0.0f;
                    gated_same &= memcmp(&gated[i], &want, sizeof want) == 0;
                }
                CHECK(gated_same, "%s trial %d: M %ld N %ld K %ld: the epilogue's gate differs from the pass", name,
                      trial, M, N, K);
            } else if (variant >= 4) {
                float *self = got;
                MatEpilogue ep = {.relu = variant == 4 ? self : NULL, .add = variant == 5 ? addend : NULL,
                                  .sum = variant == 5 ? self : NULL, .in_place = 1};
                matmul_mode(got, N, a, b, bias_arg, init, M, N, K, &ep, mode);
                int in_place_same = 1;
                for (long i = 0; i < M * N; i++) {
                    float want = variant == 4 ? (expected[i] > 0.0f ? expected[i] : 0.0f) : addend[i] + expected[i];
                    in_place_same &= memcmp(&got[i], &want, sizeof want) == 0;
                }
                CHECK(in_place_same, "%s trial %d: M %ld N %ld K %ld: the in-place %s differs from the pass", name,
                      trial, M, N, K, variant == 4 ? "relu" : "sum");
                /* in place through a dropout, as training runs it: the factor by the key's rule in
                 * floats (T = 4 positions of 6 counted, from example 1 on), the sum in two steps */
                DropoutKey key = {0.4f, 3, (uint64_t)trial, 7, 1, 6, NULL};
                ep.drop = &key;
                ep.drop_T = 4;
                if (init == MM_START) memset(got, 0xff, sizeof(float) * (size_t)(M * N));
                else memcpy(got, start, sizeof(float) * (size_t)(M * N));
                matmul_mode(got, N, a, b, bias_arg, init, M, N, K, &ep, mode);
                in_place_same = 1;
                for (long i = 0; i < M * N; i++) {
                    long row = i / N, col = i % N;
                    uint64_t index = ((1 + (uint64_t)(row / 4)) * 6 + (uint64_t)(row % 4)) * (uint64_t)N + (uint64_t)col;
                    float factor = rng_uniform(3, (uint64_t)trial, 7, index) < 0.4f ? 0.0f : 1.0f / 0.6f;
                    float dropped = expected[i] * factor, want = variant == 4 ? (expected[i] > 0.0f ? expected[i] : 0.0f) * factor
                                                                              : addend[i] + dropped;
                    in_place_same &= memcmp(&got[i], &want, sizeof want) == 0;
                }
                CHECK(in_place_same, "%s trial %d: M %ld N %ld K %ld: the in-place %s through a dropout differs", name,
                      trial, M, N, K, variant == 4 ? "relu" : "sum");
                continue;
            } else {
                matmul_mode(got, N, a, b, bias_arg, init, M, N, K, NULL, mode);
                /* A's row sums (a bias gradient's) beside a product into scratch, on A's
                 * values spread over 2^24 so that the sums round and their order shows */
                CHECK(check_row_sums(a_data, b_data, M, N, K, layout, mode) == 0,
                      "%s trial %d: M %ld N %ld K %ld layout %d variant %d: A's row sums differ from the plain loop",
                      name, trial, M, N, K, layout, variant);
            }
            int same = memcmp(got, expected, sizeof(float) * (size_t)(M * N)) == 0;
            mismatched_trials += !same;
            CHECK(same, "%s trial %d: M %ld N %ld K %ld layout %d init %d variant %d differs from the plain loop", name,
                  trial, M, N, K, layout, (int)init, variant);
        }
        free(a_data);
        free(b_data);
        free(a_round);
        free(b_round);
        free(bias);
        free(expected);
        free(got);
        free(start);
        free(addend);
        free(relu);
        free(sum);
    }
    check_row_sums_shapes(mode, name);
    return mismatched_trials;
}

/* bf16_round against the rounding by hand, on every third float of the
 * binade [1, 2) (a third of its ties, after odd and even), a spread of random bit patterns (normal ones) and
 * the edges: the largest floats round to infinity, the subnormals to zero. */
static void check_rounding(void) {
    long wrong = 0;
    for (uint32_t u = 0x3f800000u; u < 0x40000000u; u += 3) {
        float x;
        memcpy(&x, &u, sizeof x);
        wrong += bf16_value(bf16_round(x)) != round_bf16_by_hand(x);
    }
    uint32_t state = 11;
    for (int i = 0; i < 2000000; i++) {
        uint32_t u = next_random(&state) << 8 ^ next_random(&state);
        float x;
        memcpy(&x, &u, sizeof x);
        if (!isnormal(x)) continue;
        float want = round_bf16_by_hand(x), got = bf16_value(bf16_round(x));
        wrong += memcmp(&want, &got, sizeof got) != 0;
    }
    CHECK(wrong == 0, "bf16_round differs from rounding by hand on %ld floats", wrong);
    CHECK(bf16_value(bf16_round(3.4e38f)) == INFINITY, "the largest floats do not round to infinity");
    CHECK(bf16_round(1e-39f) == 0 && bf16_round(-1e-39f) == 0x8000, "a subnormal does not become a signed zero");
    CHECK(bf16_round(1.0f + 0x1p-8f) == 0x3f80 && bf16_round(1.0f + 0x3p-8f) == 0x3f82,
          "ties do not go to the even neighbour");
}

#if BF16_HW_COMPILED
/* A bfloat16 of any sign and exponent, zero and infinity among them. */
static uint16_t random_bf16(uint32_t *state) {
    uint32_t r = next_random(state);
    if (r % 16 == 0) return (uint16_t)(r & 0x8000u);              /* a zero */
    if (r % 64 == 1) return (uint16_t)((r & 0x8000u) | 0x7f80u);   /* an infinity */
    return (uint16_t)((r & 0x80ffu) | (1 + (r >> 8) % 254) << 7);  /* normal */
}

/* The emulation against vdpbf16ps: tiles of random pairs of every exponent
 * (products that overflow, cancel or fall below float's range) and starting
 * values that are subnormal, zero or normal. NaNs compare as NaNs. */
static void check_emulation(void) {
    uint32_t state = 5;
    long differ = 0, total = 0;
    for (int trial = 0; trial < 4000; trial++) {
        int kp = 1 + (int)random_below(&state, 6);
        uint32_t a[6 * BF_MR], b[6 * BF_NR];
        float hw[BF_MR * BF_NR], emu[BF_MR * BF_NR];
        /* narrow exponents in half the trials, so that sums cancel and round */
        int narrow = trial % 2;
        for (int i = 0; i < kp * BF_MR; i++) {
            uint16_t x = random_bf16(&state), y = random_bf16(&state);
            if (narrow) x = (uint16_t)((x & 0x807f) | (120 + x % 16) << 7), y = (uint16_t)((y & 0x807f) | (120 + y % 16) << 7);
            a[i] = (uint32_t)x << 16 | y;
        }
        for (int i = 0; i < kp * BF_NR; i++) {
            uint16_t x = random_bf16(&state), y = random_bf16(&state);
            if (narrow) x = (uint16_t)((x & 0x807f) | (120 + x % 16) << 7), y = (uint16_t)((y & 0x807f) | (120 + y % 16) << 7);
            b[i] = (uint32_t)x << 16 | y;
        }
        for (int i = 0; i < BF_MR * BF_NR; i++) {
            uint32_t r = next_random(&state), u = r % 4 == 0 ? (r & 0x807fffffu) : r % 4 == 1 ? (r & 0x80000000u)
                                                                                               : r << 8 ^ r;
            memcpy(&hw[i], &u, sizeof u);
            if (isnan(hw[i])) hw[i] = 1.0f;
        }
        memcpy(emu, hw, sizeof hw);
        bf16_kernel_hw(kp, a, 1, BF_MR, b, hw, BF_NR, hw, BF_NR);
        bf16_kernel_emulated(kp, a, 1, BF_MR, b, emu, BF_NR, emu, BF_NR);
        for (int i = 0; i < BF_MR * BF_NR; i++) {
            total++;
            differ += !(isnan(hw[i]) && isnan(emu[i])) && memcmp(&hw[i], &emu[i], sizeof(float)) != 0;
        }
    }
    CHECK(differ == 0, "the emulation differs from vdpbf16ps in %ld of %ld outputs", differ, total);
    printf("REPORT bf16 emulation: %ld outputs of random pairs (every exponent, zeros, infinities, subnormal "
           "starts) bit-identical to vdpbf16ps: %s\n", total, differ ? "NO" : "yes");
}

#if AMX_COMPILED
/* AMX's emulation against its tiles, as check_emulation: random words of
 * every exponent, 1 to 40 of them (chunks whole and cut short), A in rows
 * and in panels, starting values of every kind. */
static void check_amx_emulation(void) {
    uint32_t state = 9;
    long differ = 0, total = 0;
    for (int trial = 0; trial < 3000; trial++) {
        int kp = 1 + (int)random_below(&state, 40), panels = trial % 2;
        uint32_t a[40 * BF_MR], b[40 * BF_NR];
        float hw[BF_MR * BF_NR], emu[BF_MR * BF_NR];
        int narrow = trial % 3 == 0;
        for (int i = 0; i < kp * BF_MR; i++) {
            uint16_t x = random_bf16(&state), y = random_bf16(&state);
            if (narrow) x = (uint16_t)((x & 0x807f) | (120 + x % 16) << 7), y = (uint16_t)((y & 0x807f) | (120 + y % 16) << 7);
            a[i] = (uint32_t)x << 16 | y;
        }
        for (int i = 0; i < kp * BF_NR; i++) {
            uint16_t x = random_bf16(&state), y = random_bf16(&state);
            if (narrow) x = (uint16_t)((x & 0x807f) | (120 + x % 16) << 7), y = (uint16_t)((y & 0x807f) | (120 + y % 16) << 7);
            b[i] = (uint32_t)x << 16 | y;
        }
        for (int i = 0; i < BF_MR * BF_NR; i++) {
            uint32_t r = next_random(&state), u = r % 4 == 0 ? (r & 0x807fffffu) : r % 4 == 1 ? (r & 0x80000000u)
                                                                                               : r << 8 ^ r;
            memcpy(&hw[i], &u, sizeof u);
            if (isnan(hw[i])) hw[i] = 1.0f;
        }
        memcpy(emu, hw, sizeof hw);
        long rs = panels ? 1 : kp, ps = panels ? BF_MR : 1;
        amx_configure();
        amx_kernel_hw(kp, a, rs, ps, b, hw, BF_NR, hw, BF_NR);
        amx_kernel_emulated(kp, a, rs, ps, b, emu, BF_NR, emu, BF_NR);
        for (int i = 0; i < BF_MR * BF_NR; i++) {
            total++;
            differ += !(isnan(hw[i]) && isnan(emu[i])) && memcmp(&hw[i], &emu[i], sizeof(float)) != 0;
        }
    }
    CHECK(differ == 0, "the AMX emulation differs from the tiles in %ld of %ld outputs", differ, total);
    printf("REPORT amx emulation: %ld outputs of random words (every exponent, zeros, infinities, subnormal "
           "starts, 1-40 words) bit-identical to tdpbf16ps: %s\n", total, differ ? "NO" : "yes");
}
#endif

/* A float of any kind: normal, subnormal, zero, infinity, NaN (quiet or
 * signalling), or a tie between two bfloat16 (low 16 bits 0x8000). */
static float random_float_bits(uint32_t *state) {
    uint32_t r = next_random(state), u = r << 8 ^ next_random(state);
    switch (r % 8) {
    case 0: u &= 0x807fffffu; break;                              /* subnormal or zero */
    case 1: u = (u & 0x80000000u) | 0x7f800000u; break;           /* infinity */
    case 2: u |= 0x7f800001u; break;                               /* NaN */
    case 3: u = (u & 0xffff0000u) | 0x8000u; break;                /* a tie */
    case 4: u = (u & 0xffff0000u) | 0x7fffu; break;                /* just under a tie */
    default: break;
    }
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The conversions on vcvtne2ps2bf16 against bf16_pair (the emulated mode's
 * words), on floats of every kind and every length up to 40, so both the
 * full steps and the masked tails run. */
static void check_conversions(void) {
    uint32_t state = 13;
    long differ = 0, total = 0;
    for (int trial = 0; trial < 20000; trial++) {
        int n = (int)random_below(&state, 41);
        float first[41], second[41], row[82];
        uint32_t hw[42], emu[42];
        for (int i = 0; i < 41; i++) first[i] = random_float_bits(&state), second[i] = random_float_bits(&state);
        for (int i = 0; i < 82; i++) row[i] = random_float_bits(&state);
        /* a row of n values in pairs (n odd: the last with a pad), then two rows side by side */
        memset(hw, 0xab, sizeof hw), memset(emu, 0xab, sizeof emu);
        bf16_row_pairs(hw, row, n, -0.0f, MM_BF16_HW);
        bf16_row_pairs(emu, row, n, -0.0f, MM_BF16_EMULATED);
        for (int i = 0; i < n / 2; i++) CHECK(emu[i] == bf16_pair(row[2 * i], row[2 * i + 1]), "the emulated pairs");
        differ += memcmp(hw, emu, sizeof hw) != 0;   /* past the words: both untouched */
        memset(hw, 0xab, sizeof hw), memset(emu, 0xab, sizeof emu);
        bf16_two_rows(hw, first, second, n, MM_BF16_HW);
        bf16_two_rows(emu, first, second, n, MM_BF16_EMULATED);
        differ += memcmp(hw, emu, sizeof hw) != 0;
        total += 2;
    }
    /* the masked loads read no float past the last: each input ends at a
     * page whose next page may not be read (a read past it is a crash) */
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(NULL, (size_t)(4 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED && mprotect(pages + page, (size_t)page, PROT_NONE) == 0 &&
          mprotect(pages + 3 * page, (size_t)page, PROT_NONE) == 0, "guard pages for the conversions");
    if (pages != MAP_FAILED) {
        for (int n = 0; n <= 40; n++) {
            float *first = (float *)(pages + page) - n, *second = (float *)(pages + 3 * page) - n;
            for (int i = 0; i < n; i++) first[i] = random_float_bits(&state), second[i] = random_float_bits(&state);
            uint32_t hw[41], emu[41];
            memset(hw, 0, sizeof hw), memset(emu, 0, sizeof emu);
            bf16_row_pairs(hw, first, n, 0.0f, MM_BF16_HW);
            bf16_row_pairs(emu, first, n, 0.0f, MM_BF16_EMULATED);
            differ += memcmp(hw, emu, sizeof hw) != 0;
            bf16_two_rows(hw, first, second, n, MM_BF16_HW);
            bf16_two_rows(emu, first, second, n, MM_BF16_EMULATED);
            differ += memcmp(hw, emu, sizeof hw) != 0;
            total += 2;
        }
        munmap(pages, (size_t)(4 * page));
    }
    CHECK(differ == 0, "vcvtne2ps2bf16's words differ from bf16_pair's in %ld of %ld conversions", differ, total);
    printf("REPORT bf16 conversions: %ld rows of 0-40 floats of every kind (subnormals, ties, infinities, NaNs) "
           "converted on vcvtne2ps2bf16, the same words as bf16_pair: %s\n", total, differ ? "NO" : "yes");
}

/* The packings of A and B on vcvtne2ps2bf16 (a panel of 8 contiguous
 * rows two pairs a step; 16 columns at once, turned in registers; rows and
 * pairs of rows) against the emulated mode's words, for both layouts of
 * each operand, 1-8 rows of A, 1-64 columns of B, starts past the first row,
 * column and k, and floats of every kind, with the operand's last float
 * just before a page that may not be read. The two output buffers start
 * alike and are compared whole, so a word written past the panels shows. */
static void check_packing(void) {
    enum { WORDS = 64 * 48 };   /* the largest packing (2 panels of 32 x 40 pairs) and room after it */
    uint32_t state = 17;
    long page = sysconf(_SC_PAGESIZE), differ = 0, total = 0;
    size_t span = (size_t)(16 * page);
    char *pages = mmap(NULL, span + (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pages != MAP_FAILED && mprotect(pages + span, (size_t)page, PROT_NONE) == 0, "a guard page for the packing");
    if (pages == MAP_FAILED) return;
    float *end = (float *)(pages + span);
    static uint32_t hw[WORDS], emu[WORDS];
    for (int trial = 0; trial < 6000; trial++) {
        int kc = (int)random_below(&state, 80), extra = (int)random_below(&state, 4);
        long k0 = random_below(&state, 3), rs, ps, rs2, ps2;
        /* A: rows [row0, row0 + rows) x k in [k0, k0 + kc), rows along k or k along rows */
        int rows = 1 + (int)random_below(&state, BF_MR), a_t = (int)random_below(&state, 2);
        long row0 = random_below(&state, 3), r_end = row0 + rows, k_end = k0 + kc;
        long ld = a_t ? r_end + extra : k_end + extra;
        long last = kc ? (a_t ? (r_end - 1) + (k_end - 1) * ld : (r_end - 1) * ld + k_end - 1) : -1;
        float *data = end - (last + 1);
        for (long i = 0; i <= last; i++) data[i] = random_float_bits(&state);
        MatView a = a_t ? (MatView){data, 1, ld} : (MatView){data, ld, 1};
        memset(hw, 0xab, sizeof hw), memset(emu, 0xab, sizeof emu);
        mm_pack_a_bf16(hw, &rs, &ps, a, row0, rows, k0, kc, NULL, MM_BF16_HW);
        mm_pack_a_bf16(emu, &rs2, &ps2, a, row0, rows, k0, kc, NULL, MM_BF16_EMULATED);
        differ += rs != rs2 || ps != ps2 || memcmp(hw, emu, sizeof hw) != 0;
        /* B: k in [k0, k0 + kc) x columns [col0, col0 + cols), columns along k or rows along columns */
        int cols = 1 + (int)random_below(&state, 64), b_t = (int)random_below(&state, 2);
        long col0 = random_below(&state, 3), c_end = col0 + cols;
        ld = b_t ? k_end + extra : c_end + extra;
        last = kc ? (b_t ? (c_end - 1) * ld + k_end - 1 : (k_end - 1) * ld + c_end - 1) : -1;
        data = end - (last + 1);
        for (long i = 0; i <= last; i++) data[i] = random_float_bits(&state);
        MatView b = b_t ? (MatView){data, 1, ld} : (MatView){data, ld, 1};
        memset(hw, 0xab, sizeof hw), memset(emu, 0xab, sizeof emu);
        mm_pack_b_bf16(hw, b, k0, kc, col0, cols, MM_BF16_HW);
        mm_pack_b_bf16(emu, b, k0, kc, col0, cols, MM_BF16_EMULATED);
        differ += memcmp(hw, emu, sizeof hw) != 0;
        total += 2;
    }
    munmap(pages, span + (size_t)page);
    CHECK(differ == 0, "the packings on vcvtne2ps2bf16 differ from the emulated ones in %ld of %ld", differ, total);
    printf("REPORT bf16 packing: %ld operands (A: 1-8 rows, B: 1-64 columns, both layouts, 0-79 k, floats of every "
           "kind, the last one before an unreadable page) packed the same as in the emulated mode: %s\n", total,
           differ ? "NO" : "yes");
}
#endif

int main(void) {
    int trials = getenv("CHECK_QUICK") ? 60 : 300;
    long mismatched = check_products(MM_F32, trials);
    printf("REPORT matmul: %d random products x (serial, 1 thread, 2 threads, epilogue, in place) bit-identical "
           "to a plain loop: %s\n",
           trials, mismatched ? "NO" : "yes");
    check_rounding();
    mismatched = check_products(MM_BF16_EMULATED, trials);
    printf("REPORT matmul bf16 emulated: %d random products x (1 thread, 2 threads, epilogue, in place) bit-identical "
           "to a plain loop on inputs rounded to bfloat16 by hand: %s\n", trials, mismatched ? "NO" : "yes");
#if BF16_HW_COMPILED
    if (bf16_hardware()) {
        mismatched = check_products(MM_BF16_HW, trials);
        printf("REPORT matmul bf16 vdpbf16ps: %d random products bit-identical to the same plain loop: %s\n", trials,
               mismatched ? "NO" : "yes");
        check_emulation();
        check_conversions();
        check_packing();
    } else {
        printf("REPORT matmul bf16 vdpbf16ps: not checked, this CPU lacks AVX-512 BF16 (the emulation was)\n");
    }
#else
    printf("REPORT matmul bf16 vdpbf16ps: not checked, this compiler has no AVX-512 BF16 (the emulation was)\n");
#endif
    mismatched = check_products(MM_AMX_EMULATED, trials);
    printf("REPORT matmul amx emulated: %d random products x (1 thread, 2 threads, epilogue, in place) bit-identical "
           "to AMX's rule by hand on inputs rounded by hand: %s\n", trials, mismatched ? "NO" : "yes");
#if AMX_COMPILED
    if (amx_hardware()) {
        mismatched = check_products(MM_AMX_HW, trials);
        printf("REPORT matmul amx tiles: %d random products bit-identical to the same rule: %s\n", trials,
               mismatched ? "NO" : "yes");
        check_amx_emulation();
    } else {
        printf("REPORT matmul amx tiles: not checked, this CPU or kernel has no AMX (the emulation was)\n");
    }
#else
    printf("REPORT matmul amx tiles: not checked, this compiler has no AMX (the emulation was)\n");
#endif
    return check_summary("test_matmul");
}
