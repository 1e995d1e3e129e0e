/* options.h: the command line's options, described once in a table that
 * drives parsing, --help, run.json and `diff`. */
#ifndef OPTIONS_H
#define OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "base/errors.h"
#include "formats/json.h"
#include "model.h"

typedef struct {
    /* data */
    const char *val_path, *test_path, *tokenizer, *class_weights, *out_dir, *resume_dir, *model_dir, *png_dir;
    const char *task;            /* "classify", or "pretrain" (./train pretrain, docs/DESIGN.md §4b) */
    const char *init_dir;        /* --init RUN: tokenizer and encoder from a pretrain run */
    const char *label, *html_path;  /* trace --backward's label, trace --html's file */
    double val_split;
    int vocab_size, min_freq;
    double bpe_dropout;          /* bpe: probability of splitting a merged symbol of a training batch */
    /* model */
    int d_model, heads, layers, d_ff;
    int max_len;                 /* 0: auto, resolved from the training data */
    double dropout;
    const char *activation, *norm, *pool, *pe;
    const char *precision;       /* of the products: auto, fp32, bf16 or amx (docs/DESIGN.md §4); a run resolves auto */
    /* training */
    int epochs, batch_size, patience, threads, stop_after;
    int accum_steps;    /* micro-batches a rank's share of a batch goes through before one step */
    double lr, weight_decay, warmup, clip;
    int cycle;          /* --cycle: epochs in a learning-rate cycle; 0 (auto) until the run resolves it */
    double swa;         /* the fraction of the epochs, the last ones, whose end weights are averaged */
    int group_by_length;   /* batches of similar lengths (run/schedule.h) */
    long long seed;
    /* output */
    int quiet, probs, untrained, backward;
    int html_max_mb;             /* trace --html: the largest page written, in MB */
    /* predict and eval: --header, --strict; the columns of a file with a header row */
    int header, strict;
    const char *label_column, *text_column;
    int overwrite;         /* train into a directory that holds a run, replacing it */
    const char *probe_texts, *probe_file;   /* --probe (repeatable: the texts joined by newlines), --probe-file */
    const char *autotune;  /* --autotune DURATION ("": off), checked by options_duration */
    int autotune_trials;   /* --autotune-trials: at most this many trials (0: as many as the time allows) */
    int no_probes;         /* --no-probes: record none */
    /* positional arguments (data file, texts, run directories) */
    char **args;
    int n_args;
    /* which options the user gave explicitly (bit per table index) */
    unsigned long long given;
} Options;

typedef enum { OPT_INT, OPT_LONG, OPT_DOUBLE, OPT_STRING, OPT_CHOICE, OPT_FLAG } OptionKind;

typedef struct {
    const char *name;        /* without the leading -- */
    OptionKind kind;
    size_t offset;           /* into Options */
    const char *default_value;
    double min, max;         /* numeric range */
    const char *choices;     /* OPT_CHOICE: "a|b|c" */
    const char *help;
    int recorded;            /* 1: part of a run's configuration (run.json, diff) */
} OptionSpec;

extern const OptionSpec OPTION_TABLE[];
extern const int OPTION_COUNT;

/* Sets every option to its default. */
void options_defaults(Options *o);
/* Parses argv[first..argc); positional arguments are collected in o->args.
 * Returns EXIT_OK, or ERR_INPUT (ERR_RUNTIME: out of memory) with the
 * message, naming the option, in err. */
int options_parse(Options *o, int argc, char **argv, int first, char *err, size_t errlen);
void options_free(Options *o);
/* dst: a copy of src owning its own strings, without the positional
 * arguments (free it with options_free). 0, or -1 when out of memory. */
int options_copy(Options *dst, const Options *src);
/* The command line that gives o: "./train", data_path, then --name value
 * for each recorded option not at its default; *argc strings, each and the
 * array malloc'd (options_command_free). NULL when out of memory. */
char **options_command_line(const Options *o, const char *data_path, int *argc);
void options_command_free(char **argv, int argc);
/* 1 if the option (by name) was given on the command line */
int options_given(const Options *o, const char *name);
/* 1 for a pretraining run (--task pretrain, which ./train pretrain sets) */
int options_pretrain(const Options *o);
const OptionSpec *options_find(const char *name);
/* Value of an option as text (for run.json, diff and --help). */
void options_format(const Options *o, const OptionSpec *spec, char *buf, size_t len);
/* A duration as --autotune takes it: seconds (600, 2.5) or a number with
 * s, m or h (90s, 10m, 1h), above 0. 0 with *seconds set, or -1. */
int options_duration(const char *text, double *seconds);
/* Sets an option from text, as if given on the command line. Returns
 * EXIT_OK, or ERR_INPUT (ERR_RUNTIME: out of memory) with a message. */
int options_set(Options *o, const OptionSpec *spec, const char *value, char *err, size_t errlen);
/* Writes the recorded options as a JSON object into b. */
int options_to_json(const Options *o, JsonBuf *b);
/* Reads recorded options from a JSON object (as written above). Returns
 * EXIT_OK, or ERR_INPUT (ERR_RUNTIME: out of memory) with a message. */
int options_from_json(Options *o, const JsonValue *object, char *err, size_t errlen);
void options_help(FILE *out);
/* One option's line of --help: name, value, what it does, [default]. */
void options_help_line(FILE *out, const OptionSpec *spec);
/* The option name (without --) closest to a mistyped one, or NULL. */
const char *options_suggest(const char *name);
/* The products' precision --precision names, auto resolved for this CPU. */
Precision options_precision(const Options *o);
/* The model config the options describe, for a vocabulary, class count and
 * sequence length found in the data (--max-len auto is resolved there),
 * checked: 0, or ERR_INPUT with a message naming the options. */
int options_model_config(const Options *o, int vocab_size, int n_classes, int max_len, ModelConfig *out, char *err,
                         size_t errlen);

#endif
