#!/usr/bin/env bash
# bench-mpi.sh: one row for `make bench`: training tokens/s of 2 MPI ranks x 1 thread against 1 process x 2 threads.
# Same data (two synthetic sets, 4000 examples), model and batch; tokens/s is the mean of
# metrics.csv over the epochs after the first (warm-up). Prints one line.
# Environment: BENCH_MPI_EPOCHS (3), BENCH_MPI_MODEL (model options).
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

./train "${ARGS[@]}" --threads 2 --out "$tmp/threads" >/dev/null
mpirun --allow-run-as-root --oversubscribe -np 2 ./train "${ARGS[@]}" --threads 1 --out "$tmp/ranks" >/dev/null
ranks=$(tokens_per_s "$tmp/ranks")
threads=$(tokens_per_s "$tmp/threads")
ratio=$(awk -v a="$ranks" -v b="$threads" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "$LABEL: $ranks vs $threads tokens/s, ratio $ratio (${MODEL[*]}, $EPOCHS epochs)"
