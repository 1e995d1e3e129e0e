#!/usr/bin/env bash
# check-data.sh: `make check-data`: trains on every dataset with the
# documented configs, with and without positional encoding, and checks the
# quality bar of data/README.md on the test splits. Every real dataset is
# trained twice: with the defaults (no option but --test) and with its best
# documented options; the defaults must reach the bars of issue 14. Builds the
# real data first (`make data`); skips it with a message where the packages
# cannot be fetched. Writes build/check-data/results.md and one run directory
# and log per run under build/check-data. Exits non-zero on a miss.
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/check-data
mkdir -p "$out"
failures=0
results="$out/results.md"
printf '| dataset | options | test accuracy | check | seconds |\n|---|---|---|---|---|\n' > "$results"
total_start=$SECONDS
total_cpu=0

have_real=1
for name in digits langid wordnet fortunes debdesc manpara mannames sentlang; do
    [ -s "data/$name/train.tsv" ] && continue
    bash scripts/get-data.sh
    rc=$?
    if [ $rc -eq 3 ]; then
        echo "skip: the real datasets could not be fetched (Debian packages unavailable); checking synthetic data only"
        have_real=0
    elif [ $rc -ne 0 ]; then
        echo "error: scripts/get-data.sh failed ($rc)"; exit 1
    fi
    break
done

# section field: the accuracy (or a class's recall) in report.txt's test section
test_accuracy() { awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$1/report.txt" 2>/dev/null; }
test_recall() { awk -v c="$2" '/^test \(/ { t = 1 } t && $1 == c && NF == 5 { print $3; exit }' "$1/report.txt" 2>/dev/null; }

declare -A seconds
check() {  # name value op bound description [run: its time goes in the table]
    local ok
    ok=$(awk -v v="$2" -v b="$4" -v op="$3" 'BEGIN { if (v == "") print "MISS"; else print (op == ">=" ? v >= b : v <= b) ? "ok" : "MISS" }')
    [ "$ok" = ok ] || failures=$((failures + 1))
    printf '%-50s %-8s (%s %s %s)\n' "$1" "${2:-none}" "$ok:" "$3" "$4"
    printf '| %s | %s | %s | %s %s %s | %s |\n' "${1%% *}" "$5" "${2:-none}" "$ok:" "$3" "$4" "${6:+${seconds[$6]:-}}" >> "$results"
}

# The documented runs were measured with the defaults before bpe, --max-len
# auto, lr 3e-3, weight decay 0.1 and weight averaging (issue 14) became the
# defaults; they keep those settings, and the defaults runs below show what
# the new defaults give.
MEASURED=(--tokenizer word --vocab-size 10000 --lr 1e-3 --weight-decay 0.01 --swa 0)

run() {  # name data-dir options...
    local name=$1 dir=$2; shift 2
    local rc wall cpu
    rm -rf "${out:?}/$name"
    # wall and CPU time (user + system, all threads): on a shared machine the
    # CPU time says more about what the run costs
    { TIMEFORMAT='%R %U %S'; time ./train "data/$dir/train.tsv" --test "data/$dir/test.tsv" --out "$out/$name" --quiet "$@" \
        > "$out/$name.log" 2>&1; } 2> "$out/$name.time"
    rc=$?
    [ $rc -eq 0 ] || { echo "error: $name failed ($rc):"; tail -n 5 "$out/$name.log"; failures=$((failures + 1)); }
    read -r wall cpu <<<"$(awk 'NF == 3 { printf "%.0f %.0f", $1, $2 + $3 }' "$out/$name.time")"
    wall=${wall:-?} cpu=${cpu:-0}
    seconds[$name]="$wall (CPU $cpu)"
    total_cpu=$((total_cpu + cpu))
    echo "  ($name: $wall s, CPU $cpu s)"
}

# The defaults run of a real dataset: no option but --test (and where its
# output goes). Says which tokenizer and max-len the defaults were.
run_defaults() {  # dataset
    run "$1-defaults" "$1"
    local opts
    # run.json keeps numbers bare and strings quoted: "epochs": 30, "max-len": "auto"
    opts=$(awk -F'"' '$2 == "tokenizer" || $2 == "max-len" || $2 == "epochs" || $2 == "d-model" || $2 == "weight-decay" ||
               $2 == "bpe-dropout" || $2 == "swa" || $2 == "cycle" {
               v = $3; sub(/^: */, "", v); sub(/,? *$/, "", v); if (v == "") v = $4
               printf "%s%s %s", sep, $2, v; sep = ", " }' \
        "$out/$1-defaults/run.json" 2>/dev/null)
    echo "  (defaults: ${opts:-unknown})"
}


echo "== negation and before: order decides, so no positions means chance"
for ds in negation before; do
    run "$ds-pe" "$ds" "${MEASURED[@]}" --epochs 10
    run "$ds-nope" "$ds" "${MEASURED[@]}" --epochs 10 --pe none
    check "$ds with sinusoidal PE" "$(test_accuracy "$out/$ds-pe")" ">=" 0.97 "--epochs 10" "$ds-pe"
    check "$ds with --pe none" "$(test_accuracy "$out/$ds-nope")" "<=" 0.6 "--epochs 10 --pe none" "$ds-nope"
done

echo "== rare: 97/3, the minority is an ordered pattern"
run rare-plain rare "${MEASURED[@]}" --epochs 3
run rare-balanced rare "${MEASURED[@]}" --epochs 30 --dropout 0 --class-weights balanced
# the trap: after 3 unweighted epochs accuracy looks fine while the minority is missed, and the report says so
check "rare unweighted, 3 epochs: accuracy" "$(test_accuracy "$out/rare-plain")" ">=" 0.96 "--epochs 3" rare-plain
check "rare unweighted, 3 epochs: rare recall" "$(test_recall "$out/rare-plain" rare)" "<=" 0.2 "--epochs 3"
if grep -q "^! class 'rare': recall" "$out/rare-plain/report.txt"; then echo "rare unweighted: the report flags the low recall"
else echo "MISS: the unweighted rare report does not flag the low recall"; failures=$((failures + 1)); fi
check "rare balanced: rare recall" "$(test_recall "$out/rare-balanced" rare)" ">=" 0.9 "--epochs 30 --dropout 0 --class-weights balanced" rare-balanced
echo "  the unweighted report (the accuracy-vs-recall trap is flagged under it):"
sed -n '/^test (/,/^Confusion/p' "$out/rare-plain/report.txt" | sed 's/^/    /'

if [ $have_real -eq 1 ]; then
    echo "== digits: 64 pixel tokens; without positions only a bag of intensities"
    DIGITS=(--epochs 40 --max-len 66)
    run digits-pe digits "${MEASURED[@]}" "${DIGITS[@]}"
    run digits-nope digits "${MEASURED[@]}" "${DIGITS[@]}" --pe none
    run_defaults digits
    check "digits with sinusoidal PE" "$(test_accuracy "$out/digits-pe")" ">=" 0.95 "${DIGITS[*]}" digits-pe
    check "digits with --pe none" "$(test_accuracy "$out/digits-nope")" "<=" 0.4 "${DIGITS[*]} --pe none" digits-nope
    # the defaults' seed spread on digits is 0.93-0.96 (seeds 42, 1, 2, 3: 0.9276 0.9638 0.9471 0.9638, data/README.md):
    # the bar sits under it, so that it fails on a regression and not on a draw
    check "digits defaults" "$(test_accuracy "$out/digits-defaults")" ">=" 0.92 "(defaults)" digits-defaults

    echo "== langid: 12 languages, characters"
    LANGID=(--tokenizer char --max-len 24 --epochs 30 --lr 1e-3 --d-model 128 --d-ff 512)
    run langid-pe langid "${MEASURED[@]}" "${LANGID[@]}"
    run langid-nope langid "${MEASURED[@]}" "${LANGID[@]}" --pe none
    run_defaults langid
    pe=$(test_accuracy "$out/langid-pe"); nope=$(test_accuracy "$out/langid-nope")
    check "langid with sinusoidal PE" "$pe" ">=" 0.80 "${LANGID[*]}" langid-pe
    check "langid PE minus --pe none" "$(awk -v a="$pe" -v b="$nope" 'BEGIN { if (a != "" && b != "") printf "%.4f", a - b }')" \
        ">=" 0.02 "(same, --pe none: ${nope:-none})" langid-nope
    # the defaults' seed spread on langid is 0.799-0.807 (float32 seeds 42, 1, 2, 3: 0.8026 0.8048 0.8043
    # 0.8023; bfloat16, the default on AMD's AVX-512 BF16: 0.7992 0.8072 0.8048 0.7994, data/README.md):
    # the bar sits under it, as digits' does
    check "langid defaults" "$(test_accuracy "$out/langid-defaults")" ">=" 0.79 "(defaults)" langid-defaults

    # wordnet and fortunes: the defaults must reach fastText with its defaults
    # (measured here when fasttext is installed, else the numbers recorded in
    # data/README.md) and come within 0.01 of the best documented options.
    declare -A fasttext_recorded=([wordnet]=0.8100 [fortunes]=0.3940)
    # the best of what was tried (data/README.md lists the runs); wordnet's
    # is bpe with a wider model, so it does not take MEASURED's word tokenizer
    declare -A best_options=(
        [wordnet]="--tokenizer bpe --vocab-size 2000 --d-model 128 --d-ff 512 --lr 1e-3 --weight-decay 0.1 --epochs 20"
        [fortunes]="--max-len 128 --epochs 10 --dropout 0.3"
    )
    declare -A best_bar=([wordnet]=0.87 [fortunes]=0.62)   # a little under what they reach
    declare -A describe=(
        [wordnet]="WordNet definition -> part of speech (4 classes)"
        [fortunes]="fortune quote -> fortune file (7 classes)"
    )
    for ds in wordnet fortunes; do
        echo "== $ds: ${describe[$ds]}"
        read -r -a opts <<<"${best_options[$ds]}"
        run "$ds-best" "$ds" "${MEASURED[@]}" "${opts[@]}"
        run_defaults "$ds"
        ft=${fasttext_recorded[$ds]} ft_from="recorded in data/README.md"
        if command -v fasttext >/dev/null; then
            start=$SECONDS
            if FASTTEXT_THREADS=1 bash scripts/fasttext-baseline.sh --defaults "$ds" > "$out/fasttext-$ds.log" 2>&1; then
                ft=$(awk -F' *[|] *' -v d="$ds" '$2 == d && $3 == "(defaults)" { print $6 }' "$out/fasttext-$ds.log")
                ft_from="measured now, $((SECONDS - start)) s"
            else
                echo "  fasttext failed (see $out/fasttext-$ds.log); using the recorded number"
            fi
        fi
        echo "  fastText with its defaults: $ft ($ft_from)"
        best=$(test_accuracy "$out/$ds-best"); def=$(test_accuracy "$out/$ds-defaults")
        check "$ds best options" "$best" ">=" "${best_bar[$ds]}" "${best_options[$ds]}" "$ds-best"
        check "$ds defaults vs fastText defaults" "$def" ">=" "$ft" "(defaults; bar: fastText defaults)" "$ds-defaults"
        check "$ds defaults vs best options - 0.01" "$def" ">=" \
            "$(awk -v b="$best" 'BEGIN { if (b != "") printf "%.4f", b - 0.01 }')" "(defaults; bar: best options - 0.01)" "$ds-defaults"
    done
fi

if [ $have_real -eq 1 ]; then
    # The further sets (issue 41): the defaults against a bar a little under the
    # lowest of 3 seeds in data/README.md's table; fastText's best there is
    # printed beside it (its autotune takes 2 minutes a set, too long for CI).
    declare -A further_bar=([debdesc]=0.68 [manpara]=0.70 [mannames]=0.60 [sentlang]=0.91)
    declare -A fasttext_best=([debdesc]=0.6870 [manpara]=0.7070 [mannames]=0.6670 [sentlang]=0.8900)
    for ds in debdesc manpara mannames sentlang; do
        echo "== $ds: defaults (a set the defaults were not tuned on)"
        run_defaults "$ds"
        echo "  fastText's best of four (data/README.md): ${fasttext_best[$ds]}"
        check "$ds defaults" "$(test_accuracy "$out/$ds-defaults")" ">=" "${further_bar[$ds]}" "(defaults)" "$ds-defaults"
    done
fi

echo "== pretrain + fine-tune against scratch with 10% of the labels (langid words, 3 seeds; issue 19)"
start=$SECONDS
bash scripts/pretrain-check.sh "$out/pretrain" > "$out/pretrain.log" 2>&1
case $? in 0) pre_ok=ok ;; 3) pre_ok=skip ;; *) pre_ok=MISS ;; esac
gain=$(awk '/^mean gain/ { print $6 }' "$out/pretrain.log")
if [ "$pre_ok" = skip ]; then
    echo "skip: $(head -1 "$out/pretrain.log")"
else
    printf '%-50s %-8s (%s >= 5 points)\n' "langid: pretrained minus scratch" "${gain:-?}" "$pre_ok:"
    printf '| langid | pretrain on all texts, fine-tune on 10%% | %s points | %s: >= 5 | %s |\n' "${gain:-?}" "$pre_ok" \
        "$((SECONDS - start))" >> "$results"
    echo "  (pretrain: $((SECONDS - start)) s; table in $out/pretrain/table.md)"
fi
# the bar of issue 19 is met (data/README.md), so a miss fails the check
[ "$pre_ok" = MISS ] && failures=$((failures + 1))

echo
cat "$results"
echo
echo "check-data: $((SECONDS - total_start)) s in all; the training runs took $total_cpu CPU seconds"
[ "$failures" -eq 0 ] && echo "check-data: every check passed" || echo "check-data: $failures checks missed"
[ "$failures" -eq 0 ]
