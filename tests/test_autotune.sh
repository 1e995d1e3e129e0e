#!/usr/bin/env bash
# test_autotune.sh: --autotune DURATION: a tiny budget ends within its budget plus one trial and records its trials;
# the test file changes nothing (a planted one with flipped labels gives the same trials and model bytes); 1 and 2
# threads choose the same; a lead within one standard error keeps the options as given; clearly worse trials stop at rungs as the halving rule says; SIGINT then --resume ends as an uninterrupted run; the run is the winner's (reproduce,
# diff); bad uses are refused with exit 2; two MPI ranks run it, and resume it to the same result, when MPI is there.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
[ -x "$TRAIN" ] || { echo "FAIL: $TRAIN is not built (run make)"; exit 1; }
export OMP_WAIT_POLICY=passive

grep -v '^#' data/negation/train.tsv | head -n 600 >"$tmp/train.tsv"
grep -v '^#' data/negation/test.tsv | head -n 200 >"$tmp/test.tsv"
# the same texts with every label flipped: a test file that disagrees with the truth
awk -F'\t' -v OFS='\t' '{ $1 = $1 == "pos" ? "neg" : "pos"; print }' "$tmp/test.tsv" >"$tmp/planted.tsv"
grep -v '^#' data/negation/train.tsv | head -n 300 >"$tmp/tiny.tsv"
SMALL=(--epochs 4 --d-model 16 --heads 2 --quiet)
FOUR=("$tmp/train.tsv" "${SMALL[@]}" --autotune 1h --autotune-trials 4)

# trials.jsonl without the times, which are the clock's
numbers() { sed 's/, "seconds": [0-9.]*//' "$1"; }
same_run() {  # what, dir_a, dir_b: the same trials (numbers and choice) and the same model bytes
    if [ -s "$2/trials.jsonl" ] && cmp -s <(numbers "$2/trials.jsonl") <(numbers "$3/trials.jsonl") &&
        cmp -s "$2/model.safetensors" "$3/model.safetensors"; then
        pass "$1: the same trials.jsonl (times aside) and model.safetensors"
    else
        fail "$1: the runs differ:"
        diff <(numbers "$2/trials.jsonl") <(numbers "$3/trials.jsonl") | head -n 10
    fi
}

# stop_in_trial_2 SIGNAL PID RUN: once RUN's trial 2 has begun (or PID has ended), SIGNAL to PID; PID's exit code
stop_in_trial_2() {
    for _ in $(seq 600); do
        [ -s "$3/trials/002/train.log" ] && break
        kill -0 "$2" 2>/dev/null || break
        sleep 0.05
    done
    kill -"$1" "$2" 2>/dev/null
    wait "$2"
}

# ------------------------------------------------------------ bad uses
expect_refusal() {  # what, text the message must hold, command...
    local what=$1 text=$2
    shift 2
    "$@" >"$tmp/out.txt" 2>"$tmp/err.txt"
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -qF -- "$text" "$tmp/err.txt"; then pass "$what: exit 2, saying '$text'"
    else fail "$what: exit $rc, stderr: $(head -c 300 "$tmp/err.txt")"; fi
}
expect_refusal "--autotune 10x" "give seconds (600) or a number with s, m or h" "$TRAIN" "$tmp/tiny.tsv" --autotune 10x
expect_refusal "--autotune 0" "'0' is not a duration" "$TRAIN" "$tmp/tiny.tsv" --autotune 0
expect_refusal "--autotune-trials alone" "give --autotune DURATION too" "$TRAIN" "$tmp/tiny.tsv" --autotune-trials 3
expect_refusal "--autotune with --val-split 0" "--autotune judges on the validation split" \
    "$TRAIN" "$tmp/tiny.tsv" --autotune 1m --val-split 0
expect_refusal "--autotune with --stop-after" "drop --stop-after" "$TRAIN" "$tmp/tiny.tsv" --autotune 1m --stop-after 1
expect_refusal "pretrain --autotune" "--autotune" "$TRAIN" pretrain "$tmp/tiny.tsv" --autotune 1m
"$TRAIN" "$tmp/tiny.tsv" "${SMALL[@]}" --out "$tmp/plain" >/dev/null 2>&1 || fail "a plain run failed"
expect_refusal "--resume of a plain run with --autotune" "--autotune cannot change when resuming" \
    "$TRAIN" --resume "$tmp/plain" --autotune 1m
[ -d "$tmp/plain/trials" ] && fail "a run without --autotune made a trials folder"

# ------------------------------------------------------------ trial 1 is the options as given
# A budget in hours, one trial: that trial, and the run, are the plain run of the same options, byte for byte.
"$TRAIN" "$tmp/tiny.tsv" "${SMALL[@]}" --quiet=false --autotune 1.5h --autotune-trials 1 --out "$tmp/one-trial" >"$tmp/one.txt" 2>&1 ||
    fail "--autotune 1.5h --autotune-trials 1 failed: $(tail -n 3 "$tmp/one.txt")"
grep -q "up to 1.5h (5400 s)" "$tmp/one.txt" && pass "--autotune 1.5h is 5400 s" ||
    fail "--autotune 1.5h: $(head -n 1 "$tmp/one.txt")"
if cmp -s "$tmp/plain/model.safetensors" "$tmp/one-trial/trials/001/model.safetensors" &&
    cmp -s "$tmp/plain/model.safetensors" "$tmp/one-trial/model.safetensors" &&
    cmp -s <(cut -d, -f1-7 "$tmp/plain/metrics.csv") <(cut -d, -f1-7 "$tmp/one-trial/trials/001/metrics.csv"); then
    pass "trial 1 and the run it wins are the plain run of the options as given (model bytes, metrics)"
else
    fail "trial 1 differs from the plain run of the same options"
fi

# a plain run into the autotune's directory is refused, and with --overwrite replaces its record too
mkdir -p "$tmp/searching" && cp "$tmp/one-trial/autotune.json" "$tmp/searching/"
expect_refusal "a plain run into an autotune in progress" "holds an autotune" "$TRAIN" "$tmp/tiny.tsv" --out "$tmp/searching"
"$TRAIN" "$tmp/tiny.tsv" "${SMALL[@]}" --out "$tmp/one-trial" --overwrite >/dev/null 2>&1 &&
    [ ! -e "$tmp/one-trial/autotune.json" ] && [ ! -e "$tmp/one-trial/trials.jsonl" ] &&
    pass "a plain run with --overwrite takes the autotune's record away (so --resume continues the plain run)" ||
    fail "a plain run over an autotune left its record"

# ------------------------------------------------------------ a tiny budget
# (each trial here takes about 0.2-1.5 s)
# Every trial after the first starts only while the time so far (at least
# the recorded trials' seconds) leaves room for it: so the seconds of all
# trials but the last are within the budget, whatever the machine's speed.
"$TRAIN" "$tmp/tiny.tsv" "${SMALL[@]}" --autotune 4s --threads 2 --out "$tmp/budget" >"$tmp/budget.txt" 2>&1
rc=$?
trials=$(grep -c '"trial"' "$tmp/budget/trials.jsonl" 2>/dev/null)
before_last=$(grep '"trial"' "$tmp/budget/trials.jsonl" 2>/dev/null | sed '$d' |
    sed 's/.*"seconds": \([0-9.]*\).*/\1/' | awk '{ s += $1 } END { printf "%.2f", s + 0 }')
if [ "$rc" -eq 0 ] && [ "${trials:-0}" -ge 1 ] && awk -v s="$before_last" 'BEGIN { exit !(s <= 4) }'; then
    pass "--autotune 4s: $trials trial(s); those before the last took ${before_last} s, within the budget"
else
    fail "--autotune 4s: exit $rc, $trials trials, ${before_last} s before the last: $(tail -n 3 "$tmp/budget.txt")"
fi
if [ "$(grep -c '^trial ' "$tmp/budget.txt")" = "$trials" ] && grep -q '"winner"' "$tmp/budget/trials.jsonl"; then
    pass "--autotune 4s: a line printed for each trial, and the record names the winner"
else
    fail "--autotune 4s: $(grep -c '^trial ' "$tmp/budget.txt") trial lines printed for $trials recorded, or no winner"
fi

# ------------------------------------------------------------ the same choice, whatever the test file or threads
"$TRAIN" "${FOUR[@]}" --test "$tmp/test.tsv" --threads 2 --out "$tmp/ref" >"$tmp/ref.txt" 2>&1 ||
    fail "4 trials at 2 threads failed: $(tail -n 3 "$tmp/ref.txt")"
"$TRAIN" "${FOUR[@]}" --test "$tmp/test.tsv" --threads 1 --out "$tmp/one" >/dev/null 2>&1 || fail "4 trials at 1 thread failed"
"$TRAIN" "${FOUR[@]}" --test "$tmp/planted.tsv" --threads 2 --out "$tmp/planted" >/dev/null 2>&1 ||
    fail "4 trials with the planted test file failed"
n=$(grep -c '"trial"' "$tmp/ref/trials.jsonl" 2>/dev/null)
winner=$(sed -n 's/^{"winner": \([0-9]*\),.*/\1/p' "$tmp/ref/trials.jsonl" 2>/dev/null)
if [ "$n" = 4 ] && [ -n "$winner" ] && [ "$(grep -c '^trial ' "$tmp/ref.txt")" = 4 ]; then
    pass "--autotune-trials 4: 4 trials recorded and printed, trial $winner won"
else
    fail "--autotune-trials 4: $n trials recorded, winner '$winner'"
fi
same_run "1 and 2 threads" "$tmp/ref" "$tmp/one"
same_run "a planted test file of flipped labels" "$tmp/ref" "$tmp/planted"
# the test file was read, for the winner's report only: the two reports' test accuracies add up to 1
acc() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt"; }
if [ -n "$(acc "$tmp/ref")" ] && awk -v a="$(acc "$tmp/ref")" -v b="$(acc "$tmp/planted")" \
    'BEGIN { d = a + b - 1; exit !(d < 1e-3 && d > -1e-3) }'; then
    pass "the winner's test report read the test file at the end (accuracy $(acc "$tmp/ref"), flipped $(acc "$tmp/planted"))"
else
    fail "test accuracies '$(acc "$tmp/ref")' and '$(acc "$tmp/planted")' are not a file's and its flipped copy's"
fi
if grep -q '"test": ""' "$tmp/ref/trials/001/run.json" && ! grep -rq "planted.tsv" "$tmp/planted/trials"; then
    pass "no trial's record names a test file"
else
    fail "a trial recorded a test file"
fi
# The halving rule, checked from the record alone: at each rung epoch (u, 3u, ... below a trial's epochs; u = the
# first trial's epochs / 9, at least 1) a trial is stopped exactly when at least 2 trials reached the rung (it
# among them) and it is outside the best third by val loss there; a trial's folder holds the epochs it ran.
if command -v python3 >/dev/null 2>&1; then
    if python3 - "$tmp/ref" >"$tmp/halving.txt" 2>&1 <<'PY'
import json, math, os, sys
run = sys.argv[1]
trials = [json.loads(l) for l in open(os.path.join(run, "trials.jsonl")) if '"trial"' in l]
u = max(1, trials[0]["epochs"] // 9)
stopped = 0
for i, t in enumerate(trials):
    rows = sum(1 for _ in open(os.path.join(run, "trials", "%03d" % t["trial"], "metrics.csv"))) - 1
    assert rows == t["epochs_run"] == len(t["val_losses"]), (t["trial"], rows)
    r, verdict = u, None
    while r < t["epochs"] and verdict is None:
        if t["epochs_run"] < r:
            break
        mine = t["val_losses"][r - 1]
        at = [p["val_losses"][r - 1] for p in trials[:i] if p["epochs_run"] >= r]
        worse = len(at) + 1 >= 2 and sum(v < mine for v in at) >= math.ceil((len(at) + 1) / 3)
        if worse:
            verdict = r
        r *= 3
    assert (verdict is not None) == t["stopped_early"], (t["trial"], verdict)
    if verdict is not None:
        assert t["epochs_run"] == verdict, t["trial"]
        stopped += 1
    else:
        assert t["epochs_run"] == t["epochs"], t["trial"]
print(stopped)
PY
    then
        n_stopped=$(cat "$tmp/halving.txt")
        [ "$n_stopped" -ge 1 ] && pass "halving: $n_stopped trial(s) stopped early, each as the rule says, the others ran all their epochs" ||
            skip "halving: the rule held, but no trial was stopped here to show it"
    else
        fail "halving: the record breaks the rule: $(tail -n 2 "$tmp/halving.txt")"
    fi
else
    skip "halving: python3 is not installed (apt-get install python3)"
fi
if [ -n "$winner" ] && cmp -s "$tmp/ref/model.safetensors" "$tmp/ref/trials/$(printf %03d "$winner")/model.safetensors"; then
    pass "the run's model is the winning trial's, byte for byte"
else
    fail "the run's model is not trial $winner's"
fi
if [ -n "$winner" ] && "$TRAIN" reproduce "$tmp/ref" --threads 2 >"$tmp/repro.txt" 2>&1 && grep -q '^identical' "$tmp/repro.txt"; then
    pass "reproduce repeats the winner's training: $(grep '^identical' "$tmp/repro.txt")"
else
    fail "reproduce of the autotune's run: $(tail -n 3 "$tmp/repro.txt")"
fi
"$TRAIN" diff "$tmp/ref" "$tmp/ref/trials/001" >"$tmp/diff.txt" 2>&1
differing=$(grep -c ' \*$' "$tmp/diff.txt")
if [ "$winner" != 1 ] && grep -q '^autotune .* \*$' "$tmp/diff.txt" && [ "$differing" -ge 3 ]; then
    pass "diff RUN RUN/trials/001 marks what won over the options as given ($differing rows)"
elif [ "$winner" != 1 ]; then
    fail "diff RUN RUN/trials/001 marks $differing rows: $(head -n 5 "$tmp/diff.txt")"
else   # the options as given won: RUN is trial 1's run, so diff trial 2 (all searched options drawn) against it
    "$TRAIN" diff "$tmp/ref/trials/002" "$tmp/ref/trials/001" >"$tmp/diff.txt" 2>&1
    differing=$(grep -c ' \*$' "$tmp/diff.txt")
    if grep -qE '^(tokenizer|vocab-size|d-model|layers|lr|weight-decay|dropout|epochs|max-len) .* \*$' "$tmp/diff.txt" &&
        ! grep -q '^autotune .* \*$' "$tmp/diff.txt"; then
        pass "trial 1 won; diff RUN/trials/002 RUN/trials/001 marks what trial 2 drew ($differing rows)"
    else
        fail "diff RUN/trials/002 RUN/trials/001 marks $differing rows: $(head -n 5 "$tmp/diff.txt")"
    fi
fi

# ------------------------------------------------------------ the choice: one standard error
# The record of the 4 trials above with planted validation accuracies and no winner, resumed: no trial is left to
# run, so the choice is made from the planted numbers. A trial that led trial 1 (the options as given) by less than
# one standard error of a validation accuracy, sqrt(p (1 - p) / n) at its p, loses to trial 1; by more, it wins.
val_n=$(sed -n 's/^{"trial": 1,.*"val_n": \([0-9]*\),.*/\1/p' "$tmp/ref/trials.jsonl" 2>/dev/null)
# 600 training lines, of which --val-split's default 0.1 holds out 60
[ "$val_n" = 60 ] && pass "trials.jsonl: val_n 60, the validation examples (10% of 600 lines)" ||
    fail "trials.jsonl: val_n '$val_n' (60 expected)"
lead=$(grep '"stopped_early": false' "$tmp/ref/trials.jsonl" | sed -n 's/^{"trial": \([0-9]*\),.*/\1/p' |
    awk '$1 != 1' | head -n 1)
plant() {  # dir, trial 1's val acc, the leader's: the others at 0.500000
    rm -rf "$1" && cp -r "$tmp/ref" "$1" && rm -f "$1/model.safetensors" "$1/report.txt"
    grep '"trial"' "$tmp/ref/trials.jsonl" | awk -v lead="$lead" -v first="$2" -v acc="$3" '{
        n = $2 + 0; v = n == 1 ? first : n == lead ? acc : "0.500000"
        sub(/"val_acc": [0-9.]*/, "\"val_acc\": " v); print }' >"$1/trials.jsonl"
}
choice() {  # dir, the winner expected, what, the leader's p: resumed, the record names the winner, the best and the error
    "$TRAIN" --resume "$1" --threads 2 >"$1.txt" 2>&1 || { fail "$3: the resume failed: $(tail -n 2 "$1.txt")"; return; }
    local line se
    line=$(grep '^{"winner"' "$1/trials.jsonl")
    se=$(awk -v p="$4" -v n="$val_n" 'BEGIN { printf "%.6f", sqrt(p * (1 - p) / n) }')
    if grep -q "^{\"winner\": $2, .*\"best\": $lead, \"standard_error\": $se}" <<<"$line" &&
        cmp -s "$1/model.safetensors" "$1/trials/$(printf %03d "$2")/model.safetensors"; then
        pass "$3: trial $2 won (best trial $lead, standard error $se), its model the run's"
    else
        fail "$3: the record says '$line'; expected winner $2, best $lead, standard error $se"
    fi
}
if [ -n "$lead" ] && [ "$val_n" = 60 ]; then
    plant "$tmp/se-within" 0.700000 0.750000   # lead 0.05, error sqrt(.75 .25 / 60) = 0.0559
    choice "$tmp/se-within" 1 "a lead of 0.05 on 60 examples (within one standard error)" 0.75
    grep -q "the options as given are kept: trial $lead led them on validation (val acc 0.7500 against 0.7000)" \
        "$tmp/se-within.txt" && pass "the output says why the options as given were kept" ||
        fail "no word of the kept options: $(grep -i kept "$tmp/se-within.txt")"
    # lead 0.057: beyond the error at the leader's p, sqrt(.757 .243 / 60) = 0.0554, within trial 1's (0.0592)
    plant "$tmp/se-beyond" 0.700000 0.757000
    choice "$tmp/se-beyond" "$lead" "a lead of 0.057 on 60 examples (beyond one standard error at the leader's p)" 0.757
    # both at 1: the error is 0 and the lead 0, so the leader on loss alone does not displace trial 1
    plant "$tmp/se-tie" 1.000000 1.000000
    choice "$tmp/se-tie" 1 "a tie at accuracy 1 (error 0)" 1
else
    fail "the choice: no trial besides trial 1 ran all its epochs in the record, or val_n is not 60"
fi

# ------------------------------------------------------------ SIGINT, then --resume
# Interrupted once trial 2 has begun (so inside its first epoch), resumed at the other thread count.
"$TRAIN" "${FOUR[@]}" --test "$tmp/test.tsv" --threads 1 --out "$tmp/int" >/dev/null 2>"$tmp/int-err.txt" &
stop_in_trial_2 INT $! "$tmp/int"
rc=$?
if [ "$rc" -eq 0 ]; then
    skip "SIGINT: the autotune ended before it could be interrupted"
elif [ "$rc" -eq 130 ] && grep -q "continue with: ./train --resume $tmp/int" "$tmp/int-err.txt"; then
    pass "SIGINT: exit 130, $(grep -m 1 '^interrupted' "$tmp/int-err.txt" | cut -c 1-110)"
    "$TRAIN" --resume "$tmp/int" --threads 2 >"$tmp/resumed.txt" 2>&1 || fail "the resume failed: $(tail -n 3 "$tmp/resumed.txt")"
    same_run "interrupted by SIGINT and resumed" "$tmp/ref" "$tmp/int"
    expect_refusal "--resume of an autotune with --lr" "only --threads and --quiet" "$TRAIN" --resume "$tmp/int" --lr 0.1
    "$TRAIN" --resume "$tmp/int" >"$tmp/again.txt" 2>&1 && grep -q "has ended" "$tmp/again.txt" &&
        pass "--resume of an ended autotune says so and changes nothing" ||
        fail "--resume of an ended autotune: $(tail -n 2 "$tmp/again.txt")"
else
    fail "SIGINT: exit $rc: $(cat "$tmp/int-err.txt")"
fi

# ------------------------------------------------------------ MPI: rank 0 decides, all ranks train
# Two ranks straight through, and two ranks stopped by SIGUSR1 (what mpirun forwards) inside trial 2 and resumed:
# the same trials and model.
if command -v mpirun >/dev/null 2>&1 && "$TRAIN" --version | grep -qx 'mpi: yes'; then
    MPI=(mpirun --allow-run-as-root --oversubscribe -np 2 "$TRAIN")
    TINY4=("$tmp/tiny.tsv" "${SMALL[@]}" --autotune 1h --autotune-trials 3 --threads 1)
    "${MPI[@]}" "${TINY4[@]}" --out "$tmp/mpi" >"$tmp/mpi.txt" 2>&1
    rc=$?
    if [ "$rc" -eq 0 ] && [ "$(grep -c '"trial"' "$tmp/mpi/trials.jsonl")" = 3 ] &&
        "$TRAIN" predict --model "$tmp/mpi" "a good movie" >/dev/null 2>&1; then
        pass "2 MPI ranks: 3 trials, a winner and a model that predicts"
        # 300 lines, 10% held out: every trial's accuracy is over the 30 validation examples of both ranks
        [ "$(grep -c '"val_n": 30,' "$tmp/mpi/trials.jsonl")" = 3 ] &&
            pass "2 MPI ranks: each trial's val_n is 30, the validation examples of both ranks" ||
            fail "2 MPI ranks: val_n '$(grep -o '"val_n": [0-9]*' "$tmp/mpi/trials.jsonl" | sort -u | tr '\n' ' ')' (30 expected)"
    else
        fail "2 MPI ranks: exit $rc: $(tail -n 3 "$tmp/mpi.txt")"
    fi
    "${MPI[@]}" "${TINY4[@]}" --out "$tmp/mpi-int" >/dev/null 2>"$tmp/mpi-int.txt" &
    stop_in_trial_2 USR1 $! "$tmp/mpi-int"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        skip "MPI: the autotune ended before it could be interrupted"
    elif [ "$rc" -eq 130 ] && [ "$(grep -c '^continue with: mpirun -np 2' "$tmp/mpi-int.txt")" = 1 ]; then
        "${MPI[@]}" --resume "$tmp/mpi-int" --threads 1 >/dev/null 2>&1 || fail "MPI: the resume failed"
        same_run "2 MPI ranks interrupted by SIGUSR1 and resumed" "$tmp/mpi" "$tmp/mpi-int"
    else
        fail "MPI: SIGUSR1: exit $rc, $(cat "$tmp/mpi-int.txt")"
    fi
else
    skip "MPI: mpirun or an MPI build is missing (apt-get install openmpi-bin libopenmpi-dev, then make)"
fi

finish test_autotune
