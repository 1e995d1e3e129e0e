/* test_plot.c: curves and heatmaps written to a temp dir and decoded back
 * (size, exact series colours, not blank, NaN gaps, one epoch, size bound),
 * error paths, and the terminal charts' shape. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include "stb_image.h"
#pragma GCC diagnostic pop

#include "tests/check.h"
#include "report/plot.h"

typedef struct {
    int w, h;
    unsigned char *rgb;
} Image;

static Image load_png(const char *path) {
    Image im = {0, 0, NULL};
    int comp = 0;
    im.rgb = stbi_load(path, &im.w, &im.h, &comp, 3);
    return im;
}

/* Pixels of exactly color inside columns [x0, x1). */
static long count_color(const Image *im, uint32_t color, int x0, int x1) {
    long n = 0;
    for (int y = 0; y < im->h; y++)
        for (int x = x0; x < x1 && x < im->w; x++) {
            const unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            n += p[0] == ((color >> 16) & 0xFF) && p[1] == ((color >> 8) & 0xFF) && p[2] == (color & 0xFF);
        }
    return n;
}

static long count_non_white(const Image *im) {
    long n = 0;
    for (size_t i = 0; i < (size_t)im->w * im->h; i++)
        n += !(im->rgb[3 * i] == 255 && im->rgb[3 * i + 1] == 255 && im->rgb[3 * i + 2] == 255);
    return n;
}

/* Mean row of the pixels of color within columns [x0, x1), -1 if none. */
static double mean_row(const Image *im, uint32_t color, int x0, int x1) {
    double sum = 0;
    long n = 0;
    for (int y = 0; y < im->h; y++)
        for (int x = x0; x < x1 && x < im->w; x++) {
            const unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            if (p[0] == ((color >> 16) & 0xFF) && p[1] == ((color >> 8) & 0xFF) && p[2] == (color & 0xFF))
                sum += y, n++;
        }
    return n ? sum / n : -1;
}

static char tmp_dir[] = "/tmp/test_plot_XXXXXX";

static const char *tmp_path(const char *name, char *buf, size_t size) {
    snprintf(buf, size, "%s/%s", tmp_dir, name);
    return buf;
}

enum { EPOCHS = 30 };

static void make_curves(double *train_loss, double *val_loss, double *train_acc, double *val_acc) {
    for (int i = 0; i < EPOCHS; i++) {
        train_loss[i] = 1.4 * exp(-i / 6.0) + 0.05;
        val_loss[i] = 1.3 * exp(-i / 7.0) + 0.2 + 0.0005 * i * i;
        train_acc[i] = 1 - 0.6 * exp(-i / 5.0);
        val_acc[i] = 0.95 - 0.55 * exp(-i / 6.0);
    }
}

static void test_curves(void) {
    char path[256], err[256] = "";
    double tl[EPOCHS], vl[EPOCHS], ta[EPOCHS], va[EPOCHS];
    make_curves(tl, vl, ta, va);
    PlotSeries loss[2] = {{"train", tl, EPOCHS, PLOT_COLOR_TRAIN, 0}, {"val", vl, EPOCHS, PLOT_COLOR_VAL, 0}};
    PlotSeries acc[2] = {{"train", ta, EPOCHS, PLOT_COLOR_TRAIN, 0}, {"val", va, EPOCHS, PLOT_COLOR_VAL, 1}};
    PlotPanel panels[2] = {{"Loss", "epoch", "loss", loss, 2}, {"Accuracy", "epoch", "accuracy", acc, 2}};
    int rc = plot_panels_png(tmp_path("curves.png", path, sizeof path), panels, 2, 1000, 420, err, sizeof err);
    CHECK(rc == 0, "plot_panels_png: %s", err);
    Image im = load_png(path);
    CHECK(im.rgb && im.w == 1000 && im.h == 420, "decoded %dx%d", im.w, im.h);
    if (!im.rgb) return;
    long train_left = count_color(&im, PLOT_COLOR_TRAIN, 0, 500);
    long train_right = count_color(&im, PLOT_COLOR_TRAIN, 500, 1000);
    long val_left = count_color(&im, PLOT_COLOR_VAL, 0, 500);
    long val_right = count_color(&im, PLOT_COLOR_VAL, 500, 1000);
    /* a 2 px line across ~400 px of plot is well over 500 pixels */
    CHECK(train_left > 500 && train_right > 500, "train pixels %ld %ld", train_left, train_right);
    CHECK(val_left > 500 && val_right > 300, "val pixels %ld %ld (val acc dashed)", val_left, val_right);
    CHECK(val_right < val_left, "the dashed series draws fewer pixels (%ld vs %ld)", val_right, val_left);
    long ink = count_non_white(&im);
    CHECK(ink > 15000 && ink < 1000L * 420 / 2, "non-white pixels %ld", ink);
    /* Falling loss: the train line sits higher (smaller y) in the panel's
     * left part than in its right part; rising accuracy the other way. */
    double loss_start = mean_row(&im, PLOT_COLOR_TRAIN, 80, 200), loss_end = mean_row(&im, PLOT_COLOR_TRAIN, 300, 480);
    double acc_start = mean_row(&im, PLOT_COLOR_TRAIN, 580, 680), acc_end = mean_row(&im, PLOT_COLOR_TRAIN, 800, 980);
    CHECK(loss_start > 0 && loss_end > loss_start + 50, "loss rows %.0f -> %.0f", loss_start, loss_end);
    CHECK(acc_start > 0 && acc_end < acc_start - 30, "accuracy rows %.0f -> %.0f", acc_start, acc_end);
    stbi_image_free(im.rgb);
}

/* One panel, one series, optionally cut by NaN; returns its colour pixels. */
static long series_pixels(const char *name, const double *y, int n, int *ok) {
    char path[256], err[256] = "";
    PlotSeries s = {"val", y, n, PLOT_COLOR_VAL, 0};
    PlotPanel panel = {"Val loss", "epoch", "loss", &s, 1};
    *ok = plot_panels_png(tmp_path(name, path, sizeof path), &panel, 1, 600, 400, err, sizeof err) == 0;
    CHECK(*ok, "%s: %s", name, err);
    Image im = load_png(path);
    CHECK(im.rgb && im.w == 600 && im.h == 400, "%s decoded %dx%d", name, im.w, im.h);
    if (!im.rgb) return -1;
    long n_px = count_color(&im, PLOT_COLOR_VAL, 0, im.w);
    stbi_image_free(im.rgb);
    return n_px;
}

static void test_gaps_and_single_epoch(void) {
    int ok;
    double full[11], gappy[11], all_nan[4] = {NAN, NAN, INFINITY, NAN};
    for (int i = 0; i < 11; i++) full[i] = gappy[i] = 1.0 / (i + 1);
    gappy[5] = NAN; /* removes the segments 5-6 and 6-7: ~2 x 50 px x 2 px */
    long n_full = series_pixels("full.png", full, 11, &ok);
    long n_gappy = series_pixels("gappy.png", gappy, 11, &ok);
    CHECK(n_full > 0 && n_gappy > 0 && n_gappy < n_full - 100, "NaN gap: %ld vs %ld pixels", n_gappy, n_full);
    long n_nan = series_pixels("nan.png", all_nan, 4, &ok);
    long n_empty = series_pixels("empty.png", full, 0, &ok); /* legend only */
    CHECK(n_nan >= 0 && n_nan == n_empty, "all-NaN series draws only its legend (%ld vs %ld)", n_nan, n_empty);
    /* one epoch: a marker must show beyond the legend swatch */
    long n_one = series_pixels("one.png", full, 1, &ok);
    CHECK(n_one > n_empty + 15, "single epoch visible: %ld vs legend %ld", n_one, n_empty);
    /* an isolated point between gaps is visible too */
    double island[5] = {NAN, NAN, 0.5, NAN, NAN};
    long n_island = series_pixels("island.png", island, 5, &ok);
    CHECK(n_island > n_empty + 15, "isolated point visible: %ld vs legend %ld", n_island, n_empty);
    /* extreme magnitudes: no crash, no hang, something drawn */
    double huge[4] = {1e308, -1e308, 5, INFINITY}, tiny[3] = {1e-300, 2e-300, -1e-300};
    long n_huge = series_pixels("huge.png", huge, 4, &ok);
    long n_tiny = series_pixels("tiny.png", tiny, 3, &ok);
    CHECK(n_huge > n_empty && n_tiny > n_empty, "extreme values drawn: %ld %ld", n_huge, n_tiny);
    double near_equal[2] = {1e17, 1e17 + 64};
    CHECK(series_pixels("near.png", near_equal, 2, &ok) > n_empty, "values a few ulps apart");
    /* many epochs and flat values do not break the axis */
    enum { LONG = 500 };
    double flat[LONG];
    for (int i = 0; i < LONG; i++) flat[i] = 0.25;
    long n_flat = series_pixels("flat.png", flat, LONG, &ok);
    CHECK(n_flat > 600, "flat long series drawn: %ld", n_flat);
}

static void test_heatmaps(void) {
    char path[256], err[256] = "";
    int w = 0, h = 0;
    /* confusion counts, small grid with labels */
    float cm[9] = {50, 2, 0, 3, 45, 1, 10, 0, 0};
    static const char *const labels[3] = {"negative", "positive", "rare"};
    int rc = plot_heatmap_png(tmp_path("confusion.png", path, sizeof path), cm, 3, 3, labels, labels,
                              "Confusion matrix", &w, &h, err, sizeof err);
    CHECK(rc == 0, "confusion heatmap: %s", err);
    Image im = load_png(path);
    CHECK(im.rgb && im.w == w && im.h == h && w >= 200 && h >= 200, "confusion %dx%d (reported %dx%d)", im.w, im.h,
          w, h);
    if (im.rgb) {
        /* the largest count gets the colormap's darkest blue, zero its lightest */
        CHECK(count_color(&im, 0x08306Bu, 0, im.w) > 500, "darkest cell present");
        CHECK(count_color(&im, 0xF7FBFFu, 0, im.w) > 500, "lightest cells present");
        CHECK(count_non_white(&im) > 10000, "not blank");
        stbi_image_free(im.rgb);
    }

    /* positional-encoding-like table: 100 x 512, no labels, bounded size */
    int rows = 100, cols = 512;
    float *pe = malloc(sizeof *pe * rows * cols);
    if (!pe) return;
    for (int p = 0; p < rows; p++)
        for (int i = 0; i < cols; i++) {
            double freq = pow(10000.0, -(double)(i / 2 * 2) / cols);
            pe[p * cols + i] = (float)(i % 2 ? cos(p * freq) : sin(p * freq));
        }
    pe[7] = NAN; /* a NaN cell must not break the range */
    rc = plot_heatmap_png(tmp_path("pe.png", path, sizeof path), pe, rows, cols, NULL, NULL, "Positional encoding",
                          &w, &h, err, sizeof err);
    CHECK(rc == 0, "PE heatmap: %s", err);
    im = load_png(path);
    CHECK(im.rgb && im.w == w && im.h == h, "PE decoded %dx%d, reported %dx%d", im.w, im.h, w, h);
    CHECK(w <= 2000 && h <= 2000 && w >= 512 && h >= 200, "PE size %dx%d within bounds", w, h);
    if (im.rgb) {
        CHECK(count_non_white(&im) > (long)w * h / 4, "PE mostly coloured");
        stbi_image_free(im.rgb);
    }
    free(pe);

    /* attention-like T x T with token labels; also huge grids are sampled */
    if (!getenv("CHECK_QUICK")) {
        int big = 3000;
        float *values = calloc((size_t)big * 4, sizeof *values);
        if (values) {
            rc = plot_heatmap_png(tmp_path("wide.png", path, sizeof path), values, 4, big, NULL, NULL, "wide", &w,
                                  &h, err, sizeof err);
            CHECK(rc == 0 && w <= 2000 && h <= 2000, "4x3000 heatmap %dx%d: %s", w, h, err);
            free(values);
        }
    }
    float att[64 * 64];
    const char *tokens[64];
    char names[64][16];
    for (int i = 0; i < 64; i++) {
        snprintf(names[i], sizeof names[i], "tok%d", i);
        tokens[i] = names[i];
        for (int j = 0; j < 64; j++) att[i * 64 + j] = (float)exp(-fabs((double)(i - j)));
    }
    rc = plot_heatmap_png(tmp_path("attention.png", path, sizeof path), att, 64, 64, tokens, tokens, NULL, &w, &h,
                          err, sizeof err);
    CHECK(rc == 0 && w <= 2000 && h <= 2000 && w > 600, "attention %dx%d: %s", w, h, err);
}

static void test_errors_and_atomicity(void) {
    char path[256], err[256] = "";
    double y[3] = {1, 2, 3};
    PlotSeries s = {"train", y, 3, PLOT_COLOR_TRAIN, 0};
    PlotPanel panel = {"Loss", "epoch", "loss", &s, 1};
    err[0] = '\0';
    CHECK(plot_panels_png("/nonexistent-dir/x/curves.png", &panel, 1, 600, 400, err, sizeof err) == -1,
          "missing directory fails");
    CHECK(err[0] != '\0', "with a message");
    err[0] = '\0';
    CHECK(plot_panels_png(tmp_path("tiny.png", path, sizeof path), &panel, 1, 10, 10, err, sizeof err) == -1 &&
              err[0],
          "absurd size refused");
    CHECK(plot_panels_png(tmp_path("none.png", path, sizeof path), &panel, 0, 600, 400, err, sizeof err) == -1,
          "no panels refused");
    float v[4] = {0, 1, 2, 3};
    CHECK(plot_heatmap_png(tmp_path("bad.png", path, sizeof path), v, 0, 4, NULL, NULL, "t", NULL, NULL, err,
                           sizeof err) == -1,
          "empty heatmap refused");
    /* labels with non-ASCII bytes are drawn as '?' without trouble */
    static const char *const odd[2] = {"caf\xc3\xa9", "\xff\xfe"};
    CHECK(plot_heatmap_png(tmp_path("odd.png", path, sizeof path), v, 2, 2, odd, odd, "t\xc3\xa9st", NULL, NULL, err,
                           sizeof err) == 0,
          "odd labels: %s", err);
    /* rewriting a file replaces it; no temporary files stay behind */
    CHECK(plot_panels_png(tmp_path("curves.png", path, sizeof path), &panel, 1, 600, 400, err, sizeof err) == 0,
          "rewrite: %s", err);
    DIR *dir = opendir(tmp_dir);
    int stray = 0;
    struct dirent *entry;
    while (dir && (entry = readdir(dir))) {
        const char *dot = strrchr(entry->d_name, '.');
        if (entry->d_name[0] != '.' && (!dot || strcmp(dot, ".png") != 0)) stray++;
    }
    if (dir) closedir(dir);
    CHECK(stray == 0, "%d stray non-PNG files in %s", stray, tmp_dir);
}

static char *capture_chart(const PlotPanel *panel, int width, int height) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (!f) return NULL;
    plot_text_chart(f, panel, width, height);
    fclose(f);
    return text;
}

static int count_lines(const char *s) {
    int n = 0;
    for (; s && *s; s++) n += *s == '\n';
    return n;
}

static void test_text_charts(void) {
    double tl[EPOCHS], vl[EPOCHS], ta[EPOCHS], va[EPOCHS];
    make_curves(tl, vl, ta, va);
    vl[10] = NAN;
    PlotSeries loss[2] = {{"train", tl, EPOCHS, PLOT_COLOR_TRAIN, 0}, {"val", vl, EPOCHS, PLOT_COLOR_VAL, 0}};
    PlotPanel panel = {"Loss", "epoch", "loss", loss, 2};
    /* title + height rows + axis + epoch numbers + legend */
    char *text = capture_chart(&panel, 60, 12);
    CHECK(text && count_lines(text) == 12 + 4, "chart lines %d:\n%s", count_lines(text), text ? text : "");
    CHECK(text && strncmp(text, "Loss\n", 5) == 0, "title first");
    CHECK(text && strstr(text, "* train") && strstr(text, "o val"), "legend:\n%s", text ? text : "");
    CHECK(text && strstr(text, "1.5") && strstr(text, "0.0"), "y numbers:\n%s", text ? text : "");
    CHECK(text && strstr(text, " 30  epoch"), "last epoch and x label:\n%s", text ? text : "");
    /* the first train point (highest loss) is on the top row, first column */
    const char *row1 = text ? strchr(text, '\n') + 1 : NULL;
    const char *bar = row1 ? strchr(row1, '|') : NULL;
    CHECK(bar && (bar[1] == '*' || bar[1] == 'o'), "top-left point:\n%s", text ? text : "");
    free(text);

    double huge[3] = {1e308, -1e308, NAN};
    PlotSeries extreme = {"x", huge, 3, PLOT_COLOR_TRAIN, 0};
    PlotPanel wild = {"wild", NULL, NULL, &extreme, 1};
    text = capture_chart(&wild, 30, 6);
    CHECK(text && count_lines(text) == 6 + 4, "extreme chart lines %d:\n%s", count_lines(text), text ? text : "");
    free(text);

    PlotPanel untitled = {NULL, NULL, NULL, loss, 1};
    loss[0].n = 1;
    text = capture_chart(&untitled, 20, 5);
    CHECK(text && count_lines(text) == 5 + 3, "one-epoch chart lines %d:\n%s", count_lines(text), text ? text : "");
    CHECK(text && strchr(text, '*'), "one-epoch point drawn:\n%s", text ? text : "");
    free(text);

    /* text heatmap: 3 rows, index header (no column labels) and scale line */
    float v[6] = {0.0f, 0.5f, 1.0f, 1.0f, NAN, 0.0f};
    static const char *const rows[2] = {"first", "second"};
    char *heat = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&heat, &size);
    if (f) {
        plot_text_heatmap(f, v, 2, 3, rows, NULL);
        fclose(f);
    }
    CHECK(heat && count_lines(heat) == 2 + 2, "heatmap lines %d:\n%s", count_lines(heat), heat ? heat : "");
    CHECK(heat && strstr(heat, " first |  ++@@\n"), "shades of row 1:\n%s", heat ? heat : "");
    CHECK(heat && strstr(heat, "second |@@??  \n"), "shades of row 2 (NaN '?'):\n%s", heat ? heat : "");
    free(heat);
}

static void remove_tmp_dir(void) {
    DIR *dir = opendir(tmp_dir);
    struct dirent *entry;
    char path[512];
    while (dir && (entry = readdir(dir))) {
        if (entry->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", tmp_dir, entry->d_name);
        unlink(path);
    }
    if (dir) closedir(dir);
    rmdir(tmp_dir);
}

int main(void) {
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    test_curves();
    test_gaps_and_single_epoch();
    test_heatmaps();
    test_errors_and_atomicity();
    test_text_charts();
    remove_tmp_dir();
    return check_summary("test_plot");
}
