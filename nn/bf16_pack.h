/* bf16_pack.h: the operands of a bfloat16 product (docs/DESIGN.md §4) as
 * the kernels read them: each float rounded to bfloat16 (bf16_round), two
 * consecutive k in one 32-bit word, A in panels of BF_MR rows and B in
 * panels of BF_NR columns. Where the CPU has AVX-512 BF16 the rounding runs
 * on vcvtne2ps2bf16, the same words (tests/test_matmul.c). Only matmul.h
 * includes it; the double build of the gradient test has no bfloat16. */
#ifndef BF16_PACK_H
#define BF16_PACK_H

#if !defined(float)

#include <stdint.h>
#include <string.h>

#include "nn/matview.h"
#include "nn/precision.h"

#if BF16_HW_COMPILED
#include <immintrin.h>
#endif

/* The bfloat16 register tile, whatever the build's own: 8 rows x 32
 * columns, 16 accumulators of 16 floats. */
#define BF_MR 8
#define BF_NR 32

/* How a product runs: float32; bfloat16 summed as vdpbf16ps sums, emulated
 * or on it; bfloat16 summed as AMX's tile product sums, emulated or on it. */
typedef enum { MM_F32 = 0, MM_BF16_EMULATED = 1, MM_BF16_HW = 2, MM_AMX_EMULATED = 3, MM_AMX_HW = 4 } MatMode;

static inline MatMode mm_mode(Precision prec) {
    if (prec == PRECISION_BF16) return bf16_hardware() ? MM_BF16_HW : MM_BF16_EMULATED;
    if (prec == PRECISION_AMX) return amx_hardware() ? MM_AMX_HW : MM_AMX_EMULATED;
    return MM_F32;
}

/* 1 when a mode's operands are converted on vcvtne2ps2bf16 (the same words
 * as in plain C): every mode that runs on the hardware has it. */
static inline int mm_converts_on_hw(MatMode mode) { return mode == MM_BF16_HW || mode == MM_AMX_HW; }

/* Two consecutive k of an operand in one 32-bit word: k in the high half,
 * k + 1 in the low half. vdpbf16ps adds the high half's product to the
 * accumulator first, then the low half's, so the chain runs over k in
 * increasing order. An odd kc's last word has -0 (A) or +0 (B) in its low
 * half: the product -0 added to any float leaves it as it was. */
static inline uint32_t bf16_pair(float first, float second) {
    return (uint32_t)bf16_round(first) << 16 | bf16_round(second);
}

#if BF16_HW_COMPILED
/* The conversions below on vcvtne2ps2bf16, which rounds as bf16_round does
 * (to nearest even, a subnormal to a zero of its sign, a NaN quieted):
 * the same words, 16 a step. tests/test_matmul.c checks them against
 * bf16_pair on floats of every kind. */

/* The mask of the first count lanes of 16 (count <= 0: none, >= 16: all). */
static inline __mmask16 bf16_lanes(int count) {
    return count >= 16 ? (__mmask16)0xffff : count <= 0 ? (__mmask16)0 : (__mmask16)((1u << count) - 1);
}

/* words[p] = bf16_pair(src[2p], src[2p+1]) for p < n: 32 floats make 32
 * bfloat16 in order, and each 32-bit lane turned by 16 puts a pair's first
 * in the high half. */
__attribute__((target("avx512f,avx512bf16")))
static inline void bf16_row_pairs_hw(uint32_t *restrict words, const float *restrict src, int n) {
    for (int p = 0; p < n; p += 16) {
        int floats = 2 * (n - p);   /* read no float past the last pair's */
        __m512 lo = _mm512_maskz_loadu_ps(bf16_lanes(floats), src + 2 * p);
        __m512 hi = _mm512_maskz_loadu_ps(bf16_lanes(floats - 16), src + 2 * p + 16);
        __m512i v = (__m512i)_mm512_cvtne2ps_pbh(hi, lo);
        _mm512_mask_storeu_epi32(words + p, bf16_lanes(n - p), _mm512_rol_epi32(v, 16));
    }
}

/* words[j] = bf16_pair(f[j], s[j]) for the 16 lanes: both rounded side by
 * side (s's 16 in the low half, f's in the high), then interleaved 16 bits
 * at a time. */
__attribute__((target("avx512f,avx512bw,avx512bf16")))
static inline __m512i bf16_pairs_of(__m512 f, __m512 s) {
    const __m512i order = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8,
                                           23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0);
    return _mm512_permutexvar_epi16(order, (__m512i)_mm512_cvtne2ps_pbh(f, s));
}

/* words[j] = bf16_pair(first[j], second[j]) for j < n, 16 a step. */
__attribute__((target("avx512f,avx512bw,avx512bf16")))
static inline void bf16_two_rows_hw(uint32_t *restrict words, const float *first, const float *second, int n) {
    for (int j = 0; j < n; j += 16) {
        __mmask16 m = bf16_lanes(n - j);
        __m512 f = _mm512_maskz_loadu_ps(m, first + j), s = _mm512_maskz_loadu_ps(m, second + j);
        _mm512_mask_storeu_epi32(words + j, m, bf16_pairs_of(f, s));
    }
}

/* The 16 x 16 words r[j][p] turned to r[p][j]: pairs of lanes, then
 * pairs of pairs within each 128-bit lane, then the 128-bit lanes. */
__attribute__((target("avx512f")))
static inline void bf16_transpose16(__m512i r[16]) {
    __m512i t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) {   /* r[4g + q], 128-bit lane L: p = 4L + q, j = 4g .. 4g + 3 */
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int q = 0; q < 4; q++) {
        __m512i v = _mm512_shuffle_i32x4(r[q], r[4 + q], 0x88), w = _mm512_shuffle_i32x4(r[q], r[4 + q], 0xdd);
        __m512i x = _mm512_shuffle_i32x4(r[8 + q], r[12 + q], 0x88), y = _mm512_shuffle_i32x4(r[8 + q], r[12 + q], 0xdd);
        t[q] = _mm512_shuffle_i32x4(v, x, 0x88);
        t[4 + q] = _mm512_shuffle_i32x4(w, y, 0x88);
        t[8 + q] = _mm512_shuffle_i32x4(v, x, 0xdd);
        t[12 + q] = _mm512_shuffle_i32x4(w, y, 0xdd);
    }
    for (int i = 0; i < 16; i++) r[i] = t[i];
}

/* words[p * BF_NR + j] = bf16_pair(column j's k = 2p, 2p + 1) for j < 16
 * and p < (kc + 1) / 2, where column j is src + j * ld, contiguous along k
 * (an odd kc's last pair with +0, as bf16_row_pairs pads B; columns from
 * width on give 0, and src is not read when width is 0): each column's 16
 * pairs converted, then turned. */
__attribute__((target("avx512f,avx512bf16")))
static inline void bf16_columns_hw(uint32_t *restrict words, const float *src, long ld, int width, int kc) {
    int kp = (kc + 1) / 2;
    for (int p0 = 0; p0 < kp; p0 += 16) {
        int floats = kc - 2 * p0;   /* read no float past the column's last */
        __m512i r[16];
        const float *c = width ? src + 2 * p0 : NULL;   /* one pointer walks the columns */
        for (int j = 0; j < width; j++) {
            __m512 lo = _mm512_maskz_loadu_ps(bf16_lanes(floats), c);
            __m512 hi = _mm512_maskz_loadu_ps(bf16_lanes(floats - 16), floats > 16 ? c + 16 : c);
            r[j] = _mm512_rol_epi32((__m512i)_mm512_cvtne2ps_pbh(hi, lo), 16);
            if (j + 1 < width) c += ld;
        }
        for (int j = width; j < 16; j++) r[j] = _mm512_setzero_si512();
        bf16_transpose16(r);
        int n = kp - p0 < 16 ? kp - p0 : 16;
        for (int p = 0; p < n; p++) _mm512_storeu_si512(words + (long)(p0 + p) * BF_NR, r[p]);
    }
}

/* A panel of BF_MR (8) rows whose rows are contiguous (row i of k at
 * src[i + k * ld]), in pairs of k: words[p * 8 + i] = bf16_pair(k = 2p,
 * k = 2p + 1 of row i), two pairs (four k, 16 words) a step while all four
 * k are below kc; returns the pairs done. sums (NULL, or the 8 rows'
 * running sums) gets each float added, k in increasing order. */
__attribute__((target("avx512f,avx512bw,avx512bf16")))
static inline int bf16_panel_pairs_hw(uint32_t *restrict words, const float *src, long ld, int kc, float *sums) {
    int p = 0;
    __m256 sum = sums ? _mm256_loadu_ps(sums) : _mm256_setzero_ps();
    for (; 2 * p + 4 <= kc; p += 2) {
        const float *k0 = src + 2L * p * ld;   /* k = 2p, 2p+1, 2p+2, 2p+3 at k0, + ld, + 2 ld, + 3 ld */
        __m256 r0 = _mm256_loadu_ps(k0), r1 = _mm256_loadu_ps(k0 + ld);
        __m256 r2 = _mm256_loadu_ps(k0 + 2 * ld), r3 = _mm256_loadu_ps(k0 + 3 * ld);
        __m512 f = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(r0)),
                                                       _mm256_castps_pd(r2), 1));
        __m512 s = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(r1)),
                                                       _mm256_castps_pd(r3), 1));
        _mm512_storeu_si512(words + p * BF_MR, bf16_pairs_of(f, s));
        if (sums) sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(_mm256_add_ps(sum, r0), r1), r2), r3);
    }
    if (sums) _mm256_storeu_ps(sums, sum);
    return p;
}
#endif

/* words[p] = the pair (src[2p], src[2p+1]) for the kc contiguous values
 * of a row, the last one with pad when kc is odd (a loop that vectorizes,
 * or vcvtne2ps2bf16 in the mode that runs on it). */
static inline __attribute__((always_inline)) void bf16_row_pairs(uint32_t *restrict words,
                                                                  const float *restrict src, int kc, float pad,
                                                                  MatMode mode) {
    int full = kc / 2, p = 0;
#if BF16_HW_COMPILED
    if (mm_converts_on_hw(mode)) bf16_row_pairs_hw(words, src, full), p = full;
#endif
    (void)mode;
    for (; p < full; p++) words[p] = bf16_pair(src[2 * p], src[2 * p + 1]);
    if (kc % 2) words[full] = bf16_pair(src[kc - 1], pad);
}

/* words[j] = the pair (first[j], second[j]) for j < n. */
static inline __attribute__((always_inline)) void bf16_two_rows(uint32_t *restrict words, const float *first,
                                                                 const float *second, int n, MatMode mode) {
#if BF16_HW_COMPILED
    if (mm_converts_on_hw(mode)) {
        bf16_two_rows_hw(words, first, second, n);
        return;
    }
#endif
    (void)mode;
    for (int j = 0; j < n; j++) words[j] = bf16_pair(first[j], second[j]);
}

/* A's rows [row0, row0+rows) x k in [k0, k0+kc) packed as pair words,
 * word (i, p) at a_words[i * a_rs + p * a_ps] (rows past the matrix edge
 * zero): row by row (a_ps 1) when A's rows are contiguous along k, else
 * as panel[p][BF_MR] (a_rs 1), BF_MR rows side by side. sums (NULL, or
 * the rows' running sums, continued over successive k blocks) gets each
 * float of row i added to sums[i] as it is read, k in increasing order:
 * the sums of A's rows in the order of a plain loop, for a caller that
 * also needs them (a weight gradient's bias gradient). */
static inline __attribute__((always_inline)) void mm_pack_a_bf16_body(uint32_t *restrict words, long *a_rs,
                                                                       long *a_ps, MatView a, long row0, int rows,
                                                                       long k0, int kc, float *sums, MatMode mode) {
    int kp = (kc + 1) / 2;
    if (rows < BF_MR) memset(words, 0, sizeof(uint32_t) * BF_MR * (size_t)kp);
    if (a.col_stride == 1) {
        *a_rs = kp, *a_ps = 1;
        for (int i = 0; i < rows; i++) {
            const float *row = a.data + (row0 + i) * a.row_stride + k0;
            bf16_row_pairs(words + (long)i * kp, row, kc, -0.0f, mode);
            if (sums)
                for (int k = 0; k < kc; k++) sums[i] += row[k];
        }
        return;
    }
    *a_rs = 1, *a_ps = BF_MR;
    int p = 0;
#if BF16_HW_COMPILED
    if (mm_converts_on_hw(mode) && a.row_stride == 1 && rows == BF_MR)
        p = bf16_panel_pairs_hw(words, a.data + row0 + k0 * a.col_stride, a.col_stride, kc, sums);
#endif
    for (; p < kp; p++) {
        const float *first = a.data + row0 * a.row_stride + (k0 + 2 * p) * a.col_stride;
        const float *second = 2 * p + 1 < kc ? first + a.col_stride : NULL;
        uint32_t *dst = words + (long)p * BF_MR;
        if (a.row_stride == 1 && second) {   /* rows contiguous: BF_MR of them at once */
            bf16_two_rows(dst, first, second, rows, mode);
        } else {
            for (int i = 0; i < rows; i++)
                dst[i] = bf16_pair(first[i * a.row_stride], second ? second[i * a.row_stride] : -0.0f);
        }
        if (sums)
            for (int i = 0; i < rows; i++) {
                sums[i] += first[i * a.row_stride];
                if (second) sums[i] += second[i * a.row_stride];
            }
    }
}

/* B's k in [k0, k0+kc) x columns [col0, col0+cols) as panels of BF_NR
 * columns, panel q at block + q * kp * BF_NR, each [p][BF_NR] words;
 * columns past the edge zero. Walked along B's unit stride. */
static inline __attribute__((always_inline)) void mm_pack_b_bf16_body(uint32_t *restrict block, MatView b,
                                                                       long k0, int kc, long col0, int cols,
                                                                       MatMode mode) {
    int kp = (kc + 1) / 2;
    for (int jp = 0; jp < cols; jp += BF_NR) {
        uint32_t *panel = block + (long)jp * kp;
        int width = cols - jp < BF_NR ? cols - jp : BF_NR;
#if BF16_HW_COMPILED
        if (b.row_stride == 1 && mm_converts_on_hw(mode)) {   /* 16 columns at once, turned in registers, zeros past width */
            for (int h = 0; h < BF_NR; h += 16) {
                int w = width - h < 0 ? 0 : width - h < 16 ? width - h : 16;
                bf16_columns_hw(panel + h, w ? b.data + k0 + (col0 + jp + h) * b.col_stride : NULL, b.col_stride, w,
                                kc);
            }
            continue;
        }
#endif
        if (width < BF_NR)
            for (int p = 0; p < kp; p++)
                for (int j = width; j < BF_NR; j++) panel[p * BF_NR + j] = 0;
        if (b.row_stride == 1) {   /* columns contiguous along k: a column's pairs, then spread */
            uint32_t column[(MM_KC_MAX + 1) / 2];
            for (int j = 0; j < width; j++) {
                const float *src = b.data + k0 + (col0 + jp + j) * b.col_stride;
                for (int p0 = 0; p0 < kp; p0 += (MM_KC_MAX + 1) / 2) {   /* kc may exceed MM_KC_MAX here */
                    int n = kp - p0 < (MM_KC_MAX + 1) / 2 ? kp - p0 : (MM_KC_MAX + 1) / 2;
                    int values = kc - 2 * p0 < 2 * n ? kc - 2 * p0 : 2 * n;
                    bf16_row_pairs(column, src + 2L * p0, values, 0.0f, mode);
                    for (int p = 0; p < n; p++) panel[(long)(p0 + p) * BF_NR + j] = column[p];
                }
            }
        } else {
            for (int p = 0; p < kp; p++) {
                const float *first = b.data + (k0 + 2 * p) * b.row_stride + (col0 + jp) * b.col_stride;
                const float *second = 2 * p + 1 < kc ? first + b.row_stride : NULL;
                uint32_t *dst = panel + (long)p * BF_NR;
                if (b.col_stride == 1 && second) {
                    bf16_two_rows(dst, first, second, width, mode);
                } else {
                    for (int j = 0; j < width; j++)
                        dst[j] = bf16_pair(first[j * b.col_stride], second ? second[j * b.col_stride] : 0.0f);
                }
            }
        }
    }
}

/* The two packings compiled twice: once for the emulated mode, once with
 * vcvtne2ps2bf16 allowed, so its conversions inline into the loops instead
 * of a call per row or pair of rows. */
#if BF16_HW_COMPILED
__attribute__((target("avx512f,avx512bw,avx512bf16")))
static void mm_pack_a_bf16_hw(uint32_t *restrict words, long *a_rs, long *a_ps, MatView a, long row0, int rows,
                              long k0, int kc, float *sums) {
    mm_pack_a_bf16_body(words, a_rs, a_ps, a, row0, rows, k0, kc, sums, MM_BF16_HW);
}

__attribute__((target("avx512f,avx512bw,avx512bf16")))
static void mm_pack_b_bf16_hw(uint32_t *restrict block, MatView b, long k0, int kc, long col0, int cols) {
    mm_pack_b_bf16_body(block, b, k0, kc, col0, cols, MM_BF16_HW);
}
#endif

static void mm_pack_a_bf16(uint32_t *restrict words, long *a_rs, long *a_ps, MatView a, long row0, int rows,
                           long k0, int kc, float *sums, MatMode mode) {
#if BF16_HW_COMPILED
    if (mm_converts_on_hw(mode)) {
        mm_pack_a_bf16_hw(words, a_rs, a_ps, a, row0, rows, k0, kc, sums);
        return;
    }
#endif
    (void)mode;
    mm_pack_a_bf16_body(words, a_rs, a_ps, a, row0, rows, k0, kc, sums, MM_BF16_EMULATED);
}

static void mm_pack_b_bf16(uint32_t *restrict block, MatView b, long k0, int kc, long col0, int cols,
                           MatMode mode) {
#if BF16_HW_COMPILED
    if (mm_converts_on_hw(mode)) {
        mm_pack_b_bf16_hw(block, b, k0, kc, col0, cols);
        return;
    }
#endif
    (void)mode;
    mm_pack_b_bf16_body(block, b, k0, kc, col0, cols, MM_BF16_EMULATED);
}

#endif
#endif
