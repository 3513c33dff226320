#!/usr/bin/python3
"""A normal VM on the project's QEMU, in one boot.

The project's QEMU has QEMU's default device set and finds Debian's
firmware by itself (scripts/build-qemu.sh): this boots the test guest on
i440fx (-M pc, where the other suites use q35) with pvdc beside the devices
a VM made by virt-install or virt-manager has, none of which the project's
earlier minimal QEMU had: bochs-display (its VGA BIOS comes from Debian's
seabios package), a virtio disk, a virtio NIC on user networking (its iPXE
ROM comes from ipxe-qemu) and a USB tablet on xHCI.  Each device is driven
by its Linux driver in the guest; no -L is given.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          GuestVM, Tap, modeset_head)
from pvdc_paths import ROOT  # noqa: E402

# PCI vendor:device of what the guest must find.  The i440FX host bridge
# proves the machine type; the virtio devices are transitional on a
# conventional PCI bus.
I440FX = "0x8086:0x1237"
BOCHS_DISPLAY = "0x1234:0x1111"
VIRTIO_NET = "0x1af4:0x1000"
DISK_SIZE = 1 << 20
# What the host puts at the start of the disk and where the guest writes.
DISK_MAGIC = b"pvdc virtio-blk disk from the host\n"
GUEST_WRITE_OFFSET = 4096
GUEST_MAGIC = "pvdc virtio-blk write from the guest"
# slirp's own address on user networking and the guest's usual one.
GATEWAY, GUEST_ADDRESS = "10.0.2.2", "10.0.2.15/24"
TABLET = "QEMU QEMU USB Tablet"
EVENT_SIZE, EV_ABS = 24, 3
TABLET_MOVES = 5


def devices(disk):
    return ["-device", "pvdc,id=pvdc0",
            "-device", "bochs-display,id=bochs0",
            "-drive", f"if=none,id=disk0,format=raw,file={disk}",
            "-device", "virtio-blk-pci,drive=disk0",
            "-netdev", "user,id=net0",
            "-device", "virtio-net-pci,netdev=net0",
            "-device", "qemu-xhci,id=xhci0",
            "-device", "usb-tablet,id=tablet0,bus=xhci0.0"]


def load_module(vm, name):
    """insmod the module file NAME.ko and what comes before it in the image
    builder's order (guest-driver/image/mkinitramfs.py: dependencies
    first); the kernel then has module NAME."""
    vm.check(f"for m in $(cat /etc/pvdc/extra-modules.order); do "
             f"insmod /lib/modules/$m 2>/dev/null; "
             f"[ \"$m\" = {name}.ko ] && break; done; "
             f"grep -q '^{name.replace('-', '_')} ' /proc/modules")


def pci_device(vm, ids):
    """The sysfs folder of the PCI device with vendor:device IDS."""
    out = vm.check("for d in /sys/bus/pci/devices/*; do "
                   "echo \"$(cat $d/vendor):$(cat $d/device) $d\"; done")
    for line in out.splitlines():
        found, _, path = line.partition(" ")
        if found == ids:
            return path
    raise AssertionError(f"no PCI device {ids}:\n{out}")


def machine_is_i440fx(vm):
    pci_device(vm, I440FX)


def pvdc_drives_head0(vm):
    out = vm.check("cat /sys/class/drm/card0/device/uevent")
    if "DRIVER=pvdc" not in out:
        raise AssertionError(f"card0 is not driven by pvdc:\n{out}")
    log = vm.start_background("pvdc-modeset 0", r"^# holding")

    def bars(pic):
        try:
            modeset_head(pic)
        except GuestError as e:
            raise AssertionError(str(e)) from None
    try:
        vm.wait_screen("colour bars on pvdc's head 0", bars, timeout=10)
    finally:
        out = vm.stop_background(log)
    if "not ok" in out:
        raise AssertionError(out)


def option_rom(vm, ids, what):
    """The device's ROM BAR holds an option ROM (0x55 0xaa): QEMU found its
    romfile on the firmware path."""
    rom = pci_device(vm, ids) + "/rom"
    out = vm.check(f"echo 1 > {rom}; head -c 2 {rom} | od -An -tx1; "
                   f"echo 0 > {rom}")
    if out.split() != ["55", "aa"]:
        raise AssertionError(f"{what}'s ROM starts with {out.strip()!r}")


def bochs_drives_its_display(vm):
    load_module(vm, "bochs")
    path = pci_device(vm, BOCHS_DISPLAY)
    if not vm.poll(f"[ -d {path}/drm ]", 10):
        raise AssertionError("bochs-display has no DRM device")
    driver = vm.check(f"basename $(readlink {path}/driver)").strip()
    if driver != "bochs-drm":
        raise AssertionError(f"bochs-display is driven by {driver!r}")


def virtio_disk_round_trip(vm, disk):
    load_module(vm, "virtio_blk")
    if not vm.poll("[ -b /dev/vda ]", 10):
        raise AssertionError("no /dev/vda")
    size = int(vm.check("cat /sys/block/vda/size")) * 512
    if size != DISK_SIZE:
        raise AssertionError(f"/dev/vda has {size} bytes, not {DISK_SIZE}")
    seen = vm.check(f"head -c {len(DISK_MAGIC)} /dev/vda")
    if seen != DISK_MAGIC.decode():
        raise AssertionError(f"the disk starts with {seen!r}")
    # conv=fsync: the guest's flush returns once QEMU has written the file.
    vm.check(f"printf '{GUEST_MAGIC}' | dd of=/dev/vda bs=512 "
             f"seek={GUEST_WRITE_OFFSET // 512} conv=fsync 2>/dev/null")
    with open(disk, "rb") as f:
        f.seek(GUEST_WRITE_OFFSET)
        back = f.read(len(GUEST_MAGIC))
    if back != GUEST_MAGIC.encode():
        raise AssertionError(f"the host reads {back!r} where the guest wrote")


def virtio_net_reaches_gateway(vm):
    load_module(vm, "virtio_net")
    if not vm.poll("[ -d /sys/class/net/eth0 ]", 10):
        raise AssertionError("no eth0")
    # slirp answers an echo request to its own address itself: nothing
    # leaves QEMU.
    vm.check(f"ip link set eth0 up && ip addr add {GUEST_ADDRESS} dev eth0")
    rc, out = vm.run(f"ping -c 1 -W 10 {GATEWAY}", 30)
    if rc != 0:
        raise AssertionError(f"ping {GATEWAY} exited {rc}:\n{out}")


def tablet_reports_absolute_moves(vm):
    load_module(vm, "evdev")
    if not vm.poll(f"grep -q '{TABLET}' /proc/bus/input/devices", 20):
        raise AssertionError(f"no {TABLET!r} input device:\n"
                             + vm.check("cat /proc/bus/input/devices"))
    event = vm.check(f"awk '/^N: Name=\"{TABLET}\"/ {{ t = 1 }} "
                     f"t && /^H: Handlers=/ {{ match($0, /event[0-9]+/); "
                     f"print substr($0, RSTART, RLENGTH); exit }}' "
                     f"/proc/bus/input/devices").strip()
    if not event:
        raise AssertionError(f"{TABLET!r} has no event handler")
    # Three input_events of 24 bytes: an absolute move is X, Y and a SYN.
    want = 3 * EVENT_SIZE
    log = vm.start_background(f"(head -c {want} /dev/input/{event} | "
                              f"od -An -v -tx1)")
    # The reader may open the device after a move, and the kernel drops a
    # move to where the pointer already is: move somewhere new until the
    # guest has read one.
    for i in range(1, TABLET_MOVES + 1):
        vm.cmd("input-send-event", events=[
            {"type": "abs", "data": {"axis": "x", "value": 0x1000 * i}},
            {"type": "abs", "data": {"axis": "y", "value": 0x0800 * i}}])
        if vm.poll(f"[ $(wc -w < {log}) -ge {want} ]", 5):
            break
    else:
        raise AssertionError("the guest read no move of the tablet: "
                             + vm.run(f"cat {log}")[1])
    data = bytes(int(b, 16) for b in vm.stop_background(log).split())
    # struct input_event: a 16-byte time, then __u16 type and code.
    types = {int.from_bytes(data[i + 16:i + 18], "little")
             for i in range(0, want, EVENT_SIZE)}
    if EV_ABS not in types:
        raise AssertionError(f"no EV_ABS among the event types {types}")


def installed_qemu_finds_its_firmware(tmp, disk):
    """scripts/install.sh stages the emulator under a prefix of its own
    (no build directory beside it), which starts a machine whose devices
    need option ROMs from Debian's packages."""
    destdir, prefix = os.path.join(tmp, "staged"), "/opt/pvdc-test"
    p = subprocess.run([os.path.join(ROOT, "scripts", "install.sh"),
                        "--prefix", prefix, "--destdir", destdir],
                       capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise AssertionError(f"install.sh exited {p.returncode}:\n"
                             + (p.stdout + p.stderr)[-3000:])
    qemu = os.path.join(destdir + prefix, "bin", "qemu-system-x86_64")
    qmp = "".join(json.dumps({"execute": c}) + "\n"
                  for c in ("qmp_capabilities", "quit"))
    p = subprocess.run([qemu, "-M", "pc", "-nodefaults", "-display", "none",
                        "-S", "-monitor", "none", "-serial", "none",
                        "-qmp", "stdio", *devices(disk)],
                       input=qmp, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError(f"the installed QEMU exited {p.returncode}:\n"
                             + (p.stdout + p.stderr)[-3000:])


def main():
    tap = Tap()
    tmp = tempfile.mkdtemp(prefix="pvdc-machine-")
    disk = os.path.join(tmp, "disk.raw")
    with open(disk, "wb") as f:
        f.write(DISK_MAGIC.ljust(DISK_SIZE, b"\0"))
    tap.case("the QEMU that scripts/install.sh installs finds its firmware "
             "without -L", installed_qemu_finds_its_firmware, tmp, disk)
    vm = GuestVM(devices=devices(disk), machine="pc")
    try:
        vm.start()
    except GuestError as e:
        tap.fail("the guest boots on i440fx with pvdc, bochs-display, a "
                 "virtio disk and NIC and a USB tablet", e)
        return tap.done()
    try:
        tap.case("the machine is an i440FX PC", machine_is_i440fx, vm)
        tap.case("pvdc's driver shows its colour bars on head 0 on i440fx",
                 pvdc_drives_head0, vm)
        tap.case("bochs-display has its VGA BIOS without -L", option_rom,
                 vm, BOCHS_DISPLAY, "bochs-display")
        tap.case("virtio-net has its iPXE ROM without -L", option_rom,
                 vm, VIRTIO_NET, "virtio-net-pci")
        tap.case("bochs-display is driven by the bochs DRM driver",
                 bochs_drives_its_display, vm)
        tap.case("the guest reads the host's bytes on the virtio disk and "
                 "the host reads the guest's", virtio_disk_round_trip,
                 vm, disk)
        tap.case("the virtio NIC reaches user networking's gateway",
                 virtio_net_reaches_gateway, vm)
        tap.case("the USB tablet on xHCI reports QMP's absolute moves",
                 tablet_reports_absolute_moves, vm)
        tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    except GuestError as e:
        tap.fail("the guest stays responsive", e)
    finally:
        vm.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
