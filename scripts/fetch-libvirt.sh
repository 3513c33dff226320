#!/bin/bash
# Fetch libvirt 9.0.0 from Debian bookworm's source package and extract it
# with Debian's patches applied.  Prints the extracted tree's path.
#
# bookworm's libvirt is the one a Debian 12 host runs (libvirt-daemon and
# virsh 9.0.0), so the graft is tested against the code users have.  The
# download is cached in $PVDC_CACHE/libvirt-src; any 9.0.0 Debian revision
# is accepted (stable updates replace older ones in the archive).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SRC_CACHE=$PVDC_CACHE/libvirt-src
mkdir -p "$SRC_CACHE"
exec 9>"$SRC_CACHE/.lock"
flock 9

version=$(apt-cache showsrc libvirt 2>/dev/null | sed -n 's/^Version: //p' |
          grep -E '^9\.0\.0-' | sort -V | tail -n1 || true)
[ -n "$version" ] || die "no libvirt 9.0.0 source in apt (run scripts/setup-host.sh)"
dsc=$(printf 'libvirt_%s.dsc' "$version")
tree=$SRC_CACHE/libvirt-$version

if [ ! -f "$SRC_CACHE/$dsc" ]; then
    stage "downloading libvirt $version source package (about 9 MB)" >&2
    (cd "$SRC_CACHE" && apt-get source --download-only -q -o APT::Sandbox::User=root "libvirt=$version" >&2)
fi
if [ ! -f "$tree/.pvdc-extracted" ]; then
    stage "extracting libvirt $version with Debian's patches" >&2
    rm -rf "$tree"
    (cd "$SRC_CACHE" && dpkg-source -q -x "$dsc" "$tree" >&2)
    touch "$tree/.pvdc-extracted"
fi
echo "$tree"
