#!/usr/bin/env bash
# test_reading.sh: docs/READING.md names stops as `file:function`; each must
# be defined in that file (a definition at the start of a line, not a call or
# a prototype), and together they must stay within about 1,500 lines of code
# read (1,600 at most). Then the check is shown to fail on a planted copy
# naming a function that does not exist, a file that does not exist, and a
# function that the file only calls. The phrases of trace's output the page
# quotes must be what trace prints.
source "$(dirname "$0")/lib.sh"

# stops DOC: every `path.c:name` or `path.h:name` it names, one a line
stops() { grep -o '`[A-Za-z0-9_./-]*\.[ch]:[A-Za-z_][A-Za-z0-9_]*`' "$1" | tr -d '`' | sort -u; }

# length_of FILE NAME: the lines of NAME's definition in FILE (its header to the
# closing brace at the start of a line), or nothing when FILE defines no NAME
length_of() {
    awk -v fn="$2" '
        !body && !head && $0 ~ ("^[A-Za-z_].*[^A-Za-z0-9_]" fn "\\(") { head = 1; start = NR }
        head { if (index($0, "{")) { head = 0; body = 1 } else if ($0 ~ /;[[:space:]]*$/) head = 0 }
        body && /^}/ { print NR - start + 1; exit }' "$1" 2>/dev/null
}

# check DOC: prints "missing: file:name (why)" for each stop not found, then "total N"
check() {
    local total=0 stop file name n
    while read -r stop; do
        file=${stop%%:*} name=${stop##*:}
        if [ ! -f "$file" ]; then echo "missing: $stop (no file $file)"; continue; fi
        n=$(length_of "$file" "$name")
        if [ -z "$n" ]; then echo "missing: $stop ($file defines no $name)"; continue; fi
        total=$((total + n))
    done < <(stops "$1")
    echo "total $total"
}
n_stops=$(stops docs/READING.md | wc -l)
[ "$n_stops" -ge 25 ] && pass "docs/READING.md names $n_stops functions as file:function" \
    || fail "docs/READING.md names only $n_stops functions as file:function"
out=$(check docs/READING.md)
if grep -q '^missing' <<<"$out"; then
    fail "docs/READING.md names functions that are not where it says: $(grep '^missing' <<<"$out" | tr '\n' ';')"
else
    pass "every file:function of docs/READING.md is defined in that file"
fi
total=$(sed -n 's/^total //p' <<<"$out")
echo "REPORT reading path: $n_stops functions, $total lines of code"
[ "$total" -le 1600 ] && pass "the reading path is $total lines of code (at most about 1,500)" \
    || fail "the reading path is $total lines of code, over about 1,500"

# What READING.md says trace prints, against what trace prints: an untrained
# model (post-norm, relu, mean pooling, with --backward) and a pre-norm gelu
# one with cls pooling. Each phrase must be in the page and in the output.
PHRASES=("eval mode: dropout is off" "[1] tokens" "[2] input embeddings" "[3] positional encoding"
    "[4] embeddings + positional encoding" "attention weights softmax(Q K^T / sqrt("
    "post-norm: x = LN1(x + attention(x))" "pre-norm: x = x + attention(LN1(x))"
    "FFN output: linear2(relu(linear1(x)))" "pooled = mean of the encoder output over the"
    "the encoder output at position 0" "logits z = head.weight" "[7.1] gradient at the logits z"
    "dloss/dz_c = p_c - [c = label]" "loss = -log p(" "g = LN2 backward of dout" "dx = g + W_in^T [dQ; dK; dV]"
    "[7.8] gradient of every parameter tensor" "[7.9] live gradient check")
# shown OUTPUT: prints each phrase missing from docs/READING.md or from OUTPUT
shown() {
    for phrase in "${PHRASES[@]}"; do
        grep -qF -- "$phrase" docs/READING.md || echo "not in docs/READING.md: $phrase"
        grep -qF -- "$phrase" "$1" || echo "not in trace's output: $phrase"
    done
}
if [ -x ./train ]; then
    text="the food was good , not bad"
    { ./train trace --untrained --backward "$text" && ./train trace --untrained --norm pre --activation gelu \
        --pool cls "$text"; } >"$tmp/trace.txt" 2>&1 || fail "trace --untrained failed: $(tail -n 3 "$tmp/trace.txt")"
    missing=$(shown "$tmp/trace.txt")
    [ -z "$missing" ] && pass "the ${#PHRASES[@]} phrases of trace's output that docs/READING.md quotes are what trace prints" \
        || fail "docs/READING.md and trace disagree: $(tr '\n' ';' <<<"$missing")"
    grep -vF "dloss/dz_c = p_c - [c = label]" "$tmp/trace.txt" >"$tmp/changed.txt"
    grep -q "not in trace's output: dloss/dz_c" <<<"$(shown "$tmp/changed.txt")" \
        && pass "a trace that no longer prints a quoted rule is caught" || fail "a trace without a quoted rule passed"
else
    skip "./train is not built (make train): the trace phrases were not checked"
fi

# planted: a function that does not exist, a file that does not exist, a function only called there
cp docs/READING.md "$tmp/READING.md"
printf '%s\n' '`nn/reference.c:ref_no_such_layer`' '`text/nowhere.c:tokenize`' '`model.c:crossentropy_backward`' \
    >>"$tmp/READING.md"
out=$(check "$tmp/READING.md")
for stop in nn/reference.c:ref_no_such_layer text/nowhere.c:tokenize model.c:crossentropy_backward; do
    grep -q "^missing: $stop " <<<"$out" && pass "a planted $stop is refused" \
        || fail "a planted $stop passed: $out"
done
finish test_reading
