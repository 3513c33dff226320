#!/bin/bash
# Install the Debian packages needed to build QEMU with pvdc, the guest
# driver, the guest image and to run the tests.  Idempotent: a second run
# installs nothing and makes no network access beyond "apt-get update" when
# a package is actually missing.
#
#   scripts/setup-host.sh
set -euo pipefail
. "$(dirname "$0")/lib.sh"
help_and_exit_if_asked "$@"

SOURCES=/etc/apt/sources.list.d/pvdc.sources
# bookworm-backports for meson >= 1.5 (QEMU 10 needs it), trixie as deb-src
# only: the qemu source package.  trixie is never a binary suite here.
SOURCES_CONTENT='# Added by pvdc scripts/setup-host.sh
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
'

PACKAGES=(
    # QEMU build (ccache: scripts/build-qemu.sh compiles through it)
    build-essential pkg-config ninja-build flex bison python3-venv
    libglib2.0-dev libpixman-1-dev libfdt-dev libpng-dev zlib1g-dev
    dpkg-dev xz-utils ccache
    # what QEMU's default devices need of the host: user networking, Linux
    # AIO and io_uring, seccomp, SPICE USB redirection, sound, zstd; swtpm
    # is the TPM emulator QEMU's tpm-tis and tpm-crb talk to
    libslirp-dev libaio-dev liburing-dev libseccomp-dev libusbredirparser-dev
    libpulse-dev libasound2-dev libzstd-dev swtpm swtpm-tools
    # QEMU's user interfaces: GTK and SDL windows with OpenGL, SPICE, the
    # D-Bus display (VNC needs nothing more)
    libgtk-3-dev libepoxy-dev libgbm-dev libsdl2-dev
    libspice-server-dev libspice-protocol-dev
    # libvirt with the pvdc video model (scripts/build-libvirt.sh)
    libxml2-dev libxml2-utils xsltproc libgnutls28-dev libtirpc-dev
    libyajl-dev libreadline-dev
    # back-end tests: a private bus, SPICE's client library, an X server
    dbus-daemon python3-gi gir1.2-spiceclientglib-2.0
    xvfb x11-utils xdotool libgl1-mesa-dri libegl-mesa0
    # Debian's own QEMU: the libvirt test's QEMU without pvdc
    qemu-system-x86
    # firmware and option ROMs the project's QEMU finds on its firmware path
    # (the +ds source tree has none): SeaBIOS and its VGA BIOSes, iPXE's NIC
    # ROMs, qemu-system-data's blobs, and OVMF for UEFI guests
    seabios ipxe-qemu qemu-system-data ovmf
    # the boot display test: Debian's netboot installer (kernel and initrd),
    # and Debian's GRUB for BIOS and UEFI on a rescue ISO (grub-mkrescue
    # packs it with xorriso, the EFI image with mtools) that boots the
    # stock guest
    debian-installer-12-netboot-amd64
    grub-common grub-pc-bin grub-efi-amd64-bin xorriso mtools
    # guest image
    busybox-static cpio kmod libdrm-dev libdrm-tests
    # debug guest kernel (scripts/build-debug-kernel.sh; objtool needs libelf)
    bc libelf-dev
    # the upstream series check: git am, QEMU's manual (Sphinx and the
    # theme QEMU's docs/conf.py uses); checkpatch (perl)
    git python3-sphinx python3-sphinx-rtd-theme perl
    # the DKMS package (scripts/build-deb.sh) and the stock Debian guest's
    # root filesystem (scripts/build-rootfs.sh)
    debhelper dh-dkms debootstrap e2fsprogs
    # libvirt test (tests/libvirt: the test starts its own daemon, and
    # makes a domain with virt-install, whose new qcow2 disk the daemon's
    # storage driver creates with qemu-img)
    libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients virtinst
    qemu-utils
    # scripts/fuzz.sh: QEMU's generic-fuzz needs clang and libFuzzer
    clang-14 libclang-rt-14-dev
)

need_update=0
if ! printf '%s' "$SOURCES_CONTENT" | cmp -s - "$SOURCES"; then
    stage "adding bookworm-backports and trixie deb-src to $SOURCES"
    printf '%s' "$SOURCES_CONTENT" | as_root tee "$SOURCES" >/dev/null
    need_update=1
fi

missing=()
for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
        missing+=("$p")
done
# meson must come from backports: bookworm's 1.0 is too old for QEMU 10.
if ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' meson 2>/dev/null || echo 0)" ge 1.5; then
    missing+=("meson/bookworm-backports")
fi

kernel_version() {
    # The metapackage names the exact ABI version; image and headers must match.
    apt-cache depends linux-image-6.12-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\(6\.12[^ ]*-amd64\)$/\1/p' | grep -v unsigned | head -n1
}

if [ ${#missing[@]} -gt 0 ] || [ $need_update -eq 1 ] || [ -z "$(kernel_version)" ]; then
    stage "apt-get update"
    as_root apt-get -o DPkg::Lock::Timeout=600 update -q
fi

KVER=$(kernel_version)
[ -n "$KVER" ] || die "cannot resolve linux-image-6.12-amd64 to a kernel version"
dpkg-query -W -f='${Status}\n' "linux-headers-$KVER" 2>/dev/null | grep -q '^install ok installed' ||
    missing+=("linux-headers-$KVER")

if [ ${#missing[@]} -gt 0 ]; then
    stage "installing ${#missing[@]} packages: ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 \
        install -y -q --no-install-recommends "${missing[@]}"
else
    stage "host packages already installed"
fi
mkdir -p "$PVDC_BUILD"
echo "$KVER" > "$PVDC_BUILD/kernel-version"
stage "guest kernel version: $KVER"
