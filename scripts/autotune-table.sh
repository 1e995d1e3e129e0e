#!/usr/bin/env bash
# autotune-table.sh: issue 41's autotune rows, one line a set, from runs made as
#   /usr/bin/time -f "NAME wall %e s" ./train data/NAME/train.tsv --test data/NAME/test.tsv \
#       --autotune 10m --seed 42 --threads 1 --out DIR/NAME >DIR/NAME.log 2>&1
#   ./train data/NAME/train.tsv --test data/NAME/test.tsv --seed 42 --threads 1 \
#       --quiet --out DIR/def-NAME                      (the defaults, same seed)
# and the defaults' seeds in build/compare/NAME.tsv (scripts/compare-fasttext.sh):
#   bash scripts/autotune-table.sh DIR NAME...
# Columns: trials run, the winner and its validation accuracy against trial 1's
# (the defaults), the winner's test accuracy, the defaults' at the same seed
# and over the compared seeds, fastText's best (of build/compare/NAME.tsv),
# and the autotune's whole time.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR NAME..." >&2; exit 2; }
dir=$(cd "$1" && pwd)
shift
cd "$(dirname "$0")/.."
# the test accuracy of a run's report: the accuracy line after "test ("
test_acc() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt" 2>/dev/null || true; }
# a number field of a JSON line: json_field LINE KEY
json_field() { sed -nE "s/.*\"$2\": ([0-9.]+).*/\1/p" <<<"$1"; }
echo "| set | trials | winner | winner val acc | defaults' val acc | winner test | defaults test, seed 42 | defaults test, seeds 1-3 (mean ± (max - min)) | fastText best | winner - defaults (seed 42) | autotune s |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for name in "$@"; do
    run=$dir/$name
    if [ ! -s "$run/trials.jsonl" ] || [ ! -s "$run/report.txt" ]; then
        echo "| $name | not measured | | | | | | | | | |"
        continue
    fi
    # RUN/trials.jsonl: a line a trial, trial 1 the options as given, then {"winner": N, "trials": M, ...}
    win=$(grep -m1 '^{"winner"' "$run/trials.jsonl" || true)
    first=$(grep -m1 '^{"trial": 1,' "$run/trials.jsonl" || true)
    wtrial=$(json_field "$win" winner)
    trials=$(json_field "$win" trials)
    wval=$(json_field "$win" val_acc)
    dval=$(json_field "$first" val_acc)
    if [ -z "$wtrial" ] || [ -z "$trials" ] || [ -z "$wval" ] || [ -z "$dval" ]; then
        echo "autotune-table: $run/trials.jsonl has no winner or no trial 1 (an autotune not ended?)" >&2
        exit 1
    fi
    wval=$(printf "%.4f" "$wval")
    dval=$(printf "%.4f" "$dval")
    wtest=$(test_acc "$run")
    dtest=$(test_acc "$dir/def-$name")
    compare=build/compare/$name.tsv
    seeds=- best=-
    if [ -s "$compare" ]; then
        seeds=$(awk -F'\t' '$1 == "ours" { n++; s += $4; if (n == 1 || $4 < lo) lo = $4; if (n == 1 || $4 > hi) hi = $4 }
                            END { if (n) printf "%.4f ± %.4f", s / n, hi - lo; else printf "-" }' "$compare")
        best=$(awk -F'\t' 'NR > 1 && $1 == "fasttext" { if (!m++ || $4 > b) b = $4 } END { if (m) printf "%.4f", b; else printf "-" }' "$compare")
    fi
    diff=-
    [ -n "$wtest" ] && [ -n "$dtest" ] && diff=$(awk -v a="$wtest" -v b="$dtest" 'BEGIN { printf "%+.4f", a - b }')
    wall=$(awk -v n="$name" '$1 == n && $2 == "wall" { printf "%.0f", $3 }' "$dir/$name.log" 2>/dev/null || true)
    printf "| %s | %s | trial %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$trials" "$wtrial" "$wval" "$dval" \
        "${wtest:--}" "${dtest:-not run}" "$seeds" "$best" "$diff" "${wall:--}"
done
