/* canvas.c: the pixel buffer behind every PNG (see canvas.h). */
#include "report/canvas.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/fileio.h"
#include "stb_image_write.h"

int canvas_init(Canvas *c, int width, int height) {
    c->width = width;
    c->height = height;
    c->rgb = malloc((size_t)width * height * 3);
    if (!c->rgb) return -1;
    memset(c->rgb, 0xFF, (size_t)width * height * 3);
    return 0;
}

void canvas_free(Canvas *c) {
    free(c->rgb);
    c->rgb = NULL;
}

void canvas_fill_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
    if (x0 < 0) x0 = 0;
    if (y0 < 0) y0 = 0;
    if (x1 > c->width) x1 = c->width;
    if (y1 > c->height) y1 = c->height;
    if (x0 >= x1 || y0 >= y1) return;
    for (int y = y0; y < y1; y++) {
        unsigned char *p = c->rgb + ((size_t)y * c->width + x0) * 3;
        for (int x = x0; x < x1; x++, p += 3) {
            p[0] = (unsigned char)(color >> 16);
            p[1] = (unsigned char)(color >> 8);
            p[2] = (unsigned char)color;
        }
    }
}

void canvas_outline_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
    canvas_fill_rect(c, x0, y0, x1, y0 + 1, color);
    canvas_fill_rect(c, x0, y1 - 1, x1, y1, color);
    canvas_fill_rect(c, x0, y0, x0 + 1, y1, color);
    canvas_fill_rect(c, x1 - 1, y0, x1, y1, color);
}

void canvas_fill_circle(Canvas *c, int cx, int cy, int radius, uint32_t color) {
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++)
            if (dx * dx + dy * dy <= radius * radius + radius)
                canvas_fill_rect(c, cx + dx, cy + dy, cx + dx + 1, cy + dy + 1, color);
}

/* Bresenham, stamping a 2x2 square per step. */
void canvas_line(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color, double *dash_pos) {
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        if (!dash_pos || fmod(*dash_pos, 13.0) < 8.0) canvas_fill_rect(c, x0, y0, x0 + 2, y0 + 2, color);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * e, moved_x = 0, moved_y = 0;
        if (e2 >= dy) { e += dy; x0 += sx; moved_x = 1; }
        if (e2 <= dx) { e += dx; y0 += sy; moved_y = 1; }
        if (dash_pos) *dash_pos += moved_x && moved_y ? 1.41421356 : 1.0;
    }
}

void canvas_blend(Canvas *c, int x, int y, uint32_t color, int alpha) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height || alpha <= 0) return;
    if (alpha > 255) alpha = 255;
    unsigned char *p = c->rgb + ((size_t)y * c->width + x) * 3;
    for (int k = 0; k < 3; k++) {
        int ink = (int)(color >> (16 - 8 * k)) & 0xFF;
        p[k] = (unsigned char)((p[k] * (255 - alpha) + ink * alpha + 127) / 255);
    }
}

uint32_t canvas_get(const Canvas *c, int x, int y) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return 0;
    const unsigned char *p = c->rgb + ((size_t)y * c->width + x) * 3;
    return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

int canvas_to_pixel(double v) {
    if (!(v > -1e6)) return -1000000;
    if (v > 1e6) return 1000000;
    return (int)lround(v);
}

static void write_to_stream(void *stream, void *data, int size) {
    if (size > 0) fwrite(data, 1, (size_t)size, stream);
}

/* Encodes into memory first, so a failure leaves no partial file. */
int canvas_write_png(const Canvas *c, const char *path, char *err, size_t errlen) {
    char *png = NULL;
    size_t len = 0;
    FILE *stream = open_memstream(&png, &len);
    int ok = stream && stbi_write_png_to_func(write_to_stream, stream, c->width, c->height, 3, c->rgb, c->width * 3);
    if (stream && (ferror(stream) | fclose(stream))) ok = 0;
    int rc = -1;
    if (!ok)
        set_error(err, errlen, "%s: PNG encoding failed (out of memory?)", path);
    else
        rc = atomic_write(path, png, len, err, errlen);
    free(png);
    return rc;
}
