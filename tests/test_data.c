/* test_data.c: data loading refusals and tolerances, CSV quoting, both
 * tokenizers, vocabulary, labels, encoding, batches, split and leakage. */
#include "tests/check.h"
#include "base/sha256.h"
#include "text/encode.h"
#include "text/split.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char err[512];

/* Parses a NUL-terminated buffer. */
static int parse(const char *path, const char *text, TextDataset *d) {
    err[0] = '\0';
    return dataset_parse(path, text, strlen(text), d, err, sizeof err);
}

/* ---- Refusals ---- */

typedef struct {
    const char *name;
    const char *path;
    const char *content;
    size_t len;             /* 0: strlen(content) */
    const char *want[3];    /* substrings the message must hold */
} Refusal;

static const Refusal REFUSALS[] = {
    {"no tab", "t.tsv", "a\tok\nno tab here\n", 0, {"t.tsv:2:", "tab"}},
    {"empty label", "t.tsv", "a\tok\n  \tsome text\n", 0, {"t.tsv:2:", "empty label"}},
    {"empty text", "t.tsv", "# c\na\t  \r\n", 0, {"t.tsv:2:", "empty text"}},
    {"bad byte", "t.tsv", "a\tok\nb\tab\xff\n", 0, {"t.tsv:2:", "UTF-8", "column 5"}},
    {"cut sequence", "t.tsv", "a\tcaf\xc3", 0, {"t.tsv:1:", "UTF-8", "column 6"}},
    {"overlong", "t.tsv", "a\t\xc0\xaf", 0, {"t.tsv:1:", "UTF-8", "column 3"}},
    {"surrogate", "t.tsv", "\n\na\tx\xed\xa0\x80y", 0, {"t.tsv:3:", "UTF-8", "column 4"}},
    {"above U+10FFFF", "t.tsv", "a\t\xf4\x90\x80\x80", 0, {"t.tsv:1:", "UTF-8", "column 3"}},
    {"bad byte in comment", "t.tsv", "# caf\xe9\na\tb\n", 0, {"t.tsv:1:", "UTF-8"}},
    {"NUL byte", "t.tsv", "a\tx\nb\tx\0y\n", 10, {"t.tsv:2:", "NUL", "column 4"}},
    {"empty file", "e.tsv", "", 0, {"e.tsv: no examples"}},
    {"only comments", "e.tsv", "# one\n\n  \r\n# two\n", 0, {"e.tsv: no examples"}},
    {"only a header", "e.tsv", "label\ttext\n", 0, {"e.tsv: no examples"}},
    {"CSV only a header", "e.csv", "label,text\r\n\r\n", 0, {"e.csv: no examples"}},
    {"CSV extra field", "c.csv", "label,text\na,b\na,b,c\n", 0, {"c.csv:3:", "fields"}},
    {"CSV missing field", "c.csv", "label,text\n\"a,b\"\n", 0, {"c.csv:2:", "fields"}},
    {"CSV open quote", "c.csv", "label,text\na,b\nx,\"never\nclosed\n\n", 0, {"c.csv:3:", "quote"}},
    {"CSV text after quote", "c.csv", "label,text\na,\"x\"y\n", 0, {"c.csv:2:", "closing quote", "column 6"}},
    {"CSV no label column", "c.csv", "\nname,text\na,b\n", 0, {"c.csv:2:", "label"}},
    {"CSV twice text", "c.csv", "label,text,TEXT\na,b,c\n", 0, {"c.csv:1:", "twice"}},
    {"CSV empty text", "c.csv", "label,text\na,\"  \"\n", 0, {"c.csv:2:", "empty text"}},
    {"CSV empty label", "c.csv", "text,label\nhi,\n", 0, {"c.csv:2:", "empty label"}},
    {"CSV by header bad", "c.txt", "label,text\na,b,c\n", 0, {"c.txt:2:", "fields"}},
    {"CSV bad UTF-8 inside quotes", "c.csv", "label,text\na,\"ok\nb\xc3(\"\n", 0, {"c.csv:3:", "UTF-8", "column 2"}},
    {"line after comments", "t.tsv", "# head\n\n\xEF\xBB\xBFx y\n", 0, {"t.tsv:3:", "tab"}},
};

static int contains(const char *haystack, const char *needle) { return strstr(haystack, needle) != NULL; }

static void test_refusals(void) {
    for (size_t i = 0; i < sizeof REFUSALS / sizeof REFUSALS[0]; i++) {
        const Refusal *r = &REFUSALS[i];
        TextDataset d;
        size_t len = r->len ? r->len : strlen(r->content);
        err[0] = '\0';
        int rc = dataset_parse(r->path, r->content, len, &d, err, sizeof err);
        CHECK(rc == ERR_INPUT, "%s: rc %d, want %d (%s)", r->name, rc, ERR_INPUT, err);
        CHECK(d.n == 0 && d.examples == NULL && d.path == NULL, "%s: dataset not left empty", r->name);
        for (int k = 0; k < 3 && r->want[k]; k++)
            CHECK(contains(err, r->want[k]), "%s: message '%s' lacks '%s'", r->name, err, r->want[k]);
    }
}

/* A 10 MB line, in a buffer and in a file: refused with its line and length. */
static void test_huge_line(void) {
    size_t big = (size_t)10 << 20;
    char *buf = malloc(big + 64);
    CHECK(buf != NULL, "malloc");
    if (!buf) return;
    size_t head = (size_t)sprintf(buf, "a\tshort\nb\t");
    memset(buf + head, 'x', big - head);
    memcpy(buf + big, "\nc\tok\n", 6);
    TextDataset d;
    int rc = dataset_parse("big.tsv", buf, big + 6, &d, err, sizeof err);
    char length[32];
    snprintf(length, sizeof length, "%zu", big - 8);     /* the line without "a\tshort\n" and its '\n' */
    CHECK(rc == ERR_INPUT, "huge line: rc %d", rc);
    CHECK(contains(err, "big.tsv:2:") && contains(err, "too long") && contains(err, length),
          "huge line message: %s (want length %s)", err, length);

    char path[] = "/tmp/test_data_bigXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd >= 0) {
        CHECK(write(fd, buf, big + 6) == (ssize_t)(big + 6), "write big file");
        close(fd);
        /* a file is a stream that may never end: refused at the limit, not measured */
        rc = dataset_read(path, &d, err, sizeof err);
        CHECK(rc == ERR_INPUT && contains(err, ":2:") && contains(err, "too long") && contains(err, "1048576"),
              "huge line in file: %d %s", rc, err);
        unlink(path);
    }
    free(buf);

    /* A line exactly at the limit is fine. */
    size_t limit = (size_t)1 << 20;
    char *edge = malloc(limit + 1);
    if (edge) {
        memcpy(edge, "a\t", 2);
        memset(edge + 2, 'y', limit - 2);
        rc = dataset_parse("edge.tsv", edge, limit, &d, err, sizeof err);
        CHECK(rc == 0 && d.n == 1 && strlen(d.examples[0].text) == limit - 2, "line at the limit: %d %s", rc, err);
        dataset_free(&d);
        edge[limit] = 'y';
        rc = dataset_parse("edge.tsv", edge, limit + 1, &d, err, sizeof err);
        CHECK(rc == ERR_INPUT && contains(err, ":1:"), "line one past the limit: %d %s", rc, err);
        free(edge);
    }
}

/* SHA-256 fed in pieces of any size equals the one-shot digest (FIPS 180-4 vectors). */
static void test_sha256_stream(void) {
    char hex[65];
    sha256_hex("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0, "sha256(abc) %s", hex);
    const char *msg = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    size_t len = strlen(msg);
    for (size_t piece = 1; piece <= 70; piece += 3) {
        Sha256 s;
        sha256_init(&s);
        for (size_t at = 0; at < len; at += piece) sha256_update(&s, msg + at, at + piece <= len ? piece : len - at);
        sha256_final_hex(&s, hex);
        CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0,
              "sha256 in pieces of %zu: %s", piece, hex);
    }
}

static void test_file_errors(void) {
    TextDataset d;
    /* an endless line (a stream of NUL bytes) is refused at the line limit, without reading on */
    int zero = dataset_read("/dev/zero", &d, err, sizeof err);
    CHECK(zero == ERR_INPUT && contains(err, "/dev/zero:1: line is too long"), "/dev/zero: %d %s", zero, err);
    int rc = dataset_read("/nonexistent/dir/data.tsv", &d, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "/nonexistent/dir/data.tsv: No such file or directory"),
          "missing file: %d %s", rc, err);
    rc = dataset_read("/tmp", &d, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "/tmp:") && contains(err, "directory"), "directory: %d %s", rc, err);
    char path[] = "/tmp/test_data_modeXXXXXX";
    int fd = mkstemp(path);
    if (fd >= 0) {
        CHECK(write(fd, "a\tb\n", 4) == 4, "write");
        close(fd);
        chmod(path, 0);
        if (geteuid() != 0) {   /* root reads anything */
            rc = dataset_read(path, &d, err, sizeof err);
            CHECK(rc == ERR_INPUT && contains(err, "Permission denied"), "unreadable: %d %s", rc, err);
        } else {
            printf("skip: an unreadable data file's message (root reads any file; tests/test_bad_input.sh runs it "
                   "as another user)\n");
        }
        unlink(path);
    }
}

/* ---- Tolerances ---- */

static void test_tsv_tolerances(void) {
    TextDataset d;
    int rc = parse("t.tsv", "\xEF\xBB\xBFpos\tgood movie\r\n\r\n# comment\tline\n  # indented comment\n"
                            "  neg \t  bad\tfilm  \r\n2\tlast without newline", &d);
    CHECK(rc == 0, "tolerant TSV: %s", err);
    CHECK(d.n == 3, "3 examples, got %d", d.n);
    if (d.n == 3) {
        CHECK(strcmp(d.examples[0].label, "pos") == 0 && strcmp(d.examples[0].text, "good movie") == 0,
              "BOM and CR gone: '%s' '%s'", d.examples[0].label, d.examples[0].text);
        CHECK(strcmp(d.examples[1].label, "neg") == 0 && strcmp(d.examples[1].text, "bad\tfilm") == 0,
              "trimmed, later tab kept in text: '%s' '%s'", d.examples[1].label, d.examples[1].text);
        CHECK(d.examples[0].line == 1 && d.examples[1].line == 5 && d.examples[2].line == 6, "line numbers %d %d %d",
              d.examples[0].line, d.examples[1].line, d.examples[2].line);
        CHECK(strcmp(d.examples[2].text, "last without newline") == 0, "last line");
    }
    CHECK(d.path && strcmp(d.path, "t.tsv") == 0, "path kept");
    dataset_free(&d);
    CHECK(d.n == 0 && d.examples == NULL, "freed");

    rc = parse("t.tsv", "Label\tText\nx\ty\n", &d);
    CHECK(rc == 0 && d.n == 1 && d.examples[0].line == 2, "TSV header line skipped: %d %s", rc, err);
    dataset_free(&d);
    rc = parse("t.tsv", "x\ty\nlabel\ttext\n", &d);
    CHECK(rc == 0 && d.n == 2, "a later label/text line is an example: %d", d.n);
    dataset_free(&d);
}

static void test_csv(void) {
    TextDataset d;
    const char *csv = "\xEF\xBB\xBF" "id,text,label\r\n"
                      "1,\"hello, world\",pos\r\n"
                      "\r\n"
                      "2,\"she said \"\"hi\"\"\",neg\r\n"
                      "3,\"two\r\nlines\",\"pos\"\r\n"
                      "4,  \"spaced\" , neg \r\n"
                      "5,plain \"quote\" inside,pos";
    int rc = parse("c.csv", csv, &d);
    CHECK(rc == 0, "CSV: %s", err);
    CHECK(d.n == 5, "CSV examples %d", d.n);
    if (d.n == 5) {
        CHECK(strcmp(d.examples[0].text, "hello, world") == 0 && strcmp(d.examples[0].label, "pos") == 0,
              "quoted comma: '%s'", d.examples[0].text);
        CHECK(strcmp(d.examples[1].text, "she said \"hi\"") == 0, "doubled quotes: '%s'", d.examples[1].text);
        CHECK(strcmp(d.examples[2].text, "two\nlines") == 0, "newline in quotes: '%s'", d.examples[2].text);
        CHECK(strcmp(d.examples[3].text, "spaced") == 0 && strcmp(d.examples[3].label, "neg") == 0, "spaces around quotes");
        CHECK(strcmp(d.examples[4].text, "plain \"quote\" inside") == 0, "bare quotes literal: '%s'", d.examples[4].text);
        CHECK(d.examples[0].line == 2 && d.examples[1].line == 4 && d.examples[2].line == 5 && d.examples[3].line == 7 &&
                  d.examples[4].line == 8,
              "CSV lines %d %d %d %d %d", d.examples[0].line, d.examples[1].line, d.examples[2].line, d.examples[3].line,
              d.examples[4].line);
    }
    dataset_free(&d);

    /* Not named .csv, but the first content line is a label,text header. */
    rc = parse("data.tsv", "# made by hand\n\nLabel , Text\nspam,\"buy, now\"\n", &d);
    CHECK(rc == 0 && d.n == 1 && strcmp(d.examples[0].text, "buy, now") == 0 && d.examples[0].line == 4,
          "CSV found by its header: %d %s", rc, err);
    dataset_free(&d);
    /* A TSV whose text has commas stays TSV. */
    rc = parse("data.tsv", "a\tlabel,text\n", &d);
    CHECK(rc == 0 && d.n == 1 && strcmp(d.examples[0].text, "label,text") == 0, "TSV with commas: %d %s", rc, err);
    dataset_free(&d);
}

/* The file reader (chunked) and the buffer parser agree, lines across chunk edges included. */
static void test_file_matches_buffer(void) {
    size_t cap = 400000, used = 0;
    char *buf = malloc(cap);
    if (!buf) return;
    for (int i = 0; used + 200 < cap; i++) {
        if (i % 7 == 3) used += (size_t)sprintf(buf + used, "# comment %d\r\n", i);
        used += (size_t)sprintf(buf + used, "c%d\tword %d %.*s\n", i % 3, i, i % 150, "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz");
    }
    char path[] = "/tmp/test_data_fileXXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0) { free(buf); return; }
    CHECK(write(fd, buf, used) == (ssize_t)used, "write");
    close(fd);
    TextDataset from_file, from_buf;
    int rc1 = dataset_read(path, &from_file, err, sizeof err);
    int rc2 = dataset_parse(path, buf, used, &from_buf, err, sizeof err);
    CHECK(rc1 == 0 && rc2 == 0, "both parse: %d %d %s", rc1, rc2, err);
    CHECK(from_file.n == from_buf.n && from_file.n > 1000, "same count %d %d", from_file.n, from_buf.n);
    int same = from_file.n == from_buf.n;
    for (int i = 0; same && i < from_file.n; i++)
        same = strcmp(from_file.examples[i].text, from_buf.examples[i].text) == 0 &&
               strcmp(from_file.examples[i].label, from_buf.examples[i].label) == 0 &&
               from_file.examples[i].line == from_buf.examples[i].line;
    CHECK(same, "file and buffer give the same examples");
    /* the file's digest, hashed chunk by chunk as it streamed in, is the whole file's */
    char whole[65];
    sha256_hex(buf, used, whole);
    CHECK(rc1 == 0 && strcmp(from_file.sha256, whole) == 0 && strcmp(from_buf.sha256, whole) == 0,
          "streamed SHA-256 %s, buffer %s, whole file %s", from_file.sha256, from_buf.sha256, whole);
    long newlines = 0;
    for (size_t i = 0; i < used; i++) newlines += buf[i] == '\n';
    CHECK(from_file.lines == newlines && from_buf.lines == newlines, "lines %ld %ld, expected %ld", from_file.lines,
          from_buf.lines, newlines);
    dataset_free(&from_file);
    dataset_free(&from_buf);
    unlink(path);
    free(buf);
}

/* ---- Tokenizers ---- */

typedef struct {
    char out[512];
} Joined;

/* Joins tokens with '|'; specials appear as <id>. */
static int join_token(const char *tok, size_t len, int special, void *ctx) {
    Joined *j = ctx;
    size_t used = strlen(j->out);
    if (used) j->out[used++] = '|';
    if (special >= 0) snprintf(j->out + used, sizeof j->out - used, "<%d>", special);
    else snprintf(j->out + used, sizeof j->out - used, "%.*s", (int)len, tok);
    return 0;
}

static const char *joined(TokenizerKind kind, const char *text) {
    static Joined j;
    j.out[0] = '\0';
    int rc = tokenize(kind, text, join_token, &j);
    CHECK(rc == 0, "tokenize rc %d", rc);
    return j.out;
}

static void test_tokenizers(void) {
    static const struct { TokenizerKind kind; const char *text, *want; } CASES[] = {
        {TOKENIZER_WORD, "Hello, World! It's", "hello|,|world|!|it|'|s"},
        {TOKENIZER_WORD, "[CLS]x[SEP] [MASK]y", "<2>|x|<3>|<4>|y"},
        {TOKENIZER_WORD, "[cls] [Sep] [MASKED] [MASK]ED", "[|cls|]|[|sep|]|[|masked|]|<4>|ed"},
        {TOKENIZER_WORD, "\xc3\x89" "clair \xc3\x80" "B DE", "\xc3\x89" "clair|\xc3\x80" "b|de"},
        {TOKENIZER_WORD, "x--y 3.14 a_b ~{}", "x|-|-|y|3|.|14|a|_|b|~|{|}"},
        {TOKENIZER_WORD, " \t tab\tand\nnew\r\vline\f ", "tab|and|new|line"},
        {TOKENIZER_WORD, "\xe6\x97\xa5\xe6\x9c\xac text\xf0\x9f\x98\x80!", "\xe6\x97\xa5\xe6\x9c\xac|text\xf0\x9f\x98\x80|!"},
        {TOKENIZER_WORD, "[SEP", "[|sep"},
        {TOKENIZER_WORD, "", ""},
        {TOKENIZER_WORD, "   ", ""},
        {TOKENIZER_CHAR, "Hi \xf0\x9f\x98\x80!", "H|i| |\xf0\x9f\x98\x80|!"},
        {TOKENIZER_CHAR, "a[CLS]b[MASK]", "a|<2>|b|<4>"},
        {TOKENIZER_CHAR, "\xc3\x89" "A[cls]", "\xc3\x89|A|[|c|l|s|]"},
        {TOKENIZER_CHAR, "a\tb", "a|\t|b"},
        {TOKENIZER_CHAR, "\xff" "a\xe2\x82", "\xff|a|\xe2|\x82"},
        /* ngram: "<token>", then its 2- to 5-grams, listed here by hand */
        {TOKENIZER_NGRAM, "Ab, c", "<ab>|<a|ab|b>|<ab|ab>|<,>|<,|,>|<c>|<c|c>"},
        {TOKENIZER_NGRAM, "[CLS]word", "<2>|<word>|<w|wo|or|rd|d>|<wo|wor|ord|rd>|<wor|word|ord>|<word|word>"},
        {TOKENIZER_NGRAM, "\xc3\xa9\xe6\x97\xa5",
         "<\xc3\xa9\xe6\x97\xa5>|<\xc3\xa9|\xc3\xa9\xe6\x97\xa5|\xe6\x97\xa5>|<\xc3\xa9\xe6\x97\xa5|\xc3\xa9\xe6\x97\xa5>"},
        {TOKENIZER_NGRAM, "a abcdefg",
         "<a>|<a|a>|<abcdefg>|<a|ab|bc|cd|de|ef|fg|g>|<ab|abc|bcd|cde|def|efg|fg>|<abc|abcd|bcde|cdef|defg|efg>|"
         "<abcd|abcde|bcdef|cdefg|defg>"},
        {TOKENIZER_NGRAM, "abc", "<abc>|<a|ab|bc|c>|<ab|abc|bc>|<abc|abc>"},
        {TOKENIZER_NGRAM, "\xff" "a", "<\xff" "a>|<\xff|\xff" "a|a>|<\xff" "a|\xff" "a>"},
        {TOKENIZER_NGRAM, " ", ""},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++) {
        const char *got = joined(CASES[i].kind, CASES[i].text);
        CHECK(strcmp(got, CASES[i].want) == 0, "%s tokenizer case %zu: got '%s', want '%s'",
              tokenizer_name(CASES[i].kind), i, got, CASES[i].want);
    }
    TokenizerKind k;
    CHECK(tokenizer_parse("char", &k) == 0 && k == TOKENIZER_CHAR, "parse char");
    CHECK(tokenizer_parse("word", &k) == 0 && k == TOKENIZER_WORD, "parse word");
    CHECK(tokenizer_parse("bpe", &k) == 0 && k == TOKENIZER_BPE, "parse bpe");
    CHECK(tokenizer_parse("ngram", &k) == 0 && k == TOKENIZER_NGRAM, "parse ngram");
    CHECK(tokenizer_parse("sentencepiece", &k) != 0, "parse unknown");
    CHECK(strcmp(tokenizer_name(TOKENIZER_CHAR), "char") == 0, "name");
}

/* ---- Vocabulary and labels ---- */

static void test_vocab(void) {
    TextDataset d;
    int rc = parse("v.tsv", "x\tc c C a b [CLS]\ny\ta b d Z\n", &d);
    CHECK(rc == 0, "vocab data: %s", err);
    Vocab v;
    rc = vocab_build(&v, TOKENIZER_WORD, &d, 0, 0, err, sizeof err);
    static const char *const FULL[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "c", "a", "b", "d", "z"};
    CHECK(rc == 0 && v.size == 10, "vocab size %d (%s)", v.size, err);
    for (int i = 0; i < v.size && i < 10; i++)
        CHECK(strcmp(v.tokens[i], FULL[i]) == 0, "vocab[%d] = '%s', want '%s'", i, v.tokens[i], FULL[i]);
    for (int i = 0; i < v.size; i++)
        CHECK(vocab_lookup(&v, v.tokens[i], strlen(v.tokens[i])) == i, "lookup %s", v.tokens[i]);
    CHECK(vocab_lookup(&v, "zz", 2) == TOKEN_UNK && vocab_lookup(&v, "ab", 1) == 6, "lookup by length");
    CHECK(vocab_lookup(&v, "a\0", 2) == TOKEN_UNK, "a NUL inside a token never matches");
    vocab_free(&v);

    rc = vocab_build(&v, TOKENIZER_WORD, &d, 7, 0, err, sizeof err);
    CHECK(rc == 0 && v.size == 7 && strcmp(v.tokens[6], "a") == 0, "capped at 7: %d", v.size);
    vocab_free(&v);
    rc = vocab_build(&v, TOKENIZER_WORD, &d, 0, 2, err, sizeof err);
    CHECK(rc == 0 && v.size == 8 && strcmp(v.tokens[7], "b") == 0, "min_freq 2: %d", v.size);
    vocab_free(&v);
    rc = vocab_build(&v, TOKENIZER_WORD, &d, 5, 0, err, sizeof err);
    CHECK(rc == 0 && v.size == 5, "only the specials: %d", v.size);
    vocab_free(&v);
    rc = vocab_build(&v, TOKENIZER_WORD, &d, 4, 0, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "vocab-size"), "cap below 5: %d %s", rc, err);
    rc = vocab_build(&v, TOKENIZER_WORD, &d, 0, -1, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "min-freq"), "negative min_freq: %d %s", rc, err);

    /* char mode: case kept, spaces are tokens, byte order breaks ties (Z < a < é). */
    rc = vocab_build(&v, TOKENIZER_CHAR, &d, 0, 0, err, sizeof err);
    CHECK(rc == 0 && v.size > 5, "char vocab");
    if (rc == 0 && v.size >= 13) {
        CHECK(strcmp(v.tokens[5], " ") == 0, "space most frequent: '%s'", v.tokens[5]);
        CHECK(strcmp(v.tokens[6], "a") == 0 && strcmp(v.tokens[8], "c") == 0, "a b c by bytes after counts");
        CHECK(vocab_lookup(&v, "C", 1) != TOKEN_UNK && vocab_lookup(&v, "Z", 1) != TOKEN_UNK, "upper case kept");
        CHECK(vocab_lookup(&v, "[", 1) == TOKEN_UNK, "literal [CLS] is not counted as characters");
    }
    /* Round trip through a token list. */
    Vocab back;
    rc = vocab_from_tokens(&back, v.tokens, v.size, err, sizeof err);
    CHECK(rc == 0 && back.size == v.size, "from_tokens: %s", err);
    for (int i = 0; rc == 0 && i < v.size; i++)
        CHECK(vocab_lookup(&back, v.tokens[i], strlen(v.tokens[i])) == i, "round trip id %d", i);
    vocab_free(&back);
    vocab_free(&v);
    dataset_free(&d);

    char *bad_order[] = {"[PAD]", "[CLS]", "[UNK]", "[SEP]", "[MASK]", "a"};
    rc = vocab_from_tokens(&v, bad_order, 6, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "token 1"), "specials out of order: %s", err);
    char *dup[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "a"};
    rc = vocab_from_tokens(&v, dup, 8, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "token 7") && contains(err, "twice"), "duplicate: %s", err);
    char *dup_special[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[PAD]"};
    rc = vocab_from_tokens(&v, dup_special, 6, err, sizeof err);
    CHECK(rc == ERR_INPUT, "a special twice: %s", err);
    char *with_null[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", NULL};
    rc = vocab_from_tokens(&v, with_null, 6, err, sizeof err);
    CHECK(rc == ERR_INPUT, "NULL token");
    rc = vocab_from_tokens(&v, bad_order, 3, err, sizeof err);
    CHECK(rc == ERR_INPUT && v.size == 0, "too short");
}

static void test_labels(void) {
    TextDataset d;
    int rc = parse("l.tsv", "2\tx\n10\tx\nb\tx\nB\tx\n10\ty\n\xc3\xa9\tz\n", &d);
    CHECK(rc == 0, "labels data");
    LabelSet l;
    rc = labels_build(&l, &d);
    static const char *const WANT[] = {"10", "2", "B", "b", "\xc3\xa9"};
    CHECK(rc == 0 && l.n == 5, "5 labels, got %d", l.n);
    for (int i = 0; i < l.n && i < 5; i++)
        CHECK(strcmp(l.names[i], WANT[i]) == 0, "label %d '%s' want '%s'", i, l.names[i], WANT[i]);
    CHECK(labels_index(&l, "2") == 1 && labels_index(&l, "b") == 3 && labels_index(&l, "3") == -1, "labels_index");
    LabelSet copy;
    CHECK(labels_from_names(&copy, l.names, l.n) == 0 && copy.n == 5, "from names");
    labels_free(&copy);
    char *unsorted[] = {"b", "a"};
    CHECK(labels_from_names(&copy, unsorted, 2) == ERR_INPUT, "unsorted names refused");
    char *twice[] = {"a", "a"};
    CHECK(labels_from_names(&copy, twice, 2) == ERR_INPUT, "duplicate names refused");
    labels_free(&l);
    dataset_free(&d);
}

/* ---- Encoding and batches ---- */

static void test_encode(void) {
    TextDataset train, val;
    CHECK(parse("train.tsv", "a\tone two three\nb\tone\nc\tfour five six seven\n", &train) == 0, "train");
    Vocab v;
    LabelSet l;
    CHECK(vocab_build(&v, TOKENIZER_WORD, &train, 0, 0, err, sizeof err) == 0, "vocab");
    CHECK(labels_build(&l, &train) == 0, "labels");
    int one = vocab_lookup(&v, "one", 3), two = vocab_lookup(&v, "two", 3), three = vocab_lookup(&v, "three", 5);
    int four = vocab_lookup(&v, "four", 4), five = vocab_lookup(&v, "five", 4);
    CHECK(one > 4 && two > 4 && three > 4 && four > 4, "tokens in vocab");

    int ids[8], truncated = -1;
    int n = encode_text("One TWO three", &v, TOKENIZER_WORD, 5, ids, &truncated);
    CHECK(n == 5 && truncated == 0 && ids[0] == TOKEN_CLS && ids[1] == one && ids[2] == two && ids[3] == three &&
              ids[4] == TOKEN_SEP, "exact fit: n %d trunc %d", n, truncated);
    n = encode_text("one two three four", &v, TOKENIZER_WORD, 5, ids, &truncated);
    CHECK(n == 5 && truncated == 1 && ids[3] == three && ids[4] == TOKEN_SEP, "truncated: n %d trunc %d", n, truncated);
    n = encode_text("one zebra [MASK]", &v, TOKENIZER_WORD, 8, ids, &truncated);
    CHECK(n == 5 && ids[2] == TOKEN_UNK && ids[3] == TOKEN_MASK, "unknown and special: n %d", n);
    n = encode_text("two one", &v, TOKENIZER_WORD, 3, ids, &truncated);
    CHECK(n == 3 && ids[1] == two && ids[2] == TOKEN_SEP && truncated == 1, "max_len 3");
    n = encode_text("", &v, TOKENIZER_WORD, 3, ids, &truncated);
    CHECK(n == 2 && ids[0] == TOKEN_CLS && ids[1] == TOKEN_SEP && truncated == 0, "empty text");
    CHECK(encode_text("one", &v, TOKENIZER_WORD, 2, ids, &truncated) < 0, "max_len 2 refused");

    EncodedDataset e;
    int rc = encode_dataset(&train, &v, TOKENIZER_WORD, &l, 4, &e, err, sizeof err);
    CHECK(rc == 0 && e.n == 3 && e.n_truncated == 2 && e.longest == 4, "encode_dataset: %d n %d trunc %d longest %d",
          rc, e.n, e.n_truncated, e.longest);
    CHECK(e.labels[0] == 0 && e.labels[1] == 1 && e.labels[2] == 2, "label indices");
    CHECK(e.lengths[0] == 4 && e.lengths[1] == 3 && e.lengths[2] == 4, "lengths");

    int batch[3 * 4], labels_out[3];
    for (int i = 0; i < 3 * 4; i++) batch[i] = -7;      /* padding must overwrite this */
    int order[3] = {1, 2, 0};
    int T = encoded_batch(&e, order, 2, batch, labels_out);
    int want_batch[] = {TOKEN_CLS, one, TOKEN_SEP, TOKEN_PAD, TOKEN_CLS, four, five, TOKEN_SEP};
    CHECK(T == 4 && memcmp(batch, want_batch, sizeof want_batch) == 0, "batch padded to T=%d", T);
    CHECK(labels_out[0] == 1 && labels_out[1] == 2, "batch labels");
    T = encoded_batch(&e, order, 1, batch, NULL);
    CHECK(T == 3 && batch[2] == TOKEN_SEP, "batch of the short one has no padding: T %d", T);
    int bad[1] = {3};
    CHECK(encoded_batch(&e, bad, 1, batch, labels_out) == -1, "index out of range refused");
    int counts[3];
    labels_count(e.labels, e.n, 3, counts);
    CHECK(counts[0] == 1 && counts[1] == 1 && counts[2] == 1, "class counts");
    encoded_free(&e);

    rc = encode_dataset(&train, &v, TOKENIZER_WORD, NULL, 64, &e, err, sizeof err);
    CHECK(rc == 0 && e.labels[0] == -1 && e.n_truncated == 0, "no labels: -1");
    encoded_free(&e);
    rc = encode_dataset(&train, &v, TOKENIZER_WORD, &l, 2, &e, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "max-len"), "max_len 2: %s", err);

    CHECK(parse("val.tsv", "a\tone\n\n\nzz\ttwo\n", &val) == 0, "val");
    rc = encode_dataset(&val, &v, TOKENIZER_WORD, &l, 16, &e, err, sizeof err);
    CHECK(rc == ERR_INPUT && contains(err, "val.tsv:4:") && contains(err, "label 'zz'") &&
              contains(err, "(a, b, c)"), "unknown label: %s", err);
    CHECK(e.n == 0 && e.ids == NULL, "encoded left empty");
    dataset_free(&val);

    int c2[4] = {9, 9, 9, 9}, lab[5] = {0, 3, 3, -1, 7};
    labels_count(lab, 5, 4, c2);
    CHECK(c2[0] == 1 && c2[1] == 0 && c2[2] == 0 && c2[3] == 2, "class_counts ignores out of range");
    vocab_free(&v);
    labels_free(&l);
    dataset_free(&train);
}

/* ---- Split and leakage ---- */

static void make_split_data(TextDataset *d) {
    char buf[4096];
    size_t used = 0;
    for (int i = 0; i < 10; i++) used += (size_t)sprintf(buf + used, "A\ta%d\n", i);
    for (int i = 0; i < 5; i++) used += (size_t)sprintf(buf + used, "B\tb%d\n", i);
    used += (size_t)sprintf(buf + used, "C\tonly one\nD\td0\nD\td1\n");
    for (int i = 0; i < 20; i++) used += (size_t)sprintf(buf + used, "E\te%d\n", i);
    for (int i = 0; i < 8; i++) used += (size_t)sprintf(buf + used, "F\tf%d\n", i);   /* 8 * 0.2 rounds to 2 */
    CHECK(parse("s.tsv", buf, d) == 0, "split data");
}

static int count_label(const TextDataset *d, const char *label) {
    int n = 0;
    for (int i = 0; i < d->n; i++) n += strcmp(d->examples[i].label, label) == 0;
    return n;
}

/* A string naming which lines went to val, for comparing splits. */
static void val_signature(const TextDataset *val, char *out, size_t size) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < val->n && used + 8 < size; i++) used += (size_t)sprintf(out + used, "%d,", val->examples[i].line);
}

static void test_split(void) {
    TextDataset all, train, val;
    make_split_data(&all);
    int rc = dataset_split(&all, 0.2, 42, &train, &val, err, sizeof err);
    CHECK(rc == 0, "split: %s", err);
    CHECK(train.n + val.n == all.n, "split covers all: %d + %d vs %d", train.n, val.n, all.n);
    CHECK(count_label(&val, "A") == 2 && count_label(&val, "B") == 1 && count_label(&val, "C") == 0 &&
              count_label(&val, "D") == 1 && count_label(&val, "E") == 4 && count_label(&val, "F") == 2,
          "stratified: A%d B%d C%d D%d E%d F%d", count_label(&val, "A"), count_label(&val, "B"), count_label(&val, "C"),
          count_label(&val, "D"), count_label(&val, "E"), count_label(&val, "F"));
    CHECK(count_label(&train, "C") == 1 && count_label(&train, "D") == 1, "train keeps one of each");
    int ordered = 1;
    for (int i = 1; i < train.n; i++) ordered &= train.examples[i - 1].line < train.examples[i].line;
    for (int i = 1; i < val.n; i++) ordered &= val.examples[i - 1].line < val.examples[i].line;
    CHECK(ordered, "file order kept within train and val");
    CHECK(dataset_leakage(&train, &val, NULL, 0) == 0, "no example in both");

    char first[512], again[512], other[512];
    val_signature(&val, first, sizeof first);
    dataset_free(&train);
    dataset_free(&val);
    CHECK(dataset_split(&all, 0.2, 42, &train, &val, err, sizeof err) == 0, "split again");
    val_signature(&val, again, sizeof again);
    CHECK(strcmp(first, again) == 0, "same seed, same split: %s vs %s", first, again);
    int differs = 0;
    for (uint64_t seed = 1; seed <= 5; seed++) {
        dataset_free(&train);
        dataset_free(&val);
        CHECK(dataset_split(&all, 0.2, seed, &train, &val, err, sizeof err) == 0, "split seed");
        val_signature(&val, other, sizeof other);
        differs += strcmp(first, other) != 0;
    }
    CHECK(differs >= 4, "other seeds give other splits (%d of 5 differ)", differs);
    dataset_free(&train);
    dataset_free(&val);

    CHECK(dataset_split(&all, 0.0, 1, &train, &val, err, sizeof err) == ERR_INPUT, "frac 0 refused");
    CHECK(dataset_split(&all, 1.0, 1, &train, &val, err, sizeof err) == ERR_INPUT && contains(err, "val-split"),
          "frac 1 refused: %s", err);
    dataset_free(&all);
    CHECK(parse("one.tsv", "a\tx\nb\ty\n", &all) == 0, "singletons");
    CHECK(dataset_split(&all, 0.5, 1, &train, &val, err, sizeof err) == ERR_INPUT && train.n == 0,
          "nothing to split off: %s", err);
    dataset_free(&all);
}

static void test_leakage(void) {
    TextDataset train, other;
    CHECK(parse("tr.tsv", "a\thello world\nb\tfoo\na\tfoo\n", &train) == 0, "train");
    CHECK(parse("te.tsv", "a\tfoo\nb\t  hello world  \nb\tHello world\nb\thello  world\na\tbar\nb\tfoo\n", &other) == 0,
          "other");
    int lines[2] = {0, 0};
    int n = dataset_leakage(&train, &other, lines, 2);
    CHECK(n == 3 && lines[0] == 1 && lines[1] == 2, "leakage %d at %d %d", n, lines[0], lines[1]);
    CHECK(dataset_leakage(&other, &train, NULL, 0) == 3, "leakage the other way");
    dataset_free(&train);
    dataset_free(&other);
}

int main(void) {
    test_refusals();
    test_huge_line();
    test_sha256_stream();
    test_file_errors();
    test_tsv_tolerances();
    test_csv();
    test_file_matches_buffer();
    test_tokenizers();
    test_vocab();
    test_labels();
    test_encode();
    test_split();
    test_leakage();
    return check_summary("test_data");
}
