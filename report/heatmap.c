/* heatmap.c: PNG heatmaps (sequential or diverging colours, labels, axis
 * titles, a colour bar with ticks) and the terminal heatmap; see plot.h. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/utf8.h"
#include "report/canvas.h"
#include "report/font.h"
#include "report/plot.h"
#include "report/ticks.h"

#define COLOR_TEXT 0x222222u
#define COLOR_AXIS 0x555555u
#define COLOR_WHITE 0xFFFFFFu
#define COLOR_NAN 0xBBBBBBu
#define HEATMAP_MAX_GRID 1400 /* grid pixels per side (the image stays < 2000) */
#define HEATMAP_MAX_CELL 72   /* cell side in pixels, at most */
#define LABEL_MAX_CHARS 16    /* labels are cut to this many characters */
#define TITLE_PX 18
#define LABEL_PX 14
#define SMALL_PX 11
#define BAR_W 18

static int text_width(const char *s, int px) {
    return font_text_width(font_default(), s, px);
}

static int line_height(int px) {
    return font_line_height(font_default(), px);
}

static void draw_text(Canvas *c, int x, int y, const char *s, int px, uint32_t color, int vertical) {
    font_draw(c, font_default(), x, y, s, px, color, vertical);
}

/* ---- colours ---- */

/* Linear interpolation between n stops spread evenly over t in [0, 1]. */
static uint32_t interpolate(const uint32_t *stops, int n, double t) {
    if (!(t > 0)) t = 0;
    if (t > 1) t = 1;
    double pos = t * (n - 1);
    int i = (int)pos < n - 1 ? (int)pos : n - 2;
    double frac = pos - i;
    uint32_t out = 0;
    for (int shift = 16; shift >= 0; shift -= 8) {
        double a = (stops[i] >> shift) & 0xFF, b = (stops[i + 1] >> shift) & 0xFF;
        out |= (uint32_t)lround(a + (b - a) * frac) << shift;
    }
    return out;
}

uint32_t plot_colormap(PlotColormap map, double t) {
    /* ColorBrewer "Blues", and "RdBu" turned round (blue low) with a white middle */
    static const uint32_t blues[9] = {PLOT_SEQUENTIAL_LOW, 0xDEEBF7, 0xC6DBEF, 0x9ECAE1, 0x6BAED6,
                                      0x4292C6, 0x2171B5, 0x08519C, PLOT_SEQUENTIAL_HIGH};
    static const uint32_t blue_red[9] = {PLOT_DIVERGING_NEG, 0x4393C3, 0x92C5DE, 0xD1E5F0, PLOT_DIVERGING_ZERO,
                                         0xFDDBC7, 0xF4A582, 0xD6604D, PLOT_DIVERGING_POS};
    if (isnan(t)) t = 0;
    if (map == PLOT_MAP_DIVERGING) return interpolate(blue_red, 9, (t + 1) / 2);
    return interpolate(blues, 9, t);
}

/* ---- layout ---- */

typedef struct {
    const PlotHeatmap *map;
    float vmin, vmax;
    double lo, hi;            /* the colour scale: vmin..vmax, or -m..m when diverging */
    int integers;             /* every finite value is a whole number */
    int whole_numbers;        /* ... and every finite cell number */
    int grid_w, grid_h;       /* grid size in pixels */
    int row_every, col_every; /* label thinning */
    int row_px, col_px;       /* label text sizes */
    int col_vertical;         /* column labels turned 90 degrees */
    int label_w;              /* widest row label */
    int col_label_h;          /* height of the column-label band */
} HeatLayout;

/* Whether every finite one of n numbers is a whole number. */
static int all_whole(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && (x[i] != floorf(x[i]) || fabsf(x[i]) > 1e9f)) return 0;
    return 1;
}

static void value_range(HeatLayout *h) {
    const PlotHeatmap *m = h->map;
    size_t n = (size_t)m->rows * m->cols;
    h->vmin = INFINITY, h->vmax = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float v = m->values[i];
        if (!isfinite(v)) continue;
        if (v < h->vmin) h->vmin = v;
        if (v > h->vmax) h->vmax = v;
    }
    h->integers = all_whole(m->values, n);
    h->whole_numbers = m->cell_numbers ? all_whole(m->cell_numbers, n) : h->integers;
    if (h->vmin > h->vmax) h->vmin = 0, h->vmax = 1;
    if (m->unit_scale && m->colormap == PLOT_MAP_SEQUENTIAL) h->vmin = 0, h->vmax = 1;
    h->lo = h->vmin, h->hi = h->vmax;
    if (m->colormap == PLOT_MAP_DIVERGING) {
        double biggest = fmax(fabs((double)h->vmin), fabs((double)h->vmax));
        h->hi = biggest > 0 ? biggest : 1;
        h->lo = -h->hi;
    }
}

/* Where v sits on the colour scale: [0, 1], or [-1, 1] when diverging. */
static double heat_t(const HeatLayout *h, double v) {
    if (h->map->colormap == PLOT_MAP_DIVERGING) return v / h->hi;
    return h->hi > h->lo ? (v - h->lo) / (h->hi - h->lo) : 0.5;
}

static uint32_t heat_color(const HeatLayout *h, double v) {
    return plot_colormap(h->map->colormap, heat_t(h, v));
}

/* Dark cells get white numbers. */
static int dark_cell(const HeatLayout *h, double v) {
    double t = heat_t(h, v);
    return h->map->colormap == PLOT_MAP_DIVERGING ? fabs(t) > 0.6 : t > 0.55;
}

static void cell_text(const HeatLayout *h, float v, char *buf, size_t size) {
    if (!isfinite(v)) snprintf(buf, size, "nan");
    else if (h->whole_numbers) snprintf(buf, size, "%.0f", v);
    else snprintf(buf, size, "%.2f", v);
}

/* Label i of an axis: the given label cut to LABEL_MAX_CHARS characters
 * (whole UTF-8 sequences; the rest becomes ".."), or the index. */
static void axis_label(const char *const *labels, int i, char *buf, size_t size) {
    if (!labels || !labels[i]) {
        snprintf(buf, size, "%d", i);
        return;
    }
    const char *s = labels[i];
    size_t n = 0, chars = 0, keep = 0;
    for (; s[n]; n++) {
        if (((unsigned char)s[n] & 0xC0) == 0x80) continue;
        if (chars == LABEL_MAX_CHARS - 2) keep = n;
        chars++;
    }
    if (chars <= LABEL_MAX_CHARS) snprintf(buf, size, "%s", s);
    else snprintf(buf, size, "%.*s..", (int)keep, s);
}

/* Every how many cells a label fits: 1, 2, 5, 10, 20, 50... */
static int label_every(double cell_px, int needed_px) {
    for (int base = 1; base < 100000000; base *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) /* 1, 2, 5 */
            if (cell_px * base * m >= needed_px) return base * m;
    return 100000000;
}

/* Labels are drawn at the normal size where they fit or must be thinned
 * out anyway, small where that lets every cell keep its label. */
static int label_px(double cell_px) {
    return cell_px >= line_height(LABEL_PX) + 2 || label_every(cell_px, line_height(SMALL_PX) + 2) > 1 ? LABEL_PX
                                                                                                     : SMALL_PX;
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
static void heat_layout(HeatLayout *h) {
    const PlotHeatmap *m = h->map;
    char buf[128];
    int cell = 1024 / (m->rows > m->cols ? m->rows : m->cols);
    if (cell > HEATMAP_MAX_CELL) cell = HEATMAP_MAX_CELL;
    if (cell < 1) cell = 1;
    int cw = cell, ch = cell;
    if (m->rows > 12 || m->cols > 12) {
        cw = stretched_cell(m->cols, cell);
        ch = stretched_cell(m->rows, cell);
    }
    h->grid_w = m->cols * cw <= HEATMAP_MAX_GRID ? m->cols * cw : HEATMAP_MAX_GRID;
    h->grid_h = m->rows * ch <= HEATMAP_MAX_GRID ? m->rows * ch : HEATMAP_MAX_GRID;
    double cell_w = (double)h->grid_w / m->cols, cell_h = (double)h->grid_h / m->rows;

    h->row_px = label_px(cell_h);
    h->row_every = label_every(cell_h, line_height(h->row_px) + 2);
    h->label_w = 0;
    for (int r = 0; r < m->rows; r += h->row_every) {
        axis_label(m->row_labels, r, buf, sizeof buf);
        int w = text_width(buf, h->row_px);
        if (w > h->label_w) h->label_w = w;
    }
    h->col_px = label_px(cell_w);
    int widest = 0;
    for (int col = 0; col < m->cols; col++) {
        axis_label(m->col_labels, col, buf, sizeof buf);
        int w = text_width(buf, h->col_px);
        if (w > widest) widest = w;
    }
    h->col_vertical = widest + 4 > cell_w;
    h->col_every = h->col_vertical ? label_every(cell_w, line_height(h->col_px) + 2) : 1;
    h->col_label_h = h->col_vertical ? widest : line_height(h->col_px);
}

/* ---- drawing ---- */

static void draw_heat_cells(Canvas *c, const HeatLayout *h, int gx, int gy) {
    const PlotHeatmap *m = h->map;
    for (int py = 0; py < h->grid_h; py++) {
        int r = (int)((long)py * m->rows / h->grid_h);
        for (int px = 0; px < h->grid_w; px++) {
            int col = (int)((long)px * m->cols / h->grid_w);
            float v = m->values[(size_t)r * m->cols + col];
            canvas_fill_rect(c, gx + px, gy + py, gx + px + 1, gy + py + 1, isfinite(v) ? heat_color(h, v) : COLOR_NAN);
        }
    }
    double cell_w = (double)h->grid_w / m->cols, cell_h = (double)h->grid_h / m->rows;
    if (cell_w >= 20 && cell_h >= 20) { /* thin separators between big cells */
        for (int r = 1; r < m->rows; r++) {
            int y = gy + canvas_to_pixel(r * cell_h);
            canvas_fill_rect(c, gx, y, gx + h->grid_w, y + 1, COLOR_WHITE);
        }
        for (int k = 1; k < m->cols; k++) {
            int x = gx + canvas_to_pixel(k * cell_w);
            canvas_fill_rect(c, x, gy, x + 1, gy + h->grid_h, COLOR_WHITE);
        }
    }
    if ((m->rows > 12 || m->cols > 12) && !m->cell_numbers) return;
    for (int r = 0; r < m->rows; r++)
        for (int k = 0; k < m->cols; k++) {
            char text[32];
            float v = m->values[(size_t)r * m->cols + k];
            cell_text(h, m->cell_numbers ? m->cell_numbers[(size_t)r * m->cols + k] : v, text, sizeof text);
            int px = text_width(text, LABEL_PX + 1) + 6 <= cell_w && cell_h >= 24 ? LABEL_PX + 1 : SMALL_PX;
            int w = text_width(text, px);
            if (w + 4 > cell_w || cell_h < line_height(px) + 1) continue;
            uint32_t ink = isfinite(v) && dark_cell(h, v) ? COLOR_WHITE : COLOR_TEXT;
            int cx = gx + canvas_to_pixel((k + 0.5) * cell_w), cy = gy + canvas_to_pixel((r + 0.5) * cell_h);
            draw_text(c, cx - w / 2, cy - line_height(px) / 2, text, px, ink, 0);
        }
}

static void draw_heat_labels(Canvas *c, const HeatLayout *h, int gx, int gy) {
    const PlotHeatmap *m = h->map;
    char buf[128];
    double cell_w = (double)h->grid_w / m->cols, cell_h = (double)h->grid_h / m->rows;
    for (int r = 0; r < m->rows; r += h->row_every) {
        axis_label(m->row_labels, r, buf, sizeof buf);
        int cy = gy + canvas_to_pixel((r + 0.5) * cell_h);
        draw_text(c, gx - 6 - text_width(buf, h->row_px), cy - line_height(h->row_px) / 2, buf, h->row_px, COLOR_TEXT,
                  0);
    }
    for (int k = 0; k < m->cols; k += h->col_every) {
        axis_label(m->col_labels, k, buf, sizeof buf);
        int cx = gx + canvas_to_pixel((k + 0.5) * cell_w), top = gy + h->grid_h + 6, w = text_width(buf, h->col_px);
        if (h->col_vertical) /* reads bottom to top, right-aligned against the grid */
            draw_text(c, cx - line_height(h->col_px) / 2, top + w, buf, h->col_px, COLOR_TEXT, 1);
        else
            draw_text(c, cx - w / 2, top, buf, h->col_px, COLOR_TEXT, 0);
    }
}

/* The colour bar's ticks: round values of the scale, about one per 60 px;
 * whole numbers only for whole-number data. Returns the step; *first and
 * *count say which multiples of it lie on the scale. */
static double colorbar_ticks(const HeatLayout *h, int bar_h, long *first, int *count) {
    double range = h->hi - h->lo;
    double step = ticks_nice_step(range > 0 ? range : fabs(h->hi) + 1, bar_h / 60 > 4 ? bar_h / 60 : 4);
    if (h->integers && step < 1) step = 1;
    double lo = ceil(h->lo / step - 1e-9), hi = floor(h->hi / step + 1e-9);
    *first = lo > -1e9 ? (long)lo : -1000000000L;
    *count = range > 0 && hi >= lo && hi - lo < 100 ? (int)(hi - lo) + 1 : 0;
    return step;
}

/* Width of the colour bar with its numbers. */
static int colorbar_width(const HeatLayout *h, int bar_h) {
    char text[64];
    long first;
    int count, widest = 0;
    double step = colorbar_ticks(h, bar_h, &first, &count);
    for (int k = 0; k < count; k++) {
        ticks_format(text, sizeof text, (first + k) * step, step);
        int w = text_width(text, LABEL_PX);
        if (w > widest) widest = w;
    }
    ticks_format(text, sizeof text, h->hi, step); /* a flat scale prints its one value */
    if (count == 0) widest = text_width(text, LABEL_PX);
    return 20 + BAR_W + 9 + widest + 8 + (h->map->bar_title ? line_height(LABEL_PX) + 4 : 0);
}

/* A vertical colour bar, the top of the scale at the top, with tick marks
 * and numbers. */
static void draw_colorbar(Canvas *c, const HeatLayout *h, int x, int y, int bar_h) {
    char text[64];
    for (int py = 0; py < bar_h; py++) {
        double v = h->hi - (h->hi - h->lo) * py / (bar_h > 1 ? bar_h - 1 : 1);
        canvas_fill_rect(c, x, y + py, x + BAR_W, y + py + 1, heat_color(h, v));
    }
    canvas_outline_rect(c, x, y, x + BAR_W, y + bar_h, COLOR_AXIS);
    long first;
    int count, line = line_height(LABEL_PX);
    double step = colorbar_ticks(h, bar_h, &first, &count);
    if (count == 0) {
        ticks_format(text, sizeof text, h->hi, step);
        draw_text(c, x + BAR_W + 9, y + bar_h / 2 - line / 2, text, LABEL_PX, COLOR_TEXT, 0);
    }
    for (int k = 0; k < count; k++) {
        double v = (first + k) * step;
        int py = y + canvas_to_pixel((h->hi - v) / (h->hi - h->lo) * (bar_h - 1));
        canvas_fill_rect(c, x + BAR_W, py, x + BAR_W + 5, py + 1, COLOR_AXIS);
        ticks_format(text, sizeof text, v, step);
        int ty = py - line / 2;
        ty = ty < y - line / 2 ? y - line / 2 : ty;
        draw_text(c, x + BAR_W + 9, ty, text, LABEL_PX, COLOR_TEXT, 0);
    }
}

int plot_heatmap(const char *path, const PlotHeatmap *map, int *width_out, int *height_out, char *err,
                 size_t errlen) {
    if (!path || !map || !map->values || map->rows < 1 || map->cols < 1 || map->rows > 1000000 ||
        map->cols > 1000000 || (size_t)map->rows * map->cols > (size_t)1 << 28) {
        set_error(err, errlen, "%s: heatmap of %dx%d cells cannot be drawn", path ? path : "plot",
                  map ? map->rows : 0, map ? map->cols : 0);
        return -1;
    }
    HeatLayout h = {.map = map};
    value_range(&h);
    heat_layout(&h);
    const char *title = map->title ? map->title : "";
    int line = line_height(LABEL_PX), title_line = line_height(TITLE_PX);
    int bar_h = h.grid_h > 160 ? h.grid_h : 160;
    int bar_title_w = map->bar_title ? text_width(map->bar_title, LABEL_PX) + 10 : 0;
    bar_h = bar_h > bar_title_w ? bar_h : bar_title_w;   /* the bar's title, turned, fits along it */
    int colorbar_w = colorbar_width(&h, bar_h);
    int gx = 12 + (map->row_title ? line + 10 : 0) + h.label_w + 6, gy = 10 + title_line + 14;
    int width = gx + h.grid_w + colorbar_w + 12, left = 12;
    int title_w = text_width(title, TITLE_PX) + 24;
    if (title_w > width) { /* a title wider than the grid: the grid centred under it */
        int wider = title_w < 1900 ? title_w : 1900;
        left += (wider - width) / 2, gx += (wider - width) / 2, width = wider;
    }
    int below = 6 + h.col_label_h + (map->col_title ? 10 + line : 0);
    int height = gy + (bar_h > h.grid_h + below ? bar_h : h.grid_h + below) + 14;
    Canvas canvas;
    if (canvas_init(&canvas, width, height) != 0) {
        set_error(err, errlen, "%s: out of memory for a %dx%d image", path, width, height);
        return -1;
    }
    draw_text(&canvas, (width - text_width(title, TITLE_PX)) / 2, 10, title, TITLE_PX, COLOR_TEXT, 0);
    draw_text(&canvas, (width - text_width(title, TITLE_PX)) / 2 + 1, 10, title, TITLE_PX, COLOR_TEXT, 0);
    draw_heat_cells(&canvas, &h, gx, gy);
    canvas_outline_rect(&canvas, gx - 1, gy - 1, gx + h.grid_w + 1, gy + h.grid_h + 1, COLOR_AXIS);
    draw_heat_labels(&canvas, &h, gx, gy);
    if (map->row_title)
        draw_text(&canvas, left, gy + (h.grid_h + text_width(map->row_title, LABEL_PX)) / 2, map->row_title,
                  LABEL_PX, COLOR_TEXT, 1);
    if (map->col_title)
        draw_text(&canvas, gx + (h.grid_w - text_width(map->col_title, LABEL_PX)) / 2,
                  gy + h.grid_h + 6 + h.col_label_h + 10, map->col_title, LABEL_PX, COLOR_TEXT, 0);
    draw_colorbar(&canvas, &h, gx + h.grid_w + 20, gy, bar_h);
    if (map->bar_title) {   /* reads bottom to top, right of the bar's numbers */
        int bottom = gy + (bar_h + text_width(map->bar_title, LABEL_PX)) / 2;
        draw_text(&canvas, gx + h.grid_w + colorbar_w - 4 - line, bottom, map->bar_title, LABEL_PX, COLOR_TEXT, 1);
    }
    int rc = canvas_write_png(&canvas, path, err, errlen);
    canvas_free(&canvas);
    if (rc == 0 && width_out) *width_out = width;
    if (rc == 0 && height_out) *height_out = height;
    return rc;
}

int plot_heatmap_png(const char *path, const float *values, int rows, int cols, const char *const *row_labels,
                     const char *const *col_labels, const char *title, int *width_out, int *height_out, char *err,
                     size_t errlen) {
    PlotHeatmap map = {.values = values, .rows = rows, .cols = cols, .row_labels = row_labels,
                       .col_labels = col_labels, .title = title, .colormap = PLOT_MAP_SEQUENTIAL};
    return plot_heatmap(path, &map, width_out, height_out, err, errlen);
}

/* ---- a strip of heatmaps ---- */

#define STRIP_PER_ROW 6   /* panels a row of the strip holds */

int plot_heatmap_strip(const char *path, const PlotStrip *strip, char *err, size_t errlen) {
    int n = strip->n_panels, rows = strip->rows, cols = strip->cols;
    if (n < 1 || rows < 1 || cols < 1 || rows > 4096 || cols > 4096 || n > 100000) {
        set_error(err, errlen, "%s: a strip of %d heatmaps of %dx%d cells cannot be drawn", path, n, rows, cols);
        return -1;
    }
    size_t panel = (size_t)rows * cols;
    PlotHeatmap all = {.values = strip->values, .rows = n * rows, .cols = cols, .colormap = PLOT_MAP_SEQUENTIAL};
    HeatLayout h = {.map = &all};
    value_range(&h);   /* one colour scale for every panel */
    int longer = rows > cols ? rows : cols;
    int cell = 240 / longer < 4 ? 4 : 240 / longer > 28 ? 28 : 240 / longer;
    h.grid_w = cols * cell, h.grid_h = rows * cell;
    h.row_px = h.col_px = label_px(cell);
    h.row_every = h.col_every = label_every(cell, line_height(h.row_px) + 2);
    h.col_vertical = 1;
    char buf[128];
    for (int r = 0; r < rows; r++) {
        axis_label(strip->labels, r, buf, sizeof buf);
        int w = text_width(buf, h.row_px);
        if (w > h.label_w) h.label_w = w;
    }
    h.col_label_h = h.label_w;
    int per_row = n < STRIP_PER_ROW ? n : STRIP_PER_ROW, n_rows = (n + per_row - 1) / per_row;
    int line = line_height(LABEL_PX), title_line = line_height(TITLE_PX);
    int panel_w = h.label_w + 6 + h.grid_w + 16, panel_h = line + 6 + h.grid_h + 6 + h.col_label_h + 14;
    int bar_h = h.grid_h > 120 ? h.grid_h : 120;
    int width = 12 + per_row * panel_w + colorbar_width(&h, bar_h), top = 10 + title_line + 12;
    int height = top + n_rows * panel_h + 8;
    const char *title = strip->title ? strip->title : "";
    if (text_width(title, TITLE_PX) + 24 > width) width = text_width(title, TITLE_PX) + 24;
    Canvas canvas;
    if (canvas_init(&canvas, width, height) != 0) {
        set_error(err, errlen, "%s: out of memory for a %dx%d image", path, width, height);
        return -1;
    }
    draw_text(&canvas, (width - text_width(title, TITLE_PX)) / 2, 10, title, TITLE_PX, COLOR_TEXT, 0);
    for (int i = 0; i < n; i++) {
        PlotHeatmap one = {.values = strip->values + i * panel, .rows = rows, .cols = cols,
                           .row_labels = strip->labels, .col_labels = strip->labels, .colormap = PLOT_MAP_SEQUENTIAL};
        HeatLayout p = h;
        p.map = &one;
        int gx = 12 + (i % per_row) * panel_w + h.label_w + 6, gy = top + (i / per_row) * panel_h + line + 6;
        const char *name = strip->panel_titles ? strip->panel_titles[i] : "";
        draw_text(&canvas, gx + (h.grid_w - text_width(name, LABEL_PX)) / 2, gy - line - 4, name, LABEL_PX,
                  COLOR_TEXT, 0);
        draw_heat_cells(&canvas, &p, gx, gy);
        canvas_outline_rect(&canvas, gx - 1, gy - 1, gx + h.grid_w + 1, gy + h.grid_h + 1, COLOR_AXIS);
        draw_heat_labels(&canvas, &p, gx, gy);
    }
    draw_colorbar(&canvas, &h, 12 + per_row * panel_w + 8, top + line + 6, bar_h);
    int rc = canvas_write_png(&canvas, path, err, errlen);
    canvas_free(&canvas);
    return rc;
}

/* ---- the terminal heatmap ---- */

/* A terminal label as given (UTF-8; the caller makes it what the terminal
 * can show), cut to LABEL_MAX_CHARS columns with ".." at the end. */
static void text_label(const char *const *labels, int i, char *buf, size_t size) {   /* size: 4 x 16 + 3 at least */
    if (!labels || !labels[i]) {
        snprintf(buf, size, "%d", i);
        return;
    }
    const char *s = labels[i];
    size_t keep = utf8_columns(s) <= LABEL_MAX_CHARS ? strlen(s) : utf8_prefix_fitting(s, LABEL_MAX_CHARS - 2);
    snprintf(buf, size, "%.*s%s", (int)keep, s, keep < strlen(s) ? ".." : "");
}

/* s padded with spaces on the left to width columns. */
static void print_right(FILE *out, const char *s, int width) {
    for (int pad = width - utf8_columns(s); pad > 0; pad--) fputc(' ', out);
    fputs(s, out);
}

/* The line-th character of label s in a cell of cell_chars columns. */
static void print_label_char(FILE *out, const char *s, int line, int cell_chars) {
    int len = 0, at = 0, k = 0;
    for (; s[at] && k < line; k++) {
        utf8_decode(s + at, &len);
        at += len;
    }
    int w = 0;
    if (s[at]) {
        unsigned cp = utf8_decode(s + at, &len);
        w = utf8_cp_columns(cp);
        if (w <= cell_chars) fwrite(s + at, 1, (size_t)len, out);
        else w = 0;   /* wider than the cell: left out */
    }
    for (; w < cell_chars; w++) fputc(' ', out);
}

/* Ten shades from empty to full. */
static const char SHADES[] = " .:-=+*#%@";

/* One row per line: the label, then two shade characters per cell (terminal
 * cells are about twice as tall as wide). Column labels, when given, are
 * written vertically above the grid (first 6 characters); otherwise every
 * fifth column index is marked. A scale line ends it. */
void plot_text_heatmap(FILE *out, const float *values, int rows, int cols, const char *const *row_labels,
                       const char *const *col_labels) {
    char buf[4 * LABEL_MAX_CHARS + 8];
    if (!out || !values || rows < 1 || cols < 1) return;
    int label_w = 0, cell_chars = cols <= 40 ? 2 : 1;
    for (int r = 0; r < rows; r++) {
        text_label(row_labels, r, buf, sizeof buf);
        if (utf8_columns(buf) > label_w) label_w = utf8_columns(buf);
    }
    if (col_labels) {
        for (int line = 0; line < 6; line++) {
            int any = 0;
            for (int k = 0; k < cols; k++) {
                text_label(col_labels, k, buf, sizeof buf);
                if (utf8_columns(buf) > line) any = 1;
            }
            if (!any) break;
            fprintf(out, "%*s  ", label_w, "");
            for (int k = 0; k < cols; k++) {
                text_label(col_labels, k, buf, sizeof buf);
                print_label_char(out, buf, line, cell_chars);
            }
            fputc('\n', out);
        }
    } else {
        fprintf(out, "%*s  ", label_w, "");
        for (int k = 0; k < cols; k += 5) fprintf(out, "%-*d", 5 * cell_chars, k);
        fputc('\n', out);
    }
    for (int r = 0; r < rows; r++) {
        text_label(row_labels, r, buf, sizeof buf);
        print_right(out, buf, label_w);
        fputs(" |", out);
        for (int k = 0; k < cols; k++) {
            float v = values[(size_t)r * cols + k];
            char shade = !isfinite(v) ? '?' : v <= 0 ? SHADES[0] : v >= 1 ? SHADES[9] : SHADES[(int)(v * 10)];
            for (int i = 0; i < cell_chars; i++) fputc(shade, out);
        }
        fputc('\n', out);
    }
    fprintf(out, "%*s  scale: ' '=0 .. '@'=1 (\"%s\")\n", label_w, "", SHADES);
}
