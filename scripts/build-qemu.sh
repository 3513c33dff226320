#!/bin/bash
# Build qemu-system-x86_64 with pvdc grafted in, plus the pvdc qtests:
# QEMU's default device set, Debian's firmware on its firmware path.
#
#   scripts/build-qemu.sh [--asan | --fuzz] [--stamp FILE]
#
# --asan builds the qtests' QEMU with AddressSanitizer and UBSan, with
# only the devices they use (build/qemu-asan).
# --fuzz builds qemu-fuzz-x86_64 (libFuzzer, clang, ASan) for
# scripts/fuzz.sh, in a third build directory (build/qemu-fuzz).
#
# The QEMU tree and its build directory live in the cache, keyed by the QEMU
# version and the configure options, and are reused by every clone: grafting
# rewrites only the files whose content changed, so touching one device file
# recompiles that file alone; ccache (its cache in the same folder) keeps a
# new key cheap.  build/qemu (or build/qemu-asan) points at it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

variant=qemu
extra_cfg=()
cc=(--cc=/usr/lib/ccache/gcc --cxx=/usr/lib/ccache/g++)
# QEMU and the pvdc qtests, as tests/qtest/meson.build lists them.
targets=(qemu-system-x86_64 $(grep -o "'pvdc[a-z-]*-test'" \
         "$PVDC_ROOT/tests/qtest/meson.build" | tr -d "'" | sort -u |
         sed 's|^|tests/qtest/|'))
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
        cc=(--cc=/usr/lib/ccache/clang-14 --cxx=/usr/lib/ccache/clang++-14)
        extra_cfg=(--enable-fuzzing --enable-asan)
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

# Where QEMU looks for firmware and option ROMs, as Debian's qemu-system-x86
# is configured: qemu-system-data's blobs (linuxboot, kvmvapic, multiboot,
# pvh), SeaBIOS and its VGA BIOSes, iPXE's ROMs for the NICs.  The +ds source
# has none of them; OVMF is found by path (-bios, pflash or libvirt's
# firmware descriptors in /usr/share/qemu/firmware).
firmware=(/usr/share/qemu /usr/share/seabios /usr/lib/ipxe/qemu)
cfg=(--python=/usr/bin/python3 --target-list=x86_64-softmmu
     --without-default-features
     --enable-tcg --enable-kvm --enable-pixman --enable-vnc --enable-png
     --disable-docs --disable-install-blobs --disable-werror
     "--firmwarepath=$(IFS=:; echo "${firmware[*]}")")
case $variant in
qemu)
    # QEMU's default device set for x86_64, as a distribution ships it (pvdc
    # is selected by its Kconfig default like the other PCI display
    # devices), with the host features its useful devices and libvirt's
    # defaults need: user networking, TPM, vhost, seccomp, Linux AIO and
    # io_uring, SPICE USB redirection, PulseAudio and ALSA for HDA/ICH9
    # sound, zstd.  Each is enabled by name: configure fails if its
    # development package (scripts/setup-host.sh) is missing rather than
    # quietly building a QEMU without it.
    cfg+=(--enable-slirp --enable-tpm
          --enable-vhost-net --enable-vhost-kernel --enable-vhost-user
          --enable-seccomp --enable-linux-aio --enable-linux-io-uring
          --enable-usb-redir --enable-pa --enable-alsa --enable-zstd)
    ;;
qemu-asan | qemu-fuzz)
    # The sanitizer and fuzzing builds only run the pvdc qtests and
    # generic-fuzz on pvdc: q35, pvdc and its PCIe ports
    # (configs/devices/x86_64-softmmu/pvdc.mak) are all they need, and
    # instrumented code compiles about twice as slowly.
    cfg+=(--without-default-devices --with-devices-x86_64=pvdc)
    ;;
esac
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
# ccache through its compiler links: configure hands the compiler to meson
# in a cross file, where meson adds no ccache of its own.
cfg+=("${cc[@]}" "${extra_cfg[@]}")

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

# One compiler cache for every build directory: paths under the build's own
# folder are hashed relative to it, so that a new cache key (a QEMU update,
# a configure option) recompiles only what really changed.
export CCACHE_DIR=$PVDC_CACHE/ccache CCACHE_BASEDIR=$work CCACHE_NOHASHDIR=true
mkdir -p "$CCACHE_DIR"

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

# QEMU run from its build directory looks for every data directory inside
# qemu-bundle, the firmware path too: link each there, so that it finds the
# same firmware as an installed QEMU (scripts/install.sh) without -L.
for dir in "${firmware[@]}"; do
    [ -d "$dir" ] || die "$dir missing: run scripts/setup-host.sh"
    mkdir -p "$work/build/qemu-bundle$(dirname "$dir")"
    ln -sfn "$dir" "$work/build/qemu-bundle$dir"
done
mkdir -p "$PVDC_BUILD"
ln -sfn "$work/build" "$PVDC_BUILD/$variant"
# The tree it was built from: the guest harness uses its python/qemu.
ln -sfn "$work/src" "$PVDC_BUILD/$variant-src"
echo "$qemu_version" > "$PVDC_BUILD/$variant-version"
[ -z "$stamp" ] || echo "$qemu_version" > "$stamp"
stage "QEMU $qemu_version ($variant) ready: $PVDC_BUILD/$variant/${targets[0]}"
