#!/usr/bin/env bash
# bench-mpi.sh: the MPI part of `make bench`.
# 1. Training tokens/s of 2 MPI ranks x 1 thread against 1 process x 2 threads: same data
#    (two synthetic sets, 4000 examples), model and batch; tokens/s is the mean of
#    metrics.csv over the epochs after the first (warm-up). One line.
# 2. The gradient sum (dist_weighted_sum, build/tests/tool_allreduce) per step against the
#    gradient size for 2 and 4 ranks on this machine, and from a ring all-reduce model,
#    2(N-1)/N x bytes / bandwidth, the step time of the small and wide configs (docs/DESIGN.md §9)
#    for 8, 64 and 512 ranks on 10 and 100 Gbit/s links, one rank per machine, each with
#    the per-rank batch of 32 whose compute time tool_bench measures at 1 thread here.
# 3. Peak memory of each of 2 and 4 ranks against one process on 1M generated lines
#    (scripts/mpi-memory.sh): a rank holds only its share of the data.
# Environment: BENCH_MPI_EPOCHS (3), BENCH_MPI_MODEL (model options), BENCH_MPI_THROUGHPUT
# (1; 0 skips part 1), BENCH_MPI_LATENCY_US (20), BENCH_MPI_MEMORY_LINES (1000000).
set -euo pipefail
cd "$(dirname "$0")/.."

LABEL="2 ranks x 1 thread vs 1 process x 2 threads"
if ! command -v mpirun >/dev/null 2>&1; then
    echo "$LABEL: skipped, MPI not installed (apt-get install -y libopenmpi-dev openmpi-bin)"
    exit 0
fi
if ! ./train --version | grep -qx 'mpi: yes'; then
    echo "$LABEL: skipped, ./train was built without MPI (make MPI=1)"
    exit 0
fi

EPOCHS=${BENCH_MPI_EPOCHS:-3}
read -r -a MODEL <<<"${BENCH_MPI_MODEL:---d-model 64 --heads 4 --d-ff 256 --layers 2 --max-len 64 --batch-size 32}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat data/negation/train.tsv data/before/train.tsv | grep -v '^#' >"$tmp/data.tsv"
ARGS=("$tmp/data.tsv" "${MODEL[@]}" --epochs "$EPOCHS" --val-split 0 --quiet)

# Mean tokens/s (last column of metrics.csv) over the epochs after the first.
tokens_per_s() {
    awk -F, 'NR > 2 { sum += $NF; n++ } END { printf "%.0f", n ? sum / n : 0 }' "$1/metrics.csv"
}

if [ "${BENCH_MPI_THROUGHPUT:-1}" != 0 ]; then
    ./train "${ARGS[@]}" --threads 2 --out "$tmp/threads" >/dev/null
    mpirun --allow-run-as-root --oversubscribe -np 2 ./train "${ARGS[@]}" --threads 1 --out "$tmp/ranks" >/dev/null
    ranks=$(tokens_per_s "$tmp/ranks")
    threads=$(tokens_per_s "$tmp/threads")
    ratio=$(awk -v a="$ranks" -v b="$threads" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
    echo "$LABEL: $ranks vs $threads tokens/s, ratio $ratio (${MODEL[*]}, $EPOCHS epochs)"
fi

# ------------------------------------------------ 2. the gradient sum and its projection
ALLREDUCE=build/tests/tool_allreduce
BENCH=build/tests/tool_bench
[ -x "$ALLREDUCE" ] && [ -x "$BENCH" ] || { echo "gradient sum: skipped, make $ALLREDUCE $BENCH first"; exit 0; }
json_get() { sed -E "s/.*\"$1\": \"?([^,\"}]*).*/\1/" <<<"$2"; }
declare -A params ms
for config in small wide; do
    json=$(OMP_NUM_THREADS=1 "$BENCH" --config "$config" --steps 5 --warmup 1)
    params[$config]=$(json_get n_params "$json")
    ms[$config]=$(json_get ms_per_step "$json")
done
echo
echo "gradient sum per step (dist_weighted_sum), ranks on this machine (shared memory):"
echo "ranks   floats      MB   ms/sum  ring GB/s"
for n in 2 4; do
    mpirun --allow-run-as-root --oversubscribe -np "$n" "$ALLREDUCE" 1e4 1e5 "${params[small]}" 1e6 "${params[wide]}" |
        awk -v n="$n" '!/^#/ { printf "%5d %8d %7.2f %8.3f %10.2f\n", n, $1, $2 / 1e6, $3, $4 }'
done
echo
# Per-hop latency of the ring's 2(N-1) steps: 20 us, a TCP/Ethernet figure (RDMA: a few us).
LATENCY_US=${BENCH_MPI_LATENCY_US:-20}
echo "projection: ring all-reduce 2(N-1)/N x 4 x params bytes / link bandwidth, plus 2(N-1) x $LATENCY_US us latency;"
echo "compute = one step of batch 32 per rank at 1 thread, measured here (small ${ms[small]} ms, ${params[small]} params;"
echo "wide ${ms[wide]} ms, ${params[wide]} params). comm% = share of the step spent communicating;"
echo "accumK = gradients of K micro-batches summed locally before one all-reduce (comm% then);"
echo "K(10%) = the smallest K that brings communication to 10% of the step or less."
echo "config  ranks  Gbit/s  compute_ms  bw_ms  lat_ms  step_ms  comm%  accum4  accum16  K(10%)"
for config in small wide; do
    for n in 8 64 512; do
        for gbit in 10 100; do
            awk -v c="$config" -v n="$n" -v g="$gbit" -v p="${params[$config]}" -v t="${ms[$config]}" \
                -v lat="$LATENCY_US" 'BEGIN {
                bw = 2 * (n - 1) / n * 4 * p * 8 / (g * 1e9) * 1e3; l = 2 * (n - 1) * lat / 1e3; comm = bw + l
                k = 1; while (comm / (k * t + comm) > 0.10) k++
                printf "%-6s %6d %7d %11.1f %6.2f %7.2f %8.1f %5.0f%% %6.0f%% %7.0f%% %7d\n", c, n, g, t, bw, l,
                       t + comm, 100 * comm / (t + comm), 100 * comm / (4 * t + comm), 100 * comm / (16 * t + comm), k }'
        done
    done
done

# ------------------------------------------------ 3. each rank's memory
# A rank holds only its share of the data: peak RSS of 2 and 4 ranks against one process on 1M lines.
echo
bash scripts/mpi-memory.sh "${BENCH_MPI_MEMORY_LINES:-1000000}" 2 4 | grep -v '^REPORT' || true
