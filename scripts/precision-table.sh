#!/usr/bin/env bash
# precision-table.sh: issue 39's accuracy table: the defaults in float32 and in bfloat16, over seeds, set by set.
#
#   bash scripts/precision-table.sh [DATASET...]   (default: every build/precision/*.tsv)
#
# bfloat16 rows come from build/precision/DATASET.tsv (scripts/precision-study.sh);
# float32 rows from the same file, or, where it has none, from
# build/compare/DATASET.tsv (scripts/compare-fasttext.sh: the same defaults and
# seeds in float32, whose results do not depend on the threads). Prints one
# markdown row a set: seeds, each precision's mean and spread (max - min), the
# difference of the means, and whether the bfloat16 mean lies within float32's
# seed range [min, max] (the test the issue sets: "within the seed spread").
# Only the seeds in SEEDS (default "1 2 3") count, each once per precision.
# It compares bf16 alone; amx rows are left out (scripts/compare-precision.awk
# sets amx beside float32, from scripts/epochs-study.sh's records).
set -euo pipefail
cd "$(dirname "$0")/.."
sets=("$@")
if [ ${#sets[@]} -eq 0 ]; then
    for f in build/precision/*.tsv; do [ -e "$f" ] && sets+=("$(basename "$f" .tsv)"); done
fi
[ ${#sets[@]} -gt 0 ] || { echo "precision-table: no build/precision/*.tsv (run scripts/precision-study.sh)" >&2; exit 2; }

echo '| set | seeds | float32 mean ± (max - min) | bfloat16 mean ± (max - min) | bf16 - fp32 | bf16 mean within fp32 range |'
echo '|---|---|---|---|---|---|'
for s in "${sets[@]}"; do
    p=build/precision/$s.tsv c=build/compare/$s.tsv
    [ -s "$p" ] || { echo "precision-table: $p not found" >&2; exit 2; }
    {
        awk -F'\t' 'NR > 1 { print $2 "\t" $3 "\t" $4 }' "$p"
        if ! awk -F'\t' '$2 == "fp32" { f = 1 } END { exit !f }' "$p" && [ -s "$c" ]; then
            awk -F'\t' '$1 == "ours" && $2 == "(defaults)" { print "fp32\t" $3 "\t" $4 }' "$c"
        fi
    } | awk -F'\t' -v set="$s" -v wanted="${SEEDS:-1 2 3}" '
        BEGIN { n_want = split(wanted, w, " "); for (i = 1; i <= n_want; i++) want[w[i]] = 1 }
        ($2 in want) && !seen[$1 " " $2]++ { n[$1]++; sum[$1] += $3
            if (!($1 in lo) || $3 < lo[$1]) lo[$1] = $3
            if (!($1 in hi) || $3 > hi[$1]) hi[$1] = $3
            seeds[$1] = seeds[$1] (seeds[$1] == "" ? "" : ",") $2 }
        END {
            if (!n["fp32"] || !n["bf16"]) { printf "| %s | incomplete | | | | |\n", set; exit }
            mf = sum["fp32"] / n["fp32"]; mb = sum["bf16"] / n["bf16"]
            within = mb >= lo["fp32"] - 1e-9 && mb <= hi["fp32"] + 1e-9
            printf "| %s | %s | %.4f ± %.4f | %.4f ± %.4f | %+.4f | %s |\n", set,
                (seeds["fp32"] == seeds["bf16"] ? seeds["bf16"] : "fp32 " seeds["fp32"] "; bf16 " seeds["bf16"]),
                mf, hi["fp32"] - lo["fp32"], mb, hi["bf16"] - lo["bf16"], mb - mf, (within ? "yes" : "no") }'
done
