#!/usr/bin/env bash
# fasttext-baseline.sh: the fastText baseline of data/README.md for every real
# dataset: `fasttext supervised` with its defaults on train.tsv, `fasttext test`
# on test.tsv (precision at 1, which is accuracy here: one label per example).
# Also the reference langid runs with character n-grams (-minn 1 -maxn 4, with
# the default 5 epochs and with 25: issue 14's 0.85), and, for orientation,
# the text sets with 25 epochs instead of the default 5.
#
# Needs Debian's fasttext (apt-get install fasttext). Builds the data first
# (scripts/get-data.sh) where it is missing. Writes build/fasttext/<run>/ and
# build/fasttext/results.md, and prints the table.
#   bash scripts/fasttext-baseline.sh                      every run above
#   bash scripts/fasttext-baseline.sh --defaults NAME...   only the defaults runs of these datasets
#                                                          (table on stdout only; check-data uses it)
# FASTTEXT_THREADS (default 1: the same numbers on every run) sets -thread.
# Exit: 0 done; 3 fasttext or the Debian packages are unavailable; 1 other errors.
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/fasttext
threads=${FASTTEXT_THREADS:-1}
datasets=(digits langid wordnet fortunes)
only_defaults=0
if [ "${1:-}" = --defaults ]; then
    shift
    [ $# -gt 0 ] || { echo "usage: $0 [--defaults DATASET...]" >&2; exit 2; }
    only_defaults=1
    datasets=("$@")
elif [ $# -gt 0 ]; then
    echo "usage: $0 [--defaults DATASET...]" >&2
    exit 2
fi

if ! command -v fasttext >/dev/null; then
    echo "fasttext-baseline: fasttext not found (apt-get install fasttext)" >&2
    exit 3
fi
for name in "${datasets[@]}"; do
    if [ ! -s "data/$name/train.tsv" ]; then
        rc=0
        bash scripts/get-data.sh || rc=$?
        [ $rc -eq 0 ] || exit $rc
        break
    fi
done

mkdir -p "$out"
results=$out/results.md
[ $only_defaults -eq 0 ] || results=$(mktemp)
printf '| dataset | fastText options | train | test | test accuracy | seconds (train + test) |\n|---|---|---|---|---|---|\n' \
    >"$results"

# fastText's input: one example a line, "__label__LABEL text" (comments dropped).
to_fasttext() { sed -n '/^#/!s/^\([^\t]*\)\t/__label__\1 /p' "$1"; }

run() {  # run-name dataset fastText-options...
    local name=$1 data=$2; shift 2
    local dir=$out/$name
    mkdir -p "$dir"
    to_fasttext "data/$data/train.tsv" >"$dir/train.txt"
    to_fasttext "data/$data/test.tsv" >"$dir/test.txt"
    local start=$EPOCHREALTIME
    fasttext supervised -input "$dir/train.txt" -output "$dir/model" -thread "$threads" "$@" >"$dir/train.log" 2>&1 \
        || { echo "fasttext-baseline: $name: fasttext supervised failed:" >&2; tail -n 5 "$dir/train.log" >&2; exit 1; }
    fasttext test "$dir/model.bin" "$dir/test.txt" >"$dir/test.log" 2>&1 \
        || { echo "fasttext-baseline: $name: fasttext test failed:" >&2; tail -n 5 "$dir/test.log" >&2; exit 1; }
    local end=$EPOCHREALTIME
    local acc
    acc=$(awk '$1 == "P@1" { printf "%.4f", $2 }' "$dir/test.log")
    [ -n "$acc" ] || { echo "fasttext-baseline: $name: no P@1 in $dir/test.log" >&2; exit 1; }
    rm -f "$dir/model.bin" "$dir/model.vec"    # large, and not needed afterwards
    printf '| %s | %s | %d | %d | %s | %.1f |\n' "$data" "${*:-(defaults)}" \
        "$(wc -l <"$dir/train.txt")" "$(wc -l <"$dir/test.txt")" "$acc" \
        "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')" >>"$results"
}

for name in "${datasets[@]}"; do
    run "$name-defaults" "$name"
done
if [ $only_defaults -eq 0 ]; then
    run langid-minn1-maxn4 langid -minn 1 -maxn 4
    run langid-minn1-maxn4-epoch25 langid -minn 1 -maxn 4 -epoch 25
    run wordnet-epoch25 wordnet -epoch 25
    run fortunes-epoch25 fortunes -epoch 25
fi

echo "fastText $(dpkg-query -W -f '${Version}' fasttext 2>/dev/null || echo '(version unknown)'), -thread $threads"
cat "$results"
[ $only_defaults -eq 0 ] || rm -f "$results"
