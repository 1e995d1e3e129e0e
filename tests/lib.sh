# lib.sh: how every tests/test_*.sh begins and ends, in one place. A test
# sources it first (source "$(dirname "$0")/lib.sh"), then has:
#   - the project root as its working directory;
#   - $tmp, a scratch folder, removed on exit (made writable first, for the
#     tests that take permissions away);
#   - pass MSG, fail MSG and skip MSG: one line each ("ok: MSG", "FAIL: MSG",
#     "skip: MSG"), each counted, also from subshells and `bash -c` (the
#     counts are lines of a file; $failures is this shell's own count);
#   - finish NAME, last: "NAME: N passed, N failed, N skipped", and the exit
#     status: 1 when a check failed (or none was made), 77 when every check
#     was skipped, else 0.
# A check that cannot run here is a skip, never a pass; scripts/run-tests.sh
# shows a suite's skipped checks beside its result. A whole suite that cannot
# run prints "skip: why" and exits with 77.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
tmp=$(mktemp -d) || exit 1
trap 'chmod -R u+rwX "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
export TEST_RESULTS="$tmp/.results"
: >"$TEST_RESULTS"
failures=0
pass() { echo "ok: $*"; echo P >>"$TEST_RESULTS"; }
fail() { echo "FAIL: $*"; echo F >>"$TEST_RESULTS"; failures=$((failures + 1)); }
skip() { echo "skip: $*"; echo S >>"$TEST_RESULTS"; }
export -f pass fail skip
finish() {
    local passed failed skipped
    passed=$(grep -c P "$TEST_RESULTS") failed=$(grep -c F "$TEST_RESULTS") skipped=$(grep -c S "$TEST_RESULTS")
    echo
    echo "$1: $passed passed, $failed failed, $skipped skipped"
    [ "$failed" -eq 0 ] || exit 1
    if [ "$passed" -eq 0 ]; then   # nothing ran: skipped (77), or a suite that checked nothing
        [ "$skipped" -gt 0 ] && { echo "skip: every check of $1 was skipped"; exit 77; }
        echo "FAIL: $1 made no check"; exit 1
    fi
    exit 0
}

# order_tsv SEED LINES SPREAD: a dataset only word order can learn, on stdout:
# lines of 4 to 3 + SPREAD filler words (a-h) holding one x and one y,
# labelled xy or yx by which comes first, so a bag of words cannot tell.
order_tsv() {
    awk -v seed="$1" -v lines="$2" -v spread="$3" 'BEGIN { srand(seed); split("a b c d e f g h", w, " ")
        for (n = 0; n < lines; n++) {
            len = 4 + int(rand() * spread); i = int(rand() * len)
            do j = int(rand() * len); while (j == i)
            s = ""
            for (k = 0; k < len; k++) s = s (k ? " " : "") (k == i ? "x" : k == j ? "y" : w[1 + int(rand() * 8)])
            print (i < j ? "xy" : "yx") "\t" s
        } }'
}
