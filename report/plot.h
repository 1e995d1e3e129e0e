/* plot.h: PNG line charts and heatmaps (stb_image_write; text through
 * report/font.h: DejaVu Sans, any Unicode the font covers) and small text
 * charts for the terminal. Knows nothing of training. */
#ifndef PLOT_H
#define PLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Colours used for train and validation series (0xRRGGBB), fixed so tests
 * can look for them. */
#define PLOT_COLOR_TRAIN 0x1F77B4u
#define PLOT_COLOR_VAL   0xFF7F0Eu
#define PLOT_COLOR_3     0x2CA02Cu
#define PLOT_COLOR_4     0xD62728u
#define PLOT_COLOR_MARK  0x9467BDu /* a panel's marked epoch (the restored best) */

/* The heatmap colour maps' ends: sequential white to dark blue (low to
 * high); diverging blue (-max |value|) through white (0) to red (+max). */
#define PLOT_SEQUENTIAL_LOW  0xF7FBFFu
#define PLOT_SEQUENTIAL_HIGH 0x08306Bu
#define PLOT_DIVERGING_NEG   0x2166ACu
#define PLOT_DIVERGING_ZERO  0xFFFFFFu
#define PLOT_DIVERGING_POS   0xB2182Bu

/* The marker that the text chart puts where two series share a cell. */
#define PLOT_TEXT_OVERLAP '@'

typedef struct {
    const char *name;        /* legend text */
    const double *y;         /* y[i] at x = i + 1 (epochs count from 1); NaN = gap */
    int n;
    uint32_t color;
    int dashed;
} PlotSeries;

typedef struct {
    const char *title;
    const char *x_label;
    const char *y_label;
    const PlotSeries *series;
    int n_series;
    int mark_epoch;          /* > 0: a dashed vertical line at this epoch (PNG only) */
    const char *mark_label;  /* its legend text */
} PlotPanel;

/* Panels side by side in one PNG of width x height pixels, each with axes,
 * numbered ticks (the first and last epoch always), axis labels, title and
 * legend. Atomic write. Returns 0, or -1 with a message. */
int plot_panels_png(const char *path, const PlotPanel *panels, int n_panels, int width, int height,
                    char *err, size_t errlen);

typedef enum { PLOT_MAP_SEQUENTIAL, PLOT_MAP_DIVERGING } PlotColormap;

/* The colour of t: sequential t in [0, 1] (low to high); diverging t in
 * [-1, 1] (negative blue, 0 white, positive red). Clamped; NaN as 0. */
uint32_t plot_colormap(PlotColormap map, double t);

typedef struct {
    const float *values;      /* (rows, cols) */
    int rows, cols;
    const char *const *row_labels, *const *col_labels; /* NULL: indices */
    const char *title;
    const char *row_title, *col_title; /* axis titles (left, bottom), NULL for none */
    PlotColormap colormap;    /* sequential: min..max; diverging: -m..m, m = max |value| */
    const float *cell_numbers; /* written in the cells where they fit instead of values (NULL: values), e.g. the
                                  counts behind shares; then also in grids of more than 12 a side */
    const char *bar_title;    /* what the colour bar measures, written along it (NULL: nothing) */
    int unit_scale;           /* 1: the sequential scale is 0..1 (shares), not the values' min..max */
} PlotHeatmap;

/* A labelled heatmap with a colour bar. Size is chosen from the grid and
 * returned in *width_out and *height_out when non-NULL. Atomic write.
 * Returns 0, or -1 with a message. */
int plot_heatmap(const char *path, const PlotHeatmap *map, int *width_out, int *height_out, char *err,
                 size_t errlen);
/* plot_heatmap with the sequential map and no axis titles. */
int plot_heatmap_png(const char *path, const float *values, int rows, int cols,
                     const char *const *row_labels, const char *const *col_labels, const char *title,
                     int *width_out, int *height_out, char *err, size_t errlen);

/* Heatmaps of one size side by side (rows of at most 6), one colour scale
 * for all: e.g. one attention head at each epoch. values holds n_panels
 * grids of (rows, cols); labels name both the rows and the columns. */
typedef struct {
    const float *values;
    int n_panels, rows, cols;
    const char *const *labels;        /* (rows == cols) or NULL: indices */
    const char *const *panel_titles;  /* (n_panels) or NULL */
    const char *title;
} PlotStrip;
/* Atomic write. Returns 0, or -1 with a message. */
int plot_heatmap_strip(const char *path, const PlotStrip *strip, char *err, size_t errlen);

/* A text line chart of the series (like the PNG panel) in width x height
 * cells; a cell two series share shows PLOT_TEXT_OVERLAP, and the legend
 * then says so. */
void plot_text_chart(FILE *out, const PlotPanel *panel, int width, int height);
/* A text heatmap: one shade character per cell, values in [0, 1]. Labels
 * are printed as given (UTF-8, laid out by display columns, base/utf8.h):
 * the caller makes them what the terminal can show. */
void plot_text_heatmap(FILE *out, const float *values, int rows, int cols,
                       const char *const *row_labels, const char *const *col_labels);

#endif
