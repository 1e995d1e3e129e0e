# test_mpi.sh: data-parallel training over MPI: 2, 3 and 4 ranks match one process with dropout on (1e-5 relative per epoch, same predictions), reproduce themselves byte for byte, resume, stop together on a signal, and a killed rank stops the job with the checkpoint intact; a job's redirected log holds no progress bar; pretraining splits off the one process's validation texts.
# Run from the project root after `make` (built with MPI when mpicc is installed); skips when MPI is not there.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train

if ! command -v mpirun >/dev/null 2>&1; then
    echo "skip: MPI not installed (apt-get install -y libopenmpi-dev openmpi-bin, then make)"
    exit 77   # skipped (scripts/run-tests.sh)
fi
[ -x "$TRAIN" ] || { echo "FAIL: $TRAIN is not built (run make)"; exit 1; }
if ! "$TRAIN" --version | grep -qx 'mpi: yes'; then
    echo "skip: ./train was built without MPI (apt-get install -y libopenmpi-dev, then make clean && make)"
    exit 77
fi

MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
# float32: ranks equal one process within float rounding (bf16 is checked on its own below)
TINY=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --precision fp32 --quiet)

# 360 training and 40 validation examples; the validation texts for predict.
grep -v '^#' data/negation/train.tsv | head -n 360 >"$tmp/train.tsv"
grep -v '^#' data/negation/train.tsv | sed -n 361,400p >"$tmp/val.tsv"
cut -f2 "$tmp/val.tsv" >"$tmp/val-texts.txt"
# 6300 examples, for runs long enough to be interrupted.
cat data/negation/train.tsv data/before/train.tsv data/rare/train.tsv | grep -v '^#' >"$tmp/big.tsv"

# metrics.csv without the time columns (seconds, tokens_per_s).
numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }

# Largest relative difference of train_loss and val_loss (columns 2 and 4) per epoch.
max_relative_loss_diff() {  # metrics_a, metrics_b
    paste -d, "$1" "$2" | awk -F, -v half="$(head -n1 "$1" | awk -F, '{ print NF }')" '
        NR == 1 { next }
        { for (c = 2; c <= 4; c += 2) {
              a = $c; b = $(c + half); d = a - b; if (d < 0) d = -d
              m = a < 0 ? -a : a; if (m < 1e-12) m = 1e-12
              if (d / m > worst) worst = d / m } }
        END { printf "%.3g\n", worst + 0 }'
}

# 1 if the relative difference $1 is within 1e-5.
within_limit() { awk -v w="$1" 'BEGIN { exit !(w <= 1e-5) }'; }

# ------------------------------------------- 1, 2, 3 and 4 ranks, dropout on
# Dropout masks are keyed by each example's place in the global batch (docs/DESIGN.md §7),
# so any number of ranks draws the masks of one process; so are BPE-dropout's
# splits (the tokenizer is the default bpe, --bpe-dropout 0.1). Batch 32 over 3
# ranks is uneven (10 + 11 + 11); 360 examples leave a last batch of 8 (2 + 3 + 3).
DROP=("$tmp/train.tsv" --val "$tmp/val.tsv" "${TINY[@]}" --dropout 0.1 --epochs 3 --batch-size 32 --lr 0.003
      --threads 1)
"$TRAIN" "${DROP[@]}" --out "$tmp/drop-1" >/dev/null || fail "dropout 0.1: single process failed"
for n in 2 3 4; do
    "${MPIRUN[@]}" -np "$n" "$TRAIN" "${DROP[@]}" --out "$tmp/drop-$n" >/dev/null 2>"$tmp/err.txt" ||
        { fail "dropout 0.1: $n-rank run failed:"; cat "$tmp/err.txt"; continue; }
    worst=$(max_relative_loss_diff "$tmp/drop-1/metrics.csv" "$tmp/drop-$n/metrics.csv")
    epochs=$(($(wc -l <"$tmp/drop-$n/metrics.csv") - 1))
    if [ "$epochs" -eq 3 ] && within_limit "$worst"; then
        pass "dropout 0.1: $n ranks match one process over 3 epochs (largest relative train/val loss difference $worst)"
        echo "REPORT mpi dropout 0.1: $n ranks vs one process, largest relative train/val loss difference $worst (limit 1e-5)"
    else
        fail "dropout 0.1: $n ranks, $epochs epochs, train/val loss differ by $worst relative (limit 1e-5):"
        paste -d'\n' "$tmp/drop-1/metrics.csv" "$tmp/drop-$n/metrics.csv"
    fi
done
# With --accum-steps 3 each rank takes its examples of a batch in micro-batches of 11.
"${MPIRUN[@]}" -np 2 "$TRAIN" "${DROP[@]}" --accum-steps 3 --out "$tmp/drop-2-accum" >/dev/null 2>&1 ||
    fail "dropout 0.1: 2 ranks with --accum-steps 3 failed"
worst=$(max_relative_loss_diff "$tmp/drop-1/metrics.csv" "$tmp/drop-2-accum/metrics.csv")
if within_limit "$worst"; then
    pass "2 ranks with --accum-steps 3 match one process (largest relative train/val loss difference $worst)"
else
    fail "2 ranks with --accum-steps 3 differ from one process by $worst relative"
fi
# bf16: the ranks' float32 partial sums of a weight's gradient add up in
# another order than one process's, and bfloat16 rounds each next product's
# inputs to 8 bits, so an ulp of difference can move an input by 2^-8: the
# runs agree within bf16's rounding (2e-3 relative), not float32's. amx
# rounds the same inputs (its sums in another order): the same bound.
for prec in bf16 amx; do
    BF=("${DROP[@]}" --precision $prec)
    "$TRAIN" "${BF[@]}" --out "$tmp/$prec-1" >/dev/null 2>&1 &&
        "${MPIRUN[@]}" -np 2 "$TRAIN" "${BF[@]}" --out "$tmp/$prec-2" >/dev/null 2>&1 || fail "$prec: a run failed"
    worst=$(max_relative_loss_diff "$tmp/$prec-1/metrics.csv" "$tmp/$prec-2/metrics.csv")
    if [ "$(wc -l <"$tmp/$prec-2/metrics.csv")" -eq 4 ] && awk -v w="$worst" 'BEGIN { exit !(w <= 2e-3) }'; then
        pass "$prec: 2 ranks match one process within bf16 rounding (largest relative train/val loss difference $worst, limit 2e-3)"
        echo "REPORT mpi $prec: 2 ranks vs one process, largest relative train/val loss difference $worst (limit 2e-3)"
    else
        fail "$prec: 2 ranks differ from one process by $worst relative (limit 2e-3)"
    fi
done
# The comparison can fail: one loss moved by 1e-4 relative (what masks drawn
# per slice did: 3.4e-2) must be caught.
awk -F, -v OFS=, 'NR == 3 { $2 = sprintf("%.6f", $2 * 1.0001) } 1' "$tmp/drop-1/metrics.csv" >"$tmp/planted.csv"
worst=$(max_relative_loss_diff "$tmp/drop-1/metrics.csv" "$tmp/planted.csv")
if within_limit "$worst"; then
    fail "a planted difference of $worst relative passes the 1e-5 comparison"
else
    pass "the comparison catches a planted difference ($worst relative)"
fi

# ------------------------------ what needs the whole data, from the shares
# Defaults (bpe learned from piece counts summed over ranks, --val-split,
# --max-len auto) plus class weights and a test file that leaks: 3 ranks
# must learn the same vocabulary and merges, split off the same validation
# set and print the same notes (leakage, max-len, sizes) as one process.
head -n 50 "$tmp/train.tsv" >"$tmp/test.tsv"
WHOLE=("$tmp/train.tsv" --test "$tmp/test.tsv" --d-model 16 --heads 2 --d-ff 32 --layers 1 --epochs 2 --batch-size 16
       --class-weights balanced --precision fp32 --threads 1)
"$TRAIN" "${WHOLE[@]}" --out "$tmp/whole-1" >"$tmp/whole-1.txt" 2>&1 || fail "defaults: single process failed"
"${MPIRUN[@]}" -np 3 "$TRAIN" "${WHOLE[@]}" --out "$tmp/whole-3" >"$tmp/whole-3.txt" 2>&1 ||
    { fail "defaults: 3-rank run failed:"; tail -n 5 "$tmp/whole-3.txt"; }
# the notes and the intro, without the epoch table, timings and the run's own name
notes() { grep -E '^(warning|note|max-len|training|model)' "$1" | sed -E "s|$tmp/whole-[13]|RUN|; s/, each batch split over .*//"; }
metadata() {  # the vocabulary, merges and labels of a model.safetensors
    python3 -c 'import json, struct, sys
b = open(sys.argv[1], "rb").read(); m = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])["__metadata__"]
print(m["vocab"], m.get("merges"), m["labels"], m["max_len"])' "$1"
}
worst=$(max_relative_loss_diff "$tmp/whole-1/metrics.csv" "$tmp/whole-3/metrics.csv")
if ! diff <(notes "$tmp/whole-1.txt") <(notes "$tmp/whole-3.txt") >"$tmp/notes.diff"; then
    fail "defaults: 3 ranks print other notes than one process:"; cat "$tmp/notes.diff"
elif ! grep -q "leakage: [0-9]* test examples" "$tmp/whole-3.txt"; then
    fail "defaults: the leakage of the test file was not found over the ranks"; notes "$tmp/whole-3.txt"
elif command -v python3 >/dev/null && [ "$(metadata "$tmp/whole-1/model.safetensors")" != "$(metadata "$tmp/whole-3/model.safetensors")" ]; then
    fail "defaults: 3 ranks learned another vocabulary, merges, labels or max-len"
elif ! within_limit "$worst"; then
    fail "defaults: 3 ranks differ from one process by $worst relative"
else
    pass "defaults over 3 shares: same split, max-len auto, leakage and notes as one process; losses within $worst"
    if command -v python3 >/dev/null; then
        pass "defaults over 3 shares: the same bpe vocabulary, merges, labels and max-len as one process"
    else
        skip "defaults over 3 shares: the vocabulary, merges and labels not compared (apt-get install python3 to read them)"
    fi
fi

# Each rank reads only its byte range of a TSV: a bad line near the end is
# reported by the rank that reads it, with its line number in the whole file.
cp "$tmp/train.tsv" "$tmp/bad.tsv"
sed -i '340s/\t/ /' "$tmp/bad.tsv"
"${MPIRUN[@]}" -np 3 "$TRAIN" "$tmp/bad.tsv" "${TINY[@]}" --epochs 1 --threads 1 --out "$tmp/bad-run" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -q "error (MPI rank 2): $tmp/bad.tsv:340: no tab between label and text" "$tmp/err.txt"; then
    pass "a bad line in rank 2's share: exit $rc, named by rank 2 with its line number in the file (340)"
else
    fail "a bad line in rank 2's share: exit $rc, stderr: $(grep -m1 error "$tmp/err.txt")"
fi

# Hosts that hold different files at the same path (two working directories
# here), or ranks started with different options: refused before training.
mkdir -p "$tmp/host0" "$tmp/host1"
cp "$tmp/train.tsv" "$tmp/host0/same.tsv"
head -n 200 "$tmp/train.tsv" > "$tmp/host1/same.tsv"
"${MPIRUN[@]}" -np 1 -wdir "$tmp/host0" "$TRAIN" same.tsv "${TINY[@]}" --epochs 1 --threads 1 --out "$tmp/mixed" : \
    -np 1 -wdir "$tmp/host1" "$TRAIN" same.tsv "${TINY[@]}" --epochs 1 --threads 1 --out "$tmp/mixed" >/dev/null 2>"$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "same.tsv: MPI rank 1 reads a different file at this path than rank 0" "$tmp/err.txt" \
    && pass "ranks reading different files at one path: exit 2, named" \
    || fail "different files on the ranks: exit $rc, stderr: $(grep -m1 error "$tmp/err.txt")"
"${MPIRUN[@]}" -np 1 "$TRAIN" "$tmp/train.tsv" "${TINY[@]}" --epochs 1 --threads 1 --out "$tmp/mixed2" --lr 0.001 : \
    -np 1 "$TRAIN" "$tmp/train.tsv" "${TINY[@]}" --epochs 1 --threads 1 --out "$tmp/mixed2" --lr 0.002 >/dev/null 2>"$tmp/err.txt"
rc=$?
[ $rc -eq 2 ] && grep -q "MPI rank 1 does not have the same options" "$tmp/err.txt" \
    && pass "ranks started with different --lr: exit 2" || fail "different options on the ranks: exit $rc, stderr: $(grep -m1 error "$tmp/err.txt")"

# ---------------------------------------------- each rank holds its share
# 50000 lines: a rank of 2 must hold at most 1.5 x half of one process's data
# memory (peak RSS less that of the same run on 100 lines); measured it is
# about half. scripts/mpi-memory.sh with no arguments is the 1M-line case.
MPI_MEMORY_CHECK=1.5 bash scripts/mpi-memory.sh 50000 2 >"$tmp/memory.txt" 2>&1
rc=$?
if [ $rc -eq 0 ]; then
    pass "per-rank data memory about 1/N of one process: $(grep '^REPORT' "$tmp/memory.txt" | sed 's/^REPORT mpi memory, //')"
    grep '^REPORT' "$tmp/memory.txt"
elif [ $rc -eq 77 ]; then
    skip "per-rank data memory: $(grep -m 1 '^skip' "$tmp/memory.txt" | sed 's/^skip: *//')"
else
    fail "per-rank data memory:"; cat "$tmp/memory.txt"
fi

# ------------------------------------------- 2 ranks against one process
# Batch 7 leaves a final batch of 3 (split 1 + 2); the second config has class
# weights, so each rank's share of the loss is not its share of the examples.
compare_with_one_process() {  # name, options...
    local name=$1; shift
    local args=("$tmp/train.tsv" --val "$tmp/val.tsv" "${TINY[@]}" --epochs 4 "$@")
    "$TRAIN" "${args[@]}" --threads 2 --out "$tmp/$name-one" >/dev/null || { fail "$name: single process failed"; return; }
    "${MPIRUN[@]}" -np 2 "$TRAIN" "${args[@]}" --threads 1 --out "$tmp/$name-two" >/dev/null 2>"$tmp/err.txt" ||
        { fail "$name: 2-rank run failed:"; cat "$tmp/err.txt"; return; }
    local epochs_one epochs_two worst
    epochs_one=$(($(wc -l <"$tmp/$name-one/metrics.csv") - 1))
    epochs_two=$(($(wc -l <"$tmp/$name-two/metrics.csv") - 1))
    worst=$(max_relative_loss_diff "$tmp/$name-one/metrics.csv" "$tmp/$name-two/metrics.csv")
    if [ "$epochs_one" -ne 4 ] || [ "$epochs_two" -ne 4 ]; then
        fail "$name: $epochs_one and $epochs_two epochs in metrics.csv, expected 4"
    elif ! within_limit "$worst"; then
        fail "$name: train/val loss differ by $worst relative (limit 1e-5):"
        paste -d'\n' "$tmp/$name-one/metrics.csv" "$tmp/$name-two/metrics.csv"
    else
        pass "$name: 2 ranks match one process over 4 epochs (largest relative loss difference $worst)"
        echo "REPORT mpi $name: 2 ranks vs one process, largest relative train/val loss difference $worst (limit 1e-5)"
    fi
    "$TRAIN" predict --model "$tmp/$name-one" <"$tmp/val-texts.txt" >"$tmp/pred-one.txt"
    "$TRAIN" predict --model "$tmp/$name-two" <"$tmp/val-texts.txt" >"$tmp/pred-two.txt"
    if [ ! -s "$tmp/pred-one.txt" ] || ! cmp -s "$tmp/pred-one.txt" "$tmp/pred-two.txt"; then
        fail "$name: predictions on the validation texts differ"
    else
        pass "$name: same predictions on the $(wc -l <"$tmp/pred-one.txt") validation texts"
    fi
    for f in metrics.csv model.safetensors state.safetensors run.json report.txt; do
        [ -s "$tmp/$name-two/$f" ] || fail "$name: the 2-rank run did not write $f"
    done
}
compare_with_one_process plain --batch-size 7 --lr 0.003 --dropout 0
compare_with_one_process weighted --batch-size 5 --lr 0.003 --class-weights balanced --norm pre --pool cls

# ----------------------------------------------- 2 ranks reproduce themselves
RUN2=("$tmp/train.tsv" "${TINY[@]}" --batch-size 8 --epochs 3)   # dropout 0.1
for r in a b; do
    "${MPIRUN[@]}" -np 2 "$TRAIN" "${RUN2[@]}" --threads 1 --out "$tmp/rep-$r" >/dev/null 2>&1 || fail "2-rank run $r failed"
done
if cmp -s "$tmp/rep-a/model.safetensors" "$tmp/rep-b/model.safetensors" &&
   diff <(numbers "$tmp/rep-a/metrics.csv") <(numbers "$tmp/rep-b/metrics.csv") >/dev/null; then
    pass "two 2-rank runs (dropout 0.1): model.safetensors byte-identical, metrics identical"
else
    fail "two 2-rank runs differ"
fi

# Batch 2 over 3 ranks: at every step at least one rank holds none of the
# batch's examples; it adds zero gradients and weight.
SPLIT=("$tmp/train.tsv" "${TINY[@]}" --batch-size 2 --epochs 1 --threads 1)
"$TRAIN" "${SPLIT[@]}" --out "$tmp/split-1" >/dev/null 2>&1 &&
    "${MPIRUN[@]}" -np 3 "$TRAIN" "${SPLIT[@]}" --out "$tmp/split-3" >/dev/null 2>&1 || fail "batch 2 on 1 process or 3 ranks failed"
worst=$(max_relative_loss_diff "$tmp/split-1/metrics.csv" "$tmp/split-3/metrics.csv")
if within_limit "$worst"; then
    pass "batch 2 over 3 ranks (ranks without examples at every step) matches one process ($worst relative)"
else
    fail "batch 2 over 3 ranks differs from one process by $worst relative"
fi

# ---------------------------------------------------------------- resume
"${MPIRUN[@]}" -np 2 "$TRAIN" "${RUN2[@]}" --threads 1 --stop-after 1 --out "$tmp/stopped" >"$tmp/out.txt" 2>&1 ||
    fail "2-rank run with --stop-after 1 failed"
grep -q -- "--resume $tmp/stopped" "$tmp/out.txt" || fail "--stop-after under mpirun printed no resume hint"
"${MPIRUN[@]}" -np 2 "$TRAIN" --resume "$tmp/stopped" --quiet >/dev/null 2>&1 || fail "2-rank --resume failed"
if cmp -s "$tmp/rep-a/model.safetensors" "$tmp/stopped/model.safetensors" &&
   diff <(numbers "$tmp/rep-a/metrics.csv") <(numbers "$tmp/stopped/metrics.csv") >/dev/null; then
    pass "2 ranks stopped after epoch 1 and resumed on 2 ranks: byte-identical to the uninterrupted run"
else
    fail "2 ranks stopped and resumed differ from the uninterrupted run"
fi

# Early stopping: both ranks decide alike and end together.
"${MPIRUN[@]}" -np 2 "$TRAIN" "$tmp/train.tsv" "${TINY[@]}" --batch-size 8 --epochs 30 --lr 0.03 --patience 1 \
    --threads 1 --out "$tmp/patience" >"$tmp/out.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && grep -q "early stopping" "$tmp/out.txt" && [ "$(($(wc -l <"$tmp/patience/metrics.csv") - 1))" -lt 30 ]; then
    pass "early stopping under mpirun ends every rank after $(($(wc -l <"$tmp/patience/metrics.csv") - 1)) epochs"
else
    fail "early stopping under mpirun: exit $rc"; tail -n 5 "$tmp/out.txt"
fi

# ------------------------------------------------------- signals and a dead rank
BIG=("$tmp/big.tsv" "${TINY[@]}" --batch-size 8 --epochs 2 --val-split 0.05 --threads 1)

# The pid of rank R among mpirun's children (single host).
rank_pid() {  # mpirun_pid, rank
    local p
    for p in $(pgrep -P "$1"); do
        tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "OMPI_COMM_WORLD_RANK=$2" && { echo "$p"; return; }
    done
}
# Waits up to 20 s for a file.
wait_for() { for _ in $(seq 200); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }

# SIGUSR1 to mpirun reaches every rank (Open MPI forwards it); all stop after the same step.
# 20 epochs: long enough that the signal lands mid-run even with fast kernels.
"${MPIRUN[@]}" -np 2 "$TRAIN" "${BIG[@]}" --epochs 20 --out "$tmp/big-full" >/dev/null 2>&1 || fail "2-rank run on 6300 examples failed"
"${MPIRUN[@]}" -np 2 "$TRAIN" "${BIG[@]}" --epochs 20 --out "$tmp/big-usr1" >/dev/null 2>"$tmp/err.txt" &
mpirun_pid=$!
wait_for "$tmp/big-usr1/run.json"
sleep 0.2
kill -USR1 "$mpirun_pid"
wait "$mpirun_pid"
rc=$?
if [ $rc -ne 130 ] || ! grep -q "interrupted by SIGUSR1" "$tmp/err.txt"; then
    fail "SIGUSR1 to mpirun: exit $rc, expected 130 and a message:"; cat "$tmp/err.txt"
else
    "${MPIRUN[@]}" -np 2 "$TRAIN" --resume "$tmp/big-usr1" --quiet >/dev/null 2>&1 || fail "--resume after SIGUSR1 failed"
    if cmp -s "$tmp/big-full/model.safetensors" "$tmp/big-usr1/model.safetensors"; then
        pass "SIGUSR1 stops both ranks at one step ($(grep -o 'epoch [0-9]* after step [0-9]*' "$tmp/err.txt")); resumed byte-identical"
        echo "REPORT mpi: 2-rank runs reproduce byte for byte, resume after --stop-after and SIGUSR1 bit-exact"
    else
        fail "interrupted by SIGUSR1 and resumed: differs from the uninterrupted run"
    fi
fi

# kill -9 of rank 1 after the first checkpoint: mpirun stops the job non-zero, naming the rank,
# and rank 0's last checkpoint still loads.
"${MPIRUN[@]}" -np 2 "$TRAIN" "${BIG[@]}" --epochs 20 --out "$tmp/killed" >/dev/null 2>"$tmp/err.txt" &
mpirun_pid=$!
wait_for "$tmp/killed/model.safetensors"
sleep 0.3
victim=$(rank_pid "$mpirun_pid" 1)
[ -n "$victim" ] && kill -9 "$victim"
start=$SECONDS
wait "$mpirun_pid"
rc=$?
if [ -z "$victim" ]; then
    fail "could not find rank 1 among mpirun's children"
elif [ $rc -eq 0 ] || ! grep -q "rank 1" "$tmp/err.txt"; then
    fail "after kill -9 of rank 1: mpirun exit $rc, stderr:"; cat "$tmp/err.txt"
elif ! "$TRAIN" predict --model "$tmp/killed" "not good , bad" >/dev/null; then
    fail "after kill -9 of rank 1 the checkpoint does not load"
else
    pass "kill -9 of rank 1: mpirun exits $rc within $((SECONDS - start)) s naming rank 1; the checkpoint loads"
    echo "REPORT mpi: kill -9 of rank 1 stops the job (mpirun exit $rc); the last checkpoint loads"
fi

# ------------------------------------------------------- run directories
# Rank 0 alone claims (and locks) the directory; every rank follows its verdict.
before=$(cd "$tmp/rep-a" && sha256sum ./*)
"${MPIRUN[@]}" -np 2 "$TRAIN" "${RUN2[@]}" --threads 1 --out "$tmp/rep-a" >/dev/null 2>"$tmp/err.txt"
rc=$?
if [ $rc -ne 0 ] && grep -q "rep-a holds a run" "$tmp/err.txt" && [ "$(cd "$tmp/rep-a" && sha256sum ./*)" = "$before" ]; then
    pass "a 2-rank rerun into a run is refused (exit $rc) and leaves its files byte-identical"
else
    fail "a 2-rank rerun into a run: exit $rc, stderr: $(head -c 300 "$tmp/err.txt")"
fi
mkdir -p "$tmp/numbered" && cp "$tmp/train.tsv" "$tmp/numbered/"
if (cd "$tmp/numbered" && "${MPIRUN[@]}" -np 2 "$TRAIN" train.tsv "${TINY[@]}" --epochs 1 --threads 1 >/dev/null 2>&1 &&
    "${MPIRUN[@]}" -np 2 "$TRAIN" train.tsv "${TINY[@]}" --epochs 1 --threads 1 >/dev/null 2>"$tmp/err.txt") &&
    grep -q "writes to runs/train-2" "$tmp/err.txt" && [ -f "$tmp/numbered/runs/train-2/model.safetensors" ]; then
    pass "under mpirun the default directory is numbered too: runs/train, then runs/train-2"
else
    fail "default directory under mpirun: $(head -c 300 "$tmp/err.txt"); $(ls "$tmp/numbered/runs" 2>&1)"
fi

# ----------------------------------------------------- the log of a job
# Open MPI hands rank 0 a pseudo-terminal even when mpirun's output goes to a
# file: the progress bar's carriage returns and escape codes must not land there.
"${MPIRUN[@]}" -np 2 "$TRAIN" "$tmp/train.tsv" --d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --epochs 2 \
    --threads 1 --out "$tmp/logged" >"$tmp/logged.txt" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^    2 |' "$tmp/logged.txt")" = 1 ] && ! grep -q $'[\r\033]' "$tmp/logged.txt"; then
    pass "a 2-rank job's redirected log holds its epoch rows and no carriage return or escape code"
else
    fail "2-rank log: exit $rc, $(grep -c $'[\r\033]' "$tmp/logged.txt") lines with a carriage return or escape: $(head -c 400 "$tmp/logged.txt" | cat -v)"
fi

# Pretraining's validation split ignores labels (unique ids as labels) and is
# the one process's: the same held-out texts, so the same held-out numbers.
awk '{ print "id" NR "\t" $2 }' FS='\t' "$tmp/train.tsv" >"$tmp/ids.tsv"
PRE=(pretrain "$tmp/ids.tsv" --d-model 16 --heads 2 --d-ff 32 --layers 1 --max-len 16 --vocab-size 200 --epochs 2
     --precision fp32 --threads 1)   # not --quiet: the first line says how many texts are held out
"$TRAIN" "${PRE[@]}" --out "$tmp/pre-1" >"$tmp/pre-1.txt" 2>&1 || fail "pretrain on ids: one process: $(tail -2 "$tmp/pre-1.txt")"
"${MPIRUN[@]}" -np 3 "$TRAIN" "${PRE[@]}" --out "$tmp/pre-3" >"$tmp/pre-3.txt" 2>&1 ||
    fail "pretrain on ids: 3 ranks: $(tail -2 "$tmp/pre-3.txt")"
worst=$(max_relative_loss_diff "$tmp/pre-1/metrics.csv" "$tmp/pre-3/metrics.csv")
held() { grep -oE '[0-9]+ validation$' "$1"; }
if [ -n "$(held "$tmp/pre-1.txt")" ] && [ "$(held "$tmp/pre-1.txt")" = "$(held "$tmp/pre-3.txt")" ] && within_limit "$worst"; then
    pass "pretrain on unique ids over 3 ranks: the one process's split ($(held "$tmp/pre-3.txt")), losses within $worst"
else
    fail "pretrain split over 3 ranks: '$(held "$tmp/pre-1.txt")' vs '$(held "$tmp/pre-3.txt")', losses differ by $worst"
fi

# ----------------------------------------------------------- one process
if "$TRAIN" "$tmp/train.tsv" "${TINY[@]}" --epochs 1 --out "$tmp/plain" >/dev/null; then
    pass "the MPI build runs as a plain process without mpirun"
else
    fail "the MPI build fails without mpirun"
fi

finish test_mpi
