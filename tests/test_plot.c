/* test_plot.c: curves and heatmaps written to a temp dir and decoded back
 * (size, exact series colours, not blank, NaN gaps, one epoch, size bound,
 * the marked best epoch, the diverging colour map), text through the
 * TrueType font (non-ASCII unlike '?', missing glyphs as a box,
 * antialiased, the bitmap fallback), the epoch ticks, error paths, and the
 * terminal charts' shape and overlap marker. */
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
#include "report/canvas.h"
#include "report/classreport.h"
#include "report/font.h"
#include "report/plot.h"
#include "report/ticks.h"

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
    PlotPanel panels[2] = {{"Loss", "epoch", "loss", loss, 2, 0, NULL},
                           {"Accuracy", "epoch", "accuracy", acc, 2, 0, NULL}};
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
    PlotPanel panel = {"Val loss", "epoch", "loss", &s, 1, 0, NULL};
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

/* The colour 4 px inside the top left corner of cell (r, c) of an n x n
 * grid: the grid found by its outline, the first row of 100 or more
 * 0x555555 pixels in a line (the colour bar's is 18 wide). 0 if not found. */
static uint32_t grid_cell_color(const Image *im, int n, int r, int c) {
    for (int y = 0; y < im->h; y++)
        for (int x = 0, run = 0; x < im->w; x++) {
            const unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            run = p[0] == 0x55 && p[1] == 0x55 && p[2] == 0x55 ? run + 1 : 0;
            if (run < 100 || (x + 1 < im->w && p[3] == 0x55 && p[4] == 0x55 && p[5] == 0x55)) continue;
            int gx = x - run + 2, cell = (run - 2) / n;   /* the outline is 1 px outside the grid */
            const unsigned char *q = im->rgb + ((size_t)(y + 1 + r * cell + 4) * im->w + gx + c * cell + 4) * 3;
            return (uint32_t)q[0] << 16 | (uint32_t)q[1] << 8 | q[2];
        }
    return 0;
}

/* confusion.png colours a cell by its share of its row (recall on the
 * diagonal): a rare class always right has the darkest diagonal cell, one
 * always wrong the lightest, though its 3 examples are few beside 900 */
static void test_confusion_shares(void) {
    enum { COMMON = 900, RARE = 3, N = 2 * COMMON + RARE };
    static int truth[N], right[N], wrong[N];
    for (int i = 0; i < N; i++) {
        truth[i] = i < COMMON ? 0 : i < 2 * COMMON ? 1 : 2;
        right[i] = i % 9 == 0 && truth[i] < 2 ? 1 - truth[i] : truth[i];   /* the common classes 8 of 9 right */
        wrong[i] = truth[i] == 2 ? 0 : right[i];
    }
    static const char *const names[3] = {"common", "other", "rare"};
    const int *predicted[2] = {right, wrong};
    uint32_t diagonal[2] = {0, 0}, row_total[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char path[256], err[256] = "";
        ClassReport rep;
        CHECK(classreport_compute(&rep, truth, predicted[k], N, 3) == 0, "classreport_compute");
        int rc = classreport_confusion_png(&rep, names, "test", tmp_path(k ? "cm-wrong.png" : "cm-right.png", path,
                                           sizeof path), err, sizeof err);
        CHECK(rc == 0, "confusion png: %s", err);
        classreport_free(&rep);
        Image im = load_png(path);
        if (!im.rgb) continue;
        diagonal[k] = grid_cell_color(&im, 3, 2, 2);
        row_total[k] = grid_cell_color(&im, 3, 2, 0);
        stbi_image_free(im.rgb);
    }
    CHECK(diagonal[0] == PLOT_SEQUENTIAL_HIGH && diagonal[1] == PLOT_SEQUENTIAL_LOW,
          "the rare class's diagonal cell: %06X when always right (want the darkest, %06X), %06X when always wrong "
          "(want the lightest, %06X)", (unsigned)diagonal[0], (unsigned)PLOT_SEQUENTIAL_HIGH, (unsigned)diagonal[1],
          (unsigned)PLOT_SEQUENTIAL_LOW);
    CHECK(row_total[1] == PLOT_SEQUENTIAL_HIGH, "the rare class all predicted 'common': that cell %06X, want %06X",
          (unsigned)row_total[1], (unsigned)PLOT_SEQUENTIAL_HIGH);
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
    PlotPanel panel = {"Loss", "epoch", "loss", &s, 1, 0, NULL};
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
    /* labels with non-ASCII characters and invalid UTF-8 are drawn without trouble */
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

/* ---- text ---- */

/* s drawn alone at size px on a 120 x 40 canvas, written as PNG and
 * decoded back (the image is what a viewer sees). */
static Image text_png(Font *font, const char *name, const char *s, int px) {
    char path[256], err[256] = "";
    Image im = {0, 0, NULL};
    Canvas c;
    if (canvas_init(&c, 120, 40) != 0) return im;
    font_draw(&c, font, 10, 8, s, px, 0x000000u, 0);
    int rc = canvas_write_png(&c, tmp_path(name, path, sizeof path), err, sizeof err);
    canvas_free(&c);
    CHECK(rc == 0, "%s: %s", name, err);
    return rc == 0 ? load_png(path) : im;
}

static int same_pixels(const Image *a, const Image *b) {
    return a->rgb && b->rgb && a->w == b->w && a->h == b->h && memcmp(a->rgb, b->rgb, (size_t)a->w * a->h * 3) == 0;
}

/* The topmost row with ink (non-white), or -1 when blank. */
static int top_ink_row(const Image *im) {
    for (int y = 0; im->rgb && y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            const unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            if (p[0] != 255 || p[1] != 255 || p[2] != 255) return y;
        }
    return -1;
}

/* Pixels strictly between ink and paper: antialiasing. */
static long grey_pixels(const Image *im) {
    long n = 0;
    for (size_t i = 0; im->rgb && i < (size_t)im->w * im->h; i++) n += im->rgb[3 * i] > 20 && im->rgb[3 * i] < 235;
    return n;
}

static void test_text(void) {
    char err[256] = "";
    Font *font = font_default();
    CHECK(font_is_truetype(font), "no TrueType font (%s): install fonts-dejavu-core, or set TRAIN_FONT",
          font_source(font));
    if (!font_is_truetype(font)) return;
    Image e_acute = text_png(font, "e_acute.png", "\xc3\xa9", 30), question = text_png(font, "question.png", "?", 30);
    Image plain_e = text_png(font, "plain_e.png", "e", 30);
    Image decomposed = text_png(font, "decomposed.png", "e\xcc\x81", 30); /* e + combining acute */
    CHECK(count_non_white(&e_acute) > 50, "'\xc3\xa9' draws ink (%ld pixels)", count_non_white(&e_acute));
    CHECK(e_acute.rgb && question.rgb && !same_pixels(&e_acute, &question), "'\xc3\xa9' is not drawn as '?'");
    CHECK(!same_pixels(&e_acute, &plain_e), "'\xc3\xa9' differs from 'e'");
    CHECK(top_ink_row(&e_acute) >= 0 && top_ink_row(&e_acute) < top_ink_row(&plain_e) - 3,
          "the accent rises above the e (top rows %d vs %d)", top_ink_row(&e_acute), top_ink_row(&plain_e));
    CHECK(top_ink_row(&decomposed) < top_ink_row(&plain_e) - 3, "a combining accent is drawn over its letter");
    CHECK(grey_pixels(&e_acute) > 10, "antialiased edges (%ld grey pixels)", grey_pixels(&e_acute));
    /* a character the font lacks: its missing-glyph box, the same for any
     * such character, not '?' and not blank; invalid UTF-8 shows too */
    Image rocket = text_png(font, "rocket.png", "\xf0\x9f\x9a\x80", 30);
    Image han = text_png(font, "han.png", "\xe6\x97\xa5", 30);
    Image invalid = text_png(font, "invalid.png", "\xff", 30);
    CHECK(count_non_white(&rocket) > 50 && !same_pixels(&rocket, &question), "missing glyph is a visible box");
    CHECK(same_pixels(&rocket, &han), "every missing character shows the same box");
    CHECK(count_non_white(&invalid) > 50 && !same_pixels(&invalid, &question), "invalid UTF-8 is visible, not '?'");
    CHECK(font_text_width(font, "\xc3\xa9\xc3\xa9", 30) > font_text_width(font, "\xc3\xa9", 30),
          "a two-byte character advances once per character");
    CHECK(font_text_width(font, "a\xef\xb8\x8f", 30) == font_text_width(font, "a", 30),
          "a variation selector takes no room");
    /* the cache gives the same pixels the second time */
    Image again = text_png(font, "again.png", "\xc3\xa9", 30);
    CHECK(same_pixels(&again, &e_acute), "cached glyphs draw identically");
    Image *all[] = {&e_acute, &question, &plain_e, &decomposed, &rocket, &han, &invalid, &again};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) stbi_image_free(all[i]->rgb);

    /* the fallback: the bitmap font draws every non-ASCII character as '?' */
    Font *bitmap = font_open(NULL, err, sizeof err);
    CHECK(bitmap && !font_is_truetype(bitmap), "bitmap font opens");
    if (bitmap) {
        Image b_acute = text_png(bitmap, "b_acute.png", "\xc3\xa9", 20);
        Image b_question = text_png(bitmap, "b_q.png", "?", 20);
        CHECK(count_non_white(&b_acute) > 10 && same_pixels(&b_acute, &b_question), "bitmap font: '\xc3\xa9' as '?'");
        stbi_image_free(b_acute.rgb);
        stbi_image_free(b_question.rgb);
        font_close(bitmap);
    }
    err[0] = '\0';
    CHECK(font_open("/nonexistent/font.ttf", err, sizeof err) == NULL && strstr(err, "/nonexistent/font.ttf"),
          "missing font file refused: %s", err);
    char path[256];
    err[0] = '\0';
    CHECK(font_open(tmp_path("question.png", path, sizeof path), err, sizeof err) == NULL && strstr(err, "TrueType"),
          "a PNG is not a font: %s", err);

    /* through the plot API: a heatmap labelled "é" is not the one labelled "?" */
    float v[1] = {0.5f};
    static const char *const accent[1] = {"caf\xc3\xa9"}, *const ascii[1] = {"caf?"};
    int ok = plot_heatmap_png(tmp_path("label_acute.png", path, sizeof path), v, 1, 1, accent, accent, "t", NULL,
                              NULL, err, sizeof err) == 0;
    Image a = load_png(path);
    ok = ok && plot_heatmap_png(tmp_path("label_q.png", path, sizeof path), v, 1, 1, ascii, ascii, "t", NULL, NULL,
                                err, sizeof err) == 0;
    Image q = load_png(path);
    CHECK(ok && a.rgb && q.rgb && !same_pixels(&a, &q), "heatmap labels: '\xc3\xa9' unlike '?' (%s)", err);
    stbi_image_free(a.rgb);
    stbi_image_free(q.rgb);
}

/* ---- the diverging map ---- */

/* Mean column and row of the pixels of exactly color; 0 when none. */
static long color_center(const Image *im, uint32_t color, double *cx, double *cy) {
    double sx = 0, sy = 0;
    long n = 0;
    for (int y = 0; y < im->h; y++)
        for (int x = 0; x < im->w; x++) {
            const unsigned char *p = im->rgb + ((size_t)y * im->w + x) * 3;
            if (p[0] == ((color >> 16) & 0xFF) && p[1] == ((color >> 8) & 0xFF) && p[2] == (color & 0xFF))
                sx += x, sy += y, n++;
        }
    *cx = n ? sx / n : 0, *cy = n ? sy / n : 0;
    return n;
}

static void test_diverging(void) {
    CHECK(plot_colormap(PLOT_MAP_DIVERGING, -1) == PLOT_DIVERGING_NEG, "diverging -1: %06X",
          (unsigned)plot_colormap(PLOT_MAP_DIVERGING, -1));
    CHECK(plot_colormap(PLOT_MAP_DIVERGING, 0) == 0xFFFFFFu, "diverging 0 is white");
    CHECK(plot_colormap(PLOT_MAP_DIVERGING, 1) == PLOT_DIVERGING_POS, "diverging 1");
    uint32_t neg = plot_colormap(PLOT_MAP_DIVERGING, -0.5), pos = plot_colormap(PLOT_MAP_DIVERGING, 0.5);
    CHECK((neg & 0xFF) > (neg >> 16), "-0.5 is bluish: %06X", (unsigned)neg);
    CHECK((pos >> 16) > (pos & 0xFF), "0.5 is reddish: %06X", (unsigned)pos);
    CHECK(plot_colormap(PLOT_MAP_SEQUENTIAL, 0) == PLOT_SEQUENTIAL_LOW &&
              plot_colormap(PLOT_MAP_SEQUENTIAL, 1) == PLOT_SEQUENTIAL_HIGH,
          "sequential ends");

    /* a 1 x 3 map of -1, 0, 1: the cells in blue, white and red, from the PNG */
    char path[256], err[256] = "";
    float values[3] = {-1, 0, 1};
    PlotHeatmap map = {.values = values, .rows = 1, .cols = 3, .title = "pe", .row_title = "position",
                       .col_title = "dimension", .colormap = PLOT_MAP_DIVERGING};
    int w = 0, h = 0;
    CHECK(plot_heatmap(tmp_path("diverging.png", path, sizeof path), &map, &w, &h, err, sizeof err) == 0,
          "diverging heatmap: %s", err);
    Image im = load_png(path);
    CHECK(im.rgb && im.w == w && im.h == h, "diverging decoded");
    if (!im.rgb) return;
    double bx, by, rx, ry;
    long blue = color_center(&im, PLOT_DIVERGING_NEG, &bx, &by), red = color_center(&im, PLOT_DIVERGING_POS, &rx, &ry);
    /* cells are 72 px wide: well over 2000 pixels each (the colour bar adds a few) */
    CHECK(blue > 2000 && red > 2000, "blue %ld and red %ld pixels", blue, red);
    int mx = (int)lround(bx + (rx - bx) / 4), my = (int)lround((by + ry) / 2); /* the middle cell, away from the bar */
    const unsigned char *mid = im.rgb + ((size_t)my * im.w + mx) * 3;
    CHECK(bx < rx && mid[0] == 255 && mid[1] == 255 && mid[2] == 255, "0 is white at (%d, %d): %02X%02X%02X", mx, my,
          mid[0], mid[1], mid[2]);
    stbi_image_free(im.rgb);
    /* axis titles take room: the same map without them is smaller */
    map.row_title = map.col_title = NULL;
    int w2 = 0, h2 = 0;
    CHECK(plot_heatmap(tmp_path("untitled.png", path, sizeof path), &map, &w2, &h2, err, sizeof err) == 0 &&
              w2 < w && h2 <= h,
          "axis titles widen the picture: %dx%d vs %dx%d", w, h, w2, h2);
    /* the scale is symmetric: -0.5 with a maximum of 2 is light, not the darkest blue */
    float lopsided[2] = {-0.5f, 2.0f};
    PlotHeatmap l = {.values = lopsided, .rows = 1, .cols = 2, .colormap = PLOT_MAP_DIVERGING};
    CHECK(plot_heatmap(tmp_path("lopsided.png", path, sizeof path), &l, NULL, NULL, err, sizeof err) == 0, "%s", err);
    im = load_png(path);
    if (im.rgb) {
        CHECK(count_color(&im, plot_colormap(PLOT_MAP_DIVERGING, -0.25), 0, im.w) > 2000,
              "-0.5 of 2 has -0.25's colour");
        stbi_image_free(im.rgb);
    }
}

/* ---- epoch ticks ---- */

static int ticks_are(const int *ticks, int n, const int *want, int n_want) {
    if (n != n_want) return 0;
    for (int i = 0; i < n; i++)
        if (ticks[i] != want[i]) return 0;
    return 1;
}

static void test_epoch_ticks(void) {
    int t[512];
    int n = ticks_epochs(10, 14, t, 512);
    static const int ten[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    CHECK(ticks_are(t, n, ten, 10), "10 epochs with room: every epoch (%d ticks)", n);
    n = ticks_epochs(30, 14, t, 512);
    static const int thirty[7] = {1, 5, 10, 15, 20, 25, 30};
    CHECK(ticks_are(t, n, thirty, 7), "30 epochs: 1, 5, 10, ..., 30 (%d ticks, second %d)", n, n > 1 ? t[1] : 0);
    n = ticks_epochs(17, 10, t, 512);
    static const int seventeen[5] = {1, 5, 10, 15, 17};
    CHECK(ticks_are(t, n, seventeen, 5), "an early stop at 17 keeps 17 (%d ticks, last %d)", n, t[n - 1]);
    n = ticks_epochs(11, 6, t, 512);
    static const int eleven[3] = {1, 5, 11};
    CHECK(ticks_are(t, n, eleven, 3), "10 too close to the last epoch 11 is dropped (%d ticks)", n);
    n = ticks_epochs(1, 10, t, 512);
    CHECK(n == 1 && t[0] == 1, "one epoch");
    n = ticks_epochs(250, 12, t, 512);
    CHECK(n >= 2 && t[0] == 1 && t[1] == 50 && t[n - 1] == 250, "250 epochs: 1, 50, ..., 250 (second %d)",
          n > 1 ? t[1] : 0);
    /* every n and room: first 1, last n, increasing, no two closer than a label needs */
    int bad = 0;
    for (int epochs = 1; epochs <= 400 && !bad; epochs++)
        for (int room = 2; room <= 40 && !bad; room++) {
            n = ticks_epochs(epochs, room, t, 512);
            double gap = epochs > 1 ? (double)(epochs - 1) / (room - 1) : 0;
            if (n < 1 || t[0] != 1 || t[n - 1] != epochs || n > room) bad = 1;
            for (int i = 1; i < n && !bad; i++)
                if (t[i] <= t[i - 1] || t[i] - t[i - 1] < gap - 1e-9) bad = 1;
            if (bad) CHECK(0, "ticks for %d epochs, room %d: %d ticks, last %d", epochs, room, n, t[n - 1]);
        }
    CHECK(!bad, "ticks hold for 1..400 epochs");
}

/* Mean column of the marker colour in the left half (the loss panel). */
static double mark_column(int mark_epoch, long *pixels) {
    char path[256], err[256] = "";
    double y[13];
    for (int i = 0; i < 13; i++) y[i] = 1.0 / (i + 1);
    PlotSeries s = {"val", y, 13, PLOT_COLOR_VAL, 0};
    PlotPanel panels[2] = {{"Loss", "epoch", "loss", &s, 1, mark_epoch, "best val loss: epoch 10 (restored)"},
                           {"Accuracy", "epoch", "accuracy", &s, 1, mark_epoch, "best"}};
    CHECK(plot_panels_png(tmp_path("marked.png", path, sizeof path), panels, 2, 1000, 420, err, sizeof err) == 0,
          "marked curves: %s", err);
    Image im = load_png(path);
    double sx = 0;
    *pixels = 0;
    for (int yy = 0; im.rgb && yy < im.h; yy++)
        for (int x = 0; x < im.w / 2; x++) {
            const unsigned char *p = im.rgb + ((size_t)yy * im.w + x) * 3;
            if (((uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]) == PLOT_COLOR_MARK) sx += x, (*pixels)++;
        }
    stbi_image_free(im.rgb);
    return *pixels ? sx / *pixels : -1;
}

static void test_best_epoch_mark(void) {
    long none = 0, late = 0, early = 0;
    mark_column(0, &none);
    double x_late = mark_column(10, &late), x_early = mark_column(3, &early);
    CHECK(none == 0, "no marker without a best epoch (%ld pixels)", none);
    /* a dashed line over ~300 px, 2 px wide, 8 of 13 on: > 300 pixels */
    CHECK(late > 300 && early > 300, "marker drawn: %ld and %ld pixels", late, early);
    CHECK(x_late > x_early + 150, "marker follows the epoch: x %.0f (epoch 10) vs %.0f (epoch 3)", x_late, x_early);
    long beyond = 0;
    mark_column(14, &beyond);
    CHECK(beyond == 0, "a mark past the last epoch is not drawn");
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
    PlotPanel panel = {"Loss", "epoch", "loss", loss, 2, 0, NULL};
    /* title + height rows + axis + epoch numbers + legend */
    char *text = capture_chart(&panel, 60, 12);
    CHECK(text && count_lines(text) == 12 + 4, "chart lines %d:\n%s", count_lines(text), text ? text : "");
    CHECK(text && strncmp(text, "Loss\n", 5) == 0, "title first");
    CHECK(text && strstr(text, "* train") && strstr(text, "o val"), "legend:\n%s", text ? text : "");
    CHECK(text && strstr(text, "1.5") && strstr(text, "0.0"), "y numbers:\n%s", text ? text : "");
    CHECK(text && strstr(text, " 30  epoch"), "last epoch and x label:\n%s", text ? text : "");
    /* the first points (train 1.45, val 1.5) share the top-left cell: the
     * overlap marker, which the legend explains, hides neither */
    const char *row1 = text ? strchr(text, '\n') + 1 : NULL;
    const char *bar = row1 ? strchr(row1, '|') : NULL;
    CHECK(bar && bar[1] == PLOT_TEXT_OVERLAP, "top-left point:\n%s", text ? text : "");
    CHECK(text && strstr(text, "* train   o val   @ both in one cell\n"), "overlap legend:\n%s", text ? text : "");
    free(text);

    /* one series on top of the other: every point is the overlap marker;
     * far apart: no overlap marker and no legend entry for it */
    double low[EPOCHS], high[EPOCHS];
    for (int i = 0; i < EPOCHS; i++) low[i] = 0.1, high[i] = 0.9;
    PlotSeries same[2] = {{"train", low, EPOCHS, PLOT_COLOR_TRAIN, 0}, {"val", low, EPOCHS, PLOT_COLOR_VAL, 0}};
    PlotPanel same_panel = {NULL, NULL, NULL, same, 2, 0, NULL};
    text = capture_chart(&same_panel, 30, 6);
    CHECK(text && strstr(text, "|@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n") && strchr(text, '*') == strrchr(text, '*'),
          "identical series all '@':\n%s", text ? text : "");
    free(text);
    same[1].y = high;
    text = capture_chart(&same_panel, 30, 6);
    CHECK(text && !strchr(text, PLOT_TEXT_OVERLAP) && strstr(text, "********") && strstr(text, "oooooooo"),
          "separate series keep their markers:\n%s", text ? text : "");
    free(text);

    double huge[3] = {1e308, -1e308, NAN};
    PlotSeries extreme = {"x", huge, 3, PLOT_COLOR_TRAIN, 0};
    PlotPanel wild = {"wild", NULL, NULL, &extreme, 1, 0, NULL};
    text = capture_chart(&wild, 30, 6);
    CHECK(text && count_lines(text) == 6 + 4, "extreme chart lines %d:\n%s", count_lines(text), text ? text : "");
    free(text);

    PlotPanel untitled = {NULL, NULL, NULL, loss, 1, 0, NULL};
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
    test_confusion_shares();
    test_errors_and_atomicity();
    test_text();
    test_diverging();
    test_epoch_ticks();
    test_best_epoch_mark();
    test_text_charts();
    remove_tmp_dir();
    return check_summary("test_plot");
}
