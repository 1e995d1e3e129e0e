#!/usr/bin/env bash
# get-data-more.sh: builds four further real datasets from Debian packages and apt's package list, fetched without root.
#
# Called by scripts/get-data.sh (`make data`); it can also run alone. Downloads
# the .debs with `apt-get download` into build/debs, unpacks each with
# `dpkg-deb -x` into build/debs/pkg/PACKAGE (nothing is installed), then writes
#   data/debdesc/{train,test}.tsv   a package's one-line description -> its archive section
#   data/manpara/{train,test}.tsv   a paragraph (50-300 words) of the Linux man-pages -> the page's section
#   data/mannames/{train,test}.tsv  a man page's NAME line, "what it does" -> its section
#   data/sentlang/{train,test}.tsv  a translated program message -> its language (12 Latin-script languages)
# with a deterministic stratified 80/20 split (data/generate.c does the
# hashing and reads the .mo catalogues). debdesc reads the Packages list of the
# release apt knows (`apt-get update` writes it), so a rebuild gives the same
# bytes for the same list (release version and architecture); the others
# depend only on the package versions. Needs what a fresh Debian has (bash,
# coreutils, gzip, grep, sed, awk, iconv, apt-get, apt-helper, dpkg-deb) plus a
# C compiler. Packages already in build/debs are reused.
# Exit: 0 done; 3 the packages could not be fetched (callers may skip); 1 other errors.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/data-lib.sh

debs=build/debs
pkgroot=$debs/pkg
tmp=build/data-more-tmp
seed_pick=1          # which examples of a class are kept
seed_split=2         # which examples go to test
test_percent=20
debdesc_pick=15000   # descriptions drawn from the whole list (classes keep their shares)
debdesc_min=40       # a section with fewer of them in the draw is left out
manpara_words="50 300"
manpara_min=100      # a section with fewer paragraphs is left out
mannames_min=25      # a section with fewer NAME lines is left out
sentlang_per_lang=1200

# the Linux man-pages project: manpara's paragraphs and part of mannames
manpara_packages=(manpages manpages-dev)
# man pages of tools, daemons and file formats for mannames' sections 1, 5, 7 and 8
mannames_packages=("${manpara_packages[@]}" coreutils util-linux findutils procps e2fsprogs systemd iproute2
    lvm2 openssh-client git-man dpkg apt openssl groff xfsprogs btrfs-progs mtools nfs-common x11-xserver-utils)
# translation catalogues (.mo) for sentlang
sentlang_packages=(vlc-l10n libc-l10n gnupg-l10n util-linux-locales coreutils)
# label, then the locale folders whose catalogues it takes
sentlang_langs=(
    "ca ca" "es es" "gl gl" "it it" "pt pt pt_BR pt_PT" "ro ro"
    "da da" "nb nb" "sv sv"
    "cs cs" "sk sk" "pl pl"
)

# 1. Fetch and unpack, each package into its own folder.
mkdir -p "$debs" "$pkgroot"
for pkg in $(printf '%s\n' "${mannames_packages[@]}" "${sentlang_packages[@]}" | LC_ALL=C sort -u); do
    if ! compgen -G "$debs/${pkg}_*.deb" >/dev/null; then
        echo "get-data-more: apt-get download $pkg"
        if ! (cd "$debs" && apt-get download "$pkg") >"$debs/download.log" 2>&1; then
            sed 's/^/  | /' "$debs/download.log" >&2
            echo "get-data-more: cannot fetch the Debian package '$pkg' (no network or no package lists?" \
                 "'apt-get update' run as root fixes the latter); the further datasets are not built" >&2
            exit 3
        fi
    fi
    debfiles=("$debs/${pkg}"_*.deb)
    if [ ${#debfiles[@]} -ne 1 ]; then
        echo "get-data-more: ${#debfiles[@]} files $debs/${pkg}_*.deb; remove the old ones" >&2
        exit 1
    fi
    # unpacked again when the .deb is another version than the one unpacked
    if [ "$(cat "$pkgroot/$pkg.from" 2>/dev/null)" != "${debfiles[0]##*/}" ]; then
        rm -rf "$pkgroot/$pkg" "$pkgroot/$pkg.from"
        dpkg-deb -x "${debfiles[0]}" "$pkgroot/$pkg"
        echo "${debfiles[0]##*/}" >"$pkgroot/$pkg.from"
    fi
done
# "package version, ..." of the .debs used
versions() { for pkg in "$@"; do basename "$debs/${pkg}"_*.deb .deb; done | sed 's/_[^_]*$//; s/%3a/:/; s/_/ /' | awk '{ printf "%s%s", (NR > 1 ? ", " : ""), $0 }'; }

cc=${CC:-cc}
"$cc" -std=c11 -O2 -Wall -Wextra -o build/generate data/generate.c
rm -rf "$tmp"
mkdir -p "$tmp"/{debdesc,manpara,mannames,sentlang}

# A class's texts found under another class too are dropped from both; prints
# label<TAB>text lines, sorted. Input: label<TAB>text lines.
drop_shared() {
    LC_ALL=C sort -u | awk -F'\t' '{ label[NR] = $1; text[NR] = $2; n[$2]++ }
        END { for (i = 1; i <= NR; i++) if (n[text[i]] == 1) print label[i] "\t" text[i] }' | LC_ALL=C sort
}

# Classes with fewer than min examples are dropped. Input and output: label<TAB>text.
drop_small() {  # min
    awk -F'\t' -v min="$1" '{ label[NR] = $1; line[NR] = $0; n[$1]++ }
        END { for (i = 1; i <= NR; i++) if (n[label[i]] >= min) print line[i] }'
}

# Writes both splits' comment lines, then the stratified split of all.tsv.
split_set() {  # name, comment text (after "# NAME SPLIT: ")
    for split in train test; do
        printf '# %s %s: %s Made by scripts/get-data-more.sh (stratified %d/%d split).\n' \
            "$1" "$split" "$2" $((100 - test_percent)) "$test_percent" >"$tmp/$1/$split.tsv"
    done
    build/generate split "$test_percent" "$seed_split" "$tmp/$1/train.tsv" "$tmp/$1/test.tsv" <"$tmp/$1/all.tsv"
}

# 2. debdesc: the Packages list of the release's main component for this
# machine's architecture (not the -updates or -security suites), as apt keeps
# it (apt-helper decompresses). Each stanza gives Section (without an area such
# as "contrib/") and the first line of Description.
arch=$(dpkg --print-architecture)
list=$(apt-get indextargets --format '$(FILENAME)|$(CODENAME)|$(COMPONENT)|$(ARCHITECTURE)' 'Identifier: Packages' \
    | awk -F'|' -v a="$arch" '$2 !~ /-/ && $3 == "main" && $4 == a { print $1 }' | LC_ALL=C sort | head -n 1)
if [ -z "$list" ] || [ ! -f "$list" ]; then
    echo "get-data-more: apt has no Packages list of a release's main component for $arch ('apt-get update' as root)" >&2
    exit 3
fi
release=${list%_binary-*}
release=${release%_main}
release_file=$(ls "${release}_InRelease" "${release}_Release" 2>/dev/null | head -n 1 || true)
release_desc=$(awk -F': ' '$1 == "Origin" || $1 == "Codename" || $1 == "Version" || $1 == "Date" { printf "%s%s", sep, $2; sep = " " }' \
    "${release_file:-/dev/null}")
echo "get-data-more: debdesc from $list (${release_desc:-release unknown})"
/usr/lib/apt/apt-helper cat-file "$list" | LC_ALL=C awk '
    /^Section:/ { s = $2; sub(/^[a-z-]+\//, "", s) }
    /^Description:/ { d = substr($0, 13); gsub(/[ \t]+/, " ", d); sub(/^ /, "", d); sub(/ $/, "", d) }
    /^$/ { if (s != "" && d != "") print s "\t" d; s = d = "" }
    END { if (s != "" && d != "") print s "\t" d }' | drop_shared >"$tmp/debdesc/unique"
build/generate pick "$debdesc_pick" "$seed_pick" <"$tmp/debdesc/unique" | drop_small "$debdesc_min" >"$tmp/debdesc/all.tsv"
echo "get-data-more: debdesc: $(wc -l <"$tmp/debdesc/unique") distinct descriptions in one section, $debdesc_pick drawn," \
    "$(wc -l <"$tmp/debdesc/all.tsv") kept in sections with $debdesc_min or more"
split_set debdesc "package one-line description -> archive section, $debdesc_pick drawn at random from the Debian Packages list (${release_desc:-?}, main, $arch; descriptions in several sections dropped), sections with fewer than $debdesc_min of them left out."

# 3. The man pages of every package used, as text (scripts/man-text.awk).
for pkg in "${mannames_packages[@]}"; do
    for dir in "$pkgroot/$pkg"/usr/share/man/man[1-9]; do
        [ -d "$dir" ] || continue
        find "$dir" -type f -name '*.gz' | LC_ALL=C sort | while read -r page; do
            printf '.\\" @@ %s %s\n' "$pkg" "${dir##*/man}"
            gzip -dc "$page"
        done
    done
done | LC_ALL=C awk -f scripts/man-text.awk >"$tmp/man.tsv"

# manpara: paragraphs of the Linux man-pages (manpages, manpages-dev) of 50 to
# 300 words; every one kept.
read -r lo hi <<<"$manpara_words"
awk -F'\t' -v pkgs=" ${manpara_packages[*]} " -v lo="$lo" -v hi="$hi" '
    $3 == "para" && index(pkgs, " " $1 " ") { n = split($4, w, " "); if (n >= lo && n <= hi) print $2 "\t" $4 }' \
    "$tmp/man.tsv" | drop_shared | drop_small "$manpara_min" >"$tmp/manpara/all.tsv"
split_set manpara "paragraph of $lo to $hi words -> the section of its man page, from the Linux man-pages ($(versions "${manpara_packages[@]}"); Linux-man-pages-copyleft and others), references' section numbers removed, sections with fewer than $manpara_min paragraphs left out."

# mannames: the NAME line's description (after " - "; the names before it are
# dropped) of every page.
awk -F'\t' '$3 == "name" && (i = index($4, " - ")) { d = substr($4, i + 3); if (d ~ /[A-Za-z]/) print $2 "\t" d }' \
    "$tmp/man.tsv" | drop_shared | drop_small "$mannames_min" >"$tmp/mannames/all.tsv"
split_set mannames "man page NAME description (\"create a child process\", the names dropped) -> its section, from the man pages of ${#mannames_packages[@]} Debian packages (${mannames_packages[*]}), sections with fewer than $mannames_min left out."

# 4. sentlang: the translations in the packages' catalogues, printf directives
# (%s, %1$d) and Qt's (%1) and accelerators (&File) removed, white space runs as one space; messages
# of 4 to 40 words, 4 or more of them with a letter. A message found in two
# languages is dropped from both; then sentlang_per_lang per language are drawn.
: >"$tmp/sentlang/every"
for entry in "${sentlang_langs[@]}"; do
    read -r code dirs <<<"$entry"
    files=()
    for pkg in "${sentlang_packages[@]}"; do
        for d in $dirs; do
            for mo in "$pkgroot/$pkg"/usr/share/locale/"$d"/LC_MESSAGES/*.mo; do
                [ -f "$mo" ] && files+=("$mo")
            done
        done
    done
    [ ${#files[@]} -gt 0 ] || { echo "get-data-more: no catalogue for $code" >&2; exit 1; }
    build/generate mo "${files[@]}" \
        | LC_ALL=C sed 's/%%/\x01/g; s/%[-+#0-9.$*]*[hlLqjzt]*[a-zA-Z]//g; s/%[0-9]\+//g; s/\x01/%/g; s/&\([[:alpha:]]\)/\1/g
                        s/[[:space:]]\{1,\}/ /g; s/^ //; s/ $//' \
        | LC_ALL=C awk -v code="$code" 'NF >= 4 && NF <= 40 {
              k = 0; for (i = 1; i <= NF; i++) if ($i ~ /[A-Za-z]/) k++
              if (k >= 4) print code "\t" $0 }' >>"$tmp/sentlang/every"
done
if ! iconv -f UTF-8 -t UTF-8 "$tmp/sentlang/every" >/dev/null 2>&1; then
    echo "get-data-more: a catalogue's translations are not valid UTF-8" >&2
    exit 1
fi
drop_shared <"$tmp/sentlang/every" >"$tmp/sentlang/unique"
: >"$tmp/sentlang/all.tsv"
for entry in "${sentlang_langs[@]}"; do
    read -r code _ <<<"$entry"
    awk -F'\t' -v c="$code" '$1 == c' "$tmp/sentlang/unique" | build/generate pick "$sentlang_per_lang" "$seed_pick" \
        >"$tmp/sentlang/$code"
    n=$(wc -l <"$tmp/sentlang/$code")
    echo "get-data-more: sentlang $code: $(awk -F'\t' -v c="$code" '$1 == c' "$tmp/sentlang/unique" | wc -l) distinct messages, $n kept"
    if [ "$n" -lt "$sentlang_per_lang" ]; then
        echo "get-data-more: only $n messages for $code" >&2
        exit 1
    fi
    cat "$tmp/sentlang/$code" >>"$tmp/sentlang/all.tsv"
done
split_set sentlang "translated program message -> language ($(for e in "${sentlang_langs[@]}"; do printf '%s ' "${e%% *}"; done | sed 's/ $//'); all Latin script), $sentlang_per_lang messages of 4 to 40 words per language from the .mo catalogues of $(versions "${sentlang_packages[@]}"), printf directives removed, messages of several languages dropped."

# 5. Move into data/ only now, so a failure never leaves half-written files.
install_sets get-data-more "$tmp" debdesc manpara mannames sentlang
rm -rf "$tmp"
