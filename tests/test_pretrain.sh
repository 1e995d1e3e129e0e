#!/usr/bin/env bash
# test_pretrain.sh: ./train pretrain (docs/DESIGN.md §4b) end to end: plain-text and
# TSV input, the table and metrics.csv with perplexity, byte-identical
# results at 1 and 2 threads and after --stop-after/--resume, --init into a
# classifier (encoder copied, fresh head, disagreeing options refused), and
# the top-5 [MASK] guesses of predict and trace.
# Run from the project root after ./train is built.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
[ -x "$TRAIN" ] || { echo "FAIL: ./train is not built"; exit 1; }
export OMP_WAIT_POLICY=passive
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --vocab-size 200 --epochs 3 --quiet)
grep -v '^#' data/negation/train.tsv | head -n 300 | cut -f2 > "$tmp/texts.txt"
numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }

"$TRAIN" pretrain "$tmp/texts.txt" --out "$tmp/p1" "${TINY[@]}" --threads 1 > "$tmp/p1.log" 2>&1 \
    || fail "pretrain on plain text: $(tail -2 "$tmp/p1.log")"
head -1 "$tmp/p1/metrics.csv" | grep -q '^epoch,train_loss,train_acc,train_ppl,val_loss,val_acc,val_ppl,lr,' \
    && pass "metrics.csv has masked-token loss, accuracy and perplexity, train and held-out" \
    || fail "metrics.csv header: $(head -1 "$tmp/p1/metrics.csv")"
grep -q 'Perplexity' "$tmp/p1.log" && pass "the epoch table shows perplexity" || fail "no perplexity column"
"$TRAIN" pretrain "$tmp/texts.txt" --out "$tmp/p2" "${TINY[@]}" --threads 2 > /dev/null 2>&1
cmp -s "$tmp/p1/model.safetensors" "$tmp/p2/model.safetensors" && [ "$(numbers "$tmp/p1/metrics.csv")" = "$(numbers "$tmp/p2/metrics.csv")" ] \
    && pass "1 and 2 threads give byte-identical weights and metrics" || fail "pretraining depends on --threads"
"$TRAIN" pretrain "$tmp/texts.txt" --out "$tmp/p3" "${TINY[@]}" --threads 1 --stop-after 1 > /dev/null 2>&1
"$TRAIN" --resume "$tmp/p3" --threads 2 > /dev/null 2>&1
cmp -s "$tmp/p1/model.safetensors" "$tmp/p3/model.safetensors" && [ "$(numbers "$tmp/p1/metrics.csv")" = "$(numbers "$tmp/p3/metrics.csv")" ] \
    && pass "--stop-after 1 then --resume ends byte-identical" || fail "resumed pretraining differs"
grep -v '^#' data/negation/train.tsv | head -n 300 > "$tmp/labelled.tsv"
"$TRAIN" pretrain "$tmp/labelled.tsv" --out "$tmp/p4" "${TINY[@]}" --threads 1 > /dev/null 2>&1 \
    && pass "a TSV's labels are ignored" || fail "pretrain on a TSV"
# the validation split ignores labels too: unique ids as labels split like the
# bare texts (one seeded random split), so the model is byte for byte theirs
awk '{ print "id" NR "\t" $0 }' "$tmp/texts.txt" > "$tmp/ids.tsv"
"$TRAIN" pretrain "$tmp/ids.tsv" --out "$tmp/p6" "${TINY[@]}" --threads 1 > "$tmp/p6.log" 2>&1; rc=$?
[ $rc -eq 0 ] && cmp -s "$tmp/p1/model.safetensors" "$tmp/p6/model.safetensors" \
    && pass "pretrain on id<TAB>text with unique ids: split as the bare texts are (labels ignored)" \
    || fail "pretrain on unique ids: exit $rc, $(tail -2 "$tmp/p6.log")"
# --val takes the formats TEXTS takes: plain text reads as the same texts labelled
grep -v '^#' data/negation/test.tsv | head -n 40 > "$tmp/val.tsv"
cut -f2 "$tmp/val.tsv" > "$tmp/val.txt"
"$TRAIN" pretrain "$tmp/texts.txt" --val "$tmp/val.txt" --out "$tmp/p7" "${TINY[@]}" --threads 1 > "$tmp/p7.log" 2>&1; rc=$?
"$TRAIN" pretrain "$tmp/texts.txt" --val "$tmp/val.tsv" --out "$tmp/p8" "${TINY[@]}" --threads 1 > /dev/null 2>&1
[ $rc -eq 0 ] && [ -s "$tmp/p7/metrics.csv" ] && [ "$(numbers "$tmp/p7/metrics.csv")" = "$(numbers "$tmp/p8/metrics.csv")" ] \
    && pass "pretrain --val reads plain text, as TEXTS (the same numbers as the texts in a TSV)" \
    || fail "pretrain --val plain text: exit $rc, $(tail -2 "$tmp/p7.log")"
"$TRAIN" eval --model "$tmp/p1" "$tmp/labelled.tsv" > /dev/null 2> "$tmp/e.log"
rc=$?
[ $rc -eq 2 ] && grep -q "is a pretraining run (a masked-language model): it has no classes to evaluate; .*--init" "$tmp/e.log" \
    && pass "eval of a pretrain run is refused, pointing to --init" || fail "eval of a pretrain run: exit $rc, $(cat "$tmp/e.log")"

"$TRAIN" "$tmp/labelled.tsv" --init "$tmp/p1" --out "$tmp/c1" --epochs 1 --lr 0 --weight-decay 0 --quiet \
    > "$tmp/c1.log" 2>&1 || fail "--init: $(tail -2 "$tmp/c1.log")"
# it says what it takes and drops: from a pretrain run its masked-LM head, from a
# classifier's run (fine-tuning it again) its classifier head and classes (--seed 7: c1's head is
# seed 42's untrained draw, which a fresh head of the default seed would equal)
TAKES="this run takes its tokenizer and vocabulary ([0-9]* bpe tokens), embeddings and 1 encoder layer; it drops its"
grep -q "^note: --init $tmp/p1 is a pretrain run: $TAKES masked-LM head; the head for this data's 2 classes starts fresh" \
    "$tmp/c1.log" && pass "--init from a pretrain run says what it takes and drops" \
    || fail "--init from a pretrain run: $(grep -- --init "$tmp/c1.log")"
"$TRAIN" "$tmp/labelled.tsv" --init "$tmp/c1" --out "$tmp/c3" --pool cls --epochs 1 --lr 0 --weight-decay 0 --seed 7 --quiet \
    > "$tmp/c3.log" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "^note: --init $tmp/c1 is a classifier's run: $TAKES classifier head (2 classes: neg, pos) and its mean pooling (--pool is this run's own); the head for" "$tmp/c3.log" \
    && pass "--init from a classifier's run says it drops that run's head and pooling" \
    || fail "--init from a classifier's run: exit $rc, $(cat "$tmp/c3.log")"
if ! command -v python3 > /dev/null; then
    skip "--init from a classifier's run: weights not compared (python3 reads the checkpoints; apt-get install python3)"
elif python3 - "$tmp/c1/model.safetensors" "$tmp/c3/model.safetensors" <<'PY'
import json, struct, sys
def tensors(path):   # with lr 0: all but the head as the classifier's, the head drawn afresh
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n]); h.pop("__metadata__")
    return {k: b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items()}
a, c = tensors(sys.argv[1]), tensors(sys.argv[2])
sys.exit(0 if a.keys() == c.keys() and all(a[k] == c[k] for k in a if not k.startswith("head.")) and a["head.weight"] != c["head.weight"] else 1)
PY
then pass "--init from a classifier's run: its encoder copied exactly, its head not"; else fail "--init classifier weights"; fi
"$TRAIN" "$tmp/labelled.tsv" --init "$tmp/p1" --d-model 32 --out "$tmp/c2" --quiet > "$tmp/c2.log" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'disagrees with --init' "$tmp/c2.log" && pass "--init with another --d-model is a usage error" \
    || fail "--init with another --d-model: exit $rc, $(cat "$tmp/c2.log")"
# with lr 0 the classifier's encoder is the pretrain run's, byte for byte
if ! command -v python3 >/dev/null; then
    skip "--init's weights against the pretrain run's: needs python3 to read both files (apt-get install python3)"
elif python3 - "$tmp/p1/model.safetensors" "$tmp/c1/model.safetensors" <<'PY'
import json, struct, sys
def tensors(path):
    b = open(path, "rb").read(); n = struct.unpack("<Q", b[:8])[0]; h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    return {k: b[8 + n + v["data_offsets"][0]:8 + n + v["data_offsets"][1]] for k, v in h.items()}
a, c = tensors(sys.argv[1]), tensors(sys.argv[2])
shared = [k for k in c if not k.startswith("head.")]
sys.exit(0 if shared and all(a.get(k) == c[k] for k in shared) and "head.weight" in c and "mlm.bias" not in c else 1)
PY
then pass "--init copies embeddings and encoder exactly and adds a fresh head"; else fail "--init weights"; fi

# run.json records --init's checkpoint with its SHA-256: once the pretrain run
# is replaced, --resume and reproduce of the fine-tuned run refuse (the
# resume would read a different vocabulary), naming the checkpoint
cp -r "$tmp/p1" "$tmp/p5"
"$TRAIN" "$tmp/labelled.tsv" --init "$tmp/p5" --out "$tmp/c5" --epochs 3 --stop-after 1 --quiet > /dev/null 2>&1 \
    || fail "--init with --stop-after"
grep -q '"role": "init", "path": "[^"]*p5/model.safetensors", "sha256": "[0-9a-f]\{64\}"' "$tmp/c5/run.json" \
    && pass "run.json records the --init checkpoint and its SHA-256" || fail "no init entry in run.json: $(grep -A1 init "$tmp/c5/run.json")"
"$TRAIN" pretrain "$tmp/texts.txt" --out "$tmp/p5" "${TINY[@]}" --seed 7 --overwrite > /dev/null 2>&1
"$TRAIN" --resume "$tmp/c5" --quiet > /dev/null 2> "$tmp/c5.err"; rc=$?
"$TRAIN" reproduce "$tmp/c5" --quiet > /dev/null 2> "$tmp/c5r.err"; rc2=$?
[ $rc -eq 2 ] && grep -q "p5/model.safetensors (the --init checkpoint) has changed since the run was recorded" "$tmp/c5.err" \
    && [ $rc2 -eq 2 ] && grep -q "(the --init checkpoint) has changed" "$tmp/c5r.err" \
    && pass "a replaced --init run: --resume and reproduce refuse, naming its checkpoint" \
    || fail "replaced --init: resume exit $rc: $(cat "$tmp/c5.err"); reproduce exit $rc2: $(cat "$tmp/c5r.err")"

# pretrain --resume of a classifier's run, and --init into the directory it names: refused, nothing lost
"$TRAIN" pretrain --resume "$tmp/c5" > /dev/null 2> "$tmp/e.err"; rc=$?
[ $rc -eq 2 ] && grep -q "c5 is a classifier's run, not a pretrain run; continue it with ./train --resume" "$tmp/e.err" \
    && pass "pretrain --resume of a classifier's run: refused" || fail "pretrain --resume classifier: exit $rc: $(cat "$tmp/e.err")"
cp "$tmp/p1/model.safetensors" "$tmp/p1.model"
"$TRAIN" "$tmp/labelled.tsv" --init "$tmp/p1" --out "$tmp/p1" --overwrite --epochs 1 --quiet > /dev/null 2> "$tmp/e.err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--init $tmp/p1 is in $tmp/p1, the directory this run writes to" "$tmp/e.err" \
    && cmp -s "$tmp/p1.model" "$tmp/p1/model.safetensors" \
    && pass "--init into its own --out: refused, the pretrain run kept" || fail "--init into itself: exit $rc: $(cat "$tmp/e.err")"

out=$(printf 'the hotel was [MASK] great\nno mask here\n' | "$TRAIN" predict --model "$tmp/p1")
[ "$(echo "$out" | sed -n 1p | awk -F'  ' '{ print NF }')" = 5 ] && [ "$(echo "$out" | sed -n 2p)" = "(no [MASK])" ] \
    && pass "predict on a pretrain run: 5 guesses for a [MASK]" || fail "predict on a pretrain run: $out"
"$TRAIN" predict --model "$tmp/p1" --probs "the [MASK] was good" > /dev/null 2> "$tmp/e.err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--probs: .* is a pretrain run, which has no classes" "$tmp/e.err" \
    && [ "$("$TRAIN" predict --model "$tmp/p1" --header "the [MASK] was good" | head -n 1)" = "mask_fills" ] \
    && pass "predict on a pretrain run: --probs refused, --header names the column mask_fills" \
    || fail "predict --probs/--header on a pretrain run: exit $rc: $(cat "$tmp/e.err")"
"$TRAIN" trace --model "$tmp/p1" "the [MASK] was [MASK]" > "$tmp/trace.txt" 2>&1
[ "$(grep -c '^  \[MASK\] at position' "$tmp/trace.txt")" = 2 ] && pass "trace shows the guesses at each [MASK]" \
    || fail "trace on a pretrain run: $(tail -4 "$tmp/trace.txt")"
"$TRAIN" trace --model "$tmp/p1" "the [MASK] was good" --backward > /dev/null 2> "$tmp/trace.err"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--backward: .* is a pretrain run" "$tmp/trace.err" \
    && pass "trace --backward on a pretrain run: refused (no label's loss), exit 2" \
    || fail "trace --backward on a pretrain run: exit $rc: $(cat "$tmp/trace.err")"
# reproduce and diff read a pretrain run's metrics.csv (perplexity columns, no F1)
"$TRAIN" reproduce "$tmp/p1" --out "$tmp/r1" --threads 1 --quiet > "$tmp/r1.log" 2>&1
rc=$?
[ $rc -eq 0 ] && grep -q '^identical: all 3 epochs match' "$tmp/r1.log" && pass "reproduce re-runs a pretrain run identically" \
    || fail "reproduce of a pretrain run: exit $rc, $(tail -3 "$tmp/r1.log")"
cp -r "$tmp/p1" "$tmp/p1x"
awk -F, -v OFS=, 'NR == 3 { $2 = sprintf("%.6f", $2 + 0.001) } { print }' "$tmp/p1/metrics.csv" > "$tmp/p1x/metrics.csv"
"$TRAIN" reproduce "$tmp/p1x" --out "$tmp/r2" --threads 1 --quiet > "$tmp/r2.log" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q '^DIFFERENT: 1 of 3 epochs differ' "$tmp/r2.log" && grep -q '^    2 |.*first difference' "$tmp/r2.log" \
    && pass "reproduce finds a pretrain trace that differs, at its epoch" || fail "reproduce of a changed trace: exit $rc, $(tail -3 "$tmp/r2.log")"
"$TRAIN" diff "$tmp/p1" "$tmp/p4" > "$tmp/d1.log" 2>&1
rc=$?
row=$(awk -F, 'NR == 4 { printf "%8.4f %8.4f", $2, $3 }' "$tmp/p1/metrics.csv")
# p1 read texts.txt, p4 labelled.tsv: the same options on other data, whose digests diff marks
[ $rc -eq 0 ] && grep -q '^0 options and 1 data file differ' "$tmp/d1.log" && grep -q "^    3 | $row" "$tmp/d1.log" \
    && pass "diff of two pretrain runs: options and masked-token traces" || fail "diff of pretrain runs: exit $rc, $(tail -3 "$tmp/d1.log")"
# compare-pe --task pretrain: its summary gives masked-token accuracy and
# perplexity, the held-out numbers each run's metrics.csv holds for its last epoch
"$TRAIN" compare-pe "$tmp/texts.txt" --task pretrain "${TINY[@]}" --lr 0.01 --out "$tmp/cmp" > "$tmp/cmp.log" 2>&1; rc=$?
last() { awk -F, -v c="$2" -v f="$3" 'END { printf f, $c }' "$tmp/cmp/pe-$1/metrics.csv"; }
acc="$(last sinusoidal 6 %.4f) with sinusoidal PE, $(last none 6 %.4f) without"
ppl="$(last sinusoidal 7 %.2f) with sinusoidal PE, $(last none 7 %.2f) without"
[ $rc -eq 0 ] && grep -q "^final masked-token accuracy (held-out texts): $acc" "$tmp/cmp.log" \
    && grep -q "^final masked-token perplexity (held-out texts): $ppl" "$tmp/cmp.log" \
    && pass "compare-pe --task pretrain sums up masked-token accuracy ($acc) and perplexity from the runs" \
    || fail "compare-pe --task pretrain: exit $rc, expected accuracy $acc, perplexity $ppl: $(grep -i "final\|error" "$tmp/cmp.log")"

finish test_pretrain
