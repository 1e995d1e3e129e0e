/* font.c: UTF-8 text on a canvas (see font.h). TrueType outlines are
 * rasterised by stb_truetype into coverage bitmaps, cached per (glyph,
 * size), and blended into the canvas; the fallback is stb_easy_font's
 * quads scaled by an integer factor. */
#include "report/font.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/fileio.h"
#include "stb_truetype.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wmissing-braces"
#include "stb_easy_font.h"
#pragma GCC diagnostic pop

/* Debian's fonts-dejavu-core; the Makefile may point elsewhere (FONT=...). */
#ifndef FONT_PATH
#define FONT_PATH "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#endif

#define BITMAP_GLYPH_HEIGHT 10 /* stb_easy_font: caps 0..7, descenders to 9 */
#define MAX_FONT_BYTES (64u << 20)
#define REPLACEMENT 0xFFFDu

typedef struct {
    int glyph, px;        /* the key; px 0 marks an empty slot */
    int w, h, xoff, yoff; /* coverage bitmap, offset from the pen on the baseline */
    unsigned char *alpha; /* w * h coverage values, NULL when w or h is 0 */
} Glyph;

struct Font {
    int truetype;
    char source[512];
    unsigned char *data; /* the whole font file (stb_truetype reads it in place) */
    stbtt_fontinfo info;
    int ascent, descent; /* font units, ascent above the baseline, descent below (negative) */
    int box_for_missing; /* the font's missing glyph has no outline: draw a box instead */
    Glyph *cache;        /* open addressing, cache_cap a power of two */
    size_t cache_cap, cache_used;
};

/* ---- UTF-8 ---- */

/* The code point starting at *p, advancing *p past it. A byte that does not
 * begin a valid shortest-form sequence gives U+FFFD and is skipped alone,
 * so the next character still shows. Never reads past a NUL. */
static uint32_t next_codepoint(const unsigned char **p) {
    const unsigned char *s = *p;
    uint32_t lead = s[0];
    int len = lead < 0x80 ? 1 : (lead & 0xE0) == 0xC0 ? 2 : (lead & 0xF0) == 0xE0 ? 3 : (lead & 0xF8) == 0xF0 ? 4 : 0;
    (*p)++;
    if (len <= 1) return len ? lead : REPLACEMENT;
    uint32_t cp = lead & (0x7Fu >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return REPLACEMENT; /* a NUL stops here too */
        cp = cp << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t shortest[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < shortest[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return REPLACEMENT;
    *p = s + len;
    return cp;
}

/* Characters with no picture of their own: zero-width spaces and joiners,
 * direction marks, variation selectors (as in emoji sequences), the BOM. */
static int invisible(uint32_t cp) {
    return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
           (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF || (cp >= 0xE0000 && cp <= 0xE0FFF);
}

/* Control characters would draw nothing: show them as U+FFFD. */
static uint32_t visible(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp < 0xA0) ? REPLACEMENT : cp;
}

/* ---- opening ---- */

static Font *bitmap_font(void) {
    Font *f = calloc(1, sizeof *f);
    if (f) snprintf(f->source, sizeof f->source, "built-in bitmap font");
    return f;
}

Font *font_open(const char *path, char *err, size_t errlen) {
    if (!path) {
        Font *f = bitmap_font();
        if (!f) set_error(err, errlen, "out of memory");
        return f;
    }
    size_t len = 0;
    unsigned char *data = read_file(path, &len, err, errlen);
    if (!data) return NULL;
    int offset = len >= 12 && len < MAX_FONT_BYTES ? stbtt_GetFontOffsetForIndex(data, 0) : -1;
    Font *f = calloc(1, sizeof *f);
    if (!f || offset < 0 || !stbtt_InitFont(&f->info, data, offset) || stbtt_FindGlyphIndex(&f->info, 'A') == 0) {
        if (f) set_error(err, errlen, "%s: not a TrueType font with Latin letters", path);
        else set_error(err, errlen, "out of memory");
        free(f);
        free(data);
        return NULL;
    }
    f->truetype = 1;
    f->data = data;
    snprintf(f->source, sizeof f->source, "%s", path);
    int gap;
    stbtt_GetFontVMetrics(&f->info, &f->ascent, &f->descent, &gap);
    if (f->ascent <= f->descent) f->ascent = f->descent + 1;
    f->box_for_missing = stbtt_IsGlyphEmpty(&f->info, 0);
    return f;
}

void font_close(Font *f) {
    if (!f) return;
    for (size_t i = 0; i < f->cache_cap; i++) free(f->cache[i].alpha);
    free(f->cache);
    free(f->data);
    free(f);
}

/* fc-match's file for DejaVu Sans (what fontconfig substitutes when it is
 * missing). 0, or -1 when fc-match is not there or says nothing. */
static int fontconfig_path(char *path, size_t size) {
    FILE *p = popen("fc-match -f '%{file}' 'DejaVu Sans' 2>/dev/null", "r");
    if (!p) return -1;
    size_t n = fread(path, 1, size - 1, p);
    path[n] = '\0';
    int status = pclose(p);
    return status == 0 && n > 0 && n < size - 1 ? 0 : -1;
}

/* The standard path is tried before fontconfig so that the usual case
 * needs no child process (MPI runtimes dislike fork). */
static Font *find_font(char *tried, size_t size) {
    char err[600], found[1024];
    const char *env = getenv("TRAIN_FONT");
    if (env && *env) {
        Font *f = font_open(env, err, sizeof err);
        if (!f) snprintf(tried, size, "TRAIN_FONT: %s", err);
        return f;
    }
    Font *f = font_open(FONT_PATH, err, sizeof err);
    if (f) return f;
    snprintf(tried, size, "%s", err);
    if (fontconfig_path(found, sizeof found) != 0) return NULL;
    f = font_open(found, err, sizeof err);
    if (!f) snprintf(tried + strlen(tried), size - strlen(tried), "; fc-match: %s", err);
    return f;
}

/* The process's font, opened once (a cache, see docs/ARCHITECTURE.md), and
 * why it fell back to the bitmap font ("" when it did not). */
static struct {
    Font *font;
    Font fallback;
    char note[1700];
} process_font;

Font *font_default(void) {
    if (process_font.font) return process_font.font;
    char tried[1400] = "fc-match found no font";
    Font *font = find_font(tried, sizeof tried);
    if (!font) {
        font = bitmap_font();
        if (!font) {
            snprintf(process_font.fallback.source, sizeof process_font.fallback.source, "built-in bitmap font");
            font = &process_font.fallback;
        }
        snprintf(process_font.note, sizeof process_font.note, "pictures use the built-in ASCII font, other characters "
                 "as '?' (%s; apt-get install fonts-dejavu-core, or set TRAIN_FONT to a .ttf file)", tried);
    }
    return process_font.font = font;
}

const char *font_fallback_note(void) {
    return process_font.note[0] ? process_font.note : NULL;
}

int font_is_truetype(const Font *f) {
    return f->truetype;
}

const char *font_source(const Font *f) {
    return f->source;
}

/* ---- the bitmap font ---- */

static int bitmap_scale(int px) {
    return px >= 13 ? 2 : 1;
}

/* stb_easy_font draws printable ASCII; any other character is one '?'. */
static char bitmap_char(uint32_t cp) {
    return cp >= 32 && cp < 127 ? (char)cp : '?';
}

static int bitmap_advance(char ch) {
    char one[2] = {ch, '\0'};
    return stb_easy_font_width(one);
}

static void bitmap_draw(Canvas *c, int x, int y, const char *utf8, int px, uint32_t color, int vertical) {
    int scale = bitmap_scale(px), pen = 0;
    char quads[1024];
    for (const unsigned char *p = (const unsigned char *)utf8; *p;) {
        uint32_t cp = next_codepoint(&p);
        if (invisible(cp)) continue;
        char one[2] = {bitmap_char(cp), '\0'};
        int n = stb_easy_font_print(0, 0, one, NULL, quads, sizeof quads);
        for (int q = 0; q < n; q++) {
            float v0[2], v2[2]; /* a quad's first and third vertices: opposite corners */
            memcpy(v0, quads + q * 64, sizeof v0);
            memcpy(v2, quads + q * 64 + 32, sizeof v2);
            int qx0 = pen + (int)v0[0] * scale, qx1 = pen + (int)v2[0] * scale;
            int qy0 = (int)v0[1] * scale, qy1 = (int)v2[1] * scale;
            if (vertical) /* text point (tx, ty) goes to (x + ty, y - tx) */
                canvas_fill_rect(c, x + qy0, y - qx1, x + qy1, y - qx0, color);
            else
                canvas_fill_rect(c, x + qx0, y + qy0, x + qx1, y + qy1, color);
        }
        pen += bitmap_advance(one[0]) * scale;
    }
}

/* ---- TrueType glyphs and their cache ---- */

static float tt_scale(const Font *f, int px) {
    return (float)px / (float)(f->ascent - f->descent);
}

static size_t slot_of(const Font *f, int glyph, int px) {
    uint32_t h = ((uint32_t)glyph * 31u + (uint32_t)px) * 2654435761u;
    return h & (f->cache_cap - 1);
}

/* Doubles the table (from 256 slots). -1 when out of memory. */
static int cache_grow(Font *f) {
    size_t cap = f->cache_cap ? f->cache_cap * 2 : 256;
    Glyph *old = f->cache, *table = calloc(cap, sizeof *table);
    if (!table) return -1;
    size_t old_cap = f->cache_cap;
    f->cache = table;
    f->cache_cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i].px) continue;
        size_t s = slot_of(f, old[i].glyph, old[i].px);
        while (table[s].px) s = (s + 1) & (cap - 1);
        table[s] = old[i];
    }
    free(old);
    return 0;
}

/* Glyph index glyph at size px, rasterised on first use. NULL when out of
 * memory (the glyph is then skipped). */
static const Glyph *glyph_at(Font *f, int glyph, int px) {
    if ((f->cache_used + 1) * 4 > f->cache_cap * 3 && cache_grow(f) != 0 && f->cache_used + 1 >= f->cache_cap)
        return NULL;
    size_t s = slot_of(f, glyph, px);
    while (f->cache[s].px) {
        if (f->cache[s].glyph == glyph && f->cache[s].px == px) return &f->cache[s];
        s = (s + 1) & (f->cache_cap - 1);
    }
    Glyph g = {glyph, px, 0, 0, 0, 0, NULL};
    float scale = tt_scale(f, px);
    int x0, y0, x1, y1;
    stbtt_GetGlyphBitmapBox(&f->info, glyph, scale, scale, &x0, &y0, &x1, &y1);
    if (x1 > x0 && y1 > y0 && x1 - x0 < 4 * px + 8 && y1 - y0 < 4 * px + 8) {
        g.alpha = malloc((size_t)(x1 - x0) * (y1 - y0));
        if (!g.alpha) return NULL;
        g.w = x1 - x0, g.h = y1 - y0, g.xoff = x0, g.yoff = y0;
        stbtt_MakeGlyphBitmap(&f->info, g.alpha, g.w, g.h, g.w, scale, scale, glyph);
    }
    f->cache[s] = g;
    f->cache_used++;
    return &f->cache[s];
}

/* One character's glyph index; 0 is the font's missing glyph. */
static int glyph_index(const Font *f, uint32_t cp) {
    return stbtt_FindGlyphIndex(&f->info, (int)cp);
}

static double glyph_advance(const Font *f, int glyph, int px) {
    if (glyph == 0 && f->box_for_missing) return 0.6 * px;
    int advance, bearing;
    stbtt_GetGlyphHMetrics(&f->info, glyph, &advance, &bearing);
    return advance * (double)tt_scale(f, px);
}

/* Text coordinates (tx, ty), ty down from the line top, onto the canvas:
 * as they are, or turned to read bottom to top from (x, y). */
static void put(Canvas *c, int x, int y, int tx, int ty, uint32_t color, int alpha, int vertical) {
    if (vertical) canvas_blend(c, x + ty, y - tx, color, alpha);
    else canvas_blend(c, x + tx, y + ty, color, alpha);
}

/* The missing-glyph box of a font whose own is blank: an outline from the
 * baseline up to the cap height. */
static void missing_box(Canvas *c, int x, int y, int pen, int baseline, int px, uint32_t color, int vertical) {
    int w = (int)lround(0.5 * px), h = (int)lround(0.55 * px), left = pen + (int)lround(0.05 * px);
    for (int i = 0; i <= w; i++) {
        put(c, x, y, left + i, baseline - h, color, 255, vertical);
        put(c, x, y, left + i, baseline, color, 255, vertical);
    }
    for (int j = 0; j <= h; j++) {
        put(c, x, y, left, baseline - j, color, 255, vertical);
        put(c, x, y, left + w, baseline - j, color, 255, vertical);
    }
}

/* Walks the text: kerning between neighbours, each glyph at the rounded
 * pen position. Draws when c is not NULL; returns the width. */
static double tt_walk(Canvas *c, Font *f, int x, int y, const char *utf8, int px, uint32_t color, int vertical) {
    double pen = 0;
    int prev = -1, baseline = (int)lround(f->ascent * (double)tt_scale(f, px));
    for (const unsigned char *p = (const unsigned char *)utf8; *p;) {
        uint32_t cp = next_codepoint(&p);
        if (invisible(cp)) continue;
        int glyph = glyph_index(f, visible(cp));
        if (prev > 0 && glyph > 0) pen += stbtt_GetGlyphKernAdvance(&f->info, prev, glyph) * (double)tt_scale(f, px);
        if (c && glyph == 0 && f->box_for_missing) {
            missing_box(c, x, y, (int)lround(pen), baseline, px, color, vertical);
        } else if (c) {
            const Glyph *g = glyph_at(f, glyph, px);
            int left = (int)lround(pen);
            for (int j = 0; g && j < g->h; j++)
                for (int i = 0; i < g->w; i++)
                    put(c, x, y, left + g->xoff + i, baseline + g->yoff + j, color, g->alpha[(size_t)j * g->w + i],
                        vertical);
        }
        pen += glyph_advance(f, glyph, px);
        prev = glyph;
    }
    return pen;
}

/* ---- text ---- */

int font_line_height(const Font *f, int px) {
    return f->truetype ? px : BITMAP_GLYPH_HEIGHT * bitmap_scale(px);
}

int font_text_width(Font *f, const char *utf8, int px) {
    if (!utf8) return 0;
    if (f->truetype) return (int)ceil(tt_walk(NULL, f, 0, 0, utf8, px, 0, 0));
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)utf8; *p;) {
        uint32_t cp = next_codepoint(&p);
        if (!invisible(cp)) w += bitmap_advance(bitmap_char(cp));
    }
    return w * bitmap_scale(px);
}

void font_draw(Canvas *c, Font *f, int x, int y, const char *utf8, int px, uint32_t color, int vertical) {
    if (!utf8) return;
    if (f->truetype) tt_walk(c, f, x, y, utf8, px, color, vertical);
    else bitmap_draw(c, x, y, utf8, px, color, vertical);
}
