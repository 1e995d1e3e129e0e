# study-lib.sh: what the scripts that time ./train and fastText share (sourced, not run).

# the accuracy in RUN/report.txt's test section (as scripts/check-data.sh reads it)
test_accuracy() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt" 2>/dev/null; }

# seconds, to two decimals, since START (an $EPOCHREALTIME)
seconds_since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }'; }

# train_timed WHO RUN ARGS...: ./train ARGS --out RUN, its output in RUN.log;
# sets secs (whole-process wall seconds) and acc (the test accuracy), or says
# why on stderr as WHO (the calling script) and exits 1
train_timed() {
    local who=$1 run=$2 start
    shift 2
    start=$EPOCHREALTIME
    if ! ./train "$@" --out "$run" >"$run.log" 2>&1; then
        echo "$who: ./train $* failed:" >&2
        tail -n 5 "$run.log" >&2
        exit 1
    fi
    secs=$(seconds_since "$start")
    acc=$(test_accuracy "$run")
    [ -n "$acc" ] || { echo "$who: no test accuracy in $run/report.txt" >&2; exit 1; }
}

# DATA.tsv as fastText's input: "__label__LABEL text" lines, comments dropped
to_fasttext() { sed -n '/^#/!s/^\([^\t]*\)\t/__label__\1 /p' "$1"; }

# fasttext_timed WHO MODEL INPUT TEST ARGS...: fasttext supervised -input
# INPUT -output MODEL ARGS, then fasttext test on TEST (logs MODEL.log and
# MODEL.test); sets secs (training and testing) and acc (P@1: one label a
# line, so accuracy), or says why as WHO and exits 1
fasttext_timed() {
    local who=$1 model=$2 input=$3 test=$4 start
    shift 4
    start=$EPOCHREALTIME
    if ! fasttext supervised -input "$input" -output "$model" "$@" >"$model.log" 2>&1 ||
        ! fasttext test "$model.bin" "$test" >"$model.test" 2>&1; then
        echo "$who: fasttext $* failed:" >&2
        tail -n 5 "$model.log" "$model.test" >&2 2>/dev/null
        exit 1
    fi
    secs=$(seconds_since "$start")
    acc=$(awk '$1 == "P@1" { printf "%.4f", $2 }' "$model.test")
    [ -n "$acc" ] || { echo "$who: no P@1 in $model.test" >&2; exit 1; }
}
