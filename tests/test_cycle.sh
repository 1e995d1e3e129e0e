#!/usr/bin/env bash
# test_cycle.sh: --cycle, the learning-rate cycles whose ends decide on
# validation. A run of --epochs E in cycles (C epochs, then each twice the
# one before) trains another cycle only when the val loss at a cycle's end
# is below every val loss before that cycle's second half. Checked on planted runs: one that cannot learn
# (--lr 0: the val loss never moves, so it ends after its first cycle), one
# that keeps learning (its val loss falls to the end), the learning rate
# starting again at each cycle, --cycle auto's choice in run.json, and the
# cycles under --resume (the same bytes as an unbroken run; one cycle
# stretched when --epochs is raised). The rates
# themselves are worked by hand in test_schedule.c.
source "$(dirname "$0")/lib.sh"
TRAIN=${TRAIN:-./train}
SHAPE=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --batch-size 16 --threads 1)
TINY=("${SHAPE[@]}" --quiet)
head -n 601 data/before/train.tsv > "$tmp/data.tsv"
head -n 1201 data/before/train.tsv > "$tmp/more.tsv"

epochs_in() { echo $(($(wc -l < "$1/metrics.csv") - 1)); }
recorded() { awk -F'"' -v k="$2" '$2 == k { sub(/^[^:]*: */, ""); sub(/,$/, ""); print; exit }' "$1/run.json"; }
metrics_numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }   # without the time columns
# the decision the rule makes at the end of the cycle of epochs F-L, from metrics.csv's val losses
rule_says() {  # run, first epoch F, last epoch L
    awk -F, -v f="$2" -v e="$3" 'NR > 1 { v[$1] = $4 }
        END { half = f + int((e - f + 1) / 2); low = ""
              for (k = 1; k < half; k++) if (low == "" || v[k] < low) low = v[k]
              print (v[e] < low) ? "continue" : "end" }' "$1/metrics.csv"
}

# --lr 0: the weights never change, the val loss is the same at every epoch,
# so the first cycle's end is not below the epochs before its second half
"$TRAIN" "$tmp/data.tsv" --out "$tmp/still" "${TINY[@]}" --lr 0 --cycle 2 --epochs 6 > "$tmp/still.log" 2>&1 ||
    fail "the --lr 0 run failed: $(tail -n 3 "$tmp/still.log")"
[ "$(epochs_in "$tmp/still")" = 2 ] && [ "$(rule_says "$tmp/still" 1 2)" = end ] &&
    pass "--lr 0, --cycle 2 --epochs 6: the val loss never falls, so the run ends after its first cycle (2 epochs)" ||
    fail "--lr 0, --cycle 2 --epochs 6: expected 2 epochs, got $(epochs_in "$tmp/still")"
"$TRAIN" --resume "$tmp/still" > "$tmp/still-again.log" 2>&1 &&
    grep -q "the run ended at epoch 2 of at most 6" "$tmp/still-again.log" && [ "$(epochs_in "$tmp/still")" = 2 ] &&
    pass "--resume of a run its cycle ended says so and trains nothing" ||
    fail "--resume of a run its cycle ended: $(tail -n 2 "$tmp/still-again.log")"

# A run that keeps learning: its val loss at each cycle's end is below all
# before that cycle's second half, so every cycle runs (the rule is read
# off metrics.csv, independently of the run's own decision)
# cycles of epochs 1-2, 3-6 and 7-14
LEARN=(--cycle 2 --epochs 14)
"$TRAIN" "$tmp/more.tsv" --out "$tmp/learn" "${TINY[@]}" "${LEARN[@]}" > /dev/null 2>&1 || fail "the learning run failed"
if [ "$(rule_says "$tmp/learn" 1 2)" = continue ] && [ "$(rule_says "$tmp/learn" 3 6)" = continue ]; then
    [ "$(epochs_in "$tmp/learn")" = 14 ] && pass "a run still learning at its cycles' ends runs all 3 cycles (2, 4 and 8 epochs)" ||
        fail "the val losses say continue at epochs 2 and 6, yet the run has $(epochs_in "$tmp/learn") epochs"
else
    fail "the learning run was picked to continue at epochs 2 and 6, and does not (pick another if training changed)"
fi
# the rate starts again at each cycle: metrics.csv's lr (at each epoch's last step) climbs at epochs 3 and 7
awk -F, 'NR > 1 { lr[$1] = $7 } END { exit !(lr[3] > lr[2] && lr[7] > lr[6] && lr[6] < lr[5] && lr[14] < lr[13]) }' \
    "$tmp/learn/metrics.csv" && pass "the learning rate decays within each cycle and starts again at epochs 3 and 7" ||
    fail "metrics.csv's lr column does not show three cycles: $(cut -d, -f7 "$tmp/learn/metrics.csv" | tr '\n' ' ')"
# --swa averages within the last cycle: half of epochs 7-14
grep -q "^swa: the mean of the weights at the ends of epochs 11-14" "$tmp/learn/report.txt" &&
    pass "--swa averages the last cycle's epochs (11-14), not the run's" ||
    fail "--swa in cycles: $(grep '^swa:' "$tmp/learn/report.txt")"

# The rule compares with every epoch before the cycle's second half, earlier
# cycles' too: at epoch 6 of this run the loss is below epochs 1-4's lowest
# but not below epoch 5's, so the run goes on (a rule reading the cycle's
# own epochs 3-5 would end it)
KEEP=(--cycle 2 --epochs 14 --lr 0.01)
"$TRAIN" "$tmp/more.tsv" --out "$tmp/past" "${TINY[@]}" "${KEEP[@]}" > /dev/null 2>&1 || fail "the --lr 0.01 run failed"
cycle_own=$(awk -F, 'NR > 1 { v[$1] = $4 } END { low = v[3]; for (k = 4; k <= 5; k++) if (v[k] < low) low = v[k]
                                               print (v[6] < low) ? "continue" : "end" }' "$tmp/past/metrics.csv")
[ "$(rule_says "$tmp/past" 3 6)" = continue ] && [ "$cycle_own" = end ] && [ "$(epochs_in "$tmp/past")" = 14 ] &&
    pass "epoch 6 is below epochs 1-4 but not epoch 5: the run goes on, as the rule says, to all 14 epochs" ||
    fail "the --lr 0.01 run: the rule says $(rule_says "$tmp/past" 3 6), its own cycle says $cycle_own (picked to differ), epochs $(epochs_in "$tmp/past")"

# the default: a first cycle of 10, and the rate climbing again at epoch 11 when the run goes on
"$TRAIN" "$tmp/more.tsv" --out "$tmp/default" "${TINY[@]}" --stop-after 11 > /dev/null 2>&1
[ "$(rule_says "$tmp/default" 1 10)" = continue ] && [ "$(epochs_in "$tmp/default")" = 11 ] &&
    awk -F, 'NR > 1 { lr[$1] = $7 } END { exit !(lr[11] > lr[10] && lr[10] < lr[9]) }' "$tmp/default/metrics.csv" &&
    pass "the defaults: 10 epochs, then (the val loss still falling) a second cycle whose rate climbs at epoch 11" ||
    fail "the defaults: expected a second cycle from epoch 11: lr $(cut -d, -f7 "$tmp/default/metrics.csv" | tr '\n' ' ')"

# resumed at a cycle's end, inside a cycle and inside the last one's average: the same bytes as unbroken
for at in 2 4 6 12; do
    dir=$tmp/learn-$at
    "$TRAIN" "$tmp/more.tsv" --out "$dir" "${TINY[@]}" "${LEARN[@]}" --stop-after "$at" > /dev/null 2>&1 &&
        "$TRAIN" --resume "$dir" --quiet > /dev/null 2>&1 || fail "stop after $at and resume: a run failed"
    cmp -s "$dir/model.safetensors" "$tmp/learn/model.safetensors" &&
        cmp -s <(metrics_numbers "$dir/metrics.csv") <(metrics_numbers "$tmp/learn/metrics.csv") &&
        pass "stopped after epoch $at and resumed: model.safetensors and metrics.csv as the unbroken run's" ||
        fail "stopped after epoch $at and resumed: the run differs from the unbroken one"
done

# MPI: every rank makes the same decisions (the val losses are rank 0's,
# shared), so 2 ranks train the cycles of one process, within float rounding
if command -v mpirun >/dev/null 2>&1 && "$TRAIN" --version | grep -qx 'mpi: yes'; then
    "$TRAIN" "$tmp/more.tsv" --out "$tmp/solo" "${TINY[@]}" "${LEARN[@]}" --precision fp32 > /dev/null 2>&1
    mpirun --allow-run-as-root --oversubscribe -np 2 "$TRAIN" "$tmp/more.tsv" --out "$tmp/ranks" "${TINY[@]}" \
        "${LEARN[@]}" --precision fp32 > /dev/null 2>&1
    worst=$(paste -d, "$tmp/solo/metrics.csv" "$tmp/ranks/metrics.csv" 2>/dev/null | awk -F, 'NR > 1 {
        for (c = 2; c <= 4; c += 2) { a = $c; b = $(c + 9); d = a > b ? a - b : b - a; if (d / a > w) w = d / a } }
        END { printf "%.3g", w + 0 }')
    [ "$(epochs_in "$tmp/ranks")" = 14 ] && [ "$(epochs_in "$tmp/solo")" = 14 ] &&
        [ "$(cut -d, -f7 "$tmp/solo/metrics.csv")" = "$(cut -d, -f7 "$tmp/ranks/metrics.csv")" ] &&
        awk -v w="$worst" 'BEGIN { exit !(w <= 1e-5) }' &&
        pass "2 MPI ranks run the same 3 cycles as one process (rates equal, losses within $worst relative)" ||
        fail "2 MPI ranks against one process: $(epochs_in "$tmp/ranks") and $(epochs_in "$tmp/solo") epochs, losses within $worst"
else
    skip "MPI: mpirun or an MPI build of ./train is not here (apt-get install -y libopenmpi-dev openmpi-bin, then make clean && make)"
fi

# --cycle auto: 10 when --epochs is not given (and a validation set, no
# --patience), else --epochs; run.json records the number
"$TRAIN" "$tmp/data.tsv" --out "$tmp/auto" "${TINY[@]}" --stop-after 1 > /dev/null 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/given" "${TINY[@]}" --epochs 7 --stop-after 1 > /dev/null 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/noval" "${TINY[@]}" --val-split 0 --stop-after 1 > /dev/null 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/patient" "${TINY[@]}" --patience 3 --stop-after 1 > /dev/null 2>&1
got="$(recorded "$tmp/auto" cycle) $(recorded "$tmp/given" cycle) $(recorded "$tmp/noval" cycle) $(recorded "$tmp/patient" cycle)"
[ "$got" = "10 7 30 30" ] &&
    pass "--cycle auto records 10 by default, and one cycle (--epochs) with --epochs 7, without validation, with --patience" ||
    fail "--cycle auto recorded '$got', expected '10 7 30 30'"

# the intro names the cycles' lengths: C, 2C, 4C, ... with the last cut at --epochs
LOUD=("${SHAPE[@]}" --stop-after 1)   # not --quiet: the intro
"$TRAIN" "$tmp/data.tsv" --out "$tmp/intro-auto" "${LOUD[@]}" > "$tmp/auto.log" 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/intro-learn" "${LOUD[@]}" "${LEARN[@]}" > "$tmp/learn.log" 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/intro-cut" "${LOUD[@]}" --cycle 4 --epochs 30 > "$tmp/cut.log" 2>&1
if grep -q "cycles of 10 and 20 epochs;" "$tmp/auto.log" && grep -q "cycles of 2, 4 and 8 epochs;" "$tmp/learn.log" &&
    grep -q "cycles of 4, 8, 16 and 2 epochs;" "$tmp/cut.log"; then
    pass "the schedule line names the cycles: 10 and 20 by default; 2, 4 and 8 of 14; 4, 8, 16 and a cut 2 of 30"
else
    fail "the schedule lines: $(grep -h '^schedule:' "$tmp/auto.log" "$tmp/learn.log" "$tmp/cut.log" | tr '\n' '|')"
fi

# one cycle stays one on --resume: raising --epochs stretches its schedule (the cycle recorded is --epochs)
"$TRAIN" "$tmp/data.tsv" --out "$tmp/stretch" "${TINY[@]}" --epochs 2 > /dev/null 2>&1
"$TRAIN" --resume "$tmp/stretch" --epochs 4 --quiet > /dev/null 2>&1
"$TRAIN" "$tmp/data.tsv" --out "$tmp/four" "${TINY[@]}" --epochs 4 > /dev/null 2>&1
[ "$(sed -n '4,5p' "$tmp/stretch/metrics.csv" | cut -d, -f7)" = "$(sed -n '4,5p' "$tmp/four/metrics.csv" | cut -d, -f7)" ] &&
    pass "--epochs 2 resumed with --epochs 4: epochs 3-4 have a 4-epoch schedule's rates (one cycle, stretched; no restart)" ||
    fail "--epochs 2 resumed with --epochs 4: lr $(cut -d, -f7 "$tmp/stretch/metrics.csv" | tr '\n' ' '), a 4-epoch run's $(cut -d, -f7 "$tmp/four/metrics.csv" | tr '\n' ' ')"

# --warmup in steps is checked against the shortest cycle: here the last, cut
# to epoch 7 alone (cycles 1-2, 3-6, 7), so 1.25 epochs of steps fill it though
# they fit in the first (the steps per epoch read off a whole-run warmup's warning)
spe=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/warm-run" "${SHAPE[@]}" --epochs 1 --warmup 100000 2>&1 |
      sed -n 's/.*--warmup 100000 steps is the whole run of \([0-9]*\).*/\1/p')
warm=$((spe + spe / 4))
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/warm" "${SHAPE[@]}" --cycle 2 --epochs 7 --warmup "$warm" --stop-after 1 2>&1)
[ -n "$spe" ] && grep -q "warning: --warmup $warm steps is the whole learning-rate cycle of epochs 7-7 of $spe:" <<<"$out" &&
    pass "--warmup $warm steps with cycles of 2, 4 and a cut 1 epochs of $spe steps: the warning names the cut cycle, epoch 7" ||
    fail "--warmup $warm steps (epochs of '$spe' steps), --cycle 2 --epochs 7: $(grep warmup <<<"$out")"
# with cycles of 2 and 4 epochs the first is the shortest: the same warmup fits it (no warning), twice an epoch fills it
out=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/warm2" "${SHAPE[@]}" --cycle 2 --epochs 6 --warmup "$warm" --stop-after 1 2>&1)
out2=$("$TRAIN" "$tmp/data.tsv" --out "$tmp/warm3" "${SHAPE[@]}" --cycle 2 --epochs 6 --warmup $((2 * spe)) --stop-after 1 2>&1)
! grep -q "warning: --warmup" <<<"$out" &&
    grep -q "warning: --warmup $((2 * spe)) steps is the whole learning-rate cycle of epochs 1-2 of $((2 * spe)):" <<<"$out2" &&
    pass "--cycle 2 --epochs 6: --warmup $warm fits every cycle (no warning); $((2 * spe)) fills the first, epochs 1-2" ||
    fail "--cycle 2 --epochs 6: --warmup $warm said '$(grep warmup <<<"$out")', $((2 * spe)) said '$(grep warmup <<<"$out2")'"

finish test_cycle
