#!/usr/bin/env bash
# test_bad_input.sh: a table of bad data files, options and damaged checkpoints, each with its exit code and message, under ./train and the sanitizer build.
# Run from the project root after `make test` has built ./train, build/train-asan and build/tests/tool_stedit.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
ASAN=$PWD/build/train-asan
STEDIT=$PWD/build/tests/tool_stedit
cases=0
for bin in "$TRAIN" "$ASAN" "$STEDIT"; do
    [ -x "$bin" ] || { echo "FAIL: $bin is not built (run make test)"; exit 1; }
done
export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1

chmod 755 "$tmp"   # the unreadable-file case runs as another user
DOCS=("$PWD/README.md" "$PWD/docs/FAILURES.md" "$PWD/docs/TESTING.md")   # they count these cases
cd "$tmp" || exit 1
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --epochs 1 --batch-size 4 --threads 1 --quiet)

# One case: runs the command with ./train and with the sanitizer build; both
# must exit with the expected code, print the expected text on stderr, and
# (for the sanitizer build) report nothing.
case_run() {  # name, expected exit, expected stderr text (grep -E), train arguments...
    local name=$1 want_rc=$2 want_text=$3; shift 3
    cases=$((cases + 1))
    local bin rc ok=1 first=""
    for bin in "$TRAIN" "$ASAN"; do
        "$bin" "$@" >"$tmp/out.txt" 2>"$tmp/err.txt" </dev/null
        rc=$?
        if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$tmp/err.txt"; then
            fail "$name: sanitizer report from $(basename "$bin"):"; head -n 20 "$tmp/err.txt"; ok=0
        elif [ "$rc" -ne "$want_rc" ]; then
            fail "$name: $(basename "$bin") exited $rc, expected $want_rc; stderr: $(head -c 400 "$tmp/err.txt")"; ok=0
        elif [ -n "$want_text" ] && ! grep -qE -- "$want_text" "$tmp/err.txt"; then
            fail "$name: $(basename "$bin") stderr lacks /$want_text/: $(head -c 400 "$tmp/err.txt")"; ok=0
        fi
        [ -z "$first" ] && [ -n "$want_text" ] && first=$(grep -m 1 -E -- "$want_text" "$tmp/err.txt" | cut -c 1-150)
    done
    [ "$ok" -eq 1 ] && pass "$name -> exit $want_rc: $first"
}

# ------------------------------------------------------------- data files
good() { printf 'pos\tgood movie\nneg\tbad movie\npos\tgreat film\nneg\tawful film\npos\tnice one\nneg\tpoor one\n'; }
good >good.tsv
fit() {  # name, expected exit, expected text, data file, more options...
    local name=$1 rc=$2 text=$3 data=$4; shift 4
    case_run "$name" "$rc" "$text" "$data" "${TINY[@]}" --out "$tmp/run_$name" "$@"
}

fit "missing file" 2 "nope\.tsv: No such file" nope.tsv
fit "- for standard input" 2 "^error: -: No such file or directory; to read the data from standard input, give /dev/stdin" -
mkdir adir
fit "a directory" 2 "adir: is a directory" adir
good >unreadable.tsv
chmod 000 unreadable.tsv
if [ "$(id -u)" -ne 0 ]; then
    fit "unreadable file" 2 "unreadable\.tsv: Permission denied" unreadable.tsv
elif command -v setpriv >/dev/null; then
    # root reads anything: run this case as nobody (the output goes to /tmp);
    # one case, as case_run counts it, whichever way it runs or is skipped;
    # copies of the binaries in $tmp, since nobody may not enter the checkout's directory (/root)
    cases=$((cases + 1))
    for bin in "$TRAIN" "$ASAN"; do
        cp "$bin" "$tmp/" && bin=$tmp/$(basename "$bin")
        setpriv --reuid=65534 --regid=65534 --clear-groups "$bin" "$tmp/unreadable.tsv" "${TINY[@]}" \
            --out /tmp/never-written >"$tmp/out.txt" 2>"$tmp/err.txt"
        rc=$?
        if [ "$rc" -eq 2 ] && grep -q "unreadable.tsv: Permission denied" "$tmp/err.txt" &&
            ! grep -q "Sanitizer" "$tmp/err.txt"; then
            pass "unreadable file ($(basename "$bin") as nobody) -> exit 2: $(head -n 1 "$tmp/err.txt")"
        else
            fail "unreadable file ($(basename "$bin") as nobody): exit $rc: $(head -c 300 "$tmp/err.txt")"
        fi
    done
else
    cases=$((cases + 1))
    skip "unreadable file (running as root without setpriv)"
fi
: >empty.tsv
fit "empty file" 2 "empty\.tsv: no examples" empty.tsv
printf '# only\n   # comments\n\n' >comments.tsv
fit "only comments" 2 "comments\.tsv: no examples" comments.tsv
{ good; printf 'pos no tab here\n'; } >notab.tsv
fit "a line without a tab" 2 "notab\.tsv:7: no tab" notab.tsv
{ good; printf '\tsome text\n'; } >nolabel.tsv
fit "empty label" 2 "nolabel\.tsv:7: empty label" nolabel.tsv
printf 'label,text\npos,good movie\nneg,bad movie\n"pos\tneg",a tab in a quoted label\n' >tablabel.csv
fit "a tab inside a quoted CSV label" 2 "tablabel\.csv:4: the label holds a control character \(byte 0x09" tablabel.csv
printf 'label,text\npos,good movie\n"ne\ng",a line break in a quoted label\nneg,bad movie\n' >nllabel.csv
fit "a line break inside a quoted CSV label" 2 "nllabel\.csv:3: the label holds a control character \(byte 0x0a" nllabel.csv
{ printf 'label\ttext\n'; good; } >tabs.csv
fit "a tab-separated file named .csv" 2 "tabs\.csv:1: the header is one field holding tabs: .*name it \.tsv" tabs.csv
printf 'label;text\npos;good movie\nneg;bad movie\n' >semi.csv
fit "a semicolon-separated CSV" 2 "semi\.csv:1: the header is one field holding semicolons: .*commas" semi.csv
good | tr '\n' '\r' >cronly.tsv
fit "lines ending in CR alone" 2 "cronly\.tsv:1: a carriage return inside the line: .*tr '\\\\r' '\\\\n'" cronly.tsv
{ good; printf 'pos\t  \n'; } >notext.tsv
fit "empty text" 2 "notext\.tsv:7: empty text" notext.tsv
{ good; printf 'pos\tbad \xff byte\n'; } >utf8.tsv
fit "invalid UTF-8" 2 "utf8\.tsv:7: invalid UTF-8" utf8.tsv
fit "invalid UTF-8, char tokenizer" 2 "utf8\.tsv:7: invalid UTF-8" utf8.tsv --tokenizer char
{ good; printf 'pos\tover\xc0\xaflong\n'; } >overlong.tsv
fit "overlong UTF-8" 2 "overlong\.tsv:7: invalid UTF-8" overlong.tsv --tokenizer char
{ good; printf 'pos\tnul \0 byte\n'; } >nul.tsv
fit "NUL byte" 2 "nul\.tsv:7: NUL byte" nul.tsv
printf 'pos\tgood\nneg\tbad\n' >two.tsv
fit "one example of each label: no validation to split off" 2 "two\.tsv: cannot split off validation: .*--val FILE, or --val-split 0" two.tsv
grep -q "columns swapped" "$tmp/out.txt" && fail "two examples of two labels were taken for swapped columns: $(cat "$tmp/out.txt")"
good | gzip -c >packed.tsv.gz
fit "a gzip-compressed file" 2 "packed\.tsv\.gz: a gzip-compressed file, not text: .*<\(gzip -dc packed\.tsv\.gz\)" packed.tsv.gz
{ printf '\x7f''ELF\x02\x01\x01\x00\x00\x00\r\n'; good; } >program.tsv
fit "a binary file (NUL before a CR)" 2 "program\.tsv:1: NUL byte at byte column 8 \(a binary file" program.tsv
{ good; printf 'pos\t'; head -c 10000000 /dev/zero | tr '\0' a; printf '\n'; } >huge.tsv
# refused as the limit is passed: the input is read as a stream that may never end
fit "a 10 MB line" 2 "huge\.tsv:7: line is too long \(more than 1048576 bytes" huge.tsv
printf 'label,text\npos,"good movie\nneg,bad movie\n' >quote.csv
fit "CSV with an unbalanced quote" 2 "quote\.csv:2: unbalanced quote" quote.csv
printf 'label,text\npos,"a ""quoted"" text" x\nneg,b\n' >after.csv
fit "CSV text after a closing quote" 2 "after\.csv:2: text after a closing quote" after.csv
printf 'label,text\npos,a,b\nneg,b\n' >fields.csv
fit "CSV with a wrong field count" 2 "fields\.csv:2: wrong number of fields" fields.csv
printf 'pos\ta\npos\tb\npos\tc\n' >single.tsv
fit "a single class" 2 "single\.tsv: only one class \('pos'\)" single.tsv --val-split 0
printf 'pos\tgood\nmaybe\tso so\n' >val.tsv
fit "a val label unseen in training" 2 "val\.tsv:2: label 'maybe' is not one of the training labels" good.tsv --val val.tsv
fit "a test label unseen in training" 2 "val\.tsv:2: label 'maybe'" good.tsv --test val.tsv --val-split 0

# Accepted: CRLF line ends with a BOM, as TSV and as CSV.
cases=$((cases + 1))
{ printf '\xef\xbb\xbf'; good | sed 's/$/\r/'; } >crlf.tsv
{ printf '\xef\xbb\xbflabel,text\r\n'; good | tr '\t' , | sed 's/$/\r/'; } >crlf.csv
for f in crlf.tsv crlf.csv; do
    for bin in "$TRAIN" "$ASAN"; do   # the second binary trains into the same directory again: --overwrite
        if ! "$bin" "$f" "${TINY[@]}" --val-split 0 --out "$tmp/run_$f" --overwrite >"$tmp/out.txt" 2>"$tmp/err.txt" ||
            grep -q "Sanitizer\|runtime error" "$tmp/err.txt"; then
            fail "$f (CRLF and BOM) refused by $(basename "$bin"): $(head -c 300 "$tmp/err.txt")"
        fi
    done
    # two classes named exactly neg and pos: no CR, no BOM in a label
    got=$("$TRAIN" predict --threads 1 --probs --model "$tmp/run_$f" "good movie")
    clean=$'^(neg|pos)\t[0-9.]+\t[0-9.]+$'
    if [[ "$got" =~ $clean ]]; then
        pass "$f with CRLF and a BOM is accepted; the labels come out clean"
    else
        fail "$f: predict printed '$(printf '%q' "$got")' (a CR or the BOM in a label?)"
    fi
done

# ------------------------------------------------------------- options
fit "d-model not divisible by heads" 2 "--d-model 18 is not divisible by --heads 4" good.tsv --d-model 18 --heads 4
# the model's options are checked before the data is read: a FIFO nobody
# writes to would block the open forever (timeout: the command hung)
mkfifo nowriter
for bin in "$TRAIN" "$ASAN"; do
    timeout -s KILL 60 "$bin" nowriter "${TINY[@]}" --heads 3 --out "$tmp/run_nowriter" >/dev/null 2>"$tmp/err.txt"
    rc=$?
    if [ $rc -eq 2 ] && grep -q "not divisible by --heads 3" "$tmp/err.txt"; then
        pass "$(basename "$bin"): --heads 3 refused before the data is read (a FIFO with no writer): exit 2"
    else
        fail "$(basename "$bin"): --heads 3 with unread data: exit $rc (137: it waited for the data), $(cat "$tmp/err.txt")"
    fi
done
fit "odd d-model with sinusoidal PE" 2 "--d-model 15 is odd; sinusoidal" good.tsv --d-model 15 --heads 3
for opt in d-model heads layers d-ff max-len batch-size epochs; do
    fit "--$opt 0" 2 "--$opt: 0 is out of range" good.tsv "--$opt" 0
    fit "--$opt -3" 2 "--$opt: -3 is out of range" good.tsv "--$opt" -3
done
fit "--lr -1" 2 "--lr: -1 is out of range" good.tsv --lr -1
fit "--dropout 1" 2 "--dropout: 1 is out of range" good.tsv --dropout 1
fit "--epochs abc" 2 "--epochs: 'abc' is not a whole number" good.tsv --epochs abc
fit "--lr nan" 2 "--lr: 'nan' is not a number" good.tsv --lr nan
fit "--lr 1e-320 (underflows)" 2 "--lr: 1e-320 is out of range \[0, 10\] \(too near 0 for a double" good.tsv --lr 1e-320
fit "--epochs past a long long" 2 "--epochs: 99999999999999999999 is out of range" good.tsv --epochs 99999999999999999999
fit "unknown option" 2 "unknown option '--colour'" good.tsv --colour
fit "--min-freq above every count" 2 "good\.tsv: the vocabulary holds no token of the text: none occurs --min-freq 1000 times; lower --min-freq" \
    good.tsv --min-freq 1000 --tokenizer word
printf 'pos\t[MASK] [CLS]\nneg\t[MASK]\npos\t[CLS]\nneg\t[SEP]\npos\t[MASK]\nneg\t[CLS]\n' >specials.tsv
fit "texts of special tokens only" 2 "specials\.tsv: the vocabulary holds no token of the text: the texts hold only special" \
    specials.tsv --tokenizer word
fit "option without its value" 2 "option '--seed' needs a value" good.tsv --seed
fit "too much memory" 2 "needs [0-9]{16,} bytes .* but the machine has" good.tsv \
    --d-model 65536 --d-ff 1048576 --layers 1000 --heads 1
case_run "no data file" 2 "no data file given" --epochs 1

# ------------------------------------------------------------- checkpoints
# A real run, then one damaged copy of its model.safetensors per case; predict
# and eval must refuse each with exit 2 and a message naming the file.
"$TRAIN" good.tsv "${TINY[@]}" --val-split 0 --out "$tmp/run" >/dev/null || fail "the reference run failed"
MODEL=$tmp/run/model.safetensors
"$TRAIN" predict --threads 1 --model "$tmp/run" "good movie" >/dev/null || fail "the reference model does not load"

# Bad data given to eval, and odd text given to predict (a char-level model).
case_run "eval: a label the model has no class for" 2 "val\.tsv:2: label 'maybe'" eval --model "$tmp/run" val.tsv
case_run "eval: invalid UTF-8" 2 "utf8\.tsv:7: invalid UTF-8" eval --model "$tmp/run" utf8.tsv
case_run "eval: empty file" 2 "empty\.tsv: no examples" eval --model "$tmp/run" empty.tsv
"$TRAIN" good.tsv "${TINY[@]}" --val-split 0 --tokenizer char --out "$tmp/char" >/dev/null || fail "char run failed"
case_run "predict: invalid UTF-8 and controls, char model (counted, exit 0)" 0 "1 of 3 inputs was invalid" predict --model "$tmp/char" \
    $'bad \xff\xc0\xaf \xe2\x82 \xf4\x90\x80\x80 end' $'\x01\x7f[CLS][SEP' "$(head -c 3000 /dev/zero | tr '\0' x)"

bad_model() {  # name, expected text, file to install as the checkpoint
    mkdir -p "$tmp/bad"
    cp "$3" "$tmp/bad/model.safetensors"
    case_run "checkpoint: $1 (predict)" 2 "$2" predict --threads 1 --model "$tmp/bad" "good movie"
    case_run "checkpoint: $1 (eval)" 2 "$2" eval --threads 1 --model "$tmp/bad" good.tsv
}
edited() {  # name, expected text, tool_stedit operation...
    local name=$1 text=$2; shift 2
    "$STEDIT" "$MODEL" "$tmp/edited" "$@" || { fail "tool_stedit $* failed"; return; }
    bad_model "$name" "$text" "$tmp/edited"
}
size=$(stat -c %s "$MODEL")
header_len=$(od -An -tu8 -N8 "$MODEL" | tr -d ' ')

head -c 4 "$MODEL" >"$tmp/cut"
bad_model "4 bytes" "model\.safetensors: file too short" "$tmp/cut"
head -c $((size - 1)) "$MODEL" >"$tmp/cut"
bad_model "truncated by one byte" "model\.safetensors: header: .*(hole|beyond)" "$tmp/cut"
head -c $((8 + header_len / 2)) "$MODEL" >"$tmp/cut"
bad_model "truncated in the header" "model\.safetensors: header size $header_len is larger than" "$tmp/cut"
{ printf '\x00\x00\x00\x00\x01\x00\x00\x00'; tail -c +9 "$MODEL"; } >"$tmp/cut"
bad_model "header length larger than the file" "model\.safetensors: header size 4294967296 is larger" "$tmp/cut"
edited "header JSON malformed" "model\.safetensors: header: invalid JSON" replace '"dtype":' '"dtype";'
edited "header JSON not an object" "model\.safetensors: header: invalid JSON" replace '{"__metadata__"' '["__metadata__"'
edited "offsets out of range" "model\.safetensors: header: .*beyond the" offsets head.bias 0 99999999
edited "offsets overlapping" "model\.safetensors: header: .*overlaps" offsets head.bias 0 8
# head.bias is the last tensor: move it 8 bytes on and pad, leaving a hole before it
last=$(grep -ao '"head.bias":{[^}]*}' "$MODEL" | grep -o '\[[0-9]*,[0-9]*\]' | tail -n 1 | tr -d '[]')
"$STEDIT" "$MODEL" "$tmp/edited" offsets head.bias $((${last%,*} + 8)) $((${last#*,} + 8)) &&
    head -c 8 /dev/zero >>"$tmp/edited"
bad_model "a hole between tensors" "model\.safetensors: header: .*belong to no tensor \(a hole\)" "$tmp/edited"
{ cat "$MODEL"; printf 'trailing'; } >"$tmp/cut"
bad_model "trailing bytes" "model\.safetensors: header: .*at the end belong to no tensor" "$tmp/cut"
edited "dtype F16" "model\.safetensors: header: .*unsupported dtype F16" replace '"F32"' '"F16"'
edited "dtype I32" "model\.safetensors: tensor 'head.weight' has dtype I32, expected F32" dtype head.weight I32
edited "shape against the config" "model\.safetensors: tensor 'head.weight' has shape \[3, 16\], expected \[2, 16\]" \
    shape head.weight 3,16
edited "metadata d_ff contradicts the shapes" "model\.safetensors: tensor 'encoder.layers.0.linear1.weight' has shape" \
    set-meta d_ff 48
edited "metadata heads invalid" "model\.safetensors: the config in its metadata is invalid" set-meta heads 3
edited "metadata emb_scale 1e38" "model\.safetensors: the config in its metadata is invalid.*emb_scale" set-meta emb_scale 1e38
edited "a missing tensor" "model\.safetensors: holds 14 tensors, the model has 15" drop-tensor head.bias
for key in d_model vocab labels tokenizer checksum; do
    edited "missing metadata $key" "model\.safetensors: metadata (has no )?'$key'" drop-meta "$key"
done
edited "metadata dropout edited" "model\.safetensors: checksum mismatch" set-meta dropout 0.5
edited "metadata labels repeated" "model\.safetensors: metadata 'labels' must list distinct, non-empty labels in byte order" \
    set-meta labels '["neg","neg"]'
"$STEDIT" "$MODEL" "$tmp/e1" set-meta layers 20 && "$STEDIT" "$tmp/e1" "$tmp/edited" set-meta d_ff 1048576
bad_model "a config too large for memory" "model\.safetensors: this config needs [0-9]+ bytes" "$tmp/edited"
printf 'pos\tgood\n' >"$tmp/text"
bad_model "not a safetensors file" "model\.safetensors: not a run directory or checkpoint" "$tmp/text"
case_run "checkpoint: no run there" 2 "nothing: No such file" predict --model "$tmp/nothing" x
case_run "checkpoint: the run's state file given as --model" 2 \
    "state\.safetensors: a training state \(Adam moments and progress, for --resume\), not a model" \
    predict --model "$(dirname "$MODEL")/state.safetensors" x
# a run stopped inside its first epoch: run.json and a state, no model yet; then without the state
mkdir -p "$tmp/half"
cp "$(dirname "$MODEL")/run.json" "$(dirname "$MODEL")/state.safetensors" "$tmp/half/"
case_run "checkpoint: a run stopped inside its first epoch" 2 "half: this run has no model yet: .*if it stopped, continue it with ./train --resume .*half" \
    predict --model "$tmp/half" x
rm "$tmp/half/state.safetensors"
case_run "checkpoint: a run stopped before its first epoch, no state" 2 \
    "half: this run has no model yet: it is still in its first epoch, or it stopped before one ended with nothing to resume" eval --model "$tmp/half" good.tsv
{ printf '\xff\xff\xff\xff\xff\xff\xff\xff'; tail -c +9 "$MODEL"; } >"$tmp/cut"
bad_model "header size 2^64 - 1" "model\.safetensors: header size 18446744073709551615 is larger" "$tmp/cut"

# Random bit flips, anywhere in the file: every one refused, none crashing.
RANDOM=4242
for i in $(seq 1 20); do
    at=$(((RANDOM * 32768 + RANDOM) % size))
    "$STEDIT" "$MODEL" "$tmp/flipped" flip "$at" $((RANDOM % 8)) || fail "tool_stedit flip failed"
    mkdir -p "$tmp/bad"
    cp "$tmp/flipped" "$tmp/bad/model.safetensors"
    case_run "checkpoint: bit flip $i at byte $at of $size" 2 "model\.safetensors" \
        predict --threads 1 --model "$tmp/bad" "good movie"
done

# A damaged training state: --resume refuses it naming the file.
"$TRAIN" good.tsv "${TINY[@]}" --val-split 0 --epochs 3 --stop-after 1 --out "$tmp/stopped" >/dev/null
head -c 1000 "$tmp/stopped/state.safetensors" >"$tmp/cut" && cp "$tmp/cut" "$tmp/stopped/state.safetensors"
case_run "truncated state.safetensors on --resume" 2 "state\.safetensors: header size" --resume "$tmp/stopped"
# A state valid to its checksum whose counters cannot be: refused, naming them.
"$TRAIN" good.tsv "${TINY[@]}" --val-split 0 --epochs 3 --stop-after 1 --out "$tmp/forged" >/dev/null
"$STEDIT" "$tmp/forged/state.safetensors" "$tmp/forged/state.safetensors" resave-meta best_epoch 1000000000 \
    || fail "tool_stedit resave-meta failed"
case_run "a state whose best epoch is past the epochs done" 2 "metadata 'best_epoch' 1e\+09 or 'bad_epochs' 0 exceeds the 1 epochs done" \
    --resume "$tmp/forged" --patience 1

# A run directory whose run.json is empty or gone: --resume, reproduce and
# diff refuse it, naming the file (and leak nothing on the way out).
cp -r "$tmp/stopped" "$tmp/norecord" && : >"$tmp/norecord/run.json"
case_run "empty run.json on --resume" 2 "norecord/run\.json: not a run record" --resume "$tmp/norecord"
case_run "empty run.json on reproduce" 2 "norecord/run\.json: not a run record" reproduce "$tmp/norecord"
rm "$tmp/norecord/run.json"
case_run "no run.json on diff" 2 "norecord/run\.json: No such file" diff "$tmp/norecord" "$tmp/stopped"

echo "REPORT bad input: $cases cases (data, options, checkpoints), each under ./train and the ASan/UBSan build"
# README.md and docs/ count these cases; every count must say this run's number.
said=$(grep -ohE "[0-9]+ bad-input and|runs [0-9]+ such cases" "${DOCS[@]}" | grep -oE "[0-9]+" | sort -u | tr '\n' ' ')
if [ "$said" = "$cases " ] && [ "$(grep -ohE "[0-9]+ bad-input and|runs [0-9]+ such cases" "${DOCS[@]}" | wc -l)" -ge 3 ]; then
    pass "README.md, docs/FAILURES.md and docs/TESTING.md count $cases bad-input cases, as this run made"
else
    fail "the docs count '${said% }' bad-input cases (README.md, docs/FAILURES.md, docs/TESTING.md); this run made $cases (update them)"
fi

finish test_bad_input
