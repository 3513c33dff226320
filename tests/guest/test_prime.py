#!/usr/bin/python3
"""PRIME and front-buffer rendering, in one boot of a two-head pvdc.

guest-driver/tests/pvdc-prime shows, on head 0's primary plane and on an
overlay scaled twice, buffers whose pixels come from elsewhere: dumb
buffers of vgem imported into pvdc, memfd buffers made dma-bufs by
udmabuf, and pvdc's own buffers exported, imported by vgem and written
through the dma-buf's mapping, and, in a second boot with two pvdc devices
and a virtio-gpu-pci, dumb buffers of one pvdc imported into the other and
dumb buffers of virtio-gpu imported into pvdc.  The other way, virtio-gpu
(Linux 6.12) imports no other device's dma-buf: its import of a pvdc
buffer fails cleanly with ENODEV after it attached and mapped it, and the
buffer, written through the dma-buf's own mapping, is shown.  The host's
screendump proves the pixels: the
primary's two halves, the overlay's colour over the whole of its scaled
size and not past it.  Front-buffer rendering: a band written in place
into the shown buffer and reported with DIRTYFB reaches the screen.  The
kernel log stays clean (no WARN from an exporter or importer), and on a
kernel with kmemleak it finds nothing of the DRM or dma-buf code once the
buffers are gone.  A kernel without vgem, udmabuf or virtio-gpu skips
the cases that need them.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          GuestVM, run_suite)

DEVICE = "pvdc,id=pvdc0,heads=2"
PEER = "pvdc,id=pvdc1,heads=1"
VIRTIO_GPU = "virtio-gpu-pci"
# guest-driver/tests/pvdc-prime.c
LEFT, RIGHT, OVERLAY, FRONT = 0xff0000, 0x0000ff, 0x00ff00, 0xffff00
OVERLAY_X, OVERLAY_Y = 64, 64
FRONT_Y, FRONT_H = 32, 16
SOURCES = {
    "vgem": "vgem dumb buffers imported into pvdc",
    "udmabuf": "udmabuf memfd buffers imported into pvdc",
    "export": "pvdc buffers exported, imported by vgem and written "
              "through the dma-buf",
}
# In the second boot, beside the other pvdc device.
VIRTIO_SOURCES = {
    "virtio": "virtio-gpu dumb buffers imported into pvdc",
    "to-virtio": "pvdc buffers exported, refused by virtio-gpu and written "
                 "through the dma-buf",
}
# The module each source needs, by its file in the image.
MODULES = {"vgem": "vgem", "export": "vgem", "virtio": "virtio-gpu",
           "to-virtio": "virtio-gpu"}
# Call stacks of leaks that are this suite's business.
LEAK_CODE = ("pvdc", "drm", "dma_buf", "udmabuf", "vgem", "virtio", "shmem")


def missing(vm, source):
    """Why the guest's kernel cannot run SOURCE, or None."""
    module = MODULES.get(source)
    if source == "udmabuf":
        if vm.run("[ -e /dev/udmabuf ]")[0]:
            return f"the {vm.kernel.name} kernel has no udmabuf"
    elif module and vm.run(f"grep -qx {module}.ko "
                           "/etc/pvdc/extra-modules.order")[0]:
        return f"the {vm.kernel.name} kernel has no {module}"
    return None


def load_module(vm, module):
    """insmod the image's MODULE.ko and what comes before it (dependencies
    first, guest-driver/image/mkinitramfs.py)."""
    name = module.replace("-", "_")
    vm.check(f"grep -q '^{name} ' /proc/modules || "
             "for m in $(cat /etc/pvdc/extra-modules.order); do "
             "insmod /lib/modules/$m 2>/dev/null; "
             f"[ \"$m\" = {module}.ko ] && break; done; "
             f"grep -q '^{name} ' /proc/modules")


def expect(pic, points):
    """Each (x, y, colour) of POINTS is that colour on the screen; a
    colour given as ('not', c) is anything else."""
    for x, y, want in points:
        got = pic.xrgb(x, y)
        if isinstance(want, tuple):
            if got == want[1]:
                raise AssertionError(f"({x}, {y}) is {got:#08x}")
        elif got != want:
            raise AssertionError(f"({x}, {y}) is {got:#08x}, not "
                                 f"{want:#08x}")


def scene_points(pic):
    """The primary's halves, below the overlay, and the overlay over its
    scaled size (half the mode), not past it."""
    w, h = pic.width, pic.height
    right, bottom = OVERLAY_X + w // 2, OVERLAY_Y + h // 2
    return [(8, h - 8, LEFT), (w - 8, h - 8, RIGHT),
            (OVERLAY_X + 2, OVERLAY_Y + 2, OVERLAY),
            (right - 2, bottom - 2, OVERLAY),
            (right + 2, bottom - 2, ("not", OVERLAY)),
            (right - 2, bottom + 2, ("not", OVERLAY))]


def shown(tap, vm, source, what):
    name = f"{what} are shown on a primary and a scaled overlay"
    if missing(vm, source):
        tap.skip(name, missing(vm, source))
        return

    def check():
        if source in MODULES:
            load_module(vm, MODULES[source])
        log = vm.start_background(f"pvdc-prime {source}", r"^# holding|^not ok")
        try:
            out = vm.run(f"cat {log}")[1]
            if "not ok" in out:
                raise AssertionError(out)
            if source == "to-virtio" and \
                    "virtio-gpu refused the buffer: ENODEV" not in out:
                raise AssertionError(f"virtio-gpu did not refuse the "
                                     f"import with ENODEV:\n{out}")
            vm.wait_screen(f"the {source} scene",
                           lambda pic: expect(pic, scene_points(pic)))
        finally:
            out = vm.stop_background(log)
        if "not ok" in out:
            raise AssertionError(out)
    tap.case(name, check)


def front_buffer(tap, vm):
    def check():
        log = vm.start_background("pvdc-prime front", r"^# holding|^not ok")
        try:
            pic = vm.wait_screen("the front scene",
                                 lambda pic: expect(pic, scene_points(pic)))
            band = FRONT_Y + FRONT_H // 2
            expect(pic, [(8, band, LEFT)])
            vm.check(f"kill -USR1 $(cat {log}.pid)")
            vm.wait_for_output(log, r"^# written|^not ok")
            vm.wait_screen("the band written in place",
                           lambda pic: expect(pic, [
                               (8, band, FRONT),
                               (pic.width - 8, band, FRONT),
                               (8, FRONT_Y + FRONT_H + 2, LEFT)]))
        finally:
            out = vm.stop_background(log)
        if "not ok" in out:
            raise AssertionError(out)
    tap.case("a band written in place into the shown buffer and reported "
             "with DIRTYFB reaches the screen", check)


def no_leak(tap, vm, boot=""):
    name = "kmemleak finds no leak of the DRM or dma-buf code" + boot
    if vm.run("[ -e /sys/kernel/debug/kmemleak ]")[0]:
        tap.skip(name, f"the {vm.kernel.name} kernel has no kmemleak")
        return

    def check():
        vm.assert_no_leaks(LEAK_CODE)
    tap.case(name, check)


def peer(tap):
    """A second boot, with two pvdc devices and a virtio-gpu: the first
    pvdc shows the second's buffers and virtio-gpu's, and offers its own
    to virtio-gpu."""
    vm = GuestVM(devices=["-device", DEVICE, "-device", PEER,
                          "-device", VIRTIO_GPU])
    try:
        vm.start()
        shown(tap, vm, "peer", "another pvdc device's dumb buffers")
        for source, what in VIRTIO_SOURCES.items():
            shown(tap, vm, source, what)
        no_leak(tap, vm, " (second boot)")
        tap.case(KERNEL_LOG_CASE + " (two pvdc devices and virtio-gpu)",
                 vm.check_kernel_log)
    except GuestError as e:
        tap.fail("the guest with two pvdc devices and virtio-gpu boots and "
                 "stays responsive", e)
    finally:
        vm.stop()


def body(tap, vm):
    for source, what in SOURCES.items():
        shown(tap, vm, source, what)
    front_buffer(tap, vm)
    no_leak(tap, vm)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    vm.stop()
    peer(tap)


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE))
