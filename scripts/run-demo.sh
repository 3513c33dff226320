#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
#
#   scripts/run-demo.sh [DEMO-OPTIONS...]
#
# The options go to scripts/demo.py; --help prints them (and builds nothing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

targets=(qemu initramfs)
for arg in "$@"; do
    case $arg in
    -h|--help) exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" --help ;;
    # The stock Debian guest: the pvdc-dkms package and the root filesystem.
    --distro) targets+=(stock-guest) ;;
    esac
done

"$PVDC_ROOT/scripts/prepare.sh"
stage "building ${targets[*]}"
meson compile -C "$PVDC_BUILD/meson" "${targets[@]}"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
