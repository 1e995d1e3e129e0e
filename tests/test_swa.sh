#!/usr/bin/env bash
# test_swa.sh: --swa, stochastic weight averaging. The weights at the ends of
# the last round(fraction x epochs) epochs are averaged; at the end the mean
# becomes the model exactly when its validation loss is lower. Checked on
# two runs, one that keeps its last weights and one that takes the mean: the
# rule against the numbers the report prints, the checkpoint's bytes against
# the state's two weight sets, averaging never touching training, and the
# warnings where it cannot act. (The average's arithmetic is checked against
# PyTorch's AveragedModel in check-torch, its resume in test_resume.sh.)
source "$(dirname "$0")/lib.sh"
TRAIN=${TRAIN:-./train}
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --batch-size 16 --threads 1 --quiet --group-by-length=false)   # the runs below were picked for their branches with the plain shuffle
head -n 601 data/before/train.tsv > "$tmp/data.tsv"

# The tensors of a safetensors file: the bytes after its header (an 8-byte
# little-endian length, then that much JSON), in the model's order. A state
# holds four sets one after another: weights, the two Adam moments and, with
# an average, the average.
tensor_bytes() {  # file
    local n
    n=$(od -An -t u8 -N8 "$1" | tr -d ' ')
    tail -c +$((9 + n)) "$1"
}
metrics_numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }   # without the time columns

# One run; checks the rule and which weights model.safetensors holds.
# Prints "mean" or "unchanged".
check_run() {  # name, expected first averaged epoch, last epoch, options...
    local name=$1 first=$2 last=$3
    shift 3
    local dir=$tmp/$name
    "$TRAIN" "$tmp/data.tsv" --out "$dir" "${TINY[@]}" "$@" > /dev/null 2>&1 || { fail "$name: the run failed"; return; }
    local line
    line=$(grep "^swa: " "$dir/report.txt")
    # swa: the mean of the weights at the ends of epochs A-B: val loss X (accuracy .); epoch N's weights: Y; the model is Z
    read -r a b x y kept <<<"$(sed -E 's/^swa: the mean of the weights at the ends of epochs ([0-9]+)-([0-9]+): val loss ([0-9.]+) .*weights: ([0-9.]+); the model is (the mean|unchanged)$/\1 \2 \3 \4 \5/' <<<"$line")"
    if [ "$a" != "$first" ] || [ "$b" != "$last" ]; then
        fail "$name: expected epochs $first-$last averaged, the report says: $line"
        return
    fi
    local lower
    lower=$(awk -v x="$x" -v y="$y" 'BEGIN { print (x < y) ? "the mean" : "unchanged" }')
    if [ "$lower" != "$kept" ]; then
        fail "$name: the mean's val loss $x against $y, yet the model is '$kept'"
        return
    fi
    tensor_bytes "$dir/model.safetensors" > "$tmp/$name.model"
    tensor_bytes "$dir/state.safetensors" > "$tmp/$name.state"
    local n
    n=$(stat -c %s "$tmp/$name.model")
    if [ "$(stat -c %s "$tmp/$name.state")" -ne $((4 * n)) ]; then
        fail "$name: the state does not hold four weight sets (weights, moments, average)"
        return
    fi
    if [ "$kept" = "the mean" ]; then
        cmp -s <(tail -c "$n" "$tmp/$name.state") "$tmp/$name.model" && grep -q "^run .*: the mean of the weights at the ends of epochs $first-$last" "$dir/report.txt" \
            && pass "$name: the mean of epochs $first-$last has val loss $x < $y: the checkpoint holds the state's average, byte for byte, and the report says so" \
            || fail "$name: the mean was kept, but the checkpoint is not the state's average or the report does not say it"
        echo "mean" > "$tmp/$name.kept"
    else
        cmp -s <(head -c "$n" "$tmp/$name.state") "$tmp/$name.model" && grep -q "^run .*: weights of epoch $last (last epoch)" "$dir/report.txt" \
            && pass "$name: the mean of epochs $first-$last has val loss $x >= $y: the checkpoint keeps the last weights, byte for byte" \
            || fail "$name: the last weights were kept, but the checkpoint differs from the state's weights or the report says otherwise"
        echo "unchanged" > "$tmp/$name.kept"
    fi
}

# A run still learning at its end (its last weights validate better) and a
# longer one whose mean over 8 of 10 epochs does: both branches, by
# construction of these runs (found by trying; if training changes, another
# pair may be needed, and the check below says so).
check_run learning 4 6 --epochs 6
check_run averaged 3 10 --epochs 10 --swa 0.8
if [ "$(cat "$tmp/learning.kept" 2>/dev/null)" = unchanged ] && [ "$(cat "$tmp/averaged.kept" 2>/dev/null)" = mean ]; then
    pass "both outcomes seen: 'learning' keeps its last weights, 'averaged' takes the mean"
else
    fail "expected 'learning' to keep its weights and 'averaged' to take the mean (pick other runs if training changed)"
fi

# Averaging only watches: with --swa 0 the run trains the same weights, so
# where the mean is not taken the checkpoint is byte-identical, and the
# epochs' numbers are identical either way; no average in the state.
"$TRAIN" "$tmp/data.tsv" --out "$tmp/off" "${TINY[@]}" --epochs 6 --swa 0 > /dev/null 2>&1
if cmp -s "$tmp/off/model.safetensors" "$tmp/learning/model.safetensors" &&
    diff -q <(metrics_numbers "$tmp/off/metrics.csv") <(metrics_numbers "$tmp/learning/metrics.csv") > /dev/null &&
    ! grep -q "^swa: " "$tmp/off/report.txt" &&
    [ "$(tensor_bytes "$tmp/off/state.safetensors" | wc -c)" -eq $((3 * $(wc -c < "$tmp/learning.model"))) ]; then
    pass "--swa 0: the same checkpoint and metrics as the run that kept its weights; no swa line; no average in the state"
else
    fail "--swa 0 trained differently from --swa 0.5, or still averaged"
fi
"$TRAIN" "$tmp/data.tsv" --out "$tmp/off10" "${TINY[@]}" --epochs 10 --swa 0 > /dev/null 2>&1
diff -q <(metrics_numbers "$tmp/off10/metrics.csv") <(metrics_numbers "$tmp/averaged/metrics.csv") > /dev/null &&
    cmp -s <(tensor_bytes "$tmp/off10/state.safetensors") <(head -c $((3 * $(wc -c < "$tmp/averaged.model"))) "$tmp/averaged.state") \
    && pass "--swa 0 and 0.8 train the same weights and moments, epoch for epoch, when the mean is taken at the end" \
    || fail "--swa changed the training itself"

# Resume: stopped inside the window (4 epochs averaged), then resumed, the
# run ends byte-identical to 'averaged', which took the mean: checkpoint
# and the state's weights, moments and average.
"$TRAIN" "$tmp/data.tsv" --out "$tmp/stopped" "${TINY[@]}" --epochs 10 --swa 0.8 --stop-after 6 > /dev/null 2>&1
grep -qa '"averaged":"4"' "$tmp/stopped/state.safetensors" || fail "stopped after epoch 6: the state does not count 4 averaged epochs"
"$TRAIN" --resume "$tmp/stopped" --threads 2 --quiet > /dev/null 2>&1
cmp -s "$tmp/stopped/model.safetensors" "$tmp/averaged/model.safetensors" &&
    cmp -s <(tensor_bytes "$tmp/stopped/state.safetensors") "$tmp/averaged.state" \
    && pass "stopped after epoch 6 with epochs 3-6 averaged, resumed at 2 threads: the mean and the state byte-identical to the run that never stopped" \
    || fail "a resumed average differs from the uninterrupted run's"
# Raising --epochs on resume moves the window: an average that would not
# run on unbroken into it is dropped, said in a note, and the new window is
# averaged whole (epochs 11-20 of 20, not 6-7 and 11-20).
"$TRAIN" "$tmp/data.tsv" --out "$tmp/raised" "${TINY[@]}" --epochs 10 --stop-after 7 > /dev/null 2>&1
out=$("$TRAIN" --resume "$tmp/raised" --epochs 20 --threads 1 2>&1)
if grep -q "note: --epochs 20 moves --swa's window to epochs 11-20; the average of epochs 6-7 is dropped" <<<"$out" &&
    grep -qa '"averaged":"10"' "$tmp/raised/state.safetensors" &&
    grep -q "^swa: the mean of the weights at the ends of epochs 11-20:" "$tmp/raised/report.txt"; then
    pass "--epochs raised from 10 to 20 on resume: the average of 6-7 dropped with a note, epochs 11-20 averaged"
else
    fail "--epochs raised on resume: $(grep note <<<"$out"), report: $(grep '^swa' "$tmp/raised/report.txt")"
fi

# Where it cannot act, a warning says so once, with the fix.
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/noval" "${TINY[@]}" --epochs 4 --val-split 0 --swa 0.5 2>&1)
[ "$(grep -c 'warning: --swa has no effect without a validation set' <<<"$out")" = 1 ] \
    && pass "--swa without a validation set is flagged once" || fail "--swa without validation: $out"
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/pat" "${TINY[@]}" --epochs 6 --patience 2 --swa 0.5 2>&1)
[ "$(grep -c 'warning: --swa has no effect with --patience' <<<"$out")" = 1 ] && ! grep -q "^swa: " "$tmp/pat/report.txt" \
    && pass "--swa with --patience is flagged once, and the best epoch's weights stay the model" \
    || fail "--swa with --patience: $out"
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/short" "${TINY[@]}" --epochs 2 --swa 0.5 2>&1)
[ "$(grep -c 'warning: --swa 0.5 of 2 epochs averages fewer than 2 of them' <<<"$out")" = 1 ] \
    && pass "--swa over fewer than 2 epochs is flagged once" || fail "--swa 0.5 of 2 epochs: $out"
cut -f2 "$tmp/data.tsv" | grep -v '^#' > "$tmp/texts.txt"
out=$("$TRAIN" pretrain "$tmp/texts.txt" --out "$tmp/pre" "${TINY[@]}" --epochs 2 --swa 0.5 2>&1)
[ "$(grep -c 'warning: --swa has no effect when pretraining' <<<"$out")" = 1 ] \
    && pass "--swa when pretraining is flagged once" || fail "--swa when pretraining: $out"
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/plain" "${TINY[@]}" --epochs 4 2>&1)
grep -q "warning" <<<"$out" && fail "the default --swa gave a warning: $out" || pass "the default --swa gives no warning"

finish test_swa
