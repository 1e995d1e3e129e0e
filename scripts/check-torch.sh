#!/usr/bin/env bash
# check-torch.sh: the C model against its PyTorch twin (logits, loss,
# gradients, AdamW steps); then a bpe run and an ngram run end to end: the
# vocabulary (and merges) and ids of a real corpus (two licenses, labelled by
# which one a line comes from) against scripts/bpe_ref.py, and the trained
# model's probabilities against the twin's on the same weights.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
out=build/twin
rm -rf "$out"
mkdir -p "$out"
build/tests/tool_torch_check "$out"
"$PYTHON" scripts/twin.py check "$out"

# bpe and ngram end to end on real text: lines of two licenses, which one is the label
lic=/usr/share/common-licenses
if [ -f $lic/GPL-3 ] && [ -f $lic/Apache-2.0 ]; then
    { grep -v '^[[:space:]]*$' $lic/GPL-3 | tr -d '\t' | sed 's/^/gpl\t/'
      grep -v '^[[:space:]]*$' $lic/Apache-2.0 | tr -d '\t' | sed 's/^/apache\t/'; } > "$out/licenses.tsv"
    awk 'NR % 2 == 0' "$out/licenses.tsv" > "$out/val.tsv"
    awk 'NR % 2 == 1' "$out/licenses.tsv" > "$out/train.tsv"
    cut -f2 "$out/val.tsv" > "$out/val-texts.txt"
    for tok in bpe ngram; do
        ./train "$out/train.tsv" --val "$out/val.tsv" --out "$out/$tok-run" --tokenizer $tok --vocab-size 600 \
            --epochs 2 --d-model 32 --heads 2 --d-ff 64 --layers 1 --precision fp32 --threads 1 --quiet \
            > "$out/$tok-run.log"   # the twin is float32
        ./train predict --model "$out/$tok-run" --probs < "$out/val-texts.txt" > "$out/$tok-probs.tsv"
        "$PYTHON" scripts/twin.py tokenizer-check "$out/$tok-run" "$out/train.tsv" "$out/val-texts.txt" \
            "$out/$tok-probs.tsv" --vocab-size 600
    done
else
    echo "skip: bpe and ngram end to end ($lic/GPL-3 or Apache-2.0 missing)"
fi
