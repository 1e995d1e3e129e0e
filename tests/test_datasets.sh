#!/usr/bin/env bash
# test_datasets.sh: checks the datasets: synthetic ones rebuild byte-identically, have the right sizes, balance and order properties, and no leakage.
# Run from anywhere: bash tests/test_datasets.sh. Exits non-zero on any failure.
# The real datasets (data/digits, data/langid, data/wordnet, data/fortunes) are checked only when `make data` has built them.
source "$(dirname "$0")/lib.sh"


# 1. The committed synthetic files are exactly what the generator writes.
if bash scripts/make-synthetic.sh "$tmp/gen" >"$tmp/gen.log" 2>&1; then
    for name in negation before rare; do
        for split in train test; do
            if cmp -s "$tmp/gen/$name/$split.tsv" "data/$name/$split.tsv"; then
                pass "data/$name/$split.tsv rebuilds byte-identically"
            else
                fail "data/$name/$split.tsv differs from what data/generate.c writes (run scripts/make-synthetic.sh)"
            fi
        done
    done
else
    cat "$tmp/gen.log"
    fail "scripts/make-synthetic.sh failed"
fi

# Format: '#' comment lines, else label<TAB>text with no other tab, no CR, no
# empty field, no duplicate text. Prints "label count" lines, sorted.
label_counts() {  # file
    awk -F'\t' '
        /^#/ { next }
        NF != 2 || $1 == "" || $2 == "" || /\r/ { printf "bad line %d: %s\n", NR, $0; bad = 1; next }
        seen[$2]++ { printf "duplicate text line %d: %s\n", NR, $2; bad = 1 }
        { n[$1]++ }
        END { for (k in n) print k, n[k]; exit bad }' "$1" | LC_ALL=C sort
}

expect_counts() {  # file, expected "label count" lines joined by ';'
    local got
    got=$(label_counts "$1" | paste -sd';')
    if [ "$got" = "$2" ]; then pass "$1 classes: $got"; else fail "$1 classes: got '$got', expected '$2'"; fi
}

# No text of the test file is also in the train file.
expect_no_leak() {  # train, test
    local n
    n=$(awk -F'\t' '/^#/ { next } NR == FNR { t[$2] = 1; next } ($2 in t) { c++ } END { print c + 0 }' "$1" "$2")
    if [ "$n" -eq 0 ]; then pass "$2 shares no text with $1"; else fail "$2 shares $n texts with $1"; fi
}

# Each example's sorted multiset of words (its bag) also occurs in an example
# of another class; only_label limits the examples checked to one class.
# This is what makes a model without positions no better than chance.
expect_twins() {  # file, only_label ("" = all)
    local bad
    bad=$(awk -F'\t' -v only="$2" '
        function bag(text,    w, n, i, j, t, s) {
            n = split(text, w, " ")
            for (i = 2; i <= n; i++) {            # insertion sort, byte order
                t = w[i]
                for (j = i - 1; j >= 1 && w[j] > t; j--) w[j + 1] = w[j]
                w[j + 1] = t
            }
            s = w[1]
            for (i = 2; i <= n; i++) s = s " " w[i]
            return s
        }
        /^#/ { next }
        { k = bag($2); lab[NR] = $1; key[NR] = k; has[k, $1] = 1; labels[$1] = 1 }
        END {
            for (r in lab) {
                if (only != "" && lab[r] != only) continue
                found = 0
                for (l in labels) if (l != lab[r] && ((key[r], l) in has)) found = 1
                if (!found) { c++; if (c <= 3) print "  no twin: " lab[r] " " key[r] > "/dev/stderr" }
            }
            print c + 0
        }' "$1")
    if [ "$bad" -eq 0 ]; then
        pass "$1: every ${2:-}${2:+ }example has a same-words twin in another class"
    else
        fail "$1: $bad ${2:-}${2:+ }examples have no same-words twin in another class"
    fi
}

# The label follows the order rule of before (x_first iff x precedes y, one of
# each) or rare (rare iff some a precedes some b).
expect_order_rule() {  # file, before|rare
    local bad
    bad=$(awk -F'\t' -v task="$2" '
        /^#/ { next }
        {
            n = split($2, w, " "); nx = ny = 0; first = ""; sawa = 0; ab = 0
            for (i = 1; i <= n; i++) {
                if (w[i] == "x") { nx++; if (first == "") first = "x" }
                if (w[i] == "y") { ny++; if (first == "") first = "y" }
                if (w[i] == "a") sawa = 1
                if (w[i] == "b" && sawa) ab = 1
            }
            if (task == "before") want = (nx == 1 && ny == 1) ? first "_first" : "bad"
            else want = ab ? "rare" : "common"
            if (n < 8 || n > 20 || $1 != want) { c++; if (c <= 3) print "  line " NR ": " $0 > "/dev/stderr" }
        }
        END { print c + 0 }' "$1")
    if [ "$bad" -eq 0 ]; then pass "$1: labels follow the $2 order rule, 8-20 tokens"; else fail "$1: $bad lines break the $2 rule"; fi
}

# 2. Synthetic datasets: sizes, balance, order properties, leakage.
expect_counts data/negation/train.tsv "neg 1000;pos 1000"
expect_counts data/negation/test.tsv "neg 250;pos 250"
expect_counts data/before/train.tsv "x_first 1000;y_first 1000"
expect_counts data/before/test.tsv "x_first 250;y_first 250"
expect_counts data/rare/train.tsv "common 2910;rare 90"
expect_counts data/rare/test.tsv "common 970;rare 30"
for name in negation before rare; do
    expect_no_leak "data/$name/train.tsv" "data/$name/test.tsv"
done
for split in train test; do
    expect_twins "data/negation/$split.tsv" ""
    expect_twins "data/before/$split.tsv" ""
    expect_twins "data/rare/$split.tsv" rare
    expect_order_rule "data/before/$split.tsv" before
    expect_order_rule "data/rare/$split.tsv" rare
done

# 3. Real datasets, when built.
if [ -f data/digits/train.tsv ] && [ -f data/digits/test.tsv ]; then
    for split in train test; do
        bad=$(awk -F'\t' '/^#/ { next }
            { n = split($2, w, " "); ok = ($1 ~ /^[0-9]$/ && n == 64)
              for (i = 1; i <= n; i++) if (w[i] !~ /^[0-9]+$/ || w[i] + 0 > 16) ok = 0
              if (!ok) c++ }
            END { print c + 0 }' "data/digits/$split.tsv")
        [ "$bad" -eq 0 ] && pass "data/digits/$split.tsv: 64 pixels 0..16, label 0..9" \
            || fail "data/digits/$split.tsv: $bad malformed lines"
    done
    total=$( (label_counts data/digits/train.tsv; label_counts data/digits/test.tsv) | awk '{ s += $2 } END { print s }')
    [ "$total" -eq 1797 ] && pass "digits: 1797 images in all" || fail "digits: $total images, expected 1797"
    expect_counts data/digits/test.tsv "0 36;1 36;2 35;3 37;4 36;5 36;6 36;7 36;8 35;9 36"
    expect_no_leak data/digits/train.tsv data/digits/test.tsv
else
    skip "data/digits not built (run 'make data'; it needs the Debian packages)"
fi
if [ -f data/langid/train.tsv ] && [ -f data/langid/test.tsv ]; then
    want_train="" want_test=""
    for code in ca da de en es fr it nb nl pl pt sv; do
        want_train="$want_train${want_train:+;}$code 3200"
        want_test="$want_test${want_test:+;}$code 800"
    done
    expect_counts data/langid/train.tsv "$want_train"
    expect_counts data/langid/test.tsv "$want_test"
    expect_no_leak data/langid/train.tsv data/langid/test.tsv
    bad=$(cat data/langid/train.tsv data/langid/test.tsv | grep -v '^#' | cut -f2 \
        | LC_ALL=C.UTF-8 grep -cvx '[[:lower:]]\+')
    [ "$bad" -eq 0 ] && pass "langid: words are lower-case letters only" || fail "langid: $bad words are not lower-case letters"
else
    skip "data/langid not built (run 'make data'; it needs the Debian packages)"
fi
if [ -f data/wordnet/train.tsv ] && [ -f data/wordnet/test.tsv ]; then
    expect_counts data/wordnet/train.tsv "adj 2400;adv 2400;noun 2400;verb 2400"
    expect_counts data/wordnet/test.tsv "adj 600;adv 600;noun 600;verb 600"
    expect_no_leak data/wordnet/train.tsv data/wordnet/test.tsv
    # the quoted usage examples are cut off (they would name the word itself)
    bad=$(cat data/wordnet/train.tsv data/wordnet/test.tsv | grep -v '^#' | grep -c '"')
    [ "$bad" -eq 0 ] && pass "wordnet: no quoted examples" || fail "wordnet: $bad definitions hold a double quote"
else
    skip "data/wordnet not built (run 'make data'; it needs the Debian packages)"
fi
if [ -f data/fortunes/train.tsv ] && [ -f data/fortunes/test.tsv ]; then
    expect_counts data/fortunes/train.tsv \
        "computers 840;definitions 962;people 996;politics 562;science 499;songs-poems 570;work 502"
    expect_counts data/fortunes/test.tsv \
        "computers 210;definitions 240;people 249;politics 140;science 125;songs-poems 142;work 126"
    expect_no_leak data/fortunes/train.tsv data/fortunes/test.tsv
    # overstrike and other control characters are gone; quotes are one line
    bad=$(cat data/fortunes/train.tsv data/fortunes/test.tsv | grep -v '^#' | cut -f2 | LC_ALL=C grep -c '[[:cntrl:]]')
    [ "$bad" -eq 0 ] && pass "fortunes: no control characters" || fail "fortunes: $bad quotes hold control characters"
else
    skip "data/fortunes not built (run 'make data'; it needs the Debian packages)"
fi

finish test_datasets
