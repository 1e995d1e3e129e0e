/* tool_bpe_bench.c: BPE learning and encoding speed on a text file.
 *
 *   tool_bpe_bench FILE [MERGES]      (MERGES defaults to 8000)
 *
 * Counts the pieces of the whole file, learns until MERGES merges (the
 * vocabulary cap is raised until the merges reach that count, as the base
 * alphabet's size is not known beforehand; every attempt is timed), then
 * encodes the whole file. scripts/bpe_bench.sh makes a 10 MB English file
 * and runs this. Single-threaded; prints times, no thresholds. */
#include "text/bpe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n >= 0 && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1))) {
            *len = fread(buf, 1, (size_t)n, f);
            buf[*len] = '\0';
        }
    }
    fclose(f);
    return buf;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: tool_bpe_bench FILE [MERGES]\n");
        return 2;
    }
    int want = argc == 3 ? atoi(argv[2]) : 8000;
    size_t len = 0;
    char *text = read_file(argv[1], &len);
    if (!text) {
        fprintf(stderr, "tool_bpe_bench: cannot read %s\n", argv[1]);
        return 1;
    }
    if (strlen(text) != len) fprintf(stderr, "tool_bpe_bench: %s holds NUL bytes; the text stops at the first\n", argv[1]);
    BpeCounter *c = bpe_counter_new();
    double t0 = now();
    if (!c || bpe_counter_add_text(c, text)) {
        fprintf(stderr, "tool_bpe_bench: out of memory counting pieces\n");
        return 1;
    }
    printf("text: %.2f MB; counting the pieces: %.3f s\n", (double)len / 1e6, now() - t0);

    Bpe *b = NULL;
    char err[256];
    int vocab_size = want + 5 + 200;
    for (int attempt = 0; attempt < 8; attempt++) {
        bpe_free(b);
        t0 = now();
        if (bpe_learn(c, vocab_size, 1, &b, err, sizeof err)) {
            fprintf(stderr, "tool_bpe_bench: %s\n", err);
            return 1;
        }
        double secs = now() - t0;
        printf("learning: vocab_size %d -> %d merges in %.3f s\n", vocab_size, bpe_n_merges(b), secs);
        if (bpe_n_merges(b) >= want || bpe_vocab_size(b) < vocab_size) break;
        vocab_size += want - bpe_n_merges(b);
    }

    int *ids = malloc((len + 1) * sizeof *ids);
    if (!ids) {
        fprintf(stderr, "tool_bpe_bench: out of memory\n");
        return 1;
    }
    t0 = now();
    int n = bpe_encode_text(b, text, ids, (int)len + 1);
    double secs = now() - t0;
    if (n < 0) {
        fprintf(stderr, "tool_bpe_bench: encoding failed\n");
        return 1;
    }
    int unk = 0;
    for (int i = 0; i < n; i++) unk += ids[i] == BPE_UNK;
    printf("encoding: %d ids (%d [UNK]) in %.3f s: %.1f MB/s\n", n, unk, secs, (double)len / 1e6 / secs);
    free(ids);
    bpe_free(b);
    bpe_counter_free(c);
    free(text);
    return 0;
}
