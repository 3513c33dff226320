#!/bin/bash
# Set up, build and run every pvdc test: the qtest suite and the guest
# end-to-end suites.  Ends with the line "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

summary() {
    /usr/bin/python3 "$PVDC_ROOT/scripts/tap-summary.py" \
        "$PVDC_BUILD/meson/meson-logs/testlog.json" "$@"
}

start=$(date +%s)
"$PVDC_ROOT/scripts/prepare.sh" || { echo "0 passed, 1 failed"; exit 1; }
stage "building QEMU, pvdc.ko, guest programs and the guest image"
meson compile -C "$PVDC_BUILD/meson" || { echo "0 passed, 1 failed"; exit 1; }
stage "running the test suites"
rm -f "$PVDC_BUILD/meson/meson-logs/testlog.json"
meson test -C "$PVDC_BUILD/meson" --print-errorlogs --no-rebuild "$@"
stage "finished in $(( $(date +%s) - start )) s"
summary
