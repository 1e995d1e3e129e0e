/* canvas.h: an RGB pixel buffer for the PNG pictures: clipped rectangles,
 * lines, circles, alpha-blended pixels (antialiased text), and its atomic
 * PNG write (stb_image_write). Colours are 0xRRGGBB. */
#ifndef REPORT_CANVAS_H
#define REPORT_CANVAS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int width, height;
    unsigned char *rgb; /* height rows of width pixels, 3 bytes each */
} Canvas;

/* A white canvas. Returns 0, or -1 when out of memory. */
int canvas_init(Canvas *c, int width, int height);
void canvas_free(Canvas *c);

/* Drawing clips to the canvas; rectangles are half-open [x0, x1) x [y0, y1). */
void canvas_fill_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color);
void canvas_outline_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color);
void canvas_fill_circle(Canvas *c, int cx, int cy, int radius, uint32_t color);
/* A 2-pixel-thick line. With dash_pos it is dashed (8 on, 5 off), the
 * pattern continuing from *dash_pos, the length drawn so far. */
void canvas_line(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color, double *dash_pos);
/* Mixes color into pixel (x, y) with coverage alpha (0: untouched, 255: color). */
void canvas_blend(Canvas *c, int x, int y, uint32_t color, int alpha);
/* The colour of pixel (x, y), 0 outside. */
uint32_t canvas_get(const Canvas *c, int x, int y);

/* A coordinate computed in double, clamped before it becomes an int. */
int canvas_to_pixel(double v);

/* Encodes the canvas as PNG and writes it atomically. 0, or -1 with a message. */
int canvas_write_png(const Canvas *c, const char *path, char *err, size_t errlen);

#endif
