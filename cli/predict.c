/* predict.c: `./train predict --model RUN [TEXT ...]`: the label of each
 * text (stdin lines when none is given), with --probs every class's
 * probability. Inputs meet training's rules: one too long is truncated, an
 * empty or invalid one (not UTF-8, a NUL byte) gets an empty output line so
 * that output lines stay aligned with input lines; stderr counts each kind,
 * and --strict makes any of them an error. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/commands.h"
#include "run/evaluate.h"
#include "run/saved_model.h"
#include "text/records.h"

enum { TRUNCATED, EMPTY, INVALID, N_KINDS };

/* Inputs held before they are run: evaluate() runs them in forwards of
 * CLI_BATCH rows of similar lengths (run/evaluate.c). */
enum { PREDICT_LINES = 8 * CLI_BATCH };

typedef struct {
    SavedModel run;
    const Options *o;
    const char *unit;             /* how inputs are numbered: "TEXT" (arguments) or "line" (stdin) */
    int *ids;                     /* (PREDICT_LINES, max_len): the inputs' encodings, a row each */
    char *texts[PREDICT_LINES];   /* the inputs in hand, trimmed; NULL for an input that gets no label */
    long numbers[PREDICT_LINES];  /* each one's input number */
    int n;
    long n_inputs;
    long count[N_KINDS], first[N_KINDS];
    char first_invalid[128];      /* what was wrong with the first invalid input */
} Predictor;

/* --strict: the first truncated, empty or invalid input is an error. */
static int strict_error(const Predictor *p, long number, const char *why, int truncated) {
    fprintf(stderr, "error: %s %ld: %s (--strict refuses it; without --strict it would be %s)\n", p->unit, number, why,
            truncated ? "truncated" : "given an empty output line");
    return EXIT_USAGE;
}

static void tally(Predictor *p, int kind, long number) {
    if (p->count[kind]++ == 0) p->first[kind] = number;
}

static void clear_batch(Predictor *p) {
    for (int i = 0; i < p->n; i++) free(p->texts[i]);
    p->n = 0;
}

/* Encodes, runs and prints the inputs in hand: one line per input, in
 * order, then forgets them. The texts are encoded in parallel (each into its
 * own row, nothing shared), then checked in input order: with --strict the
 * first truncated one is refused after the inputs before it are answered.
 * A classifier's rows go through evaluate(); a pretrain run's [MASK] fills
 * are found a text at a time. */
static int flush_batch(Predictor *p) {
    Model *m = p->run.model;
    int max_len = m->cfg.max_len, C = m->cfg.n_classes, rows = 0, rc = EXIT_OK;
    int lengths[PREDICT_LINES], row_of[PREDICT_LINES], truncated[PREDICT_LINES];
    size_t offsets[PREDICT_LINES];
    for (int i = 0; i < p->n; i++) row_of[i] = p->texts[i] ? rows++ : -1;
    #pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < p->n; i++) {
        int row = row_of[i];
        if (row < 0) continue;
        lengths[row] = encode_text(p->texts[i], &p->run.vocab, p->run.tokenizer, max_len, p->ids + (long)row * max_len,
                                   &truncated[row]);
    }
    int cut = p->n;   /* --strict: the first truncated input; those before it are answered */
    for (int i = 0; rc == EXIT_OK && cut == p->n && i < p->n; i++) {
        int row = row_of[i];
        if (row < 0) continue;
        if (lengths[row] < 0) rc = cli_report(EXIT_RUNTIME, "out of memory");
        else if (truncated[row] && p->o->strict) cut = i, rows = row;   /* rows: those of the inputs before it */
        else if (truncated[row]) tally(p, TRUNCATED, p->numbers[i]);
    }
    int mlm = model_is_mlm(&m->cfg);
    Evaluation e = {0};
    if (rc == EXIT_OK && !mlm && rows > 0) {
        for (int r = 0; r < rows; r++) offsets[r] = (size_t)r * max_len;
        EncodedDataset d = {.ids = p->ids, .offsets = offsets, .lengths = lengths, .labels = NULL, .n = rows};
        char err[256];
        if (evaluate(m, &d, &e, err, sizeof err) != EXIT_OK) rc = cli_report(EXIT_RUNTIME, err);
    }
    for (int i = 0; rc == EXIT_OK && i < cut; i++) {
        int r = row_of[i];
        if (r >= 0 && mlm) {   /* one line per text, as for a classifier */
            if (cli_print_mask_fills(stdout, &p->run, p->ids + (long)r * max_len, 1, lengths[r], 0) != EXIT_OK)
                rc = cli_report(EXIT_RUNTIME, "out of memory");
            continue;
        }
        if (r >= 0) {
            fputs(p->run.labels.names[e.predictions[r]], stdout);
            for (int c = 0; p->o->probs && c < C; c++) printf("\t%.6f", e.probs[(long)r * C + c]);
        }
        putchar('\n');
    }
    fflush(stdout);
    if (rc == EXIT_OK && cut < p->n) {
        char why[128];
        snprintf(why, sizeof why, "longer than the model's max_len %d tokens", max_len);
        rc = strict_error(p, p->numbers[cut], why, 1);
    }
    evaluation_free(&e);
    clear_batch(p);
    return rc;
}

/* One input, checked by training's rules; the inputs in hand are run when PREDICT_LINES are held. */
static int add_input(Predictor *p, const char *s, size_t len) {
    long number = ++p->n_inputs;
    char why[128];
    size_t start = 0, n = 0;
    TextCheck check = dataset_check_text(s, len, &start, &n, why, sizeof why);
    if (check != TEXT_OK) {
        if (p->o->strict) {   /* the inputs before it are answered first, and a truncated one among them named */
            int rc = p->n > 0 ? flush_batch(p) : EXIT_OK;
            return rc != EXIT_OK ? rc : strict_error(p, number, why, 0);
        }
        tally(p, check == TEXT_EMPTY ? EMPTY : INVALID, number);
        if (check == TEXT_INVALID && p->count[INVALID] == 1) snprintf(p->first_invalid, sizeof p->first_invalid, "%s", why);
    }
    char *text = NULL;
    if (check == TEXT_OK && !(text = strndup(s + start, n))) {
        fprintf(stderr, "error: out of memory\n");
        return EXIT_RUNTIME;
    }
    p->texts[p->n] = text;
    p->numbers[p->n++] = number;
    return p->n == PREDICT_LINES ? flush_batch(p) : EXIT_OK;
}

/* Standard input, read through a buffer of our own (not stdio's), so that
 * the reader knows when it has nothing left in hand: before it would wait
 * for more, the inputs already read are labelled and printed. A file or a
 * fast pipe still fills whole batches; someone typing, or a program writing
 * a line now and then, gets each answer as soon as its line is in. The
 * labels do not depend on how the inputs are batched (padding is masked). */
typedef struct {
    int fd;
    int ended;        /* read() said end of input: never read again (a terminal's Ctrl-D is not sticky) */
    size_t pos, len;
    char buf[1 << 16];
} LineReader;

/* Whether reading more would not block: bytes in hand, or the descriptor is
 * readable (a regular file always is; a pipe or terminal with data or at
 * its end is too). */
static int reader_ready(LineReader *r) {
    if (r->pos < r->len || r->ended) return 1;
    struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
    int n;
    while ((n = poll(&pfd, 1, 0)) < 0 && errno == EINTR) {}
    return n != 0;   /* on an error, the read says what it is */
}

/* Refills the buffer; returns the bytes read (0 at the end) or -1 (errno set). */
static ssize_t reader_fill(LineReader *r) {
    ssize_t n = 0;
    while (!r->ended && (n = read(r->fd, r->buf, sizeof r->buf)) < 0 && errno == EINTR) {}
    if (n == 0) r->ended = 1;
    r->pos = 0;
    r->len = n > 0 ? (size_t)n : 0;
    return n;
}

/* The next line without its '\n' into *line (grown as needed); *got is 0 at
 * the end of the input. Returns 0 or an exit code. A line longer than MAX_LINE_BYTES, training's
 * limit, is an error as soon as the limit is passed: the input may be a
 * stream that never ends, so the rest is not read. */
static int next_line(Predictor *p, LineReader *r, long number, char **line, size_t *cap, size_t *len, int *got,
                     char *err, size_t errlen) {
    size_t n = 0;
    *got = 0;
    for (;;) {
        if (r->pos == r->len) {
            /* about to wait for more: answer the inputs in hand first (also
             * when this line has begun: its start may sit here a while) */
            if (p->n > 0 && !reader_ready(r)) {
                int rc = flush_batch(p);
                if (rc != EXIT_OK) return rc;
            }
            ssize_t filled = reader_fill(r);
            if (filled < 0)
                return fail(err, errlen, ERR_RUNTIME, "standard input, line %ld: read error: %s", number, strerror(errno));
            if (filled == 0) break;
        }
        *got = 1;
        const char *from = r->buf + r->pos, *newline = memchr(from, '\n', r->len - r->pos);
        size_t take = newline ? (size_t)(newline - from) : r->len - r->pos;
        if (take > MAX_LINE_BYTES - n)
            return fail(err, errlen, ERR_INPUT, "standard input, line %ld: too long (more than %zu bytes, the limit; reading stopped "
                        "there)", number, MAX_LINE_BYTES);
        if (n + take + 1 > *cap) {
            size_t grown_cap = *cap ? *cap : 4096;
            while (grown_cap < n + take + 1) grown_cap *= 2;
            char *grown = realloc(*line, grown_cap);
            if (!grown) return fail(err, errlen, ERR_RUNTIME, "standard input, line %ld: out of memory", number);
            *line = grown;
            *cap = grown_cap;
        }
        memcpy(*line + n, from, take);
        n += take;
        r->pos += take + (newline ? 1 : 0);
        if (newline) break;
    }
    *len = n;
    return EXIT_OK;
}

static int read_stdin(Predictor *p) {
    if (isatty(STDIN_FILENO))
        fprintf(stderr, "reading texts from the terminal, one per line, each labelled when you press Enter; end with "
                        "Ctrl-D (or give them as arguments: ./train predict --model RUN \"a text\")\n");
    LineReader *r = malloc(sizeof *r);
    if (!r) return cli_report(EXIT_RUNTIME, "out of memory");
    r->fd = STDIN_FILENO;
    r->ended = 0;
    r->pos = r->len = 0;
    char *line = NULL, err[256];
    size_t cap = 0, len = 0;
    int rc = EXIT_OK, got = 1;
    while (rc == EXIT_OK && got) {
        err[0] = '\0';
        rc = next_line(p, r, p->n_inputs + 1, &line, &cap, &len, &got, err, sizeof err);
        if (rc != EXIT_OK) {
            if (err[0]) rc = cli_report(rc, err);   /* flush_batch has spoken for itself */
            break;
        }
        if (!got) break;
        const char *s = line ? line : "";
        if (len > 0 && s[len - 1] == '\r') len--;
        if (p->n_inputs == 0 && len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) { s += 3; len -= 3; }   /* BOM */
        rc = add_input(p, s, len);
    }
    free(line);
    free(r);
    return rc;
}

/* What was truncated, empty or invalid, on stderr. */
static void print_tally(const Predictor *p) {
    static const char *const what[N_KINDS] = {"truncated to the model's max_len", "empty", "invalid"};
    for (int k = 0; k < N_KINDS; k++) {
        if (!p->count[k]) continue;
        fprintf(stderr, "note: %ld of %ld input%s %s %s", p->count[k], p->n_inputs, p->n_inputs == 1 ? "" : "s",
                p->count[k] == 1 ? "was" : "were", what[k]);
        if (k == TRUNCATED) fprintf(stderr, " %d", p->run.model->cfg.max_len);
        fprintf(stderr, " (%s%s %ld%s%s)", p->count[k] > 1 ? "first: " : "", p->unit, p->first[k],
                k == INVALID ? ": " : "", k == INVALID ? p->first_invalid : "");
        fprintf(stderr, "%s\n", k == TRUNCATED ? "" : p->count[k] == 1 ? "; its output line is empty"
                                                                        : "; their output lines are empty");
    }
}

/* A TEXT that names a file was probably meant as the file's lines: it is
 * labelled as given (as a text), with a note on stderr saying how to label
 * the lines instead. */
static void note_file_argument(const Options *o) {
    for (int i = 0; i < o->n_args; i++) {
        struct stat st;
        if (stat(o->args[i], &st) != 0 || !S_ISREG(st.st_mode)) continue;
        fprintf(stderr, "note: TEXT %d, '%s', is also the name of a file; it is labelled as a text. To label the "
                "file's lines: ./train predict --model", i + 1, o->args[i]);
        cli_print_shell_word(stderr, o->model_dir);
        fputs(" <", stderr);
        cli_print_shell_word(stderr, o->args[i]);
        fputc('\n', stderr);
        return;
    }
}

int command_predict(const Options *o, int argc, char **argv) {
    if (!o->model_dir || !*o->model_dir) return cli_missing_model(o, "predict", "", NULL, argc, argv);
    char err[1024];
    Predictor p;
    memset(&p, 0, sizeof p);
    p.o = o;
    p.unit = o->n_args > 0 ? "TEXT" : "line";
    int rc = cli_set_precision(o, &p.run, saved_model_load(o->model_dir, CLI_BATCH, &p.run, err, sizeof err));
    if (rc != EXIT_OK) return cli_report(rc, err);
    int max_len = p.run.model->cfg.max_len;
    p.ids = malloc(sizeof(int) * PREDICT_LINES * max_len);
    rc = p.ids ? EXIT_OK : cli_report(EXIT_RUNTIME, "out of memory");
    int mlm = model_is_mlm(&p.run.model->cfg);
    if (rc == EXIT_OK && mlm && o->probs) {   /* no classes: each line is the likeliest tokens at each [MASK] */
        fprintf(stderr, "error: --probs: %s is a pretrain run, which has no classes to give probabilities of; its "
                        "lines are the likeliest tokens for each [MASK] (drop --probs)\n", o->model_dir);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && o->header) {
        fputs(mlm ? "mask_fills" : "label", stdout);
        for (int c = 0; o->probs && c < p.run.labels.n; c++) printf("\t%s", p.run.labels.names[c]);
        putchar('\n');
    }
    if (rc == EXIT_OK) note_file_argument(o);
    for (int i = 0; rc == EXIT_OK && i < o->n_args; i++) rc = add_input(&p, o->args[i], strlen(o->args[i]));
    if (rc == EXIT_OK && o->n_args == 0) rc = read_stdin(&p);
    if (rc == EXIT_OK && p.n > 0) rc = flush_batch(&p);
    if (rc == EXIT_OK) print_tally(&p);
    clear_batch(&p);
    free(p.ids);
    saved_model_free(&p.run);
    return rc;
}
