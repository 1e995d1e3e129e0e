#!/usr/bin/env bash
# test_rundir.sh: a run is never lost or clobbered (docs/DESIGN.md §§ 2 and 8): a rerun into a run is refused and leaves it byte-identical (also with --overwrite=no), --overwrite replaces it, default directories are numbered, one process per directory (a second is refused naming the first, which finishes; a kill -9's lock is taken over), reproduce and compare-pe follow the rule, FIFO and process-substitution input, /dev/zero and an endless line refused at the line limit, a full disk and a read-only directory (exit 1 naming the file, no temporary file, the last checkpoint loads), a recorded data file missing on --resume, a failed --out leaving no directory it made; all under ./train and the sanitizer build.
# Run from the project root after `make test` has built ./train and build/train-asan.
# The full-disk and read-only cases mount a small tmpfs in a private mount namespace (unshare -m as root, unshare -rm otherwise); where that is refused they say skipped.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
ASAN=$PWD/build/train-asan
for bin in "$TRAIN" "$ASAN"; do
    [ -x "$bin" ] || { echo "FAIL: $bin is not built (run make test)"; exit 1; }
done
export OMP_WAIT_POLICY=passive
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1

grep -v '^#' data/negation/train.tsv | head -n 200 >"$tmp/data.tsv"

# Every file under a directory with its SHA-256 (the lock aside): equal
# snapshots mean nothing was touched.
snapshot() { (cd "$1" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 -r sha256sum); }
# A sanitizer report in a stderr file fails the case.
sanitizer_clean() {  # what, stderr file
    if grep -qE "AddressSanitizer|LeakSanitizer|runtime error:" "$2"; then
        fail "$1: sanitizer report:"; head -n 20 "$2"; return 1
    fi
}
# Waits (up to 60 s) until a file exists and holds the text; 1 if the process died first.
wait_for() {  # file, text, pid
    for _ in $(seq 1 6000); do
        grep -qa -- "$2" "$1" 2>/dev/null && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.01
    done
    return 1
}
# Runs a ./train command; its exit code in $rc, its output in $out and $err.
# A command that hangs (on a stream, say) is killed after 5 minutes and fails.
try() {  # command...
    timeout -s KILL 300 "$bin" "$@" >"$out" 2>"$err" </dev/null
    rc=$?
    sanitizer_clean "$name: ./train $*" "$err"
}
expect() {  # what, expected exit, expected stderr text (grep -E, may be empty), command...
    local what=$1 want=$2 text=$3; shift 3
    try "$@"
    if [ "$rc" -ne "$want" ]; then
        fail "$name: $what: exit $rc, expected $want; stderr: $(head -c 400 "$err")"; return 1
    elif [ -n "$text" ] && ! grep -qE -- "$text" "$err"; then
        fail "$name: $what: stderr lacks /$text/: $(head -c 400 "$err")"; return 1
    fi
    return 0
}
# One more condition of a case: fails it, saying what, when the command fails.
verify() {  # what, command...
    local what=$1; shift
    "$@" >/dev/null && return 0
    fail "$name: $what"; return 1
}
first_line() { grep -m 1 -E -- "$1" "$err" | cut -c 1-160; }
epochs_in() { echo $(($(wc -l <"$1/metrics.csv") - 1)); }

# ------------------------------------------------------ the small-disk cases
# Run in a private mount namespace holding a 2 MB tmpfs at $small, so the
# mount never outlives the test. Prints ok/FAIL lines; exits with the count
# of failures.
small_disk_cases() {  # bin, name, small, data
    local bin=$1 name=$2 small=$3 data=$4 failures=0 rc
    local tiny=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --batch-size 8 --threads 1 --quiet)
    local err=$small.err
    "$bin" "$data" "${tiny[@]}" --epochs 3 --stop-after 1 --out "$small/run" >/dev/null 2>"$err" ||
        fail "$name: the run on the small disk failed: $(cat "$err")"
    local before
    before=$(snapshot "$small/run")

    # Full: the next epoch's files cannot be written.
    dd if=/dev/zero of="$small/filler" bs=4k >/dev/null 2>&1
    "$bin" --resume "$small/run" --quiet >/dev/null 2>"$err"
    rc=$?
    local left
    left=$(find "$small" -name '*.tmp.*' | wc -l)
    if [ "$rc" -eq 1 ] && grep -qE "$small/run/[a-z_.]+: .*No space left on device" "$err" && [ "$left" -eq 0 ] &&
        [ "$(snapshot "$small/run")" = "$before" ] && sanitizer_clean "$name: full disk" "$err"; then
        pass "$name: full disk during a run: exit 1, '$(grep -m 1 error "$err" | sed "s|$small/||g")', no temporary file, the last checkpoint and state untouched"
    else
        fail "$name: full disk during a run: exit $rc, $left temporary files; stderr: $(cat "$err")"
    fi
    rm -f "$small/filler"
    if "$bin" predict --threads 1 --model "$small/run" "the food was good" >/dev/null 2>"$err" &&
        "$bin" --resume "$small/run" --quiet >/dev/null 2>>"$err" && [ "$(epochs_in "$small/run")" -eq 3 ]; then
        pass "$name: with room again the checkpoint loads and --resume finishes the run"
    else
        fail "$name: after the full disk: $(cat "$err")"
    fi

    # Full from the start: run.json cannot be written; nothing is left behind.
    dd if=/dev/zero of="$small/filler" bs=4k >/dev/null 2>&1
    "$bin" "$data" "${tiny[@]}" --epochs 1 --out "$small/new" >/dev/null 2>"$err"
    rc=$?
    if [ "$rc" -eq 1 ] && grep -q "$small/new/run.json: .*No space left on device" "$err" && [ ! -e "$small/new" ] &&
        sanitizer_clean "$name: full disk at the start" "$err"; then
        pass "$name: a new run on a full disk: exit 1 naming run.json, the directory it made is gone"
    else
        fail "$name: a new run on a full disk: exit $rc; stderr: $(cat "$err"); left: $(ls -a "$small/new" 2>&1)"
    fi
    rm -f "$small/filler"

    # Read-only: the run directory's lock cannot be made; nothing changes; the model still loads.
    before=$(snapshot "$small/run")
    mount -o remount,ro "$small" || { skip "read-only directory (remount refused)"; return "$failures"; }
    "$bin" --resume "$small/run" --epochs 4 --quiet >/dev/null 2>"$err"
    rc=$?
    local rc2
    "$bin" "$data" "${tiny[@]}" --epochs 1 --out "$small/run" --overwrite >/dev/null 2>>"$err"
    rc2=$?
    if [ "$rc" -eq 1 ] && [ "$rc2" -eq 1 ] && grep -q "$small/run/.lock: .*Read-only file system" "$err" &&
        [ "$(snapshot "$small/run")" = "$before" ] && sanitizer_clean "$name: read-only" "$err" &&
        "$bin" predict --threads 1 --model "$small/run" "the food was good" >/dev/null; then
        pass "$name: read-only run directory: --resume and --overwrite exit 1, '$(grep -m 1 error "$err" | sed "s|$small/||g")'; the model loads"
    else
        fail "$name: read-only run directory: exit $rc and $rc2; stderr: $(cat "$err")"
    fi
    return "$failures"
}
export -f small_disk_cases snapshot sanitizer_clean fail pass epochs_in

small_disk() {  # the cases above in a private mount namespace, or skipped
    local small=$dir/small how
    mkdir -p "$small"
    for how in "unshare -m" "unshare -rm"; do
        $how true 2>/dev/null || continue
        $how bash -c 'mount -t tmpfs -o size=2m tmpfs "$3" 2>/dev/null || exit 77
                      small_disk_cases "$@"' _ "$bin" "$name" "$small" "$dir/data.tsv"
        local got=$?
        [ "$got" -eq 77 ] && continue
        failures=$((failures + got))
        return
    done
    skip "$name: full disk and read-only directory (no private mount namespace with a tmpfs here)"
    if [ "$(id -u)" -ne 0 ]; then   # without root a read-only directory is just chmod a-w
        "$bin" data.tsv "${TINY[@]}" --epochs 3 --stop-after 1 --out ro >/dev/null 2>&1
        chmod a-w ro
        expect "read-only directory (chmod)" 1 "ro/\.lock: .*Permission denied" --resume ro &&
            pass "$name: read-only run directory: exit 1, $(first_line error)"
        chmod u+w ro
    fi
}

# ------------------------------------------------------------------ the cases
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --batch-size 8 --threads 1 --quiet)
for bin in "$TRAIN" "$ASAN"; do
    name=$(basename "$bin")
    dir=$tmp/$name
    mkdir -p "$dir" && cd "$dir" || exit 1
    cp "$tmp/data.tsv" data.tsv
    out=$dir/out.txt err=$dir/err.txt

    # A rerun into a run is refused; the run stays byte for byte.
    expect "first run" 0 "" data.tsv "${TINY[@]}" --epochs 2 --out first
    before=$(snapshot first)
    expect "rerun into a run" 2 "first holds a run \(run\.json, model\.safetensors, state\.safetensors\)" \
        data.tsv "${TINY[@]}" --epochs 1 --lr 0.01 --out first &&
        verify "the refusal names --overwrite, --resume first and --out" \
            grep -q -- "--overwrite.*--resume first.*--out DIR" "$err" &&
        verify "a refused rerun changed files of the run" [ "$(snapshot first)" = "$before" ] &&
        pass "$name: rerun refused, exit 2: '$(first_line "holds a run")'; every file byte-identical"

    # What is left of a run, even a lone metrics.csv, is kept as one.
    mkdir -p leftover && cp first/metrics.csv leftover/ && echo "notes" >leftover/notes.txt
    before_left=$(snapshot leftover)
    expect "a directory holding only metrics.csv" 2 "leftover holds a run \(metrics\.csv\)" data.tsv "${TINY[@]}" \
        --epochs 1 --out leftover &&
        verify "the refused run changed files in leftover" [ "$(snapshot leftover)" = "$before_left" ] &&
        pass "$name: a directory holding only a metrics.csv is refused as a run: '$(first_line "holds a run")'"

    # A switch given a value says plainly which: --overwrite=no keeps the run,
    # and a value that is neither yes nor no is refused.
    expect "--overwrite=no" 2 "first holds a run" data.tsv "${TINY[@]}" --epochs 1 --out first --overwrite=no &&
        expect "--overwrite=maybe" 2 "--overwrite is a switch: .*got 'maybe'" data.tsv "${TINY[@]}" --epochs 1 \
            --out first --overwrite=maybe &&
        verify "--overwrite=no or =maybe changed files of the run" [ "$(snapshot first)" = "$before" ] &&
        pass "$name: --overwrite=no refused as a rerun, --overwrite=maybe refused naming the switch; the run untouched"

    # --overwrite: refused data leaves the run as it was; good data replaces it,
    # old outputs included (report.txt of the finished run), other files stay.
    printf 'no tab here\n' >bad.tsv
    expect "--overwrite with bad data" 2 "bad\.tsv:1: no tab" bad.tsv "${TINY[@]}" --out first --overwrite &&
        verify "--overwrite with bad data changed the run" [ "$(snapshot first)" = "$before" ] &&
        verify "--overwrite with bad data: no note that the run is replaced only once the data is read" grep -q "will be replaced once the new data is read" "$err" &&
        pass "$name: --overwrite with bad data: exit 2, the run untouched, as the note said it might be"
    echo "keep me" >first/notes.txt
    expect "--overwrite" 0 "overwrite: the run in first" data.tsv "${TINY[@]}" --epochs 3 --stop-after 1 --lr 0.01 \
        --out first --overwrite &&
        verify "metrics.csv after --overwrite has $(epochs_in first) epochs, not 1" [ "$(epochs_in first)" -eq 1 ] &&
        verify "run.json after --overwrite lacks the new --lr" grep -q '"lr": 0.01,' first/run.json &&
        verify "the old run's report.txt survived --overwrite" [ ! -e first/report.txt ] &&
        verify "--overwrite removed a file that is not the run's" [ -f first/notes.txt ] &&
        verify "the model after --overwrite does not load" "$bin" predict --threads 1 --model first "good food" &&
        pass "$name: --overwrite replaces the run (new run.json and metrics, the old report.txt gone, notes.txt kept)"

    # Default directories are numbered; the first stays as it was.
    expect "default directory" 0 "" data.tsv "${TINY[@]}" --epochs 1
    before=$(snapshot runs/data)
    expect "default directory again" 0 "runs/data holds a run.*writes to runs/data-2" data.tsv "${TINY[@]}" --epochs 1 &&
        expect "and again" 0 "writes to runs/data-3" data.tsv "${TINY[@]}" --epochs 1 &&
        verify "runs/data-2 or -3 has no model" [ -f runs/data-2/model.safetensors -a -f runs/data-3/model.safetensors ] &&
        verify "runs/data changed" [ "$(snapshot runs/data)" = "$before" ] &&
        pass "$name: default runs/data, then runs/data-2 and -3, each saying where it writes"
    expect "--overwrite of the default" 0 "overwrite: the run in runs/data " data.tsv "${TINY[@]}" --epochs 1 --overwrite &&
        verify "--overwrite without --out made runs/data-4" [ ! -e runs/data-4 ] && pass "$name: --overwrite without --out replaces runs/data itself"

    # reproduce and compare-pe follow the same rule.
    expect "reproduce" 0 "" reproduce runs/data --threads 1 --quiet &&
        expect "reproduce again" 0 "writes to runs/data/reproduce-2" reproduce runs/data --threads 1 --quiet &&
        expect "reproduce into a run" 2 "runs/data/reproduce holds a run" \
            reproduce runs/data --out runs/data/reproduce --quiet &&
        expect "reproduce --overwrite" 0 "" reproduce runs/data --out runs/data/reproduce --overwrite --quiet &&
        pass "$name: reproduce: runs/data/reproduce, then -2; --out into a run refused, --overwrite accepted"
    # --overwrite of the run keeps its reproductions (a directory tree is not
    # removed for the user) and says they reproduce the replaced run.
    expect "--overwrite of a reproduced run" 0 "" data.tsv "${TINY[@]}" --epochs 1 --out runs/data --overwrite &&
        verify "the note: $(grep -m1 "note: kept" "$out")" grep -qxE "note: kept (reproduce, reproduce-2|reproduce-2, reproduce) in runs/data from the replaced run: they reproduce that run, not this one; remove them if no longer wanted" "$out" &&
        verify "reproduce/ and reproduce-2/ kept" [ -f runs/data/reproduce/run.json -a -f runs/data/reproduce-2/run.json ] &&
        expect "--overwrite of a run without reproductions" 0 "" data.tsv "${TINY[@]}" --epochs 1 --out first --overwrite &&
        verify "a run without reproductions notes some" bash -c '! grep -q "note: kept" "$1"' _ "$out" &&
        pass "$name: --overwrite keeps the replaced run's reproduce/ and reproduce-2/ and says whose they are"
    expect "compare-pe" 0 "" compare-pe data.tsv "${TINY[@]}" --epochs 1 --out cmp &&
        expect "compare-pe again" 2 "cmp holds a run \(pe-sinusoidal/run\.json, pe-none/run\.json, compare\.png\)" \
            compare-pe data.tsv "${TINY[@]}" --epochs 1 --out cmp &&
        expect "compare-pe --overwrite" 0 "" compare-pe data.tsv "${TINY[@]}" --epochs 1 --out cmp --overwrite &&
        pass "$name: compare-pe into a comparison refused, --overwrite accepted"
    # an interrupted comparison says it cannot be continued as one, and how to start it again
    timeout --preserve-status -s INT 2 "$bin" compare-pe data.tsv "${TINY[@]}" --epochs 100000 --out cmpi >cmpi.out 2>cmpi.err
    rc=$?
    [ $rc -eq 130 ] && grep -q "compare-pe stopped in its --pe [a-z]* run: the comparison itself cannot be continued.*--out cmpi --overwrite" cmpi.err \
        && pass "$name: an interrupted compare-pe: exit 130, '$(grep -o "compare-pe stopped.*continued" cmpi.err)'" \
        || fail "$name: interrupted compare-pe: exit $rc: $(cat cmpi.err)"

    # Two runs into one directory: the first, waiting on a FIFO for its data,
    # holds the lock; the second is refused naming it; the first then finishes.
    mkfifo pipe
    "$bin" pipe "${TINY[@]}" --epochs 2 --out busy >busy.out 2>busy.err &
    pid=$!
    if ! wait_for busy/.lock "pid $pid " "$pid"; then
        fail "$name: the first run never locked busy/: $(cat busy.err)"
    else
        expect "second run into a busy directory" 2 "busy is in use by another run \(pid $pid on host" \
            data.tsv "${TINY[@]}" --epochs 1 --out busy
        refusal=$(first_line "in use")
        expect "--overwrite into a busy directory" 2 "busy is in use" data.tsv "${TINY[@]}" --out busy --overwrite
        expect "--resume of a busy directory" 2 "busy is in use" --resume busy
        kill -0 "$pid" 2>/dev/null || fail "$name: the first run ended early: $(cat busy.err)"
        cat data.tsv >pipe
        wait "$pid"
        rc=$?
        sanitizer_clean "$name: FIFO run" busy.err
        hash=$(sha256sum <data.tsv | cut -d' ' -f1)
        if [ "$rc" -eq 0 ] && "$bin" predict --threads 1 --model busy "good food" >/dev/null &&
            grep -q "\"sha256\": \"$hash\", \"lines\": 200" busy/run.json && [ ! -e busy/.lock ]; then
            pass "$name: second run refused while the first held busy/ ('$refusal'); the first, reading a FIFO, finished, recorded the data's SHA-256, and its model loads"
        else
            fail "$name: the first run (FIFO input): exit $rc: $(cat busy.err); $(grep sha256 busy/run.json)"
        fi
        # Its data cannot be read again to be checked: --resume says so, and does not wait on the FIFO.
        start=$SECONDS
        expect "--resume of a run trained on a FIFO" 2 "pipe \(the train data\) is not a regular file" \
            --resume busy &&
            verify "--resume of a FIFO run took $((SECONDS - start)) s" [ $((SECONDS - start)) -lt 30 ] &&
            pass "$name: --resume of a run trained on a FIFO: exit 2, '$(first_line "regular file" | cut -c 1-90)...'"
    fi

    # Ctrl-C while a pipe has nothing to give: the read is cut short, the
    # run says it trained nothing and exits 130 (not a read error, exit 1).
    mkfifo silent
    sleep 60 >silent &
    writer=$!
    "$bin" silent "${TINY[@]}" --epochs 1 --out quiet-pipe >/dev/null 2>silent.err &
    pid=$!
    if wait_for quiet-pipe/.lock "pid $pid " "$pid"; then
        # until it ends: a signal that comes before the read starts only sets the stop flag
        for _ in $(seq 1 300); do
            kill -INT "$pid" 2>/dev/null || break
            sleep 0.1
        done
        wait "$pid"
        rc=$?
        sanitizer_clean "$name: Ctrl-C on a silent pipe" silent.err
        if [ "$rc" -eq 130 ] && grep -q "silent:1: interrupted by a signal while reading the data, before training began; nothing was trained" silent.err &&
            [ ! -e quiet-pipe/run.json ] && [ ! -e quiet-pipe/.lock ]; then
            pass "$name: Ctrl-C while a pipe is silent: exit 130, 'nothing was trained', no run files and no lock left"
        else
            fail "$name: Ctrl-C while a pipe is silent: exit $rc: $(cat silent.err); $(ls quiet-pipe 2>&1)"
        fi
    else
        fail "$name: the run on a silent pipe never locked its directory: $(cat silent.err)"
        kill "$pid" 2>/dev/null
    fi
    kill "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null

    # The same in the middle of training.
    "$bin" data.tsv "${TINY[@]}" --epochs 40 --out busy2 >/dev/null 2>busy2.err &
    pid=$!
    if wait_for busy2/metrics.csv "^1," "$pid"; then
        expect "second run during training" 2 "busy2 is in use by another run \(pid $pid " data.tsv "${TINY[@]}" \
            --epochs 1 --out busy2
        # reproduce, diff and eval of the run in use: refused naming it (reproduce reported a false DIFFERENT);
        # the run is stopped (SIGSTOP, lock held) meanwhile so that it cannot end before they do
        kill -STOP "$pid"
        expect "reproduce of a run in use" 2 "^error: busy2 is in use: a run is still writing it \(pid $pid on host .* holds busy2/\.lock\).*then reproduce it" \
            reproduce busy2 --threads 1 --quiet &&
            refusal=$(first_line "in use" | cut -c 1-100) &&
            verify "a refused reproduce wrote busy2/reproduce" [ ! -e busy2/reproduce ] &&
            expect "diff with a run in use" 2 "^error: busy2 is in use: .*\(pid $pid .*then compare it" diff first busy2 &&
            expect "eval of a run in use" 2 "^error: busy2 is in use: .*\(pid $pid .*then evaluate it" \
                eval --threads 1 --model busy2/model.safetensors data.tsv &&
            expect "diff of two idle runs" 0 "" diff first runs/data &&
            pass "$name: reproduce, diff and eval of a run in training refused (exit 2) naming pid $pid: '$refusal...'"
        kill -CONT "$pid"
        alive=1
        kill -0 "$pid" 2>/dev/null || alive=0
        wait "$pid"
        rc=$?
        if [ "$alive" -eq 1 ] && [ "$rc" -eq 0 ] && [ "$(epochs_in busy2)" -eq 40 ] &&
            "$bin" predict --threads 1 --model busy2 "good food" >/dev/null; then
            pass "$name: a second run refused during the first's epochs; the first finished all 40, its model loads"
        else
            fail "$name: concurrent runs mid-training: first alive $alive, exit $rc: $(cat busy2.err)"
        fi
    else
        fail "$name: the run for the mid-training case did not finish an epoch: $(cat busy2.err)"
    fi

    # A lock left by kill -9 is detected and taken over.
    "$bin" data.tsv "${TINY[@]}" --epochs 200 --out killed >/dev/null 2>killed.err &
    pid=$!
    if wait_for killed/state.safetensors '"epochs_done":"' "$pid"; then
        kill -9 "$pid"
        wait "$pid" 2>/dev/null
        done_epochs=$(grep -ao '"epochs_done":"[0-9]*"' killed/state.safetensors | grep -o '[0-9]*')
        grep -q "pid $pid " killed/.lock || fail "$name: the killed run left no lock naming it"
        expect "--resume after kill -9" 0 "killed/\.lock was left by a run that did not end cleanly \(pid $pid " \
            --resume killed --epochs $((done_epochs + 1)) &&
            verify "the lock outlived the resumed run" [ ! -e killed/.lock ] &&
            verify "the resumed run's model does not load" "$bin" predict --threads 1 --model killed "good food" &&
            pass "$name: stale lock of a kill -9'd run taken over with a note; resumed, model loads"
    else
        fail "$name: the run to kill did not finish an epoch: $(cat killed.err)"
    fi

    # Streams: process substitution (through gzip), /dev/zero, an endless line.
    gzip -c data.tsv >data.tsv.gz
    expect "process substitution" 0 "" <(gzip -dc data.tsv.gz) "${TINY[@]}" --epochs 1 --out piped &&
        verify "run.json of a piped run lacks the data's SHA-256" \
            grep -q "\"sha256\": \"$(sha256sum <data.tsv | cut -d' ' -f1)\"" piped/run.json &&
        pass "$name: <(gzip -dc data.tsv.gz) trains and records the data's SHA-256"
    # without --out: runs/pipe, not runs/63 (the descriptor's number)
    [ -e runs/pipe ] && fail "$name: runs/pipe exists before the case"
    expect "process substitution, no --out" 0 "" <(gzip -dc data.tsv.gz) "${TINY[@]}" --epochs 1 &&
        verify "a piped run without --out is not in runs/pipe: $(ls runs)" [ -f runs/pipe/model.safetensors ] &&
        pass "$name: a piped run without --out goes to runs/pipe"
    # A piped run says up front that it cannot be resumed; --stop-after,
    # which would leave it unfinishable, is refused; an interrupt names why
    # it cannot continue instead of a --resume command; --resume says the
    # pipe ended with the run. A file's run offers the command, which resumes.
    expect "process substitution, --stop-after" 2 "^error: --stop-after 1: /dev/fd/[0-9]+ \(the train data\) is a pipe, FIFO or device, which --resume cannot read again, so the run could never finish" \
        <(gzip -dc data.tsv.gz) "${TINY[@]}" --epochs 2 --stop-after 1 --out piped2 &&
        verify "the refused piped run left a directory" [ ! -e piped2 ] &&
        expect "process substitution, 2 epochs" 0 "" <(gzip -dc data.tsv.gz) "${TINY[@]}" --epochs 2 --out piped2 &&
        verify "a piped run's note: $(grep -m1 note "$out")" \
            grep -qE "^note: /dev/fd/[0-9]+ \(the train data\) is a pipe, FIFO or device, not a file: this run cannot be resumed" "$out" &&
        expect "--resume of the piped run" 2 "/dev/fd/[0-9]+ \(the train data\) was a descriptor of the training process \(a pipe" \
            --resume piped2 &&
        expect "a file's run, --stop-after" 0 "" data.tsv "${TINY[@]}" --epochs 2 --stop-after 1 --out filed &&
        verify "a file's stop: $(grep -m1 stopped "$out")" \
            grep -qx "stopped after epoch 1 (--stop-after); continue with: ./train --resume filed" "$out" &&
        verify "a file's run has the pipe note" bash -c '! grep -q "^note: .*pipe" "$1"' _ "$out" &&
        expect "--resume of the file's run" 0 "" --resume filed &&
        pass "$name: a piped run notes it cannot be resumed, --stop-after on one is refused, --resume of one names the pipe (exit 2); a file's run names the command, which resumes"
    "$bin" <(gzip -dc data.tsv.gz) "${TINY[@]}" --epochs 400 --out piped3 >/dev/null 2>piped3.err &
    pid=$!
    if wait_for piped3/metrics.csv "^1," "$pid"; then
        kill -INT "$pid"
        wait "$pid"
        rc=$?
        verify "SIGINT of a piped run: exit $rc, expected 130: $(cat piped3.err)" [ "$rc" -eq 130 ] &&
            verify "the interrupt's first line: $(cat piped3.err)" \
                grep -qE "^interrupted by SIGINT in epoch [0-9]+ after step [0-9]+ of [0-9]+\.$" piped3.err &&
            verify "why it cannot continue: $(cat piped3.err)" grep -qE "^/dev/fd/[0-9]+ \(the train data\) .* so this run cannot continue; the model of its last finished epoch is in piped3$" piped3.err &&
            verify "a --resume offered or state called saved" bash -c '! grep -qE "state saved|--resume piped3" "$1"' _ piped3.err &&
            verify "the model named does not load" "$bin" predict --threads 1 --model piped3 "good food" &&
            pass "$name: SIGINT of a piped run: exit 130, no --resume offered, names its last epoch's model, which loads"
    else
        fail "$name: the piped run to interrupt did not finish an epoch: $(cat piped3.err)"
    fi
    start=$SECONDS
    expect "/dev/zero" 2 "/dev/zero:1: line is too long \(more than 1048576 bytes" /dev/zero "${TINY[@]}" --out zero &&
        verify "/dev/zero took $((SECONDS - start)) s" [ $((SECONDS - start)) -lt 30 ] &&
        verify "the refused run left its directory" [ ! -e zero ] &&
        pass "$name: /dev/zero refused in $((SECONDS - start)) s: '$(first_line "too long")'"
    start=$SECONDS
    (printf 'pos\tgood\nneg\t'; yes word | tr '\n' ' ') | "$bin" /dev/stdin "${TINY[@]}" --out endless >"$out" 2>"$err"
    rc=${PIPESTATUS[1]}
    sanitizer_clean "$name: endless line" "$err"
    if [ "$rc" -eq 2 ] && grep -q "/dev/stdin:2: line is too long" "$err" && [ $((SECONDS - start)) -lt 30 ]; then
        pass "$name: an endless line on a pipe refused at the limit in $((SECONDS - start)) s"
    else
        fail "$name: endless line: exit $rc: $(head -c 300 "$err")"
    fi

    # A recorded data file that is gone: --resume and reproduce name it (and
    # read no uninitialised digest, which the sanitizer build would report).
    cp data.tsv gone.tsv
    expect "run on gone.tsv" 0 "" gone.tsv "${TINY[@]}" --epochs 3 --stop-after 1 --out orphan
    rm gone.tsv
    expect "--resume with the data file gone" 2 "cannot resume orphan: the train data of the run cannot be read: gone\.tsv: No such file or directory \(looked for in $dir, where the run started, and here\)" \
        --resume orphan && pass "$name: --resume with its data file deleted: exit 2, '$(first_line "gone")'"
    expect "reproduce with the data file gone" 2 "cannot reproduce orphan: .*gone\.tsv: No such file" reproduce orphan &&
        pass "$name: reproduce with its data file deleted: exit 2, names gone.tsv"

    # A failed --out leaves no empty directories it made, and keeps those that
    # were there: a 4087-character path, 20 levels under kept/x, whose files'
    # names are too long; and a path whose third level is too long a name.
    level=$(printf 'd%.0s' $(seq 200)) deep=kept/x
    for _ in $(seq 20); do deep=$deep/$level; done
    deep=$deep/$(printf 'e%.0s' $(seq $((4087 - ${#deep} - 1))))
    mkdir -p kept/x
    expect "a 4087-character --out" 1 "/run\.js[a-z]*: cannot create a temporary file next to it: File name too long" \
        data.tsv "${TINY[@]}" --epochs 1 --out "$deep" &&
        verify "the failed run left $(find kept -mindepth 2 | wc -l) directories under kept/x" [ -z "$(find kept -mindepth 2)" ] &&
        verify "the failed run removed kept/x, which was there before it" [ -d kept/x ] &&
        expect "a --out with a 300-character name" 1 "cannot create directory made1/made2/e+: File name too long" \
            data.tsv "${TINY[@]}" --epochs 1 --out "made1/made2/$(printf 'e%.0s' $(seq 300))/run" &&
        verify "the refused --out left made1/: $(find made1 2>/dev/null | head -c 100)" [ ! -e made1 ] &&
        pass "$name: a failed --out (4087 characters; a name too long) removes the directories it made, keeps kept/x"

    small_disk
    cd "$tmp" || exit 1
done

finish test_rundir
