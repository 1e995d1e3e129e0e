/* rundir.c: the run directory (see rundir.h): names, leftovers, and the
 * claim on a directory (its policy and its lock). */
#include "run/rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/fileio.h"

#define LOCK_NAME ".lock"
#define LOCK_ATTEMPTS 20        /* a lock file removed under us by its releasing holder: try again */
#define MAX_NUMBERED 1000       /* runs/<name>-2 .. runs/<name>-1000 */

/* What a run writes into its directory (temporaries are NAME.tmp.XXXXXX),
 * NULL-ended. Any of them means "this directory holds a run": even a lone
 * metrics.csv or report.txt is someone's work. The first three are the run
 * itself, named first in a refusal; they are removed last. */
static const char *const OUTPUTS[] = {"run.json", "model.safetensors", "state.safetensors", "metrics.csv",
                                      "report.txt", "curves.png", "confusion.png", "confusion_test.png",
                                      "probes.jsonl", "film.html", "film.png", NULL};
enum { N_OUTPUTS = sizeof OUTPUTS / sizeof *OUTPUTS - 1 };

void rundir_path(char *buf, size_t len, const char *dir, const char *name) {
    if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len) buf[len - 1] = '\0';
}

int rundir_holds(const char *dir, const char *name) {
    char path[4200];
    rundir_path(path, sizeof path, dir, name);
    return access(path, F_OK) == 0;
}

int rundir_contains(const char *dir, const char *path) {
    char folder[4200];
    snprintf(folder, sizeof folder, "%s", path);
    char *slash = strrchr(folder, '/');
    if (slash) *slash = '\0';
    return fileio_same_file(slash ? folder : ".", dir);
}

void rundir_default(const char *data_path, const char *suffix, char *buf, size_t len) {
    const char *slash = strrchr(data_path, '/');
    const char *base = slash ? slash + 1 : data_path;
    char name[256];
    /* <(...) and /dev/stdin: a descriptor's number or "stdin" names nothing of the data */
    snprintf(name, sizeof name, "%s", fileio_is_descriptor(data_path) ? "pipe" : base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name) *dot = '\0';
    if ((strcmp(name, "train") == 0 || strcmp(name, "data") == 0) && slash && slash != data_path) {
        const char *start = slash - 1;
        while (start > data_path && start[-1] != '/') start--;
        snprintf(name, sizeof name, "%.*s", (int)(slash - start), start);
    }
    snprintf(buf, len, "runs/%s%s", name, suffix);
}

void rundir_remove_temporaries(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        for (size_t i = 0; i < N_OUTPUTS; i++) {
            size_t n = strlen(OUTPUTS[i]);
            if (strncmp(e->d_name, OUTPUTS[i], n) != 0 || strncmp(e->d_name + n, ".tmp.", 5) != 0 ||
                strlen(e->d_name + n + 5) != 6)
                continue;
            char path[4096];
            rundir_path(path, sizeof path, dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

/* 1: name is "reproduce" or "reproduce-N", what reproduce writes into a run. */
static int is_reproduction(const char *name) {
    if (strncmp(name, "reproduce", 9) != 0) return 0;
    if (name[9] == '\0') return 1;
    return name[9] == '-' && name[10] && strspn(name + 10, "0123456789") == strlen(name + 10);
}

/* A note naming the reproductions an earlier run left in dir (the first
 * three in directory order): they stay
 * (a directory tree is not removed on the user's behalf) but no longer
 * reproduce the run beside them. */
static void note_kept_reproductions(const char *dir, FILE *log) {
    DIR *d = opendir(dir);
    if (!d) return;
    char names[800] = "";
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char path[4096];
        struct stat st;
        if (!is_reproduction(e->d_name)) continue;
        rundir_path(path, sizeof path, dir, e->d_name);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        size_t used = strlen(names), n = strlen(e->d_name);
        if (count++ < 3 && used + n + 3 < sizeof names) {   /* ", name" and the terminator */
            if (used) {
                memcpy(names + used, ", ", 2);
                used += 2;
            }
            memcpy(names + used, e->d_name, n + 1);
        }
    }
    closedir(d);
    if (count > 0)
        fprintf(log, "note: kept %s%s in %s from the replaced run: %s that run, not this one; remove %s if no "
                "longer wanted\n", names, count > 3 ? ", ..." : "", dir, count == 1 ? "it reproduces" : "they reproduce",
                count == 1 ? "it" : "them");
}

int rundir_remove_outputs(const char *dir, FILE *log, char *err, size_t errlen) {
    if (log) note_kept_reproductions(dir, log);
    for (int i = N_OUTPUTS - 1; i >= 0; i--) {   /* run.json last: until then the directory still holds a run */
        char path[4096];
        rundir_path(path, sizeof path, dir, OUTPUTS[i]);
        if (unlink(path) != 0 && errno != ENOENT)
            return fail(err, errlen, ERR_RUNTIME, "%s: cannot remove the earlier run's file: %s", path,
                        strerror(errno));
    }
    return EXIT_OK;
}

/* ------------------------------------------------------------ the claim */

enum { CLAIM_OK, CLAIM_TAKEN, CLAIM_BUSY };

/* The first line of the lock file: who holds (or held) it; "" when empty. */
static void read_holder(int fd, char *buf, size_t len) {
    ssize_t n = pread(fd, buf, len - 1, 0);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
}

/* Writes "pid N on host H since T" into the lock. Only a courtesy for the
 * messages (the flock is the lock), so a full disk does not stop the run. */
static void write_holder(int fd) {
    char host[256] = "?", when[64] = "?", line[512];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "?");
    host[sizeof host - 1] = '\0';
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
    int n = snprintf(line, sizeof line, "pid %ld on host %s since %s\n", (long)getpid(), host, when);
    if (ftruncate(fd, 0) == 0 && pwrite(fd, line, (size_t)n, 0) == n) return;
    int ignored = ftruncate(fd, 0);   /* better no holder named than half a line */
    (void)ignored;
}

int rundir_check_idle(const char *dir, const char *doing, char *err, size_t errlen) {
    char lock[4200];
    rundir_path(lock, sizeof lock, dir, LOCK_NAME);
    int fd = open(lock, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return EXIT_OK;   /* no lock file: no run holds the directory */
    /* a shared lock, dropped at once, is refused only while a run holds its exclusive one */
    int busy = flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    char holder[512] = "";
    if (busy) read_holder(fd, holder, sizeof holder);
    close(fd);
    if (!busy) return EXIT_OK;
    return fail(err, errlen, ERR_INPUT, "%s is in use: a run is still writing it (%s holds %s/%s), so what it holds "
                "is not yet what the run will record; wait for it to end, then %s", dir,
                holder[0] ? holder : "another process", dir, LOCK_NAME, doing);
}

/* The first three markers present in dir, comma-separated into found (""
 * when none). */
static void find_markers(const char *dir, const char *const *markers, char *found, size_t len) {
    found[0] = '\0';
    for (size_t i = 0, n = 0; markers[i] && n < 3; i++) {
        char path[4096];
        struct stat st;
        rundir_path(path, sizeof path, dir, markers[i]);
        if (stat(path, &st) != 0) continue;
        size_t used = strlen(found);
        snprintf(found + used, len - used, "%s%s", used ? ", " : "", markers[i]);
        n++;
    }
}

/* Makes dir unless it must exist already (noting whether it was there) and
 * takes its lock. *busy is set, with the holder in holder, when a live
 * process holds it; then nothing is held. A lock file naming a holder that
 * no longer holds it is noted. */
static int lock_dir(RunDir *rd, const char *dir, int create, FILE *log, int *busy, char *holder, size_t holder_len,
                    char *err, size_t errlen) {
    memset(rd, 0, sizeof *rd);
    rd->lock_fd = -1;
    *busy = 0;
    if (snprintf(rd->path, sizeof rd->path, "%s", dir) >= (int)sizeof rd->path)
        return fail(err, errlen, ERR_INPUT, "%.200s...: the run directory's name is too long", dir);
    char lock[4200];
    rundir_path(lock, sizeof lock, dir, LOCK_NAME);
    for (int attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
        struct stat st;
        if (stat(dir, &st) != 0) {
            if (!create) return fail(err, errlen, ERR_INPUT, "%s: %s", dir, strerror(errno));
            if (make_dirs_made(dir, &rd->created, err, errlen) != 0) return ERR_RUNTIME;
        } else if (!S_ISDIR(st.st_mode)) {
            return fail(err, errlen, ERR_INPUT, "%s exists and is not a directory", dir);
        }
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0 && errno == ENOENT) continue;   /* the directory went away with a releasing run */
        if (fd < 0) {
            int e = errno;
            rundir_release(rd);
            return fail(err, errlen, ERR_RUNTIME, "%s: cannot create the run directory's lock file: %s", lock,
                        strerror(e));
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int e = errno;
            if (e == EWOULDBLOCK) read_holder(fd, holder, holder_len);
            close(fd);
            rundir_release(rd);
            if (e == EWOULDBLOCK) {
                *busy = 1;
                return EXIT_OK;
            }
            return fail(err, errlen, ERR_RUNTIME, "%s: cannot lock the run directory: %s", lock, strerror(e));
        }
        /* A holder that released meanwhile removed the file we opened: lock the current one. */
        struct stat held, named;
        if (fstat(fd, &held) != 0 || stat(lock, &named) != 0 || held.st_ino != named.st_ino ||
            held.st_dev != named.st_dev) {
            close(fd);
            continue;
        }
        char stale[512];
        read_holder(fd, stale, sizeof stale);
        if (stale[0] && log)
            fprintf(log, "note: %s was left by a run that did not end cleanly (%s, killed?); it holds no lock "
                         "now, so this run takes the directory over\n", lock, stale);
        write_holder(fd);
        rd->lock_fd = fd;
        return EXIT_OK;
    }
    rundir_release(rd);
    return fail(err, errlen, ERR_RUNTIME, "%s: cannot lock the run directory: its lock file keeps disappearing",
                lock);
}

/* One directory: lock it and check it under the policy. *status says
 * whether it is claimed (CLAIM_OK, rd holds the lock) or taken (holds a run)
 * or busy (in use), with the markers found or the holder in why. */
static int claim_one(RunDir *rd, const char *dir, const RunDirPolicy *policy, int *status, char *why, size_t why_len,
                     char *err, size_t errlen) {
    int busy;
    *status = CLAIM_OK;
    why[0] = '\0';
    int rc = lock_dir(rd, dir, policy->mode != RUNDIR_RESUME, policy->log, &busy, why, why_len, err, errlen);
    if (rc != EXIT_OK) return rc;
    if (busy) {
        *status = CLAIM_BUSY;
        return EXIT_OK;
    }
    if (policy->mode == RUNDIR_RESUME) return EXIT_OK;
    find_markers(dir, policy->markers ? policy->markers : OUTPUTS, why, why_len);
    if (!why[0]) return EXIT_OK;
    if (policy->mode == RUNDIR_OVERWRITE) {
        if (policy->log)
            fprintf(policy->log, "note: --overwrite: the run in %s (%s) will be replaced once the new data is read; "
                    "until then (and if this run fails before) it stays as it is\n", dir, why);
        return EXIT_OK;
    }
    rundir_release(rd);
    *status = CLAIM_TAKEN;
    return EXIT_OK;
}

static int refuse(const char *dir, const RunDirPolicy *policy, int status, const char *why, char *err,
                  size_t errlen) {
    if (status == CLAIM_BUSY)
        return fail(err, errlen, ERR_INPUT, "%s is in use by another run (%s holds %s/%s); wait for it to end%s",
                    dir, why[0] ? why : "another process", dir, LOCK_NAME,
                    policy->mode == RUNDIR_RESUME ? "" : ", or choose another directory with --out DIR");
    char resume[4200] = "";
    /* --resume continues from a saved state: a run that ended before one
     * was written (a failure in its first epoch) can only be replaced */
    if (policy->resumable && rundir_holds(dir, "state.safetensors"))
        snprintf(resume, sizeof resume, ", --resume %s to continue it", dir);
    return fail(err, errlen, ERR_INPUT, "%s holds a run (%s) and is not replaced: give --overwrite to replace it%s, "
                "or --out DIR to write elsewhere", dir, why, resume);
}

/* Rank 0's outcome (the status and a number) for every rank of an MPI job. */
static int share_outcome(const DistContext *dist, int rc, int *number) {
    if (!dist || dist->size == 1) return rc;
    double shared[2] = {rc, *number};
    dist_share_rank0(dist, shared, 2);
    *number = (int)shared[1];
    return (int)shared[0];
}

/* Ranks other than 0 hold nothing but the name; rank 0 printed any error. */
static int follow_rank0(RunDir *rd, const char *dir, int rc, char *err, size_t errlen) {
    memset(rd, 0, sizeof *rd);
    rd->lock_fd = -1;
    snprintf(rd->path, sizeof rd->path, "%s", dir);
    if (rc != EXIT_OK && err && errlen) err[0] = '\0';
    return rc;
}

int rundir_claim(RunDir *rd, const DistContext *dist, const char *dir, const RunDirPolicy *policy, char *err,
                 size_t errlen) {
    int rc = EXIT_OK, unused = 0;
    if (!dist || dist->rank == 0) {
        int status;
        char why[512];
        rc = claim_one(rd, dir, policy, &status, why, sizeof why, err, errlen);
        if (rc == EXIT_OK && status != CLAIM_OK) rc = refuse(dir, policy, status, why, err, errlen);
    }
    rc = share_outcome(dist, rc, &unused);
    return dist && dist->rank != 0 ? follow_rank0(rd, dir, rc, err, errlen) : rc;
}

int rundir_claim_numbered(RunDir *rd, const DistContext *dist, const char *base, const RunDirPolicy *policy,
                          char *err, size_t errlen) {
    if (policy->mode != RUNDIR_NEW) return rundir_claim(rd, dist, base, policy, err, errlen);
    int rc = EXIT_OK, number = 1;
    char dir[4096];
    if (!dist || dist->rank == 0) {
        char first_why[512] = "";
        int first_status = CLAIM_OK;
        for (;; number++) {
            if (number > MAX_NUMBERED) {
                rc = fail(err, errlen, ERR_INPUT, "%s and %s-2 to %s-%d are all taken; choose a directory with --out",
                          base, base, base, MAX_NUMBERED);
                break;
            }
            if (number == 1) snprintf(dir, sizeof dir, "%s", base);
            else snprintf(dir, sizeof dir, "%s-%d", base, number);
            int status;
            char why[512];
            if ((rc = claim_one(rd, dir, policy, &status, why, sizeof why, err, errlen)) != EXIT_OK) break;
            if (status == CLAIM_OK) break;
            if (number == 1) {
                first_status = status;
                snprintf(first_why, sizeof first_why, "%s", why);
            }
        }
        if (rc == EXIT_OK && number > 1 && policy->log)
            fprintf(policy->log, "note: %s %s %s; this run writes to %s (--out DIR chooses the directory, "
                    "--overwrite replaces %s)\n", base, first_status == CLAIM_BUSY ? "is in use by" : "holds a run:",
                    first_why[0] ? first_why : "another process", dir, base);
    }
    rc = share_outcome(dist, rc, &number);
    if (!dist || dist->rank == 0) return rc;
    if (number == 1) snprintf(dir, sizeof dir, "%s", base);
    else snprintf(dir, sizeof dir, "%s-%d", base, number);
    return follow_rank0(rd, dir, rc, err, errlen);
}

void rundir_release(RunDir *rd) {
    if (rd->lock_fd >= 0) {
        char lock[4200];
        rundir_path(lock, sizeof lock, rd->path, LOCK_NAME);
        /* emptied first: should the unlink fail (a read-only directory), no holder is left named */
        int ignored = ftruncate(rd->lock_fd, 0);
        (void)ignored;
        unlink(lock);
        close(rd->lock_fd);   /* drops the flock */
        rd->lock_fd = -1;
    }
    remove_made_dirs(rd->path, rd->created);   /* stops, as it should, at the first the run wrote in */
    rd->created = 0;
}
