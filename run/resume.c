/* resume.c: `./train --resume RUN` (see resume.h): which options may
 * change, the recorded ones taken up, the training continued. */
#include "run/resume.h"

#include <string.h>

#include "base/errors.h"
#include "base/fileio.h"
#include "run/fit.h"
#include "run/record.h"
#include "run/rundir.h"

/* Options that may change when a run is resumed; the rest shape the model or data. */
static const char *const RESUMABLE[] = {"epochs", "threads", "quiet", "patience", "stop-after", "resume"};

static int is_resumable(const char *name) {
    for (size_t i = 0; i < sizeof RESUMABLE / sizeof *RESUMABLE; i++)
        if (strcmp(name, RESUMABLE[i]) == 0) return 1;
    return 0;
}

/* Options given with --resume that the run cannot take: a value that
 * differs from the recorded one (the same value, as when the first command
 * is run again with --resume added, is no change). Returns 0 or EXIT_USAGE
 * with the message in err. */
static int refuse_changes(const Options *given, const Options *recorded, const char *dir, char *err, size_t errlen) {
    for (int k = 0; k < OPTION_COUNT; k++) {
        const OptionSpec *s = &OPTION_TABLE[k];
        if (!options_given(given, s->name) || is_resumable(s->name)) continue;
        char now[4096], then[4096];
        options_format(given, s, now, sizeof now);
        options_format(recorded, s, then, sizeof then);
        /* a path may be spelled otherwise (the record's are absolute); --out is the run itself */
        int is_out = strcmp(s->name, "out") == 0;
        /* --precision auto is no change when it chooses what the run recorded */
        if (strcmp(s->name, "precision") == 0 && strcmp(now, "auto") == 0)
            snprintf(now, sizeof now, "%s", precision_name(options_precision(given)));
        int same = (!is_out && strcmp(now, then) == 0) || fileio_same_file(now, is_out ? dir : then);
        if (same) continue;
        if (is_out)
            return fail(err, errlen, EXIT_USAGE, "--out %s: a resumed run continues in its own directory, %s; drop "
                        "--out", now, dir);
        if (!s->recorded)   /* --overwrite: not part of a run, and the opposite of --resume */
            return fail(err, errlen, EXIT_USAGE, "--%s cannot go with --resume, which continues the run in %s; drop "
                        "--%s", s->name, dir, s->name);
        return fail(err, errlen, EXIT_USAGE, "--%s cannot change when resuming (%s has %s, given %s); only --epochs, "
                    "--patience, --stop-after, --threads and --quiet can", s->name, dir, then[0] ? then : "none",
                    now[0] ? now : "none");
    }
    return 0;
}

int resume_run(const DistContext *dist, const Options *given, int argc, char **argv, FILE *log, char *err,
               size_t errlen) {
    if (given->n_args > 0)
        return fail(err, errlen, EXIT_USAGE, "--resume takes its data from the run's record; drop '%s'",
                    given->args[0]);
    RunDirPolicy policy = {RUNDIR_RESUME, 1, NULL, log};
    RunDir dir;
    RunRecord info;
    char why[1024] = "";
    int rc = rundir_claim(&dir, dist, given->resume_dir, &policy, why, sizeof why);
    if (rc != EXIT_OK) {
        if (why[0]) set_error(err, errlen, "cannot resume: %s", why);
        return rc;
    }
    if (record_read(given->resume_dir, 1, &info, why, sizeof why) != 0) {
        rundir_release(&dir);
        return fail(err, errlen, EXIT_USAGE, "cannot resume: %s", why);
    }
    if (refuse_changes(given, &info.options, given->resume_dir, err, errlen) != 0) {
        record_free(&info);
        rundir_release(&dir);
        return EXIT_USAGE;
    }
    int started_epochs = info.options.epochs;
    for (size_t i = 0; i < sizeof RESUMABLE / sizeof *RESUMABLE; i++) {
        const OptionSpec *s = options_find(RESUMABLE[i]);
        if (!options_given(given, s->name)) continue;
        char value[4096];
        options_format(given, s, value, sizeof value);
        options_set(&info.options, s, value, why, sizeof why);
    }
    /* a run of one cycle stays one: more --epochs stretch its schedule, as before --cycle */
    if (info.options.cycle >= started_epochs && info.options.epochs > info.options.cycle)
        info.options.cycle = info.options.epochs;
    if (info.options.epochs != started_epochs && !info.options.quiet)
        printf("note: --epochs %d, started with %d: the learning-rate schedule changes from where the run "
               "resumes, so `./train reproduce` (a new run with --epochs %d) will not match it\n", info.options.epochs,
               started_epochs, started_epochs);
    rc = fit(dist, &info.options, info.data_path, given->resume_dir, 1, argc, argv, NULL, err, errlen);
    rundir_release(&dir);
    record_free(&info);
    return rc;
}

