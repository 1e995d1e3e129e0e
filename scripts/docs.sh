#!/usr/bin/env bash
# docs.sh: the excerpts, pictures and claims of README.md and docs/*.md,
# generated from real runs so that they cannot drift from what the commands
# print.
#
#   scripts/docs.sh           (make docs) runs the commands, rewrites each
#                             marked block, <!-- begin:NAME --> ...
#                             <!-- end:NAME -->, of README.md and of every
#                             docs/*.md page that has one, and docs/images/
#   scripts/docs.sh --check [FILE...]
#                             runs them in a temporary directory and compares
#                             them with those pages (or each FILE) and
#                             docs/images: exit 1 naming each block or picture
#                             that differs (tests/test_docs.sh, in make test)
#
# A block that states something about a run's numbers (which head looks at
# `not`, which token has the largest saliency, accuracies, speeds) is written
# here from that run's output, and scripts/check-claims.sh then reads each
# such sentence back from the page and checks it against the output on its
# own, so a claim edited by hand fails even where no block is compared.
#
# Run-to-run noise is masked before comparing: the Seconds column of the
# epoch table, and the temporary directory the check runs in. Everything else
# is deterministic (same binary, data and seed: same numbers at any thread
# count), so any other difference means a page no longer shows what the
# command prints. Speeds are not measured here (`make bench` takes minutes
# and is noisy): they come from one recorded run, docs/bench/*.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-write}
case $mode in write | --check) ;; *) echo "usage: scripts/docs.sh [--check [FILE...]]" >&2; exit 2 ;; esac
shift || true
# the pages with generated blocks: README.md and each docs/*.md that has one
pages() { echo README.md; grep -l '^<!-- begin:' docs/*.md 2>/dev/null || true; }
checked=("$@")
[ ${#checked[@]} -gt 0 ] || mapfile -t checked < <(pages)
work=$(mktemp -d)
# DOCS_KEEP=DIR keeps the runs' output there (to run scripts/check-claims.sh DIR PAGE... by hand)
trap '[ -z "${DOCS_KEEP:-}" ] || { rm -rf "$DOCS_KEEP"; cp -r "$work" "$DOCS_KEEP"; }; rm -rf "$work"' EXIT
if [ "$mode" = --check ]; then runs=$work/runs; else runs=runs; fi
blocks=$work/blocks
mkdir -p "$runs" "$blocks" "$work/images"
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}   # other work on the machine: no spinning threads
export LC_ALL=C.UTF-8                                 # bpe pieces shown as the terminal shows them (▁the)
fresh=()
if grep -q -- '--overwrite' <<<"$(./train --help)"; then fresh=(--overwrite); fi
bench_record=$(ls docs/bench/[0-9]*.txt | tail -1)   # the latest dated make bench record

# Output as the pages show it: the check's temporary directory reads runs/.
as_shown() { sed "s|$runs/|runs/|g"; }
# A command as typed: arguments with spaces in double quotes.
typed() {
    local shown=() a
    for a in "$@"; do case $a in *' '*) shown+=("\"$a\"") ;; *) shown+=("$a") ;; esac; done
    echo "${shown[*]}"
}
fence() { echo '```'; cat; echo '```'; }
wrap() { tr '\n' ' ' | sed 's/  */ /g; s/ $//' | fmt -w 80 -g 78; }
# a bpe piece without its word-start mark, however the terminal showed it (▁the, _the, ?the)
piece_awk='function piece(t) { if (index(t, "▁") == 1) return substr(t, length("▁") + 1); if (t ~ /^[_?]./) return substr(t, 2); return t }'

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
sed -n '/^\$ \.\/train trace/,/^\$ \.\/train predict/p' "$work/demo.shown" > "$work/trace.txt"

# which heads make `not` the top key of the most queries (every layer and head counted)
read -r not_count queries not_layer not_head heads_said < <(awk "$piece_awk"'
    /^    layer [0-9]+, head [0-9]+ of [0-9]+: attention weights/ { h = ($2 + 0) " " ($4 + 0); order[++n] = h; next }
    h && /^    q[0-9]+ .*top: / { s = $0; sub(/.*top: /, "", s); sub(/ \(pos [0-9]+, .*/, "", s)
        q[h]++; if (piece(s) == "not") k[h]++ }
    END { best = 0; for (i = 1; i <= n; i++) if (k[order[i]] > best) best = k[order[i]]
        m = 0; for (i = 1; i <= n; i++) if (best > 0 && k[order[i]] == best) top[++m] = order[i]
        said = ""; for (i = 1; i <= m; i++) { split(top[i], lh, " ")
            said = said (i == 1 ? "" : i == m ? " and " : ", ") "head " lh[2] " of layer " lh[1] }
        print best, q[order[1]] + 0, top[1], said }' "$work/trace.txt")
[ "$not_count" -gt 0 ] || { echo "docs.sh: no head of the demo model makes 'not' its top key; rewrite the claim by hand" >&2; exit 1; }
{
    echo "In the model \`make demo\` trains, \`not\` (the word that decides the label) is"
    echo "the most attended key for $not_count of the $queries queries in $heads_said;"
    echo "no other head attends to it from as many. The picture is head $not_head of layer $not_layer, as"
    echo "\`trace --png\` draws it (rows: queries, columns: keys):"
} | wrap > "$blocks/attention-note"
printf '\n![layer %s, head %s of the demo model: every query looks at not](docs/images/attention_not.png)\n' \
    "$not_layer" "$not_head" >> "$blocks/attention-note"
cp "$runs/demo/trace/attention_l${not_layer}_h${not_head}.png" "$work/images/attention_not.png"

# trace: its command, then tokens, that head's weights for three queries, and the end
awk -v head="layer $not_layer, head $not_head of" '/^\$ \.\/train trace/ { print; next }
     /^\[1\] tokens/ { print; print "..."; next }
     index($0, head) { h = 1; print; next }
     h && /^    query / { print; next }
     h && /^    q[047] / { print; if ($1 == "q7") { h = 0; print "..." } next }
     /^\[6\]/ { e = 1 }
     e && /as predict --probs prints it/ { exit }
     e' "$work/trace.txt" | fence > "$blocks/demo-trace"

# ---- the film of the probes the demo recorded (./train film, the end of make demo)
awk '/^\$ \.\/train film/ { f = 1 } f' "$work/demo.shown" > "$work/film.txt"
cp "$runs/demo/probes.jsonl" "$work/probes.jsonl"    # for scripts/check-claims.sh, which derives the claim again from it
cp "$runs/demo/film.png" "$work/images/film.png"
# the command, probe 1's table cut to its first and last epochs, its moments, and the files written
awk '/^\$ \.\/train film/ || /^film of / { print; next }
     /^probe 1:/ { p = 1; print; next } /^probe [0-9]+:/ { p = 0; print "..."; next }
     p && /^epoch / { print; next }
     p && /^ +[0-9]+ / { n++; if (n <= 4) print; else last = $0; next }
     p && /^  epoch [0-9]+: / { if (last != "") print "...\n" last; last = ""; print; next }
     /^wrote / { print }' "$work/film.txt" | fence > "$blocks/demo-film"
# the first epoch of probe 1 at which some head gives `not` every query's largest weight (the film's
# moments say "(every query)"), those heads, the validation accuracy then, and the head the strip draws
read -r film_epoch film_acc film_heads < <(awk "$piece_awk"'
    /^probe 1:/ { p = 1; next } /^probe [0-9]+:/ { p = 0 }
    p && /^  epoch [0-9]+: / && !found { e = $2; sub(/:$/, "", e); s = $0; sub(/^  epoch [0-9]+: /, "", s)
        n = split(s, cl, "; "); heads = ""
        for (i = 1; i <= n; i++) { c = cl[i]
            if (c ~ /^val accuracy /) { acc = c; sub(/.* /, "", acc) }
            if (c !~ /weight to `[^`]+`$/) continue
            t = c; sub(/.*weight to `/, "", t); sub(/`$/, "", t); if (piece(t) != "not") continue
            while (match(c, /[0-9]+\.[0-9]+ \(every query\)/)) { h = substr(c, RSTART, RLENGTH); sub(/ .*/, "", h)
                heads = heads " " h; c = substr(c, RSTART + RLENGTH) } }
        if (heads != "") { found = 1; print e, acc heads } }' "$work/film.txt")
strip_head=$(sed -n 's/.*film\.png (head \([0-9]*\.[0-9]*\) on probe 1 .*/\1/p' "$work/film.txt")
probe_text=$(sed -n 's/^probe 1: "\(.*\)" (validation line .*/\1/p' "$work/film.txt")
[ -n "${film_heads:-}" ] && [ -n "$probe_text" ] \
    || { echo "docs.sh: the film names no head giving 'not' every query's weight on probe 1; rewrite the film note by hand" >&2; exit 1; }
[ " ${film_heads%% *}" = " $strip_head" ] \
    || { echo "docs.sh: film.png draws head $strip_head, the film note names $film_heads first; rewrite the note by hand" >&2; exit 1; }
read -r film_l film_h <<<"${strip_head/./ }"
last_epoch=$(awk '/^probe 1:/ { p = 1; next } /^probe [0-9]+:/ { p = 0 } p && /^ +[0-9]+ / { e = $1 } END { print e }' "$work/film.txt")
awk -v heads="$film_heads" -v text="$probe_text" -v e="$film_epoch" -v last="$last_epoch" -v acc="$film_acc" \
    -v l="$film_l" -v h="$film_h" 'BEGIN { n = split(heads, hs, " ")
    printf "On the first probe the run picked, \"%s\",", text
    for (i = 1; i <= n; i++) { split(hs[i], lh, "."); printf "%s head %s of layer %s", (i == 1 ? "" : i == n ? " and" : ","), lh[2], lh[1] }
    printf " %s in which every query gives `not` its largest weight, from epoch %s to the last (%s);", (n == 1 ? "is the first head" : "are the first heads"), e, last
    printf " validation accuracy was %s after epoch %s. The strip, `runs/demo/film.png`, is head %s of layer %s at each epoch:\n", acc, e, h, l }' \
| wrap > "$blocks/film-note"
printf '\n![layer %s, head %s on the first probe at each epoch: from epoch %s every query looks at not](docs/images/film.png)\n' \
    "$film_l" "$film_h" "$film_epoch" >> "$blocks/film-note"

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
compare=(./train compare-pe data/negation/train.tsv --test data/negation/test.tsv --epochs 10 --precision bf16)
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
awk -v val="$none_val" -v test="$none_test" -v pic="attention_l${not_layer}_h${not_head}.png" 'BEGIN {
    near = (test - 0.5 < 0.05 && 0.5 - test < 0.05)
    printf "Without positions the model is %s on the test set (%s)", near ? "at chance" : "at " test, test
    if (val < 0.45) {
        printf ", and below chance on validation (%s): each validation example has a twin\n", val
        printf "with the same words and the other label among the training examples, and a\n"
        printf "bag-of-words model learns the twin'"'"'s label."
    } else printf ", and at %s on validation.", val
    printf " (The pictures are `runs/demo/trace/%s`,\n", pic
    printf "`runs/untrained/positional_encoding_100.png` and `runs/negation-compare-pe/compare.png`.)\n" }' \
    | wrap > "$blocks/compare-note"

# ---- trace --backward on the demo model: the walk's start, the live check and the saliency
backward=(./train trace --model "$runs/demo" --backward --label pos "the food was good , not bad")
"${backward[@]}" > "$work/backward.txt" 2>&1 || { cat "$work/backward.txt"; exit 1; }
{
    typed "${backward[@]}" | as_shown
    awk '/^\[7\] backward/ { p = 1 } /^\[7\.2\]/ { if (p) print "..."; p = 0 }
         /^\[7\.9\]/ { p = 1 } p' "$work/backward.txt" | as_shown
} | fence > "$blocks/demo-backward"
# the live check: its worst error against the tolerance, and how far float32 follows double
awk '/^\[7\.9\]/ { c = 1 } /^\[7\.10\]/ { c = 0 }
     /loss = -log p\(/ { p = $NF; for (i = 1; i < NF; i++) if ($i == "-log" && $(i + 1) ~ /^[0-9]/) p = $(i + 1) }
     c && /within [0-9.e+-]+ relative/ { for (i = 1; i < NF; i++) if ($i == "within") tol = $(i + 1) }
     c && / ok$| FAIL$/ { n = NF; r = $(n - 1) + 0; if (r > worst) worst = r
         a = $(n - 4); b = $(n - 3); sub(/^[-+]/, "", a); sub(/^[-+]/, "", b); sub(/e.*/, "", a); sub(/e.*/, "", b)
         gsub(/\./, "", a); gsub(/\./, "", b); d = 0; while (d < length(a) && substr(a, d + 1, 1) == substr(b, d + 1, 1)) d++
         if (digits == "" || d < digits) digits = d }
     END { orders = int(log(tol / worst) / log(10)); printf "%.1e %s %d %d %s\n", worst, tol, orders, digits + 1, p }' \
    "$work/backward.txt" > "$work/check.vals"
read -r worst tol orders digit prob < "$work/check.vals"
{
    echo "The check is live: \`model.c\` and \`nn/layers.c\` are compiled into \`./train\` a"
    echo "second time with float meaning double (\`model/f64.c\`, as \`tests/test_f64_grad.c\` does),"
    echo "and for three weights chosen by \`--seed\` (one from each third of the tensors) and"
    echo "one input the double backward must match a central difference within the"
    echo "gradient test's $tol; the largest relative error here is $worst, $orders orders of magnitude inside."
    echo "The float32 gradient the trace itself computed is printed beside it: it"
    echo "differs from the double one from significant digit $digit on, because \`p - 1\` for p = $prob keeps few float bits."
} | wrap > "$blocks/check-note"
# the saliency: which token moves the prediction most, and which most toward and away from the label
awk "$piece_awk"'
    /^\[7\.10\] saliency/ { s = 1; l = $0; sub(/.*toward ./, "", l); sub(/.$/, "", l); next }
    s && /^ +[0-9]+\. pos [0-9]+ / { t = piece($4); v = $5 + 0; a = v < 0 ? -v : v
        if (a > big) { big = a; bt = t; bv = $5 } if (v > up) { up = v; ut = t; uv = $5 } if (v < down) { down = v; dt = t; dv = $5 } }
    END { printf "Here `%s` has the largest magnitude (%+.2e): scaling its input up would move\n", bt, bv
        printf "the prediction most, %s `%s`. ", (bv > 0 ? "toward" : "away from"), l
        if (ut != "") printf "`%s` pushes toward `%s` most (%+.2e)", ut, l, uv
        if (ut != "" && dt != "") printf " and "
        if (dt != "") printf "`%s` away from it most (%+.2e)", dt, dv
        print "." }' "$work/backward.txt" | wrap > "$blocks/saliency-note"

# ---- speeds: from the recorded make bench run
bench_table() { awk '/^config thr/ { p = 1 } p && /^$/ { exit } p' "$bench_record"; }
bench_table | fence > "$blocks/bench-table"
awk '/^ +T +batch/ { p = 1 } p && /^$/ { exit } p' "$bench_record" | fence > "$blocks/bench-length"
# the bfloat16 table (--precision bf16): the first whose header has "vs fp32" (the amx table's comes after it)
bf16_table() { awk '/^config thr.* vs fp32/ { p = 1 } p && /^$/ { exit } p' "$bench_record"; }
bf16_table | fence > "$blocks/bench-bf16-table"
{
    echo '| config | threads | tokens/s | % of the matmul peak | against PyTorch (fastest of three models) | bf16 tokens/s | bf16 against float32 | bf16 against PyTorch (fastest, float32 or autocast) |'
    echo '|---|---|---|---|---|---|---|---|'
    { bench_table | sed 's/^/F /'; bf16_table | sed 's/^/B /'; } | awk '
        $1 == "F" && $2 != "config" { k = $2 " " $3; order[++n] = k; f[k] = sprintf("| %s | %s | %s | %s | %s |", $2, $3, $5, $7, $NF) }
        $1 == "B" && $2 != "config" { b[$2 " " $3] = sprintf(" %s | %s | %s |", $5, $8, $NF) }
        END { for (i = 1; i <= n; i++) print f[order[i]] (order[i] in b ? b[order[i]] : " - | - | - |") }'
} > "$blocks/bench-summary"
# where the bf16 step's time goes: its linear layers timed alone and the rest, in both precisions
awk '/^Where the bf16 step/ { p = 1 } p && /^$/ { exit } p' "$bench_record" > "$work/split.txt"
[ -s "$work/split.txt" ] || echo "(not measured in this record: scripts/bench.sh prints it since 2026-11-27)" > "$work/split.txt"
fence < "$work/split.txt" > "$blocks/bench-split"
# the record's peaks and its inference lines, as it printed them
grep -E '^(matmul peak at|bf16 peak at|  loop beside it|  at .* thread\(s\) our linear layers)' "$bench_record" | fence > "$blocks/bench-peaks"
awk '/^Inference:/ { p = 1 } p' "$bench_record" | fence > "$blocks/bench-inference"
# bfloat16 against float32 and PyTorch, from the bf16 table and the inference lines
{ bf16_table; awk '/tokens\/s/ && /\.\/train predict/' "$bench_record"; } | awk '
    /^config thr/ { for (i = 1; i <= NF; i++) col[$i] = i; next }
    /\.\/train predict --precision bf16/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "tokens/s,") bt = $i; next }
    /\.\/train predict --precision/ { next }
    /\.\/train predict [0-9]/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "tokens/s,") ft = $i; next }
    { v = $(col["vs"]) + 0; r = $NF + 0; if (n++ == 0 || v < vl) vl = v; if (v > vh) vh = v
      if (n == 1 || r < rl) rl = r; if (r > rh) rh = r; vs[$1 " " $2] = v; rs[$1 " " $2] = r }
    END { inf = bt / ft
        printf "With `--precision bf16` the step ran %.2f-%.2f times as fast as in float32 (at 2 threads small %.2fx\n", vl, vh, vs["small 2"]
        printf "and wide %.2fx: target 1.8x, %s) and %.2f-%.2f times as fast as PyTorch'"'"'s fastest figure, float32\n", vs["wide 2"],
            (vs["small 2"] >= 1.8 && vs["wide 2"] >= 1.8 ? "met" : "not met"), rl, rh
        printf "or its own autocast bfloat16 (at 2 threads small %.2fx and wide %.2fx: target 4x, %s); inference\n", rs["small 2"], rs["wide 2"],
            (rs["small 2"] >= 4 && rs["wide 2"] >= 4 ? "met" : "not met")
        printf "in bfloat16 ran %.2fx as fast as in float32 (target 1.8x, %s).\n", inf, (inf >= 1.8 ? "met" : "not met") }' \
    | wrap > "$blocks/bench-bf16-note"
bench_table | awk 'NR > 1 { p = $6 + 0; r = $NF + 0; if (NR == 2 || p < pl) pl = p; if (p > ph) ph = p
        if (NR == 2 || r < rl) rl = r; if (r > rh) rh = r; tok[$1 " " $2] = $4 }
    END { printf "The training step ran at %d-%d%% of the machine'"'"'s float32 matrix-multiply peak and\n", pl, ph
        printf "%.2f-%.2f times as fast as the fastest PyTorch model of the same step; 2 threads made it\n", rl, rh
        printf "%.2fx (small) and %.2fx (wide) as fast as 1.\n", tok["small 2"] / tok["small 1"], tok["wide 2"] / tok["wide 1"] }' \
    | wrap > "$blocks/bench-note"
echo "$bench_record" > "$work/bench.path"
# the bench's targets that its tables decide: tiny against PyTorch, the fraction of the peak, long
# sequences, the speed-up from 1 to 2 threads
bench_table | awk 'NR > 1 { r[$1 " " $2] = $NF + 0; pk[$1 " " $2] = $6 + 0; tok[$1 " " $2] = $4 }
    function met(ok) { return ok ? "met" : "not met" }
    END { s1 = tok["small 2"] / tok["small 1"]; s2 = tok["wide 2"] / tok["wide 1"]
        printf "From the tables: tiny at 2 threads ran %.2fx as fast as PyTorch (target 3x: %s); small and wide\n", r["tiny 2"], met(r["tiny 2"] >= 3)
        printf "at 2 threads reached %d%% and %d%% of the peak (target 75%%: %s, %s);\n", pk["small 2"], pk["wide 2"], met(pk["small 2"] >= 75), met(pk["wide 2"] >= 75)
        printf "2 threads made small %.2fx and wide %.2fx as fast as 1 (target 1.8x: %s, %s)", s1, s2, met(s1 >= 1.8), met(s2 >= 1.8) }' \
    > "$work/targets.txt"
awk '/^ +T +batch/ { p = 1; next } p && /^$/ { exit } p { g[$1] = $6 } END { r = 100 * g[512] / g[64]
        printf "; and T = 512 made %d%% of the GFLOP/s of T = 64 (target 95%%: %s).\n", r, (r >= 95 ? "met" : "not met") }' \
    "$bench_record" >> "$work/targets.txt"
wrap < "$work/targets.txt" > "$blocks/bench-targets"

# ---- the Intel machine's make bench (not dated alone, so the tables above keep the AMD record): its
# training tables as printed (float32, bf16, amx), and how its steps compare with PyTorch's autocast (AMX)
intel_record=docs/bench/bench-intel-2026-11-29.txt
intel_tables() { awk '/^config thr/ { if (n++) print ""; p = 1 } p && !/^(config|tiny|small|wide) / { p = 0; if (n == 3) exit } p' "$intel_record"; }
intel_tables | fence > "$blocks/bench-intel-tables"
{ intel_tables; grep -E '^matmul peak at 2 thread' "$intel_record"; grep -A1 '^bf16 peak at 2 thread' "$intel_record"
  grep -E '^  \./train predict (--precision amx |[0-9])' "$intel_record"; } | awk '
    /^matmul peak/ { fp_peak = $6; next }
    /torch.mm in bfloat16/ { for (i = 1; i < NF; i++) if ($i == "bfloat16") bf_mm = $(i + 1) + 0 }
    /^(bf16 peak|  loop beside)/ { next }
    /\.\/train predict --precision amx/ { for (i = 1; i < NF; i++) if ($(i + 1) == "tokens/s,") pred_amx = $i; next }
    /\.\/train predict [0-9]/ { for (i = 1; i < NF; i++) if ($(i + 1) == "tokens/s,") pred_fp = $i; next }
    /^config thr/ { t++; next }
    NF == 0 { next }
    t == 1 && $2 == 2 { tok[$1] = $4; torch32[$1] = ($9 > $10 ? ($9 > $11 ? $9 : $11) : ($10 > $11 ? $10 : $11)) }
    t == 2 && $2 == 2 { ac[$1] = $8 > $9 ? $8 : $9 }
    t == 3 && $2 == 2 { amx[$1] = $4 }
    function best(c) { return ac[c] > torch32[c] ? ac[c] : torch32[c] }
    END { printf "Here the float32 step at 2 threads ran small at %d and wide at %d tokens/s:\n", tok["small"], tok["wide"]
        printf "%.2fx and %.2fx PyTorch'"'"'s fastest float32 figure, but %.2fx and %.2fx its fastest under autocast\n",
            tok["small"] / torch32["small"], tok["wide"] / torch32["wide"], tok["small"] / ac["small"], tok["wide"] / ac["wide"]
        printf "bfloat16, whose products oneDNN runs on AMX (torch.mm in bfloat16 reached %s GFLOP/s at 2 threads,\n", bf_mm
        printf "%.1f times the float32 peak of %s GFLOP/s).", bf_mm / fp_peak, fp_peak
        if ("small" in amx) {
            printf " With `--precision amx` the steps ran at %d and %d tokens/s: %.2fx and %.2fx float32'"'"'s,", amx["small"], amx["wide"],
                amx["small"] / tok["small"], amx["wide"] / tok["wide"]
            printf " %.2fx and %.2fx PyTorch'"'"'s fastest, float32 or autocast.", amx["small"] / best("small"), amx["wide"] / best("wide")
            for (i = 1; i <= 2; i++) { c = i == 1 ? "small" : "wide"; if (tok[c] > mine[c] + 0) mine[c] = tok[c]; if (amx[c] > mine[c]) mine[c] = amx[c] }
        } else { mine["small"] = tok["small"]; mine["wide"] = tok["wide"] }
        behind = (mine["small"] < ac["small"] ? "small" : "") (mine["small"] < ac["small"] && mine["wide"] < ac["wide"] ? " and " : "") (mine["wide"] < ac["wide"] ? "wide" : "")
        if (pred_amx != "" && pred_fp != "")
            printf " `./train predict` in amx answered %d tokens/s, %.2fx float32'"'"'s %d.", pred_amx, pred_amx / pred_fp, pred_fp
        if (behind != "") printf " On this CPU PyTorch under autocast trains the %s step faster than this project%s.", behind,
            ("small" in amx ? " in any precision" : " in float32")
        print "" }' \
    | wrap > "$blocks/bench-intel-note"

# ---- the MPI tables, from their record: memory per rank, the gradient sum, the projection to more machines
mpi_record=docs/bench/mpi.txt
record_table() { awk -v head="$1" '$0 ~ head { p = 1 } p && /^$/ { exit } p' "$mpi_record"; }
record_table '^[0-9]+ lines .*peak RSS' | fence > "$blocks/mpi-memory"
record_table '^ranks +floats' | fence > "$blocks/mpi-sum"
record_table '^config +ranks +Gbit' | fence > "$blocks/mpi-projection"
record_table '^run +peak' | awk '$1 == "1" && $2 == "process" { one = $(NF - 1) }
    $2 == "ranks" { n[++k] = $1; d[k] = $(NF - 1) }
    END { printf "Of one process'"'"'s %s MB of data, the largest rank held", one
        for (i = 1; i <= k; i++) printf "%s %s MB at %d ranks (an exact 1/%d: %.1f)", (i == 1 ? "" : (i == k ? " and" : ",")), d[i], n[i], n[i], one / n[i]
        print "." }' | wrap > "$blocks/mpi-memory-note"
record_table '^config +ranks +Gbit' | awk 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { pc = $(c["comm%"]) + 0; lat = int(100 * $(c["lat_ms"]) / $(c["step_ms"]) + 0.5); a4 = $(c["accum4"]) + 0; k = $(c["K(10%)"]) + 0
      if (a4 > acc4) acc4 = a4; if (k > kmax) kmax = k
      if ($1 == "small" && $2 <= 64 && pc > s64) s64 = pc
      if ($1 == "small" && $2 == 512) { if (sl == "" || lat < sl) sl = lat; if (lat > sh) sh = lat }
      if ($1 == "wide" && $3 == 10) { if (wl == "" || pc < wl) wl = pc; if (pc > wh) wh = pc }
      if ($1 == "wide" && $3 == 100 && $2 <= 64 && pc > w64) w64 = pc
      if ($1 == "wide" && $3 == 100 && $2 == 512) { w512 = pc; w512l = lat } }
    function span(lo, hi) { return lo == hi ? lo "%" : lo "-" hi "%" }
    END { printf "small communicates at most %d%% of the step up to 64 ranks on either link, and at 512 ranks\n", s64
        printf "latency alone makes %s of it. Wide on 10 Gbit/s spends %s of the step communicating;\n", span(sl, sh), span(wl, wh)
        printf "on 100 Gbit/s at most %d%% up to 64 ranks, and %d%% at 512 ranks, of which latency %d%%.\n", w64, w512, w512l
        printf "K = 4 brings every case of the table to %d%% or less, and K = %d (the largest K(10%%)) to 10%% or less.\n", acc4, kmax }' \
    | wrap > "$blocks/mpi-projection-note"
echo "$mpi_record" > "$work/mpi.path"

# ---- the seconds column is noise; everything else must match
mask() { awk -F'|' -v OFS='|' '/^ +[0-9]+ \|/ && NF >= 8 { $7 = " S " } /^ +[0-9]+ \|/ && NF == 6 { $4 = " S " } 1'; }
page_block() { awk -v name="$1" '$0 == "<!-- end:" name " -->" { p = 0 } p; $0 == "<!-- begin:" name " -->" { p = 1 }' "$2"; }
claims() { bash scripts/check-claims.sh "$work" "$@"; }

if [ "$mode" = --check ]; then
    problems=0
    for page in "${checked[@]}"; do
        for name in $(sed -n 's/^<!-- begin:\(.*\) -->$/\1/p' "$page"); do
            if [ ! -f "$blocks/$name" ]; then
                echo "$page block '$name' is made by no command of scripts/docs.sh"
                problems=$((problems + 1))
            elif ! diff <(page_block "$name" "$page" | mask) <(mask < "$blocks/$name") > "$work/diff.txt"; then
                echo "$page block '$name' differs from what the commands print now (< page, > now):"
                sed 's/^/    /' "$work/diff.txt"
                problems=$((problems + 1))
            else
                echo "ok: $page block '$name' ($(wc -l < "$blocks/$name") lines) matches"
            fi
        done
    done
    for f in "$blocks"/*; do
        name=$(basename "$f")
        grep -qx "<!-- begin:$name -->" "${checked[@]}" \
            || { echo "no page checked has the block '$name' (<!-- begin:$name --> ... <!-- end:$name -->)"; problems=$((problems + 1)); }
    done
    for f in "$work/images"/*; do
        if cmp -s "$f" "docs/images/$(basename "$f")"; then
            echo "ok: docs/images/$(basename "$f") is what the commands draw"
        else
            echo "docs/images/$(basename "$f") differs from what the commands draw now"
            problems=$((problems + 1))
        fi
    done
    claims "${checked[@]}" || problems=$((problems + 1))
    if [ "$problems" -gt 0 ]; then
        echo "$problems excerpt(s), picture(s) or claim check(s) failed: run 'make docs' and commit the pages and docs/images"
        echo "(on another CPU or compiler the last digits of trained numbers may differ: see docs/FAILURES.md, Reproducing a run)"
        exit 1
    fi
    echo "${checked[*]}: excerpts, claims and docs/images match the commands"
    exit 0
fi

# write: replace each block between its markers in the page that has it; copy the pictures
mapfile -t written < <(pages)
for f in "$blocks"/*; do
    name=$(basename "$f")
    page=$(grep -lx "<!-- begin:$name -->" "${written[@]}" | head -1) || true
    [ -n "$page" ] || { echo "no page has the block '$name' (<!-- begin:$name --> ... <!-- end:$name -->)" >&2; exit 1; }
    awk -v name="$name" -v file="$f" '
        $0 == "<!-- begin:" name " -->" { print; while ((getline line < file) > 0) print line; skip = 1; next }
        $0 == "<!-- end:" name " -->" { skip = 0 }
        !skip' "$page" > "$work/page.new"
    cat "$work/page.new" > "$page"
done
cp "$work/images"/*.png docs/images/
claims "${written[@]}"
echo "rewrote $(ls "$blocks" | wc -l) blocks of ${written[*]} and $(ls "$work/images" | wc -l) pictures in docs/images"
