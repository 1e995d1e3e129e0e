/* train.c: the command line of ./train. Reads the options, picks the
 * subcommand and hands over: training to run/fit.c, the other subcommands
 * to cli/. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/fileio.h"
#include "cli/commands.h"
#include "cli/usage.h"
#include "run/dist.h"
#include "run/fit.h"
#include "run/init.h"
#include "run/options.h"
#include "run/record.h"
#include "run/rundir.h"
#include "run/signals.h"

/* Options that may change when a run is resumed; the rest shape the model or data. */
static const char *const RESUMABLE[] = {"epochs", "threads", "quiet", "patience", "stop-after", "resume"};

static int is_resumable(const char *name) {
    for (size_t i = 0; i < sizeof RESUMABLE / sizeof *RESUMABLE; i++)
        if (strcmp(name, RESUMABLE[i]) == 0) return 1;
    return 0;
}

/* A training error on stderr, naming the MPI rank in a job of several. */
static int report_fit_error(const DistContext *dist, int rc, const char *err) {
    if (rc == EXIT_OK || !err[0]) return rc;   /* an interrupt in training has spoken already (err empty) */
    if (dist->size > 1) fprintf(stderr, "error (MPI rank %d): %s\n", dist->rank, err);
    else fprintf(stderr, "error: %s\n", err);
    return rc;
}

/* Options given with --resume that the run cannot take: a value that
 * differs from the recorded one (the same value, as when the first command
 * is run again with --resume added, is no change). Returns 0 or EXIT_USAGE
 * with the message printed. */
static int refuse_changes(const Options *given, const Options *recorded, const char *dir) {
    for (int k = 0; k < OPTION_COUNT; k++) {
        const OptionSpec *s = &OPTION_TABLE[k];
        if (!options_given(given, s->name) || is_resumable(s->name)) continue;
        char now[4096], then[4096];
        options_format(given, s, now, sizeof now);
        options_format(recorded, s, then, sizeof then);
        /* a path may be spelled otherwise (the record's are absolute); --out is the run itself */
        int is_out = strcmp(s->name, "out") == 0;
        int same = (!is_out && strcmp(now, then) == 0) || fileio_same_file(now, is_out ? dir : then);
        if (same) continue;
        if (is_out)
            fprintf(stderr, "error: --out %s: a resumed run continues in its own directory, %s; drop --out\n", now, dir);
        else if (!s->recorded)   /* --overwrite: not part of a run, and the opposite of --resume */
            fprintf(stderr, "error: --%s cannot go with --resume, which continues the run in %s; drop --%s\n", s->name,
                    dir, s->name);
        else
            fprintf(stderr, "error: --%s cannot change when resuming (%s has %s, given %s); only --epochs, --patience, "
                            "--stop-after, --threads and --quiet can\n", s->name, dir, then[0] ? then : "none",
                    now[0] ? now : "none");
        return EXIT_USAGE;
    }
    return 0;
}

/* --resume RUN: the recorded options, with the few that may change taken from the command line. */
static int resume(const DistContext *dist, const Options *given, int argc, char **argv) {
    if (given->n_args > 0) {
        fprintf(stderr, "error: --resume takes its data from the run's record; drop '%s'\n", given->args[0]);
        return EXIT_USAGE;
    }
    RunDirPolicy policy = {RUNDIR_RESUME, 1, NULL, stderr};
    RunDir dir;
    RunRecord info;
    char err[1024] = "";
    int rc = rundir_claim(&dir, dist, given->resume_dir, &policy, err, sizeof err);
    if (rc != EXIT_OK) {
        if (err[0]) fprintf(stderr, "error: cannot resume: %s\n", err);
        return rc;
    }
    if (record_read(given->resume_dir, 1, &info, err, sizeof err) != 0) {
        rundir_release(&dir);
        fprintf(stderr, "error: cannot resume: %s\n", err);
        return EXIT_USAGE;
    }
    if (refuse_changes(given, &info.options, given->resume_dir) != 0) {
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
        options_set(&info.options, s, value, err, sizeof err);
    }
    if (info.options.epochs != started_epochs && !info.options.quiet)
        printf("note: --epochs %d, started with %d: the learning-rate schedule changes from where the run "
               "resumes, so `./train reproduce` (a new run with --epochs %d) will not match it\n", info.options.epochs,
               started_epochs, started_epochs);
    rc = fit(dist, &info.options, info.data_path, given->resume_dir, 1, argc, argv, NULL, err, sizeof err);
    rundir_release(&dir);
    record_free(&info);
    return report_fit_error(dist, rc, err);
}

static int train_command(const DistContext *dist, Options *o, int argc, char **argv) {
    if (o->resume_dir && *o->resume_dir) return resume(dist, o, argc, argv);
    if (o->n_args != 1) {
        fprintf(stderr, "error: %s (see ./train --help)\n",
                o->n_args == 0 ? "no data file given: ./train DATA.tsv [options]" : "more than one data file given");
        return EXIT_USAGE;
    }
    char err[1024] = "";
    /* --init RUN: the model options become RUN's (run.json records them) */
    int rc = init_adopt_options(o, err, sizeof err);
    if (rc != EXIT_OK) return report_fit_error(dist, rc, err);
    /* SPEC 2: a directory holding a run is refused without --overwrite; the default one is numbered instead */
    RunDirPolicy policy = {o->overwrite ? RUNDIR_OVERWRITE : RUNDIR_NEW, 1, NULL, stderr};
    RunDir dir;
    if (o->out_dir && *o->out_dir) {
        rc = rundir_claim(&dir, dist, o->out_dir, &policy, err, sizeof err);
    } else {
        char base[4096];
        rundir_default(o->args[0], options_pretrain(o) ? "-pretrain" : "", base, sizeof base);
        rc = rundir_claim_numbered(&dir, dist, base, &policy, err, sizeof err);
    }
    if (rc != EXIT_OK) return report_fit_error(dist, rc, err);
    rc = fit(dist, o, o->args[0], dir.path, 0, argc, argv, NULL, err, sizeof err);
    rundir_release(&dir);
    return report_fit_error(dist, rc, err);
}

/* MPI: only training is split over ranks; the other commands run on rank 0
 * alone (it trains as one process in reproduce and compare-pe). */
static int other_ranks_idle(const DistContext *dist, const char *command) {
    if (dist->size == 1 || strcmp(command, "fit") == 0 || strcmp(command, "pretrain") == 0) return 0;
    if (dist->rank == 0)
        fprintf(stderr, "note: only training is split over MPI ranks; '%s' runs on rank 0 alone\n", command);
    return dist->rank != 0;
}

/* `./train help [CMD]`: the whole usage, or one command's. */
static int help_command(int argc, char **argv) {
    if (argc < 3) {
        options_help(stdout);
        return EXIT_OK;
    }
    const CommandSpec *c = usage_command(argv[2]);
    if (c) {
        usage_print(stdout, c);
        return EXIT_OK;
    }
    const char *close = usage_suggest_command(argv[2]);
    fprintf(stderr, "error: help: no command '%s'%s%s%s (commands:", argv[2], close ? "; did you mean '" : "",
            close ? close : "", close ? "'?" : "");
    for (int i = 0; i < COMMAND_COUNT; i++) fprintf(stderr, " %s", COMMANDS[i].name);
    fprintf(stderr, ")\n");
    return EXIT_USAGE;
}

/* A first argument that is neither a command nor a file, but close to a
 * command's name, is a mistyped command: 1 after saying so. */
static int mistyped_command(const char *word) {
    /* the words other tools use for these commands */
    static const char *const OTHER_NAMES[][2] = {{"train", "fit"}, {"evaluate", "eval"}, {"infer", "predict"},
                                                 {"inference", "predict"}, {"resume", "--resume"}};
    const char *other = NULL;
    for (size_t i = 0; i < sizeof OTHER_NAMES / sizeof *OTHER_NAMES; i++)
        if (strcmp(word, OTHER_NAMES[i][0]) == 0) other = OTHER_NAMES[i][1];
    /* a file of that name is data, unless it is a program (./train train
     * DATA, run beside the binary) */
    struct stat st;
    int exists = stat(word, &st) == 0, program = exists && S_ISREG(st.st_mode) && access(word, X_OK) == 0;
    if (word[0] == '-' || (exists && !(other && program))) return 0;
    const char *close = other ? other : usage_suggest_command(word);
    if (!close) return 0;
    fprintf(stderr, "error: unknown command '%s'; did you mean '%s'? (to train on a file: ./train DATA.tsv; "
                    "see ./train --help)\n", word, close);
    return 1;
}

static int run_command(const DistContext *dist, int argc, char **argv) {
    if (argc < 2) {
        options_help(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "help") == 0) return help_command(argc, argv);
    const CommandSpec *spec = usage_command(argv[1]);
    int first = spec ? 2 : 1;
    if (!spec && mistyped_command(argv[1])) return EXIT_USAGE;
    for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (spec) usage_print(stdout, spec);
            else options_help(stdout);
            return EXIT_OK;
        }
        if (strcmp(argv[i], "--version") == 0) {
            printf("train %s\nmpi: %s\n", program_version(), dist_built_with_mpi() ? "yes" : "no");
            return EXIT_OK;
        }
    }
    if (!spec) spec = usage_command("fit");
    const char *command = spec->name;
    Options o;
    options_defaults(&o);
    int rc = options_parse(&o, argc, argv, first);
    if (rc == 0) rc = usage_check_options(spec, &o);
    if (rc == 0 && strcmp(command, "pretrain") == 0) {
        /* ./train pretrain TEXTS is training with --task pretrain, which run.json
         * records so that --resume continues it as pretraining */
        if (options_given(&o, "task") && !options_pretrain(&o)) {
            options_free(&o);
            return cli_usage_error("./train pretrain takes no --task");
        }
        char err[1024];
        RunRecord info;   /* pretrain --resume RUN: RUN must be a pretrain run */
        if (o.resume_dir && *o.resume_dir && record_read(o.resume_dir, 0, &info, err, sizeof err) == 0) {
            int classifier = !options_pretrain(&info.options);
            record_free(&info);
            if (classifier) {
                fprintf(stderr, "error: %s is a classifier's run, not a pretrain run; continue it with ./train --resume "
                                "%s\n", o.resume_dir, o.resume_dir);
                options_free(&o);
                return EXIT_USAGE;
            }
        }
        if (!(o.resume_dir && *o.resume_dir) && options_set(&o, options_find("task"), "pretrain", err, sizeof err)) {
            options_free(&o);
            return cli_report(EXIT_RUNTIME, err);
        }
        command = "fit";
    }
    if (rc == 0 && other_ranks_idle(dist, command)) {
        options_free(&o);
        return EXIT_OK;
    }
    if (rc == 0) {
#ifdef _OPENMP
        if (o.threads > 0) omp_set_num_threads(o.threads);
#endif
        /* only training saves its state on an interrupt; the others just stop */
        if (strcmp(command, "fit") == 0 || strcmp(command, "reproduce") == 0 || strcmp(command, "compare-pe") == 0)
            signals_install();
        if (strcmp(command, "fit") == 0) rc = train_command(dist, &o, argc, argv);
        else if (strcmp(command, "eval") == 0) rc = command_eval(&o, argc, argv);
        else if (strcmp(command, "predict") == 0) rc = command_predict(&o, argc, argv);
        else if (strcmp(command, "trace") == 0) rc = command_trace(&o, argc, argv);
        else if (strcmp(command, "reproduce") == 0) rc = command_reproduce(&o, argc, argv);
        else if (strcmp(command, "diff") == 0) rc = command_diff(&o);
        else if (strcmp(command, "film") == 0) rc = command_film(&o, argc, argv);
        else rc = command_compare_pe(&o, argc, argv);
    }
    options_free(&o);
    return rc;
}

int main(int argc, char **argv) {
    DistContext dist;
    char err[512];
    if (dist_init(&dist, &argc, &argv, err, sizeof err) != 0) {
        fprintf(stderr, "error: %s\n", err);
        return EXIT_RUNTIME;
    }
    int rc = run_command(&dist, argc, argv);
    return dist_finish(&dist, rc, EXIT_INTERRUPTED);
}
