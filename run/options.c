/* options.c: the option table and what is driven by it: parsing with
 * clear errors, --help with defaults, and the JSON form kept in run.json. */
#include "run/options.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/suggest.h"

#define OFF(field) offsetof(Options, field)

const OptionSpec OPTION_TABLE[] = {
    /* name, kind, field, default, min, max, choices, help, recorded */
    {"epochs", OPT_INT, OFF(epochs), "30", 1, 1e6, "auto",
     "training epochs (the total when resuming; without this option, the most: see --cycle); auto: about 1200 steps' worth, at least 2 and at most 40, "
     "faster on large sets but short of 30 epochs' accuracy on some (docs/USAGE.md; run.json records the number "
     "chosen)", 1},
    {"cycle", OPT_INT, OFF(cycle), "auto", 1, 1e6, NULL,
     "epochs in the first learning-rate cycle (warmup, then cosine decay to 0), each later one twice as long, cut at "
     "--epochs; classifying with a validation set and no --patience, after a cycle the run trains the next only "
     "when the val loss at its end is below all before the cycle's second half (docs/DESIGN.md, 4.6). auto: 10 when --epochs is not given (classifying, with a "
     "validation set, no --patience), else --epochs: one cycle (run.json records the number)", 1},
    {"batch-size", OPT_INT, OFF(batch_size), "32", 1, 65536, NULL, "examples per step", 1},
    {"accum-steps", OPT_INT, OFF(accum_steps), "1", 1, 65536, NULL,
     "gradient accumulation: a step's examples go through in micro-batches of batch-size / (this x MPI ranks), "
     "their gradients summed before one sum over the ranks and one AdamW step (the same step, less memory)", 1},
    {"lr", OPT_DOUBLE, OFF(lr), "0.003", 0, 10, NULL, "peak learning rate (AdamW)", 1},
    {"weight-decay", OPT_DOUBLE, OFF(weight_decay), "0.1", 0, 10, NULL,
     "decoupled weight decay on matrices and embeddings", 1},
    {"warmup", OPT_DOUBLE, OFF(warmup), "0.1", 0, 1e9, NULL,
     "warmup: below 1 a fraction of all steps (of each cycle's, see --cycle), else a step count; then cosine decay", 1},
    {"clip", OPT_DOUBLE, OFF(clip), "1.0", 0, 1e9, NULL, "clip the global gradient norm (0: off)", 1},
    {"d-model", OPT_INT, OFF(d_model), "64", 1, 1 << 20, NULL, "model width", 1},
    {"heads", OPT_INT, OFF(heads), "4", 1, 1 << 20, NULL, "attention heads (must divide --d-model)", 1},
    {"layers", OPT_INT, OFF(layers), "2", 1, 1000, NULL, "encoder layers", 1},
    {"d-ff", OPT_INT, OFF(d_ff), "256", 1, 1 << 20, NULL, "feed-forward width", 1},
    {"max-len", OPT_INT, OFF(max_len), "auto", 3, 65536, NULL,
     "longest sequence, [CLS] and [SEP] included; auto: the smallest multiple of 8 holding 99% of the training "
     "sequences, at most 256", 1},
    {"dropout", OPT_DOUBLE, OFF(dropout), "0.1", 0, 0.999, NULL, "dropout probability", 1},
    {"activation", OPT_CHOICE, OFF(activation), "relu", 0, 0, "relu|gelu", "feed-forward activation", 1},
    {"norm", OPT_CHOICE, OFF(norm), "post", 0, 0, "post|pre", "LayerNorm after (post) or before (pre) each sub-layer", 1},
    {"pool", OPT_CHOICE, OFF(pool), "mean", 0, 0, "mean|cls", "pooling: mean over tokens, or the [CLS] position", 1},
    {"pe", OPT_CHOICE, OFF(pe), "sinusoidal", 0, 0, "sinusoidal|learned|none", "positional encoding", 1},
    {"precision", OPT_CHOICE, OFF(precision), "auto", 0, 0, "auto|fp32|bf16|amx",
     "the matrix products' inputs: fp32, or bf16 (rounded to bfloat16, summed in float32; on AVX-512 BF16, "
     "emulated elsewhere), or amx (the same inputs, summed as AMX's tile product sums them; on AMX, emulated "
     "elsewhere); weights, optimizer and checkpoints stay float32. auto: bf16 on a CPU whose AVX-512 "
     "BF16 outruns its float32 (AMD's), amx on one with AMX (Intel's), else fp32 (run.json records the one chosen). predict, eval and trace use the model's recorded "
     "precision unless this is given; training's default:", 1},
    {"tokenizer", OPT_CHOICE, OFF(tokenizer), "bpe", 0, 0, "bpe|word|char|ngram",
     "bpe: subwords learned from the training texts; word: words; char: characters; ngram: each word as <word>, "
     "then its character 2- to 5-grams, the most frequent kept as the vocabulary", 1},
    {"vocab-size", OPT_INT, OFF(vocab_size), "2000", 6, 1 << 24, NULL,
     "vocabulary size, the 5 specials included (bpe: symbols to learn; word, char, ngram: a cap)", 1},
    {"bpe-dropout", OPT_DOUBLE, OFF(bpe_dropout), "0.1", 0, 0.999, NULL,
     "bpe: while training, split each merged subword of a batch back into its two parts with this probability "
     "(subword regularisation; 0: off)", 1},
    {"swa", OPT_DOUBLE, OFF(swa), "0.5", 0, 1, NULL,
     "stochastic weight averaging: the weights at the ends of the last epochs (of each cycle, see --cycle), this fraction of them, are "
     "averaged; the mean becomes the model when its validation loss is lower (0: off; not with --patience)", 1},
    {"group-by-length", OPT_FLAG, OFF(group_by_length), "1", 0, 0, NULL,
     "training batches of texts of similar lengths, so less padding is computed: each epoch's shuffled order is "
     "cut into windows of 50 batches, each sorted by length, and the full batches' order shuffled "
     "(--group-by-length=false: the plain shuffle)", 1},
    {"min-freq", OPT_INT, OFF(min_freq), "1", 1, 1 << 30, NULL, "drop tokens seen fewer times in training", 1},
    {"val", OPT_STRING, OFF(val_path), "", 0, 0, NULL, "validation file (default: split from the training data)", 1},
    {"val-split", OPT_DOUBLE, OFF(val_split), "0.1", 0, 0.9, NULL,
     "fraction held out for validation when no --val is given (0: none)", 1},
    {"test", OPT_STRING, OFF(test_path), "", 0, 0, NULL, "test file, reported at the end", 1},
    {"class-weights", OPT_CHOICE, OFF(class_weights), "none", 0, 0, "none|balanced",
     "loss weights: balanced = n / (classes * n_class)", 1},
    {"patience", OPT_INT, OFF(patience), "0", 0, 1e6, NULL,
     "early stopping: epochs without a better val loss (0: off); restores the best weights", 1},
    {"seed", OPT_LONG, OFF(seed), "42", 0, 9.2e18, NULL, "seed for initialisation, split, shuffling and dropout", 1},
    {"threads", OPT_INT, OFF(threads), "0", 0, 4096, NULL, "OpenMP threads (0: all cores)", 0},
    {"out", OPT_STRING, OFF(out_dir), "", 0, 0, NULL, "run directory (default runs/<data-name>)", 0},
    {"resume", OPT_STRING, OFF(resume_dir), "", 0, 0, NULL, "continue the run in this directory", 0},
    {"stop-after", OPT_INT, OFF(stop_after), "0", 0, 1e6, NULL,
     "stop after this epoch, saving state to --resume later (0: run all epochs)", 0},
    {"quiet", OPT_FLAG, OFF(quiet), "0", 0, 1, NULL, "print only the epoch table and errors", 0},
    {"overwrite", OPT_FLAG, OFF(overwrite), "0", 0, 1, NULL, "replace the run already in the run directory (without it, training there is refused)", 0},
    {"model", OPT_STRING, OFF(model_dir), "", 0, 0, NULL, "eval/predict/trace: the run directory to load", 0},
    {"probs", OPT_FLAG, OFF(probs), "0", 0, 1, NULL, "predict: also print every class probability", 0},
    {"png", OPT_STRING, OFF(png_dir), "", 0, 0, NULL, "trace: write attention and PE heatmaps here", 0},
    {"task", OPT_CHOICE, OFF(task), "classify", 0, 0, "classify|pretrain", "what the run trains; ./train pretrain TEXTS sets pretrain (masked tokens)", 1},
    {"init", OPT_STRING, OFF(init_dir), "", 0, 0, NULL, "start from a pretrain run (or a classifier's): its tokenizer, embeddings and encoder; its head is dropped, a "
     "fresh one made", 1},
    {"untrained", OPT_FLAG, OFF(untrained), "0", 0, 1, NULL, "trace: use a freshly initialised model", 0},
    {"label-column", OPT_STRING, OFF(label_column), "label", 0, 0, NULL,
     "CSV/TSV with a header row: the label column, by name or 1-based number", 1},
    {"text-column", OPT_STRING, OFF(text_column), "text", 0, 0, NULL,
     "CSV/TSV with a header row: the text column, by name or 1-based number", 1},
    {"header", OPT_FLAG, OFF(header), "0", 0, 1, NULL, "predict: first print a line naming the columns", 0},
    {"strict", OPT_FLAG, OFF(strict), "0", 0, 1, NULL,
     "predict/eval: an input truncated, empty or invalid is an error", 0},
    {"backward", OPT_FLAG, OFF(backward), "0", 0, 1, NULL, "trace: also walk the loss's gradient back to the embeddings", 0},
    {"label", OPT_STRING, OFF(label), "", 0, 0, NULL, "trace --backward: the label whose loss is differentiated (default: the predicted one)", 0},
    {"html", OPT_STRING, OFF(html_path), "", 0, 0, NULL, "trace, film: write the page here (film: default RUN/film.html)", 0},
    {"html-max-mb", OPT_INT, OFF(html_max_mb), "20", 1, 1e6, NULL,
     "trace --html: the largest page written, in MB (10^6 bytes); the page grows with the square of the text's "
     "length times layers x heads, and one estimated larger is refused, saying its size", 0},
    {"probe", OPT_STRING, OFF(probe_texts), "", 0, 0, NULL,
     "a text whose prediction, attention and saliency are recorded every epoch into RUN/probes.jsonl "
     "(repeatable; default: up to 4 validation examples, one per class)", 0},
    {"probe-file", OPT_STRING, OFF(probe_file), "", 0, 0, NULL,
     "probe texts, one a line, or label<TAB>text lines (then the loss for the label is recorded too)", 0},
    {"autotune", OPT_STRING, OFF(autotune), "", 0, 0, NULL,
     "search the options that matter for this long (600, 90s, 10m, 1h), judged on the validation split: trials in "
     "RUN/trials, each recorded in RUN/trials.jsonl; the best becomes the run unless its lead over the options as "
     "given is within one standard error (docs/USAGE.md)", 1},
    {"autotune-trials", OPT_INT, OFF(autotune_trials), "0", 0, 999, NULL,
     "--autotune: at most this many trials (0: as many as the time allows); a fixed count repeats exactly", 1},
    {"no-probes", OPT_FLAG, OFF(no_probes), "0", 0, 1, NULL, "record no probes (see --probe)", 0},
};
const int OPTION_COUNT = (int)(sizeof OPTION_TABLE / sizeof OPTION_TABLE[0]);

#define OPTION_LIMIT 64
_Static_assert(sizeof OPTION_TABLE / sizeof OPTION_TABLE[0] <= OPTION_LIMIT, "the 'given' bit set holds 64 options");

static void *field(Options *o, const OptionSpec *s) { return (char *)o + s->offset; }
static const void *cfield(const Options *o, const OptionSpec *s) { return (const char *)o + s->offset; }

int options_pretrain(const Options *o) { return o->task && strcmp(o->task, "pretrain") == 0; }

const OptionSpec *options_find(const char *name) {
    for (int i = 0; i < OPTION_COUNT; i++)
        if (strcmp(OPTION_TABLE[i].name, name) == 0) return &OPTION_TABLE[i];
    return NULL;
}

static int choice_valid(const char *choices, const char *value) {
    size_t len = strlen(value);
    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (n == len && strncmp(p, value, n) == 0) return 1;
        p += n + (bar ? 1 : 0);
    }
    return 0;
}

/* An int option that takes "auto" (kept as 0): its default is auto, or its
 * choices name it. */
static int takes_auto(const OptionSpec *s) {
    return strcmp(s->default_value, "auto") == 0 || (s->choices && strcmp(s->choices, "auto") == 0);
}

int options_set(Options *o, const OptionSpec *s, const char *value, char *err, size_t errlen) {
    char *end;
    errno = 0;
    switch (s->kind) {
    case OPT_INT:
    case OPT_LONG: {
        if (s->kind == OPT_INT && takes_auto(s) && strcmp(value, "auto") == 0) {
            *(int *)field(o, s) = 0;   /* an option whose default is auto takes it back as 0 */
            return 0;
        }
        long long v = strtoll(value, &end, 10);
        if (end == value || *end) {
            return fail(err, errlen, ERR_INPUT, "--%s: '%s' is not a whole number", s->name, value);
        }
        if (errno == ERANGE) {
            return fail(err, errlen, ERR_INPUT, "--%s: %s is out of range [%.0f, %.0f]", s->name, value, s->min, s->max);
        }
        if ((double)v < s->min || (double)v > s->max) {
            return fail(err, errlen, ERR_INPUT, "--%s: %lld is out of range [%.0f, %.0f]", s->name, v, s->min, s->max);
        }
        if (s->kind == OPT_INT) *(int *)field(o, s) = (int)v;
        else *(long long *)field(o, s) = v;
        return 0;
    }
    case OPT_DOUBLE: {
        double v = strtod(value, &end);
        if (end == value || *end || (!isfinite(v) && errno != ERANGE)) {
            return fail(err, errlen, ERR_INPUT, "--%s: '%s' is not a number", s->name, value);
        }
        if (errno == ERANGE) {   /* beyond a double, or so near 0 that it underflows */
            return fail(err, errlen, ERR_INPUT, "--%s: %s is out of range [%g, %g]%s", s->name, value, s->min, s->max,
                     isfinite(v) ? " (too near 0 for a double: give 0 or a larger value)" : "");
        }
        if (v < s->min || v > s->max) {
            return fail(err, errlen, ERR_INPUT, "--%s: %g is out of range [%g, %g]", s->name, v, s->min, s->max);
        }
        *(double *)field(o, s) = v;
        return 0;
    }
    case OPT_CHOICE:
        if (!choice_valid(s->choices, value)) {
            return fail(err, errlen, ERR_INPUT, "--%s: '%s' is not one of %s", s->name, value, s->choices);
        }
        /* fall through */
    case OPT_STRING: {
        char *old = *(char **)field(o, s);
        double seconds;
        if (s->offset == OFF(autotune) && *value && options_duration(value, &seconds) != 0)
            return fail(err, errlen, ERR_INPUT, "--autotune: '%s' is not a duration; give seconds (600) or a number "
                        "with s, m or h (90s, 10m, 1h), above 0", value);
        if (s->offset == OFF(probe_texts) && strchr(value, '\n'))
            return fail(err, errlen, ERR_INPUT, "--probe: a probe text is one line (several texts: --probe once for each)");
        if (s->offset == OFF(probe_texts) && old && *old) {   /* --probe again: one more text, a line of its own */
            size_t n = strlen(old);
            char *joined = realloc(old, n + strlen(value) + 2);
            if (!joined) return fail(err, errlen, ERR_RUNTIME, "out of memory");
            joined[n] = '\n';
            strcpy(joined + n + 1, value);
            *(char **)field(o, s) = joined;
            return 0;
        }
        char *copy = strdup(value);
        if (!copy) {
            return fail(err, errlen, ERR_RUNTIME, "out of memory");
        }
        free(*(char **)field(o, s));
        *(char **)field(o, s) = copy;
        return 0;
    }
    case OPT_FLAG: {
        /* --flag alone is on; --flag=VALUE must say plainly which (a value
         * read as "on" by mistake could, for --overwrite, replace a run) */
        static const char *const on[] = {"1", "true", "yes", "on"}, *const off[] = {"0", "false", "no", "off"};
        for (int i = 0; i < 4; i++) {
            if (strcasecmp(value, on[i]) == 0 || strcasecmp(value, off[i]) == 0) {
                *(int *)field(o, s) = strcasecmp(value, on[i]) == 0;
                return 0;
            }
        }
        return fail(err, errlen, ERR_INPUT, "--%s is a switch: give it alone, or as --%s=true or --%s=false (got '%s')", s->name,
                 s->name, s->name, value);
    }
    }
    return ERR_INPUT;
}

int options_duration(const char *text, double *seconds) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    double unit = *end == 's' ? 1 : *end == 'm' ? 60 : *end == 'h' ? 3600 : *end ? 0 : 1;
    if (end == text || unit == 0 || (*end && end[1]) || errno || !isfinite(v) || !(v > 0) || v * unit > 1e9)
        return -1;
    *seconds = v * unit;
    return 0;
}

void options_defaults(Options *o) {
    memset(o, 0, sizeof *o);
    char err[128];
    for (int i = 0; i < OPTION_COUNT; i++) options_set(o, &OPTION_TABLE[i], OPTION_TABLE[i].default_value, err, sizeof err);
    o->given = 0;
}

void options_free(Options *o) {
    for (int i = 0; i < OPTION_COUNT; i++) {
        const OptionSpec *s = &OPTION_TABLE[i];
        if (s->kind == OPT_STRING || s->kind == OPT_CHOICE) {
            free(*(char **)field(o, s));
            *(char **)field(o, s) = NULL;
        }
    }
    free(o->args);
    o->args = NULL;
    o->n_args = 0;
}

int options_copy(Options *dst, const Options *src) {
    *dst = *src;
    dst->args = NULL;
    dst->n_args = 0;
    int ok = 1;
    for (int i = 0; i < OPTION_COUNT; i++) {
        const OptionSpec *s = &OPTION_TABLE[i];
        if (s->kind != OPT_STRING && s->kind != OPT_CHOICE) continue;
        char **text = (char **)field(dst, s);
        char *copy = *text ? strdup(*text) : NULL;
        if (*text && !copy) ok = 0;
        *text = copy;
    }
    return ok ? 0 : -1;
}

char **options_command_line(const Options *o, const char *data_path, int *argc) {
    Options defaults;
    options_defaults(&defaults);
    char **argv = calloc((size_t)OPTION_COUNT * 2 + 2, sizeof *argv);
    int n = 0, ok = argv != NULL;
    if (ok) {
        argv[n++] = strdup("./train");
        argv[n++] = strdup(data_path);
    }
    for (int i = 0; ok && i < OPTION_COUNT; i++) {
        const OptionSpec *s = &OPTION_TABLE[i];
        char value[4096], fallback[4096], name[80];
        options_format(o, s, value, sizeof value);
        options_format(&defaults, s, fallback, sizeof fallback);
        if (!s->recorded || strcmp(value, fallback) == 0) continue;
        snprintf(name, sizeof name, "--%s", s->name);
        argv[n++] = strdup(name);
        argv[n++] = strdup(value);
    }
    options_free(&defaults);
    for (int i = 0; ok && i < n; i++) ok = argv[i] != NULL;
    if (!ok) {
        options_command_free(argv, n);
        return NULL;
    }
    *argc = n;
    return argv;
}

void options_command_free(char **argv, int argc) {
    for (int i = 0; argv && i < argc; i++) free(argv[i]);
    free(argv);
}

int options_given(const Options *o, const char *name) {
    const OptionSpec *s = options_find(name);
    return s && (o->given >> (s - OPTION_TABLE) & 1ull);
}

int options_parse(Options *o, int argc, char **argv, int first, char *err, size_t errlen) {
    o->args = calloc((size_t)argc + 1, sizeof *o->args);
    if (!o->args) return fail(err, errlen, ERR_RUNTIME, "out of memory");
    int only_positional = 0;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || strcmp(arg, "-") == 0) {
            o->args[o->n_args++] = argv[i];
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0)
            return fail(err, errlen, ERR_INPUT, "unknown option '%s' (options start with --; see ./train --help)", arg);
        /* --name value, or --name=value */
        char name[64];
        const char *eq = strchr(arg + 2, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        if (len >= sizeof name) len = sizeof name - 1;
        memcpy(name, arg + 2, len);
        name[len] = '\0';
        const OptionSpec *s = options_find(name);
        if (!s) {
            const char *close = options_suggest(name);
            if (close)
                return fail(err, errlen, ERR_INPUT, "unknown option '--%s'; did you mean '--%s'? (see ./train --help)",
                            name, close);
            return fail(err, errlen, ERR_INPUT, "unknown option '--%s' (see ./train --help)", name);
        }
        const char *value;
        if (s->kind == OPT_FLAG) {
            value = eq ? eq + 1 : "1";
        } else if (eq) {
            value = eq + 1;
        } else if (i + 1 < argc && strncmp(argv[i + 1], "--", 2) == 0) {
            /* "--lr --out x": the value was left out, the next option is not it */
            return fail(err, errlen, ERR_INPUT, "option '--%s' needs a value, but the next argument is the option '%s' "
                        "(write --%s=VALUE for a value that starts with --)", name, argv[i + 1], name);
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            return fail(err, errlen, ERR_INPUT, "option '--%s' needs a value", name);
        }
        if (!*value && (s->kind == OPT_STRING || s->kind == OPT_CHOICE))   /* --out "" (an unset variable, say) */
            return fail(err, errlen, ERR_INPUT, "option '--%s' was given an empty value", name);
        int rc = options_set(o, s, value, err, errlen);
        if (rc != EXIT_OK) return rc;
        o->given |= 1ull << (s - OPTION_TABLE);
    }
    return EXIT_OK;
}

void options_format(const Options *o, const OptionSpec *s, char *buf, size_t len) {
    switch (s->kind) {
    case OPT_INT:
        if (*(const int *)cfield(o, s) == 0 && takes_auto(s)) snprintf(buf, len, "auto");
        else snprintf(buf, len, "%d", *(const int *)cfield(o, s));
        break;
    case OPT_LONG: snprintf(buf, len, "%lld", *(const long long *)cfield(o, s)); break;
    case OPT_DOUBLE: {
        /* the shortest form that reads back to the same double */
        double v = *(const double *)cfield(o, s);
        for (int digits = 6; digits <= 17; digits++) {
            snprintf(buf, len, "%.*g", digits, v);
            if (strtod(buf, NULL) == v) break;
        }
        break;
    }
    case OPT_FLAG: snprintf(buf, len, "%d", *(const int *)cfield(o, s)); break;
    case OPT_STRING:
    case OPT_CHOICE: {
        const char *v = *(char *const *)cfield(o, s);
        snprintf(buf, len, "%s", v ? v : "");
        break;
    }
    }
}

int options_to_json(const Options *o, JsonBuf *b) {
    int rc = jsonbuf_puts(b, "{");
    int first = 1;
    for (int i = 0; i < OPTION_COUNT && rc == 0; i++) {
        const OptionSpec *s = &OPTION_TABLE[i];
        if (!s->recorded) continue;
        char value[1024];
        options_format(o, s, value, sizeof value);
        rc |= jsonbuf_puts(b, first ? "\n    " : ",\n    ");
        rc |= jsonbuf_string(b, s->name);
        rc |= jsonbuf_puts(b, ": ");
        /* typed: numbers as JSON numbers (the shortest exact form), flags as
         * booleans, the rest as strings; a seed beyond 2^53, which many JSON
         * readers cannot hold exactly, stays a string, and so does "auto" */
        int is_auto = strcmp(value, "auto") == 0;
        if (s->kind == OPT_FLAG) rc |= jsonbuf_puts(b, strcmp(value, "0") ? "true" : "false");
        else if ((s->kind == OPT_INT || s->kind == OPT_DOUBLE) && !is_auto) rc |= jsonbuf_puts(b, value);
        else if (s->kind == OPT_LONG && llabs(*(const long long *)cfield(o, s)) <= (1ll << 53))
            rc |= jsonbuf_puts(b, value);
        else rc |= jsonbuf_string(b, value);
        first = 0;
    }
    rc |= jsonbuf_puts(b, "\n  }");
    return rc;
}

int options_from_json(Options *o, const JsonValue *object, char *err, size_t errlen) {
    if (!object || object->type != JSON_OBJECT) {
        return fail(err, errlen, ERR_INPUT, "options are not a JSON object");
    }
    /* a run recorded before --bpe-dropout, --swa or --group-by-length existed trained without them */
    o->bpe_dropout = 0.0;
    o->swa = 0.0;
    o->group_by_length = 0;
    o->cycle = -1;   /* and before --cycle, in one cycle (set below, once --epochs is read) */
    int rc = options_set(o, options_find("precision"), "fp32", err, errlen);   /* and before --precision, in float32 */
    if (rc != EXIT_OK) return rc;
    for (int i = 0; i < object->count; i++) {
        const OptionSpec *s = options_find(object->keys[i]);
        const JsonValue *v = &object->items[i];
        if (!s || !s->recorded) {
            return fail(err, errlen, ERR_INPUT, "unknown recorded option '%s'", object->keys[i]);
        }
        /* typed values, or strings as older run.json files hold them */
        char text[64];
        const char *value = NULL;
        if (v->type == JSON_STRING) value = v->string;
        else if (v->type == JSON_BOOL && s->kind == OPT_FLAG) value = v->boolean ? "1" : "0";
        else if (v->type == JSON_NUMBER && (s->kind == OPT_INT || s->kind == OPT_LONG) && v->is_integer &&
                 fabs(v->number) <= 9007199254740992.0) {
            snprintf(text, sizeof text, "%.0f", v->number);
            value = text;
        } else if (v->type == JSON_NUMBER && s->kind == OPT_DOUBLE) {
            snprintf(text, sizeof text, "%.17g", v->number);
            value = text;
        }
        if (!value) {
            return fail(err, errlen, ERR_INPUT, "recorded option '%s' has a value of the wrong type", s->name);
        }
        rc = options_set(o, s, value, err, errlen);
        if (rc != EXIT_OK) return rc;
    }
    if (o->cycle < 0) o->cycle = o->epochs > 0 ? o->epochs : 1000000;
    return EXIT_OK;
}

Precision options_precision(const Options *o) {
    Precision p = precision_auto();
    if (strcmp(o->precision, "auto") != 0) precision_parse(o->precision, &p);
    return p;
}

int options_model_config(const Options *o, int vocab_size, int n_classes, int max_len, ModelConfig *out, char *err,
                         size_t errlen) {
    ModelConfig cfg = model_config_default();
    cfg.vocab_size = vocab_size;
    cfg.n_classes = n_classes;
    cfg.max_len = max_len;
    cfg.d_model = o->d_model;
    cfg.n_heads = o->heads;
    cfg.d_ff = o->d_ff;
    cfg.n_layers = o->layers;
    cfg.dropout = (float)o->dropout;
    cfg.emb_scale = sqrtf((float)o->d_model);
    /* the choices were validated when the options were parsed */
    activation_parse(o->activation, &cfg.activation);
    norm_parse(o->norm, &cfg.norm);
    pool_parse(o->pool, &cfg.pool);
    pe_parse(o->pe, &cfg.pe);
    cfg.precision = options_precision(o);
    *out = cfg;
    /* the rules between options, named as the user wrote them; then the model's own check */
    if (o->d_model % o->heads != 0)
        return fail(err, errlen, ERR_INPUT, "--d-model %d is not divisible by --heads %d", o->d_model, o->heads);
    if (cfg.pe == PE_SINUSOIDAL && o->d_model % 2 != 0)
        return fail(err, errlen, ERR_INPUT, "--d-model %d is odd; sinusoidal positional encoding needs an even "
                    "width (or use --pe learned|none)", o->d_model);
    return model_config_check(&cfg, err, errlen) == 0 ? EXIT_OK : ERR_INPUT;
}

const char *options_suggest(const char *name) {
    const char *names[OPTION_LIMIT + 2];
    int n = 0;
    for (int i = 0; i < OPTION_COUNT && n < OPTION_LIMIT; i++) names[n++] = OPTION_TABLE[i].name;
    names[n++] = "help";
    names[n++] = "version";
    return suggest_closest(name, names, (size_t)n);
}

void options_help_line(FILE *out, const OptionSpec *s) {
    char left[64];
    const char *meta = s->kind == OPT_FLAG ? "" : s->kind == OPT_CHOICE ? s->choices
                     : s->kind == OPT_STRING ? "PATH" : s->kind == OPT_DOUBLE ? "X" : takes_auto(s) ? "N|auto" : "N";
    if (strstr(s->name, "-column")) meta = "NAME|N";
    if (strcmp(s->name, "label") == 0) meta = "LABEL";   /* the strings that are not paths */
    if (strcmp(s->name, "probe") == 0) meta = "TEXT";
    if (strcmp(s->name, "autotune") == 0) meta = "DURATION";
    snprintf(left, sizeof left, "--%s %s", s->name, meta);
    const char *def = s->default_value;
    if (s->kind == OPT_FLAG) def = strcmp(def, "1") == 0 ? "on" : "off";
    else if (!*def) def = "none";
    fprintf(out, "  %-34s %s [%s]\n", left, s->help, def);
}

void options_help(FILE *out) {
    fprintf(out,
            "usage:\n"
            "  ./train DATA.tsv [options]                 train (same as: ./train fit DATA.tsv)\n"
            "  ./train eval    --model RUN DATA.tsv       metrics on labeled data\n"
            "  ./train predict --model RUN [TEXT ...]     label per text; stdin lines when no TEXT\n"
            "  ./train trace   --model RUN TEXT           walk one input through the network\n"
            "  ./train trace   --untrained [options] TEXT the same walk through a fresh model\n"
            "  ./train compare-pe DATA.tsv [options]      train with and without positional encoding\n"
            "  ./train reproduce RUN [--out NEW]          re-run a recorded run, diff its metrics.csv\n"
            "  ./train diff    RUN_A RUN_B                two runs' configs and metrics side by side\n"
            "  ./train film    RUN [--html FILE]          the probes a run recorded, epoch by epoch: tables,\n"
            "                                             the moments that matter, a page and a picture\n"
            "  ./train pretrain TEXTS [options]           masked-token pretraining on unlabelled texts; then\n"
            "                                             ./train DATA.tsv --init RUN fine-tunes a classifier\n"
            "  ./train CMD --help                         that command's options (or: ./train help CMD)\n"
            "  ./train --help                             this text\n"
            "  ./train --version                          the program's version and build\n"
            "\n"
            "DATA is UTF-8 TSV (label<TAB>text per line) or CSV with label and text columns.\n"
            "A run directory holds model.safetensors, state.safetensors, metrics.csv, curves.png,\n"
            "confusion.png, report.txt, run.json and probes.jsonl.\n\noptions (default in brackets):\n");
    for (int i = 0; i < OPTION_COUNT; i++) options_help_line(out, &OPTION_TABLE[i]);
    fprintf(out, "  %-34s %s\n  %-34s %s\n", "--help", "usage and options (of a command: ./train CMD --help)",
            "--version", "the program's version and whether it has MPI");
    fprintf(out, "\nexit codes: 0 success, 1 runtime failure (I/O, NaN), 2 bad usage or bad input,\n"
                 "130 interrupted (state saved; continue with --resume RUN)\n");
}
