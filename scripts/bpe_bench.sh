#!/usr/bin/env bash
# bpe_bench.sh: BPE learning (8000 merges) and encoding speed on ~10 MB of
# English text. The text is /usr/share/common-licenses/* then the plain and
# gzipped *.txt, *.md and README* files under /usr/share/doc (sorted by path,
# invalid UTF-8 and NUL bytes dropped), cut at 10 MB; when a system holds
# less, the same text is repeated until 10 MB (so the count of distinct
# pieces is then that of the smaller text).
#
#   scripts/bpe_bench.sh [MERGES]
# Uses $BPE_BENCH (default build/tests/tool_bpe_bench; `make bench` builds
# it). Then a whole default run (bpe) against --tokenizer word on the same
# data, wall time of each.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${BPE_BENCH:-build/tests/tool_bpe_bench}
if [ ! -x "$tool" ]; then
    echo "bpe_bench: $tool is missing; run 'make bench' (it builds it first)" >&2
    exit 2
fi
size=10000000
corpus=build/bpe-bench/corpus.txt
mkdir -p "$(dirname "$corpus")"
if [ ! -s "$corpus" ] || [ "$(stat -c %s "$corpus")" -ne "$size" ]; then
    raw=build/bpe-bench/raw.txt once=build/bpe-bench/once.txt
    cat /usr/share/common-licenses/* > "$raw" 2>/dev/null || true
    find /usr/share/doc -type f \( -name '*.txt' -o -name '*.md' -o -name 'README*' \) 2>/dev/null | LC_ALL=C sort |
        while read -r f; do
            [ "$(stat -c %s "$raw")" -ge "$size" ] && break
            case "$f" in
                *.gz) zcat -- "$f" >> "$raw" 2>/dev/null || true ;;
                *) cat -- "$f" >> "$raw" ;;
            esac
        done
    tr -d '\000' < "$raw" | iconv -f UTF-8 -t UTF-8 -c > "$once" || true
    [ -s "$once" ] || { echo "bpe_bench: found no text to read" >&2; exit 1; }
    while [ "$(stat -c %s "$once")" -lt "$size" ]; do cat "$once" "$once" > "$once.2" && mv "$once.2" "$once"; done
    head -c "$size" "$once" > "$corpus"
    rm -f "$raw" "$once"
    echo "corpus: $corpus, $(wc -l < "$corpus") lines"
fi
"$tool" "$corpus" "${1:-8000}"

# A default run (bpe, --max-len auto) against the word tokenizer, same data
# and model: the tokenizer's share of a whole run.
data=data/negation/train.tsv
runs=build/bpe-bench/runs
rm -rf "$runs"
mkdir -p "$runs"
wall() {  # name options...: seconds of one run
    local name=$1 start end
    shift
    start=$(date +%s.%N)
    ./train "$data" --out "$runs/$name" --epochs 3 --threads 1 --quiet "$@" > "$runs/$name.log" 2>&1
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }'
}
bpe=$(wall bpe)
word=$(wall word --tokenizer word)
echo "a default run on $data (3 epochs, 1 thread): bpe ${bpe} s, word ${word} s," \
     "ratio $(awk -v a="$bpe" -v b="$word" 'BEGIN { printf "%.2f", a / b }') (target at most 1.5)"
