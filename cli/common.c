/* common.c: how the subcommands report errors (see commands.h). */
#include "cli/commands.h"

#include <stdio.h>

int cli_usage_error(const char *message) {
    fprintf(stderr, "error: %s (see ./train --help)\n", message);
    return EXIT_USAGE;
}

int cli_report(int rc, const char *message) {
    if (rc != EXIT_OK && message && *message) fprintf(stderr, "error: %s\n", message);
    return rc;
}
