#!/usr/bin/python3
"""Connector routing, in one boot of a two-head pvdc with iomem=relaxed.

guest-driver/tests/pvdc-routing checks that every connector's encoder can
drive every CRTC (and none is a clone of another, every writeback encoder
a clone of each), that TEST_ONLY refuses two connectors on one CRTC, that
the events of a nonblocking route change come once the device latched it,
CRTC 1's with CRTC 1's vblank, that a CRTC driving another connector
writes its frame back, and how a CRTC on with its writeback connector
alone keeps a connector; each of its result lines is a case here.

The host sees what the guest routes: QEMU console c is connector c.  At
boot the console drives connector c from CRTC c (debugfs state).  With
connector 0 on CRTC 1 (atomic, and legacy SETCRTC, which turns CRTC 0
off), console 0 shows CRTC 1's framebuffer and console 1 nothing; with
the connectors swapped between the CRTCs in one commit, each console
shows the other CRTC's; modetest -s CONNECTOR@CRTC takes connector 0 to
CRTC 1 the same way.  Across the whole run the device refuses none of
the commits the driver accepted (x-commits-rejected).
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, GuestError,  # noqa: E402
                          never_rejected, run_suite)
from test_kms import connector_ids, program_cases, result_cases  # noqa: E402

DEVICE = "pvdc,id=pvdc0,heads=2"
# guest-driver/tests/pvdc-routing.c: CRTC 1's framebuffer, CRTC 0's.
COLOUR_A = 0xc03060
COLOUR_B = 0x40a0e0
BLACK = 0x000000


def colours(pic):
    """The colours of a grid of samples of PIC."""
    return {pic.xrgb(x, y)
            for y in range(0, pic.height, max(1, pic.height // 16))
            for x in range(0, pic.width, max(1, pic.width // 16))}


def solid(console, colour):
    """A check of a screendump: every sample is COLOUR."""
    def check(pic):
        seen = colours(pic)
        if seen != {colour}:
            raise AssertionError(f"console {console} shows "
                                 f"{sorted(map(hex, seen))[:8]}, not "
                                 f"{colour:#08x}")
    return check


def pattern(console):
    """A check of a screendump: modetest's test pattern (many colours)."""
    def check(pic):
        seen = colours(pic)
        if len(seen) < 8:
            raise AssertionError(f"console {console} shows "
                                 f"{len(seen)} colours")
    return check


def held(tap, vm, test, screens, what):
    """Run pvdc-routing TEST, which sets a route and holds it: report its
    result lines, then check that console c shows SCREENS[c]."""
    log = None
    try:
        log = vm.start_background(f"pvdc-routing {test}", r"^# holding")
        for console, colour in sorted(screens.items()):
            name = "black" if colour == BLACK else f"{colour:06x}"
            tap.case(f"{what}: console {console} shows {name}",
                     vm.wait_screen, f"console {console} {name}",
                     solid(console, colour), console, 10)
    except GuestError as e:
        tap.fail(f"{what}: pvdc-routing {test} holds", e)
    finally:
        out = vm.stop_background(log) if log else ""
    result_cases(tap, f"pvdc-routing {test}", out)


def crtc_ids(vm):
    """The CRTC ids, in order, from modetest -p."""
    out = vm.check("modetest -M pvdc -p")
    block = re.search(r"^CRTCs:\n(.*?)(?:^Planes:|\Z)", out,
                      re.M | re.S).group(1)
    # "id fb pos size" rows; the properties below them are indented.
    return [int(i) for i in re.findall(r"^(\d+)\t\d+\t\(", block, re.M)]


def modetest_steals(tap, vm):
    """modetest -s CONNECTOR-0@CRTC-1 (legacy SETCRTC): CRTC 0 is turned
    off, connector 0 is on CRTC 1 (the core's state in debugfs, which
    opens no DRM file), console 0 shows modetest's pattern, console 1
    nothing."""
    def check():
        conn = connector_ids(vm)[0]
        crtcs = crtc_ids(vm)
        log = vm.start_background(
            f"modetest -M pvdc -s {conn}@{crtcs[1]}:#0", hold_stdin=True)
        try:
            def routed():
                if vm.run(f"kill -0 $(cat {log}.pid)")[0]:
                    raise GuestError("modetest exited:\n" +
                                     vm.run(f"cat {log}")[1])
                state = vm.kms_state()
                c0, c1 = state.get(crtcs[0], {}), state.get(crtcs[1], {})
                connector = state.get(conn, {})
                if c0.get("enable") != "0" or c1.get("active") != "1" or \
                        connector.get("crtc") != c1.get("name"):
                    raise AssertionError(f"CRTC 0 {c0}, CRTC 1 {c1}, "
                                         f"connector {connector}")
                return True
            vm.wait_until("modetest's route committed", routed, 30)
            vm.wait_screen("modetest's pattern on console 0", pattern(0), 0,
                           10)
            vm.wait_screen("console 1 black", solid(1, BLACK), 1, 10)
        finally:
            out = vm.stop_background(log)
        if re.search(r"can't|failed (?!to set gamma)", out):
            raise AssertionError(out[-3000:])
    tap.case("modetest -s takes connector 0 to CRTC 1: CRTC 0 off, "
             "console 0 shows it, console 1 nothing", check)


def boot_routes(vm):
    """The console (fbdev) lights every connector at boot, each from the
    CRTC of its index: the DRM client gives connectors distinct CRTCs.
    From debugfs, which opens no DRM file."""
    state = vm.kms_state()
    connectors = sorted(i for i, o in state.items()
                        if o["type"] == "connector" and
                        o["name"].startswith("Virtual-"))
    routes = [state[i].get("crtc") for i in connectors]
    if routes != [f"head-{c}" for c in range(len(connectors))] or \
            len(connectors) < 2:
        raise AssertionError(f"connectors {connectors} on {routes}")


def body(tap, vm):
    def cases():
        name = "at boot the console drives connector c from CRTC c"
        if vm.run("[ -e /proc/fb ]")[0] == 0:
            tap.case(name, boot_routes, vm)
        else:
            tap.skip(name, f"the {vm.kernel.name} kernel has no fbdev")
        program_cases(tap, vm, "pvdc-routing", "pvdc-routing", 300)
        held(tap, vm, "hold-move", {0: COLOUR_A, 1: BLACK},
             "connector 0 on CRTC 1")
        held(tap, vm, "hold-swap", {0: COLOUR_A, 1: COLOUR_B},
             "connectors 0 and 1 swapped between CRTCs 0 and 1")
        held(tap, vm, "hold-legacy", {0: COLOUR_A, 1: BLACK},
             "legacy SETCRTC of connector 0 on CRTC 1")
        if vm.run("command -v modetest")[0] == 0:
            modetest_steals(tap, vm)
        else:
            tap.skip("modetest -s takes connector 0 to CRTC 1: CRTC 0 off, "
                     "console 0 shows it, console 1 nothing",
                     "no modetest in the guest")

    never_rejected(tap, vm, "the device refuses none of the commits the "
                   "driver accepted", cases)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)


if __name__ == "__main__":
    sys.exit(run_suite(body, device=DEVICE, append="iomem=relaxed"))
