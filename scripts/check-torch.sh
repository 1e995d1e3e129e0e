#!/usr/bin/env bash
# check-torch.sh: the C model against its PyTorch twin (logits, loss,
# gradients, AdamW steps); then a bpe run end to end: the merges and ids of
# a real corpus (two licenses, labelled by which one a line comes from)
# against scripts/bpe_ref.py, and the trained model's probabilities against
# the twin's on the same weights.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
out=build/twin
rm -rf "$out"
mkdir -p "$out"
build/tests/tool_torch_check "$out"
"$PYTHON" scripts/twin.py check "$out"

# bpe end to end on real text: lines of two licenses, which one is the label
lic=/usr/share/common-licenses
if [ -f $lic/GPL-3 ] && [ -f $lic/Apache-2.0 ]; then
    { grep -v '^[[:space:]]*$' $lic/GPL-3 | tr -d '\t' | sed 's/^/gpl\t/'
      grep -v '^[[:space:]]*$' $lic/Apache-2.0 | tr -d '\t' | sed 's/^/apache\t/'; } > "$out/licenses.tsv"
    awk 'NR % 2 == 0' "$out/licenses.tsv" > "$out/val.tsv"
    awk 'NR % 2 == 1' "$out/licenses.tsv" > "$out/train.tsv"
    ./train "$out/train.tsv" --val "$out/val.tsv" --out "$out/bpe-run" --vocab-size 600 --epochs 2 --d-model 32 \
        --heads 2 --d-ff 64 --layers 1 --precision fp32 --threads 1 --quiet > "$out/bpe-run.log"   # the twin is float32
    cut -f2 "$out/val.tsv" > "$out/val-texts.txt"
    ./train predict --model "$out/bpe-run" --probs < "$out/val-texts.txt" > "$out/val-probs.tsv"
    "$PYTHON" scripts/twin.py bpe-check "$out/bpe-run" "$out/train.tsv" "$out/val-texts.txt" "$out/val-probs.tsv" \
        --vocab-size 600
else
    echo "skip: bpe end to end ($lic/GPL-3 or Apache-2.0 missing)"
fi
