/* test_bpe_dropout.c: BPE-dropout on batches (text/bpe_dropout.c), on a
 * vocabulary written by hand so that every split can be worked out here.
 *
 * "_" stands for the marker U+2581. Symbols and ids:
 *   5 _a   6 b   7 c   8 _ab   9 _abc   10 bc
 * merges in learned order: 0 (_a, b) -> _ab, 1 (_ab, c) -> _abc,
 * 2 (b, c) -> bc, 3 (_a, bc) -> _abc again (no new id). The first merge of
 * _abc is rank 1, so its parts are _ab and c, never _a and bc. */
#include "text/bpe_dropout.h"
#include "base/rng.h"
#include "base/tokens.h"
#include "tests/check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define M "\xE2\x96\x81"
enum { A = 5, B_ = 6, C_ = 7, AB = 8, ABC = 9, BC = 10 };

static Bpe *hand_bpe(void) {
    const char *vocab[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", M "a", "b", "c", M "ab", M "abc", "bc"};
    const char *const merges[][2] = {{M "a", "b"}, {M "ab", "c"}, {"b", "c"}, {M "a", "bc"}};
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(bpe_from_lists(vocab, 11, merges, 4, &b, err, sizeof err) == 0 && b, "bpe_from_lists: %s", err);
    return b;
}

/* Runs the batch (rows of `len` ids each, padded with 0) and compares it
 * with want (B x want_T). */
static void expect_batch(const BpeSplits *s, const int *in, int B, int T, int max_len, BpeDropoutKey key,
                         const int *want, int want_T, const char *what) {
    int *tokens = calloc((size_t)B * max_len, sizeof *tokens);
    int *work = malloc(sizeof(int) * (size_t)(B + 1) * (size_t)(max_len + 1));
    memcpy(tokens, in, sizeof(int) * (size_t)B * T);
    int got_T = bpe_dropout_batch(tokens, B, T, max_len, s, key, work);
    int same = got_T == want_T;
    for (int i = 0; same && i < B * want_T; i++) same = tokens[i] == want[i];
    CHECK(same, "%s: T %d (expected %d), first ids %d %d %d %d", what, got_T, want_T, tokens[0], tokens[1],
          tokens[2], tokens[3]);
    free(tokens);
    free(work);
}

static void test_parts(const BpeSplits *s) {
    CHECK(s->n == 11, "11 symbols, got %d", s->n);
    int want[11][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1, -1},
                       {A, B_}, {AB, C_}, {B_, C_}};
    for (int i = 0; i < 11; i++)
        CHECK(s->parts[2 * i] == want[i][0] && s->parts[2 * i + 1] == want[i][1], "parts of %d: %d %d, expected %d %d",
              i, s->parts[2 * i], s->parts[2 * i + 1], want[i][0], want[i][1]);
}

/* p = 1 splits everything as far as it fits; p = 0 nothing. */
static void test_worked(const BpeSplits *s) {
    const int in[2 * 4] = {TOKEN_CLS, ABC, BC, TOKEN_SEP,
                           TOKEN_CLS, A, TOKEN_SEP, TOKEN_PAD};
    BpeDropoutKey none = {0.0, 1, 1, NULL}, all = {1.0, 1, 1, NULL};
    expect_batch(s, in, 2, 4, 8, none, in, 4, "p = 0 leaves the batch alone");
    /* max_len 8: _abc -> _ab c -> _a b c (room 8-1-2 = 5), then bc -> b c (room 3) */
    const int whole[2 * 7] = {TOKEN_CLS, A, B_, C_, B_, C_, TOKEN_SEP,
                              TOKEN_CLS, A, TOKEN_SEP, 0, 0, 0, 0};
    expect_batch(s, in, 2, 4, 8, all, whole, 7, "p = 1, max_len 8: every merged symbol down to base symbols");
    /* max_len 6: _abc still fits (room 3) but then bc has 1 place: stays whole */
    const int six[2 * 6] = {TOKEN_CLS, A, B_, C_, BC, TOKEN_SEP,
                            TOKEN_CLS, A, TOKEN_SEP, 0, 0, 0};
    expect_batch(s, in, 2, 4, 6, all, six, 6, "p = 1, max_len 6: the later token stays whole");
    /* max_len 5: _abc needs 3 places of 2 and stays whole; bc then has 2 */
    const int five[2 * 5] = {TOKEN_CLS, ABC, B_, C_, TOKEN_SEP,
                             TOKEN_CLS, A, TOKEN_SEP, 0, 0};
    expect_batch(s, in, 2, 4, 5, all, five, 5, "p = 1, max_len 5: a split that does not fit is not made, the next is");
    /* max_len 4 = the row: nothing fits */
    expect_batch(s, in, 2, 4, 4, all, in, 4, "p = 1, max_len equal to the row: unchanged");
}

/* p = 0.5, one draw per _ab (its parts have none): token k of the row at
 * place r is split exactly when draw 0 of key r * 2^40 + k * 2^20 is below p. */
static void test_keys(const BpeSplits *s) {
    enum { N = 12 };
    int in[N + 2];
    in[0] = TOKEN_CLS;
    for (int k = 1; k <= N; k++) in[k] = AB;
    in[N + 1] = TOKEN_SEP;
    const int places[1] = {5};
    BpeDropoutKey key = {0.5, 77, 9, places};
    int want[2 * N + 2], n = 0, splits = 0;
    want[n++] = TOKEN_CLS;
    for (int k = 1; k <= N; k++) {
        uint64_t index = ((uint64_t)5 << 40) + ((uint64_t)k << 20);
        if (rng_uniform(77, 9, BPE_DROPOUT_SITE, index) < 0.5) {
            want[n++] = A;
            want[n++] = B_;
            splits++;
        } else {
            want[n++] = AB;
        }
    }
    want[n++] = TOKEN_SEP;
    CHECK(splits > 0 && splits < N, "the chosen key splits some tokens and not others (%d of %d)", splits, N);
    expect_batch(s, in, 1, N + 2, 2 * N + 2, key, want, n, "draws keyed by (seed, step, place, position)");

    /* The same row as row 1 of a batch, at the same place, splits the same. */
    int two[2 * (N + 2)];
    for (int k = 0; k < N + 2; k++) {
        two[k] = k < 3 ? (int[]){TOKEN_CLS, BC, TOKEN_SEP}[k] : TOKEN_PAD;
        two[N + 2 + k] = in[k];
    }
    const int places2[2] = {0, 5};
    BpeDropoutKey key2 = {0.5, 77, 9, places2};
    int *tokens = calloc(2 * (2 * N + 2), sizeof *tokens), *work = malloc(sizeof(int) * 3 * (2 * N + 3));
    memcpy(tokens, two, sizeof two);
    int T = bpe_dropout_batch(tokens, 2, N + 2, 2 * N + 2, s, key2, work);
    CHECK(T == n && memcmp(tokens + T, want, sizeof(int) * n) == 0, "row 1 of a batch at place 5 splits as alone");
    free(tokens);
    free(work);
}

/* Over many one-level draws the share split is p (binomial, 5 sd). */
static void test_rate(const BpeSplits *s) {
    enum { ROWS = 64, N = 30, L = 2 * N + 2 };
    int *tokens = calloc(ROWS * L, sizeof *tokens), *work = malloc(sizeof(int) * (ROWS + 1) * (L + 1));
    for (int r = 0; r < ROWS; r++) {
        tokens[r * (N + 2)] = TOKEN_CLS;
        for (int k = 1; k <= N; k++) tokens[r * (N + 2) + k] = AB;
        tokens[r * (N + 2) + N + 1] = TOKEN_SEP;
    }
    BpeDropoutKey key = {0.3, 42, 3, NULL};
    int T = bpe_dropout_batch(tokens, ROWS, N + 2, L, s, key, work);
    long pieces = 0;
    for (int i = 0; i < ROWS * T; i++) pieces += tokens[i] == A;
    double n = ROWS * N, mean = n * 0.3, sd = sqrt(n * 0.3 * 0.7);
    CHECK(fabs(pieces - mean) < 5 * sd, "split %ld of %.0f tokens at p 0.3 (expected %.0f +- %.0f)", pieces, n, mean,
          5 * sd);
    free(tokens);
    free(work);
}

int main(void) {
    Bpe *b = hand_bpe();
    BpeSplits s;
    CHECK(b && bpe_splits_build(&s, b) == 0, "bpe_splits_build");
    if (b && s.parts) {
        test_parts(&s);
        test_worked(&s);
        test_keys(&s);
        test_rate(&s);
    }
    bpe_splits_free(&s);
    bpe_free(b);
    return check_summary("test_bpe_dropout");
}
