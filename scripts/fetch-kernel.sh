#!/bin/bash
# Fetch Debian's Linux 6.12 image for the guest (the version whose headers
# scripts/setup-host.sh installed) and extract it into the cache without
# installing it on the host.  Prints the extracted root.
#
#   scripts/fetch-kernel.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

KVER=$(cat "$PVDC_BUILD/kernel-version" 2>/dev/null) ||
    die "run scripts/setup-host.sh first (no build/kernel-version)"
dir=$PVDC_CACHE/kernel/$KVER
mkdir -p "$PVDC_CACHE/kernel"
exec 9>"$PVDC_CACHE/kernel/.lock"
flock 9

if [ ! -f "$dir/.ready" ]; then
    rm -rf "$dir" "$dir.deb"
    mkdir -p "$dir.deb"
    stage "downloading linux-image-$KVER (about 100 MB)" >&2
    (cd "$dir.deb" && apt-get download -q -o APT::Sandbox::User=root "linux-image-$KVER" >&2)
    stage "extracting linux-image-$KVER" >&2
    dpkg-deb -x "$dir.deb"/linux-image-*.deb "$dir"
    rm -rf "$dir.deb"
    [ -f "$dir/boot/vmlinuz-$KVER" ] || die "no vmlinuz in linux-image-$KVER"
    # modules.dep lets the image builder resolve module dependencies.
    /sbin/depmod -b "$dir" "$KVER"
    touch "$dir/.ready"
fi
echo "$dir"
