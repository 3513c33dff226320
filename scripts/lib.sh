# Common helpers for the pvdc build scripts.  Sourced, not executed.
# shellcheck shell=bash

PVDC_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Downloads and built artefacts that survive between clones.  Never required:
# everything is re-created when the cache is empty.
PVDC_CACHE=${PVDC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pvdc}
# Per-clone build output (git-ignored).
PVDC_BUILD=${PVDC_BUILD:-$PVDC_ROOT/build}
# Sourcing this file changes nothing on disk: each script creates the
# folders it writes to.

# "-h" or "--help" among the arguments: print the comment block at the top
# of the calling script (its usage) and exit.  Call before doing anything.
help_and_exit_if_asked() {
    local arg
    for arg in "$@"; do
        case $arg in
        -h | --help)
            sed -n '2,/^[^#]/{/^#/!q;s/^# \{0,1\}//;p}' "$0"
            exit 0
            ;;
        esac
    done
}

stage() {
    printf '==> [%s] %s\n' "$(date +%H:%M:%S)" "$*"
}

die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    else
        sudo "$@"
    fi
}

# Hash of the given files' contents (and names), used as a cache key.
hash_files() {
    (cd "$PVDC_ROOT" && for f in "$@"; do
        printf '%s\n' "$f"
        cat "$f"
    done) | sha256sum | cut -c1-16
}

# Run ninja on a build directory (and optional targets), showing every 100th
# step so that a cold build of several minutes visibly progresses without
# flooding the log; errors are kept.  WHAT names the build in messages.
run_ninja() {
    local what=$1 dir=$2
    shift 2
    local steps
    steps=$(ninja -C "$dir" -n "$@" 2>/dev/null | grep -c '^\[' || true)
    stage "building $what: $steps step(s) to do"
    set +e
    ninja -C "$dir" "$@" 2>&1 | awk '
        /^\[[0-9]+\/[0-9]+\]/ { n++; split($1, a, "[/\\[\\]]");
                                if (n % 100 == 0 || a[2] == a[3]) { print "  " $1 " steps"; fflush() }
                                next }
        { print; fflush() }'
    local rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" -eq 0 ] || die "$what build failed"
}
