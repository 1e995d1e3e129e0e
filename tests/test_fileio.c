/* test_fileio.c: atomic_write, read_file and make_dirs, including their failures and leftovers. */
#include "base/fileio.h"
#include "tests/check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Counts entries of dir whose name contains ".tmp." (leftover temporaries). */
static int count_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static int file_equals(const char *path, const void *want, size_t want_len)
{
    char err[256];
    size_t len = 0;
    unsigned char *got = read_file(path, &len, err, sizeof err);
    int same = got && len == want_len && memcmp(got, want, len) == 0 && got[len] == '\0';
    free(got);
    return same;
}

static void test_atomic_write(const char *dir)
{
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    const char first[] = "first contents\n";
    CHECK(atomic_write(path, first, sizeof first - 1, err, sizeof err) == 0, "write: %s", err);
    CHECK(file_equals(path, first, sizeof first - 1), "first contents read back");

    /* rewrite with longer binary data, then with nothing */
    unsigned char big[100000];
    for (size_t i = 0; i < sizeof big; i++) big[i] = (unsigned char)(i * 7 + (i >> 8));
    CHECK(atomic_write(path, big, sizeof big, err, sizeof err) == 0, "rewrite: %s", err);
    CHECK(file_equals(path, big, sizeof big), "rewritten contents read back");
    CHECK(atomic_write(path, NULL, 0, err, sizeof err) == 0, "empty write: %s", err);
    CHECK(file_equals(path, "", 0), "empty file read back");
    CHECK(count_temporaries(dir) == 0, "no temporaries left after success");

    /* the new file gets the ordinary 0666 & ~umask mode, not mkstemp's 0600 */
    mode_t old = umask(022);
    CHECK(atomic_write(path, "x", 1, err, sizeof err) == 0, "write: %s", err);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644, "mode is %o, want 644", (unsigned)(st.st_mode & 0777));
    umask(old);

    /* a directory that does not exist */
    char missing[512];
    snprintf(missing, sizeof missing, "%s/no/such/dir/file.bin", dir);
    err[0] = '\0';
    CHECK(atomic_write(missing, "x", 1, err, sizeof err) == -1, "write into a missing directory fails");
    CHECK(strstr(err, missing) != NULL && strstr(err, "No such file or directory") != NULL,
          "message names the path and the reason: %s", err);

    /* the target is a directory: the rename fails and the temporary goes away */
    char subdir[512];
    snprintf(subdir, sizeof subdir, "%s/adir", dir);
    CHECK(mkdir(subdir, 0777) == 0, "mkdir %s", subdir);
    err[0] = '\0';
    CHECK(atomic_write(subdir, "x", 1, err, sizeof err) == -1, "writing over a directory fails");
    CHECK(strstr(err, subdir) != NULL && strstr(err, "rename") != NULL, "message: %s", err);
    CHECK(count_temporaries(dir) == 0, "no temporaries left after failure");
    rmdir(subdir);

    CHECK(atomic_write("", "x", 1, err, sizeof err) == -1, "empty path refused");
}

static void test_read_file(const char *dir)
{
    char err[512] = "";
    size_t len = 123;
    CHECK(read_file(dir, &len, err, sizeof err) == NULL, "directory refused");
    CHECK(strstr(err, "is a directory") != NULL && strstr(err, dir) != NULL, "message: %s", err);
    CHECK(len == 0, "length zeroed on failure");

    char path[512];
    snprintf(path, sizeof path, "%s/absent", dir);
    CHECK(read_file(path, &len, err, sizeof err) == NULL, "missing file refused");
    CHECK(strstr(err, path) != NULL && strstr(err, "No such file") != NULL, "message: %s", err);

    /* unreadable: only meaningful when not root (root reads anything) */
    snprintf(path, sizeof path, "%s/secret", dir);
    CHECK(atomic_write(path, "s", 1, err, sizeof err) == 0, "write: %s", err);
    chmod(path, 0);
    if (geteuid() != 0) {
        CHECK(read_file(path, &len, err, sizeof err) == NULL && strstr(err, "Permission denied"), "message: %s", err);
    } else {
        printf("skip: an unreadable file's message (root reads any file)\n");
    }
    unlink(path);

    /* a non-regular file (a character device) is read until EOF */
    unsigned char *buf = read_file("/dev/null", &len, err, sizeof err);
    CHECK(buf && len == 0 && buf[0] == '\0', "/dev/null reads as empty: %s", err);
    free(buf);
}

static void test_make_dirs(const char *dir)
{
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/a/b//c/", dir);
    CHECK(make_dirs(path, err, sizeof err) == 0, "nested: %s", err);
    struct stat st;
    snprintf(path, sizeof path, "%s/a/b/c", dir);
    CHECK(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "a/b/c exists");
    CHECK(make_dirs(path, err, sizeof err) == 0, "existing is fine: %s", err);

    char file[512];
    snprintf(file, sizeof file, "%s/a/file", dir);
    CHECK(atomic_write(file, "x", 1, err, sizeof err) == 0, "write: %s", err);
    snprintf(path, sizeof path, "%s/a/file/sub", dir);
    CHECK(make_dirs(path, err, sizeof err) == -1, "a file in the way fails");
    CHECK(strstr(err, "not a directory") != NULL, "message: %s", err);
    CHECK(make_dirs("", err, sizeof err) == -1, "empty path refused");
    CHECK(make_dirs("/", err, sizeof err) == 0, "/ exists: %s", err);
    unlink(file);
    snprintf(path, sizeof path, "%s/a/b/c", dir); rmdir(path);
    snprintf(path, sizeof path, "%s/a/b", dir); rmdir(path);
    snprintf(path, sizeof path, "%s/a", dir); rmdir(path);
}

/* A message longer than its buffer keeps its start and its end (the reason)
 * around "...", cut between UTF-8 characters; a short one is untouched. */
static void test_long_message(void)
{
    char path[3001], err[200];
    for (int i = 0; i < 3000; i++) path[i] = i % 3 == 2 ? '/' : (char)0xC3;   /* "\xC3" + "\xA9" below: é */
    for (int i = 1; i < 3000; i += 3) path[i] = (char)0xA9;
    path[3000] = '\0';
    int code = fail(err, sizeof err, ERR_INPUT, "%s: No such file or directory (give the data file)", path);
    CHECK(code == ERR_INPUT, "fail returns its code");
    size_t n = strlen(err);
    CHECK(n <= sizeof err - 1 && n > sizeof err - 8, "the message fills the buffer: %zu bytes", n);
    CHECK(strncmp(err, path, 30) == 0, "the start is kept: %.40s", err);
    CHECK(strstr(err, "...") != NULL, "the middle is marked: %s", err);
    const char *end = ": No such file or directory (give the data file)";
    CHECK(n >= strlen(end) && strcmp(err + n - strlen(end), end) == 0, "the reason is kept: %s", err);
    int whole = 1;   /* every é is whole: a 0xA9 follows each 0xC3 and precedes none but a 0xC3 */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)err[i];
        if (c == 0xC3 && (unsigned char)err[i + 1] != 0xA9) whole = 0;
        if (c == 0xA9 && (i == 0 || (unsigned char)err[i - 1] != 0xC3)) whole = 0;
    }
    CHECK(whole, "no UTF-8 character is cut");
    set_error(err, sizeof err, "%s: %s", "short.tsv", "fine");
    CHECK(strcmp(err, "short.tsv: fine") == 0, "a short message as formatted: %s", err);
}

int main(void)
{
    test_long_message();
    char dir[] = "/tmp/test_fileio.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_atomic_write(dir);
    test_read_file(dir);
    test_make_dirs(dir);
    char path[512];
    snprintf(path, sizeof path, "%s/out.bin", dir);
    unlink(path);
    CHECK(rmdir(dir) == 0, "test directory left empty");
    return check_summary("test_fileio");
}
