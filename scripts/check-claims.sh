#!/usr/bin/env bash
# check-claims.sh: reads back each sentence of README.md and docs/*.md that
# states a run's numbers (the blocks scripts/docs.sh writes), and checks it
# against the run's output on its own: it parses the claim from the page's
# words, derives the fact again from the output (the attention weights, not
# the `top:` column; the saliency list; the accuracies; the bench record),
# and fails naming both when they disagree. So a claim edited by hand, or
# one whose run changed, fails here even where no excerpt is compared.
#
#   scripts/check-claims.sh DIR PAGE...
#     DIR: what scripts/docs.sh left of the runs: demo.shown (make demo's
#     output), trace.txt, backward.txt, compare.txt, bench.path, probes.jsonl
#     (runs/demo's probe record)
# Exit 1 when a claim is false or cannot be read; prints one line per claim.
set -uo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/check-claims.sh DIR PAGE..." >&2; exit 2; }
dir=$1
shift
bad=0
said() { echo "ok: $page claim '$1': $2"; }
false_claim() { echo "$page claim '$1' is false: $2"; bad=$((bad + 1)); }
# NAME, what the page says, what the output gives, the fields: ok when the two are the same
verdict() { if [ "$2" = "$3" ]; then said "$1" "$2 [$4]"; else false_claim "$1" "it says ($2); the output gives ($3) [$4]"; fi; }
# a block's words on one line
block_text() { awk -v name="$1" '$0 == "<!-- end:" name " -->" { p = 0 } p; $0 == "<!-- begin:" name " -->" { p = 1 }' "$page" | tr '\n' ' ' | sed 's/  */ /g'; }
piece_awk='function piece(t) { if (index(t, "▁") == 1) return substr(t, length("▁") + 1); if (t ~ /^[_?]./) return substr(t, 2); return t }'

# For TOKEN: per head, how many queries give it their largest weight, taken
# from the weights themselves (key j is the token of query j); prints the
# largest count, the queries per head, and "layer:head" of each head with it.
attention_top() {
    awk -v want="$1" "$piece_awk"'
        function flush() { for (i = 0; i < q[h]; i++) if (tok[top[h, i]] == want) k[h]++; h = "" }
        /^    layer [0-9]+, head [0-9]+ of [0-9]+: attention weights/ { flush(); h = ($2 + 0) ":" ($4 + 0); order[++n] = h; nq = 0; next }
        h && /^    q[0-9]+ / { split($0, side, "|"); tok[nq] = piece($2); w = split(side[2], wt, " ")
            best = 1; for (j = 2; j <= w; j++) if (wt[j] + 0 > wt[best] + 0) best = j
            top[h, nq] = best - 1; nq++; q[h] = nq }
        h && /^$/ { flush() }
        END { if (h != "") flush()
            m = 0; for (i = 1; i <= n; i++) if (k[order[i]] > m) m = k[order[i]]
            s = ""; for (i = 1; i <= n; i++) if (m > 0 && k[order[i]] == m) s = s " " order[i]
            print m, q[order[1]] + 0 s }' "$dir/trace.txt"
}

check_attention() {
    local text claim_tok n of heads_txt want got pic
    text=$(block_text attention-note)
    local re='`([^`]+)` \(the word that decides the label\) is the most attended key for ([0-9]+) of the ([0-9]+) queries in (.*); no other head'
    [[ $text =~ $re ]] || { false_claim attention-note "cannot read which token, how many queries and which heads"; return; }
    claim_tok=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} of=${BASH_REMATCH[3]} heads_txt=${BASH_REMATCH[4]}
    want="$n $of$(grep -oE 'head [0-9]+ of layer [0-9]+' <<<"$heads_txt" | awk '{ printf " %s:%s", $5, $2 }')"
    got=$(attention_top "$claim_tok")
    if [ "$want" != "$got" ]; then
        false_claim attention-note "it says \`$claim_tok\` is the top key of ($want) [count, queries, layer:head...]; the weights give ($got)"
        return
    fi
    local heads=${got#* * }
    pic=$(grep -oE 'The picture is head [0-9]+ of layer [0-9]+' <<<"$text" | awk '{ print $8 ":" $5 }')
    alt=$(grep -oE '!\[layer [0-9]+, head [0-9]+ ' <<<"$text" | tr -d '![,' | awk '{ print $2 ":" $4 }')
    if ! grep -qw -- "${pic:-none}" <<<"$heads"; then
        false_claim attention-note "the picture is said to be layer:head ${pic:-(none named)}, not one of the heads ($heads)"
    elif [ "$alt" != "$pic" ]; then
        false_claim attention-note "the picture's caption names layer:head $alt, the text $pic"
    else
        said attention-note "\`$claim_tok\` is the top key of $n of $of queries in layer:head $heads"
    fi
}

check_saliency() {
    local text re tok val dir_word label ut uv dt dv got
    text=$(block_text saliency-note)
    re='Here `([^`]+)` has the largest magnitude \(([-+0-9.e]+)\): scaling its input up would move the prediction most, (toward|away from) `([^`]+)`\. (`([^`]+)` pushes toward `[^`]+` most \(([-+0-9.e]+)\))?( and )?(`([^`]+)` away from it most \(([-+0-9.e]+)\))?\.'
    [[ $text =~ $re ]] || { false_claim saliency-note "cannot read which token has the largest saliency"; return; }
    tok=${BASH_REMATCH[1]} val=${BASH_REMATCH[2]} dir_word=${BASH_REMATCH[3]} label=${BASH_REMATCH[4]}
    ut=${BASH_REMATCH[6]} uv=${BASH_REMATCH[7]} dt=${BASH_REMATCH[10]} dv=${BASH_REMATCH[11]}
    got=$(awk "$piece_awk"'
        /^\[7\.10\] saliency/ { s = 1; l = $NF; gsub(/\047/, "", l); next }
        s && /^    in the text.s order:/ { s = 0 }
        s && /^ +[0-9]+\. pos [0-9]+ / { t = piece($4); v = $5 + 0; a = v < 0 ? -v : v
            if (a > big) { big = a; bt = t; bv = v } if (v > up) { up = v; ut = t } if (v < down) { down = v; dt = t } }
        END { printf "%s %+.2e %s %s %s %+.2e %s %+.2e\n", bt, bv, (bv > 0 ? "toward" : "away-from"), l, ut, up, dt, down }' "$dir/backward.txt")
    local want
    want=$(printf '%s %+.2e %s %s %s %+.2e %s %+.2e' "$tok" "$val" "${dir_word/ /-}" "$label" "$ut" "${uv:-0}" "$dt" "${dv:-0}")
    verdict saliency-note "$want" "$got" "largest |saliency|, its value, direction, label, most toward, value, most away, value"
}

check_live_check() {
    local text re got
    text=$(block_text check-note)
    re="within the gradient test's ([0-9.e+-]+); the largest relative error here is ([0-9.e+-]+), ([0-9]+) orders of magnitude inside\. .* differs from the double one from significant digit ([0-9]+) on, because \`p - 1\` for p = ([0-9.]+) keeps"
    [[ $text =~ $re ]] || { false_claim check-note "cannot read the tolerance, the largest error, the digit and p"; return; }
    local want="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]}"
    # worst error from the rel. err column; the digit from comparing each row's float and double gradients
    got=$(awk '/^\[7\.9\]/ { c = 1 } /^\[7\.10\]/ { c = 0 }
        /^    loss = -log p\(/ { split($0, f, "-log "); split(f[3], g, " "); p = g[1] }
        c && /must agree within/ { for (i = 1; i < NF; i++) if ($i == "within") tol = $(i + 1) }
        c && / (ok|FAIL)$/ { r = $(NF - 1) + 0; if (r > worst) worst = r
            x = sprintf("%.6e", $(NF - 4) < 0 ? -$(NF - 4) : $(NF - 4)); y = sprintf("%.6e", $(NF - 3) < 0 ? -$(NF - 3) : $(NF - 3))
            d = 0; if (substr(x, 9) == substr(y, 9)) {   # same exponent: count the equal leading digits
                x = substr(x, 1, 1) substr(x, 3, 6); y = substr(y, 1, 1) substr(y, 3, 6)
                while (d < 7 && substr(x, d + 1, 1) == substr(y, d + 1, 1)) d++ }
            if (first == "" || d < first) first = d }
        END { o = 0; while (worst * 10 ^ (o + 1) <= tol) o++
            printf "%s %.1e %d %d %s", tol, worst, o, first + 1, p }' "$dir/backward.txt")
    verdict check-note "$want" "$got" "tolerance, worst error, orders inside, first differing digit, p"
}

check_compare() {
    local text re val test got
    text=$(block_text compare-note)
    re='Without positions the model is (at chance|at [0-9.]+) on the test set \(([0-9.]+)\), and (below chance on validation|at [0-9.]+ on validation)( \(([0-9.]+)\))?'
    [[ $text =~ $re ]] || { false_claim compare-note "cannot read the test and validation accuracies without positions"; return; }
    local t_word=${BASH_REMATCH[1]} t=${BASH_REMATCH[2]} v_word=${BASH_REMATCH[3]} v=${BASH_REMATCH[5]}
    [ -n "$v" ] || v=$(grep -oE '[0-9.]+' <<<"$v_word")
    read -r val test < <(awk '/^final validation accuracy:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "without") v = $i }
        /^final test accuracy:/ { for (i = 1; i < NF; i++) if ($(i + 1) == "without") t = $i } END { print v, t }' "$dir/compare.txt")
    local problems=""
    [ "$t" = "$test" ] || problems+=" test accuracy $t, the run $test;"
    [ "$v" = "$val" ] || problems+=" validation accuracy $v, the run $val;"
    # chance on two balanced classes is 0.5: "at chance" within 0.05 of it, "below chance" under 0.45
    if [ "$t_word" = "at chance" ]; then awk -v a="$test" 'BEGIN { exit !(a > 0.45 && a < 0.55) }' || problems+=" 'at chance' with $test;"; fi
    if [ "$v_word" = "below chance on validation" ]; then awk -v a="$val" 'BEGIN { exit !(a < 0.45) }' || problems+=" 'below chance' with $val;"; fi
    if [ -z "$problems" ]; then said compare-note "without PE: test $test ($t_word), validation $val"
    else false_claim compare-note "it says${problems%;}"; fi
}

check_demo_then() {
    local text re got_e got_a
    text=$(block_text demo-then)
    re='^\(([0-9]+) epochs\).*\(test accuracy ([0-9.]+)\)'
    [[ $text =~ $re ]] || { false_claim demo-then "cannot read the epochs and the test accuracy"; return; }
    got_e=$(grep -cE '^ +[0-9]+ \| ' "$dir/demo.shown")
    got_a=$(awk '/^test \(/ { t = 1 } t && $1 == "accuracy" { print $2; exit }' "$dir/demo.shown")
    verdict demo-then "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}" "$got_e $got_a" "epochs, test accuracy"
}

check_bench() {
    local text re record got
    text=$(block_text bench-note)
    re='ran at ([0-9]+)-([0-9]+)% of .* peak and ([0-9.]+)-([0-9.]+) times as fast as the fastest PyTorch .*; 2 threads made it ([0-9.]+)x \(small\) and ([0-9.]+)x \(wide\)'
    [[ $text =~ $re ]] || { false_claim bench-note "cannot read the peak fractions, the ratios and the speed-ups"; return; }
    local want="${BASH_REMATCH[1]} ${BASH_REMATCH[2]} ${BASH_REMATCH[3]} ${BASH_REMATCH[4]} ${BASH_REMATCH[5]} ${BASH_REMATCH[6]}"
    record=$(cat "$dir/bench.path")
    # from the columns by their names, and the ratio made again from the tokens/s columns
    got=$(awk '/^config thr/ { for (i = 1; i <= NF; i++) col[$i] = i; p = 1; next } p && /^$/ { exit }
        p { pk = $(col["%peak"]) + 0; tp = $(col["tokens/s"]); fast = 0
            for (i = col["limit_MB"] + 1; i < NF; i++) if ($i + 0 > fast) fast = $i + 0
            r = tp / fast; if (n++ == 0 || pk < pl) pl = pk; if (pk > ph) ph = pk
            if (n == 1 || r < rl) rl = r; if (r > rh) rh = r; tok[$1 " " $2] = tp }
        END { printf "%d %d %.2f %.2f %.2f %.2f", pl, ph, rl, rh, tok["small 2"] / tok["small 1"], tok["wide 2"] / tok["wide 1"] }' "$record")
    verdict bench-note "$want" "$got" "% of the peak low, high, ratio low, high, speed-up small, wide; from $record"
}

# the bfloat16 sentence: its numbers and verdicts in order, made again from
# the bf16 table's tokens/s against the float32 table's and PyTorch's
# columns (not its own ratio columns), and from the two inference lines
check_bf16() {
    local text record want got
    text=$(block_text bench-bf16-note)
    want=$(grep -oE 'target [0-9.]+x|not met|met|[0-9]+\.[0-9]+' <<<"$text" | sed 's/ /-/' | paste -sd' ')
    record=$(cat "$dir/bench.path")
    got=$(awk 'function v(ok) { return ok ? "met" : "not-met" }
        function fastest(from, to,   i, f) { f = 0; for (i = from; i <= to; i++) if ($i + 0 > f) f = $i + 0; return f }
        /^config thr/ && ++table == 1 { p = 1; next } /^config thr/ && table == 2 { q = 1; next } /^$/ { p = q = 0 }
        p { tok[$1 " " $2] = $4; torch[$1 " " $2] = fastest(9, NF - 1) }
        q { k = $1 " " $2; vs = sprintf("%.2f", $4 / tok[k]) + 0; f = fastest(8, NF - 1); if (torch[k] > f) f = torch[k]
            r = sprintf("%.2f", $4 / f) + 0; n++; V[k] = vs; R[k] = r
            if (n == 1 || vs < vl) vl = vs; if (vs > vh) vh = vs; if (n == 1 || r < rl) rl = r; if (r > rh) rh = r }
        /\.\/train predict --precision bf16/ { for (i = 1; i < NF; i++) if ($(i + 1) == "tokens/s,") bt = $i; next }
        /\.\/train predict [0-9]/ { for (i = 1; i < NF; i++) if ($(i + 1) == "tokens/s,") ft = $i }
        END { inf = sprintf("%.2f", bt / ft) + 0
            printf "%.2f %.2f %.2f %.2f target-1.8x %s %.2f %.2f %.2f %.2f target-4x %s %.2f target-1.8x %s", vl, vh,
                V["small 2"], V["wide 2"], v(V["small 2"] >= 1.8 && V["wide 2"] >= 1.8), rl, rh, R["small 2"], R["wide 2"],
                v(R["small 2"] >= 4 && R["wide 2"] >= 4), inf, v(inf >= 1.8) }' "$record")
    verdict bench-bf16-note "$want" "$got" "bf16 vs float32 low, high, small, wide, verdict; vs PyTorch low, high, small, wide, verdict; inference, verdict; from $record"
}

# the targets sentence: its numbers and verdicts in order, made again from the record's columns
check_targets() {
    local text record want got
    text=$(block_text bench-targets)
    want=$(grep -oE 'not met|met|[0-9]+(\.[0-9]+)?x|[0-9]+%' <<<"$text" | tr ' \n' '- ' | sed 's/ $//')
    record=$(cat "$dir/bench.path")
    got=$(awk 'function v(ok) { return ok ? "met" : "not-met" }
        /^config thr/ && !seen++ { for (i = 1; i <= NF; i++) col[$i] = i; p = 1; next } p && /^$/ { p = 0 }
        p { fast = 0; for (i = col["limit_MB"] + 1; i < NF; i++) if ($i + 0 > fast) fast = $i + 0
            r[$1 " " $2] = sprintf("%.2f", $(col["tokens/s"]) / fast) + 0; pk[$1 " " $2] = $(col["%peak"]) + 0; tok[$1 " " $2] = $(col["tokens/s"]) }
        /^ +T +batch/ { for (i = 1; i <= NF; i++) lc[$i] = i; q = 1; next } q && /^$/ { q = 0 }
        q { g[$1] = $(lc["GFLOP/s"]) }
        END { s1 = sprintf("%.2f", tok["small 2"] / tok["small 1"]) + 0; s2 = sprintf("%.2f", tok["wide 2"] / tok["wide 1"]) + 0
            t = int(100 * g[512] / g[64])
            printf "%.2fx 3x %s %d%% %d%% 75%% %s %s %.2fx %.2fx 1.8x %s %s %d%% 95%% %s", r["tiny 2"], v(r["tiny 2"] >= 3),
                pk["small 2"], pk["wide 2"], v(pk["small 2"] >= 75), v(pk["wide 2"] >= 75), s1, s2, v(s1 >= 1.8), v(s2 >= 1.8), t, v(t >= 95) }' "$record")
    verdict bench-targets "$want" "$got" "the numbers and verdicts in order; from $record"
}

# the MPI sentences: their numbers in order, made again from docs/bench/mpi.txt's columns
numbers() { block_text "$1" | grep -oE '[0-9]+(\.[0-9]+)?' | paste -sd' '; }
check_mpi_memory() {
    local record got
    record=$(cat "$dir/mpi.path")
    got=$(awk '/^run +peak/ { p = 1; next } p && /^$/ { exit }
        p && /^1 process/ { one = $(NF - 1) }            # the data column is the one before "data x ranks"
        p && / ranks / { n[++k] = $1; d[k] = $(NF - 1) }
        END { printf "%s", one; for (i = 1; i <= k; i++) printf " %s %d 1 %d %.1f", d[i], n[i], n[i], one / n[i] }' "$record")
    verdict mpi-memory-note "$(numbers mpi-memory-note)" "$got" "one process's data, then each rank count's data, ranks, 1/N, the exact share; from $record"
}
check_mpi_projection() {
    local record got
    record=$(cat "$dir/mpi.path")
    got=$(awk '/^config +ranks +Gbit/ { for (i = 1; i <= NF; i++) c[$i] = i; p = 1; next } p && /^$/ { exit }
        p { cfg = $(c["config"]); r = $(c["ranks"]); g = $(c["Gbit/s"]); comm = 100 * ($(c["bw_ms"]) + $(c["lat_ms"])) / $(c["step_ms"])
            lat = 100 * $(c["lat_ms"]) / $(c["step_ms"]); pc = $(c["comm%"]) + 0
            if (cfg == "small" && r <= 64) s64 = pc > s64 ? pc : s64
            if (cfg == "small" && r == 512) { lo = (lo == "" || lat < lo) ? lat : lo; hi = lat > hi ? lat : hi }
            if (cfg == "wide" && g == 10) { wl = (wl == "" || pc < wl) ? pc : wl; wh = pc > wh ? pc : wh }
            if (cfg == "wide" && g == 100 && r <= 64) w64 = pc > w64 ? pc : w64
            if (cfg == "wide" && g == 100 && r == 512) { w512 = pc; w512l = lat }
            a4 = $(c["accum4"]) + 0; acc4 = a4 > acc4 ? a4 : acc4; k = $(c["K(10%)"]) + 0; km = k > km ? k : km }
        END { printf "%d 64 512 %.0f", s64, lo; if (sprintf("%.0f", lo) != sprintf("%.0f", hi)) printf " %.0f", hi
            printf " 10 %d %d 100 %d 64 %d 512 %.0f 4 %d %d 10 10", wl, wh, w64, w512, w512l, acc4, km }' "$record")
    verdict mpi-projection-note "$(numbers mpi-projection-note)" "$got" "the sentence's numbers in order; from $record"
}

# For the first probe of probes.jsonl (the JSON read here character by character, not through the
# film): its text, the last epoch, and for each head the first epoch from which every query's largest
# attention weight is on the token TOKEN at every epoch to the last; prints the text, the last
# epoch, the earliest such epoch and "layer.head" of each head with it (none: "-").
probe_heads() {
    awk -v want="$1" "$piece_awk"'
        function str(line, i,   c, s) { s = ""   # the JSON string whose opening quote is at i; sets end
            for (i++; (c = substr(line, i, 1)) != "\""; i++) { if (c == "\\") { i++; c = substr(line, i, 1) } s = s c }
            end = i; return s }
        NR == 1 { i = index($0, "\"probes\": [")
            text = str($0, i + index(substr($0, i), "\"text\": \"") + 7)
            i += index(substr($0, i), "\"tokens\": [") + 10
            for (n = 0; (c = substr($0, i, 1)) != "]"; i++) if (c == "\"") { tok[n++] = piece(str($0, i)); i = end }
            next }
        { e = $0; sub(/^\{"epoch": /, "", e); e += 0; ep[++ne] = e   # the first "attention" of a line belongs to probe 1
          i = index($0, "\"attention\": [") + 13; d = 0; num = ""; l = 0
          for (; i <= length($0); i++) { c = substr($0, i, 1)
              if (c == "[") { d++; if (d == 2) { l++; h = 0 } else if (d == 3) { h++; all[ne, l "." h] = 1; heads[l "." h] = 1 } else if (d == 4) { k = 0; best = -1 } }
              else if (c == "," || c == "]") {
                  if (d == 4 && num != "") { w = num + 0; if (w > best) { best = w; arg = k } else if (w == best && tok[k] == want) arg = k; k++; num = "" }
                  if (c == "]") { if (d == 4 && tok[arg] != want) all[ne, l "." h] = 0; if (--d == 0) break } }
              else if (c != " ") num = num c } }
        END { first = ""; for (hd in heads) { f = ""; for (j = ne; j >= 1 && all[j, hd]; j--) f = ep[j]
                  if (f != "" && (first == "" || f + 0 < first + 0)) first = f; start[hd] = f }
              s = ""; for (hd in heads) if (first != "" && start[hd] == first) s = s " " hd
              printf "%s\t%s %s%s\n", text, ep[ne], (first == "" ? "-" : first), s }' "$dir/probes.jsonl"
}

check_film() {
    local text re want got said_text shown strip alt
    text=$(block_text film-note)
    re='On the first probe the run picked, "([^"]*)", (.*) (is the first head|are the first heads) in which every query gives `([^`]+)` its largest weight, from epoch ([0-9]+) to the last \(([0-9]+)\); validation accuracy was ([0-9.]+) after epoch ([0-9]+)\. The strip, `runs/demo/film.png`, is head ([0-9]+) of layer ([0-9]+) at each epoch'
    [[ $text =~ $re ]] || { false_claim film-note "cannot read the probe, the heads, the token, the epochs and the accuracy"; return; }
    local heads_txt=${BASH_REMATCH[2]} tok=${BASH_REMATCH[4]} e=${BASH_REMATCH[5]} last=${BASH_REMATCH[6]}
    local acc=${BASH_REMATCH[7]} acc_e=${BASH_REMATCH[8]} pic="${BASH_REMATCH[10]}.${BASH_REMATCH[9]}"
    said_text=${BASH_REMATCH[1]}
    want="$said_text|$last $e$(grep -oE 'head [0-9]+ of layer [0-9]+' <<<"$heads_txt" | awk '{ printf " %s.%s", $5, $2 }' | tr ' ' '\n' | sort | paste -sd' ')"
    got=$(probe_heads "$tok" | awk -F'\t' '{ n = split($2, f, " "); s = f[1] " " f[2]; m = 0
        for (i = 3; i <= n; i++) h[++m] = f[i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (h[j] < h[i]) { t = h[i]; h[i] = h[j]; h[j] = t }
        for (i = 1; i <= m; i++) s = s " " h[i]; print $1 "|" s }')
    if [ "$want" != "$got" ]; then
        false_claim film-note "it says (${want//|/; }) [probe text; last epoch, first epoch, layer.head...]; probes.jsonl gives (${got//|/; })"
        return
    fi
    # the accuracy after that epoch, from the demo's epoch table (its Val acc column), two decimals
    shown=$(awk -F'|' -v e="$e" '/^Epoch \|/ { for (i = 1; i <= NF; i++) { c = $i; gsub(/ /, "", c); if (c == "Valacc") v = i } }
        v && $1 + 0 == e && /^ +[0-9]+ \|/ { printf "%.2f", $v; exit }' "$dir/demo.shown")
    # the head film.png draws, as the film printed it, and the caption's
    strip=$(sed -n 's/.*film\.png (head \([0-9]*\.[0-9]*\) on probe 1 .*/\1/p' "$dir/demo.shown")
    alt=$(grep -oE '!\[layer [0-9]+, head [0-9]+ on the first probe' <<<"$text" | awk '{ sub(/,/, "", $2); print $2 "." $4 }')
    if [ "$acc_e" != "$e" ] || [ "$acc" != "$shown" ]; then
        false_claim film-note "it says validation accuracy $acc after epoch $acc_e; the epoch table has $shown after epoch $e"
    elif [ "$pic" != "$strip" ] || [ "$alt" != "$strip" ] || ! grep -qw -- "${pic//./\\.}" <<<"${want#*|}"; then
        false_claim film-note "the strip is said to be layer.head $pic (caption $alt); film.png draws $strip; the heads are (${want#*|* * })"
    else
        said film-note "probe 1: \`$tok\` is every query's top key in layer.head ${want#*|* * } from epoch $e to $last; val acc $acc; the strip draws $strip"
    fi
}

for page in "$@"; do
    grep -qx '<!-- begin:attention-note -->' "$page" && check_attention
    grep -qx '<!-- begin:saliency-note -->' "$page" && check_saliency
    grep -qx '<!-- begin:check-note -->' "$page" && check_live_check
    grep -qx '<!-- begin:compare-note -->' "$page" && check_compare
    grep -qx '<!-- begin:demo-then -->' "$page" && check_demo_then
    grep -qx '<!-- begin:bench-note -->' "$page" && check_bench
    grep -qx '<!-- begin:bench-targets -->' "$page" && check_targets
    grep -qx '<!-- begin:bench-bf16-note -->' "$page" && check_bf16
    grep -qx '<!-- begin:mpi-memory-note -->' "$page" && check_mpi_memory
    grep -qx '<!-- begin:mpi-projection-note -->' "$page" && check_mpi_projection
    grep -qx '<!-- begin:film-note -->' "$page" && check_film
done
[ "$bad" -eq 0 ] || { echo "$bad claim(s) do not follow from the output: run 'make docs', or correct the sentence"; exit 1; }
