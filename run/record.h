/* record.h: run.json, the record of everything a run depends on: command
 * line, working directory, every option's effective value, data files with
 * SHA-256 and line counts, program version, compiler, flags and machine.
 * resume and reproduce read it back and check the data is unchanged; the
 * relative paths it holds are read against the recorded working directory
 * where the file is found there. */
#ifndef RUN_RECORD_H
#define RUN_RECORD_H

#include <stddef.h>

#include "run/options.h"

/* The files a run depends on: its data (train, val, test) and --init's checkpoint. */
#define RECORD_MAX_FILES 4

/* A run's id: hex digits of a SHA-256, see record_run_id. */
#define RECORD_ID_LEN 32

typedef struct {
    char role[8];          /* train, val, test, or init (the --init checkpoint) */
    char *path;            /* owned by a RunRecord; borrowed when passed to record_write */
    char sha256[65];
    long lines;
} DataFileInfo;

typedef struct {
    Options options;       /* recorded options over the defaults */
    char *data_path;       /* the training file */
    DataFileInfo files[RECORD_MAX_FILES];
    int n_files;
    int threads;
    char *version;
    char *cwd;             /* the working directory the run started in, or NULL (older records) */
    char run_id[RECORD_ID_LEN + 1];   /* what ties a state to the run (record_run_id); "" in older records */
} RunRecord;

/* Hash and line count of a file, read as a stream. Status as base/errors.h. */
int record_file_digest(const char *path, char sha256[65], long *lines, char *err, size_t errlen);
/* The run's id, written in run.json and in every state.safetensors the run
 * saves, so --resume knows a state is this run's: the first
 * RECORD_ID_LEN hex digits of the SHA-256 of the recorded options (the
 * seed among them) and the data files' roles and digests. -1 when out of
 * memory. */
int record_run_id(const Options *o, const DataFileInfo *files, int n_files, char id[RECORD_ID_LEN + 1]);
/* Writes dir/run.json atomically (with the run id). files (n_files, train first) are the data
 * files as the run read them: their hashes come from that one read, so a
 * FIFO or a pipe, which cannot be read twice, is recorded too. */
int record_write(const char *dir, const Options *o, const char *data_path, int argc, char **argv, int threads,
                 const DataFileInfo *files, int n_files, char *err, size_t errlen);
/* Reads dir/run.json. With resolve, relative paths are taken against the
 * recorded working directory where the file is there (for opening them);
 * without, they stay as recorded (for showing them, as diff does). */
int record_read(const char *dir, int resolve, RunRecord *info, char *err, size_t errlen);
void record_free(RunRecord *info);
/* 0 when every recorded data file still has its SHA-256; else ERR_INPUT
 * with a message naming the file (missing, unreadable, changed, or not a
 * regular file: a FIFO or pipe cannot be read a second time). */
int record_check_data(const RunRecord *info, char *err, size_t errlen);
/* 1 when a later process can read path again and find the same data, as
 * --resume and reproduce do: a regular file, named other than through a
 * descriptor of this process (/dev/fd/N, /dev/stdin, /proc/.../fd/N, what
 * bash's <(...) gives). A pipe, FIFO or device gives 0. */
int record_rereadable(const char *path);
/* The program version (git describe at build time). */
const char *program_version(void);

#endif
