/* compare_pe.c: `./train compare-pe DATA`: the same run with sinusoidal
 * positional encoding and without, traces and curves side by side. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/commands.h"
#include "cli/traces.h"
#include "report/curves.h"
#include "run/fit.h"
#include "run/rundir.h"

/* The base directory holds a comparison when it has these. */
static const char *const COMPARISON_FILES[] = {"pe-sinusoidal/run.json", "pe-none/run.json", "compare.png", NULL};

int command_compare_pe(const Options *o, int argc, char **argv) {
    if (o->n_args != 1) return cli_usage_error("compare-pe needs exactly one data file");
    /* the base directory is claimed (and locked) for both runs, as a training's directory is */
    RunDirPolicy policy = {o->overwrite ? RUNDIR_OVERWRITE : RUNDIR_NEW, 0, COMPARISON_FILES, stderr};
    RunDir claimed;
    char err[1024] = "";
    int rc;
    if (o->out_dir && *o->out_dir) {
        rc = rundir_claim(&claimed, NULL, o->out_dir, &policy, err, sizeof err);
    } else {
        char name[4096];
        rundir_default(o->args[0], "-compare-pe", name, sizeof name);
        rc = rundir_claim_numbered(&claimed, NULL, name, &policy, err, sizeof err);
    }
    if (rc != EXIT_OK) return cli_report(rc, err);
    const char *base = claimed.path;
    const char *kinds[2] = {"sinusoidal", "none"};
    FitSummary summary[2];
    memset(summary, 0, sizeof summary);
    for (int r = 0; r < 2 && rc == EXIT_OK; r++) {
        Options run = *o;
        run.pe = (char *)kinds[r];
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/pe-%s", base, kinds[r]);
        printf("\n=== --pe %s -> %s\n", kinds[r], dir);
        rc = fit(NULL, &run, o->args[0], dir, 0, argc, argv, &summary[r], err, sizeof err);
        if (rc == EXIT_INTERRUPTED && cli_report(rc, err))
            fprintf(stderr, "compare-pe stopped in its --pe %s run: the comparison itself cannot be continued (the "
                    "--resume above finishes that run alone); to compare, give the same command again with --out %s "
                    "--overwrite\n", kinds[r], base);
    }
    if (rc == EXIT_OK) {
        printf("\n");
        traces_print(stdout, "--pe sinusoidal", summary[0].history, summary[0].n_epochs, "--pe none",
                     summary[1].history, summary[1].n_epochs, summary[0].has_val, 0);
        const FitSummary *a = &summary[0], *b = &summary[1];
        if (a->mlm) {   /* pretraining: what report.txt gives, of the held-out (else training) texts */
            const char *set = a->has_val ? "held-out" : "training";
            printf("\nfinal masked-token accuracy (%s texts): %.4f with sinusoidal PE, %.4f without (difference "
                   "%+.4f)\n", set, a->final_val_acc, b->final_val_acc, a->final_val_acc - b->final_val_acc);
            printf("final masked-token perplexity (%s texts): %.2f with sinusoidal PE, %.2f without (difference "
                   "%+.2f)\n", set, exp(a->final_val_loss), exp(b->final_val_loss),
                   exp(a->final_val_loss) - exp(b->final_val_loss));
        } else {
            printf("\nfinal validation accuracy: %.4f with sinusoidal PE, %.4f without (difference %+.4f)\n",
                   a->final_val_acc, b->final_val_acc, a->final_val_acc - b->final_val_acc);
        }
        if (o->test_path && *o->test_path)
            printf("final test accuracy:       %.4f with sinusoidal PE, %.4f without (difference %+.4f)\n",
                   summary[0].final_test_acc, summary[1].final_test_acc,
                   summary[0].final_test_acc - summary[1].final_test_acc);
        char path[4200];
        snprintf(path, sizeof path, "%s/compare.png", base);
        const char *names[2] = {"sinusoidal", "no PE"};
        const EpochRecord *histories[2] = {summary[0].history, summary[1].history};
        const int n_epochs[2] = {summary[0].n_epochs, summary[1].n_epochs};
        const int has_val[2] = {summary[0].has_val, summary[1].has_val};
        if (curves_compare_png(path, histories, n_epochs, has_val, names, err, sizeof err) != EXIT_OK)
            fprintf(stderr, "warning: %s\n", err);
        else
            printf("wrote %s\n", path);
    }
    free(summary[0].history);
    free(summary[1].history);
    rundir_release(&claimed);
    return rc == EXIT_INTERRUPTED ? rc : cli_report(rc, err);
}
