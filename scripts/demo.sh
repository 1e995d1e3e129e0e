#!/usr/bin/env bash
# demo.sh: `make demo`: trains the default model on the committed negation
# data (word order alone decides the label), then walks one review through
# the trained model stage by stage (trace, drawing its attention), and labels
# two reviews that use the same words in another order (predict); last, the
# film of the probes the training recorded every epoch (./train film).
# Extra arguments go to the training; DEMO_OUT moves the run (scripts/docs.sh
# generates the README's excerpts from this script's output).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${DEMO_OUT:-runs/demo}
# the demo replaces its own earlier run (where ./train protects a finished run, it is asked to)
fresh=()
if grep -q -- '--overwrite' <<<"$(./train --help)"; then fresh=(--overwrite); fi
run() {  # prints the command (without --overwrite, which only keeps a rerun working), then runs it
    local shown=()
    for a in "$@"; do
        case $a in --overwrite) ;; *' '*) shown+=("\"$a\"") ;; *) shown+=("$a") ;; esac
    done
    printf '\n$ %s\n' "${shown[*]}"
    "$@"
}

# --precision bf16, the default on AMD's CPUs with AVX-512 BF16, named so that the numbers are the
# README's on any CPU (elsewhere bf16 is emulated: the same bytes, slower)
run ./train data/negation/train.tsv --test data/negation/test.tsv --out "$out" --epochs 10 --precision bf16 \
    ${fresh[@]+"${fresh[@]}"} "$@"
run ./train trace --model "$out" "the food was good , not bad" --png "$out/trace"
run ./train predict --model "$out" --probs --header "the food was good , not bad" "the food was not good , bad"
echo
echo "Pictures: $out/curves.png (loss and accuracy per epoch), $out/confusion.png, and each head's"
echo "attention in $out/trace/. Try next: ./train compare-pe data/negation/train.tsv --test data/negation/test.tsv"
run ./train film "$out"
