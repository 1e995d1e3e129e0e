#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets (tests/fuzz_*.c) with clang into build/fuzz and runs each for FUZZ_SECONDS seconds.
#
#   make fuzz                      60 seconds per target
#   FUZZ_SECONDS=300 make fuzz     longer
#   FUZZ_SECONDS=0 make fuzz       only replay the committed corpora
#   FUZZ_TARGETS="fuzz_data" ...   a subset
#
# Each target starts from its committed seed corpus (tests/corpus/<name>),
# read only: new inputs go to a scratch directory, never into the repository.
# A crash stops with a non-zero exit and names the file holding the input.
# Every run replays the whole corpus first, so a crash found once becomes a
# regression test by copying its input into tests/corpus/<name>/ (say
# regress-<what>) once it is fixed.
# Without clang or libFuzzer (Debian: clang libclang-rt-14-dev) it says so and
# exits 0.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

seconds=${FUZZ_SECONDS:-60}
clang=${CLANG:-clang}
out=build/fuzz
# shellcheck disable=SC2054  # the commas belong to -fsanitize
flags=(-std=c11 -D_GNU_SOURCE -g -O1 -fno-omit-frame-pointer -I.
       -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined)

case $seconds in
    ''|*[!0-9]*) echo "error: FUZZ_SECONDS must be a whole number of seconds, got '$seconds'" >&2; exit 2 ;;
esac

# ------------------------------------------------------------ toolchain
mkdir -p "$out"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);\n%s\n' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$out/probe.c"
if ! command -v "$clang" >/dev/null 2>&1; then
    echo "skip fuzzing: $clang not found (Debian: apt-get install -y clang libclang-rt-14-dev)"
    exit 0
fi
if ! "$clang" "${flags[@]}" "$out/probe.c" -o "$out/probe" >"$out/probe.log" 2>&1; then
    echo "skip fuzzing: $clang cannot build a libFuzzer target (Debian: apt-get install -y libclang-rt-14-dev):"
    sed 's/^/  /' "$out/probe.log" | head -n 5
    exit 0
fi

# stb headers, found as the Makefile finds them (plot.c needs them)
stb=$(pkg-config --cflags stb 2>/dev/null)
if [ -z "$stb" ]; then
    if [ -f /usr/include/stb/stb_image_write.h ]; then stb=-I/usr/include/stb; else stb=-Ibuild/stb/usr/include/stb; fi
fi
read -ra stb_flags <<<"$stb"

# ------------------------------------------------------------ targets
# name: sources besides tests/<name>.c
lib_sources() {  # every library source (the layer folders, model.c) but the third-party stb and model/f64.c
    local f
    for f in model.c base/*.c formats/*.c nn/*.c model/*.c text/*.c report/*.c run/*.c cli/*.c; do
        [ "$f" = report/stb_impl.c ] || [ "$f" = model/f64.c ] || echo "$f"
    done
}
sources_of() {
    case $1 in
        fuzz_data) echo base/*.c text/*.c ;;
        fuzz_safetensors) echo formats/*.c base/*.c ;;
        fuzz_checkpoint) lib_sources ;;
    esac
}
targets=${FUZZ_TARGETS:-fuzz_data fuzz_safetensors fuzz_checkpoint}

build() {  # name
    local name=$1 extra=()
    if [ "$name" = fuzz_checkpoint ]; then
        # the third-party stb implementation: built once, plainly, without our sanitizers' noise
        "$clang" -std=c11 -O1 -w "${stb_flags[@]}" -c report/stb_impl.c -o "$out/stb_impl.o" || return 1
        # model/f64.c is model.c again in double: as the Makefile does, only model_f64_probe stays global
        "$clang" "${flags[@]}" -c model/f64.c -o "$out/f64.tmp.o" \
            && "${OBJCOPY:-objcopy}" --keep-global-symbol=model_f64_probe "$out/f64.tmp.o" "$out/f64.o" || return 1
        extra=("${stb_flags[@]}" "$out/stb_impl.o" "$out/f64.o")
    fi
    # shellcheck disable=SC2046
    "$clang" "${flags[@]}" -I. "${extra[@]}" "tests/$name.c" $(sources_of "$name") -lm -o "$out/$name"
}

failed=()
for name in $targets; do
    if [ ! -f "tests/$name.c" ] || [ ! -d "tests/corpus/${name#fuzz_}" ]; then
        echo "error: no tests/$name.c or tests/corpus/${name#fuzz_}" >&2
        failed+=("$name"); continue
    fi
    echo "== $name: building"
    if ! build "$name" >"$out/$name.build.log" 2>&1; then
        cat "$out/$name.build.log"
        failed+=("$name"); continue
    fi
    scratch=$(mktemp -d)
    mkdir -p "$out/crashes"
    run_flags=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
               -artifact_prefix="$out/crashes/$name-")
    [ "$seconds" -eq 0 ] && run_flags=(-runs=0 -artifact_prefix="$out/crashes/$name-")
    echo "== $name: ${seconds}s from tests/corpus/${name#fuzz_} ($(ls "tests/corpus/${name#fuzz_}" | wc -l) seeds)"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} "$out/$name" "${run_flags[@]}" "$scratch" "tests/corpus/${name#fuzz_}" \
        >"$out/$name.log" 2>&1
    rc=$?
    grep -E '^(#[0-9]+[[:space:]]+(DONE|INITED)|stat::number_of_executed_units|stat::new_units_added)' "$out/$name.log" | sed 's/^/   /'
    if [ "$rc" -ne 0 ]; then
        echo "FAIL $name (exit $rc):"
        grep -E -A 25 'ERROR: |runtime error|invariant broken|==[0-9]+==' "$out/$name.log" | head -n 40 | sed 's/^/   /'
        grep -o "Test unit written to .*" "$out/$name.log" | sed 's/^/   /'
        echo "   full log: $out/$name.log; reproduce with: $out/$name <that file>"
        failed+=("$name")
    else
        echo "ok   $name: no crash; $(ls "$scratch" | wc -l) new inputs left in a scratch directory (discarded)"
    fi
    rm -rf "$scratch"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzzing failed: ${failed[*]}"
    exit 1
fi
echo "fuzzing: no crash in ${seconds}s per target ($targets)"
