#!/usr/bin/env bash
# get-data.sh: builds the real datasets (digits, langid) from Debian packages, fetched without root.
#
# Downloads the .debs with `apt-get download` into build/debs, unpacks them with
# `dpkg-deb -x` into build/debs/root (nothing is installed), then writes
#   data/digits/{train,test}.tsv   sklearn's 8x8 digits, 64 pixel tokens 0..16
#   data/langid/{train,test}.tsv   word -> language (12 languages) from word lists
# with a deterministic stratified 80/20 split (data/generate.c does the hashing).
# Needs only what a fresh Debian has (bash, coreutils, gzip, grep, sed, iconv,
# apt-get, dpkg-deb) plus a C compiler. Packages already in build/debs are reused.
# Exit: 0 done; 3 the packages could not be fetched (callers may skip); 1 other errors.
set -euo pipefail
cd "$(dirname "$0")/.."

debs=build/debs
root=$debs/root
tmp=build/data-tmp
seed_pick=1          # which words of a language are kept
seed_split=2         # which examples go to test
test_percent=20
words_per_lang=4000

# language code, Debian package, file in /usr/share/dict
langs=(
    "en wamerican american-english"
    "de wngerman ngerman"
    "fr wfrench french"
    "es wspanish spanish"
    "it witalian italian"
    "pt wportuguese portuguese"
    "nl wdutch dutch"
    "sv wswedish swedish"
    "da wdanish danish"
    "nb wnorwegian bokmaal"
    "pl wpolish polish"
    "ca wcatalan catalan"
)
packages=(python3-sklearn)
for entry in "${langs[@]}"; do
    read -r _ pkg _ <<<"$entry"
    packages+=("$pkg")
done

# 1. Fetch and unpack.
mkdir -p "$debs" "$root"
for pkg in "${packages[@]}"; do
    if compgen -G "$debs/${pkg}_*.deb" >/dev/null; then
        continue
    fi
    echo "get-data: apt-get download $pkg"
    if ! (cd "$debs" && apt-get download "$pkg") >"$debs/download.log" 2>&1; then
        sed 's/^/  | /' "$debs/download.log" >&2
        echo "get-data: cannot fetch the Debian package '$pkg' (no network or no package lists?" \
             "'apt-get update' run as root fixes the latter); the real datasets are not built" >&2
        exit 3
    fi
done
for pkg in "${packages[@]}"; do
    for deb in "$debs/${pkg}"_*.deb; do
        dpkg-deb -x "$deb" "$root"
    done
done

cc=${CC:-cc}
"$cc" -std=c11 -O2 -Wall -Wextra -o build/generate data/generate.c
rm -rf "$tmp"
mkdir -p "$tmp/digits" "$tmp/langid" "$tmp/words"

# 2. digits: 65 comma-separated integers per row (64 pixels 0..16, then the digit).
csv=$(find "$root" -path '*sklearn/datasets/data/digits.csv.gz' | head -n 1)
if [ -z "$csv" ]; then
    echo "get-data: digits.csv.gz not found in python3-sklearn" >&2
    exit 1
fi
gzip -dc "$csv" | awk -F, '
    NF != 65 { printf "get-data: digits.csv.gz line %d: %d fields, expected 65\n", NR, NF > "/dev/stderr"; exit 1 }
    {
        text = ""
        for (i = 1; i <= 65; i++) {
            if ($i !~ /^[0-9]+$/ || $i + 0 > (i < 65 ? 16 : 9)) {
                printf "get-data: digits line %d field %d: bad value %s\n", NR, i, $i > "/dev/stderr"; exit 1
            }
            if (i < 65) text = text (i > 1 ? " " : "") ($i + 0)
        }
        print ($65 + 0) "\t" text
    }' >"$tmp/digits/all.tsv"
for split in train test; do
    printf '# digits %s: 8x8 handwritten digits from scikit-learn (Debian python3-sklearn, UCI optical digits, BSD-3), 64 pixels 0..16 row by row; label = digit. Made by scripts/get-data.sh (stratified %d/%d split).\n' \
        "$split" $((100 - test_percent)) "$test_percent" >"$tmp/digits/$split.tsv"
done
build/generate split "$test_percent" "$seed_split" "$tmp/digits/train.tsv" "$tmp/digits/test.tsv" \
    <"$tmp/digits/all.tsv"

# 3. langid: each list to UTF-8, acronyms and mixed case dropped (an upper-case
# letter after the first), lower-cased, letters only, unique.
for entry in "${langs[@]}"; do
    read -r code pkg file <<<"$entry"
    list=$root/usr/share/dict/$file
    if [ ! -f "$list" ]; then
        echo "get-data: $list not found in $pkg" >&2
        exit 1
    fi
    if iconv -f UTF-8 -t UTF-8 "$list" >/dev/null 2>&1; then enc=UTF-8; else enc=ISO-8859-1; fi
    iconv -f "$enc" -t UTF-8 "$list" \
        | LC_ALL=C.UTF-8 grep -v '.[[:upper:]]' \
        | LC_ALL=C.UTF-8 sed 's/.*/\L&/' \
        | LC_ALL=C.UTF-8 grep -x '[[:alpha:]]\+' \
        | LC_ALL=C sort -u >"$tmp/words/$code"
    echo "get-data: $code ($pkg, $enc): $(wc -l <"$tmp/words/$code") words"
done
# Words in more than one list are dropped (each list is unique already).
cat "$tmp"/words/* | LC_ALL=C sort | LC_ALL=C uniq -d >"$tmp/shared"
echo "get-data: $(wc -l <"$tmp/shared") words are in more than one list and are dropped"
: >"$tmp/langid/all.tsv"
for entry in "${langs[@]}"; do
    read -r code _ _ <<<"$entry"
    LC_ALL=C comm -23 "$tmp/words/$code" "$tmp/shared" \
        | build/generate pick "$words_per_lang" "$seed_pick" >"$tmp/words/$code.picked"
    n=$(wc -l <"$tmp/words/$code.picked")
    if [ "$n" -lt "$words_per_lang" ]; then
        echo "get-data: only $n words for $code" >&2
        exit 1
    fi
    sed "s/^/$code\t/" "$tmp/words/$code.picked" >>"$tmp/langid/all.tsv"
done
for split in train test; do
    printf '# langid %s: word -> language (ISO 639-1 code), %d words per language from Debian word lists (wamerican wngerman wfrench wspanish witalian wportuguese wdutch wswedish wdanish wnorwegian wpolish wcatalan), lower-case letters only, words of several lists dropped; use --tokenizer char. Made by scripts/get-data.sh (stratified %d/%d split).\n' \
        "$split" "$words_per_lang" $((100 - test_percent)) "$test_percent" >"$tmp/langid/$split.tsv"
done
build/generate split "$test_percent" "$seed_split" "$tmp/langid/train.tsv" "$tmp/langid/test.tsv" \
    <"$tmp/langid/all.tsv"

# 4. Move into data/ only now, so a failure never leaves half-written files.
for name in digits langid; do
    mkdir -p "data/$name"
    for split in train test; do
        mv "$tmp/$name/$split.tsv" "data/$name/$split.tsv"
        printf 'get-data: %-22s %5d examples, %d classes\n' "data/$name/$split.tsv" \
            "$(grep -vc '^#' "data/$name/$split.tsv")" \
            "$(grep -v '^#' "data/$name/$split.tsv" | cut -f1 | sort -u | wc -l)"
    done
done
rm -rf "$tmp"
