/* font.h: UTF-8 text on a canvas, antialiased, from a TrueType font
 * (stb_truetype; DejaVu Sans by default) with rasterised glyphs cached; or,
 * where no font file can be read, from the built-in ASCII bitmap font
 * (stb_easy_font), which draws every other character as '?'. */
#ifndef REPORT_FONT_H
#define REPORT_FONT_H

#include <stddef.h>
#include <stdint.h>

#include "report/canvas.h"

typedef struct Font Font;

/* A TrueType font file (.ttf, or the first font of a .ttc); path NULL: the
 * built-in bitmap font. Returns NULL with a message when the file cannot be
 * read or is not a font this reader understands. */
Font *font_open(const char *path, char *err, size_t errlen);
void font_close(Font *f);

/* The font every picture uses, opened on first use and kept for the
 * process: $TRAIN_FONT when set, else FONT_PATH (Makefile: Debian's
 * fonts-dejavu-core), else what `fc-match 'DejaVu Sans'` names. When none
 * of them opens, the bitmap font, and font_fallback_note says why. Never
 * NULL. Not thread-safe: pictures are drawn from one thread. */
Font *font_default(void);
/* When font_default fell back to the bitmap font: a one-line note (what was
 * tried, how to get a font) for the command line to print; else NULL. */
const char *font_fallback_note(void);

int font_is_truetype(const Font *f);
/* The file the font came from, or "built-in bitmap font". */
const char *font_source(const Font *f);

/* Text of size px (pixels from the top of the highest accent to the bottom
 * of the lowest descender) takes font_line_height(f, px) rows. */
int font_line_height(const Font *f, int px);
/* Width in pixels of utf8 at size px. */
int font_text_width(Font *f, const char *utf8, int px);
/* Draws utf8 with the top-left of its line box at (x, y). When vertical,
 * the text is turned 90 degrees to read bottom to top, and (x, y) is the
 * bottom-left corner of the turned box. Invalid UTF-8 and control
 * characters show as U+FFFD; characters the font lacks as its
 * missing-glyph box. */
void font_draw(Canvas *c, Font *f, int x, int y, const char *utf8, int px, uint32_t color, int vertical);

#endif
