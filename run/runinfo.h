/* runinfo.h: run.json, the record of everything a run depends on: command
 * line, every option's effective value, data files with SHA-256 and line
 * counts, program version, compiler, flags and machine. */
#ifndef RUNINFO_H
#define RUNINFO_H

#include <stddef.h>

#include "run/options.h"

typedef struct {
    char role[8];          /* train, val, test */
    char *path;
    char sha256[65];
    long lines;
} DataFileInfo;

typedef struct {
    Options options;       /* recorded options over the defaults */
    char *data_path;       /* the training file */
    DataFileInfo files[3];
    int n_files;
    int threads;
    char *version;
} RunInfo;

/* Hash and line count of a file. Returns 0, or -1 with a message. */
int file_digest(const char *path, char sha256[65], long *lines, char *err, size_t errlen);
/* Writes dir/run.json atomically. */
int runinfo_write(const char *dir, const Options *o, const char *data_path, int argc, char **argv, int threads,
                  char *err, size_t errlen);
int runinfo_read(const char *dir, RunInfo *info, char *err, size_t errlen);
void runinfo_free(RunInfo *info);
/* The program version (git describe at build time). */
const char *program_version(void);

#endif
