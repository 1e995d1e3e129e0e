#!/usr/bin/env bash
# test_teaching.sh: `./train trace` (probabilities equal predict --probs, PE values follow the formula, attention rows sum to 1, --png pictures decode to the sizes printed) and `./train compare-pe` on an order-sensitive dataset.
# Run from the project root after make: bash tests/test_teaching.sh. Exits non-zero on any failure.
source "$(dirname "$0")/lib.sh"

[ -x ./train ] || { echo "FAIL: ./train is missing (run make)"; exit 1; }
# one thread: on a loaded 2-core machine OpenMP threads only wait for each other
tiny=(--d-model 16 --heads 2 --d-ff 32 --layers 1 --threads 1 --quiet)

# An order-sensitive dataset (tests/lib.sh): a bag of words cannot tell its labels apart.
order_tsv 7 400 5 >"$tmp/order.tsv"

# The last probability line of a trace: "label<TAB>p...", as predict --probs prints it.
trace_probs() { grep -a 'as predict --probs prints it:' "$1" | tail -n 1 | cut -f 2-; }

# Checks the "PE[pos,dim] = sin(pos/10000^(2i/d)) = value" lines and the table
# rows of section [3] against the formula computed here; prints the count checked.
check_pe() {  # trace-output
    awk '
        function pe(pos, dim, d,   angle) {
            angle = pos / exp(log(10000) * (dim - dim % 2) / d)
            return dim % 2 ? cos(angle) : sin(angle)
        }
        function abs(x) { return x < 0 ? -x : x }
        /^\[3\] positional encoding/ { section = 1; split($0, parts, " x "); d = parts[2] + 0; next }
        /^\[4\]/ { section = 0 }
        !section { next }
        /^ +PE\[[0-9]+,[0-9]+\] = (sin|cos)\(/ {
            match($0, /PE\[[0-9]+,[0-9]+\]/); split(substr($0, RSTART + 3, RLENGTH - 4), pd, ",")
            pos = pd[1] + 0; dim = pd[2] + 0
            match($0, /(sin|cos)\([0-9]+\/10000\^\([0-9]+\/[0-9]+\)\)/)
            formula = substr($0, RSTART, RLENGTH); split(formula, f, /[()\/^]+/)
            # f: 1 sin|cos, 2 pos, 3 10000, 4 2i, 5 d
            want_fn = dim % 2 ? "cos" : "sin"
            if (f[1] != want_fn || f[2] + 0 != pos || f[4] + 0 != dim - dim % 2 || f[5] + 0 != d) {
                printf "bad formula for PE[%d,%d] (d=%d): %s\n", pos, dim, d, formula; bad = 1
            }
            value = $NF + 0
            if (abs(value - pe(pos, dim, d)) > 2e-6) {
                printf "PE[%d,%d] printed %s, formula gives %.6f\n", pos, dim, $NF, pe(pos, dim, d); bad = 1
            }
            n++; next
        }
        /^ +[0-9]+ .*\|/ {   # a table row: pos token | values...
            pos = $1 + 0; split($0, halves, "|"); k = split(halves[2], v, " ")
            for (j = 1; j <= k; j++) {
                if (v[j] == "...") break
                if (abs(v[j] - pe(pos, j - 1, d)) > 1.5e-4) {
                    printf "table PE[%d,%d] = %s, formula gives %.4f\n", pos, j - 1, v[j], pe(pos, j - 1, d); bad = 1
                }
                n++
            }
        }
        END { if (d == 0) { print "no [3] section"; exit 1 } print n; exit bad }' "$1"
}

# Each printed attention row ("qN token | w w w ... | top: ...") sums to 1
# within 1e-3, and its top key holds the row maximum; prints the row count.
check_attention_rows() {  # trace-output
    awk '
        function abs(x) { return x < 0 ? -x : x }
        /^ +q[0-9]+ .*\| top: / {
            split($0, parts, "|"); k = split(parts[2], v, " ")
            sum = 0; best = -1
            for (j = 1; j <= k; j++) { sum += v[j]; if (v[j] + 0 > best) best = v[j] + 0 }
            match(parts[3], /, [0-9.]+\)/); top = substr(parts[3], RSTART + 2, RLENGTH - 3) + 0
            if (k < 2 || abs(sum - 1) > 1e-3) { printf "row sums to %.6f: %s\n", sum, $0; bad = 1 }
            if (abs(top - best) > 1e-4) { printf "top %.4f is not the row maximum %.4f: %s\n", top, best, $0; bad = 1 }
            n++
        }
        END { print n + 0; exit bad || n == 0 }' "$1"
}

# Width and height of a PNG: decoded by tool_pngcheck when it is built, else
# read from the IHDR chunk (bytes 16..23, big-endian) after the signature.
png_size() {  # file
    if [ -x build/tests/tool_pngcheck ]; then
        build/tests/tool_pngcheck "$1" | awk '{ print $1, $2 }'
        return
    fi
    local sig
    sig=$(od -An -tu1 -N8 "$1" | tr -s ' ')
    [ "$sig" = " 137 80 78 71 13 10 26 10" ] || { echo "not-a-png"; return; }
    od -An -tu1 -j16 -N8 "$1" | awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }'
}

# Every "wrote FILE (W x H)" line of a trace names a PNG of that size.
check_pngs() {  # trace-output expected-count
    local n=0 bad=0 path w h size
    while read -r path w h; do
        size=$(png_size "$path")
        if [ "$size" != "$w $h" ]; then
            fail "$path: decoded size '$size', trace printed $w x $h"
            bad=1
        fi
        n=$((n + 1))
    done < <(sed -n 's/^ *wrote \(.*\.png\) (\([0-9]*\) x \([0-9]*\))$/\1 \2 \3/p' "$1")
    if [ "$n" -ne "$2" ]; then fail "expected $2 PNGs, the trace wrote $n"; bad=1; fi
    [ "$bad" -eq 0 ] && pass "$n PNGs decode to the sizes the trace printed"
}

# ---- a tiny trained run
if ./train "$tmp/order.tsv" --epochs 3 --lr 0.01 --batch-size 16 "${tiny[@]}" --out "$tmp/run" >"$tmp/fit.log" 2>&1; then
    pass "trained a tiny run"
else
    cat "$tmp/fit.log"; fail "training the tiny run failed"
fi

# ---- 1. trace probabilities equal predict --probs
texts=("a x b y c" "y d x" "x zebra y" "h g x e y f" "x" "a b c d e f g h x y h g f e d c b a")
matched=0
for text in "${texts[@]}"; do
    if ! ./train trace --model "$tmp/run" "$text" >"$tmp/trace.txt" 2>"$tmp/trace.err"; then
        cat "$tmp/trace.err"; fail "trace failed on '$text'"; continue
    fi
    got=$(trace_probs "$tmp/trace.txt")
    want=$(./train predict --model "$tmp/run" --probs "$text")
    if [ -n "$got" ] && [ "$got" = "$want" ]; then matched=$((matched + 1))
    else fail "trace of '$text' prints '$got', predict --probs '$want'"; fi
done
[ "$matched" -eq "${#texts[@]}" ] && pass "trace probabilities equal predict --probs for $matched texts"

# ---- 2. PE values and 3. attention rows, on a trained run's trace
./train trace --model "$tmp/run" "a x b y c d" >"$tmp/trace.txt" 2>&1 || fail "trace failed"
if n_pe=$(check_pe "$tmp/trace.txt"); then pass "$n_pe printed PE values match sin/cos(pos/10000^(2i/d))"
else echo "$n_pe"; fail "PE values do not match the formula"; fi
if n_rows=$(check_attention_rows "$tmp/trace.txt"); then
    # 8 positions x 2 heads x 1 layer
    [ "$n_rows" -eq 16 ] && pass "$n_rows attention rows sum to 1 and name their top key" \
        || fail "expected 16 attention rows, found $n_rows"
else echo "$n_rows"; fail "attention rows"; fi
grep -q '^\[1\] tokens .*: \[CLS\] + 6 tokens + \[SEP\] = 8 positions' "$tmp/trace.txt" \
    && grep -q '^\[2\] input embeddings: 8 tokens x 16 dimensions' "$tmp/trace.txt" \
    && grep -q '^\[3\] positional encoding: 8 positions x 16 dimensions' "$tmp/trace.txt" \
    && grep -q '^\[4\] embeddings + positional encoding: 8 x 16' "$tmp/trace.txt" \
    && grep -q 'layer 1 FFN output' "$tmp/trace.txt" \
    && grep -q '^\[6\] pooling, logits, softmax' "$tmp/trace.txt" \
    && grep -q 'predicted label: ' "$tmp/trace.txt" \
    && pass "trace prints every stage with its shape" || fail "a stage or shape is missing from the trace"

# ---- 4. --png: one heatmap per layer and head, and the PE heatmaps
if ./train trace --model "$tmp/run" "a x b y c d" --png "$tmp/png/sub" >"$tmp/trace_png.txt" 2>&1; then
    check_pngs "$tmp/trace_png.txt" 4
    for f in attention_l1_h1 attention_l1_h2 positional_encoding positional_encoding_100; do
        [ -s "$tmp/png/sub/$f.png" ] || fail "--png did not write $f.png"
    done
else
    cat "$tmp/trace_png.txt"; fail "trace --png failed"
fi

# ---- 5. the classic example: 10 tokens x 512 dimensions, untrained
ten="the cat sat on the mat because it was tired"
if ./train trace --untrained --d-model 512 --heads 8 --layers 1 --d-ff 64 --threads 1 "$ten" --png "$tmp/png512" \
    >"$tmp/t512.txt" 2>&1; then
    grep -q "^\[2\] input embeddings: 12 tokens x 512 dimensions (10 text tokens plus \[CLS\] and \[SEP\])" \
        "$tmp/t512.txt" && pass "untrained 512-wide trace reports 12 tokens ([CLS] + 10 + [SEP]) x 512 dimensions" \
        || fail "untrained trace: no '12 tokens x 512 dimensions' line"
    n_pe=$(check_pe "$tmp/t512.txt") && pass "d=512: $n_pe PE values match the formula" || { echo "$n_pe"; fail "d=512 PE"; }
    n_rows=$(check_attention_rows "$tmp/t512.txt") && [ "$n_rows" -eq 96 ] \
        && pass "d=512: 96 attention rows (12 queries x 8 heads) sum to 1" || { echo "$n_rows"; fail "d=512 attention rows"; }
    check_pngs "$tmp/t512.txt" 10
    grep -q 'wrote .*positional_encoding.png (' "$tmp/t512.txt" || fail "no positional_encoding.png"
else
    cat "$tmp/t512.txt"; fail "untrained trace failed"
fi

# ---- 6. other configurations: learned PE, pre-norm, [CLS] pooling, gelu; char tokenizer
if ./train "$tmp/order.tsv" --epochs 1 "${tiny[@]}" --pe learned --norm pre --pool cls --activation gelu \
    --out "$tmp/run2" >"$tmp/fit2.log" 2>&1; then
    ./train trace --model "$tmp/run2" "x a y" --png "$tmp/png2" >"$tmp/trace2.txt" 2>&1 || fail "trace (learned PE) failed"
    [ "$(trace_probs "$tmp/trace2.txt")" = "$(./train predict --model "$tmp/run2" --probs "x a y")" ] \
        && grep -q 'final LayerNorm' "$tmp/trace2.txt" && grep -q 'position 0 (\[CLS\])' "$tmp/trace2.txt" \
        && pass "learned PE, pre-norm, [CLS] pooling: trace matches predict" || fail "learned/pre/cls trace"
    check_attention_rows "$tmp/trace2.txt" >/dev/null || fail "learned/pre/cls attention rows"
    check_pngs "$tmp/trace2.txt" 4
else
    cat "$tmp/fit2.log"; fail "training the learned-PE run failed"
fi
./train trace --untrained --tokenizer char --pe none --max-len 5 --d-model 8 --heads 2 --d-ff 8 --layers 2 \
    "ab cd" >"$tmp/trace3.txt" 2>&1 \
    && grep -q '<sp>' "$tmp/trace3.txt" && grep -q 'the text has 5 tokens; truncated to the first 3' "$tmp/trace3.txt" \
    && grep -q 'layer 2 output' "$tmp/trace3.txt" && grep -q 'nothing is added' "$tmp/trace3.txt" \
    && pass "char tokenizer, no PE, truncation to --max-len, two layers" || { cat "$tmp/trace3.txt"; fail "char/none trace"; }

# ---- 7. usage errors exit 2 with a message
expect_usage() {  # description, command...
    local what=$1; shift
    "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -q 'error:' "$tmp/usage.err"; then pass "$what: exit 2"
    else fail "$what: exit $rc, stderr: $(cat "$tmp/usage.err")"; fi
}
expect_usage "trace without --model" ./train trace "a b"
expect_usage "trace without a text" ./train trace --model "$tmp/run"
expect_usage "trace of a missing run" ./train trace --model "$tmp/nothing" "a b"
expect_usage "trace --untrained with odd d and sinusoidal PE" ./train trace --untrained --d-model 15 --heads 3 "a b"

# ---- 8. compare-pe: same seed, with and without PE, on the order-sensitive data
if ./train compare-pe "$tmp/order.tsv" --epochs 8 --lr 0.01 --batch-size 16 "${tiny[@]}" --out "$tmp/cmp" \
    >"$tmp/cmp.txt" 2>&1; then
    grep -q -- '--pe sinusoidal .*|.*--pe none' "$tmp/cmp.txt" && [ "$(grep -c '^ *[0-9]* |.*|.*|$' "$tmp/cmp.txt")" -ge 8 ] \
        && pass "compare-pe prints both epoch traces side by side" || fail "compare-pe: no side-by-side trace"
    line=$(grep 'final validation accuracy:' "$tmp/cmp.txt")
    with=$(sed -n 's/.*accuracy: \([0-9.]*\) with sinusoidal PE, \([0-9.]*\) without.*/\1/p' <<<"$line")
    without=$(sed -n 's/.*accuracy: \([0-9.]*\) with sinusoidal PE, \([0-9.]*\) without.*/\2/p' <<<"$line")
    if [ -n "$with" ] && [ -n "$without" ]; then
        echo "REPORT compare-pe on an x-before-y dataset: val accuracy $with with sinusoidal PE, $without without"
        awk -v a="$with" -v b="$without" 'BEGIN { exit !(a - b >= 0.2) }' \
            && pass "compare-pe: the gap is obvious ($with vs $without)" || fail "compare-pe: gap too small ($with vs $without)"
    else
        fail "compare-pe: no final accuracies line"
    fi
    size=$(png_size "$tmp/cmp/compare.png" 2>/dev/null)
    [ -n "$size" ] && [ "$size" != "not-a-png" ] && [ -f "$tmp/cmp/pe-sinusoidal/model.safetensors" ] \
        && [ -f "$tmp/cmp/pe-none/model.safetensors" ] && pass "compare-pe wrote compare.png ($size) and both runs" \
        || fail "compare-pe: compare.png or a run is missing"
else
    cat "$tmp/cmp.txt"; fail "compare-pe failed"
fi

# Terminal labels (cli/trace_text.c): in a UTF-8 locale bpe pieces are shown
# as they are (the word-start mark U+2581), laid out by display columns; in
# the C locale they are ASCII, the mark '_', explained once.
text="the café was good , the café was 日本"
env -u LC_ALL -u LC_CTYPE LANG=C.UTF-8 ./train trace --untrained --tokenizer bpe --threads 1 "$text" >"$tmp/utf8.txt" 2>&1
env -u LANG -u LC_CTYPE LC_ALL=C ./train trace --untrained --tokenizer bpe --threads 1 "$text" >"$tmp/c.txt" 2>&1
LANG=C.UTF-8 LC_ALL=C ./train trace --untrained --tokenizer bpe --threads 1 "$text" >"$tmp/c2.txt" 2>&1
tokens() { sed -n '/^\[1\] tokens/,/^\[2\]/p' "$1" | grep -E '^ +[0-9]+ '; }
charts() { grep -E '^ {4,}[^ ]+ \|[ .:=+*#%@-]*$|top: ' "$1"; }   # attention charts' rows and top keys
shown=$(tokens "$tmp/utf8.txt"); drawn=$(charts "$tmp/utf8.txt")   # (no grep -q in a pipe: pipefail and SIGPIPE)
grep -q '▁t' <<<"$shown" && grep -q 'é' <<<"$shown" && ! grep -q '?' <<<"$shown" \
    && grep -q '▁caf' <<<"$drawn" && grep -q 'top: ▁' <<<"$drawn" && ! grep -q '?' <<<"$drawn" \
    && pass "UTF-8 locale: bpe pieces shown as they are (▁, é) in the tokens and the attention charts, no '?'" \
    || fail "UTF-8 locale labels: $(head -3 <<<"$shown"; grep -m 3 '?' <<<"$drawn")"
! grep -q 'locale is not UTF-8' "$tmp/utf8.txt" && pass "UTF-8 locale: no ASCII note" || fail "UTF-8 locale: the ASCII note was printed"
# columns counted as a terminal does (Python's East Asian widths, not the C code's): every row of
# the token table and of each attention chart puts its separator in one column
if ! command -v python3 >/dev/null; then
    skip "UTF-8 labels by display columns: needs python3's character widths (apt-get install python3)"
else
aligned=$(python3 - "$tmp/utf8.txt" <<'PY'
import sys, unicodedata, re
def cols(s): return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in s)
text = open(sys.argv[1], encoding="utf-8").read().split("\n")
bad, blocks, cur = [], [], []
for line in text:   # attention charts: rows "    label |shades"
    if re.match(r"^ {4,}\S+ \|[ .:\-=+*#%@]*$", line): cur.append(line)
    elif cur: blocks.append(cur); cur = []
ids = [l for l in text if re.match(r"^ +\d+ .* +\d+( |$)", l) and "special" not in l][:40]
for rows in blocks + [[re.sub(r"( +\d+)( .*)?$", r"\1", l) for l in ids]]:
    ends = {cols(r.split(" |")[0]) if " |" in r else cols(r) for r in rows}
    if len(ends) != 1: bad.append(rows[:3])
print(len(blocks), "charts;", "misaligned: %s" % bad if bad else "aligned")
PY
)
grep -q ' aligned$' <<<"$aligned" && ! grep -q '^0 ' <<<"$aligned" && pass "UTF-8 labels line up by display columns ($aligned)" \
    || fail "UTF-8 labels do not line up: $aligned"
fi
# (the first line repeats the text as it was typed)
grep -q '_t' <<<"$(tokens "$tmp/c.txt")" && ! LC_ALL=C grep -q $'[\x80-\xff]' <<<"$(tail -n +2 "$tmp/c.txt")" \
    && pass "C locale: labels are ASCII, the mark shown as '_'" || fail "C locale labels: $(tokens "$tmp/c.txt" | head -5)"
[ "$(grep -c "this locale is not UTF-8, so labels are ASCII: '_' is bpe's word-start mark U+2581, '?' another character" "$tmp/c.txt")" = 1 ] \
    && pass "C locale: the fallback is explained once" || fail "C locale: the explanation is not there once: $(grep -i locale "$tmp/c.txt")"
cmp -s "$tmp/c.txt" "$tmp/c2.txt" && pass "LC_ALL=C overrides LANG=C.UTF-8" || fail "LC_ALL=C did not override LANG"

echo "REPORT trace: probabilities equal predict --probs; PE values follow the formula; attention rows sum to 1; PNG sizes match"

finish test_teaching
