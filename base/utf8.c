/* utf8.c: UTF-8 code points and their terminal columns (see utf8.h). */
#include "base/utf8.h"

unsigned utf8_decode(const char *s, int *len) {
    const unsigned char *p = (const unsigned char *)s;
    int n = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] < 0xE0 ? 2 : p[0] >= 0xE0 && p[0] < 0xF0 ? 3
          : p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : 0;
    if (n == 0) {
        *len = 1;
        return 0xFFFD;
    }
    unsigned cp = n == 1 ? p[0] : p[0] & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80) {   /* a cut sequence (the NUL too) */
            *len = 1;
            return 0xFFFD;
        }
        cp = cp << 6 | (p[i] & 0x3F);
    }
    *len = n;
    return cp;
}

/* Ranges of code points, first and last. */
static int in_ranges(unsigned cp, const unsigned (*r)[2], int n) {
    for (int i = 0; i < n; i++)
        if (cp >= r[i][0] && cp <= r[i][1]) return 1;
    return 0;
}

int utf8_cp_columns(unsigned cp) {
    /* combining marks and zero-width characters draw over their neighbour */
    static const unsigned zero[][2] = {{0x0300, 0x036F}, {0x0483, 0x0489}, {0x0591, 0x05BD}, {0x0610, 0x061A},
                                       {0x064B, 0x065F}, {0x200B, 0x200F}, {0x20D0, 0x20FF}, {0xFE00, 0xFE0F},
                                       {0xFE20, 0xFE2F}};
    /* East Asian wide and fullwidth characters, emoji */
    static const unsigned wide[][2] = {{0x1100, 0x115F}, {0x2E80, 0x303E}, {0x3041, 0x33FF}, {0x3400, 0x4DBF},
                                       {0x4E00, 0x9FFF}, {0xA000, 0xA4CF}, {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},
                                       {0xFE30, 0xFE4F}, {0xFF00, 0xFF60}, {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F},
                                       {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD}};
    if (in_ranges(cp, zero, (int)(sizeof zero / sizeof *zero))) return 0;
    return in_ranges(cp, wide, (int)(sizeof wide / sizeof *wide)) ? 2 : 1;
}

int utf8_columns(const char *s) {
    int columns = 0, len;
    for (; *s; s += len) columns += utf8_cp_columns(utf8_decode(s, &len));
    return columns;
}

size_t utf8_prefix_fitting(const char *s, int columns) {
    size_t at = 0;
    int used = 0, len;
    while (s[at]) {
        int w = utf8_cp_columns(utf8_decode(s + at, &len));
        if (used + w > columns) break;
        used += w;
        at += (size_t)len;
    }
    return at;
}
