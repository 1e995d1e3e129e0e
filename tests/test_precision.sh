#!/usr/bin/env bash
# test_precision.sh: --precision bf16 and amx (docs/DESIGN.md §4) train byte-identically at 1 and 2 threads and
# under --stop-after/--resume, pretraining too; it is recorded in run.json, the header line and the
# checkpoint (float32 checkpoints keep no precision key); the default, auto, is bf16 where the CPU has
# AVX-512 BF16 and is AMD's, amx where it has AVX-512 BF16 and AMX's tiles, fp32 elsewhere, and says so;
# predict runs a model in its own precision unless told otherwise; a bad value is refused.
source "$(dirname "$0")/lib.sh"
TRAIN=$PWD/train
[ -x "$TRAIN" ] || { echo "FAIL: $TRAIN is not built (run make test)"; exit 1; }
export OMP_WAIT_POLICY=passive

order_tsv 3 600 10 >"$tmp/order.tsv"
MODEL=(--d-model 32 --heads 2 --d-ff 64 --layers 2 --max-len 24 --batch-size 16)
metrics() { awk -F, '{ NF -= 2; print }' OFS=, "$1/metrics.csv"; }   # without the time columns
meta() { python3 -c 'import json, struct, sys
b = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", b[:8])[0]
print(json.loads(b[8:8 + n])["__metadata__"].get(sys.argv[2], "absent"))' "$1" "$2"; }

# ------------------------------------------------------------ threads
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision bf16 --threads 1 --out "$tmp/t1" >/dev/null ||
    fail "bf16 training at 1 thread failed"
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision bf16 --threads 2 --out "$tmp/t2" >"$tmp/t2.out" ||
    fail "bf16 training at 2 threads failed"
if cmp -s "$tmp/t1/model.safetensors" "$tmp/t2/model.safetensors" && diff -q <(metrics "$tmp/t1") <(metrics "$tmp/t2") >/dev/null; then
    pass "bf16: model.safetensors and metrics.csv byte-identical at --threads 1 and 2"
else
    fail "bf16: --threads 1 and 2 differ"
fi
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision fp32 --threads 2 --out "$tmp/f32" >"$tmp/f32.out" ||
    fail "fp32 training failed"
if cmp -s "$tmp/f32/model.safetensors" "$tmp/t2/model.safetensors"; then
    fail "bf16 and fp32 trained the same bytes: --precision had no effect"
else
    pass "bf16 trains other bytes than fp32 (the products are rounded)"
fi
# a sanity check, not the accuracy study (that is make check-data's, over seeds): bf16 learns the
# order (chance is 0.5) about as well as fp32 from the same start
acc=$(awk -F, 'NR > 1 { a = $5 } END { print a }' "$tmp/t2/metrics.csv")
acc32=$(awk -F, 'NR > 1 { a = $5 } END { print a }' "$tmp/f32/metrics.csv")
awk -v a="$acc" -v b="$acc32" 'BEGIN { exit !(a > 0.7 && a >= b - 0.1) }' &&
    pass "bf16 learns word order: validation accuracy $acc after 3 epochs (fp32 $acc32)" ||
    fail "bf16 validation accuracy $acc after 3 epochs, fp32 $acc32"

# ------------------------------------------------------------ records
grep -q '"precision": "bf16"' "$tmp/t2/run.json" && pass "run.json records precision bf16" ||
    fail "run.json does not record precision bf16"
grep -q 'bf16 products' "$tmp/t2.out" && pass "the header line names the bf16 products" ||
    fail "the header line does not name the bf16 products: $(grep '^model' "$tmp/t2.out")"
grep -q 'bf16' "$tmp/f32.out" && fail "an fp32 run's header mentions bf16" || pass "an fp32 run's header is as before"
if ! command -v python3 >/dev/null; then
    skip "checkpoint metadata precision: needs python3 to read the header (apt-get install python3)"
else
    got=$(meta "$tmp/t2/model.safetensors" precision) f32=$(meta "$tmp/f32/model.safetensors" precision)
    [ "$got" = bf16 ] && [ "$f32" = absent ] && pass "checkpoint metadata: precision bf16; none in an fp32 checkpoint" ||
        fail "checkpoint metadata precision: bf16 run '$got', fp32 run '$f32' (want bf16, absent)"
fi

# ------------------------------------------------------------ amx
# AMX's sums (docs/DESIGN.md §4): on AMX's tiles where /proc/cpuinfo lists them, emulated elsewhere
# (the same bytes: test_matmul); byte-identical at 1 and 2 threads and when stopped and resumed,
# other bytes than bf16's and fp32's; recorded, and named in the header as the run it is
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision amx --threads 1 --out "$tmp/x1" >/dev/null ||
    fail "amx training at 1 thread failed"
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision amx --threads 2 --stop-after 1 --out "$tmp/x2" \
    >"$tmp/x2.out" && "$TRAIN" --resume "$tmp/x2" --quiet >/dev/null || fail "amx --stop-after 1 then --resume failed"
if cmp -s "$tmp/x1/model.safetensors" "$tmp/x2/model.safetensors" && diff -q <(metrics "$tmp/x1") <(metrics "$tmp/x2") >/dev/null; then
    pass "amx: --threads 1, and --threads 2 stopped after epoch 1 and resumed, byte-identical"
else
    fail "amx: --threads 1 and a resumed --threads 2 run differ"
fi
! cmp -s "$tmp/x1/model.safetensors" "$tmp/t2/model.safetensors" && ! cmp -s "$tmp/x1/model.safetensors" "$tmp/f32/model.safetensors" &&
    pass "amx trains other bytes than bf16 and fp32 (its sums run in another order)" ||
    fail "amx trained the bytes of bf16 or fp32: --precision amx had no effect"
acc=$(awk -F, 'NR > 1 { a = $5 } END { print a }' "$tmp/x1/metrics.csv")
awk -v a="$acc" 'BEGIN { exit !(a > 0.7) }' && pass "amx learns word order: validation accuracy $acc after 3 epochs" ||
    fail "amx validation accuracy $acc after 3 epochs"
grep -q '"precision": "amx"' "$tmp/x1/run.json" && pass "run.json records precision amx" || fail "run.json does not record amx"
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && grep -qw amx_bf16 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo; then
    grep -q '; amx products$' "$tmp/x2.out" && pass "the header names the amx products (on this CPU's tiles)" ||
        fail "the header of an amx run on an AMX CPU: $(grep '^model' "$tmp/x2.out")"
else
    grep -q '; amx products (emulated' "$tmp/x2.out" && pass "the header names the amx products, emulated on this CPU" ||
        fail "the header of an amx run without AMX: $(grep '^model' "$tmp/x2.out")"
fi
if command -v python3 >/dev/null; then
    got=$(meta "$tmp/x1/model.safetensors" precision)
    [ "$got" = amx ] && pass "checkpoint metadata: precision amx" || fail "checkpoint metadata precision of an amx run: '$got'"
fi

# ------------------------------------------------------------ the default: auto
# bf16 where the CPU has the instructions and they outrun float32 (AMD's; an Intel core runs them at
# half its float32 rate), amx where it has AMX's tiles (and AVX-512 BF16, for the packing), fp32
# elsewhere: /proc/cpuinfo's answer, independent of the program's own test (which also asks the kernel
# for the tiles' state; a kernel that refuses it would fail here, not pass); the header says which and
# why, run.json records the choice
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --threads 2 --out "$tmp/auto" >"$tmp/auto.out" ||
    fail "training with the default precision failed"
if grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && grep -q '^vendor_id.*AuthenticAMD' /proc/cpuinfo; then
    want=bf16 same=t2 other=f32 why="this CPU has AVX-512 BF16"
elif grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null && grep -qw amx_bf16 /proc/cpuinfo && grep -qw amx_tile /proc/cpuinfo; then
    want=amx same=x1 other=f32 why="this CPU has AMX"
elif grep -qw avx512_bf16 /proc/cpuinfo 2>/dev/null; then
    want=fp32 same=f32 other=t2 why="on this CPU AVX-512 BF16 is no faster than float32, and it has no AMX"
else
    want=fp32 same=f32 other=t2 why="no AVX-512 BF16 on this CPU, or not in this build"
fi
if cmp -s "$tmp/auto/model.safetensors" "$tmp/$same/model.safetensors" &&
    ! cmp -s "$tmp/auto/model.safetensors" "$tmp/$other/model.safetensors"; then
    pass "the default precision trains the bytes of --precision $want on this CPU"
else
    fail "the default precision did not train the bytes of --precision $want ($why)"
fi
grep -q "\"precision\": \"$want\"" "$tmp/auto/run.json" && pass "run.json records the precision auto chose ($want)" ||
    fail "run.json of a default run: $(grep precision "$tmp/auto/run.json")"
grep -qF "$want products (auto: $why)" "$tmp/auto.out" &&
    pass "the header line says auto chose $want and why" ||
    fail "the header line of a default run: $(grep '^model' "$tmp/auto.out")"
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision auto --threads 2 --out "$tmp/auto2" >/dev/null &&
    cmp -s "$tmp/auto/model.safetensors" "$tmp/auto2/model.safetensors" && pass "--precision auto is the default" ||
    fail "--precision auto differs from the default"

# ------------------------------------------------------------ resume
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision bf16 --threads 2 --stop-after 1 --out "$tmp/r" >/dev/null &&
    "$TRAIN" --resume "$tmp/r" --threads 1 --quiet >/dev/null || fail "bf16 --stop-after 1 then --resume failed"
if cmp -s "$tmp/r/model.safetensors" "$tmp/t2/model.safetensors" && diff -q <(metrics "$tmp/r") <(metrics "$tmp/t2") >/dev/null; then
    pass "bf16: stopped after epoch 1 and resumed (at another thread count), byte-identical to the uninterrupted run"
else
    fail "bf16: the resumed run differs from the uninterrupted one"
fi

# --precision auto given again with --resume is no change when it chooses what the run recorded
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --threads 2 --stop-after 1 --out "$tmp/ra" >/dev/null &&
    "$TRAIN" --resume "$tmp/ra" --precision auto --quiet >/dev/null 2>"$tmp/ra.err" &&
    cmp -s "$tmp/ra/model.safetensors" "$tmp/auto/model.safetensors" &&
    pass "--resume with --precision auto continues the run, byte-identical to the uninterrupted one" ||
    fail "--resume --precision auto: $(cat "$tmp/ra.err")"
# a run recorded before --precision existed (no precision in run.json) trained in fp32, and resumes so
"$TRAIN" "$tmp/order.tsv" "${MODEL[@]}" --epochs 3 --precision fp32 --threads 2 --stop-after 1 --out "$tmp/old" \
    >/dev/null || fail "fp32 --stop-after 1 failed"
grep -v '"precision":' "$tmp/old/run.json" >"$tmp/old.json" && mv "$tmp/old.json" "$tmp/old/run.json"
if grep -q '"precision":' "$tmp/old/run.json"; then
    fail "could not remove precision from run.json"
elif "$TRAIN" --resume "$tmp/old" --quiet >/dev/null 2>"$tmp/old.err" &&
    cmp -s "$tmp/old/model.safetensors" "$tmp/f32/model.safetensors"; then
    pass "a run.json without precision resumes in fp32, byte-identical to the uninterrupted fp32 run"
else
    fail "a run.json without precision: $(cat "$tmp/old.err")"
fi

# ------------------------------------------------------------ predict
texts=("a x b y c" "y d x e")
p_own=$("$TRAIN" predict --model "$tmp/t2" --probs --threads 1 "${texts[@]}")
p_two=$("$TRAIN" predict --model "$tmp/t2" --probs --threads 2 "${texts[@]}")
p_bf=$("$TRAIN" predict --model "$tmp/t2" --probs --precision bf16 "${texts[@]}")
p_f32=$("$TRAIN" predict --model "$tmp/t2" --probs --precision fp32 "${texts[@]}")
[ -n "$p_own" ] && [ "$p_own" = "$p_two" ] && pass "bf16 predict identical at --threads 1 and 2" ||
    fail "bf16 predict differs between thread counts"
[ "$p_own" = "$p_bf" ] && [ "$p_own" != "$p_f32" ] &&
    pass "predict runs a bf16 model in bf16 unless --precision fp32 is given" ||
    fail "predict's precision: own '$p_own', bf16 '$p_bf', fp32 '$p_f32'"
"$TRAIN" eval --model "$tmp/t2" --precision fp32 "$tmp/order.tsv" >/dev/null && pass "eval takes --precision" ||
    fail "eval --precision fp32 failed"

# an amx model's own precision
p_own=$("$TRAIN" predict --model "$tmp/x1" --probs "${texts[@]}")
p_amx=$("$TRAIN" predict --model "$tmp/x1" --probs --precision amx "${texts[@]}")
p_f32=$("$TRAIN" predict --model "$tmp/x1" --probs --precision fp32 "${texts[@]}")
# (bf16's probabilities differ from amx's below the 6 printed digits: only fp32 is told apart here)
[ -n "$p_own" ] && [ "$p_own" = "$p_amx" ] && [ "$p_own" != "$p_f32" ] &&
    pass "predict runs an amx model with rounded inputs unless --precision fp32 is given" ||
    fail "predict's precision of an amx model: own '$p_own', amx '$p_amx', fp32 '$p_f32'"

# ------------------------------------------------------------ pretraining
awk -F'\t' '{ print $2 }' "$tmp/order.tsv" >"$tmp/texts.txt"
PRE=(--d-model 32 --heads 2 --d-ff 64 --layers 1 --max-len 24 --batch-size 16 --epochs 2 --precision bf16 --quiet)
"$TRAIN" pretrain "$tmp/texts.txt" "${PRE[@]}" --threads 1 --out "$tmp/p1" >/dev/null &&
    "$TRAIN" pretrain "$tmp/texts.txt" "${PRE[@]}" --threads 2 --out "$tmp/p2" >/dev/null || fail "bf16 pretraining failed"
cmp -s "$tmp/p1/model.safetensors" "$tmp/p2/model.safetensors" &&
    pass "bf16 pretraining (the tied MLM head) byte-identical at --threads 1 and 2" ||
    fail "bf16 pretraining differs between --threads 1 and 2"

# ------------------------------------------------------------ bad input
"$TRAIN" "$tmp/order.tsv" --precision fp16 --out "$tmp/bad" >/dev/null 2>"$tmp/bad.err"
rc=$?
[ $rc -eq 2 ] && grep -q "precision.*auto|fp32|bf16|amx" "$tmp/bad.err" && pass "--precision fp16 refused (exit 2), naming auto|fp32|bf16|amx" ||
    fail "--precision fp16: exit $rc, $(cat "$tmp/bad.err")"

finish test_precision
