/* dist.c: MPI for data-parallel training (dist.h); without USE_MPI the same calls act as rank 0 of 1. */
#include "run/dist.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/errors.h"
#ifdef USE_MPI
#include <mpi.h>
#endif

DistContext dist_solo(void) {
    DistContext ctx = {.rank = 0, .size = 1, .mpi = 0};
    return ctx;
}

int dist_built_with_mpi(void) {
#ifdef USE_MPI
    return 1;
#else
    return 0;
#endif
}

/* An environment variable as a count, or -1 when unset or not a number. */
static long env_count(const char *name) {
    const char *s = getenv(name);
    if (!s || !*s) return -1;
    char *end;
    long v = strtol(s, &end, 10);
    return *end || v < 0 ? -1 : v;
}

/* The job size an MPI launcher announced (Open MPI, MPICH/Hydra, PMIx),
 * 0 when launched with an unknown size, -1 when no launcher started us. */
static long launcher_size(void) {
    const char *sizes[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        long v = env_count(sizes[i]);
        if (v >= 0) return v;
    }
    return getenv("PMI_RANK") || getenv("PMIX_RANK") ? 0 : -1;
}

void dist_slice(long n, int rank, int size, long *begin, long *end) {
    *begin = n * rank / size;
    *end = n * (rank + 1) / size;
}

/* ------------------------------------------------------ the weighted sum */

struct DistReducer {
    DistContext ctx;
    size_t n;
    int *counts, *displs;             /* (size) each rank's chunk of the vector */
    int *recv_counts, *recv_displs;   /* (size) this rank's chunk as sent by each rank */
    float *received;                  /* (size x this chunk) every rank's copy of this rank's chunk */
};

void dist_reducer_free(DistReducer *r) {
    if (!r) return;
    free(r->counts);
    free(r->displs);
    free(r->recv_counts);
    free(r->recv_displs);
    free(r->received);
    free(r);
}

DistReducer *dist_reducer_create(const DistContext *ctx, size_t n, char *err, size_t errlen) {
    if (n > INT_MAX) {
        set_error(err, errlen, "%zu parameters are too many for one MPI message (at most %d)", n, INT_MAX);
        return NULL;
    }
    DistReducer *r = calloc(1, sizeof *r);
    int size = ctx->size;
    if (r) {
        r->ctx = *ctx;
        r->n = n;
        r->counts = malloc(sizeof(int) * size);
        r->displs = malloc(sizeof(int) * size);
        r->recv_counts = malloc(sizeof(int) * size);
        r->recv_displs = malloc(sizeof(int) * size);
    }
    if (!r || !r->counts || !r->displs || !r->recv_counts || !r->recv_displs) {
        dist_reducer_free(r);
        set_error(err, errlen, "out of memory");
        return NULL;
    }
    for (int k = 0; k < size; k++) {
        long begin, end;
        dist_slice((long)n, k, size, &begin, &end);
        r->counts[k] = (int)(end - begin);
        r->displs[k] = (int)begin;
    }
    long my_begin, my_end;
    dist_slice((long)n, ctx->rank, size, &my_begin, &my_end);
    int mine = (int)(my_end - my_begin);
    for (int k = 0; k < size; k++) {
        r->recv_counts[k] = mine;
        r->recv_displs[k] = k * mine;
    }
    r->received = malloc(sizeof(float) * ((size_t)mine * size + 1));
    if (!r->received) {
        dist_reducer_free(r);
        set_error(err, errlen, "out of memory");
        return NULL;
    }
    return r;
}

/* This rank's chunk of data = the weighted sum of every rank's copy, rank 0 first. */
static void sum_own_chunk(DistReducer *r, float *data, const double *weights) {
    int mine = r->counts[r->ctx.rank], size = r->ctx.size;
    float *out = data + r->displs[r->ctx.rank];
    const float *copies = r->received;
    #pragma omp parallel for schedule(static) if (mine > 65536)
    for (int i = 0; i < mine; i++) {
        double sum = 0.0;
        for (int k = 0; k < size; k++) sum += weights[k] * (double)copies[(size_t)k * mine + i];
        out[i] = (float)sum;
    }
}

/* One rank's gather: a copy. */
static int copy_bytes(const char *mine, long n_mine, char **all, long *n_all, char *err, size_t errlen) {
    *all = malloc((size_t)n_mine + 1);
    if (!*all) {
        set_error(err, errlen, "out of memory");
        return -1;
    }
    if (n_mine) memcpy(*all, mine, (size_t)n_mine);
    *n_all = n_mine;
    return 0;
}

/* ------------------------------------------------------------ transport */

#ifdef USE_MPI

int dist_init(DistContext *ctx, int *argc, char ***argv, char *err, size_t errlen) {
    *ctx = dist_solo();
    if (launcher_size() < 0) return 0;   /* a plain process: no MPI start-up cost */
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
        set_error(err, errlen, "MPI_Init failed");
        return -1;
    }
    ctx->mpi = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->size);
    if (ctx->rank != 0 && !freopen("/dev/null", "w", stdout)) {
        set_error(err, errlen, "rank %d: cannot point stdout at /dev/null", ctx->rank);
        return -1;
    }
    return 0;
}

int dist_finish(const DistContext *ctx, int rc, int rc_agreed) {
    if (!ctx->mpi) return rc;
    fflush(NULL);   /* every output stream, before MPI may end the process */
    if (rc == 0 || rc == rc_agreed || ctx->size == 1) MPI_Finalize();
    else MPI_Abort(MPI_COMM_WORLD, rc);
    return rc;
}

/* A small buffer for collectives; running out of memory here ends the job
 * (the other ranks wait inside the collective: no status can reach them),
 * saying why on the context's log. */
static void *job_alloc(const DistContext *ctx, size_t bytes) {
    void *p = malloc(bytes);
    if (!p) {
        if (ctx->log) fprintf(ctx->log, "error: out of memory in an MPI collective\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

void dist_sum_doubles(const DistContext *ctx, double *values, int n) {
    if (ctx->size == 1) return;
    /* called every step with a few values: no allocation unless the job is huge */
    double local[256];
    size_t count = (size_t)n * ctx->size;
    double *all = count <= sizeof local / sizeof *local ? local : job_alloc(ctx, sizeof(double) * count);
    MPI_Allgather(values, n, MPI_DOUBLE, all, n, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++) {
        double sum = 0.0;
        for (int k = 0; k < ctx->size; k++) sum += all[(size_t)k * n + i];
        values[i] = sum;
    }
    if (all != local) free(all);
}

void dist_share_rank0(const DistContext *ctx, double *values, int n) {
    if (ctx->size > 1) MPI_Bcast(values, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

int dist_max_int(const DistContext *ctx, int value) {
    if (ctx->size == 1) return value;
    int max;
    MPI_Allreduce(&value, &max, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return max;
}

void dist_gather_ints(const DistContext *ctx, const int *mine, int n_mine, int *all) {
    if (ctx->size == 1) {
        if (n_mine) memmove(all, mine, sizeof(int) * n_mine);
        return;
    }
    int *counts = job_alloc(ctx, sizeof(int) * 2 * ctx->size), *displs = counts + ctx->size;
    MPI_Allgather(&n_mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int k = 0, at = 0; k < ctx->size; k++) {
        displs[k] = at;
        at += counts[k];
    }
    MPI_Allgatherv(mine, n_mine, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    free(counts);
}

int dist_gather_bytes(const DistContext *ctx, const char *mine, long n_mine, char **all, long *n_all, char *err,
                      size_t errlen) {
    if (ctx->size == 1) return copy_bytes(mine, n_mine, all, n_all, err, errlen);
    int *counts = job_alloc(ctx, sizeof(int) * 2 * ctx->size), *displs = counts + ctx->size;
    int mine_int = n_mine > INT_MAX ? -1 : (int)n_mine;
    MPI_Allgather(&mine_int, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    long total = 0;
    for (int k = 0; k < ctx->size; k++) {
        if (counts[k] < 0 || total + counts[k] > INT_MAX) {
            free(counts);
            set_error(err, errlen, "MPI: more than %d bytes to gather over the ranks", INT_MAX);
            return -1;
        }
        displs[k] = (int)total;
        total += counts[k];
    }
    *all = job_alloc(ctx, (size_t)total + 1);
    MPI_Allgatherv(mine, mine_int, MPI_BYTE, *all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    *n_all = total;
    free(counts);
    return 0;
}

int dist_first_mismatch(const DistContext *ctx, uint64_t value) {
    if (ctx->size == 1) return -1;
    uint64_t *all = job_alloc(ctx, sizeof(uint64_t) * ctx->size);
    MPI_Allgather(&value, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, MPI_COMM_WORLD);
    int first = -1;
    for (int k = 1; k < ctx->size && first < 0; k++)
        if (all[k] != all[0]) first = k;
    free(all);
    return first;
}

void dist_weighted_sum(DistReducer *r, float *data, const double *weights) {
    if (r->ctx.size > 1)
        MPI_Alltoallv(data, r->counts, r->displs, MPI_FLOAT, r->received, r->recv_counts, r->recv_displs, MPI_FLOAT,
                      MPI_COMM_WORLD);
    else
        memcpy(r->received, data, sizeof(float) * r->n);
    sum_own_chunk(r, data, weights);
    if (r->ctx.size > 1)
        MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, r->counts, r->displs, MPI_FLOAT, MPI_COMM_WORLD);
}

#else  /* no MPI: one process */

int dist_init(DistContext *ctx, int *argc, char ***argv, char *err, size_t errlen) {
    (void)argc;
    (void)argv;
    *ctx = dist_solo();
    long size = launcher_size();
    if (size > 1) {
        set_error(err, errlen, "started by an MPI launcher with %ld processes, but this ./train was built "
                 "without MPI; install MPI (apt-get install libopenmpi-dev openmpi-bin) and rebuild "
                 "with 'make MPI=1'", size);
        return -1;
    }
    return 0;
}

int dist_finish(const DistContext *ctx, int rc, int rc_agreed) {
    (void)ctx;
    (void)rc_agreed;
    return rc;
}

void dist_sum_doubles(const DistContext *ctx, double *values, int n) {
    (void)ctx;
    (void)values;
    (void)n;
}

void dist_share_rank0(const DistContext *ctx, double *values, int n) {
    (void)ctx;
    (void)values;
    (void)n;
}

int dist_max_int(const DistContext *ctx, int value) {
    (void)ctx;
    return value;
}

void dist_gather_ints(const DistContext *ctx, const int *mine, int n_mine, int *all) {
    (void)ctx;
    if (n_mine) memmove(all, mine, sizeof(int) * n_mine);
}

int dist_gather_bytes(const DistContext *ctx, const char *mine, long n_mine, char **all, long *n_all, char *err,
                      size_t errlen) {
    (void)ctx;
    return copy_bytes(mine, n_mine, all, n_all, err, errlen);
}

int dist_first_mismatch(const DistContext *ctx, uint64_t value) {
    (void)ctx;
    (void)value;
    return -1;
}

void dist_weighted_sum(DistReducer *r, float *data, const double *weights) {
    memcpy(r->received, data, sizeof(float) * r->n);
    sum_own_chunk(r, data, weights);
}

#endif
