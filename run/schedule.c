/* schedule.c: learning-rate schedule and epoch order (see schedule.h). */
#include "run/schedule.h"

#include <math.h>

#include "base/rng.h"

/* Sites of the shuffle and the batch order in the counter-based generator;
 * pretraining's training masks share 900001, so a few keys coincide (the
 * steps count epochs here, global steps there: docs/DESIGN.md §7). */
#define SITE_SHUFFLE 900001
#define SITE_BATCH_ORDER 900004

double schedule_lr(double lr, long step, long warmup_steps, long total_steps) {
    if (step < warmup_steps) return lr * (double)(step + 1) / warmup_steps;
    long decay_steps = total_steps - warmup_steps;
    if (decay_steps <= 0) return lr;
    double progress = (double)(step - warmup_steps) / decay_steps;
    return lr * 0.5 * (1.0 + cos(M_PI * progress));
}

int schedule_steps_per_epoch(int n, int batch_size) { return (n + batch_size - 1) / batch_size; }

int schedule_auto_epochs(int n, int batch_size) {
    long per_epoch = schedule_steps_per_epoch(n, batch_size);
    long e = per_epoch > 0 ? lround((double)SCHEDULE_AUTO_STEPS / (double)per_epoch) : SCHEDULE_AUTO_MAX;
    return e < SCHEDULE_AUTO_MIN ? SCHEDULE_AUTO_MIN : e > SCHEDULE_AUTO_MAX ? SCHEDULE_AUTO_MAX : (int)e;
}

long schedule_warmup_steps(double warmup, long total_steps) {
    long w = warmup < 1.0 ? lround(warmup * total_steps) : (long)warmup;
    return w > total_steps ? total_steps : w;
}

void schedule_cycle(int epoch, int cycle, int epochs, int *first, int *last) {
    long start = 1, length = cycle > 0 ? cycle : epochs;
    while (start + length <= epoch) {   /* each cycle twice the one before */
        start += length;
        length *= 2;
    }
    *first = (int)start;
    *last = start + length - 1 < epochs ? (int)(start + length - 1) : epochs;
}

double schedule_cycle_lr(double lr, double warmup, long step, int steps_per_epoch, int cycle, int epochs) {
    int first, last;
    schedule_cycle((int)(step / steps_per_epoch) + 1, cycle, epochs, &first, &last);
    long start = (long)(first - 1) * steps_per_epoch, steps = (long)(last - first + 1) * steps_per_epoch;
    return schedule_lr(lr, step - start, schedule_warmup_steps(warmup, steps), steps);
}

int schedule_swa_start(double fraction, int epochs) {
    long averaged = lround(fraction * epochs);
    return averaged >= 2 ? epochs - (int)averaged + 1 : 0;
}

void schedule_shuffle(int *order, int n, uint64_t seed, int epoch) {
    for (int i = 0; i < n; i++) order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rng_bits(seed, (uint64_t)epoch, SITE_SHUFFLE, (uint64_t)i) % (uint64_t)(i + 1));
        int tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
    }
}

/* Stable counting sort of order[0..n) by lengths (small non-negative ints). */
static void sort_by_length(int *order, int n, const int *lengths, int *work) {
    int longest = 0;
    for (int i = 0; i < n; i++)
        if (lengths[order[i]] > longest) longest = lengths[order[i]];
    for (int i = 0; i < n; i++) work[i] = order[i];
    int at = 0;
    for (int len = 0; len <= longest; len++)   /* n x longest: windows of 1600 examples, lengths up to 256 */
        for (int i = 0; i < n; i++)
            if (lengths[work[i]] == len) order[at++] = work[i];
}

void schedule_group_by_length(int *order, int n, const int *lengths, int batch_size, uint64_t seed, int epoch,
                              int *work) {
    int window = SCHEDULE_GROUP_BATCHES * batch_size;
    for (int start = 0; start < n; start += window)
        sort_by_length(order + start, n - start < window ? n - start : window, lengths, work);
    int full = n / batch_size;   /* whole batches change places; a partial last one stays last */
    for (int i = 0; i < n; i++) work[i] = order[i];
    for (int b = full - 1; b > 0; b--) {   /* Fisher-Yates over batches, moved in work, gathered below */
        int j = (int)(rng_bits(seed, (uint64_t)epoch, SITE_BATCH_ORDER, (uint64_t)b) % (uint64_t)(b + 1));
        for (int k = 0; k < batch_size; k++) {
            int tmp = work[b * batch_size + k];
            work[b * batch_size + k] = work[j * batch_size + k];
            work[j * batch_size + k] = tmp;
        }
    }
    for (int i = 0; i < full * batch_size; i++) order[i] = work[i];
}
