/* commands.h: the subcommands of ./train besides training itself. Each
 * takes the parsed options, prints its own errors ("error: ..." on
 * stderr) and returns an exit code (base/errors.h). */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

#include <stdio.h>

#include "run/options.h"
#include "run/saved_model.h"

/* The batch predict, eval and trace run the model with. */
#define CLI_BATCH 32

/* argc and argv are the whole command line (for the command an error offers). */
int command_eval(const Options *o, int argc, char **argv);
int command_predict(const Options *o, int argc, char **argv);
int command_trace(const Options *o, int argc, char **argv);
int command_reproduce(const Options *o, int argc, char **argv);
int command_diff(const Options *o);
int command_compare_pe(const Options *o, int argc, char **argv);
/* ./train film RUN: the probes' record as tables, moments, a page and a strip (cli/film.c). */
int command_film(const Options *o, int argc, char **argv);

/* A pretraining model's guesses for the [MASK] tokens of tokens (B,T) (eval
 * mode): for each row, for each [MASK] in it, the CLI_MASK_TOP most likely
 * vocabulary tokens and their probabilities. One line a row: the masks'
 * lists tab-separated, each "token p  token p  ..." (p %.4f, tokens never
 * hold spaces); "(no [MASK])"
 * for a row without one. With verbose, one line a mask instead, numbered
 * by position. Returns EXIT_OK. */
#define CLI_MASK_TOP 5
int cli_print_mask_fills(FILE *out, SavedModel *run, const int *tokens, int B, int T, int verbose);

/* "error: message (see ./train --help)" on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *message);
/* The error for a command run without --model RUN (exit 2); also is what
 * else the command accepts instead ("" for nothing). When its first
 * argument is a run directory or a .safetensors file, the user meant it as
 * the model: the message shows the command line (argc, argv) with that
 * argument moved behind --model, and needed (say "DATA.tsv") in its place
 * when nothing else is left that the command needs (NULL: nothing needed). */
int cli_missing_model(const Options *o, const char *command, const char *also, const char *needed, int argc,
                      char **argv);
/* " arg" on f, single-quoted for a shell when it holds anything but plain
 * characters (a quote inside as '\''). */
void cli_print_shell_word(FILE *f, const char *arg);
/* "error: message" on stderr (nothing for an empty message); returns rc.
 * An interrupt (EXIT_INTERRUPTED) is no error: its message stands alone. */
int cli_report(int rc, const char *message);
/* A loaded model runs its products in the precision it was trained in,
 * unless --precision was given. Returns rc. */
int cli_set_precision(const Options *o, SavedModel *run, int rc);

#endif
