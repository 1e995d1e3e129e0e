#!/usr/bin/env bash
# test_cli.sh: the trainer as a user meets it: training on an order-sensitive
# task generated here, the printed table against metrics.csv and the report,
# the report recomputed from `predict` output, curves.png, no carriage returns
# in a pipe, eval reproducing the validation accuracy, early stopping,
# leakage warnings, and option errors.
source "$(dirname "$0")/lib.sh"
TRAIN=./train
PNGCHECK=build/tests/tool_pngcheck

# Order task: random letters with one x and one y; the label says which comes first.
make_order_data() {  # seed count file
    awk -v seed="$1" -v count="$2" 'BEGIN { srand(seed); split("a b c d e f g h", v, " ");
        for (i = 0; i < count; i++) {
            n = 4 + int(rand() * 5); px = int(rand() * n); do { py = int(rand() * n) } while (py == px);
            s = ""; for (j = 0; j < n; j++) { t = v[1 + int(rand() * 8)]; if (j == px) t = "x"; if (j == py) t = "y";
                s = s (j ? " " : "") t }
            print (px < py ? "xy" : "yx") "\t" s } }' > "$3"
}
make_order_data 7 1200 "$tmp/train.tsv"
make_order_data 8 300 "$tmp/val.tsv"
TINY=(--d-model 32 --heads 2 --d-ff 64 --layers 2 --max-len 16 --lr 3e-3 --threads 1)

# 1. learns, and the table, metrics.csv and the report agree
$TRAIN "$tmp/train.tsv" --val "$tmp/val.tsv" --out "$tmp/run" --epochs 8 "${TINY[@]}" > "$tmp/out.txt" 2> "$tmp/err.txt"
rc=$?
[ $rc -eq 0 ] && pass "training exits 0" || { fail "training exited $rc"; cat "$tmp/err.txt"; }
last_val_acc=$(tail -n 1 "$tmp/run/metrics.csv" | cut -d, -f5)
echo "REPORT cli: order task, 8 epochs, final validation accuracy $last_val_acc"
awk -v a="$last_val_acc" 'BEGIN { exit !(a >= 0.95) }' && pass "val accuracy $last_val_acc >= 0.95" \
    || fail "val accuracy $last_val_acc below 0.95"
# table rows: epoch | loss | acc | val loss | val acc | val f1 (4 decimals) against metrics.csv (6 decimals)
grep -E '^ +[0-9]+ \|' "$tmp/out.txt" | awk -F'|' '{ for (i = 1; i <= 6; i++) { gsub(/ /, "", $i); printf "%s%s", $i, (i < 6 ? "," : "\n") } }' \
    > "$tmp/table.csv"
tail -n +2 "$tmp/run/metrics.csv" | awk -F, '{ printf "%d,%.4f,%.4f,%.4f,%.4f,%.4f\n", $1, $2, $3, $4, $5, $6 }' > "$tmp/csv4.csv"
if [ "$(wc -l < "$tmp/table.csv")" -eq 8 ] && cmp -s "$tmp/table.csv" "$tmp/csv4.csv"; then
    pass "printed table matches metrics.csv"
else
    fail "printed table differs from metrics.csv"; diff "$tmp/table.csv" "$tmp/csv4.csv" | head
fi
head -n 1 "$tmp/run/metrics.csv" | grep -qx 'epoch,train_loss,train_acc,val_loss,val_acc,val_macro_f1,lr,seconds,tokens_per_s' \
    && pass "metrics.csv header" || fail "metrics.csv header: $(head -n 1 "$tmp/run/metrics.csv")"
report_acc=$(awk '/^validation/ { v = 1 } v && $1 == "accuracy" { print $2; exit }' "$tmp/run/report.txt")
awk -v r="$report_acc" -v c="$last_val_acc" 'BEGIN { exit !(sprintf("%.4f", c) == r) }' \
    && pass "report accuracy $report_acc matches the last epoch" || fail "report accuracy $report_acc vs metrics $last_val_acc"
cmp -s <(sed -n '/^validation/,$p' "$tmp/run/report.txt") <(sed -n '/^validation/,/^wrote/p' "$tmp/out.txt" | sed '$d' | sed '$d') \
    && pass "report.txt is what was printed" || fail "report.txt differs from the printed report"

# 2. the classification report recomputed from predict output and the true labels
cut -f2 "$tmp/val.tsv" | $TRAIN predict --model "$tmp/run" > "$tmp/pred.txt"
paste <(cut -f1 "$tmp/val.tsv") "$tmp/pred.txt" | awk -F'\t' '
    { n++; t[$1]++; p[$2]++; if ($1 == $2) { tp[$1]++; ok++ } }
    END { for (c in t) { pr = p[c] ? tp[c] / p[c] : 0; rc = tp[c] / t[c]; f = pr + rc ? 2 * pr * rc / (pr + rc) : 0;
            printf "%s %.4f %.4f %.4f %d\n", c, pr, rc, f, t[c] }
          printf "accuracy %.4f %d\n", ok / n, n }' | sort > "$tmp/recomputed.txt"
awk '/^validation/ { v = 1; next } v && /^ +(xy|yx) / { print $1, $2, $3, $4, $5 }
     v && $1 == "accuracy" { print "accuracy", $2, $3; exit }' "$tmp/run/report.txt" | sort > "$tmp/printed.txt"
if [ -s "$tmp/printed.txt" ] && cmp -s "$tmp/recomputed.txt" "$tmp/printed.txt"; then
    pass "classification report matches a recomputation from predict output"
else
    fail "classification report differs from the recomputation"; diff "$tmp/recomputed.txt" "$tmp/printed.txt"
fi
probs_line=$($TRAIN predict --probs --model "$tmp/run" "a x b y")
echo "$probs_line" | grep -qP '^(xy|yx)\t[0-9]\.[0-9]{6}\t[0-9]\.[0-9]{6}$' && pass "predict --probs format: $probs_line" \
    || fail "predict --probs format: '$probs_line'"

# 3. curves.png: documented size, both curve colours present
read -r w h train_px val_px non_white < <($PNGCHECK "$tmp/run/curves.png" 1F77B4 FF7F0E)
[ "$w" = 1000 ] && [ "$h" = 420 ] && pass "curves.png is 1000x420" || fail "curves.png is ${w}x${h}"
[ "${train_px:-0}" -gt 100 ] && [ "${val_px:-0}" -gt 100 ] && [ "${non_white:-0}" -gt 5000 ] \
    && pass "curves.png has train ($train_px px) and val ($val_px px) curves" \
    || fail "curves.png pixels: train ${train_px:-?} val ${val_px:-?} non-white ${non_white:-?}"
$PNGCHECK "$tmp/run/confusion.png" > /dev/null && pass "confusion.png decodes" || fail "confusion.png does not decode"
[ ! -e "$tmp/run/confusion_test.png" ] && pass "no confusion_test.png without --test" || fail "confusion_test.png without --test"
# with --test: confusion_test.png besides the validation one
$TRAIN "$tmp/train.tsv" --val "$tmp/val.tsv" --test "$tmp/val.tsv" --out "$tmp/tested" --epochs 1 "${TINY[@]}" \
    > "$tmp/tested.txt" 2>&1
$PNGCHECK "$tmp/tested/confusion_test.png" > /dev/null && $PNGCHECK "$tmp/tested/confusion.png" > /dev/null \
    && pass "--test writes confusion_test.png and confusion.png" || fail "confusion_test.png missing with --test"
grep -q 'confusion_test.png' "$tmp/tested.txt" && pass "the wrote line names confusion_test.png" \
    || fail "the wrote line omits confusion_test.png"
# pictures without a TrueType font: the bitmap font, one note on stderr
$TRAIN trace --model "$tmp/run" "a x b y" --png "$tmp/fontless" > /dev/null 2> "$tmp/font.err"
TRAIN_FONT=/nonexistent.ttf $TRAIN trace --model "$tmp/run" "a x b y" --png "$tmp/fontless" > /dev/null 2> "$tmp/nofont.err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^note: pictures use the built-in ASCII font' "$tmp/nofont.err")" = 1 ] \
    && [ -s "$tmp/fontless/attention_l1_h1.png" ] && ! grep -q note "$tmp/font.err" \
    && pass "without a font: bitmap text, one note" || fail "font fallback (exit $rc): $(cat "$tmp/nofont.err")"

# 4. no carriage returns when stdout is not a terminal
if grep -q $'\r' "$tmp/out.txt"; then fail "carriage return in redirected output"; else pass "no carriage returns in a pipe"; fi

# 5. eval on the validation file reproduces the last epoch's validation accuracy exactly
eval_acc=$($TRAIN eval --model "$tmp/run" "$tmp/val.tsv" | awk '$1 == "accuracy" && NF == 2 { print $2 }')
[ "$eval_acc" = "$last_val_acc" ] && pass "eval accuracy $eval_acc equals the last epoch's" \
    || fail "eval accuracy '$eval_acc' vs last epoch '$last_val_acc'"

# 6. early stopping: labels that are noise overfit at once; --patience 1 stops and restores the best epoch
awk 'BEGIN { srand(3); for (i = 0; i < 400; i++) { s = ""; for (j = 0; j < 6; j++) s = s (j ? " " : "") "w" int(rand() * 40);
        print (rand() < 0.5 ? "a" : "b") "\t" s } }' > "$tmp/noise.tsv"
$TRAIN "$tmp/noise.tsv" --out "$tmp/noise" --val-split 0.3 --epochs 30 --patience 1 --dropout 0 --lr 1e-2 \
    --d-model 64 --heads 2 --d-ff 128 --layers 2 --threads 1 > "$tmp/noise.txt" 2>&1
epochs_run=$(($(wc -l < "$tmp/noise/metrics.csv") - 1))
best_loss=$(tail -n +2 "$tmp/noise/metrics.csv" | cut -d, -f4 | sort -g | head -n 1)
report_loss=$(sed -n 's/^validation ([0-9]* examples, loss \([0-9.]*\))$/\1/p' "$tmp/noise/report.txt")
grep -q '^early stopping' "$tmp/noise.txt" && [ "$epochs_run" -lt 30 ] && pass "early stopping after $epochs_run epochs" \
    || fail "no early stop ($epochs_run epochs)"
awk -v b="$best_loss" -v r="$report_loss" 'BEGIN { exit !(sprintf("%.4f", b) == r) }' \
    && pass "report shows the best epoch's val loss $report_loss" || fail "report val loss '$report_loss' vs best '$best_loss'"

# 7. leakage: a validation file sharing lines with the training file
{ head -n 17 "$tmp/train.tsv"; tail -n 50 "$tmp/val.tsv"; } | sort -u > "$tmp/leaky.tsv"
shared=$(sort -u "$tmp/train.tsv" | cut -f2 | sort -u | comm -12 - <(cut -f2 "$tmp/leaky.tsv" | sort -u) | wc -l)
$TRAIN "$tmp/train.tsv" --val "$tmp/leaky.tsv" --out "$tmp/leak" --epochs 1 "${TINY[@]}" > "$tmp/leak.txt" 2>&1
grep -q "leakage: $shared validation examples" "$tmp/leak.txt" && pass "leakage warning counts $shared shared examples" \
    || fail "leakage warning missing or wrong (expected $shared): $(grep -i leak "$tmp/leak.txt")"

# 8. --accum-steps: the same step taken in micro-batches (gradients summed by loss weight, in double).
# One epoch: over two, float rounding that differs with the grouping tips this run one way or the
# other at some step (5e-4 in the val loss; 3 MPI ranks do the same), whatever --accum-steps does.
# (float32: in bf16 a rounding tie that tips differently moves an input by 2^-8)
ACC=("$tmp/train.tsv" --val "$tmp/val.tsv" "${TINY[@]}" --epochs 1 --batch-size 32 --class-weights balanced --precision fp32
     --quiet)
$TRAIN "${ACC[@]}" --out "$tmp/acc-1" >/dev/null 2>&1 && $TRAIN "${ACC[@]}" --accum-steps 5 --out "$tmp/acc-5" >/dev/null 2>&1 ||
    fail "--accum-steps: a run failed"
worst=$(paste -d, "$tmp/acc-1/metrics.csv" "$tmp/acc-5/metrics.csv" | awk -F, -v half=9 'NR > 1 {
    for (c = 2; c <= 4; c += 2) { d = $c - $(c + half); if (d < 0) d = -d; if (d / $c > w) w = d / $c } } END { printf "%.3g", w + 0 }')
if [ "$(wc -l <"$tmp/acc-5/metrics.csv")" -eq 2 ] && awk -v w="$worst" 'BEGIN { exit !(w <= 1e-5) }'; then
    pass "--accum-steps 5 (micro-batches of 7) matches the whole batch of 32 (largest relative loss difference $worst)"
else
    fail "--accum-steps 5 differs from --accum-steps 1 by $worst relative"
fi
# options: --help lists every option with its default; errors name the option and exit 2
help=$($TRAIN --help)
unlisted=0
for opt in epochs batch-size lr weight-decay warmup clip d-model heads layers d-ff max-len dropout activation norm \
           pool pe tokenizer vocab-size min-freq val val-split test class-weights patience seed threads out resume quiet; do
    grep -q -- "--$opt .*\[" <<<"$help" || { fail "--help does not list --$opt with a default"; unlisted=$((unlisted + 1)); }
done
[ "$unlisted" -eq 0 ] && pass "--help lists the options, each with its default"
check_usage() {  # expected-word args...
    local word=$1; shift
    $TRAIN "$@" > "$tmp/usage.out" 2> "$tmp/usage.err"; local rc=$?
    [ $rc -eq 2 ] && grep -q -- "$word" "$tmp/usage.err" && pass "usage error names $word" \
        || fail "'$*' exited $rc with: $(cat "$tmp/usage.err")"
}
check_usage "--bogus" "$tmp/train.tsv" --bogus 3
check_usage "--epochs" "$tmp/train.tsv" --epochs
check_usage "--lr" "$tmp/train.tsv" --lr fast
check_usage "--accum-steps" "$tmp/train.tsv" --accum-steps 0
check_usage "--batch-size" "$tmp/train.tsv" --batch-size 0
check_usage "--activation" "$tmp/train.tsv" --activation tanh
check_usage "no data file" --epochs 2

# the version is the tree's release (run/record.c), with git's description only beside it
"$TRAIN" --version | head -n 1 | grep -Eq '^train [0-9]+\.[0-9]+\.[0-9]+( \(git [^)]+\))?$' \
    && pass "--version names the release: $("$TRAIN" --version | head -n 1)" \
    || fail "--version: $("$TRAIN" --version | head -n 1)"

finish test_cli
