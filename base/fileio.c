/* fileio.c: whole-file reads, crash-safe atomic writes and mkdir -p. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* mkostemp, strndup */
#endif
#include "base/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/* Writes all of data to fd, retrying short writes and interruptions. */
static int write_all(int fd, const unsigned char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

/* fsyncs the directory holding path so that a rename into it is durable. */
static int sync_parent_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir;
    if (!slash) dir = strdup(".");
    else if (slash == path) dir = strdup("/");
    else dir = strndup(path, (size_t)(slash - path));
    if (!dir) {
        errno = ENOMEM;
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int saved = errno;
    close(fd);
    /* some file systems cannot fsync a directory; the rename itself is done */
    if (rc != 0 && (saved == EINVAL || saved == ENOTSUP)) rc = 0;
    errno = saved;
    return rc;
}

/* The mode a plain creat() would give: 0666 minus the process umask. The
 * umask can only be read by setting it, so it is restored at once. */
static mode_t default_file_mode(void)
{
    mode_t mask = umask(022);
    umask(mask);
    return 0666 & ~mask;
}

int atomic_write(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    if (!path || !*path) {
        set_error(err, errlen, "atomic_write: empty file name");
        return -1;
    }
    if (len > 0 && !data) {
        set_error(err, errlen, "%s: no data to write", path);
        return -1;
    }
    size_t path_len = strlen(path);
    char *tmp = malloc(path_len + sizeof ".tmp.XXXXXX");
    if (!tmp) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    memcpy(tmp, path, path_len);
    memcpy(tmp + path_len, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");

    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        set_error(err, errlen, "%s: cannot create a temporary file next to it: %s", path, strerror(errno));
        free(tmp);
        return -1;
    }
    const char *stage = NULL;
    if (fchmod(fd, default_file_mode()) != 0) stage = "cannot set permissions";
    else if (write_all(fd, data, len) != 0) stage = "write failed";
    else if (fsync(fd) != 0) stage = "fsync failed";
    int saved = errno;
    if (close(fd) != 0 && !stage) {
        stage = "close failed";
        saved = errno;
    }
    if (!stage && rename(tmp, path) != 0) {
        stage = "cannot rename the temporary file into place";
        saved = errno;
    }
    if (stage) {
        unlink(tmp);
        free(tmp);
        set_error(err, errlen, "%s: %s: %s", path, stage, strerror(saved));
        return -1;
    }
    free(tmp);
    if (sync_parent_dir(path) != 0) {
        set_error(err, errlen, "%s: written, but fsync of its directory failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* Doubles cap until it exceeds used, keeping room for the trailing NUL. */
static int grow_buffer(unsigned char **buf, size_t *cap)
{
    if (*cap > SIZE_MAX / 2) {
        errno = ENOMEM;
        return -1;
    }
    unsigned char *grown = realloc(*buf, *cap * 2);
    if (!grown) {
        errno = ENOMEM;
        return -1;
    }
    *buf = grown;
    *cap *= 2;
    return 0;
}

unsigned char *read_file(const char *path, size_t *len, char *err, size_t errlen)
{
    if (len) *len = 0;
    if (!path || !*path) {
        set_error(err, errlen, "read_file: empty file name");
        return NULL;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        set_error(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        set_error(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (S_ISDIR(st.st_mode)) {
        set_error(err, errlen, "%s: is a directory, not a file", path);
        close(fd);
        return NULL;
    }
    /* Regular files start at their size (+1 so EOF is seen without growing);
     * pipes and devices start small. Either way read until EOF. */
    size_t cap = 65536;
    if (S_ISREG(st.st_mode) && st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX - 1)
        cap = (size_t)st.st_size + 2;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        set_error(err, errlen, "%s: out of memory for %zu bytes", path, cap);
        close(fd);
        return NULL;
    }
    size_t used = 0;
    for (;;) {
        if (cap - used < 2 && grow_buffer(&buf, &cap) != 0) {
            set_error(err, errlen, "%s: out of memory after %zu bytes", path, used);
            break;
        }
        ssize_t n = read(fd, buf + used, cap - used - 1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            set_error(err, errlen, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (n == 0) {
            close(fd);
            buf[used] = '\0';
            if (len) *len = used;
            return buf;
        }
        used += (size_t)n;
    }
    free(buf);
    close(fd);
    return NULL;
}

/* Creates dir unless it already exists as a directory: 1 made, 0 there, -1 failed. */
static int make_one_dir(const char *dir, const char *full, char *err, size_t errlen)
{
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return 0;
        set_error(err, errlen, "%s: cannot create directory: %s exists and is not a directory", full, dir);
        return -1;
    }
    if (mkdir(dir, 0777) == 0) return 1;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return 0;   /* lost a race */
    set_error(err, errlen, "%s: cannot create directory %s: %s", full, dir, strerror(errno));
    return -1;
}

void remove_made_dirs(const char *path, size_t made)
{
    char *dir = made ? strdup(path) : NULL;
    if (!dir) return;
    size_t len = strlen(dir);
    while (len >= made && rmdir(dir) == 0) {   /* the deepest first; one not empty ends it */
        while (len > 0 && dir[len - 1] == '/') dir[--len] = '\0';
        while (len > 0 && dir[len - 1] != '/') dir[--len] = '\0';
        while (len > 1 && dir[len - 1] == '/') dir[--len] = '\0';
    }
    free(dir);
}

int make_dirs_made(const char *path, size_t *made, char *err, size_t errlen)
{
    *made = 0;
    if (!path || !*path) {
        set_error(err, errlen, "make_dirs: empty directory name");
        return -1;
    }
    char *prefix = strdup(path);
    if (!prefix) {
        set_error(err, errlen, "%s: out of memory", path);
        return -1;
    }
    /* Visit each prefix ending before a '/', then the whole path. */
    int rc = 0;
    size_t deepest = 0, n = strlen(prefix);
    for (size_t i = 1; i <= n && rc >= 0; i++) {
        if (i < n && (prefix[i] != '/' || prefix[i - 1] == '/')) continue;
        char kept = prefix[i];
        prefix[i] = '\0';
        rc = make_one_dir(prefix, path, err, errlen);
        if (rc == 1 && !*made) *made = i;
        if (rc == 1) deepest = i;
        prefix[i] = kept;
    }
    if (rc < 0 && deepest) {   /* a failure deeper down: what was made on the way goes again */
        prefix[deepest] = '\0';
        remove_made_dirs(prefix, *made);
        *made = 0;
    }
    free(prefix);
    return rc < 0 ? -1 : 0;
}

int make_dirs(const char *path, char *err, size_t errlen)
{
    size_t made;
    return make_dirs_made(path, &made, err, errlen);
}

int fileio_is_descriptor(const char *path) {
    return strncmp(path, "/dev/fd/", 8) == 0 || strcmp(path, "/dev/stdin") == 0 ||
           (strncmp(path, "/proc/", 6) == 0 && strstr(path, "/fd/") != NULL);
}

int fileio_same_file(const char *a, const char *b) {
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}
