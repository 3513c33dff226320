#!/bin/bash
# Run a pvdc qtest binary (TAP) from a QEMU build directory.
#
#   run-qtest.sh QEMU_BUILD_DIR [TEST] [gtester args]
#
# TEST is the name of a binary in tests/qtest, pvdc-regs-test by default.
set -euo pipefail
case ${1:-} in
-h | --help)
    sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$0"
    exit 0
    ;;
esac
qemu_build=${1:?usage: run-qtest.sh QEMU_BUILD_DIR [TEST] [gtester args]}
shift
test=pvdc-regs-test
if [ $# -gt 0 ] && [[ $1 != -* ]]; then
    test=$1
    shift
fi
cd "$qemu_build"
export QTEST_QEMU_BINARY=./qemu-system-x86_64
exec "./tests/qtest/$test" --tap -k "$@"
