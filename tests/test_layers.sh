#!/usr/bin/env bash
# test_layers.sh: includes point one way (docs/ARCHITECTURE.md). Runs
# scripts/check-layers.py on the tree, then on small planted trees to show
# the check fails on an upward include and on a cycle, naming both files.
set -u
cd "$(dirname "$0")/.."
fails=0
fail() { echo "FAIL $*"; fails=$((fails + 1)); }
if ! command -v python3 >/dev/null; then echo "skip: python3 is missing"; exit 77; fi   # 77: skipped

python3 scripts/check-layers.py . || fail "the tree breaks the include order"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/base" "$tmp/nn" "$tmp/text"
echo '#include "nn/layers.h"' > "$tmp/base/fileio.c"
: > "$tmp/nn/layers.h"
out=$(python3 scripts/check-layers.py "$tmp") && fail "an upward include passed"
grep -q 'base/fileio.c .*includes nn/layers.h' <<<"$out" || fail "the upward include is not named: $out"

rm "$tmp/base/fileio.c"
echo '#include "text/b.h"' > "$tmp/text/a.h"
echo '#include "text/a.h"' > "$tmp/text/b.h"
out=$(python3 scripts/check-layers.py "$tmp") && fail "a cycle passed"
grep -q 'include cycle: text/a -> text/b -> text/a' <<<"$out" || fail "the cycle is not named: $out"

rm "$tmp/text/a.h" "$tmp/text/b.h"
echo '#include "nn/layers.h"' > "$tmp/text/tokenizer.c"
out=$(python3 scripts/check-layers.py "$tmp") || fail "text including nn (lower) was refused: $out"
mkdir -p "$tmp/report"; echo '#include "text/tokenizer.h"' > "$tmp/report/plot.c"; : > "$tmp/text/tokenizer.h"
out=$(python3 scripts/check-layers.py "$tmp") && fail "report including text (same rank) passed"

echo "test_layers: $((5 - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
