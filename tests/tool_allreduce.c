/* tool_allreduce.c: the time of one training step's gradient sum over MPI
 * ranks (dist_weighted_sum in run/dist.c, the call train_step makes) against
 * the gradient size. Run under mpirun; rank 0 prints one line per size:
 *
 *   floats bytes ms_per_sum ring_GB_s
 *
 * ring_GB_s is the bandwidth a ring all-reduce would need for that time,
 * 2(N-1)/N x bytes / time (scripts/bench-mpi.sh turns it into projections).
 *
 *   mpirun -np N tool_allreduce [FLOATS ...]     (default: 1e4 1e5 5e5 1e6 4e6)
 *
 * Built without MPI, or started without mpirun, it times the one-rank copy. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "run/dist.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Mean seconds of one weighted sum of n floats, rank 0's measurement. */
static int time_sum(const DistContext *ctx, size_t n, double *seconds) {
    char err[256];
    DistReducer *r = dist_reducer_create(ctx, n, err, sizeof err);
    float *data = malloc(sizeof(float) * n);
    double *weights = malloc(sizeof(double) * ctx->size);
    if (!r || !data || !weights) {
        fprintf(stderr, "tool_allreduce: %s\n", r ? "out of memory" : err);
        dist_reducer_free(r);
        free(data);
        free(weights);
        return -1;
    }
    for (size_t i = 0; i < n; i++) data[i] = (float)(i % 1000) * 1e-3f;
    for (int k = 0; k < ctx->size; k++) weights[k] = 1.0 / ctx->size;
    /* about 0.2 s of data moved per size at 1 GB/s, at least 5 and at most 200 calls */
    long reps = (long)(2e8 / (4.0 * (double)n));
    reps = reps < 5 ? 5 : reps > 200 ? 200 : reps;
    for (int w = 0; w < 2; w++) dist_weighted_sum(r, data, weights);
    dist_max_int(ctx, 0);   /* every rank starts the clock together */
    double start = now_seconds();
    for (long i = 0; i < reps; i++) dist_weighted_sum(r, data, weights);
    double t = (now_seconds() - start) / reps;
    dist_share_rank0(ctx, &t, 1);
    *seconds = t;
    dist_reducer_free(r);
    free(data);
    free(weights);
    return 0;
}

int main(int argc, char **argv) {
    DistContext ctx;
    char err[256];
    if (dist_init(&ctx, &argc, &argv, err, sizeof err) != 0) {
        fprintf(stderr, "tool_allreduce: %s\n", err);
        return 1;
    }
    static const double defaults[] = {1e4, 1e5, 5e5, 1e6, 4e6};
    int n_sizes = argc > 1 ? argc - 1 : (int)(sizeof defaults / sizeof *defaults);
    int rc = 0;
    if (ctx.rank == 0) printf("# %d ranks\n# floats bytes ms_per_sum ring_GB_s\n", ctx.size);
    for (int i = 0; i < n_sizes && rc == 0; i++) {
        double want = argc > 1 ? strtod(argv[i + 1], NULL) : defaults[i];
        if (!(want >= 1 && want <= 5e8)) {
            fprintf(stderr, "tool_allreduce: '%s' is not a size in floats (1 to 5e8)\n", argv[i + 1]);
            rc = 2;
            break;
        }
        size_t n = (size_t)want;
        double t;
        if (time_sum(&ctx, n, &t) != 0) {
            rc = 1;
            break;
        }
        double bytes = 4.0 * (double)n, moved = 2.0 * (ctx.size - 1) / ctx.size * bytes;
        if (ctx.rank == 0) printf("%zu %.0f %.4f %.3f\n", n, bytes, 1e3 * t, t > 0 ? moved / t / 1e9 : 0.0);
    }
    return dist_finish(&ctx, rc, -1);
}
