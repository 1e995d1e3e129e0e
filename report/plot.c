/* plot.c: line charts rasterised into a canvas and written as PNG, and the
 * terminal line chart (heatmaps are in heatmap.c). */
#include "report/plot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "report/canvas.h"
#include "report/font.h"
#include "report/ticks.h"

#define COLOR_TEXT 0x222222u
#define COLOR_AXIS 0x555555u
#define COLOR_GRID 0xE6E6E6u
#define COLOR_WHITE 0xFFFFFFu
#define MAX_IMAGE_SIDE 8000 /* refuse absurd chart sizes */
#define MAX_EPOCH_TICKS 256

/* Text sizes in pixels (font.h): big panels, and small ones. */
#define TEXT_PX 15
#define TITLE_PX 18
#define SMALL_TEXT_PX 12
#define SMALL_TITLE_PX 14

static int text_width(const char *s, int px) {
    return font_text_width(font_default(), s, px);
}

static void draw_text(Canvas *c, int x, int y, const char *s, int px, uint32_t color, int vertical) {
    font_draw(c, font_default(), x, y, s, px, color, vertical);
}

/* Centred on center_x, made bold by drawing it twice a pixel apart. */
static void draw_title(Canvas *c, int center_x, int y, const char *s, int px) {
    int x = center_x - text_width(s, px) / 2;
    draw_text(c, x, y, s, px, COLOR_TEXT, 0);
    draw_text(c, x + 1, y, s, px, COLOR_TEXT, 0);
}

/* ---- the value axis ---- */

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
    a.step = ticks_nice_step(hi - lo, max_ticks);
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

static int longest_series(const PlotPanel *panel) {
    int n = 0;
    for (int s = 0; s < panel->n_series; s++)
        if (panel->series[s].y && panel->series[s].n > n) n = panel->series[s].n;
    return n;
}

static const char *series_name(const PlotSeries *s, int index, char *buf, size_t size) {
    if (s->name && s->name[0]) return s->name;
    snprintf(buf, size, "series %d", index + 1);
    return buf;
}

/* ---- one chart panel ---- */

typedef struct {
    int left, top, right, bottom; /* plot area, half-open */
    int inset;                    /* data kept this far from the frame */
    double x_lo, x_hi;
    Axis y;
    int px, line;                 /* text size and its line height */
} PanelFrame;

static int frame_x(const PanelFrame *f, double x) {
    double span = f->right - f->left - 1 - 2 * f->inset;
    return canvas_to_pixel(f->left + f->inset + (x - f->x_lo) / (f->x_hi - f->x_lo) * span);
}

static int frame_y(const PanelFrame *f, double y) {
    double span = f->bottom - f->top - 1 - 2 * f->inset;
    return canvas_to_pixel(f->bottom - 1 - f->inset - (y - f->y.lo) / (f->y.hi - f->y.lo) * span);
}

static void draw_y_ticks(Canvas *c, const PanelFrame *f) {
    char label[64];
    for (int k = 0; k <= tick_count(&f->y); k++) {
        double v = f->y.lo + k * f->y.step;
        int py = frame_y(f, v);
        canvas_fill_rect(c, f->left + 1, py, f->right - 1, py + 1, COLOR_GRID);
        canvas_fill_rect(c, f->left - 5, py, f->left, py + 1, COLOR_AXIS);
        ticks_format(label, sizeof label, v, f->y.step);
        draw_text(c, f->left - 8 - text_width(label, f->px), py - f->line / 2, label, f->px, COLOR_TEXT, 0);
    }
}

/* Epoch ticks: the first, the last, round numbers between (ticks.h), as
 * many as fit with the widest number plus a gap apart. */
static void draw_x_ticks(Canvas *c, const PanelFrame *f, int n) {
    char label[32];
    int last = n > 1 ? n : 1, ticks[MAX_EPOCH_TICKS];
    snprintf(label, sizeof label, "%d", last);
    int room = text_width(label, f->px) + f->px;
    int span = frame_x(f, last) - frame_x(f, 1);
    int count = ticks_epochs(last, span / (room > 0 ? room : 1) + 1, ticks, MAX_EPOCH_TICKS);
    for (int k = 0; k < count; k++) {
        int px = frame_x(f, ticks[k]);
        canvas_fill_rect(c, px, f->top + 1, px + 1, f->bottom - 1, COLOR_GRID);
        canvas_fill_rect(c, px, f->bottom, px + 1, f->bottom + 5, COLOR_AXIS);
        snprintf(label, sizeof label, "%d", ticks[k]);
        draw_text(c, px - text_width(label, f->px) / 2, f->bottom + 7, label, f->px, COLOR_TEXT, 0);
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
            canvas_line(c, frame_x(f, i), frame_y(f, s->y[i - 1]), px, py, s->color, s->dashed ? &dash : NULL);
        if (spacing >= MIN_MARKER_SPACING || (!prev_ok && !next_ok)) canvas_fill_circle(c, px + 1, py + 1, 3, s->color);
    }
}

/* The marked epoch: a dashed vertical line over the plot's height. */
static void draw_mark(Canvas *c, const PanelFrame *f, int epoch) {
    int x = frame_x(f, epoch);
    double dash = 0;
    canvas_line(c, x, f->top + 2, x, f->bottom - 3, PLOT_COLOR_MARK, &dash);
}

static int has_mark(const PlotPanel *panel) {
    return panel->mark_epoch > 0 && panel->mark_epoch <= longest_series(panel);
}

/* Where the legend goes: the box position inside the plot area (10 px
 * from the frame) that hides the fewest drawn pixels (lines, markers, the
 * marked epoch; not the grid) within 4 px of it, and among those the
 * nearest to a corner, top-right first. Counts come from a summed-area
 * table of the canvas as drawn so far. */
static void legend_spot(const Canvas *c, const PanelFrame *f, int box_w, int box_h, int *x_out, int *y_out) {
    int x0 = f->left + 1, y0 = f->top + 1, w = f->right - 1 - x0, h = f->bottom - 1 - y0;
    int lo_x = f->left + 10, hi_x = f->right - 10 - box_w, lo_y = f->top + 10, hi_y = f->bottom - 10 - box_h;
    *x_out = hi_x, *y_out = lo_y;
    if (w < 1 || h < 1 || hi_x < lo_x || hi_y < lo_y) return;
    size_t stride = (size_t)w + 1;
    long *sum = calloc(stride * (h + 1), sizeof *sum); /* sum[y][x]: ink in the area above-left of (x, y) */
    if (!sum) return;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            uint32_t p = canvas_get(c, x0 + x, y0 + y);
            long ink = p != COLOR_WHITE && p != COLOR_GRID;
            size_t at = (y + 1) * stride + x + 1;
            sum[at] = ink + sum[at - stride] + sum[at - 1] - sum[at - stride - 1];
        }
    long best_ink = -1, best_dist = 0;
    for (int by = lo_y; by <= hi_y; by += 2)
        for (int bx = hi_x; bx >= lo_x; bx -= 2) {
            int ax = bx - 4 - x0, ay = by - 4 - y0, ex = bx + box_w + 4 - x0, ey = by + box_h + 4 - y0;
            ax = ax < 0 ? 0 : ax, ay = ay < 0 ? 0 : ay, ex = ex > w ? w : ex, ey = ey > h ? h : ey;
            long ink = sum[ey * stride + ex] - sum[ay * stride + ex] - sum[ey * stride + ax] + sum[ay * stride + ax];
            int dx = hi_x - bx < bx - lo_x ? hi_x - bx : bx - lo_x, dy = by - lo_y < hi_y - by ? by - lo_y : hi_y - by;
            long dist = dx + dy;
            if (best_ink < 0 || ink < best_ink || (ink == best_ink && dist < best_dist))
                best_ink = ink, best_dist = dist, *x_out = bx, *y_out = by;
        }
    free(sum);
}

/* A legend box where it hides the least (legend_spot): one row per
 * series, and one for the marked epoch. */
static void draw_legend(Canvas *c, const PanelFrame *f, const PlotPanel *panel) {
    char buf[32];
    int rows = panel->n_series + has_mark(panel);
    if (rows < 1) return;
    int row_h = f->line + 5, swatch = 28, name_w = 0;
    for (int s = 0; s < rows; s++) {
        const char *name = s < panel->n_series ? series_name(&panel->series[s], s, buf, sizeof buf)
                                               : (panel->mark_label ? panel->mark_label : "marked epoch");
        int w = text_width(name, f->px);
        if (w > name_w) name_w = w;
    }
    int box_w = 8 + swatch + 8 + name_w + 8, box_h = 5 + row_h * rows + 2;
    int best_x, best_y;
    legend_spot(c, f, box_w, box_h, &best_x, &best_y);
    canvas_fill_rect(c, best_x, best_y, best_x + box_w, best_y + box_h, COLOR_WHITE);
    canvas_outline_rect(c, best_x, best_y, best_x + box_w, best_y + box_h, 0xBBBBBBu);
    for (int s = 0; s < rows; s++) {
        int y = best_y + 5 + s * row_h, mid = y + f->line / 2 - 1;
        double dash = 0;
        if (s == panel->n_series) { /* the marked epoch: a short dashed upright */
            canvas_line(c, best_x + 8 + swatch / 2, y + 1, best_x + 8 + swatch / 2, y + f->line - 2, PLOT_COLOR_MARK,
                        &dash);
            draw_text(c, best_x + 16 + swatch, y, panel->mark_label ? panel->mark_label : "marked epoch", f->px,
                      COLOR_TEXT, 0);
            continue;
        }
        const PlotSeries *series = &panel->series[s];
        canvas_line(c, best_x + 8, mid, best_x + 8 + swatch, mid, series->color, series->dashed ? &dash : NULL);
        canvas_fill_circle(c, best_x + 8 + swatch / 2 + 1, mid + 1, 3, series->color);
        draw_text(c, best_x + 16 + swatch, y, series_name(series, s, buf, sizeof buf), f->px, COLOR_TEXT, 0);
    }
}

/* Widest y tick label, to size the left margin. */
static int y_labels_width(const Axis *y, int px) {
    char label[64];
    int widest = 0;
    for (int k = 0; k <= tick_count(y); k++) {
        double v = y->lo + k * y->step;
        ticks_format(label, sizeof label, v, y->step);
        int w = text_width(label, px);
        if (w > widest) widest = w;
    }
    return widest;
}

static void draw_panel(Canvas *c, const PlotPanel *panel, int x0, int panel_w, int px, int title_px) {
    PanelFrame f;
    int n = longest_series(panel), title_line = font_line_height(font_default(), title_px);
    f.px = px;
    f.line = font_line_height(font_default(), px);
    f.inset = 8;
    f.top = 10 + title_line + 10;
    f.bottom = c->height - (7 + f.line + 8 + f.line + 8);
    f.y = value_axis(panel, (f.bottom - f.top) / (f.line * 3));
    f.left = x0 + 8 + f.line + 10 + y_labels_width(&f.y, px) + 8;
    f.right = x0 + panel_w - 16;
    f.x_lo = n > 1 ? 1.0 : 0.0;
    f.x_hi = n > 1 ? (double)n : 2.0;
    if (f.right - f.left < 40 || f.bottom - f.top < 40) return; /* no room: leave it blank */

    draw_title(c, x0 + panel_w / 2, 10, panel->title ? panel->title : "", title_px);
    draw_y_ticks(c, &f);
    draw_x_ticks(c, &f, n);
    canvas_outline_rect(c, f.left, f.top, f.right, f.bottom, COLOR_AXIS);
    if (panel->x_label) {
        int w = text_width(panel->x_label, px);
        draw_text(c, (f.left + f.right - w) / 2, f.bottom + 7 + f.line + 8, panel->x_label, px, COLOR_TEXT, 0);
    }
    if (panel->y_label) {
        int w = text_width(panel->y_label, px);
        draw_text(c, x0 + 8, (f.top + f.bottom + w) / 2, panel->y_label, px, COLOR_TEXT, 1);
    }
    if (has_mark(panel)) draw_mark(c, &f, panel->mark_epoch);
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
    int panel_w = width / n_panels, big = panel_w >= 320 && height >= 280;
    for (int p = 0; p < n_panels; p++)
        draw_panel(&canvas, &panels[p], p * panel_w, panel_w, big ? TEXT_PX : SMALL_TEXT_PX,
                   big ? TITLE_PX : SMALL_TITLE_PX);
    int rc = canvas_write_png(&canvas, path, err, errlen);
    canvas_free(&canvas);
    return rc;
}

/* ---- the terminal chart ---- */

static const char SERIES_GLYPHS[] = "*o+x#%";

static char series_glyph(int s) {
    return SERIES_GLYPHS[s % (int)(sizeof SERIES_GLYPHS - 1)];
}

/* The text column of epoch e (1..n) in a chart width columns wide. */
static int text_column(int e, int n, int width) {
    return n > 1 ? (int)lround((double)(e - 1) / (n - 1) * (width - 1)) : width / 2;
}

/* Marks each series on a width x height character grid; the columns
 * between two epochs are filled by linear interpolation. A cell that
 * another series already holds becomes PLOT_TEXT_OVERLAP, so neither
 * hides the other. Returns whether any cell did. */
static int text_plot_series(char *grid, int width, int height, const PlotPanel *panel, const Axis *y) {
    int n = longest_series(panel), overlap = 0;
    signed char *owner = malloc((size_t)width * height); /* series index + 1 of each cell, 0 none */
    if (!owner) return 0;
    memset(owner, 0, (size_t)width * height);
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
                size_t cell = (size_t)(pos > 0 ? (int)lround(pos < height - 1 ? pos : height - 1) : 0) * width + col;
                int mine = s % 100 + 1;
                if (owner[cell] && owner[cell] != mine) {
                    grid[cell] = PLOT_TEXT_OVERLAP;
                    overlap = 1;
                } else {
                    grid[cell] = series_glyph(s);
                }
                owner[cell] = (signed char)(owner[cell] && owner[cell] != mine ? -1 : mine);
            }
        }
    }
    free(owner);
    return overlap;
}

/* Epoch numbers under their columns (ticks.h: 1, the last, round numbers
 * between), skipping any that would touch its neighbour. Fills line
 * (width characters). */
static void text_epoch_numbers(char *line, int width, int n) {
    char num[16];
    int last = n > 1 ? n : 1, free_from = 0, ticks[MAX_EPOCH_TICKS];
    int last_len = snprintf(num, sizeof num, "%d", last);
    int last_start = text_column(last, n, width) - last_len + 1;
    if (last_start < 0) last_start = 0;
    if (last_start + last_len <= width) memcpy(line + last_start, num, (size_t)last_len);
    int count = ticks_epochs(last, width / (last_len + 1), ticks, MAX_EPOCH_TICKS);
    for (int k = 0; k < count && ticks[k] < last; k++) {
        int e = ticks[k], len = snprintf(num, sizeof num, "%d", e);
        int start = text_column(e, n, width) - (e == 1 ? 0 : len / 2);
        if (start < free_from || start + len + 1 > last_start) continue;
        memcpy(line + start, num, (size_t)len);
        free_from = start + len + 1;
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
    int overlap = text_plot_series(grid, width, height, panel, &y);
    int label_w = 0; /* y numbers on the rows nearest to each tick value */
    for (int r = 0; r < height; r++) labels[r][0] = '\0';
    for (int k = 0; k <= tick_count(&y); k++) {
        double v = y.lo + k * y.step;
        int row = (int)lround((y.hi - v) / (y.hi - y.lo) * (height - 1));
        if (row < 0 || row >= height) continue;
        ticks_format(labels[row], sizeof labels[row], v, y.step);
        if ((int)strlen(labels[row]) > label_w) label_w = (int)strlen(labels[row]);
    }
    if (panel->title) fprintf(out, "%s\n", panel->title);
    for (int r = 0; r < height; r++) fprintf(out, "%*s |%.*s\n", label_w, labels[r], width, grid + (size_t)r * width);
    fprintf(out, "%*s +", label_w, "");
    for (int col = 0; col < width; col++) fputc('-', out);
    memset(grid, ' ', (size_t)width);
    text_epoch_numbers(grid, width, longest_series(panel));
    fprintf(out, "\n%*s  %.*s  %s\n%*s  ", label_w, "", width, grid, panel->x_label ? panel->x_label : "", label_w, "");
    char buf[32];
    for (int s = 0; s < panel->n_series; s++)
        fprintf(out, "%s%c %s", s ? "   " : "", series_glyph(s), series_name(&panel->series[s], s, buf, sizeof buf));
    if (overlap)
        fprintf(out, "   %c %s in one cell", PLOT_TEXT_OVERLAP, panel->n_series == 2 ? "both" : "two or more");
    fputc('\n', out);
    free(grid);
}
