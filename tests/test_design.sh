#!/usr/bin/env bash
# test_design.sh: docs/DESIGN.md names only what exists. Every repository
# path it quotes in backticks exists (a glob matches something), every
# section names at least one such file, and every --option it names is in
# ./train --help or a command's --help, unless the page lists it on its
# "Planned options:" line; a planned option that --help already has
# fails too, so the page is updated when the feature lands. The checker is
# also run on copies with a planted missing file, unknown option, stale
# planned option, empty glob and section without a file: each is caught.
source "$(dirname "$0")/lib.sh"
DOC=docs/DESIGN.md
if [ ! -x ./train ]; then echo "skip: ./train is not built (make train)"; exit 77; fi
[ -f "$DOC" ] || { fail "$DOC is missing"; finish test_design; }

# Every option ./train knows: the general help and each command's.
{
    ./train --help
    for cmd in fit $(./train --help | sed -n 's/^  \.\/train \([a-z][a-z-]*\) .*/\1/p' | sort -u); do
        ./train "$cmd" --help
    done
} 2>/dev/null | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u > "$tmp/known"
[ -s "$tmp/known" ] || { fail "no option found in ./train --help"; finish test_design; }

# Repository paths in backticks, one "line<TAB>path" per line.
doc_paths() {
    awk '{ line = $0
           while (match(line, /`[^`]+`/)) {
               n = split(substr(line, RSTART + 1, RLENGTH - 2), w, /[ \t]+/)
               for (i = 1; i <= n; i++)
                   if (w[i] ~ /^(base|formats|nn|model|text|report|run|cli|tests|scripts|data|docs)\// ||
                       w[i] ~ /^(train\.c|model\.c|model\.h|Makefile|README\.md)$/) print NR "\t" w[i]
               line = substr(line, RSTART + RLENGTH)
           } }' "$1"
}

# check_doc FILE: one line per problem on stdout.
check_doc() {
    local doc=$1 line path opt
    local planned
    planned=$(sed -n 's/^Planned options[^:]*:\(.*\)/\1/p' "$doc" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
    while IFS=$'\t' read -r line path; do
        if [[ $path == *'*'* ]]; then compgen -G "$path" >/dev/null || echo "$doc:$line: no file matches $path"
        elif [ ! -e "$path" ]; then echo "$doc:$line: $path does not exist"; fi
    done < <(doc_paths "$doc")
    # each numbered section names a file that implements it
    awk '/^## §/ { if (name != "") print name "\t" body; name = $2; body = ""; next }
         { body = body " " $0 } END { if (name != "") print name "\t" body }' "$doc" > "$tmp/sections"
    while IFS=$'\t' read -r section body; do
        printf '%s\n' "$body" > "$tmp/body"
        [ -n "$(doc_paths "$tmp/body")" ] || echo "$doc: section $section names no file of the repository"
    done < "$tmp/sections"
    # options: known, or planned and not yet known
    sed 's/^Planned options.*//' "$doc" | grep -noE -- '--[a-z][a-z0-9-]*' | while IFS=: read -r line opt; do
        grep -qxF -- "$opt" "$tmp/known" && continue
        grep -qxF -- "$opt" <<<"$planned" && continue
        echo "$doc:$line: $opt is in no --help (nor listed as planned)"
    done
    for opt in $planned; do
        grep -qxF -- "$opt" "$tmp/known" && echo "$doc: $opt is listed as planned but ./train --help has it: describe it as built"
    done
}

check_doc "$DOC" > "$tmp/problems"
if [ -s "$tmp/problems" ]; then
    while read -r p; do fail "$p"; done < "$tmp/problems"
else
    pass "$DOC: $(doc_paths "$DOC" | cut -f 2 | sort -u | wc -l) paths exist, every section names one," \
         "$(sed 's/^Planned options.*//' "$DOC" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u | wc -l) options" \
         "are known or planned"
fi

# The checker catches what it is for: planted faults in copies.
plant() {   # plant NAME PATTERN SED-SCRIPT: the copy's problems must match PATTERN
    sed "$3" "$DOC" > "$tmp/planted.md"
    cmp -s "$DOC" "$tmp/planted.md" && { fail "$1: could not plant it"; return; }
    check_doc "$tmp/planted.md" > "$tmp/planted.txt"   # whole, then searched: grep -q would cut the pipe
    if grep -qE -- "$2" "$tmp/planted.txt"; then pass "$1 is caught: $(grep -m 1 -E -- "$2" "$tmp/planted.txt")"
    else fail "$1 is not caught (problems found: $(head -c 300 "$tmp/planted.txt"))"; fi
}
plant "a missing file" 'text/no_such_file\.c does not exist' '0,/`text\/split\.c`/s//`text\/no_such_file.c`/'
plant "an unknown option" '--no-such-option is in no --help' '0,/`--epochs 30`/s//`--no-such-option 30`/'
plant "a planned option that exists" '--epochs is listed as planned' 's/^Planned options:/& `--epochs`,/'
plant "a glob that matches nothing" 'no file matches nn/\*\.zz' '0,/`nn\/matmul\.h`/s//`nn\/*.zz`/'
plant "a section naming no file" 'section §9 names no file' '/^## §9/,$s/`[^`]*\/[^`]*`/`x`/g; /^## §9/,$s/`Makefile`/`x`/g'

finish test_design
