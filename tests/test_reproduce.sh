#!/usr/bin/env bash
# test_reproduce.sh: run.json records what a run depends on; `reproduce`
# re-runs it identically at 1 and 2 threads, refuses changed data naming the
# file, and `diff` shows the options that differ and both traces.
source "$(dirname "$0")/lib.sh"
TRAIN=./train

awk 'BEGIN { srand(11); split("a b c d e f g h", v, " ");
    for (i = 0; i < 500; i++) { n = 4 + int(rand() * 5); px = int(rand() * n); do { py = int(rand() * n) } while (py == px);
        s = ""; for (j = 0; j < n; j++) { t = v[1 + int(rand() * 8)]; if (j == px) t = "x"; if (j == py) t = "y";
            s = s (j ? " " : "") t }
        print (px < py ? "xy" : "yx") "\t" s } }' > "$tmp/data.tsv"
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --epochs 3 --dropout 0.2)

# run.json holds the command, options, seed, threads, data hash and line count, version, compiler, machine
$TRAIN "$tmp/data.tsv" --out "$tmp/a" "${TINY[@]}" --threads 2 --quiet > /dev/null || fail "training run a"
json="$tmp/a/run.json"
sha=$(sha256sum "$tmp/data.tsv" | cut -d' ' -f1)
for key in '"command"' '"options"' '"seed": 42' '"threads": 2' "\"sha256\": \"$sha\"" '"lines": 500' '"version"' \
           '"compiler"' '"cflags"' '"cpu"' '"openmp"' '"dropout": 0.2,' '"lr": 0.003,'; do
    grep -qF "$key" "$json" || fail "run.json lacks $key"
done
pass "run.json records command, options, seed, threads, data SHA-256 and lines, version, compiler, machine"

# reproduce at 1 and at 2 threads: identical traces, exit 0
for threads in 1 2; do
    $TRAIN reproduce "$tmp/a" --out "$tmp/re$threads" --threads "$threads" > "$tmp/re$threads.txt" 2>&1
    rc=$?
    if [ $rc -eq 0 ] && grep -q '^identical' "$tmp/re$threads.txt" && \
       cmp -s <(cut -d, -f1-7 "$tmp/a/metrics.csv") <(cut -d, -f1-7 "$tmp/re$threads/metrics.csv") && \
       cmp -s "$tmp/a/model.safetensors" "$tmp/re$threads/model.safetensors"; then
        pass "reproduce at $threads thread(s): identical trace and checkpoint"
    else
        fail "reproduce at $threads thread(s) exited $rc"; tail -n 12 "$tmp/re$threads.txt"
    fi
done
grep -q 'Epoch' "$tmp/re1.txt" && pass "reproduce prints the traces side by side" || fail "no side-by-side trace"

# a run stopped after epoch 1 of 3 (never resumed) is reproduced as far as it went
$TRAIN "$tmp/data.tsv" --out "$tmp/stopped" "${TINY[@]}" --threads 1 --stop-after 1 --quiet > /dev/null || fail "stopped run"
$TRAIN reproduce "$tmp/stopped" --out "$tmp/re-stopped" --threads 1 > "$tmp/re-stopped.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "ended after epoch 1 of 3; the reproduction stops there too" "$tmp/re-stopped.txt" &&
    grep -q '^identical: its 1 epoch matches' "$tmp/re-stopped.txt" &&
    cmp -s <(cut -d, -f1-7 "$tmp/stopped/metrics.csv") <(cut -d, -f1-7 "$tmp/re-stopped/metrics.csv"); then
    pass "a run stopped after epoch 1 of 3: reproduced to epoch 1, identical"
else
    fail "reproducing a stopped run: exit $rc"; tail -n 6 "$tmp/re-stopped.txt"
fi
# resumed with a larger --epochs: noted when resuming; reproduce says why it cannot, exit 2, no directory made
$TRAIN --resume "$tmp/stopped" --epochs 4 --threads 1 > "$tmp/longer.txt" 2>&1 || fail "resume with --epochs 4"
$TRAIN reproduce "$tmp/stopped" --out "$tmp/re-longer" > "$tmp/re-longer.txt" 2>&1
rc=$?
if grep -q "^note: --epochs 4, started with 3: the learning-rate schedule changes" "$tmp/longer.txt" && [ $rc -eq 2 ] &&
    grep -q "cannot reproduce .*: it was started with --epochs 3 and resumed with --epochs 4: its learning-rate schedule changed" "$tmp/re-longer.txt" &&
    [ ! -e "$tmp/re-longer" ]; then
    pass "a run resumed with a larger --epochs: a note on resuming; reproduce refuses it (exit 2) and says why"
else
    fail "a run resumed with a larger --epochs: reproduce exit $rc: $(cat "$tmp/re-longer.txt") / $(grep note "$tmp/longer.txt")"
fi
# resumed with a smaller --epochs (5, stopped after 2, finished at 3): its trace looks like one that ended early
$TRAIN "$tmp/data.tsv" --out "$tmp/shrunk" "${TINY[@]}" --epochs 5 --threads 1 --stop-after 2 --quiet > /dev/null &&
    $TRAIN --resume "$tmp/shrunk" --epochs 3 --threads 1 --quiet > /dev/null || fail "the shrunk run"
$TRAIN reproduce "$tmp/shrunk" --out "$tmp/re-shrunk" > "$tmp/re-shrunk.txt" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "started with --epochs 5 and resumed with --epochs 3" "$tmp/re-shrunk.txt" && [ ! -e "$tmp/re-shrunk" ] &&
    pass "a run resumed with a smaller --epochs: reproduce refuses it (exit 2), not 'DIFFERENT'" ||
    fail "a run resumed with a smaller --epochs: reproduce exit $rc: $(tail -n 2 "$tmp/re-shrunk.txt")"

# a reproduction that differs is reported with its first differing epoch, exit 1
sed -i '3s/^\([0-9]*\),[0-9.]*/\1,9.999999/' "$tmp/a/metrics.csv"
$TRAIN reproduce "$tmp/a" --out "$tmp/re-diff" > "$tmp/re-diff.txt" 2>&1
rc=$?
[ $rc -eq 1 ] && grep -q 'first difference' "$tmp/re-diff.txt" && grep -q '^DIFFERENT' "$tmp/re-diff.txt" \
    && pass "a differing trace is marked and exits 1" || fail "differing trace: exit $rc"

# the reproduction into the run itself (any spelling of it, even with
# --overwrite): refused before anything is written, the record kept
cp "$tmp/a/metrics.csv" "$tmp/a-metrics.bak"
$TRAIN reproduce "$tmp/a" --out "$tmp/./a/" --overwrite > /dev/null 2> "$tmp/self.err"
rc=$?
[ $rc -eq 2 ] && grep -q "is the run being reproduced" "$tmp/self.err" && cmp -s "$tmp/a/metrics.csv" "$tmp/a-metrics.bak" \
    && pass "reproduce --out RUN itself refused, the record untouched: $(head -c 90 "$tmp/self.err")..." \
    || fail "reproduce into itself: exit $rc: $(cat "$tmp/self.err")"

# one changed byte in the data: refused, naming the file
cp "$tmp/data.tsv" "$tmp/data.bak"
printf 'z' | dd of="$tmp/data.tsv" bs=1 seek=10 conv=notrunc 2> /dev/null
$TRAIN reproduce "$tmp/a" --out "$tmp/re-bad" > "$tmp/bad.out" 2> "$tmp/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -qF "$tmp/data.tsv" "$tmp/bad.err" && grep -q 'changed' "$tmp/bad.err" \
    && pass "changed data refused: $(head -c 100 "$tmp/bad.err")..." || fail "changed data: exit $rc: $(cat "$tmp/bad.err")"
[ ! -e "$tmp/re-bad/metrics.csv" ] && pass "nothing trained on changed data" || fail "trained on changed data"
cp "$tmp/data.bak" "$tmp/data.tsv"

# diff: a run with another --lr shows that option and both traces
$TRAIN "$tmp/data.tsv" --out "$tmp/b" "${TINY[@]}" --lr 0.001 --quiet > /dev/null || fail "training run b"
$TRAIN diff "$tmp/a" "$tmp/b" > "$tmp/diff.txt" 2>&1 || fail "diff exited non-zero"
grep -E '^lr +0\.003 +0\.001 +\*' "$tmp/diff.txt" > /dev/null && pass "diff marks --lr 0.003 vs 0.001" \
    || fail "diff does not mark lr: $(grep '^lr' "$tmp/diff.txt")"
[ "$(grep -c ' \*$' "$tmp/diff.txt")" -eq 1 ] && pass "diff marks only the option that differs" \
    || fail "diff marks $(grep -c ' \*$' "$tmp/diff.txt") options"
[ "$(grep -cE '^ +[1-3] \|' "$tmp/diff.txt")" -eq 3 ] && pass "diff shows 3 epochs of both traces" \
    || fail "diff traces: $(grep -cE '^ +[1-3] \|' "$tmp/diff.txt") rows"
# diff against a run that has not finished an epoch (run.json, no metrics.csv): its trace is empty, said in a note
mkdir "$tmp/unfinished" && cp "$tmp/b/run.json" "$tmp/unfinished/"
$TRAIN diff "$tmp/a" "$tmp/unfinished" > "$tmp/diff2.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "note: $tmp/unfinished has no finished epoch yet" "$tmp/diff2.txt" \
    && [ "$(grep -cE '^ +[1-3] \|' "$tmp/diff2.txt")" -eq 3 ] && ! grep -q "nan" "$tmp/diff2.txt" \
    && grep -q "val loss" "$tmp/diff2.txt" \
    && pass "diff with an unfinished run: exit 0, a note, the other run's 3 epochs" \
    || fail "diff with an unfinished run: exit $rc: $(cat "$tmp/diff2.txt")"
# diff of two runs on different data at long paths with the same last 40 characters: the digest row is
# marked and counted, and both paths are shown whole, so they cannot look the same
for side in one two; do
    long="$tmp/$side-$(printf 'd%.0s' $(seq 1 40))/same-tail-of-a-long-data-file-name"
    mkdir -p "$long" && cp "$tmp/data.tsv" "$long/train.tsv"
done
long_b=$long
printf 'xy\tx y a\n' >> "$long_b/train.tsv"   # one more line: other data
for side in one two; do
    $TRAIN "$tmp/$side-"*/same-tail-of-a-long-data-file-name/train.tsv --out "$tmp/data-$side" "${TINY[@]}" --epochs 1 \
        --quiet > /dev/null || fail "training run on the $side data"
done
$TRAIN diff "$tmp/data-one" "$tmp/data-two" > "$tmp/diff3.txt" 2>&1; rc=$?
sha_two=$(sha256sum "$long_b/train.tsv" | cut -c 1-25)
[ $rc -eq 0 ] && grep -qE "^train sha256 +${sha:0:25}\.\.\. +${sha_two}\.\.\. +\*$" "$tmp/diff3.txt" \
    && grep -q '^0 options and 1 data file differ (marked \*)$' "$tmp/diff3.txt" \
    && [ "$(grep -c ' \*$' "$tmp/diff3.txt")" -eq 1 ] \
    && grep -qxF "  (a) $tmp/one-$(printf 'd%.0s' $(seq 1 40))/same-tail-of-a-long-data-file-name/train.tsv" "$tmp/diff3.txt" \
    && grep -qxF "  (b) $long_b/train.tsv" "$tmp/diff3.txt" \
    && pass "diff of runs on other data: the train digest marked and counted, both long paths whole" \
    || fail "diff of runs on other data: exit $rc: $(head -n 8 "$tmp/diff3.txt"; grep 'differ' "$tmp/diff3.txt")"
echo "REPORT reproduce: identical at 1 and 2 threads; changed data refused; diff marks --lr"

finish test_reproduce
