#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
# Extra arguments go to scripts/demo.py (see --help there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

targets=(qemu initramfs)
prev=
for arg in "$@"; do
    case $prev/$arg in
    */-h|*/--help) exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" --help ;;
    # The stock Debian guest: the pvdc-dkms package and the root filesystem.
    */--distro) targets+=(stock-guest) ;;
    # The test guest on the debug kernel (scripts/build-debug-kernel.sh).
    --kernel/debug|*/--kernel=debug) targets+=(initramfs-debug) ;;
    esac
    prev=$arg
done
# demo.py refuses the pair too, but only after the builds.
[[ " ${targets[*]} " != *" stock-guest "*" initramfs-debug "* &&
   " ${targets[*]} " != *" initramfs-debug "*" stock-guest "* ]] ||
    die "--kernel debug is for the test guest; --distro boots Debian's kernel"

"$PVDC_ROOT/scripts/prepare.sh"
stage "building ${targets[*]}"
meson compile -C "$PVDC_BUILD/meson" "${targets[@]}"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
