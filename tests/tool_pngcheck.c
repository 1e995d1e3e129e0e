/* tool_pngcheck.c: prints a PNG's width and height, then for each colour
 * given as RRGGBB the number of pixels of exactly that colour, and the number
 * of non-white pixels. Used by the CLI tests: tool_pngcheck FILE [RRGGBB...] */
#include <stdio.h>
#include <stdlib.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include "stb_image.h"
#pragma GCC diagnostic pop

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tool_pngcheck FILE [RRGGBB ...]\n");
        return 2;
    }
    int w, h, channels;
    unsigned char *pixels = stbi_load(argv[1], &w, &h, &channels, 3);
    if (!pixels) {
        fprintf(stderr, "%s: not a readable PNG: %s\n", argv[1], stbi_failure_reason());
        return 1;
    }
    printf("%d %d", w, h);
    for (int k = 2; k < argc; k++) {
        unsigned long rgb = strtoul(argv[k], NULL, 16);
        long count = 0;
        for (long i = 0; i < (long)w * h; i++)
            count += pixels[3 * i] == (rgb >> 16 & 255) && pixels[3 * i + 1] == (rgb >> 8 & 255) &&
                     pixels[3 * i + 2] == (rgb & 255);
        printf(" %ld", count);
    }
    long non_white = 0;
    for (long i = 0; i < (long)w * h; i++)
        non_white += pixels[3 * i] != 255 || pixels[3 * i + 1] != 255 || pixels[3 * i + 2] != 255;
    printf(" %ld\n", non_white);
    stbi_image_free(pixels);
    return 0;
}
