/* plot.h: PNG charts and heatmaps (stb_image_write, text with stb_easy_font)
 * and small text charts for the terminal. Knows nothing of training. */
#ifndef PLOT_H
#define PLOT_H

#include <stdint.h>
#include <stdio.h>

/* Colours used for train and validation series (0xRRGGBB), fixed so tests
 * can look for them. */
#define PLOT_COLOR_TRAIN 0x1F77B4u
#define PLOT_COLOR_VAL   0xFF7F0Eu
#define PLOT_COLOR_3     0x2CA02Cu
#define PLOT_COLOR_4     0xD62728u

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
} PlotPanel;

/* Panels side by side in one PNG of width x height pixels, each with axes,
 * numbered ticks, axis labels, title and legend. Atomic write.
 * Returns 0, or -1 with a message. */
int plot_panels_png(const char *path, const PlotPanel *panels, int n_panels, int width, int height,
                    char *err, size_t errlen);

/* A labelled heatmap of values (rows, cols) with a colour scale. Labels may be
 * NULL (then indices are drawn). Size is chosen from the grid and returned in
 * *width_out and *height_out when non-NULL. Atomic write. */
int plot_heatmap_png(const char *path, const float *values, int rows, int cols,
                     const char *const *row_labels, const char *const *col_labels, const char *title,
                     int *width_out, int *height_out, char *err, size_t errlen);

/* A text line chart of the series (like the PNG panel) in width x height cells. */
void plot_text_chart(FILE *out, const PlotPanel *panel, int width, int height);
/* A text heatmap: one shade character per cell, values in [0, 1]. */
void plot_text_heatmap(FILE *out, const float *values, int rows, int cols,
                       const char *const *row_labels, const char *const *col_labels);

#endif
