#!/usr/bin/python3
"""The guest driver end to end, in one boot on a two-head pvdc, with two
vCPUs: the heads' threads, the stress run's and the interrupt handler run
beside each other, and a CRC is numbered while another CPU may be counting
the vblanks of its head.

In-guest programs report "ok NAME" / "not ok NAME: why" lines; each becomes
a case here.  Host-side checks read the heads back through QMP screendump
and the device's statistics through qom-get: TEST_ONLY commits write no
register, the device never rejects a commit the driver's check passed
(random requests from several threads), heads flip independently, libdrm's
modetest sets modes (legacy and atomic), a host-side size change reaches
userspace as a hotplug uevent, and the module unloads and loads again.
"""

import errno
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pvdc_harness import (KERNEL_LOG_CASE, BackoffCounter,  # noqa: E402
                          GuestError, modeset_bars, run_suite)

HEADS = 2
# One scaler for both heads and a link-up delay: commits that move the
# scaler between heads, and enables that take a while, meet the stress run.
SCALERS = 1
# pvdc-atomic's bandwidth cases: three 1920x1080 XRGB8888 planes a head,
# so that a primary and two such overlays fit and a third does not.
HEAD_KIB = 3 * 1920 * 1080 * 4 // 1024
DEVICE = (f"pvdc,id=pvdc0,heads={HEADS},scalers={SCALERS},"
          f"bandwidth-kib={HEADS * HEAD_KIB},x-link-up-delay-ms=30")
RESULT = re.compile(r"^(not ok|ok) ([^:#]+?)\s*(?:[:#].*)?$")


def program_cases(tap, vm, prefix, cmd, timeout=120):
    """Run an in-guest program and report each of its result lines."""
    rc, out = vm.run(cmd, timeout)
    seen = result_cases(tap, prefix, out)

    def exit_status():
        if rc != 0 or seen == 0:
            raise AssertionError(f"{cmd!r} exited {rc} after {seen} "
                                 f"result lines:\n{out[-3000:]}")
    tap.case(f"{prefix}: exits 0", exit_status)
    return out


def result_cases(tap, prefix, out):
    """Report each "ok"/"not ok" line of OUT; return how many there were."""
    seen = 0
    for line in out.splitlines():
        m = RESULT.match(line.strip())
        if not m:
            continue
        seen += 1
        if m.group(1) == "ok" and "# skip" in line.lower():
            why = line.split("#", 1)[1].strip()
            tap.skip(f"{prefix}: {m.group(2)}",
                     re.sub(r"(?i)^skip\s*", "", why))
            continue

        def verdict(ok=m.group(1) == "ok", line=line):
            if not ok:
                raise AssertionError(line)
        tap.case(f"{prefix}: {m.group(2)}", verdict)
    return seen


def colour_bars_on_every_head(vm):
    # pvdc-modeset's last cursor update may reach the device a vblank
    # after it says it holds the picture: wait for the screen to show it.
    for head in range(HEADS):
        vm.wait_screen(f"colour bars on head {head}", modeset_bars(head),
                       head, timeout=10)


def modeset_scene(tap, vm, when=""):
    suffix = f" {when}" if when else ""
    try:
        log = vm.start_background("pvdc-modeset 0", r"^# holding")
    except GuestError as e:
        tap.fail("pvdc-modeset lights every head" + suffix, e)
        return
    tap.case("screendump shows the colour bars on every head" + suffix,
             colour_bars_on_every_head, vm)
    out = vm.stop_background(log)

    def modeset_ok():
        if "not ok" in out:
            raise AssertionError(out)
    tap.case("pvdc-modeset lights every head" + suffix, modeset_ok)


def test_only_writes_no_register(tap, vm):
    """TEST_ONLY commits, accepted and refused, leave the device alone."""
    state = {}

    def burst():
        # The program lights every head with its own framebuffer (fbcon's
        # damage flushes then touch no plane) and holds a vblank reference
        # on each (the vblank-off timer cannot write INT_ENABLE); vblank
        # interrupts only read INT_ACK.
        log = vm.start_background("pvdc-stress test-only -n 1000 -s 7",
                                  r"^# ready")
        try:
            before = vm.qom_get("x-mmio-writes")
            vm.check(f"kill -USR1 $(cat {log}.pid)")
            out = vm.wait_for_output(log, r"^# done")
            after = vm.qom_get("x-mmio-writes")
        finally:
            state["out"] = vm.stop_background(log)
        print(f"# x-mmio-writes {before} -> {after} over the burst")
        if after != before:
            raise AssertionError(f"x-mmio-writes went from {before} to "
                                 f"{after} during TEST_ONLY commits:\n{out}")
        # Enough writes around it that the counter is known to count.
        if vm.qom_get("x-mmio-writes") <= after:
            raise AssertionError("x-mmio-writes did not move when the "
                                 "program exited")
    tap.case("TEST_ONLY commits write no device register", burst)
    result_cases(tap, "pvdc-stress test-only", state.get("out", ""))


FLIPS = re.compile(r"flipbench head=(\d+) .*\bflips=(\d+) ")
# Head 1 runs this slow in heads_flip_independently: if head 0 waited for
# head 1 anywhere, it could flip no faster.
SLOW_HZ = 1


def heads_flip_independently(tap, vm):
    """One thread per head, each waiting for its own flip events, head 1
    at 1 Hz and head 0 at its 60 Hz: head 0 flips many times per head 1
    flip.  Counts in one run, with a margin no load reaches: a head 0
    paced by head 1 makes at most one flip more than head 1."""
    def counts():
        out = vm.check(f"pvdc-flipbench -k 2 -t 4 -r {SLOW_HZ}", 120)
        flips = {int(h): int(n) for h, n in FLIPS.findall(out)}
        print(f"# flips in 4 s: head 0 {flips.get(0)}, head 1 at "
              f"{SLOW_HZ} Hz {flips.get(1)}")
        if len(flips) != 2 or "error=" in out or not flips[1]:
            raise AssertionError(out)
        if flips[0] < 4 * (flips[1] + 1):
            raise AssertionError(f"head 0 made {flips[0]} flips while the "
                                 f"{SLOW_HZ} Hz head 1 made {flips[1]}:\n"
                                 f"{out}")
    tap.case("a head flips at its own rate while another runs at 1 Hz",
             counts)


def random_stress(tap, vm):
    """Threads sending random atomic requests, then a known scene.  On the
    debug kernel, wait/wound locks also fail with injected -EDEADLKs:
    every backoff must end in a result the program accepts."""
    start = {p: vm.qom_get(p) for p in ("x-commits-applied",
                                        "x-commits-rejected")}
    backoffs = BackoffCounter(vm) if vm.kernel.name == "debug" else None
    if backoffs:
        backoffs.start()
    out = program_cases(tap, vm, "pvdc-stress random",
                        "pvdc-stress random -j 4 -n 12000 -s 1", 300)
    for line in out.splitlines():
        if re.match(r"# (random:|\d+ threads)", line):
            print(line)
    if backoffs:
        tap.case("every -EDEADLK backoff of the stress run ended in a "
                 "commit or a uAPI error", backoffs_resolved,
                 *backoffs.stop(), out)

    def never_rejected():
        applied = vm.qom_get("x-commits-applied") - start["x-commits-applied"]
        rejected = vm.qom_get("x-commits-rejected") - start["x-commits-rejected"]
        print(f"# device: {applied} head commits applied, {rejected} "
              "rejected during the stress run")
        # The floor only proves the run reached the device: latches are
        # bounded by the vblanks of a run of a few seconds, and nonblocking
        # commits amend each other when the host is slow (186 to 530 seen
        # on a 2-core host, loaded or not).
        if rejected or applied < 100:
            raise AssertionError(f"{applied} applied, {rejected} rejected")
    tap.case("no commit that passed check is rejected by the device",
             never_rejected)
    modeset_scene(tap, vm, "after the stress run")


# The debug kernel fails a wait/wound lock with -EDEADLK once an acquire
# context has taken its stamp modulo 16 plus two locks, and again after 3.5
# times as many: thousands of random requests back off many times.
MIN_BACKOFFS = 200


def backoffs_resolved(by_task, returns, out):
    """The stress program's atomic ioctls backed off at least MIN_BACKOFFS
    times, and each of its requests ended as the program saw it: every
    refusal it counted is an ioctl that returned that error, and the
    ioctls that returned 0 are its accepted requests, less the empty ones
    libdrm accepts without a call.  None returned EDEADLK."""
    m = re.search(r"^# random: (\d+) requests, (\d+) accepted.*$", out, re.M)
    if not m:
        raise AssertionError(f"no request count in:\n{out[-2000:]}")
    # The final all-off commit is one more accepted ioctl.
    requests, accepted = int(m.group(1)) + 1, int(m.group(2)) + 1
    names = {os.strerror(e): e for e in range(1, 134)}
    refused = {-names.get(name, 0): int(n) for n, name in
               re.findall(r", (\d+) ([^,(]+)", m.group(0).split(")", 1)[1])}
    backoffs = by_task.get("pvdc-stress", 0)
    print(f"# -EDEADLK backoffs by task: {by_task}")
    print(f"# atomic ioctl results: "
          + ", ".join(f"{n} x {os.strerror(-r) if r else 0}"
                      for r, n in sorted(returns.items())))
    problems = []
    if backoffs < MIN_BACKOFFS:
        problems.append(f"{backoffs} backoffs in pvdc-stress, expected "
                        f"at least {MIN_BACKOFFS}")
    if -errno.EDEADLK in returns:
        problems.append(f"{returns[-errno.EDEADLK]} ioctls returned EDEADLK")
    errors = {r: n for r, n in returns.items() if r}
    empty = requests - sum(returns.values())
    if errors != refused or returns.get(0, 0) + empty != accepted or \
            empty < 0:
        problems.append(f"the ioctls returned {returns}; the program sent "
                        f"{requests} requests, {accepted} accepted, "
                        f"refused {refused}")
    if problems:
        raise AssertionError("; ".join(problems))


def connector_ids(vm):
    out = vm.check("modetest -M pvdc -c")
    return [int(i) for i in re.findall(r"^(\d+)\s+\d+\s+connected", out,
                                        re.M)]


def modetest_on_screen(vm, log, crtc, overlay, width, height):
    """Wait until modetest's mode and overlay are committed (the DRM
    core's state in debugfs) and on head 0 (screendump).  Never opens the
    device: a second client could take DRM master from modetest."""
    def committed():
        if vm.run(f"kill -0 $(cat {log}.pid)")[0]:
            raise GuestError("modetest exited")
        state = vm.kms_state()
        c = state.get(crtc, {})
        p = state.get(overlay, {})
        if c.get("active") != "1" or c.get("size") != (width, height):
            raise AssertionError(f"CRTC {crtc} active={c.get('active')} "
                                 f"mode {c.get('size')}")
        if p.get("crtc") != c.get("name"):
            raise AssertionError(f"overlay plane {overlay} is on "
                                 f"{p.get('crtc')}")
        return True
    vm.wait_until(f"modetest's {width}x{height} and overlay on CRTC {crtc}",
                  committed, 30)

    def picture(pic):
        if (pic.width, pic.height) != (width, height):
            raise AssertionError(f"head 0 is {pic.width}x{pic.height}")
        colours = {pic.xrgb(x, y) for x in range(0, width, 16)
                   for y in range(0, height, 16)}
        # modetest's SMPTE-like pattern: many colours, not bars of our own.
        if len(colours) < 8:
            raise AssertionError(f"head 0 shows {len(colours)} colours")
    vm.wait_screen(f"modetest's picture at {width}x{height}", picture, 0,
                   timeout=10)


def modetest_sets_modes(tap, vm):
    """libdrm's modetest through the legacy and the atomic uAPI."""
    def mode_and_overlay(flags, width, height, overlay_geometry):
        conn = connector_ids(vm)[0]
        out = vm.check("modetest -M pvdc -p")
        crtc = int(re.search(r"^CRTCs:\nid.*\n(\d+)", out, re.M).group(1))
        overlay = overlay_plane(out)
        if overlay is None:
            raise AssertionError(f"no overlay plane found:\n{out[-3000:]}")
        # modetest holds its mode until a key arrives on stdin; its stdout
        # is a file, so fully buffered until it exits.
        log = vm.start_background(
            f"modetest -M pvdc {flags} -s {conn}@{crtc}:{width}x{height} "
            f"-P {overlay}@{crtc}:{overlay_geometry}", hold_stdin=True)
        try:
            modetest_on_screen(vm, log, crtc, overlay, width, height)
        except GuestError as e:
            # The first error is the one to report, whatever stopping says.
            try:
                rest = vm.stop_background(log)
            except GuestError as stop_error:
                rest = f"then: {stop_error}"
            raise AssertionError(f"{e}\n{rest}")
        out = vm.stop_background(log)
        # Our gamma-less CRTC makes modetest say "failed to set gamma".
        if re.search(r"can't|failed (?!to set gamma)", out):
            raise AssertionError(out[-3000:])

    # Without -a: SETCRTC for the mode, SETPLANE for the overlay.
    tap.case("modetest sets a mode and an overlay through the legacy uAPI",
             mode_and_overlay, "", 640, 480, "160x120+40+40")
    tap.case("modetest sets a mode and an overlay through the atomic uAPI",
             mode_and_overlay, "-a", 800, 600, "200x150+100+100")


def overlay_plane(planes):
    """The first overlay plane head 0 can use, from modetest -p."""
    blocks = re.split(r"^(?=\d+\t\d+\t\d+\t)", planes, flags=re.M)
    for block in blocks:
        m = re.match(r"(\d+)\t\d+\t\d+\t.*\t0x([0-9a-f]+)\n", block)
        t = re.search(r"\btype:\n.*\n.*\n\s+value: (\d+)", block)
        if m and t and int(t.group(1)) == 0 and int(m.group(2), 16) & 1:
            return int(m.group(1))
    return None


def hotplug_reaches_userspace(tap, vm):
    """A host-side change of a head's preferred size is a hotplug uevent
    with the new mode."""
    def changed(width, height):
        log = vm.start_background("pvdc-hotplug 30", r"^# ready")
        vm.qom_set("head1-xres", width)
        vm.qom_set("head1-yres", height)
        out = vm.wait_for_output(log, r"^connector [0-9]+ 1: ")
        vm.stop_background(log)
        if "ok hotplug-uevent" not in out:
            raise AssertionError(out)
        m = re.search(r"^connector \d+ 1: (\d+)x(\d+)", out, re.M)
        if (int(m.group(1)), int(m.group(2))) != (width, height):
            raise AssertionError(f"head 1 prefers {m.group(1)}x"
                                 f"{m.group(2)} after the change:\n{out}")

    # The uevent may be sent after the first qom-set: the second size
    # must be in the mode list by the time the program re-probes, so a
    # single-axis change is what is asserted.
    tap.case("qom-set head1-xres is a hotplug uevent with the new width",
             changed, 800, 768)
    tap.case("qom-set back restores the preferred mode",
             changed, 1024, 768)


def unload_and_reload(tap, vm):
    """rmmod with a scene displayed: refused while a client holds the
    device, done once it exits; insmod brings the heads back."""
    def cycle():
        log = vm.start_background("pvdc-modeset 0", r"^# holding")
        rc, out = vm.run("rmmod pvdc")
        if rc == 0:
            raise AssertionError("rmmod pvdc succeeded with a client")
        vm.stop_background(log)
        vm.check("rmmod pvdc")
        if "pvdc" in vm.check("cat /proc/modules"):
            raise AssertionError("pvdc still loaded")
        vm.check("insmod /lib/modules/pvdc.ko")
        if not vm.poll("[ -e /dev/dri/card0 ]", 10):
            raise AssertionError("no /dev/dri/card0 after insmod")
    tap.case("pvdc unloads once its client exits and loads again", cycle)
    modeset_scene(tap, vm, "after the reload")


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
        # vbltest prints a rate every 60 events and stops at the first key
        # on stdin.  How close the rate is to the refresh is a matter of
        # the host's load (bench/run.py measures pacing); that events come
        # and never faster than the refresh is not.
        log = vm.start_background("vbltest -M pvdc", hold_stdin=True)
        reported = vm.poll(f"[ $(grep -c 'freq:' {log}) -ge 3 ]", 60)
        out = vm.stop_background(log)
        rates = [float(x) for x in re.findall(r"freq:\s*([\d.]+)Hz", out)]
        if not reported or not rates or not all(0 < r < 80 for r in rates):
            raise AssertionError(f"vbltest rates {rates}:\n{out[-2000:]}")
    tap.case("vbltest receives vblank events, never faster than the "
             "refresh rate", vbltest_runs)


def suite(tap, vm):
    modeset_scene(tap, vm)
    program_cases(tap, vm, "pvdc-atomic",
                  f"pvdc-atomic -s {SCALERS} -b {HEAD_KIB}")
    program_cases(tap, vm, "pvdc-crc", "pvdc-crc")
    # A modeset completes at the new mode's first vblank, a frame after the
    # commit even when the link comes up sooner (30 ms here).
    program_cases(tap, vm, "pvdc-vblank", "pvdc-vblank modeset-event")

    def demo_uses_every_feature():
        out = vm.check("pvdc-demo 3", 60)
        # Both heads' videos scale: with one scaler, one goes 1:1.
        dropped = [l for l in out.splitlines() if "dropped:" in l and
                   not (SCALERS < 2 and "scaling" in l)]
        heads = [l for l in out.splitlines() if " head " in l]
        if dropped or len(heads) < HEADS:
            raise AssertionError(out[-3000:])
    tap.case("pvdc-demo runs on every head without dropping a feature",
             demo_uses_every_feature)
    real_clients(tap, vm)
    test_only_writes_no_register(tap, vm)
    heads_flip_independently(tap, vm)
    random_stress(tap, vm)
    modetest_sets_modes(tap, vm)
    hotplug_reaches_userspace(tap, vm)
    unload_and_reload(tap, vm)
    tap.case(KERNEL_LOG_CASE, vm.check_kernel_log)


if __name__ == "__main__":
    sys.exit(run_suite(suite, HEADS, DEVICE, smp=2))
