/* errors.h: the one error convention (docs/ARCHITECTURE.md).
 *
 * A function that can fail returns an int status: 0 on success, else the
 * exit code the failure deserves, ERR_RUNTIME (I/O, memory, NaN) or
 * ERR_INPUT (bad usage or bad input), with a message naming what was wrong
 * and where (option, or file and line) written into the caller's
 * char *err, size_t errlen. A function that returns a pointer or a count
 * returns NULL or -1 on failure, with the message in err. Only the command
 * line (cli/, train.c) prints errors; lower layers write into err. */
#ifndef BASE_ERRORS_H
#define BASE_ERRORS_H

#include <stddef.h>

/* Exit codes of ./train (docs/DESIGN.md §2), and the statuses functions return. */
enum {
    EXIT_OK = 0,
    EXIT_RUNTIME = 1,        /* I/O, memory, a non-finite loss */
    EXIT_USAGE = 2,          /* bad usage or bad input */
    EXIT_INTERRUPTED = 130   /* SIGINT/SIGTERM/SIGPIPE: state saved, resumable */
};
#define ERR_RUNTIME EXIT_RUNTIME
#define ERR_INPUT EXIT_USAGE

/* printf-style message into err (of errlen bytes); nothing when err is NULL.
 * One too long for err keeps its start and its end (the reason and the
 * fix) around "...". */
void set_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* set_error, then returns code: `return fail(err, errlen, ERR_INPUT, "...", ...);` */
int fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
