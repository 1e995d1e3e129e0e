/* schedule.c: learning-rate schedule and epoch order (see schedule.h). */
#include "run/schedule.h"

#include <math.h>

#include "base/rng.h"

/* Site of the shuffle in the counter-based generator (the model uses others). */
#define SITE_SHUFFLE 900001

double schedule_lr(double lr, long step, long warmup_steps, long total_steps) {
    if (step < warmup_steps) return lr * (double)(step + 1) / warmup_steps;
    long decay_steps = total_steps - warmup_steps;
    if (decay_steps <= 0) return lr;
    double progress = (double)(step - warmup_steps) / decay_steps;
    return lr * 0.5 * (1.0 + cos(M_PI * progress));
}

int schedule_steps_per_epoch(int n, int batch_size) { return (n + batch_size - 1) / batch_size; }

long schedule_warmup_steps(double warmup, long total_steps) {
    long w = warmup < 1.0 ? lround(warmup * total_steps) : (long)warmup;
    return w > total_steps ? total_steps : w;
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
