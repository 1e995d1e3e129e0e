#!/usr/bin/env bash
# compare-fasttext.sh: one row of issue 41's table: ./train with its defaults (several seeds) against fastText's four ways, accuracy and time.
#
#   bash scripts/compare-fasttext.sh DATASET [SEED...]      (seeds default: 1 2 3)
#
# On data/DATASET/{train,test}.tsv it runs
#   ours       ./train TRAIN --test TEST (no other option but --out, --quiet,
#              --seed and --threads), once a seed; test accuracy from the run's
#              report.txt, whole-process wall seconds
#   fastText   `fasttext supervised` with its defaults, with -wordNgrams 2, with
#              -minn 2 -maxn 5, and with -autotune-validation on a stratified
#              20% of the training file (never the test file; the other 80%
#              is its -input) for FT_AUTOTUNE_DURATION seconds (default 120);
#              test accuracy is `fasttext test`'s P@1 (one label a line, so it
#              is accuracy), seconds are training plus testing;
#              FT_AUTOTUNE_DURATION=0 skips the autotune and keeps its row
#              from the set's previous table (its runs take minutes, and
#              are not what a new build of ./train changes)
# Every run uses THREADS threads (default 2). Prints the markdown table row
# (dataset, train lines, ours mean ± spread = max - min, fastText's four
# figures and their best, ours mean seconds, fastText default seconds, their
# ratio) and writes it to build/compare/DATASET.md, every run's figures to
# build/compare/DATASET.tsv (run, options, seed, accuracy, seconds), and the
# runs under build/compare/DATASET/.
# Exit: 0 done; 1 a run failed; 2 bad usage or missing data; 3 fasttext missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

usage() { echo "usage: $0 DATASET [SEED...]   (env: THREADS=2, FT_AUTOTUNE_DURATION=120)" >&2; exit 2; }
[ $# -ge 1 ] || usage
name=$1
shift
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(1 2 3)
for s in "${seeds[@]}"; do [[ $s =~ ^[0-9]+$ ]] || { echo "compare-fasttext: seed '$s' is not a number" >&2; usage; }; done
threads=${THREADS:-2}
duration=${FT_AUTOTUNE_DURATION:-120}
[[ $threads =~ ^[1-9][0-9]*$ ]] || { echo "compare-fasttext: THREADS='$threads' is not a positive number" >&2; exit 2; }
[[ $duration =~ ^[0-9]+$ ]] || { echo "compare-fasttext: FT_AUTOTUNE_DURATION='$duration' is not a number of seconds" >&2; exit 2; }
train=data/$name/train.tsv
test=data/$name/test.tsv
for f in "$train" "$test"; do
    [ -s "$f" ] || { echo "compare-fasttext: $f not found (make data builds the real sets)" >&2; exit 2; }
done
command -v fasttext >/dev/null || { echo "compare-fasttext: fasttext not found (apt-get install fasttext)" >&2; exit 3; }
[ -x ./train ] || { echo "compare-fasttext: ./train not built (make train)" >&2; exit 2; }

out=build/compare/$name
rm -rf "$out"
mkdir -p "$out"
tsv=build/compare/$name.tsv
kept_autotune=
[ "$duration" -eq 0 ] && [ -s "$tsv" ] && kept_autotune=$(awk -F'\t' '$1 == "fasttext" && $2 ~ /autotune/' "$tsv")
printf 'run\toptions\tseed\taccuracy\tseconds\n' >"$tsv"

source scripts/study-lib.sh

# 1. Ours: the defaults, one run a seed.
for seed in "${seeds[@]}"; do
    train_timed compare-fasttext "$out/ours-seed$seed" "$train" --test "$test" --quiet --seed "$seed" --threads "$threads"
    printf 'ours\t(defaults)\t%s\t%s\t%s\n' "$seed" "$acc" "$secs" >>"$tsv"
    echo "compare-fasttext: $name ours seed $seed: accuracy $acc, $secs s" >&2
done

# 2. fastText. Its input: "__label__LABEL text" lines, comments dropped. The
# autotune's validation file is a stratified 20% of train.tsv (data/generate.c's
# split, as the data's own), its input the rest.
to_fasttext "$train" >"$out/train.txt"
to_fasttext "$test" >"$out/test.txt"
[ -x build/generate ] || "${CC:-cc}" -std=c11 -O2 -Wall -Wextra -o build/generate data/generate.c
: >"$out/tune-train.tsv"
: >"$out/tune-valid.tsv"
grep -v '^#' "$train" | build/generate split 20 3 "$out/tune-train.tsv" "$out/tune-valid.tsv"
to_fasttext "$out/tune-train.tsv" >"$out/tune-train.txt"
to_fasttext "$out/tune-valid.tsv" >"$out/tune-valid.txt"

fasttext_run() {  # run-name input options...
    local run=$1 input=$2
    shift 2
    fasttext_timed compare-fasttext "$out/$run" "$input" "$out/test.txt" -thread "$threads" "$@"
    rm -f "$out/$run.bin" "$out/$run.vec"    # large, and not needed afterwards
    printf 'fasttext\t%s\t-\t%s\t%s\n' "${*:-(defaults)}" "$acc" "$secs" >>"$tsv"
    echo "compare-fasttext: $name fasttext ${*:-(defaults)}: accuracy $acc, $secs s" >&2
}
fasttext_run ft-default "$out/train.txt"
fasttext_run ft-bigrams "$out/train.txt" -wordNgrams 2
fasttext_run ft-chars "$out/train.txt" -minn 2 -maxn 5
if [ "$duration" -gt 0 ]; then
    fasttext_run ft-autotune "$out/tune-train.txt" -autotune-validation "$out/tune-valid.txt" -autotune-duration "$duration"
elif [ -n "$kept_autotune" ]; then
    echo "$kept_autotune" >>"$tsv"
    echo "compare-fasttext: $name fasttext autotune: kept from the previous table" >&2
fi

# 3. The row.
row=$(awk -F'\t' -v name="$name" -v lines="$(grep -vc '^#' "$train")" '
    NR == 1 { next }
    $1 == "ours" { n++; s += $4; t += $5; if (n == 1 || $4 < lo) lo = $4; if (n == 1 || $4 > hi) hi = $4; next }
    { ft[++m] = $4; if (m == 1) ftsec = $5; if (m == 1 || $4 > best) best = $4 }
    END {
        printf "| %s | %d | %.4f ± %.4f | %s | %s | %s | %s | %s | %.1f | %.2f | %.1f |",
            name, lines, s / n, hi - lo, ft[1], ft[2], ft[3], ft[4], best, t / n, ftsec, (ftsec > 0 ? t / n / ftsec : 0)
    }' "$tsv")
{
    echo "| dataset | train lines | ours (${#seeds[@]} seeds: mean ± max-min) | fastText default | -wordNgrams 2 | -minn 2 -maxn 5 | autotune ${duration} s | fastText best | ours s (mean) | fastText default s | ratio |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|"
    echo "$row"
} >"build/compare/$name.md"
echo "$row"
