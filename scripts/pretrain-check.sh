#!/usr/bin/env bash
# pretrain-check.sh: does masked-token pretraining on a task's own texts help
# when labels are scarce (issue 19)? Real text: data/langid (scripts/get-data.sh:
# words of 12 languages from Debian's word lists wamerican wngerman wfrench
# wspanish witalian wportuguese wdutch wswedish wdanish wnorwegian wpolish
# wcatalan, labelled by language; its own 80/20 split). Of the 38400 training
# words every 10th keeps its label (3840, 10%); the pretraining sees all 38400
# training texts (never the test words). Characters: the masked-token model
# learns each language's spelling from the unlabelled words. For seeds 1..3:
# pretrain, fine-tune with --init, and the same classifier (same model
# options, epochs and lr) from scratch on the same 10%; prints the table and
# the mean gain, writes it to OUT/table.md. Exit 1 when the mean gain is below
# 5 points (MIN_GAP); exit 3 (skipped) when data/langid is not built.
set -uo pipefail
# idle OpenMP threads sleep instead of spinning: on a shared machine spinning
# threads of small models slow a run down many times over
export OMP_WAIT_POLICY=passive
cd "$(dirname "$0")/.."
out=${1:-build/pretrain-check}
min_gap=${MIN_GAP:-5}
data=data/langid
[ -s "$data/train.tsv" ] && [ -s "$data/test.tsv" ] || { echo "skip: $data is not built (scripts/get-data.sh)"; exit 3; }
# each check is fresh: the runs of an earlier check are replaced
rm -rf "${out:?}"/pre-* "${out:?}"/fine-* "${out:?}"/scratch-*
mkdir -p "$out"
grep -v '^#' "$data/train.tsv" > "$out/train.tsv"
grep -v '^#' "$data/test.tsv" > "$out/test.tsv"
awk 'NR % 10 == 1' "$out/train.tsv" > "$out/labelled10.tsv"
cut -f2 "$out/train.tsv" > "$out/texts.txt"
echo "langid: $(wc -l < "$out/train.tsv") training words ($(wc -l < "$out/labelled10.tsv") labelled)," \
     "$(wc -l < "$out/test.tsv") test words, $(cut -f1 "$out/train.tsv" | sort -u | wc -l) classes"

threads=(--threads "${THREADS:-2}" --quiet)
model=(--tokenizer char --max-len 24 --d-model 64 --heads 4 --layers 2 --d-ff 128 --norm pre --activation gelu)
pre=(--epochs ${PRETRAIN_EPOCHS:-15} --lr 0.003 --weight-decay 0.01)
fine=(--epochs 20 --lr 0.003 --weight-decay 0.01 --val-split 0 --test "$out/test.tsv")
test_accuracy() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt"; }
table="$out/table.md"
printf '| seed | pretrain held-out masked acc | from scratch (10%% labels) | pretrain + fine-tune | gain |\n' > "$table"
printf '|---|---|---|---|---|\n' >> "$table"
sum_gap=0
for seed in 1 2 3; do
    start=$SECONDS
    ./train pretrain "$out/texts.txt" --out "$out/pre-$seed" --seed $seed "${model[@]}" "${pre[@]}" "${threads[@]}" \
        > "$out/pre-$seed.log" 2>&1 || { echo "error: pretrain failed"; tail -5 "$out/pre-$seed.log"; exit 1; }
    ./train "$out/labelled10.tsv" --init "$out/pre-$seed" --out "$out/fine-$seed" --seed $seed "${fine[@]}" \
        "${threads[@]}" > "$out/fine-$seed.log" 2>&1 || { echo "error: fine-tune failed"; tail -5 "$out/fine-$seed.log"; exit 1; }
    ./train "$out/labelled10.tsv" --out "$out/scratch-$seed" --seed $seed "${model[@]}" "${fine[@]}" "${threads[@]}" \
        > "$out/scratch-$seed.log" 2>&1 || { echo "error: scratch failed"; tail -5 "$out/scratch-$seed.log"; exit 1; }
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
