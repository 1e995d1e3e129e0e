/* common.c: how the subcommands report errors (see commands.h). */
#include "cli/commands.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/rundir.h"

int cli_usage_error(const char *message) {
    fprintf(stderr, "error: %s (see ./train --help)\n", message);
    return EXIT_USAGE;
}

int cli_report(int rc, const char *message) {
    if (rc == EXIT_INTERRUPTED && message && *message) fprintf(stderr, "\n%s\n", message);   /* not an error */
    else if (rc != EXIT_OK && message && *message) fprintf(stderr, "error: %s\n", message);
    return rc;
}

int cli_set_precision(const Options *o, SavedModel *run, int rc) {
    if (rc == EXIT_OK && options_given(o, "precision")) run->model->cfg.precision = options_precision(o);
    return rc;
}

/* The k most probable ids of p (V), best first, the lowest id on a tie. */
static int top_k(const float *p, int V, int k, int *ids) {
    int n = 0;
    for (int v = 0; v < V; v++) {
        int at = n < k ? n++ : k;
        if (at == k && !(p[v] > p[ids[k - 1]])) continue;
        if (at == k) at = k - 1;
        while (at > 0 && p[v] > p[ids[at - 1]]) {
            ids[at] = ids[at - 1];
            at--;
        }
        ids[at] = v;
    }
    return n;
}

int cli_print_mask_fills(FILE *out, SavedModel *run, const int *tokens, int B, int T, int verbose) {
    Model *m = run->model;
    int V = m->cfg.vocab_size;
    int *targets = malloc(sizeof(int) * (size_t)B * T);
    if (!targets) return EXIT_RUNTIME;
    /* every [MASK] is a selected position; its target (any id) is not used */
    for (long i = 0; i < (long)B * T; i++) targets[i] = tokens[i] == TOKEN_MASK ? TOKEN_MASK : -1;
    ForwardOptions eval = {.training = 0, .forward_only = 1};
    model_forward_mlm(m, tokens, targets, B, T, &eval);
    int M = model_mlm_count(m), i = 0;
    for (int b = 0; b < B; b++) {
        int in_row = 0;
        for (; i < M && model_mlm_position(m, i) / T == b; i++, in_row++) {
            int ids[CLI_MASK_TOP];
            int n = top_k(model_mlm_probs(m, i), V, CLI_MASK_TOP, ids);
            if (verbose) fprintf(out, "  [MASK] at position %d:", model_mlm_position(m, i) % T);
            else if (in_row) fputc('\t', out);
            for (int k = 0; k < n; k++)
                fprintf(out, "%s%s %.4f", k ? "  " : verbose ? " " : "", run->vocab.tokens[ids[k]],
                        model_mlm_probs(m, i)[ids[k]]);
            if (verbose) fputc('\n', out);
        }
        if (!in_row) fputs(verbose ? "  (no [MASK] in the text)\n" : "(no [MASK])", out);
        if (!verbose) fputc('\n', out);
    }
    free(targets);
    return EXIT_OK;
}

/* 1: path looks like a saved model: a directory holding model.safetensors
 * or run.json, or a file named *.safetensors. */
static int looks_like_model(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return 0;
    size_t n = strlen(path);
    if (S_ISREG(st.st_mode)) return n > 12 && strcmp(path + n - 12, ".safetensors") == 0;
    if (!S_ISDIR(st.st_mode)) return 0;
    return rundir_holds(path, "model.safetensors") || rundir_holds(path, "run.json");
}

void cli_print_shell_word(FILE *f, const char *arg) {
    if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+@%") == strlen(arg)) {
        fprintf(f, " %s", arg);
        return;
    }
    fputs(" '", f);
    for (const char *c = arg; *c; c++) {
        if (*c == '\'') fputs("'\\''", f);
        else fputc(*c, f);
    }
    fputc('\'', f);
}

int cli_missing_model(const Options *o, const char *command, const char *also, const char *needed, int argc,
                      char **argv) {
    if (o->n_args == 0 || !looks_like_model(o->args[0])) {
        fprintf(stderr, "error: %s needs --model RUN%s (see ./train --help)\n", command, also);
        return EXIT_USAGE;
    }
    fprintf(stderr, "error: %s needs --model RUN; %s is a saved model, so perhaps: ./train %s --model", command,
            o->args[0], command);
    cli_print_shell_word(stderr, o->args[0]);
    /* the rest of the line as given, options and "--" included, but the model */
    for (int i = 1; i < argc; i++) {
        if (argv[i] == o->args[0] || (i == 1 && strcmp(argv[i], command) == 0)) continue;
        cli_print_shell_word(stderr, argv[i]);
    }
    if (needed && o->n_args == 1) fprintf(stderr, " %s", needed);
    fputc('\n', stderr);
    return EXIT_USAGE;
}
