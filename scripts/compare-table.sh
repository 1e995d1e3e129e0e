#!/usr/bin/env bash
# compare-table.sh: issue 41's table from the rows scripts/compare-fasttext.sh
# wrote (build/compare/NAME.tsv), one line a set, in the order given:
#   bash scripts/compare-table.sh NAME...
# Columns: ours (defaults, mean and max - min over the seeds run), fastText's
# four ways and their best, ours minus that best, mean seconds of ours and
# fastText's default, and their ratio. A set with no file is listed as such.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 NAME..." >&2; exit 2; }
echo "| set | train lines | defaults, mean ± (max - min) | seeds | fastText default | -wordNgrams 2 | -minn 2 -maxn 5 | autotune | fastText best | defaults - best | defaults s | fastText default s | ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for name in "$@"; do
    tsv=build/compare/$name.tsv
    if [ ! -s "$tsv" ]; then echo "| $name | | not measured | | | | | | | | | | |"; continue; fi
    awk -F'\t' -v name="$name" -v lines="$(grep -vc '^#' "data/$name/train.tsv")" '
        NR == 1 { next }
        $1 == "ours" { n++; s += $4; t += $5; if (n == 1 || $4 < lo) lo = $4; if (n == 1 || $4 > hi) hi = $4; next }
        { m++; ft[m] = $4; if (m == 1) ftsec = $5; if ($2 ~ /autotune-duration/) { d = $2; sub(/.*-autotune-duration /, "", d); tune = d } if (m == 1 || $4 > best) best = $4 }
        END {
            for (k = 1; k <= 4; k++) if (!(k in ft)) ft[k] = "-"
            printf "| %s | %d | %.4f ± %.4f | %d | %s | %s | %s | %s (%s s) | %s | %+.4f | %.0f | %.2f | %.0fx |\n",
                name, lines, s / n, hi - lo, n, ft[1], ft[2], ft[3], ft[4], tune, best, s / n - best, t / n, ftsec,
                (ftsec > 0 ? t / n / ftsec : 0)
        }' "$tsv"
done
