#!/usr/bin/env bash
# test_layers.sh: includes point one way (docs/ARCHITECTURE.md). Runs
# scripts/check-layers.py on the tree, then on small planted trees to show
# the check fails on an upward include and on a cycle, naming both files.
source "$(dirname "$0")/lib.sh"
if ! command -v python3 >/dev/null; then echo "skip: python3 is missing for scripts/check-layers.py (apt-get install python3)"; exit 77; fi   # 77: skipped

python3 scripts/check-layers.py . && pass "the tree keeps the include order" || fail "the tree breaks the include order"

mkdir -p "$tmp/base" "$tmp/nn" "$tmp/text"
echo '#include "nn/layers.h"' > "$tmp/base/fileio.c"
: > "$tmp/nn/layers.h"
if out=$(python3 scripts/check-layers.py "$tmp"); then
    fail "an upward include passed"
else
    grep -q 'base/fileio.c .*includes nn/layers.h' <<<"$out" && pass "an upward include is refused, naming both files" \
        || fail "the upward include is not named: $out"
fi

rm "$tmp/base/fileio.c"
echo '#include "text/b.h"' > "$tmp/text/a.h"
echo '#include "text/a.h"' > "$tmp/text/b.h"
if out=$(python3 scripts/check-layers.py "$tmp"); then
    fail "a cycle passed"
else
    grep -q 'include cycle: text/a -> text/b -> text/a' <<<"$out" && pass "a cycle is refused, naming it" \
        || fail "the cycle is not named: $out"
fi

rm "$tmp/text/a.h" "$tmp/text/b.h"
echo '#include "nn/layers.h"' > "$tmp/text/tokenizer.c"
out=$(python3 scripts/check-layers.py "$tmp") && pass "text may include nn (a lower layer)" \
    || fail "text including nn (lower) was refused: $out"
mkdir -p "$tmp/report"; echo '#include "text/tokenizer.h"' > "$tmp/report/plot.c"; : > "$tmp/text/tokenizer.h"
out=$(python3 scripts/check-layers.py "$tmp") && fail "report including text (same rank) passed" \
    || pass "report may not include text (the same rank)"

finish test_layers
