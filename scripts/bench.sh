#!/usr/bin/env bash
# Speed of the training step (docs/DESIGN.md §9): for each config, ms/step,
# tokens/s, achieved GFLOP/s and peak RSS of build/tests/tool_bench at 1 and
# 2 threads; where /usr/bin/python3 has torch, PyTorch's figures for the same
# step: the idiomatic model (nn.TransformerEncoder as a user writes it,
# dropout 0: scripts/twin.py bench --idiomatic) and the twin (dropout 0.1 and
# 0), the ratio against the fastest of them, and the machine's float32 matmul
# peak. Then the targets of the "Speed" issue, a sequence-length sweep on the
# small config, inference (./train predict against PyTorch under no_grad),
# the busy machine (an 8-epoch run beside a process keeping one core busy,
# default threads against --threads 1), the probes' recording cost (runs
# with and without --no-probes), and, for information, fastText's
# training time on the langid data next to ours. The same steps and
# inference with --precision bf16 (bfloat16 products, docs/DESIGN.md §4)
# beside PyTorch under torch.autocast bfloat16, against the bfloat16 peak
# (a vdpbf16ps loop, tool_bench --peak bf16; torch.mm in bfloat16). Where
# the CPU has AMX (tests/tool_amx runs its tiles), the steps and inference
# again with --precision amx (AMX's sums).
#
# Writes the table to stdout, build/bench.csv, build/bench_bf16.csv,
# build/bench_amx.csv and build/bench_seq.csv.
# Timings are wall clock: run it on an otherwise idle machine.
# Environment: BENCH_STEPS (timed steps; default 100 for tiny, 30 otherwise),
# BENCH_WARMUP (3), BENCH_THREADS ("1 2"),
# BENCH_CONFIGS ("tiny small wide"), BENCH_SEQS ("32 64 128 256 512"),
# BENCH_TORCH=0 to skip PyTorch, BENCH_TORCH_REPS (3: PyTorch's figures are
# the best of that many runs), BENCH_C_REPS (3: the same for the C figures of
# the training table, the sweep and inference), BENCH_EXTRA=0 to skip
# inference, busy machine and fastText.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-/usr/bin/python3}
TOOL=build/tests/tool_bench
# AMX's tiles run here (CPU, kernel and build), so --precision amx is not the emulation
HAVE_AMX=0
[ -x build/tests/tool_amx ] && ! build/tests/tool_amx | grep -q "not run" && HAVE_AMX=1
# steps_for CONFIG: timed steps per run (the same for C and PyTorch).
steps_for() {
    if [ -n "${BENCH_STEPS:-}" ]; then echo "$BENCH_STEPS"; elif [ "$1" = tiny ]; then echo 100; else echo 30; fi
}
WARMUP=${BENCH_WARMUP:-3}
TORCH_REPS=${BENCH_TORCH_REPS:-3}
C_REPS=${BENCH_C_REPS:-3}
THREADS=${BENCH_THREADS:-"1 2"}
CONFIGS=${BENCH_CONFIGS:-"tiny small wide"}
SEQS=${BENCH_SEQS:-"32 64 128 256 512"}
CSV=build/bench.csv
SEQ_CSV=build/bench_seq.csv
TARGET_THREADS=2

if [ ! -x "$TOOL" ]; then
    echo "bench: $TOOL is missing; run 'make bench' (it builds it first)" >&2
    exit 2
fi

# PyTorch is only a fair yardstick on an optimised BLAS (its OpenMP build, which
# shares torch's thread pool instead of competing with it). Debian's torch uses
# whichever libblas.so.3 the system has (often the slow reference one), so
# unpack Debian's OpenBLAS into build/openblas without root, as the Makefile
# does for stb; scripts/twin.py loads it from there.
if [ "${BENCH_TORCH:-1}" != 0 ] && [ ! -d build/openblas/usr ]; then
    mkdir -p build/openblas
    if (cd build/openblas && apt-get download libopenblas0-openmp >/dev/null 2>&1 &&
        dpkg-deb -x libopenblas0-openmp_*.deb .); then
        echo "unpacked Debian's OpenBLAS into build/openblas for the PyTorch side"
    else
        echo "note: could not fetch libopenblas0-openmp; PyTorch runs on the system BLAS"
    fi
fi

# json_get KEY JSON: the value of a top-level key of a flat one-line JSON
# object (a string without its quotes, or a number).
json_get() {
    local rest=${2#*\"$1\": }
    [ "$rest" = "$2" ] && return 0
    if [ "${rest:0:1}" = '"' ]; then
        rest=${rest:1}
        printf '%s\n' "${rest%%\"*}"
    else
        rest=${rest%%,*}
        printf '%s\n' "${rest%%\}*}"
    fi
}
# calc EXPR: floating-point arithmetic through awk.
calc() { awk "BEGIN { printf \"%.6g\", $1 }"; }
# num DECIMALS VALUE [SUFFIX]: VALUE rounded for the table, or "-" when missing.
num() {
    if [ "$2" = "-" ] || [ -z "$2" ]; then echo "-"; else awk -v v="$2" -v d="$1" -v s="${3:-}" 'BEGIN { printf "%.*f%s", d, v, s }'; fi
}
# mark COND: a check mark when the awk condition holds.
mark() { awk "BEGIN { exit !($1) }" && echo "✓" || echo "✗"; }

# Config table (docs/DESIGN.md §9): vocab seq d_model heads d_ff layers classes batch
config_args() {
    case $1 in
        tiny)  echo "--vocab 64 --seq 32 --d-model 64 --heads 4 --d-ff 256 --layers 2 --classes 4 --batch 32" ;;
        small) echo "--vocab 1000 --seq 64 --d-model 128 --heads 4 --d-ff 512 --layers 2 --classes 2 --batch 32" ;;
        wide)  echo "--vocab 1000 --seq 10 --d-model 512 --heads 8 --d-ff 2048 --layers 1 --classes 2 --batch 32" ;;
        *) echo "bench: unknown config $1" >&2; exit 2 ;;
    esac
}

HAVE_TORCH=0
if [ "${BENCH_TORCH:-1}" != 0 ] && [ -x "$PYTHON" ] && "$PYTHON" -c "import torch" >/dev/null 2>&1; then
    HAVE_TORCH=1
fi

# torch_bench CONFIG THREADS DROPOUT [extra args]: PyTorch tokens/s, the
# best of TORCH_REPS runs, or "-". PyTorch's figure moves a lot between runs
# on this kind of machine (its inference from 17k to 102k tokens/s within
# one hour), so it gets its best run: ratios against it err in its favour.
torch_bench() {
    local cfg=$1 threads=$2 dropout=$3; shift 3
    local out best="-" rep value
    for rep in $(seq "$TORCH_REPS"); do
        if out=$("$PYTHON" scripts/twin.py bench $(config_args "$cfg") "$@" --threads "$threads" \
                 --dropout "$dropout" --steps "$(steps_for "$cfg")" --warmup "$WARMUP" 2>/dev/null); then
            value=$(json_get tokens_per_s "$out")
            [ -n "$value" ] && best=$(awk -v a="$best" -v b="$value" 'BEGIN { print (a == "-" || b + 0 > a + 0 ? b : a) }')
        fi
    done
    echo "$best"
}

# c_bench THREADS ARGS...: the JSON of the fastest of C_REPS runs of the C
# tool (lowest ms_per_step), taken as PyTorch's figures and the peak are (the
# best of a few runs), so that one slow moment of the machine counts against
# neither side. The runs train the same steps, so their parameter hashes must
# agree; when they do not, the hash becomes "runs-differ" and the determinism
# check below fails.
c_bench() {
    local threads=$1; shift
    local rep out best="" best_ms="" hash="" differ=0
    for rep in $(seq "$C_REPS"); do
        out=$(OMP_NUM_THREADS=$threads "$TOOL" "$@") || return 1
        [ -z "$hash" ] && hash=$(json_get params_hash "$out")
        [ "$(json_get params_hash "$out")" != "$hash" ] && differ=1
        if [ -z "$best" ] || awk -v a="$(json_get ms_per_step "$out")" -v b="$best_ms" 'BEGIN { exit !(a < b) }'; then
            best=$out best_ms=$(json_get ms_per_step "$out")
        fi
    done
    [ $differ = 1 ] && best=${best/\"params_hash\": \"$hash\"/\"params_hash\": \"runs-differ\"}
    printf '%s\n' "$best"
}

# median VALUES...: the median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# seconds CMD...: wall time of one run of CMD (output discarded).
seconds() {
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "-"; return; }
    end=$(date +%s.%N)
    calc "$end - $start"
}
BUSY_PID=""
stop_busy() {
    if [ -n "$BUSY_PID" ]; then kill "$BUSY_PID" 2>/dev/null || true; wait "$BUSY_PID" 2>/dev/null || true; fi
    BUSY_PID=""
}
trap stop_busy EXIT

# the fastest of C_REPS runs of ./train predict on DIR's model and lines, in seconds; $2...: its options
predict_fastest() {
    local dir=$1 i ts=()
    shift
    for i in $(seq "$C_REPS"); do ts+=("$(seconds sh -c "./train predict --model $dir/predict-run $* <$dir/predict-lines.txt")"); done
    printf '%s\n' "${ts[@]}" | sort -g | head -1
}

# Inference, the busy machine and fastText (after the training tables).
bench_extra() {
    local reps=${BENCH_REPS:-3} dir=build/bench-extra i
    mkdir -p "$dir"
    # ---- inference: 20000 lines of 62 words (64 tokens with [CLS], [SEP]) on the small config
    echo "Inference: ./train predict, small config, 20000 lines of 62 words (T = 64, batches of 32); whole"
    echo "process (loading, tokenizing, printing), fastest of $C_REPS; PyTorch: forward passes under"
    echo "torch.no_grad on ready token ids, batch 32, $TARGET_THREADS threads."
    awk 'BEGIN { srand(11); for (i = 0; i < 2000; i++) { printf "%s\t", (rand() < 0.5 ? "a" : "b");
                 for (w = 0; w < 62; w++) printf "%sw%d", (w ? " " : ""), int(rand() * 990); print "" } }' >"$dir/predict-train.tsv"
    awk 'BEGIN { srand(12); for (i = 0; i < 20000; i++) {
                 for (w = 0; w < 62; w++) printf "%sw%d", (w ? " " : ""), int(rand() * 990); print "" } }' >"$dir/predict-lines.txt"
    rm -rf "$dir/predict-run"
    local t_pred ptoks pgf pfrac tid ttw pbest pratio
    if ./train "$dir/predict-train.tsv" --epochs 1 --max-len 64 --d-model 128 --heads 4 --d-ff 512 --layers 2 \
           --vocab-size 1000 --val-split 0 --precision fp32 --quiet --out "$dir/predict-run" >/dev/null 2>&1; then
        t_pred=$(predict_fastest "$dir")
        ptoks=$(calc "20000 * 64 / $t_pred")
        pgf=$(calc "${FLOPS[small]:-0} / 3 * $ptoks / 1e9")
        pfrac="-"
        [ "${PEAK[$TARGET_THREADS]:--}" != "-" ] && pfrac=$(calc "100 * $pgf / ${PEAK[$TARGET_THREADS]}")
        tid="-" ttw="-" pratio="-"
        if [ $HAVE_TORCH = 1 ]; then
            tid=$(torch_bench small $TARGET_THREADS 0 --idiomatic --inference)
            ttw=$(torch_bench small $TARGET_THREADS 0 --inference)
            pbest=$(awk -v a="$tid" -v b="$ttw" 'BEGIN { a += 0; b += 0; print (a > b ? a : b) }')
            [ "$pbest" != 0 ] && pratio=$(calc "$ptoks / $pbest")
        fi
        printf "  ./train predict %.2f s = %s tokens/s, %s GFLOP/s (forward) = %s of the peak;\n" "$t_pred" \
            "$(num 0 "$ptoks")" "$(num 1 "$pgf")" "$(num 0 "$pfrac" %)"
        echo "  PyTorch idiomatic $(num 0 "$tid") tokens/s, twin $(num 0 "$ttw") tokens/s"
        [ "$pratio" != "-" ] && echo "  . inference $(num 2 "$pratio")x PyTorch's fastest (for information: the 5x target was dropped)"
        [ "$pfrac" != "-" ] && echo "  $(mark "$pfrac >= 75") inference at $(num 0 "$pfrac")% of the matmul peak (target >= 75%)"
        # the same model and lines with bfloat16 products; PyTorch's forward under autocast
        if [ "${BPEAK[$TARGET_THREADS]:--}" != "-" ]; then
            local t_bf btoks bgf bfrac tac twac
            t_bf=$(predict_fastest "$dir" --precision bf16)
            btoks=$(calc "20000 * 64 / $t_bf")
            bgf=$(calc "${FLOPS[small]:-0} / 3 * $btoks / 1e9")
            bfrac=$(calc "100 * $bgf / ${BPEAK[$TARGET_THREADS]}")
            tac="-" twac="-"
            if [ $HAVE_TORCH = 1 ]; then
                tac=$(torch_bench small $TARGET_THREADS 0 --idiomatic --inference --autocast)
                twac=$(torch_bench small $TARGET_THREADS 0 --inference --autocast)
            fi
            printf "  ./train predict --precision bf16 %.2f s = %s tokens/s, %s GFLOP/s = %s of the bf16 peak;\n" "$t_bf" \
                "$(num 0 "$btoks")" "$(num 1 "$bgf")" "$(num 0 "$bfrac" %)"
            echo "  PyTorch under autocast bfloat16: idiomatic $(num 0 "$tac") tokens/s, twin $(num 0 "$twac") tokens/s"
            echo "  $(mark "$btoks / $ptoks >= 1.8") bf16 inference $(num 2 "$(calc "$btoks / $ptoks")")x float32's (target >= 1.8x)"
            [ $HAVE_TORCH = 1 ] && pbest=$(awk -v a="$pbest" -v b="$tac" -v c="$twac" 'BEGIN { a += 0; b += 0; c += 0
                m = a > b ? a : b; print (c > m ? c : m) }')
        fi
        # the same with AMX's sums, where the CPU has the tiles (emulated elsewhere, and not timed)
        if [ $HAVE_AMX = 1 ]; then
            local t_x xtoks xgf
            t_x=$(predict_fastest "$dir" --precision amx)
            xtoks=$(calc "20000 * 64 / $t_x")
            xgf=$(calc "${FLOPS[small]:-0} / 3 * $xtoks / 1e9")
            printf "  ./train predict --precision amx %.2f s = %s tokens/s, %s GFLOP/s;\n" "$t_x" "$(num 0 "$xtoks")" "$(num 1 "$xgf")"
            [ "${pbest:-0}" != 0 ] && [ $HAVE_TORCH = 1 ] &&
                echo "  . amx inference $(num 2 "$(calc "$xtoks / $pbest")")x PyTorch's fastest, float32 or autocast (for information)"
            echo "  $(mark "$xtoks / $ptoks >= 1.8") amx inference $(num 2 "$(calc "$xtoks / $ptoks")")x float32's (target >= 1.8x, that of bf16)"
        fi
    else
        echo "  - could not train the model for predict: not measured"
    fi
    echo
    # ---- the busy machine
    echo "Busy machine: ./train data/negation/train.tsv --epochs 8, median of $reps wall times, quiet and"
    echo "beside 'yes > /dev/null' (one core kept busy); default threads and --threads 1."
    local mode th key
    declare -A BUSY
    for mode in quiet busy; do
        if [ $mode = busy ]; then yes >/dev/null & BUSY_PID=$!; sleep 0.5; fi
        for th in 0 1; do
            pt=()
            for i in $(seq "$reps"); do
                pt+=("$(seconds ./train data/negation/train.tsv --epochs 8 --threads $th --quiet --overwrite --out "$dir/busy-run")")
            done
            BUSY[$mode,$th]=$(median "${pt[@]}")
        done
        stop_busy
    done
    printf "  %-6s default %6.2f s   --threads 1 %6.2f s   ratio %.2f\n" quiet "${BUSY[quiet,0]}" "${BUSY[quiet,1]}" \
        "$(calc "${BUSY[quiet,0]} / ${BUSY[quiet,1]}")"
    printf "  %-6s default %6.2f s   --threads 1 %6.2f s   ratio %.2f\n" busy "${BUSY[busy,0]}" "${BUSY[busy,1]}" \
        "$(calc "${BUSY[busy,0]} / ${BUSY[busy,1]}")"
    local r=$(calc "${BUSY[busy,0]} / ${BUSY[busy,1]}")
    echo "  $(mark "$r <= 1.25") busy machine: default threads take $(num 2 "$r")x the --threads 1 time (target <= 1.25x)"
    echo
    # ---- the probes' cost: the same runs with and without recording (issue 40's targets)
    echo "Probes: the demo (10 epochs of data/negation, 2 probes) and 20 epochs on 6300 examples (negation, before"
    echo "and rare), each with and without probes (--no-probes), runs interleaved, median of $reps wall times."
    cat data/negation/train.tsv data/before/train.tsv data/rare/train.tsv | grep -v '^#' >"$dir/probes-big.tsv"
    local what with without limit
    for what in demo big; do
        local wt=() wo=() run=(./train data/negation/train.tsv --test data/negation/test.tsv --epochs 10) limit=1.02
        [ $what = big ] && run=(./train "$dir/probes-big.tsv" --epochs 20) limit=1.01
        for i in $(seq "$reps"); do
            wt+=("$(seconds "${run[@]}" --quiet --overwrite --out "$dir/probes-with")")
            wo+=("$(seconds "${run[@]}" --quiet --overwrite --no-probes --out "$dir/probes-without")")
        done
        with=$(median "${wt[@]}") without=$(median "${wo[@]}")
        local ratio=$(calc "$with / $without")
        printf "  %-5s with probes %7.2f s   without %7.2f s   ratio %.4f   %s\n" "$what" "$with" "$without" "$ratio" \
            "$(mark "$ratio <= $limit") (target <= $limit)"
        echo "  $what record: $(wc -c <"$dir/probes-with/probes.jsonl") bytes in $dir/probes-with/probes.jsonl"
    done
    echo
    # ---- fastText on langid, for information
    echo "fastText (for information): training time on data/langid (5 epochs each; ours: --tokenizer char"
    echo "--max-len 24 --d-model 128 --d-ff 512; fastText: -minn 2 -maxn 5 -thread $TARGET_THREADS)."
    if [ -s data/langid/train.tsv ] && command -v fasttext >/dev/null 2>&1; then
        grep -v '^#' data/langid/train.tsv | awk -F'\t' '{ print "__label__" $1 " " $2 }' >"$dir/ft-train.txt"
        grep -v '^#' data/langid/test.tsv | awk -F'\t' '{ print "__label__" $1 " " $2 }' >"$dir/ft-test.txt"
        local t_ft t_ours ft_acc our_acc
        t_ft=$(seconds fasttext supervised -input "$dir/ft-train.txt" -output "$dir/ft-model" -epoch 5 -minn 2 -maxn 5 \
               -thread $TARGET_THREADS -verbose 0)
        ft_acc=$(fasttext test "$dir/ft-model.bin" "$dir/ft-test.txt" 2>/dev/null | awk '/^P@1/ { print $2 }')
        rm -rf "$dir/langid-run"
        t_ours=$(seconds ./train data/langid/train.tsv --tokenizer char --max-len 24 --epochs 5 --d-model 128 --d-ff 512 \
                 --quiet --out "$dir/langid-run")
        our_acc=$(./train eval --model "$dir/langid-run" data/langid/test.tsv 2>/dev/null | awk '/^accuracy/ { print $2 }')
        echo "  fastText $(num 1 "$t_ft") s (test P@1 ${ft_acc:--}); ./train $(num 1 "$t_ours") s (test accuracy ${our_acc:--})"
    else
        echo "  not measured (needs data/langid from 'make data' and the fasttext program: apt-get install -y fasttext)"
    fi
    echo
}

echo "Training step (forward, backward, clip, AdamW) on random tokens, dropout 0.1;"
echo "$WARMUP warm-up steps, then the mean of $(steps_for tiny) (tiny) or $(steps_for small) timed steps; each C figure"
echo "is the fastest of $C_REPS such runs (BENCH_C_REPS), each PyTorch figure of $TORCH_REPS (BENCH_TORCH_REPS)."
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores; load average now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

declare -A PEAK BLAS SEQ_GF PROD_GF PROD_MS
if [ $HAVE_TORCH = 1 ]; then
    for t in $THREADS; do
        out=$("$PYTHON" scripts/twin.py matmul-peak --threads "$t" 2>/dev/null || true)
        PEAK[$t]=$(json_get gflops "$out")
        PEAK[$t]=${PEAK[$t]:--}
        BLAS[$t]="$(json_get method "$out"), BLAS $(json_get blas "$out")"
        echo "matmul peak at $t thread(s): $(num 1 "${PEAK[$t]}") GFLOP/s (float32 square products, best of torch.mm and oneDNN: ${BLAS[$t]})"
    done
    case "${BLAS[*]}" in *netlib*)
        echo "note: PyTorch's linear layers run on the reference (netlib) BLAS here, so its timings are far"
        echo "      below what it does with an optimised one; for a fair comparison: apt-get install -y libopenblas0-openmp" ;;
    esac
else
    echo "PyTorch not importable by $PYTHON: C figures only (apt-get install -y python3-torch)"
fi
# The linear layers alone (tool_bench --products: forward and backward on
# the step's shapes, each the fastest of 20), measured here, beside the
# peak: the host's speed moves between moments, and a peak taken at a
# slow one is below what products reach at a fast one, which would
# flatter every fraction of it. The peak used is the faster of the two.
for t in $THREADS; do
    fastest=0
    for cfg in $CONFIGS; do
        json=$(OMP_NUM_THREADS=$t "$TOOL" --config "$cfg" --products 1 --steps 20) || continue
        PROD_GF[$cfg,$t]=$(json_get gflops "$json") PROD_MS[$cfg,$t]=$(json_get step_ms "$json")
        fastest=$(awk -v a="${PROD_GF[$cfg,$t]}" -v b="$fastest" 'BEGIN { print (a + 0 > b + 0 ? a : b) }')
    done
    if [ "${PEAK[$t]:--}" != "-" ] && awk -v a="$fastest" -v b="${PEAK[$t]}" 'BEGIN { exit !(a > b) }'; then
        echo "  at $t thread(s) our linear layers' products ran at $(num 1 "$fastest") GFLOP/s, above that peak: the peak used is $(num 1 "$fastest")"
        PEAK[$t]=$fastest
    fi
done
echo

mkdir -p build
echo "config,threads,ms_per_step,tokens_per_s,flops_per_token,gflops,peak_gflops,peak_fraction,peak_rss_mb,analytic_mb,torch_idiomatic_tokens_per_s,twin_tokens_per_s_dropout,twin_tokens_per_s_no_dropout,ratio_vs_torch_best,ratio_vs_idiomatic,params_hash" >"$CSV"

fmt="%-6s %3s %9s %10s %9s %6s %7s %8s %11s %10s %10s %7s\n"
printf "$fmt" config thr ms/step tokens/s GFLOP/s %peak RSS_MB limit_MB "torch idiom" "twin p=.1" "twin p=0" ratio
declare -A TOKS MS GFLOPS RSS LIMIT RATIO HASH FLOPS TBEST
FEWER=0
for cfg in $CONFIGS; do
    for t in $THREADS; do
        json=$(c_bench "$t" --config "$cfg" --steps "$(steps_for "$cfg")" --warmup "$WARMUP")
        ms=$(json_get ms_per_step "$json")
        toks=$(json_get tokens_per_s "$json")
        gf=$(json_get gflops "$json")
        # the team the program ended on: fewer threads than asked when other
        # programs kept cores busy (threads.h)
        shown_t=$t
        [ "$(json_get threads "$json")" != "$t" ] && { shown_t="$t*"; FEWER=1; }
        FLOPS[$cfg]=$(json_get flops_per_token "$json")
        rss_mb=$(calc "$(json_get peak_rss_kb "$json") / 1024")
        analytic_mb=$(calc "$(json_get analytic_bytes "$json") / 1048576")
        limit_mb=$(calc "$analytic_mb + 20")
        peak=${PEAK[$t]:--}
        frac="-"
        [ "$peak" != "-" ] && frac=$(calc "100 * $gf / $peak")
        tidiom="-" tdrop="-" tnodrop="-" ratio="-" ratio_idiom="-"
        if [ $HAVE_TORCH = 1 ]; then
            tidiom=$(torch_bench "$cfg" "$t" 0 --idiomatic)
            tdrop=$(torch_bench "$cfg" "$t" 0.1)
            tnodrop=$(torch_bench "$cfg" "$t" 0)
            best=$(awk -v a="$tdrop" -v b="$tnodrop" -v c="$tidiom" 'BEGIN { a += 0; b += 0; c += 0; m = a > b ? a : b; print (c > m ? c : m) }')
            TBEST[$cfg,$t]=$best
            [ "$best" != 0 ] && ratio=$(calc "$toks / $best")
            [ "$tidiom" != "-" ] && ratio_idiom=$(calc "$toks / $tidiom")
        fi
        TOKS[$cfg,$t]=$toks MS[$cfg,$t]=$ms GFLOPS[$cfg,$t]=$gf RSS[$cfg,$t]=$rss_mb LIMIT[$cfg,$t]=$limit_mb
        RATIO[$cfg,$t]=$ratio HASH[$cfg,$t]=$(json_get params_hash "$json")
        printf "$fmt" "$cfg" "$shown_t" "$(num 2 "$ms")" "$(num 0 "$toks")" "$(num 1 "$gf")" "$(num 0 "$frac" %)" \
            "$(num 0 "$rss_mb")" "$(num 0 "$limit_mb")" "$(num 0 "$tidiom")" "$(num 0 "$tdrop")" "$(num 0 "$tnodrop")" \
            "$(num 2 "$ratio" x)"
        echo "$cfg,$t,$ms,$toks,${FLOPS[$cfg]},$gf,$peak,$frac,$rss_mb,$analytic_mb,$tidiom,$tdrop,$tnodrop,$ratio,$ratio_idiom,${HASH[$cfg,$t]}" >>"$CSV"
    done
done
[ "$FEWER" = 1 ] && echo "* ended on fewer threads than asked: other programs kept cores busy (timings not comparable)"
echo
echo "Analytic training cost per token (2 flops per multiply-add; backward = 2x forward):"
for cfg in $CONFIGS; do
    printf "  %-6s %6.3f MFLOP/token\n" "$cfg" "$(calc "${FLOPS[$cfg]} / 1e6")"
done

# ------------------------------------------------------------------ targets
# hashes_agree ARRAY CONFIG WHAT: the check that ARRAY[CONFIG,t] (parameter
# hashes after the run) is the same at every thread count.
hashes_agree() {
    local -n hashes=$1
    local same=1 first="" t
    for t in $THREADS; do
        [ -z "$first" ] && first=${hashes[$2,$t]}
        [ "${hashes[$2,$t]}" = "$first" ] || same=0
    done
    echo "  $(mark "$same == 1") $2 $3 after the run byte-identical at threads {$THREADS} (hash $first)"
}
has_thread() { case " $THREADS " in *" $1 "*) return 0 ;; esac; return 1; }
echo
echo "Targets ($TARGET_THREADS threads, against PyTorch's fastest figure):"
T=$TARGET_THREADS
for cfg in $CONFIGS; do
    has_thread $T || break
    case $cfg in tiny) want_ratio=3 want_peak="" ;; small) want_ratio="" want_peak=75 ;;
                 wide) want_ratio="" want_peak=75 ;; *) continue ;; esac
    r=${RATIO[$cfg,$T]}
    if [ -z "$want_ratio" ]; then
        [ "$r" != "-" ] && echo "  . $cfg tokens/s $(num 2 "$r")x PyTorch's fastest run (for information)"
    elif [ "$r" != "-" ]; then
        echo "  $(mark "$r >= $want_ratio") $cfg tokens/s $(num 2 "$r")x PyTorch's fastest run (target >= ${want_ratio}x)"
    else
        echo "  - $cfg tokens/s vs PyTorch: not measured"
    fi
    if [ -n "$want_peak" ]; then
        peak=${PEAK[$T]:--}
        if [ "$peak" != "-" ]; then
            frac=$(calc "100 * ${GFLOPS[$cfg,$T]} / $peak")
            echo "  $(mark "$frac >= $want_peak") $cfg $(num 0 "${GFLOPS[$cfg,$T]}") GFLOP/s = $(num 0 "$frac")% of the matmul peak (target >= $want_peak%)"
        else
            echo "  - $cfg fraction of matmul peak: no peak measured"
        fi
        if has_thread 1; then
            speedup=$(calc "${TOKS[$cfg,$T]} / ${TOKS[$cfg,1]}")
            echo "  $(mark "$speedup >= 1.8") $cfg speed-up from 1 to $T threads $(num 2 "$speedup")x (target >= 1.8x)"
        fi
    fi
done
for cfg in $CONFIGS; do
    for t in $THREADS; do
        echo "  $(mark "${RSS[$cfg,$t]} <= ${LIMIT[$cfg,$t]}") $cfg at $t thread(s): peak RSS $(num 1 "${RSS[$cfg,$t]}") MB <= analytic + 20 MB = $(num 1 "${LIMIT[$cfg,$t]}") MB"
    done
    hashes_agree HASH "$cfg" parameters
done

# The linear layers alone, for information: what the products reach without
# the rest of the step (measured beside the peak, above).
echo
echo "The linear layers alone (in_proj, out_proj, FFN; forward and backward on the step's shapes), for information:"
for cfg in $CONFIGS; do
    for t in $THREADS; do
        gf=${PROD_GF[$cfg,$t]:-}
        [ -n "$gf" ] || continue
        frac="-"
        [ "${PEAK[$t]:--}" != "-" ] && frac=$(calc "100 * $gf / ${PEAK[$t]}")
        printf "  %-6s %d thread(s): %6.1f GFLOP/s = %s of the peak; the whole step: %s of it\n" "$cfg" "$t" "$gf" \
            "$(num 0 "$frac" %)" "$(num 0 "$(calc "100 * ${GFLOPS[$cfg,$t]:-0} / $gf")" %)"
    done
done

# a lower precision's targets at TARGET_THREADS: small and wide at least 1.8x float32's tokens/s
# and 4x PyTorch's fastest figure; then its weights' hashes across threads and where its step's
# time goes. $2 to $5 name its tokens/s, ratio, hash and ms-per-step arrays
precision_targets() {
    local name=$1 cfg v r
    local -n toks_of=$2 ratio_of=$3
    for cfg in small wide; do
        case " $CONFIGS " in *" $cfg "*) ;; *) continue ;; esac
        has_thread $TARGET_THREADS || break
        v=$(calc "${toks_of[$cfg,$TARGET_THREADS]} / ${TOKS[$cfg,$TARGET_THREADS]}")
        echo "  $(mark "$v >= 1.8") $cfg $name tokens/s $(num 2 "$v")x float32's (target >= 1.8x)"
        r=${ratio_of[$cfg,$TARGET_THREADS]}
        if [ "$r" != "-" ]; then
            echo "  $(mark "$r >= 4") $cfg $name tokens/s $(num 2 "$r")x PyTorch's fastest, float32 or autocast (target >= 4x)"
        fi
    done
    for cfg in $CONFIGS; do hashes_agree "$4" "$cfg" "$name parameters"; done
    time_split "$name" "$5"
}

# What 1.8x asks of the rest of a lower precision's step at TARGET_THREADS: each step is its linear
# layers (timed alone, tool_bench --products: step_ms) and the rest (the step's time less theirs);
# the precision speeds up only the first. $1 names the precision, $2 its ms-per-step array.
time_split() {
    local name=$1 cfg p32 plo s32 slo need left t=$TARGET_THREADS
    local -n ms_of=$2
    has_thread "$t" || return 0
    echo "Where the $name step's time goes ($t threads): its linear layers timed alone, and the rest (the step less them)"
    for cfg in small wide; do
        case " $CONFIGS " in *" $cfg "*) ;; *) continue ;; esac
        p32=${PROD_MS[$cfg,$t]:-}
        plo=$(json_get step_ms "$(OMP_NUM_THREADS=$t "$TOOL" --config "$cfg" --products 1 --steps 20 --precision "$name" 2>/dev/null || true)")
        [ -n "$p32" ] && [ -n "$plo" ] || continue
        s32=${MS[$cfg,$t]} slo=${ms_of[$cfg,$t]}
        need=$(calc "$s32 / 1.8")
        left=$(awk -v n="$need" -v p="$plo" 'BEGIN { print (n > p ? n - p : 0) }')
        printf "  %-6s float32 %s ms = linear layers %s + the rest %s; %s %s ms = %s + %s\n" "$cfg" "$(num 2 "$s32")" \
            "$(num 2 "$p32")" "$(num 2 "$(calc "$s32 - $p32")")" "$name" "$(num 2 "$slo")" "$(num 2 "$plo")" \
            "$(num 2 "$(calc "$slo - $plo")")"
        printf "         linear layers alone: %s %sx float32's; 1.8x needs a step in %s of %s ms or less, which leaves %s ms for the rest\n" \
            "$name" "$(num 2 "$(calc "$p32 / $plo")")" "$name" "$(num 2 "$need")" "$(num 2 "$left")"
    done
    return 0
}

# ---------------------------------------------------------- bfloat16 products
BF16_CSV=build/bench_bf16.csv
declare -A BPEAK BTOKS BMS BHASH BRATIO BBEST
echo
if OMP_NUM_THREADS=1 "$TOOL" --peak bf16 --steps 1 >/dev/null 2>&1; then
    echo "bfloat16 products (--precision bf16: inputs rounded to bfloat16, sums in float32), the same steps;"
    echo "PyTorch's figures under torch.autocast(\"cpu\", dtype=torch.bfloat16), its own mixed precision."
    for t in $THREADS; do
        loop=$(json_get gflops "$(OMP_NUM_THREADS=$t "$TOOL" --peak bf16 --steps 5 2>/dev/null || true)")
        loop32=$(json_get gflops "$(OMP_NUM_THREADS=$t "$TOOL" --peak fp32 --steps 5 2>/dev/null || true)")
        tmm="-"
        [ $HAVE_TORCH = 1 ] && tmm=$(json_get gflops "$("$PYTHON" scripts/twin.py matmul-peak --threads "$t" --dtype bfloat16 2>/dev/null || true)")
        prod=$(json_get gflops "$(OMP_NUM_THREADS=$t "$TOOL" --config small --products 1 --steps 20 --precision bf16 2>/dev/null || true)")
        # the peak used: the fastest of the loop, torch's bfloat16 product and ours
        BPEAK[$t]=$(awk -v a="${loop:-0}" -v b="${tmm:-0}" -v c="${prod:-0}" 'BEGIN { a += 0; b += 0; c += 0; m = a > b ? a : b; print (c > m ? c : m) }')
        echo "bf16 peak at $t thread(s): $(num 1 "${BPEAK[$t]}") GFLOP/s (vdpbf16ps loop $(num 1 "${loop:--}"), the float32 FMA"
        echo "  loop beside it $(num 1 "${loop32:--}"); torch.mm in bfloat16 $(num 1 "${tmm:--}"); our small config's products $(num 1 "${prod:--}"))"
    done
    echo "config,threads,ms_per_step,tokens_per_s,gflops,bf16_peak_gflops,peak_fraction,vs_fp32,torch_autocast_idiomatic_tokens_per_s,twin_autocast_tokens_per_s,torch_best_tokens_per_s,ratio_vs_torch_best,params_hash" >"$BF16_CSV"
    fmt3="%-6s %3s %9s %10s %9s %6s %8s %14s %12s %7s\n"
    printf "$fmt3" config thr ms/step tokens/s GFLOP/s %peak "vs fp32" "torch ac idiom" "twin ac p=.1" ratio
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            json=$(c_bench "$t" --config "$cfg" --steps "$(steps_for "$cfg")" --warmup "$WARMUP" --precision bf16)
            ms=$(json_get ms_per_step "$json") toks=$(json_get tokens_per_s "$json") gf=$(json_get gflops "$json")
            shown_t=$t
            [ "$(json_get threads "$json")" != "$t" ] && shown_t="$t*"
            frac=$(calc "100 * $gf / ${BPEAK[$t]}")
            vs32=$(calc "$toks / ${TOKS[$cfg,$t]}")
            tac="-" twac="-" best="-" ratio="-"
            if [ $HAVE_TORCH = 1 ]; then
                tac=$(torch_bench "$cfg" "$t" 0 --idiomatic --autocast)
                twac=$(torch_bench "$cfg" "$t" 0.1 --autocast)
                # PyTorch's fastest figure, float32 or autocast
                best=$(awk -v a="$tac" -v b="$twac" -v c="${TBEST[$cfg,$t]:-0}" 'BEGIN { a += 0; b += 0; c += 0; m = a > b ? a : b; print (c > m ? c : m) }')
                [ "$best" != 0 ] && ratio=$(calc "$toks / $best")
            fi
            BTOKS[$cfg,$t]=$toks BMS[$cfg,$t]=$ms BHASH[$cfg,$t]=$(json_get params_hash "$json") BRATIO[$cfg,$t]=$ratio
            BBEST[$cfg,$t]=$best
            printf "$fmt3" "$cfg" "$shown_t" "$(num 2 "$ms")" "$(num 0 "$toks")" "$(num 1 "$gf")" "$(num 0 "$frac" %)" \
                "$(num 2 "$vs32" x)" "$(num 0 "$tac")" "$(num 0 "$twac")" "$(num 2 "$ratio" x)"
            echo "$cfg,$t,$ms,$toks,$gf,${BPEAK[$t]},$frac,$vs32,$tac,$twac,$best,$ratio,${BHASH[$cfg,$t]}" >>"$BF16_CSV"
        done
    done
    echo "Targets for bf16 ($TARGET_THREADS threads):"
    precision_targets bf16 BTOKS BRATIO BHASH BMS
else
    echo "bfloat16 products: not measured (this CPU or build has no AVX-512 BF16; --precision bf16 runs emulated)"
fi

# ---------------------------------------------------------- AMX's tile products
# --precision amx: the bfloat16 inputs summed as tdpbf16ps sums them, where
# tests/tool_amx runs AMX's tiles (elsewhere it runs emulated and is not timed);
# against float32's and bf16's steps above and PyTorch's fastest figure
# (float32, or autocast bfloat16, which oneDNN runs on AMX too).
AMX_CSV=build/bench_amx.csv
rm -f "$AMX_CSV"
declare -A ATOKS AMS AHASH ARATIO
echo
if [ $HAVE_AMX = 1 ]; then
    echo "AMX's tile products (--precision amx: the bfloat16 inputs, summed as AMX's tdpbf16ps sums them), the same steps:"
    echo "config,threads,ms_per_step,tokens_per_s,gflops,vs_fp32,vs_bf16,torch_best_tokens_per_s,ratio_vs_torch_best,params_hash" >"$AMX_CSV"
    fmt4="%-6s %3s %9s %10s %9s %8s %8s %7s\n"
    printf "$fmt4" config thr ms/step tokens/s GFLOP/s "vs fp32" "vs bf16" ratio
    for cfg in $CONFIGS; do
        for t in $THREADS; do
            json=$(c_bench "$t" --config "$cfg" --steps "$(steps_for "$cfg")" --warmup "$WARMUP" --precision amx)
            shown_t=$t
            [ "$(json_get threads "$json")" != "$t" ] && shown_t="$t*"
            ms=$(json_get ms_per_step "$json") toks=$(json_get tokens_per_s "$json") gf=$(json_get gflops "$json")
            vs32=$(calc "$toks / ${TOKS[$cfg,$t]}")
            vs16="-" ratio="-"
            [ -n "${BTOKS[$cfg,$t]:-}" ] && vs16=$(calc "$toks / ${BTOKS[$cfg,$t]}")
            best=${BBEST[$cfg,$t]:-${TBEST[$cfg,$t]:-0}}
            [ "$best" != "-" ] && [ "$best" != 0 ] && ratio=$(calc "$toks / $best")
            ATOKS[$cfg,$t]=$toks AMS[$cfg,$t]=$ms AHASH[$cfg,$t]=$(json_get params_hash "$json") ARATIO[$cfg,$t]=$ratio
            printf "$fmt4" "$cfg" "$shown_t" "$(num 2 "$ms")" "$(num 0 "$toks")" "$(num 1 "$gf")" "$(num 2 "$vs32" x)" \
                "$(num 2 "$vs16" x)" "$(num 2 "$ratio" x)"
            echo "$cfg,$t,$ms,$toks,$gf,$vs32,$vs16,$best,$ratio,${AHASH[$cfg,$t]}" >>"$AMX_CSV"
        done
    done
    echo "Targets for amx ($TARGET_THREADS threads), those of bf16:"
    precision_targets amx ATOKS ARATIO AHASH AMS
else
    echo "AMX's tile products: not measured (tests/tool_amx: no AMX tiles here; --precision amx runs emulated)"
fi

# ---------------------------------------------------------- sequence sweep
echo
echo "Sequence-length sweep, small config, $TARGET_THREADS threads, 2048 tokens per step (batch = 2048 / T):"
echo "T,batch,ms_per_step,us_per_token,tokens_per_s,gflops,torch_us_per_token_no_dropout" >"$SEQ_CSV"
fmt2="%5s %6s %10s %10s %10s %9s %14s\n"
printf "$fmt2" T batch ms/step us/token tokens/s GFLOP/s "torch us/token"
for seq in $SEQS; do
    batch=$(( 2048 / seq )); [ $batch -lt 1 ] && batch=1
    json=$(c_bench "$TARGET_THREADS" --config small --seq "$seq" --batch "$batch" \
           --steps "$(steps_for small)" --warmup "$WARMUP")
    ms=$(json_get ms_per_step "$json")
    toks=$(json_get tokens_per_s "$json")
    us=$(calc "1e6 / $toks")
    gf=$(json_get gflops "$json")
    tus="-"
    if [ $HAVE_TORCH = 1 ]; then
        ttoks=$(torch_bench small $TARGET_THREADS 0 --seq "$seq" --batch "$batch")
        [ "$ttoks" != "-" ] && tus=$(calc "1e6 / $ttoks")
    fi
    printf "$fmt2" "$seq" "$batch" "$(num 2 "$ms")" "$(num 2 "$us")" "$(num 0 "$toks")" "$(num 1 "$gf")" "$(num 2 "$tus")"
    echo "$seq,$batch,$ms,$us,$toks,$gf,$tus" >>"$SEQ_CSV"
    SEQ_GF[$seq]=$gf
done
if [ -n "${SEQ_GF[64]:-}" ] && [ -n "${SEQ_GF[512]:-}" ]; then
    keep=$(calc "100 * ${SEQ_GF[512]} / ${SEQ_GF[64]}")
    echo "  $(mark "$keep >= 95") T = 512 runs at $(num 0 "$keep")% of the GFLOP/s of T = 64 (target >= 95%)"
fi

# ---------------------------------------------------------- pretraining (docs/DESIGN.md §4b)
echo
echo "Pretraining step (15% masked, tied MLM head, dropout 0.1), small config with vocabulary 8000, $TARGET_THREADS threads:"
json=$(OMP_NUM_THREADS=$TARGET_THREADS "$TOOL" --config small --vocab 8000 --mlm 1 --steps "$(steps_for small)" \
       --warmup "$WARMUP")
ptoks=$(json_get tokens_per_s "$json")
ttoks="-"; pratio="-"
if [ $HAVE_TORCH = 1 ]; then
    ttoks=$(torch_bench small $TARGET_THREADS 0.1 --vocab 8000 --mlm)
    [ "$ttoks" != "-" ] && pratio=$(calc "$ptoks / $ttoks")
fi
printf "  C %s tokens/s, PyTorch (same model and head, selected rows only) %s tokens/s: %sx %s\n" \
    "$(num 0 "$ptoks")" "$(num 0 "$ttoks")" "$(num 2 "$pratio")" \
    "$( [ "$pratio" = "-" ] && echo "" || mark "$pratio >= 2" )"
echo "pretrain,$TARGET_THREADS,$(json_get ms_per_step "$json"),$ptoks,,,,,,,$ttoks,,$pratio," >>"$CSV"

echo
[ "${BENCH_EXTRA:-1}" != 0 ] && bench_extra
if command -v mpirun >/dev/null 2>&1 && ./train --version 2>/dev/null | grep -q 'mpi: yes'; then
    bash scripts/bench-mpi.sh
fi
echo "wrote $CSV, ${BF16_CSV}$([ -s "$AMX_CSV" ] && echo ", $AMX_CSV") and $SEQ_CSV"
