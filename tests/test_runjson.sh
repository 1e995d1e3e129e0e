#!/usr/bin/env bash
# test_runjson.sh: run.json stores options typed (numbers as JSON numbers,
# flags as booleans, the rest as strings), and `diff`, `reproduce` and
# `--resume` still read a run.json of the older kind, every option a string.
source "$(dirname "$0")/lib.sh"
TRAIN=./train
export OMP_WAIT_POLICY=passive

awk 'BEGIN { srand(5); for (i = 0; i < 120; i++) { s = ""; for (j = 0; j < 5; j++) s = s (j ? " " : "") "w" int(rand() * 20);
        print (i % 2 ? "a" : "b") "\t" s } }' > "$tmp/data.tsv"
TINY=(--d-model 16 --heads 2 --d-ff 16 --layers 1 --max-len 8 --epochs 2 --lr 3e-3 --dropout 0.2 --threads 1 --quiet)
$TRAIN "$tmp/data.tsv" --out "$tmp/new" "${TINY[@]}" > /dev/null || fail "training run"
json=$tmp/new/run.json

# typed values, and nothing else in the options block is quoted but strings
for key in '"epochs": 2,' '"batch-size": 32,' '"lr": 0.003,' '"dropout": 0.2,' '"seed": 42,' '"max-len": 8,' \
           '"val-split": 0.1,' '"tokenizer": "bpe",' '"pe": "sinusoidal",' '"val": "",' '"label-column": "label",'; do
    grep -qF -- "$key" "$json" && pass "run.json has $key" || fail "run.json lacks $key"
done
quoted_numbers=$(sed -n '/"options": {/,/}/p' "$json" | grep -cE '": "[0-9.e+-]+",?$')
[ "$quoted_numbers" -eq 0 ] && pass "no option is a number in quotes" || fail "$quoted_numbers options are numbers in quotes"
if command -v python3 > /dev/null; then
    python3 -c 'import json, sys
o = json.load(open(sys.argv[1]))["options"]
assert type(o["epochs"]) is int and type(o["lr"]) is float and type(o["tokenizer"]) is str, o
assert o["lr"] == 0.003 and o["dropout"] == 0.2 and o["epochs"] == 2' "$json" \
        && pass "python's json reads int, float and str" || fail "python's json disagrees with the types"
else
    skip "run.json's types as python's json reads them (apt-get install python3)"
fi

# the older kind: every option a string ("epochs": "2"), booleans as "0"/"1"
old_kind() {  # run directory: rewrite its run.json as an older ./train wrote it
    sed -i -E '/"options": \{/,/\}/ { s/^(    "[a-z-]+": )(true)(,?)$/\1"1"\3/; s/^(    "[a-z-]+": )(false)(,?)$/\1"0"\3/;
               s/^(    "[a-z-]+": )([-0-9][^,]*)(,?)$/\1"\2"\3/ }' "$1/run.json"
}
cp -r "$tmp/new" "$tmp/old"
old_kind "$tmp/old"
grep -qF '"epochs": "2",' "$tmp/old/run.json" && grep -qF '"lr": "0.003",' "$tmp/old/run.json" \
    && pass "made an older-kind run.json" || fail "could not make an older-kind run.json"
$TRAIN diff "$tmp/new" "$tmp/old" > "$tmp/diff.txt" 2>&1 && grep -q '^0 options differ' "$tmp/diff.txt" \
    && pass "diff reads both kinds: 0 options differ" || fail "diff new/old: $(tail -n 5 "$tmp/diff.txt")"
# diff shows paths as recorded: a relative --val in a run.json with the working directory (new) and in
# one without (older) is the same option
head -n 20 "$tmp/data.tsv" > "$tmp/val.tsv"
(cd "$tmp" && "$OLDPWD/$TRAIN" data.tsv --val val.tsv --out relnew "${TINY[@]}" > /dev/null) || fail "run with a relative --val"
cp -r "$tmp/relnew" "$tmp/relold" && sed -i '/^  "cwd": /d' "$tmp/relold/run.json"
$TRAIN diff "$tmp/relnew" "$tmp/relold" > "$tmp/diff.txt" 2>&1 && grep -q '^0 options differ' "$tmp/diff.txt" \
    && pass "diff shows a relative --val as recorded, with or without the working directory" \
    || fail "diff with a relative --val: $(cat "$tmp/diff.txt")"
$TRAIN reproduce "$tmp/old" --out "$tmp/re" --threads 1 --quiet > "$tmp/re.txt" 2>&1 && grep -q '^identical' "$tmp/re.txt" \
    && cmp -s "$tmp/re/model.safetensors" "$tmp/new/model.safetensors" \
    && pass "reproduce of an older-kind run.json: identical" || fail "reproduce old kind: $(tail -n 5 "$tmp/re.txt")"
$TRAIN "$tmp/data.tsv" --out "$tmp/stop" "${TINY[@]}" --epochs 3 --stop-after 1 > /dev/null || fail "stopped run"
old_kind "$tmp/stop"
$TRAIN --resume "$tmp/stop" --quiet > "$tmp/resume.txt" 2>&1 && [ "$(($(wc -l < "$tmp/stop/metrics.csv") - 1))" -eq 3 ] \
    && pass "--resume reads an older-kind run.json" || fail "resume old kind: $(tail -n 5 "$tmp/resume.txt")"
sed -i -E 's/^(    "epochs": )"2"/\1[2]/' "$tmp/old/run.json"
$TRAIN diff "$tmp/new" "$tmp/old" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "recorded option 'epochs' has a value of the wrong type" "$tmp/err" \
    && pass "a value of the wrong type is refused, naming it" || fail "wrong type: exit $rc: $(cat "$tmp/err")"

finish test_runjson
