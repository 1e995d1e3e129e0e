/* rundir.h: the run directory: where a run's files live, its default name,
 * and cleaning up what a killed write left behind. */
#ifndef RUN_RUNDIR_H
#define RUN_RUNDIR_H

#include <stddef.h>

/* dir + "/" + name into buf (cut at len; a path that long fails at open). */
void rundir_path(char *buf, size_t len, const char *dir, const char *name);
/* runs/<name><suffix>: name is the data file's name without extension, or
 * its folder's name for train.tsv and data.tsv (data/negation/train.tsv ->
 * negation). */
void rundir_default(const char *data_path, const char *suffix, char *buf, size_t len);
/* Removes the temporary files (NAME.tmp.XXXXXX, see base/fileio.c) of the
 * run's outputs that a run killed in the middle of an atomic write left. */
void rundir_remove_temporaries(const char *dir);

#endif
