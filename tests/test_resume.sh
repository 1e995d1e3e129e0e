#!/usr/bin/env bash
# test_resume.sh: --resume (also from another directory), --stop-after, SIGINT/SIGTERM mid-epoch, SIGPIPE (| head), SIGKILL at random moments and a NaN stop all end bit-exact or safe.
# Run from the project root after `make test` has built ./train and build/tests/tool_stedit.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
STEDIT=$PWD/build/tests/tool_stedit
for bin in "$TRAIN" "$STEDIT"; do
    [ -x "$bin" ] || { echo "FAIL: $bin is not built (run make test)"; exit 1; }
done

# Idle OpenMP threads sleep instead of spinning: on a busy machine spinning
# threads of tiny models can slow a run down a hundredfold. Results are the same.
export OMP_WAIT_POLICY=passive

TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --quiet)

# Training data from the committed synthetic sets: a small file for short
# epochs, and 7000 examples (6 classes) for epochs a signal lands inside.
head -n 401 data/negation/train.tsv >"$tmp/small.tsv"
cat data/negation/train.tsv data/before/train.tsv data/rare/train.tsv >"$tmp/big.tsv"

# metrics.csv without the time columns (seconds, tokens_per_s).
numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }

# The tensors of a safetensors file: the bytes after its header (an 8-byte
# little-endian length, then that much JSON). A state's header holds times.
tensor_bytes() {  # file
    local n
    n=$(od -An -t u8 -N8 "$1" | tr -d ' ')
    tail -c +$((9 + n)) "$1"
}

# Same model bytes, same metrics numbers and the same state tensors
# (weights, Adam moments and, with --swa, the weight average) in two run
# directories.
expect_same_run() {  # dir_a, dir_b, what
    if ! cmp -s "$1/model.safetensors" "$2/model.safetensors"; then
        fail "$3: model.safetensors differs from the uninterrupted run"
    elif ! cmp -s <(tensor_bytes "$1/state.safetensors") <(tensor_bytes "$2/state.safetensors"); then
        fail "$3: the tensors of state.safetensors differ from the uninterrupted run's"
    elif ! diff <(numbers "$1/metrics.csv") <(numbers "$2/metrics.csv") >"$tmp/diff.txt"; then
        fail "$3: metrics.csv differs from the uninterrupted run:"; cat "$tmp/diff.txt"
    else
        pass "$3: model.safetensors and the state's tensors byte-identical, metrics.csv rows identical ($(($(wc -l <"$1/metrics.csv") - 1)) epochs)"
    fi
}

# ---------------------------------------------------------------- --stop-after
SMALL=("$tmp/small.tsv" "${TINY[@]}" --batch-size 8 --epochs 4)
"$TRAIN" "${SMALL[@]}" --threads 2 --out "$tmp/full" >/dev/null || fail "uninterrupted 4-epoch run failed"
"$TRAIN" "${SMALL[@]}" --threads 2 --stop-after 2 --out "$tmp/stopped" >"$tmp/out.txt"
rc=$?
if [ "$rc" -ne 0 ] || ! grep -q -- "--resume $tmp/stopped" "$tmp/out.txt"; then
    fail "--stop-after 2: exit $rc, expected 0 and a resume hint"
elif [ "$(($(wc -l <"$tmp/stopped/metrics.csv") - 1))" -ne 2 ]; then
    fail "--stop-after 2 left $(($(wc -l <"$tmp/stopped/metrics.csv") - 1)) epochs in metrics.csv"
else
    pass "--stop-after 2 exits 0 after 2 epochs and says how to resume"
fi
"$TRAIN" --resume "$tmp/stopped" --quiet --threads 1 >/dev/null || fail "--resume after --stop-after failed"
expect_same_run "$tmp/full" "$tmp/stopped" "stop after 2 at 2 threads, resume at 1 thread"

# Stopped twice, at 1 thread throughout.
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 1 --out "$tmp/twice" >/dev/null &&
    "$TRAIN" --resume "$tmp/twice" --stop-after 3 --threads 1 --quiet >/dev/null &&
    "$TRAIN" --resume "$tmp/twice" --threads 1 --quiet >/dev/null || fail "stop after 1, then 3, then resume failed"
expect_same_run "$tmp/full" "$tmp/twice" "stop after 1, resume to 3, resume to 4 (1 thread)"

# From another working directory: a run started on a relative path (here
# small.tsv, from $tmp) resumes from /, as run.json records where it started.
(cd "$tmp" && "$TRAIN" small.tsv "${TINY[@]}" --batch-size 8 --epochs 4 --threads 1 --stop-after 2 --out elsewhere \
    >/dev/null) && (cd / && "$TRAIN" --resume "$tmp/elsewhere" --threads 1 --quiet >/dev/null 2>"$tmp/err.txt") \
    || fail "a run on a relative data path did not resume from another directory: $(cat "$tmp/err.txt")"
expect_same_run "$tmp/full" "$tmp/elsewhere" "relative data path, resumed from another directory"

# Early stopping: best weights and patience counters survive a stop.
PAT=("$tmp/small.tsv" "${TINY[@]}" --batch-size 8 --epochs 8 --lr 0.01 --patience 2 --threads 2)
"$TRAIN" "${PAT[@]}" --out "$tmp/pat_full" >/dev/null || fail "patience run failed"
"$TRAIN" "${PAT[@]}" --stop-after 3 --out "$tmp/pat" >/dev/null && "$TRAIN" --resume "$tmp/pat" --quiet --threads 2 >/dev/null ||
    fail "patience run stopped after 3 and resumed failed"
expect_same_run "$tmp/pat_full" "$tmp/pat" "--patience 2: stop after 3, resume"

# --patience first given on resume: the weights of the epochs before were
# not kept (the run's best epoch here is 1, its model epoch 6's weights), so
# early stopping counts from the last one; the weights it says it restored
# are the model (the final report's validation loss is that epoch's in
# metrics.csv).
NOPAT=("$tmp/small.tsv" "${TINY[@]}" --batch-size 8 --swa 0 --threads 1)
"$TRAIN" "${NOPAT[@]}" --epochs 6 --out "$tmp/newpat" >/dev/null &&
    "$TRAIN" --resume "$tmp/newpat" --epochs 10 --patience 1 --threads 1 >"$tmp/newpat.txt" 2>&1 ||
    fail "--patience on resume: a run failed"
best_before=$(awk -F, 'NR > 1 && NR <= 7 && (best == "" || $4 < best) { best = $4; e = $1 } END { print e }' "$tmp/newpat/metrics.csv")
restored=$(sed -n 's/^early stopping: .*restored the weights of epoch \([0-9]*\)$/\1/p' "$tmp/newpat.txt")
final_loss=$(sed -n 's/^validation ([0-9]* examples, loss \([0-9.]*\))$/\1/p' "$tmp/newpat.txt")
epoch_loss=$(awk -F, -v e="$restored" 'NR > 1 && $1 == e { printf "%.4f", $4 }' "$tmp/newpat/metrics.csv")
if [ "$best_before" = 6 ]; then
    fail "--patience new on resume: the first 6 epochs' best is the last, so this case tests nothing (change the data)"
elif grep -q "^note: --patience is new on this resume.*counts from epoch 6 " "$tmp/newpat.txt" && [ -n "$restored" ] &&
    [ "$restored" -ge 6 ] && [ -n "$final_loss" ] && [ "$final_loss" = "$epoch_loss" ]; then
    pass "--patience new on resume (best before: epoch $best_before, not kept): counts from epoch 6, restores epoch $restored, whose val loss ($epoch_loss) the model has"
else
    fail "--patience new on resume: restored epoch '$restored', model's val loss '$final_loss', that epoch's '$epoch_loss': $(grep -E '^(note|early)' "$tmp/newpat.txt")"
fi

# The same on a finished run whose model is --swa's mean: the run now says
# it holds epoch 4's weights, so model.safetensors must be them, not the mean.
"$TRAIN" "$tmp/small.tsv" "${TINY[@]}" --batch-size 8 --epochs 4 --threads 1 --out "$tmp/swapat" >/dev/null ||
    fail "--patience on a finished swa run: the run failed"
cp "$tmp/swapat/model.safetensors" "$tmp/swapat.before"
if ! grep -q "^swa: .*the model is the mean" "$tmp/swapat/report.txt"; then
    fail "--patience on a finished swa run: the average was not kept, so this case tests nothing (change the data)"
elif "$TRAIN" --resume "$tmp/swapat" --patience 1 --threads 1 >"$tmp/swapat.txt" 2>&1 &&
    grep -q "^run .*: weights of epoch 4 (best validation loss, restored)" "$tmp/swapat.txt" &&
    ! cmp -s "$tmp/swapat.before" "$tmp/swapat/model.safetensors" &&
    grep -q "^validation ([0-9]* examples, loss $(awk -F, '$1 == 4 { printf "%.4f", $4 }' "$tmp/swapat/metrics.csv"))" "$tmp/swapat.txt"; then
    pass "--patience on a finished run whose model was the swa mean: model.safetensors becomes epoch 4's weights, as the run says"
else
    fail "--patience on a finished swa run: $(grep -E '^(note|run|validation)' "$tmp/swapat.txt"); model file changed: $(cmp -s "$tmp/swapat.before" "$tmp/swapat/model.safetensors" && echo no || echo yes)"
fi

# A finished run resumed again has nothing to do and keeps its files.
cp "$tmp/full/model.safetensors" "$tmp/model.before"
if "$TRAIN" --resume "$tmp/full" --quiet --threads 1 >"$tmp/out.txt" 2>&1 && grep -q "nothing to train" "$tmp/out.txt" &&
    cmp -s "$tmp/model.before" "$tmp/full/model.safetensors"; then
    pass "resuming a finished run: exit 0, nothing to train, model unchanged"
else
    fail "resuming a finished run: $(cat "$tmp/out.txt")"
fi

# Refusals: options that shape the model, changed data, no run.
expect_refusal() {  # what, expected text in stderr, command...
    local what=$1 want=$2; shift 2
    "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -q -- "$want" "$tmp/err.txt"; then
        pass "$what: exit 2, $(head -n 1 "$tmp/err.txt")"
    else
        fail "$what: exit $rc, stderr: $(head -c 300 "$tmp/err.txt")"
    fi
}
expect_refusal "--resume with --d-model" "--d-model cannot change" "$TRAIN" --resume "$tmp/stopped" --d-model 32
expect_refusal "--resume of a directory without a run" "cannot resume" "$TRAIN" --resume "$tmp/nothing"
mkdir "$tmp/nostate" && cp "$tmp/stopped/run.json" "$tmp/nostate/"
expect_refusal "--resume of a run killed in its first epoch" "no saved state" "$TRAIN" --resume "$tmp/nostate"
cp -r "$tmp/stopped" "$tmp/changed"
cp "$tmp/small.tsv" "$tmp/small.keep"
printf 'pos\tone more line\n' >>"$tmp/small.tsv"
expect_refusal "--resume after the data changed" "changed since the run" "$TRAIN" --resume "$tmp/changed"
mv "$tmp/small.keep" "$tmp/small.tsv"

# ------------------------------------------------- SIGINT / SIGTERM mid-epoch
# Epochs of about 3000 steps: the signal, sent just after the state shows
# epoch $after done, lands early in the next epoch.
BIG=("$tmp/big.tsv" "${TINY[@]}" --batch-size 2 --epochs 3 --threads 1)
"$TRAIN" "${BIG[@]}" --out "$tmp/big_full" >/dev/null || fail "uninterrupted run on the larger data failed"

# Waits until metrics.csv holds that many epochs: an epoch writes the
# checkpoint, the state, metrics.csv, then curves.png, so after a moment more
# the trainer is in the next epoch.
wait_for_epochs() {  # dir, epochs, pid
    for _ in $(seq 1 6000); do
        [ "$(($( (wc -l <"$1/metrics.csv") 2>/dev/null || echo 1) - 1))" -ge "$2" ] && return 0
        kill -0 "$3" 2>/dev/null || return 1
        sleep 0.005
    done
    return 1
}

interrupt_and_resume() {  # signal, epochs done before the signal, threads for the resume
    local sig=$1 after=$2 dir=$tmp/sig_$1
    "$TRAIN" "${BIG[@]}" --out "$dir" >/dev/null 2>"$tmp/err.txt" &
    local pid=$!
    wait_for_epochs "$dir" "$after" "$pid" || { fail "SIG$sig: the run did not reach epoch $after"; wait "$pid"; return; }
    sleep 0.05   # past the end of the epoch's last write (an epoch here takes 0.2 s or more)
    kill -"$sig" "$pid"
    wait "$pid"
    local rc=$?
    local where
    where=$(grep -o "in epoch [0-9]* after step [0-9]* of [0-9]*" "$tmp/err.txt")
    if [ "$rc" -eq 130 ] && grep -q -- "--resume $dir" "$tmp/err.txt"; then
        pass "SIG$sig: exit 130, state saved $where, resume hint printed"
        echo "REPORT SIG$sig $where: exit 130, resumed bit-exact (checked below)"
    else
        fail "SIG$sig: exit $rc, stderr: $(cat "$tmp/err.txt")"
    fi
    "$TRAIN" --resume "$dir" --quiet --threads "$3" >/dev/null || fail "resume after SIG$sig failed"
    expect_same_run "$tmp/big_full" "$dir" "SIG$sig $where, resumed at $3 thread(s)"
}
interrupt_and_resume INT 1 1
interrupt_and_resume TERM 2 2

# The work is saved before the pictures: when curves.png cannot be written
# (a directory put in its place once the run has started) the first epoch
# ends in exit 1 naming it, yet the checkpoint and the state hold that epoch,
# and once the way is clear, --resume ends byte-identical.
"$TRAIN" "${BIG[@]}" --out "$tmp/pic" >/dev/null 2>"$tmp/err.txt" &
pid=$!
for _ in $(seq 1 6000); do [ -e "$tmp/pic/run.json" ] && break; sleep 0.01; done
mkdir "$tmp/pic/curves.png"
wait "$pid"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "curves.png" "$tmp/err.txt" && grep -qa '"epochs_done":"1"' "$tmp/pic/state.safetensors" &&
    "$TRAIN" predict --threads 1 --model "$tmp/pic" "a good movie" >/dev/null 2>&1; then
    pass "curves.png unwritable: exit 1, '$(sed "s|$tmp/||g" "$tmp/err.txt" | cut -c 1-90)'; epoch 1 saved, the model loads"
else
    fail "curves.png unwritable: exit $rc; stderr: $(cat "$tmp/err.txt")"
fi
rmdir "$tmp/pic/curves.png"
"$TRAIN" --resume "$tmp/pic" --threads 1 --quiet >/dev/null || fail "resume after the unwritable curves.png failed"
expect_same_run "$tmp/big_full" "$tmp/pic" "curves.png unwritable in epoch 1, resumed"

# ------------------------------------------- SIGPIPE: the reader goes away
# `./train DATA | head -n 1`: once head has gone, the next line the run
# prints raises SIGPIPE; the run stops after its step with the state saved
# (exit 130, the resume hint on stderr, which still works), and a resume ends
# byte-identical to the uninterrupted run.
"$TRAIN" "${SMALL[@]}" --threads 1 --out "$tmp/pipe" 2>"$tmp/err.txt" | head -n 1 >/dev/null
rc=${PIPESTATUS[0]}
if [ "$rc" -eq 130 ] && grep -q "interrupted by SIGPIPE" "$tmp/err.txt" && grep -q -- "--resume $tmp/pipe" "$tmp/err.txt"
then
    pass "SIGPIPE: exit 130, $(grep -o "in epoch [0-9]* after step [0-9]* of [0-9]*" "$tmp/err.txt"), resume hint printed"
else
    fail "SIGPIPE: exit $rc, stderr: $(cat "$tmp/err.txt")"
fi
"$TRAIN" --resume "$tmp/pipe" --quiet --threads 1 >/dev/null || fail "resume after SIGPIPE failed"
expect_same_run "$tmp/full" "$tmp/pipe" "SIGPIPE, resumed"

# ----------------------------------------------------------------- NaN stop
# A state whose weights are all 3e38 (written with a valid checksum by the
# tool; finite, so it loads): the first step's loss overflows, training stops
# naming epoch and step, exit 1, and the last good checkpoint is left as it was.
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 2 --out "$tmp/nan" >/dev/null
cp "$tmp/nan/model.safetensors" "$tmp/model.good"
"$STEDIT" "$tmp/nan/state.safetensors" "$tmp/nan/state.safetensors" poison || fail "tool_stedit poison failed"
"$TRAIN" --resume "$tmp/nan" --quiet --threads 1 >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "NaN/Inf at epoch 3, step 1" "$tmp/err.txt" &&
    cmp -s "$tmp/model.good" "$tmp/nan/model.safetensors" &&
    "$TRAIN" predict --threads 1 --model "$tmp/nan" "a good movie" >/dev/null 2>&1; then
    pass "overflowing weights: exit 1, '$(cut -c1-70 "$tmp/err.txt")...', checkpoint intact and loads"
else
    fail "overflowing weights: exit $rc, stderr: $(cat "$tmp/err.txt")"
fi

# ------------------------------------------------- a state of another run
# A state of the same shapes from a run with another seed, put in a run's
# directory: --resume refuses it (exit 2, naming both files and both ids)
# and changes no file of the run (it resumed and rewrote metrics.csv's epoch
# 1); with its own state back, the run resumes to its end.
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 1 --out "$tmp/mine" >/dev/null || fail "run mine failed"
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 1 --seed 7 --out "$tmp/theirs" >/dev/null || fail "run theirs failed"
cp "$tmp/mine/state.safetensors" "$tmp/mine.state"
cp "$tmp/theirs/state.safetensors" "$tmp/mine/state.safetensors"
files_of() { (cd "$1" && find . -type f ! -name .lock -print0 | sort -z | xargs -0 sha256sum); }
before=$(files_of "$tmp/mine")
id_mine=$(sed -n 's/^  "run_id": "\([0-9a-f]*\)",$/\1/p' "$tmp/mine/run.json")
id_theirs=$(sed -n 's/^  "run_id": "\([0-9a-f]*\)",$/\1/p' "$tmp/theirs/run.json")
"$TRAIN" --resume "$tmp/mine" --quiet --threads 1 >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ "$rc" -eq 2 ] && [ ${#id_mine} -eq 32 ] && [ ${#id_theirs} -eq 32 ] && [ "$id_mine" != "$id_theirs" ] &&
    grep -qF "cannot resume $tmp/mine: $tmp/mine/state.safetensors is not this run's: its run id is $id_theirs, and $tmp/mine/run.json records $id_mine" "$tmp/err.txt" &&
    [ "$(files_of "$tmp/mine")" = "$before" ]; then
    pass "another run's state refused: exit 2, '$(cut -c1-100 "$tmp/err.txt")...'; no file of the run changed"
else
    fail "another run's state: exit $rc, $(cat "$tmp/err.txt"); files changed: $(diff <(echo "$before") <(files_of "$tmp/mine") | head -n 4)"
fi
cp "$tmp/mine.state" "$tmp/mine/state.safetensors"
"$TRAIN" --resume "$tmp/mine" --quiet --threads 1 >/dev/null 2>"$tmp/err.txt" && [ "$(($(wc -l <"$tmp/mine/metrics.csv") - 1))" -eq 4 ] \
    && pass "with its own state back the run resumes to its 4 epochs" || fail "own state: $(cat "$tmp/err.txt")"

# A loss that overflows in the first epoch (no checkpoint yet, clipping
# off): the message says nothing was saved and offers --clip, not "a lower
# --clip"; training into that directory again is refused with --overwrite as
# the way on, never --resume (which has no state to continue from).
"$TRAIN" "${SMALL[@]}" --threads 1 --lr 10 --weight-decay 10 --clip 0 --warmup 0 --out "$tmp/nan1" >/dev/null 2>"$tmp/err.txt"
rc=$?
"$TRAIN" "${SMALL[@]}" --threads 1 --out "$tmp/nan1" >/dev/null 2>"$tmp/again.txt"
rc2=$?
if [ "$rc" -eq 1 ] && grep -q "NaN/Inf at epoch 1, .*before any checkpoint was saved. Start again with a lower --lr, or --clip 1" \
        "$tmp/err.txt" && [ "$rc2" -eq 2 ] && grep -q "give --overwrite" "$tmp/again.txt" && ! grep -q -- "--resume" "$tmp/again.txt"; then
    pass "overflow in epoch 1: '$(grep -o "training stopped.*" "$tmp/err.txt" | cut -c1-110)...'; a new run there is pointed to --overwrite only"
else
    fail "overflow in epoch 1: exit $rc: $(cat "$tmp/err.txt"); again: exit $rc2: $(cat "$tmp/again.txt")"
fi

# A resume that asks for fewer epochs than are done says how many are done
cp -r "$tmp/full" "$tmp/fewer"
out=$("$TRAIN" --resume "$tmp/fewer" --epochs 2 --threads 1 2>&1)
grep -q "4 epochs of $tmp/fewer are done, more than --epochs 2; nothing to train" <<<"$out" \
    && pass "--epochs below the epochs done: '$(grep -o "4 epochs.*" <<<"$out" | sed "s|$tmp/||")'" \
    || fail "--epochs below the epochs done: $out"

# What may change on resume: the first command again with --resume added
# (the same --d-model, --out the run itself) is no change and proceeds; a
# different value is refused naming both values, another --out is refused;
# a --stop-after epoch already passed is said to have no effect.
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 1 --out "$tmp/same" >/dev/null
"$TRAIN" --resume "$tmp/same" --d-model 16 --out "$tmp/./same/" --stop-after 2 --threads 1 >/dev/null 2>"$tmp/err.txt" \
    && [ "$(($(wc -l <"$tmp/same/metrics.csv") - 1))" -eq 2 ] && [ ! -s "$tmp/err.txt" ] \
    && pass "--resume with the recorded --d-model and --out the run itself: no change, resumed" \
    || fail "--resume with unchanged options: $(cat "$tmp/err.txt")"
"$TRAIN" --resume "$tmp/same" --d-model 32 --threads 1 >/dev/null 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--d-model cannot change when resuming ($tmp/same has 16, given 32)" "$tmp/err.txt" \
    && pass "--resume with another --d-model: exit 2, naming both values" || fail "changed --d-model: exit $rc: $(cat "$tmp/err.txt")"
"$TRAIN" --resume "$tmp/same" --out "$tmp/not-made" --threads 1 >/dev/null 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q -- "a resumed run continues in its own directory" "$tmp/err.txt" && [ ! -e "$tmp/not-made" ] \
    && pass "--resume with another --out: exit 2" || fail "--resume --out not-made: exit $rc: $(cat "$tmp/err.txt")"
"$TRAIN" --resume "$tmp/same" --overwrite --threads 1 >/dev/null 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--overwrite cannot go with --resume, which continues the run in $tmp/same; drop --overwrite" "$tmp/err.txt" \
    && pass "--resume with --overwrite: exit 2, drop --overwrite" || fail "--resume --overwrite: exit $rc: $(cat "$tmp/err.txt")"
"$TRAIN" --resume "$tmp/same" --val "$tmp/small.tsv" --threads 1 >/dev/null 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 2 ] && grep -q -- "--val cannot change when resuming ($tmp/same has none, given $tmp/small.tsv)" "$tmp/err.txt" \
    && pass "--resume with a --val the run did not have: 'has none'" || fail "--resume --val: exit $rc: $(cat "$tmp/err.txt")"
"$TRAIN" --resume "$tmp/same" --stop-after 1 --threads 1 >"$tmp/err.txt" 2>&1; rc=$?   # a run's warnings: its log, stdout
[ $rc -eq 0 ] && grep -q -- "warning: --stop-after 1 has no effect: $tmp/same has done 2 epochs already" "$tmp/err.txt" \
    && pass "--stop-after an epoch already done: warned, the run goes on" || fail "--stop-after passed: exit $rc: $(cat "$tmp/err.txt")"

# A disk that fills between the checkpoint and the state (a file-size limit
# between their sizes): exit 1, the message says which files hold which
# epoch, and --resume with room brings them level, ending as an unbroken run.
"$TRAIN" "${SMALL[@]}" --threads 1 --stop-after 1 --out "$tmp/fill" >/dev/null
model_kb=$(( $(stat -c %s "$tmp/fill/model.safetensors") / 1024 )) state_kb=$(( $(stat -c %s "$tmp/fill/state.safetensors") / 1024 ))
if [ "$state_kb" -gt $((model_kb + 2)) ]; then
    (trap '' XFSZ; ulimit -f $(((model_kb + state_kb) / 2)); "$TRAIN" --resume "$tmp/fill" --threads 1 --quiet) >/dev/null 2>"$tmp/err.txt"
    rc=$?
    "$TRAIN" --resume "$tmp/fill" --threads 1 --quiet >/dev/null 2>&1 || fail "resume after the full disk failed"
    [ $rc -eq 1 ] && grep -q "state.safetensors: write failed: File too large. model.safetensors already holds epoch 2, but the state, metrics.csv and report.txt do not" "$tmp/err.txt" \
        && pass "a disk full after the checkpoint: exit 1, '...$(grep -o "model.safetensors already.*" "$tmp/err.txt" | cut -c1-80)...'" \
        || fail "disk full after the checkpoint: exit $rc: $(cat "$tmp/err.txt")"
    expect_same_run "$tmp/full" "$tmp/fill" "a disk full after the checkpoint, resumed"
    # the same in the first epoch: there is no state to resume from, and the message says so
    (trap '' XFSZ; ulimit -f $(((model_kb + state_kb) / 2)); "$TRAIN" "${SMALL[@]}" --threads 1 --out "$tmp/fill1") \
        >/dev/null 2>"$tmp/err.txt"
    rc=$?
    [ $rc -eq 1 ] && grep -q "model.safetensors holds epoch 1 and works, but no state was ever saved, so the run cannot be resumed" "$tmp/err.txt" \
        && ! grep -q -- "--resume" "$tmp/err.txt" && pass "a disk full after the first checkpoint: no --resume offered" \
        || fail "disk full in epoch 1: exit $rc: $(cat "$tmp/err.txt")"
else
    skip "the state is not larger than the checkpoint here ($state_kb KB, $model_kb KB)"
fi

# ------------------------------------------------------ SIGKILL at 20 moments
# Epochs of a few tens of milliseconds, a checkpoint and state every epoch; the
# trainer is killed -9 after seeded random delays, alternating fresh starts and
# resumes. After each kill, what is on disk must load, and each resume must
# start (it is killed in turn, or finishes with exit 0).
KILL=("$tmp/small.tsv" "${TINY[@]}" --batch-size 4 --epochs 25 --threads 1)
"$TRAIN" "${KILL[@]}" --out "$tmp/kill_full" >/dev/null || fail "uninterrupted run for the SIGKILL test failed"
RANDOM=20240611
kill_dir=$tmp/kill
kills=0 loaded=0 states=0 broken=0 stale=0 resumes=0
for i in $(seq 1 20); do
    mode=fresh
    [ $((i % 2)) -eq 0 ] && [ -f "$kill_dir/state.safetensors" ] && mode=resume
    if [ "$mode" = resume ]; then
        resumes=$((resumes + 1))
        "$TRAIN" --resume "$kill_dir" --quiet --threads 1 >/dev/null 2>"$tmp/err.txt" &
    else   # a fresh start over the killed run's files, on purpose: --overwrite
        "$TRAIN" "${KILL[@]}" --out "$kill_dir" --overwrite >/dev/null 2>"$tmp/err.txt" &
    fi
    pid=$!
    sleep "0.$(printf %03d $((RANDOM % 400 + 10)))"   # 10 to 409 ms
    kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
    wait "$pid" 2>/dev/null
    rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 137 ] || fail "kill $i: the $mode run failed by itself (exit $rc): $(cat "$tmp/err.txt")"
    if [ -f "$kill_dir/model.safetensors" ]; then
        if "$TRAIN" predict --threads 1 --model "$kill_dir" "a good movie" >/dev/null 2>"$tmp/err.txt"; then
            loaded=$((loaded + 1))
        else
            broken=$((broken + 1)); fail "after kill $i: model.safetensors does not load: $(cat "$tmp/err.txt")"
        fi
    fi
    [ -f "$kill_dir/state.safetensors" ] && states=$((states + 1))
    stale=$((stale + $(find "$kill_dir" -name '*.tmp.*' | wc -l)))
done
# Resuming to the end must give exactly the uninterrupted run, and clear the
# temporary files of writes that a kill cut short (each start clears them).
if [ -f "$kill_dir/state.safetensors" ]; then
    "$TRAIN" --resume "$kill_dir" --quiet --threads 1 >/dev/null 2>"$tmp/err.txt" || fail "final resume failed: $(cat "$tmp/err.txt")"
else
    "$TRAIN" "${KILL[@]}" --out "$kill_dir" --overwrite >/dev/null || fail "final run failed"
fi
expect_same_run "$tmp/kill_full" "$kill_dir" "after $kills SIGKILLs, resumed to the end"
left=$(find "$kill_dir" -name '*.tmp.*' | wc -l)
[ "$left" -eq 0 ] && pass "no temporary files left; kills had left $stale in all, each cleared by the next start" ||
    fail "$left temporary files left in $kill_dir: $(ls "$kill_dir")"
# On a machine so slow that every kill came before the first epoch's files,
# nothing above was resumed or loaded: that is said, not passed.
if [ "$loaded" -eq 0 ]; then
    skip "SIGKILL: no kill came after the first checkpoint, so no checkpoint was loaded (a machine too slow for these delays)"
elif [ "$broken" -eq 0 ]; then
    pass "SIGKILL: $kills kills; the checkpoint loaded after each of the $loaded kills that left one"
fi
[ "$resumes" -gt 0 ] && pass "SIGKILL: $resumes of the runs killed were resumes of a killed run" ||
    skip "SIGKILL: no killed run left a state to resume (a machine too slow for these delays)"
echo "REPORT SIGKILL: $kills kills at seeded random moments ($resumes of resumes); checkpoint loaded after $loaded, state left by $states, $stale cut-short temporary files cleared; resumed to a bit-exact end"

finish test_resume
