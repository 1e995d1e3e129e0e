/* errors.c: messages into the caller's buffer (see errors.h). */
#include "base/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A message too long for the buffer (a very long path in it) keeps its
 * start and its end, where the reason and the fix are, with "..." for the
 * middle; cuts fall between UTF-8 characters. */
static void format_message(char *err, size_t errlen, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(err, errlen, fmt, ap);
    if (n < 0 || (size_t)n < errlen || errlen < 32) {
        va_end(again);
        return;
    }
    char *whole = malloc((size_t)n + 1);
    if (whole) {
        vsnprintf(whole, (size_t)n + 1, fmt, again);
        size_t room = errlen - 1 - 3, head = room / 3, tail = room - head;
        while (head > 0 && ((unsigned char)whole[head] & 0xC0) == 0x80) head--;   /* whole[head] starts a character */
        size_t from = (size_t)n - tail;
        while (from < (size_t)n && ((unsigned char)whole[from] & 0xC0) == 0x80) from++;
        memcpy(err, whole, head);
        memcpy(err + head, "...", 3);
        memcpy(err + head + 3, whole + from, (size_t)n - from + 1);   /* with the NUL */
        free(whole);
    }
    va_end(again);
}

void set_error(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    format_message(err, errlen, fmt, ap);
    va_end(ap);
}

int fail(char *err, size_t errlen, int code, const char *fmt, ...) {
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        format_message(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}
