/* diff.c: `./train diff RUN_A RUN_B`: two runs' options and traces side
 * by side, the options that differ marked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/commands.h"
#include "cli/traces.h"
#include "run/record.h"
#include "run/rundir.h"

/* A run's trace, or none (0 epochs, said in a note) for a run that has
 * not finished an epoch and so has no metrics.csv yet. */
static int diff_trace(const char *dir, EpochRecord **h, int *has_val) {
    char path[4096];
    rundir_path(path, sizeof path, dir, "metrics.csv");
    if (access(path, F_OK) != 0 && errno == ENOENT) {
        printf("note: %s has no finished epoch yet (no metrics.csv): its trace is empty\n", dir);
        *h = NULL;
        *has_val = 1;   /* nothing to show, so the other run's validation columns stay */
        return 0;
    }
    return traces_read(dir, h, has_val);
}

int command_diff(const Options *o) {
    if (o->n_args != 2) return cli_usage_error("diff needs two run directories");
    RunRecord info[2];
    char err[1024];
    for (int i = 0; i < 2; i++) {
        if (record_read(o->args[i], 0, &info[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            if (i == 1) record_free(&info[0]);
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
    record_free(&info[0]);
    record_free(&info[1]);
    EpochRecord *a = NULL, *b = NULL;
    int val_a = 0, val_b = 0;
    int n_a = diff_trace(o->args[0], &a, &val_a), n_b = diff_trace(o->args[1], &b, &val_b);
    if (n_a >= 0 && n_b >= 0) traces_print(stdout, o->args[0], a, n_a, o->args[1], b, n_b, val_a && val_b, 0);
    free(a);
    free(b);
    return n_a >= 0 && n_b >= 0 ? EXIT_OK : EXIT_RUNTIME;
}
