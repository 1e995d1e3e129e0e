/* generate.c: writes the synthetic datasets (negation, before, rare) deterministically, and helps scripts/get-data.sh sample, split and read translation catalogues. */
/*
 * Standalone C11, libc only. Every random choice comes from the SplitMix64
 * generator below with a fixed seed per dataset, so the output is the same
 * byte for byte on every machine.
 *
 *   generate synthetic OUTDIR
 *       writes OUTDIR/{negation,before,rare}/{train,test}.tsv (folders must exist)
 *   generate pick N SEED < lines
 *       prints the N lines with the smallest seeded hash (all of them if fewer),
 *       in hash order: a deterministic random sample
 *   generate split TEST_PERCENT SEED TRAIN TEST < label<TAB>text lines
 *       stratified split: in each class, the TEST_PERCENT % (rounded) of lines
 *       with the smallest seeded hash go to TEST, the rest to TRAIN; both are
 *       appended to (so a caller can write a comment line first) in hash order
 *   generate mo FILE...
 *       prints the translations of GNU gettext catalogues (.mo), one a line:
 *       the first form of each msgstr that differs from its msgid, control
 *       characters as spaces; the header entry is skipped, and so is a file
 *       whose charset is not UTF-8 (with a note on stderr)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- small utilities ---------- */

static void die(const char *msg, const char *what) {
    fprintf(stderr, "generate: %s%s%s\n", msg, what ? ": " : "", what ? what : "");
    exit(1);
}

static void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) die("out of memory", NULL);
    return p;
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) die("out of memory", NULL);
    return p;
}

static char *xstrdup(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n);
    memcpy(d, s, n);
    return d;
}

/* SplitMix64: a tiny generator with a good 64-bit output mix. */
typedef struct { uint64_t state; } Rng;

static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint64_t rng_next(Rng *r) {
    r->state += 0x9E3779B97F4A7C15ull;
    return mix64(r->state);
}

/* Uniform integer in [0, n); the modulo bias is negligible for our small n. */
static int rng_below(Rng *r, int n) {
    return (int)(rng_next(r) % (uint64_t)n);
}

static int rng_between(Rng *r, int lo, int hi) {   /* inclusive */
    return lo + rng_below(r, hi - lo + 1);
}

/* FNV-1a over the bytes, then a seeded SplitMix64 mix. */
static uint64_t hash_bytes(const char *s, size_t n, uint64_t seed) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001B3ull;
    }
    return mix64(h ^ mix64(seed + 0x9E3779B97F4A7C15ull));
}

/* A growing string that joins tokens with single spaces. */
typedef struct { char *s; size_t len, cap; } Buf;

static void buf_add(Buf *b, const char *tok) {
    if (!tok[0]) return;                           /* empty pieces are skipped */
    size_t n = strlen(tok);
    if (b->len + n + 2 > b->cap) {
        b->cap = (b->len + n + 2) * 2;
        b->s = xrealloc(b->s, b->cap);
    }
    if (b->len) b->s[b->len++] = ' ';
    memcpy(b->s + b->len, tok, n);
    b->len += n;
    b->s[b->len] = 0;
}

static void buf_clear(Buf *b) {
    b->len = 0;
    if (b->s) b->s[0] = 0;
}

/* A set of strings (open addressing), used to keep texts and bags unique. */
typedef struct { char **slot; size_t cap, n; } StrSet;

static int set_has(const StrSet *s, const char *key) {
    if (!s->cap) return 0;
    size_t i = hash_bytes(key, strlen(key), 0) & (s->cap - 1);
    while (s->slot[i]) {
        if (!strcmp(s->slot[i], key)) return 1;
        i = (i + 1) & (s->cap - 1);
    }
    return 0;
}

static void set_add(StrSet *s, const char *key) {
    if ((s->n + 1) * 2 > s->cap) {                 /* grow and rehash */
        size_t cap = s->cap ? s->cap * 2 : 1024;
        char **slot = xmalloc(cap * sizeof *slot);
        memset(slot, 0, cap * sizeof *slot);
        for (size_t k = 0; k < s->cap; k++) {
            if (!s->slot[k]) continue;
            size_t i = hash_bytes(s->slot[k], strlen(s->slot[k]), 0) & (cap - 1);
            while (slot[i]) i = (i + 1) & (cap - 1);
            slot[i] = s->slot[k];
        }
        free(s->slot);
        s->slot = slot;
        s->cap = cap;
    }
    size_t i = hash_bytes(key, strlen(key), 0) & (s->cap - 1);
    while (s->slot[i]) {
        if (!strcmp(s->slot[i], key)) return;
        i = (i + 1) & (s->cap - 1);
    }
    s->slot[i] = xstrdup(key);
    s->n++;
}

static void set_free(StrSet *s) {
    for (size_t k = 0; k < s->cap; k++) free(s->slot[k]);
    free(s->slot);
    memset(s, 0, sizeof *s);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The text's whitespace-separated tokens sorted in byte order and joined with
 * spaces: two texts have the same bag exactly when their keys are equal. */
static char *bag_key(const char *text) {
    char *copy = xstrdup(text);
    size_t n = 0, cap = 16;
    char **tok = xmalloc(cap * sizeof *tok);
    for (char *p = strtok(copy, " "); p; p = strtok(NULL, " ")) {
        if (n == cap) tok = xrealloc(tok, (cap *= 2) * sizeof *tok);
        tok[n++] = p;
    }
    qsort(tok, n, sizeof *tok, cmp_str);
    Buf b = {0};
    for (size_t i = 0; i < n; i++) buf_add(&b, tok[i]);
    char *key = b.s ? b.s : xstrdup("");
    free(tok);
    free(copy);
    return key;
}

/* ---------- examples and output ---------- */

typedef struct { const char *label; char *text; } Example;
typedef struct { Example *ex; int n, cap; } ExampleList;

static void list_add(ExampleList *l, const char *label, const char *text) {
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 256;
        l->ex = xrealloc(l->ex, (size_t)l->cap * sizeof *l->ex);
    }
    l->ex[l->n].label = label;
    l->ex[l->n].text = xstrdup(text);
    l->n++;
}

static void list_free(ExampleList *l) {
    for (int i = 0; i < l->n; i++) free(l->ex[i].text);
    free(l->ex);
    memset(l, 0, sizeof *l);
}

/* Fisher-Yates, so that twins and groups do not sit next to each other. */
static void list_shuffle(ExampleList *l, Rng *r) {
    for (int i = l->n - 1; i > 0; i--) {
        int j = rng_below(r, i + 1);
        Example t = l->ex[i];
        l->ex[i] = l->ex[j];
        l->ex[j] = t;
    }
}

static void write_tsv(const char *dir, const char *name, const char *split, const char *comment,
                      const ExampleList *l) {
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s/%s.tsv", dir, name, split) >= (int)sizeof path)
        die("path too long", dir);
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot write", path);
    fprintf(f, "# %s %s, %d examples: %s Made by data/generate.c; rebuild with scripts/make-synthetic.sh.\n",
            name, split, l->n, comment);
    for (int i = 0; i < l->n; i++) fprintf(f, "%s\t%s\n", l->ex[i].label, l->ex[i].text);
    if (fclose(f) != 0) die("error writing", path);
}

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* ---------- negation: word order alone decides the label ---------- */

static const char *NEG_OPENERS[] = {"", "", "", "honestly ,", "overall ,", "i think", "to be fair ,", "in short ,"};
static const char *NEG_DETS[] = {"the", "this", "my", "our"};
static const char *NEG_NOUNS[] = {"food", "service", "movie", "hotel", "room", "staff", "book", "show",
                                  "meal", "coffee", "music", "game", "phone", "trip", "class", "view"};
static const char *NEG_VERBS[] = {"was", "is", "seemed", "felt", "looked"};
static const char *NEG_POS[] = {"good", "great", "nice", "fine", "lovely", "excellent", "pleasant",
                                "tasty", "friendly", "clean", "fresh", "fun", "amazing", "wonderful",
                                "decent", "brilliant", "perfect", "superb", "charming", "solid"};
static const char *NEG_NEG[] = {"bad", "awful", "poor", "boring", "dirty", "rude", "bland", "slow",
                                "terrible", "horrible", "dull", "cold", "noisy", "stale", "ugly",
                                "nasty", "weak", "lousy", "mediocre", "dreadful"};
static const char *NEG_INTENS[] = {"", "", "", "very", "really", "quite", "so"};
static const char *NEG_CONNS[] = {",", ",", "and", "but", ", but", ";"};
static const char *NEG_ENDS[] = {"", ".", "!"};

/* One clause "[intensifier] adjective", optionally preceded by "not". */
static void add_adj(Buf *b, int negated, const char *intens, const char *adj) {
    if (negated) buf_add(b, "not");
    buf_add(b, intens);
    buf_add(b, adj);
}

/* One review, the pos one ("good , not bad": "not" governs the negative
 * adjective) when pos is 1, else the neg one ("not good , bad"). Both hold the
 * same multiset of words: only where "not" stands decides the label. */
static void negation_text(Buf *b, int pos, const char *opener, const char *subject, const char *ip,
                          const char *p, const char *conn, const char *in, const char *n,
                          const char *end) {
    buf_clear(b);
    buf_add(b, opener);
    buf_add(b, subject);
    add_adj(b, !pos, ip, p);
    buf_add(b, conn);
    add_adj(b, pos, in, n);
    buf_add(b, end);
}

/* Pairs of examples, one pos and one neg with the same words; no text and no
 * bag of words occurs twice anywhere (so no pair shares its bag with another,
 * and train and test share none). */
static void make_negation_split(Rng *r, int pairs, StrSet *texts, StrSet *bags, ExampleList *out) {
    Buf pos = {0}, neg = {0}, subj = {0};
    int made = 0;
    while (made < pairs) {
        const char *opener = NEG_OPENERS[rng_below(r, COUNT(NEG_OPENERS))];
        buf_clear(&subj);
        buf_add(&subj, NEG_DETS[rng_below(r, COUNT(NEG_DETS))]);
        buf_add(&subj, NEG_NOUNS[rng_below(r, COUNT(NEG_NOUNS))]);
        buf_add(&subj, NEG_VERBS[rng_below(r, COUNT(NEG_VERBS))]);
        const char *ip = NEG_INTENS[rng_below(r, COUNT(NEG_INTENS))];
        const char *p = NEG_POS[rng_below(r, COUNT(NEG_POS))];
        const char *conn = NEG_CONNS[rng_below(r, COUNT(NEG_CONNS))];
        const char *in = NEG_INTENS[rng_below(r, COUNT(NEG_INTENS))];
        const char *n = NEG_NEG[rng_below(r, COUNT(NEG_NEG))];
        const char *end = NEG_ENDS[rng_below(r, COUNT(NEG_ENDS))];
        negation_text(&pos, 1, opener, subj.s, ip, p, conn, in, n, end);
        negation_text(&neg, 0, opener, subj.s, ip, p, conn, in, n, end);
        char *bag = bag_key(pos.s);
        if (!set_has(texts, pos.s) && !set_has(texts, neg.s) && !set_has(bags, bag)) {
            set_add(texts, pos.s);
            set_add(texts, neg.s);
            set_add(bags, bag);
            list_add(out, "pos", pos.s);
            list_add(out, "neg", neg.s);
            made++;
        }
        free(bag);
    }
    list_shuffle(out, r);
    free(pos.s);
    free(neg.s);
    free(subj.s);
}

static void make_negation(const char *dir) {
    Rng r = {0x6E65676174696F6Eull};               /* "negation" */
    StrSet texts = {0}, bags = {0};
    ExampleList train = {0}, test = {0};
    make_negation_split(&r, 1000, &texts, &bags, &train);
    make_negation_split(&r, 250, &texts, &bags, &test);
    const char *what = "label pos/neg (balanced) decided only by word order, e.g. \"good , not bad\" (pos)"
                       " vs \"not good , bad\" (neg); every example has a twin of the other class with the"
                       " same words.";
    write_tsv(dir, "negation", "train", what, &train);
    write_tsv(dir, "negation", "test", what, &test);
    list_free(&train);
    list_free(&test);
    set_free(&texts);
    set_free(&bags);
}

/* ---------- before: does x or y come first ---------- */

/* Filler tokens: a..w and 0..9 (never x, y, z). */
static const char *FILLER_BEFORE[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l",
                                      "m", "n", "o", "p", "q", "r", "s", "t", "u", "v", "w",
                                      "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
/* Filler tokens for rare: c..w and 0..9 (never a, b, x, y, z). */
static const char *FILLER_RARE[] = {"c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
                                    "o", "p", "q", "r", "s", "t", "u", "v", "w",
                                    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};

/* A random sequence of len tokens: fillers, with first at position i and
 * second at position j when those are >= 0. */
static void sequence_text(Buf *b, const char **seq, int len, int i, const char *first, int j,
                          const char *second) {
    buf_clear(b);
    for (int k = 0; k < len; k++) buf_add(b, k == i ? first : k == j ? second : seq[k]);
}

static void random_fillers(Rng *r, const char **filler, int nfiller, const char **seq, int len) {
    for (int k = 0; k < len; k++) seq[k] = filler[rng_below(r, nfiller)];
}

/* Two distinct positions i < j in [0, len). */
static void two_positions(Rng *r, int len, int *i, int *j) {
    *i = rng_below(r, len);
    do *j = rng_below(r, len); while (*j == *i);
    if (*i > *j) { int t = *i; *i = *j; *j = t; }
}

static void make_before_split(Rng *r, int pairs, StrSet *texts, StrSet *bags, ExampleList *out) {
    Buf xy = {0}, yx = {0};
    const char *seq[20];
    int made = 0;
    while (made < pairs) {
        int len = rng_between(r, 8, 20), i, j;
        random_fillers(r, FILLER_BEFORE, COUNT(FILLER_BEFORE), seq, len);
        two_positions(r, len, &i, &j);
        sequence_text(&xy, seq, len, i, "x", j, "y");
        sequence_text(&yx, seq, len, i, "y", j, "x");
        char *bag = bag_key(xy.s);
        if (!set_has(texts, xy.s) && !set_has(texts, yx.s) && !set_has(bags, bag)) {
            set_add(texts, xy.s);
            set_add(texts, yx.s);
            set_add(bags, bag);
            list_add(out, "x_first", xy.s);
            list_add(out, "y_first", yx.s);
            made++;
        }
        free(bag);
    }
    list_shuffle(out, r);
    free(xy.s);
    free(yx.s);
}

static void make_before(const char *dir) {
    Rng r = {0x6265666F7265ull};                   /* "before" */
    StrSet texts = {0}, bags = {0};
    ExampleList train = {0}, test = {0};
    make_before_split(&r, 1000, &texts, &bags, &train);
    make_before_split(&r, 250, &texts, &bags, &test);
    const char *what = "8-20 tokens from a..w and 0..9 holding one x and one y; label x_first/y_first"
                       " (balanced); every example has a twin of the other class with x and y swapped.";
    write_tsv(dir, "before", "train", what, &train);
    write_tsv(dir, "before", "test", what, &test);
    list_free(&train);
    list_free(&test);
    set_free(&texts);
    set_free(&bags);
}

/* ---------- rare: a 97/3 imbalanced order pattern ---------- */

/* Adds one example if its text is new; returns 1 when added. */
static int add_unique(StrSet *texts, ExampleList *out, const char *label, const char *text) {
    if (set_has(texts, text)) return 0;
    set_add(texts, text);
    list_add(out, label, text);
    return 1;
}

/* rare = the sequence holds an a somewhere before a b. Every rare example has
 * a common twin with a and b swapped; the other common examples hold b before
 * a (half of them), only a, only b, or neither. */
static void make_rare_split(Rng *r, int total, StrSet *texts, ExampleList *out) {
    int n_rare = total * 3 / 100;
    int rest = total - 2 * n_rare;
    int n_ba = rest / 2, n_a = rest / 5, n_b = rest / 5, n_none = rest - n_ba - n_a - n_b;
    Buf ab = {0}, ba = {0};
    const char *seq[20];
    int made = 0;
    while (made < n_rare) {
        int len = rng_between(r, 8, 20), i, j;
        random_fillers(r, FILLER_RARE, COUNT(FILLER_RARE), seq, len);
        two_positions(r, len, &i, &j);
        sequence_text(&ab, seq, len, i, "a", j, "b");
        sequence_text(&ba, seq, len, i, "b", j, "a");
        if (set_has(texts, ab.s) || set_has(texts, ba.s)) continue;
        add_unique(texts, out, "rare", ab.s);
        add_unique(texts, out, "common", ba.s);
        made++;
    }
    /* kind 0: b before a; 1: only a; 2: only b; 3: neither */
    int want[4] = {n_ba, n_a, n_b, n_none};
    for (int kind = 0; kind < 4; kind++) {
        made = 0;
        while (made < want[kind]) {
            int len = rng_between(r, 8, 20), i, j;
            random_fillers(r, FILLER_RARE, COUNT(FILLER_RARE), seq, len);
            two_positions(r, len, &i, &j);
            if (kind == 0) sequence_text(&ba, seq, len, i, "b", j, "a");
            else if (kind == 1) sequence_text(&ba, seq, len, i, "a", -1, "");
            else if (kind == 2) sequence_text(&ba, seq, len, i, "b", -1, "");
            else sequence_text(&ba, seq, len, -1, "", -1, "");
            made += add_unique(texts, out, "common", ba.s);
        }
    }
    list_shuffle(out, r);
    free(ab.s);
    free(ba.s);
}

static void make_rare(const char *dir) {
    Rng r = {0x72617265ull};                       /* "rare" */
    StrSet texts = {0};
    ExampleList train = {0}, test = {0};
    make_rare_split(&r, 3000, &texts, &train);
    make_rare_split(&r, 1000, &texts, &test);
    const char *what = "8-20 tokens from c..w and 0..9 plus a and/or b; label rare (3%) when an a comes"
                       " before a b, else common (97%); each rare example has a common twin with a and b"
                       " swapped, so always answering common scores 97% accuracy and 0% rare recall.";
    write_tsv(dir, "rare", "train", what, &train);
    write_tsv(dir, "rare", "test", what, &test);
    list_free(&train);
    list_free(&test);
    set_free(&texts);
}

/* ---------- helpers for the real data ---------- */

/* Reads all of stdin and cuts it into lines (no '\n'; a '\r' before it is
 * dropped too); blank lines and '#' comment lines are skipped. The lines point
 * into *data; free both when done. */
static char **read_lines(int *count, char **data_out) {
    size_t len = 0, cap = 1 << 20;
    char *data = xmalloc(cap);
    size_t got;
    while ((got = fread(data + len, 1, cap - len, stdin)) > 0) {
        len += got;
        if (len == cap) data = xrealloc(data, cap *= 2);
    }
    if (ferror(stdin)) die("error reading standard input", NULL);
    data = xrealloc(data, len + 1);
    data[len] = 0;
    int n = 0, ncap = 1024;
    char **lines = xmalloc((size_t)ncap * sizeof *lines);
    char *p = data;
    while (p < data + len) {
        char *nl = memchr(p, '\n', (size_t)(data + len - p));
        char *next = nl ? nl + 1 : data + len;
        char *end = nl ? nl : data + len;
        if (end > p && end[-1] == '\r') end--;
        *end = 0;
        if (*p && *p != '#') {
            if (n == ncap) lines = xrealloc(lines, (size_t)(ncap *= 2) * sizeof *lines);
            lines[n++] = p;
        }
        p = next;
    }
    *count = n;
    *data_out = data;
    return lines;
}

typedef struct { uint64_t hash; int index; const char *line; size_t label_len; } Keyed;

static int cmp_keyed(const void *a, const void *b) {
    const Keyed *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Class label first (byte order), then hash, then input position. */
static int cmp_keyed_label(const void *a, const void *b) {
    const Keyed *x = a, *y = b;
    size_t n = x->label_len < y->label_len ? x->label_len : y->label_len;
    int c = memcmp(x->line, y->line, n);
    if (c) return c;
    if (x->label_len != y->label_len) return x->label_len < y->label_len ? -1 : 1;
    return cmp_keyed(a, b);
}

static uint64_t parse_u64(const char *s, const char *what) {
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end) die("not a number", what);
    return (uint64_t)v;
}

static int cmd_pick(int argc, char **argv) {
    if (argc != 4) die("usage: generate pick N SEED < lines", NULL);
    uint64_t want = parse_u64(argv[2], "N"), seed = parse_u64(argv[3], "SEED");
    int n;
    char *data;
    char **lines = read_lines(&n, &data);
    Keyed *k = xmalloc((size_t)n * sizeof *k);
    for (int i = 0; i < n; i++) {
        k[i].hash = hash_bytes(lines[i], strlen(lines[i]), seed);
        k[i].index = i;
        k[i].line = lines[i];
        k[i].label_len = 0;
    }
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    for (int i = 0; i < n && (uint64_t)i < want; i++) printf("%s\n", k[i].line);
    free(k);
    free(lines);
    free(data);
    if (fflush(stdout) != 0) die("error writing standard output", NULL);
    return 0;
}

static void write_keyed(const char *path, Keyed *k, int n) {
    qsort(k, (size_t)n, sizeof *k, cmp_keyed);
    FILE *f = fopen(path, "ab");
    if (!f) die("cannot write", path);
    for (int i = 0; i < n; i++) fprintf(f, "%s\n", k[i].line);
    if (fclose(f) != 0) die("error writing", path);
}

static int cmd_split(int argc, char **argv) {
    if (argc != 6) die("usage: generate split TEST_PERCENT SEED TRAIN TEST < label<TAB>text lines", NULL);
    uint64_t pct = parse_u64(argv[2], "TEST_PERCENT"), seed = parse_u64(argv[3], "SEED");
    if (pct > 100) die("TEST_PERCENT must be 0..100", argv[2]);
    int n;
    char *data;
    char **lines = read_lines(&n, &data);
    Keyed *k = xmalloc((size_t)n * sizeof *k);
    for (int i = 0; i < n; i++) {
        const char *tab = strchr(lines[i], '\t');
        if (!tab || tab == lines[i] || !tab[1]) die("expected label<TAB>text, got", lines[i]);
        k[i].hash = hash_bytes(tab + 1, strlen(tab + 1), seed);   /* the text decides */
        k[i].index = i;
        k[i].line = lines[i];
        k[i].label_len = (size_t)(tab - lines[i]);
    }
    qsort(k, (size_t)n, sizeof *k, cmp_keyed_label);
    Keyed *train = xmalloc((size_t)n * sizeof *train), *test = xmalloc((size_t)n * sizeof *test);
    int ntrain = 0, ntest = 0;
    for (int start = 0; start < n;) {
        int end = start + 1;
        while (end < n && k[end].label_len == k[start].label_len &&
               !memcmp(k[end].line, k[start].line, k[start].label_len))
            end++;
        int size = end - start, to_test = (int)(((uint64_t)size * pct + 50) / 100);
        for (int i = start; i < end; i++) {
            Keyed e = k[i];
            e.hash = hash_bytes(e.line, strlen(e.line), seed + 1);  /* output order */
            if (i - start < to_test) test[ntest++] = e;
            else train[ntrain++] = e;
        }
        start = end;
    }
    write_keyed(argv[4], train, ntrain);
    write_keyed(argv[5], test, ntest);
    free(k);
    free(train);
    free(test);
    free(lines);
    free(data);
    return 0;
}

/* ---------- reading .mo catalogues ---------- */

/* A 32-bit word of the file at byte off, in the file's byte order. */
static uint32_t mo_word(const unsigned char *d, size_t off, int swap) {
    uint32_t v = (uint32_t)d[off] | (uint32_t)d[off + 1] << 8 | (uint32_t)d[off + 2] << 16 |
                 (uint32_t)d[off + 3] << 24;
    return swap ? (v >> 24) | (v >> 8 & 0xFF00u) | (v << 8 & 0xFF0000u) | v << 24 : v;
}

/* String i of the table at table_off: its bytes and length, checked to lie in
 * the file and to end in the NUL the format puts after each. */
static const char *mo_string(const unsigned char *d, size_t size, uint32_t table_off, uint32_t i, int swap,
                             uint32_t *len, const char *path) {
    size_t at = (size_t)table_off + (size_t)i * 8;
    if (at + 8 > size) die("a string table runs past the end of", path);
    uint32_t n = mo_word(d, at, swap), off = mo_word(d, at + 4, swap);
    if ((size_t)off + n >= size || d[(size_t)off + n]) die("a string runs past the end of", path);
    *len = n;
    return (const char *)d + off;
}

static void mo_print(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) die("cannot read", path);
    size_t size = 0, cap = 1 << 16, got;
    unsigned char *d = xmalloc(cap);
    while ((got = fread(d + size, 1, cap - size, f)) > 0) {
        size += got;
        if (size == cap) d = xrealloc(d, cap *= 2);
    }
    if (ferror(f)) die("error reading", path);
    fclose(f);
    if (size < 20) die("not a .mo file (too short)", path);
    int swap;
    if (mo_word(d, 0, 0) == 0x950412DEu) swap = 0;
    else if (mo_word(d, 0, 1) == 0x950412DEu) swap = 1;
    else die("not a .mo file (bad magic number)", path);
    uint32_t count = mo_word(d, 8, swap), orig = mo_word(d, 12, swap), trans = mo_word(d, 16, swap);
    for (uint32_t i = 0; i < count; i++) {
        uint32_t ilen, slen;
        const char *id = mo_string(d, size, orig, i, swap, &ilen, path);
        const char *str = mo_string(d, size, trans, i, swap, &slen, path);
        if (ilen == 0) {                           /* the header: "Content-Type: ...; charset=X" */
            const char *cs = strstr(str, "charset=");
            if (cs && strncmp(cs + 8, "UTF-8", 5) && strncmp(cs + 8, "utf-8", 5)) {
                fprintf(stderr, "generate: %s is not UTF-8; skipped\n", path);
                break;
            }
            continue;
        }
        /* the first form (plurals follow after a NUL); a msgid may start with
         * its context and an EOT byte */
        const char *nul = memchr(str, 0, slen), *eot = memchr(id, 4, ilen);
        size_t first = nul ? (size_t)(nul - str) : slen;
        if (eot) {
            ilen -= (uint32_t)(eot + 1 - id);
            id = eot + 1;
        }
        nul = memchr(id, 0, ilen);
        size_t idlen = nul ? (size_t)(nul - id) : ilen;
        if (first == 0 || (first == idlen && !memcmp(str, id, first))) continue;
        for (size_t k = 0; k < first; k++) {
            unsigned char c = (unsigned char)str[k];
            putchar(c < 32 || c == 127 ? ' ' : c);
        }
        putchar('\n');
    }
    free(d);
}

static int cmd_mo(int argc, char **argv) {
    if (argc < 3) die("usage: generate mo FILE...", NULL);
    for (int i = 2; i < argc; i++) mo_print(argv[i]);
    if (fflush(stdout) != 0) die("error writing standard output", NULL);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "synthetic")) {
        make_negation(argv[2]);
        make_before(argv[2]);
        make_rare(argv[2]);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "pick")) return cmd_pick(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "split")) return cmd_split(argc, argv);
    if (argc >= 2 && !strcmp(argv[1], "mo")) return cmd_mo(argc, argv);
    fprintf(stderr,
            "usage: generate synthetic OUTDIR\n"
            "       generate pick N SEED < lines\n"
            "       generate split TEST_PERCENT SEED TRAIN TEST < label<TAB>text lines\n"
            "       generate mo FILE...\n");
    return 2;
}
