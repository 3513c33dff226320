#!/bin/bash
# Fetch libvirt 9.0.0 from Debian bookworm's source package and extract it
# with Debian's patches applied.  Prints the extracted tree's path.
#
# bookworm's libvirt is the one a Debian 12 host runs (libvirt-daemon and
# virsh 9.0.0), so the graft is tested against the code users have.  The
# download is cached in $PVDC_CACHE/libvirt-src; any 9.0.0 Debian revision
# is accepted (point releases replace older ones in the archive).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

SRC_CACHE=$PVDC_CACHE/libvirt-src
mkdir -p "$SRC_CACHE"
exec 9>"$SRC_CACHE/.lock"
flock 9

# bookworm's deb-src through a private apt configuration: the system's
# sources stay as they are, and the index lives (and is refreshed) here.
APT=$SRC_CACHE/apt
mkdir -p "$APT/lists/partial" "$APT/archives/partial"
cat > "$APT/sources.list" <<'SOURCES'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
SOURCES
apt_opts=(-o "Dir::Etc::SourceList=$APT/sources.list" -o Dir::Etc::SourceParts=-
          -o "Dir::State::Lists=$APT/lists" -o "Dir::Cache::Archives=$APT/archives"
          -o APT::Sandbox::User=root)

find_version() {
    apt-cache "${apt_opts[@]}" showsrc libvirt 2>/dev/null | sed -n 's/^Version: //p' |
        grep -E '^9\.0\.0-' | sort -V | tail -n1 || true
}

version=$(find_version)
if [ -z "$version" ]; then
    stage "apt-get update (bookworm sources, for libvirt)" >&2
    apt-get "${apt_opts[@]}" update -q >&2 || die "apt-get update for the libvirt source failed"
    version=$(find_version)
fi
[ -n "$version" ] || die "no libvirt 9.0.0 source package in bookworm"
dsc=$(printf 'libvirt_%s.dsc' "$version")
tree=$SRC_CACHE/libvirt-$version

if [ ! -f "$SRC_CACHE/$dsc" ]; then
    stage "downloading libvirt $version source package (about 9 MB)" >&2
    (cd "$SRC_CACHE" && apt-get "${apt_opts[@]}" source --download-only -q "libvirt=$version" >&2)
fi
if [ ! -f "$tree/.pvdc-extracted" ]; then
    stage "extracting libvirt $version with Debian's patches" >&2
    rm -rf "$tree"
    (cd "$SRC_CACHE" && dpkg-source -q -x "$dsc" "$tree" >&2)
    touch "$tree/.pvdc-extracted"
fi
echo "$tree"
