#!/usr/bin/env bash
# test_docs.sh: the excerpts, pictures and claims of README.md and docs/*.md
# are what the commands print and draw today (scripts/docs.sh --check runs
# them; only the Seconds column is masked), and each sentence about a run's
# numbers follows from that run's output (scripts/check-claims.sh reads it
# back); `make docs` rewrites them. The checks are shown to work on planted
# copies: a changed attention weight, a claim naming the wrong head, the
# wrong token, or the wrong largest saliency each fail, as does a film note
# naming the wrong epoch or the wrong head; a copy with only the seconds
# changed passes. Then the counts the README quotes from the tests'
# own sources (shapes, bit flips, kills, padding) are checked against them.
source "$(dirname "$0")/lib.sh"
export LC_ALL=C.UTF-8
mapfile -t pages < <(echo README.md; grep -l '^<!-- begin:' docs/*.md)

# a drifted copy: the first attention weight of the trace excerpt changed (as 0.7606 was once)
awk '/<!-- begin:demo-trace -->/ { t = 1 } t && /^    q0 / && !done { sub(/\| [0-9]\.[0-9]+/, "| 0.7606"); done = 1 } 1' README.md > "$tmp/drifted.md"
# a copy that differs only in the Seconds column of the demo table
awk '/<!-- begin:demo-table -->/ { t = 1 } /<!-- end:demo-table -->/ { t = 0 }
     t && /^ +[0-9]+ \|/ { n = split($0, f, "|"); f[7] = "   999.9 "; s = f[1]; for (i = 2; i <= n; i++) s = s "|" f[i]; $0 = s } 1' \
    README.md > "$tmp/seconds.md"
# planted claims: another head, another token, another largest saliency
head=$(grep -oE 'in head [0-9]+ of layer' README.md | head -1 | grep -oE '[0-9]+')   # the claim's first head; plant the next one
sed -E "/<!-- begin:attention-note -->/,/<!-- end:attention-note -->/ s/in head $head of layer/in head $((head % 4 + 1)) of layer/" README.md > "$tmp/wrong-head.md"
sed -E '/<!-- begin:attention-note -->/,/<!-- end:attention-note -->/ s/`not` \(the word/`bad` (the word/' README.md > "$tmp/wrong-token.md"
awk '/<!-- begin:saliency-note -->/ { t = 1 } t && /^Here `/ && !done { sub(/^Here `[^`]+`/, "Here `the`"); done = 1 } 1' \
    docs/TEACHING.md > "$tmp/wrong-saliency.md"
# planted film notes: the epoch after the one at which the head takes `not`, and the next head
film_flat=$(tr '\n' ' ' < README.md | tr -s ' ')
plant_film() {  # README.md with the first match of ERE $1 in the film note (its lines joined) replaced by $2
    awk -v re="$1" -v to="$2" '$0 == "<!-- begin:film-note -->" { print; b = 1; t = ""; next }
        b && $0 == "<!-- end:film-note -->" { if (match(t, re)) t = substr(t, 1, RSTART - 1) to substr(t, RSTART + RLENGTH)
            print t; b = 0 }
        b { t = t (t == "" ? "" : " ") $0; next } 1' README.md
}
film_epoch=$(grep -oE 'from epoch [0-9]+ to the last' <<<"$film_flat" | grep -oE '[0-9]+')
read -r film_head film_layer < <(grep -oE 'head [0-9]+ of layer [0-9]+ (is|are) the first' <<<"$film_flat" | awk '{ print $2, $5 }')
plant_film 'from epoch [0-9]+ to the last' "from epoch $((film_epoch + 1)) to the last" > "$tmp/wrong-film-epoch.md"
plant_film 'head [0-9]+ of layer [0-9]+ (is|are) the first' "head $((film_head % 4 + 1)) of layer $film_layer is the first" \
    > "$tmp/wrong-film-head.md"
# a planted bfloat16 note: its first figure against float32 raised by 0.01
awk '/<!-- begin:bench-bf16-note -->/ { t = 1 } t && !done && match($0, /ran [0-9]+\.[0-9]+-/) {
        v = substr($0, RSTART + 4, RLENGTH - 5) + 0.01; $0 = substr($0, 1, RSTART + 3) sprintf("%.2f", v) substr($0, RSTART + RLENGTH - 1); done = 1 } 1' \
    README.md > "$tmp/wrong-bf16.md"
for f in drifted seconds wrong-head wrong-token wrong-film-epoch wrong-film-head wrong-bf16; do cmp -s README.md "$tmp/$f.md" && fail "could not plant '$f' in a README copy"; done
cmp -s docs/TEACHING.md "$tmp/wrong-saliency.md" && fail "could not plant a wrong saliency in a docs/TEACHING.md copy"

bash scripts/docs.sh --check "${pages[@]}" "$tmp"/{drifted,seconds,wrong-head,wrong-token,wrong-saliency,wrong-film-epoch,wrong-film-head,wrong-bf16}.md > "$tmp/check.txt" 2>&1
rc=$?
cat "$tmp/check.txt"
[ $rc -ne 0 ] || fail "the check passed pages with a planted drift and planted claims"
real=$(printf '%s\n' "${pages[@]}" | sed 's/[.]/\\./g' | paste -sd'|')
if grep -E "^($real) " "$tmp/check.txt" | grep -q .; then
    fail "a page no longer matches what the commands print: run 'make docs'"
elif ! grep -qE "^ok: README\.md block " "$tmp/check.txt"; then
    fail "no README.md excerpt was checked (scripts/docs.sh ended before comparing)"
else
    pass "every excerpt of ${pages[*]} matches what its command prints now ($(grep -cE "^ok: ($real) block " "$tmp/check.txt") blocks)"
fi
grep -q "^no page checked has the block" "$tmp/check.txt" && fail "a block scripts/docs.sh makes is on no page"
grep -q "^docs/images/.* differs" "$tmp/check.txt" && fail "docs/images no longer match: run 'make docs'"
# every claim block scripts/check-claims.sh knows, on every page that has one, must have been checked
kinds=$(sed -n "s/.*grep -qx '<!-- begin:\([a-z0-9-]*\) -->' .* && check_.*/\1/p" scripts/check-claims.sh)
expected=0
for k in $kinds; do expected=$((expected + $(cat "${pages[@]}" | grep -cx "<!-- begin:$k -->"))); done
claims=$(grep -cE "^ok: ($real) claim " "$tmp/check.txt")
[ "$expected" -ge 9 ] && [ "$claims" -eq "$expected" ] && pass "every claim of the pages follows from the output ($claims claims)" \
    || fail "$claims claims of the pages hold, of $expected claim blocks (at least 9 expected)"
grep -q "^$tmp/drifted.md block 'demo-trace' differs" "$tmp/check.txt" \
    && pass "a changed attention weight in the trace excerpt is caught" || fail "the planted drift was not caught"
grep -q "^$tmp/seconds.md " "$tmp/check.txt" && fail "a change in the Seconds column alone failed the check" \
    || pass "the Seconds column is masked"
# each planted claim must be refused by the claim check itself, not only by the block comparison
for f in wrong-head wrong-token; do
    grep -q "^$tmp/$f.md claim 'attention-note' is false" "$tmp/check.txt" \
        && pass "a planted claim ($f) about which head looks at which token is refused" \
        || fail "the planted claim $f passed the claim check"
done
grep -q "^$tmp/wrong-bf16.md claim 'bench-bf16-note' is false" "$tmp/check.txt" \
    && pass "a planted bfloat16 note (its first figure against float32 raised by 0.01) is refused" \
    || fail "the planted bfloat16 note passed the claim check"
grep -q "^$tmp/wrong-saliency.md claim 'saliency-note' is false" "$tmp/check.txt" \
    && pass "a planted claim naming the wrong largest saliency is refused" || fail "the planted saliency claim passed"
for f in wrong-film-epoch wrong-film-head; do
    grep -q "^$tmp/$f.md claim 'film-note' is false" "$tmp/check.txt" \
        && pass "a planted film note ($f: epoch $film_epoch, head $film_head of layer $film_layer changed) is refused" \
        || fail "the planted film note $f passed the claim check"
done

# counts README.md and docs/TESTING.md quote from the tests: each must be the one in the test's source
check_count() {  # what the count is of (the words after it on the page), the count in the source
    local page said
    for page in README.md docs/TESTING.md; do
        said=$(tr '\n' ' ' < "$page" | tr -s ' ' | grep -oE "[0-9]+ $1" | grep -oE '^[0-9]+' | sort -u | paste -sd' ')
        [ -n "$said" ] || continue
        [ "$said" = "$2" ] && pass "$page: $said ${1//\\/}, as in the test's source" \
            || fail "$page says '$said $1'; the test's source has ${2:-nothing}"
    done
}
array_entries() { awk -v start="$1" 'index($0, start) { p = 1; next } p && /^};/ { exit } p && /^    \{ ?"/ { n++ } END { print n + 0 }' "$2"; }
check_count "random shapes" "$(grep -oE 'CHECK_QUICK"\) \? [0-9]+ : [0-9]+' tests/test_matmul.c | grep -oE '[0-9]+$')"
check_count "bit flips" "$(grep -oE 'test_bit_flips\(dir, quick \? [0-9]+ : [0-9]+\)' tests/test_safetensors.c | grep -oE '[0-9]+\)$' | tr -d ')')"
check_count "SIGKILLs" "$(grep -oE 'for i in \$\(seq 1 [0-9]+\)' tests/test_resume.sh | tail -1 | grep -oE '[0-9]+\)$' | tr -d ')')"
check_count 'extra `\[PAD\]`' "$(grep -oE 'EXTRA = [0-9]+' tests/test_model.c | grep -oE '[0-9]+')"
check_count "hostile headers" "$(array_entries 'hostile_cases[] = {' tests/test_safetensors.c)"
check_count "refusal cases" "$(array_entries 'REFUSALS[] = {' tests/test_data.c)"

finish test_docs
