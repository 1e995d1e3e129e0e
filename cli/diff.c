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

#define CELL 28   /* a column's width */

/* value as a cell: whole when it fits, else its head and "..." (a digest)
 * or "..." and its tail (a path: where two differ most often, the file
 * name); 1 when cut. */
static int cell(const char *value, int head, char out[CELL + 1]) {
    size_t n = strlen(value);
    if (n <= CELL) memcpy(out, value, n + 1);
    else if (head) snprintf(out, CELL + 1, "%.*s...", CELL - 3, value);
    else snprintf(out, CELL + 1, "...%s", value + n - (CELL - 3));
    return n > CELL;
}

/* One row of the table, marked * when the values differ. Cut values are
 * printed whole on lines of their own below when they are paths (not
 * digests) or when the cells would look alike while the values differ, so
 * two different values never look the same. */
static void print_row(const char *name, const char *a, const char *b, int differ, int path, int tty) {
    char ca[CELL + 1], cb[CELL + 1];
    int cut = cell(a, !path, ca) | cell(b, !path, cb);
    printf("%s%-16s %-*s %-*s%s%s\n", differ && tty ? "\033[1;33m" : "", name, CELL, ca, CELL, cb, differ ? " *" : "",
           differ && tty ? "\033[0m" : "");
    if (cut && (path || (differ && strcmp(ca, cb) == 0))) printf("  (a) %s\n  (b) %s\n", a, b);
}

/* The recorded digest of the file of a role, "-" when the run has none. */
static const char *digest_of(const RunRecord *r, const char *role) {
    for (int i = 0; i < r->n_files; i++)
        if (strcmp(r->files[i].role, role) == 0) return r->files[i].sha256;
    return "-";
}

int command_diff(const Options *o) {
    if (o->n_args != 2) return cli_usage_error("diff needs two run directories");
    RunRecord info[2];
    char err[1024];
    for (int i = 0; i < 2; i++)   /* a run still training: its trace is not yet the run's */
        if (rundir_check_idle(o->args[i], "compare it", err, sizeof err) != EXIT_OK) return cli_report(EXIT_USAGE, err);
    for (int i = 0; i < 2; i++) {
        if (record_read(o->args[i], 0, &info[i], err, sizeof err) != 0) {
            fprintf(stderr, "error: %s\n", err);
            if (i == 1) record_free(&info[0]);
            return EXIT_USAGE;
        }
    }
    int tty = isatty(STDOUT_FILENO);
    print_row("option", o->args[0], o->args[1], 0, 1, tty);
    /* the data by its content (SHA-256): the same path may hold other data, other paths the same */
    int data_differing = 0;
    print_row("data", info[0].data_path, info[1].data_path, 0, 1, tty);
    static const char *const roles[] = {"train", "val", "test", "init"};
    for (int r = 0; r < 4; r++) {
        const char *a = digest_of(&info[0], roles[r]), *b = digest_of(&info[1], roles[r]);
        if (strcmp(a, "-") == 0 && strcmp(b, "-") == 0) continue;
        int differ = strcmp(a, b) != 0;
        data_differing += differ;
        char name[24];
        snprintf(name, sizeof name, "%s sha256", roles[r]);
        print_row(name, a, b, differ, 0, tty);
    }
    int differing = 0;
    for (int k = 0; k < OPTION_COUNT; k++) {
        const OptionSpec *s = &OPTION_TABLE[k];
        if (!s->recorded) continue;
        char a[256], b[256];
        options_format(&info[0].options, s, a, sizeof a);
        options_format(&info[1].options, s, b, sizeof b);
        int differ = strcmp(a, b) != 0;
        differing += differ;
        print_row(s->name, a, b, differ, s->kind == OPT_STRING, tty);
    }
    if (data_differing)
        printf("%d option%s and %d data file%s differ (marked *)\n\n", differing, differing == 1 ? "" : "s",
               data_differing, data_differing == 1 ? "" : "s");
    else
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
