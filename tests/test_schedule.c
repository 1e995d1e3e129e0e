/* test_schedule.c: the learning-rate schedule and the epoch shuffle of
 * run/schedule.c, against the rules of docs/DESIGN.md §4.6 worked by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run/schedule.h"
#include "tests/check.h"

static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(1.0, fabs(b)); }

static void test_warmup_steps(void) {
    CHECK(schedule_warmup_steps(0.1, 100) == 10, "10%% of 100 steps is 10");
    CHECK(schedule_warmup_steps(0.25, 10) == 3, "25%% of 10 steps rounds 2.5 to 3 (half away from zero)");
    CHECK(schedule_warmup_steps(0.0, 100) == 0, "no warmup");
    CHECK(schedule_warmup_steps(1.0, 100) == 1, "1 is a step count, not 100%%");
    CHECK(schedule_warmup_steps(7.0, 100) == 7, "a step count");
    CHECK(schedule_warmup_steps(500.0, 100) == 100, "never more than all steps");
}

static void test_lr(void) {
    const double lr = 0.002;
    /* warmup of 4 steps over 12: lr/4, 2lr/4, 3lr/4, lr at steps 0..3 */
    for (int k = 0; k < 4; k++)
        CHECK(near(schedule_lr(lr, k, 4, 12), lr * (k + 1) / 4.0), "warmup step %d is %d/4 of lr", k, k + 1);
    /* decay over the 8 remaining steps: progress (s-4)/8; cos(0) = 1 at step 4, cos(pi/2) = 0 at step 8 */
    CHECK(near(schedule_lr(lr, 4, 4, 12), lr), "the first decay step is the peak");
    CHECK(near(schedule_lr(lr, 8, 4, 12), lr / 2), "halfway through the decay is lr/2");
    /* step 11: progress 7/8, 0.5 * (1 + cos(7pi/8)) = 0.5 * (1 - 0.9238795325112867) */
    CHECK(near(schedule_lr(lr, 11, 4, 12), lr * 0.5 * (1 - 0.9238795325112867)), "the last step");
    for (int s = 4; s < 11; s++)
        CHECK(schedule_lr(lr, s + 1, 4, 12) < schedule_lr(lr, s, 4, 12), "decreasing after warmup at %d", s);
    CHECK(near(schedule_lr(lr, 0, 0, 10), lr), "without warmup the first step has the full lr");
    CHECK(near(schedule_lr(lr, 9, 10, 10), lr), "all warmup: the last step reaches lr and nothing decays");
}

static void test_shuffle(void) {
    enum { N = 50 };
    int a[N], b[N], seen[N];
    schedule_shuffle(a, N, 42, 1);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < N; i++) {
        CHECK(a[i] >= 0 && a[i] < N, "index in range");
        if (a[i] >= 0 && a[i] < N) seen[a[i]]++;
    }
    for (int i = 0; i < N; i++) CHECK(seen[i] == 1, "%d appears once", i);
    schedule_shuffle(b, N, 42, 1);
    CHECK(memcmp(a, b, sizeof a) == 0, "the same seed and epoch give the same order");
    schedule_shuffle(b, N, 42, 2);
    CHECK(memcmp(a, b, sizeof a) != 0, "another epoch gives another order");
    schedule_shuffle(b, N, 43, 1);
    CHECK(memcmp(a, b, sizeof a) != 0, "another seed gives another order");
    /* uniform: where item 0 lands over 4000 epochs, in 5 bins of 10 positions;
     * chi-square with 4 degrees of freedom exceeds 18.47 with probability 0.001 */
    int bins[5] = {0};
    for (int e = 0; e < 4000; e++) {
        schedule_shuffle(b, N, 7, e);
        for (int i = 0; i < N; i++)
            if (b[i] == 0) bins[i / 10]++;
    }
    double chi = 0;
    for (int k = 0; k < 5; k++) chi += (bins[k] - 800.0) * (bins[k] - 800.0) / 800.0;
    CHECK(chi < 18.47, "item 0's position is uniform (chi-square %.2f)", chi);
}

/* --group-by-length: a permutation; each window of 50 batches sorted by
 * length; batches whole chunks of a window's sorted order, their order
 * shuffled, a partial last batch last; keyed by (seed, epoch); less padding. */
static void test_group_by_length(void) {
    enum { N = 3210, B = 32, W = SCHEDULE_GROUP_BATCHES * B };
    static int lengths[N], order[N], plain[N], again[N], work[N], seen[N], window_of[N], rank_in[N];
    for (int i = 0; i < N; i++) lengths[i] = 3 + (int)((i * 2654435761u) % 97u);   /* 3..99, scattered */
    schedule_shuffle(order, N, 5, 3);
    memcpy(plain, order, sizeof order);
    /* the window each example falls in, and its place in the window sorted by (length, shuffled place) */
    for (int i = 0; i < N; i++) {
        int w = i / W, r = 0;
        window_of[plain[i]] = w;
        for (int j = w * W; j < N && j < (w + 1) * W; j++)
            r += lengths[plain[j]] < lengths[plain[i]] || (lengths[plain[j]] == lengths[plain[i]] && j < i);
        rank_in[plain[i]] = r;
    }
    schedule_group_by_length(order, N, lengths, B, 5, 3, work);
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < N; i++)
        if (order[i] >= 0 && order[i] < N) seen[order[i]]++;
    int perm = 1;
    for (int i = 0; i < N; i++) perm &= seen[i] == 1;
    CHECK(perm, "a permutation of the examples");
    int chunks = 1, moved = 0;
    for (int b = 0; b * B < N; b++) {
        int first = order[b * B], size = N - b * B < B ? N - b * B : B;
        for (int k = 1; k < size; k++)   /* a batch: consecutive places of one window's sorted order */
            chunks &= window_of[order[b * B + k]] == window_of[first] && rank_in[order[b * B + k]] == rank_in[first] + k;
        if (size == B) chunks &= rank_in[first] % B == 0;
        moved += window_of[first] * (W / B) + rank_in[first] / B != b;
    }
    CHECK(chunks, "every batch is a chunk of B of one window sorted by length");
    CHECK(moved > N / B / 2, "the batches' order is shuffled (%d of %d moved)", moved, N / B);
    CHECK(window_of[order[N - 1]] == (N - 1) / W && rank_in[order[N - 1]] == (N - 1) % W,
          "the partial last batch stays last, the last window's longest");
    memcpy(again, plain, sizeof plain);
    schedule_group_by_length(again, N, lengths, B, 5, 3, work);
    CHECK(memcmp(order, again, sizeof order) == 0, "the same seed and epoch give the same order");
    memcpy(again, plain, sizeof plain);
    schedule_group_by_length(again, N, lengths, B, 5, 4, work);
    CHECK(memcmp(order, again, sizeof order) != 0, "another epoch orders the batches otherwise");
    long padded_plain = 0, padded_grouped = 0;
    for (int b = 0; b * B < N; b++) {
        int mp = 0, mg = 0, size = N - b * B < B ? N - b * B : B;
        for (int k = 0; k < size; k++) {
            if (lengths[plain[b * B + k]] > mp) mp = lengths[plain[b * B + k]];
            if (lengths[order[b * B + k]] > mg) mg = lengths[order[b * B + k]];
        }
        padded_plain += (long)mp * size;
        padded_grouped += (long)mg * size;
    }
    /* lengths uniform on 3..99: a random batch of 32 pads to about 96, a sorted one to about its mean + 1 */
    CHECK(padded_grouped * 3 < padded_plain * 2, "grouping computes less padding (%ld against %ld)", padded_grouped,
          padded_plain);
}

/* --epochs auto: round(1200 / steps per epoch) within [2, 40], worked by hand. */
static void test_auto_epochs(void) {
    static const struct { int n, batch, epochs; const char *why; } cases[] = {
        {1294, 32, 29, "41 steps an epoch: 1200 / 41 = 29.3, so 29"},
        {8640, 32, 4, "270 steps: 4.4, so 4"},
        {4438, 32, 9, "139 steps: 8.6, so 9"},
        {34560, 32, 2, "1080 steps: 1.1, at least 2"},
        {40, 32, 40, "2 steps: 600, at most 40"},
        {9600, 64, 8, "150 steps of 64: 8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int got = schedule_auto_epochs(cases[i].n, cases[i].batch);
        CHECK(got == cases[i].epochs, "%s (got %d)", cases[i].why, got);
    }
}

/* --swa: the last round(fraction x epochs) epochs, off below 2 of them. */
static void test_swa_start(void) {
    CHECK(schedule_swa_start(0.5, 30) == 16, "half of 30 epochs: 16-30, got %d", schedule_swa_start(0.5, 30));
    CHECK(schedule_swa_start(0.25, 30) == 23, "0.25 of 30 is 7.5, rounded to 8: 23-30, got %d",
          schedule_swa_start(0.25, 30));
    CHECK(schedule_swa_start(1.0, 30) == 1, "all 30 epochs: from 1, got %d", schedule_swa_start(1.0, 30));
    CHECK(schedule_swa_start(0.5, 4) == 3, "half of 4 epochs: 3-4, got %d", schedule_swa_start(0.5, 4));
    CHECK(schedule_swa_start(0.5, 3) == 2, "half of 3 is 1.5, rounded to 2: 2-3, got %d", schedule_swa_start(0.5, 3));
    CHECK(schedule_swa_start(0.5, 2) == 0, "one epoch of 2: off, got %d", schedule_swa_start(0.5, 2));
    CHECK(schedule_swa_start(0.0, 30) == 0, "0: off, got %d", schedule_swa_start(0.0, 30));
}

/* --cycle: the cycles' bounds (each twice the one before), and each cycle's
 * own warmup and decay, worked by hand. */
static void test_cycles(void) {
    static const struct { int epoch, cycle, epochs, first, last; } cases[] = {
        {1, 10, 30, 1, 10}, {10, 10, 30, 1, 10}, {11, 10, 30, 11, 30}, {30, 10, 30, 11, 30},
        {31, 10, 100, 31, 70}, {71, 10, 100, 71, 100},   /* 10, 20, 40, then what is left of 160 */
        {21, 10, 25, 11, 25},                            /* the last cycle cut at --epochs */
        {3, 1, 7, 2, 3}, {4, 1, 7, 4, 7},                /* 1, 2, 4 */
        {7, 30, 30, 1, 30}, {7, 99, 30, 1, 30}, {7, 0, 30, 1, 30},   /* one cycle */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int first, last;
        schedule_cycle(cases[i].epoch, cases[i].cycle, cases[i].epochs, &first, &last);
        CHECK(first == cases[i].first && last == cases[i].last, "epoch %d, --cycle %d of %d: epochs %d-%d, got %d-%d",
              cases[i].epoch, cases[i].cycle, cases[i].epochs, cases[i].first, cases[i].last, first, last);
    }
    const double lr = 0.002;
    /* 3 epochs of 4 steps, --cycle 1, --warmup 0.25: epoch 1 is 4 steps with 1 of warmup, epochs 2-3 are 8 with 2 */
    CHECK(near(schedule_cycle_lr(lr, 0.25, 0, 4, 1, 3), lr), "the first step: the one warmup step reaches the peak");
    CHECK(near(schedule_cycle_lr(lr, 0.25, 1, 4, 1, 3), lr), "the decay begins at the peak");
    CHECK(near(schedule_cycle_lr(lr, 0.25, 2, 4, 1, 3), 0.75 * lr), "1/3 of the decay: 0.5 (1 + cos(pi/3))");
    CHECK(near(schedule_cycle_lr(lr, 0.25, 3, 4, 1, 3), 0.25 * lr), "2/3 of it, the first cycle's end");
    CHECK(near(schedule_cycle_lr(lr, 0.25, 4, 4, 1, 3), lr / 2), "the second cycle starts again: 1 of 2 warmup steps");
    CHECK(near(schedule_cycle_lr(lr, 0.25, 5, 4, 1, 3), lr), "then the peak");
    /* step 11: progress 5/6 of the second cycle's decay, 0.5 * (1 + cos(5pi/6)) = 0.5 * (1 - 0.8660254037844386) */
    CHECK(near(schedule_cycle_lr(lr, 0.25, 11, 4, 1, 3), lr * 0.5 * (1 - 0.8660254037844386)), "the run's last step");
    /* one cycle is the plain schedule, to the bit */
    int same = 1;
    for (long s = 0; s < 12 * 7; s++)
        same &= schedule_cycle_lr(lr, 0.1, s, 7, 12, 12) == schedule_lr(lr, s, schedule_warmup_steps(0.1, 84), 84);
    CHECK(same, "--cycle equal to --epochs gives schedule_lr's rates exactly");
}

int main(void) {
    test_cycles();
    test_swa_start();
    test_warmup_steps();
    test_lr();
    test_shuffle();
    test_group_by_length();
    test_auto_epochs();
    return check_summary("test_schedule");
}
