/* test_checkpoint_hostile.c: every bit flip and truncation of a checkpoint or a training state is refused, naming the file. */
#include "tests/check.h"
#include "run/saved_model.h"
#include "base/fileio.h"
#include "model.h"

#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char VOCAB[] = "[\"[PAD]\",\"[UNK]\",\"[CLS]\",\"[SEP]\",\"[MASK]\",\"good\",\"bad\",\"\\u00e9t\\u00e9\"]";
static const char LABELS[] = "[\"neg\",\"pos\"]";

static ModelConfig tiny_config(NormPlacement norm, PosEncoding pe) {
    ModelConfig c = model_config_default();
    c.vocab_size = 8;
    c.n_classes = 2;
    c.max_len = 8;
    c.d_model = 8;
    c.n_heads = 2;
    c.d_ff = 16;
    c.n_layers = 1;
    c.norm = norm;
    c.pe = pe;
    c.emb_scale = 2.828427f;
    return c;
}

/* A checkpoint and a state as the trainer writes them, into dir. */
static Model *write_files(const ModelConfig *cfg, const char *model_path, const char *state_path) {
    char err[512];
    Model *m = model_create(cfg, 4, err, sizeof err);
    CHECK(m != NULL, "model_create: %s", err);
    if (!m) return NULL;
    model_init(m, 7);
    for (size_t i = 0; i < m->n_params; i++) m->adam_m[i] = 1e-3f * (float)(i % 17), m->adam_v[i] = 1e-6f;
    m->adam_step = 12;
    const char *keys[] = {"tokenizer", "vocab", "labels", "epoch"};
    const char *vals[] = {"word", VOCAB, LABELS, "3"};
    CHECK(model_save(m, NULL, model_path, keys, vals, 4, err, sizeof err) == 0, "model_save: %s", err);
    const char *skeys[] = {"epochs_done", "history"};
    const char *svals[] = {"3", "1 0.5 0.5 0 0 0 0.001 0.1 100\n"};
    CHECK(model_save_state(m, NULL, state_path, skeys, svals, 2, err, sizeof err) == 0, "model_save_state: %s", err);
    return m;
}

static int write_bytes(const char *path, const unsigned char *buf, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t n = len ? fwrite(buf, 1, len, f) : 0;
    return fclose(f) == 0 && n == len ? 0 : -1;
}

/* The checkpoint at path loads for predict: 1, or 0 with err naming the file. */
static int checkpoint_loads(const char *path, char *err, size_t errlen) {
    SavedModel run;
    err[0] = '\0';
    if (saved_model_load(path, 4, &run, err, errlen) != 0) return 0;
    saved_model_free(&run);
    return 1;
}

static int state_loads(Model *m, const char *path, char *err, size_t errlen) {
    err[0] = '\0';
    return model_load_state(m, path, err, errlen) == 0;
}

typedef struct {
    const char *what;            /* "checkpoint" or "state" */
    const char *path;            /* where mutants are written */
    Model *model;                /* for states: the model to load into */
    long tried, refused, unnamed;
} Mutations;

/* Checks the mutant now at mu->path is refused with a message naming the file. */
static void expect_refused(Mutations *mu, const char *how, size_t at) {
    char err[1024];
    int loads = mu->model ? state_loads(mu->model, mu->path, err, sizeof err) : checkpoint_loads(mu->path, err, sizeof err);
    mu->tried++;
    if (loads) {
        CHECK(0, "%s with %s at byte %zu was accepted", mu->what, how, at);
        return;
    }
    mu->refused++;
    if (!strstr(err, mu->path)) {
        mu->unnamed++;
        if (mu->unnamed <= 3) CHECK(0, "%s %s at byte %zu: message does not name the file: %s", mu->what, how, at, err);
    }
}

static uint64_t header_length(const unsigned char *buf) {
    uint64_t n = 0;
    for (int i = 7; i >= 0; i--) n = n << 8 | buf[i];
    return n;
}

/* Flips every bit of every header_stride-th byte of the size field and the
 * header, and of every stride-th data byte; then truncates at the same places. The mutant file is changed in place, a byte or a
 * truncation at a time, which is far cheaper than rewriting it each time. */
static void mutate_all(Mutations *mu, const unsigned char *orig, size_t size, size_t header_stride, size_t stride) {
    int fd = open(mu->path, O_WRONLY);
    CHECK(fd >= 0, "cannot open %s", mu->path);
    if (fd < 0) return;
    size_t data_start = 8 + (size_t)header_length(orig);
    for (size_t at = 0; at < size; at += at < data_start ? header_stride : stride) {
        for (int bit = 0; bit < 8; bit++) {
            unsigned char flipped = orig[at] ^ (unsigned char)(1u << bit);
            if (pwrite(fd, &flipped, 1, (off_t)at) != 1) CHECK(0, "pwrite failed");
            expect_refused(mu, "a bit flip", at);
        }
        if (pwrite(fd, &orig[at], 1, (off_t)at) != 1) CHECK(0, "pwrite failed");
    }
    for (size_t len = size; len-- > 0;) {
        if (len % (len < data_start ? header_stride : stride)) continue;
        if (ftruncate(fd, (off_t)len) != 0) CHECK(0, "ftruncate failed");
        expect_refused(mu, "a truncation", len);
    }
    close(fd);
}

static void check_file(const char *what, const char *path, const char *scratch, Model *state_model,
                       size_t header_stride, size_t stride) {
    char err[512];
    size_t size;
    unsigned char *orig = read_file(path, &size, err, sizeof err);
    CHECK(orig != NULL, "read_file: %s", err);
    if (!orig) return;
    Mutations mu = {what, scratch, state_model, 0, 0, 0};
    /* the unchanged file loads, so every refusal below is the mutation's doing */
    write_bytes(scratch, orig, size);
    int loads = state_model ? state_loads(state_model, scratch, err, sizeof err) : checkpoint_loads(scratch, err, sizeof err);
    CHECK(loads, "the unchanged %s does not load: %s", what, err);
    mutate_all(&mu, orig, size, header_stride, stride);
    printf("REPORT hostile %s (%zu bytes, header %llu): %ld mutants (bit flips and truncations at every %zu "
           "header and every %zu data bytes), %ld refused, %ld without the file name\n", what, size,
           (unsigned long long)header_length(orig), mu.tried, header_stride, stride, mu.refused, mu.unnamed);
    free(orig);
}

/* A NaN or an infinity written with a valid checksum (as the trainer would
 * write it, were one to reach a save) is refused by name: in the weights for
 * predict, and (a NaN) in an Adam moment for --resume. */
static void check_non_finite(const ModelConfig *cfg, const char *model_path, const char *state_path) {
    const float bad[2] = {NAN, INFINITY};
    for (int b = 0; b < 2; b++) {
        Model *m = write_files(cfg, model_path, state_path);
        if (!m) return;
        char err[512];
        m->params[m->n_params / 2] = bad[b];
        const char *keys[] = {"tokenizer", "vocab", "labels", "epoch"};
        const char *vals[] = {"word", VOCAB, LABELS, "3"};
        CHECK(model_save(m, NULL, model_path, keys, vals, 4, err, sizeof err) == 0, "model_save: %s", err);
        CHECK(!checkpoint_loads(model_path, err, sizeof err), "weights holding %s were accepted", b ? "inf" : "NaN");
        CHECK(strstr(err, "model.safetensors") && strstr(err, b ? "an infinity" : "a NaN"),
              "the message does not name the file and the value: %s", err);
        model_free(m);

        /* an Adam moment: NaN is damage, +inf is what a huge gradient with
         * --clip 0 makes, and its update handles (the state must load) */
        m = write_files(cfg, model_path, state_path);
        if (!m) return;
        m->adam_v[3] = bad[b];
        const char *skeys[] = {"epochs_done", "history"};
        const char *svals[] = {"3", "1 0.5 0.5 0 0 0 0.001 0.1 100\n"};
        CHECK(model_save_state(m, NULL, state_path, skeys, svals, 2, err, sizeof err) == 0, "save: %s", err);
        if (b == 0) {
            CHECK(!state_loads(m, state_path, err, sizeof err), "a state holding NaN in adam_v was accepted");
            CHECK(strstr(err, "adam_v.") != NULL, "the message does not name the tensor: %s", err);
        } else {
            CHECK(state_loads(m, state_path, err, sizeof err), "a state with adam_v +inf was refused: %s", err);
        }
        model_free(m);
    }
}

/* Labels training refuses (a tab, a line break, DEL, a surrounding space),
 * in a checkpoint with a valid checksum, are refused by training's own rule
 * (predict printed one line more than its inputs); others load. */
static void check_labels(const ModelConfig *cfg, const char *model_path, const char *state_path) {
    static const char *const refused[] = {"[\"neg\",\"p\\tos\"]", "[\"neg\",\"p\\nos\"]", "[\"neg\",\"p\\u007fos\"]",
                                          "[\"neg\",\"pos \"]"};
    static const char *const why[] = {"control character (byte 0x09", "control character (byte 0x0a",
                                      "control character (byte 0x7f", "starts or ends with a space"};
    char err[512];
    for (int i = 0; i < 5; i++) {
        Model *m = write_files(cfg, model_path, state_path);
        if (!m) return;
        const char *keys[] = {"tokenizer", "vocab", "labels", "epoch"};
        const char *vals[] = {"word", VOCAB, i < 4 ? refused[i] : "[\"neg\",\"pos itif \\u00e9t\\u00e9\"]", "3"};
        CHECK(model_save(m, NULL, model_path, keys, vals, 4, err, sizeof err) == 0, "model_save: %s", err);
        if (i < 4) {
            CHECK(!checkpoint_loads(model_path, err, sizeof err), "labels %s were accepted", refused[i]);
            CHECK(strstr(err, "model.safetensors: metadata 'labels': label 2: ") && strstr(err, why[i]),
                  "labels %s: the message does not name the file, the label and the rule: %s", refused[i], err);
        } else {
            CHECK(checkpoint_loads(model_path, err, sizeof err), "labels with a space inside and UTF-8 were refused: %s", err);
        }
        model_free(m);
    }
}

int main(void) {
    char dir[] = "/tmp/test_checkpoint_hostile_XXXXXX";
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    /* under the sanitizers (CHECK_QUICK) fewer bytes are mutated */
    int quick = getenv("CHECK_QUICK") != NULL;
    size_t header_stride = quick ? 3 : 1, stride = quick ? 61 : 7;
    char model_path[256], state_path[256], scratch[256];
    snprintf(model_path, sizeof model_path, "%s/model.safetensors", dir);
    snprintf(state_path, sizeof state_path, "%s/state.safetensors", dir);
    snprintf(scratch, sizeof scratch, "%s/mutant.safetensors", dir);

    ModelConfig configs[2] = {tiny_config(NORM_POST, PE_SINUSOIDAL), tiny_config(NORM_PRE, PE_LEARNED)};
    for (int c = 0; c < 2; c++) {
        Model *m = write_files(&configs[c], model_path, state_path);
        if (!m) continue;
        check_file(c ? "checkpoint (pre-norm, learned PE)" : "checkpoint (post-norm, sinusoidal)", model_path, scratch,
                   NULL, header_stride, stride);
        if (c == 0) check_file("training state", state_path, scratch, m, header_stride * 2, stride * 3);
        model_free(m);
    }
    check_non_finite(&configs[0], model_path, state_path);
    check_labels(&configs[0], model_path, state_path);
    unlink(model_path);
    unlink(state_path);
    unlink(scratch);
    rmdir(dir);
    return check_summary("test_checkpoint_hostile");
}
