/* test_columns.c: choosing the label and text columns of a CSV or TSV with a
 * header row (by name, any case, or 1-based number), the refusals naming the
 * header's columns, the one-text check predict applies, and "did you mean". */
#include "tests/check.h"
#include "base/suggest.h"
#include "text/dataset.h"

#include <string.h>

static char err[512];

static int parse(const char *path, const char *text, const char *label, const char *column, TextDataset *d) {
    DatasetColumns c = {label, column};
    err[0] = '\0';
    return dataset_parse_columns(path, text, strlen(text), &c, d, err, sizeof err);
}

static void expect_examples(const char *name, const char *path, const char *text, const char *label,
                            const char *column, int n, const char *first_label, const char *first_text) {
    TextDataset d;
    int rc = parse(path, text, label, column, &d);
    CHECK(rc == 0, "%s: refused: %s", name, err);
    if (rc != 0) return;
    CHECK(d.n == n, "%s: %d examples, expected %d", name, d.n, n);
    CHECK(d.n > 0 && strcmp(d.examples[0].label, first_label) == 0 && strcmp(d.examples[0].text, first_text) == 0,
          "%s: first example '%s' / '%s'", name, d.n ? d.examples[0].label : "", d.n ? d.examples[0].text : "");
    dataset_free(&d);
}

static void expect_refusal(const char *name, const char *path, const char *text, const char *label,
                           const char *column, const char *want1, const char *want2) {
    TextDataset d;
    int rc = parse(path, text, label, column, &d);
    CHECK(rc == ERR_INPUT, "%s: status %d, expected a refusal", name, rc);
    CHECK(strstr(err, want1) != NULL, "%s: message '%s' lacks '%s'", name, err, want1);
    CHECK(!want2 || strstr(err, want2) != NULL, "%s: message '%s' lacks '%s'", name, err, want2);
    if (rc == 0) dataset_free(&d);
}

int main(void) {
    const char *csv = "id,Review,Sentiment\n1,\"good, really\",pos\n2,bad,neg\n";
    expect_examples("CSV by name", "r.csv", csv, "sentiment", "review", 2, "pos", "good, really");
    expect_examples("CSV by name, header case", "r.csv", csv, "SENTIMENT", "Review", 2, "pos", "good, really");
    expect_examples("CSV by number", "r.csv", csv, "3", "2", 2, "pos", "good, really");
    expect_examples("CSV mixed", "r.csv", csv, "3", "review", 2, "pos", "good, really");
    expect_examples("CSV detected by header without .csv", "r.txt", csv, "sentiment", "review", 2, "pos",
                    "good, really");
    const char *tsv = "id\treview\tsentiment\n1\tgood one\tpos\n# a comment\n\n2\tbad one\tneg\n";
    expect_examples("TSV by name", "r.tsv", tsv, "sentiment", "review", 2, "pos", "good one");
    expect_examples("TSV by number", "r.tsv", tsv, "3", "2", 2, "pos", "good one");
    expect_examples("TSV, label and text among more columns, no choice", "w.tsv",
                    "id\ttext\tlabel\n1\tgood one\tpos\n2\tbad one\tneg\n", NULL, NULL, 2, "pos", "good one");
    expect_examples("plain TSV without header unchanged", "p.tsv", "pos\tgood\tone\nneg\tbad\n", NULL, NULL, 2,
                    "pos", "good\tone");
    expect_examples("plain TSV with label/text header unchanged", "p.tsv", "label\ttext\npos\tgood\n", "label",
                    "text", 1, "pos", "good");

    expect_refusal("CSV without the default columns", "r.csv", csv, NULL, NULL,
                   "r.csv:1: no 'label' column in the header ('id', 'Review', 'Sentiment')", "--label-column");
    expect_refusal("a mistyped name", "r.csv", csv, "sentimnt", "review", "no 'sentimnt' column",
                   "did you mean --label-column sentiment?");
    expect_refusal("a number beyond the header", "r.tsv", tsv, "4", "2", "r.tsv:1: --label-column 4: the header has 3",
                   "'id', 'review', 'sentiment'");
    expect_refusal("column 0", "r.tsv", tsv, "sentiment", "0", "--text-column 0: the header has 3", NULL);
    expect_refusal("the same column twice", "r.csv", csv, "2", "review", "both choose column 2", NULL);
    expect_refusal("a row with too few columns", "r.tsv", "id\treview\tsentiment\n1\tgood\n", "sentiment", "review",
                   "r.tsv:2: wrong number of fields: 2, the header has 3", NULL);
    expect_refusal("a header naming the column twice", "r.csv", "a,a,text\n1,2,x\n", "a", "text",
                   "names the 'a' column twice", "--label-column N");
    expect_refusal("empty chosen text", "r.tsv", "id\treview\tsentiment\n1\t \tpos\n", "sentiment", "review",
                   "r.tsv:2: empty text", NULL);

    /* one text as predict meets it: training's rules */
    size_t start = 99, len = 99;
    char why[128];
    CHECK(dataset_check_text("  good  ", 8, &start, &len, why, sizeof why) == TEXT_OK && start == 2 && len == 4,
          "trimmed to 'good': start %zu len %zu", start, len);
    CHECK(dataset_check_text(" \t\r ", 4, NULL, NULL, why, sizeof why) == TEXT_EMPTY && strcmp(why, "empty text") == 0,
          "blanks are empty: %s", why);
    CHECK(dataset_check_text("ab\0c", 4, NULL, NULL, why, sizeof why) == TEXT_INVALID &&
          strcmp(why, "a NUL byte at byte 3") == 0, "NUL: %s", why);
    CHECK(dataset_check_text("caf\xc3", 4, NULL, NULL, why, sizeof why) == TEXT_INVALID &&
          strcmp(why, "invalid UTF-8 at byte 4") == 0, "cut sequence: %s", why);
    CHECK(dataset_check_text("\xc0\xaf", 2, NULL, NULL, why, sizeof why) == TEXT_INVALID, "overlong refused");
    CHECK(dataset_check_text("caf\xc3\xa9", 5, NULL, NULL, why, sizeof why) == TEXT_OK, "valid UTF-8 accepted");

    /* did you mean */
    const char *options[] = {"epochs", "batch-size", "lr", "probs", "label-column", "text-column", "help"};
    size_t n = sizeof options / sizeof *options;
    CHECK(suggest_distance("epoch", "epochs", 3) == 1, "epoch/epochs");
    CHECK(suggest_distance("predcit", "predict", 3) == 1, "a swap is one edit");
    CHECK(suggest_distance("abcdefgh", "zzzzzzzz", 2) == 3, "beyond the limit gives limit + 1");
    const char *s = suggest_closest("epoch", options, n);
    CHECK(s && strcmp(s, "epochs") == 0, "epoch -> %s", s ? s : "(none)");
    s = suggest_closest("batch", options, n);
    CHECK(s && strcmp(s, "batch-size") == 0, "batch -> %s (the only option it starts)", s ? s : "(none)");
    s = suggest_closest("hlep", options, n);
    CHECK(s && strcmp(s, "help") == 0, "hlep -> %s", s ? s : "(none)");
    CHECK(suggest_closest("colour", options, n) == NULL, "colour suggests nothing");
    CHECK(suggest_closest("x", options, n) == NULL, "x suggests nothing");
    return check_summary("test_columns");
}
