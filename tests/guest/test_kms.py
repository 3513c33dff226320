#!/usr/bin/python3
"""The guest driver end to end, in one boot on a two-head pvdc.

In-guest programs report "ok NAME" / "not ok NAME: why" lines; each becomes
a case here.  Host-side checks read the heads back through QMP screendump.
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import GuestError, GuestVM, Tap  # noqa: E402

HEADS = 2
# kms_buffer_fill() in guest-driver/tests/pvdc-kms-util.h: eight vertical
# bars, XRGB, shifted by a phase that depends on how many flips happened.
BARS = [0xffffff, 0xffff00, 0x00ffff, 0x00ff00,
        0xff00ff, 0xff0000, 0x0000ff, 0x000000]
RESULT = re.compile(r"^(not ok|ok) ([^:#]+?)\s*(?:[:#].*)?$")


def program_cases(tap, vm, prefix, cmd, timeout=120):
    """Run an in-guest program and report each of its result lines."""
    rc, out = vm.run(cmd, timeout)
    seen = 0
    for line in out.splitlines():
        m = RESULT.match(line.strip())
        if not m:
            continue
        seen += 1
        if m.group(1) == "ok" and "# skip" in line.lower():
            tap.skip(f"{prefix}: {m.group(2)}", line.split("#", 1)[1].strip())
            continue

        def verdict(ok=m.group(1) == "ok", line=line):
            if not ok:
                raise AssertionError(line)
        tap.case(f"{prefix}: {m.group(2)}", verdict)

    def exit_status():
        if rc != 0 or seen == 0:
            raise AssertionError(f"{cmd!r} exited {rc} after {seen} "
                                 f"result lines:\n{out[-3000:]}")
    tap.case(f"{prefix}: exits 0", exit_status)


def colour_bars_on_every_head(vm):
    for head in range(HEADS):
        pic = vm.screen(head)
        if pic.width < 64 or pic.height < 64:
            raise AssertionError(f"head {head}: {pic.width}x{pic.height}")
        seen = []
        for bar in range(8):
            x = (2 * bar + 1) * pic.width // 16
            colours = {pic.xrgb(x, y) for y in range(0, pic.height, 37)}
            if len(colours) != 1:
                raise AssertionError(f"head {head} bar {bar} not uniform: "
                                     f"{sorted(map(hex, colours))}")
            seen.append(colours.pop())
        phase = BARS.index(seen[0]) if seen[0] in BARS else -1
        want = [BARS[(phase + i) % 8] for i in range(8)]
        if phase < 0 or seen != want:
            raise AssertionError(f"head {head} shows {list(map(hex, seen))}")


def modeset_scene(tap, vm):
    try:
        log = vm.start_background("pvdc-modeset 0", r"^# holding")
    except GuestError as e:
        tap.fail("pvdc-modeset lights every head", e)
        return
    tap.case("screendump shows the colour bars on every head",
             colour_bars_on_every_head, vm)
    out = vm.stop_background(log)

    def modeset_ok():
        if "not ok" in out:
            raise AssertionError(out)
    tap.case("pvdc-modeset lights every head", modeset_ok)


def real_clients(tap, vm):
    def modetest_lists():
        out = vm.check("modetest -M pvdc -c -p")
        if out.count("connected") < HEADS or "CRTCs:" not in out:
            raise AssertionError(out[-3000:])
    tap.case("modetest lists the connectors, CRTCs and planes", modetest_lists)

    def modetest_plane_properties():
        out = vm.check("modetest -M pvdc -a -p")
        for prop in ("zpos", "alpha", "pixel blend mode", "rotation",
                     "SCALING_FILTER", "FB_DAMAGE_CLIPS", "IN_FORMATS"):
            if prop not in out:
                raise AssertionError(f"no {prop!r} in modetest -a -p:\n"
                                     f"{out[-3000:]}")
    tap.case("modetest shows the plane properties",
             modetest_plane_properties)

    def proptest_connector_properties():
        out = vm.check("proptest -M pvdc")
        for prop in ("EDID", "suggested X", "suggested Y",
                     "hotplug_mode_update"):
            if out.count(f" {prop}:") != HEADS:
                raise AssertionError(f"{prop!r} not on every connector:\n"
                                     f"{out[-3000:]}")
    tap.case("proptest shows EDID, suggested position and "
             "hotplug_mode_update on every connector",
             proptest_connector_properties)

    def vbltest_runs():
        # vbltest stops as soon as its stdin is readable: keep it open.
        rc, out = vm.run("sleep 6 | timeout -s INT 4 vbltest -M pvdc", 30)
        rates = [float(x) for x in re.findall(r"freq:\s*([\d.]+)Hz", out)]
        if not rates or not all(40 < r < 80 for r in rates):
            raise AssertionError(f"vbltest rates {rates}:\n{out[-2000:]}")
    tap.case("vbltest sees vblank events at the refresh rate", vbltest_runs)


def main():
    tap = Tap()
    vm = GuestVM(devices=["-device", f"pvdc,id=pvdc0,heads={HEADS}"])
    try:
        vm.start()
    except GuestError as e:
        tap.fail("guest boots on pvdc", e)
        return tap.done()
    try:
        modeset_scene(tap, vm)
        program_cases(tap, vm, "pvdc-atomic", "pvdc-atomic")
        program_cases(tap, vm, "pvdc-crc", "pvdc-crc")

        def demo_uses_every_feature():
            out = vm.check("pvdc-demo 3", 60)
            dropped = [l for l in out.splitlines() if "dropped:" in l]
            heads = [l for l in out.splitlines() if " head " in l]
            if dropped or len(heads) < HEADS:
                raise AssertionError(out[-3000:])
        tap.case("pvdc-demo runs on every head without dropping a feature",
                 demo_uses_every_feature)
        real_clients(tap, vm)

        def no_kernel_warnings():
            log = vm.dmesg()
            bad = [l for l in log.splitlines()
                   if re.search(r"WARNING:|BUG:|Oops|lockdep|circular locking",
                                l)]
            if bad:
                raise AssertionError("\n".join(bad[:20]))
        tap.case("the kernel log has no WARN, BUG or oops", no_kernel_warnings)
    except GuestError as e:
        tap.fail("the guest stays responsive", e)
    finally:
        vm.stop()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
