#!/usr/bin/env bash
# test_epochs_auto.sh: --epochs auto picks round(1200 / steps an epoch) within
# [2, 40], says so, records the number in run.json (so reproduce and --resume
# use it), and a run stopped and resumed ends as one that never stopped.
source "$(dirname "$0")/lib.sh"
TRAIN=./train
if [ ! -x "$TRAIN" ]; then echo "skip: ./train is not built (make train)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --threads 1 --no-probes)
# 600 lines, 10% held out: 540 training examples; batch 100 makes 6 steps an epoch: 1200 / 6 = 200, at most 40
head -n 601 data/negation/train.tsv > "$tmp/data.tsv"
"$TRAIN" "$tmp/data.tsv" --out "$tmp/a" "${TINY[@]}" --epochs auto --batch-size 100 > "$tmp/a.log" 2>&1 || fail "auto run failed: $(tail -3 "$tmp/a.log")"
grep -q "^epochs auto: 40, about 1200 steps of 100 examples over 540 training examples" "$tmp/a.log" \
    && pass "540 examples in batches of 100: 6 steps an epoch, 200 epochs capped at 40, and the run says so" \
    || fail "the auto line: $(grep 'epochs auto' "$tmp/a.log")"
grep -q '"epochs": 40,' "$tmp/a/run.json" && pass "run.json records 40" || fail "run.json: $(grep '"epochs"' "$tmp/a/run.json")"
# batch 8: ceil(540 / 8) = 68 steps an epoch, 1200 / 68 = 17.6, so 18; stopped after 3, resumed
"$TRAIN" "$tmp/data.tsv" --out "$tmp/b" "${TINY[@]}" --epochs auto --batch-size 8 --stop-after 3 > "$tmp/b.log" 2>&1
grep -q '"epochs": 18,' "$tmp/b/run.json" && pass "batch 8: 68 steps an epoch, 1200 / 68 = 17.6, so 18 epochs" \
    || fail "batch 8: run.json: $(grep '"epochs"' "$tmp/b/run.json")"
"$TRAIN" --resume "$tmp/b" > "$tmp/b2.log" 2>&1 || fail "resume failed: $(tail -3 "$tmp/b2.log")"
"$TRAIN" "$tmp/data.tsv" --out "$tmp/c" "${TINY[@]}" --epochs auto --batch-size 8 > "$tmp/c.log" 2>&1
cmp -s "$tmp/b/model.safetensors" "$tmp/c/model.safetensors" \
    && pass "stopped after epoch 3 and resumed: the model of the run that never stopped, byte for byte" \
    || fail "the resumed auto run differs from the straight one"
"$TRAIN" "$tmp/data.tsv" --out "$tmp/d" "${TINY[@]}" --epochs 0 > "$tmp/d.log" 2>&1
[ $? -eq 2 ] && pass "--epochs 0 is refused (exit 2): $(head -1 "$tmp/d.log")" || fail "--epochs 0 was not refused"
finish test_epochs_auto
