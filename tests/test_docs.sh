#!/usr/bin/env bash
# test_docs.sh: the README's excerpts and docs/images are what the commands
# print and draw today (scripts/docs.sh --check runs them; only the Seconds
# column is masked), so they cannot drift; `make docs` rewrites them. The
# check itself is shown to work: a README copy with one number changed fails,
# one with only the seconds changed passes.
source "$(dirname "$0")/lib.sh"

# a drifted copy: the first attention weight of the trace excerpt changed (as 0.7606 was once)
awk '/<!-- begin:demo-trace -->/ { t = 1 } t && /^    q0 / && !done { sub(/\| [0-9]\.[0-9]+/, "| 0.7606"); done = 1 } 1' README.md > "$tmp/drifted.md"
# a copy that differs only in the Seconds column of the demo table
awk '/<!-- begin:demo-table -->/ { t = 1 } /<!-- end:demo-table -->/ { t = 0 }
     t && /^ +[0-9]+ \|/ { n = split($0, f, "|"); f[7] = "   999.9 "; s = f[1]; for (i = 2; i <= n; i++) s = s "|" f[i]; $0 = s } 1' \
    README.md > "$tmp/seconds.md"
cmp -s README.md "$tmp/drifted.md" && fail "could not plant a drift in the trace excerpt"
cmp -s README.md "$tmp/seconds.md" && fail "could not change the seconds"

bash scripts/docs.sh --check README.md "$tmp/drifted.md" "$tmp/seconds.md" > "$tmp/check.txt" 2>&1
rc=$?
cat "$tmp/check.txt"
[ $rc -ne 0 ] || fail "the check passed a README with a planted drift"
if grep -q "^README.md " "$tmp/check.txt"; then
    fail "README.md no longer matches what the commands print: run 'make docs'"
elif ! grep -q "^ok: README.md block " "$tmp/check.txt"; then
    fail "no README.md excerpt was checked (scripts/docs.sh ended before comparing)"
else
    pass "every README.md excerpt matches what its command prints now ($(grep -c "^ok: README.md block " "$tmp/check.txt") blocks)"
fi
grep -q "^docs/images/.* differs" "$tmp/check.txt" && fail "docs/images no longer match: run 'make docs'"
grep -q "^$tmp/drifted.md block 'demo-trace' differs" "$tmp/check.txt" \
    && pass "a changed attention weight in the trace excerpt is caught" || fail "the planted drift was not caught"
grep -q "^$tmp/seconds.md " "$tmp/check.txt" && fail "a change in the Seconds column alone failed the check" \
    || pass "the Seconds column is masked"

finish test_docs
