/* matmul.h: the matrix product behind the linear layers, cache-blocked and
 * register-tiled: plain C that the compiler vectorizes in float32, the
 * vdpbf16ps intrinsics in bfloat16 (emulated in plain C without them).
 *
 * layers.c and attention.c include this file (and tests/test_matmul.c), and
 * its functions are static: tests/test_f64_grad.c (the gradient test) and
 * model/f64.c (trace --backward's check) compile them with `float` defined
 * as `double`, so the kernels must live in the same translation unit to
 * follow it.
 *
 * Determinism: every output element is one chain of multiply-adds over k in
 * increasing order, started from its initial value (0, the bias, or what the
 * output held). Blocking, tiling and the split of output tiles between
 * threads change which thread does the chain and when, never the chain, so
 * results are identical for any thread count and any matrix size. No
 * reduction is ever split between threads. */
#ifndef MATMUL_H
#define MATMUL_H

#include <math.h>
#include <string.h>

#include "nn/dropout.h"
#include "nn/matview.h"
#include "nn/precision.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* Register tile: MM_MR rows x MM_NR columns of the output are held in
 * vector registers while k runs. Sized to the vector register file. */
#if defined(__AVX512F__)
#define MM_MR 8
#define MM_NR 32
#elif defined(__AVX__)
#define MM_MR 6
#define MM_NR 16
#else
#define MM_MR 4
#define MM_NR 8
#endif

/* One multiply-add, fused where the target has the instruction (a fixed,
 * compile-time choice, so results still never depend on the thread count).
 * _Generic picks fma for the double build of the gradient test. */
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
#define MM_FMA(a, b, c) _Generic((a), double: fma, default: fmaf)((a), (b), (c))
#else
#define MM_FMA(a, b, c) ((a) * (b) + (c))
#endif

/* How an output starts before the products are added: 0, bias[j], C's own
 * value, or (MM_START) start[i][j] of a matrix with C's row stride, passed
 * where the bias goes (C = start + A B without copying start into C first:
 * the same numbers). */
typedef enum { MM_ZERO, MM_BIAS, MM_ACCUMULATE, MM_START } MatInit;

/* What else is made of each finished output v = C[i][j] while its tile is
 * still in registers, saving a pass over C: relu[i][j] = max(v, 0)
 * (relu_forward's rule), and sum[i][j] = add[i][j] + v (an elementwise add,
 * so the result is that of the separate pass). Each pointer is NULL or has
 * C's row stride. With in_place set, the one that is not NULL of relu and
 * sum is C itself: C keeps max(v, 0) or add + v instead of v, for callers
 * that need no v, saving the store of a second matrix. With drop set, the
 * value relu and sum take (max(v, 0), or v) is first multiplied by its
 * dropout factor, as dropout_apply and dropout_add do in a pass of their
 * own: C's row r is position r % drop_T of example r / drop_T, and C's
 * row stride is the dropout's width. With gate set (and in_place; relu,
 * sum and drop NULL), C keeps gate[i][j] > 0 ? v * gate_scale : 0 (gate not
 * C itself: a tile may hold its product before the gate is read): a gradient back
 * through a relu and its dropout, whose output was gate (C's row stride),
 * the kept elements scaled by the dropout's 1/(1-p). test and keep are
 * drop's test and keep scale, which matmul_run draws once per product
 * (callers leave them 0: every epilogue reaches the tiles through it). */
typedef struct {
    float *relu;
    const float *add;
    float *sum;
    int in_place;
    const DropoutKey *drop;
    int drop_T;
    const float *gate;
    float gate_scale;
    DropoutTest test;   /* dropout_test(drop), set by matmul_run */
    float keep;         /* dropout_keep_scale(drop), set by matmul_run */
} MatEpilogue;

/* Applies the epilogue ep to the finished outputs v (rows x cols, row
 * stride ldv) of the block of C that starts at row `row`, column `col` and
 * at c (stride ldc): v is the kernel's accumulators, or C itself when the
 * block was stored first (float32 edge tiles, every bfloat16 full tile,
 * K = 0). In place, C is written through c, so that no other pointer
 * writes the block. The block's place is passed, not a moved copy of ep:
 * a copy per tile cost a store-forwarding stall per tile. */
static inline void mm_epilogue_apply(const MatEpilogue *ep, long row, long col, const float *v, long ldv, float *c,
                                     long ldc, int rows, int cols) {
    enum { MAX_COLS = MM_NC > 32 ? MM_NC : 32 };   /* a block is at most MM_NC (float32) or BF_NR (bf16) wide */
    float factor[MAX_COLS];
    long off = row * ldc + col;
    for (int i = 0; i < rows; i++) {
        const float *vi = v + i * ldv;
        if (ep->gate) {   /* in place: the gradient through a relu and its dropout */
            const float *gate = ep->gate + off + i * ldc;
            float *out = c + i * ldc;
            float scale = ep->gate_scale;   /* a local: no store through out can change it */
            #pragma omp simd
            for (int j = 0; j < cols; j++) {
                float kept = vi[j] * scale;
                out[j] = gate[j] > 0.0f ? kept : 0.0f;
            }
            continue;
        }
        float *relu = ep->relu ? (ep->in_place ? c + i * ldc : ep->relu + off + i * ldc) : NULL;
        float *sum = ep->sum ? (ep->in_place ? c + i * ldc : ep->sum + off + i * ldc) : NULL;
        const float *add = ep->sum ? ep->add + off + i * ldc : NULL;
        if (ep->drop) {   /* dropout_rows' draw of this row's elements */
            long n = row + i;
            uint64_t first = dropout_index(ep->drop, (int)(n / ep->drop_T), (int)(n % ep->drop_T), (int)ldc, 0);
            DropoutTest test = ep->test;
            float keep = ep->keep;
            #pragma omp simd
            for (int j = 0; j < cols; j++) factor[j] = dropout_factor(&test, keep, first + (uint64_t)(col + j));
            if (relu)
                #pragma omp simd
                for (int j = 0; j < cols; j++) relu[j] = (vi[j] > 0.0f ? vi[j] : 0.0f) * factor[j];
            if (sum)
                #pragma omp simd
                for (int j = 0; j < cols; j++) {
                    float dropped = vi[j] * factor[j];
                    sum[j] = add[j] + dropped;
                }
            continue;
        }
        if (relu)
            #pragma omp simd
            for (int j = 0; j < cols; j++) relu[j] = vi[j] > 0.0f ? vi[j] : 0.0f;
        if (sum)
            #pragma omp simd
            for (int j = 0; j < cols; j++) sum[j] = add[j] + vi[j];
    }
}

/* The register-tiled kernel, for one full MR x NR tile of C (row stride ldc):
 *   c[i][j] = start + sum over k < kc of a(i,k) * b_panel[k][j], kc >= 1,
 * where a(i,k) = a[i * a_rs + k * a_ks] is read in place (no packing needed
 * when either stride is 1) and start is C's own value (load_c), start[i][j]
 * (row stride ldc), bias[j], or 0; then the epilogue ep (NULL: none) of
 * the tile at row ep_row, column ep_col of the product's C.
 * The accumulators live in a local array that the compiler keeps in vector
 * registers; each one is a single multiply-add chain over k. */
static inline void mm_kernel(int kc, const float *restrict a, long a_rs, long a_ks,
                             const float *restrict b_panel, float *restrict c, long ldc,
                             const float *restrict bias, int load_c, const float *restrict start,
                             const MatEpilogue *ep, long ep_row, long ep_col) {
    float acc[MM_MR][MM_NR];
    /* k = 0 adds its product to each output's start (chosen once per tile),
     * the registers filled by the multiply-add itself: a plain copy into
     * them first became a memcpy whose narrower stores the wider loads
     * stalled on */
    const float *from = load_c ? c : start;
    for (int i = 0; i < MM_MR; i++) {
        float a_i0 = a[i * a_rs];
        if (from) {
            #pragma omp simd
            for (int j = 0; j < MM_NR; j++) acc[i][j] = MM_FMA(a_i0, b_panel[j], from[i * ldc + j]);
        } else {
            #pragma omp simd
            for (int j = 0; j < MM_NR; j++) acc[i][j] = MM_FMA(a_i0, b_panel[j], bias ? bias[j] : 0.0f);
        }
    }
    for (int k = 1; k < kc; k++) {
        const float *b = b_panel + (long)k * MM_NR;
        for (int i = 0; i < MM_MR; i++) {
            float a_ik = a[i * a_rs + k * a_ks];
            #pragma omp simd
            for (int j = 0; j < MM_NR; j++) acc[i][j] = MM_FMA(a_ik, b[j], acc[i][j]);
        }
    }
    if (!ep || !ep->in_place)
        for (int i = 0; i < MM_MR; i++)
            for (int j = 0; j < MM_NR; j++) c[i * ldc + j] = acc[i][j];
    if (ep) mm_epilogue_apply(ep, ep_row, ep_col, &acc[0][0], MM_NR, c, ldc, MM_MR, MM_NR);   /* from the registers */
}

/* Packs rows [row0, row0+rows) x k in [k0, k0+kc) of A as panel[k][MR],
 * zero-filling rows past the matrix edge. */
static void mm_pack_a(float *restrict panel, MatView a, long row0, int rows, long k0, int kc) {
    if (rows < MM_MR) memset(panel, 0, sizeof(float) * MM_MR * (size_t)kc);
    for (int k = 0; k < kc; k++) {
        float *dst = panel + (long)k * MM_MR;
        for (int i = 0; i < rows; i++) dst[i] = mat_at(a, row0 + i, k0 + k);
    }
}

/* One NR-wide panel of a transposed B (its columns contiguous along k).
 * A full panel is written a panel row at a time (NR floats gathered a
 * column stride apart); a narrower one is copied in runs of 16 k per
 * column, so that both the reads (16 floats of one column) and the writes
 * (16 panel rows) stay within a few cache lines, and columns past width are
 * zero. */
static void mm_pack_b_transposed(float *restrict panel, MatView b, long k0, int kc, long col0, int width) {
    enum { RUN = 16 };
    int k = 0;
    if (width == MM_NR && b.row_stride == 1) {
        /* a full panel of columns that are contiguous along k: each panel row
         * is a gather of NR floats a column stride apart */
        for (; k + RUN <= kc; k += RUN)
            for (int r = 0; r < RUN; r++) {
                const float *src = b.data + (k0 + k + r) + col0 * b.col_stride;
                float *dst = panel + (long)(k + r) * MM_NR;
                #pragma omp simd
                for (int j = 0; j < MM_NR; j++) dst[j] = src[j * b.col_stride];
            }
    }
    for (; k + RUN <= kc; k += RUN) {
        for (int j = 0; j < MM_NR; j++) {
            float *dst = panel + (long)k * MM_NR + j;
            if (j >= width) {
                for (int r = 0; r < RUN; r++) dst[r * MM_NR] = 0.0f;
                continue;
            }
            const float *src = b.data + (k0 + k) * b.row_stride + (col0 + j) * b.col_stride;
            for (int r = 0; r < RUN; r++) dst[r * MM_NR] = src[r * b.row_stride];
        }
    }
    for (; k < kc; k++)
        for (int j = 0; j < MM_NR; j++)
            panel[(long)k * MM_NR + j] = j < width ? mat_at(b, k0 + k, col0 + j) : 0.0f;
}

/* Packs k in [k0, k0+kc) x columns [col0, col0+cols) of B as panels of NR
 * columns, each panel[k][NR], zero-filling columns past the matrix edge. */
static void mm_pack_b(float *restrict block, MatView b, long k0, int kc, long col0, int cols) {
    for (int jp = 0; jp < cols; jp += MM_NR) {
        float *panel = block + (long)jp * kc;
        int width = cols - jp < MM_NR ? cols - jp : MM_NR;
        if (b.col_stride == 1) {
            for (int k = 0; k < kc; k++) {
                const float *src = b.data + (k0 + k) * b.row_stride + col0 + jp;
                float *dst = panel + (long)k * MM_NR;
                if (width == MM_NR) {
                    memcpy(dst, src, sizeof(float) * MM_NR);
                } else {
                    for (int j = 0; j < MM_NR; j++) dst[j] = j < width ? src[j] : 0.0f;
                }
            }
        } else {
            mm_pack_b_transposed(panel, b, k0, kc, col0 + jp, width);
        }
    }
}

/* A tile at the matrix edge (fewer than MR rows or NR columns): the kernel
 * runs on a zero-padded copy and the valid part is copied back. */
static void mm_edge_tile(float *c, long ldc, int rows, int cols, const float *bias, int load_c,
                         const float *start, MatView a, long row0, long k0, int kc, const float *b_panel) {
    float a_panel[MM_KC_MAX * MM_MR];
    float tile[MM_MR * MM_NR];
    mm_pack_a(a_panel, a, row0, rows, k0, kc);
    /* zeros, then each valid row from where the outputs start (copies of
     * runs: the choice made once per row, not per element) */
    memset(tile, 0, sizeof tile);
    const float *from = load_c ? c : start ? start : bias;
    long from_stride = load_c || start ? ldc : 0;
    if (from)
        for (int i = 0; i < rows; i++) memcpy(tile + i * MM_NR, from + i * from_stride, sizeof(float) * (size_t)cols);
    mm_kernel(kc, a_panel, 1, MM_MR, b_panel, tile, MM_NR, NULL, 1, NULL, NULL, 0, 0);
    for (int i = 0; i < rows; i++) memcpy(c + i * ldc, tile + i * MM_NR, sizeof(float) * (size_t)cols);
}

/* A task's outputs when K is 0: their starting values, then the epilogue. */
static void mm_task_empty(float *c, long ldc, const float *bias, MatInit init, long m0, int mc, long n0, int nc,
                          const MatEpilogue *ep) {
    if (init != MM_ACCUMULATE) {
        for (int i = 0; i < mc; i++)
            for (int j = 0; j < nc; j++) {
                long at = (m0 + i) * ldc + n0 + j;
                c[at] = init == MM_BIAS ? bias[n0 + j] : init == MM_START ? bias[at] : 0.0f;
            }
    }
    if (ep) mm_epilogue_apply(ep, m0, n0, c + m0 * ldc + n0, ldc, c + m0 * ldc + n0, ldc, mc, nc);
}

/* One task: output rows [m0, m0+mc) x columns [n0, n0+nc), all of k. */
static void mm_task(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init,
                    long m0, int mc, long n0, int nc, long K, const MatEpilogue *ep) {
    /* A is read in place when one of its strides is 1, otherwise packed per
     * panel. B is always packed: read in place, its rows (a power-of-two
     * stride apart, often) fight over the same L1 sets and the product
     * measured 5-25% slower. */
    int a_in_place = a.col_stride == 1 || a.row_stride == 1;
    float a_panel[MM_KC_MAX * MM_MR];
    float b_block[MM_KC_MAX * MM_NC];
    long k_block = K <= MM_KC_MAX ? K : MM_KC;
    for (long k0 = 0; k0 < K; k0 += k_block) {
        int kc = (int)(K - k0 < k_block ? K - k0 : k_block);
        int load_c = k0 > 0 || init == MM_ACCUMULATE;
        mm_pack_b(b_block, b, k0, kc, n0, nc);
        for (int i0 = 0; i0 < mc; i0 += MM_MR) {
            int rows = mc - i0 < MM_MR ? mc - i0 : MM_MR;
            long row = m0 + i0;
            const float *a_ptr = a.data + row * a.row_stride + k0 * a.col_stride;
            long a_rs = a.row_stride, a_ks = a.col_stride;
            if (rows == MM_MR && !a_in_place) {
                mm_pack_a(a_panel, a, row, rows, k0, kc);
                a_ptr = a_panel;
                a_rs = 1;
                a_ks = MM_MR;
            }
            for (int j0 = 0; j0 < nc; j0 += MM_NR) {
                int cols = nc - j0 < MM_NR ? nc - j0 : MM_NR;
                float *c_tile = c + row * ldc + n0 + j0;
                const float *b_panel = b_block + (long)j0 * kc;
                const float *tile_bias = init == MM_BIAS ? bias + n0 + j0 : NULL;
                const float *tile_start = init == MM_START && !load_c ? bias + row * ldc + n0 + j0 : NULL;
                int last = ep && k0 + kc == K;   /* the outputs are finished in this k block */
                if (rows == MM_MR && cols == MM_NR) {
                    mm_kernel(kc, a_ptr, a_rs, a_ks, b_panel, c_tile, ldc, tile_bias, load_c, tile_start,
                              last ? ep : NULL, row, n0 + j0);
                } else {
                    mm_edge_tile(c_tile, ldc, rows, cols, tile_bias, load_c, tile_start, a, row, k0, kc, b_panel);
                    if (last) mm_epilogue_apply(ep, row, n0 + j0, c_tile, ldc, c_tile, ldc, rows, cols);
                }
            }
        }
    }
    if (K == 0) mm_task_empty(c, ldc, bias, init, m0, mc, n0, nc, ep);
}

/* ------------------------------------------------ bfloat16 products
 * --precision bf16 (docs/DESIGN.md §4): each input rounded to bfloat16
 * (bf16_round), each product exact, each sum rounded to float32, in the
 * order of the float32 path: one chain over k in increasing order per
 * output, whatever the threads. vdpbf16ps does the multiply-adds of a pair
 * of k at once; where the CPU lacks it, bf16_kernel_emulated does the same
 * operations in plain float arithmetic, the same bytes. The double build of
 * the gradient test (float defined as double) has no bfloat16 path. */
#if !defined(float)

#include <float.h>
#include <stdlib.h>

#include "nn/bf16_pack.h"

/* vdpbf16ps's rules in float arithmetic: a subnormal accumulator is read as
 * a zero of its sign, a subnormal sum is written as one. */
static inline float bf16_flush(float x) { return fabsf(x) < FLT_MIN ? copysignf(0.0f, x) : x; }

/* Starting value (i, j) of a tile: from's row i (row stride from_ld; 0:
 * one row, a bias, for every i), or 0 when from is NULL. */
static inline float bf16_start(const float *from, long from_ld, int i, int j) {
    return from ? from[i * from_ld + j] : 0.0f;
}

/* out (BF_MR x BF_NR, row stride out_ld) = the starting values (bf16_start)
 * + the kp word pairs of the A panel times the B panel, each pair as
 * vdpbf16ps adds it: the high halves' product, then the low halves', each
 * sum rounded to float (fmaf: the product of two bfloat16 is exact) and
 * flushed. from may be out itself (a chain continued in place). */
static void bf16_kernel_emulated(int kp, const uint32_t *restrict a, long a_rs, long a_ps, const uint32_t *restrict b,
                                 const float *from, long from_ld, float *out, long out_ld) {
    for (int i = 0; i < BF_MR; i++) {
        float acc[BF_NR];
        for (int j = 0; j < BF_NR; j++) acc[j] = bf16_flush(bf16_start(from, from_ld, i, j));
        for (int p = 0; p < kp; p++) {
            uint32_t w = a[i * a_rs + p * a_ps];
            float a_hi = bf16_value((uint16_t)(w >> 16)), a_lo = bf16_value((uint16_t)w);
            const uint32_t *bp = b + p * BF_NR;
            for (int j = 0; j < BF_NR; j++) {
                acc[j] = bf16_flush(fmaf(a_hi, bf16_value((uint16_t)(bp[j] >> 16)), acc[j]));
                acc[j] = bf16_flush(fmaf(a_lo, bf16_value((uint16_t)bp[j]), acc[j]));
            }
        }
        for (int j = 0; j < BF_NR; j++) out[i * out_ld + j] = acc[j];
    }
}

#if BF16_HW_COMPILED
/* The same on vdpbf16ps: 16 accumulators in registers, one word of A
 * broadcast per row, two vectors of B per pair of k. */
__attribute__((target("avx512f,avx512bf16")))
static void bf16_kernel_hw(int kp, const uint32_t *restrict a, long a_rs, long a_ps, const uint32_t *restrict b,
                           const float *from, long from_ld, float *out, long out_ld) {
    __m512 acc[BF_MR][2];
    for (int i = 0; i < BF_MR; i++) {
        acc[i][0] = from ? _mm512_loadu_ps(from + i * from_ld) : _mm512_setzero_ps();
        acc[i][1] = from ? _mm512_loadu_ps(from + i * from_ld + 16) : _mm512_setzero_ps();
    }
    for (int p = 0; p < kp; p++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + p * BF_NR);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + p * BF_NR + 16);
        for (int i = 0; i < BF_MR; i++) {
            __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[i * a_rs + p * a_ps]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
    }
    for (int i = 0; i < BF_MR; i++) {
        _mm512_storeu_ps(out + i * out_ld, acc[i][0]);
        _mm512_storeu_ps(out + i * out_ld + 16, acc[i][1]);
    }
}
#endif

/* --precision amx: the same inputs, summed as AMX's tile product
 * (tdpbf16ps) sums them, which tests/test_matmul.c checks on the hardware:
 * k in chunks of 16 words (32 k) from the kernel's first word (a block's
 * start, a multiple of 32); within a chunk the high halves' products (even
 * k) in one chain and the low halves' (odd k) in another, from 0, each sum
 * rounded to float and flushed; then the output += the two chains' sum,
 * that sum and the output's each rounded and flushed. */
#define AMX_WORDS 16
_Static_assert(MM_KC % (2 * AMX_WORDS) == 0, "a k block starts at a whole chunk of 32 k");

static void amx_kernel_emulated(int kp, const uint32_t *restrict a, long a_rs, long a_ps, const uint32_t *restrict b,
                                const float *from, long from_ld, float *out, long out_ld) {
    for (int i = 0; i < BF_MR; i++) {
        float acc[BF_NR];
        for (int j = 0; j < BF_NR; j++) acc[j] = bf16_flush(bf16_start(from, from_ld, i, j));
        for (int p0 = 0; p0 < kp; p0 += AMX_WORDS) {
            int end = kp - p0 < AMX_WORDS ? kp : p0 + AMX_WORDS;
            float even[BF_NR] = {0}, odd[BF_NR] = {0};
            for (int p = p0; p < end; p++) {
                uint32_t w = a[i * a_rs + p * a_ps];
                float a_hi = bf16_value((uint16_t)(w >> 16)), a_lo = bf16_value((uint16_t)w);
                const uint32_t *bp = b + p * BF_NR;
                for (int j = 0; j < BF_NR; j++) {
                    even[j] = bf16_flush(fmaf(a_hi, bf16_value((uint16_t)(bp[j] >> 16)), even[j]));
                    odd[j] = bf16_flush(fmaf(a_lo, bf16_value((uint16_t)bp[j]), odd[j]));
                }
            }
            for (int j = 0; j < BF_NR; j++) acc[j] = bf16_flush(acc[j] + bf16_flush(even[j] + odd[j]));
        }
        for (int j = 0; j < BF_NR; j++) out[i * out_ld + j] = acc[j];
    }
}

#if AMX_COMPILED
/* The tiles: 0 and 1 the outputs' two halves of 16 columns (BF_MR rows),
 * 2 a chunk of A (BF_MR rows of 16 words), 3 and 4 the chunk of B for each
 * half (16 words x 16 columns). Tile shapes are a thread's state: each
 * block of products sets them (mm_bf16_block). */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} AmxConfig;

__attribute__((target("amx-tile")))
static void amx_configure(void) {
    AmxConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 5; t++) cfg.colsb[t] = 64, cfg.rows[t] = t < 3 ? BF_MR : AMX_WORDS;
    _tile_loadconfig(&cfg);
}

/* amx_kernel_emulated on the tiles. A chunk of fewer than 16 words, or of
 * an A in panels, is copied first; the copy's missing words are -0 (A)
 * times +0 (B), products that leave a chain as it was, as the emulation's
 * shorter loop does. */
__attribute__((target("amx-tile,amx-bf16")))
static void amx_kernel_hw(int kp, const uint32_t *restrict a, long a_rs, long a_ps, const uint32_t *restrict b,
                          const float *from, long from_ld, float *out, long out_ld) {
    uint32_t a_chunk[BF_MR * AMX_WORDS], b_chunk[AMX_WORDS * BF_NR];
    if (from) {
        _tile_loadd(0, from, from_ld * (long)sizeof(float));
        _tile_loadd(1, from + 16, from_ld * (long)sizeof(float));
    } else {
        _tile_zero(0);
        _tile_zero(1);
    }
    for (int p0 = 0; p0 < kp; p0 += AMX_WORDS) {
        int words = kp - p0 < AMX_WORDS ? kp - p0 : AMX_WORDS;
        const uint32_t *a_src = a + (long)p0 * a_ps, *b_src = b + (long)p0 * BF_NR;
        long a_stride = a_rs;
        if (words < AMX_WORDS || a_ps != 1) {
            for (int i = 0; i < BF_MR; i++)
                for (int p = 0; p < AMX_WORDS; p++)
                    a_chunk[i * AMX_WORDS + p] = p < words ? a[i * a_rs + (long)(p0 + p) * a_ps] : 0x80008000u;
            a_src = a_chunk, a_stride = AMX_WORDS;
        }
        if (words < AMX_WORDS) {
            memcpy(b_chunk, b_src, sizeof(uint32_t) * (size_t)(words * BF_NR));
            memset(b_chunk + words * BF_NR, 0, sizeof(uint32_t) * (size_t)((AMX_WORDS - words) * BF_NR));
            b_src = b_chunk;
        }
        _tile_loadd(2, a_src, a_stride * (long)sizeof(uint32_t));
        _tile_loadd(3, b_src, BF_NR * (long)sizeof(uint32_t));
        _tile_loadd(4, b_src + 16, BF_NR * (long)sizeof(uint32_t));
        _tile_dpbf16ps(0, 2, 3);
        _tile_dpbf16ps(1, 2, 4);
    }
    _tile_stored(0, out, out_ld * (long)sizeof(float));
    _tile_stored(1, out + 16, out_ld * (long)sizeof(float));
}
#endif

static void bf16_kernel(MatMode mode, int kp, const uint32_t *a, long a_rs, long a_ps, const uint32_t *b,
                        const float *from, long from_ld, float *out, long out_ld) {
#if AMX_COMPILED
    if (mode == MM_AMX_HW) {
        amx_kernel_hw(kp, a, a_rs, a_ps, b, from, from_ld, out, out_ld);
        return;
    }
#endif
#if BF16_HW_COMPILED
    if (mode == MM_BF16_HW) {
        bf16_kernel_hw(kp, a, a_rs, a_ps, b, from, from_ld, out, out_ld);
        return;
    }
#endif
    if (mode == MM_AMX_EMULATED || mode == MM_AMX_HW)
        amx_kernel_emulated(kp, a, a_rs, a_ps, b, from, from_ld, out, out_ld);
    else
        bf16_kernel_emulated(kp, a, a_rs, a_ps, b, from, from_ld, out, out_ld);
}

/* All whole panels of BF_MR rows of A (M x K), packed by mm_pack_a_bf16
 * once for a product whose column blocks would each pack them again: panel
 * q at words + q * BF_MR * kp (kp = (K + 1) / 2), in mm_pack_a_bf16's layout
 * for A's strides, and their rows' sums added to sums (NULL: none). A last
 * partial panel is left to its task. */
static void mm_words_a_bf16(uint32_t *words, MatView a, long M, long K, float *sums, MatMode mode) {
    long kp = (K + 1) / 2, panels = M / BF_MR;
    #pragma omp parallel for schedule(static) if (M * K > 65536)
    for (long q = 0; q < panels; q++) {
        long rs, ps;
        mm_pack_a_bf16(words + q * BF_MR * kp, &rs, &ps, a, q * BF_MR, BF_MR, 0, (int)K,
                       sums ? sums + q * BF_MR : NULL, mode);
    }
}

/* Largest A converted whole by mm_words_a_bf16 (4 MB); beyond it each
 * task packs its panels, so a vocabulary-wide operand costs no copy. */
#define MM_A_WORDS_MAX (1L << 20)

/* Outputs rows [0, M) x columns [0, N) of C (at c, row stride ldc) continue
 * their chains over k in [k0, k0+kc): A's rows [0, M) (the view starts at
 * the block's first row; a_words, when not NULL, its whole panels packed
 * by mm_words_a_bf16 with kp a_ld) times the packed B of those k (panel
 * q at b + q * b_stride words). They start from `from` (row stride from_ld;
 * 0: one row, a bias; NULL: zeros). ep: the epilogue when these k finish
 * the outputs (NULL otherwise), c's first output being its row ep_row,
 * column ep_col.
 * a_sums: NULL, or the running sums of A's rows [0, M), which the panels
 * packed here add to. */
static void mm_bf16_block(float *c, long ldc, const float *from, long from_ld, MatView a, const uint32_t *a_words,
                          long a_ld, long M, int N, long k0, int kc, const uint32_t *b, long b_stride,
                          const MatEpilogue *ep, long ep_row, long ep_col, float *a_sums, MatMode mode) {
    uint32_t a_panel[(MM_KC_MAX + 1) / 2 * BF_MR];
    float v[BF_MR * BF_NR];
    int kp = (kc + 1) / 2;
#if AMX_COMPILED
    if (mode == MM_AMX_HW) amx_configure();
#endif
    for (long i0 = 0; i0 < M; i0 += BF_MR) {
        int rows = (int)(M - i0 < BF_MR ? M - i0 : BF_MR);
        long a_rs = a_ld, a_ps = 1;
        const uint32_t *a_ptr = a_panel;
        if (a_words && rows == BF_MR) {   /* a whole panel read in place, in mm_pack_a_bf16's layout */
            if (a.col_stride == 1) a_ptr = a_words + i0 * a_ld + k0 / 2;
            else a_ptr = a_words + i0 * a_ld + k0 / 2 * BF_MR, a_rs = 1, a_ps = BF_MR;
        } else mm_pack_a_bf16(a_panel, &a_rs, &a_ps, a, i0, rows, k0, kc, a_sums ? a_sums + i0 : NULL, mode);
        for (int j0 = 0; j0 < N; j0 += BF_NR) {
            int cols = N - j0 < BF_NR ? N - j0 : BF_NR;
            const uint32_t *b_panel = b + (j0 / BF_NR) * b_stride;
            const float *tile_from = from ? from + i0 * from_ld + j0 : NULL;
            float *tile = c + i0 * ldc + j0;
            if (rows == BF_MR && cols == BF_NR) {
                /* a full tile: the chains start from C, the bias or 0 and
                 * end in C, with no copy; the epilogue then reads C */
                bf16_kernel(mode, kp, a_ptr, a_rs, a_ps, b_panel, tile_from, from_ld, tile, ldc);
                if (ep) mm_epilogue_apply(ep, ep_row + i0, ep_col + j0, tile, ldc, tile, ldc, rows, cols);
                continue;
            }
            memset(v, 0, sizeof v);
            if (from)
                for (int i = 0; i < rows; i++)
                    memcpy(v + i * BF_NR, tile_from + i * from_ld, sizeof(float) * (size_t)cols);
            bf16_kernel(mode, kp, a_ptr, a_rs, a_ps, b_panel, v, BF_NR, v, BF_NR);
            if (!ep || !ep->in_place)
                for (int i = 0; i < rows; i++) memcpy(tile + i * ldc, v + i * BF_NR, sizeof(float) * (size_t)cols);
            if (ep) mm_epilogue_apply(ep, ep_row + i0, ep_col + j0, v, BF_NR, tile, ldc, rows, cols);
        }
    }
}

/* mm_task in bfloat16: the same task, the same k blocks (of even size, so
 * no pair straddles two), B packed per block. a_sums (NULL, or the sums of
 * A's rows from 0): the task of the first column block adds the rows it
 * packs, the k blocks in order (whole panels taken from a_words were
 * summed as mm_words_a_bf16 packed them). */
static void mm_task_bf16(float *c, long ldc, MatView a, const uint32_t *a_words, MatView b, const float *bias,
                         MatInit init, long m0, int mc, long n0, int nc, long K, const MatEpilogue *ep,
                         float *a_sums, MatMode mode) {
    uint32_t b_block[(MM_KC_MAX + 1) / 2 * MM_NC];
    long k_block = K <= MM_KC_MAX ? K : MM_KC;
    MatView a_rows = {a.data + m0 * a.row_stride, a.row_stride, a.col_stride};
    float *c_blk = c + m0 * ldc + n0;
    for (long k0 = 0; k0 < K; k0 += k_block) {
        int kc = (int)(K - k0 < k_block ? K - k0 : k_block);
        mm_pack_b_bf16(b_block, b, k0, kc, n0, nc, mode);
        const float *from = NULL;
        long from_ld = ldc;
        if (k0 > 0 || init == MM_ACCUMULATE) from = c_blk;
        else if (init == MM_BIAS) from = bias + n0, from_ld = 0;
        else if (init == MM_START) from = bias + m0 * ldc + n0;
        int last = ep && k0 + kc == K;
        long a_ld = (K + 1) / 2;
        mm_bf16_block(c_blk, ldc, from, from_ld, a_rows, a_words ? a_words + m0 * a_ld : NULL, a_ld, mc, nc, k0, kc,
                      b_block, (long)(kc + 1) / 2 * BF_NR, last ? ep : NULL, m0, n0,
                      a_sums && n0 == 0 ? a_sums + m0 : NULL, mode);
    }
    if (K == 0) mm_task_empty(c, ldc, bias, init, m0, mc, n0, nc, ep);
}

#else
typedef enum { MM_F32 = 0 } MatMode;
static inline MatMode mm_mode(int prec) { (void)prec; return MM_F32; }
#endif

/* matmul on the calling thread alone: tests/test_matmul.c's serial oracle of the threaded split. */
static inline void matmul_serial(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init,
                          long M, long N, long K) {
    for (long n0 = 0; n0 < N; n0 += MM_NC) {
        int cols = (int)(N - n0 < MM_NC ? N - n0 : MM_NC);
        for (long m0 = 0; m0 < M; m0 += 256) {
            int rows = (int)(M - m0 < 256 ? M - m0 : 256);
            mm_task(c, ldc, a, b, bias, init, m0, rows, n0, cols, K, NULL);
        }
    }
}

static long gcd_long(long a, long b) {
    while (b != 0) {
        long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/* a_sums[i] = the sum over k of A's row i, from 0, k in increasing order:
 * the order in which the bfloat16 packing adds them (mm_pack_a_bf16).
 * Threads own blocks of rows; where A's rows are its columns in memory
 * (row stride 1: a bias gradient's dY^T), a block's rows are read side by
 * side, k after k. */
static void mm_row_sums(float *a_sums, MatView a, long M, long K) {
    enum { CHUNK = 32 };
    long chunks = (M + CHUNK - 1) / CHUNK;
    #pragma omp parallel for schedule(static) if (chunks > 1 && M * K > 65536)
    for (long ch = 0; ch < chunks; ch++) {
        long i0 = ch * CHUNK;
        int width = (int)(M - i0 < CHUNK ? M - i0 : CHUNK);
        float sum[CHUNK] = {0};
        for (long k = 0; k < K; k++) {
            const float *g = a.data + i0 * a.row_stride + k * a.col_stride;
            if (a.row_stride == 1) {
                #pragma omp simd
                for (int i = 0; i < width; i++) sum[i] += g[i];
            } else {
                for (int i = 0; i < width; i++) sum[i] += g[i * a.row_stride];
            }
        }
        for (int i = 0; i < width; i++) a_sums[i0 + i] = sum[i];
    }
}

/* C (M x N, row stride ldc) = start + A (M x K) * B (K x N), where start is
 * 0, bias[j] (per column) or C's own values, by init; then the epilogue ep
 * (NULL: none). With a_sums (NULL: none), also a_sums[i] = the sum of A's
 * row i (mm_row_sums' numbers): in bfloat16 made as A is packed, in
 * float32 (A read in place) in a pass of their own. Threads split the
 * output into row and column blocks; each block's k loop stays whole. */
static void matmul_run(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init, long M, long N,
                       long K, const MatEpilogue *ep, float *a_sums, MatMode mode) {
    if (M <= 0) return;
    MatEpilogue drawn;   /* ep with its dropout test drawn once for the whole product */
    if (ep && ep->drop) {
        drawn = *ep;
        drawn.test = dropout_test(ep->drop);
        drawn.keep = dropout_keep_scale(ep->drop);
        ep = &drawn;
    }
    /* A's row sums: float32 (or no product) sums A in a pass of its own;
     * bfloat16's packing adds each float to them as it reads it */
    if (a_sums && (mode == MM_F32 || N <= 0)) mm_row_sums(a_sums, a, M, K), a_sums = NULL;
    else if (a_sums) memset(a_sums, 0, sizeof(float) * (size_t)M);
    if (N <= 0) return;
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    /* Tasks are blocks of MM_NC columns times blocks of rows. When B is no
     * larger than A (N <= M: activations times weights), every thread takes
     * one contiguous block of rows, as the elementwise layers before and
     * after split them, so each thread reads rows its own cache holds; the
     * price is that each packs all of B. Otherwise (wide weights, few rows)
     * threads share out column blocks, with just enough row blocks for the
     * task count to be a multiple of the thread count. */
    long nc = MM_NC;
    long col_blocks = (N + nc - 1) / nc;
    long row_blocks = N <= M ? threads : threads / gcd_long(col_blocks, threads);
    long mc = (M + row_blocks - 1) / row_blocks, mr = MM_MR;   /* tasks start at multiples of the tile's rows */
#if !defined(float)
    if (mode != MM_F32) mr = BF_MR;
#endif
    mc = (mc + mr - 1) / mr * mr;
    row_blocks = (M + mc - 1) / mc;
    long tasks = row_blocks * col_blocks;
#if !defined(float)
    uint32_t *a_words = NULL;   /* tasks start at multiples of BF_MR rows, so at whole panels */
    if (mode != MM_F32 && col_blocks > 1 && K > 0 && M * ((K + 1) / 2) <= MM_A_WORDS_MAX &&
        (a_words = malloc(sizeof(uint32_t) * (size_t)(M * ((K + 1) / 2)))))
        mm_words_a_bf16(a_words, a, M, K, a_sums, mode);
#endif
    #pragma omp parallel for schedule(static) if (tasks > 1 && M * N * K > 32768)
    for (long t = 0; t < tasks; t++) {
        long m0 = (t / col_blocks) * mc, n0 = (t % col_blocks) * nc;
        int rows = (int)(M - m0 < mc ? M - m0 : mc);
        int cols = (int)(N - n0 < nc ? N - n0 : nc);
#if !defined(float)
        if (mode != MM_F32) {
            mm_task_bf16(c, ldc, a, a_words, b, bias, init, m0, rows, n0, cols, K, ep, a_sums, mode);
            continue;
        }
#endif
        mm_task(c, ldc, a, b, bias, init, m0, rows, n0, cols, K, ep);
    }
#if !defined(float)
    free(a_words);
#endif
}

/* matmul_run without the row sums. */
static void matmul_mode(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init, long M, long N,
                        long K, const MatEpilogue *ep, MatMode mode) {
    matmul_run(c, ldc, a, b, bias, init, M, N, K, ep, NULL, mode);
}

/* C = A B (from 0) and a_sums[i] = the sum of A's row i (mm_row_sums), in
 * the given precision: a weight gradient dY^T X and its bias gradient. */
static inline void matmul_row_sums(float *c, long ldc, MatView a, MatView b, long M, long N, long K, float *a_sums,
                                   Precision prec) {
    matmul_run(c, ldc, a, b, NULL, MM_ZERO, M, N, K, NULL, a_sums, mm_mode(prec));
}

/* matmul_mode in the given precision (bfloat16 on vdpbf16ps when the CPU
 * has it, else emulated: the same bytes). */
static inline void matmul_epilogue(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init,
                                   long M, long N, long K, const MatEpilogue *ep, Precision prec) {
    matmul_mode(c, ldc, a, b, bias, init, M, N, K, ep, mm_mode(prec));
}

static inline void matmul(float *c, long ldc, MatView a, MatView b, const float *bias, MatInit init,
                          long M, long N, long K, Precision prec) {
    matmul_epilogue(c, ldc, a, b, bias, init, M, N, K, NULL, prec);
}

#endif
