/* suggest.h: "did you mean": the candidate closest to a mistyped word
 * (an option, a subcommand, a column name). */
#ifndef BASE_SUGGEST_H
#define BASE_SUGGEST_H

#include <stddef.h>

/* Edits (insert, delete, replace, swap of neighbours) between a and b,
 * counted up to limit: a larger distance returns limit + 1. */
int suggest_distance(const char *a, const char *b, int limit);

/* The candidate the word most likely meant: the closest within a third of
 * its length (at least 1, at most 3 edits), or else the only candidate the
 * word starts (3 characters at least); NULL when none is close. Ties go to
 * the first candidate. */
const char *suggest_closest(const char *word, const char *const *candidates, size_t n);

#endif
