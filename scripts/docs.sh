#!/usr/bin/env bash
# docs.sh: the README's excerpts and pictures, generated from real runs so
# that they cannot drift from what the commands print.
#
#   scripts/docs.sh           (make docs) runs the commands, rewrites each
#                             marked block of README.md, <!-- begin:NAME -->
#                             ... <!-- end:NAME -->, and docs/images/
#   scripts/docs.sh --check [FILE...]
#                             runs them in a temporary directory and compares
#                             them with README.md (or each FILE) and
#                             docs/images: exit 1 naming each block or picture
#                             that differs (tests/test_docs.sh, in make test)
#
# Run-to-run noise is masked before comparing: the Seconds column of the
# epoch table, and the temporary directory the check runs in. Everything else
# is deterministic (same binary, data and seed: same numbers at any thread
# count), so any other difference means the README no longer shows what the
# command prints.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-write}
case $mode in write | --check) ;; *) echo "usage: scripts/docs.sh [--check [FILE...]]" >&2; exit 2 ;; esac
shift || true
checked=("$@")
[ ${#checked[@]} -gt 0 ] || checked=(README.md)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$mode" = --check ]; then runs=$work/runs; else runs=runs; fi
blocks=$work/blocks
mkdir -p "$runs" "$blocks" "$work/images"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}   # other work on the machine: no spinning threads
fresh=()
if grep -q -- '--overwrite' <<<"$(./train --help)"; then fresh=(--overwrite); fi

# Output as the README shows it: the check's temporary directory reads runs/.
as_shown() { sed "s|$runs/|runs/|g"; }
# A command as typed: arguments with spaces in double quotes.
typed() {
    local shown=() a
    for a in "$@"; do case $a in *' '*) shown+=("\"$a\"") ;; *) shown+=("$a") ;; esac; done
    echo "${shown[*]}"
}
fence() { echo '```'; cat; echo '```'; }

# ---- make demo: training, trace, predict
DEMO_OUT=$runs/demo bash scripts/demo.sh > "$work/demo.txt" 2>&1 || { cat "$work/demo.txt"; exit 1; }
as_shown < "$work/demo.txt" > "$work/demo.shown"
# the epoch table, whole
awk '/^Epoch \|/ { t = 1 } t && !/^(Epoch|-----| +[0-9]+ \|)/ { exit } t' "$work/demo.shown" | fence > "$blocks/demo-table"
# what follows the table, with the test accuracy
test_acc=$(awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$work/demo.shown")
epochs=$(grep -cE '^ +[0-9]+ \|' "$blocks/demo-table")
cat > "$blocks/demo-then" <<EOF
($epochs epochs), then a text chart of the loss, the classification report and
confusion matrix for the validation and test sets (test accuracy $test_acc), and
\`runs/demo/curves.png\`; then it traces one review through the trained model (see
below) and labels two reviews whose words are the same and whose order is not:
EOF
# predict: its command and output
awk '/^\$ \.\/train predict/ { p = 1 } p && /^$/ { exit } p' "$work/demo.shown" | fence > "$blocks/demo-predict"
# trace: its command, then tokens, the first head's weights for three queries, and the end
sed -n '/^\$ \.\/train trace/,/^\$ \.\/train predict/p' "$work/demo.shown" > "$work/trace.txt"
awk '/^\$ \.\/train trace/ { print; next }
     /^\[1\] tokens/ { print; print "..."; next }
     /layer 1, head 1 of/ { h = 1; print; next }
     h && /^    query / { print; next }
     h && /^    q[047] / { print; if ($1 == "q7") { h = 0; print "..." } next }
     /^\[6\]/ { e = 1 }
     e && /as predict --probs prints it/ { exit }
     e' "$work/trace.txt" | fence > "$blocks/demo-trace"
# which key each query of layer 1, head 1 attends to most
read -r not_count queries < <(awk '/layer 1, head 1 of/ { h = 1; next } h && /^    q[0-9]+ / { n++; if ($0 ~ /top: not \(/) k++ }
    h && /^$/ { exit } END { print k + 0, n + 0 }' "$work/trace.txt")
cat > "$blocks/attention-note" <<EOF
With \`--png DIR\` it also draws every head's attention (rows: queries, columns:
keys) and the positional encoding. In the trained demo model, head 1 of layer 1
has learned to look at \`not\`, the word that decides the label: it is the most
attended key for $not_count of the $queries positions.
EOF
cp "$runs/demo/trace/attention_l1_h1.png" "$work/images/attention_l1_h1.png"

# ---- an untrained model: the classic 10 tokens x 512 dimensions
untrained=(./train trace --untrained --d-model 512 --heads 8 "the cat sat on the mat because it was tired")
"${untrained[@]}" --png "$runs/untrained" > "$work/untrained.txt"
{
    echo "$(typed "${untrained[@]}") --png runs/untrained" | fence
    awk '/^\[2\] input embeddings/ || /^\[3\] positional encoding/ || /^    PE\[pos, 2i\]/ || /^    PE\[1,[012]\]/' \
        "$work/untrained.txt" | fence
} > "$blocks/untrained-trace"
cp "$runs/untrained/positional_encoding_100.png" "$work/images/positional_encoding_100.png"

# ---- compare-pe: the same model with and without positional encoding
compare=(./train compare-pe data/negation/train.tsv --test data/negation/test.tsv --epochs 10)
"${compare[@]}" --out "$runs/negation-compare-pe" ${fresh[@]+"${fresh[@]}"} > "$work/compare.txt" 2>&1 \
    || { cat "$work/compare.txt"; exit 1; }
{
    typed "${compare[@]}"
    echo "..."
    grep -E '^final (validation|test) accuracy' "$work/compare.txt"
} | fence > "$blocks/compare-pe"
cp "$runs/negation-compare-pe/compare.png" "$work/images/compare_pe.png"
# what the numbers say, in words that follow them
none_val=$(sed -n 's/^final validation accuracy: .* PE, \([0-9.]*\) without.*/\1/p' "$work/compare.txt")
none_test=$(sed -n 's/^final test accuracy: .* PE, \([0-9.]*\) without.*/\1/p' "$work/compare.txt")
awk -v val="$none_val" -v test="$none_test" 'BEGIN {
    near = (test - 0.5 < 0.05 && 0.5 - test < 0.05)
    printf "Without positions the model is %s on the test set (%s)", near ? "at chance" : "at " test, test
    if (val < 0.45) {
        printf ", and below chance on validation (%s): each validation example has a twin\n", val
        printf "with the same words and the other label among the training examples, and a\n"
        printf "bag-of-words model learns the twin'"'"'s label."
    } else printf ", and at %s on validation.", val
    printf " (The pictures are `runs/demo/trace/attention_l1_h1.png`,\n"
    printf "`runs/untrained/positional_encoding_100.png` and `runs/negation-compare-pe/compare.png`.)\n" }' \
    | tr '\n' ' ' | fmt -w 80 -g 78 > "$blocks/compare-note"

# ---- trace --backward on the demo model: the walk's start, the live check and the saliency
backward=(./train trace --model "$runs/demo" --backward --label pos "the food was good , not bad")
"${backward[@]}" > "$work/backward.txt" 2>&1 || { cat "$work/backward.txt"; exit 1; }
{
    typed "${backward[@]}" | as_shown
    awk '/^\[7\] backward/ { p = 1 } /^\[7\.2\]/ { if (p) print "..."; p = 0 }
         /^\[7\.9\]/ { p = 1 } p' "$work/backward.txt" | as_shown
} | fence > "$blocks/demo-backward"

# ---- the seconds column is noise; everything else must match
mask() { awk -F'|' -v OFS='|' '/^ +[0-9]+ \|/ && NF >= 8 { $7 = " S " } /^ +[0-9]+ \|/ && NF == 6 { $4 = " S " } 1'; }
readme_block() { awk -v name="$1" '$0 == "<!-- end:" name " -->" { p = 0 } p; $0 == "<!-- begin:" name " -->" { p = 1 }' "$2"; }

if [ "$mode" = --check ]; then
    problems=0
    for readme in "${checked[@]}"; do
        for f in "$blocks"/*; do
            name=$(basename "$f")
            if ! grep -qx "<!-- begin:$name -->" "$readme"; then
                echo "$readme has no block '$name' (<!-- begin:$name --> ... <!-- end:$name -->)"
                problems=$((problems + 1))
            elif ! diff <(readme_block "$name" "$readme" | mask) <(mask < "$f") > "$work/diff.txt"; then
                echo "$readme block '$name' differs from what the commands print now (< README, > now):"
                sed 's/^/    /' "$work/diff.txt"
                problems=$((problems + 1))
            else
                echo "ok: $readme block '$name' ($(wc -l < "$f") lines) matches"
            fi
        done
    done
    for f in "$work/images"/*; do
        if cmp -s "$f" "docs/images/$(basename "$f")"; then
            echo "ok: docs/images/$(basename "$f") is what the commands draw"
        else
            echo "docs/images/$(basename "$f") differs from what the commands draw now"
            problems=$((problems + 1))
        fi
    done
    if [ "$problems" -gt 0 ]; then
        echo "$problems excerpt(s) or picture(s) drifted: run 'make docs' and commit README.md and docs/images"
        echo "(on another CPU or compiler the last digits of trained numbers may differ: see README, Reproducing a run)"
        exit 1
    fi
    echo "${checked[*]} excerpts and docs/images match the commands"
    exit 0
fi

# write: replace each block between its markers; copy the pictures
cp README.md "$work/README.md"
for f in "$blocks"/*; do
    name=$(basename "$f")
    grep -qx "<!-- begin:$name -->" "$work/README.md" || { echo "README.md has no block '$name'" >&2; exit 1; }
    awk -v name="$name" -v file="$f" '
        $0 == "<!-- begin:" name " -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
        $0 == "<!-- end:" name " -->" { skip = 0 }
        !skip' "$work/README.md" > "$work/README.new"
    mv "$work/README.new" "$work/README.md"
done
cp "$work/README.md" README.md
cp "$work/images"/*.png docs/images/
echo "rewrote $(ls "$blocks" | wc -l) blocks of README.md and $(ls "$work/images" | wc -l) pictures in docs/images"
