#!/usr/bin/env bash
# test_bpe_twin.sh: text/bpe.c and bpe_learn.c (through tests/tool_bpe) against the plain
# Python reference scripts/bpe_ref.py, written from the spec alone. Learns on
# (a) a synthetic corpus made here (mixed case, punctuation, literal
# specials, TAB labels, accents, CJK, 4-byte code points and U+2581 itself,
# which makes merges whose result is already a symbol) and (b) real English
# text (four licenses from /usr/share/common-licenses), for vocab sizes 300
# and 2000 and min_freq 1 and 3. Passes only when the vocabularies, the
# merges and the ids of every line are identical, and so are the rows of
# BPE-dropout (--bpe-dropout, text/bpe_dropout.h) at p 0.3 with max_len 24
# (short enough that some splits do not fit).
#
# Builds nothing: the tool is $BPE_TOOL (default build/tests/tool_bpe).
# Skipped (exit 77) when python3 is missing.
source "$(dirname "$0")/lib.sh"
tool=${BPE_TOOL:-build/tests/tool_bpe}
python=$(command -v python3 || true)
if [ -z "$python" ]; then
    echo "skip: no python3 for the reference scripts/bpe_ref.py (apt-get install python3)"
    exit 77
fi
if [ ! -x "$tool" ]; then
    echo "FAIL: no tool at $tool (make build/tests/tool_bpe, or set BPE_TOOL)"
    exit 1
fi

# (a) Synthetic: 3000 lines of words drawn by a fixed LCG from syllables.
awk 'BEGIN {
    n = split("lo w er new est wid th e in ga ta Ka ré ß 日本 語 ▁ a▁b ▁x 😀 x y [CLS] [MASK] [SEP] , . ! ( ) - __ THE The", syl, " ")
    seed = 12345
    for (line = 0; line < 3000; line++) {
        seed = (seed * 75 + 74) % 65537
        words = 1 + int(seed / 7) % 9
        out = (line % 5 == 0) ? "label" (line % 3) "\t" : ""
        for (w = 0; w < words; w++) {
            word = ""
            seed = (seed * 75 + 74) % 65537
            k = 1 + int(seed / 7) % 4
            for (s = 0; s < k; s++) {
                seed = (seed * 75 + 74) % 65537
                word = word syl[1 + int(seed / 7) % n]
            }
            out = out (w ? " " : "") word
        }
        print out
    }
}' > "$tmp/synthetic.txt"

# (b) Real text: licenses every Debian system has.
real="$tmp/licenses.txt"
for f in GPL-3 Apache-2.0 MPL-2.0 Artistic; do
    [ -f "/usr/share/common-licenses/$f" ] && cat "/usr/share/common-licenses/$f" >> "$real"
done
if [ ! -s "$real" ]; then
    echo "FAIL: /usr/share/common-licenses holds none of the expected texts"
    exit 1
fi

for corpus in "$tmp/synthetic.txt" "$real"; do
    for vocab in 300 2000; do
        for min_freq in 1 3; do
            name="$(basename "$corpus" .txt) vocab_size=$vocab min_freq=$min_freq"
            if ! "$tool" "$corpus" "$vocab" "$min_freq" 0.3 11 24 > "$tmp/c.out"; then
                fail "$name: tool_bpe failed"; continue
            fi
            if ! "$python" scripts/bpe_ref.py "$corpus" "$vocab" "$min_freq" 0.3 11 24 > "$tmp/py.out"; then
                fail "$name: bpe_ref.py failed"; continue
            fi
            counts=$(grep -E '^(vocab|merges|ids|dropout) [0-9]+$' "$tmp/c.out" | tr '\n' ' ')
            if cmp -s "$tmp/c.out" "$tmp/py.out"; then
                pass "$name: identical vocab, merges, ids and dropout rows"
                echo "REPORT bpe twin $name: identical ($counts)"
            else
                fail "$name: C and Python differ ($counts); first differences:"
                diff "$tmp/c.out" "$tmp/py.out" | head -n 10
            fi
        done
    done
done
finish test_bpe_twin
