#!/bin/bash
# Install the project's QEMU (qemu-system-x86_64 with pvdc and QEMU's
# default devices) where libvirt and a user look for an emulator.
#
#   scripts/install.sh [--prefix DIR] [--destdir DIR]
#
# Builds QEMU if needed (scripts/build-qemu.sh), then copies the emulator
# and its data (keymaps, icons, desktop file) under PREFIX, /usr/local by
# default: first on the PATH of a shell and of libvirtd's service, so
# libvirt and virt-install pick it before Debian's qemu-system-x86 in
# /usr/bin, which stays installed.  The firmware is Debian's (seabios,
# ipxe-qemu, qemu-system-data, ovmf), found on the firmware path QEMU was
# built with, as Debian's own QEMU finds it.  The emulator runs from any
# PREFIX: its data directory is relative to the binary.
#
# libvirt runs QEMU as the libvirt-qemu user and, on an AppArmor system,
# confines libvirtd and every guest: the files are world-readable, and the
# site-local AppArmor includes of libvirt-daemon-system's profiles
# (/etc/apparmor.d/local/) allow the emulator and its data under PREFIX;
# the profiles are reloaded when AppArmor is on.
#
# --destdir DIR stages the files under DIR/PREFIX and changes nothing else
# on the system, as a packager's DESTDIR does.  Idempotent.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

prefix=/usr/local
destdir=
while [ $# -gt 0 ]; do
    case $1 in
    --prefix)
        prefix=$2
        shift
        ;;
    --destdir)
        destdir=$2
        shift
        ;;
    *)
        die "usage: install.sh [--prefix DIR] [--destdir DIR]"
        ;;
    esac
    shift
done
case $prefix in
/*) ;;
*) die "--prefix must be an absolute path" ;;
esac

"$PVDC_ROOT/scripts/build-qemu.sh"
# What "ninja install" would install of the targets that were built: the
# build directory's qemu-bundle mirrors the installation under QEMU's
# default prefix, /usr/local (the firmware links build-qemu.sh adds for
# the build directory lie outside it).
bundle=$PVDC_BUILD/qemu/qemu-bundle/usr/local
[ -x "$bundle/bin/qemu-system-x86_64" ] || die "no QEMU in $bundle"
root=$destdir$prefix
stage "installing QEMU $(cat "$PVDC_BUILD/qemu-version") in $root"
maybe_root=as_root
[ -z "$destdir" ] || maybe_root=
$maybe_root mkdir -p "$root"
# -L: the bundle links to the build's outputs; copy what they point at.
(cd "$bundle" && find -L . -type f -print0) | while IFS= read -r -d '' f; do
    $maybe_root install -D -m "$([ -x "$bundle/$f" ] && echo 755 || echo 644)" \
        "$bundle/$f" "$root/${f#./}"
done

if [ -n "$destdir" ]; then
    stage "staged in $root"
    exit 0
fi

# AppArmor: libvirt-daemon-system's profiles allow /usr/bin/qemu-system-*
# and /usr/share/qemu; a site adds its own emulator through the local
# includes they read.  A block between markers, replaced on each run.
apparmor_allow() {
    local file=$1 rules=$2
    local begin="# pvdc: the project's QEMU (scripts/install.sh)" end="# pvdc end"
    local old=
    [ -f "$file" ] && old=$(sed "\|^$begin\$|,\|^$end\$|d" "$file")
    printf '%s%s\n%s\n%s\n' "${old:+$old$'\n'}" "$begin" "$rules" "$end" |
        as_root tee "$file.pvdc-new" >/dev/null
    as_root mv "$file.pvdc-new" "$file"
}
if [ -f /etc/apparmor.d/abstractions/libvirt-qemu ]; then
    stage "allowing $prefix/bin/qemu-system-x86_64 in libvirt's AppArmor profiles"
    as_root mkdir -p /etc/apparmor.d/local/abstractions
    apparmor_allow /etc/apparmor.d/local/abstractions/libvirt-qemu \
        "  $prefix/bin/qemu-system-x86_64 rmix,
  $prefix/share/qemu/** r,"
    apparmor_allow /etc/apparmor.d/local/usr.sbin.libvirtd \
        "  $prefix/bin/qemu-system-x86_64 PUx,"
    if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] &&
        command -v apparmor_parser >/dev/null; then
        # A guest's own profile is made from abstractions/libvirt-qemu
        # when it starts; libvirtd's is loaded once.
        as_root apparmor_parser -r /etc/apparmor.d/usr.sbin.libvirtd
    fi
fi
stage "installed: $prefix/bin/qemu-system-x86_64 ($(command -v qemu-system-x86_64 || echo 'not on PATH') comes first on PATH)"
