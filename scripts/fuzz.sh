#!/bin/bash
# Fuzz pvdc's registers and VRAM with QEMU's generic-fuzz (libFuzzer).
#
#   scripts/fuzz.sh [SECONDS] [libFuzzer options...]
#
# Builds qemu-fuzz-x86_64 with clang and AddressSanitizer (a third QEMU
# build: scripts/build-qemu.sh --fuzz, ~10 minutes of every core the first
# time, run at the lowest priority), then runs the "generic-fuzz-pvdc"
# target (tests/qtest/fuzz/pvdc-fuzz-config.h) for SECONDS (default 600).
# The corpus is kept in build/fuzz/corpus, so that every run continues
# from the last; crashing inputs land in build/fuzz/crashes/.  The last
# lines printed, and build/fuzz/summary.json, give the executions, the
# coverage and the crashes.
#
# Needs clang-14 and libclang-rt-14-dev (Debian: apt-get install clang-14
# libclang-rt-14-dev); not installed by setup-host.sh, which keeps to what
# the build and the tests need.
#
# Reproduce a crash:  build/qemu-fuzz/qemu-fuzz-x86_64
#   --fuzz-target=generic-fuzz-pvdc build/fuzz/crashes/crash-...
# (QEMU_FUZZ_TIMEOUT=0 and -runs=1; scripts/oss-fuzz/output_reproducer.py in
# the QEMU tree turns it into a qtest command list).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

seconds=${1:-600}
shift || true

command -v clang-14 >/dev/null ||
    die "clang-14 missing: apt-get install clang-14 libclang-rt-14-dev"
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
    >/dev/null 2>&1 ||
    die "libFuzzer missing: apt-get install libclang-rt-14-dev"

nice -n 19 "$PVDC_ROOT/scripts/build-qemu.sh" --fuzz

out=$PVDC_BUILD/fuzz
mkdir -p "$out/corpus" "$out/crashes"
log=$out/fuzz-$(date +%Y%m%d-%H%M%S).log
stage "fuzzing generic-fuzz-pvdc for ${seconds} s (log: $log)"
set +e
# QEMU leaks by design at exit: leak reports would stop every run.
ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-} \
nice -n 19 "$PVDC_BUILD/qemu-fuzz/qemu-fuzz-x86_64" \
    --fuzz-target=generic-fuzz-pvdc \
    -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/" "$@" "$out/corpus" >"$log" 2>&1
rc=$?
set -e

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1 || true)
corpus=$(find "$out/corpus" -type f | wc -l)
crashes=$(find "$out/crashes" -type f | wc -l)
cat >"$out/summary.json" <<JSON
{"target": "generic-fuzz-pvdc", "seconds": $seconds, "exit_status": $rc,
 "executions": ${execs:-0}, "coverage": "${cov:-unknown}",
 "corpus_inputs": $corpus, "crashes": $crashes, "log": "$log"}
JSON
stage "executions: ${execs:-?}, coverage: ${cov:-?}, corpus: $corpus inputs, crashes: $crashes (exit status $rc)"
[ "$crashes" -eq 0 ] || ls -l "$out/crashes"
exit $rc
