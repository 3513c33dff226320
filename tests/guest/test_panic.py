#!/usr/bin/python3
"""drm_panic on pvdc: the guest panics, and every head shows the panic
screen.

pvdc-modeset lights both heads with its colour bars; then the guest
panics (sysrq 'c': an oops, which oops=panic makes a panic).  drm_panic
draws its "user" screen into each primary plane's framebuffer, which the
driver mapped beforehand, at prepare_fb (get_scanout_buffer), and reports
the whole framebuffer to the device through the damage registers
(panic_flush), since guest RAM has no dirty log.  Each head's screendump
must then show only drm_panic's colours (its default white text on
black): the bars are gone, most of the head is background, and the
message is drawn where drm_panic centres it.  Without get_scanout_buffer
nothing is drawn, and without panic_flush's damage the device keeps
showing the bars.

The guest boots with panic=0, so it stays panicked (and QEMU running)
until the harness tells QEMU to quit.  Only a kernel built with
CONFIG_DRM_PANIC runs these cases: the debug kernel (guest-driver/kernel/
debug.config).  Debian's kernel has drm_panic off.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, artefact,  # noqa: E402
                          kernel_log_reports, modeset_bars, run_suite)

HEADS = 2
# CONFIG_DRM_PANIC_FOREGROUND_COLOR and _BACKGROUND_COLOR, the defaults.
FOREGROUND, BACKGROUND = 0xffffff, 0x000000
# drm_panic's message is five lines of text centred on the screen; its
# largest built-in font is 32 pixels high.
MESSAGE_HALF_HEIGHT = 5 * 32 // 2
# What the panic prints first and last on the console (kernel/panic.c).
PANIC_START = rb"Kernel panic - not syncing"
PANIC_END = rb"---\[ end Kernel panic"


def drm_panic_missing(vm):
    """Why the guest's kernel has no drm_panic, or None: from its
    /proc/config.gz (the debug kernel's) or else the config Debian's
    kernel package ships beside the image."""
    rc, config = vm.run("zcat /proc/config.gz")
    if rc:
        path = os.path.join(artefact(vm.kernel.root), "boot",
                            f"config-{vm.kernel.release}")
        with open(path) as f:
            config = f.read()
    if "CONFIG_DRM_PANIC=y" not in config.splitlines():
        return f"the {vm.kernel.name} kernel has no drm_panic"
    return None


def panic_screen(pic):
    """A check for GuestVM.wait_screen: PIC is drm_panic's user screen."""
    data = pic.data
    pixels = zip(data[0::3], data[1::3], data[2::3])
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    fg = counts.pop((0xff, 0xff, 0xff), 0)
    bg = counts.pop((0, 0, 0), 0)
    if counts:
        other = sorted(counts.items(), key=lambda c: -c[1])[:4]
        raise AssertionError(f"{sum(counts.values())} pixels in colours "
                             f"other than the panic screen's: {other}")
    if not fg or fg > bg // 4:
        raise AssertionError(f"{fg} text pixels on {bg} of background: "
                             "not text on the panic background")
    mid = pic.height // 2
    for y in range(mid - MESSAGE_HALF_HEIGHT, mid + MESSAGE_HALF_HEIGHT):
        if any(pic.xrgb(x, y) == FOREGROUND for x in range(pic.width)):
            return
    raise AssertionError("no text in the middle of the head, where "
                         "drm_panic centres its message")


def body(tap, vm):
    why = drm_panic_missing(vm)
    if why:
        tap.skip("every head shows drm_panic's screen after a panic", why)
        return

    tap.case("drm_panic takes pvdc's primary planes, one per head",
             lambda: assert_registered(vm))
    vm.start_background("pvdc-modeset 0", r"^# holding")
    for head in range(HEADS):
        tap.case(f"head {head} shows pvdc-modeset's colour bars before "
                 "the panic",
                 lambda head=head: vm.wait_screen(f"head {head}'s bars",
                                                  modeset_bars(head), head))
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)

    start = len(vm.log)
    vm.run_to_end("echo c > /proc/sysrq-trigger", PANIC_END)
    for head in range(HEADS):
        tap.case(f"head {head} shows drm_panic's screen: its colours only, "
                 "its message in the middle",
                 lambda head=head: vm.wait_screen(
                     f"the panic screen on head {head}", panic_screen, head))

    def quiet_panic():
        log = bytes(vm.log[start:])
        drawn = log[re.search(PANIC_START, log).start():
                    re.search(PANIC_END, log).start()]
        reports = kernel_log_reports(drawn.decode(errors="replace"))
        if reports:
            raise AssertionError(f"{len(reports)} report(s) while the "
                                 f"panic screen was drawn: {reports[:5]}")
    tap.case("drawing the panic screen reports nothing on the console",
             quiet_panic)


def assert_registered(vm):
    want = f"Registered {HEADS} planes with drm panic"
    if want not in vm.dmesg():
        raise AssertionError(f"no {want!r} in the kernel log")


if __name__ == "__main__":
    sys.exit(run_suite(body, heads=HEADS, append="panic=0"))
