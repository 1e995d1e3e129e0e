#!/usr/bin/env bash
# test_layers.sh: the structure of docs/ARCHITECTURE.md. Runs
# scripts/check-layers.py on the tree, then on small planted trees to show
# the check fails on an upward include, an include cycle and a call cycle
# (naming the files), on a print to stderr below cli/ and on a message
# written into an error buffer by hand (naming file:line), and on a
# function ARCHITECTURE.md places in the wrong file.
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

# Errors (docs/ARCHITECTURE.md, "Errors and exit codes"): planted in a fresh tree
plant=$tmp/errors; mkdir -p "$plant/run" "$plant/cli" "$plant/base" "$plant/report"
printf 'int f(void) {\n    return 0;\n}\nvoid g(void) {\n    fprintf(stderr, "error: x\\n");\n}\n' >"$plant/run/a.c"
out=$(python3 scripts/check-layers.py "$plant") && fail "a print to stderr in run/ passed" \
    || { grep -q '^FAIL run/a.c:5: prints to stderr' <<<"$out" && pass "a print to stderr below cli/ is refused, naming run/a.c:5" \
         || fail "the print to stderr is not named: $out"; }
printf 'void g(void) {\n    fputs("x",\n          stderr);\n    perror("y");\n}\n' >"$plant/report/b.c"
out=$(python3 scripts/check-layers.py "$plant")
grep -q '^FAIL report/b.c:2: prints to stderr' <<<"$out" && grep -q '^FAIL report/b.c:4: prints to stderr' <<<"$out" \
    && pass "fputs(..., stderr) over two lines and perror are refused too" || fail "fputs/perror not named: $out"
mkdir -p "$plant/text"; printf 'void g(void) {\n    printf("x");\n}\n' >"$plant/text/d.c"
out=$(python3 scripts/check-layers.py "$plant")
grep -q '^FAIL text/d.c:2: prints to stdout' <<<"$out" && pass "a print to stdout in text/, which prints nothing, is refused" \
    || fail "the print to stdout in text/ is not named: $out"
rm "$plant/run/a.c" "$plant/report/b.c" "$plant/text/d.c"
printf 'void g(void) {\n    /* fprintf(stderr, "x") */\n    printf("fprintf(stderr, ...)");\n    fprintf(log, "x");\n}\n' >"$plant/run/a.c"
printf 'void g(void) {\n    fprintf(stderr, "error: x\\n");\n}\n' >"$plant/cli/c.c"
out=$(python3 scripts/check-layers.py "$plant") && pass "stderr in cli/, in a comment or a string, and a log stream pass" \
    || fail "a permitted print was refused: $out"
printf 'int h(char *err, unsigned long errlen) {\n    snprintf(err, errlen, "bad");\n    return -1;\n}\n' >"$plant/run/a.c"
out=$(python3 scripts/check-layers.py "$plant") && fail "a raw snprintf into err passed" \
    || { grep -q '^FAIL run/a.c:2: writes an error message by hand (snprintf(err' <<<"$out" \
         && pass "a raw snprintf(err, ...) is refused, naming run/a.c:2" || fail "the raw snprintf is not named: $out"; }
printf 'int h(char *err, unsigned long errlen) {\n    snprintf(err, errlen, "bad");\n    return -1;\n}\n' >"$plant/cli/c.c"
rm "$plant/run/a.c"
out=$(python3 scripts/check-layers.py "$plant") && fail "a raw snprintf into err in cli/ passed" \
    || pass "the raw snprintf is refused in cli/ too"
printf 'void set_error(char *err, unsigned long errlen) {\n    vsnprintf(err, errlen, "x", 0);\n}\n' >"$plant/base/errors.c"
rm "$plant/cli/c.c"
out=$(python3 scripts/check-layers.py "$plant") && pass "base/errors.c, the helpers, may format into err" || fail "the helpers were refused: $out"

# Calls: two files that call each other
plant=$tmp/calls; mkdir -p "$plant/cli"
printf 'int print_one(int x) {\n    return walk(x);\n}\n' >"$plant/cli/trace.c"
printf 'static int helper(void) { return 1; }\nint walk(int x) {\n    return x ? print_one(x - 1) : helper();\n}\n' >"$plant/cli/walk.c"
out=$(python3 scripts/check-layers.py "$plant") && fail "a call cycle passed" \
    || { grep -q 'call cycle: cli/trace.c -> cli/walk.c -> cli/trace.c' <<<"$out" && pass "a call cycle is refused, naming both files" \
         || fail "the call cycle is not named: $out"; }
printf 'static int print_one(int x) {\n    return x;\n}\nint show(int x) {\n    return walk(x);\n}\n' >"$plant/cli/trace.c"
out=$(python3 scripts/check-layers.py "$plant") && pass "calls one way (a static function of the same name is the file's own) pass" \
    || fail "one-way calls were refused: $out"

# Docs: a function ARCHITECTURE.md places in a file must be defined there
plant=$tmp/docs; mkdir -p "$plant/nn" "$plant/docs"
printf 'void attention_backward(float *d) {\n    d[0] = 0;\n}\n' >"$plant/nn/attention.c"
printf 'void layer_norm_backward(float *d) {\n    d[0] = 0;\n}\n' >"$plant/nn/layers.c"
printf '# A\n\nThe attention backward is `attention_backward` in\n`nn/attention.c`; norms are `layer_norm_backward()`.\n' >"$plant/docs/ARCHITECTURE.md"
out=$(python3 scripts/check-layers.py "$plant") && pass "functions named in the files that define them pass" || fail "true names refused: $out"
printf '# A\n\nThe attention backward is `attention_backward` in\n`nn/layers.c`; norms are `layer_norm_backwards()`.\n' >"$plant/docs/ARCHITECTURE.md"
out=$(python3 scripts/check-layers.py "$plant")
grep -q 'names `attention_backward` in nn/layers.c, which does not define it (it is in nn/attention.c)' <<<"$out" \
    && grep -q 'names `layer_norm_backwards`, which no source file defines' <<<"$out" \
    && pass "a function placed in the wrong file, or defined nowhere, is refused" || fail "wrong documented names not caught: $out"

finish test_layers
