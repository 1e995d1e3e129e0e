#!/usr/bin/env bash
# test_film.sh: probes recorded while training (RUN/probes.jsonl) and ./train film. Recording changes nothing
# (model and metrics byte-identical with and without probes, at 1 and 2 threads, and under MPI); a run
# stopped after epoch 2 and resumed has the record of an uninterrupted one, also when the stop lost an epoch's
# state after its record was written; the last epoch's attention and saliency are what trace and trace
# --backward print for the final model; film prints a table per probe and its moments; the page loads in
# headless Chromium without a script error and the slider at epoch k shows the weights recorded for epoch k.
# Run from the project root after make: bash tests/test_film.sh. python3 reads the record (skips without).
source "$(dirname "$0")/lib.sh"

[ -x ./train ] || { echo "FAIL: ./train is missing (run make)"; exit 1; }
export OMP_WAIT_POLICY=passive
python=$(command -v python3 || true)
# the negation demo data, 3 epochs of the default model; no --swa, so the final model is the last epoch's
data=(data/negation/train.tsv --epochs 3 --swa 0 --quiet)
numbers() { awk -F, '{ NF -= 2; print }' OFS=, "$1"; }   # metrics.csv without seconds and tokens_per_s

# ---- recording changes nothing, at 1 and 2 threads
for threads in 1 2; do
    ./train "${data[@]}" --threads "$threads" --out "$tmp/p$threads" >"$tmp/p$threads.log" 2>&1 || { cat "$tmp/p$threads.log"; fail "training with probes failed"; }
    ./train "${data[@]}" --threads "$threads" --no-probes --out "$tmp/n$threads" >"$tmp/n$threads.log" 2>&1 || { cat "$tmp/n$threads.log"; fail "training without probes failed"; }
    if cmp -s "$tmp/p$threads/model.safetensors" "$tmp/n$threads/model.safetensors" \
        && [ "$(numbers "$tmp/p$threads/metrics.csv")" = "$(numbers "$tmp/n$threads/metrics.csv")" ] \
        && [ "$(wc -l <"$tmp/p$threads/metrics.csv")" -eq 4 ]; then
        pass "--threads $threads: model.safetensors and metrics.csv (less its time columns) are byte-identical with and without probes"
    else
        fail "--threads $threads: recording probes changed the run"
    fi
done
lines=$(wc -l <"$tmp/p1/probes.jsonl")
[ "$lines" -eq 5 ] && [ ! -e "$tmp/n1/probes.jsonl" ] && cmp -s "$tmp/p1/probes.jsonl" "$tmp/p2/probes.jsonl" \
    && pass "the record has a header and epochs 0-3, the same at 1 and 2 threads; --no-probes writes none" \
    || fail "probes.jsonl: $lines lines, or differs between thread counts"
./train "${data[@]}" --threads 1 --out "$tmp/p1b" >"$tmp/p1b.log" 2>&1
cmp -s "$tmp/p1/probes.jsonl" "$tmp/p1b/probes.jsonl" \
    && pass "the default probes (one validation example per class) are chosen alike by the same seed" \
    || fail "two runs with one seed chose or recorded different probes"

# ---- resume continues the record
./train "${data[@]}" --threads 1 --stop-after 2 --out "$tmp/r" >/dev/null 2>&1
[ "$(wc -l <"$tmp/r/probes.jsonl")" -eq 4 ] || fail "--stop-after 2: the record should hold epochs 0-2"
./train --resume "$tmp/r" --quiet >"$tmp/r.log" 2>&1
cmp -s "$tmp/r/probes.jsonl" "$tmp/p1/probes.jsonl" \
    && pass "stopped after epoch 2 and resumed: the record equals the uninterrupted run's, byte for byte" \
    || { cat "$tmp/r.log"; fail "the resumed run's record differs from the uninterrupted one"; }
# a record one epoch ahead of the state (the state write lost; its numbers made wrong here, so keeping it
# shows) and a torn line: resume drops both and records that epoch again
./train "${data[@]}" --threads 1 --stop-after 2 --out "$tmp/r2" >/dev/null 2>&1
sed -n 5p "$tmp/p1/probes.jsonl" | sed 's/"loss": [-0-9.e]*/"loss": 12345/g' >>"$tmp/r2/probes.jsonl"
printf '{"epoch": 4, "probes": [{"predi' >>"$tmp/r2/probes.jsonl"
./train --resume "$tmp/r2" --quiet >/dev/null 2>&1
cmp -s "$tmp/r2/probes.jsonl" "$tmp/p1/probes.jsonl" \
    && pass "a record ahead of the saved state, ending in a torn line: resume keeps the epochs the state holds" \
    || fail "resume after a lost state write: the record differs from the uninterrupted one"

# ---- given probes; the last epoch against trace and trace --backward
text="the food was not good , bad"
printf 'neg\tthe food was not good , bad\n' >"$tmp/probes.tsv"
./train "${data[@]}" --threads 1 --probe "$text" --probe "good , not bad" --probe-file "$tmp/probes.tsv" \
    --out "$tmp/g" >"$tmp/g.log" 2>&1 || { cat "$tmp/g.log"; fail "training with --probe and --probe-file failed"; }
./train trace --model "$tmp/g" "$text" >"$tmp/trace.txt" 2>&1
./train trace --model "$tmp/g" --backward --label neg "$text" >"$tmp/backward.txt" 2>&1
if [ -z "$python" ]; then
    skip "comparing the record with trace needs python3 (apt-get install python3)"
else
    # trace prints each head's rows as "    qN   TOKEN | w w w ... | top: ..." (%.4f) after "layer L, head H of";
    # trace --backward its saliency sorted, "    N. pos P   TOKEN   +x.xxxxxxe-yy" (%+.6e)
    if "$python" - "$tmp/g/probes.jsonl" "$tmp/trace.txt" "$tmp/backward.txt" <<'EOF'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
head, last = json.loads(lines[0]), json.loads(lines[-1])
probes = [p["text"] for p in head["probes"]]
assert probes == ["the food was not good , bad", "good , not bad", "the food was not good , bad"], probes
assert [p["label"] for p in head["probes"]] == [None, None, "neg"]
assert last["epoch"] == 3
unlabelled, labelled = last["probes"][0], last["probes"][2]
assert labelled["loss"] is not None and unlabelled["loss"] is None
attn, layer, h, rows = labelled["attention"], None, None, 0
for line in open(sys.argv[2]):
    m = re.match(r"\s+layer (\d+), head (\d+) of", line)
    if m:
        layer, h = int(m.group(1)) - 1, int(m.group(2)) - 1
        continue
    m = re.match(r"\s+q(\d+)\s.*?\|((?: \d\.\d{4})+) \|", line)
    if m and layer is not None:
        q = int(m.group(1))
        for k, shown in enumerate(m.group(2).split()):
            if float(shown) != attn[layer][h][q][k]:   # both %.4f of the same float
                sys.exit("layer %d head %d q%d k%d: trace %s, record %r" % (layer + 1, h + 1, q, k, shown, attn[layer][h][q][k]))
        rows += 1
T = len(head["probes"][2]["tokens"])
assert rows == len(attn) * len(attn[0]) * T, "compared %d rows" % rows
sal, seen = labelled["saliency"], 0
for line in open(sys.argv[3]):
    m = re.match(r"\s+\d+\. pos (\d+)\s+\S+\s+([+-]\d\.\d{6}e[+-]\d+)", line)
    if m:
        t, shown = int(m.group(1)), float(m.group(2))
        if abs(shown - sal[t]) > 1e-6 * abs(shown) + 1e-12:
            sys.exit("saliency at %d: trace %r, record %r" % (t, shown, sal[t]))
        seen += 1
assert seen == T, "compared %d saliencies" % seen
assert labelled["saliency_label"] == "neg"
print("compared %d attention rows and %d saliencies" % (rows, seen))
EOF
    then
        pass "the last epoch's attention (every head, every query) and saliency equal what trace and trace --backward print"
    else
        fail "the record's last epoch differs from trace / trace --backward on the final model"
    fi
fi

# ---- ./train film: tables, moments, page and strip
./train film "$tmp/p1" >"$tmp/film.txt" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q '^probe 1: ' "$tmp/film.txt" && grep -q '^probe 2: ' "$tmp/film.txt" \
    && [ "$(grep -cE '^ +[0-3]  (neg|pos) ' "$tmp/film.txt")" -eq 8 ] && [ -s "$tmp/p1/film.html" ] && [ -s "$tmp/p1/film.png" ]; then
    pass "film prints a row per recorded epoch for each probe and writes film.html and film.png"
else
    cat "$tmp/film.txt"; fail "film: exit $rc"
fi
grep -q '^  epoch [1-3]: ' "$tmp/film.txt" && pass "film names moments ($(grep -c '^  epoch ' "$tmp/film.txt") lines)" \
    || fail "film named no moment: $(cat "$tmp/film.txt")"
if grep -Eiq 'https?://|<link|<img|<iframe|src=|@import|url\(' "$tmp/p1/film.html"; then
    fail "the page refers to something outside itself"
else
    pass "the page loads nothing from outside (no address, link, src or import)"
fi
./train film "$tmp/n1" >/dev/null 2>"$tmp/err.txt"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'no probe record' "$tmp/err.txt" && pass "film of a run without probes: exit 2, saying so" \
    || fail "film without a record: exit $rc, $(cat "$tmp/err.txt")"
./train film "$tmp/p1" --html "$tmp/probes.tsv" >/dev/null 2>"$tmp/err.txt"
rc=$?
[ "$rc" -eq 2 ] && grep -q 'not a page film wrote' "$tmp/err.txt" && grep -q 'good , bad' "$tmp/probes.tsv" \
    && pass "film --html over another file: refused, the file kept" || fail "film --html over a data file: exit $rc"
printf 'maybe\tsome text\n' >"$tmp/badprobe.tsv"
./train "${data[@]}" --probe-file "$tmp/badprobe.tsv" --out "$tmp/bad" >/dev/null 2>"$tmp/err.txt"
rc=$?
[ "$rc" -eq 2 ] && grep -q -- "--probe-file $tmp/badprobe.tsv:1: label 'maybe' is not one of the run's 2 classes" "$tmp/err.txt" \
    && [ ! -e "$tmp/bad" ] && pass "a --probe-file label the run lacks: exit 2 naming file and line, before the run directory is made" \
    || fail "bad --probe-file label: exit $rc, $(cat "$tmp/err.txt")"
./train pretrain data/negation/train.tsv --probe x --epochs 1 --out "$tmp/pre" >/dev/null 2>"$tmp/err.txt"
rc=$?
[ "$rc" -eq 2 ] && grep -q -- '--probe cannot act in pretrain' "$tmp/err.txt" \
    && pass "pretrain refuses --probe (exit 2, naming it)" || fail "pretrain --probe: exit $rc, $(cat "$tmp/err.txt")"
# while training: a record whose last line is still being written shows the epochs before it
mkdir -p "$tmp/live" && cp "$tmp/p1/run.json" "$tmp/live/" && head -n 3 "$tmp/p1/probes.jsonl" >"$tmp/live/probes.jsonl"
printf '{"epoch": 2, "probes": [{"predicted": "neg", "pro' >>"$tmp/live/probes.jsonl"
./train film "$tmp/live" >"$tmp/live.txt" 2>&1 && grep -q 'epochs 0 to 1 (the run may still be training)' "$tmp/live.txt" \
    && pass "film of a run still training: the whole epochs so far, a torn last line left out" \
    || fail "film while training: $(cat "$tmp/live.txt")"

# ---- MPI: rank 0 records, the numbers are unchanged
if command -v mpirun >/dev/null 2>&1 && ./train --version | grep -qx 'mpi: yes'; then
    mpi=(mpirun --allow-run-as-root --oversubscribe -np 2 ./train "${data[@]}" --threads 1)
    "${mpi[@]}" --out "$tmp/m" >/dev/null 2>&1 && "${mpi[@]}" --no-probes --out "$tmp/mn" >/dev/null 2>&1
    cmp -s "$tmp/m/model.safetensors" "$tmp/mn/model.safetensors" && [ "$(wc -l <"$tmp/m/probes.jsonl")" -eq 5 ] \
        && [ "$(numbers "$tmp/m/metrics.csv")" = "$(numbers "$tmp/mn/metrics.csv")" ] \
        && pass "MPI, 2 ranks: rank 0 records epochs 0-3; the model and metrics are byte-identical without probes" \
        || fail "MPI: recording probes changed the run, or no record"
else
    skip "the MPI check needs mpirun and ./train built with MPI (apt-get install openmpi-bin libopenmpi-dev, then make clean && make)"
fi

# ---- the page in a browser
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ] || [ -z "$python" ]; then
    skip "the browser checks need chromium and python3 (apt-get install -y chromium python3)"
    finish test_film
fi
dump() {  # page fragment
    timeout 180 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$tmp/profile" \
        --dump-dom "file://$1#$2" 2>"$tmp/browser.err"
}
# the slider moved to epoch k, probe p, head l.h pointed at query q: #probe must hold the recorded row
for view in "0 1 1 1 2" "2 2 2 3 0" "3 1 1 4 5"; do
    read -r k p l h q <<<"$view"
    dump "$tmp/p1/film.html" "epoch=$k&probe=$p&head=$l,$h&query=$q" >"$tmp/dom.html"
    status=$(grep -o 'data-status="[a-z]*"' "$tmp/dom.html" | head -n 1)
    if [ "$status" != 'data-status="rendered"' ] || ! grep -q '<div id="errors"></div>' "$tmp/dom.html"; then
        fail "epoch $k: the page did not finish: ${status:-no status} $(grep -o '<div id="errors">[^<]*' "$tmp/dom.html")"
        continue
    fi
    shown=$(sed -n "s/.*<pre id=\"probe\">epoch $k probe $p layer $l head $h query $q: \([-0-9.e ]*\)<\/pre>.*/\1/p" "$tmp/dom.html")
    want=$("$python" -c '
import json, sys
k, p, l, h, q = map(int, sys.argv[2:])
for line in open(sys.argv[1]).read().splitlines()[1:]:
    r = json.loads(line)
    if r["epoch"] == k: print(" ".join(repr(x) for x in r["probes"][p - 1]["attention"][l - 1][h - 1][q]))' \
        "$tmp/p1/probes.jsonl" "$k" "$p" "$l" "$h" "$q")
    same=$("$python" -c 'import sys; a, b = sys.argv[1].split(), sys.argv[2].split(); print(int(len(a) > 0 and len(a) == len(b) and all(float(x) == float(y) for x, y in zip(a, b))))' "$shown" "$want")
    [ "$same" = 1 ] && pass "slider at epoch $k, probe $p, head $l.$h, query $q: the page shows the $(wc -w <<<"$want") weights recorded for epoch $k" \
        || fail "epoch $k probe $p head $l.$h query $q: page '$shown', record '$want'"
done
sed 's/const H = D.head, E = D.epochs/const H = D.heads, E = D.epochs/' "$tmp/p1/film.html" >"$tmp/broken.html"
dump "$tmp/broken.html" "epoch=1" >"$tmp/dom.html"
grep -q 'data-status="loading"' "$tmp/dom.html" && grep -q '<div id="errors">script error: ' "$tmp/dom.html" \
    && pass "a page whose script throws is caught (status stays loading, #errors names the error)" \
    || fail "a broken page was not noticed"
finish test_film
