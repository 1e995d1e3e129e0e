/* utf8.h: UTF-8 text measured in terminal columns: the code points of a
 * string, and how many columns each takes (0 for a combining mark, 2 for
 * an East Asian wide character or an emoji, else 1). Locale-free, so a
 * table lines up the same under any LANG. */
#ifndef BASE_UTF8_H
#define BASE_UTF8_H

#include <stddef.h>

/* The code point starting at s (NUL-terminated) and its length in *len;
 * a byte that starts no well-formed sequence is U+FFFD of length 1. */
unsigned utf8_decode(const char *s, int *len);
/* Columns a terminal gives code point cp: 0, 1 or 2. */
int utf8_cp_columns(unsigned cp);
/* Columns of the whole string. */
int utf8_columns(const char *s);
/* Bytes of s's longest prefix that fits in columns (whole characters). */
size_t utf8_prefix_fitting(const char *s, int columns);

#endif
