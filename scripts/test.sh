#!/bin/bash
# Set up, build and run every pvdc test: the qtest suites, the guest
# end-to-end suites and the build, docs and libvirt checks.  Ends with the
# line "N passed, N failed" (test cases, counted from each suite's TAP).
set -uo pipefail
# One compound command, read whole before it runs: editing this file
# during a run (which lasts long) cannot change what the run does next.
{
. "$(dirname "$0")/lib.sh"

usage() {
    cat <<EOF
usage: scripts/test.sh [--repeat N] [--load K] [MESON-TEST-ARGS...]

Installs what is missing (scripts/setup-host.sh), builds QEMU with pvdc,
pvdc.ko, the guest programs and the guest image, runs the test suites and
prints "N passed, N failed" as its last line (exit status 1 on a failure).

  --repeat N   build once, then run the suites N times in a row; each run
               prints its own "run I/N (S s): N passed, N failed" line,
               the last line counts the cases of all runs
  --load K     start K CPU-bound processes (busy loops at normal priority)
               before anything else and stop them at the end: the whole
               command runs on a machine with K cores' worth of extra load
  -h, --help   this text

Other arguments go to "meson test" (e.g. a suite: --suite guest, or a test
name: guest-kms).  Caches: PVDC_CACHE (default ~/.cache/pvdc), build
output: PVDC_BUILD (default build/ in the checkout).
EOF
}

repeat=1
load=0
meson_args=()
while [ $# -gt 0 ]; do
    case $1 in
    --repeat) repeat=${2:-}; shift ;;
    --repeat=*) repeat=${1#*=} ;;
    --load) load=${2:-}; shift ;;
    --load=*) load=${1#*=} ;;
    -h | --help) usage; exit 0 ;;
    *) meson_args+=("$1") ;;
    esac
    shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || { usage >&2; die "--repeat needs a count >= 1"; }
[[ $load =~ ^[0-9]+$ ]] || { usage >&2; die "--load needs a count >= 0"; }

hogs=()
stop_hogs() {
    [ ${#hogs[@]} -eq 0 ] && return
    kill "${hogs[@]}" 2>/dev/null
    wait "${hogs[@]}" 2>/dev/null
    hogs=()
}
trap stop_hogs EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
for _ in $(seq "$load"); do
    sh -c 'while :; do :; done' &
    hogs+=($!)
done
[ "$load" -eq 0 ] ||
    stage "extra load: $load CPU-bound process(es) (pids ${hogs[*]}) on $(nproc) cores"

summary() {
    /usr/bin/python3 "$PVDC_ROOT/scripts/tap-summary.py" "$@"
}

start=$(date +%s)
"$PVDC_ROOT/scripts/prepare.sh" || { echo "0 passed, 1 failed"; exit 1; }
stage "building QEMU, pvdc.ko, guest programs and the guest image"
meson compile -C "$PVDC_BUILD/meson" || { echo "0 passed, 1 failed"; exit 1; }

logs=$PVDC_BUILD/meson/meson-logs
runs=()
for run in $(seq "$repeat"); do
    if [ "$repeat" -eq 1 ]; then
        stage "running the test suites"
    else
        stage "running the test suites: run $run of $repeat"
    fi
    rm -f "$logs/testlog.json"
    run_start=$(date +%s)
    meson test -C "$PVDC_BUILD/meson" --print-errorlogs --no-rebuild \
        "${meson_args[@]}"
    if [ "$repeat" -gt 1 ]; then
        mv "$logs/testlog.json" "$logs/testlog-run$run.json"
        runs+=("$logs/testlog-run$run.json")
        echo "run $run/$repeat ($(( $(date +%s) - run_start )) s):" \
            "$(summary "$logs/testlog-run$run.json" 2>&1 | tail -n1)"
    else
        runs+=("$logs/testlog.json")
    fi
done
stop_hogs
stage "finished in $(( $(date +%s) - start )) s"
summary "${runs[@]}"
exit
}
