/* rundir.c: the run directory (see rundir.h). */
#include "run/rundir.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void rundir_path(char *buf, size_t len, const char *dir, const char *name) {
    if (snprintf(buf, len, "%s/%s", dir, name) >= (int)len) buf[len - 1] = '\0';
}

void rundir_default(const char *data_path, const char *suffix, char *buf, size_t len) {
    const char *slash = strrchr(data_path, '/');
    const char *base = slash ? slash + 1 : data_path;
    char name[256];
    snprintf(name, sizeof name, "%s", base);
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
    static const char *const outputs[] = {"model.safetensors", "state.safetensors", "metrics.csv", "curves.png",
                                          "confusion.png", "confusion_test.png", "report.txt", "run.json"};
    DIR *d = opendir(dir);
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        for (size_t i = 0; i < sizeof outputs / sizeof *outputs; i++) {
            size_t n = strlen(outputs[i]);
            if (strncmp(e->d_name, outputs[i], n) != 0 || strncmp(e->d_name + n, ".tmp.", 5) != 0 ||
                strlen(e->d_name + n + 5) != 6)
                continue;
            char path[4096];
            rundir_path(path, sizeof path, dir, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}
