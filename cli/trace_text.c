/* trace_text.c: trace's token labels as the terminal shows them. In a
 * UTF-8 locale a bpe piece is printed as it is ("▁the"); in any other (the C
 * locale) labels are ASCII: the word-start mark U+2581 becomes '_' and other
 * characters beyond ASCII '?', which trace explains once. Widths count
 * terminal columns (base/utf8.h), not bytes. */
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#include "base/utf8.h"
#include "cli/trace.h"

#define WORD_START 0x2581u   /* bpe's mark of a word's first piece, LOWER ONE EIGHTH BLOCK */

int trace_locale_utf8(void) {
    /* POSIX order: LC_ALL overrides LC_CTYPE, which overrides LANG; unset or empty is the C locale */
    const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3; i++) {
        const char *v = getenv(names[i]);
        if (!v || !*v) continue;
        for (const char *p = v; *p; p++)   /* "C.UTF-8", "en_US.utf8" */
            if (strncasecmp(p, "utf-8", 5) == 0 || strncasecmp(p, "utf8", 4) == 0) return 1;
        return 0;
    }
    return 0;
}

char *trace_shown(const char *s, int utf8, int replaced[2]) {
    if (utf8) return strdup(s);
    char *out = malloc(strlen(s) + 1), *o = out;
    for (int len; out && *s; s += len) {
        unsigned cp = utf8_decode(s, &len);
        if (cp < 0x80) *o++ = (char)cp;
        else {
            int mark = cp == WORD_START;
            *o++ = mark ? '_' : '?';
            if (replaced) replaced[mark ? 0 : 1]++;
        }
    }
    if (out) *o = '\0';
    return out;
}

int trace_input_show(TraceInput *in, int utf8) {
    in->shown = calloc((size_t)in->T, sizeof(char *));
    for (int t = 0; in->shown && t < in->T; t++)
        if (!(in->shown[t] = trace_shown(in->labels[t], utf8, in->replaced))) return EXIT_RUNTIME;
    return in->shown ? EXIT_OK : EXIT_RUNTIME;
}

void trace_print_padded(FILE *out, const char *s, int width) {
    size_t keep = utf8_prefix_fitting(s, width);
    fwrite(s, 1, keep, out);
    int used = 0, len;
    for (size_t at = 0; at < keep; at += (size_t)len) used += utf8_cp_columns(utf8_decode(s + at, &len));
    for (; used < width; used++) fputc(' ', out);
}
