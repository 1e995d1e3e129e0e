#!/usr/bin/env bash
# test_datasets.sh: checks the datasets: synthetic ones rebuild byte-identically, have the right sizes, balance and order properties, and no leakage.
# Run from anywhere: bash tests/test_datasets.sh. Exits non-zero on any failure.
# The real datasets (data/digits, data/langid, data/wordnet, data/fortunes, and the further sets of
# scripts/get-data-more.sh: debdesc, manpara, mannames, sentlang) are checked only when `make data` has built them.
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

# Every one of the labels (in byte order) has count examples.
expect_balanced() {  # file, count, labels...
    local file=$1 count=$2 want="" label
    shift 2
    for label in "$@"; do want="$want${want:+;}$label $count"; done
    expect_counts "$file" "$want"
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
    codes=(ca da de en es fr it nb nl pl pt sv)
    expect_balanced data/langid/train.tsv 3200 "${codes[@]}"
    expect_balanced data/langid/test.tsv 800 "${codes[@]}"
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

# 4. generate mo, the .mo reader sentlang is built with, on catalogues written
# here byte by byte (the GNU gettext format: magic, revision, count, offsets of
# the msgid and msgstr tables of (length, offset) pairs; NUL after each string).
mo_write() {  # file, byte order (le|be), then msgid msgstr pairs as printf %b strings
    local file=$1 order=$2 i n off
    shift 2
    n=$(($# / 2))
    local -a len=()
    for ((i = 1; i <= $#; i++)); do len[i]=$(printf '%b' "${!i}" | wc -c); done
    word() { if [ "$order" = le ]; then printf "\\x$(printf %02x $(($1 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 24 & 255)))"
             else printf "\\x$(printf %02x $(($1 >> 24 & 255)))\\x$(printf %02x $(($1 >> 16 & 255)))\\x$(printf %02x $(($1 >> 8 & 255)))\\x$(printf %02x $(($1 & 255)))"; fi; }
    {
        word $((0x950412de)); word 0; word "$n"; word 28; word $((28 + 8 * n)); word 0; word 0
        off=$((28 + 16 * n))
        for ((i = 1; i <= $#; i += 2)); do word "${len[i]}"; word "$off"; off=$((off + len[i] + 1)); done
        for ((i = 2; i <= $#; i += 2)); do word "${len[i]}"; word "$off"; off=$((off + len[i] + 1)); done
        for ((i = 1; i <= $#; i += 2)); do printf '%b\0' "${!i}"; done
        for ((i = 2; i <= $#; i += 2)); do printf '%b\0' "${!i}"; done
    } >"$file"
}
if [ -x build/generate ]; then
    mo_write "$tmp/es.mo" le "" 'Content-Type: text/plain; charset=UTF-8\n' \
        'Open file' 'Abrir archivo' \
        'same' 'same' \
        'one file\0%d files' 'un archivo\0%d archivos' \
        'menu\004Quit' 'Quit' \
        'Line one\nline two' 'L\xc3\xadnea uno\nl\xc3\xadnea dos' \
        'empty' ''
    mo_write "$tmp/be.mo" be "" 'charset=UTF-8' 'Close' 'Cerrar'
    mo_write "$tmp/latin1.mo" le "" 'Content-Type: text/plain; charset=ISO-8859-1\n' 'Open' 'Abrir'
    got=$(build/generate mo "$tmp/es.mo" "$tmp/be.mo" "$tmp/latin1.mo" 2>"$tmp/mo.err" | paste -sd'|')
    want='Abrir archivo|un archivo|Línea uno línea dos|Cerrar'
    [ "$got" = "$want" ] && pass "generate mo: translations only, first plural form, context and untranslated copies skipped, both byte orders" \
        || fail "generate mo printed '$got', expected '$want'"
    grep -q 'latin1.mo is not UTF-8; skipped' "$tmp/mo.err" && pass "generate mo: a catalogue not in UTF-8 is skipped with a note" \
        || fail "generate mo: no note for the ISO-8859-1 catalogue: $(cat "$tmp/mo.err")"
    head -c 40 "$tmp/es.mo" >"$tmp/short.mo"
    printf 'not a catalogue at all' >"$tmp/bad.mo"
    for f in short bad; do
        if build/generate mo "$tmp/$f.mo" >/dev/null 2>"$tmp/$f.err"; then
            fail "generate mo accepted the broken $f.mo"
        else
            grep -q "$f.mo" "$tmp/$f.err" && pass "generate mo: the broken $f.mo fails naming the file: $(cat "$tmp/$f.err")" \
                || fail "generate mo: the error for $f.mo does not name it: $(cat "$tmp/$f.err")"
        fi
    done
else
    skip "build/generate not built (scripts/make-synthetic.sh failed above)"
fi

# 5. The further real sets (scripts/get-data-more.sh), when built. Their sizes
# follow the package versions and apt's list, so the checks are of properties:
# the first line names the set, the classes are the same on both sides, each
# class's test share is 20% rounded (the split's rule), and what each builder
# promises of its texts.
expect_header() {  # name
    local split
    for split in train test; do
        if head -n 1 "data/$1/$split.tsv" | grep -q "^# $1 $split: .*get-data-more.sh (stratified 80/20 split)\.$"; then
            pass "data/$1/$split.tsv: the first line says what it is"
        else
            fail "data/$1/$split.tsv: first line '$(head -c 80 "data/$1/$split.tsv")...' is not its comment"
        fi
    done
}
expect_stratified() {  # name, fewest examples a class may have
    local bad
    label_counts "data/$1/train.tsv" >"$tmp/$1.train" || fail "data/$1/train.tsv is malformed: $(head -n 3 "$tmp/$1.train")"
    label_counts "data/$1/test.tsv" >"$tmp/$1.test" || fail "data/$1/test.tsv is malformed: $(head -n 3 "$tmp/$1.test")"
    bad=$(awk -v min="$2" 'NR == FNR { tr[$1] = $2; next } { te[$1] = $2 }
        END {
            for (k in tr) if (!(k in te)) { print "  " k ": no test example"; c++ }
            for (k in te) {
                n = tr[k] + te[k]
                if (int((n * 20 + 50) / 100) != te[k]) { print "  " k ": " te[k] " of " n " in test"; c++ }
                if (n < min) { print "  " k ": " n " examples"; c++ }
            }
            print c + 0
        }' "$tmp/$1.train" "$tmp/$1.test")
    if [ "$(tail -n 1 <<<"$bad")" -eq 0 ]; then
        pass "$1: $(wc -l <"$tmp/$1.test") classes, each with $2 or more examples, 20% of each in test"
    else
        fail "$1: the split is not stratified 80/20 with $2 or more a class:"$'\n'"$(sed '$d' <<<"$bad")"
    fi
}
# Lines (both files) whose text the awk condition flags; prints their number.
count_texts() {  # name, awk condition on $2 (text) and n (its number of words)
    cat "data/$1/train.tsv" "data/$1/test.tsv" | awk -F'\t' "/^#/ { next } { n = split(\$2, w, \" \") } $2 { c++ } END { print c + 0 }"
}
expect_none() {  # name, awk condition, what the flagged lines would be
    local n
    n=$(count_texts "$1" "$2")
    [ "$n" -eq 0 ] && pass "$1: no $3" || fail "$1: $n $3"
}
more_sets=(debdesc manpara mannames sentlang)
for name in "${more_sets[@]}"; do
    if [ ! -f "data/$name/train.tsv" ] || [ ! -f "data/$name/test.tsv" ]; then
        skip "data/$name not built (run 'make data'; it needs the Debian packages)"
        continue
    fi
    expect_header "$name"
    expect_no_leak "data/$name/train.tsv" "data/$name/test.tsv"
    case $name in
    debdesc)
        expect_stratified debdesc 40
        k=$(wc -l <"$tmp/debdesc.test")
        [ "$k" -ge 30 ] && pass "debdesc: $k sections" || fail "debdesc: only $k sections, expected 30 or more"
        # imbalanced as the archive is: the largest section at least 10 times the smallest
        awk 'NR == FNR { n[$1] = $2; next } { n[$1] += $2 } END { for (k in n) { if (!hi || n[k] > hi) hi = n[k]; if (!lo || n[k] < lo) lo = n[k] }
             exit !(hi >= 10 * lo) }' "$tmp/debdesc.train" "$tmp/debdesc.test" \
            && pass "debdesc: imbalanced (largest section 10 times the smallest or more)" || fail "debdesc: the sections are not imbalanced"
        expect_none debdesc 'n > 40' "descriptions of more than 40 words (not one-line descriptions)"
        ;;
    manpara)
        expect_stratified manpara 100
        expect_counts_labels=$(cut -d' ' -f1 "$tmp/manpara.test" | paste -sd' ')
        [ "$expect_counts_labels" = "2 3 4 5 7" ] && pass "manpara: sections 2 3 4 5 7" \
            || fail "manpara: sections '$expect_counts_labels', expected '2 3 4 5 7'"
        expect_none manpara 'n < 50 || n > 300' "paragraphs outside 50 to 300 words"
        # the page's own section must not show: references lose their numbers
        expect_none manpara '$2 ~ /[A-Za-z_]\([1-8][a-z]*\)/' "references with a section number (like fork(2))"
        expect_none manpara '$2 ~ /\\f[BIRP]/' "font escapes left over"
        ;;
    mannames)
        expect_stratified mannames 25
        bad=$(awk '$1 !~ /^[1-8]$/' "$tmp/mannames.train" | wc -l)
        [ "$bad" -eq 0 ] && pass "mannames: every label is a section 1 to 8" || fail "mannames: $bad labels are not sections 1 to 8"
        expect_none mannames '$2 ~ /\([1-8][a-z]*\)/' "references with a section number"
        expect_none mannames 'n > 60' "NAME descriptions of more than 60 words"
        ;;
    sentlang)
        codes=(ca cs da es gl it nb pl pt ro sk sv)
        expect_balanced data/sentlang/train.tsv 960 "${codes[@]}"
        expect_balanced data/sentlang/test.tsv 240 "${codes[@]}"
        expect_none sentlang 'n < 4 || n > 40' "messages outside 4 to 40 words"
        # (a literal "%", as in Danish "%-udvide" from "%%-udvide", may stay)
        expect_none sentlang '$2 ~ /%([0-9]+[$])?[-+#0-9.]*l*[sdiuxfgc]([^A-Za-z]|$)/' "printf directives (%s, %1\$d) left over"
        ;;
    esac
done

finish test_datasets
