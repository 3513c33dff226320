#!/usr/bin/python3
"""Build the pvdc test guest's initramfs.

busybox-static, the DRM modules pvdc and its peers (bochs, virtio-gpu)
depend on, pvdc.ko, the project's in-guest test programs and libdrm's
clients with the shared libraries they need, and the init script that
serves the host harness on the serial console.
"""

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Modules loaded at boot, with everything they depend on.  pvdc.ko itself is
# loaded by init after them (it is not in the kernel's module tree).
BOOT_MODULES = ["drm", "drm_kms_helper", "drm_shmem_helper", "ttm",
                "drm_ttm_helper", "drm_vram_helper"]
# Available in the image, not loaded: the peers for the side-by-side
# comparisons, vgem for PRIME (tests/guest/test_prime.py), and the drivers of the devices a normal VM has beside pvdc
# (virtio disk and network, a USB tablet on xHCI and the event interface
# that reads it; tests/guest/test_machine.py).
EXTRA_MODULES = ["bochs", "virtio-gpu", "virtio_blk", "virtio_net",
                 "xhci-pci", "usbhid", "hid-generic", "evdev", "vgem"]

LIBDRM_CLIENTS = ["/usr/bin/modetest", "/usr/bin/proptest",
                  "/usr/bin/vbltest", "/usr/bin/modeprint"]


def modinfo(moddir, name, field):
    out = subprocess.run(["/sbin/modinfo", "-b", moddir, "-k", kver, "-F",
                          field, name], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"mkinitramfs: modinfo {name}: {out.stderr.strip()}")
    return out.stdout.strip()


def has_module(root, name):
    return subprocess.run(["/sbin/modinfo", "-b", root, "-k", kver, "-F",
                           "filename", name], capture_output=True).returncode == 0


def module_closure(root, names, extra_deps=()):
    """Module files in load order (dependencies first)."""
    order, seen = [], set()

    def visit(name):
        name = name.replace("-", "_")
        if name in seen:
            return
        seen.add(name)
        deps = modinfo(root, name, "depends")
        for dep in filter(None, deps.split(",")):
            visit(dep)
        order.append(modinfo(root, name, "filename"))

    for n in list(names) + list(extra_deps):
        visit(n)
    return order


def ldd_libs(binary):
    out = subprocess.run(["ldd", binary], capture_output=True, text=True)
    libs = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if "=>" in parts and len(parts) >= 3 and parts[2].startswith("/"):
            libs.append(parts[2])
        elif parts and parts[0].startswith("/"):
            libs.append(parts[0])
    return libs


def copy(src, root, dst=None):
    dst = os.path.join(root, (dst or src).lstrip("/"))
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copy2(os.path.realpath(src), dst)
    return dst


def main():
    global kver
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel-root", required=True,
                    help="extracted linux-image package")
    kv = ap.add_mutually_exclusive_group(required=True)
    kv.add_argument("--kver", help="kernel release")
    kv.add_argument("--kver-file", help="file holding the kernel release")
    ap.add_argument("--module", required=True, help="pvdc.ko")
    ap.add_argument("--program", action="append", default=[],
                    help="in-guest test program (repeatable)")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    if args.kver_file:
        with open(args.kver_file) as f:
            kver = f.read().strip()
    else:
        kver = args.kver

    with tempfile.TemporaryDirectory() as root:
        for d in ["bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev",
                  "tmp", "etc/pvdc", "lib/modules", "root"]:
            os.makedirs(os.path.join(root, d), exist_ok=True)

        copy("/bin/busybox", root)
        applets = subprocess.run(["/bin/busybox", "--list-full"],
                                 capture_output=True, text=True).stdout.split()
        for applet in applets:
            link = os.path.join(root, applet)
            if not os.path.exists(link):
                os.makedirs(os.path.dirname(link), exist_ok=True)
                os.symlink("/bin/busybox", link)

        # Modules are stored uncompressed: busybox insmod cannot read .ko.xz.
        # The debug kernel (scripts/build-debug-kernel.sh) builds only the
        # peers it needs, uncompressed.
        files = module_closure(args.kernel_root, BOOT_MODULES)
        peers = [m for m in EXTRA_MODULES if has_module(args.kernel_root, m)]
        if peers != EXTRA_MODULES:
            print(f"  initramfs: kernel {kver} lacks "
                  f"{', '.join(sorted(set(EXTRA_MODULES) - set(peers)))}")
        extra = module_closure(args.kernel_root, peers)
        names = []
        for f in files + [e for e in extra if e not in files]:
            base = os.path.basename(f).removesuffix(".xz")
            if f.endswith(".xz"):
                data = subprocess.run(["xz", "-dc", f], check=True,
                                      capture_output=True).stdout
            else:
                with open(f, "rb") as ko:
                    data = ko.read()
            with open(os.path.join(root, "lib/modules", base), "wb") as out:
                out.write(data)
            if f in files:
                names.append(base)
        with open(os.path.join(root, "etc/pvdc/modules.order"), "w") as f:
            f.write("\n".join(names) + "\n")
        with open(os.path.join(root, "etc/pvdc/extra-modules.order"), "w") as f:
            f.write("\n".join(os.path.basename(e).removesuffix(".xz")
                              for e in extra) + "\n")
        copy(args.module, root, "/lib/modules/pvdc.ko")

        binaries = LIBDRM_CLIENTS + args.program
        libs = set()
        for b in LIBDRM_CLIENTS:
            copy(b, root)
        for p in args.program:
            copy(p, root, "/usr/bin/" + os.path.basename(p))
        for b in binaries:
            libs.update(ldd_libs(b))
        for lib in sorted(libs):
            copy(lib, root)

        dst = os.path.join(root, "init")
        shutil.copy(os.path.join(HERE, "init"), dst)
        os.chmod(dst, 0o755)

        cpio = subprocess.run(
            "find . -print0 | LC_ALL=C sort -z | "
            "cpio --null --create --format=newc --quiet --owner=0:0",
            shell=True, cwd=root, check=True, capture_output=True).stdout
        with gzip.open(args.output + ".tmp", "wb", compresslevel=6) as f:
            f.write(cpio)
        os.replace(args.output + ".tmp", args.output)
    print(f"  initramfs {args.output}: {len(names)} boot modules, "
          f"{len(binaries)} programs, {len(libs)} libraries")


if __name__ == "__main__":
    main()
