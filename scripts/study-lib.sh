# study-lib.sh: what the scripts that time ./train against fastText share (sourced, not run).

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
