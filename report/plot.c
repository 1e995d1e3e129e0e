/* plot.c: line charts and heatmaps rasterised into an RGB buffer and written
 * as PNG (text drawn from stb_easy_font's quads), plus terminal text charts. */
#include "report/plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "stb_image_write.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-braces"
#include "stb_easy_font.h"
#pragma GCC diagnostic pop

#define COLOR_TEXT 0x222222u
#define COLOR_AXIS 0x555555u
#define COLOR_GRID 0xE6E6E6u
#define COLOR_WHITE 0xFFFFFFu
#define COLOR_NAN 0xBBBBBBu
#define MAX_IMAGE_SIDE 8000   /* refuse absurd chart sizes */
#define HEATMAP_MAX_GRID 1400 /* heatmap grid pixels per side (image stays < 2000) */
#define HEATMAP_MAX_CELL 72    /* heatmap cell side in pixels, at most */
#define LABEL_MAX_CHARS 16    /* heatmap labels are cut to this */
#define GLYPH_HEIGHT 10       /* stb_easy_font: caps 0..7, descenders to 9 */

/* ---- canvas: an RGB pixel buffer with clipped drawing ---- */

typedef struct {
    int width, height;
    unsigned char *rgb;
} Canvas;

static int canvas_init(Canvas *c, int width, int height) {
    c->width = width;
    c->height = height;
    c->rgb = malloc((size_t)width * height * 3);
    if (!c->rgb) return -1;
    memset(c->rgb, 0xFF, (size_t)width * height * 3);
    return 0;
}

static void fill_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
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

static void outline_rect(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color) {
    fill_rect(c, x0, y0, x1, y0 + 1, color);
    fill_rect(c, x0, y1 - 1, x1, y1, color);
    fill_rect(c, x0, y0, x0 + 1, y1, color);
    fill_rect(c, x1 - 1, y0, x1, y1, color);
}

static void fill_circle(Canvas *c, int cx, int cy, int radius, uint32_t color) {
    for (int dy = -radius; dy <= radius; dy++)
        for (int dx = -radius; dx <= radius; dx++)
            if (dx * dx + dy * dy <= radius * radius + radius)
                fill_rect(c, cx + dx, cy + dy, cx + dx + 1, cy + dy + 1, color);
}

/* A 2-pixel-thick line (Bresenham, stamping a 2x2 square). When dash_pos is
 * not NULL the line is dashed, 8 on and 5 off, continuing the pattern from
 * *dash_pos (the distance drawn so far along the polyline). */
static void draw_line(Canvas *c, int x0, int y0, int x1, int y1, uint32_t color, double *dash_pos) {
    int dx = abs(x1 - x0), dy = -abs(y1 - y0);
    int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int e = dx + dy;
    for (;;) {
        if (!dash_pos || fmod(*dash_pos, 13.0) < 8.0) fill_rect(c, x0, y0, x0 + 2, y0 + 2, color);
        if (x0 == x1 && y0 == y1) break;
        int e2 = 2 * e, moved_x = 0, moved_y = 0;
        if (e2 >= dy) { e += dy; x0 += sx; moved_x = 1; }
        if (e2 <= dx) { e += dx; y0 += sy; moved_y = 1; }
        if (dash_pos) *dash_pos += moved_x && moved_y ? 1.41421356 : 1.0;
    }
}

/* Clamps a pixel coordinate computed in double before it becomes an int. */
static int to_pixel(double v) {
    if (!(v > -1e6)) return -1000000;
    if (v > 1e6) return 1000000;
    return (int)lround(v);
}

/* ---- text: stb_easy_font glyph quads, scaled by an integer factor ---- */

/* stb_easy_font knows printable ASCII only: every other byte, and every
 * UTF-8 sequence as a whole, becomes one '?'. */
static void ascii_text(const char *s, char *buf, size_t bufsize) {
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && n + 1 < bufsize; p++) {
        if ((*p & 0xC0) == 0x80) continue;
        buf[n++] = (*p >= 32 && *p < 127) ? (char)*p : '?';
    }
    buf[n] = '\0';
}

static int char_advance(char ch) {
    char one[2] = {ch, '\0'};
    return stb_easy_font_width(one);
}

static int text_width(const char *s, int scale) {
    char buf[512];
    ascii_text(s, buf, sizeof buf);
    int w = 0;
    for (const char *p = buf; *p; p++) w += char_advance(*p);
    return w * scale;
}

/* Draws s with its top-left at (x, y); when vertical, the text reads bottom
 * to top with (x, y) its bottom-left corner (a 90 degree turn). */
static void draw_text_dir(Canvas *c, int x, int y, const char *s, int scale, uint32_t color, int vertical) {
    char buf[512], quads[1024];
    ascii_text(s, buf, sizeof buf);
    int pen = 0;
    for (const char *p = buf; *p; p++) {
        char one[2] = {*p, '\0'};
        int n = stb_easy_font_print(0, 0, one, NULL, quads, sizeof quads);
        for (int q = 0; q < n; q++) {
            float v0[2], v2[2]; /* a quad's first and third vertices: opposite corners */
            memcpy(v0, quads + q * 64, sizeof v0);
            memcpy(v2, quads + q * 64 + 32, sizeof v2);
            int qx0 = pen + (int)v0[0] * scale, qx1 = pen + (int)v2[0] * scale;
            int qy0 = (int)v0[1] * scale, qy1 = (int)v2[1] * scale;
            if (vertical) /* text point (tx, ty) goes to (x + ty, y - tx) */
                fill_rect(c, x + qy0, y - qx1, x + qy1, y - qx0, color);
            else
                fill_rect(c, x + qx0, y + qy0, x + qx1, y + qy1, color);
        }
        pen += char_advance(*p) * scale;
    }
}

static void draw_text(Canvas *c, int x, int y, const char *s, int scale, uint32_t color) {
    draw_text_dir(c, x, y, s, scale, color, 0);
}

/* A title: centred on center_x, made bold by drawing it twice a pixel apart. */
static void draw_title(Canvas *c, int center_x, int y, const char *s, int scale) {
    int x = center_x - text_width(s, scale) / 2;
    draw_text(c, x, y, s, scale, COLOR_TEXT);
    draw_text(c, x + 1, y, s, scale, COLOR_TEXT);
}

/* ---- PNG output ---- */

static void write_to_stream(void *stream, void *data, int size) {
    if (size > 0) fwrite(data, 1, (size_t)size, stream);
}

/* Encodes the canvas into memory, then writes it atomically. */
static int canvas_write_png(const Canvas *c, const char *path, char *err, size_t errlen) {
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

/* ---- tick values ---- */

/* A step of 1, 2, 2.5 or 5 times a power of ten giving at most max_ticks
 * intervals over range. */
static double nice_step(double range, int max_ticks) {
    if (max_ticks < 1) max_ticks = 1;
    if (!(range > 0) || !isfinite(range)) return 1.0;
    double raw = range / max_ticks;
    double magnitude = pow(10.0, floor(log10(raw)));
    double fraction = raw / magnitude;
    double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 2.5 ? 2.5 : fraction <= 5.0 ? 5.0 : 10.0;
    return nice * magnitude;
}

/* Decimals needed to print multiples of step exactly (0.25 -> 2, 5 -> 0). */
static int step_decimals(double step) {
    for (int d = 0; d < 8; d++) {
        double scaled = step * pow(10.0, d);
        if (fabs(scaled - round(scaled)) < 1e-6 * scaled) return d;
    }
    return 8;
}

static void format_tick(char *buf, size_t size, double value, double step) {
    if (fabs(value) < step * 1e-9) value = 0.0; /* no "-0.00" */
    if (fabs(value) >= 1e6 || step < 1e-6)
        snprintf(buf, size, "%.3g", value);
    else
        snprintf(buf, size, "%.*f", step_decimals(step), value);
}

typedef struct {
    double lo, hi, step;
} Axis;

/* The y axis over the finite values of every series, widened to whole steps. */
static Axis value_axis(const PlotPanel *panel, int max_ticks) {
    double lo = INFINITY, hi = -INFINITY;
    for (int s = 0; s < panel->n_series; s++) {
        const PlotSeries *series = &panel->series[s];
        for (int i = 0; series->y && i < series->n; i++) {
            double v = series->y[i];
            if (!isfinite(v)) continue;
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
    }
    if (lo > hi) lo = 0, hi = 1;
    if (lo < -1e300) lo = -1e300;
    if (hi > 1e300) hi = 1e300;
    if (hi - lo < 1e-12 * fmax(1.0, fabs(hi))) { /* flat data: a window around it */
        double pad = fabs(hi) > 0 ? fabs(hi) * 0.1 : 0.5;
        lo -= pad, hi += pad;
    }
    Axis a;
    a.step = nice_step(hi - lo, max_ticks);
    a.lo = floor(lo / a.step) * a.step;
    a.hi = ceil(hi / a.step) * a.step;
    if (a.hi <= a.lo) a.hi = a.lo + a.step;
    return a;
}

/* Intervals between ticks (computed by index: adding step to a huge value
 * may not change it). */
static int tick_count(const Axis *a) {
    double n = (a->hi - a->lo) / a->step;
    return n > 0 && n < 1000 ? (int)lround(n) : 0;
}

/* Integer tick step (1, 2, 5, 10, 20, 50...) for epochs 1..n. */
static int epoch_step(int n, int max_ticks) {
    if (max_ticks < 1) max_ticks = 1;
    for (long base = 1; base < 1000000000L; base *= 10) {
        static const int mult[3] = {1, 2, 5};
        for (int m = 0; m < 3; m++)
            if ((n - 1) / (base * mult[m]) < max_ticks) return (int)(base * mult[m]);
    }
    return 1000000000;
}

/* Whether epoch e gets a tick: 1, then the multiples of step (skipping a
 * multiple too close to 1). */
static int is_epoch_tick(int e, int step) {
    if (e == 1) return 1;
    return e % step == 0 && (step == 1 || e > 1 + step / 2);
}

static int longest_series(const PlotPanel *panel) {
    int n = 0;
    for (int s = 0; s < panel->n_series; s++)
        if (panel->series[s].y && panel->series[s].n > n) n = panel->series[s].n;
    return n;
}

/* ---- one chart panel ---- */

typedef struct {
    int left, top, right, bottom; /* plot area, half-open */
    int inset;                    /* data kept this far from the frame */
    double x_lo, x_hi;
    Axis y;
    int scale;                    /* text scale */
} PanelFrame;

static int frame_x(const PanelFrame *f, double x) {
    double span = f->right - f->left - 1 - 2 * f->inset;
    return to_pixel(f->left + f->inset + (x - f->x_lo) / (f->x_hi - f->x_lo) * span);
}

static int frame_y(const PanelFrame *f, double y) {
    double span = f->bottom - f->top - 1 - 2 * f->inset;
    return to_pixel(f->bottom - 1 - f->inset - (y - f->y.lo) / (f->y.hi - f->y.lo) * span);
}

static void draw_y_ticks(Canvas *c, const PanelFrame *f) {
    char label[64];
    int half = GLYPH_HEIGHT * f->scale / 2;
    for (int k = 0; k <= tick_count(&f->y); k++) {
        double v = f->y.lo + k * f->y.step;
        int py = frame_y(f, v);
        fill_rect(c, f->left + 1, py, f->right - 1, py + 1, COLOR_GRID);
        fill_rect(c, f->left - 5, py, f->left, py + 1, COLOR_AXIS);
        format_tick(label, sizeof label, v, f->y.step);
        draw_text(c, f->left - 8 - text_width(label, f->scale), py - half + f->scale, label, f->scale, COLOR_TEXT);
    }
}

static void draw_x_ticks(Canvas *c, const PanelFrame *f, int n) {
    char label[32];
    snprintf(label, sizeof label, "%d", n > 1 ? n : 1);
    int label_w = text_width(label, f->scale) + 12 * f->scale;
    int step = epoch_step(n, (f->right - f->left) / (label_w > 0 ? label_w : 1));
    for (int e = 1; e <= (n > 1 ? n : 1); e++) {
        if (!is_epoch_tick(e, step)) continue;
        int px = frame_x(f, e);
        fill_rect(c, px, f->top + 1, px + 1, f->bottom - 1, COLOR_GRID);
        fill_rect(c, px, f->bottom, px + 1, f->bottom + 5, COLOR_AXIS);
        snprintf(label, sizeof label, "%d", e);
        draw_text(c, px - text_width(label, f->scale) / 2, f->bottom + 8, label, f->scale, COLOR_TEXT);
    }
}

/* Marker spacing below this many pixels draws markers on isolated points only. */
#define MIN_MARKER_SPACING 8

static void draw_series(Canvas *c, const PanelFrame *f, const PlotSeries *s) {
    double dash = 0;
    int spacing = s->n > 1 ? frame_x(f, 2) - frame_x(f, 1) : MIN_MARKER_SPACING;
    for (int i = 0; i < s->n; i++) {
        if (!isfinite(s->y[i])) continue;
        int px = frame_x(f, i + 1), py = frame_y(f, s->y[i]);
        int prev_ok = i > 0 && isfinite(s->y[i - 1]);
        int next_ok = i + 1 < s->n && isfinite(s->y[i + 1]);
        if (prev_ok)
            draw_line(c, frame_x(f, i), frame_y(f, s->y[i - 1]), px, py, s->color, s->dashed ? &dash : NULL);
        if (spacing >= MIN_MARKER_SPACING || (!prev_ok && !next_ok)) fill_circle(c, px + 1, py + 1, 3, s->color);
    }
}

/* How many data points of the panel fall inside a candidate legend box. */
static int points_under(const PanelFrame *f, const PlotPanel *panel, int x0, int y0, int x1, int y1) {
    int count = 0;
    for (int s = 0; s < panel->n_series; s++) {
        const PlotSeries *series = &panel->series[s];
        for (int i = 0; series->y && i < series->n; i++) {
            if (!isfinite(series->y[i])) continue;
            int px = frame_x(f, i + 1), py = frame_y(f, series->y[i]);
            if (px >= x0 - 4 && px < x1 + 4 && py >= y0 - 4 && py < y1 + 4) count++;
        }
    }
    return count;
}

static const char *series_name(const PlotSeries *s, int index, char *buf, size_t size) {
    if (s->name && s->name[0]) return s->name;
    snprintf(buf, size, "series %d", index + 1);
    return buf;
}

/* A legend box in the plot-area corner covering the fewest data points. */
static void draw_legend(Canvas *c, const PanelFrame *f, const PlotPanel *panel) {
    char buf[32];
    if (panel->n_series < 1) return;
    int row_h = GLYPH_HEIGHT * f->scale + 6, swatch = 28, name_w = 0;
    for (int s = 0; s < panel->n_series; s++) {
        int w = text_width(series_name(&panel->series[s], s, buf, sizeof buf), f->scale);
        if (w > name_w) name_w = w;
    }
    int box_w = 8 + swatch + 8 + name_w + 8, box_h = 6 + row_h * panel->n_series + 2;
    int best_x = 0, best_y = 0, best_count = -1;
    for (int corner = 0; corner < 4; corner++) { /* top-right, top-left, bottom-right, bottom-left */
        int x0 = corner % 2 == 0 ? f->right - 10 - box_w : f->left + 10;
        int y0 = corner < 2 ? f->top + 10 : f->bottom - 10 - box_h;
        int count = points_under(f, panel, x0, y0, x0 + box_w, y0 + box_h);
        if (best_count < 0 || count < best_count) best_x = x0, best_y = y0, best_count = count;
    }
    fill_rect(c, best_x, best_y, best_x + box_w, best_y + box_h, COLOR_WHITE);
    outline_rect(c, best_x, best_y, best_x + box_w, best_y + box_h, 0xBBBBBBu);
    for (int s = 0; s < panel->n_series; s++) {
        const PlotSeries *series = &panel->series[s];
        int y = best_y + 6 + s * row_h, mid = y + GLYPH_HEIGHT * f->scale / 2 - f->scale;
        double dash = 0;
        draw_line(c, best_x + 8, mid, best_x + 8 + swatch, mid, series->color, series->dashed ? &dash : NULL);
        fill_circle(c, best_x + 8 + swatch / 2 + 1, mid + 1, 3, series->color);
        draw_text(c, best_x + 16 + swatch, y, series_name(series, s, buf, sizeof buf), f->scale, COLOR_TEXT);
    }
}

/* Widest y tick label, to size the left margin. */
static int y_labels_width(const Axis *y, int scale) {
    char label[64];
    int widest = 0;
    for (int k = 0; k <= tick_count(y); k++) {
        double v = y->lo + k * y->step;
        format_tick(label, sizeof label, v, y->step);
        int w = text_width(label, scale);
        if (w > widest) widest = w;
    }
    return widest;
}

static void draw_panel(Canvas *c, const PlotPanel *panel, int x0, int panel_w, int scale) {
    PanelFrame f;
    int line = GLYPH_HEIGHT * scale, n = longest_series(panel);
    f.scale = scale;
    f.inset = 8;
    f.top = 12 + line + 12;
    f.bottom = c->height - (5 + 3 + line + 10 + line + 10);
    f.y = value_axis(panel, (f.bottom - f.top) * 2 / (line * 5));
    f.left = x0 + 10 + line + 10 + y_labels_width(&f.y, scale) + 8;
    f.right = x0 + panel_w - 16;
    f.x_lo = n > 1 ? 1.0 : 0.0;
    f.x_hi = n > 1 ? (double)n : 2.0;
    if (f.right - f.left < 40 || f.bottom - f.top < 40) return; /* no room: leave it blank */

    const char *title = panel->title ? panel->title : "";
    draw_title(c, x0 + panel_w / 2, 12, title, scale);
    draw_y_ticks(c, &f);
    draw_x_ticks(c, &f, n);
    outline_rect(c, f.left, f.top, f.right, f.bottom, COLOR_AXIS);
    if (panel->x_label) {
        int w = text_width(panel->x_label, scale);
        draw_text(c, (f.left + f.right - w) / 2, f.bottom + 5 + 3 + line + 10, panel->x_label, scale, COLOR_TEXT);
    }
    if (panel->y_label) {
        int w = text_width(panel->y_label, scale);
        draw_text_dir(c, x0 + 10, (f.top + f.bottom + w) / 2, panel->y_label, scale, COLOR_TEXT, 1);
    }
    for (int s = 0; s < panel->n_series; s++)
        if (panel->series[s].y && panel->series[s].n > 0) draw_series(c, &f, &panel->series[s]);
    draw_legend(c, &f, panel);
}

int plot_panels_png(const char *path, const PlotPanel *panels, int n_panels, int width, int height, char *err,
                    size_t errlen) {
    if (!path || !panels || n_panels < 1 || n_panels > 50) {
        set_error(err, errlen, "plot: no panels to draw");
        return -1;
    }
    if (width < 150 * n_panels || height < 150 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) {
        set_error(err, errlen, "%s: chart size %dx%d out of range (150 to %d per panel side)", path, width, height,
                  MAX_IMAGE_SIDE);
        return -1;
    }
    for (int p = 0; p < n_panels; p++)
        if (panels[p].n_series < 0 || (panels[p].n_series > 0 && !panels[p].series)) {
            set_error(err, errlen, "%s: panel %d has no series array", path, p + 1);
            return -1;
        }
    Canvas canvas;
    if (canvas_init(&canvas, width, height) != 0) {
        set_error(err, errlen, "%s: out of memory for a %dx%d image", path, width, height);
        return -1;
    }
    int panel_w = width / n_panels;
    int scale = panel_w >= 320 && height >= 280 ? 2 : 1;
    for (int p = 0; p < n_panels; p++) draw_panel(&canvas, &panels[p], p * panel_w, panel_w, scale);
    int rc = canvas_write_png(&canvas, path, err, errlen);
    free(canvas.rgb);
    return rc;
}

/* ---- heatmap ---- */

/* Sequential white -> dark blue (ColorBrewer "Blues" stops), t in [0, 1]. */
static uint32_t colormap(double t) {
    static const uint32_t stops[9] = {0xF7FBFF, 0xDEEBF7, 0xC6DBEF, 0x9ECAE1, 0x6BAED6,
                                      0x4292C6, 0x2171B5, 0x08519C, 0x08306B};
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double pos = t * 8;
    int i = (int)pos < 8 ? (int)pos : 7;
    double frac = pos - i;
    uint32_t out = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        double a = (stops[i] >> shift) & 0xFF, b = (stops[i + 1] >> shift) & 0xFF;
        out |= (uint32_t)lround(a + (b - a) * frac) << shift;
    }
    return out;
}

typedef struct {
    const float *values;
    int rows, cols;
    float vmin, vmax;
    int integers;          /* every finite value is a whole number */
    int grid_w, grid_h;    /* grid size in pixels */
    int row_every, col_every; /* label thinning */
    int row_scale, col_scale; /* label text scales */
    int col_vertical;      /* column labels turned 90 degrees */
    int label_w;           /* widest row label */
    int col_label_h;       /* height of the column-label band */
} HeatLayout;

static void value_range(HeatLayout *h) {
    h->vmin = INFINITY, h->vmax = -INFINITY, h->integers = 1;
    for (size_t i = 0; i < (size_t)h->rows * h->cols; i++) {
        float v = h->values[i];
        if (!isfinite(v)) continue;
        if (v < h->vmin) h->vmin = v;
        if (v > h->vmax) h->vmax = v;
        if (v != floorf(v) || fabsf(v) > 1e9f) h->integers = 0;
    }
    if (h->vmin > h->vmax) h->vmin = 0, h->vmax = 1;
}

static double heat_t(const HeatLayout *h, float v) {
    return h->vmax > h->vmin ? ((double)v - h->vmin) / ((double)h->vmax - h->vmin) : 0.5;
}

static void cell_text(const HeatLayout *h, float v, char *buf, size_t size) {
    if (!isfinite(v)) snprintf(buf, size, "nan");
    else if (h->integers) snprintf(buf, size, "%.0f", v);
    else snprintf(buf, size, "%.2f", v);
}

/* Label i of an axis: the given (cut) label, or the index. */
static void axis_label(const char *const *labels, int i, char *buf, size_t size) {
    char cut[4 * LABEL_MAX_CHARS + 8];
    if (labels && labels[i]) {
        snprintf(cut, sizeof cut, "%s", labels[i]);
        ascii_text(cut, buf, size);
        if (strlen(buf) > LABEL_MAX_CHARS) strcpy(buf + LABEL_MAX_CHARS - 2, "..");
    } else {
        snprintf(buf, size, "%d", i);
    }
}

/* Every how many cells a label fits: 1, 2, 5, 10, 20, 50... */
static int label_every(double cell_px, int needed_px) {
    for (int base = 1; base < 100000000; base *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) /* 1, 2, 5 */
            if (cell_px * base * m >= needed_px) return base * m;
    return 100000000;
}

/* Labels are drawn 2x where they fit or must be thinned out anyway. */
static int label_scale(double cell_px) {
    return cell_px >= 24 || label_every(cell_px, GLYPH_HEIGHT + 2) > 1 ? 2 : 1;
}

/* A side of a long, thin grid gets cells big enough for ~300 px. */
static int stretched_cell(int cells, int cell) {
    if (cells * cell >= 300) return cell;
    int wanted = (300 + cells - 1) / cells;
    return wanted < HEATMAP_MAX_CELL ? wanted : HEATMAP_MAX_CELL;
}

/* Square cells sized so the longer side is about 1024 px (at most 72 px a
 * cell); a long thin grid (e.g. 100 positions x 512 dims) gets its short
 * side stretched; beyond 1400 cells a side, cells are sampled per pixel. */
static void heat_layout(HeatLayout *h, const char *const *row_labels, const char *const *col_labels) {
    char buf[64];
    int cell = 1024 / (h->rows > h->cols ? h->rows : h->cols);
    if (cell > HEATMAP_MAX_CELL) cell = HEATMAP_MAX_CELL;
    if (cell < 1) cell = 1;
    int cw = cell, ch = cell;
    if (h->rows > 12 || h->cols > 12) {
        cw = stretched_cell(h->cols, cell);
        ch = stretched_cell(h->rows, cell);
    }
    h->grid_w = h->cols * cw <= HEATMAP_MAX_GRID ? h->cols * cw : HEATMAP_MAX_GRID;
    h->grid_h = h->rows * ch <= HEATMAP_MAX_GRID ? h->rows * ch : HEATMAP_MAX_GRID;
    double cell_w = (double)h->grid_w / h->cols, cell_h = (double)h->grid_h / h->rows;

    h->row_scale = label_scale(cell_h);
    h->row_every = label_every(cell_h, GLYPH_HEIGHT * h->row_scale + 2);
    h->label_w = 0;
    for (int r = 0; r < h->rows; r += h->row_every) {
        axis_label(row_labels, r, buf, sizeof buf);
        int w = text_width(buf, h->row_scale);
        if (w > h->label_w) h->label_w = w;
    }
    h->col_scale = label_scale(cell_w);
    int widest = 0;
    for (int col = 0; col < h->cols; col++) {
        axis_label(col_labels, col, buf, sizeof buf);
        int w = text_width(buf, h->col_scale);
        if (w > widest) widest = w;
    }
    h->col_vertical = widest + 4 > cell_w;
    h->col_every = h->col_vertical ? label_every(cell_w, GLYPH_HEIGHT * h->col_scale + 2) : 1;
    h->col_label_h = h->col_vertical ? widest : GLYPH_HEIGHT * h->col_scale;
}

static void draw_heat_cells(Canvas *c, const HeatLayout *h, int gx, int gy) {
    for (int py = 0; py < h->grid_h; py++) {
        int r = (int)((long)py * h->rows / h->grid_h);
        for (int px = 0; px < h->grid_w; px++) {
            int col = (int)((long)px * h->cols / h->grid_w);
            float v = h->values[(size_t)r * h->cols + col];
            uint32_t color = isfinite(v) ? colormap(heat_t(h, v)) : COLOR_NAN;
            fill_rect(c, gx + px, gy + py, gx + px + 1, gy + py + 1, color);
        }
    }
    double cell_w = (double)h->grid_w / h->cols, cell_h = (double)h->grid_h / h->rows;
    if (cell_w >= 20 && cell_h >= 20) { /* thin separators between big cells */
        for (int r = 1; r < h->rows; r++) {
            int y = gy + to_pixel(r * cell_h);
            fill_rect(c, gx, y, gx + h->grid_w, y + 1, COLOR_WHITE);
        }
        for (int k = 1; k < h->cols; k++) {
            int x = gx + to_pixel(k * cell_w);
            fill_rect(c, x, gy, x + 1, gy + h->grid_h, COLOR_WHITE);
        }
    }
    if (h->rows > 12 || h->cols > 12) return;
    for (int r = 0; r < h->rows; r++)
        for (int k = 0; k < h->cols; k++) {
            char text[32];
            float v = h->values[(size_t)r * h->cols + k];
            cell_text(h, v, text, sizeof text);
            int scale = text_width(text, 2) + 6 <= cell_w && cell_h >= 24 ? 2 : 1;
            int w = text_width(text, scale);
            if (w + 4 > cell_w || cell_h < 12) continue;
            uint32_t ink = isfinite(v) && heat_t(h, v) > 0.55 ? COLOR_WHITE : COLOR_TEXT;
            int cx = gx + to_pixel((k + 0.5) * cell_w), cy = gy + to_pixel((r + 0.5) * cell_h);
            draw_text(c, cx - w / 2, cy - 7 * scale / 2, text, scale, ink);
        }
}

static void draw_heat_labels(Canvas *c, const HeatLayout *h, int gx, int gy, const char *const *row_labels,
                             const char *const *col_labels) {
    char buf[64];
    double cell_w = (double)h->grid_w / h->cols, cell_h = (double)h->grid_h / h->rows;
    for (int r = 0; r < h->rows; r += h->row_every) {
        axis_label(row_labels, r, buf, sizeof buf);
        int cy = gy + to_pixel((r + 0.5) * cell_h);
        draw_text(c, gx - 6 - text_width(buf, h->row_scale), cy - 7 * h->row_scale / 2, buf, h->row_scale, COLOR_TEXT);
    }
    for (int k = 0; k < h->cols; k += h->col_every) {
        axis_label(col_labels, k, buf, sizeof buf);
        int cx = gx + to_pixel((k + 0.5) * cell_w), top = gy + h->grid_h + 6, w = text_width(buf, h->col_scale);
        if (h->col_vertical) /* reads bottom to top, right-aligned against the grid */
            draw_text_dir(c, cx - 7 * h->col_scale / 2, top + w, buf, h->col_scale, COLOR_TEXT, 1);
        else
            draw_text(c, cx - w / 2, top, buf, h->col_scale, COLOR_TEXT);
    }
}

/* Colour-bar numbers: about three significant digits of the value range. */
static void colorbar_text(const HeatLayout *h, float v, char *buf, size_t size) {
    double range = (double)h->vmax - h->vmin, biggest = fmax(fabs(h->vmin), fabs(h->vmax));
    if (!(range > 0)) range = biggest > 0 ? biggest : 1;
    int decimals = 2 - (int)floor(log10(range));
    decimals = h->integers || decimals < 0 ? 0 : decimals > 6 ? 6 : decimals;
    if (biggest >= 1e6 && !h->integers) snprintf(buf, size, "%.3g", v);
    else snprintf(buf, size, "%.*f", decimals, fabs(v) < 0.5 * pow(10, -decimals) ? 0.0 : v);
}

/* Width of the colour bar with its numbers. */
static int colorbar_width(const HeatLayout *h) {
    char low[32], high[32];
    colorbar_text(h, h->vmin, low, sizeof low);
    colorbar_text(h, h->vmax, high, sizeof high);
    int w_low = text_width(low, 2), w_high = text_width(high, 2);
    return 20 + 18 + 6 + (w_low > w_high ? w_low : w_high);
}

/* A vertical colour bar, max at the top, with min and max printed. */
static void draw_colorbar(Canvas *c, const HeatLayout *h, int x, int y, int bar_h) {
    char text[32];
    for (int py = 0; py < bar_h; py++)
        fill_rect(c, x, y + py, x + 18, y + py + 1, colormap(1.0 - (double)py / (bar_h > 1 ? bar_h - 1 : 1)));
    outline_rect(c, x, y, x + 18, y + bar_h, COLOR_AXIS);
    float ends[2] = {h->vmax, h->vmin};
    for (int e = 0; e < 2; e++) {
        colorbar_text(h, ends[e], text, sizeof text);
        draw_text(c, x + 24, e == 0 ? y : y + bar_h - 7 * 2, text, 2, COLOR_TEXT);
    }
}

int plot_heatmap_png(const char *path, const float *values, int rows, int cols, const char *const *row_labels,
                     const char *const *col_labels, const char *title, int *width_out, int *height_out, char *err,
                     size_t errlen) {
    if (!path || !values || rows < 1 || cols < 1 || rows > 1000000 || cols > 1000000 ||
        (size_t)rows * cols > (size_t)1 << 28) {
        set_error(err, errlen, "%s: heatmap of %dx%d cells cannot be drawn", path ? path : "plot", rows, cols);
        return -1;
    }
    HeatLayout h = {.values = values, .rows = rows, .cols = cols};
    value_range(&h);
    heat_layout(&h, row_labels, col_labels);
    char title_buf[256];
    ascii_text(title ? title : "", title_buf, sizeof title_buf);
    int colorbar_w = colorbar_width(&h);
    int bar_h = h.grid_h > 120 ? h.grid_h : 120;
    int gx = 12 + h.label_w + 6, gy = 12 + GLYPH_HEIGHT * 2 + 12;
    int width = gx + h.grid_w + colorbar_w + 12;
    int title_w = text_width(title_buf, 2) + 24;
    if (title_w > width) width = title_w < 1900 ? title_w : 1900;
    int height = gy + (bar_h > h.grid_h + 6 + h.col_label_h ? bar_h : h.grid_h + 6 + h.col_label_h) + 14;
    Canvas canvas;
    if (canvas_init(&canvas, width, height) != 0) {
        set_error(err, errlen, "%s: out of memory for a %dx%d image", path, width, height);
        return -1;
    }
    draw_title(&canvas, width / 2, 12, title_buf, 2);
    draw_heat_cells(&canvas, &h, gx, gy);
    outline_rect(&canvas, gx - 1, gy - 1, gx + h.grid_w + 1, gy + h.grid_h + 1, COLOR_AXIS);
    draw_heat_labels(&canvas, &h, gx, gy, row_labels, col_labels);
    draw_colorbar(&canvas, &h, gx + h.grid_w + 20, gy, bar_h);
    int rc = canvas_write_png(&canvas, path, err, errlen);
    free(canvas.rgb);
    if (rc == 0 && width_out) *width_out = width;
    if (rc == 0 && height_out) *height_out = height;
    return rc;
}

/* ---- terminal charts ---- */

static const char SERIES_GLYPHS[] = "*o+x#%";

/* The text column of epoch e (1..n) in a chart width columns wide. */
static int text_column(int e, int n, int width) {
    return n > 1 ? (int)lround((double)(e - 1) / (n - 1) * (width - 1)) : width / 2;
}

/* Marks each series on a width x height character grid; the columns
 * between two epochs are filled by linear interpolation. */
static void text_plot_series(char *grid, int width, int height, const PlotPanel *panel, const Axis *y) {
    int n = longest_series(panel);
    for (int s = 0; s < panel->n_series; s++) {
        const PlotSeries *series = &panel->series[s];
        for (int i = 0; series->y && i < series->n; i++) {
            if (!isfinite(series->y[i])) continue;
            int has_next = i + 1 < series->n && isfinite(series->y[i + 1]);
            int c0 = text_column(i + 1, n, width), c1 = has_next ? text_column(i + 2, n, width) : c0 + 1;
            for (int col = c0; col < c1 && col < width; col++) {
                double frac = c1 > c0 ? (double)(col - c0) / (c1 - c0) : 0;
                double v = has_next ? series->y[i] + (series->y[i + 1] - series->y[i]) * frac : series->y[i];
                double pos = (y->hi - v) / (y->hi - y->lo) * (height - 1);
                int row = pos > 0 ? (int)lround(pos < height - 1 ? pos : height - 1) : 0;
                grid[(size_t)row * width + col] = SERIES_GLYPHS[s % (sizeof SERIES_GLYPHS - 1)];
            }
        }
    }
}

/* Epoch numbers under their columns: 1, the last, and nice steps between
 * that do not collide. Fills line (width characters). */
static void text_epoch_numbers(char *line, int width, int n) {
    char num[16];
    int last = n > 1 ? n : 1, free_from = 0;
    int last_len = snprintf(num, sizeof num, "%d", last);
    int last_start = text_column(last, n, width) - last_len + 1;
    if (last_start < 0) last_start = 0;
    if (last_start + last_len <= width) memcpy(line + last_start, num, (size_t)last_len);
    int step = epoch_step(last, width / (last_len + 3));
    for (int e = 1; e < last; e++) {
        int len = snprintf(num, sizeof num, "%d", e);
        int start = text_column(e, n, width) - (e == 1 ? 0 : len / 2);
        if (!is_epoch_tick(e, step) || start < free_from || start + len + 2 > last_start) continue;
        memcpy(line + start, num, (size_t)len);
        free_from = start + len + 2;
    }
}

/* Layout: the title line (when there is a title), height rows of the plot
 * with y tick numbers on the left, the x axis, the epoch numbers (and the
 * x label), and a legend line: height + 3 lines, + 1 with a title. */
void plot_text_chart(FILE *out, const PlotPanel *panel, int width, int height) {
    if (!out || !panel || panel->n_series < 0 || (panel->n_series > 0 && !panel->series)) return;
    width = width < 10 ? 10 : width > 1000 ? 1000 : width;
    height = height < 3 ? 3 : height > 200 ? 200 : height;
    char *grid = malloc((size_t)width * height), labels[200][24];
    if (!grid) return;
    memset(grid, ' ', (size_t)width * height);
    Axis y = value_axis(panel, height / 3 > 1 ? height / 3 : 1);
    text_plot_series(grid, width, height, panel, &y);
    int label_w = 0; /* y numbers on the rows nearest to each tick value */
    for (int r = 0; r < height; r++) labels[r][0] = '\0';
    for (int k = 0; k <= tick_count(&y); k++) {
        double v = y.lo + k * y.step;
        int row = (int)lround((y.hi - v) / (y.hi - y.lo) * (height - 1));
        if (row < 0 || row >= height) continue;
        format_tick(labels[row], sizeof labels[row], v, y.step);
        if ((int)strlen(labels[row]) > label_w) label_w = (int)strlen(labels[row]);
    }
    if (panel->title) fprintf(out, "%s\n", panel->title);
    for (int r = 0; r < height; r++) fprintf(out, "%*s |%.*s\n", label_w, labels[r], width, grid + (size_t)r * width);
    fprintf(out, "%*s +", label_w, "");
    for (int col = 0; col < width; col++) fputc('-', out);
    memset(grid, ' ', (size_t)width);
    text_epoch_numbers(grid, width, longest_series(panel));
    fprintf(out, "\n%*s  %.*s  %s\n%*s  ", label_w, "", width, grid, panel->x_label ? panel->x_label : "", label_w, "");
    for (int s = 0; s < panel->n_series; s++) {
        char buf[32];
        fprintf(out, "%s%c %s", s ? "   " : "", SERIES_GLYPHS[s % (sizeof SERIES_GLYPHS - 1)],
                series_name(&panel->series[s], s, buf, sizeof buf));
    }
    fputc('\n', out);
    free(grid);
}

/* Ten shades from empty to full. */
static const char SHADES[] = " .:-=+*#%@";

/* One row per line: the label, then two shade characters per cell (terminal
 * cells are about twice as tall as wide). Column labels, when given, are
 * written vertically above the grid (first 6 characters); otherwise every
 * fifth column index is marked. A scale line ends it. */
void plot_text_heatmap(FILE *out, const float *values, int rows, int cols, const char *const *row_labels,
                       const char *const *col_labels) {
    char buf[64];
    if (!out || !values || rows < 1 || cols < 1) return;
    int label_w = 0, cell_chars = cols <= 40 ? 2 : 1;
    for (int r = 0; r < rows; r++) {
        axis_label(row_labels, r, buf, sizeof buf);
        if ((int)strlen(buf) > label_w) label_w = (int)strlen(buf);
    }
    if (col_labels) {
        for (int line = 0; line < 6; line++) {
            int any = 0;
            for (int k = 0; k < cols; k++) {
                axis_label(col_labels, k, buf, sizeof buf);
                if ((int)strlen(buf) > line) any = 1;
            }
            if (!any) break;
            fprintf(out, "%*s  ", label_w, "");
            for (int k = 0; k < cols; k++) {
                axis_label(col_labels, k, buf, sizeof buf);
                fprintf(out, "%-*c", cell_chars, (int)strlen(buf) > line ? buf[line] : ' ');
            }
            fputc('\n', out);
        }
    } else {
        fprintf(out, "%*s  ", label_w, "");
        for (int k = 0; k < cols; k += 5) fprintf(out, "%-*d", 5 * cell_chars, k);
        fputc('\n', out);
    }
    for (int r = 0; r < rows; r++) {
        axis_label(row_labels, r, buf, sizeof buf);
        fprintf(out, "%*s |", label_w, buf);
        for (int k = 0; k < cols; k++) {
            float v = values[(size_t)r * cols + k];
            char shade = !isfinite(v) ? '?' : v <= 0 ? SHADES[0] : v >= 1 ? SHADES[9] : SHADES[(int)(v * 10)];
            for (int i = 0; i < cell_chars; i++) fputc(shade, out);
        }
        fputc('\n', out);
    }
    fprintf(out, "%*s  scale: ' '=0 .. '@'=1 (\"%s\")\n", label_w, "", SHADES);
}
