/* fileio.h: whole-file reads and atomic writes (temporary file in the same
 * directory, fsync, rename, fsync of the directory), so a crash never
 * leaves a half-written file. */
#ifndef FILEIO_H
#define FILEIO_H

#include <stddef.h>

#include "base/errors.h"

/* Writes data to path atomically. Returns 0, or -1 with "path: reason" in err. */
int atomic_write(const char *path, const void *data, size_t len, char *err, size_t errlen);
/* Reads a whole regular file (refuses directories) into a malloc'd buffer with
 * a NUL appended (not counted in *len). Returns NULL with "path: reason". */
unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen);
/* mkdir -p. Returns 0, or -1 with a message (and the directories it made
 * on the way removed again). */
int make_dirs(const char *path, char *err, size_t errlen);
/* make_dirs, and *made = the length of path's prefix naming the outermost
 * directory it made (0: none), for remove_made_dirs. */
int make_dirs_made(const char *path, size_t *made, char *err, size_t errlen);
/* Removes path, then each parent up to the prefix of length made (from
 * make_dirs_made), while they are empty: what make_dirs_made made, once
 * nothing was written there. Nothing when made is 0. */
void remove_made_dirs(const char *path, size_t made);

/* 1 when path names one of this process's descriptors (/dev/fd/N,
 * /dev/stdin, /proc/.../fd/N: what bash's <(...) gives): in a later
 * process it is gone, or another file. */
int fileio_is_descriptor(const char *path);
/* 1 when both paths exist and name the same file or directory (the same
 * device and inode, whatever the spelling: runs/a, ./runs/a/, a link). */
int fileio_same_file(const char *a, const char *b);

#endif
