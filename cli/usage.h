/* usage.h: the subcommands in one table: each one's usage, what it does
 * and the options it reads. The table drives `./train CMD --help`,
 * `./train help CMD`, "did you mean" for a mistyped command, and the
 * refusal of an option that cannot act in a command. */
#ifndef CLI_USAGE_H
#define CLI_USAGE_H

#include <stdio.h>

#include "run/options.h"

typedef struct {
    const char *name;        /* "fit", "eval", ... */
    const char *usage;       /* usage lines, each ending in \n */
    const char *about;       /* what it does, lines ending in \n */
    const char *options;     /* option names it reads, space-separated; "@training" stands for every option
                                training reads, "-name" takes one away */
} CommandSpec;

extern const CommandSpec COMMANDS[];
extern const int COMMAND_COUNT;

/* The command of that name, or NULL. */
const CommandSpec *usage_command(const char *name);
/* The command name closest to a mistyped one, or NULL. */
const char *usage_suggest_command(const char *word);
/* 1 when the command reads the option (name without --). */
int usage_allows(const CommandSpec *command, const char *option);
/* `./train CMD --help`: usage, what it does, and its options with defaults. */
void usage_print(FILE *out, const CommandSpec *command);
/* An option given that the command cannot act on is a usage error: prints
 * "error: --X cannot act in CMD ..." naming the command's options and
 * returns EXIT_USAGE; else EXIT_OK. */
int usage_check_options(const CommandSpec *command, const Options *o);

#endif
