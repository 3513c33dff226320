#!/bin/bash
# Build the pvdc-dkms Debian package with Debian's own tooling
# (dpkg-buildpackage, debhelper, dh-dkms) from a staging copy of the
# driver: its sources, dkms.conf, debian/ and the register header it
# includes.  Writes OUTPUT (pvdc-dkms_<version>_all.deb).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

case ${1:-} in
-h|--help|"")
    echo "usage: build-deb.sh OUTPUT.deb"
    exit 0 ;;
esac
out=$1
src=$PVDC_ROOT/guest-driver

version=$(dpkg-parsechangelog -l "$src/debian/changelog" -S Version)
project_version=$(sed -n "s/^ *version: '\([^']*\)',.*/\1/p" "$PVDC_ROOT/meson.build")
[ "$version" = "$project_version" ] ||
    die "guest-driver/debian/changelog is at $version, meson.build at $project_version: add a changelog entry"

# Sources by name: the in-tree module build leaves pvdc.mod.c beside them.
mapfile -t sources < <(cd "$src" && printf '%s\n' Kbuild pvdc_*.c ./*.h dkms.conf)
mapfile -t packaging < <(cd "$PVDC_ROOT" && find guest-driver/debian -type f | LC_ALL=C sort)
key=$(hash_files "${sources[@]/#/guest-driver/}" "${packaging[@]}" \
          include/hw/display/pvdc-regs.h scripts/build-deb.sh)
stage_dir=$PVDC_BUILD/deb
if [ -f "$out" ] && [ "$(cat "$stage_dir/key" 2>/dev/null)" = "$key" ]; then
    exit 0
fi
stage "building pvdc-dkms $version with dpkg-buildpackage"
rm -rf "$stage_dir"
tree=$stage_dir/pvdc-$version
mkdir -p "$tree"
(cd "$src" && cp -a "${sources[@]}" debian "$tree"/)
# The package must build without the QEMU tree around it, so it carries the
# register map: copied, never retyped, so the numbers stay the one header's
# (unless guest-driver/ carries its own generated copy).
[ -e "$tree/pvdc-regs.h" ] || cp "$PVDC_ROOT/include/hw/display/pvdc-regs.h" "$tree"/

log=$stage_dir/dpkg-buildpackage.log
if ! (cd "$tree" && dpkg-buildpackage -b -us -uc) >"$log" 2>&1; then
    cat "$log"
    die "dpkg-buildpackage failed"
fi
deb=$stage_dir/pvdc-dkms_${version}_all.deb
[ -f "$deb" ] || die "dpkg-buildpackage did not produce $deb"
cp "$deb" "$out"
echo "$key" >"$stage_dir/key"
