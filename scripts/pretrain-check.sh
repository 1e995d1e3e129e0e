#!/usr/bin/env bash
# pretrain-check.sh: does masked-token pretraining on a task's own texts help
# when labels are scarce (issue 19)? Real text: the lines of 8 licenses in
# Debian's base-files (/usr/share/common-licenses: Apache-2.0, Artistic,
# GFDL-1.3, GPL-2, GPL-3, LGPL-2.1, MPL-1.1, MPL-2.0), each line labelled by
# its license; lines shorter than 20 characters and lines found in more than
# one license are dropped; every 5th line is test. Of the training lines,
# every 10th keeps its label (10%); the pretraining sees all training texts
# (never the test lines). For seeds 1..3: pretrain, fine-tune with --init,
# and the same classifier from scratch on the same 10%; prints the table and
# the mean gap, writes it to OUT/table.md. Exit 1 when the gap is below 5
# points (MIN_GAP).
set -uo pipefail
# idle OpenMP threads sleep instead of spinning: on a shared machine spinning
# threads of small models slow a run down many times over
export OMP_WAIT_POLICY=passive
cd "$(dirname "$0")/.."
out=${1:-build/pretrain-check}
min_gap=${MIN_GAP:-5}
lic=/usr/share/common-licenses
# each check is fresh: the runs of an earlier check are replaced
rm -rf "${out:?}"/pre-* "${out:?}"/fine-* "${out:?}"/scratch-*
mkdir -p "$out"
for f in Apache-2.0 Artistic GFDL-1.3 GPL-2 GPL-3 LGPL-2.1 MPL-1.1 MPL-2.0; do
    [ -f "$lic/$f" ] || { echo "skip: $lic/$f missing (Debian's base-files)"; exit 0; }
    grep -v '^[[:space:]]*$' "$lic/$f" | tr -d '\t\r' | sed 's/^[[:space:]]*//' | awk 'length($0) >= 20' |
        sed "s/^/$f\t/"
done > "$out/all.tsv"
# drop texts that occur under two labels (or twice), then split
awk -F'\t' 'NR == FNR { n[$2]++; next } n[$2] == 1' "$out/all.tsv" "$out/all.tsv" > "$out/unique.tsv"
awk 'NR % 5 == 0' "$out/unique.tsv" > "$out/test.tsv"
awk 'NR % 5 != 0' "$out/unique.tsv" > "$out/train.tsv"
awk 'NR % 10 == 1' "$out/train.tsv" > "$out/labelled10.tsv"
cut -f2 "$out/train.tsv" > "$out/texts.txt"
echo "licenses: $(wc -l < "$out/train.tsv") training lines ($(wc -l < "$out/labelled10.tsv") labelled), " \
     "$(wc -l < "$out/test.tsv") test lines, 8 classes"

model=(--d-model 64 --heads 4 --layers 2 --d-ff 128 --vocab-size 2000 --threads "${THREADS:-2}" --quiet)
fine=(--epochs 40 --val-split 0 --test "$out/test.tsv" --lr 0.001)
test_accuracy() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt"; }
table="$out/table.md"
printf '| seed | pretrain held-out masked acc | from scratch (10%% labels) | pretrain + fine-tune | gain |\n' > "$table"
printf '|---|---|---|---|---|\n' >> "$table"
sum_gap=0
for seed in 1 2 3; do
    start=$SECONDS
    ./train pretrain "$out/texts.txt" --out "$out/pre-$seed" --epochs ${PRETRAIN_EPOCHS:-30} --seed $seed "${model[@]}" \
        > "$out/pre-$seed.log" 2>&1 || { echo "error: pretrain failed"; tail -5 "$out/pre-$seed.log"; exit 1; }
    ./train "$out/labelled10.tsv" --init "$out/pre-$seed" --out "$out/fine-$seed" --seed $seed --threads \
        "${THREADS:-2}" --quiet "${fine[@]}" > "$out/fine-$seed.log" 2>&1 || { echo "error: fine-tune failed"; exit 1; }
    ./train "$out/labelled10.tsv" --out "$out/scratch-$seed" --seed $seed "${model[@]}" "${fine[@]}" \
        > "$out/scratch-$seed.log" 2>&1 || { echo "error: scratch failed"; exit 1; }
    mlm=$(tail -1 "$out/pre-$seed/metrics.csv" | cut -d, -f6)
    a=$(test_accuracy "$out/scratch-$seed"); b=$(test_accuracy "$out/fine-$seed")
    gap=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", 100 * (b - a) }')
    sum_gap=$(awk -v s="$sum_gap" -v g="$gap" 'BEGIN { print s + g }')
    printf '| %d | %s | %s | %s | %+.1f |\n' $seed "$mlm" "$a" "$b" "$gap" >> "$table"
    echo "  seed $seed: held-out masked acc $mlm; test accuracy scratch $a, pretrained $b ($((SECONDS - start)) s)"
done
mean=$(awk -v s="$sum_gap" 'BEGIN { printf "%.1f", s / 3 }')
printf '\nmean gain over 3 seeds: %s points (needed: %s)\n' "$mean" "$min_gap" >> "$table"
cat "$table"
awk -v m="$mean" -v b="$min_gap" 'BEGIN { exit !(m >= b) }'
