#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
# Extra arguments go to scripts/demo.py (see --help there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$PVDC_ROOT/scripts/prepare.sh"
stage "building QEMU, pvdc.ko, guest programs and the guest image"
meson compile -C "$PVDC_BUILD/meson"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
