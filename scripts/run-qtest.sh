#!/bin/bash
# Run the pvdc qtest suite (TAP) from a QEMU build directory.
set -euo pipefail
qemu_build=${1:?usage: run-qtest.sh QEMU_BUILD_DIR [gtester args]}
shift
cd "$qemu_build"
export QTEST_QEMU_BINARY=./qemu-system-x86_64
exec ./tests/qtest/pvdc-test --tap -k "$@"
