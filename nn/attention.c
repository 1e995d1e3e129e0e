/* attention.c: the fused attention of attention.h. */
#include "nn/attention.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nn/matmul.h"
#include "nn/softmax_exp.h"
#include "base/rng.h"

/* Lanes of a float row sum: lane l takes the elements i with i % ATT_LANES
 * == l, the lanes combined in a fixed order, whatever the thread count. */
enum { ATT_LANES = 8 };

/* Fused, in the manner of flash attention. Each (batch, head) pair is one
 * task: the slices of out and dqkv it writes belong to no other task. Within
 * it the queries go in blocks of rows; for one block, the scores against
 * every key, the softmax, the dropout and the weighted sum of the values are
 * made in a buffer of rows x T floats that stays in cache, and the T x T
 * probabilities of the head are never stored. The backward makes them again,
 * block by block, from q and k, and the dropout factors from their keys.
 *
 * Each element of every product is still one multiply-add chain over the
 * shared index in increasing order (the kernel of matmul.h, continuing the
 * chain where it accumulates: dk and dv over the blocks in order), and each
 * softmax row is computed whole, so the results are those of the unfused
 * products, whatever the thread count and the block size. */

/* Views of head h of sequence b in the packed qkv (B,T,3C): rows are
 * positions, columns the head's dh features; part 0 = q, 1 = k, 2 = v. */
static MatView qkv_head(const float *qkv, int b, int h, int part, int T, int C, int dh) {
    MatView v = {qkv + (long)b * T * 3 * C + (long)part * C + (long)h * dh, 3L * C, 1};
    return v;
}

static MatView transposed(MatView m) {
    MatView t = {m.data, m.col_stride, m.row_stride};
    return t;
}

/* Sum and dot product over a row of attention weights, in
 * ATT_LANES interleaved lanes combined in a fixed order: they vectorize, and
 * the lane of an element depends on its index only, so the exact zeros of
 * masked keys at the end of a padded row change nothing. */
static float lanes_combine_float(const float *part) {
    return ((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7]));
}

static float row_dot_float(const float *x, const float *y, int n) {
    float part[ATT_LANES] = {0};
    int i = 0;
    for (; i + ATT_LANES <= n; i += ATT_LANES)
        for (int l = 0; l < ATT_LANES; l++) part[l] += x[i + l] * y[i + l];
    for (int l = 0; i < n; i++, l++) part[l] += x[i] * y[i];
    return lanes_combine_float(part);
}

static float larger(float a, float b) { return a > b ? a : b; }

/* Query rows of one block: its scores against every key take at most about
 * this many floats (64 KB), so a block's buffers stay in the core's L2. */
#define ATT_BLOCK_FLOATS 16384

static int attention_block_rows(int T) {
    int rows = ATT_BLOCK_FLOATS / T / MM_MR * MM_MR;
    int whole = (T + MM_MR - 1) / MM_MR * MM_MR;
    if (rows < MM_MR) rows = MM_MR;
    return rows < whole ? rows : whole;
}

/* C (M x N, row stride ldc) = (accumulate ? C : 0) + A (M x K) times B,
 * where B was packed whole by mm_pack_b (panel j, of NR columns, at
 * b + j * NR * K). A needs a unit stride on one side, as every operand of
 * the attention has. Each element is one chain over k in increasing order,
 * continued where C is accumulated, exactly as in matmul(). */
static void att_product(float *c, long ldc, MatView a, const float *b, long M, int N, long K, int accumulate,
                        MatMode mode) {
#if !defined(float)
    if (mode != MM_F32) {
        /* b holds bfloat16 pair panels (att_pack): panel q at b + q * kp * BF_NR words */
        const uint32_t *words = (const uint32_t *)b;
        long kp = (K + 1) / 2, k_block = K <= MM_KC_MAX ? K : MM_KC;
        for (long k0 = 0; k0 < K; k0 += k_block) {
            int kc = (int)(K - k0 < k_block ? K - k0 : k_block);
            mm_bf16_block(c, ldc, accumulate || k0 > 0 ? c : NULL, ldc, a, NULL, 0, M, N, k0, kc,
                          words + k0 / 2 * BF_NR, kp * BF_NR, NULL, 0, 0, NULL, mode);
        }
        return;
    }
#endif
    (void)mode;
    long k_block = K <= MM_KC_MAX ? K : MM_KC;
    for (long k0 = 0; k0 < K; k0 += k_block) {
        int kc = (int)(K - k0 < k_block ? K - k0 : k_block);
        int load_c = accumulate || k0 > 0;
        for (long i0 = 0; i0 < M; i0 += MM_MR) {
            int rows = (int)(M - i0 < MM_MR ? M - i0 : MM_MR);
            const float *a_ptr = a.data + i0 * a.row_stride + k0 * a.col_stride;
            for (int j0 = 0; j0 < N; j0 += MM_NR) {
                int cols = N - j0 < MM_NR ? N - j0 : MM_NR;
                const float *panel = b + (long)j0 * K + k0 * MM_NR;
                float *tile = c + i0 * ldc + j0;
                if (rows == MM_MR && cols == MM_NR)
                    mm_kernel(kc, a_ptr, a.row_stride, a.col_stride, panel, tile, ldc, NULL, load_c, NULL, NULL, 0, 0);
                else
                    mm_edge_tile(tile, ldc, rows, cols, NULL, load_c, NULL, a, i0, k0, kc, panel);
            }
        }
    }
}

/* B (K x N) packed whole for att_product: float panels, or in bfloat16
 * the pair panels of mm_pack_b_bf16 in the same buffer. */
static void att_pack(float *buf, MatView b, int K, int N, MatMode mode) {
#if !defined(float)
    if (mode != MM_F32) {
        mm_pack_b_bf16((uint32_t *)buf, b, 0, K, 0, N, mode);
        return;
    }
#endif
    (void)mode;
    mm_pack_b(buf, b, 0, K, 0, N);
}

/* One thread's buffers: the head's operands packed once per (batch, head),
 * and the block's rows x T matrices. */
typedef struct {
    float *k_t, *v, *v_t, *k;   /* K^T, V, V^T, K packed as B operands */
    float *q_blk, *g_blk;       /* the block's q and d(out) rows, packed */
    float *p, *u, *m, *ds;      /* probabilities, after dropout, dropout factors, gradients */
} AttWork;

static long round_up(long n, long to) { return (n + to - 1) / to * to; }

/* Floats of a K x N operand packed by att_pack, in either precision,
 * rounded up to a 64-byte line. */
static long att_panel_floats(long K, long N) {
    long floats = round_up(N, MM_NR) * K;
#if !defined(float)
    long words = round_up(N, BF_NR) * ((K + 1) / 2);
    if (words > floats) floats = words;
#endif
    return round_up(floats, 16);
}

/* Floats of one thread's AttWork; each part starts on a 64-byte line. */
static long att_work_floats(int T, int dh, int rows) {
    long panels_t = att_panel_floats(dh, T), panels_d = att_panel_floats(T, dh);
    long blk = att_panel_floats(rows, dh), sq = round_up((long)rows * T, 16);
    return 2 * panels_t + 2 * panels_d + 2 * blk + 4 * sq;
}

static AttWork att_work_carve(float *base, int T, int dh, int rows) {
    long panels_t = att_panel_floats(dh, T), panels_d = att_panel_floats(T, dh);
    long blk = att_panel_floats(rows, dh), sq = round_up((long)rows * T, 16);
    AttWork w;
    w.k_t = base; base += panels_t;
    w.v_t = base; base += panels_t;
    w.v = base; base += panels_d;
    w.k = base; base += panels_d;
    w.q_blk = base; base += blk;
    w.g_blk = base; base += blk;
    w.p = base; base += sq;
    w.u = base; base += sq;
    w.m = base; base += sq;
    w.ds = base;
    return w;
}

static int att_threads(void) {
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int att_thread_num(void) {
#ifdef _OPENMP
    return omp_get_thread_num();
#else
    return 0;
#endif
}

long attention_work_floats(int T, int C, int NH, int threads) {
    /* the block of query rows shrinks as T grows, so take the largest need of any length up to T */
    long most = 0;
    for (int t = 1; t <= T; t++) {
        long need = att_work_floats(t, C / NH, attention_block_rows(t));
        if (need > most) most = need;
    }
    return most * (threads > 0 ? threads : 1);
}

/* The team of a parallel region over the work buffer: never more threads
 * than it has room for (the results do not depend on the team's size). */
static int att_team(int work_threads) {
    int t = att_threads();
    return t < work_threads ? t : work_threads;
}

/* Lanes of the row maximum. A maximum is the same in any order, so these
 * are as many as keep the comparisons from waiting on each other. */
enum { MAX_LANES = 32 };

/* Rows of the softmax backward's dot products side by side, so that the
 * rows' chains of additions interleave instead of waiting on one another. */
enum { ROWS_AT_ONCE = 4 };

/* Softmax over keys of rows of scores, in place: scores * scale, keys that
 * are [PAD] excluded (probability exactly 0). The row's maximum and the
 * inverse of its sum go to stats (2 floats a row) when it is not NULL. */
static void attention_softmax_rows(float *p, long ldp, int rows, const int *tokens, int T, float scale,
                                   float *stats) {
    float row_max[ATT_BLOCK_FLOATS / MM_MR], sums[ATT_BLOCK_FLOATS / MM_MR];
    for (int r = 0; r < rows; r++) {
        float *row = p + r * ldp;
        float part[MAX_LANES];
        for (int l = 0; l < MAX_LANES; l++) part[l] = -INFINITY;
        int t2 = 0;
        for (; t2 + MAX_LANES <= T; t2 += MAX_LANES)
            for (int l = 0; l < MAX_LANES; l++) {
                float v = tokens[t2 + l] == TOKEN_PAD ? -INFINITY : row[t2 + l] * scale;
                row[t2 + l] = v;
                part[l] = larger(v, part[l]);
            }
        for (; t2 < T; t2++) {
            float v = tokens[t2] == TOKEN_PAD ? -INFINITY : row[t2] * scale;
            row[t2] = v;
            part[0] = larger(v, part[0]);
        }
        /* halving: the lanes' maximum in log2(MAX_LANES) vector steps instead
         * of a chain of MAX_LANES comparisons (no lane holds a NaN: larger()
         * keeps the lane's value over a NaN score, so any order agrees) */
        for (int width = MAX_LANES / 2; width > 0; width /= 2)
            for (int l = 0; l < width; l++) part[l] = larger(part[l], part[l + width]);
        float max_score = part[0];
        /* e^(score - max): one element at a time, so the loop runs as wide
         * as the vectors are; then summed in the lanes of row_dot_float
         * (lane l takes the elements t2 with t2 % ATT_LANES == l, in order) */
        for (t2 = 0; t2 < T; t2++) row[t2] = row[t2] == -INFINITY ? 0.0f : SOFTMAX_EXP(row[t2] - max_score);
        float lane[ATT_LANES] = {0};
        t2 = 0;
        for (; t2 + ATT_LANES <= T; t2 += ATT_LANES)
            for (int l = 0; l < ATT_LANES; l++) lane[l] += row[t2 + l];
        for (int l = 0; t2 < T; t2++, l++) lane[l] += row[t2];
        sums[r] = lanes_combine_float(lane);
        row_max[r] = max_score;
    }
    for (int r = 0; r < rows; r++) {
        float *row = p + r * ldp;
        float inv = sums[r] > 0.0f ? 1.0f / sums[r] : 0.0f;
        for (int t2 = 0; t2 < T; t2++) row[t2] *= inv;
        if (stats) {
            stats[2 * r] = row_max[r];
            stats[2 * r + 1] = inv;
        }
    }
}

/* The same probabilities again from the same scores and the stats the
 * forward saved: the same operations on the same values. */
static void attention_softmax_again_rows(float *p, long ldp, int rows, const int *tokens, int T, float scale,
                                         const float *stats) {
    for (int r = 0; r < rows; r++) {
        float *row = p + r * ldp;
        float max_score = stats[2 * r], inv = stats[2 * r + 1];
        for (int t2 = 0; t2 < T; t2++) {
            float v = tokens[t2] == TOKEN_PAD ? -INFINITY : row[t2] * scale;
            row[t2] = (v == -INFINITY ? 0.0f : SOFTMAX_EXP(v - max_score)) * inv;
        }
    }
}

/* The dropout index of query row t1, key 0 of head h of example b. */
static uint64_t att_drop_first(const DropoutKey *key, int b, int h, int NH, int t1) {
    uint64_t P = (uint64_t)key->positions;
    return (dropout_row(key, b) * (uint64_t)NH + (uint64_t)h) * P * P + (uint64_t)t1 * P;
}

/* used = p * the dropout factor of each element of rows query rows of T
 * keys, row r's key t2 drawn at index first + r * key.positions + t2 (the
 * layout of layers.h); the factors are kept in mask when it is not NULL. */
static void attention_dropout_rows(float *used, float *mask, const float *p, int rows, int T, DropoutKey key,
                                   uint64_t first) {
    float keep_scale = dropout_keep_scale(&key);
    DropoutTest test = dropout_test(&key);
    for (int r = 0; r < rows; r++) {
        uint64_t index = first + (uint64_t)r * (uint64_t)key.positions;
        const float *pr = p + (long)r * T;
        float *ur = used + (long)r * T;
        float *mr = mask ? mask + (long)r * T : NULL;
        for (int t2 = 0; t2 < T; t2++) {
            float factor = dropout_drops(&test, index + t2) ? 0.0f : keep_scale;
            ur[t2] = pr[t2] * factor;
            if (mr) mr[t2] = factor;
        }
    }
}

/* Head h of example b (bh = b * NH + h): its q, k, v views and tokens. */
typedef struct {
    int b, h;
    MatView q, k, v;     /* (T, dh) each, inside qkv */
    const int *tok;      /* (T) */
} AttHead;

static AttHead att_head(const float *qkv, const int *tokens, int bh, int NH, int T, int C, int dh) {
    AttHead a;
    a.b = bh / NH;
    a.h = bh % NH;
    a.q = qkv_head(qkv, a.b, a.h, 0, T, C, dh);
    a.k = qkv_head(qkv, a.b, a.h, 1, T, C, dh);
    a.v = qkv_head(qkv, a.b, a.h, 2, T, C, dh);
    a.tok = tokens + (long)a.b * T;
    return a;
}

void attention_forward(float *out, float *stats, const float *qkv, const int *tokens, int B, int T, int C,
                       int NH, DropoutKey drop, float *work, int work_threads, Precision prec) {
    MatMode mode = mm_mode(prec);
    int dh = C / NH, block = attention_block_rows(T);
    float scale = 1.0f / sqrtf((float)dh);
    long per_thread = att_work_floats(T, dh, block);
    #pragma omp parallel for schedule(static) num_threads(att_team(work_threads))
    for (int bh = 0; bh < B * NH; bh++) {
        AttHead ah = att_head(qkv, tokens, bh, NH, T, C, dh);
        int b = ah.b, h = ah.h;
        MatView q = ah.q, k = ah.k, v = ah.v;
        const int *tok = ah.tok;
        AttWork w = att_work_carve(work + per_thread * att_thread_num(), T, dh, block);
        att_pack(w.k_t, transposed(k), dh, T, mode);
        att_pack(w.v, v, T, dh, mode);
        for (int r0 = 0; r0 < T; r0 += block) {
            int rows = T - r0 < block ? T - r0 : block;
            /* scores of the block's queries, their probabilities, then out = used v */
            MatView q_blk = {q.data + r0 * q.row_stride, q.row_stride, 1};
            att_product(w.p, T, q_blk, w.k_t, rows, T, dh, 0, mode);
            attention_softmax_rows(w.p, T, rows, tok, T, scale, stats + 2 * ((long)bh * T + r0));
            const float *used = w.p;
            if (drop.p > 0.0f) {
                attention_dropout_rows(w.u, NULL, w.p, rows, T, drop, att_drop_first(&drop, b, h, NH, r0));
                used = w.u;
            }
            MatView u = {used, T, 1};
            att_product(out + ((long)b * T + r0) * C + (long)h * dh, C, u, w.v, rows, dh, T, 0, mode);
        }
    }
}

void attention_probs(float *probs, const float *qkv, const int *tokens, int B, int T, int C, int NH, float *work,
                     int work_threads, Precision prec) {
    MatMode mode = mm_mode(prec);
    int dh = C / NH, block = attention_block_rows(T);
    float scale = 1.0f / sqrtf((float)dh);
    long per_thread = att_work_floats(T, dh, block);
    #pragma omp parallel for schedule(static) num_threads(att_team(work_threads))
    for (int bh = 0; bh < B * NH; bh++) {
        AttHead ah = att_head(qkv, tokens, bh, NH, T, C, dh);
        MatView q = ah.q, k = ah.k;
        const int *tok = ah.tok;
        AttWork w = att_work_carve(work + per_thread * att_thread_num(), T, dh, block);
        float *p = probs + (long)bh * T * T;
        att_pack(w.k_t, transposed(k), dh, T, mode);
        for (int r0 = 0; r0 < T; r0 += block) {
            int rows = T - r0 < block ? T - r0 : block;
            MatView q_blk = {q.data + r0 * q.row_stride, q.row_stride, 1};
            att_product(p + (long)r0 * T, T, q_blk, w.k_t, rows, T, dh, 0, mode);
            attention_softmax_rows(p + (long)r0 * T, T, rows, tok, T, scale, NULL);
        }
    }
}

/* Through the dropout and the softmax, in place: ds holds d(used) on entry
 * and d(scores before scaling) on return:
 * ds = p * (dp - sum_j p_j dp_j) * scale with dp = d(used) * mask. */
static void attention_softmax_backward_rows(float *ds, const float *p, const float *mask, int rows, int T,
                                            float scale) {
    float dots[ATT_BLOCK_FLOATS / MM_MR];
    int r = 0;
    if (mask) {
        /* dp = d(used) * mask, then the dots below as row_dot_float adds */
        for (; r + ROWS_AT_ONCE <= rows; r += ROWS_AT_ONCE) {
            float part[ROWS_AT_ONCE][ATT_LANES] = {{0}};
            float *d = ds + (long)r * T;
            const float *pr = p + (long)r * T, *mk = mask + (long)r * T;
            int i = 0;
            for (; i + ATT_LANES <= T; i += ATT_LANES)
                for (int q = 0; q < ROWS_AT_ONCE; q++)
                    for (int l = 0; l < ATT_LANES; l++) {
                        long at = (long)q * T + i + l;
                        d[at] *= mk[at];
                        part[q][l] += d[at] * pr[at];
                    }
            for (int l = 0; i < T; i++, l++)
                for (int q = 0; q < ROWS_AT_ONCE; q++) {
                    long at = (long)q * T + i;
                    d[at] *= mk[at];
                    part[q][l] += d[at] * pr[at];
                }
            for (int q = 0; q < ROWS_AT_ONCE; q++) dots[r + q] = lanes_combine_float(part[q]);
        }
        for (int rest = r; rest < rows; rest++)
            for (int i = 0; i < T; i++) ds[(long)rest * T + i] *= mask[(long)rest * T + i];
    } else {
        /* dot = sum over keys of dp * p, lanes as row_dot_float, rows side by side */
        for (; r + ROWS_AT_ONCE <= rows; r += ROWS_AT_ONCE) {
            float part[ROWS_AT_ONCE][ATT_LANES] = {{0}};
            const float *d = ds + (long)r * T, *pr = p + (long)r * T;
            int i = 0;
            for (; i + ATT_LANES <= T; i += ATT_LANES)
                for (int q = 0; q < ROWS_AT_ONCE; q++)
                    for (int l = 0; l < ATT_LANES; l++) part[q][l] += d[(long)q * T + i + l] * pr[(long)q * T + i + l];
            for (int l = 0; i < T; i++, l++)
                for (int q = 0; q < ROWS_AT_ONCE; q++) part[q][l] += d[(long)q * T + i] * pr[(long)q * T + i];
            for (int q = 0; q < ROWS_AT_ONCE; q++) dots[r + q] = lanes_combine_float(part[q]);
        }
    }
    for (; r < rows; r++) dots[r] = row_dot_float(ds + (long)r * T, p + (long)r * T, T);
    for (r = 0; r < rows; r++) {
        float *d = ds + (long)r * T;
        const float *pr = p + (long)r * T;
        float dot = dots[r];
        for (int t2 = 0; t2 < T; t2++) d[t2] = pr[t2] * (d[t2] - dot) * scale;
    }
}

void attention_backward(float *dqkv, const float *dout, const float *qkv, const float *stats, const int *tokens,
                        int B, int T, int C, int NH, DropoutKey drop, float *work, int work_threads, Precision prec) {
    MatMode mode = mm_mode(prec);
    int dh = C / NH, block = attention_block_rows(T);
    float scale = 1.0f / sqrtf((float)dh);
    long per_thread = att_work_floats(T, dh, block);
    #pragma omp parallel for schedule(static) num_threads(att_team(work_threads))
    for (int bh = 0; bh < B * NH; bh++) {
        AttHead ah = att_head(qkv, tokens, bh, NH, T, C, dh);
        int b = ah.b, h = ah.h;
        MatView q = ah.q, k = ah.k, v = ah.v;
        const int *tok = ah.tok;
        AttWork w = att_work_carve(work + per_thread * att_thread_num(), T, dh, block);
        float *dq = dqkv + (long)b * T * 3 * C + (long)h * dh;
        float *dk = dq + C, *dv = dq + 2L * C;
        att_pack(w.k_t, transposed(k), dh, T, mode);
        att_pack(w.v_t, transposed(v), dh, T, mode);
        att_pack(w.k, k, T, dh, mode);
        for (int r0 = 0; r0 < T; r0 += block) {
            int rows = T - r0 < block ? T - r0 : block;
            /* the forward's probabilities for this block, again */
            MatView q_blk = {q.data + r0 * q.row_stride, q.row_stride, 1};
            att_product(w.p, T, q_blk, w.k_t, rows, T, dh, 0, mode);
            int dropout = drop.p > 0.0f;
            attention_softmax_again_rows(w.p, T, rows, tok, T, scale, stats + 2 * ((long)bh * T + r0));
            if (dropout) attention_dropout_rows(w.u, w.m, w.p, rows, T, drop, att_drop_first(&drop, b, h, NH, r0));
            const float *used = dropout ? w.u : w.p, *mask = dropout ? w.m : NULL;
            /* dv += used^T g over this block's queries */
            MatView g = {dout + ((long)b * T + r0) * C + (long)h * dh, C, 1};
            att_pack(w.g_blk, g, rows, dh, mode);
            MatView used_t = {used, 1, T};
            att_product(dv, 3L * C, used_t, w.g_blk, T, dh, rows, r0 > 0, mode);   /* the first block writes */
            /* d(used) = g v^T, then through dropout and softmax */
            att_product(w.ds, T, g, w.v_t, rows, T, dh, 0, mode);
            attention_softmax_backward_rows(w.ds, w.p, mask, rows, T, scale);
            /* dq += ds k for these queries; dk += ds^T q */
            MatView ds = {w.ds, T, 1}, ds_t = {w.ds, 1, T};
            att_product(dq + (long)r0 * 3 * C, 3L * C, ds, w.k, rows, dh, T, 0, mode);   /* these rows, once */
            att_pack(w.q_blk, q_blk, rows, dh, mode);
            att_product(dk, 3L * C, ds_t, w.q_blk, T, dh, rows, r0 > 0, mode);
        }
    }
}
