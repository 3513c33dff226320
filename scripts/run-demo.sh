#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
#
#   scripts/run-demo.sh [DEMO-OPTIONS...]
#
# The options go to scripts/demo.py; --help prints them (and builds nothing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

for arg in "$@"; do
    case $arg in
    -h | --help) exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" --help ;;
    esac
done

"$PVDC_ROOT/scripts/prepare.sh"
stage "building QEMU, pvdc.ko, guest programs and the guest image"
meson compile -C "$PVDC_BUILD/meson"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
