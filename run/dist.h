/* dist.h: data-parallel training over MPI: the process's rank and size,
 * the split of a batch across ranks and reductions in a fixed order, so a
 * given number of ranks always reproduces itself bit for bit. Without MPI
 * (built without USE_MPI, or not started by mpirun) it is rank 0 of 1. */
#ifndef DIST_H
#define DIST_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Who this process is. Made once in main and passed down; never changed. */
typedef struct {
    int rank;     /* 0 .. size-1; rank 0 prints and writes files */
    int size;     /* number of processes in the job */
    int mpi;      /* 1 when MPI was started (size may still be 1) */
    FILE *log;    /* set by the caller: where a rank says why it ends the whole job (MPI_Abort); NULL: silent */
} DistContext;

/* Rank 0 of 1, no MPI: for code paths that run as one process. */
DistContext dist_solo(void);

/* 1 when this binary was built with MPI (make MPI=1). */
int dist_built_with_mpi(void);

/* Starts MPI when an MPI launcher (mpirun, srun) started this process;
 * otherwise the context is dist_solo(). Ranks other than 0 get stdout
 * pointed at /dev/null; stderr stays. Returns 0, or -1 with a message. */
int dist_init(DistContext *ctx, int *argc, char ***argv, char *err, size_t errlen);

/* Ends MPI and returns the exit code to use. rc 0 and rc_agreed (a code
 * every rank reaches together, like an interrupt) finalize normally; any
 * other rc aborts the whole job, as other ranks may be waiting for this one. */
int dist_finish(const DistContext *ctx, int rc, int rc_agreed);

/* The fixed split of n items: rank takes [*begin, *end) = [n*rank/size, n*(rank+1)/size). */
void dist_slice(long n, int rank, int size, long *begin, long *end);

/* Sums values (n doubles) over all ranks, adding rank 0, 1, ... in order;
 * every rank gets the sum. */
void dist_sum_doubles(const DistContext *ctx, double *values, int n);

/* Replaces values (n doubles) with rank 0's. */
void dist_share_rank0(const DistContext *ctx, double *values, int n);

/* The largest value over all ranks (order does not matter for a maximum). */
int dist_max_int(const DistContext *ctx, int value);

/* Every rank's n_mine ints, concatenated in rank order, into all (which
 * holds the sum of the n_mine of all ranks); a rank may give 0. */
void dist_gather_ints(const DistContext *ctx, const int *mine, int n_mine, int *all);

/* Every rank's n_mine bytes, concatenated in rank order, into *all (malloc'd;
 * the caller frees it) of *n_all bytes. 0, or -1 with a message in err when
 * the total passes INT_MAX bytes or memory runs out (MPI: then the job ends). */
int dist_gather_bytes(const DistContext *ctx, const char *mine, long n_mine, char **all, long *n_all, char *err,
                      size_t errlen);

/* The first rank whose value differs from rank 0's, or -1 when all agree. */
int dist_first_mismatch(const DistContext *ctx, uint64_t value);

/* Weighted sum of a float vector over ranks: data = sum over r of
 * weights[r] * data_r, in double with one rounding, rank 0 first. Each rank
 * sums one contiguous chunk (a reduce-scatter by all-to-all), then the
 * chunks are shared (all-gather): bandwidth as a ring all-reduce, and an
 * order that does not depend on the MPI library's algorithms. */
typedef struct DistReducer DistReducer;

/* Buffers for vectors of n floats. NULL with a message on failure. */
DistReducer *dist_reducer_create(const DistContext *ctx, size_t n, char *err, size_t errlen);
void dist_reducer_free(DistReducer *r);
/* weights has ctx->size entries, the same on every rank. */
void dist_weighted_sum(DistReducer *r, float *data, const double *weights);

#endif
