#!/bin/bash
# Build guest-driver/pvdc.ko against the headers of the guest kernel and copy
# it to OUTPUT.ko.
#
#   scripts/build-module.sh [--debug] OUTPUT.ko
#
# Any compiler warning fails the build: the module must build with zero
# warnings.
#
# --debug builds it against the debug kernel (scripts/build-debug-kernel.sh),
# in a directory of its own: kbuild writes its objects next to the sources,
# and both builds may run at the same time.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

usage="usage: build-module.sh [--debug] OUTPUT.ko"
debug=0
if [ "${1:-}" = --debug ]; then
    debug=1
    shift
fi
out=${1:?$usage}

if [ $debug -eq 0 ]; then
    KVER=$(cat "$PVDC_BUILD/kernel-version")
    KDIR=/usr/src/linux-headers-$KVER
    [ -d "$KDIR" ] || die "$KDIR missing: run scripts/setup-host.sh"
    moddir=$PVDC_ROOT/guest-driver
else
    KDIR=$PVDC_BUILD/kernel-debug-build
    [ -f "$KDIR/Module.symvers" ] || die "no debug kernel: run scripts/build-debug-kernel.sh"
    # A mirror of guest-driver/ made of links (its register header too).
    moddir=$PVDC_BUILD/module-debug/guest-driver
    mkdir -p "$moddir"
    find "$moddir" -maxdepth 1 -type l ! -exec test -e {} \; -delete
    for f in "$PVDC_ROOT"/guest-driver/{Kbuild,pvdc_*.c,*.h}; do
        ln -sfn "$f" "$moddir/$(basename "$f")"
    done
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! make -s -C "$KDIR" M="$moddir" W=1 modules >"$log" 2>&1; then
    cat "$log"
    die "pvdc.ko failed to build"
fi
if grep -q 'warning:' "$log"; then
    cat "$log"
    die "pvdc.ko built with warnings"
fi
cp "$moddir/pvdc.ko" "$out"
