/* threads.h: the size of the OpenMP team, fitted to the cores other programs
 * leave free.
 *
 * Why: OpenMP threads spin at every barrier. When another program keeps one
 * of the cores busy, the thread sharing that core with it is descheduled for
 * whole time slices while its partner spins waiting for it, and a step can
 * take several times as long as on one thread (measured: an 8-epoch run on
 * two threads took 5-6 s beside `yes > /dev/null`, 2 s on one thread).
 * Sleeping at barriers instead (OMP_WAIT_POLICY=passive) costs 50% on a
 * quiet machine, and libgomp reads its wait policy only once, at load time.
 *
 * So the program measures, about every THREADS_WINDOW seconds, how much CPU
 * time the rest of the machine used (all CPUs' busy time from /proc/stat,
 * steal included, minus this process's own CPU time) and runs its parallel
 * regions on the cores that are left: with one core taken by another
 * program, on one thread; on a quiet machine, on all threads asked for, with
 * no change at all from before. Results do not depend on the team size (every
 * parallel loop owns its outputs and sums in a fixed order), so the switch
 * changes the speed only.
 *
 * threads_adapt(state) is called once per forward pass, on the thread that
 * owns the model, outside any parallel region, with the model's own state
 * (zeroed to start: no global state here); it costs one clock read except
 * when a window ends. The team never grows past what was asked for
 * (--threads, OMP_NUM_THREADS or all cores): omp_set_num_threads from the
 * program is taken as the new ceiling. Where /proc/stat is missing or there
 * is no OpenMP, it does nothing.
 *
 * Only model.c includes this file and its functions are static: the files
 * that compile model.c again in double (tests/test_f64_grad.c, the gradient
 * test; model/f64.c, trace --backward's check) take these along. */
#ifndef NN_THREADS_H
#define NN_THREADS_H

#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Length of one measurement window, in seconds: long enough for the tick
 * counts of /proc/stat (1/100 s per CPU) to resolve a tenth of a core. */
#define THREADS_WINDOW 0.1
/* A thread is given up when others use more than this fraction of a core
 * beyond the cores already given up, and taken back when they use less than
 * THREADS_TAKE_BACK: a gap, so that the decision does not flicker. */
#define THREADS_GIVE_UP 0.4
#define THREADS_TAKE_BACK 0.25

typedef struct {
    int state;        /* 0: not started, 1: measuring, -1: off (no /proc/stat) */
    int ceiling;      /* the team size asked for */
    int team;         /* the team size set here last */
    int cpus;         /* CPUs online */
    double wall, cpu; /* start of the window: monotonic clock, this process's CPU time */
    double busy;      /* start of the window: all CPUs' busy seconds */
} ThreadsAdapt;

static double threads_clock(clockid_t id) {
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0) return 0.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy seconds of all CPUs since boot: every field of /proc/stat's first
 * line but idle and iowait (guest time is already inside user). Returns a
 * negative value when the file cannot be read. */
static double threads_machine_busy(void) {
    char buf[512];
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1.0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 5) return -1.0;
    buf[n] = '\0';
    if (buf[0] != 'c' || buf[1] != 'p' || buf[2] != 'u' || buf[3] != ' ') return -1.0;
    /* user nice system idle iowait irq softirq steal */
    unsigned long long field[8] = {0};
    char *p = buf + 4;
    for (int i = 0; i < 8; i++) {
        char *end;
        field[i] = strtoull(p, &end, 10);
        if (end == p) {
            if (i < 4) return -1.0;
            break;
        }
        p = end;
    }
    unsigned long long busy = field[0] + field[1] + field[2] + field[5] + field[6] + field[7];
    long hz = sysconf(_SC_CLK_TCK);
    return (double)busy / (double)(hz > 0 ? hz : 100);
}

static void threads_adapt(ThreadsAdapt *s) {
#ifdef _OPENMP
    if (s->state < 0 || omp_in_parallel()) return;
    int asked = omp_get_max_threads();
    if (s->state == 0 || asked != s->team) {
        /* first call, or the program set the thread count itself */
        s->ceiling = asked;
        s->team = asked;
        if (s->state == 0) {
            long cpus = sysconf(_SC_NPROCESSORS_ONLN);
            s->cpus = cpus > 0 ? (int)cpus : 1;
        }
        s->busy = threads_machine_busy();
        if (s->busy < 0.0) {
            s->state = -1;
            return;
        }
        s->wall = threads_clock(CLOCK_MONOTONIC);
        s->cpu = threads_clock(CLOCK_PROCESS_CPUTIME_ID);
        s->state = 1;
        return;
    }
    if (s->ceiling <= 1) return;
    double wall = threads_clock(CLOCK_MONOTONIC);
    if (wall - s->wall < THREADS_WINDOW) return;
    double cpu = threads_clock(CLOCK_PROCESS_CPUTIME_ID), busy = threads_machine_busy();
    if (busy < 0.0) {
        s->state = -1;
        return;
    }
    /* cores the rest of the machine kept busy during the window */
    double others = ((busy - s->busy) - (cpu - s->cpu)) / (wall - s->wall);
    if (others < 0.0) others = 0.0;
    double free_cores = s->cpus - others;
    int give_up = (int)(free_cores + THREADS_GIVE_UP);
    int take_back = (int)(free_cores + THREADS_TAKE_BACK);
    int team = s->team;
    if (give_up < team) team = give_up;
    else if (take_back > team) team = take_back;
    if (team > s->ceiling) team = s->ceiling;
    if (team < 1) team = 1;
    if (team != s->team) {
        omp_set_num_threads(team);
        s->team = team;
    }
    s->wall = wall;
    s->cpu = cpu;
    s->busy = busy;
#else
    (void)s;
#endif
}

#endif
