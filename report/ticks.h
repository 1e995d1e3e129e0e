/* ticks.h: where an axis gets its numbers: nice steps for value axes and
 * colour bars, their text, and the epoch ticks of the curves (the first
 * and the last epoch always, round numbers between). */
#ifndef REPORT_TICKS_H
#define REPORT_TICKS_H

#include <stddef.h>

/* A step of 1, 2, 2.5 or 5 times a power of ten giving at most max_ticks
 * intervals over range. */
double ticks_nice_step(double range, int max_ticks);
/* value as a tick label with the decimals step needs ("0.25", "5", "1e+07"). */
void ticks_format(char *buf, size_t size, double value, double step);
/* The epochs 1..n that get a tick when at most max_labels labels fit side
 * by side along the axis: 1, n, and between them the multiples of a step of
 * 1, 5, 10, 20, 50, 100, ... that keep a label's room from 1 and from n.
 * Writes at most cap epochs, in increasing order; returns their count. */
int ticks_epochs(int n, int max_labels, int *ticks, int cap);

#endif
