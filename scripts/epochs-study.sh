#!/usr/bin/env bash
# epochs-study.sh: the defaults against a fixed number of epochs, and fastText's default time, on the real sets (issue 41).
#
#   bash scripts/epochs-study.sh RECORD [SET...]      runs, appending to RECORD (a TSV), then prints the table
#   bash scripts/epochs-study.sh --table RECORD       the table alone, from a record made before
#
# For each set (default: the eight of data/README.md), each number of
# epochs in EPOCHS (default "30 10"; "default" gives no --epochs) and each
# seed in SEEDS (default "1 2 3"): ./train TRAIN --test TEST --epochs E
# --seed S --threads THREADS --quiet (and OPTIONS, below), its test accuracy
# from report.txt, its whole-process wall seconds and the seconds of its
# training steps (metrics.csv's seconds column summed); then fastText's
# default (`fasttext supervised` with no option but -thread), three times,
# its P@1 and seconds (training and testing). The record's lines: set, run
# (epochs or "default", followed by OPTIONS if given; or "fasttext"), seed or repetition, accuracy, seconds,
# and for ./train the epochs it ran and its steps' seconds (older records
# lack them). The table: each set's mean and max - min over the seeds and
# mean seconds (of which in the steps) per number of epochs, fastText's default
# accuracy (mean: with two threads it moves a little between runs) and
# median seconds, and each mean time over that median.
# OPTIONS (default none): more options for every ./train run, which then
# names its column ("default --precision amx").
# Exit: 0 done; 1 a run failed; 2 bad usage or missing data; 3 fasttext missing.
set -euo pipefail
caller=$PWD   # RECORD is named from the caller's directory, the runs from the repository's
cd "$(dirname "$0")/.."
absolute() { case $1 in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }

table() {  # record
    awk -F'\t' '
        $2 == "fasttext" { ft[$1, ++nf[$1]] = $5; fa[$1] += $4; next }
        { k = $1 SUBSEP $2; n[k]++; s[k] += $4; t[k] += $5; if (NF >= 7) { st[k] += $7; nst[k]++ }
          if (n[k] == 1 || $4 < lo[k]) lo[k] = $4; if (n[k] == 1 || $4 > hi[k]) hi[k] = $4
          if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1 }
          if (!($2 in eseen)) { eseen[$2] = 1; ep[++ne] = $2 } }
        END {
            head = "| set |"; rule = "|---|"
            for (e = 1; e <= ne; e++) { head = head " " ep[e] (ep[e] ~ /^[0-9]+$/ ? " epochs" : "") ": mean ± (max - min) | seeds | s |"; rule = rule "---|---|---|" }
            print head " fastText default (mean) | its s (median) |" (ne >= 2 ? " " ep[2] " - " ep[1] " |" : "") \
                  " ratios to fastText s |"
            print rule "---|---|" (ne >= 2 ? "---|" : "") "---|"
            for (i = 1; i <= ns; i++) {
                name = order[i]; row = "| " name " |"
                m = nf[name]   # the median of fastText seconds (insertion sort of at most a few)
                for (a = 1; a <= m; a++) v[a] = ft[name, a]
                for (a = 2; a <= m; a++) for (b = a; b > 1 && v[b - 1] > v[b]; b--) { x = v[b]; v[b] = v[b - 1]; v[b - 1] = x }
                med = m ? v[int((m + 1) / 2)] : 0
                ratios = ""
                for (e = 1; e <= ne; e++) {
                    k = name SUBSEP ep[e]
                    if (!(k in n)) { row = row " | | |"; continue }
                    row = row sprintf(" %.4f ± %.4f | %d | %.1f%s |", s[k] / n[k], hi[k] - lo[k], n[k], t[k] / n[k],
                                      nst[k] == n[k] ? sprintf(" (steps %.1f)", st[k] / n[k]) : "")
                    ratios = ratios (ratios == "" ? "" : ", ") sprintf("%s: %.0fx", ep[e], med > 0 ? t[k] / n[k] / med : 0)
                }
                k1 = name SUBSEP ep[1]; k2 = name SUBSEP ep[2]
                diff = ne >= 2 && (k1 in n) && (k2 in n) ? sprintf(" %+.4f |", s[k2] / n[k2] - s[k1] / n[k1]) : (ne >= 2 ? " |" : "")
                printf "%s %s | %s |%s %s |\n", row, m ? sprintf("%.4f", fa[name] / m) : "-", m ? sprintf("%.2f", med) : "-", diff, ratios
            }
        }' "$1"
}

[ $# -ge 1 ] || { echo "usage: $0 RECORD [SET...] | --table RECORD   (env: EPOCHS='30 10', SEEDS='1 2 3', THREADS=2)" >&2; exit 2; }
if [ "$1" = --table ]; then
    [ $# -eq 2 ] && [ -s "$(absolute "$2")" ] || { echo "epochs-study: --table needs a record made by a run of this script" >&2; exit 2; }
    table "$(absolute "$2")"
    exit 0
fi
record=$(absolute "$1")
shift
sets=("$@")
[ ${#sets[@]} -gt 0 ] || sets=(mannames debdesc wordnet fortunes digits manpara sentlang langid)
threads=${THREADS:-2}
for name in "${sets[@]}"; do
    for f in "data/$name/train.tsv" "data/$name/test.tsv"; do
        [ -s "$f" ] || { echo "epochs-study: $f not found (make data builds the real sets)" >&2; exit 2; }
    done
done
command -v fasttext >/dev/null || { echo "epochs-study: fasttext not found (apt-get install fasttext)" >&2; exit 3; }
[ -x ./train ] || { echo "epochs-study: ./train not built (make train)" >&2; exit 2; }
out=build/epochs-study
mkdir -p "$out"
source scripts/study-lib.sh

for name in "${sets[@]}"; do
    for epochs in ${EPOCHS:-30 10}; do
        for seed in ${SEEDS:-1 2 3}; do
            run=$out/$name-e$epochs-s$seed
            rm -rf "$run"
            given=(--epochs "$epochs")
            [ "$epochs" != default ] || given=()
            # shellcheck disable=SC2206   # OPTIONS: words, as typed
            extra=(${OPTIONS:-})
            train_timed epochs-study "$run" "data/$name/train.tsv" --test "data/$name/test.tsv" "${given[@]}" \
                --seed "$seed" --threads "$threads" --quiet "${extra[@]}"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$epochs${OPTIONS:+ $OPTIONS}" "$seed" "$acc" "$secs" \
                "$(($(wc -l <"$run/metrics.csv") - 1))" \
                "$(awk -F, 'NR == 1 { for (c = 1; c <= NF; c++) if ($c == "seconds") col = c; next }
                            col { s += $col } END { if (col) printf "%.2f", s }' "$run/metrics.csv")" >>"$record"
        done
    done
    to_fasttext "data/$name/train.tsv" >"$out/$name-ft-train.txt"
    to_fasttext "data/$name/test.tsv" >"$out/$name-ft-test.txt"
    for rep in 1 2 3; do
        fasttext_timed epochs-study "$out/$name-ft" "$out/$name-ft-train.txt" "$out/$name-ft-test.txt" -thread "$threads"
        printf '%s\tfasttext\t%s\t%s\t%s\n' "$name" "$rep" "$acc" "$secs" >>"$record"
    done
done
table "$record"
