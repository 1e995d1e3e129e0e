#!/usr/bin/env bash
# precision-study.sh: issue 39's accuracy study: the defaults in one precision over several seeds on a real set.
#
#   bash scripts/precision-study.sh DATASET PRECISION [SEED...]   (seeds default: 1 2 3)
#
# Runs ./train data/DATASET/train.tsv --test data/DATASET/test.tsv --precision
# PRECISION --seed S (no other option but --out, --quiet and --threads; TRAIN
# names another binary, THREADS the threads, default 1: the results do not
# depend on them) and appends "dataset precision seed accuracy seconds" to
# build/precision/DATASET.tsv. A seed already there is not run again, so an
# interrupted study resumes. scripts/compare-fasttext.sh's rows (the same
# defaults, float32) are the float32 side where they exist.
# Exit: 0 done; 1 a run failed; 2 bad usage or missing data.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

usage() { echo "usage: $0 DATASET fp32|bf16|amx [SEED...]   (env: TRAIN=./train, THREADS=1)" >&2; exit 2; }
[ $# -ge 2 ] || usage
name=$1 prec=$2
shift 2
case $prec in fp32 | bf16 | amx) ;; *) usage ;; esac
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
train_bin=${TRAIN:-./train}
threads=${THREADS:-1}
for f in "data/$name/train.tsv" "data/$name/test.tsv"; do
    [ -s "$f" ] || { echo "precision-study: $f not found (make data builds the real sets)" >&2; exit 2; }
done
[ -x "$train_bin" ] || { echo "precision-study: $train_bin not built (make train)" >&2; exit 2; }

out=build/precision/$name
mkdir -p "$out"
tsv=build/precision/$name.tsv
[ -s "$tsv" ] || printf 'dataset\tprecision\tseed\taccuracy\tseconds\n' >"$tsv"
test_accuracy() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt" 2>/dev/null; }

for seed in "${seeds[@]}"; do
    if awk -F'\t' -v p="$prec" -v s="$seed" '$2 == p && $3 == s { found = 1 } END { exit !found }' "$tsv"; then
        continue
    fi
    run=$out/$prec-seed$seed
    rm -rf "$run"
    start=$EPOCHREALTIME
    if ! "$train_bin" "data/$name/train.tsv" --test "data/$name/test.tsv" --out "$run" --quiet --seed "$seed" \
        --precision "$prec" --threads "$threads" >"$run.log" 2>&1; then
        echo "precision-study: $name $prec seed $seed failed:" >&2
        tail -n 5 "$run.log" >&2
        exit 1
    fi
    secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    acc=$(test_accuracy "$run")
    [ -n "$acc" ] || { echo "precision-study: no test accuracy in $run/report.txt" >&2; exit 1; }
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$prec" "$seed" "$acc" "$secs" >>"$tsv"
    echo "precision-study: $name $prec seed $seed: accuracy $acc, $secs s" >&2
done
