# data-lib.sh: what scripts/get-data.sh and scripts/get-data-more.sh share (sourced, not run).

# Moves TMP/NAME/{train,test}.tsv into data/NAME/ (only once all are built, so
# a failure never leaves half-written files) and prints each file's size.
install_sets() {  # who tmp name...
    local who=$1 tmp=$2 name split
    shift 2
    for name in "$@"; do
        mkdir -p "data/$name"
        for split in train test; do
            mv "$tmp/$name/$split.tsv" "data/$name/$split.tsv"
            printf '%s: %-22s %5d examples, %d classes\n' "$who" "data/$name/$split.tsv" \
                "$(grep -vc '^#' "data/$name/$split.tsv")" \
                "$(grep -v '^#' "data/$name/$split.tsv" | cut -f1 | sort -u | wc -l)"
        done
    done
}
