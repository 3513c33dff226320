#!/bin/bash
# Build libvirt with the pvdc video model grafted in: the daemon, its QEMU
# driver and virsh, nothing else.
#
#   scripts/build-libvirt.sh [--stamp FILE]
#
# Like QEMU (scripts/build-qemu.sh), the tree and its build directory live
# in the cache, keyed by the libvirt version and the meson options; grafting
# rewrites only what changed, so a second build is incremental.
# build/libvirt points at the build directory.  The programs run from there
# (tests/libvirt/test_libvirt.py sets LIBVIRT_DIR_OVERRIDE, as libvirt's own
# "run" script would): nothing is installed on the host.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

stamp=
while [ $# -gt 0 ]; do
    case $1 in
    --stamp)
        stamp=$2
        shift
        ;;
    *)
        die "usage: build-libvirt.sh [--stamp FILE]"
        ;;
    esac
    shift
done

# libvirt's build runs python3 from PATH: make it Debian's, as for QEMU.
export PATH=/usr/bin:$PATH

src=$("$PVDC_ROOT/scripts/fetch-libvirt.sh")
version=$(basename "$src" | sed 's/^libvirt-//')

# Debian's paths (the daemon reads /etc/libvirt and keeps its state in
# /var/lib/libvirt and /run/libvirt, as the packaged one does), every
# optional feature off, then only what a QEMU host needs: the QEMU driver,
# the daemon and the remote driver virsh talks to it through, yajl (QEMU's
# QMP is JSON), and the storage driver's directory pool, in which
# virt-install creates a new guest's disk (its user networking needs no
# network driver).  No docs and no unit tests: they are most of
# libvirt's build time and test libvirt, not pvdc's model (the project's
# tests/libvirt suite tests that against the real daemon).  Built without
# optimisation or debug info: it is the test suite's daemon, and its cold
# build must fit in CI's time beside QEMU's two builds (about 4 CPU-minutes,
# 2 to 3 minutes on 2 idle cores).
cfg=(--buildtype=plain -Doptimization=0 -Ddebug=false
     --prefix=/usr --sysconfdir=/etc --localstatedir=/var
     -Drunstatedir=/run --libdir=lib/x86_64-linux-gnu
     --auto-features=disabled
     -Ddriver_qemu=enabled -Ddriver_libvirtd=enabled -Ddriver_remote=enabled
     -Dstorage_dir=enabled
     -Dyajl=enabled -Dreadline=enabled
     -Ddocs=disabled -Dtests=disabled -Dinit_script=none
     -Dqemu_user=libvirt-qemu -Dqemu_group=libvirt-qemu
     -Dpackager=pvdc -Dpackager_version="$version")

key=$(printf '%s\n' "$version" "${cfg[@]}" | sha256sum | cut -c1-12)
work=$PVDC_CACHE/libvirt-$version-$key
mkdir -p "$work"
exec 8>"$work/.lock"
flock 8

if [ ! -f "$work/.src-ready" ]; then
    stage "copying libvirt $version source to $work/src"
    rm -rf "$work/src"
    cp -a "$src" "$work/src"
    touch "$work/.src-ready"
fi

stage "grafting the pvdc video model into the libvirt tree"
/usr/bin/python3 "$PVDC_ROOT/scripts/graft-libvirt.py" "$work/src"

if [ ! -f "$work/build/build.ninja" ]; then
    stage "configuring libvirt: ${cfg[*]}"
    rm -rf "$work/build"
    meson setup "$work/build" "$work/src" "${cfg[@]}" \
        >"$work/configure.log" 2>&1 || {
        tail -n 40 "$work/configure.log"
        die "libvirt configure failed; full log in $work/configure.log"
    }
fi

run_ninja "libvirt" "$work/build"

ln -sfn "$work/build" "$PVDC_BUILD/libvirt"
echo "$version" > "$PVDC_BUILD/libvirt-version"
[ -z "$stamp" ] || echo "$version" > "$stamp"
stage "libvirt $version ready: $PVDC_BUILD/libvirt/src/libvirtd, $PVDC_BUILD/libvirt/tools/virsh"
