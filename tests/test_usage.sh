#!/usr/bin/env bash
# test_usage.sh: the command line explains itself and says what it sees. Each command's --help (and
# `./train help CMD`) lists only that command's options with their defaults;
# --help names --version; a mistyped option or command gets "did you mean";
# an option missing its value, or pointed at the wrong file, is named; a
# saved model given without --model gets the command meant, which runs; a
# file name given as a TEXT gets a note on labelling its lines; an
# option that cannot act in a command, or extra texts for trace, is an error
# (exit 2) naming it. The words of a run are right (singulars, "no PE", one
# parenthesis), runs at chance or with an exploding loss are called bad, and
# large numbers keep the table's columns.
source "$(dirname "$0")/lib.sh"
TRAIN=./train
export OMP_WAIT_POLICY=passive

printf 'pos\tgood movie\nneg\tbad movie\npos\tgreat film\nneg\tawful film\npos\tnice one\nneg\tpoor one\n' > "$tmp/d.tsv"
$TRAIN "$tmp/d.tsv" --out "$tmp/run" --epochs 1 --d-model 16 --heads 2 --d-ff 16 --layers 1 --max-len 16 \
    --val-split 0 --threads 1 --quiet > /dev/null || fail "the reference run failed"

# expect: name, exit code, grep -E pattern on stderr (or stdout with 'out:'), command...
expect() {
    local name=$1 want_rc=$2 pattern=$3; shift 3
    local stream=err
    if [[ $pattern == out:* ]]; then stream=out; pattern=${pattern#out:}; fi
    "$@" > "$tmp/out" 2> "$tmp/err" < /dev/null
    local rc=$?
    if [ "$rc" -ne "$want_rc" ]; then
        fail "$name: exit $rc, expected $want_rc; stderr: $(head -c 300 "$tmp/err")"
    elif ! grep -qE -- "$pattern" "$tmp/$stream"; then
        fail "$name: $stream lacks /$pattern/: $(head -c 300 "$tmp/$stream")"
    else
        pass "$name -> $want_rc: $(grep -m 1 -E -- "$pattern" "$tmp/$stream" | cut -c 1-140)"
    fi
}

# ---- finding 1: per-command help, `help CMD`, --version listed
for cmd in predict eval trace reproduce diff compare-pe fit; do
    $TRAIN $cmd --help > "$tmp/h1" 2>&1 || fail "$cmd --help exited non-zero"
    $TRAIN help $cmd > "$tmp/h2" 2>&1 || fail "help $cmd exited non-zero"
    cmp -s "$tmp/h1" "$tmp/h2" || fail "$cmd --help and help $cmd differ"
    head -n 1 "$tmp/h1" | grep -q "^usage: ./train" || fail "$cmd --help does not start with its usage: $(head -n 1 "$tmp/h1")"
done
$TRAIN --help > "$tmp/global"
$TRAIN predict --help > "$tmp/predict"
cmp -s "$tmp/global" "$tmp/predict" && fail "predict --help prints the global text"
options_of() { grep -oE '^  --[a-z-]+' "$1" | tr -d ' ' | sort | tr '\n' ' '; }
[ "$(options_of "$tmp/predict")" = "--header --help --model --precision --probs --strict --threads " ] \
    && pass "predict --help lists exactly its options: $(options_of "$tmp/predict")" \
    || fail "predict --help lists: $(options_of "$tmp/predict")"
grep -qE -- '--probs .*\[off\]' "$tmp/predict" && grep -qE -- '--model PATH .*\[none\]' "$tmp/predict" \
    && pass "predict --help shows defaults" || fail "predict --help lacks defaults"
$TRAIN eval --help > "$tmp/eval"
[ "$(options_of "$tmp/eval")" = "--help --label-column --model --precision --strict --text-column --threads " ] \
    && pass "eval --help lists exactly its options" || fail "eval --help lists: $(options_of "$tmp/eval")"
$TRAIN trace --help > "$tmp/trace"
grep -q -- '--untrained' "$tmp/trace" && ! grep -q -- '--epochs' "$tmp/trace" && ! grep -q -- '--probs' "$tmp/trace" \
    && pass "trace --help lists trace's options, not training's" || fail "trace --help: $(options_of "$tmp/trace")"
grep -q "options: none besides --help" <<<"$($TRAIN diff --help)" && pass "diff --help says it takes no options" \
    || fail "diff --help"
$TRAIN fit --help > "$tmp/fit"
grep -q -- '--epochs' "$tmp/fit" && ! grep -q -- '--probs' "$tmp/fit" && pass "fit --help: training options only" \
    || fail "fit --help: $(options_of "$tmp/fit")"
grep -qE -- '^  --version' "$tmp/global" && pass "--help lists --version" || fail "--help does not list --version"
grep -qE -- '--help' "$tmp/global" && grep -q "./train CMD --help" "$tmp/global" \
    && pass "--help points at per-command help" || fail "--help does not mention ./train CMD --help"
expect "./train help" 0 "out:^usage:" $TRAIN help
expect "./train help predict" 0 "out:^usage: ./train predict" $TRAIN help predict
expect "./train help predcit" 2 "no command 'predcit'; did you mean 'predict'" $TRAIN help predcit
expect "./train --version" 0 "out:^train " $TRAIN --version

# ---- finding 2: did-you-mean, a missing value, the wrong --model
expect "--epoch suggests --epochs" 2 "unknown option '--epoch'; did you mean '--epochs'" $TRAIN "$tmp/d.tsv" --epoch 5
expect "--prob suggests --probs" 2 "did you mean '--probs'" $TRAIN predict --model "$tmp/run" --prob x
expect "--hlep suggests --help" 2 "did you mean '--help'" $TRAIN predict --hlep
expect "a mistyped command" 2 "unknown command 'predcit'; did you mean 'predict'" $TRAIN predcit --model "$tmp/run" x
expect "a mistyped command (swap)" 2 "did you mean 'eval'" $TRAIN evla --model "$tmp/run" "$tmp/d.tsv"
expect "pretrain has no test metrics" 2 "--test cannot act in pretrain" $TRAIN pretrain "$tmp/d.tsv" --test "$tmp/d.tsv"
expect "trace's --backward refused in training" 2 "--backward cannot act in training; it is an option of trace only" $TRAIN "$tmp/d.tsv" --backward
expect "pretrain has no classifier head to pool or weigh" 2 "--pool cannot act in pretrain" $TRAIN pretrain "$tmp/d.tsv" --pool cls
expect "another tool's name for a command" 2 "unknown command 'evaluate'; did you mean 'eval'" $TRAIN evaluate --model "$tmp/run" "$tmp/d.tsv"
expect "'train' (beside the binary of that name) is not data" 2 "unknown command 'train'; did you mean 'fit'" $TRAIN train "$tmp/d.tsv"
expect "a missing data file is not a command" 2 "nosuchdata\.tsv: No such file" $TRAIN nosuchdata.tsv
expect "--lr followed by an option" 2 "option '--lr' needs a value, but the next argument is the option '--out'" \
    $TRAIN "$tmp/d.tsv" --lr --out "$tmp/x"
expect "--model followed by an option" 2 "option '--model' needs a value, but the next argument is the option '--probs'" \
    $TRAIN predict --model --probs x
expect "--lr=VALUE still reads a negative number" 2 "--lr: -1 is out of range" $TRAIN "$tmp/d.tsv" --lr=-1
expect "--model at a TSV" 2 "d\.tsv: not a run directory or checkpoint" $TRAIN predict --model "$tmp/d.tsv" x
expect "--model at a directory without a model" 2 ": not a run directory or checkpoint: it holds no model.safetensors" \
    $TRAIN eval --model "$tmp" "$tmp/d.tsv"
grep -q "header size" "$tmp/err" && fail "--model at a TSV still talks about the header size"
# A saved model given as an argument instead of with --model: the error
# shows the command meant, quoted for the shell, and that command works.
expect "predict RUN TEXT" 2 "predict needs --model RUN; .*/run is a saved model, so perhaps: \./train predict --model .*/run 'it'\\\\''s good'$" \
    $TRAIN predict "$tmp/run" "it's good"
meant=$(sed -n 's/.*so perhaps: \.\/train //p' "$tmp/err")
if eval "$TRAIN $meant" >"$tmp/meant.out" 2>&1 && [ "$(wc -l <"$tmp/meant.out")" -eq 1 ] &&
    grep -qxE "pos|neg" "$tmp/meant.out"; then
    pass "the command the error offers runs: ./train $meant -> $(cat "$tmp/meant.out")"
else
    fail "the command the error offers ($meant) does not run: $(head -c 300 "$tmp/meant.out")"
fi
# with an option and a text after "--" that starts with "-": both kept
expect "predict RUN --probs -- TEXT" 2 "so perhaps: \./train predict --model .*/run --probs -- '-5 stars'$" \
    $TRAIN predict "$tmp/run" --probs -- "-5 stars"
meant=$(sed -n 's/.*so perhaps: \.\/train //p' "$tmp/err")
if eval "$TRAIN $meant" >"$tmp/meant.out" 2>&1 && grep -qxE "(pos|neg)	[0-9.]+	[0-9.]+" "$tmp/meant.out"; then
    pass "the command offered keeps --probs and --: ./train $meant -> $(cat "$tmp/meant.out")"
else
    fail "the command offered ($meant) does not run with --probs: $(head -c 300 "$tmp/meant.out")"
fi
expect "eval RUN (no data)" 2 "so perhaps: \./train eval --model .*/run DATA\.tsv$" $TRAIN eval "$tmp/run"
expect "eval RUN DATA" 2 "eval needs --model RUN; .*/run is a saved model, so perhaps: \./train eval --model .*/run .*/d\.tsv$" \
    $TRAIN eval "$tmp/run" "$tmp/d.tsv"
expect "trace CHECKPOINT TEXT" 2 "trace needs --model RUN; .*model\.safetensors is a saved model, so perhaps: \./train trace --model .*/run/model\.safetensors good$" \
    $TRAIN trace "$tmp/run/model.safetensors" good
# A TEXT that names a file: labelled as a text (one output line), with a
# note on how to label the file's lines, which works.
printf 'good movie\nbad movie\nnice one\n' >"$tmp/lines.txt"
expect "predict a file name as TEXT" 0 "^note: TEXT 1, '.*/lines\.txt', is also the name of a file; it is labelled as a text\. To label the file's lines: \./train predict --model .*/run < .*/lines\.txt$" \
    $TRAIN predict --model "$tmp/run" "$tmp/lines.txt"
lines_meant=$(sed -n 's/.*lines: \.\/train //p' "$tmp/err")
if [ "$(wc -l <"$tmp/out")" -eq 1 ] && eval "$TRAIN $lines_meant" >"$tmp/meant.out" 2>&1 &&
    [ "$(grep -cxE "pos|neg" "$tmp/meant.out")" -eq 3 ] && [ "$(wc -l <"$tmp/meant.out")" -eq 3 ]; then
    pass "a file name as TEXT gives one output line; the note's command labels the file's 3 lines"
else
    fail "a file name as TEXT: $(wc -l <"$tmp/out") output lines; the note's command ($lines_meant) gave: $(head -c 300 "$tmp/meant.out")"
fi
$TRAIN predict --model "$tmp/run" "good movie" >/dev/null 2>"$tmp/err"
[ -s "$tmp/err" ] && fail "predict of a plain text wrote to stderr: $(head -c 200 "$tmp/err")"
expect "predict TEXT without --model" 2 "^error: predict needs --model RUN \(see \./train --help\)$" $TRAIN predict "good movie"
expect "trace TEXT without --model" 2 "^error: trace needs --model RUN or --untrained for a fresh model \(see \./train --help\)$" \
    $TRAIN trace good

# ---- finding 4: options that cannot act are errors naming them
expect "eval --probs" 2 "--probs cannot act in eval" $TRAIN eval --probs --model "$tmp/run" "$tmp/d.tsv"
expect "predict --epochs 3" 2 "--epochs cannot act in predict" $TRAIN predict --epochs 3 --model "$tmp/run" x
expect "trace with two texts" 2 "trace walks one text, and got 2 arguments" $TRAIN trace --model "$tmp/run" "a" "b"
expect "trace --model with --d-model" 2 "--d-model cannot act with --model" $TRAIN trace --model "$tmp/run" --d-model 32 "a"
expect "trace --dropout" 2 "--dropout cannot act in trace" $TRAIN trace --untrained --dropout 0.5 "a"
expect "training with --model" 2 "--model cannot act in training" $TRAIN "$tmp/d.tsv" --model "$tmp/run"
expect "training with --probs" 2 "--probs cannot act in training" $TRAIN "$tmp/d.tsv" --probs
expect "diff --threads" 2 "--threads cannot act in diff" $TRAIN diff --threads 2 "$tmp/run" "$tmp/run"
expect "reproduce --epochs" 2 "--epochs cannot act in reproduce" $TRAIN reproduce --epochs 3 "$tmp/run"
expect "compare-pe --pe" 2 "--pe cannot act in compare-pe" $TRAIN compare-pe "$tmp/d.tsv" --pe learned
expect "an empty --out" 2 "option '--out' was given an empty value" $TRAIN "$tmp/d.tsv" --out ""
expect "an empty --val=" 2 "option '--val' was given an empty value" $TRAIN "$tmp/d.tsv" --val=
expect "predict --strict is accepted" 0 "out:^(pos|neg)$" $TRAIN predict --strict --model "$tmp/run" "good movie"

# ---- finding 7: the words a run prints, and bad runs called bad in columns that hold
$TRAIN "$tmp/d.tsv" --out "$tmp/words" --epochs 2 --pe none --heads 1 --layers 1 --d-model 8 --d-ff 8 --val-split 0 \
    --threads 1 > "$tmp/words.txt" 2>&1 || fail "the words run failed"
grep -q "1 head, 1 layer, .*no PE; 1 step per epoch" "$tmp/words.txt" && pass "singulars and 'no PE': $(grep '^model' "$tmp/words.txt")" \
    || fail "intro words: $(grep '^model' "$tmp/words.txt")"
grep -qE "none PE|1 steps|1 heads|1 layers" "$tmp/words.txt" && fail "'none PE' or a wrong plural is still printed"
grep -q "^training data (no validation set; 6 examples, loss [0-9.]*)$" "$tmp/words.txt" \
    && pass "one parenthesis: $(grep '^training data' "$tmp/words.txt")" || fail "report title: $(grep '^training data' "$tmp/words.txt")"
printf 'pos\tgood\nneg\tbad\n' > "$tmp/one.tsv"
grep -q "^$tmp/one.tsv (2 examples" <<<"$($TRAIN eval --model "$tmp/run" "$tmp/one.tsv")" || fail "eval title"
head -n 1 "$tmp/one.tsv" > "$tmp/single.tsv"
grep -q "(1 example, loss" <<<"$($TRAIN eval --model "$tmp/run" "$tmp/single.tsv")" && pass "'1 example', not '1 examples'" \
    || fail "eval of one example: $($TRAIN eval --model "$tmp/run" "$tmp/single.tsv" | grep example)"
# noise labels: at chance, and said so; lr 10: losses in the hundreds, the columns still line up
awk 'BEGIN { srand(3); for (i = 0; i < 300; i++) { s = ""; for (j = 0; j < 6; j++) s = s (j ? " " : "") "w" int(rand() * 40);
        print (rand() < 0.5 ? "a" : "b") "\t" s } }' > "$tmp/noise.tsv"
SMALL=(--epochs 4 --threads 1 --d-model 32 --heads 2 --d-ff 32 --layers 1)
$TRAIN "$tmp/noise.tsv" --out "$tmp/noise" "${SMALL[@]}" > "$tmp/noise.txt" 2>&1
grep -E '^ +[2-4] \|' "$tmp/noise.txt" | grep -q "bad: at chance" && pass "noise labels: $(grep -m 1 'at chance' "$tmp/noise.txt" | cut -d'|' -f8)" \
    || fail "noise labels not called at chance: $(grep -E '^ +[0-9]+ \|' "$tmp/noise.txt" | cut -d'|' -f8)"
$TRAIN "$tmp/noise.tsv" --out "$tmp/lr10" "${SMALL[@]}" --lr 10 > "$tmp/lr10.txt" 2>&1
grep -q "converged" "$tmp/lr10.txt" && fail "lr 10 is called converged"
grep -qE '^ +[0-9]+ \| [0-9.]+ .*bad: ' "$tmp/lr10.txt" && pass "lr 10: $(grep -m 1 'bad:' "$tmp/lr10.txt" | cut -d'|' -f8)" \
    || fail "lr 10 not called bad: $(grep -E '^ +[0-9]+ \|' "$tmp/lr10.txt")"
header_bars=$(grep '^Epoch' "$tmp/lr10.txt" | awk '{ s = ""; for (i = 1; i <= length($0); i++) if (substr($0, i, 1) == "|") s = s i " "; print s }')
grep -E '^ +[0-9]+ \| +[0-9.e+-]+ \|' "$tmp/lr10.txt" | awk -v want="$header_bars" '{ s = ""; for (i = 1; i <= length($0); i++)
        if (substr($0, i, 1) == "|" && length(s) < length(want)) s = s i " "; if (s != want) bad++ }
    END { exit bad > 0 }' && pass "lr 10: every row's columns line up with the header ($(grep -E '^ +1 \|' "$tmp/lr10.txt" | cut -c 1-40))" \
    || fail "lr 10 rows break the columns: $(grep -E '^ +[0-9]+ \|' "$tmp/lr10.txt" | cut -c 1-60)"

finish test_usage
