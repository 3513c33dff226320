#!/bin/bash
# Build the debug guest kernel: Debian's linux-source-6.12, configured from
# guest-driver/kernel/guest.config + debug.config merged onto allnoconfig
# (lockdep, wait/wound slowpath injection, KASAN, UBSAN, debug objects,
# sw_sync).  The guest suites run on it in addition to Debian's kernel.
#
#   scripts/build-debug-kernel.sh [--stamp FILE]
#
# The source tree and the build live in the cache, the build keyed by the
# source version, the fragments and the compiler: a warm run finds it ready
# and only re-links build/kernel-debug (the installed image and modules, laid
# out like the extracted linux-image package) and build/kernel-debug-build
# (the tree out-of-tree modules build against).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

stamp=
while [ $# -gt 0 ]; do
    case $1 in
    --stamp) stamp=$2; shift ;;
    *) die "usage: build-debug-kernel.sh [--stamp FILE]" ;;
    esac
    shift
done

FRAGMENTS=(guest-driver/kernel/guest.config guest-driver/kernel/debug.config)
KVER=$(cat "$PVDC_BUILD/kernel-version" 2>/dev/null) ||
    die "run scripts/setup-host.sh first (no build/kernel-version)"

# The source of the kernel the project boots: linux-source-6.12 at the
# version of the linux-image package.  The source package can be one step
# ahead of the image (or the image's version can have left the archive):
# then the newest source is used and said so.
image_version=$(apt-cache show "linux-image-$KVER" 2>/dev/null |
                sed -n 's/^Version: //p' | head -n1)
src_versions=$(apt-cache madison linux-source-6.12 2>/dev/null | awk '{print $3}')
if [ -n "$image_version" ] && grep -qxF "$image_version" <<<"$src_versions"; then
    version=$image_version
else
    version=$(sort -V <<<"$src_versions" | tail -n1)
    [ -n "$version" ] || die "no linux-source-6.12 in apt (run scripts/setup-host.sh)"
    stage "linux-source-6.12 $image_version is not in the archive: using $version" >&2
fi

SRC_CACHE=$PVDC_CACHE/linux-source
src=$SRC_CACHE/$version/linux-source-6.12
mkdir -p "$SRC_CACHE"
exec 9>"$SRC_CACHE/.lock"
flock 9
if [ ! -f "$SRC_CACHE/$version/.ready" ]; then
    rm -rf "$SRC_CACHE/$version"
    mkdir -p "$SRC_CACHE/$version"
    deb=$SRC_CACHE/linux-source-6.12_${version}_all.deb
    if [ ! -f "$deb" ]; then
        stage "1/5 downloading linux-source-6.12 $version (about 150 MB)"
        (cd "$SRC_CACHE" && apt-get download -q -o APT::Sandbox::User=root \
            "linux-source-6.12=$version")
    fi
    stage "1/5 extracting linux-source-6.12 $version"
    dpkg-deb --fsys-tarfile "$deb" |
        tar -xO ./usr/src/linux-source-6.12.tar.xz | tar -xJ -C "$SRC_CACHE/$version"
    [ -f "$src/Makefile" ] || die "no kernel tree in linux-source-6.12 $version"
    rm -f "$deb"
    touch "$SRC_CACHE/$version/.ready"
else
    stage "1/5 linux-source-6.12 $version already extracted"
fi
exec 9>&-

key=$( (printf '%s\n' "$version"; gcc --version | head -n1; hash_files "${FRAGMENTS[@]}") |
      sha256sum | cut -c1-12)
work=$PVDC_CACHE/kernel-debug/$version-$key
mkdir -p "$work"
exec 8>"$work/.lock"
flock 8

kmake() {
    make -C "$src" O="$work/build" LOCALVERSION= -j"$(nproc)" "$@"
}

if [ ! -f "$work/.ready" ]; then
    start=$(date +%s)
    if [ ! -f "$work/build/.config" ]; then
        stage "2/5 configuring: ${FRAGMENTS[*]} onto allnoconfig"
        rm -rf "$work/build"
        mkdir -p "$work/build"
        (cd "$PVDC_ROOT" && cat "${FRAGMENTS[@]}") >"$work/fragments.config"
        kmake KCONFIG_ALLCONFIG="$work/fragments.config" allnoconfig \
            >"$work/config.log" 2>&1 ||
            { cat "$work/config.log"; die "make allnoconfig failed"; }
        # Kconfig drops what it cannot satisfy without a word: insist.
        missing=$(awk '
            FNR == NR { if (/^CONFIG_/) { split($0, kv, "="); have[kv[1]] = $0 } next }
            /^CONFIG_/ { split($0, kv, "="); if (have[kv[1]] != $0) print }
            /^# CONFIG_.* is not set$/ { if ($2 in have) print }
            ' "$work/build/.config" "$work/fragments.config")
        if [ -n "$missing" ]; then
            rm -f "$work/build/.config"
            die "the kernel config lacks what the fragments ask for:"$'\n'"$missing"
        fi
    fi
    krel=$(kmake -s kernelrelease)
    stage "3/5 building Linux $krel (bzImage and modules, about 1200 files)"
    # One line per hundred compiled files; errors and warnings are kept.
    set +e
    kmake bzImage modules 2>&1 | tee "$work/build.log" | awk '
        /^  CC / { n++; if (n % 100 == 0) { printf "  %d files compiled\n", n; fflush() } next }
        /^  [A-Z]/ { next }
        { print; fflush() }'
    rc=${PIPESTATUS[0]}
    set -e
    [ "$rc" -eq 0 ] || die "the kernel build failed (log: $work/build.log)"

    stage "4/5 installing the image and modules"
    rm -rf "$work/root"
    mkdir -p "$work/root/boot"
    cp "$work/build/arch/x86/boot/bzImage" "$work/root/boot/vmlinuz-$krel"
    kmake -s INSTALL_MOD_PATH="$work/root" INSTALL_MOD_STRIP=1 \
        DEPMOD=/sbin/depmod modules_install >/dev/null
    echo "$krel" >"$work/kernel-release"
    stage "debug kernel built in $(( $(date +%s) - start )) s"
    touch "$work/.ready"
else
    stage "2/5-4/5 debug kernel $(cat "$work/kernel-release") already built"
fi

stage "5/5 linking build/kernel-debug"
ln -sfn "$work/root" "$PVDC_BUILD/kernel-debug"
ln -sfn "$work/build" "$PVDC_BUILD/kernel-debug-build"
cp "$work/kernel-release" "$PVDC_BUILD/kernel-debug-version"
[ -z "$stamp" ] || cp "$work/kernel-release" "$stamp"
