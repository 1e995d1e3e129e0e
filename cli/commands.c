/* commands.c: eval, predict, reproduce, diff and compare-pe (see commands.h). */
#include "cli/commands.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/corpus.h"
#include "formats/json.h"
#include "report/plot.h"
#include "run/final_report.h"
#include "run/runinfo.h"
#include "formats/safetensors.h"
#include "run/fit.h"

static int usage_error(const char *message) {
    fprintf(stderr, "error: %s (see ./train --help)\n", message);
    return EXIT_USAGE;
}

/* ------------------------------------------------------------ run model */

static void model_file_path(const char *path, char *buf, size_t len) {
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) snprintf(buf, len, "%s/model.safetensors", path);
    else snprintf(buf, len, "%s", path);
}

int load_run(const char *path, int max_batch, LoadedRun *run, char *err, size_t errlen) {
    memset(run, 0, sizeof *run);
    char file[4096];
    model_file_path(path, file, sizeof file);
    ModelConfig cfg;
    if (model_config_from_file(file, &cfg, err, errlen) != 0) return -1;
    StFile f;
    if (st_load(file, &f, err, errlen) != 0) return -1;
    const char *tokenizer = st_meta(&f, "tokenizer"), *vocab = st_meta(&f, "vocab"), *labels = st_meta(&f, "labels");
    char **vocab_items = NULL, **label_items = NULL;
    int n_vocab = -1, n_labels = -1, rc = -1;
    char why[512] = "";
    if (!tokenizer || tokenizer_parse(tokenizer, &run->tokenizer) != 0)
        snprintf(err, errlen, "%s: metadata 'tokenizer' is missing or unknown", file);
    else if (!vocab || (n_vocab = json_parse_string_array(vocab, &vocab_items, why, sizeof why)) != cfg.vocab_size)
        snprintf(err, errlen, "%s: metadata 'vocab' is missing or does not hold %d tokens%s%s", file, cfg.vocab_size,
                 why[0] ? ": " : "", why);
    else if (!labels || (n_labels = json_parse_string_array(labels, &label_items, why, sizeof why)) != cfg.n_classes)
        snprintf(err, errlen, "%s: metadata 'labels' is missing or does not hold %d labels%s%s", file, cfg.n_classes,
                 why[0] ? ": " : "", why);
    else if (vocab_from_tokens(&run->vocab, vocab_items, n_vocab, why, sizeof why) != 0 ||
             labels_from_names(&run->labels, label_items, n_labels) != 0)
        snprintf(err, errlen, "%s: %s", file, why[0] ? why : "bad vocabulary or labels");
    else if (!memory_fits(&cfg, max_batch, why, sizeof why))
        snprintf(err, errlen, "%s: %s", file, why);
    else if (!(run->model = model_create(&cfg, max_batch, why, sizeof why)))
        snprintf(err, errlen, "%s: %s", file, why);
    else if (model_load_weights(run->model, file, err, errlen) == 0) {
        rc = 0;
    }
    if (vocab_items) json_free_string_array(vocab_items, n_vocab);
    if (label_items) json_free_string_array(label_items, n_labels);
    st_free(&f);
    if (rc != 0) loaded_run_free(run);
    return rc;
}

void loaded_run_free(LoadedRun *run) {
    model_free(run->model);
    vocab_free(&run->vocab);
    labels_free(&run->labels);
    memset(run, 0, sizeof *run);
}

/* ------------------------------------------------------------ eval */

#define EVAL_BATCH 32

int command_eval(const Options *o) {
    if (!o->model_dir || !*o->model_dir) return usage_error("eval needs --model RUN");
    if (o->n_args != 1) return usage_error("eval needs exactly one data file");
    char err[1024];
    LoadedRun run;
    if (load_run(o->model_dir, EVAL_BATCH, &run, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return EXIT_USAGE;
    }
    TextDataset data;
    EncodedDataset enc;
    memset(&enc, 0, sizeof enc);
    int rc = dataset_read(o->args[0], &data, err, sizeof err);
    if (rc == DATA_OK)
        rc = encode_dataset(&data, &run.vocab, run.tokenizer, &run.labels, run.model->cfg.max_len, &enc, err, sizeof err);
    double accuracy = 0;
    if (rc == DATA_OK) {
        if (enc.n_truncated) printf("note: %d of %d examples truncated to max_len %d\n", enc.n_truncated, enc.n,
                                    run.model->cfg.max_len);
        rc = dataset_report(run.model, &enc, &run.labels, o->args[0], stdout, &accuracy, NULL, err, sizeof err)
                 ? EXIT_RUNTIME : EXIT_OK;
        if (rc == EXIT_OK) printf("\naccuracy %.6f\n", accuracy);
    }
    if (rc != EXIT_OK) fprintf(stderr, "error: %s\n", err);
    encoded_free(&enc);
    if (rc != DATA_ERR_INPUT || data.examples) dataset_free(&data);
    loaded_run_free(&run);
    return rc;
}

/* ------------------------------------------------------------ predict */

static void predict_batch(LoadedRun *run, char **texts, int n, int probs, int *tokens, int *ids) {
    Model *m = run->model;
    int max_len = m->cfg.max_len, C = m->cfg.n_classes, T = 0;
    int lengths[EVAL_BATCH];
    for (int i = 0; i < n; i++) {
        int truncated;
        lengths[i] = encode_text(texts[i], &run->vocab, run->tokenizer, max_len, ids + (long)i * max_len, &truncated);
        if (lengths[i] > T) T = lengths[i];
    }
    for (int i = 0; i < n; i++)
        for (int t = 0; t < T; t++) tokens[i * T + t] = t < lengths[i] ? ids[(long)i * max_len + t] : TOKEN_PAD;
    ForwardOptions eval = {.training = 0};
    model_forward(m, tokens, NULL, n, T, &eval);
    for (int i = 0; i < n; i++) {
        const float *p = m->probs + (long)i * C;
        fputs(run->labels.names[model_predicted_class(m, i)], stdout);
        for (int c = 0; probs && c < C; c++) printf("\t%.6f", p[c]);
        putchar('\n');
    }
}

int command_predict(const Options *o) {
    if (!o->model_dir || !*o->model_dir) return usage_error("predict needs --model RUN");
    char err[1024];
    LoadedRun run;
    if (load_run(o->model_dir, EVAL_BATCH, &run, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return EXIT_USAGE;
    }
    int max_len = run.model->cfg.max_len;
    int *tokens = malloc(sizeof(int) * EVAL_BATCH * max_len), *ids = malloc(sizeof(int) * EVAL_BATCH * max_len);
    char *lines[EVAL_BATCH];
    int rc = tokens && ids ? EXIT_OK : EXIT_RUNTIME;
    if (rc == EXIT_OK && o->n_args > 0) {
        for (int start = 0; start < o->n_args; start += EVAL_BATCH) {
            int n = o->n_args - start < EVAL_BATCH ? o->n_args - start : EVAL_BATCH;
            predict_batch(&run, o->args + start, n, o->probs, tokens, ids);
        }
    } else if (rc == EXIT_OK) {
        /* one text per stdin line, answered in batches */
        int n = 0;
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while ((len = getline(&line, &cap, stdin)) >= 0) {
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
            lines[n++] = strdup(line);
            if (!lines[n - 1]) { rc = EXIT_RUNTIME; n--; break; }
            if (n == EVAL_BATCH) {
                predict_batch(&run, lines, n, o->probs, tokens, ids);
                while (n > 0) free(lines[--n]);
            }
        }
        if (n > 0) predict_batch(&run, lines, n, o->probs, tokens, ids);
        while (n > 0) free(lines[--n]);
        free(line);
    }
    if (rc != EXIT_OK) fprintf(stderr, "error: out of memory\n");
    free(tokens);
    free(ids);
    loaded_run_free(&run);
    return rc;
}

/* ------------------------------------------------------------ traces */

static int same_numbers(const EpochRecord *a, const EpochRecord *b, int has_val) {
    /* compared as metrics.csv prints them: time columns are not part of a trace */
    char x[256], y[256];
    snprintf(x, sizeof x, "%.6f %.6f %.6f %.6f %.6f %.6e", a->train_loss, a->train_acc, has_val ? a->val_loss : 0,
             has_val ? a->val_acc : 0, has_val ? a->val_f1 : 0, a->lr);
    snprintf(y, sizeof y, "%.6f %.6f %.6f %.6f %.6f %.6e", b->train_loss, b->train_acc, has_val ? b->val_loss : 0,
             has_val ? b->val_acc : 0, has_val ? b->val_f1 : 0, b->lr);
    return strcmp(x, y) == 0;
}

int print_traces(FILE *out, const char *name_a, const EpochRecord *a, int n_a, const char *name_b,
                 const EpochRecord *b, int n_b, int has_val, int mark_diff) {
    int n = n_a > n_b ? n_a : n_b, differing = 0, first_marked = 0;
    fprintf(out, "      | %-38.38s | %-38.38s |\n", name_a, name_b);
    fprintf(out, "Epoch | %8s %8s %8s %8s   | %8s %8s %8s %8s   |\n", "loss", "acc", has_val ? "val loss" : "",
            has_val ? "val acc" : "", "loss", "acc", has_val ? "val loss" : "", has_val ? "val acc" : "");
    for (int i = 0; i < n; i++) {
        char left[64] = "", right[64] = "";
        if (i < n_a) snprintf(left, sizeof left, "%8.4f %8.4f %8.4f %8.4f", a[i].train_loss, a[i].train_acc,
                              has_val ? a[i].val_loss : NAN, has_val ? a[i].val_acc : NAN);
        if (i < n_b) snprintf(right, sizeof right, "%8.4f %8.4f %8.4f %8.4f", b[i].train_loss, b[i].train_acc,
                              has_val ? b[i].val_loss : NAN, has_val ? b[i].val_acc : NAN);
        int same = i < n_a && i < n_b && same_numbers(&a[i], &b[i], has_val);
        const char *mark = "";
        if (!same) {
            differing++;
            if (mark_diff && !first_marked) { mark = "  <- first difference"; first_marked = 1; }
        }
        fprintf(out, "%5d | %-38s | %-38s |%s\n", i + 1, left, right, mark);
    }
    return differing;
}

static int read_trace(const char *dir, EpochRecord **h, int *has_val) {
    char path[4096], err[512];
    run_path(path, sizeof path, dir, "metrics.csv");
    int n = metrics_csv_read(path, h, has_val, err, sizeof err);
    if (n < 0) fprintf(stderr, "error: %s\n", err);
    return n;
}

/* ------------------------------------------------------------ reproduce */

static double max_trace_difference(const EpochRecord *a, const EpochRecord *b, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        const double x[] = {a[i].train_loss, a[i].train_acc, a[i].val_loss, a[i].val_acc, a[i].val_f1};
        const double y[] = {b[i].train_loss, b[i].train_acc, b[i].val_loss, b[i].val_acc, b[i].val_f1};
        for (int k = 0; k < 5; k++) worst = fmax(worst, fabs(x[k] - y[k]));
    }
    return worst;
}

int command_reproduce(const Options *o, int argc, char **argv) {
    if (o->n_args != 1) return usage_error("reproduce needs exactly one run directory");
    const char *dir = o->args[0];
    char err[1024];
    RunInfo info;
    if (runinfo_read(dir, &info, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return EXIT_USAGE;
    }
    for (int i = 0; i < info.n_files; i++) {
        char hex[65];
        long lines;
        if (file_digest(info.files[i].path, hex, &lines, err, sizeof err) != 0) {
            fprintf(stderr, "error: cannot reproduce %s: %s\n", dir, err);
            runinfo_free(&info);
            return EXIT_USAGE;
        }
        if (strcmp(hex, info.files[i].sha256) != 0) {
            fprintf(stderr, "error: cannot reproduce %s: %s (%s data) has changed since the run: SHA-256 %s, "
                    "recorded %s\n", dir, info.files[i].path, info.files[i].role, hex, info.files[i].sha256);
            runinfo_free(&info);
            return EXIT_USAGE;
        }
    }
    char out_dir[4096];
    if (o->out_dir && *o->out_dir) snprintf(out_dir, sizeof out_dir, "%s", o->out_dir);
    else snprintf(out_dir, sizeof out_dir, "%s/reproduce", dir);
    info.options.quiet = o->quiet;
    info.options.threads = o->threads;
    printf("reproducing %s into %s (recorded with version %s)\n", dir, out_dir, info.version ? info.version : "?");
    int rc = fit(&info.options, info.data_path, out_dir, 0, argc, argv, NULL);
    runinfo_free(&info);
    if (rc != EXIT_OK) return rc;
    EpochRecord *a = NULL, *b = NULL;
    int val_a, val_b;
    int n_a = read_trace(dir, &a, &val_a), n_b = read_trace(out_dir, &b, &val_b);
    if (n_a < 0 || n_b < 0) {
        free(a);
        free(b);
        return EXIT_RUNTIME;
    }
    printf("\n");
    int differing = print_traces(stdout, dir, a, n_a, out_dir, b, n_b, val_a && val_b, 1);
    int identical = differing == 0 && n_a == n_b && val_a == val_b;
    if (identical) printf("\nidentical: all %d epochs match in loss, accuracy, F1 and learning rate\n", n_a);
    else printf("\nDIFFERENT: %d of %d epochs differ; largest difference %.3g\n", differing, n_a > n_b ? n_a : n_b,
                max_trace_difference(a, b, n_a < n_b ? n_a : n_b));
    free(a);
    free(b);
    return identical ? EXIT_OK : EXIT_RUNTIME;
}

/* ------------------------------------------------------------ diff */

int command_diff(const Options *o) {
    if (o->n_args != 2) return usage_error("diff needs two run directories");
    RunInfo info[2];
    char err[1024];
    for (int i = 0; i < 2; i++) {
        if (runinfo_read(o->args[i], &info[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            if (i == 1) runinfo_free(&info[0]);
            return EXIT_USAGE;
        }
    }
    int tty = isatty(STDOUT_FILENO);
    printf("%-16s %-28.28s %-28.28s\n", "option", o->args[0], o->args[1]);
    printf("%-16s %-28.28s %-28.28s\n", "data", info[0].data_path, info[1].data_path);
    int differing = 0;
    for (int k = 0; k < OPTION_COUNT; k++) {
        const OptionSpec *s = &OPTION_TABLE[k];
        if (!s->recorded) continue;
        char a[256], b[256];
        options_format(&info[0].options, s, a, sizeof a);
        options_format(&info[1].options, s, b, sizeof b);
        int differ = strcmp(a, b) != 0;
        differing += differ;
        printf("%s%-16s %-28.28s %-28.28s%s%s\n", differ && tty ? "\033[1;33m" : "", s->name, a, b,
               differ ? " *" : "", differ && tty ? "\033[0m" : "");
    }
    printf("%d option%s differ%s (marked *)\n\n", differing, differing == 1 ? "" : "s", differing == 1 ? "s" : "");
    runinfo_free(&info[0]);
    runinfo_free(&info[1]);
    EpochRecord *a = NULL, *b = NULL;
    int val_a = 0, val_b = 0;
    int n_a = read_trace(o->args[0], &a, &val_a), n_b = read_trace(o->args[1], &b, &val_b);
    if (n_a >= 0 && n_b >= 0) print_traces(stdout, o->args[0], a, n_a, o->args[1], b, n_b, val_a && val_b, 0);
    free(a);
    free(b);
    return n_a >= 0 && n_b >= 0 ? EXIT_OK : EXIT_RUNTIME;
}

/* ------------------------------------------------------------ compare-pe */

void default_run_dir(const char *data_path, const char *suffix, char *buf, size_t len) {
    const char *slash = strrchr(data_path, '/');
    const char *base = slash ? slash + 1 : data_path;
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = '\0';
    if ((strcmp(name, "train") == 0 || strcmp(name, "data") == 0) && slash && slash != data_path) {
        /* data/negation/train.tsv -> negation */
        const char *start = slash - 1;
        while (start > data_path && start[-1] != '/') start--;
        snprintf(name, sizeof name, "%.*s", (int)(slash - start), start);
    }
    snprintf(buf, len, "runs/%s%s", name, suffix);
}

static void compare_plot(const char *path, const FitSummary *s, const char *const *names) {
    int n = s[0].n_epochs > s[1].n_epochs ? s[0].n_epochs : s[1].n_epochs;
    double *ys = calloc((size_t)8 * (n ? n : 1), sizeof(double));
    if (!ys) return;
    for (int r = 0; r < 2; r++)
        for (int i = 0; i < n; i++) {
            int have = i < s[r].n_epochs;
            ys[(r * 4 + 0) * n + i] = have ? s[r].history[i].train_loss : NAN;
            ys[(r * 4 + 1) * n + i] = have ? s[r].history[i].val_loss : NAN;
            ys[(r * 4 + 2) * n + i] = have ? s[r].history[i].train_acc : NAN;
            ys[(r * 4 + 3) * n + i] = have ? s[r].history[i].val_acc : NAN;
        }
    char labels[8][64];
    const char *kinds[] = {"train", "val"};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 2; k++) snprintf(labels[r * 2 + k], 64, "%s %s", names[r], kinds[k]);
    const uint32_t colors[2][2] = {{PLOT_COLOR_TRAIN, PLOT_COLOR_VAL}, {PLOT_COLOR_3, PLOT_COLOR_4}};
    PlotSeries loss[4], acc[4];
    int n_series = 0;
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < (s[r].has_val ? 2 : 1); k++) {
            loss[n_series] = (PlotSeries){labels[r * 2 + k], ys + (r * 4 + k) * n, n, colors[r][k], r == 1};
            acc[n_series] = (PlotSeries){labels[r * 2 + k], ys + (r * 4 + 2 + k) * n, n, colors[r][k], r == 1};
            n_series++;
        }
    PlotPanel panels[2] = {{"Loss", "epoch", "cross-entropy", loss, n_series},
                           {"Accuracy", "epoch", "accuracy", acc, n_series}};
    char err[512];
    if (plot_panels_png(path, panels, 2, 1100, 460, err, sizeof err) != 0) fprintf(stderr, "warning: %s\n", err);
    free(ys);
}

int command_compare_pe(const Options *o, int argc, char **argv) {
    if (o->n_args != 1) return usage_error("compare-pe needs exactly one data file");
    char base[4096];
    if (o->out_dir && *o->out_dir) snprintf(base, sizeof base, "%s", o->out_dir);
    else default_run_dir(o->args[0], "-compare-pe", base, sizeof base);
    const char *kinds[2] = {"sinusoidal", "none"};
    FitSummary summary[2];
    memset(summary, 0, sizeof summary);
    int rc = EXIT_OK;
    for (int r = 0; r < 2 && rc == EXIT_OK; r++) {
        Options run = *o;
        run.pe = (char *)kinds[r];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/pe-%s", base, kinds[r]);
        printf("\n=== --pe %s -> %s\n", kinds[r], dir);
        rc = fit(&run, o->args[0], dir, 0, argc, argv, &summary[r]);
    }
    if (rc == EXIT_OK) {
        printf("\n");
        print_traces(stdout, "--pe sinusoidal", summary[0].history, summary[0].n_epochs, "--pe none",
                     summary[1].history, summary[1].n_epochs, summary[0].has_val, 0);
        printf("\nfinal validation accuracy: %.4f with sinusoidal PE, %.4f without (difference %+.4f)\n",
               summary[0].final_val_acc, summary[1].final_val_acc, summary[0].final_val_acc - summary[1].final_val_acc);
        if (o->test_path && *o->test_path)
            printf("final test accuracy:       %.4f with sinusoidal PE, %.4f without (difference %+.4f)\n",
                   summary[0].final_test_acc, summary[1].final_test_acc,
                   summary[0].final_test_acc - summary[1].final_test_acc);
        char path[4200];
        snprintf(path, sizeof path, "%s/compare.png", base);
        const char *names[2] = {"sinusoidal", "no PE"};
        compare_plot(path, summary, names);
        printf("wrote %s\n", path);
    }
    free(summary[0].history);
    free(summary[1].history);
    return rc;
}
