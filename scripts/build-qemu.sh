#!/bin/bash
# Build qemu-system-x86_64 with pvdc grafted in, plus the pvdc qtest.
#
#   scripts/build-qemu.sh [--asan | --fuzz] [--stamp FILE]
#
# --fuzz builds qemu-fuzz-x86_64 (libFuzzer, clang, ASan) for
# scripts/fuzz.sh, in a third build directory (build/qemu-fuzz).
#
# The QEMU tree and its build directory live in the cache, keyed by the QEMU
# version and the configure options, and are reused by every clone: grafting
# rewrites only the files whose content changed, so touching one device file
# recompiles that file alone.  build/qemu (or build/qemu-asan) points at it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

variant=qemu
extra_cfg=()
targets=(qemu-system-x86_64 tests/qtest/pvdc-test tests/qtest/pvdc-model-test
         tests/qtest/pvdc-compose-test tests/qtest/pvdc-hostile-test
         tests/qtest/pvdc-migration-test tests/qtest/pvdc-lifetime-test
         tests/qtest/pvdc-memory-test)
stamp=
while [ $# -gt 0 ]; do
    case $1 in
    --asan)
        variant=qemu-asan
        extra_cfg=(--enable-asan --enable-ubsan)
        ;;
    --fuzz)
        variant=qemu-fuzz
        command -v clang-14 >/dev/null || die "clang-14 missing: run scripts/setup-host.sh"
        extra_cfg=(--cc=clang-14 --cxx=clang++-14 --enable-fuzzing --enable-asan)
        targets=(qemu-fuzz-x86_64)
        ;;
    --stamp)
        stamp=$2
        shift
        ;;
    *)
        die "usage: build-qemu.sh [--asan | --fuzz] [--stamp FILE]"
        ;;
    esac
    shift
done

src=$("$PVDC_ROOT/scripts/fetch-qemu.sh")
qemu_version=$(basename "$src" | sed 's/^qemu-//')

cfg=(--python=/usr/bin/python3 --target-list=x86_64-softmmu
     --without-default-features --without-default-devices
     --with-devices-x86_64=pvdc
     --enable-tcg --enable-kvm --enable-pixman --enable-vnc --enable-png
     --disable-docs --disable-install-blobs --disable-werror
     "${extra_cfg[@]}")
# The user interfaces people run pvdc with: a GTK or SDL window (with
# OpenGL), SPICE (virt-manager's default), VNC, and the D-Bus display
# (GNOME Boxes, qemu-display).  Their development packages come from
# scripts/setup-host.sh; configure fails if one is missing rather than
# quietly building a QEMU without it.  The fuzzer needs none of them.
if [ "$variant" != qemu-fuzz ]; then
    cfg+=(--enable-gtk --enable-opengl --enable-sdl
          --enable-spice --enable-spice-protocol
          --enable-gio --enable-dbus-display)
fi

key=$(printf '%s\n' "$qemu_version" "${cfg[@]}" | sha256sum | cut -c1-12)
work=$PVDC_CACHE/$variant-$qemu_version-$key
mkdir -p "$work"
exec 8>"$work/.lock"
flock 8

if [ ! -f "$work/.src-ready" ]; then
    stage "copying QEMU $qemu_version source to $work/src"
    rm -rf "$work/src"
    cp -a "$src" "$work/src"
    touch "$work/.src-ready"
fi

stage "grafting pvdc into the QEMU tree"
/usr/bin/python3 "$PVDC_ROOT/scripts/graft-qemu.py" "$work/src"

if [ ! -f "$work/build/build.ninja" ]; then
    stage "configuring QEMU ($variant): ${cfg[*]}"
    rm -rf "$work/build"
    mkdir -p "$work/build"
    (cd "$work/build" && ../src/configure "${cfg[@]}" >configure.log 2>&1) || {
        tail -n 40 "$work/build/configure.log"
        die "QEMU configure failed; full log in $work/build/configure.log"
    }
fi

run_ninja "QEMU ($variant)" "$work/build" "${targets[@]}"

# The +ds source has no firmware blobs: QEMU run from its build directory
# finds Debian's SeaBIOS and option ROMs here instead of needing -L.
for blob in /usr/share/seabios/bios-256k.bin /usr/share/qemu/linuxboot_dma.bin \
            /usr/share/qemu/kvmvapic.bin; do
    [ -f "$blob" ] || die "$blob missing: run scripts/setup-host.sh"
    mkdir -p "$work/build/qemu-bundle/usr/local/share/qemu"
    ln -sf "$blob" "$work/build/qemu-bundle/usr/local/share/qemu/$(basename "$blob")"
done
mkdir -p "$PVDC_BUILD"
ln -sfn "$work/build" "$PVDC_BUILD/$variant"
# The tree it was built from: the guest harness uses its python/qemu.
ln -sfn "$work/src" "$PVDC_BUILD/$variant-src"
echo "$qemu_version" > "$PVDC_BUILD/$variant-version"
[ -z "$stamp" ] || echo "$qemu_version" > "$stamp"
stage "QEMU $qemu_version ($variant) ready: $PVDC_BUILD/$variant/${targets[0]}"
