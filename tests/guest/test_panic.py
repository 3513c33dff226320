#!/usr/bin/python3
"""drm_panic on pvdc: a panicked guest shows drm_panic's screen on every
head, whatever its primary plane showed.

drm_panic draws its "user" screen into the framebuffer each primary plane
shows (get_scanout_buffer), which the driver mapped the first time a
primary plane was to show it, and reports the whole framebuffer to the
device through the damage registers (panic_flush), since guest RAM has no
dirty log.  Each head's screendump must then show only drm_panic's colours
(its default white text on black): the picture before is gone, most of
the head is background, and the message is drawn where drm_panic centres
it.  Without get_scanout_buffer nothing is drawn, and without
panic_flush's damage the device keeps showing the picture before.

Three boots, each ending in a panic (sysrq 'c': an oops, which oops=panic
makes a panic), with what a primary plane shows in practice:
- pvdc-modeset's colour bars on both heads: a client's dumb buffers;
- the fbdev console on both heads, no client, head 1 smaller than head 0
  (the console's buffer has head 0's size, and drm_panic must draw into
  what head 1 shows of it, its message centred there; this boot shows
  the panic screen even without panic_flush: the console's buffer,
  allocated at boot, is contiguous in host memory, and the device shows
  it straight from its pages; the other two boots do not);
- pvdc-prime's vgem dumb buffer imported into pvdc on the primary plane,
  mapped through its dma-buf; pvdc-prime's scaled overlay above it stays
  where it was, over the panic screen.

The guests boot with panic=0, so they stay panicked (and QEMU running)
until the harness tells QEMU to quit.  Only a kernel built with
CONFIG_DRM_PANIC runs these cases: the debug kernel (guest-driver/kernel/
debug.config).  Debian's kernel has drm_panic off: one boot finds that
and every case is skipped.
"""

import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestVM, Tap,  # noqa: E402
                          artefact, guest_cases, kernel_log_reports,
                          modeset_bars)
from test_prime import (OVERLAY, OVERLAY_X, OVERLAY_Y,  # noqa: E402
                        expect, load_module, missing, scene_points)

HEADS = 2
# CONFIG_DRM_PANIC_FOREGROUND_COLOR and _BACKGROUND_COLOR, the defaults.
FOREGROUND_RGB, BACKGROUND_RGB = (0xff, 0xff, 0xff), (0, 0, 0)
# drm_panic's message is five lines of text centred on the screen; its
# largest built-in font is 32 pixels high.
MESSAGE_HALF_HEIGHT = 5 * 32 // 2
FONT_WIDTH = 16
# The fbdev console boot's head 1 (head 0 has the device's default mode).
SMALL_HEAD = (640, 400)
# What the panic prints first and last on the console (kernel/panic.c).
PANIC_START = rb"Kernel panic - not syncing"
PANIC_END = rb"---\[ end Kernel panic"
APPEND = "panic=0"
# What each boot shows before the panic.
SCENES = {
    "bars": "pvdc-modeset's colour bars",
    "console": "the fbdev console",
    "import": "a vgem buffer imported into pvdc, under an overlay",
}


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


def panic_screen(hidden=None):
    """A check for GuestVM.wait_screen: the picture is drm_panic's user
    screen, but for the rectangle HIDDEN (x1, y1, x2, y2), a plane above
    the primary, which is not looked at."""
    def spans(pic, y):
        """The bytes of row Y that are looked at."""
        row = pic.data[3 * y * pic.width:3 * (y + 1) * pic.width]
        if not hidden or not hidden[1] <= y < hidden[3]:
            return [row]
        return [row[:3 * hidden[0]], row[3 * hidden[2]:]]

    def check(pic):
        counts = collections.Counter()
        text_rows = set()
        for y in range(pic.height):
            for span in spans(pic, y):
                pixels = collections.Counter(zip(span[0::3], span[1::3],
                                                 span[2::3]))
                if FOREGROUND_RGB in pixels:
                    text_rows.add(y)
                counts.update(pixels)
        fg = counts.pop(FOREGROUND_RGB, 0)
        bg = counts.pop(BACKGROUND_RGB, 0)
        if counts:
            other = counts.most_common(4)
            raise AssertionError(f"{sum(counts.values())} pixels in colours "
                                 f"other than the panic screen's: {other}")
        if not fg or fg > bg // 4:
            raise AssertionError(f"{fg} text pixels on {bg} of background: "
                                 "not text on the panic background")
        mid = pic.height // 2
        message = set(range(mid - MESSAGE_HALF_HEIGHT,
                            mid + MESSAGE_HALF_HEIGHT))
        if not text_rows & message:
            raise AssertionError("no text in the middle of the head, where "
                                 "drm_panic centres its message")
        if hidden:
            return
        # Each line of the message is centred: so is their widest extent.
        columns = [x for y in text_rows & message
                   for x, pixel in enumerate(zip(*[iter(spans(pic, y)[0])]
                                                 * 3))
                   if pixel == FOREGROUND_RGB]
        centre = (min(columns) + max(columns)) // 2
        if abs(centre - pic.width // 2) > FONT_WIDTH:
            raise AssertionError(f"the message is centred on column {centre}"
                                 f", not on the head's middle "
                                 f"({pic.width // 2})")
    return check


def panic(tap, vm, heads, hidden=None, boot=""):
    """Panic the guest; each of HEADS then shows drm_panic's screen (but
    for the rectangle HIDDEN), and the console reports nothing while it
    is drawn."""
    start = len(vm.log)
    vm.run_to_end("echo c > /proc/sysrq-trigger", PANIC_END)
    for head in heads:
        tap.case(f"head {head} shows drm_panic's screen after {boot}: its "
                 "colours only, its message in the middle",
                 lambda head=head: vm.wait_screen(
                     f"the panic screen on head {head}",
                     panic_screen(hidden), head))

    def quiet_panic():
        log = bytes(vm.log[start:])
        drawn = log[re.search(PANIC_START, log).start():
                    re.search(PANIC_END, log).start()]
        reports = kernel_log_reports(drawn.decode(errors="replace"))
        if reports:
            raise AssertionError(f"{len(reports)} report(s) while the "
                                 f"panic screen was drawn: {reports[:5]}")
    tap.case(f"drawing the panic screen over {boot} reports nothing on the "
             "console", quiet_panic)


def assert_registered(vm):
    want = f"Registered {HEADS} planes with drm panic"
    if want not in vm.dmesg():
        raise AssertionError(f"no {want!r} in the kernel log")


def bars(tap, vm):
    tap.case("drm_panic takes pvdc's primary planes, one per head",
             lambda: assert_registered(vm))
    vm.start_background("pvdc-modeset 0", r"^# holding")
    for head in range(HEADS):
        tap.case(f"head {head} shows pvdc-modeset's colour bars before "
                 "the panic",
                 lambda head=head: vm.wait_screen(f"head {head}'s bars",
                                                  modeset_bars(head), head))
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)
    panic(tap, vm, range(HEADS), boot=SCENES["bars"])


def console(tap, vm):
    def fbcon_shown():
        state = vm.check("for d in /sys/kernel/debug/dri/*; do "
                         "read -r name rest <$d/name; "
                         "[ \"$name\" = pvdc ] && exec cat $d/state; done")
        shown = state.count("allocated by = [fbcon]")
        if shown != HEADS:
            raise AssertionError(f"{shown} planes show the fbdev console's "
                                 f"framebuffer, not {HEADS}:\n{state}")
    tap.case("the primary plane of each head shows the fbdev console before "
             "the panic", fbcon_shown)
    tap.case(KERNEL_LOG_CASE + " (fbdev console)", vm.check_kernel_log)
    panic(tap, vm, range(HEADS), boot=SCENES["console"])


def imported(tap, vm):
    why = missing(vm, "vgem")
    if why:
        tap.skip(f"head 0 shows drm_panic's screen after {SCENES['import']}",
                 why)
        return
    load_module(vm, "vgem")
    log = vm.start_background("pvdc-prime vgem", r"^# holding|^not ok")
    pic = None

    def scene():
        nonlocal pic
        out = vm.run(f"cat {log}")[1]
        if "not ok" in out:
            raise AssertionError(out)
        pic = vm.wait_screen("the vgem scene",
                             lambda p: expect(p, scene_points(p)))
    tap.case("head 0 shows pvdc-prime's vgem buffer and overlay before the "
             "panic", scene)
    tap.case(KERNEL_LOG_CASE + " (vgem buffer shown)", vm.check_kernel_log)
    if pic is None:
        return
    # pvdc-prime's overlay: half the mode, at (OVERLAY_X, OVERLAY_Y).
    overlay = (OVERLAY_X, OVERLAY_Y, OVERLAY_X + pic.width // 2,
               OVERLAY_Y + pic.height // 2)
    panic(tap, vm, [0], overlay, boot=SCENES["import"])
    tap.case("pvdc-prime's overlay stays above the panic screen",
             lambda: expect(vm.screen(), [(overlay[0] + 2, overlay[1] + 2,
                                           OVERLAY)]))


def main():
    tap = Tap()
    vm = GuestVM(devices=["-device", f"pvdc,id=pvdc0,heads={HEADS}"],
                 append=APPEND)
    why = []

    def first():
        why.append(drm_panic_missing(vm))
        if why[0]:
            for scene in SCENES.values():
                tap.skip(f"every head shows drm_panic's screen after "
                         f"{scene}", why[0])
            return
        bars(tap, vm)
    guest_cases(tap, vm, first)
    if why and why[0]:
        return tap.done()

    # Head 1 smaller than head 0: the console's framebuffer has head 0's
    # size, and head 1 shows its top-left corner.
    vm = GuestVM(devices=["-device", f"pvdc,id=pvdc0,heads={HEADS},"
                          f"head1-xres={SMALL_HEAD[0]},"
                          f"head1-yres={SMALL_HEAD[1]}"],
                 append=APPEND)
    guest_cases(tap, vm, lambda: console(tap, vm),
                boots="the guest with the fbdev console boots")
    # One head: pvdc-prime shows its scene on the first.
    vm = GuestVM(devices=["-device", "pvdc,id=pvdc0,heads=1"],
                 append=APPEND)
    guest_cases(tap, vm, lambda: imported(tap, vm),
                boots="the guest for pvdc-prime's vgem buffer boots")
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
