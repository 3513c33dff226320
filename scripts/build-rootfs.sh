#!/bin/bash
# Build the stock Debian 12 guest on which tests/guest/test_stock.py and
# `run-demo.sh --distro` boot pvdc: a minimal root filesystem made with
# Debian's own tools (debootstrap, apt, dpkg, dkms, initramfs-tools), with
# the stock 6.12 kernel, DKMS, Weston and the project's pvdc-dkms package,
# installed the way a user installs it.
#
#   build-rootfs.sh --deb PVDC-DKMS.deb --output DESCRIPTOR.json
#
# Two layers, each cached in $PVDC_CACHE/rootfs under the hash of its
# inputs:
#   base-<key>   debootstrap plus the stock packages and the guest kernel,
#                and the desktop (Weston, Mesa) from bookworm-backports; the
#                kernel headers are only downloaded (key: the functions that
#                build it, the package lists, the kernel version).
#   image-<key>  a copy of the base where apt installs pvdc-dkms, then the
#                kernel headers, so that DKMS builds pvdc.ko from its kernel
#                hook as it does for a kernel installed later; the guest's
#                system files from tests/guest/stock/rootfs; packed as an
#                ext4 disk image with the kernel and initrd beside it (key:
#                the base key, the .deb, those files).
# The descriptor names the disk image, kernel, initrd and kernel version.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
    exit "${1:-0}"
}

deb=
output=
while [ $# -gt 0 ]; do
    case $1 in
    --deb) deb=$(realpath "$2"); shift 2 ;;
    --output) output=$2; shift 2 ;;
    -h|--help) usage ;;
    *) usage 1 >&2 ;;
    esac
done
if [ -z "$deb" ] || [ -z "$output" ]; then usage 1 >&2; fi
[ "$(id -u)" -eq 0 ] || die "building a root filesystem needs root (debootstrap, chroot)"

MIRROR=${PVDC_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${PVDC_DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KVER=$(cat "$PVDC_BUILD/kernel-version")

# What a user's minimal Debian 12 desktop guest on pvdc needs, no more:
# systemd and udev (modalias loading), DKMS and what it builds with, a font
# for Weston's panel.
PACKAGES=(
    systemd-sysv udev kmod procps
    dkms
    "linux-image-$KVER"
    fonts-dejavu-core xkb-data
)
# The desktop from bookworm-backports, as a user who wants clients on the
# display's planes installs it: Weston 14 with its demo clients, and Mesa 25
# for its GL renderer (llvmpipe through GBM).  Debian 12's own Weston 10
# and Mesa 22.3 never put a client's dma-buf on a KMS plane: Weston 10 takes
# no buffer without an explicit modifier, and Mesa 22.3's llvmpipe offers
# none, so Weston's linux-dmabuf advertises no format a client can send as
# LINEAR.  Only these packages (and what they need that bookworm's
# versions cannot satisfy) come from backports, not systemd or the rest.
BACKPORTS_SUITE=bookworm-backports
BACKPORTS=(
    weston
    libgl1-mesa-dri libegl-mesa0 libgbm1
)

GUEST_FILES=tests/guest/stock/rootfs
cache=$PVDC_CACHE/rootfs
mkdir -p "$cache/archives"
exec 9>"$cache/.lock"
flock 9

mounted=()
unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        umount -l "${mounted[$i]}" 2>/dev/null || true
    done
    mounted=()
}
trap unmount_all EXIT

bind() {
    mount --bind "$1" "$2"
    mounted+=("$2")
}

# Mount what maintainer scripts expect (proc, sys, dev) and the shared apt
# archive, so a rebuild does not download the packages again.
enter() {
    local root=$1
    mount -t proc proc "$root/proc"; mounted+=("$root/proc")
    mount -t sysfs sysfs "$root/sys"; mounted+=("$root/sys")
    bind /dev "$root/dev"
    bind /dev/pts "$root/dev/pts"
    bind "$cache/archives" "$root/var/cache/apt/archives"
}

in_root() {
    local root=$1
    shift
    chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"
}

apt_in() {
    local root=$1
    shift
    in_root "$root" apt-get -q -y -o Dpkg::Use-Pty=0 --no-install-recommends "$@"
}

# Remove a half-built tree: unmount first, also what a killed earlier run
# left mounted in it (deepest first), never cross into another file system.
discard() {
    local dir
    unmount_all
    [ -e "$1" ] || return 0
    dir=$(realpath "$1")
    awk -v d="$dir/" 'index($2 "/", d) == 1 { print $2 }' /proc/self/mounts |
        sort -r | while read -r m; do umount -l "$m" || true; done
    rm -rf --one-file-system "$1"
}

build_base() {
    local work=$base.tmp
    discard "$work"
    stage "rootfs base 1/4: debootstrap bookworm (minbase)" >&2
    mkdir -p "$cache/debootstrap"
    debootstrap --variant=minbase --cache-dir="$cache/debootstrap" \
        bookworm "$work" "$MIRROR" >"$cache/debootstrap.log" 2>&1 || {
        tail -n 30 "$cache/debootstrap.log" >&2
        die "debootstrap failed (log: $cache/debootstrap.log)"
    }
    # Only what finds and mounts the root disk goes into the initrd
    # (initramfs-tools' MODULES=dep cannot see the guest's disk from a
    # chroot, and MODULES=most takes minutes to pack); everything else,
    # pvdc.ko included, udev loads from the root filesystem.
    mkdir -p "$work/etc/initramfs-tools/conf.d"
    echo "MODULES=list" >"$work/etc/initramfs-tools/conf.d/pvdc-guest.conf"
    printf '%s\n' ahci sd_mod ext4 >>"$work/etc/initramfs-tools/modules"
    cat >"$work/etc/apt/sources.list" <<EOF
deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY_MIRROR bookworm-security main
deb $MIRROR $BACKPORTS_SUITE main
EOF
    # Services are not started inside the chroot.
    printf '#!/bin/sh\nexit 101\n' >"$work/usr/sbin/policy-rc.d"
    chmod 755 "$work/usr/sbin/policy-rc.d"
    enter "$work"
    stage "rootfs base 2/4: installing ${#PACKAGES[@]} packages and their dependencies" >&2
    {
        apt_in "$work" update &&
        apt_in "$work" install "${PACKAGES[@]}" &&
        apt_in "$work" install --download-only "linux-headers-$KVER"
    } >"$cache/base-apt.log" 2>&1 || {
        tail -n 30 "$cache/base-apt.log" >&2
        die "apt in the guest root failed (log: $cache/base-apt.log)"
    }
    # A second transaction, so that the target release prefers backports'
    # versions only for the desktop and what it pulls in.
    stage "rootfs base 3/4: installing ${BACKPORTS[*]} from $BACKPORTS_SUITE" >&2
    apt_in "$work" install -t "$BACKPORTS_SUITE" "${BACKPORTS[@]}" \
        >>"$cache/base-apt.log" 2>&1 || {
        tail -n 30 "$cache/base-apt.log" >&2
        die "apt in the guest root failed (log: $cache/base-apt.log)"
    }
    unmount_all
    stage "rootfs base 4/4: $(du -sm --one-file-system "$work" | cut -f1) MB" >&2
    mv "$work" "$base"
}

# The base downloaded the headers into the shared archive cache; fetch
# them again if the cache lost them, with fresh package lists if the base's
# have gone stale.
fetch_headers() {
    apt_in "$1" install --download-only "linux-headers-$KVER" || {
        apt_in "$1" update &&
            apt_in "$1" install --download-only "linux-headers-$KVER"
    }
}

build_image() {
    local work=$image.tmp root log=$cache/image-install.log
    discard "$work"
    mkdir -p "$work"
    root=$work/root
    stage "rootfs image 1/4: copying the base" >&2
    cp -a "$base" "$root"
    enter "$root"
    cp "$deb" "$root/root/$(basename "$deb")"
    stage "rootfs image 2/4: apt install ./$(basename "$deb"), then the kernel headers" >&2
    # The package goes in first, before the headers of the guest's kernel:
    # DKMS must then build pvdc.ko from the headers' install hook, the path
    # a kernel installed after the package takes.
    {
        apt_in "$root" install "/root/$(basename "$deb")" &&
        fetch_headers "$root" &&
        apt_in "$root" install --no-download "linux-headers-$KVER"
    } >"$log" 2>&1 || {
        tail -n 40 "$log" >&2
        die "installing pvdc-dkms in the guest root failed (log: $log)"
    }
    cp "$log" "$work/install.log"
    in_root "$root" dkms status pvdc 2>/dev/null | grep -q "$KVER.*: installed" || {
        cat "$log" >&2
        die "DKMS did not install pvdc.ko for $KVER"
    }
    unmount_all
    # The .deb stays in /root: the test installs it again in the running
    # guest, as a user would.
    rm -f "$root/usr/sbin/policy-rc.d"

    stage "rootfs image 3/4: guest system files" >&2
    cp -a "$PVDC_ROOT/$GUEST_FILES"/. "$root"/
    echo pvdc-guest >"$root/etc/hostname"
    printf '127.0.1.1\tpvdc-guest\n' >>"$root/etc/hosts"
    echo "LABEL=pvdc-root / ext4 defaults 0 1" >"$root/etc/fstab"
    in_root "$root" passwd -d root >/dev/null
    in_root "$root" systemctl enable pvdc-harness.service >/dev/null 2>&1
    # The serial line belongs to the harness, not to a login prompt.
    in_root "$root" systemctl mask serial-getty@ttyS0.service >/dev/null 2>&1
    cp "$root/boot/vmlinuz-$KVER" "$work/vmlinuz"
    cp "$root/boot/initrd.img-$KVER" "$work/initrd.img"

    stage "rootfs image 4/4: packing an ext4 disk image" >&2
    local mb
    mb=$(du -sm --one-file-system "$root" | cut -f1)
    rm -f "$work/disk.img"
    # Room for the in-guest reinstall of the package and the logs.
    truncate -s $((mb * 13 / 10 + 512))M "$work/disk.img"
    mke2fs -q -t ext4 -L pvdc-root -d "$root" "$work/disk.img"
    rm -rf --one-file-system "$root"
    mv "$work" "$image"
}

base_key=$( (declare -f build_base enter in_root apt_in
              echo "${PACKAGES[*]}" "$BACKPORTS_SUITE" "${BACKPORTS[*]}" \
                  "$MIRROR" "$KVER") |
    sha256sum | cut -c1-16)
guest_files=$(cd "$PVDC_ROOT" && find "$GUEST_FILES" -type f | LC_ALL=C sort)
# shellcheck disable=SC2086 # file names without spaces, one per word
image_key=$( (echo "$base_key"; sha256sum "$deb" | cut -d' ' -f1
              declare -f build_image; hash_files $guest_files) |
    sha256sum | cut -c1-16)
base=$cache/base-$base_key
image=$cache/image-$image_key

if [ -d "$base" ]; then
    stage "rootfs base $base_key: cached" >&2
else
    build_base
fi
if [ -d "$image" ]; then
    stage "rootfs image $image_key: cached" >&2
else
    build_image
fi

# Keep the cache from growing without bound: the two newest of each layer.
for layer in base image; do
    # shellcheck disable=SC2012 # names are ours, without spaces; *[!p]
    # leaves out the .tmp of a build in progress
    ls -dt "$cache/$layer"-*[!p] 2>/dev/null | tail -n +3 |
        while read -r old; do rm -rf --one-file-system "$old"; done
done

cat >"$output" <<EOF
{
  "disk": "$image/disk.img",
  "kernel": "$image/vmlinuz",
  "initrd": "$image/initrd.img",
  "kernel_version": "$KVER",
  "install_log": "$image/install.log"
}
EOF
