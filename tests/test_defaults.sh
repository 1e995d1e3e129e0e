#!/usr/bin/env bash
# test_defaults.sh: what a user who gives no option gets (docs/DESIGN.md §3):
# the bpe tokenizer (learning independent of --threads, its merges in the
# checkpoint), --max-len auto on data whose lengths are known, and the
# warnings that catch a wrong setup (or options that cannot act), each said
# once with its fix.
source "$(dirname "$0")/lib.sh"
TRAIN=${TRAIN:-./train}
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --epochs 1 --batch-size 16 --quiet)
LOUD=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --epochs 1 --batch-size 16)   # TINY without --quiet

# Lengths known by construction: 99 texts of 5 words and 1 of 40, in word
# tokens 7 and 42 with [CLS] and [SEP]. 99% of 100 is 99 texts, all of
# length 7, so auto is 8 (the next multiple of 8) and truncates the long one.
awk 'BEGIN { for (i = 0; i < 99; i++) print (i % 2 ? "a" : "b") "\tw" i % 7 " v" i % 5 " u" i % 3 " t s";
             s = "q"; for (j = 1; j < 40; j++) s = s " q"; print "a\t" s }' > "$tmp/lengths.tsv"
out=$("$TRAIN" "$tmp/lengths.tsv" --tokenizer word --val-split 0 --out "$tmp/len" "${LOUD[@]}" 2>&1)
grep -q "max-len auto: 8, .*it truncates 1 of 100" <<<"$out" && pass "auto max-len: 8, one example truncated" \
    || fail "auto max-len on 99 x 7 and 1 x 42 tokens: $out"
out=$("$TRAIN" "$tmp/lengths.tsv" --tokenizer word --val-split 0 --out "$tmp/len-quiet" "${TINY[@]}" 2>&1)
grep -q "max-len auto" <<<"$out" && fail "--quiet still prints the max-len auto note: $out" || pass "--quiet: no max-len note"
grep -aq '"max_len": *"8"' "$tmp/len/model.safetensors" \
    && pass "the checkpoint records the chosen max_len" || fail "model.safetensors does not hold max_len 8"

# The cap: every text 300 words long gives 256.
awk 'BEGIN { for (i = 0; i < 20; i++) { s = "w" i; for (j = 1; j < 300; j++) s = s " x"; print (i % 2 ? "a" : "b") "\t" s } }' \
    > "$tmp/long.tsv"
out=$("$TRAIN" "$tmp/long.tsv" --tokenizer word --val-split 0 --out "$tmp/long" "${LOUD[@]}" 2>&1)
grep -q "max-len auto: 256, its cap, holds fewer than 99% of the training sequences: it truncates 20 of 20" <<<"$out" \
    && ! grep -q "smallest multiple" <<<"$out" \
    && pass "auto max-len is capped at 256, and says so: $(grep -o "max-len auto: 256, [^(]*" <<<"$out")" \
    || fail "300-word texts: $out"

# bpe by default; learning gives the same merges (and model) at 1 and 2 threads.
awk 'BEGIN { split("lower lowest newer newest wider widest slower slowest", w, " ");
             for (i = 0; i < 200; i++) print (i % 2 ? "pos" : "neg") "\t" w[1 + i % 8] " " w[1 + (i * 3) % 8] " " w[1 + (i * 5) % 8] " n" i }' \
    > "$tmp/words.tsv"
"$TRAIN" "$tmp/words.tsv" --out "$tmp/t1" --threads 1 "${TINY[@]}" > "$tmp/t1.log" 2>&1
"$TRAIN" "$tmp/words.tsv" --out "$tmp/t2" --threads 2 "${TINY[@]}" > "$tmp/t2.log" 2>&1
if cmp -s "$tmp/t1/model.safetensors" "$tmp/t2/model.safetensors"; then
    pass "bpe by default: the same merges and model at 1 and 2 threads"
else
    fail "bpe runs at 1 and 2 threads differ"
fi
grep -aq '"tokenizer": *"bpe"' "$tmp/t1/model.safetensors" \
    && pass "the default tokenizer is bpe" || fail "the default run's checkpoint does not say tokenizer bpe"
grep -aq '"merges": *"\[\[' "$tmp/t1/model.safetensors" \
    && pass "the checkpoint holds the merges" || fail "no merges in the checkpoint"
# predict from the file alone, on a word never seen (its pieces are known subwords)
pred=$("$TRAIN" predict --model "$tmp/t1" "lowerest wides" 2>&1)
[[ "$pred" == pos || "$pred" == neg ]] && pass "predict tokenizes unseen words from the stored merges" \
    || fail "predict on unseen words: $pred"

# Warnings, each once, with the option that fixes it.
awk 'BEGIN { for (i = 0; i < 40; i++) print "the text number " i "\tlabel" i }' > "$tmp/swapped.tsv"
out=$("$TRAIN" "$tmp/swapped.tsv" --out "$tmp/sw" "${TINY[@]}" 2>&1)
[ "$(grep -c 'warning: the label column holds 40 distinct values for 40 examples: are the columns swapped' \
    <<<"$out")" = 1 ] && pass "swapped columns are flagged once" || fail "swapped columns: $out"
# a stray label of one example ('NEG' among 30 'neg' and 30 'pos'), and a header row read as an example
awk 'BEGIN { for (i = 0; i < 60; i++) print (i % 2 ? "neg" : "pos") "\tword" i % 9 " other" i % 4;
             print "NEG\tword1 other2" }' > "$tmp/stray.tsv"
out=$("$TRAIN" "$tmp/stray.tsv" --out "$tmp/stray" "${TINY[@]}" 2>&1)
[ "$(grep -c "stray.tsv:61: label 'NEG' has this one example, where another has 30: a typo?" <<<"$out")" = 1 ] &&
    [ "$(grep -c "labels 'NEG' and 'neg' differ only in case or quotes" <<<"$out")" = 1 ] &&
    pass "a label of one example among labels of 30, and labels that differ in case, are flagged once each" ||
    fail "stray label: $out"
awk '{ print $0 "\tid" NR }' "$tmp/stray.tsv" > "$tmp/three.tsv"   # a third column, no header row
out=$("$TRAIN" "$tmp/three.tsv" --out "$tmp/three" "${TINY[@]}" 2>&1)
[ "$(grep -c "three.tsv: 61 lines hold more than one tab (first: line 1); the text is all after the first tab" <<<"$out")" = 1 ] &&
    pass "a third column without a header row is flagged once, with the header row that picks the columns" ||
    fail "three columns: $out"
{ printf '# a comment first\nsentiment\treview\n'; head -n 60 "$tmp/stray.tsv"; } > "$tmp/header.tsv"
out=$("$TRAIN" "$tmp/header.tsv" --out "$tmp/header" "${TINY[@]}" 2>&1)
grep -q "header.tsv:2: label 'sentiment' has this one example.*a header row (then give --label-column 'sentiment' --text-column 'review')" <<<"$out" &&
    pass "a header row read as an example is flagged, with the options that read it as one" || fail "header row: $out"
awk 'BEGIN { for (i = 0; i < 60; i++) print (i % 2 ? "a" : "b") "\tcommon" }' > "$tmp/train_unk.tsv"
awk 'BEGIN { for (i = 0; i < 20; i++) print (i % 2 ? "a" : "b") "\tnever seen words " i }' > "$tmp/val_unk.tsv"
out=$("$TRAIN" "$tmp/train_unk.tsv" --val "$tmp/val_unk.tsv" --tokenizer word --out "$tmp/unk" "${TINY[@]}" 2>&1)
[ "$(grep -c 'validation tokens are \[UNK\].*try --tokenizer bpe or --tokenizer char' <<<"$out")" = 1 ] \
    && pass "mostly-[UNK] validation is flagged once, with the fix" || fail "[UNK] warning: $out"
out=$("$TRAIN" "$tmp/words.tsv" --val-split 0 --patience 2 --out "$tmp/pat" "${TINY[@]}" 2>&1)
[ "$(grep -c 'warning: --patience has no effect without a validation set' <<<"$out")" = 1 ] \
    && pass "--patience without validation is flagged once" || fail "patience warning: $out"
out=$("$TRAIN" "$tmp/words.tsv" --val-split 0 --out "$tmp/lr0" "${TINY[@]}" --epochs 2 --stop-after 2 --lr 0 2>&1)
[ "$(grep -c 'warning: --stop-after 2 has no effect with --epochs 2' <<<"$out")" = 1 ] \
    && pass "--stop-after at or past --epochs is flagged once" || fail "stop-after warning: $out"
[ "$(grep -c 'warning: --lr 0 leaves the weights as they start' <<<"$out")" = 1 ] \
    && pass "--lr 0 is flagged once" || fail "lr 0 warning: $out"
out=$("$TRAIN" "$tmp/words.tsv" --val-split 0 --out "$tmp/warm" "${TINY[@]}" --warmup 1000000 --batch-size 2 --accum-steps 4 2>&1)
[ "$(grep -c "warning: --warmup 1000000 steps is the whole run of [0-9]*: the learning rate climbs the whole time" <<<"$out")" = 1 ] &&
    [ "$(grep -c "warning: --accum-steps 4 splits a batch of 2 into more parts than it has examples: .* as with --accum-steps 2" <<<"$out")" = 1 ] \
    && pass "a --warmup longer than the run and --accum-steps above the batch size are flagged once each" \
    || fail "warmup / accum warnings: $out"
out=$("$TRAIN" "$tmp/train_unk.tsv" --val "$tmp/val_unk.tsv" --out "$tmp/unk_bpe" "${TINY[@]}" 2>&1)
# the training text yields 14 tokens, far under the cap: a larger --vocab-size cannot help
[ "$(grep -c 'validation tokens are \[UNK\].*the vocabulary (14 tokens) is all the training text yields below --vocab-size 2000; give more training text' <<<"$out")" = 1 ] \
    && ! grep -q "raise --vocab-size" <<<"$out" \
    && pass "with bpe under its cap, mostly-[UNK] validation asks for more text, not a larger --vocab-size" \
    || fail "[UNK] warning with bpe: $out"
# char tokens under a --vocab-size cap that leaves characters out: the cap is named, not "more text"
out=$("$TRAIN" "$tmp/words.tsv" --tokenizer char --vocab-size 8 --out "$tmp/unk_char" "${TINY[@]}" 2>&1)
grep -q 'validation tokens are \[UNK\].*--vocab-size 8 leaves out tokens the training text has; raise it' <<<"$out" \
    && ! grep -q "characters the training text lacks" <<<"$out" \
    && pass "char tokens cut by --vocab-size: the [UNK] warning names the cap" || fail "[UNK] warning, char cap: $out"
# learned positions that no training sequence reaches: flagged with the length that avoids them
out=$("$TRAIN" "$tmp/words.tsv" --pe learned --max-len 64 --out "$tmp/pe_learned" "${TINY[@]}" 2>&1)
grep -q "warning: --pe learned: no training sequence is longer than [0-9]* tokens, so positions [0-9]*-63 of --max-len 64 are never trained" <<<"$out" \
    && pass "--pe learned past the longest training sequence is flagged" || fail "learned PE warning: $out"
# 40 classes of 3: each gives one of its 3 to validation, a third of the data for --val-split 0.1
awk 'BEGIN { for (i = 0; i < 120; i++) print "c" int(i / 3) "\tw" i % 7 " v" i % 5 }' > "$tmp/small_classes.tsv"
out=$("$TRAIN" "$tmp/small_classes.tsv" --out "$tmp/smallc" "${TINY[@]}" 2>&1)
grep -q "note: --val-split 0.1 held out 40 of 120 examples (33%): every class with 2 or more examples gives at least one" \
    <<<"$out" && pass "a split far above --val-split says why" || fail "val-split note: $out"
out=$("$TRAIN" "$tmp/words.tsv" --out "$tmp/quiet" "${TINY[@]}" 2>&1)
grep -q "warning" <<<"$out" && fail "a sound setup gave a warning: $out" || pass "a sound setup gives no warning"

finish test_defaults
