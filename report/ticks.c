/* ticks.c: axis numbers (see ticks.h). */
#include "report/ticks.h"

#include <math.h>
#include <stdio.h>

double ticks_nice_step(double range, int max_ticks) {
    if (max_ticks < 1) max_ticks = 1;
    if (!(range > 0) || !isfinite(range)) return 1.0;
    double raw = range / max_ticks;
    double magnitude = pow(10.0, floor(log10(raw)));
    double fraction = raw / magnitude;
    double nice = fraction <= 1.0 ? 1.0 : fraction <= 2.0 ? 2.0 : fraction <= 2.5 ? 2.5 : fraction <= 5.0 ? 5.0 : 10.0;
    return nice * magnitude;
}

/* Decimals needed to print multiples of step exactly (0.25 -> 2, 5 -> 0). */
static int step_decimals(double step) {
    for (int d = 0; d < 8; d++) {
        double scaled = step * pow(10.0, d);
        if (fabs(scaled - round(scaled)) < 1e-6 * scaled) return d;
    }
    return 8;
}

void ticks_format(char *buf, size_t size, double value, double step) {
    if (fabs(value) < step * 1e-9) value = 0.0; /* no "-0.00" */
    if (fabs(value) >= 1e6 || step < 1e-6)
        snprintf(buf, size, "%.3g", value);
    else
        snprintf(buf, size, "%.*f", step_decimals(step), value);
}

/* Steps 1, 5, 10, 20, 50, 100, ...: no 2, whose multiples next to the
 * tick at 1 read as an uneven start (1, 2, 4 or 1, 4, 6). */
static long epoch_step(double gap) {
    if (gap <= 1) return 1;
    if (gap <= 5) return 5;
    for (long base = 10; base < 1000000000L; base *= 10)
        for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) /* 1, 2, 5 */
            if (gap <= (double)(base * m)) return base * m;
    return 1000000000L;
}

int ticks_epochs(int n, int max_labels, int *ticks, int cap) {
    if (!ticks || cap < 1) return 0;
    if (n < 1) n = 1;
    int count = 0;
    ticks[count++] = 1;
    if (n == 1) return count;
    if (max_labels < 2) max_labels = 2;
    double gap = (double)(n - 1) / (max_labels - 1); /* epochs between two labels that just fit */
    long step = epoch_step(gap);
    for (long e = step; e < n && count < cap - 1; e += step)
        if (e > 1 && e - 1 >= gap && n - e >= gap) ticks[count++] = (int)e;
    if (count < cap) ticks[count++] = n;
    return count;
}
