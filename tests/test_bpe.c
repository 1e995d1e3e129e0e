/* test_bpe.c: the BPE tokenizer (text/bpe.c, bpe_learn.c) on cases worked out by hand.
 *
 * Notation in the comments: "_" stands for the marker U+2581 (bytes E2 96 81),
 * so "_l" is the marked l. In byte order every plain ASCII symbol comes before
 * every marked one (0x61 'a' < 0xE2), and "_" alone comes before "_a" (a
 * prefix first). Merge ranks count from 0. */
#include "text/bpe.h"
#include "tests/check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define M "\xE2\x96\x81" /* the marker */
#define LEN(a) ((int)(sizeof(a) / sizeof((a)[0])))

static Bpe *learn_text(const char *text, int vocab_size, int min_freq) {
    BpeCounter *c = bpe_counter_new();
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(c && bpe_counter_add_text(c, text) == 0, "counting pieces");
    int rc = c ? bpe_learn(c, vocab_size, min_freq, &b, err, sizeof err) : -1;
    CHECK(rc == 0 && b, "bpe_learn failed: %s", err);
    bpe_counter_free(c);
    return b;
}

/* Expects ids 5.. to be the given symbols, and nothing more. */
static void expect_vocab(const Bpe *b, const char *const *syms, int n, const char *what) {
    CHECK(bpe_vocab_size(b) == BPE_N_SPECIAL + n, "%s: vocab size %d, expected %d", what, bpe_vocab_size(b),
          BPE_N_SPECIAL + n);
    CHECK(strcmp(bpe_symbol(b, 0), "[PAD]") == 0 && strcmp(bpe_symbol(b, 4), "[MASK]") == 0, "%s: specials", what);
    for (int i = 0; i < n && BPE_N_SPECIAL + i < bpe_vocab_size(b); i++)
        CHECK(strcmp(bpe_symbol(b, BPE_N_SPECIAL + i), syms[i]) == 0, "%s: id %d is \"%s\", expected \"%s\"", what,
              BPE_N_SPECIAL + i, bpe_symbol(b, BPE_N_SPECIAL + i), syms[i]);
}

static void expect_merges(const Bpe *b, const char *const (*merges)[2], int n, const char *what) {
    CHECK(bpe_n_merges(b) == n, "%s: %d merges, expected %d", what, bpe_n_merges(b), n);
    for (int i = 0; i < n && i < bpe_n_merges(b); i++) {
        const char *l, *r;
        CHECK(bpe_merge(b, i, &l, &r) == 0, "bpe_merge %d", i);
        CHECK(strcmp(l, merges[i][0]) == 0 && strcmp(r, merges[i][1]) == 0, "%s: merge %d is (%s, %s), expected (%s, %s)",
              what, i, l, r, merges[i][0], merges[i][1]);
    }
}

static void expect_ids(const Bpe *b, const char *text, const int *want, int n) {
    int ids[64];
    int got = bpe_encode_text(b, text, ids, LEN(ids));
    int same = got == n;
    for (int i = 0; same && i < n; i++) same = ids[i] == want[i];
    CHECK(same, "encoding \"%s\": got %d ids (first %d), expected %d (first %d)", text, got, got > 0 ? ids[0] : -1, n,
          n > 0 ? want[0] : -1);
}

/* The counts corpus: low x5, lower x2, newest x6, widest x3. */
#define SENNRICH_TEXT "low low low low low lower lower newest newest newest newest newest newest " \
    "widest widest widest"
static const char *const SENNRICH = SENNRICH_TEXT;

/* Base counts: e 2+12+3 = 17; w 5+2+6 = 13 (the w of widest is marked); s 9; t 9;
 * o 7; _l 7; _n 6; d 3; i 3; _w 3; r 2. Ids by count, ties in byte order
 * (s < t, o < _l, d < i < _w): e5 w6 s7 t8 o9 _l10 _n11 d12 i13 _w14 r15.
 * Pairs: (_l,o)7 (o,w)7 (w,e)2+6=8 (e,r)2 (_n,e)6 (e,w)6 (e,s)6+3=9 (s,t)9
 *        (_w,i)3 (i,d)3 (d,e)3.
 *  0: (e,s) 9, tied with (s,t) 9, e < s -> es 16. (s,t) drops to 0,
 *     (w,e) to 2, (d,e) to 0; (w,es) 6, (es,t) 9, (d,es) 3 appear.
 *  1: (es,t) 9 -> est 17; (w,est) 6, (d,est) 3.
 *  2: (o,w) 7 ties (_l,o) 7, o < _l -> ow 18; (_l,ow) 7, (ow,e) 2, (w,e) 0.
 *  3: (_l,ow) 7 -> _low 19; (_low,e) 2.
 *  4: 6-way tie (_n,e) (e,w) (w,est): e < w < _n -> ew 20; (_n,ew) 6, (ew,est) 6.
 *  5: (ew,est) beats (_n,ew) as ew < _n -> ewest 21.   6: (_n,ewest) -> _newest 22.
 *  7: 3-way tie (_w,i) (i,d) (d,est): d first -> dest 23.  8: (i,dest) -> idest 24.
 *  9: (_w,idest) -> _widest 25.
 * 10: (e,r) 2 ties (_low,e) 2, e < _low -> er 26.  11: (_low,er) -> _lower 27.
 * No pair is left. */
static void test_sennrich(void) {
    Bpe *b = learn_text(SENNRICH, 100, 1);
    if (!b) return;
    static const char *const vocab[] = {"e", "w", "s", "t", "o", M "l", M "n", "d", "i", M "w", "r", "es", "est",
                                        "ow", M "low", "ew", "ewest", M "newest", "dest", "idest", M "widest", "er",
                                        M "lower"};
    static const char *const merges[][2] = {{"e", "s"},   {"es", "t"},     {"o", "w"},  {M "l", "ow"},
                                            {"e", "w"},   {"ew", "est"},   {M "n", "ewest"}, {"d", "est"},
                                            {"i", "dest"}, {M "w", "idest"}, {"e", "r"},  {M "low", "er"}};
    expect_vocab(b, vocab, LEN(vocab), "sennrich");
    expect_merges(b, merges, LEN(merges), "sennrich");
    /* _l o w e s t: rank 0 (e,s), 1 (es,t), 2 (o,w), 3 (_l,ow): _low est. */
    expect_ids(b, "lowest", (int[]){19, 17}, 2);
    /* _n e w e r: rank 4 (e,w) -> _n ew e r, then rank 10 (e,r) -> _n ew er. */
    expect_ids(b, "newer", (int[]){11, 20, 26}, 3);
    /* Upper case is lowered; "!" is a piece of its own, _! unseen -> [UNK]. */
    expect_ids(b, "Lowest   newer!", (int[]){19, 17, 11, 20, 26, BPE_UNK}, 6);
    /* _w i d e r: only (e,r) has a merge. */
    expect_ids(b, "wider", (int[]){14, 13, 12, 26}, 4);
    /* e-acute was never seen: [UNK], and it does not merge; its neighbours do. */
    expect_ids(b, "low\xC3\xA9", (int[]){19, BPE_UNK}, 2);
    expect_ids(b, "\xC3\xA9" "er", (int[]){BPE_UNK, 26}, 2);
    /* Only A-Z are lowered: E-acute stays, and is unseen too. */
    expect_ids(b, "LOW\xC3\x89", (int[]){19, BPE_UNK}, 2);
    CHECK(bpe_lookup(b, M "newest", strlen(M "newest")) == 22, "lookup _newest");
    CHECK(bpe_lookup(b, "newest", 6) == BPE_UNK, "unmarked newest is no symbol");
    CHECK(bpe_symbol(b, -1) == NULL && bpe_symbol(b, 28) == NULL, "symbol ids out of range");
    CHECK(bpe_merge(b, 12, NULL, NULL) == -1 && bpe_merge(b, -1, NULL, NULL) == -1, "merge index out of range");
    bpe_free(b);
}

/* min_freq 3: r (2) is left out, so lower is _l o w e [UNK]; (e,r) never
 * forms. The base ids are those above without r: e5 .. _w14. Merges 0-9 go
 * as above (counts 9, 9, 7, 7, 6, 6, 6, 3, 3, 3 >= 3) with ids 15-24; then
 * the best is (_low,e) 2 < 3: stop. */
static void test_min_freq(void) {
    Bpe *b = learn_text(SENNRICH, 100, 3);
    if (!b) return;
    static const char *const vocab[] = {"e", "w", "s", "t", "o", M "l", M "n", "d", "i", M "w", "es", "est",
                                        "ow", M "low", "ew", "ewest", M "newest", "dest", "idest", M "widest"};
    expect_vocab(b, vocab, LEN(vocab), "min_freq 3");
    CHECK(bpe_n_merges(b) == 10, "min_freq 3: %d merges, expected 10", bpe_n_merges(b));
    CHECK(bpe_lookup(b, "r", 1) == BPE_UNK, "r is [UNK]");
    /* _l o w e r: r [UNK]; (o,w) rank 2 then (_l,ow) rank 3 -> _low e [UNK]. */
    expect_ids(b, "lower", (int[]){18, 5, BPE_UNK}, 3);
    bpe_free(b);
}

/* vocab_size 20: the 11 base symbols take ids 5-15, merges 0-3 add es 16,
 * est 17, ow 18, _low 19, and the vocabulary is full. */
static void test_vocab_cap(void) {
    Bpe *b = learn_text(SENNRICH, 20, 1);
    if (!b) return;
    static const char *const merges[][2] = {{"e", "s"}, {"es", "t"}, {"o", "w"}, {M "l", "ow"}};
    expect_merges(b, merges, LEN(merges), "vocab_size 20");
    CHECK(bpe_vocab_size(b) == 20, "vocab_size 20: got %d", bpe_vocab_size(b));
    /* _n e w e s t: (e,s) then (es,t); (e,w) was not learned. */
    expect_ids(b, "newest", (int[]){11, 5, 6, 17}, 4);
    bpe_free(b);
    /* vocab_size 10 holds 5 base symbols: e w s t, then o beats _l (both 7) in
     * byte order; _l is [UNK] like a rare symbol. No room for merges. */
    b = learn_text(SENNRICH, 10, 1);
    if (!b) return;
    static const char *const five[] = {"e", "w", "s", "t", "o"};
    expect_vocab(b, five, LEN(five), "vocab_size 10");
    CHECK(bpe_n_merges(b) == 0, "vocab_size 10: no merges");
    expect_ids(b, "low", (int[]){BPE_UNK, 9, 6}, 3);
    bpe_free(b);
    /* vocab_size 9: e w s t; o is [UNK] too. */
    b = learn_text(SENNRICH, 9, 1);
    if (b) expect_ids(b, "low", (int[]){BPE_UNK, BPE_UNK, 6}, 3);
    bpe_free(b);
    /* vocab_size 5: the specials alone. */
    b = learn_text(SENNRICH, 5, 1);
    if (b) expect_ids(b, "low", (int[]){BPE_UNK, BPE_UNK, BPE_UNK}, 3);
    CHECK(b && bpe_vocab_size(b) == 5 && bpe_n_merges(b) == 0, "vocab_size 5: specials only");
    bpe_free(b);
}

static void test_ties(void) {
    /* _a b x2, _b a x2: all four base symbols count 2: a5 b6 _a7 _b8.
     * (_a,b) 2 ties (_b,a) 2; _a < _b -> _ab 9, then _ba 10. */
    Bpe *b = learn_text("ab ab ba ba", 100, 1);
    if (b) {
        static const char *const vocab[] = {"a", "b", M "a", M "b", M "ab", M "ba"};
        expect_vocab(b, vocab, LEN(vocab), "left tie");
    }
    bpe_free(b);
    /* With room for one merge, the tie decides which. */
    b = learn_text("ba ba ab ab", 10, 1);
    if (b) {
        static const char *const merges[][2] = {{M "a", "b"}};
        expect_merges(b, merges, 1, "left tie capped");
    }
    bpe_free(b);
    /* _a 4, b 2, c 2: _a5 b6 c7. (_a,b) 2 ties (_a,c) 2: same left, b < c. */
    b = learn_text("ac ac ab ab", 100, 1);
    if (b) {
        static const char *const merges[][2] = {{M "a", "b"}, {M "a", "c"}};
        expect_merges(b, merges, 2, "right tie");
        static const char *const vocab[] = {M "a", "b", "c", M "ab", M "ac"};
        expect_vocab(b, vocab, LEN(vocab), "right tie");
    }
    bpe_free(b);
}

/* aaaa x2: _a a a a; x9z x3: _x 9 z. Base: a 6, then 9 z _x (3 each, byte
 * order), then _a 2: a5 96 z7 _x8 _a9. Every adjacent pair counts, so
 * (a,a) is 2 per piece: 4, beating (_x,9) 3 and (9,z) 3 (counting only
 * non-overlapping occurrences would give 2).
 * 0: (a,a) -> aa 10; left to right without overlap: _a aa a.
 * 1: (9,z) 3 ties (_x,9) 3, 9 < _x -> 9z 11.   2: (_x,9z) 3 -> _x9z 12.
 * 3: (aa,a) 2 ties (_a,aa) 2, aa < _a -> aaa 13.   4: (_a,aaa) -> _aaaa 14. */
static void test_overlap(void) {
    Bpe *b = learn_text("aaaa aaaa x9z x9z x9z", 100, 1);
    if (!b) return;
    static const char *const merges[][2] = {{"a", "a"}, {"9", "z"}, {M "x", "9z"}, {"aa", "a"}, {M "a", "aaa"}};
    expect_merges(b, merges, LEN(merges), "overlap");
    static const char *const vocab[] = {"a", "9", "z", M "x", M "a", "aa", "9z", M "x9z", "aaa", M "aaaa"};
    expect_vocab(b, vocab, LEN(vocab), "overlap");
    /* _a a a a a: (a,a) twice, left to right -> _a aa aa; no pair has a merge. */
    expect_ids(b, "aaaaa", (int[]){9, 10, 10}, 3);
    /* _a a a a -> _a aa a -> _a aaa -> _aaaa. */
    expect_ids(b, "aaaa", (int[]){14}, 1);
    expect_ids(b, "aaa", (int[]){9, 10}, 2);
    bpe_free(b);
}

/* g x3: _g; a_g x2 (U+2581 inside the word): _a, _ (the plain U+2581), g.
 * Base: _g 3, then g < _ < _a (2 each): _g5 g6 _7 _a8.
 * 0: (_a,_) 2 ties (_,g) 2; "_" is a prefix of "_a" -> (_,g). Its
 *    concatenation is _g, already id 5: no new id, the merge is recorded.
 * 1: (_a,_g) 2 -> _a_g 9. */
static void test_existing_concat(void) {
    Bpe *b = learn_text("g g g a" M "g a" M "g", 100, 1);
    if (!b) return;
    static const char *const vocab[] = {M "g", "g", M, M "a", M "a" M "g"};
    expect_vocab(b, vocab, LEN(vocab), "existing concatenation");
    static const char *const merges[][2] = {{M, "g"}, {M "a", M "g"}};
    expect_merges(b, merges, LEN(merges), "existing concatenation");
    expect_ids(b, "a" M "g", (int[]){9}, 1);
    /* _x [UNK], then _ g merge into _g (id 5) by merge 0. */
    expect_ids(b, "x" M "g", (int[]){BPE_UNK, 5}, 2);
    /* A piece starting with U+2581: its marked form __ is unseen. */
    expect_ids(b, M "g", (int[]){BPE_UNK, 6}, 2);
    expect_ids(b, "g", (int[]){5}, 1);
    bpe_free(b);
}

static void test_specials(void) {
    /* Literal specials are cut out and not counted: only ab x2 is a piece.
     * b < _a in byte order (both 2): b5 _a6, then (_a,b) -> _ab 7. */
    Bpe *b = learn_text("[CLS] ab [SEP] ab[MASK][MASK]", 100, 1);
    if (!b) return;
    static const char *const vocab[] = {"b", M "a", M "ab"};
    expect_vocab(b, vocab, LEN(vocab), "specials skipped");
    expect_ids(b, "[CLS] ab[MASK]x[SEP]", (int[]){BPE_CLS, 7, BPE_MASK, BPE_UNK, BPE_SEP}, 5);
    /* Lower-case [cls] is no special: "[" "cls" "]"; _[ _c l s _] all unseen. */
    expect_ids(b, "[cls]", (int[]){BPE_UNK, BPE_UNK, BPE_UNK, BPE_UNK, BPE_UNK}, 5);
    /* ASCII whitespace splits; "a-b" is three pieces: _a, _- unseen, _b unseen. */
    expect_ids(b, "\tab\r\n\v\fa-b", (int[]){7, 6, BPE_UNK, BPE_UNK}, 4);
    expect_ids(b, "", NULL, 0);
    bpe_free(b);
}

/* A case the lists spell out: ranks 0 (b,c) 1 (a,b) 2 (ab,c) 3 (abc,a)
 * 4 (a,bc), the last making abc again. Ids _z5 a6 b7 c8 bc9 ab10 abc11 abca12.
 * "zabcabc" = _z a b c a b c. Least rank 0: both (b,c) -> _z a bc a bc.
 * Least rank 4: both (a,bc) -> _z abc abc. No pair has a merge: [5 11 11].
 * (Merging (abc,a), rank 3, as soon as the first abc appears would give
 * _z abca bc: each round merges every occurrence of its pair first.)
 * "zabca" = _z a b c a -> _z a bc a -> _z abc a -> rank 3: _z abca. */
static void test_rounds(void) {
    static const char *const vocab[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", M "z", "a",
                                        "b",     "c",     "bc",    "ab",    "abc",    "abca"};
    static const char *const merges[][2] = {{"b", "c"}, {"a", "b"}, {"ab", "c"}, {"abc", "a"}, {"a", "bc"}};
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(bpe_from_lists(vocab, LEN(vocab), merges, LEN(merges), &b, err, sizeof err) == 0, "rounds lists: %s", err);
    if (!b) return;
    expect_ids(b, "zabcabc", (int[]){5, 11, 11}, 3);
    expect_ids(b, "zabca", (int[]){5, 12}, 2);
    bpe_free(b);
}

/* Rebuilds b from its own lists. */
static Bpe *round_trip(const Bpe *b) {
    int nv = bpe_vocab_size(b), nm = bpe_n_merges(b);
    const char **vocab = malloc((size_t)nv * sizeof *vocab);
    const char *(*merges)[2] = malloc(((size_t)nm + 1) * sizeof *merges);
    Bpe *copy = NULL;
    char err[256] = "";
    if (vocab && merges) {
        for (int i = 0; i < nv; i++) vocab[i] = bpe_symbol(b, i);
        for (int i = 0; i < nm; i++) bpe_merge(b, i, &merges[i][0], &merges[i][1]);
        CHECK(bpe_from_lists(vocab, nv, (const char *const(*)[2])merges, nm, &copy, err, sizeof err) == 0,
              "bpe_from_lists refused learned lists: %s", err);
    }
    free(vocab);
    free(merges);
    return copy;
}

/* Whether a and b have the same symbols and merges. */
static int same_lists(const Bpe *a, const Bpe *b) {
    if (bpe_vocab_size(a) != bpe_vocab_size(b) || bpe_n_merges(a) != bpe_n_merges(b)) return 0;
    for (int i = 0; i < bpe_vocab_size(a); i++)
        if (strcmp(bpe_symbol(a, i), bpe_symbol(b, i)) != 0) return 0;
    for (int i = 0; i < bpe_n_merges(a); i++) {
        const char *l1, *r1, *l2, *r2;
        bpe_merge(a, i, &l1, &r1);
        bpe_merge(b, i, &l2, &r2);
        if (strcmp(l1, l2) != 0 || strcmp(r1, r2) != 0) return 0;
    }
    return 1;
}

static const char *const TEXTS[] = {"Lowest newer! lower widest", "aaaa x9z [MASK] a" M "g", "newest\twider, lowé",
                                    "g g a" M "g 日本語 [SEP]", ""};

static void test_round_trip(void) {
    char all[512] = "";
    for (int i = 0; i < LEN(TEXTS); i++) strcat(strcat(all, TEXTS[i]), " ");
    strcat(all, SENNRICH);
    Bpe *b = learn_text(all, 60, 1);
    if (!b) return;
    Bpe *copy = round_trip(b);
    CHECK(copy && same_lists(b, copy), "round trip keeps the lists");
    for (int t = 0; copy && t < LEN(TEXTS); t++) {
        int ids1[128], ids2[128];
        int n1 = bpe_encode_text(b, TEXTS[t], ids1, 128), n2 = bpe_encode_text(copy, TEXTS[t], ids2, 128);
        CHECK(n1 >= 0 && n1 == n2 && memcmp(ids1, ids2, (size_t)n1 * sizeof(int)) == 0, "round trip ids of \"%s\"",
              TEXTS[t]);
    }
    bpe_free(copy);
    bpe_free(b);
}

static void expect_refused(const char *const *vocab, int nv, const char *const (*merges)[2], int nm, const char *word) {
    static int dummy;
    Bpe *b = (Bpe *)&dummy; /* not NULL, so the test sees it cleared */
    char err[256] = "";
    CHECK(bpe_from_lists(vocab, nv, merges, nm, &b, err, sizeof err) == -1 && b == NULL, "accepted bad lists (%s)", word);
    CHECK(strstr(err, word) != NULL, "message lacks \"%s\": %s", word, err);
}

#define SPECIAL_NAMES "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"

static void test_refused(void) {
    static const char *const ok[] = {SPECIAL_NAMES, M "a", "b", M "ab"};
    static const char *const good[][2] = {{M "a", "b"}};
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(bpe_from_lists(ok, LEN(ok), good, 1, &b, err, sizeof err) == 0, "good lists refused: %s", err);
    bpe_free(b);
    expect_refused(ok, 4, good, 0, "specials");
    expect_refused(NULL, 9, good, 0, "specials");
    static const char *const swapped[] = {"[UNK]", "[PAD]", "[CLS]", "[SEP]", "[MASK]"};
    expect_refused(swapped, 5, NULL, 0, "expected \"[PAD]\"");
    static const char *const dup[] = {SPECIAL_NAMES, M "a", "b", M "a"};
    expect_refused(dup, LEN(dup), NULL, 0, "repeats vocab[5]");
    static const char *const dup_special[] = {SPECIAL_NAMES, "[CLS]"};
    expect_refused(dup_special, LEN(dup_special), NULL, 0, "repeats vocab[2]");
    static const char *const empty[] = {SPECIAL_NAMES, ""};
    expect_refused(empty, LEN(empty), NULL, 0, "empty");
    static const char *const null_entry[] = {SPECIAL_NAMES, NULL};
    expect_refused(null_entry, LEN(null_entry), NULL, 0, "empty");
    /* _ab with no merge making it; "[x" (two units) likewise. */
    expect_refused(ok, LEN(ok), NULL, 0, "vocab[7]");
    static const char *const two_units[] = {SPECIAL_NAMES, M "a", "b", M "ab", "[x"};
    expect_refused(two_units, LEN(two_units), good, 1, "neither one code point nor made by a merge");
    static const char *const missing[][2] = {{M "a", "c"}};
    expect_refused(ok, LEN(ok), missing, 1, "\"c\" is not in the vocab");
    static const char *const no_result[][2] = {{"b", M "a"}};
    expect_refused(ok, LEN(ok), no_result, 1, "is not in the vocab");
    static const char *const special[][2] = {{"[UNK]", "b"}};
    expect_refused(ok, LEN(ok), special, 1, "special [UNK]");
    static const char *const null_merge[][2] = {{M "a", NULL}};
    expect_refused(ok, LEN(ok), null_merge, 1, "no right");
    static const char *const abb[] = {SPECIAL_NAMES, M "a", "b", M "ab", M "abb"};
    static const char *const early[][2] = {{M "ab", "b"}, {M "a", "b"}};
    expect_refused(abb, LEN(abb), early, 2, "before any merge makes it");
    /* A chain of merges spelling [PAD]: the last one makes a special. */
    static const char *const pad[] = {SPECIAL_NAMES, "[", "P", "A", "D", "]", "[P", "[PA", "[PAD"};
    static const char *const make_pad[][2] = {{"[", "P"}, {"[P", "A"}, {"[PA", "D"}, {"[PAD", "]"}};
    expect_refused(pad, LEN(pad), make_pad, 4, "a special token");
    expect_refused(ok, LEN(ok), NULL, -1, "merges");
    expect_refused(ok, LEN(ok), NULL, 1, "merges");
    /* A pair listed twice is accepted; the first rank counts. */
    static const char *const twice[][2] = {{M "a", "b"}, {M "a", "b"}};
    b = NULL;
    CHECK(bpe_from_lists(ok, LEN(ok), twice, 2, &b, err, sizeof err) == 0, "a repeated merge: %s", err);
    if (b) expect_ids(b, "abb", (int[]){7, 6}, 2);
    bpe_free(b);
}

static void test_bad_arguments(void) {
    BpeCounter *c = bpe_counter_new();
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(c && bpe_learn(c, 4, 1, &b, err, sizeof err) == -1 && !b && strstr(err, "at least 5"), "vocab_size 4: %s", err);
    CHECK(bpe_learn(c, 100, -1, &b, err, sizeof err) == -1 && !b && strstr(err, "min_freq"), "min_freq -1: %s", err);
    CHECK(bpe_learn(NULL, 100, 1, &b, err, sizeof err) == -1 && !b, "no counter");
    CHECK(bpe_counter_add(c, "a\0b", 3) == -1, "a NUL byte in a piece is refused");
    CHECK(bpe_learn(c, 100, 1, &b, err, sizeof err) == 0 && bpe_vocab_size(b) == 5, "an empty counter gives the specials");
    CHECK(bpe_encode_piece(b, "ab", 2, NULL, 0) == 2, "count only");
    CHECK(bpe_encode_piece(b, "ab", 2, NULL, 1) == -1 && bpe_encode_piece(NULL, "ab", 2, NULL, 0) == -1, "bad arguments");
    CHECK(bpe_encode_text(b, NULL, NULL, 0) == 0, "no text");
    bpe_free(b);
    bpe_counter_free(c);
}

/* encode_piece writes at most cap ids and returns the full count. */
static void test_truncation(void) {
    Bpe *b = learn_text(SENNRICH, 100, 1);
    if (!b) return;
    int ids[4] = {-7, -7, -7, -7};
    CHECK(bpe_encode_piece(b, "newer", 5, ids, 1) == 3 && ids[0] == 11 && ids[1] == -7, "truncated piece");
    CHECK(bpe_encode_text(b, "newer low", ids, 2) == 4 && ids[1] == 20 && ids[2] == -7, "truncated text");
    bpe_free(b);
}

/* Invalid UTF-8: each stray byte is a unit of its own; nothing crashes. */
static void test_invalid_utf8(void) {
    /* Pieces: \xFF\xFF x2 (units _\xFF, \xFF), \xC3 (a 2-byte lead with
     * nothing after: one unit), \xE2\x96 (a 3-byte lead cut short: units
     * _\xE2 and \x96). Base: _\xFF 2 and \xFF 2 (0xE2 < 0xFF, so _\xFF
     * first), then \x96 < _\xC3 < _\xE2 (1 each): _\xFF5 \xFF6 \x967 _\xC38
     * _\xE29. One pair counts 2: (_\xFF,\xFF) -> 10. */
    Bpe *b = learn_text("\xFF\xFF \xFF\xFF \xC3 \xE2\x96", 100, 1);
    if (!b) return;
    static const char *const vocab[] = {M "\xFF", "\xFF", "\x96", M "\xC3", M "\xE2", M "\xFF\xFF"};
    expect_vocab(b, vocab, LEN(vocab), "stray bytes");
    expect_ids(b, "\xFF\xFF", (int[]){10}, 1);
    expect_ids(b, "\xE2\x96", (int[]){9, 7}, 2);
    /* _\xFF, then \xC3 cut short by "a" (one unit, unseen), then a (unseen). */
    int ids[8];
    CHECK(bpe_encode_piece(b, "\xFF\xC3" "a", 3, ids, 8) == 3 && ids[0] == 5 && ids[1] == BPE_UNK && ids[2] == BPE_UNK,
          "stray bytes as units");
    /* A whole U+2581 is one unit: its marked form is unseen. */
    expect_ids(b, M, (int[]){BPE_UNK}, 1);
    Bpe *copy = round_trip(b);
    CHECK(copy && same_lists(b, copy), "stray-byte symbols round trip");
    bpe_free(copy);
    bpe_free(b);
}

/* Determinism: the same pieces counted in another order learn the same lists. */
static void test_determinism(void) {
    Bpe *a = learn_text("the cat sat on the mat, then the cats sat. " SENNRICH_TEXT, 40, 1);
    Bpe *b = learn_text(SENNRICH_TEXT " then the cats sat. the cat sat on the mat,", 40, 1);
    CHECK(a && b && same_lists(a, b), "learning depends on the order of the pieces");
    bpe_free(a);
    bpe_free(b);
}

/* The encoding by the rules, on strings: rounds of the least-ranked pair. */
static int naive_encode(const Bpe *b, const char *piece, int *ids) {
    char syms[64][256];
    int n = 0;
    for (size_t i = 0; piece[i]; i++, n++) sprintf(syms[n], "%s%c", i ? "" : M, piece[i]);
    for (;;) {
        int best = -1;
        for (int k = 0; k + 1 < n; k++)
            for (int r = 0; r < bpe_n_merges(b) && (best < 0 || r < best); r++) {
                const char *l, *rr;
                bpe_merge(b, r, &l, &rr);
                if (bpe_lookup(b, syms[k], strlen(syms[k])) != BPE_UNK &&
                    bpe_lookup(b, syms[k + 1], strlen(syms[k + 1])) != BPE_UNK && !strcmp(syms[k], l) &&
                    !strcmp(syms[k + 1], rr))
                    best = r;
            }
        if (best < 0) break;
        const char *l, *rr;
        bpe_merge(b, best, &l, &rr);
        char out[64][256];
        int m = 0;
        for (int k = 0; k < n; k++, m++) {
            int pair = k + 1 < n && !strcmp(syms[k], l) && !strcmp(syms[k + 1], rr);
            snprintf(out[m], sizeof out[m], "%s%s", syms[k], pair ? syms[k + 1] : "");
            k += pair;
        }
        memcpy(syms, out, sizeof syms);
        n = m;
    }
    for (int k = 0; k < n; k++) ids[k] = bpe_lookup(b, syms[k], strlen(syms[k]));
    return n;
}

/* Random words over a small alphabet: bpe_encode_piece against naive_encode. */
static void test_random_against_naive(void) {
    uint64_t s = 42;
    char text[20000], word[40];
    size_t len = 0;
    for (int w = 0; w < 2000; w++) {
        int n = 1;
        for (; n < 9; n++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            word[n - 1] = "aabbcde"[(s >> 33) % 7];
            if ((s >> 40) % 4 == 0) break;
        }
        memcpy(text + len, word, (size_t)n);
        len += (size_t)n;
        text[len++] = ' ';
    }
    text[len] = '\0';
    Bpe *b = learn_text(text, 80, 1);
    if (!b) return;
    int bad = 0;
    for (int t = 0; t < 500; t++) {
        int n = 1 + t % 30;
        for (int k = 0; k < n; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            word[k] = "aabbcdef"[(s >> 33) % 8];
        }
        word[n] = '\0';
        int want[64], got[64];
        int nw = naive_encode(b, word, want), ng = bpe_encode_piece(b, word, (size_t)n, got, 64);
        if (ng != nw || memcmp(want, got, (size_t)nw * sizeof(int)) != 0) bad++;
    }
    CHECK(bad == 0, "%d of 500 random pieces encode unlike the rules", bad);
    bpe_free(b);
}

/* A long piece with no spaces learns and encodes in reasonable time, and its
 * symbols spell it back. */
static void test_long_piece(void) {
    size_t n = getenv("CHECK_QUICK") ? 100000 : 1000000;
    char *piece = malloc(n + 1);
    int *ids = malloc(n * sizeof *ids);
    BpeCounter *c = bpe_counter_new();
    if (!piece || !ids || !c) {
        CHECK(0, "out of memory");
        goto done;
    }
    uint64_t s = 7;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        piece[i] = "abcd"[(s >> 33) % 4];
    }
    piece[n] = '\0';
    Bpe *b = NULL;
    char err[256] = "";
    CHECK(bpe_counter_add(c, piece, n) == 0 && bpe_learn(c, 400, 1, &b, err, sizeof err) == 0, "learn: %s", err);
    int got = b ? bpe_encode_piece(b, piece, n, ids, (int)n) : -1;
    CHECK(got > 0 && got < (int)n / 2, "long piece: %d ids", got);
    size_t at = 0;
    int spelled = got > 0 && strncmp(bpe_symbol(b, ids[0]), M, 3) == 0;
    for (int k = 0; spelled && k < got; k++) {
        const char *sym = bpe_symbol(b, ids[k]) + (k ? 0 : 3);
        size_t sl = strlen(sym);
        spelled = ids[k] >= BPE_N_SPECIAL && at + sl <= n && memcmp(piece + at, sym, sl) == 0;
        at += sl;
    }
    CHECK(spelled && at == n, "the symbols spell the long piece back");
    bpe_free(b);
    /* The same piece with the small vocabulary. */
    b = learn_text(SENNRICH, 100, 1);
    CHECK(b && bpe_encode_piece(b, piece, n, ids, (int)n) == (int)n, "unseen letters stay units");
    bpe_free(b);
done:
    bpe_counter_free(c);
    free(ids);
    free(piece);
}

int main(void) {
    test_sennrich();
    test_min_freq();
    test_vocab_cap();
    test_ties();
    test_overlap();
    test_existing_concat();
    test_specials();
    test_rounds();
    test_round_trip();
    test_refused();
    test_bad_arguments();
    test_truncation();
    test_invalid_utf8();
    test_determinism();
    test_random_against_naive();
    test_long_piece();
    return check_summary("test_bpe");
}
