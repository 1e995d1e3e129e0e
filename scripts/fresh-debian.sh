#!/usr/bin/env bash
# fresh-debian.sh: the README's two commands on a bare Debian machine.
#
# Builds a Debian bookworm minbase root with debootstrap in a temporary
# directory, copies this commit into it (a clone without git: the version
# must come from the tree), installs only what the README's quick start names
# (gcc make), and runs `make demo` and `make test` inside it. Fails when a
# test fails, when a skipped check names no package that would run it, or
# when the demo's epoch table and predictions differ from the README's.
#
#   scripts/fresh-debian.sh [COMMIT]     (default HEAD; root, debootstrap, network to Debian)
#
# Exit 0 passed, 1 failed, 77 cannot run here (not root, no debootstrap).
set -euo pipefail
cd "$(dirname "$0")/.."
commit=${1:-HEAD}
packages="gcc make"   # what the README's quick start names; checked below
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" -eq 0 ] || { echo "skip: fresh-debian.sh needs root (debootstrap, chroot)"; exit 77; }
command -v debootstrap >/dev/null || { echo "skip: no debootstrap (apt-get install -y debootstrap)"; exit 77; }
grep -Eq "apt-get install (-y )?$packages\b" README.md \
    || { echo "FAIL: README.md's quick start no longer says 'apt-get install $packages': update \$packages here"; exit 1; }

root=$(mktemp -d /var/tmp/fresh-debian.XXXXXX)
chmod 755 "$root"   # a root file system: its users (apt's _apt) must enter it
# Unmount everything below the root, deepest first; remove it only when
# nothing is mounted there any more (a removal through a bind mount of /dev
# would delete the machine's own devices), and never across file systems.
cleanup() {
    local m
    below() { findmnt -rn -o TARGET | grep -E "^$root(/|\$)" | sort -r; }
    for m in $(below); do umount -l "$m" 2>/dev/null || true; done
    if [ -n "$(below)" ]; then
        echo "fresh-debian.sh: something is still mounted below $root; left in place" >&2
        return
    fi
    rm -rf --one-file-system "$root"
}
trap cleanup EXIT
start=$SECONDS
step() { echo "== $* ($((SECONDS - start)) s)"; }

step "debootstrap --variant=minbase bookworm into $root"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 \
    || { tail -n 20 "$root.log"; rm -f "$root.log"; exit 1; }
rm -f "$root.log"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mount --bind "$root" "$root"   # the root a mount point, as on a machine: unshare -m works in it
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev" && mount --make-rslave "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
in_root() { chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 TERM=dumb /bin/bash -c "$1"; }

step "copy of $commit (no .git: the version must come from the tree)"
mkdir -p "$root/root/train"
git archive "$commit" | tar -x -C "$root/root/train"

step "apt-get install $packages"
in_root "apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $packages >/dev/null"

step "./train --version"
version=$(in_root "cd /root/train && make -s train >/dev/null && ./train --version")
echo "$version"
case $version in *unknown*) echo "FAIL: the version is unknown without git"; exit 1 ;; esac

step "make demo"
in_root "cd /root/train && make demo" >"$root/demo.txt" 2>&1 || { tail -n 30 "$root/demo.txt"; echo "FAIL: make demo"; exit 1; }
# the epoch table's rows without the Seconds column, and predict's lines, against the README's excerpts
rows() {  # the table's rows with the Seconds column blanked (found by its header)
    awk -F'|' '/^Epoch \|/ { for (i = 1; i <= NF; i++) if ($i ~ /Seconds/) s = i; next }
               /^ +[0-9]+ \|/ { if (s) $s = ""; print }'
}
predictions() { awk '/^\$ \.\/train predict/ { p = 1; next } p && (/^$/ || /^```/) { exit } p'; }
readme_block() { awk -v b="$1" '$0 == "<!-- begin:" b " -->" { t = 1; next } $0 == "<!-- end:" b " -->" { t = 0 } t' README.md; }
demo_ok=1
if ! diff <(readme_block demo-table | rows) <(rows <"$root/demo.txt") >"$root/diff.txt"; then
    echo "FAIL: the demo's epoch table differs from the README's:"; cat "$root/diff.txt"; demo_ok=0
fi
if ! diff <(readme_block demo-predict | predictions) <(predictions <"$root/demo.txt") >"$root/diff.txt"; then
    echo "FAIL: the demo's predictions differ from the README's:"; cat "$root/diff.txt"; demo_ok=0
fi
[ "$(readme_block demo-table | rows | wc -l)" -gt 0 ] || { echo "FAIL: no epoch table found in README.md"; demo_ok=0; }
[ $demo_ok -eq 1 ] && echo "ok: the demo prints the README's epoch table and predictions"

step "make test"
rc=0
in_root "cd /root/train && make test" >"$root/test.txt" 2>&1 || rc=$?
grep -E '^(ok|FAIL|skip) ' "$root/test.txt" || true
closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$root/test.txt" | tail -n 1)
echo "closing line: ${closing:-none}"
[ $rc -eq 0 ] || { grep -h '^FAIL' "$root"/root/train/build/logs/*.log; echo "FAIL: make test exited $rc"; }
# every skip, of a suite or of a check inside one, names what would run it
unnamed=$({ grep -E '^skip ' "$root/test.txt"; cat "$root"/root/train/build/logs/*.log 2>/dev/null | grep -E '^skip:'; } |
          grep -vE 'apt-get install|make data|root|another user|too slow' || true)
if [ -n "$unnamed" ]; then echo "FAIL: skips that name nothing to install:"; echo "$unnamed"; rc=1; fi
step "done"
[ $rc -eq 0 ] && [ $demo_ok -eq 1 ] && [ -n "$closing" ] || exit 1
echo "fresh-debian: passed: $closing"
