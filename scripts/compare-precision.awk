# compare-precision.awk: two epochs-study records of the defaults on the same sets, the first in float32,
# the second in another precision (its run column "default --precision ..."): over the seeds both
# records hold, whether each set's mean accuracy in the second lies within the first's range, the
# epochs run (they end on validation, so they can differ), the seconds of training steps per epoch
# and the whole-run seconds. Rows without the epochs and steps columns (older records) are left out.
# data/README.md shows its table.
#   awk -f scripts/compare-precision.awk FLOAT32_RECORD OTHER_RECORD
BEGIN { FS = "\t" }
FNR == 1 { f++ }
NF < 7 || $6 == 0 { next }
f == 1 && $2 == "default" { k = $1 SUBSEP $3; acc1[k] = $4; sec1[k] = $5; ep1[k] = $6; per1[k] = $7 / $6 }
f == 2 && $2 ~ /^default( |$)/ && (($1 SUBSEP $3) in acc1) {
    k = $1 SUBSEP $3; if (!($1 in n)) order[++m] = $1; n[$1]++
    s32[$1] += acc1[k]; t32[$1] += sec1[k]; e32[$1] += ep1[k]; p32[$1] += per1[k]
    if (n[$1] == 1 || acc1[k] < lo[$1]) lo[$1] = acc1[k]; if (n[$1] == 1 || acc1[k] > hi[$1]) hi[$1] = acc1[k]
    sa[$1] += $4; ta[$1] += $5; ea[$1] += $6; pa[$1] += $7 / $6 }
END { print "| set | float32: mean [min, max] | other: mean | inside | epochs: float32, other | s per epoch of steps: float32, other | whole run s: float32, other |"
    print "|---|---|---|---|---|---|---|"
    for (i = 1; i <= m; i++) { s = order[i]; c = n[s]; a = sa[s] / c
        printf "| %s | %.4f [%.4f, %.4f] | %.4f | %s | %.1f, %.1f | %.2f, %.2f (%.2fx) | %.1f, %.1f |\n", s, s32[s] / c, lo[s], hi[s], a,
            (a >= lo[s] && a <= hi[s] ? "yes" : "no"), e32[s] / c, ea[s] / c, p32[s] / c, pa[s] / c,
            p32[s] / pa[s], t32[s] / c, ta[s] / c } }
