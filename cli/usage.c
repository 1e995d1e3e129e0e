/* usage.c: the table of subcommands and what it drives (see usage.h). */
#include "cli/usage.h"

#include <stdio.h>
#include <string.h>

#include "base/errors.h"
#include "base/suggest.h"

/* Options no training reads: they belong to one of the other commands. */
static const char *const NOT_TRAINING = " model probs header strict png untrained backward label html html-max-mb ";
/* Options of a classifier's training only. */
#define PROBE_OPTIONS " -probe -probe-file -no-probes"
/* Options of a classifier's training run only (not of pretraining or compare-pe). */
#define AUTOTUNE_OPTIONS " -autotune -autotune-trials"

const CommandSpec COMMANDS[] = {
    {"fit",
     "./train DATA.tsv [options]\n"
     "./train fit DATA.tsv [options]\n"
     "./train DATA.tsv --autotune DURATION [options]\n"
     "./train --resume RUN [--epochs N] [--patience N] [--stop-after N] [--threads N] [--quiet]\n",
     "Trains a classifier on DATA: TSV (label<TAB>text per line), or CSV/TSV with a header\n"
     "row (--label-column, --text-column choose its columns). The run directory (--out)\n"
     "gets model.safetensors, state.safetensors, metrics.csv, curves.png, confusion.png,\n"
     "report.txt and run.json, and probes.jsonl: a few texts (--probe) walked through the\n"
     "model before the first epoch and after each (./train film RUN shows them).\n",
     "@training"},
    {"pretrain",
     "./train pretrain TEXTS [options]\n"
     "./train pretrain --resume RUN [--epochs N] [--patience N] [--stop-after N] [--threads N] [--quiet]\n",
     "Masked-language-model pretraining (BERT style) on TEXTS: a text file, one example a\n"
     "line, or a TSV/CSV whose labels are ignored. --val reads the same formats; without\n"
     "it --val-split holds out a seeded random share of TEXTS (not split by label).\n"
     "Learns the tokenizer from TEXTS, hides 15% of the tokens and trains the encoder to\n"
     "fill them in; the table shows the masked tokens' loss, accuracy and perplexity.\n"
     "[UNK] (a word outside the vocabulary) is never masked, so it is in none of them.\n"
     "Then ./train DATA.tsv --init RUN fine-tunes a classifier from this encoder.\n",
     "@training -class-weights -pool -test" PROBE_OPTIONS AUTOTUNE_OPTIONS},
    {"eval",
     "./train eval --model RUN DATA.tsv\n",
     "The classification report and confusion matrix of a saved model on labelled data,\n"
     "read as training reads its data. Examples longer than the model's max_len are\n"
     "truncated and counted on stderr; --strict makes that an error.\n",
     "model label-column text-column strict threads precision"},
    {"predict",
     "./train predict --model RUN [options] [TEXT ...]\n",
     "The label of each TEXT, or of each line of standard input when no TEXT is given:\n"
     "one output line per input. --probs adds every class's probability in label order,\n"
     "tab-separated; --header first prints a line naming the columns. Inputs are checked\n"
     "as training checks its data: a text longer than the model's max_len is truncated;\n"
     "an empty one, or one that is not UTF-8 or holds a NUL byte, gets an empty output\n"
     "line. stderr counts each kind; --strict makes the first of them an error (exit 2),\n"
     "after the inputs before it are answered.\n",
     "model probs header strict threads precision"},
    {"trace",
     "./train trace --model RUN TEXT\n"
     "./train trace --untrained [model options] TEXT\n",
     "Walks one text through the network, stage by stage: tokens, embeddings, positional\n"
     "encoding, each layer's attention, pooling, logits and softmax. --png DIR also draws\n"
     "each head's attention and the positional encoding. With --model the run's own\n"
     "configuration is used; the model options shape an --untrained model only (whose\n"
     "tokens are the text's own words unless --tokenizer is given).\n",
     "model untrained png backward label html html-max-mb threads d-model heads layers d-ff max-len activation norm pool pe "
     "tokenizer seed precision"},
    {"reproduce",
     "./train reproduce RUN [--out NEW]\n",
     "Re-runs a recorded run from RUN/run.json (refusing if its data changed) into\n"
     "RUN/reproduce or NEW, and compares the two metrics.csv traces: exit 0 when\n"
     "identical, 1 when not.\n",
     "out overwrite threads quiet"},
    {"diff",
     "./train diff RUN_A RUN_B\n",
     "Two runs' options (differences marked *) and traces side by side.\n",
     ""},
    {"film",
     "./train film RUN [--html FILE]\n",
     "The probes RUN recorded while training (RUN/probes.jsonl), epoch by epoch: per probe\n"
     "a table (predicted label, p(true label), each head's focus: the key with the most\n"
     "attention averaged over the queries, of the last layer when there are more than 8\n"
     "heads; the most salient token) and the moments that matter: an epoch where the\n"
     "prediction changes, the epoch from which a head keeps at least half its average\n"
     "weight on the key it ends on (\"every query\" when that key is every query's top\n"
     "one), and the epoch from which the most salient token is the one it ends as; each\n"
     "with the validation accuracy before and after. Writes RUN/film.html (or --html FILE), one\n"
     "self-contained page with a slider over the epochs, and RUN/film.png, the head that\n"
     "ends most focused at every epoch. Works while the run trains (the epochs so far).\n",
     "html"},
    {"compare-pe",
     "./train compare-pe DATA.tsv [options]\n",
     "Trains the same model twice with the same seed, with sinusoidal positional encoding\n"
     "and without, into OUT/pe-sinusoidal and OUT/pe-none (OUT: --out, default\n"
     "runs/<data-name>-compare-pe); prints both traces side by side and draws both runs'\n"
     "curves in OUT/compare.png.\n",
     "@training -pe -resume -stop-after" PROBE_OPTIONS AUTOTUNE_OPTIONS},
};
const int COMMAND_COUNT = (int)(sizeof COMMANDS / sizeof COMMANDS[0]);

const CommandSpec *usage_command(const char *name) {
    for (int i = 0; i < COMMAND_COUNT; i++)
        if (strcmp(COMMANDS[i].name, name) == 0) return &COMMANDS[i];
    return NULL;
}

const char *usage_suggest_command(const char *word) {
    const char *names[32];
    int n = 0;
    for (int i = 0; i < COMMAND_COUNT && n < 31; i++) names[n++] = COMMANDS[i].name;
    names[n++] = "help";
    return suggest_closest(word, names, (size_t)n);
}

/* 1 when the space-separated list holds the word as an item. */
static int list_has(const char *list, const char *word) {
    size_t len = strlen(word);
    for (const char *p = list; *p;) {
        while (*p == ' ') p++;
        const char *end = p;
        while (*end && *end != ' ') end++;
        if ((size_t)(end - p) == len && len > 0 && strncmp(p, word, len) == 0) return 1;
        p = end;
    }
    return 0;
}

int usage_allows(const CommandSpec *c, const char *option) {
    if (list_has(c->options, option)) return 1;
    char removed[80];
    snprintf(removed, sizeof removed, "-%s", option);
    return list_has(c->options, "@training") && !list_has(NOT_TRAINING, option) && !list_has(c->options, removed);
}

void usage_print(FILE *out, const CommandSpec *c) {
    const char *u = c->usage;
    for (int first = 1; *u; first = 0) {
        const char *nl = strchr(u, '\n');
        size_t n = nl ? (size_t)(nl - u) : strlen(u);
        fprintf(out, "%s%.*s\n", first ? "usage: " : "       ", (int)n, u);
        u += n + (nl ? 1 : 0);
    }
    fprintf(out, "\n%s\n", c->about);
    /* the command's own options in the order it lists them, then training's in table order */
    int any = 0;
    for (const char *p = c->options; *p;) {
        while (*p == ' ') p++;
        const char *end = p;
        while (*end && *end != ' ') end++;
        char name[80];
        snprintf(name, sizeof name, "%.*s", (int)(end - p), p);
        p = end;
        const OptionSpec *spec = options_find(name);
        if (!spec) continue;
        if (!any) fprintf(out, "options (default in brackets):\n");
        any = 1;
        options_help_line(out, spec);
    }
    for (int i = 0; list_has(c->options, "@training") && i < OPTION_COUNT; i++) {
        if (!usage_allows(c, OPTION_TABLE[i].name) || list_has(c->options, OPTION_TABLE[i].name)) continue;
        if (!any) fprintf(out, "options (default in brackets):\n");
        any = 1;
        options_help_line(out, &OPTION_TABLE[i]);
    }
    if (!any) fprintf(out, "options: none besides --help\n");
    fprintf(out, "  %-34s %s\n", "--help", "this text");
    fprintf(out, "\nexit codes: 0 success, 1 runtime failure, 2 bad usage or bad input%s\n",
            strcmp(c->name, "fit") == 0 || strcmp(c->name, "compare-pe") == 0 || strcmp(c->name, "reproduce") == 0
                ? ", 130 interrupted" : "");
}

/* The commands besides c that read the option, as "predict and trace". */
static void readers(const CommandSpec *c, const char *option, char *buf, size_t len) {
    const char *names[32];
    int n = 0;
    for (int i = 0; i < COMMAND_COUNT && n < 32; i++)
        if (&COMMANDS[i] != c && usage_allows(&COMMANDS[i], option))
            names[n++] = strcmp(COMMANDS[i].name, "fit") == 0 ? "training" : COMMANDS[i].name;
    buf[0] = '\0';
    size_t used = 0;
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
}

int usage_check_options(const CommandSpec *c, const Options *o) {
    for (int i = 0; i < OPTION_COUNT; i++) {
        const char *name = OPTION_TABLE[i].name;
        if (!options_given(o, name) || usage_allows(c, name)) continue;
        const char *where = strcmp(c->name, "fit") == 0 ? "training" : c->name;
        char others[256];
        readers(c, name, others, sizeof others);
        int fit = strcmp(c->name, "fit") == 0;
        fprintf(stderr, "error: --%s cannot act in %s%s%s%s (see ./train %s%s--help)\n", name, where,
                others[0] ? "; it is an option of " : "", others, others[0] ? " only" : "", fit ? "" : c->name,
                fit ? "" : " ");
        return EXIT_USAGE;
    }
    return EXIT_OK;
}
