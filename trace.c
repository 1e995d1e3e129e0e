/* trace.c: `./train trace` (see trace.h). */
#include "trace.h"

#include <stdio.h>

#include "trainer.h"

int command_trace(const Options *o) {
    (void)o;
    fprintf(stderr, "error: trace is not available yet\n");
    return EXIT_RUNTIME;
}
