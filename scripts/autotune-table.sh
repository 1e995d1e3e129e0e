#!/usr/bin/env bash
# autotune-table.sh: issue 41's autotune rows, one line a set, from runs made as
#   /usr/bin/time -f "NAME wall %e s" ./train data/NAME/train.tsv --test data/NAME/test.tsv \
#       --autotune 10m --seed SEED --threads 1 --out DIR/NAME >DIR/NAME.log 2>&1
#   ./train data/NAME/train.tsv --test data/NAME/test.tsv --seed SEED --threads 1 \
#       --quiet --out DIR/def-NAME                      (the defaults, same seed)
#   bash scripts/autotune-table.sh DIR NAME...
# and, when DIR/ft-NAME exists, fastText's autotune of the same duration on
# the same 80/20 split of train.tsv that compare-fasttext.sh makes: its
# `fasttext test` output in DIR/ft-NAME/test and "rc RC train_s S total_s S"
# in DIR/ft-NAME/time.
# Columns: trials run; the best trial on validation and its accuracy against
# trial 1's (the options as given); the validation examples and one standard
# error of a validation accuracy at the best's, sqrt(p (1 - p) / n); the
# choice (the best, or trial 1 when the lead is within that error); the
# test accuracies of the best, the defaults and the choice; the autotune's
# whole time. A record made before the choice had the rule (no "best" in
# its winner's line: its winner is the best) gets the rule's choice worked
# out here, in the same millionths; its test accuracy is then the best's
# report or the defaults' run.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DIR NAME..." >&2; exit 2; }
dir=$(cd "$1" && pwd)
shift
# the test accuracy of a run's report: the accuracy line after "test ("
test_acc() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt" 2>/dev/null || true; }
# a number field of a JSON line: json_field LINE KEY
json_field() { sed -nE "s/.*\"$2\": ([0-9.]+).*/\1/p" <<<"$1"; }
# A - B to 4 decimals, signed; "-" when either is missing
minus() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || a == "" || b == "-" || b == "") print "-"; else printf "%+.4f", a - b }'; }
echo "| set | trials | best on validation | its val acc | trial 1's val acc | val n | one standard error | choice | best's test | defaults' test | choice's test | choice - defaults | autotune s | fastText autotune test | its s | choice - fastText autotune |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for name in "$@"; do
    run=$dir/$name
    if [ ! -s "$run/trials.jsonl" ]; then
        echo "| $name | not measured | | | | | | | | | | | | | | |"
        continue
    fi
    # RUN/trials.jsonl: a line a trial, trial 1 the options as given, then {"winner": N, "trials": M, ...}
    win=$(grep -m1 '^{"winner"' "$run/trials.jsonl" || true)
    first=$(grep -m1 '^{"trial": 1,' "$run/trials.jsonl" || true)
    winner=$(json_field "$win" winner)
    trials=$(json_field "$win" trials)
    best=$(json_field "$win" best)
    fval=$(json_field "$first" val_acc)
    n=$(json_field "$first" val_n)
    [ -n "$n" ] || n=$(grep -o -m1 '[0-9]* validation' "$run/trials/001/train.log" 2>/dev/null | cut -d' ' -f1 || true)
    if [ -z "$winner" ] || [ -z "$trials" ] || [ -z "$fval" ] || [ -z "$n" ]; then
        echo "autotune-table: $run has no winner, no trial 1 or no validation count (an autotune not ended?)" >&2
        exit 1
    fi
    [ -n "$best" ] || best=$winner   # a record from before the rule: its winner is the best
    bval=$(json_field "$(grep -m1 "^{\"trial\": $best," "$run/trials.jsonl")" val_acc)
    se=$(awk -v p="$bval" -v n="$n" 'BEGIN { printf "%.6f", sqrt(p * (1 - p) / n) }')
    choice=$(awk -v b="$bval" -v f="$fval" -v e="$se" -v best="$best" \
        'BEGIN { lead = int((b - f) * 1e6 + (b >= f ? 0.5 : -0.5)); err = int(e * 1e6 + 0.5); print lead <= err ? 1 : best }')
    if grep -q '"best"' <<<"$win" && [ "$choice" != "$winner" ]; then
        echo "autotune-table: $run chose trial $winner, the rule here says $choice" >&2
        exit 1
    fi
    dtest=$(test_acc "$dir/def-$name")
    btest=-
    [ "$winner" = "$best" ] && btest=$(test_acc "$run")
    [ "$best" = 1 ] && btest=${dtest:--}
    ctest=$btest
    [ "$choice" = 1 ] && ctest=${dtest:--}
    diff=$(minus "$ctest" "$dtest")
    wall=$(awk -v n="$name" '$1 == n && $2 == "wall" { printf "%.0f", $3 }' "$dir/$name.log" 2>/dev/null || true)
    # fastText's autotune beside it, when DIR/ft-NAME holds its run: test (fasttext test's
    # output) and time ("rc RC train_s S total_s S": rc 124 when timeout stopped it)
    ft=$dir/ft-$name ftest="not run" fsecs=- fdiff=-
    if [ -s "$ft/time" ]; then
        frc=$(awk '{ print $2 }' "$ft/time")
        fsecs=$(awk '{ printf "%.0f", $6 }' "$ft/time")
        ftest=$(awk '$1 == "P@1" { printf "%.4f", $2 }' "$ft/test" 2>/dev/null || true)
        if [ "$frc" != 0 ] || [ -z "$ftest" ]; then
            ftest="did not end (exit $frc)"
        else
            fdiff=$(minus "$ctest" "$ftest")
        fi
    fi
    printf "| %s | %s | trial %s | %.4f | %.4f | %s | %.4f | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n" "$name" "$trials" \
        "$best" "$bval" "$fval" "$n" "$se" "$([ "$choice" = 1 ] && echo "trial 1" || echo "trial $choice")" \
        "${btest:--}" "${dtest:-not run}" "$ctest" "$diff" "${wall:--}" "$ftest" "$fsecs" "$fdiff"
done
