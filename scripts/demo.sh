#!/usr/bin/env bash
# demo.sh: `make demo`: trains the default model on the committed negation
# data (word order alone decides the label) and shows the trace and the plot.
# The demo is meant to be run again and again: it replaces runs/demo
# (--overwrite), where a plain ./train would refuse to.
set -euo pipefail
cd "$(dirname "$0")/.."
./train data/negation/train.tsv --test data/negation/test.tsv --out runs/demo --overwrite --epochs 10 "$@"
echo
echo "The curves: runs/demo/curves.png (loss and accuracy per epoch, train and validation)."
echo "Try next: ./train predict --model runs/demo --probs \"the food was not good , bad\""
echo "          ./train trace --model runs/demo \"the food was good , not bad\""
echo "          ./train compare-pe data/negation/train.tsv --test data/negation/test.tsv"
