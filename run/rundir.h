/* rundir.h: the run directory: where a run's files live, its default name,
 * cleaning up what a killed write left behind, and the claim a run holds
 * on its directory for its whole life (docs/DESIGN.md §2):
 *
 * - A directory "holds a run" when it has a run.json, model.safetensors or
 *   state.safetensors (a caller may name other marker files). A new run
 *   into it is refused (exit 2, naming it and the options that would
 *   proceed) unless it overwrites (--overwrite) or continues (--resume) it.
 * - Without --out, a taken runs/<data-name> becomes runs/<data-name>-2,
 *   -3, ...; "taken" is holding a run or being in use.
 * - One process per run directory: the claim holds an flock() on DIR/.lock
 *   until it is released, with the holder (pid, host, start time) written
 *   in the file, so a refusal names it. The kernel drops the lock when its
 *   holder dies, however it dies: a .lock still naming a holder but not
 *   locked is a killed run's, taken over with a note.
 * - Under MPI rank 0 alone claims and locks; the others learn the outcome
 *   and the directory chosen from it. */
#ifndef RUN_RUNDIR_H
#define RUN_RUNDIR_H

#include <stddef.h>
#include <stdio.h>

#include "run/dist.h"

/* dir + "/" + name into buf (cut at len; a path that long fails at open). */
void rundir_path(char *buf, size_t len, const char *dir, const char *name);
/* 1 when dir holds name (a file such as state.safetensors: what the run
 * has saved so far). */
int rundir_holds(const char *dir, const char *name);
/* 1 when the file at path lies directly in dir (any spelling of either). */
int rundir_contains(const char *dir, const char *path);
/* runs/<name><suffix>: name is the data file's name without extension, or
 * its folder's name for train.tsv and data.tsv (data/negation/train.tsv ->
 * negation), or "pipe" for a descriptor (<(...): /dev/fd/63, /dev/stdin). */
void rundir_default(const char *data_path, const char *suffix, char *buf, size_t len);
/* Removes the temporary files (NAME.tmp.XXXXXX, see base/fileio.c) of the
 * run's outputs that a run killed in the middle of an atomic write left. */
void rundir_remove_temporaries(const char *dir);
/* Removes the output files of an earlier run (model, state, metrics, curves,
 * reports, run.json; nothing else), for a new run replacing it; a note on
 * log (when not NULL) names the earlier run's reproduce/ directories, which
 * stay. EXIT_OK, or
 * ERR_RUNTIME with a message naming the file that could not be removed. */
int rundir_remove_outputs(const char *dir, FILE *log, char *err, size_t errlen);

typedef enum {
    RUNDIR_NEW,        /* refuse a directory that holds a run */
    RUNDIR_OVERWRITE,  /* replace the run there (--overwrite) */
    RUNDIR_RESUME      /* continue the run there (--resume) */
} RunDirMode;

typedef struct {
    RunDirMode mode;
    int resumable;               /* a refusal suggests --resume too (training; not reproduce, compare-pe) */
    const char *const *markers;  /* NULL-ended files that mean "holds a run"; NULL: any a run writes */
    FILE *log;                   /* notes: a killed run's lock taken over, a numbered directory */
} RunDirPolicy;

typedef struct {
    char path[4096];   /* the directory claimed */
    int lock_fd;       /* the open, flock()ed DIR/.lock; -1 when none is held (MPI ranks other than 0) */
    size_t created;    /* the claim made the directory and its parents path[0..created) on (0: none), so
                          empty ones are removed on release */
} RunDir;

/* Claims dir under the policy: creates it, locks it, checks it does not
 * hold a run (RUNDIR_NEW). dist NULL: one process. Returns EXIT_OK;
 * ERR_INPUT when dir holds a run or is in use by a live process (the
 * message names the directory, the holder and the options that would
 * proceed); ERR_RUNTIME when it cannot be created or locked (a read-only
 * directory: the message names the lock file). On failure nothing is held. */
int rundir_claim(RunDir *rd, const DistContext *dist, const char *dir, const RunDirPolicy *policy, char *err,
                 size_t errlen);
/* The default directory: base itself, or with RUNDIR_NEW the first of
 * base-2, base-3, ... that neither holds a run nor is in use (with a note
 * to the log saying where the run writes). */
int rundir_claim_numbered(RunDir *rd, const DistContext *dist, const char *base, const RunDirPolicy *policy,
                          char *err, size_t errlen);
/* For a command that reads a run (reproduce, diff, eval): ERR_INPUT while a
 * live process holds dir's lock (a run still writing it), the message
 * naming the holder from the lock and ending "then <doing>"; EXIT_OK
 * otherwise. Creates nothing; the shared lock it tries is dropped at once. */
int rundir_check_idle(const char *dir, const char *doing, char *err, size_t errlen);
/* Ends the claim: empties and removes the lock file, unlocks, and removes
 * the directory and the parents the claim made while nothing was written
 * there (a run that failed first leaves no empty directories behind). */
void rundir_release(RunDir *rd);

#endif
