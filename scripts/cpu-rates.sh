#!/usr/bin/env bash
# cpu-rates.sh [OTHER_TOOL_BENCH]: what this CPU does in each precision, the
# figures --precision auto's choice rests on (docs/DESIGN.md §4.8): the
# register-loop peaks of float32 FMAs and of vdpbf16ps at 1 and 2 threads,
# then the training step of the small config and of the defaults' shape
# (d_model 64, T 8 and 64) in fp32 and bf16 (and amx where tests/tool_amx
# runs AMX's tiles; elsewhere it would be emulated) at 2 threads, fastest of
# 3 runs each, with the trained weights' hash. OTHER_TOOL_BENCH, another build
# of tests/tool_bench (say with -mprefer-vector-width=256), is timed beside
# it: the same hashes show the build changes no number. Between them,
# tests/tool_amx's check of AMX's tile product against the bf16 rule.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build/tests/tool_bench build/tests/tool_amx >&2
tools=(build/tests/tool_bench ${1:+"$1"})
field() { python3 -c "import json, sys; d = json.load(sys.stdin); print(' '.join(str(d[k]) for k in sys.argv[1:]))" "$@"; }

echo "# scripts/cpu-rates.sh on $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //') ($(nproc) cores), $(date -u '+%Y-%m-%d %H:%M'), commit $(git rev-parse --short HEAD)"
grep -qw avx512_bf16 /proc/cpuinfo && echo "# avx512_bf16: yes; vendor $(grep -m1 vendor_id /proc/cpuinfo | sed 's/.*: //')"
for t in 1 2; do
    for p in fp32 bf16; do
        printf 'peak %s at %d thread(s): %s GFLOP/s\n' "$p" "$t" \
            "$(OMP_NUM_THREADS=$t build/tests/tool_bench --config small --peak $p | field gflops)"
    done
done
build/tests/tool_amx   # AMX's tile product: its sums against the bf16 mode's, and its rate
shapes=("small:--config small --steps 20 --warmup 3"
        "d64 T64:--config small --d-model 64 --d-ff 256 --seq 64 --vocab 2000 --classes 12 --steps 60 --warmup 5"
        "d64 T8:--config small --d-model 64 --d-ff 256 --seq 8 --vocab 2000 --classes 12 --steps 400 --warmup 20")
precs=(fp32 bf16)
build/tests/tool_amx | grep -q "not run" || precs+=(amx)   # AMX's tiles run here
echo "shape    precision  build                        min ms/step  mean ms/step  GFLOP/s (at the mean)  params_hash"
for s in "${shapes[@]}"; do
    name=${s%%:*} args=${s#*:}
    for p in "${precs[@]}"; do
        for tool in "${tools[@]}"; do
            best=""
            for _ in 1 2 3; do   # the fastest of three: the machine's speed wanders
                # shellcheck disable=SC2086
                line=$(OMP_NUM_THREADS=2 "$tool" $args --precision $p | field ms_per_step_min ms_per_step gflops params_hash)
                if [ -z "$best" ] || awk -v a="${line%% *}" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then best=$line; fi
            done
            read -r ms mean gf hash <<<"$best"
            printf '%-8s %-10s %-28s %11s %13s %22s  %s\n' "$name" "$p" "$tool" "$ms" "$mean" "$gf" "$hash"
        done
    done
done
