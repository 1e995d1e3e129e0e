#!/usr/bin/env bash
# Runs every test: unit tests, the same tests under ASan/UBSan, CLI tests
# (tests/test_*.sh), and the PyTorch cross-check where torch is importable.
# Prints "N passed, N failed" last; exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
passed=0; failed=0; failures=()
run() {  # name, command...
    local name=$1; shift
    local log="build/logs/$name.log"
    mkdir -p "$(dirname "$log")"
    local start=$SECONDS
    if "$@" >"$log" 2>&1; then
        passed=$((passed + 1)); echo "ok   $name ($((SECONDS - start))s)"
    else
        failed=$((failed + 1)); failures+=("$name"); echo "FAIL $name ($((SECONDS - start))s)"
        tail -n 30 "$log" | sed 's/^/     | /'
    fi
    # Tests may print tables worth seeing (gradient errors, twin comparison).
    grep -h '^REPORT' "$log" 2>/dev/null | sed 's/^REPORT /  /' | head -n 300 || true
}
for t in build/tests/test_*; do
    [ -x "$t" ] && run "$(basename "$t")" "$t"
done
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
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
    echo "skip check-torch: /usr/bin/python3 cannot import torch (apt-get install -y python3-torch)"
fi
echo
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
