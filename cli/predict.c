/* predict.c: `./train predict --model RUN [TEXT ...]`: the label of each
 * text (stdin lines when none is given), with --probs every class's
 * probability. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "run/saved_model.h"

static void predict_batch(SavedModel *run, char **texts, int n, int probs, int *tokens, int *ids) {
    Model *m = run->model;
    int max_len = m->cfg.max_len, C = m->cfg.n_classes, T = 0;
    int lengths[CLI_BATCH];
    for (int i = 0; i < n; i++) {
        int truncated;
        lengths[i] = encode_text(texts[i], &run->vocab, run->tokenizer, max_len, ids + (long)i * max_len, &truncated);
        if (lengths[i] > T) T = lengths[i];
    }
    for (int i = 0; i < n; i++)
        for (int t = 0; t < T; t++) tokens[i * T + t] = t < lengths[i] ? ids[(long)i * max_len + t] : TOKEN_PAD;
    if (model_is_mlm(&m->cfg)) {   /* a pretrain run: what fills each [MASK] */
        cli_print_mask_fills(stdout, run, tokens, n, T, 0);
        return;
    }
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
    if (!o->model_dir || !*o->model_dir) return cli_usage_error("predict needs --model RUN");
    char err[1024];
    SavedModel run;
    int rc = saved_model_load(o->model_dir, CLI_BATCH, &run, err, sizeof err);
    if (rc != EXIT_OK) return cli_report(rc, err);
    int max_len = run.model->cfg.max_len;
    int *tokens = malloc(sizeof(int) * CLI_BATCH * max_len), *ids = malloc(sizeof(int) * CLI_BATCH * max_len);
    char *lines[CLI_BATCH];
    rc = tokens && ids ? EXIT_OK : EXIT_RUNTIME;
    if (rc == EXIT_OK && o->n_args > 0) {
        for (int start = 0; start < o->n_args; start += CLI_BATCH) {
            int n = o->n_args - start < CLI_BATCH ? o->n_args - start : CLI_BATCH;
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
            if (n == CLI_BATCH) {
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
    saved_model_free(&run);
    return rc;
}
