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
#include "report/font.h"
#include "run/autotune.h"
#include "run/dist.h"
#include "run/fit.h"
#include "run/init.h"
#include "run/options.h"
#include "run/record.h"
#include "run/resume.h"
#include "run/rundir.h"
#include "run/signals.h"

/* A training error on stderr, naming the MPI rank in a job of several. */
static int report_fit_error(const DistContext *dist, int rc, const char *err) {
    if (rc == EXIT_OK || !err[0]) return rc;   /* MPI: a rank other than 0 has nothing to say */
    if (rc == EXIT_INTERRUPTED) fprintf(stderr, "\n%s\n", err);   /* not an error: the state is saved */
    else if (dist->size > 1) fprintf(stderr, "error (MPI rank %d): %s\n", dist->rank, err);
    else fprintf(stderr, "error: %s\n", err);
    return rc;
}

static int train_command(const DistContext *dist, Options *o, int argc, char **argv) {
    if (o->resume_dir && *o->resume_dir) {
        char err[1024] = "";
        if (autotune_found(o->resume_dir))   /* an autotune goes on with its trials */
            return report_fit_error(dist, autotune_resume(dist, o, err, sizeof err), err);
        return report_fit_error(dist, resume_run(dist, o, argc, argv, stderr, err, sizeof err), err);
    }
    if (o->n_args != 1) {
        fprintf(stderr, "error: %s (see ./train --help)\n",
                o->n_args == 0 ? "no data file given: ./train DATA.tsv [options]" : "more than one data file given");
        return EXIT_USAGE;
    }
    char err[1024] = "";
    int rc = autotune_check_options(o, err, sizeof err);
    if (rc != EXIT_OK) return report_fit_error(dist, rc, err);
    /* --init RUN: the model options become RUN's (run.json records them) */
    rc = init_adopt_options(o, err, sizeof err);
    if (rc != EXIT_OK) return report_fit_error(dist, rc, err);
    /* docs/DESIGN.md §2: a directory holding a run is refused without --overwrite; the default one is numbered instead */
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
    if (o->autotune && *o->autotune) rc = autotune_run(dist, o, o->args[0], dir.path, err, sizeof err);
    else if ((rc = autotune_replace(dist, dir.path, o->overwrite, err, sizeof err)) == EXIT_OK)
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
    char parse_err[1024];
    int rc = options_parse(&o, argc, argv, first, parse_err, sizeof parse_err);
    if (rc != EXIT_OK) cli_report(rc, parse_err);
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
    dist.log = stderr;   /* a rank that must end the job says why here */
    int rc = run_command(&dist, argc, argv);
    const char *font_note = font_fallback_note();   /* the pictures' font, when it had to fall back */
    if (font_note) fprintf(stderr, "note: %s\n", font_note);
    return dist_finish(&dist, rc, EXIT_INTERRUPTED);
}
