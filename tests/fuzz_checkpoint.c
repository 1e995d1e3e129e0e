/* fuzz_checkpoint.c: libFuzzer target for loading a checkpoint as predict does, and a training state; what loads is run. */
#include "run/saved_model.h"
#include "model.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Configs needing more memory are refused by load_run on small machines
 * only; the harness skips them so the fuzzer's memory limit is not hit. */
#define MAX_MODEL_BYTES ((size_t)64 << 20)
#define BATCH 2

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input as a file without touching the disk: a memfd seen through /proc. */
static int memory_file(const uint8_t *data, size_t size, char *path, size_t len) {
    int fd = memfd_create("checkpoint", 0);
    if (fd < 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) { close(fd); return -1; }
        done += (size_t)n;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* A loaded model answers a text with probabilities that sum to about 1 or are NaN. */
static void run_text(SavedModel *run, const char *text) {
    Model *m = run->model;
    int max_len = m->cfg.max_len, truncated;
    int *ids = malloc(sizeof(int) * (size_t)max_len);
    if (!ids) return;
    int T = encode_text(text, &run->vocab, run->tokenizer, max_len, ids, &truncated);
    ForwardOptions eval = {.training = 0};
    model_forward(m, ids, NULL, 1, T, &eval);
    double sum = 0;
    for (int c = 0; c < m->cfg.n_classes; c++) sum += m->probs[c];
    if (sum == sum && (sum < 0.99 || sum > 1.01)) {
        fprintf(stderr, "probabilities sum to %g\n", sum);
        abort();
    }
    free(ids);
}

static void try_state(const char *path, const ModelConfig *cfg) {
    char err[1024];
    Model *m = model_create(cfg, 1, err, sizeof err);
    if (!m) return;
    model_init(m, 1);
    if (model_load_state(m, path, err, sizeof err) != 0 && strstr(err, path) == NULL) {
        fprintf(stderr, "a refused state's message does not name the file: %s\n", err);
        abort();
    }
    model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char path[64], err[1024];
    int fd = memory_file(data, size, path, sizeof path);
    if (fd < 0) return 0;
    ModelConfig cfg;
    if (model_config_from_file(path, &cfg, err, sizeof err) == 0 && model_memory_bytes(&cfg, BATCH) <= MAX_MODEL_BYTES) {
        SavedModel run;
        if (saved_model_load(path, BATCH, &run, err, sizeof err) == 0) {
            run_text(&run, "a good [CLS] text \xc3\xa9t\xc3\xa9 [MASK]!");
            saved_model_free(&run);
        } else if (strstr(err, path) == NULL) {
            fprintf(stderr, "a refused checkpoint's message does not name the file: %s\n", err);
            abort();
        }
        try_state(path, &cfg);
    }
    close(fd);
    return 0;
}
