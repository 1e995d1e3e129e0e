#!/usr/bin/env bash
# test_backward.sh: `./train trace --backward`: every stage of the gradient walk is printed; the live
# finite-difference check (in double) passes for post/pre norm, mean/cls pooling, relu/gelu, sinusoidal/
# learned/no PE; a ./train with one wrong sign planted in LayerNorm's backward (build/mutant/train, built by
# make test) fails it; the saliency equals PyTorch autograd's on the same weights (scripts/twin.py).
# Run from the project root after make test (or make train build/mutant/train): bash tests/test_backward.sh.
source "$(dirname "$0")/lib.sh"

[ -x ./train ] || { echo "FAIL: ./train is missing (run make)"; exit 1; }
# one thread: on a loaded machine OpenMP threads only wait for each other
tiny=(--d-model 16 --heads 2 --d-ff 32 --layers 2 --threads 1)
export OMP_NUM_THREADS=1

# x before y or y before x: the label needs word order
order_tsv 11 300 5 >"$tmp/order.tsv"

# The relative errors of the live check's lines; prints "n worst" and fails unless all n are below 1e-6.
check_errors() {  # trace-output expected-n
    awk -v want="$2" '
        /live gradient check/ { on = 1; next }
        on && /^ +check: / { on = 0 }
        on && / (ok|FAIL)$/ { n++; e = $(NF - 1) + 0; if (e > worst) worst = e; if ($NF != "ok" || e >= 1e-6) bad = 1 }
        END { print n + 0, worst + 0; exit bad || n != want }' "$1"
}

# Every stage of the walk, for a model of L layers: logits, pooled, encoder output (+ final LN for pre),
# two per layer; the parameter table has one row per tensor.
check_stages() {  # trace-output layers pre(0|1) tensors
    local want=$((3 + $3 + 2 * $2)) got rows
    got=$(grep -c '^\[7\.[0-9]*\] gradient at ' "$1")
    rows=$(awk '/gradient of every parameter tensor/ { on = 1; next } on && /^$/ { on = 0 } on && /^    [a-z]/ && !/^    tensor/ { n++ } END { print n + 0 }' "$1")
    [ "$got" -eq "$want" ] && [ "$rows" -eq "$4" ] && grep -q '^\[7\] backward: the loss for label' "$1" \
        && grep -q 'rule: softmax cross-entropy' "$1" && grep -q "the embedding sum x: " "$1" \
        && grep -q 'dA = dO V^T, dS = A (dA - rowsum(A dA))' "$1" && grep -q '^\[7\.[0-9]*\] saliency' "$1"
}

# ---- tiny trained runs: post/relu/mean/sinusoidal and pre/gelu/cls/learned
./train "$tmp/order.tsv" --epochs 3 --lr 0.01 --batch-size 16 "${tiny[@]}" --quiet --out "$tmp/post" >"$tmp/fit.log" 2>&1 \
    || { cat "$tmp/fit.log"; fail "training the post-norm run failed"; }
./train "$tmp/order.tsv" --epochs 3 --lr 0.01 --batch-size 16 "${tiny[@]}" --quiet --norm pre --activation gelu --pool cls \
    --pe learned --out "$tmp/pre" >"$tmp/fit2.log" 2>&1 || { cat "$tmp/fit2.log"; fail "training the pre-norm run failed"; }

# ---- 1. the live check passes in every configuration, trained and fresh
n_tensors_post=$((1 + 12 * 2 + 2)); n_tensors_pre=$((1 + 1 + 12 * 2 + 2 + 2))
run_case() {  # name, expected tensors, pre, trace arguments...
    local name=$1 tensors=$2 pre=$3; shift 3
    if ./train trace "$@" >"$tmp/$name.txt" 2>"$tmp/$name.err"; then
        if res=$(check_errors "$tmp/$name.txt" 4); then
            pass "$name: the live check's 4 gradients agree (worst relative error ${res#* })"
            echo "REPORT backward check $name: worst relative error ${res#* } (tolerance 1e-6)"
        else fail "$name: live check: $res"; grep -A8 'live gradient check' "$tmp/$name.txt"; fi
        check_stages "$tmp/$name.txt" 2 "$pre" "$tensors" && pass "$name: every stage, rule and parameter tensor is printed" \
            || fail "$name: a stage, rule or parameter row is missing"
    else
        cat "$tmp/$name.err"; fail "$name: trace --backward failed"
    fi
}
run_case post-relu-mean-sinusoidal "$n_tensors_post" 0 --model "$tmp/post" --backward --label xy "a x b y c"
run_case pre-gelu-cls-learned "$n_tensors_pre" 1 --model "$tmp/pre" --backward --label yx "a x b y c"
run_case fresh-post-gelu-cls-none "$n_tensors_post" 0 --untrained "${tiny[@]}" --activation gelu --pool cls --pe none \
    --backward --label "class 1" "the cat sat on the mat"
run_case fresh-pre-relu-mean-sinusoidal $((n_tensors_post + 2)) 1 --untrained "${tiny[@]}" --norm pre --seed 5 \
    --backward "the cat sat on the mat"
grep -q "(--label not given: the backward differentiates the loss of the predicted label 'class " \
    "$tmp/fresh-pre-relu-mean-sinusoidal.txt" && pass "without --label the predicted label is differentiated, and said so" \
    || fail "no note about the predicted label"
# the forward part is unchanged by --backward
./train trace --model "$tmp/post" "a x b y c" >"$tmp/plain.txt" 2>&1
echo >>"$tmp/plain.txt"   # the blank line before [7]
sed -n '/^\[7\] backward/q;p' "$tmp/post-relu-mean-sinusoidal.txt" | cmp -s - "$tmp/plain.txt" \
    && pass "the forward walk prints the same with and without --backward" || fail "--backward changed the forward walk"

# a d_model 2 model: LayerNorm over two features passes almost nothing back (gradients of 1e-17, central
# differences of rounding noise); the check judges gradients below what it resolves against that floor and
# passes, saying so, where a relative error of 1 failed it before
./train "$tmp/order.tsv" --epochs 1 --d-model 2 --heads 1 --d-ff 4 --layers 2 --threads 1 --quiet --out "$tmp/d2" \
    >/dev/null 2>&1 || fail "training the d_model 2 run failed"
if ./train trace --model "$tmp/d2" --backward "a x b y c" >"$tmp/d2.txt" 2>"$tmp/d2.err" &&
    grep -q "the smallest a central difference resolves at this loss" "$tmp/d2.txt"; then
    pass "d_model 2: gradients under the check's resolution are judged against its floor: $(grep -o '[0-9] gradients* .* under [0-9.e+-]*' "$tmp/d2.txt")"
else
    fail "d_model 2: trace --backward: $(cat "$tmp/d2.err"; grep -A9 'live gradient check' "$tmp/d2.txt")"
fi

# ---- 1b. a check whose step straddles a ReLU kink (this text and seed put a
# ReLU input within h = 1e-5 of 0 for the input probe) is taken again at a
# 100 times smaller step and passes, saying so; the planted bug below still fails
kink_text="hello world x [MASK] a very long sentence indeed that goes on"
if ./train trace --untrained --backward "$kink_text" >"$tmp/kink.txt" 2>"$tmp/kink.err" && res=$(check_errors "$tmp/kink.txt" 4) \
        && grep -q "as a kink of the loss within the step makes it" "$tmp/kink.txt"; then
    pass "a check across a ReLU kink: retried at h = 1e-7, 4 of 4 agree (worst ${res#* })"
else
    fail "kink case: $(cat "$tmp/kink.err"); $(sed -n '/live gradient/,/check:/p' "$tmp/kink.txt")"
fi

# ---- 2. a wrong sign planted in LayerNorm's backward fails the check
if [ -x build/mutant/train ]; then
    for run in post pre; do
        build/mutant/train trace --model "$tmp/$run" --backward --label xy "a x b y c" >"$tmp/mutant.txt" 2>"$tmp/mutant.err"
        rc=$?
        n_fail=$(grep -c ' FAIL$' "$tmp/mutant.txt")
        if [ "$rc" -eq 1 ] && [ "$n_fail" -ge 1 ] && grep -q 'gradient checks failed' "$tmp/mutant.err"; then
            pass "$run: with LayerNorm's backward sign flipped the live check fails ($n_fail of 4 checks, exit 1)"
            echo "REPORT backward check with a planted wrong sign ($run-norm): $n_fail of 4 checks fail, exit $rc"
        else
            fail "$run: the planted wrong sign went unnoticed (exit $rc, $n_fail failed checks)"
        fi
    done
else
    fail "build/mutant/train is missing: make test builds it (or: make build/mutant/train)"
fi

# ---- 3. the saliency equals PyTorch autograd's on the same weights
# ids from section [1], saliency by position from the ranking of the last section
ids_of() { awk '/^\[1\] tokens/ { on = 1; next } /\[PAD\] \(id 0\)/ { on = 0 } on && /^ +[0-9]+ / { printf "%s%s", n++ ? "," : "", $3 }' "$1"; }
saliency_of() {
    awk '/^\[7\.[0-9]+\] saliency/ { on = 1; next }
         on && /^ +[0-9]+\. pos [0-9]+ / { for (i = 4; i <= NF; i++) if ($i ~ /^[+-][0-9]\.[0-9]+e[+-][0-9]+$/) s[$3 + 0] = $i; n++ }
         END { for (t = 0; t < n; t++) print s[t] }' "$1"
}
if /usr/bin/python3 -c "import torch" >/dev/null 2>&1; then
    for case in "post xy a x b y c" "post yx y d e x f" "pre yx a x b y c" "pre xy h g x e y f a"; do
        read -r run label text <<<"$case"
        ./train trace --model "$tmp/$run" --backward --label "$label" "$text" >"$tmp/sal.txt" 2>&1 || { fail "trace $case"; continue; }
        class=$( [ "$label" = xy ] && echo 0 || echo 1 )
        saliency_of "$tmp/sal.txt" >"$tmp/c.txt"
        for dtype in float32 float64; do
            /usr/bin/python3 scripts/twin.py saliency "$tmp/$run/model.safetensors" --ids "$(ids_of "$tmp/sal.txt")" \
                --label "$class" --dtype "$dtype" >"$tmp/torch_$dtype.txt" || fail "twin.py saliency failed"
        done
        res=$(paste "$tmp/c.txt" "$tmp/torch_float32.txt" "$tmp/torch_float64.txt" | awk '
            function abs(x) { return x < 0 ? -x : x }
            { n++; d32 = abs($1 - $2); d64 = abs($1 - $3); if (d32 > w32) w32 = d32; if (d64 > w64) w64 = d64
              if (abs($3) > top) top = abs($3) }
            END { printf "%d %.2e %.2e %.2e", n, w32, w64, top; exit !(n >= 3 && w32 <= 1e-4 * top && w64 <= 1e-4 * top) }')
        read -r n w32 w64 top <<<"$res"
        if [ "$n" -ge 3 ] && awk -v a="$w32" -v b="$w64" -v t="$top" 'BEGIN { exit !(a <= 1e-4 * t && b <= 1e-4 * t) }'; then
            pass "$run '$text' toward $label: $n saliencies equal PyTorch autograd's (largest difference $w32 float32, $w64 float64; largest |s| $top)"
        else
            fail "$run '$text': saliency differs from PyTorch: $res"; paste "$tmp/c.txt" "$tmp/torch_float32.txt" "$tmp/torch_float64.txt"
        fi
        echo "REPORT saliency vs torch autograd, $run-norm '$text' toward $label: max |C - torch| $w32 (float32), $w64 (float64), largest |s| $top; tolerance 1e-4 x largest"
    done
else
    skip "saliency against PyTorch: /usr/bin/python3 cannot import torch (apt-get install -y python3-torch)"
fi

# ---- 4. usage errors exit 2 with a message
expect_usage() {  # description, grep pattern, command...
    local what=$1 pattern=$2; shift 2
    "$@" >"$tmp/usage.out" 2>"$tmp/usage.err"
    local rc=$?
    if [ "$rc" -eq 2 ] && grep -q "$pattern" "$tmp/usage.err"; then pass "$what: exit 2"
    else fail "$what: exit $rc, stderr: $(cat "$tmp/usage.err")"; fi
}
expect_usage "--label without --backward" 'add --backward' ./train trace --model "$tmp/post" --label xy "a x"
expect_usage "--label that is not a label" "its labels are 'xy', 'yx'" ./train trace --model "$tmp/post" --backward --label zz "a x"
expect_usage "a text that is not UTF-8 (predict refuses it too)" "the text to trace: invalid UTF-8" \
    ./train trace --model "$tmp/post" $'a \xff x'
expect_usage "--png naming a .png file" "png names a folder for the pictures .*e.g. --png $tmp/x\$" \
    ./train trace --model "$tmp/post" --png "$tmp/x.png" "a x"
: >"$tmp/a-file"
expect_usage "--png naming a file that exists (as --out does)" "png $tmp/a-file: it exists and is not a folder" \
    ./train trace --model "$tmp/post" --png "$tmp/a-file" "a x"

finish test_backward
