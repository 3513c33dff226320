#!/bin/bash
# Build guest-driver/pvdc.ko against the headers of the guest kernel and copy
# it to OUTPUT.KO.
#
#   scripts/build-module.sh OUTPUT.KO
#
#  Any compiler warning fails the build: the module must build
# with zero warnings.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

out=${1:?usage: build-module.sh OUTPUT.ko}
KVER=$(cat "$PVDC_BUILD/kernel-version")
KDIR=/usr/src/linux-headers-$KVER
[ -d "$KDIR" ] || die "$KDIR missing: run scripts/setup-host.sh"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! make -s -C "$KDIR" M="$PVDC_ROOT/guest-driver" W=1 modules >"$log" 2>&1; then
    cat "$log"
    die "pvdc.ko failed to build"
fi
if grep -q 'warning:' "$log"; then
    cat "$log"
    die "pvdc.ko built with warnings"
fi
cp "$PVDC_ROOT/guest-driver/pvdc.ko" "$out"
