#!/bin/bash
# Fetch QEMU 10.0.x from Debian trixie's source package and extract it with
# Debian's patches applied.  Prints the extracted tree's path.
#
#   scripts/fetch-qemu.sh
#
# The download is cached in $PVDC_CACHE/qemu-src; any 10.0.x the archive
# offers is accepted (superseded versions leave the archive) and recorded.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

SRC_CACHE=$PVDC_CACHE/qemu-src
mkdir -p "$SRC_CACHE"
exec 9>"$SRC_CACHE/.lock"
flock 9

version=$(apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: //p' |
          grep -E '^1:10\.0\.' | sort -V | tail -n1 || true)
[ -n "$version" ] || die "no qemu 10.0.x source in apt (run scripts/setup-host.sh)"
upstream=${version#1:}
dsc=$(printf 'qemu_%s.dsc' "$upstream")
tree=$SRC_CACHE/qemu-$upstream

if [ ! -f "$SRC_CACHE/$dsc" ]; then
    stage "downloading qemu $upstream source package (about 40 MB)" >&2
    (cd "$SRC_CACHE" && apt-get source --download-only -q -o APT::Sandbox::User=root "qemu=$version" >&2)
fi
if [ ! -f "$tree/.pvdc-extracted" ]; then
    stage "extracting qemu $upstream with Debian's patches" >&2
    rm -rf "$tree"
    (cd "$SRC_CACHE" && dpkg-source -q -x "$dsc" "$tree" >&2)
    touch "$tree/.pvdc-extracted"
fi
echo "$tree"
