#!/bin/bash
# Fuzz pvdc's registers and VRAM with QEMU's generic-fuzz (libFuzzer).
#
#   scripts/fuzz.sh [SECONDS] [libFuzzer options...]
#   scripts/fuzz.sh --minimize
#   scripts/fuzz.sh --help
#
# Builds qemu-fuzz-x86_64 with clang and AddressSanitizer (a third QEMU
# build: scripts/build-qemu.sh --fuzz, ~10 minutes of every core the first
# time, run at the lowest priority), then runs the "generic-fuzz-pvdc"
# target (tests/qtest/fuzz/pvdc-fuzz-config.h: four heads, host cursor) for
# SECONDS of CPU time (default 600).
#
# The corpus kept in the repository, tests/qtest/fuzz/pvdc-corpus, seeds
# every run; what a run finds goes to build/fuzz/corpus, so that runs on
# one clone continue from each other.  --minimize merges both into the
# smallest set with the same coverage and writes it back to the
# repository's corpus (commit it), with the seeds of scripts/pvdc_fuzz.py
# (which take the fuzzer into the BIND block and the planes, writeback
# and colour tables that read bindings; tests/build/test_fuzz_seeds.py
# checks that they are there and still bind).  Crashing inputs land in
# build/fuzz/crashes/.  The last lines printed, and build/fuzz/summary.json,
# give the executions, the coverage and the crashes.
#
# Needs clang-14 and libclang-rt-14-dev (scripts/setup-host.sh installs
# them).
#
# Reproduce a crash:  build/qemu-fuzz/qemu-fuzz-x86_64
#   --fuzz-target=generic-fuzz-pvdc build/fuzz/crashes/crash-...
# (QEMU_FUZZ_TIMEOUT=0 and -runs=1; scripts/oss-fuzz/output_reproducer.py in
# the QEMU tree turns it into a qtest command list).
set -euo pipefail

case ${1:-} in
-h|--help)
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
    exit 0
    ;;
esac

. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

minimize=0
seconds=600
if [ "${1:-}" = --minimize ]; then
    minimize=1
    shift
elif [ $# -gt 0 ]; then
    seconds=$1
    shift
fi

command -v clang-14 >/dev/null ||
    die "clang-14 missing: run scripts/setup-host.sh"
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a \
    >/dev/null 2>&1 ||
    die "libFuzzer missing: run scripts/setup-host.sh"

nice -n 19 "$PVDC_ROOT/scripts/build-qemu.sh" --fuzz

fuzzer=$PVDC_BUILD/qemu-fuzz/qemu-fuzz-x86_64
seeds=$PVDC_ROOT/tests/qtest/fuzz/pvdc-corpus
out=$PVDC_BUILD/fuzz
mkdir -p "$out/corpus" "$out/crashes" "$seeds"
# QEMU leaks by design at exit: leak reports would stop every run.
export ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-}

if [ $minimize -eq 1 ]; then
    merged=$(mktemp -d "$out/merged.XXXXXX")
    stage "minimizing $(find "$out/corpus" "$seeds" -type f | wc -l) inputs"
    nice -n 19 "$fuzzer" --fuzz-target=generic-fuzz-pvdc -merge=1 \
        "$merged" "$seeds" "$out/corpus" >"$out/merge.log" 2>&1 ||
        { tail -n 20 "$out/merge.log"; die "merge failed"; }
    find "$seeds" -type f -delete
    cp "$merged"/* "$seeds"/
    rm -rf "$merged"
    # A smaller input the fuzzer found may cover what a seed does, but
    # the seeds are what keeps the guest-memory paths reachable after the
    # registers change: always kept (named by content, as the merge names
    # what it keeps).
    /usr/bin/python3 "$PVDC_ROOT/scripts/pvdc_fuzz.py" "$seeds"
    stage "repository corpus: $(find "$seeds" -type f | wc -l) inputs," \
          "$(cat "$seeds"/* | wc -c) bytes in $seeds"
    exit 0
fi

log=$out/fuzz-$(date +%Y%m%d-%H%M%S).log
stage "fuzzing generic-fuzz-pvdc for ${seconds} s of CPU time (log: $log)"
# The budget is CPU time, not wall time: the fuzzer runs at the lowest
# priority, so on a busy machine an hour of wall time can be minutes of
# fuzzing.  libFuzzer only knows wall time (-max_total_time), so the
# script reads the fuzzer's CPU time, its own and that of the children it
# forks per input and reaps, and interrupts it when the budget is spent;
# libFuzzer then prints its final statistics and exits with status 72.
nice -n 19 "$fuzzer" --fuzz-target=generic-fuzz-pvdc \
    -timeout=30 -print_final_stats=1 \
    -artifact_prefix="$out/crashes/" "$@" "$out/corpus" "$seeds" \
    >"$log" 2>&1 &
pid=$!
ticks=$(getconf CLK_TCK)
cpu_of() {
    # Fields 14-17 of /proc/PID/stat: utime, stime, cutime, cstime.
    awk -v t="$ticks" '{ printf "%d", ($14 + $15 + $16 + $17) / t }' \
        "/proc/$1/stat" 2>/dev/null
}
cpu=0
last=0
while kill -0 "$pid" 2>/dev/null; do
    sleep 5
    cpu=$(cpu_of "$pid") || break
    [ -n "$cpu" ] || break
    if [ "$cpu" -ge "$seconds" ]; then
        kill -INT "$pid" 2>/dev/null || true
        break
    fi
    if [ $((cpu - last)) -ge 300 ]; then
        last=$cpu
        stage "$cpu of $seconds CPU s: $(grep -Eo '^#[0-9]+.*cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -n1)"
    fi
done
set +e
wait "$pid"
rc=$?
set -e
# Interrupted at the budget is the normal end of a run.
[ $rc -ne 72 ] || rc=0

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
[ -n "$execs" ] ||
    execs=$(grep -Eo '^#[0-9]+' "$log" | tail -n1 | tr -d '#' || true)
cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -n1 || true)
corpus=$(find "$out/corpus" "$seeds" -type f | wc -l)
crashes=$(find "$out/crashes" -type f | wc -l)
cat >"$out/summary.json" <<JSON
{"target": "generic-fuzz-pvdc", "seconds": $seconds, "cpu_seconds": $cpu,
 "exit_status": $rc,
 "executions": ${execs:-0}, "coverage": "${cov:-unknown}",
 "corpus_inputs": $corpus, "crashes": $crashes, "log": "$log"}
JSON
stage "CPU time: $cpu s, executions: ${execs:-?}, coverage: ${cov:-?}, corpus: $corpus inputs, crashes: $crashes (exit status $rc)"
[ "$crashes" -eq 0 ] || ls -l "$out/crashes"
exit $rc
