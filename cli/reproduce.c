/* reproduce.c: `./train reproduce RUN`: re-runs a recorded run from its
 * run.json (after checking its data is unchanged) and diffs the traces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/commands.h"
#include "base/fileio.h"
#include "cli/traces.h"
#include "run/fit.h"
#include "run/record.h"
#include "run/rundir.h"
#include "run/state.h"

static double max_trace_difference(const EpochRecord *a, const EpochRecord *b, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        const double x[] = {a[i].train_loss, a[i].train_acc, a[i].val_loss, a[i].val_acc, a[i].val_f1};
        const double y[] = {b[i].train_loss, b[i].train_acc, b[i].val_loss, b[i].val_acc, b[i].val_f1};
        for (int k = 0; k < 5; k++) worst = fmax(worst, fabs(x[k] - y[k]));
    }
    return worst;
}

/* The recorded and the new trace side by side; EXIT_OK when identical. */
static int compare_traces(const char *dir, const char *out_dir) {
    EpochRecord *a = NULL, *b = NULL;
    int val_a, val_b;
    int n_a = traces_read(dir, &a, &val_a), n_b = traces_read(out_dir, &b, &val_b);
    int rc = EXIT_RUNTIME;
    if (n_a >= 0 && n_b >= 0) {
        printf("\n");
        int differing = traces_print(stdout, dir, a, n_a, out_dir, b, n_b, val_a && val_b, 1);
        int identical = differing == 0 && n_a == n_b && val_a == val_b;
        if (identical)
            printf("\nidentical: %s %d epoch%s match%s in loss, accuracy, F1 and learning rate\n", n_a == 1 ? "its" : "all",
                   n_a, n_a == 1 ? "" : "s", n_a == 1 ? "es" : "");
        else if (n_a != n_b)
            printf("\nDIFFERENT: the recorded run has %d epochs, the reproduction %d\n", n_a, n_b);
        else printf("\nDIFFERENT: %d of %d epochs differ; largest difference %.3g\n", differing, n_a,
                    max_trace_difference(a, b, n_a));
        rc = identical ? EXIT_OK : EXIT_RUNTIME;
    }
    free(a);
    free(b);
    return rc;
}

int command_reproduce(const Options *o, int argc, char **argv) {
    if (o->n_args != 1) return cli_usage_error("reproduce needs exactly one run directory");
    const char *dir = o->args[0];
    char err[1024], why[1024];
    /* a run still training has fewer epochs than it will: comparing with it would report a false difference */
    if (rundir_check_idle(dir, "reproduce it", err, sizeof err) != EXIT_OK) return cli_report(EXIT_USAGE, err);
    RunRecord info;
    if (record_read(dir, 1, &info, err, sizeof err) != 0) return cli_report(EXIT_USAGE, err);
    int rc = record_check_data(&info, why, sizeof why);
    if (rc != EXIT_OK) {
        record_free(&info);
        fprintf(stderr, "error: cannot reproduce %s: %s\n", dir, why);
        return rc;
    }
    /* a run resumed with a larger --epochs changed its learning-rate
     * schedule on the way (run.json keeps the first --epochs) */
    EpochRecord *recorded = NULL;
    int has_val, n_recorded = traces_read(dir, &recorded, &has_val);
    free(recorded);
    int resumed_epochs = state_saved_epochs(dir);   /* 0 for a state older than the key: then the count tells */
    if (n_recorded > info.options.epochs || (resumed_epochs && resumed_epochs != info.options.epochs)) {
        fprintf(stderr, "error: cannot reproduce %s: it was started with --epochs %d and resumed with --epochs %d: "
                "its learning-rate schedule changed where it resumed, and a new run does not replay that\n", dir,
                info.options.epochs, resumed_epochs ? resumed_epochs : n_recorded);
        record_free(&info);
        return EXIT_USAGE;
    }
    /* the reproduction into the run itself would replace the record it is
     * compared with (and then compare the new run with itself) */
    if (o->out_dir && *o->out_dir && fileio_same_file(o->out_dir, dir)) {
        fprintf(stderr, "error: --out %s is the run being reproduced: its record would be replaced by the reproduction "
                "and the comparison would be with itself; give another directory, or leave out --out (default: "
                "%s/reproduce)\n", o->out_dir, dir);
        record_free(&info);
        return EXIT_USAGE;
    }
    /* the new run's directory follows training's rule: refused when it holds a run, unless --overwrite */
    RunDirPolicy policy = {o->overwrite ? RUNDIR_OVERWRITE : RUNDIR_NEW, 0, NULL, stderr};
    RunDir claimed;
    if (o->out_dir && *o->out_dir) {
        rc = rundir_claim(&claimed, NULL, o->out_dir, &policy, err, sizeof err);
    } else {
        char base[4096];
        snprintf(base, sizeof base, "%s/reproduce", dir);
        rc = rundir_claim_numbered(&claimed, NULL, base, &policy, err, sizeof err);
    }
    if (rc != EXIT_OK) {
        record_free(&info);
        return cli_report(rc, err);
    }
    const char *out_dir = claimed.path;
    info.options.quiet = o->quiet;
    info.options.threads = o->threads;
    /* a run that ended before its last epoch (--stop-after, an interrupt,
     * early stopping) is reproduced as far as it went; --stop-after keeps
     * the schedule of all --epochs */
    if (n_recorded > 0 && n_recorded < info.options.epochs) {
        info.options.stop_after = n_recorded;
        printf("note: %s ended after epoch %d of %d; the reproduction stops there too\n", dir, n_recorded,
               info.options.epochs);
    }
    printf("reproducing %s into %s (recorded with version %s)\n", dir, out_dir, info.version ? info.version : "?");
    rc = fit(NULL, &info.options, info.data_path, out_dir, 0, argc, argv, NULL, err, sizeof err);
    record_free(&info);
    if (rc == EXIT_OK) rc = compare_traces(dir, out_dir);
    else rc = cli_report(rc, err);
    rundir_release(&claimed);
    return rc;
}
