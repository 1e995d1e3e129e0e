#!/usr/bin/env bash
# mpi-memory.sh: peak memory of each MPI rank against one process, on a
# generated dataset of LINES lines (default 1000000): each rank holds only
# its share of the data, so its data memory should be about 1/N of one
# process's, plus the model and the MPI runtime.
#
#   scripts/mpi-memory.sh [LINES [RANKS...]]      (default: 1000000, ranks 2 4)
#
# Peak RSS (VmHWM, by /usr/bin/time) of: one process, and every rank of an N-rank
# run, each on the data and on a 100-line file (the baseline: program, model,
# MPI runtime); "data" is peak minus that baseline. One short epoch of a tiny
# model (word tokens, batch 1024, 1% validation). Prints a table; with
# MPI_MEMORY_CHECK=F set, exits 1 when a rank's data memory exceeds F times
# one process's data memory / N (tests/test_mpi.sh: F 1.5 on 50000 lines).
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${1:-1000000}
shift || true
RANKS=("$@")
[ ${#RANKS[@]} -gt 0 ] || RANKS=(2 4)
TRAIN=$PWD/train
TIME=/usr/bin/time
if ! command -v mpirun >/dev/null 2>&1 || ! "$TRAIN" --version | grep -qx 'mpi: yes'; then
    echo "skip: MPI not installed or ./train built without it"
    exit 77
fi
[ -x "$TIME" ] || { echo "skip: $TIME (Debian package time) is not installed"; exit 77; }
tmp=$(mktemp -d /tmp/mpi_memory.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# LINES examples: a label and 6 to 17 words of a 5000-word vocabulary, fixed seed.
awk -v n="$LINES" 'BEGIN { srand(7); for (i = 0; i < n; i++) {
        k = 6 + int(rand() * 12); s = (rand() < 0.5 ? "pos" : "neg") "\t"
        for (j = 0; j < k; j++) s = s (j ? " " : "") "w" int(rand() * rand() * 5000)
        print s } }' >"$tmp/data.tsv"
head -n 100 "$tmp/data.tsv" >"$tmp/small.tsv"
ARGS=(--tokenizer word --d-model 8 --heads 1 --d-ff 8 --layers 1 --max-len 16 --batch-size 1024 --epochs 1
      --val-split 0.01 --threads 1 --quiet)
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)

# The largest peak RSS in MB over the processes of a run. Each process's
# /usr/bin/time appends its own line to peaks.txt (-a -o: one short write to
# a file opened for appending, so lines never mix; through mpirun's
# forwarded stderr two ranks' lines could interleave mid-line). A run that
# fails, or leaves fewer peaks than processes, ends the script with its
# output rather than a table of blanks.
largest_peak() {  # ranks (0: no mpirun), data file
    local out=$tmp/run-$1-$(basename "$2") want=$(($1 > 0 ? $1 : 1)) ok=1
    local timed=("$TIME" -a -o "$tmp/peaks.txt" -f 'peak_kb %M' "$TRAIN" "$2" "${ARGS[@]}" --out "$out")
    rm -rf "$out" "$tmp/peaks.txt"
    if [ "$1" = 0 ]; then
        "${timed[@]}" 2>"$tmp/stderr.txt" >/dev/null || ok=0
    else
        "${MPIRUN[@]}" -np "$1" "${timed[@]}" 2>"$tmp/stderr.txt" >/dev/null || ok=0
    fi
    if [ $ok = 0 ] || [ "$(grep -c '^peak_kb [0-9]*$' "$tmp/peaks.txt" 2>/dev/null)" != "$want" ]; then
        echo "error: the run on $(basename "$2") with $1 rank(s) (0: no mpirun) failed or left no peak; its output:" >&2
        cat "$tmp/stderr.txt" "$tmp/peaks.txt" >&2 2>/dev/null
        return 1
    fi
    awk '{ printf "%.1f\n", $2 / 1024 }' "$tmp/peaks.txt" | sort -n | tail -n 1
}

bytes=$(stat -c %s "$tmp/data.tsv")
one_base=$(largest_peak 0 "$tmp/small.tsv") || exit 1
one=$(largest_peak 0 "$tmp/data.tsv") || exit 1
one_data=$(awk -v a="$one" -v b="$one_base" 'BEGIN { printf "%.1f", a - b }')
printf "%d lines (%.1f MB); peak RSS in MB (baseline: the same run on 100 lines)\n" "$LINES" "$(awk -v b="$bytes" 'BEGIN { print b / 1048576 }')"
printf "%-22s %9s %9s %9s %13s\n" "run" "peak" "baseline" "data" "data x ranks"
printf "%-22s %9s %9s %9s %13s\n" "1 process" "$one" "$one_base" "$one_data" "$one_data"
status=0
for n in "${RANKS[@]}"; do
    base=$(largest_peak "$n" "$tmp/small.tsv") || exit 1
    worst=$(largest_peak "$n" "$tmp/data.tsv") || exit 1
    data=$(awk -v a="$worst" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
    printf "%-22s %9s %9s %9s %13s\n" "$n ranks (largest rank)" "$worst" "$base" "$data" \
        "$(awk -v d="$data" -v n="$n" 'BEGIN { printf "%.1f", d * n }')"
    echo "REPORT mpi memory, $LINES lines: one process $one MB peak ($one_data MB data); $n ranks: largest rank $worst MB peak ($data MB data, 1/$n of one process would be $(awk -v d="$one_data" -v n="$n" 'BEGIN { printf "%.1f", d / n }') MB)"
    if [ -n "${MPI_MEMORY_CHECK:-}" ] &&
       ! awk -v d="$data" -v o="$one_data" -v n="$n" -v f="$MPI_MEMORY_CHECK" 'BEGIN { exit !(d <= f * o / n) }'; then
        echo "FAIL: a rank of $n holds $data MB of data, more than $MPI_MEMORY_CHECK x $one_data / $n MB"
        status=1
    fi
done
exit $status
