#!/usr/bin/env bash
# Runs every test suite: unit tests, the same tests under ASan/UBSan with
# leak detection on, CLI tests (tests/test_*.sh), and the PyTorch
# cross-check where torch is importable.
#
# Prints one line per suite, "ok", "FAIL" (then the tail of its log) or
# "skip" (then the reason), and last "N passed, N failed, N skipped"; exits
# non-zero on any failure. Each suite's whole output is in
# build/logs/<suite>.log; the REPORT lines of all suites (gradient errors,
# the twin comparison, signals, ...) are gathered in build/logs/REPORT.txt.
#
# Skipping: a suite that cannot run here (no MPI, no python3) prints the
# reason on a line starting with "skip:" and exits with 77, the code
# automake's test harness uses for a skipped test. Any other non-zero exit
# is a failure; a skipped suite never counts as passed. A suite that passes
# with some of its checks skipped (each a "skip:" line, tests/lib.sh) is
# shown as "ok" with how many were skipped and the first reason.
#
# --quick (`make check`): the plain unit tests and the shell suites in QUICK
# (checks of the tree and the command line that train nothing), without the
# sanitizer builds and the PyTorch cross-check: the edit-build-test loop.
set -u
QUICK="test_layers test_usage test_reading"
quick=0
[ "${1:-}" = --quick ] && quick=1
cd "$(dirname "$0")/.."
SKIP=77
passed=0; failed=0; skipped=0; failures=()
mkdir -p build/logs
reports=build/logs/REPORT.txt
: >"$reports"
run() {  # name, command...
    local name=$1; shift
    local log="build/logs/$name.log"
    mkdir -p "$(dirname "$log")"
    local start=$SECONDS rc=0
    "$@" >"$log" 2>&1 || rc=$?
    local took="($((SECONDS - start))s)"
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        # checks inside a passing suite that could not run here (tests/lib.sh's skip)
        local inner
        inner=$(grep -c '^skip:' "$log")
        if [ "$inner" -gt 0 ]; then
            echo "ok   $name $took, $inner check(s) skipped: $(grep -m 1 '^skip:' "$log" | sed 's/^skip: *//')"
        else
            echo "ok   $name $took"
        fi
    elif [ "$rc" -eq "$SKIP" ]; then
        local why
        why=$(grep -E '^skip(ped)?:' "$log" | tail -n 1 | sed -E 's/^skip(ped)?: *//')
        skipped=$((skipped + 1)); echo "skip $name: ${why:-exit $SKIP, no reason given}"
    else
        failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name $took (exit $rc; $log)"
        tail -n 30 "$log" | sed 's/^/     | /'
    fi
    grep -h '^REPORT' "$log" 2>/dev/null | sed "s|^REPORT|$name:|" >>"$reports" || true
}
skip() {  # name, reason: a suite this machine cannot run
    skipped=$((skipped + 1)); echo "skip $1: $2"
}
for t in build/tests/test_*; do
    [ -x "$t" ] && run "$(basename "$t")" "$t"
done
if [ "$quick" -eq 1 ]; then
    for t in $QUICK; do run "$t" bash "tests/$t.sh"; done
    echo
    [ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
    echo "$passed passed, $failed failed, $skipped skipped (quick: make test runs them all)"
    [ "$failed" -eq 0 ]
    exit
fi
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1
for t in build/asan-tests/test_*; do
    [ -x "$t" ] && run "asan/$(basename "$t")" env CHECK_QUICK=1 "$t"
done
unset ASAN_OPTIONS UBSAN_OPTIONS
for t in tests/test_*.sh; do
    [ -f "$t" ] && run "$(basename "$t" .sh)" bash "$t"
done
if /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
    run check-torch make --no-print-directory check-torch
else
    skip check-torch "/usr/bin/python3 cannot import torch (apt-get install -y python3-torch)"
fi
echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
