#!/usr/bin/env bash
# make-synthetic.sh: compiles data/generate.c into build/ and writes the synthetic datasets (negation, before, rare).
# Usage: bash scripts/make-synthetic.sh [OUTDIR]   (default: data; the committed files)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-data}
cc=${CC:-cc}
mkdir -p build
"$cc" -std=c11 -O2 -Wall -Wextra -o build/generate data/generate.c
for name in negation before rare; do
    mkdir -p "$out/$name"
done
build/generate synthetic "$out"
for name in negation before rare; do
    for split in train test; do
        printf '%-28s %5d examples\n' "$out/$name/$split.tsv" "$(grep -vc '^#' "$out/$name/$split.tsv")"
    done
done
