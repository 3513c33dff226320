#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
#
#   scripts/run-demo.sh [DEMO-OPTIONS...]
#
# The options go to scripts/demo.py; --help prints them (and builds nothing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

targets=(qemu initramfs)
distro=0
debug=0
prev=
for arg in "$@"; do
    case $prev/$arg in
    */-h|*/--help) exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" --help ;;
    # The stock Debian guest: the pvdc-dkms package and the root filesystem.
    */--distro) distro=1; targets+=(stock-guest) ;;
    # The test guest on the debug kernel (scripts/build-debug-kernel.sh).
    --kernel/debug|*/--kernel=debug) debug=1; targets+=(initramfs-debug) ;;
    esac
    prev=$arg
done
# demo.py refuses the pair too, but only after the builds.
[ $((distro + debug)) -lt 2 ] ||
    die "--kernel debug is for the test guest; --distro boots Debian's kernel"

"$PVDC_ROOT/scripts/prepare.sh"
stage "building ${targets[*]}"
meson compile -C "$PVDC_BUILD/meson" "${targets[@]}"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
