"""The stock Debian 12 guest (scripts/build-rootfs.sh) under the harness.

Boots the root filesystem's own kernel and initramfs-tools initrd from an
AHCI disk (the project's QEMU has no virtio-blk), with pvdc as the only
display device.  The harness's serial protocol is served by a systemd
unit in the image (tests/guest/stock/rootfs), which announces the guest
only once systemd has finished booting.
"""

import json
import os

from pvdc_harness import BUILD, GuestError, GuestVM

# A systemd boot under TCG on a loaded 2-core host.
BOOT_TIMEOUT = float(os.environ.get("PVDC_STOCK_BOOT_TIMEOUT", "420"))

# tests/guest/stock/rootfs/etc/systemd/system/pvdc-desktop.service
DESKTOP_UNIT = "pvdc-desktop.service"
DESKTOP_LOG = "/var/log/pvdc-desktop.log"
WAYLAND_ENV = "XDG_RUNTIME_DIR=/run/pvdc-desktop WAYLAND_DISPLAY=wayland-pvdc"
# The console on the screen (tty0) is /dev/console, where systemd reports
# the boot; the serial line carries the kernel's log and the harness.
KERNEL_ARGS = ("root=LABEL=pvdc-root ro console=ttyS0 console=tty0 "
               "panic=-1 loglevel=4")


def descriptor():
    """The built image: disk, kernel, initrd and kernel version."""
    path = os.environ.get("PVDC_STOCK_GUEST") or \
        os.path.join(BUILD, "meson", "stock-guest.json")
    if not os.path.exists(path):
        raise GuestError(f"missing {path}: build it first (scripts/test.sh "
                         "does, or meson compile -C build/meson stock-guest)")
    with open(path) as f:
        return json.load(f)


class StockGuest(GuestVM):
    """One boot of the stock guest.  APPEND adds to the kernel command
    line (`systemd.wants=pvdc-desktop.service` starts the desktop)."""

    def __init__(self, image=None, heads=2, append="", memory="1024"):
        super().__init__(
            devices=["-device", f"pvdc,id=pvdc0,heads={heads}"],
            memory=memory, boot_timeout=BOOT_TIMEOUT, append=append,
            kernel="stock")
        self.image = image or descriptor()
        self.heads = heads

    def disk_args(self):
        # The cached image is never written.
        return ["-drive", f"if=none,id=disk,format=raw,snapshot=on,"
                          f"file={self.image['disk']}",
                "-device", "ide-hd,drive=disk,bus=ide.0"]

    def boot_args(self):
        return ["-kernel", self.image["kernel"],
                "-initrd", self.image["initrd"],
                "-append", KERNEL_ARGS + " " + self.append] + \
            self.disk_args()

    def wait_for_desktop(self, timeout=120):
        """Wait until Weston has enabled an output on every head; return
        its log."""
        enabled = f"grep -c \"Output '.*' enabled\" {DESKTOP_LOG} 2>/dev/null"
        if not self.poll(f'[ "$({enabled})" -ge {self.heads} ]', timeout):
            raise GuestError(f"Weston did not enable {self.heads} outputs "
                             f"within {timeout:.0f} s:\n"
                             f"{self.run('cat ' + DESKTOP_LOG)[1][-3000:]}")
        return self.check(f"cat {DESKTOP_LOG}")
