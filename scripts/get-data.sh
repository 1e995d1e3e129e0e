#!/usr/bin/env bash
# get-data.sh: builds the real datasets (digits, langid, wordnet, fortunes, and through get-data-more.sh debdesc, manpara, mannames, sentlang) from Debian packages, fetched without root.
#
# Downloads the .debs with `apt-get download` into build/debs, unpacks them with
# `dpkg-deb -x` into build/debs/root (nothing is installed), then writes
#   data/digits/{train,test}.tsv   sklearn's 8x8 digits, 64 pixel tokens 0..16
#   data/langid/{train,test}.tsv   word -> language (12 languages) from word lists
#   data/wordnet/{train,test}.tsv  WordNet definition -> part of speech (noun verb adj adv)
#   data/fortunes/{train,test}.tsv fortune-cookie quote -> the fortune file it is in (7 topics)
# with a deterministic stratified 80/20 split (data/generate.c does the hashing),
# then runs scripts/get-data-more.sh for the four further sets it describes.
# Needs only what a fresh Debian has (bash, coreutils, gzip, grep, sed, iconv,
# apt-get, dpkg-deb, awk) plus a C compiler. Packages already in build/debs are reused.
# Exit: 0 done; 3 the packages could not be fetched (callers may skip); 1 other errors.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/data-lib.sh

debs=build/debs
root=$debs/root
tmp=build/data-tmp
seed_pick=1          # which words of a language are kept
seed_split=2         # which examples go to test
test_percent=20
words_per_lang=4000
glosses_per_pos=3000 # WordNet definitions kept per part of speech (adverbs have about 3600)

# part of speech, WordNet data file (wordnet-base, /usr/share/wordnet)
wordnet_pos=(noun verb adj adv)
# fortune files (fortunes, /usr/share/games/fortunes): the topical ones with
# 600 or more quotes; the grab bags (cookie, fortunes, miscellaneous) are left out
fortune_files=(computers definitions people politics science songs-poems work)

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
packages=(python3-sklearn wordnet-base fortunes)
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
mkdir -p "$tmp/digits" "$tmp/langid" "$tmp/words" "$tmp/wordnet" "$tmp/fortunes"

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

# 4. wordnet: a synset's definition (the gloss without its quoted examples) ->
# its part of speech. Data lines start with the synset offset; lines starting
# with two spaces are the license header. The gloss follows " | "; examples
# start at the first double quote. Satellite adjectives (type s) are in
# data.adj and count as adj. A definition found under two parts of speech is
# dropped from both; then glosses_per_pos per part of speech are picked.
for pos in "${wordnet_pos[@]}"; do
    file=$root/usr/share/wordnet/data.$pos
    if [ ! -f "$file" ]; then
        echo "get-data: $file not found in wordnet-base" >&2
        exit 1
    fi
    LC_ALL=C awk '/^  / { next }
        {
            i = index($0, " | ")
            if (!i) next
            g = substr($0, i + 3)
            q = index(g, "\"")
            if (q) g = substr(g, 1, q - 1)
            gsub(/[ \t]+/, " ", g)
            sub(/^[ ;:,]+/, "", g)
            sub(/[ ;:,]+$/, "", g)
            if (g != "") print g
        }' "$file" | LC_ALL=C sort -u >"$tmp/wordnet/$pos"
done
cat "$tmp"/wordnet/{noun,verb,adj,adv} | LC_ALL=C sort | LC_ALL=C uniq -d >"$tmp/wordnet/shared"
echo "get-data: wordnet: $(wc -l <"$tmp/wordnet/shared") definitions have several parts of speech and are dropped"
: >"$tmp/wordnet/all.tsv"
for pos in "${wordnet_pos[@]}"; do
    LC_ALL=C comm -23 "$tmp/wordnet/$pos" "$tmp/wordnet/shared" \
        | build/generate pick "$glosses_per_pos" "$seed_pick" >"$tmp/wordnet/$pos.picked"
    n=$(wc -l <"$tmp/wordnet/$pos.picked")
    if [ "$n" -lt "$glosses_per_pos" ]; then
        echo "get-data: only $n definitions for $pos" >&2
        exit 1
    fi
    echo "get-data: wordnet $pos: $(wc -l <"$tmp/wordnet/$pos") distinct definitions, $n kept"
    sed "s/^/$pos\t/" "$tmp/wordnet/$pos.picked" >>"$tmp/wordnet/all.tsv"
done
for split in train test; do
    printf '# wordnet %s: definition -> part of speech (noun verb adj adv), %d WordNet 3.0 glosses each without their quoted examples (Debian wordnet-base, WordNet 3.0 license), definitions of several parts of speech dropped. Made by scripts/get-data.sh (stratified %d/%d split).\n' \
        "$split" "$glosses_per_pos" $((100 - test_percent)) "$test_percent" >"$tmp/wordnet/$split.tsv"
done
build/generate split "$test_percent" "$seed_split" "$tmp/wordnet/train.tsv" "$tmp/wordnet/test.tsv" \
    <"$tmp/wordnet/all.tsv"

# 5. fortunes: a quote -> the fortune file it comes from. Quotes are separated
# by lines holding only "%". Overstrike (underlining as "___\b\b\bword" or
# "_\bw", accents as "e\b'") is removed, other control characters become
# spaces, white space runs (line breaks included) become one space. A quote in
# more than one file is dropped from all of them; all the others are kept.
for name in "${fortune_files[@]}"; do
    file=$root/usr/share/games/fortunes/$name
    if [ ! -f "$file" ]; then
        echo "get-data: $file not found in fortunes" >&2
        exit 1
    fi
    LC_ALL=C awk 'BEGIN { RS = "\n%\n" }
        {
            gsub(/_+\b+/, "")
            gsub(/\b+./, "")
            gsub(/[\001-\037\177]/, " ")
            gsub(/ +/, " ")
            sub(/^ /, "")
            sub(/ $/, "")
            if ($0 != "" && $0 != "%") print
        }' "$file" | LC_ALL=C sort -u >"$tmp/fortunes/$name"
done
for name in "${fortune_files[@]}"; do cat "$tmp/fortunes/$name"; done | LC_ALL=C sort | LC_ALL=C uniq -d \
    >"$tmp/fortunes/shared"
echo "get-data: fortunes: $(wc -l <"$tmp/fortunes/shared") quotes are in several files and are dropped"
: >"$tmp/fortunes/all.tsv"
for name in "${fortune_files[@]}"; do
    LC_ALL=C comm -23 "$tmp/fortunes/$name" "$tmp/fortunes/shared" | sed "s/^/$name\t/" >>"$tmp/fortunes/all.tsv"
done
if ! iconv -f UTF-8 -t UTF-8 "$tmp/fortunes/all.tsv" >/dev/null 2>&1; then
    echo "get-data: the fortune files are not valid UTF-8" >&2
    exit 1
fi
for split in train test; do
    printf '# fortunes %s: quote -> the fortune file it is in (%s), every distinct quote of these files of Debian fortunes (BSD fortune-mod data, BSD license), overstrike removed, line breaks as spaces, quotes of several files dropped. Made by scripts/get-data.sh (stratified %d/%d split).\n' \
        "$split" "${fortune_files[*]}" $((100 - test_percent)) "$test_percent" >"$tmp/fortunes/$split.tsv"
done
build/generate split "$test_percent" "$seed_split" "$tmp/fortunes/train.tsv" "$tmp/fortunes/test.tsv" \
    <"$tmp/fortunes/all.tsv"

# 6. Move into data/ only now, so a failure never leaves half-written files.
install_sets get-data "$tmp" digits langid wordnet fortunes
rm -rf "$tmp"

# 7. The further sets (issue 41): their own script, same conventions and exit codes.
bash scripts/get-data-more.sh
