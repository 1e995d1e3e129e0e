#!/usr/bin/env bash
# test_inputs.sh: predict and eval meet their inputs as training meets its
# data: a text longer than max_len is truncated and counted, an empty or
# invalid one (not UTF-8, a NUL byte) is counted and gets an empty output line
# (so output lines stay aligned with input lines), and --strict makes any of
# them an error; --probs --header names the columns; a terminal with no TEXT
# gets a hint; an endless stdin line is refused at the line limit.
# --label-column and --text-column choose the columns of a CSV or TSV with a
# header row, by name or number.
source "$(dirname "$0")/lib.sh"
TRAIN=./train
export OMP_WAIT_POLICY=passive
TINY=(--epochs 1 --d-model 16 --heads 2 --d-ff 16 --layers 1 --max-len 8 --val-split 0 --threads 1 --quiet)

printf 'pos\tgood movie\nneg\tbad movie\npos\tgreat film\nneg\tawful film\npos\tnice one\nneg\tpoor one\n' > "$tmp/d.tsv"
$TRAIN "$tmp/d.tsv" --out "$tmp/run" "${TINY[@]}" > /dev/null || fail "the reference run failed"
RUN=(--model "$tmp/run")

# ---- finding 3: predict applies training's rules and reports them
long="good good good good good good good good good good"   # 10 words: more than max_len 8 holds
$TRAIN predict "${RUN[@]}" "$long" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 0 ] && [ "$(wc -l < "$tmp/out")" -eq 1 ] && grep -q "1 of 1 input was truncated to the model's max_len 8" "$tmp/err" \
    && pass "a long text is predicted and its truncation reported: $(cat "$tmp/err")" \
    || fail "long text: exit $rc, stdout $(cat "$tmp/out"), stderr $(cat "$tmp/err")"
$TRAIN predict --strict "${RUN[@]}" "good" "$long" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "TEXT 2: longer than the model's max_len 8" "$tmp/err" \
    && pass "--strict refuses the long text: $(cat "$tmp/err")" || fail "--strict long text: exit $rc: $(cat "$tmp/err")"

# stdin: a good line, an empty line, a NUL byte, invalid UTF-8, blanks only, CRLF, a good line
printf 'good movie\n\nbad \0movie\nbad \xff movie\n   \nnice one\r\nbad movie\n' > "$tmp/lines"
$TRAIN predict "${RUN[@]}" < "$tmp/lines" > "$tmp/out" 2> "$tmp/err"; rc=$?
mapfile -t got < "$tmp/out"
if [ $rc -eq 0 ] && [ ${#got[@]} -eq 7 ] && [ -n "${got[0]}" ] && [ -z "${got[1]}" ] && [ -z "${got[2]}" ] \
    && [ -z "${got[3]}" ] && [ -z "${got[4]}" ] && [ -n "${got[5]}" ] && [ -n "${got[6]}" ]; then
    pass "7 input lines give 7 output lines; the empty and invalid ones are empty"
else
    fail "stdin lines: exit $rc, output: $(printf '%q ' "${got[@]}")"
fi
grep -q "2 of 7 inputs were empty (first: line 2)" "$tmp/err" && pass "empty lines counted: $(grep "were empty" "$tmp/err")" \
    || fail "empty lines not reported: $(cat "$tmp/err")"
grep -q "2 of 7 inputs were invalid (first: line 3: a NUL byte at byte 5)" "$tmp/err" \
    && pass "invalid lines counted: $(grep invalid "$tmp/err")" || fail "invalid lines not reported: $(cat "$tmp/err")"
grep -q '^pos$\|^neg$' <<<"${got[5]}" && pass "CRLF is stripped: '${got[5]}'" || fail "CRLF line gave '${got[5]}'"
for bad in "" $'bad \xff' "   "; do
    $TRAIN predict --strict "${RUN[@]}" "good" "$bad" > "$tmp/out" 2> "$tmp/err"; rc=$?
    [ $rc -eq 2 ] && grep -qE "TEXT 2: (empty text|invalid UTF-8 at byte 5)" "$tmp/err" \
        && pass "--strict refuses $(printf '%q' "$bad"): $(cat "$tmp/err")" \
        || fail "--strict $(printf '%q' "$bad"): exit $rc: $(cat "$tmp/err")"
done
# --strict answers every input before the one it refuses, among the 256 it holds:
# a too long line 40 (refused when the held inputs run) and an empty line 30
for i in $(seq 120); do [ "$i" = 40 ] && echo "$long" || echo "movie film"; done > "$tmp/strict-long"
$TRAIN predict --strict "${RUN[@]}" < "$tmp/strict-long" > "$tmp/out" 2> "$tmp/err"; rc=$?
lines_long=$(wc -l < "$tmp/out")
for i in $(seq 50); do [ "$i" = 30 ] && echo "" || echo "movie film"; done |
    $TRAIN predict --strict "${RUN[@]}" > "$tmp/out2" 2> "$tmp/err2"; rc2=$?
[ $rc -eq 2 ] && [ "$lines_long" -eq 39 ] && grep -q "line 40: longer than" "$tmp/err" &&
    [ $rc2 -eq 2 ] && [ "$(wc -l < "$tmp/out2")" -eq 29 ] && grep -q "line 30: empty" "$tmp/err2" &&
    pass "--strict answers the 39 and 29 lines before the one it refuses (too long, empty)" ||
    fail "--strict: exit $rc, $lines_long lines, $(cat "$tmp/err"); exit $rc2, $(wc -l < "$tmp/out2") lines, $(cat "$tmp/err2")"
printf 'good\nbad \0movie\n' | $TRAIN predict --strict "${RUN[@]}" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "line 2: a NUL byte at byte 5" "$tmp/err" && pass "--strict refuses a NUL on stdin" \
    || fail "--strict NUL: exit $rc: $(cat "$tmp/err")"
$TRAIN predict "${RUN[@]}" "good movie" "bad movie" > /dev/null 2> "$tmp/err"
[ ! -s "$tmp/err" ] && pass "clean inputs: nothing on stderr" || fail "clean inputs: stderr $(cat "$tmp/err")"

# --probs --header: a line naming the columns, then label and probabilities in label order
$TRAIN predict --probs --header "${RUN[@]}" "good movie" "bad movie" > "$tmp/out"
[ "$(head -n 1 "$tmp/out")" = $'label\tneg\tpos' ] && pass "--probs --header: $(head -n 1 "$tmp/out" | tr '\t' ' ')" \
    || fail "--probs --header first line: $(head -n 1 "$tmp/out")"
tail -n +2 "$tmp/out" | grep -cP '^(neg|pos)\t[01]\.[0-9]{6}\t[01]\.[0-9]{6}$' | grep -qx 2 \
    && pass "--probs rows: label then %.6f per class" || fail "--probs rows: $(cat "$tmp/out")"
grep -q '^label' <<<"$($TRAIN predict --probs "${RUN[@]}" "good movie")" && fail "--probs without --header prints a header"
[ "$($TRAIN predict --header "${RUN[@]}" "good" | head -n 1)" = "label" ] && pass "--header alone names the label column" \
    || fail "--header alone"

# an endless line on stdin is refused at training's line limit (1 MiB), naming the line, in bounded memory
(echo "good movie"; yes | tr -d '\n') | (ulimit -v 2000000; timeout 120 $TRAIN predict "${RUN[@]}") > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "error: standard input, line 2: too long (more than 1048576 bytes, the limit" "$tmp/err" \
    && pass "an endless line on stdin: exit 2, '$(head -c 90 "$tmp/err")...'" || fail "endless line: exit $rc, $(head -c 300 "$tmp/err")"

# a line that arrives alone is answered at once, not when 256 are held
# or the input ends: the writer below keeps the pipe open until the answer
# to its first line is out (or 20 s pass), then sends a second line
mkfifo "$tmp/slow"
$TRAIN predict "${RUN[@]}" < "$tmp/slow" > "$tmp/out" 2> "$tmp/err" &
reader=$!
{
    printf 'good movie\nbad'   # the next line already begun
    for _ in $(seq 200); do [ -s "$tmp/out" ] && break; sleep 0.1; done
    [ -s "$tmp/out" ] && echo "answered" > "$tmp/first"
    echo " movie"
} > "$tmp/slow"
wait $reader; rc=$?
[ -s "$tmp/first" ] && [ $rc -eq 0 ] && [ "$(wc -l < "$tmp/out")" -eq 2 ] \
    && pass "a line on a slow pipe is answered before the next arrives: $(head -n 1 "$tmp/out")" \
    || fail "slow pipe: exit $rc, first answered: $(cat "$tmp/first" 2>/dev/null || echo no), out: $(cat "$tmp/out")"
# and the answers do not depend on how the lines were batched: a file of 40
# lines (forwards of 32 and 8, by length) gives the labels and probabilities
# that the lines give one at a time
for i in $(seq 40); do [ $((i % 3)) = 0 ] && echo "good movie number $i" || echo "bad"; done > "$tmp/forty"
$TRAIN predict --probs "${RUN[@]}" < "$tmp/forty" > "$tmp/batched"
while IFS= read -r text; do $TRAIN predict --probs "${RUN[@]}" "$text"; done < "$tmp/forty" > "$tmp/single"
cmp -s "$tmp/batched" "$tmp/single" && pass "batched and one-by-one predictions agree byte for byte (40 lines)" \
    || fail "batching changed predictions: $(diff "$tmp/batched" "$tmp/single" | head -n 4)"
# predict holds 256 inputs and runs them in forwards of similar lengths:
# 300 lines of 1 to 6 words (3 to 8 tokens: none truncated at max-len 8),
# run forward and in reverse (other forwards, other padding), give each
# line the same output, and every 25th line the output it gets alone
words=(movie film one)   # a token each in this run's vocabulary
for i in $(seq 300); do line=""; for w in $(seq $((i % 6 + 1))); do line="$line ${words[$(((i * 7 + w * 5) % 3))]}"; done
    echo "${line# }"; done > "$tmp/three-hundred"
$TRAIN predict --probs "${RUN[@]}" < "$tmp/three-hundred" > "$tmp/forward" 2> "$tmp/forward.err"; rc=$?
tac "$tmp/three-hundred" | $TRAIN predict --probs "${RUN[@]}" 2> "$tmp/backward.err" | tac > "$tmp/backward"
sed -n '25~25p' "$tmp/three-hundred" | while IFS= read -r text; do $TRAIN predict --probs "${RUN[@]}" "$text"; done > "$tmp/alone"
[ "$rc" -eq 0 ] && [ ! -s "$tmp/forward.err" ] && [ ! -s "$tmp/backward.err" ] && [ "$(wc -l < "$tmp/forward")" -eq 300 ] &&
    cmp -s "$tmp/forward" "$tmp/backward" && cmp -s <(sed -n '25~25p' "$tmp/forward") "$tmp/alone" &&
    pass "300 lines of 3 to 8 tokens, forward and reversed, get the same labels and probabilities, and every 25th its own" ||
    fail "the order of the inputs changed predictions (exit $rc, $(cat "$tmp/forward.err")): $(diff "$tmp/forward" "$tmp/backward" | head -n 4)"

# a terminal with no TEXT: a one-line hint on stderr (script gives the command a terminal)
if command -v script > /dev/null; then
    (sleep 1; printf 'good movie\n\004') | timeout 20 script -qec "$TRAIN predict --model $tmp/run" /dev/null > "$tmp/tty" 2>&1
    grep -q "reading texts from the terminal, one per line, each labelled when you press Enter; end with Ctrl-D" "$tmp/tty" \
        && pass "a terminal with no TEXT gets a hint" || fail "no hint on a terminal: $(cat "$tmp/tty")"
    # a last line ended by Ctrl-D instead of Enter, then Ctrl-D: answered, and the end is the end
    # (the terminal stays open after it: predict must stop on its own, within 3 s)
    (sleep 0.5; printf 'good movie\004'; sleep 0.5; printf '\004'; sleep 4) |
        timeout 3 script -qec "$TRAIN predict --model $tmp/run" /dev/null > "$tmp/tty" 2>&1
    rc=$?
    [ $rc -eq 0 ] && grep -qE "^(pos|neg)" <(tr -d '\r' < "$tmp/tty" | sed 's/^good movie//') \
        && pass "a terminal: a line ended by Ctrl-D is answered, and a second Ctrl-D ends predict" \
        || fail "Ctrl-D twice on a terminal: exit $rc: $(cat -v "$tmp/tty")"
    $TRAIN predict "${RUN[@]}" < /dev/null 2> "$tmp/err"
    [ ! -s "$tmp/err" ] && pass "no hint when stdin is not a terminal" || fail "hint without a terminal: $(cat "$tmp/err")"
else
    skip "no 'script' to give predict a terminal"
fi

# eval: truncation on stderr; --strict refuses it
printf 'pos\t%s\nneg\tbad movie\n' "$long" > "$tmp/long.tsv"
$TRAIN eval "${RUN[@]}" "$tmp/long.tsv" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 0 ] && grep -q "1 of 2 examples are longer than the model's max_len 8 and was truncated" "$tmp/err" \
    && ! grep -q "truncated" "$tmp/out" && pass "eval reports truncation on stderr" \
    || fail "eval truncation: exit $rc: $(cat "$tmp/err")"
$TRAIN eval --strict "${RUN[@]}" "$tmp/long.tsv" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "1 of 2 examples are longer than the model's max_len 8 (--strict" "$tmp/err" \
    && pass "eval --strict refuses truncation" || fail "eval --strict: exit $rc: $(cat "$tmp/err")"

# ---- finding 5: choosing the columns of a CSV or TSV with a header row
{ echo 'id,review,sentiment'; awk -F'\t' '{ printf "%d,\"%s\",%s\n", NR, $2, $1 }' "$tmp/d.tsv"; } > "$tmp/r.csv"
$TRAIN "$tmp/r.csv" --out "$tmp/c0" "${TINY[@]}" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "r.csv:1: no 'label' column in the header ('id', 'review', 'sentiment'); choose the label column with --label-column" "$tmp/err" \
    && pass "other column names: refused, naming the columns and the option" || fail "csv without options: $rc $(cat "$tmp/err")"
$TRAIN "$tmp/r.csv" --out "$tmp/c1" --label-column sentiment --text-column review "${TINY[@]}" > /dev/null 2> "$tmp/err" \
    && pass "CSV columns by name" || fail "CSV columns by name: $(cat "$tmp/err")"
$TRAIN "$tmp/r.csv" --out "$tmp/c2" --label-column 3 --text-column 2 "${TINY[@]}" > /dev/null 2> "$tmp/err" \
    && pass "CSV columns by number" || fail "CSV columns by number: $(cat "$tmp/err")"
cmp -s "$tmp/c1/model.safetensors" "$tmp/c2/model.safetensors" && cmp -s "$tmp/c1/model.safetensors" "$tmp/run/model.safetensors" \
    && pass "by name, by number and the plain TSV give the same model" || fail "column choices give different models"
tr ',' '\t' < "$tmp/r.csv" | tr -d '"' > "$tmp/r.tsv"
$TRAIN "$tmp/r.tsv" --out "$tmp/t1" --label-column Sentiment --text-column 2 "${TINY[@]}" > /dev/null 2> "$tmp/err" \
    && cmp -s "$tmp/t1/model.safetensors" "$tmp/run/model.safetensors" \
    && pass "TSV with a header row: name (any case) and number" || fail "TSV with header: $(cat "$tmp/err")"
$TRAIN eval --model "$tmp/c1" --label-column sentiment --text-column review "$tmp/r.csv" > "$tmp/out" 2> "$tmp/err" \
    && grep -q "^accuracy" "$tmp/out" && pass "eval reads the chosen columns" || fail "eval with columns: $(cat "$tmp/err")"
grep -q '"label-column": "sentiment"' "$tmp/c1/run.json" && pass "run.json records the column choice" \
    || fail "run.json lacks the column choice"
$TRAIN "$tmp/r.csv" --out "$tmp/c3" --label-column sentimnt --text-column review "${TINY[@]}" > /dev/null 2> "$tmp/err"
grep -q "no 'sentimnt' column in the header .*did you mean --label-column sentiment?" "$tmp/err" \
    && pass "a mistyped column: $(cat "$tmp/err")" || fail "mistyped column: $(cat "$tmp/err")"
$TRAIN "$tmp/r.csv" --out "$tmp/c4" --label-column 4 --text-column 2 "${TINY[@]}" > /dev/null 2> "$tmp/err"
grep -q "r.csv:1: --label-column 4: the header has 3 columns" "$tmp/err" && pass "a column number beyond the header" \
    || fail "column 4: $(cat "$tmp/err")"
$TRAIN "$tmp/r.csv" --out "$tmp/c5" --label-column 2 --text-column review "${TINY[@]}" > /dev/null 2> "$tmp/err"
grep -q "both choose column 2" "$tmp/err" && pass "the same column twice" || fail "same column: $(cat "$tmp/err")"
# columns by number on a file with no header row: its first example is read as the header, and said so
$TRAIN "$tmp/d.tsv" --out "$tmp/nohdr" --label-column 1 --text-column 2 "${TINY[@]}" > "$tmp/err" 2>&1
grep -q "warning: .*d.tsv: the header row names the label column 'pos', which is also a label of the data: has the file no header row" \
    "$tmp/err" && pass "columns by number on a file without a header row are flagged" || fail "no-header warning: $(cat "$tmp/err")"
# ... and also when that first line's label is not one of the data's (nothing else would show the line went)
{ printf '# a comment, then a blank line\n\nfirst\tan opening line\n'; cat "$tmp/d.tsv"; } > "$tmp/d-first.tsv"
$TRAIN "$tmp/d-first.tsv" --out "$tmp/nohdr2" --label-column 1 --text-column 2 "${TINY[@]}" > "$tmp/err" 2>&1
grep -q "note: .*d-first.tsv: line 3 was read as the header row, not as an example (columns chosen by number; its label field is 'first')" \
    "$tmp/err" && pass "columns by number: the header row taken is said, even when its label is no label" \
    || fail "by-number header note: $(cat "$tmp/err")"
{ printf 'sentiment\treview\n'; cat "$tmp/d.tsv"; } > "$tmp/named.tsv"
$TRAIN "$tmp/named.tsv" --out "$tmp/c6" --label-column sentiment --text-column 2 "${TINY[@]}" > "$tmp/err" 2>&1 \
    || fail "a TSV with a named header: $(cat "$tmp/err")"
grep -q "line 1 was read as the header row" "$tmp/err" && fail "a header confirmed by a column name still gets the note" \
    || pass "a header row confirmed by a column name: no note"
$TRAIN eval --model "$tmp/run" --label-column 1 --text-column 2 "$tmp/d.tsv" > /dev/null 2> "$tmp/err"
grep -q "warning: .*d.tsv: the header row names the label column 'pos'" "$tmp/err" \
    && pass "eval flags it too" || fail "no-header warning in eval: $(cat "$tmp/err")"
$TRAIN "$tmp/r.csv" --out "$tmp/c6" --label-column 3 --text-column 2 "${TINY[@]}" > "$tmp/err" 2>&1
grep -q "warning" "$tmp/err" && fail "a real header row gave a warning: $(cat "$tmp/err")" || pass "a real header row gives no warning"
# a TSV with more columns, 'label' and 'text' among them: read as a table without any option
{ printf 'id\ttext\tlabel\n'; awk -F'\t' '{ printf "%d\t%s\t%s\n", NR, $2, $1 }' "$tmp/d.tsv"; } > "$tmp/wide.tsv"
$TRAIN "$tmp/wide.tsv" --out "$tmp/w" "${TINY[@]}" > /dev/null 2> "$tmp/err" \
    && cmp -s "$tmp/w/model.safetensors" "$tmp/run/model.safetensors" \
    && pass "a TSV header row holding label and text columns needs no option" || fail "wide TSV: $(cat "$tmp/err")"

finish test_inputs
