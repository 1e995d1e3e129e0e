/* check.h: a minimal test harness. CHECK records a failure and goes on;
 * check_summary() prints "N passed, N failed" and is the test's exit code. */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_passed, check_failed;

#define CHECK(cond, ...) do { \
    if (cond) { check_passed++; } \
    else { check_failed++; fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
           fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } \
} while (0)

static inline int check_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
