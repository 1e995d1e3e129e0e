/* schedule.h: what changes from step to step of a run and is a pure
 * function of its position: the learning rate (linear warmup, then cosine
 * decay; docs/DESIGN.md §4.6) and the order of the examples in each epoch. */
#ifndef RUN_SCHEDULE_H
#define RUN_SCHEDULE_H

#include <stdint.h>

/* The learning rate at step (from 0) of total_steps: linear warmup from
 * lr/W at the first step to lr at step W-1, then cosine decay toward 0
 * over the remaining steps. */
double schedule_lr(double lr, long step, long warmup_steps, long total_steps);
/* Optimizer steps in an epoch of n examples: batches of batch_size, the
 * last one partial. */
int schedule_steps_per_epoch(int n, int batch_size);
/* --epochs auto: the epochs that make about SCHEDULE_AUTO_STEPS steps over n
 * training examples, rounded, within [SCHEDULE_AUTO_MIN, SCHEDULE_AUTO_MAX]. */
#define SCHEDULE_AUTO_STEPS 1200
#define SCHEDULE_AUTO_MIN 2
#define SCHEDULE_AUTO_MAX 40
int schedule_auto_epochs(int n, int batch_size);
/* --warmup below 1 is a fraction of all steps (rounded), 1 or more a step
 * count; never more than total_steps. */
long schedule_warmup_steps(double warmup, long total_steps);
/* --cycle: a run's epochs fall into cycles of cycle, 2 cycle, 4 cycle, ...
 * epochs, each its own warmup and cosine decay, the last cut at epochs
 * (cycle 0 or >= epochs: one cycle, the plain schedule). The first and
 * last epoch (from 1) of the cycle holding epoch. */
#define SCHEDULE_CYCLE_AUTO 10
void schedule_cycle(int epoch, int cycle, int epochs, int *first, int *last);
/* The learning rate at global step (from 0) of a run of epochs x
 * steps_per_epoch steps in cycles: schedule_lr within the step's cycle,
 * with --warmup taken of the cycle's steps. */
double schedule_cycle_lr(double lr, double warmup, long step, int steps_per_epoch, int cycle, int epochs);
/* --swa: the first epoch whose end weights join the average, or 0 when
 * the fraction rounds to fewer than 2 of the epochs (averaging one epoch
 * would be its weights: off). The last round(fraction x epochs) epochs. */
int schedule_swa_start(double fraction, int epochs);
/* order = a permutation of 0..n-1, Fisher-Yates keyed by (seed, epoch). */
void schedule_shuffle(int *order, int n, uint64_t seed, int epoch);
/* --group-by-length: order (a shuffle) cut into windows of SCHEDULE_GROUP_BATCHES
 * batches, each sorted by lengths[] (ties keep their shuffled order), then the
 * full batches' order shuffled, keyed by (seed, epoch); a last partial batch
 * stays last. work: (n) ints. */
#define SCHEDULE_GROUP_BATCHES 50
void schedule_group_by_length(int *order, int n, const int *lengths, int batch_size, uint64_t seed, int epoch,
                              int *work);

#endif
