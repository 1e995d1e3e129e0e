# man-text.awk: man pages' roff source to plain text, for scripts/get-data-more.sh.
# Input: pages concatenated, each after a line `.\" @@ PACKAGE SECTION`.
# Output, one a line: PACKAGE<TAB>SECTION<TAB>name<TAB>text for each paragraph of
# the NAME section, PACKAGE<TAB>SECTION<TAB>para<TAB>text for each prose
# paragraph elsewhere. Code (.nf/.EX), tables (.TS) and the SYNOPSIS, LIBRARY,
# SEE ALSO, COLOPHON, AUTHORS, REPORTING BUGS and COPYRIGHT sections are left
# out. Font changes and other escapes are removed, and so are the section
# numbers of references, "fork(2)" becoming "fork", so that no page names its
# own section in its text.
function flush() {
    gsub(/\([0-9][a-z]*\)/, "", para)
    gsub(/[ \t]+/, " ", para)
    sub(/^ /, "", para)
    sub(/ $/, "", para)
    if (para != "" && sect == "NAME") print pkg "\t" man "\tname\t" para
    else if (para != "" && sect !~ /^(SYNOPSIS|LIBRARY|SEE ALSO|COLOPHON|AUTHORS?|REPORTING BUGS|COPYRIGHT)$/)
        print pkg "\t" man "\tpara\t" para
    para = ""
}
function unescape(s) {
    sub(/\\$/, "", s)                              # line continuation
    gsub(/\\".*/, "", s)                           # comment
    gsub(/\\f(\[[^]]*\]|\(..|.)/, "", s)           # font changes
    gsub(/\\s[-+]?[0-9]/, "", s)                   # size changes
    gsub(/\\-/, "-", s)
    gsub(/\\\(em|\\\[em\]|\\\(en|\\\[en\]/, "-", s)
    gsub(/\\\(aq|\\\[aq\]|\\\(cq|\\\[cq\]|\\\(oq|\\\[oq\]/, "'", s)
    gsub(/\\\(dq|\\\[dq\]|\\\(lq|\\\[lq\]|\\\(rq|\\\[rq\]/, "\"", s)
    gsub(/\\\[[^]]*\]|\\\(..|\\\*\(..|\\\*\[[^]]*\]|\\\*./, "", s)   # other glyphs and strings
    gsub(/\\[ ~0]/, " ", s)
    gsub(/\\[&:%c|^,\/]/, "", s)
    gsub(/\\e/, "\\", s)
    gsub(/\\./, "", s)
    return s
}
# A macro line's arguments, quotes removed; alternating-font macros (.BR, ...)
# join them without spaces.
function args(line, join,    out, n, a, q) {
    sub(/^\.[A-Za-z]+[ \t]*/, "", line)
    out = ""
    n = 0
    while (line != "") {
        if (substr(line, 1, 1) == "\"") {
            q = index(substr(line, 2), "\"")
            if (!q) q = length(line)
            a = substr(line, 2, q - 1)
            line = substr(line, q + 2)
        } else if ((q = match(line, /[ \t]/))) {
            a = substr(line, 1, q - 1)
            line = substr(line, q)
        } else {
            a = line
            line = ""
        }
        sub(/^[ \t]+/, "", line)
        out = out (n++ && !join ? " " : "") a
    }
    return out
}
/^\.\\" @@ / { flush(); pkg = $3; man = $4; sect = ""; skip = 0; next }
/^\.\\"/ || /^'\\"/ { next }
/^\.(nf|EX|TS)/ { flush(); skip = 1; next }
/^\.(fi|EE|TE)/ { skip = 0; next }
skip { next }
/^\.S[HS]/ { flush(); if ($0 ~ /^\.SH/) sect = toupper(unescape(args($0, 0))); next }
/^\.(PP|P|LP|TP|IP|HP|sp|TQ|RS|RE|in|br)([ \t]|$)/ {
    flush()
    if ($0 ~ /^\.IP/) {                            # a tag other than a bullet or number starts the paragraph
        t = unescape(args($0, 0))
        sub(/[ \t]+[0-9]+$/, "", t)
        if (t ~ /[A-Za-z]/) para = t " "
    }
    next
}
/^\.(BR|BI|IR|RB|RI|IB)([ \t]|$)/ { para = para " " unescape(args($0, 1)); next }
/^\.(B|I|SM|SB)([ \t]|$)/ { para = para " " unescape(args($0, 0)); next }
/^\.(UE|ME)/ { para = para unescape(args($0, 0)); next }
/^[.']/ { next }
{ para = para " " unescape($0) }
END { flush() }
