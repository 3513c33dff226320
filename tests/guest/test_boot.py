#!/usr/bin/python3
"""The boot display: what a VM shows on pvdc before its driver loads.

A q35 machine whose only display is pvdc shows on head 0, through the
device's ramfb companion (ramfb=auto), what Debian's SeaBIOS and OVMF
draw, and Debian's installer (debian-installer-12-netboot-amd64: its
kernel and initrd, booted by QEMU) under both.  Then the test guest boots
under OVMF with efifb on that framebuffer: when pvdc.ko loads it takes the
display over (no efifb left, one framebuffer device, its own picture on
head 0), and a system reset gives head 0 back to the firmware.  With
virtio-vga as the machine's boot display and pvdc (ramfb=off) a second
card, efifb is virtio-vga's and pvdc.ko leaves it alone.

GRUB's menu comes from a boot CD made on the host with Debian's GRUB for
BIOS and UEFI (grub-mkrescue), whose grub.cfg has the entries Debian's
update-grub writes for the stock guest (stock_guest.py) and boots it from
its own disk: under SeaBIOS and OVMF the menu is on head 0, its highlight
follows the arrow keys, and Enter boots the stock guest to pvdc's console.

Everything is seen from the host with screendumps, polled until the
picture holds or a generous bound expires.
"""

import os
import shutil
import subprocess
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, STEP_TIMEOUT,  # noqa: E402
                          GuestError, GuestVM, Tap, modeset_bars,
                          modeset_head)
from stock_guest import KERNEL_ARGS, StockGuest  # noqa: E402
from test_stock import console_on_head0  # noqa: E402

OVMF_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
OVMF_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
INSTALLER = ("/usr/lib/debian-installer/images/12/amd64/text/"
             "debian-installer/amd64")
# Bounds for what firmware and installer show under TCG on a loaded host;
# the polls end as soon as the picture is there.
FIRMWARE_TIMEOUT = 180
INSTALLER_TIMEOUT = 600
# What a connector no head drives shows (hw/display/pvdc-console.c).
BLANK_SIZE = (640, 480)
# A line of text is a few hundred pixels of glyphs: two lines at least.
MIN_TEXT_PIXELS = 400
# The installer's first dialog (newt on the console, VGA palette): a grey
# dialog on a blue screen, the selected language in red.  Shares of the
# screen each colour covers at least (measured: grey 82 %, blue 9 %, red
# 1 % at 800x600).
INSTALLER_COLOURS = {"dialog grey": (0xaaaaaa, 0.3),
                     "screen blue": (0x0000aa, 0.02),
                     "selection red": (0xaa0000, 0.002)}
# GRUB's menu: the highlighted entry is a band of one colour, a text row
# high, across most of the menu box; the box's edges are lines of a few
# pixels.  A row is part of either when one colour other than the
# background covers this share of it (the band covers 60 % at 1024x768
# under SeaBIOS, 97 % at 800x600 under OVMF).
MENU_ROW_SHARE = 0.3
MENU_TEXT_ROW = range(8, 49)
MENU_LINE = range(1, 4)
# SeaBIOS's ramfb VGA BIOS offers its framebuffer as VESA mode 0x144
# (1024x768): the kernel's boot code sets it (vga=0x344, VESA + 0x200) and
# hands it to vesafb.  Under OVMF the kernel takes the GOP's mode.
KERNEL_APPEND = {"seabios": "vga=0x344", "ovmf": ""}


def firmware_args(firmware, tmp):
    """QEMU arguments for FIRMWARE: "seabios" (the machine's default) or
    "ovmf" (pflash: Debian's code, a private copy of its variables)."""
    if firmware == "seabios":
        return []
    vars_copy = os.path.join(tmp, "OVMF_VARS.fd")
    shutil.copyfile(OVMF_VARS, vars_copy)
    return ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,"
                      f"file={OVMF_CODE}",
            "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]


class FirmwareVM(GuestVM):
    """A machine with pvdc as its only display under FIRMWARE, booting
    BOOT (QEMU arguments: nothing, or a kernel), with no harness in the
    guest: it is watched through screendumps only.  It resets on a
    reset."""

    def __init__(self, firmware, boot=(), memory="1024"):
        super().__init__(memory=memory)
        self.extra_args = firmware_args(firmware, self.tmp)
        self.boot = list(boot)

    def boot_args(self):
        return self.boot

    def qemu_args(self):
        return [a for a in super().qemu_args() if a != "-no-reboot"]

    def start(self):
        self.launch()
        return self


def background(pic):
    """The colour most pixels of PIC have, as 0xRRGGBB."""
    return Counter(pic.data[i:i + 3]
                   for i in range(0, len(pic.data), 3)).most_common(1)[0][0]


def shows_text(pic):
    """PIC is not the blank picture and has text (or a logo) on it."""
    if (pic.width, pic.height) == BLANK_SIZE:
        raise AssertionError("head 0 shows the blank picture")
    bg = background(pic)
    drawn = sum(1 for i in range(0, len(pic.data), 3)
                if pic.data[i:i + 3] != bg)
    if drawn < MIN_TEXT_PIXELS:
        raise AssertionError(f"{pic.width}x{pic.height}, only {drawn} pixels "
                             f"off the background")
    return f"{pic.width}x{pic.height}, {drawn} pixels drawn"


def shows_installer(pic):
    """PIC is the installer's first dialog, in its colours."""
    seen = [shows_text(pic)]
    counts = Counter(pic.data[i:i + 3] for i in range(0, len(pic.data), 3))
    for name, (colour, least) in INSTALLER_COLOURS.items():
        share = counts[colour.to_bytes(3, "big")] / (pic.width * pic.height)
        if share < least:
            raise AssertionError(f"{name} covers {share:.1%} of the screen")
        seen.append(f"{name} {share:.1%}")
    return ", ".join(seen)


def wait_picture(vm, what, check, timeout):
    """Screendumps of head 0 until CHECK(picture) holds (it raises
    AssertionError until then, and may say what it saw); once a second, as
    a whole picture takes a while to look at in Python."""
    def probe():
        return check(vm.screen(0)) or True
    seen = vm.wait_until(what, probe, timeout, interval=1)
    if seen is not True:
        print(f"# {what}: {seen}")


def firmware_shows_text(firmware):
    def check():
        with FirmwareVM(firmware) as vm:
            wait_picture(vm, f"{firmware}'s text on head 0", shows_text,
                         FIRMWARE_TIMEOUT)
    return check


def installer_shows_first_screen(firmware):
    def check():
        boot = ["-kernel", os.path.join(INSTALLER, "linux"),
                "-initrd", os.path.join(INSTALLER, "initrd.gz"),
                "-append", KERNEL_APPEND[firmware]]
        with FirmwareVM(firmware, boot) as vm:
            wait_picture(vm, f"the installer's first screen under {firmware}",
                         shows_installer, INSTALLER_TIMEOUT)
    return check


# The menu Debian's update-grub writes for the stock guest: its kernel
# first, then the "Advanced options" submenu; KVER is the stock kernel's
# version, ARGS the stock guest's command line.  The menu waits for a key
# (GRUB_TIMEOUT=-1): the test chooses with the keyboard.
GRUB_CFG = """\
set default=0
set timeout_style=menu
set timeout=-1
insmod ext2
menuentry 'Debian GNU/Linux' --class debian --class gnu-linux {{
\tsearch --no-floppy --label --set=root pvdc-root
\techo 'Loading Linux {kver} ...'
\tlinux /boot/vmlinuz-{kver} {args}
\techo 'Loading initial ramdisk ...'
\tinitrd /boot/initrd.img-{kver}
}}
submenu 'Advanced options for Debian GNU/Linux' {{
\tmenuentry 'Debian GNU/Linux, with Linux {kver}' {{
\t\tsearch --no-floppy --label --set=root pvdc-root
\t\tlinux /boot/vmlinuz-{kver} {args}
\t\tinitrd /boot/initrd.img-{kver}
\t}}
\tmenuentry 'Debian GNU/Linux, with Linux {kver} (recovery mode)' {{
\t\tsearch --no-floppy --label --set=root pvdc-root
\t\tlinux /boot/vmlinuz-{kver} {args} single
\t\tinitrd /boot/initrd.img-{kver}
\t}}
}}
"""


def grub_iso(image, tmp):
    """A boot CD of Debian's GRUB for BIOS and UEFI (grub-mkrescue), whose
    menu boots the stock IMAGE from its own disk."""
    root = os.path.join(tmp, "iso")
    os.makedirs(os.path.join(root, "boot", "grub"))
    with open(os.path.join(root, "boot", "grub", "grub.cfg"), "w") as f:
        f.write(GRUB_CFG.format(kver=image["kernel_version"],
                                args=KERNEL_ARGS))
    iso = os.path.join(tmp, "grub.iso")
    done = subprocess.run(["grub-mkrescue", "-o", iso, root],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if done.returncode:
        raise GuestError(f"grub-mkrescue failed: {done.stdout.decode()}")
    return iso


class GrubStockGuest(StockGuest):
    """The stock guest under FIRMWARE, booted by GRUB from a CD (the
    machine's first boot device) with the stock disk beside it, as a user's
    machine boots it.  start() returns at once: the menu waits for the
    test's keys, then booted() waits for the guest."""

    def __init__(self, firmware):
        super().__init__()
        self.extra_args = firmware_args(firmware, self.tmp)
        self.iso = grub_iso(self.image, self.tmp)

    def boot_args(self):
        # OVMF connects only the devices in the boot order: the disk comes
        # second, so that GRUB finds the stock root on it.
        disk = self.disk_args()
        disk[-1] += ",bootindex=1"
        return ["-drive", f"if=none,id=cd,format=raw,readonly=on,"
                          f"file={self.iso}",
                "-device", "ide-cd,drive=cd,bus=ide.1,bootindex=0",
                ] + disk

    def start(self):
        return FirmwareVM.start(self)


def menu_rows(pic):
    """Runs of rows that one colour other than the background covers
    (MENU_ROW_SHARE): [(top, height, colour, left, right)], with the
    horizontal extent of the colour in the run's middle row."""
    bg = background(pic)
    step = 4    # every 4th pixel says which colour covers a row
    row_bytes = pic.width * 3
    covered = []
    for y in range(pic.height):
        row = pic.data[y * row_bytes:(y + 1) * row_bytes]
        counts = Counter(row[i:i + 3] for i in range(0, row_bytes, 3 * step))
        counts.pop(bg, None)
        colour, n = counts.most_common(1)[0] if counts else (None, 0)
        covered.append(colour if n * step >= MENU_ROW_SHARE * pic.width
                       else None)
    runs = []
    y = 0
    while y < pic.height:
        top, colour = y, covered[y]
        while y < pic.height and covered[y] == colour:
            y += 1
        if colour is not None:
            mid = (top + y - 1) // 2
            xs = [x for x in range(pic.width)
                  if pic.data[(mid * pic.width + x) * 3:
                              (mid * pic.width + x) * 3 + 3] == colour]
            runs.append((top, y - top, colour, xs[0], xs[-1]))
    return runs


def grub_highlight(pic):
    """GRUB's menu on PIC: the highlighted entry's band (top, height,
    colour, left, right), between the menu box's top and bottom edges,
    with the entry's text on it."""
    if (pic.width, pic.height) == BLANK_SIZE:
        raise AssertionError("head 0 shows the blank picture")
    runs = menu_rows(pic)
    bands = [r for r in runs if r[1] in MENU_TEXT_ROW]
    if len(bands) != 1:
        raise AssertionError(f"{len(bands)} bands a text row high: {runs}")
    band = bands[0]
    top, height, colour, left, right = band
    above = [r for r in runs if r[1] in MENU_LINE and r[0] < top]
    below = [r for r in runs if r[1] in MENU_LINE and r[0] > top + height]
    if not above or not below:
        raise AssertionError(f"no menu box around the band {band}: {runs}")
    ink = sum(1 for y in range(top, top + height)
              for x in range(left, right + 1)
              if pic.data[(y * pic.width + x) * 3:
                          (y * pic.width + x) * 3 + 3] != colour)
    if ink < MIN_TEXT_PIXELS // 4:
        raise AssertionError(f"only {ink} pixels of text on the band {band}")
    return band


def grub_menu_boots_stock_guest(firmware):
    """GRUB's menu on head 0: its highlight follows the arrow keys one
    entry down and back, to the very picture it started from; Enter boots
    the first entry, the stock guest, whose pvdc driver then shows the
    console on head 0."""
    def check():
        with GrubStockGuest(firmware) as vm:
            first = {}

            def menu(pic):
                band = grub_highlight(pic)
                # GRUB draws the menu a character at a time through the
                # VGA BIOS (slow under TCG, slower on a loaded host): the
                # picture to come back to is one that stopped changing.
                settled = first.get("pic") is not None and \
                    first["pic"].data == pic.data
                first["pic"], first["band"] = pic, band
                if not settled:
                    raise AssertionError(f"highlight {band}, still drawing")
                return f"highlight {band}"
            wait_picture(vm, f"GRUB's menu on head 0 under {firmware}", menu,
                         FIRMWARE_TIMEOUT)
            top, height, colour, left, right = first["band"]
            # One entry down: the same band, one text row lower.
            moved = (top + height, height, colour, left, right)

            def next_entry(pic):
                band = grub_highlight(pic)
                if band != moved:
                    raise AssertionError(f"highlight {band}, not {moved}")
            vm.cmd("send-key", keys=[{"type": "qcode",
                                              "data": "down"}])
            wait_picture(vm, "the highlight on the second entry", next_entry,
                         STEP_TIMEOUT)

            def back(pic):
                if (pic.width, pic.height, pic.data) != \
                        (first["pic"].width, first["pic"].height,
                         first["pic"].data):
                    raise AssertionError("not the menu as it was")
            vm.cmd("send-key", keys=[{"type": "qcode", "data": "up"}])
            wait_picture(vm, "the highlight back on the first entry", back,
                         STEP_TIMEOUT)
            vm.cmd("send-key", keys=[{"type": "qcode", "data": "ret"}])
            vm.booted()
            console_on_head0(vm)
    return check


class TakeoverVM(FirmwareVM):
    """The test guest under OVMF, its kernel on efifb, pvdc.ko not loaded
    yet: the harness serves it as usual.  DEVICES: pvdc alone, which has
    the boot display, by default."""

    def __init__(self, devices=None):
        GuestVM.__init__(self, devices=devices, append="pvdc.noload")
        self.extra_args = firmware_args("ovmf", self.tmp)

    def boot_args(self):
        return GuestVM.boot_args(self)

    def start(self):
        return GuestVM.start(self)


def framebuffers(vm):
    return vm.check("cat /proc/fb").splitlines()


def efifb_has_head0(vm):
    fbs = framebuffers(vm)
    if len(fbs) != 1 or "EFI VGA" not in fbs[0]:
        raise AssertionError(f"/proc/fb: {fbs}")
    # The kernel's messages go to the serial line: write onto the console.
    vm.check("for i in 1 2 3 4; do echo 'pvdc: efifb draws this line into "
             "the boot display' > /dev/tty1; done")
    wait_picture(vm, "efifb's console on head 0", shows_text, STEP_TIMEOUT)


def driver_takes_over(vm):
    vm.check("insmod /lib/modules/pvdc.ko")
    fbs = framebuffers(vm)
    if len(fbs) != 1 or "pvdc" not in fbs[0]:
        raise AssertionError(f"/proc/fb after pvdc loaded: {fbs}")
    devices = vm.check("ls /sys/bus/platform/devices")
    if "efi-framebuffer" in devices or "simple-framebuffer" in devices:
        raise AssertionError(f"a firmware framebuffer is left: {devices}")


def efifb_stays(vm):
    """pvdc without a boot display beside the card that has it: efifb,
    on that card, is left alone."""
    fbs = framebuffers(vm)
    if len(fbs) != 1 or "EFI VGA" not in fbs[0]:
        raise AssertionError(f"/proc/fb before pvdc loaded: {fbs}")
    vm.check("insmod /lib/modules/pvdc.ko")
    fbs = framebuffers(vm)
    if len(fbs) != 2 or "EFI VGA" not in fbs[0] or "pvdc" not in fbs[1]:
        raise AssertionError(f"/proc/fb after pvdc loaded: {fbs}")
    driver = vm.check("basename $(readlink "
                      "/sys/bus/platform/devices/efi-framebuffer.0/driver)")
    if driver.strip() != "efi-framebuffer":
        raise AssertionError(f"efi-framebuffer.0 is bound to {driver!r}")


def other_boot_display(tap):
    """virtio-vga first, as the machine's VGA and OVMF's GOP (efifb on its
    BAR); pvdc a second card with ramfb=off."""
    vm = TakeoverVM(devices=["-device", "virtio-vga",
                             "-device", "pvdc,id=pvdc0,ramfb=off"])
    try:
        vm.start()
    except GuestError as e:
        tap.fail("the test guest boots under OVMF on virtio-vga's efifb", e)
        return
    try:
        tap.case("pvdc.ko beside another card's boot display leaves its "
                 "efifb alone", efifb_stays, vm)
        tap.case("head 0 shows the driver's picture beside it",
                 driver_picture_on_head0, vm)
        tap.case(KERNEL_LOG_CASE + " (beside virtio-vga)",
                 vm.check_kernel_log)
    finally:
        vm.stop()


def driver_picture_on_head0(vm):
    # It holds the picture until the reset.
    vm.start_background("pvdc-modeset 0", r"^# holding")
    wait_picture(vm, "pvdc-modeset's colour bars on head 0", modeset_bars(0),
                 STEP_TIMEOUT)


def reset_gives_head0_back(vm):
    """From the driver's picture (driver_picture_on_head0) to the
    firmware's."""
    def firmware_again(pic):
        try:
            modeset_head(pic)
        except GuestError:
            return shows_text(pic)
        raise AssertionError("head 0 still shows the driver's picture")
    vm.cmd("system_reset")
    wait_picture(vm, "the firmware on head 0 after a reset", firmware_again,
                 FIRMWARE_TIMEOUT)


def takeover(tap):
    vm = TakeoverVM()
    try:
        vm.start()
    except GuestError as e:
        tap.fail("the test guest boots under OVMF on efifb", e)
        return
    try:
        tap.case("efifb is the console, on head 0", efifb_has_head0, vm)
        tap.case("pvdc.ko takes over: no firmware framebuffer left, one "
                 "framebuffer device", driver_takes_over, vm)
        tap.case("head 0 shows the driver's picture", driver_picture_on_head0,
                 vm)
        tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
        tap.case("a system reset gives head 0 back to the firmware",
                 reset_gives_head0_back, vm)
    finally:
        vm.stop()


def main():
    tap = Tap()
    tap.case("SeaBIOS's text is on head 0", firmware_shows_text("seabios"))
    tap.case("OVMF's picture is on head 0", firmware_shows_text("ovmf"))
    tap.case("the installer's first screen is on head 0 under SeaBIOS",
             installer_shows_first_screen("seabios"))
    tap.case("the installer's first screen is on head 0 under OVMF",
             installer_shows_first_screen("ovmf"))
    tap.case("GRUB's menu of the stock guest is on head 0 under SeaBIOS, "
             "and boots it to pvdc's console",
             grub_menu_boots_stock_guest("seabios"))
    tap.case("GRUB's menu of the stock guest is on head 0 under OVMF, "
             "and boots it to pvdc's console",
             grub_menu_boots_stock_guest("ovmf"))
    takeover(tap)
    other_boot_display(tap)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
