/* softmax_exp.h: the attention softmax's e^x, for x <= 0.
 *
 * A header of its own so that tests/test_softmax_exp.c checks the very
 * function attention.c uses. Static inline: attention.c is also compiled
 * with float defined as double (model/f64.c), and there SOFTMAX_EXP takes
 * the C library's exp instead. */
#ifndef NN_SOFTMAX_EXP_H
#define NN_SOFTMAX_EXP_H

#include <math.h>
#include <stdint.h>

/* e^x for the softmax, where x <= 0, in plain arithmetic the compiler
 * vectorizes (the C library's expf is a call per element): x = n ln2 + r
 * with |r| <= ln2/2, e^r from the Cephes expf polynomial, times 2^n built
 * in the exponent bits. Within one float ulp of e^x on [-87, 0]
 * (tests/test_softmax_exp.c checks every 8th float against exp in double);
 * below -87, where e^x is under 1.7e-38, the result is 0. Separate products and sums (ISO C: no
 * contraction), on purpose for now: as fused multiply-adds it takes about
 * half the instructions (about 2% of the step at T = 512, also within one
 * ulp), but every trained number then moves by ulps, and make check-data's
 * langid run with the defaults came out at 0.7991, under its bar of 0.80. */
static inline float softmax_exp(float x) {
    const float log2e = 1.44269504088896341f, ln2_hi = 0.693359375f, ln2_lo = -2.12194440e-4f;
    const float round_magic = 12582912.0f;  /* 1.5 * 2^23: adding it rounds to an integer */
    float clamped = x < -87.0f ? -87.0f : x;
    float n = (clamped * log2e + round_magic) - round_magic;
    float r = clamped - n * ln2_hi - n * ln2_lo;
    float poly = 1.9875691500e-4f;
    poly = poly * r + 1.3981999507e-3f;
    poly = poly * r + 8.3334519073e-3f;
    poly = poly * r + 4.1665795894e-2f;
    poly = poly * r + 1.6666665459e-1f;
    poly = poly * r + 5.0000001201e-1f;
    float e_r = poly * r * r + r + 1.0f;
    union { uint32_t bits; float value; } two_n = {.bits = (uint32_t)((int32_t)n + 127) << 23};
    return x < -87.0f ? 0.0f : e_r * two_n.value;
}

/* The double build of the gradient test needs the library's exp instead. */
#define SOFTMAX_EXP(x) _Generic((x), double: exp, default: softmax_exp)(x)

#endif
