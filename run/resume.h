/* resume.h: `./train --resume RUN`, the policy: the run's recorded options,
 * with the few that may change on the command line taken from it, and the
 * training continued (run/fit.c restores and checks the saved state). */
#ifndef RUN_RESUME_H
#define RUN_RESUME_H

#include <stdio.h>

#include "run/dist.h"
#include "run/options.h"

/* Continues the run in given->resume_dir: claims the directory, refuses a
 * data file or an option the run cannot take (a changed value of one that
 * shapes the model or the data), then trains on. Notes go to log. Returns
 * an exit code with the message in err (empty when there is nothing to say,
 * as on an MPI rank other than 0). */
int resume_run(const DistContext *dist, const Options *given, int argc, char **argv, FILE *log, char *err,
               size_t errlen);

#endif
