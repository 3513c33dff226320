#!/bin/bash
# Everything both README commands need before meson takes over: Debian
# packages, the QEMU source, the guest kernel, and a configured meson build.
#
#   scripts/prepare.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

stage "1/4 host packages"
"$PVDC_ROOT/scripts/setup-host.sh"
stage "2/4 QEMU source"
"$PVDC_ROOT/scripts/fetch-qemu.sh" >/dev/null
stage "3/4 guest kernel"
ln -sfn "$("$PVDC_ROOT/scripts/fetch-kernel.sh")" "$PVDC_BUILD/kernel"
stage "4/4 meson"
if [ ! -f "$PVDC_BUILD/meson/build.ninja" ]; then
    meson setup "$PVDC_BUILD/meson" "$PVDC_ROOT" >/dev/null
fi
