/* trace.c: `./train trace`: one text walked through the network stage by
 * stage, for teaching: shapes, values, the PE formula, attention maps. The
 * backward walk (--backward) is trace_backward.c, the page (--html)
 * trace_html.c. */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "cli/commands.h"
#include "cli/trace.h"
#include "nn/layers.h"
#include "report/plot.h"
#include "text/dataset.h"

#define SHOW_COLS 8         /* values printed per row */
#define SHOW_ROWS 16        /* rows printed per matrix before "..." */
#define SHOW_ATTN_NUMBERS 12 /* attention rows are printed as numbers up to this T */
#define HEATMAP_TEXT_ROWS 24 /* query rows of a text heatmap */
#define PE_PICTURE_POSITIONS 100
#define UNTRAINED_MAX_LEN 64 /* --untrained with --max-len auto */

/* ------------------------------------------------------------ text helpers */

/* A token as it is shown: whitespace characters (char tokenizer) get names. */
static char *token_label(const char *tok, size_t len) {
    const char *name = NULL;
    if (len == 1 && tok[0] == ' ') name = "<sp>";
    else if (len == 1 && tok[0] == '\t') name = "<tab>";
    else if (len == 1 && tok[0] == '\n') name = "<nl>";
    else if (len == 1 && tok[0] == '\r') name = "<cr>";
    else if (len == 1 && (unsigned char)tok[0] < 0x20) name = "<ctl>";
    return name ? strdup(name) : strndup(tok, len);
}

/* ------------------------------------------------------------ tokens */

/* Collects the first `keep` tokens of a text and counts all of them. */
typedef struct {
    char **tokens;       /* raw token text, as the vocabulary sees it */
    char **labels;       /* printable form */
    int n, keep, total;
} TokenList;

static int collect_token(const char *tok, size_t len, int special, void *ctx) {
    TokenList *list = ctx;
    if (list->n < list->keep) {
        const char *special_text = special >= 0 ? TOKEN_NAMES[special] : NULL;
        list->tokens[list->n] = special_text ? strdup(special_text) : strndup(tok, len);
        list->labels[list->n] = special_text ? strdup(special_text) : token_label(tok, len);
        if (!list->tokens[list->n] || !list->labels[list->n]) {
            free(list->tokens[list->n]);
            free(list->labels[list->n]);
            return -1;   /* stops tokenize */
        }
        list->n++;
    }
    list->total++;
    return 0;
}

static void token_list_free(TokenList *list) {
    for (int i = 0; list->tokens && i < list->n; i++) free(list->tokens[i]);
    for (int i = 0; list->labels && i < list->n; i++) free(list->labels[i]);
    free(list->tokens);
    free(list->labels);
    memset(list, 0, sizeof *list);
}

static int token_list_make(TokenList *list, TokenizerKind kind, const char *text, int max_len) {
    memset(list, 0, sizeof *list);
    list->keep = max_len - 2;
    list->tokens = calloc((size_t)list->keep, sizeof(char *));
    list->labels = calloc((size_t)list->keep, sizeof(char *));
    if (!list->tokens || !list->labels || tokenize(kind, text, collect_token, list) != 0) {
        token_list_free(list);
        return EXIT_RUNTIME;   /* out of memory */
    }
    return EXIT_OK;
}

static void trace_input_free(TraceInput *in) {
    for (int t = 0; in->labels && t < in->T; t++) free(in->labels[t]);
    for (int t = 0; in->shown && t < in->T; t++) free(in->shown[t]);
    free(in->labels);
    free(in->shown);
    free(in->ids);
    memset(in, 0, sizeof *in);
}

/* bpe: each position is labelled with its subword, the piece's first one
 * marked with U+2581 (a word split in two reads "▁dennet jes"). */
static int trace_input_bpe(TraceInput *in, const SavedModel *run, const char *text, int max_len) {
    in->ids = malloc(sizeof(int) * max_len);
    in->labels = calloc((size_t)max_len, sizeof(char *));
    int ok = in->ids && in->labels;
    if (ok) in->T = encode_text(text, &run->vocab, run->tokenizer, max_len, in->ids, &in->truncated);
    ok = ok && in->T >= 2;
    for (int t = 0; ok && t < in->T; t++) {
        in->labels[t] = strdup(run->vocab.tokens[in->ids[t]]);
        ok = in->labels[t] != NULL;
    }
    in->n_text_tokens = ok ? encode_length(text, &run->vocab, run->tokenizer) - 2 : 0;
    if (!ok) trace_input_free(in);
    return ok ? EXIT_OK : EXIT_RUNTIME;
}

/* Encodes text as the model will see it, with a label per position. */
static int trace_input_make(TraceInput *in, const SavedModel *run, const char *text) {
    memset(in, 0, sizeof *in);
    int max_len = run->model->cfg.max_len;
    if (run->vocab.bpe) return trace_input_bpe(in, run, text, max_len);
    TokenList list;
    if (token_list_make(&list, run->tokenizer, text, max_len) != EXIT_OK) return EXIT_RUNTIME;
    in->ids = malloc(sizeof(int) * max_len);
    in->labels = calloc((size_t)max_len, sizeof(char *));
    int ok = in->ids && in->labels;
    if (ok) in->T = encode_text(text, &run->vocab, run->tokenizer, max_len, in->ids, &in->truncated);
    ok = ok && in->T == list.n + 2;
    for (int t = 0; ok && t < in->T; t++) {
        const char *label = t == 0 ? "[CLS]" : t == in->T - 1 ? "[SEP]" : list.labels[t - 1];
        in->labels[t] = strdup(label);
        ok = in->labels[t] != NULL;
    }
    in->n_text_tokens = list.total;
    token_list_free(&list);
    if (!ok) trace_input_free(in);
    return ok ? EXIT_OK : EXIT_RUNTIME;   /* out of memory */
}

/* ------------------------------------------------------------ models */

static int join_args(const Options *o, char **text) {
    size_t len = 1;
    for (int i = 0; i < o->n_args; i++) len += strlen(o->args[i]) + 1;
    *text = malloc(len);
    if (!*text) return EXIT_RUNTIME;
    (*text)[0] = '\0';
    for (int i = 0; i < o->n_args; i++) {
        if (i) strcat(*text, " ");
        strcat(*text, o->args[i]);
    }
    return EXIT_OK;
}

/* Vocabulary for an untrained model: the specials, then each distinct
 * token of the text in order of appearance. */
static int untrained_vocab(Vocab *vocab, TokenizerKind kind, const char *text, int max_len, char *err,
                           size_t errlen) {
    TokenList list;
    if (token_list_make(&list, kind, text, max_len) != EXIT_OK) {
        set_error(err, errlen, "out of memory");
        return EXIT_RUNTIME;
    }
    char **words = malloc(sizeof(char *) * (N_SPECIAL_TOKENS + list.n + 1));
    int n = 0;
    for (; words && n < N_SPECIAL_TOKENS; n++) words[n] = (char *)TOKEN_NAMES[n];
    for (int i = 0; words && i < list.n; i++) {
        int seen = 0;
        for (int k = 0; k < n && !seen; k++) seen = strcmp(words[k], list.tokens[i]) == 0;
        if (!seen) words[n++] = list.tokens[i];
    }
    /* the model needs one ordinary token at least; a text of specials alone gets a placeholder */
    if (words && n == N_SPECIAL_TOKENS) words[n++] = "<unused>";
    int rc = words ? vocab_from_tokens(vocab, words, n, err, errlen) : (set_error(err, errlen, "out of memory"), 1);
    free(words);
    token_list_free(&list);
    return rc == 0 ? EXIT_OK : EXIT_USAGE;
}

/* A freshly initialised model shaped by the command line's options. */
static int untrained_run(const Options *o, const char *text, SavedModel *run, char *err, size_t errlen) {
    memset(run, 0, sizeof *run);
    if (tokenizer_parse(o->tokenizer, &run->tokenizer) != 0) {
        set_error(err, errlen, "--tokenizer: unknown '%s'", o->tokenizer);
        return EXIT_USAGE;
    }
    int max_len = o->max_len ? o->max_len : UNTRAINED_MAX_LEN;   /* auto: no data to measure */
    int rc;
    if (run->tokenizer == TOKENIZER_BPE && !options_given(o, "tokenizer")) {
        run->tokenizer = TOKENIZER_WORD;   /* a fresh model has nothing to learn merges from: whole words */
    }
    if (run->tokenizer == TOKENIZER_BPE) {
        Example ex = {.label = "class 0", .text = (char *)text, .line = 1};
        TextDataset one = {.path = "(the text)", .examples = &ex, .n = 1};
        rc = vocab_build(&run->vocab, TOKENIZER_BPE, &one, 0, 1, err, errlen);
    } else {
        rc = untrained_vocab(&run->vocab, run->tokenizer, text, max_len, err, errlen);
    }
    if (rc != EXIT_OK) return rc;
    char *names[2] = {"class 0", "class 1"};
    ModelConfig cfg;
    if (options_model_config(o, run->vocab.size, 2, max_len, &cfg, err, errlen) != EXIT_OK) return EXIT_USAGE;
    if (labels_from_names(&run->labels, names, 2) != 0) return fail(err, errlen, EXIT_RUNTIME, "out of memory");
    run->model = model_create(&cfg, 1, err, errlen);
    if (!run->model) return EXIT_RUNTIME;
    model_init(run->model, (uint64_t)o->seed);
    return EXIT_OK;
}

/* Options that shape an untrained model cannot act with --model, whose run
 * has its own configuration: a usage error naming the first given. */
static int refuse_shaping_options(const Options *o) {
    static const char *const shaping[] = {"d-model", "heads", "layers", "d-ff", "max-len", "activation", "norm",
                                          "pool", "pe", "tokenizer", "seed"};
    for (size_t i = 0; i < sizeof shaping / sizeof *shaping; i++) {
        if (!options_given(o, shaping[i])) continue;
        fprintf(stderr, "error: --%s cannot act with --model: the run's own configuration is used (the model "
                        "options shape an --untrained model only)\n", shaping[i]);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------ printing */

static void print_row_label(FILE *out, const Trace *tr, int t) {
    fprintf(out, "    %3d ", t);
    trace_print_padded(out, tr->in.shown[t], LABEL_CHARS);
}

/* A (T, cols) matrix, one row per position: the first few values of each. */
static void print_rows(FILE *out, const Trace *tr, const float *x, int cols) {
    int shown = cols < SHOW_COLS ? cols : SHOW_COLS;
    fprintf(out, "    %3s %-*s |", "pos", LABEL_CHARS, "token");
    for (int j = 0; j < shown; j++) {
        char name[16];
        snprintf(name, sizeof name, "dim %d", j);
        fprintf(out, " %8s", name);
    }
    fprintf(out, "%s\n", shown < cols ? "  ..." : "");
    for (int t = 0; t < tr->in.T; t++) {
        if (t == SHOW_ROWS && tr->in.T > SHOW_ROWS + 1) {
            fprintf(out, "    ... %d more rows\n", tr->in.T - SHOW_ROWS);
            break;
        }
        print_row_label(out, tr, t);
        fprintf(out, " |");
        for (int j = 0; j < shown; j++) fprintf(out, " %8.4f", x[(size_t)t * cols + j]);
        fprintf(out, "%s\n", shown < cols ? "  ..." : "");
    }
}

/* A vector, SHOW_COLS values a line, at most two lines. */
static void print_vector(FILE *out, const float *x, int n) {
    for (int j = 0; j < n && j < 2 * SHOW_COLS; j++)
        fprintf(out, "%s %8.4f%s", j % SHOW_COLS == 0 ? "   " : "", x[j],
                j % SHOW_COLS == SHOW_COLS - 1 || j == n - 1 ? "\n" : "");
    if (n > 2 * SHOW_COLS) fprintf(out, "    ... %d more values\n", n - 2 * SHOW_COLS);
}

static void print_header(FILE *out, const Trace *tr, const char *text) {
    const ModelConfig *c = &tr->run.model->cfg;
    fprintf(out, "trace of \"%s\"\nmodel: %s\n", text, tr->source);
    fprintf(out, "  d_model %d, heads %d (d_head %d), layers %d, d_ff %d, %s, %s-norm, %s pooling, PE %s, %d classes (",
            c->d_model, c->n_heads, c->d_model / c->n_heads, c->n_layers, c->d_ff, activation_name(c->activation),
            norm_name(c->norm), pool_name(c->pool), pe_name(c->pe), c->n_classes);
    for (int k = 0; k < c->n_classes; k++) {
        if (k == 6 && c->n_classes > 7) {
            fprintf(out, ", ...");
            break;
        }
        fprintf(out, "%s%s", k ? ", " : "", tr->run.labels.names[k]);
    }
    fprintf(out, ")\n  eval mode: dropout is off, so the same text always gives the same numbers\n");
}

static void print_tokens(FILE *out, const Trace *tr) {
    const TraceInput *in = &tr->in;
    fprintf(out, "\n[1] tokens (%s tokenizer, max_len %d): [CLS] + %d tokens + [SEP] = %d positions\n",
            tokenizer_name(tr->run.tokenizer), tr->run.model->cfg.max_len, in->T - 2, in->T);
    if (in->truncated)
        fprintf(out, "    the text has %d tokens; truncated to the first %d (max_len counts [CLS] and [SEP])\n",
                in->n_text_tokens, in->T - 2);
    fprintf(out, "    %3s %-*s %6s\n", "pos", LABEL_CHARS, "token", "id");
    for (int t = 0; t < in->T; t++) {
        int id = in->ids[t];
        const char *note = id == TOKEN_CLS ? "  special: starts every sequence"
                         : id == TOKEN_SEP ? "  special: ends every sequence"
                         : id == TOKEN_MASK ? "  special: masked token"
                         : id == TOKEN_UNK ? "  -> [UNK]: not in the vocabulary" : "";
        print_row_label(out, tr, t);
        fprintf(out, " %6d%s\n", id, note);
    }
    fprintf(out, "    [PAD] (id 0) fills the shorter sequences of a batch; a single text needs none\n");
    if (in->replaced[0] || in->replaced[1])   /* said once: the labels below are shown the same way */
        fprintf(out, "    this locale is not UTF-8, so labels are ASCII:%s%s%s (LANG=C.UTF-8 shows them as they are)\n",
                in->replaced[0] ? " '_' is bpe's word-start mark U+2581" : "",
                in->replaced[0] && in->replaced[1] ? "," : "",
                in->replaced[1] ? " '?' another character beyond ASCII" : "");
}

static void print_embeddings(FILE *out, const Trace *tr, const float *emb) {
    const ModelConfig *c = &tr->run.model->cfg;
    fprintf(out, "\n[2] input embeddings: %d tokens x %d dimensions (%d text tokens plus [CLS] and [SEP])\n",
            tr->in.T, c->d_model, tr->in.T - 2);
    fprintf(out, "    x[t] = E[id_t] * %.4f  (row id_t of embedding.weight, %d x %d, times emb_scale = sqrt(%d))\n",
            c->emb_scale, c->vocab_size, c->d_model, c->d_model);
    print_rows(out, tr, emb, c->d_model);
}

/* Worked examples of the sinusoidal formula, then the table's first columns. */
static void print_pe_examples(FILE *out, int T, int d) {
    fprintf(out, "    PE[pos, 2i] = sin(pos / 10000^(2i/d)),  PE[pos, 2i+1] = cos(pos / 10000^(2i/d)),  d = %d\n", d);
    const int examples[][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {1, 2}, {1, 3}, {2, 0}, {2, 1},
                               {T - 1, d - 2}, {T - 1, d - 1}};
    for (size_t k = 0; k < sizeof examples / sizeof *examples; k++) {
        int pos = examples[k][0], dim = examples[k][1];
        if (pos >= T || dim < 0 || dim >= d || (k >= 8 && (pos <= 2 || dim < 4))) continue;
        char formula[96];
        snprintf(formula, sizeof formula, "PE[%d,%d] = %s(%d/10000^(%d/%d))", pos, dim, dim % 2 ? "cos" : "sin", pos,
                 dim - dim % 2, d);
        fprintf(out, "    %-36s = %.6f\n", formula, positional_encoding_value(pos, dim, d));
    }
}

static void print_positional(FILE *out, const Trace *tr, const float *pe) {
    const ModelConfig *c = &tr->run.model->cfg;
    fprintf(out, "\n[3] positional encoding: %d positions x %d dimensions (--pe %s)\n", tr->in.T, c->d_model,
            pe_name(c->pe));
    if (c->pe == PE_NONE) {
        fprintf(out, "    none: nothing is added, so the model cannot tell word order (all zeros)\n");
        return;
    }
    if (c->pe == PE_SINUSOIDAL) print_pe_examples(out, tr->in.T, c->d_model);
    else fprintf(out, "    learned: row pos of pos_embedding.weight (%d x %d), trained with the rest\n", c->max_len,
                 c->d_model);
    print_rows(out, tr, pe, c->d_model);
}

static void print_sum(FILE *out, const Trace *tr, const float *sum, const float *emb, const float *pe) {
    int d = tr->run.model->cfg.d_model;
    fprintf(out, "\n[4] embeddings + positional encoding: %d x %d, the encoder's input\n", tr->in.T, d);
    print_rows(out, tr, sum, d);
    double worst = 0;
    for (size_t i = 0; i < (size_t)tr->in.T * d; i++) worst = fmax(worst, fabs((double)emb[i] + pe[i] - sum[i]));
    fprintf(out, "    check: largest |model input - ([2] + [3])| = %.3g (float rounding)\n", worst);
}

/* plot_text_heatmap, indented like the rest of the trace. */
static void print_text_heatmap(FILE *out, const float *w, int rows, int cols, const char *const *labels) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        plot_text_heatmap(out, w, rows, cols, labels, labels);
        return;
    }
    plot_text_heatmap(mem, w, rows, cols, labels, labels);
    fclose(mem);
    for (char *line = text; line && *line;) {
        char *end = strchr(line, '\n');
        size_t n = end ? (size_t)(end - line) : strlen(line);
        fprintf(out, "    %.*s\n", (int)n, line);
        line += n + (end != NULL);
    }
    free(text);
}

/* One head's (T, T) weights as a text heatmap and, for short texts, numbers. */
static void print_attention_head(FILE *out, const Trace *tr, const float *w) {
    int T = tr->in.T;
    int rows = T < HEATMAP_TEXT_ROWS ? T : HEATMAP_TEXT_ROWS;
    print_text_heatmap(out, w, rows, T, (const char *const *)tr->in.shown);
    if (rows < T) fprintf(out, "    ... %d more query rows (see --png)\n", T - rows);
    int numbers = T <= SHOW_ATTN_NUMBERS;
    fprintf(out, "    %-*s |%s| top attended key\n", LABEL_CHARS + 4, "query",
            numbers ? " weights over the keys (each row sums to 1 over non-[PAD] keys) " : " ");
    for (int q = 0; q < T && q < SHOW_ROWS; q++) {
        const float *row = w + (size_t)q * T;
        int top = 0;
        for (int k = 1; k < T; k++) if (row[k] > row[top]) top = k;
        fprintf(out, "    q%-3d", q);
        trace_print_padded(out, tr->in.shown[q], LABEL_CHARS);
        fprintf(out, " |");
        for (int k = 0; numbers && k < T; k++) fprintf(out, " %.4f", tr->in.ids[k] == TOKEN_PAD ? 0.0f : row[k]);
        fprintf(out, " | top: %s (pos %d, %.4f)\n", tr->in.shown[top], top, row[top]);
    }
    if (T > SHOW_ROWS) fprintf(out, "    ... %d more queries\n", T - SHOW_ROWS);
}

static void print_layer(FILE *out, const Trace *tr, int l) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, dh = c->d_model / c->n_heads;
    fprintf(out, "\n[5.%d] encoder layer %d of %d (encoder.layers.%d, %s-norm: %s)\n", l + 1, l + 1, c->n_layers, l,
            norm_name(c->norm),
            c->norm == NORM_POST ? "x = LN1(x + attention(x)); x = LN2(x + FFN(x))"
                                 : "x = x + attention(LN1(x)); x = x + FFN(LN2(x))");
    const float *probs = model_attention_probs(m, l);
    for (int h = 0; h < c->n_heads; h++) {
        fprintf(out, "\n    layer %d, head %d of %d: attention weights softmax(Q K^T / sqrt(%d)), %d queries x %d keys\n",
                l + 1, h + 1, c->n_heads, dh, T, T);
        print_attention_head(out, tr, probs + (size_t)h * T * T);
    }
    fprintf(out, "\n    layer %d FFN output: linear2(%s(linear1(x))), %d x %d -> %d -> %d, before the residual\n", l + 1,
            activation_name(c->activation), T, c->d_model, c->d_ff, c->d_model);
    print_rows(out, tr, model_ffn_output(m, l), c->d_model);
    fprintf(out, "    layer %d output: %d x %d\n", l + 1, T, c->d_model);
    print_rows(out, tr, model_layer_output(m, l), c->d_model);
}

static void print_head(FILE *out, const Trace *tr) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, C = c->n_classes;
    fprintf(out, "\n[6] pooling, logits, softmax\n");
    if (c->norm == NORM_PRE) {
        fprintf(out, "    encoder output after the final LayerNorm (encoder.norm): %d x %d\n", T, c->d_model);
        print_rows(out, tr, model_encoder_output(m), c->d_model);
    }
    if (c->pool == POOL_MEAN) {
        int real = 0;
        for (int t = 0; t < T; t++) real += tr->in.ids[t] != TOKEN_PAD;
        fprintf(out, "    pooled = mean of the encoder output over the %d non-[PAD] positions: %d values\n", real,
                c->d_model);
    } else {
        fprintf(out, "    pooled = the encoder output at position 0 ([CLS]): %d values\n", c->d_model);
    }
    print_vector(out, model_pooled(m), c->d_model);
    fprintf(out, "    logits z = head.weight (%d x %d) . pooled + head.bias;  softmax p_c = exp(z_c) / sum_k exp(z_k)\n",
            C, c->d_model);
    fprintf(out, "    %-16s %10s %12s\n", "class", "logit", "probability");
    int best = model_predicted_class(m, 0);
    for (int k = 0; k < C; k++) {
        fprintf(out, "    ");
        trace_print_padded(out, tr->run.labels.names[k], 16);
        fprintf(out, " %10.4f %12.6f\n", m->logits[k], m->probs[k]);
    }
    fprintf(out, "    predicted label: %s (probability %.6f)\n", tr->run.labels.names[best], m->probs[best]);
    fprintf(out, "    as predict --probs prints it:\t%s", tr->run.labels.names[best]);
    for (int k = 0; k < C; k++) fprintf(out, "\t%.6f", m->probs[k]);
    fputc('\n', out);
}

/* ------------------------------------------------------------ pictures */

/* Attention heatmaps (query x key weights) get the sequential colour map,
 * the positional encoding (signed, around 0) the diverging one. */
static int write_heatmap(const Trace *tr, const char *name, const float *values, int rows, int cols,
                         const char *const *row_labels, const char *const *col_labels, const char *title, int pe) {
    char path[4400], err[1024];
    snprintf(path, sizeof path, "%s/%s", tr->png_dir, name);
    int w = 0, h = 0;
    PlotHeatmap map = {.values = values, .rows = rows, .cols = cols, .row_labels = row_labels,
                       .col_labels = col_labels, .title = title, .row_title = pe ? "position" : "query",
                       .col_title = pe ? "dimension" : "key",
                       .colormap = pe ? PLOT_MAP_DIVERGING : PLOT_MAP_SEQUENTIAL};
    if (plot_heatmap(path, &map, &w, &h, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return EXIT_RUNTIME;
    }
    printf("    wrote %s (%d x %d)\n", path, w, h);
    return EXIT_OK;
}

/* Sinusoidal PE for positions 0..n-1, as the model computes it. */
static float *sinusoidal_rows(int n, int d) {
    float *pe = malloc(sizeof(float) * n * d);
    for (int p = 0; pe && p < n; p++)
        for (int j = 0; j < d; j++) pe[(size_t)p * d + j] = positional_encoding_value(p, j, d);
    return pe;
}

static int write_pictures(const Trace *tr, const float *pe) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, rc = EXIT_OK;
    const char *const *labels = (const char *const *)tr->in.labels;
    printf("\n[png] heatmaps in %s\n", tr->png_dir);
    char why[1024];
    if (make_dirs(tr->png_dir, why, sizeof why) != 0) {
        fprintf(stderr, "error: --png %s: cannot create the folder: %s\n", tr->png_dir, why);
        return EXIT_RUNTIME;
    }
    char name[64], title[160];
    for (int l = 0; l < c->n_layers && rc == 0; l++)
        for (int h = 0; h < c->n_heads && rc == 0; h++) {
            snprintf(name, sizeof name, "attention_l%d_h%d.png", l + 1, h + 1);
            snprintf(title, sizeof title, "layer %d head %d attention (rows: queries, columns: keys)", l + 1, h + 1);
            rc = write_heatmap(tr, name, model_attention_probs(m, l) + (size_t)h * T * T, T, T, labels, labels, title,
                               0);
        }
    if (rc != 0 || c->pe == PE_NONE) return rc;
    snprintf(title, sizeof title, "positional encoding (%s): %d positions x %d dimensions", pe_name(c->pe), T,
             c->d_model);
    char (*positions)[LABEL_CHARS * 4 + 16] = malloc(sizeof *positions * T);
    const char **position_labels = malloc(sizeof(char *) * T);
    for (int t = 0; positions && position_labels && t < T; t++) {
        snprintf(positions[t], sizeof positions[t], "%d %s", t, tr->in.labels[t]);
        position_labels[t] = positions[t];
    }
    rc = positions && position_labels ? write_heatmap(tr, "positional_encoding.png", pe, T, c->d_model,
                                                      position_labels, NULL, title, 1) : EXIT_RUNTIME;
    free(positions);
    free(position_labels);
    if (rc != 0) return rc;
    /* the whole pattern over more positions shows the classic stripes */
    int n = c->pe == PE_SINUSOIDAL ? PE_PICTURE_POSITIONS : c->max_len;
    const float *table = m->params + (c->pe == PE_LEARNED ? model_find_tensor(m, "pos_embedding.weight")->offset : 0);
    float *rows = c->pe == PE_SINUSOIDAL ? sinusoidal_rows(n, c->d_model) : NULL;
    snprintf(name, sizeof name, "positional_encoding_%d.png", n);
    snprintf(title, sizeof title, "positional encoding (%s): %d positions x %d dimensions", pe_name(c->pe), n,
             c->d_model);
    if (c->pe == PE_SINUSOIDAL && !rows) rc = EXIT_RUNTIME;
    else rc = write_heatmap(tr, name, rows ? rows : table, n, c->d_model, NULL, NULL, title, 1);
    free(rows);
    return rc;
}

/* ------------------------------------------------------------ the walk */

/* Token embeddings E[id] * emb_scale and the positional encoding, (T, d) each. */
static int input_parts(const Trace *tr, float **emb_out, float **pe_out) {
    const Model *m = tr->run.model;
    const ModelConfig *c = &m->cfg;
    int T = tr->in.T, d = c->d_model;
    float *emb = malloc(sizeof(float) * T * d), *pe = calloc((size_t)T * d, sizeof(float));
    const ParamTensor *table = model_find_tensor(m, "embedding.weight");
    const ParamTensor *learned = model_find_tensor(m, "pos_embedding.weight");
    if (!emb || !pe || !table || (c->pe == PE_LEARNED && !learned)) {
        free(emb);
        free(pe);
        return EXIT_RUNTIME;   /* out of memory, or a checkpoint without the tensor */
    }
    for (int t = 0; t < T; t++)
        for (int j = 0; j < d; j++) {
            size_t i = (size_t)t * d + j;
            emb[i] = m->params[table->offset + (size_t)tr->in.ids[t] * d + j] * c->emb_scale;
            if (c->pe == PE_SINUSOIDAL) pe[i] = positional_encoding_value(t, j, d);
            else if (c->pe == PE_LEARNED) pe[i] = m->params[learned->offset + i];
        }
    *emb_out = emb;
    *pe_out = pe;
    return EXIT_OK;
}

/* What the walk does besides the forward: --backward (label -1: the
 * predicted one), --html. */
typedef struct {
    int backward, label;
    uint64_t seed;
    const char *html_path;   /* NULL: no page */
} WalkExtras;

/* --html may replace nothing but an earlier page of its own: a path that
 * does not exist yet, or a regular file that starts as trace's pages do
 * (not a checkpoint or a data file given by mistake). */
static int replaceable_page(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return errno == ENOENT;
    if (!S_ISREG(st.st_mode)) return 0;
    static const char start[] = TRACE_PAGE_START;
    char head[sizeof start];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof start - 1, f) : 0;
    if (f) fclose(f);
    return got == sizeof start - 1 && memcmp(head, start, got) == 0;
}

static int write_page(const Trace *tr, const float *emb, const float *pe, const TraceBackward *bw, const char *path) {
    char err[1024];
    if (trace_html_write(tr, emb, pe, bw, path, err, sizeof err) != 0) {
        fprintf(stderr, "error: --html %s: %s\n", path, err);
        return EXIT_RUNTIME;
    }
    struct stat st;
    printf("\n[html] wrote %s (%lld bytes): open it in a browser; point at a query token to see its attention\n", path,
           stat(path, &st) == 0 ? (long long)st.st_size : 0LL);
    return EXIT_OK;
}

static int walk(Trace *tr, const char *text, const WalkExtras *x) {
    Model *m = tr->run.model;
    ForwardOptions eval = {.training = 0};
    model_forward(m, tr->in.ids, NULL, 1, tr->in.T, &eval);
    float *emb, *pe;
    if (input_parts(tr, &emb, &pe) != 0) {
        fprintf(stderr, "error: out of memory\n");
        return EXIT_RUNTIME;
    }
    print_header(stdout, tr, text);
    print_tokens(stdout, tr);
    print_embeddings(stdout, tr, emb);
    print_positional(stdout, tr, pe);
    print_sum(stdout, tr, model_embedding_sum(m), emb, pe);
    for (int l = 0; l < m->cfg.n_layers; l++) print_layer(stdout, tr, l);
    int rc = EXIT_OK;
    TraceBackward bw;
    memset(&bw, 0, sizeof bw);
    if (model_is_mlm(&m->cfg)) {   /* a pretrain run: no classes; what fills each [MASK] */
        printf("\nMLM head (pretrain run): the %d most likely tokens at each [MASK]\n", CLI_MASK_TOP);
        if (cli_print_mask_fills(stdout, &tr->run, tr->in.ids, 1, tr->in.T, 1) != EXIT_OK)
            rc = cli_report(EXIT_RUNTIME, "out of memory");
    } else {
        print_head(stdout, tr);
        if (x->backward) {
            int label = x->label >= 0 ? x->label : model_predicted_class(m, 0);
            if (x->label < 0)
                printf("\n(--label not given: the backward differentiates the loss of the predicted label '%s')\n",
                       tr->run.labels.names[label]);
            rc = trace_backward(tr, label, x->seed, &bw, stdout);
        }
    }
    /* the pictures and the page are written even when the gradient check failed: they show the failure */
    int drawn = rc == EXIT_OK || bw.checks_failed;
    if (drawn && tr->png_dir && write_pictures(tr, pe) != 0) rc = EXIT_RUNTIME;
    if (drawn && x->html_path && write_page(tr, emb, pe, x->backward ? &bw : NULL, x->html_path) != 0)
        rc = EXIT_RUNTIME;
    trace_backward_free(&bw);
    free(emb);
    free(pe);
    return rc;
}

/* --html: a page estimated over --html-max-mb is refused before the walk,
 * saying its size and how to allow it (it grows with T^2 x layers x heads). */
static int refuse_large_page(const Trace *tr, const Options *o) {
    int backward = o->backward && !model_is_mlm(&tr->run.model->cfg);
    double mb = trace_html_estimate(tr, backward) / 1e6;
    if (mb <= o->html_max_mb) return EXIT_OK;
    const ModelConfig *c = &tr->run.model->cfg;
    fprintf(stderr, "error: --html %s: the page would be about %.1f MB, over --html-max-mb %d (MB): it holds every "
                    "head's attention, %d layer%s x %d heads x %d x %d tokens; give --html-max-mb %d to write it, or "
                    "trace a shorter text\n", o->html_path, mb, o->html_max_mb, c->n_layers, c->n_layers == 1 ? "" : "s",
            c->n_heads, tr->in.T, tr->in.T, (int)ceil(mb));
    return EXIT_USAGE;
}

int command_trace(const Options *o, int argc, char **argv) {
    int has_model = o->model_dir && *o->model_dir;
    if (has_model && o->untrained) {
        fprintf(stderr, "error: --model and --untrained exclude each other: trace one model\n");
        return EXIT_USAGE;
    }
    if (!has_model && !o->untrained) return cli_missing_model(o, "trace", " or --untrained for a fresh model", "TEXT", argc, argv);
    if (o->n_args < 1) {
        fprintf(stderr, "error: trace needs a text: ./train trace --model RUN \"some text\"\n");
        return EXIT_USAGE;
    }
    if (o->n_args > 1) {
        fprintf(stderr, "error: trace walks one text, and got %d arguments ('%s', '%s'%s); quote a text that has "
                        "spaces: ./train trace --model RUN \"%s %s%s\"\n", o->n_args, o->args[0], o->args[1],
                o->n_args > 2 ? ", ..." : "", o->args[0], o->args[1], o->n_args > 2 ? " ..." : "");
        return EXIT_USAGE;
    }
    if (has_model && refuse_shaping_options(o) != EXIT_OK) return EXIT_USAGE;
    char *text, err[1024];
    if (join_args(o, &text) != 0) {
        fprintf(stderr, "error: out of memory\n");
        return EXIT_RUNTIME;
    }
    if (o->label && *o->label && !o->backward) {
        free(text);
        fprintf(stderr, "error: --label names the label whose loss --backward differentiates: add --backward\n");
        return EXIT_USAGE;
    }
    char why[128];
    if (dataset_check_text(text, strlen(text), NULL, NULL, why, sizeof why) != TEXT_OK) {   /* predict's rules */
        fprintf(stderr, "error: the text to trace: %s\n", why);
        free(text);
        return EXIT_USAGE;
    }
    size_t png_len = o->png_dir ? strlen(o->png_dir) : 0;
    struct stat png_st;
    if (png_len > 4 && strcmp(o->png_dir + png_len - 4, ".png") == 0 && stat(o->png_dir, &png_st) != 0) {
        fprintf(stderr, "error: --png %s: --png names a folder for the pictures (trace draws several), not one "
                        "file; give a folder, e.g. --png %.*s\n", o->png_dir, (int)(png_len - 4), o->png_dir);
        free(text);
        return EXIT_USAGE;
    }
    if (png_len > 0 && stat(o->png_dir, &png_st) == 0 && !S_ISDIR(png_st.st_mode)) {   /* as --out is refused */
        fprintf(stderr, "error: --png %s: it exists and is not a folder; --png names a folder for the pictures "
                        "(give a new or existing folder)\n", o->png_dir);
        free(text);
        return EXIT_USAGE;
    }
    if (o->html_path && *o->html_path && !replaceable_page(o->html_path)) {
        fprintf(stderr, "error: --html %s: it exists and is not a page trace wrote, so it is not replaced; give a new "
                        "file name (or remove it)\n", o->html_path);
        free(text);
        return EXIT_USAGE;
    }
    Trace tr;
    memset(&tr, 0, sizeof tr);
    tr.text = text;
    tr.png_dir = o->png_dir && *o->png_dir ? o->png_dir : NULL;
    tr.utf8 = trace_locale_utf8();
    WalkExtras extras = {o->backward, -1, (uint64_t)o->seed, o->html_path && *o->html_path ? o->html_path : NULL};
    char source[4200];
    int rc;
    if (has_model) {
        rc = cli_set_precision(o, &tr.run, saved_model_load(o->model_dir, 1, &tr.run, err, sizeof err));
        snprintf(source, sizeof source, "%s", o->model_dir);
    } else {
        rc = untrained_run(o, text, &tr.run, err, sizeof err);
        snprintf(source, sizeof source, "untrained (freshly initialised with --seed %lld; vocabulary = the text's "
                 "own tokens; classes 'class 0', 'class 1')", o->seed);
    }
    tr.source = source;
    /* a pretrain run has no classes: no loss of a label to walk back */
    if (rc == EXIT_OK && o->backward && model_is_mlm(&tr.run.model->cfg)) {
        set_error(err, sizeof err, "--backward: %s is a pretrain run (a masked-token model without classes), so there "
                 "is no label's loss to walk back; trace a classifier, such as one fine-tuned from it with --init",
                 o->model_dir);
        rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK && o->label && *o->label) {
        extras.label = labels_index(&tr.run.labels, o->label);
        if (extras.label < 0) {
            char names[900] = "";
            for (int k = 0, n = 0; k < tr.run.labels.n && n >= 0 && (size_t)n < sizeof names; k++)
                n += snprintf(names + n, sizeof names - n, "%s '%s'", k ? "," : "", tr.run.labels.names[k]);
            set_error(err, sizeof err, "--label: '%s' is not a label of this model; its labels are%s", o->label, names);
            rc = EXIT_USAGE;
        }
    }
    if (rc != EXIT_OK) fprintf(stderr, "error: %s\n", err);
    else if (trace_input_make(&tr.in, &tr.run, text) != 0 || trace_input_show(&tr.in, tr.utf8) != 0) {
        fprintf(stderr, "error: cannot encode the text (out of memory)\n");
        rc = EXIT_RUNTIME;
    } else if (extras.html_path && refuse_large_page(&tr, o) != EXIT_OK) {
        rc = EXIT_USAGE;
    } else {
        rc = walk(&tr, text, &extras);
    }
    trace_input_free(&tr.in);
    saved_model_free(&tr.run);
    free(text);
    return rc;
}
