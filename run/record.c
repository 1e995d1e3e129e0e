/* record.c: writing and reading run.json (see record.h). */
#include "run/record.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "base/fileio.h"
#include "formats/json.h"
#include "base/sha256.h"

/* The release is kept in the tree so that a copy without git still knows
 * it; the Makefile adds `git describe` as TRAIN_GIT when git is there. */
#define TRAIN_RELEASE "0.9.0"
#ifdef TRAIN_GIT
#define TRAIN_VERSION TRAIN_RELEASE " (git " TRAIN_GIT ")"
#else
#define TRAIN_VERSION TRAIN_RELEASE
#endif
#ifndef TRAIN_CFLAGS
#define TRAIN_CFLAGS "unknown"
#endif

const char *program_version(void) { return TRAIN_VERSION; }

int record_file_digest(const char *path, char sha256[65], long *lines, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    if (!f) return fail(err, errlen, ERR_RUNTIME, "%s: %s", path, strerror(errno));
    Sha256 hash;
    sha256_init(&hash);
    unsigned char chunk[65536];
    long count = 0;
    int last = '\n';
    for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) {
        sha256_update(&hash, chunk, n);
        for (size_t i = 0; i < n; i++) count += chunk[i] == '\n';
        last = chunk[n - 1];
    }
    int failed = ferror(f);
    int saved = errno;
    fclose(f);
    if (failed) return fail(err, errlen, ERR_RUNTIME, "%s: read error: %s", path, strerror(saved));
    sha256_final_hex(&hash, sha256);
    *lines = count + (last != '\n');
    return 0;
}

static void cpu_model(char *buf, size_t len) {
    snprintf(buf, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) != 0) continue;
        const char *colon = strchr(line, ':');
        if (!colon) break;
        snprintf(buf, len, "%s", colon + 2);
        buf[strcspn(buf, "\n")] = '\0';
        break;
    }
    fclose(f);
}

static int add_file(JsonBuf *b, const DataFileInfo *file, int first) {
    int rc = jsonbuf_puts(b, first ? "\n    " : ",\n    ");
    rc |= jsonbuf_printf(b, "{\"role\": \"%s\", \"path\": ", file->role);
    rc |= jsonbuf_string(b, file->path);
    rc |= jsonbuf_printf(b, ", \"sha256\": \"%s\", \"lines\": %ld}", file->sha256, file->lines);
    return rc;
}

int record_run_id(const Options *o, const DataFileInfo *files, int n_files, char id[RECORD_ID_LEN + 1]) {
    JsonBuf b = {0};
    int rc = options_to_json(o, &b);
    for (int i = 0; i < n_files; i++) rc |= jsonbuf_printf(&b, "\n%s %s", files[i].role, files[i].sha256);
    char hex[65] = "";
    if (rc == 0) sha256_hex(b.data, b.len, hex);
    jsonbuf_free(&b);
    memcpy(id, hex, RECORD_ID_LEN);
    id[rc == 0 ? RECORD_ID_LEN : 0] = '\0';
    return rc == 0 ? 0 : -1;
}

int record_write(const char *dir, const Options *o, const char *data_path, int argc, char **argv, int threads,
                 const DataFileInfo *files, int n_files, char *err, size_t errlen) {
    JsonBuf b = {0};
    int rc = jsonbuf_puts(&b, "{\n  \"command\": [");
    for (int i = 0; i < argc; i++) {
        rc |= jsonbuf_puts(&b, i ? ", " : "");
        rc |= jsonbuf_string(&b, argv[i]);
    }
    rc |= jsonbuf_puts(&b, "],\n  \"data\": ");
    rc |= jsonbuf_string(&b, data_path);
    /* relative paths above and below are relative to this directory */
    char cwd[4096];
    if (getcwd(cwd, sizeof cwd)) {
        rc |= jsonbuf_puts(&b, ",\n  \"cwd\": ");
        rc |= jsonbuf_string(&b, cwd);
    }
    rc |= jsonbuf_puts(&b, ",\n  \"options\": ");
    rc |= options_to_json(o, &b);
    char id[RECORD_ID_LEN + 1];
    rc |= record_run_id(o, files, n_files, id);
    rc |= jsonbuf_printf(&b, ",\n  \"run_id\": \"%s\"", id);
    rc |= jsonbuf_printf(&b, ",\n  \"seed\": %lld,\n  \"threads\": %d,\n  \"files\": [", o->seed, threads);
    for (int i = 0; i < n_files; i++) rc |= add_file(&b, &files[i], i == 0);
    char cpu[256];
    cpu_model(cpu, sizeof cpu);
#ifdef _OPENMP
    const char *openmp = "true";
#else
    const char *openmp = "false";
#endif
    rc |= jsonbuf_puts(&b, "\n  ],\n  \"version\": ");
    rc |= jsonbuf_string(&b, TRAIN_VERSION);
    rc |= jsonbuf_puts(&b, ",\n  \"compiler\": ");
#if defined(__clang__)
    rc |= jsonbuf_string(&b, "clang " __VERSION__);
#elif defined(__GNUC__)
    rc |= jsonbuf_string(&b, "gcc " __VERSION__);
#else
    rc |= jsonbuf_string(&b, "unknown");
#endif
    rc |= jsonbuf_puts(&b, ",\n  \"cflags\": ");
    rc |= jsonbuf_string(&b, TRAIN_CFLAGS);
    rc |= jsonbuf_puts(&b, ",\n  \"machine\": {\"cpu\": ");
    rc |= jsonbuf_string(&b, cpu);
    rc |= jsonbuf_printf(&b, ", \"cores\": %ld, \"openmp\": %s}\n}\n", sysconf(_SC_NPROCESSORS_ONLN), openmp);
    char path[4096];
    snprintf(path, sizeof path, "%s/run.json", dir);
    if (rc != 0) set_error(err, errlen, "%s: out of memory", path);
    else rc = atomic_write(path, b.data, b.len, err, errlen);
    jsonbuf_free(&b);
    return rc;
}

static char *dup_string(const JsonValue *v) {
    return v && v->type == JSON_STRING ? strdup(v->string) : NULL;
}

/* A relative path of the record, as the run's working directory (cwd)
 * resolves it: a newly allocated cwd/path when that exists, else NULL (the
 * path is then taken as it is, from here). So --resume and reproduce find
 * the data from any directory, and a run directory moved to another machine
 * with its data at the same relative place still works. */
static char *from_recorded_cwd(const char *cwd, const char *path) {
    if (!cwd || !path || !*path || path[0] == '/') return NULL;
    size_t len = strlen(cwd) + strlen(path) + 2;
    char *joined = malloc(len);
    if (!joined) return NULL;
    snprintf(joined, len, "%s/%s", cwd, path);
    struct stat st;
    if (stat(joined, &st) == 0) return joined;
    free(joined);
    return NULL;
}

static void resolve_path(const char *cwd, char **path) {
    char *joined = from_recorded_cwd(cwd, *path);
    if (joined) {
        free(*path);
        *path = joined;
    }
}

/* The same for path options (--val, --test, --init). */
static void resolve_option(const char *cwd, Options *o, const char *name) {
    const OptionSpec *s = options_find(name);
    char value[4096], err[64];
    if (!s) return;
    options_format(o, s, value, sizeof value);
    char *joined = from_recorded_cwd(cwd, value);
    if (joined) options_set(o, s, joined, err, sizeof err);
    free(joined);
}

int record_read(const char *dir, int resolve, RunRecord *info, char *err, size_t errlen) {
    memset(info, 0, sizeof *info);
    options_defaults(&info->options);
    char path[4096];
    snprintf(path, sizeof path, "%s/run.json", dir);
    size_t len;
    char *text = (char *)read_file(path, &len, err, errlen);
    if (!text) {
        record_free(info);   /* the defaults' strings */
        return -1;
    }
    char why[256];
    JsonValue *root = json_parse(text, len, why, sizeof why);
    free(text);
    if (!root || root->type != JSON_OBJECT) {
        set_error(err, errlen, "%s: not a run record: %s", path, root ? "not an object" : why);
        json_free(root);
        record_free(info);
        return -1;
    }
    int rc = 0;
    info->data_path = dup_string(json_get(root, "data"));
    info->version = dup_string(json_get(root, "version"));
    const JsonValue *threads = json_get(root, "threads");
    info->threads = threads && threads->type == JSON_NUMBER ? (int)threads->number : 0;
    if (!info->data_path) {
        set_error(err, errlen, "%s: has no \"data\"", path);
        rc = -1;
    } else if (options_from_json(&info->options, json_get(root, "options"), why, sizeof why) != 0) {
        set_error(err, errlen, "%s: %s", path, why);
        rc = -1;
    }
    const JsonValue *files = json_get(root, "files");
    for (int i = 0; rc == 0 && files && files->type == JSON_ARRAY && i < files->count && i < RECORD_MAX_FILES; i++) {
        const JsonValue *f = &files->items[i];
        const JsonValue *role = json_get(f, "role"), *sha = json_get(f, "sha256"), *lines = json_get(f, "lines");
        DataFileInfo *d = &info->files[info->n_files];
        d->path = dup_string(json_get(f, "path"));
        if (!role || role->type != JSON_STRING || !d->path || !sha || sha->type != JSON_STRING ||
            strlen(sha->string) != 64 || !lines || lines->type != JSON_NUMBER) {
            set_error(err, errlen, "%s: malformed entry %d in \"files\"", path, i + 1);
            free(d->path);
            d->path = NULL;
            rc = -1;
            break;
        }
        snprintf(d->role, sizeof d->role, "%s", role->string);
        memcpy(d->sha256, sha->string, 65);
        d->lines = (long)lines->number;
        info->n_files++;
    }
    const JsonValue *id = json_get(root, "run_id");
    if (rc == 0 && id && (id->type != JSON_STRING || strlen(id->string) != RECORD_ID_LEN)) {
        set_error(err, errlen, "%s: \"run_id\" is not a string of %d characters", path, RECORD_ID_LEN);
        rc = -1;
    } else if (rc == 0 && id) {
        memcpy(info->run_id, id->string, RECORD_ID_LEN + 1);
    }
    const JsonValue *cwd_value = json_get(root, "cwd");
    const char *cwd = cwd_value && cwd_value->type == JSON_STRING ? cwd_value->string : NULL;
    info->cwd = cwd ? strdup(cwd) : NULL;
    if (rc == 0 && cwd && resolve) {
        resolve_path(cwd, &info->data_path);
        for (int i = 0; i < info->n_files; i++) resolve_path(cwd, &info->files[i].path);
        resolve_option(cwd, &info->options, "val");
        resolve_option(cwd, &info->options, "test");
        resolve_option(cwd, &info->options, "init");
    }
    json_free(root);
    if (rc != 0) record_free(info);
    return rc;
}

void record_free(RunRecord *info) {
    options_free(&info->options);
    free(info->data_path);
    free(info->version);
    free(info->cwd);
    for (int i = 0; i < info->n_files; i++) free(info->files[i].path);
    memset(info, 0, sizeof *info);
}

int record_rereadable(const char *path) {
    struct stat st;
    return !fileio_is_descriptor(path) && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int record_check_data(const RunRecord *info, char *err, size_t errlen) {
    for (int i = 0; i < info->n_files; i++) {
        const DataFileInfo *file = &info->files[i];
        char hex[65], why[512], role[32];
        if (strcmp(file->role, "init") == 0) snprintf(role, sizeof role, "--init checkpoint");
        else snprintf(role, sizeof role, "%s data", file->role);
        long lines;
        struct stat st;
        if (fileio_is_descriptor(file->path))
            return fail(err, errlen, ERR_INPUT, "%s (the %s) was a descriptor of the training process (a "
                        "pipe, such as <(...) gives), which ended with it: it cannot be read again to check it is "
                        "unchanged; save the data to a file and train on that", file->path, role);
        if (stat(file->path, &st) != 0) {
            int relative = file->path[0] != '/' && info->cwd;   /* then looked for in both places */
            return fail(err, errlen, ERR_INPUT, "the %s of the run cannot be read: %s: %s%s%s%s", role,
                        file->path, strerror(errno), relative ? " (looked for in " : "", relative ? info->cwd : "",
                        relative ? ", where the run started, and here)" : "");
        }
        /* a FIFO would block here, and a pipe's data was read once by the run itself */
        if (!S_ISREG(st.st_mode))
            return fail(err, errlen, ERR_INPUT, "%s (the %s) is not a regular file but a pipe, FIFO or device: it "
                        "cannot be read again to check it is unchanged; save the data to a file and train on that",
                        file->path, role);
        if (record_file_digest(file->path, hex, &lines, why, sizeof why) != 0)
            return fail(err, errlen, ERR_INPUT, "the %s of the run cannot be read: %s", role, why);
        if (strcmp(hex, file->sha256) != 0)
            return fail(err, errlen, ERR_INPUT, "%s (the %s) has changed since the run was recorded: SHA-256 %s, "
                        "recorded %s", file->path, role, hex, file->sha256);
    }
    return EXIT_OK;
}
