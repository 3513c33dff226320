#!/bin/bash
# Set up and build everything, then boot the demo VM on the pvdc display.
# Extra arguments go to scripts/demo.py (see --help there).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$PVDC_ROOT/scripts/prepare.sh"
stage "building QEMU, pvdc.ko, guest programs and the guest image"
# Only what the demo boots: the test builds (ASan QEMU, debug kernel) are
# built when asked for (--kernel debug) or by scripts/test.sh.
targets=(qemu initramfs)
case " $* " in
*" --kernel debug "* | *" --kernel=debug "*) targets+=(initramfs-debug) ;;
esac
meson compile -C "$PVDC_BUILD/meson" "${targets[@]}"
stage "starting the demo VM"
exec /usr/bin/python3 "$PVDC_ROOT/scripts/demo.py" "$@"
