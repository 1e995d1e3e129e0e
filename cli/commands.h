/* commands.h: the subcommands of ./train besides training itself. Each
 * takes the parsed options, prints its own errors ("error: ..." on
 * stderr) and returns an exit code (base/errors.h). */
#ifndef CLI_COMMANDS_H
#define CLI_COMMANDS_H

#include "run/options.h"

/* The batch predict, eval and trace run the model with. */
#define CLI_BATCH 32

int command_eval(const Options *o);
int command_predict(const Options *o);
int command_trace(const Options *o);
int command_reproduce(const Options *o, int argc, char **argv);
int command_diff(const Options *o);
int command_compare_pe(const Options *o, int argc, char **argv);

/* "error: message (see ./train --help)" on stderr; returns EXIT_USAGE. */
int cli_usage_error(const char *message);
/* "error: message" on stderr (nothing for an empty message); returns rc. */
int cli_report(int rc, const char *message);

#endif
