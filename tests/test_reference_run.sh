#!/usr/bin/env bash
# test_reference_run.sh: a whole training on the reference layers. The demo's
# data and options (scripts/demo.sh), 2 epochs, with ./train and with
# build/train-ref (model.c and AdamW bound to nn/reference.c); the per-epoch
# train_loss and val_loss in metrics.csv must agree within float rounding:
# |fast - ref| <= 1e-4 * |fast| + 2e-6. The two differ only in the order and
# fusing of float operations (a few ulps a layer, 1e-7 relative); over the
# demo's 126 steps that grew to about 1e-6 when this was written, while a
# wrong sign in one backward moves the losses by 1e-2 or more; 2e-6 is the
# rounding of metrics.csv's 6 decimals on both sides.
# Run from the project root after make test (or make train build/train-ref).
source "$(dirname "$0")/lib.sh"

ref=${TRAIN_REF:-build/train-ref}   # another build of it may be named (a planted bug, to see this fail)
if [ ! -x ./train ] || [ ! -x "$ref" ]; then
    fail "./train or build/train-ref is missing: make test builds them (or: make train build/train-ref)"
    finish test_reference_run
fi
export OMP_WAIT_POLICY=passive
demo=(data/negation/train.tsv --test data/negation/test.tsv --epochs 2 --precision fp32 --quiet)   # the reference is float32
./train "${demo[@]}" --out "$tmp/fast" >"$tmp/fast.log" 2>&1 || fail "./train on the demo data failed: $(tail -n 3 "$tmp/fast.log")"
"$ref" "${demo[@]}" --out "$tmp/ref" >"$tmp/ref.log" 2>&1 \
    || fail "build/train-ref on the demo data failed: $(tail -n 3 "$tmp/ref.log")"

# column NAME of metrics.csv in DIR, one value per epoch
column() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next } c { print $c }' "$1/metrics.csv"
}
for name in train_loss val_loss; do
    fast=$(column "$tmp/fast" "$name") ref=$(column "$tmp/ref" "$name")
    if [ "$(wc -w <<<"$fast")" -ne 2 ] || [ "$(wc -w <<<"$ref")" -ne 2 ]; then
        fail "$name: expected 2 epochs from each, got '$fast' and '$ref'"
        continue
    fi
    verdict=$(paste <(echo "$fast") <(echo "$ref") | awk '{ d = $1 - $2; if (d < 0) d = -d; a = $1 < 0 ? -$1 : $1
        if (d > 1e-4 * a + 2e-6) bad = bad sprintf(" epoch %d: %s vs %s;", NR, $1, $2)
        if (d > worst) worst = d } END { printf "%s|%.2g", bad, worst }')
    if [ -z "${verdict%|*}" ]; then
        pass "$name per epoch, ./train $(echo $fast) and train-ref $(echo $ref), within 1e-4 relative"
        echo "REPORT reference run: $name largest difference ${verdict#*|} over 2 epochs"
    else
        fail "$name differs beyond float rounding:${verdict%|*}"
    fi
done
finish test_reference_run
